"""torchvision's compiled operator library, built into ptcore.

torchvision's ``_C`` extension is linked against libtorch, which ptcore does not
have, so ``torch.ops.load_library`` cannot load it.  When a program (torchvision
itself, at import) loads that library, ptcore defines the same operators in the
``torchvision`` namespace instead, with ptcore's own kernels
(:mod:`ptcore._ops.kernels._vision`): ``torch.ops.torchvision.nms``,
``roi_align``, ``roi_pool``, ``ps_roi_align``, ``ps_roi_pool``,
``deform_conv2d``, their ``_*_backward`` operators and ``_cuda_version``, with
torchvision's schemas, argument checks, autograd formulas and autocast rules.
torchvision then reports its ops as available (``torchvision.extension._has_ops()``)
and everything built on them runs: ``torchvision.ops.nms``/``batched_nms``, the
RoI layers, ``DeformConv2d`` and the detection models (Faster/Mask/Keypoint R-CNN,
RetinaNet, FCOS, SSD).

What each kernel computes is what torchvision's CPU kernel computes, in the same
order (see the kernels' module).  Differences, all on inputs torchvision does not
check:

* a RoI whose batch index names no image of the input, an ``argmax`` or
  ``channel_mapping`` value that names no input element, and sampling grids too
  large for an int raise ``IndexError``/``RuntimeError`` (torchvision reads or
  writes out of bounds);
* tensors on another device than the CPU are computed on the CPU and the
  results moved back to their device; float16/bfloat16 inputs are computed in
  float32 and rounded back;
* ``deform_conv2d`` is computed from ptcore's tensor ops (bilinear sampling by
  gather, grouped matrix products), its backward by differentiating that
  computation: torchvision's values to float rounding.

The quantized ``qnms``/``qroi_align`` are defined (torchvision registers their shape
functions) but raise NotImplementedError: ptcore has no quantized tensors.
``box_iou_rotated`` is not provided.
:func:`register` defines the ops once, through the ``ptcore.library`` module it is
given; ``ptcore.ops.load_library`` calls it when a program loads torchvision's library
(``ptcore.library`` registers it with :func:`ptcore._ops_namespace.add_builtin_library`).
"""
import ptcore
from ptcore._ops.kernels import _vision

__all__ = ["register", "registered", "is_torchvision_library"]

_NS = "torchvision"
_LIB = []           # the Library that defines the ops (kept alive)

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, "
    "int sampling_ratio, bool aligned) -> Tensor",
    "roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width) -> (Tensor, Tensor)",
    "_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, "
    "SymInt height, SymInt width) -> Tensor",
    "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, "
    "float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, "
    "SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width) -> (Tensor, Tensor)",
    "_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, "
    "float spatial_scale, SymInt pooled_height, SymInt pooled_width, SymInt batch_size, "
    "SymInt channels, SymInt height, SymInt width) -> Tensor",
    "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
    "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
    "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, "
    "Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
    "SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
    "bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "_cuda_version() -> int",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qroi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
)


def is_torchvision_library(path):
    """Whether ``path`` is torchvision's compiled operator library (``torchvision/_C*.so``)."""
    import os
    base = os.path.basename(path)
    return os.path.basename(os.path.dirname(os.path.abspath(path))) == "torchvision" and \
        base.split(".")[0] == "_C"


def registered():
    """Whether :func:`register` has defined the ops."""
    return bool(_LIB)


# ---------------------------------------------------------------------------
# argument handling shared by the kernels
# ---------------------------------------------------------------------------

_FLOATS = (ptcore.float32, ptcore.float64)
_WIDENED = (ptcore.float16, ptcore.bfloat16)


