"""Random sampling: torch.Generator, the default generator and the sampling functions.

The generator (mt19937 + PyTorch's cached Box-Muller value) and every
distribution live in the C core (csrc/core/rng.c, csrc/kernels/cpu/random.c)
and reproduce PyTorch's CPU streams bit for bit: after `manual_seed(s)` the
same calls give the same numbers as PyTorch. Each function here is one core
call (plus argument parsing).
"""
import math
import operator
import warnings

from ._C import ffi, lib
from ._core import dtype_id, new_out, raise_status
from . import _dtype
from ._device import CPU, core_id, device as _device
from ._tensor import Tensor, wrap

_new = ffi.new
_NULL = ffi.NULL
_DEFAULT_SEED = 67280421310721  # c10::detail::default_rng_seed_val: a new Generator's seed
_U64 = 1 << 64

_UNIFORM, _NORMAL, _INT = lib.MT_RAND_UNIFORM, lib.MT_RAND_NORMAL, lib.MT_RAND_INT
_FROM_TO, _FROM = lib.MT_RAND_FROM_TO, lib.MT_RAND_FROM
_BERNOULLI, _EXPONENTIAL = lib.MT_RAND_BERNOULLI, lib.MT_RAND_EXPONENTIAL
_rand_new = lib.mt_rand_new
_rand_fill = lib.mt_rand_fill_
_requires_grad = lib.mt_tensor_requires_grad
_F16 = lib.MT_F16


# ---- Generator ---------------------------------------------------------------------------

def _unpack_seed(seed, name="manual_seed"):
    if type(seed) is not int:
        if isinstance(seed, int) and not isinstance(seed, bool):
            seed = int(seed)
        else:
            raise RuntimeError(f"{name} expected a long, but got {type(seed).__name__}")
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed & (_U64 - 1)


class Generator:
    """torch.Generator: a CPU mt19937 generator with PyTorch's exact streams."""

    __slots__ = ("_h", "__weakref__")

    def __init__(self, device="cpu"):
        dev = device if isinstance(device, _device) else _device(device)
        if dev.type != "cpu":
            if dev.type == "meta":
                raise RuntimeError("META device type not an accelerator.")
            raise RuntimeError(f"Device type {dev.type.upper()} is not supported for torch.Generator() api.")
        out = _new("mt_generator **")
        st = lib.mt_generator_create(_DEFAULT_SEED, out)
        if st:
            raise_status(st)
        self._h = out[0]

    @classmethod
    def _wrap(cls, handle):
        g = object.__new__(cls)
        g._h = handle
        return g

    def __del__(self):
        try:
            lib.mt_generator_release(self._h)
        except (AttributeError, TypeError):
            pass

    @property
    def device(self):
        return CPU

    def manual_seed(self, seed):
        lib.mt_generator_manual_seed(self._h, _unpack_seed(seed))
        return self

    def seed(self):
        return lib.mt_generator_seed(self._h)

    def initial_seed(self):
        return lib.mt_generator_initial_seed(self._h)

    def get_state(self):
        out = new_out()
        st = lib.mt_generator_get_state(self._h, out)
        if st:
            raise_status(st)
        return wrap(out[0])

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        st = lib.mt_generator_set_state(self._h, new_state._h)
        if st:
            raise_status(st)
        return self

    def clone_state(self):
        g = Generator()
        lib.mt_generator_copy_state(g._h, self._h)
        return g

    def graphsafe_get_state(self):
        return self.clone_state()

    def graphsafe_set_state(self, state):
        lib.mt_generator_copy_state(self._h, state._h)
        return self

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def __reduce__(self):
        return (_rebuild_generator, (self.initial_seed(), bytes(self.get_state().tolist())))

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


def _rebuild_generator(seed, state):
    from ._creation import tensor
    g = Generator()
    g.set_state(tensor(list(state), dtype=_dtype.uint8))
    return g


default_generator = Generator._wrap(lib.mt_generator_default())


