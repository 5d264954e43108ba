"""torch.optim.swap_in_optimizer_params_and_state: run an optimizer on other parameters and an
optimizer.state_dict()-shaped state for the duration of a with-block."""
import contextlib
from collections import defaultdict

from .._tensor import Tensor

_API = "swap_in_optimizer_params_and_state"


def _fail(text):
    raise RuntimeError(text)


def _checked_state(sd):
    """sd['state']: a dict keyed by packed parameter ids whose entries are dicts."""
    state = sd.get("state")
    if not isinstance(state, dict):
        _fail(f"{_API} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids to "
              f"per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        _fail(f"{_API} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        _fail(f"{_API} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _checked_groups(optimizer, sd):
    """sd['param_groups']: a list with one group per live group, each with the live group's keys and as many
    packed integer ids in 'params' as the live group has parameters."""
    groups = sd.get("param_groups")
    if not isinstance(groups, list):
        _fail(f"{_API} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
              f"got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        _fail("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    for idx, (live, new) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(new, dict):
            _fail(f"{_API} requires each optimizer param group to be a dictionary.")
        ids = new.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            _fail(f"{_API} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed by "
                  "packed parameter ids.")
        if len(ids) != len(live["params"]):
            _fail(f"swapin_optim_state param group {idx} has a different number of params than the live "
                  "optimizer param group.")
        only_new = [k for k in new if k not in live]
        only_live = [k for k in live if k not in new]
        if only_new or only_live:
            _fail(f"{_API} requires optimizer.state_dict()-style param group keys to exactly match the live "
                  f"optimizer group keys for group {idx}. Keys only in swap-in: {only_new}. "
                  f"Keys only in live: {only_live}.")
    return groups


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Give the optimizer's groups the values of swapin_parameters (in param_groups order) and the hyperparameters
    and per-parameter state of swapin_optim_state inside the block; restore the live ones after.  The state
    dicts are shallow copies: in-place tensor updates reach swapin_optim_state, nothing else does."""
    if not optimizer.state:
        _fail(f"{_API} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        _fail(f"{_API} requires a DCP-style optimizer state_dict.")
    state = _checked_state(swapin_optim_state)
    groups = _checked_groups(optimizer, swapin_optim_state)
    # the tensors are matched to the packed ids by position: group 0 takes the first ids' worth, and so on
    tensors = list(swapin_parameters.values())
    per_group, start = [], 0
    for new in groups:
        end = start + len(new["params"])
        if end > len(tensors):
            _fail(f"{_API} requires the explicit parameter state to match optimizer.param_groups ordering.")
        per_group.append(tensors[start:end])
        start = end
    known = {i for new in groups for i in new["params"]}
    extra = [k for k in state if k not in known]
    if extra:
        _fail(f"{_API} requires swapin_optim_state['state'] to be keyed only by packed parameter ids from "
              f"param_groups[*]['params']; got extra keys {extra!r}.")

    live_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]  # shallow: the live 'params' lists keep their identity
    try:
        swapped = defaultdict(dict)
        for live, new, params in zip(optimizer.param_groups, groups, per_group):
            live.update({k: v for k, v in new.items() if k != "params"}, params=params)
            for p, pid in zip(params, new["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for live, snap in zip(optimizer.param_groups, snapshots):
            live.clear()
            live.update(snap)
        optimizer.state = live_state
