"""c10d stores: the key-value rendezvous every process group is built on.

`Store` is the interface of PyTorch's c10d::Store: values are bytes (str is encoded), `add` keeps
an int64 counter as its decimal text (as c10d does, so `get` of a counter gives b"3"), `get` and
`wait` block until the key exists or the store's timeout passes. Each store implements the
primitives below; `Store` derives the rest (multi_get/multi_set/barrier) from them.
`HashStore` (one process), `FileStore` (processes sharing a file) and `PrefixStore` are here;
TCPStore is in _tcp_store.py.
"""
import datetime
import fcntl
import os
import struct
import threading
import time

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=5)


class DistError(RuntimeError):
    pass


class DistStoreError(DistError):
    pass


class DistNetworkError(DistError):
    pass


class DistBackendError(DistError):
    pass


class QueueEmptyError(DistStoreError):
    pass


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


class Store:
    """The c10d store interface. Subclasses implement set, get, add, compare_set, check,
    delete_key, num_keys, wait, append and (optionally) list_keys and the queue calls."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def has_extended_api(self):
        return True

    def _unimplemented(self, name):
        raise NotImplementedError(f"{type(self).__name__}.{name} is not implemented")

    def set(self, key, value):
        self._unimplemented("set")

    def get(self, key):
        self._unimplemented("get")

    def add(self, key, value):
        self._unimplemented("add")

    def compare_set(self, key, expected_value, desired_value):
        self._unimplemented("compare_set")

    def check(self, keys):
        self._unimplemented("check")

    def delete_key(self, key):
        self._unimplemented("delete_key")

    def num_keys(self):
        self._unimplemented("num_keys")

    def wait(self, keys, timeout=None):
        self._unimplemented("wait")

    def append(self, key, value):
        self._unimplemented("append")

    def list_keys(self):
        self._unimplemented("list_keys")

    def queue_push(self, key, value):
        self._unimplemented("queue_push")

    def queue_pop(self, key, block=True):
        self._unimplemented("queue_pop")

    def queue_len(self, key):
        self._unimplemented("queue_len")

    def clone(self):
        self._unimplemented("clone")

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def barrier(self, key, world_size, timeout=None):
        # c10d's Store::barrier: count arrivals, the last one releases everyone.
        if self.add(key + "/count", 1) == world_size:
            self.set(key + "/done", b"1")
        self.wait([key + "/done"], timeout if timeout is not None else self.timeout)


class HashStore(Store):
    """An in-process store (c10d::HashStore): a dict guarded by one condition variable."""

    def __init__(self):
        super().__init__()
        self._data = {}
        self._queues = {}
        self._cond = threading.Condition()

    def _wait_for(self, ready, timeout):
        deadline = time.monotonic() + _seconds(timeout)
        with self._cond:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DistStoreError("Wait timeout")
                self._cond.wait(left)

    def set(self, key, value):
        with self._cond:
            self._data[key] = _bytes(value)
            self._cond.notify_all()

    def get(self, key):
        self._wait_for(lambda: key in self._data, self.timeout)
        with self._cond:
            return self._data[key]

    def add(self, key, value):
        with self._cond:
            total = int(self._data.get(key, b"0")) + int(value)
            self._data[key] = str(total).encode()
            self._cond.notify_all()
            return total

    def compare_set(self, key, expected_value, desired_value):
        expected, desired = _bytes(expected_value), _bytes(desired_value)
        with self._cond:
            current = self._data.get(key)
            if current is None:
                # c10d: a missing key is created only when the expected value is empty
                if expected:
                    return expected
                self._data[key] = desired
                self._cond.notify_all()
                return desired
            if current == expected:
                self._data[key] = desired
                self._cond.notify_all()
                return desired
            return current

    def check(self, keys):
        with self._cond:
            return all(k in self._data for k in keys)

    def delete_key(self, key):
        with self._cond:
            return self._data.pop(key, None) is not None

    def num_keys(self):
        with self._cond:
            return len(self._data)

    def wait(self, keys, timeout=None):
        self._wait_for(lambda: all(k in self._data for k in keys), timeout if timeout is not None else self.timeout)

    def append(self, key, value):
        with self._cond:
            self._data[key] = self._data.get(key, b"") + _bytes(value)
            self._cond.notify_all()

    def list_keys(self):
        with self._cond:
            return list(self._data)

    def queue_push(self, key, value):
        with self._cond:
            self._queues.setdefault(key, []).append(_bytes(value))
            self._cond.notify_all()

    def queue_pop(self, key, block=True):
        if not block:
            with self._cond:
                if not self._queues.get(key):
                    raise QueueEmptyError(f"queue {key} is empty")
                return self._queues[key].pop(0)
        self._wait_for(lambda: bool(self._queues.get(key)), self.timeout)
        with self._cond:
            return self._queues[key].pop(0)

    def queue_len(self, key):
        with self._cond:
            return len(self._queues.get(key, ()))

    def clone(self):
        return self  # c10d's HashStore::clone shares the same map


class PrefixStore(Store):
    """Every key of `store` seen under "<prefix>/" (c10d::PrefixStore)."""

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self._prefix = prefix
        self.underlying_store = store

    def _key(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._key(key), value)

    def get(self, key):
        return self.underlying_store.get(self._key(key))

    def add(self, key, value):
        return self.underlying_store.add(self._key(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._key(key), expected_value, desired_value)

    def check(self, keys):
        return self.underlying_store.check([self._key(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._key(key))

    def num_keys(self):
        return self.underlying_store.num_keys()  # c10d counts the underlying store's keys

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._key(k) for k in keys], timeout)

    def append(self, key, value):
        self.underlying_store.append(self._key(key), value)

    def multi_get(self, keys):
        return self.underlying_store.multi_get([self._key(k) for k in keys])

    def multi_set(self, keys, values):
        self.underlying_store.multi_set([self._key(k) for k in keys], values)

    def queue_push(self, key, value):
        self.underlying_store.queue_push(self._key(key), value)

    def queue_pop(self, key, block=True):
        return self.underlying_store.queue_pop(self._key(key), block)

    def queue_len(self, key):
        return self.underlying_store.queue_len(self._key(key))

    def has_extended_api(self):
        return self.underlying_store.has_extended_api()

    def clone(self):
        return PrefixStore(self._prefix, self.underlying_store.clone())


class FileStore(Store):
    """c10d::FileStore: processes share a store through an append-only file of (key, value) records
    (uint32 length + bytes each, the same format, so a PyTorch process can share it), every access
    under flock(2). Regular keys are stored as "/key", a deletion appends "-/key". The last of
    `world_size` instances to be closed removes the file (none does when world_size is -1)."""

    _REFCOUNT, _CLEANUP, _REGULAR, _DELETE = "refcount/", "cleanup/", "/", "-"

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self._world_size = world_size
        self._pos = 0
        self._cache = {}
        self._lock = threading.Lock()  # one file operation at a time in this process, as c10d's
        self._closed = False
        self._add(self._REFCOUNT, 1)

    def _open(self, flags):
        # c10d waits (10 ms steps, up to the timeout) for a file another process has yet to create
        deadline = time.monotonic() + _seconds(self.timeout)
        while True:
            try:
                return os.open(self.path, flags, 0o644)
            except FileNotFoundError:
                if flags & os.O_CREAT or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _locked(self, flags, exclusive, body):
        with self._lock:
            fd = self._open(flags)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                return body(fd)
            finally:
                os.close(fd)  # closing drops the flock

    def _refresh(self, fd):
        """Reads the records appended since the last look into the cache."""
        size = os.fstat(fd).st_size
        if size != self._pos:
            os.lseek(fd, self._pos, os.SEEK_SET)
            data = _read_exactly(fd, size - self._pos)
            at = 0
            while at < len(data):
                key, at = _record(data, at)
                value, at = _record(data, at)
                key = key.decode("utf-8", "surrogateescape")
                if key.startswith(self._DELETE):
                    self._cache.pop(key[len(self._DELETE):], None)
                else:
                    self._cache[key] = value
            self._pos = size

    @staticmethod
    def _append(fd, key, value):
        key = key.encode("utf-8", "surrogateescape")
        os.lseek(fd, 0, os.SEEK_END)
        _write_all(fd, struct.pack("<I", len(key)) + key + struct.pack("<I", len(value)) + value)

    def _add(self, key, value):
        def body(fd):
            self._refresh(fd)
            total = int(self._cache.get(key, b"0") or b"0") + int(value)
            self._append(fd, key, str(total).encode())
            self._cache[key] = str(total).encode()
            return total
        return self._locked(os.O_RDWR | os.O_CREAT, True, body)

    def set(self, key, value):
        self._locked(os.O_RDWR | os.O_CREAT, True, lambda fd: self._append(fd, self._REGULAR + key, _bytes(value)))

    def get(self, key):
        reg = self._REGULAR + key
        deadline = time.monotonic() + _seconds(self.timeout)
        while True:
            def body(fd):
                self._refresh(fd)
                return self._cache.get(reg)
            value = self._locked(os.O_RDONLY, False, body)
            if value is not None:
                return value
            if time.monotonic() > deadline:
                raise RuntimeError(f"Timeout waiting for key: {key} after {int(_seconds(self.timeout) * 1000)} ms")
            time.sleep(0.01)

    def add(self, key, value):
        return self._add(self._REGULAR + key, value)

    def compare_set(self, key, expected_value, desired_value):
        reg, expected, desired = self._REGULAR + key, _bytes(expected_value), _bytes(desired_value)

        def body(fd):
            self._refresh(fd)
            current = self._cache.get(reg)
            if (current is None and not expected) or current == expected:
                self._append(fd, reg, desired)
                return desired
            return expected if current is None else current
        return self._locked(os.O_RDWR | os.O_CREAT, True, body)

    def _snapshot(self):
        def body(fd):
            self._refresh(fd)
            return dict(self._cache)
        return self._locked(os.O_RDONLY, False, body)

    def check(self, keys):
        cache = self._snapshot()
        return all(self._REGULAR + k in cache for k in keys)

    def delete_key(self, key):
        self._locked(os.O_RDWR, True, lambda fd: self._append(fd, self._DELETE + self._REGULAR + key, b""))
        return True

    def num_keys(self):
        return len(self._snapshot())  # c10d counts its own refcount/cleanup keys too

    def wait(self, keys, timeout=None):
        deadline = time.monotonic() + _seconds(timeout if timeout is not None else self.timeout)
        while not self.check(keys):
            if time.monotonic() > deadline:
                raise RuntimeError("Wait timeout")
            time.sleep(0.01)

    def append(self, key, value):
        reg = self._REGULAR + key

        def body(fd):
            self._refresh(fd)
            self._append(fd, reg, self._cache.get(reg, b"") + _bytes(value))
        self._locked(os.O_RDWR | os.O_CREAT, True, body)

    def list_keys(self):
        return [k[len(self._REGULAR):] for k in self._snapshot() if k.startswith(self._REGULAR)]

    def has_extended_api(self):
        return False  # as c10d's FileStore reports

    def close(self):
        """What c10d's destructor does: count this instance out; the last one removes the file."""
        if self._closed:
            return
        self._closed = True
        if not os.path.exists(self.path):
            return
        try:
            finished = self._add(self._CLEANUP, 1)
            self._add(self._REFCOUNT, -1)
            if self._world_size >= 0 and finished == self._world_size:
                os.remove(self.path)
        except OSError:
            pass  # best effort, as c10d's

    def __del__(self):
        self.close()


def _read_exactly(fd, n):
    chunks = []
    while n > 0:
        chunk = os.read(fd, n)
        if not chunk:
            raise DistStoreError("FileStore: the file ended inside a record")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _record(data, at):
    (n,) = struct.unpack_from("<I", data, at)
    return data[at + 4:at + 4 + n], at + 4 + n


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
