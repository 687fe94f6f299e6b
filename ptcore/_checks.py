"""``torch._check`` and its family, ``torch._assert`` and ``_assert_async``: the condition
checks that library and model code (``torch._check(x.dim() == 4, lambda:
...)``, timm's ``torch._assert``) call as plain Python functions.

As torch's: the condition must be a Python bool (a tensor condition goes
through ``_check_tensor_all``), the message a callable evaluated only on
failure, and each check raises its own exception type.
"""
import builtins
import warnings

from ptcore import _tensor as _C
from ptcore.overrides import handle_torch_function, has_torch_function
from ptcore.tensor import Tensor as _Tensor

__all__ = ["_check", "_check_with", "_check_index", "_check_value", "_check_type",
           "_check_not_implemented", "_check_is_size", "_check_tensor_all", "_check_tensor_all_with",
           "_assert", "_assert_async"]

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? If "
            "so, please report an enhancement request to PyTorch.)")


def _check_with(error_type, cond, message):
    """Raise ``error_type(message())`` unless ``cond`` (a Python bool) is True."""
    if not isinstance(cond, builtins.bool):
        if isinstance(cond, _C._TensorBase):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not isinstance(error_type, type) or not issubclass(error_type, Exception) \
            or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got "
                             f"{error_type}")
    if message is None:
        text = _DEFAULT
    else:
        if not callable(message):
            raise TypeError("message must be a callable")
        text = str(message())
    raise error_type(text)


def _check(cond, message=None):
    """RuntimeError unless ``cond``."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None):
    """IndexError unless ``cond``."""
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    """ValueError unless ``cond``."""
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    """TypeError unless ``cond``."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    """NotImplementedError unless ``cond``."""
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i, message=None, *, max=None):
    """RuntimeError unless ``0 <= i`` (and ``i <= max``); deprecated in torch
    for ``_check(i >= 0)``, with its FutureWarning."""
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with "
                  "guard_size_oblivious.     Use _check(i >= 0) instead.", FutureWarning, stacklevel=2)
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _check_tensor_all_with(error_type, cond, message=None):
    """``error_type(message())`` unless every element of bool tensor ``cond`` is True."""
    if not isinstance(cond, _C._TensorBase):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype is not _C.bool_:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, builtins.bool(cond.all().item()), message)


def _check_tensor_all(cond, message=None):
    """RuntimeError unless every element of bool tensor ``cond`` is True."""
    _check_tensor_all_with(RuntimeError, cond, message)


def _assert(condition, message):
    """``assert condition, message`` that tracing keeps (AssertionError)."""
    if type(condition) is not _Tensor:
        if has_torch_function((condition,)):
            return handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)


def _assert_async(tensor, assert_msg=None):
    """``torch._assert_async``: RuntimeError unless the one element of ``tensor`` is nonzero
    (on the CPU at once, as torch's; ``assert_msg`` replaces the message).  A tensor of no
    or several elements raises as ``bool()`` of it does."""
    if not isinstance(tensor, _C._TensorBase):
        raise TypeError(f"_assert_async(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if not tensor.is_nonzero():                 # (several or no elements raise here)
        raise RuntimeError(assert_msg if assert_msg is not None
                           else "Expected Tensor with single nonzero value, but got zero")


# torch defines these in torch/__init__.py: their __module__ is the package's
# (fx's generated code spells a traced ``_assert`` as ``torch._assert``)
for _name in __all__:
    globals()[_name].__module__ = "ptcore"
del _name
