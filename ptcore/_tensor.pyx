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
import operator as _operator
import re as _re
import warnings as _warnings


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

# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

cdef list _DTYPES = [None] * PT_NUM_TYPES
cdef dict _DTYPE_BY_NAME = {}


@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class dtype:
    """A tensor element type (``ptcore.float32`` ...), as ``torch.dtype``."""

    def __init__(self, *args, **kwargs):
        raise TypeError("cannot create 'ptcore.dtype' instances; use ptcore.float32, ptcore.int64, ...")

    def __repr__(self):
        return "ptcore." + self._name

    def __reduce__(self):
        return (_dtype_from_name, (self._name,))

    def to_real(self):
        """The real counterpart of a complex dtype (identity otherwise)."""
        if self.num == PT_COMPLEX64:
            return _DTYPES[PT_FLOAT32]
        if self.num == PT_COMPLEX128:
            return _DTYPES[PT_FLOAT64]
        if self.num == PT_COMPLEX32:
            return _DTYPES[PT_FLOAT16]
        return self

    def to_complex(self):
        """The complex counterpart of a floating dtype."""
        if self.num == PT_FLOAT64:
            return _DTYPES[PT_COMPLEX128]
        if self.num == PT_FLOAT16:
            return _DTYPES[PT_COMPLEX32]
        if self.num in (PT_FLOAT32, PT_BFLOAT16):
            return _DTYPES[PT_COMPLEX64]
        if self.is_complex:
            return self
        raise RuntimeError(f"Unknown Complex ScalarType for {self._legacy}")


cdef dtype _new_dtype(int num, str name, int itemsize, int category, bint signed,
                      object np_dtype, str legacy):
    cdef dtype d = dtype.__new__(dtype)
    d.num = num
    d._name = name
    d.itemsize = itemsize
    d._category = category
    d.is_floating_point = category == 2
    d.is_complex = category == 3
    d.is_signed = signed
    d._np = np_dtype
    d._legacy = legacy
    _DTYPES[num] = d
    _DTYPE_BY_NAME[name] = d
    return d


bool_ = _new_dtype(PT_BOOL, "bool", 1, 0, False, _np.dtype(_np.bool_), "Bool")
uint8 = _new_dtype(PT_UINT8, "uint8", 1, 1, False, _np.dtype(_np.uint8), "Byte")
int8 = _new_dtype(PT_INT8, "int8", 1, 1, True, _np.dtype(_np.int8), "Char")
int16 = _new_dtype(PT_INT16, "int16", 2, 1, True, _np.dtype(_np.int16), "Short")
int32 = _new_dtype(PT_INT32, "int32", 4, 1, True, _np.dtype(_np.int32), "Int")
int64 = _new_dtype(PT_INT64, "int64", 8, 1, True, _np.dtype(_np.int64), "Long")
float16 = _new_dtype(PT_FLOAT16, "float16", 2, 2, True, _np.dtype(_np.float16), "Half")
bfloat16 = _new_dtype(PT_BFLOAT16, "bfloat16", 2, 2, True, None, "BFloat16")
float32 = _new_dtype(PT_FLOAT32, "float32", 4, 2, True, _np.dtype(_np.float32), "Float")
float64 = _new_dtype(PT_FLOAT64, "float64", 8, 2, True, _np.dtype(_np.float64), "Double")
complex64 = _new_dtype(PT_COMPLEX64, "complex64", 8, 3, True, _np.dtype(_np.complex64), "ComplexFloat")
complex128 = _new_dtype(PT_COMPLEX128, "complex128", 16, 3, True, _np.dtype(_np.complex128), "ComplexDouble")
# ComplexHalf: no NumPy dtype (``.numpy()`` refuses it, as PyTorch)
complex32 = _new_dtype(PT_COMPLEX32, "complex32", 4, 3, True, None, "ComplexHalf")
# PyTorch's limited unsigned types: creation, copy/cast, NumPy both ways,
# eq/ne, bitwise and/or/xor, mul, sort; most other kernels refuse them
uint16 = _new_dtype(PT_UINT16, "uint16", 2, 1, False, _np.dtype(_np.uint16), "UInt16")
uint32 = _new_dtype(PT_UINT32, "uint32", 4, 1, False, _np.dtype(_np.uint32), "UInt32")
uint64 = _new_dtype(PT_UINT64, "uint64", 8, 1, False, _np.dtype(_np.uint64), "UInt64")
# PyTorch's 8-bit floating types (no NumPy dtype; they promote with no other type):
# creation, copy/cast, views, indexing; most kernels refuse them, as PyTorch's CPU kernels
float8_e4m3fn = _new_dtype(PT_FLOAT8_E4M3FN, "float8_e4m3fn", 1, 2, True, None, "Float8_e4m3fn")
float8_e5m2 = _new_dtype(PT_FLOAT8_E5M2, "float8_e5m2", 1, 2, True, None, "Float8_e5m2")
float8_e4m3fnuz = _new_dtype(PT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 1, 2, True, None,
                             "Float8_e4m3fnuz")
float8_e5m2fnuz = _new_dtype(PT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 1, 2, True, None,
                             "Float8_e5m2fnuz")

cdef dict _NP_TO_DTYPE = {d._np: d for d in _DTYPES if d._np is not None}


cdef dtype dtype_from_num(int num):
    return <dtype>_DTYPES[num]


def _setitem_scalar(value, dtype dt):
    """0-d CPU tensor of ``dt`` holding ``value`` converted with ``tensor[idx] = value`` rules."""
    cdef Py_ssize_t sh[1]
    cdef _TensorBase t = _empty_contig(dt, 0, sh, _CPU, False)
    _fill(t, value, True)
    return t


def _checked_scalar(value, dtype dt):
    """0-d CPU tensor of ``dt`` holding ``value`` converted as PyTorch's checked
    ``Scalar.to<T>()`` (masked_fill, alpha): float16 and complex32 must fit
    the half range, the other types as ``fill_``."""
    cdef Py_ssize_t sh[1]
    cdef _TensorBase t = _empty_contig(dt, 0, sh, _CPU, False)
    _encode_scalar(value, dt, t._ptr(), dt.num == PT_COMPLEX32)
    return t


def _dtype_from_name(str name):
    """Inverse of ``dtype.__reduce__`` (pickling by name, no code)."""
    try:
        return _DTYPE_BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown ptcore dtype name {name!r}") from None


def _all_dtypes():
    return list(_DTYPES)


def _dtype_from_numpy(np_dtype):
    """ptcore dtype for a NumPy dtype; TypeError if unsupported."""
    npd = _np.dtype(np_dtype)
    d = _NP_TO_DTYPE.get(npd)
    if d is None and not npd.isnative and _NP_TO_DTYPE.get(npd.newbyteorder("=")) is not None:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported.")
    if d is None:
        # torch names the dtype's scalar type as CPython does (its tp_name): numpy.object_,
        # numpy.datetime64 (no unit), numpy.str_, numpy.void, numpy.longdouble
        t = npd.type
        raise TypeError(
            f"can't convert np.ndarray of type {t.__module__}.{t.__name__}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool.")
    return d


cdef dtype _default_dtype = float32


def get_default_dtype():
    """The default floating point dtype (initially ``ptcore.float32``)."""
    return _default_dtype


def set_default_dtype(d):
    """Set the default floating point dtype (float16, bfloat16, float32 or float64)."""
    global _default_dtype
    if not isinstance(d, dtype) or not (<dtype>d).is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _default_dtype = <dtype>d


cdef inline dtype _default_complex():
    return <dtype>_DTYPES[PT_COMPLEX128 if _default_dtype.num == PT_FLOAT64 else PT_COMPLEX64]


def _get_default_complex_dtype():
    return _default_complex()


# ---------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------

# torch's device types: ptcore runs cpu, cuda and meta; a device object of any other
# (``device('mps')``, as scripts compare against) exists, code 3, holding no tensor
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep",
                       "hip", "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta",
                       "hpu", "mtia", "privateuseone")
cdef dict _DEVICE_TYPES = {t: 3 for t in _TORCH_DEVICE_TYPES}
_DEVICE_TYPES.update({"cpu": 0, "cuda": 1, "meta": 2})
# PyTorch's device string grammar: a type name, optionally ':' and an index without leading zeros
_DEVICE_RE = _re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?", _re.ASCII)


@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class device:
    """Where a tensor's storage lives: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``."""

    def __init__(self, type, index=None):
        cdef str s
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object and an index cannot both be given")
            self.type = (<device>type).type
            self.index = (<device>type).index
        elif isinstance(type, int) and not isinstance(type, bool):
            if index is not None:
                raise TypeError("device(): an integer device and an index cannot both be given")
            if type < 0:
                raise RuntimeError(f"Device index must not be negative, got {type}")
            self.type = "cuda"
            self.index = int(type)
        elif isinstance(type, str):
            s = type
            m = _DEVICE_RE.fullmatch(s)
            if m is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            if m.group(2) is not None:
                if index is not None:
                    raise RuntimeError(f"device(): type (string) must not include an index because index was passed explicitly: {s}")
                index = int(m.group(2))
                s = m.group(1)
            if s not in _DEVICE_TYPES:
                raise RuntimeError(
                    f"Expected one of {', '.join(_TORCH_DEVICE_TYPES)} device type at start of "
                    f"device string: {type}")
            self.type = s
            if index is not None:
                if isinstance(index, bool) or not isinstance(index, int):
                    raise TypeError(f"device(): index must be an int, got {_typename(index)}")
                if index < 0:
                    raise RuntimeError(f"Device index must not be negative, got {index}")
                index = int(index)
            self.index = index
        else:
            raise TypeError(f"device() received an invalid combination of arguments: {_typename(type)}")
        self._type_code = _DEVICE_TYPES[self.type]
        self._idx = -1 if self.index is None else self.index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        if self.index is None:
            return self.type
        return f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, device):
            return self.type == (<device>other).type and self.index == (<device>other).index
        return NotImplemented

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        # ``with ptcore.device(d):`` makes d the factory functions' default
        # device inside the block (ptcore._dispatch.default_device)
        if _device_context_hooks[0] is not None:
            _device_context_hooks[0](self)
        return self

    def __exit__(self, *exc):
        if _device_context_hooks[1] is not None:
            _device_context_hooks[1](self)
        return False


# (enter, exit) callbacks of the default-device layer, set by that layer
cdef list _device_context_hooks = [None, None]


def _set_device_context_hooks(enter, exit):
    _device_context_hooks[0] = enter
    _device_context_hooks[1] = exit


cdef device _CPU = device("cpu")
cdef dict _device_cache = {}


cdef device _as_device(object d):
    """Parse a device argument (device, str, int); None means CPU."""
    if d is None:
        return _CPU
    if type(d) is device:
        return <device>d
    try:
        return <device>_device_cache[d]
    except (KeyError, TypeError):
        pass
    cdef device dev = device(d)
    if dev.type == "cuda" and dev.index is None:
        pass
    try:
        _device_cache[d] = dev
    except TypeError:
        pass
    return dev


def _to_device(d):
    return _as_device(d)


cdef object _cuda_hook = None
# per device type code (1 cuda, 2 meta): the device runtime's empty /
# empty_strided / copy_ / fill_ / clone / convert / item for tensors on it
# (ptcore.cuda installs its ops when it initialises, ptcore._meta at import)
cdef list _DEVICE_OPS = [None, None, None, None]    # (3: the types ptcore does not run)


cdef inline object _ops_of(device dev):
    return _DEVICE_OPS[dev._type_code]


def _set_cuda_hook(hook):
    """Registered by ptcore.cuda: called for any non-CPU placement."""
    global _cuda_hook
    _cuda_hook = hook


cdef int _require_cpu(device dev, str what) except -1:
    if dev._type_code == 0:
        return 0
    if _DEVICE_OPS[dev._type_code] is not None:
        return 0                        # the device runtime is up: the caller uses its ops
    if dev._type_code == 1:
        if _cuda_hook is not None:
            _cuda_hook(dev, what)       # initialises the CUDA runtime, or raises why it cannot
            if _DEVICE_OPS[1] is not None:
                return 0
        raise RuntimeError(f"{what}: CUDA tensors are not supported by this build of ptcore ({dev})")
    raise NotImplementedError(f"{what}: device type '{dev.type}' is not supported")


cdef str _typename(object o):
    return type(o).__name__


# ---------------------------------------------------------------------------
# Host allocator: aligned small blocks, mmap'd large blocks with huge pages,
# a bounded cache of freed large blocks (no page faults on reuse), and lazily
# zero-filled fresh mappings for zeros().
# ---------------------------------------------------------------------------

cdef extern from "ptc_alloc.h":
    void* ptc_host_alloc(size_t n, int zero) nogil
    void ptc_host_free(void* p, size_t n) nogil
    void ptc_host_empty_cache() nogil
    void ptc_host_tune()
    size_t ptc_large_threshold
    size_t ptc_cache_limit
    size_t ptc_cache_bytes
    int ptc_cache_n
    uint64_t ptc_stat_hits, ptc_stat_maps, ptc_stat_unmaps
    size_t ptc_live_bytes
    int64_t ptc_total_live


ptc_host_tune()


def _host_allocator_stats():
    """Counters of the host allocator (large blocks only)."""
    return {
        "cached_bytes": ptc_cache_bytes, "cached_blocks": ptc_cache_n,
        "cache_limit": ptc_cache_limit, "large_threshold": ptc_large_threshold,
        "live_large_bytes": ptc_live_bytes, "cache_hits": ptc_stat_hits,
        "maps": ptc_stat_maps, "unmaps": ptc_stat_unmaps,
    }


def _host_allocated_bytes():
    """Bytes of all live host blocks the allocator gave out (the profiler's memory)."""
    return ptc_total_live


def _host_empty_cache():
    """Return all cached large host blocks to the operating system."""
    ptc_host_empty_cache()


