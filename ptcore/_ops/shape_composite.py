"""Variants of the shape and view ops: ``hsplit``/``vsplit``/``dsplit``, the
``*_copy`` forms, the unsafe splits, the conjugate-transpose views (``mH``, ``H``,
``adjoint``) and the in-place view methods (``squeeze_``, ``t_``, ``transpose_`` ...)."""
import builtins
import numbers
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._ops._composite_common import _check_tensor, _wrap_dim, _recording, _fresh
from ptcore._ops._out import copy_out_exact, check_out_arg
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._dispatch.declarations import DECLARED

__all__ = [
    "hsplit", "vsplit", "dsplit", "as_strided_", "slice_copy", "split_with_sizes",
    "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "slice_inverse",
]


def _dir_split(input, ios, name, min_dim, dim):
    _check_tensor(input, name, "input", 1)
    if input.dim() < min_dim:
        s = "" if min_dim == 1 else ""
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension{s}, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(ios, numbers.Integral) and not isinstance(ios, builtins.bool):
        size = input.shape[dim]
        if ios == 0 or size % ios != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{ios}!")
    else:
        ios = list(ios)
    return input.tensor_split(ios, dim)


def _sections_or_indices(name, indices_or_sections, sections, indices):
    """The one split argument of torch's two overloads ``(input, int sections)``
    and ``(input, tuple indices)``, given by position or by either keyword."""
    given = [v for v in (indices_or_sections, sections, indices) if v is not None]
    if len(given) != 1:
        raise TypeError(f"{name}() takes one of 'sections' (int) or 'indices' (tuple of ints), "
                        f"got {len(given)}")
    return given[0]


def hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """Split along dim 1 (dim 0 for 1-D tensors) (``torch.hsplit``)."""
    ios = _sections_or_indices("hsplit", indices_or_sections, sections, indices)
    d = 0 if isinstance(input, _TensorBase) and input.dim() == 1 else 1
    return _dir_split(input, ios, "hsplit", 1, d)


def vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """Split along dim 0 of a tensor with at least 2 dims (``torch.vsplit``)."""
    ios = _sections_or_indices("vsplit", indices_or_sections, sections, indices)
    return _dir_split(input, ios, "vsplit", 2, 0)


def dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    """Split along dim 2 of a tensor with at least 3 dims (``torch.dsplit``)."""
    ios = _sections_or_indices("dsplit", indices_or_sections, sections, indices)
    return _dir_split(input, ios, "dsplit", 3, 2)


def _conj_of_0d(self, what):
    """``mH``, ``H`` or ``adjoint()`` of a 0-d tensor: its conjugate, with torch's deprecation
    warning."""
    warnings.warn(f"{what} is deprecated on 0-D tensors. Consider using x.conj().",
                  UserWarning, stacklevel=3)
    return self.conj() if self.is_complex() else self


def _mH(self):
    if self.dim() == 0:
        return _conj_of_0d(self, "Tensor.mH")
    if self.dim() < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return self.mT.conj() if self.is_complex() else self.mT


def _H(self):
    if self.dim() == 0:
        return _conj_of_0d(self, "Tensor.H")
    if self.dim() != 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor. For batches of matrices, consider using "
                           "tensor.mH")
    return self.mT.conj() if self.is_complex() else self.mT


@_method_form("adjoint")        # (ptcore.adjoint is the package root's: it calls this method)
def adjoint(self):
    """Conjugate transpose of the last two dims (``Tensor.adjoint``)."""
    if self.dim() == 0:
        return _conj_of_0d(self, "adjoint()")
    if self.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {self.dim()}-D tensor.")
    return _mH(self)


def _rebind(self, name, *args):
    """In-place metadata ops (``squeeze_``, ``t_`` ...): compute the view and
    make ``self`` take its shape/strides/offset (and its autograd history)."""
    v = getattr(self, name)(*args)
    self._bump_version()          # torch counts metadata changes as in-place writes
    if _recording(self):
        if self.grad_fn is None and self._base is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        _C._set_data(self, v)
        self._grad_fn = node = v._grad_fn
        if hasattr(node, "_bver"):
            # the view node of ``self`` itself now: stamped with the bumped
            # version, else it would look stale (its base modified) and be
            # rebuilt from a base ``self`` does not have
            node._bver = self._version
        self._output_nr = getattr(v, "_output_nr", 0)
        return self
    _C._set_data(self, v)
    return self


def squeeze_(self, *dim):
    """In-place :meth:`squeeze` (rebinds the shape)."""
    return _rebind(self, "squeeze", *dim)


def unsqueeze_(self, dim):
    """In-place :meth:`unsqueeze`."""
    return _rebind(self, "unsqueeze", dim)


def t_(self):
    """In-place :meth:`t`."""
    return _rebind(self, "t")


def transpose_(self, dim0, dim1):
    """In-place :meth:`transpose`."""
    return _rebind(self, "transpose", dim0, dim1)


def swapaxes_(self, axis0, axis1):
    """In-place :meth:`swapaxes` (:meth:`transpose_` under NumPy's argument names)."""
    return _rebind(self, "transpose", axis0, axis1)


