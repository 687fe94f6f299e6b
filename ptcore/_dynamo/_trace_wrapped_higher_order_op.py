"""``torch._dynamo._trace_wrapped_higher_order_op``: :class:`TransformGetItemToIndex`, the
mode under which flex-attention score and mask functions index tensors with tensors."""
from ptcore._ops.creation import tensor
from ptcore.library import ops
from ptcore.overrides import TorchFunctionMode
from ptcore.tensor import Tensor
from ptcore.utils import _pytree

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """Inside this mode, ``a[i, j]`` with tensor (or int) indices is ``aten.index(a, [i, j])``:
    0-d tensor indices select without being turned into Python numbers, so the indexing works
    under :func:`ptcore.vmap` with batched index tensors.  Other calls run unchanged."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is Tensor.__getitem__:
            indices = _pytree.tree_leaves(args[1])
            if all(isinstance(i, (Tensor, int)) and not isinstance(i, bool) for i in indices):
                x = args[0]
                as_tensors = [i if isinstance(i, Tensor) else tensor(i, device=x.device)
                              for i in indices]
                return ops.aten.index(x, as_tensors)
        return func(*args, **(kwargs or {}))
