"""torch.save / torch.load, file-compatible with PyTorch in both directions.

save writes PyTorch's zip format (or, with _use_new_zipfile_serialization=False, its legacy
pickle stream). The pickle names PyTorch's globals (torch._utils._rebuild_tensor_v2,
torch.FloatStorage, ...), so real PyTorch loads our files; load maps those torch.* names
to mindtorch_v2. load defaults to weights_only=True (the restricted unpickler).
"""
import copyreg
import importlib
import io
import os
import pickle
import re
import struct
import sys
import tarfile
import tempfile
import shutil
import threading
import warnings
from contextlib import closing, contextmanager
from enum import Enum

from ._C import ffi
from . import _dtype, _utils
from . import _weights_only_unpickler
from ._archive import ArchiveReader, ArchiveWriter, archive_name_for
from ._device import device as _device
from .storage import UntypedStorage, TypedStorage, LEGACY_CLASSES, _get_dtype_from_pickle_storage_type

__all__ = ["SourceChangeWarning", "mkdtemp", "register_package", "location_tag", "default_restore_location",
           "normalize_storage_type", "storage_to_tensor_type", "save", "load", "StorageType", "LoadEndianness",
           "get_crc32_options", "set_crc32_options", "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options", "clear_safe_globals", "get_safe_globals",
           "add_safe_globals", "safe_globals", "get_unsafe_globals_in_checkpoint"]

DEFAULT_PROTOCOL = 2
LONG_SIZE = struct.Struct("=l").size
INT_SIZE = struct.Struct("=i").size
SHORT_SIZE = struct.Struct("=h").size
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
STORAGE_KEY_SEPARATOR = ","

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)

from mmap import MAP_PRIVATE, MAP_SHARED  # noqa: E402


class SourceChangeWarning(Warning):
    pass


@contextmanager
def mkdtemp():
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


class LoadEndianness(Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


class _Config:
    """torch.utils.serialization.config's settings this module honours."""
    compute_crc32 = True
    load_endianness = None
    mmap_flags = MAP_PRIVATE
    load_mmap = False


_config = _Config()


class _SerializationLocal(threading.local):
    def __init__(self):
        super().__init__()
        self.map_location = None
        self.skip_data = False
        self.materialize_fake_tensors = False


_serialization_tls = _SerializationLocal()


def get_default_load_endianness():
    return _config.load_endianness


def set_default_load_endianness(endianness):
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config.load_endianness = endianness


def get_crc32_options():
    return _config.compute_crc32


def set_crc32_options(compute_crc32):
    _config.compute_crc32 = bool(compute_crc32)


def get_default_mmap_options():
    return _config.mmap_flags


class set_default_mmap_options:
    def __init__(self, flags):
        if flags != MAP_PRIVATE and flags != MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, "
                             f"expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _config.mmap_flags
        _config.mmap_flags = flags

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _config.mmap_flags = self.prev


# ---- safe globals -------------------------------------------------------------------------

def clear_safe_globals():
    _weights_only_unpickler._clear_safe_globals()


def get_safe_globals():
    return _weights_only_unpickler._get_safe_globals()


def add_safe_globals(safe_globals):
    _weights_only_unpickler._add_safe_globals(safe_globals)


class safe_globals(_weights_only_unpickler._safe_globals):
    """Context manager adding globals as safe for weights_only load."""


def get_unsafe_globals_in_checkpoint(f):
    safe = set(_weights_only_unpickler._get_allowed_globals()) | set(
        _weights_only_unpickler._get_user_allowed_globals())
    with _open_file_like(f, "rb") as opened:
        if not _is_zipfile(opened):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        reader = ArchiveReader(opened)
        if "constants.pkl" in reader.get_all_records():
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got a torchscript "
                             "checkpoint")
        found = _weights_only_unpickler.get_globals_in_pkl(io.BytesIO(reader.get_record("data.pkl")))
        return list(found.difference(safe))


