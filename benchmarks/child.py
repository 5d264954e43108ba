"""Cases that run each library in a child process of its own.

Some cases cannot share the runner's process: transformers binds `import torch` once per process, and
a peak RSS means something only for one library alone. Worker(module, name, arg) starts
`python [-m torch_proxy] -m MODULE NAME ARG` (real PyTorch: plain python; mindtorch_v2 behind the proxy),
which calls serve(build): build(name, arg) makes the case and returns (step, check); then each "run" line
read from stdin runs one step. The runner times the round trip as usual (the pipe adds ~0.1 ms to calls
of 20 ms and more) and calls finish(), which returns the child's peak RSS (VmHWM: interpreter + library +
the case + every step), its RSS after set-up, and check(last step's output) (both sides print it, so a
reader sees that they computed the same thing).

BENCH_NUM_THREADS=N in the environment sets both children's thread count (default: each library's).
"""
import json
import os
import subprocess
import sys
import tempfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Worker:
    """A child process running one case; calling it runs one step there."""

    def __init__(self, lib_name, module, name, arg):
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        worker = ["-m", module, name, str(arg)]
        if lib_name == "mindtorch_v2":
            cmd = [sys.executable, "-m", "torch_proxy"] + worker
        else:
            cmd = [sys.executable] + worker
            env["MINDTORCH_PROXY"] = "0"  # the proxy's .pth start-up hook, if installed, stays off
        self.err = tempfile.TemporaryFile()  # the child's stderr (warnings), shown on failure
        self.p = subprocess.Popen(cmd, cwd=_ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, text=True, bufsize=1)
        self._call("setup")

    def _call(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line.startswith("ok"):
            self.p.kill()
            self.p.wait()
            self.err.seek(0)
            tail = self.err.read().decode(errors="replace")[-3000:]
            raise RuntimeError(f"benchmark worker {self.p.args} failed at {cmd!r}:\n{tail}")
        return line[2:].strip()

    def __call__(self):
        self._call("run")

    def finish(self):
        """Extra figures for the report ({'peak_rss_mb': ..., ...}); ends the child."""
        if self.p.poll() is not None:
            return {}
        out = json.loads(self._call("finish"))
        self.p.stdin.close()
        self.p.wait(timeout=60)
        self.err.close()
        return out


def _rss_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    return None


def library():
    """The child's `torch` (mindtorch_v2 behind the proxy, or PyTorch), threads set from BENCH_NUM_THREADS."""
    import torch
    expect = "mindtorch_v2" if os.environ.get("MINDTORCH_PROXY", "") not in ("", "0") else "torch"
    assert torch.__name__ == expect, (torch.__name__, expect)  # the library under test is `torch`
    if os.environ.get("BENCH_NUM_THREADS"):  # e.g. 1: compare single-threaded when the machine is loaded
        torch.set_num_threads(int(os.environ["BENCH_NUM_THREADS"]))
    return torch


def serve(build):
    """The child's loop: python -m MODULE NAME ARG, commands on stdin, replies on the real stdout."""
    name, arg = sys.argv[1], int(sys.argv[2])
    proto = os.fdopen(os.dup(1), "w", buffering=1)  # the reply channel; stray prints go to stderr
    os.dup2(2, 1)
    step = check = out = setup_rss = None
    for cmd in sys.stdin:
        cmd = cmd.strip()
        if cmd == "setup":
            step, check = build(name, arg)
            setup_rss = _rss_mb("VmRSS")
        elif cmd == "run":
            out = step()
        elif cmd == "finish":
            proto.write("ok " + json.dumps({"peak_rss_mb": _rss_mb("VmHWM"), "rss_after_setup_mb": setup_rss,
                                           "check": None if out is None else check(out)}) + "\n")
            return
        proto.write("ok\n")
