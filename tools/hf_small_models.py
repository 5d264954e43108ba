"""Small random BERT/GPT-2/LLaMA/Qwen2 built with a fixed seed: forward outputs and generate() (greedy,
sampled) as JSON, to compare the two libraries under the same transformers:

    python tools/hf_small_models.py torch > real.json          # real PyTorch
    PYTHONPATH=. python tools/hf_small_models.py proxy > ours.json   # mindtorch_v2 behind the proxy
    python tools/hf_small_models.py torch bert gpt2           # a subset
"""
import json, os, sys
os.environ["HF_HUB_OFFLINE"] = "1"
if sys.argv[1] == "proxy":
    import torch_proxy; torch_proxy.install()
import torch
import transformers
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM,
                          Qwen2Config, Qwen2ForCausalLM)
out = {"version": transformers.__version__}
only = sys.argv[2:] or ["bert", "gpt2", "llama", "qwen2"]
small = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)
def mk(name):
    torch.manual_seed(0)
    if name == "bert":
        return BertModel(BertConfig(**small)).eval()
    if name == "gpt2":
        return GPT2LMHeadModel(GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64)).eval()
    if name == "llama":
        return LlamaForCausalLM(LlamaConfig(**small, num_key_value_heads=2, max_position_embeddings=64)).eval()
    return Qwen2ForCausalLM(Qwen2Config(**small, num_key_value_heads=2, max_position_embeddings=64)).eval()
for name in only:
    m = mk(name)
    ids = torch.tensor([[5, 7, 11, 13, 17, 19], [23, 29, 31, 37, 41, 43]])
    with torch.no_grad():
        r = m(input_ids=ids)
        h = (r.last_hidden_state if name == "bert" else r.logits)
    res = {"sum": float(h.double().sum()), "abs": float(h.double().abs().sum()), "first": h.flatten()[:8].tolist()}
    if name != "bert":
        g = m.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)
        torch.manual_seed(1)
        s = m.generate(ids, max_new_tokens=8, do_sample=True, top_k=20, temperature=0.9, pad_token_id=0)
        res["greedy"] = g.tolist()
        res["sampled"] = s.tolist()
    out[name] = res
    print(name, "done", file=sys.stderr)
print(json.dumps(out))
