# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CPU kernels of ``F.ctc_loss``: the alpha recursion with the negative log
likelihood, and the beta recursion with the gradient with respect to the
log-probabilities, in log space, as ATen's ``ctc_loss_cpu_template`` and
``ctc_loss_backward_cpu_template`` compute them (the same operations in the
same order).

Batch elements are independent: each is computed by one thread, so the
bits do not depend on the thread count.
"""
from cython.parallel cimport prange
from libc.math cimport exp, expf, log, logf, INFINITY
from libc.stdint cimport int64_t
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind

from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64, PT_INT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
from ptcore._tensor cimport _TensorBase
scratch_bind()      # this module's scratch requests obey _fault's test switch

ctypedef fused real:
    float
    double


cdef struct _Problem:
    Py_ssize_t T, N, C, S2           # S2 = 2 * max target length + 1
    const int64_t* tg                # targets
    const Py_ssize_t* tg_off         # start of target n in tg
    const Py_ssize_t* il             # input lengths
    const Py_ssize_t* tl             # target lengths
    int64_t blank


cdef inline real _exp_diff(real x, real m) noexcept nogil:
    """exp(x - m) for m the max of the terms (not NaN): the exact values
    exp(-inf) = 0 and exp(0) = 1 without the call (the terms of a
    log-sum-exp are mostly one of these)."""
    if x == -INFINITY:
        return 0
    if x == m and m - m == 0:
        return 1
    if real is float:
        return expf(x - m)
    else:
        return exp(x - m)


cdef inline real _lse3(real a, real b, real c) noexcept nogil:
    """log(exp(a) + exp(b) + exp(c)) about the max of the three (0 when all
    are -inf), as ATen's loops."""
    cdef real m = a
    if b > m:
        m = b
    if c > m:
        m = c
    if m == -INFINITY:
        m = 0
    if m != m:                  # a NaN (only a can make m one): no shortcuts
        if real is float:
            return logf(expf(a - m) + expf(b - m) + expf(c - m)) + m
        else:
            return log(exp(a - m) + exp(b - m) + exp(c - m)) + m
    if real is float:
        return logf(_exp_diff(a, m) + _exp_diff(b, m) + _exp_diff(c, m)) + m
    else:
        return log(_exp_diff(a, m) + _exp_diff(b, m) + _exp_diff(c, m)) + m


cdef void _alpha(const _Problem* P, Py_ssize_t n, const real* lp, real* la, real* nll) noexcept nogil:
    """log_alpha (T, S2) of element n and its negative log likelihood."""
    cdef Py_ssize_t T = P.il[n], L = P.tl[n], S = 2 * L + 1, NC = P.N * P.C, S2 = P.S2, t, s
    cdef const int64_t* tgn = P.tg + P.tg_off[n]
    cdef int64_t blank = P.blank, cur
    cdef real la1, la2, la3, l1, l2, m
    cdef const real* lpn = lp + n * P.C
    cdef const real* prev
    cdef real* row
    for s in range(S2):
        la[s] = -INFINITY
    if T == 0:
        nll[n] = 0 if L == 0 else INFINITY
        return
    la[0] = lpn[blank]
    if L > 0:
        la[1] = lpn[tgn[0]]
    for t in range(1, T):
        prev = la + (t - 1) * S2
        row = la + t * S2
        for s in range(S):
            cur = tgn[s >> 1] if s & 1 else blank
            la1 = prev[s]
            la2 = prev[s - 1] if s > 0 else -INFINITY
            # (s odd and s > 1: the label two back is a label, not a blank)
            la3 = prev[s - 2] if (s & 1) and s > 1 and tgn[(s >> 1) - 1] != cur else -INFINITY
            row[s] = _lse3(la1, la2, la3) + lpn[t * NC + cur]
    if L == 0:
        nll[n] = -la[(T - 1) * S2]
    else:
        l1 = la[(T - 1) * S2 + 2 * L]
        l2 = la[(T - 1) * S2 + 2 * L - 1]
        m = l1 if l1 > l2 else l2
        if m == -INFINITY:
            m = 0
        if real is float:
            nll[n] = -(logf(expf(l1 - m) + expf(l2 - m)) + m)
        else:
            nll[n] = -(log(exp(l1 - m) + exp(l2 - m)) + m)


