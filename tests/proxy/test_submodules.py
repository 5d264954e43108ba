"""The torch submodules transformers touches: each resolves through the proxy to a real
mindtorch_v2 module and answers as PyTorch 2.13 (CPU build) does (live comparisons where torch
is importable)."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

SUBMODULES = ["cuda", "cuda.amp", "backends", "backends.cuda", "backends.cudnn", "backends.mps", "backends.mkldnn",
              "backends.mkl", "backends.openmp", "backends.opt_einsum", "backends.cpu", "accelerator", "xpu", "mps",
              "jit", "fx", "fx._symbolic_trace", "fx.proxy", "fx._compatibility", "fx.node", "fx._pytree",
              "fx.experimental.proxy_tensor", "_dynamo", "_dynamo._trace_wrapped_higher_order_op", "_dynamo.exc", "_dynamo.eval_frame",
              "_dynamo.config", "compiler", "utils", "utils._pytree", "utils.checkpoint", "distributions",
              "distributions.constraints", "distributions.multivariate_normal", "distributions.normal",
              "distributions.categorical", "nn.attention", "nn.attention.flex_attention", "distributed",
              "distributed.tensor", "utils._python_dispatch", "amp",
              "amp.autocast_mode", "version", "overrides", "types", "library", "export", "export._trace", "onnx",
              "hub", "func"]


def run(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_every_submodule_resolves_through_the_proxy():
    out = run(f"""
        import importlib, importlib.util, torch_proxy
        torch_proxy.install()
        for name in {SUBMODULES!r}:
            m = importlib.import_module("torch." + name)
            assert m is importlib.import_module("mindtorch_v2." + name), name
            assert importlib.util.find_spec("torch." + name) is not None, name
        import torch
        from torch.fx import Graph, GraphModule, Node, Proxy, Tracer, wrap, symbolic_trace
        from torch.fx._symbolic_trace import is_fx_tracing
        from torch.fx.proxy import ParameterProxy
        from torch.fx._compatibility import compatibility
        from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention
        from torch.nn.attention.flex_attention import _DEFAULT_SPARSE_BLOCK_SIZE
        from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
        from torch._dynamo import allow_in_graph
        from torch.utils.checkpoint import checkpoint
        from torch.distributions import constraints
        from torch.cuda.amp import autocast, GradScaler
        assert torch.version.cuda is None and torch.version.hip is None
        assert torch.version.__version__ == torch.__version__ == "2.13.0"
        assert torch.compile is torch._compile.compile and callable(torch.vmap) and torch.func.vmap is torch.vmap
        print("ok")
    """)
    assert "ok" in out


QUERIES = """cuda.is_available() cuda.device_count() cuda.is_initialized() cuda.is_bf16_supported()
cuda.memory_allocated() cuda.max_memory_allocated() cuda.memory_reserved() cuda.empty_cache() cuda.manual_seed(1)
cuda.manual_seed_all(1) cuda.get_rng_state_all() backends.mps.is_available() backends.mps.is_built()
backends.cuda.matmul.allow_tf32 backends.cuda.is_built() backends.cuda.flash_sdp_enabled()
backends.cuda.math_sdp_enabled() backends.cudnn.is_available() backends.cudnn.enabled backends.cudnn.allow_tf32
backends.cudnn.benchmark backends.cudnn.deterministic backends.cudnn.version() accelerator.is_available()
accelerator.current_accelerator() accelerator.device_count() distributed.is_initialized() jit.is_scripting()
jit.is_tracing() compiler.is_compiling() compiler.is_exporting() _dynamo.is_compiling() is_autocast_enabled()
is_autocast_enabled('cpu') get_autocast_dtype('cpu') get_autocast_dtype('cuda') is_autocast_cache_enabled()
onnx.is_in_onnx_export() overrides.has_torch_function((1,)) xpu.is_available() mps.is_available()
version.cuda version.hip fx._symbolic_trace.is_fx_tracing() backends.fp32_precision""".split()

RAISING = """cuda.current_device() cuda.synchronize() cuda.get_device_capability() cuda.get_device_properties(0)
cuda.get_device_name() cuda.set_device('cpu') cuda.Stream() cuda.default_stream() cuda.current_stream()
backends.mps.is_macos_or_newer(14,0)""".split()


def _eval(lib, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = eval("lib." + expr, {"lib": lib})
    return str(v) if v is not None and not isinstance(v, (bool, int, list, tuple)) else v


def test_uncompiled_module_is_not_an_optimized_module():
    """accelerate's is_compiled_module asks this of every model transformers saves (with accelerate installed)."""
    for lib in (mt, torch):
        assert not isinstance(lib.nn.Linear(2, 2), lib._dynamo.eval_frame.OptimizedModule)


@pytest.mark.parametrize("expr", QUERIES)
def test_queries_answer_like_pytorch(expr):
    assert _eval(mt, expr) == _eval(torch, expr)


@pytest.mark.parametrize("expr", RAISING)
def test_device_calls_raise_like_pytorch(expr):
    with pytest.raises(Exception) as e1:
        _eval(mt, expr)
    with pytest.raises(Exception) as e2:
        _eval(torch, expr)
    assert type(e1.value) is type(e2.value) and str(e1.value) == str(e2.value)


def test_distributed_needs_init():
    # available (as PyTorch's Linux builds); process-group queries raise PyTorch's error until init
    assert mt.distributed.is_available() is True and not mt.distributed.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        mt.distributed.get_rank()


@pytest.mark.parametrize("lib", [mt, torch], ids=["mindtorch_v2", "torch"])
def test_traceable_wrapper_subclass_checks(lib):
    # huggingface_hub and safetensors ask these of every tensor they save; a missing module made
    # each ask a failed import (~0.2 ms), which was a third of transformers' BERT test file
    from importlib import import_module
    pd = import_module(lib.__name__ + ".utils._python_dispatch")

    class Flattens(lib.nn.Parameter):
        def __tensor_flatten__(self):
            return [], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
            return None

    plain, param, flat = lib.ones(2), lib.nn.Parameter(lib.ones(2)), Flattens(lib.ones(2))
    assert [pd.is_traceable_wrapper_subclass(x) for x in (plain, param, flat, 1)] == [False, False, True, False]
    assert [pd.is_traceable_wrapper_subclass_type(t) for t in (lib.Tensor, lib.nn.Parameter, Flattens)] == \
        [False, False, True]


def test_dtensor_type_exists_and_no_tensor_is_one():
    from mindtorch_v2.distributed.tensor import DTensor, distribute_tensor
    assert issubclass(DTensor, mt.Tensor) and not isinstance(mt.ones(2), DTensor)
    assert not isinstance(mt.nn.Parameter(mt.ones(2)), DTensor)
    with pytest.raises(NotImplementedError, match="torch.distributed.tensor.DTensor"):
        DTensor()
    with pytest.raises(NotImplementedError, match="torch.distributed.tensor.distribute_tensor"):
        distribute_tensor(mt.ones(2))


def test_backend_flags_settable():
    m = mt.backends.cuda.matmul
    prev = m.allow_tf32
    m.allow_tf32 = True
    assert m.allow_tf32 is True
    m.allow_tf32 = prev
    with pytest.raises(AttributeError, match="Unknown attribute nope"):
        m.nope = 1
    mt.backends.cudnn.allow_tf32 = False
    assert mt.backends.cudnn.allow_tf32 is False
    mt.backends.cudnn.allow_tf32 = True
    mt.backends.cuda.enable_flash_sdp(False)
    assert not mt.backends.cuda.flash_sdp_enabled()
    mt.backends.cuda.enable_flash_sdp(True)


def test_sdpa_kernel_and_backend_enum():
    from mindtorch_v2.nn.attention import SDPBackend, _cur_sdpa_kernel_backends, sdpa_kernel
    from torch.nn.attention import SDPBackend as TB
    assert {b.name: b.value for b in SDPBackend} == {n: int(getattr(TB, n)) for n in SDPBackend.__members__}
    with sdpa_kernel(SDPBackend.MATH):
        assert _cur_sdpa_kernel_backends() == [SDPBackend.MATH]
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        assert len(_cur_sdpa_kernel_backends()) == 2
    assert SDPBackend.MATH in _cur_sdpa_kernel_backends()
    with pytest.raises(NotImplementedError, match="flex_attention.create_block_mask"):
        mt.nn.attention.flex_attention.create_block_mask(None, 1, 1, 4, 4)


# ---- compile / compiler / dynamo / jit / fx / export / library ---------------------------

