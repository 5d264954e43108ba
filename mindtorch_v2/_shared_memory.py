"""Shared memory for CPU storages (PyTorch's MapAllocator), under share_memory_ and torch.multiprocessing.

A storage is shared by moving its bytes, in place, into a mapping other processes can map too
(`mt_storage_move_to`: every tensor and view on the storage follows). Two kinds, one per sharing strategy:
- file_descriptor: an anonymous memfd; the fd stays open while the storage lives and is what is sent
  (SCM_RIGHTS through multiprocessing's DupFd).
- file_system: a /dev/shm file sent by name, no fd kept. Its first 64 bytes hold a reference count
  shared by every process that maps it (in-flight messages count too: the sender increments before
  sending, the receiver decrements once mapped); the process that takes it to zero unlinks the file.
A SharedBlock owns one mapping; the storage holds it through its deleter, so it dies with the storage.
"""
import itertools
import mmap
import os
import random
import weakref

from ._C import ffi, lib

HEADER = 64  # file_system mappings: the shared reference count, then the 64-byte aligned data
SHM_DIR = "/dev/shm"

_BY_ADDR = weakref.WeakValueDictionary()  # data address -> the live SharedBlock mapped there
_names = itertools.count()


class SharedBlock:
    __slots__ = ("mm", "buf", "ptr", "nbytes", "fd", "name", "pid", "u8", "__weakref__")

    def __init__(self, nbytes, mm, fd=None, name=None):
        self.nbytes, self.mm, self.fd, self.name, self.pid = nbytes, mm, fd, name, os.getpid()
        self.u8 = None  # a weak reference to a live byte tensor over this block's storage, if any
        # an empty storage maps nothing but still needs an address of its own to be found by
        self.buf = ffi.from_buffer(mm) if mm is not None else ffi.new("char[]", 1)
        self.ptr = int(ffi.cast("uintptr_t", self.buf)) + (HEADER if name else 0)
        _BY_ADDR[self.ptr] = self

    def count_add(self, delta):
        """file_system: add delta to the count shared by all processes; the new value."""
        return lib.mt_shared_count_add(ffi.cast("int64_t *", self.buf), delta)

    def release(self):
        """Let go of the fd, or of this process's count (the last one out unlinks the file)."""
        if self.name is not None and self.pid == os.getpid() and self.count_add(-1) == 0:
            try:
                os.unlink(SHM_DIR + self.name)
            except OSError:
                pass
        self.name = None  # once, whichever of __del__ and the exit hook comes first
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self):  # the last storage over this mapping died (its deleter dropped the block)
        try:
            self.release()
            if self.mm is not None:
                ffi.release(self.buf)
                self.mm.close()
        except Exception:  # interpreter shutdown: modules half torn down
            pass


def _map(fd, size):
    return mmap.mmap(fd, size, flags=mmap.MAP_SHARED) if size else None


def new_fd_block(nbytes):
    """A fresh memfd mapping of nbytes (file_descriptor strategy); an empty one has no fd."""
    if nbytes == 0:
        return SharedBlock(0, None)
    fd = os.memfd_create(f"torch_{os.getpid()}_{next(_names)}", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
        return SharedBlock(nbytes, _map(fd, nbytes), fd=fd)
    except BaseException:
        os.close(fd)
        raise


def map_fd(fd, nbytes):
    """Map a received fd, keeping a dup of it: the storage can be passed on from this process."""
    fd = os.dup(fd)
    try:
        return SharedBlock(nbytes, _map(fd, nbytes), fd=fd)
    except BaseException:
        os.close(fd)
        raise


def new_file_block(nbytes):
    """A fresh /dev/shm file for nbytes (file_system strategy), named as PyTorch names them, count 1."""
    while True:
        name = f"/torch_{os.getpid()}_{random.getrandbits(32)}_{next(_names)}"
        try:
            fd = os.open(SHM_DIR + name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            continue
    try:
        os.ftruncate(fd, HEADER + nbytes)
        return _file_block(fd, name, nbytes)
    except BaseException:
        os.unlink(SHM_DIR + name)
        raise


def map_file(name, nbytes):
    """Map a /dev/shm file by name, counting this process in."""
    try:
        fd = os.open(SHM_DIR + name, os.O_RDWR)
    except OSError as e:
        raise RuntimeError(f"unable to open shared memory object <{name}> in read-write mode: {e.strerror} "
                           f"({e.errno})") from None
    return _file_block(fd, name, nbytes)


def _file_block(fd, name, nbytes):
    """A file_system block over fd, counted in; fd is closed once mapped (the strategy keeps none)."""
    try:
        block = SharedBlock(nbytes, _map(fd, HEADER + nbytes), name=name)
    finally:
        os.close(fd)
    block.count_add(1)
    _release_at_exit()
    return block


def block_at(ptr, nbytes):
    """The SharedBlock a storage at ptr of nbytes lives in, or None."""
    block = _BY_ADDR.get(ptr)
    return block if block is not None and block.nbytes == nbytes else None


_exit_hook_pid = None


def _release_at_exit():
    """Let go of this process's file_system counts when it exits normally (multiprocessing children too:
    their exit runs multiprocessing's finalizers, not atexit), so the last one out unlinks the file."""
    global _exit_hook_pid
    if _exit_hook_pid != os.getpid():
        from multiprocessing import util
        _exit_hook_pid = os.getpid()
        util.Finalize(None, _release_all, exitpriority=-10)  # after the queues' feeder threads are joined (-5)


def _release_all():
    for block in list(_BY_ADDR.values()):
        block.release()