cdef void _grad(const _Problem* P, Py_ssize_t n, const real* lp, const real* la, real* lb,
                real nll, real gr, bint zero_infinity, real* grad) noexcept nogil:
    """d loss_n / d log_probs[:, n, :] * gr into grad (T, N, C), with the
    element's log_beta (T, S2) in lb (scratch)."""
    cdef Py_ssize_t T = P.il[n], L = P.tl[n], NC = P.N * P.C, C = P.C, S2 = P.S2, t, s, c
    cdef const int64_t* tgn = P.tg + P.tg_off[n]
    cdef int64_t blank = P.blank, cur
    cdef real lb1, lb2, lb3, lab, res, mx, lpv
    cdef const real* lpn = lp + n * C
    cdef real* gn = grad + n * C
    cdef real* g
    cdef const real* nxt
    if zero_infinity and nll == INFINITY:
        for t in range(P.T):
            for c in range(C):
                gn[t * NC + c] = 0
        return
    for t in range(T):
        for c in range(C):
            gn[t * NC + c] = -INFINITY
    if T > 0:
        for s in range(S2):
            lb[(T - 1) * S2 + s] = -INFINITY
        lb[(T - 1) * S2 + 2 * L] = lpn[(T - 1) * NC + blank]
        gn[(T - 1) * NC + blank] = la[(T - 1) * S2 + 2 * L] + lb[(T - 1) * S2 + 2 * L]
        if L > 0:
            cur = tgn[L - 1]
            lb[(T - 1) * S2 + 2 * L - 1] = lpn[(T - 1) * NC + cur]
            gn[(T - 1) * NC + cur] = la[(T - 1) * S2 + 2 * L - 1] + lb[(T - 1) * S2 + 2 * L - 1]
    for t in range(T - 2, -1, -1):
        nxt = lb + (t + 1) * S2
        g = gn + t * NC
        for s in range(2 * L, -1, -1):
            cur = tgn[s >> 1] if s & 1 else blank
            lb1 = nxt[s]
            lb2 = nxt[s + 1] if s < 2 * L else -INFINITY
            lb3 = nxt[s + 2] if (s & 1) and s < 2 * L - 1 and tgn[(s >> 1) + 1] != cur \
                else -INFINITY
            lb[t * S2 + s] = _lse3(lb1, lb2, lb3) + lpn[t * NC + cur]
            lab = la[t * S2 + s] + lb[t * S2 + s]
            res = g[cur]
            if res == -INFINITY:
                g[cur] = lab
            else:
                mx = res if res > lab else lab
                if mx != mx:
                    g[cur] = mx
                elif real is float:
                    g[cur] = logf(_exp_diff(res, mx) + _exp_diff(lab, mx)) + mx
                else:
                    g[cur] = log(_exp_diff(res, mx) + _exp_diff(lab, mx)) + mx
    for t in range(T):
        g = gn + t * NC
        for c in range(C):
            lpv = lpn[t * NC + c]
            res = g[c]
            # a label the target does not use (res = -inf): exp(-inf) = 0 exactly
            # unless nll or lpv make the sum NaN
            if res == -INFINITY and nll - nll == 0 and lpv - lpv == 0:
                if real is float:
                    g[c] = (expf(lpv) - 0) * gr
                else:
                    g[c] = (exp(lpv) - 0) * gr
            elif real is float:
                g[c] = (expf(lpv) - expf(res + nll - lpv)) * gr
            else:
                g[c] = (exp(lpv) - exp(res + nll - lpv)) * gr
    for t in range(T, P.T):
        for c in range(C):
            gn[t * NC + c] = 0


