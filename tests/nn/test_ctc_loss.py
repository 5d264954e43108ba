"""ctc_loss (nn.functional and torch.ctc_loss) against live PyTorch: losses and gradients (through log_softmax,
as PyTorch's gradient assumes), every reduction, zero_infinity, padded and concatenated targets, list and
tensor lengths, empty targets and inputs, unbatched input, errors (type and text); gradcheck."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from mtdiff import same

torch = pytest.importorskip("torch")


def close(m, t, rtol=1e-12, atol=1e-12):
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    if t.dtype == torch.float32:
        rtol, atol = 1.3e-6, 1e-5
    np.testing.assert_allclose(np.array(m.tolist(), dtype=float).reshape(tuple(t.shape)), t.double().numpy(),
                               rtol=rtol, atol=atol, equal_nan=True)


def run(T, B, C, il, tl, concat=False, seed=0, dtype="float64", **kw):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T, B, C))
    tg = rng.integers(1, C, sum(tl)) if concat else rng.integers(1, C, (B, max(tl + [1])))
    out = []
    for lib in (mt, torch):
        x = lib.tensor(logits, dtype=getattr(lib, dtype), requires_grad=True)
        loss = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(tg), il, tl, **kw)
        (loss * lib.arange(1, loss.numel() + 1, dtype=loss.dtype).reshape(loss.shape)).sum().backward()
        out.append((loss.detach(), x.grad))
    close(out[0][0], out[1][0])
    close(out[0][1], out[1][1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients(reduction, dtype):
    run(6, 2, 5, [6, 5], [3, 2], reduction=reduction, dtype=dtype)
    run(30, 4, 12, [30, 20, 25, 9], [10, 7, 0, 4], reduction=reduction, dtype=dtype, seed=1)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments_and_empty_lengths(zero_infinity):
    # input_length 1 cannot emit 3 labels (inf), input_length 0 with an empty target (-0.0)
    run(5, 3, 4, [1, 0, 5], [3, 0, 2], reduction="none", zero_infinity=zero_infinity)
    run(5, 3, 4, [1, 0, 5], [3, 0, 2], reduction="sum", zero_infinity=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_every_target_empty(reduction):
    """All targets empty: the extended label sequence is a single blank (S = 1)."""
    run(6, 3, 5, [6, 4, 0], [0, 0, 0], concat=True, reduction=reduction)
    run(6, 2, 5, [6, 3], [0, 0], reduction=reduction, zero_infinity=True)


def test_concatenated_targets_tensor_lengths_blank():
    run(10, 3, 6, [10, 7, 3], [4, 0, 2], concat=True, reduction="none")
    run(8, 2, 4, [8, 8], [3, 3], blank=2, seed=3)
    for lib_lengths in (True,):
        rng = np.random.default_rng(4)
        logits, tg = rng.standard_normal((7, 2, 5)), rng.integers(1, 5, (2, 3))
        same(lambda: mt.nn.functional.ctc_loss(mt.tensor(logits).log_softmax(2), mt.tensor(tg).int(),
                                               mt.tensor([7, 6], dtype=mt.int32), mt.tensor([3, 2])),
             lambda: torch.nn.functional.ctc_loss(torch.tensor(logits).log_softmax(2), torch.tensor(tg).int(),
                                                  torch.tensor([7, 6], dtype=torch.int32), torch.tensor([3, 2])),
             cmp=close)


def test_unbatched_and_torch_ctc_loss_int_reduction():
    rng = np.random.default_rng(5)
    logits, tg = rng.standard_normal((6, 5)), rng.integers(1, 5, 3)
    for il, tl in (([6], [3]), (6, 3)):
        same(lambda: mt.nn.functional.ctc_loss(mt.tensor(logits).log_softmax(1), mt.tensor(tg), il, tl, reduction="none"),
             lambda: torch.nn.functional.ctc_loss(torch.tensor(logits).log_softmax(1), torch.tensor(tg), il, tl,
                                                  reduction="none"), cmp=close)
    lp3 = rng.standard_normal((6, 2, 5))
    for args in ((), (0,), (0, 0), (0, 1), (0, 2), (0, 3), (0, 1, True)):
        same(lambda: mt.ctc_loss(mt.tensor(lp3).log_softmax(2), mt.tensor([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2], *args),
             lambda: torch.ctc_loss(torch.tensor(lp3).log_softmax(2), torch.tensor([[1, 2, 2], [3, 1, 0]]), [6, 5],
                                    [3, 2], *args), cmp=close)


@pytest.mark.parametrize("case", [
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp.half(), tg, [6, 5], [3, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [7, 5], [3, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [-1, 5], [3, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 5], [4, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 5], [-1, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 5], [3]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6], [3, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 5], [3, 2], blank=5),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 5], [3, 2], blank=-1),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, lib.tensor([1, 2, 2, 3]), [6, 5], [3, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg[None], [6, 5], [3, 2]),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, [6, 5], [3, 2], reduction="foo"),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg, lib.tensor([6.0, 5]), lib.tensor([3, 2])),
    lambda lib, lp, tg: lib.nn.functional.ctc_loss(lp, tg.float(), [6, 5], [3, 2]),
])
def test_errors(case):
    rng = np.random.default_rng(6)
    lp = rng.standard_normal((6, 2, 5))
    same(lambda: case(mt, mt.tensor(lp).log_softmax(2), mt.tensor([[1, 2, 2], [3, 1, 0]])),
         lambda: case(torch, torch.tensor(lp).log_softmax(2), torch.tensor([[1, 2, 2], [3, 1, 0]])), cmp=close)


def test_gradcheck():
    rng = np.random.default_rng(7)
    x = mt.tensor(rng.standard_normal((8, 2, 4)), requires_grad=True)
    tg = mt.tensor([[1, 2, 2], [3, 1, 1]])
    for reduction in ("mean", "sum", "none"):
        assert mt.autograd.gradcheck(
            lambda a: mt.nn.functional.ctc_loss(a.log_softmax(2), tg, [8, 6], [3, 2], reduction=reduction), (x,))
