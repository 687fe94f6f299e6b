"""``embedding_bag``: sums, means or maxima of bags of embeddings without
materialising the intermediate embeddings per bag.

The index bookkeeping (which bag each index belongs to) and the arithmetic on
``weight`` and ``per_sample_weights`` are composed of ptcore ops on the
inputs' device (``searchsorted``, ``bincount``; differentiable ``index_select``,
``index_add``, ``max``); only the scalars the argument checks and the output
size need are read back.
"""
import builtins
import warnings

import ptcore
from ptcore.autograd._record import name_grad_fn as _name_grad_fn, one_node as _one_node
from ptcore.nn.functional._sparse import _Embedding
from ptcore.autograd import _record as _R
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._dispatch import forward_ad as _fwl
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore._dispatch.tracing import active_tracer as _active_tracer
from ptcore._ops.kernels import _embedding_bag as _K

__all__ = ["embedding_bag"]


def _embedding_renorm_(weight, idx, max_norm, norm_type):
    """In-place ``embedding_renorm_``: rescale referenced rows (``idx``, int64
    on ``weight``'s device) whose norm exceeds max_norm."""
    with ptcore.no_grad():
        rows_t = ptcore.unique(idx)
        if rows_t.numel() == 0:
            return
        sel = weight.index_select(0, rows_t)
        norms = ptcore.linalg.vector_norm(sel, norm_type, dim=1) \
            if hasattr(ptcore, "linalg") else sel.norm(norm_type, dim=1)
        scale = ptcore.where(norms > max_norm, max_norm / (norms + 1e-7),
                             ptcore.ones_like(norms))
        weight.index_copy_(0, rows_t, sel * scale.unsqueeze(1))


_KERNEL_DTYPES = (ptcore.float32, ptcore.float64)
_MODES = {"sum": 0, "mean": 1, "max": 2}


def _check_indices(idx, num_embeddings):
    """torch's RuntimeError for the first index of ``idx`` outside the table."""
    if idx.shape[0]:
        lo, hi = ptcore.aminmax(idx)
        if lo.item() < 0 or hi.item() >= num_embeddings:
            bad = idx[(idx < 0) | (idx >= num_embeddings)][0].item()
            raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings "
                               f"({num_embeddings}) but found idx to be {bad}")


def _bookkeeping(idx, starts, end, B, padding_idx):
    """``(kept_pos, kept_idx, kept_bag, counts)``: the positions below ``end``
    whose index is not ``padding_idx``, their indices and bags, and each
    bag's count of them."""
    dev = idx.device
    pos = ptcore.arange(end, dtype=ptcore.int64, device=dev)
    bag_of = ptcore.searchsorted(starts, pos, right=True) - 1 if B else pos[:0]
    kept_idx = idx[:end]
    kept_pos, kept_bag = pos, bag_of
    if padding_idx is not None:
        keep = kept_idx != padding_idx
        kept_pos, kept_idx, kept_bag = pos[keep], kept_idx[keep], bag_of[keep]
    counts = ptcore.bincount(kept_bag, minlength=B)[:B] if B else \
        ptcore.zeros(0, dtype=ptcore.int64, device=dev)
    return kept_pos, kept_idx, kept_bag, counts


def _sum_mean_backward(g, w, psw, mode, books):
    """torch's one node (edges: weight, per_sample_weights) of a sum or mean:
    each bag's gradient back to its rows, in differentiable ops."""
    kept_pos, kept_idx, kept_bag, counts = books
    if mode == "mean":
        g = g / ptcore.clamp(counts, min=1).to(g.dtype).unsqueeze(1)
    gb = g.index_select(0, kept_bag)
    gw = gpsw = None
    if w.requires_grad:
        gr = gb if psw is None else gb * psw.index_select(0, kept_pos).unsqueeze(1)
        gw = ptcore.zeros(tuple(w.shape), dtype=g.dtype, device=g.device).index_add(
            0, kept_idx, gr)
    if psw is not None and psw.requires_grad:
        d = (gb * w.index_select(0, kept_idx)).sum(1)
        gpsw = ptcore.zeros(tuple(psw.shape), dtype=d.dtype, device=d.device).index_add(
            0, kept_pos, d)
    return gw, gpsw


