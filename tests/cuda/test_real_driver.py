"""The real CUDA driver's failure paths, which run without a GPU: missing
cuda-bindings, no driver library, error reporting; and ptcore.cuda's probe
never raising.  (On a GPU machine the emulated-device tests run against the
real driver with PTCORE_TEST_REAL_CUDA=1.)"""
import os
import subprocess
import sys

import pytest

import ptcore
from ptcore.cuda import _driver, _runtime
from ptcore.cuda._real_driver import RealDriver, _check


def test_missing_bindings_is_a_clear_runtime_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    with pytest.raises(RuntimeError, match="cuda"):
        RealDriver()


def test_no_driver_library():
    pytest.importorskip("cuda.bindings")
    if ptcore.cuda.is_available() and not _runtime.get() or os.environ.get("PTCORE_TEST_REAL_CUDA"):
        pytest.skip("a CUDA driver is present")
    try:
        RealDriver()
    except RuntimeError as e:
        assert "CUDA" in str(e) or "cuInit" in str(e) or "device" in str(e)
    else:
        pytest.skip("a CUDA driver is present")


def test_check_names_call_and_error():
    class Err:
        name = "CUDA_ERROR_INVALID_VALUE"

        def __int__(self):
            return 1
    with pytest.raises(_driver.CudaError, match="cuMemAlloc.*CUDA_ERROR_INVALID_VALUE") as ei:
        _check("cuMemAlloc", (Err(), 0))
    assert ei.value.call == "cuMemAlloc" and ei.value.code == "CUDA_ERROR_INVALID_VALUE"
    assert isinstance(ei.value, RuntimeError)

    class Ok:
        def __int__(self):
            return 0
    assert _check("cuDeviceGetCount", (Ok(), 3)) == 3
    assert _check("cuCtxSynchronize", (Ok(),)) is None


def test_probe_never_raises_on_a_bad_setting(monkeypatch):
    if os.environ.get("PTCORE_CUDA_EMULATE"):
        pytest.skip("emulation is on for the whole run")
    monkeypatch.setenv("PTCORE_CUDA_EMULATE", "lots")
    _runtime.reset()
    try:
        assert ptcore.cuda.is_available() is False
        assert "PTCORE_CUDA_EMULATE" in ptcore.cuda._unavailable_reason()
        assert ptcore.cuda.device_count() == 0
        with pytest.raises(RuntimeError, match="not available"):
            ptcore.zeros(1, device="cuda")
    finally:
        monkeypatch.delenv("PTCORE_CUDA_EMULATE")
        _runtime.reset()


def test_emulation_in_a_fresh_process():
    code = ("import sys, ptcore; c = ptcore.cuda; "
            "print(c.is_available(), c.device_count(), 'emulated' in c.get_device_name(), "
            "ptcore.ones(3, device='cuda').cpu().tolist(), "
            "any(m == 'cuda.bindings.driver' for m in sys.modules))")
    env = dict(os.environ, PTCORE_CUDA_EMULATE="3")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "3", "True", "[1.0,", "1.0,", "1.0]", "False"]
    # the first CUDA call of a process may be a factory
    code = ("import ptcore; print(ptcore.zeros(2, device='cuda').device, "
            "ptcore.empty_strided((2,), (1,), device='cuda:1').device)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cuda:0", "cuda:1"]
