"""torch._fft_c2c/_fft_r2c/_fft_c2r (the C core's Fourier transforms, which torch.fft composes) and the
short-time transforms stft/istft, composed from them as ATen composes them."""
import warnings

from ._C import lib
from ._dispatch import call
from ._dtype import scalar_name as _scalar_name
from ._tensor import Tensor


def _fft_c2c(self, dim, normalization, forward):
    return call(lib.mt_fft_c2c, self._h, len(dim), list(dim), normalization, forward)


def _fft_r2c(self, dim, normalization, onesided):
    return call(lib.mt_fft_r2c, self._h, len(dim), list(dim), normalization, onesided)


def _fft_c2r(self, dim, normalization, last_dim_size):
    return call(lib.mt_fft_c2r, self._h, len(dim), list(dim), normalization, last_dim_size)


_BY_ROOT_N, _BY_N = 1, 2  # fft.py's normalization modes
_warned = set()


def _warn_once(text):
    if text not in _warned:
        _warned.add(text)
        warnings.warn(text, UserWarning, stacklevel=3)


def _opt(v):
    return "None" if v is None else str(int(v))


def _describe(t):
    """'torch.FloatTensor[2, 50]' as ATen's messages print a tensor."""
    return f"{t.type()}[{', '.join(map(str, t.shape))}]"


def _window_text(window):
    return "None" if window is None else f"{window.type()}{{[{', '.join(map(str, window.shape))}]}}"


def _centered(window, win_length, n_fft, like):
    """A window of win_length zero-padded on both sides to n_fft (ones when there is none)."""
    from . import ones
    from .nn._aten import constant_pad_nd
    w = window if window is not None else ones(win_length, dtype=like.dtype)
    left = (n_fft - win_length) // 2
    return w if win_length == n_fft else constant_pad_nd(w, [left, n_fft - win_length - left])


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input
    if center:  # reflect-pad n_fft//2 on both sides (torch.functional.stft's step)
        from .nn import functional as F
        extended = [1] * (3 - x.dim()) + list(x.shape)
        x = F.pad(x.view(extended), [n_fft // 2, n_fft // 2], pad_mode)
        x = x.view(x.shape[-input.dim():])

    def fail(what):
        raise RuntimeError(f"stft({_describe(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
                           f"window={_window_text(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
                           f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : {what}")

    if window is None:
        _warn_once("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                   "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to "
                   "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
    complex_result = return_complex if return_complex is not None else (
        x.dtype.is_complex or (window is not None and window.dtype.is_complex))
    if not complex_result:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        _warn_once("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                   "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                   "still call torch.view_as_real on the complex output to recover the old return format.")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        fail("expected a tensor of floating point or complex values")
    if not 1 <= x.dim() <= 2:
        fail("expected a 1D or 2D tensor")
    batched = x.unsqueeze(0) if x.dim() == 1 else x
    length = batched.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
             f"[{', '.join(map(str, window.shape))}]")
    if align_to_window and win < n_fft:  # frames of win_length, windowed, then centred in n_fft
        from .nn._aten import constant_pad_nd
        left = (n_fft - win) // 2
        frames = batched.unfold(1, win, hop)
        frames = constant_pad_nd(frames if window is None else frames * window, [left, n_fft - win - left])
    else:
        frames = batched.unfold(1, n_fft, hop)
        if window is not None or win < n_fft:
            frames = frames * _centered(window, win, n_fft, x)
    is_complex = frames.dtype.is_complex
    sided = (not is_complex) if onesided is None else onesided
    mode = _BY_ROOT_N if normalized else 0
    if is_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft_c2c(frames, [2], mode, True)
    else:
        out = _fft_r2c(frames, [2], mode, sided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    if complex_result:
        return out
    from . import view_as_real
    return view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
          length=None, return_complex=False):
    from . import arange, view_as_real, zeros
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")

    def fail(what, sep=" : "):
        raise RuntimeError(f"istft(CPU{_scalar_name(input.dtype)}Type[{', '.join(map(str, input.shape))}], "
                           f"n_fft={n_fft}, hop_length={hop}, win_length={win}, window={_window_text(window)}, "
                           f"center={int(center)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
                           f"length={'None' if length is None else length}, return_complex={int(return_complex)})"
                           f"{sep}{what}")

    real_dim = input.dim() + 1
    if input.numel() == 0:
        fail("input tensor cannot be empty.")
    if real_dim not in (3, 4):
        fail(f"expected a tensor with 3 or 4 dimensions, but got {real_dim}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    sided = fft_size != n_fft if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 when "
             f"onesided=True, but got {fft_size}")
    if not sided and n_fft != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
             f"onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail("Invalid window shape. window has to be 1D and length of `win_length`")
    real_dtype = view_as_real(input.resolve_conj()).dtype
    w = _centered(window, win, n_fft, zeros(0, dtype=real_dtype))
    x = input.unsqueeze(0) if real_dim == 3 else input
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size)
    mode = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft_c2c(x, [2], mode, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        frames = _fft_c2r(x if sided else x.narrow(-1, 0, n_fft // 2 + 1), [2], mode, n_fft)
    # overlap-add of the windowed frames and of the squared window (PyTorch's unfold_backward)
    total = n_fft + hop * (n_frames - 1)
    where = (arange(n_frames).unsqueeze(1) * hop + arange(n_fft)).flatten()
    frames = frames * w
    if frames.dtype.is_complex:  # overlap-added as (real, imag) pairs
        from . import view_as_complex
        pairs = view_as_real(frames).flatten(1, 2)
        y = view_as_complex(zeros(frames.shape[0], total, 2, dtype=pairs.dtype).index_add(1, where, pairs))
    else:
        y = zeros(frames.shape[0], total, dtype=frames.dtype).index_add(1, where, frames.flatten(1))
    envelope = zeros(total, dtype=w.dtype).index_add(0, where, w.pow(2).expand(n_frames, n_fft).flatten())
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y = y[:, start:end]
    envelope = envelope[start:end]
    if bool(envelope.abs().min() < 1e-11):
        fail("window overlap add min: 1\n[ CPUBoolType{} ]", sep=" ")
    y = y / envelope
    if real_dim == 3:
        y = y.squeeze(0)
    if end > total:
        from .nn._aten import constant_pad_nd
        _warn_once("The length of signal is shorter than the length parameter. Result is being padded with zeros in "
                   "the tail. Please check your center and hop_length settings.")
        y = constant_pad_nd(y, [0, end - total])
    return y


FUNCTIONS = {"_fft_c2c": _fft_c2c, "_fft_r2c": _fft_r2c, "_fft_c2r": _fft_c2r, "stft": stft, "istft": istft}
METHODS = {"stft": stft, "istft": istft}
