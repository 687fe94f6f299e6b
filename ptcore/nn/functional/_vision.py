"""Vision helpers: ``pad``, ``interpolate``/``upsample*``, ``pixel_shuffle``,
``pixel_unshuffle``.

``pad`` runs ``ptcore._ops.shape.pad`` forward and has an explicit backward
(cropping for constant padding, index-add over each padded dim's source map
for reflect/replicate/circular).  ``interpolate`` runs the CPU kernels of
:mod:`ptcore.nn.functional._resample` on float32/float64 CPU tensors;
otherwise (and anti-aliased) it resamples one spatial dim at a time: output
= sum over taps ``j`` of ``x.index_select(d, idx_j) * w_j``, with PyTorch's
index/weight formulas (nearest, nearest-exact, linear, bilinear, trilinear,
bicubic; area = adaptive average pooling).
"""
import builtins
import math
import operator

import numpy as np

import ptcore
from ptcore._ops import shape as _shape_ops
from ptcore._tensor import _TensorBase, IntArgOverflowError
from ptcore._scalar_args import bool_param, float_param, plain_number, strict_int_param
from ptcore._warn import warn_at_caller
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore.autograd._record import one_node as _one_node, zero_link
from ptcore._ops._memory_format import _in_memory_format, _output_memory_format
import ptcore.nn.functional._resample_uint8 as _resample_uint8
from ptcore.nn.functional._conv import _Function, _size
import ptcore.nn.functional._resample as _resample
from ptcore.nn.functional._pool import adaptive_avg_pool1d, adaptive_avg_pool2d, \
    adaptive_avg_pool3d

__all__ = [
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
]


# ---------------------------------------------------------------------------
# pad
# ---------------------------------------------------------------------------
def _circular_index(n, lo, hi):
    """Source positions of PyTorch's circular padding along one dim."""
    n_out = n + lo + hi
    core = list(range(builtins.max(-lo, 0), n - builtins.max(-hi, 0)))
    out = [0] * n_out
    a = builtins.max(lo, 0)
    out[a:a + len(core)] = core
    if lo > 0:
        src = n_out - lo - builtins.max(hi, 0)
        out[0:lo] = out[src:src + lo]
    if hi > 0:
        a = builtins.max(lo, 0)
        out[n_out - hi:] = out[a:a + hi]
    return out


