"""``torch.fx.experimental.proxy_tensor``'s names that libraries check.  ptcore has no
proxy-tensor tracer (``make_fx``; ptcore's own compiler traces through its dispatch point,
:mod:`ptcore._dynamo`), so no proxy mode is ever active: :func:`get_proxy_mode` returns
``None`` and :func:`make_fx` raises :class:`NotImplementedError`."""

__all__ = ["get_proxy_mode", "make_fx"]


def get_proxy_mode():
    """The active proxy-tensor mode: always ``None`` in ptcore (no ``make_fx`` tracing).

    >>> from ptcore.fx.experimental.proxy_tensor import get_proxy_mode
    >>> get_proxy_mode() is None
    True
    """
    return None


def make_fx(f, *args, **kwargs):
    """torch's proxy-tensor tracer: not available in ptcore (raises
    :class:`NotImplementedError`; trace with :func:`ptcore.fx.symbolic_trace`, or
    compile with :func:`ptcore.compile`)."""
    raise NotImplementedError("ptcore has no make_fx (torch.fx.experimental.proxy_tensor); "
                              "use ptcore.fx.symbolic_trace or ptcore.compile")
