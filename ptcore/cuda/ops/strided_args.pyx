# cython: language_level=3, boundscheck=False, wraparound=False
"""The ``ptc_strided<K>`` argument of an elementwise kernel, in C.

:func:`ptcore.cuda.ops.launch._elementwise` launches a kernel over ``out``'s
shape with its inputs broadcast to it: the contiguous variant when every
operand walks that shape densely, else the strided one with a struct of the
collapsed sizes and each operand's element strides.  :func:`strided_arg`
does what ``_bcast_strides`` + ``_kernels.collapse_dims`` +
``_kernels.pack_strided`` do in Python (those stay the reference and serve
the other callers), without a Python list per dimension.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.object cimport PyObject
from libc.string cimport memset

from ptcore._ops.kernels._types cimport PT_MAX_DIMS
from ptcore._tensor cimport _TensorBase

from ptcore.cuda.kernels.prelude import MAX_DIMS as _MAX_DIMS_PY

__all__ = ["strided_arg", "MAX_OPERANDS"]

cdef enum:
    _MAXD = 8                   # the kernels' MAX_DIMS (checked at import)
    _MAXOPS = 8                 # out + up to 7 inputs

MAX_OPERANDS = _MAXOPS

if _MAX_DIMS_PY != _MAXD:
    raise ImportError(f"ptc_strided has MAX_DIMS {_MAX_DIMS_PY}, this module was built for {_MAXD}")


def strided_arg(out, inputs):
    """``None`` when the contiguous kernel variant covers ``out`` and
    ``inputs`` (each broadcast to out's shape): after dropping size-1
    dims and merging, one dim remains and every operand's stride is 1.
    Else the bytes of the ``ptc_strided<1 + len(inputs)>`` struct.
    ValueError when more than MAX_DIMS dims remain (as collapse_dims)."""
    cdef _TensorBase o = <_TensorBase?>out
    cdef tuple ins = tuple(inputs)          # holds the operands (ts borrows them)
    cdef Py_ssize_t nops = 1 + len(ins)
    if nops > _MAXOPS:
        raise ValueError(f"at most {_MAXOPS - 1} inputs, got {nops - 1}")
    cdef PyObject* ts[_MAXOPS]
    cdef int nd = o._ndim, d, k, off, m = 0, j
    cdef long long st[_MAXOPS][PT_MAX_DIMS]
    cdef long long osz[PT_MAX_DIMS]
    cdef long long ost[_MAXOPS][PT_MAX_DIMS]
    cdef _TensorBase t
    cdef bint merge, unit
    ts[0] = <PyObject*>o
    for k in range(1, nops):
        ts[k] = <PyObject*><_TensorBase?>ins[k - 1]
    # element strides of each operand seen broadcast to out's shape
    for k in range(nops):
        t = <_TensorBase>ts[k]
        off = nd - t._ndim              # (extra leading dims of size 1 are dropped)
        for d in range(nd):
            st[k][d] = 0
        for d in range(t._ndim):
            if t._shape[d] != 1:
                if off + d < 0:
                    raise ValueError(f"operand {k} of shape {list(t.shape)} does not broadcast "
                                     f"to the output's {list(o.shape)}")
                st[k][off + d] = t._strides[d]
    for d in range(nd):
        if o._shape[d] == 0:
            m = 1
            osz[0] = 0
            for k in range(nops):
                ost[k][0] = 0
            return _pack(1, osz, ost, nops)
    # drop size-1 dims, merge dims contiguous for every operand
    for d in range(nd):
        if o._shape[d] == 1:
            continue
        merge = m > 0
        if merge:
            for k in range(nops):
                if ost[k][m - 1] != st[k][d] * o._shape[d]:
                    merge = False
                    break
        if merge:
            osz[m - 1] *= o._shape[d]
            for k in range(nops):
                ost[k][m - 1] = st[k][d]
        else:
            if m == _MAXD:
                raise ValueError(f"more than {_MAXD} dims remain after collapsing sizes "
                                 f"{list(o.shape)}; the strided kernels take at most {_MAXD}")
            osz[m] = o._shape[d]
            for k in range(nops):
                ost[k][m] = st[k][d]
            m += 1
    if m == 0:                  # a one-element (or 0-d) output
        osz[0] = 1
        for k in range(nops):
            ost[k][0] = 0
        return _pack(1, osz, ost, nops)
    if m == 1:
        unit = True
        for k in range(nops):
            if ost[k][0] != 1:
                unit = False
                break
        if unit:
            return None
    return _pack(m, osz, ost, nops)


cdef bytes _pack(int m, long long* sizes, long long (*strides)[PT_MAX_DIMS], Py_ssize_t nops):
    """``[ndim] + sizes + strides of each operand``, each padded to MAX_DIMS,
    as little-endian 8-byte integers (``_kernels.pack_strided``)."""
    cdef long long buf[1 + _MAXD * (1 + _MAXOPS)]
    cdef Py_ssize_t n = 1 + _MAXD * (1 + nops), k
    cdef int d
    memset(buf, 0, sizeof(buf))
    buf[0] = m
    for d in range(m):
        buf[1 + d] = sizes[d]
    for k in range(nops):
        for d in range(m):
            buf[1 + _MAXD * (1 + k) + d] = strides[k][d]
    return PyBytes_FromStringAndSize(<char*>buf, n * 8)
