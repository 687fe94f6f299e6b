# cython: language_level=3, boundscheck=False, wraparound=False
"""What makes a compiled graph's guards cheap on a call that changes nothing
(:mod:`ptcore._dynamo.guards`).

:class:`DictWatch` holds the dicts whose contents the guards compare (the
modules' ``__dict__``, parameter, buffer, submodule and hook registries) and
the version tag each had when the guards last found them right.  CPython
gives every dict a new tag on each change (PEP 509's ``ma_version_tag``, up to
Python 3.12; from 3.13 on :meth:`DictWatch.unchanged` always answers False and
the guards compare the contents each call, as before), so equal tags mean
equal contents: identities and values alike.  A module's ``__dict__``
replaced wholesale is seen by its owner's dict pointer.

:func:`tensors_changed` compares the state of the parameters and buffers the
registries hold (``requires_grad``, dtype, shape, type), which changes without
any dict changing (``requires_grad_``, ``.data =``, ``resize_``).
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport PyObject

from ptcore._tensor cimport _TensorBase

cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030D0000
    #define PTC_DICT_TAGS 1
    static inline unsigned long long ptc_dict_tag(PyObject *d) {
    #if PY_VERSION_HEX >= 0x030C0000
    _Pragma("GCC diagnostic push")
    _Pragma("GCC diagnostic ignored \\"-Wdeprecated-declarations\\"")
    #endif
        return (unsigned long long)((PyDictObject *)d)->ma_version_tag;
    #if PY_VERSION_HEX >= 0x030C0000
    _Pragma("GCC diagnostic pop")
    #endif
    }
    #else
    #define PTC_DICT_TAGS 0
    static inline unsigned long long ptc_dict_tag(PyObject *d) { (void)d; return 0; }
    #endif
    """
    const int PTC_DICT_TAGS
    unsigned long long ptc_dict_tag(PyObject* d)
    PyObject** _PyObject_GetDictPtr(object o)

__all__ = ["DictWatch", "tensors_changed", "TAGS"]

TAGS = bool(PTC_DICT_TAGS)


cdef class DictWatch:
    """``dicts`` (each an exact dict or a dict subclass), each with its owner
    (an object whose ``__dict__`` it must still be, or None).

    ``unchanged()`` is True when each dict holds what it held at the last
    ``commit()`` (and each owner still has it); ``begin()`` reads the tags
    before the contents are compared, ``commit(tags)`` keeps what it read
    once the comparison found them right (a change made meanwhile leaves
    another tag: the next call compares again; the tags are the caller's, so
    two threads comparing at once each keep only what they compared)."""
    cdef tuple _dicts, _owners
    cdef Py_ssize_t _n
    cdef unsigned long long* _tags
    cdef bint _armed

    def __cinit__(self, dicts, owners):
        self._dicts = tuple(dicts)
        self._owners = tuple(owners)
        if len(self._owners) != len(self._dicts):
            raise ValueError("one owner (or None) per dict")
        for d in self._dicts:
            if not isinstance(d, dict):
                raise TypeError("DictWatch watches dicts")
        self._n = len(self._dicts)
        self._tags = <unsigned long long*>PyMem_Malloc((self._n + 1) * sizeof(unsigned long long))
        if self._tags == NULL:
            raise MemoryError()
        self._armed = False

    def __dealloc__(self):
        PyMem_Free(self._tags)

    def unchanged(self):
        cdef Py_ssize_t i
        cdef PyObject** dp
        if not PTC_DICT_TAGS or not self._armed:
            return False
        for i in range(self._n):
            d = self._dicts[i]
            o = self._owners[i]
            if o is not None:
                dp = _PyObject_GetDictPtr(o)
                if dp == NULL or dp[0] != <PyObject*>d:
                    return False
            if ptc_dict_tag(<PyObject*>d) != self._tags[i]:
                return False
        return True

    def begin(self):
        """The dicts' tags now (for :meth:`commit`)."""
        cdef Py_ssize_t i
        cdef bytearray out = bytearray(self._n * sizeof(unsigned long long))
        cdef unsigned long long* p = <unsigned long long*><char*>out
        for i in range(self._n):
            p[i] = ptc_dict_tag(<PyObject*>self._dicts[i])
        return out

    def commit(self, bytearray tags not None):
        """Keep ``tags`` (what :meth:`begin` read) as the dicts' known state."""
        cdef Py_ssize_t i
        cdef const unsigned long long* p = <const unsigned long long*><char*>tags
        if len(tags) != self._n * sizeof(unsigned long long):
            raise ValueError("not this watch's tags")
        for i in range(self._n):
            self._tags[i] = p[i]
        self._armed = True

    def disarm(self):
        self._armed = False


def tensors_changed(tuple tensors, tuple metas):
    """The index of the first of ``tensors`` whose type, ``requires_grad``,
    dtype or shape is not ``metas[i] = (type, requires_grad, dtype, shape)``;
    -1 when none."""
    cdef Py_ssize_t i, j, n = len(tensors)
    cdef _TensorBase t
    cdef tuple m, shp
    for i in range(n):
        o = tensors[i]
        m = <tuple>metas[i]
        if type(o) is not m[0]:
            return i
        t = <_TensorBase>o
        if t._requires_grad != <bint>m[1] or t._dtype is not m[2]:
            return i
        shp = <tuple>m[3]
        if t._ndim != len(shp):
            return i
        for j in range(t._ndim):
            if t._shape[j] != <Py_ssize_t>shp[j]:
                return i
    return -1
