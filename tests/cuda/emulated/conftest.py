"""Every test module here runs on the emulated CUDA device.

``PTCORE_CUDA_EMULATE`` is set for the duration of each module only, and
ptcore.cuda's cached probe, driver and allocators are reset on entry and on
exit (``ptcore.cuda.runtime.state.reset``), so modules elsewhere in the same
pytest run still see a machine without a GPU.  With
``PTCORE_TEST_REAL_CUDA=1`` (a machine with a GPU) they run on the real
device instead.
"""
import gc
import os

import pytest

import ptcore
from device_target import REAL
from ptcore.cuda.runtime import state as _runtime


def _switch(value):
    gc.collect()                    # device tensors of the previous state go first
    _runtime.reset()
    if value is None:
        os.environ.pop("PTCORE_CUDA_EMULATE", None)
    else:
        os.environ["PTCORE_CUDA_EMULATE"] = value


@pytest.fixture(autouse=True, scope="module")
def emulated_cuda():
    if REAL:
        if not ptcore.cuda.is_available():
            pytest.skip("PTCORE_TEST_REAL_CUDA=1 but no CUDA device is usable")
        # the tests compare float32 convolutions with the CPU's: TF32 off, as
        # torch's own CUDA tests do (tf32_off); the TF32 tests set it themselves
        cudnn = ptcore.backends.cudnn
        old_tf32 = cudnn.allow_tf32
        cudnn.allow_tf32 = False
        try:
            yield
        finally:
            cudnn.allow_tf32 = old_tf32
        return
    old = os.environ.get("PTCORE_CUDA_EMULATE")
    _switch(os.environ.get("PTCORE_TEST_EMULATE_DEVICES", "2"))
    assert ptcore.cuda.is_available()
    try:
        yield
    finally:
        _switch(old)


@pytest.fixture
def launches(monkeypatch):
    """The names of the kernels launched while the test runs, in launch order
    (``Driver.kernel_name`` of each function handle)."""
    drv = _runtime.lazy_init("test")
    names = []
    if drv.launcher is not None:
        # every launch goes through the driver's C launcher
        inner = drv.launcher

        class Recording:
            def launch(self, function, *a, **k):
                names.append(drv.kernel_name(function))
                return inner.launch(function, *a, **k)

            def __getattr__(self, name):            # register, checked, ...
                return getattr(inner, name)
        monkeypatch.setattr(drv, "launcher", Recording())
        return names
    return _record_queued(drv, names, monkeypatch)


def _record_queued(drv, names, monkeypatch):
    orig = drv.launch

    def launch(function, *a, **k):
        names.append(drv.kernel_name(function))
        return orig(function, *a, **k)
    monkeypatch.setattr(drv, "launch", launch)
    return names


@pytest.fixture
def queued_kernels(monkeypatch):
    """The names of the kernels the emulated driver queues while the test
    runs, the C fast paths' launches included (the driver's C launcher
    stays: ``launches`` replaces it, which turns those paths off).  On a
    real device the C paths launch through the driver's function pointers,
    where no Python hook sees them: the test is skipped there."""
    if REAL:
        pytest.skip("counts the emulated driver's queue; a real device's C launches are not visible")
    return _record_queued(_runtime.lazy_init("test"), [], monkeypatch)


@pytest.fixture
def counted(monkeypatch):
    """The names of the ops whose calls reached the device layer (the calls
    a device fast path declined, or that have none)."""
    from ptcore._dispatch import device as device_layer
    calls = []
    orig = device_layer.LAYER.handle

    def handle(entry, opdef, args, kwargs, nxt):
        calls.append(opdef.name)
        return orig(entry, opdef, args, kwargs, nxt)
    monkeypatch.setattr(device_layer.LAYER, "handle", handle)
    return calls
