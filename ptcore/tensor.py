"""``ptcore.Tensor``: the Python subclass of the Cython tensor core.

Metadata, views and indexing live in ``_tensor._TensorBase`` (C speed);
this class adds the autograd-facing attributes, conversions (``to``, ``type``,
``double`` ...), printing, and the legacy constructor.
"""
import sys
import numbers as _numbers
import sys as _sys
import operator as _operator

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import runtime as _device_runtime
from ptcore._warn import warn_once as _warn_once
from ptcore._settings import grad_state as _grad_state
from ptcore._scalar_args import (dtype_param as _dtype_param, bool_param as _bool_param,
                                 int_list_item as _int_list_item)
from ptcore import _settings, _shared_memory, _tensor_str
from ptcore._dispatch import torch_function as _torch_function
from ptcore._dispatch import python_dispatch as _python_dispatch
from ptcore._ops import random as _random_api
from ptcore._ops.creation import tensor as _tensor_fn
from ptcore._ops._memory_format import (_suggest_memory_format, _output_memory_format,  # noqa: F401
                                        _in_memory_format)


def _wrapper_strides(sizes):
    """Contiguous strides of ``sizes`` (``_make_wrapper_subclass`` without strides: torch's
    ignore its ``memory_format``)."""
    strides, step = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = step
        step *= max(sizes[d], 1)
    return strides


def _is_dtype_arg(a):
    """A ScalarType for torch's parser: a dtype or the Python type bool, int, float or complex."""
    return isinstance(a, _C.dtype) or a is float or a is int or a is bool or a is complex


def _parse_to(args, kwargs):
    """Parse ``to(...)``'s overloads -> (device, dtype, non_blocking, copy, memory_format)."""
    given = {k for k in ("device", "dtype") if k in kwargs}
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    args = list(args)
    positional_device = args and (args[0] is None or isinstance(args[0], (str, _C.device)) or
                                  (isinstance(args[0], int) and not isinstance(args[0], bool)))
    if args and ((isinstance(args[0], _TensorBase) or _is_dtype_arg(args[0])) and given
                 or positional_device and "device" in given):
        # torch's to(dtype, ...) and to(other, ...) overloads take no device=/dtype=,
        # and to(device, ...) no second device=
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"({type(args[0]).__name__}, {', '.join(sorted(given))}=...)")
    if args and isinstance(args[0], _TensorBase):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif positional_device:
        # to(device, dtype=None, non_blocking=False, copy=False): None is no device
        # (``x.to(device)`` with ``device=None`` changes nothing, as torch)
        device = args.pop(0)
        if args:
            if not (_is_dtype_arg(args[0]) or args[0] is None):
                raise TypeError(f"to() received an invalid combination of arguments: the "
                                f"argument after the device must be a dtype, got "
                                f"{type(args[0]).__name__}")
            if "dtype" in given:
                raise TypeError("to() got multiple values for argument 'dtype'")
            dtype = args.pop(0)
    elif args and _is_dtype_arg(args[0]):
        dtype = args.pop(0)
    if args and isinstance(args[0], bool):
        non_blocking = args.pop(0)
        if args and isinstance(args[0], bool):
            copy = args.pop(0)
    if args:
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    for name, flag in (("non_blocking", non_blocking), ("copy", copy)):
        if flag is not True and flag is not False:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"{name}={type(flag).__name__}: {name} must be a bool")
    if device is not None:
        device = _C._to_device(device)
    if dtype is not None:
        if not _is_dtype_arg(dtype):
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"dtype={type(dtype).__name__}: dtype must be a torch.dtype")
        dtype = _C._as_dtype(dtype)
    return device, dtype, non_blocking, copy, memory_format


_LEGACY_TYPES = {}


def _size_kw(sizes, kw, fname):
    """The size arguments of ``new_zeros``/``new_ones``/``new_empty``/``resize_``: the
    positional ones, or torch's keyword ``size=``."""
    if not kw:
        if not sizes:
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        return sizes
    if set(kw) != {"size"}:
        bad = next(k for k in kw if k != "size")
        raise TypeError(f"{fname}() got an unexpected keyword argument '{bad}'")
    if sizes:
        raise TypeError(f"{fname}() got its sizes both positionally and as size=")
    _check_size_seq(kw["size"], fname, "")
    return (kw["size"],)


def _new_dt(t, dtype, fname):
    """The dtype of ``t.new_*(..., dtype=dtype)``: ``t``'s when None, else a torch dtype
    (or bool/int/float/complex; a NumPy dtype is torch's TypeError)."""
    return t.dtype if dtype is None else _dtype_param(dtype, fname)


