"""diffusers (0.39, pinned in .ci/run), unpatched, on mindtorch_v2 against real PyTorch 2.13:
scripts/diffusers_run.py runs first under PyTorch, which draws a small UNet2DModel and AutoencoderKL from
a seed and writes them (save_pretrained) with the inputs, then under the proxy; both load the same files
with from_pretrained. The UNet and VAE forwards, a DDPM step (its variance noise from a seeded
generator), a 5-step DDIM loop, a text-conditioned UNet2DConditionModel in a 4-step Euler loop, a
DiTTransformer2DModel forward and one AdamW training step must agree within float32 tolerance.
Skipped when diffusers or real PyTorch is not installed."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hf"))
from test_hf_libraries import TIMEOUT, _env, assert_close, needs  # noqa: E402

SCRIPT = os.path.join(HERE, "scripts", "diffusers_run.py")


def _run(lib, mode, shared, tmp_path):
    """One run of the script under `lib` (in turn: PyTorch writes the weights the proxy run reads)."""
    prefix = ["-m", "torch_proxy"] if lib == "mindtorch_v2" else []
    r = subprocess.run([sys.executable, *prefix, SCRIPT, str(tmp_path), mode, str(shared)], capture_output=True,
                       text=True, env=_env(), cwd=tmp_path, timeout=TIMEOUT)
    lines = [line for line in r.stdout.splitlines() if line.startswith("RESULT ")]
    assert r.returncode == 0 and lines, f"diffusers_run.py under {lib} failed:\n{r.stderr[-4000:]}"
    result = json.loads(lines[-1][len("RESULT "):])
    assert result.pop("_library") == lib
    return result


def test_unet_vae_schedulers_and_training_step(tmp_path):
    needs("diffusers", "safetensors")
    shared = tmp_path / "shared"
    theirs = _run("torch", "save", shared, tmp_path)
    ours = _run("mindtorch_v2", "load", shared, tmp_path)
    # x0 at t=700 divides by sqrt(alpha_bar) ~ 0.2: absolute differences up to ~1e-5; the Euler latents
    # start at sigma ~ 14.6: up to ~1e-4 absolute (~1e-5 relative)
    euler = (ours["conditional"].pop("euler"), theirs["conditional"].pop("euler"))
    assert_close(*euler, rtol=1e-4, atol=5e-4)
    assert_close(ours, theirs, rtol=1e-4, atol=3e-5)
    assert theirs["unet"]["shape"] == [2, 3, 16, 16] and len(theirs["ddim"]["trajectory"]) == 5
    assert theirs["train"]["loss_after"] < theirs["train"]["loss"]