@_method_form("as_strided_")    # (the function ptcore.as_strided_ too)
def as_strided_(self, size, stride, storage_offset=None):
    """In-place :meth:`as_strided`."""
    if storage_offset is None:
        return _rebind(self, "as_strided", size, stride)
    return _rebind(self, "as_strided", size, stride, storage_offset)


def _write_outs(name, pieces, out):
    """The pieces of ``unbind_copy``/``split_copy``/``split_with_sizes_copy``
    written into the list ``out`` (torch returns None); ``split_copy``'s outs
    must have the pieces' shapes already, the others' are resized."""
    if not isinstance(out, (tuple, list)) or len(out) != len(pieces):
        raise RuntimeError(f"{name}(): expected out to be a list of {len(pieces)} tensors")
    for o, r in zip(out, pieces):
        if name == "split_copy":
            o.copy_(r)
        else:
            copy_out_exact(o, r)


# the copied methods whose argument the X_copy op requires (the methods
# themselves take it as varargs: x.view() is x.view(()) there)
_REQUIRED = {"expand": "size", "permute": "dims", "view": "size"}
# the X_copy ops writing a list of tensors (their out= is a tuple of Tensors)
_LIST_OUT = ("unbind_copy", "split_copy", "split_with_sizes_copy")


def _copy_op(name, method):
    needs = _REQUIRED.get(method)

    def fn(input, *args, out=None, **kwargs):
        if name not in _LIST_OUT:
            check_out_arg(out, name)
        elif out is not None and not isinstance(out, (tuple, list)):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                            f"{type(out).__name__}")
        if needs is not None and not args and not kwargs:
            raise TypeError(f'{name}() missing 1 required positional arguments: "{needs}"')
        r = input if method == "alias" else getattr(input, method)(*args, **kwargs)
        if isinstance(r, (tuple, list)):
            r = tuple(_fresh(v) for v in r)
            return r if out is None else _write_outs(name, r, out)
        r = _fresh(r)
        return copy_out_exact(out, r)
    fn.__name__ = fn.__qualname__ = name
    copied = "input" if method == "alias" else f"input.{method}(...)"
    fn.__doc__ = f"A contiguous copy of ``{copied}`` (``torch.{name}``)."
    return fn


def _fn_copy_op(name, base):
    def fn(input, *, out=None):
        check_out_arg(out, name)
        r = _fresh(getattr(ptcore, base)(input))
        return copy_out_exact(out, r)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"A contiguous copy of ``ptcore.{base}(input)`` (``torch.{name}``)."
    return fn


# the X_copy ops that declare the method they copy (copy_of)
for _n, _m in sorted((d.name, d.copy_of) for d in DECLARED.values() if d.copy_of is not None):
    globals()[_n] = _copy_op(_n, _m)
    __all__.append(_n)


for _n in ("view_as_real_copy", "view_as_complex_copy"):
    globals()[_n] = _fn_copy_op(_n, _n[:-5])
    __all__.append(_n)


del _n, _m


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """A contiguous copy of ``input[..., start:end:step, ...]`` along ``dim`` (``torch.slice_copy``)."""
    check_out_arg(out, "slice_copy")
    d = _wrap_dim(dim, input.dim())
    r = _fresh(input[(slice(None),) * d + (slice(start, end, step),)])
    return copy_out_exact(out, r)


def split_with_sizes(input, split_sizes, dim=0):
    """Split into chunks of the given sizes (``torch.split_with_sizes``)."""
    return input.split_with_sizes(split_sizes, dim)


def _unviewed(pieces):
    """Aliases of ``pieces`` that are not views (torch's unsafe_* splits: each
    piece's ``_base`` is None and it may be written in place; autograd records
    the split as one node of its own)."""
    return tuple(o.detach() for o in pieces)


def unsafe_split(input, split_size, dim=0):
    """:meth:`Tensor.split` without view tracking (``torch.unsafe_split``)."""
    return _unviewed(input.split(split_size, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """:func:`split_with_sizes` without view tracking (``torch.unsafe_split_with_sizes``)."""
    return _unviewed(split_with_sizes(input, split_sizes, dim))


def unsafe_chunk(input, chunks, dim=0):
    """:meth:`Tensor.chunk` without view tracking (``torch.unsafe_chunk``)."""
    return _unviewed(input.chunk(chunks, dim))


swapdims_ = transpose_      # (torch's alias)
# the conjugate transposes are properties
_method_form("mH", property(_mH))
_method_form("H", property(_H))


# -- slice_inverse ------------------------------------------------------------------------------

def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of ``src.slice(dim, start, end, step)`` (``torch.slice_inverse``): a view
    of ``input``'s storage (``input`` being that slice) with ``src``'s sizes, strides and
    storage offset; ``RuntimeError`` when they reach outside ``input``'s storage."""
    _check_tensor(input, "slice_inverse", "input", 1)
    _check_tensor(src, "slice_inverse", "src", 2)
    return input.as_strided(tuple(src.shape), tuple(src.stride()), src.storage_offset())


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "shape")
del _bind_module
