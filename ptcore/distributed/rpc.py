"""``ptcore.distributed.rpc`` (``torch.distributed.rpc``): ptcore has no RPC framework.
As on a PyTorch build without it, the module exists and holds only :func:`is_available`,
which says False, so code that imports it at module level (PyTorch Geometric's distributed
package) imports, and code that checks ``rpc.is_available()`` or ``hasattr(rpc, "api")``
takes its path without RPC.  Collectives and point-to-point messages are in
:mod:`ptcore.distributed`."""

__all__ = ["is_available"]


def is_available():
    """Whether the RPC framework is available: False (ptcore has none).

    >>> import ptcore.distributed.rpc as rpc
    >>> rpc.is_available()
    False
    """
    return False
