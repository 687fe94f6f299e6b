# cython: language_level=3
"""DLPack exchange (``__dlpack__`` / ``from_dlpack``), zero-copy both ways.

Versioned (DLPack >= 1.0, capsule "dltensor_versioned") and legacy
("dltensor") capsules are produced and consumed.
"""
from cpython.pycapsule cimport (PyCapsule_New, PyCapsule_IsValid, PyCapsule_GetPointer,
                                PyCapsule_SetName, PyCapsule_Destructor)
from cpython.ref cimport Py_INCREF
from libc.stdlib cimport malloc, free
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t

from ptcore._tensor cimport _TensorBase, Storage, dtype, device, dtype_from_num, _make_tensor
from ptcore._ops.kernels._types cimport (PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64,
                                 PT_FLOAT16, PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64,
                                 PT_COMPLEX64, PT_COMPLEX128, PT_COMPLEX32, PT_MAX_DIMS,
    PT_UINT16, PT_UINT32, PT_UINT64, PT_FLOAT8_E4M3FN, PT_FLOAT8_E5M2, PT_FLOAT8_E4M3FNUZ,
    PT_FLOAT8_E5M2FNUZ)
from ptcore import _tensor as _C

cdef extern from "ptc_dlpack.h":
    ctypedef struct DLDevice:
        int32_t device_type
        int32_t device_id
    ctypedef struct DLDataType:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct DLTensor:
        void* data
        DLDevice device
        int32_t ndim
        DLDataType dtype
        int64_t* shape
        int64_t* strides
        uint64_t byte_offset
    ctypedef struct DLManagedTensor:
        DLTensor dl_tensor
        void* manager_ctx
        void (*deleter)(DLManagedTensor*)
    ctypedef struct DLPackVersion:
        uint32_t major
        uint32_t minor
    ctypedef struct DLManagedTensorVersioned:
        DLPackVersion version
        void* manager_ctx
        void (*deleter)(DLManagedTensorVersioned*)
        uint64_t flags
        DLTensor dl_tensor
    ctypedef struct ptc_dl_export:
        DLManagedTensor legacy
        DLManagedTensorVersioned versioned
        int64_t dims[1]
    void ptc_dl_deleter_legacy(DLManagedTensor*)
    void ptc_dl_deleter_versioned(DLManagedTensorVersioned*)
    void ptc_dl_capsule_legacy(object)
    void ptc_dl_capsule_versioned(object)
    uint64_t PTC_DL_FLAG_READ_ONLY
    uint64_t PTC_DL_FLAG_IS_COPIED
    Py_ssize_t offsetof_dims "offsetof(ptc_dl_export, dims)"

cdef enum:
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLCUDAManaged = 13
    kDLInt = 0
    kDLUInt = 1
    kDLFloat = 2
    kDLBfloat = 4
    kDLComplex = 5
    kDLBool = 6
    kDLFloat8_e4m3fn = 10       # (DLPack 1.1's 8-bit floats, as torch's DLConvertor)
    kDLFloat8_e4m3fnuz = 11
    kDLFloat8_e5m2 = 12
    kDLFloat8_e5m2fnuz = 13

# the DLPack type code of each ScalarType number, every one ptcore has (PT_NUM_TYPES)
cdef uint8_t[20] _CODE = [kDLBool, kDLUInt, kDLInt, kDLInt, kDLInt, kDLInt, kDLFloat, kDLBfloat,
                          kDLFloat, kDLFloat, kDLComplex, kDLComplex, kDLComplex,
                          kDLUInt, kDLUInt, kDLUInt,
                          kDLFloat8_e4m3fn, kDLFloat8_e5m2, kDLFloat8_e4m3fnuz,
                          kDLFloat8_e5m2fnuz]


cdef dtype _dtype_from_dl(DLDataType t):
    if t.lanes != 1:
        raise BufferError(f"from_dlpack: vector dtypes (lanes={t.lanes}) are not supported")
    cdef int code = t.code, bits = t.bits
    table = {
        (kDLBool, 8): PT_BOOL, (kDLUInt, 8): PT_UINT8, (kDLInt, 8): PT_INT8,
        (kDLInt, 16): PT_INT16, (kDLInt, 32): PT_INT32, (kDLInt, 64): PT_INT64,
        (kDLFloat, 16): PT_FLOAT16, (kDLBfloat, 16): PT_BFLOAT16, (kDLFloat, 32): PT_FLOAT32,
        (kDLFloat, 64): PT_FLOAT64, (kDLComplex, 64): PT_COMPLEX64, (kDLComplex, 128): PT_COMPLEX128,
        (kDLComplex, 32): PT_COMPLEX32, (kDLUInt, 16): PT_UINT16, (kDLUInt, 32): PT_UINT32,
        (kDLUInt, 64): PT_UINT64, (kDLFloat8_e4m3fn, 8): PT_FLOAT8_E4M3FN,
        (kDLFloat8_e5m2, 8): PT_FLOAT8_E5M2, (kDLFloat8_e4m3fnuz, 8): PT_FLOAT8_E4M3FNUZ,
        (kDLFloat8_e5m2fnuz, 8): PT_FLOAT8_E5M2FNUZ,
    }
    num = table.get((code, bits))
    if num is None:
        raise BufferError(f"from_dlpack: unsupported DLPack dtype (code={code}, bits={bits})")
    return dtype_from_num(num)


