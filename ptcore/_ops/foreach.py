"""``torch._foreach_*``: one op applied to every tensor of a list.

PyTorch's multi-tensor ops, which optimizers, gradient clipping and EMA
updates written against torch call directly.  Each is the per-tensor op
(a Tensor method) over the list, so dtype promotion, in-place rules and
autograd are the per-tensor op's.  Out-of-place forms return a tuple of new
tensors; in-place forms (trailing ``_``) update the tensors and return the
list they were given.  The second argument picks the variant as in torch: a
number, a list of numbers, a list of tensors, or (``add``, ``sub``, ``mul``,
``div``) one 0-d tensor.

The common case (contiguous CPU float32/float64 tensors, operands of each
tensor's dtype and shape, nothing for autograd to record, no dispatch layer
on) runs as one loop over the lists in ``ptcore._ops.kernels._foreach`` (and
``_reduce.norm2_each``): the same kernels on the same operands as the
per-tensor ops, without a Python call per tensor.
"""
import numbers

from ptcore._dispatch.declarations import DECLARED
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore._ops.kernels import _foreach as _K
from ptcore._ops.kernels import _reduce as _R
from ptcore._ops.kernels._ewdrv import BINARY as _B_CODES, TERNARY as _T_CODES, UNARY as _U_CODES
from ptcore._settings import grad_state as _grad
from ptcore._tensor import _TensorBase
from ptcore._dispatch.table import entries as _entries

_linalg = _entries("linalg")      # ptcore.linalg's ops through the operator table

__all__ = []        # the list forms made below, then the functions written out


_NOT_GIVEN = object()


def _tensors(name, tensors, argno=0):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument {argno} must be a list or tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    bad = next((i for i, t in enumerate(tensors) if not isinstance(t, _TensorBase)), None)
    if bad is not None:
        raise TypeError(f"expected Tensor as element {bad} in argument {argno}, but got "
                        f"{type(tensors[bad]).__name__}")
    return tensors


def _self(name, tensors):
    _tensors(name, tensors)
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _same_length(name, tensors, others, argno):
    _tensors(name, others, argno)
    if len(others) != len(tensors):
        raise RuntimeError("Tensor lists must have the same number of tensors, got "
                           f"{len(tensors)} and {len(others)}")
    return others


def _is_scalar_list(v):
    return isinstance(v, (list, tuple)) and all(
        isinstance(x, (numbers.Number, bool)) for x in v)


def _per_tensor_args(name, tensors, other, tensor_ok):
    """The second operand for each tensor: a number, one per tensor from a
    list of numbers or tensors, or one 0-d tensor (where the op takes it)."""
    n = len(tensors)
    if _is_scalar_list(other) and len(other) > 0:
        if len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other), False
    if isinstance(other, (list, tuple)):
        return list(_same_length(name, tensors, other, 1)), True
    if isinstance(other, _TensorBase) and tensor_ok and other.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                           f"dimensions and {other.numel()} elements.")
    return [other] * n, isinstance(other, _TensorBase)


def _fast(kind, code, operands, extra, inplace):
    """The multi-tensor loop (``_foreach.run``) over ``operands``: ``self``
    when done in place, the tuple of results, or None when the call is not
    its common case (the caller then loops over the per-tensor ops)."""
    if _layers_on[0]:
        return None
    g = _grad
    r = _K.run(kind, code, operands, extra, inplace, g.enabled, not g.inference)
    if r is None:
        return None
    return operands[0] if inplace else tuple(r)


def _add_kernel(op, alpha):
    """(kernel code, alpha parameter) of float ``add``/``sub`` with ``alpha``
    as ``pointwise._add_impl`` picks them (a plain add/sub for alpha 1, else
    the fused ``add_alpha`` with the sign folded in); None for other alphas."""
    if alpha is None:
        return _B_CODES[op], None
    if type(alpha) is not int and type(alpha) is not float:
        return None
    a = -alpha if op == "sub" else alpha
    if a == 1:
        return _B_CODES["add"], None
    if op == "sub" and a == -1:
        return _B_CODES["sub"], None
    return _B_CODES["add_alpha"], float(a)


