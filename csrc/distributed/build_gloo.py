"""Build mindtorch_v2._gloo, the optional Gloo engine (cffi out-of-line API mode, as _C).

The cdef is gloo_shim.h read verbatim; the one source is gloo_shim.cc (C++17) linked with
Debian's libgloo. setup.py adds this module only where Gloo's headers are found (found()), so a
machine without libgloo-dev still builds _C and torch.distributed.is_gloo_available() is False.
"""
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INCLUDE_DIRS = ["/usr/include", "/usr/local/include"] + [d for d in os.environ.get("CPATH", "").split(":") if d]


def found():
    return any(os.path.exists(os.path.join(d, "gloo", "rendezvous", "context.h")) for d in INCLUDE_DIRS)


with open(os.path.join(HERE, "gloo_shim.h")) as f:
    CDEF = f.read()

# The rendezvous store's three callbacks (c10d's Store in Python, handed to Gloo as mtg_store)
PY_CALLBACKS = ('extern "Python" int mtg_py_store_set(void *, const char *, const char *, size_t);\n'
                'extern "Python" int mtg_py_store_get(void *, const char *, mtg_bytes *);\n'
                'extern "Python" int mtg_py_store_wait(void *, const char *const *, size_t, int64_t);\n')

ffibuilder = FFI()
ffibuilder.cdef(CDEF + PY_CALLBACKS)
ffibuilder.set_source(
    "mindtorch_v2._gloo",
    '#include <stddef.h>\n#include <stdint.h>\nextern "C" {\n#include "gloo_shim.h"\n}\n',
    source_extension=".cpp",
    sources=[os.path.relpath(os.path.join(HERE, "gloo_shim.cc"), ROOT)],
    depends=[os.path.relpath(os.path.join(HERE, name), ROOT) for name in ("gloo_shim.h", "shim_common.h")],
    include_dirs=[os.path.relpath(HERE, ROOT)],
    libraries=["gloo", "stdc++"],
    extra_compile_args=["-std=c++17", "-O2", "-pthread", "-fvisibility=hidden"],
    extra_link_args=["-pthread"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
