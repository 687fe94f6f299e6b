"""``scan``: a loop over a dimension that threads a carry and stacks the
per-step outputs (``torch._higher_order_ops.scan``)."""
import builtins

import ptcore
from ptcore.tensor import Tensor
from ptcore.utils import _pytree as pytree

__all__ = ["scan"]


def _validate(combine_fn, init_leaves, xs_leaves, dim, reverse):
    if not callable(combine_fn):
        raise RuntimeError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool):
        raise RuntimeError("Dim must be an int, but got " + str(type(dim)))
    if not isinstance(reverse, builtins.bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if not init_leaves:
        raise RuntimeError("scan() operator requires init leaves.")
    for x in init_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"All init leaves must be a Tensor but got {x}")
    for x in xs_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"All xs leaves must be a Tensor but got {x}")
    if builtins.any(x.ndim <= dim or x.shape[dim] == 0 for x in xs_leaves):
        raise RuntimeError("All xs leaves must at least have 'dim' number of dimensions and scan "
                           "dimension > 0")


def _check_carry(init_leaves, init_spec, carry):
    leaves, spec = pytree.tree_flatten(carry)
    if spec != init_spec:
        raise RuntimeError(f"The tree structure of the inits and the carries are not "
                           f"identical: {init_spec} vs {spec}")
    for a, b in zip(init_leaves, leaves):
        if not isinstance(b, Tensor) or a.shape != b.shape or a.dtype != b.dtype \
                or a.device != b.device:
            what = (f"{tuple(b.shape)}, {b.dtype}, {b.device}" if isinstance(b, Tensor)
                    else type(b).__name__)
            raise RuntimeError(f"The metadata of the carry must match that of init: init is "
                               f"{tuple(a.shape)}, {a.dtype}, {a.device}; the carry is {what}")
    return leaves


def scan(combine_fn, init, xs, *, dim=0, reverse=False):
    """``(final_carry, ys)``: ``carry, y_i = combine_fn(carry, x_i)`` along ``dim``.

    Parameters
    ----------
    combine_fn : callable
        ``(carry, x) -> (next_carry, y)``; ``x`` is a slice of ``xs`` along
        ``dim`` (a tensor or a pytree shaped as ``xs``), ``next_carry`` has the
        structure, shapes, dtypes and devices of ``init``.
    init : Tensor or pytree of Tensors
        The first carry.
    xs : Tensor or pytree of Tensors
        Leaves of one size along ``dim``.
    dim : int, optional
        The dimension to scan over.
    reverse : bool, optional
        Scan from the end of ``dim`` (the outputs keep ``xs``'s order).

    Returns
    -------
    final_carry, ys
        The last carry, and each ``y`` leaf stacked along ``dim``.

    Examples
    --------
    >>> def add(c, x):
    ...     c = c + x
    ...     return c, c.clone()
    >>> carry, ys = scan(add, ptcore.zeros(1), ptcore.arange(4.0).view(4, 1))
    >>> carry, ys.flatten()
    (tensor([6.]), tensor([0., 1., 3., 6.]))
    """
    init_leaves, init_spec = pytree.tree_flatten(init)
    xs_leaves, xs_spec = pytree.tree_flatten(xs)
    if not xs_leaves:
        return init, []
    if isinstance(xs_leaves[0], Tensor) and isinstance(dim, builtins.int) \
            and not isinstance(dim, builtins.bool):
        nd = builtins.max(xs_leaves[0].ndim, 1)
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {dim})")
        dim %= nd
    _validate(combine_fn, init_leaves, xs_leaves, dim, reverse)
    n = xs_leaves[0].shape[dim]
    if builtins.any(x.shape[dim] != n for x in xs_leaves):
        raise RuntimeError(f"All xs leaves must have the same size along dim {dim}, got "
                           f"{[x.shape[dim] for x in xs_leaves]}")
    carry = init
    steps = builtins.range(n - 1, -1, -1) if reverse else builtins.range(n)
    ys, y_spec = [], None
    for i in steps:
        out = combine_fn(carry, pytree.tree_unflatten([x.select(dim, i) for x in xs_leaves],
                                                      xs_spec))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise RuntimeError("combine_fn must return a tuple (next_carry, y), got "
                               f"{type(out).__name__}")
        carry, y = out
        _check_carry(init_leaves, init_spec, carry)
        leaves, spec = pytree.tree_flatten(y)
        if y_spec is None:
            y_spec = spec
        elif spec != y_spec:
            raise RuntimeError("combine_fn's outputs y differ in structure between steps")
        ys.append(leaves)
    if reverse:
        ys.reverse()
    stacked = []
    for k in builtins.range(len(ys[0])):
        col = [step[k] for step in ys]
        stacked.append(ptcore.stack(col, dim=dim) if isinstance(col[0], Tensor) else None)
    return carry, pytree.tree_unflatten(stacked, y_spec)
