"""Evaluating flex-attention modification functions over a whole score grid.

A ``score_mod(score, b, h, q_idx, kv_idx)`` or ``mask_mod(b, h, q_idx, kv_idx)`` is
written for one attention position.  torch applies it with four nested ``vmap`` calls;
here it is called once with index tensors shaped to broadcast against each other
(``(B,1,1,1)``, ``(1,H,1,1)``, ``(1,1,L,1)``, ``(1,1,1,S)``), which covers arithmetic,
comparisons, ``where`` and indexing of captured tensors (``bias[h, q_idx, kv_idx]``).
A function that cannot run on broadcast tensors (one that calls ``.item()`` on an
index, say) is evaluated with :func:`ptcore.func.vmap` instead, as torch does.
"""
import inspect

import ptcore

SCORE_MOD = "score_mod"
MASK_MOD = "mask_mod"


def mod_kind(fn):
    """``SCORE_MOD`` for a function of 5 required positional arguments, ``MASK_MOD`` for 4.

    Raises AssertionError otherwise (as torch).
    """
    code = getattr(fn, "__code__", None)
    if code is not None:
        n_required = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        n_required = sum(1 for p in inspect.signature(fn).parameters.values()
                         if p.default is inspect.Parameter.empty
                         and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if n_required == 5:
        return SCORE_MOD
    if n_required == 4:
        return MASK_MOD
    raise AssertionError(f"a score_mod takes 5 positional arguments (score, b, h, q_idx, "
                         f"kv_idx) and a mask_mod 4 (b, h, q_idx, kv_idx); got a function "
                         f"of {n_required}")


def index_grids(B, H, L, S, device):
    """int64 ``arange`` tensors over batch, head, query and key positions, shaped to
    broadcast to ``(B, H, L, S)``."""
    return (ptcore.arange(B, device=device).view(B, 1, 1, 1),
            ptcore.arange(H, device=device).view(1, H, 1, 1),
            ptcore.arange(L, device=device).view(1, 1, L, 1),
            ptcore.arange(S, device=device).view(1, 1, 1, S))


def _vmapped(fn, leading):
    # innermost map over kv_idx, then q_idx, head, batch (torch's _vmap_for_bhqkv)
    for pos in (3, 2, 1, 0):
        dims = [None, None, None, None]
        dims[pos] = 0
        fn = ptcore.func.vmap(fn, in_dims=tuple(leading) + tuple(dims))
    return fn


def apply_score_mod(score_mod, scores, grids):
    """``score_mod`` applied at every position of ``scores`` (shape ``(B, H, L, S)``)."""
    try:
        out = score_mod(scores, *grids)
        if not isinstance(out, ptcore.Tensor):
            raise TypeError("score_mod did not return a tensor")
        return out.to(scores.dtype).expand(scores.shape)
    except Exception:
        flat = tuple(g.reshape(-1) for g in grids)
        return _vmapped(score_mod, (0,))(scores, *flat).to(scores.dtype)


def apply_mask_mod(mask_mod, grids, shape):
    """Boolean tensor of ``shape`` ``(B, H, L, S)``: ``mask_mod`` at every position."""
    try:
        out = mask_mod(*grids)
        if not isinstance(out, ptcore.Tensor):
            raise TypeError("mask_mod did not return a tensor")
        return out.to(ptcore.bool).expand(shape)
    except Exception:
        flat = tuple(g.reshape(-1) for g in grids)
        return _vmapped(mask_mod, ())(*flat).to(ptcore.bool)
