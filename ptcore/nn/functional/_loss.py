"""Loss functions of ``ptcore.nn.functional`` (PyTorch semantics).

Every loss is composed from ordinary ptcore operators (``log_softmax``,
``gather``, ``where``, reductions ...), so autograd differentiates it
without loss-specific backward code.  Shape/dtype checks and error
messages follow PyTorch's ATen kernels.
"""
import builtins
import math

import numpy as _np

import ptcore as _pt
from ptcore._dispatch.device import (cpu_kernel as _loop, has_loop as _has_loop, loop_for as _loop_for,
                                     refuse_cpu_half as _refuse_cpu_half)
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._ops.kernels import _nn_kernels as _NNK
from ptcore._ops.indexing import _index_bounds_cpu
from ptcore._warn import warn_at_caller
from ptcore.autograd import _record as _R
from ptcore.autograd._formulas import _recorded
from ptcore.autograd.function import Function
from ptcore.autograd.grad_mode import _restore_mode, _set_mode
from ptcore._scalar_args import float_param
import ptcore.nn._reduction as _Reduction
from ptcore.nn.functional._activation import logsigmoid
from ptcore.nn.functional._distance import pairwise_distance

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss",
]

def _tname(dt):
    """PyTorch's ScalarType name of ``dt`` ("Float"), used in its error messages."""
    return dt._legacy


def _shape(t):
    return list(t.shape)


