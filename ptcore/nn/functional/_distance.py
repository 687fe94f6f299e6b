"""Distances and index utilities of ``ptcore.nn.functional``: ``one_hot``,
``cosine_similarity``, ``pairwise_distance``, ``pdist`` (PyTorch semantics)."""
import builtins

import ptcore as _pt
from ptcore._dispatch.device import refuse_cpu_half as _refuse_cpu_half
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore._ops.kernels._reduce import cdist2_small as _cdist2_small
from ptcore._ops.kernels._index import one_hot_into as _one_hot_into
from ptcore._ops.kernels._sort import minmax as _minmax
from ptcore._tensor import _TensorBase
from ptcore.autograd import Function
from ptcore.autograd._record import add_scalar as _add_scalar, name_grad_fn as _name_grad_fn
from ptcore.autograd._formulas_shape import pdist_node as _pdist_node, cdist_node as _cdist_node
from ptcore._scalar_args import float_param

__all__ = ["one_hot", "cosine_similarity", "pairwise_distance", "pdist"]


def one_hot(input, num_classes=-1):
    """One-hot encode int64 class indices; result is int64 with a new last dim.

    Parameters
    ----------
    input : Tensor
        int64 tensor of class values, any shape.
    num_classes : int
        Number of classes; ``-1`` infers ``max + 1``.
    """
    if not isinstance(input, _pt.Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype != _pt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if isinstance(num_classes, (_pt.Tensor, builtins.float, builtins.bool)) or not hasattr(
            num_classes, "__index__") or type(num_classes).__name__ == "ndarray":
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not "
                        f"{type(num_classes).__name__}")
    num_classes = num_classes.__index__()
    shape = list(input.shape)
    if input.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _pt.empty(shape + [num_classes], dtype=_pt.int64, device=input.device)
    if isinstance(input, _TensorBase) and not _layers_on[0] and input.is_contiguous():
        # a contiguous tensor, no dispatch layer on: the device's loop (the CPU's:
        # the bounds in one vectorised pass, the ones written by one kernel call)
        loop = _loop_for("one_hot", input.device, _one_hot_cpu)
        if loop is not None:
            return loop(input, shape, num_classes)
    if builtins.int(input.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    max_val = builtins.int(input.max().item())
    num_classes = _one_hot_classes(num_classes, max_val)
    ret = _pt.zeros(shape + [num_classes], dtype=_pt.int64, device=input.device)
    ret.scatter_(-1, input.unsqueeze(-1), 1)
    return ret


def _one_hot_classes(num_classes, max_val):
    if num_classes == -1:
        return max_val + 1
    if num_classes <= max_val:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return num_classes


def _one_hot_cpu(input, shape, num_classes):
    """``one_hot``'s CPU loop for a contiguous int64 ``input``."""
    min_val, max_val = _minmax(input.reshape(-1))
    if min_val < 0:
        raise RuntimeError("Class values must be non-negative.")
    num_classes = _one_hot_classes(num_classes, max_val)
    ret = _pt.zeros(shape + [num_classes], dtype=_pt.int64)
    if not _one_hot_into(ret, input):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return ret


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity along ``dim`` (PyTorch 2.x formula).

    ``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps), dim)``; inputs
    broadcast.  The clamp does not affect gradients (as in PyTorch).
    """
    if isinstance(dim, builtins.bool) or not isinstance(dim, builtins.int) and not hasattr(
            dim, "__index__"):
        raise TypeError(f"cosine_similarity(): argument 'dim' (position 3) must be int, not "
                        f"{type(dim).__name__}")
    eps = float_param(eps, "cosine_similarity", "eps", 4)
    common = _pt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common._legacy}")
    if not x1.is_floating_point() and not x1.is_complex():
        x1 = x1.to(common)
    if not x2.is_floating_point() and not x2.is_complex():
        x2 = x2.to(common)
    if x1.shape != x2.shape:
        x1, x2 = _pt.broadcast_tensors(x1, x2)
    n1 = _pt.linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    n2 = _pt.linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with _pt.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension (inputs broadcast)."""
    if isinstance(eps, _pt.Tensor):
        eps = float_param(eps, "pairwise_distance", "eps")     # (a 0-d one without grad)
    nd = builtins.max(x1.dim(), x2.dim())
    return _name_grad_fn(_pt.linalg.vector_norm(_add_scalar(x1 - x2, eps), p, dim=nd - 1,
                                                keepdim=keepdim), "NormBackward1", x1, x2)


