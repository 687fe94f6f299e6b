"""Storages (untyped_storage, views sharing storage, nbytes/data_ptr) and the
host allocator: the cache of large blocks, lazily-zeroed ``zeros`` (RSS
measured in a subprocess), ``_host_empty_cache`` and a randomized stress test
for corruption."""
import gc
import json
import os
import pickle
import random
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

MiB = 1 << 20
stats = ptcore._tensor._host_allocator_stats
empty_cache = ptcore._tensor._host_empty_cache


# ---------------------------------------------------------------------------
# storages
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["bool", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                                "float32", "float64", "complex64", "complex128"])
def test_untyped_storage_basics(dt):
    t = ptcore.zeros(3, 5, dtype=getattr(ptcore, dt))
    s = t.untyped_storage()
    assert isinstance(s, ptcore.UntypedStorage)
    assert ptcore.is_storage(s) and not ptcore.is_storage(t)
    assert s.nbytes() == 15 * t.element_size()
    assert len(s) == s.size() == s.nbytes()
    assert s.element_size() == 1
    assert s.data_ptr() == t.data_ptr()
    assert s.device == ptcore.device("cpu")
    assert not s.is_shared() and not s.is_pinned()


def test_views_share_the_storage():
    t = ptcore.arange(20, dtype=ptcore.float64)
    s = t.untyped_storage()
    views = [t[3:], t.view(4, 5), t.view(4, 5).t(), t[::3], t.view(4, 5)[1:, 2], t[7],
             t.view(2, 10).narrow(1, 2, 5), t.detach(), t.view(4, 5).unsqueeze(0).expand(2, 4, 5)]
    for v in views:
        vs = v.untyped_storage()
        assert vs.data_ptr() == s.data_ptr()
        assert vs.nbytes() == s.nbytes() == 160
        assert v.data_ptr() == s.data_ptr() + v.storage_offset() * 8
    assert t[3:].storage_offset() == 3
    assert t[7].storage_offset() == 7
    # writes through a view are seen through the base and other views
    t.view(4, 5)[1, 2] = -1.0
    assert t.tolist()[7] == -1.0
    assert t[7].item() == -1.0


def test_storage_object_identity_is_preserved_like_torch():
    t = ptcore.arange(10.0)
    assert t.untyped_storage() is t.untyped_storage()
    assert t[2:].untyped_storage() is t.untyped_storage()
    if torch is not None:
        u = torch.arange(10.0)
        assert u[2:].untyped_storage() is u.untyped_storage()


def test_storage_outlives_its_tensor():
    t = ptcore.arange(100, dtype=ptcore.int32)
    s = t.untyped_storage()
    v = t[50:]
    del t
    gc.collect()
    assert v.tolist()[0] == 50
    assert s.nbytes() == 400
    raw = s.tolist()
    assert raw[:8] == [0, 0, 0, 0, 1, 0, 0, 0]


@needs_torch
@pytest.mark.parametrize("make", [
    lambda L: L.zeros(3, 4),
    lambda L: L.zeros(3, 1).expand(3, 4),
    lambda L: L.empty_strided((2, 3), (1, 2)),
    lambda L: L.empty_strided((2, 3), (5, 1)),
    lambda L: L.zeros(0, 5),
    lambda L: L.zeros(()),
    lambda L: L.arange(12.0)[2:5],
    lambda L: L.from_numpy(np.arange(10.0)[::2]),
    lambda L: L.ones(4, dtype=L.complex128).t(),
    lambda L: L.tensor([1, 2, 3], dtype=L.int16),
], ids=lambda f: "")
def test_storage_nbytes_match_torch(make):
    assert make(ptcore).untyped_storage().nbytes() == make(torch).untyped_storage().nbytes()


@needs_torch
def test_storage_sizeof_counts_its_bytes_as_torch():
    # sys.getsizeof of a storage is its object plus its bytes (how torchinfo measures input
    # sizes): the growth from a small to a large storage matches torch's, typed or untyped
    def sizes(L, typed):
        out = []
        for n in (0, 10, 6144):
            t = L.ones(n, dtype=L.float32)
            out.append(sys.getsizeof(t.storage() if typed else t.untyped_storage()))
        return [b - out[0] for b in out]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (TypedStorage is deprecated)
        for typed in (False, True):
            assert sizes(ptcore, typed) == sizes(torch, typed) == [0, 40, 24576]


