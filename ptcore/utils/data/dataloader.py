"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

A port of ``torch.utils.data.dataloader``.  With ``num_workers > 0`` the
workers put batches on a ``ptcore.multiprocessing`` queue: batch tensors are
collated straight into shared memory and only a file descriptor crosses the
process boundary.
"""
import itertools
import multiprocessing as python_multiprocessing
import os
import pickle
import queue
import signal
import warnings
from typing import Any, Callable, Generic, List, TypeVar

import ptcore
import ptcore.distributed as dist
import ptcore.multiprocessing as multiprocessing
import ptcore.utils.data._utils as _utils
from ptcore.utils.data._utils.fetch import _DatasetKind
from ptcore.utils.data._utils.worker import ExceptionWrapper, get_worker_info  # noqa: F401
from ptcore.utils.data.dataset import IterableDataset
from ptcore.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, T_co, _random_int64,
)

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

# the type aliases custom loaders annotate with (torch.utils.data.dataloader's)
_T = TypeVar("_T")
_worker_init_fn_t = Callable[[int], None]
_collate_fn_t = Callable[[List[_T]], Any]

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert


class _InfiniteConstantSampler(Sampler):
    """Yields None forever: the sampler of an iterable-style dataset."""

    def __iter__(self):
        while True:
            yield None


def _get_distributed_settings():
    return 1, 0


def _share_dist_seed(generator, pg):
    """A seed drawn from ``generator``, broadcast from rank 0 over the process
    group ``pg`` so every rank gets the same (torch's helper, which custom
    DataLoaders import)."""
    seed = ptcore.tensor(_random_int64(generator))
    if dist.is_available() and isinstance(pg, dist.ProcessGroup):
        dist.broadcast(seed, src=0, group=pg)
    return seed.item()


def _sharding_worker_init_fn(worker_init_fn, world_size, rank_id, worker_id):
    if worker_init_fn is not None:
        worker_init_fn(worker_id)


class DataLoader(Generic[T_co]):
    """Combine a dataset and a sampler into an iterable over batches (``torch.utils.data.DataLoader``).

    Parameters
    ----------
    dataset : Dataset or IterableDataset
    batch_size : int or None
        Samples per batch (None: no automatic batching). Default 1.
    shuffle : bool
        Reshuffle every epoch (map-style datasets only).
    sampler : Sampler or Iterable, optional
        Index order (exclusive with ``shuffle``).
    batch_sampler : Sampler or Iterable, optional
        Yields lists of indices (exclusive with batch_size, shuffle, sampler, drop_last).
    num_workers : int
        Worker processes (0: load in the main process).
    collate_fn : callable, optional
        Merges a list of samples (default :func:`default_collate`, or
        :func:`default_convert` without batching).
    pin_memory : bool
        Copy batches into pinned memory (needs an accelerator).
    drop_last : bool
        Drop the last incomplete batch.
    timeout : float
        Seconds to wait for a batch from the workers (0: forever); the
        workers' liveness is checked meanwhile, so a dead worker raises.
    worker_init_fn : callable, optional
        Called as ``worker_init_fn(worker_id)`` in each worker after seeding.
    multiprocessing_context : str or context, optional
        ``"fork"``, ``"spawn"``, ``"forkserver"`` or a context object.
    generator : ptcore.Generator, optional
        Source of the sampler's randomness and of the workers' base seed.
    prefetch_factor : int, optional
        Batches loaded in advance per worker (default 2 with workers).
    persistent_workers : bool
        Keep the workers alive between epochs.
    in_order : bool
        Return batches in sampler order (False: as they are ready).
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}")
            elif sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}")
            elif batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive "
                                 "with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching "
                                 "and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = _utils.collate.default_collate if self._auto_collation \
                else _utils.collate.default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method "
                            f"in {valid_start_methods!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}")
                    multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}")
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        if self._auto_collation:
            return self.batch_sampler
        return self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                from math import ceil
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warn when ``num_workers`` exceeds the CPUs this process may use."""
        if not self.num_workers or self.num_workers == 0:
            return
        try:
            max_num_worker_suggest = len(os.sched_getaffinity(0))
        except Exception:
            max_num_worker_suggest = os.cpu_count()
        if max_num_worker_suggest is None:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                "Our suggested max number of worker in current system is unknown.", stacklevel=2)
        elif self.num_workers > max_num_worker_suggest:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"Our suggested max number of worker in current system is {max_num_worker_suggest}, "
                "which is smaller than what this DataLoader is going to create. Please be aware "
                "that excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._shared_seed = None
        self._pg = None
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._world_size, self._rank = _get_distributed_settings()
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device, ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
        self._pin_memory = loader.pin_memory and _accelerator_available()
        if loader.pin_memory and not self._pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.", stacklevel=3)
        self._pin_memory_device = None  # the current accelerator, as torch
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _random_int64(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()  # type: ignore[call-arg]
        data = self._next_data()
        self._num_yielded += 1
        if self._dataset_kind == _DatasetKind.Iterable and \
                self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            warn_msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                        f"{self._IterableDataset_len_called} (when accessing len(dataloader)), "
                        f"but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                warn_msg += ("For multiprocessing data-loading, this could be caused by not "
                             "properly configuring the IterableDataset replica at each worker.")
            warnings.warn(warn_msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


def _accelerator_available():
    try:
        return bool(ptcore.cuda.is_available())
    except Exception:
        return False


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        data = self._dataset_fetcher.fetch(index)  # may raise StopIteration
        if self._pin_memory:
            data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)
        return data


def _worker_died_message(w):
    code = w.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or signal.Signals(-code).name
        except (ValueError, AttributeError):
            name = f"signal {-code}"
        return f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
    return f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. "


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterate with worker processes: per-worker index queues, one shared result queue.

    Up to ``prefetch_factor * num_workers`` index lists are outstanding;
    results are reordered by send index (unless ``in_order=False``).  An
    exception in a worker is re-raised here with its traceback; a worker
    that dies raises a RuntimeError naming it within about a second
    (``MP_STATUS_CHECK_INTERVAL``) or ``timeout``.
    """

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")

        if loader.multiprocessing_context is None:
            multiprocessing_context = multiprocessing
        else:
            multiprocessing_context = loader.multiprocessing_context

        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = multiprocessing_context.Queue()
        self._worker_pids_set = False
        self._shutdown = False
        self._workers_done_event = multiprocessing_context.Event()

        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = multiprocessing_context.Queue()
            index_queue.cancel_join_thread()
            w = multiprocessing_context.Process(
                target=_utils.worker._worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue,
                      self._worker_result_queue, self._workers_done_event,
                      self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, self._worker_init_fn, i, self._num_workers,
                      self._persistent_workers, self._shared_seed))
            w.daemon = True
            try:
                w.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn(
                    "Got pickle error when attempting to start a worker Process. This might be "
                    "because the worker Process arguments are not picklable: the 'spawn' and "
                    "'forkserver' start methods pickle the dataset, collate_fn and "
                    "worker_init_fn. You can also try multiprocessing.set_start_method('fork').",
                    stacklevel=3)
                raise
            self._index_queues.append(index_queue)
            self._workers.append(w)

        self._data_queue = self._worker_result_queue
        self._worker_pids_set = True
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True for _ in range(self._num_workers)]
        # tasks handed to each worker and not yet returned to the caller
        self._workers_num_tasks = [0 for _ in range(self._num_workers)]
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for idx in range(self._num_workers):
                self._index_queues[idx].put(_utils.worker._ResumeIteration(self._shared_seed))
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, return_data = self._get_data()
                if isinstance(return_idx, _utils.worker._ResumeIteration):
                    assert return_data is None
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _check_workers(self):
        if self._shutdown:
            return
        failed = [w for i, w in enumerate(self._workers)
                  if self._workers_status[i] and not w.is_alive()]
        if failed:
            msg = "".join(_worker_died_message(w) for w in failed)
            pids_str = ", ".join(str(w.pid) for w in failed)
            self._shutdown_workers()
            raise RuntimeError(f"{msg}DataLoader worker (pid(s) {pids_str}) exited unexpectedly")

    def _wait_for_a_dead_worker(self, limit):
        import time
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if any(self._workers_status[i] and not w.is_alive()
                   for i, w in enumerate(self._workers)):
                return
            time.sleep(0.05)

    def _try_get_data(self, timeout=_utils.MP_STATUS_CHECK_INTERVAL):
        try:
            data = self._data_queue.get(timeout=timeout)
            return (True, data)
        except queue.Empty:
            self._check_workers()
            return (False, None)
        except (OSError, EOFError) as e:
            # e.g. a batch whose sender died before its file descriptor was
            # fetched.  The sender's sockets close before the kernel marks it
            # exited, so give a dying worker a moment to become reapable and
            # report it by name rather than as a bare receive error.
            self._wait_for_a_dead_worker(5.0)
            self._check_workers()
            raise RuntimeError(f"DataLoader failed to receive a batch from a worker: {e}") from e

    def _get_data(self):
        import time
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                success, data = self._try_get_data(min(left, _utils.MP_STATUS_CHECK_INTERVAL))
                if success:
                    return data
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks of workers that reported the end of an iterable dataset
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx, None)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable:
                if isinstance(data, _utils.worker._IterableDatasetStopIteration):
                    if self._persistent_workers:
                        self._workers_status[data.worker_id] = False
                    else:
                        self._mark_worker_as_unavailable(data.worker_id)
                    self._try_put_index()
                    continue

            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                # in order: round robin; out of order: the next worker with
                # room, so a slow worker does not hold up the others
                if self._in_order or self._workers_num_tasks[worker_queue_idx] < \
                        max_tasks // sum(self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        assert self._workers_status[worker_id] or (self._persistent_workers and shutdown)
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if _utils is None or _utils.worker is None:
            return
        if not self._shutdown:
            self._shutdown = True
            try:
                self._workers_done_event.set()
                for worker_id in range(len(self._workers)):
                    if self._persistent_workers or self._workers_status[worker_id]:
                        try:
                            self._mark_worker_as_unavailable(worker_id, shutdown=True)
                        except Exception:
                            pass
                for w in self._workers:
                    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
                for q in self._index_queues:
                    q.cancel_join_thread()
                    q.close()
            finally:
                for w in self._workers:
                    if w.is_alive():
                        w.terminate()
                for w in self._workers:
                    w.join(timeout=5.0)
                self._worker_result_queue.cancel_join_thread()
                self._worker_result_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass

