# cython: language_level=3, embedsignature.format=clinic
"""The typed tensor core of ptcore.

dtypes, devices, host storage (with a caching, huge-page-aware allocator) and
``_TensorBase``: a strided view of a ``Storage`` holding shape, strides (in
elements), offset, dtype and the autograd slots.  Views share storage and
never copy.  ``ptcore.Tensor`` is a Python subclass of ``_TensorBase``.
"""
cimport cython
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.object cimport PyTypeObject, PyObject
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release,
                             PyBUF_RECORDS_RO, PyBUF_FORMAT, PyBUF_WRITABLE, PyBUF_STRIDES)
from cpython.ref cimport Py_INCREF, Py_DECREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetContext, PyCapsule_SetContext
from cpython.float cimport PyFloat_FromDouble
from libc.string cimport memset, memcpy
from libc.stdint cimport (uint8_t, int8_t, int16_t, int32_t, int64_t,
                          uint16_t, uint32_t, uint64_t, uintptr_t)
from libc.math cimport isfinite

from ptcore._ops.kernels._types cimport (
    ScalarType, PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64,
    PT_FLOAT16, PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64,
    PT_COMPLEX128, PT_COMPLEX32, PT_UINT16, PT_UINT32, PT_UINT64, PT_FLOAT8_E4M3FN,
    PT_FLOAT8_E5M2, PT_FLOAT8_E4M3FNUZ, PT_FLOAT8_E5M2FNUZ, PT_NUM_TYPES, PT_MAX_DIMS,
    ptc_half_to_float, ptc_bf16_to_float, ptc_e4m3fn_to_float, ptc_e5m2_to_float,
    ptc_e4m3fnuz_to_float, ptc_e5m2fnuz_to_float)
from ptcore._ops.kernels._copy cimport copy_cast, fill as _kfill

import numpy as _np
import numbers as _numbers
import os as _os
import operator as _operator
import re as _re
import threading as _threading
import warnings as _warnings

from ptcore._warn import warn_at_caller as _warn_at_caller


class _GradState(_threading.local):
    """Autograd's grad mode on this thread (``ptcore.autograd.grad_mode``
    switches it; a new thread starts with gradients enabled).  It lives here,
    in the core, because ``float(t)`` and ``t.numpy()`` follow torch's rules
    for a tensor that requires grad only while grad mode is on."""

    def __init__(self):
        self.enabled = True          # recording (never inside inference mode)
        self.inference = False
        # grad mode as is_grad_enabled() reports it inside inference mode, where
        # enable_grad switches it on but nothing records (as torch)
        self.nominal = False


grad_state = _GradState()


cdef bint _grad_mode_on() except -1:
    """``ptcore.autograd.grad_mode.is_grad_enabled()`` on this thread."""
    return grad_state.enabled or (grad_state.inference and grad_state.nominal)


# reshape's copy (torch's _unsafe_view of a clone): recorded by the view hook as a
# node that is no view (the codes VK_* of _tensor.pxd name the view ops)
cdef enum:
    VK_UNSAFE_VIEW = 19

# Overflow-checked size arithmetic: every element count and byte extent that
# multiplies or adds sizes and strides goes through these, so that a shape or
# stride near 2**63 raises instead of wrapping to a small (or negative) number
# that would pass a bounds check (PyTorch's c10::safe_multiplies_u64 and
# computeStorageNbytes).
cdef extern from *:
    """
    static inline int ptc_mul_ovf(Py_ssize_t a, Py_ssize_t b, Py_ssize_t *r) {
        return __builtin_mul_overflow(a, b, r);
    }
    static inline int ptc_add_ovf(Py_ssize_t a, Py_ssize_t b, Py_ssize_t *r) {
        return __builtin_add_overflow(a, b, r);
    }
    """
    bint ptc_mul_ovf(Py_ssize_t a, Py_ssize_t b, Py_ssize_t* r) noexcept nogil
    bint ptc_add_ovf(Py_ssize_t a, Py_ssize_t b, Py_ssize_t* r) noexcept nogil

# The module is one extension written in several files (Cython `include`, as
# SciPy and CuPy split their large modules), each named for what it holds;
# one compiled module keeps the inlining of the hot paths.  _TensorBase's
# body stays in this file: Cython allows `include` at module level only.
include "_tensor_dtypes.pxi"
include "_tensor_devices.pxi"
include "_tensor_storage.pxi"
include "_tensor_shapes.pxi"
include "_tensor_alloc.pxi"
include "_tensor_copy.pxi"
include "_tensor_numpy.pxi"
include "_tensor_indexing.pxi"


# ---------------------------------------------------------------------------
# _TensorBase
# ---------------------------------------------------------------------------

@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _VersionCounter:
    pass


class _NotGiven:
    """Default of an argument whose torch overloads tell "not given" from None:
    ``contiguous()``'s memory_format (torch.contiguous_format) and ``squeeze()``'s
    dim (every size-1 dim); None is a TypeError for both."""
    __slots__ = ()

    def __repr__(self):
        return "<not given>"


_CONTIGUOUS_DEFAULT = _NotGiven()


# Live instances of Tensor classes that override __torch_function__ (classes
# marked ``_ptc_tf_watch`` by ptcore._dispatch.torch_function.on_subclass):
# the protocol's dispatch layer is on while there is one, not for as long as
# such a class exists -- libraries define them at import (Pyro's
# ProvenanceTensor) and most programs never make one.  ``_tf_first`` (set by
# that module) switches the layer on when the count leaves 0; the layer
# switches itself off when it finds the count at 0.
cdef Py_ssize_t _tf_live = 0
cdef object _tf_first = None


def _set_tf_first(callback):
    """Call ``callback()`` whenever the live overriding instances go from 0 to 1."""
    global _tf_first
    _tf_first = callback


def _tf_live_count():
    """The live instances of Tensor classes that override ``__torch_function__``."""
    return _tf_live


def _tf_recount(_TensorBase t not None):
    """Count ``t`` again after its ``__class__`` was assigned (``as_subclass``,
    ``swap_tensors``): the core counts instances as it makes them, and an
    assignment makes none.  Code that assigns ``__class__`` of a tensor to an
    overriding class itself calls this (the protocol's layer may be off)."""
    _tf_uncount(t)
    _tf_note_instance(t, type(t))


# Live instances of the layout classes (ptcore.sparse's tensors, marked
# ``_ptc_layout_watch`` by ptcore._dispatch.torch_function.on_subclass): they do
# not switch the protocol's layer on (every dense op would pay for it); the
# dispatch entries test their arguments for one instead (:func:`_route_args`)
# while one lives, or while the device layer is on: ``_arg_scan[0]`` (the list
# ptcore._dispatch.dispatcher.arg_scan) says so.
cdef Py_ssize_t _layout_live = 0
cdef bint _scan_device = False
cdef list _arg_scan = [False]


def _set_arg_scan(list flag not None):
    """The list whose item 0 the core keeps true while an argument test is due."""
    global _arg_scan
    _arg_scan = flag
    flag[0] = _scan_device or _layout_live > 0


def _set_scan_device(bint on):
    """The device layer (it acts on calls with an argument off the CPU) is on or off."""
    global _scan_device
    _scan_device = on
    _arg_scan[0] = on or _layout_live > 0


def _layout_live_count():
    """The live instances of the layout classes (sparse tensors)."""
    return _layout_live


cdef inline int _route_of(object a) noexcept:
    cdef _TensorBase t
    if isinstance(a, _TensorBase):
        t = <_TensorBase>a
        if t._tf_counted == 2:
            return 2
        if _scan_device and t._storage.device._type_code != 0:
            return 1
    return 0


cdef int _route_seq(object seq) except -1:
    cdef int r = 0, k
    for a in seq:
        k = _route_of(a)
        if k == 0 and (type(a) is tuple or type(a) is list):
            for b in <object>a:
                k = _route_of(b)
                if k > r:
                    r = k
                    if r == 2:
                        return 2
        elif k > r:
            r = k
            if r == 2:
                return 2
    return r