def test_storage_of_external_memory():
    a = np.arange(10, dtype=np.float32)
    t = ptcore.from_numpy(a)
    s = t.untyped_storage()
    assert s.data_ptr() == a.ctypes.data and s.nbytes() == a.nbytes
    strided = ptcore.from_numpy(np.arange(10.0)[::2])
    assert strided.untyped_storage().nbytes() == 72            # as torch: spans 9 elements
    d = ptcore.from_dlpack(np.arange(6, dtype=np.int64))
    assert d.untyped_storage().nbytes() == 48


def test_storage_constructor_tolist_and_pickle():
    s = ptcore.Storage(16)
    assert s.nbytes() == 16 and s.device == ptcore.device("cpu")
    assert ptcore.Storage().nbytes() == 0
    with pytest.raises(RuntimeError):     # (torch.UntypedStorage(-1): RuntimeError)
        ptcore.Storage(-1)
    t = ptcore.tensor([1, 2, 255], dtype=ptcore.uint8)
    st = t.untyped_storage()
    assert st.tolist() == [1, 2, 255]
    r = pickle.loads(pickle.dumps(st))
    assert r.tolist() == [1, 2, 255] and r.data_ptr() != st.data_ptr()
    assert "3" in repr(st)


def test_resize_grows_storage_and_keeps_prefix():
    t = ptcore.arange(4, dtype=ptcore.float32)
    p = t.untyped_storage().data_ptr()
    t.resize_(2, 2)                            # same size: no reallocation
    assert t.untyped_storage().data_ptr() == p and t.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    t.resize_(100)
    assert t.untyped_storage().nbytes() >= 400
    assert t.shape == (100,) and t.tolist()[:4] == [0.0, 1.0, 2.0, 3.0]
    t.resize_(1)
    assert t.tolist() == [0.0]
    assert t.untyped_storage().nbytes() >= 400   # shrinking keeps the storage, like torch


def test_zero_size_tensors():
    for t in (ptcore.empty(0), ptcore.zeros(3, 0), ptcore.empty_strided((0, 4), (4, 1))):
        assert t.untyped_storage().nbytes() == 0
        assert t.numel() == 0 and t.tolist() in ([], [[], [], []])


# ---------------------------------------------------------------------------
# host allocator: cache of large blocks
# ---------------------------------------------------------------------------

def test_allocator_stats_keys():
    s = stats()
    for k in ("cached_bytes", "cached_blocks", "cache_hits", "maps", "unmaps", "live_large_bytes"):
        assert k in s and isinstance(s[k], int) and s[k] >= 0
    assert s["cached_bytes"] == 0 or s["cached_blocks"] > 0


def test_large_block_is_reused_from_the_cache():
    empty_cache()
    s0 = stats()
    assert s0["cached_blocks"] == 0 and s0["cached_bytes"] == 0
    a = ptcore.empty(64 * MiB, dtype=ptcore.uint8)
    ptr = a.data_ptr()
    s1 = stats()
    assert s1["maps"] == s0["maps"] + 1
    assert s1["live_large_bytes"] - s0["live_large_bytes"] >= 64 * MiB
    del a
    s2 = stats()
    assert s2["cached_blocks"] == 1 and s2["cached_bytes"] >= 64 * MiB
    assert s2["live_large_bytes"] == s0["live_large_bytes"]
    assert s2["unmaps"] == s1["unmaps"]                         # kept, not returned
    b = ptcore.empty(16 * MiB, dtype=ptcore.float32)            # same 64 MiB
    s3 = stats()
    assert s3["cache_hits"] == s2["cache_hits"] + 1
    assert s3["maps"] == s2["maps"]
    assert b.data_ptr() == ptr
    assert s3["cached_blocks"] == 0
    del b
    empty_cache()


def test_small_allocations_bypass_the_large_block_cache():
    empty_cache()
    s0 = stats()
    keep = [ptcore.empty(n, dtype=ptcore.uint8) for n in (1, 100, 4096, 100_000, 511 * 1024)]
    s1 = stats()
    assert s1["maps"] == s0["maps"] and s1["live_large_bytes"] == s0["live_large_bytes"]
    del keep
    assert stats()["cached_blocks"] == 0
    big = ptcore.empty(512 * 1024, dtype=ptcore.uint8)         # exactly the threshold
    assert stats()["maps"] == s0["maps"] + 1
    del big
    empty_cache()


