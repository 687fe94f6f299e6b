"""ptcore.utils.data: datasets, samplers, collate and DataLoader (against torch.utils.data)."""
import collections
import signal
import warnings

import numpy as np
import pytest

import ptcore
from ptcore.utils import data as D
import data_helpers as H

try:
    import torch
    import torch.utils.data as TD
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

Point = collections.namedtuple("Point", ["x", "y"])


def assert_same(p, t):
    """ptcore result ``p`` has the structure, types, dtypes and values of torch's ``t``."""
    if torch is not None and isinstance(t, torch.Tensor):
        assert isinstance(p, ptcore.Tensor), type(p)
        assert str(p.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert tuple(p.shape) == tuple(t.shape)
        np.testing.assert_array_equal(p.numpy(), t.numpy())
    elif isinstance(t, dict):
        assert type(p) is type(t) and list(p) == list(t)
        for k in t:
            assert_same(p[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(p) is type(t) and len(p) == len(t), (type(p), type(t))
        for a, b in zip(p, t):
            assert_same(a, b)
    else:
        assert type(p) is type(t) and p == t


def batches_equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert ptcore.equal(x[0], y[0]) and ptcore.equal(x[1], y[1])


# ---------------------------------------------------------------- datasets ---

def test_tensor_concat_subset_stack_datasets():
    x, y = ptcore.arange(10.).view(5, 2), ptcore.arange(5)
    ds = D.TensorDataset(x, y)
    assert len(ds) == 5 and ptcore.equal(ds[3][0], x[3]) and ds[3][1].item() == 3
    with pytest.raises(AssertionError, match="Size mismatch"):
        D.TensorDataset(x, ptcore.arange(4))
    cat = ds + D.TensorDataset(x * 10, y * 10)
    assert isinstance(cat, D.ConcatDataset) and len(cat) == 10
    assert cat[7][1].item() == 20 and cat[-1][1].item() == 40 and cat[4][1].item() == 4
    with pytest.raises(ValueError, match="absolute value"):
        cat[-11]
    sub = D.Subset(cat, [9, 0, 5])
    assert [s[1].item() for s in sub] == [40, 0, 0] and len(sub) == 3
    st = D.StackDataset(a=list(range(5)), b=ds)
    assert st[2]["a"] == 2 and st[2]["b"][1].item() == 2 and len(st) == 5
    st2 = D.StackDataset(list("abcde"), ds)
    assert st2.__getitems__([0, 4])[1][0] == "e"
    with pytest.raises(ValueError, match="Size mismatch"):
        D.StackDataset([1], [1, 2])
    with pytest.raises(AssertionError, match="IterableDataset"):
        D.ConcatDataset([H.RangeIterable(0, 3)])


def test_chain_dataset():
    ch = H.RangeIterable(0, 3) + H.RangeIterable(10, 12)
    assert isinstance(ch, D.ChainDataset) and list(ch) == [0, 1, 2, 10, 11]


@needs_torch
@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.34, 0.33, 0.33]])
def test_random_split_lengths_match_torch(lengths):
    ours = D.random_split(range(10), lengths, generator=ptcore.Generator().manual_seed(0))
    theirs = TD.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(10))
    again = D.random_split(range(10), lengths, generator=ptcore.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        D.random_split(range(10), [3, 3])


# ---------------------------------------------------------------- samplers ---

def test_samplers():
    assert list(D.SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = ptcore.Generator().manual_seed(1)
    rs = D.RandomSampler(range(10), generator=g)
    perm = list(rs)
    assert sorted(perm) == list(range(10)) and len(rs) == 10
    rr = D.RandomSampler(range(10), replacement=True, num_samples=70,
                         generator=ptcore.Generator().manual_seed(2))
    draws = list(rr)
    assert len(draws) == 70 == len(rr) and all(0 <= d < 10 for d in draws)
    assert draws == list(D.RandomSampler(range(10), replacement=True, num_samples=70,
                                         generator=ptcore.Generator().manual_seed(2)))
    more = list(D.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples"):
        D.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement"):
        D.RandomSampler(range(3), replacement=1)
    sub = list(D.SubsetRandomSampler([5, 7, 9], generator=g))
    assert sorted(sub) == [5, 7, 9]
    w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 50, generator=g))
    assert len(w) == 50 and set(w) <= {1, 3}
    w2 = list(D.WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g))
    assert sorted(w2) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d"):
        D.WeightedRandomSampler([[1.0]], 2)
    with pytest.raises(ValueError, match="num_samples"):
        D.WeightedRandomSampler([1.0], 0)