def test_compile_returns_the_eager_callable():
    def f(x):
        return x * 2
    assert mt.compile(f) is f
    assert mt.compile(f, fullgraph=True, dynamic=True, backend="eager", options={"a": 1}, disable=False,
                      name="n", recompile_limit=3) is f
    assert mt.compile(mode="max-autotune")(f) is f
    with pytest.raises(RuntimeError, match="Either mode or options"):
        mt.compile(f, mode="default", options={})
    assert mt.compiler.disable(f) is f and mt.compiler.disable(recursive=False)(f) is f
    assert mt._dynamo.disable(f) is f and mt._dynamo.allow_in_graph(f) is f and mt.compiler.allow_in_graph(f) is f
    with mt.compiler.set_stance("force_eager"):
        pass
    mt.compiler.reset()
    mt._dynamo.reset()
    mt._dynamo.mark_static_address(mt.ones(2))
    mt._dynamo.config.cache_size_limit = 64


def test_jit():
    f = mt.jit.unused(lambda: 1)
    assert f() == 1 and mt.jit.ignore(f) is f and mt.jit.ignore(drop=True)(f) is f
    assert mt.jit.script(lambda x: x + 1)(2) == 3  # functions run eagerly
    with pytest.raises(NotImplementedError, match="torch.jit.script"):
        mt.jit.script(mt.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="torch.jit.trace"):
        mt.jit.trace(f, ())


def test_fx_classes_subclassable_and_tracing():
    from mindtorch_v2.fx import GraphModule, Proxy, Tracer

    class HFTracer(Tracer):
        pass

    class HFProxy(Proxy):
        pass
    assert not isinstance(mt.ones(1), mt.fx.Proxy)
    gm = GraphModule(mt.nn.Module(), HFTracer().trace(lambda x: x * 2))
    assert gm(mt.ones(2)).tolist() == [2.0, 2.0]
    assert mt.fx.symbolic_trace(lambda x: x + 1)(mt.ones(1)).tolist() == [2.0]
    assert mt.fx.node.map_aggregate((1, [2, {"a": 3}]), lambda v: v * 10) == (10, [20, {"a": 30}])
    assert mt.fx._compatibility.compatibility(is_backward_compatible=True)(len) is len


def test_export_onnx_library_hub():
    with pytest.raises(NotImplementedError, match="torch.export.export"):
        mt.export.export(None, ())
    assert mt.onnx.is_in_onnx_export() is False

    @mt.library.custom_op("mylib::twice", mutates_args=())
    def twice(x: mt.Tensor) -> mt.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return mt.empty_like(x)
    assert twice(mt.ones(2)).tolist() == [2.0, 2.0]
    assert twice(mt.ones(2, device="meta")).device.type == "meta"
    with pytest.raises(RuntimeError, match="operator mylib::other does not exist"):  # as PyTorch
        mt.library.register_fake("mylib::other")(len)
    assert mt.hub.get_dir().endswith("hub")


# ---- autocast ---------------------------------------------------------------------------

def test_autocast_disabled_regions_and_state():
    with mt.autocast(device_type="cpu", enabled=False):
        assert not mt.is_autocast_enabled()
    with mt.autocast("cpu", dtype=mt.bfloat16, enabled=False):
        pass

    @mt.autocast("cpu", enabled=False)
    def f():
        return 3
    assert f() == 3
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        mt.autocast(mt.device("cpu"))
    with pytest.warns(UserWarning, match="CUDA is not available"):
        a = mt.autocast("cuda")
    with a:
        assert not mt.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
        mt.autocast("cpu", dtype=mt.float64)


# ---- checkpoint -------------------------------------------------------------------------

def test_checkpoint_gradients_equal_plain_run():
    def block(x, w):
        return (x @ w).tanh() * x.sum()
    for reentrant in (True, False):
        x = mt.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        w = mt.tensor([[1.0, 2.0], [-0.5, 0.3]], requires_grad=True)
        mt.utils.checkpoint.checkpoint(block, x, w, use_reentrant=reentrant).sum().backward()
        gx, gw = x.grad.tolist(), w.grad.tolist()
        tx = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        tw = torch.tensor([[1.0, 2.0], [-0.5, 0.3]], requires_grad=True)
        torch.utils.checkpoint.checkpoint(block, tx, tw, use_reentrant=reentrant).sum().backward()
        np.testing.assert_allclose(gx, tx.grad.tolist(), rtol=1e-6)
        np.testing.assert_allclose(gw, tw.grad.tolist(), rtol=1e-6)