# ---- locations -------------------------------------------------------------------------------

_package_registry = []


def register_package(priority, tagger, deserializer):
    queue_elem = (priority, tagger, deserializer)
    _package_registry.append(queue_elem)
    _package_registry.sort()


def _cpu_tag(obj):
    if obj.device.type == "cpu":
        return "cpu"


def _meta_tag(obj):
    if obj.device.type == "meta":
        return "meta"


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj


def _meta_deserialize(obj, location):
    if location == "meta":
        return UntypedStorage(obj.nbytes(), device="meta")


def _accelerator_deserialize(obj, location):
    name = re.match(r"[a-z_]+", location)
    name = name.group(0) if name else ""
    if name in ("cuda", "mps", "xpu", "hpu", "mtia", "privateuseone"):
        raise RuntimeError(f"Attempting to deserialize object on a {name.upper()} device but "
                           f"torch.{name}.is_available() is False. If you are running on a CPU-only machine, please "
                           "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.")


register_package(10, _cpu_tag, _cpu_deserialize)
register_package(22, _meta_tag, _meta_deserialize)
register_package(30, lambda obj: None, _accelerator_deserialize)


def _typename(obj):
    t = type(obj)
    return f"{t.__module__.replace('mindtorch_v2', 'torch')}.{t.__name__}"


def location_tag(storage):
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError("don't know how to determine data location of " + _typename(storage))


def default_restore_location(storage, location):
    for _, _, fn in _package_registry:
        result = fn(storage, location)
        if result is not None:
            return result
    raise RuntimeError("don't know how to restore data location of " + _typename(storage) + " (tagged with "
                       + location + ")")


def normalize_storage_type(storage_type):
    import mindtorch_v2
    return getattr(mindtorch_v2, storage_type.__name__)


def storage_to_tensor_type(storage):
    raise NotImplementedError("storage_to_tensor_type: legacy tensor types (torch.FloatTensor...) are not "
                              "implemented")


class StorageType:
    """A legacy <Type>Storage global in a pickle, standing for its dtype."""

    def __init__(self, name):
        self._dtype = _get_dtype_from_pickle_storage_type(name)

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"


def _get_layout(name):
    """Rebuild a layout pickled as torch.serialization._get_layout('torch.strided')."""
    import mindtorch_v2
    for v in vars(mindtorch_v2).values():
        if isinstance(v, mindtorch_v2.layout) and str(v) == name:
            return v
    raise KeyError(name)


def _register_layout_pickling():
    import mindtorch_v2
    copyreg.pickle(mindtorch_v2.layout, lambda obj: (_get_layout, (str(obj),)))


# ---- files --------------------------------------------------------------------------------

def _is_path(f):
    return isinstance(f, (str, os.PathLike))


class _opener:
    def __init__(self, file_like):
        self.file_like = file_like

    def __enter__(self):
        return self.file_like

    def __exit__(self, *args):
        pass


class _open_file(_opener):
    def __init__(self, name, mode):
        super().__init__(open(name, mode))

    def __exit__(self, *args):
        self.file_like.close()


class _open_buffer_reader(_opener):
    def __init__(self, buffer):
        super().__init__(buffer)
        _check_seekable(buffer)


class _open_buffer_writer(_opener):
    def __exit__(self, *args):
        self.file_like.flush()


def _open_file_like(name_or_buffer, mode):
    if _is_path(name_or_buffer):
        return _open_file(name_or_buffer, mode)
    if "w" in mode:
        return _open_buffer_writer(name_or_buffer)
    if "r" in mode:
        return _open_buffer_reader(name_or_buffer)
    raise RuntimeError(f"Expected 'r' or 'w' in mode but got {mode}")


