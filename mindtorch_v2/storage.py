"""Storages: UntypedStorage (bytes), TypedStorage (bytes + dtype) and the legacy <Type>Storage classes.

The core has no storage handle: a storage is reached through a tensor. An UntypedStorage
therefore holds one uint8 1-D tensor that covers its core storage exactly (offset 0, one
element per byte); every tensor built on it (set_, views) shares that core storage.
A slice of a storage is a new core storage over the same bytes that keeps its parent alive,
as PyTorch's sliced storages are.
"""
import io
import mmap as _mmap
import os
import warnings
import weakref

from ._C import ffi, lib
from . import _dtype, _shared_memory as _shm
from ._core import check, keep_alive
from ._device import device as _device_cls, core_id
from ._dispatch import call

__all__ = ["UntypedStorage", "TypedStorage"]


# ---- byte views over a core storage ---------------------------------------------------

def _as_bytes(t):
    """A uint8 1-D tensor over the whole core storage of t (offset 0, no autograd)."""
    base = t
    if lib.mt_tensor_requires_grad(t._h) or lib.mt_tensor_grad_fn_name(t._h) != ffi.NULL:
        base = call(lib.mt_detach, t._h)
    n = lib.mt_tensor_storage_nbytes(base._h)
    k = lib.mt_dtype_itemsize(lib.mt_tensor_dtype(base._h))
    if k != 1:  # the whole storage in t's dtype, reinterpreted as bytes
        whole = call(lib.mt_as_strided, base._h, 1, [n // k], [1], 0)
        base = call(lib.mt_view_dtype, whole._h, lib.MT_U8)
    u8 = call(lib.mt_as_strided, base._h, 1, [n], [1], 0)  # as_strided checks bounds against the storage
    return u8 if lib.mt_tensor_dtype(u8._h) == lib.MT_U8 else call(lib.mt_view_dtype, u8._h, lib.MT_U8)


def _typed_view(u8, dtype, offset, size, stride):
    """A dtype tensor over the storage of the byte tensor u8 (as_strided checks the bounds)."""
    n = u8.numel()
    k = dtype.itemsize
    whole = u8 if k == 1 else call(lib.mt_as_strided, u8._h, 1, [n - n % k], [1], 0)
    base = call(lib.mt_view_dtype, whole._h, dtype._id)
    return call(lib.mt_as_strided, base._h, len(size), list(size), list(stride), offset)


def _contiguous_strides(size):
    strides, acc = [], 1
    for s in reversed(size):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _blob(ptr, nbytes, owner):
    """A uint8 tensor over external memory [ptr, ptr + nbytes) that keeps owner alive."""
    deleter, ctx = keep_alive(owner)
    return call(lib.mt_from_blob, ffi.cast("void *", ptr), nbytes, 1, [nbytes], [1], 0, lib.MT_U8, deleter, ctx)


def _new_bytes(nbytes, dev=None):
    return call(lib.mt_empty, 1, [nbytes], lib.MT_U8, core_id(dev))


def _is_int(x):
    """A Python or numpy integer (not bool, not a tensor)."""
    return not isinstance(x, (bool, float)) and hasattr(x, "__index__") and not hasattr(x, "_h")


# ---- UntypedStorage --------------------------------------------------------------------

class UntypedStorage:
    """PyTorch's torch.UntypedStorage: a device buffer of bytes."""

    is_sparse = False
    is_sparse_csr = False
    is_cuda = False
    is_hpu = False

    def __init__(self, *args, device=None):
        if len(args) > 1:
            raise TypeError("UntypedStorage(): expected at most one positional argument")
        if not args:
            self._t = _new_bytes(0, device)
        elif _is_int(args[0]):
            n = int(args[0])
            if n < 0:
                raise RuntimeError(f"Storage size must be non-negative, but got {n}")
            self._t = _new_bytes(n, device)
        else:
            from ._creation import tensor
            data = list(args[0])
            t = tensor(data, dtype=_dtype.int64) if data else _new_bytes(0)
            if data and (t.min().item() < 0 or t.max().item() > 255):
                raise RuntimeError("UntypedStorage(): byte values must be in [0, 255]")
            self._t = t.to(_dtype.uint8) if data else t
            if device is not None and core_id(device) != lib.MT_CPU:
                self._t = self._t.to(device)
        self._filename = None
        self._shared = False

    @classmethod
    def _wrap(cls, u8, filename=None, shared=False):
        """A storage over the byte tensor u8 (which covers its core storage exactly)."""
        s = object.__new__(cls)
        s._t = u8
        s._filename = filename
        s._shared = shared
        return s

    @classmethod
    def _of(cls, t):
        """The storage under tensor t."""
        return cls._wrap(_as_bytes(t))

    # ---- size and location ----
    def nbytes(self):
        return self._t.numel()

    def size(self):
        return self._t.numel()

    def __len__(self):
        return self._t.numel()

    def element_size(self):
        return 1

    @property
    def device(self):
        return self._t.device

    def get_device(self):
        return -1

    def data_ptr(self):
        h = self._t._h
        if lib.mt_tensor_device(h) == lib.MT_META or lib.mt_tensor_storage_nbytes(h) == 0:
            return 0
        return int(ffi.cast("uintptr_t", lib.mt_tensor_storage_ptr(h)))

    @property
    def _cdata(self):
        """An identity for this core storage (PyTorch: the StorageImpl address)."""
        h = self._t._h
        if lib.mt_tensor_device(h) == lib.MT_META:
            return id(self)
        return int(ffi.cast("uintptr_t", lib.mt_tensor_storage_ptr(h)))

    def _key(self):
        """Storages with equal keys alias the same bytes (used to keep sharing on save)."""
        return (self._cdata, self.nbytes(), self.device.type)

    @property
    def filename(self):
        return self._filename

    def is_shared(self):
        return self._shared or self._block() is not None

    def is_pinned(self, device=None):
        return False

    def resizable(self):
        return self._filename is None and not self.is_shared()

    def untyped(self):
        return self

    # ---- element access ----
    def _index(self, idx):
        n = self.nbytes()
        i = int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i + n if i < 0 else i

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            return self._slice(start, max(stop, start))
        if not _is_int(idx):
            raise RuntimeError(f"can't index a {type(self).__module__}.{type(self).__name__} with "
                               f"{type(idx).__name__}")
        return self._t[self._index(idx)].item()

    def _slice(self, start, stop):
        """A storage over bytes [start, stop) sharing memory with this one."""
        n = stop - start
        if self.device.type == "meta":
            return UntypedStorage._wrap(_new_bytes(n, "meta"))
        if start == 0 and n == self.nbytes():
            return UntypedStorage._wrap(self._t, self._filename, self._shared)
        ptr = int(ffi.cast("uintptr_t", lib.mt_tensor_storage_ptr(self._t._h))) + start
        return UntypedStorage._wrap(_blob(ptr, n, self._t), self._filename, self._shared)

    def __setitem__(self, idx, value):
        if isinstance(idx, slice):
            self._t[idx] = value
        else:
            self._t[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._t.tolist()

    # ---- copies ----
    def copy_(self, source, non_blocking=None):
        src = source.untyped() if isinstance(source, TypedStorage) else source
        if not isinstance(src, UntypedStorage):
            raise TypeError(f"copy_(): expected a storage, got {type(source).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was {src.nbytes()} bytes")
        self._t.copy_(src._t)
        return self

    def fill_(self, value):
        self._t.fill_(value)
        return self

    def clone(self):
        return UntypedStorage._wrap(self._t.clone())

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        memo = memo.setdefault("torch", {})
        key = self._key()
        if key not in memo:
            memo[key] = self.clone()
        return memo[key]

    def cpu(self):
        return self if self.device.type == "cpu" else UntypedStorage._wrap(self._t.to("cpu"))

    def to(self, *, device, non_blocking=False):
        dev = _device_cls(device) if not isinstance(device, _device_cls) else device
        if dev.type == self.device.type:
            return self
        if dev.type == "meta":
            return UntypedStorage._wrap(_new_bytes(self.nbytes(), "meta"))
        return UntypedStorage._wrap(self._t.to(dev))

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"{type(self).__module__.replace('mindtorch_v2', 'torch')}.{type(self).__name__}"
        raise NotImplementedError("UntypedStorage.type(dtype) is not implemented")

    def resize_(self, size):
        n = int(size)
        if n != self.nbytes() and (not self.resizable() or self.device.type != "cpu"):
            raise RuntimeError("Trying to resize storage that is not resizable")
        if n < self.nbytes():
            raise NotImplementedError("UntypedStorage.resize_ to a smaller size is not implemented")
        if n > self.nbytes():
            check(lib.mt_resize_(self._t._h, 1, [n]))
            self._t._shape = None
        return self

    def _to(self, dtype):
        """A TypedStorage of dtype holding this storage's byte values converted (PyTorch's _to)."""
        t = self._t.to(dtype)
        if t.data_ptr() == self._t.data_ptr() and t.numel():
            t = t.clone()
        return TypedStorage(wrap_storage=UntypedStorage._of(t), dtype=dtype, _internal=True)

    def double(self):
        return self._to(_dtype.float64)

    def float(self):
        return self._to(_dtype.float32)

    def half(self):
        return self._to(_dtype.float16)

    def bfloat16(self):
        return self._to(_dtype.bfloat16)

    def long(self):
        return self._to(_dtype.int64)

    def int(self):
        return self._to(_dtype.int32)

    def short(self):
        return self._to(_dtype.int16)

    def char(self):
        return self._to(_dtype.int8)

    def byte(self):
        return self._to(_dtype.uint8)

    def bool(self):
        return self._to(_dtype.bool)

    def byteswap(self, dtype):
        """Reverse the byte order of every dtype-sized element in place (big-endian files)."""
        k = dtype.itemsize
        if k == 1 or self.nbytes() == 0:
            return
        rows = self.nbytes() // k
        grid = call(lib.mt_as_strided, self._t._h, 2, [rows, k], [k, 1], 0)
        src = grid.clone()
        for j in range(k):  # k <= 8 column copies, each a strided core copy
            grid[:, j].copy_(src[:, k - 1 - j])

    # ---- shared memory (mindtorch_v2/_shared_memory.py; torch.multiprocessing sends these) ----
    def share_memory_(self):
        """Move the bytes into shared memory, in place: every tensor on this storage follows."""
        from .multiprocessing import get_sharing_strategy
        if get_sharing_strategy() == "file_system":
            self._share_filename_cpu_()
        else:
            self._share_fd_cpu_()
        return self

    def _block(self):
        """The shared mapping this storage lives in, or None."""
        h = self._t._h
        if lib.mt_tensor_device(h) != lib.MT_CPU:
            return None
        return _shm.block_at(int(ffi.cast("uintptr_t", lib.mt_tensor_storage_ptr(h))), self.nbytes())

    def _check_cpu(self, what):
        if self.device.type != "cpu":
            raise RuntimeError(f"{what}: only available on CPU")

    def _move_into(self, block):
        deleter, ctx = keep_alive(block)
        check(lib.mt_storage_move_to(self._t._h, ffi.cast("void *", block.ptr), block.nbytes, deleter, ctx))
        block.u8 = weakref.ref(self._t)
        return block

    def _share_fd_cpu_(self):
        """(fd, nbytes) of the memfd holding this storage, moving it there first (-1 when empty)."""
        self._check_cpu("_share_fd_")
        block = self._block()
        if block is None or block.fd is None and block.nbytes:
            block = self._move_into(_shm.new_fd_block(self.nbytes()))
        return (-1 if block.fd is None else block.fd, self.nbytes())

    def _share_filename_cpu_(self):
        """(manager handle, /dev/shm name, nbytes) of the file holding this storage, moving it there first.
        There is no manager process here: the files count their users themselves."""
        self._check_cpu("_share_filename_")
        block = self._block()
        if block is None or block.name is None:
            block = self._move_into(_shm.new_file_block(self.nbytes()))
        return (b"", block.name.encode(), self.nbytes())

    def _shared_incref(self):
        block = self._block()
        if block is not None and block.name is not None:
            block.count_add(1)

    def _shared_decref(self):
        block = self._block()
        if block is not None and block.name is not None:
            block.count_add(-1)
        return self

    @classmethod
    def _over_block(cls, block):
        """A storage over a shared mapping: the one already over it while that lives, so that what
        arrives twice (a tensor and its view) shares one storage."""
        u8 = block.u8() if block.u8 is not None else None
        if u8 is None:
            u8 = _blob(block.ptr, block.nbytes, block)
            block.u8 = weakref.ref(u8)
        return cls._wrap(u8)

    @classmethod
    def _new_shared_fd_cpu(cls, fd, size):
        return cls._over_block(_shm.map_fd(fd, int(size)))

    @classmethod
    def _new_shared_filename_cpu(cls, manager, handle, size):
        return cls._over_block(_shm.map_file(os.fsdecode(handle), int(size)))

    @classmethod
    def _new_using_fd_cpu(cls, size):
        return cls._over_block(_shm.new_fd_block(int(size)))

    @classmethod
    def _new_using_filename_cpu(cls, size):
        return cls._over_block(_shm.new_file_block(int(size)))

    @classmethod
    def _new_shared(cls, size, *, device="cpu"):
        """A new storage of size bytes in shared memory (zero-filled)."""
        from .multiprocessing import get_sharing_strategy
        if _device_cls(device).type != "cpu":
            return cls(size, device=device)
        if get_sharing_strategy() == "file_system":
            return cls._new_using_filename_cpu(size)
        return cls._new_using_fd_cpu(size)

    def pin_memory(self, device=None):
        raise NotImplementedError("UntypedStorage.pin_memory is not implemented")

    def __sizeof__(self):
        return object.__sizeof__(self) + self.nbytes()

    def __repr__(self):
        info = f"[{type(self).__module__.replace('mindtorch_v2', 'torch')}.{type(self).__name__}" \
               f"(device={self.device}) of size {len(self)}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __str__ = __repr__

    def __reduce__(self):
        from .serialization import save
        b = io.BytesIO()
        save(self, b, _use_new_zipfile_serialization=False)
        return (_load_from_bytes, (b.getvalue(),))

    # ---- files ----
    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """Map nbytes of a file: shared writes through to the file, private is copy-on-write."""
        filename = os.fspath(filename)
        nbytes = int(nbytes)
        if nbytes < 0:
            raise RuntimeError(f"from_file: nbytes must be non-negative, got {nbytes}")
        mode = "read-write" if shared else "read-only"
        try:
            fd = os.open(filename, (os.O_RDWR | os.O_CREAT) if shared else os.O_RDONLY, 0o600)
        except OSError as e:
            raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {e.strerror} ({e.errno})") from None
        try:
            size = os.fstat(fd).st_size
            if size < nbytes:
                if not shared:
                    raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required mapping size "
                                       f"<{nbytes}>")
                os.ftruncate(fd, nbytes)
            if nbytes == 0:
                return cls._wrap(_new_bytes(0), filename if shared else None, True)
            flags = _mmap.MAP_SHARED if shared else _mmap.MAP_PRIVATE
            m = _mmap.mmap(fd, nbytes, flags=flags, prot=_mmap.PROT_READ | _mmap.PROT_WRITE)
        finally:
            os.close(fd)
        buf = ffi.from_buffer(m)
        u8 = _blob(int(ffi.cast("uintptr_t", buf)), nbytes, (m, buf))
        return cls._wrap(u8, filename if shared else None, True)  # PyTorch: file mappings count as shared

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        """A new storage holding a copy of buffer's bytes."""
        mv = memoryview(buffer).cast("B")
        if dtype is not None and dtype is not _dtype.uint8:
            raise NotImplementedError("UntypedStorage.from_buffer with a dtype is not implemented")
        end = len(mv) if count < 0 else offset + count
        if offset < 0 or end > len(mv):
            raise ValueError("from_buffer: offset and count are out of range for the buffer")
        s = cls(end - offset)
        if end > offset:
            ffi.memmove(ffi.cast("char *", s.data_ptr()), mv[offset:end], end - offset)
        return s

    def _write_file(self, f, is_real_file=True, save_size=True, element_size=1):
        """PyTorch's legacy raw layout: int64 element count (little endian), then the bytes."""
        if save_size:
            f.write((self.nbytes() // element_size).to_bytes(8, "little"))
        if self.nbytes():
            f.write(ffi.buffer(ffi.cast("char *", self.data_ptr()), self.nbytes()))

    @classmethod
    def _new_with_file(cls, f, element_size):
        head = f.read(8)
        if len(head) != 8:
            raise RuntimeError("storage has wrong byte size: unexpected end of file")
        numel = int.from_bytes(head, "little", signed=True)
        if numel < 0 or numel > (1 << 48):
            raise RuntimeError(f"storage has an invalid size: {numel}")
        s = cls(numel * element_size)
        s._read_into(f)
        return s

    def _set_from_file(self, f, offset, is_real_file, element_size):
        if offset is not None:
            f.seek(offset)
        head = f.read(8)
        if len(head) != 8:
            raise RuntimeError("storage has wrong byte size: unexpected end of file")
        numel = int.from_bytes(head, "little", signed=True)
        if numel * element_size != self.nbytes():
            raise RuntimeError(f"storage has wrong byte size: expected {self.nbytes()} got {numel * element_size}")
        self._read_into(f)
        return self

    def _read_into(self, f):
        n = self.nbytes()
        if n == 0:
            return
        view = memoryview(ffi.buffer(ffi.cast("char *", self.data_ptr()), n))
        got = 0
        readinto = getattr(f, "readinto", None)
        while got < n:
            if readinto is not None:
                k = readinto(view[got:])
            else:
                chunk = f.read(n - got)
                k = len(chunk)
                view[got:got + k] = chunk
            if not k:
                raise RuntimeError(f"storage data is truncated: expected {n} bytes, got {got}")
            got += k


# ---- TypedStorage ------------------------------------------------------------------------

_warned_typed = False


def _warn_typed_storage_removal(stacklevel=2):
    global _warned_typed
    if not _warned_typed:
        _warned_typed = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)


class TypedStorage:
    """PyTorch's TypedStorage: an UntypedStorage read as elements of one dtype."""

    is_sparse = False
    is_cuda = False
    is_hpu = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        fixed = getattr(type(self), "_fixed_dtype", None)
        if fixed is not None:
            if dtype is not None and dtype is not fixed:
                raise RuntimeError(f"__init__ doesn't accept dtype ({dtype}) for {type(self).__name__}")
            dtype = fixed
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage.__init__ received wrap_storage together with other arguments")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected wrap_storage to be an UntypedStorage, but got {type(wrap_storage)}")
            if dtype is None:
                raise RuntimeError("TypedStorage.__init__ requires dtype together with wrap_storage")
            self._untyped_storage, self.dtype = wrap_storage, dtype
            return
        dtype = _dtype.get_default_dtype() if dtype is None else dtype
        self.dtype = dtype
        if not args:
            self._untyped_storage = UntypedStorage(0, device=device)
        elif _is_int(args[0]) and len(args) == 1:
            self._untyped_storage = UntypedStorage(int(args[0]) * dtype.itemsize, device=device)
        elif len(args) == 1:
            from ._creation import tensor
            t = tensor(list(args[0]), dtype=dtype, device=device)
            self._untyped_storage = UntypedStorage._of(t)
        else:
            raise TypeError("TypedStorage(): too many positional arguments")

    @property
    def _dtype(self):
        return self.dtype

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def filename(self):
        return self._untyped_storage.filename

    @property
    def _cdata(self):
        return self._untyped_storage._cdata

    def untyped(self):
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped_storage):
        return TypedStorage(wrap_storage=untyped_storage, dtype=self.dtype, _internal=True)

    def _size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self):
        return self._size()

    def __len__(self):
        return self._size()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def _nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self.dtype.itemsize

    def _element_size(self):
        return self.dtype.itemsize

    def get_device(self):
        return self._untyped_storage.get_device()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def _data_ptr(self):
        return self._untyped_storage.data_ptr()

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def is_pinned(self, device=None):
        return False

    def resizable(self):
        return self._untyped_storage.resizable()

    def _as_tensor(self):
        n = self._size()
        return _typed_view(self._untyped_storage._t, self.dtype, 0, (n,), (1,))

    def pickle_storage_type(self):
        return self._pickle_storage_type()

    def _pickle_storage_type(self):
        try:
            return _DTYPE_TO_STORAGE_NAME[self.dtype]
        except KeyError:
            raise KeyError(f"dtype {self.dtype} is not recognized") from None

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = self._size()
        i = int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self._as_tensor()[i].item()

    def __setitem__(self, idx, value):
        self._as_tensor()[idx] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._as_tensor().tolist()

    def fill_(self, value):
        self._as_tensor().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        if isinstance(source, TypedStorage):
            self._as_tensor().copy_(source._as_tensor())
        else:
            self._untyped_storage.copy_(source)
        return self

    def clone(self):
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def __copy__(self):
        return self._new_wrapped_storage(self._untyped_storage.__copy__())

    def __deepcopy__(self, memo):
        return self._deepcopy(memo)

    def _deepcopy(self, memo):
        return self._new_wrapped_storage(self._untyped_storage.__deepcopy__(memo))

    def cpu(self):
        return self._new_wrapped_storage(self._untyped_storage.cpu())

    def to(self, *, device, non_blocking=False):
        return self._new_wrapped_storage(self._untyped_storage.to(device=device))

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            legacy = _LEGACY_BY_DTYPE.get(self.dtype)
            return "torch." + legacy.__name__ if legacy is not None else "torch.storage.TypedStorage"
        raise NotImplementedError("TypedStorage.type(dtype) is not implemented")

    def resize_(self, size):
        self._untyped_storage.resize_(int(size) * self.dtype.itemsize)

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def _share_memory_(self):
        return self.share_memory_()

    def _is_shared(self):
        return self.is_shared()

    def _shared_incref(self):
        self._untyped_storage._shared_incref()

    def _shared_decref(self):
        self._untyped_storage._shared_decref()
        return self

    def _new_shared(self, size, *, device=None):
        """A new storage of this dtype and size elements in shared memory."""
        untyped = UntypedStorage._new_shared(int(size) * self._element_size(), device=device or "cpu")
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype, _internal=True)

    def _write_file(self, f, is_real_file=True, save_size=True, element_size=None):
        self._untyped_storage._write_file(f, is_real_file, save_size, self.dtype.itemsize)

    def __sizeof__(self):
        return object.__sizeof__(self) + self.nbytes()

    def __str__(self):
        info = f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __repr__ = __str__

    def __reduce__(self):
        from .serialization import save
        b = io.BytesIO()
        save(self, b, _use_new_zipfile_serialization=False)
        return (_load_from_bytes, (b.getvalue(),))

    @classmethod
    def from_file(cls, filename, shared=False, size=0):
        dtype = getattr(cls, "_fixed_dtype", None) or _dtype.get_default_dtype()
        u = UntypedStorage.from_file(filename, shared, int(size) * dtype.itemsize)
        return TypedStorage(wrap_storage=u, dtype=dtype, _internal=True)


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            return instance.dtype is cls._fixed_dtype
        return type.__instancecheck__(cls, instance)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    _fixed_dtype = None

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("_internal", False)
        super().__init__(*args, **kwargs)

    @classmethod
    def _new_shared(cls, size):
        return cls(wrap_storage=UntypedStorage._new_shared(int(size) * cls._fixed_dtype.itemsize))


