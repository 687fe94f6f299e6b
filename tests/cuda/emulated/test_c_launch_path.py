"""Every kernel launch goes through the driver's C launcher
(``ptcore.cuda.driver.fast_launch``): on the emulated device its callback reads
the arguments back from the ``void*[]`` the launcher built, so the ops'
values here check the marshalling; a driver without a C launcher (or a
benchmark's stub) uses the Python ``launch`` with the same arguments; a
failed launch raises the driver's error."""
import numpy as np
import pytest

import ptcore
from device_target import REAL
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.driver.interface import CudaError
from ptcore.cuda.driver.fast_launch import KernelLauncher


def _ops(a, b):
    return [a + b, (a * 2.5 - b).exp(), a.sum(1), a.t().contiguous() * b.t(),
            ptcore.where(a > 0, a, b), a.sort(1).values, a[:, ::2] + 1, a.cumsum(0)]


def _data():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((6, 5)).astype(np.float32)
    return a, b


def test_the_c_launcher_carries_every_launch(launches):
    drv = _runtime.lazy_init("test")
    assert isinstance(drv.launcher, KernelLauncher) or type(drv.launcher).__name__ == "Recording"
    a, b = _data()
    del launches[:]
    got = _ops(ptcore.tensor(a, device="cuda"), ptcore.tensor(b, device="cuda"))
    want = _ops(ptcore.tensor(a), ptcore.tensor(b))
    assert len(launches) >= len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(REAL, reason="replaces the driver's launcher")
def test_without_a_c_launcher_the_python_launch_gives_the_same_values(monkeypatch):
    drv = _runtime.lazy_init("test")
    a, b = _data()
    x, y = ptcore.tensor(a, device="cuda"), ptcore.tensor(b, device="cuda")
    with_c = [t.cpu().numpy() for t in _ops(x, y)]
    calls = []
    orig = drv.launch

    def launch(function, grid, block, args, *rest):
        calls.append(args)
        return orig(function, grid, block, args, *rest)
    monkeypatch.setattr(drv, "launcher", None)
    monkeypatch.setattr(drv, "launch", launch)
    without = [t.cpu().numpy() for t in _ops(x, y)]
    assert calls and all(hasattr(v, "_b_base_") for args in calls for v in args)  # ctypes
    for p, q in zip(with_c, without):
        np.testing.assert_array_equal(p, q)


@pytest.mark.skipif(REAL, reason="the emulated driver's errors")
def test_a_failed_launch_raises():
    drv = _runtime.lazy_init("test")
    x = ptcore.ones(4, device="cuda")
    with pytest.raises(TypeError, match="kernel handle"):
        _launch.launch_function(drv, 12345, 1, 32, [_launch._ll(4), _launch._ptr(x)], 0, 0)
    e = _launch._entry(0, "ptc_fill_f32_c")
    with pytest.raises(TypeError, match="takes 3 arguments, got 2"):       # not read past
        _launch.launch_function(drv, e[1], 1, 32, [4, _launch._ptr(x)], 0, 0)
    with pytest.raises(ValueError, match="block"):
        _launch.launch_function(drv, e[1], 1, 2048, [4, _launch._ptr(x), _launch._params()], 0, 0)

    class Failing:
        def launch(self, *a):
            return 700                  # CUDA_ERROR_ILLEGAL_ADDRESS, no Python error behind it
    old = drv.launcher
    drv.launcher = Failing()
    try:
        with pytest.raises(CudaError, match="cuLaunchKernel.*700"):
            x.fill_(2.0)
    finally:
        drv.launcher = old
    x.fill_(3.0)
    assert x.cpu().tolist() == [3.0] * 4


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_dense_binary_ops_launch_one_kernel(dtype, launches):
    # two dense operands of one floating dtype and shape: the binary kernel
    # straight away; the values are the general path's (and the CPU's)
    a, b = _data()
    x = ptcore.tensor(a, dtype=dtype, device="cuda")
    y = ptcore.tensor(b, dtype=dtype, device="cuda")
    tag = "f32" if dtype is ptcore.float32 else "f64"
    for op in ("add", "mul", "div", "maximum", "minimum"):
        del launches[:]
        got = getattr(ptcore, op)(x, y)
        assert launches == [f"ptc_binary_{op}_{tag}_c"], (op, launches)
        want = getattr(ptcore, op)(ptcore.tensor(a, dtype=dtype), ptcore.tensor(b, dtype=dtype))
        assert got.dtype is dtype and got.device == x.device
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)
        # not dense: the general path, same values
        strided = getattr(ptcore, op)(x[:, ::2], y[:, ::2])
        want = getattr(ptcore, op)(ptcore.tensor(a, dtype=dtype)[:, ::2],
                                   ptcore.tensor(b, dtype=dtype)[:, ::2])
        np.testing.assert_allclose(strided.cpu().numpy(), want.numpy(), rtol=1e-6)
    e = ptcore.empty(0, 3, dtype=dtype, device="cuda")
    del launches[:]
    assert ptcore.add(e, e).shape == (0, 3) and launches == []
