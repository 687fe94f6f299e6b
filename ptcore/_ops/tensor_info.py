"""Predicates and metadata of tensors: ``is_nonzero``, ``is_same_size``,
``is_signed``, ``is_inference``, ``is_neg``, ``Tensor.output_nr`` and the
always-False device predicates (``is_xla`` ...)."""
import builtins

from ptcore._ops._composite_common import _check_tensor

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


_TENSOR_METHODS = {
    "is_nonzero": is_nonzero,
    "is_same_size": is_same_size,
    "output_nr": property(_output_nr),
    "is_neg": is_neg,
    "const_data_ptr": lambda self: self.data_ptr(),
}

for _k in ("is_xla", "is_xpu", "is_ipu", "is_maia", "is_mps", "is_mtia", "is_vulkan",
           "is_mkldnn", "is_nested", "is_sparse_csr"):
    _TENSOR_METHODS[_k] = property(lambda self: False, doc=f"``Tensor.{_k}``: always False.")


_TENSOR_METHODS["is_distributed"] = lambda self: False
for _k, _v in list(_TENSOR_METHODS.items()):
    if callable(_v) and getattr(_v, "__name__", "") == "<lambda>":
        _v.__name__ = _k
        _v.__qualname__ = "Tensor." + _k
del _k, _v


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "info")
del _bind_module
