# ptcore._tensor, copy / fill glue to the kernels, encoding a Python scalar into one
# element (range checks as PyTorch) and reading elements back (item,
# tolist).
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

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


cdef int _byte_extent(_TensorBase t, uintptr_t* lo, uintptr_t* hi) except -1:
    """The bytes ``t`` can reach, [lo, hi).  Its data pointer is taken here: a
    tensor whose storage shrank below its extent raises (``_ptr``)."""
    cdef uintptr_t base = <uintptr_t>t._ptr()
    cdef Py_ssize_t span = 0
    cdef int i
    for i in range(t._ndim):
        if t._shape[i] > 1:
            span += (t._shape[i] - 1) * t._strides[i]
    lo[0] = base
    hi[0] = base + (span + 1) * t._dtype.itemsize
    return 0


cdef int _may_overlap(_TensorBase a, _TensorBase b) except -1:
    """1 when ``a`` and ``b`` share a storage and their byte ranges meet, else 0."""
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
