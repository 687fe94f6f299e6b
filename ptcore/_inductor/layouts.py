"""Operand layouts a compiled graph chooses where eager's would be slow.

Attention's products run per (batch, head) on (L, E) matrices read in place.
When a matrix's rows lie a multiple of 512 floats apart (nn.MultiheadAttention
with ``batch_first=True``: q, k, v are heads of a (T, B, E) projection, rows
B * E floats apart; 16 x 128 = 2048 in the TransformerEncoder workload), every
row of a head falls into the same few L1 cache sets and the rows evict each
other (ptcore's GEMM packs such operands for the same reason: ptc_sgemm.h,
``ptc_sg_direct_a``).  A compiled graph hands ``scaled_dot_product_attention``
a contiguous copy of such an operand instead (torch's Inductor also fixes the
strides of attention's inputs): the same values, so the same result and
gradients; the gradients come back in the copy's (contiguous) layout.
Measured at one thread on the loaded machine: the encoder's training step
70.4 -> 65.7 ms with the three copies per layer made (eager, patched), the
attention node's forward + backward 5.8 -> 3.7 ms.
"""
from ptcore._tensor import _TensorBase

__all__ = ["attention_operand", "ATTENTION_OPS"]

ATTENTION_OPS = (("nn.functional", "scaled_dot_product_attention"),)

_ALIAS = 512            # row strides (in elements) whose multiples share cache sets


def attention_operand(t):
    """``t``, or a contiguous copy of it where its rows are a multiple of 512
    elements apart (a CPU float tensor of >= 2 dims that is not contiguous)."""
    if not isinstance(t, _TensorBase) or t.dim() < 2 or not t.is_cpu:
        return t
    rs = t.stride(-2)
    if rs == 0 or rs % _ALIAS != 0 or t.size(-2) < 2 or not t.dtype.is_floating_point or \
            t.is_contiguous():
        return t
    return t.contiguous()
