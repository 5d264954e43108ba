"""torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook: PowerSGD (Vogels et al., 2019,
arXiv:1905.13727) low-rank gradient compression as DDP communication hooks.

Each gradient matrix M is approximated by P Q^T of rank r: P = M Q is all-reduced and orthonormalized,
then Q = M^T P is all-reduced and averaged, and M becomes P Q^T. The rounding lost by the
approximation is kept per bucket and added to the next iteration's gradient (error feedback), and
the last P and Q start the next power iteration (warm start). Before `start_powerSGD_iter` the
hooks are a plain averaging all-reduce. The random Q of a bucket's first compressed step comes from
torch.randn under a seed drawn from numpy's RandomState(random_seed), as PyTorch's, so both
libraries compress identically.

batched_powerSGD_hook differs from PyTorch 2.13 on purpose: there it raises AssertionError at its
first compressed step (its (n, r) P and Q reach an orthogonalization that only takes 3-D
batches); here they are orthogonalized as a batch of one, the algorithm the hook describes."""
import logging
import math
from collections import defaultdict

import mindtorch_v2 as torch
import mindtorch_v2.distributed as dist
from mindtorch_v2.distributed import distributed_c10d

from . import default_hooks as default

__all__ = ["PowerSGDState", "powerSGD_hook", "batched_powerSGD_hook"]

logger = logging.getLogger(__name__)


def _orthogonalize(matrices, epsilon=0):
    """Orthonormalizes in place the columns of every matrix in a (batch, rows, rank) stack:
    Gram-Schmidt for rank <= 2 and for half precision (which QR does not take), QR otherwise."""
    if not (matrices.dim() == 3 and matrices.shape[2] <= matrices.shape[1]):
        raise AssertionError
    batch, _, rank = matrices.shape
    if rank <= 2 or matrices.dtype in (torch.float16, torch.bfloat16):
        _gram_schmidt(matrices, epsilon)
    else:
        r = torch.empty(batch, rank, rank, device=matrices.device, dtype=matrices.dtype)
        torch.linalg.qr(matrices, out=(matrices, r))


def _gram_schmidt(matrices, epsilon=0):
    """Column by column: normalize it (a zero column becomes NaN unless epsilon > 0), then remove
    its component from the columns after it."""
    rank = matrices.shape[2]
    for i in range(rank):
        col = matrices[:, :, i:i + 1]
        col.div_(torch.norm(col, dim=1, keepdim=True) + epsilon)
        if i + 1 < rank:
            later = matrices[:, :, i + 1:]
            later.sub_(torch.sum(col * later, dim=1, keepdim=True) * col)


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    """(worth compressing, elements uncompressed, elements of P and Q): a matrix is compressed only
    when that shrinks it by more than min_compression_rate."""
    full = num_rows * num_cols
    low_rank = (num_rows + num_cols) * matrix_approximation_rank
    return low_rank * min_compression_rate < full, full, low_rank


def _report_compression_stats(bucket, state):
    """Logs the totals once per compression_stats_logging_frequency iterations, at the last bucket."""
    if bucket.is_last() and state.iter >= state.next_stats_report:
        rate, before, after = state.compression_stats()
        logger.info("Compression stats: iter %s, total before compression %s, total after compression %s, rate %s",
                    state.iter, before, after, rate)
        state.next_stats_report = state.iter + state.compression_stats_logging_frequency