def _check_tensor(x, fname, argname):
    if not isinstance(x, _pt.Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' must be Tensor, not {type(x).__name__}")


def _apply_reduction(loss, enum):
    if enum == 0:
        return loss
    if enum == 1:
        return loss.mean()
    return loss.sum()


def _legacy_or(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_string(size_average, reduce)
    return reduction


def _warn_size(input, target):
    if target.size() != input.size():
        warn_at_caller(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.")


def _not_implemented(kname, dt):
    return NotImplementedError(f'"{kname}" not implemented for \'{_tname(dt)}\'')


def _logsigmoid(x):
    # F.logsigmoid: stable for all x, and its derivative sigmoid(-x) is right
    # at 0 too (min(x, 0) - log1p(exp(-|x|)) composed of ops has slope 1 there)
    return logsigmoid(x)


def _expand_pair(input, target):
    """``torch.broadcast_tensors(input, target)`` when their shapes differ, as torch's l1/mse/
    smooth-L1 losses do first: a 0-d target then promotes as a dimensioned tensor (bfloat16
    input, float16 0-d target: a float32 loss)."""
    if input.shape == target.shape:
        return input, target
    return _pt.broadcast_tensors(input, target)


def _pair_dtype(input, target):
    """``result_type(input, target)`` of two tensors, without the call for one dtype."""
    dt = input.dtype
    return dt if target.dtype is dt else _pt.result_type(input, target)


def _sub_promoted(x, t):
    """``x - t`` as torch's fused loss kernels compute it: a bool ``t``
    promotes to ``x``'s dtype (the ``-`` operator refuses bool tensors)."""
    return x - (t.to(x.dtype) if t.dtype is _pt.bool else t)


def _opmath_diff(x, t, opmath):
    """``|x - t|`` as torch's fused loss kernel computes it, and the dtype to round its
    terms to: a pair in a low-precision dtype of ``opmath`` in float32, each term rounded
    once at the end (None: in the pair's dtype, op by op).  torch 2.13's CPU kernels
    differ by dtype: smooth L1 computes bfloat16 in float32 and float16 op by op, Huber
    the other way round (matched on every float16/bfloat16 value of [-20, 20])."""
    if x.dtype in opmath and (t.dtype is x.dtype or t.dtype is _pt.bool):
        return (x.float() - t.float()).abs(), x.dtype
    return _sub_promoted(x, t).abs(), None


def _reduced_grad(g, enum, n):
    """The incoming gradient ``g`` of a reduced loss as the gradient of each
    element's term: divided by the element count ``n`` for 'mean'."""
    return g / n if enum == 1 else g


def _pair_grads(gd, need, x, t):
    """``(gd, -gd)`` as the gradients of ``x`` and ``t`` of a loss of ``x - t``,
    each in its tensor's dtype, None where not needed."""
    gx = gt = None
    if need[0]:
        gx = gd if gd.dtype is x.dtype else gd.to(x.dtype)
    if need[1]:
        gt = -gd
        gt = gt if gt.dtype is t.dtype else gt.to(t.dtype)
    return gx, gt


def _weighted_reduce(errors, weight, reduction):
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _pt.sum(weighted)
    if reduction == "mean":
        return _pt.sum(weighted) / _pt.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _torch_node(name, compute, *tensors, grad=None, once=None):
    """``compute(*tensors)`` recorded as one autograd node named as torch's (``print(loss)``
    shows ``grad_fn=<MseLossBackward0>``; ``grad_fn.next_functions`` reach the arguments).

    torch's losses are single kernels; ptcore's are composites.  With ``grad`` (torch's
    derivative formula: ``grad(g, needs, *tensors)`` gives the gradient of each tensor
    whose ``needs`` flag is set, in its dtype) the node's backward computes that; without,
    it differentiates ``compute`` recomputed on the saved arguments.  Either is recorded
    under ``create_graph``, so higher derivatives hold.  ``compute`` must only compute:
    checks and warnings run once, before.  Without autograd (or under forward AD) it
    simply runs.  ``once``: the ATen name of torch's backward kernel when that
    has no derivative (``multi_margin_loss_backward``): the gradient is then
    recorded as not differentiable again (RuntimeError on a second backward).
    """
    if not (_R._state.enabled and _R._needs_grad(tensors, None)) or _fw_levels():
        return compute(*tensors)
    prev = _set_mode(False)         # (no_grad()'s switch, without its object)
    try:
        out = compute(*tensors)
    finally:
        _restore_mode(prev)
    saved = [_R.save(t) for t in tensors]

    def bw(g):
        ts = [sv.unpack() for sv in saved]
        if grad is not None:
            return grad(g, [isinstance(t, _pt.Tensor) and t._requires_grad for t in ts], *ts)
        create = _pt.is_grad_enabled()
        if once is not None and create:
            with _pt.no_grad():
                res = bw(g)
            f = _R.not_implemented(once, fallback=True)
            for r in res:
                if r is not None:
                    f(r, *ts)
            return res
        need = [i for i, t in enumerate(ts) if isinstance(t, _pt.Tensor) and t._requires_grad]
        with _pt.enable_grad():
            # differentiate w.r.t. fresh aliases of the arguments: the inner grad must
            # not run (and free) the graph behind them, nor add the paths between
            # them (target = f(input), as Bernoulli.entropy passes) a second time;
            # under create_graph the aliases stay connected for higher derivatives
            for i in need:
                ts[i] = ts[i].view_as(ts[i]) if create else ts[i].detach().requires_grad_()
            o = compute(*ts)
        grads = _pt.autograd.grad(o, [ts[i] for i in need], g, create_graph=create,
                                  allow_unused=True)
        res = [None] * len(ts)
        for i, gi in zip(need, grads):
            res[i] = gi
        return tuple(res)

    _R.attach(name, out, tensors, bw)
    return out


# --------------------------------------------------------------------------
# regression losses
# --------------------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error, ``(input - target) ** 2`` reduced.

    Parameters
    ----------
    input, target : Tensor
        Same shape (broadcasting warns, as in PyTorch).
    reduction : {'mean', 'sum', 'none'}
    weight : Tensor, optional
        Elementwise weights (same shape as ``input``); ``'mean'`` divides by
        their sum.
    """
    _check_tensor(input, "mse_loss", "input")
    _check_tensor(target, "mse_loss", "target")
    _warn_size(input, target)
    reduction = _legacy_or(size_average, reduce, reduction)
    in_size = input.size()
    input, target = _expand_pair(input, target)
    if weight is not None:
        if weight.size() != in_size:
            raise ValueError("Weights and input must have the same size.")

        def compute(x, t, w):
            d = x - t
            return _weighted_reduce(d * d, w, reduction)
        return _torch_node("MseLossBackward0", compute, input, target, weight)
    enum = _Reduction.get_enum(reduction)
    dt = _pair_dtype(input, target)
    if not dt.is_floating_point:        # torch 2.13 refuses complex too
        raise _not_implemented("mse_cpu", dt)
    kernels = _smooth_l1_kernels(input, target)

    def compute(x, t):
        if kernels is not None:
            r = kernels.smooth_l1_forward(x, t, 1.0, 2, enum)
            if r is not None:
                return r
        d = _sub_promoted(x, t)
        return _apply_reduction(d * d, enum)

    def grad(g, need, x, t):
        # torch's mse_loss_backward: 2 (x - t) g (/ n for 'mean')
        if kernels is not None and not _R._state.enabled:
            r = _kernel_pair_grads(kernels, g, need, x, t, 1.0, 2, enum)
            if r is not None:
                return r
        d = _sub_promoted(x, t)
        return _pair_grads(d * (_reduced_grad(g, enum, d.numel()) * 2), need, x, t)
    return _torch_node("MseLossBackward0", compute, input, target, grad=grad)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error, ``|input - target|`` reduced (see :func:`mse_loss`)."""
    _check_tensor(input, "l1_loss", "input")
    _check_tensor(target, "l1_loss", "target")
    _warn_size(input, target)
    reduction = _legacy_or(size_average, reduce, reduction)
    in_size = input.size()
    input, target = _expand_pair(input, target)
    if weight is not None:
        if weight.size() != in_size:
            raise ValueError("Weights and input must have the same size.")
        return _weighted_reduce((input - target).abs(), weight, reduction)
    enum = _Reduction.get_enum(reduction)
    return _apply_reduction((input - target).abs(), enum)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1: ``0.5 d**2 / beta`` if ``|d| < beta`` else ``|d| - 0.5 beta``."""
    _check_tensor(input, "smooth_l1_loss", "input")
    _check_tensor(target, "smooth_l1_loss", "target")
    _warn_size(input, target)
    reduction = _legacy_or(size_average, reduce, reduction)
    dt = _pair_dtype(input, target)
    if not dt.is_floating_point:        # torch's kernel: floating dtypes only (not complex)
        raise _not_implemented("smooth_l1_cpu", dt)
    input, target = _expand_pair(input, target)
    enum = _Reduction.get_enum(reduction)
    if isinstance(beta, _pt.Tensor):
        beta = float_param(beta, "smooth_l1_loss", "beta", 4)     # (a 0-d one without grad)
    if beta == 0.0:
        return _apply_reduction((input - target).abs(), enum)
    if not beta >= 0:                   # (NaN too, as torch's TORCH_CHECK(beta >= 0))
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")

    kernels = _smooth_l1_kernels(input, target)

    def compute(x, t):
        if kernels is not None:
            r = kernels.smooth_l1_forward(x, t, beta, 0, enum)
            if r is not None:
                return r
        z, low = _opmath_diff(x, t, (_pt.bfloat16,))
        if beta == 1.0:
            # (Huber's form with delta 1, the same values: 0.5 z z below 1, z - 0.5 from there)
            r = _huber_terms(z, 1.0)
        elif z.dtype is _pt.float16:
            # torch's order op by op, beta rounded to float16 as its kernel's scalar_t(beta)
            b = float(_np.float16(beta))
            r = _pt.where(z < b, (0.5 * z) * z / b, z - 0.5 * b)
        else:
            r = _pt.where(z < beta, (0.5 / beta) * (z * z), z - 0.5 * beta)
        return _apply_reduction(r if low is None else r.to(low), enum)

    def grad(g, need, x, t):
        # torch's smooth_l1_loss_backward: d / beta inside the beta band, sign(d) outside
        if kernels is not None and not _R._state.enabled:
            r = _kernel_pair_grads(kernels, g, need, x, t, beta, 0, enum)
            if r is not None:
                return r
        d = _sub_promoted(x, t)
        if _R._state.enabled:
            # (recorded, create_graph: this form's second derivative is torch's, 0 on the
            # band's edges)
            slope = _pt.where(d.abs() < beta, d / beta, d.sign())
        else:
            # the same values in one op: |d / beta| >= 1 exactly where |d| >= beta
            slope = (d if beta == 1.0 else d / beta).clamp(-1.0, 1.0)
        return _pair_grads(slope * _reduced_grad(g, enum, d.numel()), need, x, t)
    return _torch_node("SmoothL1LossBackward0", compute, input, target, grad=grad)


def _cpu_smooth_l1_kernels():
    """The one-pass smooth L1 / Huber / MSE kernels on the CPU (devices
    register theirs as the loop ``smooth_l1_kernels``)."""
    return _NNK


def _smooth_l1_kernels(input, target):
    """The one-pass smooth L1 / Huber / MSE kernels where they may serve ``input``
    and ``target`` (float32/float64 of one dtype on a device with the loop,
    no forward AD: its tangents need the composite), else None.  They stand
    aside (None) for layouts they do not take: broadcast, strided, empty."""
    dt = input.dtype
    if (dt is not _pt.float32 and dt is not _pt.float64) or target.dtype is not dt \
            or _fw_levels():
        return None
    loop = _loop_for("smooth_l1_kernels", input.device, _cpu_smooth_l1_kernels)
    return None if loop is None else loop()


def _kernel_pair_grads(kernels, g, need, x, t, p, kind, enum):
    """The (input, target) gradients of smooth L1, Huber or MSE (``kind`` 0,
    1, 2) with parameter ``p`` by the one-pass kernel, None where it does
    not apply."""
    if enum == 0 and g.dtype is x.dtype:
        g = g.contiguous()
    gx = kernels.smooth_l1_backward(g, x, t, p, kind, enum)
    if gx is None:
        return None
    return (gx if need[0] else None), (-gx if need[1] else None)


def _huber_terms(z, delta):
    """Huber's terms of ``z = |x - t|``: ``0.5 z z`` below ``delta``, ``delta (z - 0.5 delta)``
    from there on, as ``m (z - 0.5 m)`` with ``m = min(z, delta)``: the same values as torch's
    kernel (``z - 0.5 z`` is exact), in four ops where a ``where`` of both branches takes seven."""
    m = z.clamp_max(delta)
    return m * (z - 0.5 * m)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss: ``0.5 d**2`` if ``|d| < delta`` else ``delta (|d| - 0.5 delta)``."""
    _check_tensor(input, "huber_loss", "input")
    _check_tensor(target, "huber_loss", "target")
    _warn_size(input, target)
    if isinstance(delta, _pt.Tensor):
        delta = float_param(delta, "huber_loss", "delta", 4)      # (a 0-d one without grad)
    if not delta > 0:                   # (NaN too, as torch's TORCH_CHECK(delta > 0))
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    dt = _pair_dtype(input, target)
    if not dt.is_floating_point:        # torch's kernel: floating dtypes only (not complex)
        raise _not_implemented("huber_cpu", dt)
    if not input.is_floating_point():
        # torch writes the loss into a tensor like the input
        raise RuntimeError(f"result type {_tname(dt)} can't be cast to the desired output type "
                           f"{_tname(input.dtype)}")

    kernels = _smooth_l1_kernels(input, target) if weight is None else None

    def elementwise(x, t):
        # torch's kernel writes into a tensor like the input: the input's dtype
        r = _huber_terms(_opmath_diff(x, t, (_pt.float16,))[0], delta)
        return r if r.dtype is x.dtype else r.to(x.dtype)
    if weight is None:
        enum = _Reduction.get_enum(reduction)

        def compute(x, t):
            if kernels is not None:
                r = kernels.smooth_l1_forward(x, t, delta, 1, enum)
                if r is not None:
                    return r
            return _apply_reduction(elementwise(x, t), enum)

        def grad(g, need, x, t):
            # torch's huber_loss_backward: d inside the delta band, delta sign(d) from its
            # edge on
            if kernels is not None and not _R._state.enabled:
                r = _kernel_pair_grads(kernels, g, need, x, t, delta, 1, enum)
                if r is not None:
                    return r
            d = _sub_promoted(x, t)
            if _R._state.enabled:
                # (recorded, create_graph: the same value on the edge, but a second
                # derivative of 0 there as torch's)
                slope = _pt.where(d.abs() < delta, d, delta * d.sign())
            else:
                slope = d.clamp(-delta, delta)      # (the same values, one op)
            return _pair_grads(slope * _reduced_grad(g, enum, d.numel()), need, x, t)
        return _torch_node("HuberLossBackward0", compute, input, target, grad=grad)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                         "'sum'.")

    def compute(x, t, w):
        weighted = elementwise(x, t) * w
        if reduction == "none":
            return weighted
        return _pt.sum(weighted) if reduction == "sum" else weighted.mean()
    return _torch_node("HuberLossBackward0", compute, input, target, weight)


# --------------------------------------------------------------------------
# NLL / cross entropy
# --------------------------------------------------------------------------

def _no_weight_grad(weight, fname, argname="weight"):
    """torch's autograd kernels of the class/element-weighted losses refuse a
    weight that requires grad while grad mode is on, before the loss's own
    checks (its derivatives.yaml has no formula for it)."""
    if weight is not None and weight.requires_grad and _R._state.enabled:
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                           f"argument '{argname}'. This input cannot have requires_grad True.")


def _nll_checks(input, target, weight):
    nd = input.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1:
        tb = target.shape[0] if target.dim() > 0 else 0
        if input.shape[0] != tb:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({tb}).")
    _no_weight_grad(weight, "nll_loss_forward" if nd <= 2 else "nll_loss2d_forward")
    C = input.shape[1] if nd > 1 else input.shape[0]
    if nd <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1 and target.dim() == 1 and target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        if weight is not None and (weight.dim() != 1 or weight.numel() != C):
            raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no "
                               f"classes but got weight tensor of shape: {_shape(weight)}")
    else:
        if nd == 4 and target.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.dim()}")
        if nd == 4 and _shape(target) != [input.shape[0]] + _shape(input)[2:]:
            raise RuntimeError(f"size mismatch (got input: {_shape(input)} , target: "
                               f"{_shape(target)}")
        if nd != 4 and _shape(target)[1:] != _shape(input)[2:]:
            raise RuntimeError(f"Expected target size {[input.shape[0]] + _shape(input)[2:]}, "
                               f"got {_shape(target)}")
        if weight is not None and weight.numel() != C:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    if not input.is_floating_point():
        raise _not_implemented("nll_loss_out_frame", input.dtype)
    if target.dtype not in (_pt.int64, _pt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_tname(target.dtype)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input.dtype)} but found "
                           f"{_tname(weight.dtype)}")
    return C