def _gen(generator, fn):
    """The core handle of a generator argument (NULL = the default generator)."""
    if generator is None:
        return _NULL
    try:
        return generator._h
    except AttributeError:
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}") from None


# ---- module-level state functions (torch.manual_seed & co) ------------------------------

def manual_seed(seed):
    seed = int(seed)
    lib.mt_generator_manual_seed(_NULL, _unpack_seed(seed))
    return default_generator


def seed():
    return lib.mt_generator_seed(_NULL)


def initial_seed():
    return lib.mt_generator_initial_seed(_NULL)


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


# ---- argument helpers --------------------------------------------------------------------

def _size(args, size, fn):
    if size is None:
        for a in args:
            if type(a) is not int:
                break
        else:
            return args  # the common case: plain ints (a tuple serves as int64_t[])
    if size is not None:
        if args:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        args = (size,)
    if len(args) == 1 and not isinstance(args[0], int) and hasattr(args[0], "__iter__"):
        args = tuple(args[0])
    out = []
    for pos, s in enumerate(args):
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, but found element of "
                            f"type {type(s).__name__} at pos {pos}")
        out.append(s.__index__())
    return out


def _int_arg(v, fn, name, pos):
    if isinstance(v, bool) or isinstance(v, float):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}") from None


def _take_warning(dtype_id):
    """Raise the core's pending UserWarning (random_ ranges wider than a float mantissa)."""
    if dtype_id >= _F16:
        w = lib.mt_rand_take_warning()
        if w != _NULL:
            warnings.warn(ffi.string(w).decode(), UserWarning, stacklevel=3)


def _finish(t, requires_grad, out):
    if out is not None:
        from ._views import resize_
        resize_(out, *t.shape)
        out.copy_(t)
        return out
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new_random(kind, sizes, dtype_id, dev, f0, f1, i0, i1, gh):
    res = new_out()
    st = _rand_new(kind, len(sizes), sizes, dtype_id, dev, f0, f1, i0, i1, gh, res)
    if st:
        raise_status(st)
    return wrap(res[0])


def _fill(self, kind, f0, f1, i0, i1, gh):
    h = self._h
    if _requires_grad(h) and lib.mt_is_grad_enabled() and lib.mt_tensor_is_leaf(h):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    st = _rand_fill(h, kind, f0, f1, i0, i1, gh)
    if st:
        raise_status(st)
    return self


def _like_strides(t):
    """Strides empty_like(t) gets under preserve_format: t's own when t is dense and
    non-overlapping, else dense strides following t's layout."""
    shape, strides = t.shape, t.stride()
    perm = sorted(range(len(shape)), key=lambda d: (strides[d], shape[d]), reverse=True)
    expect, dense = 1, True
    for d in reversed(perm):
        if shape[d] != 1 and strides[d] != expect:
            dense = False
        expect *= shape[d]
    if dense:
        return list(strides)
    out = [0] * len(shape)
    s = 1
    for d in reversed(perm):
        out[d] = s
        s *= max(shape[d], 1)
    return out


def _empty_like(input, dtype_id, dev):
    res = new_out()
    if lib.mt_tensor_is_contiguous(input._h):
        sizes = list(input.shape)
        st = lib.mt_empty(len(sizes), sizes, dtype_id, dev, res)
    else:
        sizes = list(input.shape)
        st = lib.mt_empty_strided(len(sizes), sizes, _like_strides(input), dtype_id, dev, res)
    if st:
        raise_status(st)
    return wrap(res[0])


def _like_dev(input, device):
    return lib.mt_tensor_device(input._h) if device is None else core_id(device)


# ---- factories ---------------------------------------------------------------------------

