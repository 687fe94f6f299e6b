"""What ptcore functions and Tensor methods do on a :class:`MaskedTensor`
(the ``__torch_function__`` table of ``torch/masked/maskedtensor``).

- elementwise ops (torch's unary and binary lists, their in-place forms and
  the operators) run on the data and keep the mask; two MaskedTensor
  operands need equal masks (ValueError), a plain Tensor or number operand
  is taken as fully specified;
- reductions (``sum mean amax amin argmax argmin prod all any norm var
  std``) are the masked reductions of :mod:`ptcore.masked`, their output
  mask says which slices had a masked-in element;
- shape ops (``view reshape transpose t select split chunk narrow expand
  unsqueeze unfold cat stack`` and indexing; also ``permute squeeze unbind
  movedim``, which torch's MaskedTensor lacks) apply to data and mask alike;
- ``where``, ``softmax``/``log_softmax``/``softmin``, conversions (``to``,
  ``float`` ...), ``clone``/``detach``/``contiguous``, ``ones_like``,
  ``copy_``, ``item``, ``backward``.

Any other op raises TypeError, as torch's MaskedTensor does.
"""
import warnings

import ptcore
from ptcore._dispatch.declarations import OPERATOR_FORMS, declaration_of
from ptcore._dispatch.handlers import Handlers
from ptcore._dispatch.torch_function import DisableTorchFunctionSubclass

import ptcore.masked._mask_utils as _mu
import ptcore.masked._ops as _mops
from ptcore.masked._tensor import (MaskedTensor, make_masked, mask_leaf_grads, masked_data,
                                   register_torch_function)

__all__ = ["dispatch"]

_UNARY = """abs absolute acos arccos acosh arccosh angle asin arcsin asinh arcsinh atan arctan
    atanh arctanh bitwise_not ceil clamp clip conj_physical cos cosh deg2rad digamma erf erfc
    erfinv exp exp2 expm1 fix floor frac lgamma log log10 log1p log2 logit i0 isnan nan_to_num
    neg negative positive rad2deg reciprocal round rsqrt sigmoid sign sgn signbit sin sinc sinh
    sqrt square tan tanh trunc relu""".split()
_BINARY = """add atan2 arctan2 bitwise_and bitwise_or bitwise_xor bitwise_left_shift
    bitwise_right_shift div divide floor_divide fmod logaddexp logaddexp2 mul multiply nextafter
    remainder sub subtract true_divide eq ne le ge greater greater_equal gt less_equal lt less
    maximum minimum fmax fmin not_equal pow""".split()
# Tensor's operator methods but matmul's (no elementwise op), by their names and
# by torch's (``__pow__`` is ``pow``, ``__itruediv__`` ``__idiv__``)
_OPERATORS = [n for m, f in OPERATOR_FORMS.items() if f.op != "matmul" and f.form != "inplace"
              for n in (m, f.name)]
_IOPERATORS = [n for m, f in OPERATOR_FORMS.items() if f.op != "matmul" and f.form == "inplace"
               for n in (m, f.name)]
_ELEMENTWISE = frozenset(_UNARY + _BINARY + _OPERATORS)


def _torch_inplace(name):
    d = declaration_of("ptcore", name)
    return d is not None and "inplace" in d.variants and "inplace" not in d.beyond_torch


# the in-place forms the ops declare, but those torch lacks (``Tensor.maximum_``):
# torch's MaskedTensor has none
_INPLACE = frozenset([n + "_" for n in _UNARY + _BINARY if _torch_inplace(n)] + _IOPERATORS)

_SHAPE = frozenset("""select transpose swapaxes swapdims split chunk t __getitem__ expand
    expand_as view view_as reshape reshape_as flatten narrow cat concat concatenate unsqueeze
    unfold stack permute squeeze unbind movedim moveaxis""".split())
_CONVERT = frozenset("to float double half bfloat16 int long short char byte bool cpu cuda "
                     "type_as".split())
_PLAIN = frozenset("""requires_grad_ retain_grad register_hook is_floating_point is_complex
    is_signed dim size numel nelement element_size stride is_contiguous data_ptr get_device
    ndimension storage_offset untyped_storage is_same_size""".split())

