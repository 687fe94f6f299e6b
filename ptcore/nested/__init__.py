"""Nested tensors (``torch.nested``): batches of tensors that differ in size
along some dims, without padding.

>>> import ptcore
>>> nt = ptcore.nested.nested_tensor([ptcore.ones(2, 3), ptcore.ones(4, 3)],
...                                  layout=ptcore.jagged)
>>> [tuple(c.shape) for c in nt.unbind()]
[(2, 3), (4, 3)]
>>> nt.size(0), nt.size(2)
(2, 3)

``nt.shape`` of the jagged layout is ``(2, j1, 3)``: ``j1`` stands for the
ragged dim's size (torch's nested int), equal only to the ragged size of
tensors that share these offsets.

Two layouts, as torch: ``ptcore.strided`` (the default; the components may
differ in any dim) and ``ptcore.jagged`` (one ragged dim, with ``values()``,
``offsets()`` and ``lengths()``).  Element-wise ops, ``nn.Linear``,
``nn.LayerNorm``, softmax, reductions, shape ops and
``F.scaled_dot_product_attention`` take nested tensors, and autograd runs
through them.
"""
from ptcore.nested._tensor import NestedTensor, jagged
from ptcore.nested._creation import (nested_tensor, as_nested_tensor, nested_tensor_from_jagged,
                                     narrow, to_padded_tensor, masked_select)
from ptcore.nested import _ops, _nn_ops  # noqa: F401  (the op table)

__all__ = ["NestedTensor", "jagged", "nested_tensor", "as_nested_tensor",
           "nested_tensor_from_jagged", "narrow", "to_padded_tensor", "masked_select"]


def _to_padded_method(self, padding, output_size=None):
    """``nt.to_padded_tensor(padding, output_size=None)``: see :func:`to_padded_tensor`."""
    return to_padded_tensor(self, padding, output_size)


NestedTensor.to_padded_tensor = _to_padded_method
del _to_padded_method