def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, names=None):
    sizes = _size(args, size, "rand")
    t = _new_random(_UNIFORM, sizes, lib.mt_get_default_dtype() if dtype is None else dtype_id(dtype, 0, "rand"),
                    core_id(device), 0.0, 1.0, 0, 0,
                    _NULL if generator is None else _gen(generator, "rand"))
    return t if out is None and not requires_grad else _finish(t, requires_grad, out)


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, names=None):
    sizes = _size(args, size, "randn")
    t = _new_random(_NORMAL, sizes, lib.mt_get_default_dtype() if dtype is None else dtype_id(dtype, 0, "randn"),
                    core_id(device), 0.0, 1.0, 0, 0,
                    _NULL if generator is None else _gen(generator, "randn"))
    return t if out is None and not requires_grad else _finish(t, requires_grad, out)


def _low_high_size(args, low, high, size, fn):
    """randint(high, size) / randint(low, high, size), positional or by keyword."""
    args = list(args)
    if size is None:
        if not args:
            raise TypeError(f"{fn}() missing required argument 'size'")
        size = args.pop()
        if not hasattr(size, "__iter__"):
            raise TypeError(f"{fn}(): argument 'size' (position {len(args) + 1}) must be tuple of ints, not "
                            f"{type(size).__name__}")
    if len(args) > 2:
        raise TypeError(f"{fn}() takes at most 3 positional arguments ({len(args) + 1} given)")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None:
        raise TypeError(f"{fn}() missing required argument 'high'")
    high = _int_arg(high, fn, "high", 2 if low is not None else 1)
    low = 0 if low is None else _int_arg(low, fn, "low", 1)
    return low, high, size


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    if size is None and low is None and high is None and len(args) in (2, 3) and type(args[-1]) in (tuple, list):
        size = args[-1]
        low, high = (0, args[0]) if len(args) == 2 else args[:2]
        if type(low) is not int or type(high) is not int:
            low, high, size = _low_high_size(args, None, None, None, "randint")
    else:
        low, high, size = _low_high_size(args, low, high, size, "randint")
    sizes = _size((), size, "randint")
    dt = lib.MT_I64 if dtype is None else dtype_id(dtype, lib.MT_I64, "randint")
    t = _new_random(_FROM_TO, sizes, dt, core_id(device), 0.0, 0.0, low, high,
                    _NULL if generator is None else _gen(generator, "randint"))
    if dt >= _F16:
        _take_warning(dt)
    return t if out is None and not requires_grad else _finish(t, requires_grad, out)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    n = _int_arg(n, "randperm", "n", 1)
    res = new_out()
    st = lib.mt_randperm(n, dtype_id(dtype, lib.MT_I64, "randperm"), core_id(device),
                         _gen(generator, "randperm"), res)
    if st:
        raise_status(st)
    t = wrap(res[0])
    return t if out is None and not requires_grad else _finish(t, requires_grad, out)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              generator=None):
    dt, dev = dtype_id(dtype, lib.mt_tensor_dtype(input._h), "rand_like"), _like_dev(input, device)
    gh = _gen(generator, "rand_like")
    if lib.mt_tensor_is_contiguous(input._h):
        t = _new_random(_UNIFORM, list(input.shape), dt, dev, 0.0, 1.0, 0, 0, gh)
    else:
        t = _fill(_empty_like(input, dt, dev), _UNIFORM, 0.0, 1.0, 0, 0, gh)
    return _finish(t, requires_grad, None) if requires_grad else t


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               generator=None):
    dt, dev = dtype_id(dtype, lib.mt_tensor_dtype(input._h), "randn_like"), _like_dev(input, device)
    gh = _gen(generator, "randn_like")
    if lib.mt_tensor_is_contiguous(input._h):
        t = _new_random(_NORMAL, list(input.shape), dt, dev, 0.0, 1.0, 0, 0, gh)
    else:
        t = _fill(_empty_like(input, dt, dev), _NORMAL, 0.0, 1.0, 0, 0, gh)
    return _finish(t, requires_grad, None) if requires_grad else t


