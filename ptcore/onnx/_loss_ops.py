"""ONNX converters of the loss functionals, written out as the formulas torch
computes: ``cross_entropy`` (class indices with ``weight``, ``ignore_index``,
``label_smoothing``; or class probabilities), ``nll_loss``,
``binary_cross_entropy`` (logs clamped at -100), ``binary_cross_entropy_with_logits``
(``weight``, ``pos_weight``; a stable softplus), ``mse_loss``, ``l1_loss``,
``smooth_l1_loss`` and ``huber_loss`` (with their ``weight``), each with
``reduction`` ``'none'`` / ``'sum'`` / ``'mean'`` (the legacy ``size_average`` /
``reduce`` read as torch reads them)."""
import numpy as np

import ptcore.nn.functional as F
import ptcore.onnx._opsets as _opsets
import ptcore.onnx._proto as P
from ptcore.onnx._more_ops import _shape, _reduce
from ptcore.onnx._registration import register
from ptcore.onnx._norm_ops import _bound
from ptcore.onnx._shapes import ints as _ints, init as _init

__all__ = []


def _reduction(a):
    """The reduction of bound arguments ``a`` (legacy ``size_average`` /
    ``reduce`` win, as in torch)."""
    size_average, reduce = a.get("size_average"), a.get("reduce")
    if size_average is None and reduce is None:
        red = a["reduction"]
        if red not in ("none", "mean", "sum"):
            raise ValueError(f"{red} is not a valid value for reduction")
        return red
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


def _total(b, op, v):
    """ReduceSum / ReduceMean of every element (a 0-d result)."""
    return b.add(op, [v], keepdims=0)


def _const(b, value, dt):
    return _init(b, np.array(value), dt)


# ---- elementwise losses --------------------------------------------------------

def _elementwise(fn_name, loss, weighted_mean):
    """The converter of ``F.<fn_name>(input, target, ...)``: ``loss(b, d, a, dt)``
    gives the elementwise loss from the bound arguments; a ``weight`` multiplies it;
    ``weighted_mean``: 'mean' divides by the sum of the weights (torch's mse and l1),
    else it is the mean of the weighted loss."""
    def convert(b, node):
        a = _bound(node, getattr(F, fn_name))
        red = _reduction(a)
        dt = b.dtype_of(node.outputs)
        x, t = b.as_dtype(a["input"], dt), b.as_dtype(a["target"], dt)
        y = loss(b, x, t, a, dt)
        w = a.get("weight")
        if w is not None:
            w = b.as_dtype(w, dt)
            y = b.add("Mul", [y, w])
        if red == "none":
            return y
        if red == "sum":
            return _total(b, "ReduceSum", y)
        if w is not None and weighted_mean:
            return b.add("Div", [_total(b, "ReduceSum", y), _total(b, "ReduceSum", w)])
        return _total(b, "ReduceMean", y)
    return convert


def _abs_diff(b, x, t):
    return b.add("Abs", [b.add("Sub", [x, t])])


def _squared(b, x, t, a, dt):
    d = b.add("Sub", [x, t])
    return b.add("Mul", [d, d])


def _absolute(b, x, t, a, dt):
    return _abs_diff(b, x, t)


def _quadratic_below(b, d, bound, small_scale, large, dt):
    """``small_scale * d * d`` where ``d < bound``, else ``large``."""
    sq = b.add("Mul", [b.add("Mul", [d, d]), _const(b, small_scale, dt)])
    return b.add("Where", [b.add("Less", [d, _const(b, bound, dt)]), sq, large])


def _smooth_l1(b, x, t, a, dt):
    beta = float(a["beta"])
    d = _abs_diff(b, x, t)
    if beta == 0.0:
        return d
    return _quadratic_below(b, d, beta, 0.5 / beta, b.add("Sub", [d, _const(b, 0.5 * beta, dt)]),
                            dt)


def _huber(b, x, t, a, dt):
    delta = float(a["delta"])
    d = _abs_diff(b, x, t)
    linear = b.add("Mul", [b.add("Sub", [d, _const(b, 0.5 * delta, dt)]), _const(b, delta, dt)])
    return _quadratic_below(b, d, delta, 0.5, linear, dt)


def _bce(b, x, t, a, dt):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    floor = _const(b, -100.0, dt)
    one = _const(b, 1.0, dt)
    log_x = b.add("Max", [b.add("Log", [x]), floor])
    log_1mx = b.add("Max", [b.add("Log", [b.add("Sub", [one, x])]), floor])
    s = b.add("Add", [b.add("Mul", [t, log_x]),
                      b.add("Mul", [b.add("Sub", [one, t]), log_1mx])])
    return b.add("Neg", [s])


