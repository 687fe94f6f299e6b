"""The quantization ops (``torch.quantize_per_tensor`` ...): float32 tensors to quantized
tensors and back, the fake-quantize ops with their straight-through gradients, and the
quantization parameters fbgemm chooses for dynamic quantization.

Rounding is torch's bit for bit (CPU, fbgemm): values are ``x * (1 / scale)`` in
float32 rounded half to even; per-tensor qint8/quint8 adds the zero point before
rounding in one fused multiply-add, per-tensor qint32 and per-channel quantization add
it to the float32 product, the fake-quantize ops after rounding.
"""
import numpy as _np

import ptcore
from ptcore.autograd import Function
from ptcore._tensor import IntArgOverflowError
from ptcore._scalar_args import float_param, strict_int_param
from ptcore._quantized._tensor import (QuantizedTensor, make_per_tensor, make_per_channel,
                                       int_dtype, qrange, unsupported)

__all__ = ["quantize_per_tensor", "quantize_per_channel", "dequantize",
           "quantize_per_tensor_dynamic", "fake_quantize_per_tensor_affine",
           "fake_quantize_per_channel_affine", "_choose_qparams_per_tensor",
           "choose_qparams", "quantize_array", "linear_dynamic", "pack_weight", "int_repr", "q_scale",
           "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
           "q_per_channel_axis"]


def _int64(v):
    """``v`` (an int) checked to fit in int64, as torch's parser reads an int."""
    if not -2 ** 63 <= v < 2 ** 63:
        raise IntArgOverflowError("Overflow when unpacking long long")
    return v


def _check_qdtype(dtype):
    if dtype not in (ptcore.qint8, ptcore.quint8, ptcore.qint32):
        legacy = getattr(dtype, "_legacy", dtype)
        raise RuntimeError(f"ScalarType {legacy} is not supported in new_qtensor.")


def _float_input(x, what="Quantize"):
    if not isinstance(x, ptcore.Tensor) or isinstance(x, QuantizedTensor):
        raise TypeError(f"{what}: expected a float Tensor, got {type(x).__name__}")
    if x.dtype is not ptcore.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {x.dtype._legacy}")
    if x.device.type != "cpu":
        raise NotImplementedError(f"{what}: ptcore's quantized tensors live on the CPU, "
                                  f"got a tensor on {x.device}")
    return x.detach().numpy()


def quantize_array(a, scale, zero_point, dtype, fused=True, as_float=False):
    """The integers of the float32 array ``a`` quantized with ``scale`` and
    ``zero_point`` (broadcast against ``a``) to ``dtype``'s range, as an array of its
    integer type.  ``fused``: the zero point joins before rounding in one fused
    multiply-add (fbgemm's per-tensor 8-bit path), else it is added to the float32
    product first.  ``as_float``: the integers as a float array (8-bit types)."""
    qmin, qmax = qrange(dtype)
    inv = (_np.float32(1) / _np.asarray(scale, dtype=_np.float32)).astype(_np.float32)
    zp = _np.asarray(zero_point)
    if fused:
        # x * inv + zp rounded once (the product of two float32 is exact in float64)
        v = a.astype(_np.float64)
        v *= inv.astype(_np.float64)
        v += zp
        v = v.astype(_np.float32)
    else:
        v = (a * inv).astype(_np.float32)
        v += zp.astype(_np.float32)
    v = _np.rint(v, out=v)
    if dtype is ptcore.qint32:
        v = v.astype(_np.float64)          # (qint32's bounds are not float32 numbers)
    with _np.errstate(invalid="ignore"):
        _np.clip(v, qmin, qmax, out=v)
    # NaN lands where fbgemm's clamps put it: the top of the range on the fused path,
    # the bottom for qint32, 0 for the per-channel 8-bit path
    nan = _np.isnan(v)
    if nan.any():
        v[nan] = qmax if fused else (qmin if dtype is ptcore.qint32 else 0)
    return v if as_float else v.astype(int_dtype(dtype)._np)


def _check_zero_point(zp, dtype, what="quantize_tensor_per_tensor_affine"):
    qmin, qmax = qrange(dtype)
    if zp > qmax:
        raise RuntimeError(f"{what} zero_point {zp} is above upper bound.")
    if zp < qmin:
        raise RuntimeError(f"{what} zero_point {zp} is below lower bound.")