def _check_size_seq(size, fname, position=" (position 1)"):
    """torch's check of a ``size`` argument that must be a sequence (``size=2`` is refused)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size'{position} must be tuple of ints, not "
                        f"{type(size).__name__}")


def _int_sizes(sizes, fname):
    """The ints of ``resize_``'s sizes: varargs or one sequence, each an int or an
    integral 0-d tensor (torch refuses floats, bools, strings: TypeError)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return [_int_list_item(s, fname, "size", i) for i, s in enumerate(sizes)]


def _legacy_type_name(t):
    root = _C.root_name()
    prefix = f"{root}.cuda." if t.is_cuda else f"{root}."
    return f"{prefix}{t.dtype._legacy}Tensor"


_ARRAY_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
# returns the array API namespace module (``ptcore.array_api``, a library
# module above this layer); set by the package root, which imports it lazily
_array_namespace_loader = None


def _sequence_data(a):
    """``a`` as data for ``ptcore.tensor``: torch's legacy constructors take any
    sequence (a list, tuple, range, NumPy array, bytearray ...) but no other
    iterable, and refuse str/bytes."""
    if isinstance(a, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
    if isinstance(a, (list, tuple, _np.ndarray)):
        return a
    t = type(a)
    # the sequence protocol (PySequence_Check): item access that is not a
    # mapping's; NumPy scalars are numbers
    if hasattr(t, "__getitem__") and hasattr(t, "__len__") \
            and not isinstance(a, (dict, _np.generic)):
        return list(a)
    name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    raise TypeError(f"new(): data must be a sequence (got {name})")


def _storage_view(storage, dtype):
    """A 1-D ``dtype`` tensor over all of ``storage`` (``Tensor(storage)``,
    ``t.new(storage)``): an untyped storage of any kind, a typed one of ``dtype`` only."""
    if not isinstance(storage, _C.Storage):
        sdt = storage.dtype
        if sdt is not dtype:
            raise RuntimeError(f"Expected a Storage of type {dtype._legacy} or an UntypedStorage, "
                               f"but got type {sdt._legacy} for argument 1 'storage'")
        storage = storage.untyped()
    return _C.empty(0, dtype=dtype, device=storage.device).set_(storage)


def _is_storage(a):
    if isinstance(a, _C.Storage):
        return True
    # a TypedStorage (library layer) exists only once its module is loaded: no import up
    st = _sys.modules.get("ptcore.storage")
    return st is not None and isinstance(a, st.TypedStorage)


def _legacy_new(args, device):
    """A new default-dtype tensor from ``Tensor(*args)``'s arguments (none, sizes, data
    or a storage, which it views)."""
    if not args:
        return _C.empty(0, device=device)
    if len(args) == 1 and _is_storage(args[0]):
        return _storage_view(args[0], _C.get_default_dtype())
    if all(isinstance(a, _numbers.Integral) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], _C.Size)):
        return _C.empty(*(args or (0,)), device=device)     # Tensor(): torch's tensor([])
    if len(args) == 1:
        data = _sequence_data(args[0])        # a number is refused, as torch
        return _tensor_fn(data, dtype=_C.get_default_dtype(), device=device)
    raise TypeError(f"Tensor(): invalid arguments {args!r}")



def _physical_order(shape, strides, contiguous, channels_last):
    """torch's logical-to-physical dim permutation of one tensor (its
    compute_elementwise_output_logical_to_physical_perm: an insertion sort by
    stride that leaves ambiguous pairs in place) and whether it is ambiguous."""
    ndim = len(shape)
    if ndim <= 1:
        return list(range(ndim)), False
    if contiguous and not channels_last:
        return list(range(ndim)), False
    if channels_last and not contiguous:
        return [0, *range(2, ndim), 1], False

    def ge(a, b):
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def should_swap(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(sb, sa):
            return -1
        return 1 if ge(sa, sb) else 0

    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    ambiguous = any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1))
    return list(reversed(perm)), ambiguous


def _sparse_accessor(name, layout, what):
    """Tensor's method ``name``, an accessor of a sparse layout's part: a strided
    tensor has none (RuntimeError naming the layout, as torch's)."""
    def method(self):
        raise RuntimeError(f"{name} expected {layout} tensor layout but got Strided (a dense "
                           "tensor; sparse tensors come from to_sparse() or "
                           "sparse_coo_tensor())")
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"{what}: a strided tensor has none (``RuntimeError``, as torch's)."
    return method


