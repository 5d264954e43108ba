"""rms/batch/instance/group/local-response norm, glu, one_hot, cosine_similarity, pairwise_distance,
pixel_(un)shuffle, xlogy, equal, broadcast_tensors/shapes against live PyTorch: values in every float
dtype, non-contiguous and empty inputs, gradients (and gradcheck in float64), running statistics,
error types and texts."""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

from fdiff import Arg, F, close, diff, errors_match, rnd  # noqa: E402

FLOATS = ["float64", "float32", "bfloat16", "float16"]
# grad_fn differs where PyTorch runs a native kernel (NativeBatchNormBackward0, GluBackward0, ...)
NATIVE = dict(names=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("nc", [False, True])
def test_rms_norm(dtype, nc):
    x, w = Arg(rnd(2, 3, 4), dtype, grad=True, noncontig=nc), Arg(rnd(4, seed=1), dtype, grad=True)
    diff(lambda L, x, w: F(L).rms_norm(x, (4,), w), x, w, dtype=dtype)
    diff(lambda L, x: F(L).rms_norm(x, [3, 4], eps=1e-3), x, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (0, 3, 4)])
def test_batch_norm_training_updates_running_stats(dtype, shape):
    x = Arg(rnd(*shape), dtype, grad=True, noncontig=len(shape) == 3)
    w, b = Arg(rnd(3, seed=1), dtype, grad=True), Arg(rnd(3, seed=2), dtype, grad=True)
    stats = {L: (L.zeros(3, dtype=getattr(L, dtype)), L.ones(3, dtype=getattr(L, dtype))) for L in (mt, torch)}
    if shape[0] == 0:  # PyTorch returns an empty result and leaves the statistics
        return diff(lambda L, x: F(L).batch_norm(x, *stats[L], training=True), x, dtype=dtype, **NATIVE)
    for _ in range(3):
        diff(lambda L, x, w, b: F(L).batch_norm(x, *stats[L], w, b, training=True, momentum=0.3), x, w, b,
             dtype=dtype, **NATIVE)
    for m, t in zip(stats[mt], stats[torch]):
        close(m, t, dtype)
    diff(lambda L, x, w, b: F(L).batch_norm(x, *stats[L], w, b, training=False), x, w, b, dtype=dtype, **NATIVE)
    diff(lambda L, x: F(L).batch_norm(x, None, None, training=True), x, dtype=dtype, **NATIVE)


@pytest.mark.parametrize("dtype", FLOATS)
def test_instance_norm(dtype):
    x = Arg(rnd(2, 3, 5), dtype, grad=True, noncontig=True)
    w, b = Arg(rnd(3, seed=1), dtype, grad=True), Arg(rnd(3, seed=2), dtype, grad=True)
    stats = {L: (L.zeros(3, dtype=getattr(L, dtype)), L.ones(3, dtype=getattr(L, dtype))) for L in (mt, torch)}
    for _ in range(2):
        diff(lambda L, x, w, b: F(L).instance_norm(x, *stats[L], w, b, momentum=0.2), x, w, b, dtype=dtype,
             **NATIVE)
    for m, t in zip(stats[mt], stats[torch]):
        close(m, t, dtype)
    diff(lambda L, x: F(L).instance_norm(x), x, dtype=dtype, **NATIVE)
    diff(lambda L, x: F(L).instance_norm(x, *stats[L], use_input_stats=False), x, dtype=dtype, **NATIVE)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((2, 4, 3, 3), 2), ((3, 8), 1), ((0, 4, 2), 2)])
def test_group_norm(dtype, shape, groups):
    x = Arg(rnd(*shape), dtype, grad=True, noncontig=len(shape) > 2)
    c = shape[1]
    w, b = Arg(rnd(c, seed=1), dtype, grad=True), Arg(rnd(c, seed=2), dtype, grad=True)
    diff(lambda L, x, w, b: F(L).group_norm(x, groups, w, b, eps=1e-4), x, w, b, dtype=dtype, **NATIVE)
    diff(lambda L, x: F(L).group_norm(x, groups), x, dtype=dtype, **NATIVE)


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 3), (1, 4, 2, 2, 2)])
def test_local_response_norm(shape):
    x = Arg(rnd(*shape), grad=True)
    for size in (1, 2, 3):
        diff(lambda L, x: F(L).local_response_norm(x, size, alpha=0.1, beta=0.6, k=2.0), x, **NATIVE)


