"""Integer convolutions on the CPU (torch's slow_conv2d/3d paths for integer
dtypes; its transposed convolutions take int64 only).

Computed in int64 with NumPy, one product over channels per kernel tap, and
cast back to the input's dtype: integer arithmetic wraps modulo 2**bits, so
the result equals torch's wrapping accumulation in the narrow dtype.
"""
import numpy as np

import ptcore

__all__ = ["supports", "conv_forward", "conv_transpose"]

_INTS = (ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64)


def supports(input, int64_only):
    """Whether torch's CPU convolution takes ``input``'s integer dtype (its
    transposed and dilated kernels only int64)."""
    return input.dtype is ptcore.int64 if int64_only else input.dtype in _INTS


def _np64(t):
    return t.detach().contiguous().numpy().astype(np.int64, copy=False)


def _taps(ks):
    return np.ndindex(*ks)


def conv_forward(x5, w5, bias5, stride, pad, dil, groups, out5):
    """``conv(x, w) + bias`` on 5-d ``(N, C, D, H, W)`` tensors, of shape ``out5``."""
    x, w = _np64(x5), _np64(w5)
    N, C = x.shape[:2]
    O = w.shape[0]
    cg, og = C // groups, O // groups
    osp = out5[2:]
    ks = w.shape[2:]
    # left padding as given, the right as far as the last window reaches
    need = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(osp, stride, ks, dil)]
    right = [max(0, n - (i + p)) for n, i, p in zip(need, x.shape[2:], pad)]
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, r) for p, r in zip(pad, right)])
    out = np.zeros((N, O) + tuple(osp), dtype=np.int64)
    for tap in _taps(ks):
        window = tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                       for t, d, s, o in zip(tap, dil, stride, osp))
        xs = x[(slice(None), slice(None)) + window]          # (N, C, *osp)
        for g in range(groups):
            wg = w[g * og:(g + 1) * og, :, tap[0], tap[1], tap[2]]       # (og, cg)
            part = np.tensordot(wg, xs[:, g * cg:(g + 1) * cg], axes=([1], [1]))
            out[:, g * og:(g + 1) * og] += np.moveaxis(part, 0, 1)
    if bias5 is not None:
        out += _np64(bias5).reshape((1, O, 1, 1, 1))
    return _back(out, x5.dtype)


def conv_transpose(gy5, w5, bias5, stride, pad, dil, groups, out5):
    """The transposed convolution of ``gy`` (``(N, O, ...)``) with ``w``
    (``(O, C/groups, k...)``) plus ``bias``, of shape ``out5``."""
    gy, w = _np64(gy5), _np64(w5)
    N, O = gy.shape[:2]
    og, cg = O // groups, w.shape[1]
    isp = gy.shape[2:]
    ks = w.shape[2:]
    full = [max(o + 2 * p, (i - 1) * s + (k - 1) * d + 1)
            for o, p, i, s, k, d in zip(out5[2:], pad, isp, stride, ks, dil)]
    acc = np.zeros((N, cg * groups) + tuple(full), dtype=np.int64)
    for tap in _taps(ks):
        window = tuple(slice(t * d, t * d + s * (i - 1) + 1, s)
                       for t, d, s, i in zip(tap, dil, stride, isp))
        for g in range(groups):
            wg = w[g * og:(g + 1) * og, :, tap[0], tap[1], tap[2]]       # (og, cg)
            part = np.tensordot(gy[:, g * og:(g + 1) * og], wg, axes=([1], [0]))
            acc[(slice(None), slice(g * cg, (g + 1) * cg)) + window] += np.moveaxis(part, -1, 1)
    crop = tuple(slice(p, p + o) for p, o in zip(pad, out5[2:]))
    out = acc[(slice(None), slice(None)) + crop]
    if bias5 is not None:
        out = out + _np64(bias5).reshape((1, -1, 1, 1, 1))
    return _back(out, gy5.dtype)


def _back(arr, dtype):
    # the wrapping cast of int64 to the narrow dtype (NumPy's astype wraps)
    return ptcore.from_numpy(np.ascontiguousarray(arr).astype(
        ptcore.empty(0, dtype=dtype).numpy().dtype))
