"""torch.fft, stft/istft and the three primitives against live PyTorch: every transform over the dtypes it
accepts (integers promoted, float16/bfloat16 refused as on PyTorch's CPU), n/s/dim/norm variants,
non-contiguous, batched, empty-batch and 0-dim inputs, out=, the output layout (strides), grad_fn names,
gradients (gradcheck of each primitive and gradients of every transform equal to PyTorch's), and errors
(type and text)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")

if os.environ.get("MT_TEST_FFT_ENGINE") == "fftw":  # before the first transform chooses the engine
    mt._C.lib.mt_fft_use_mkl(b"")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = {"complex64": 3e-5, "complex128": 1e-11, "float32": 3e-5, "float64": 1e-11}

ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn")
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001  (the error is the result compared)
        return ("raised", type(e).__name__, str(e))


def compare(a, b, tol=None, strides=True):
    if isinstance(a, tuple) and a and a[0] == "raised":
        assert b == a
        return
    assert isinstance(b, mt.Tensor), b
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (a.dtype, b.dtype, a.shape, b.shape)
    if strides and a.numel() > 1:
        assert tuple(a.stride()) == tuple(b.stride()), (a.stride(), b.stride())
    x, y = a.detach().resolve_conj().numpy(), b.detach().numpy()
    t = tol if tol is not None else TOL[str(a.dtype).split(".")[1]]
    scale = max(1.0, float(np.abs(x).max())) if x.size else 1.0
    np.testing.assert_allclose(y, x, rtol=0, atol=t * scale)


def check(fn, tol=None, strides=True):
    a, b = outcome(fn, torch), outcome(fn, mt)
    compare(a, b, tol, strides)
    return b


def data(lib, shape, dtype, seed=0, transpose=False):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * 3
    if "complex" in dtype:
        v = v + 1j * rng.standard_normal(shape)
    if dtype.startswith("int"):
        v = np.round(v)
    t = lib.tensor(v.astype(np.complex128 if "complex" in dtype else np.float64)).to(getattr(lib, dtype))
    return t.transpose(0, -1) if transpose else t


DTYPES = ("float32", "float64", "complex64", "complex128", "int64")


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("dtype", DTYPES)
def test_one_dimensional(name, dtype):
    for shape, kw in [((16,), {}), ((5, 12), {"dim": 0}), ((3, 7), {"n": 10}), ((3, 9), {"n": 4, "norm": "ortho"}),
                      ((2, 3, 8), {"dim": 1, "norm": "forward"}), ((4, 6), {"norm": "backward", "dim": -2})]:
        for transpose in (False, True):
            check(lambda lib: getattr(lib.fft, name)(data(lib, shape, dtype, transpose=transpose), **kw))


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("dtype", DTYPES)
def test_n_dimensional(name, dtype):
    cases = [((6, 8), {}), ((3, 4, 6), {"dim": (0, 2)}), ((3, 5, 6), {"s": (4, 10)}),
             ((2, 4, 6), {"s": (3, -1), "dim": (2, 0), "norm": "ortho"}), ((4, 5, 6), {"norm": "forward"})]
    if name.endswith("n"):
        cases += [((3, 4, 5), {"dim": 1}), ((2, 3, 4), {"s": (3, 4, 6)})]
    for shape, kw in cases:
        for transpose in (False, True):
            check(lambda lib: getattr(lib.fft, name)(data(lib, shape, dtype, transpose=transpose), **kw))


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_empty_batch_zero_dim_and_unsupported_dtypes(name):
    # an empty batch: PyTorch's MKL build raises ("DFTI ERROR: Inconsistent configuration parameters"), its
    # pocketfft build returns the empty result; ours is that result, the shape of one batch entry's with 0
    kw = {"dim": (-2, -1)} if name.endswith("n") else {}
    one = getattr(torch.fft, name)(torch.ones(1, 3, 4, dtype=torch.float64), **kw)
    empty = getattr(mt.fft, name)(mt.ones(0, 3, 4, dtype=mt.float64), **kw)
    assert tuple(empty.shape) == (0,) + tuple(one.shape[1:]) and str(empty.dtype) == str(one.dtype)
    check(lambda lib: getattr(lib.fft, name)(lib.tensor(2.0)))
    for dtype in ("float16", "bfloat16", "bool"):
        check(lambda lib: getattr(lib.fft, name)(lib.ones(4, 4, dtype=getattr(lib, dtype))))


ERRORS = {
    "n zero": lambda lib: lib.fft.fft(lib.ones(4), n=0),
    "dim out of range": lambda lib: lib.fft.fft(lib.ones(4, 3), dim=2),
    "bad norm": lambda lib: lib.fft.fft(lib.ones(4), norm="bad"),
    "norm type": lambda lib: lib.fft.rfft(lib.ones(4), norm=3),
    "n type": lambda lib: lib.fft.fft(lib.ones(4), n=2.5),
    "not a tensor": lambda lib: lib.fft.fft([1.0, 2.0]),
    "rfft complex": lambda lib: lib.fft.rfft(lib.ones(4, dtype=lib.complex64)),
    "ihfft complex": lambda lib: lib.fft.ihfft(lib.ones(4, dtype=lib.complex64)),
    "rfftn complex": lambda lib: lib.fft.rfftn(lib.ones(4, dtype=lib.complex64)),
    "s and dim lengths": lambda lib: lib.fft.fftn(lib.ones(4, 3), s=(3,), dim=(0, 1)),
    "repeated dims": lambda lib: lib.fft.fftn(lib.ones(4, 3), dim=(0, 0)),
    "s too long": lambda lib: lib.fft.rfftn(lib.ones(4, 3), s=(2, 3, 4)),
    "irfft n=-1": lambda lib: lib.fft.irfft(lib.ones(4), n=-1),
    "irfft one point": lambda lib: lib.fft.irfft(lib.ones(1)),
    "irfftn no axis": lambda lib: lib.fft.irfftn(lib.ones(4), dim=()),
    "rfftn no axis": lambda lib: lib.fft.rfftn(lib.ones(4), dim=()),
    "fft2 of 1-D": lambda lib: lib.fft.fft2(lib.ones(3)),
    "empty signal": lambda lib: lib.fft.fft(lib.ones(0)),
    "out real for fft": lambda lib: lib.fft.fft(lib.ones(4), out=lib.empty(0)),
    "out complex for irfft": lambda lib: lib.fft.irfft(lib.ones(4), out=lib.empty(0, dtype=lib.complex64)),
    "out with grad": lambda lib: lib.fft.fft(lib.ones(4, requires_grad=True), out=lib.empty(0, dtype=lib.complex64)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    a = outcome(ERRORS[case], torch)
    assert a[0] == "raised", a
    assert outcome(ERRORS[case], mt) == a


def test_out():
    for name, dtype in [("fft", "complex128"), ("rfft", "complex64"), ("irfft", "float64"), ("fftn", "complex64")]:
        def fn(lib):
            o = lib.empty(0, dtype=getattr(lib, dtype))
            r = getattr(lib.fft, name)(data(lib, (3, 8), "float32"), out=o)
            assert r is o
            return o
        check(fn, tol=3e-5, strides=False)


def test_grad_fn_names():
    for name in ONE_D + N_D:
        for dtype in ("float64", "complex128"):
            if name in REAL_ONLY and dtype == "complex128":
                continue
            a = getattr(torch.fft, name)(data(torch, (4, 6), dtype).requires_grad_())
            b = getattr(mt.fft, name)(data(mt, (4, 6), dtype).requires_grad_())
            assert type(b.grad_fn).__name__ == type(a.grad_fn).__name__, (name, dtype, a.grad_fn, b.grad_fn)


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_gradients_equal_pytorch(name):
    for dtype in ("float64", "complex128"):
        if name in REAL_ONLY and dtype == "complex128":
            continue
        for shape, kw in [((4, 6), {}), ((5, 7), {"norm": "ortho"}), ((3, 8), {"norm": "forward"})]:
            grads = []
            for lib in (torch, mt):
                x = data(lib, shape, dtype).requires_grad_()
                y = getattr(lib.fft, name)(x, **kw)
                w = data(lib, tuple(y.shape), "complex128" if y.dtype.is_complex else "float64", seed=1)
                (y * w).abs().sum().backward() if y.dtype.is_complex else (y * w).sum().backward()
                grads.append(x.grad)
            compare(grads[0], grads[1], strides=False)


@pytest.mark.parametrize("prim", ["c2c", "r2c", "r2c_twosided", "c2r", "c2r_odd"])
def test_gradcheck_primitives(prim):
    x = {"c2c": (3, 4, 5), "r2c": (3, 6, 5), "r2c_twosided": (4, 5), "c2r": (3, 4), "c2r_odd": (3, 4)}[prim]
    dtype = mt.float64 if prim.startswith("r2c") else mt.complex128
    t = mt.tensor(np.random.default_rng(0).standard_normal(x)).to(dtype).requires_grad_()
    fn = {"c2c": lambda t: mt._fft_c2c(t, [0, 2], 2, True),
          "r2c": lambda t: mt._fft_r2c(t, [0, 1], 1, True),
          "r2c_twosided": lambda t: mt._fft_r2c(t, [1], 0, False),
          "c2r": lambda t: mt._fft_c2r(t, [0, 1], 2, 6),
          "c2r_odd": lambda t: mt._fft_c2r(t, [1], 1, 7)}[prim]
    assert mt.autograd.gradcheck(fn, (t,))
    assert mt.autograd.gradgradcheck(fn, (t,))


STFT = [
    dict(n_fft=16, return_complex=True),
    dict(n_fft=16, hop_length=3, window="hann", return_complex=True),
    dict(n_fft=16, win_length=10, window="hann", center=False, return_complex=True),
    dict(n_fft=16, win_length=10, window="hann", center=False, align_to_window=True, return_complex=True),
    dict(n_fft=15, window="hann", normalized=True, onesided=False, return_complex=True, pad_mode="constant"),
    dict(n_fft=16, window="hann", return_complex=False),
]


@pytest.mark.parametrize("case", range(len(STFT)))
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_stft_istft(case, dtype):
    kw = dict(STFT[case])
    if dtype == "complex64" and kw.get("onesided") is not False:
        kw["onesided"] = False
    for shape in ((64,), (2, 50)):
        def fn(lib, kw=kw):
            kw = dict(kw)
            if kw.get("window") == "hann":
                kw["window"] = lib.hann_window(kw.get("win_length", kw["n_fft"]), dtype=lib.float64).to(
                    getattr(lib, dtype.replace("complex64", "float32")))
            return lib.stft(data(lib, shape, dtype), **kw)
        spec = check(fn, strides=False)
        if not kw["return_complex"] or kw.get("align_to_window") or (kw.get("center") is False and
                                                                      kw.get("win_length")):
            continue

        def inverse(lib, kw=kw):
            kw = dict(kw)
            window = lib.hann_window(kw["n_fft"], dtype=lib.float32) if kw.get("window") == "hann" else None
            spec = lib.stft(data(lib, shape, dtype), **{**kw, "window": window})
            return lib.istft(spec, kw["n_fft"], kw.get("hop_length"), window=window, normalized=kw.get("normalized", False),
                             onesided=kw.get("onesided"), return_complex=dtype.startswith("complex"),
                             length=shape[-1])
        check(inverse, tol=1e-4, strides=False)
        assert spec is not None


STFT_ERRORS = {
    "no return_complex": lambda lib: lib.stft(lib.ones(64), 16),
    "n_fft too big": lambda lib: lib.stft(lib.ones(10), 16, center=False, return_complex=True),
    "integer input": lambda lib: lib.stft(lib.ones(64, dtype=lib.int32), 16, return_complex=True),
    "window size": lambda lib: lib.stft(lib.ones(64), 16, window=lib.ones(3), return_complex=True),
    "3-D input": lambda lib: lib.stft(lib.ones(2, 2, 64), 16, center=False, return_complex=True),
    "align with center": lambda lib: lib.stft(lib.ones(64), 16, align_to_window=True, return_complex=True),
    "hop": lambda lib: lib.stft(lib.ones(64), 16, hop_length=0, return_complex=True),
    "istft real input": lambda lib: lib.istft(lib.ones(9, 5), 16),
    "istft frequency size": lambda lib: lib.istft(lib.ones(7, 5, dtype=lib.complex64), 16),
    "istft hop": lambda lib: lib.istft(lib.ones(9, 5, dtype=lib.complex64), 16, hop_length=20),
    "istft zero window": lambda lib: lib.istft(lib.ones(9, 5, dtype=lib.complex64), 16, window=lib.zeros(16)),
}


@pytest.mark.parametrize("case", sorted(STFT_ERRORS))
def test_stft_errors(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = outcome(STFT_ERRORS[case], torch)
        assert a[0] == "raised", a
        assert outcome(STFT_ERRORS[case], mt) == a


def test_stft_gradient():
    grads = []
    for lib in (torch, mt):
        x = data(lib, (2, 40), "float64").requires_grad_()
        w = lib.hann_window(12, dtype=lib.float64)
        s = lib.stft(x, 12, 3, window=w, return_complex=True)
        y = lib.istft(s * (1 + 0.5j), 12, 3, window=w, length=40)
        (y.pow(2).sum() + s.abs().sum()).backward()
        grads.append(x.grad)
    compare(grads[0], grads[1], strides=False)


def test_meta_device_gives_shapes_dtypes_and_layouts():
    for name, dtype in [("fft", "float32"), ("rfft", "float32"), ("irfft", "complex64"), ("fft2", "float32"),
                        ("ihfft2", "float32"), ("hfftn", "complex64")]:
        a = getattr(torch.fft, name)(torch.ones(4, 6, device="meta", dtype=getattr(torch, dtype)))
        b = getattr(mt.fft, name)(mt.ones(4, 6, device="meta", dtype=getattr(mt, dtype)))
        assert (tuple(a.shape), str(a.dtype), a.stride()) == (tuple(b.shape), str(b.dtype), b.stride())
        assert b.device.type == "meta"


def test_primitives_refuse_bad_arguments():
    """The primitives are public (torch._fft_c2c...): bad dims, dtypes, sizes and modes are errors, never a crash or
    uninitialised values."""
    c, r = mt.ones(3, 4, dtype=mt.complex64), mt.ones(3, 4)
    bad = [(lambda: mt._fft_c2c(c, [5], 0, True), IndexError, "Dimension out of range"),
           (lambda: mt._fft_c2c(c, [0, 0], 0, True), RuntimeError, "FFT dims must be unique"),
           (lambda: mt._fft_c2c(r, [0], 0, True), RuntimeError, "expects a complex input"),
           (lambda: mt._fft_r2c(c, [0], 0, True), RuntimeError, "Only supports floating-point dtypes"),
           (lambda: mt._fft_c2r(c, [1], 0, 2 ** 62), RuntimeError, "holds no signal"),
           (lambda: mt._fft_c2r(c, [1], 0, 0), RuntimeError, r"Invalid number of data points \(0\)"),
           (lambda: mt._fft_c2c(c, [0, 1, 0, 1, 0, 1], 0, True), RuntimeError, "6 dims"),
           (lambda: mt._fft_c2c(c, [0], 7, True), RuntimeError, "normalization must be"),
           (lambda: mt._fft_r2c(r, [], 0, True), RuntimeError, "at least one dimension"),
           (lambda: mt._fft_r2c(mt.ones(3, 0), [1], 0, True), RuntimeError, r"Invalid number of data points \(0\)")]
    for fn, exc, text in bad:
        with pytest.raises(exc, match=text):
            fn()
    assert tuple(mt._fft_c2c(mt.ones(0, 4, dtype=mt.complex64), [1], 0, True).shape) == (0, 4)


# The engine transforms the last dimension in blocks of lines and each other dimension in blocks of 8 columns
# copied through a buffer (8x8 tiles for complex64): sizes around and beyond those blocks, with remainders,
# strided and transposed inputs, against PyTorch.
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_blocked_passes_equal_pytorch(dtype):
    real = not dtype.startswith("complex")
    names = ("fftn", "ifftn", "rfftn", "irfftn", "hfftn") if real else ("fftn", "ifftn", "irfftn", "hfftn")
    cases = [((3, 20, 37), {}), ((2, 17, 24), {"dim": (0, 2)}), ((9, 16, 8), {"dim": (-2, -1), "norm": "ortho"}),
             ((40, 33), {"norm": "forward"}), ((2, 3, 11, 13), {"dim": (1, 2, 3)}), ((5, 200), {"dim": 0})]
    for name in names:
        for shape, kw in cases:
            for transpose in (False, True):
                check(lambda lib: getattr(lib.fft, name)(data(lib, shape, dtype, transpose=transpose), **kw))
    # a stepped view (no dense layout) and a large batch of lines that spans several blocks
    check(lambda lib: lib.fft.fftn(data(lib, (12, 40, 18), dtype)[::2, 3:, ::3], dim=(0, 1)))
    check(lambda lib: lib.fft.fft(data(lib, (300, 160), dtype)[:, ::2]))
    check(lambda lib: lib.fft.irfft(data(lib, (70, 301), dtype)[:, :150], n=300))
    # even lengths from 128 run as complex transforms of half the length: rows at odd steps, strided lines
    check(lambda lib: lib.fft.rfft(data(lib, (5, 301), dtype)[:, :256]))
    check(lambda lib: lib.fft.irfft(data(lib, (140, 6), dtype).t(), n=256))
    check(lambda lib: lib.fft.irfft(data(lib, (3, 131), dtype), norm="forward"))
    check(lambda lib: lib.fft.rfft(data(lib, (2, 4, 512), dtype).transpose(0, 1), norm="ortho"))
    if real:  # two-sided r2c over several dimensions: the column passes, then the conjugate-symmetric half
        for dims, onesided in (([1, 2], False), ([0, 2], False), ([1, 2], True)):
            check(lambda lib: lib._fft_r2c(data(lib, (3, 20, 256), dtype), dims, 2, onesided))


def test_big_transforms_staged_through_a_buffer():
    # from 4 MiB, blocks of adjacent lines are copied in (and for long lines out) through a buffer
    check(lambda lib: lib.fft.fft(data(lib, (512, 1024), "complex64")))
    check(lambda lib: lib.fft.ifft(data(lib, (256, 2048), "complex128"), norm="forward"))
    check(lambda lib: lib.fft.rfft(data(lib, (256, 4096), "float32"), norm="ortho"))
    check(lambda lib: lib.fft.rfft(data(lib, (128, 4096), "float64")))
    check(lambda lib: lib.fft.fft(data(lib, (256, 4096), "float32")))  # a two-sided r2c
    check(lambda lib: lib.fft.irfft(data(lib, (256, 2049), "complex64"), n=4096))
    check(lambda lib: lib.fft.irfft(data(lib, (128, 2049), "complex128"), n=4096, norm="ortho"))
    check(lambda lib: lib.fft.fft2(data(lib, (8, 256, 256), "complex64")))
    # contiguous lines that start one element past an aligned address
    check(lambda lib: lib.fft.fft(data(lib, (512 * 1024 + 1,), "complex64")[1:].view(512, 1024)))


def test_bits_do_not_depend_on_the_thread_count():
    xs = {"fft2": data(mt, (5, 96, 72), "complex64"), "rfft2": data(mt, (3, 128, 130), "float32"),
          "irfft": data(mt, (257, 1025), "complex64"), "fftn": data(mt, (4, 24, 40, 8), "complex128"),
          "rfft": data(mt, (300, 1000), "float64"), "ifft": data(mt, (20, 9, 301), "complex64"),
          "fft": data(mt, (300, 2048), "complex64")}  # staged through a buffer
    before = mt.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            mt.set_num_threads(threads)
            results.append({k: getattr(mt.fft, k)(x, norm="ortho").numpy() for k, x in xs.items()})
    finally:
        mt.set_num_threads(before)
    for k in xs:
        assert results[0][k].tobytes() == results[1][k].tobytes(), k


def test_c2r_leaves_its_input_unchanged():
    for dtype in ("complex64", "complex128"):
        x = data(mt, (8, 65), dtype)
        keep = x.clone()
        mt.fft.irfft(x, n=128)  # as a complex transform of half the length
        mt.fft.irfft(x, n=127)  # the engine's own c2r (odd, and short even lengths)
        mt.fft.irfft(x, n=64)
        mt.fft.irfft2(x)
        assert mt.equal(x, keep)


def test_engine():
    """MKL when PyPI's `mkl` is installed, as PyTorch's x86 builds; FFTW otherwise. The whole file runs
    again on FFTW below, when this run is on MKL."""
    mt.fft.fft(data(mt, (4,), "complex64"))
    engine = mt._C.ffi.string(mt._C.lib.mt_fft_engine()).decode()
    assert engine == (os.environ.get("MT_TEST_FFT_ENGINE") or ("mkl" if mt.backends.mkl.is_available() else "fftw"))


@pytest.mark.skipif(os.environ.get("MT_TEST_FFT_ENGINE") == "fftw" or not mt.backends.mkl.is_available(),
                    reason="this run is on FFTW already")
def test_this_file_on_fftw():
    env = dict(os.environ, MT_TEST_FFT_ENGINE="fftw")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
