"""torch.distributed's process-group API (PyTorch's distributed_c10d): the default group and the
subgroups, argument checks with PyTorch's texts, and the collectives issued to the group's
backend (ProcessGroupGloo, _gloo.py). Ranks given to the API are global; each call translates them
to the group's ranks."""
import datetime
import enum
import io
import os
import pickle
import warnings

from .. import _creation
from .._C import lib as _core
from .._tensor import Tensor
from . import _gloo, _mpi
from ._gloo import ProcessGroup, ProcessGroupGloo, Work
from ._store import PrefixStore
from .constants import default_pg_timeout
from .rendezvous import rendezvous


class RedOpType(enum.Enum):
    SUM = 0
    PRODUCT = 1
    MIN = 2
    MAX = 3
    BAND = 4
    BOR = 5
    BXOR = 6
    PREMUL_SUM = 7
    AVG = 8


class ReduceOp:
    """c10d's ReduceOp: ReduceOp.SUM etc. are RedOpType members, as in PyTorch."""
    RedOpType = RedOpType
    SUM, PRODUCT, MIN, MAX = RedOpType.SUM, RedOpType.PRODUCT, RedOpType.MIN, RedOpType.MAX
    BAND, BOR, BXOR = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR
    PREMUL_SUM, AVG = RedOpType.PREMUL_SUM, RedOpType.AVG

    def __init__(self, op=RedOpType.SUM):
        self.op = op

    def __eq__(self, other):
        return self.op == getattr(other, "op", other)

    def __hash__(self):
        return hash(self.op)


class Backend(str):
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if value == Backend.UNDEFINED else value


class GroupMember:
    WORLD = None  # the default group once initialised
    NON_GROUP_MEMBER = -100


group = GroupMember


class _World:
    def __init__(self):
        self.default_pg = None
        self.store = None
        self.timeout = default_pg_timeout
        self.group_count = 0
        self.pg_group_ranks = {}  # group -> {global rank: group rank}
        self.pg_names = {}


_world = _World()

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available():
    return True


def is_gloo_available():
    return _gloo.is_available()


def is_mpi_available():
    return _mpi.is_available()


def is_nccl_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_initialized():
    return _world.default_pg is not None


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _get_default_group():
    if _world.default_pg is None:
        raise ValueError(_NOT_INIT)
    return _world.default_pg


def _pg(grp):
    """The group a call runs on: the default one for None / WORLD; a destroyed one raises."""
    if grp is None or grp is GroupMember.WORLD:
        return _get_default_group()
    if grp not in _world.pg_group_ranks:
        raise ValueError("Invalid process group specified or has been destroyed.")
    return grp


def _rank_not_in_group(grp):
    return grp is not None and grp == GroupMember.NON_GROUP_MEMBER


def _warn_not_in_group(op_name):
    global_rank = -1 if GroupMember.WORLD is None else GroupMember.WORLD.rank()
    warnings.warn(f"Running {op_name} on global rank {global_rank} which does not belong to the given group.",
                  stacklevel=3)


def get_group_rank(grp, global_rank):
    if grp is GroupMember.WORLD:
        return global_rank
    if grp not in _world.pg_group_ranks:
        raise ValueError(f"Group {grp} is not registered, please create group with torch.distributed.new_group API")
    ranks = _world.pg_group_ranks[grp]
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {grp}")
    return ranks[global_rank]


def get_global_rank(grp, group_rank):
    if grp is GroupMember.WORLD:
        return group_rank
    if grp not in _world.pg_group_ranks:
        raise ValueError(f"Group {grp} is not registered, please create group with torch.distributed.new_group API")
    for rank, grp_rank in _world.pg_group_ranks[grp].items():
        if grp_rank == group_rank:
            return rank
    raise ValueError(f"Group rank {group_rank} is not part of group {grp}")


def get_process_group_ranks(grp):
    pg = _pg(grp)
    return list(_world.pg_group_ranks[pg])


def _canonical_group_rank(pg, global_rank, group_rank, default=None):
    if global_rank is None and group_rank is None:
        global_rank = default
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        return group_rank
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return get_group_rank(pg if pg is not _world.default_pg else GroupMember.WORLD, global_rank)


