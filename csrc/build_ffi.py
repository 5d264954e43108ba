"""Build mindtorch_v2._C with cffi's out-of-line API mode.

The cdef is csrc/include/mt.h read verbatim (it is preprocessor-free for that
reason); the sources are every .c file under csrc/. Set MT_SANITIZE=1 to build
with AddressSanitizer and UndefinedBehaviorSanitizer.
"""
import glob
import os
import re

from concurrent.futures import ThreadPoolExecutor, as_completed

from cffi import FFI, recompiler
from distutils.ccompiler import CCompiler

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
    # vect-epilogues-nomask=0: a loop's last few elements run scalar instead of in a second, narrower
    # vectorised copy of every loop, a quarter of the stamped kernels' compile time (docs/PERFORMANCE.md,
    # "Build time, session 20"); results are the same, and the benchmark rows did not move
    args = ["-std=gnu11", "-O3", "-pthread", "-fno-math-errno", "-fno-trapping-math", "-Wall", "-Wno-unused-function",
            "-fvisibility=hidden", "--param", "vect-epilogues-nomask=0"]
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

# cffi releases the GIL around every call: ~0.1 us a call, as much as a view costs in C. Calls that
# are constant-time (accessors, views, retain/release, grad-mode switches) keep it. None of them
# waits on a lock that a thread without the GIL could hold while it waits for the GIL (the autograd
# engine's lock is taken only by mt_backward, which releases it); a Python callback they run
# (a handle's release) finds the GIL held by its own thread, which PyGILState_Ensure allows.
KEEP_GIL = re.compile(
    r"mt_tensor_\w+|mt_node_\w+|mt_(last_error|get_num_threads|[gs]et_default_dtype|promote_types|can_cast|"
    r"dtype_itemsize|b?f16_to_f32|op_name|result_type|scalar_tensor|item|as_strided|view|view_dtype|transpose|"
    r"permute|expand|squeeze|unsqueeze|select|slice|unfold|diagonal|detach_?|split_with_sizes|unbind|"
    r"set_grad_enabled|is_grad_enabled|set_inference_mode|is_inference_mode_enabled|set_anomaly_mode|anomaly_mode|"
    r"set_saved_tensors_hooks|generator_is_default|profiler_\w+)")
GIL_LINES = {"Py_BEGIN_ALLOW_THREADS", "_cffi_restore_errno();", "_cffi_save_errno();", "Py_END_ALLOW_THREADS"}
_function_wrapper = recompiler.Recompiler._generate_cpy_function_decl


def _wrapper_keeping_gil(self, tp, name):
    """cffi's CPython wrapper for one function, without the GIL release for a KEEP_GIL name."""
    if not KEEP_GIL.fullmatch(name):
        return _function_wrapper(self, tp, name)
    prnt, dropped = self._prnt, []
    self._prnt = lambda what="": dropped.append(what) if what.strip() in GIL_LINES else prnt(what)
    try:
        _function_wrapper(self, tp, name)
    finally:
        del self._prnt
    if dropped and len(dropped) != len(GIL_LINES):  # none dropped: a newer cffi's wrapper, releasing the GIL
        raise RuntimeError(f"cffi's wrapper for {name} changed: dropped only {dropped} of its GIL lines")


recompiler.Recompiler._generate_cpy_function_decl = _wrapper_keeping_gil


# The kernels stamped per dtype and ISA clone (loops.h) take most of a build, and not in proportion to
# their size: these start first, costliest first, so that none of them is the last to finish
# (compile seconds measured in docs/PERFORMANCE.md, "Build time, session 20").
COSTLIEST_FIRST = ["kernels/cpu/binary.c", "kernels/cpu/activation.c", "kernels/cpu/copy.c", "kernels/cpu/attention.c",
                   "kernels/cpu/unary.c", "kernels/cpu/ternary.c"]


def compile_cost(src):
    """A sort key: the listed costly files in their order, then the rest by size, biggest first."""
    name = os.path.relpath(os.path.abspath(src), HERE)
    return (COSTLIEST_FIRST.index(name), 0) if name in COSTLIEST_FIRST else (len(COSTLIEST_FIRST), -os.path.getsize(src))


def _compile_in_parallel(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                         extra_postargs=None, depends=None):
    """distutils' CCompiler.compile, one compiler process per core (it compiles one file at a time)."""
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)
    todo = sorted((obj for obj in objects if obj in build), key=lambda obj: compile_cost(build[obj][0]))
    done = [0]

    def one(obj):
        src, ext = build[obj]
        self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)
        done[0] += 1
        print(f"[{done[0]}/{len(todo)}] {rel(src) if os.path.isabs(src) else src}", flush=True)

    with ThreadPoolExecutor(max_workers=int(os.environ.get("MT_BUILD_JOBS", 0)) or os.cpu_count() or 1) as pool:
        for job in as_completed([pool.submit(one, obj) for obj in todo]):
            if job.exception():  # the first compile error ends the build: nothing queued starts
                pool.shutdown(wait=True, cancel_futures=True)
                raise job.exception()
    return objects


CCompiler.compile = _compile_in_parallel

missing = [f for f in COSTLIEST_FIRST if not os.path.exists(os.path.join(HERE, f))]
if missing:  # a renamed kernel file would silently lose its place in the order
    raise RuntimeError(f"build_ffi.COSTLIEST_FIRST names files that do not exist: {missing}")

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