def _check_seekable(f):
    def raise_err_msg(patterns, e):
        for p in patterns:
            if p in str(e):
                msg = (str(e) + ". You can only torch.load from a file that is seekable."
                       + " Please pre-load the data into a buffer like io.BytesIO and try to load from it instead.")
                raise type(e)(msg)
        raise e

    try:
        f.seek(f.tell())
        return True
    except (io.UnsupportedOperation, AttributeError) as e:
        raise_err_msg(["seek", "tell"], e)
    return False


def _is_zipfile(f):
    start = f.tell()
    read_bytes = f.read(4)
    f.seek(start)
    return read_bytes == b"PK\x03\x04"


def _should_read_directly(f):
    if getattr(f, "__module__", None) == "gzip":
        return False
    try:
        return f.fileno() >= 0
    except (io.UnsupportedOperation, AttributeError):
        return False


def _check_save_filelike(f):
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")


# ---- the pickler: PyTorch's global names ---------------------------------------------------

def _torch_global_name(obj):
    """(module, qualname) PyTorch uses for a mindtorch_v2 function or class, or None for anything else."""
    explicit = _explicit_names()
    key = id(obj)
    if key in explicit:
        return explicit[key][1]
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None)
    if module is None or name is None:
        return None
    if module == "mindtorch_v2" or module.startswith("mindtorch_v2."):
        return "torch" + module[len("mindtorch_v2"):], name
    return None


_EXPLICIT = None


def _explicit_names():
    global _EXPLICIT
    if _EXPLICIT is None:
        import mindtorch_v2 as mt
        pairs = [(mt.Tensor, ("torch", "Tensor")), (mt.Size, ("torch", "Size")), (mt.device, ("torch", "device")),
                 (mt.dtype, ("torch", "dtype")),
                 (_utils._rebuild_from_type_v2, ("torch._tensor", "_rebuild_from_type_v2"))]
        _EXPLICIT = {id(o): (o, n) for o, n in pairs}
    return _EXPLICIT


class _TorchPickler(pickle._Pickler):
    """pickle's Python pickler, writing PyTorch's names for mindtorch_v2 globals and dtypes."""

    def __init__(self, file, protocol, persistent_id):
        super().__init__(file, protocol)
        self._pid = persistent_id

    def persistent_id(self, obj):
        return self._pid(obj)

    def save(self, obj, save_persistent_id=True):
        t = type(obj)
        if (t is _dtype.dtype or t is _device) and id(obj) not in self.memo:
            self.framer.commit_frame()
            if t is _dtype.dtype:  # torch.float32 pickles as the global torch.float32
                self._write_global(obj, "torch", obj._name)
            else:  # torch.device('cpu') pickles as device('cpu'), the index only when there is one
                # (a fresh type string: PyTorch's device.type is a new object, never a memo hit)
                kind = "".join(list(obj.type))
                self.save_reduce(_device, (kind,) if obj.index is None else (kind, obj.index), obj=obj)
            return
        super().save(obj, save_persistent_id)

    def save_global(self, obj, name=None):
        names = _torch_global_name(obj) if name is None else None
        if names is None:
            return super().save_global(obj, name)
        self._write_global(obj, *names)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[type(_get_layout)] = save_global  # functions: the base table would bypass the override

    def _write_global(self, obj, module, name):
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)


def _make_pickler(pickle_module, f, protocol, persistent_id):
    if pickle_module is pickle:
        return _TorchPickler(f, protocol, persistent_id)

    class _Pickler(pickle_module.Pickler):  # another pickle module: its own names (mindtorch_v2.*)
        def persistent_id(self, obj):
            return persistent_id(obj)

    return _Pickler(f, protocol=protocol)


def _storage_record(obj):
    """(untyped storage, dtype, pickled storage type, numel) of a storage object being saved."""
    import mindtorch_v2
    if isinstance(obj, TypedStorage):
        return (obj._untyped_storage, obj.dtype, getattr(mindtorch_v2, obj._pickle_storage_type()), obj._size())
    return obj, _dtype.uint8, UntypedStorage, obj.nbytes()


