"""gradcheck / gradgradcheck: analytical gradients (the engine) against central finite
differences, as torch.autograd.gradcheck does it in its slow mode (one Jacobian column per
perturbed input element, one row per output element)."""
import warnings

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck on a mismatch."""


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_inputs(inputs):
    T = _tensor_cls()
    return [(i, t) for i, t in enumerate(inputs) if isinstance(t, T) and t.requires_grad]


def _outputs(func, inputs):
    T = _tensor_cls()
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, T))


def _unravel(k, shape):
    idx = []
    for s in reversed(shape):
        idx.append(k % s)
        k //= s
    return tuple(reversed(idx))


def _numerical(func, inputs, outputs, eps):
    """jac[i][o]: (numel(out o), numel(input i)) from f(x + eps) - f(x - eps) over 2 eps."""
    from .._creation import zeros
    from .grad_mode import no_grad
    jac = []
    for _, x in _diff_inputs(inputs):
        cols = [zeros(o.numel(), x.numel(), dtype=o.dtype) for o in outputs]
        data = x.detach()
        for k in range(x.numel()):
            idx = _unravel(k, tuple(x.shape))
            orig = data[idx].item()
            with no_grad():
                data[idx] = orig - eps
            lo = [o.detach().reshape(-1).clone() for o in _outputs(func, inputs)]
            with no_grad():
                data[idx] = orig + eps
            hi = [o.detach().reshape(-1).clone() for o in _outputs(func, inputs)]
            with no_grad():
                data[idx] = orig
                for c, a, b in zip(cols, lo, hi):
                    if c.shape[0]:
                        c[:, k] = (b - a) / (2 * eps)
        jac.append(cols)
    return jac


def _analytical(inputs, outputs):
    """jac[i][o] by one backward per output element (one-hot grad_output)."""
    from .._creation import zeros, zeros_like
    from . import grad
    diff = [t for _, t in _diff_inputs(inputs)]
    jac = [[zeros(o.numel(), x.numel(), dtype=o.dtype) for o in outputs] for x in diff]
    for oi, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            flat = zeros_like(o).reshape(-1)
            flat[k] = 1
            gs = grad(o, diff, flat.reshape(o.shape), retain_graph=True, allow_unused=True)
            for xi, g in enumerate(gs):
                if g is not None:
                    jac[xi][oi][k] = g.reshape(-1).to(o.dtype)
    return jac


def _realified(func, inputs):
    """func and inputs with each complex input z as a real (..., 2) leaf r (z = view_as_complex(r)) and each
    complex output o as view_as_real(o): the real Jacobian of that function is what PyTorch's gradcheck checks
    for complex functions (real and imaginary parts of inputs and outputs), and its analytical side runs the
    complex ops' conjugate Wirtinger formulas. None when nothing is complex."""
    from .._views import view_as_complex, view_as_real
    complex_in = {i for i, t in _diff_inputs(inputs) if t.dtype.is_complex}
    if not complex_in and not any(o.dtype.is_complex for o in _outputs(func, inputs)):
        return None
    new_inputs = tuple(view_as_real(t.detach()).clone().requires_grad_() if i in complex_in else t
                       for i, t in enumerate(inputs))

    def new_func(*args):
        args = [view_as_complex(a) if i in complex_in else a for i, a in enumerate(args)]
        return tuple(view_as_real(o) if o.dtype.is_complex else o for o in _outputs(func, args))
    return new_func, new_inputs


def _allclose(a, b, rtol, atol):
    if a.numel() == 0:
        return True
    return bool(((a - b).abs() <= atol + rtol * b.abs()).all().item())


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True if the gradients of func at inputs match finite differences (else GradcheckError)."""
    for flag, name in ((check_batched_grad, "check_batched_grad"), (check_batched_forward_grad,
                       "check_batched_forward_grad"), (check_forward_ad, "check_forward_ad"), (masked, "masked")):
        if flag:
            raise NotImplementedError(f"gradcheck({name}=True) is not implemented")
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, t in diff:
        if t.dtype.itemsize < 8:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ")
    real = _realified(func, inputs)
    if real is not None:
        func, inputs = real
        diff = _diff_inputs(inputs)
    # analytical first: the finite differences write into the inputs (bumping their versions)
    outputs = _outputs(func, inputs)
    analytical = _analytical(inputs, outputs) if check_backward_ad else None
    numerical = _numerical(func, inputs, outputs, eps)
    if not check_backward_ad:
        return True
    for xi, (i, _) in enumerate(diff):
        for oi in range(len(outputs)):
            a, n = analytical[xi][oi], numerical[xi][oi]
            if not _allclose(a, n, rtol, atol):
                return _fail(f"Jacobian mismatch for output {oi:d} with respect to input {i:d},\n"
                             f"numerical:{n}\nanalytical:{a}\n", raise_exception)
    again = _analytical(inputs, _outputs(func, inputs))
    for xi in range(len(diff)):
        for oi in range(len(outputs)):
            if not _allclose(again[xi][oi], analytical[xi][oi], 0.0, nondet_tol):
                return _fail("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches "
                             f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.",
                             raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the function inputs, grad_outputs -> gradients of func (second derivatives)."""
    from .._random import randn
    from . import grad
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck(check_fwd_over_rev=True) is not implemented")
    inputs = _as_tuple(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn(tuple(o.shape), dtype=o.dtype).requires_grad_() for o in outputs
                             if (o.dtype.is_floating_point or o.dtype.is_complex) and o.requires_grad)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = tuple(o for o in _outputs(func, ins) if (o.dtype.is_floating_point or o.dtype.is_complex)
                     and o.requires_grad)
        diff = [t for _, t in _diff_inputs(ins)]
        gs = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