class Tensor(_TensorBase):
    """A multi-dimensional array with a dtype and a device (``torch.Tensor``).

    ``ptcore.Tensor(data)`` builds a default-dtype tensor from data;
    ``ptcore.Tensor(2, 3)`` an uninitialised one of that shape.  Prefer
    ``ptcore.tensor``, ``ptcore.empty`` and friends.
    """

    __module__ = "ptcore"
    __array_priority__ = 1000

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy hands a ufunc's result on a tensor back through this (as
        torch): ``np.sin(t)``, ``t + ndarray`` and ``ndarray / t`` give a
        tensor sharing the result's memory; a bool result becomes uint8."""
        if array.dtype == bool:
            array = array.astype("uint8")
        return _C.from_numpy(array)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _torch_function.on_subclass(cls, Tensor)
        _python_dispatch.on_subclass(cls)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """PyTorch's default: run ``func`` with subclass dispatch off and
        return its tensors as ``cls`` (see :mod:`ptcore.overrides`)."""
        return _torch_function.tensor_torch_function(cls, func, types, args, kwargs)
    __torch_function__.__func__._ptc_default_tf = True

    # torch's: a subclass that does not define its own takes no part in dispatch below
    # autograd (``type(t).__torch_dispatch__ is Tensor.__torch_dispatch__``)
    __torch_dispatch__ = _python_dispatch._disabled_torch_dispatch_impl

    def as_subclass(self, cls):
        """A ``cls`` instance sharing this tensor's data, kept in the autograd graph."""
        _python_dispatch.note_instance_class(cls)
        return _torch_function.as_subclass(self, cls)

    def __new__(cls, *args, device=None):
        # torch's legacy constructor runs in __new__ (Tensor has no __init__ of its
        # own, so object.__init__ ignores the arguments): a subclass with its own
        # __new__ (taking arguments of its own, calling _make_subclass/as_subclass)
        # is never re-initialised from its arguments
        if len(args) == 1 and isinstance(args[0], _TensorBase):
            src = args[0]           # Tensor(other): a new tensor on other's memory
        else:
            src = _legacy_new(args, device)
            if cls is Tensor:
                return src
        _python_dispatch.note_instance_class(cls)
        t = _TensorBase.__new__(cls)
        _C._set_data(t, src)
        return t

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        _python_dispatch.note_instance_class(cls)
        return _C._make_subclass_impl(cls, data, require_grad)

    @staticmethod
    def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None,
                               memory_format=None, dtype=None, layout=None, device=None,
                               pin_memory=False, requires_grad=False,
                               dispatch_sizes_strides_policy=None, dispatch_device=False,
                               dispatch_layout=False, _extra_dispatch_keys=None,
                               storage_size=None):
        """A ``cls`` instance with this metadata and no data of its own (torch's): a
        tensor subclass whose ``__torch_dispatch__`` computes its ops, typically on
        the tensors it wraps.  Reading its data elsewhere raises ``RuntimeError``."""
        _python_dispatch.note_instance_class(cls)
        try:
            sizes = [_operator.index(s) for s in size]
            strides = _wrapper_strides(sizes) if strides is None else \
                [_operator.index(s) for s in strides]
        except TypeError:
            raise TypeError(f"_make_wrapper_subclass(): size and strides must be sequences "
                            f"of ints, got size={size!r}, strides={strides!r}") from None
        if layout is not None and layout is not _C.strided:
            raise NotImplementedError(f"_make_wrapper_subclass: layout {layout} is not "
                                      "supported (strided wrappers only)")
        dt = _C.get_default_dtype() if dtype is None else dtype
        if not isinstance(dt, _C.dtype):
            raise TypeError(f"_make_wrapper_subclass(): argument 'dtype' must be a dtype, not "
                            f"{type(dtype).__name__}")
        dev = _C._to_device("cpu" if device is None else device)
        return _C._make_wrapper_impl(cls, sizes, strides, _operator.index(storage_offset or 0),
                                     dt, dev, bool(requires_grad))

    # -- deprecations torch warns about once per process --------------------

    @property
    def T(self):
        """The dims reversed (a transpose for 2-d; other ranks are deprecated, with a
        warning once per process, as torch's TORCH_WARN_ONCE)."""
        nd = self.ndim
        if nd == 2:
            return _TensorBase.T.__get__(self)
        if nd == 0:
            _warn_once("T_0d", "Tensor.T is deprecated on 0-D tensors. This function is the "
                       "identity in these cases.")
        else:
            _warn_once("T_nd", "The use of `x.T` on tensors of dimension other than 2 to reverse "
                       "their shape is deprecated and it will throw an error in a future release. "
                       "Consider `x.mT` to transpose batches of matrices or "
                       "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions "
                       "of a tensor.")
        return self.permute(list(range(nd - 1, -1, -1)))

    def __float__(self):
        if self.requires_grad and self.numel() == 1:
            if _grad_state.enabled:     # once per process, as torch (float() only)
                _warn_once("float_requires_grad", "Converting a tensor with requires_grad=True "
                           "to a scalar may lead to unexpected behavior.\nConsider using "
                           "tensor.detach() first.")
            return _TensorBase.__float__(self.detach())
        return _TensorBase.__float__(self)

    # -- autograd-facing attributes ----------------------------------------

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(bool(value))

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records operations on this (leaf) tensor."""
        if requires_grad is not True and requires_grad is not False:
            _bool_param(requires_grad, "requires_grad_", "requires_grad")
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            # torch's message of the method (the setter and the constructors name complex)
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.is_inference():
            if not _grad_state.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                                   "InferenceMode is not allowed.")
        if not requires_grad and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, _TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with "
                    f"dtype '{self.dtype}'. Please ensure that the gradient and the tensor have the same dtype")
            if value.device != self.device:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{value.device.type}' to a "
                    f"tensor with device type '{self.device.type}'. Please ensure that the gradient "
                    "and the tensor are on the same device")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    f"the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_fn(self):
        fn = self._grad_fn
        if fn is not None and fn._is_view and fn._bver != self._version \
                and self._base is not None:
            # a view whose base changed in place since: torch shows the node
            # regenerated from the base's new history
            fn = _REFRESH_VIEW[0](self)
        return fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def retains_grad(self):
        return self._retains_grad

    def detach(self):
        """A tensor sharing storage with this one, cut from the autograd graph."""
        return self._detached()     # (as torch, it shares the version counter)

    def detach_(self):
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        # as torch: shares the memory but not the version counter, so an
        # in-place write to ``x.data`` does not invalidate what autograd saved of x
        t = self.detach()
        if isinstance(t, _TensorBase):
            t._new_version_counter()
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, _TensorBase):
            raise TypeError(f"data must be a Tensor, got {type(other).__name__}")
        if self._requires_grad and not (other.dtype.is_floating_point or other.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        _C._set_data(self, other)

    # -- conversions ----------------------------------------------------------

    def to(self, *args, **kwargs):
        """Convert dtype and/or move to a device: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``."""
        if not kwargs and len(args) == 1 and type(args[0]) is _C.dtype:
            return _to_dtype_only(self, args[0])        # the common x.to(dtype)
        device, dtype, non_blocking, copy, memory_format = _parse_to(args, kwargs)
        return _to_impl(self, device, dtype, non_blocking, copy, memory_format)

    def cpu(self, memory_format=None):
        """This tensor on the CPU (self if it already is)."""
        return _to_impl(self, _C._to_device("cpu"), None, False, False, memory_format)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on a CUDA device."""
        dev = _C._to_device("cuda" if device is None else
                            (device if not isinstance(device, int) else f"cuda:{device}"))
        if dev.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {dev}")
        return _to_impl(self, dev, None, non_blocking, False, memory_format)

    def xpu(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on an XPU device: ptcore has none (``AssertionError``, as torch
        without XPU)."""
        raise AssertionError("Torch not compiled with XPU enabled")

    def mtia(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on an MTIA device: ptcore has none (``AssertionError``, as torch)."""
        raise AssertionError("Torch not compiled with MTIA enabled")

    def ipu(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on an IPU device: ptcore has none (``RuntimeError``, as torch)."""
        raise RuntimeError("ptcore is not linked with support for ipu devices")

    def to_dense(self, dtype=None, *, masked_grad=True):
        """A strided tensor: this one itself (converted to ``dtype`` when given), as torch
        for a dense tensor (sparse tensors have their own ``to_dense``)."""
        return self if dtype is None else self.to(dtype)

    def dense_dim(self):
        """The number of dense dimensions: all of them for a strided tensor."""
        return self.dim()

    def sparse_dim(self):
        """The number of sparse dimensions: 0 for a strided tensor."""
        return 0

    # the sparse layouts' accessors: a strided tensor has none of their parts (RuntimeError,
    # as torch's; sparse tensors have their own methods)
    indices = _sparse_accessor("indices", "sparse coordinate", "COO indices")
    values = _sparse_accessor("values", "sparse", "The stored values")
    coalesce = _sparse_accessor("coalesce", "sparse coordinate", "The coalesced COO tensor")
    is_coalesced = _sparse_accessor("is_coalesced", "sparse coordinate",
                                    "Whether a COO tensor is coalesced")
    crow_indices = _sparse_accessor("crow_indices", "sparse row compressed",
                                    "CSR/BSR row pointers")
    col_indices = _sparse_accessor("col_indices", "sparse row compressed",
                                   "CSR/BSR column indices")
    ccol_indices = _sparse_accessor("ccol_indices", "sparse column compressed",
                                    "CSC/BSC column pointers")
    row_indices = _sparse_accessor("row_indices", "sparse column compressed",
                                   "CSC/BSC row indices")

    def type(self, dtype=None, non_blocking=False, *, memory_format=None):
        """The legacy type name (``'ptcore.FloatTensor'``), or a converted tensor."""
        if dtype is None:
            return _legacy_type_name(self)
        if isinstance(dtype, str):
            name = dtype
            cuda = False
            for prefix in ("ptcore.cuda.", "torch.cuda.", "ptcore.", "torch."):
                if name.startswith(prefix):
                    cuda, name = ".cuda." in prefix, name[len(prefix):]
                    break
            else:
                raise ValueError(f"invalid type: '{dtype}'")      # (torch's full names only)
            if name == "Tensor":                    # the default tensor type
                match = [_C.get_default_dtype()]
            else:
                match = [d for d in _C._all_dtypes() if d._legacy + "Tensor" == name]
            if not match:
                raise ValueError(f"invalid type: '{dtype}'")
            return self.to(device="cuda" if cuda else self.device, dtype=match[0],
                           non_blocking=non_blocking)
        if isinstance(getattr(dtype, "dtype", None), _C.dtype) and isinstance(dtype, type):
            return self.to(dtype=dtype.dtype, non_blocking=non_blocking)  # ptcore.LongTensor ...
        if isinstance(dtype, type) and issubclass(dtype, _TensorBase):
            return self
        if not isinstance(dtype, _C.dtype):
            # torch takes a dtype, a tensor type or its name; a type that is none of
            # them (int, float, np.float64) is a ValueError, any other object a TypeError
            if not isinstance(dtype, type):
                raise TypeError(f"type(): dtype must be a type, str, or dtype object, not "
                                f"{type(dtype).__name__}")
            t = dtype
            name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
            raise ValueError(f"invalid type: '{name}'")
        return self.to(dtype=dtype, non_blocking=non_blocking)

    def type_as(self, other):
        if not isinstance(other, _TensorBase):
            raise TypeError("type_as(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        if getattr(type(other), "_ptc_sparse", False):
            # (torch's type_as converts to other's options, its layout among them)
            name = str(other.layout).rsplit(".", 1)[-1]
            name = "Sparse" if name == "sparse_coo" else \
                "".join(w.capitalize() for w in name.split("_"))
            raise RuntimeError("to(options) doesn't support converting to a different layout, "
                               "but got self.layout being Strided and options.layout set as "
                               f"{name}")
        return self.to(dtype=other.dtype, device=other.device)

    def double(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.float64)
        return self.to(_C.float64, memory_format=memory_format)

    def float(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.float32)
        return self.to(_C.float32, memory_format=memory_format)

    def half(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.float16)
        return self.to(_C.float16, memory_format=memory_format)

    def bfloat16(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.bfloat16)
        return self.to(_C.bfloat16, memory_format=memory_format)

    def long(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.int64)
        return self.to(_C.int64, memory_format=memory_format)

    def int(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.int32)
        return self.to(_C.int32, memory_format=memory_format)

    def short(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.int16)
        return self.to(_C.int16, memory_format=memory_format)

    def char(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.int8)
        return self.to(_C.int8, memory_format=memory_format)

    def byte(self, memory_format=None):
        if memory_format is None or memory_format is _C.preserve_format:
            return _to_dtype_only(self, _C.uint8)
        return self.to(_C.uint8, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(_C.bool_)

    def chalf(self, memory_format=None):
        return self.to(_C.complex32)

    def cfloat(self, memory_format=None):
        return self.to(_C.complex64)

    def cdouble(self, memory_format=None):
        return self.to(_C.complex128)

    # -- new_* constructors ----------------------------------------------------

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
                   pin_memory=False):
        return _tensor_fn(data, dtype=_new_dt(self, dtype, "new_tensor"),
                          device=self.device if device is None else device,
                          requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False, **kw):
        return _C.empty(*_size_kw(size, kw, "new_empty"), dtype=_new_dt(self, dtype, "new_empty"),
                        device=self.device if device is None else device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False, **kw):
        return _C.zeros(*_size_kw(size, kw, "new_zeros"), dtype=_new_dt(self, dtype, "new_zeros"),
                        device=self.device if device is None else device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False, **kw):
        return _C.ones(*_size_kw(size, kw, "new_ones"), dtype=_new_dt(self, dtype, "new_ones"),
                       device=self.device if device is None else device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False):
        _check_size_seq(size, "new_full")
        return _C.full(size, fill_value, dtype=_new_dt(self, dtype, "new_full"),
                       device=self.device if device is None else device, requires_grad=requires_grad)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                          layout=None, pin_memory=False):
        return _C.empty_strided(size, stride, dtype=_new_dt(self, dtype, "new_empty_strided"),
                                device=self.device if device is None else device,
                                requires_grad=requires_grad)

    def resize_(self, *sizes, memory_format=None, **kw):
        """Resize in place (contiguous); grows the storage when needed."""
        shape = _int_sizes(_size_kw(sizes, kw, "resize_"), "resize_")
        for s in shape:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if memory_format is None and shape == list(self.shape):
            return self                   # torch: the same sizes keep the strides
        old_nbytes = self.untyped_storage().nbytes()
        _C._resize_impl(self, shape)
        _fill_grown_storage(self, old_nbytes)
        if memory_format is not None:
            self._restride(memory_format)
        self._bump_version()
        return self

    def _restride(self, memory_format):
        """torch's empty_tensor_restride: the dense strides of ``memory_format``."""
        if memory_format is _C.preserve_format:
            raise RuntimeError("Unsupported memory formatPreserve")
        if memory_format is _C.contiguous_format:
            order = list(range(self.dim()))
        else:
            rank = 4 if memory_format is _C.channels_last else 5
            if self.dim() != rank:
                raise RuntimeError(f"required rank {rank} tensor to use "
                                   f"{'channels_last' if rank == 4 else 'channels_last_3d'} format")
            order = [0] + list(range(2, rank)) + [1]
        strides, step = [0] * self.dim(), 1
        for d in reversed(order):      # (channels-last strides multiply the raw sizes, 0 included)
            strides[d] = step
            step *= self.shape[d] if memory_format is not _C.contiguous_format else max(self.shape[d], 1)
        _C._set_storage_impl(self, self.untyped_storage(), self.storage_offset(), tuple(self.shape),
                             tuple(strides))

    def resize_as_(self, the_template, memory_format=None):
        other = the_template                          # (torch's parameter name)
        self.resize_(other.shape)
        if memory_format is not None:
            if memory_format is _C.preserve_format:   # other's suggested memory format
                memory_format = next((f for f in (_C.channels_last, _C.channels_last_3d)
                                      if other.dim() == (4 if f is _C.channels_last else 5)
                                      and not other.is_contiguous()
                                      and other.is_contiguous(memory_format=f)),
                                     _C.contiguous_format)
            self._restride(memory_format)
        return self

    def module_load(self, other, assign=False):
        """How ``other`` is loaded into this parameter or buffer by ``Module.load_state_dict``
        when parameters are swapped: ``other.detach()`` with ``assign``, else this tensor
        with ``other`` copied in (detached)."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    # -- random fills (in place) -------------------------------------------------

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        return _random_api._uniform_(self, from_, to, generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return _random_api._normal_(self, mean, std, generator)

    def random_(self, from_=0, to=None, *, generator=None):
        return _random_api._random_(self, from_, to, generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        return _random_api._bernoulli_(self, p, generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        return _random_api._exponential_(self, lambd, generator)

    # -- misc ----------------------------------------------------------------------

    def pin_memory(self, device=None):
        return _device_runtime("pin_memory")(self)

    def is_pinned(self, device=None):
        return _device_runtime("is_pinned")(self)

    def record_stream(self, stream):
        """Mark this CUDA tensor's memory as used by ``stream``: it is not
        reused before the work queued on ``stream`` at free time completes."""
        _device_runtime("record_stream")(self, stream)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export as a DLPack capsule; for a CUDA tensor the consumer's
        ``stream`` first waits for the work queued on the current stream."""
        if self.is_cuda:
            _device_runtime("dlpack_stream_sync")(self, stream)
        elif stream is not None and self.is_cpu:
            raise AssertionError("stream should be None on cpu.")      # (torch's assert)
        return _TensorBase.__dlpack__(self, stream=stream, max_version=max_version,
                                      dl_device=dl_device, copy=copy)

    @property
    def __cuda_array_interface__(self):
        """CUDA Array Interface (version 3) of a CUDA tensor; AttributeError
        for other tensors, as torch."""
        return _device_runtime("cuda_array_interface")(self)

    def is_shared(self):
        return self.untyped_storage().is_shared()

    def share_memory_(self):
        """Move the storage to shared memory in place (views see it too); returns self."""
        _shared_memory._share_storage(self.untyped_storage())
        return self

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory (``Tensor.dim_order``).

        ``ambiguity_check=True`` raises RuntimeError when the order is not unique (a
        size-1 dim, or two neighbouring dims with equal strides); a list of memory
        formats raises unless the tensor is contiguous in exactly one of them, when
        the order is not unique.
        """
        formats_all = (_C.contiguous_format, _C.channels_last, _C.channels_last_3d,
                       _C.preserve_format)
        bad = TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
        if not isinstance(ambiguity_check, bool):
            if not isinstance(ambiguity_check, list):
                raise bad
            if not all(any(f is m for m in formats_all) for f in ambiguity_check):
                raise bad
        strides, shape = self.stride(), self.shape
        if ambiguity_check is not False:
            formats = ambiguity_check if isinstance(ambiguity_check, list) else []
            multiple = (any(a == b for a, b in zip(strides, strides[1:]))
                        or any(s == 1 for s in shape))
            if multiple and sum(1 for f in formats if self.is_contiguous(memory_format=f)) != 1:
                raise RuntimeError("The tensor does not have unique dim order, or cannot map "
                                   "to exact one of the given memory formats.")
        perm, ambiguous = _physical_order(shape, strides, self.is_contiguous(),
                                          self.dim() == 4 and self.is_contiguous(
                                              memory_format=_C.channels_last))
        if ambiguous and ambiguity_check:
            raise RuntimeError("The tensor does not have unique dim order.")
        return tuple(perm)

    def __repr__(self, *, tensor_contents=None):
        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, format_spec):
        # as torch: only a plain Tensor formats its 0-d value; a subclass (Parameter
        # included) is formatted as its str, and refuses a format spec
        if self.dim() == 0 and not self.is_meta and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __reversed__(self):
        """The tensor flipped along dim 0 (``reversed(t)``); a 0-d tensor itself."""
        if self.dim() == 0:
            return self
        return self.flip(0)

    def __dir__(self):
        return sorted(set(dir(type(self)) + list(self.__dict__.keys())))

    # -- pickling and deepcopy: data, requires_grad and user attributes; never
    # the autograd graph (as PyTorch: a pickled non-leaf loads as a leaf) --

    def __reduce_ex__(self, proto):
        fn, args = _TensorBase.__reduce_ex__(self, proto)
        # the user attributes: _rebuild_tensor's 7th argument (its strides
        # follow), _rebuild_meta_tensor's last
        i = 6 if fn is _C._rebuild_tensor else len(args) - 1
        state = args[i]
        if state and not _AUTOGRAD_ATTRS.isdisjoint(state):
            args = args[:i] + ({k: v for k, v in state.items() if k not in _AUTOGRAD_ATTRS}
                               or None,) + args[i + 1:]
        return fn, args

    def __copy__(self):
        """``copy.copy``: a new leaf viewing the same storage (size, strides,
        offset) with ``requires_grad``, the class and a shallow copy of the user
        attributes, as torch rebuilds a tensor from its reduction without
        copying the storage (a class with its own reduction, as ``Parameter``,
        is rebuilt from that)."""
        cls = type(self)
        if cls.__reduce_ex__ is not Tensor.__reduce_ex__:
            import copy
            return copy._reconstruct(self, None, *self.__reduce_ex__(4))
        new = _C.empty(0, dtype=self.dtype, device=self.device).set_(
            self.untyped_storage(), self.storage_offset(), self.size(), self.stride())
        new._new_version_counter()       # its own, at 1: torch's rebuild is an in-place set_
        new._bump_version()
        if self.requires_grad:
            new.requires_grad_()
        if cls is not Tensor:
            new = new.as_subclass(cls)
        d = getattr(self, "__dict__", None)
        if d:
            new.__dict__.update((k, v) for k, v in d.items() if k not in _AUTOGRAD_ATTRS)
        return new

    def __deepcopy__(self, memo):
        new = _TensorBase.__deepcopy__(self, memo)
        d = getattr(new, "__dict__", None)
        if d:
            for k in _AUTOGRAD_ATTRS.intersection(d):
                del d[k]
        return new

    # --- the Python array API standard (``ptcore.array_api``) ---
    def __array_namespace__(self, *, api_version=None):
        """The array API namespace of this tensor: ``ptcore.array_api``.

        ``api_version`` may be None or a standard version from 2021.12 to 2025.12.
        """
        if api_version is not None and api_version not in _ARRAY_API_VERSIONS:
            raise ValueError(f"__array_namespace__: unsupported array API version {api_version!r}; "
                             f"supported: {', '.join(_ARRAY_API_VERSIONS)}")
        return _array_namespace_loader()

    def to_device(self, device, /, *, stream=None):
        """This tensor on ``device`` (itself when already there), as the array API standard's method."""
        if stream is not None and not isinstance(stream, int):
            raise ValueError(f"to_device: stream must be None or an int, got {type(stream).__name__}")
        return self.to(device)


# attributes autograd keeps in a tensor's __dict__ (a saved alias's output number,
# forward-AD tangents per level and the aliases sharing them): never pickled or
# deep-copied (the leaf's gradient accumulator is a slot of the core, _grad_acc)
_AUTOGRAD_ATTRS = frozenset(("_output_nr", "_fw", "_fw_aliases"))


def _is_sparse_tensor(value):
    """A ptcore.sparse tensor (a Tensor subclass holding no strided data: code that
    reads a tensor's memory checks for it first, e.g. sparse gradients)."""
    return getattr(value, "_ptc_sparse", False) is True


def _to_dtype_only(t, dtype):
    """``t.to(dtype)`` on t's device, memory format preserved (what
    ``_to_impl`` does then, without parsing ``to``'s overloads)."""
    if dtype is t.dtype:
        return t
    _C._warn_complex_to_real(t.dtype, dtype, 3)     # attributed to the caller of .to()/.float()
    return _autograd_to(t, t._to_dtype(dtype, copy=True))


def _to_impl(t, device, dtype, non_blocking, copy, memory_format):
    cur_dev = t.device
    if device is None:
        device = cur_dev
    if dtype is None:
        dtype = t.dtype
    _C._warn_complex_to_real(t.dtype, dtype, 3)     # attributed to the caller of .to()
    if device == cur_dev or (device.type == cur_dev.type and device.index is None) or \
            (device.type == "cpu" == cur_dev.type):     # ('cpu:0' is the CPU, as torch)
        preserve = memory_format is None or memory_format is _C.preserve_format
        # torch aliases when the layout torch suggests for t is the one asked for
        if dtype is t.dtype and not copy and (preserve or _suggest_memory_format(t) is memory_format):
            return t
        if preserve:
            out = t._to_dtype(dtype, copy=True)
        else:                       # the standard strides of memory_format, as torch's empty
            out = _C.empty(tuple(t.shape), dtype=dtype, device=cur_dev, memory_format=memory_format)
            out.copy_(t)
        return _autograd_to(t, out)
    # cross-device: the device runtime (the CUDA backend) implements the transfer
    out = _device_runtime("to_device")(t, device, dtype, non_blocking)
    return _autograd_to(t, out)


def _autograd_to(src, out):
    hook = _AUTOGRAD_TO[0]
    if hook is not None and src.requires_grad:
        return hook(src, out)
    return out


_AUTOGRAD_TO = [None]
_REFRESH_VIEW = [None]          # autograd's refresh_view (set when autograd is installed)

_C._set_tensor_class(Tensor)


def _fill_grown_storage(t, old_nbytes):
    """Under deterministic algorithms, ``resize_``'s new memory is filled as
    torch fills uninitialised memory (NaN, the largest integer)."""
    st = _settings._state
    if not (st["deterministic"] and st["fill_uninitialized_memory"]):
        return
    if t.untyped_storage().nbytes() <= old_nbytes or not t.numel():
        return
    first = max(0, -(-old_nbytes // t.element_size()) - t.storage_offset())
    if first < t.numel():
        _settings._fill_uninitialized(t.view(-1)[first:])
