"""Batching rules of the nn.functional ops of MLPs and CNNs: linear's
activations ride on the pointwise/unary rules; here conv (the batch folded
into N, or into groups for per-sample weights), pooling and other ops with an
optional leading N, batch_norm in eval, pad, embedding, and the losses (computed
with ``reduction='none'`` on the folded batch, then reduced per sample).
They register into :data:`ptcore.func._batching_rules.RULES`."""
import builtins

import ptcore
from ptcore._tensor import _TensorBase
from ptcore.func._batching_rules import rule, _fallback
from ptcore.func._batching_rules_ops import _arg, _wd, _physical_others, _aligned

__all__ = []


@rule(("nn.functional", "conv1d"), ("nn.functional", "conv2d"), ("nn.functional", "conv3d"),
      ("ptcore", "conv1d"), ("ptcore", "conv2d"), ("ptcore", "conv3d"))
def _conv(c):
    name = c.opdef.name
    n = int(name[len("conv")])          # convNd: N spatial dims
    x, w = c.args[0], _arg(c, 1, "weight")
    bias = _arg(c, 2, "bias")
    rest = {"stride": _arg(c, 3, "stride", 1), "padding": _arg(c, 4, "padding", 0),
            "dilation": _arg(c, 5, "dilation", 1)}
    groups = int(_arg(c, 6, "groups", 1))
    op = getattr(ptcore.nn.functional, name)
    nd = x.dim()
    B = c.size
    unbatched_form = nd == n + 1
    if not c.is_b(w) and not c.is_b(bias):
        p = c.phys(x)
        if unbatched_form:
            return c.wrap(op(p, w, bias, groups=groups, **rest))
        N = x.shape[0]
        out = op(p.reshape((B * N,) + tuple(x.shape[1:])), w, bias, groups=groups, **rest)
        return c.wrap(out.reshape((B, N) + tuple(out.shape[1:])))
    # batched weight: the samples become groups
    xp = c.unwrap(x)
    if unbatched_form:
        xp = xp.unsqueeze(1)
    N = xp.shape[1]
    xp = xp.movedim(0, 1).reshape((N, B * xp.shape[2]) + tuple(xp.shape[3:]))
    wp = c.unwrap(w)
    wp = wp.reshape((B * wp.shape[1],) + tuple(wp.shape[2:]))
    bp = None
    if bias is not None:
        bp = c.unwrap(bias).reshape(-1)
    out = op(xp, wp, bp, groups=groups * B, **rest)
    out = out.reshape((N, B, out.shape[1] // B) + tuple(out.shape[2:])).movedim(1, 0)
    if unbatched_form:
        out = out.squeeze(1)
    return c.wrap(out)


def _fold_n(c, n=None):
    x = c.args[0]
    name = c.opdef.name
    if not c.is_b(x):
        return _fallback(c)
    args = _physical_others(c)
    if args is None:
        return _fallback(c)
    nd = x.dim()
    p = args[0]
    if n is not None and nd == n + 1:
        return c.wrap(c.op(*args, **c.kwargs))        # the batch is N
    if name in ("fold", "unfold") and nd == (2 if name == "fold" else 3):
        return c.wrap(c.op(*args, **c.kwargs))
    N = x.shape[0]
    args[0] = p.reshape((c.size * N,) + tuple(x.shape[1:]))
    out = c.op(*args, **c.kwargs)

    def unf(t):
        return t.reshape((c.size, N) + tuple(t.shape[1:]))
    if isinstance(out, tuple):
        return c.wrap(type(out)(unf(t) for t in out) if type(out) is tuple else
                      tuple(unf(t) for t in out))
    return c.wrap(unf(out))


def _fold(n, *names):
    """Batch the ops ``names`` (of nn.functional and ptcore), which take an
    optional leading N before (C, *spatial), by folding the batch into N;
    ``n``: their spatial dims (an input of ``n + 1`` dims has no N, and the
    batch becomes it), None where the input is always taken to have N."""
    def fold_rule(c):
        return _fold_n(c, n)
    fold_rule.__name__ = fold_rule.__qualname__ = f"_fold_n{n or ''}"
    fold_rule.spatial_dims = n
    for name in names:
        rule(("nn.functional", name), ("ptcore", name))(fold_rule)


_fold(1, "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
      "max_pool1d_with_indices", "adaptive_max_pool1d_with_indices", "lp_pool1d", "dropout1d")
_fold(2, "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
      "max_pool2d_with_indices", "adaptive_max_pool2d_with_indices", "lp_pool2d",
      "pixel_shuffle", "pixel_unshuffle")
_fold(3, "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
      "max_pool3d_with_indices", "adaptive_max_pool3d_with_indices", "lp_pool3d", "dropout3d")
# (dropout2d takes a 3-d input as (N, C, L), as torch: never batch-as-N)
_fold(None, "dropout2d", "feature_dropout", "feature_alpha_dropout", "channel_shuffle",
      "native_channel_shuffle", "interpolate", "upsample", "upsample_nearest",
      "upsample_bilinear", "group_norm", "local_response_norm", "fold")
rule(("nn.functional", "unfold"))(_fold_n)


_BN_UNBATCHED_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap")


@rule(("nn.functional", "batch_norm"))
def _batch_norm(c):
    b = c.bind()
    if b is None:
        return _fallback(c)
    a = b.arguments
    x = a["input"]
    if a.get("training") and c.is_b(x) and any(
            a.get(k) is not None and not c.is_b(a.get(k)) for k in ("running_mean", "running_var")):
        # torch: the unbatched running statistics cannot take every sample's update
        raise RuntimeError(_BN_UNBATCHED_STATS)
    if a.get("training") or not c.is_b(x) or x.dim() < 2 or \
            any(c.is_b(v) for k, v in a.items() if k != "input"):
        # training statistics are per sample over its own N: once per sample
        return _fallback(c)
    N = x.shape[0]
    a["input"] = c.phys(x).reshape((c.size * N,) + tuple(x.shape[1:]))
    out = c.op(*b.args, **b.kwargs)
    return c.wrap(out.reshape((c.size, N) + tuple(out.shape[1:])))


@rule(("nn.functional", "pad"), "constant_pad_nd")
def _pad(c):
    x = c.args[0]
    mode = _arg(c, 2, "mode", "constant")
    if c.opdef.name == "constant_pad_nd" or mode == "constant":
        args = _physical_others(c)
        if args is None:
            return _fallback(c)
        return c.wrap(c.op(*args, **c.kwargs))
    pad = _arg(c, 1, "pad")
    n = len(pad) // 2
    if x.dim() == n + 1:
        args = _physical_others(c)
        return c.wrap(c.op(*args, **c.kwargs))
    return _fold_n(c)


@rule(("nn.functional", "embedding"))
def _embedding(c):
    idx, w = c.args[0], _arg(c, 1, "weight")
    if c.is_b(w):
        return _fallback(c)
    return c.wrap(c.op(c.phys(idx), *c.args[1:], **c.kwargs))


@rule(("nn.functional", "one_hot"))
def _one_hot(c):
    if _arg(c, 1, "num_classes", -1) == -1:
        return _fallback(c)
    return c.wrap(c.op(c.phys(c.args[0]), *c.args[1:], **c.kwargs))


def _reduction_of(c):
    b = c.bind()
    if b is None:
        return None, None
    a = b.arguments
    if a.get("size_average") is not None or a.get("reduce") is not None:
        return None, None
    return b, a.get("reduction", "mean")


def _reduce_logical(loss, reduction, x=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "batchmean":
        return loss.sum() / (x.shape[0] if x.dim() > 0 else 1)
    return loss.mean()


@rule("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
      "binary_cross_entropy_with_logits", "soft_margin_loss", "kl_div", "poisson_nll_loss",
      "margin_ranking_loss", "hinge_embedding_loss")
def _elementwise_loss(c):
    b, red = _reduction_of(c)
    if b is None:
        return _fallback(c)
    a = b.arguments
    a["reduction"] = "none"
    names = [k for k, v in a.items() if isinstance(v, _TensorBase)]
    ts = [a[k] for k in names]
    r = builtins.max(t.dim() for t in ts)
    shape = ptcore.broadcast_shapes(*[tuple(t.shape) for t in ts[:2]])
    for k, t in zip(names, ts):
        p = c.unwrap(t)
        p = p.reshape((c.size,) + (1,) * (r - t.dim()) + tuple(t.shape))
        if k in names[:2]:
            p = p.expand((c.size,) + tuple(shape))
        a[k] = p
    loss = c.wrap(c.op(*b.args, **b.kwargs))
    return _reduce_logical(loss, red, ts[0])


@rule("cross_entropy", "nll_loss")
def _class_loss(c):
    b, red = _reduction_of(c)
    if b is None:
        return _fallback(c)
    a = b.arguments
    x, t = a["input"], a["target"]
    w = a.get("weight")
    if c.is_b(w):
        return _fallback(c)
    ls = a.get("label_smoothing", 0.0)
    prob = x.dim() == t.dim() and t.dtype.is_floating_point
    if ls and w is not None and not prob:
        return _fallback(c)
    nd = x.dim()
    xp, tp = c.unwrap(x), c.unwrap(t)
    a["reduction"] = "none"
    if nd >= 2:
        N = x.shape[0]
        xp = xp.reshape((c.size * N,) + tuple(x.shape[1:]))
        tp = tp.reshape((c.size * N,) + tuple(t.shape[1:]))
    a["input"], a["target"] = xp, tp
    loss = c.op(*b.args, **b.kwargs)
    if nd >= 2:
        loss = loss.reshape((c.size, N) + tuple(loss.shape[1:]))
    loss = c.wrap(loss)
    if red == "none":
        return loss
    if red == "sum":
        return loss.sum()
    if prob:
        return loss.sum() / (loss.numel() if loss.dim() else 1)
    ii = a.get("ignore_index", -100)
    keep = (t != ii)
    if w is not None:
        tw = w[t.clamp(0, w.shape[0] - 1)] * keep
        denom = tw.sum()
    else:
        denom = keep.sum().to(loss.dtype)
    return loss.sum() / denom


@rule(("nn.functional", "cosine_similarity"), ("ptcore", "cosine_similarity"))
def _cosine_similarity(c):
    b = c.bind()
    if b is None:
        return _fallback(c)
    a = b.arguments
    (p1, p2), r = _aligned(c, [a["x1"], a["x2"]])
    return c.wrap(c.op(p1, p2, _wd(a["dim"], r), a["eps"]))


@rule(("nn.functional", "pairwise_distance"), ("ptcore", "pairwise_distance"))
def _pairwise_distance(c):
    b = c.bind()
    if b is None:
        return _fallback(c)
    a = b.arguments
    x1, x2 = a["x1"], a["x2"]
    if builtins.max(x1.dim(), x2.dim()) == 0:
        return _fallback(c)
    (p1, p2), r = _aligned(c, [x1, x2])
    if r == 1:
        # a pair of vectors: pairwise_distance of 1-d inputs keeps no batch dim
        p1 = p1 if c.is_b(x1) else p1.unsqueeze(0)
        p2 = p2 if c.is_b(x2) else p2.unsqueeze(0)
    return c.wrap(c.op(p1, p2, a["p"], a["eps"], a["keepdim"]))
