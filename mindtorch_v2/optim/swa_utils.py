"""torch.optim.swa_utils: weight averaging (SWA, the running mean of the weights; EMA, their exponential
moving average), BatchNorm statistics recomputation, and the SWA learning-rate schedule.  On CPU PyTorch
runs the per-tensor ops below (its foreach kernels are for accelerators), so the results agree."""
import itertools
import math
import warnings
from copy import deepcopy

import mindtorch_v2 as torch  # the package; its attributes are read at call time
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from .lr_scheduler import _format_param, LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _inexact(t):
    return torch.is_floating_point(t) or torch.is_complex(t)


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: avg <- decay * avg + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        pairs = zip(ema_param_list, current_param_list, strict=True)
        if _inexact(ema_param_list[0]):
            for avg, cur in pairs:
                avg.lerp_(cur, 1 - decay)
        else:  # lerp_ has no integer kernel
            for avg, cur in pairs:
                avg.copy_(avg * decay + cur * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors: avg <- avg + (current - avg) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _inexact(averaged_param_list[0]):
            w = 1 / (num_averaged + 1)
            for avg, cur in zip(averaged_param_list, current_param_list, strict=True):
                avg.lerp_(cur, w)
            return
        deltas = [cur - avg for cur, avg in zip(current_param_list, averaged_param_list, strict=True)]
        for avg, delta in zip(averaged_param_list, deltas):
            if isinstance(num_averaged, Tensor):
                avg.addcdiv_(delta, num_averaged + 1)
            else:
                avg.add_(delta, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor, returned: decay * avg + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Running mean of one tensor, returned: avg + (current - avg) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _by_device_and_dtype(avgs, curs):
    """{device: [(averaged list, current list), ...]} split by dtype, in first-appearance order."""
    groups = {}
    for a, c in zip(avgs, curs):
        pair = groups.setdefault((a.device, a.dtype), ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return groups


class AveragedModel(Module):
    """A copy of a model whose parameters (and buffers with use_buffers) hold the average of the values
    passed to update_parameters: equal weights by default, or as avg_fn / multi_avg_fn combine them."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def _tensors(self, model, own):
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return self.parameters() if own else model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold model's current values into the average (the first call copies them)."""
        avgs, curs = [], []
        first = bool(self.n_averaged == 0)
        for a, c in zip(self._tensors(self.module, True), self._tensors(model, False)):
            a, c = a.detach(), c.detach().to(a.device)
            avgs.append(a)
            curs.append(c)
            if first:
                a.copy_(c)
        if self.n_averaged > 0:
            if self.multi_avg_fn is None and self.avg_fn is not None:
                for a, c in zip(avgs, curs, strict=True):
                    a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            else:
                mean = get_swa_avg_fn()
                for (device, _), (group_avgs, group_curs) in _by_device_and_dtype(avgs, curs).items():
                    n = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(group_avgs, group_curs, n)
                    else:
                        for a, c in zip(group_avgs, group_curs, strict=True):
                            a.copy_(mean(a, c, n))
        if not self.use_buffers:  # buffers are not averaged: keep the latest
            for mine, theirs in zip(self.module.buffers(), model.buffers(), strict=True):
                mine.detach().copy_(theirs.detach().to(mine.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the BatchNorm running statistics of model as the plain mean over one pass of loader
    (a batch that is a list or tuple contributes its first element)."""
    saved_momentum = {m: m.momentum for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)}
    if not saved_momentum:
        return
    for bn in saved_momentum:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average over the batches
    was_training = model.training
    model.train()
    for batch in loader:
        x = batch[0] if isinstance(batch, (list, tuple)) else batch
        model(x if device is None else x.to(device))
    for bn, momentum in saved_momentum.items():
        bn.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its swa_lr over anneal_epochs steps ("cos" or "linear"), then hold it."""

    def __init__(self, optimizer, swa_lr: float, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1) -> None:
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the schedule started from, given the lr it reached at weight alpha."""
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def _progress(self, step):
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        """Each group's lr for this step: lr * (1 - alpha) + swa_lr * alpha, alpha the annealed progress; the
        starting lr is recovered from the group's current lr and the previous step's alpha."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        before, now = self._progress(step - 1), self._progress(step)
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], before) for g in groups]
        return [g["swa_lr"] * now + lr0 * (1 - now) for g, lr0 in zip(groups, starts, strict=True)]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """The scheduler's attributes except the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict) -> None:
        """Restore the attributes state_dict() returned."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
