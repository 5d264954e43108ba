"""transformers' Trainer under torchrun: a small BERT classifier trained by `torchrun --nproc-per-node=2` through
the proxy (Trainer -> accelerate -> DistributedDataParallel on gloo) logs the same loss curve as one process
training on the full batch, ends with the same parameters, and logs PyTorch's loss curve (the same script on real
PyTorch, when installed)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import mindtorch_v2.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="built without libgloo-dev")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

# One script for both runs: per-device batch 8 // WORLD_SIZE, so that the global batch is 8 either way; the
# sampler's permutation is the same (one seed), accelerate hands rank r the r-th of each world-size group of
# batches, so each step averages the gradients of the same 8 examples. No dropout: the ranks' masks differ.
SCRIPT = textwrap.dedent(r'''
    import json, os, sys
    import torch_proxy; torch_proxy.install()
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, num_labels=3,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)  # ranks draw other masks
    model = BertForSequenceClassification(config)
    g = torch.Generator().manual_seed(1)
    ids, labels = torch.randint(1, 64, (64, 12), generator=g), torch.randint(0, 3, (64,), generator=g)

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return len(ids)

        def __getitem__(self, i):
            return {"input_ids": ids[i], "labels": labels[i]}

    args = TrainingArguments(output_dir=sys.argv[1], per_device_train_batch_size=8 // world, max_steps=6,
                             learning_rate=5e-3, logging_steps=1, report_to=[], use_cpu=True, seed=0,
                             save_strategy="no", disable_tqdm=True, dataloader_num_workers=0,
                             ddp_backend="gloo" if world > 1 else None)
    trainer = Trainer(model=model, args=args, train_dataset=Data())
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    digest = float(sum(p.detach().double().abs().sum() for p in model.parameters()))
    if rank == 0:
        os.write(1, ("RESULT " + json.dumps({"world": world, "losses": losses, "params": digest}) + "\n").encode())
''')


def _result(out):
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert lines, out
    return json.loads(lines[-1][len("RESULT "):])


def test_trainer_ddp_loss_curve_equals_one_process(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    env.pop("OMP_NUM_THREADS", None)
    single = subprocess.run([sys.executable, str(script), str(tmp_path / "one")], capture_output=True, text=True,
                            env=env, timeout=600, cwd=tmp_path)
    assert single.returncode == 0, single.stdout + single.stderr
    ddp = subprocess.run([sys.executable, "-m", "torch_proxy", "-m", "torch.distributed.run", "--standalone",
                          "--nproc-per-node=2", str(script), str(tmp_path / "two")], capture_output=True, text=True,
                         env=env, timeout=900, cwd=tmp_path)
    assert ddp.returncode == 0, ddp.stdout[-4000:] + ddp.stderr[-4000:]
    one, two = _result(single.stdout), _result(ddp.stdout)
    assert two["world"] == 2 and len(one["losses"]) == len(two["losses"]) == 6
    assert one["losses"][0] != one["losses"][-1]  # it trained
    for a, b in zip(one["losses"], two["losses"]):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(a)), (one["losses"], two["losses"])
    assert abs(one["params"] - two["params"]) <= 1e-5 * abs(one["params"]), (one["params"], two["params"])
    try:  # and the curve is PyTorch's: the same script on real PyTorch, one process
        import torch  # noqa: F401
    except ImportError:
        return
    script_torch = tmp_path / "train_torch.py"
    script_torch.write_text(SCRIPT.replace("import torch_proxy; torch_proxy.install()\n", ""))
    real = subprocess.run([sys.executable, str(script_torch), str(tmp_path / "torch")], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=os.environ.get("PYTHONPATH", "")), timeout=600, cwd=tmp_path)
    assert real.returncode == 0, real.stdout[-4000:] + real.stderr[-4000:]
    ref = _result(real.stdout)
    for a, b in zip(ref["losses"], two["losses"]):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(a)), (ref["losses"], two["losses"])