@pytest.mark.parametrize("dtype", FLOATS)
def test_glu(dtype):
    """GluBackward0 (PyTorch's glu_backward: sigmoid(b) * grad, and (1 - s) * s * a * grad fused); float16 and
    bfloat16 bit for bit (forward and gradient in float, rounded once), float64 too; float32 within the
    sigmoid's last ulp"""
    x = Arg(rnd(4, 6), dtype, grad=True, noncontig=True)
    diff(lambda L, x: F(L).glu(x), x, dtype=dtype)
    diff(lambda L, x: F(L).glu(x, 0), x, dtype=dtype)
    if dtype != "float32":
        a = rnd(37, 140, seed=3) * 3
        res = []
        for L in (mt, torch):
            t = L.tensor(a, dtype=getattr(L, dtype)).requires_grad_()
            y = F(L).glu(t)
            y.backward(L.tensor(rnd(37, 70, seed=4), dtype=getattr(L, dtype)))
            res.append([np.array(v.detach().float().tolist()) for v in (y, t.grad)])
        for u, v in zip(*res):
            np.testing.assert_array_equal(u, v)
    if dtype == "float64":
        t = mt.tensor(rnd(3, 4, seed=5), dtype=mt.float64).requires_grad_()
        assert mt.autograd.gradcheck(lambda t: mt.nn.functional.glu(t, 1), (t,))
        assert mt.autograd.gradgradcheck(lambda t: mt.nn.functional.glu(t, 1), (t,))


def test_one_hot():
    i = Arg(np.array([[0, 3], [2, 1]]))
    diff(lambda L, i: F(L).one_hot(i), i)
    diff(lambda L, i: F(L).one_hot(i, 6), i)
    diff(lambda L, i: F(L).one_hot(i[:0], 3), i)
    diff(lambda L, i: F(L).one_hot(i[0, 1]), i)


@pytest.mark.parametrize("dtype", FLOATS)
def test_distances(dtype):
    a, b = Arg(rnd(3, 4), dtype, grad=True, noncontig=True), Arg(rnd(4, seed=1), dtype, grad=True)
    diff(lambda L, a, b: F(L).cosine_similarity(a, b), a, b, dtype=dtype)
    diff(lambda L, a, b: F(L).cosine_similarity(a, b, dim=-1, eps=0.5), a, b, dtype=dtype)
    diff(lambda L, a, b: F(L).cosine_similarity(a * 0, b), a, b, dtype=dtype)  # eps-clamped zero norm
    # PyTorch's Tensor.norm(p, dim) node is NormBackward1; ours records LinalgVectorNormBackward0
    for p in (2.0, 1.0, 3.0, float("inf")):
        diff(lambda L, a, b: F(L).pairwise_distance(a, b, p=p), a, b, dtype=dtype, **NATIVE)
    diff(lambda L, a, b: F(L).pairwise_distance(a, b, keepdim=True), a, b, dtype=dtype, **NATIVE)
    diff(lambda L, a, b: L.cosine_similarity(a, b, 1), a, b, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool"])
def test_pixel_shuffle(dtype):
    base = np.arange(2 * 8 * 2 * 3).reshape(2, 8, 2, 3) % 5
    x = Arg(base if dtype in ("int64", "bool") else rnd(2, 8, 2, 3), dtype, grad=dtype in FLOATS, noncontig=True)
    diff(lambda L, x: F(L).pixel_shuffle(x, 2), x, dtype=dtype, **NATIVE)
    diff(lambda L, x: L.pixel_unshuffle(F(L).pixel_shuffle(x, 2), 2), x, dtype=dtype, **NATIVE)
    diff(lambda L, x: F(L).pixel_shuffle(x.reshape(2, 2, 4, 2, 3), 2), x, dtype=dtype, **NATIVE)
    diff(lambda L, x: F(L).pixel_unshuffle(x[0], 1), x, dtype=dtype, **NATIVE)


@pytest.mark.parametrize("dtype", FLOATS)
def test_xlogy(dtype):
    a = Arg(np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.5]]), dtype, grad=True, noncontig=True)
    b = Arg(np.array([0.5, 2.0, 3.0]), dtype, grad=True)
    diff(lambda L, a, b: L.xlogy(a, b), a, b, dtype=dtype)
    diff(lambda L, a: L.xlogy(a, 2.5), a, dtype=dtype)
    diff(lambda L, b: L.xlogy(3, b), b, dtype=dtype)
    diff(lambda L, a, b: L.special.xlogy(a, b), a, b, dtype=dtype)
    diff(lambda L, a, b: a.xlogy(b), a, b, dtype=dtype)
    diff(lambda L, a: a.detach().clone().xlogy_(2.0), a, dtype=dtype)


def test_xlogy_special_values_and_promotion():
    x = Arg(np.array([0.0, 0.0, 1.0, 2.0]))
    y = Arg(np.array([np.nan, 0.0, 0.0, np.inf]))
    diff(lambda L, x, y: L.xlogy(x, y), x, y)
    i = Arg(np.array([1, 2]))
    diff(lambda L, i: L.xlogy(i, i), i, dtype="float32")
    diff(lambda L, i: L.xlogy(i > 1, 3), i, dtype="float32")


