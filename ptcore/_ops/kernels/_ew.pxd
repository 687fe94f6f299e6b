# Elementwise loop contract (NumPy-ufunc style).
#
# ``loop(ptrs, strides, n, extra)``: ptrs[0] is the output, ptrs[1..] the
# inputs; strides are in BYTES for the one dimension the loop walks; n >= 1.
from libc.stdint cimport int64_t

cdef struct ew_extra:
    double d0
    double d1
    double d2
    int64_t i0
    int64_t i1
    int flag            # set by integer division loops on a zero divisor
    int stream          # non-temporal stores (set by ew_apply, 0 elsewhere; ptc_stream.h)

ctypedef void (*loop_t)(char** p, const Py_ssize_t* s, Py_ssize_t n, const ew_extra* e) noexcept nogil

cdef loop_t unary_loop(int op, int t) noexcept nogil
cdef loop_t binary_loop(int op, int t) noexcept nogil
cdef loop_t ternary_loop(int op, int t) noexcept nogil
cdef int unary_out(int op, int t) noexcept nogil
cdef int binary_out(int op, int t) noexcept nogil
