# cython: language_level=3, boundscheck=False, wraparound=False
"""Gradient clipping's per-tensor norms on CUDA, from C.

``nn.utils.clip_grad_norm_`` (``get_total_norm``) takes the 2-norm of every
gradient and stacks them: on CUDA its general path made one dispatched
``linalg.vector_norm`` per gradient (the reduction front-end and the Python
launcher, about 60 us of host time each on an AVX2 EPYC), a ``.to()`` per
norm and a ``stack`` of copy kernels -- 2.8 ms for a small GPT's 30
gradients, a quarter of its training step's host time.  :func:`stacked_norm2`
writes each norm straight into its place of the stacked result with the
same row kernel (``ptc_reduce_norm2``, one block) and arguments the general
path's reduction launches for it, so the stacked tensor is bitwise the
general path's.  A gradient that path reduces otherwise (a long row split
in two passes, a strided one, an empty one) is reduced by the caller's
``general`` function and its 0-d result copied into place.
"""
from libc.stdint cimport uintptr_t
from libc.string cimport memset

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._tensor cimport _TensorBase
from ptcore.cuda.runtime.device_storage cimport _dense_shaped
from ptcore.cuda.ops.dense_fast cimport _kernel, _run, ptc_params, _FAM_REDUCE

from ptcore.cuda.ops import reduce as _launch_reduce
from ptcore.cuda.runtime import state as _runtime

__all__ = ["stacked_norm2"]

cdef dict _state = _runtime._state      # updated in place, never rebound
cdef object _stream_of = _runtime.current_stream_handle
# rows at least this long are split in two passes by the general path
cdef Py_ssize_t _SPLIT_MIN = _launch_reduce._SPLIT_MIN


def stacked_norm2(list tensors, general):
    """``stack([vector_norm(t, 2.0) for t in tensors])`` for float32/float64
    CUDA tensors of one dtype and device: a new (len(tensors),) tensor;
    ``general(t)`` (a 0-d tensor of their dtype on their device) for a
    tensor the one-block row kernel does not take.  None for anything else
    (another dtype, mixed dtypes or devices, no C launcher)."""
    cdef Py_ssize_t n = len(tensors), i
    if n == 0 or not isinstance(tensors[0], _TensorBase):
        return None
    cdef _TensorBase first = <_TensorBase>tensors[0], t
    cdef int num = first._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or first._storage.device._type_code != 1:
        return None
    cdef Py_ssize_t idx = first._storage.device._idx
    for i in range(n):
        o = tensors[i]
        if not isinstance(o, _TensorBase):
            return None
        t = <_TensorBase>o
        if t._dtype is not first._dtype or t._storage.device._type_code != 1 \
                or t._storage.device._idx != idx:
            return None
    drv = _state["driver"]
    if drv is None:
        return None
    cdef tuple e = _kernel(_FAM_REDUCE, "norm2", first)
    if e is None:
        return None
    cdef _TensorBase res = _dense_shaped(first, first._dtype, 1, &n)    # (the device current)
    cdef Py_ssize_t isz = first._dtype.itemsize
    cdef uintptr_t base = <uintptr_t>res._ptr()
    cdef ptc_params p
    cdef long long M = 1, L
    cdef unsigned long long out_p, x_p
    cdef void* kp[5]
    cdef _TensorBase r
    memset(&p, 0, sizeof(p))
    p.d0 = 2.0                          # (the general path's parameters: the order)
    for i in range(n):
        t = <_TensorBase>tensors[i]
        out_p = base + i * isz
        if t._is_contig() and 0 < t._numel < _SPLIT_MIN:
            L = t._numel
            x_p = <uintptr_t>t._ptr()
            kp[0] = &M
            kp[1] = &L
            kp[2] = &out_p
            kp[3] = &x_p
            kp[4] = &p
            _run(e, idx, 1, kp, True)
        else:
            r = <_TensorBase?>general(t)
            if r._dtype is not first._dtype or r._numel != 1 or r._storage.device._type_code != 1 \
                    or r._storage.device._idx != idx:
                raise RuntimeError("stacked_norm2: the general norm is not a 0-d tensor of the "
                                   "inputs' dtype and device")
            drv.memcpy_dtod(out_p, <uintptr_t>r._ptr(), isz, _stream_of(idx))
    return res