cdef void _alpha_all(const _Problem* P, const real* lp, real* la, real* nll, int nt) noexcept nogil:
    cdef Py_ssize_t n
    for n in prange(P.N, num_threads=nt, schedule="static"):
        _alpha(P, n, lp, la + n * P.T * P.S2, nll)


cdef void _grad_all(const _Problem* P, const real* lp, const real* la, real* lb, const real* nll,
                    const real* gout, bint zero_infinity, real* grad, int nt) noexcept nogil:
    cdef Py_ssize_t n, per = P.T * P.S2
    for n in prange(P.N, num_threads=nt, schedule="static"):
        _grad(P, n, lp, la + n * per, lb + n * per, nll[n], gout[n], zero_infinity, grad)


cdef int _setup(_Problem* P, _TensorBase lp, _TensorBase tg, list il, list tl, int64_t blank,
                Py_ssize_t** lens) except -1:
    """Fill P (lens: one block of tg_off, il, tl to free) after the checks."""
    cdef int num = lp._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or lp._ndim != 3 or not lp._is_contig() \
            or lp._storage.device._type_code != 0:
        raise ValueError(f"ctc_loss: contiguous float32/float64 CPU (T, N, C) log_probs "
                         f"expected, got {lp._dtype} {tuple(lp.shape)}")
    if tg._dtype.num != PT_INT64 or not tg._is_contig() or tg._ndim > 2 \
            or tg._storage.device._type_code != 0:
        raise ValueError(f"ctc_loss: contiguous int64 CPU targets expected, got {tg._dtype} "
                         f"{tuple(tg.shape)}")
    P.T, P.N, P.C = lp._shape[0], lp._shape[1], lp._shape[2]
    if len(il) != P.N or len(tl) != P.N:
        raise ValueError(f"ctc_loss: {P.N} input and target lengths expected")
    cdef Py_ssize_t* blk = <Py_ssize_t*>ptc_scratch_malloc((3 * P.N + 1) * sizeof(Py_ssize_t))
    if blk == NULL:
        raise MemoryError("ctc_loss: no memory for the lengths")
    lens[0] = blk
    cdef Py_ssize_t n, j, pos = 0, mx = 0, stride
    cdef int64_t v, lo, hi
    cdef bint padded = tg._ndim == 2
    stride = tg._shape[1] if padded else 0
    for n in range(P.N):
        blk[P.N + n] = il[n]
        blk[2 * P.N + n] = tl[n]
        if blk[P.N + n] < 0 or blk[P.N + n] > P.T or blk[2 * P.N + n] < 0:
            raise ValueError(f"ctc_loss: lengths {il[n]}, {tl[n]} out of range")
        blk[n] = n * stride if padded else pos
        pos += blk[2 * P.N + n]
        mx = blk[2 * P.N + n] if blk[2 * P.N + n] > mx else mx
        if (padded and (tg._shape[0] != P.N or blk[2 * P.N + n] > stride)) or \
                (not padded and pos > tg._shape[0]):
            raise ValueError(f"ctc_loss: targets {tuple(tg.shape)} too short for the lengths")
    P.tg = <const int64_t*>tg._ptr()
    P.tg_off = blk
    P.il = blk + P.N
    P.tl = blk + 2 * P.N
    P.S2 = 2 * mx + 1
    P.blank = blank
    if blank < 0 or blank >= P.C:
        raise ValueError(f"ctc_loss: blank {blank} outside [0, {P.C})")
    # every label used must index a class
    lo, hi, pos = 0, 0, 0
    for n in range(P.N):
        for j in range(P.tl[n]):
            v = P.tg[P.tg_off[n] + j]
            if pos == 0 or v < lo:
                lo = v
            if pos == 0 or v > hi:
                hi = v
            pos += 1
    if pos and (lo < 0 or hi >= P.C):
        raise RuntimeError(f"ctc_loss(): target labels must be in [0, {P.C}), got values in "
                           f"[{lo}, {hi}]")
    return 0


