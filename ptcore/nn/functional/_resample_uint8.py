"""Bilinear and bicubic resizing of uint8 images, as torch's CPU kernel
(the Pillow-SIMD algorithm torch adopted): separable passes, the width first
and then the height (a pass is skipped when its size does not change), with
fixed-point weights.

Each output pixel's weights are torch's anti-aliasing filter weights
(bilinear without anti-aliasing: the plain filter's support), normalised to
sum to one -- bicubic without anti-aliasing takes the float kernel's taps,
the edge pixel repeated --, scaled to int16 at the largest precision that keeps the largest
weight below 2**15, and each pass rounds (adding half a unit) and clamps to
[0, 255] before the next one.
"""
import math

import numpy as np

import ptcore

__all__ = ["resize"]


def _filter(kind, antialias):
    if kind == "linear":
        return lambda x: np.where(np.abs(x) < 1.0, 1.0 - np.abs(x), 0.0)
    a = -0.5 if antialias else -0.75        # Pillow's cubic when anti-aliasing, as torch

    def cubic(x):
        x = np.abs(x)
        c1 = ((a + 2) * x - (a + 3)) * x * x + 1
        c2 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1.0, c1, np.where(x < 2.0, c2, 0.0))
    return cubic


def _scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


def _cubic_replicate(n_in, n_out, s, align_corners):
    """Bicubic weights without anti-aliasing: the float kernel's four taps
    (A = -0.75) around each source point, the indices clamped to the image
    (the edge pixel repeated), as torch's uint8 kernel."""
    filt = _filter("cubic", False)
    dense = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        real = s * i if align_corners else s * (i + 0.5) - 0.5
        f = math.floor(real)
        t = real - f
        taps = filt(np.array([t + 1.0, t, 1.0 - t, 2.0 - t]))
        for k in range(4):
            dense[i, min(max(f - 1 + k, 0), n_in - 1)] += taps[k]
    return dense


def _weights(kind, n_in, n_out, scale, align_corners, antialias):
    """The int16 weight matrix ``(n_out, n_in)`` and its precision (bits)."""
    interp = 2 if kind == "linear" else 4
    s = _scale(n_in, n_out, align_corners, scale)
    if kind == "cubic" and not antialias:
        return _fixed(_cubic_replicate(n_in, n_out, s, align_corners))
    widen = s >= 1.0 and antialias
    support = interp * 0.5 * s if widen else interp * 0.5
    invscale = 1.0 / s if widen else 1.0
    delta = 0.5 if (align_corners and not antialias) else 0.0
    max_size = int(math.ceil(support)) * 2 + 1 if antialias else interp
    filt = _filter(kind, antialias)
    dense = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        center = s * (i + 0.5 - delta)
        xmin = max(int(center - support + 0.5 + delta), 0)
        xsize = min(int(center + support + 0.5 + delta), n_in) - xmin
        xsize = min(max(xsize, 0), max_size)
        j = np.arange(xsize)
        w = filt((j + xmin - center + 0.5 - delta) * invscale)
        total = w.sum()
        if total != 0.0:
            w = w / total
        dense[i, xmin:xmin + xsize] = w
    return _fixed(dense)


def _fixed(dense):
    """Weights as int16 at the largest precision keeping the largest below
    2**15 (rounded half away from zero), and that precision."""
    w_max = dense.max(initial=0.0)
    precision = 0
    while precision < 22 and int(0.5 + w_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = dense * (1 << precision)
    fixed = np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5)).astype(np.int64)
    return fixed, precision


def _pass(arr, axis, fixed, precision):
    acc = np.tensordot(arr, fixed, axes=([axis], [1]))          # the new axis goes last
    acc = np.moveaxis(acc, -1, axis)
    acc += 1 << (precision - 1)
    return np.clip(acc >> precision, 0, 255)


def resize(x, kind, out_size, scales, align_corners, antialias):
    """``x`` ``(N, C, H, W)`` uint8 resized to ``out_size`` (H, W)."""
    arr = x.detach().contiguous().numpy().astype(np.int64)
    for axis, k in ((3, 1), (2, 0)):                  # width first, then height
        n_in, n_out = arr.shape[axis], out_size[k]
        if n_in == n_out:
            continue
        fixed, precision = _weights(kind, n_in, n_out, scales[k], align_corners, antialias)
        arr = _pass(arr, axis, fixed, precision)
    return ptcore.from_numpy(np.ascontiguousarray(arr.astype(np.uint8))).to(x.device)
