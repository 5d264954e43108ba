"""datasets' with_format("torch"), safetensors save/load, and tokenizers' return_tensors="pt": which
classes and dtypes come back, and their values; the safetensors file bytes are compared by the test."""
import os

from hf_common import WORK, emit, tolist

import torch
from datasets import Dataset
from safetensors.torch import load_file, save_file
from transformers import BertTokenizerFast


def describe(x):
    if isinstance(x, torch.Tensor):
        return {"class": type(x).__name__ if type(x) is torch.Tensor else "not torch.Tensor",
                "dtype": str(x.dtype), "shape": list(x.shape), "values": tolist(x)}
    if isinstance(x, dict):
        return {k: describe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [describe(v) for v in x]
    return repr(x)


result = {}
ds = Dataset.from_dict({"f": [[1.5, 2.0], [3.0, -4.25], [0.5, 0.0]], "i": [1, 2, 3], "b": [True, False, True],
                        "s": ["x", "y", "z"], "nested": [[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 0], [1, 2]]]})
ds = ds.with_format("torch")
result["datasets_row"] = describe(ds[0])
result["datasets_slice"] = describe(ds[:2])
result["datasets_column"] = describe(ds["f"])
loader = torch.utils.data.DataLoader(ds.remove_columns("s"), batch_size=2)
result["datasets_loader"] = describe(list(loader))
mapped = ds.map(lambda row: {"g": row["f"] * 2})  # the mapped function sees torch tensors
result["datasets_map"] = describe(mapped.with_format("torch", columns=["g"])[:])

tensors = {"w": torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7, "h": torch.tensor([1.5, -2.0]).half(),
           "bf": torch.tensor([0.1, 3.0]).bfloat16(), "i": torch.arange(5), "mask": torch.tensor([True, False]),
           "t": torch.arange(6.0).reshape(2, 3).t().contiguous()}
path = os.path.join(WORK, "t.safetensors")
save_file(tensors, path, metadata={"format": "pt"})
result["safetensors"] = describe(dict(sorted(load_file(path).items())))

vocab = os.path.join(WORK, "vocab.txt")
with open(vocab, "w") as f:
    f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "a", "test"]) + "\n")
tok = BertTokenizerFast(vocab)
batch = tok(["hello world", "a test of hello"], padding=True, return_tensors="pt")
result["tokenizer"] = describe(dict(batch))
result["tokenizer_pair"] = describe(dict(tok("hello", "world", return_tensors="pt", max_length=6,
                                             padding="max_length")))
emit(result)