cdef class _ExportRecord:
    """The DLPack manager context of one export: holds the storage and counts itself in
    ``Storage._dl_live``.  When the last record of a storage goes (the capsule was
    dropped unconsumed, or its consumer released it), nothing outside can view the
    blocks ``resize_`` replaced meanwhile: they are freed (they were kept until the
    storage died, so a storage resized after one export grew without bound)."""
    cdef Storage st

    def __cinit__(self, Storage st not None):
        self.st = st
        st._dl_live += 1

    def __dealloc__(self):
        cdef Storage st = self.st
        if st is None:
            return
        st._dl_live -= 1
        if st._dl_live == 0 and not st._exported:
            st._retired = None


def to_dlpack(_TensorBase t not None, stream=None, max_version=None, dl_device=None, copy=None):
    """Export ``t`` as a DLPack capsule sharing its memory."""
    cdef device dev = t._storage.device
    if dev._type_code == 2:
        raise BufferError("Cannot pack tensors on meta")      # no memory to export
    if dl_device is not None:
        want = tuple(dl_device)
        have = t.__dlpack_device__()
        if want != have:
            raise BufferError(f"__dlpack__: cannot export a tensor on {dev} to DLPack device {want}")
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"_to_dlpack(): argument 'copy' must be bool, not {type(copy).__name__}")
    if copy:
        t = t.clone()
    if t._requires_grad:
        raise BufferError(
            "Can't export tensors that require gradient, use tensor.detach()")
    t._ptr()        # RuntimeError when the storage shrank below the tensor (nothing to export)
    if t._numel and t._storage._data == NULL:
        raise RuntimeError("The tensor has a non-zero number of elements, but its data is not "
                           "allocated yet.")
    cdef bint versioned = max_version is not None and tuple(max_version)[0] >= 1
    cdef int nd = t._ndim
    cdef ptc_dl_export* e = <ptc_dl_export*>malloc(offsetof_dims + (2 * nd + 1) * sizeof(int64_t))
    if e == NULL:
        raise MemoryError()
    cdef int64_t* shape = e.dims
    cdef int64_t* strides = e.dims + nd
    cdef int i
    for i in range(nd):
        shape[i] = t._shape[i]
        strides[i] = t._strides[i]
    cdef DLTensor* dl = &e.versioned.dl_tensor if versioned else &e.legacy.dl_tensor
    dl.data = <void*>t._storage._data
    dl.byte_offset = t._offset * t._dtype.itemsize
    if t._storage._data == NULL:
        dl.data = <void*>strides   # any non-null pointer: zero-size tensors are never read
        dl.byte_offset = 0
    dl.device.device_type = kDLCPU if dev._type_code == 0 else kDLCUDA
    dl.device.device_id = 0 if dev._type_code == 0 else (dev._idx if dev._idx >= 0 else 0)
    dl.ndim = nd
    dl.dtype.code = _CODE[t._dtype.num]
    dl.dtype.bits = t._dtype.itemsize * 8
    dl.dtype.lanes = 1
    dl.shape = shape
    dl.strides = strides
    # the capsule keeps the storage (not the tensor, whose storage set_ may
    # swap) alive through an export record; a storage resized in place keeps its
    # old block while any record lives
    cdef object owner = _ExportRecord(t._storage)
    Py_INCREF(owner)
    if versioned:
        e.versioned.version.major = 1
        e.versioned.version.minor = 0
        e.versioned.manager_ctx = <void*>owner
        e.versioned.deleter = ptc_dl_deleter_versioned
        e.versioned.flags = PTC_DL_FLAG_IS_COPIED if copy else 0
        return PyCapsule_New(<void*>&e.versioned, "dltensor_versioned",
                             <PyCapsule_Destructor>ptc_dl_capsule_versioned)
    e.legacy.manager_ctx = <void*>owner
    e.legacy.deleter = ptc_dl_deleter_legacy
    return PyCapsule_New(<void*>&e.legacy, "dltensor", <PyCapsule_Destructor>ptc_dl_capsule_legacy)


