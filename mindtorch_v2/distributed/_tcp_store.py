"""TCPStore: c10d's TCP key-value store, client and server, speaking PyTorch's wire protocol.

A real PyTorch process can connect to our server and ours to its (the protocol of
torch/csrc/distributed/c10d/TCPStore.cpp and TCPStoreLibUvBackend.cpp). Every request is one
command byte (QueryType) and its arguments, all little-endian: a string or byte payload is a
uint64 length and the bytes, counts are uint64 (MULTI_SET: int64), ADD's delta and every integer
reply are int64, VALIDATE carries the uint32 magic and PING a uint32 nonce echoed back. A
connection must open with VALIDATE. The client puts "/" before every user key; the worker count
of `wait_for_workers` lives under "init/", outside that namespace (so list_keys hides it).
WAIT is answered with STOP_WAITING once every key exists; a client whose wait times out sends
CANCEL_WAIT, which the server answers with WAIT_CANCELED (a STOP_WAITING may come first).

The server is a selector loop on a daemon thread of the master process. It binds only to the
address it is given (c10d binds every interface), and serves any number of clients; it stops
when the last TCPStore object that owns it is collected.
"""
import datetime
import enum
import errno
import operator
import os
import random
import selectors
import socket
import struct
import threading
import time
import weakref
from collections import deque

from ._store import DistNetworkError, DistStoreError, QueueEmptyError, Store, _bytes, _seconds

VALIDATION_MAGIC = 0x3C85F7CE
KEY_PREFIX = "/"
INIT_KEY = "init/"
MAX_KEY_COUNT = 128 * 1024
MAX_STRING_LEN = 8 * 1024
MAX_PAYLOAD_LEN = 8 * 1024 * 1024


class QueryType(enum.IntEnum):
    VALIDATE = 0
    SET = 1
    COMPARE_SET = 2
    GET = 3
    ADD = 4
    CHECK = 5
    WAIT = 6
    GETNUMKEYS = 7
    DELETE_KEY = 8
    APPEND = 9
    MULTI_GET = 10
    MULTI_SET = 11
    CANCEL_WAIT = 12
    PING = 13
    QUEUE_PUSH = 14
    QUEUE_POP = 15
    QUEUE_LEN = 16
    LIST_KEYS = 17
    BARRIER = 18


CHECK_READY, CHECK_NOT_READY = b"\x00", b"\x01"
STOP_WAITING, WAIT_CANCELED = b"\x00", b"\x01"

_U32, _I64, _U64 = struct.Struct("<I"), struct.Struct("<q"), struct.Struct("<Q")
_RECV_CLOSED = ("Failed to recv, got 0 bytes. Connection was likely closed. "
                "Did the remote server shutdown or crash?")


def _string(data):
    return _U64.pack(len(data)) + data


def _strings(items):
    return b"".join(_string(x) for x in items)


def _ms(seconds):
    return int(round(seconds * 1000))


# ----------------------------------------------------------------------------------------------
# server


class _Incomplete(Exception):
    """The buffered bytes end inside a command: wait for more."""


class _Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise _Incomplete
        self.pos += n
        return bytes(self.buf[self.pos - n:self.pos])

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return _U32.unpack(self.take(4))[0]

    def i64(self):
        return _I64.unpack(self.take(8))[0]

    def u64(self):
        return _U64.unpack(self.take(8))[0]

    def count(self):
        n = self.u64()
        if n > MAX_KEY_COUNT:
            raise DistStoreError(f"Too many keys being waited. keys: {n}, max: {MAX_KEY_COUNT}")
        return n

    def key(self):
        n = self.u64()
        if n > MAX_STRING_LEN:
            raise DistStoreError(f"Key too long. size: {n}, max: {MAX_STRING_LEN}")
        return self.take(n)

    def payload(self):
        n = self.u64()
        if n > MAX_PAYLOAD_LEN:
            raise DistStoreError(f"Value too large. size: {n}, max: {MAX_PAYLOAD_LEN}")
        return self.take(n)


