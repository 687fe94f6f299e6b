# Thread-count contract shared by every parallel kernel.
#
# Kernels call ``get_num_threads()`` for ``prange(num_threads=...)`` and stay
# serial below ``parallel_grain()`` elements (``team_for(work)`` does both for
# loops of independent elements).  The count is the team size of ptc_team.h:
# the one set through ptcore.set_num_threads, lowered while the process does
# not get the CPUs for it, so it can change from one call to the next; a
# kernel reads it once per call and never lets its result depend on it.
cdef int get_num_threads() noexcept nogil
cdef Py_ssize_t parallel_grain() noexcept nogil


cdef inline int team_for(Py_ssize_t work) noexcept nogil:
    """Threads for a loop of ``work`` independent elements: one below the
    grain, else at most one per started grain (torch's parallel_for), at most
    the team."""
    cdef Py_ssize_t g = parallel_grain()
    cdef int nt
    if work < g:
        return 1
    nt = get_num_threads()
    if nt > 1 and (work + g - 1) // g < nt:
        nt = <int>((work + g - 1) // g)
    return nt
