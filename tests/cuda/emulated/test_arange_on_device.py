"""``arange`` of plain ints on a CUDA device (int64, a model's positions
``arange(T, device=x.device)``) is written by the arange kernel on the
device: the values of the CPU's, with no host values uploaded and so no wait
for the stream; the other calls (float dtypes, ``out=``, values near int64's
limits) take the general path."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.runtime import state as _runtime
from device_target import REAL

try:
    import torch
except ImportError:                 # pragma: no cover - torch is an optional test dependency
    torch = None


@pytest.fixture
def host_traffic(monkeypatch):
    """The driver calls that move host values or wait for the device while
    the test runs (uploads, downloads, stream and device synchronizations)."""
    drv = _runtime.lazy_init("test")
    seen = []
    for name in ("memcpy_htod", "memcpy_dtoh", "stream_synchronize", "device_synchronize"):
        orig = getattr(drv, name)

        def wrapped(*a, _orig=orig, _name=name, **k):
            seen.append(_name)
            return _orig(*a, **k)
        monkeypatch.setattr(drv, name, wrapped)
    return seen


ARGS = [(7,), (1,), (3, 11), (10, -3, -2), (-5, 100, 7), (0, 40000)]


@pytest.mark.parametrize("args", ARGS)
def test_values_as_the_cpu_and_no_host_traffic(args, host_traffic, launches):
    for dev in ("cuda", "cuda:0", ptcore.device("cuda")):
        del host_traffic[:], launches[:]
        t = ptcore.arange(*args, device=dev)
        assert host_traffic == []
        assert launches == ["ptc_arange_i64_c"]
        assert t.dtype is ptcore.int64 and t.device == ptcore.device("cuda", 0)
        assert t.shape == ptcore.arange(*args).shape and t.is_contiguous()
        np.testing.assert_array_equal(t.cpu().numpy(), np.arange(*args))
        if torch is not None:
            np.testing.assert_array_equal(t.cpu().numpy(), torch.arange(*args).numpy())


@pytest.mark.skipif(REAL, reason="the emulated device's second device")
def test_the_named_device():
    t = ptcore.arange(5, device="cuda:1")
    assert t.device == ptcore.device("cuda", 1)
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(5))
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ptcore.arange(5, device="cuda:7")


def test_the_other_calls_take_the_general_path(launches):
    cases = [
        (lambda d: ptcore.arange(5.0, device=d), np.arange(5.0, dtype=np.float32)),
        (lambda d: ptcore.arange(5, dtype=ptcore.int32, device=d), np.arange(5, dtype=np.int32)),
        (lambda d: ptcore.arange(0, device=d), np.arange(0)),
        (lambda d: ptcore.arange(5, 2, device=d), None),
        (lambda d: ptcore.arange(2 ** 62 + 10, 2 ** 62 + 13, device=d), np.arange(2 ** 62 + 10, 2 ** 62 + 13)),
        (lambda d: ptcore.arange(4, requires_grad=False, device=d, dtype=ptcore.int64), np.arange(4)),
    ]
    for fn, want in cases:
        if want is None:
            with pytest.raises(RuntimeError):
                fn("cpu")
            with pytest.raises(RuntimeError):
                fn("cuda")
            continue
        t = fn("cuda")
        assert t.device.type == "cuda" and t.dtype is fn("cpu").dtype
        np.testing.assert_array_equal(t.cpu().numpy(), want)
    out = ptcore.empty(3, dtype=ptcore.int64, device="cuda")
    del launches[:]
    r = ptcore.arange(3, out=out)
    assert r is out
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(3))
    assert "ptc_arange_i64_c" not in launches