cdef object _tensor_from_dl(DLTensor* dl, void* managed, bint versioned):
    cdef dtype dt = _dtype_from_dl(dl.dtype)
    cdef device dev
    cdef int nd = dl.ndim
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef Py_ssize_t s, extent = 0, n = 1
    cdef int i
    if dl.device.device_type == kDLCPU or dl.device.device_type == kDLCUDAHost:
        dev = _C._to_device("cpu")
    elif dl.device.device_type == kDLCUDA or dl.device.device_type == kDLCUDAManaged:
        dev = _C._to_device(f"cuda:{dl.device.device_id}")
    else:
        raise BufferError(f"from_dlpack: unsupported DLPack device type {dl.device.device_type}")
    if nd < 0 or nd > PT_MAX_DIMS:
        raise BufferError(f"from_dlpack: invalid ndim {nd}")
    for i in range(nd):
        sh[i] = dl.shape[i]
        if sh[i] < 0:
            raise BufferError(f"from_dlpack: negative dimension {sh[i]}")
        n *= sh[i]
    if dl.strides == NULL:
        s = 1
        for i in range(nd - 1, -1, -1):
            st[i] = s
            s *= sh[i] if sh[i] > 1 else 1
    else:
        for i in range(nd):
            st[i] = dl.strides[i]
            if st[i] < 0 and sh[i] > 1:
                raise BufferError("from_dlpack: negative strides are not supported")
            if sh[i] <= 1 and st[i] < 0:
                st[i] = 0
    for i in range(nd):
        if sh[i] > 1:
            extent += (sh[i] - 1) * st[i]
    if dl.byte_offset % dt.itemsize != 0:
        raise BufferError("from_dlpack: byte_offset is not a multiple of the element size")
    cdef char* base = <char*>dl.data + dl.byte_offset
    cdef Storage storage = _C._dlpack_storage_new(<Py_ssize_t><uintptr_t>base,
                                                  (extent + 1) * dt.itemsize if n else 0,
                                                  <Py_ssize_t><uintptr_t>managed, versioned, dev)
    return _make_tensor(storage, dt, nd, sh, st, 0)


def from_capsule(capsule):
    """Consume a DLPack capsule (versioned or legacy) into a tensor."""
    cdef DLManagedTensorVersioned* mv
    cdef DLManagedTensor* ml
    if PyCapsule_IsValid(capsule, "dltensor_versioned"):
        mv = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, "dltensor_versioned")
        if mv.version.major > 1:
            raise BufferError(f"from_dlpack: unsupported DLPack version {mv.version.major}.{mv.version.minor}")
        t = _tensor_from_dl(&mv.dl_tensor, <void*>mv, True)
        PyCapsule_SetName(capsule, "used_dltensor_versioned")
        return t
    if PyCapsule_IsValid(capsule, "dltensor"):
        ml = <DLManagedTensor*>PyCapsule_GetPointer(capsule, "dltensor")
        t = _tensor_from_dl(&ml.dl_tensor, <void*>ml, False)
        PyCapsule_SetName(capsule, "used_dltensor")
        return t
    # torch's type (a consumed capsule, or another object's capsule, is a RuntimeError)
    raise RuntimeError("from_dlpack received an invalid capsule: expected an unconsumed "
                       "'dltensor' or 'dltensor_versioned' capsule (a DLPack capsule can be "
                       "consumed only once)")


def from_dlpack(ext_tensor):
    """A tensor sharing memory with any DLPack producer (NumPy, CuPy, PyTorch, ...)."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ == "PyCapsule":
            return from_capsule(ext_tensor)
        # (torch takes any object without __dlpack__ for a capsule: RuntimeError)
        raise RuntimeError(f"from_dlpack received an invalid capsule: "
                           f"{type(ext_tensor).__name__} is neither a DLPack capsule nor an "
                           f"object with __dlpack__")
    kwargs = {}
    if hasattr(ext_tensor, "__dlpack_device__"):
        dev_type, dev_id = ext_tensor.__dlpack_device__()
        if int(dev_type) == kDLCUDA:
            kwargs["stream"] = 1   # legacy default stream: ptcore orders its work on it
    try:
        cap = ext_tensor.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        cap = ext_tensor.__dlpack__(**kwargs)
    return from_capsule(cap)


_C._set_module_hooks(to_dlpack=to_dlpack)   # Tensor.__dlpack__
