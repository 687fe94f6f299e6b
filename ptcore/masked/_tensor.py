"""``MaskedTensor``: a tensor with a boolean mask of the same shape saying
which elements are specified (``torch.masked.MaskedTensor``), and its
constructors ``masked_tensor`` / ``as_masked_tensor``.

A MaskedTensor is a :class:`ptcore.Tensor` subclass whose elements are its
data (masked-out elements keep whatever value they hold).  It overrides
``__torch_function__``, so ptcore functions, ``nn.functional`` functions and
Tensor methods called on it run the masked semantics of
:mod:`ptcore.masked._tensor_ops` and return MaskedTensors.  Autograd records
the operations on the data, so a MaskedTensor made with
``requires_grad=True`` is an ordinary leaf; its ``.grad`` is a MaskedTensor
with the leaf's mask.
"""
import warnings

import ptcore
from ptcore._dispatch import torch_function as _tf
from ptcore._dispatch.torch_function import as_subclass, DisableTorchFunction
from ptcore.autograd import Function

__all__ = ["MaskedTensor", "is_masked_tensor", "masked_tensor", "as_masked_tensor"]

_SUPPORTED_DTYPES = ("float16", "float32", "float64", "bool", "int8", "int16", "int32",
                     "int64")
_PROTOTYPE_MSG = ("The PyTorch API of MaskedTensors is in prototype stage and will change in "
                  "the near future. Please open a Github issue for features requests and see "
                  "our documentation on the torch.masked module for further information about "
                  "the project.")


# the MaskedTensor semantics of every ptcore function: ``dispatch`` of
# ptcore.masked._tensor_ops (built on the masked reductions, which build on this
# class), registered by that module at its import (the package imports it)
_torch_function_handler = [None]


def register_torch_function(handler):
    """Make ``handler(func, args, kwargs)`` run every function called on a
    MaskedTensor (its ``__torch_function__``)."""
    _torch_function_handler[0] = handler


def is_masked_tensor(obj, /):
    """True if ``obj`` is a :class:`MaskedTensor`."""
    return isinstance(obj, MaskedTensor)


def _warn_creation(data):
    warnings.warn(_PROTOTYPE_MSG, UserWarning, stacklevel=3)
    if data.requires_grad:
        warnings.warn("It is not recommended to create a MaskedTensor with a tensor that "
                      "requires_grad. To avoid this, you can use data.detach().clone()",
                      UserWarning, stacklevel=3)


def _validate(data, mask):
    if not isinstance(data, ptcore.Tensor) or isinstance(data, MaskedTensor):
        raise TypeError("data must be a Tensor")
    if not isinstance(mask, ptcore.Tensor) or isinstance(mask, MaskedTensor):
        raise TypeError("mask must be a Tensor")
    if mask.dtype is not ptcore.bool:
        raise TypeError("mask must have dtype bool.")
    if data.dtype not in tuple(getattr(ptcore, n) for n in _SUPPORTED_DTYPES):
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if tuple(data.shape) != tuple(mask.shape):
        raise ValueError("data.size() must equal mask.size()")


def make_masked(data, mask):
    """A MaskedTensor viewing ``data`` (keeping its autograd history) with
    ``mask``; no copy, no warning (the results of MaskedTensor ops)."""
    _validate(data, mask)
    if data.requires_grad and ptcore.is_grad_enabled():
        return _Wrap.apply(data, mask)
    return _view_as_masked(data, mask)


def _view_as_masked(data, mask):
    r = as_subclass(data, MaskedTensor)
    r._masked_mask = mask
    return r


class _Wrap(Function):
    """``data`` seen as a MaskedTensor in the autograd graph.  Its backward
    hands the data's graph a plain gradient: a MaskedTensor gradient (the
    ``ones_like`` seed ``autograd.grad`` makes for a MaskedTensor output)
    becomes its data, so backward formulas always run on plain tensors."""

    @staticmethod
    def forward(ctx, data, mask):
        return _view_as_masked(data, mask)

    @staticmethod
    def backward(ctx, grad):
        return (masked_data(grad) if isinstance(grad, MaskedTensor) else grad), None


def mask_leaf_grads(mt):
    """Make the gradients that reach the leaf ``mt`` MaskedTensors with its
    mask (what ``.grad`` holds and ``autograd.grad`` returns, as torch's)."""
    if mt.requires_grad and mt.grad_fn is None and not getattr(mt, "_masked_hooked", False):
        mask = mt._masked_mask
        mt.register_hook(lambda g: g if isinstance(g, MaskedTensor) else make_masked(g, mask))
        mt._masked_hooked = True


def masked_data(mt):
    """The data of ``mt`` as a plain Tensor view; autograd flows through it to ``mt``."""
    return as_subclass(mt, ptcore.Tensor)


