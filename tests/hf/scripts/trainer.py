"""transformers' Trainer (with accelerate): a tiny BERT classifier and a tiny GPT-2 LM trained a few
steps on synthetic data, evaluated, checkpointed and resumed from the middle checkpoint."""
import os
import random

from hf_common import WORK, emit

import torch
from transformers import (BertConfig, BertForSequenceClassification, GPT2Config, GPT2LMHeadModel, Trainer,
                          TrainingArguments)

VOCAB, SEQ, N = 64, 8, 24


def data(kind, seed):
    rng = random.Random(seed)
    rows = []
    for _ in range(N):
        ids = [rng.randrange(1, VOCAB) for _ in range(SEQ)]
        if kind == "bert":
            rows.append({"input_ids": ids, "attention_mask": [1] * (SEQ - 2) + [0, 0], "labels": ids[0] % 3})
        else:
            rows.append({"input_ids": ids, "labels": ids})
    return rows


def model(kind):
    torch.manual_seed(0)
    if kind == "bert":
        return BertForSequenceClassification(BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                                        num_attention_heads=2, intermediate_size=64,
                                                        max_position_embeddings=SEQ, num_labels=3))
    return GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=SEQ))


class RecordingTrainer(Trainer):
    """Records each step's loss unrounded (the log history rounds it to 4 decimals)."""
    step_losses = None

    def training_step(self, *args, **kwargs):
        loss = super().training_step(*args, **kwargs)
        self.step_losses = (self.step_losses or []) + [loss.item()]
        return loss


def run(kind):
    out = os.path.join(WORK, kind)
    args = TrainingArguments(output_dir=out, per_device_train_batch_size=4, per_device_eval_batch_size=8, max_steps=6,
                             learning_rate=1e-3, logging_steps=1, save_steps=3, save_strategy="steps", seed=0,
                             report_to=[], use_cpu=True, dataloader_num_workers=0, disable_tqdm=True)
    train, test = data(kind, 1), data(kind, 2)
    trainer = RecordingTrainer(model=model(kind), args=args, train_dataset=train, eval_dataset=test)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    grad_norms = [h["grad_norm"] for h in trainer.state.log_history if "grad_norm" in h]
    ev = trainer.evaluate()
    # resume from the middle checkpoint: a fresh model, the same arguments; steps 4-6 again
    resumed = RecordingTrainer(model=model(kind), args=args, train_dataset=train, eval_dataset=test)
    resumed.train(resume_from_checkpoint=os.path.join(out, "checkpoint-3"))
    return {"losses": losses, "step_losses": trainer.step_losses, "resumed_step_losses": resumed.step_losses, "grad_norms": grad_norms, "eval_loss": ev["eval_loss"],
            "resumed_losses": [h["loss"] for h in resumed.state.log_history if "loss" in h],
            "resumed_eval_loss": resumed.evaluate()["eval_loss"], "global_step": resumed.state.global_step,
            "checkpoints": sorted(os.listdir(out))}


emit({kind: run(kind) for kind in ("bert", "gpt2")})
