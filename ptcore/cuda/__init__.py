"""ptcore.cuda: GPU support through cuda-python.

Importing ``ptcore`` never touches CUDA.  This module answers
``is_available()`` without raising; the device backend (caching allocator,
NVRTC kernels, cuBLAS) is the subject of the CUDA work and is loaded only
when a device is actually used.
"""
import importlib.util as _ilu

from ptcore import _tensor as _C
# The caching allocator's bookkeeping is pure Python and needs no driver:
# before a device backend is attached these report what torch reports before
# CUDA is initialised (empty stats, zero bytes); the mutating ones raise.
from ptcore.cuda._allocator import (  # noqa: F401
    OutOfMemoryError, caching_allocator_alloc, caching_allocator_delete, empty_cache,
    get_per_process_memory_fraction, max_memory_allocated, max_memory_reserved,
    mem_get_info, memory_allocated, memory_reserved, memory_snapshot, memory_stats,
    memory_stats_as_nested_dict, memory_summary, reset_accumulated_memory_stats,
    reset_peak_memory_stats, set_per_process_memory_fraction,
)

from ptcore.cuda._random import (  # noqa: F401
    get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed, seed_all,
    set_rng_state, set_rng_state_all,
)

_reason = None


def _probe():
    """(available, reason) -- never raises."""
    global _reason
    if _reason is not None:
        return _reason
    if _ilu.find_spec("cuda") is None or _ilu.find_spec("cuda.bindings") is None:
        _reason = (False, "the 'cuda' extra is not installed (pip install ptcore[cuda] for cuda-bindings)")
        return _reason
    try:
        from cuda.bindings import driver
        err, = driver.cuInit(0)
        if int(err) != 0:
            _reason = (False, f"cuInit failed: {err!r} (no NVIDIA driver or no device)")
            return _reason
        err, n = driver.cuDeviceGetCount()
        if int(err) != 0 or n == 0:
            _reason = (False, "no CUDA device found")
            return _reason
    except Exception as e:  # a broken install must not break is_available()
        _reason = (False, f"CUDA driver unusable: {type(e).__name__}: {e}")
        return _reason
    _reason = (False, "a CUDA device is present, but this build of ptcore has no CUDA backend yet")
    return _reason


def is_available():
    """True when a CUDA device can be used by ptcore.  Never raises."""
    return _probe()[0]


def _unavailable_reason():
    """Why ``is_available()`` is False (None when it is True)."""
    ok, why = _probe()
    return None if ok else why


def device_count():
    """Number of usable CUDA devices (0 when CUDA is unavailable)."""
    return 0


def is_initialized():
    """True once CUDA has been initialised in this process."""
    return False


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 is usable on the current CUDA device (False without one)."""
    return is_available()


def current_device():
    """Index of the current CUDA device; needs CUDA."""
    _lazy_init("current_device()")
    return 0


def set_device(device):
    """Select the current CUDA device (a negative index is a no-op, as torch)."""
    import ptcore
    idx = device if isinstance(device, int) else ptcore.device(device).index
    if idx is None or idx < 0:
        return
    _lazy_init(f"set_device({device!r})")


def synchronize(device=None):
    """Wait for every kernel queued on ``device``; needs CUDA."""
    _lazy_init("synchronize()")


def get_device_name(device=None):
    """Name of a CUDA device; needs CUDA."""
    _lazy_init("get_device_name()")


def get_device_capability(device=None):
    """(major, minor) compute capability of a CUDA device; needs CUDA."""
    _lazy_init("get_device_capability()")


def get_device_properties(device=None):
    """Properties of a CUDA device; needs CUDA."""
    _lazy_init("get_device_properties()")


def _lazy_init(what="CUDA"):
    ok, why = _probe()
    if not ok:
        raise RuntimeError(f"{what}: CUDA is not available: {why}")


def _cuda_hook(dev, what):
    _lazy_init(f"{what} on {dev}")


def _to_device(t, device, dtype, non_blocking):
    if device.type == "cuda" or t.device.type == "cuda":
        _lazy_init(f"moving a tensor from {t.device} to {device}")
    raise RuntimeError(f"cannot move a tensor from {t.device} to {device}")


def _pin_memory(t):
    _lazy_init("pin_memory()")


_C._set_cuda_hook(_cuda_hook)


def __getattr__(name):
    # ptcore.cuda.amp (the deprecated autocast/GradScaler spellings), imported on first use
    if name == "amp":
        import importlib
        mod = importlib.import_module("ptcore.cuda.amp")
        globals()["amp"] = mod
        return mod
    raise AttributeError(f"module 'ptcore.cuda' has no attribute '{name}'")