def randint_like(input, *args, low=None, high=None, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None, generator=None):
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif len(args) > 2:
        raise TypeError("randint_like() takes at most 3 positional arguments")
    if high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    high = _int_arg(high, "randint_like", "high", 2)
    low = 0 if low is None else _int_arg(low, "randint_like", "low", 1)
    dt, dev = dtype_id(dtype, lib.mt_tensor_dtype(input._h), "randint_like"), _like_dev(input, device)
    gh = _gen(generator, "randint_like")
    if lib.mt_tensor_is_contiguous(input._h):
        t = _new_random(_FROM_TO, list(input.shape), dt, dev, 0.0, 0.0, low, high, gh)
    else:
        t = _fill(_empty_like(input, dt, dev), _FROM_TO, 0.0, 0.0, low, high, gh)
    _take_warning(dt)
    return _finish(t, requires_grad, None) if requires_grad else t


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)\n")


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    gh = _gen(generator, "normal")
    mt_, st_ = isinstance(mean, Tensor), isinstance(std, Tensor)
    if mt_ or st_:
        res = new_out()
        st = lib.mt_normal_tensors(mean._h if mt_ else _NULL, std._h if st_ else _NULL,
                                   0.0 if mt_ else float(mean), 0.0 if st_ else float(std), gh, res)
        if st:
            raise_status(st)
        t = wrap(res[0])
        return t if out is None else _finish(t, False, out)
    if size is None:
        names = ", ".join(type(v).__name__ for v in (mean, std))
        raise TypeError(f"normal() received an invalid combination of arguments - got ({names}), but expected one "
                        f"of:\n{_NORMAL_SIGNATURES}")
    sizes = _size((), size, "normal")
    t = _new_random(_NORMAL, sizes, dtype_id(dtype, lib.mt_get_default_dtype(), "normal"), core_id(device),
                    float(mean), float(std), 0, 0, gh)
    return t if out is None and not requires_grad else _finish(t, requires_grad, out)


def bernoulli(input, p=None, *, generator=None, out=None):
    gh = _gen(generator, "bernoulli")
    dt = lib.mt_tensor_dtype(input._h)
    if p is None or isinstance(p, Tensor):
        probs = input if p is None else p
        res = new_out()
        sizes = list(input.shape)
        st = lib.mt_empty(len(sizes), sizes, dt, lib.mt_tensor_device(input._h), res)
        if st:
            raise_status(st)
        t = wrap(res[0])
        st = lib.mt_bernoulli_tensor_(t._h, probs._h, gh)
        if st:
            raise_status(st)
        lib.mt_tensor_set_version(t._h, 0)  # a new tensor: filling it is not an in-place op on anything
    else:
        t = _new_random(_BERNOULLI, list(input.shape), dt, lib.mt_tensor_device(input._h), float(p), 0.0, 0, 0, gh)
    return t if out is None else _finish(t, False, out)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    n = _int_arg(num_samples, "multinomial", "num_samples", 2)
    res = new_out()
    st = lib.mt_multinomial(input._h, n, 1 if replacement else 0, _gen(generator, "multinomial"), res)
    if st:
        raise_status(st)
    t = wrap(res[0])
    return t if out is None else _finish(t, False, out)


# ---- PyTorch's per-element samplers (csrc/kernels/cpu/samplers.c) and their reparameterization gradients ----

def _call(fn, *args):
    res = new_out()
    st = fn(*args, res)
    if st:
        raise_status(st)
    return wrap(res[0])


def _standard_gamma_grad(input, output):
    return _call(lib.mt_standard_gamma_grad, input._h, output._h)


def _dirichlet_grad(x, alpha, total):
    return _call(lib.mt_dirichlet_grad, x._h, alpha._h, total._h)


def _sampler(name, node, draw, backward):
    """torch.<name>(input, generator=None): draw(input handle, generator handle) -> new handle out; input's
    gradient is backward(grad, input, result), or none (PyTorch's zeros) when backward is None."""
    from .autograd.function import Function

    class Op(Function):
        _node_name = node

        @staticmethod
        def forward(ctx, x, gh):
            y = _call(draw, x._h, gh)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return (None if backward is None else backward(grad, x, y)), None

    def fn(input, generator=None):
        gh = _gen(generator, name)
        if input.requires_grad and backward is not None:
            return Op.apply(input, gh)
        return _call(draw, input._h, gh)
    fn.__name__ = name
    return fn


