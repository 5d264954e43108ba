"""The transformers sweep: run transformers' own test files under real PyTorch and under mindtorch_v2
(the pytest plugin route, `python -m pytest -p torch_proxy`), file by file, and print the table of
docs/COMPATIBILITY.md with the reasons grouped by error.

    python tools/compat_run.py [TARGET ...] [--checkout /work/tf457] [--shard I/N] [--timeout S]
                               [--redo] [--ours-only] [--report] [--python PY] [--pythonpath P]

A TARGET is a model name (`bert`), a test file, a directory (`tests/utils`: its test_*.py files) or
a glob, relative to the checkout; the default is every `tests/models/*/test_modeling_*.py`.
- Resumable: each file's outcomes go to RESULTS/{torch,ours}/<file>.json as the file finishes; a
  rerun skips the files already there unless --redo.
- `--shard I/N` (1 <= I <= N) runs every N-th file of the sorted list, starting at the I-th.
- `--timeout S` caps a file's wall time (and pytest-timeout caps a single test at S/2): a file that
  runs out is reported as "timeout", with the outcomes of the tests that finished before.
- PyTorch's outcomes are merged, per test id, into the committed reference JSON (--reference);
  `--ours-only` takes PyTorch's side from there and runs only mindtorch_v2.
- `--report` runs nothing and prints the table of what RESULTS (or the reference) holds.
- `--python PY` runs the tests with another interpreter (a venv holding another transformers line),
  and `--pythonpath P` (os.pathsep-separated) puts P on its path after the repo, e.g. a checkout's
  src/ so that the tests run the library of their own commit.

The checkout must hold the tests of the installed transformers version (docs/COMPATIBILITY.md, "How
it is run"). Not run by CI: it needs transformers' test dependencies and real PyTorch. The file is
also the pytest plugin (`-p compat_run`) that streams each test's outcome to $COMPAT_RUN_LOG, so
that a file killed at its timeout still reports the tests it finished."""
import argparse
import collections
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")
REFERENCE = os.path.join(ROOT, "tests", "fixtures", "compat", "transformers-4.57.json")
LOG_VAR = "COMPAT_RUN_LOG"


# ---- the pytest plugin side: one JSON line per test outcome --------------------------------------

def _crash_line(report):
    """The first line of the exception (what junitxml calls the message), or the skip reason."""
    lr = report.longrepr
    if isinstance(lr, tuple):  # a skip: (path, lineno, reason)
        return str(lr[2])
    crash = getattr(lr, "reprcrash", None)
    if crash is not None:
        return crash.message.split("\n")[0]
    return re.sub(r"^E\s+", "", str(lr).strip().split("\n")[-1]) if lr else ""  # a collection error's text


def _log(record):
    with open(os.environ[LOG_VAR], "a") as f:
        f.write(json.dumps(record) + "\n")


def pytest_runtest_logreport(report):
    if LOG_VAR not in os.environ:
        return
    # a test's outcome is its call phase; a failed or skipped setup, or a failed teardown, decides too
    if report.when == "call" or report.failed or (report.when == "setup" and report.skipped):
        state = "skipped" if report.skipped else report.outcome
        _log({"id": report.nodeid, "state": state, "msg": "" if state == "passed" else _crash_line(report)})


def pytest_runtest_setup(item):
    """The same inputs under both libraries: transformers' testers draw ids and floats from an unseeded
    `random.Random()` (tests/test_modeling_common.py's `global_rng`), so a test that skips unless a draw
    holds a given id ran on one side and skipped on the other at random. Seeded from the test id, both
    sides draw the same values."""
    if LOG_VAR in os.environ:
        rng = getattr(sys.modules.get("tests.test_modeling_common"), "global_rng", None)
        if rng is not None:
            rng.seed(item.nodeid)


def pytest_collectreport(report):
    if LOG_VAR in os.environ and report.failed:
        _log({"id": report.nodeid, "state": "failed", "msg": "collection: " + _crash_line(report)})


# ---- reading outcomes ----------------------------------------------------------------------------

