# cython: language_level=3, boundscheck=False, wraparound=False
"""Nested Python lists of numbers into a new CPU tensor, without NumPy.

``ptcore.tensor([[1.0, 2.0], [3.0, 4.0]])`` is the everyday case of
``tensor()``: a rectangular nest of ``list`` objects whose leaves are all
Python ``float`` (stored as float32 or float64, a C cast of the double, as
the NumPy route's copy) or all Python ``int`` within int64 (stored as
int64).  Anything else (tuples, empty lists, ragged rows, bools, NumPy
scalars, mixed leaf types, other dtypes) returns None and takes the general
path, which owns every error message.
"""
from libc.stdint cimport int64_t
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64, PT_INT64
from ptcore._tensor cimport _TensorBase, dtype, _empty_contig
from ptcore import _tensor as _C

cdef object _CPU = _C._to_device("cpu")

cdef enum:
    _MAXD = 25          # deeper nests take the general path (its dims limit and message)


cdef int _fill(list seq, int d, int nd, const Py_ssize_t* shape, int num, char* out,
               Py_ssize_t* pos) except -2:
    """Store the leaves of ``seq`` (depth ``d``) at ``out[pos...]``; 0, or -1
    when ``seq`` is not of the inferred shape and leaf type."""
    cdef Py_ssize_t i, n = PyList_GET_SIZE(seq)
    cdef object x
    cdef int overflow
    cdef long long v
    if n != shape[d]:
        return -1
    if d + 1 < nd:
        for i in range(n):
            x = <object>PyList_GET_ITEM(seq, i)
            if type(x) is not list or _fill(<list>x, d + 1, nd, shape, num, out, pos) < 0:
                return -1
        return 0
    for i in range(n):
        x = <object>PyList_GET_ITEM(seq, i)
        if num == PT_INT64:
            if type(x) is not int:
                return -1
            v = PyLong_AsLongLongAndOverflow(x, &overflow)
            if overflow:
                return -1
            (<int64_t*>out)[pos[0]] = <int64_t>v
        else:
            if type(x) is not float:
                return -1
            if num == PT_FLOAT32:
                (<float*>out)[pos[0]] = <float>PyFloat_AS_DOUBLE(x)
            else:
                (<double*>out)[pos[0]] = PyFloat_AS_DOUBLE(x)
        pos[0] += 1
    return 0


cdef int _rectangular(list seq, int d, int nd, const Py_ssize_t* shape):
    """1 when every list of ``seq`` down to depth ``nd - 1`` has the inferred
    length (the leaves are not looked at), else 0: a ragged nest must not size
    an allocation (its first row could ask for terabytes)."""
    cdef Py_ssize_t i, n = PyList_GET_SIZE(seq)
    cdef object x
    if n != shape[d]:
        return 0
    if d + 1 < nd:
        for i in range(n):
            x = <object>PyList_GET_ITEM(seq, i)
            if type(x) is not list or not _rectangular(<list>x, d + 1, nd, shape):
                return 0
    return 1


def nested_list_tensor(list data, dtype float_dt, dtype requested):
    """A new contiguous CPU tensor holding ``data``, or None.

    ``float_dt``: the dtype of float leaves (the default dtype); ``requested``:
    the ``dtype=`` asked for, or None (int leaves give int64, float leaves
    ``float_dt``).  Only float32/float64 (float leaves) and int64 (int leaves)
    are filled here."""
    cdef Py_ssize_t shape[_MAXD]
    cdef int nd = 0, num
    cdef Py_ssize_t pos = 0
    cdef object x = data
    cdef object leaf
    cdef _TensorBase out
    while type(x) is list:
        if nd == _MAXD or PyList_GET_SIZE(x) == 0:
            return None
        shape[nd] = PyList_GET_SIZE(x)
        nd += 1
        x = <object>PyList_GET_ITEM(x, 0)
    leaf = type(x)
    if leaf is float:
        num = (requested if requested is not None else float_dt).num
        if num != PT_FLOAT32 and num != PT_FLOAT64:
            return None
    elif leaf is int:
        num = PT_INT64
        if requested is not None and requested.num != PT_INT64:
            return None
    else:
        return None
    if nd > 1 and not _rectangular(data, 0, nd, shape):
        return None
    out = _empty_contig(requested if requested is not None else
                        (float_dt if leaf is float else _C.int64), nd, shape, _CPU, False)
    if _fill(data, 0, nd, shape, num, out._ptr(), &pos) < 0:
        return None
    return out
