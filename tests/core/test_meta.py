"""The meta device against PyTorch's: every op gives the same shape, dtype, strides and device
with no data; default-device factories (`with device("meta")`, set_default_device)."""
import math

import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def M(L, *shape, dtype="float32"):
    return L.empty(*shape, dtype=getattr(L, dtype), device="meta")


def same_meta(m, t):
    if isinstance(t, (tuple, list)):
        assert len(m) == len(t)
        for a, b in zip(m, t):
            same_meta(a, b)
        return
    assert m.device.type == t.device.type == "meta"
    assert m.is_meta
    assert str(m.dtype) == str(t.dtype), (m.dtype, t.dtype)
    assert tuple(m.shape) == tuple(t.shape), (tuple(m.shape), tuple(t.shape))
    assert m.stride() == t.stride(), (m.stride(), t.stride())


OPS = {
    # elementwise, views, indexing, copies
    "add": lambda L: M(L, 3, 4) + M(L, 4), "mul_scalar": lambda L: M(L, 3, 4) * 2, "exp_t": lambda L: M(L, 3, 4).t().exp(),
    "where": lambda L: L.where(M(L, 3, 1, dtype="bool"), M(L, 4), 0.0), "to_f64": lambda L: M(L, 2, 3).double(),
    "view": lambda L: M(L, 3, 4).view(4, 3), "permute": lambda L: M(L, 2, 3, 4).permute(2, 0, 1),
    "reshape_copy": lambda L: M(L, 3, 4).t().reshape(12), "expand": lambda L: M(L, 1, 4).expand(3, 4),
    "getitem": lambda L: M(L, 3, 4)[1:, ::2], "adv_index": lambda L: M(L, 5, 4)[L.zeros(3, dtype=L.int64, device="meta")],
    "clone_t": lambda L: M(L, 3, 4).t().clone(), "contiguous": lambda L: M(L, 3, 4).t().contiguous(),
    # reductions
    "sum": lambda L: M(L, 3, 4).sum(1), "mean_keep": lambda L: M(L, 3, 4).mean((0, 1), keepdim=True),
    "sum_int": lambda L: M(L, 3, 4, dtype="int32").sum(), "amax": lambda L: M(L, 3, 4).amax(0),
    "max_dim": lambda L: tuple(M(L, 3, 4).max(1)), "argmax": lambda L: M(L, 3, 4).argmax(),
    "var": lambda L: M(L, 3, 4).var(1), "std_mean": lambda L: L.std_mean(M(L, 3, 4), 0),
    "norm": lambda L: L.linalg.vector_norm(M(L, 3, 4), math.inf, 1), "norm_dtype": lambda L: M(L, 3, 4).norm(dtype=L.float64),
    "matrix_norm": lambda L: L.linalg.matrix_norm(M(L, 2, 3, 4), 1), "logsumexp": lambda L: L.logsumexp(M(L, 3, 4), 1),
    "cumsum": lambda L: M(L, 3, 4).t().cumsum(0), "cumsum_int": lambda L: M(L, 3, 4, dtype="int8").cumsum(1),
    "cumprod_dtype": lambda L: M(L, 3, 4).cumprod(1, dtype=L.float64), "logcumsumexp": lambda L: L.logcumsumexp(M(L, 3), 0),
    "count_nonzero": lambda L: L.count_nonzero(M(L, 3, 4), 0), "nansum": lambda L: L.nansum(M(L, 3, 4)),
    "median": lambda L: tuple(L.median(M(L, 3, 4), 1, keepdim=True)), "median_all": lambda L: L.median(M(L, 3, 4)),
    "mode": lambda L: tuple(L.mode(M(L, 3, 4))), "quantile": lambda L: L.quantile(M(L, 3, 4), 0.5, dim=1),
    "quantile_q": lambda L: L.quantile(M(L, 3, 4), M(L, 2), dim=0, keepdim=True),
    "aminmax": lambda L: tuple(L.aminmax(M(L, 3, 4), dim=0)), "prod": lambda L: M(L, 3, 4).prod(1),
    "all": lambda L: M(L, 3, 4).all(1), "dist": lambda L: L.dist(M(L, 3, 4), M(L, 4)),
    # linear algebra
    "mm": lambda L: M(L, 3, 4) @ M(L, 4, 5), "matmul_b": lambda L: M(L, 2, 3, 4) @ M(L, 4, 5),
    "bmm": lambda L: L.bmm(M(L, 2, 3, 4), M(L, 2, 4, 5)), "addmm": lambda L: L.addmm(M(L, 5), M(L, 3, 4), M(L, 4, 5)),
    "addmv": lambda L: L.addmv(M(L, 3), M(L, 3, 4), M(L, 4)), "addr": lambda L: L.addr(M(L, 3, 4), M(L, 3), M(L, 4)),
    "addbmm": lambda L: L.addbmm(M(L, 3, 5), M(L, 2, 3, 4), M(L, 2, 4, 5)), "vdot": lambda L: L.vdot(M(L, 3), M(L, 3)),
    "outer": lambda L: L.outer(M(L, 3), M(L, 4)), "einsum": lambda L: L.einsum("bij,bjk->bik", M(L, 2, 3, 4), M(L, 2, 4, 5)),
    "einsum_diag": lambda L: L.einsum("ii->i", M(L, 3, 3)), "tensordot": lambda L: L.tensordot(M(L, 3, 4, 5), M(L, 4, 5, 2)),
    "kron": lambda L: L.kron(M(L, 2, 3), M(L, 4)), "cross": lambda L: L.linalg.cross(M(L, 4, 3), M(L, 4, 3)),
    "multi_dot": lambda L: L.linalg.multi_dot([M(L, 3, 4), M(L, 4, 5), M(L, 5)]),
    # creation
    "zeros": lambda L: L.zeros(2, 3, device="meta"), "full": lambda L: L.full((2, 3), 7, device="meta"),
    "arange": lambda L: L.arange(10, device="meta"), "eye": lambda L: L.eye(3, 4, device="meta"),
    "empty_strided": lambda L: L.empty_strided((2, 3), (1, 2), device="meta"), "randn": lambda L: L.randn(3, device="meta"),
    "ones_like": lambda L: L.ones_like(M(L, 3, 4).t()), "tensor_to": lambda L: L.tensor([1.0, 2.0]).to("meta"),
    "tensor_dev": lambda L: L.tensor([[1, 2]], device="meta"), "linspace": lambda L: L.linspace(0, 1, 5, device="meta"),
    # in place
    "add_": lambda L: M(L, 3, 4).add_(1), "fill_": lambda L: M(L, 3, 4).fill_(2), "cumsum_": lambda L: M(L, 3).cumsum_(0),
    "copy_from_cpu": lambda L: M(L, 3).copy_(L.ones(3)), "setitem": lambda L: _setitem(M(L, 3, 4)),
}


