"""``ptcore._vmap_internals`` (``torch._vmap_internals``): the older vmap that
``torch.autograd.functional`` was built on, which libraries still import by this path
(pytorch-minimize's Jacobian operators and its SciPy minimizer:
``from torch._vmap_internals import _vmap``).  It is :func:`ptcore.func.vmap` with the older
signature: no randomness or chunking, ``out_dims`` an int or a tuple of ints, and
``allow_none_pass_through`` letting outputs be None (the gradients that
``autograd.grad(..., allow_unused=True)`` leaves out)."""
import functools
import warnings

import ptcore
from ptcore.func._vmap import vmap as _func_vmap

__all__ = ["vmap"]


def _check_out_dims(out_dims, func):
    """torch's check of the older vmap's ``out_dims``: an int or a tuple of ints."""
    if isinstance(out_dims, int) or (isinstance(out_dims, tuple) and
                                     all(isinstance(d, int) for d in out_dims)):
        return
    name = getattr(func, "__name__", repr(func))
    raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int or a "
                     f"tuple of int representing where in the outputs the vmapped dimension "
                     f"should appear.")


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through=False):
    """``torch._vmap_internals._vmap``: ``func`` vectorized over dimension ``in_dims`` of its
    positional inputs (see :func:`ptcore.func.vmap`).  With ``allow_none_pass_through``, a
    None among ``func``'s outputs comes back as None instead of raising."""
    @functools.wraps(func)
    def wrapped(*args):
        _check_out_dims(out_dims, func)
        if not allow_none_pass_through:
            return _func_vmap(func, in_dims, out_dims)(*args)
        none_at = []

        def without_nones(*inner):
            out = func(*inner)
            if out is None:
                none_at.append(None)
                return ptcore.zeros(())
            if isinstance(out, tuple):
                none_at.extend(i for i, o in enumerate(out) if o is None)
                return tuple(ptcore.zeros(()) if o is None else o for o in out)
            return out

        res = _func_vmap(without_nones, in_dims, out_dims)(*args)
        if none_at == [None]:
            return None
        if none_at:
            res = tuple(None if i in none_at else r for i, r in enumerate(res))
        return res
    return wrapped


def vmap(func, in_dims=0, out_dims=0):
    """``torch._vmap_internals.vmap``, deprecated there for :func:`ptcore.vmap` (a
    FutureWarning says so): :func:`_vmap` without None outputs."""
    warnings.warn("Please use `torch.vmap` instead of `torch._vmap_internals.vmap`.",
                  FutureWarning, stacklevel=2)
    return _vmap(func, in_dims, out_dims)