def test_empty_cache_releases_blocks():
    empty_cache()
    blocks = [ptcore.empty(n * MiB, dtype=ptcore.uint8) for n in (1, 2, 5, 9)]
    del blocks
    s = stats()
    assert s["cached_blocks"] == 4 and s["cached_bytes"] >= 17 * MiB
    empty_cache()
    s2 = stats()
    assert s2["cached_blocks"] == 0 and s2["cached_bytes"] == 0
    assert s2["unmaps"] == s["unmaps"] + 4
    c = ptcore.empty(MiB, dtype=ptcore.uint8)                    # fresh mapping now
    assert stats()["maps"] == s2["maps"] + 1 and stats()["cache_hits"] == s2["cache_hits"]
    del c
    empty_cache()


def test_cache_limit_evicts_blocks():
    default = ptcore._config.CPU_ALLOCATOR_CACHE_MB * MiB
    try:
        ptcore._tensor._set_host_cache_limit(8 * MiB)
        s0 = stats()
        a = ptcore.empty(16 * MiB, dtype=ptcore.uint8)          # larger than the limit
        del a
        s1 = stats()
        assert s1["cached_blocks"] == 0 and s1["unmaps"] == s0["unmaps"] + 1
        blocks = [ptcore.empty(3 * MiB, dtype=ptcore.uint8) for _ in range(4)]
        del blocks
        s2 = stats()
        assert s2["cached_bytes"] <= 8 * MiB and s2["cached_blocks"] >= 1
    finally:
        ptcore._tensor._set_host_cache_limit(default)
    assert stats()["cached_blocks"] == 0


def test_reused_blocks_are_zeroed_by_zeros():
    empty_cache()
    for nbytes in (600 * 1024, 4 * MiB, 8 * MiB, 16 * MiB):
        a = ptcore.empty(nbytes, dtype=ptcore.uint8)
        a.fill_(0xAB)
        ptr = a.data_ptr()
        del a
        z = ptcore.zeros(nbytes, dtype=ptcore.uint8)
        assert not z.numpy().any(), f"zeros({nbytes}) returned stale data (reused={z.data_ptr() == ptr})"
        o = ptcore.ones(nbytes // 4, dtype=ptcore.float32)
        assert (o.numpy() == 1.0).all()
        del z, o
    empty_cache()


# ---------------------------------------------------------------------------
# lazily zeroed large allocations (subprocess: RSS of a fresh process)
# ---------------------------------------------------------------------------

_RSS_SCRIPT = textwrap.dedent("""
    import json, os, sys
    # With a meson-python editable install, importing rebuilds the package;
    # the parent process has just built it, so use that build as it is.
    for finder in sys.meta_path:
        if hasattr(finder, "_rebuild") and hasattr(finder, "_build_path"):
            loader_mod = sys.modules[type(finder).__module__]
            def _no_rebuild(finder=finder, loader_mod=loader_mod):
                plan = os.path.join(finder._build_path, "meson-info", "intro-install_plan.json")
                with open(plan, encoding="utf8") as fh:
                    return loader_mod.collect(json.load(fh))
            finder._rebuild = _no_rebuild
    import ptcore
    page = os.sysconf("SC_PAGE_SIZE")
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * page
    N = 64 << 20
    out = {}
    if sys.argv[1] == "dirty_cache":
        # a dirty 64 MiB block sits in the cache: zeros must not hand it out unzeroed
        d = ptcore.empty(N, dtype=ptcore.uint8)
        d.fill_(7)
        del d
        out["cached"] = ptcore._tensor._host_allocator_stats()["cached_bytes"]
    r0 = rss()
    t = ptcore.zeros(N // 4, dtype=ptcore.float32)
    r1 = rss()
    a = t.numpy()
    out["nonzero"] = int(a.any())
    out["first_last"] = [float(a[0]), float(a[-1])]
    t.fill_(1.0)
    r2 = rss()
    out["sum"] = float(a.sum(dtype="float64"))
    out["after_zeros"] = r1 - r0
    out["after_write"] = r2 - r0
    out["write_cost"] = r2 - r1
    print(json.dumps(out))
""")


def _child_env():
    """Environment for a child interpreter importing the ptcore this process imported.

    The child runs outside the checkout (a source tree on ``sys.path[0]`` would
    shadow the built package), with the directory holding the imported ptcore
    first on its path (an editable install's import hook still takes precedence).
    """
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _run_rss(mode, cwd):
    proc = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, mode], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=_child_env())
    if proc.returncode != 0 and 'rebuilding the "ptcore" editable package failed' in proc.stderr:
        # the editable install rebuilds on import; a tree being edited concurrently
        # can fail to build in the child although this process imported fine
        pytest.skip("the child process could not rebuild the editable ptcore install")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/self/statm")