def _cpu(t, dtype=None):
    """``t`` as a contiguous CPU tensor (of ``dtype``), without autograd history."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    return t.contiguous()


def _compute_dtype(t, kernel):
    if t.dtype in _FLOATS:
        return t.dtype
    if t.dtype in _WIDENED:
        return ptcore.float32
    raise RuntimeError(f'"{kernel}" not implemented for \'{_type_name(t.dtype)}\'')


def _type_name(dt):
    return {ptcore.float16: "Half", ptcore.bfloat16: "BFloat16", ptcore.int64: "Long",
            ptcore.int32: "Int", ptcore.uint8: "Byte", ptcore.bool: "Bool",
            ptcore.int16: "Short", ptcore.int8: "Char"}.get(dt, str(dt).split(".")[-1])


def _back(t, like, dtype=None):
    """Result ``t`` (computed on the CPU) on ``like``'s device, in ``dtype``."""
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if like.device.type != "cpu":
        t = t.to(like.device)
    return t


def _same_type(a, b, msg):
    if a.dtype != b.dtype:
        raise RuntimeError(msg)


def _check_rois(rois, msg="rois must have shape as Tensor[K, 5]"):
    if rois.dim() != 2 or rois.shape[1] != 5:
        raise RuntimeError(msg)


def _check_input4(x, name="input"):
    if x.dim() != 4:
        raise RuntimeError(f"{name} must be a 4-D (N, C, H, W) tensor, got {x.dim()}-D "
                           f"{tuple(x.shape)}")


def _pooled(ph, pw):
    ph, pw = int(ph), int(pw)
    if ph <= 0 or pw <= 0:
        raise RuntimeError(f"pooled_height and pooled_width must be positive, got {ph} and {pw}")
    return ph, pw


def _sizes(*vals):
    out = tuple(int(v) for v in vals)
    if any(v < 0 for v in out):
        raise RuntimeError(f"the input sizes must not be negative, got {out}")
    return out


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------

def _nms(dets, scores, iou_threshold):
    if dets.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {dets.dim()}D")
    if dets.shape[1] != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {dets.shape[1]}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if dets.shape[0] != scores.shape[0]:
        raise RuntimeError(f"boxes and scores should have same number of elements in dimension "
                           f"0, got {dets.shape[0]} and {scores.shape[0]}")
    if dets.dtype not in _FLOATS + _WIDENED:
        raise RuntimeError(f'"nms_kernel" not implemented for \'{_type_name(dets.dtype)}\'')
    _same_type(dets, scores, "dets should have the same type as scores")
    n = dets.shape[0]
    if n == 0:
        return ptcore.empty(0, dtype=ptcore.int64, device=dets.device)
    dt = _compute_dtype(dets, "nms_kernel")
    d, s = _cpu(dets, dt), _cpu(scores, dt)
    order = ptcore.sort(s, dim=0, descending=True, stable=True)[1].contiguous()
    keep = ptcore.empty(n, dtype=ptcore.int64)
    k = _vision.nms(d, order, float(iou_threshold), keep)
    return _back(keep[:k].clone(), dets)


def _roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
               aligned):
    _check_rois(rois)
    _same_type(input, rois, "input should have the same type as rois")
    _check_input4(input)
    ph, pw = _pooled(pooled_height, pooled_width)
    dt = _compute_dtype(input, "roi_align_forward_kernel")
    x, r = _cpu(input, dt), _cpu(rois, dt)
    out = ptcore.zeros((r.shape[0], x.shape[1], ph, pw), dtype=dt)
    if out.numel():
        _vision.roi_align_forward(x, r, float(spatial_scale), ph, pw, int(sampling_ratio),
                                  bool(aligned), out)
    return _back(out, input, input.dtype)


def _roi_align_backward(grad, rois, spatial_scale, pooled_height, pooled_width, batch_size,
                        channels, height, width, sampling_ratio, aligned):
    _same_type(grad, rois, "grad should have the same type as rois")
    _check_rois(rois)
    ph, pw = _pooled(pooled_height, pooled_width)
    n, c, h, w = _sizes(batch_size, channels, height, width)
    dt = _compute_dtype(grad, "roi_align_backward_kernel")
    gin = ptcore.zeros((n, c, h, w), dtype=dt)
    if grad.numel():
        _check_grad(grad, (rois.shape[0], c, ph, pw))
        _vision.roi_align_backward(_cpu(grad, dt), _cpu(rois, dt), float(spatial_scale), ph, pw,
                                   int(sampling_ratio), bool(aligned), gin)
    return _back(gin, grad, grad.dtype)