def _storage_bytes(storage):
    """The storage's bytes as a buffer (no copy)."""
    if storage.device.type == "meta":
        raise RuntimeError("Cannot copy out of meta tensor; no data!")
    n = storage.nbytes()
    return ffi.buffer(ffi.cast("char *", storage.data_ptr()), n) if n else b""


# ---- save ------------------------------------------------------------------------------------

def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)"""
    _check_save_filelike(f)
    _register_layout_pickling()
    if isinstance(f, os.PathLike):
        f = os.fspath(f)
    if _use_new_zipfile_serialization:
        if isinstance(f, str):
            try:
                name = archive_name_for(f) if f.isascii() else "archive"
            except RuntimeError:
                raise RuntimeError(f"[enforce fail at inline_container.cc] . invalid file name: {f}") from None
            with open(f, "wb") as out:
                _save(obj, ArchiveWriter(out, name, _config.compute_crc32), pickle_module, pickle_protocol,
                      _disable_byteorder_record)
        else:
            if not callable(getattr(f, "write", None)):
                raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")
            _save(obj, ArchiveWriter(f, "archive", _config.compute_crc32), pickle_module, pickle_protocol,
                  _disable_byteorder_record)
            f.flush()
        return
    if _serialization_tls.skip_data:
        raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False")
    with _open_file_like(f, "wb") as opened_file:
        _legacy_save(obj, opened_file, pickle_module, pickle_protocol)


def _save(obj, writer, pickle_module, pickle_protocol, _disable_byteorder_record):
    serialized = {}
    id_map = {}
    storage_dtypes = {}

    def persistent_id(o):
        if not isinstance(o, (TypedStorage, UntypedStorage)):
            return None
        storage, dtype, storage_type, numel = _storage_record(o)
        if storage.device.type != "meta" and storage.data_ptr() != 0:
            known = storage_dtypes.setdefault(storage.data_ptr(), dtype)
            if known is not dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different "
                                   "types")
        key = id_map.setdefault(storage._key(), str(len(id_map)))
        serialized[key] = storage
        return ("storage", storage_type, key, location_tag(storage), numel)

    data_buf = io.BytesIO()
    _make_pickler(pickle_module, data_buf, pickle_protocol, persistent_id).dump(obj)
    writer.write_record("data.pkl", data_buf.getbuffer())
    writer.write_record(".format_version", b"1")
    writer.write_record(".storage_alignment", b"64")
    if not _disable_byteorder_record:
        writer.write_record("byteorder", sys.byteorder.encode())
    for key, storage in serialized.items():
        writer.write_record(f"data/{key}", _storage_bytes(storage))
    writer.write_end_of_file()


def _legacy_save(obj, f, pickle_module, pickle_protocol):
    serialized_container_types = {}
    serialized_storages = {}
    keys = {}
    storage_dtypes = {}

    def persistent_id(o):
        from . import nn
        Module = getattr(nn, "Module", None)
        if Module is not None and isinstance(o, type) and issubclass(o, Module):
            if o in serialized_container_types:
                return None
            serialized_container_types[o] = True
            source_file = source = None
            try:
                import inspect
                source_lines, _ = inspect.getsourcelines(o)
                source_file = inspect.getsourcefile(o)
                source = "".join(source_lines)
            except Exception:
                warnings.warn("Couldn't retrieve source code for container of type " + o.__name__
                              + ". It won't be checked for correctness upon loading.", stacklevel=2)
            return ("module", o, source_file, source)
        if not isinstance(o, (TypedStorage, UntypedStorage)):
            return None
        storage, dtype, storage_type, numel = _storage_record(o)
        if storage.data_ptr() != 0:
            known = storage_dtypes.setdefault(storage.data_ptr(), dtype)
            if known is not dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different "
                                   "types")
        k = storage._key()
        if k not in keys:  # PyTorch keys by the storage's address
            key = str(storage._cdata)
            while key in serialized_storages:
                key += "_"
            keys[k] = key
            serialized_storages[key] = (storage, dtype)
        return ("storage", storage_type, keys[k], location_tag(storage), numel, None)

    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": SHORT_SIZE, "int": INT_SIZE, "long": LONG_SIZE}}
    pickle_module.dump(MAGIC_NUMBER, f, protocol=pickle_protocol)
    pickle_module.dump(PROTOCOL_VERSION, f, protocol=pickle_protocol)
    pickle_module.dump(sys_info, f, protocol=pickle_protocol)
    _make_pickler(pickle_module, f, pickle_protocol, persistent_id).dump(obj)
    serialized_storage_keys = sorted(serialized_storages.keys())
    pickle_module.dump(serialized_storage_keys, f, protocol=pickle_protocol)
    f.flush()
    for key in serialized_storage_keys:
        storage, dtype = serialized_storages[key]
        storage._write_file(f, _should_read_directly(f), True, dtype.itemsize)


# ---- load ------------------------------------------------------------------------------------

def _default_to_weights_only(pickle_module):
    return pickle_module is None


def _get_wo_message(message):
    DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    has_unsafe_global = re.search(r"GLOBAL (\S+) was not an allowed global by default.", message) is not None
    has_blocklist = re.search(r"whose module (\S+) is blocked", message) is not None
    has_import = re.search(r"(\S+) must be (\S+) to load", message) is not None
    if has_unsafe_global:
        updated = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                   "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                   f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                   "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    else:
        if has_import:
            return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
        updated = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if not has_blocklist:
            updated += ("Please file an issue with the following so that we can make `weights_only=True` compatible "
                        "with your use case: WeightsUnpickler error: ")
        updated += "\n\n" + message
    return updated + DOCS_MESSAGE


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None, **pickle_load_args)"""
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = _default_to_weights_only(pickle_module)
    true_values = ["1", "y", "yes", "true"]
    force_wo = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    force_no_wo = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    if force_wo and force_no_wo:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    elif force_wo:
        weights_only = True
    elif force_no_wo and weights_only_not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=2)
        weights_only = False
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    if mmap is None:
        mmap = _config.load_mmap
    if "encoding" not in pickle_load_args:
        pickle_load_args["encoding"] = "utf-8"

    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)

    with _open_file_like(f, "rb") as opened_file:
        if _is_zipfile(opened_file):
            reader = ArchiveReader(opened_file)
            if "constants.pkl" in reader.get_all_records():
                raise NotImplementedError("torch.load of a TorchScript archive (torch.jit.load) is not supported")
            overall_storage = None
            if mmap:
                if not _is_path(f):
                    raise ValueError("f must be a file path in order to use the mmap argument")
                overall_storage = UntypedStorage.from_file(os.fspath(f), _config.mmap_flags == MAP_SHARED,
                                                           os.path.getsize(f))
            if weights_only:
                try:
                    return _load(reader, map_location, _weights_only_unpickler, overall_storage=overall_storage,
                                 **pickle_load_args)
                except pickle.UnpicklingError as e:
                    raise pickle.UnpicklingError(_get_wo_message(str(e))) from None
            return _load(reader, map_location, pickle_module, overall_storage=overall_storage, **pickle_load_args)
        if mmap:
            f_name = "" if not isinstance(f, str) else f"{f}, "
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({f_name}_use_new_zipfile_serialization=True), "
                               "please torch.save your checkpoint with this option in order to use mmap.")
        if weights_only:
            try:
                return _legacy_load(opened_file, map_location, _weights_only_unpickler, **pickle_load_args)
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_get_wo_message(str(e))) from None
        return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)


