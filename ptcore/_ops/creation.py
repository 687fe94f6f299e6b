"""Tensor creation from data and ranges: ``tensor``, ``as_tensor``, ``asarray``,
``arange``, ``linspace``, ``logspace``, ``eye`` and the ``*_like`` family."""
import builtins
import math
import numbers
import operator
import warnings
from itertools import chain as _chain
from functools import partial

import numpy as np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._ops.kernels._nested import nested_list_tensor as _nested_list_tensor
from ptcore._ops.kernels import _linspace as _K_linspace
from ptcore._ops.kernels._linspace import fast_linspace as _fast_linspace, \
    fast_arange_int64 as _fast_arange_int64
from ptcore._scalar_args import number_param as _number_param, dtype_param as _dtype_param, \
    bool_param as _bool_param
from ptcore._dtype_utils import promote_types as _promote, _refuse_complex32, _refuse_limited, \
    _refuse_float8
from ptcore._settings import grad_state
from ptcore._warn import warn_at_caller
from ptcore._dispatch.table import entry as _op_entry
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore._dispatch.torch_function import handle_torch_function as _handle_torch_function
from ptcore._dlpack import from_dlpack as _from_dlpack
from ptcore._ops.kernels import _parallel


def _flatten_tensor_items(data, dt):
    """Replace tensors nested in lists by Python numbers (one-element only),
    read as torch reads them for ``dt`` (see :func:`_tensor_item`)."""
    if isinstance(data, _TensorBase):
        if data.numel() != 1 or data.dim() != 0:
            if data.dim() == 0 or data.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
        return _tensor_item(data, dt)
    if isinstance(data, (list, tuple)) or (not isinstance(data, np.ndarray) and _is_sequence(data)):
        return [_flatten_tensor_items(x, dt) for x in data]     # (a deque of tensors too)
    return data


def _tensor_item(t, dt):
    """A one-element tensor of a nested list as a Python number: torch reads
    it with ``__float__`` for a floating dtype, so a complex tensor gives its
    real part, or the checked conversion's error when its imaginary part is
    not zero (``tensor([tensor(1j)], dtype=float32)``)."""
    v = t.item()
    if isinstance(v, complex) and dt.is_floating_point:
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return v.real
    return v


def _check_tensor_items(data, dt):
    """torch reads each one-element tensor of a nested list as a Python number of the
    target kind: ``__index__`` for integer and bool dtypes (a floating or complex tensor is
    a TypeError there), ``__float__``/``__complex__`` otherwise, which warns once for a
    tensor that requires grad while grad mode is on."""
    as_index = not (dt.is_floating_point or dt.is_complex)
    warn = not as_index and grad_state.enabled
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, _TensorBase):
            if as_index and (x.numel() != 1 or x.dtype.is_floating_point or x.dtype.is_complex):
                raise TypeError("only integer tensors of a single element can be converted "
                                "to an index")
            if warn and x.requires_grad:
                warn_at_caller("Converting a tensor with requires_grad=True to a scalar may "
                               "lead to unexpected behavior.\nConsider using tensor.detach() "
                               "first.")
                warn = False
        elif not isinstance(x, np.ndarray) and _is_sequence(x):
            stack.extend(x)


_MAX_DIMS = 128
_PY_SCALAR = {float: 2, int: 1, bool: 0, complex: 3}
_LIST_TYPES = {list, tuple}

_SEQ_CHECK = []


def _sequence_check():
    """CPython's ``PySequence_Check`` through ctypes (loaded on first use), or None."""
    if not _SEQ_CHECK:
        try:
            import ctypes
            fn = ctypes.pythonapi.PySequence_Check
            fn.argtypes = [ctypes.py_object]
            fn.restype = ctypes.c_int
        except Exception:                           # pragma: no cover - non-CPython
            fn = None
        _SEQ_CHECK.append(fn)
    return _SEQ_CHECK[0]


def _is_sequence(x):
    """CPython's ``PySequence_Check`` (what PyTorch walks as a nested sequence)."""
    t = type(x)
    if t is list or t is tuple:
        return True
    if t in _PY_SCALAR or x is None or isinstance(x, (_TensorBase, dict, np.generic)):
        return False
    check = _sequence_check()
    if check is not None:
        return bool(check(x))
    return hasattr(x, "__getitem__") and hasattr(x, "__len__")


def _compute_sizes(data):
    sizes = []
    seq = data
    while _is_sequence(seq):
        n = len(seq)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(seq).__name__}'")
        if n == 0:
            break
        seq = seq[0]
    return sizes


def _tensor_complex_default():
    """The dtype ``tensor()`` gives a Python complex: torch's complex type of
    the default dtype (complex32 for float16; none for bfloat16)."""
    d = _C.get_default_dtype()
    if d is _C.float16:
        return _C.complex32
    if d is _C.bfloat16:
        raise RuntimeError("invalid default scalar type for complex")
    return _C._get_default_complex_dtype()


def _scalar_default(code):
    if code == 2:
        return _C.get_default_dtype()
    if code == 1:
        return _C.int64
    if code == 0:
        return _C.bool_
    return _tensor_complex_default()