def _check_grad(grad, shape):
    if tuple(grad.shape) != tuple(shape):
        raise RuntimeError(f"grad must have shape {tuple(shape)} (the op's output), got "
                           f"{tuple(grad.shape)}")


def _roi_pool(input, rois, spatial_scale, pooled_height, pooled_width):
    _check_rois(rois)
    _same_type(input, rois, "input and rois must have the same dtype")
    _check_input4(input)
    ph, pw = _pooled(pooled_height, pooled_width)
    if input.dtype not in _FLOATS:
        raise RuntimeError("roi_pool only supports float and double types")
    x, r = _cpu(input), _cpu(rois)
    shape = (r.shape[0], x.shape[1], ph, pw)
    out = ptcore.zeros(shape, dtype=x.dtype)
    argmax = ptcore.zeros(shape, dtype=ptcore.int32)
    if out.numel():
        _vision.roi_pool_forward(x, r, float(spatial_scale), ph, pw, out, argmax)
    return _back(out, input), _back(argmax, input)


def _roi_pool_backward(grad, rois, argmax, spatial_scale, pooled_height, pooled_width,
                       batch_size, channels, height, width):
    _check_rois(rois, "Tensor rois should have shape as Tensor[K, 5]")
    _same_type(grad, rois, "grad and rois must have the same dtype")
    if grad.dtype not in _FLOATS:
        raise RuntimeError("roi_pool backward only supports float and double types")
    ph, pw = _pooled(pooled_height, pooled_width)
    n, c, h, w = _sizes(batch_size, channels, height, width)
    gin = ptcore.zeros((n, c, h, w), dtype=grad.dtype)
    if grad.numel():
        _check_grad(grad, (rois.shape[0], c, ph, pw))
        _vision.roi_pool_backward(_cpu(grad), _cpu(rois), _cpu(argmax), ph, pw, gin)
    return _back(gin, grad)


def _ps_channels(c, ph, pw):
    if c % (ph * pw):
        raise RuntimeError("input channels must be a multiple of pooling height * pooling width")
    return c // (ph * pw)


def _ps_roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio):
    _check_rois(rois, "Tensor rois should have shape as Tensor[K, 5]")
    _same_type(input, rois, "input should have the same type as rois")
    _check_input4(input)
    ph, pw = _pooled(pooled_height, pooled_width)
    c_out = _ps_channels(input.shape[1], ph, pw)
    dt = _compute_dtype(input, "ps_roi_align_forward_kernel")
    x, r = _cpu(input, dt), _cpu(rois, dt)
    shape = (r.shape[0], c_out, ph, pw)
    out = ptcore.zeros(shape, dtype=dt)
    cmap = ptcore.zeros(shape, dtype=ptcore.int32)
    if out.numel():
        _vision.ps_roi_align_forward(x, r, float(spatial_scale), ph, pw, int(sampling_ratio),
                                     out, cmap)
    return _back(out, input, input.dtype), _back(cmap, input)


def _ps_roi_align_backward(grad, rois, channel_mapping, spatial_scale, pooled_height,
                           pooled_width, sampling_ratio, batch_size, channels, height, width):
    _same_type(grad, rois, "grad should have the same type as rois")
    _check_rois(rois, "Tensor rois should have shape as Tensor[K, 5]")
    ph, pw = _pooled(pooled_height, pooled_width)
    n, c, h, w = _sizes(batch_size, channels, height, width)
    dt = _compute_dtype(grad, "ps_roi_align_backward_kernel")
    gin = ptcore.zeros((n, c, h, w), dtype=dt)
    if grad.numel():
        _check_grad(grad, (rois.shape[0], _ps_channels(c, ph, pw), ph, pw))
        _vision.ps_roi_align_backward(_cpu(grad, dt), _cpu(rois, dt), _cpu(channel_mapping),
                                      float(spatial_scale), ph, pw, int(sampling_ratio), gin)
    return _back(gin, grad, grad.dtype)


