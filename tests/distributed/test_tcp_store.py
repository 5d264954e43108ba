"""TCPStore against PyTorch's c10d TCPStore on the wire: the same client script, run by real PyTorch's
client and by ours, against real PyTorch's server and ours, must print the same results for every
command; plus many clients, timeouts, and a server that dies."""
import datetime
import importlib.machinery
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from mindtorch_v2.distributed._store import DistNetworkError, DistStoreError, QueueEmptyError
from mindtorch_v2.distributed._tcp_store import TCPStore

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T = datetime.timedelta
HAVE_TORCH = importlib.machinery.PathFinder.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")

# Every command, through whichever TCPStore class argv[1] names, against the server at argv[2].
CLIENT = r'''
import datetime, json, sys
T = datetime.timedelta
if sys.argv[1] == "real":
    from torch.distributed import TCPStore
else:
    from mindtorch_v2.distributed._tcp_store import TCPStore
s = TCPStore("127.0.0.1", int(sys.argv[2]), None, False, T(seconds=1), wait_for_workers=False)
out = []
def do(name, fn):
    try:
        r = fn()
        out.append([name, r.decode("latin1") if isinstance(r, bytes) else
                    [x.decode("latin1") for x in r] if isinstance(r, list) and r and isinstance(r[0], bytes) else r])
    except Exception as e:
        out.append([name, type(e).__name__, str(e)])
do("set", lambda: s.set("k", "v"))
do("set_bytes", lambda: s.set("b", b"\x00\xff"))
do("get", lambda: s.get("k"))
do("get_bytes", lambda: s.get("b"))
do("add", lambda: s.add("n", 5))
do("add_neg", lambda: s.add("n", -7))
do("get_counter", lambda: s.get("n"))
do("cas_match", lambda: s.compare_set("k", "v", "w"))
do("cas_mismatch", lambda: s.compare_set("k", "zz", "q"))
do("cas_missing", lambda: s.compare_set("nokey", "x", "y"))
do("cas_create", lambda: s.compare_set("nokey2", "", "y"))
do("check_yes", lambda: s.check(["k", "n"]))
do("check_no", lambda: s.check(["k", "absent"]))
do("append", lambda: (s.append("ap", "a"), s.append("ap", b"b"), s.get("ap"))[2])
do("multi_set", lambda: s.multi_set(["m1", "m2"], ["1", b"2"]))
do("multi_get", lambda: s.multi_get(["m1", "m2"]))
do("multi_set_bad", lambda: s.multi_set(["a"], ["1", "2"]))
do("delete", lambda: s.delete_key("m1"))
do("delete_again", lambda: s.delete_key("m1"))
do("num_keys", lambda: s.num_keys())
do("list_keys", lambda: sorted(s.list_keys()))
do("wait_ok", lambda: s.wait(["k", "n"]))
do("wait_timeout", lambda: s.wait(["x", "y"], T(milliseconds=200)))
do("get_timeout", lambda: s.get("missing"))
do("multi_get_timeout", lambda: s.multi_get(["k", "missing"]))
do("barrier_1", lambda: s.barrier("bar", 1))
do("barrier_timeout", lambda: s.barrier("bar2", 2, T(milliseconds=200)))
do("queue_push", lambda: (s.queue_push("q", "a"), s.queue_push("q", b"b"))[0])
do("queue_len", lambda: s.queue_len("q"))
do("check_queue", lambda: s.check(["q"]))
do("queue_pop", lambda: [s.queue_pop("q"), s.queue_pop("q", False)])
do("queue_pop_empty", lambda: s.queue_pop("q", False))
do("queue_pop_timeout", lambda: s.queue_pop("q"))
do("after_timeouts", lambda: s.get("k"))
do("clone", lambda: s.clone().get("k"))
do("keys_at_end", lambda: sorted(s.list_keys()))
do("bad_add", lambda: s.add("k", 1))  # c10d's server drops a client whose ADD operand is not a number
print(json.dumps(out))
'''

REAL_SERVER = r'''
import datetime, sys
from torch.distributed import TCPStore
s = TCPStore("127.0.0.1", 0, None, True, datetime.timedelta(seconds=30))
print(s.port, flush=True)
sys.stdin.read()
'''


def _env(proxy=False):
    env = dict(os.environ)
    env.pop("MINDTORCH_PROXY", None)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _client(kind, port):
    r = subprocess.run([sys.executable, "-c", CLIENT, kind, str(port)], capture_output=True, text=True,
                       env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout.strip().splitlines()[-1])
    # the last one's text names the socket ("Broken pipe" or the recv failure): compare its type
    return results[:-1] + [results[-1][:2]]


