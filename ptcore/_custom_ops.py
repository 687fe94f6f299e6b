"""``torch._custom_ops``: the names of torch's first custom-op API that libraries still
import (torchvision's fake functions call ``torch._custom_ops.get_ctx()``), each the
same function of :mod:`ptcore.library`."""
from ptcore.library import get_ctx, impl_abstract, infer_schema

__all__ = ["get_ctx", "impl_abstract", "infer_schema", "parse_qualname", "validate_namespace"]


def parse_qualname(qualname):
    """``"ns::name"`` -> ``("ns", "name")`` (ValueError otherwise), as torch's."""
    names = qualname.split("::", 1)
    if len(names) != 2:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The "
                         f"operator name should look something like ns::foo")
    if "." in names[1]:
        raise ValueError(f"The torch.custom_ops APIs do not handle overloads, i.e. operator "
                         f"names with '.' in them. Please name your operator something like "
                         f"ns::foo. Got: {qualname}")
    return names[0], names[1]


def validate_namespace(ns):
    """ValueError for a namespace torch reserves or that is not a plain name."""
    if "." in ns:
        raise ValueError(f'custom_op(..., ns="{ns}"): expected ns to not contain any . (and be a '
                         f'valid variable name)')
    if ns in ("prim", "prims", "aten", "at", "torch", "pytorch"):
        raise ValueError(f"custom_op(..., ns='{ns}'): '{ns}' is a reserved namespace, "
                         f"please choose something else. ")
