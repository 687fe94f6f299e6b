"""ptcore.cuda's runtime API on the emulated device (two devices): devices,
streams, events, the caching allocator over the driver, out of memory."""
import threading

import pytest

import ptcore
from device_target import REAL
from ptcore import cuda


def test_devices():
    assert cuda.is_available()
    assert cuda.is_initialized() or cuda.device_count() >= 1
    n = cuda.device_count()
    assert n >= 1
    assert cuda.is_initialized()
    assert "emulated" in cuda.get_device_name() or not cuda._runtime.get().is_emulated
    p = cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0
    assert cuda.get_device_capability(0) == (p.major, p.minor)
    assert "total_memory=" in repr(p)
    assert cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.get_device_properties(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(n)
    cuda.set_device(-1)                      # a no-op, as torch
    assert cuda.current_device() == 0


@pytest.mark.skipif("ptcore.cuda.device_count() < 2")
def test_device_context_managers_and_threads():
    with cuda.device(1):
        assert cuda.current_device() == 1
        t = ptcore.zeros(2, device="cuda")
        assert t.device == ptcore.device("cuda", 1)
        seen = []
        th = threading.Thread(target=lambda: seen.append(cuda.current_device()))
        th.start()
        th.join(10)
        assert seen == [0]                  # the current device is per thread
    assert cuda.current_device() == 0
    with cuda.device_of(t):
        assert cuda.current_device() == 1
    with cuda.device_of(ptcore.zeros(1)):   # CPU tensor: no-op
        assert cuda.current_device() == 0
    with cuda.device(None):
        assert cuda.current_device() == 0
    cuda.set_device("cuda:1")
    try:
        assert cuda.current_device() == 1
    finally:
        cuda.set_device(0)


def test_streams():
    s = cuda.Stream()
    assert s != cuda.default_stream()
    assert cuda.current_stream() == cuda.default_stream()
    assert cuda.default_stream().cuda_stream == 0
    assert s.__cuda_stream__() == (0, s.cuda_stream)
    assert hash(s) == hash(cuda.Stream._wrap(0, s.cuda_stream))
    assert cuda.Stream(priority=-1).priority == -1
    with cuda.stream(s):
        assert cuda.current_stream() == s
        x = ptcore.ones(3, device="cuda")
        assert s.query() in (True, False)
    assert cuda.current_stream() == cuda.default_stream()
    s.synchronize()
    assert s.query()
    assert x.cpu().tolist() == [1.0, 1.0, 1.0]
    with s:                                 # a stream is its own context manager
        assert cuda.current_stream() == s
    assert cuda.current_stream() == cuda.default_stream()
    with cuda.stream(None):                 # no-op
        assert cuda.current_stream() == cuda.default_stream()
    with pytest.raises(TypeError):
        cuda.stream(3)
    cuda.set_stream(s)
    try:
        assert cuda.current_stream() == s
    finally:
        cuda.set_stream(cuda.default_stream())


def test_stream_pool_is_bounded():
    handles = {cuda.Stream().cuda_stream for _ in range(100)}
    assert len(handles) <= 32


def test_events_order_streams():
    s1, s2 = cuda.Stream(), cuda.Stream()
    a = ptcore.zeros(1000, device="cuda")
    cuda.synchronize()
    with cuda.stream(s1):
        a.fill_(5.0)
        e = s1.record_event()
    s2.wait_event(e)
    with cuda.stream(s2):
        b = a.clone()
    s2.synchronize()
    assert b.cpu().tolist() == [5.0] * 1000
    s2.wait_stream(s1)
    assert e.query()
    e.synchronize()
    never = cuda.Event()
    assert never.query()
    never.synchronize()
    never.wait()


def test_event_timing():
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    ptcore.ones(100, device="cuda")
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0
    plain = cuda.Event()
    plain.record()
    with pytest.raises(RuntimeError, match="enable_timing"):
        start.elapsed_time(plain)
    with pytest.raises(RuntimeError, match="recorded"):
        cuda.Event(enable_timing=True).elapsed_time(end)


def test_allocator_over_the_driver():
    cuda.empty_cache()
    base = cuda.memory_allocated()
    x = ptcore.empty(1000, device="cuda")               # 4000 bytes -> 4096
    assert cuda.memory_allocated() == base + 4096
    assert cuda.memory_reserved() >= 2 << 20
    ptr = x.data_ptr()
    del x
    assert cuda.memory_allocated() == base
    y = ptcore.empty(1000, device="cuda")
    assert y.data_ptr() == ptr                          # cached block reused
    del y
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    stats = cuda.memory_stats()
    assert stats["allocation.all.allocated"] >= 2
    assert "Allocated memory" in cuda.memory_summary()
    # empty_cache releases the segments without a live block: other live tensors of the
    # process may keep the small pool's 2 MiB segments, so a block larger than all that is
    # cached, which takes a segment of its own, is released back to the level before it
    cuda.empty_cache()
    reserved = cuda.memory_reserved()
    nbytes = reserved + (4 << 20)
    z = ptcore.empty(nbytes // 4, device="cuda")
    assert cuda.memory_reserved() >= reserved + nbytes
    free = cuda.mem_get_info()[0]
    del z
    assert cuda.memory_reserved() >= reserved + nbytes      # cached
    cuda.empty_cache()
    assert cuda.memory_reserved() == reserved
    if not REAL:            # (a real GPU is shared with the other test processes)
        assert cuda.mem_get_info()[0] > free


def test_record_stream_delays_reuse():
    s = cuda.Stream()
    x = ptcore.empty(256, device="cuda")
    ptr = x.data_ptr()
    x.record_stream(s)
    with pytest.raises(TypeError):
        x.record_stream(0)
    del x
    cuda.synchronize()
    y = ptcore.empty(256, device="cuda")                 # pending events are polled
    del y
    with pytest.raises(RuntimeError, match="CUDA tensor"):
        ptcore.zeros(1).record_stream(s)
    assert ptr != 0


def test_out_of_memory_and_recovery():
    free, total = cuda.mem_get_info()
    with pytest.raises(cuda.OutOfMemoryError) as ei:
        ptcore.empty(total // 4 + 1024, dtype=ptcore.float64, device="cuda")
    msg = str(ei.value)
    assert "Tried to allocate" in msg and "free" in msg and "reserved" in msg
    assert isinstance(ei.value, RuntimeError)
    x = ptcore.ones(10, device="cuda")                  # the process is still usable
    assert x.cpu().tolist() == [1.0] * 10


def test_memory_fraction():
    total = cuda.mem_get_info()[1]
    cuda.set_per_process_memory_fraction(0.25)
    try:
        assert cuda.get_per_process_memory_fraction() == 0.25
        with pytest.raises(cuda.OutOfMemoryError, match="allowed"):
            ptcore.empty(int(total * 0.3), dtype=ptcore.uint8, device="cuda")
        ptcore.empty(1 << 20, dtype=ptcore.uint8, device="cuda")
    finally:
        cuda.set_per_process_memory_fraction(1.0)
    with pytest.raises(ValueError):
        cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError):
        cuda.set_per_process_memory_fraction(1)


def test_caching_allocator_alloc_delete():
    p = cuda.caching_allocator_alloc(4096)
    assert p != 0
    cuda.caching_allocator_delete(p)
    with pytest.raises(RuntimeError):
        cuda.caching_allocator_delete(p)


def test_synchronize():
    x = ptcore.ones(10, device="cuda")
    cuda.synchronize()
    cuda.synchronize(0)
    cuda.synchronize("cuda:0")
    assert x.cpu().tolist() == [1.0] * 10


def test_deprecated_memory_aliases_and_peer_queries():
    x = ptcore.empty(1000, device="cuda")
    with pytest.warns(FutureWarning, match="memory_reserved"):
        assert cuda.memory_cached() == cuda.memory_reserved()
    with pytest.warns(FutureWarning, match="max_memory_reserved"):
        assert cuda.max_memory_cached() == cuda.max_memory_reserved()
    del x
    peak = cuda.max_memory_allocated()
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == cuda.memory_allocated() <= peak
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        cuda.reset_max_memory_cached()
    assert cuda.can_device_access_peer(0, 0) is False       # as cuDeviceCanAccessPeer
    with pytest.raises(AssertionError, match="peer"):
        cuda.can_device_access_peer(0, cuda.device_count())
    with pytest.raises(AssertionError, match="device id"):
        cuda.can_device_access_peer(-1, 0)
    assert cuda.is_tf32_supported() == (cuda.get_device_capability()[0] >= 8)
    cuda.ipc_collect()
