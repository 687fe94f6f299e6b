"""The process-wide fault-injection switch of the kernels' scratch
allocations (``include/ptc_scratch.h``), for tests: with it armed, the next
``n`` scratch requests of at least ``min_bytes`` bytes fail in every kernel
module, as malloc does when memory is short, so that tests can check that
each op then raises MemoryError (or takes a correct fallback) instead of
returning an unwritten output.  Private; disarmed it costs one predictable
branch per request."""

cdef ptc_scratch_fault _switch        # zeroed: disarmed

scratch_bind()                        # (this module's own copy of the header)


cdef ptc_scratch_fault* scratch_switch() noexcept nogil:
    return &_switch


cdef int scratch_error(str op, size_t nbytes) except -1:
    """MemoryError naming the op and the size of the request that failed."""
    raise MemoryError(f"{op}: could not allocate {nbytes} bytes of scratch memory")


def _fail_scratch_allocs(long long n=1, Py_ssize_t min_bytes=0, long long after=0):
    """Make the next ``n`` kernel scratch requests of at least ``min_bytes``
    bytes fail, once ``after`` such requests were served (``n`` < 0: all of
    them; 0: disarm, every request served again).  Resets the count of
    :func:`_scratch_failures`."""
    if min_bytes < 0 or after < 0:
        raise ValueError(f"_fail_scratch_allocs: min_bytes and after must be >= 0, got "
                         f"{min_bytes} and {after}")
    _switch.armed = 0
    _switch.left = n
    _switch.min_bytes = <size_t>min_bytes
    _switch.skip = after
    _switch.failed = 0
    _switch.armed = n != 0


def _scratch_failures():
    """How many requests the switch failed since it was last set."""
    return _switch.failed