def _nll_prepare(input, target, weight, ignore_index):
    """The checked pieces of ``nll_loss`` on log-probabilities ``input`` (C),
    (N, C) or (N, C, d1, ...): ``(one_d, target, ignored, w)`` with the target
    int64 (ignored entries set to class 0), ``ignored`` the mask of ignored
    entries (None when none is), ``w`` each entry's weight (None when all are
    1; 0 where ignored)."""
    C = _nll_checks(input, target, weight)
    one_d = input.dim() == 1
    if one_d:
        target = target.reshape(1)
    if target.dtype != _pt.int64:
        target = target.to(_pt.int64)
    ignored = None
    bounds = _loop_for("index_bounds", target.device, _index_bounds_cpu)
    if target.numel() > 0 and ignore_index < 0 and bounds is not None:
        # the usual case (ignore_index -100, every target a class): one bounds pass
        # tells it (a negative ignore_index is then out of range too)
        if bounds(target, C, False) is None:
            return one_d, target, None, None if weight is None else _pt.take(weight, target)
    if target.numel() > 0:
        lo, hi = _pt.aminmax(target)
        tmin, tmax = builtins.int(lo.item()), builtins.int(hi.item())
        if tmin <= ignore_index <= tmax:
            ignored = target == ignore_index
            target = _pt.where(ignored, 0, target)
        if tmin < 0 or tmax >= C:
            bad = (target < 0) | (target >= C)
            if builtins.bool(bad.any()):
                first = builtins.int(target[bad].reshape(-1)[0].item())
                raise IndexError(f"Target {first} is out of bounds.")
    if weight is None:
        w = None if ignored is None else (~ignored).to(input.dtype)
    else:
        w = _pt.take(weight, target)
        if ignored is not None:
            w = w.masked_fill(ignored, 0)
    return one_d, target, ignored, w