def _set_host_cache_limit(Py_ssize_t nbytes):
    global ptc_cache_limit
    if nbytes < 0:
        raise ValueError(f"host cache limit must be >= 0 bytes, got {nbytes}")
    ptc_cache_limit = nbytes
    ptc_host_empty_cache()


# ---------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------

cdef enum:
    STORAGE_HOST = 0        # ptc_host_alloc
    STORAGE_EXTERNAL = 1    # memory owned by _owner (NumPy array, buffer, shm)
    STORAGE_DLPACK = 2      # DLPack managed tensor, released through its deleter
    STORAGE_DEVICE = 3      # device memory owned by _owner (ptcore.cuda allocation)
    STORAGE_META = 4        # the meta device: a byte count and no memory (_data is always NULL)

cdef extern from "ptc_dlpack.h":
    void ptc_dlpack_release(void* managed, int versioned) nogil


cdef extern from *:
    """
    /* inference mode is active on this thread (set by autograd.grad_mode) */
    static __thread int ptc_inference_on = 0;
    """
    int ptc_inference_on


# Kernel sections (see _tensor.pxd): how many threads run one now, and how many
# of those are this thread's (a writer never waits for itself).
cdef extern from *:
    """
    #include <sched.h>
    #include <unistd.h>
    static int64_t ptc_sections = 0;
    static __thread int64_t ptc_sections_mine = 0;
    static inline void ptc_sections_add(int64_t d) {
        __atomic_add_fetch(&ptc_sections, d, __ATOMIC_SEQ_CST);
        ptc_sections_mine += d;
    }
    static inline int64_t ptc_sections_others(void) {
        return __atomic_load_n(&ptc_sections, __ATOMIC_SEQ_CST) - ptc_sections_mine;
    }
    """
    void ptc_sections_add(int64_t d) nogil
    int64_t ptc_sections_others() nogil
    int sched_yield() nogil
    int usleep(unsigned int us) nogil


cdef void ptc_kernel_enter() noexcept nogil:
    ptc_sections_add(1)


cdef void ptc_kernel_exit() noexcept nogil:
    ptc_sections_add(-1)


cdef int _wait_for_readers() except -1:
    """Return once no other thread runs a kernel section, holding the GIL from
    the last test on (so no section can start before the caller's change is
    done).  Sections leave without the GIL, so the wait mostly keeps it; now
    and then it lets go for a moment, for a section that must take the GIL to
    finish (one raising an error)."""
    cdef int spins = 0
    while ptc_sections_others() > 0:
        spins += 1
        if spins < 64:
            sched_yield()
        elif spins % 64:
            usleep(20)
        else:
            with nogil:
                usleep(20)
    return 0


def _kernel_sections_running():
    """Kernel sections other threads run now (tests)."""
    return ptc_sections_others()


def _set_inference_mode(bint on):
    """Storage made on this thread while ``on`` belongs to inference tensors
    (PyTorch's InferenceMode: every tensor sharing it is an inference
    tensor).  Returns the previous setting."""
    global ptc_inference_on
    cdef bint old = ptc_inference_on
    ptc_inference_on = on
    return old


class HostAllocationError(MemoryError, RuntimeError):
    """A host (CPU) allocation that failed: a ``MemoryError`` and, as torch's CPU allocator
    error, a ``RuntimeError`` (code written for either ``except`` catches it)."""


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class Storage:
    """Untyped bytes on a device (``torch.UntypedStorage``).

    ``Storage(nbytes)`` allocates uninitialised host memory.
    """

    def __cinit__(self, *args, **kwargs):
        self._inference = ptc_inference_on

    def __init__(self, Py_ssize_t nbytes=0, device=None):
        dev = _as_device(device)
        if dev.type != "cpu":
            _require_cpu(dev, "Storage")
            raise NotImplementedError(
                f"Storage(nbytes, device='{dev}'): use ptcore.empty(nbytes, dtype=ptcore.uint8, "
                f"device='{dev}').untyped_storage() for device storage")
        if nbytes < 0:
            raise ValueError(f"Storage: size must be non-negative, got {nbytes}")
        if self._data != NULL or self._owner is not None:
            raise RuntimeError("Storage already initialised")
        _host_storage_init(self, nbytes, False)

    def __dealloc__(self):
        if self._kind == STORAGE_HOST:
            if self._data != NULL:
                ptc_host_free(self._data, <size_t>self._nbytes)
        elif self._kind == STORAGE_DLPACK:
            if self._dl_managed != NULL:
                ptc_dlpack_release(self._dl_managed, self._dl_versioned)
        self._data = NULL

    cdef int _release_block(self) except -1:
        """Give up the current memory block before it is replaced in place:
        freed at once, or kept alive until this storage dies when a NumPy
        array, buffer or DLPack capsule may still view it (no use after free)."""
        cdef _RetiredBlock b
        if self._exported:
            b = _RetiredBlock.__new__(_RetiredBlock)
            b._data = self._data
            b._nbytes = self._nbytes
            b._kind = self._kind
            b._dl_managed = self._dl_managed
            b._dl_versioned = self._dl_versioned
            b._owner = self._owner
            if self._retired is None:
                self._retired = []
            self._retired.append(b)
        elif self._kind == STORAGE_HOST:
            if self._data != NULL:
                ptc_host_free(self._data, <size_t>self._nbytes)
        elif self._kind == STORAGE_DLPACK:
            if self._dl_managed != NULL:
                ptc_dlpack_release(self._dl_managed, self._dl_versioned)
        self._data = NULL
        self._dl_managed = NULL
        self._owner = None
        return 0

    cdef int _realloc(self, Py_ssize_t nbytes) except -1:
        """Resize in place to ``nbytes`` (a new host block; the common prefix is
        copied); every tensor viewing this storage sees the new block.

        Waits until no other thread runs a kernel section (one may be reading
        the old block), then keeps the GIL until the new block is in place.
        A storage made smaller is marked ``_shrunk``: from then on every
        access through a tensor checks that the storage still covers it."""
        if nbytes < 0:
            raise RuntimeError(f"Storage.resize_: size must be non-negative, got {nbytes}")
        _wait_for_readers()
        if not self._resizable or self._nexports > 0:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if nbytes < self._nbytes:
            self._shrunk = True
        if self._kind == STORAGE_META:
            self._nbytes = nbytes           # no memory: only the byte count changes
            return 0
        if self._kind == STORAGE_DEVICE:
            return _realloc_device(self, nbytes)
        if self.device._type_code != 0:
            raise RuntimeError(f"resizing a storage on {self.device} is not supported")
        cdef void* p = NULL
        if nbytes > 0:
            p = ptc_host_alloc(<size_t>nbytes, False)      # (with the GIL: see _wait_for_readers)
            if p == NULL:
                raise HostAllocationError(f"ptcore: failed to allocate {nbytes} bytes of host memory")
        cdef Py_ssize_t keep = nbytes if nbytes < self._nbytes else self._nbytes
        if keep > 0:
            memcpy(p, self._data, keep)
        self._release_block()
        self._shared = None         # a shared-memory block is replaced by a private one
        self._data = <char*>p
        self._nbytes = nbytes
        self._kind = STORAGE_HOST
        return 0

    def resize_(self, size):
        """Resize to ``size`` bytes in place (``UntypedStorage.resize_``).

        Raises RuntimeError "Trying to resize storage that is not resizable"
        for borrowed memory (``from_numpy``, DLPack imports, shared memory) and
        while a NumPy array from ``Tensor.numpy()`` or a buffer-protocol export
        still views it.  After a DLPack export the old block is kept alive
        (until the storage dies) for the consumer.
        """
        self._realloc(_operator.index(size))
        return self

    def resizable(self):
        """Whether ``resize_`` may reallocate this storage."""
        return self._resizable and self._nexports == 0

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def data_ptr(self):
        return <Py_ssize_t><uintptr_t>self._data

    def element_size(self):
        return 1

    def is_shared(self):
        return self._shared is not None

    def is_pinned(self, device="cuda"):
        return False

    def share_memory_(self):
        """Move this storage to shared memory in place (no-op when already shared).

        Every tensor viewing the storage sees the shared memory; returns self.
        """
        from ptcore._shared_memory import _share_storage
        _share_storage(self)
        return self

    def tolist(self):
        if self.device._type_code != 0:
            raise RuntimeError("tolist() of a device storage: copy it to the CPU first")
        return list(self._bytes())

    cdef bytes _bytes(self):
        if self._nbytes == 0:
            return b""
        return (<char*>self._data)[:self._nbytes]

    def __repr__(self):
        return f"<ptcore.Storage of {self._nbytes} bytes on {self.device}>"

    def __reduce__(self):
        if self.device._type_code != 0:
            raise RuntimeError("pickling a device storage: copy it to the CPU first")
        return (_storage_from_bytes, (self._bytes(),))

    @property
    def _kind_name(self):
        return ("host", "external", "dlpack", "device", "meta")[self._kind]

    def _move_to_buffer(self, owner, handle):
        """Move this storage's bytes into ``owner``'s writable buffer, in place.

        ``owner`` (e.g. a memoryview of a shared mmap) must expose a writable
        contiguous buffer of at least ``nbytes`` bytes and is kept alive by
        the storage; every tensor viewing this storage sees the new memory.
        The old memory is released.  ``handle`` becomes ``_shared``.
        Used by ``share_memory_()`` (ptcore.multiprocessing).  Internal.
        """
        cdef Py_buffer view
        if self.device._type_code != 0:
            raise RuntimeError(f"_move_to_buffer: storage is on {self.device}, not the CPU")
        PyObject_GetBuffer(owner, &view, PyBUF_WRITABLE)
        _wait_for_readers()         # a kernel in another thread may be using the old block
        cdef char* dst = <char*>view.buf
        cdef Py_ssize_t blen = view.len
        PyBuffer_Release(&view)
        if blen < self._nbytes:
            raise ValueError(f"_move_to_buffer: buffer of {blen} bytes for a storage of {self._nbytes} bytes")
        if self._nbytes:
            memcpy(dst, self._data, self._nbytes)
        self._release_block()
        self._data = dst
        self._kind = STORAGE_EXTERNAL
        self._owner = owner
        self._shared = handle
        # still resizable (as PyTorch's shared storages): resize_ moves it to a
        # private host block; a NumPy view of the old block blocks the resize


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _RetiredBlock:
    """A memory block a storage replaced in place while exporters may still
    view it; freed when the storage (which the exporters keep alive) dies."""
    cdef char* _data
    cdef Py_ssize_t _nbytes
    cdef int _kind
    cdef void* _dl_managed
    cdef bint _dl_versioned
    cdef object _owner

    def __dealloc__(self):
        if self._kind == STORAGE_HOST:
            if self._data != NULL:
                ptc_host_free(self._data, <size_t>self._nbytes)
        elif self._kind == STORAGE_DLPACK:
            if self._dl_managed != NULL:
                ptc_dlpack_release(self._dl_managed, self._dl_versioned)
        self._data = NULL


cdef int _realloc_device(Storage self, Py_ssize_t nbytes) except -1:
    """Device memory: the device runtime's hook (``DEVICE_REALLOC``) makes
    a new storage of ``nbytes`` on the device holding the common prefix
    (copied on the device, stream-ordered); this storage takes over its
    block, and the old block goes back to its allocator (or, after a
    DLPack export, stays alive with this storage)."""
    hook = DEVICE_REALLOC.get(self.device._type_code)
    if hook is None:
        raise RuntimeError(f"resizing a storage on {self.device} is not supported")
    cdef Storage other = <Storage?>hook(self, nbytes)
    if other.device != self.device or other._kind != STORAGE_DEVICE or other._nbytes != nbytes:
        raise RuntimeError("DEVICE_REALLOC hook returned an unfit storage")
    self._release_block()
    self._data = other._data
    self._owner = other._owner
    self._nbytes = nbytes
    other._data = NULL
    other._owner = None
    other._nbytes = 0
    return 0


cdef int _host_storage_init(Storage st, Py_ssize_t nbytes, bint zero) except -1:
    cdef void* p = NULL
    if nbytes > 0:
        # with the GIL: a caller that read a tensor's geometry before allocating
        # uses it after, and another thread must not change it in between
        p = ptc_host_alloc(<size_t>nbytes, zero)
        if p == NULL:
            raise HostAllocationError(f"ptcore: failed to allocate {nbytes} bytes of host memory")
    st._data = <char*>p
    st._nbytes = nbytes
    st._kind = STORAGE_HOST
    st._resizable = True
    st.device = _CPU
    return 0


cdef Storage _new_host_storage(Py_ssize_t nbytes, bint zero):
    cdef Storage st = Storage.__new__(Storage)
    _host_storage_init(st, nbytes, zero)
    return st


cdef Storage _external_storage(char* data, Py_ssize_t nbytes, object owner, device dev):
    cdef Storage st = Storage.__new__(Storage)
    st._data = data
    st._nbytes = nbytes
    st._kind = STORAGE_EXTERNAL if dev._type_code == 0 else STORAGE_DEVICE
    st._owner = owner
    st.device = dev
    return st


def _storage_from_bytes(bytes b):
    cdef Storage st = _new_host_storage(len(b), False)
    if len(b):
        memcpy(st._data, <const char*>b, len(b))
    return st