_standard_gamma = _sampler("_standard_gamma", "StandardGammaBackward0", lib.mt_standard_gamma,
                           lambda grad, x, y: grad * _standard_gamma_grad(x, y))
_sample_dirichlet = _sampler("_sample_dirichlet", "SampleDirichletBackward0", lib.mt_sample_dirichlet, None)
poisson = _sampler("poisson", "PoissonBackward0", lib.mt_poisson, None)


def binomial(count, prob, generator=None):
    return _call(lib.mt_binomial, count._h, prob._h, _gen(generator, "binomial"))


# ---- Tensor methods ------------------------------------------------------------------------

def uniform_(self, *args, generator=None, **kwargs):
    """uniform_(from=0, to=1): `from` is a Python keyword, so it arrives in kwargs."""
    if kwargs:
        args = list(args)
        frm = kwargs.pop("from") if "from" in kwargs else (args.pop(0) if args else 0)
        to = kwargs.pop("to") if "to" in kwargs else (args.pop(0) if args else 1)
        if args or kwargs:
            raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs), '')}'")
    elif len(args) <= 2:
        frm, to = (tuple(args) + (0, 1)[len(args):])
    else:
        raise TypeError(f"uniform_() takes from 0 to 2 positional arguments but {len(args)} were given")
    return _fill(self, _UNIFORM, float(frm), float(to), 0, 0,
                 _NULL if generator is None else _gen(generator, "uniform_"))


def normal_(self, mean=0, std=1, *, generator=None):
    return _fill(self, _NORMAL, float(mean), float(std), 0, 0,
                 _NULL if generator is None else _gen(generator, "normal_"))


def random_(self, *args, generator=None, **kwargs):
    """random_(), random_(to), random_(from, to), random_(from, None)."""
    gh = _gen(generator, "random_")
    a = list(args)
    has_from = "from" in kwargs or len(a) >= 2
    frm = kwargs.pop("from", a.pop(0) if len(a) >= 2 else 0)
    to = kwargs.pop("to", a.pop(0) if a else None) if (a or "to" in kwargs) else None
    if a or kwargs:
        raise TypeError("random_() received an invalid combination of arguments")
    if not has_from and to is None:
        return _fill(self, _INT, 0.0, 0.0, 0, 0, gh)
    frm = _int_arg(frm, "random_", "from", 1)
    if to is None:
        _fill(self, _FROM, 0.0, 0.0, frm, 0, gh)
    else:
        _fill(self, _FROM_TO, 0.0, 0.0, frm, _int_arg(to, "random_", "to", 2), gh)
    _take_warning(lib.mt_tensor_dtype(self._h))
    return self


def bernoulli_(self, p=0.5, *, generator=None):
    gh = _gen(generator, "bernoulli_")
    if isinstance(p, Tensor):
        h = self._h
        if lib.mt_tensor_requires_grad(h) and lib.mt_is_grad_enabled() and lib.mt_tensor_is_leaf(h):
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        st = lib.mt_bernoulli_tensor_(h, p._h, gh)
        if st:
            raise_status(st)
        return self
    return _fill(self, _BERNOULLI, float(p), 0.0, 0, 0, gh)


def exponential_(self, lambd=1.0, *, generator=None):
    return _fill(self, _EXPONENTIAL, float(lambd), 0.0, 0, 0,
                 _NULL if generator is None else _gen(generator, "exponential_"))


# cauchy_, log_normal_ and geometric_: PyTorch's CPU kernels draw one at::*_distribution<double> per element,
# serially in the iterator's order, and cast the double to the dtype. Their draws are the serial float64
# uniform_/normal_ streams taken in the same order, so these compose them with the same transformation.

