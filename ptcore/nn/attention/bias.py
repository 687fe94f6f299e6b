"""Causal attention biases for :func:`ptcore.nn.functional.scaled_dot_product_attention`
(``torch.nn.attention.bias``): pass ``causal_upper_left(L, S)`` or
``causal_lower_right(L, S)`` as ``attn_mask``.

``UPPER_LEFT`` keeps key ``j`` for query ``i`` when ``j <= i`` (the mask of
``is_causal=True``); ``LOWER_RIGHT`` aligns the diagonal with the last key:
``j <= i + S - L`` (decoding with a cache of ``S - L`` earlier positions).
With ``L == S`` both are ``is_causal=True``, which attention runs without a
mask; otherwise the boolean mask is materialised.  Rows with no key left
(lower-right with ``L > S``) give zeros, as the masked path does.
"""
from enum import IntEnum, auto

import ptcore

__all__ = ["CausalVariant", "CausalBias", "causal_upper_left", "causal_lower_right"]


class CausalVariant(IntEnum):
    """Where the causal mask's diagonal starts: the top-left corner of the
    ``(L, S)`` score matrix, or its bottom-right corner."""
    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias:
    """A causal mask of ``seq_len_q`` queries by ``seq_len_kv`` keys, given as
    ``attn_mask`` to scaled_dot_product_attention (which dispatches on it:
    ``is_causal=True`` where that is the same mask)."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError("variant must be a CausalVariant")
        self.variant = variant
        self.seq_len_q = int(seq_len_q)
        self.seq_len_kv = int(seq_len_kv)
        if self.seq_len_q > self.seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            import warnings
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device):
        return ptcore.ones(self.seq_len_q, self.seq_len_kv, dtype=ptcore.bool,
                           device=device).tril()

    def _lower_right(self, device):
        return ptcore.ones(self.seq_len_q, self.seq_len_kv, dtype=ptcore.bool,
                           device=device).tril(self.seq_len_kv - self.seq_len_q)

    def _materialize(self, device=None):
        """The boolean mask (True: the key takes part)."""
        if device is None:
            device = ptcore.device("cpu")
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    def _sdpa_args(self, device, is_causal):
        """``(attn_mask, is_causal)`` for scaled_dot_product_attention."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if self.seq_len_q == self.seq_len_kv or self.variant == CausalVariant.UPPER_LEFT:
            return None, True
        return self._lower_right(device), False

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size):
    """A :class:`CausalBias` of ``(seq_len_q, seq_len_kv)`` aligned at the top left."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size):
    """A :class:`CausalBias` of ``(seq_len_q, seq_len_kv)`` aligned at the bottom right."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
