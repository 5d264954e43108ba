"""Build tests/c/test_abi.c against the C core alone and run it, plain and
under AddressSanitizer + UndefinedBehaviorSanitizer."""
import glob
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSRC = os.path.join(ROOT, "csrc")


SANITIZE = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
REGRESSIONS = sorted(glob.glob(os.path.join(ROOT, "tests", "c", "fuzz", "regressions", "*")))


def _build_and_run(tmp_path, mains, extra, args=(), cc="gcc"):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not available")
    sources = [f for f in glob.glob(os.path.join(CSRC, "**", "*.c"), recursive=True)]
    exe = str(tmp_path / "prog")
    cmd = [cc, "-std=gnu11", *(["-DMT_NO_CLONES"] if cc == "clang" else []), "-pthread", "-include", "stdint.h", "-I", os.path.join(CSRC, "include"),
           *[os.path.join(ROOT, "tests", "c", m) for m in mains], *sources, "-o", exe, "-lopenblas", "-lm", *extra]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    res = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_c_abi(tmp_path):
    assert "C ABI tests passed" in _build_and_run(tmp_path, ["test_abi.c"], ["-O2"])


def test_c_abi_sanitized(tmp_path):
    assert "C ABI tests passed" in _build_and_run(tmp_path, ["test_abi.c"], SANITIZE)


def test_fuzz_regressions_sanitized(tmp_path):
    """Every input the libFuzzer harness (tools/fuzz.sh) crashed on, replayed under ASan/UBSan. The
    harness reads argument bytes inside call arguments, whose evaluation order is the compiler's:
    clang (which built the fuzzer) replays exactly, gcc runs the same bytes as other programs."""
    cc = "clang" if shutil.which("clang") else "gcc"
    out = _build_and_run(tmp_path, ["fuzz/fuzz_ops.c", "fuzz/replay.c"], SANITIZE, REGRESSIONS, cc=cc)
    assert f"replayed {len(REGRESSIONS)} inputs" in out
