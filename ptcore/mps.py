"""``ptcore.mps``: Apple's Metal device, which ptcore does not have (torch.mps without MPS:
``is_available()`` False, ``device_count()`` 0, the calls needing the device raise
``RuntimeError``)."""
from ptcore._absent_device import make_module_functions as _make

__all__ = ["current_allocated_memory", "device_count", "driver_allocated_memory", "empty_cache",
           "get_rng_state", "is_available", "manual_seed", "recommended_max_memory", "seed",
           "set_per_process_memory_fraction", "set_rng_state", "synchronize"]

_f = _make("mps", lambda call: RuntimeError(f"Cannot execute {call}() without MPS backend."))
is_available, device_count, manual_seed = _f["is_available"], _f["device_count"], _f["manual_seed"]
synchronize = _f["needs_device"]("synchronize", "deviceSynchronize")
seed = _f["needs_device"]("seed", "getDefaultGenerator")
get_rng_state = _f["needs_device"]("get_rng_state", "getDefaultGenerator")
set_rng_state = _f["needs_device"]("set_rng_state", "getDefaultGenerator")
empty_cache = _f["needs_device"]("empty_cache", "emptyCache")
current_allocated_memory = _f["needs_device"]("current_allocated_memory",
                                              "getCurrentAllocatedMemory")
driver_allocated_memory = _f["needs_device"]("driver_allocated_memory",
                                             "getDriverAllocatedMemory")
recommended_max_memory = _f["needs_device"]("recommended_max_memory", "getRecommendedMaxMemory")
set_per_process_memory_fraction = _f["needs_device"]("set_per_process_memory_fraction",
                                                     "setMemoryFraction")
del _f, _make
