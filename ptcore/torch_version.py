"""``ptcore.torch_version``: :class:`TorchVersion`, the type of ``ptcore.__version__``
(``torch.torch_version``): a ``str`` that compares as a version against strings, tuples
and other versions (``ptcore.__version__ >= "0.1"``, ``ptcore.__version__ > (0, 0, 9)``)."""
import re
from collections.abc import Iterable

from ptcore.version import __version__ as internal_version

__all__ = ["TorchVersion", "InvalidVersion"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version (as ``packaging.version.InvalidVersion``)."""


_PATTERN = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d*))?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d*))?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.IGNORECASE)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")


def _key(text):
    """The sort key of a PEP 440 version string (the ordering of ``packaging.version``)."""
    m = _PATTERN.match(text)
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    post_n = m["post_n1"] or m["post_n2"]
    has_post = m["post_n1"] is not None or m["post_l"] is not None
    has_dev = m["dev_l"] is not None
    if m["pre_l"] is not None:
        pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0))
    elif has_dev and not has_post:
        pre = (-_INF,)
    else:
        pre = (_INF,)
    post = (int(post_n or 0),) if has_post else (-_INF,)
    dev = (int(m["dev_n"] or 0),) if has_dev else (_INF,)
    local = ()
    if m["local"]:
        local = tuple((int(p), "") if p.isdigit() else (-_INF, p.lower())
                      for p in re.split(r"[-_.]", m["local"]))
    return (int(m["epoch"] or 0), tuple(release), pre, post, dev, local)


def _as_key(other):
    if isinstance(other, str):
        return _key(other)
    if isinstance(other, Iterable):
        return _key(".".join(str(item) for item in other))
    raise InvalidVersion(other)


class TorchVersion(str):
    """A version string that compares as a version with strings (``"2.0"``), tuples
    (``(2, 0)``) and other versions; an unparsable operand falls back to ``str`` comparison."""

    __slots__ = ()

    def _cmp(self, other, method):
        try:
            mine, theirs = _key(self), _as_key(other)
        except InvalidVersion:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)


for _method in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):
    setattr(TorchVersion, _method, lambda x, y, method=_method: x._cmp(y, method))
del _method

__version__ = TorchVersion(internal_version)
