"""Storages in caching-allocator blocks (ptcore/cuda/runtime/device_storage.pyx):
the contiguous ``empty`` and the block owner, on the emulated device."""
import gc
import sys
import weakref

import numpy as np
import pytest

import ptcore
from ptcore import cuda
from ptcore.cuda.runtime import device_storage as _device_storage
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.ops import tensors as _tensors


def _alloc():
    return _runtime.allocator(0)


@pytest.mark.parametrize("shape", [[], [0], [1], [7], [2, 3], [4, 0, 5], [1, 1, 3, 1], [2, 3, 4, 5]])
def test_empty_geometry(shape):
    for dt in (ptcore.float32, ptcore.float16, ptcore.int64, ptcore.complex64):
        t = _tensors.empty(shape, dt, ptcore.device("cuda", 0))
        ref = ptcore.empty(shape, dtype=dt)
        assert t.is_cuda and t.dtype is dt
        assert list(t.shape) == shape and t.stride() == ref.stride()
        assert t.is_contiguous() and t.storage_offset() == 0
        assert t.untyped_storage().nbytes() == t.numel() * dt.itemsize
        assert t.device == ptcore.device("cuda", 0)


@pytest.mark.skipif("ptcore.cuda.device_count() < 2")
def test_empty_takes_any_integer_sequence():
    dev = ptcore.device("cuda", 1)
    t = _tensors.empty((2, ptcore.tensor(3)), ptcore.float32, dev)
    assert list(t.shape) == [2, 3] and t.device == dev
    t = ptcore.empty(ptcore.Size([4, 5]), device="cuda:1")
    assert t.stride() == (5, 1) and t.device == dev


@pytest.mark.skipif("ptcore.cuda.device_count() < 2")
def test_empty_on_the_current_device_and_its_stream():
    with cuda.device(1):
        t = ptcore.empty(3, device="cuda")
        assert t.device == ptcore.device("cuda", 1)
        s = cuda.Stream()
        with cuda.stream(s):
            u = ptcore.empty(3, device="cuda")
    a, b = _tensors.device_block(u)
    assert b.stream == s.cuda_stream and a is _runtime.allocator(1)
    assert _tensors.device_block(t)[1].stream == 0


@pytest.mark.parametrize("shape,match", [
    ([3, -2], r"empty: Trying to create tensor with negative dimension -2: \[3, -2\]"),
    ([-(1 << 70)], r"negative dimension -1180591620717411303424"),
    ([1 << 31, 1 << 31], r"empty: Storage size calculation overflowed with sizes=\[2147483648, 2147483648\]"),
    ([1 << 62, 4], r"Storage size calculation overflowed"),
    ([1 << 70], r"Storage size calculation overflowed with sizes=\[1180591620717411303424\]"),
])
def test_empty_rejects_bad_shapes_before_allocating(shape, match):
    # memory_stats is {} before the device's first use (as torch's), so
    # an uninitialised device counts as 0 allocations
    before = cuda.memory_stats(0).get("allocation.all.allocated", 0)
    with pytest.raises(RuntimeError, match=match):
        _tensors.empty(shape, ptcore.float32, ptcore.device("cuda", 0))
    assert cuda.memory_stats(0).get("allocation.all.allocated", 0) == before


def test_public_empty_rejects_bad_shapes():
    with pytest.raises(RuntimeError, match="negative dimension"):
        ptcore.empty(2, -1, device="cuda")
    with pytest.raises(RuntimeError, match="overflow"):
        ptcore.empty(1 << 40, 1 << 40, device="cuda")
    with pytest.raises(RuntimeError, match="at most 64 dimensions"):
        _tensors.empty([1] * 65, ptcore.float32, ptcore.device("cuda", 0))


def test_empty_on_a_device_that_does_not_exist():
    with pytest.raises(RuntimeError, match="invalid device ordinal 7"):
        _tensors.empty([2], ptcore.float32, ptcore.device("cuda", 7))


def test_empty_too_large_for_the_device_is_out_of_memory():
    with pytest.raises(cuda.OutOfMemoryError, match="CUDA out of memory"):
        _tensors.empty([1 << 40], ptcore.float32, ptcore.device("cuda", 0))


def test_storage_death_returns_the_block():
    gc.collect()
    a = _alloc()
    base = a.memory_allocated()
    t = ptcore.empty(1000, device="cuda:0")
    owner_ref = weakref.ref(_device_owner(t))
    assert a.memory_allocated() == base + 4096
    v = t[10:20]
    del t
    assert a.memory_allocated() == base + 4096      # the view keeps the storage
    del v
    assert owner_ref() is None
    assert a.memory_allocated() == base
    a.check_invariants()


