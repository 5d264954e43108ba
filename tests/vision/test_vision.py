"""torchvision 0.28 and timm under the torch proxy against real PyTorch 2.13: each case of
scripts/vision_case.py runs under real torch (which draws and saves the weights and inputs) and then
under `python -m torch_proxy` on the same inputs; the results must agree. Skipped when PyTorch,
torchvision or timm is not installed.

torchvision and timm live in their own directory ($MINDTORCH_VISION_LIBS, default build/vision-libs,
where .ci/run installs them), never in site-packages: PyPI's torchvision is a CUDA build that breaks
`import transformers` under the CPU PyTorch the other differential tests use as their oracle."""
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tests", "vision", "scripts", "vision_case.py")
LIBS = os.environ.get("MINDTORCH_VISION_LIBS", os.path.join(ROOT, "build", "vision-libs"))


def _installed(name):
    return os.path.isdir(os.path.join(LIBS, name))


def _run(case, tmp, proxy):
    cmd = [sys.executable] + (["-m", "torch_proxy"] if proxy else []) + [SCRIPT, case, str(tmp)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, LIBS, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run(cmd, cwd=ROOT if proxy else str(tmp), env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{'ours' if proxy else 'torch'} failed:\n{r.stderr[-3000:]}"
    return np.load(os.path.join(tmp, f"{case}_{'ours' if proxy else 'torch'}.npz"))


CASES = {  # case: (packages, rtol, atol); empty tolerances mean bit-exact
    "ops": (("torchvision",), 1e-12, 1e-12),
    "roi_ops": (("torchvision",), 1e-12, 1e-12),
    "resnet18": (("torchvision",), 1e-5, 1e-5),
    "transforms": (("torchvision",), 1e-5, 1e-5),
    "resize": (("torchvision",), 1e-6, 1e-6),
    "timm_resnet18": (("torchvision", "timm"), 1e-5, 1e-5),
    "timm_vit": (("torchvision", "timm"), 1e-5, 1e-5),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_equals_pytorch(case, tmp_path):
    packages, rtol, atol = CASES[case]
    for p in packages:
        if not _installed(p):
            pytest.skip(f"{p} is not installed")
    ref = _run(case, tmp_path, proxy=False)
    ours = _run(case, tmp_path, proxy=True)
    assert sorted(ref.files) == sorted(ours.files)
    for k in ref.files:
        assert ours[k].dtype == ref[k].dtype, k
        assert ours[k].shape == ref[k].shape, k
        if ref[k].dtype.kind in "iub":  # nms indices, uint8 images: exact
            np.testing.assert_array_equal(ours[k], ref[k], err_msg=k)
        else:
            np.testing.assert_allclose(ours[k], ref[k], rtol=rtol, atol=atol, err_msg=k)


def test_gradcheck(tmp_path):
    """torch.autograd.gradcheck in float64 of roi_align, roi_pool, ps_roi_align, ps_roi_pool and
    deform_conv2d (with a mask, two geometries) under the proxy: our kernels' backwards against
    finite differences of our forwards."""
    if not _installed("torchvision"):
        pytest.skip("torchvision is not installed")
    ours = _run("gradcheck", tmp_path, proxy=True)
    assert len(ours.files) == 6
    for k in ours.files:
        assert ours[k].item() is True, k