def test_checkpoint_reentrant_rules_like_pytorch():
    w = mt.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = mt.utils.checkpoint.checkpoint(lambda a: a * w, mt.ones(2), use_reentrant=True)
    assert y.requires_grad is False  # as PyTorch: parameters get no gradient through this call
    y = mt.utils.checkpoint.checkpoint(lambda a: a * w, mt.ones(2), use_reentrant=False)
    assert y.requires_grad is True
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        mt.utils.checkpoint.checkpoint(lambda a, k=1: a, mt.ones(1), use_reentrant=True, k=2)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        mt.utils.checkpoint.checkpoint(lambda a: a, mt.ones(1, requires_grad=True))
    seq = [lambda a: a + 1, lambda a: a * 3, lambda a: a - 2, lambda a: a * a]
    x = mt.ones(2, requires_grad=True)
    out = mt.utils.checkpoint.checkpoint_sequential(seq, 2, x, use_reentrant=False)
    assert out.tolist() == [16.0, 16.0]


def _checkpoint_scenarios(t):
    """The same checkpointed runs under torch-like module t: gradients, dropout masks, call counts,
    RNG state after, and the errors; returns a comparable record."""
    from functools import partial
    ck = t.utils.checkpoint.checkpoint
    out = {}
    for reentrant in (True, False):
        calls = []

        def block(x, mask, w, p=0.5):  # a None among the positional inputs, as transformers' layers pass
            assert mask is None
            calls.append(1)
            return t.nn.functional.dropout((x @ w).tanh(), p, training=True) * x.sum()
        t.manual_seed(3)
        x = t.linspace(-1, 2, 12).reshape(3, 4).requires_grad_()
        w = t.linspace(0.5, -0.7, 20).reshape(4, 5).requires_grad_()
        fn = block if reentrant else partial(block, p=0.25)
        y = ck(fn, x, None, w, use_reentrant=reentrant)
        after_forward = t.rand(2).tolist()  # the stream goes on from the forward's state
        t.manual_seed(3)
        t.rand(2)
        y.sum().backward(retain_graph=True)
        n_after_first = len(calls)
        y.sum().backward()  # a second backward recomputes again
        out[reentrant] = dict(y=y.tolist(), gx=x.grad.tolist(), gw=w.grad.tolist(), after=after_forward,
                              calls=(n_after_first, len(calls)), rng=t.rand(2).tolist())
    # a reentrant checkpoint refuses autograd.grad; the non-reentrant one gives it
    x = t.ones(3, requires_grad=True)
    errs = []
    try:
        t.autograd.grad(ck(lambda a: (a * a).exp(), x, use_reentrant=True).sum(), x)
    except RuntimeError as e:
        errs.append(str(e))
    g, = t.autograd.grad(ck(lambda a: (a * a).exp(), x, use_reentrant=False).sum(), x)
    out["grad"] = g.tolist()
    # a function saving differently when run again: the determinism check
    n = [0]

    def changing(a):
        n[0] += 1
        return (a[: n[0]] * 2).exp().sum()
    try:
        ck(changing, t.ones(4, requires_grad=True), use_reentrant=False).backward()
    except t.utils.checkpoint.CheckpointError as e:
        errs.append(str(e))
    y = ck(lambda a: a.exp(), t.ones(2, requires_grad=True), use_reentrant=True)
    try:
        ck(lambda a: a.detach() * 2, t.ones(2, requires_grad=True), use_reentrant=True).sum().backward()
    except RuntimeError as e:
        errs.append(str(e))
    out["errors"] = errs
    # nested checkpoints and no-grad mode
    x = t.ones(2, requires_grad=True)
    inner = lambda a: (a * 3).sin()
    ck(lambda a: ck(inner, a.cos(), use_reentrant=False).exp(), x, use_reentrant=False).sum().backward()
    out["nested"] = x.grad.tolist()
    with t.no_grad():
        out["no_grad"] = ck(lambda a: a.exp(), x, use_reentrant=False).requires_grad
    return out


