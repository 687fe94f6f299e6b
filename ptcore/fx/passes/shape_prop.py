"""Shape propagation: run a GraphModule on example inputs and record each
node's tensor shape, dtype and layout in ``node.meta['tensor_meta']``
(``torch.fx.passes.shape_prop``)."""
from typing import Any, NamedTuple

import ptcore

from ptcore.fx.interpreter import Interpreter
from ptcore.fx.node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What shape propagation records about a tensor value."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    """The :class:`TensorMetadata` of tensor ``result``."""
    sparse = getattr(result, "is_sparse", False) or result.layout != ptcore.strided
    stride = result.stride() if not sparse else ()
    memory_format = None
    if include_contiguity and not sparse:
        for fmt in (ptcore.contiguous_format, ptcore.channels_last, ptcore.channels_last_3d):
            if fmt is ptcore.channels_last and result.dim() != 4:
                continue
            if fmt is ptcore.channels_last_3d and result.dim() != 5:
                continue
            if result.is_contiguous(memory_format=fmt):
                memory_format = fmt
                break
    is_quantized = bool(getattr(result, "is_quantized", False))
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, stride,
                          memory_format, is_quantized, {})


class ShapeProp(Interpreter):
    """Run a graph node by node on example inputs and store, for every node
    whose value holds tensors, ``node.meta['tensor_meta']`` (a
    :class:`TensorMetadata`, or a structure of them for tuples/lists) and
    ``node.meta['type']``.

    Parameters
    ----------
    gm : GraphModule
        The module to run.

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> from ptcore.fx.passes.shape_prop import ShapeProp
    >>> gm = fx.symbolic_trace(ptcore.nn.Linear(4, 2))
    >>> _ = ShapeProp(gm).propagate(ptcore.randn(3, 4))
    >>> [n.meta['tensor_meta'].shape for n in gm.graph.nodes if n.op != 'output']
    [ptcore.Size([3, 4]), ptcore.Size([2, 4]), ptcore.Size([2]), ptcore.Size([3, 2])]
    """

    def __init__(self, gm, fake_mode=None):
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp: fake_mode is not supported by ptcore.fx")
        super().__init__(gm)

    def run_node(self, n):
        result = super().run_node(n)
        found_tensor = False

        def extract(obj):
            nonlocal found_tensor
            if isinstance(obj, ptcore.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on ``args``, recording metadata on every node.

        Returns
        -------
        object
            The module's output.
        """
        return super().run(*args)
