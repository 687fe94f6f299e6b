"""``ptcore.backends.cudnn``: cuDNN switches.  ptcore does not use cuDNN, so
``is_available()`` is False and ``version()`` None; ``enabled``,
``benchmark``, ``deterministic`` and ``allow_tf32`` keep what is set (as
torch, independent of ``ptcore.use_deterministic_algorithms``)."""
import sys
import types

from ptcore.backends import _fp32_precision
from ptcore.backends._flags import FlagModule, flags_context


def is_available():
    """False: ptcore has no cuDNN backend."""
    return False


def version():
    """None: cuDNN is not used by ptcore."""
    return None


def is_acceptable(tensor):
    """False: no tensor goes to cuDNN."""
    return False


class _CudnnModule(FlagModule, types.ModuleType):
    _FLAGS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
              "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cudnn"}

    fp32_precision = _fp32_precision.module_property(
        "cuda", "all", "The float32 precision of cuDNN ops (``conv``/``rnn`` refine it).")

    def flags(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
              allow_tf32=True):
        """Context manager setting the flags for a block (restored after)."""
        return flags_context(self, enabled=enabled, benchmark=benchmark,
                             deterministic=deterministic, allow_tf32=allow_tf32,
                             benchmark_limit=benchmark_limit)


enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True
conv = _fp32_precision.FP32Precision("cuda", "conv")
rnn = _fp32_precision.FP32Precision("cuda", "rnn")

sys.modules[__name__].__class__ = _CudnnModule