def _ps_roi_pool(input, rois, spatial_scale, pooled_height, pooled_width):
    _check_rois(rois, "Tensor rois should have shape as Tensor[K, 5]")
    _same_type(input, rois, "input and rois must have the same dtype")
    _check_input4(input)
    ph, pw = _pooled(pooled_height, pooled_width)
    c_out = _ps_channels(input.shape[1], ph, pw)
    if input.dtype not in _FLOATS:
        raise RuntimeError("ps_roi_pool only supports float and double types")
    x, r = _cpu(input), _cpu(rois)
    shape = (r.shape[0], c_out, ph, pw)
    out = ptcore.zeros(shape, dtype=x.dtype)
    cmap = ptcore.zeros(shape, dtype=ptcore.int32)
    if out.numel():
        _vision.ps_roi_pool_forward(x, r, float(spatial_scale), ph, pw, out, cmap)
    return _back(out, input), _back(cmap, input)


def _ps_roi_pool_backward(grad, rois, channel_mapping, spatial_scale, pooled_height,
                          pooled_width, batch_size, channels, height, width):
    _same_type(grad, rois, "grad and rois must have the same dtype")
    if grad.dtype not in _FLOATS:
        raise RuntimeError("ps_roi_pool backward only supports float and double types")
    _check_rois(rois, "Tensor rois should have shape as Tensor[K, 5]")
    ph, pw = _pooled(pooled_height, pooled_width)
    n, c, h, w = _sizes(batch_size, channels, height, width)
    gin = ptcore.zeros((n, c, h, w), dtype=grad.dtype)
    if grad.numel():
        _check_grad(grad, (rois.shape[0], _ps_channels(c, ph, pw), ph, pw))
        _vision.ps_roi_pool_backward(_cpu(grad), _cpu(rois), _cpu(channel_mapping),
                                     float(spatial_scale), ph, pw, gin)
    return _back(gin, grad)


def _cuda_version():
    return -1


def _quantized(name):
    def kernel(*args):
        raise NotImplementedError(f"torchvision::{name}: its inputs are quantized tensors, "
                                  "which ptcore does not have")
    return kernel


# ---------------------------------------------------------------------------
# deform_conv2d: composed of tensor ops, differentiated by autograd
# ---------------------------------------------------------------------------

