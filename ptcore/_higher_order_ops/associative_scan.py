"""``associative_scan``: an inclusive scan with an associative combine function
(``torch._higher_order_ops.associative_scan``).

The scan is torch's: the combine function is applied to neighbouring pairs
of all elements at once, recursively on the reduced halves, and the results
are interleaved (``log2(n)`` levels of batched calls), so that the order of
the combinations, and with it the floating-point result, is torch's.
"""
import builtins
import functools

import ptcore
from ptcore.func import vmap
from ptcore.tensor import Tensor
from ptcore.utils import _pytree as pytree

__all__ = ["associative_scan", "generic_associative_scan"]


def _canonical_dim(ndim, dim):
    if not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool):
        raise ValueError("Dim must be an int, but got " + str(type(dim)))
    if not -builtins.max(ndim, 1) <= dim < builtins.max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-builtins.max(ndim, 1)}, {builtins.max(ndim, 1) - 1}], but got {dim})")
    return dim % builtins.max(ndim, 1)


def _validate(combine_fn, leaves, dim, reverse, combine_mode):
    if not callable(combine_fn):
        raise ValueError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool):
        raise ValueError("Dim must be an int, but got " + str(type(dim)))
    if not isinstance(reverse, builtins.bool):
        raise RuntimeError("Reverse must be a bool, but got " + str(type(reverse)))
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"Combine_mode must either 'pointwise' or 'generic', but got "
                         f"{combine_mode}")
    if combine_mode == "pointwise" and not builtins.all(
            isinstance(x, Tensor) and x.device.type in ("cuda", "xpu") for x in leaves):
        raise ValueError("For combine_mode='pointwise', all input tensors need to be on CUDA "
                         "or XPU")
    if not leaves:
        raise ValueError("Expected at least 1 xs leaf")
    if builtins.any(not isinstance(x, Tensor) for x in leaves):
        raise ValueError("xs leaves must be a Tensor")
    if builtins.any(x.is_sparse for x in leaves):
        raise ValueError("xs leaves must dense Tensors, consider using `to_dense()`")
    if builtins.any(x.ndim <= dim or x.shape[dim] == 0 for x in leaves):
        raise ValueError("All xs leaves must at least have 'dim' number of dimensions and scan "
                         "dimension > 0")


def associative_scan(combine_fn, xs, dim, reverse=False, combine_mode="pointwise"):
    """Inclusive scan of ``xs`` along ``dim`` with the associative ``combine_fn``.

    Parameters
    ----------
    combine_fn : callable
        ``(left, right) -> result``: tensors, or pytrees shaped as ``xs``;
        pure and associative.  With ``combine_mode="pointwise"`` it must be
        elementwise (then it is called on whole batches of slices);
        ``"generic"`` calls it through ``vmap``, one slice at a time.
    xs : Tensor or pytree of Tensors
        Leaves of one size along ``dim``.
    dim : int
        The dimension to scan over.
    reverse : bool, optional
        Scan from the end of ``dim``.
    combine_mode : {"pointwise", "generic"}, optional
        ``"pointwise"`` (the default, as torch) needs CUDA tensors, as torch's.

    Returns
    -------
    Tensor or pytree of Tensors
        ``out[i] = combine_fn(out[i-1], xs[i])``, ``out[0] = xs[0]``.

    Examples
    --------
    >>> x = ptcore.arange(1.0, 6.0)
    >>> associative_scan(lambda a, b: a + b, x, 0, combine_mode="generic")
    tensor([ 1.,  3.,  6., 10., 15.])
    """
    leaves, spec = pytree.tree_flatten(xs)
    if leaves and isinstance(leaves[0], Tensor):
        dim = _canonical_dim(leaves[0].ndim, dim)
    _validate(combine_fn, leaves, dim, reverse, combine_mode)
    leaves = [ptcore.movedim(x, dim, 0) for x in leaves]
    if reverse:
        leaves = [ptcore.flip(x, [0]) for x in leaves]
    if combine_mode == "generic":
        zeros = pytree.tree_unflatten([0] * len(leaves), spec)
        fn = vmap(combine_fn, in_dims=(zeros, zeros), out_dims=0)
    else:
        fn = combine_fn
    n = len(leaves)

    def operator(*args):
        if len(args) != 2 * n:
            raise AssertionError(f"Combine_fn received wrong number of arguments, expected "
                                 f"{2 * n}, but got {len(args)}")
        return fn(pytree.tree_unflatten(list(args[:n]), spec),
                  pytree.tree_unflatten(list(args[n:]), spec))

    out = generic_associative_scan(operator, leaves)
    if reverse:
        out = [ptcore.flip(x, [0]) for x in out]
    out = [ptcore.movedim(x, 0, dim) for x in out]
    return pytree.tree_unflatten(out, spec)


def _interleave(a, b, dim=0):
    """``a[0], b[0], a[1], b[1], ...`` along ``dim`` (``a`` may be one longer)."""
    tail = None
    if a.shape[dim] == b.shape[dim] + 1:
        a, tail = a.narrow(dim, 0, b.shape[dim]), a.narrow(dim, b.shape[dim], 1)
    out = ptcore.flatten(ptcore.stack([a, b], dim=dim + 1), start_dim=dim, end_dim=dim + 1)
    return out if tail is None else ptcore.cat([out, tail], dim=dim)


def _slice(x, dim, start, stop, step=1):
    index = [builtins.slice(None)] * x.ndim
    index[dim] = builtins.slice(start, stop, step)
    return x[tuple(index)]


def generic_associative_scan(operator, leaves, dim=0, additional_inputs=()):
    """The scan of the lists of tensors ``leaves`` along ``dim`` with
    ``operator(*lefts, *rights, *additional_inputs) -> pytree``, torch's
    algorithm (see the module documentation)."""
    def call(*args):
        return pytree.tree_leaves(operator(*args))

    def _scan(elems):
        num = elems[0].shape[dim]
        if num < 2:
            return elems
        reduced = call(*[_slice(e, dim, 0, -1, 2) for e in elems],
                       *[_slice(e, dim, 1, None, 2) for e in elems], *additional_inputs)
        odd = _scan(reduced)
        if num % 2 == 0:
            even = call(*[_slice(e, dim, 0, -1) for e in odd],
                        *[_slice(e, dim, 2, None, 2) for e in elems], *additional_inputs)
        else:
            even = call(*odd, *[_slice(e, dim, 2, None, 2) for e in elems], *additional_inputs)
        even = [ptcore.cat([_slice(e, dim, 0, 1), r], dim=dim) if r.numel() > 0
                else _slice(e, dim, 0, 1) for e, r in zip(elems, even)]
        if len(even) != len(odd):
            raise ValueError(f"length mismatch: {[len(even), len(odd)]}")
        return [functools.partial(_interleave, dim=dim)(a, b) for a, b in zip(even, odd)]

    return _scan(list(leaves))
