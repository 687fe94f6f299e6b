"""ptcore.multiprocessing: tensors sent between processes share memory."""
import gc
import os
import pickle

import numpy as np
import pytest

import ptcore
import ptcore.multiprocessing as mp
import mp_helpers as H

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

METHODS = ["fork", "spawn"]
TIMEOUT = 60


def _shm_entries():
    return sorted(os.listdir("/dev/shm"))


def _ptcore_memfds():
    """This process's open descriptors and mappings of ptcore shared memory."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "ptcore_shm" in os.readlink(f"/proc/self/fd/{fd}"):
                n += 1
        except OSError:
            pass
    with open("/proc/self/maps") as f:
        n += sum("ptcore_shm" in line for line in f)
    return n


def test_reexports_multiprocessing_names():
    import multiprocessing
    for name in multiprocessing.__all__:
        assert hasattr(mp, name), name
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in mp.get_all_sharing_strategies()
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("nope")


@needs_torch
def test_sharing_strategies_as_torch():
    import torch.multiprocessing as tmp
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == tmp.get_sharing_strategy()
    for lib in (mp, tmp):
        with pytest.raises(AssertionError, match="invalid sharing strategy 'nope'"):
            lib.set_sharing_strategy("nope")


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.int64, ptcore.uint8,
                                   ptcore.bool, ptcore.complex64, ptcore.bfloat16])
def test_share_memory_in_place_keeps_data_and_views(dtype):
    t = (ptcore.arange(12) % 3).to(dtype).view(3, 4)
    ref = t.clone()
    v = t[1:, 2:]
    ptr = t.untyped_storage()
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and v.is_shared()
    assert t.untyped_storage() is ptr            # the storage moved, not the tensor
    assert v.untyped_storage() is t.untyped_storage()
    assert ptcore.equal(t, ref)
    v.fill_(1)
    assert ptcore.equal(t[1:, 2:], ptcore.ones(2, 2, dtype=dtype))
    t.share_memory_()                            # no-op when already shared
    assert t.is_shared()


def test_share_memory_zero_size_and_storage_method():
    t = ptcore.empty(0)
    t.share_memory_()
    assert t.numel() == 0
    s = ptcore.arange(4.).untyped_storage()
    assert s.share_memory_() is s and s.is_shared()


def test_plain_pickle_still_copies():
    t = ptcore.arange(4.).share_memory_()
    u = pickle.loads(pickle.dumps(t))
    u.add_(1)
    assert ptcore.equal(t, ptcore.arange(4.))


@pytest.mark.parametrize("method", METHODS)
def test_queue_sharing_both_ways(method):
    ctx = mp.get_context(method)
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    t = ptcore.zeros(3)                      # not shared yet: moved to shared memory on send
    p = ctx.Process(target=H.child_add_and_reply, args=(q_in, q_out, done))
    p.start()
    try:
        q_in.put(t)
        made = q_out.get(timeout=TIMEOUT)
        assert made.is_shared()
        assert made.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert t.is_shared()
        assert t.tolist() == [1.0, 1.0, 1.0]    # written in the child, read in the parent
        done.set()
        assert q_out.get(timeout=TIMEOUT) == "written"
        assert made.tolist() == [42.0] * 5       # the child's later write shows here
        done.set()
    finally:
        done.set()
        p.join(TIMEOUT)
    assert p.exitcode == 0


@pytest.mark.parametrize("method", METHODS)
def test_pipe_sharing(method):
    ctx = mp.get_context(method)
    a, b = ctx.Pipe()
    p = ctx.Process(target=H.child_pipe, args=(b,))
    p.start()
    try:
        t = ptcore.arange(1, 5, dtype=ptcore.int32)
        a.send(t)
        assert a.recv() == "ok"
        assert t.tolist() == [-1, -2, -3, -4]
        a.send("bye")
    finally:
        p.join(TIMEOUT)
    assert p.exitcode == 0


@pytest.mark.parametrize("method", METHODS)
def test_process_argument(method):
    ctx = mp.get_context(method)
    t = ptcore.zeros(4, dtype=ptcore.float64)
    t.share_memory_()                            # needed for fork (arguments are not pickled)
    p = ctx.Process(target=H.child_arg_write, args=(t[1:3], 7.0))
    p.start()
    p.join(TIMEOUT)
    assert p.exitcode == 0
    assert t.tolist() == [0.0, 7.0, 7.0, 0.0]


def test_spawn_argument_is_shared_on_send():
    ctx = mp.get_context("spawn")
    t = ptcore.zeros(2)
    p = ctx.Process(target=H.child_arg_write, args=(t, 3.0))
    p.start()
    p.join(TIMEOUT)
    assert p.exitcode == 0
    assert t.is_shared() and t.tolist() == [3.0, 3.0]


def test_views_share_one_storage_in_receiver():
    ctx = mp.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    a = ptcore.zeros(4)
    p = ctx.Process(target=H.child_views, args=(q_in, q_out))
    p.start()
    try:
        q_in.put((a, a[2:]))
        assert q_out.get(timeout=TIMEOUT) is True
        assert a.tolist() == [0.0, 0.0, 123.0, 0.0]
    finally:
        p.join(TIMEOUT)


def test_round_trip_in_process_gives_same_storage():
    from multiprocessing.reduction import ForkingPickler
    t = ptcore.arange(6.).view(2, 3)
    data = ForkingPickler.dumps(t[1])
    u = pickle.loads(data)
    assert u.untyped_storage() is t.untyped_storage()
    assert ptcore.equal(u, t[1]) and u.storage_offset() == 3


def test_segments_released_including_killed_process():
    gc.collect()
    shm_before = _shm_entries()
    fds_before = _ptcore_memfds()
    ctx = mp.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = ptcore.ones(1000)
    p = ctx.Process(target=H.child_hold_then_die, args=(q_in, q_out))
    p.start()
    q_in.put(t)
    assert q_out.get(timeout=TIMEOUT) == 1000.0
    p.join(TIMEOUT)
    assert p.exitcode == -9                          # killed while holding the tensor
    assert _ptcore_memfds() > fds_before
    del t
    q_in.close(); q_out.close()
    q_in.join_thread(); q_out.join_thread()
    gc.collect()
    assert _ptcore_memfds() == fds_before            # nothing mapped or open here any more
    assert _shm_entries() == shm_before              # and nothing named in /dev/shm


def test_spawn_helper_and_errors():
    t = ptcore.zeros(3).share_memory_()
    mp.spawn(H.spawn_fn, args=(t,), nprocs=3)
    assert t.tolist() == [10.0, 11.0, 12.0]
    with pytest.raises(mp.ProcessRaisedException, match="boom in process 1"):
        mp.spawn(H.spawn_fail, nprocs=2)


@needs_torch
def test_shared_values_match_torch():
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    t = ptcore.from_numpy(a.copy()).share_memory_()
    tt = torch.from_numpy(a.copy()).share_memory_()
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
    assert t.is_shared() == tt.is_shared()


def test_hogwild_example_accuracy():
    """examples/hogwild.py: 2 Hogwild processes reach the accuracy of one process."""
    pytest.importorskip("sklearn")
    try:
        from ptcore import nn, optim
        nn.Linear, nn.CrossEntropyLoss, nn.Module, optim.SGD  # noqa: B018
        x = ptcore.ones(1, requires_grad=True)
        (x * 2).sum().backward()
    except Exception as e:  # nn/optim/autograd not there yet
        pytest.skip(f"examples/hogwild.py needs nn, optim and autograd: {e}")
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / "hogwild.py"
    spec = importlib.util.spec_from_file_location("hogwild_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    argv = sys.argv
    sys.argv = ["hogwild.py", "--procs", "2", "--epochs", "10", "--start-method", "fork"]
    try:
        acc1, accn = mod.main()
    finally:
        sys.argv = argv
    assert acc1 > 0.9
    assert accn > acc1 - 0.03


# --- strategy "file_system": named, reference-counted files in /dev/shm ---------------

@pytest.fixture
def file_system():
    mp.set_sharing_strategy("file_system")
    try:
        yield
    finally:
        mp.set_sharing_strategy("file_descriptor")


def _ptcore_files():
    return sorted(f for f in os.listdir("/dev/shm") if f.startswith("ptcore_"))


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_file_system_share_memory_names_a_file_and_holds_no_descriptor(file_system):
    gc.collect()
    files, fds = _ptcore_files(), _open_fds()
    assert mp.get_sharing_strategy() == "file_system"
    ts = [ptcore.full((3,), float(i)).share_memory_() for i in range(20)]
    assert all(t.is_shared() for t in ts)
    assert len(_ptcore_files()) == len(files) + 20
    assert _open_fds() == fds                     # no descriptor kept per storage
    assert [t.tolist() for t in ts] == [[float(i)] * 3 for i in range(20)]
    made = _shared_memory_new((2, 2))
    assert made.is_shared() and len(_ptcore_files()) == len(files) + 21
    del ts, made
    gc.collect()
    assert _ptcore_files() == files               # the last reference unlinks the file


def _shared_memory_new(shape):
    from ptcore.multiprocessing.reductions import _new_shared_tensor
    return _new_shared_tensor(shape, ptcore.float32).fill_(1)


@pytest.mark.parametrize("method", METHODS)
def test_file_system_queue_sharing_both_ways(method, file_system):
    gc.collect()
    files = _ptcore_files()
    ctx = mp.get_context(method)
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    t = ptcore.zeros(3)
    p = ctx.Process(target=H.child_add_and_reply, args=(q_in, q_out, done))
    p.start()
    try:
        q_in.put(t)
        made = q_out.get(timeout=TIMEOUT)
        assert made.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert t.untyped_storage()._shared.name in _ptcore_files()
        assert t.tolist() == [1.0, 1.0, 1.0]    # written in the child, read in the parent
        done.set()
        assert q_out.get(timeout=TIMEOUT) == "written"
        assert made.tolist() == [42.0] * 5
        done.set()
    finally:
        done.set()
        p.join(TIMEOUT)
    assert p.exitcode == 0
    del t, made
    q_in.close(); q_out.close()
    q_in.join_thread(); q_out.join_thread()
    gc.collect()
    assert _ptcore_files() == files               # every reference released


def test_file_system_round_trip_in_process_gives_same_storage(file_system):
    from multiprocessing.reduction import ForkingPickler
    gc.collect()
    files = _ptcore_files()
    t = ptcore.arange(6.).view(2, 3)
    u = pickle.loads(ForkingPickler.dumps(t[1]))
    assert u.untyped_storage() is t.untyped_storage()
    assert ptcore.equal(u, t[1]) and u.storage_offset() == 3
    del t, u
    gc.collect()
    assert _ptcore_files() == files


def test_file_system_dataloader_workers(file_system):
    gc.collect()
    files = _ptcore_files()
    from ptcore.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(ptcore.arange(40.).view(20, 2))
    out = [b for (b,) in DataLoader(ds, batch_size=4, num_workers=2,
                                    multiprocessing_context="fork")]
    assert ptcore.equal(ptcore.cat(out), ptcore.arange(40.).view(20, 2))
    del out
    gc.collect()
    assert _ptcore_files() == files


def test_file_system_killed_holder_cleaned_up_at_exit(tmp_path):
    """A process killed while holding a reference leaves the file until the
    process tree has exited; then the resource tracker unlinks it."""
    import subprocess
    import sys
    import time
    script = tmp_path / "killed.py"
    script.write_text(
        "import gc, sys\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "import ptcore, ptcore.multiprocessing as mp\n"
        "import mp_helpers as H\n"
        "if __name__ == '__main__':\n"
        "    mp.set_sharing_strategy('file_system')\n"
        "    ctx = mp.get_context('fork')\n"
        "    q_in, q_out = ctx.Queue(), ctx.Queue()\n"
        "    t = ptcore.ones(1000)\n"
        "    p = ctx.Process(target=H.child_hold_then_die, args=(q_in, q_out))\n"
        "    p.start(); q_in.put(t)\n"
        "    assert q_out.get(timeout=60) == 1000.0\n"
        "    p.join(60); assert p.exitcode == -9\n"
        "    print(t.untyped_storage()._shared.name)\n"
        "    del t; gc.collect()\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    name = r.stdout.strip()
    assert name.startswith("ptcore_")
    deadline = time.monotonic() + 30
    while name in _ptcore_files() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert name not in _ptcore_files()


def test_queue_sends_a_parameter_used_in_a_forward():
    # a forward leaves autograd bookkeeping (the gradient accumulator) on the Parameter:
    # not part of what is sent
    import ptcore.multiprocessing as pmp
    m = ptcore.nn.Linear(3, 2)
    m(ptcore.zeros(1, 3)).sum().backward()
    q = pmp.Queue()
    q.put(m.weight)
    w = q.get(timeout=60)
    assert type(w) is ptcore.nn.Parameter and w.requires_grad
    assert ptcore.equal(w.detach(), m.weight.detach())
