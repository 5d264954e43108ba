"""Kernels that read several tensors check that they share a device: a meta tensor has no data,
so a meta operand beside CPU ones must raise, never reach the kernel (it crashed with a NULL
read). Each case runs in a child process so that a crash is a failure, not a dead test run.
Where PyTorch 2.13 raises the same text, the text is compared too."""
import subprocess
import sys

import pytest

try:
    import torch as real_torch
except ImportError:  # the oracle is optional
    real_torch = None

M = "device='meta'"
CASES = {
    "softmax_backward": f"torch._softmax_backward_data(torch.empty(3,4,{M}), torch.softmax(torch.randn(3,4),1), 1, torch.float32)",
    "batch_norm_running_mean": f"F.batch_norm(torch.randn(3,4), torch.empty(4,{M}), torch.ones(4))",
    "group_norm_weight": f"F.group_norm(torch.randn(3,4), 2, torch.empty(4,{M}))",
    "layer_norm_weight": f"F.layer_norm(torch.randn(3,4), (4,), torch.empty(4,{M}))",
    "nll_loss_target": f"F.nll_loss(torch.randn(3,4), torch.empty(3,dtype=torch.long,{M}))",
    "nll_loss_weight": f"F.nll_loss(torch.randn(3,4), torch.zeros(3,dtype=torch.long), torch.empty(4,{M}))",
    "conv2d_weight": f"F.conv2d(torch.randn(1,1,4,4), torch.empty(1,1,2,2,{M}))",
    "conv2d_bias": f"F.conv2d(torch.randn(1,1,4,4), torch.ones(1,1,2,2), torch.empty(1,{M}))",
    "conv_transpose2d_weight": f"F.conv_transpose2d(torch.randn(1,1,4,4), torch.empty(1,1,2,2,{M}))",
    "mm": f"torch.mm(torch.randn(3,4), torch.empty(4,2,{M}))",
    "bmm": f"torch.bmm(torch.randn(1,3,3), torch.empty(1,3,3,{M}))",
    "dot": f"torch.dot(torch.randn(3), torch.empty(3,{M}))",
    "linear_weight": f"F.linear(torch.randn(3,4), torch.empty(2,4,{M}))",
    "linalg_solve": f"torch.linalg.solve(torch.eye(3), torch.empty(3,{M}))",
    "lu_solve": f"torch.linalg.lu_solve(*torch.linalg.lu_factor(torch.eye(3)), torch.empty(3,2,{M}))",
    "bincount_weights": f"torch.bincount(torch.tensor([1,2]), torch.empty(2,{M}))",
    "searchsorted_sorter": f"torch.searchsorted(torch.tensor([2.,1.]), torch.tensor([1.5]), sorter=torch.empty(2,dtype=torch.long,{M}))",
    # torchvision's kernels over the C core, called below the dispatcher (which sends meta elsewhere)
    "vision_nms_scores": f"from mindtorch_v2._vision_ops import nms; nms(torch.rand(3,4), torch.empty(3,{M}), 0.5)",
    "vision_roi_align_rois": f"from mindtorch_v2._vision_ops import _roi, lib; _roi(lib.MT_ROI_ALIGN, torch.rand(1,1,4,4), torch.empty(1,5,{M}), 1., 2, 2)",
    "vision_roi_pool_backward_argmax": "from mindtorch_v2._vision_ops import _roi_backward, lib; _roi_backward(lib.MT_ROI_POOL, "
        f"torch.rand(1,1,2,2), torch.zeros(1,5), torch.empty(1,1,2,2,dtype=torch.int32,{M}), 1., 2, 2, 0, False, 1, 1, 4, 4)",
    "index_add_source": f"torch.zeros(3).index_add(0, torch.tensor([0]), torch.empty(1,{M}))",
    "index_fill_value": f"torch.zeros(3).index_fill(0, torch.tensor([0]), torch.tensor(1.,{M}))",
    "index_copy_source": f"torch.zeros(3).index_copy(0, torch.tensor([0]), torch.empty(1,{M}))",
    "backward_meta_grad": f"a=torch.randn(3,4,requires_grad=True); torch.softmax(a,1).backward(torch.empty(3,4,{M}))",
    "backward_meta_grad_conv": f"a=torch.randn(1,1,4,4,requires_grad=True); F.conv2d(a,torch.ones(1,1,2,2)).backward(torch.empty(1,1,3,3,{M}))",
    "bernoulli_p": f"torch.empty(3).bernoulli_(torch.empty(3,{M}))",  # the C fuzzer, session 22
}
# the cases where PyTorch's message is ours word for word
SAME_TEXT = {"index_add_source", "index_copy_source", "index_fill_value", "backward_meta_grad", "backward_meta_grad_conv",
             "bernoulli_p"}
ERROR_TYPE = {"bernoulli_p": "NotImplementedError"}  # PyTorch's type where it is not a RuntimeError

PROBE = """
import sys
import {mod} as torch
import {mod}.nn.functional as F
try:
    exec(sys.argv[1])
    print("OK")
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""


def run(mod, code):
    r = subprocess.run([sys.executable, "-c", PROBE.format(mod=mod), code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, f"{mod} crashed (rc {r.returncode}): {r.stderr[-2000:]}"
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_operand_beside_cpu_raises(name):
    got = run("mindtorch_v2", CASES[name])
    assert got.startswith(ERROR_TYPE.get(name, "RuntimeError") + ": "), got
    if name in SAME_TEXT and real_torch is not None:
        assert got == run("torch", CASES[name])
