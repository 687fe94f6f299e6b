"""Reduction-mode helpers for losses (mirrors ``torch.nn._reduction``).

``get_enum`` maps ``'none' | 'mean' | 'sum'`` to 0/1/2 and
``legacy_get_string`` maps the deprecated ``size_average``/``reduce``
arguments to a reduction string, warning as PyTorch does.
"""
import warnings

__all__ = ["get_enum", "legacy_get_string", "legacy_get_enum"]


def get_enum(reduction):
    """Reduction string -> enum (0 none, 1 mean, 2 sum); ValueError otherwise."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. "
                      "Please use reduction='mean' instead.", stacklevel=2)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning=True):
    """Map the legacy ``size_average``/``reduce`` pair to a reduction string."""
    warning = ("size_average and reduce args will be deprecated, please use "
               "reduction='{}' instead.")
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(warning.format(ret), stacklevel=2)
    return ret


def legacy_get_enum(size_average, reduce, emit_warning=True):
    """Enum form of :func:`legacy_get_string`."""
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