def _storage_from_pointer(Py_ssize_t ptr, Py_ssize_t nbytes, owner, dev=None):
    """Wrap memory owned by ``owner`` (kept alive) as a Storage.  Internal."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    if ptr == 0 and nbytes > 0:
        raise ValueError("null pointer with a non-zero size")
    return _external_storage(<char*><uintptr_t>ptr, nbytes, owner, _as_device(dev))


cdef Storage _dlpack_storage(char* data, Py_ssize_t nbytes, void* managed, bint versioned, device dev):
    cdef Storage st = Storage.__new__(Storage)
    st._data = data
    st._nbytes = nbytes
    st._kind = STORAGE_DLPACK
    st._dl_managed = managed
    st._dl_versioned = versioned
    st.device = dev
    return st


def _meta_storage(Py_ssize_t nbytes, dev):
    """A storage of ``nbytes`` bytes on the meta device ``dev``: no memory
    (its ``_data`` stays NULL, and every data path of the core routes meta
    tensors to the meta runtime's ops, never to a host loop).  Internal."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    cdef device d = _as_device(dev)
    if d._type_code != 2:
        raise ValueError(f"_meta_storage: {d} is not the meta device")
    cdef Storage st = Storage.__new__(Storage)
    st._data = NULL
    st._nbytes = nbytes
    st._kind = STORAGE_META
    st._resizable = True
    st.device = d
    return st


# device type code -> hook(storage, nbytes): a new resizable storage of
# nbytes on the storage's device holding the common prefix (Storage._realloc
# of device memory; the CUDA runtime registers its own)
DEVICE_REALLOC = {}

cdef Storage _EMPTY_STORAGE = _new_host_storage(0, False)


# ---------------------------------------------------------------------------
# Size
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    /* The C base of ptcore.Size: a tuple whose subscript is a C slot (an int
       index costs what it costs on a tuple; a slice is a Size again) and
       whose instances ptc_size_new fills in place (one allocation). */
    static PyTypeObject* ptc_size_type = NULL;      /* ptcore.Size, set at import */

    static PyObject* ptc_size_new(Py_ssize_t n, const Py_ssize_t* v) {
        PyObject* r = ptc_size_type->tp_alloc(ptc_size_type, n);
        if (r == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject* o = PyLong_FromSsize_t(v[i]);
            if (o == NULL) { Py_DECREF(r); return NULL; }
            PyTuple_SET_ITEM(r, i, o);
        }
        return r;
    }

    static PyObject* ptc_size_subscript(PyObject* self, PyObject* key) {
        PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
        if (r == NULL || !PySlice_Check(key) || ptc_size_type == NULL) return r;
        Py_ssize_t n = PyTuple_GET_SIZE(r);
        PyObject* s = ptc_size_type->tp_alloc(ptc_size_type, n);
        if (s == NULL) { Py_DECREF(r); return NULL; }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject* o = PyTuple_GET_ITEM(r, i);
            Py_INCREF(o);
            PyTuple_SET_ITEM(s, i, o);
        }
        Py_DECREF(r);
        return s;
    }

    static PyMappingMethods ptc_size_as_mapping = {0, ptc_size_subscript, 0};

    static PyTypeObject ptc_SizeBase_Type = {
        PyVarObject_HEAD_INIT(NULL, 0)
        "ptcore._tensor._SizeBase",                   /* tp_name */
        sizeof(PyTupleObject) - sizeof(PyObject*),    /* tp_basicsize */
        sizeof(PyObject*),                            /* tp_itemsize */
    };

    static PyObject* ptc_size_base_type(void) {
        if (ptc_SizeBase_Type.tp_base == NULL) {
            ptc_SizeBase_Type.tp_base = &PyTuple_Type;
            ptc_SizeBase_Type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_TUPLE_SUBCLASS;
            ptc_SizeBase_Type.tp_as_mapping = &ptc_size_as_mapping;
            ptc_SizeBase_Type.tp_doc = "C base of ptcore.Size (a tuple).";
            if (PyType_Ready(&ptc_SizeBase_Type) < 0) return NULL;
        }
        Py_INCREF(&ptc_SizeBase_Type);
        return (PyObject*)&ptc_SizeBase_Type;
    }

    static void ptc_set_size_type(PyObject* tp) {
        Py_INCREF(tp);
        ptc_size_type = (PyTypeObject*)tp;
    }
    """
    object ptc_size_base_type()
    object ptc_size_new(Py_ssize_t n, const Py_ssize_t* v)
    void ptc_set_size_type(object tp)


_SizeBase = ptc_size_base_type()


class Size(_SizeBase):
    """The shape of a tensor: a tuple of ints (``torch.Size``)."""

    __slots__ = ()
    __module__ = "ptcore"

    def __new__(cls, sizes=()):
        items = list(sizes)
        for k, s in enumerate(items):
            if isinstance(s, _TensorBase) and (<_TensorBase>s)._numel == 1 \
                    and (<_TensorBase>s)._dtype._category < 2:
                items[k] = int(s.item())     # torch reads a one-element integer tensor as an int
            elif type(s) is bool:
                items[k] = int(s)
            elif isinstance(s, (float, complex, _TensorBase)) or not hasattr(s, "__index__"):
                raise TypeError(f"ptcore.Size() takes an iterable of 'int' "
                                f"(item {k} is '{_typename(s)}')")
        return tuple.__new__(cls, items)

    def __repr__(self):
        return f"ptcore.Size([{', '.join(str(s) for s in self)}])"

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self):
        """Number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __reduce__(self):
        return (Size, (tuple(self),))


ptc_set_size_type(Size)


cdef inline object _make_size(int n, const Py_ssize_t* v):
    return ptc_size_new(n, v)


cdef inline tuple _make_tuple(int n, const Py_ssize_t* v):
    cdef tuple t = PyTuple_New(n)
    cdef int i
    cdef object o
    for i in range(n):
        o = v[i]
        Py_INCREF(o)
        PyTuple_SET_ITEM(t, i, o)
    return t


# ---------------------------------------------------------------------------
# small helpers on shapes
# ---------------------------------------------------------------------------

cdef inline int _wrap_dim(Py_ssize_t d, int ndim) except -1:
    cdef int n = ndim if ndim > 0 else 1
    if d < -n or d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return <int>(d + n if d < 0 else d)


def _wrap_dim_py(d, int ndim):
    return _wrap_dim(_operator.index(d), ndim)


cdef Py_ssize_t _dim_arg(object v) except? -1:
    """An ``int64`` argument (a dim, a count) as torch's argument parser reads it:
    a Python or NumPy integer, or a 0-d integer tensor; bools, one-element
    tensors of more dims, bool tensors and NumPy arrays are a TypeError."""
    if type(v) is int:
        return v
    if isinstance(v, bool) or isinstance(v, _np.ndarray) or (
            isinstance(v, _TensorBase) and ((<_TensorBase>v)._ndim != 0
                                            or (<_TensorBase>v)._dtype.num == PT_BOOL
                                            or (<_TensorBase>v)._dtype._category > 1)):
        raise TypeError(f"expected an int, got {_typename(v)}"
                        + (f" of {(<_TensorBase>v)._ndim} dims and dtype {(<_TensorBase>v)._dtype}"
                           if isinstance(v, _TensorBase) else ""))
    return _operator.index(v)


cdef Py_ssize_t _symint_arg(object v) except? -1:
    """A ``SymInt`` argument (an index, a start, a length) as torch reads it: like
    ``operator.index`` (one-element tensors and NumPy arrays included), but a bool
    is a TypeError and a bool tensor a RuntimeError."""
    if type(v) is int:
        return v
    if isinstance(v, bool):
        raise TypeError(f"expected an int, got bool")
    if isinstance(v, _TensorBase) and (<_TensorBase>v)._dtype.num == PT_BOOL:
        raise RuntimeError("a bool tensor cannot be used as an integer argument")
    return _operator.index(v)


_DTYPE_TYPE = dtype      # (for ``view``, whose ``dtype=`` keyword hides the class)


cdef object _view_as_dtype(_TensorBase t, object d):
    return t._view_dtype(<dtype>d)


cdef tuple _kw_shape(tuple args, object kw, str fname):
    """The shape arguments of ``view``/``reshape``/``permute``/``expand``: the positional ones,
    or the one given by keyword (torch's ``x.reshape(shape=...)``, ``x.permute(dims=...)``)."""
    if kw is None:
        return args
    if args:
        raise TypeError(f"{fname}() got its sizes both positionally and by keyword")
    return (kw,)


