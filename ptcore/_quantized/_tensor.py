"""Quantized tensors (``torch.quantize_per_tensor``'s results): integers in a storage
of the underlying integer type (int8 for ``qint8``, uint8 for ``quint8``, int32 for
``qint32``) and an affine map to real values, ``real = (int - zero_point) * scale``,
with one ``scale``/``zero_point`` for the tensor (``per_tensor_affine``) or one per
slice along ``axis`` (``per_channel_affine``).

A :class:`QuantizedTensor` is a :class:`ptcore.Tensor` subclass made by
``_make_wrapper_subclass``: the core holds its sizes, strides and the integer dtype
over no data, so a dense kernel reached by mistake raises instead of computing on
the integers.  It is a layout class of the ``__torch_function__`` layer (as the sparse
tensors): every ptcore function and Tensor method called on one comes to
:func:`torch_function`, which runs the few ops quantized tensors have (views, copies,
``dequantize``, ``int_repr``, the ``q_*`` accessors) and refuses every other one as
torch's QuantizedCPU backend does (``NotImplementedError``).  Ordinary tensors pay
nothing for it.
"""
import numpy as _np

from ptcore import _tensor as _C
from ptcore.tensor import Tensor as _Tensor
from ptcore._tensor_str import _join_suffixes, _tensor_str

__all__ = ["QuantizedTensor", "qscheme", "per_tensor_affine", "per_channel_affine",
           "per_tensor_symmetric", "per_channel_symmetric",
           "per_channel_affine_float_qparams", "make_per_tensor", "make_per_channel",
           "int_dtype", "qrange", "unsupported"]


