"""LAPACK's engine: QR, the SVD, eigh and gels run on MKL's LAPACK when PyPI's `mkl` is installed (on its GNU
OpenMP layer, at our thread count, or on one thread for small matrices), on OpenBLAS's otherwise and
with MINDTORCH_LAPACK=openblas. Each engine against live PyTorch on both sides of the small-matrix
bound (64) at 1 and 2 threads, the same bits on repeated calls, a child forked after a threaded call,
and the LAPACK test files again on OpenBLAS when this run is on MKL."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
ON_OPENBLAS = os.environ.get("MINDTORCH_LAPACK", "").lower() == "openblas"
SHAPES = [(64, 64), (65, 65), (300, 300), (120, 400), (400, 120), (3, 70, 50)]
TOL = {"float32": 2e-3, "float64": 1e-9, "complex64": 2e-3}


def engine():
    return mt._C.ffi.string(mt._C.lib.mt_lapack_engine()).decode()


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    prev = mt.get_num_threads()
    mt.set_num_threads(request.param)
    yield request.param
    mt.set_num_threads(prev)


def pair(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype == "complex64":
        a = a + 1j * rng.standard_normal(shape)
    t = torch.tensor(a).to(getattr(torch, dtype))
    return mt.tensor(t.numpy()), t


def close(m, t, dtype, scale=1.0):
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=TOL[dtype] * scale, atol=TOL[dtype] * scale)


def test_engine_chosen():
    mt.linalg.qr(mt.randn(4, 4))
    want = "mkl" if mt.backends.mkl.is_available() and not ON_OPENBLAS else "openblas"
    assert engine() == want


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_qr_and_geqrf(shape, dtype, threads):
    # real Householder QR has one answer (LAPACK's sign convention in both libraries): Q and R equal PyTorch's.
    # Complex ones may differ by a unit phase per row of R (column of Q): reference LAPACK's last reflector of a
    # square matrix makes R's last diagonal element real, MKL's leaves it as it is
    a, t = pair(shape, dtype)
    cplx = dtype.startswith("complex")
    for mode in ("reduced", "complete", "r"):
        q, r = mt.linalg.qr(a, mode=mode)
        tq, tr = torch.linalg.qr(t, mode=mode)
        close(r.abs() if cplx else r, tr.abs() if cplx else tr, dtype, 10)
        if mode != "r":
            close(q.abs() if cplx else q, tq.abs() if cplx else tq, dtype, 10)
            close(q @ r, t, dtype, 10)
    g, tau = mt.geqrf(a)
    tg, ttau = torch.geqrf(t)
    assert g.stride() == tg.stride()
    if not cplx:
        close(g, tg, dtype, 10)
        close(tau, ttau, dtype, 10)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_svd(shape, dtype, threads):
    a, t = pair(shape, dtype, 1)
    u, s, vh = mt.linalg.svd(a, full_matrices=False)
    close(s, torch.linalg.svdvals(t), dtype, 10)
    close(mt.linalg.svdvals(a), torch.linalg.svdvals(t), dtype, 10)
    close((u * s.to(u.dtype).unsqueeze(-2)) @ vh, t, dtype, 10)  # vectors are unique up to phase: the product
    k = min(shape[-2:])
    close(u.mH @ u, torch.eye(k, dtype=t.dtype).expand(*shape[:-2], k, k), dtype, 10)
    u, s, vh = mt.linalg.svd(a)  # full
    assert tuple(u.shape) == shape[:-2] + (shape[-2],) * 2 and tuple(vh.shape) == shape[:-2] + (shape[-1],) * 2


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("n", [64, 65, 300])
def test_eigh(n, dtype, threads):
    a, t = pair((n, n), dtype, 2)
    a, t = a + a.mH, t + t.mH
    w, v = mt.linalg.eigh(a)
    tw = torch.linalg.eigvalsh(t)
    close(w, tw, dtype, 100)
    close(mt.linalg.eigvalsh(a), tw, dtype, 100)
    close((v * w.to(v.dtype).unsqueeze(-2)) @ v.mH, t, dtype, 100)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 64), (300, 100), (100, 300), (2, 90, 70)], ids=str)
def test_lstsq_gels(shape, dtype, threads):
    a, t = pair(shape, dtype, 3)
    b, tb = pair(shape[:-1] + (5,), dtype, 4)
    got = mt.linalg.lstsq(a, b, driver="gels").solution
    close(got, torch.linalg.lstsq(t, tb, driver="gels").solution, dtype, 100)


@pytest.mark.parametrize("threads_", [1, 2])
def test_same_bits_on_repeated_calls(threads_):
    prev = mt.get_num_threads()
    mt.set_num_threads(threads_)
    try:
        a = mt.randn(300, 200)
        s = a @ a.mT
        b = mt.randn(300, 4)
        for f in (lambda: mt.linalg.qr(a), lambda: mt.linalg.svd(a), lambda: mt.linalg.eigh(s),
                  lambda: (mt.linalg.lstsq(a, b, driver="gels").solution,), lambda: mt.geqrf(a)):
            first, again = f(), f()
            for x, y in zip(first, again):
                assert mt.equal(x, y)
    finally:
        mt.set_num_threads(prev)


def test_fork_after_a_threaded_factorisation():
    # libgomp's workers do not survive fork(): MKL must run on one thread in the child (it hung)
    script = textwrap.dedent("""
        import os, mindtorch_v2 as mt
        mt.set_num_threads(2)
        x = mt.randn(300, 300)
        q0 = mt.linalg.qr(x)[0]
        mt.fft.fft(mt.randn(64, 1024))
        pid = os.fork()
        if pid == 0:
            q = mt.linalg.qr(x)[0]
            mt.linalg.svd(x)
            mt.linalg.qr(mt.randn(5, 8, 8))
            mt.fft.fft(mt.randn(64, 1024))
            os._exit(0 if mt.allclose(q, q0, atol=1e-4) else 3)
        print(os.waitpid(pid, 0)[1])
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.dirname(HERE)))
    assert r.returncode == 0 and r.stdout.strip() == "0", r.stdout + r.stderr


def test_missing_library_falls_back_to_openblas():
    # a path that does not open (mkl uninstalled after import, a broken install): OpenBLAS, and results
    script = textwrap.dedent("""
        import mindtorch_v2 as mt
        mt._C.lib.mt_lapack_use_mkl(b"/nonexistent/libmkl_rt.so.3")
        mt.set_num_threads(2)
        x = mt.randn(100, 80)
        q, r = mt.linalg.qr(x)
        assert mt.allclose(q @ r, x, atol=1e-4)
        print(mt._C.ffi.string(mt._C.lib.mt_lapack_engine()).decode())
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.dirname(HERE)))
    assert r.returncode == 0 and r.stdout.strip() == "openblas", r.stdout + r.stderr


@pytest.mark.skipif(ON_OPENBLAS or not mt.backends.mkl.is_available(), reason="this run is on OpenBLAS already")
def test_lapack_files_on_openblas():
    env = dict(os.environ, MINDTORCH_LAPACK="openblas")
    files = [os.path.join(HERE, f) for f in ("test_lapack_engine.py", "test_linalg_lapack.py",
                                              "test_linalg_ldl_qr.py")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], env=env,
                       capture_output=True, text=True, timeout=1200, cwd=os.path.dirname(os.path.dirname(HERE)))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