def pdist(input, p=2):
    """Condensed ``p``-norm distances between the rows of a 2-D ``input``.

    Returns the upper triangle (``i < j``) of the distance matrix in
    row-major order, shape ``(N * (N - 1) / 2,)``.
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:                          # (nan too)
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = _pt.triu_indices(n, n, 1, device=input.device)
    with _pt.no_grad():
        # (forward AD still sees the ops: no_grad leaves tangents alone)
        r = _pt.linalg.vector_norm(input[i] - input[j], p, dim=1)
    if _pt.is_grad_enabled() and input.requires_grad:
        # torch's own backward kernel (p = inf: every tied coordinate gets
        # the whole gradient; vector_norm's splits it)
        _pdist_node(r, input, p, i, j)
    return r


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": True,
                "donot_use_mm_for_euclid_dist": False}
# the modes that take the direct form for at most 25 rows a side
_DIRECT_MODES = frozenset(("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Batched ``p``-norm distances between the rows of ``x1`` ``(B, P, M)``
    and ``x2`` ``(B, R, M)``; result ``(B, P, R)`` (``ptcore.cdist``).

    For ``p == 2`` the matrix-product form ``||a||^2 - 2 a.b + ||b||^2`` is
    used when ``compute_mode`` asks for it (by default when ``P > 25`` or
    ``R > 25``), as in PyTorch.
    """
    if (type(p) is float or type(p) is int) and p == 2 and compute_mode in _DIRECT_MODES \
            and isinstance(x1, _TensorBase) and isinstance(x2, _TensorBase) \
            and not (x1._requires_grad or x2._requires_grad) and not _layers_on[0]:
        # two small contiguous float CPU matrices, nothing to record, no layer
        # on: the differences and their 2-norms in one kernel call (the values
        # of the ops below)
        r = _cdist2_small(x1, x2)
        if r is not None:
            return r
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype._legacy}")
    if not x2.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: {x2.dtype._legacy}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype._legacy} but found {x2.dtype._legacy}")
    if not p >= 0:                          # (nan too)
        raise RuntimeError("cdist only supports non-negative p values")
    _refuse_cpu_half("cdist", x1)
    b1, b2 = list(x1.shape[:-2]), list(x2.shape[:-2])
    nb = builtins.max(len(b1), len(b2))
    b1, b2 = [1] * (nb - len(b1)) + b1, [1] * (nb - len(b2)) + b2
    batch = []
    for i, (u, v) in enumerate(zip(b1, b2)):
        if u != v and u != 1 and v != 1:
            raise RuntimeError(f"The size of tensor a ({u}) must match the size of tensor b ({v}) "
                               f"at non-singleton dimension {i}")
        batch.append(v if u == 1 else u)
    P, R, M = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    a = x1.expand(tuple(batch) + (P, M))
    b = x2.expand(tuple(batch) + (R, M))
    use_mm = _CDIST_MODES[compute_mode]
    if use_mm is None:
        use_mm = P > 25 or R > 25
    if p == 2 and use_mm and P > 0 and R > 0 and M > 0:
        return _EuclideanDist.apply(a, b)
    if M == 0:
        # no coordinates: every distance is 0 (any p; the inf norm of nothing included)
        return _pt.zeros(tuple(batch) + (P, R), dtype=x1.dtype, device=x1.device) \
            + (a.sum() + b.sum()) * 0
    grad = x1._requires_grad or x2._requires_grad
    if grad:
        with _pt.no_grad():
            # (forward AD still sees the ops: no_grad leaves tangents alone)
            out = _pt.linalg.vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, dim=-1)
    else:
        # (nothing to record: the same ops without entering no_grad)
        out = _pt.linalg.vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, dim=-1)
    if grad and _pt.is_grad_enabled():
        # torch's _cdist_backward kernel (p = inf: every tied coordinate takes
        # the whole gradient; p < 1: 0 from a zero difference; p = 0: zeros);
        # the gradient is not differentiable again, as torch's
        _cdist_node(out, x1, x2, a, b, p)
    return out


class _EuclideanDist(Function):
    """torch's ``_euclidean_dist``: one product of ``[-2 a, |a|^2, 1]`` and
    ``[b, 1, |b|^2]`` (the squared distances), clamped at 0 and square-rooted
    in place; its backward is torch's ``_euclidean_dist_backward`` (written
    with ops: differentiable again), 0 where the distance is 0 (coincident
    rows, e.g. ``cdist(x, x)``), not the nan of sqrt'(0) * 0."""

    @staticmethod
    def forward(ctx, a, b):
        an = (a * a).sum(-1, keepdim=True)
        bn = (b * b).sum(-1, keepdim=True)
        a_ = _pt.cat([a * -2, an, _pt.ones_like(an)], -1)
        b_ = _pt.cat([b, _pt.ones_like(bn), bn], -1)
        res = _pt.matmul(a_, b_.transpose(-1, -2))
        res.clamp_min_(0).sqrt_()
        ctx.save_for_backward(a, b, res)
        return res

    @staticmethod
    def backward(ctx, grad):
        a, b, res = ctx.saved_tensors
        ratio = (grad / res).masked_fill(res == 0, 0)
        ga = a * ratio.sum(-1, keepdim=True) - ratio.matmul(b)
        gb = b * ratio.sum(-2).unsqueeze(-1) - ratio.transpose(-1, -2).matmul(a)
        return ga, gb