def _infer_scalar_type(obj, leaves):
    """PyTorch's ``infer_scalar_type``; ``leaves`` collects the leaf types seen."""
    t = type(obj)
    if t is list or t is tuple:
        if not obj:
            return _C.get_default_dtype()
        # nested lists: one C-level pass per depth over all items of that depth
        level = obj
        while True:
            types = set(map(type, level))
            if types.issubset(_PY_SCALAR):
                leaves.update(types)
                return _scalar_default(builtins.max(map(_PY_SCALAR.__getitem__, types)))
            if not types.issubset(_LIST_TYPES):
                break
            nxt = list(_chain.from_iterable(level))
            if not nxt or 0 in map(len, level):
                break                          # empty rows: exact per-element rules
            level = nxt
        if level is not obj:
            return _infer_level(level, leaves)
        if builtins.any(y is obj for y in obj):
            raise TypeError("new(): self-referential lists are incompatible")
        return _infer_level(obj, leaves)
    code = _PY_SCALAR.get(t)
    if code is not None:
        leaves.add(t)
        return _scalar_default(code)
    if isinstance(obj, np.ndarray):
        leaves.add(np.ndarray)
        return _C._dtype_from_numpy(obj.dtype)
    if isinstance(obj, np.generic):
        leaves.add(t)
        return _C._dtype_from_numpy(obj.dtype)
    if isinstance(obj, float):
        leaves.add(float)
        return _C.get_default_dtype()
    if isinstance(obj, int) and not isinstance(obj, bool):
        leaves.add(int)
        return _C.int64
    if isinstance(obj, complex):
        leaves.add(complex)
        return _tensor_complex_default()
    if isinstance(obj, _TensorBase):
        leaves.add(_TensorBase)
        dt = obj.dtype
        leaves.add(bool if dt is _C.bool_ else complex if dt.is_complex else
                   float if dt.is_floating_point else int)
        return dt
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    if _is_sequence(obj):
        n = len(obj)
        if n == 0:
            return _C.get_default_dtype()
        res = None
        for i in range(n):
            d = _infer_scalar_type(obj[i], leaves)
            res = d if res is None else _promote(res, d)
            if res is _C.complex128:
                return res
        return res
    raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")


def _infer_level(items, leaves):
    res = None
    for x in items:
        if (type(x) is list or type(x) is tuple) and builtins.any(y is x for y in x):
            # (torch's check; it would recurse forever)
            raise TypeError("new(): self-referential lists are incompatible")
        d = _infer_scalar_type(x, leaves)
        res = d if res is None else _promote(res, d)
        if res is _C.complex128:
            return res
    return res


_INT_LIMITS = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-2 ** 15, 2 ** 15 - 1),
               "int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1),
               "uint16": (0, 2 ** 16 - 1), "uint32": (0, 2 ** 32 - 1), "uint64": (0, 2 ** 64 - 1)}


def _overflow(dt):
    # torch.tensor() names the dtype itself here (fill_ and friends name C++ types)
    return RuntimeError(f"value cannot be converted to type {dt._name} without overflow")


def _unpack_long(obj):
    v = operator.index(obj)
    if not -2 ** 63 <= v < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _store_scalar(obj, dt):
    """PyTorch's ``store_scalar``: one Python value converted (and checked) for ``dt``."""
    if isinstance(obj, _TensorBase):
        if obj.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        obj = _tensor_item(obj, dt)
    name = dt._name
    if name in _INT_LIMITS:
        lo, hi = _INT_LIMITS[name]
        if isinstance(obj, float) and name != "uint64":
            v = float(obj)
            if v != v or v < lo or v > hi:
                raise _overflow(dt)
            return int(v)
        if name == "uint64":                    # PyTorch unpacks uint64 values as unsigned
            if isinstance(obj, float) or not hasattr(obj, "__index__"):
                raise TypeError("an integer is required")
            v = operator.index(obj)
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if v > hi:
                raise OverflowError("int too big to convert")
            return v
        v = _unpack_long(obj)
        if lo == 0:
            if v > hi or (v < 0 and -v > hi):
                raise _overflow(dt)
            return v & hi
        if v < lo or v > hi:
            raise _overflow(dt)
        return v
    if dt is _C.bool_:
        if isinstance(obj, float):
            return bool(float(obj) != 0.0) if obj == obj else True
        if isinstance(obj, complex):
            return complex(obj) != 0
        return operator.index(obj) != 0
    if dt.is_complex:
        if isinstance(obj, (str, bytes)):
            raise TypeError(f"must be real number, not {type(obj).__name__}")
        try:
            return complex(obj)
        except TypeError:
            raise TypeError(f"must be real number, not {type(obj).__name__}") from None
    if isinstance(obj, (str, bytes, complex)):
        raise TypeError(f"must be real number, not {type(obj).__name__}")
    try:
        return float(obj)
    except TypeError:
        raise TypeError(f"must be real number, not {type(obj).__name__}") from None


def _recursive_store(obj, sizes, dim, dt, out):
    if dim == len(sizes):
        out.append(_store_scalar(obj, dt))
        return
    n = sizes[dim]
    if type(obj) is list or type(obj) is tuple:
        seq = obj
    else:
        try:
            seq = list(obj)
        except TypeError:
            raise TypeError("not a sequence") from None
    if len(seq) != n:
        raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(seq)})")
    for x in seq:
        _recursive_store(x, sizes, dim + 1, dt, out)


_LEAF_KIND = {bool: "b", int: "i", float: "f", complex: "c", np.float64: "f"}
_INTISH_KINDS = "iub"


def _fast_values(data, sizes, dt, leaves):
    """NumPy array of ``data`` when a vectorised conversion gives PyTorch's result, else None."""
    if _TensorBase in leaves:
        data = _flatten_tensor_items(data, dt)  # one-element tensors -> Python numbers
    try:
        arr = np.array(data)
    except (ValueError, TypeError, OverflowError):
        return None
    kind = arr.dtype.kind
    if kind not in "biufc" or arr.shape != tuple(sizes):
        return None
    leaf_kinds = set()
    for t in leaves:
        k = _LEAF_KIND.get(t)
        if k is None:
            if t is np.ndarray:
                return _check_array_values(arr, dt, kind)
            if t is _TensorBase:
                continue
            if issubclass(t, np.bool_):
                k = "b"
            elif issubclass(t, np.integer):
                k = "i"
            elif issubclass(t, np.floating):
                k = "F"                         # not a Python float: int dtypes reject it
            elif issubclass(t, np.complexfloating):
                k = "c"
            else:
                return None
        leaf_kinds.add(k)
    if leaf_kinds <= {"b", "i"} and kind not in _INTISH_KINDS:
        return None                              # Python ints beyond int64 (np.array gave float64)
    name = dt._name
    if name == "uint64" and kind != "u":
        return None                              # the per-element rules (unsigned unpacking)
    if name in _INT_LIMITS:
        if "c" in leaf_kinds or "F" in leaf_kinds:
            return None
        if "f" in leaf_kinds and "i" in leaf_kinds:
            return None                          # per-element rules differ for ints and floats
    return _check_array_values(arr, dt, kind)


