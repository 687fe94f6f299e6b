"""``ptcore.backends.mkldnn``: oneDNN switches.  ptcore does not use oneDNN;
``is_available()`` is False and ``enabled`` keeps what is set."""
import sys
import types

from ptcore.backends._flags import FlagModule, flags_context


def is_available():
    """False: ptcore has no oneDNN backend."""
    return False


class _MkldnnModule(FlagModule, types.ModuleType):
    _FLAGS = {"enabled": "set_enabled_mkldnn", "deterministic": "set_deterministic_mkldnn"}

    def flags(self, enabled=False, deterministic=False):
        return flags_context(self, enabled=enabled, deterministic=deterministic)


enabled = True
deterministic = False

sys.modules[__name__].__class__ = _MkldnnModule