def _deform_checks(input, weight, offset, mask, bias, stride, pad, dil, groups, offset_groups,
                   use_mask):
    for name, t in (("input", input), ("weight", weight), ("offset", offset)):
        if t.dim() != 4:
            raise RuntimeError(f"deform_conv2d: {name} must be 4-D, got {t.dim()}-D")
    if use_mask and mask.dim() != 4:
        raise RuntimeError(f"deform_conv2d: mask must be 4-D, got {mask.dim()}-D")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"deform_conv2d: stride must be positive, got {stride}")
    if any(p < 0 for p in pad):
        raise RuntimeError(f"deform_conv2d: padding must not be negative, got {pad}")
    if any(d <= 0 for d in dil):
        raise RuntimeError(f"deform_conv2d: dilation must be positive, got {dil}")
    if groups <= 0 or offset_groups <= 0:
        raise RuntimeError(f"deform_conv2d: groups and offset groups must be positive, got "
                           f"{groups} and {offset_groups}")
    n, cin, h, w = input.shape
    cout, cin_g, kh, kw = weight.shape
    if cin_g * groups != cin:
        raise RuntimeError(f"deform_conv2d: input channels ({cin}) must equal the weight's "
                           f"({cin_g}) times groups ({groups})")
    if cout % groups:
        raise RuntimeError(f"deform_conv2d: output channels ({cout}) must be divisible by "
                           f"groups ({groups})")
    if cin % offset_groups:
        raise RuntimeError(f"deform_conv2d: input channels ({cin}) must be divisible by the "
                           f"offset groups ({offset_groups})")
    ho = (h + 2 * pad[0] - (dil[0] * (kh - 1) + 1)) // stride[0] + 1
    wo = (w + 2 * pad[1] - (dil[1] * (kw - 1) + 1)) // stride[1] + 1
    if ho <= 0 or wo <= 0:
        raise RuntimeError(f"deform_conv2d: the output would be empty ({ho}x{wo}) for input "
                           f"{h}x{w}, kernel {kh}x{kw}")
    if tuple(offset.shape) != (n, 2 * offset_groups * kh * kw, ho, wo):
        raise RuntimeError(f"deform_conv2d: offset must have shape "
                           f"{(n, 2 * offset_groups * kh * kw, ho, wo)}, got "
                           f"{tuple(offset.shape)}")
    if use_mask and tuple(mask.shape) != (n, offset_groups * kh * kw, ho, wo):
        raise RuntimeError(f"deform_conv2d: mask must have shape "
                           f"{(n, offset_groups * kh * kw, ho, wo)}, got {tuple(mask.shape)}")
    if bias.numel() != cout:
        raise RuntimeError(f"deform_conv2d: bias must have {cout} elements, got {bias.numel()}")
    for name, t in (("weight", weight), ("offset", offset), ("bias", bias)) + \
            ((("mask", mask),) if use_mask else ()):
        if t.dtype != input.dtype:
            raise RuntimeError(f"deform_conv2d: {name} ({t.dtype}) must have the input's dtype "
                               f"({input.dtype})")
    return ho, wo


