"""``annotate`` (``torch.fx.annotate``): give a traced value a type, which the
generated code writes as the variable's annotation."""
from ptcore.fx.proxy import Proxy

__all__ = ["annotate"]


def annotate(val, type):
    """``val`` with its node's type set to ``type`` when ``val`` is a Proxy
    (RuntimeError if it has one already); any other value unchanged."""
    if isinstance(val, Proxy):
        if val.node.type:
            raise RuntimeError(
                f"Tried to annotate a value that already had a type on it! Existing type is "
                f"{val.node.type} and new type is {type}. This could happen if you tried to "
                f"annotate a function parameter value (in which case you should use the type "
                f"slot on the function signature) or you called annotate on the same value "
                f"twice")
        val.node.type = type
    return val
