"""``ptcore.cuda.memory`` (``torch.cuda.memory``): the caching allocator's
functions under their module path (they are also ``ptcore.cuda.<name>``)."""
from ptcore.cuda import (  # noqa: F401
    OutOfMemoryError, caching_allocator_alloc, caching_allocator_delete, empty_cache,
    get_allocator_backend, get_per_process_memory_fraction, max_memory_allocated,
    max_memory_cached, max_memory_reserved, mem_get_info, memory_allocated, memory_cached,
    memory_reserved, memory_snapshot, memory_stats, memory_stats_as_nested_dict, memory_summary,
    reset_accumulated_memory_stats, reset_max_memory_allocated, reset_max_memory_cached,
    reset_peak_memory_stats, set_per_process_memory_fraction,
)

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "empty_cache",
           "get_allocator_backend", "get_per_process_memory_fraction", "max_memory_allocated",
           "max_memory_cached", "max_memory_reserved", "mem_get_info", "memory_allocated",
           "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats",
           "memory_stats_as_nested_dict", "memory_summary", "reset_accumulated_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_memory_stats",
           "set_per_process_memory_fraction"]
