"""DataLoader with worker processes against torch.utils.data (fork workers, small datasets).

No timing assertions: every wait has a generous bound, and a test that
needs a worker to be slow blocks it on an event the main process sets.
"""
import dataclasses
import multiprocessing as mp
import os
import threading
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ptcore  # noqa: E402
import ptcore.multiprocessing  # noqa: E402

FORK = "fork" if "fork" in mp.get_all_start_methods() else None
pytestmark = pytest.mark.skipif(FORK is None, reason="needs the fork start method")


def _datasets(lib):
    D = lib.utils.data

    class MapDS(D.Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return {"x": lib.tensor([float(i), 2.0 * i]), "i": i, "s": f"s{i}",
                    "a": np.array([i, -i])}

    class Unsharded(D.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    class Sharded(Unsharded):
        def __iter__(self):
            info = D.get_worker_info()
            if info is None:
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))

    class ShardedLen(Sharded):
        def __len__(self):
            return self.n

    class Probe(D.Dataset):
        """Returns what a worker sees of itself."""

        def __len__(self):
            return 2

        def __getitem__(self, i):
            info = D.get_worker_info()
            try:
                info.id = 5
                err = None
            except Exception as e:
                err = type(e)
            with open(f"/proc/{os.getpid()}/task/{threading.get_native_id()}/comm") as f:
                comm = f.read().strip()
            return ([f.name for f in dataclasses.fields(info)], info.rng, info.worker_method,
                    err, comm, repr(info).split(", dataset=")[0].split("(")[0])

    return dict(MapDS=MapDS, Unsharded=Unsharded, Sharded=Sharded, ShardedLen=ShardedLen,
                Probe=Probe)


T, P = _datasets(torch), _datasets(ptcore)