def _nll_nd(input, enum, prep):
    """``nll_loss`` of ``input`` given ``_nll_prepare``'s pieces."""
    one_d, target, ignored, w = prep
    if one_d:
        input = input.unsqueeze(0)
    picked = input.gather(1, target.unsqueeze(1)).squeeze(1)
    if w is None:
        loss = -picked
        if enum == 1:
            return loss.mean() if loss.numel() > 0 else loss.sum() / 0.0
    else:
        loss = -(picked * w)
    if ignored is not None:
        # ignored targets give +0 and an exactly-zero gradient (as PyTorch's
        # kernel), even when every target is ignored and the 'mean' denominator is 0
        loss = loss.masked_fill(ignored, 0.0)
    if enum == 0:
        return loss.reshape(()) if one_d else loss
    if enum == 2:
        return loss.sum()
    return loss.sum() / w.sum()


def _nll_grad(g, x, enum, prep):
    """torch's ``nll_loss_backward``: ``-g * w`` (``/ total weight`` for
    'mean') at each entry's target class, zero elsewhere and where ignored."""
    one_d, target, ignored, w = prep
    x2 = x.unsqueeze(0) if one_d else x
    coef = -(g.reshape(target.shape) if enum == 0 else g)
    if w is not None:
        coef = coef * w
    if enum == 1:
        coef = coef / (w.sum() if w is not None else target.numel())
    coef = coef.expand(target.shape).to(x.dtype)
    if ignored is not None:
        coef = coef.masked_fill(ignored, 0.0)
    gx = _pt.zeros_like(x2).scatter(1, target.unsqueeze(1), coef.unsqueeze(1))
    return gx.squeeze(0) if one_d else gx


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood loss on log-probabilities.

    Parameters
    ----------
    input : Tensor
        ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)`` log-probabilities.
    target : Tensor
        int64 (or uint8) class indices, ``()``, ``(N)`` or ``(N, d1, ...)``.
    weight : Tensor, optional
        Per-class weights of shape ``(C)``.
    ignore_index : int
        Target value that contributes neither to the loss nor to the
        ``'mean'`` denominator.
    reduction : {'mean', 'sum', 'none'}
        ``'mean'`` divides by the sum of the weights of non-ignored targets.
    """
    _check_tensor(input, "nll_loss", "input")
    _check_tensor(target, "nll_loss", "target")
    reduction = _legacy_or(size_average, reduce, reduction)
    enum = _Reduction.get_enum(reduction)
    return _nll_recorded(input, target, weight, enum, ignore_index)


def _nll_recorded(input, target, weight, enum, ignore_index):
    """``_nll_nd`` recorded as torch's ``nll_loss_nd``: one node that
    differentiates the input only (class indices, constant class weights),
    ``NllLossBackward0`` for (C) and (N, C), ``NllLoss2DBackward0`` for
    (N, C, h, w); other shapes go through (N, C, 1, -1) views as torch's
    (``print(loss)`` shows the same ``grad_fn``)."""
    if _row_kernel_applies("nll_kernels", input, target, weight):
        out = _nll_kernel(input, target, enum, builtins.int(ignore_index))
        if out is not None:
            return out

    def node(name, x, t):
        prep = _nll_prepare(x, t, weight, ignore_index)
        return _torch_node(name, lambda x: _nll_nd(x, enum, prep), x,
                           grad=lambda g, need, x: (_nll_grad(g, x, enum, prep),))
    d = input.dim()
    if d <= 2:
        return node("NllLossBackward0", input, target)
    if d == 4:
        return node("NllLoss2DBackward0", input, target)
    _nll_checks(input, target, weight)      # on the original shapes, as torch's messages
    n, c = input.shape[0], input.shape[1]
    x = input.contiguous().view(n, c, 1, -1) if input.numel() > 0 else input.view(n, c, 0, 0)
    t = target.contiguous().view(n, 1, -1) if target.numel() > 0 else target.view(n, 0, 0)
    out = node("NllLoss2DBackward0", x, t)
    return out.view((n,) + tuple(input.shape[2:])) if enum == 0 else out


def _class_weight_view(weight, ndim):
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[1] = weight.shape[0]
    return weight.view(shape)


def _ce_prob_target(input, target, weight, enum, label_smoothing, class_dim):
    C = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != C):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {C} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{_shape(weight)}")
    logp = _pt.log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = target * (1 - label_smoothing) + (label_smoothing / C)
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight_view(weight, logp.dim())
    if enum == 0:
        return -prod.sum(class_dim)
    if enum == 2:
        return -prod.sum()
    if logp.numel() == 0:
        return -prod.sum() / 0.0
    # torch divides by the number of samples as a C++ scalar: DivBackward1
    n = logp.numel() // C
    return _torch_node("DivBackward1", lambda t: t / n, -prod.sum())


def _ce_label_smoothing(input, target, weight, enum, ignore_index, label_smoothing, class_dim):
    logp = _pt.log_softmax(input, class_dim)
    nll = _nll_recorded(logp, target, weight, enum, ignore_index)
    C = logp.shape[class_dim]
    if weight is not None:
        smooth = -(logp * _class_weight_view(weight, logp.dim())).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignore_mask = target == ignore_index
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if enum == 1:
        if weight is not None:
            kept = target[~ignore_mask].reshape(-1).to(_pt.int64)
            ret = smooth.sum() / _pt.take(weight, kept).sum()
        else:
            ret = smooth.sum() / (~ignore_mask).sum()
    elif enum == 2:
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / C)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits ``input`` and ``target``.

    Parameters
    ----------
    input : Tensor
        Unnormalised logits, ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)``.
    target : Tensor
        Class indices (int64, shape of ``input`` without the class dim) or
        class probabilities (floating, same shape as ``input``).
    weight : Tensor, optional
        Per-class weights ``(C)``.
    ignore_index : int
        Ignored target value (class-index targets only).
    reduction : {'mean', 'sum', 'none'}
    label_smoothing : float
        In ``[0, 1]``; mixes the target with the uniform distribution.
    """
    _check_tensor(input, "cross_entropy", "input")
    _check_tensor(target, "cross_entropy", "target")
    reduction = _legacy_or(size_average, reduce, reduction)
    enum = _Reduction.get_enum(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if not input.is_floating_point():
        raise _not_implemented("log_softmax_lastdim_kernel_impl", input.dtype)
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class probabilities, "
                               f"got {_tname(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _ce_prob_target(input, target, weight, enum, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _ce_label_smoothing(input, target, weight, enum, ignore_index, label_smoothing,
                                   class_dim)
    if _row_kernel_applies("cross_entropy_kernels", input, target, weight):
        out = _cross_entropy_kernel(input, target, enum, builtins.int(ignore_index))
        if out is not None:
            return out
    return _nll_recorded(_pt.log_softmax(input, class_dim), target, weight, enum, ignore_index)