class qscheme:
    """A quantization scheme (``torch.qscheme``): ``ptcore.per_tensor_affine`` ...,
    one object each, defined here only; pickled by name (``ptcore.<name>``)."""
    __slots__ = ("name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"cannot create '{_C.root_name()}.qscheme' instances")

    def __repr__(self):
        return _C.root_name() + "." + self.name

    def __reduce__(self):
        return self.name


def _qscheme(name):
    q = object.__new__(qscheme)
    q.name = name
    return q


qscheme.__module__ = "ptcore"
per_tensor_affine = _qscheme("per_tensor_affine")
per_channel_affine = _qscheme("per_channel_affine")
per_tensor_symmetric = _qscheme("per_tensor_symmetric")
per_channel_symmetric = _qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = _qscheme("per_channel_affine_float_qparams")

# quantized dtype -> (integer storage dtype, qmin, qmax)
_INFO = {
    _C.qint8: (_C.int8, -128, 127),
    _C.quint8: (_C.uint8, 0, 255),
    _C.qint32: (_C.int32, -2 ** 31, 2 ** 31 - 1),
}


def int_dtype(qdtype):
    """The integer dtype that stores ``qdtype``'s values."""
    return _INFO[qdtype][0]


def qrange(qdtype):
    """``(qmin, qmax)`` of ``qdtype``."""
    return _INFO[qdtype][1:]


def unsupported(name):
    """torch's error for an op quantized tensors have no kernel for."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'QuantizedCPU' backend. This "
        f"could be because the operator doesn't exist for this backend.")


class QuantizedTensor(_Tensor):
    """A quantized tensor (``t.is_quantized``): integer values ``int_repr()`` and the
    affine map ``(int - zero_point) * scale`` to reals (``dequantize()``).  Made by
    :func:`ptcore.quantize_per_tensor` / :func:`ptcore.quantize_per_channel`."""

    # a layout class of the __torch_function__ layer (see ptcore._dispatch.torch_function)
    _ptc_layout_tf = True
    _schema_tensor = True

    def __new__(cls, data, qdtype, scheme, scale, zero_point, axis=None):
        # (the integers' storage offset: what ``storage_offset()`` of a view reports)
        return _C._make_wrapper_impl(cls, list(data.shape), list(data.stride()),
                                     data.storage_offset(), data.dtype, data.device, False)

    def __init__(self, data, qdtype, scheme, scale, zero_point, axis=None):
        self._qdata = data            # the integers (a strided tensor of int_dtype(qdtype))
        self._qdtype = qdtype
        self._qscheme = scheme
        self._qscale = scale          # float, or a float64 tensor (per channel)
        self._qzp = zero_point        # int, or an int64 tensor (per channel)
        self._qaxis = axis

    def _like(self, data, axis=None):
        """A quantized tensor of ``data`` with this one's quantizer."""
        return QuantizedTensor(data, self._qdtype, self._qscheme, self._qscale, self._qzp,
                               self._qaxis if axis is None else axis)

    # -- metadata ----------------------------------------------------------
    @property
    def dtype(self):
        return self._qdtype

    @property
    def is_quantized(self):
        return True

    def is_floating_point(self):
        return False

    def is_complex(self):
        return False

    def qscheme(self):
        return self._qscheme

    def _need(self, per_channel, what):
        if (self._qscheme is per_channel_affine) != per_channel:
            want = ("quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                    "kPerChannelAffineFloatQParams") if per_channel else \
                "qscheme() == kPerTensorAffine"
            raise RuntimeError(f"{what}: Expected {want} to be true, but got false.")

    def q_scale(self):
        self._need(False, "q_scale")
        return self._qscale

    def q_zero_point(self):
        self._need(False, "q_zero_point")
        return self._qzp

    def q_per_channel_scales(self):
        self._need(True, "q_per_channel_scales")
        return self._qscale.clone()

    def q_per_channel_zero_points(self):
        self._need(True, "q_per_channel_zero_points")
        return self._qzp.clone()

    def q_per_channel_axis(self):
        self._need(True, "q_per_channel_axis")
        return self._qaxis

    def int_repr(self):
        """The integers, as a new tensor of the underlying integer dtype."""
        return self._qdata.clone()

    def dequantize(self):
        """The real values, ``(int - zero_point) * scale``, as float32."""
        q = self._qdata.numpy().astype(_np.float32)
        if self._qscheme is per_channel_affine:
            shape = [1] * q.ndim
            shape[self._qaxis] = -1
            # (torch's per-channel dequantization computes in double)
            q = q.astype(_np.float64)
            zp = self._qzp.numpy().astype(_np.float64).reshape(shape)
            sc = self._qscale.numpy().astype(_np.float64).reshape(shape)
        else:
            zp = _np.float32(self._qzp)
            sc = _np.float32(self._qscale)
        r = _np.asarray((q - zp) * sc, dtype=_np.float32).reshape(q.shape)
        return _C.from_numpy(r.copy())

    def element_size(self):
        return self._qdtype.itemsize

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return f"{_C.root_name()}.quantized.{self._qdtype._legacy}Tensor"
        raise unsupported("_to_copy")

    # -- views and copies (per-tensor quantizers map through any view) -------
    def _view_op(self, name, *args, **kwargs):
        if self._qscheme is not per_tensor_affine or any(
                isinstance(a, _C.dtype) for a in args + tuple(kwargs.values())):
            # (a dtype view of the integers: torch crashes; an integer view is int_repr())
            raise unsupported(name)
        if name.endswith("_"):
            # in place (squeeze_, unsqueeze_): this tensor's sizes change, not those of
            # the integers, which other quantized tensors (detach(), copies) may share
            data = getattr(self._qdata, name[:-1])(*args, **kwargs)
            _C._set_data(self, self._like(data))
            self._qdata = data
            return self
        return self._like(getattr(self._qdata, name)(*args, **kwargs))

    def clone(self, *, memory_format=None):
        return self._like(self._qdata.clone())

    def contiguous(self, memory_format=None):
        return self if self._qdata.is_contiguous() else self._like(self._qdata.contiguous())

    def detach(self):
        return self._like(self._qdata)

    def cpu(self, memory_format=None):
        return self

    def to(self, *args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, _C.dtype) and a is not self._qdtype:
                raise RuntimeError("Creation of quantized tensor requires quantized dtype "
                                   "like torch.quint8")
            if isinstance(a, _Tensor):
                raise unsupported("_to_copy")
            if isinstance(a, (str, _C.device)) and _C.device(a).type != "cpu":
                raise unsupported("_to_copy")
        return self

    def __getitem__(self, index):
        if self._qscheme is not per_tensor_affine:
            raise unsupported("index")
        return self._like(self._qdata[index])

    def untyped_storage(self):
        """The storage of the integers (shared with views of this tensor)."""
        return self._qdata.untyped_storage()

    def data_ptr(self):
        return self._qdata.data_ptr()

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._qdata, self._qdtype, self._qscheme, self._qscale, self._qzp,
                           self._qaxis))

    def __deepcopy__(self, memo):
        r = self.clone()
        memo[id(self)] = r
        return r

    def __copy__(self):
        return self._like(self._qdata)

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def numpy(self, *, force=False):
        raise TypeError(f"Got unsupported ScalarType {self._qdtype._legacy}")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Got unsupported ScalarType {self._qdtype._legacy}")

    def tolist(self):
        raise RuntimeError("load_scalar: invalid type")

    def item(self):
        """The real value of a one-element quantized tensor (as torch's)."""
        return self.dequantize().item()

    def __float__(self):
        return float(self.dequantize())

    def __int__(self):
        return int(self.dequantize())

    def __bool__(self):
        return bool(self.dequantize())

    def is_nonzero(self):
        return self.dequantize().is_nonzero()

    def __index__(self):
        raise TypeError("only integer tensors of a single element can be converted to an index")

    def __format__(self, spec):
        # a 0-d one formats its real value (as torch's); else the repr
        return format(self.item(), spec) if self.dim() == 0 else object.__format__(self, spec)

    def __dlpack__(self, *args, **kwargs):
        raise BufferError(f"Got unsupported ScalarType {self._qdtype._legacy}")

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    def __repr__(self, *, tensor_contents=None):
        prefix = "tensor("
        indent = len(prefix)
        suffixes = ["size=" + str(tuple(int(n) for n in self.shape)),
                    "dtype=" + str(self._qdtype),
                    "quantization_scheme=" + str(self._qscheme)]
        if self._qscheme is per_channel_affine:
            suffixes += ["scale=" + repr(self._qscale), "zero_point=" + repr(self._qzp),
                         "axis=" + str(self._qaxis)]
        else:
            suffixes += ["scale=" + str(self._qscale), "zero_point=" + str(self._qzp)]
        body = _tensor_str(self.dequantize(), indent)
        return _join_suffixes(prefix + body, suffixes, indent)

    __str__ = __repr__

    def __getattr__(self, name):
        # a Tensor method quantized tensors have no kernel for raises when called, as
        # torch's (the attribute exists)
        if not name.startswith("_") and callable(getattr(_Tensor, name, None)):
            def method(*args, **kwargs):
                raise unsupported(name)
            return method
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return torch_function(func, args, kwargs)