def _check_single_tensor(param, name):
    if not isinstance(param, Tensor):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type torch.Tensor
             but got {type(param)} instead.""")


def _check_tensor_list(param, name):
    if not isinstance(param, list):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]
             but got {type(param)} instead.""")
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]
             but got {type(param)} with elements of type {[type(p) for p in param]}.""")


def _ensure_same_dtype(*tensors):
    last = None
    for t in (t for item in tensors for t in (item if isinstance(item, list) else (item,))):
        if last is None:
            last = t.dtype
        elif last != t.dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} and  {t.dtype}")


# ---- what the engine is handed ------------------------------------------------------------

# mt.h's dtype codes the engines carry (not int16 and float8: Gloo's element types), and the integral ones
_CARRIED = {0, 1, 2, 4, 5, 6, 7, 8, 9}
_INTEGRAL = {0, 1, 2, 4, 5}
_BITWISE = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)


def _dtype_code(tensor):
    code = _core.mt_tensor_dtype(tensor._h)
    if code not in _CARRIED:
        raise RuntimeError("Invalid scalar type")
    return code


def _op_code(op, dtype_code):
    op = getattr(op, "op", op)
    if op == RedOpType.AVG:
        op = RedOpType.SUM
    if not isinstance(op, RedOpType):
        raise TypeError(f"all_reduce(): incompatible function arguments: op={op!r} is not a ReduceOp")
    if op == RedOpType.PREMUL_SUM:
        raise RuntimeError("Cannot use ReduceOp.PREMUL_SUM with Gloo")
    if op in _BITWISE and dtype_code not in _INTEGRAL:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    return op.value


def _contiguous(tensor):
    """(a contiguous tensor for Gloo, what to run after the op to write it back into `tensor`)."""
    if tensor.is_contiguous():
        return tensor, lambda: None
    buf = tensor.contiguous()
    return buf, lambda: tensor.copy_(buf)


def _nbytes(t):
    return t.numel() * t.element_size()


def _sizes(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


_CPP_DTYPE = {"torch.float32": "float", "torch.float64": "double", "torch.float16": "c10::Half",
              "torch.bfloat16": "c10::BFloat16", "torch.int64": "long int", "torch.int32": "int",
              "torch.int8": "signed char", "torch.uint8": "unsigned char", "torch.bool": "bool"}


def _options(t):
    return (f"TensorOptions(dtype={_CPP_DTYPE.get(str(t.dtype), str(t.dtype))}, device=cpu, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")


def _check_like(name, tensors, like):
    """ProcessGroupGloo's checks that every tensor has `like`'s dtype and shape."""
    for i, t in enumerate(tensors):
        if t.dtype != like.dtype:
            raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor type at index {i} "
                               f"(expected {_options(like)}, got {_options(t)})")
        if tuple(t.shape) != tuple(like.shape):
            raise RuntimeError(f"ProcessGroupGloo::{name}: invalid tensor size at index {i} "
                               f"(expected {_sizes(like.shape)}, got {_sizes(t.shape)})")


def _check_root(name, pg, root):
    if not 0 <= root < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::{name}: invalid root rank: {root}")


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _empty(shape, dtype):
    return _creation.empty(shape, dtype=dtype)


def _after_avg(op, buf, size):
    if getattr(op, "op", op) == RedOpType.AVG:
        buf.div_(size)


# ---- initialisation -------------------------------------------------------------------------

def _gloo_address():
    """Where this rank listens: GLOO_SOCKET_IFNAME's interface, else the host name if it resolves
    (PyTorch's default device), else loopback."""
    iface = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0]
    if iface:
        return "", iface
    import socket
    try:
        host = socket.gethostname()
        socket.getaddrinfo(host, None)
        return host, ""
    except OSError:
        return "127.0.0.1", ""


def _new_backend(backend, store, rank, size, timeout, group_name):
    backend = Backend(backend)
    if backend == Backend.GLOO:
        if not _gloo.is_available():
            raise RuntimeError("Distributed package doesn't have Gloo built in")
        host, iface = _gloo_address()
        return ProcessGroupGloo(PrefixStore(group_name, store), rank, size, timeout, host, iface)
    if backend == Backend.MPI:
        raise AssertionError("MPI groups are made by _new_mpi_group")
    if backend == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if backend in (Backend.UCC, Backend.XCCL):
        raise RuntimeError(f"Distributed package doesn't have {backend.upper()} built in")
    raise AssertionError(f"Unknown backend type {backend}")


