"""Run transformers' own model test files under real PyTorch and under mindtorch_v2 (the torch
proxy), side by side; print the markdown rows of docs/COMPATIBILITY.md and, for every test that
passes under PyTorch but not under mindtorch_v2, its error.

    python tools/compat_run.py TRANSFORMERS_CHECKOUT [model ...]     # default: bert gpt2 llama

The checkout must hold the tests of the installed transformers version (see docs/COMPATIBILITY.md
for how to get one). Not run by CI: it needs transformers' test dependencies and real PyTorch."""
import collections
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(checkout, test_file, proxy, xml_path):
    cmd = [sys.executable] + (["-m", "torch_proxy"] if proxy else []) + [
        "-m", "pytest", "-p", "no:cacheprovider", test_file, "-q", "--timeout", "600", f"--junitxml={xml_path}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ROOT if proxy else ""}
    subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    return outcomes(xml_path)


def outcomes(xml_path):
    out = {}
    for tc in ET.parse(xml_path).getroot().iter("testcase"):
        state, msg = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                state, msg = "failed", (child.get("message") or "").split("\n")[0][:160]
            elif child.tag == "skipped":
                state = "skipped"
        out[tc.get("classname").split(".")[-1] + "::" + tc.get("name")] = (state, msg)
    return out


def counts(res):
    c = collections.Counter(state for state, _ in res.values())
    return c["passed"], c["failed"], c["skipped"]


def main():
    checkout, models = sys.argv[1], sys.argv[2:] or ["bert", "gpt2", "llama"]
    tmp = tempfile.mkdtemp()
    rows, reasons = [], []
    for m in models:
        test_file = f"tests/models/{m}/test_modeling_{m}.py"
        t = run(checkout, test_file, False, os.path.join(tmp, f"{m}_torch.xml"))
        mt = run(checkout, test_file, True, os.path.join(tmp, f"{m}_mt.xml"))
        missing = {k: mt.get(k, ("missing", ""))[1] for k, (s, _) in t.items() if s == "passed"
                   and mt.get(k, ("missing", ""))[0] != "passed"}
        rows.append(f"| {test_file} | %d / %d / %d | %d / %d / %d | {len(missing)} |" % (counts(t) + counts(mt)))
        groups = collections.defaultdict(list)
        for k, msg in missing.items():
            groups[msg].append(k.split("::")[1])
        for msg, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            reasons.append(f"- {m}: `{msg}`: {', '.join(sorted(names))}")
    print("| test file | PyTorch 2.13 passed / failed / skipped | mindtorch_v2 passed / failed / skipped | "
          "pass on PyTorch only |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("\n".join(reasons))


if __name__ == "__main__":
    main()
