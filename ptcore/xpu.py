"""``ptcore.xpu``: Intel's GPU device, which ptcore does not have (torch.xpu in a build
without XPU: ``is_available()`` False, ``device_count()`` 0, seeding and ``empty_cache``
silently do nothing, the calls needing the device raise ``AssertionError``)."""
from ptcore._absent_device import make_module_functions as _make

__all__ = ["current_device", "device_count", "empty_cache", "get_device_capability",
           "get_arch_list", "get_device_name", "get_device_properties", "get_rng_state",
           "get_rng_state_all", "init", "initial_seed", "max_memory_allocated",
           "max_memory_reserved", "mem_get_info", "memory_reserved", "memory_stats",
           "current_stream",
           "is_available", "is_bf16_supported", "is_initialized", "manual_seed",
           "manual_seed_all", "memory_allocated", "seed", "seed_all", "set_device",
           "set_rng_state", "synchronize"]

_f = _make("xpu", lambda call: AssertionError("Torch not compiled with XPU enabled"))
(is_available, device_count, is_initialized, manual_seed, manual_seed_all, seed, seed_all,
 memory_allocated) = (_f[n] for n in ("is_available", "device_count", "is_initialized",
                                      "manual_seed", "manual_seed_all", "seed", "seed_all",
                                      "memory_allocated"))
for _n in ("current_device", "get_device_capability", "get_device_name",
           "get_device_properties", "get_rng_state", "init", "initial_seed", "set_device",
           "set_rng_state", "synchronize", "mem_get_info", "current_stream"):
    globals()[_n] = _f["needs_device"](_n, _n)


def empty_cache():
    """Release cached device memory: nothing to release without the device."""


def memory_stats(device=None):
    """The allocator's statistics: none without the device."""
    return {}


def memory_reserved(device=None):
    return 0


max_memory_allocated = max_memory_reserved = memory_reserved


def get_arch_list():
    """The architectures this build supports: none."""
    return []


def get_rng_state_all():
    """One RNG state per device: none."""
    return []


def is_bf16_supported(including_emulation=True):
    """False: no XPU device."""
    return False


del _f, _make, _n