def test_gradcheck_float64():
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return mt.tensor(rng.standard_normal(shape).tolist(), dtype=mt.float64).requires_grad_()

    x, w, b = leaf(3, 4, 2), leaf(4), leaf(4)
    F_ = mt.nn.functional
    cases = [
        (lambda x, w, b: F_.batch_norm(x, None, None, w, b, training=True), (x, w, b)),
        (lambda x, w, b: F_.group_norm(x, 2, w, b), (x, w, b)),
        (lambda x, w, b: F_.instance_norm(x, weight=w, bias=b), (x, w, b)),
        (lambda x, w: F_.rms_norm(x.transpose(1, 2), (4,), w), (x, w)),
        (lambda x: F_.glu(x, 1), (x,)),
        (lambda x, w: F_.cosine_similarity(x.transpose(1, 2), w, dim=-1), (x, w)),
        (lambda x, w: F_.pairwise_distance(x.transpose(1, 2), w), (x, w)),
        (lambda x: F_.local_response_norm(x, 3), (x,)),
        (lambda x, w: mt.xlogy(x.transpose(1, 2), w.abs() + 0.5), (x, w)),
    ]
    for fn, args in cases:
        assert mt.autograd.gradcheck(fn, args)
        assert mt.autograd.gradgradcheck(fn, args)


def test_errors():
    x, x3 = Arg(rnd(2, 3, 4)), Arg(rnd(1, 3))
    i = Arg(np.array([1, 4]))
    cases = [
        lambda L, x: F(L).rms_norm(x, (5,)),
        lambda L, x: F(L).rms_norm(x, (4,), L.ones(3, dtype=L.float64)),
        lambda L, x: F(L).rms_norm(x, ()),
        lambda L, x: F(L).rms_norm(x, 4),
        lambda L, x: F(L).batch_norm(x, None, None, training=False),
        lambda L, x: F(L).batch_norm(x, None, None, L.ones(2, dtype=L.float64), training=True),
        lambda L, x: F(L).instance_norm(x[:, :, :1]),
        lambda L, x: F(L).group_norm(x, 2),
        lambda L, x: F(L).group_norm(x, 3, L.ones(2, dtype=L.float64)),
        lambda L, x: F(L).glu(x[0, 0, 0]),
        lambda L, x: F(L).glu(x, 1),
        lambda L, x: F(L).glu(x, 3),
        lambda L, x: F(L).local_response_norm(x[0], 2),
        lambda L, x: F(L).one_hot(x),
        lambda L, x: F(L).cosine_similarity(x, x[:, :2]),
        lambda L, x: F(L).pixel_shuffle(x, 2),
        lambda L, x: F(L).pixel_shuffle(x[0], 2),
        lambda L, x: F(L).pixel_shuffle(x, 0),
        lambda L, x: F(L).pixel_shuffle(x, 2 ** 32),  # its square past int64: PyTorch's ValueError
        lambda L, x: F(L).pixel_shuffle(x, 2 ** 63 - 1),
        lambda L, x: F(L).pixel_shuffle(x, 3037000499),  # the largest whose square fits
        lambda L, x: F(L).pixel_unshuffle(x, 0),
        lambda L, x: F(L).pixel_unshuffle(x, 2),
        lambda L, x: F(L).pixel_unshuffle(x[:, :, :3], 2),
        lambda L, x: L.xlogy(x, x.long(), out=L.empty(2, 3, 4, dtype=L.int64)),
        lambda L, x: L.broadcast_tensors(x, x[:, :2]),
        lambda L, x: L.broadcast_shapes((2,), (3,)),
        lambda L, x: L.broadcast_shapes((2, -1)),
        lambda L, x: L.broadcast_shapes(2.5),
        lambda L, x: L.equal(x, 1),
        lambda L, x: L.equal([1], x),
    ]
    for fn in cases:
        errors_match(fn, x)
    errors_match(lambda L, x: F(L).batch_norm(x, None, None, training=True), x3)
    errors_match(lambda L, i: F(L).one_hot(i, 3), i)
    errors_match(lambda L, i: F(L).one_hot(-i), i)
    errors_match(lambda L, i: F(L).one_hot(i[:0]), i)


def test_equal_and_broadcast():
    for a, b in [([1.0, 2.0], [1.0, 2.0]), ([1.0, 2.0], [1.0, 3.0]), ([1.0], [1.0, 1.0]), ([float("nan")], [float("nan")]),
                 ([], [])]:
        for dt in ("float32", "int64"):
            assert mt.equal(mt.tensor(a).to(getattr(mt, dt)), mt.tensor(b)) == \
                torch.equal(torch.tensor(a).to(getattr(torch, dt)), torch.tensor(b))
    for shapes in [((2, 1), (3,)), (3, (2, 1)), (), ((0, 1), (4,)), ([1, 2], (3, 1, 1))]:
        assert tuple(mt.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    x = Arg(rnd(2, 1), grad=True)
    y = Arg(rnd(3, seed=1), grad=True)
    diff(lambda L, x, y: L.broadcast_tensors(x, y, x)[2] * L.broadcast_tensors(x, y)[1], x, y)
    assert mt.broadcast_tensors() == ()
