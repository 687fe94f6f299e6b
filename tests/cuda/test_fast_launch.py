"""ptcore.cuda.driver.fast_launch: the C kernel launch every ptcore launch takes.
A ctypes function with cuLaunchKernel's signature stands in for the driver
and reads back what the launcher built: the grid, block, shared memory and
stream, and each argument's bytes through the ``void*[]`` (ints as 8-byte
two's complement, bytes as struct values, ctypes values as their own bytes).
No GPU and no emulated device are needed."""
import ctypes
import struct

import pytest

from ptcore.cuda.driver import fast_launch as _fast_launch
from ptcore.cuda.driver.fast_launch import KernelLauncher, null_launcher

_SIG = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
                        ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


class _Recorder:
    """A fake cuLaunchKernel reading ``sizes[i]`` bytes of argument ``i``."""

    def __init__(self, sizes, rc=0):
        self.sizes, self.rc, self.calls = sizes, rc, []

        def c_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
            self.calls.append(dict(
                f=f, grid=(gx, gy, gz), block=(bx, by, bz), smem=smem, stream=stream,
                extra=extra, args=[ctypes.string_at(params[i], n) for i, n in enumerate(sizes)]))
            return self.rc
        self.cb = _SIG(c_launch)
        self.launcher = KernelLauncher(ctypes.cast(self.cb, ctypes.c_void_p).value, owner=self.cb,
                                       checked=False)


def test_arguments_reach_the_driver_as_the_kernel_reads_them():
    r = _Recorder([8, 8, 8, 16, 8, 4, 8])
    params = struct.pack("<dd", 1.5, -2.0)              # a struct by value
    args = (12345678901, -3, 0xFFFF800000001000, params, ctypes.c_double(0.25),
            ctypes.c_int(-7), 0)
    assert r.launcher.launch(0x1234, (3, 2, 1), (128, 1, 1), 0xABC0, args, 96) == 0
    (c,) = r.calls
    assert c["f"] == 0x1234 and c["grid"] == (3, 2, 1) and c["block"] == (128, 1, 1)
    assert c["smem"] == 96 and c["stream"] == 0xABC0 and c["extra"] is None
    got = c["args"]
    assert struct.unpack("<q", got[0])[0] == 12345678901
    assert struct.unpack("<q", got[1])[0] == -3                    # long long, two's complement
    assert struct.unpack("<Q", got[2])[0] == 0xFFFF800000001000   # a pointer above 2**63
    assert got[3] == params
    assert struct.unpack("<d", got[4])[0] == 0.25
    assert struct.unpack("<i", got[5])[0] == -7
    assert got[6] == b"\0" * 8                                     # a NULL pointer


def test_grid_and_block_forms_and_the_default_stream():
    r = _Recorder([8])
    r.launcher.launch(1, 7, 256, 0, [5])
    r.launcher.launch(1, (7,), (16, 4), 0, [5])
    assert [(c["grid"], c["block"], c["stream"]) for c in r.calls] == [
        ((7, 1, 1), (256, 1, 1), None), ((7, 1, 1), (16, 4, 1), None)]


def test_the_drivers_result_is_returned():
    r = _Recorder([8], rc=701)
    assert r.launcher.launch(1, 1, 1, 0, [0]) == 701
    assert null_launcher().launch(1, 1, 1, 0, [1, b"xy", ctypes.c_float(1)]) == 0


def test_bad_arguments_are_refused_before_the_driver_is_called():
    r = _Recorder([8])
    with pytest.raises(TypeError, match="argument 1.*str"):
        r.launcher.launch(1, 1, 1, 0, [1, "no"])
    with pytest.raises(ValueError, match="at most"):
        r.launcher.launch(1, 1, 1, 0, [0] * (_fast_launch.MAX_ARGS + 1))
    with pytest.raises(ValueError, match="1 to 3"):
        r.launcher.launch(1, (1, 1, 1, 1), 1, 0, [0])
    with pytest.raises(OverflowError):
        r.launcher.launch(1, -1, 1, 0, [0])
    with pytest.raises(OverflowError):
        r.launcher.launch(1, 1, 1, 0, [1 << 64])
    assert r.calls == []
    with pytest.raises(ValueError, match="NULL"):
        KernelLauncher(0)


def test_a_buffer_held_for_the_call_is_released():
    # a ctypes value's buffer is released after the launch: it can be resized
    # / collected afterwards, and a failing launch releases it too
    import gc
    import sys
    r = _Recorder([8])
    v = ctypes.c_longlong(9)
    before = sys.getrefcount(v)
    for _ in range(100):
        r.launcher.launch(1, 1, 1, 0, [v])
    with pytest.raises(TypeError):
        r.launcher.launch(1, 1, 1, 0, [v, object()])
    gc.collect()
    assert sys.getrefcount(v) == before
    assert all(struct.unpack("<q", c["args"][0])[0] == 9 for c in r.calls)


def test_a_checked_launcher_launches_registered_kernels_with_their_arguments():
    # the driver reads one argument per parameter, that many bytes: too few
    # arguments or a short struct would be read past their end
    r = _Recorder([8, 16])
    checked = KernelLauncher(ctypes.cast(r.cb, ctypes.c_void_p).value, owner=r.cb)
    assert checked.checked and not r.launcher.checked
    with pytest.raises(TypeError, match="kernel handle"):
        checked.launch(0x40, 1, 1, 0, [1, b"x" * 16])
    checked.register(0x40, [8, 16])
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        checked.launch(0x40, 1, 1, 0, [1])
    with pytest.raises(ValueError, match="argument 1: 8 bytes for a 16-byte"):
        checked.launch(0x40, 1, 1, 0, [1, b"x" * 8])
    with pytest.raises(ValueError, match="argument 1: 4 bytes"):
        checked.launch(0x40, 1, 1, 0, [1, ctypes.c_int(3)])
    assert r.calls == []
    assert checked.launch(0x40, 1, 1, 0, [1, b"y" * 16]) == 0
    assert r.calls[0]["args"] == [struct.pack("<q", 1), b"y" * 16]
    checked.register(0x80, None)                # sizes unknown: launched unchecked
    assert checked.launch(0x80, 1, 1, 0, [1, 2]) == 0