def _row_kernel_applies(loop, input, target, weight):
    """Whether the one-pass class-index loss kernels of ``loop`` may take
    ``input`` and ``target``: (N, C) input, int64 (N) targets, no class
    weights, a loop on the device, no forward-AD level (the kernels still
    return None for layouts or targets they do not take)."""
    return (weight is None and input.dim() == 2 and target.dim() == 1
            and target.dtype is _pt.int64 and input.shape[0] == target.shape[0]
            and _has_loop(loop, input.device.type) and not _fw_levels())


def _nll_kernel(x, target, enum, ignore_index):
    """``nll_loss`` of (N, C) log-probabilities and int64 class indices
    without class weights by the loop ``nll_kernels`` (one pass over the
    targets), recorded as one ``NllLossBackward0`` node whose backward writes
    ``-g`` (scaled) at each target in one pass.  A recorded backward
    (create_graph) uses the differentiable composite.  None when the kernel
    does not apply (a target out of range included: the composite raises
    torch's error)."""
    kernels = _loop("nll_kernels", x.device, _cpu_ce_kernels)()
    r = kernels.nll_forward(x, target, ignore_index, enum)
    if r is None:
        return None
    out, count = r

    def kernel_grad(g, x_, t_):
        g_ = g.to(_pt.float64).contiguous() if enum == 0 else g
        return kernels.nll_backward(g_, x_, t_, ignore_index, enum, count)

    def composite_grad(g, x_, t_):
        return _nll_grad(g, x_, enum, _nll_prepare(x_, t_, None, ignore_index))

    return _record_loss_kernel("NllLossBackward0", out, x, (target,), kernel_grad,
                               composite_grad, (x,))


def _record_loss_kernel(name, out, x, extra, kernel_grad, composite_grad, edges):
    """``out``, a one-pass loss kernel's result over input ``x``, recorded as
    one node ``name`` with edges to ``edges`` (``x`` first; the others get no
    gradient).  Its backward passes the output gradient, ``x`` and the saved
    ``extra`` tensors to ``kernel_grad`` (None: the kernel does not apply);
    a recorded backward (create_graph, forward AD) or a kernel that stands
    aside uses the differentiable ``composite_grad``."""
    if not (_R._state.enabled and x._requires_grad):
        return out
    saved = [_R.save(v) for v in (x,) + tuple(extra)]
    rest_edges = (None,) * (len(edges) - 1)

    def bw(g):
        x_, *more = [sv.unpack() for sv in saved]
        gx = None if _recorded(g, x_) else kernel_grad(g, x_, *more)
        if gx is None:
            gx = composite_grad(g, x_, *more)
        return (gx,) + rest_edges

    _R.attach(name, out, edges, bw)
    return out


def _cpu_ce_kernels():
    """The one-pass cross-entropy kernels on the CPU (devices register theirs
    as the loop ``cross_entropy_kernels``)."""
    return _NNK