def _kernel_bags(weight, idx, starts, step, B, end, mode, psw, padding_idx):
    """The bags by one kernel call (``_K.forward``: float32/float64 CPU
    weight) recorded as torch's one EmbeddingBagBackward0 node; its backward
    is one kernel call too unless it is itself recorded (``create_graph``:
    the composite's differentiable formulas)."""
    m = _MODES[mode]
    pad = -1 if padding_idx is None else padding_idx
    if psw is not None:
        psw_c = psw.detach().contiguous()
    else:
        psw_c = None
    res = None

    def compute():
        nonlocal res
        res = _K.forward(weight.detach(), idx, starts, step, B, end, m, psw_c, pad)
        return res[0]

    def books():
        st = starts if starts is not None else ptcore.arange(
            0, B * step, step, dtype=ptcore.int64, device=idx.device)
        return _bookkeeping(idx, st, end, B, padding_idx)

    def backward(g, w, p):
        counts, argmax = res[1], res[2]
        direct = not _R._state.enabled and g.dtype == w.dtype and _active_tracer() is None
        gw = gpsw = None
        if w.requires_grad:
            if direct:
                gw = ptcore.zeros(tuple(w.shape), dtype=g.dtype, device=g.device)
                _K.backward_into(gw, g, idx, starts, step, B, end, m,
                                 None if p is None else p.detach().contiguous(), pad, counts,
                                 argmax)
            elif m == 2:
                dim = w.shape[1]
                flat = (argmax * dim + ptcore.arange(dim, device=g.device)).reshape(-1)
                valid = flat >= 0
                gw = ptcore.zeros(w.numel(), dtype=g.dtype, device=g.device).index_add(
                    0, flat[valid], g.reshape(-1)[valid]).view(tuple(w.shape))
        if m != 2 and (gw is None and w.requires_grad or p is not None and p.requires_grad):
            gw2, gpsw = _sum_mean_backward(g, w, p, mode, books())
            gw = gw if gw is not None else gw2
        return gw, gpsw
    inputs = (weight, psw)
    out = _one_node("EmbeddingBagBackward0", compute, inputs, backward, save_inputs=True)
    return out


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
    scale_grad_by_freq : bool
        Accepted for compatibility (the dense gradient is not rescaled); with
        ``sparse`` it raises at backward, as torch's.
    sparse : bool
        ``weight.grad`` is a sparse COO tensor (``mode`` 'sum' or 'mean'): one
        entry per looked-up index (``padding_idx`` left out), in input order,
        uncoalesced, as torch's.
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
        if input.size(1) == 0:
            # torch builds the offsets as arange(0, numel, step=size(1)), which fails
            raise RuntimeError("embedding_bag: a 2-D input needs at least one index per bag "
                               "(step must be nonzero)")
        step = input.size(1)
        offs = None                 # (built below where the composite needs them)
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
        offs = offsets.detach().to(ptcore.int64).contiguous()
        step = 0
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
    if weight.dtype not in (ptcore.float16, ptcore.bfloat16, ptcore.float32, ptcore.float64):
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar "
            f"types: Half, BFloat16, Float, Double; but got {weight.dtype} instead (while "
            "checking arguments for embedding_bag)")
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

    dev = weight.device
    idx = input.detach().to(ptcore.int64).contiguous()
    n = idx.shape[0]
    special = mode != "max" and (sparse or (scale_grad_by_freq and weight.requires_grad and
                                            ptcore.is_grad_enabled()))
    # (the kernel is not an op: no dispatch layer or tracer (compile's capture) may
    # need to see the bags' ops)
    # (_kernel_bags is the CPU loop "embedding_bag_bags"; a device without one
    # takes the composite)
    fast = (not special and weight.dtype in _KERNEL_DTYPES
            and _loop_for("embedding_bag_bags", dev, _kernel_bags) is not None
            and not _vmap_frames() and not _fwl.levels() and not _layers_on[0]
            and _active_tracer() is None)
    if offs is None:
        if fast:
            # fixed-size bags: the kernel checks the indices and needs no offsets
            B = n // step
            if max_norm is not None:
                _check_indices(idx, num_embeddings)
                _embedding_renorm_(weight, idx, max_norm, norm_type)
            return _loop_for("embedding_bag_bags", dev, _kernel_bags)(
                weight, idx, None, step, B, n, mode, per_sample_weights, padding_idx)
        offs = ptcore.arange(0, n, step, dtype=ptcore.int64, device=input.device)
    _check_indices(idx, num_embeddings)
    if include_last_offset:
        if offs.shape[0] < 1:
            raise RuntimeError("embedding_bag(): include_last_offset=True needs at least one "
                               "offset")
        starts, end = offs[:-1], builtins.int(offs[-1].item()) if offs.shape[0] else n
    else:
        starts, end = offs, n
    B = starts.shape[0]
    if offs.shape[0] and offs[0].item() != 0:
        # (torch checks the first offset given, also when it is only the end of no bag)
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offs[0].item()}")
    if offs.shape[0] and offs[-1].item() > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offs[-1].item()}")
    if mode != "sum" and B and offs.shape[0] > 1 and bool((offs[1:] < 0).any().item()):
        # (torch's mean and max index their bag-size tables by the offsets: a negative one is
        # its IndexError there; its sum reads before the input, a RuntimeError or garbage)
        raise IndexError("index out of range in self")
    if B and offs.shape[0] > 1 and bool((offs[1:] < offs[:-1]).any().item()):
        raise RuntimeError(f"embedding_bag(): offsets must be non-decreasing, got "
                           f"{offs.tolist()}")
    if end > n or not B:
        end = n if B else 0             # (no bags: no index is looked up)

    if max_norm is not None:
        _embedding_renorm_(weight, idx[:end], max_norm, norm_type)
    if fast:
        return _loop_for("embedding_bag_bags", dev, _kernel_bags)(weight, idx, starts.contiguous(), 0, B, end, mode,
                            per_sample_weights, padding_idx)

    kept_pos, kept_idx, kept_bag, counts = _bookkeeping(idx, starts, end, B, padding_idx)
    if mode in ("sum", "mean"):
        def compute():
            if special:
                # the lookup's gradient is a COO tensor of the looked-up rows (torch's
                # _embedding_bag_sparse_backward through embedding_sparse_backward),
                # or dense, each row's gradient divided by its index's frequency
                rows = _Embedding.apply(weight, kept_idx, (kept_idx.shape[0], dim), -1,
                                        scale_grad_by_freq, sparse)
            else:
                rows = weight.index_select(0, kept_idx)
            if per_sample_weights is not None:
                rows = rows * per_sample_weights.index_select(0, kept_pos).unsqueeze(1)
            out = ptcore.zeros(B, dim, dtype=weight.dtype, device=dev).index_add(0, kept_bag,
                                                                                 rows)
            if mode == "mean":
                out = out / ptcore.clamp(counts, min=1).to(weight.dtype).unsqueeze(1)
            return out
        if special:
            return _name_grad_fn(compute(), "EmbeddingBagBackward0", weight)

        def backward(g, w, psw):
            return _sum_mean_backward(g, w, psw, mode, (kept_pos, kept_idx, kept_bag, counts))
        return _one_node("EmbeddingBagBackward0", compute, (weight, per_sample_weights),
                         backward, save_inputs=True)

    # max: gather into a (B, Lmax, dim) block padded with -inf
    lmax = builtins.int(counts.max().item()) if B else 0
    if lmax == 0:
        # every bag empty: zeros that stay in the graph (a zero gradient), as torch's
        none = weight.index_select(0, kept_idx).sum(0)
        out = ptcore.zeros(B, dim, dtype=weight.dtype, device=dev) + none
        return _name_grad_fn(out, "EmbeddingBagBackward0", weight)
    bag_start = ptcore.cumsum(counts, 0) - counts
    slot = ptcore.arange(kept_bag.shape[0], dtype=ptcore.int64, device=dev) - bag_start[kept_bag]
    flat = kept_bag * lmax + slot
    idx_mat = ptcore.zeros(B * lmax, dtype=ptcore.int64, device=dev).index_copy(0, flat, kept_idx)
    mask = ptcore.zeros(B * lmax, dtype=ptcore.bool, device=dev).index_fill(0, flat, True)
    block = weight.index_select(0, idx_mat).reshape(B, lmax, dim)
    block = block.masked_fill(ptcore.logical_not(mask).reshape(B, lmax, 1), float("-inf"))
    out = block.max(1).values
    empty = (counts == 0).unsqueeze(1)
    return _name_grad_fn(ptcore.where(empty, 0.0, out), "EmbeddingBagBackward0", weight)
