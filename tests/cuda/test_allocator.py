"""Tests of ptcore.cuda.allocator.device_allocators against a host-memory backend.

Every rule tested here is PyTorch's, from c10/cuda/CUDACachingAllocator.cpp
(function names in the docstrings), torch/csrc/cuda/Module.cpp (stat key
names) and torch/cuda/memory.py (Python API, summary layout).  No GPU is
needed; the CUDA driver backend is exercised by the GPU tests.
"""
import random
import struct
import threading

import pytest

from ptcore.cuda.allocator import device_allocators as A
from ptcore.cuda.allocator.device_allocators import (BackendOutOfMemory, CachingAllocator, HostBackend,
                                    OutOfMemoryError, format_size)

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

KiB = 1024
MiB = 1024 * 1024


def make(total=256 * MiB, auto=True):
    be = HostBackend(total, auto_complete_events=auto)
    return be, CachingAllocator(be)


def stat(a, key):
    return a.memory_stats()[key]


def segments(a):
    return [(s["segment_type"], s["total_size"]) for s in a.snapshot()]


# -- sizes and pools --------------------------------------------------------

@pytest.mark.parametrize("size,rounded", [(1, 512), (511, 512), (512, 512), (513, 1024),
                                          (1000, 1024), (MiB, MiB), (MiB + 1, MiB + 512)])
def test_round_size(size, rounded):
    """round_size: multiples of kMinBlockSize=512."""
    be, a = make()
    b = a.malloc(size)
    assert b.size == rounded and b.requested_size == size
    assert A.round_size(size) == rounded
    a.free(b)


@pytest.mark.parametrize("size,pool,segment", [
    (1, "small", 2 * MiB),                    # <= kSmallSize -> kSmallBuffer
    (MiB, "small", 2 * MiB),
    (MiB + 1, "large", 20 * MiB),             # < kMinLargeAlloc -> kLargeBuffer
    (10 * MiB - 512, "large", 20 * MiB),
    (10 * MiB, "large", 10 * MiB),            # >= kMinLargeAlloc -> round to kRoundLarge
    (11 * MiB + 1, "large", 12 * MiB),
    (40 * MiB, "large", 40 * MiB),
])
def test_pool_and_segment_size(size, pool, segment):
    """get_pool / get_allocation_size."""
    be, a = make()
    b = a.malloc(size)
    assert segments(a) == [(pool, segment)]
    assert list(be.live.values()) == [segment]
    assert b.is_small == (pool == "small")
    assert stat(a, f"reserved_bytes.{pool}_pool.current") == segment
    assert stat(a, "segment.all.current") == 1
    a.free(b)
    a.check_invariants()


