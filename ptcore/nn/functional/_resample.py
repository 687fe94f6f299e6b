"""The CPU kernels of ``interpolate`` and ``grid_sample`` (``ptcore._ops.kernels._resample``)
as autograd Functions, used by :mod:`ptcore.nn.functional._vision` and
:mod:`ptcore.nn.functional._grid_sample` for float32/float64 CPU tensors
(other dtypes and devices keep their composite formulas).

``interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear) is a linear map of its input: its backward is the kernel's
adjoint, whose own backward is the forward again, so gradients of every
order come from the kernels.  ``grid_sample``'s backward runs the kernel's
backward; a backward that is itself recorded (``create_graph``)
differentiates the composite formula the caller passes instead.
"""
import ptcore
from ptcore._ops.kernels import _resample as _kernels
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore.autograd import Function
from ptcore.tensor import _output_memory_format

__all__ = ["upsample_modes", "upsample", "grid_sample_2d"]

_FLOATS = (ptcore.float32, ptcore.float64)


# interpolate's mode (after 'linear'/'bilinear'/'trilinear' -> 'linear',
# 'bicubic' -> 'cubic') -> the kernel's mode code
upsample_modes = {"nearest": 0, "nearest-exact": 1, "linear": 2, "cubic": 3}


def _loops(device):
    """The resampling loops on ``device``: ATen's CPU kernels
    (ptcore._ops.kernels._resample), a device's "resample kernels" loop, or None."""
    return _loop_for("resample kernels", device, _kernels)


def on_kernel(t):
    """Whether ``t`` is a tensor the resampling loops take (float32/float64 on a
    device that has them)."""
    return t.dtype in _FLOATS and _loops(t.device) is not None


def _resample(x, code, src, dst, scales, align_corners, transpose, fmt):
    """Run the kernel from ``x`` (N, C, *src) to a new (N, C, *dst) tensor in
    memory format ``fmt`` (channels-last: the channels are the planes'
    inner elements; else the N * C planes are contiguous)."""
    n, c, k = x.shape[0], x.shape[1], len(src)
    if fmt is not ptcore.contiguous_format:
        perm = (0,) + tuple(range(2, k + 2)) + (1,)
        y = ptcore.empty((n,) + dst + (c,), dtype=x.dtype, device=x.device)
        _loops(x.device).upsample(x.permute(perm).contiguous(), y, code, align_corners, scales, transpose)
        return y.permute((0, k + 1) + tuple(range(1, k + 1)))
    y = ptcore.empty((n, c) + dst, dtype=x.dtype, device=x.device)
    _loops(x.device).upsample(x.contiguous().reshape((n * c,) + src + (1,)),
                  y.view((n * c,) + dst + (1,)), code, align_corners, scales, transpose)
    return y


class _Upsample(Function):
    _backward_inputs = 1          # (torch's upsample nodes: one edge, to the input)

    @staticmethod
    def forward(ctx, x, code, src, dst, scales, align_corners):
        fmt = _output_memory_format(x)
        ctx.meta = (code, src, dst, scales, align_corners, fmt)
        return _resample(x, code, src, dst, scales, align_corners, False, fmt)

    @staticmethod
    def backward(ctx, g):
        code, src, dst, scales, align_corners, fmt = ctx.meta
        gx = _UpsampleAdjoint.apply(g, code, src, dst, scales, align_corners, fmt)
        return gx, None, None, None, None, None


class _UpsampleAdjoint(Function):
    """The gradient of :class:`_Upsample`'s input (in the input's layout ``fmt``)."""

    @staticmethod
    def forward(ctx, g, code, src, dst, scales, align_corners, fmt):
        ctx.meta = (code, src, dst, scales, align_corners)
        return _resample(g, code, dst, src, scales, align_corners, True, fmt)

    @staticmethod
    def backward(ctx, gg):
        code, src, dst, scales, align_corners = ctx.meta
        return (_Upsample.apply(gg, code, src, dst, scales, align_corners),
                None, None, None, None, None, None)


_UPSAMPLE_FUNCTIONS = {}
_NAMES = {0: "Nearest", 1: "NearestExact", 3: "Bicubic"}


def upsample(x, kind, out_size, scales, align_corners):
    """``interpolate`` of ``x`` (N, C, *spatial) to ``out_size`` by the kernels;
    ``kind`` a key of :data:`upsample_modes`, ``scales`` the scale factors
    used in the index computation (None: from the sizes)."""
    code = upsample_modes[kind]
    k = len(out_size)
    fn = _UPSAMPLE_FUNCTIONS.get((code, k))
    if fn is None:
        # grad_fn named as torch's (UpsampleBilinear2DBackward0, ...)
        mode = _NAMES.get(code) or ("Linear", "Bilinear", "Trilinear")[k - 1]
        name = f"Upsample{mode}{k}D"
        fn = _UPSAMPLE_FUNCTIONS[(code, k)] = type(name, (_Upsample,),
                                                   {"_backward_name": name + "Backward0"})
    sc = tuple(-1.0 if s is None else float(s) for s in scales)
    return fn.apply(x, code, tuple(x.shape[2:]), tuple(out_size), sc, bool(align_corners))


class _GridSampler2D(Function):
    _backward_name = "GridSampler2DBackward0"
    _backward_inputs = 2

    @staticmethod
    def forward(ctx, inp, grid, interp, pad, align_corners, composite):
        n, c = inp.shape[0], inp.shape[1]
        ho, wo = grid.shape[1], grid.shape[2]
        out = ptcore.empty((n, c, ho, wo), dtype=inp.dtype, device=inp.device)
        _loops(inp.device).grid_sample_2d(inp.contiguous(), grid.contiguous(),
                                          out.view(n, c, ho * wo), interp, pad, align_corners)
        ctx.save_for_backward(inp, grid)
        ctx.meta = (interp, pad, align_corners, composite)
        return out

    @staticmethod
    def backward(ctx, gout):
        inp, grid = ctx.saved_tensors
        interp, pad, align_corners, composite = ctx.meta
        need_inp, need_grid = ctx.needs_input_grad[:2]
        if ptcore.is_grad_enabled():
            # create_graph: the gradient must itself be differentiable
            wrt = [t for t, need in ((inp, need_inp), (grid, need_grid)) if need]
            with ptcore.enable_grad():
                grads = list(ptcore.autograd.grad(composite(inp, grid), wrt, gout,
                                                  create_graph=True, allow_unused=True))
            gi = grads.pop(0) if need_inp else None
            gg = grads.pop(0) if need_grid else None
            return gi, gg, None, None, None, None
        n, c = inp.shape[0], inp.shape[1]
        p = grid.shape[1] * grid.shape[2]
        gi = ptcore.empty(tuple(inp.shape), dtype=inp.dtype, device=inp.device) if need_inp \
            else None
        gg = ptcore.empty(tuple(grid.shape), dtype=grid.dtype, device=grid.device) if need_grid \
            else None
        _loops(inp.device).grid_sample_2d_backward(inp.contiguous(), grid.contiguous(),
                                                   gout.contiguous().view(n, c, p), gi, gg,
                                                   interp, pad, align_corners)
        return gi, gg, None, None, None, None


def grid_sample_2d(inp, grid, interp, pad, align_corners, composite):
    """``grid_sample`` of a 4-d ``inp`` at ``grid`` by the kernel (torch's mode
    codes); ``composite(inp, grid)``, the same sampling written with
    differentiable ops, serves gradients of gradients."""
    return _GridSampler2D.apply(inp, grid, interp, pad, bool(align_corners), composite)