def read_log(path):
    """{test id: (state, msg)} from a plugin log; later records of an id win (a failed teardown after
    a passed call), except that a failure is never overwritten by a pass."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:  # a line cut by the kill at timeout
                continue
            if out.get(r["id"], ("",))[0] != "failed":
                out[r["id"]] = (r["state"], r["msg"])
    return out


def normalise(msg):
    """An error's first line with the numbers, addresses and temporary paths that differ from test to
    test replaced, so that one cause groups as one reason."""
    msg = msg.split("\n")[0].strip()
    msg = re.sub(r"0x[0-9a-fA-F]+", "0x…", msg)
    msg = re.sub(r"/tmp/[^\s'\"]+", "/tmp/…", msg)
    msg = re.sub(r"(?<![\w.])-?\d+(\.\d+)?(e[-+]?\d+)?(?![\w.])", "N", msg)
    return msg[:300]


def counts(tests):
    c = collections.Counter(state for state, _ in tests.values())
    return c["passed"], c["failed"], c["skipped"]


def pytorch_only(ref, ours):
    """{test id: our reason} for the tests that pass under PyTorch and not under mindtorch_v2. A test
    our run never reached takes the file's status (timeout, crash) as its reason."""
    out = {}
    for tid, (state, _) in ref["tests"].items():
        if state != "passed":
            continue
        mine = ours["tests"].get(tid)
        if mine is None:
            out[tid] = f"not run: file {ours['status']}" + (f" ({ours['note']})" if ours.get("note") else "")
        elif mine[0] != "passed":
            out[tid] = mine[1] or mine[0]
    return out


def table(files, ref_of, ours_of):
    """The markdown table, its totals line and the grouped reasons, as one string."""
    head = ("| test file | PyTorch 2.13 passed / failed / skipped | mindtorch_v2 passed / failed / skipped | "
            "pass on PyTorch only |\n|---|---|---|---|")
    rows, tot_t, tot_m, tot_only = [], [0, 0, 0], [0, 0, 0], 0
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in files:
        ref, ours = ref_of(f), ours_of(f)
        if ref is None or ours is None:
            continue
        t, m = counts(ref["tests"]), counts(ours["tests"])
        only = pytorch_only(ref, ours)
        tot_t = [a + b for a, b in zip(tot_t, t)]
        tot_m = [a + b for a, b in zip(tot_m, m)]
        tot_only += len(only)
        note = lambda r: "" if r["status"] == "done" else f" ({r['status']})"
        rows.append(f"| {f} | %d / %d / %d{note(ref)} | %d / %d / %d{note(ours)} | {len(only)} |" % (t + m))
        for tid, msg in only.items():
            groups[normalise(msg)][f].append(tid.split("::")[-1])
    rows.append(f"| **total ({len(rows)} files)** | %d / %d / %d | %d / %d / %d | {tot_only} |"
                % (tuple(tot_t) + tuple(tot_m)))
    reasons = []
    for msg, by_file in sorted(groups.items(), key=lambda kv: -sum(map(len, kv[1].values()))):
        n = sum(map(len, by_file.values()))
        where = "; ".join(f"{_short(f)}: {', '.join(sorted(set(names)))}" for f, names in sorted(by_file.items()))
        reasons.append(f"- `{msg}` ({n}): {where}")
    return "\n".join([head] + rows) + "\n\n" + ("\n".join(reasons) or "(no test passes on PyTorch only)")


def _short(f):
    parts = f.split("/")
    return parts[2] if len(parts) > 3 and parts[1] == "models" else f


# ---- running -------------------------------------------------------------------------------------

def expand(checkout, targets):
    files = set()
    for t in targets or ["tests/models/*/test_modeling_*.py"]:
        if re.fullmatch(r"[\w-]+", t) and os.path.isdir(os.path.join(checkout, "tests", "models", t)):
            t = f"tests/models/{t}/test_modeling_{t}.py"
        full = os.path.join(checkout, t)
        if os.path.isdir(full):
            hits = glob.glob(os.path.join(full, "**", "test_*.py"), recursive=True)
        else:
            hits = glob.glob(full)
        if not hits:
            sys.exit(f"compat_run: {t} matches no file in {checkout}")
        files.update(os.path.relpath(h, checkout) for h in hits)
    return sorted(files)


def shard(files, spec):
    i, n = (int(x) for x in spec.split("/"))
    if not 1 <= i <= n:
        sys.exit(f"compat_run: --shard {spec}: I must be in 1..N")
    return files[i - 1::n]


def child_env(proxy, pythonpath="", **extra):
    """The environment of a test process: offline hub, and on the path the repo (under the proxy),
    then `pythonpath`, then tools/ (for the plugin)."""
    path = ([ROOT] if proxy else []) + [p for p in pythonpath.split(os.pathsep) if p] + [TOOLS]
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(path), **extra}