def _device_owner(t):
    """The DeviceMemory holding a CUDA tensor's block (found through the
    GC: the storage does not expose its owner)."""
    b = _tensors.device_block(t)[1]
    return next(o for o in gc.get_referrers(b) if isinstance(o, _device_storage.DeviceMemory))


def test_the_next_same_size_empty_reuses_the_freed_block():
    a = _alloc()
    t = ptcore.empty(256, device="cuda:0")
    p = t.data_ptr()
    del t
    n = a.memory_stats()["num_device_alloc"]
    for _ in range(50):
        t = ptcore.empty(256, device="cuda:0")
        assert t.data_ptr() == p
        del t
    assert a.memory_stats()["num_device_alloc"] == n


def test_100k_empty_and_free_cycles_stay_flat():
    """No leak of memory, Python objects or references per cycle."""
    a = _alloc()
    dev = ptcore.device("cuda", 0)
    dt = ptcore.float32
    shape = [3, 5]

    def cycle(n):
        for _ in range(n):
            _tensors.empty(shape, dt, dev)
            ptcore.empty(7, device="cuda:0")
    cycle(1000)
    gc.collect()
    reserved = a.memory_reserved()
    allocated = a.memory_allocated()
    objects = len(gc.get_objects())
    refs = (sys.getrefcount(a), sys.getrefcount(dt), sys.getrefcount(dev), sys.getrefcount(shape))
    cycle(50000)
    gc.collect()
    assert a.memory_reserved() == reserved
    assert a.memory_allocated() == allocated
    assert len(gc.get_objects()) - objects < 50
    assert (sys.getrefcount(a), sys.getrefcount(dt), sys.getrefcount(dev),
            sys.getrefcount(shape)) == refs
    a.check_invariants()


def test_record_stream_keeps_working_through_the_owner():
    a = _alloc()
    s = cuda.Stream()
    t = ptcore.empty(100, device="cuda:0")
    t.record_stream(s)
    p = t.data_ptr()
    del t
    s.synchronize()
    u = ptcore.empty(100, device="cuda:0")
    assert u.data_ptr() == p
    a.check_invariants()


def test_cuda_legacy_constructors_make_device_tensors():
    t = ptcore.cuda.FloatTensor([1.0, 2.0])
    assert t.device.type == "cuda" and t.dtype is ptcore.float32
    assert isinstance(t, ptcore.cuda.FloatTensor) and not isinstance(t, ptcore.FloatTensor)
    assert t.cpu().tolist() == [1.0, 2.0]
    e = ptcore.cuda.LongTensor(2, 3)
    assert e.shape == (2, 3) and e.dtype is ptcore.int64 and e.is_cuda
    with pytest.raises(RuntimeError, match="expects device type cuda"):
        ptcore.cuda.FloatTensor(2, device="cpu")


def test_resize_grows_device_tensors_and_storages():
    """resize_ to a larger size on CUDA (torch: a new block holding the old
    bytes; every tensor on the storage sees it), out= tensors of the wrong
    size, and UntypedStorage.resize_."""
    x = ptcore.arange(6.0).cuda()
    alias = x.view(2, 3)
    assert x.resize_(4, 5) is x and x.shape == (4, 5) and x.device.type == "cuda"
    np.testing.assert_array_equal(x.cpu().reshape(-1)[:6].numpy(), np.arange(6.0))
    assert alias.untyped_storage().nbytes() == 4 * 5 * 4
    np.testing.assert_array_equal(alias.cpu().numpy(), np.arange(6.0).reshape(2, 3))
    x[3, 4] = 7.0
    assert float(x[3, 4].cpu()) == 7.0
    # shrinking keeps the storage
    p = x.data_ptr()
    x.resize_(2)
    assert x.data_ptr() == p and x.tolist() == [0.0, 1.0]
    # out= of another size is resized, as on the CPU
    a = ptcore.arange(12.0).reshape(3, 4)
    out = ptcore.empty(0).cuda()
    assert ptcore.add(a.cuda(), 1, out=out) is out and out.shape == (3, 4)
    np.testing.assert_array_equal(out.cpu().numpy(), (a + 1).numpy())
    out2 = ptcore.empty(2, dtype=ptcore.int64).cuda()
    ptcore.cat([ptcore.tensor([1, 2]).cuda(), ptcore.tensor([3]).cuda()], out=out2)
    assert out2.tolist() == [1, 2, 3]
    s = ptcore.tensor([1, 2], dtype=ptcore.int16).cuda().untyped_storage()
    s.resize_(10)
    assert s.nbytes() == 10 and s.device.type == "cuda"
