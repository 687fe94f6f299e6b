"""Pooling: ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``,
``adaptive_max_pool1d/2d/3d``.

Every pooling computes, per spatial dim, the window ``[start, end)`` (clipped
to the input) of each output position, and runs the Cython kernels of
``ptcore._ops.kernels._conv`` on ``(planes, D*H*W)`` views.  Max pooling returns
PyTorch's flat per-plane int64 indices; its backward scatters by index.
"""
import builtins
import math
import operator
import functools
import os

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import bool_param, strict_int_param
from ptcore.autograd._record import zero_link
from ptcore.autograd.grad_mode import _state as _grad_state
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._dispatch.device import refuse_cpu_half as _refuse_cpu_half, \
    in_host_memory as _in_host_memory
from ptcore._ops._out import check_out_grad, copy_out_exact
from ptcore._settings import alert_not_deterministic as _alert_not_deterministic
from ptcore._ops._memory_format import _in_memory_format, _output_memory_format
from ptcore.autograd.function import FunctionCtx as _FunctionCtx, connect as _connect
from ptcore.nn.functional._conv import (
    _Function, _kernels, _size, _FLOATS, _LOW,
)

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices",
    "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]

_INTS = (ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64)


def _pool_tuple(v, nd, fname, what):
    if isinstance(v, _TensorBase):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        vals = tuple(operator.index(i) for i in v)
        if len(vals) == 1:
            vals = vals * nd
        if len(vals) != nd:
            n = {1: "one int", 2: "two ints", 3: "three ints"}[nd]
            raise RuntimeError(f"{fname}: {what} must either be a single int, or a tuple of {n}")
        return vals
    return (operator.index(v),) * nd


def _compute_dtype(dt, fname, allow_int):
    if dt in _FLOATS:
        return dt
    if dt in _LOW:
        return ptcore.float32
    if allow_int and dt in _INTS:
        return ptcore.float64
    raise NotImplementedError(f"\"{fname}\" not implemented for '{dt._legacy}'")


def _out_size(n, k, p, s, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1        # floor division (num may be negative)
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _check_input(input, nd, fname, msg_style):
    if not isinstance(input, _TensorBase):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        if msg_style == "max1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                               f"0 dim batch size for input, but got:{_size(input)}")
        if msg_style == "adaptive":
            sep = ": " if fname.startswith("adaptive_max") else " "
            raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                               f"{sep}{_size(input)}")
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_size(input)}")
    lead = 1 if input.dim() == nd + 2 else 0
    for d in range(lead, input.dim()):
        if input.shape[d] == 0:
            if msg_style == "adaptive":
                raise RuntimeError(
                    f"{fname}(): Expected input to have non-zero size for non-batch dimensions, "
                    f"but input has sizes {_size(input)} with dimension {d} being empty")
            raise RuntimeError(
                f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch "
                f"size for input, but got:{_size(input)}")


def _planes(x, nd, dt):
    """(planes, prod(spatial)) contiguous view/copy of x in dtype dt."""
    sp = tuple(x.shape[x.dim() - nd:])
    P = 1
    for s in x.shape[:x.dim() - nd]:
        P *= s
    L = 1
    for s in sp:
        L *= s
    if x.dtype != dt:
        x = x.to(dt)
    return x.contiguous().reshape((P, L)), sp


def _pad3(lst, nd, fill):
    return [fill] * (3 - nd) + list(lst)


# ---------------------------------------------------------------------------
# max pooling
# ---------------------------------------------------------------------------
class _MaxPoolFn(_Function):
    """values, indices = max over windows; ``win`` = (starts, ends, steps,
    in_size3, out_shape) with per-dim lists of 3 dims."""
    _backward_name = "MaxPool2DWithIndicesBackward0"           # grad_fn as torch names it
    _backward_inputs = 1

    @staticmethod
    def forward(ctx, x, nd, win, fname):
        starts, ends, steps, out_sp = win
        dt = _compute_dtype(x.dtype, fname, True)
        xp, sp = _planes(x, nd, dt)
        lead = tuple(x.shape[:x.dim() - nd])
        L = 1
        for s in out_sp:
            L *= s
        y = ptcore.empty((xp.shape[0], L), dtype=dt, device=x.device)
        ind = ptcore.empty((xp.shape[0], L), dtype=ptcore.int64, device=x.device)
        if y.numel():
            _kernels(xp.device).max_pool_forward(xp, y, ind, tuple(_pad3(sp, nd, 1)), starts, ends, steps)
        # torch's adaptive 3-d max pooling returns contiguous tensors
        fmt = _output_memory_format(x) if nd == 2 or not fname.startswith("adaptive") \
            else ptcore.contiguous_format
        y = _in_memory_format(y.reshape(lead + tuple(out_sp)), fmt)
        ind = _in_memory_format(ind.reshape(lead + tuple(out_sp)), fmt)
        if dt != x.dtype:
            y = y.to(x.dtype)
        ctx.save_for_backward(ind, x)       # x: torch's backward takes self (zero derivative)
        # the window geometry goes to the backward kernel too (CUDA's gathers with it)
        ctx.meta = (x.shape, x.dtype, nd, (tuple(_pad3(sp, nd, 1)), starts, ends, steps))
        if hasattr(ctx, "mark_non_differentiable"):
            ctx.mark_non_differentiable(ind)
        if hasattr(ctx, "set_materialize_grads"):
            # backward only uses the values' gradient: no zeros for the indices
            ctx.set_materialize_grads(False)
        return y, ind

    @staticmethod
    def backward(ctx, gy, gind=None):
        ind, x = ctx.saved_tensors
        xshape, odt, nd, window = ctx.meta
        if not _grad_state.enabled and not _layers_on[0]:
            # a backward that records nothing, seen by no layer: the kernel
            # without the Function's bookkeeping
            return _max_pool_backward(gy, ind, xshape, odt, nd, window), None, None, None
        gx = zero_link(_MaxPoolBwd.apply(gy, ind, xshape, odt, nd, window),
                       "MaxPoolWithIndicesBackwardBackward0", x)
        return gx, None, None, None