def _bce_with_logits(b, x, t, a, dt):
    """(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), softplus(-x) written
    stably as max(-x, 0) + log(1 + exp(-|x|))."""
    one = _const(b, 1.0, dt)
    softplus = b.add("Add", [b.add("Relu", [b.add("Neg", [x])]),
                             b.add("Log", [b.add("Add", [one, b.add("Exp", [
                                 b.add("Neg", [b.add("Abs", [x])])])])])])
    pw = a.get("pos_weight")
    if pw is not None:
        lw = b.add("Add", [one, b.add("Mul", [b.add("Sub", [b.as_dtype(pw, dt), one]), t])])
        softplus = b.add("Mul", [lw, softplus])
    return b.add("Add", [b.add("Mul", [b.add("Sub", [one, t]), x]), softplus])


# ---- losses over classes ---------------------------------------------------------

def _class_loss(fn_name, log_softmax):
    """``cross_entropy`` (``log_softmax``: the log-probabilities computed
    first) and ``nll_loss``: class dim 1 (0 for an unbatched input)."""
    def convert(b, node):
        a = _bound(node, getattr(F, fn_name))
        red = _reduction(a)
        x, t = a["input"], a["target"]
        xs = _shape(b, x)
        rank = len(xs)
        cdim = 1 if rank >= 2 else 0
        dt = b.dtype_of(x)
        logp = _opsets.softmax(b, "LogSoftmax", b.name(x), cdim, rank) if log_softmax \
            else b.name(x)
        eps = float(a.get("label_smoothing", 0.0))
        w = a["weight"]
        # the class weights along the class dim of the input
        w_c = None if w is None else b.add("Reshape", [b.as_dtype(w, dt), _ints(
            b, [xs[cdim]] + [1] * (rank - cdim - 1))])
        if b.dtype_of(t) in ("float32", "float64", "float16", "bfloat16"):
            return _probability_targets(b, logp, b.as_dtype(t, dt), w_c, eps, xs[cdim], cdim,
                                        red, dt)
        return _index_targets(b, logp, t, w, w_c, int(a["ignore_index"]), eps, xs[cdim],
                              cdim, red, dt)
    return convert


def _class_sum(b, v, w_c, cdim):
    """-sum over the class dim of ``v`` (times the class weights)."""
    if w_c is not None:
        v = b.add("Mul", [v, w_c])
    return b.add("Neg", [_reduce(b, "ReduceSum", v, [cdim], 0)])


def _probability_targets(b, logp, t, w_c, eps, n_classes, cdim, red, dt):
    if eps > 0:
        t = b.add("Add", [b.add("Mul", [t, _const(b, 1.0 - eps, dt)]),
                          _const(b, eps / n_classes, dt)])
    loss = _class_sum(b, b.add("Mul", [logp, t]), w_c, cdim)
    if red == "none":
        return loss
    # mean: over the elements of the loss (the input's numel / classes), weights or not
    return _total(b, "ReduceSum" if red == "sum" else "ReduceMean", loss)


def _index_targets(b, logp, t, w, w_c, ignore_index, eps, n_classes, cdim, red, dt):
    _opsets.needs(b, "GatherElements", " (the target classes' log-probabilities)")
    tn = b.as_dtype(t, "int64")
    keep = b.add("Not", [b.add("Equal", [tn, _const(b, ignore_index, "int64")])])
    # ignored targets (-100 by default) read class 0, then weigh nothing
    safe = b.add("Where", [keep, tn, _const(b, 0, "int64")])
    picked = b.add("GatherElements", [logp, b.add("Unsqueeze", [safe, _ints(b, [cdim])])],
                   axis=cdim)
    picked = b.add("Squeeze", [picked, _ints(b, [cdim])])
    counted = b.add("Cast", [keep], to=P.DTYPES[dt])
    weight = counted if w is None else \
        b.add("Mul", [b.add("Gather", [b.as_dtype(w, dt), safe], axis=0), counted])
    loss = b.add("Neg", [b.add("Mul", [picked, weight])])
    if eps > 0:
        smooth = b.add("Mul", [_class_sum(b, logp, w_c, cdim), counted])
        loss = b.add("Add", [b.add("Mul", [loss, _const(b, 1.0 - eps, dt)]),
                             b.add("Mul", [smooth, _const(b, eps / n_classes, dt)])])
    if red == "none":
        return loss
    total = _total(b, "ReduceSum", loss)
    if red == "sum":
        return total
    # mean: divided by the weights of the targets not ignored (their count without weight)
    return b.add("Div", [total, _total(b, "ReduceSum", weight)])


def _loss(name, make, *how):
    register(make(name, *how), "nn.functional." + name)


_loss("cross_entropy", _class_loss, True)
_loss("nll_loss", _class_loss, False)
_loss("mse_loss", _elementwise, _squared, True)
_loss("l1_loss", _elementwise, _absolute, True)
_loss("smooth_l1_loss", _elementwise, _smooth_l1, False)
_loss("huber_loss", _elementwise, _huber, False)
_loss("binary_cross_entropy", _elementwise, _bce, False)
_loss("binary_cross_entropy_with_logits", _elementwise, _bce_with_logits, False)
