"""``map``: a function applied to every slice of its inputs' first dimension,
the results stacked (``torch._higher_order_ops.map``)."""
import builtins

import ptcore
from ptcore.tensor import Tensor
from ptcore.utils import _pytree as pytree

__all__ = ["map"]


def map(f, xs, *args):
    """``stack([f(xs[i], *args) for i in range(len(xs))])`` over pytrees.

    Parameters
    ----------
    f : callable
        Called with a slice of ``xs`` (a tensor, or a pytree shaped as ``xs``)
        and ``args``; returns a tensor or a pytree of tensors.
    xs : Tensor or pytree of Tensors
        Leaves of one (non-zero) size along their first dimension.
    *args
        Passed to every call.

    Returns
    -------
    Tensor or pytree of Tensors
        The outputs of the calls stacked along a new first dimension.

    Examples
    --------
    >>> map(lambda x, c: x * c, ptcore.arange(6.0).view(3, 2), 2.0)
    tensor([[ 0.,  2.],
            [ 4.,  6.],
            [ 8., 10.]])
    """
    flat_xs, xs_spec = pytree.tree_flatten(xs)
    if not builtins.all(isinstance(t, Tensor) for t in flat_xs):
        raise RuntimeError(f"Mapped xs can only consist of tensors. Got xs {flat_xs}.")
    if not flat_xs:
        raise RuntimeError("Mapped xs can only consist of tensors. Got xs [].")
    shapes = [x.shape for x in flat_xs]
    if builtins.any(len(s) == 0 for s in shapes):
        raise RuntimeError("Mapped xs must have at least one dimension.")
    lead = shapes[0][0]
    if lead == 0:
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    if builtins.any(s[0] != lead for s in shapes):
        raise RuntimeError(f"Leading dimensions of mapped xs must be consistent. Got shapes "
                           f"{shapes}.")
    outs, spec = [], None
    for i in builtins.range(lead):
        leaves, s = pytree.tree_flatten(f(pytree.tree_unflatten([x[i] for x in flat_xs],
                                                                xs_spec), *args))
        if spec is None:
            spec = s
        elif s != spec:
            raise RuntimeError("map: f's outputs differ in structure between slices")
        outs.append(leaves)
    return pytree.tree_unflatten([ptcore.stack([o[k] for o in outs])
                                  for k in builtins.range(len(outs[0]))], spec)
