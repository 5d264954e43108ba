"""Several Python threads at once: cffi releases the GIL in every core call, so
ops, backward passes and grad modes run truly concurrently in the core."""
import threading

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
