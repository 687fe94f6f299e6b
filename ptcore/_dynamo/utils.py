"""``torch._dynamo.utils``: what libraries ask of the compiler before they choose a
path (torchvision's ``roi_align`` takes its Python implementation where the device
can compile and its C++ ops are missing), and the counters tests read."""
import collections
import functools
import warnings

from ptcore._tensor import device as _device

__all__ = ["is_compile_supported", "warn_once", "counters"]

# torch's event counters, by group: "frames" ("total" captures tried, "ok" those
# that made graphs), "stats" ("unique_graphs", "calls_captured": ops captured),
# "unimplemented" (the reason of a graph break -> count).  Cleared by the caller (``counters.clear()``),
# not by ``reset()``, as in torch.
counters = collections.defaultdict(collections.Counter)

# the device types ptcore.compile generates kernels for: loops on the CPU, NVRTC
# kernels on CUDA (torch answers for CUDA by whether Triton is installed)
_COMPILED_DEVICES = ("cpu", "cuda")


def is_compile_supported(device_type):
    """Whether :func:`ptcore.compile` compiles code for ``device_type`` (a device or
    its type string)."""
    return _device(device_type).type in _COMPILED_DEVICES


@functools.lru_cache(None)
def warn_once(msg, stacklevel=1):
    """``warnings.warn(msg)`` the first time a message is given (torch's)."""
    warnings.warn(msg, stacklevel=stacklevel + 1)
