"""Tensor creation from data and ranges: ``tensor``, ``as_tensor``, ``asarray``,
``arange``, ``linspace``, ``logspace``, ``eye`` and the ``*_like`` family."""
import math
import numbers
import warnings

import numpy as np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase


def _flatten_tensor_items(data):
    """Replace tensors nested in lists by Python numbers (one-element only)."""
    if isinstance(data, _TensorBase):
        if data.numel() != 1 or data.dim() != 0:
            if data.dim() == 0 or data.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_flatten_tensor_items(x) for x in data]
    return data


def _contains_tensor(data, depth=0):
    if isinstance(data, _TensorBase):
        return True
    if isinstance(data, (list, tuple)) and data and depth < 64:
        return _contains_tensor(data[0], depth + 1)
    return False


def _data_to_numpy(data):
    """NumPy array for Python data plus the dtype PyTorch would infer."""
    if isinstance(data, np.ndarray):
        return data, _C._dtype_from_numpy(data.dtype)
    if isinstance(data, np.generic):
        arr = np.asarray(data)
        return arr, _C._dtype_from_numpy(arr.dtype)
    if isinstance(data, str) or isinstance(data, bytes):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (list, tuple)) and _contains_tensor(data):
        data = _flatten_tensor_items(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal lengths: {e}") from None
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long") from None
    kind = arr.dtype.kind
    if kind == "b":
        return arr, _C.bool_
    if kind in "iu":
        if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise RuntimeError("Overflow when unpacking long")
        return arr, _C.int64
    if kind == "f":
        return arr, _C.get_default_dtype()
    if kind == "c":
        return arr, _C._get_default_complex_dtype()
    if kind == "O":
        flat = arr.ravel()
        for x in flat:
            if isinstance(x, int) and not isinstance(x, bool):
                raise RuntimeError("Overflow when unpacking long")
            if isinstance(x, (str, bytes)):
                raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        raise TypeError(f"Could not infer dtype of {type(flat[0]).__name__}" if flat.size else
                        "Could not infer dtype")
    raise TypeError(f"Could not infer dtype of {arr.dtype}")


def _from_numpy_copy(arr, dt, device, requires_grad):
    if arr.dtype == np.uint64:
        arr = arr.astype(np.int64)
    src = _C.from_numpy(np.asarray(order="C", a=arr))
    out = _C.empty(arr.shape, dtype=dt)
    out.copy_(src)
    if device is not None and _C._to_device(device).type != "cpu":
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays).

    dtype is inferred as PyTorch does: bool, int64, the default float dtype,
    or the default complex dtype; NumPy arrays keep their dtype.
    """
    if isinstance(data, _TensorBase):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "ptcore.tensor(sourceTensor).", UserWarning, stacklevel=2)
        out = data.detach().to(dtype=dtype, device=device, copy=True)
        if requires_grad:
            out.requires_grad_(True)
        return out
    if hasattr(data, "__cuda_array_interface__") or (
            hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray)):
        src = _C_from_dlpack(data)
        out = src.to(dtype=dtype or src.dtype, device=device or src.device, copy=True)
        if requires_grad:
            out.requires_grad_(True)
        return out
    arr, inferred = _data_to_numpy(data)
    dt = inferred if dtype is None else _C._as_dtype(dtype)
    return _from_numpy_copy(arr, dt, device, requires_grad)


def _C_from_dlpack(obj):
    from ptcore._dlpack import from_dlpack
    return from_dlpack(obj)


def as_tensor(data, dtype=None, device=None):
    """Convert to a tensor, sharing memory with tensors/NumPy arrays when possible."""
    if isinstance(data, _TensorBase):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        try:
            _C._dtype_from_numpy(data.dtype)
            ok = data.dtype.isnative and all(s >= 0 for s in data.strides)
        except TypeError:
            ok = False
        if ok:
            t = _C.from_numpy(data)
            return t.to(dtype=dtype, device=device)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Convert to a tensor: shares memory with tensors, NumPy arrays, DLPack
    producers and buffer-protocol objects unless a copy is required or asked."""
    dt = None if dtype is None else _C._as_dtype(dtype)
    dev = None if device is None else _C._to_device(device)
    shared = None
    if isinstance(obj, _TensorBase):
        shared = obj
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
        a = np.asarray(obj)
        try:
            _C._dtype_from_numpy(a.dtype)
            if a.dtype.isnative and all(s >= 0 for s in a.strides):
                shared = _C.from_numpy(a)
        except TypeError:
            if copy is False:
                raise
    elif hasattr(obj, "__dlpack__"):
        shared = _C_from_dlpack(obj)
    elif isinstance(obj, (bytes, bytearray, memoryview)) or _has_buffer(obj):
        a = np.asarray(memoryview(obj))
        if a.dtype == np.dtype("V1") or a.dtype.kind == "V":
            a = a.view(np.uint8)
        shared = _C.from_numpy(a)
    if shared is not None:
        needs_copy = (dt is not None and dt is not shared.dtype) or (
            dev is not None and dev != shared.device)
        if copy is False and needs_copy:
            raise ValueError(
                f"asarray(): can't satisfy copy=False: converting {shared.dtype} on {shared.device} "
                f"to {dt or shared.dtype} on {dev or shared.device} needs a copy")
        out = shared.to(dtype=dt, device=dev, copy=bool(copy))
        if requires_grad:
            if out is obj:
                out = out.detach()
            out.requires_grad_(True)
        return out
    if copy is False:
        raise ValueError(f"asarray(): can't satisfy copy=False for an object of type {type(obj).__name__}")
    return tensor(obj, dtype=dt, device=dev, requires_grad=requires_grad)


