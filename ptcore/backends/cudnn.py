"""``ptcore.backends.cudnn``: cuDNN switches.  ptcore does not use cuDNN, so
``is_available()`` is False and ``version()`` None; ``enabled``,
``benchmark`` and ``deterministic`` keep what is set (as torch, independent
of ``ptcore.use_deterministic_algorithms``).  ``allow_tf32`` (True by
default, as torch's) is the legacy face of ``conv``/``rnn.fp32_precision``:
ptcore's CUDA convolutions run their float32 GEMMs in TF32 while
``conv.fp32_precision`` is ``"tf32"``, as torch's cuDNN convolutions do."""
import sys
import types

import ptcore.backends._fp32_precision as _fp32_precision
from ptcore.backends._flags import check_bool
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
              "deterministic": "set_deterministic_cudnn"}

    @property
    def allow_tf32(self):
        """True when cuDNN-class ops (convolutions, RNNs) may compute float32
        in TF32: ``conv`` and ``rnn.fp32_precision`` both ``"tf32"``."""
        conv, rnn = _fp32_precision.get("cuda", "conv"), _fp32_precision.get("cuda", "rnn")
        if conv != rnn:
            raise RuntimeError(
                "allow_tf32 of cuDNN was read without an operator, but conv's fp32_precision "
                f"({conv!r}) and rnn's ({rnn!r}) differ: the legacy and the new TF32 switches "
                "were mixed; read backends.cudnn.conv.fp32_precision / rnn.fp32_precision")
        return conv == "tf32"

    @allow_tf32.setter
    def allow_tf32(self, value):
        check_bool("set_allow_tf32_cudnn", value)
        for op in ("conv", "rnn"):
            _fp32_precision.set("cuda", op, "tf32" if value else "none")

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
conv = _fp32_precision.FP32Precision("cuda", "conv")
rnn = _fp32_precision.FP32Precision("cuda", "rnn")

sys.modules[__name__].__class__ = _CudnnModule
