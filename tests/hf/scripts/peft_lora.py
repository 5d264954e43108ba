"""peft LoRA on a tiny BERT: forward, backward, an optimizer step, merge_and_unload (the merged plain
model gives the adapted model's outputs), save_pretrained / from_pretrained of the adapter."""
import os

from hf_common import WORK, emit, tolist

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import BertConfig, BertModel


def base():
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=64, max_position_embeddings=16))


ids = torch.tensor([[2, 7, 9, 11, 3, 0], [5, 8, 13, 4, 20, 6]])
mask = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]])
torch.manual_seed(1)  # init_lora_weights=False: A and B random (B is zero by default: a no-op adapter)
model = get_peft_model(base(), LoraConfig(r=4, lora_alpha=8, target_modules=["query", "value"], lora_dropout=0.0,
                                          init_lora_weights=False))
trainable, total = model.get_nb_trainable_parameters()
out = model(input_ids=ids, attention_mask=mask).last_hidden_state
loss = out.pow(2).mean()
loss.backward()
grads = {n: tolist(p.grad) for n, p in model.named_parameters() if p.requires_grad}
frozen_grads = [n for n, p in model.named_parameters() if not p.requires_grad and p.grad is not None]
torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1).step()
model.eval()
with torch.no_grad():
    stepped = model(input_ids=ids, attention_mask=mask).last_hidden_state
model.save_pretrained(os.path.join(WORK, "adapter"))
reloaded = PeftModel.from_pretrained(base(), os.path.join(WORK, "adapter")).eval()
with torch.no_grad():
    reloaded_out = reloaded(input_ids=ids, attention_mask=mask).last_hidden_state
merged = model.merge_and_unload()
with torch.no_grad():
    merged_out = merged(input_ids=ids, attention_mask=mask).last_hidden_state
emit({"trainable": trainable, "total": total, "out": tolist(out), "loss": loss.item(), "grads": grads,
      "frozen_grads": frozen_grads, "stepped": tolist(stepped), "reloaded": tolist(reloaded_out),
      "merged": tolist(merged_out), "merged_type": type(merged).__name__,
      "merged_max_diff": (merged_out - stepped).abs().max().item(),
      "adapter_files": sorted(os.listdir(os.path.join(WORK, "adapter")))})
