"""DistributedDataParallel's Reducer (PyTorch's c10d reducer.cpp, in Python): parameters' gradients
are copied into flat per-dtype buckets as each becomes ready (a post-accumulate-grad hook), and
each full bucket's all-reduce is launched asynchronously, in bucket order, while backward still
runs. A final autograd callback waits for the buckets and writes the averaged gradients back."""
import sys

from .. import _creation
from .._C import ffi as _core_ffi
from ..autograd import Variable, no_grad
from . import distributed_c10d as c10d

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs participate in "
    "calculating loss. \nIf you already have done the above, then the distributed data parallel module wasn't able "
    "to locate the output tensors in the return value of your module's `forward` function. Please include the loss "
    "function and the structure of the return value of `forward` of your module when reporting this issue (e.g. "
    "list, dict, iterable).\nParameter indices which did not receive grad for rank {rank}: {indices}")


def _key(t):
    """The C tensor's address: autograd's AccumulateGrad.variable is another wrapper of the same one."""
    return int(_core_ffi.cast("uintptr_t", t._h))


def _compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(), tensor_indices=()):
    """reducer.cpp's assignment: walk the tensors in order, filling one open bucket per dtype until it
    holds at least the current limit; the limits advance per dtype and the last one repeats. A
    bucket lists tensor_indices[position] when given (the tensors are then in gradient-ready
    order), else positions, and the buckets are sorted by their smallest index. (With several
    dtypes and tensor_indices, PyTorch emits the unfilled buckets in its hash map's order; here in
    the order the dtypes first appear.)
    Returns (bucket indices, each bucket's limit)."""
    if not bucket_size_limits:
        raise RuntimeError("Expected at least one bucket size limit")
    result, open_ = [], {}
    for pos, t in enumerate(tensors):
        i = tensor_indices[pos] if tensor_indices else pos
        if expect_sparse_gradient and expect_sparse_gradient[pos]:
            result.append(([i], sys.maxsize))
            continue
        key = (t.dtype, t.device)
        entry = open_.setdefault(key, [[], 0, 0])
        entry[0].append(i)
        entry[1] += t.numel() * t.element_size()
        limit = bucket_size_limits[min(entry[2], len(bucket_size_limits) - 1)]
        if entry[1] >= limit:
            result.append((entry[0], limit))
            open_[key] = [[], 0, entry[2] + 1]
    for indices, _, step in open_.values():
        if indices:
            result.append((indices, bucket_size_limits[min(step, len(bucket_size_limits) - 1)]))
    if not tensor_indices:
        result.sort(key=lambda r: min(r[0]))
    return [r[0] for r in result], [r[1] for r in result]


def _broadcast_coalesced(process_group, tensors, buffer_size, src=0):
    """Broadcast tensors from src, flattened into one message per dtype of at most buffer_size bytes."""
    from .._shape_ops import cat
    chunks, by_dtype = [], {}
    for t in tensors:
        group = by_dtype.setdefault(t.dtype, [[]])
        if group[-1] and sum(x.numel() * x.element_size() for x in group[-1]) + t.numel() * t.element_size() > \
                buffer_size:
            group.append([])
        group[-1].append(t)
    for groups in by_dtype.values():
        chunks.extend(groups)
    with no_grad():
        for chunk in chunks:
            flat = cat([t.detach().reshape(-1) for t in chunk])
            c10d.broadcast(flat, group_src=src, group=process_group)
            at = 0
            for t in chunk:
                t.detach().copy_(flat[at:at + t.numel()].view(t.shape))
                at += t.numel()


def _verify_param_shape_across_processes(process_group, params):
    """PyTorch's check that every rank wraps the same model: the same number of parameters, then
    each one's sizes as rank 0's (a rank that differs raises; the others see it leave)."""
    me, n = c10d.get_rank(process_group), process_group.size()
    counts = [_creation.zeros(1, dtype=_int64()) for _ in range(n)]
    c10d.all_gather(counts, _creation.tensor([len(params)]), group=process_group)
    for r, count in enumerate(counts):
        if int(count) != len(params):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {me} has {len(params)} params, "
                               f"while rank {r} has inconsistent {int(count)} params.")
    meta = [d for p in params for d in (p.dim(), *p.shape)]
    length = _creation.tensor([len(meta)])
    c10d.broadcast(length, group_src=0, group=process_group)
    theirs = _creation.tensor(meta if me == 0 else [0] * int(length), dtype=_int64())
    c10d.broadcast(theirs, group_src=0, group=process_group)
    theirs, at = theirs.tolist(), 0
    for i, p in enumerate(params):
        ndim = theirs[at] if at < len(theirs) else -1
        if ndim != p.dim() or theirs[at + 1:at + 1 + ndim] != list(p.shape):
            raise RuntimeError(f"[{me}]: params[{i}] in this process with sizes {list(p.shape)} appears not to match "
                               "sizes of the same param in process 0.")
        at += 1 + ndim


