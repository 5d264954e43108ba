"""Training libraries beyond Hugging Face, unpatched, on mindtorch_v2 against real PyTorch: Lightning's
Trainer.fit (Adam and LBFGS), torchmetrics and einops. Each script in scripts/ runs under the proxy and
under PyTorch 2.13 (tests/hf/test_hf_libraries.py's harness) and the printed results must agree.
A library that is not installed skips its test (.ci/run installs them, pinned, with --no-deps)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hf"))
from test_hf_libraries import compare, needs, run_both  # noqa: E402

SCRIPTS = os.path.join(HERE, "scripts")


def test_lightning_trainer_fit_adam_and_lbfgs_step_losses(tmp_path):
    needs("lightning")
    theirs = compare(run_both(os.path.join(SCRIPTS, "lightning_fit.py"), tmp_path), rtol=1e-5, atol=1e-6)
    for opt in ("adam", "lbfgs"):
        assert theirs[opt]["global_step"] == 8 and theirs[opt]["flops"] > 0, opt
    assert len(theirs["adam"]["losses"]) == 8 and len(theirs["lbfgs"]["losses"]) > 8  # LBFGS: 1 per closure call


def test_torchmetrics_and_einops(tmp_path):
    needs("torchmetrics", "einops")
    theirs = compare(run_both(os.path.join(SCRIPTS, "metrics_einops.py"), tmp_path), rtol=1e-5, atol=1e-6)
    assert sorted(theirs) == ["einops", "torchmetrics"]
