"""Build the C tests against the C core alone and run them: test_abi.c plain, under
AddressSanitizer + UndefinedBehaviorSanitizer and under valgrind memcheck; test_threads.c (several
threads at once) plain and under ThreadSanitizer; the fuzzer's regression inputs sanitized."""
import atexit
import functools
import glob
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSRC = os.path.join(ROOT, "csrc")


SANITIZE = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
REGRESSIONS = sorted(glob.glob(os.path.join(ROOT, "tests", "c", "fuzz", "regressions", "*")))


def _cflags(cc):  # each file once, its MT_SIMD loops baseline (build_ffi.py compiles them per ISA level)
    return ["-std=gnu11", "-pthread", "-include", "stdint.h",
            "-I", os.path.join(CSRC, "include")]


@functools.lru_cache(maxsize=None)
def _core_objects(cc, extra):
    """The core compiled once per (compiler, flags) for the whole run, a file per job on every core
    (the builds below share them: a full compile per test took most of this file's time)."""
    out = tempfile.mkdtemp(prefix="mt-core-")
    atexit.register(shutil.rmtree, out, True)
    sources = sorted(glob.glob(os.path.join(CSRC, "**", "*.c"), recursive=True))

    def compile_one(src):
        obj = os.path.join(out, os.path.relpath(src, CSRC).replace(os.sep, "_") + ".o")
        subprocess.run([cc, *_cflags(cc), "-c", src, "-o", obj, *extra], check=True, capture_output=True, text=True)
        return obj
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return tuple(pool.map(compile_one, sources))


def _build_and_run(tmp_path, mains, extra, args=(), cc="gcc", runner=(), env=None):
    if shutil.which(cc) is None or (runner and shutil.which(runner[0]) is None):
        pytest.skip(f"{runner[0] if runner else cc} not available")
    exe = str(tmp_path / "prog")
    cmd = [cc, *_cflags(cc), *[os.path.join(ROOT, "tests", "c", m) for m in mains], *_core_objects(cc, tuple(extra)),
           "-o", exe, "-lopenblas", "-lm", *extra]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # tools/sanitize.sh preloads gcc's ASan
    env = dict(base, ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024:"
               "max_malloc_fill_size=67108864",  # as tools/fuzz.sh: mt_empty's memory filled alike
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1", **(env or {}))
    res = subprocess.run([*runner, exe, *args], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_c_abi(tmp_path):
    assert "C ABI tests passed" in _build_and_run(tmp_path, ["test_abi.c"], ["-O2"])


def test_c_abi_sanitized(tmp_path):
    assert "C ABI tests passed" in _build_and_run(tmp_path, ["test_abi.c"], SANITIZE)


def test_fuzz_regressions_sanitized(tmp_path):
    """Every input the libFuzzer harness (tools/fuzz.sh) crashed on, replayed under ASan/UBSan (inputs
    found before the harness was generated from mt.h decode as other programs now: corpus seeds)."""
    cc = "clang" if shutil.which("clang") else "gcc"
    out = _build_and_run(tmp_path, ["fuzz/fuzz_ops.c", "fuzz/replay.c"], SANITIZE, REGRESSIONS, cc=cc)
    assert f"replayed {len(REGRESSIONS)} inputs" in out


def test_c_abi_valgrind(tmp_path):
    """memcheck: no invalid or uninitialised read, no definite leak (the thread pool's stacks stay)"""
    out = _build_and_run(tmp_path, ["test_abi.c"], ["-O1", "-g"], env={"OPENBLAS_NUM_THREADS": "1"},
                         runner=("valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
                                 "--errors-for-leak-kinds=definite"))
    assert "C ABI tests passed" in out


def test_threads(tmp_path):
    assert "threaded C tests passed" in _build_and_run(tmp_path, ["test_threads.c"], ["-O2"])


def test_threads_tsan(tmp_path):
    """ThreadSanitizer (clang's: gcc 12's crashes at start on this kernel's mmap layout); OpenBLAS's own
    threads are not instrumented, so it runs single-threaded"""
    out = _build_and_run(tmp_path, ["test_threads.c"], ["-O1", "-g", "-fsanitize=thread"], cc="clang",
                         env={"TSAN_OPTIONS": "halt_on_error=1", "OPENBLAS_NUM_THREADS": "1"})
    assert "threaded C tests passed" in out
