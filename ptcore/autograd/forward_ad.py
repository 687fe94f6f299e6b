"""Forward-mode automatic differentiation (``torch.autograd.forward_ad``).

Inside a :class:`dual_level`, :func:`make_dual` attaches a *tangent* to a
tensor; every op on such a *dual tensor* computes the tangent of its result
(its Jacobian-vector product) alongside the value, through the forward-AD
layer of the one dispatch point.  :func:`unpack_dual` reads the tangent
back; tangents vanish when their level exits.

Examples
--------
>>> import ptcore
>>> import ptcore.autograd.forward_ad as fwAD
>>> x = ptcore.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, ptcore.ones(2)).sin()
...     fwAD.unpack_dual(y).tangent
tensor([ 0.5403, -0.4161])
"""
from typing import NamedTuple, Optional

from ptcore._tensor import _TensorBase
from ptcore._dispatch import forward_ad as _L
from ptcore._dispatch import batching as _batching
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd import _record
from ptcore.autograd.grad_mode import _DecoratorContextManager
from ptcore.autograd import _jvp_formulas

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_jvp_formulas.install()

# the levels opened through this module (torch allows one at a time; the
# ptcore.func transforms open their own, which nest)
_public = []


def enter_dual_level():
    """Open a new forward-AD level and return its index (torch allows one)."""
    if _public:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    lv = _L.push_level()
    _public.append(lv.idx)
    # the layer is on for the whole level: Python binds ``x.index_put_`` before it
    # evaluates the ``make_dual`` among its arguments, which would switch it on too late
    _L.enable_layer()
    return lv.idx


def exit_dual_level(*, level=None):
    """Close ``level`` (default: the current one); its tangents vanish."""
    if level is None:
        if not _public:
            raise RuntimeError("Dual level must be a positive number.")
        level = _public[-1]
    if not _public or _public[-1] != level or _L.current_level() != level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _L.pop_level(level)
    _public.pop()


def _resolve_level(level, what):
    if level is None:
        if not _public:
            return None
        return _public[-1]
    if not isinstance(level, int) or not _L.is_live(level):
        raise RuntimeError(f"Invalid level given to {what}")
    return level


def _check_diff(t, what):
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                         f"{_dtype_name(t.dtype)}")


def _dtype_name(dt):
    return "torch." + str(dt).split(".")[-1]


def _shape(t):
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: ``tensor``'s value with ``tangent`` attached at ``level``.

    The result is a view of ``tensor`` (it shares its data and, when
    ``tensor`` requires grad, its autograd history).  ``tangent`` must have
    ``tensor``'s shape; it is stored as given when its strides match the
    primal's, else copied into the primal's layout (as torch does).

    Raises
    ------
    RuntimeError
        No dual level is open, an invalid ``level``, shapes that differ, or
        ``tensor`` already has a tangent at ``level``.
    ValueError
        ``tensor`` or ``tangent`` is not floating point or complex.
    """
    if not isinstance(tensor, _TensorBase) or not isinstance(tangent, _TensorBase):
        raise TypeError(f"make_dual: expected Tensors, got {type(tensor).__name__} and "
                        f"{type(tangent).__name__}")
    lvl = _resolve_level(level, "_make_dual")
    if lvl is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    return _check_and_make_dual(tensor, tangent, lvl)


def _check_and_make_dual(tensor, tangent, lvl):
    _check_diff(tensor, "primal")
    _check_diff(tangent, "tangent")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {_shape(tensor)} while "
            f"the given forward gradient is of size {_shape(tangent)}.")
    if tensor.device != tangent.device:
        raise RuntimeError(f"Trying to set a forward gradient on a Tensor on {tensor.device} "
                           f"with a tangent on {tangent.device}: they must be on the same device")
    if _L.get_tangent(tensor, lvl) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {lvl} is not supported.")
    return _make_dual(tensor, tangent, lvl)


def _make_dual(tensor, tangent, lvl):
    with _L.hidden(lvl):
        out = tensor.view_as(tensor)     # an alias (lower levels' tangents carried)
    # (a vmap's batched tensor overlaps; a batched tangent of an unbatched primal,
    # as vmap over jvp gives, stays batched: its samples are the tangents)
    if tangent.numel() > 1 and tuple(tangent.stride()) != tuple(tensor.stride()) and \
            not _L.overlapping(tensor) and \
            not (_batching.is_batched(tangent) and not _batching.is_batched(tensor)):
        t = _L.empty_like_layout(tensor, tangent.dtype)
        t.copy_(tangent)
        tangent = t
    _L.set_tangent(out, lvl, tangent)
    return out


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` of a dual tensor (``tangent`` None if it has none)."""
    primal: _TensorBase
    tangent: Optional[_TensorBase]


UnpackedDualTensor.__module__ = "ptcore.autograd.forward_ad"


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at ``level`` (default: the current
    one): ``primal`` is a view of ``tensor`` without the tangent, ``tangent``
    the tangent itself (None when there is none, or no level is open)."""
    lvl = _resolve_level(level, "_fw_primal")
    if lvl is None:
        return UnpackedDualTensor(tensor, None)
    return _unpack(tensor, lvl)


def _unpack(tensor, lvl):
    tg = _L.get_tangent(tensor, lvl)
    if tg is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(primal_alias(tensor, lvl), tg)


def primal_alias(tensor, lvl):
    """``tensor``'s data and autograd history without its tangent at ``lvl``
    (the lower levels' tangents kept).  Not a core view of ``tensor``: views
    of it must not take ``tensor``'s tangent from their common base."""
    p = tensor.detach()
    for k in range(lvl):
        tg = _L.get_tangent(tensor, k)
        if tg is not None:
            _L.set_tangent(p, k, tg)
    if tensor.requires_grad and _gm.is_grad_enabled():
        _record._on_view(tensor, p, name="AliasBackward0")
    return p


class dual_level(_DecoratorContextManager):
    """Context manager (or decorator) for one forward-AD level: tangents
    made inside it vanish on exit.

    Examples
    --------
    >>> import ptcore
    >>> import ptcore.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(ptcore.tensor(3.0), ptcore.tensor(1.0)) ** 2
    ...     fwAD.unpack_dual(y).tangent
    tensor(6.)
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