def _check_array_values(arr, dt, kind):
    name = dt._name
    if name in _INT_LIMITS:
        lo, hi = _INT_LIMITS[name]
        if kind == "c":
            return None
        if kind == "f":
            if arr.size and (np.isnan(arr).any() or arr.min() < lo or arr.max() > hi):
                raise _overflow(dt)
            return arr
        if kind == "u" and name != "uint64" and arr.size and arr.max() > 2 ** 63 - 1:
            raise ValueError("Overflow when unpacking long long")
        if kind != "b" and arr.size:
            mn, mx = int(arr.min()), int(arr.max())
            if mx > hi or (mn < -hi if lo == 0 else mn < lo):
                raise _overflow(dt)
            if lo == 0 and mn < 0 and name != "uint64":
                arr = arr & hi                   # (int64 -> uint64 wraps in the copy)
        return arr
    if kind == "c" and not dt.is_complex and dt is not _C.bool_:
        raise TypeError("must be real number, not complex")
    return arr


def _data_to_numpy(data, dtype=None):
    """NumPy array for Python data plus the dtype PyTorch would infer (or ``dtype``).

    Follows PyTorch's ``internal_new_from_data``: the shape comes from the
    first elements (``compute_sizes``), the dtype from promoting every leaf
    (``infer_scalar_type``: NumPy scalars/arrays and tensors keep their dtype,
    Python numbers give int64/default float/default complex), and every value
    is converted with PyTorch's checked scalar conversion.  A vectorised NumPy
    path is used whenever it gives the same result as the per-element rules.
    """
    if isinstance(data, np.ndarray):
        dt = _C._dtype_from_numpy(data.dtype)   # an unsupported dtype is refused first
        if any(st < 0 for st in data.strides):
            # torch reads the array's memory as is (tensor_from_numpy) and refuses
            # negative strides rather than copying
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with "
                "negative strides are not currently supported. (You can probably work around "
                "this by making a copy of your array  with array.copy().) ")
        if any(st % data.itemsize for st in data.strides):
            raise ValueError("given numpy array strides not a multiple of the element byte size. "
                             "Copy the numpy array to reallocate the memory.")
        return data, (dt if dtype is None else _C._as_dtype(dtype))
    if isinstance(data, np.generic):
        arr = np.asarray(data)
        dt = _C._dtype_from_numpy(arr.dtype)
        if dtype is None or _C._as_dtype(dtype) is dt:
            return arr, dt
        # a NumPy scalar is not an array to torch: converted to another dtype with the
        # checked per-element rules (tensor(np.int64(300), dtype=uint8) is an overflow error)
        arr, dt = _data_to_numpy([data], dtype)
        return arr.reshape(()), dt
    code = _PY_SCALAR.get(type(data))
    if code is not None:                        # a Python number: checked conversion
        dt = _scalar_default(code) if dtype is None else _C._as_dtype(dtype)
        return np.array(_store_scalar(data, dt), dtype=_store_np_dtype(dt)), dt
    sizes = _compute_sizes(data)
    leaves = set()
    if dtype is None:
        dt = _infer_scalar_type(data, leaves)
    else:
        dt = _C._as_dtype(dtype)
        try:
            _infer_scalar_type(data, leaves)
        except (TypeError, RuntimeError, ValueError):
            leaves = None
    if leaves:
        if np.ndarray in leaves:
            warn_at_caller(
                "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                "consider converting the list to a single numpy.ndarray with numpy.array() "
                "before converting to a tensor.")
        if _TensorBase in leaves:
            _check_tensor_items(data, dt)
    arr = None if leaves is None else _fast_values(data, sizes, dt, leaves)
    if arr is None:
        out = []
        _recursive_store(data, sizes, 0, dt, out)
        arr = np.array(out, dtype=_store_np_dtype(dt)).reshape(sizes)
    return arr, dt


def _store_np_dtype(dt):
    """NumPy dtype holding values converted by ``_store_scalar`` for ``dt``."""
    if dt is _C.bool_:
        return np.bool_
    if dt.is_complex:
        return np.complex128
    if dt.is_floating_point:
        return np.float64
    if dt._name == "uint64":
        return np.uint64
    return np.int64


def _require_grad(t):
    """``requires_grad=True`` of a constructor (``tensor``, ``arange``, ``Parameter`` ...),
    with torch's message for an integer dtype (``Tensor.requires_grad_`` has its own)."""
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    t.requires_grad_(True)


def _from_numpy_copy(arr, dt, device, requires_grad, row_major=False):
    """A new tensor of ``dt`` holding ``arr``'s values, laid out as torch's
    preserve_format copy of the array (a transposed array gives transposed
    strides), or row-major when ``row_major`` (data that was no array: NumPy
    gives ``np.array([])`` stride 0, torch.tensor([]) has stride 1); a copy,
    so a read-only array does not warn."""
    try:
        src = _C._numpy_view(arr, False)
    except ValueError:                           # negative strides, foreign byte order
        src = _C._numpy_view(np.asarray(order="C", a=arr), False)
    out = (_C.empty(src.shape, dtype=dt) if row_major else
           _C.empty_strided(src.shape, _C._preserve_format_strides(src), dtype=dt))
    _TensorBase.copy_(out, src)                 # fresh tensor: no autograd bookkeeping needed
    out._new_version_counter()                  # a new tensor is at version 0, as torch's
    if device is not None:
        out = out.to(device)                    # (the tensor itself when device is the CPU)
    if requires_grad:
        _require_grad(out)
    return out


