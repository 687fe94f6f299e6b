# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""Fused optimizer updates: one pass over each parameter instead of a chain
of elementwise ops (the Adam family's update reads and writes four or five
arrays; composed of binary ops it makes seven passes over each).

Each element follows the arithmetic of PyTorch's single-tensor CPU
implementation step by step, in the parameter's precision (float32 or
float64): the scalars are rounded to that precision first, as PyTorch does
when it multiplies a float tensor by a Python number.

``adam_step`` (Adam, AdamW, and Adam with ``maximize``/``amsgrad``)::

    g = -grad if maximize else grad
    g = g + wd * p                       (L2 weight decay)      or
    p = p * (1 - lr * wd)                (decoupled, AdamW)
    m = lerp(m, g, 1 - beta1)
    v = v * beta2 + (1 - beta2) * g * g
    vmax = maximum(vmax, v)              (amsgrad; the denominator uses vmax)
    p = p + (-step_size) * (m / (sqrt(v) / bc2_sqrt + eps))

``sgd_step`` (SGD with momentum, as ``buf.mul_(momentum).add_(g, alpha=1 -
dampening)``; ``param.add_(buf, alpha=-lr)``, or Nesterov's): ptc_sgd.h.

The callers (``ptcore.optim.adam``, ``ptcore.optim.sgd``) check the
operands: same dtype, same shape, contiguous, on the CPU; the kernels
re-check what memory safety depends on.
"""
from libc.math cimport sqrt, sqrtf, isnan, pow
from cython.parallel cimport prange

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, ptc_bump_version
from ptcore._ops.kernels._host cimport in_host_memory
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain

ctypedef fused flt:
    float
    double

cdef extern from "ptc_sgd.h":
    void ptc_sgd_range_f32(float* p, const float* g, float* b, Py_ssize_t i0, Py_ssize_t i1,
                           double lr, double momentum, double one_m_damp, double wd,
                           int nesterov, int maximize) nogil
    void ptc_sgd_range_f64(double* p, const double* g, double* b, Py_ssize_t i0, Py_ssize_t i1,
                           double lr, double momentum, double one_m_damp, double wd,
                           int nesterov, int maximize) nogil


cdef inline flt _lerp(flt x, flt y, flt w) noexcept nogil:
    # PyTorch's lerp: the form that is exact at the end point it is near, in
    # flt throughout (a bare 1 - w is Cython's double 1.0 - w, which made the
    # float32 product a double one)
    if -0.5 < w < 0.5:
        return x + w * (y - x)
    return y - (y - x) * (<flt>1 - w)


cdef inline flt _sqrt(flt x) noexcept nogil:
    if flt is float:
        return sqrtf(x)
    else:
        return sqrt(x)


cdef void _adam_range(flt* p, const flt* g, flt* m, flt* v, flt* vmax, Py_ssize_t i0,
                      Py_ssize_t i1, flt w1, flt beta2, flt w2, flt wd, flt decay, flt bc2s,
                      flt eps, flt neg_step, bint maximize, bint l2, bint decoupled) noexcept nogil:
    cdef Py_ssize_t i
    cdef flt gi, mi, vi, d, pi
    cdef bint near = -0.5 < w1 < 0.5
    cdef flt w1c = <flt>1 - w1
    if not maximize and not l2 and vmax == NULL:
        # the common cases (Adam, AdamW; beta1 either side of 0.5, as DCGAN's
        # 0.5) as branch-free loops (vectorised: this module is compiled with
        # -fno-math-errno so that sqrt needs no libm call); the same
        # operations as the general loop below (_lerp's two forms)
        for i in range(i0, i1):
            pi = p[i]
            if decoupled:          # loop-invariant: unswitched by the compiler
                pi = pi * decay
            gi = g[i]
            if near:               # (loop-invariant too)
                mi = m[i] + w1 * (gi - m[i])
            else:
                mi = gi - (gi - m[i]) * w1c
            m[i] = mi
            vi = v[i] * beta2
            vi = vi + w2 * gi * gi
            v[i] = vi
            d = _sqrt(vi) / bc2s
            d = d + eps
            p[i] = pi + neg_step * (mi / d)
        return
    for i in range(i0, i1):
        gi = g[i]
        if maximize:
            gi = -gi
        if decoupled:
            p[i] = p[i] * decay
        elif l2:
            gi = gi + wd * p[i]
        mi = _lerp(m[i], gi, w1)
        m[i] = mi
        vi = v[i] * beta2
        vi = vi + w2 * gi * gi
        v[i] = vi
        if vmax != NULL:
            if vi > vmax[i] or isnan(vi):
                vmax[i] = vi
            vi = vmax[i]
        d = _sqrt(vi) / bc2s
        d = d + eps
        p[i] = p[i] + neg_step * (mi / d)


cdef inline Py_ssize_t _chunks(Py_ssize_t n, int nth, Py_ssize_t* chunk) noexcept nogil:
    """The threaded loops' chunks of ``chunk[0]`` elements, four per thread;
    0: too little work, run serially."""
    if nth <= 1 or n < 4 * parallel_grain():
        return 0
    chunk[0] = (n + 4 * nth - 1) // (4 * nth)
    return (n + chunk[0] - 1) // chunk[0]


cdef void _adam(flt* p, const flt* g, flt* m, flt* v, flt* vmax, Py_ssize_t n,
                double one_m_beta1, double beta2, double one_m_beta2, double wd, double decay,
                double bc2s, double eps, double neg_step, bint maximize, bint l2,
                bint decoupled, int nth) noexcept nogil:
    cdef Py_ssize_t chunk = 0, c, a, b
    cdef Py_ssize_t nchunks = _chunks(n, nth, &chunk)
    if nchunks:
        for c in prange(nchunks, num_threads=nth, schedule='static'):
            a = c * chunk
            b = a + chunk if a + chunk < n else n
            _adam_range(p, g, m, v, vmax, a, b, <flt>one_m_beta1, <flt>beta2, <flt>one_m_beta2,
                        <flt>wd, <flt>decay, <flt>bc2s, <flt>eps, <flt>neg_step, maximize, l2,
                        decoupled)
    else:
        _adam_range(p, g, m, v, vmax, 0, n, <flt>one_m_beta1, <flt>beta2, <flt>one_m_beta2,
                    <flt>wd, <flt>decay, <flt>bc2s, <flt>eps, <flt>neg_step, maximize, l2,
                    decoupled)


cdef int _check(_TensorBase t, _TensorBase p, str what, str op="adam_step") except -1:
    if t._dtype is not p._dtype or t._numel != p._numel or not t._is_contig():
        raise RuntimeError(f"{op}: {what} must be a contiguous {p._dtype._name} tensor of "
                           f"{p._numel} elements")
    return 0


def adam_step(_TensorBase param not None, _TensorBase grad not None,
              _TensorBase exp_avg not None, _TensorBase exp_avg_sq not None,
              _TensorBase max_exp_avg_sq, double lr, double beta1, double beta2, double eps,
              double weight_decay, double bias_correction1, double bias_correction2,
              bint maximize, bint decoupled):
    """One Adam/AdamW update of ``param`` in place (see the module docstring);
    ``max_exp_avg_sq`` is None without amsgrad.  Bumps the version counters
    of everything it writes."""
    cdef int num = param._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise RuntimeError("adam_step: float32 or float64 parameters only")
    if not param._is_contig():
        raise RuntimeError("adam_step: the parameter must be contiguous")
    _check(grad, param, "grad")
    _check(exp_avg, param, "exp_avg")
    _check(exp_avg_sq, param, "exp_avg_sq")
    if max_exp_avg_sq is not None:
        _check(max_exp_avg_sq, param, "max_exp_avg_sq")
    cdef Py_ssize_t n = param._numel
    cdef double bc2s = bias_correction2 ** 0.5
    cdef double neg_step = -(lr / bias_correction1)
    cdef double decay = 1 - lr * weight_decay
    cdef bint l2 = weight_decay != 0 and not decoupled
    cdef bint dec = weight_decay != 0 and decoupled
    cdef int nth = get_num_threads()
    cdef char* pp = param._ptr()
    cdef char* pg = grad._ptr()
    cdef char* pm = exp_avg._ptr()
    cdef char* pv = exp_avg_sq._ptr()
    cdef char* px = NULL if max_exp_avg_sq is None else max_exp_avg_sq._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _adam(<float*>pp, <const float*>pg, <float*>pm, <float*>pv, <float*>px, n,
                      1 - beta1, beta2, 1 - beta2, weight_decay, decay, bc2s, eps, neg_step,
                      maximize, l2, dec, nth)
            else:
                _adam(<double*>pp, <const double*>pg, <double*>pm, <double*>pv, <double*>px, n,
                      1 - beta1, beta2, 1 - beta2, weight_decay, decay, bc2s, eps, neg_step,
                      maximize, l2, dec, nth)
        finally:
            ptc_kernel_exit()
    ptc_bump_version(param)
    ptc_bump_version(exp_avg)
    ptc_bump_version(exp_avg_sq)
    if max_exp_avg_sq is not None:
        ptc_bump_version(max_exp_avg_sq)


def sgd_step(_TensorBase param not None, _TensorBase grad not None, _TensorBase buf not None,
             double lr, double momentum,
             double dampening, double weight_decay, bint nesterov, bint maximize):
    """One SGD-with-momentum update of ``param`` and its momentum buffer
    ``buf`` in place (ptc_sgd.h; a buffer that exists already: the first step
    clones the gradient instead).  Bumps both version counters."""
    cdef int num = param._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise RuntimeError("sgd_step: float32 or float64 parameters only")
    if not param._is_contig():
        raise RuntimeError("sgd_step: the parameter must be contiguous")
    _check(grad, param, "grad", "sgd_step")
    _check(buf, param, "momentum_buffer", "sgd_step")
    cdef Py_ssize_t n = param._numel, chunk = 0, c, a, b
    cdef int nth = get_num_threads()
    cdef Py_ssize_t nchunks = _chunks(n, nth, &chunk)
    cdef double one_m_damp = 1 - dampening
    cdef char* pp = param._ptr()
    cdef char* pg = grad._ptr()
    cdef char* pb = buf._ptr()
    cdef int nest = nesterov, maxi = maximize
    ptc_kernel_enter()
    with nogil:
        try:
            if nchunks:
                for c in prange(nchunks, num_threads=nth, schedule='static'):
                    a = c * chunk
                    b = a + chunk if a + chunk < n else n
                    if num == PT_FLOAT32:
                        ptc_sgd_range_f32(<float*>pp, <const float*>pg, <float*>pb, a, b, lr,
                                          momentum, one_m_damp, weight_decay, nest, maxi)
                    else:
                        ptc_sgd_range_f64(<double*>pp, <const double*>pg, <double*>pb, a, b, lr,
                                          momentum, one_m_damp, weight_decay, nest, maxi)
            elif num == PT_FLOAT32:
                ptc_sgd_range_f32(<float*>pp, <const float*>pg, <float*>pb, 0, n, lr, momentum,
                                  one_m_damp, weight_decay, nest, maxi)
            else:
                ptc_sgd_range_f64(<double*>pp, <const double*>pg, <double*>pb, 0, n, lr, momentum,
                                  one_m_damp, weight_decay, nest, maxi)
        finally:
            ptc_kernel_exit()
    ptc_bump_version(param)
    ptc_bump_version(buf)


# ---------------------------------------------------------------------------
# every parameter of a group in one call (a compiled optimizer step:
# ptcore._inductor.optim_step): the loops above, parameter after parameter,
# with the same arithmetic -- the results are those of the eager step's
# per-parameter calls bit for bit; what goes is the Python of each call
# ---------------------------------------------------------------------------

from ptcore._tensor import strided as _STRIDED


def one_pass_operands(_TensorBase param not None, tuple others):
    """The tensor tests of ``optimizer._one_pass_ok``: ``param`` a strided
    contiguous float32/float64 tensor, and each of ``others`` that is not
    None one of its dtype, shape and device, strided and contiguous."""
    cdef int num = param._dtype.num, d
    cdef _TensorBase t
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or not param._is_contig() \
            or param.layout is not _STRIDED:
        return False
    for o in others:
        if o is None:
            continue
        if not isinstance(o, _TensorBase):
            return False
        t = <_TensorBase>o
        if t._dtype is not param._dtype or t._ndim != param._ndim or not t._is_contig() \
                or t._storage.device != param._storage.device or t.layout is not _STRIDED:
            return False
        for d in range(param._ndim):
            if t._shape[d] != param._shape[d]:
                return False
    return True


cdef bint _dense_cpu(_TensorBase t, _TensorBase p):
    """``t`` a contiguous strided CPU tensor of ``p``'s dtype and shape."""
    cdef int d
    if t._dtype is not p._dtype or t._ndim != p._ndim or not t._is_contig():
        return False
    for d in range(p._ndim):
        if t._shape[d] != p._shape[d]:
            return False
    return in_host_memory(t) and t.layout is _STRIDED


cdef bint _many_ok(_TensorBase p, _TensorBase g, _TensorBase a, _TensorBase b,
                   _TensorBase c):
    """Whether the one-pass loop applies (the tests of optimizer._one_pass_ok
    that depend on the tensors, the device among them)."""
    cdef int num = p._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return False
    if not _dense_cpu(p, p) or not _dense_cpu(g, p) or not _dense_cpu(a, p):
        return False
    return (b is None or _dense_cpu(b, p)) and (c is None or _dense_cpu(c, p))


def sgd_many_ok(list params, list grads, list bufs):
    """Whether :func:`sgd_step_many` takes every (param, grad, buffer) with a
    gradient (a parameter whose gradient is None is skipped, as the eager
    step skips it; its buffer must exist)."""
    cdef Py_ssize_t i
    for i in range(len(params)):
        g = grads[i]
        if g is None:
            continue
        if bufs[i] is None or not _many_ok(params[i], g, bufs[i], None, None):
            return False
    return True


def sgd_step_many(list params, list grads, list bufs, double lr, double momentum,
                  double dampening, double weight_decay, bint nesterov, bint maximize):
    """:func:`sgd_step` of each parameter whose gradient is not None (checked
    by :func:`sgd_many_ok` first)."""
    cdef Py_ssize_t i
    for i in range(len(params)):
        g = grads[i]
        if g is not None:
            sgd_step(params[i], g, bufs[i], lr, momentum, dampening, weight_decay, nesterov,
                     maximize)


cdef bint _step_ok(_TensorBase s):
    cdef int num = s._dtype.num
    return s._numel == 1 and in_host_memory(s) and (num == PT_FLOAT32 or num == PT_FLOAT64) \
        and not s.requires_grad


def adam_many_ok(list params, list grads, list exp_avgs, list exp_avg_sqs, list max_sqs,
                 list steps):
    """Whether :func:`adam_step_many` takes every parameter with a gradient
    (its state: CPU float ``step`` tensors, ``max_sqs`` None without amsgrad)."""
    cdef Py_ssize_t i
    for i in range(len(params)):
        g = grads[i]
        if g is None:
            continue
        if exp_avgs[i] is None or exp_avg_sqs[i] is None or steps[i] is None:
            return False
        if not _step_ok(steps[i]):
            return False
        if not _many_ok(params[i], g, exp_avgs[i], exp_avg_sqs[i],
                        None if max_sqs is None else max_sqs[i]):
            return False
    return True


cdef double _bump_step(_TensorBase s):
    """``s += 1; s.item()`` of a one-element CPU float tensor, in its precision."""
    cdef char* p = s._ptr()
    cdef float f
    cdef double d
    if s._dtype.num == PT_FLOAT32:
        f = (<float*>p)[0] + <float>1
        (<float*>p)[0] = f
        d = f
    else:
        d = (<double*>p)[0] + 1.0
        (<double*>p)[0] = d
    ptc_bump_version(s)
    return d


def adam_step_many(list params, list grads, list exp_avgs, list exp_avg_sqs, list max_sqs,
                   list steps, double lr, double beta1, double beta2, double eps,
                   double weight_decay, bint maximize, bint decoupled):
    """The eager Adam step of each parameter whose gradient is not None
    (checked by :func:`adam_many_ok` first): its ``step`` tensor bumped, the
    bias corrections ``1 - beta ** step`` (libm's pow, as Python's ``**``),
    then :func:`adam_step`."""
    cdef Py_ssize_t i
    cdef double step
    for i in range(len(params)):
        g = grads[i]
        if g is None:
            continue
        step = _bump_step(steps[i])
        adam_step(params[i], g, exp_avgs[i], exp_avg_sqs[i],
                  None if max_sqs is None else max_sqs[i], lr, beta1, beta2, eps,
                  weight_decay, 1 - pow(beta1, step), 1 - pow(beta2, step), maximize, decoupled)
