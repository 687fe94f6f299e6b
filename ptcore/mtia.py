"""``ptcore.mtia``: Meta's accelerator, which ptcore does not have (torch.mtia without MTIA:
``is_available()`` False, ``device_count()`` 0, seeding silently does nothing, the calls
needing the device raise ``RuntimeError``)."""
from ptcore._absent_device import make_module_functions as _make

__all__ = ["current_device", "device_count", "empty_cache", "get_device_capability",
           "get_device_properties", "init", "is_available", "is_initialized", "manual_seed",
           "manual_seed_all", "memory_allocated", "memory_stats", "seed", "seed_all",
           "get_rng_state", "set_rng_state", "set_device", "synchronize", "is_bf16_supported",
           "current_stream", "default_stream"]

_f = _make("mtia", lambda call: RuntimeError(f"Cannot execute {call}() without MTIA backend."))
(is_available, device_count, is_initialized, manual_seed, manual_seed_all, seed, seed_all,
 memory_allocated) = (_f[n] for n in ("is_available", "device_count", "is_initialized",
                                      "manual_seed", "manual_seed_all", "seed", "seed_all",
                                      "memory_allocated"))
for _n, _call in (("current_device", "getCurrentDevice"), ("synchronize", "getCurrentDevice"),
                  ("set_device", "setCurrentDevice"), ("empty_cache", "emptyCache"),
                  ("get_device_capability", "getCurrentDevice"),
                  ("get_device_properties", "getCurrentDevice"),
                  ("current_stream", "getCurrentDevice"), ("default_stream", "getCurrentDevice")):
    globals()[_n] = _f["needs_device"](_n, _call)


def _not_compiled(*args, **kwargs):
    raise AssertionError("Torch not compiled with MTIA enabled")


init = get_rng_state = set_rng_state = _not_compiled


def is_bf16_supported(including_emulation=True):
    """True, as torch.mtia answers without consulting a device."""
    return True


def memory_stats(device=None):
    """The allocator's statistics: none without the device."""
    return {}


del _f, _make, _n, _call
