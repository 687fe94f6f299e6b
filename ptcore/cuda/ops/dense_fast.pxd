from ptcore._tensor cimport _TensorBase

cdef struct ptc_params:                 # the kernels' by-value parameter block (40 bytes)
    double d0
    double d1
    double d2
    long long i0
    long long i1

cdef enum:
    _FAM_BINARY = 0                     # ptc_binary_<op>_<dt>_c (n, out, a, b, params)
    _FAM_SCALAR = 1                     # ptc_scalar_<op>_<dt>_c (n, out, a, params)
    _FAM_ALPHA = 2                      # ptc_binary_add_alpha_<dt>_c: out = a + d0 * b
    _FAM_UNARY = 3                      # ptc_unary_<op>_<dt>_c (n, out, x, params)
    _FAM_REDUCE = 4                     # ptc_reduce_<op>_<dt>_<dt>_c (rows, length, out, x, params)
    _FAM_COLUMN = 5                     # ptc_reduce_<op>_<dt>_<dt>_k (O, L, I, out, x, params)
    _FAM_COPY = 6                       # ptc_cast_<dt>_<dt>_c (n, out, x, params)
    _FAM_COPY_STRIDED = 7               # ptc_cast_<dt>_<dt>_s (n, out, x, params, ptc_strided<2>)
    _FAM_NAMED = 8                      # any kernel, ``name`` its full name
    _FAM_BINARY_S = 9                   # ptc_binary_<op>_<dt>_s (n, out, a, b, params, ptc_strided<3>)
    _FAM_TERNARY = 10                   # ptc_ternary_<op>_<dt>_c (n, out, a, b, c, params)
    _FAM_TERNARY_S = 11                 # ptc_ternary_<op>_<dt>_s (..., ptc_strided<4>)
    _FAM_UNARY_S = 12                   # ptc_unary_<op>_<dt>_s (n, out, x, params, ptc_strided<2>)
    _FAM_SCALAR_S = 13                  # ptc_scalar_<op>_<dt>_s (n, out, a, params, ptc_strided<2>)

# the handle of ``name``'s kernel of ``family`` for a's dtype and device
# (None when the driver launches without a C launcher), and its launch
cdef tuple _kernel(int family, object name, _TensorBase a)
cdef int _run(tuple e, Py_ssize_t idx, Py_ssize_t n, void** params, bint rows=*) except -1
# the launch of e with nv eight-byte arguments, a zeroed ptc_params and an optional struct
cdef int _launch_vals(tuple e, Py_ssize_t idx, Py_ssize_t n, bint rows, long long* vals, int nv,
                      void* extra) except -1