def _factory_args(fname, dtype, requires_grad=False, pin_memory=None, none_ok=True, out=None):
    """torch's parser checks of a Python-level factory's keywords: ``dtype`` a torch
    dtype (or None), ``requires_grad`` and ``pin_memory`` bools (or None, but for
    ``tensor()``, whose flags are plain bools), and an explicit ``dtype`` must be
    ``out``'s."""
    _dtype_param(dtype, fname)
    for name, flag in (("requires_grad", requires_grad), ("pin_memory", pin_memory)):
        if flag is not True and flag is not False and not (none_ok and flag is None):
            _bool_param(flag, fname, name)
    if dtype is not None and isinstance(out, _TensorBase) and _C._as_dtype(dtype) is not out.dtype:
        raise RuntimeError(f"dtype {_C._as_dtype(dtype)._legacy} does not match dtype of out "
                           f"parameter ({out.dtype._legacy})")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays).

    dtype is inferred as PyTorch does: bool, int64, the default float dtype,
    or the default complex dtype; NumPy arrays keep their dtype.
    """
    _factory_args("tensor", dtype, requires_grad, pin_memory, none_ok=False)
    if isinstance(data, _TensorBase):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "ptcore.tensor(sourceTensor).", UserWarning, stacklevel=2)
        out = data.detach().to(dtype=dtype, device=device, copy=True)
        if requires_grad:
            _require_grad(out)
        return out
    if hasattr(data, "__cuda_array_interface__") or (
            hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray)):
        src = _C_from_dlpack(data)
        out = src.to(dtype=dtype or src.dtype, device=device or src.device, copy=True)
        if requires_grad:
            _require_grad(out)
        return out
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if type(data) is list and device is None and not requires_grad:
        # rectangular lists of Python floats (or ints) straight into the tensor
        out = _nested_list_tensor(data, _C.get_default_dtype(),
                                  None if dtype is None else _C._as_dtype(dtype))
        if out is not None:
            return out
    arr, dt = _data_to_numpy(data, dtype)
    return _from_numpy_copy(arr, dt, device, requires_grad, not isinstance(data, np.ndarray))


def _C_from_dlpack(obj):
    return _from_dlpack(obj)


def as_tensor(data, dtype=None, device=None):
    """Convert to a tensor, sharing memory with tensors/NumPy arrays when possible."""
    _dtype_param(dtype, "as_tensor", pos=2)
    if isinstance(data, _TensorBase):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        # as PyTorch: shares memory, so unsupported layouts (negative strides,
        # non-native byte order) raise from from_numpy instead of copying
        return _C.from_numpy(data).to(dtype=dtype, device=device)
    if hasattr(type(data), "__torch_function__"):
        # a tensor-like object (a sparse tensor): its own as_tensor, as torch's override
        return _handle_torch_function(as_tensor, (data,), data, dtype=dtype, device=device)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Convert to a tensor: shares memory with tensors, NumPy arrays, DLPack
    producers and buffer-protocol objects unless a copy is required or asked."""
    _factory_args("asarray", dtype, requires_grad)
    requires_grad = bool(requires_grad)
    dt = None if dtype is None else _C._as_dtype(dtype)
    dev = None if device is None else _C._to_device(device)
    shared = None
    if isinstance(obj, _TensorBase):
        shared = obj
    elif isinstance(obj, _C.Storage) and dt is not None:
        # as torch: a storage's bytes read as ``dtype``, sharing its memory (safetensors
        # reads tensors so from a mapped file); without a dtype it is a sequence of bytes
        if obj.nbytes() % dt.itemsize:
            raise ValueError(f"asarray(): a storage of {obj.nbytes()} bytes is not a whole "
                             f"number of {dt} elements ({dt.itemsize} bytes each)")
        shared = _C._tensor_from_storage(obj, dt, [obj.nbytes() // dt.itemsize], [1], 0)
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
        # (as torch: a copy asked for takes a read-only array without its warning)
        shared = _C._numpy_view(np.asarray(obj), copy is not True)
    elif hasattr(obj, "__dlpack__"):
        shared = _C_from_dlpack(obj)
    elif isinstance(obj, (bytes, bytearray, memoryview)) or _has_buffer(obj):
        # as PyTorch: the buffer's raw bytes read as ``dtype`` (default: the default dtype)
        shared = _from_buffer(obj, dt if dt is not None else _C.get_default_dtype())
        if dt is None:
            dt = shared.dtype
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
            _require_grad(out)
        return out
    if copy is False:
        raise ValueError(f"asarray(): can't satisfy copy=False for an object of type {type(obj).__name__}")
    return tensor(obj, dtype=dt, device=dev, requires_grad=requires_grad)


def _from_buffer(obj, dt):
    """A tensor sharing the bytes of a buffer-protocol object, read as ``dt``."""
    m = memoryview(obj)
    if not m.c_contiguous:
        raise ValueError("asarray(): the buffer must be C-contiguous")
    nbytes = m.nbytes
    if nbytes == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count (-1) must not be 0")
    if nbytes % dt.itemsize:
        raise ValueError(f"buffer length ({nbytes} bytes) after offset (0 bytes) must be a multiple "
                         f"of element size ({dt.itemsize})")
    raw = np.asarray(m.cast("B") if m.ndim != 1 or m.format != "B" else m)
    if dt._np is not None:
        return _C.from_numpy(raw.view(dt._np))
    return _C.from_numpy(raw.view(np.int16)).view(dt)


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


def _pinned(t, pin_memory):
    """``t`` in page-locked host memory when ``pin_memory`` (the factories'
    ``pin_memory=``), keeping its ``requires_grad``."""
    if not pin_memory:
        return t
    return t.detach().pin_memory().requires_grad_(t.requires_grad)


def _finish(values, dt, device, requires_grad, out, fname):
    """Copy NumPy ``values`` into a new tensor (or ``out``); a new CPU tensor
    of ``values`` is taken as it is (converted when its dtype is not ``dt``)."""
    if isinstance(values, _TensorBase):
        t = values if values.dtype is dt else values.to(dtype=dt)
    else:
        t = _C.from_numpy(np.asarray(order="C", a=values))
        t = t.clone() if t.dtype is dt else t.to(dtype=dt, copy=True)
    if device is not None:
        t = t.to(device)                        # (the tensor itself when device is the CPU)
    if out is not None:
        if not isinstance(out, _TensorBase):
            raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if tuple(out.shape) != tuple(t.shape):
            out.resize_(t.shape)
        out.copy_(t)
        t = out                     # (requires_grad=True marks out, as torch)
    if requires_grad:
        _require_grad(t)
    return t


def _round_to(values, dt):
    """float64 ``values`` rounded to floating dtype ``dt`` and widened back to float64."""
    if dt is _C.float64:
        return values
    if dt is _C.bfloat16:
        return _C.from_numpy(np.ascontiguousarray(values)).to(dtype=dt).to(
            dtype=_C.float64).numpy()
    return values.astype(dt._np).astype(np.float64)


def _arange_values(start, step, n, dt):
    """The values of torch's CPU arange kernel for a floating ``dt``, bit for bit:
    a new tensor from ``_K_linspace.arange_float`` (empty: a NumPy array).

    Each thread's chunk (``parallel_for`` with a grain of 32768) runs the vectorised loop
    over whole pairs of 32-byte vectors and the scalar loop over the rest. The scalar
    element ``i`` is ``start + step * i`` in the accumulate type (double; float for
    float16/bfloat16), one fused multiply-add; a vector starts at such a value rounded to
    ``dt`` and its lane ``j`` is ``base + j * step``, fused again (ptc_arange.h). So
    arange(-1, 1, 0.2)[5] is 5.55e-17 as in torch, not 0.
    """
    if n == 0:
        return np.zeros(0)
    if dt in (_C.float16, _C.bfloat16):
        start, step = float(np.float32(start)), float(np.float32(step))
    chunk = n
    if n > 32768:
        tasks = min(_parallel._get_num_threads(), -(-n // 32768))
        chunk = -(-n // max(tasks, 1))
    return _K_linspace.arange_float(start, step, n, chunk, dt)


def _out_dtype(out, dtype):
    """The dtype a range factory computes in: with ``out=`` torch takes out's dtype,
    which an explicit ``dtype`` must equal."""
    if not isinstance(out, _TensorBase):
        return dtype
    if dtype is None:
        return out.dtype
    if _C._as_dtype(dtype) is not out.dtype:
        raise RuntimeError(f"dtype {_C._as_dtype(dtype)._legacy} does not match dtype of "
                           f"out parameter ({out.dtype._legacy})")
    return dtype


# results from this many bytes on are allocated once before their values are
# computed (in NumPy): a size no allocation can hold fails at once
_PROBE_BYTES = 1 << 30


def _check_storage_size(n, dt):
    """torch's RuntimeError for a 1-d result of ``n`` elements of ``dt`` whose
    byte size overflows int64, or that the host cannot allocate (a
    ``HostAllocationError``, a RuntimeError as torch's allocator error),
    before anything is computed (NumPy would raise its own ValueError or
    MemoryError, after building temporaries)."""
    if n * dt.itemsize > 9223372036854775807:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{n}]")
    if n * dt.itemsize >= _PROBE_BYTES:
        _C.empty(n, dtype=dt)              # (lazily mapped, never touched, dropped)


def _check_arange_acc(v, dt, role):
    """torch converts arange's start, end and step to the dtype's accumulate type first
    (``Scalar.to<accscalar_t>``, checked): int64 for the integral dtypes, float for float16
    and bfloat16 (only start and step there; double for float32/float64: any Python float
    fits)."""
    if not (dt.is_floating_point or dt.is_complex):
        if isinstance(v, float) and not math.isfinite(v) and not (role == "step"
                                                                   and math.isinf(v)):
            return          # (a non-finite end: the range check names it; a NaN step is 0)
        if not -9223372036854775808 <= v < 9223372036854775808:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
    elif dt.itemsize == 2 and role != "end" and math.isfinite(v) and abs(v) > _FLOAT32_MAX:
        raise RuntimeError("value cannot be converted to type float without overflow")


_FLOAT32_MAX = float(np.finfo(np.float32).max)


_NO_END = type("_NoEnd", (), {"__repr__": lambda self: "<end>", "__slots__": ()})()
_NO_STEP = type("_NoStep", (), {"__repr__": lambda self: "1", "__slots__": ()})()


def arange(start=0, end=_NO_END, step=_NO_STEP, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values ``start, start+step, ...`` up to (not including) ``end``."""
    if (dtype is None or dtype is _C.int64) and out is None and layout is None \
            and requires_grad is False and pin_memory is False:
        # (the fill of the CPU, or of a device registering the loop "arange_int64",
        # called as loop(start, step, n, device))
        if type(device) is str and ":" in device:
            device = _C.device(device)          # ("cuda:1": the loop of its type)
        fill = _fast_arange_int64 if device is None else \
            _loop_for("arange_int64", device, _fast_arange_int64) \
            if isinstance(device, (str, _C.device)) else None
        if fill is not None and fill is not _fast_arange_int64:
            fill = partial(fill, device=device)
        t = None if fill is None else _arange_ints(start, end, step, fill)
        if t is not None:
            return t
    _factory_args("arange", dtype, requires_grad, pin_memory)
    # torch's overloads: arange(end), arange(start, end), arange(start, end, step): a step
    # without an end, or an explicit end=None, matches none of them
    if end is _NO_END:
        if step is not _NO_STEP:
            raise TypeError("arange() received an invalid combination of arguments - got a "
                            "step without an end: arange(end) takes no step")
        start, end = 0, start
    elif end is None:
        raise TypeError("arange() received an invalid combination of arguments - got "
                        "end=None: 'end' must be a Number")
    if step is _NO_STEP:
        step = 1
    dtype = _out_dtype(out, dtype)
    if dtype is not None:
        _refuse_complex32("arange_cpu", _C._as_dtype(dtype))
        _refuse_limited("arange_cpu", _C._as_dtype(dtype))
        _refuse_float8("arange_cpu", _C._as_dtype(dtype))
        if _C._as_dtype(dtype) is _C.bool_ or _C._as_dtype(dtype).is_complex:
            raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                      f"'{_C._as_dtype(dtype)._legacy}'")
    for v in (start, end, step):
        if isinstance(v, _TensorBase) and v.dim() != 0:
            # torch's Number parameters take a 0-d tensor only
            raise TypeError(f"arange(): a Number argument must be a number or a 0-d tensor, "
                            f"got a tensor of {v.dim()} dimension(s)")
    start, end, step = _num(start, "start"), _num(end, "end"), _num(step, "step")
    for v in (start, end, step):
        if isinstance(v, complex):
            raise RuntimeError("arange: complex arguments are not supported")
    all_int = all(isinstance(v, int) for v in (start, end, step))
    if dtype is None:
        dt = _C.int64 if all_int else _C.get_default_dtype()
    else:
        dt = _C._as_dtype(dtype)
    for v, role in ((start, "start"), (end, "end"), (step, "step")):
        _check_arange_acc(v, dt, role)
    if not step > 0 and not step < 0:           # (0 or NaN; an infinite step is one element)
        raise RuntimeError("step must be nonzero")
    for v in (start, end):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    integral = not (dt.is_floating_point or dt.is_complex)
    if integral:
        # PyTorch converts start/end/step to the (int64) accumulate type first
        xstart, xend, xstep = int(start), int(end), int(step)
        if xstep == 0 and dt is _C.int64:
            # (other integral dtypes size the result in double and repeat start)
            raise ValueError("step must be nonzero")
    else:
        xstart, xend, xstep = start, end, step
    if (xstep > 0 and xend < xstart) or (xstep < 0 and xend > xstart):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if all_int or dt is _C.int64:
        sgn = 1 if xstep > 0 else -1
        n = (xend - xstart + xstep - sgn) // xstep
    else:
        n = math.ceil((float(end) - float(start)) / float(step))
    n = max(int(n), 0)
    _check_storage_size(n, dt)
    if not integral:
        values = _arange_values(float(start), float(step), n, dt)
    else:
        values = np.arange(n, dtype=np.int64) * xstep + xstart
    return _finish(values, dt, device, requires_grad, out, "arange")


_I62 = 1 << 62


def _arange_ints(start, end, step, fill):
    """``arange``'s int64 result for plain int arguments giving a short,
    nonempty range (a model's positions, ``arange(seq_len)``), without the
    general path's checks; None for any other call."""
    if end is _NO_END:
        if step is not _NO_STEP:
            return None
        start, end = 0, start
    if step is _NO_STEP:
        step = 1
    if type(start) is not int or type(end) is not int or type(step) is not int or step == 0 \
            or not (-_I62 < start < _I62 and -_I62 < end < _I62 and -_I62 < step < _I62):
        return None         # (values near int64's limits: the general path's overflow checks)
    n = (end - start + step - (1 if step > 0 else -1)) // step
    if n <= 0 or n > 16777216:
        return None         # (empty, inconsistent or longer than 128 MiB: the general path)
    return fill(start, step, n)


_NP_COMPUTE = {"float32": np.float32, "float64": np.float64, "float16": np.float32,
               "bfloat16": np.float32, "complex64": np.complex64, "complex128": np.complex128}


def _range_dtype(start, end, dtype, fname):
    is_c = isinstance(start, complex) or isinstance(end, complex)
    if dtype is None:
        return _C._get_default_complex_dtype() if is_c else _C.get_default_dtype()
    dt = _C._as_dtype(dtype)
    if is_c and not dt.is_complex:
        inferred = _C._get_default_complex_dtype()
        raise RuntimeError(f"torch.{fname}(): inferred dtype {inferred} can't be safely cast to "
                           f"passed dtype {dt._legacy}")
    if dt is _C.bool_:
        raise NotImplementedError(f"\"{fname}_cpu\" not implemented for 'Bool'")
    return dt


def _endpoint(v, dt):
    """``Scalar.to<scalar_t>()``: integral dtypes truncate (checked), floating ones round."""
    if not (dt.is_floating_point or dt.is_complex):
        return _store_scalar(v, dt)
    np_t = _NP_COMPUTE.get(dt._name)
    if dt._name in ("float32", "float16", "complex64"):
        return np_t(v) if dt._name != "float16" else np.float16(v)
    return v


# the largest finite value of each narrower floating dtype and c10's name for it in
# checked_convert's message (complex64 checks each component against float's)
_FLOAT_ENDS_LIMIT = {"float32": (_FLOAT32_MAX, "float"), "float16": (65504.0, "c10::Half"),
                     "bfloat16": (3.3895313892515355e38, "c10::BFloat16"),
                     "complex64": (_FLOAT32_MAX, "c10::complex<float>")}


def _check_float_ends(start, end, dt):
    """torch converts linspace/logspace's ends to a floating output dtype checked
    (``Scalar.to<scalar_t>``): a finite end beyond the dtype's range is a RuntimeError
    (it became inf, and the values nan)."""
    lim = _FLOAT_ENDS_LIMIT.get(dt._name)
    if lim is None:
        return
    for v in (start, end):
        for part in ((v.real, v.imag) if isinstance(v, complex) else (v,)):
            if math.isfinite(part) and abs(part) > lim[0]:
                raise RuntimeError(f"value cannot be converted to type {lim[1]} without overflow")


def _fma_int(a, i, c):
    """``a * i + c`` for a float64 scalar ``a`` and ``c`` and an integer array ``i``, rounded
    once as a fused multiply-add (torch's CPU linspace loop is compiled with FMA contraction).

    ``a`` is split so that ``a_hi * i`` is exact (|i| < 2**26); the sum ``c + a_hi * i`` is
    carried with its exact rounding error (TwoSum), to which the tiny ``a_lo * i`` is added
    before the one final rounding.
    """
    a, c = np.float64(a), np.float64(c)
    m, e = np.frexp(a)
    a_hi = np.ldexp(np.trunc(np.ldexp(m, 27)), e - 27)
    a_lo = a - a_hi
    fi = i.astype(np.float64)
    p = a_hi * fi
    s = p + c
    c_part = s - p
    err = (p - (s - c_part)) + (c - c_part)
    return s + (err + a_lo * fi)


def _lin_fused(step, start, end, steps, ftype):
    """torch's linspace element ``i``: ``start + step * i`` below ``steps // 2``, else
    ``end - step * (steps - 1 - i)``, each one fused multiply-add rounded to ``ftype``."""
    idx = np.arange(steps)
    back = steps - 1 - idx
    if ftype is np.float32:              # a float32 product with an int < 2**29 is exact in double
        lo = np.float64(step) * idx + np.float64(start)
        hi = np.float64(-step) * back + np.float64(end)
    else:
        lo, hi = _fma_int(step, idx, start), _fma_int(-step, back, end)
    return np.where(idx < steps // 2, lo, hi).astype(ftype)


def _linspace_values(start, end, steps, dt):
    """The values of torch's CPU linspace kernel, bit for bit: the step is taken in the output
    type (double for integral outputs), each element is one FMA from the nearer endpoint;
    float16/bfloat16 round after every operation as c10::Half/BFloat16 arithmetic does;
    complex outputs are computed per component (the step divided componentwise)."""
    if steps == 0:
        return np.zeros(0)
    if steps == 1:
        return np.array([start])
    ctype = _NP_COMPUTE.get(dt._name)
    if ctype is None:                       # integral output: truncated endpoints, step in double
        s, e = float(_endpoint(start, dt)), float(_endpoint(end, dt))
        return _lin_fused((e - s) / (steps - 1), s, e, steps, np.float64)
    if dt._name in ("float16", "bfloat16"):
        def r(x):                           # round float32 values to the 16-bit type and back
            return _C.from_numpy(np.array(x, dtype=np.float32)).to(dt).float().numpy()
        idx = np.arange(steps)
        s, e = r(start), r(end)
        step = r(r(e - s) / r(steps - 1))
        lo = r(s + r(step * r(idx)))
        hi = r(e - r(step * r(steps - 1 - idx)))
        return np.where(idx < steps // 2, lo, hi)
    if dt.is_complex:
        ftype = np.float32 if ctype is np.complex64 else np.float64
        s, e = ctype(start), ctype(end)
        d = e - s
        parts = [_lin_fused(ftype(getattr(d, k)) / ftype(steps - 1), getattr(s, k),
                            getattr(e, k), steps, ftype) for k in ("real", "imag")]
        return parts[0] + 1j * parts[1]
    s, e = ctype(start), ctype(end)
    return _lin_fused((e - s) / ctype(steps - 1), s, e, steps, ctype)


# linspace's fast path: Python ints and floats (ints exact in double; NaN
# and inf compare false and take the general path)
_PLAIN_ENDS = (int, float)
_EXACT_ENDS = 2.0 ** 53


def _check_0d_ends(start, end, fname):
    """torch's tensor overloads of linspace/logspace take 0-d start and end only."""
    sd = start.dim() if isinstance(start, _TensorBase) else 0
    ed = end.dim() if isinstance(end, _TensorBase) else 0
    if sd or ed:
        got = f"start with {sd} dimension(s)" if sd else \
            f"start with {sd} dimension(s) and end with {ed} dimension(s)"
        raise RuntimeError(f"{fname} only supports 0-dimensional start and end tensors, "
                           f"but got {got}.")


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if out is None and layout is None and device is None and requires_grad is False \
            and pin_memory is False and type(steps) is int and 2 <= steps <= 9223372036854775807 \
            and type(start) in _PLAIN_ENDS and type(end) in _PLAIN_ENDS \
            and -_EXACT_ENDS <= start <= _EXACT_ENDS and -_EXACT_ENDS <= end <= _EXACT_ENDS:
        # plain numbers into a new float32/float64 tensor: every check below
        # passes, one kernel writes the values
        dt = _C.get_default_dtype() if dtype is None else dtype
        if dt is _C.float32 or dt is _C.float64:
            _check_storage_size(steps, dt)
            return _fast_linspace(start, end, steps, dt)
    _factory_args("linspace", dtype, requires_grad, pin_memory)
    dtype = _out_dtype(out, dtype)
    if dtype is not None:
        _refuse_complex32("linspace_cpu", _C._as_dtype(dtype))
        _refuse_limited("linspace_cpu", _C._as_dtype(dtype))
        _refuse_float8("linspace_cpu", _C._as_dtype(dtype))
    _check_0d_ends(start, end, "linspace")
    start, end = _num(start, "start"), _num(end, "end")
    if isinstance(steps, _TensorBase) and steps.dim() != 0:
        raise TypeError(f"linspace(): argument 'steps' must be int, not a tensor of {steps.dim()} "
                        "dimension(s)")
    steps = _num(steps, "steps")
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if not -9223372036854775808 <= steps <= 9223372036854775807:
        raise _C.IntArgOverflowError(f"linspace(): argument 'steps' failed to unpack the object "
                                     "at pos 3 with error \"Overflow when unpacking long long\"")
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    dt = _range_dtype(start, end, dtype, "linspace")
    _check_storage_size(steps, dt)
    if steps >= 2:
        _check_float_ends(start, end, dt)
    t = _finish(_linspace_values(start, end, steps, dt), dt, device, requires_grad, out, "linspace")
    return _pinned(t, pin_memory)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``base ** linspace(start, end, steps)``."""
    _factory_args("logspace", dtype, requires_grad, pin_memory)
    dtype = _out_dtype(out, dtype)
    if dtype is not None:
        _refuse_complex32("logspace_cpu", _C._as_dtype(dtype))
        _refuse_limited("logspace_cpu", _C._as_dtype(dtype))
        _refuse_float8("logspace_cpu", _C._as_dtype(dtype))
    _check_0d_ends(start, end, "logspace")
    start, end = _num(start, "start"), _num(end, "end")
    if isinstance(steps, _TensorBase) and steps.dim() != 0:
        raise TypeError(f"logspace(): argument 'steps' must be int, not a tensor of {steps.dim()} "
                        "dimension(s)")
    steps = _num(steps, "steps")
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"logspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if not -9223372036854775808 <= steps <= 9223372036854775807:
        raise _C.IntArgOverflowError(f"logspace(): argument 'steps' failed to unpack the object "
                                     "at pos 3 with error \"Overflow when unpacking long long\"")
    if steps < 0:
        raise RuntimeError("logspace(): number of steps must be non-negative")
    dt = _range_dtype(start, end, dtype, "logspace")
    _check_storage_size(steps, dt)
    base = float(_num(base, "base"))
    if steps == 0:
        return _pinned(_finish(np.zeros(0), dt, device, requires_grad, out, "logspace"), pin_memory)
    if steps >= 2:
        _check_float_ends(start, end, dt)
    s, e = _endpoint(start, dt), _endpoint(end, dt)
    if dt.is_complex:
        s, e = complex(s), complex(e)
        if steps == 1:
            values = np.array([base ** s])
        else:
            idx = np.arange(steps, dtype=np.float64)
            step = (e - s) / (steps - 1)
            expo = np.where(idx < steps // 2, s + step * idx, e - step * (steps - 1 - idx))
            values = np.power(complex(base), expo)
        return _pinned(_finish(values, dt, device, requires_grad, out, "logspace"), pin_memory)
    if steps == 1:
        values = np.array([base ** float(s)])
    else:
        halfway = steps // 2
        idx = np.arange(steps, dtype=np.float64)
        if dt is _C.bfloat16:
            # (NumPy has no bfloat16: the endpoints and their difference rounded here)
            s, e = (_round_to(np.array([float(v)]), dt)[0] for v in (s, e))
            diff = _round_to(np.array([float(np.float32(e) - np.float32(s))]), dt)[0]
        else:
            diff = float(e - s)
        step = float(diff) / (steps - 1)       # the difference is taken in the output dtype
        expo = np.where(idx < halfway, float(s) + step * idx, float(e) - step * (steps - 1 - idx))
        if dt is _C.float64:
            # libm's pow per element as torch's kernel (NumPy's vectorised
            # power differs from it by an ulp in about a tenth of the values)
            values = _op_entry("pow")(base, _C.from_numpy(expo)).numpy()
        else:
            values = np.power(base, expo)
        if dt in (_C.float16, _C.bfloat16):
            values = values.astype(np.float32)     # torch stores double -> float -> dt
    return _pinned(_finish(values, dt, device, requires_grad, out, "logspace"), pin_memory)


def _int_arg(v, fname, name, pos):
    # torch's int parser takes a tensor of one element only (else its TypeError)
    x = v if isinstance(v, _TensorBase) and v.numel() != 1 else _num(v, name)
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(v).__name__}")
    return x


_NO_M = type("_NoM", (), {"__repr__": lambda self: "<n>", "__slots__": ()})()


def eye(n, m=_NO_M, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    """2-D tensor with ones on the diagonal (``m`` columns; ``n`` when not given)."""
    if m is None:                        # (torch's eye(n, m) takes no None for m)
        raise TypeError("eye(): argument 'm' (position 2) must be int, not NoneType")
    m = None if m is _NO_M else m
    _factory_args("eye", dtype, requires_grad, pin_memory, out=out)
    if dtype is not None:
        _refuse_complex32("eye", _C._as_dtype(dtype))
        _refuse_limited("eye", _C._as_dtype(dtype))
    n = _int_arg(n, "eye", "n", 1)
    m = n if m is None else _int_arg(m, "eye", "m", 2)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    t = _C.zeros(n, m, dtype=dtype, device=device)
    if n and m:
        t.diagonal().fill_(1)
        t._new_version_counter()                # (version 0, as torch's eye)
    if out is not None:
        if tuple(out.shape) != (n, m):
            out.resize_((n, m))
        t = out.copy_(t)
    if requires_grad:
        _require_grad(t)
    return _pinned(t, pin_memory)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               pin_memory=False, memory_format=None):
    """Uninitialised tensor shaped like ``input`` (same dtype/device by default)."""
    _factory_args("empty_like", dtype, requires_grad, pin_memory)
    t = _C._like(input, dtype, device, requires_grad, 0, None, memory_format)
    return _pinned(t, pin_memory)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               pin_memory=False, memory_format=None):
    """Zeros shaped like ``input``."""
    _factory_args("zeros_like", dtype, requires_grad, pin_memory)
    t = _C._like(input, dtype, device, requires_grad, 1, None, memory_format)
    return _pinned(t, pin_memory)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    """Ones shaped like ``input``."""
    _factory_args("ones_like", dtype, requires_grad, pin_memory)
    t = _C._like(input, dtype, device, requires_grad, 2, 1, memory_format)
    return _pinned(t, pin_memory)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    """``fill_value`` everywhere, shaped like ``input``."""
    fill_value = _number_param(fill_value, "full_like", "fill_value", 2)
    _factory_args("full_like", dtype, requires_grad, pin_memory)
    t = _C._like(input, dtype, device, requires_grad, 2, fill_value, memory_format)
    return _pinned(t, pin_memory)


__all__ = ["tensor", "as_tensor", "asarray", "arange", "linspace", "logspace", "eye", "empty_like",
           "zeros_like", "ones_like", "full_like"]

# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "creation")
del _bind_module
# assigning a nested sequence into a tensor (t[i] = [...]) builds it with ptcore.tensor
_C._set_module_hooks(tensor_from_data=tensor)
