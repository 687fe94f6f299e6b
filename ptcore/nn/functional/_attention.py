"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both are composed of ordinary ptcore ops (matmul, softmax, masked_fill ...), so
autograd differentiates them without dedicated backward kernels; where
torch's CPU flash kernel would run, ``scaled_dot_product_attention`` is one
node with its own backward (``_Attention``), as torch's.
"""
import builtins
import math
import warnings

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._ops.kernels import _nn_kernels as _NNK
from ptcore.autograd._formulas import _recorded
from ptcore._ops.linalg import _blas as _blas_module, _product
from ptcore.backends import cuda as _cuda_backend
from ptcore._dispatch.device import in_host_memory as _in_host_memory, loop_for as _loop_for
from ptcore._dispatch.dispatcher import parts_intercepted as _parts_intercepted
from ptcore._settings import grad_state as _grad_state
from ptcore._ops.shape import pad as _pad
from ptcore.autograd.function import Function
from ptcore._scalar_args import bool_param, float_param
from ptcore.nn.attention.bias import CausalBias

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _linear(input, weight, bias=None):
    # the public entry (bound when nn.functional is, after this module): autocast, the
    # profiler and the tracer see it
    return ptcore.nn.functional.linear(input, weight, bias)


def _dropout(input, p, training=True):
    return ptcore.nn.functional.dropout(input, p=p, training=training)


def _apply_mask(scores, mask):
    """``scores`` with an attention mask applied: a bool mask hides (``-inf``)
    the positions where it is False, a float mask is added."""
    if mask.dtype == ptcore.bool:
        return scores.masked_fill(mask.logical_not(), float("-inf"))
    return scores + mask


def _masked_softmax_(s, mask):
    """:func:`_safe_softmax` of ``s`` with ``mask`` applied (:func:`_apply_mask`;
    a float mask is added to ``s`` in place): the fused attention's masked rows
    (no recording)."""
    if mask.dtype == ptcore.bool:
        s = ptcore.where(mask, s, float("-inf"))
    else:
        s.add_(mask)
    p = ptcore.softmax(s, -1)
    # a row whose every score is -inf (the mask hides all its keys) is NaN: the
    # probabilities sum to NaN only then (or with NaN scores, which _safe_softmax
    # leaves NaN too), one reduction instead of _safe_softmax's three tests
    if math.isnan(p.sum().item()):
        rows = s.isneginf().all(-1, keepdim=True)
        if builtins.bool(rows.any()):
            p = ptcore.where(rows, 0.0, p)
    return p


def _safe_softmax(scores, dim=-1):
    """Softmax that gives 0 (not NaN) on rows that are entirely ``-inf``."""
    masked_rows = scores.isneginf().all(dim, keepdim=True)
    if builtins.bool(masked_rows.any()):
        scores = ptcore.where(masked_rows, 0.0, scores)
        return ptcore.where(masked_rows, 0.0, ptcore.softmax(scores, dim))
    return ptcore.softmax(scores, dim)


_CAUSAL = {}


def _causal_block(L, S, device):
    """The ``(L, S)`` bool mask on ``device``, True above the diagonal (the
    positions ``is_causal`` hides), cached per size and device."""
    key = (L, S, device)
    m = _CAUSAL.get(key)
    if m is None:
        if len(_CAUSAL) > 64:
            _CAUSAL.clear()
        m = ptcore.ones(L, S, dtype=ptcore.bool, device=device).triu(1)
        _CAUSAL[key] = m
    return m


def _laid_out_as(t):
    """An uninitialised tensor of ``t``'s shape whose dims are laid out in
    the order of ``t``'s strides (None where ``t`` is contiguous: the product
    makes its own): the gradient of a head view ``x.view(B, T, H, d)
    .transpose(1, 2)`` then comes back (B, T, H, d)-contiguous, so the
    transpose and view that follow in the backward are free instead of a
    copy per head tensor."""
    if t.is_contiguous():
        return None
    st = t.stride()
    if len(st) == 4:
        B, H, T, d = t.shape
        if H > 1 and T > 1 and st == (T * H * d, d, H * d, 1):
            # (the head view itself: its order without the general sort)
            return ptcore.empty((B, T, H, d), dtype=t.dtype, device=t.device).transpose(1, 2)
    order = sorted(range(t.dim()), key=lambda d: -st[d])
    shape = t.shape
    out = ptcore.empty([shape[d] for d in order], dtype=t.dtype, device=t.device)
    inv = [0] * len(order)
    for i, d in enumerate(order):
        inv[d] = i
    return out.permute(inv)


# The rules of the CPU's attention kernels (torch's math and flash kernels,
# and ptcore's fused _Attention) are the CPU loop "sdpa" (``_CpuAttention``,
# reached once per call through ``loop_for``): a device without such a loop
# takes the general path, written with other ops' entries.

def _cpu_check_backends(dropout_p):
    """torch's backend choice on the CPU: the math kernel, or the flash kernel
    without dropout; the efficient and cuDNN kernels are CUDA's.  A tutorial
    prints "not supported" on the error this raises."""
    if _cuda_backend.math_sdp_enabled():
        return
    if not _cuda_backend.flash_sdp_enabled():
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    if dropout_p > 0.0:
        raise RuntimeError("No available kernel.  Aborting execution.")


def _cpu_flash_takes(q, k, v, mask, dropout_p, enable_gqa):
    """PyTorch's CPU flash kernel (not its math kernel) runs this call: 4-D
    operands with equal batch sizes and head counts (or a grouped-query
    multiple), a mask of 2 or 4 dims broadcastable to (B, H, L, S) that does
    not require grad, one embedding size, nonempty sequences, contiguous last
    dims and no dropout.  The checks run in torch's order: its mask check reads
    the mask's last two sizes, so a mask of fewer dims raises IndexError there."""
    if (not _cuda_backend.flash_sdp_enabled()
            or dropout_p > 0.0 or not (q.dim() == k.dim() == v.dim() == 4)
            or not (q.size(0) == k.size(0) == v.size(0))):
        return False
    hq, hk, hv = q.size(1), k.size(1), v.size(1)
    if not (hk == hv and (hq == hk or builtins.bool(enable_gqa and hq % hk == 0))):
        return False
    if isinstance(mask, ptcore.Tensor):
        if mask.requires_grad:
            return False
        if mask.dim() < 2:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-builtins.max(mask.dim(), 1)}, {builtins.max(mask.dim(), 1) - 1}]"
                             f", but got -2): attn_mask of shape {list(mask.shape)}")
        if mask.size(-2) not in (1, q.size(2)) or mask.size(-1) not in (1, k.size(2)):
            return False
        if mask.dim() == 4:
            if mask.size(0) not in (1, q.size(0)) or mask.size(1) not in (1, hq):
                return False
        elif mask.dim() != 2:
            return False
    return ((q.size(-1) == k.size(-1) == v.size(-1)) and q.size(2) != 0 and k.size(2) != 0
            and q.stride(-1) == k.stride(-1) == v.stride(-1) == 1)