class _MaxPoolBwd(_Function):
    """gx = scatter of ``gy`` to the argmax positions ``ind``; its own
    gradient gathers at the same positions (so max pooling is twice
    differentiable, as in PyTorch)."""

    @staticmethod
    def forward(ctx, gy, ind, xshape, odt, nd, window=None):
        ctx.save_for_backward(ind)
        ctx.meta = (tuple(gy.shape), xshape, nd)
        return _max_pool_backward(gy, ind, xshape, odt, nd, window)

    @staticmethod
    def backward(ctx, gg):
        (ind,) = ctx.saved_tensors
        yshape, xshape, nd = ctx.meta
        lead = xshape[:len(xshape) - nd]
        P = 1
        for s in lead:
            P *= s
        if gg.numel() == 0 or ind.numel() == 0:
            return ptcore.zeros(yshape, dtype=gg.dtype, device=gg.device), None, None, None, None, None
        ggy = gg.reshape((P, -1)).gather(1, ind.reshape((P, -1)))
        return ggy.reshape(yshape), None, None, None, None, None


def _max_pool_backward(gy, ind, xshape, odt, nd, window=None):
    if gy.dtype is odt and odt in _FLOATS and window is not None and not _in_host_memory(gy):
        # a device's whole backward in one call (optional; None: it declines)
        fast = getattr(_kernels(gy.device), "max_pool_backward_prim", None)
        gx = fast(gy, ind, tuple(xshape), nd, window) if fast is not None else None
        if gx is not None:
            return gx
    dt = ptcore.float32 if odt in _LOW else odt
    if dt not in _FLOATS:
        dt = ptcore.float64
    P = 1
    for s in xshape[:len(xshape) - nd]:
        P *= s
    Lin = 1
    for s in xshape[len(xshape) - nd:]:
        Lin *= s
    gyp = gy.to(dt).contiguous().reshape((P, -1)) if gy.numel() else None
    gx = ptcore.empty((P, Lin), dtype=dt, device=gy.device)
    if gx.numel():
        if gyp is None:
            gx.zero_()
        else:
            _kernels(gyp.device).max_pool_backward(gyp, ind.contiguous().reshape((P, -1)), gx,
                                                   window)
    gx = gx.reshape(xshape)
    return gx if dt == odt else gx.to(odt)


# (nd, spatial size, kernel, stride, padding, dilation, ceil_mode) -> the
# validated window geometry of a max pooling (read-only lists, shared by the
# calls of a layer; at most _MAX_WINDOWS_CAP of them)
_MAX_WINDOWS = {}
_MAX_WINDOWS_CAP = 512


_NAMED = {}


def _named(fn, name):
    """``fn`` (a pooling Function) with torch's grad_fn name ``name``: a subclass
    made once (torch names the node after its own decomposition: 1-d pooling
    ends in a squeeze, a 1-element adaptive average is a mean)."""
    cls = _NAMED.get((fn, name))
    if cls is None:
        cls = _NAMED[fn, name] = type(fn.__name__, (fn,), {"_backward_name": name})
    return cls


# (1-d pooling runs as the 2-d kernel: _apply_pool)
_MAX_NAMES = {2: "MaxPool2DWithIndicesBackward0", 3: "MaxPool3DWithIndicesBackward0"}
_AVG_NAMES = {2: "AvgPool2DBackward0", 3: "AvgPool3DBackward0"}
_AAVG_NAMES = {2: "AdaptiveAvgPool2DBackward0", 3: "AdaptiveAvgPool3DBackward0"}
_AMAX_NAMES = {2: "AdaptiveMaxPool2DBackward0", 3: "AdaptiveMaxPool3DBackward0"}


