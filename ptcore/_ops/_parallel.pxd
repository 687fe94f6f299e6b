# Thread-count contract shared by every parallel kernel.
#
# Kernels call ``get_num_threads()`` for ``prange(num_threads=...)`` and stay
# serial below ``parallel_grain()`` elements.  The value is owned by
# ptcore._ops._parallel and set through ptcore.set_num_threads.
cdef int get_num_threads() noexcept nogil
cdef Py_ssize_t parallel_grain() noexcept nogil