_NO_MPI = ("Distributed package doesn't have MPI built in. MPI is only included if you build PyTorch from source on "
           "a host that has MPI installed.")


def _new_mpi_group(ranks, timeout):
    """An MPI group of the given world ranks (None: all): collective over the world, every rank
    calls it; a non-member gets NON_GROUP_MEMBER."""
    if not _mpi.is_available():
        raise RuntimeError(_NO_MPI)
    comm = _mpi.split(ranks)
    if comm == _mpi.ffi.NULL:
        return GroupMember.NON_GROUP_MEMBER
    me, size = _mpi.world()
    if ranks is not None:
        me, size = ranks.index(me), len(ranks)
    return _mpi.ProcessGroupMPI(comm, me, size, timeout)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None, _ranks=None):
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if not (store is None or init_method is None):
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None:
        if not world_size > 0:
            raise AssertionError("world_size must be positive if using store")
        if not rank >= 0:
            raise AssertionError("rank must be non-negative if using store")
    elif init_method is None:
        init_method = "env://"
    backend = Backend(backend) if backend else Backend.GLOO
    if ":" in backend:  # "cpu:gloo,cuda:nccl": the CPU one is ours
        backend = Backend(dict(p.split(":") for p in backend.split(",")).get("cpu", backend))
    timeout = default_pg_timeout if timeout is None else timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    name = group_name or str(_world.group_count)
    if backend == Backend.MPI:  # MPI's runtime says who is who: no rendezvous, no store
        if world_size != -1 or rank != -1:
            warnings.warn(f"For MPI backend, world_size ({world_size}) and rank ({rank}) are ignored since they are "
                          "assigned by the MPI runtime.", stacklevel=2)
        pg = _new_mpi_group(None, timeout)
        world_size = pg.size()
    else:
        if store is None:
            store, rank, world_size = next(rendezvous(init_method, rank, world_size, timeout=timeout))
            store.set_timeout(timeout)
        pg = _new_backend(backend, store, rank, world_size, timeout, name)
    _world.group_count += 1
    _world.default_pg, _world.store, _world.timeout = pg, store, timeout
    _world.pg_group_ranks[pg] = {i: i for i in range(world_size)}
    _world.pg_names[pg] = name
    GroupMember.WORLD = pg


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    default = _get_default_group()
    world_size = default.size()
    if ranks is not None:
        ranks = sorted(ranks) if sort_ranks else list(ranks)
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"ranks list must not contain duplicate entries, got {ranks}")
        if len(ranks) > world_size:
            raise ValueError("the new group's world size should be less or equal to the world size set by "
                             "init_process_group")
        for r in ranks:
            if r < 0 or r >= world_size:
                raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    else:
        ranks = list(range(world_size))
    # every rank creates every group, member or not, so the names agree (as PyTorch requires)
    name = str(_world.group_count)
    _world.group_count += 1
    me = default.rank()
    backend = Backend(backend or default.name())
    if backend == Backend.MPI:
        pg = _new_mpi_group(ranks, timeout or _world.timeout)
        if pg == GroupMember.NON_GROUP_MEMBER:
            return pg
    elif me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    else:
        pg = _new_backend(backend, _world.store, ranks.index(me), len(ranks), timeout or _world.timeout, name)
    _world.pg_group_ranks[pg] = {r: i for i, r in enumerate(ranks)}
    _world.pg_names[pg] = name
    return pg


def destroy_process_group(group=None):
    if group is None or group is GroupMember.WORLD:
        if _world.default_pg is None:
            raise AssertionError("Process group cannot be None")
        for pg in list(_world.pg_group_ranks):
            pg.shutdown()
        _world.__init__()
        GroupMember.WORLD = None
        return
    if group == GroupMember.NON_GROUP_MEMBER:
        return
    if group not in _world.pg_group_ranks:
        raise ValueError("Invalid process group specified or has been destroyed.")
    group.shutdown()
    del _world.pg_group_ranks[group]
    _world.pg_names.pop(group, None)