# op name -> the handler ``(func, args, kwargs)`` of an op with a MaskedTensor
# argument that is not elementwise, a shape op or a conversion, registered at
# each handler below
implements = Handlers("MaskedTensor")


def _is_mt(a):
    return isinstance(a, MaskedTensor)


def _map(obj, fn):
    """``obj`` with each MaskedTensor (also inside lists and tuples) replaced by ``fn(it)``."""
    if isinstance(obj, MaskedTensor):
        return fn(obj)
    if type(obj) in (list, tuple):
        return type(obj)(_map(o, fn) for o in obj)
    if type(obj) is dict:
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _mask_of(mt):
    return mt.get_mask()


def _wrap(data, mask):
    if isinstance(data, (list, tuple)):
        return type(data)(_wrap(d, m) for d, m in zip(data, mask))
    return make_masked(data, mask)


def _masks_match(a, b):
    return a.dim() == b.dim() and bool(ptcore.eq(a, b).all())


def _name(func):
    return getattr(func, "__name__", str(func))


def _unsupported(func):
    """The TypeError for an op MaskedTensor does not support (after torch's UserWarning)."""
    warnings.warn(f"{_name(func)} is not implemented for MaskedTensor", UserWarning,
                  stacklevel=4)
    return TypeError(f"{_name(func)} is not implemented for MaskedTensor: ptcore.masked "
                     f"supports elementwise ops, the masked reductions, shape ops, where, "
                     f"softmax and conversions")


def dispatch(func, args, kwargs):
    """Run ``func(*args, **kwargs)`` with MaskedTensor semantics."""
    name = _name(func)
    if name == "where":
        return _where(func, args, kwargs)
    handler = implements.get(name)
    if handler is not None:
        return handler(func, args, kwargs)
    if name in _ELEMENTWISE:
        return _elementwise(func, args, kwargs, inplace=False)
    if name in _INPLACE:
        return _elementwise(func, args, kwargs, inplace=True)
    if name in _SHAPE:
        return _shape(func, args, kwargs)
    if name in _CONVERT:
        return _convert(func, args, kwargs)
    if name in _PLAIN:
        with DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
        if name == "requires_grad_":
            mask_leaf_grads(args[0])
        return out
    raise _unsupported(func)


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

def _elementwise(func, args, kwargs, inplace):
    mts = [a for a in list(args) + list(kwargs.values()) if _is_mt(a)]
    first = mts[0]
    for other in mts[1:]:
        if not _masks_match(first.get_mask(), other.get_mask()):
            raise ValueError("Input masks must match: binary ops between MaskedTensors need "
                             "equal masks")
    if inplace and not _is_mt(args[0]):
        raise TypeError(f"{_name(func)}: an in-place op on a plain Tensor cannot take a "
                        f"MaskedTensor operand")
    out = func(*_map(args, masked_data), **_map(kwargs, masked_data))
    if inplace:
        return args[0]
    mask = first.get_mask()
    if tuple(mask.shape) != tuple(out.shape):
        mask = mask.expand(out.shape)
    return make_masked(out, mask)


def _where(func, args, kwargs):
    if getattr(func, "__qualname__", "") == "_where_method":      # self.where(condition, y)
        params = ("self", "condition", "other")
    else:
        params = ("condition", "input", "other")
    bound = dict(zip(params, args))
    bound.update(kwargs)
    if set(bound) != set(params):
        raise _unsupported(func)
    cond = bound["condition"]
    cond = masked_data(cond) if _is_mt(cond) else cond
    x = bound["self" if "self" in bound else "input"]
    y = bound["other"]

    def parts(v):
        if _is_mt(v):
            return masked_data(v), v.get_mask()
        if isinstance(v, ptcore.Tensor):
            return v, ptcore.ones_like(v, dtype=ptcore.bool)
        return v, ptcore.ones((), dtype=ptcore.bool, device=cond.device)
    xd, xm = parts(x)
    yd, ym = parts(y)
    data = ptcore.where(cond, xd, yd)
    mask = ptcore.where(cond, xm, ym)
    if tuple(mask.shape) != tuple(data.shape):
        mask = mask.expand(data.shape)
    return make_masked(data, mask)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

