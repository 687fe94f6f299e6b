"""``torch._higher_order_ops.while_loop``: ``ptcore.while_loop``."""
from ptcore._control_flow import while_loop

__all__ = ["while_loop"]