def quantize_per_tensor(input, scale, zero_point, dtype):
    """``torch.quantize_per_tensor``: ``input`` (float32) quantized with one ``scale``
    and ``zero_point`` (numbers or one-element tensors) to ``dtype`` (``qint8``,
    ``quint8``, ``qint32``).  A list of tensors with tensors of scales and zero points
    gives a list."""
    if isinstance(input, (list, tuple)):
        scales = [float(s) for s in _as_list(scale)]
        zps = [int(z) for z in _as_list(zero_point)]
        for what in (scales, zps):
            if len(what) < len(input):
                # (torch selects entry i of each: extra entries are ignored)
                raise IndexError(f"select(): index {len(what)} out of range for tensor of "
                                 f"size [{len(what)}] at dimension 0")
        return tuple(quantize_per_tensor(t, s, z, dtype) for t, s, z in zip(input, scales, zps))
    if isinstance(scale, ptcore.Tensor) and isinstance(zero_point, ptcore.Tensor):
        # (the overload of tensor parameters: one element each)
        scale = float(scale.to(ptcore.float32).item())     # torch reads it as float32
        zero_point = int(zero_point.item())
    else:
        # (the overload of numbers, read as torch's parser reads a float and an int)
        scale = float_param(scale, "quantize_per_tensor", "scale", 2)
        zero_point = _int64(strict_int_param(zero_point, "quantize_per_tensor",
                                             "zero_point", 3))
    if not isinstance(dtype, ptcore.dtype):
        raise TypeError(f"quantize_per_tensor(): argument 'dtype' (position 4) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    _check_qdtype(dtype)
    a = _float_input(input)
    _check_zero_point(zero_point, dtype)
    q = quantize_array(a, scale, zero_point, dtype, fused=dtype is not ptcore.qint32)
    return make_per_tensor(_strided_like(q, input), dtype, scale, zero_point)


def _as_list(v):
    return v.tolist() if isinstance(v, ptcore.Tensor) else list(v)


def _strided_like(q, like):
    """The integer array ``q`` (shaped as ``like``) as a tensor with ``like``'s dense
    strides when ``like`` is dense, else contiguous."""
    return ptcore.from_numpy(q.copy(order="C"))


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """``torch.quantize_per_channel``: ``input`` (float32) quantized with ``scales[i]``
    and ``zero_points[i]`` for slice ``i`` along ``axis``."""
    _check_qdtype(dtype)
    a = _float_input(input)
    if not isinstance(scales, ptcore.Tensor) or not isinstance(zero_points, ptcore.Tensor):
        raise TypeError("quantize_per_channel: scales and zero_points must be Tensors")
    axis = _int64(strict_int_param(axis, "quantize_per_channel", "axis", 4))
    if not scales.is_floating_point():
        raise RuntimeError("scale tensor must be floating point")
    if axis < 0 or axis >= a.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {a.ndim})")
    if scales.dim() != 1:
        raise RuntimeError("scale tensor must have dimension 1")
    if zero_points.dim() != 1:
        raise RuntimeError("zero_points tensor must have dimension 1")
    if scales.numel() != zero_points.numel():
        raise RuntimeError("number of elements in scales and zero_points must match")
    if scales.numel() != a.shape[axis]:
        raise RuntimeError(f"length of scales must equal to channel, expected "
                           f"{a.shape[axis]} got, {scales.numel()}")
    if zero_points.is_floating_point():
        raise RuntimeError("quantize_per_channel: zero_points must be an integer tensor "
                           f"(per_channel_affine), got {zero_points.dtype}")
    sc = scales.detach().to(ptcore.float64).reshape(-1).contiguous()
    zp = zero_points.detach().to(ptcore.int64).reshape(-1).contiguous()
    zpa = zp.numpy()
    qmin, qmax = qrange(dtype)
    if zpa.size and (zpa.min() < qmin or zpa.max() > qmax):
        bad = int(zpa.max() if zpa.max() > qmax else zpa.min())
        _check_zero_point(bad, dtype, "quantize_tensor_per_channel_affine")
    shape = [1] * a.ndim
    shape[axis] = -1
    q = quantize_array(a, sc.numpy().reshape(shape), zpa.reshape(shape), dtype, fused=False)
    return make_per_channel(_strided_like(q, input), dtype, sc.clone(), zp.clone(), axis)