_VIEWS = ("view", "reshape", "t", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
          "select", "narrow", "expand", "view_as", "reshape_as", "unflatten", "movedim",
          "squeeze_", "unsqueeze_")
for _name in _VIEWS:
    def _make(name):
        def method(self, *args, **kwargs):
            return self._view_op(name, *args, **kwargs)
        method.__name__ = name
        return method
    setattr(QuantizedTensor, _name, _make(_name))
del _name, _make

# the ptcore functions (``ptcore.X(q)``) that run the method of that name
_FUNCTIONS = {"dequantize", "int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
              "q_per_channel_zero_points", "q_per_channel_axis", "qscheme", "clone",
              "detach", "is_floating_point", "is_complex", "numel", "is_nonzero"} | set(_VIEWS)
_CORE = {"size", "dim", "stride", "numel", "is_contiguous", "element_size", "nelement",
         "storage_offset", "__len__", "__repr__", "__str__", "__format__", "__hash__", "__deepcopy__", "__reduce_ex__", "_is_view",
         "get_device", "ndimension", "__getitem__", "dim_order", "is_leaf", "requires_grad"}


_COMPARE = {"__eq__": "eq", "__ne__": "ne", "eq": "eq", "ne": "ne", "equal": "equal"}


def _first_quantized(args, kwargs):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, QuantizedTensor):
            return a
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, QuantizedTensor):
                    return b
    return None


def torch_function(func, args, kwargs):
    """What ``ptcore.X(...)`` / ``Tensor.X(...)`` does with a quantized argument: the
    method of that name of the quantized tensor it is called on, when quantized tensors
    have it; else torch's QuantizedCPU ``NotImplementedError``."""
    name = getattr(func, "__name__", None)
    kwargs = kwargs or {}
    if name in _COMPARE and len(args) == 2:
        # torch compares quantized tensors by their real values
        a, b = (x.dequantize() if isinstance(x, QuantizedTensor) else x for x in args)
        return getattr(a, _COMPARE[name])(b)
    if args and isinstance(args[0], QuantizedTensor):
        own = QuantizedTensor.__dict__.get(name)
        if callable(own) and func is not own and (name in _FUNCTIONS or
                                                  getattr(_Tensor, name, None) is func):
            return own(*args, **kwargs)
        if name in _CORE:
            return getattr(_Tensor, name)(*args, **kwargs)
    if _first_quantized(args, kwargs) is None:
        return NotImplemented
    raise unsupported(name)


def _rebuild(data, qdtype, scheme, scale, zero_point, axis):
    return QuantizedTensor(data, qdtype, scheme, scale, zero_point, axis)


def make_per_tensor(data, qdtype, scale, zero_point):
    """A per-tensor affine quantized tensor of the integers ``data``."""
    return QuantizedTensor(data, qdtype, per_tensor_affine, float(scale), int(zero_point))


def make_per_channel(data, qdtype, scales, zero_points, axis):
    """A per-channel affine quantized tensor of the integers ``data``."""
    return QuantizedTensor(data, qdtype, per_channel_affine, scales, zero_points, int(axis))