def _make_unary(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"
    method = op + "_" if inplace else op
    code = _U_CODES.get(op)

    def f(self):
        _self(name, self)
        if code is not None:
            r = _fast(1, code, [self], None, inplace)
            if r is not None:
                return r
        out = tuple(getattr(t, method)() for t in self)
        return self if inplace else out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{op}`` of each tensor of ``self``" + (" (in place)." if inplace else ".")
    return f


def _make_binary(op, inplace, takes_alpha, tensor_ok, scalar_method):
    name = f"_foreach_{op}{'_' if inplace else ''}"
    sfx = "_" if inplace else ""

    def f(self, other, *, alpha=None):
        if isinstance(self, numbers.Number) and op == "pow" and not inplace:
            # pow(number, exponents): the number to each tensor's power
            return tuple(self ** t for t in _self(name, other))
        _self(name, self)
        others, are_tensors = _per_tensor_args(name, self, other, tensor_ok)
        if alpha is not None and not (takes_alpha and are_tensors):
            raise TypeError(f"{name}() got an unexpected keyword argument 'alpha' for "
                            f"a {type(other).__name__} operand")
        kernel = _add_kernel(op, alpha) if op in ("add", "sub") else \
            (_B_CODES[op], None) if op in ("mul", "div") else None
        if kernel is not None:
            r = _fast(2, kernel[0], [self, others], kernel[1], inplace)
            if r is not None:
                return r
        if are_tensors and op in ("maximum", "minimum"):
            for t in self:
                if t.dtype.is_complex:
                    # (torch's foreach list kernel, not minimum()'s RuntimeError)
                    raise NotImplementedError(f'"{op}_cpu" not implemented for '
                                              f"'{t.dtype._legacy}'")
        kw = {} if alpha is None else {"alpha": alpha}
        method = (op if are_tensors else scalar_method) + sfx
        out = tuple(getattr(t, method)(o, **kw) for t, o in zip(self, others))
        return self if inplace else out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``{op}`` of each tensor of ``self`` with a number, one number per tensor, "
                 "one tensor per tensor" + (" or a 0-d tensor" if tensor_ok else "")
                 + (" (in place)." if inplace else "."))
    return f


def _pointwise_scalars(name, self, scalars):
    if isinstance(scalars, _TensorBase):
        if scalars.dim() != 1:
            raise RuntimeError("Expected packed scalar Tensor to be of dimension 1. Got "
                               f"{scalars.dim()} instead.")
        if scalars.numel() != len(self):
            raise RuntimeError(f"Expected length of scalars to match input of length "
                               f"{len(self)} but got {scalars.numel()} instead.")
        return scalars.tolist()
    if isinstance(scalars, (list, tuple)):
        if len(scalars) != len(self):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(scalars)
    return [scalars] * len(self)


def _make_pointwise(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"
    method = op + "_" if inplace else op

    def f(self, tensor1, tensor2, *args, value=_NOT_GIVEN, scalars=_NOT_GIVEN):
        # torch's overloads: (..., Scalar value=1), (..., Scalar[] scalars) and
        # (..., Tensor scalars): positionally a number, a list or a tensor;
        # value= takes a number only, scalars= a list or a tensor only
        if len(args) > 1 or args and (value is not _NOT_GIVEN or scalars is not _NOT_GIVEN) \
                or value is not _NOT_GIVEN and scalars is not _NOT_GIVEN:
            raise TypeError(f"{name}() takes self, tensor1, tensor2 and one of value (a "
                            f"number) or scalars (a list of numbers or a 1-D tensor)")
        if value is not _NOT_GIVEN and (isinstance(value, (list, tuple, _TensorBase))
                                        or not isinstance(value, numbers.Number)):
            raise TypeError(f"{name}(): argument 'value' must be a number, not "
                            f"{type(value).__name__} (a list or tensor is scalars=)")
        if scalars is not _NOT_GIVEN and not isinstance(scalars, (list, tuple, _TensorBase)):
            raise TypeError(f"{name}(): argument 'scalars' must be a list of numbers or a "
                            f"1-D tensor, not {type(scalars).__name__}")
        value = args[0] if args else scalars if scalars is not _NOT_GIVEN else \
            value if value is not _NOT_GIVEN else 1
        _self(name, self)
        _same_length(name, self, tensor1, 1)
        _same_length(name, self, tensor2, 2)
        values = _pointwise_scalars(name, self, value)
        r = _fast(3, _T_CODES[op], [self, tensor1, tensor2], values, inplace)
        if r is not None:
            return r
        out = tuple(getattr(t, method)(a, b, value=v)
                    for t, a, b, v in zip(self, tensor1, tensor2, values))
        return self if inplace else out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``self[i].{op}(tensor1[i], tensor2[i], value)``: ``value`` a number, "
                 "a list of numbers or a 1-D tensor of them"
                 + (" (in place)." if inplace else "."))
    return f