def _serial_doubles(self, kind, f0, f1, gh):
    """float64 draws for self's elements in the order PyTorch's serial kernel takes them: a buffer laid out as
    self with every stride doubled (never contiguous, so normal_ too takes its serial path)."""
    res = new_out()
    sizes = list(self.shape)
    st = lib.mt_empty_strided(len(sizes), sizes, [2 * s for s in _like_strides(self)], lib.MT_F64,
                              lib.mt_tensor_device(self._h), res)
    if st:
        raise_status(st)
    return _fill(wrap(res[0]), kind, f0, f1, 0, 0, gh)


def _store_doubles(self, values):
    """static_cast<scalar_t>(double): through float for the 16-bit floats (c10::Half(float)), through int64
    for the integers (wrapping)."""
    h = self._h
    if _requires_grad(h) and lib.mt_is_grad_enabled() and lib.mt_tensor_is_leaf(h):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    dt = self.dtype
    if dt in (_dtype.float16, _dtype.bfloat16):
        values = values.to(_dtype.float32)
    elif not dt.is_floating_point:
        values = values.to(_dtype.int64)
    from .autograd.grad_mode import no_grad
    with no_grad():
        values = values.to(dt)
    return self.copy_(values)  # recorded: no gradient reaches what self held, as PyTorch's zeros_like(grad)


def _continuous(self, name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_dtype.CPP_NAMES[self.dtype._name]}")


def _not_implemented_for(self, kernel, dtypes):
    if self.dtype not in dtypes:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_name(self.dtype)}\'')


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    gh = _gen(generator, "cauchy_")
    _continuous(self, "Cauchy")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    tan = ((_serial_doubles(self, _UNIFORM, 0.0, 1.0, gh) - 0.5) * math.pi).tan()
    # median + sigma * tan, fused as PyTorch's vectorised build compiles it (addcmul's kernel is an fma)
    scalar = tan.new_full
    return _store_doubles(self, scalar((), float(median)).addcmul(tan, scalar((), float(sigma))))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    gh = _gen(generator, "log_normal_")
    _not_implemented_for(self, "log_normal_cpu", _FLOATS)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _store_doubles(self, _serial_doubles(self, _NORMAL, float(mean), float(std), gh).exp())


def geometric_(self, p, *, generator=None):
    gh = _gen(generator, "geometric_")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype is _dtype.bool:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    u = _serial_doubles(self, _UNIFORM, 0.0, 1.0, gh)
    return _store_doubles(self, (u.log() / math.log1p(-p)).ceil())


_FLOATS = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


def _bernoulli_method(self, *args, generator=None):
    return bernoulli(self, *args, generator=generator)


def _multinomial_method(self, num_samples, replacement=False, *, generator=None):
    return multinomial(self, num_samples, replacement, generator=generator)


METHODS = {
    "uniform_": uniform_, "normal_": normal_, "random_": random_, "bernoulli_": bernoulli_,
    "exponential_": exponential_, "cauchy_": cauchy_, "log_normal_": log_normal_, "geometric_": geometric_,
    "bernoulli": _bernoulli_method, "multinomial": _multinomial_method,
}

FUNCTIONS = {
    "Generator": Generator, "default_generator": default_generator, "manual_seed": manual_seed, "seed": seed,
    "initial_seed": initial_seed, "get_rng_state": get_rng_state, "set_rng_state": set_rng_state,
    "rand": rand, "randn": randn, "randint": randint, "randperm": randperm, "rand_like": rand_like,
    "randn_like": randn_like, "randint_like": randint_like, "normal": normal, "bernoulli": bernoulli,
    "multinomial": multinomial, "poisson": poisson, "binomial": binomial, "_standard_gamma": _standard_gamma,
    "_sample_dirichlet": _sample_dirichlet, "_standard_gamma_grad": _standard_gamma_grad,
    "_dirichlet_grad": _dirichlet_grad,
}
