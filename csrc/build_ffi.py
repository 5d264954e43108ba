"""Build mindtorch_v2._C with cffi's out-of-line API mode.

The cdef is csrc/include/mt.h read verbatim (it is preprocessor-free for that
reason); the sources are every .c file under csrc/. Set MT_SANITIZE=1 to build
with AddressSanitizer and UndefinedBehaviorSanitizer.
"""
import glob
import os
import platform
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile

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
    # -g1: line tables only (backtraces, perf annotate); Python's -g costs a fifth of every compile in
    # variable tracking (docs/PERFORMANCE.md, "Build time, session 21")
    args = ["-std=gnu11", "-O3", "-pthread", "-fno-math-errno", "-fno-trapping-math", "-Wall", "-Wno-unused-function",
            "-fvisibility=hidden", "--param", "vect-epilogues-nomask=0", "-g1"]
    if os.environ.get("MT_SANITIZE"):
        args += ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined"]
    if LIBMVEC:
        args += ["-DMT_LIBMVEC"]
    return args


# glibc's libmvec (vecmath.h): the vector transcendental functions that the AVX2/AVX-512 copies of the
# elementwise loops call. glibc 2.35 added most of them (sinh, atan2, erf, log1p, ...): a loop over sinhf,
# declared as vecmath.h declares it, must compile to a call of _ZGVdN8v_sinhf and link against -lmvec.
# Otherwise (older glibc, musl, another compiler or CPU) the kernels call scalar libm. MT_NO_LIBMVEC=1
# turns it off (to compare).
LIBMVEC_PROBE = r"""
float mt_probe_sinhf(float) __asm__("sinhf") __attribute__((simd("notinbranch"), const, nothrow));
__attribute__((target("arch=x86-64-v3"))) void mt_probe(float *o, const float *a, int n) {
    for (int i = 0; i < n; i++) o[i] = mt_probe_sinhf(a[i]);
}
int main(void) { float a[64] = {0}, o[64]; mt_probe(o, a, 64); return (int)o[0]; }
"""


