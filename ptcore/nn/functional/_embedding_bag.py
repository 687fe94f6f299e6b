"""``embedding_bag``: sums, means or maxima of bags of embeddings without
materialising the intermediate embeddings per bag.

The index bookkeeping (which bag each index belongs to) is done with NumPy on
the integer inputs; the arithmetic on ``weight`` and ``per_sample_weights`` is
composed of differentiable ptcore ops (``index_select``, ``index_add``, ``max``).
"""
import builtins
import warnings

import numpy as np

import ptcore

__all__ = ["embedding_bag"]


def _embedding_renorm_(weight, idx, max_norm, norm_type):
    """In-place ``embedding_renorm_``: rescale referenced rows whose norm exceeds max_norm."""
    with ptcore.no_grad():
        rows = np.unique(idx)
        if rows.size == 0:
            return
        rows_t = ptcore.from_numpy(rows.astype(np.int64))
        sel = weight.index_select(0, rows_t)
        norms = ptcore.linalg.vector_norm(sel, norm_type, dim=1) \
            if hasattr(ptcore, "linalg") else sel.norm(norm_type, dim=1)
        scale = ptcore.where(norms > max_norm, max_norm / (norms + 1e-7),
                             ptcore.ones_like(norms))
        weight.index_copy_(0, rows_t, sel * scale.unsqueeze(1))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    r"""Sums, means or maxima over bags of embeddings (``torch.nn.functional.embedding_bag``).

    Parameters
    ----------
    input : Tensor
        int64/int32 indices: ``(B, L)`` (fixed-length bags) or 1-D with ``offsets``.
    weight : Tensor
        ``(num_embeddings, embedding_dim)``.
    offsets : Tensor, optional
        1-D start position of each bag in a 1-D ``input``.
    max_norm : float, optional
        Renormalise (in place) the referenced rows of ``weight`` to this norm.
    norm_type : float
        The p of the p-norm for ``max_norm``.
    scale_grad_by_freq, sparse : bool
        Accepted for compatibility (dense gradients are produced).
    mode : {'sum', 'mean', 'max'}
    per_sample_weights : Tensor, optional
        Weights of each index (same shape as ``input``); ``mode='sum'`` only.
    include_last_offset : bool
        ``offsets`` has ``B + 1`` entries, the last one being the end.
    padding_idx : int, optional
        Indices equal to it are left out of the bags.

    Returns
    -------
    Tensor
        ``(B, embedding_dim)``; empty bags give zeros.
    """
    if not isinstance(input, ptcore.Tensor) or not isinstance(weight, ptcore.Tensor):
        raise TypeError("embedding_bag(): input and weight must be Tensors")
    if weight.dtype == ptcore.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)})"
                         f" is not None, then it must have the same shape as the input "
                         f"({tuple(input.shape)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dtype not in (ptcore.int64, ptcore.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.dtype} instead "
                           f"(while checking arguments for embedding_bag)")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offs = np.arange(0, input.numel(), builtins.max(input.size(1), 1), dtype=np.int64)
        offs = offs[:input.size(0)]
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if not isinstance(offsets, ptcore.Tensor):
            offsets = ptcore.as_tensor(offsets, dtype=ptcore.int64)
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        if offsets.dtype not in (ptcore.int64, ptcore.int32):
            raise RuntimeError(f"embedding_bag(): offsets must be int64 or int32, got "
                               f"{offsets.dtype}")
        offs = offsets.detach().to(ptcore.int64).contiguous().numpy().copy()
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type {weight.dtype} does not equal "
            f"{per_sample_weights.dtype} (while checking arguments for embedding_bag)")

    num_embeddings, dim = weight.shape
    if padding_idx is not None:
        if not (-num_embeddings <= padding_idx < num_embeddings):
            raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                               f"-{num_embeddings} through {num_embeddings - 1}, but got "
                               f"{padding_idx}")
        if padding_idx < 0:
            padding_idx += num_embeddings

    idx = input.detach().to(ptcore.int64).contiguous().numpy()
    n = idx.shape[0]
    if n and (idx.min() < 0 or idx.max() >= num_embeddings):
        bad = idx[(idx < 0) | (idx >= num_embeddings)][0]
        raise IndexError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings "
                         f"({num_embeddings}) but found idx to be {bad}")
    if include_last_offset:
        if offs.shape[0] < 1:
            raise RuntimeError("embedding_bag(): include_last_offset=True needs at least one "
                               "offset")
        starts, end = offs[:-1], builtins.int(offs[-1]) if offs.shape[0] else n
    else:
        starts, end = offs, n
    B = starts.shape[0]
    if B and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    if offs.shape[0] and offs[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offs[-1]}")
    if B and np.any(np.diff(offs) < 0):
        raise RuntimeError(f"embedding_bag(): offsets must be non-decreasing, got "
                           f"{offs.tolist()}")
    if end > n:
        end = n

    if max_norm is not None:
        _embedding_renorm_(weight, idx[:end], max_norm, norm_type)

    pos = np.arange(end, dtype=np.int64)
    bag_of = np.searchsorted(starts, pos, side="right") - 1 if B else pos[:0]
    keep = np.ones(end, dtype=bool)
    if padding_idx is not None:
        keep &= idx[:end] != padding_idx
    kept_pos = pos[keep]
    kept_idx = idx[:end][keep]
    kept_bag = bag_of[keep]
    counts = np.bincount(kept_bag, minlength=B)[:B] if B else np.zeros(0, np.int64)

    if mode in ("sum", "mean"):
        rows = weight.index_select(0, ptcore.from_numpy(kept_idx))
        if per_sample_weights is not None:
            psw = per_sample_weights.index_select(0, ptcore.from_numpy(kept_pos))
            rows = rows * psw.unsqueeze(1)
        out = ptcore.zeros(B, dim, dtype=weight.dtype, device=weight.device)
        out = out.index_add(0, ptcore.from_numpy(kept_bag), rows)
        if mode == "mean":
            denom = ptcore.from_numpy(np.maximum(counts, 1).astype(np.int64)).to(weight.dtype)
            out = out / denom.unsqueeze(1)
        return out

    # max: gather into a (B, Lmax, dim) block padded with -inf
    lmax = builtins.int(counts.max()) if B else 0
    if lmax == 0:
        return ptcore.zeros(B, dim, dtype=weight.dtype, device=weight.device)
    bag_start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(kept_bag.shape[0]) - bag_start[kept_bag]
    idx_mat = np.zeros((B, lmax), dtype=np.int64)
    mask = np.zeros((B, lmax), dtype=bool)
    idx_mat[kept_bag, slot] = kept_idx
    mask[kept_bag, slot] = True
    block = weight.index_select(0, ptcore.from_numpy(idx_mat.reshape(-1))).reshape(B, lmax, dim)
    block = block.masked_fill(ptcore.from_numpy(~mask).unsqueeze(2), float("-inf"))
    out = block.max(1).values
    empty = ptcore.from_numpy(counts == 0).unsqueeze(1)
    return ptcore.where(empty, 0.0, out)