def _with_server(kind, fn):
    if kind == "ours":
        server = TCPStore("127.0.0.1", 0, None, True, T(seconds=30))
        return fn(server.port)
    p = subprocess.Popen([sys.executable, "-c", REAL_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=_env())
    try:
        return fn(int(p.stdout.readline()))
    finally:
        p.stdin.close()
        p.wait(timeout=60)


@needs_torch
def test_every_command_matches_pytorch_across_clients_and_servers():
    reference = _with_server("real", lambda port: _client("real", port))
    assert reference[-1] == ["bad_add", "DistNetworkError"]
    for client, server in [("real", "ours"), ("ours", "real"), ("ours", "ours")]:
        got = _with_server(server, lambda port: _client(client, port))
        assert got == reference, (client, server)


def test_many_clients_counters_waits_and_barrier():
    server = TCPStore("127.0.0.1", 0, None, True, T(seconds=10))
    clients = [TCPStore("127.0.0.1", server.port, None, False, T(seconds=10)) for _ in range(4)]
    got = []

    def work(i, c):
        for _ in range(50):
            c.add("count", 1)
        c.barrier("b", len(clients))
        got.append(int(c.get("count")))
        if i == 0:
            c.set("go", "1")
        else:
            c.wait(["go"])

    threads = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert got == [200] * 4
    assert server.get("count") == b"200"


def test_queue_pop_waits_for_a_push_from_another_client():
    server = TCPStore("127.0.0.1", 0, None, True, T(seconds=10))
    other = server.clone()
    threading.Timer(0.2, lambda: other.queue_push("q", b"item")).start()
    assert server.queue_pop("q") == b"item"
    with pytest.raises(QueueEmptyError, match="^queue is empty$"):
        server.queue_pop("q", block=False)
    legacy = TCPStore("127.0.0.1", server.port, None, False, T(seconds=10), use_libuv=False)
    with pytest.raises(NotImplementedError, match="queues not implemented on legacy TCPStore backend"):
        legacy.queue_len("q")


def test_wait_for_workers_timeout_text():
    t = time.monotonic()
    with pytest.raises(DistStoreError, match=r"^Timed out after 2 seconds waiting for clients\. 1/2 clients joined\.$"):
        TCPStore("127.0.0.1", 0, 2, True, T(seconds=1))
    assert time.monotonic() - t < 10


def test_workers_join_the_master():
    # the master's constructor returns once world_size clients (itself included) have joined
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    master = []
    t = threading.Thread(target=lambda: master.append(TCPStore("127.0.0.1", port, 3, True, T(seconds=10))))
    t.start()
    time.sleep(0.2)
    assert not master
    workers = [TCPStore("127.0.0.1", port, 3, False, T(seconds=10)) for _ in range(2)]
    t.join(timeout=20)
    assert master and master[0].port == port
    workers[0].set("k", "v")
    assert master[0].get("k") == b"v" and master[0].list_keys() == ["k"]


def test_binds_only_the_given_address_and_reports_address_in_use():
    server = TCPStore("127.0.0.1", 0, None, True, T(seconds=5))
    daemon = server._server.daemon
    assert daemon.listener.getsockname() == ("127.0.0.1", server.port)
    with pytest.raises(DistNetworkError, match="The server socket has failed to listen on any local network "
                                               "address. port: .*EADDRINUSE"):
        TCPStore("127.0.0.1", server.port, None, True, T(seconds=5))


def test_refused_connection_raises_after_the_timeout():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = time.monotonic()
    with pytest.raises(DistNetworkError, match=rf"^The client socket has timed out after 1000ms while trying to "
                                               rf"connect to \(127\.0\.0\.1, {port}\)\.$"):
        TCPStore("127.0.0.1", port, None, False, T(seconds=1))
    assert time.monotonic() - t < 5


def test_dead_server_makes_a_waiting_client_raise():
    code = ("import sys, datetime\nsys.path.insert(0, sys.argv[1])\n"
            "from mindtorch_v2.distributed._tcp_store import TCPStore\n"
            "s = TCPStore('127.0.0.1', 0, None, True, datetime.timedelta(seconds=30))\n"
            "print(s.port, flush=True)\nsys.stdin.read()\n")
    p = subprocess.Popen([sys.executable, "-c", code, ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=_env())
    try:
        client = TCPStore("127.0.0.1", int(p.stdout.readline()), None, False, T(seconds=30))
        threading.Timer(0.3, p.kill).start()
        t = time.monotonic()
        with pytest.raises(DistNetworkError, match="Connection was likely closed"):
            client.wait(["never"], T(seconds=30))
        assert time.monotonic() - t < 10
        with pytest.raises(DistNetworkError):
            client.get("k")
    finally:
        p.kill()
        p.wait(timeout=30)