@needs_torch
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_matches_torch(drop_last):
    ours = D.BatchSampler(range(10), 3, drop_last)
    theirs = TD.BatchSampler(range(10), 3, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="batch_size"):
        D.BatchSampler(range(3), 0, False)


# ----------------------------------------------------------------- collate ---

def _samples(lib):
    T = ptcore if lib == "ptcore" else torch
    out = []
    for i in range(3):
        out.append({
            "t": T.arange(4, dtype=T.float32) + i,
            "n": np.full((2, 2), i, dtype=np.int16),
            "f": 0.5 * i, "i": i, "b": bool(i % 2), "s": f"item{i}", "by": b"x",
            "np_scalar": np.float32(i), "np_int": np.int64(i),
            "tup": (i, [float(i), T.tensor([i, i])]),
            "pt": Point(x=i, y=T.ones(1) * i),
            "nested": {"deep": [i, {"z": T.zeros(2, dtype=T.int64) + i}]},
        })
    return out


@needs_torch
def test_default_collate_nested_matches_torch():
    ours = D.default_collate(_samples("ptcore"))
    theirs = TD.default_collate(_samples("torch"))
    assert_same(ours, theirs)
    assert isinstance(ours["pt"], Point)


@needs_torch
@pytest.mark.parametrize("batch", [[1, 2, 3], [1.5, 2.5], [True, False], ["a", "b"],
                                   [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
                                   [(1, 2.0), (3, 4.0)], [[1, 2], [3, 4]]])
def test_default_collate_simple_matches_torch(batch):
    assert_same(D.default_collate(batch), TD.default_collate(batch))


@needs_torch
def test_default_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as ours:
            D.default_collate(bad)
        with pytest.raises(TypeError) as theirs:
            TD.default_collate(bad)
        assert str(ours.value).split(";")[0] == str(theirs.value).split(";")[0]
    with pytest.raises(RuntimeError, match="equal size"):
        D.default_collate([[1, 2], [3]])


@needs_torch
def test_default_convert_matches_torch():
    data = {"a": np.arange(3), "b": (np.float64(2.5), [np.ones(2)]), "c": "s",
            "p": Point(x=np.int32(1), y=2)}
    assert_same(D.default_convert(data), TD.default_convert(data))


# -------------------------------------------------------------- DataLoader ---

def _tensor_ds(n=50):
    return D.TensorDataset(ptcore.arange(n * 3, dtype=ptcore.float32).view(n, 3), ptcore.arange(n))


def _plain_loop(ds, sampler_indices, bs, drop_last=False):
    out = []
    for k in range(0, len(sampler_indices), bs):
        idx = sampler_indices[k:k + bs]
        if drop_last and len(idx) < bs:
            break
        out.append((ptcore.stack([ds[i][0] for i in idx]), ptcore.tensor(idx)))
    return out


@pytest.mark.parametrize("num_workers,ctx", [(0, None), (1, "fork"), (3, "fork"), (2, "spawn")])
def test_dataloader_equals_plain_loop(num_workers, ctx):
    ds = _tensor_ds()
    seq = list(D.DataLoader(ds, batch_size=7, num_workers=num_workers,
                            multiprocessing_context=ctx))
    batches_equal(seq, _plain_loop(ds, list(range(50)), 7))
    # shuffled: the same generator seed gives the same batches for any num_workers,
    # equal to a plain loop over the sampler's indices
    g = ptcore.Generator().manual_seed(123)
    shuf = list(D.DataLoader(ds, batch_size=8, shuffle=True, drop_last=True, generator=g,
                             num_workers=num_workers, multiprocessing_context=ctx))
    g2 = ptcore.Generator().manual_seed(123)
    D.sampler._random_int64(g2)                     # the iterator's base seed comes first
    idx = list(D.RandomSampler(ds, generator=g2))
    batches_equal(shuf, _plain_loop(ds, idx, 8, drop_last=True))
    if num_workers:
        assert all(b[0].is_shared() and b[1].is_shared() for b in seq)


def test_dataloader_nested_samples_with_workers():
    dl = D.DataLoader(H.Squares(10), batch_size=4, num_workers=2)
    out = list(dl)
    assert len(out) == len(dl) == 3
    assert out[1]["y"].tolist() == [16, 25, 36, 49] and out[1]["name"] == ["s4", "s5", "s6", "s7"]
    assert out[2]["x"].tolist() == [[8.0, 8.0], [9.0, 9.0]]


@needs_torch
@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4, num_workers=2),
                                dict(batch_size=4, num_workers=3, drop_last=True)])