def _deform_conv2d_compute(input, weight, offset, mask, bias, stride, pad, dil, groups,
                           offset_groups, use_mask, ho, wo):
    n, cin, h, w = input.shape
    cout, cin_g, kh, kw = weight.shape
    k, g, L = kh * kw, offset_groups, ho * wo
    cg = cin // g
    dev = input.device
    off = offset.reshape(n, g, k, 2, L)
    ki = ptcore.arange(kh, device=dev).repeat_interleave(kw) * dil[0]
    kj = ptcore.arange(kw, device=dev).repeat(kh) * dil[1]
    by = (ptcore.arange(ho, device=dev) * stride[0] - pad[0]).repeat_interleave(wo)
    bx = (ptcore.arange(wo, device=dev) * stride[1] - pad[1]).repeat(ho)
    # sampling points: integer base (exact) plus the learned offset
    y = (by[None, :] + ki[:, None]).to(input.dtype) + off[:, :, :, 0]        # (n, g, k, L)
    x = (bx[None, :] + kj[:, None]).to(input.dtype) + off[:, :, :, 1]
    inside = (y > -1) & (y < h) & (x > -1) & (x < w)
    y0, x0 = ptcore.floor(y), ptcore.floor(x)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    yl, xl = y0.detach().to(ptcore.int64), x0.detach().to(ptcore.int64)
    src = input.reshape(n, g, cg, h * w)
    val = None
    for cy, cx, wt in ((yl, xl, hy * hx), (yl, xl + 1, hy * lx), (yl + 1, xl, ly * hx),
                       (yl + 1, xl + 1, ly * lx)):
        ok = inside & (cy >= 0) & (cy <= h - 1) & (cx >= 0) & (cx <= w - 1)
        idx = (cy.clamp(0, max(h - 1, 0)) * w + cx.clamp(0, max(w - 1, 0)))
        v = src.gather(3, idx.reshape(n, g, 1, k * L).expand(n, g, cg, k * L))
        v = ptcore.where(ok.reshape(n, g, 1, k * L), v, ptcore.zeros((), dtype=v.dtype,
                                                                    device=dev))
        term = ptcore.where(inside, wt, ptcore.zeros((), dtype=wt.dtype, device=dev))
        term = term.reshape(n, g, 1, k * L) * v
        val = term if val is None else val + term
    if use_mask:
        val = val * mask.reshape(n, g, 1, k * L)
    cols = val.reshape(n, groups, cin_g * k, L)
    out = ptcore.matmul(weight.reshape(1, groups, cout // groups, cin_g * k), cols)
    return out.reshape(n, cout, ho, wo) + bias.reshape(1, cout, 1, 1)


def _deform_args(stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups,
                 offset_groups):
    return ((int(stride_h), int(stride_w)), (int(pad_h), int(pad_w)),
            (int(dilation_h), int(dilation_w)), int(groups), int(offset_groups))


def _deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                   dilation_h, dilation_w, groups, offset_groups, use_mask):
    stride, pad, dil, groups, og = _deform_args(stride_h, stride_w, pad_h, pad_w, dilation_h,
                                                dilation_w, groups, offset_groups)
    ho, wo = _deform_checks(input, weight, offset, mask, bias, stride, pad, dil, groups, og,
                            use_mask)
    with ptcore.no_grad():
        return _deform_conv2d_compute(input, weight, offset, mask, bias, stride, pad, dil,
                                      groups, og, bool(use_mask), ho, wo)


def _deform_conv2d_backward(grad, input, weight, offset, mask, bias, stride_h, stride_w,
                            pad_h, pad_w, dilation_h, dilation_w, groups, offset_groups,
                            use_mask):
    stride, pad, dil, groups, og = _deform_args(stride_h, stride_w, pad_h, pad_w, dilation_h,
                                                dilation_w, groups, offset_groups)
    ho, wo = _deform_checks(input, weight, offset, mask, bias, stride, pad, dil, groups, og,
                            use_mask)
    leaves = [t.detach().requires_grad_() for t in (input, weight, offset, mask, bias)]
    with ptcore.enable_grad():
        out = _deform_conv2d_compute(*leaves, stride, pad, dil, groups, og, bool(use_mask),
                                     ho, wo)
        if tuple(grad.shape) != tuple(out.shape):
            raise RuntimeError(f"deform_conv2d backward: grad must have shape "
                               f"{tuple(out.shape)}, got {tuple(grad.shape)}")
        grads = ptcore.autograd.grad(out, leaves, grad, allow_unused=True)
    return tuple(ptcore.zeros_like(t) if gr is None else gr for t, gr in zip(leaves, grads))


# ---------------------------------------------------------------------------
# autograd and autocast (the rules torchvision registers; a torchvision that
# registers its own replaces them with the same)
# ---------------------------------------------------------------------------

def _no_double_backward(name):
    def backward(ctx, *grads):
        raise RuntimeError(f"double backwards on {name} not supported")
    return backward


def _setup_roi_align(ctx, inputs, output):
    _, rois, scale, ph, pw, sr, aligned = inputs
    ctx.save_for_backward(rois)
    ctx.args = (inputs[0].shape, scale, ph, pw, sr, aligned)


def _bw_roi_align(ctx, grad):
    (rois,) = ctx.saved_tensors
    (n, c, h, w), scale, ph, pw, sr, aligned = ctx.args
    return (ptcore.ops.torchvision._roi_align_backward(grad, rois, scale, ph, pw, n, c, h, w,
                                                       sr, aligned),
            None, None, None, None, None, None)


def _setup_with_indices(ctx, inputs, output):
    # (roi_pool, ps_roi_align, ps_roi_pool: the rois and the op's second output, the
    # argmax or channel mapping, for the backward op)
    ctx.save_for_backward(inputs[1], output[1])
    ctx.args = (inputs[0].shape,) + tuple(inputs[2:])


def _bw_roi_pool(ctx, grad, _grad_argmax):
    rois, argmax = ctx.saved_tensors
    (n, c, h, w), scale, ph, pw = ctx.args
    return (ptcore.ops.torchvision._roi_pool_backward(grad, rois, argmax, scale, ph, pw, n, c,
                                                      h, w),
            None, None, None, None)


def _bw_ps_roi_align(ctx, grad, _grad_map):
    rois, cmap = ctx.saved_tensors
    (n, c, h, w), scale, ph, pw, sr = ctx.args
    return (ptcore.ops.torchvision._ps_roi_align_backward(grad, rois, cmap, scale, ph, pw, sr,
                                                          n, c, h, w),
            None, None, None, None, None)


def _bw_ps_roi_pool(ctx, grad, _grad_map):
    rois, cmap = ctx.saved_tensors
    (n, c, h, w), scale, ph, pw = ctx.args
    return (ptcore.ops.torchvision._ps_roi_pool_backward(grad, rois, cmap, scale, ph, pw, n, c,
                                                         h, w),
            None, None, None, None)


def _setup_deform(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:5])
    ctx.args = inputs[5:]


