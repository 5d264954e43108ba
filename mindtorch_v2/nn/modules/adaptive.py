"""AdaptiveLogSoftmaxWithLoss (Grave et al., efficient softmax approximation for GPUs): a head over the
shortlist of frequent classes plus one token per cluster, and a low-rank projection per tail cluster."""
from collections import namedtuple

from ..._reduce import argmax
from ..._shape_ops import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = [*cutoffs, n_classes]
        # the head scores the shortlist (classes below cutoffs[0]) and one token per tail cluster
        self.shortlist_size, self.n_clusters = cutoffs[0], len(cutoffs)
        self.head_size = cutoffs[0] + len(cutoffs)
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for depth, (low, high) in enumerate(zip(self.cutoffs, self.cutoffs[1:]), 1):
            hidden = int(in_features // (div_value ** depth))  # each cluster's projection is div_value times smaller
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, high - low, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        output = input.new_zeros(n)
        head_index = target.clone()  # the head column of each row: its class, or its cluster's token
        covered = int(((target >= 0) & (target < self.shortlist_size)).sum())
        for i, (low, high) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            rows = ((target >= low) & (target < high)).nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            covered += rows.numel()
            head_index.index_fill_(0, rows, self.shortlist_size + i)
            logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            output = output.index_copy(0, rows, logprob.gather(1, (target[rows] - low).unsqueeze(1)).squeeze(1))
        if covered != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i, tail in enumerate(self.tail):
            parts.append(F.log_softmax(tail(input), dim=1) + head[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """Log-probabilities of all n_classes classes, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row: log_prob(input).argmax(1), computing the tail only for
        rows whose head argmax is a cluster token."""
        head_output = self.head(input)
        output = argmax(head_output, dim=1)
        in_tail = output >= self.shortlist_size
        if not bool(in_tail.any()):
            return output
        if bool(in_tail.all()):
            return argmax(self._get_full_log_prob(input, head_output), dim=1)
        output[in_tail] = argmax(self._get_full_log_prob(input[in_tail], head_output[in_tail]), dim=1)
        return output