cdef inline int _threads(Py_ssize_t N, Py_ssize_t work) noexcept nogil:
    cdef int nt = get_num_threads()
    if nt <= 1 or N < 2 or work < 4 * parallel_grain():
        return 1
    return nt if nt < N else <int>N


def ctc_forward(_TensorBase lp not None, _TensorBase tg not None, list il not None,
                list tl not None, int64_t blank, _TensorBase nll not None,
                _TensorBase la not None):
    """Fill ``nll`` (N,) and ``la`` (N, T, 2 * max(tl) + 1), both of
    ``lp``'s dtype and contiguous, for log_probs ``lp`` (T, N, C) and the
    int64 targets ``tg``: (N, S) padded or 1-D concatenated."""
    cdef _Problem P
    cdef Py_ssize_t* lens = NULL
    cdef Py_ssize_t n
    cdef int nt
    cdef char* lpp
    cdef char* lap
    cdef char* nlp
    try:
        _setup(&P, lp, tg, il, tl, blank, &lens)
        if nll._dtype is not lp._dtype or la._dtype is not lp._dtype or not nll._is_contig() \
                or not la._is_contig() or nll._numel != P.N or la._numel != P.N * P.T * P.S2:
            raise ValueError("ctc_loss: nll / log_alpha buffers do not fit")
        nt = _threads(P.N, P.T * P.S2 * P.N * 8)
        lpp, lap, nlp = lp._ptr(), la._ptr(), nll._ptr()
        if lp._dtype.num == PT_FLOAT32:
            _alpha_all(&P, <const float*>lpp, <float*>lap, <float*>nlp, nt)
        else:
            _alpha_all(&P, <const double*>lpp, <double*>lap, <double*>nlp, nt)
    finally:
        free(lens)


def ctc_backward(_TensorBase lp not None, _TensorBase tg not None, list il not None,
                 list tl not None, int64_t blank, _TensorBase nll not None,
                 _TensorBase la not None, _TensorBase gout not None, bint zero_infinity,
                 _TensorBase grad not None):
    """Fill ``grad`` (T, N, C) with d (sum_n gout[n] * nll[n]) / d log_probs,
    torch's ctc_loss_backward, from :func:`ctc_forward`'s ``nll`` and ``la``."""
    cdef _Problem P
    cdef Py_ssize_t* lens = NULL
    cdef Py_ssize_t n
    cdef int nt
    cdef char* scratch = NULL
    cdef Py_ssize_t per
    cdef char* lpp
    cdef char* lap
    cdef char* nlp
    cdef char* gop
    cdef char* grp
    try:
        _setup(&P, lp, tg, il, tl, blank, &lens)
        if grad._dtype is not lp._dtype or gout._dtype is not lp._dtype \
                or not grad._is_contig() or not gout._is_contig() or grad._numel != lp._numel \
                or gout._numel != P.N or nll._numel != P.N or la._numel != P.N * P.T * P.S2:
            raise ValueError("ctc_loss: gradient buffers do not fit")
        per = P.T * P.S2
        scratch = <char*>ptc_scratch_malloc((P.N * per if P.N * per > 0 else 1) * lp._dtype.itemsize)
        if scratch == NULL:
            raise MemoryError("ctc_loss: no memory for log_beta")
        nt = _threads(P.N, P.T * (P.S2 + P.C) * P.N * 8)
        lpp, lap, nlp, gop, grp = lp._ptr(), la._ptr(), nll._ptr(), gout._ptr(), grad._ptr()
        if lp._dtype.num == PT_FLOAT32:
            _grad_all(&P, <const float*>lpp, <const float*>lap, <float*>scratch,
                      <const float*>nlp, <const float*>gop, zero_infinity, <float*>grp, nt)
        else:
            _grad_all(&P, <const double*>lpp, <const double*>lap, <double*>scratch,
                      <const double*>nlp, <const double*>gop, zero_infinity, <double*>grp, nt)
    finally:
        free(lens)
        free(scratch)
