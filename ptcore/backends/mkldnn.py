"""``ptcore.backends.mkldnn``: oneDNN switches.  ptcore does not use oneDNN;
``is_available()`` is False and ``enabled`` keeps what is set."""
import sys
import types

import ptcore.backends._fp32_precision as _fp32_precision
from ptcore.backends._flags import FlagModule, flags_context


def is_available():
    """False: ptcore has no oneDNN backend."""
    return False


class _MkldnnModule(FlagModule, types.ModuleType):
    _FLAGS = {"enabled": "set_enabled_mkldnn", "deterministic": "set_deterministic_mkldnn"}

    def flags(self, enabled=False, deterministic=False):
        return flags_context(self, enabled=enabled, deterministic=deterministic)

    fp32_precision = _fp32_precision.module_property(
        "mkldnn", "all", "The float32 precision of oneDNN ops (kept: ptcore does not use oneDNN).")


enabled = True
deterministic = False
matmul = _fp32_precision.FP32Precision("mkldnn", "matmul")
conv = _fp32_precision.FP32Precision("mkldnn", "conv")
rnn = _fp32_precision.FP32Precision("mkldnn", "rnn")

sys.modules[__name__].__class__ = _MkldnnModule