def _has_buffer(obj):
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def _num(x, name):
    if isinstance(x, _TensorBase):
        if x.numel() != 1:
            raise RuntimeError(f"{name} must be a number or a 1-element tensor")
        return x.item()
    if isinstance(x, (numbers.Number, np.generic)):
        return x.item() if isinstance(x, np.generic) else x
    raise TypeError(f"{name} must be a number, got {type(x).__name__}")


def _finish(values, dt, device, requires_grad, out, fname):
    """Copy NumPy ``values`` into a new tensor (or ``out``)."""
    t = _C.from_numpy(np.asarray(order="C", a=values)).to(dtype=dt, copy=True)
    if device is not None and _C._to_device(device).type != "cpu":
        t = t.to(device)
    if out is not None:
        if not isinstance(out, _TensorBase):
            raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if tuple(out.shape) != tuple(t.shape):
            out.resize_(t.shape)
        out.copy_(t)
        return out
    if requires_grad:
        t.requires_grad_(True)
    return t


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values ``start, start+step, ...`` up to (not including) ``end``."""
    if end is None:
        start, end = 0, start
    start, end, step = _num(start, "start"), _num(end, "end"), _num(step, "step")
    for v in (start, end, step):
        if isinstance(v, complex):
            raise RuntimeError("arange: complex arguments are not supported")
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    all_int = all(isinstance(v, int) for v in (start, end, step))
    if dtype is None:
        dt = _C.int64 if all_int else _C.get_default_dtype()
    else:
        dt = _C._as_dtype(dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if all_int:
        n = (end - start + step - (1 if step > 0 else -1)) // step
    else:
        n = math.ceil((float(end) - float(start)) / float(step))
    n = max(int(n), 0)
    if dt.is_floating_point or dt.is_complex:
        idx = np.arange(n, dtype=np.float64)
        values = float(start) + idx * float(step)
    else:
        values = np.arange(n, dtype=np.int64) * int(step) + int(start)
    return _finish(values, dt, device, requires_grad, out, "arange")


_NP_COMPUTE = {"float32": np.float32, "float64": np.float64, "float16": np.float32,
               "bfloat16": np.float32, "complex64": np.complex64, "complex128": np.complex128}


def _linspace_values(start, end, steps, dt):
    if steps == 0:
        return np.zeros(0)
    if steps == 1:
        return np.array([start])
    ctype = _NP_COMPUTE.get(dt._name)
    halfway = steps // 2
    idx = np.arange(steps)
    if ctype is None:                       # integral output: step in double
        step = (float(end) - float(start)) / (steps - 1)
        lo = float(start) + step * idx
        hi = float(end) - step * (steps - idx - 1)
        return np.where(idx < halfway, lo, hi)
    s, e = ctype(start), ctype(end)
    step = (e - s) / ctype(steps - 1)
    idx_c = idx.astype(ctype)
    lo = s + step * idx_c
    hi = e - step * (ctype(steps - 1) - idx_c)
    return np.where(idx < halfway, lo, hi).astype(ctype)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    start, end = _num(start, "start"), _num(end, "end")
    steps = _num(steps, "steps")
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    if dtype is None:
        if isinstance(start, complex) or isinstance(end, complex):
            dt = _C._get_default_complex_dtype()
        else:
            dt = _C.get_default_dtype()
    else:
        dt = _C._as_dtype(dtype)
    return _finish(_linspace_values(start, end, steps, dt), dt, device, requires_grad, out, "linspace")


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    start, end = _num(start, "start"), _num(end, "end")
    steps = _num(steps, "steps")
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"logspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("logspace(): number of steps must be non-negative")
    dt = _C.get_default_dtype() if dtype is None else _C._as_dtype(dtype)
    if steps == 0:
        values = np.zeros(0)
    elif steps == 1:
        values = np.array([float(base) ** start])
    else:
        halfway = steps // 2
        idx = np.arange(steps, dtype=np.float64)
        step = (float(end) - float(start)) / (steps - 1)
        expo = np.where(idx < halfway, float(start) + step * idx, float(end) - step * (steps - 1 - idx))
        values = np.power(float(base), expo)
    return _finish(values, dt, device, requires_grad, out, "logspace")


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """2-D tensor with ones on the diagonal."""
    n = int(_num(n, "n"))
    m = n if m is None else int(_num(m, "m"))
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    t = _C.zeros(n, m, dtype=dtype, device=device)
    if n and m:
        t.diagonal().fill_(1)
    if out is not None:
        if tuple(out.shape) != (n, m):
            out.resize_((n, m))
        return out.copy_(t)
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """Uninitialised tensor shaped like ``input`` (same dtype/device by default)."""
    return _C._like(input, dtype, device, requires_grad, 0, None, memory_format)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """Zeros shaped like ``input``."""
    return _C._like(input, dtype, device, requires_grad, 1, None, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """Ones shaped like ``input``."""
    return _C._like(input, dtype, device, requires_grad, 2, 1, memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """``fill_value`` everywhere, shaped like ``input``."""
    return _C._like(input, dtype, device, requires_grad, 2, fill_value, memory_format)
