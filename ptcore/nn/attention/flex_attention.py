"""``ptcore.nn.attention.flex_attention`` (``torch.nn.attention.flex_attention``):
scaled dot-product attention with a user ``score_mod`` applied to every score and a
block-sparse :class:`BlockMask` choosing which positions take part.

ptcore computes it eagerly: the full ``(B, H, L, S)`` score matrix in float32 (float64
for float64 inputs), ``score_mod`` evaluated once on broadcast index tensors, masked
positions set to ``-inf``, a softmax whose fully masked rows give 0, then ``P @ value``.
It is differentiable with respect to query, key, value and any tensor the
``score_mod`` captures (a learnable bias, say), on every device.
"""
import math
import typing
import warnings

import ptcore
import ptcore.nn.attention._flex_mods as _flex_mods
from ptcore.nn.attention._flex_block_mask import (
    _DEFAULT_BLOCK_SIZE, _WHOLE_BLOCK_SIZE, BlockMask, _ordered_to_dense, _sliced_mask_mod_error, and_masks, create_block_mask,
    create_mask, noop_mask, or_masks, whole_sequence_block_mask)

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")
# torch's names of the block sizes (libraries read them as defaults): a BlockMask's default,
# and the one block that covers a whole sequence
_DEFAULT_SPARSE_BLOCK_SIZE = _DEFAULT_BLOCK_SIZE
_LARGE_SPARSE_BLOCK_SIZE = _WHOLE_BLOCK_SIZE


class FlexKernelOptions(typing.TypedDict, total=False):
    """Kernel tuning options (torch's Triton kernel knobs).  ptcore accepts them and
    checks ``BACKEND``; its eager implementation has nothing to tune."""

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: str


class AuxRequest(typing.NamedTuple):
    """Which auxiliary outputs :func:`flex_attention` returns (``return_aux=``)."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(typing.NamedTuple):
    """Auxiliary outputs of :func:`flex_attention`; a field is None when not requested.

    ``lse``: natural-log logsumexp of each query row's scores, ``(B, Hq, L)``;
    ``max_scores``: each row's largest score, ``(B, Hq, L)``.  Fully masked rows give
    ``-inf`` in both.
    """

    lse: typing.Any = None
    max_scores: typing.Any = None


def _identity(score, b, h, q_idx, kv_idx):
    return score


def _check_inputs(query, key, value, enable_gqa):
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"flex_attention: query, key and value must be on one device, got "
                         f"{query.device}, {key.device} and {value.device}")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"flex_attention: query, key and value must have at least 2 "
                         f"dimensions, got {query.dim()}, {key.dim()} and {value.dim()}")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"flex_attention: query and key must have the same embedding "
                         f"dimension, got E={query.size(-1)} and E={key.size(-1)}")
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not t.dtype.is_floating_point:
            raise TypeError(f"flex_attention: {name} must have a floating dtype, got "
                            f"{t.dtype}")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError(f"flex_attention: query, key and value must be 4-D "
                                  f"(B, H, L, E), got {query.dim()}, {key.dim()} and "
                                  f"{value.dim()} dimensions")
    if key.size(-2) != value.size(-2) or key.size(1) != value.size(1):
        raise RuntimeError(f"flex_attention: key {tuple(key.shape)} and value "
                           f"{tuple(value.shape)} must agree in heads and length")
    Hq, Hkv = query.size(1), key.size(1)
    if not enable_gqa and Hq != Hkv:
        raise ValueError(f"flex_attention: query and key/value must have the same number "
                         f"of heads, got Hq={Hq} and Hkv={Hkv}; set enable_gqa=True for "
                         f"grouped-query attention")
    if enable_gqa and Hq % Hkv != 0:
        raise ValueError(f"flex_attention: for GQA the query heads must be a multiple of "
                         f"the key/value heads, got Hq={Hq} and Hkv={Hkv}")


def _check_block_mask(block_mask, query, key):
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask: set its mask_mod "
                           "from the original BlockMask's mask_mod")
    L, S = query.size(-2), key.size(-2)
    if block_mask.BLOCK_SIZE != (_WHOLE_BLOCK_SIZE, _WHOLE_BLOCK_SIZE):
        mask_L, mask_S = block_mask.shape[-2:]
        if (L, S) != (mask_L, mask_S):
            raise ValueError(f"flex_attention: block_mask was created for "
                             f"shape={block_mask.shape} but q_len={L} and kv_len={S}; "
                             f"create a block mask for these lengths")
    B, Hq = query.size(0), query.size(1)
    mask_B, mask_H = ((1, 1) + tuple(block_mask.kv_num_blocks.shape[:-1]))[-2:]
    if mask_B not in (1, B) or mask_H not in (1, Hq):
        raise ValueError(f"flex_attention: block_mask batch/heads ({mask_B}, {mask_H}) do "
                         f"not broadcast to query's ({B}, {Hq})")
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"flex_attention: q/k/v are on {query.device} but block_mask on "
                           f"{block_mask.kv_num_blocks.device}")


def _expand_blocks(dense_blocks, block_size, L, S):
    """bool ``(b, h, L, S)``: each position's block flag from a ``(b, h, nq, nkv)`` map."""
    q_block, kv_block = block_size
    while dense_blocks.dim() < 4:
        dense_blocks = dense_blocks.unsqueeze(0)
    q_rep, kv_rep = min(q_block, L), min(kv_block, S)
    full = dense_blocks.to(ptcore.bool).repeat_interleave(q_rep, dim=-2)
    full = full.repeat_interleave(kv_rep, dim=-1)
    # a layout with fewer blocks than the lengths need keeps nothing beyond them
    pad_L, pad_S = max(0, L - full.size(-2)), max(0, S - full.size(-1))
    if pad_L or pad_S:
        full = ptcore.nn.functional.pad(full, (0, pad_S, 0, pad_L))
    return full[..., :L, :S]