def _bw_deform(ctx, grad):
    gs = ptcore.ops.torchvision._deform_conv2d_backward(grad, *ctx.saved_tensors, *ctx.args)
    return tuple(gs) + (None,) * 9


def _float32(t):
    return t.float() if t.is_floating_point() and t.dtype != ptcore.float64 else t


def _autocast_nms(dets, scores, iou_threshold):
    with ptcore._C._ExcludeDispatchKeyGuard(_AUTOCAST_KEYS):
        return ptcore.ops.torchvision.nms(_float32(dets), _float32(scores), iou_threshold)


def _autocast_roi_align(input, rois, spatial_scale, pooled_height, pooled_width,
                        sampling_ratio, aligned):
    with ptcore._C._ExcludeDispatchKeyGuard(_AUTOCAST_KEYS):
        return ptcore.ops.torchvision.roi_align(_float32(input), _float32(rois), spatial_scale,
                                                pooled_height, pooled_width, sampling_ratio,
                                                aligned).to(input.dtype)


_AUTOCAST_KEYS = None


def _kernels():
    return {"nms": _nms, "roi_align": _roi_align, "_roi_align_backward": _roi_align_backward,
            "roi_pool": _roi_pool, "_roi_pool_backward": _roi_pool_backward,
            "ps_roi_align": _ps_roi_align, "_ps_roi_align_backward": _ps_roi_align_backward,
            "ps_roi_pool": _ps_roi_pool, "_ps_roi_pool_backward": _ps_roi_pool_backward,
            "deform_conv2d": _deform_conv2d, "_deform_conv2d_backward": _deform_conv2d_backward,
            "_cuda_version": _cuda_version, "qnms": _quantized("qnms"),
            "qroi_align": _quantized("qroi_align")}


def register(library):
    """Define the ``torchvision`` ops with ``library`` (the ``ptcore.library`` module;
    once, later calls do nothing)."""
    global _AUTOCAST_KEYS
    if _LIB:
        return
    lib = library.Library(_NS, "DEF")
    for schema in _SCHEMAS:
        lib.define(schema)
    for name, fn in _kernels().items():
        lib.impl(name, fn, "CompositeExplicitAutograd")
    for name, bw, setup in (("roi_align", _bw_roi_align, _setup_roi_align),
                            ("roi_pool", _bw_roi_pool, _setup_with_indices),
                            ("ps_roi_align", _bw_ps_roi_align, _setup_with_indices),
                            ("ps_roi_pool", _bw_ps_roi_pool, _setup_with_indices),
                            ("deform_conv2d", _bw_deform, _setup_deform)):
        library.register_autograd(f"{_NS}::{name}", bw, setup_context=setup)
        library.register_autograd(f"{_NS}::_{name}_backward", _no_double_backward(name))
    keys = ptcore._C.DispatchKeySet
    k = ptcore._C.DispatchKey
    _AUTOCAST_KEYS = keys(k.AutocastCPU) | keys(k.AutocastCUDA)
    for key in ("AutocastCPU", "AutocastCUDA"):
        lib.impl("nms", _autocast_nms, key)
        lib.impl("roi_align", _autocast_roi_align, key)
    _LIB.append(lib)