@pytest.mark.parametrize("mode", ["fresh", "dirty_cache"])
def test_large_zeros_are_lazy_and_read_as_zero(mode, tmp_path):
    out = _run_rss(mode, tmp_path)
    if mode == "dirty_cache":
        assert out["cached"] >= 64 * MiB
    assert out["nonzero"] == 0 and out["first_last"] == [0.0, 0.0]
    assert out["after_zeros"] < 8 * MiB, f"zeros(64 MiB) raised RSS by {out['after_zeros'] / MiB:.1f} MiB"
    # the measurement itself works: touching the pages does cost ~64 MiB
    assert out["write_cost"] > 48 * MiB
    assert out["sum"] == float(16 * MiB)
    if mode == "dirty_cache":
        # the cached block was reused, its pages given back (MADV_DONTNEED), not kept
        # resident beside a fresh mapping: written, the zeros hold no more than it did
        assert out["after_write"] < 16 * MiB, out


# ---------------------------------------------------------------------------
# stress
# ---------------------------------------------------------------------------

_PATTERN = (np.arange(8 * MiB + 4096, dtype=np.uint64) * 2654435761 % 251).astype(np.uint8)


def _pattern(i, n):
    off = (i * 977) % 4096
    return _PATTERN[off:off + n]


def test_random_allocation_stress_has_no_corruption():
    rng = random.Random(1234)
    empty_cache()
    base_live = stats()["live_large_bytes"]
    live = {}
    sizes = [0, 1, 63, 64, 65, 4095, 4096, 511 * 1024, 512 * 1024, 512 * 1024 + 1, 4 * MiB,
             4 * MiB + 1, 8 * MiB]

    def check(i):
        t, n = live[i]
        assert t.numel() == n
        if n:
            np.testing.assert_array_equal(t.numpy(), _pattern(i, n), err_msg=f"block {i} corrupted")

    for i in range(200):
        n = rng.choice(sizes) if rng.random() < 0.3 else rng.randint(0, 8 * MiB)
        if rng.random() < 0.3:
            t = ptcore.zeros(n, dtype=ptcore.uint8)
            if n:
                assert not t.numpy().any(), f"zeros({n}) not zero"
        else:
            t = ptcore.empty(n, dtype=ptcore.uint8)
        if n:
            t.numpy()[:] = _pattern(i, n)
        live[i] = (t, n)
        if len(live) > 20 or rng.random() < 0.4:
            for j in rng.sample(sorted(live), k=min(len(live), rng.randint(1, 4))):
                check(j)
                del live[j]
        if i % 40 == 0:
            for j in live:
                check(j)
        del t
    for j in list(live):
        check(j)
    live.clear()
    assert stats()["live_large_bytes"] == base_live
    empty_cache()
    assert stats()["cached_bytes"] == 0


def test_concurrent_allocation_from_threads():
    errors = []

    def worker(seed):
        rng = random.Random(seed)
        try:
            held = []
            for k in range(40):
                n = rng.randint(256 * 1024, 3 * MiB)
                t = ptcore.empty(n, dtype=ptcore.uint8)
                t.fill_(seed)
                held.append((t, seed, n))
                if len(held) > 3:
                    u, s, m = held.pop(rng.randrange(len(held)))
                    a = u.numpy()
                    if a.size != m or not (a == s).all():
                        errors.append(f"thread {seed}: block corrupted")
            for u, s, m in held:
                if not (u.numpy() == s).all():
                    errors.append(f"thread {seed}: block corrupted at end")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(s,)) for s in (11, 22, 33, 44)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    empty_cache()