class PowerSGDState:
    """The hooks' hyperparameters and their per-bucket memory (error feedback, the last P and Q),
    shared by every bucket of one DDP model. Picklable without its process group."""

    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter", "min_compression_rate",
                 "orthogonalization_epsilon", "use_error_feedback", "warm_start", "batch_tensors_with_same_shape",
                 "rng", "error_dict", "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency", "next_stats_report"]

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000, min_compression_rate=2,
                 use_error_feedback=True, warm_start=True, orthogonalization_epsilon=0, random_seed=0,
                 compression_stats_logging_frequency=10_000, batch_tensors_with_same_shape: bool = False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            # the reducer rebuilds its buckets after iteration 1, which would orphan the kept tensors
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                             "because PowerSGD can only be applied after the first two iterations in DDP.")
        import numpy as np  # the seeds of Q's random start come from numpy's Mersenne Twister, as PyTorch's
        logger.info("PowerSGD config: matrix_approximation_rank = %s; start_powerSGD_iter = %s; "
                    "min_compression_rate = %s; orthogonalization_epsilon = %s; use_error_feedback = %s; "
                    "warm_start = %s; random_seed = %s; compression_stats_logging_frequency = %s; "
                    "batch_tensors_with_same_shape = %s", matrix_approximation_rank, start_powerSGD_iter,
                    min_compression_rate, orthogonalization_epsilon, use_error_feedback, warm_start, random_seed,
                    compression_stats_logging_frequency, batch_tensors_with_same_shape)
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict = {}  # bucket index -> what compression lost last time (flat, the bucket's length)
        self.p_memory_dict = {}  # bucket index -> every compressed tensor's P, flat
        self.q_memory_dict = {}  # bucket index -> every compressed tensor's Q, flat
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self):
        logger.warning("NOTE: Process group is not serializable and excluded from a saved state.")
        return {name: getattr(self, name) for name in self.__slots__ if name != "process_group"}

    def __setstate__(self, state):
        self.process_group = distributed_c10d._get_default_group()
        logger.warning("NOTE: Process group will be set to a default group (i.e. the world size). If a different "
                       "group is desired, please set `self.process_group` after PowerSGD state is loaded.")
        for name, value in state.items():
            setattr(self, name, value)

    def maybe_increase_iter(self, bucket):
        """One iteration is over when its last bucket has been reduced."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter:
            logger.info("PowerSGD compression starts at iteration %s.", self.iter)

    def compression_stats(self):
        """(elements before / elements after compression, or 0 before any, elements before, elements after)."""
        before, after = self.total_numel_before_compression, self.total_numel_after_compression
        return (before / after if after > 0 else 0), before, after


def _group_and_size(state):
    group = default._group(state.process_group)
    return group, group.size()


def _plain_phase(state, bucket, group):
    """Before start_powerSGD_iter: the Future of plain averaging (the iteration counted); else None."""
    if state.iter >= state.start_powerSGD_iter:
        return None
    state.maybe_increase_iter(bucket)
    return default._allreduce_fut(group, bucket.buffer())


def _with_error_feedback(state, index, flat):
    """Adds the bucket's error from last time to its gradient (a zero error the first time) and
    returns a copy of the sum, to measure this time's error against; None without error feedback."""
    if not state.use_error_feedback:
        return None
    if index in state.error_dict:
        flat.add_(state.error_dict[index])
    else:
        logger.info("A zero tensor of length %s that represents local error is created.", flat.shape[0])
        state.error_dict[index] = torch.zeros(flat.shape[0], device=flat.device, dtype=flat.dtype)
    return flat.detach().clone()


def _end_of_step(state, bucket, index, corrected, flat):
    if state.use_error_feedback:
        state.error_dict[index] = corrected - flat
    if not state.warm_start:
        state.p_memory_dict.clear()
        state.q_memory_dict.clear()
    state.maybe_increase_iter(bucket)


def _summed_now(tensor, group):
    """All-reduce (sum) issued from inside a future callback, waited for there: the next step of a chain."""
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().wait()[0]


def _seeded(state):
    """The seed of a bucket's random Q: the next draw of the state's numpy generator."""
    return int(state.rng.randint(1_000_000_000))


