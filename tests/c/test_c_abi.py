"""Build tests/c/test_abi.c against the C core alone and run it, plain and
under AddressSanitizer + UndefinedBehaviorSanitizer."""
import glob
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSRC = os.path.join(ROOT, "csrc")


def _build_and_run(tmp_path, extra):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not available")
    sources = [f for f in glob.glob(os.path.join(CSRC, "**", "*.c"), recursive=True)]
    exe = str(tmp_path / "test_abi")
    cmd = ["gcc", "-std=gnu11", "-pthread", "-include", "stdint.h", "-I", os.path.join(CSRC, "include"),
           os.path.join(ROOT, "tests", "c", "test_abi.c"), *sources, "-o", exe, "-lopenblas", "-lm", *extra]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    res = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "C ABI tests passed" in res.stdout


def test_c_abi(tmp_path):
    _build_and_run(tmp_path, ["-O2"])


def test_c_abi_sanitized(tmp_path):
    _build_and_run(tmp_path, ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                              "-fno-sanitize-recover=undefined"])