def test_iterable_dataset_matches_torch(kw):
    ours = [b.tolist() if isinstance(b, ptcore.Tensor) else b
            for b in D.DataLoader(H.RangeIterable(3, 20), **kw)]
    theirs = [b.tolist() if isinstance(b, torch.Tensor) else b
              for b in TD.DataLoader(H.TorchRangeIterable(3, 20), **kw)]
    assert ours == theirs


@needs_torch
@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_sampler=[[0, 1], [4]])])
def test_len_matches_torch(kw):
    assert len(D.DataLoader(range(10), **kw)) == len(TD.DataLoader(range(10), **kw))
    with pytest.raises(TypeError):
        len(D.DataLoader(H.RangeIterable(0, 10)))


def test_batch_none_and_batch_sampler_and_collate_fn():
    out = list(D.DataLoader(np.arange(4), batch_size=None))
    assert all(isinstance(o, ptcore.Tensor) and o.dim() == 0 for o in out)
    out = list(D.DataLoader(range(6), batch_sampler=[[5, 0], [3]], collate_fn=lambda b: b))
    assert out == [[5, 0], [3]]


def test_argument_errors():
    with pytest.raises(ValueError, match="mutually exclusive"):
        D.DataLoader(range(3), sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        D.DataLoader(range(3), batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="num_workers"):
        D.DataLoader(range(3), num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        D.DataLoader(range(3), prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        D.DataLoader(range(3), persistent_workers=True)
    with pytest.raises(ValueError, match="shuffle"):
        D.DataLoader(H.RangeIterable(0, 3), shuffle=True)
    with pytest.raises(ValueError, match="multiprocessing_context"):
        D.DataLoader(range(3), num_workers=1, multiprocessing_context="nope")
    dl = D.DataLoader(range(3))
    with pytest.raises(ValueError, match="should not be set"):
        dl.batch_size = 3


def test_worker_info_seeds_and_init_fn():
    def run(seed):
        g = ptcore.Generator().manual_seed(seed)
        return list(D.DataLoader(H.WorkerIds(), batch_size=None, num_workers=2, generator=g,
                                 worker_init_fn=H.init_fn))
    a, b = run(5), run(5)
    assert a == b                                         # reproducible from the generator
    ids = [r[0] for r in a]
    assert ids == [0, 1] * 4 and all(r[1] == 2 for r in a)
    seeds = {r[0]: r[2] for r in a}
    assert seeds[1] == seeds[0] + 1
    w0 = [r[3:] for r in a if r[0] == 0][0]
    w1 = [r[3:] for r in a if r[0] == 1][0]
    assert all(x != y for x, y in zip(w0, w1))           # python, ptcore, numpy seeded apart
    assert run(6)[0][2] != a[0][2]
    assert D.get_worker_info() is None


def test_persistent_workers_and_prefetch():
    ds = _tensor_ds(20)
    dl = D.DataLoader(ds, batch_size=5, num_workers=2, persistent_workers=True, prefetch_factor=1)
    e1, e2 = list(dl), list(dl)
    batches_equal(e1, e2)
    batches_equal(e1, _plain_loop(ds, list(range(20)), 5))
    it = dl._iterator
    assert all(w.is_alive() for w in it._workers)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_worker_exception_reraised_with_traceback(ctx):
    dl = D.DataLoader(H.Failing(), batch_size=2, num_workers=2, multiprocessing_context=ctx)
    with pytest.raises(ValueError) as e:
        list(dl)
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "bad sample 5" in msg and "__getitem__" in msg and "Traceback" in msg


class _Alarm:
    """Fail (instead of hanging) when the block takes more than ``s`` seconds."""

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        def boom(*a):
            raise TimeoutError("DataLoader hung")
        self.old = signal.signal(signal.SIGALRM, boom)
        signal.alarm(self.s)

    def __exit__(self, *exc):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)


@pytest.mark.parametrize("timeout", [0, 20])
def test_killed_worker_raises_naming_it(timeout):
    dl = D.DataLoader(H.Killing(), batch_size=2, num_workers=2, timeout=timeout)
    with _Alarm(30), pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed "
                                                       r"by signal: Killed"):
        list(dl)


def test_timeout_raises():
    dl = D.DataLoader(H.Slow(), batch_size=2, num_workers=1, timeout=0.5)
    with _Alarm(30), pytest.raises(RuntimeError, match="timed out after 0.5 seconds"):
        next(iter(dl))


def test_interrupted_iteration_shuts_workers_down():
    it = iter(D.DataLoader(_tensor_ds(), batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    import gc
    gc.collect()
    assert not any(w.is_alive() for w in workers)


def test_pin_memory_without_accelerator_warns():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = list(D.DataLoader(_tensor_ds(4), batch_size=2, pin_memory=True))
    if not ptcore.cuda.is_available():
        assert any("pin_memory" in str(x.message) for x in w)
    assert len(out) == 2


def test_no_segments_left_after_worker_runs():
    import os
    before = sorted(os.listdir("/dev/shm"))
    with pytest.raises(RuntimeError):
        list(D.DataLoader(H.Killing(), batch_size=2, num_workers=2))
    list(D.DataLoader(_tensor_ds(), batch_size=4, num_workers=2))
    assert sorted(os.listdir("/dev/shm")) == before


PUBLIC_CLASSES = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
                  "ChainDataset", "Subset", "Sampler", "SequentialSampler", "RandomSampler",
                  "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
                  "DistributedSampler", "DataLoader"]


def _generic_facts(mod, lib, name):
    """How class ``name`` of ``mod`` (torch.utils.data or ptcore's) behaves as a generic."""
    import collections.abc
    cls = getattr(mod, name)
    try:
        sub = repr(cls[int]).replace(lib, "LIB")
    except TypeError:
        sub = TypeError
    return (sub, type(cls).__name__, issubclass(cls, collections.abc.Iterable),
            len(getattr(cls, "__parameters__", ())), sorted(getattr(cls, "__abstractmethods__", ())))


@needs_torch
@pytest.mark.parametrize("name", PUBLIC_CLASSES)
def test_generic_subscripting_matches_torch(name):
    """Each public class is (or is not) subscriptable as torch's, with torch's
    metaclass, type parameters and abstract methods."""
    assert _generic_facts(D, "ptcore", name) == _generic_facts(TD, "torch", name)


@needs_torch
def test_generic_annotations_and_subclasses_as_torch():
    for mod, lib in ((D, ptcore), (TD, torch)):
        alias = mod.DataLoader[tuple[lib.Tensor, lib.Tensor]]
        assert alias.__origin__ is mod.DataLoader and alias.__args__ == (tuple[lib.Tensor, lib.Tensor],)
        assert mod.StackDataset[tuple[int, ...]].__origin__ is mod.StackDataset
        assert mod.ChainDataset[int].__origin__ is mod.ChainDataset

        class Evens(mod.Subset[int]):
            pass

        assert Evens(list(range(10)), [0, 2, 4])[2] == 4
        dl = mod.DataLoader[int](list(range(4)), batch_size=2)
        assert [b.tolist() for b in dl] == [[0, 1], [2, 3]]


@needs_torch
def test_iterable_dataset_is_an_abc_iterable_as_torch():
    import abc
    import collections.abc
    for mod in (D, TD):
        assert issubclass(mod.IterableDataset, collections.abc.Iterable)
        assert isinstance(mod.IterableDataset, abc.ABCMeta)
        assert not issubclass(mod.Dataset, collections.abc.Iterable)

        class NoIter(mod.IterableDataset):
            pass

        class MoreAbstract(mod.IterableDataset[int]):
            def __iter__(self):
                return iter(range(3))

            @abc.abstractmethod
            def reset(self):
                ...

        class Done(MoreAbstract):
            def reset(self):
                pass

        for cls, missing in ((mod.IterableDataset, "__iter__"), (NoIter, "__iter__"),
                             (MoreAbstract, "reset")):
            with pytest.raises(TypeError, match=f"abstract method {missing}"):
                cls()
        ds = Done()
        assert isinstance(ds, collections.abc.Iterable) and list(ds) == [0, 1, 2]
        assert list(ds + Done()) == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_generic_subclasses_pickle_to_workers(ctx):
    import pickle
    sub = H.EvenSubset(D.TensorDataset(ptcore.arange(10.)))
    back = pickle.loads(pickle.dumps(sub))
    assert type(back) is H.EvenSubset and back[1][0].item() == 2.0
    dl = D.DataLoader[tuple](sub, batch_size=2, num_workers=2, multiprocessing_context=ctx)
    assert [b[0].tolist() for b in dl] == [[0.0, 2.0], [4.0, 6.0], [8.0]]
    stream = pickle.loads(pickle.dumps(H.IntStream(6)))
    assert type(stream) is H.IntStream
    got = sorted(int(x) for x in D.DataLoader(stream, batch_size=None, num_workers=2,
                                              multiprocessing_context=ctx))
    assert got == list(range(6))