cdef list _parse_shape_args(tuple args, str fname):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(Size)`` -> list of ints."""
    cdef object a
    if len(args) == 1 and not isinstance(args[0], int):
        a = args[0]
        if isinstance(a, (tuple, list)):
            args = tuple(a)
        elif isinstance(a, _TensorBase) or hasattr(a, "__index__"):
            args = (a,)
        else:
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, but found element of type {_typename(a)}")
    cdef list out = []
    for a in args:
        if isinstance(a, bool) or not (isinstance(a, int) or hasattr(a, "__index__")):
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, but found element of type {_typename(a)} at pos {len(out)}")
        if isinstance(a, _TensorBase) and (<_TensorBase>a)._dtype.num == PT_BOOL \
                and fname != "permute":     # (torch's permute reads a bool tensor as 0/1)
            raise RuntimeError(f"{fname}(): a bool tensor cannot be used as a size")
        out.append(_operator.index(a))
    return out


cdef inline void _contig_strides(int ndim, const Py_ssize_t* shape, Py_ssize_t* strides) noexcept:
    cdef Py_ssize_t s = 1
    cdef int i
    for i in range(ndim - 1, -1, -1):
        strides[i] = s
        s *= shape[i] if shape[i] > 1 else 1


cdef list _infer_size(list shape, Py_ssize_t numel):
    cdef Py_ssize_t prod = 1, v
    cdef int infer = -1
    cdef int i
    cdef bint overflow = False
    for i in range(len(shape)):
        v = shape[i]
        if v == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif v < 0:
            raise RuntimeError(f"invalid shape dimension {v}")
        elif not overflow and ptc_mul_ovf(prod, v, &prod):
            overflow = True
    if overflow:
        if numel == 0 and infer < 0:
            raise RuntimeError("numel: integer multiplication overflow")
        raise RuntimeError(f"shape '{_fmt_list(shape)}' is invalid for input of size {numel}")
    if infer >= 0:
        if prod == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {_fmt_list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous")
        if numel % prod != 0:
            raise RuntimeError(f"shape '{_fmt_list(shape)}' is invalid for input of size {numel}")
        shape = list(shape)
        shape[infer] = numel // prod
    elif prod != numel:
        raise RuntimeError(f"shape '{_fmt_list(shape)}' is invalid for input of size {numel}")
    return shape


cdef str _fmt_list(object seq):
    return "[" + ", ".join(str(x) for x in seq) + "]"


cdef object _compute_view_strides(_TensorBase t, list newshape):
    """Strides for viewing ``t`` as ``newshape`` without copying, or None
    (PyTorch's computeStride)."""
    cdef int old_nd = t._ndim
    cdef int new_nd = len(newshape)
    cdef list newstride = [0] * new_nd
    cdef int i
    if t._numel == 0:
        if [t._shape[i] for i in range(old_nd)] == newshape:
            return [t._strides[i] for i in range(old_nd)]
        s = 1
        for i in range(new_nd - 1, -1, -1):
            newstride[i] = s
            s *= max(newshape[i], 1)
        return newstride
    if old_nd == 0:
        for i in range(new_nd):
            newstride[i] = 1
        return newstride
    cdef int view_d = new_nd - 1
    cdef Py_ssize_t chunk_base_stride = t._strides[old_nd - 1]
    cdef Py_ssize_t tensor_numel = 1
    cdef Py_ssize_t view_numel = 1
    cdef int tensor_d
    for tensor_d in range(old_nd - 1, -1, -1):
        tensor_numel *= t._shape[tensor_d]
        if tensor_d == 0 or (t._shape[tensor_d - 1] != 1 and
                             t._strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = t._strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return newstride


# ---------------------------------------------------------------------------
# tensor construction
# ---------------------------------------------------------------------------

cdef object _TensorClass = None     # ptcore.Tensor, set by ptcore.tensor
cdef tuple _EMPTY_TUPLE = ()


def _set_tensor_class(cls):
    global _TensorClass
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError("tensor class must subclass _TensorBase")
    _TensorClass = cls


cdef extern from *:
    """
    static PyObject *ptc_new_instance(PyObject *base, PyObject *cls, PyObject *args) {
        return ((PyTypeObject *)base)->tp_new((PyTypeObject *)cls, args, NULL);
    }
    """
    object ptc_new_instance(object base, object cls, object args)


cdef inline _TensorBase _new_instance(object cls):
    # the core's allocator (_TensorBase's tp_new) with cls as the type, never
    # cls.__new__: ptcore.Tensor's Python __new__ is the legacy constructor
    return <_TensorBase>ptc_new_instance(_TensorBase, cls, _EMPTY_TUPLE)


cdef _TensorBase _make_tensor(Storage storage, dtype dt, int ndim,
                              const Py_ssize_t* shape, const Py_ssize_t* strides,
                              Py_ssize_t offset):
    cdef Py_ssize_t n = _checked_numel(ndim, shape)
    cdef _TensorBase t = _new_instance(_TensorClass)
    t._storage = storage
    t._dtype = dt
    t._offset = offset
    t._alloc_dims(ndim)
    cdef int i
    for i in range(ndim):
        t._shape[i] = shape[i]
        t._strides[i] = strides[i]
    t._numel = n
    return t


cdef Py_ssize_t _checked_numel(int ndim, const Py_ssize_t* shape) except -1:
    """The product of ``shape``, multiplied left to right as PyTorch does;
    RuntimeError when it does not fit in int64."""
    cdef Py_ssize_t n = 1
    cdef int i
    for i in range(ndim):
        if ptc_mul_ovf(n, shape[i], &n):
            raise RuntimeError("numel: integer multiplication overflow")
    return n


cdef Py_ssize_t _storage_nbytes(int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                                Py_ssize_t offset, int itemsize) except -1:
    """Bytes of storage a strided view needs: ``(offset + 1 + sum((size-1)*stride)) *
    itemsize``, 0 when any size is 0; RuntimeError on int64 overflow."""
    cdef Py_ssize_t need = 0, term
    cdef int i
    cdef bint bad = False
    for i in range(ndim):
        if shape[i] == 0:
            return 0
    for i in range(ndim):
        if ptc_mul_ovf(shape[i] - 1, strides[i], &term) or ptc_add_ovf(need, term, &need):
            bad = True
            break
    if not bad:
        bad = (ptc_add_ovf(need, 1, &need) or ptc_add_ovf(need, offset, &need)
               or ptc_mul_ovf(need, itemsize, &need))
    if bad:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={_fmt_list([shape[i] for i in range(ndim)])} "
            f"and strides={_fmt_list([strides[i] for i in range(ndim)])}")
    return need


cdef Py_ssize_t _checked_nbytes(int ndim, const Py_ssize_t* shape, int itemsize) except -1:
    """Bytes of a contiguous tensor of ``shape``: negative sizes and int64
    overflow (of the element count or the byte count) raise RuntimeError."""
    cdef Py_ssize_t n = itemsize
    cdef int i
    for i in range(ndim):
        if shape[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {shape[i]}: {_fmt_list([shape[j] for j in range(ndim)])}")
    for i in range(ndim):
        if ptc_mul_ovf(n, shape[i], &n):
            raise RuntimeError(
                f"Storage size calculation overflowed with sizes={_fmt_list([shape[j] for j in range(ndim)])}")
    return n


cdef bint _c32_warned = False


cdef int _warn_complex32() except -1:
    # PyTorch's TORCH_WARN_ONCE at the first allocation of a ComplexHalf tensor
    global _c32_warned
    if not _c32_warned:
        _c32_warned = True
        _warnings.warn("ComplexHalf support is experimental and many operators don't support it yet.",
                       UserWarning, stacklevel=3)
    return 0


cdef bint _complex_cast_warned = False


cpdef int _warn_complex_to_real(dtype src, dtype dst, int stacklevel=1) except -1:
    # PyTorch's TORCH_WARN_ONCE when a copy drops imaginary parts (not to bool)
    global _complex_cast_warned
    if src._category == 3 and dst._category != 3 and dst.num != PT_BOOL and not _complex_cast_warned:
        _complex_cast_warned = True
        _warnings.warn("Casting complex values to real discards the imaginary part",
                       UserWarning, stacklevel=stacklevel)
    return 0


cdef _TensorBase _empty_contig(dtype dt, int ndim, const Py_ssize_t* shape,
                               device dev, bint zero):
    if dt.num == PT_COMPLEX32:
        _warn_complex32()
    if ndim > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {ndim}")
    cdef _TensorBase t
    if dev._type_code != 0:
        _checked_nbytes(ndim, shape, dt.itemsize)
        _require_cpu(dev, "empty")
        t = _ops_of(dev).empty(list(_make_tuple(ndim, shape)), dt, dev)
        if zero:
            t.zero_()
        return t
    # ``shape`` may be another tensor's: copied before anything that could let
    # another thread change (or free) it
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    memcpy(sh, shape, ndim * sizeof(Py_ssize_t))
    cdef Py_ssize_t nbytes = _checked_nbytes(ndim, sh, dt.itemsize)
    cdef Storage st = _new_host_storage(nbytes, zero)
    cdef Py_ssize_t strides[PT_MAX_DIMS]
    _contig_strides(ndim, sh, strides)
    return _make_tensor(st, dt, ndim, sh, strides, 0)


cdef void _like_strides(_TensorBase src, Py_ssize_t* strides) noexcept:
    """PyTorch's preserve_format strides for a tensor like ``src``: src's
    strides verbatim when src is non-overlapping and dense, else dense strides
    in src's dimension order (``infer_dense_strides``)."""
    cdef int nd = src._ndim
    cdef int perm[PT_MAX_DIMS]
    cdef int i, j, dim0, dim1, tmp, cmp
    cdef Py_ssize_t s, s0, s1
    if _non_overlapping_and_dense(src):
        for i in range(nd):
            strides[i] = src._strides[i]
        return
    # infer_dense_strides: stable insertion sort from the fastest dim; 0 strides do not move
    for i in range(nd):
        perm[i] = nd - 1 - i
    for i in range(1, nd):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            s0 = src._strides[perm[dim0]]
            s1 = src._strides[perm[dim1]]
            if s0 == 0 or s1 == 0:
                cmp = 0
            elif s0 < s1:
                cmp = -1
            elif s0 > s1:
                cmp = 1
            elif src._shape[perm[dim0]] > src._shape[perm[dim1]]:
                cmp = 1
            else:
                cmp = 0
            if cmp > 0:
                tmp = perm[dim0]
                perm[dim0] = perm[dim1]
                perm[dim1] = tmp
                dim1 = dim0
            elif cmp < 0:
                break
    s = 1
    for i in range(nd):
        strides[perm[i]] = s
        if src._shape[perm[i]] > 1:
            s *= src._shape[perm[i]]


def _preserve_format_strides(_TensorBase src not None):
    """The strides of a preserve_format tensor like ``src`` (the core's rule,
    for the device runtimes' ``empty_like``/``clone``)."""
    cdef Py_ssize_t strides[PT_MAX_DIMS]
    _like_strides(src, strides)
    return [strides[i] for i in range(src._ndim)]


cdef _TensorBase _empty_strided_like(_TensorBase src, dtype dt, bint zero):
    """A new tensor shaped like ``src`` with PyTorch's preserve_format layout
    (``_like_strides``)."""
    cdef Py_ssize_t strides[PT_MAX_DIMS]
    if dt.num == PT_COMPLEX32:
        _warn_complex32()
    _like_strides(src, strides)
    return _alloc_like(src, dt, strides, zero)


cdef _TensorBase _alloc_like(_TensorBase src, dtype dt, const Py_ssize_t* strides, bint zero):
    """A new tensor on ``src``'s device with its shape and ``strides`` (dense)."""
    cdef device dev = src._storage.device
    cdef Storage st
    cdef _TensorBase t
    if dev._type_code != 0:
        _require_cpu(dev, "empty_like")
        t = _ops_of(dev).empty_strided(list(_make_tuple(src._ndim, src._shape)),
                                       list(_make_tuple(src._ndim, strides)), dt, dev)
        if zero:
            t.zero_()
        return t
    # src's geometry is read once, before the allocation (another thread may resize src)
    cdef int nd = src._ndim
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    memcpy(sh, src._shape, nd * sizeof(Py_ssize_t))
    st = _new_host_storage(src._numel * dt.itemsize, zero)
    return _make_tensor(st, dt, nd, sh, strides, 0)


cdef bint _non_overlapping_and_dense(_TensorBase t) noexcept:
    cdef int nd = t._ndim
    cdef int perm[PT_MAX_DIMS]
    cdef int i, j, k
    cdef Py_ssize_t expected = 1
    if nd == 0 or t._numel == 0:
        return True
    for i in range(nd):
        perm[i] = i
    for i in range(1, nd):
        k = perm[i]
        j = i - 1
        while j >= 0 and (t._strides[perm[j]] > t._strides[k] or
                          (t._strides[perm[j]] == t._strides[k] and t._shape[perm[j]] > t._shape[k])):
            perm[j + 1] = perm[j]
            j -= 1
        perm[j + 1] = k
    for i in range(nd):
        k = perm[i]
        if t._shape[k] == 1:
            continue
        if t._strides[k] != expected:
            return False
        expected *= t._shape[k]
    return True


# ---------------------------------------------------------------------------
# copy / fill glue to the kernels
# ---------------------------------------------------------------------------

cdef int _broadcast_src_strides(_TensorBase dst, _TensorBase src, Py_ssize_t* out) except -1:
    """Byte strides of ``src`` expanded to ``dst``'s shape."""
    cdef int nd = dst._ndim
    cdef int off = nd - src._ndim
    cdef int i
    cdef Py_ssize_t s
    if off < 0:
        raise RuntimeError(
            f"output with shape {_fmt_list(dst.shape)} doesn't match the broadcast shape "
            f"{_fmt_list(_broadcast_shapes_list(dst.shape, src.shape))}")
    for i in range(nd):
        if i < off:
            out[i] = 0
            continue
        s = src._shape[i - off]
        if s == dst._shape[i]:
            out[i] = src._strides[i - off] * src._dtype.itemsize if s != 1 else 0
        elif s == 1:
            out[i] = 0
        else:
            raise RuntimeError(
                f"The size of tensor a ({dst._shape[i]}) must match the size of tensor b ({s}) "
                f"at non-singleton dimension {i}")
    return 0


cdef list _broadcast_shapes_list(object a, object b):
    cdef list ra = list(a)[::-1]
    cdef list rb = list(b)[::-1]
    cdef list out = []
    cdef int i
    for i in range(max(len(ra), len(rb))):
        x = ra[i] if i < len(ra) else 1
        y = rb[i] if i < len(rb) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {max(len(ra), len(rb)) - 1 - i}")
    return out[::-1]


cdef void _byte_strides(_TensorBase t, Py_ssize_t* out) noexcept:
    cdef int i
    for i in range(t._ndim):
        out[i] = t._strides[i] * t._dtype.itemsize


cdef int _check_internal_overlap(_TensorBase t) except -1:
    cdef int i
    for i in range(t._ndim):
        if t._strides[i] == 0 and t._shape[i] > 1:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation.")
    return 0


cdef void _byte_extent(_TensorBase t, uintptr_t* lo, uintptr_t* hi) noexcept:
    cdef uintptr_t base = <uintptr_t>t._ptr()
    cdef Py_ssize_t span = 0
    cdef int i
    for i in range(t._ndim):
        if t._shape[i] > 1:
            span += (t._shape[i] - 1) * t._strides[i]
    lo[0] = base
    hi[0] = base + (span + 1) * t._dtype.itemsize


cdef bint _may_overlap(_TensorBase a, _TensorBase b) noexcept:
    if a._storage is not b._storage or a._numel == 0 or b._numel == 0:
        return False
    cdef uintptr_t alo, ahi, blo, bhi
    _byte_extent(a, &alo, &ahi)
    _byte_extent(b, &blo, &bhi)
    return alo < bhi and blo < ahi


cdef bint _same_layout(_TensorBase a, _TensorBase b) noexcept:
    if a._storage is not b._storage or a._offset != b._offset or a._ndim != b._ndim \
            or a._dtype is not b._dtype:
        return False
    cdef int i
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i] or (a._shape[i] > 1 and a._strides[i] != b._strides[i]):
            return False
    return True


cdef int _check_partial_overlap(_TensorBase dst, _TensorBase src) except -1:
    """PyTorch's ``assert_no_partial_overlap`` for ``dst.copy_(src)``: dense views of the
    same memory that overlap without being the same view raise."""
    cdef uintptr_t a0, a1, b0, b1
    cdef int i
    if dst is src or dst._storage is not src._storage or dst._numel == 0 or src._numel == 0:
        return 0
    if dst._offset == src._offset and dst._dtype is src._dtype and dst._ndim == src._ndim:
        for i in range(dst._ndim):
            if dst._shape[i] != src._shape[i] or dst._strides[i] != src._strides[i]:
                break
        else:
            return 0                # the same data: copy_ returns early
    if not _non_overlapping_and_dense(dst) or not _non_overlapping_and_dense(src):
        return 0                    # "too hard" to tell: PyTorch does not raise
    a0 = <uintptr_t>dst._ptr()
    a1 = a0 + dst._numel * dst._dtype.itemsize
    b0 = <uintptr_t>src._ptr()
    b1 = b0 + src._numel * src._dtype.itemsize
    if a0 == b0 and a1 == b1:
        if dst._ndim == src._ndim:
            for i in range(dst._ndim):
                if dst._strides[i] != src._strides[i]:
                    break
            else:
                return 0
    elif not (a0 < b1 and b0 < a1):
        return 0
    raise RuntimeError(
        "unsupported operation: some elements of the input tensor and the written-to tensor refer "
        "to a single memory location. Please clone() the tensor before performing the operation.")


cdef int _copy_into(_TensorBase dst, _TensorBase src) except -1:
    """dst[...] = src with broadcasting and dtype conversion (both on CPU)."""
    cdef Py_ssize_t dstr[PT_MAX_DIMS]
    cdef Py_ssize_t sstr[PT_MAX_DIMS]
    cdef int rc
    _broadcast_src_strides(dst, src, sstr)
    if dst._numel == 0:
        return 0
    _check_internal_overlap(dst)
    if _may_overlap(dst, src):
        if _same_layout(dst, src):
            return 0
        src = _clone_contig(src)
        _broadcast_src_strides(dst, src, sstr)
    _byte_strides(dst, dstr)
    cdef char* dp = dst._ptr()
    cdef char* sp = src._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            rc = copy_cast(dp, dst._dtype.num, dstr, sp, src._dtype.num, sstr,
                           dst._shape, dst._ndim)
        finally:
            ptc_kernel_exit()
    if rc != 0:
        raise RuntimeError(f"copy: unsupported dtypes {src._dtype!r} -> {dst._dtype!r}")
    return 0


cdef int _check_same_shape(_TensorBase src, _TensorBase out) except -1:
    """RuntimeError when ``src`` no longer has the shape ``out`` was made with
    (another thread resized it while its copy was being allocated)."""
    cdef int i
    if src._ndim == out._ndim:
        for i in range(src._ndim):
            if src._shape[i] != out._shape[i]:
                break
        else:
            return 0
    raise RuntimeError(f"the tensor was resized by another thread while being copied (shape "
                       f"{_fmt_list(_make_tuple(out._ndim, out._shape))} became "
                       f"{_fmt_list(_make_tuple(src._ndim, src._shape))})")


cdef _TensorBase _clone_contig(_TensorBase src):
    if src._storage.device._type_code != 0:
        return _device_clone(src, False)
    cdef _TensorBase out = _empty_contig(src._dtype, src._ndim, src._shape, src._storage.device, False)
    cdef Py_ssize_t dstr[PT_MAX_DIMS]
    cdef Py_ssize_t sstr[PT_MAX_DIMS]
    _check_same_shape(src, out)
    _byte_strides(out, dstr)
    _byte_strides(src, sstr)
    cdef char* dp = out._ptr()
    cdef char* sp = src._ptr()
    if out._numel:
        ptc_kernel_enter()
        with nogil:
            try:
                copy_cast(dp, out._dtype.num, dstr, sp, src._dtype.num, sstr,
                          out._shape, out._ndim)
            finally:
                ptc_kernel_exit()
    return out


cdef _TensorBase _convert(_TensorBase src, dtype dt, bint preserve_layout):
    """A copy of ``src`` with dtype ``dt`` (layout preserved when dense)."""
    cdef _TensorBase out
    if src._storage.device._type_code != 0:
        if _ops_of(src._storage.device) is None:
            return _no_device(src, "to")
        return _ops_of(src._storage.device).convert(src, dt)
    if preserve_layout:
        out = _empty_strided_like(src, dt, False)
    else:
        out = _empty_contig(dt, src._ndim, src._shape, src._storage.device, False)
    cdef Py_ssize_t dstr[PT_MAX_DIMS]
    cdef Py_ssize_t sstr[PT_MAX_DIMS]
    _check_same_shape(src, out)
    _byte_strides(out, dstr)
    _byte_strides(src, sstr)
    cdef char* dp = out._ptr()
    cdef char* sp = src._ptr()
    if out._numel:
        ptc_kernel_enter()
        with nogil:
            try:
                copy_cast(dp, dt.num, dstr, sp, src._dtype.num, sstr,
                          out._shape, out._ndim)
            finally:
                ptc_kernel_exit()
    return out


# Scalar encoding: a Python number -> one element of a dtype, checking range
# as PyTorch does ("value cannot be converted to type X without overflow").

cdef dict _INT_RANGES = {
    PT_UINT8: (0, 255), PT_INT8: (-128, 127), PT_INT16: (-32768, 32767),
    PT_INT32: (-2147483648, 2147483647),
    PT_INT64: (-9223372036854775808, 9223372036854775807),
    PT_UINT16: (0, 65535), PT_UINT32: (0, 4294967295), PT_UINT64: (0, 18446744073709551615),
}


cdef double _FLOAT32_MAX = 3.4028234663852886e38
cdef double _BF16_MAX = 3.3895313892515355e38
cdef double _HALF_MAX = 65504.0


# PyTorch names the C++ type in its overflow message
cdef dict _CPP_NAMES = {
    PT_BOOL: "bool", PT_UINT8: "uint8_t", PT_INT8: "int8_t", PT_INT16: "int16_t",
    PT_INT32: "int", PT_INT64: "int64_t", PT_FLOAT16: "c10::Half",
    PT_BFLOAT16: "c10::BFloat16", PT_FLOAT32: "float", PT_FLOAT64: "double",
    PT_COMPLEX64: "c10::complex<float>", PT_COMPLEX128: "c10::complex<double>",
    PT_COMPLEX32: "c10::complex<c10::Half>",
    PT_UINT16: "uint16_t", PT_UINT32: "uint32_t", PT_UINT64: "uint64_t",
    PT_FLOAT8_E4M3FN: "c10::Float8_e4m3fn", PT_FLOAT8_E5M2: "c10::Float8_e5m2",
    PT_FLOAT8_E4M3FNUZ: "c10::Float8_e4m3fnuz", PT_FLOAT8_E5M2FNUZ: "c10::Float8_e5m2fnuz",
}

# the float8 types' largest finite values, and whether they have an infinity (PyTorch's
# fill_ checks a number against them: an infinity fits only a type that has one)
cdef dict _FLOAT8_LIMITS = {
    PT_FLOAT8_E4M3FN: (448.0, False), PT_FLOAT8_E5M2: (57344.0, True),
    PT_FLOAT8_E4M3FNUZ: (240.0, False), PT_FLOAT8_E5M2FNUZ: (57344.0, False),
}


def _scalar_cpp_name(dtype dt):
    """The C++ name PyTorch's scalar checks print for ``dt`` (``int64_t``, ``c10::Half``)."""
    return _CPP_NAMES[dt.num]


def _overflow_exception(dtype dt):
    """PyTorch's RuntimeError for a Python number that does not fit ``dt``."""
    return _overflow_error(dt)


cdef object _overflow_error(dtype dt, bint setitem=True):
    # complex32's fill_ goes through complex<float> (PyTorch checks that range)
    name = "c10::complex<float>" if dt.num == PT_COMPLEX32 and not setitem else _CPP_NAMES[dt.num]
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


cdef int _check_float_value(double dv, dtype dt, bint setitem) except -1:
    """``c10::checked_convert`` of a double to ``dt`` (bool never overflows)."""
    cdef double hi
    if dt._category == 0:
        return 0
    if dt._category == 1:
        lo, ihi = _INT_RANGES[dt.num]
        if dv != dv or dv < lo or dv > ihi:         # NaN and +-inf overflow integers
            raise _overflow_error(dt)
        return 0
    if dt.num == PT_FLOAT32 or dt.num == PT_COMPLEX64 or (dt.num == PT_COMPLEX32 and not setitem):
        hi = _FLOAT32_MAX
    elif (dt.num == PT_FLOAT16 and not setitem) or dt.num == PT_COMPLEX32:
        hi = _HALF_MAX
    elif dt.num == PT_BFLOAT16 and not setitem:
        hi = _BF16_MAX
    elif dt.num in _FLOAT8_LIMITS and not setitem:
        hi, has_inf = _FLOAT8_LIMITS[dt.num]
        if (dv > hi or dv < -hi) and (isfinite(dv) or not has_inf):
            raise _overflow_error(dt, setitem)
        return 0
    else:
        return 0
    if isfinite(dv) and (dv > hi or dv < -hi):
        raise _overflow_error(dt, setitem)
    return 0


cdef int _encode_scalar(object value, dtype dt, char* out, bint setitem=False) except -1:
    """One Python number -> one element of ``dt``, checked as PyTorch's ``Scalar.to<T>()``.

    ``setitem`` selects ``tensor[idx] = number`` rules (Python ints must fit int64;
    float16/bfloat16 destinations are not range checked); otherwise ``fill_`` rules
    (ints up to 2**64 - 1 are accepted as unsigned).  A one-element tensor value is
    converted like ``copy_`` (no range check).
    """
    cdef double dv
    cdef double cparts[2]
    cdef int64_t iv
    cdef uint64_t uv
    cdef uint8_t bv
    cdef Py_ssize_t zero = 0
    cdef int src_type
    cdef char buf[16]
    cdef bint checked = True
    if isinstance(value, _TensorBase):
        if (<_TensorBase>value)._numel != 1:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {(<_TensorBase>value)._ndim} dimensions.")
        value = (<_TensorBase>value).item()
        checked = False
    elif not (isinstance(value, (int, float, complex)) or isinstance(value, (_np.number, _np.bool_))):
        # torch's Scalar: a Python or NumPy number or a 0-d tensor; not a NumPy
        # array (0-d included) nor another object with __index__/__float__
        raise TypeError(f"expected a Number (bool, int, float or complex), a NumPy number or a "
                        f"0-d tensor, got {_typename(value)}")
    if isinstance(value, bool):
        bv = 1 if value else 0
        memcpy(buf, &bv, 1)
        src_type = PT_BOOL
    elif isinstance(value, int) or (hasattr(value, "__index__") and not isinstance(value, float)):
        value = _operator.index(value)
        if -9223372036854775808 <= value <= 9223372036854775807:
            if checked and dt._category == 1:
                lo, hi = _INT_RANGES[dt.num]
                if value > hi or (value < -hi if lo == 0 else value < lo):
                    raise _overflow_error(dt)   # unsigned types wrap negatives down to -max
            elif checked and ((dt.num == PT_FLOAT16 and not setitem) or (dt.num == PT_COMPLEX32 and setitem)) \
                    and (value > 65504 or value < -65504):
                raise _overflow_error(dt)
            elif checked and not setitem and dt.num in _FLOAT8_LIMITS \
                    and abs(value) > _FLOAT8_LIMITS[dt.num][0]:
                raise _overflow_error(dt)
            iv = value
            memcpy(buf, &iv, 8)
            src_type = PT_INT64
        else:
            if setitem:
                raise ValueError("Overflow when unpacking long long")
            if value < 0 or value > 18446744073709551615:
                raise OverflowError("int too big to convert")
            if dt.num == PT_UINT64:                 # an unsigned 64-bit Scalar: exact
                uv = value
                copy_cast(out, dt.num, &zero, <char*>&uv, PT_UINT64, &zero, &zero, 0)
                return 0
            if checked and dt._category == 1:       # an unsigned 64-bit Scalar fits no other integer dtype
                raise _overflow_error(dt)
            dv = float(value)
            if checked:
                _check_float_value(dv, dt, setitem)
            memcpy(buf, &dv, 8)
            src_type = PT_FLOAT64
    elif isinstance(value, complex):
        # the parts one by one: Cython's Python -> C complex conversion builds
        # re + im*I, which turns complex(0, inf) into nan+inf*j
        cparts[0] = value.real
        cparts[1] = value.imag
        if checked and dt._category != 0:
            if dt._category != 3 and cparts[1] != 0:
                raise _overflow_error(dt)
            _check_float_value(cparts[0], dt, setitem)
            _check_float_value(cparts[1], dt, setitem)
        memcpy(buf, cparts, 16)
        src_type = PT_COMPLEX128
    else:
        try:
            dv = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"expected a number, got {_typename(value)}") from None
        if checked:
            _check_float_value(dv, dt, setitem)
        memcpy(buf, &dv, 8)
        src_type = PT_FLOAT64
    copy_cast(out, dt.num, &zero, buf, src_type, &zero, &zero, 0)
    return 0