class MaskedTensor(ptcore.Tensor):
    """A tensor whose elements are specified only where ``mask`` is True
    (``torch.masked.MaskedTensor``, a prototype API in torch too).

    ``MaskedTensor(data, mask, requires_grad=False)`` copies ``data`` and
    ``mask`` (same shape; ``mask`` of dtype bool).  Unary and binary
    elementwise ops keep the mask (binary ops between two MaskedTensors need
    equal masks, else ValueError), reductions reduce the masked-in elements
    and mask out the slices that had none, and shape ops (``view``,
    ``reshape``, ``transpose``, indexing, ``cat`` ...) apply to data and mask
    alike.  Other ops raise TypeError.  Sparse data and masks are not
    supported.
    """

    def __new__(cls, data, mask, requires_grad=False):
        _validate(data, mask)
        _warn_creation(data)
        with ptcore.no_grad():
            r = make_masked(data.detach().clone(), mask.clone())
        if cls is not MaskedTensor:
            r.__class__ = cls
            _tf._tf_recount(r)
        if requires_grad:
            r.requires_grad_(True)
        return r

    def __init__(self, data, mask, requires_grad=False):
        pass

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _torch_function_handler[0](func, args, kwargs or {})

    def get_data(self):
        """The data (masked-out elements included) as a plain Tensor;
        differentiable: gradients flow back to this MaskedTensor."""
        return masked_data(self)

    def get_mask(self):
        """The boolean mask: True where an element is specified."""
        return self._masked_mask

    def to_tensor(self, value):
        """A plain Tensor with the masked-out elements set to ``value``."""
        return masked_data(self).masked_fill(~self._masked_mask, value)

    def is_sparse_coo(self):
        """False: ptcore's MaskedTensors hold strided data only."""
        return False

    def is_sparse_csr(self):
        """False: ptcore's MaskedTensors hold strided data only."""
        return False

    @property
    def is_sparse(self):
        """False: ptcore's MaskedTensors hold strided data only."""
        return False

    def to_sparse(self, *args, **kwargs):
        """Not supported: ptcore's MaskedTensors hold strided data only (TypeError)."""
        raise TypeError("ptcore's MaskedTensor holds strided data only: sparse MaskedTensors "
                        "are not supported")

    to_sparse_coo = to_sparse_csr = to_sparse_csc = to_sparse

    @property
    def grad(self):
        """The accumulated gradient, a MaskedTensor with this tensor's mask
        (None until a backward pass reaches this leaf)."""
        g = ptcore.Tensor.grad.fget(self)
        if g is None or isinstance(g, MaskedTensor):
            return g
        return make_masked(g, self._masked_mask)

    @grad.setter
    def grad(self, value):
        if isinstance(value, MaskedTensor):
            value = masked_data(value).detach()
        ptcore.Tensor.grad.fset(self, value)

    @grad.deleter
    def grad(self):
        ptcore.Tensor.grad.fset(self, None)

    def __repr__(self):
        with DisableTorchFunction():
            data = as_subclass(self, ptcore.Tensor).detach()
            mask = self._masked_mask
            if data.dim() == 0:
                text = _format(data.item())
                if not bool(mask.item()):
                    text = "--"
                return f"MaskedTensor({text}, {bool(mask.item())})"
            body = _masked_str(data.tolist(), mask.tolist())
        body = "\n".join("  " + line for line in body.split("\n"))
        return "MaskedTensor(\n" + body + "\n)"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self) if not spec else format(str(self), spec)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (masked_data(self).detach(), self._masked_mask, self.requires_grad))


def _rebuild(data, mask, requires_grad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return MaskedTensor(data, mask, requires_grad)


def _format(v):
    return "{0:8.4f}".format(v) if isinstance(v, float) else str(v)


def _masked_str(data, mask):
    """torch's layout: one bracketed line per innermost row, masked-out
    elements as ``--`` right-aligned to 8 characters."""
    if not data or not isinstance(data[0], list):
        texts = [_format(d) for d in data]
        width = max([8 if not m else len(t) for t, m in zip(texts, mask)], default=0)
        return "[" + ", ".join(t if m else "--".rjust(width)
                               for t, m in zip(texts, mask)) + "]"
    subs = [_masked_str(d, m) for d, m in zip(data, mask)]
    subs = ["\n".join("  " + line for line in s.split("\n")) for s in subs]
    return "[\n" + ",\n".join(subs) + "\n]"


def masked_tensor(data, mask, requires_grad=False):
    """A :class:`MaskedTensor` holding a copy of ``data`` and ``mask``
    (``torch.masked.masked_tensor``); a leaf that requires grad when
    ``requires_grad``."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """A :class:`MaskedTensor` of ``data`` and ``mask`` that stays connected
    to ``data``'s autograd graph (gradients flow back to ``data``)."""
    _validate(data, mask)
    _warn_creation(data)
    return _FromValues.apply(data, mask)


class _FromValues(Function):
    """The differentiable constructor: the gradient reaching ``data`` is a
    MaskedTensor (so ``data.grad`` is masked, as torch)."""

    @staticmethod
    def forward(ctx, data, mask):
        ctx.mask = mask
        return make_masked(data.clone(), mask.clone())

    @staticmethod
    def backward(ctx, grad):
        if not isinstance(grad, MaskedTensor):
            grad = make_masked(grad, ctx.mask)
        return grad, None
