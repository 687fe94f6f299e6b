"""The device counters ``nvidia-smi`` shows, through NVML (``pynvml``, the
``nvidia-ml-py`` package), as ``torch.cuda.utilization`` & co.

A CUDA device is matched to its NVML device by UUID (``cuDeviceGetUuid``
and ``nvmlDeviceGetHandleByUUID``), which is right whatever
``CUDA_VISIBLE_DEVICES`` says.  The emulated device has no NVML device."""
from ptcore.cuda.runtime import state as _runtime

__all__ = ["utilization", "memory_usage", "temperature", "power_draw", "clock_rate",
           "device_memory_used", "list_gpu_processes"]


def _pynvml():
    try:
        import pynvml
    except ImportError as e:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                                  "imported.") from e
    return pynvml


def _handle(device, what):
    """(pynvml, the NVML handle of CUDA ``device``)."""
    nv = _pynvml()
    drv = _runtime.lazy_init(what)
    idx = _runtime.device_index(device, what)
    _runtime.check_index(idx, what)
    if drv.is_emulated:
        raise RuntimeError(f"{what}: the emulated CUDA device has no NVML counterpart "
                           f"(these counters need a real GPU)")
    try:
        nv.nvmlInit()
    except nv.NVMLError_DriverNotLoaded as e:
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?") from e
    uuid = drv.device_properties(idx)["uuid"]
    if not uuid:
        raise RuntimeError(f"{what}: the CUDA driver gave no UUID for device {idx}")
    return nv, nv.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}".encode())


def utilization(device=None):
    """Percent of the last sample period in which a kernel ran (``nvidia-smi``)."""
    nv, h = _handle(device, "utilization()")
    return nv.nvmlDeviceGetUtilizationRates(h).gpu


def memory_usage(device=None):
    """Percent of the last sample period in which device memory was read or written."""
    nv, h = _handle(device, "memory_usage()")
    return nv.nvmlDeviceGetUtilizationRates(h).memory


def temperature(device=None):
    """The GPU die's temperature in degrees C."""
    nv, h = _handle(device, "temperature()")
    return nv.nvmlDeviceGetTemperature(h, 0)       # NVML_TEMPERATURE_GPU


def power_draw(device=None):
    """The average power draw over the last sample period, in mW."""
    nv, h = _handle(device, "power_draw()")
    return nv.nvmlDeviceGetPowerUsage(h)


def clock_rate(device=None):
    """The SM clock over the last sample period, in MHz."""
    nv, h = _handle(device, "clock_rate()")
    return nv.nvmlDeviceGetClockInfo(h, 1)          # NVML_CLOCK_SM


def device_memory_used(device=None):
    """Device memory in use, in bytes, by every process (``nvidia-smi``'s)."""
    nv, h = _handle(device, "device_memory_used()")
    return nv.nvmlDeviceGetMemoryInfo(h).used


def list_gpu_processes(device=None):
    """The processes running on the device and their memory, as text (torch's
    format; a message instead when NVML is missing)."""
    try:
        nv, h = _handle(device, "list_gpu_processes()")
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    idx = _runtime.device_index(device, "list_gpu_processes()")
    lines = [f"GPU:{idx}"]
    procs = nv.nvmlDeviceGetComputeRunningProcesses(h)
    if not procs:
        lines.append("no processes are running")
    for p in procs:
        lines.append(f"process {p.pid:>10d} uses {p.usedGpuMemory / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)