cdef int _fill(_TensorBase t, object value, bint setitem=False) except -1:
    cdef char buf[16]
    cdef Py_ssize_t dstr[PT_MAX_DIMS]
    # PyTorch fills a one-element tensor through a different path whose range
    # check is setitem's for float16/bfloat16 (none) and complex32 (the half range)
    _encode_scalar(value, t._dtype, buf, setitem or (
        t._numel == 1 and (t._dtype.num == PT_FLOAT16 or t._dtype.num == PT_BFLOAT16
                           or t._dtype.num == PT_COMPLEX32 or t._dtype.num in _FLOAT8_LIMITS)))
    if t._numel == 0:
        return 0
    if setitem or isinstance(value, _TensorBase):
        _check_internal_overlap(t)  # fill_(number) writes an expanded tensor's base (as PyTorch)
    _byte_strides(t, dstr)
    cdef char* dp = t._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            _kfill(dp, t._dtype.num, dstr, t._shape, t._ndim, buf)
        finally:
            ptc_kernel_exit()
    return 0


cdef object _read_scalar(const char* p, int num):
    if num == PT_BOOL:
        return (<const uint8_t*>p)[0] != 0
    if num == PT_UINT8:
        return (<const uint8_t*>p)[0]
    if num == PT_INT8:
        return (<const int8_t*>p)[0]
    if num == PT_INT16:
        return (<const int16_t*>p)[0]
    if num == PT_INT32:
        return (<const int32_t*>p)[0]
    if num == PT_INT64:
        return (<const int64_t*>p)[0]
    if num == PT_FLOAT16:
        return <double>ptc_half_to_float((<const uint16_t*>p)[0])
    if num == PT_BFLOAT16:
        return <double>ptc_bf16_to_float((<const uint16_t*>p)[0])
    if num == PT_FLOAT32:
        return <double>(<const float*>p)[0]
    if num == PT_FLOAT64:
        return (<const double*>p)[0]
    if num == PT_COMPLEX64:
        return complex((<const float*>p)[0], (<const float*>p)[1])
    if num == PT_COMPLEX32:
        return complex(<double>ptc_half_to_float((<const uint16_t*>p)[0]),
                       <double>ptc_half_to_float((<const uint16_t*>p)[1]))
    if num == PT_UINT16:
        return (<const uint16_t*>p)[0]
    if num == PT_UINT32:
        return (<const uint32_t*>p)[0]
    if num == PT_UINT64:
        return (<const uint64_t*>p)[0]
    if num == PT_FLOAT8_E4M3FN:
        return <double>ptc_e4m3fn_to_float((<const uint8_t*>p)[0])
    if num == PT_FLOAT8_E5M2:
        return <double>ptc_e5m2_to_float((<const uint8_t*>p)[0])
    if num == PT_FLOAT8_E4M3FNUZ:
        return <double>ptc_e4m3fnuz_to_float((<const uint8_t*>p)[0])
    if num == PT_FLOAT8_E5M2FNUZ:
        return <double>ptc_e5m2fnuz_to_float((<const uint8_t*>p)[0])
    return complex((<const double*>p)[0], (<const double*>p)[1])


cdef list _tolist_dims(const char* p, int num, Py_ssize_t isz, int d, int ndim,
                       const Py_ssize_t* shape, const Py_ssize_t* strides):
    """Nested lists of the values of the strided block at ``p`` from dim ``d`` on."""
    cdef Py_ssize_t n = shape[d], i
    cdef Py_ssize_t step = strides[d] * isz
    cdef list out = PyList_New(n)
    cdef object v
    for i in range(n):
        if d + 1 < ndim:
            v = _tolist_dims(p + i * step, num, isz, d + 1, ndim, shape, strides)
        elif num == PT_FLOAT32:
            v = PyFloat_FromDouble((<const float*>(p + i * step))[0])
        elif num == PT_FLOAT64:
            v = PyFloat_FromDouble((<const double*>(p + i * step))[0])
        else:
            v = _read_scalar(p + i * step, num)
        Py_INCREF(v)                     # PyList_SET_ITEM steals a reference
        PyList_SET_ITEM(out, i, v)
    return out


cdef dict _BUFFER_FORMATS = {
    PT_BOOL: b"?", PT_UINT8: b"B", PT_INT8: b"b", PT_INT16: b"h", PT_INT32: b"i",
    PT_INT64: _np.dtype(_np.int64).char.encode(), PT_FLOAT16: b"e", PT_FLOAT32: b"f", PT_FLOAT64: b"d",
    PT_COMPLEX64: b"Zf", PT_COMPLEX128: b"Zd",
    PT_UINT16: b"H", PT_UINT32: b"I", PT_UINT64: _np.dtype(_np.uint64).char.encode(),
}