def _apply_pool(fn, names, input, nd, win, fname):
    """``fn`` (a pooling Function) over the last ``nd`` dims of ``input``, its node
    named from ``names`` (by dims).  As torch, 1-d pooling is the 2-d kernel over
    ``input.unsqueeze(-2)``, squeezed after: the graph shows SqueezeBackward1, the 2-d
    node, UnsqueezeBackward0.  ``win``'s last entry is the output size."""
    if nd != 1:
        return _named(fn, names(win[-1]) if callable(names) else names[nd]).apply(
            input, nd, win, fname)
    osz = (1,) + tuple(win[-1])
    r = _named(fn, names(osz) if callable(names) else names[2]).apply(
        input.unsqueeze(-2), 2, win[:-1] + (osz,), fname)
    return tuple(t.squeeze(-2) for t in r) if isinstance(r, tuple) else r.squeeze(-2)


def _check_int32_params(*params):
    """torch's 2-d/3-d pooling kernels (and avg_pool1d, run as 2-d) narrow kernel size,
    stride, padding and dilation to int (``safe_downcast``) before any other check."""
    for vals in params:
        for v in vals:
            if not -2147483648 <= v <= 2147483647:
                raise RuntimeError("value cannot be converted to type int without overflow")


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd,
              fname):
    bool_param(ceil_mode, fname, "ceil_mode", 6)
    _check_input(input, nd, fname, "max1d" if nd == 1 else "max")
    k = _pool_tuple(kernel_size, nd, fname, "kernel_size")
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        s = k
    else:
        s = _pool_tuple(stride, nd, fname, "stride")
    p = _pool_tuple(padding, nd, fname, "padding")
    d = _pool_tuple(dilation, nd, fname, "dilation")
    if nd > 1:                      # (torch's 1-d kernel keeps int64 parameters)
        _check_int32_params(k, s, p, d)
    win = max_window_geometry(input, k, s, p, d, ceil_mode, nd, fname)
    if nd == 1 and not return_indices and input.dtype in _INTS and _in_host_memory(input):
        # torch's CPU max_pool1d without indices runs its own kernel, for floating
        # types only (with indices, max_pool2d's takes integers too)
        raise NotImplementedError(
            f"\"max_pool1d_impl\" not implemented for '{input.dtype._legacy}'")
    if nd == 1 and _records_nothing(input):
        if not return_indices:
            return _max_pool1d_values(input, win[-1][0], k[0], s[0], p[0], d[0])
        y, ind = _max_pool1d_plain(input, win)
    else:
        y, ind = _apply_pool(_MaxPoolFn, _MAX_NAMES, input, nd, win, fname)
    return (y, ind) if return_indices else y


def max_window_geometry(input, k, s, p, d, ceil_mode, nd, fname):
    """The windows ``(starts, ends, steps, out_size)`` of a max pooling of
    ``input`` with kernel size, stride, padding and dilation ``k, s, p, d``
    (tuples of ``nd`` ints), checked as PyTorch checks them (its errors);
    kept per geometry."""
    sp = tuple(input.shape[input.dim() - nd:])
    key = (nd, sp, k, s, p, d, bool(ceil_mode))
    win = _MAX_WINDOWS.get(key)
    if win is None:
        win = _max_windows(input, k, s, p, d, ceil_mode, nd, fname, sp)
        if len(_MAX_WINDOWS) >= _MAX_WINDOWS_CAP:
            _MAX_WINDOWS.clear()
        _MAX_WINDOWS[key] = win
    return win


def record_max_pool(y, ind, x, nd, window):
    """Record ``(y, ind)``, computed by a device's fast form of
    ``max_pool{nd}d(x, ...)`` over ``window`` (``(in_size, starts, ends,
    steps)`` as the backward kernel takes it), as the general path's
    ``_MaxPoolFn`` records it; the caller has checked that grad mode is on
    and x requires grad.  Returns the recorded ``(y, ind)``."""
    ctx = _FunctionCtx()
    ctx.needs_input_grad = (True, False, False, False)
    ctx.save_for_backward(ind, x)
    ctx.meta = (x.shape, x.dtype, nd, window)
    ctx.mark_non_differentiable(ind)
    ctx.set_materialize_grads(False)
    return _connect(_named(_MaxPoolFn, _MAX_NAMES[nd]), ctx, [x, None, None, None], (y, ind))


def _max_pool1d_values(x, OL, k, s, p, d):
    """The values of a 1-d max pooling that records nothing (see ``_max_pool1d_plain``)
    without its indices: the kernel that runs each window position over all outputs."""
    L = x.shape[-1]
    lead = tuple(x.shape[:-1])
    P = 1
    for v in lead:
        P *= v
    y = ptcore.empty((P, OL), dtype=x.dtype)
    if P and OL:
        _kernels(x.device).max_pool1d_values(x.reshape((P, L)), y, k, s, p, d)
    return y.view(lead + (OL,))


@functools.lru_cache(maxsize=None)
def _cpu_kernels():
    """The CPU pooling kernels (``_kernels`` of the CPU, loaded once) for the plain paths,
    whose input is known to be in host memory."""
    return _kernels(None)


def _records_nothing(x):
    """Whether a pooling of ``x`` can skip its autograd Function: a contiguous
    float32/float64 CPU tensor whose result no one differentiates (no grad wanted, no
    forward AD, no vmap)."""
    return (x.dtype is ptcore.float32 or x.dtype is ptcore.float64) and _in_host_memory(x) \
        and x.is_contiguous() and _untracked(x)