def _cpu_flash_out(q, v, dropout_p):
    """Where PyTorch's CPU flash-attention kernel would run (4-D operands, no
    dropout, value's embedding size equal to the query's, a query whose
    embedding dim is contiguous), its output has the query's layout: a
    query ``x.view(B, T, H, d).transpose(1, 2)`` gives an output that
    ``.transpose(1, 2).view(B, T, H * d)`` reads without a copy (a tutorial's
    CausalSelfAttention does that).  The tensor to write it into, laid out
    as ``q``; None where the output is contiguous."""
    if (q.dim() != 4 or v.dim() != 4 or dropout_p != 0.0
            or q.size(-1) != v.size(-1) or q.stride(-1) != 1 or q.is_contiguous()):
        return None
    return _laid_out_as(q)


def _cpu_fused_takes(q, k, v):
    """ptcore's fused attention (``_Attention``) runs this call (no dropout; a
    mask only where torch's flash kernel takes it): float32/float64, equal
    batch dims, the three operands on the CPU."""
    return (q.dtype in (ptcore.float32, ptcore.float64) and q.dim() >= 2
            and k.device == q.device and v.device == q.device
            and tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2]))


class _CpuAttention:
    """The CPU's attention rules, its loop "sdpa": torch's backend check, the
    flash kernel's choice and output layout, and the fused form's."""
    check_backends = staticmethod(_cpu_check_backends)
    flash_takes = staticmethod(_cpu_flash_takes)
    flash_out = staticmethod(_cpu_flash_out)
    fused_takes = staticmethod(_cpu_fused_takes)


