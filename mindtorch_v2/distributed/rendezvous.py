"""torch.distributed.rendezvous: an init_method URL becomes (store, rank, world_size), through the
handler registered for its scheme (PyTorch's structure: each handler is a generator yielding the
triplet once): file:// on FileStore; tcp:// and env:// on TCPStore, where rank 0 hosts the store
(multi-tenant, so several groups on one port share it) unless torchrun's agent already hosts it
(TORCHELASTIC_USE_AGENT_STORE=True): then every rank is a client. Beyond PyTorch, env:// takes the
rank and world size from Open MPI's OMPI_COMM_WORLD_RANK/SIZE when RANK / WORLD_SIZE are unset, so
a gloo script runs under mpirun."""
import numbers
import os
import sys
from urllib.parse import urlparse, urlunparse

from ._store import FileStore
from ._tcp_store import TCPStore
from .constants import default_pg_timeout

_rendezvous_handlers = {}

__all__ = ["register_rendezvous_handler", "rendezvous"]


def register_rendezvous_handler(scheme, handler):
    """Register a generator function that yields (store, rank, world_size) for URLs of `scheme`."""
    if scheme in _rendezvous_handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def _query_to_dict(query):
    return {pair[0]: pair[1] for pair in (pair.split("=") for pair in filter(None, query.split("&")))}


def _rendezvous_helper(url, rank, world_size_opt, **kwargs):
    result = urlparse(url)
    if world_size_opt is None:
        world_size = -1
        if result.scheme == "env":
            rank = int(os.environ.get("RANK", rank))
            world_size = int(os.environ.get("WORLD_SIZE", world_size))
    else:
        world_size = world_size_opt
    if rank != -1 or world_size != -1 or world_size_opt is None:
        query_dict = _query_to_dict(result.query)
        if "rank" in query_dict or "world_size" in query_dict:
            raise AssertionError(f"The url: {url} has node-specific arguments(rank, world_size) already.")
        if rank != -1:
            query_dict["rank"] = str(rank)
        if world_size != -1 or world_size_opt is None:
            query_dict["world_size"] = str(world_size)
        result = result._replace(query=f"{'&'.join([f'{k}={v}' for k, v in query_dict.items()])}")
        url = urlunparse(result)
    if result.scheme not in _rendezvous_handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    return _rendezvous_handlers[result.scheme](url, **kwargs)


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    return _rendezvous_helper(url, rank, world_size, **kwargs)


def _rendezvous_error(msg):
    return ValueError("Error initializing torch.distributed using " + msg)


def _rank_and_world_size(query_dict, scheme):
    """The rank and world_size a file:// or tcp:// URL's query must carry (PyTorch's errors)."""
    for key, what in (("rank", "rank"), ("world_size", "world size")):
        if key not in query_dict:
            raise _rendezvous_error(f"{scheme}:// rendezvous: {what} parameter missing")
    return int(query_dict["rank"]), int(query_dict["world_size"])


def _file_rendezvous_handler(url, **kwargs):
    result = urlparse(url)
    path = result.path
    if not path:
        raise _rendezvous_error("file:// rendezvous: path missing")
    rank, world_size = _rank_and_world_size(_query_to_dict(result.query), "file")
    store = FileStore(path, world_size)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _get_use_libuv_from_query_dict(query_dict):
    default = "0" if sys.platform == "win32" else "1"
    return query_dict.get("use_libuv", os.environ.get("USE_LIBUV", default)) == "1"


def _torchelastic_use_agent_store():
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE", None) == str(True)


def _create_c10d_store(hostname, port, rank, world_size, timeout, use_libuv=True):
    if not 0 <= port < 2**16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    if _torchelastic_use_agent_store():
        return TCPStore(host_name=hostname, port=port, world_size=world_size, is_master=False, timeout=timeout)
    return TCPStore(host_name=hostname, port=port, world_size=world_size, is_master=rank == 0,
                    timeout=timeout, multi_tenant=True, use_libuv=use_libuv)


def _tcp_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    result = urlparse(url)
    if result.port is None:
        raise _rendezvous_error("tcp:// rendezvous: port number missing")
    query_dict = _query_to_dict(result.query)
    rank, world_size = _rank_and_world_size(query_dict, "tcp")
    use_libuv = _get_use_libuv_from_query_dict(query_dict)
    if result.hostname is None:
        raise AssertionError("hostname cannot be None")

    store = _create_c10d_store(result.hostname, result.port, rank, world_size, timeout, use_libuv)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("env:// rendezvous: " + msg)

    def _get_env_or_raise(env_var, mpi_var=None):
        env_val = os.environ.get(env_var, None) or (os.environ.get(mpi_var, None) if mpi_var else None)
        if not env_val:
            raise _error(f"environment variable {env_var} expected, but not set")
        return env_val

    query_dict = _query_to_dict(urlparse(url).query)
    if "rank" in query_dict:
        rank = int(query_dict["rank"])
    else:
        rank = int(_get_env_or_raise("RANK", "OMPI_COMM_WORLD_RANK"))
    if "world_size" in query_dict:
        world_size = int(query_dict["world_size"])
    else:
        world_size = int(_get_env_or_raise("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"))
    master_addr = _get_env_or_raise("MASTER_ADDR")
    master_port = int(_get_env_or_raise("MASTER_PORT"))
    use_libuv = _get_use_libuv_from_query_dict(query_dict)

    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("file", _file_rendezvous_handler)
register_rendezvous_handler("tcp", _tcp_rendezvous_handler)
register_rendezvous_handler("env", _env_rendezvous_handler)