def _norm(x):
    if isinstance(x, (torch.Tensor, ptcore.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, [(k, _norm(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_norm(v) for v in x])
    return (type(x).__name__, x)


def _both(name, n, **kw):
    out = []
    for lib, ds in ((torch, T), (ptcore, P)):
        dl = lib.utils.data.DataLoader(ds[name](n), multiprocessing_context=FORK, **kw)
        out.append([_norm(b) for b in dl])
    return out


@pytest.mark.parametrize("name,n,kw", [
    ("MapDS", 7, dict(batch_size=3, num_workers=2)),
    ("MapDS", 7, dict(batch_size=3, num_workers=3, drop_last=True)),
    ("MapDS", 5, dict(batch_size=None, num_workers=2)),
    ("MapDS", 9, dict(batch_sampler=[[0, 1], [5], [2, 3, 4], [8]], num_workers=2)),
    ("MapDS", 9, dict(sampler=[8, 1, 4, 4], batch_size=3, num_workers=2)),
    ("Unsharded", 5, dict(batch_size=2, num_workers=2)),      # duplicated, as torch
    ("Sharded", 11, dict(batch_size=3, num_workers=3)),
    ("Sharded", 11, dict(batch_size=3, num_workers=2, drop_last=True)),
    ("Sharded", 5, dict(batch_size=None, num_workers=1)),
])
def test_batches_and_types_match_torch(name, n, kw):
    t, p = _both(name, n, **kw)
    assert p == t


def test_persistent_workers_epochs_match_torch():
    out = []
    for lib, ds in ((torch, T), (ptcore, P)):
        dl = lib.utils.data.DataLoader(ds["ShardedLen"](7), batch_size=2, num_workers=2,
                                       persistent_workers=True, multiprocessing_context=FORK)
        epochs = [[b.tolist() for b in dl] for _ in range(2)]
        it = dl._iterator
        first = next(iter(dl)).tolist()        # a fresh epoch on the same workers
        epochs.append([b.tolist() for b in dl])
        out.append((epochs, first, dl._iterator is it, len(dl)))
        dl._iterator._shutdown_workers()
        assert not any(w.is_alive() for w in dl._iterator._workers)
    assert out[1] == out[0]


def test_worker_info_is_torchs_frozen_dataclass():
    t, p = [list(lib.utils.data.DataLoader(ds["Probe"](), batch_size=None, num_workers=1,
                                           multiprocessing_context=FORK))
            for lib, ds in ((torch, T), (ptcore, P))]
    assert p == t
    fields, rng, method, err, comm, name = p[0]
    assert fields == ["id", "num_workers", "seed", "dataset", "rng", "worker_method"]
    assert (rng, method, name) == (None, "multiprocessing", "WorkerInfo")
    assert issubclass(err, AttributeError) and err is dataclasses.FrozenInstanceError
    assert comm == "pt_data_worker"      # the worker's name in ps/top, as torch's


def test_thread_name_helpers():
    got = {}

    def body():
        got["before"] = ptcore.multiprocessing._get_thread_name()
        ptcore.multiprocessing._set_thread_name("abcdefghijklmnopqrst")
        got["after"] = ptcore.multiprocessing._get_thread_name()
        with open(f"/proc/{os.getpid()}/task/{threading.get_native_id()}/comm") as f:
            got["comm"] = f.read().strip()

    th = threading.Thread(target=body)
    th.start()
    th.join(60)
    assert got["after"] == got["comm"] == "abcdefghijklmno"   # Linux keeps 15 bytes
    with pytest.raises(TypeError):
        ptcore.multiprocessing._set_thread_name(3)


class _Gated:
    """Worker 0's first sample waits for ``gate``; the other samples are immediate."""

    def __init__(self, lib, gate):
        self.lib, self.gate = lib, gate

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = self.lib.utils.data.get_worker_info()
        if i == 0:
            self.gate.wait(120)
        return (info.id, i)


@pytest.mark.parametrize("lib", ["torch", "ptcore"])
def test_in_order_false_feeds_the_free_worker(lib):
    # torch gives each worker at most prefetch_factor * num_workers //
    # active_workers outstanding tasks when in_order=False, so a blocked
    # worker does not take new indices: the other worker delivers batches
    # until the main process releases the blocked one.
    lib = {"torch": torch, "ptcore": ptcore}[lib]
    gate = mp.get_context(FORK).Event()
    it = iter(lib.utils.data.DataLoader(_Gated(lib, gate), batch_size=None, num_workers=2,
                                        in_order=False, multiprocessing_context=FORK))
    first = [next(it) for _ in range(6)]
    gate.set()
    rest = list(it)
    assert [w for w, _ in first] == [1] * 6
    assert sorted(i for _, i in first + rest) == list(range(12))


def test_assertions_and_warnings_as_torch():
    for lib, ds in ((torch, T), (ptcore, P)):
        D = lib.utils.data
        with pytest.raises(AssertionError, match="prefetch_factor must be greater than 0"):
            iter(D.DataLoader(ds["MapDS"](4), num_workers=2, prefetch_factor=0))
        with pytest.raises(AssertionError, match="requires timeout == 0"):
            iter(D.DataLoader(ds["MapDS"](4), timeout=5))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = [b["i"].tolist() for b in D.DataLoader(ds["MapDS"](3), batch_size=2,
                                                          pin_memory=True, pin_memory_device="cpu")]
        assert got == [[0, 1], [2]]
        assert any("pin_memory_device is deprecated" in str(x.message) for x in w)


def test_unpicklable_dataset_with_spawn_warns_and_raises_as_torch():
    for lib, ds in ((torch, T), (ptcore, P)):
        dl = lib.utils.data.DataLoader(ds["MapDS"](4), num_workers=1,
                                       multiprocessing_context="spawn")
        with pytest.warns(UserWarning, match="pickle error"), \
                pytest.raises(AttributeError, match="pickle"):
            iter(dl)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_sample_that_is_not_a_tensor_fails_collation_as_torch(workers):
    """A batch of a tensor and a function: in a worker the shared-memory
    collation asks each sample's numel() (AttributeError, re-raised in the
    main process as "Caught AttributeError in DataLoader worker process");
    in the main process stack refuses it (TypeError)."""
    got = []
    for lib in (torch, ptcore):
        class DS(lib.utils.data.Dataset):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                return lib.tensor([i]) if i == 0 else (lambda: 0)

        dl = lib.utils.data.DataLoader(DS(), batch_size=2, num_workers=workers,
                                       multiprocessing_context=FORK if workers else None)
        with pytest.raises((AttributeError, TypeError)) as e:
            list(dl)
        got.append(e.type)
        if workers:
            assert "in DataLoader worker process" in str(e.value)
    assert got[1] is got[0] is (AttributeError if workers else TypeError)
