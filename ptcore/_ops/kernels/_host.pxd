# The kernel layer's one check that an operand lives in host memory.  A CPU
# kernel reads its tensors' bytes through ``_ptr()``; the device layer sends
# it CPU tensors only (another device's tensor reaches that device's kernel
# from ``OpDef.kernels``), so these guard direct calls of a kernel, where a
# device pointer must never be read on the host.

from ptcore._tensor cimport _TensorBase


cdef inline bint in_host_memory(_TensorBase t) noexcept:
    """Whether ``t``'s storage is host (CPU) memory."""
    return t._storage.device._type_code == 0


cdef inline int require_host(_TensorBase t, str what) except -1:
    """ValueError "``what`` must be on the CPU, got <device>" unless ``t`` is
    in host memory."""
    if t._storage.device._type_code != 0:
        raise ValueError(f"{what} must be on the CPU, got {t._storage.device}")
    return 0
