"""DataLoader worker processes (``torch.utils.data._utils.worker``)."""
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import ptcore
import ptcore.multiprocessing
import ptcore.utils.data._utils.fetch as _fetch
from ptcore.utils.data._utils._constants import MP_STATUS_CHECK_INTERVAL, HAS_NUMPY

__all__ = ["WorkerInfo", "get_worker_info"]


class ManagerWatchdog:
    """Tells a worker whether the process that started it is still alive."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


_worker_info = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What a worker knows about itself (``torch.utils.data.WorkerInfo``, a frozen dataclass).

    Attributes
    ----------
    id : int
        This worker's id, 0 .. ``num_workers - 1``.
    num_workers : int
        The number of workers.
    seed : int
        The seed this worker's ``random``, ``ptcore`` (and NumPy) generators
        were seeded with.
    dataset : Dataset
        This worker's copy of the dataset.
    rng : object or None
        Per-worker generator state of thread workers; None in a worker process.
    worker_method : str
        ``"multiprocessing"``.
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """Information about the current DataLoader worker, or None in the main process.

    Returns
    -------
    WorkerInfo or None
        ``id`` (0 .. num_workers - 1), ``num_workers``, ``seed`` (this
        worker's base seed) and ``dataset`` (this worker's copy).
    """
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: object = None


def _generate_state(base_seed, worker_id):
    """NumPy seed state for a worker (the SeedSequence-style hash PyTorch uses)."""
    INIT_A = 0x43B0D7E5
    MULT_A = 0x931E8875
    INIT_B = 0x8B51F9DD
    MULT_B = 0x58F38DED
    MIX_MULT_L = 0xCA01F9DD
    MIX_MULT_R = 0x4973F715
    XSHIFT = 4 * 8 // 2
    MASK32 = 0xFFFFFFFF

    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value):
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        value = (value ^ (value >> XSHIFT)) & MASK32
        return value

    def mix(x, y):
        result_x = (MIX_MULT_L * x) & MASK32
        result_y = (MIX_MULT_R * y) & MASK32
        result = (result_x - result_y) & MASK32
        result = (result ^ (result >> XSHIFT)) & MASK32
        return result

    for i in range(len(pool)):
        pool[i] = hash(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = pool[i_dst]
        data_val = (data_val ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        data_val = (data_val ^ (data_val >> XSHIFT)) & MASK32
        state.append(data_val)
    return state


class ExceptionWrapper:
    """An exception with its formatted traceback, re-raised in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """str whose repr is itself (KeyError messages print with real line breaks)."""

    def __repr__(self):
        return self


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event,
                 auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id,
                 num_workers, persistent_workers, shared_seed):
    """The body of a DataLoader worker: fetch index lists, put (idx, batch) results."""
    global _worker_info
    import signal
    # Ctrl-C reaches the whole process group: the main process handles it and
    # shuts the workers down, so workers ignore SIGINT.
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        pass
    # Batches leave through file descriptors served by this process's
    # resource_sharer thread: let it take the GIL promptly while the main
    # thread computes (the default 5 ms switch interval stalls every fetch).
    sys.setswitchinterval(1e-4)
    # named as torch's workers (what ps and top show)
    ptcore.multiprocessing._set_thread_name("pt_data_worker")
    # one kernel thread per worker, as torch: the workers run side by side
    ptcore.set_num_threads(1)
    seed = base_seed + worker_id
    random.seed(seed)
    ptcore.manual_seed(seed)
    if HAS_NUMPY:
        import numpy as np
        np.random.seed(_generate_state(base_seed, worker_id))

    try:
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _fetch._DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                         collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if dataset_kind == _fetch._DatasetKind.Iterable:
                    # a fresh iterator over the dataset for the new epoch
                    fetcher = _fetch._DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                                 collate_fn, drop_last)
                continue
            elif r is None:
                # the main process asks the worker to exit
                break
            elif done_event.is_set() or iteration_end:
                continue
            idx, index = r
            data = None
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _fetch._DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
