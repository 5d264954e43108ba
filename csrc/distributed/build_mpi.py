"""Build mindtorch_v2._mpi, the optional MPI engine (cffi out-of-line API mode, as _gloo).

The cdef is mpi_shim.h read verbatim; the one source is mpi_shim.cc (C++17) linked with the MPI
that `mpicc --showme` describes (Debian's libopenmpi-dev). setup.py adds this module only where
that MPI is found (found()), so a machine without it still builds and
torch.distributed.is_mpi_available() is False.
"""
import os
import shlex
import shutil
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _showme(what):
    """mpicc's flags (`--showme:compile` / `--showme:link`), or None without an MPI compiler wrapper."""
    mpicc = os.environ.get("MPICC") or shutil.which("mpicc")
    if not mpicc:
        return None
    try:
        return shlex.split(subprocess.run([mpicc, f"--showme:{what}"], capture_output=True, text=True,
                                          check=True).stdout)
    except (OSError, subprocess.CalledProcessError):
        return None


def _flags():
    compile_, link = _showme("compile"), _showme("link")
    if compile_ is None or link is None:
        return None
    incs = [f[2:] for f in compile_ if f.startswith("-I")]
    if not any(os.path.exists(os.path.join(d, "mpi.h")) for d in incs + ["/usr/include"]):
        return None
    return {"include_dirs": incs, "library_dirs": [f[2:] for f in link if f.startswith("-L")],
            "libraries": [f[2:] for f in link if f.startswith("-l")],
            "extra_link_args": [f for f in link if f.startswith("-Wl") or f == "-pthread"]}


def found():
    return _flags() is not None


with open(os.path.join(HERE, "mpi_shim.h")) as f:
    CDEF = f.read()

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
_mpi = _flags() or {"include_dirs": [], "library_dirs": [], "libraries": ["mpi"], "extra_link_args": []}
ffibuilder.set_source(
    "mindtorch_v2._mpi",
    '#include <stddef.h>\n#include <stdint.h>\nextern "C" {\n#include "mpi_shim.h"\n}\n',
    source_extension=".cpp",
    sources=[os.path.relpath(os.path.join(HERE, "mpi_shim.cc"), ROOT)],
    depends=[os.path.relpath(os.path.join(HERE, name), ROOT) for name in ("mpi_shim.h", "shim_common.h")],
    include_dirs=[os.path.relpath(HERE, ROOT)] + _mpi["include_dirs"],
    library_dirs=_mpi["library_dirs"],
    runtime_library_dirs=_mpi["library_dirs"],
    libraries=_mpi["libraries"] + ["stdc++"],
    extra_compile_args=["-std=c++17", "-O2", "-pthread", "-fvisibility=hidden"],
    extra_link_args=["-pthread"] + _mpi["extra_link_args"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
