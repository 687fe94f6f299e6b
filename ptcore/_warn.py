"""Warnings attributed to the user's code.

torch raises many warnings from C++, where they are reported at the Python
line that called into torch (the ``loss.backward()`` of a script).  The same
warnings raised from ptcore's Python layers would point at ptcore's own
files; :func:`warn_at_caller` walks out of the package first."""
import os
import sys
import warnings

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message, category=UserWarning):
    """``warnings.warn`` at the innermost frame outside ptcore (the whole
    stack inside ptcore: its outermost frame)."""
    level = 2                       # 1: this function, 2: its caller
    f = sys._getframe(1)
    while f.f_back is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


_WARNED_ONCE = set()


def warn_once(key, message, category=UserWarning):
    """torch's ``TORCH_WARN_ONCE``: :func:`warn_at_caller` the first time ``key``
    warns in the process, never again (the warning filters apply to that first
    one only, as in torch, where the C++ side already dropped the rest)."""
    if key not in _WARNED_ONCE:
        _WARNED_ONCE.add(key)
        warn_at_caller(message, category)