def _make_lerp(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"
    method = op + "_" if inplace else op

    def f(self, tensors1, weight):
        _self(name, self)
        _same_length(name, self, tensors1, 1)
        weights, _ = _per_tensor_args(name, self, weight, False)
        r = _fast(3, _T_CODES[op], [self, tensors1, weights], None, inplace)
        if r is not None:
            return r
        out = tuple(getattr(t, method)(e, w) for t, e, w in zip(self, tensors1, weights))
        return self if inplace else out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = ("``self[i].lerp(tensors1[i], weight)``: ``weight`` a number, a list of "
                 "numbers or a list of tensors" + (" (in place)." if inplace else "."))
    return f


def _add_forms(make, op, *args):
    """Make ``_foreach_<op>`` and ``_foreach_<op>_`` with ``make(op, inplace, *args)``."""
    for inplace in (False, True):
        f = make(op, inplace, *args)
        globals()[f.__name__] = f
        __all__.append(f.__name__)


# the unary list forms of the ops that declare them (foreach)
for _op in sorted(d.name for d in DECLARED.values() if d.foreach):
    _add_forms(_make_unary, _op)
del _op


def _binary(op, *, alpha=False, tensor=False, scalar_method=None):
    """Make the binary list forms of ``op``: ``alpha`` whether they take
    ``alpha=`` (with a list of tensors), ``tensor`` whether the second
    operand may be one 0-d tensor, ``scalar_method`` the method run with a
    number (``op``'s own unless given)."""
    _add_forms(_make_binary, op, alpha, tensor, scalar_method or op)


_binary("add", alpha=True, tensor=True)
_binary("sub", alpha=True)
_binary("mul", tensor=True)
_binary("div", tensor=True)
_binary("clamp_max")
_binary("clamp_min")
_binary("maximum", scalar_method="clamp_min")
_binary("minimum", scalar_method="clamp_max")
_binary("pow")
_add_forms(_make_pointwise, "addcmul")
_add_forms(_make_pointwise, "addcdiv")
_add_forms(_make_lerp, "lerp")
__all__ += ["_foreach_zero_", "_foreach_copy_", "_foreach_clone", "_foreach_norm",
            "_foreach_powsum", "_foreach_max", "_foreach_mm"]


def _foreach_zero_(self):
    """Fill every tensor of ``self`` with zeros; returns ``self``."""
    _self("_foreach_zero_", self)
    if not _layers_on[0] and _K.zero_(self, _grad.enabled, not _grad.inference):
        return self
    for t in self:
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """Copy ``src[i]`` into ``self[i]``; returns ``self``."""
    _self("_foreach_copy_", self)
    _same_length("_foreach_copy_", self, src, 1)
    if not _layers_on[0] and _K.copy_(self, src, _grad.enabled, not _grad.inference):
        return self
    for t, s in zip(self, src):
        t.copy_(s, non_blocking=non_blocking)
    return self


def _foreach_clone(self, *, memory_format=None):
    """A copy of every tensor of ``self``."""
    kw = {} if memory_format is None else {"memory_format": memory_format}
    return tuple(t.clone(**kw) for t in _self("_foreach_clone", self))


def _foreach_norm(self, ord=2, dtype=None):
    """``linalg.vector_norm(t, ord, dtype=dtype)`` of every tensor of ``self``."""
    _self("_foreach_norm", self)
    if dtype is None and (ord == 2 and type(ord) in (int, float)) and not _layers_on[0]:
        r = _R.norm2_each(list(self), _grad.enabled)
        if r is not None:
            return tuple(r)
    vector_norm = _linalg.vector_norm        # the public entry (records autograd)
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """``sum(|t| ** ord)`` of every tensor of ``self`` (the p-norm before its root)."""
    return tuple(t.abs().pow(ord).sum(dtype=dtype) for t in _self("_foreach_powsum", self))


def _foreach_max(self):
    """The largest element of every tensor of ``self``."""
    for t in _self("_foreach_max", self):
        if t.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; "
                               "max over zero elements is undefined.")
    return tuple(t.max() for t in self)


def _foreach_mm(self, mat2):
    """``self[i] @ mat2[i]`` for 2-D tensors."""
    _self("_foreach_mm", self)
    return tuple(a.mm(b) for a, b in zip(self, _same_length("_foreach_mm", self, mat2, 1)))