class _PadFn(_Function):
    _backward_inputs = 1          # (torch's pad nodes: one edge, to the input)

    @staticmethod
    def forward(ctx, x, pad, mode, value):
        out = _shape_ops.pad(x, pad, mode, value)
        ctx.meta = (tuple(x.shape), tuple(pad), mode)
        if mode in ("reflect", "replicate"):
            ctx.save_for_backward(x)        # torch's backward takes self (zero derivative)
        if mode != "circular":
            # torch's constant/reflection/replication pads keep a
            # channels_last(_3d) input's layout (circular is a cat: contiguous)
            out = _in_memory_format(out, _output_memory_format(x))
        return out

    @staticmethod
    def backward(ctx, g):
        xshape, pad, mode = ctx.meta
        if mode == "constant":
            # crop what was padded (a differentiable slice), pad what was cropped
            nd = len(xshape)
            sl = [slice(None)] * nd
            for i in range(len(pad) // 2):
                d = nd - 1 - i
                lo, hi = builtins.max(pad[2 * i], 0), builtins.max(pad[2 * i + 1], 0)
                sl[d] = slice(lo, g.shape[d] - hi)
            g = g[tuple(sl)]
            grow = [builtins.max(-p, 0) for p in pad]
            if builtins.any(grow):
                g = _PadFn.apply(g, grow, "constant", 0)
            return g, None, None, None
        nd = len(xshape)
        k = len(pad) // 2
        for i in range(k):
            d = nd - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if lo == 0 and hi == 0:
                continue
            n = xshape[d]
            if mode == "circular":
                idx = _circular_index(n, lo, hi)
            else:
                idx = _shape_ops._pad_index(n, lo, hi, mode)
            shape = list(g.shape)
            shape[d] = n
            gx = ptcore.zeros(shape, dtype=g.dtype, device=g.device)
            gx.index_add_(d, ptcore.tensor(idx, dtype=ptcore.int64, device=g.device), g)
            g = gx
        if mode != "circular":
            g = zero_link(g, "PadBackwardBackward0", *ctx.saved_tensors)
        return g, None, None, None


_PAD_FUNCTIONS = {}


def _pad_function(mode, k):
    """``_PadFn`` under the grad_fn name torch's pad shows for ``mode`` over
    ``k`` dims (ConstantPadNdBackward0, ReflectionPad2DBackward0, ...)."""
    if mode == "constant":
        name = "ConstantPadNdBackward0"
    elif mode in ("reflect", "replicate") and 1 <= k <= 3:
        name = f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}DBackward0"
    else:
        return _PadFn
    fn = _PAD_FUNCTIONS.get(name)
    if fn is None:
        fn = _PAD_FUNCTIONS[name] = type(name[:-len("Backward0")], (_PadFn,),
                                         {"_backward_name": name})
    return fn


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative entries, crop) the last ``len(pad) // 2`` dims.

    Parameters
    ----------
    input : Tensor
    pad : sequence of int
        ``(last_left, last_right, 2nd_last_left, 2nd_last_right, ...)``.
    mode : {'constant', 'reflect', 'replicate', 'circular'}
    value : float, optional
        Fill value of 'constant' padding (default 0).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import ptcore
    >>> import ptcore.nn.functional as F
    >>> F.pad(ptcore.arange(3.).reshape(1, 3), (1, 2), mode="replicate")
    tensor([[0., 0., 1., 2., 2., 2.]])
    """
    if not isinstance(input, _TensorBase):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}")
    if value is not None:
        value = plain_number(value, "pad", "value", 4, kind="float")
        if isinstance(value, _TensorBase):
            value = float_param(value, "pad", "value", 4)      # (a 0-d one without grad)
        if isinstance(value, complex):
            raise TypeError("pad(): argument 'value' (position 4) must be float, not complex")
    pad = tuple(operator.index(p) for p in pad)
    return _pad_function(mode, len(pad) // 2).apply(input, pad, mode, value)


# ---------------------------------------------------------------------------
# resampling along one dim
# ---------------------------------------------------------------------------
class _ResampleFn(_Function):
    """y = sum_j x.index_select(d, idx_j) * w_j (w_j broadcast along dim d, or None = 1)."""

    @staticmethod
    def forward(ctx, x, d, taps):
        out = None
        for idx, w in taps:
            t = x.index_select(d, idx)
            if w is not None:
                t = t * w
            out = t if out is None else out.add_(t)
        ctx.meta = (tuple(x.shape), d, taps)
        return out

    @staticmethod
    def backward(ctx, g):
        xshape, d, taps = ctx.meta
        gx = ptcore.zeros(xshape, dtype=g.dtype, device=g.device)
        for idx, w in taps:
            gx.index_add_(d, idx, g if w is None else g * w)
        return gx, None, None


def _scale_value(scale, n_in, n_out, ft):
    # compute_scales_value: 1/scale when a scale is given, else in/out (in opmath type)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _area_scale(n_in, n_out, align_corners, scale, ft):
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    return _scale_value(scale, n_in, n_out, ft)


def _taps(mode, n_in, n_out, scale, align_corners, ft, ndim, d):
    """(index tensor, weight tensor or None) pairs resampling one dim."""
    o = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and n_out == n_in:
            idx = o
        elif mode == "nearest" and n_out == 2 * n_in:
            idx = o >> 1
        else:
            s = _scale_value(scale, n_in, n_out, np.float32)
            if mode == "nearest":
                src = np.floor(o.astype(np.float32) * s)
            else:
                src = np.floor((o.astype(np.float32) + np.float32(0.5)) * s)
            idx = np.minimum(src.astype(np.int64), n_in - 1)
        return [(ptcore.from_numpy(np.ascontiguousarray(idx, dtype=np.int64)), None)]
    s = _area_scale(n_in, n_out, align_corners, scale, ft)
    of = o.astype(ft)
    wshape = [1] * ndim
    wshape[d] = n_out
    if mode == "cubic":
        if align_corners:
            real = s * of
        else:
            real = s * (of + ft(0.5)) - ft(0.5)
        fl = np.floor(real)
        t = (real - fl).astype(ft)
        i0 = fl.astype(np.int64)
        A = ft(-0.75)

        def cc1(x):
            return ((A + 2) * x - (A + 3)) * x * x + 1

        def cc2(x):
            return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

        ws = [cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)]
        out = []
        for j in range(4):
            idx = np.clip(i0 - 1 + j, 0, n_in - 1)
            out.append((ptcore.from_numpy(np.ascontiguousarray(idx, dtype=np.int64)),
                        ptcore.from_numpy(np.ascontiguousarray(ws[j], dtype=ft)).reshape(wshape)))
        return out
    if align_corners:
        real = s * of
    else:
        real = np.maximum(s * (of + ft(0.5)) - ft(0.5), ft(0))
    i0 = real.astype(np.int64)
    lam1 = np.clip(real - i0.astype(ft), 0, 1).astype(ft)
    lam0 = (ft(1) - lam1).astype(ft)
    i1 = i0 + (i0 < n_in - 1)
    mk = ptcore.from_numpy
    return [(mk(np.ascontiguousarray(i0)), mk(np.ascontiguousarray(lam0)).reshape(wshape)),
            (mk(np.ascontiguousarray(i1)), mk(np.ascontiguousarray(lam1)).reshape(wshape))]


def _aa_taps(kind, n_in, n_out, scale, align_corners, ft, ndim, d):
    """Taps of PyTorch's anti-aliased bilinear/bicubic resampling of one dim:
    the filter is widened by the scale when downsampling and each output's
    weights are normalised to sum to one."""
    s = float(_area_scale(n_in, n_out, align_corners, scale, ft))
    interp = 2 if kind == "linear" else 4
    support = interp * 0.5 * s if s >= 1.0 else interp * 0.5
    invscale = 1.0 / s if s >= 1.0 else 1.0
    width = int(math.ceil(support)) * 2 + 1
    a = -0.5

    def filt(x):
        x = np.abs(x)
        if kind == "linear":
            return np.where(x < 1.0, 1.0 - x, 0.0)
        c1 = ((a + 2) * x - (a + 3)) * x * x + 1
        c2 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1.0, c1, np.where(x < 2.0, c2, 0.0))

    idx = np.zeros((width, n_out), dtype=np.int64)
    wts = np.zeros((width, n_out), dtype=ft)
    for i in range(n_out):
        center = s * (i + 0.5)
        xmin = builtins.max(int(center - support + 0.5), 0)
        xsize = builtins.min(int(center + support + 0.5), n_in) - xmin
        j = np.arange(xsize)
        w = filt(((j + xmin - center + 0.5) * invscale).astype(ft)).astype(ft)
        tot = w.sum()
        if tot != 0:
            w = w / tot
        idx[:xsize, i] = xmin + j
        idx[xsize:, i] = builtins.min(xmin, n_in - 1)
        wts[:xsize, i] = w
    wshape = [1] * ndim
    wshape[d] = n_out
    mk = ptcore.from_numpy
    return [(mk(np.ascontiguousarray(idx[j])), mk(np.ascontiguousarray(wts[j])).reshape(wshape))
            for j in range(width)]


_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def _scale(s):
    """An item of interpolate's ``scale_factor``: a number (torch's upsampling ops
    take floats there, not even a 0-d tensor)."""
    if isinstance(s, _TensorBase):
        raise TypeError("interpolate(): argument 'scale_factor' must be a float or a tuple of "
                        "floats, not Tensor")
    return plain_number(s, "interpolate", "scale_factor", kind="float")


def _scaled_size(n, scale):
    """floor(n * scale), an int64 as torch computes it (nan, inf and sizes past int64 raise:
    torch's kernels a RuntimeError, its Python floor for area mode or
    recompute_scale_factor=True ValueError (nan) or OverflowError (inf), and the adaptive
    pooling it calls then a TypeError; IntArgOverflowError is each of them)."""
    v = float(n) * scale
    if not -2.0**63 <= v < 2.0**63:      # (nan too)
        raise IntArgOverflowError("value cannot be converted to type int64_t without overflow")
    return int(math.floor(v))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Down/up-sample ``input`` to ``size`` or by ``scale_factor``.

    Parameters
    ----------
    input : Tensor
        ``(N, C, *spatial)`` with 1 to 3 spatial dims.
    size : int or tuple, optional
    scale_factor : float or tuple, optional
    mode : str
        'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' (4-D),
        'bicubic' (4-D), 'trilinear' (5-D) or 'area'.
    align_corners : bool, optional
        For the interpolating modes (default False).
    recompute_scale_factor : bool, optional
        Recompute the scale from the output size instead of using
        ``scale_factor`` in the index computation.
    antialias : bool
        Anti-aliased bilinear/bicubic resampling (4-D input), as PyTorch.

    Returns
    -------
    Tensor
    """
    if not isinstance(input, _TensorBase):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    else:
        bool_param(align_corners, "interpolate", "align_corners")
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None and recompute_scale_factor:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {list(size)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    f"format and output size in (o1, o2, ...,oK) format.")
            out_size = [operator.index(s) for s in size]
        else:
            out_size = [operator.index(size)] * dim
        scales = [None] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {list(scale_factor)}. Please provide input tensor in "
                    f"(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(_scale(s)) for s in scale_factor]
        else:
            scales = [float(_scale(scale_factor))] * dim
        out_size = [_scaled_size(input.shape[i + 2], scales[i]) for i in range(dim)]
        if recompute_scale_factor:
            scales = [None] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if dim < 1 or dim > 3 or mode not in _MODES:
        # (after the size/scale_factor checks, as torch's: a (3, 8) input with size=(4,)
        # is their ValueError)
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    need = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
    if mode in need and need[mode] != dim:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {need[mode] + 2}D input")
    if mode == "area":
        # torch's area mode is adaptive average pooling, whose checks (an
        # empty output size is allowed) are the only ones
        fn = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return fn(input, out_size)
    for i, o in enumerate(out_size):
        if o <= 0 or input.shape[i + 2] <= 0:
            raise RuntimeError(
                f"Input and output sizes should be greater than 0, but got input "
                f"({', '.join(str(s) for s in input.shape[2:])}) and output "
                f"({', '.join(str(s) for s in out_size)})")
    if input.dtype == ptcore.uint8 and mode in ("nearest", "nearest-exact"):
        # torch resamples uint8 images by nearest (a gather: exact through float32)
        return interpolate(input.float(), size, scale_factor, mode, align_corners,
                           recompute_scale_factor, antialias).to(ptcore.uint8)
    resize_uint8 = _loop_for("uint8 image resize", input.device, _resample_uint8.resize)
    if input.dtype == ptcore.uint8 and mode in ("bilinear", "bicubic") and \
            resize_uint8 is not None:
        # torch's fixed-point uint8 image resize (not float32 rounded; a CPU kernel)
        out = resize_uint8(input, "linear" if mode == "bilinear" else "cubic",
                           out_size, scales, bool(align_corners), antialias)
        return _in_memory_format(out, _output_memory_format(input))
    if not input.is_floating_point():
        raise NotImplementedError(f"interpolate: {mode} mode needs a floating-point input, got "
                                  f"{input.dtype}")
    kind = {"linear": "linear", "bilinear": "linear", "trilinear": "linear",
            "bicubic": "cubic"}.get(mode, mode)
    if not antialias and _resample.on_kernel(input):
        return _resample.upsample(input, kind, out_size, scales, align_corners)
    ft = np.float64 if input.dtype == ptcore.float64 else np.float32
    x = input
    for i in range(dim):
        d = i + 2
        n_in, n_out = x.shape[d], out_size[i]
        if n_in == n_out and (kind == "nearest" or antialias):
            # torch's anti-aliased kernel leaves an unresized dim untouched,
            # whatever the scale_factor (its backward does not: torch's bug)
            continue
        if antialias:
            taps = _aa_taps(kind, n_in, n_out, scales[i], align_corners, ft, x.dim(), d)
        else:
            taps = _taps(kind, n_in, n_out, scales[i], align_corners, ft, x.dim(), d)
        # the tap tables (from sizes only) go where the data is
        taps = [(idx.to(x.device), None if w is None else w.to(x.dtype).to(x.device))
                for idx, w in taps]
        x = _ResampleFn.apply(x, d, taps)
    if x is input:
        return input.clone()
    return _in_memory_format(x, _output_memory_format(input))    # as torch's upsample kernels