def get_rank(group=None):
    if _rank_not_in_group(group):
        return -1
    default = _get_default_group()
    if group is None or group is GroupMember.WORLD:
        return default.rank()
    return get_group_rank(group, default.rank())


def get_world_size(group=None):
    if _rank_not_in_group(group):
        return -1
    return _pg(group).size()


def get_backend(group=None):
    if _rank_not_in_group(group):
        raise ValueError("Invalid process group specified")
    return Backend(_pg(group).name())


# ---- collectives ----------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_reduce")
        return None
    pg = _pg(group)
    code = _dtype_code(tensor)
    opc = _op_code(op, code)
    buf, back = _contiguous(tensor)

    def body(ctx, tag):
        if buf.numel():
            pg.call("allreduce", ctx, pg.ptr(buf), buf.numel(), code, opc, tag)
        _after_avg(op, buf, pg.size())
        back()
    return _finish(pg.enqueue(body, [tensor]), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("broadcast")
        return None
    pg = _pg(group)
    root = _canonical_group_rank(pg, src, group_src, default=0)
    _check_root("broadcast", pg, root)
    _dtype_code(tensor)
    buf, back = _contiguous(tensor)

    def body(ctx, tag):
        if buf.numel():
            pg.call("broadcast", ctx, pg.ptr(buf), _nbytes(buf), root, tag)
        back()
    return _finish(pg.enqueue(body, [tensor]), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce")
        return None
    pg = _pg(group)
    root = _canonical_group_rank(pg, dst, group_dst, default=0)
    _check_root("reduce", pg, root)
    code = _dtype_code(tensor)
    opc = _op_code(op, code)
    buf, back = _contiguous(tensor)

    def body(ctx, tag):
        if buf.numel():
            pg.call("reduce", ctx, pg.ptr(buf), buf.numel(), code, opc, root, tag)
        if pg.rank() == root:
            _after_avg(op, buf, pg.size())
            back()
    return _finish(pg.enqueue(body, [tensor]), async_op)


def _gathered(pg, tensor, name):
    """Issue an allgather of `tensor` into a fresh (size, *shape) buffer; returns (work, buffer)."""
    _dtype_code(tensor)
    inp = tensor.contiguous()
    out = _empty((pg.size(),) + tuple(tensor.shape), tensor.dtype)

    def body(ctx, tag):
        if inp.numel():
            pg.call("allgather", ctx, pg.ptr(inp), pg.ptr(out), _nbytes(inp), tag)
    return body, out


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    _ensure_same_dtype(tensor_list, tensor)
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather")
        return None
    pg = _pg(group)
    if len(tensor_list) != pg.size():
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                           f"(expected length {pg.size()}, got {len(tensor_list)})")
    _check_like("allgather", tensor_list, tensor)
    gather_body, out = _gathered(pg, tensor, "allgather")

    def body(ctx, tag):
        gather_body(ctx, tag)
        for dst, src in zip(tensor_list, out):
            dst.copy_(src)
    return _finish(pg.enqueue(body, tensor_list), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather_into_tensor")
        return None
    pg = _pg(group)
    _check_like("allgather", list(output_tensor.chunk(pg.size())), input_tensor)
    gather_body, out = _gathered(pg, input_tensor, "allgather")

    def body(ctx, tag):
        gather_body(ctx, tag)
        output_tensor.copy_(out.reshape(output_tensor.shape))
    return _finish(pg.enqueue(body, [output_tensor]), async_op)


def _reduce_scatter(pg, output, inputs, op, name):
    """Reduce-scatter as PyTorch's gloo: all-reduce the stacked inputs, keep this rank's slice."""
    code = _dtype_code(output)
    opc = _op_code(op, code)
    flat = inputs()

    def body(ctx, tag):
        if flat.numel():
            pg.call("allreduce", ctx, pg.ptr(flat), flat.numel(), code, opc, tag)
        mine = flat[pg.rank()]
        _after_avg(op, mine, pg.size())
        output.copy_(mine.reshape(output.shape))
    return body


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _ensure_same_dtype(output, input_list)
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce_scatter")
        return None
    pg = _pg(group)
    if len(input_list) != pg.size():
        raise RuntimeError(f"ProcessGroupGloo::reduce_scatter: invalid input tensor list at index 0 "
                           f"(expected length {pg.size()}, got {len(input_list)})")
    _check_like("reduce_scatter", input_list, output)
    from .._shape_ops import stack
    body = _reduce_scatter(pg, output, lambda: stack(input_list).contiguous(), op, "reduce_scatter")
    return _finish(pg.enqueue(body, [output]), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _ensure_same_dtype(output, input)
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce_scatter_tensor")
        return None
    pg = _pg(group)
    if input.numel() != output.numel() * pg.size():
        raise RuntimeError(f"ProcessGroupGloo::reduce_scatter_tensor: input numel {input.numel()} is not "
                           f"world size {pg.size()} times output numel {output.numel()}")
    body = _reduce_scatter(pg, output, lambda: input.reshape(pg.size(), -1).clone(), op, "reduce_scatter_tensor")
    return _finish(pg.enqueue(body, [output]), async_op)


def _rooted(name, tensor, tensors, root, group_root, group, list_name, role, io):
    """gather's and scatter's checks (PyTorch's order and texts): the list only on the root rank,
    group-size tensors like `tensor` there. (pg, root, tensors), or None off the group."""
    _check_single_tensor(tensor, "tensor")
    if tensors:
        _check_tensor_list(tensors, list_name)
    else:
        tensors = []
    _ensure_same_dtype(tensor, tensors)
    if _rank_not_in_group(group):
        _warn_not_in_group(name)
        return None
    pg = _pg(group)
    root = _canonical_group_rank(pg, root, group_root, default=0)
    if pg.rank() == root:
        if not tensors:
            raise ValueError(f"Argument ``{list_name}`` must be specified on {role} rank.")
    elif tensors:
        raise ValueError(f"Argument ``{list_name}`` must NOT be specified on non-{role} ranks.")
    _check_root(name, pg, root)
    if pg.rank() == root:
        if len(tensors) != pg.size():
            raise RuntimeError(f"ProcessGroupGloo::{name}: Incorrect {io.lower()} list size {len(tensors)}. "
                               f"{io} list size should be {pg.size()}, same as size of the process group.")
        _check_like(name, tensors, tensor)
    return pg, root, tensors


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    checked = _rooted("gather", tensor, gather_list, dst, group_dst, group, "gather_list", "destination", "Output")
    if checked is None:
        return None
    pg, root, gather_list = checked
    _dtype_code(tensor)
    inp = tensor.contiguous()
    out = _empty((pg.size(),) + tuple(tensor.shape), tensor.dtype) if pg.rank() == root else None

    def body(ctx, tag):
        if inp.numel():
            pg.call("gather", ctx, pg.ptr(inp), pg.ptr(out) if out is not None else pg.ffi.NULL,
                    _nbytes(inp), root, tag)
        for d, s in zip(gather_list, out if out is not None else ()):
            d.copy_(s)
    return _finish(pg.enqueue(body, gather_list), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    checked = _rooted("scatter", tensor, scatter_list, src, group_src, group, "scatter_list", "source", "Input")
    if checked is None:
        return None
    pg, root, scatter_list = checked
    _dtype_code(tensor)
    inputs = [t.contiguous() for t in scatter_list]
    buf, back = _contiguous(tensor)

    def body(ctx, tag):
        if buf.numel():
            ptrs = pg.ffi.new("void *[]", [pg.ptr(t) for t in inputs]) if inputs else pg.ffi.NULL
            pg.call("scatter", ctx, ptrs, pg.ptr(buf), _nbytes(buf), root, tag)
        back()
    return _finish(pg.enqueue(body, [tensor]), async_op)


def _alltoallv(pg, inp, in_bytes, out, out_bytes):
    def body(ctx, tag):
        ib = pg.ffi.new("int64_t[]", in_bytes)
        ob = pg.ffi.new("int64_t[]", out_bytes)
        pg.call("alltoallv", ctx, pg.ptr(inp), ib, pg.ptr(out), ob, tag)
    return body


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _ensure_same_dtype(output, input)
    if _rank_not_in_group(group):
        _warn_not_in_group("all_to_all_single")
        return None
    pg = _pg(group)
    _dtype_code(input)
    n = pg.size()

    def byte_counts(t, splits):
        row = _nbytes(t) // t.shape[0] if t.dim() and t.shape[0] else 0
        if not splits:
            if t.dim() == 0 or t.shape[0] % n:
                raise ValueError(f"Tensor's dim 0 does not divide equally across group size {n}")
            return [_nbytes(t) // n] * n
        if len(splits) != n or sum(splits) != t.shape[0]:
            raise ValueError("Split sizes doesn't match total dim 0 size")
        return [s * row for s in splits]
    in_bytes, out_bytes = byte_counts(input, input_split_sizes), byte_counts(output, output_split_sizes)
    inp = input.contiguous()
    buf, back = _contiguous(output)
    exchange = _alltoallv(pg, inp, in_bytes, buf, out_bytes)

    def body(ctx, tag):
        exchange(ctx, tag)
        back()
    return _finish(pg.enqueue(body, [output]), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _ensure_same_dtype(output_tensor_list, input_tensor_list)
    if _rank_not_in_group(group):
        _warn_not_in_group("all_to_all")
        return None
    pg = _pg(group)
    for t in input_tensor_list:
        _dtype_code(t)
    from .._shape_ops import cat
    inp = cat([t.reshape(-1) for t in input_tensor_list]).contiguous()
    out = _empty((sum(t.numel() for t in output_tensor_list),), output_tensor_list[0].dtype)
    exchange = _alltoallv(pg, inp, [_nbytes(t) for t in input_tensor_list], out,
                          [_nbytes(t) for t in output_tensor_list])

    def body(ctx, tag):
        exchange(ctx, tag)
        at = 0
        for t in output_tensor_list:
            t.copy_(out[at:at + t.numel()].reshape(t.shape))
            at += t.numel()
    return _finish(pg.enqueue(body, output_tensor_list), async_op)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    if _rank_not_in_group(group):
        _warn_not_in_group("barrier")
        return None
    pg = _pg(group)
    return _finish(pg.enqueue(lambda ctx, tag: pg.call("barrier", ctx, tag)), async_op)


# ---- point to point -------------------------------------------------------------------------

def _peer(pg, rank, group_rank, kind):
    peer = _canonical_group_rank(pg, rank, group_rank)
    if pg.rank() == peer:
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank of the current process.")
    if not 0 <= peer < pg.size():
        raise RuntimeError(f"ProcessGroupGloo: invalid {kind} rank: {peer}")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("isend")
        return None
    pg = _pg(group)
    peer = _peer(pg, dst, group_dst, "destination")
    _dtype_code(tensor)
    return pg.send(tensor.contiguous(), _nbytes(tensor), peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("irecv")
        return None
    pg = _pg(group)
    peer = -1 if src is None and group_src is None else _peer(pg, src, group_src, "source")
    _dtype_code(tensor)
    buf, back = _contiguous(tensor)
    return pg.recv(buf, _nbytes(buf), peer, tag, back)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = _pg(group)
    return get_global_rank(pg if pg is not _world.default_pg else GroupMember.WORLD, work.source_rank)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """Gloo's monitored barrier: every rank reports to rank 0, which names the ranks that did not
    arrive within the timeout, then releases the others."""
    if _rank_not_in_group(group):
        _warn_not_in_group("monitored_barrier")
        return None
    pg = _pg(group)
    ms = int((timeout or _world.timeout).total_seconds() * 1000)
    token = _empty((1,), _dtype_of_u8())
    tag = (1 << 31) | 7  # apart from user tags
    if pg.rank() != 0:
        pg.send(token, 1, 0, tag).wait()
        pg.recv(token, 1, 0, tag).wait()
        return None
    failed = []
    for r in range(1, pg.size()):
        try:
            pg.recv(token, 1, r, tag).wait(datetime.timedelta(milliseconds=ms))
        except RuntimeError:
            failed.append(r)
            if not wait_all_ranks:
                break
    if failed:
        if wait_all_ranks:
            raise RuntimeError(f"Ranks {', '.join(map(str, failed))} failed to pass monitoredBarrier in {ms} ms")
        raise RuntimeError(f"Rank {failed[0]} failed to pass monitoredBarrier in {ms} ms")
    for r in range(1, pg.size()):
        pg.send(token, 1, r, tag).wait()
    return None


def _dtype_of_u8():
    from .. import uint8
    return uint8


# ---- Python objects (pickled into uint8 tensors) --------------------------------------------

def _to_tensor(obj):
    from .. import frombuffer, int64, tensor
    f = io.BytesIO()
    pickle.Pickler(f).dump(obj)
    data = bytearray(f.getvalue())
    return frombuffer(data, dtype=_dtype_of_u8()), tensor([len(data)], dtype=int64)


def _to_object(t, size):
    return pickle.loads(bytes(t[:size].numpy().tobytes()))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    if _rank_not_in_group(group):
        _warn_not_in_group("broadcast_object_list")
        return
    from .. import cat, int64, zeros
    pg = _pg(group)
    root = _canonical_group_rank(pg, src, group_src, default=0)
    if pg.rank() == root:
        pairs = [_to_tensor(o) for o in object_list]
        sizes = cat([s for _, s in pairs])
    else:
        sizes = zeros(len(object_list), dtype=int64)
    broadcast(sizes, group_src=root, group=group)
    if pg.rank() == root:
        payload = cat([t for t, _ in pairs])
    else:
        payload = _empty((int(sizes.sum()),), _dtype_of_u8())
    broadcast(payload, group_src=root, group=group)
    if pg.rank() != root:
        at = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _to_object(payload[at:at + n], n)
            at += n


def _padded(obj, pg):
    """(this rank's pickle padded to the longest, every rank's length)."""
    from .. import zeros
    t, size = _to_tensor(obj)
    sizes = [zeros(1, dtype=size.dtype) for _ in range(pg.size())]
    all_gather(sizes, size, group=pg)
    sizes = [int(s) for s in sizes]
    buf = zeros(max(sizes), dtype=t.dtype)
    buf[:t.numel()] = t
    return buf, sizes


def all_gather_object(object_list, obj, group=None):
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather_object")
        return
    pg = _pg(group)
    buf, sizes = _padded(obj, pg)
    out = [_empty(buf.shape, buf.dtype) for _ in sizes]
    all_gather(out, buf, group=pg)
    for i, (t, n) in enumerate(zip(out, sizes)):
        object_list[i] = _to_object(t, n)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    if _rank_not_in_group(group):
        _warn_not_in_group("gather_object")
        return
    pg = _pg(group)
    root = _canonical_group_rank(pg, dst, group_dst, default=0)
    if pg.rank() == root and object_gather_list is None:
        raise AssertionError("Must provide object_gather_list on dst rank")
    buf, sizes = _padded(obj, pg)
    out = [_empty(buf.shape, buf.dtype) for _ in sizes] if pg.rank() == root else None
    gather(buf, out, group_dst=root, group=pg)
    if pg.rank() == root:
        for i, (t, n) in enumerate(zip(out, sizes)):
            object_gather_list[i] = _to_object(t, n)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    if _rank_not_in_group(group):
        _warn_not_in_group("scatter_object_list")
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    from .. import int64, tensor, zeros
    pg = _pg(group)
    root = _canonical_group_rank(pg, src, group_src, default=0)
    longest = zeros(1, dtype=int64)
    if pg.rank() == root:
        pairs = [_to_tensor(o) for o in scatter_object_input_list]
        longest = tensor([max(int(s) for _, s in pairs)], dtype=int64)
    broadcast(longest, group_src=root, group=pg)
    n = int(longest)
    inputs = sizes = None
    if pg.rank() == root:
        inputs = []
        for t, _ in pairs:
            padded = zeros(n, dtype=t.dtype)
            padded[:t.numel()] = t
            inputs.append(padded)
        sizes = [s for _, s in pairs]
    out, size = _empty((n,), _dtype_of_u8()), zeros(1, dtype=int64)
    scatter(out, inputs, group_src=root, group=pg)
    scatter(size, sizes, group_src=root, group=pg)
    scatter_object_output_list[0] = _to_object(out, int(size))