def powerSGD_hook(state, bucket):
    """Layer-wise PowerSGD: each gradient of the bucket that rank-r compression shrinks enough is
    sent as its P and Q; the others (biases, small matrices) are all-reduced together, uncompressed.
    Returns a Future of the bucket's flat buffer, holding the averaged (approximated) gradients."""
    group, world = _group_and_size(state)
    plain_future = _plain_phase(state, bucket, group)
    if plain_future is not None:
        return plain_future
    flat = bucket.buffer()

    index = bucket.index()
    corrected = _with_error_feedback(state, index, flat)

    # Each gradient as a matrix (rows = its first dimension): compressed or sent as is.
    matrices, plain = [], []
    p_numel = q_numel = 0
    for grad in bucket.gradients():
        matrix = grad.view(grad.shape[0], -1)
        rows, cols = matrix.shape
        rank = min(rows, cols, state.matrix_approximation_rank)
        worth, full, low_rank = _should_compress(rows, cols, rank, state.min_compression_rate)
        state.total_numel_before_compression += full
        state.total_numel_after_compression += low_rank if worth else full
        if worth:
            matrices.append(matrix)
            p_numel += rows * rank
            q_numel += cols * rank
        else:
            plain.append(grad)
    _report_compression_stats(bucket, state)
    plain_flat = torch.cat([g.view(-1) for g in plain]) if plain else \
        torch.tensor([], device=flat.device, dtype=flat.dtype)

    fresh = not state.warm_start or index not in state.p_memory_dict
    if fresh:
        if state.warm_start:
            logger.info("Allocating contiguous memory of length %s for Ps, and of length %s for Qs, respectively.",
                        p_numel, q_numel)
        state.p_memory_dict[index] = torch.empty(p_numel, device=flat.device, dtype=flat.dtype)
        state.q_memory_dict[index] = torch.empty(q_numel, device=flat.device, dtype=flat.dtype)

    # The matrices grouped by shape (first-seen order); a group is one (k, rows, cols) batch when
    # batch_tensors_with_same_shape stacks it, else each matrix is a batch of one viewing the bucket.
    by_shape = defaultdict(list)
    for matrix in matrices:
        by_shape[matrix.shape].append(matrix)
    batches = []
    for same in by_shape.values():
        if state.batch_tensors_with_same_shape and len(same) > 1:
            batches.append(torch.stack(same))
        else:
            batches.extend(m.unsqueeze(0) for m in same)

    # Each batch's P and Q are consecutive views of the bucket's flat P and Q memories.
    ps, qs = [], []
    p_at = q_at = 0
    for m in batches:
        k, rows, cols = m.shape
        rank = min(rows, cols, state.matrix_approximation_rank)
        ps.append(state.p_memory_dict[index][p_at:p_at + k * rows * rank].view(k, rows, rank))
        qs.append(state.q_memory_dict[index][q_at:q_at + k * cols * rank].view(k, cols, rank))
        p_at += k * rows * rank
        q_at += k * cols * rank

    eps = state.orthogonalization_epsilon
    if fresh:
        with torch.random.fork_rng(devices=[]):  # the global generator is left as it was
            torch.manual_seed(_seeded(state))
            for q in qs:
                q.copy_(torch.randn(*q.shape, device="cpu", dtype=flat.dtype))
                _orthogonalize(q, eps)
    else:
        for q in qs:  # warm start: last step's Q, re-orthonormalized
            _orthogonalize(q, eps)
    for m, q, p in zip(batches, qs, ps):
        torch.bmm(m, q, out=p)

    # Chained: the uncompressed all-reduce, then the Ps', then the Qs'.
    def unpack_plain_then_sum_ps(fut):
        averaged = fut.value()[0].div_(world)
        at = 0
        for g in plain:
            g.copy_(averaged[at:at + g.numel()].view_as(g))
            at += g.numel()
        return _summed_now(state.p_memory_dict[index], group)

    def orthogonalize_ps_then_sum_qs(fut):
        state.p_memory_dict[index] = fut.value()  # a sum: its scale goes with the normalization
        for p in ps:
            _orthogonalize(p, eps)
        for m, p, q in zip(batches, ps, qs):
            torch.bmm(m.transpose(1, 2), p, out=q)
        return _summed_now(state.q_memory_dict[index], group)

    def approximate(fut):
        state.q_memory_dict[index] = fut.value().div_(world)
        for m, p, q in zip(batches, ps, qs):
            torch.bmm(p, q.transpose(1, 2), out=m)
        for m in batches:  # a stacked batch is a copy: write it back into the bucket
            if m.shape[0] > 1:
                for grad, row in zip(by_shape[m.shape[1:]], m):
                    grad.copy_(row)
        _end_of_step(state, bucket, index, corrected, flat)
        return flat

    first = dist.all_reduce(plain_flat, group=group, async_op=True).get_future()
    return first.then(unpack_plain_then_sum_ps).then(orthogonalize_ps_then_sum_qs).then(approximate)


def batched_powerSGD_hook(state, bucket):
    """PowerSGD of the whole bucket at once: its flat buffer, zero-padded to the next square,
    is the one matrix compressed. Faster than powerSGD_hook, usually much less accurate above
    rank 1. Returns a Future of the bucket's flat buffer (its original length)."""
    group, world = _group_and_size(state)
    plain_future = _plain_phase(state, bucket, group)
    if plain_future is not None:
        return plain_future
    flat = bucket.buffer()

    length = flat.shape[0]
    side = math.ceil(math.sqrt(length))
    rank = state.matrix_approximation_rank
    state.total_numel_before_compression += length
    state.total_numel_after_compression += side * rank * 2
    flat.resize_(side * side)  # grows the bucket's storage in place; shrunk back at the end
    flat[length:].fill_(0)
    _report_compression_stats(bucket, state)

    index = bucket.index()
    corrected = _with_error_feedback(state, index, flat)
    matrix = flat.view(side, side)
    if not state.warm_start or index not in state.p_memory_dict:
        if state.warm_start:
            logger.info("Initializing low-rank tensors P and Q, each of which has a shape of %s x %s.", side, rank)
        state.p_memory_dict[index] = torch.empty(side, rank, device=flat.device, dtype=flat.dtype)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(_seeded(state))
            state.q_memory_dict[index] = torch.randn(side, rank, device="cpu", dtype=flat.dtype).to(flat.device)

    # (side, rank) orthogonalized as a batch of one; PyTorch uses epsilon 0 here whatever the state says
    _orthogonalize(state.q_memory_dict[index].unsqueeze(0))
    torch.matmul(matrix, state.q_memory_dict[index], out=state.p_memory_dict[index])

    def orthogonalize_p_then_sum_q(fut):
        state.p_memory_dict[index] = fut.value()[0]
        _orthogonalize(state.p_memory_dict[index].unsqueeze(0))
        torch.matmul(matrix.t(), state.p_memory_dict[index], out=state.q_memory_dict[index])
        return _summed_now(state.q_memory_dict[index], group)

    def approximate(fut):
        state.q_memory_dict[index] = fut.value().div_(world)
        torch.matmul(state.p_memory_dict[index], state.q_memory_dict[index].t(), out=matrix)
        _end_of_step(state, bucket, index, corrected, flat)
        return flat.resize_(length)

    first = dist.all_reduce(state.p_memory_dict[index], group=group, async_op=True).get_future()
    return first.then(orthogonalize_p_then_sum_q).then(approximate)