def _attention_forward(q, k, v, mask, scale, causal, raw):
    """:class:`_Attention`'s forward: ``(output, probabilities)``; ``raw``: the
    products by the BLAS module's entries themselves (no dispatch layer is
    on to see the product op)."""
    L, S = q.size(-2), k.size(-2)
    # the causal softmax multiplies the scores by the scale as it reads
    # them (a positive scale: one pass less over the scores)
    fold = causal and mask is None and 0.0 < scale < math.inf
    blas = _blas_module() if raw else None      # (the module, imported on first use)
    if raw and fold:
        s = blas.product(q, k.transpose(-2, -1))
    else:
        s = _product(q, k.transpose(-2, -1), alpha=1 if fold else scale)
    p = _NNK.causal_softmax_(s, scale) if fold else None
    if p is None:
        if fold:
            s.mul_(scale)
        if causal:
            s.masked_fill_(_causal_block(L, S, s.device), float("-inf"))
        p = ptcore.softmax(s, -1) if mask is None else _masked_softmax_(s, mask)
    out = _cpu_flash_out(q, v, 0.0)         # (the fused form is the CPU's)
    if raw:
        if out is None:
            return blas.product(p, v), p
        return blas.mm_into(out, p, v if blas.usable(v) else v.contiguous(), 1, 0), p
    return (_product(p, v) if out is None else _product(p, v, out)), p


class _Attention(Function):
    """``softmax(q k^T * scale [+ causal mask] [+ attn_mask]) v`` with its own
    backward (an attn_mask that needs no gradient; rows it hides entirely give
    0, as the composed form's):
    the scale folded into the score product, the mask and softmax applied in
    place, and a backward of four products around the one-pass softmax
    gradient (PyTorch's CPU flash-attention kernel is also one node); the
    causal softmax skips the masked half of the scores.  A
    recorded backward (create_graph) recomputes the probabilities with
    differentiable ops."""
    _backward_name = "ScaledDotProductFlashAttentionForCpuBackward0"
    _backward_inputs = 3          # (torch's node: edges to query, key and value)

    @staticmethod
    def forward(ctx, q, k, v, mask, scale, causal):
        out, p = _attention_forward(q, k, v, mask, scale, causal, not _parts_intercepted())
        ctx.save_for_backward(q, k, v, p)
        ctx.mask = mask
        ctx.scale = scale
        ctx.causal = causal
        return out

    @staticmethod
    def backward(ctx, g):
        q, k, v, p = ctx.saved_tensors
        scale = ctx.scale
        nq, nk, nv = ctx.needs_input_grad[:3]
        if _recorded(g, q, k, v):
            s = ptcore.matmul(q, k.transpose(-2, -1)) * scale
            if ctx.causal:
                s = s.masked_fill(_causal_block(q.size(-2), k.size(-2), s.device), float("-inf"))
            if ctx.mask is None:
                p = ptcore.softmax(s, -1)
            else:
                p = _safe_softmax(_apply_mask(s, ctx.mask), -1)
            dp = ptcore.matmul(g, v.transpose(-2, -1))
            ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale
            return (ptcore.matmul(ds, k) if nq else None,
                    ptcore.matmul(ds.transpose(-2, -1), q) if nk else None,
                    ptcore.matmul(p.transpose(-2, -1), g) if nv else None, None, None, None)
        gq = gk = gv = None
        if nv:
            gv = _product(p.transpose(-2, -1), g, _laid_out_as(v))
        if nq or nk:
            dp = _product(g, v.transpose(-2, -1))
            ds = _NNK.softmax_backward(dp, p, -1, False, scale)     # (times the scale)
            if ds is None:
                ds = p * (dp - (dp * p).sum(-1, keepdim=True))
                ds.mul_(scale)
            if nq:
                gq = _product(ds, k, _laid_out_as(q))
            if nk:
                gk = _product(ds.transpose(-2, -1), q, _laid_out_as(k))
        return gq, gk, gv, None, None, None


_PLAIN_DTYPES = (ptcore.float32, ptcore.float64)