def test_small_allocations_are_packed_in_one_segment():
    be, a = make()
    b1, b2, b3 = a.malloc(1000), a.malloc(1000), a.malloc(5000)
    assert b2.ptr == b1.ptr + 1024 and b3.ptr == b2.ptr + 1024
    assert be.n_alloc == 1
    # a second segment only when the first is full
    big = [a.malloc(MiB // 2) for _ in range(3)]     # 7 KiB + 1.5 MiB still fit
    assert be.n_alloc == 1
    big.append(a.malloc(MiB // 2))
    assert be.n_alloc == 2 and a.memory_reserved() == 4 * MiB
    a.check_invariants()


def test_split_rule_small_pool():
    """should_split: small pool splits when the remainder is >= 512 B."""
    be, a = make()
    b1 = a.malloc(MiB)
    b2 = a.malloc(MiB - 512)          # remainder 512 -> split
    assert b2.size == MiB - 512
    b3 = a.malloc(1)                  # takes the last 512 bytes
    assert b3.ptr == b2.ptr + b2.size and be.n_alloc == 1
    blocks = a.snapshot()[0]["blocks"]
    assert [bl["size"] for bl in blocks] == [MiB, MiB - 512, 512]
    for b in (b1, b2, b3):
        a.free(b)
    a.check_invariants()


def test_split_rule_large_pool():
    """should_split: large pool splits only when the remainder is > kSmallSize."""
    be, a = make()
    b1 = a.malloc(9 * MiB)                    # 20 MiB segment, 11 MiB left
    b2 = a.malloc(10 * MiB - 512)             # remainder 1 MiB + 512 > 1 MiB: split
    assert b2.size == 10 * MiB - 512
    assert [bl["size"] for bl in a.snapshot()[0]["blocks"]] == [9 * MiB, 10 * MiB - 512, MiB + 512]
    a.free(b2)
    b3 = a.malloc(10 * MiB)                   # remainder exactly 1 MiB: no split
    assert b3.size == 11 * MiB and b3.requested_size == 10 * MiB
    assert be.n_alloc == 1                    # the cached block was used, no new 10 MiB segment
    assert a.memory_allocated() == 20 * MiB
    assert stat(a, "requested_bytes.all.current") == 19 * MiB
    a.free(b1)
    a.free(b3)
    a.check_invariants()


def test_free_neighbours_merge_and_reserved_stays_until_empty_cache():
    """free_block / try_merge_blocks."""
    be, a = make()
    x, y, z = a.malloc(4 * KiB), a.malloc(8 * KiB), a.malloc(16 * KiB)
    assert stat(a, "inactive_split.all.current") == 1          # the segment's tail
    a.free(x)
    a.free(z)                                                   # z merges with the tail
    blocks = a.snapshot()[0]["blocks"]
    assert [(bl["size"], bl["state"]) for bl in blocks] == [
        (4 * KiB, "inactive"), (8 * KiB, "active_allocated"), (2 * MiB - 12 * KiB, "inactive")]
    assert stat(a, "inactive_split.all.current") == 2
    assert stat(a, "inactive_split_bytes.all.current") == 2 * MiB - 8 * KiB
    a.free(y)
    seg, = a.snapshot()
    assert [(bl["address"], bl["size"]) for bl in seg["blocks"]] == [(x.ptr, 2 * MiB)]
    assert stat(a, "inactive_split.all.current") == 0
    assert stat(a, "inactive_split_bytes.all.current") == 0
    assert a.memory_allocated() == 0 and a.memory_reserved() == 2 * MiB
    assert be.live == {x.ptr: 2 * MiB}
    a.check_invariants()
    a.empty_cache()
    assert a.memory_reserved() == 0 and be.live == {} and a.snapshot() == []
    assert stat(a, "num_device_free") == 1


def test_best_fit():
    """get_free_block: smallest free block that fits, lowest address on ties."""
    be, a = make()
    sizes = [8 * KiB, 4 * KiB, 16 * KiB, 4 * KiB]
    holes, fences = [], []
    for s in sizes:
        holes.append(a.malloc(s))
        fences.append(a.malloc(512))
    tail_fence = a.malloc(1)
    del tail_fence
    ptrs = [h.ptr for h in holes]
    for h in holes:
        a.free(h)
    a.check_invariants()
    assert a.malloc(6 * KiB).ptr == ptrs[0]          # 8K hole, not 16K
    assert a.malloc(3 * KiB).ptr == ptrs[1]          # first of the two 4K holes
    assert a.malloc(4 * KiB).ptr == ptrs[3]          # the other 4K hole
    assert a.malloc(9 * KiB).ptr == ptrs[2]          # 16K hole
    assert be.n_alloc == 1
    a.check_invariants()


def test_best_fit_takes_remainder_of_split_block():
    be, a = make()
    b = a.malloc(6 * KiB)
    p = b.ptr
    f = a.malloc(512)
    a.free(b)
    c = a.malloc(2 * KiB)          # split the 6K hole
    d = a.malloc(4 * KiB)          # exact fit of its remainder
    assert c.ptr == p and d.ptr == p + 2 * KiB
    a.free(f)
    a.check_invariants()


# -- streams ------------------------------------------------------------------

def test_blocks_are_reused_only_on_their_stream():
    be, a = make()
    b1 = a.malloc(4 * KiB, stream=1)
    p1 = b1.ptr
    a.free(b1)
    b2 = a.malloc(4 * KiB, stream=2)
    assert b2.ptr != p1 and be.n_alloc == 2                  # stream 2 got its own segment
    assert {s["stream"] for s in a.snapshot()} == {1, 2}
    b3 = a.malloc(4 * KiB, stream=1)
    assert b3.ptr == p1 and be.n_alloc == 2
    a.free(b2)
    b4 = a.malloc(4 * KiB, stream=1)                         # still not stream 2's memory
    assert b4.ptr != b2.ptr
    a.check_invariants()


def test_record_stream_defers_reuse_until_event_completes():
    """recordStream / insert_events / process_events."""
    be, a = make(auto=False)
    b = a.malloc(1000, stream=1)
    p = b.ptr
    a.record_stream(b, 2)
    a.record_stream(b, 3)
    a.record_stream(b, 1)            # the allocation stream needs no event
    a.free(b)
    assert len(be.events) == 2 and {e.stream for e in be.events} == {2, 3}
    # freed for the caller, but still "active" until the events complete
    assert a.memory_allocated() == 0
    assert stat(a, "active_bytes.all.current") == 1024
    assert stat(a, "allocation.all.current") == 0 and stat(a, "active.all.current") == 1
    assert a.snapshot()[0]["blocks"][0]["state"] == "active_pending_free"
    c = a.malloc(1000, stream=1)
    assert c.ptr == p + 1024          # not the pending block
    be.complete_stream(2)
    d = a.malloc(1000, stream=1)
    assert d.ptr == p + 2048          # stream 3 still busy
    be.complete_stream(3)
    e = a.malloc(1000, stream=1)      # process_events frees the block first
    assert e.ptr == p
    assert stat(a, "active.all.current") == 3
    for x in (c, d, e):
        a.free(x)
    a.check_invariants()
    assert len(a.snapshot()[0]["blocks"]) == 1
    # completed events are pooled and reused, destroyed by empty_cache
    f = a.malloc(10, stream=1)
    a.record_stream(f, 2)
    a.free(f)
    assert len(be.events) == 2
    a.empty_cache()
    assert be.events == set() and be.live == {}


def test_empty_cache_waits_for_pending_events():
    """release_cached_blocks calls synchronize_and_free_events first."""
    be, a = make(auto=False)
    b = a.malloc(3 * MiB)
    a.record_stream(b, 7)
    a.free(b)
    a.empty_cache()
    assert be.n_event_synchronize == 1 and be.live == {}
    assert stat(a, "num_sync_all_streams") == 1
    assert stat(a, "active_bytes.all.current") == 0
    a.check_invariants()


def test_record_stream_of_freed_block_raises_and_zero_size_is_ignored():
    be, a = make()
    b = a.malloc(100)
    a.free(b)
    with pytest.raises(RuntimeError, match="not a live allocation"):
        a.record_stream(b, 1)
    z = a.malloc(0)
    a.record_stream(z, 1)
    a.free(z)


# -- out of memory --------------------------------------------------------------

def test_oom_message_and_recovery():
    be, a = make(total=30 * MiB)
    b = a.malloc(15 * MiB)                    # 16 MiB segment
    with pytest.raises(OutOfMemoryError) as ei:
        a.malloc(15 * MiB)
    msg = str(ei.value)
    assert isinstance(ei.value, RuntimeError)
    assert msg.startswith("CUDA out of memory. Tried to allocate 16.00 MiB. ")
    assert "GPU 0 has a total capacity of 30.00 MiB of which 14.00 MiB is free." in msg
    assert "16.00 MiB is allocated by ptcore" in msg
    assert "0 bytes is reserved by ptcore but unallocated" in msg
    assert stat(a, "num_ooms") == 1 and stat(a, "num_alloc_retries") == 1
    a.check_invariants()
    a.free(b)
    c = a.malloc(15 * MiB)                   # usable again
    assert c.ptr == b.ptr
    a.free(c)
    a.check_invariants()


def test_oom_reports_reserved_but_unallocated():
    be, a = make(total=21 * MiB)
    s = a.malloc(1000)                        # 2 MiB small segment, 1 KiB used
    with pytest.raises(OutOfMemoryError, match="Tried to allocate 20.00 MiB") as ei:
        a.malloc(5 * MiB)
    msg = str(ei.value)
    assert "1024 bytes is allocated by ptcore" in msg
    assert f"and {format_size(2 * MiB - 1024)} is reserved by ptcore but unallocated" in msg
    assert "of which 19.00 MiB is free" in msg
    a.free(s)


def test_failed_allocation_releases_cache_and_retries():
    """malloc: release_cached_blocks, then alloc_block(isRetry=True)."""
    be, a = make(total=30 * MiB)
    small = a.malloc(100)                    # partly used segment: must survive
    b = a.malloc(15 * MiB)
    a.free(b)                                # cached 16 MiB segment
    assert a.memory_reserved() == 18 * MiB
    c = a.malloc(20 * MiB)                   # needs the cached memory back
    assert c.size == 20 * MiB
    assert stat(a, "num_alloc_retries") == 1 and stat(a, "num_ooms") == 0
    assert stat(a, "num_device_free") == 1 and stat(a, "num_device_alloc") == 3
    assert a.memory_reserved() == 22 * MiB
    assert small.ptr in be.live
    a.free(c)
    a.free(small)
    a.check_invariants()


def test_backend_errors_other_than_oom_propagate():
    be, a = make()

    def boom(n):
        raise ValueError("driver exploded")
    be.on_raw_alloc = boom
    with pytest.raises(ValueError, match="driver exploded"):
        a.malloc(10)
    be.on_raw_alloc = None
    a.free(a.malloc(10))
    a.check_invariants()


def test_memory_fraction():
    """setMemoryFraction: allowed = round(fraction * total); alloc_block rejects beyond it."""
    be, a = make(total=100 * MiB)
    a.set_memory_fraction(0.25)
    assert a.get_memory_fraction() == 0.25
    b = a.malloc(20 * MiB)
    s = a.malloc(1000)                       # 2 MiB small segment: 22 <= 25
    with pytest.raises(OutOfMemoryError, match=r"25\.00 MiB allowed; ") as ei:
        a.malloc(2 * MiB)                    # another 20 MiB segment: 42 > 25
    assert "of which 78.00 MiB is free" in str(ei.value)
    assert be.n_failed == 0                  # rejected before reaching the backend
    a.set_memory_fraction(1.0)
    c = a.malloc(2 * MiB)
    for x in (b, s, c):
        a.free(x)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        a.set_memory_fraction(1.5)
    with pytest.raises(ValueError):
        a.set_memory_fraction(-0.1)
    a.set_memory_fraction(0.0)
    a.free(a.malloc(1))                      # cached segments still serve requests
    a.empty_cache()
    with pytest.raises(OutOfMemoryError, match="0 bytes allowed"):
        a.malloc(1)
    a.malloc(0)                              # zero bytes need no memory


# -- statistics -----------------------------------------------------------------

def _expected_keys():
    keys = {"num_alloc_retries", "num_ooms", "max_split_size", "num_sync_all_streams",
            "num_device_alloc", "num_device_free", "num_oom_rejections"}
    for arr in ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
                "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"):
        for pool in ("all", "small_pool", "large_pool"):
            for m in ("current", "peak", "allocated", "freed"):
                keys.add(f"{arr}.{pool}.{m}")
    for s in ("oversize_allocations", "oversize_segments"):
        for m in ("current", "peak", "allocated", "freed"):
            keys.add(f"{s}.{m}")
    return keys


def test_stat_keys_match_pytorch():
    """Key names of torch/csrc/cuda/Module.cpp (_cuda_memoryStats), flattened
    and sorted as torch.cuda.memory_stats does."""
    be, a = make()
    st = a.memory_stats()
    assert set(st) == _expected_keys()
    assert list(st) == sorted(st)
    assert st["max_split_size"] == -1


def test_stats_hand_computed():
    be, a = make()
    s = a.malloc(1000)
    big = a.malloc(5 * MiB)
    a.free(s)
    st = a.memory_stats()
    exp = {
        "allocated_bytes.all": (5 * MiB, 5 * MiB + 1024, 5 * MiB + 1024, 1024),
        "allocated_bytes.small_pool": (0, 1024, 1024, 1024),
        "allocated_bytes.large_pool": (5 * MiB, 5 * MiB, 5 * MiB, 0),
        "requested_bytes.all": (5 * MiB, 5 * MiB + 1000, 5 * MiB + 1000, 1000),
        "active_bytes.all": (5 * MiB, 5 * MiB + 1024, 5 * MiB + 1024, 1024),
        "reserved_bytes.all": (22 * MiB, 22 * MiB, 22 * MiB, 0),
        "reserved_bytes.small_pool": (2 * MiB, 2 * MiB, 2 * MiB, 0),
        "allocation.all": (1, 2, 2, 1),
        "active.all": (1, 2, 2, 1),
        "segment.all": (2, 2, 2, 0),
        # small segment: tail (2M-1K) split off, then merged back on free
        "inactive_split.small_pool": (0, 1, 1, 1),
        "inactive_split_bytes.small_pool": (0, 2 * MiB - 1024, 2 * MiB - 1024, 2 * MiB - 1024),
        "inactive_split.large_pool": (1, 1, 1, 0),
        "inactive_split_bytes.large_pool": (15 * MiB, 15 * MiB, 15 * MiB, 0),
    }
    for k, v in exp.items():
        got = tuple(st[f"{k}.{m}"] for m in ("current", "peak", "allocated", "freed"))
        assert got == v, k
    assert st["num_device_alloc"] == 2 and st["num_device_free"] == 0
    assert a.memory_allocated() == 5 * MiB and a.memory_reserved() == 22 * MiB
    a.free(big)
    a.empty_cache()
    st = a.memory_stats()
    assert st["reserved_bytes.all.freed"] == 22 * MiB and st["segment.all.freed"] == 2
    assert st["num_device_free"] == 2
    for k in st:
        if k.endswith(".current"):
            assert st[k] == 0, k


def test_reset_peak_and_accumulated():
    be, a = make()
    b = a.malloc(3 * MiB)
    a.free(b)
    c = a.malloc(1000)
    assert stat(a, "allocated_bytes.all.peak") == 3 * MiB
    a.reset_peak_memory_stats()
    st = a.memory_stats()
    assert st["allocated_bytes.all.peak"] == 1024 == st["allocated_bytes.all.current"]
    assert st["reserved_bytes.all.peak"] == 22 * MiB
    assert st["allocated_bytes.all.allocated"] == 3 * MiB + 1024
    a.reset_accumulated_memory_stats()
    st = a.memory_stats()
    assert st["allocated_bytes.all.allocated"] == 0 and st["allocated_bytes.all.freed"] == 0
    assert st["num_device_alloc"] == 0 and st["allocated_bytes.all.current"] == 1024
    a.free(c)
    assert stat(a, "allocated_bytes.all.freed") == 1024


def test_empty_cache_keeps_partly_used_segments():
    be, a = make()
    keep = a.malloc(100)
    gone = a.malloc(12 * MiB)
    other = a.malloc(100, stream=5)
    a.free(gone)
    a.free(other)
    a.empty_cache()
    assert list(be.live) == [keep.ptr]
    assert a.memory_reserved() == 2 * MiB
    a.check_invariants()
    a.free(keep)
    a.empty_cache()
    assert be.live == {}


def test_format_size_matches_c10():
    assert format_size(0) == "0 bytes"
    assert format_size(1024) == "1024 bytes"
    assert format_size(1025) == "1.00 KiB"
    assert format_size(MiB) == "1024.00 KiB"
    assert format_size(MiB + 1) == "1.00 MiB"
    assert format_size(1536 * MiB) == "1.50 GiB"


@needs_torch
def test_memory_summary_layout_matches_torch(monkeypatch):
    """Same stats through torch.cuda.memory_summary's formatter give the same
    table (the title line names ptcore instead of PyTorch)."""
    import torch.cuda.memory as tm
    be, a = make()
    blocks = [a.malloc(n) for n in (1000, 3 * MiB, 12 * MiB, 700 * KiB)]
    a.free(blocks[1])
    st = a.memory_stats()
    monkeypatch.setattr(tm, "memory_stats", lambda device=None: st)
    for abbreviated in (False, True):
        theirs = tm.memory_summary(0, abbreviated=abbreviated).splitlines()
        ours = a.memory_summary(abbreviated=abbreviated).splitlines()
        assert len(ours) == len(theirs)
        assert ours[1] == theirs[1].replace("PyTorch", "ptcore")[:-1] + " |"
        assert ours[:1] + ours[2:] == theirs[:1] + theirs[2:]


# -- handles ---------------------------------------------------------------------

def test_double_free_and_foreign_free_raise():
    be, a = make()
    _, other = make()
    b = a.malloc(100)
    p = b.ptr
    with pytest.raises(RuntimeError, match="not allocated by this allocator"):
        other.free(b)
    a.free(b)
    with pytest.raises(RuntimeError, match="double free"):
        a.free(b)
    # the memory is reused by a new allocation: the stale handle still cannot free it
    c = a.malloc(100)
    assert c.ptr == p and c is not b
    with pytest.raises(RuntimeError, match="double free"):
        a.free(b)
    assert a.memory_allocated() == 512
    a.free(c)
    a.check_invariants()


def test_zero_size_allocation():
    be, a = make()
    z = a.malloc(0, stream=3)
    assert z.ptr == 0 and z.size == 0 and z.stream == 3
    assert be.live == {} and a.memory_allocated() == 0
    assert stat(a, "allocation.all.allocated") == 0
    a.free(z)
    with pytest.raises(RuntimeError, match="double free"):
        a.free(z)
    with pytest.raises(ValueError):
        a.malloc(-1)
    with pytest.raises(TypeError):
        a.malloc(1.5)


def test_memory_is_real_and_writable():
    be, a = make()
    b1, b2 = a.malloc(1000), a.malloc(1000)
    be.write(b1.ptr, b"\x11" * 1024)
    be.write(b2.ptr, b"\x22" * 1024)
    assert be.read(b1.ptr, 1024) == b"\x11" * 1024
    assert be.read(b2.ptr, 1024) == b"\x22" * 1024
    a.free(b1)
    a.free(b2)


def test_reentrant_free_during_malloc_is_deferred():
    """A destructor run by the GC inside malloc (here: from raw_alloc) frees
    another block; the free is queued and done after malloc returns."""
    be, a = make()
    victim = a.malloc(100)
    neighbour = a.malloc(100)
    calls = []

    def hook(n):
        if not calls:
            calls.append(n)
            a.free(victim)
            with pytest.raises(RuntimeError, match="double free"):
                a.free(victim)
    be.on_raw_alloc = hook
    big = a.malloc(3 * MiB)
    be.on_raw_alloc = None
    assert calls == [20 * MiB]
    assert not victim.allocated
    assert a.memory_allocated() == 512 + 3 * MiB
    a.check_invariants()
    with pytest.raises(RuntimeError, match="double free"):
        a.free(victim)
    a.free(neighbour)
    a.free(big)
    a.check_invariants()


def _run_in_threads(work, n):
    """work(0) ... work(n - 1) on n threads at once; re-raises the first error."""
    errors = []

    def run(i):
        try:
            work(i)
        except Exception as e:          # pragma: no cover - re-raised below
            errors.append(e)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def test_threads():
    be, a = make(total=512 * MiB)

    def work(seed):
        rng = random.Random(seed)
        live = []
        for _ in range(300):
            if live and rng.random() < 0.5:
                a.free(live.pop(rng.randrange(len(live))))
            else:
                live.append(a.malloc(rng.choice([100, 5000, 300 * KiB, 3 * MiB]),
                                     stream=seed % 2))
        for b in live:
            a.free(b)
    _run_in_threads(work, 4)
    a.check_invariants()
    assert a.memory_allocated() == 0
    a.empty_cache()
    assert be.live == {}


# -- randomized stress ----------------------------------------------------------

def _check_live(a, be, live):
    spans = sorted((b.ptr, b.ptr + b.size) for b in live if b.size)
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert e0 <= s1, "two live blocks overlap"
    segs = sorted((p, p + n) for p, n in be.live.items())
    import bisect
    for s, e in spans:
        i = bisect.bisect_right(segs, (s, float("inf"))) - 1
        assert i >= 0 and segs[i][0] <= s and e <= segs[i][1], "block outside its segment"
    assert a.memory_allocated() == sum(b.size for b in live)
    assert stat(a, "requested_bytes.all.current") >= 0


@pytest.mark.parametrize("seed", range(6))
def test_random_alloc_free_sequences(seed):
    rng = random.Random(seed)
    be, a = make(total=160 * MiB, auto=False)
    streams = [0, 1, 2]
    live = []
    tags = {}
    sizes = [0, 1, 511, 512, 513, 4000, 64 * KiB, 700 * KiB, MiB, MiB + 1,
             3 * MiB, 9 * MiB, 10 * MiB, 17 * MiB + 5]
    for step in range(500):
        r = rng.random()
        if r < 0.5 or not live:
            size = rng.choice(sizes) if rng.random() < 0.7 else rng.randrange(1, 12 * MiB)
            try:
                b = a.malloc(size, stream=rng.choice(streams))
            except OutOfMemoryError:
                assert stat(a, "num_ooms") > 0
            else:
                assert b.size >= size and (b.size % 512 == 0)
                if b.size:
                    tag = struct.pack("<Q", step)
                    be.write(b.ptr, tag)
                    be.write(b.ptr + b.size - 8, tag)
                    tags[id(b)] = tag
                live.append(b)
        elif r < 0.85:
            b = live.pop(rng.randrange(len(live)))
            if b.size:
                tag = tags.pop(id(b))
                assert be.read(b.ptr, 8) == tag and be.read(b.ptr + b.size - 8, 8) == tag, \
                    "a live block was overwritten through another allocation"
                if rng.random() < 0.3:
                    a.record_stream(b, rng.choice(streams))
            a.free(b)
        elif r < 0.95:
            be.complete_stream(rng.choice(streams))
        else:
            a.empty_cache()
        a.check_invariants()
        _check_live(a, be, live)
    for b in live:
        a.free(b)
    assert a.memory_allocated() == 0
    a.empty_cache()
    a.check_invariants()
    assert be.live == {} and be.used == 0
    assert be.events == set()
    st = a.memory_stats()
    assert st["num_device_alloc"] == st["num_device_free"] == be.n_alloc == be.n_free
    for k in st:
        if k.endswith(".current"):
            assert st[k] == 0, k


# -- module-level API --------------------------------------------------------------

@pytest.fixture
def registry(monkeypatch):
    backends = {}

    def factory(idx):
        be = backends[idx] = HostBackend(64 * MiB)
        return CachingAllocator(be, device=idx)
    monkeypatch.setattr(A, "_allocators", {})
    monkeypatch.setattr(A, "_allocator_factory", None)
    monkeypatch.setattr(A, "_current_device", None)
    return factory, backends


def test_module_functions_before_initialisation(registry):
    assert A.memory_stats() == {}
    assert A.memory_allocated() == 0 and A.max_memory_reserved(0) == 0
    A.reset_peak_memory_stats()
    A.empty_cache()
    assert A.memory_snapshot() == []
    assert "Allocated memory" in A.memory_summary()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        A.set_per_process_memory_fraction(0.5)
    with pytest.raises(TypeError, match="must be `float`"):
        A.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range"):
        A.set_per_process_memory_fraction(1.5)


def test_module_functions(registry):
    factory, backends = registry
    A._set_allocator_factory(factory)
    p = A.caching_allocator_alloc(3000, device="cuda:1")
    assert A.memory_allocated(1) == 3072 == A.memory_allocated("cuda:1")
    assert A.memory_allocated(0) == 0
    assert A.memory_reserved(1) == 2 * MiB and A.max_memory_allocated(1) == 3072
    assert A.memory_stats(1)["allocation.all.current"] == 1
    assert [s["address"] for s in A.memory_snapshot()] == [p]
    A.caching_allocator_delete(p)
    with pytest.raises(RuntimeError, match="not a live allocation"):
        A.caching_allocator_delete(p)
    assert A.memory_allocated(1) == 0 and A.max_memory_allocated(1) == 3072
    A.reset_peak_memory_stats(1)
    assert A.max_memory_allocated(1) == 0
    A.reset_accumulated_memory_stats(1)
    assert A.memory_stats(1)["allocated_bytes.all.allocated"] == 0
    A.empty_cache()
    assert backends[1].live == {} and A.max_memory_reserved(1) == 2 * MiB
    A.set_per_process_memory_fraction(0.5, device=1)
    assert A.get_per_process_memory_fraction(1) == 0.5
    assert A.mem_get_info(1) == (64 * MiB, 64 * MiB)
    assert "device ID 1" in A.memory_summary(1, abbreviated=True)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        A.memory_allocated("cpu")


# -- the C hot path ----------------------------------------------------------------

def test_many_small_allocs_and_frees_keep_stats_consistent():
    """Interleaved small mallocs/frees on two streams: every counter adds up
    and everything merges back into whole segments."""
    rng = random.Random(7)
    be, a = make()
    live = []
    n_malloc = n_free = nbytes = 0
    for _ in range(20000):
        if live and rng.random() < 0.5:
            b = live.pop(rng.randrange(len(live)))
            a.free(b)
            n_free += 1
        else:
            b = a.malloc(rng.choice([1, 100, 512, 513, 4000, 64 * KiB]), stream=rng.randrange(2))
            live.append(b)
            n_malloc += 1
            nbytes += b.size
    a.check_invariants()
    assert stat(a, "allocation.all.allocated") == n_malloc
    assert stat(a, "allocation.all.freed") == n_free
    assert stat(a, "allocated_bytes.all.allocated") == nbytes
    assert a.memory_allocated() == sum(b.size for b in live)
    for b in live:
        a.free(b)
    a.check_invariants()
    st = a.memory_stats()
    assert st["allocated_bytes.all.freed"] == nbytes
    assert st["active.all.current"] == st["inactive_split.all.current"] == 0
    assert all(len(s["blocks"]) == 1 for s in a.snapshot())
    assert st["segment.all.current"] == be.n_alloc
    a.empty_cache()
    assert be.live == {}


@pytest.mark.parametrize("size", [1, 4000, MiB, 3 * MiB, 12 * MiB])
def test_freed_block_is_reused_by_the_next_same_size_malloc(size):
    be, a = make()
    b = a.malloc(size)
    p = b.ptr
    a.free(b)
    for _ in range(100):
        c = a.malloc(size)
        assert c.ptr == p and c is not b
        a.free(c)
    assert be.n_alloc == 1
    assert stat(a, "num_device_alloc") == 1
    a.check_invariants()


def test_block_handles_are_read_only():
    be, a = make()
    b = a.malloc(100)
    with pytest.raises(AttributeError):
        b.ptr = 0
    with pytest.raises(AttributeError):
        b.allocated = False
    with pytest.raises(TypeError):
        a.free(None)
    a.free(b)


def test_device_memory_dying_inside_malloc_is_freed_after_it():
    """The storage owner (DeviceMemory) hands its block back from its C
    destructor; when that runs inside malloc (here from raw_alloc), the
    free is deferred like any nested one."""
    from ptcore.cuda.runtime.device_storage import DeviceMemory
    be, a = make()
    holder = [DeviceMemory(a, a.malloc(100))]
    victim = holder[0].block

    def hook(n):
        holder.clear()              # the owner dies here: a nested free
    be.on_raw_alloc = hook
    big = a.malloc(3 * MiB)
    be.on_raw_alloc = None
    assert not victim.allocated
    assert a.memory_allocated() == 3 * MiB
    a.check_invariants()
    owner = DeviceMemory(a, big)
    del owner
    assert a.memory_allocated() == 0
    a.check_invariants()


def test_threads_wait_while_a_backend_call_releases_the_gil():
    """A backend call may release the GIL (the driver, or here a sleep):
    other threads then wait for the allocator instead of seeing it busy."""
    import time
    be, a = make(total=1024 * MiB)
    be.on_raw_alloc = lambda n: time.sleep(0.002)

    def work(seed):
        blocks = [a.malloc(12 * MiB + seed * KiB) for _ in range(3)]
        blocks += [a.malloc(100) for _ in range(50)]
        for b in blocks:
            a.free(b)
    _run_in_threads(work, 4)
    a.check_invariants()
    assert a.memory_allocated() == 0
