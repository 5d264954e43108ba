"""Several Python threads at once: cffi releases the GIL in every core call that
computes (csrc/build_ffi.py keeps it only across constant-time calls: accessors,
views, retain/release), so ops, backward passes and grad modes run truly
concurrently in the core."""
import threading
import time

import numpy as np

import mindtorch_v2 as mt


def run_threads(fn, n=4):
    errors, results = [], [None] * n

    def body(i):
        try:
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_ops_from_threads_give_single_thread_results():
    a = mt.arange(200000, dtype=mt.float32).reshape(400, 500)
    b = mt.linspace(-1, 1, 500)
    expected = ((a * b + 1).exp().sum(1) / 7).tolist()

    def work(i):
        out = None
        for _ in range(20):
            out = ((a * b + 1).exp().sum(1) / 7).tolist()
        return out

    for got in run_threads(work):
        assert got == expected


def test_backward_from_threads():
    def work(i):
        grads = []
        for k in range(50):
            x = mt.full((64,), float(i + 1), requires_grad=True)
            y = (x * x * k).sum()
            y.backward()
            grads.append(x.grad[0].item())
        return grads

    for i, grads in enumerate(run_threads(work)):
        assert grads == [2.0 * (i + 1) * k for k in range(50)]


def test_matmul_from_threads():
    rng = np.random.default_rng(0)
    x = mt.from_numpy(rng.standard_normal((128, 96)).astype(np.float32))
    w = mt.from_numpy(rng.standard_normal((96, 64)).astype(np.float32))
    expected = (x @ w).numpy().copy()
    for got in run_threads(lambda i: [(x @ w).numpy().copy() for _ in range(10)]):
        for g in got:
            np.testing.assert_array_equal(g, expected)


def test_grad_mode_is_per_thread_default_dtype_is_global():
    seen = {}

    def work(i):
        seen[i] = (mt.is_grad_enabled(), mt.get_default_dtype())

    prev = mt.get_default_dtype()
    try:
        mt.set_default_dtype(mt.float64)
        with mt.no_grad():
            run_threads(work, 2)
            assert not mt.is_grad_enabled()
    finally:
        mt.set_default_dtype(prev)
    # PyTorch: grad mode is thread-local (a new thread starts enabled); the default dtype is process-wide
    assert seen == {0: (True, mt.float64), 1: (True, mt.float64)}


def test_a_long_op_lets_other_python_threads_run():
    a = mt.ones(1024, 1024)
    ticks, done = [0], threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        before = ticks[0]
        for _ in range(3):
            a @ a  # ~10 ms each: with the GIL held throughout, the counter would stand still
        during = ticks[0] - before
    finally:
        done.set()
        t.join()
    assert during > 0


def test_backward_with_hooks_beside_a_thread_of_views_does_not_deadlock():
    # one thread runs backward passes whose hooks are Python (the engine holds its lock and wants
    # the GIL), the other makes and drops views (kept-GIL calls): neither may wait on the other
    stop = threading.Event()

    def backward_with_hooks(i):
        for _ in range(200):
            x = mt.ones(8, requires_grad=True)
            x.register_hook(lambda g: g * 2)
            (x * 3).sum().backward()
            assert x.grad.tolist() == [6.0] * 8
        stop.set()

    def views(i):
        base = mt.ones(4, 4)
        while not stop.is_set():
            base.view(16).t().transpose(0, 0)[0]
            time.sleep(0)

    t = threading.Thread(target=views, args=(1,))
    t.start()
    try:
        run_threads(backward_with_hooks, 1)
    finally:
        stop.set()
        t.join(timeout=30)
    assert not t.is_alive()