def dequantize(tensor):
    """``torch.dequantize``: the float32 values of a quantized tensor (a list of them
    gives a list); a float tensor comes back as it is."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    if isinstance(tensor, QuantizedTensor):
        return tensor.dequantize()
    if isinstance(tensor, ptcore.Tensor) and tensor.is_floating_point():
        return tensor
    raise unsupported("dequantize.self")


def _qparams_from_minmax(mn, mx, qmin, qmax, reduce_range=False):
    """fbgemm's ChooseQuantizationParams (no sparsity preservation): ``(scale, zero_point)``
    of float32 ``mn``/``mx``, scale a double."""
    f32 = _np.float32
    mn, mx = f32(mn), f32(mx)
    if not mn <= mx:
        raise RuntimeError(f"In ChooseQuantizationParams, min should be less than or equal "
                           f"to max; min: {mn} max: {mx}")
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    mn, mx = min(mn, f32(0)), max(mx, f32(0))
    scale = (float(mx) - float(mn)) / (qmax - qmin)
    with _np.errstate(divide="ignore", over="ignore"):
        if f32(scale) == 0 or _np.isinf(f32(1) / f32(scale)):
            scale = 0.1
    small = f32(6.1e-5)
    if scale < small:
        org = f32(scale)
        scale = float(small)
        if mn == 0:
            mx = f32(small * f32(qmax - qmin))
        elif mx == 0:
            mn = f32(-small * f32(qmax - qmin))
        else:
            amp = f32(small / org)
            mn, mx = f32(mn * amp), f32(mx * amp)
    zp_min = qmin - float(mn) / scale
    zp_max = qmax - float(mx) / scale
    err_min = abs(qmin) - abs(float(mn) / scale)
    err_max = abs(qmax) - abs(float(mx) / scale)
    initial = zp_min if err_min < err_max else zp_max
    if _np.isnan(initial):      # (an infinite range: torch's zero point is INT_MIN then)
        raise RuntimeError("quantize_tensor_per_tensor_affine zero_point -2147483648 is below "
                           "lower bound.")
    if initial < qmin:
        zp = qmin
    elif initial > qmax:
        zp = qmax
    else:
        zp = int(_np.rint(initial))
    return scale, zp


def choose_qparams(a, dtype=None, reduce_range=False):
    """``(scale, zero_point)`` fbgemm picks for the float32 array ``a`` (quint8 range)."""
    if a.size:
        mn, mx = a.min(), a.max()
    else:
        mn = mx = 0.0
    return _qparams_from_minmax(mn, mx, 0, 255, reduce_range)


def _choose_qparams_per_tensor(input, reduce_range=False):
    """``torch._choose_qparams_per_tensor``: ``(scale, zero_point)`` for quint8."""
    return choose_qparams(_nonempty(_float_input(input, "_choose_qparams_per_tensor")),
                          reduce_range=reduce_range)


def _nonempty(a):
    if a.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == "
                           "0. Specify the reduction dim with the 'dim' argument.")
    return a


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """``torch.quantize_per_tensor_dynamic``: quantized with the parameters chosen from
    ``input``'s range (``quint8``/``qint8``)."""
    if dtype not in (ptcore.qint8, ptcore.quint8):
        raise RuntimeError(f"dtype {dtype} not supported, only quint8 and qint8 are "
                           f"supported in quantize_per_tensor_dynamic")
    a = _nonempty(_float_input(input))
    mn, mx = a.min(), a.max()
    qmin, qmax = qrange(dtype)
    scale, zp = _qparams_from_minmax(mn, mx, qmin, qmax, reduce_range)
    return quantize_per_tensor(input, scale, zp, dtype)


# -- fake quantization -------------------------------------------------------------

def _fake_quant(a, scale, zp, qmin, qmax):
    """(fake-quantized float32 array, mask of the elements inside the range)."""
    inv = (_np.float32(1) / _np.asarray(scale, dtype=_np.float32)).astype(_np.float32)
    r = _np.rint((a * inv).astype(a.dtype)).astype(_np.float64) + zp
    mask = (r >= qmin) & (r <= qmax)
    r = _np.where(_np.isnan(r), qmin, r)         # (torch's clamp sends NaN to quant_min)
    # (scaled back in float32 for every input type, as torch's kernel)
    out = ((_np.clip(r, qmin, qmax) - zp).astype(_np.float32)
           * _np.asarray(scale, dtype=_np.float32)).astype(a.dtype)
    return out, mask


