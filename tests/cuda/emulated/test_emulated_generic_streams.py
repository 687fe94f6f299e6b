"""ptcore.Stream / ptcore.Event (device-generic) on the emulated CUDA device: they wrap
ptcore.cuda's streams and events, default to the current accelerator's device."""
import numpy as np
import pytest

import ptcore
from device_target import need_devices


def test_default_stream_and_event_are_on_the_accelerator():
    s = ptcore.Stream()
    assert s.device == ptcore.device("cuda", ptcore.cuda.current_device())
    assert s.device_type == 1 and s.device_index == ptcore.cuda.current_device()
    assert s.stream_id != 0 and s.native_handle() == s.stream_id
    e = ptcore.Event()
    assert e.device.type == "cuda"
    assert ptcore.Stream(0).device == ptcore.device("cuda", 0)


def test_stream_on_the_second_device():
    need_devices(2)
    s = ptcore.Stream("cuda:1")
    assert s.device_index == 1 and s.device == ptcore.device("cuda", 1)


def test_work_ordering_through_generic_stream_and_event():
    s = ptcore.Stream("cuda")
    x = ptcore.arange(1000, dtype=ptcore.float32, device="cuda")
    with s:
        assert ptcore.cuda.current_stream().cuda_stream == s.stream_id
        y = x * 2
        ev = s.record_event()
    assert ptcore.cuda.current_stream().cuda_stream != s.stream_id
    ev.synchronize()
    assert ev.query() and s.query()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(1000, dtype=np.float32) * 2)
    other = ptcore.Stream("cuda")
    other.wait_stream(s)
    other.wait_event(ev)
    other.synchronize()


def test_event_timing_and_device_mismatch():
    s = ptcore.Stream("cuda:0")
    a, b = ptcore.Event("cuda:0", enable_timing=True), ptcore.Event("cuda:0", enable_timing=True)
    a.record(s)
    ptcore.ones(64, 64, device="cuda:0").sum()
    b.record(s)
    b.synchronize()
    assert a.elapsed_time(b) >= 0.0
    with pytest.raises(ValueError):
        ptcore.Event("cuda:0").elapsed_time(ptcore.Event("cuda:0"))
    with pytest.raises(RuntimeError):
        ptcore.Event("cuda:1").record(s)
    cpu_event = ptcore.Event("cpu")
    with pytest.raises(RuntimeError):
        cpu_event.record(ptcore.Stream("cpu"))