def _bind(name, params, args, kwargs):
    if len(args) > len(params):
        raise TypeError(f"{name}() takes at most {len(params)} arguments after the tensor "
                        f"({len(args)} given)")
    vals = dict(params)
    for (p, _), v in zip(params, args):
        vals[p] = v
    for k, v in kwargs.items():
        if k == "axis":
            k = "dim"
        if k not in vals:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        vals[k] = v
    return vals


def _reduce(name, params, args, kwargs):
    self = args[0]
    if not _is_mt(self):
        raise TypeError(f"{name}: the input of a MaskedTensor reduction must be a MaskedTensor")
    v = _bind(name, params, args[1:], kwargs)
    dim, keepdim = v["dim"], bool(v["keepdim"])
    if name in ("var", "std") and isinstance(dim, bool):     # var(unbiased) overload
        v["unbiased"], dim = dim, None
    mask = self.get_mask()
    dims = _mu.canonical_dim(dim, self.ndim)
    if name in ("all", "any"):
        out = masked_data(self).masked_fill(~mask, name == "all")
        for d in reversed(dims):
            out = getattr(out, name)(d, keepdim)
    elif name in ("argmax", "argmin"):
        out = getattr(_mops, name)(self, dim, keepdim=keepdim, mask=mask)
    elif name == "norm":
        p = v["p"]
        if p == "fro" or p is None:
            p = 2.0
        elif isinstance(p, str):
            raise TypeError(f"norm: p={p!r} is not supported for MaskedTensor")
        out = _mops.norm(self, p, dim, keepdim=keepdim, dtype=v["dtype"], mask=mask)
    elif name in ("var", "std"):
        out = getattr(_mops, name)(self, dim, v["unbiased"], correction=v["correction"],
                                   keepdim=keepdim, mask=mask)
    else:
        kw = {"dtype": v["dtype"]} if "dtype" in v else {}
        out = getattr(_mops, name)(self, dim, keepdim=keepdim, mask=mask, **kw)
    return make_masked(out, _mu.any_dims(mask, dims, keepdim))


def _reduction(name, *params):
    """Register the masked reduction ``name``; ``params``: its positional
    parameters after ``self``, as (name, default)."""
    def handler(func, args, kwargs):
        return _reduce(name, params, args, kwargs)
    handler.__name__ = handler.__qualname__ = f"_reduce_{name}"
    handler.params = params
    implements(name)(handler)


