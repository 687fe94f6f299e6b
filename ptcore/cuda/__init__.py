"""ptcore.cuda: CUDA devices, streams, events, memory (``torch.cuda``).

Importing ``ptcore`` never touches CUDA: the driver (the real one through
cuda-python, or the emulated device selected by ``PTCORE_CUDA_EMULATE``)
is created at the first CUDA call.  ``is_available()`` never raises.  The
current device and the current stream of each device are per thread, as in
PyTorch.
"""
from ptcore import _tensor as _C
# The caching allocator's bookkeeping needs no driver:
# before a device backend is attached these report what torch reports before
# CUDA is initialised (empty stats, zero bytes); the mutating ones raise.
from ptcore.cuda.allocator.device_allocators import (  # noqa: F401
    OutOfMemoryError, caching_allocator_delete, empty_cache,
    max_memory_allocated, max_memory_reserved,
    memory_allocated, memory_reserved, memory_snapshot, memory_stats,
    memory_stats_as_nested_dict, memory_summary, reset_accumulated_memory_stats,
    reset_peak_memory_stats, reset_max_memory_allocated, reset_max_memory_cached,
    memory_cached, max_memory_cached,
)

from ptcore.cuda.driver.interface import AcceleratorError, CudaError  # noqa: F401
from ptcore.cuda.random import default_generator as _default_generator
from ptcore.cuda.random import (  # noqa: F401
    get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed, seed_all,
    set_rng_state, set_rng_state_all,
)

from ptcore._dispatch import device as _device_layer
from ptcore._ops import random as _host_random
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.allocator.device_allocators import (
    get_per_process_memory_fraction as _get_fraction, mem_get_info as _mem_get_info,
    set_per_process_memory_fraction as _set_fraction,
    caching_allocator_alloc as _caching_allocator_alloc,
)

# ptcore.manual_seed / ptcore.seed seed the CUDA generators too
if manual_seed_all not in _host_random.device_seeders:
    _host_random.device_seeders.append(manual_seed_all)


def _probe():
    """(available, reason) -- never raises."""
    return _runtime.probe()


def is_available():
    """True when a CUDA device can be used by ptcore (also the emulated
    device of ``PTCORE_CUDA_EMULATE``).  Never raises."""
    return _runtime.probe()[0]


def _unavailable_reason():
    """Why ``is_available()`` is False (None when it is True)."""
    ok, why = _runtime.probe()
    return None if ok else why


def _lazy_init(what="CUDA"):
    return _runtime.lazy_init(what)


def init():
    """Initialise the CUDA runtime (raises RuntimeError when unavailable)."""
    _runtime.lazy_init("init()")


def device_count():
    """Number of usable CUDA devices (0 when CUDA is unavailable)."""
    return _runtime.device_count()


def is_initialized():
    """True once CUDA has been initialised in this process."""
    return _runtime.is_initialized()


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 is usable on the current CUDA device (False without one)."""
    if not is_available():
        return False
    return get_device_capability()[0] >= 8 or bool(including_emulation)


def is_tf32_supported():
    """Whether the current CUDA device computes TensorFloat-32 natively
    (compute capability 8.0 or newer; False without a device)."""
    return is_bf16_supported(including_emulation=False)


def can_device_access_peer(device, peer_device):
    """Whether ``device`` can access ``peer_device``'s memory directly
    (AssertionError for an invalid index, as torch)."""
    _runtime.lazy_init("can_device_access_peer()")
    d = current_device() if device is None else _runtime.device_index(device, "can_device_access_peer()")
    p = _runtime.device_index(peer_device, "can_device_access_peer()")
    n = device_count()
    if d is None or d < 0 or d >= n:
        raise AssertionError("Invalid device id")
    if p is None or p < 0 or p >= n:
        raise AssertionError("Invalid peer device id")
    return _runtime.lazy_init().can_access_peer(d, p)


def ipc_collect():
    """Release CUDA IPC memory whose consumers are gone.  ptcore shares CUDA
    tensors between processes only through ``ptcore.multiprocessing``'s
    reference-counted handles, which free on their own, so there is nothing
    left to collect."""
    _runtime.lazy_init("ipc_collect()")


def current_device():
    """Index of the current CUDA device."""
    _runtime.lazy_init("current_device()")
    return _runtime.current_device()


def _index(device, what, optional=True):
    _runtime.lazy_init(what)
    idx = _runtime.device_index(device, what)
    return _runtime.check_index(idx, what)


def set_device(device):
    """Select the current CUDA device (a negative index is a no-op, as torch)."""
    import ptcore
    if isinstance(device, int) and not isinstance(device, bool):
        idx = device
    else:
        d = ptcore.device(device)
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        idx = d.index
    if idx is None or idx < 0:
        return
    _runtime.set_device(idx)


class device:
    """Context manager selecting a CUDA device (``torch.cuda.device``);
    an index of -1 or None is a no-op."""

    def __init__(self, device):
        if device is None:
            self.idx = -1
        elif isinstance(device, int) and not isinstance(device, bool):
            self.idx = device
        else:
            self.idx = _runtime.device_index(device, "cuda.device()")
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            _runtime.lazy_init("cuda.device()")
            self.prev_idx = _runtime.current_device()
            if self.prev_idx != self.idx:
                _runtime.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _runtime.set_device(self.prev_idx)
        return False


class device_of(device):
    """``device`` of a tensor's device (a no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if getattr(obj, "is_cuda", False) else -1)


def synchronize(device=None):
    """Wait for all work queued on every stream of ``device``."""
    idx = _index(device, "synchronize()")
    _runtime.lazy_init("synchronize()").device_synchronize(idx)


class _CudaDeviceProperties:
    """Properties of a CUDA device (``torch.cuda.get_device_properties``)."""

    def __init__(self, p):
        self.name = p["name"]
        self.major = p["major"]
        self.minor = p["minor"]
        self.total_memory = p["total_memory"]
        self.multi_processor_count = p["multi_processor_count"]
        self.max_threads_per_block = p["max_threads_per_block"]
        self.shared_memory_per_block = p["max_shared_memory_per_block"]
        self.warp_size = p["warp_size"]
        self.L2_cache_size = p["L2_cache_size"]
        self.uuid = p["uuid"]
        self.pci_bus_id = p["pci_bus_id"]
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.gcnArchName = "NVIDIA"

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"pci_bus_id={self.pci_bus_id}, L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    """Properties of a CUDA device (name, total_memory, major, minor,
    multi_processor_count ...)."""
    idx = _index(device, "get_device_properties()")
    return _CudaDeviceProperties(_runtime.lazy_init().device_properties(idx))


def get_device_name(device=None):
    """Name of a CUDA device (the emulated device says so)."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability of a CUDA device."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def get_arch_list():
    """Architectures ptcore compiles kernels for (at run time, for the device's own)."""
    if not is_available():
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


def mem_get_info(device=None):
    """``(free, total)`` device memory in bytes, as the driver reports it."""
    _runtime.lazy_init("mem_get_info()")
    return _mem_get_info(device)


def set_per_process_memory_fraction(fraction, device=None):
    """Limit this process's caching allocator on ``device`` to
    ``fraction * total memory``."""
    _runtime.lazy_init("set_per_process_memory_fraction()")
    return _set_fraction(fraction, device)


def get_per_process_memory_fraction(device=None):
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0 by default)."""
    _runtime.lazy_init("get_per_process_memory_fraction()")
    return _get_fraction(device)


def get_allocator_backend():
    """The caching allocator in use: ``"native"`` (ptcore's, with PyTorch's
    rules; there is no ``cudaMallocAsync`` backend)."""
    return "native"


def check_error(res):
    """Raise :class:`CudaError` for a nonzero CUDA error number ``res``."""
    if res != 0:
        raise CudaError(int(res))


# as torch.cuda: half precision is always there; linear algebra runs on
# cuSOLVER/cuBLAS, not MAGMA
has_half = True
has_magma = False


def caching_allocator_alloc(size, device=None, stream=None):
    """Allocate ``size`` bytes with the caching allocator; returns the pointer."""
    _runtime.lazy_init("caching_allocator_alloc()")
    if stream is not None and not isinstance(stream, int):
        stream = stream.cuda_stream
    return _caching_allocator_alloc(size, device, stream)


from ptcore.cuda.streams import (  # noqa: E402
    Event, ExternalStream, Stream, StreamContext, current_stream, default_stream, set_stream, stream,
)
from ptcore.cuda.driver.nvml import (  # noqa: E402
    clock_rate, device_memory_used, list_gpu_processes, memory_usage, power_draw, temperature,
    utilization,
)
from ptcore.cuda.graphs import (  # noqa: E402
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables,
)
# the legacy tensor types of CUDA tensors (torch.cuda.FloatTensor ...)
from ptcore._legacy_types import CUDA_LEGACY_TYPES as _LEGACY  # noqa: E402
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor, BoolTensor) = _LEGACY


def _cuda_hook(dev, what):
    _runtime.lazy_init(f"{what} on {dev}")


def _device_tensors():
    # the device side of Tensor imports the CUDA op library (kernel sources, launchers)
    # lazy: the CUDA op library loads at CUDA's first use, not at ``import ptcore``
    from ptcore.cuda.ops import tensors
    return tensors


def _install_device():
    # the op library registers into the nn, fft, special and linalg front-ends
    # lazy: the CUDA op library loads at CUDA's first use, not at ``import ptcore``
    from ptcore.cuda.ops import register
    register.install()


_runtime.on_init(_install_device)


def _to_device(t, device, dtype, non_blocking):
    return _device_tensors().to_device(t, device, dtype, non_blocking)


def _pin_memory(t):
    return _device_tensors().pin_memory(t)


def _is_pinned(t):
    if _runtime.get() is None:
        return False
    return _device_tensors().is_pinned(t)


_C._set_cuda_hook(_cuda_hook)
# the tensor layer (Tensor.to / pin_memory / is_pinned) reaches these through
# the dispatch layer's device runtime, without importing ptcore.cuda
def _record_stream(t, stream):
    _device_tensors().record_stream(t, stream)


def _dlpack_stream_sync(t, stream):
    _device_tensors().dlpack_stream_sync(t, stream)


def _cuda_array_interface(t):
    return _device_tensors().cuda_array_interface(t)


_device_layer.register_runtime(to_device=_to_device, pin_memory=_pin_memory,
                               is_pinned=_is_pinned, record_stream=_record_stream,
                               dlpack_stream_sync=_dlpack_stream_sync,
                               cuda_array_interface=_cuda_array_interface)


def __getattr__(name):
    # ptcore.cuda.amp (the deprecated autocast/GradScaler spellings) and ptcore.cuda.nvtx,
    # imported on first use
    if name in ("amp", "nvtx", "memory", "random", "profiler"):
        import importlib
        mod = importlib.import_module("ptcore.cuda." + name)
        globals()[name] = mod
        return mod
    if name == "default_generators":
        # torch.cuda.default_generators: the devices' generators once CUDA is up
        if not _runtime.is_initialized():
            return ()
        return tuple(_default_generator(i) for i in range(device_count()))
    if name == "_initialized":
        # torch.cuda._initialized, read by code that must not initialise CUDA
        # itself (torch.utils.checkpoint's RNG stash among it)
        return _runtime.is_initialized()
    raise AttributeError(f"module 'ptcore.cuda' has no attribute '{name}'")