def _warn_deprecated_upsample(name):
    warn_at_caller(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                   "instead.")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (warns, as torch)."""
    _warn_deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')`` (warns, as torch)."""
    _warn_deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)`` (warns, as
    torch)."""
    _warn_deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------------
# pixel shuffle
# ---------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    """Rearrange ``(*, C*r^2, H, W)`` into ``(*, C, H*r, W*r)``.

    Parameters
    ----------
    input : Tensor
    upscale_factor : int

    Returns
    -------
    Tensor
    """
    r = strict_int_param(upscale_factor, "pixel_shuffle", "upscale_factor", 2)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if r * r > 2**63 - 1:                   # torch squares it in int64
        raise ValueError(f"upscale factor is too large, (upscale_factor)^2 overflowed: "
                         f"upscale_factor={r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    oc = c // (r * r)
    n = len(lead)

    def compute():
        x = input.reshape(lead + (oc, r, r, h, w))
        perm = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
        return _shuffle_result(x.permute(perm).reshape(lead + (oc, h * r, w * r)), input)
    # one node, as torch's kernel: its gradient is the inverse rearrangement
    return _one_node("PixelShuffleBackward0", compute, (input,),
                     lambda g: (pixel_unshuffle(g, r),))


def _shuffle_result(y, input):
    """``y`` as torch's pixel (un)shuffle kernel writes it: a new tensor (never
    a view of ``input``, as the reshapes give when r == 1 or sizes are 1),
    dense in the input's suggested memory format."""
    fmt = _output_memory_format(input)
    y = _in_memory_format(y, fmt)
    if not y.is_contiguous(memory_format=fmt) or (
            y.untyped_storage().data_ptr() == input.untyped_storage().data_ptr()):
        y = _in_memory_format(y.clone(memory_format=fmt), fmt)
    return y


