"""torch.cond: control flow as a function (for export); eagerly it runs the branch pred selects."""


def cond(pred, true_fn, false_fn, operands=()):
    from ._tensor import Tensor
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred)
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists "
                           f"of tensor leaves, but got {operands}.")
    return true_fn(*operands) if pred else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """torch.while_loop, eagerly: body_fn maps the carried values to new ones while cond_fn holds. (PyTorch
    runs it through torch.compile even eagerly, so its errors there are RuntimeErrors of dynamo's; ours are
    RuntimeErrors of the same conditions.)"""
    from ._dtype import bool as dtype_bool
    from ._tensor import Tensor
    from .utils._pytree import tree_leaves
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    leaves = tree_leaves(carried_inputs)
    if not all(isinstance(v, (Tensor, int)) for v in leaves):
        raise AssertionError(f"{leaves} can only be of {(Tensor, int)} but got {tuple(type(v) for v in leaves)}")

    def holds(values):
        pred = cond_fn(*values)
        if not (isinstance(pred, bool) or isinstance(pred, Tensor) and pred.dim() == 0 and pred.dtype is dtype_bool):
            raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")
        return bool(pred)

    values = carried_inputs
    if not holds(values):  # the inputs come back as new tensors, as the loop's outputs would be
        return tuple(v.clone() if isinstance(v, Tensor) else v for v in values)
    while True:
        out = body_fn(*values)
        if isinstance(out, list):  # PyTorch's tracing takes a list as the tuple it flattens to
            out = tuple(out)
        if not isinstance(out, tuple):
            raise AssertionError(f"body_fn should return a tuple but got {type(out)}")
        if len(out) != len(carried_inputs):
            raise AssertionError("body_fn should return the same number of elements as carried_inputs, "
                                 f"got {len(out)} vs {len(carried_inputs)}")
        values = out
        if not holds(values):
            return values