def _setitem(x):
    x[0] = 1.0
    x[:, 1] = x[:, 2]
    return x


@pytest.mark.parametrize("name", list(OPS))
def test_op_on_meta(name):
    fn = OPS[name]
    try:
        expected = fn(torch)
    except Exception as e:  # noqa: BLE001 - torch's error is the spec
        with pytest.raises(type(e)):
            fn(mt)
        return
    same_meta(fn(mt), expected)


def test_backward_on_meta():
    x = mt.empty(3, 4, device="meta", requires_grad=True)
    (x.var(1).sum() + x.norm() + x.cumsum(0).sum() + (x @ x.t()).sum() + x.prod(1).sum() + x.cumprod(1).sum()
     + x.median()).backward()
    assert x.grad.is_meta and tuple(x.grad.shape) == (3, 4)


def test_no_data_on_meta():
    x = mt.empty(3, device="meta")
    for fn, exc in ((lambda: x.tolist(), NotImplementedError), (lambda: x.sum().item(), NotImplementedError),
                    (lambda: x.to("cpu"), NotImplementedError)):
        with pytest.raises(exc):
            fn()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + mt.ones(3)


def test_fill_meta_from_a_tensor():
    """fill_ of a meta tensor with a 0-dim tensor (CPU or meta) reads no value, as PyTorch's (a model's
    init under device("meta") does `param.data.fill_(torch.log(torch.tensor(1.0)))`)"""
    for L in (mt, torch):
        x = L.empty(2, 3, device="meta")
        for value in (L.tensor(1.5), L.tensor(2.0, device="meta"), L.tensor(3, dtype=L.int64)):
            assert x.fill_(value) is x and x.is_meta and tuple(x.shape) == (2, 3)
        with pytest.raises(RuntimeError, match="^fill_ only supports 0-dimension value tensor but got tensor with 1 "):
            x.fill_(L.ones(2))