def _route_args(tuple args, dict kwargs):
    """How a call with ``args``/``kwargs`` (also inside lists and tuples) is routed
    while an argument test is due: 2, an argument is a layout-class (sparse) tensor
    (the protocol's handling of its class runs the call); 1, a tensor argument lives
    off the CPU while the device layer is on; 0, neither."""
    cdef int r = 0, k
    cdef Py_ssize_t i, n = len(args)
    for i in range(n):
        a = args[i]
        k = _route_of(a)
        if k == 0 and (type(a) is tuple or type(a) is list):
            k = _route_seq(a)
        if k > r:
            r = k
            if r == 2:
                return 2
    if kwargs:
        k = _route_seq(kwargs.values())
        if k > r:
            r = k
    return r



cdef bint _seq_requires_grad(object seq) except -1:
    for b in seq:
        if isinstance(b, _TensorBase) and (<_TensorBase>b)._requires_grad:
            return True
    return False


def _args_require_grad(args, kwargs):
    """Whether a tensor among ``args`` (also inside lists and tuples, a Size
    aside) or the values of ``kwargs`` requires grad: the test autograd's
    recording bodies make on every call (``_record._needs_grad``), in C."""
    for a in args:
        if isinstance(a, _TensorBase):
            if (<_TensorBase>a)._requires_grad:
                return True
        elif type(a) is tuple or type(a) is list or (
                isinstance(a, (list, tuple)) and not isinstance(a, Size)):
            # (also a return-types named tuple or a list subclass: stack(aminmax(x)))
            if _seq_requires_grad(a):
                return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, _TensorBase):
                if (<_TensorBase>a)._requires_grad:
                    return True
            elif isinstance(a, (list, tuple)) and not isinstance(a, Size):  # cat(tensors=[...])
                if _seq_requires_grad(a):
                    return True
    return False

cdef void _tf_uncount(_TensorBase t) noexcept:
    global _tf_live, _layout_live
    if t._tf_counted == 1:
        _tf_live -= 1
    elif t._tf_counted == 2:
        _layout_live -= 1
        if _layout_live == 0:
            _arg_scan[0] = _scan_device
    t._tf_counted = 0


