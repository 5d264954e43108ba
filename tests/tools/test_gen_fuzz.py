"""tools/gen_fuzz.py: the C fuzzer's cases cover every entry point of mt.h (gen_ops.py writes them;
tests/tools/test_gen_ops.py checks they are current), and a parameter it cannot draw stops it."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_fuzz  # noqa: E402


def test_fuzz_generator_covers_every_entry_point():
    with open(gen_fuzz.HEADER) as f:
        header = f.read()
    with open(gen_fuzz.HARNESS) as f:
        harness = f.read()
    generated = gen_fuzz.generate(header, harness)
    for fn, _ in gen_fuzz.prototypes(header):
        assert f'"{fn}",' in generated or fn in gen_fuzz.EXCLUDED or fn in gen_fuzz.HAND, fn
    # a new function with a parameter the generator cannot draw stops it, naming the function
    new = header + "\nmt_status mt_new_op(mt_tensor *x, const float *w, mt_tensor **out);\n"
    with pytest.raises(SystemExit, match=r"mt_new_op: parameter 'const float \*w' cannot be drawn"):
        gen_fuzz.generate(new, harness)
    # ... unless it is excluded with its reason
    gen_fuzz.EXCLUDED["mt_new_op"] = "test"
    try:
        assert '"mt_new_op"' not in gen_fuzz.generate(new, harness)
    finally:
        del gen_fuzz.EXCLUDED["mt_new_op"]
