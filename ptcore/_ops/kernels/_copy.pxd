# Strided copy-with-cast and fill kernels (every dtype pair).
#
# Strides are in bytes and may be 0 or negative; ``shape`` entries are >= 0
# and ``ndim`` is 0..PT_MAX_DIMS (0 = one element).  Type numbers are
# ``ptcore._ops.kernels._types.ScalarType`` values.  Both return 0 on success and -1
# for an unknown type number (the caller raises).  Conversions follow
# PyTorch's ``tensor.to(dtype)`` on x86-64; see _copy.pyx for the details.

cdef int copy_cast(char* dst, int dst_type, const Py_ssize_t* dst_strides,
                   const char* src, int src_type, const Py_ssize_t* src_strides,
                   const Py_ssize_t* shape, int ndim) noexcept nogil

# ``value`` points at one element already encoded in ``dst_type``.
cdef int fill(char* dst, int dst_type, const Py_ssize_t* dst_strides,
              const Py_ssize_t* shape, int ndim, const char* value) noexcept nogil