cdef extern from *:
    """
    /* NumPy's C-level array interface, the struct that __array_struct__'s
       capsule points to (its layout is the protocol's: no NumPy headers) */
    typedef struct {
        int two; int nd; char typekind; int itemsize; int flags;
        Py_ssize_t *shape; Py_ssize_t *strides; void *data; PyObject *descr;
    } ptc_array_interface;
    """
    ctypedef struct ptc_array_interface:
        int two
        int nd
        char typekind
        int itemsize
        int flags
        Py_ssize_t* shape
        Py_ssize_t* strides
        void* data
        PyObject* descr

cdef enum:
    # the interface's flags: NumPy's ALIGNED | NOTSWAPPED | WRITEABLE | ARR_HAS_DESCR
    PTC_ARR_FLAGS = 0x100 | 0x200 | 0x400 | 0x800

cdef char _empty_data = 0      # the data pointer of an empty tensor without memory


cdef void _release_interface_capsule(object capsule) noexcept:
    """A capsule of ``_ArrayExport.__array_struct__`` dies: let go of its export."""
    Py_DECREF(<object>PyCapsule_GetContext(capsule))


@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _ArrayExport:
    """Hands a CPU tensor's memory to NumPy through ``__array_struct__``: the
    array's base, keeping the tensor alive."""
    cdef object _tensor
    cdef Storage _st        # counted in _st._nexports while the array lives
    cdef ptc_array_interface* _inter    # the tensor's layout when exported

    @property
    def __array_struct__(self):
        cap = PyCapsule_New(self._inter, NULL, _release_interface_capsule)
        PyCapsule_SetContext(cap, <void*>self)
        Py_INCREF(self)         # the capsule's reference, dropped by its destructor
        return cap

    def __dealloc__(self):
        if self._st is not None:
            self._st._nexports -= 1
        PyMem_Free(self._inter)


# ---------------------------------------------------------------------------
# _TensorBase
# ---------------------------------------------------------------------------

cdef object _advanced_getitem = None
cdef object _advanced_setitem = None


def _set_indexing_hooks(getter, setter):
    """Advanced (tensor/list/mask) indexing lives in ptcore._ops.indexing."""
    global _advanced_getitem, _advanced_setitem
    _advanced_getitem = getter
    _advanced_setitem = setter


cdef _TensorBase _slice_dim(_TensorBase self, int d, Py_ssize_t start, Py_ssize_t end):
    """``at::slice(self, d, start, end)``: wraps negatives, clamps, keeps start's offset."""
    cdef Py_ssize_t size = self._shape[d]
    if start < 0:
        start += size
    if end < 0:
        end += size
    if start < 0:
        start = 0
    elif start >= size:
        start = size
    if end < start:
        end = start
    elif end >= size:
        end = size
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef int i
    for i in range(self._ndim):
        sh[i] = self._shape[i]
    sh[d] = end - start
    return self._view(self._ndim, sh, self._strides, self._offset + start * self._strides[d], VK_SLICE)


def _number_as_tensor(src):
    """``copy_``'s source: torch wraps a Python number as a 0-d tensor of its
    own dtype (bool, int64, float64, complex128); anything else unchanged."""
    if type(src) not in (bool, int, float, complex):
        return src
    if type(src) is int and not -2 ** 63 <= src < 2 ** 63:
        raise OverflowError("int too big to convert")
    return full((), src, dtype=(bool_ if type(src) is bool else int64 if type(src) is int
                                else float64 if type(src) is float else complex128))


#: more pieces than chunk/tensor_split can return (one tensor object each): torch's
#: std::vector of them fails to allocate (RuntimeError), ptcore would build the tuple for
#: hours before running out of memory
_MAX_PIECES = 1 << 24


def _check_pieces(str fname, n):
    if n > _MAX_PIECES:
        raise RuntimeError(f"{fname}: cannot make {n} pieces, one tensor each (torch: "
                           "std::bad_alloc / cannot create std::vector larger than max_size())")


cdef inline bint _is_basic_index(object o) noexcept:
    return (o is None or o is Ellipsis or type(o) is slice or type(o) is int or type(o) is bool)


cdef int _count_ellipses(tuple items) noexcept:
    """How many items are Ellipsis, by identity (``tuple.count`` compares with
    ``==``, which a NumPy array index answers elementwise)."""
    cdef int n = 0
    for it in items:
        if it is Ellipsis:
            n += 1
    return n


cdef tuple _drop_extra_ellipses(tuple items, int nd):
    """PyTorch accepts several Ellipsis in one index: each one advances its
    dimension cursor by the dims the other items leave, so the first expands
    as usual and a later one points past the last dimension, where only more
    Ellipsis and full slices (no-ops) may follow.  The equivalent
    single-Ellipsis index, or IndexError as torch's."""
    cdef int specified = 0, n = 0, second = -1, k
    for it in items:
        if isinstance(it, _TensorBase) and ((<_TensorBase>it)._dtype is bool_
                                            or (<_TensorBase>it)._dtype is uint8):
            specified += (<_TensorBase>it)._ndim      # a mask covers its dims
        elif isinstance(it, _np.ndarray) and it.dtype == _np.bool_:
            specified += it.ndim
        elif it is not None and it is not Ellipsis and type(it) is not bool:
            specified += 1
    if nd - specified <= 0:   # every Ellipsis expands to no dimension
        return tuple(it for it in items if it is not Ellipsis)
    n = 0
    for k in range(len(items)):
        if items[k] is Ellipsis:
            n += 1
            if n == 2:
                second = k
                break
    for it in items[second:]:
        if not (it is Ellipsis or (type(it) is slice and it == slice(None))):
            raise IndexError(f"an index after a second ellipsis ('...') addresses a dimension past "
                             f"the last of a tensor of dimension {nd}")
    return items[:second]


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

    def __dealloc__(self):
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
        # PyTorch: _unsafe_view(clone): a fresh tensor, not a view (its _base is None)
        cdef _TensorBase v = self.contiguous().view(newshape)
        v._view_base = None
        return v

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def as_strided(self, size, stride, storage_offset=None):
        """A view with explicit sizes, strides (elements) and storage offset."""
        cdef list sh = [_operator.index(s) for s in size]
        cdef list st = [_operator.index(s) for s in stride]
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

    swapdims = transpose

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

    moveaxis = movedim

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
        if s + n > size:
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
            sizes = [_operator.index(s) for s in split_size]
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
            return self._select_index(0, idx)
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
                i = _operator.index(it)
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
            from ptcore.autograd.grad_mode import is_grad_enabled
            if is_grad_enabled():
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
            from ptcore.autograd.grad_mode import is_grad_enabled
            if is_grad_enabled():
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



# ---------------------------------------------------------------------------
# hooks filled in by higher layers (autograd, cuda, dlpack)
# ---------------------------------------------------------------------------

cdef object _view_hook = None       # autograd: record a view of a tensor requiring grad
cdef object _split_hook = None      # autograd: record split's pieces as one node (False: declined)
cdef object _inplace_hook = None    # autograd: check an in-place write on a tensor requiring grad
cdef object _grad_wrap_hook = None  # autograd: attach grad_fn to clone/contiguous results
cdef object _dlpack_module = None
# the tracing layer (_dispatch.tracing): while a trace that records sizes runs
# on some thread, shape/size()/numel() call this hook and return its result:
# hook(t, which, value), which: None (the shape) or a wrapped dimension (value:
# the whole shape), or "numel" (value: the number of elements), so a traced
# program's sizes follow its inputs; None (no such trace anywhere) costs one
# comparison
cdef object _size_hook = None


def _set_size_hook(hook):
    global _size_hook
    _size_hook = hook


def _set_autograd_hooks(view_hook, inplace_hook, grad_wrap_hook, split_hook=None):
    global _view_hook, _inplace_hook, _grad_wrap_hook, _split_hook
    _view_hook = view_hook
    _inplace_hook = inplace_hook
    _grad_wrap_hook = grad_wrap_hook
    _split_hook = split_hook if view_hook is not None else None


def _set_device_ops(ops, device_type="cuda"):
    """Install (None: remove) the device runtime's tensor ops for ``device_type``."""
    _DEVICE_OPS[_DEVICE_TYPES[device_type]] = ops


cdef object _grad_wrap(_TensorBase src, object out, str name):
    if _grad_wrap_hook is not None and src._requires_grad:
        return _grad_wrap_hook(src, out, name)
    return out


cdef object _no_device(_TensorBase t, str what):
    _require_cpu(t._storage.device, what)
    raise RuntimeError(f"{what}: unsupported device {t._storage.device}")


cdef object _device_copy(_TensorBase dst, object src, bint non_blocking):
    # the runtime of the side that is off the CPU; with two such devices the
    # higher type code's (meta: a copy out of it has no data to move)
    cdef device dev = dst._storage.device
    cdef device sdev = (<_TensorBase>src)._storage.device
    if sdev._type_code > dev._type_code:
        dev = sdev
    ops = _ops_of(dev)
    if ops is None:
        return _no_device(dst if dev is dst._storage.device else <_TensorBase>src, "copy_")
    return ops.copy_(dst, src, non_blocking)


cdef object _device_fill(_TensorBase t, object value):
    ops = _ops_of(t._storage.device)
    if ops is None:
        return _no_device(t, "fill_")
    return ops.fill_(t, value)


cdef object _device_clone(_TensorBase t, bint preserve):
    ops = _ops_of(t._storage.device)
    if ops is None:
        return _no_device(t, "clone")
    return ops.clone(t, preserve)


cdef object _device_item(_TensorBase t):
    ops = _ops_of(t._storage.device)
    if ops is None:
        return _no_device(t, "item")
    return ops.item(t)


cdef object _pin(object t):
    """``pin_memory=True`` of a factory: the tensor in page-locked memory."""
    if (<_TensorBase>t)._storage.device._type_code != 0:
        raise RuntimeError(f"pin_memory=True needs a CPU tensor, got one on {(<_TensorBase>t)._storage.device}")
    rg = (<_TensorBase>t)._requires_grad
    p = t.pin_memory()
    (<_TensorBase>p)._requires_grad = rg
    return p


cdef int _check_host_data(_TensorBase t, object extra, str what) except -1:
    """Raise NotImplementedError when an op with only a CPU kernel gets a
    device tensor (``t`` or a tensor in ``extra``): device memory is never
    read on the host."""
    cdef device dev = t._storage.device
    if dev._type_code == 0:
        if isinstance(extra, _TensorBase):
            dev = (<_TensorBase>extra)._storage.device
        elif isinstance(extra, (tuple, list)):
            for x in extra:
                if isinstance(x, _TensorBase) and (<_TensorBase>x)._storage.device._type_code != 0:
                    dev = (<_TensorBase>x)._storage.device
                    break
                if isinstance(x, (tuple, list)):
                    _check_host_data(t, x, what)
    if dev._type_code != 0:
        raise NotImplementedError(f"{what}: no {dev.type.upper()} kernel yet for this op "
                                  f"(an argument is on {dev}); move the tensors to the CPU with .cpu()")
    return 0


cdef object _dlpack_export(_TensorBase t, object stream, object max_version, object dl_device, object copy):
    global _dlpack_module
    if _dlpack_module is None:
        from ptcore import _dlpack as m
        _dlpack_module = m
    return _dlpack_module.to_dlpack(t, stream=stream, max_version=max_version,
                                    dl_device=dl_device, copy=copy)


# ---------------------------------------------------------------------------
# layouts and memory formats
# ---------------------------------------------------------------------------

@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _Enumish:
    cdef readonly str name

    def __repr__(self):
        return "ptcore." + self.name

    def __reduce__(self):
        return self.name


cdef _Enumish _mk_enum(str name):
    cdef _Enumish e = _Enumish.__new__(_Enumish)
    e.name = name
    return e


_strided_layout = _mk_enum("strided")
strided = _strided_layout
contiguous_format = _mk_enum("contiguous_format")
preserve_format = _mk_enum("preserve_format")
channels_last = _mk_enum("channels_last")
channels_last_3d = _mk_enum("channels_last_3d")


cdef tuple _memory_format_perm(_TensorBase t, object fmt):
    if fmt is channels_last:
        if t._ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    if fmt is channels_last_3d:
        if t._ndim != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return (0, 2, 3, 4, 1)
    raise TypeError(f"argument 'memory_format' must be torch.memory_format, not {_typename(fmt)}")


cdef bint _is_contig_format(_TensorBase t, object fmt) except -1:
    """``_is_contig`` of the dims taken in the format's order (read off the
    strides: no view, and no call of a Tensor.permute a user may have
    wrapped -- the memory-format tutorial's checker calls is_contiguous
    from inside such a wrapper).  As torch: False for a tensor of another
    rank than the format's, and no shortcut for empty tensors (their
    strides decide)."""
    if (fmt is channels_last and t._ndim != 4) or (fmt is channels_last_3d and t._ndim != 5):
        return False
    perm = _memory_format_perm(t, fmt)
    cdef Py_ssize_t z = 1
    cdef int i, d
    for i in range(len(perm) - 1, -1, -1):
        d = perm[i]
        if t._shape[d] != 1:
            if t._strides[d] != z:
                return False
            z *= t._shape[d]
    return True


cdef object _to_memory_format(_TensorBase t, object fmt):
    # (the base class's permute: not a user's wrapper of Tensor.permute)
    perm = _memory_format_perm(t, fmt)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    p = _TensorBase.permute(t, perm)
    cdef _TensorBase out = _TensorBase.permute(_clone_contig(<_TensorBase>p), inv)
    cdef Py_ssize_t z = 1
    if out._numel == 0:
        # torch's strides for an empty tensor: plain products of the sizes
        # in the format's order, a zero size kept (empty (2, 0, 4, 5) in
        # channels_last has strides (0, 1, 0, 0)), so is_contiguous of that
        # format holds
        for i in range(len(perm) - 1, -1, -1):
            out._strides[perm[i]] = z
            z *= out._shape[perm[i]]
    return out


cdef int _check_in_bounds(Storage st, dtype dt, list sh, list strides, Py_ssize_t off) except -1:
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i, nd = len(sh)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    for i in range(nd):
        csh[i] = sh[i]
        cst[i] = strides[i]
    _checked_numel(nd, csh)
    cdef Py_ssize_t need = _storage_nbytes(nd, csh, cst, off, dt.itemsize)
    if need > st._nbytes:
        _raise_out_of_bounds(sh, strides, off, dt.itemsize, need, st._nbytes)
    return 0


cdef int _raise_out_of_bounds(sizes, strides, Py_ssize_t off, int itemsize, Py_ssize_t need,
                              Py_ssize_t nbytes) except -1:
    raise RuntimeError(
        f"setStorage: sizes {_fmt_list(sizes)}, strides {_fmt_list(strides)}, storage offset {off}, "
        f"and itemsize {itemsize} requiring a storage size of {need} are out of bounds for "
        f"storage of size {nbytes}")


# What ``t[idx] = value`` takes, as PyTorch: a tensor or a Python number
# (NumPy integers count as ints, ``float64``/``complex128`` subclass float and
# complex); lists, arrays and other NumPy scalars are refused with TypeError.
_SETITEM_VALUE_TYPES = (_TensorBase, bool, int, float, complex, _np.integer)


cdef int _refuse_setitem_value(_TensorBase self, object value) except -1:
    from ptcore.tensor import _legacy_type_name
    cdef type tp = type(value)
    name = tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__name__}"
    raise TypeError(f"can't assign a {name} to a {_legacy_type_name(self)}")


cdef int _assign(_TensorBase dst, object value) except -1:
    """``dst[...] = value`` for a view ``dst`` (tensor, number or nested data)."""
    cdef _TensorBase src
    if isinstance(value, _TensorBase):
        src = <_TensorBase>value
        # PyTorch drops leading size-1 dims of the value ("slicePrefix1sSize")
        while src._ndim > dst._ndim and src._shape[0] == 1:
            src = src._select(0, 0)
        if src._storage.device._type_code != 0 or dst._storage.device._type_code != 0:
            _device_copy(dst, src, False)
        else:
            _check_partial_overlap(dst, src)
            _copy_into(dst, src)
        return 0
    if isinstance(value, (bool, int, float, complex)) or (
            hasattr(value, "__index__") or hasattr(value, "__float__")) and not hasattr(value, "__len__"):
        if dst._storage.device._type_code != 0:
            _device_fill(dst, value)
        else:
            _fill(dst, value, True)
        return 0
    from ptcore import tensor as _tensor_fn
    return _assign(dst, _tensor_fn(value, dtype=dst._dtype))


# ---------------------------------------------------------------------------
# pickling by value, deepcopy
# ---------------------------------------------------------------------------

cdef tuple _reduce_tensor(_TensorBase t):
    cdef _TensorBase c = t
    if t._storage._kind == STORAGE_META:
        # no data: the dtype and geometry (as torch's _rebuild_meta_tensor_no_storage)
        d = getattr(t, "__dict__", None)
        return (_rebuild_meta_tensor, (t._dtype._name, _make_tuple(t._ndim, t._shape),
                                       _make_tuple(t._ndim, t._strides),
                                       bool(t._requires_grad), type(t), dict(d) if d else None))
    if t._storage.device._type_code != 0:
        c = t.cpu()
    # by value: the tensor's own elements only (never the rest of a larger
    # storage), in torch's preserve_format layout (a transposed or permuted
    # tensor keeps its strides, as torch's pickle does)
    cdef _TensorBase src
    if c._offset != 0 or c._storage._nbytes != c._numel * c._dtype.itemsize \
            or not _non_overlapping_and_dense(c):
        src = c
        c = _empty_strided_like(src, src._dtype, False)
        _copy_into(c, src)
    data = c._storage._bytes()
    state = None
    d = getattr(t, "__dict__", None)
    if d:
        state = dict(d)
    return (_rebuild_tensor, (data, t._dtype._name, _make_tuple(t._ndim, t._shape),
                              bool(t._requires_grad), str(t._storage.device), type(t), state,
                              _make_tuple(c._ndim, c._strides)))


def _rebuild_tensor(bytes data, str dtype_name, tuple shape, bint requires_grad=False,
                    str dev="cpu", cls=None, state=None, tuple strides=None):
    """Rebuild a pickled tensor from its bytes (no code runs beyond this):
    ``strides`` (dense, within the bytes) or contiguous."""
    cdef dtype dt = _dtype_from_name(dtype_name)
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    if nd > PT_MAX_DIMS:
        raise ValueError("corrupt tensor pickle: too many dimensions")
    for i in range(nd):
        sh[i] = shape[i]
    cdef Py_ssize_t nbytes = _checked_nbytes(nd, sh, dt.itemsize)
    if nbytes != len(data):
        raise ValueError(
            f"corrupt tensor pickle: shape {list(shape)} of {dt!r} needs {nbytes} bytes, got {len(data)}")
    if strides is None:
        _contig_strides(nd, sh, st)
    elif len(strides) != nd:
        raise ValueError(f"corrupt tensor pickle: {len(strides)} strides for {nd} dimensions")
    else:
        for i in range(nd):
            st[i] = strides[i]
            if st[i] < 0:
                raise ValueError(f"corrupt tensor pickle: negative stride in {list(strides)}")
        if _storage_nbytes(nd, sh, st, 0, dt.itemsize) > nbytes:
            raise ValueError(f"corrupt tensor pickle: strides {list(strides)} of shape "
                             f"{list(shape)} reach past its {nbytes} bytes")
    cdef _TensorBase t = _make_tensor(_new_host_storage(nbytes, False), dt, nd, sh, st, 0)
    if nbytes:
        memcpy(t._ptr(), <const char*>data, nbytes)
    r = _rebuilt_as(t, cls, requires_grad, state)
    if dev != "cpu":
        return r.to(dev)
    return r


def _rebuild_meta_tensor(str dtype_name, tuple shape, tuple strides, bint requires_grad=False,
                         cls=None, state=None):
    """Rebuild a pickled meta tensor (no data) from its dtype and geometry."""
    t = empty_strided(shape, strides, dtype=_dtype_from_name(dtype_name), device="meta")
    return _rebuilt_as(t, cls, requires_grad, state)


cdef object _rebuilt_as(object t, object cls, bint requires_grad, object state):
    """A rebuilt tensor as its pickled class, requires_grad and attributes."""
    if cls is not None and cls is not _TensorClass:
        if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
            raise TypeError(f"corrupt tensor pickle: {cls!r} is not a tensor class")
        t = _TensorClass._make_subclass(cls, t, False)
    if requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


cdef object _deepcopy_tensor(_TensorBase t, dict memo):
    if t._grad_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001")
    key = id(t)
    if key in memo:
        return memo[key]
    cdef Storage st
    if t._storage.device._type_code != 0:
        new = _device_clone(t, True)
    else:
        # as PyTorch: the storage is deep-copied once per memo, so copies of
        # views of one storage still share theirs (same offset and strides)
        skey = id(t._storage)
        st = memo.get(skey)
        if st is None:
            st = _new_host_storage(t._storage._nbytes, False)
            if t._storage._nbytes:
                memcpy(st._data, t._storage._data, t._storage._nbytes)
            memo[skey] = st
            memo.setdefault(id(memo), []).append(t._storage)    # keep the key's object alive
        new = _make_tensor(st, t._dtype, t._ndim, t._shape, t._strides, t._offset)
    if type(t) is not _TensorClass:
        new = _TensorClass._make_subclass(type(t), new, False)
    (<_TensorBase>new)._requires_grad = t._requires_grad
    memo[key] = new
    if t._grad is not None:
        import copy as _copy
        (<_TensorBase>new)._grad = _copy.deepcopy(t._grad, memo)
    d = getattr(t, "__dict__", None)
    if d:
        import copy as _copy
        for k, v in d.items():
            setattr(new, k, _copy.deepcopy(v, memo))
    return new


# ---------------------------------------------------------------------------
# fast factories (the per-call cost of zeros(1) matters)
# ---------------------------------------------------------------------------

cdef inline dtype _resolve_dtype(object dt, dtype default):
    if dt is None:
        return default
    if type(dt) is dtype:
        return <dtype>dt
    return _dtype_arg(dt)


cdef dtype _dtype_arg(object dt):
    if isinstance(dt, dtype):
        return <dtype>dt
    if isinstance(dt, str) and dt in _DTYPE_BY_NAME:
        return <dtype>_DTYPE_BY_NAME[dt]
    if dt is float:
        return float64
    if dt is int:
        return int64
    if dt is bool:
        return bool_
    if dt is complex:
        return complex128
    try:
        return <dtype>_dtype_from_numpy(dt)
    except TypeError:
        raise TypeError(f"expected a ptcore.dtype, got {dt!r}") from None


def _as_dtype(dt):
    """Validate a dtype argument (ptcore dtype, NumPy dtype, or Python type)."""
    return _dtype_arg(dt)


cdef int _check_requires_grad(_TensorBase t, bint rg) except -1:
    if rg:
        if t._dtype._category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return 0


cdef _TensorBase _factory(tuple size, object dtype_, object device_, bint rg, dtype default,
                          int mode, object value, str fname):
    # mode 0 empty, 1 zeros, 2 full(value)
    cdef list shape = _parse_shape_args(size, fname)
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    cdef dtype dt = _resolve_dtype(dtype_, default)
    cdef device dev = _as_device(device_)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    for i in range(nd):
        sh[i] = shape[i]
    cdef _TensorBase t
    if dev._type_code != 0:
        _checked_nbytes(nd, sh, dt.itemsize)
        _require_cpu(dev, fname)
        t = _ops_of(dev).empty(shape, dt, dev)
        if mode == 1:
            t.zero_()
        elif mode == 2:
            t.fill_(value)
        if mode:
            t._vc = _VersionCounter.__new__(_VersionCounter)    # a new tensor: version 0, as torch's
    else:
        t = _empty_contig(dt, nd, sh, dev, mode == 1)
        if mode == 2:
            _fill(t, value)
    _check_requires_grad(t, rg)
    return t


cdef int _check_dtype_kwarg(str fname, object dtype_) except -1:
    """torch's parser: ``dtype=`` is a torch dtype (or Python's bool/int/float/complex);
    a NumPy dtype or type is a TypeError."""
    if dtype_ is not None and not isinstance(dtype_, dtype) and dtype_ not in (bool, int, float,
                                                                              complex):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not "
                        f"{'type' if isinstance(dtype_, type) else _typename(dtype_)}")
    return 0


cdef int _check_factory_opts(str fname, object dtype_, object layout, object rg, object pin,
                             object out) except -1:
    """torch's parser checks of a factory's keywords: ``requires_grad`` and
    ``pin_memory`` are bools (or None), ``layout`` a layout, and an explicit
    ``dtype`` must be ``out``'s."""
    if rg is not None and rg is not True and rg is not False:
        raise TypeError(f"{fname}(): argument 'requires_grad' must be bool, not {_typename(rg)}")
    if pin is not None and pin is not True and pin is not False:
        raise TypeError(f"{fname}(): argument 'pin_memory' must be bool, not {_typename(pin)}")
    if layout is not None and layout is not strided and type(layout).__name__ != "_Layout":
        raise TypeError(f"{fname}(): argument 'layout' must be torch.layout, not {_typename(layout)}")
    _check_dtype_kwarg(fname, dtype_)
    if dtype_ is not None and isinstance(out, _TensorBase) \
            and _dtype_arg(dtype_) is not (<_TensorBase>out)._dtype:
        raise RuntimeError(f"dtype {_dtype_arg(dtype_)._legacy} does not match dtype of out "
                           f"parameter ({(<_TensorBase>out)._dtype._legacy})")
    return 0


def _check_factory_kwargs(fname, dtype=None, layout=None, requires_grad=False, pin_memory=False,
                          out=None):
    """Python entry of the factories' keyword checks (for factories written in Python)."""
    _check_factory_opts(fname, dtype, layout, requires_grad, pin_memory, out)


cdef object _finish_out(_TensorBase t, object out, str fname):
    if out is None:
        return t
    if not isinstance(out, _TensorBase):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {_typename(out)}")
    # the factories (empty, zeros, ones, full) resize their out without torch's
    # deprecation warning of the resize (their kernels call resize_ directly)
    if tuple(out.shape) != tuple(t.shape):
        out.resize_(t.shape)
    out.copy_(t)
    return out


cdef tuple _size_args(tuple args, object size, str fname):
    """Shape arguments given positionally or as the ``size=`` keyword (as PyTorch)."""
    if size is None:
        if not args:
            # (torch: the shape is required; ``zeros(())`` or ``zeros(size=())`` is 0-d)
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        return args
    if args:
        raise TypeError(f"{fname}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not {_typename(size)}")
    return (size,)


# torch's fill of uninitialised memory under use_deterministic_algorithms(True)
# (torch.utils.deterministic.fill_uninitialized_memory): set by ptcore._settings
cdef bint _det_fill = False
cdef object _det_fill_fn = None


def _set_deterministic_fill(bint on, fill_fn=None):
    """Fill the memory of empty tensors with ``fill_fn(t)`` (NaN or the dtype's
    largest value) while ``on``."""
    global _det_fill, _det_fill_fn
    _det_fill = on and fill_fn is not None
    _det_fill_fn = fill_fn