class _Conn:
    def __init__(self, sock):
        self.sock = sock
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.validated = False


class _Daemon:
    """The store's state and its selector loop (one thread, so handlers need no lock)."""

    def __init__(self, listener):
        self.listener = listener
        self.port = listener.getsockname()[1]
        self.data = {}
        self.queues = {}
        self.waiting = {}    # key -> [conn waiting on it]
        self.awaited = {}    # conn -> number of its keys still missing
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = socket.socketpair()
        self.selector.register(listener, selectors.EVENT_READ, None)
        self.selector.register(self.wake_r, selectors.EVENT_READ, None)
        self.stopping = False
        self.thread = threading.Thread(target=self.run, name="pt_tcpstore", daemon=True)
        self.thread.start()

    def stop(self):
        if self.stopping:
            return
        self.stopping = True
        try:
            self.wake_w.send(b"\0")
        except OSError:
            pass
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout=10)

    def run(self):
        try:
            while not self.stopping:
                for key, events in self.selector.select():
                    if key.fileobj is self.listener:
                        self.accept()
                    elif key.fileobj is self.wake_r:
                        self.stopping = True
                    else:
                        conn = key.data
                        if events & selectors.EVENT_WRITE:
                            self.flush(conn)
                        if events & selectors.EVENT_READ and conn.sock.fileno() != -1:
                            self.receive(conn)
        finally:
            for key in list(self.selector.get_map().values()):
                key.fileobj.close()
            self.selector.close()
            self.wake_w.close()

    def accept(self):
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.selector.register(sock, selectors.EVENT_READ, _Conn(sock))

    def close(self, conn):
        self.clear_wait(conn)
        try:
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()

    def receive(self, conn):
        try:
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.close(conn)
            return
        conn.inbuf += chunk
        try:
            while conn.inbuf and conn.sock.fileno() != -1:
                reader = _Reader(conn.inbuf)
                try:
                    self.command(conn, reader)
                except _Incomplete:
                    break
                del conn.inbuf[:reader.pos]
        except (DistStoreError, ValueError, KeyError):
            # a malformed request (as c10d: a bad ADD operand, an oversized key) drops the client
            self.close(conn)

    def send(self, conn, data):
        conn.outbuf += data
        self.flush(conn)

    def flush(self, conn):
        try:
            sent = conn.sock.send(conn.outbuf) if conn.outbuf else 0
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self.close(conn)
            return
        del conn.outbuf[:sent]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.outbuf else 0)
        if self.selector.get_key(conn.sock).events != events:
            self.selector.modify(conn.sock, events, conn)

    # -- the store's state

    def check(self, keys):
        return all(k in self.data or self.queues.get(k) for k in keys)

    def clear_wait(self, conn):
        if self.awaited.pop(conn, None) is None:
            return
        for key in list(self.waiting):
            waiters = [c for c in self.waiting[key] if c is not conn]
            if waiters:
                self.waiting[key] = waiters
            else:
                del self.waiting[key]

    def wake(self, key):
        for conn in self.waiting.pop(key, ()):
            self.awaited[conn] -= 1
            if self.awaited[conn] == 0:
                del self.awaited[conn]
                self.send(conn, STOP_WAITING)

    def wake_one(self, key):
        # a queue item is for one popper: release the first client whose wait it completes
        waiters = self.waiting.get(key, [])
        for i, conn in enumerate(waiters):
            if self.awaited[conn] == 1:
                del waiters[i], self.awaited[conn]
                if not waiters:
                    del self.waiting[key]
                self.send(conn, STOP_WAITING)
                return

    def set(self, key, value):
        self.data[key] = value
        self.wake(key)

    def command(self, conn, r):
        """Parse and serve one request; raises _Incomplete (nothing done) if it has not all arrived."""
        qt = r.u8()
        if not conn.validated:
            if qt != QueryType.VALIDATE or r.u32() != VALIDATION_MAGIC:
                raise DistStoreError("invalid validation")
            conn.validated = True
            return
        if qt == QueryType.PING:
            self.send(conn, _U32.pack(r.u32()))
        elif qt == QueryType.SET:
            key, value = r.key(), r.payload()
            self.set(key, value)
        elif qt == QueryType.COMPARE_SET:
            key, expected, desired = r.key(), r.payload(), r.payload()
            current = self.data.get(key)
            if current is None:
                result = expected
                if not expected:  # c10d: a missing key is created only when nothing is expected
                    self.data[key] = result = desired
            else:
                if current == expected:
                    self.data[key] = desired
                result = self.data[key]
            self.wake(key)
            self.send(conn, _string(result))
        elif qt == QueryType.GET:
            self.send(conn, _string(self.data.get(r.key(), b"")))
        elif qt == QueryType.ADD:
            key, delta = r.key(), r.i64()
            total = int(self.data.get(key, b"0")) + delta
            self.data[key] = str(total).encode()
            self.send(conn, _I64.pack(total))
            self.wake(key)
        elif qt in (QueryType.CHECK, QueryType.WAIT):
            keys = [r.key() for _ in range(r.count())]
            if qt == QueryType.CHECK:
                self.send(conn, CHECK_READY if self.check(keys) else CHECK_NOT_READY)
            elif self.check(keys):
                self.send(conn, STOP_WAITING)
            else:
                missing = [k for k in keys if k not in self.data]
                for k in missing:
                    self.waiting.setdefault(k, []).append(conn)
                self.awaited[conn] = len(missing)
        elif qt == QueryType.GETNUMKEYS:
            self.send(conn, _I64.pack(len(self.data)))
        elif qt == QueryType.DELETE_KEY:
            self.send(conn, _I64.pack(int(self.data.pop(r.key(), None) is not None)))
        elif qt == QueryType.APPEND:
            key, value = r.key(), r.payload()
            self.set(key, self.data.get(key, b"") + value)
        elif qt == QueryType.MULTI_GET:
            keys = [r.key() for _ in range(r.count())]
            self.send(conn, b"".join(_string(self.data.get(k, b"")) for k in keys))
        elif qt == QueryType.MULTI_SET:
            items = [(r.key(), r.payload()) for _ in range(r.count())]
            for key, value in items:
                self.set(key, value)
        elif qt == QueryType.CANCEL_WAIT:
            self.clear_wait(conn)
            self.send(conn, WAIT_CANCELED)
        elif qt == QueryType.QUEUE_PUSH:
            key, value = r.key(), r.payload()
            self.queues.setdefault(key, deque()).append(value)
            self.wake_one(key)
        elif qt == QueryType.QUEUE_POP:
            queue = self.queues.get(r.key(), ())
            reply = _I64.pack(len(queue))
            self.send(conn, reply + _string(queue.popleft()) if queue else reply)
        elif qt == QueryType.QUEUE_LEN:
            self.send(conn, _I64.pack(len(self.queues.get(r.key(), ()))))
        elif qt == QueryType.LIST_KEYS:
            self.send(conn, _I64.pack(len(self.data)) + _strings(list(self.data)))
        elif qt == QueryType.BARRIER:
            key, world_size = r.key(), r.i64()
            count = int(self.data.get(key, b"0")) + 1
            self.data[key] = str(count).encode()
            if count >= world_size:
                self.wake(key)
                self.send(conn, STOP_WAITING)
            else:
                self.waiting.setdefault(key, []).append(conn)
                self.awaited[conn] = 1
        else:
            raise DistStoreError(f"Client sent invalid command: {qt}")