_reduction("sum", ("dim", None), ("keepdim", False), ("dtype", None))
_reduction("mean", ("dim", None), ("keepdim", False), ("dtype", None))
_reduction("prod", ("dim", None), ("keepdim", False), ("dtype", None))
_reduction("amax", ("dim", ()), ("keepdim", False))
_reduction("amin", ("dim", ()), ("keepdim", False))
_reduction("argmax", ("dim", None), ("keepdim", False))
_reduction("argmin", ("dim", None), ("keepdim", False))
_reduction("all", ("dim", None), ("keepdim", False))
_reduction("any", ("dim", None), ("keepdim", False))
_reduction("norm", ("p", "fro"), ("dim", None), ("keepdim", False), ("dtype", None))
_reduction("var", ("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None))
_reduction("std", ("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None))


# ---------------------------------------------------------------------------
# shape ops and conversions
# ---------------------------------------------------------------------------

def _shape(func, args, kwargs):
    data = func(*_map(args, masked_data), **_map(kwargs, masked_data))
    mask = func(*_map(args, _mask_of), **_map(kwargs, _mask_of))
    return _wrap(data, mask)


def _convert(func, args, kwargs):
    self = args[0]
    if not _is_mt(self):
        raise _unsupported(func)
    data = func(masked_data(self), *_map(args[1:], masked_data), **_map(kwargs, masked_data))
    mask = self.get_mask()
    if mask.device != data.device:
        mask = mask.to(device=data.device)
    return make_masked(data, mask)


@implements("clone")
def _clone(func, args, kwargs):
    self = args[0]
    return make_masked(masked_data(self).clone(**kwargs), self.get_mask().clone())


@implements("detach")
def _detach(func, args, kwargs):
    self = args[0]
    return make_masked(masked_data(self).detach(), self.get_mask())


@implements("contiguous")
def _contiguous(func, args, kwargs):
    self = args[0]
    return make_masked(masked_data(self).contiguous(), self.get_mask().contiguous())


@implements("ones_like", "zeros_like")
def _like(func, args, kwargs):
    self = args[0]
    if not _is_mt(self):
        raise _unsupported(func)
    return make_masked(func(masked_data(self), *args[1:], **kwargs), self.get_mask())


@implements("copy_")
def _copy_(func, args, kwargs):
    """Copies the data; two MaskedTensors need equal masks (a plain operand has none)."""
    dst, src = args[0], args[1]
    if _is_mt(dst) and _is_mt(src) and not _masks_match(dst.get_mask(), src.get_mask()):
        raise ValueError("copy_: the source and destination MaskedTensors must have equal masks")
    (masked_data(dst) if _is_mt(dst) else dst).copy_(
        masked_data(src) if _is_mt(src) else src, *args[2:], **kwargs)
    return dst


@implements("to_dense")
def _to_dense(func, args, kwargs):
    return args[0]          # strided already, as torch's for strided data


@implements("item")
def _item(func, args, kwargs):
    self = args[0]
    if not bool(self.get_mask().all()):
        raise ValueError("item(): the element of the MaskedTensor is masked out")
    return masked_data(self).item()


@implements("__bool__", "__float__", "__int__", "__index__")
def _scalar(func, args, kwargs):
    return {"__bool__": bool, "__float__": float, "__int__": int,
            "__index__": int}[_name(func)](_item(func, args, kwargs))


@implements("numpy", "tolist")
def _no_numpy(func, args, kwargs):
    raise RuntimeError(f".{_name(func)}() is not supported for tensor subclasses, got "
                       f"MaskedTensor")


@implements("backward")
def _backward(func, args, kwargs):
    # on the plain view of the data (subclass dispatch stays on: gradients
    # that are MaskedTensors keep their masks through the backward formulas)
    return func(*_map(args, masked_data), **_map(kwargs, masked_data))


# ---------------------------------------------------------------------------
# softmax family: torch's _masked_softmax (masked-out elements and slices with
# no masked-in element give 0), computed without producing nan anywhere so
# that no nan reaches a gradient
# ---------------------------------------------------------------------------

def _softmax_args(func, args, kwargs):
    """(data in the asked dtype, mask, dim) of a softmax-family call:
    ``ptcore.softmax(input, dim, dtype)``, ``Tensor.softmax(dim, dtype)``
    or ``nn.functional.softmax(input, dim, _stacklevel, dtype)``."""
    self = args[0]
    if not _is_mt(self):
        raise _unsupported(func)
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None:
        raise TypeError(f"{_name(func)}() on a MaskedTensor needs dim")
    dtype_pos = 3 if getattr(func, "__module__", "") == "ptcore.nn.functional" else 2
    dtype = args[dtype_pos] if len(args) > dtype_pos else kwargs.get("dtype")
    data = masked_data(self)
    if dtype is not None:
        data = data.to(dtype)
    return data, self.get_mask(), _mu.canonical_dim(dim, data.ndim)[0]


def _shifted(data, mask, d):
    """``data - max`` over the masked-in elements (-inf where masked out), and
    the sum of ``exp`` over them (1 where there are none)."""
    x = ptcore.where(mask, data, float("-inf"))
    top = ptcore.amax(x, d, keepdim=True).detach()
    top = ptcore.where(ptcore.isfinite(top), top, ptcore.zeros_like(top))
    x = x - top
    e = ptcore.where(mask, ptcore.exp(x), ptcore.zeros_like(x))
    s = e.sum(d, keepdim=True)
    return x, e, ptcore.where(s == 0, ptcore.ones_like(s), s)


@implements("softmax")
def _softmax(func, args, kwargs, negate=False):
    data, mask, d = _softmax_args(func, args, kwargs)
    _, e, s = _shifted(-data if negate else data, mask, d)
    return make_masked(e / s, mask)


@implements("softmin")
def _softmin(func, args, kwargs):
    return _softmax(func, args, kwargs, negate=True)


@implements("log_softmax")
def _log_softmax(func, args, kwargs):
    data, mask, d = _softmax_args(func, args, kwargs)
    x, _, s = _shifted(data, mask, d)
    out = ptcore.where(mask, x - ptcore.log(s), ptcore.zeros_like(x))
    return make_masked(out, mask)


register_torch_function(dispatch)
