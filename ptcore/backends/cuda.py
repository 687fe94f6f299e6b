"""``ptcore.backends.cuda``: CUDA matmul precision switches and the
scaled-dot-product-attention backend flags.

``matmul.allow_tf32`` is the same setting as
``ptcore.set_float32_matmul_precision`` ("highest" <-> False, "high" /
"medium" <-> True), as in PyTorch.  ptcore's attention always runs its math
implementation; the SDP flags are kept and returned.
"""
import contextlib
import enum
import warnings

from ptcore import _settings
import ptcore.backends._fp32_precision as _fp32_precision
from ptcore.backends._flags import check_bool

__all__ = ["is_built", "matmul", "SDPBackend", "sdp_kernel", "flash_sdp_enabled",
           "enable_flash_sdp", "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp",
           "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp",
           "preferred_linalg_library", "preferred_blas_library",
           "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed"]


def is_built():
    """Whether ptcore can use CUDA in this install (the cuda-bindings package)."""
    import importlib.util
    return importlib.util.find_spec("cuda") is not None


class cuBLASModule:
    """``matmul``: TF32 and reduced-precision reduction switches for CUDA matmuls."""

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _settings.get_float32_matmul_precision() != "highest"
        if name in ("allow_fp16_reduced_precision_reduction",
                    "allow_bf16_reduced_precision_reduction"):
            return _REDUCTIONS[name]
        if name == "fp32_precision":
            return _fp32_precision.get("cuda", "matmul")
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            check_bool("set_allow_tf32_cublas", value)
            _settings._state["matmul_precision"] = "high" if value else "highest"
            _fp32_precision.set("cuda", "matmul", "tf32" if value else "ieee")
            return
        if name in _REDUCTIONS:
            _REDUCTIONS[name] = check_bool(f"{name}", value)
            return
        if name == "fp32_precision":
            _fp32_precision.set("cuda", "matmul", value)
            return
        raise AttributeError(f"Unknown attribute {name}")


_REDUCTIONS = {"allow_fp16_reduced_precision_reduction": True,
               "allow_bf16_reduced_precision_reduction": True}
matmul = cuBLASModule()


class SDPBackend(enum.IntEnum):
    """Scaled-dot-product-attention implementations (``torch.nn.attention.SDPBackend``)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):            # torch's enum prints its name (IntEnum: the number)
        return f"SDPBackend.{self.name}"

    __format__ = object.__format__


_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
        "fp16_bf16_reduction_math": False}


def _set(key, enabled):
    _SDP[key] = check_bool(f"enable_{key}_sdp", enabled)


def flash_sdp_enabled():
    return _SDP["flash"]


def enable_flash_sdp(enabled):
    _set("flash", enabled)


def mem_efficient_sdp_enabled():
    return _SDP["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _set("mem_efficient", enabled)


def math_sdp_enabled():
    return _SDP["math"]


def enable_math_sdp(enabled):
    _set("math", enabled)


def cudnn_sdp_enabled():
    return _SDP["cudnn"]


def enable_cudnn_sdp(enabled):
    _set("cudnn", enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    return _SDP["fp16_bf16_reduction_math"]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    _SDP["fp16_bf16_reduction_math"] = check_bool("allow_fp16_bf16_reduction_math_sdp", enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated context manager enabling/disabling SDP backends for a block."""
    warnings.warn("`ptcore.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see `ptcore.nn.attention.sdpa_kernel()` "
                  "for the new context manager, with updated signature.", FutureWarning,
                  stacklevel=3)
    old = dict(_SDP)
    try:
        _set("flash", enable_flash)
        _set("math", enable_math)
        _set("mem_efficient", enable_mem_efficient)
        _set("cudnn", enable_cudnn)
        yield
    finally:
        _SDP.update(old)


_LINALG = ["default"]
_BLAS = ["cublas"]


def preferred_linalg_library(backend=None):
    """Stored and returned ('default', 'cusolver' or 'magma')."""
    if backend is not None:
        if backend not in ("default", "cusolver", "magma"):
            raise RuntimeError(f"Unknown input value: {backend}")
        _LINALG[0] = backend
    return _LINALG[0]


def preferred_blas_library(backend=None):
    """Stored and returned ('cublas', 'cublaslt' or 'ck')."""
    if backend is not None:
        if backend not in ("cublas", "cublaslt", "ck"):
            raise RuntimeError(f"Unknown input value: {backend}")
        _BLAS[0] = backend
    return _BLAS[0]
