"""``torch._higher_order_ops.cond``: ``ptcore.cond``."""
from ptcore._control_flow import cond

__all__ = ["cond"]