_STORAGE_NAMES = {
    _dtype.float64: "DoubleStorage", _dtype.float32: "FloatStorage", _dtype.float16: "HalfStorage",
    _dtype.int64: "LongStorage", _dtype.int32: "IntStorage", _dtype.int16: "ShortStorage",
    _dtype.int8: "CharStorage", _dtype.uint8: "ByteStorage", _dtype.bool: "BoolStorage",
    _dtype.bfloat16: "BFloat16Storage", _dtype.complex128: "ComplexDoubleStorage", _dtype.complex64: "ComplexFloatStorage",
}
_DTYPE_TO_STORAGE_NAME = dict(_STORAGE_NAMES)
# PyTorch storage types that name dtypes mindtorch_v2 does not have
_UNSUPPORTED_STORAGE_NAMES = {"QInt8Storage": "qint8", "QInt32Storage": "qint32", "QUInt8Storage": "quint8",
                              "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4"}

LEGACY_CLASSES = {}
for _dt, _name in _STORAGE_NAMES.items():
    # __module__ "mindtorch_v2": they live at the package top level, as torch.FloatStorage etc. do
    LEGACY_CLASSES[_name] = _LegacyStorageMeta(_name, (_LegacyStorage,), {"_fixed_dtype": _dt,
                                                                         "__module__": "mindtorch_v2"})
_LEGACY_BY_DTYPE = {cls._fixed_dtype: cls for cls in LEGACY_CLASSES.values()}
del _dt, _name


def _get_dtype_from_pickle_storage_type(name):
    """The dtype a pickled storage type name ('FloatStorage', 'UntypedStorage') stands for."""
    if name == "UntypedStorage":
        return _dtype.uint8
    cls = LEGACY_CLASSES.get(name)
    if cls is not None:
        return cls._fixed_dtype
    if name in _UNSUPPORTED_STORAGE_NAMES:
        raise NotImplementedError(f"loading a {name}: dtype {_UNSUPPORTED_STORAGE_NAMES[name]} is not supported "
                                  "by mindtorch_v2")
    raise KeyError(f"pickle storage type \"{name}\" is not recognized")


def _load_from_bytes(b):
    from .serialization import load
    return load(io.BytesIO(b), weights_only=False)