def _keep_mask(block_mask, grids, shape):
    """bool tensor broadcastable to ``shape``: the positions attention uses (None: all)."""
    B, H, L, S = shape
    if block_mask.BLOCK_SIZE == (_WHOLE_BLOCK_SIZE, _WHOLE_BLOCK_SIZE):
        if block_mask.mask_mod is noop_mask:
            return None
        return _flex_mods.apply_mask_mod(block_mask.mask_mod, grids, shape)
    partial = _expand_blocks(_ordered_to_dense(block_mask.kv_num_blocks, block_mask.kv_indices,
                                               block_mask.kv_indices.shape[-1]),
                             block_mask.BLOCK_SIZE, L, S)
    if block_mask.mask_mod is not noop_mask:
        partial = partial & _flex_mods.apply_mask_mod(block_mask.mask_mod, grids, shape)
    if block_mask.full_kv_num_blocks is None:
        return partial
    full = _expand_blocks(_ordered_to_dense(block_mask.full_kv_num_blocks,
                                            block_mask.full_kv_indices,
                                            block_mask.full_kv_indices.shape[-1]),
                          block_mask.BLOCK_SIZE, L, S)
    return partial | full


def _check_kernel_options(kernel_options):
    if kernel_options is None:
        return
    if not isinstance(kernel_options, dict):
        raise TypeError(f"flex_attention: kernel_options must be a dict, got "
                        f"{type(kernel_options).__name__}")
    backend = kernel_options.get("BACKEND")
    if backend is not None and backend not in _BACKENDS:
        raise ValueError(f"flex_attention: invalid BACKEND {backend!r}; must be one of "
                         f"{_BACKENDS}")
    for internal in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if internal in kernel_options:
            raise AssertionError(f"{internal} must not be in kernel_options")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    r"""Scaled dot-product attention with a score modification and a block-sparse mask.

    ``score = (query @ key^T) * scale``, then ``score_mod(score, b, h, q_idx, kv_idx)``
    at every position, ``-inf`` where ``block_mask`` excludes the position (blocks it
    does not list, and ``mask_mod`` False on its partial blocks), softmax over the keys
    (fully masked rows give 0), and ``@ value``.  Scores are computed in float32
    (float64 for float64 inputs); the output has query's dtype.

    Parameters
    ----------
    query : Tensor
        ``(B, Hq, L, E)``.
    key : Tensor
        ``(B, Hkv, S, E)``.
    value : Tensor
        ``(B, Hkv, S, Ev)``.
    score_mod : callable, optional
        ``score_mod(score, b, h, q_idx, kv_idx) -> Tensor``.  ptcore calls it once with
        the whole score tensor and int64 index tensors shaped ``(B,1,1,1)``,
        ``(1,H,1,1)``, ``(1,1,L,1)``, ``(1,1,1,S)``; a function that cannot take
        broadcast tensors is run under :func:`ptcore.func.vmap` per position.
    block_mask : BlockMask, optional
        From :func:`create_block_mask`; default: every position.
    scale : float, optional
        Default ``1 / sqrt(E)``.
    enable_gqa : bool
        Grouped-query attention: each key/value head serves ``Hq // Hkv`` query heads.
    return_lse : bool
        Also return the logsumexp (deprecated in torch for ``return_aux``).
    kernel_options : dict, optional
        Accepted for compatibility (see :class:`FlexKernelOptions`).
    return_aux : AuxRequest, optional
        Request ``lse`` and/or ``max_scores``; returns ``(out, AuxOutput)``.

    Returns
    -------
    Tensor or tuple
        ``out`` ``(B, Hq, L, Ev)``; with ``return_lse`` ``(out, lse)``, ``lse``
        ``(B, Hq, L)`` in the working precision (natural log, ``-inf`` for fully
        masked rows); with ``return_aux`` ``(out, AuxOutput)``.

    Raises
    ------
    ValueError
        Mismatched devices, embedding dims, heads, batch sizes or block-mask lengths;
        both ``return_lse`` and ``return_aux``.
    NotImplementedError
        Inputs that are not 4-D (as torch).
    TypeError
        Non-floating inputs (torch computes them; ptcore refuses).
    RuntimeError
        A sliced BlockMask's mask_mod; key and value of different lengths.

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.nn.attention.flex_attention import flex_attention
    >>> q = k = v = ptcore.ones(1, 1, 3, 2)
    >>> causal = lambda score, b, h, q_idx, kv_idx: ptcore.where(
    ...     q_idx >= kv_idx, score, float("-inf"))
    >>> flex_attention(q, k, v, score_mod=causal).shape
    ptcore.Size([1, 1, 3, 2])
    """
    _check_inputs(query, key, value, enable_gqa)
    B, Hq, L, _ = query.shape
    Hkv, S = key.size(1), key.size(2)
    if key.size(0) != B:
        if block_mask is None:
            raise ValueError(f"flex_attention: query and key/value must have the same batch "
                             f"size without a block_mask, got Bq={B} and Bkv={key.size(0)}")
        mask_B = block_mask.kv_num_blocks.size(0)
        if mask_B != B:
            raise ValueError(f"flex_attention: query and key/value batch sizes differ "
                             f"(Bq={B}, Bkv={key.size(0)}) and block_mask's batch "
                             f"{mask_B} is not query's")
        if key.size(0) != 1:
            raise RuntimeError(f"flex_attention: key/value batch {key.size(0)} does not "
                               f"broadcast to query's {B}")
    if score_mod is None:
        score_mod = _identity
    if block_mask is None:
        block_mask = whole_sequence_block_mask(query.device)
    _check_block_mask(block_mask, query, key)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if return_lse and return_aux is not None:
        raise ValueError("flex_attention: give return_aux=AuxRequest(lse=True) or the "
                         "deprecated return_lse, not both")
    if return_lse:
        warnings.warn("flex_attention: return_lse is deprecated; use "
                      "return_aux=AuxRequest(lse=True)", FutureWarning, stacklevel=2)
    _check_kernel_options(kernel_options)

    work = ptcore.float64 if query.dtype == ptcore.float64 else ptcore.float32
    if Hq != Hkv:
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    key = key.expand(B, *key.shape[1:])
    value = value.expand(B, *value.shape[1:])
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    shape = (B, Hq, L, S)
    grids = _flex_mods.index_grids(B, Hq, L, S, query.device)
    if score_mod is not _identity:
        scores = _flex_mods.apply_score_mod(score_mod, scores, grids)
    keep = _keep_mask(block_mask, grids, shape)
    if keep is not None:
        scores = ptcore.where(keep, scores, ptcore.tensor(float("-inf"), dtype=work,
                                                           device=query.device))

    # softmax through the logsumexp, written so that rows with no kept position give
    # 0 output, -inf lse and finite gradients
    row_max = scores.amax(dim=-1, keepdim=True)
    empty_row = ptcore.isneginf(row_max)
    shift = ptcore.where(empty_row, ptcore.zeros((), dtype=work, device=query.device),
                         row_max).detach()
    sum_exp = (scores - shift).exp().sum(dim=-1, keepdim=True)
    one = ptcore.ones((), dtype=work, device=query.device)
    lse = ptcore.where(empty_row, float("-inf"),
                       ptcore.where(empty_row, one, sum_exp).log() + shift)
    probs = (scores - ptcore.where(empty_row, 0.0, lse)).exp()
    out = probs.to(query.dtype) @ value.to(query.dtype)

    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    lse = lse.squeeze(-1) if want_lse else None
    if return_aux is not None:
        max_scores = row_max.squeeze(-1) if return_aux.max_scores else None
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
