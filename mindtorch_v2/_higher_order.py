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