def _untracked(x):
    """Whether no one differentiates a result computed from tensor ``x``: no grad
    wanted, no forward AD, no vmap."""
    return not (_grad_state.enabled and x._requires_grad) and not _fw_levels() and \
        not _vmap_frames()


def _max_pool1d_plain(x, win):
    """1-d max pooling of a contiguous float32/float64 CPU tensor that records nothing
    (no grad wanted, no forward AD or vmap): the kernel on its ``(planes, L)`` view, no
    autograd Function around it (whose bookkeeping cost twice the kernel's time on
    ``(8, 16, 128)``).  The same kernel and windows as the general path: the same values
    and indices, contiguous as torch's."""
    starts, ends, steps, out_sp = win
    L = x.shape[-1]
    lead = tuple(x.shape[:-1])
    P = 1
    for v in lead:
        P *= v
    OL = out_sp[0]
    y = ptcore.empty((P, OL), dtype=x.dtype)
    ind = ptcore.empty((P, OL), dtype=ptcore.int64)
    if P and OL:
        _kernels(x.device).max_pool_forward(x.reshape((P, L)), y, ind, (1, 1, L), starts, ends,
                                            steps)
    return y.view(lead + (OL,)), ind.view(lead + (OL,))


def _max_windows(input, k, s, p, d, ceil_mode, nd, fname, sp):
    """``(starts, ends, steps, out_size)`` of the pooling windows over
    spatial size ``sp``, the arguments checked as PyTorch checks them."""
    if builtins.any(v <= 0 for v in k):
        raise RuntimeError(f"{fname}: kernel_size must be greater than zero, but got "
                           f"{list(k)}" if nd == 1 else
                           "kernel size should be greater than zero, but got " +
                           " ".join(f"k{n}: {v}" for n, v in zip("DHW"[3 - nd:], k)))
    if builtins.any(v <= 0 for v in s):
        raise RuntimeError("stride should not be zero" if builtins.any(v == 0 for v in s) else
                           "stride should be greater than zero")
    if builtins.any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{n}: {v}" for n, v in zip("DHW"[3 - nd:], d)))
    if builtins.any(v < 0 for v in p):
        raise RuntimeError("pad must be non-negative")
    for kk, pp, dd in zip(k, p, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")
    osz = tuple(_out_size(n, kk, pp, ss, dd, ceil_mode)
                for n, kk, pp, ss, dd in zip(sp, k, p, s, d))
    if builtins.any(o < 1 for o in osz):
        C = input.shape[input.dim() - nd - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(str(v) for v in (C,) + sp)}). Calculated output size: "
            f"({'x'.join(str(v) for v in (C,) + osz)}). Output size is too small")
    starts, ends = [], []
    for n, kk, pp, ss, dd, o in zip(sp, k, p, s, d, osz):
        st, en = [], []
        for i in range(o):
            a = i * ss - pp
            b = builtins.min(a + (kk - 1) * dd + 1, n)
            while a < 0:
                a += dd
            st.append(a)
            en.append(b)
        starts.append(st)
        ends.append(en)
    starts = _pad3(starts, nd, [0])
    ends = _pad3(ends, nd, [1])
    steps = tuple(_pad3(d, nd, 1))
    return starts, ends, steps, osz


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1-d max pooling returning ``(values, indices)``; see :func:`max_pool1d`."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 1,
                     "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2-d max pooling returning ``(values, indices)``; see :func:`max_pool2d`."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 2,
                     "max_pool2d")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-d max pooling returning ``(values, indices)``; see :func:`max_pool3d`."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 3,
                     "max_pool3d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)``.

    Parameters
    ----------
    input : Tensor
    kernel_size, stride, padding, dilation : int or tuple
        ``stride`` defaults to ``kernel_size``.
    ceil_mode : bool
        Use ceil instead of floor for the output size.
    return_indices : bool
        Also return the argmax indices (flat per plane).

    Returns
    -------
    Tensor or (Tensor, Tensor)
    """
    if return_indices is False and (ceil_mode is False or ceil_mode is True) and \
            isinstance(input, _TensorBase) and _untracked(input):
        # int arguments over a contiguous float CPU input: one kernel call that checks
        # them and allocates the output (None: the general path below, with its errors)
        y = _cpu_kernels().max_pool1d_plain(input, kernel_size, stride, padding, dilation,
                                            ceil_mode)
        if y is not None:
            return y
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Parameters
    ----------
    input : Tensor
    kernel_size, stride, padding, dilation : int or tuple
        ``stride`` defaults to ``kernel_size``.
    ceil_mode : bool
    return_indices : bool
        Also return the argmax indices (``h * W + w`` per plane).

    Returns
    -------
    Tensor or (Tensor, Tensor)

    Examples
    --------
    >>> import ptcore
    >>> import ptcore.nn.functional as F
    >>> F.max_pool2d(ptcore.arange(16.).view(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Parameters
    ----------
    input : Tensor
    kernel_size, stride, padding, dilation : int or tuple
    ceil_mode, return_indices : bool

    Returns
    -------
    Tensor or (Tensor, Tensor)
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     3, "max_pool3d")


# ---------------------------------------------------------------------------
# average pooling
# ---------------------------------------------------------------------------
class _AvgPoolFn(_Function):
    _backward_inputs = 1          # (torch's pooling nodes: one edge, to the input)

    @staticmethod
    def forward(ctx, x, nd, win, fname):
        starts, ends, factors, div, out_sp = win
        # PyTorch's CPU avg_pool1d/2d/3d also run on int64 (window sum divided
        # with C integer division, i.e. truncated); the adaptive ones do not.
        is_long = x.dtype == ptcore.int64 and not fname.startswith("adaptive")
        dt = ptcore.float64 if is_long else _compute_dtype(x.dtype, fname, False)
        xp, sp = _planes(x, nd, dt)
        lead = tuple(x.shape[:x.dim() - nd])
        L = 1
        for s in out_sp:
            L *= s
        y = ptcore.empty((xp.shape[0], L), dtype=dt, device=x.device)
        if y.numel():
            _kernels(xp.device).avg_pool(xp, y, tuple(_pad3(sp, nd, 1)), starts, ends, factors,
                                         1 if is_long else div, False)
        ctx.meta = (x.shape, x.dtype, nd, win, sp, dt, fname)
        ctx.save_for_backward(x)            # torch's backward takes self (zero derivative)
        y = y.reshape(lead + tuple(out_sp))
        if nd == 2:         # (torch's 3-d average poolings return contiguous tensors)
            y = _in_memory_format(y, _output_memory_format(x))
        if is_long:
            if div:
                divisor = div
            else:       # per-position pool sizes: outer product of the per-dim factors
                divisor = ptcore.ones((), dtype=ptcore.int64, device=x.device)
                for i, f in enumerate(factors[3 - nd:]):
                    shape = [1] * nd
                    shape[i] = len(f)
                    divisor = divisor * ptcore.tensor(f, dtype=ptcore.int64,
                                                      device=x.device).reshape(shape)
            return ptcore.div(y.to(ptcore.int64), divisor, rounding_mode="trunc")
        return y if dt == x.dtype else y.to(x.dtype)

    @staticmethod
    def backward(ctx, gy):
        gx = zero_link(_AvgPoolBwd.apply(gy, ctx.meta), "AvgPoolBackwardBackward0",
                       *ctx.saved_tensors)
        return gx, None, None, None


class _AvgPoolBwd(_Function):
    """gx = the adjoint of average pooling applied to ``gy``; its own gradient
    is average pooling again (twice differentiable, as in PyTorch)."""

    @staticmethod
    def forward(ctx, gy, meta):
        ctx.meta = meta
        xshape, odt, nd, win, sp, dt, _ = meta
        starts, ends, factors, div, out_sp = win
        P = 1
        for s in xshape[:len(xshape) - nd]:
            P *= s
        Lin = 1
        for s in sp:
            Lin *= s
        gx = ptcore.empty((P, Lin), dtype=dt, device=gy.device)
        if gx.numel():
            if gy.numel():
                gyp = gy.to(dt).contiguous().reshape((P, -1))
                _kernels(gx.device).avg_pool(gx, gyp, tuple(_pad3(sp, nd, 1)), starts, ends,
                                             factors, div, True)
            else:
                gx.zero_()
        gx = gx.reshape(xshape)
        return gx if dt == odt else gx.to(odt)

    @staticmethod
    def backward(ctx, gg):
        nd, win, fname = ctx.meta[2], ctx.meta[3], ctx.meta[6]
        return _AvgPoolFn.apply(gg, nd, win, fname), None


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd, fname):
    bool_param(ceil_mode, fname, "ceil_mode")
    bool_param(count_include_pad, fname, "count_include_pad")
    if divisor_override is not None:
        divisor_override = strict_int_param(divisor_override, fname, "divisor_override")
    if nd == 1 and isinstance(input, _TensorBase) and input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"avg_pool1d)")
    _check_input(input, nd, fname, "avg")
    k = _pool_tuple(kernel_size, nd, fname, "kernel_size")
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        s = k
    else:
        s = _pool_tuple(stride, nd, fname, "stride")
    p = _pool_tuple(padding, nd, fname, "padding")
    _check_int32_params(k, s, p)
    if builtins.any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{n}: {v}" for n, v in zip("DHW"[3 - nd:], k)))
    if builtins.any(v <= 0 for v in s):
        raise RuntimeError("stride should not be zero" if builtins.any(v == 0 for v in s) else
                           "stride should be greater than zero")
    if builtins.any(v < 0 for v in p):
        raise RuntimeError("pad must be non-negative")
    for kk, pp in zip(k, p):
        if pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation=1")
    div = 0
    if divisor_override is not None:
        div = operator.index(divisor_override)
        if div == 0:
            raise RuntimeError("divisor must be not zero")
    sp = tuple(input.shape[input.dim() - nd:])
    if nd == 3 and builtins.any(n < kk for n, kk in zip(sp, k)):
        # torch's avg_pool3d (only the 3-d one) wants the unpadded input to hold a window
        raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than kernel "
                           f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    osz = tuple(_out_size(n, kk, pp, ss, 1, ceil_mode) for n, kk, pp, ss in zip(sp, k, p, s))
    if builtins.any(o < 1 for o in osz):
        C = input.shape[input.dim() - nd - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(str(v) for v in (C,) + sp)}). Calculated output size: "
            f"({'x'.join(str(v) for v in (C,) + osz)}). Output size is too small")
    key = (nd, sp, k, s, p, bool(ceil_mode), bool(count_include_pad), div)
    win = _AVG_WINDOWS.get(key)
    if win is None:
        win = _avg_windows(sp, k, p, s, osz, count_include_pad, div, nd)
        if len(_AVG_WINDOWS) >= _MAX_WINDOWS_CAP:
            _AVG_WINDOWS.clear()
        _AVG_WINDOWS[key] = win
    return _apply_pool(_AvgPoolFn, _AVG_NAMES, input, nd, win, fname)


# the average pools' windows by geometry, as _MAX_WINDOWS (their lists are never changed)
_AVG_WINDOWS = {}


def _avg_windows(sp, k, p, s, osz, count_include_pad, div, nd):
    """``(starts, ends, factors, divisor, out_size)`` of average pooling windows over
    spatial size ``sp`` (arguments checked by the caller)."""
    starts, ends, factors = [], [], []
    for n, kk, pp, ss, o in zip(sp, k, p, s, osz):
        st, en, fa = [], [], []
        for i in range(o):
            a = i * ss - pp
            b = builtins.min(a + kk, n + pp)
            pool = b - a
            a = builtins.max(a, 0)
            b = builtins.min(b, n)
            if b < a:
                b = a
            st.append(a)
            en.append(b)
            fa.append(pool if count_include_pad else builtins.max(b - a, 1))
        starts.append(st)
        ends.append(en)
        factors.append(fa)
    return (_pad3(starts, nd, [0]), _pad3(ends, nd, [1]), _pad3(factors, nd, [1]), div, osz)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling over ``(N, C, L)`` or ``(C, L)``.

    Parameters
    ----------
    input : Tensor
    kernel_size, stride, padding : int or tuple
    ceil_mode : bool
    count_include_pad : bool
        Count the zero padding in the divisor.

    Returns
    -------
    Tensor
    """
    if (ceil_mode is False or ceil_mode is True) and \
            (count_include_pad is True or count_include_pad is False) and \
            isinstance(input, _TensorBase) and _untracked(input):
        # as max_pool1d's plain path (None: the general path below, with its errors)
        y = _cpu_kernels().avg_pool1d_plain(input, kernel_size, stride, padding, ceil_mode,
                                            count_include_pad)
        if y is not None:
            return y
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1,
                     "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, out=None):
    """2-d average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Parameters
    ----------
    input : Tensor
    kernel_size, stride, padding : int or tuple
    ceil_mode, count_include_pad : bool
    divisor_override : int, optional
        Divide every window sum by this instead of the window size.

    Returns
    -------
    Tensor
    """
    if out is not None:      # (torch's F.avg_pool2d is torch._C._nn.avg_pool2d, with out=)
        check_out_grad("avg_pool2d", out, input)
    r = _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override, 2, "avg_pool2d")
    return copy_out_exact(out, r)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, out=None):
    """3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Parameters
    ----------
    input : Tensor
    kernel_size, stride, padding : int or tuple
    ceil_mode, count_include_pad : bool
    divisor_override : int, optional

    Returns
    -------
    Tensor
    """
    if out is not None:      # (torch's F.avg_pool3d is torch._C._nn.avg_pool3d, with out=)
        check_out_grad("avg_pool3d", out, input)
    r = _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override, 3, "avg_pool3d")
    # (after the shape checks, as torch's kernel dispatch; lp_pool3d uses it too)
    _refuse_cpu_half("avg_pool3d_out_frame", input)
    return copy_out_exact(out, r)


