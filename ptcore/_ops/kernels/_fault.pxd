# The kernels' scratch allocations (include/ptc_scratch.h) and the one
# process-wide switch that makes them fail in tests (_fault.pyx).  A kernel
# module cimports the allocators from here and calls ``scratch_bind()`` once
# at import: its copy of the header then reads _fault's switch.

cdef extern from "ptc_scratch.h":
    ctypedef struct ptc_scratch_fault:
        int armed
        long long left
        size_t min_bytes
        long long skip
        long long failed
    void* ptc_scratch_malloc(size_t bytes) nogil
    void* ptc_scratch_calloc(size_t n, size_t size) nogil
    void ptc_scratch_note(size_t* flag, size_t bytes) nogil
    void ptc_scratch_bind(ptc_scratch_fault* sw) nogil

cdef ptc_scratch_fault* scratch_switch() noexcept nogil
cdef int scratch_error(str op, size_t nbytes) except -1


cdef inline void scratch_bind() noexcept:
    """Point this module's ptc_scratch.h at the process-wide switch."""
    ptc_scratch_bind(scratch_switch())
