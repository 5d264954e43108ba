"""torch.optim.LBFGS: limited-memory BFGS (the minFunc variant PyTorch follows), optionally with a
strong-Wolfe line search.  Pure Python over tensor ops, as PyTorch's; the arithmetic is done in the same
order as PyTorch's so that float64 trajectories and evaluation counts agree."""
import mindtorch_v2 as torch  # the package; its attributes are read at call time
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import _to_scalar, Optimizer

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic with values f and slopes g at x1 and x2, clamped to bounds (by default the
    interval between the two points); the middle of bounds when the cubic has no minimum."""
    if x1 > x2:  # the formula below is written for x1 <= x2; it is symmetric otherwise
        x1, f1, g1, x2, f2, g2 = x2, f2, g2, x1, f1, g1
    lo, hi = (x1, x2) if bounds is None else bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.0
    d2 = disc.sqrt()
    x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along d from x (loss f, gradient g, slope gtd) for a step meeting the strong Wolfe
    conditions: grow the step until a minimum is bracketed, then shrink the bracket by safeguarded cubic
    interpolation.  Returns (loss, gradient, step, evaluations)."""
    d_norm = d.abs().max()

    def probe(step):  # a point of the search: (step, loss, gradient, slope along d)
        f_s, g_s = obj_func(x, step, d)
        return step, f_s, g_s.clone(memory_format=torch.contiguous_format), g_s.dot(d)

    def armijo_fails(p):
        return p[1] > f + c1 * p[0] * gtd

    def curvature_holds(p):
        return abs(p[3]) <= -c2 * gtd

    prev, cur = (0, f, g.clone(memory_format=torch.contiguous_format), gtd), probe(t)
    evals, it, done, bracket = 1, 0, False, None
    while it < max_ls:  # bracketing
        if armijo_fails(cur) or (it > 1 and cur[1] >= prev[1]):
            bracket = [prev, cur]
        elif curvature_holds(cur):
            bracket, done = [cur], True
        elif cur[3] >= 0:
            bracket = [prev, cur]
        if bracket is not None:
            break
        step = _cubic_interpolate(prev[0], prev[1], prev[3], cur[0], cur[1], cur[3],
                                  bounds=(cur[0] + 0.01 * (cur[0] - prev[0]), cur[0] * 10))
        prev, cur = cur, probe(step)
        evals, it = evals + 1, it + 1
    if it == max_ls:  # out of evaluations: the best of the start and the last point
        bracket = [(0, f, g, gtd), cur]

    def ordered():  # (index of the lower-loss end, index of the other)
        return (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)

    low, high = ordered()
    stalled = False
    while not done and it < max_ls:  # zoom
        a, b = bracket[0][0], bracket[1][0]
        if abs(b - a) * d_norm < tolerance_change:
            break
        step = _cubic_interpolate(*bracket[0][:2], bracket[0][3], *bracket[1][:2], bracket[1][3])
        left, right = min(a, b), max(a, b)
        margin = 0.1 * (right - left)
        # keep the trial point a tenth of the bracket away from its ends, at once if it already stalled there
        if min(right - step, step - left) < margin:
            if stalled or step >= right or step <= left:
                step = right - margin if abs(step - right) < abs(step - left) else left + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        cur = probe(step)
        evals, it = evals + 1, it + 1
        if armijo_fails(cur) or cur[1] >= bracket[low][1]:
            bracket[high] = cur
            low, high = ordered()
            continue
        if curvature_holds(cur):
            done = True
        elif cur[3] * (bracket[high][0] - bracket[low][0]) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = cur
    t, f_best, g_best, _ = bracket[low]
    return f_best, g_best, t, evals


