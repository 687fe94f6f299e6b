# cython: language_level=3, boundscheck=False, wraparound=False
"""The kernel launch in C: ``cuLaunchKernel`` called through a function
pointer, its ``void*[]`` of argument addresses built on the C stack.

Every ptcore kernel launch goes through :meth:`KernelLauncher.launch`
(:func:`ptcore.cuda.ops.launch.launch_function`).  A driver provides the
launcher: the real device one over the driver's own ``cuLaunchKernel``
(resolved with ``cuGetProcAddress`` at initialisation), the emulated device
one over a C callback into its Python ``launch`` -- so the marshalling below
runs in CI on the emulated device exactly as it runs on a GPU.

Kernel arguments are Python ``int`` s (a ``long long``, a device pointer:
eight bytes, two's complement, so -2**63 <= value < 2**64; the kernel reads
its parameter's own size, little-endian), ``bytes`` (a struct passed by value: ``ptc_params``,
``ptc_strided<K>``) or any object exporting a buffer of the parameter's bytes
(the ``ctypes`` instances some launches build: ``c_double``, ``c_int``).
"""
cimport cython
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from libc.stdint cimport uintptr_t

from cpython.long cimport PyLong_AsLongLong, PyLong_AsUnsignedLongLong

__all__ = ["KernelLauncher", "null_launcher", "MAX_ARGS"]

cdef enum:
    _MAX_ARGS = 32

MAX_ARGS = _MAX_ARGS


cdef int _null_launch(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                      unsigned by, unsigned bz, unsigned shmem, void* stream, void** params,
                      void** extra) noexcept:
    return 0


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class KernelLauncher:
    """``launch(function, grid, block, stream, args, shared_mem=0)`` through the
    C function ``cuLaunchKernel`` at ``address`` (``owner`` keeps whatever
    provides it alive: a ctypes callback).

    A checked launcher (the drivers') launches only the functions
    :meth:`register` ed with their parameter sizes -- the driver reads one
    argument per parameter and that many bytes from it, so a launch with too
    few arguments, or a struct or value shorter than its parameter, is
    refused before the driver reads past it.  ``launches`` counts the launches
    made through it (a diagnostic: ``benchmarks/cuda_check.py`` notes the
    kernels each op launches)."""
    def __cinit__(self, uintptr_t address, owner=None, bint checked=True):
        if address == 0:
            raise ValueError("KernelLauncher needs the address of a cuLaunchKernel, not NULL")
        self.fn = <launch_fn>address
        self.owner = owner
        self.checked = checked
        self._sizes = {}

    def register(self, uintptr_t function, sizes):
        """Kernel handle ``function`` takes parameters of ``sizes`` bytes
        (None: sizes unknown to the driver; launched unchecked)."""
        self._sizes[function] = None if sizes is None else tuple(int(n) for n in sizes)

    cdef int launch_c(self, uintptr_t function, unsigned grid, unsigned block, uintptr_t stream,
                      void** params) noexcept:
        """A one-dimensional launch from C (the dense fast paths,
        :mod:`ptcore.cuda.ops.dense_fast`): ``params`` holds one address per
        kernel parameter, the caller's (its kernels' signatures are fixed),
        so the registered-size check is not made; returns the CUresult."""
        self.launches += 1
        return self.fn(<void*>function, grid, 1, 1, block, 1, 1, 0, <void*>stream, params, NULL)

    def launch(self, uintptr_t function, grid, block, uintptr_t stream, args,
               unsigned shared_mem=0):
        """Launch ``function`` over ``grid`` x ``block`` (ints, or 3-tuples)
        on ``stream`` with ``args``; returns the driver's CUresult (0: success)."""
        cdef unsigned long long vals[_MAX_ARGS]
        cdef void* kp[_MAX_ARGS]
        cdef Py_buffer views[_MAX_ARGS]
        cdef bint held[_MAX_ARGS]
        cdef unsigned g[3]
        cdef unsigned b[3]
        cdef Py_ssize_t i, n, need, have
        cdef int rc
        _dims(grid, g, "grid")
        _dims(block, b, "block")
        args = tuple(args)
        n = len(args)
        if n > _MAX_ARGS:
            raise ValueError(f"a kernel launch takes at most {_MAX_ARGS} arguments, got {n}")
        cdef object sizes = None
        if self.checked:
            if function not in self._sizes:
                raise TypeError(f"launch needs a kernel handle from module_load, got {function:#x}")
            sizes = self._sizes[function]
            if sizes is not None and len(<tuple>sizes) != n:
                raise TypeError(f"the kernel takes {len(<tuple>sizes)} arguments, got {n}")
        for i in range(n):
            held[i] = False
        try:
            for i in range(n):
                a = args[i]
                need = 0 if sizes is None else (<tuple>sizes)[i]
                if type(a) is int:
                    try:
                        vals[i] = <unsigned long long>PyLong_AsLongLong(a)
                    except OverflowError:           # a pointer at or above 2**63
                        vals[i] = PyLong_AsUnsignedLongLong(a)
                    kp[i] = &vals[i]
                    have = 8
                elif type(a) is bytes:
                    kp[i] = <void*><const char*>a         # alive: ``args`` holds it
                    have = len(<bytes>a)
                else:
                    try:
                        PyObject_GetBuffer(a, &views[i], PyBUF_SIMPLE)
                    except TypeError:
                        raise TypeError(f"kernel argument {i}: an int, bytes or a ctypes value, "
                                        f"not {type(a).__name__}") from None
                    held[i] = True
                    kp[i] = views[i].buf
                    have = views[i].len
                if have < need:
                    raise ValueError(f"kernel argument {i}: {have} bytes for a {need}-byte "
                                     "parameter")
            self.launches += 1
            rc = self.fn(<void*>function, g[0], g[1], g[2], b[0], b[1], b[2], shared_mem,
                         <void*>stream, kp, NULL)
        finally:
            for i in range(n):
                if held[i]:
                    PyBuffer_Release(&views[i])
        return rc


cdef int _dims(v, unsigned* out, str what) except -1:
    if type(v) is int:
        out[0] = v
        out[1] = 1
        out[2] = 1
        return 0
    v = tuple(v)
    if not 1 <= len(v) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {v}")
    out[0] = v[0]
    out[1] = v[1] if len(v) > 1 else 1
    out[2] = v[2] if len(v) > 2 else 1
    return 0


def null_launcher():
    """A launcher whose ``cuLaunchKernel`` does nothing and succeeds (host-path
    benchmarks: ``benchmarks/cuda_overhead.py --emulated``)."""
    return KernelLauncher(<uintptr_t>&_null_launch, checked=False)