# ---------------------------------------------------------------------------
# adaptive pooling
# ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _host_memory():
    """The host's physical memory in bytes (read once: sysconf costs ~10 us)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):     # pragma: no cover - non-POSIX
        return 1 << 48


def _check_output_fits(input, osz, nd, fname):
    """Fail fast (before building per-window tables) when the output of size
    ``osz`` could never be allocated: more bytes than the host's memory."""
    n = input.element_size()
    for v in tuple(input.shape[:input.dim() - nd]) + tuple(osz):
        n *= v
    limit = _host_memory()
    if n > limit:
        raise RuntimeError(f"{fname}: DefaultCPUAllocator: can't allocate memory: you tried to "
                           f"allocate {n} bytes for an output of size "
                           f"{list(input.shape[:input.dim() - nd]) + list(osz)}")
    # the window tables hold three Python ints per output position of each dim
    table = 3 * 40 * builtins.sum(osz)
    if n + table > limit:
        raise RuntimeError(f"{fname}: output_size {list(osz)} needs about {table} bytes of "
                           f"window tables (plus {n} bytes of output), more than this host's "
                           f"{limit} bytes of memory")


def _adaptive_windows(input, output_size, nd, fname):
    _check_input(input, nd, fname, "adaptive")
    sp = tuple(input.shape[input.dim() - nd:])
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise RuntimeError(f"{fname}: output_size must be {nd}")
        osz = tuple(sp[i] if v is None else operator.index(v) for i, v in enumerate(output_size))
    else:
        osz = (operator.index(output_size),) * nd
    if builtins.any(o < 0 for o in osz):
        raise RuntimeError(f"{fname}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(osz)}")
    _check_output_fits(input, osz, nd, fname)
    starts, ends, factors = [], [], []
    for n, o in zip(sp, osz):
        st = [(i * n) // o for i in range(o)]
        en = [-((-(i + 1) * n) // o) for i in range(o)]
        starts.append(st)
        ends.append(en)
        factors.append([e - s for s, e in zip(st, en)])
    return (_pad3(starts, nd, [0]), _pad3(ends, nd, [1]), _pad3(factors, nd, [1]), osz)


def _list_with_default(input, output_size, nd):
    """torch's Python-level ``_list_with_default`` of the 2-d/3-d adaptive pools: a
    sequence ``output_size`` needs more input dims than it has entries (ValueError)."""
    if nd > 1 and isinstance(output_size, (list, tuple)) and isinstance(input, _TensorBase) \
            and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _adaptive_avg(input, output_size, nd, fname):
    _list_with_default(input, output_size, nd)
    wanted = (output_size,) * nd if type(output_size) is int else output_size
    if isinstance(input, _TensorBase) and input.numel() == 0 and \
            input.dim() in (nd + 1, nd + 2) and isinstance(wanted, (tuple, list)) and \
            len(wanted) == nd and builtins.all(type(v) is int and v == 1 for v in wanted):
        # torch's global average pool is a mean, which takes the empty dims its windowed
        # kernel refuses ((2, 0, 8) -> (2, 0, 1); a length of 0 gives NaN)
        if nd == 1:
            return input.unsqueeze(-2).mean((-2, -1), keepdim=True).squeeze(-2)
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    starts, ends, factors, osz = _adaptive_windows(input, output_size, nd, fname)
    if builtins.all(v == 1 for v in osz) and \
            (input.dtype is ptcore.float32 or input.dtype is ptcore.float64) and \
            _in_host_memory(input) and input.is_contiguous():
        # a global average pool: torch's kernel is then a mean over the pooled dims, so the
        # mean itself (the same values with and without grad, and torch's graph: 1-d
        # pooling runs as 2-d between an unsqueeze and a squeeze)
        if nd == 1:
            if _records_nothing(input):
                return input.mean(-1, keepdim=True)
            return input.unsqueeze(-2).mean((-2, -1), keepdim=True).squeeze(-2)
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    return _apply_pool(_AvgPoolFn, lambda o: _AAVG_NAMES[len(o)] if builtins.any(
        v != 1 for v in o) else "MeanBackward1", input, nd, (starts, ends, factors, 0, osz), fname)


def _adaptive_max(input, output_size, return_indices, nd, fname):
    _list_with_default(input, output_size, nd)
    starts, ends, factors, osz = _adaptive_windows(input, output_size, nd, fname)
    if input.dtype in _INTS:            # (torch's kernels: floating types only)
        kernel = "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy}'")
    y, ind = _apply_pool(_MaxPoolFn, _AMAX_NAMES, input, nd, (starts, ends, (1, 1, 1), osz),
                         fname)
    return (y, ind) if return_indices else y


def adaptive_avg_pool1d(input, output_size):
    """1-d adaptive average pooling to ``output_size``.

    Parameters
    ----------
    input : Tensor
        ``(N, C, L)`` or ``(C, L)``.
    output_size : int

    Returns
    -------
    Tensor
    """
    if type(output_size) is int and output_size == 1 and isinstance(input, _TensorBase) and \
            2 <= input.dim() <= 3 and input.shape[-1] and input.shape[-2] and \
            _records_nothing(input):
        # a global pool that records nothing, _adaptive_avg's mean without its argument work
        return input.mean(-1, keepdim=True)
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """2-d adaptive average pooling to ``output_size`` (int or ``(H, W)``, ``None``
    keeps the input size).

    Parameters
    ----------
    input : Tensor
    output_size : int or tuple

    Returns
    -------
    Tensor
    """
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """3-d adaptive average pooling to ``output_size``.

    Parameters
    ----------
    input : Tensor
    output_size : int or tuple

    Returns
    -------
    Tensor
    """
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """1-d adaptive max pooling returning ``(values, indices)``."""
    return _adaptive_max(input, output_size, True, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """2-d adaptive max pooling returning ``(values, indices)``."""
    return _adaptive_max(input, output_size, True, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """3-d adaptive max pooling returning ``(values, indices)``."""
    return _adaptive_max(input, output_size, True, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-d adaptive max pooling to ``output_size``.

    Parameters
    ----------
    input : Tensor
    output_size : int
    return_indices : bool

    Returns
    -------
    Tensor or (Tensor, Tensor)
    """
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-d adaptive max pooling to ``output_size``.

    Parameters
    ----------
    input : Tensor
    output_size : int or tuple
    return_indices : bool

    Returns
    -------
    Tensor or (Tensor, Tensor)
    """
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-d adaptive max pooling to ``output_size``.

    Parameters
    ----------
    input : Tensor
    output_size : int or tuple
    return_indices : bool

    Returns
    -------
    Tensor or (Tensor, Tensor)
    """
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


# ---------------------------------------------------------------------------
# power-average pooling (composed)
# ---------------------------------------------------------------------------
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, avg):
    """(sum over each window of x^p)^(1/p) as PyTorch composes it: the average
    of x^p times the window size, sign-preserving relu, then the p-th root."""
    k = _pool_tuple(kernel_size, nd, f"lp_pool{nd}d", "kernel_size")
    n = 1
    for v in k:
        n *= v
    kk = k[0] if nd == 1 else k
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        # torch's limits: the largest |x| of each window (+inf), the smallest (-inf)
        mp = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        if norm_type > 0:
            return mp(input.abs(), kk, stride, 0, 1, ceil_mode)
        return -mp(-input.abs(), kk, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg(input.pow(norm_type), kk, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kk, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-d power-average pooling: ``(sum x^p)^(1/p)`` over each window.

    Parameters
    ----------
    input : Tensor
    norm_type : float
    kernel_size, stride : int
    ceil_mode : bool

    Returns
    -------
    Tensor
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling: ``(sum x^p)^(1/p)`` over each window.

    Parameters
    ----------
    input : Tensor
    norm_type : float
    kernel_size, stride : int or tuple
    ceil_mode : bool

    Returns
    -------
    Tensor
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling: ``(sum x^p)^(1/p)`` over each window.

    Parameters
    ----------
    input : Tensor
    norm_type : float
    kernel_size, stride : int or tuple
    ceil_mode : bool

    Returns
    -------
    Tensor
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, avg_pool3d)


# ---------------------------------------------------------------------------
# max unpooling
# ---------------------------------------------------------------------------
def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = tuple(input.shape)
    k = len(kernel_size)
    default_size = [(input_size[-k + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
                    for d in range(k)]
    if output_size is None:
        return default_size
    output_size = list(output_size)
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(
            f"output_size should be a sequence containing {k} or {k + 2} elements, but it has "
            f"a length of '{len(output_size)}'")
    for d in range(k):
        min_size = default_size[d] - stride[d]
        max_size = default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f"between {min_size} and {max_size})")
    return output_size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    if not isinstance(input, _TensorBase) or not isinstance(indices, _TensorBase):
        raise TypeError(f"max_unpool{nd}d(): input and indices must be Tensors")
    kernel_size = _ntuple(kernel_size, nd)
    stride = kernel_size if stride is None else _ntuple(stride, nd)
    padding = _ntuple(padding, nd)
    osz = [int(v) for v in _unpool_output_size(input, kernel_size, stride, padding, output_size)]
    if nd == 1:
        # as PyTorch: the 2-d kernel on (..., L, 1)
        return _max_unpool_kernel(input.unsqueeze(-1), indices.unsqueeze(-1), osz + [1],
                                  2).squeeze(-1)
    return _max_unpool_kernel(input, indices, osz, nd)


def _max_unpool_kernel(input, indices, osz, nd):
    name = f"max_unpooling{nd}d"
    # (torch's first step: overlapping windows' indices may repeat)
    _alert_not_deterministic(f"{name}_forward_out")
    if indices.dtype != ptcore.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype._legacy}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got "
                           f"a tensor with {input.dim()} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_size(input)}) but got indices tensor with shape: "
                           f"{_size(indices)}")
    lead = tuple(input.shape[:-nd])
    total = 1
    for v in osz:
        total *= v
    n_in = math.prod(input.shape[-nd:])      # not -1: ambiguous for an empty batch
    flat_idx = indices.reshape(lead + (n_in,))
    if flat_idx.numel():
        lo, hi = int(flat_idx.min().item()), int(flat_idx.max().item())
        if lo < 0 or hi >= total:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(str(v) for v in osz)})")
    out = ptcore.zeros(lead + (total,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(lead + (n_in,))).reshape(lead + tuple(osz))
    # torch's 2-d unpooling (1-d goes through it) writes in the input's
    # suggested layout; its 3-d one always writes contiguous
    return _in_memory_format(out, _output_memory_format(input)) if nd == 2 else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool1d`: put each value at its index,
    zeros elsewhere.

    Parameters
    ----------
    input, indices : Tensor
        The output and indices of ``max_pool1d(..., return_indices=True)``.
    kernel_size, stride, padding : int or tuple
    output_size : sequence of int, optional

    Returns
    -------
    Tensor
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool2d` (see :func:`max_unpool1d`)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool3d` (see :func:`max_unpool1d`)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)
