from libc.stdint cimport uintptr_t

ctypedef int (*launch_fn)(void* f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                          void* stream, void** params, void** extra) noexcept


cdef class KernelLauncher:
    cdef launch_fn fn
    cdef readonly object owner
    cdef readonly bint checked
    cdef dict _sizes
    cdef public unsigned long long launches     # kernels launched through it (diagnostics)

    cdef int launch_c(self, uintptr_t function, unsigned grid, unsigned block, uintptr_t stream,
                      void** params) noexcept
