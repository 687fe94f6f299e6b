"""torch's higher-order operators (``torch._higher_order_ops``) that programs
and libraries call directly: :func:`associative_scan`, :func:`scan`,
:func:`map`, :func:`cond` and :func:`while_loop`.

torch runs them eagerly outside ``torch.compile``/``torch.export``; ptcore runs
them eagerly always, with ptcore's ops, so autograd, vmap and the devices work
through them as through any other Python code.  Their arguments are checked
as torch checks them, with torch's exception types.
"""
from ptcore._higher_order_ops.associative_scan import associative_scan
from ptcore._higher_order_ops.cond import cond
from ptcore._higher_order_ops.map import map
from ptcore._higher_order_ops.scan import scan
from ptcore._higher_order_ops.while_loop import while_loop

__all__ = ["associative_scan", "cond", "map", "scan", "while_loop"]