cdef void _tf_note_instance(_TensorBase t, object tp):
    global _tf_live, _layout_live
    if getattr(tp, "_ptc_layout_watch", False):
        t._tf_counted = 2
        _layout_live += 1
        if _layout_live == 1:
            _arg_scan[0] = True
        return
    if not getattr(tp, "_ptc_tf_watch", False):
        return
    t._tf_counted = 1
    _tf_live += 1
    if _tf_live == 1 and _tf_first is not None:
        _tf_first()


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _TensorBase:
    """C-level tensor: a strided view of a Storage.  Use ``ptcore.Tensor``."""

    def __cinit__(self, *args, **kwargs):
        self._shape = self._inline
        self._strides = self._inline + PT_INLINE_DIMS
        self._ndim = 1
        self._shape[0] = 0
        self._strides[0] = 1
        self._numel = 0
        self._storage = _EMPTY_STORAGE
        self._dtype = _default_dtype
        tp = type(self)
        if tp is not _TensorClass and tp is not _TensorBase:
            _tf_note_instance(self, tp)

    def __dealloc__(self):
        if self._tf_counted:
            _tf_uncount(self)
        if self._shape != NULL and self._shape != self._inline:
            PyMem_Free(self._shape)
        self._shape = NULL

    cdef int _alloc_dims(self, int ndim) except -1:
        if ndim < 0 or ndim > PT_MAX_DIMS:
            raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {ndim}")
        if self._shape != self._inline and self._shape != NULL:
            PyMem_Free(self._shape)
            self._shape = self._inline
        if ndim <= PT_INLINE_DIMS:
            self._shape = self._inline
            self._strides = self._inline + PT_INLINE_DIMS
        else:
            self._shape = <Py_ssize_t*>PyMem_Malloc(2 * ndim * sizeof(Py_ssize_t))
            if self._shape == NULL:
                self._shape = self._inline
                raise MemoryError()
            self._strides = self._shape + ndim
        self._ndim = ndim
        return 0

    cdef int _check_extent(self) except -1:
        """RuntimeError (torch's setStorage message) when this view reaches past
        the end of its storage: ``untyped_storage().resize_`` made the storage
        smaller after the view was made."""
        cdef Py_ssize_t need
        if self._numel == 0:
            return 0
        if self._storage._kind == STORAGE_WRAPPER:
            if getattr(type(self), "_ptc_sparse", False):
                # (ptcore.sparse: a wrapper whose ops its __torch_function__ runs)
                raise RuntimeError(
                    f"a sparse tensor (layout {self.layout}) has no strided data: this "
                    "operation has no sparse implementation (convert it with to_dense() first)")
            raise RuntimeError(
                f"a {type(self).__name__} made by Tensor._make_wrapper_subclass holds no data "
                f"(sizes {_fmt_list(_make_tuple(self._ndim, self._shape))}, {self._dtype}, "
                f"{self._storage.device}): its class's __torch_dispatch__ has to handle the "
                "operations on it")
        need = _storage_nbytes(self._ndim, self._shape, self._strides, self._offset,
                               self._dtype.itemsize)
        if need > self._storage._nbytes:
            _raise_out_of_bounds(_make_tuple(self._ndim, self._shape),
                                 _make_tuple(self._ndim, self._strides), self._offset,
                                 self._dtype.itemsize, need, self._storage._nbytes)
        return 0

    cdef bint _is_contig(self) noexcept:
        cdef Py_ssize_t z = 1
        cdef int i
        if self._numel == 0:
            return True
        for i in range(self._ndim - 1, -1, -1):
            if self._shape[i] != 1:
                if self._strides[i] != z:
                    return False
                z *= self._shape[i]
        return True

    cdef _TensorBase _view(self, int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                           Py_ssize_t offset, int kind=VK_GENERIC):
        """A view of this tensor's storage; ``kind`` names the view op for
        autograd (PyTorch's node name: TBackward0, SliceBackward0 ...)."""
        cdef _TensorBase v = _make_tensor(self._storage, self._dtype, ndim, shape, strides, offset)
        if self._storage._shrunk and VK_SLICE <= kind <= VK_UNBIND:
            v._check_extent()       # torch checks select/slice/as_strided views (setStorage)
        v._view_base = self if self._view_base is None else self._view_base
        v._vc = self._vc
        if _view_hook is not None and self._requires_grad and kind >= 0:
            _view_hook(self, v, kind)       # (kind < 0: the caller records the view itself)
        return v

    cdef int _set_from(self, _TensorBase other) except -1:
        """Make self share other's storage and layout (used by constructors)."""
        _wait_for_readers()         # another thread's kernel may be reading self
        self._storage = other._storage
        self._dtype = other._dtype
        self._offset = other._offset
        self._alloc_dims(other._ndim)
        cdef int i
        for i in range(other._ndim):
            self._shape[i] = other._shape[i]
            self._strides[i] = other._strides[i]
        self._numel = other._numel
        return 0

    # -- metadata ---------------------------------------------------------

    @property
    def shape(self):
        if _size_hook is not None:
            return _size_hook(self, None, _make_size(self._ndim, self._shape))
        return _make_size(self._ndim, self._shape)

    def size(self, dim=None):
        """The shape, or the size of one dimension."""
        cdef int d
        if dim is None:
            if _size_hook is not None:
                return _size_hook(self, None, _make_size(self._ndim, self._shape))
            return _make_size(self._ndim, self._shape)
        if self._ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        d = _wrap_dim(_dim_arg(dim), self._ndim)
        if _size_hook is not None:
            return _size_hook(self, d, _make_size(self._ndim, self._shape))
        return self._shape[d]

    def stride(self, dim=None):
        """Strides in elements (a tuple), or the stride of one dimension."""
        if dim is None:
            return _make_tuple(self._ndim, self._strides)
        if self._ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        return self._strides[_wrap_dim(_dim_arg(dim), self._ndim)]

    def dim(self):
        return self._ndim

    def ndimension(self):
        return self._ndim

    @property
    def ndim(self):
        return self._ndim

    def numel(self):
        if _size_hook is not None:
            return _size_hook(self, "numel", self._numel)
        return self._numel

    def nelement(self):
        return self._numel

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._storage.device

    @property
    def is_cuda(self):
        return self._storage.device._type_code == 1

    @property
    def is_cpu(self):
        return self._storage.device._type_code == 0

    @property
    def is_meta(self):
        return self._storage.device._type_code == 2

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def layout(self):
        return _strided_layout

    def get_device(self):
        """-1 for CPU tensors, the device index otherwise."""
        return self._storage.device._idx if self._storage.device._type_code else -1

    def storage_offset(self):
        return self._offset

    def data_ptr(self):
        # checked: what kernels (device launches, ctypes) take to address the
        # data must not reach past a storage that shrank since this view was made
        if self._storage._kind == STORAGE_WRAPPER:
            return 0            # a wrapper subclass holds no data (torch's: 0)
        cdef char* p = self._ptr()
        return <Py_ssize_t><uintptr_t>p if self._storage._data != NULL else 0

    def untyped_storage(self):
        return self._storage

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._numel * self._dtype.itemsize

    def is_contiguous(self, *, memory_format=None):
        if memory_format is None or memory_format is contiguous_format \
                or memory_format is preserve_format:
            return self._is_contig()
        return _is_contig_format(self, memory_format)

    def is_non_overlapping_and_dense(self):
        return _non_overlapping_and_dense(self)

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return self._dtype.is_complex

    def is_signed(self):
        return self._dtype.is_signed

    @property
    def _base(self):
        return self._view_base

    def _is_view(self):
        return self._view_base is not None

    def _version_counter(self):
        return ptc_version(self)

    @property
    def _version(self):
        return ptc_version(self)

    def _bump_version(self):
        ptc_bump_version(self)

    def _new_version_counter(self):
        """Count this tensor's in-place writes apart from the other tensors
        on its storage (``Tensor.data``, as torch: modifying ``x.data`` in
        place leaves ``x._version``, and so x's saved values, valid)."""
        self._vc = _VersionCounter.__new__(_VersionCounter)

    def _detached(self):
        """``detach()``: a tensor on this one's storage, shape, strides and
        offset, sharing its version counter, outside the graph (no checks:
        the geometry is this tensor's own)."""
        cdef _TensorBase t = _make_tensor(self._storage, self._dtype, self._ndim, self._shape,
                                          self._strides, self._offset)
        t._vc = self._vc
        return t

    def _share_version_counter(self, _TensorBase src):
        """Use ``src``'s version counter (``detach()``, as torch)."""
        self._vc = src._vc

    def is_inference(self):
        """Whether this is an inference tensor (its memory was allocated in
        inference mode), as ``torch.Tensor.is_inference``."""
        return self._storage._inference

    def _ad_meta(self):
        """``(shape, dtype)`` with the shape as a plain tuple: autograd's
        record of an input (cheaper than building a Size)."""
        return (_make_tuple(self._ndim, self._shape), self._dtype)

    def _ad_input(self):
        """``(grad_fn, shape, dtype, version)``: what autograd records of an
        input of an op, in one call (the shape a plain tuple)."""
        return (self._grad_fn, _make_tuple(self._ndim, self._shape), self._dtype,
                ptc_version(self))

    def _is_t2d(self):
        """A 2-D real matrix laid out as the transpose of a contiguous one
        (``W.t()``), both sizes above 1: autograd's matmul formulas compute
        its gradient in that layout, as torch's mm_mat*_backward."""
        return (self._ndim == 2 and not self._dtype.is_complex and self._strides[0] == 1
                and self._strides[1] == self._shape[0] and self._shape[0] > 1
                and self._shape[1] > 1)

    def _meta_is(self, shape, dtype dt):
        """True if this tensor has exactly ``shape`` and dtype ``dt`` (the
        autograd engine's per-gradient check, without building a Size)."""
        cdef Py_ssize_t i
        if self._dtype is not dt or len(shape) != self._ndim:
            return False
        for i in range(self._ndim):
            if <Py_ssize_t>shape[i] != self._shape[i]:
                return False
        return True

    def is_set_to(self, _TensorBase other not None):
        return _same_layout(self, other)

    # -- views --------------------------------------------------------------

    def view(self, *shape, size=None, dtype=None):
        """A view with a new shape (or a reinterpretation as another dtype)."""
        if size is not None or dtype is not None:      # torch's keyword forms
            if shape or (size is None) == (dtype is None):
                raise TypeError("view() takes a shape or a dtype, positionally or as size=/dtype=")
            shape = (size if size is not None else dtype,)
        if len(shape) == 1 and isinstance(shape[0], _DTYPE_TYPE):
            return _view_as_dtype(self, shape[0])
        cdef list newshape = _infer_size(_parse_shape_args(shape, "view"), self._numel)
        strides = _compute_view_strides(self, newshape)
        if strides is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return self._view_lists(newshape, strides, self._offset)

    cdef _TensorBase _view_lists(self, list shape, list strides, Py_ssize_t offset,
                                 int kind=VK_VIEW):
        cdef int nd = len(shape)
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i
        if nd > PT_MAX_DIMS:
            raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
        for i in range(nd):
            sh[i] = shape[i]
            st[i] = strides[i]
        return self._view(nd, sh, st, offset, kind)

    cdef _TensorBase _view_dtype(self, dtype dt):
        cdef int old = self._dtype.itemsize
        cdef int new = dt.itemsize
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i, nd = self._ndim
        if old == new:
            v = self._view(nd, self._shape, self._strides, self._offset)
            (<_TensorBase>v)._dtype = dt
            return v
        if nd == 0:
            raise RuntimeError(
                f"self.dim() cannot be 0 to view {self._dtype!r} as {dt!r} (different element sizes)")
        if self._strides[nd - 1] != 1:
            raise RuntimeError(
                f"self.stride(-1) must be 1 to view {self._dtype!r} as {dt!r} (different element sizes), "
                f"but got {self._strides[nd - 1]}")
        for i in range(nd):
            sh[i] = self._shape[i]
            st[i] = self._strides[i]
        if new > old:
            ratio = new // old
            if sh[nd - 1] % ratio != 0:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {ratio} to view {self._dtype!r} as {dt!r} "
                    f"(different element sizes), but got {sh[nd - 1]}")
            if self._offset % ratio != 0:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {ratio} to view {self._dtype!r} as "
                    f"{dt!r} (different element sizes), but got {self._offset}")
            for i in range(nd - 1):
                if st[i] % ratio != 0:
                    raise RuntimeError(
                        f"self.stride({i}) must be divisible by {ratio} to view {self._dtype!r} as "
                        f"{dt!r} (different element sizes), but got {st[i]}")
                st[i] //= ratio
            sh[nd - 1] //= ratio
            off = self._offset // ratio
        else:
            ratio = old // new
            for i in range(nd - 1):
                st[i] *= ratio
            sh[nd - 1] *= ratio
            off = self._offset * ratio
        v = _make_tensor(self._storage, dt, nd, sh, st, off)
        (<_TensorBase>v)._view_base = self if self._view_base is None else self._view_base
        (<_TensorBase>v)._vc = self._vc
        return v

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *args, shape=None):
        """``view`` when the strides allow it, otherwise a contiguous copy."""
        cdef list newshape = _infer_size(_parse_shape_args(_kw_shape(args, shape, "reshape"),
                                                           "reshape"), self._numel)
        strides = _compute_view_strides(self, newshape)
        if strides is not None:
            return self._view_lists(newshape, strides, self._offset)
        # PyTorch: _unsafe_view(clone): a fresh tensor, not a view (its _base is None),
        # whose node autograd names UnsafeViewBackward0 (view-op code VK_UNSAFE_VIEW)
        cdef _TensorBase c = self.contiguous()
        cdef _TensorBase v = c._view_lists(newshape, _compute_view_strides(c, newshape),
                                           c._offset, VK_UNSAFE_VIEW)
        v._view_base = None
        return v

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def as_strided(self, size, stride, storage_offset=None):
        """A view with explicit sizes, strides (elements) and storage offset."""
        cdef list sh = _int64_list(size, "as_strided", "size")
        cdef list st = _int64_list(stride, "as_strided", "stride")
        cdef Py_ssize_t off = self._offset if storage_offset is None else _symint_arg(storage_offset)
        if len(sh) != len(st):
            raise RuntimeError(
                f"mismatch in length of strides and shape: {len(st)} strides for {len(sh)} dims")
        for s in sh:
            if s < 0:
                raise RuntimeError(f"as_strided: negative size {s} in {_fmt_list(sh)}")
        for s in st:
            if s < 0:
                raise RuntimeError(
                    f"as_strided: Negative strides are not supported at the moment, got strides: {_fmt_list(st)}")
        if off < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {off}")
        _check_in_bounds(self._storage, self._dtype, sh, st, off)
        return self._view_lists(sh, st, off, VK_AS_STRIDED)

    def transpose(self, dim0, dim1):
        """Swap two dimensions (a view)."""
        return self._transpose(dim0, dim1, VK_TRANSPOSE)

    cdef _TensorBase _transpose(self, dim0, dim1, int kind):
        cdef int a = _wrap_dim(_dim_arg(dim0), self._ndim)
        cdef int b = _wrap_dim(_dim_arg(dim1), self._ndim)
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int nd = self._ndim
        memcpy(sh, self._shape, nd * sizeof(Py_ssize_t))
        memcpy(st, self._strides, nd * sizeof(Py_ssize_t))
        if nd:
            sh[a], sh[b] = sh[b], sh[a]
            st[a], st[b] = st[b], st[a]
        return self._view(nd, sh, st, self._offset, kind)

    def swapaxes(self, axis0, axis1):
        """:meth:`transpose` under NumPy's name (and argument names)."""
        return self.transpose(axis0, axis1)

    def swapdims(self, dim0, dim1):
        """:meth:`transpose` under another name (torch's alias, with its own name)."""
        return self.transpose(dim0, dim1)

    def t(self):
        """Transpose a tensor of at most 2 dimensions."""
        if self._ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self._ndim}D")
        if self._ndim < 2:
            return self._view(self._ndim, self._shape, self._strides, self._offset, VK_T)
        return self._transpose(0, 1, VK_T)

    def permute(self, *args, dims=None):
        """Reorder dimensions (a view)."""
        cdef list d = _parse_shape_args(_kw_shape(args, dims, "permute"), "permute")
        cdef int nd = self._ndim
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i, k
        cdef bint seen[PT_MAX_DIMS]
        if len(d) != nd:
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {len(d)}")
        memset(seen, 0, sizeof(seen))
        for i in range(nd):
            k = _wrap_dim(d[i], nd)
            if seen[k]:
                raise RuntimeError("permute(): duplicate dims are not allowed.")
            seen[k] = True
            sh[i] = self._shape[k]
            st[i] = self._strides[k]
        return self._view(nd, sh, st, self._offset, VK_PERMUTE)

    @property
    def T(self):
        if self._ndim == 2:
            # permute (not the C transpose): while a dispatch layer is on it
            # is an entry, so forward AD, vmap and the tracer see the view
            return self.permute(1, 0)
        if self._ndim == 0:           # torch 2.13 warns on 0-D and 1-D tensors, too
            _warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity "
                           "in these cases.", UserWarning, stacklevel=1)
        else:
            _warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
                "to reverse the dimensions of a tensor.", UserWarning, stacklevel=1)
        return self.permute(list(range(self._ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self._ndim == 0:
            _warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                           "these cases.", UserWarning, stacklevel=2)
            return self._view(0, self._shape, self._strides, self._offset, VK_TRANSPOSE)
        if self._ndim < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self._ndim}-D tensor.")
        return self.transpose(-2, -1)

    def movedim(self, source, destination):
        """Move dimension(s) ``source`` to position(s) ``destination``."""
        cdef int nd = self._ndim
        src = [source] if not isinstance(source, (tuple, list)) else list(source)
        dst = [destination] if not isinstance(destination, (tuple, list)) else list(destination)
        if len(src) != len(dst):
            raise RuntimeError(
                f"movedim: Invalid source or destination dims: source ({_fmt_list(src)} dims) should "
                f"contain the same number of dims as destination ({_fmt_list(dst)} dims)")
        src = [_wrap_dim(_dim_arg(s), nd) for s in src]
        dst = [_wrap_dim(_dim_arg(s), nd) for s in dst]
        if len(set(src)) != len(src):
            raise RuntimeError(f"movedim: repeated dim in `source` ({_fmt_list(src)})")
        if len(set(dst)) != len(dst):
            raise RuntimeError(f"movedim: repeated dim in `destination` ({_fmt_list(dst)})")
        if nd == 0:     # dims 0 / -1 of a 0-d tensor name the tensor itself
            return self.permute(())
        order = [-1] * nd
        for s, t in zip(src, dst):
            order[t] = s
        rest = iter([i for i in range(nd) if i not in src])
        for i in range(nd):
            if order[i] == -1:
                order[i] = next(rest)
        return self.permute(order)

    def moveaxis(self, source, destination):
        """:meth:`movedim` under NumPy's name (torch's alias, with its own name)."""
        return self.movedim(source, destination)

    def squeeze(self, dim=_CONTIGUOUS_DEFAULT):
        """Remove size-1 dimensions (all, one, or a tuple of them)."""
        if dim is None:                     # (torch: squeeze() or squeeze(dim), no dim=None)
            raise TypeError("squeeze(): argument 'dim' must be int or tuple of ints, not NoneType")
        if dim is _CONTIGUOUS_DEFAULT:
            dim = None
        cdef int nd = self._ndim
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i, n = 0
        cdef bint drop[PT_MAX_DIMS]
        cdef bint seen[PT_MAX_DIMS]
        cdef int kind = VK_SQUEEZE0 if dim is None else (
            VK_SQUEEZE2 if isinstance(dim, (tuple, list)) else VK_SQUEEZE1)
        memset(drop, 0, sizeof(drop))
        if dim is None:
            for i in range(nd):
                drop[i] = self._shape[i] == 1
        elif kind == VK_SQUEEZE1:
            # (torch's squeeze takes a one-element tensor or array as a dim list; not a bool)
            i = _wrap_dim(_dim_arg(dim) if isinstance(dim, bool) else _operator.index(dim), nd)
            if nd and self._shape[i] == 1:
                drop[i] = True
        else:
            memset(seen, 0, sizeof(seen))
            for d in dim:
                i = _wrap_dim(_operator.index(d), nd)
                if seen[i]:
                    raise RuntimeError(f"dim {i} appears multiple times in the list of dims")
                seen[i] = True
                if nd and self._shape[i] == 1:
                    drop[i] = True
        for i in range(nd):
            if not drop[i]:
                sh[n] = self._shape[i]
                st[n] = self._strides[i]
                n += 1
        return self._view(n, sh, st, self._offset, kind)

    def unsqueeze(self, dim):
        """Insert a size-1 dimension at ``dim`` (a view)."""
        cdef int nd = self._ndim
        cdef Py_ssize_t d = _dim_arg(dim)
        if d < -nd - 1 or d > nd:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-nd - 1}, {nd}], but got {d})")
        if d < 0:
            d += nd + 1
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i
        if nd + 1 > PT_MAX_DIMS:
            raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
        for i in range(d):
            sh[i] = self._shape[i]
            st[i] = self._strides[i]
        sh[d] = 1
        st[d] = self._shape[d] * self._strides[d] if d < nd else 1
        for i in range(d, nd):
            sh[i + 1] = self._shape[i]
            st[i + 1] = self._strides[i]
        return self._view(nd + 1, sh, st, self._offset, VK_UNSQUEEZE)

    def flatten(self, start_dim=0, end_dim=-1):
        """Merge dimensions ``start_dim..end_dim`` (a view when possible)."""
        cdef int nd = self._ndim
        cdef int s = _wrap_dim(_dim_arg(start_dim), nd)    # a 0-d tensor: [-1, 0]
        cdef int e = _wrap_dim(_dim_arg(end_dim), nd)
        if nd == 0:
            return self.reshape(1)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if s == e:
            return self         # torch returns the tensor itself
        shape = [self._shape[i] for i in range(s)]
        n = 1
        for i in range(s, e + 1):
            n *= self._shape[i]
        shape.append(n)
        shape.extend(self._shape[i] for i in range(e + 1, nd))
        return self.reshape(shape)

    def unflatten(self, dim, sizes):
        """Split dimension ``dim`` into ``sizes`` (one entry may be -1)."""
        cdef int nd = self._ndim
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        if nd == 0:
            raise RuntimeError("unflatten got an unexpected error:\nDimension specified as "
                               f"{d} but tensor has no dimensions")
        sizes = [_operator.index(s) for s in sizes]
        if len(sizes) == 0:
            raise RuntimeError("unflatten: sizes must be non-empty")
        n = self._shape[d] if nd else 1
        try:
            sizes = _infer_size(sizes, n)
        except RuntimeError:
            raise RuntimeError(
                f"unflatten: Provided sizes {_fmt_list(sizes)} don't multiply up to the size of dim "
                f"{dim} ({n}) in the input tensor") from None
        shape = [self._shape[i] for i in range(d)] + sizes + [self._shape[i] for i in range(d + 1, nd)]
        return self.view(shape)

    def expand(self, *sizes, size=None, implicit=False):
        """Broadcast size-1 dimensions to ``sizes`` without copying (-1 keeps a size).
        (``implicit``, torch's internal marker of an expand it inserted, changes nothing.)"""
        cdef list target = _parse_shape_args(_kw_shape(sizes, size, "expand"), "expand")
        cdef int nd = self._ndim
        cdef int n = len(target)
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i, j
        if n < nd:
            raise RuntimeError(
                f"expand({self._dtype._legacy}Tensor{{{_fmt_list(self.shape)}}}, size={_fmt_list(target)}): the number "
                f"of sizes provided ({n}) must be greater or equal to the number of dimensions in the tensor ({nd})")
        if n > PT_MAX_DIMS:
            raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
        for i in range(n - 1, -1, -1):
            j = i - (n - nd)
            s = target[i]
            if j >= 0:
                if s == -1:
                    s = self._shape[j]
                if self._shape[j] == s:
                    sh[i] = s
                    st[i] = self._strides[j]
                elif self._shape[j] == 1:
                    if s < 0:
                        raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_fmt_list(target)}")
                    sh[i] = s
                    st[i] = 0
                else:
                    raise RuntimeError(
                        f"The expanded size of the tensor ({s}) must match the existing size "
                        f"({self._shape[j]}) at non-singleton dimension {i}.  Target sizes: "
                        f"{_fmt_list(target)}.  Tensor sizes: {_fmt_list(self.shape)}")
            else:
                if s == -1:
                    raise RuntimeError(
                        f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}")
                if s < 0:
                    raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_fmt_list(target)}")
                sh[i] = s
                # a new size-1 dim gets the stride a contiguous layout would give it
                st[i] = <Py_ssize_t>(<uint64_t>sh[i + 1] * <uint64_t>st[i + 1]) if (s == 1 and i + 1 < n) else 0
        return self._view(n, sh, st, self._offset, VK_EXPAND)

    def expand_as(self, other):
        return self.expand(other.shape)

    def broadcast_to(self, size):
        return self.expand(size)

    def narrow(self, dim, start, length):
        """Elements ``start .. start+length`` of dimension ``dim`` (a view)."""
        return self._narrow(dim, start, length, VK_SLICE)

    cdef _TensorBase _narrow(self, dim, start, length, int kind):
        cdef int nd = self._ndim
        if nd == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        if isinstance(start, _TensorBase):
            # torch's narrow.Tensor overload: only a 0-d integral (non-bool) tensor
            if (<_TensorBase>start)._ndim != 0 or start.dtype.is_floating_point \
                    or start.dtype.is_complex or start.dtype is bool_:
                raise RuntimeError("start must be an 0-dim integral Tensor.")
            start = start.item()
        cdef Py_ssize_t s = _symint_arg(start)
        cdef Py_ssize_t n = _symint_arg(length)
        cdef Py_ssize_t size = self._shape[d]
        if n < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if s < -size or s > size:
            raise IndexError(
                f"start out of range (expected to be in range of [{-size}, {size}], but got {s})")
        if s < 0:
            s += size
        if n > size - s:                    # (s + n could wrap past int64)
            raise RuntimeError(f"start ({s}) + length ({n}) exceeds dimension size ({size}).")
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        memcpy(sh, self._shape, nd * sizeof(Py_ssize_t))
        sh[d] = n
        return self._view(nd, sh, self._strides, self._offset + s * self._strides[d], kind)

    def select(self, dim, index):
        """Index ``index`` along ``dim``, removing that dimension (a view)."""
        cdef int nd = self._ndim
        if nd == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        return self._select(d, _symint_arg(index))

    cdef _TensorBase _select(self, int d, Py_ssize_t i, int kind=VK_SELECT):
        cdef int nd = self._ndim
        cdef Py_ssize_t size = self._shape[d]
        if i < -size or i >= size:
            raise IndexError(
                f"select(): index {i} out of range for tensor of size {_fmt_list(self.shape)} at dimension {d}")
        if i < 0:
            i += size
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int k, n = 0
        for k in range(nd):
            if k != d:
                sh[n] = self._shape[k]
                st[n] = self._strides[k]
                n += 1
        return self._view(nd - 1, sh, st, self._offset + i * self._strides[d], kind)

    def unbind(self, dim=0):
        """All slices along ``dim`` as a tuple of views."""
        cdef int nd = self._ndim
        if nd == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        cdef Py_ssize_t n = self._shape[d]
        _check_pieces("unbind", n)
        # recording: one node for all the slices (PyTorch's UnbindBackward0, whose
        # backward stacks the slices' gradients) where autograd takes it, as split's
        cdef bint grouped = _split_hook is not None and self._requires_grad and n > 1
        out = tuple(self._select(d, i, -VK_UNBIND if grouped else VK_UNBIND) for i in range(n))
        if grouped and not _split_hook(self, out, d, VK_UNBIND):
            for v in out:
                _view_hook(self, v, VK_UNBIND)
        return out

    def split(self, split_size=None, dim=0, *, split_size_or_sections=None):
        """Split into chunks of ``split_size`` (int) or of the listed sizes (``ptcore.split``'s
        keyword, as torch.split's, is ``split_size_or_sections``)."""
        if split_size_or_sections is not None:
            if split_size is not None:
                raise TypeError("split() got split_size and split_size_or_sections")
            split_size = split_size_or_sections
        elif split_size is None:
            raise TypeError("split() missing 1 required positional argument: 'split_size'")
        cdef int nd = self._ndim
        if nd == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        cdef Py_ssize_t size = self._shape[d]
        cdef int kind = VK_SPLIT
        if isinstance(split_size, (list, tuple)):
            kind = VK_SPLIT_SIZES
            sizes = _int64_list(split_size, "split_with_sizes", "split_sizes")
            if sum(sizes) != size or any(s < 0 for s in sizes):
                raise RuntimeError(
                    f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                    f"size at dimension {d}), but got split_sizes={_fmt_list(sizes)}")
        else:
            if isinstance(split_size, (bool, _np.ndarray, _np.generic)):
                raise TypeError(f"split(): split_size must be an int or a list of ints, got "
                                f"{_typename(split_size)}")
            step = _operator.index(split_size)
            if step < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
            if step == 0:
                if size != 0:
                    raise RuntimeError(
                        f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
                return (self._narrow(d, 0, 0, kind),)
            _check_pieces("split", size // step)
            sizes = [step] * (size // step)
            if size % step or size == 0:
                sizes.append(size % step)
        out = []
        start = 0
        # recording: one node for all the pieces (PyTorch's SplitBackward0,
        # whose backward concatenates the pieces' gradients) where autograd
        # takes it, else one view node per piece
        cdef bint grouped = _split_hook is not None and self._requires_grad and len(sizes) > 1
        for s in sizes:
            out.append(self._narrow(d, start, s, -kind if grouped else kind))
            start += s
        if grouped and not _split_hook(self, out, d, kind):
            for v in out:
                _view_hook(self, v, kind)
        return tuple(out)

    def split_with_sizes(self, split_sizes, dim=0):
        return self.split(list(split_sizes), dim)

    def chunk(self, chunks, dim=0):
        """Split into at most ``chunks`` pieces of equal size (the last may be smaller)."""
        cdef int nd = self._ndim
        if nd == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        chunks = _dim_arg(chunks)
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        size = self._shape[d]
        step = (size + chunks - 1) // chunks
        if step == 0:
            _check_pieces("chunk", chunks)
            return tuple(self.narrow(d, 0, 0) for _ in range(chunks))
        return self.split(step, d)

    def tensor_split(self, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                     tensor_indices_or_sections=None):
        """NumPy's array_split: ``n`` nearly equal sections, or split before the given indices.
        torch's keyword forms: ``sections=`` (an int), ``indices=`` (a sequence) or
        ``tensor_indices_or_sections=`` (an int64 tensor), one of them."""
        cdef int given = ((indices_or_sections is not None) + (sections is not None)
                          + (indices is not None) + (tensor_indices_or_sections is not None))
        if given != 1:
            raise TypeError("tensor_split() takes one of indices_or_sections, sections, indices "
                            f"and tensor_indices_or_sections (got {given})")
        if sections is not None:
            if isinstance(sections, (_TensorBase, list, tuple)) or isinstance(sections, bool):
                raise TypeError(f"tensor_split(): argument 'sections' must be int, not "
                                f"{_typename(sections)}")
            indices_or_sections = _operator.index(sections)
        elif indices is not None:
            if isinstance(indices, _TensorBase) or not hasattr(indices, "__len__"):
                raise TypeError(f"tensor_split(): argument 'indices' must be tuple of ints, not "
                                f"{_typename(indices)}")
            indices_or_sections = list(indices)
        elif tensor_indices_or_sections is not None:
            if not isinstance(tensor_indices_or_sections, _TensorBase):
                raise TypeError("tensor_split(): argument 'tensor_indices_or_sections' must be "
                                f"Tensor, not {_typename(tensor_indices_or_sections)}")
            indices_or_sections = tensor_indices_or_sections
        cdef int nd = self._ndim
        if nd == 0:
            raise RuntimeError(
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        cdef int d = _wrap_dim(_dim_arg(dim), nd)
        size = self._shape[d]
        cdef _TensorBase t
        if isinstance(indices_or_sections, _TensorBase):
            t = indices_or_sections
            if t._dtype is not int64:
                raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                                   f"of long, but got {t._dtype._legacy}")
            if t._ndim > 1:
                raise RuntimeError(
                    "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                    f"one-dimensional tensor, but got a tensor with {t._ndim} dims")
            indices_or_sections = t.item() if t._ndim == 0 else t.tolist()
        if isinstance(indices_or_sections, (list, tuple)):
            out = []
            start = 0
            for idx in indices_or_sections:     # PyTorch: slice(start, idx), then start = idx
                idx = _operator.index(idx)
                out.append(_slice_dim(self, d, start, idx))
                start = idx
            out.append(_slice_dim(self, d, start, size))
            return tuple(out)
        n = _operator.index(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        _check_pieces("tensor_split", n)
        q, r = divmod(size, n)
        out = []
        start = 0
        for i in range(n):
            length = q + (1 if i < r else 0)
            out.append(self.narrow(d, start, length))
            start += length
        return tuple(out)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The diagonal of the (dim1, dim2) planes as a view, appended as the last dimension."""
        cdef int nd = self._ndim
        cdef int a = _wrap_dim(_dim_arg(dim1), nd if nd else 1)
        cdef int b = _wrap_dim(_dim_arg(dim2), nd if nd else 1)
        if nd < 2:
            raise RuntimeError(f"diagonal dimensions requested: tensor has {nd} dims, need at least 2")
        if a == b:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        cdef Py_ssize_t off = _dim_arg(offset)
        cdef Py_ssize_t n, start = self._offset
        if off >= 0:
            n = max(min(self._shape[a], self._shape[b] - off), 0)
            if n > 0:
                start += off * self._strides[b]
        else:
            n = max(min(self._shape[a] + off, self._shape[b]), 0)
            if n > 0:
                start -= off * self._strides[a]
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i, k = 0
        for i in range(nd):
            if i != a and i != b:
                sh[k] = self._shape[i]
                st[k] = self._strides[i]
                k += 1
        sh[k] = n
        st[k] = self._strides[a] + self._strides[b]
        return self._view(nd - 1, sh, st, start, VK_DIAGONAL)

    def unfold(self, dimension, size, step):
        """Sliding windows of ``size`` with ``step`` along ``dimension``, as a new last dim."""
        cdef int nd = self._ndim
        cdef int d = _wrap_dim(_dim_arg(dimension), nd)     # a 0-d tensor: [-1, 0]
        cdef Py_ssize_t w = _dim_arg(size)
        cdef Py_ssize_t s = _dim_arg(step)
        cdef Py_ssize_t dimsize = self._shape[d] if nd else 1
        cdef Py_ssize_t dimstride = self._strides[d] if nd else 1
        if w > dimsize:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {dimsize} but size is {w}")
        if w < 0:
            raise RuntimeError(f"size is {w} but must be >= 0")
        if s <= 0:
            raise RuntimeError(f"step is {s} but must be > 0")
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int i
        for i in range(nd):
            sh[i] = self._shape[i]
            st[i] = self._strides[i]
        if nd:
            sh[d] = (dimsize - w) // s + 1
            # a step past the end leaves one window: its stride is never used and
            # wraps as PyTorch's does (no signed-overflow UB)
            st[d] = <Py_ssize_t>(<uint64_t>s * <uint64_t>dimstride)
        sh[nd if nd else 0] = w
        st[nd if nd else 0] = dimstride
        return self._view(nd + 1 if nd else 1, sh, st, self._offset, VK_UNFOLD)

    # -- indexing -------------------------------------------------------------

    def __getitem__(self, idx):
        if type(idx) is int:
            if self._ndim == 0:
                raise IndexError(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            return self._select_index(0, _symint_arg(idx))
        cdef tuple items = idx if type(idx) is tuple else (idx,)
        if type(idx) is tuple and _count_ellipses(items) > 1:
            idx = items = _drop_extra_ellipses(items, self._ndim)
        for it in items:
            # a bool index is an (advanced) mask in PyTorch: the result is a copy
            if type(it) is bool or not _is_basic_index(it):
                if type(it) is bool or isinstance(it, (_TensorBase, list, _np.ndarray, _np.bool_)) \
                        or not hasattr(it, "__index__"):
                    if _advanced_getitem is None:
                        raise IndexError(f"unsupported index type {_typename(it)}")
                    return _advanced_getitem(self, idx)
        return self._basic_index(items, type(idx) is slice)

    cdef _TensorBase _select_index(self, int d, Py_ssize_t i):
        cdef Py_ssize_t size = self._shape[d]
        if i < -size or i >= size:
            raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
        return self._select(d, i)

    cdef _TensorBase _basic_index(self, tuple items, bint bare=False):
        """View for a tuple of ints/slices/None/Ellipsis; ``bare``: the index
        was a lone slice (always a slice op for autograd, as in PyTorch)."""
        cdef int nd = self._ndim
        cdef int consumed = 0, n_ell = 0
        cdef int kind = VK_SLICE if bare else VK_ALIAS
        cdef Py_ssize_t sh[PT_MAX_DIMS]
        cdef Py_ssize_t st[PT_MAX_DIMS]
        cdef int out = 0, src = 0, k
        cdef Py_ssize_t offset = self._offset, size, start, stop, step, length, i
        for it in items:
            if it is Ellipsis:
                n_ell += 1
            elif it is not None and type(it) is not bool:
                consumed += 1
        if n_ell > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if consumed > nd:
            raise IndexError(f"too many indices for tensor of dimension {nd}")
        for it in items:
            if out >= PT_MAX_DIMS:
                raise IndexError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
            if it is None or type(it) is bool:
                sh[out] = 0 if it is False else 1
                st[out] = self._shape[src] * self._strides[src] if src < nd else 1
                out += 1
                kind = VK_UNSQUEEZE
            elif it is Ellipsis:
                for k in range(nd - consumed):
                    if out >= PT_MAX_DIMS:
                        raise IndexError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
                    sh[out] = self._shape[src]
                    st[out] = self._strides[src]
                    out += 1
                    src += 1
            elif type(it) is slice:
                size = self._shape[src]
                if (<slice>it).step is not None:
                    step = _operator.index((<slice>it).step)
                    if step <= 0:
                        raise ValueError("step must be greater than zero")
                start, stop, step = (<slice>it).indices(size)
                length = (stop - start + step - 1) // step if stop > start else 0
                sh[out] = length
                st[out] = self._strides[src] * step
                offset += start * self._strides[src]    # even when empty, as PyTorch's slice
                if bare or start != 0 or step != 1 or length != size:
                    kind = VK_SLICE
                out += 1
                src += 1
            else:
                try:
                    i = _operator.index(it)
                except OverflowError:       # (a NumPy uint64 past int64: torch's ValueError)
                    raise IntArgOverflowError("Overflow when unpacking long long") from None
                size = self._shape[src]
                if i < -size or i >= size:
                    raise IndexError(f"index {i} is out of bounds for dimension {src} with size {size}")
                if i < 0:
                    i += size
                offset += i * self._strides[src]
                src += 1
                kind = VK_SELECT
        while src < nd:
            if out >= PT_MAX_DIMS:
                raise IndexError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
            sh[out] = self._shape[src]
            st[out] = self._strides[src]
            out += 1
            src += 1
        return self._view(out, sh, st, offset, kind)

    def __setitem__(self, idx, value):
        cdef tuple items = idx if type(idx) is tuple else (idx,)
        if not isinstance(value, _SETITEM_VALUE_TYPES):
            _refuse_setitem_value(self, value)
        if idx is False:
            return          # torch: selects nothing, whatever the value's shape
        if type(idx) is tuple and _count_ellipses(items) > 1:
            idx = items = _drop_extra_ellipses(items, self._ndim)
        cdef int nbool = 0
        for it in items:
            if type(it) is bool:
                nbool += 1
            if not _is_basic_index(it) or nbool > 1:
                # (one Python bool is a new dim of size 1 or 0, as a view; several are
                # advanced indices broadcast together, as torch: x[False, 1, True] = v)
                if nbool > 1 or isinstance(it, (_TensorBase, list, _np.ndarray, _np.bool_)) \
                        or not hasattr(it, "__index__"):
                    if _advanced_setitem is None:
                        raise IndexError(f"unsupported index type {_typename(it)}")
                    _advanced_setitem(self, idx, value)
                    return
        if _inplace_hook is not None and self._requires_grad:
            _inplace_hook(self, "__setitem__")
        cdef _TensorBase dst = self._basic_index(items)
        _assign(dst, value)
        ptc_bump_version(self)

    # -- copying --------------------------------------------------------------

    def copy_(self, other, non_blocking=False):
        """Copy ``other`` (broadcast, converted) into this tensor in place (torch 2.13 names
        the argument ``other``)."""
        src = other
        src = _number_as_tensor(src)
        if not isinstance(src, _TensorBase):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not {_typename(src)}")
        if (<_TensorBase>src)._storage.device._type_code != 0 or self._storage.device._type_code != 0:
            return _device_copy(self, src, non_blocking)
        if _inplace_hook is not None and self._requires_grad:
            _inplace_hook(self, "copy_")
        _check_partial_overlap(self, <_TensorBase>src)
        _warn_complex_to_real((<_TensorBase>src)._dtype, self._dtype)
        _copy_into(self, <_TensorBase>src)
        ptc_bump_version(self)
        return self

    def fill_(self, value):
        """Fill with a scalar in place."""
        if isinstance(value, _TensorBase) and (<_TensorBase>value)._ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {(<_TensorBase>value)._ndim} dimensions.")
        if self._storage.device._type_code != 0:
            return _device_fill(self, value)
        if _inplace_hook is not None and self._requires_grad:
            _inplace_hook(self, "fill_")
        _fill(self, value)
        ptc_bump_version(self)
        return self

    def zero_(self):
        """Fill with zeros in place."""
        return self.fill_(0)

    def contiguous(self, memory_format=_CONTIGUOUS_DEFAULT):
        """Self if already contiguous, else a contiguous copy."""
        if memory_format is None:           # (torch's memory_format here is not optional)
            raise TypeError("contiguous(): argument 'memory_format' must be torch.memory_format, "
                            "not NoneType")
        if memory_format is _CONTIGUOUS_DEFAULT:
            memory_format = contiguous_format
        if memory_format is not None and memory_format is not contiguous_format \
                and memory_format is not preserve_format:
            if _is_contig_format(self, memory_format):     # torch: self when already so
                return self
            return _grad_wrap(self, _to_memory_format(self, memory_format), "contiguous")
        if self._is_contig():
            return self
        if memory_format is preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        if self._storage.device._type_code != 0:
            return _device_clone(self, False)
        return _grad_wrap(self, _clone_contig(self), "contiguous")

    def clone(self, memory_format=None):
        """A copy with its own storage (keeps a dense layout, as PyTorch)."""
        if self._storage.device._type_code != 0:
            return _device_clone(self, memory_format is None or memory_format is preserve_format)
        if memory_format is None or memory_format is preserve_format:
            out = _convert(self, self._dtype, True)
        elif memory_format is contiguous_format:
            out = _clone_contig(self)
        else:
            out = _to_memory_format(self._clone_contig_method(), memory_format)
        return _grad_wrap(self, out, "clone")

    def _clone_contig_method(self):
        return _clone_contig(self)

    def _to_dtype(self, dtype dt, bint copy=False):
        """Internal: convert dtype (no autograd)."""
        if dt is self._dtype and not copy:
            return self
        return _convert(self, dt, True)

    # -- Python scalars -------------------------------------------------------

    def item(self):
        """The single value of a one-element tensor as a Python number."""
        if self._numel != 1:
            raise RuntimeError(f"a Tensor with {self._numel} elements cannot be converted to Scalar")
        if self._storage._data == NULL and self._storage._kind != STORAGE_META:
            raise RuntimeError("The tensor has a non-zero number of elements, but its data is not "
                               "allocated yet.")
        if self._storage.device._type_code != 0:
            return _device_item(self)
        return _read_scalar(self._ptr(), self._dtype.num)

    def tolist(self):
        """Nested Python lists of the values (a number for a 0-d tensor)."""
        if self._numel and self._storage._data == NULL and self._storage._kind != STORAGE_META:
            raise RuntimeError("tolist() shouldn't be called on a tensor with unallocated storage")
        if self._storage.device._type_code != 0:
            return self.cpu().tolist()
        cdef char* p = self._ptr()
        if self._ndim == 0:
            return _read_scalar(p, self._dtype.num)
        # Python numbers straight from the strided buffer: float for the
        # floating types, int, bool, complex (torch's types).  The geometry is
        # copied first and the walk is a kernel section: making the Python
        # numbers may run other threads (a garbage collection's finalizers).
        cdef int nd = self._ndim
        cdef Py_ssize_t geo[2 * PT_MAX_DIMS]
        memcpy(geo, self._shape, nd * sizeof(Py_ssize_t))
        memcpy(geo + PT_MAX_DIMS, self._strides, nd * sizeof(Py_ssize_t))
        ptc_kernel_enter()
        try:
            return _tolist_dims(p, self._dtype.num, self._dtype.itemsize, 0, nd, geo,
                                geo + PT_MAX_DIMS)
        finally:
            ptc_kernel_exit()

    def __len__(self):
        if self._ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if self._ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        # torch: ``element in t`` is ``(element == t).any()``, whatever t's shape
        # (not a walk over t's rows, which a 0-d tensor does not have)
        if isinstance(element, (_TensorBase, _numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")

    def __bool__(self):
        if self._numel == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if self._numel != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __int__(self):
        if self._numel != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if isinstance(v, complex):
            # torch's checked conversion to int64 (a real part of NaN, inf or beyond
            # int64 does not fit either)
            if v.imag != 0 or not (-9.2233720368547758e18 <= v.real < 9.2233720368547758e18):
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            v = v.real
        return int(v)

    def __float__(self):
        if self._numel != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._requires_grad:        # torch warns on float() only (not item/int/format)
            if _grad_mode_on():
                _warnings.warn(
                    "Converting a tensor with requires_grad=True to a scalar may lead to "
                    "unexpected behavior.\nConsider using tensor.detach() first.", UserWarning,
                    stacklevel=1)
        v = self.item()
        if isinstance(v, complex):
            if v.imag != 0:
                raise RuntimeError("value cannot be converted to type double without overflow")
            v = v.real
        return float(v)

    def __complex__(self):
        if self._numel != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def __index__(self):
        if self._dtype._category > 1 or self._numel != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())         # a bool tensor gives an int, as torch (not a bool)

    def __hash__(self):
        return id(self)

    # -- NumPy, buffers ---------------------------------------------------------

    cdef object _as_numpy(self):
        """Zero-copy NumPy view of a CPU tensor (no autograd checks)."""
        cdef object npd = self._dtype._np
        if npd is None:
            raise TypeError(f"Got unsupported ScalarType {self._dtype._legacy}")
        cdef char* p = self._ptr()      # (RuntimeError when the storage no longer covers it)
        if self._numel and p == NULL and self._storage._kind != STORAGE_META:
            raise RuntimeError("The tensor has a non-zero number of elements, but its data is not "
                               "allocated yet.")
        cdef int i, nd = self._ndim
        cdef int isz = self._dtype.itemsize
        cdef int cat = self._dtype._category
        cdef ptc_array_interface* inter = <ptc_array_interface*>PyMem_Malloc(
            sizeof(ptc_array_interface) + 2 * nd * sizeof(Py_ssize_t))
        if inter == NULL:
            raise MemoryError()
        inter.shape = <Py_ssize_t*>(inter + 1)
        inter.strides = inter.shape + nd
        for i in range(nd):
            inter.shape[i] = self._shape[i]
            inter.strides[i] = self._strides[i] * isz
        inter.two = 2
        inter.nd = nd
        inter.typekind = (b"b" if cat == 0 else (b"i" if self._dtype.is_signed else b"u") if cat == 1
                          else b"f" if cat == 2 else b"c")[0]
        inter.itemsize = isz
        inter.flags = PTC_ARR_FLAGS
        inter.data = p if self._storage._data != NULL else <void*>&_empty_data
        inter.descr = <PyObject*>npd      # the dtype itself (NumPy's descr converter takes it)
        cdef _ArrayExport e = _ArrayExport.__new__(_ArrayExport)
        e._inter = inter
        # the export holds the storage itself (set_ or .data = may move the tensor
        # to another storage); while it lives the storage refuses resize_, as
        # PyTorch's does after numpy()
        e._tensor = self
        e._st = self._storage
        self._storage._nexports += 1
        return _np.asarray(e)

    def numpy(self, *, force=False):
        """A NumPy array sharing this tensor's memory (CPU tensors)."""
        if force:
            t = self.detach() if self._requires_grad else self
            if (<_TensorBase>t)._storage.device._type_code != 0:
                t = t.cpu()
            if (<_TensorBase>t)._dtype.num == PT_BFLOAT16:
                raise TypeError(f"Got unsupported ScalarType BFloat16")
            return (<_TensorBase>t)._as_numpy()
        if self._requires_grad:
            # torch refuses only while grad mode is on (a custom Function's
            # forward, or a no_grad block, may hand the data to NumPy)
            if _grad_mode_on():
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                                   "tensor.detach().numpy() instead.")
        if self._storage.device._type_code != 0:
            raise TypeError(
                f"can't convert {self._storage.device} device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first.")
        return self._as_numpy()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        if self._storage.device._type_code != 0:
            raise BufferError(f"cannot export a buffer of a {self._storage.device} tensor")
        if self._requires_grad:
            raise BufferError(
                "Can't export a buffer of a Tensor that requires grad. Use tensor.detach() first.")
        fmt = _BUFFER_FORMATS.get(self._dtype.num)
        if fmt is None:
            raise BufferError(f"{self._dtype!r} has no buffer-protocol format")
        cdef char* p = self._ptr()      # (RuntimeError when the storage no longer covers it)
        if self._numel and p == NULL:
            raise BufferError("the tensor's storage has no memory (it was resized to 0 bytes)")
        cdef Py_ssize_t* dims = <Py_ssize_t*>PyMem_Malloc((2 * self._ndim + 1) * sizeof(Py_ssize_t))
        if dims == NULL:
            raise MemoryError()
        cdef int i
        for i in range(self._ndim):
            dims[i] = self._shape[i]
            dims[self._ndim + i] = self._strides[i] * self._dtype.itemsize
        # dims[2 * ndim] holds a reference to the storage for the buffer's lifetime
        dims[2 * self._ndim] = <Py_ssize_t><PyObject*>self._storage
        Py_INCREF(self._storage)
        self._storage._nexports += 1
        buffer.buf = p
        buffer.obj = self
        buffer.len = self._numel * self._dtype.itemsize
        buffer.itemsize = self._dtype.itemsize
        buffer.readonly = 0
        buffer.ndim = self._ndim
        buffer.format = <char*>(<bytes>fmt) if (flags & PyBUF_FORMAT) else NULL
        buffer.shape = dims
        buffer.strides = dims + self._ndim
        buffer.suboffsets = NULL
        buffer.internal = dims

    def __releasebuffer__(self, Py_buffer* buffer):
        cdef Py_ssize_t* dims = <Py_ssize_t*>buffer.internal
        cdef Storage st
        if dims != NULL:
            st = <Storage><PyObject*>dims[2 * buffer.ndim]
            st._nexports -= 1
            Py_DECREF(st)
        PyMem_Free(buffer.internal)

    def __dlpack_device__(self):
        cdef device dev = self._storage.device
        if dev._type_code == 0:
            return (1, 0)
        if dev._type_code == 2:
            raise ValueError("Unknown device type meta for Dlpack")
        return (2, dev._idx if dev._idx >= 0 else 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export as a DLPack capsule (versioned when the consumer allows it)."""
        return _dlpack_export(self, stream, max_version, dl_device, copy)

    # -- pickling / copying -----------------------------------------------------

    def __reduce_ex__(self, proto):
        return _reduce_tensor(self)

    def __deepcopy__(self, memo):
        return _deepcopy_tensor(self, memo)


include "_tensor_hooks.pxi"
include "_tensor_layouts.pxi"
include "_tensor_pickle.pxi"
include "_tensor_factories.pxi"
include "_tensor_rebind.pxi"