class GradBucket:
    """What a communication hook receives: one bucket's flat gradient buffer and its parameters."""

    def __init__(self, index, bucket_count, buffer, gradients, parameters):
        self._index, self._count, self._buffer = index, bucket_count, buffer
        self._gradients, self._parameters = gradients, parameters

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._index == self._count - 1

    def set_buffer(self, buffer):
        self._buffer = buffer


class _Bucket:
    def __init__(self, indices, params, limit):
        self.indices, self.limit = indices, limit
        self.buffer = _creation.zeros(sum(params[i].numel() for i in indices), dtype=params[indices[0]].dtype)
        self.views, at = [], 0
        for i in indices:
            n = params[i].numel()
            self.views.append(self.buffer[at:at + n].view(params[i].shape))
            at += n
        self.pending = len(indices)
        self.future = None


class Reducer:
    """One per DDP module: params are the ones that require grad, in module order."""

    def __init__(self, params, bucket_indices, limits, process_group, find_unused_parameters=False,
                 gradient_as_bucket_view=False, first_bucket_bytes_cap=_DEFAULT_FIRST_BUCKET_BYTES,
                 bucket_bytes_cap=25 * 1024 * 1024):
        self.params, self.pg = params, process_group
        self.find_unused = find_unused_parameters
        self.as_view = gradient_as_bucket_view
        self.caps = [first_bucket_bytes_cap, bucket_bytes_cap]
        self.static_graph = False
        self.comm_hook = None
        self.has_rebuilt = False
        self.rebuilt_order = []
        self.expect_hooks = False  # set by prepare_for_backward, cleared when the reduction finished
        self.first_hook_seen = False
        self.unused = []  # this iteration's locally unused parameters (find_unused / static graph)
        self.static_unused = None  # static_graph: what the first iteration found
        self.static_unused_everywhere = set()
        self.locally_used = _creation.zeros(len(params), dtype=_int32())
        self.used_work = None
        self.join_work, self.div_by_initial = None, True
        self._handles = [p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)]
        self._init_buckets(bucket_indices, limits)

    def _init_buckets(self, bucket_indices, limits):
        self.buckets = [_Bucket(ix, self.params, lim) for ix, lim in zip(bucket_indices, limits)]
        self.where = {}
        for b, bucket in enumerate(self.buckets):
            for k, i in enumerate(bucket.indices):
                self.where[i] = (b, k)
                grad = self.params[i].grad
                if self.as_view and grad is not None:
                    bucket.views[k].copy_(grad)
                    self.params[i].grad = bucket.views[k]
        self.next_bucket = len(self.buckets)

    def remove_hooks(self):
        for h in self._handles:
            h.remove()

    # ---- iteration ----------------------------------------------------------------------------

    def prepare_for_forward(self):
        if self.expect_hooks and self.first_hook_seen:
            missing = [i for i in range(len(self.params)) if not self.ready[i]]
            raise RuntimeError(_UNFINISHED.format(rank=self.pg.rank(), indices=" ".join(map(str, missing))))

    def prepare_for_backward(self, outputs):
        """Arms the hooks for one backward; with outputs (find_unused_parameters), the parameters the
        graph cannot reach are this iteration's unused ones."""
        self.expect_hooks, self.first_hook_seen = True, False
        self.ready = [False] * len(self.params)
        for bucket in self.buckets:
            bucket.pending, bucket.future = len(bucket.indices), None
        self.next_bucket = 0
        if self.static_unused is not None:
            self.unused = self.static_unused
        elif self._search_unused():
            reached = _reachable_leaves(outputs)
            self.unused = [i for i, p in enumerate(self.params) if _key(p) not in reached]
        else:
            self.unused = []

    def _hook(self, i):
        def hook(param):
            self.locally_used[i] = 1
            if not self.expect_hooks:
                return  # no_sync(), or a backward DDP's forward did not arm: gradients stay local
            if not self.first_hook_seen:
                self.first_hook_seen = True
                Variable._execution_engine.queue_callback(self._finalize)
                for j in self.unused:
                    self._mark_ready(j)
            self._mark_ready(i)
        return hook

    def _mark_ready(self, i):
        if self.ready[i]:
            raise RuntimeError(f"Expected to mark a variable ready only once. This error is caused by one of the "
                               f"following reasons: 1) Use of a module parameter outside the `forward` function. "
                               f"2) Reused parameters in multiple reentrant backward passes. Parameter at index {i} "
                               f"has been marked as ready twice.")
        self.ready[i] = True
        if not self.has_rebuilt:
            self.rebuilt_order.append(i)
        b, k = self.where[i]
        bucket, param = self.buckets[b], self.params[i]
        view, grad = bucket.views[k], param.grad
        with no_grad():
            if grad is None:
                view.zero_()
            elif grad.data_ptr() != view.data_ptr():
                view.copy_(grad)
                if self.as_view:
                    param.grad = view
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch()

    def _launch(self):
        # buckets are reduced in order (every rank issues the same collectives in the same order)
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.next_bucket
            bucket = self.buckets[b]
            self._settle_hook()
            bucket.future = self._run_comm_hook(GradBucket(b, len(self.buckets), bucket.buffer, bucket.views,
                                                           [self.params[i] for i in bucket.indices]))
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets) and self._search_unused():
            self._settle_hook()
            self.used_work = c10d.all_reduce(self.locally_used, group=self.pg, async_op=True)

    def _settle_hook(self):
        """With a comm hook, waits for the last launched bucket's future before issuing another
        collective: a hook's callbacks may issue collectives of their own (PowerSGD chains three),
        and every rank must issue them all in the same order."""
        if self.comm_hook is not None and self.next_bucket > 0:
            self.buckets[self.next_bucket - 1].future.wait()

    def _search_unused(self):
        """Whether this iteration finds the unused parameters: every one with find_unused_parameters,
        the first one with static_graph (later ones reuse what it found)."""
        return self.static_unused is None if self.static_graph else self.find_unused

    def _div_factor(self):
        if self.join_work is not None:
            if not self.div_by_initial:
                self.join_work.wait()
                return int(self.join_work.result()[0].item())
        return self.pg.size()

    def _run_comm_hook(self, grad_bucket):
        if self.comm_hook is None:
            grad_bucket.buffer().div_(self._div_factor())
            return c10d.all_reduce(grad_bucket.buffer(), group=self.pg, async_op=True).get_future()
        state, hook = self.comm_hook
        return hook(state, grad_bucket)

    def _finalize(self):
        """The final callback of backward: wait for every bucket and write the averaged gradients."""
        if self.next_bucket < len(self.buckets):
            return  # some parameter got no gradient: the next forward raises (as PyTorch's)
        for bucket in self.buckets:
            result = bucket.future.wait()
            result = result[0] if isinstance(result, list) else result
            if result is not bucket.buffer:
                bucket.buffer.copy_(result.view(bucket.buffer.shape))
        unused_everywhere = self.static_unused_everywhere
        if self.used_work is not None:
            self.used_work.wait()
            unused_everywhere = {i for i, used in enumerate(self.locally_used.tolist()) if not used}
            self.used_work = None
        if self.static_graph and self.static_unused is None:
            self.static_unused, self.static_unused_everywhere = list(self.unused), unused_everywhere
        with no_grad():
            for bucket in self.buckets:
                for i, view in zip(bucket.indices, bucket.views):
                    if i in unused_everywhere:
                        continue
                    param = self.params[i]
                    if self.as_view:
                        param.grad = view
                    elif param.grad is None:
                        param.grad = view.clone()
                    else:
                        param.grad.copy_(view)
        self.locally_used.zero_()
        self.expect_hooks = False
        self.join_work = None

    # ---- bucket rebuilding and join -----------------------------------------------------------

    def should_rebuild(self):
        return not self.has_rebuilt and (self.static_graph or not self.find_unused)

    def rebuild_buckets(self):
        """Once, after the first iteration: buckets from the order gradients became ready (rank 0's
        order, so every rank agrees), a 1 MiB first bucket then bucket_cap_mb ones."""
        if not self.should_rebuild() or len(self.rebuilt_order) != len(self.params):
            return False
        order = _creation.tensor(self.rebuilt_order, dtype=_int64())
        c10d.broadcast(order, group_src=0, group=self.pg)
        order = order.tolist()
        indices, limits = _compute_bucket_assignment_by_size([self.params[i] for i in order], self.caps,
                                                             tensor_indices=order)
        self._init_buckets(indices, limits)
        self.has_rebuilt = True
        return True

    def push_all_rebuilt_params(self):
        """A rank that joined before its first backward: the default (reverse) order stands in."""
        if self.should_rebuild() and len(self.rebuilt_order) != len(self.params):
            self.rebuilt_order = list(reversed(range(len(self.params))))

    def zeros_like_grad_buckets(self):
        return [GradBucket(b, len(self.buckets), _creation.zeros_like(bucket.buffer), bucket.views,
                           [self.params[i] for i in bucket.indices]) for b, bucket in enumerate(self.buckets)]


def _int32():
    from .._dtype import int32
    return int32


def _int64():
    from .._dtype import int64
    return int64


def _reachable_leaves(outputs):
    """The leaf tensors (by C tensor) the autograd graph of outputs reaches."""
    seen, leaves = {}, set()  # id -> node: holding the wrappers keeps their ids unique
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(_key(variable))
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves
