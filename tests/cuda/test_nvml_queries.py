"""ptcore.cuda.utilization & co. (torch.cuda's NVML counters): the error
without nvidia-ml-py, the emulated device's refusal, and the NVML calls on a
fake pynvml for a (fake) real device, matched by UUID."""
import sys
import types

import pytest

import ptcore
from ptcore.cuda.driver import nvml as _nvml
from ptcore.cuda.runtime import state as _runtime

_NAMES = ("utilization", "memory_usage", "temperature", "power_draw", "clock_rate",
          "device_memory_used")


def test_without_nvidia_ml_py(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    for name in _NAMES:
        with pytest.raises(ModuleNotFoundError, match="nvidia-ml-py"):
            getattr(ptcore.cuda, name)()
    assert ptcore.cuda.list_gpu_processes() == "pynvml module not found, please install nvidia-ml-py"


class _NVMLError(Exception):
    pass


def _fake_pynvml(calls):
    nv = types.ModuleType("pynvml")
    nv.NVMLError_DriverNotLoaded = _NVMLError
    nv.nvmlInit = lambda: calls.append("init")

    def by_uuid(u):
        calls.append(("uuid", u))
        return "H:" + u.decode()
    nv.nvmlDeviceGetHandleByUUID = by_uuid
    nv.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=37, memory=12)
    nv.nvmlDeviceGetTemperature = lambda h, sensor: 55 if sensor == 0 else -1
    nv.nvmlDeviceGetPowerUsage = lambda h: 123456
    nv.nvmlDeviceGetClockInfo = lambda h, kind: 1980 if kind == 1 else -1
    nv.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=7 << 30)
    nv.nvmlDeviceGetComputeRunningProcesses = lambda h: [
        types.SimpleNamespace(pid=4242, usedGpuMemory=3 * 1024 * 1024)]
    return nv


def test_counters_through_nvml_by_uuid(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(calls))
    drv = types.SimpleNamespace(is_emulated=False,
                                device_properties=lambda i: {"uuid": f"0000-uuid-{i}"})
    monkeypatch.setattr(_runtime, "lazy_init", lambda what="CUDA": drv)
    monkeypatch.setattr(_runtime, "device_index", lambda d, what="": 1 if d is None else int(d))
    monkeypatch.setattr(_runtime, "check_index", lambda i, what="": None)
    assert _nvml.utilization() == 37 and _nvml.memory_usage() == 12
    assert _nvml.temperature(1) == 55 and _nvml.power_draw() == 123456
    assert _nvml.clock_rate() == 1980 and _nvml.device_memory_used() == 7 << 30
    assert ("uuid", b"GPU-0000-uuid-1") in calls
    assert _nvml.list_gpu_processes() == "GPU:1\nprocess       4242 uses        3.000 MB GPU memory"


def test_emulated_device_has_no_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([]))
    drv = types.SimpleNamespace(is_emulated=True)
    monkeypatch.setattr(_runtime, "lazy_init", lambda what="CUDA": drv)
    monkeypatch.setattr(_runtime, "device_index", lambda d, what="": 0)
    monkeypatch.setattr(_runtime, "check_index", lambda i, what="": None)
    with pytest.raises(RuntimeError, match="emulated"):
        _nvml.utilization()


def test_names_match_torch():
    torch = pytest.importorskip("torch")
    for name in _NAMES + ("list_gpu_processes",):
        assert hasattr(torch.cuda, name) and callable(getattr(ptcore.cuda, name))
