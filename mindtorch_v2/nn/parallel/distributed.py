"""torch.nn.parallel.DistributedDataParallel: PyTorch's module wrapper over the process group. The
gradient bucketing and overlapped all-reduce live in distributed/_reducer.py (PyTorch's Reducer);
this file is the Python half of PyTorch's distributed.py: construction checks and state broadcast,
buffer sync at forward, no_sync, comm hooks, and the join hook for uneven inputs."""
import warnings
from contextlib import contextmanager

from ... import distributed as dist
from ...autograd import is_grad_enabled, no_grad
from ...distributed import _reducer
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25


def _find_tensors(obj):
    """The tensors in a forward output (nested lists, tuples, dicts)."""
    from ..._tensor import Tensor
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


class _DDPJoinHook(JoinHook):
    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        """Shadow the collectives of one DDP iteration of the ranks still training."""
        ddp = self.ddp
        ddp.reducer.push_all_rebuilt_params()
        ddp.reducer.rebuild_buckets()
        ddp._check_and_sync_module_buffers()
        should_sync_backwards = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync_backwards
        if not should_sync_backwards:
            return
        ddp._match_all_reduce_for_bwd_pass()
        if ddp.find_unused_parameters:
            ddp._match_unused_params_allreduce()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        Joinable.__init__(self)
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel({name}=...) is not implemented")
        if process_group is None:
            self.process_group = dist.distributed_c10d._get_default_group()
        else:
            self.process_group = process_group
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self._module_parameters = [p for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        device_types = {p.device.type for p in self._module_parameters}
        if len(device_types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type of devices, but input "
                             f"module parameters locate in {device_types}.")
        self.device_type = next(iter(device_types))
        if device_ids or output_device:
            devices = {p.device for p in self._module_parameters}
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.device_ids = self.output_device = None
        self.static_graph = False
        self.dim = dim
        self.module = module
        self.device = self._module_parameters[0].device
        if broadcast_buffers is not None:
            if forward_sync_buffers is not None:
                warnings.warn("Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
                              "`broadcast_buffers` is deprecated and its value is ignored when `forward_sync_buffers` "
                              "is provided.", FutureWarning, stacklevel=2)
            else:
                warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: "
                              "unlike `broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at "
                              "init. If you rely on buffers NOT being synced at init (e.g. rank-local buffers), keep "
                              "using `broadcast_buffers=False` until `init_sync_buffers` is available.",
                              FutureWarning, stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_sync_buffers = forward_sync_buffers, True
        else:
            self.forward_sync_buffers = init_sync_buffers = broadcast_buffers if broadcast_buffers is not None else True
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.mixed_precision = None
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. "
                          "Please avoid using it.", FutureWarning, stacklevel=2)
        self.broadcast_bucket_size = 250 * _MB
        is_default = bucket_cap_mb is None
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_CAP_MB if is_default else bucket_cap_mb) * _MB)
        first_cap = dist._DEFAULT_FIRST_BUCKET_BYTES if is_default else self.bucket_bytes_cap
        self._distributed_rank = dist.get_rank(self.process_group)
        self.modules_buffers = [b for n, b in module.named_buffers() if n not in self.parameters_to_ignore]

        params = []  # the reducer's: requires grad, shared ones once
        for p in self._module_parameters:
            if p.requires_grad and all(p is not q for q in params):
                params.append(p)
        if init_sync:
            _reducer._verify_param_shape_across_processes(self.process_group, params)
            states = [p.detach() for p in self._module_parameters]
            if init_sync_buffers:
                states += [b.detach() for b in self.modules_buffers]
            if states:
                dist._broadcast_coalesced(self.process_group, states, self.broadcast_bucket_size, 0)
        # Before the first iteration the gradient order is unknown: one bucket in reverse module order
        # (PyTorch's default), or 1 MiB / bucket_cap_mb buckets when unused parameters are searched.
        limits = [first_cap, self.bucket_bytes_cap] if find_unused_parameters and not static_graph else [2 ** 63 - 1]
        bucket_indices, per_bucket = dist._compute_bucket_assignment_by_size(params, limits)
        self.reducer = _reducer.Reducer(params, list(reversed(bucket_indices)), list(reversed(per_bucket)),
                                        self.process_group, find_unused_parameters, gradient_as_bucket_view,
                                        first_cap, self.bucket_bytes_cap)
        self._has_rebuilt_buckets = False
        self._divide_by_initial_world_size = True
        if static_graph:
            self._set_static_graph()

    def _set_static_graph(self):
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.", stacklevel=2)
            return
        self.static_graph = True
        self.reducer.static_graph = True

    # ---- forward --------------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        inputs, kwargs = self._pre_forward(*inputs, **kwargs)
        output = self.module(*inputs, **kwargs)
        return self._post_forward(output)

    def _pre_forward(self, *inputs, **kwargs):
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_forward()
        work = Join.notify_join_context(self)
        if work:
            self.reducer.join_work, self.reducer.div_by_initial = work, self._divide_by_initial_world_size
        if is_grad_enabled() and self.reducer.rebuild_buckets():
            self._has_rebuilt_buckets = True
        if self.will_sync_module_buffers():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        return inputs, kwargs

    def _post_forward(self, output):
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            dynamic = self.find_unused_parameters and not self.static_graph
            first_static = self.static_graph and self.reducer.static_unused is None
            self.reducer.prepare_for_backward(_find_tensors(output) if dynamic or first_static else [])
        else:
            self.require_forward_param_sync = False
        return output

    def train(self, mode=True):
        super().train(mode)
        return self

    @contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward outside synchronizes them all."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- buffers and final model ------------------------------------------------------------

    def will_sync_module_buffers(self):
        return self.require_forward_param_sync and self.forward_sync_buffers and len(self.modules_buffers) > 0

    def _find_common_rank(self, input_rank, rank_cond):
        from ... import tensor
        rank_to_use = tensor([input_rank if rank_cond else -1])
        dist.all_reduce(rank_to_use, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. This indicates a bug in "
                             "PyTorch, please report an issue.")
        return rank_to_use.item()

    def _sync_buffers(self):
        with no_grad():
            rank = self._find_common_rank(self._distributed_rank, True) if self._join_config.enable else 0
            self._sync_module_buffers(rank)

    def _sync_module_buffers(self, authoritative_rank):
        dist._broadcast_coalesced(self.process_group, self.modules_buffers, self.broadcast_bucket_size,
                                  authoritative_rank)

    def _check_and_sync_module_buffers(self):
        if self.will_sync_module_buffers():
            self._sync_module_buffers(self._find_common_rank(self._distributed_rank, False))

    def _sync_final_model(self, is_last_joiner):
        self._authoritative_rank = self._find_common_rank(self._distributed_rank, is_last_joiner)
        states = [p.detach() for p in self._module_parameters]
        if self.forward_sync_buffers:
            states += [b.detach() for b in self.modules_buffers]
        dist._broadcast_coalesced(self.process_group, states, self.broadcast_bucket_size, self._authoritative_rank)

    # ---- join -------------------------------------------------------------------------------

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        from ... import ones, zeros
        flag = ones(1) if not is_joined_rank and self.require_backward_grad_sync else zeros(1)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return flag.item() != 0
        return None

    def _match_all_reduce_for_bwd_pass(self):
        for bucket in self.reducer.zeros_like_grad_buckets():  # one at a time: see Reducer._settle_hook
            self.reducer._run_comm_hook(bucket).wait()

    def _match_unused_params_allreduce(self):
        from ... import zeros_like
        dist.all_reduce(zeros_like(self.reducer.locally_used), group=self.process_group)

    # ---- communication hooks ----------------------------------------------------------------

    def register_comm_hook(self, state, hook):
        """hook(state, GradBucket) -> Future of the bucket's reduced tensor replaces the all-reduce."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self.reducer.comm_hook = (state, hook)

    def _get_ddp_logging_data(self):
        data = {"bucket_sizes": [b.buffer.numel() * b.buffer.element_size() for b in self.reducer.buckets],
                "has_rebuilt_buckets": int(self._has_rebuilt_buckets), "can_set_static_graph": int(self.static_graph)}
        if self.reducer.comm_hook is not None:  # PyTorch's logger records the hook's qualified name
            data["comm_hook"] = getattr(self.reducer.comm_hook[1], "__qualname__", None)
        return data