cdef inline _TensorBase _det_filled(_TensorBase t):
    if _det_fill and t._numel:
        _det_fill_fn(t)
    return t


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """Uninitialised tensor of the given shape (``empty(2, 3)``, ``empty((2, 3))`` or ``empty(size=...)``)."""
    size = _size_args(args, size, "empty")
    _check_factory_opts("empty", dtype, layout, requires_grad, pin_memory, out)
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve (empty() has no input whose "
                           "layout it could preserve)")
    cdef _TensorBase t = _det_filled(
        _factory(size, dtype, device, requires_grad, _default_dtype, 0, None, "empty"))
    if memory_format is not None and memory_format is not contiguous_format:
        t = _to_memory_format(t, memory_format)
        t._requires_grad = requires_grad
    if pin_memory:
        t = _pin(t)
    return _finish_out(t, out, "empty")


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Tensor of zeros (large ones are zero-filled lazily by the OS)."""
    size = _size_args(args, size, "zeros")
    _check_factory_opts("zeros", dtype, layout, requires_grad, pin_memory, out)
    t = _factory(size, dtype, device, requires_grad, _default_dtype, 1, None, "zeros")
    return _finish_out(_pin(t) if pin_memory else t, out, "zeros")


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Tensor of ones."""
    size = _size_args(args, size, "ones")
    _check_factory_opts("ones", dtype, layout, requires_grad, pin_memory, out)
    t = _factory(size, dtype, device, requires_grad, _default_dtype, 2, 1, "ones")
    return _finish_out(_pin(t) if pin_memory else t, out, "ones")


cdef dtype _scalar_dtype(object v):
    """The dtype PyTorch gives a Python number used as a fill value (as a ``Scalar``)."""
    cdef dtype d
    if isinstance(v, bool):
        return bool_
    if isinstance(v, int) or isinstance(v, _np.integer):
        return int64
    if isinstance(v, complex) or isinstance(v, _np.complexfloating):
        return _default_complex()
    if isinstance(v, _TensorBase):
        if (<_TensorBase>v)._ndim != 0:
            raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {_typename(v)}")
        d = (<_TensorBase>v)._dtype
        if d._category == 0:
            return bool_
        if d._category == 1:
            return int64
        if d._category == 3:
            return _default_complex()
    return _default_dtype


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Tensor filled with ``fill_value`` (dtype inferred from the value, as PyTorch)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_typename(size)}")
    _check_factory_opts("full", dtype, layout, requires_grad, pin_memory, out)
    t = _factory((size,), dtype, device, requires_grad, _scalar_dtype(fill_value), 2, fill_value, "full")
    return _finish_out(_pin(t) if pin_memory else t, out, "full")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """Uninitialised tensor with explicit strides (in elements)."""
    _check_dtype_kwarg("empty_strided", dtype)
    t = _empty_strided_impl(size, stride, dtype, device, requires_grad)
    return _pin(t) if pin_memory else t


cdef _empty_strided_impl(size, stride, dtype_, device_, bint requires_grad):
    cdef list sh = [_operator.index(s) for s in size]
    cdef list st = [_operator.index(s) for s in stride]
    if len(sh) != len(st):
        raise RuntimeError(
            f"mismatch in length of strides and shape: {len(st)} strides for {len(sh)} dims")
    cdef dtype dt = _resolve_dtype(dtype_, _default_dtype)
    cdef device dev = _as_device(device_)
    cdef _TensorBase t
    if dev._type_code != 0:
        _require_cpu(dev, "empty_strided")
    for s in sh:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_fmt_list(sh)}")
    for s in st:
        if s < 0:
            raise RuntimeError(f"empty_strided: negative strides are not supported, got {_fmt_list(st)}")
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i
    if len(sh) > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {len(sh)}")
    for i in range(len(sh)):
        csh[i] = sh[i]
        cst[i] = st[i]
    cdef Py_ssize_t need = _storage_nbytes(len(sh), csh, cst, 0, dt.itemsize)
    _checked_numel(len(sh), csh)
    if dev._type_code != 0:
        t = _det_filled(_ops_of(dev).empty_strided(sh, st, dt, dev))
        _check_requires_grad(t, requires_grad)
        return t
    cdef Storage storage = _new_host_storage(need, False)
    t = _det_filled(_make_tensor(storage, dt, len(sh), csh, cst, 0))
    _check_requires_grad(t, requires_grad)
    return t


def _like(_TensorBase src not None, dtype_, device_, bint rg, int mode, value, memory_format):
    """empty_like/zeros_like/ones_like/full_like: PyTorch keeps a dense input's layout."""
    cdef dtype dt = _resolve_dtype(dtype_, src._dtype)
    cdef device dev = src._storage.device if device_ is None else _as_device(device_)
    cdef _TensorBase t
    cdef bint preserve = memory_format is None or memory_format is preserve_format
    if dev._type_code != 0 or src._storage.device._type_code != 0:
        if not (preserve and dev == src._storage.device):
            t = _factory((list(src.shape),), dt, dev, rg, dt, mode, value, "like")
            return _det_filled(t) if mode == 0 else t
        t = _empty_strided_like(src, dt, mode == 1)     # on src's device, its layout kept
        if mode == 2:
            t.fill_(value)
        elif mode == 0:
            _det_filled(t)
        _check_requires_grad(t, rg)
        return t
    if preserve:
        t = _empty_strided_like(src, dt, mode == 1)
    elif memory_format is contiguous_format:
        t = _empty_contig(dt, src._ndim, src._shape, dev, mode == 1)
    else:
        t = _to_memory_format(_empty_contig(dt, src._ndim, src._shape, dev, mode == 1), memory_format)
    if mode == 2:
        _fill(t, value)
    elif mode == 0:
        _det_filled(t)
    _check_requires_grad(t, rg)
    return t


def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array (changes show through both ways)."""
    return _numpy_view(ndarray, True)


cdef bint _readonly_warned = False


def _numpy_view(ndarray, bint warn_readonly):
    """``from_numpy``; ``warn_readonly``: whether a read-only array gives torch's
    warning (once per process, as its TORCH_WARN_ONCE; ``torch.tensor`` and
    other copying constructors do not warn)."""
    global _readonly_warned
    if not isinstance(ndarray, _np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_typename(ndarray)})")
    arr = ndarray
    npd = arr.dtype
    cdef dtype dt = _NP_TO_DTYPE.get(npd)      # the native supported dtypes
    if dt is None:
        if not npd.isnative:
            raise ValueError(
                "given numpy array has byte order different from the native byte order. Conversion "
                "between byte orders is currently not supported.")
        dt = _dtype_from_numpy(npd)
    # the data pointer through the buffer protocol (a read-only request: a
    # read-only array is taken too, with the warning below); the shape and
    # strides are the array's own (a buffer's strides are normalised where a
    # dimension has size 0 or 1)
    cdef Py_buffer view
    PyObject_GetBuffer(arr, &view, PyBUF_STRIDES)
    cdef char* data = <char*>view.buf
    cdef bint writable = not view.readonly
    PyBuffer_Release(&view)
    shape = arr.shape
    bstrides = arr.strides
    cdef int i, nd = len(shape)
    if nd > PT_MAX_DIMS:
        raise ValueError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef Py_ssize_t extent = 0, isz = dt.itemsize, n = 1
    for i in range(nd):
        sh[i] = shape[i]
        n *= sh[i]
        if bstrides[i] < 0:
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with negative "
                "strides are not currently supported. (You can probably work around this by making a "
                "copy of your array  with array.copy().) ")
        if bstrides[i] % isz != 0:
            raise ValueError(
                "given numpy array strides not a multiple of the element byte size. Copy the numpy "
                "array to reallocate the memory.")
        st[i] = bstrides[i] // isz
        if sh[i] > 1:
            extent += (sh[i] - 1) * st[i]
    if not writable and warn_readonly and not _readonly_warned:
        _readonly_warned = True
        from ptcore._warn import warn_at_caller
        warn_at_caller(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You may "
            "want to copy the array to protect its data or make it writable before converting it to "
            "a tensor. This type of warning will be suppressed for the rest of this program.")
    cdef Storage storage = _external_storage(data if n else NULL, (extent + 1) * isz if n else 0,
                                             arr, _CPU)
    return _make_tensor(storage, dt, nd, sh, st, 0)


def _make_subclass_impl(cls, _TensorBase data not None, bint require_grad):
    """A ``cls`` instance sharing ``data``'s storage (used by nn.Parameter)."""
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError(f"_make_subclass: {cls!r} is not a subclass of Tensor")
    # the core's allocator, not cls.__new__: a subclass's own __new__ is
    # usually what calls _make_subclass (with arguments of its own)
    cdef _TensorBase t = _TensorBase.__new__(cls)
    t._set_from(data)
    _check_requires_grad(t, require_grad)
    return t


def _set_data(_TensorBase self not None, _TensorBase other not None):
    """``tensor.data = other``: make self share other's storage and layout.
    Self keeps its version (torch's set_data): its own counter from here on,
    so writes through ``other`` do not invalidate what autograd saved of self."""
    cdef Py_ssize_t v = ptc_version(self)
    self._set_from(other)
    self._vc = _VersionCounter.__new__(_VersionCounter)
    self._vc._version = v


def _set_view_base(_TensorBase self not None, _TensorBase base not None):
    """Make ``self`` (an alias of part of ``base``'s memory) report itself as a
    view of ``base``'s root (``_base``/``_is_view()``): a custom Function's
    output that is a view of an input, as torch's."""
    if self._storage is not base._storage:
        raise ValueError("_set_view_base: the tensor does not share its base's storage")
    self._view_base = base if base._view_base is None else base._view_base


def _resize_impl(_TensorBase self not None, list shape):
    """In-place resize (keeps the data prefix when the storage is big enough)."""
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
    for i in range(nd):
        sh[i] = shape[i]
    _wait_for_readers()             # another thread's kernel may be reading self
    cdef Py_ssize_t nbytes = _checked_nbytes(nd, sh, self._dtype.itemsize)
    _checked_numel(nd, sh)
    _contig_strides(nd, sh, st)
    cdef Py_ssize_t need = 0
    if nbytes > 0 and (ptc_mul_ovf(self._offset, self._dtype.itemsize, &need)
                       or ptc_add_ovf(need, nbytes, &need)):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={_fmt_list(shape)} and storage offset {self._offset}")
    if need > self._storage._nbytes:
        # PyTorch grows the storage in place: every tensor sharing it sees the
        # new memory (device storages through their runtime's DEVICE_REALLOC)
        self._storage._realloc(need)
    self._alloc_dims(nd)
    cdef Py_ssize_t n = 1
    for i in range(nd):
        self._shape[i] = sh[i]
        self._strides[i] = st[i]
        n *= sh[i]
    self._numel = n
    return self


def _set_storage_impl(_TensorBase self not None, Storage storage not None, Py_ssize_t offset, shape, strides):
    """``Tensor.set_(storage, offset, size, stride)``: make ``self`` view ``storage``.

    ``strides`` None gives contiguous strides.  The storage grows in place when
    the view needs more bytes than it has (PyTorch's resize of a resizable
    storage); borrowed or exported storage raises instead.
    """
    cdef list sh = [_operator.index(v) for v in shape]
    cdef int i, nd = len(sh)
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    for i in range(nd):
        csh[i] = sh[i]
        if csh[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {csh[i]}: {_fmt_list(sh)}")
    if strides is None:
        _checked_nbytes(nd, csh, self._dtype.itemsize)
        _contig_strides(nd, csh, cst)
    else:
        st = [_operator.index(v) for v in strides]
        if len(st) != nd:
            raise RuntimeError(
                f"mismatch in length of strides and shape: {len(st)} strides for {nd} dims")
        for i in range(nd):
            cst[i] = st[i]
            if cst[i] < 0:
                raise RuntimeError(f"set_: negative strides are not supported, got {_fmt_list(st)}")
    cdef Py_ssize_t n = _checked_numel(nd, csh)
    cdef Py_ssize_t need = _storage_nbytes(nd, csh, cst, offset, self._dtype.itemsize)
    _wait_for_readers()             # another thread's kernel may be reading self
    if storage.device != self._storage.device:
        raise RuntimeError(
            f"Attempted to set the storage of a tensor on device \"{self._storage.device}\" to a storage "
            f"on different device \"{storage.device}\".  This is no longer allowed; the devices must match.")
    if need > storage._nbytes:
        storage._realloc(need)
    cdef _VersionCounter vc
    if self._vc is None:
        # the counter stays this tensor's (torch's is per tensor, not per
        # storage): the new storage's other tensors do not see its bumps
        vc = _VersionCounter.__new__(_VersionCounter)
        vc._version = self._storage._version
        self._vc = vc
    self._storage = storage
    self._offset = offset
    self._alloc_dims(nd)
    for i in range(nd):
        self._shape[i] = csh[i]
        self._strides[i] = cst[i]
    self._numel = n
    ptc_bump_version(self)      # an in-place op: torch's set_ bumps the version
    return self


def _tensor_from_storage(Storage storage not None, dtype dt, shape, strides, Py_ssize_t offset):
    """A tensor viewing ``storage`` (bounds checked)."""
    cdef list sh = [_operator.index(s) for s in shape]
    cdef list st = [_operator.index(s) for s in strides]
    if len(sh) != len(st):
        raise RuntimeError("shape and strides differ in length")
    for s in st:
        if s < 0:
            raise RuntimeError("negative strides are not supported")
    if offset < 0:
        raise RuntimeError(f"invalid storage offset {offset}")
    _check_in_bounds(storage, dt, sh, st, offset)
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i
    if len(sh) > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
    for i in range(len(sh)):
        csh[i] = sh[i]
        cst[i] = st[i]
    return _make_tensor(storage, dt, len(sh), csh, cst, offset)


def _dlpack_storage_new(Py_ssize_t data, Py_ssize_t nbytes, Py_ssize_t managed, bint versioned, dev):
    """Storage owning a DLPack managed tensor (released through its deleter)."""
    return _dlpack_storage(<char*><uintptr_t>data, nbytes, <void*><uintptr_t>managed, versioned,
                           _as_device(dev))