def _sdpa_plain(q, k, v, causal):
    """The output of the most common call (no mask, dropout, scale or grouped
    heads: a transformer's inference step) of CPU float32/float64 operands
    where nothing records, through the fused forward without the general
    path's parsing; None for anything else (the general path decides).  The
    conditions are those under which the general path reaches the same
    forward: torch's math backend enabled, equal batch dims, embedding sizes
    and key/value lengths, nonempty sequences."""
    if not (isinstance(q, _TensorBase) and isinstance(k, _TensorBase)
            and isinstance(v, _TensorBase)):
        return None
    dt = q.dtype
    if dt not in _PLAIN_DTYPES or k.dtype is not dt or v.dtype is not dt \
            or not _in_host_memory(q) or not _in_host_memory(k) or not _in_host_memory(v) \
            or q.dim() < 2 or k.dim() != q.dim() or v.dim() != q.dim():
        return None
    if _grad_state.enabled and (q._requires_grad or k._requires_grad or v._requires_grad):
        return None
    qs, ks, vs = q.shape, k.shape, v.shape
    if qs[:-2] != ks[:-2] or qs[:-2] != vs[:-2] or qs[-1] != ks[-1] or ks[-2] != vs[-2] \
            or qs[-2] == 0 or ks[-2] == 0 or qs[-1] == 0 or not _cuda_backend.math_sdp_enabled():
        return None
    return _attention_forward(q, k, v, None, 1.0 / math.sqrt(qs[-1]), causal, True)[0]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    r"""Scaled dot-product attention ``softmax(Q K^T * scale + bias) V``.

    Parameters
    ----------
    query : Tensor
        ``(N, ..., Hq, L, E)``.
    key : Tensor
        ``(N, ..., H, S, E)``.
    value : Tensor
        ``(N, ..., H, S, Ev)``.
    attn_mask : Tensor, optional
        Broadcastable to ``(N, ..., L, S)``.  A boolean mask marks with ``True``
        the positions that *may* be attended; a float mask is added to the scores.
    dropout_p : float
        Dropout probability applied to the attention weights (always applied
        when > 0, as in PyTorch).
    is_causal : bool
        Use a lower-triangular (top-left aligned) causal mask; ``attn_mask``
        must then be None.
    scale : float, optional
        Scaling factor; defaults to ``1 / sqrt(E)``.
    enable_gqa : bool
        Grouped-query attention: ``Hq`` must be a multiple of ``H`` and the key
        and value heads are repeated.

    Returns
    -------
    Tensor
        ``(N, ..., Hq, L, Ev)``.  Rows whose every position is masked give 0.
    """
    if attn_mask is None and scale is None and enable_gqa is False and type(is_causal) is bool \
            and (type(dropout_p) is float or type(dropout_p) is int) and dropout_p == 0 \
            and not _parts_intercepted():
        if is_causal and _cuda_backend.math_sdp_enabled():
            # a decoder's step: one call (the fused form's products and softmax)
            out = _NNK.attention_causal_plain(query, key, value, _grad_state.enabled,
                                              _blas_module())
            if out is not None:
                return out
        out = _sdpa_plain(query, key, value, is_causal)
        if out is not None:
            return out
    # (torch's parser: dropout_p/scale floats, the flags bools; no NumPy array)
    dropout_p = float_param(dropout_p, "scaled_dot_product_attention", "dropout_p")
    if dropout_p > 1.0:              # (torch's check: a negative p is no dropout)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    bool_param(is_causal, "scaled_dot_product_attention", "is_causal")
    if scale is not None:
        scale = float_param(scale, "scaled_dot_product_attention", "scale")
    bool_param(enable_gqa, "scaled_dot_product_attention", "enable_gqa")
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, ptcore.Tensor):
            raise TypeError(f"scaled_dot_product_attention(): {name} must be a Tensor, "
                            f"got {type(t).__name__}")
        if t.dim() < 2:
            raise RuntimeError(f"scaled_dot_product_attention(): {name} must be at least 2-D, "
                               f"got shape {tuple(t.shape)}")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    if not query.is_floating_point():
        raise RuntimeError(f"scaled_dot_product_attention(): expected a floating point dtype, "
                           f"got {query.dtype}")
    if attn_mask is not None and not isinstance(attn_mask, ptcore.Tensor):
        if isinstance(attn_mask, CausalBias):
            attn_mask, is_causal = attn_mask._sdpa_args(query.device, is_causal)
    if attn_mask is not None:
        if not isinstance(attn_mask, ptcore.Tensor):
            raise TypeError(f"scaled_dot_product_attention(): attn_mask must be a Tensor, "
                            f"got {type(attn_mask).__name__}")
        if attn_mask.dtype not in (ptcore.bool, ptcore.float32, query.dtype):
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                               f"dtype, but got attn_mask.dtype: {attn_mask.dtype} and "
                               f"query.dtype: {query.dtype} instead.")
    rules = _loop_for("sdpa", query.device, _CpuAttention)     # None: no device rules
    flash = rules is not None and rules.flash_takes(query, key, value, attn_mask, dropout_p,
                                                    enable_gqa)
    # torch 2.13's CPU flash kernel takes attn_mask with is_causal (both masks
    # apply); its math kernel, which runs every other call, refuses the pair
    if attn_mask is not None and is_causal and not flash:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if rules is not None:
        rules.check_backends(dropout_p)
    L, S = query.size(-2), key.size(-2)
    # (an empty embedding: every score is an empty sum, 0, whatever the scale -- torch
    # scales q and k before the product; 1 keeps them 0 where 1 / sqrt(0) would make NaN)
    scale_factor = builtins.float(scale) if scale is not None else \
        1.0 / math.sqrt(query.size(-1)) if query.size(-1) else 1.0

    if enable_gqa:
        if builtins.min(query.dim(), key.dim(), value.dim()) < 3:
            # torch's math kernel reads the head counts at dim -3
            raise IndexError(f"Dimension out of range (expected to be in range of [-2, 1], but "
                             f"got -3): enable_gqa=True needs query, key and value of at least "
                             f"3 dims, got {tuple(query.shape)}, {tuple(key.shape)}, "
                             f"{tuple(value.shape)}")
        hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
        if hq % hk != 0 or hq % hv != 0:
            raise RuntimeError(
                f"scaled_dot_product_attention(): with enable_gqa=True the number of query heads "
                f"({hq}) must be a multiple of the key ({hk}) and value ({hv}) heads")
        if hk != hq:
            key = key.repeat_interleave(hq // hk, -3)
        if hv != hq:
            value = value.repeat_interleave(hq // hv, -3)

    # (after the mask and grouped-query checks, as torch's math kernel's products)
    if query.size(-1) != key.size(-1):
        raise RuntimeError(
            f"scaled_dot_product_attention(): query's embedding size {query.size(-1)} does not "
            f"match key's {key.size(-1)} (query {tuple(query.shape)}, key {tuple(key.shape)})")
    if key.size(-2) != value.size(-2):
        raise RuntimeError(
            f"scaled_dot_product_attention(): key and value sequence lengths differ "
            f"(key {tuple(key.shape)}, value {tuple(value.shape)})")
    if (rules is not None and dropout_p == 0.0 and rules.fused_takes(query, key, value)
            and (attn_mask is None or (flash and (attn_mask.dtype is ptcore.bool
                                                  or attn_mask.is_floating_point())))):
        # (torch's flash kernel takes a mask that needs no gradient and broadcasts to
        # the scores: _cpu_flash_takes checked its sizes)
        if not _parts_intercepted() and not (_grad_state.enabled and (
                query._requires_grad or key._requires_grad or value._requires_grad)):
            # nothing records (inference, a decoder's generation loop): the
            # forward without the Function's bookkeeping
            return _attention_forward(query, key, value, attn_mask, scale_factor,
                                      builtins.bool(is_causal), True)[0]
        return _Attention.apply(query, key, value, attn_mask, scale_factor,
                                builtins.bool(is_causal))
    scores = ptcore.matmul(query, key.transpose(-2, -1)) * scale_factor
    masked = False
    if is_causal:
        scores = scores.masked_fill(_causal_block(L, S, scores.device), float("-inf"))
        if attn_mask is None:
            # row i keeps key 0: no row is fully masked, the plain softmax is safe
            attn = ptcore.softmax(scores, -1)
            if dropout_p > 0.0:
                attn = _dropout(attn, dropout_p, True)
            return _laid_out(ptcore.matmul(attn, value), query, value, dropout_p, rules)
        masked = True
    if attn_mask is not None:
        if not isinstance(attn_mask, ptcore.Tensor):
            raise TypeError(f"scaled_dot_product_attention(): attn_mask must be a Tensor, "
                            f"got {type(attn_mask).__name__}")
        _check_mask_shape(attn_mask, scores)
        if attn_mask.dtype == ptcore.bool or attn_mask.is_floating_point():
            scores = _apply_mask(scores, attn_mask)
        else:
            raise RuntimeError(f"scaled_dot_product_attention(): attn_mask must be bool or "
                               f"floating point, got {attn_mask.dtype}")
        masked = True
    attn = _safe_softmax(scores, -1) if masked else ptcore.softmax(scores, -1)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p, True)
    return _laid_out(ptcore.matmul(attn, value), query, value, dropout_p, rules)


def _check_mask_shape(mask, scores):
    """The mask must broadcast to the scores' ``(..., L, S)`` without growing them, as
    torch's in-place add (a mask of a wrong shape would change the output's shape)."""
    try:
        full = ptcore.broadcast_shapes(tuple(mask.shape), tuple(scores.shape))
    except RuntimeError:
        full = None
    if full is None or tuple(full) != tuple(scores.shape):
        raise RuntimeError(f"output with shape {list(scores.shape)} doesn't match the broadcast "
                           f"shape {list(full) if full is not None else list(mask.shape)} "
                           f"(attn_mask of shape {list(mask.shape)})")


def _laid_out(res, q, v, dropout_p, rules):
    """``res`` in the layout the device's kernel gives (``rules``: its loop
    "sdpa"; contiguous where it has none; see _cpu_flash_out)."""
    out = None if rules is None else rules.flash_out(q, v, dropout_p)
    return res if out is None else out.copy_(res)


# ---------------------------------------------------------------------------
# multi_head_attention_forward (follows torch.nn.functional line by line)
# ---------------------------------------------------------------------------

def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        is_batched = True
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead")
    elif query.dim() == 2:
        is_batched = False
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                f" but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected_shape} but got "
                        f"{tuple(attn_mask.shape)}")
    else:
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor")
    return is_batched


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """Bool masks -> float masks with ``-inf`` where True; float masks pass through."""
    if mask is not None:
        mask_dtype = mask.dtype
        mask_is_float = mask.is_floating_point()
        if mask_dtype != ptcore.bool and not mask_is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and mask_dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} "
                          "is deprecated. Use same type for both instead.", stacklevel=3)
        if not mask_is_float:
            mask = ptcore.zeros_like(mask, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, ptcore.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ptcore.Tensor")


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = _linear(q, w, b)
            # contiguous as torch's: callers view the projections (q.view(L, N * H, d))
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        if b is None:
            b_q = b_kv = None
        else:
            b_q, b_kv = b.split([E, E * 2])
        q_proj = _linear(q, w_q, b_q)
        kv_proj = _linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    if b is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = b.chunk(3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)),
                           ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got "
                                 f"{tuple(w.shape)}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got "
                                 f"{tuple(b.shape)}")
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    r"""Forward pass of :class:`~ptcore.nn.MultiheadAttention` (``torch.nn.functional``'s).

    Parameters
    ----------
    query, key, value : Tensor
        ``(L, N, E)``/``(S, N, E)`` (or unbatched ``(L, E)``/``(S, E)``).
    embed_dim_to_check, num_heads : int
        Model width and number of heads.
    in_proj_weight, in_proj_bias : Tensor or None
        Packed ``(3E, E)`` projection and ``(3E,)`` bias.
    bias_k, bias_v : Tensor or None
        ``(1, 1, E)`` biases appended to the key/value sequences.
    add_zero_attn : bool
        Append a zero key/value position.
    dropout_p : float
        Dropout on the attention weights (only when ``training``).
    out_proj_weight, out_proj_bias : Tensor
        Output projection.
    key_padding_mask : Tensor, optional
        ``(N, S)``; True (bool) or a float added to the scores marks padding.
    need_weights, average_attn_weights : bool
        Return the attention weights (averaged over heads).
    attn_mask : Tensor, optional
        ``(L, S)`` or ``(N*num_heads, L, S)``; True (bool) means *not* allowed.
    is_causal : bool
        Hint that ``attn_mask`` is the causal mask.

    Returns
    -------
    (Tensor, Tensor or None)
        The output ``(L, N, E)`` and the weights ``(N, L, S)`` (or per head).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        if q_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
        if k_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but k_proj_weight is None")
        if v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but v_proj_weight is None")
        if in_proj_bias is None:
            b_q = b_k = b_v = None
        else:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ptcore.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ptcore.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _pad(key_padding_mask, (0, 1))
    else:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got "
                                 f"{static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got "
                                 f"{static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got "
                                 f"{static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got "
                                 f"{static_v.size(2)}")
        v = static_v

    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = ptcore.cat([k, ptcore.zeros(zero_attn_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = ptcore.cat([v, ptcore.zeros(zero_attn_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = _pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _pad(key_padding_mask, (0, 1))

    src_len = k.size(1)

    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        if attn_mask is None:
            attn_mask = key_padding_mask
        else:
            attn_mask = attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / builtins.float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = ptcore.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = ptcore.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = ptcore.softmax(attn_output_weights, -1)
        if dropout_p > 0.0:
            attn_output_weights = _dropout(attn_output_weights, dropout_p, True)
        attn_output = ptcore.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = _linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    # the public entry: one op for tracing (an ONNX export records this
    # function as the ops it calls) and for the other layers
    attn_output = ptcore.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask,
                                                                    dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = _linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None
