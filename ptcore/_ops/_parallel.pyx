# cython: language_level=3
"""Process-wide thread count for ptcore's CPU kernels."""
from ptcore._ops._openmp cimport PTC_HAVE_OPENMP

cdef int _num_threads = 1
cdef Py_ssize_t _grain = 32768


cdef int get_num_threads() noexcept nogil:
    return _num_threads


cdef Py_ssize_t parallel_grain() noexcept nogil:
    return _grain


def _set_num_threads(int n):
    global _num_threads
    if n < 1:
        raise ValueError(f"set_num_threads expects a positive integer, got {n}")
    # every prange passes num_threads explicitly; the OpenMP runtime's own
    # count is left alone, because it is shared with other libraries in the
    # process (torch's threads dropped to ptcore's count at import)
    _num_threads = n


def _get_num_threads():
    return _num_threads


def _set_parallel_grain(Py_ssize_t n):
    global _grain
    if n < 1:
        raise ValueError(f"parallel grain must be positive, got {n}")
    _grain = n


def _get_parallel_grain():
    return _grain


def _have_openmp():
    return bool(PTC_HAVE_OPENMP)
