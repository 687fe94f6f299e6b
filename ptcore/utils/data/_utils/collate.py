"""``default_collate`` and ``default_convert`` (``torch.utils.data._utils.collate``).

In a DataLoader worker the stacked batch tensor is allocated directly in
shared memory, so sending it to the main process costs no copy.
"""
import collections
import copy
import re

import numpy as np

import ptcore
import ptcore.utils.data._utils.worker as _worker
from ptcore.multiprocessing.reductions import _new_shared_tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    """Convert NumPy arrays/scalars (inside nested containers) to tensors; keep the rest.

    The default ``collate_fn`` when automatic batching is disabled
    (``batch_size=None``).
    """
    elem_type = type(data)
    if isinstance(data, ptcore.Tensor):
        return data
    elif elem_type.__module__ == "numpy" and elem_type.__name__ != "str_" \
            and elem_type.__name__ != "string_":
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ptcore.as_tensor(data)
    elif isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    elif _is_namedtuple(data):
        return elem_type(*(default_convert(d) for d in data))
    elif isinstance(data, tuple):
        return [default_convert(d) for d in data]
    elif isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples by the type of its first element, using ``collate_fn_map``.

    ``collate_fn_map`` maps element types to functions ``fn(batch, *,
    collate_fn_map)``; containers (mappings, namedtuples, sequences) are
    collated recursively.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    elif _is_namedtuple(elem):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    elif isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


_SPARSE_LAYOUTS = tuple(getattr(ptcore, n) for n in ("sparse_coo", "sparse_csr", "sparse_csc",
                                                      "sparse_bsr", "sparse_bsc")
                        if hasattr(ptcore, n))


def _in_worker():
    return _worker._worker_info is not None


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack tensors along a new first dimension (into shared memory inside a worker)."""
    elem = batch[0]
    if elem.layout in _SPARSE_LAYOUTS:
        # (sparse tensors are Tensors: torch's collate_tensor_fn refuses them)
        raise RuntimeError("Batches of sparse tensors are not currently supported by the default "
                           "collate_fn; please provide a custom collate_fn to handle them "
                           "appropriately.")
    out = None
    if _in_worker() and elem.device.type == "cpu":
        # (as torch, which sums the elements' numel() here first: a sample
        # that is not a tensor raises its AttributeError in a worker, and
        # stack's TypeError in the main process)
        sum(b.numel() for b in batch)
        dt = elem.dtype
        for b in batch:
            if b.dtype != dt or tuple(b.shape) != tuple(elem.shape):
                dt = None
                break
        if dt is not None:
            out = _new_shared_tensor((len(batch),) + tuple(elem.shape), dt)
    return ptcore.stack(batch, 0, out=out)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    # (an array with a negative stride goes through as_tensor, which refuses it as torch's)
    if all(type(b) is np.ndarray and b.dtype == elem.dtype and b.shape == elem.shape
           and min(b.strides, default=0) >= 0 for b in batch):
        # one stacked copy straight into the batch tensor (no per-item tensors)
        dt = ptcore.from_numpy(np.empty(0, elem.dtype)).dtype
        shape = (len(batch),) + tuple(elem.shape)
        if _in_worker():
            out = _new_shared_tensor(shape, dt)
        else:
            out = ptcore.empty(shape, dtype=dt)
        np.stack(batch, out=out.numpy())
        return out
    return collate([ptcore.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return ptcore.as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return ptcore.tensor(batch, dtype=ptcore.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return ptcore.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {ptcore.Tensor: collate_tensor_fn}
default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Stack a list of samples into a batch, recursively (``torch.utils.data.default_collate``).

    Tensors are stacked along a new first dimension; NumPy arrays and
    scalars become tensors; Python floats a float64 tensor, ints an int64
    tensor (bools a bool tensor); strings and bytes are kept as a list;
    mappings, namedtuples and sequences are collated element by element
    (tuples give lists, as PyTorch).

    Examples
    --------
    >>> default_collate([(0, {"x": 1.5}), (1, {"x": 2.5})])
    [tensor([0, 1]), {'x': tensor([1.5000, 2.5000], dtype=ptcore.float64)}]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