def _load_safetensors(path, map_location):
    try:
        import safetensors.torch
    except ImportError as e:
        raise RuntimeError("Attempting to load a safetensors file but safetensors is not installed. Please install "
                           "safetensors with: pip install safetensors") from e
    device = "cpu"
    if map_location is not None:
        if isinstance(map_location, (str, bytes, _device)):
            device = str(map_location)
        elif isinstance(map_location, dict):
            raise RuntimeError("Loading safetensors file with dict map_location is not supported. Use a device "
                               "string or torch.device instead.")
        elif callable(map_location):
            raise RuntimeError("Loading safetensors file with callable map_location is not supported. Use a device "
                               "string or torch.device instead.")
    return safetensors.torch.load_file(path, device=device)


def _maybe_decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _get_restore_location(map_location):
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore_location(storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        loc = _maybe_decode_ascii(map_location)
        return lambda storage, location: default_restore_location(storage, loc)
    if isinstance(map_location, _device):
        return lambda storage, location: default_restore_location(storage, str(map_location))

    def restore_location(storage, location):
        result = map_location(storage, location)
        if result is None:
            result = default_restore_location(storage, location)
        return result

    return restore_location


def _is_meta_location(map_location):
    if isinstance(map_location, str):
        return map_location == "meta"
    if isinstance(map_location, _device):
        return map_location.type == "meta"
    return False


def _to_untyped(storage):
    if isinstance(storage, TypedStorage):
        return storage._untyped_storage
    if not isinstance(storage, UntypedStorage):
        raise RuntimeError(f"map_location should return a storage, got {type(storage).__name__}")
    return storage


def _find_global(module, name):
    """torch.* names resolve to mindtorch_v2 (other names as pickle resolves them)."""
    if module == "torch.tensor":
        module = "torch._tensor"
    if module == "torch._tensor" and name == "_rebuild_from_type_v2":
        return _utils._rebuild_from_type_v2
    if module == "torch" and name in LEGACY_CLASSES:
        return LEGACY_CLASSES[name]
    if module == "torch" or module.startswith("torch."):
        target = "mindtorch_v2" + module[len("torch"):]
        obj = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    return None


def _unpickler_class(pickle_module):
    class UnpicklerWrapper(pickle_module.Unpickler):
        def find_class(self, mod_name, name):
            if type(name) is str and "Storage" in name:
                try:
                    return StorageType(name)
                except KeyError:
                    pass
            obj = _find_global(mod_name, name)
            return obj if obj is not None else super().find_class(mod_name, name)

    return UnpicklerWrapper


def _storage_dtype(storage_type):
    """the dtype a pickled storage record names (untrusted: anything else is refused)"""
    if storage_type is UntypedStorage:
        return _dtype.uint8
    if isinstance(storage_type, StorageType):
        return storage_type.dtype
    if isinstance(storage_type, type) and issubclass(storage_type, TypedStorage) and \
            isinstance(getattr(storage_type, "_fixed_dtype", None), _dtype.dtype):
        return storage_type._fixed_dtype
    raise pickle.UnpicklingError(f"persistent_load: {storage_type!r} is not a storage type")


def _load(reader, map_location, pickle_module, pickle_file="data.pkl", overall_storage=None, **pickle_load_args):
    restore_location = _get_restore_location(map_location)
    loaded_storages = {}
    meta = _is_meta_location(map_location)

    byteorder = b"little"
    if reader.has_record("byteorder"):
        byteorder = reader.get_record("byteorder")
        if byteorder not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + byteorder.decode("ascii", "replace"))
    elif get_default_load_endianness() == LoadEndianness.BIG:
        byteorder = b"big"
    elif get_default_load_endianness() == LoadEndianness.NATIVE:
        byteorder = sys.byteorder.encode()

    def load_tensor(dtype, nbytes, key, location):
        name = f"data/{key}"
        size = reader.record_size(name)
        if size != nbytes:
            raise RuntimeError(f"PytorchStreamReader: record {name} has {size} bytes but its storage needs {nbytes}")
        if meta:
            storage = UntypedStorage(nbytes, device="meta")
            storage._checkpoint_offset = reader.get_record_offset(name)
        elif overall_storage is not None:
            if not reader.is_stored(name):
                raise RuntimeError(f"mmap=True needs uncompressed records, but {name} is compressed")
            offset = reader.get_record_offset(name)
            storage = overall_storage[offset:offset + nbytes]
        else:
            storage = UntypedStorage(nbytes)
            if nbytes:
                reader.read_record_into(name, memoryview(ffi.buffer(ffi.cast("char *", storage.data_ptr()), nbytes)))
        if byteorder.decode() != sys.byteorder:
            storage.byteswap(dtype)
        wrap = storage if meta else _to_untyped(restore_location(storage, location))
        typed = TypedStorage(wrap_storage=wrap, dtype=dtype, _internal=True)
        loaded_storages[key] = typed
        return typed

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple) or len(saved_id) != 5:
            raise pickle.UnpicklingError(f"persistent_load: unexpected persistent id {saved_id!r}")
        typename = _maybe_decode_ascii(saved_id[0])
        if typename != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got "
                                         f"'{typename}'")
        storage_type, key, location, numel = saved_id[1:]
        dtype = _storage_dtype(storage_type)
        key, location = _maybe_decode_ascii(key), _maybe_decode_ascii(location)
        if not isinstance(key, str) or not isinstance(location, str) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"persistent_load: malformed storage record {saved_id!r}")
        if key in loaded_storages:
            typed = loaded_storages[key]
            return typed if typed.dtype is dtype else TypedStorage(wrap_storage=typed._untyped_storage, dtype=dtype,
                                                                   _internal=True)
        return load_tensor(dtype, numel * dtype.itemsize, key, location)

    data_file = io.BytesIO(reader.get_record(pickle_file))
    if pickle_module is _weights_only_unpickler:
        unpickler = _weights_only_unpickler.Unpickler(data_file, **pickle_load_args)
    else:
        unpickler = _unpickler_class(pickle_module)(data_file, **pickle_load_args)
    unpickler.persistent_load = persistent_load
    _serialization_tls.map_location = map_location
    try:
        return unpickler.load()
    finally:
        _serialization_tls.map_location = None


def _legacy_load(f, map_location, pickle_module, **pickle_load_args):
    deserialized_objects = {}
    restore_location = _get_restore_location(map_location)
    weights_only = pickle_module is _weights_only_unpickler

    def make_unpickler(file):
        if weights_only:
            return _weights_only_unpickler.Unpickler(file, **pickle_load_args)
        return _unpickler_class(pickle_module)(file, **pickle_load_args)

    def load_pickle(file):  # (torch.* names map to mindtorch_v2 here too)
        return make_unpickler(file).load()

    def legacy_tar_load(f):
        objects = {}

        def persistent_load(saved_id):
            if isinstance(saved_id, tuple):
                return saved_id[0]
            return objects[int(saved_id)]

        with closing(tarfile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT)) as tar, mkdtemp() as tmpdir:
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the legacy .tar format. "
                                   + UNSAFE_MESSAGE)
            tar.extract("storages", path=tmpdir, filter="data")
            with open(os.path.join(tmpdir, "storages"), "rb", 0) as sf:
                num_storages = load_pickle(sf)
                for _ in range(num_storages):
                    key, location, storage_type = load_pickle(sf)
                    dtype = storage_type._dtype
                    obj = UntypedStorage._new_with_file(sf, dtype.itemsize)
                    obj = _to_untyped(restore_location(obj, location))
                    objects[key] = TypedStorage(wrap_storage=obj, dtype=dtype, _internal=True)
                for target_cdata, root_cdata, offset, numel in load_pickle(sf):
                    root = objects[root_cdata]
                    k = root.dtype.itemsize
                    objects[target_cdata] = TypedStorage(
                        wrap_storage=root._untyped_storage[offset * k:(offset + numel) * k], dtype=root.dtype,
                        _internal=True)
            tar.extract("tensors", path=tmpdir, filter="data")
            from ._tensor_serial import tensor_on_storage
            with open(os.path.join(tmpdir, "tensors"), "rb", 0) as tf:
                num_tensors = load_pickle(tf)
                for _ in range(num_tensors):
                    key, storage_id, _ = load_pickle(tf)
                    storage = objects[storage_id]
                    (ndim,) = struct.unpack("<i", tf.read(4))
                    tf.read(4)
                    size = struct.unpack(f"<{ndim}q", tf.read(8 * ndim))
                    stride = struct.unpack(f"<{ndim}q", tf.read(8 * ndim))
                    (storage_offset,) = struct.unpack("<q", tf.read(8))
                    objects[key] = tensor_on_storage(storage._untyped_storage, storage.dtype, storage_offset, size,
                                                     stride)
            unpickler = make_unpickler(tar.extractfile("pickle"))
            unpickler.persistent_load = persistent_load
            return unpickler.load()

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple) or not saved_id:
            raise pickle.UnpicklingError(f"persistent_load: unexpected persistent id {saved_id!r}")
        typename = _maybe_decode_ascii(saved_id[0])
        data = saved_id[1:]
        if typename == "module":
            return data[0]
        if typename != "storage" or len(data) != 5:
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        storage_type, root_key, location, numel, view_metadata = data
        location = _maybe_decode_ascii(location)
        dtype = _storage_dtype(storage_type)
        if type(numel) is not int or numel < 0 or not isinstance(location, str) or not (
                view_metadata is None or (isinstance(view_metadata, tuple) and len(view_metadata) == 3 and
                                          all(type(v) is int and v >= 0 for v in view_metadata[1:]))):
            raise pickle.UnpicklingError(f"persistent_load: malformed storage record {saved_id!r}")
        nbytes = numel * dtype.itemsize
        if root_key not in deserialized_objects:
            obj = UntypedStorage(nbytes)
            obj = _to_untyped(restore_location(obj, location))
            deserialized_objects[root_key] = TypedStorage(wrap_storage=obj, dtype=dtype, _internal=True)
        typed = deserialized_objects[root_key]
        if view_metadata is not None:
            view_key, offset, view_size = view_metadata
            k = dtype.itemsize
            if view_key not in deserialized_objects:
                deserialized_objects[view_key] = TypedStorage(
                    wrap_storage=typed._untyped_storage[offset * k:(offset + view_size) * k], dtype=dtype,
                    _internal=True)
            return deserialized_objects[view_key]
        return typed

    _check_seekable(f)
    f_should_read_directly = _should_read_directly(f)
    if f_should_read_directly and f.tell() == 0:
        try:
            return legacy_tar_load(f)
        except tarfile.TarError:
            if _is_zipfile(f):
                raise RuntimeError(f"{f.name} is a zip archive (did you mean to use torch.jit.load()?)") from None
            f.seek(0)

    if not hasattr(f, "readinto") and not hasattr(f, "readline"):
        f = io.BytesIO(f.read())
    magic_number = load_pickle(f)
    if magic_number != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = load_pickle(f)
    if protocol_version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    load_pickle(f)  # sys_info
    unpickler = make_unpickler(f)
    unpickler.persistent_load = persistent_load
    result = unpickler.load()
    deserialized_storage_keys = load_pickle(f)
    offset = f.tell() if f_should_read_directly else None
    for key in deserialized_storage_keys:
        if key not in deserialized_objects:
            raise RuntimeError(f"storage key {key!r} not found in deserialized_objects")
        typed = deserialized_objects[key]
        typed._untyped_storage._set_from_file(f, offset, f_should_read_directly, typed.dtype.itemsize)
        if offset is not None:
            offset = f.tell()
    return result


class skip_data:
    """Not implemented: saving/loading checkpoints without their storage bytes."""

    def __init__(self, materialize_fake_tensors=False):
        raise NotImplementedError("torch.serialization.skip_data is not implemented")
