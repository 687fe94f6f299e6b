# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Fused SiLU kernels (``x * sigmoid(x)`` and its derivative) on ptcore tensors.

Each kernel reads the input's data pointer and dtype code through ptcore's
C-level API (``cimport ptcore._tensor``), allocates its output with
ptcore's allocator, and runs one pass over memory, on ptcore's thread count
for large inputs (OpenMP when the build has it, serial otherwise).
"""
from cython.parallel cimport prange
from libc.math cimport exp

from ptcore._tensor cimport _TensorBase, _empty_contig
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain

ctypedef fused real:
    float
    double


cdef void _forward(const real* x, real* y, Py_ssize_t n, int nt) noexcept nogil:
    cdef Py_ssize_t i
    for i in prange(n, num_threads=nt, schedule="static"):
        y[i] = <real>(x[i] / (1.0 + exp(-x[i])))


cdef void _backward(const real* g, const real* x, real* out, Py_ssize_t n,
                    int nt) noexcept nogil:
    # d/dx x*s(x) = s * (1 + x * (1 - s)),  s = sigmoid(x)
    cdef Py_ssize_t i
    cdef double s
    for i in prange(n, num_threads=nt, schedule="static"):
        s = 1.0 / (1.0 + exp(-x[i]))
        out[i] = <real>(g[i] * s * (1.0 + x[i] * (1.0 - s)))


cdef int _threads(Py_ssize_t n) noexcept nogil:
    return get_num_threads() if n >= parallel_grain() else 1


cdef _check(_TensorBase t, str what):
    if t._dtype.num != PT_FLOAT32 and t._dtype.num != PT_FLOAT64:
        raise TypeError(f"fused silu: {what} must be float32 or float64, got {t.dtype}")
    if not t._is_contig():
        raise ValueError(f"fused silu: {what} must be contiguous")
    if t._storage.device.type != "cpu":
        raise ValueError(f"fused silu: {what} must be on the CPU, got {t.device}")


def silu_forward(_TensorBase x):
    """``x * sigmoid(x)`` for a contiguous float32/float64 CPU tensor."""
    _check(x, "x")
    cdef _TensorBase y = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef Py_ssize_t n = x._numel
    cdef int nt = _threads(n)
    cdef char* xp = x._ptr()            # data pointers are read with the GIL held
    cdef char* yp = y._ptr()
    if x._dtype.num == PT_FLOAT32:
        with nogil:
            _forward(<const float*>xp, <float*>yp, n, nt)
    else:
        with nogil:
            _forward(<const double*>xp, <double*>yp, n, nt)
    return y


def silu_backward(_TensorBase grad, _TensorBase x):
    """``grad * d/dx silu(x)`` for contiguous tensors of one shape and dtype."""
    _check(x, "x")
    _check(grad, "grad")
    if grad._dtype is not x._dtype or tuple(grad.shape) != tuple(x.shape):
        raise ValueError(f"fused silu: grad {tuple(grad.shape)} {grad.dtype} does not match "
                         f"x {tuple(x.shape)} {x.dtype}")
    cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef Py_ssize_t n = x._numel
    cdef int nt = _threads(n)
    cdef char* gp = grad._ptr()
    cdef char* xp = x._ptr()
    cdef char* op = out._ptr()
    if x._dtype.num == PT_FLOAT32:
        with nogil:
            _backward(<const float*>gp, <const float*>xp, <float*>op, n, nt)
    else:
        with nogil:
            _backward(<const double*>gp, <const double*>xp, <double*>op, n, nt)
    return out