def test_samplers_on_meta():
    """PyTorch has meta kernels for poisson and _standard_gamma only (the C fuzzer found them reading
    the meta tensor's missing data)"""
    from mtdiff import same
    for name, n in (("poisson", 1), ("_standard_gamma", 1), ("_sample_dirichlet", 1), ("binomial", 2),
                    ("_standard_gamma_grad", 2), ("_dirichlet_grad", 3)):
        same(lambda: getattr(mt, name)(*[M(mt, 3)] * n), lambda: getattr(torch, name)(*[M(torch, 3)] * n),
             cmp=same_meta)


CROSS = {
    "out_cpu": lambda L: L.neg(M(L, 3), out=L.zeros(3)), "out_cpu_binary": lambda L: L.add(M(L, 3), 1, out=L.zeros(3)),
    "out_cpu_0dim": lambda L: L.neg(M(L), out=L.zeros(())), "out_meta": lambda L: L.neg(L.ones(3), out=M(L, 3)),
    "cpu_plus_0dim_meta": lambda L: L.ones(3) + M(L), "meta_plus_0dim_cpu": lambda L: M(L, 3) + L.tensor(1.0),
    "copy_0dim_meta": lambda L: L.zeros(()).copy_(M(L)),
}


@pytest.mark.parametrize("name", CROSS)
def test_elementwise_across_meta_and_cpu(name):
    """out= on the other device, a 0-dim meta operand beside CPU ones (the C fuzzer's finding: computed
    into the CPU tensor from the meta one's missing data)"""
    from mtdiff import same
    def where(m, t):
        assert (m.device.type, tuple(m.shape)) == (t.device.type, tuple(t.shape))
    same(lambda: CROSS[name](mt), lambda: CROSS[name](torch), cmp=where)


def test_default_device():
    assert mt.get_default_device() == mt.device("cpu")
    with mt.device("meta") as d:
        assert d == mt.device("meta") and mt.get_default_device() == d
        for t in (mt.empty(2), mt.zeros(2, 3), mt.ones(1), mt.full((2,), 1.0), mt.arange(3), mt.eye(2),
                  mt.tensor([1, 2]), mt.rand(2), mt.randn(2), mt.randint(0, 5, (2,)), mt.linspace(0, 1, 3)):
            assert t.is_meta, t
        assert not mt.ones_like(mt.ones(2, device="cpu")).is_meta  # *_like keep the input's device
        with mt.device("cpu"):
            assert not mt.zeros(1).is_meta
        assert mt.zeros(1).is_meta
    assert not mt.zeros(1).is_meta
    mt.set_default_device("meta")
    try:
        assert mt.zeros(1).is_meta and mt.get_default_device().type == "meta"
    finally:
        mt.set_default_device(None)
    assert mt.get_default_device().type == "cpu" and not mt.zeros(1).is_meta


def test_module_built_on_meta():
    import threading
    result = {}

    def other_thread():  # the default device is per thread
        result["dev"] = mt.zeros(1).device.type
    with mt.device("meta"):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        w = mt.empty(4, 3, requires_grad=True)
    assert result["dev"] == "cpu" and w.is_meta and w.requires_grad