class _FakeQuantize(Function):
    """Fake quantization with the straight-through gradient (1 inside the range)."""

    @staticmethod
    def forward(ctx, x, scale, zp, qmin, qmax):
        # float64 computes in float64, the other float types in float32
        wide = ptcore.float64 if x.dtype is ptcore.float64 else ptcore.float32
        a = x.detach().to(wide).contiguous().numpy()
        out, mask = _fake_quant(a, scale, zp, qmin, qmax)
        ctx.save_for_backward(ptcore.from_numpy(_np.ascontiguousarray(mask)))
        return ptcore.from_numpy(_np.ascontiguousarray(out)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        return grad * mask.to(grad.dtype), None, None, None, None


def _check_fq_input(x, qmin, qmax, what):
    if not isinstance(x, ptcore.Tensor) or isinstance(x, QuantizedTensor):
        raise TypeError(f"{what}: expected a float Tensor, got {type(x).__name__}")
    if x.dtype not in (ptcore.float32, ptcore.float16, ptcore.bfloat16, ptcore.float64):
        raise NotImplementedError(f"\"fake_quantize_tensor_cachemask_kernel_type_handling\" "
                                  f"not implemented for '{x.dtype._legacy}'")
    if x.device.type != "cpu":
        raise NotImplementedError(f"{what}: ptcore implements it on the CPU only, got a "
                                  f"tensor on {x.device}")
    if qmin > qmax:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """``torch.fake_quantize_per_tensor_affine``: ``input`` quantized and dequantized
    (same dtype); its gradient passes where the value lies inside
    ``[quant_min, quant_max]`` and is 0 elsewhere."""
    _check_fq_input(input, quant_min, quant_max, "fake_quantize_per_tensor_affine")
    if isinstance(scale, ptcore.Tensor):
        scale = float(scale.detach().to(ptcore.float32).item())
    if isinstance(zero_point, ptcore.Tensor):
        zero_point = int(zero_point.item())
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return _FakeQuantize.apply(input, float(scale), int(zero_point), int(quant_min),
                               int(quant_max))


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """``torch.fake_quantize_per_channel_affine``: fake quantization with one scale and
    zero point per slice along ``axis`` (straight-through gradient inside the range)."""
    _check_fq_input(input, quant_min, quant_max, "fake_quantize_per_channel_affine")
    axis = _int64(strict_int_param(axis, "fake_quantize_per_channel_affine", "axis", 4))
    nd = input.dim()
    if not isinstance(scale, ptcore.Tensor) or not isinstance(zero_point, ptcore.Tensor):
        raise TypeError("fake_quantize_per_channel_affine(): scale and zero_point must be "
                        "Tensors")
    # (torch checks the dtypes of the parameters before the axis)
    if scale.dtype not in (ptcore.float32, ptcore.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {scale.dtype._legacy}")
    if zero_point.dtype not in (ptcore.int32, ptcore.float32, ptcore.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{zero_point.dtype._legacy}")
    if axis < 0:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    if axis >= nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {axis})")
    if scale.dim() != 1 or zero_point.dim() != 1:
        raise RuntimeError("scale and zero_point should be 1-D tensors")
    if scale.numel() != input.shape[axis] or zero_point.numel() != input.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with "
                           "input tensor")
    zpa = zero_point.detach().to(ptcore.float64).numpy()
    if zpa.size and (zpa.min() < quant_min or zpa.max() > quant_max):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    shape = [1] * nd
    shape[axis] = -1
    sc = scale.detach().to(ptcore.float32).numpy().reshape(shape)
    return _FakeQuantize.apply(input, sc, zpa.reshape(shape), int(quant_min), int(quant_max))


# -- dynamic quantized linear (fbgemm's) ----------------------------------------------

def pack_weight(weight):
    """What :func:`linear_dynamic` needs of the qint8 ``weight`` (out, in), computed once
    (torch's prepacking): its integers transposed as float32 (in, out), the per output
    channel sums minus ``zero_point * in``, scales (float32) and zero points."""
    if not isinstance(weight, QuantizedTensor) or weight.dtype is not ptcore.qint8:
        raise RuntimeError("linear_dynamic: the weight must be a qint8 quantized tensor")
    if weight.dim() != 2:
        raise RuntimeError(f"The weight tensor for quantized::linear_prepack (fbgemm) should "
                           f"be 2-dimensional, got {weight.dim()}")
    wq = weight._qdata.numpy()
    n, k = wq.shape
    if weight.qscheme() is ptcore.per_channel_affine:
        if weight.q_per_channel_axis() != 0:
            raise RuntimeError("linear_dynamic: per-channel weights must be quantized along "
                               "axis 0 (the output channels)")
        w_scale = weight._qscale.numpy().astype(_np.float32)
        w_zp = weight._qzp.numpy().astype(_np.float64)
    else:
        w_scale = _np.full(n, weight._qscale, dtype=_np.float32)
        w_zp = _np.full(n, weight._qzp, dtype=_np.float64)
    wt = _np.ascontiguousarray(wq.T, dtype=_np.float32)
    col = wq.sum(axis=1, dtype=_np.float64) - w_zp * k
    wmax = int(_np.abs(wq.astype(_np.int16)).max()) if wq.size else 0
    return wt, col, w_scale, w_zp, wmax


def _int_matmul(xq, wt, xmax, wmax):
    """The exact integer product ``xq @ wt`` (both hold small integers as float32), by
    float32 BLAS over slices of the inner dimension short enough that every partial sum
    stays below 2**24 (exact in float32), the slices summed in float64."""
    k = xq.shape[1]
    step = max(1, (1 << 24) // max(1, xmax * wmax))
    if step >= k:
        return _sgemm(xq, wt).astype(_np.float64)
    acc = _np.zeros((xq.shape[0], wt.shape[1]), dtype=_np.float64)
    for s in range(0, k, step):
        acc += _sgemm(_np.ascontiguousarray(xq[:, s:s + step]), wt[s:s + step])
    return acc


def _sgemm(a, b):
    """``a @ b`` of float32 arrays by ptcore's matmul (its BLAS and thread count,
    ``ptcore.set_num_threads``, not NumPy's own thread pool)."""
    return ptcore.matmul(ptcore.from_numpy(a), ptcore.from_numpy(b)).numpy()


def linear_dynamic(x, weight, bias=None, reduce_range=True, packed=None):
    """``quantized::linear_dynamic``: ``x @ weight.T + bias`` with ``x`` quantized to quint8
    at the call (parameters from its range, ``reduce_range``: 7 bits) and ``weight`` a
    qint8 quantized tensor (per tensor or per output channel; ``packed``: its
    :func:`pack_weight`), the products summed exactly in integers and scaled back to
    float32 as fbgemm does."""
    wt, col, w_scale, w_zp, wmax = pack_weight(weight) if packed is None else packed
    a = _float_input(x, "linear_dynamic")
    K = wt.shape[0]
    if a.ndim < 2:
        raise RuntimeError("The dimension of input tensor should be larger than or equal to 2")
    if a.shape[-1] != K:
        raise RuntimeError(f"linear_dynamic: input's last dimension {a.shape[-1]} does not "
                           f"match the weight's in_features {K}")
    a2 = a.reshape(-1, K)
    scale, zp = choose_qparams(a2, reduce_range=reduce_range)
    xq = quantize_array(a2, scale, zp, ptcore.quint8, as_float=True)
    xmax = 127 if reduce_range else 255
    acc = _int_matmul(xq, wt, xmax, wmax)
    raw = acc - zp * col[None, :]
    if w_zp.any():
        raw -= xq.sum(axis=1, dtype=_np.float64)[:, None] * w_zp[None, :]
    raw = raw.astype(_np.float32)
    # fbgemm: raw * (x_scale * w_scale) + bias in one fused multiply-add (float32 scales;
    # the product of a float32 and an integer below 2**24 is exact in float64)
    out = raw.astype(_np.float64)
    out *= (_np.float32(scale) * w_scale).astype(_np.float64)[None, :]
    if bias is not None:
        out += bias.detach().to(ptcore.float32).numpy().astype(_np.float64)[None, :]
    out = out.astype(_np.float32).reshape(a.shape[:-1] + (wt.shape[1],))
    return ptcore.from_numpy(out)


def _accessor(name):
    def fn(input):
        return getattr(input, name)()
    fn.__name__ = name
    fn.__doc__ = f"``torch.{name}``: ``input.{name}()`` of a quantized tensor."
    return fn


int_repr = _accessor("int_repr")
q_scale = _accessor("q_scale")
q_zero_point = _accessor("q_zero_point")
q_per_channel_scales = _accessor("q_per_channel_scales")
q_per_channel_zero_points = _accessor("q_per_channel_zero_points")
q_per_channel_axis = _accessor("q_per_channel_axis")