def pixel_unshuffle(input, downscale_factor):
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r^2, H, W)`` (inverse of
    :func:`pixel_shuffle`).

    Parameters
    ----------
    input : Tensor
    downscale_factor : int

    Returns
    -------
    Tensor
    """
    r = strict_int_param(downscale_factor, "pixel_unshuffle", "downscale_factor", 2)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    n = len(lead)

    def compute():
        x = input.reshape(lead + (c, h // r, r, w // r, r))
        perm = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
        return _shuffle_result(x.permute(perm).reshape(lead + (c * r * r, h // r, w // r)),
                               input)
    return _one_node("PixelUnshuffleBackward0", compute, (input,),
                     lambda g: (pixel_shuffle(g, r),))


def channel_shuffle(input, groups):
    """Split the channels (dim 1) into ``groups`` groups and interleave them:
    ``(N, g*k, *) -> (N, k*g, *)``.

    Parameters
    ----------
    input : Tensor
        At least 3-d.
    groups : int

    Returns
    -------
    Tensor
    """
    if not isinstance(input, _TensorBase):
        raise TypeError(f"channel_shuffle(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    groups = operator.index(groups)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {_size(input)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])

    def compute():
        y = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
        # torch's kernel writes a new tensor, in the input's suggested memory format
        fmt = _output_memory_format(input)
        y = _in_memory_format(y.reshape((n, c) + rest), fmt)
        if y.untyped_storage().data_ptr() == input.untyped_storage().data_ptr():
            y = y.clone(memory_format=fmt)
        return y
    # one node, as torch's kernel: the gradient is shuffled back (c // groups groups)
    return _one_node("ChannelShuffleBackward0", compute, (input,),
                     lambda g: (channel_shuffle(g, c // groups),))


native_channel_shuffle = channel_shuffle
