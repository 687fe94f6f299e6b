# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""Cross product of 3-vectors (``linalg.cross``) on contiguous float32/float64
tensors of one shape, along any dim: the tensors are read as
``(outer, 3, inner)`` blocks.  Each component is ``a_j * b_k - a_k * b_j``
rounded as the composite of ptcore ops (and torch's kernel) rounds it.
"""
from ptcore._tensor cimport _TensorBase, _empty_contig, device, ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor import device as _device_type
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64

ctypedef fused flt:
    float
    double

cdef device _CPU = _device_type("cpu")


cdef void _cross(const flt* a, const flt* b, flt* r, Py_ssize_t outer,
                 Py_ssize_t inner) noexcept nogil:
    cdef Py_ssize_t o, i, s = inner
    cdef const flt* x
    cdef const flt* y
    cdef flt* z
    cdef flt p, q
    for o in range(outer):
        x = a + o * 3 * s
        y = b + o * 3 * s
        z = r + o * 3 * s
        for i in range(inner):
            p = x[i + s] * y[i + 2 * s]
            q = x[i + 2 * s] * y[i + s]
            z[i] = p - q
            p = x[i + 2 * s] * y[i]
            q = x[i] * y[i + 2 * s]
            z[i + s] = p - q
            p = x[i] * y[i + s]
            q = x[i + s] * y[i]
            z[i + 2 * s] = p - q


def fast_cross(a, b, int dim):
    """``linalg.cross(a, b, dim=dim)`` (``dim`` in range, of size 3, checked
    by the caller) for contiguous CPU float32/float64 tensors of one shape
    and dtype; None for any other case (the composite's)."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b, out
    cdef int num = ta._dtype.num, k
    cdef Py_ssize_t outer = 1, inner = 1
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or tb._dtype.num != num \
            or ta._storage.device._type_code != 0 or tb._storage.device._type_code != 0 \
            or ta._ndim != tb._ndim or not ta._is_contig() or not tb._is_contig():
        return None
    if dim < 0:
        dim += ta._ndim
    if dim < 0 or dim >= ta._ndim or ta._shape[dim] != 3:
        return None
    for k in range(ta._ndim):
        if ta._shape[k] != tb._shape[k]:
            return None
        if k < dim:
            outer *= ta._shape[k]
        elif k > dim:
            inner *= ta._shape[k]
    out = _empty_contig(ta._dtype, ta._ndim, ta._shape, _CPU, False)
    cdef char* pa = ta._ptr()
    cdef char* pb = tb._ptr()
    cdef char* po = out._ptr()
    if outer * inner:
        ptc_kernel_enter()
        with nogil:
            try:
                if num == PT_FLOAT32:
                    _cross(<const float*>pa, <const float*>pb, <float*>po, outer, inner)
                else:
                    _cross(<const double*>pa, <const double*>pb, <double*>po, outer, inner)
            finally:
                ptc_kernel_exit()
    return out