def _cross_entropy_kernel(x, target, enum, ignore_index):
    """``cross_entropy`` of (N, C) logits and int64 class indices without
    class weights in one pass per row, recorded as one node whose backward is
    ``(softmax(x) - onehot(target)) * scale`` in one pass (torch's
    log_softmax + nll_loss pair, whose values it matches to float rounding).
    A recorded backward (create_graph) uses the differentiable composite.
    None when the kernel does not apply (a target out of range included: the
    composite raises torch's error)."""
    kernels = _loop("cross_entropy_kernels", x.device, _cpu_ce_kernels)()
    r = kernels.cross_entropy_forward(x, target, ignore_index, enum)
    if r is None:
        return None
    out, lse, count = r

    def kernel_grad(g, x_, t_, lse_):
        g_ = g.to(_pt.float64).contiguous() if enum == 0 else g
        return kernels.cross_entropy_backward(g_, x_, t_, lse_, ignore_index, enum, count)

    def composite_grad(g, x_, t_, lse_):
        # differentiable (double backward)
        kept = t_ != ignore_index
        onehot = _pt.zeros_like(x_).scatter_(1, _pt.where(kept, t_, 0).unsqueeze(1), 1.0)
        if enum == 0:
            s = g
        elif enum == 2:
            s = g.expand(t_.shape)
        else:
            s = (g / count).expand(t_.shape)
        s = _pt.where(kept, s, _pt.zeros_like(s)).unsqueeze(1)
        return (_pt.softmax(x_, 1) - onehot) * s

    return _record_loss_kernel("NllLossBackward0", out, x, (target, lse), kernel_grad,
                               composite_grad, (x,))


# --------------------------------------------------------------------------
# binary cross entropy
# --------------------------------------------------------------------------

def _check_loss_weight(weight, shape):
    if weight is not None:
        bs = _pt.broadcast_shapes(tuple(shape), tuple(weight.shape))
        if list(bs) != list(shape):
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                               f"{list(bs)}")


_BCE_EPS = 9.999999960041972e-13     # PyTorch's EPSILON: the float32 nearest to 1e-12


class _BinaryCrossEntropy(Function):
    """Elementwise BCE with PyTorch's gradients: ``(x - t) / max(x (1 - x), 1e-12)``
    for the input (finite at ``x`` in {0, 1}) and ``-logit(x)`` for the target."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        return ((target - 1) * _pt.clamp_min(_pt.log1p(-input), -100)
                - target * _pt.clamp_min(_pt.log(input), -100))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        gi = gt = None
        if ctx.needs_input_grad[0]:
            gi = grad * (input - target) / _pt.clamp_min((1 - input) * input, _BCE_EPS)
        if ctx.needs_input_grad[1]:
            gt = grad * (_pt.log1p(-input) - _pt.log(input))
        return gi, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy between probabilities ``input`` and ``target``.

    ``-w [t log(x) + (1 - t) log(1 - x)]`` with both logs clamped to
    ``>= -100`` as in PyTorch.
    """
    _check_tensor(input, "binary_cross_entropy", "input")
    _check_tensor(target, "binary_cross_entropy", "target")
    if size_average is not None or reduce is not None:
        enum = _Reduction.legacy_get_enum(size_average, reduce)
    else:
        enum = _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        new_size = _pt.broadcast_shapes(tuple(target.shape), tuple(weight.shape))
        weight = weight.expand(new_size)
        _no_weight_grad(weight, "binary_cross_entropy")
        _check_loss_weight(weight, input.shape)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_tname(target.dtype)} but expected {_tname(input.dtype)}")
    if not input.is_floating_point():
        raise _not_implemented("binary_cross_entropy", input.dtype)
    if weight is None and _has_loop("bce_kernels", input.device.type) and not _fw_levels() \
            and not target.requires_grad:
        out = _bce_kernel(input, target, enum)
        if out is not None:
            return out
    if input.numel() > 0:
        with _pt.no_grad():
            if not builtins.bool(((input >= 0) & (input <= 1)).all()):
                raise RuntimeError("all elements of input should be between 0 and 1")
            if not builtins.bool(((target >= 0) & (target <= 1)).all()):
                raise RuntimeError("all elements of target should be between 0 and 1")

    # torch's node has edges to input and target (the weight: refused above
    # when it requires grad)
    def compute(x, t):
        loss = _BinaryCrossEntropy.apply(x, t)
        return _apply_reduction(loss if weight is None else loss * weight, enum)

    def grad(g, need, x, t):
        # torch's binary_cross_entropy_backward (the weight a constant)
        gi = _bce_input_grad(g, x, t, enum, weight) if need[0] else None
        if need[1]:
            s = _reduced_grad(g, enum, x.numel())
            gt = (s if weight is None else s * weight) * (_pt.log1p(-x) - _pt.log(x))
        else:
            gt = None
        return gi, gt
    return _torch_node("BinaryCrossEntropyBackward0", compute, input, target, grad=grad)


def _bce_input_grad(g, x, t, enum, weight=None):
    """The input's gradient of binary_cross_entropy in torch's order of
    operations: ``g (x - t) / max((1 - x) x, eps)``, times the weight, then
    divided by the element count for 'mean' (differentiable)."""
    gi = g * (x - t) / _pt.clamp_min((1 - x) * x, _BCE_EPS)
    if weight is not None:
        gi = gi * weight
    return gi / x.numel() if enum == 1 else gi


def _cpu_bce_kernels():
    """The one-pass binary_cross_entropy kernels on the CPU (devices register
    theirs as the loop ``bce_kernels``)."""
    return _NNK