def _two_loop(g, dirs, stps, ro, h_diag, al):
    """The L-BFGS direction -H g from the curvature pairs (y in dirs, s in stps, 1/y.s in ro); al is scratch."""
    q = g.neg()
    for i in reversed(range(len(dirs))):
        al[i] = stps[i].dot(q) * ro[i]
        q.add_(dirs[i], alpha=-al[i])
    r = torch.mul(q, h_diag)
    for i, (y, s) in enumerate(zip(dirs, stps)):
        r.add_(s, alpha=al[i] - y.dot(r) * ro[i])
    return r


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one flat vector; step(closure) runs up to max_iter iterations."""

    def __init__(self, params, lr: float | Tensor = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_iter * 5 // 4 if max_eval is None else max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        """Length of the flat vector (a complex parameter counts as its real and imaginary parts)."""
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() * (2 if torch.is_complex(p) else 1) for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """The gradients as one flat real vector, zeros for a parameter without one."""
        parts = []
        for p in self._params:
            if p.grad is None:
                g = p.new(p.numel()).zero_()
            else:
                g = (p.grad.to_dense() if p.grad.is_sparse else p.grad).view(-1)
            parts.append(torch.view_as_real(g).view(-1) if torch.is_complex(g) else g)
        return torch.cat(parts, 0)

    def _add_grad(self, step_size, update) -> None:
        """params += step_size * update, update being a flat vector."""
        offset = 0
        for p in self._params:
            real = torch.view_as_real(p) if torch.is_complex(p) else p
            n = real.numel()
            real.add_(update[offset:offset + n].view_as(real), alpha=step_size)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p.clone(memory_format=torch.contiguous_format) for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, saved in zip(self._params, params_data, strict=True):
            p.copy_(saved)

    def _directional_evaluate(self, closure, x, t, d):
        """(loss, flat gradient) at x + t d; the parameters are left at x."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        """Up to max_iter L-BFGS iterations on the loss the closure computes; returns the closure's first loss."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval, history_size = group["max_iter"], group["max_eval"], group["history_size"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search = group["line_search_fn"]
        state = self.state[self._params[0]]  # the whole optimizer's state lives under its first parameter
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss, evals = float(orig_loss), 1
        state["func_evals"] += 1
        g = self._gather_flat_grad()
        if g.abs().max() <= tol_grad:
            return orig_loss
        d, t, h_diag = state.get("d"), state.get("t"), state.get("H_diag")
        dirs, stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        g_prev, loss_prev = state.get("prev_flat_grad"), state.get("prev_loss")
        converged = False
        for n_iter in range(1, max_iter + 1):
            state["n_iter"] += 1
            first = state["n_iter"] == 1
            if first:  # steepest descent, no curvature history yet
                d, dirs, stps, ro, h_diag = g.neg(), [], [], [], 1
            else:
                y, s = g.sub(g_prev), d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:  # only pairs that keep the inverse-Hessian estimate positive definite
                    if len(dirs) == history_size:
                        del dirs[0], stps[0], ro[0]
                    dirs.append(y)
                    stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                d = _two_loop(g, dirs, stps, ro, h_diag, state.setdefault("al", [None] * history_size))
            if g_prev is None:
                g_prev = g.clone(memory_format=torch.contiguous_format)
            else:
                g_prev.copy_(g)
            loss_prev = loss
            t = min(1.0, 1.0 / g.abs().sum()) * lr if first else lr
            gtd = g.dot(d)
            if gtd > -tol_change:  # not a descent direction
                break
            used = 0
            if line_search is not None:
                if line_search != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x0 = self._clone_param()
                loss, g, t, used = _strong_wolfe(lambda x, step, dd: self._directional_evaluate(closure, x, step, dd),
                                                 x0, t, d, loss, g, gtd, max_ls=max_eval - evals)
                self._add_grad(t, d)
                converged = g.abs().max() <= tol_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # the last iteration's loss is the next step's first evaluation
                    loss = float(closure())
                    g = self._gather_flat_grad()
                    converged = g.abs().max() <= tol_grad
                    used = 1
            evals += used
            state["func_evals"] += used
            if (n_iter == max_iter or evals >= max_eval or converged or d.mul(t).abs().max() <= tol_change
                    or abs(loss - loss_prev) < tol_change):
                break
        state.update(d=d, t=t, old_dirs=dirs, old_stps=stps, ro=ro, H_diag=h_diag, prev_flat_grad=g_prev,
                     prev_loss=loss_prev)
        return orig_loss
