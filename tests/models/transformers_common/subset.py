"""CI's subset of transformers' model tests: transformers' own ModelTesterMixin (its
tests/test_modeling_common.py, from the 4.57.5 sdist on PyPI) over five small models chosen to cover
the op families: BERT (embeddings, LayerNorm, GELU, padding masks, heads), GPT-2 (Conv1D's addmm,
causal masks), LLaMA (rotary embeddings, RMSNorm, grouped-query attention), T5 (encoder-decoder,
relative position buckets, cross-attention) and ViT (conv2d patches, pixel inputs).

The testers below are ours (the model test files are not in the sdist; the full files run in the
sweep, docs/COMPATIBILITY.md); the tests are transformers'. test_transformers_common.py copies this
file into a package beside the sdist's tests and runs it under PyTorch and under mindtorch_v2."""
import unittest

from transformers import BertConfig, GPT2Config, LlamaConfig, T5Config, ViTConfig
from transformers.testing_utils import require_torch
from transformers.utils import is_torch_available

from ...test_modeling_common import ModelTesterMixin, floats_tensor, ids_tensor, random_attention_mask

if is_torch_available():
    from transformers import (BertForMaskedLM, BertForSequenceClassification, BertModel, GPT2LMHeadModel, GPT2Model,
                              LlamaForCausalLM, LlamaModel, T5ForConditionalGeneration, T5Model,
                              ViTForImageClassification, ViTModel)

SIZES = dict(batch_size=3, seq_length=7, vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4)


class Tester:
    """The attributes ModelTesterMixin reads of its model tester, for a model whose config `make`
    builds from them; `inputs` names what the model takes beside input_ids."""

    def __init__(self, parent, make, inputs=("attention_mask",), **sizes):
        self.parent, self.make, self.inputs, self.is_training = parent, make, inputs, True
        for k, v in {**SIZES, **sizes}.items():
            setattr(self, k, v)

    def get_config(self):
        return self.make(self)

    def prepare_config_and_inputs_for_common(self):
        shape = [self.batch_size, self.seq_length]
        inputs = {"input_ids": ids_tensor(shape, self.vocab_size)}
        if "attention_mask" in self.inputs:
            inputs["attention_mask"] = random_attention_mask(shape)
        if "token_type_ids" in self.inputs:
            inputs["token_type_ids"] = ids_tensor(shape, 2)
        if "decoder_input_ids" in self.inputs:
            inputs["decoder_input_ids"] = ids_tensor(shape, self.vocab_size)
            inputs["decoder_attention_mask"] = random_attention_mask(shape)
        return self.get_config(), inputs


def common(t):
    """the config arguments every text tester shares"""
    return dict(vocab_size=t.vocab_size, num_hidden_layers=t.num_hidden_layers,
                num_attention_heads=t.num_attention_heads)


@require_torch
class BertSubsetTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (BertModel, BertForMaskedLM, BertForSequenceClassification) if is_torch_available() else ()
    fx_compatible = True

    def setUp(self):
        def make(t):
            return BertConfig(hidden_size=t.hidden_size, intermediate_size=37, max_position_embeddings=64,
                              type_vocab_size=2, **common(t))
        self.model_tester = Tester(self, make, ("attention_mask", "token_type_ids"))


@require_torch
class GPT2SubsetTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (GPT2Model, GPT2LMHeadModel) if is_torch_available() else ()

    def setUp(self):
        def make(t):
            return GPT2Config(n_embd=t.hidden_size, n_layer=t.num_hidden_layers, n_head=t.num_attention_heads,
                              vocab_size=t.vocab_size, n_positions=64, n_inner=37,
                              bos_token_id=t.vocab_size - 1, eos_token_id=t.vocab_size - 1,
                              pad_token_id=t.vocab_size - 1)
        self.model_tester = Tester(self, make)


@require_torch
class LlamaSubsetTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (LlamaModel, LlamaForCausalLM) if is_torch_available() else ()
    test_pruning = test_head_masking = False

    def setUp(self):
        def make(t):
            return LlamaConfig(hidden_size=t.hidden_size, intermediate_size=37, num_key_value_heads=2,
                               max_position_embeddings=64, pad_token_id=0, **common(t))
        self.model_tester = Tester(self, make)


@require_torch
class T5SubsetTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (T5Model, T5ForConditionalGeneration) if is_torch_available() else ()
    is_encoder_decoder = True
    fx_compatible = True
    test_pruning = test_resize_embeddings = False

    def setUp(self):
        def make(t):
            return T5Config(d_model=t.hidden_size, d_ff=37, d_kv=t.hidden_size // t.num_attention_heads,
                            num_layers=t.num_hidden_layers, num_heads=t.num_attention_heads,
                            vocab_size=t.vocab_size, relative_attention_num_buckets=8, dropout_rate=0.1,
                            pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
        self.model_tester = Tester(self, make, ("attention_mask", "decoder_input_ids"))


class ImageTester(Tester):
    def prepare_config_and_inputs_for_common(self):
        pixels = floats_tensor([self.batch_size, 3, self.image_size, self.image_size])
        return self.get_config(), {"pixel_values": pixels}


@require_torch
class ViTSubsetTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (ViTModel, ViTForImageClassification) if is_torch_available() else ()
    test_pruning = test_resize_embeddings = test_head_masking = False
    has_attentions = True

    def setUp(self):
        def make(t):
            return ViTConfig(image_size=t.image_size, patch_size=t.patch_size, num_channels=3,
                             hidden_size=t.hidden_size, num_hidden_layers=t.num_hidden_layers,
                             num_attention_heads=t.num_attention_heads, intermediate_size=37,
                             attn_implementation="eager")
        # the sequence is the patches and the class token
        patches = (16 // 4) ** 2
        self.model_tester = ImageTester(self, make, image_size=16, patch_size=4, seq_length=patches + 1,
                                        mask_length=patches, num_masks=patches // 2)
