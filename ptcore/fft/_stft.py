"""Short-time Fourier transform and its inverse (``torch.stft`` /
``torch.istft``), composed of differentiable ops and the FFT primitives as
PyTorch's ``SpectralOps.cpp`` composes them: frames are a strided view of
the (centre-padded) signal, the inverse overlap-adds the frames and divides
by the overlap-added squared window."""
import operator as _operator
import warnings as _warnings

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore.autograd import _record
from ptcore.fft._primitives import c2c, r2c, c2r, zero_pad, NORM_NONE, NORM_ROOT, NORM_N

__all__ = ["stft", "istft"]

_warned = set()


def _warn_once(key, msg):
    if key not in _warned:
        _warned.add(key)
        _warnings.warn(msg, UserWarning, stacklevel=3)


def _tname(t):
    return f"ptcore.{t.dtype._legacy}Tensor"


def _opt(v):
    return "None" if v is None else str(int(v))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform (``torch.stft``).

    Parameters
    ----------
    input : Tensor
        A signal ``(L,)`` or a batch of signals ``(B, L)``, real or complex.
    n_fft : int
        FFT size (frame length).
    hop_length : int, optional
        Distance between frames (default ``n_fft // 4``).
    win_length : int, optional
        Window length, at most ``n_fft`` (default ``n_fft``); a shorter
        window is zero-padded on both sides to ``n_fft``.
    window : Tensor, optional
        1-D window of length ``win_length`` (default: rectangular, with a
        warning as PyTorch).
    center : bool
        Pad the signal by ``n_fft // 2`` on both sides (``pad_mode``).
    pad_mode : str
        ``"reflect"``, ``"constant"``, ``"replicate"`` or ``"circular"``.
    normalized : bool
        Scale the frames' transforms by ``1 / sqrt(n_fft)``.
    onesided : bool, optional
        Keep ``n_fft // 2 + 1`` frequencies (default for real input and window).
    return_complex : bool
        Required for real input; ``False`` returns ``view_as_real`` of the result
        (deprecated, with PyTorch's warning).
    align_to_window : bool, optional
        Only with ``center=False``: frames start at the window's start.

    Returns
    -------
    Tensor
        ``(B?, n_freq, n_frames)`` complex (or ``(..., 2)`` real).

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.arange(16.)
    >>> ptcore.stft(x, 8, window=ptcore.hann_window(8), return_complex=True).shape
    ptcore.Size([5, 9])
    """
    import ptcore
    if not isinstance(input, _TensorBase):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    n_fft = _operator.index(n_fft)
    hop = n_fft >> 2 if hop_length is None else _operator.index(hop_length)
    win = n_fft if win_length is None else _operator.index(win_length)
    if window is None:
        _warn_once("stft_window", "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "ptcore.hann_window or ptcore.hamming_window are recommended to reduce "
                   "spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=ptcore.ones(n_fft, device=<device>)`.")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    cplx = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        return_complex = cplx
        if not return_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
    if not return_complex:
        _warn_once("stft_real", "stft with return_complex=False is deprecated. In a future "
                   "pytorch release, stft will return complex tensors for all inputs, and "
                   "return_complex=False will raise an error.\nNote: you can still call "
                   "ptcore.view_as_real on the complex output to recover the old return format.")
    x = input
    if center and x.dim() in (1, 2):
        if pad_mode not in ("reflect", "constant", "replicate", "circular"):
            raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
        p = n_fft // 2
        shape = tuple(x.shape)
        x3 = x.reshape((1,) * (3 - x.dim()) + shape)
        if pad_mode == "reflect" and p >= shape[-1]:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({p}, {p}) at dimension 2 of "
                               f"input {list(x3.shape)}")
        # (torch's nn.functional.pad, the public entry: ptcore.nn loads with the first stft)
        x = ptcore.nn.functional.pad(x3, (p, p), mode=pad_mode)
        x = x.reshape(shape[:-1] + (shape[-1] + 2 * p,))

    def repr_():
        w = "None" if window is None else f"{_tname(window)}{{{list(window.shape)}}}"
        return (f"stft({_tname(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
                f"win_length={win}, window={w}, normalized={int(bool(normalized))}, "
                f"onesided={_opt(onesided)}, return_complex={int(bool(return_complex))}, "
                f"align_to_window={_opt(align_to_window)}) : ")
    if not (x.dtype.is_floating_point or x.is_complex()):
        raise RuntimeError(repr_() + "expected a tensor of floating point or complex values")
    if x.dim() not in (1, 2):
        raise RuntimeError(repr_() + "expected a 1D or 2D tensor")
    if x.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise RuntimeError(f"Unsupported dtype {x.dtype._legacy}")
    squeeze = x.dim() == 1
    if squeeze:
        x = x.unsqueeze(0)
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(repr_() + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(repr_() + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(repr_() + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(repr_() + f"expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size {list(window.shape)}")
    align = bool(align_to_window)
    left = (n_fft - win) // 2
    w = window
    if win < n_fft and not align:
        base = w if w is not None else ptcore.ones(win, dtype=x.dtype, device=x.device)
        w = ptcore.cat([ptcore.zeros(left, dtype=base.dtype, device=base.device), base,
                        ptcore.zeros(n_fft - win - left, dtype=base.dtype, device=base.device)])
    if align:
        # frames of win_length samples from the frame starts, centred in n_fft
        frame_len = win
    else:
        frame_len = n_fft
    n_frames = 1 + (length - frame_len) // hop
    frames = x.as_strided((x.shape[0], n_frames, frame_len),
                          (x.stride(0), hop * x.stride(1), x.stride(1)), x.storage_offset())
    if w is not None:
        frames = frames * w
    if frame_len < n_fft:
        import ptcore
        z = ptcore.zeros(x.shape[0], n_frames, left, dtype=frames.dtype, device=frames.device)
        z2 = ptcore.zeros(x.shape[0], n_frames, n_fft - frame_len - left, dtype=frames.dtype,
                          device=frames.device)
        frames = ptcore.cat([z, frames, z2], 2)
    side = onesided if onesided is not None else not frames.is_complex()
    norm = NORM_ROOT if normalized else NORM_NONE
    if frames.is_complex():
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = c2c(frames, (2,), norm, True)
    else:
        out = r2c(frames, (2,), norm, bool(side))
    # (torch transposes and squeezes in place: TransposeBackward1, SqueezeBackward4)
    out = _record.name_grad_fn(out.transpose(1, 2), "TransposeBackward1", frames)
    if squeeze:
        out = _record.name_grad_fn(out.squeeze(0), "SqueezeBackward4", frames)
    return out if return_complex else ptcore.view_as_real(out)


def _overlap_add(frames, hop, total):
    """Sum frames ``(C, F, N)`` placed ``hop`` apart into ``(C, total)``
    (PyTorch's ``unfold_backward``), with one differentiable term per
    ``hop``-wide column block of the frames."""
    import ptcore
    C, F, N = frames.shape
    K = -(-N // hop)
    span = (F + K - 1) * hop
    y = None
    for k in range(K):
        w = min(hop, N - k * hop)
        blk = frames.narrow(2, k * hop, w)
        if w < hop:
            blk = zero_pad(blk, 2, hop - w)
        blk = blk.reshape(C, F * hop)
        lead = k * hop
        trail = span - lead - F * hop
        parts = []
        if lead:
            parts.append(ptcore.zeros(C, lead, dtype=blk.dtype, device=blk.device))
        parts.append(blk)
        if trail:
            parts.append(ptcore.zeros(C, trail, dtype=blk.dtype, device=blk.device))
        term = ptcore.cat(parts, 1) if len(parts) > 1 else blk
        y = term if y is None else y + term
    return y.narrow(1, 0, total)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform (``torch.istft``): overlap-add of
    the frames' inverse transforms, divided by the overlap-added squared
    window (least-squares inverse of :func:`stft` with the same arguments).

    Parameters
    ----------
    input : Tensor
        Complex ``(B?, n_freq, n_frames)`` as returned by :func:`stft`.
    length : int, optional
        Output length (trimmed, or zero-padded with PyTorch's warning).
    return_complex : bool
        Complex output (needs a two-sided input).

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.randn(64, dtype=ptcore.float64)
    >>> w = ptcore.hann_window(16, dtype=ptcore.float64)
    >>> X = ptcore.stft(x, 16, window=w, return_complex=True)
    >>> bool(ptcore.allclose(ptcore.istft(X, 16, window=w, length=64), x))
    True
    """
    import ptcore
    if not isinstance(input, _TensorBase):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    n_fft = _operator.index(n_fft)
    hop = n_fft >> 2 if hop_length is None else _operator.index(hop_length)
    win = n_fft if win_length is None else _operator.index(win_length)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is None:
        _warn_once("istft_window", "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the inversion "
                   "lossless.To suppress this warning and use a rectangular window, explicitly "
                   "set `window=ptcore.ones(n_fft, device=<device>)`.")

    def err(msg):
        w = "None" if window is None else f"{_tname(window)}{{{list(window.shape)}}}"
        return RuntimeError(
            f"istft({_tname(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, center={int(bool(center))}, "
            f"normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
            f"length={_opt(length)}, return_complex={int(bool(return_complex))}) : {msg}")
    if input.numel() == 0:
        raise err("istft input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise err(f"expected a tensor with a 3 or 4 dimensions of complex, but got "
                  f"{input.dim() + 1}")
    n_frames = input.shape[-1]
    fft_size = input.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    side = onesided if onesided is not None else fft_size != n_fft
    if side:
        if n_fft // 2 + 1 != fft_size:
            raise err("expected the frequency dimension (3rd to the last) of the input tensor "
                      f"to match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    elif n_fft != fft_size:
        raise err("expected the frequency dimension (3rd to the last) of the input tensor to "
                  f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise err("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise err("expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise err("Invalid window shape. window has to be 1D and length of `win_length`")
    real_dt = _C.float64 if input.dtype is _C.complex128 else _C.float32
    w = window if window is not None else ptcore.ones(win, dtype=real_dt, device=input.device)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = ptcore.cat([ptcore.zeros(left, dtype=w.dtype, device=w.device), w,
                        ptcore.zeros(n_fft - win - left, dtype=w.dtype, device=w.device)])
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = x.transpose(1, 2)                       # (C, n_frames, fft_size)
    norm = NORM_ROOT if normalized else NORM_N
    if return_complex:
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = c2c(x, (2,), norm, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not side:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = c2r(x, (2,), norm, n_fft)
    y = _overlap_add(x * w.reshape(1, 1, n_fft), hop, total)
    env = _overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft).contiguous(),
                       hop, total)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + _operator.index(length)
    elif center:
        end = total - n_fft // 2
    else:
        end = total
    stop = min(end, total)
    y = y.narrow(1, start, max(stop - start, 0))
    env = env.narrow(1, start, max(stop - start, 0))
    if env.numel() and bool((env.abs().min() < 1e-11).item()):
        raise err("window overlap add min: 1")
    y = y / env
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > total:
        _warn_once("istft_len", "The length of signal is shorter than the length parameter. "
                   "Result is being padded with zeros in the tail. Please check your center and "
                   "hop_length settings.")
        y = zero_pad(y, y.dim() - 1, end - total)
    return y
