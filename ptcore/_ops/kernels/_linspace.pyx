# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""``linspace`` into a new float32/float64 CPU tensor, ``arange``'s short
int64 ranges and its floating ranges (``arange_float``, ptc_arange.h).  linspace has the values of torch's CPU kernel bit for bit:
the step is taken in the output type, element ``i``
is ``start + step * i`` below ``steps // 2`` and ``end - step * (steps - 1 -
i)`` from there, one fused multiply-add rounded to the output type (for
float32 the product is exact in double, so a double multiply-add rounded
to float is that FMA, as ``ptcore._ops.creation._lin_fused`` computes it).
"""
from libc.math cimport fma
from ptcore._tensor cimport _TensorBase, _empty_contig, device, dtype, dtype_from_num
from ptcore._tensor import device as _device_type
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64, PT_INT64, PT_FLOAT16, PT_BFLOAT16

cdef extern from "ptc_arange.h" nogil:
    void ptc_arange_fill(void* out, int kind, double start, double step, Py_ssize_t n,
                         Py_ssize_t chunk)

cdef device _CPU = _device_type("cpu")


def fast_linspace(double start, double end, Py_ssize_t steps, dtype dt):
    """A new contiguous tensor of ``steps`` (at least 2) values of ``dt``
    (float32 or float64; ``start``/``end`` exact in double) from ``start``
    to ``end``."""
    cdef int num = dt.num
    cdef Py_ssize_t i, half = steps // 2
    cdef float s32, e32, st32
    cdef double st
    cdef float* o32
    cdef double* o64
    if steps < 2 or (num != PT_FLOAT32 and num != PT_FLOAT64):
        raise ValueError("fast_linspace: at least 2 steps of float32/float64")
    cdef _TensorBase out = _empty_contig(dt, 1, &steps, _CPU, False)
    cdef char* p = out._ptr()
    if num == PT_FLOAT32:
        s32 = <float>start
        e32 = <float>end
        st32 = (e32 - s32) / <float>(steps - 1)
        o32 = <float*>p
        with nogil:
            for i in range(half):
                o32[i] = <float>(<double>st32 * <double>i + <double>s32)
            for i in range(half, steps):
                o32[i] = <float>(-<double>st32 * <double>(steps - 1 - i) + <double>e32)
    else:
        st = (end - start) / <double>(steps - 1)
        o64 = <double*>p
        with nogil:
            for i in range(half):
                o64[i] = fma(st, <double>i, start)
            for i in range(half, steps):
                o64[i] = fma(-st, <double>(steps - 1 - i), end)
    return out


def fast_arange_int64(long long start, long long step, Py_ssize_t n):
    """A new contiguous int64 CPU tensor ``start, start + step, ...`` of ``n``
    (at least 1) elements; the caller checked that no value leaves int64
    (``arange``'s short ranges of plain ints: a model's positions)."""
    if n < 1:
        raise ValueError("fast_arange_int64: at least one element")
    cdef _TensorBase out = _empty_contig(dtype_from_num(PT_INT64), 1, &n, _CPU, False)
    cdef long long* o = <long long*>out._ptr()
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = start + step * i
    return out


def arange_float(double start, double step, Py_ssize_t n, Py_ssize_t chunk, dtype dt):
    """A new contiguous CPU tensor of torch's floating arange values (see
    ptc_arange.h): ``dt``'s for float32/float64; for float16/bfloat16 the
    float32 values (accumulated in float: ``start``/``step`` already rounded
    to float32) for the caller to convert.  ``chunk``: the length of torch's
    parallel chunks (n when one)."""
    cdef int num = dt.num, kind
    if num == PT_FLOAT64:
        kind = 0
    elif num == PT_FLOAT32:
        kind = 1
    elif num == PT_FLOAT16:
        kind = 2
    elif num == PT_BFLOAT16:
        kind = 3
    else:
        raise ValueError("arange_float: a floating dtype expected")
    if n < 1 or chunk < 1:
        raise ValueError("arange_float: at least one element and a positive chunk")
    cdef _TensorBase out = _empty_contig(dt if kind <= 1 else dtype_from_num(PT_FLOAT32), 1, &n,
                                         _CPU, False)
    cdef void* p = <void*>out._ptr()
    with nogil:
        ptc_arange_fill(p, kind, start, step, n, chunk)
    return out
