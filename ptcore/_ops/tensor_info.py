"""Predicates and metadata of tensors: ``is_nonzero``, ``is_same_size``,
``is_signed``, ``is_inference``, ``is_neg``, ``Tensor.output_nr`` and the
always-False device predicates (``is_xla`` ...)."""
import builtins

from ptcore._ops._composite_common import _check_tensor
from ptcore._dispatch.generate import method_form as _method_form

__all__ = [
    "is_nonzero", "is_same_size", "is_signed", "is_inference", "is_neg", "is_neg",
]


def is_nonzero(input):
    """Truth value of a single-element tensor (``torch.is_nonzero``)."""
    _check_tensor(input, "is_nonzero", "input", 1)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def is_same_size(input, other):
    """True if both tensors have the same shape (``torch.is_same_size``)."""
    _check_tensor(input, "is_same_size", "input", 1)
    _check_tensor(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """True if ``input``'s dtype is signed (``torch.is_signed``)."""
    _check_tensor(input, "is_signed", "input", 1)
    return input.is_signed()


def _output_nr(self):
    return getattr(self, "_output_nr", 0)


def is_inference(input):
    """Whether ``input`` is an inference tensor (``torch.is_inference``): its
    memory was allocated inside ``inference_mode``."""
    _check_tensor(input, "is_inference", "input", 1)
    return input.is_inference()


def is_neg(input):
    """Whether ``input`` has the negative bit set (``torch.is_neg``; always False)."""
    return False


def const_data_ptr(self):
    """``Tensor.const_data_ptr``: the address of the first element (as ``data_ptr``)."""
    return self.data_ptr()


def is_distributed(self):
    """``Tensor.is_distributed``: always False."""
    return False


_method_form("output_nr", property(_output_nr))
# the queries of device kinds and layouts ptcore has none of: properties, no ops (the one
# list of names left here)
for _k in ("is_xla", "is_xpu", "is_ipu", "is_maia", "is_mps", "is_mtia", "is_vulkan",
           "is_mkldnn", "is_nested", "is_sparse_csr"):
    _method_form(_k, property(lambda self: False, doc=f"``Tensor.{_k}``: always False."))
del _k


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "info")
del _bind_module