_REUSE_SCRIPT = textwrap.dedent("""
    import resource, ptcore
    def round_():
        ts = [ptcore.empty(75000).fill_(1.0) for _ in range(100)]    # 300 KB each: malloc's sizes
        del ts
    round_()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(4):
        round_()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc tuning")
def test_freed_small_blocks_are_reused_without_page_faults(tmp_path):
    # tensors under the large-block threshold come from malloc: freed and
    # allocated again (a training step's activations), they must not be
    # returned to the system and faulted in again every step
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    # the ptcore under test (installed, or the built tree), never a source tree in the cwd
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _REUSE_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=120, check=True, cwd=tmp_path).stdout
    # 4 rounds x 100 tensors x 74 pages would be ~30000 faults without reuse
    assert int(out.strip().splitlines()[-1]) < 2000


@needs_torch
def test_set_bumps_own_version_counter():
    """``b.set_(a)`` is an in-place op on ``b``: b's version goes up, a's does not,
    and afterwards each counts its own in-place writes (torch's counters are per tensor)."""
    got = {}
    for L in (torch, ptcore):
        a, b = L.ones(3), L.empty(0)
        v = [(a._version, b._version)]
        b.set_(a)
        v.append((a._version, b._version))
        a.add_(1)
        v.append((a._version, b._version))
        b.mul_(2)
        v.append((a._version, b._version))
        got[L] = (v, b.tolist())
    assert got[ptcore] == got[torch]


# --- UntypedStorage.from_file, byte indexing and slices, asarray of a storage (safetensors
# maps its files so), against torch -------------------------------------------------------

def _u8(st):
    return ptcore.tensor([], dtype=ptcore.uint8).set_(st)


def test_from_file_private_and_shared(tmp_path):
    import numpy as np
    path = tmp_path / "f.bin"
    np.arange(10, dtype=np.float32).tofile(path)
    st = ptcore.UntypedStorage.from_file(str(path), False, 40)
    assert st.nbytes() == 40
    assert ptcore.tensor([], dtype=ptcore.float32).set_(st).tolist() == list(range(10))
    _u8(st)[0] = 7                                   # private: the file is unchanged
    assert np.fromfile(path, np.uint8)[0] == 0
    st = ptcore.UntypedStorage.from_file(path, shared=True, nbytes=8)
    _u8(st)[0] = 9                                   # shared: written to the file
    del st
    assert np.fromfile(path, np.uint8)[0] == 9
    assert ptcore.UntypedStorage.from_file(str(path), False, 0).nbytes() == 0
    with pytest.raises(RuntimeError, match="smaller than the required mapping size <41>"):
        ptcore.UntypedStorage.from_file(str(path), False, 41)
    with pytest.raises(RuntimeError, match="unable to open file"):
        ptcore.UntypedStorage.from_file(str(tmp_path / "nope"), False, 4)
    with pytest.raises(RuntimeError, match="non-negative"):
        ptcore.UntypedStorage.from_file(str(path), False, -1)


def test_storage_bytes_and_slices_as_torch():
    torch = pytest.importorskip("torch")
    mine, ref = ptcore.UntypedStorage(8), torch.UntypedStorage(8)
    _u8(mine).fill_(3)
    ref.fill_(3)
    for st in (mine, ref):
        v = st[2:5]
        assert v.nbytes() == 3 and v.data_ptr() - st.data_ptr() == 2
        v[0] = 9                                     # a slice shares the bytes
        st[0:2] = 5
        assert st.untyped() is st
    assert mine.tolist() == ref.tolist() == [5, 5, 9, 3, 3, 3, 3, 3]
    assert mine[2] == ref[2] == 9 and mine[-1] == ref[-1] == 3
    assert mine[6:100].nbytes() == ref[6:100].nbytes() == 2
    assert mine[5:2].nbytes() == ref[5:2].nbytes() == 0
    for st in (mine, ref):
        with pytest.raises(RuntimeError, match="step of 2"):
            st[1:5:2]
        with pytest.raises(IndexError, match="out of range"):
            st[10]
    a = ptcore.asarray(mine[2:6], dtype=ptcore.uint8)
    b = torch.asarray(ref[2:6], dtype=torch.uint8)
    assert a.tolist() == b.tolist() and a.data_ptr() - mine.data_ptr() == 2
    assert ptcore.asarray(mine[0:4], dtype=ptcore.float32).shape == (1,)
    with pytest.raises(ValueError, match="whole number"):
        ptcore.asarray(mine[1:7], dtype=ptcore.float32)


def test_a_slice_outlives_its_storages_resize():
    """A slice keeps the bytes it viewed: the storage gives its block up to the slice
    (kept alive) when it moves to a new one, so the slice never reads freed memory."""
    st = ptcore.UntypedStorage(1 << 16)
    _u8(st).fill_(4)
    view = st[100:200]
    st.resize_(1 << 20)
    _u8(st).fill_(1)
    del st
    import gc
    gc.collect()
    assert view.tolist() == [4] * 100


def test_storage_base_is_the_untyped_storages_base():
    # tensordict's MemoryMappedTensor checks ``isinstance(source, torch.StorageBase)``
    torch = pytest.importorskip("torch")
    for m in (torch, ptcore):
        assert m.StorageBase is m._C.StorageBase
        assert isinstance(m.ones(2).untyped_storage(), m.StorageBase)
        assert isinstance(m.UntypedStorage(3), m.StorageBase)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert not isinstance(m.FloatStorage(2), m.StorageBase)
