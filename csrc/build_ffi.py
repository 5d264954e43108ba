"""Build mindtorch_v2._C with cffi's out-of-line API mode.

The cdef is csrc/include/mt.h read verbatim (it is preprocessor-free for that
reason); the sources are every .c file under csrc/. Set MT_SANITIZE=1 to build
with AddressSanitizer and UndefinedBehaviorSanitizer.
"""
import glob
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rel(path):
    return os.path.relpath(path, ROOT)


def sources():
    files = sorted(glob.glob(os.path.join(HERE, "**", "*.c"), recursive=True))
    return [rel(f) for f in files if "/tests/" not in f]


def headers():  # a header edit rebuilds the extension (distutils compares only these dates)
    return [rel(f) for f in sorted(glob.glob(os.path.join(HERE, "**", "*.h"), recursive=True))]


def compile_args():
    args = ["-std=gnu11", "-O3", "-pthread", "-fno-math-errno", "-fno-trapping-math", "-Wall", "-Wno-unused-function",
            "-fvisibility=hidden"]
    if os.environ.get("MT_SANITIZE"):
        args += ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined"]
    return args


def link_args():
    args = ["-pthread"]
    if os.environ.get("MT_SANITIZE"):
        args += ["-fsanitize=address,undefined"]
    return args


with open(os.path.join(HERE, "include", "mt.h")) as f:
    CDEF = f.read()

# The cffi-only declarations: Python callbacks handed to the core as function
# pointers - one drops the reference C held on external memory (numpy arrays and
# buffers), one is the autograd engine's way into Python (hooks, custom Functions).
PY_CALLBACKS = ('extern "Python" void mt_py_release_handle(void *);\n'
                'extern "Python" mt_status mt_py_autograd_callback(void *, int, mt_node *, int, mt_tensor *const *, '
                'int, mt_tensor **);\n')

ffibuilder = FFI()
ffibuilder.cdef(CDEF + PY_CALLBACKS)
ffibuilder.set_source(
    "mindtorch_v2._C",
    '#include <stdint.h>\n#include "mt.h"\n',
    sources=sources(),
    depends=headers(),
    include_dirs=[rel(os.path.join(HERE, "include"))],
    libraries=["openblas", "m"],
    extra_compile_args=compile_args(),
    extra_link_args=link_args(),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