def test_checkpoint_recomputes_as_pytorch():
    # both variants run the function again in each backward, with the forward's dropout masks, and
    # leave the RNG stream as PyTorch does; the errors of the reentrant one and of the determinism check
    got, want = _checkpoint_scenarios(mt), _checkpoint_scenarios(torch)
    assert got["errors"] == want["errors"] and len(want["errors"]) == 3
    for k in (True, False):
        assert got[k]["calls"] == want[k]["calls"] == (2, 3)
    for k in (True, False):
        for f in ("y", "gx", "gw", "after", "rng"):
            np.testing.assert_allclose(np.asarray(got[k][f]), np.asarray(want[k][f]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got["grad"], want["grad"], rtol=1e-6)
    np.testing.assert_allclose(got["nested"], want["nested"], rtol=2e-5)  # float32 sin/cos
    assert got["no_grad"] is want["no_grad"] is False


def test_checkpoint_device_states_as_pytorch_on_cpu():
    # sentence-transformers' cached losses import these at module level and save/restore around forwards
    from mindtorch_v2.utils.checkpoint import get_device_states, set_device_states
    from torch.utils.checkpoint import get_device_states as t_get
    assert get_device_states(mt.ones(2), [mt.zeros(1)], 3) == t_get(torch.ones(2), [torch.zeros(1)], 3) == ([], [])
    set_device_states([], [])


# ---- distributions ----------------------------------------------------------------------

def _np(t):
    return np.array(t.tolist())


def test_normal_like_pytorch():
    loc, scale, value = [0.0, 1.0, -2.0], [1.0, 2.0, 0.5], [0.3, -1.0, -2.5]
    m = mt.distributions.Normal(mt.tensor(loc), mt.tensor(scale))
    t = torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale))
    for name in ("log_prob", "cdf"):
        np.testing.assert_allclose(_np(getattr(m, name)(mt.tensor(value))),
                                   _np(getattr(t, name)(torch.tensor(value))), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_np(m.entropy()), _np(t.entropy()), rtol=1e-6)
    assert _np(m.mean).tolist() == loc and _np(m.variance).tolist() == _np(t.variance).tolist()
    mt.manual_seed(0)
    torch.manual_seed(0)
    np.testing.assert_allclose(_np(m.sample((4,))), _np(t.sample((4,))), rtol=1e-6)
    np.testing.assert_allclose(_np(m.rsample((2,))), _np(t.rsample((2,))), rtol=1e-6)
    assert repr(m) == repr(t)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        mt.distributions.Normal(mt.tensor([0.0]), mt.tensor([-1.0]))


def test_every_distribution_submodule_imports_with_pytorch_names():
    # a library imports from PyTorch's file-per-class modules (peft: torch.distributions.relaxed_bernoulli)
    import importlib
    import pkgutil
    written = {"constraints", "utils", "categorical", "distribution", "normal",
               "multivariate_normal"}  # files of their own here without an __all__
    for info in pkgutil.iter_modules(torch.distributions.__path__):
        if info.name not in written:
            names = set(importlib.import_module(f"torch.distributions.{info.name}").__all__)
            assert set(importlib.import_module(f"mindtorch_v2.distributions.{info.name}").__all__) == names, info.name
    assert mt.distributions.relaxed_bernoulli.RelaxedBernoulli is mt.distributions.RelaxedBernoulli
    assert mt.distributions.normal.Normal is mt.distributions.Normal
    out = run("""
        import torch_proxy
        torch_proxy.install()
        from torch.distributions.relaxed_bernoulli import RelaxedBernoulli
        from torch.distributions.transforms import SigmoidTransform, Transform
        import torch
        assert issubclass(RelaxedBernoulli, torch.distributions.Distribution)
        print(RelaxedBernoulli.__name__, issubclass(SigmoidTransform, Transform))
    """)
    assert out.split() == ["RelaxedBernoulli", "True"]


def test_normal_rsample_backward():
    loc = mt.tensor([0.5], requires_grad=True)
    scale = mt.tensor([2.0], requires_grad=True)
    mt.manual_seed(3)
    mt.distributions.Normal(loc, scale).rsample((5,)).sum().backward()
    tl = torch.tensor([0.5], requires_grad=True)
    ts = torch.tensor([2.0], requires_grad=True)
    torch.manual_seed(3)
    torch.distributions.Normal(tl, ts).rsample((5,)).sum().backward()
    np.testing.assert_allclose(loc.grad.tolist(), tl.grad.tolist())
    np.testing.assert_allclose(scale.grad.tolist(), ts.grad.tolist(), rtol=1e-6)