def run_file(checkout, test_file, proxy, timeout, log_path, python=sys.executable, pythonpath=""):
    """Run one test file in its own process group; returns its record {status, seconds, tests, note}."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    if os.path.exists(log_path):
        os.remove(log_path)
    cmd = [python, "-m", "pytest", "-p", "no:cacheprovider", "-p", "compat_run"]
    cmd += (["-p", "torch_proxy"] if proxy else []) + [test_file, "-q", "--timeout", str(max(60, timeout // 2))]
    env = child_env(proxy, pythonpath, **{LOG_VAR: log_path})
    start = time.time()
    p = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    status = "done"
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        status = "timeout"
    tests = read_log(log_path)
    note = ""
    if status == "done" and p.returncode not in (0, 1, 5):  # 1: tests failed; 5: none collected
        status = "crashed" if p.returncode < 0 or not tests else "error"
        note = f"exit {p.returncode}: " + (out.strip().split("\n") or [""])[-1][:160]
    return {"status": status, "seconds": round(time.time() - start), "note": note, "tests": tests}


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        r = json.load(f)
    r["tests"] = {k: tuple(v) for k, v in r["tests"].items()}
    return r


def save(path, rec):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(rec, f, indent=0, sort_keys=True)
    os.replace(path + ".tmp", path)


def load_reference(path):
    """The committed PyTorch outcomes: {"meta": {...}, "files": {file: {status, seconds, tests:
    {test: state}, errors: {test: first line}}}}, in which a test is named without its file."""
    if not os.path.exists(path):
        return {"meta": {}, "files": {}}
    with open(path) as f:
        return json.load(f)


def from_reference(entry, test_file):
    if entry is None:
        return None
    errors = entry.get("errors", {})
    return {"status": entry["status"], "note": entry.get("note", ""),
            "tests": {f"{test_file}::{t}": (s, errors.get(t, "")) for t, s in entry["tests"].items()}}


def to_reference(rec, test_file):
    name = lambda tid: tid[len(test_file) + 2:] if tid.startswith(test_file + "::") else tid
    return {"status": rec["status"], "seconds": rec["seconds"], "note": rec["note"],
            "tests": {name(t): s for t, (s, _) in sorted(rec["tests"].items())},
            "errors": {name(t): m for t, (s, m) in sorted(rec["tests"].items()) if s == "failed"}}


def meta(checkout, python=sys.executable, pythonpath=""):
    """The versions the tests ran with, asked of the interpreter and path that ran them."""
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "--short=10", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    ask = "import json, torch, transformers; print(json.dumps([transformers.__version__, torch.__version__]))"
    out = subprocess.run([python, "-c", ask], env=child_env(False, pythonpath), cwd=checkout,
                         capture_output=True, text=True, timeout=600)
    tf, torch = json.loads(out.stdout.strip().split("\n")[-1]) if out.returncode == 0 else ("?", "?")
    return {"transformers": tf, "torch": torch, "checkout": commit}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("targets", nargs="*")
    ap.add_argument("--checkout", default="/work/tf457")
    ap.add_argument("--results", default=os.path.join(ROOT, ".compat_results"))
    ap.add_argument("--reference", default=REFERENCE)
    ap.add_argument("--shard", default="1/1")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per file (default 1800)")
    ap.add_argument("--redo", action="store_true", help="rerun files that already have results")
    ap.add_argument("--ours-only", action="store_true", help="take PyTorch's side from --reference")
    ap.add_argument("--report", action="store_true", help="run nothing, print the table")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs the tests")
    ap.add_argument("--pythonpath", default="", help="put on the tests' path after the repo")
    args = ap.parse_args(argv)
    checkout = os.path.abspath(args.checkout)
    files = shard(expand(checkout, args.targets), args.shard)
    res = lambda side, f: os.path.join(args.results, side, f.replace("/", "__") + ".json")
    reference = load_reference(args.reference)

    def ref_of(f):
        rec = None if args.ours_only else load(res("torch", f))
        return rec or from_reference(reference["files"].get(f), f)

    versions = None
    for f in [] if args.report else files:
        sides = ([] if args.ours_only else ["torch"]) + ["ours"]
        for side in sides:
            if not args.redo and os.path.exists(res(side, f)):
                continue
            if side == "ours" and ref_of(f) is None:
                print(f"compat_run: {f}: no PyTorch outcomes in {args.reference}; run without --ours-only")
                continue
            rec = run_file(checkout, f, side == "ours", args.timeout, res(side, f) + ".log", args.python,
                           args.pythonpath)
            save(res(side, f), rec)
            p, fl, s = counts(rec["tests"])
            print(f"{side:5} {f}: {rec['status']} in {rec['seconds']} s, {p} passed / {fl} failed / {s} skipped",
                  flush=True)
            if side == "torch":  # merge into the committed reference at once, so a kill loses nothing
                reference = load_reference(args.reference)
                versions = versions or meta(checkout, args.python, args.pythonpath)
                reference["meta"] = versions
                reference["files"][f] = to_reference(rec, f)
                os.makedirs(os.path.dirname(args.reference), exist_ok=True)
                with open(args.reference, "w") as out:
                    json.dump(reference, out, indent=1, sort_keys=True)
                    out.write("\n")
    print(table(files, ref_of, lambda f: load(res("ours", f))))


if __name__ == "__main__":
    main()
