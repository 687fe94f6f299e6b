"""``linear_cross_entropy`` (the cross entropy of linearly projected inputs, as
``torch.nn.functional.linear_cross_entropy``) and ``grouped_mm`` (per-group matrix products
over jagged groups, as ``torch.nn.functional.grouped_mm``)."""
import math

import ptcore
from ptcore._tensor import _TensorBase
from ptcore.nn.functional._linear import linear
from ptcore.nn.functional._loss import cross_entropy

__all__ = ["linear_cross_entropy", "grouped_mm"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``.

    ``linear_weight`` is ``(C, in)`` or ``(C, d_1, ..., d_K, in)`` for a K-dimensional loss
    (``linear_bias`` then ``(C, d_1, ..., d_K)``); ``input`` is ``(in,)`` or ``(N, in)``.
    ``ignore_index=None`` means -100.  ``options`` (torch's chunking options) only tune
    memory use in torch; ptcore computes the same loss without chunking.
    """
    for name, t in (("input", input), ("linear_weight", linear_weight), ("target", target)):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"linear_cross_entropy(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _group_bounds(offs, total, what):
    if offs is None:
        raise RuntimeError(f"grouped_mm: offs is required when {what} is 2-D")
    if offs.dim() != 1:
        raise RuntimeError(f"grouped_mm: offs must be 1-D, got {offs.dim()}-D")
    if offs.dtype is not ptcore.int32:
        raise RuntimeError(f"grouped_mm: offs must be int32, got {offs.dtype}")
    ends = [int(v) for v in offs.tolist()]
    starts = [0] + ends[:-1]
    if any(e < s for s, e in zip(starts, ends)) or (ends and ends[-1] > total):
        raise RuntimeError(f"grouped_mm: offs must be increasing and at most {total}, got "
                           f"{ends}")
    return list(zip(starts, ends))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Per-group products (``torch.nn.functional.grouped_mm``).

    * ``a (G, M, K)``, ``b (G, K, N)``: ``out[g] = a[g] @ b[g]`` (``offs`` None);
    * ``a (M, K)``, ``b (G, K, N)``: the rows of ``a`` split by ``offs``;
      ``out[s:e] = a[s:e] @ b[g]``, ``(M, N)``;
    * ``a (G, M, K)``, ``b (K, N)``: the columns of ``b`` split; ``out[:, s:e] = a[g] @ b[:, s:e]``;
    * ``a (M, K)``, ``b (K, N)``: ``K`` split; ``out[g] = a[:, s:e] @ b[s:e]``, ``(G, M, N)``.

    Rows/columns beyond ``offs[-1]`` are zero.  ``bias`` is added to each group's product;
    the result has ``out_dtype`` (default: the inputs').  Differentiable.
    """
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if not isinstance(t, _TensorBase) or t.dim() not in (2, 3):
            raise RuntimeError(f"grouped_mm: {name} must be a 2-D or 3-D tensor")
    if mat_a.dtype is not mat_b.dtype:
        raise RuntimeError(f"grouped_mm: mat_a and mat_b must have the same dtype, got "
                           f"{mat_a.dtype} and {mat_b.dtype}")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError(f"grouped_mm: contraction dimensions differ: mat_a "
                           f"{list(mat_a.shape)}, mat_b {list(mat_b.shape)}")
    a3, b3 = mat_a.dim() == 3, mat_b.dim() == 3
    if a3 and b3:
        if offs is not None:
            raise RuntimeError("grouped_mm: offs must be None when both operands are 3-D")
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError(f"grouped_mm: group counts differ: {mat_a.shape[0]} and "
                               f"{mat_b.shape[0]}")
        pieces = [ptcore.matmul(mat_a, mat_b)]
        out = pieces[0] if bias is None else pieces[0] + bias
    else:
        groups = mat_b.shape[0] if b3 else (mat_a.shape[0] if a3 else None)
        if not a3 and b3:
            bounds = _group_bounds(offs, mat_a.shape[0], "mat_a")
            parts = [ptcore.matmul(mat_a[s:e], mat_b[g]) for g, (s, e) in enumerate(bounds)]
            tail = mat_a.shape[0] - (bounds[-1][1] if bounds else 0)
            cat_dim = 0
        elif a3 and not b3:
            bounds = _group_bounds(offs, mat_b.shape[1], "mat_b")
            parts = [ptcore.matmul(mat_a[g], mat_b[:, s:e]) for g, (s, e) in enumerate(bounds)]
            tail = mat_b.shape[1] - (bounds[-1][1] if bounds else 0)
            cat_dim = 1
        else:
            bounds = _group_bounds(offs, mat_a.shape[1], "mat_a")
            parts = [ptcore.matmul(mat_a[:, s:e], mat_b[s:e]) for s, e in bounds]
            tail, cat_dim = 0, None
        if groups is not None and len(bounds) != groups:
            raise RuntimeError(f"grouped_mm: offs has {len(bounds)} groups, the 3-D operand "
                               f"{groups}")
        if bias is not None:
            parts = [p + (bias[g] if bias.dim() > 1 else bias) for g, p in enumerate(parts)]
        if cat_dim is None:
            out = ptcore.stack(parts)
        else:
            if tail:
                shape = list(parts[0].shape) if parts else [mat_a.shape[-2], mat_b.shape[-1]]
                shape[cat_dim] = tail
                parts.append(ptcore.zeros(shape, dtype=mat_a.dtype, device=mat_a.device))
            out = ptcore.cat(parts, cat_dim)
    if out_dtype is not None and out.dtype is not out_dtype:
        out = out.to(out_dtype)
    return out

