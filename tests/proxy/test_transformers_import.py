"""Smoke test: unmodified transformers 4.57.5 imports under the proxy (no forward pass here)."""
import subprocess
import sys
import textwrap

import pytest

import mindtorch_v2

pytest.importorskip("transformers")


@pytest.mark.xfail(not hasattr(mindtorch_v2.nn, "BCEWithLogitsLoss"), strict=True,
                   reason="the nn layer modules over nn.functional (Embedding, LayerNorm, Dropout, activations, "
                          "losses, conv) are not written yet (issue 5 item 4)")
def test_import_transformers_bert_gpt2_llama():
    code = textwrap.dedent("""
        import torch_proxy
        torch_proxy.install()
        import transformers
        from transformers import BertConfig, BertModel, GPT2LMHeadModel, LlamaForCausalLM
        import transformers.masking_utils, transformers.integrations.sdpa_attention, transformers.generation.utils
        import torch
        assert torch.__name__ == "mindtorch_v2"
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
