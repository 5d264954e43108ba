"""The Hugging Face libraries, unpatched, on mindtorch_v2 against real PyTorch: each script in scripts/
runs twice, at once, in its own interpreter: under the proxy (`python -m torch_proxy`) and with real
PyTorch 2.13. Each prints one JSON line; the test compares them (values within float32 tolerance).
A library that is not installed skips its test; without real PyTorch every test skips."""
import functools
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(HERE, "scripts")
TIMEOUT = 420  # seconds for one interpreter: a failure is an error, never a hang


def _env():
    env = {k: v for k, v in os.environ.items() if k != "MINDTORCH_PROXY"}
    env["PYTHONPATH"] = os.pathsep.join([SCRIPTS, ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


@functools.lru_cache(maxsize=None)
def real_torch():
    """Is real PyTorch importable in a process without the proxy? (asked without importing it)"""
    code = "import importlib.util as u; s = u.find_spec('torch'); print(s.origin if s else '')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    return bool(out.stdout.strip()) and "mindtorch_v2" not in out.stdout


def needs(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    if not real_torch():
        pytest.skip("real PyTorch (the oracle) is not installed")


def run_both(script, tmp_path):
    """{"torch": result, "mindtorch_v2": result} of scripts/<script> run under each library in parallel."""
    procs = {}
    for lib, prefix in (("torch", []), ("mindtorch_v2", ["-m", "torch_proxy"])):
        work = tmp_path / lib
        work.mkdir()
        procs[lib] = (work, subprocess.Popen([sys.executable, *prefix, os.path.join(SCRIPTS, script), str(work)],
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                                             cwd=work))
    results = {}
    try:
        for lib, (work, p) in procs.items():
            out, err = p.communicate(timeout=TIMEOUT)
            lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
            assert p.returncode == 0 and lines, f"{script} under {lib} failed:\n{err[-4000:]}"
            results[lib] = json.loads(lines[-1][len("RESULT "):])
            assert results[lib].pop("_library") == lib
            results[lib]["_work"] = work
    finally:
        for _, p in procs.values():
            if p.poll() is None:
                p.kill()
                p.communicate()
    return results


def assert_close(ours, theirs, rtol=1e-4, atol=1e-5, path="result"):
    """Same structure, same ints/strings/bools, floats within tolerance (float32 runs of long op chains)."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), (path, sorted(ours), sorted(theirs))
        for k in theirs:
            assert_close(ours[k], theirs[k], rtol, atol, f"{path}.{k}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), (path, ours, theirs)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_close(a, b, rtol, atol, f"{path}[{i}]")
    elif isinstance(theirs, float):
        assert isinstance(ours, (float, int)) and math.isclose(ours, theirs, rel_tol=rtol, abs_tol=atol), \
            (path, ours, theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (path, ours, theirs)


def compare(results, **tol):
    ours, theirs = (dict(results[lib]) for lib in ("mindtorch_v2", "torch"))
    ours.pop("_work"), theirs.pop("_work")
    assert_close(ours, theirs, **tol)
    return theirs


def test_trainer_bert_and_gpt2_loss_curves_checkpoint_and_resume(tmp_path):
    needs("transformers", "accelerate")
    results = run_both("trainer.py", tmp_path)
    theirs = compare(results, rtol=1e-4, atol=2e-4)  # log_history rounds losses to 4 decimals
    for kind, r in theirs.items():
        assert len(r["losses"]) == 6 and r["checkpoints"] == ["checkpoint-3", "checkpoint-6"], kind
        # the resumed run retrains steps 4-6 from checkpoint-3: PyTorch's own run is reproducible
        assert r["resumed_step_losses"] == r["step_losses"][3:] and r["global_step"] == 6, kind
    for kind, r in results["mindtorch_v2"].items():
        if kind != "_work":  # ours too, exactly, and the curves (unrounded) equal PyTorch's
            assert r["resumed_step_losses"] == r["step_losses"][3:], kind
            assert_close(r["step_losses"], theirs[kind]["step_losses"], rtol=1e-5, atol=0)


def test_accelerator_prepare_backward_gather_save_and_load_state(tmp_path):
    needs("accelerate")
    theirs = compare(run_both("accelerate_loop.py", tmp_path), rtol=1e-5, atol=1e-6)
    assert theirs["restored_equal"] and theirs["rng_restored"] and theirs["gathered"] == theirs["losses"]
    assert theirs["files"] == ["model.safetensors", "optimizer.bin", "random_states_0.pkl"]


def test_peft_lora_forward_backward_merge_and_unload(tmp_path):
    needs("peft", "transformers")
    theirs = compare(run_both("peft_lora.py", tmp_path), rtol=1e-4, atol=1e-5)
    assert theirs["merged_type"] == "BertModel" and theirs["frozen_grads"] == []
    assert sorted(theirs["grads"]) and all("lora_" in n for n in theirs["grads"])


def test_sentence_transformers_encode_and_one_epoch_fit(tmp_path):
    needs("sentence_transformers", "transformers", "accelerate", "datasets")
    theirs = compare(run_both("sentence_transformers_fit.py", tmp_path), rtol=1e-4, atol=2e-4)
    assert theirs["modules"] == ["Transformer", "Pooling"] and theirs["fit_steps"] == 2


def test_datasets_torch_format_safetensors_and_tokenizers(tmp_path):
    needs("datasets", "safetensors", "transformers", "tokenizers")
    results = run_both("formats.py", tmp_path)
    compare(results, rtol=0, atol=0)
    files = [(results[lib]["_work"] / "t.safetensors").read_bytes() for lib in ("mindtorch_v2", "torch")]
    assert files[0] == files[1]  # safetensors writes the same file from our tensors
