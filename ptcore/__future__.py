"""Switches for behaviour that changes in a future release (``torch.__future__``).

Both concern how :meth:`ptcore.nn.Module._apply` (``.to()``, ``.float()``, ``.cuda()`` ...)
converts a module's parameters:

* by default a parameter keeps its identity and takes the converted data (``param.data = new``);
* ``set_overwrite_module_params_on_conversion(True)`` replaces it with a new
  :class:`~ptcore.nn.Parameter` (optimizers holding the old one no longer see it);
* ``set_swap_module_params_on_conversion(True)`` keeps the identity but swaps the whole tensor
  with :func:`ptcore.utils.swap_tensors` (class, attributes and data); it takes precedence.
"""

__all__ = ["get_overwrite_module_params_on_conversion", "get_swap_module_params_on_conversion",
           "set_overwrite_module_params_on_conversion", "set_swap_module_params_on_conversion"]

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value):
    """Make module conversions assign new Parameters instead of changing the existing ones."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = bool(value)


def get_overwrite_module_params_on_conversion():
    """Whether module conversions assign new Parameters (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value):
    """Make module conversions swap parameters in place with :func:`ptcore.utils.swap_tensors`."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = bool(value)


def get_swap_module_params_on_conversion():
    """Whether module conversions swap parameters with ``swap_tensors`` (default False)."""
    return _swap_module_params_on_conversion