def _bce_kernel(x, t, enum):
    """``binary_cross_entropy`` of same-dtype float ``x`` and ``t`` (no weight,
    ``t`` without grad): the range checks and the elementwise loss in one
    kernel call, reduced as the composite reduces it, recorded as one node
    whose backward is torch's ``g (x - t) / max((1 - x) x, eps)`` in one pass
    (the differentiable composite under create_graph).  None when the kernel
    does not apply."""
    kernels = _loop("bce_kernels", x.device, _cpu_bce_kernels)()
    out = kernels.bce_forward(x, t)
    if out is None:
        return None
    if type(out) is int:        # (1: an input element, 2: a target element out of [0, 1])
        raise RuntimeError("all elements of " + ("input" if out == 1 else "target")
                           + " should be between 0 and 1")
    if enum != 0:
        out = out.mean() if enum == 1 else out.sum()

    def kernel_grad(g, x_, t_):
        g_ = g.to(x_.dtype).contiguous() if enum == 0 else g
        return kernels.bce_backward(g_, x_, t_, enum)

    def composite_grad(g, x_, t_):
        return _bce_input_grad(g, x_, t_, enum)

    # (an edge to the target too, as torch's node: None, the target needs no grad)
    return _record_loss_kernel("BinaryCrossEntropyBackward0", out, x, (t,), kernel_grad,
                               composite_grad, (x, t))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross entropy on logits (numerically stable sigmoid + BCE).

    Parameters
    ----------
    pos_weight : Tensor, optional
        Weight of positive examples, broadcast along the class dimension.
    """
    _check_tensor(input, "binary_cross_entropy_with_logits", "input")
    _check_tensor(target, "binary_cross_entropy_with_logits", "target")
    if size_average is not None or reduce is not None:
        enum = _Reduction.legacy_get_enum(size_average, reduce)
    else:
        enum = _Reduction.get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    _no_weight_grad(weight, "binary_cross_entropy_with_logits")
    _no_weight_grad(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")

    # torch computes (1 - target).mul_(input).sub_(logsigmoid(input)): the loss
    # has (1 - target)'s dtype, target's (a float16 target gives a float16
    # loss); a bool target fails the subtraction, an integer one the multiply
    dt = (_pt.ones(0, dtype=target.dtype) - _pt.ones(0, dtype=target.dtype)).dtype
    rt = _pt.result_type(target, input)
    if not _pt.can_cast(rt, dt):
        raise RuntimeError(f"result type {_tname(rt)} can't be cast to the desired output type "
                           f"{_tname(dt)}")

    if weight is None and pos_weight is None and input.dtype is target.dtype \
            and _has_loop("bce_logits_kernels", input.device.type) and not _fw_levels() \
            and not target.requires_grad:
        out = _bce_logits_kernel(input, target, enum)
        if out is not None:
            return out

    # torch's node has edges to input and target (weights that require grad:
    # refused above)
    wp = (weight, pos_weight)

    def compute(x, t):
        w, pw = wp
        ls = _logsigmoid(x)
        if pw is not None:
            ls = (ls * ((pw - 1) * t + 1)).to(ls.dtype)      # (in place in torch)
        loss = ((1 - t) * x).to(dt) - ls
        if w is not None:
            loss = loss.to(dt) * w
        return _apply_reduction(loss.to(dt), enum)

    def grad(g, need, x, t):
        # torch's derivatives (the weights constants): d/dx = sigmoid(x) (1 + (pw - 1) t)
        # - pw t, d/dt = -x - (pw - 1) logsigmoid(x); times weight (/ n for 'mean')
        w, pw = wp
        s = _reduced_grad(g, enum, x.numel())
        if w is not None:
            s = s * w
        gx = gt = None
        if need[0]:
            sig = x.sigmoid()
            gx = (sig - t) if pw is None else sig * ((pw - 1) * t + 1) - pw * t
            gx = (gx * s).to(x.dtype)
        if need[1]:
            gt = -x if pw is None else -x - (pw - 1) * _logsigmoid(x)
            gt = (gt * s).to(t.dtype)
        return gx, gt
    return _torch_node("BinaryCrossEntropyWithLogitsBackward0", compute, input, target,
                       grad=grad)


def _bce_logits_kernel(x, t, enum):
    """``binary_cross_entropy_with_logits`` of same-dtype float ``x`` and
    ``t`` (no weights, ``t`` without grad) by the loop ``bce_logits_kernels``,
    recorded as one node whose backward is ``(sigmoid(x) - t) * g`` in one
    pass; a recorded backward (create_graph) uses the differentiable
    composite.  None when the kernel does not apply (layouts)."""
    kernels = _loop("bce_logits_kernels", x.device, _cpu_ce_kernels)()
    out = kernels.bce_logits_forward(x, t, enum)
    if out is None:
        return None

    def kernel_grad(g, x_, t_):
        g_ = g.to(x_.dtype).contiguous() if enum == 0 else g
        return kernels.bce_logits_backward(g_, x_, t_, enum)

    def composite_grad(g, x_, t_):
        return ((x_.sigmoid() - t_) * _reduced_grad(g, enum, x_.numel())).to(x_.dtype)

    # (an edge to the target too, as torch's node: None, the target needs no grad)
    return _record_loss_kernel("BinaryCrossEntropyWithLogitsBackward0", out, x, (t,),
                               kernel_grad, composite_grad, (x, t))


# --------------------------------------------------------------------------
# distribution losses
# --------------------------------------------------------------------------

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence; ``input`` holds log-probabilities.

    ``reduction='batchmean'`` divides the sum by the batch size (the
    mathematical KL divergence); ``'mean'`` divides by the element count.
    """
    _check_tensor(input, "kl_div", "input")
    _check_tensor(target, "kl_div", "target")
    if size_average is not None or reduce is not None:
        enum = _Reduction.legacy_get_enum(size_average, reduce)
    else:
        if reduction == "mean":
                warn_at_caller(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.")
        enum = 2 if reduction == "batchmean" else _Reduction.get_enum(reduction)
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = _pt.exp(target) * (target - input)
    else:
        loss = _pt.xlogy(target, target) - target * input
    reduced = _apply_reduction(loss, enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log likelihood.

    ``exp(input) - target * input`` if ``log_input`` else
    ``input - target * log(input + eps)``; ``full`` adds the Stirling term.
    """
    reduction = _legacy_or(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _pt.exp(input) - target * input
    else:
        loss = input - target * _pt.log(input + eps)
    if full:
        stirling = target * _pt.log(target) - target + 0.5 * _pt.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, _Reduction.get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``0.5 (log var + (input - target)**2 / var)``.

    ``var`` is a tensor (same shape as ``input``, one dim short, or
    broadcastable with one mismatched dim) or a non-negative float; it is
    clamped to ``>= eps`` without affecting its gradient.
    """
    if isinstance(var, builtins.float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _pt.ones_like(input)
    elif not isinstance(var, _pt.Tensor):
        raise TypeError(f"gaussian_nll_loss(): var must be a Tensor or a float, got "
                        f"{type(var).__name__}")
    elif builtins.bool(_pt.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = _pt.unsqueeze(var, -1)
        elif (input.dim() == var.dim()
              and builtins.sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1):
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _pt.no_grad():
        var.clamp_(min=eps)
    d = input - target
    loss = 0.5 * (_pt.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# --------------------------------------------------------------------------
# margin / embedding losses
# --------------------------------------------------------------------------

def _enum_from(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_enum(size_average, reduce)
    return _Reduction.get_enum(reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)`` reduced."""
    enum = _enum_from(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    # torch's margin is a double: integer inputs give a float loss
    margin = float_param(margin, "margin_ranking_loss", "margin", 4)
    loss = _pt.clamp_min(_R.add_scalar(-target * (input1 - input2), margin), 0)
    return _apply_reduction(loss, enum)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    enum = _enum_from(size_average, reduce, reduction)
    margin_clamp = _pt.clamp_min(margin - input, 0)
    output_margin = _pt.where(target != 1, margin_clamp, 0.0)
    output_self = _pt.where(target != -1, input, 0.0)
    return _apply_reduction(output_margin + output_self, enum)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))`` reduced."""
    enum = _enum_from(size_average, reduce, reduction)
    if isinstance(target, _pt.Tensor) and target.requires_grad and _pt.is_grad_enabled():
        # PyTorch has no derivative formula for the target of this loss
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    # torch's kernel: neg_out(out like input).mul_(target).exp_().log1p_(): the input's dtype
    return _torch_node("SoftMarginLossBackward0",
                       lambda x: _apply_reduction(_pt.log1p(_pt.exp((-x * target).to(x.dtype))),
                                                  enum), input)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """One-versus-all logistic loss averaged over classes (last dim)."""
    reduction = _legacy_or(size_average, reduce, reduction)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` for ``target == 1``, ``max(0, cos - margin)`` for ``-1``."""
    enum = _enum_from(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                               f"sizes {_shape(input1)} and {_shape(input2)}.")
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {_shape(input1)} and {_shape(input2)}.")
    EPS = 1e-12
    prod_sum = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + EPS
    mag2 = (input2 * input2).sum(td) + EPS
    cos = prod_sum / _pt.sqrt(mag1 * mag2)
    pos = 1 - cos
    neg = _pt.clamp_min(cos - margin, 0)
    output = _pt.where(target == 1, pos, 0.0) + _pt.where(target == -1, neg, 0.0)
    return _apply_reduction(output, enum)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with the pairwise ``p``-norm distance."""
    enum = _enum_from(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd and pd == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _pt.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction(_pt.clamp_min(margin + dist_pos - dist_neg, 0), enum)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """Triplet loss with a custom ``distance_function`` (default pairwise L2)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == pd and pd == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _pt.minimum(dist_neg, distance_function(positive, negative))
    loss = _pt.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _pt.sum(loss)
    if reduction == "mean":
        return _pt.mean(loss)
    return loss


def _margin_input_check(input):
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_shape(input)}")
    nframe = 1 if nd <= 1 else input.shape[0]
    dim = 1 if nd == 0 else input.shape[-1]
    return nframe, dim


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss ``sum_{j != y} max(0, margin - x[y] + x[j])**p / C``."""
    enum = _enum_from(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _no_weight_grad(weight, "multi_margin_loss")
    nframe, dim = _margin_input_check(input)
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{_shape(target)}. Input has shape {_shape(input)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {_shape(weight)}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input.dtype)} but found "
                           f"{_tname(weight.dtype)}")
    if target.dtype != _pt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_tname(target.dtype)}")
    _refuse_cpu_half("multi_margin_loss_cpu_kernel", input)
    t = target.reshape(nframe)
    if nframe > 0 and (builtins.int(t.min().item()) < 0 or builtins.int(t.max().item()) >= dim):
        raise RuntimeError("target out of range")
    ti = t.unsqueeze(1)

    def compute(input):
        x = input.reshape(nframe, dim)
        z = margin - x.gather(1, ti) + x
        z = _pt.where(z > 0, z, 0.0)        # torch's kernel: a term counts where z > 0 (no gradient at 0)
        if p == 2:
            z = z * z
        if weight is not None:
            z = z * _pt.take(weight, t).unsqueeze(1)
        z = _pt.where(_pt.arange(dim, device=x.device) == ti, 0.0, z)
        loss = (z.sum(1) / dim).reshape(target.shape)
        return _apply_reduction(loss, enum)
    # torch's node differentiates the input only
    return _torch_node("MultiMarginLossBackward0", compute, input,
                       once="multi_margin_loss_backward")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss; ``target`` lists class indices, ended by ``-1``."""
    enum = _enum_from(size_average, reduce, reduction)
    nd = input.dim()
    nframe, dim = _margin_input_check(input)
    if nd <= 1:
        if not (target.dim() <= 1 and target.numel() == dim):
            raise RuntimeError(f"inconsistent target size: {_shape(target)} for input of size: "
                               f"{_shape(input)}")
    elif not (target.dim() == 2 and target.shape[0] == nframe and target.shape[1] == dim):
        raise RuntimeError(f"inconsistent target size: {_shape(target)} for input of size: "
                           f"{_shape(input)}")
    if target.dtype != _pt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_tname(target.dtype)}")
    _refuse_cpu_half("multilabel_margin_loss_forward_out_frame", input)
    t = target.reshape(nframe, dim)
    if t.numel() > 0 and (builtins.int(t.min().item()) < -1 or builtins.int(t.max().item()) >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    valid = _pt.cumprod((t >= 0).to(_pt.int64), 1) > 0          # targets before the first -1
    safe = _pt.where(valid, t, 0)
    is_target = _pt.zeros((nframe, dim), dtype=_pt.int64, device=input.device).scatter_add(
        1, safe, valid.to(_pt.int64)) > 0
    mask = valid.unsqueeze(2) & (~is_target).unsqueeze(1)

    def compute(input):
        x = input.reshape(nframe, dim)
        xt = x.gather(1, safe)                                        # (N, C): score of j-th target
        z = 1 - xt.unsqueeze(2) + x.unsqueeze(1)                      # (N, target j, class i)
        z = _pt.where(z > 0, z, 0.0)        # torch's kernel: z > 0 counts (no gradient at 0)
        loss = _pt.where(mask, z, 0.0).sum((1, 2)) / dim
        if nd <= 1:
            loss = loss.reshape(())
        return _apply_reduction(loss, enum)
    # torch's node differentiates the input only
    return _torch_node("MultilabelMarginLossBackward0", compute, input,
                       once="multilabel_margin_loss_backward")
