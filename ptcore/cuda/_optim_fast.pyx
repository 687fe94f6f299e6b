# cython: language_level=3, boundscheck=False, wraparound=False
"""The CUDA optimizer steps' launches in C.

``sgd_step`` is the loop ``ptcore.optim.sgd`` runs once per parameter of
every step (SGD with momentum).  Its Python launcher
(:func:`ptcore.cuda._launch_nn.sgd_step`) checks the three operands, packs
the kernel's arguments and launches through the general path, about three
times the host time of the three C fast-path ops it replaces; here the
checks, the argument block and the launch are C.  The kernel and its
arguments are the Python launcher's (``ptc_nnoptim_sgd_<tag>``), so the
results are the same bits.  Anything this does not take -- another dtype,
a non-contiguous operand, two devices, a driver without a C launcher --
goes to the Python launcher, which raises the errors.
"""
from libc.stdint cimport uintptr_t

from ptcore._ops._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._tensor cimport _TensorBase, ptc_bump_version
from ptcore.cuda._dense_fast cimport _kernel, _launch_vals, _FAM_NAMED

from ptcore.cuda import _launch_nn

__all__ = ["sgd_step"]

cdef struct sgdargs:                    # _kernels_nn's ptc_sgdargs
    double neg_lr
    double momentum
    double one_m_damp
    double wd
    long long decay
    long long nesterov
    long long maximize


cdef bint _like(object t, _TensorBase p):
    """``t`` a contiguous tensor of ``p``'s dtype and element count on ``p``'s
    CUDA device."""
    if not isinstance(t, _TensorBase):
        return False
    cdef _TensorBase x = <_TensorBase>t
    return (x._dtype is p._dtype and x._numel == p._numel and x._is_contig()
            and x._storage.device._type_code == 1
            and x._storage.device._idx == p._storage.device._idx)


def sgd_step(param, grad, buf, double lr, double momentum, double dampening, double weight_decay,
             bint nesterov, bint maximize):
    """One SGD-with-momentum update of ``param`` and ``buf`` in place (see
    the module docstring)."""
    cdef _TensorBase p
    cdef int num
    cdef tuple e = None
    if isinstance(param, _TensorBase):
        p = <_TensorBase>param
        num = p._dtype.num
        if ((num == PT_FLOAT32 or num == PT_FLOAT64) and p._storage.device._type_code == 1
                and p._is_contig() and _like(grad, p) and _like(buf, p)):
            e = _kernel(_FAM_NAMED,
                        "ptc_nnoptim_sgd_f32" if num == PT_FLOAT32 else "ptc_nnoptim_sgd_f64", p)
    if e is None:
        return _launch_nn.sgd_step(param, grad, buf, lr, momentum, dampening, weight_decay,
                                   nesterov, maximize)
    cdef long long v[4]
    cdef sgdargs a
    v[0] = p._numel
    v[1] = <long long><uintptr_t>p._ptr()
    v[2] = <long long><uintptr_t>(<_TensorBase>grad)._ptr()
    v[3] = <long long><uintptr_t>(<_TensorBase>buf)._ptr()
    a.neg_lr = -lr
    a.momentum = momentum
    a.one_m_damp = 1 - dampening
    a.wd = weight_decay
    a.decay = weight_decay != 0
    a.nesterov = nesterov
    a.maximize = maximize
    cdef Py_ssize_t idx = p._storage.device._idx
    if p._numel > 0:
        e[0].set_current(idx)
        _launch_vals(e, idx, p._numel, False, v, 4, &a)
    ptc_bump_version(p)
    ptc_bump_version(<_TensorBase>buf)
