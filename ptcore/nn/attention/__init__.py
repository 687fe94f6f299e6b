"""``ptcore.nn.attention``: choosing the scaled-dot-product-attention implementation
(``torch.nn.attention``): :class:`SDPBackend` and the :func:`sdpa_kernel` context manager,
which switch the flags of :mod:`ptcore.backends.cuda` (``flash_sdp_enabled()`` ...) for a
block and restore them after.  ptcore's
:func:`~ptcore.nn.functional.scaled_dot_product_attention` computes the same result with
every backend, so the choice affects only what the flags report."""
import contextlib

from ptcore.backends import cuda as _cuda_backend
from ptcore.backends.cuda import SDPBackend

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False

# SDPBackend -> the key of its flag in ptcore.backends.cuda
_FLAGS = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
          SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only ``backends`` (one :class:`SDPBackend` or a list) inside the block.

    ``set_priority`` (the list order as a preference) is accepted: ptcore has one
    implementation per device.
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                                 f"SDPBackend instances, got a list holding {type(b).__name__}")
    wanted = set(backends)
    saved = {key: _cuda_backend._SDP[key] for key in _FLAGS.values()}
    try:
        for backend, key in _FLAGS.items():
            _cuda_backend._SDP[key] = backend in wanted
        yield {}
    finally:
        _cuda_backend._SDP.update(saved)