def libmvec_available():
    if os.environ.get("MT_NO_LIBMVEC") or not SPLIT_ISA:
        return False
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write(LIBMVEC_PROBE)
        try:
            subprocess.run(cc + ["-O3", "-fno-math-errno", "-o", exe, src, "-lmvec", "-lm"], check=True,
                           capture_output=True)
            syms = subprocess.run(["nm", exe], check=True, capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return False
    return "_ZGVdN8v_sinhf" in syms


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


# The files whose loops are marked MT_SIMD (loops.h's kernel macros carry it) are compiled once per x86-64
# ISA level, each copy's functions renamed with the level's suffix, and one generated file defines
# every original name as an ifunc that picks the copy for the CPU at load: the copies compile in
# parallel, and the baseline one (for CPUs without AVX2) at -O1, 40% under -O2's time: -O2's cheap vectoriser
# vectorised 41 of binary.c's 671 loops, so the baseline was mostly scalar already, and -O1 took the fresh build
# under 2 minutes (ARCHITECTURE.md, "The build"; docs/PERFORMANCE.md, "Build time, session 21").
USES_SIMD = re.compile(r"\b(MT_SIMD|[UBT]_(SAME|BOOL|TOREAL|TOCOMPLEX|MASK)|(UNARY|BINARY|TERNARY)_DEF)\b")
SPLIT_ISA = platform.machine() == "x86_64" and sys.platform.startswith("linux")  # ifuncs: ELF and x86-64 only
SANITIZE = bool(os.environ.get("MT_SANITIZE"))
LIBMVEC = libmvec_available()
ISA_LEVELS = {  # suffix: extra compiler options (DISPATCHER's mt_isa_pick names the same three)
    "v4": ['-DMT_SIMD_TARGET="arch=x86-64-v4"'],
    "v3": ['-DMT_SIMD_TARGET="arch=x86-64-v3"'],
    "base": [] if SANITIZE else ["-O1"],
}


def per_isa(src):
    """Whether src defines MT_SIMD loops, so that it is compiled once per ISA level."""
    with open(src) as f:
        return SPLIT_ISA and USES_SIMD.search(f.read()) is not None


# The costliest files start first, so that none of them is the last to finish: their v4 and v3 copies,
# then their baseline copies, then the rest by size (compile seconds in docs/PERFORMANCE.md).
COSTLIEST_FIRST = ["kernels/cpu/binary.c", "kernels/cpu/activation.c", "kernels/cpu/attention.c", "kernels/cpu/copy.c",
                   "kernels/cpu/unary.c", "kernels/cpu/ternary.c"]


def compile_cost(src, level=None):
    """A sort key: the listed costly files' vector copies in their order, their baseline copies, the rest by size."""
    name = os.path.relpath(os.path.abspath(src), HERE)
    if name in COSTLIEST_FIRST:
        return (level == "base", COSTLIEST_FIRST.index(name), level or "")
    return (2, -os.path.getsize(src), level or "")


def isa_object(obj, level):
    return obj[:-2] + "." + level + ".o"


def suffix_globals(obj, level):
    """Rename the functions obj defines (name -> name__<level>); return their original names."""
    out = subprocess.run(["nm", "--defined-only", "--extern-only", obj], check=True, capture_output=True, text=True)
    names = []
    for line in out.stdout.splitlines():
        _, kind, name = line.split()
        if kind != "T":  # a global variable would exist once per copy
            raise RuntimeError(f"{obj}: {name} is not a function ({kind}); a file compiled per ISA level "
                               "may define only functions (make it static or move it)")
        names.append(name)
    with open(obj + ".syms", "w") as f:
        f.writelines(f"{n} {n}__{level}\n" for n in names)
    subprocess.run(["objcopy", "--redefine-syms=" + obj + ".syms", obj], check=True)
    return sorted(names)


DISPATCHER = """/* generated by csrc/build_ffi.py: each per-ISA function, an ifunc picking its copy at load */
#pragma GCC visibility push(hidden) /* direct addresses: resolvers run before other relocations */
typedef void mt_isa_fn(void);
static mt_isa_fn *mt_isa_pick(mt_isa_fn *v4, mt_isa_fn *v3, mt_isa_fn *base) {
    __builtin_cpu_init(); /* resolvers run before constructors */
    return __builtin_cpu_supports("x86-64-v4") ? v4 : __builtin_cpu_supports("x86-64-v3") ? v3 : base;
}
#define DISPATCH(f)                                                                              \\
    mt_isa_fn f##__v4, f##__v3, f##__base;                                                       \\
    static mt_isa_fn *f##__resolve(void) { return mt_isa_pick(f##__v4, f##__v3, f##__base); }   \\
    mt_isa_fn f __attribute__((ifunc(#f "__resolve")));
"""


def _compile_in_parallel(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                         extra_postargs=None, depends=None):
    """distutils' CCompiler.compile, one compiler process per core (it compiles one file at a time), with
    the files with MT_SIMD loops compiled once per level and dispatched."""
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)
    split = {obj for obj, (src, _) in build.items() if per_isa(src)}
    units = [(obj, level) for obj in build for level in (ISA_LEVELS if obj in split else [None])]
    units.sort(key=lambda u: compile_cost(build[u[0]][0], u[1]))
    done, names = [0], {}

    def one(obj, level):
        src, ext = build[obj]
        self._compile(isa_object(obj, level) if level else obj, src, ext, cc_args,
                      extra_postargs + (ISA_LEVELS[level] if level else []), pp_opts)
        if level:
            names[obj, level] = suffix_globals(isa_object(obj, level), level)
        done[0] += 1
        where = rel(src) if os.path.isabs(src) else src
        print(f"[{done[0]}/{len(units)}] {where}{' (' + level + ')' if level else ''}", flush=True)

    with ThreadPoolExecutor(max_workers=int(os.environ.get("MT_BUILD_JOBS", 0)) or os.cpu_count() or 1) as pool:
        for job in as_completed([pool.submit(one, *unit) for unit in units]):
            if job.exception():  # the first compile error ends the build: nothing queued starts
                pool.shutdown(wait=True, cancel_futures=True)
                raise job.exception()
    if not split:
        return objects
    for obj in split:
        if len({tuple(names[obj, level]) for level in ISA_LEVELS}) != 1:
            raise RuntimeError(f"{obj}: the ISA levels' copies define different functions")
    dispatch = os.path.join(os.path.dirname(min(split)), "isa_dispatch.c")
    with open(dispatch, "w") as f:
        f.write(DISPATCHER + "".join(f"DISPATCH({n})\n" for n in sorted(n for o in split for n in names[o, "base"])))
    # the resolvers run once: -O1 compiles them in 0.8 s, -O3 in 2.5
    self._compile(dispatch[:-2] + ".o", dispatch, ".c", cc_args, extra_postargs + ["-O1"], pp_opts)
    return [o for obj in objects for o in ([isa_object(obj, lv) for lv in ISA_LEVELS] if obj in split else [obj])] + [
        dispatch[:-2] + ".o"]


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
    libraries=["openblas"] + (["mvec"] if LIBMVEC else []) + ["m"],
    extra_compile_args=compile_args(),
    extra_link_args=link_args(),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
