"""``ptcore.backends.mha``: the fast-path switch of ``TransformerEncoder`` and
``MultiheadAttention``.  ptcore has no separate fast path; the switch is
kept and returned."""
from ptcore.backends._flags import check_bool

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fast path is enabled (True by default)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Enable or disable the fast path."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = check_bool("set_fastpath_enabled", value)