class _Server:
    """What a master TCPStore holds: the daemon runs while some store owns this handle."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.port = daemon.port
        weakref.finalize(self, daemon.stop)


_TENANTS = {}  # port -> weakref to its _Server (multi_tenant=True stores share one server)
_TENANTS_LOCK = threading.Lock()


def _bind_error(port, e):
    name = errno.errorcode.get(e.errno, "UNKNOWN")
    return DistNetworkError(
        "The server socket has failed to listen on any local network address. "
        f"port: {port}, code: {-(e.errno or 0)}, name: {name}, message: {os.strerror(e.errno or 0).lower()}")


def _listen(host, port, master_listen_fd):
    if master_listen_fd is not None:
        sock = socket.socket(fileno=master_listen_fd)
        sock.listen(socket.SOMAXCONN)
        bound = sock.getsockname()[1]
        if port not in (0, bound):
            sock.close()
            raise DistStoreError(f"listen fd {master_listen_fd} is bound to port {bound}, "
                                 f"expected to be bound to port {port}")
        return sock
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise DistNetworkError(f"The server socket has failed to resolve {host}: {e}") from None
    last = None
    for family, kind, proto, _, addr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            sock.listen(socket.SOMAXCONN)
            return sock
        except OSError as e:
            sock.close()
            last = e
    if last is None:
        raise DistNetworkError(f"The server socket has failed to resolve {host}")
    raise _bind_error(port, last)


def _start_server(host, port, multi_tenant, master_listen_fd):
    if not multi_tenant:
        return _Server(_Daemon(_listen(host, port, master_listen_fd)))
    with _TENANTS_LOCK:
        server = _TENANTS.get(port, lambda: None)() if port > 0 else None
        if server is None:
            server = _Server(_Daemon(_listen(host, port, master_listen_fd)))
            _TENANTS[server.port] = weakref.ref(server)
        return server


def _env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true")


# ----------------------------------------------------------------------------------------------
# client


class TCPStore(Store):
    """c10d's TCPStore (torch.distributed.TCPStore): a client of the store server at
    host_name:port, which this process hosts itself when `is_master`."""

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=datetime.timedelta(seconds=300), wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        if not isinstance(host_name, str):
            raise TypeError(f"TCPStore(): host_name must be str, not {type(host_name).__name__}")
        port = int(port)
        if not 0 <= port < 65536:
            raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
        self._host, self._port, self._world_size = host_name, port, world_size
        self._use_libuv = bool(use_libuv)
        self._lock = threading.Lock()
        self._sock = None
        self._server = None
        if is_master:
            try:
                self._server = _start_server(host_name, port, multi_tenant, master_listen_fd)
                self._port = self._server.port
            except DistNetworkError:
                # the agent (torchrun) already hosts the store on MASTER_PORT: be its client
                if not (_env_flag("TORCHELASTIC_USE_AGENT_STORE")
                        and os.environ.get("MASTER_PORT") == str(port)):
                    raise
        self._connect()
        if wait_for_workers:
            self._wait_for_workers()

    # -- connection

    def _connect(self):
        timeout = _seconds(self.timeout)
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            try:
                self._sock = self._open(max(deadline - time.monotonic(), 0.001))
                self._send(bytes([QueryType.VALIDATE]) + _U32.pack(VALIDATION_MAGIC))
                nonce = os.getpid() & 0xFFFFFFFF
                self._send(bytes([QueryType.PING]) + _U32.pack(nonce))
                got = _U32.unpack(self._recv(4))[0]
                if got != nonce:
                    raise DistNetworkError(
                        f"Ping failed, invalid value returned from server. Expected: {nonce}, Got: {got}")
                return
            except DistNetworkError:
                if self._sock is not None:
                    self._sock.close()
                    self._sock = None
                if time.monotonic() >= deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {_ms(timeout)}ms while trying to connect "
                        f"to ({self._host}, {self._port}).") from None
                time.sleep(min(delay * random.uniform(1, 1.5), max(deadline - time.monotonic(), 0)))
                delay = min(delay * 2, 1.0)

    def _open(self, timeout):
        try:
            sock = socket.create_connection((self._host, self._port), timeout=timeout)
        except socket.gaierror as e:
            raise DistNetworkError(f"The client socket has failed to resolve {self._host}: {e}") from None
        except OSError as e:
            raise DistNetworkError(str(e)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _send(self, data):
        if self._sock is None:
            raise DistNetworkError("Broken pipe")
        try:
            self._sock.settimeout(None)
            self._sock.sendall(data)
        except OSError as e:
            raise DistNetworkError(e.strerror or str(e)) from None

    def _recv(self, n, timeout=None):
        """n bytes of the reply; a silent server raises after `timeout` (the store's by default)."""
        sock = self._sock
        if sock is None:
            raise DistNetworkError(_RECV_CLOSED)
        sock.settimeout(_seconds(self.timeout) if timeout is None else timeout)
        out = bytearray()
        try:
            while len(out) < n:
                chunk = sock.recv(n - len(out))
                if not chunk:
                    raise DistNetworkError(_RECV_CLOSED)
                out += chunk
        except socket.timeout:
            raise DistNetworkError("Socket Timeout") from None
        except OSError as e:
            raise DistNetworkError(e.strerror or str(e)) from None
        return bytes(out)

    def _recv_i64(self):
        return _I64.unpack(self._recv(8))[0]

    def _recv_bytes(self):
        return self._recv(_U64.unpack(self._recv(8))[0])

    def _ready(self, timeout):
        """Whether a reply arrives within `timeout` seconds."""
        sel = selectors.DefaultSelector()
        try:
            sel.register(self._sock, selectors.EVENT_READ)
            return bool(sel.select(max(timeout, 0)))
        finally:
            sel.close()

    def _await(self, request, timeout, timeout_error):
        """Send a WAIT or BARRIER request and read its STOP_WAITING; on timeout cancel it (c10d's
        CANCEL_WAIT exchange) and raise timeout_error."""
        self._send(request)
        if self._ready(timeout):
            if self._recv(1) != STOP_WAITING:
                raise DistStoreError("Stop_waiting response is expected")
            return
        self._send(bytes([QueryType.CANCEL_WAIT]))
        response = self._recv(1)
        if response != WAIT_CANCELED:  # the server answered before it saw the cancel
            if response != STOP_WAITING:
                raise DistStoreError("Stop_waiting response is expected")
            if self._recv(1) != WAIT_CANCELED:
                raise DistStoreError("wait_canceled response is expected")
        raise timeout_error

    def _wait(self, keys, timeout):
        request = bytes([QueryType.WAIT]) + _U64.pack(len(keys)) + _strings(k.encode() for k in keys)
        error = DistStoreError(f"wait timeout after {_ms(timeout)}ms, keys: {', '.join(keys)}")
        self._await(request, timeout, error)

    def _get(self, key):
        self._wait([key], _seconds(self.timeout))
        self._send(bytes([QueryType.GET]) + _string(key.encode()))
        return self._recv_bytes()

    def _add(self, key, delta):
        self._send(bytes([QueryType.ADD]) + _string(key.encode()) + _I64.pack(delta))
        return self._recv_i64()

    def _wait_for_workers(self):
        if self._world_size is None:
            return
        with self._lock:
            self._add(INIT_KEY, 1)
            if self._server is None:
                return
            # the master blocks until every worker has joined, so its server outlives them
            start = time.monotonic()
            while True:
                joined = int(self._get(INIT_KEY))
                if joined >= self._world_size:
                    return
                elapsed = int(time.monotonic() - start)
                if _seconds(self.timeout) > 0 and elapsed > _seconds(self.timeout):
                    raise DistStoreError(f"Timed out after {elapsed} seconds waiting for clients. "
                                         f"{joined}/{self._world_size} clients joined.")
                time.sleep(0.01)

    # -- the Store interface

    @property
    def host(self):
        return self._host

    @property
    def port(self):
        return self._port

    @property
    def libuvBackend(self):
        return self._use_libuv

    def __repr__(self):
        server = f"TCPServer(port={self._server.port})" if self._server is not None else "<nullptr>"
        return f"TCPStore(client=TCPClient({self._host}:{self._port}), server={server})"

    def _k(self, key):
        if not isinstance(key, str):
            raise TypeError(f"key must be str, not {type(key).__name__}")
        return KEY_PREFIX + key

    def set(self, key, value):
        with self._lock:
            self._send(bytes([QueryType.SET]) + _string(self._k(key).encode()) + _string(_bytes(value)))

    def get(self, key):
        with self._lock:
            return self._get(self._k(key))

    def add(self, key, value):
        value = operator.index(value)
        with self._lock:
            return self._add(self._k(key), value)

    def compare_set(self, key, expected_value, desired_value):
        with self._lock:
            self._send(bytes([QueryType.COMPARE_SET]) + _string(self._k(key).encode())
                       + _string(_bytes(expected_value)) + _string(_bytes(desired_value)))
            return self._recv_bytes()

    def check(self, keys):
        keys = [self._k(k) for k in keys]
        with self._lock:
            self._send(bytes([QueryType.CHECK]) + _U64.pack(len(keys)) + _strings(k.encode() for k in keys))
            response = self._recv(1)
        if response not in (CHECK_READY, CHECK_NOT_READY):
            raise DistStoreError("ready or not_ready response expected")
        return response == CHECK_READY

    def delete_key(self, key):
        with self._lock:
            self._send(bytes([QueryType.DELETE_KEY]) + _string(self._k(key).encode()))
            return self._recv_i64() == 1

    def num_keys(self):
        with self._lock:
            self._send(bytes([QueryType.GETNUMKEYS]))
            return self._recv_i64()

    def wait(self, keys, timeout=None):
        keys = [self._k(k) for k in keys]
        with self._lock:
            self._wait(keys, _seconds(self.timeout if timeout is None else timeout))

    def append(self, key, value):
        with self._lock:
            self._send(bytes([QueryType.APPEND]) + _string(self._k(key).encode()) + _string(_bytes(value)))

    def multi_get(self, keys):
        keys = [self._k(k) for k in keys]
        with self._lock:
            self._wait(keys, _seconds(self.timeout))
            self._send(bytes([QueryType.MULTI_GET]) + _U64.pack(len(keys)) + _strings(k.encode() for k in keys))
            return [self._recv_bytes() for _ in keys]

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise DistStoreError("multiSet keys and values vectors must be of same size")
        body = b"".join(_string(self._k(k).encode()) + _string(_bytes(v)) for k, v in zip(keys, values))
        with self._lock:
            self._send(bytes([QueryType.MULTI_SET]) + _I64.pack(len(keys)) + body)

    def list_keys(self):
        with self._lock:
            self._send(bytes([QueryType.LIST_KEYS]))
            keys = [self._recv_bytes().decode() for _ in range(self._recv_i64())]
        return [k[len(KEY_PREFIX):] for k in keys if k.startswith(KEY_PREFIX)]

    def barrier(self, key, world_size, timeout=None):
        timeout = _seconds(self.timeout if timeout is None else timeout)
        request = bytes([QueryType.BARRIER]) + _string(self._k(key).encode()) + _I64.pack(world_size)
        with self._lock:
            self._await(request, timeout, DistStoreError(f"barrier timeout after {_ms(timeout)}ms, key: {key}"))

    def _check_queues(self):
        if not self._use_libuv:
            raise NotImplementedError("queues not implemented on legacy TCPStore backend")

    def queue_push(self, key, value):
        self._check_queues()
        with self._lock:
            self._send(bytes([QueryType.QUEUE_PUSH]) + _string(self._k(key).encode()) + _string(_bytes(value)))

    def queue_pop(self, key, block=True):
        self._check_queues()
        key = self._k(key)
        with self._lock:
            if block:
                self._wait([key], _seconds(self.timeout))
            self._send(bytes([QueryType.QUEUE_POP]) + _string(key.encode()))
            if self._recv_i64() <= 0:
                raise QueueEmptyError("queue is empty")
            return self._recv_bytes()

    def queue_len(self, key):
        self._check_queues()
        with self._lock:
            self._send(bytes([QueryType.QUEUE_LEN]) + _string(self._k(key).encode()))
            return self._recv_i64()

    def clone(self):
        return TCPStore(self._host, self._port, None, False, self.timeout, wait_for_workers=False,
                        use_libuv=self._use_libuv)
