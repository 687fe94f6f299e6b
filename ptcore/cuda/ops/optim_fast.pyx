# cython: language_level=3, boundscheck=False, wraparound=False
"""The CUDA optimizer steps' launches in C.

``sgd_step`` and ``adam_step`` are the loops ``ptcore.optim.sgd`` and
``ptcore.optim.adam``/``adamw`` run once per parameter of every step.  Their
Python launchers (:func:`ptcore.cuda.ops.nn.sgd_step`, ``adam_step``)
check the operands, pack the kernel's arguments and launch through the
general path: 3.5 us a call, more than the three C fast-path ops the SGD
step replaces.  Here the checks, the argument block and the launch are C
(0.5 us).  The kernels and their arguments are the Python launchers'
(``ptc_nnoptim_sgd_<tag>``, ``ptc_nnoptim_adam_<tag>``), so the results are
the same bits.  Anything this does not take -- another dtype,
a non-contiguous operand, two devices, a driver without a C launcher --
goes to the Python launcher, which raises the errors.
"""
from libc.math cimport pow
from libc.stdint cimport uintptr_t

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._tensor cimport _TensorBase, ptc_bump_version
from ptcore.cuda.ops.dense_fast cimport _kernel, _launch_vals, _FAM_NAMED

from ptcore.cuda.ops import nn as _launch_nn

__all__ = ["sgd_step", "adam_step"]

cdef struct sgdargs:                    # _kernels_nn's ptc_sgdargs
    double neg_lr
    double momentum
    double one_m_damp
    double wd
    long long decay
    long long nesterov
    long long maximize


cdef struct adamargs:                   # _kernels_nn's ptc_adamargs
    double one_m_beta1
    double beta2
    double one_m_beta2
    double wd
    double decay
    double bc2s
    double eps
    double neg_step
    long long maximize
    long long l2
    long long decoupled


cdef bint _like(object t, _TensorBase p):
    """``t`` a contiguous tensor of ``p``'s dtype and element count on ``p``'s
    CUDA device."""
    if not isinstance(t, _TensorBase):
        return False
    cdef _TensorBase x = <_TensorBase>t
    return (x._dtype is p._dtype and x._numel == p._numel and x._is_contig()
            and x._storage.device._type_code == 1
            and x._storage.device._idx == p._storage.device._idx)


cdef tuple _handle(object param, str name, tuple others, object optional=None):
    """The kernel ``name``_<f32|f64> for ``param`` when it, every tensor of
    ``others`` and ``optional`` (unless None: amsgrad's buffer) are dense
    contiguous float32/float64 of one dtype, element count and CUDA device,
    and the driver launches from C; else None (a None among ``others`` too:
    the Python launcher raises)."""
    if not isinstance(param, _TensorBase):
        return None
    cdef _TensorBase p = <_TensorBase>param
    cdef int num = p._dtype.num
    if ((num != PT_FLOAT32 and num != PT_FLOAT64) or p._storage.device._type_code != 1
            or not p._is_contig()):
        return None
    for t in others:
        if not _like(t, p):
            return None
    if optional is not None and not _like(optional, p):
        return None
    return _kernel(_FAM_NAMED, name + ("_f32" if num == PT_FLOAT32 else "_f64"), p)


cdef inline long long _addr(object t):
    return 0 if t is None else <long long><uintptr_t>(<_TensorBase>t)._ptr()


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, double lr, double beta1,
              double beta2, double eps, double weight_decay, double bias_correction1,
              double bias_correction2, bint maximize, bint decoupled):
    """One Adam/AdamW update of ``param`` in place (see the module docstring
    and :func:`ptcore.cuda.ops.nn.adam_step`)."""
    cdef tuple e = _handle(param, "ptc_nnoptim_adam", (grad, exp_avg, exp_avg_sq), max_exp_avg_sq)
    if e is None:
        return _launch_nn.adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, lr, beta1,
                                    beta2, eps, weight_decay, bias_correction1,
                                    bias_correction2, maximize, decoupled)
    cdef _TensorBase p = <_TensorBase>param
    cdef long long v[6]
    cdef adamargs a
    v[0] = p._numel
    v[1] = _addr(param)
    v[2] = _addr(grad)
    v[3] = _addr(exp_avg)
    v[4] = _addr(exp_avg_sq)
    v[5] = _addr(max_exp_avg_sq)
    # the Python launcher's values, computed the same way (its ** is C's pow)
    a.one_m_beta1 = 1 - beta1
    a.beta2 = beta2
    a.one_m_beta2 = 1 - beta2
    a.wd = weight_decay
    a.decay = 1 - lr * weight_decay
    a.bc2s = pow(bias_correction2, 0.5)
    a.eps = eps
    a.neg_step = -(lr / bias_correction1)
    a.maximize = maximize
    a.l2 = weight_decay != 0 and not decoupled
    a.decoupled = weight_decay != 0 and decoupled
    cdef Py_ssize_t idx = p._storage.device._idx
    if p._numel > 0:
        e[0].set_current(idx)
        _launch_vals(e, idx, p._numel, False, v, 6, &a)
    for t in (param, exp_avg, exp_avg_sq, max_exp_avg_sq):
        if t is not None:
            ptc_bump_version(<_TensorBase>t)


def sgd_step(param, grad, buf, double lr, double momentum, double dampening, double weight_decay,
             bint nesterov, bint maximize):
    """One SGD-with-momentum update of ``param`` and ``buf`` in place (see
    the module docstring)."""
    cdef tuple e = _handle(param, "ptc_nnoptim_sgd", (grad, buf))
    if e is None:
        return _launch_nn.sgd_step(param, grad, buf, lr, momentum, dampening, weight_decay,
                                   nesterov, maximize)
    cdef _TensorBase p = <_TensorBase>param
    cdef long long v[4]
    cdef sgdargs a
    v[0] = p._numel
    v[1] = <long long><uintptr_t>p._ptr()
    v[2] = _addr(grad)
    v[3] = _addr(buf)
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