def test_categorical_like_pytorch():
    logits = [[0.1, 2.0, -1.0, 0.0], [1.0, 1.0, 1.0, -3.0]]
    m = mt.distributions.Categorical(logits=mt.tensor(logits))
    t = torch.distributions.Categorical(logits=torch.tensor(logits))
    np.testing.assert_allclose(_np(m.probs), _np(t.probs), rtol=1e-6)
    np.testing.assert_allclose(_np(m.logits), _np(t.logits), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_np(m.entropy()), _np(t.entropy()), rtol=1e-6)
    v = [[1, 3], [0, 2], [3, 3]]
    np.testing.assert_allclose(_np(m.log_prob(mt.tensor(v))), _np(t.log_prob(torch.tensor(v))), rtol=1e-6)
    p = mt.distributions.Categorical(probs=mt.tensor([0.2, 0.3, 0.5]))
    tp = torch.distributions.Categorical(probs=torch.tensor([0.2, 0.3, 0.5]))
    np.testing.assert_allclose(_np(p.logits), _np(tp.logits), rtol=1e-6)
    assert m.batch_shape == t.batch_shape and tuple(m.sample((3,)).shape) == tuple(t.sample((3,)).shape)
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        mt.distributions.Categorical()


def test_multivariate_normal_scale_tril():
    loc = [1.0, -1.0]
    tril = [[1.0, 0.0], [0.5, 2.0]]
    m = mt.distributions.MultivariateNormal(mt.tensor(loc), scale_tril=mt.tensor(tril))
    t = torch.distributions.MultivariateNormal(torch.tensor(loc), scale_tril=torch.tensor(tril))
    mt.manual_seed(1)
    torch.manual_seed(1)
    np.testing.assert_allclose(_np(m.sample((3,))), _np(t.sample((3,))), rtol=1e-6)
    np.testing.assert_allclose(_np(m.covariance_matrix), _np(t.covariance_matrix))
    np.testing.assert_allclose(_np(m.variance), _np(t.variance))
    assert m.batch_shape == t.batch_shape and m.event_shape == t.event_shape


def test_constraints():
    c = mt.distributions.constraints
    tc = torch.distributions.constraints
    x = [-1.0, 0.0, 0.5, 2.0, float("nan")]
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean"):
        assert _np(getattr(c, name).check(mt.tensor(x))).tolist() == _np(getattr(tc, name).check(
            torch.tensor(x))).tolist(), name
        assert repr(getattr(c, name)) == repr(getattr(tc, name))
    assert repr(c.real_vector) == repr(tc.real_vector)
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)


def test_matrix_constraints():
    mats = [[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.1], [0.5, 2.0]], [[-1.0, 0.0], [0.5, 2.0]]]
    c = mt.distributions.constraints
    tc = torch.distributions.constraints
    for name in ("lower_triangular", "lower_cholesky", "square"):
        assert _np(getattr(c, name).check(mt.tensor(mats))).tolist() == \
            _np(getattr(tc, name).check(torch.tensor(mats))).tolist(), name
    with pytest.raises(ValueError, match="Expected parameter scale_tril"):
        mt.distributions.MultivariateNormal(mt.zeros(2), scale_tril=mt.tensor(mats[2]))


def test_cond_and_deterministic_flags():
    for lib in (mt, torch):
        assert lib.cond(lib.tensor(True), lambda a: a + 1, lambda a: a - 1, (lib.tensor(1),)).item() == 2
        assert lib.cond(False, lambda a: a + 1, lambda a: a - 1, (lib.tensor(1),)).item() == 0
    try:
        for lib in (mt, torch):
            assert lib.get_deterministic_debug_mode() == 0 and not lib.are_deterministic_algorithms_enabled()
            lib.set_deterministic_debug_mode("warn")
            assert lib.get_deterministic_debug_mode() == 1 and lib.is_deterministic_algorithms_warn_only_enabled()
            lib.use_deterministic_algorithms(True)
            assert lib.get_deterministic_debug_mode() == 2
    finally:
        for lib in (mt, torch):
            lib.use_deterministic_algorithms(False)
