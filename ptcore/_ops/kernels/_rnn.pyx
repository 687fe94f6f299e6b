# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""Recurrent-layer kernels: the whole time loop of one layer and direction of
an Elman RNN (tanh/relu), LSTM or GRU, forward and backward, on contiguous
float32/float64 tensors.

The input projection of every time step (``gi = x W_ih^T + b_ih``, shape
``(T, B, G*H)``) is computed beforehand by one GEMM; each step here adds
``b_hh`` and one BLAS ``gemm`` for the recurrent product of all gates,
then one fused loop of the gate math (vectorised sigmoid/tanh for float32,
the eager kernels' functions).  Gate order as PyTorch: LSTM ``i, f, g, o``,
GRU ``r, z, n``.  The backward walks the steps in reverse, writes the
pre-activation gradients of every step (``dG``: the gradient of ``gi``), one
``gemm`` per step for the hidden-state gradient, then the weight gradient
``dW_hh = sum_t dG_t^T h_{t-1}`` as two GEMMs over all steps.

``reverse`` runs the sequence from the last step to the first (the backward
direction of a bidirectional layer).  Outputs ``out[t]`` are the hidden
states; the step before the first is ``h0``.

float32 LSTM (forward and backward) and GRU (backward) sequences of at least
PACKED_MIN_STEPS steps, on CPUs with AVX2 and FMA, take the packed path
instead (ptc_rnn_packed.h): ``W_hh`` is packed once per call into register
tile panels, each step's product runs in those tiles (the LSTM gate math
fused into the forward tile, while its results are in registers), the weight
gradients ``dG^T h`` by a packed ``A^T B`` kernel; threads share a call by
batch rows.  Everything else (float64, short sequences and cells, other CPUs)
uses BLAS as described above.
"""
from libc.string cimport memcpy, memset
from libc.math cimport exp, tanh

from cython.parallel cimport prange
from scipy.linalg.cython_blas cimport sgemm, dgemm

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase
from ptcore._ops.kernels._host cimport in_host_memory, require_host
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
scratch_bind()      # this module's scratch requests obey _fault's test switch

cdef extern from "ptc_math.h" nogil:
    void ptc_tanh_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_sigmoid_f32(float* o, const float* a, Py_ssize_t n)

# the float32 gate gradients of the LSTM backward, vectorised (same bits)
cdef extern from "ptc_rnn_gates.h" nogil:
    int ptc_rnn_gates_max
    void ptc_lstm_bwd_gates_f32(const float* row, float* drow, const float* tanh_c,
                                const float* dh, const float* dout, float* dc, const float* cp,
                                Py_ssize_t H)



def _set_gate_level(int level):
    """Testing knob: the highest vector level of the LSTM backward's gate
    kernel (2: AVX-512F, 1: AVX2, 0: 8-float generic vectors); returns the
    previous setting."""
    global ptc_rnn_gates_max
    if level < 0 or level > 2:
        raise ValueError("level must be 0, 1 or 2")
    old = ptc_rnn_gates_max
    ptc_rnn_gates_max = level
    return old


cdef extern from "ptc_rnn_packed.h" nogil:
    void ptc_rnn_pack_fwd_lanes_f32(const float* W, Py_ssize_t NG, Py_ssize_t H, Py_ssize_t L,
                                    float* P)
    int ptc_lstm_fwd_lanes()
    void ptc_lstm_step_lanes(int L, Py_ssize_t q0, Py_ssize_t q1, Py_ssize_t B, Py_ssize_t H,
                             const float* P, const float* hp, const float* gi, const float* bhh,
                             const float* cp, float* gates, float* c, float* h)
    void ptc_rnn_pack_bwd_lanes_f32(const float* W, Py_ssize_t N, Py_ssize_t H, Py_ssize_t L,
                                    float* Q)
    int ptc_rnn_bwd_lanes()
    void ptc_rnn_bwd_step_lanes(int L, Py_ssize_t p0, Py_ssize_t p1, Py_ssize_t B, Py_ssize_t N,
                                Py_ssize_t H, const float* Q, const float* dG, float* dh,
                                int accum)
    void ptc_sgemm_tn_rows(Py_ssize_t m0, Py_ssize_t m1, Py_ssize_t N, Py_ssize_t K,
                           const float* A, Py_ssize_t lda, const float* B, Py_ssize_t ldb,
                           float* C, Py_ssize_t ldc, int accum, float* Ap, float* Bp)
    int ptc_rnn_packed_ok()
    int ptc_rnn_tn_ok()
    enum: PTC_TN_KC

ctypedef int blas_int

cdef enum:
    CH_N = 78       # 'N'
    CH_T = 84       # 'T'

ctypedef fused flt:
    float
    double


# the recurrent and weight-gradient GEMMs, tiled as _blas's
include "_gemm_real.pxi"


cdef inline void _rgemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, flt alpha,
                       const flt* a, Py_ssize_t lda, const flt* b, Py_ssize_t ldb, flt beta,
                       flt* c, Py_ssize_t ldc) noexcept nogil:
    """Column-major ``C = alpha op(A) op(B) + beta C`` (one BLAS call)."""
    cdef blas_int m_ = <blas_int>m, n_ = <blas_int>n, k_ = <blas_int>k
    cdef blas_int lda_ = <blas_int>lda, ldb_ = <blas_int>ldb, ldc_ = <blas_int>ldc
    cdef Py_ssize_t i
    if m == 0 or n == 0:
        return
    if k == 0:
        # BLAS would scale C by beta; keep C (beta 1) or clear it (beta 0)
        if beta == 0:
            for i in range(n):
                memset(c + i * ldc, 0, m * sizeof(flt))
        return
    _gemm(ta, tb, m_, n_, k_, alpha, <flt*>a, lda_, <flt*>b, ldb_, beta, c, ldc_)


cdef enum:
    STEP_TILE_WORK = 2097152        # step products from this many multiply-adds on are split
    STEP_TILE_MIN = 256             # rows per step tile, at least


cdef inline void _step_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                            flt alpha, const flt* a, Py_ssize_t lda, const flt* b,
                            Py_ssize_t ldb, flt beta, flt* c, Py_ssize_t ldc) noexcept nogil:
    """One time step's recurrent product (``a`` the weight, ``m`` gates or
    hidden units, ``n`` the batch): its output columns are too few to share,
    so large ones are split into row tiles whose shape depends on the sizes
    only (results do not change with the thread count); each tile re-packs
    only the small (k x batch) operand."""
    cdef Py_ssize_t nt = 0, width, t, i0, mm
    cdef int nth
    if k > 0 and m * n * k >= STEP_TILE_WORK:
        nt = m // STEP_TILE_MIN
        if nt > 4:
            nt = 4
    if nt < 2:
        _rgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    width = ((m + nt - 1) // nt + 15) // 16 * 16
    nt = (m + width - 1) // width
    nth = get_num_threads()
    if nth > nt:
        nth = <int>nt
    for t in prange(nt, num_threads=nth, schedule='static'):
        i0 = t * width
        mm = m - i0 if m - i0 < width else width
        _rgemm(ta, tb, mm, n, k, alpha, a + (i0 if ta == CH_N else i0 * lda), lda, b, ldb,
               beta, c + i0, ldc)


# ---------------------------------------------------------------------------
# packed-weight float32 kernels (ptc_rnn_packed.h): W_hh packed once per call,
# each step's product in AVX2+FMA register tiles.  Threads share a call by
# batch rows: the rows' recurrences are independent, so each thread runs the
# whole time loop for its rows (one parallel region per call, no barrier per
# step, which would stall whenever a thread is descheduled).  Every element is
# one FMA chain over k in order, whatever tile or thread computes it: results
# do not depend on the thread count.
# ---------------------------------------------------------------------------

cdef enum:
    PACKED_MIN_STEPS = 4            # shorter sequences (cells): BLAS, packing would not pay
    PACKED_PAR_WORK = 524288        # multiply-adds from which threads share a product
    PACKED_SEQ_PAR_WORK = 4194304   # multiply-adds per call from which threads share the rows
    PACKED_ROW_TILE = 3             # threads' row ranges start at multiples of this (2 with
                                    # the AVX-512F tiles: balanced rows beat whole 3-row tiles)

cdef int _packed_on = 1             # 0: always the BLAS path (tests compare the two)
cdef int _row_tile = 0              # threads' row-range granularity (0: by the lane width)


def _set_row_tile(int rows):
    """Tuning knob: threads' batch-row ranges start at multiples of ``rows``
    (0: 2 with the AVX-512F tiles, else PACKED_ROW_TILE).  Returns the
    previous setting."""
    global _row_tile
    cdef int prev = _row_tile
    _row_tile = rows
    return prev


def _set_packed(bint on):
    """Turn the packed float32 kernels on or off (for tests); returns the previous setting."""
    global _packed_on
    cdef bint prev = _packed_on
    _packed_on = on
    return prev


def _packed_available():
    """Whether this CPU runs the packed float32 kernels (AVX2 and FMA) and they are on."""
    return bool(_packed_on and ptc_rnn_packed_ok())


def _packed_weight_grad_available():
    """Whether the packed weight-gradient kernel runs here (``weight_grad``):
    the packed kernels on, AVX2 and FMA, no AVX-512 (BLAS is used there)."""
    return bool(_packed_on and ptc_rnn_tn_ok())


cdef inline bint _use_packed(Py_ssize_t T, Py_ssize_t H) noexcept nogil:
    return _packed_on != 0 and T >= PACKED_MIN_STEPS and H > 0 and ptc_rnn_packed_ok() != 0


cdef inline Py_ssize_t _rtile() noexcept nogil:
    if _row_tile > 0:
        return _row_tile
    return 2 if ptc_lstm_fwd_lanes() == 16 else PACKED_ROW_TILE


cdef inline int _row_threads(Py_ssize_t work, Py_ssize_t B) noexcept nogil:
    """Threads sharing a call's ``B`` batch rows: 1 below PACKED_SEQ_PAR_WORK
    multiply-adds, else at most one per two row tiles."""
    cdef int nth
    if work < PACKED_SEQ_PAR_WORK:
        return 1
    nth = get_num_threads()
    cdef Py_ssize_t rt = _rtile()
    if nth > (B + rt - 1) // rt // 2:
        nth = <int>((B + rt - 1) // rt // 2)
    return nth if nth > 1 else 1


cdef inline Py_ssize_t _row_start(int i, int nth, Py_ssize_t B) noexcept nogil:
    """First batch row of thread ``i`` of ``nth``."""
    cdef Py_ssize_t rt = _rtile()
    cdef Py_ssize_t r = ((B + rt - 1) // rt * i // nth) * rt
    return r if r < B else B


cdef float* _pack_bwd(const float* w, Py_ssize_t N, Py_ssize_t H, int L) noexcept nogil:
    """W (N, H) packed for ``dh = dG @ W`` in ``L``-column panels (NULL: no
    memory, use BLAS)."""
    cdef float* Q = <float*>ptc_scratch_malloc(((H + L - 1) // L) * N * L * sizeof(float))
    if Q != NULL:
        ptc_rnn_pack_bwd_lanes_f32(w, N, H, L, Q)
    return Q


cdef inline Py_ssize_t _tn_row(int i, int nth, Py_ssize_t M) noexcept nogil:
    """First row of thread ``i``'s share of M rows (blocks of 6)."""
    cdef Py_ssize_t r = ((M + 5) // 6 * i // nth) * 6
    return r if r < M else M


cdef float* _tn_alloc(Py_ssize_t M, Py_ssize_t N, Py_ssize_t work, int* nth,
                      Py_ssize_t* per) noexcept nogil:
    """Scratch of ``ptc_sgemm_tn_rows`` for each thread sharing a product of
    ``work`` multiply-adds (sets ``nth``, ``per``: floats per thread)."""
    nth[0] = 1
    if work >= 8 * PACKED_PAR_WORK:
        nth[0] = get_num_threads()
        if nth[0] > (M + 5) // 6:
            nth[0] = <int>((M + 5) // 6)
        if nth[0] < 1:
            nth[0] = 1
    per[0] = PTC_TN_KC * (6 + 16 * ((N + 15) // 16))
    return <float*>ptc_scratch_malloc(nth[0] * per[0] * sizeof(float))


cdef void _packed_tn(const float* A, const float* B, float* C, Py_ssize_t M, Py_ssize_t N,
                     Py_ssize_t K, int accum, float* buf, int nth, Py_ssize_t per) noexcept nogil:
    """``C (M, N) (+)= A^T B``, A (K, M) and B (K, N) contiguous, rows of C shared by threads."""
    cdef int i
    if nth > 1:
        for i in prange(nth, num_threads=nth, schedule='static'):
            ptc_sgemm_tn_rows(_tn_row(i, nth, M), _tn_row(i + 1, nth, M), N, K, A, M, B, N,
                              C, N, accum, buf + i * per, buf + i * per + PTC_TN_KC * 6)
    else:
        ptc_sgemm_tn_rows(0, M, N, K, A, M, B, N, C, N, accum, buf, buf + PTC_TN_KC * 6)


cdef bint _weight_grad_packed(const float* dG, const float* h0, const float* out, float* dW,
                              Py_ssize_t T, Py_ssize_t B, Py_ssize_t H, Py_ssize_t G,
                              bint reverse, int accum) noexcept nogil:
    """``dW (G, H) (+)= sum_t dG[t]^T hprev(t)`` by the packed kernel; False
    (nothing written) when its scratch could not be allocated."""
    cdef Py_ssize_t first = T - 1 if reverse else 0, per
    cdef int nth
    cdef float* buf = _tn_alloc(G, H, T * B * G * H, &nth, &per)
    if buf == NULL:
        return False
    _packed_tn(dG + first * B * G, h0, dW, G, H, B, accum, buf, nth, per)
    if T > 1:
        if reverse:      # steps 0 .. T-2 follow out[1 .. T-1]
            _packed_tn(dG, out + B * H, dW, G, H, (T - 1) * B, 1, buf, nth, per)
        else:            # steps 1 .. T-1 follow out[0 .. T-2]
            _packed_tn(dG + B * G, out, dW, G, H, (T - 1) * B, 1, buf, nth, per)
    free(buf)
    return True


def weight_grad(_TensorBase a, _TensorBase b, _TensorBase c):
    """``c (M, N) = a^T b`` for contiguous float32 ``a (K, M)``, ``b (K, N)``
    by the packed kernel (a layer's input-weight gradient ``dG^T x``); returns
    False, writing nothing, where that kernel does not run (other dtypes, no
    AVX2/FMA or an AVX-512 CPU, packed kernels off, no memory)."""
    cdef Py_ssize_t K, M, N, per
    cdef int nth
    cdef float* buf
    if not (_packed_on and ptc_rnn_tn_ok()):
        return False
    if a is None or b is None or c is None or a._ndim != 2 or b._ndim != 2 or c._ndim != 2:
        raise ValueError("weight_grad: expected 2-D tensors")
    K, M, N = a._shape[0], a._shape[1], b._shape[1]
    if b._shape[0] != K or c._shape[0] != M or c._shape[1] != N:
        raise ValueError(f"weight_grad: shapes {tuple(a.shape)}^T @ {tuple(b.shape)} -> "
                         f"{tuple(c.shape)} do not match")
    for t in (a, b, c):
        if t._dtype.num != PT_FLOAT32 or not t._is_contig() or not in_host_memory(t):
            return False
    if K == 0 or M == 0 or N == 0:
        return False
    cdef const float* pa = <float*>a._ptr()
    cdef const float* pb = <float*>b._ptr()
    cdef float* pc = <float*>c._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            buf = _tn_alloc(M, N, K * M * N, &nth, &per)
            if buf != NULL:
                _packed_tn(pa, pb, pc, M, N, K, 0, buf, nth, per)
                free(buf)
        finally:
            ptc_kernel_exit()
    return buf != NULL


cdef void _lstm_fwd_rows(Py_ssize_t b0, Py_ssize_t b1, int L, const float* P, const float* gi,
                         const float* h0, const float* c0, const float* bhh, float* gates,
                         float* out, float* cs, Py_ssize_t T, Py_ssize_t B, Py_ssize_t H,
                         bint reverse) noexcept nogil:
    """The LSTM time loop for batch rows [b0, b1) on ``L``-lane panels."""
    cdef Py_ssize_t nq = (H + L - 1) // L, s, t, tp, G = 4 * H, BH = B * H
    cdef const float* hp
    cdef const float* cp
    if b1 <= b0:
        return
    for s in range(T):
        t = _step_t(s, T, reverse)
        tp = _prev_t(t, reverse)
        hp = h0 if s == 0 else out + tp * BH
        cp = c0 if s == 0 else cs + tp * BH
        ptc_lstm_step_lanes(L, 0, nq, b1 - b0, H, P, hp + b0 * H, gi + t * B * G + b0 * G, bhh,
                            cp + b0 * H, gates + t * B * G + b0 * G, cs + t * BH + b0 * H,
                            out + t * BH + b0 * H)


cdef bint _lstm_fwd_packed(const float* gi, const float* h0, const float* c0, const float* w,
                           const float* bhh, float* gates, float* out, float* cs, Py_ssize_t T,
                           Py_ssize_t B, Py_ssize_t H, bint reverse) noexcept nogil:
    """The LSTM forward through the packed kernel (16-lane panels on AVX-512F,
    else 8), gate math fused; False when the packed buffer could not be
    allocated (nothing written)."""
    cdef int L = ptc_lstm_fwd_lanes()
    cdef Py_ssize_t nq = (H + L - 1) // L
    cdef int nth, i
    cdef float* P = <float*>ptc_scratch_malloc(nq * H * 4 * L * sizeof(float))
    if P == NULL:
        return False
    ptc_rnn_pack_fwd_lanes_f32(w, 4, H, L, P)
    nth = _row_threads(T * B * 4 * H * H, B)
    if nth > 1:
        for i in prange(nth, num_threads=nth, schedule='static'):
            _lstm_fwd_rows(_row_start(i, nth, B), _row_start(i + 1, nth, B), L, P, gi, h0, c0,
                           bhh, gates, out, cs, T, B, H, reverse)
    else:
        _lstm_fwd_rows(0, B, L, P, gi, h0, c0, bhh, gates, out, cs, T, B, H, reverse)
    free(P)
    return True


cdef void _lstm_bwd_rows(Py_ssize_t b0, Py_ssize_t b1, int L, const float* Q, const float* gates,
                         const float* cs, const float* c0, const float* dout, float* dh,
                         float* dc, float* dG, float* tmp, Py_ssize_t T, Py_ssize_t B,
                         Py_ssize_t H, bint reverse) noexcept nogil:
    """The LSTM backward time loop for batch rows [b0, b1) (``tmp``: H floats)."""
    cdef Py_ssize_t s, t, G = 4 * H, BH = B * H
    cdef const float* cp
    if b1 <= b0:
        return
    for s in range(T - 1, -1, -1):
        t = _step_t(s, T, reverse)
        cp = c0 if s == 0 else cs + _prev_t(t, reverse) * BH
        _lstm_bwd_gates(gates, cs, cp, dout + t * B * H, dh, dc, dG, tmp, t, b0, b1, B, H)
        ptc_rnn_bwd_step_lanes(L, 0, (H + L - 1) // L, b1 - b0, G, H, Q, dG + t * B * G + b0 * G,
                             dh + b0 * H, 0)


cdef bint _lstm_bwd_packed(const float* gates, const float* cs, const float* c0,
                           const float* w, const float* dout, float* dh, float* dc, float* dG,
                           Py_ssize_t T, Py_ssize_t B, Py_ssize_t H, bint reverse) noexcept nogil:
    """The LSTM backward's time loop through the packed kernel (dG, dh, dc);
    False when scratch could not be allocated (nothing written)."""
    cdef int nth = _row_threads(T * B * 4 * H * H, B), i
    cdef int L = ptc_rnn_bwd_lanes()
    cdef float* Q = _pack_bwd(w, 4 * H, H, L)
    cdef float* tmp = <float*>ptc_scratch_malloc(nth * H * sizeof(float))
    if Q == NULL or tmp == NULL:
        free(Q)
        free(tmp)
        return False
    if nth > 1:
        for i in prange(nth, num_threads=nth, schedule='static'):
            _lstm_bwd_rows(_row_start(i, nth, B), _row_start(i + 1, nth, B), L, Q, gates, cs, c0,
                           dout, dh, dc, dG, tmp + i * H, T, B, H, reverse)
    else:
        _lstm_bwd_rows(0, B, L, Q, gates, cs, c0, dout, dh, dc, dG, tmp, T, B, H, reverse)
    free(Q)
    free(tmp)
    return True


cdef void _gru_bwd_rows(Py_ssize_t b0, Py_ssize_t b1, int L, const float* Q, const float* saved,
                        const float* h0, const float* out, const float* dout, float* dh,
                        float* dGI, float* dGH, Py_ssize_t T, Py_ssize_t B, Py_ssize_t H,
                        bint reverse) noexcept nogil:
    """The GRU backward time loop for batch rows [b0, b1)."""
    cdef Py_ssize_t s, t, G = 3 * H, BH = B * H
    cdef const float* hp
    if b1 <= b0:
        return
    for s in range(T - 1, -1, -1):
        t = _step_t(s, T, reverse)
        hp = h0 if s == 0 else out + _prev_t(t, reverse) * BH
        _gru_bwd_gates(saved, hp, dout, dh, dGI, dGH, t, b0, b1, B, H)
        ptc_rnn_bwd_step_lanes(L, 0, (H + L - 1) // L, b1 - b0, G, H, Q, dGH + t * B * G + b0 * G,
                             dh + b0 * H, 1)


cdef bint _gru_bwd_packed(const float* saved, const float* h0, const float* out, const float* w,
                          const float* dout, float* dh, float* dGI, float* dGH, Py_ssize_t T,
                          Py_ssize_t B, Py_ssize_t H, bint reverse) noexcept nogil:
    """The GRU backward's time loop through the packed kernel; False when
    scratch could not be allocated (nothing written)."""
    cdef int nth = _row_threads(T * B * 3 * H * H, B), i
    cdef int L = ptc_rnn_bwd_lanes()
    cdef float* Q = _pack_bwd(w, 3 * H, H, L)
    if Q == NULL:
        return False
    if nth > 1:
        for i in prange(nth, num_threads=nth, schedule='static'):
            _gru_bwd_rows(_row_start(i, nth, B), _row_start(i + 1, nth, B), L, Q, saved, h0, out,
                          dout, dh, dGI, dGH, T, B, H, reverse)
    else:
        _gru_bwd_rows(0, B, L, Q, saved, h0, out, dout, dh, dGI, dGH, T, B, H, reverse)
    free(Q)
    return True


cdef inline void _sigmoid(flt* o, const flt* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    if flt is float:
        ptc_sigmoid_f32(o, a, n)
    else:
        for i in range(n):
            o[i] = 1.0 / (1.0 + exp(-a[i]))


cdef inline void _tanh(flt* o, const flt* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    if flt is float:
        ptc_tanh_f32(o, a, n)
    else:
        for i in range(n):
            o[i] = tanh(a[i])


cdef inline Py_ssize_t _step_t(Py_ssize_t s, Py_ssize_t T, bint reverse) noexcept nogil:
    return T - 1 - s if reverse else s


cdef inline Py_ssize_t _prev_t(Py_ssize_t t, bint reverse) noexcept nogil:
    return t + 1 if reverse else t - 1


cdef void _weight_grad(const flt* dG, const flt* h0, const flt* out, flt* dW, Py_ssize_t T,
                       Py_ssize_t B, Py_ssize_t H, Py_ssize_t G, bint reverse,
                       flt beta) noexcept nogil:
    """``dW (G, H) (+)= sum_t dG[t]^T (B, G)^T @ hprev(t) (B, H)``."""
    if flt is float:
        if _use_packed(T, H) and ptc_rnn_tn_ok() and _weight_grad_packed(
                dG, h0, out, dW, T, B, H, G, reverse, beta != 0):
            return
    # column-major: dW^T (H, G) = hprev^T (H, N) @ dG (N, G)
    cdef Py_ssize_t first = T - 1 if reverse else 0
    _rgemm(CH_N, CH_T, H, G, B, <flt>1, h0, H, dG + first * B * G, G, beta, dW, H)
    if T > 1:
        if reverse:      # steps 0 .. T-2 follow out[1 .. T-1]
            _rgemm(CH_N, CH_T, H, G, (T - 1) * B, <flt>1, out + B * H, H, dG, G, <flt>1, dW, H)
        else:            # steps 1 .. T-1 follow out[0 .. T-2]
            _rgemm(CH_N, CH_T, H, G, (T - 1) * B, <flt>1, out, H, dG + B * G, G, <flt>1, dW, H)


cdef inline void _add_rows(flt* g, const flt* bias, Py_ssize_t B, Py_ssize_t G) noexcept nogil:
    cdef Py_ssize_t b, j
    if bias == NULL:
        return
    for b in range(B):
        for j in range(G):
            g[b * G + j] += bias[j]


cdef inline void _col_sums(const flt* dG, flt* db, Py_ssize_t N, Py_ssize_t G,
                           bint acc) noexcept nogil:
    """``db (G) (+)= `` the column sums of ``dG (N, G)`` (``acc``: added to db)."""
    cdef Py_ssize_t k, j
    if db == NULL:
        return
    if not acc:
        memset(db, 0, G * sizeof(flt))
    for k in range(N):
        for j in range(G):
            db[j] += dG[k * G + j]


# ---------------------------------------------------------------------------
# Elman RNN
# ---------------------------------------------------------------------------

cdef void _rnn_fwd(const flt* gi, const flt* h0, const flt* w, const flt* bhh, flt* out,
                   Py_ssize_t T,
                   Py_ssize_t B, Py_ssize_t H, bint reverse, bint relu) noexcept nogil:
    cdef Py_ssize_t s, t, i, BH = B * H
    cdef const flt* hp
    cdef flt* o
    cdef flt v
    for s in range(T):
        t = _step_t(s, T, reverse)
        hp = h0 if s == 0 else out + _prev_t(t, reverse) * BH
        o = out + t * BH
        memcpy(o, gi + t * BH, BH * sizeof(flt))
        _add_rows(o, bhh, B, H)
        _step_gemm(CH_T, CH_N, H, B, H, <flt>1, w, H, hp, H, <flt>1, o, H)
        if relu:
            for i in range(BH):
                v = o[i]
                o[i] = 0 if v < 0 else v
        else:
            _tanh(o, o, BH)


cdef void _rnn_bwd(const flt* h0, const flt* out, const flt* w, const flt* dout, flt* dh,
                   flt* dG, flt* dW, flt* db, Py_ssize_t T, Py_ssize_t B, Py_ssize_t H, bint reverse,
                   bint relu, bint acc) noexcept nogil:
    cdef Py_ssize_t s, t, i, BH = B * H
    cdef const flt* o
    cdef const flt* do
    cdef flt* dg
    cdef flt d, y
    for s in range(T - 1, -1, -1):
        t = _step_t(s, T, reverse)
        o = out + t * BH
        do = dout + t * BH
        dg = dG + t * BH
        for i in range(BH):
            d = dh[i] + do[i]
            y = o[i]
            if relu:
                dg[i] = d if y > 0 else 0
            else:
                dg[i] = d * (1 - y * y)
        _step_gemm(CH_N, CH_N, H, B, H, <flt>1, w, H, dg, H, <flt>0, dh, H)
    _weight_grad(dG, h0, out, dW, T, B, H, H, reverse, <flt>(1 if acc else 0))
    _col_sums(dG, db, T * B, H, acc)


# ---------------------------------------------------------------------------
# LSTM
# ---------------------------------------------------------------------------

cdef void _lstm_fwd(const flt* gi, const flt* h0, const flt* c0, const flt* w, const flt* bhh,
                    const flt* wr, flt* gates, flt* hc, flt* out, flt* cs, Py_ssize_t T,
                    Py_ssize_t B, Py_ssize_t H, Py_ssize_t P, bint reverse) noexcept nogil:
    """The LSTM recurrence; with a projection ``wr (P, H)`` (else NULL, ``P == H``)
    the cell output ``o * tanh(c)`` goes to ``hc (T, B, H)`` and the state
    ``h = hc wr^T`` (width P) to ``out``, and ``w`` is ``(4H, P)``."""
    cdef Py_ssize_t s, t, b, j, tp, G = 4 * H, BH = B * H
    cdef const flt* hp
    cdef const flt* cp
    cdef const flt* gir
    cdef flt* g
    cdef flt* row
    cdef flt* cr
    cdef flt* hr
    cdef flt* cell = hc if wr != NULL else out
    if flt is float:
        if wr == NULL and _use_packed(T, H) and _lstm_fwd_packed(gi, h0, c0, w, bhh, gates, out,
                                                                 cs, T, B, H, reverse):
            return
    for s in range(T):
        t = _step_t(s, T, reverse)
        tp = _prev_t(t, reverse)
        hp = h0 if s == 0 else out + tp * B * P
        cp = c0 if s == 0 else cs + tp * BH
        g = gates + t * B * G
        _step_gemm(CH_T, CH_N, G, B, P, <flt>1, w, P, hp, P, <flt>0, g, G)
        for b in range(B):
            row = g + b * G
            gir = gi + t * B * G + b * G
            if bhh != NULL:
                for j in range(G):
                    row[j] = gir[j] + bhh[j] + row[j]
            else:
                for j in range(G):
                    row[j] = gir[j] + row[j]
            _sigmoid(row, row, 2 * H)
            _tanh(row + 2 * H, row + 2 * H, H)
            _sigmoid(row + 3 * H, row + 3 * H, H)
            cr = cs + t * BH + b * H
            hr = cell + t * BH + b * H
            for j in range(H):
                cr[j] = row[H + j] * cp[b * H + j] + row[j] * row[2 * H + j]
            _tanh(hr, cr, H)
            for j in range(H):
                hr[j] = row[3 * H + j] * hr[j]
        if wr != NULL:
            _step_gemm(CH_T, CH_N, P, B, H, <flt>1, wr, H, hc + t * BH, H, <flt>0,
                       out + t * B * P, P)


cdef inline void _lstm_bwd_gates(const flt* gates, const flt* cs, const flt* cp,
                                 const flt* dout, flt* dh, flt* dc, flt* dG, flt* tmp,
                                 Py_ssize_t t, Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t B,
                                 Py_ssize_t H) noexcept nogil:
    """Step ``t``'s pre-activation gradients dG[t] of batch rows [b0, b1) from
    dh (+ ``dout``: step t's rows) and dc; dc becomes the gradient of c[t-1]."""
    cdef Py_ssize_t b, j, k, G = 4 * H, BH = B * H
    cdef const flt* row
    cdef flt* drow
    cdef flt dhj, dcj, ig, fg, gg, og, tc
    for b in range(b0, b1):
        row = gates + t * B * G + b * G
        drow = dG + t * B * G + b * G
        _tanh(tmp, cs + t * BH + b * H, H)
        if flt is float:
            ptc_lstm_bwd_gates_f32(row, drow, tmp, dh + b * H, dout + b * H,
                                   dc + b * H, cp + b * H, H)
            continue
        for j in range(H):
            k = b * H + j
            ig = row[j]
            fg = row[H + j]
            gg = row[2 * H + j]
            og = row[3 * H + j]
            tc = tmp[j]
            dhj = dh[k] + dout[k]
            dcj = dc[k] + dhj * og * (1 - tc * tc)
            drow[j] = dcj * gg * ig * (1 - ig)
            drow[H + j] = dcj * cp[k] * fg * (1 - fg)
            drow[2 * H + j] = dcj * ig * (1 - gg * gg)
            drow[3 * H + j] = dhj * tc * og * (1 - og)
            dc[k] = dcj * fg


cdef void _lstm_bwd(const flt* gates, const flt* cs, const flt* c0, const flt* h0,
                    const flt* out, const flt* w, const flt* dout, flt* dh, flt* dc, flt* dG,
                    flt* dW, flt* db, flt* tmp, Py_ssize_t T, Py_ssize_t B, Py_ssize_t H,
                    bint reverse, bint acc) noexcept nogil:
    cdef Py_ssize_t s, t, G = 4 * H, BH = B * H
    cdef const flt* cp
    cdef bint done = False
    if flt is float:
        if _use_packed(T, H):
            done = _lstm_bwd_packed(gates, cs, c0, w, dout, dh, dc, dG, T, B, H, reverse)
    if not done:
        for s in range(T - 1, -1, -1):
            t = _step_t(s, T, reverse)
            cp = c0 if s == 0 else cs + _prev_t(t, reverse) * BH
            _lstm_bwd_gates(gates, cs, cp, dout + t * BH, dh, dc, dG, tmp, t, 0, B, B, H)
            _step_gemm(CH_N, CH_N, H, B, G, <flt>1, w, H, dG + t * B * G, G, <flt>0, dh, H)
    _weight_grad(dG, h0, out, dW, T, B, H, G, reverse, <flt>(1 if acc else 0))
    _col_sums(dG, db, T * B, G, acc)


cdef void _lstmp_bwd(const flt* gates, const flt* cs, const flt* c0, const flt* h0,
                     const flt* out, const flt* w, const flt* wr, const flt* hc,
                     const flt* dout, flt* dh, flt* dc, flt* dG, flt* dW, flt* db, flt* dWr,
                     flt* dhp, flt* dhc, flt* zeros, flt* tmp, Py_ssize_t T,
                     Py_ssize_t B, Py_ssize_t H, Py_ssize_t P, bint reverse,
                     bint acc) noexcept nogil:
    """The backward of the projected LSTM (``_lstm_fwd`` with ``wr``): ``dh (B, P)``
    in: grad of h_n, out: of h0; per step the state gradient ``dh + dout[t]`` is
    kept in ``dhp (T, B, P)`` for ``dWr (P, H) (+)= sum_t dhp[t]^T hc[t]``, goes
    through the projection into ``dhc (B, H)``, then the gates (``zeros``:
    B * H work space, cleared here); ``dW (4H, P)``, ``db (4H)``."""
    cdef Py_ssize_t s, t, i, G = 4 * H, BH = B * H, BP = B * P
    cdef const flt* cp
    cdef flt* d
    memset(zeros, 0, BH * sizeof(flt))
    for s in range(T - 1, -1, -1):
        t = _step_t(s, T, reverse)
        cp = c0 if s == 0 else cs + _prev_t(t, reverse) * BH
        d = dhp + t * BP
        for i in range(BP):
            d[i] = dh[i] + dout[t * BP + i]
        _step_gemm(CH_N, CH_N, H, B, P, <flt>1, wr, H, d, P, <flt>0, dhc, H)
        _lstm_bwd_gates(gates, cs, cp, zeros, dhc, dc, dG, tmp, t, 0, B, B, H)
        _step_gemm(CH_N, CH_N, P, B, G, <flt>1, w, P, dG + t * B * G, G, <flt>0, dh, P)
    _weight_grad(dG, h0, out, dW, T, B, P, G, reverse, <flt>(1 if acc else 0))
    _col_sums(dG, db, T * B, G, acc)
    # column-major: dWr^T (H, P) (+)= hc^T (H, TB) @ dhp (TB, P)
    _rgemm(CH_N, CH_T, H, P, T * B, <flt>1, hc, H, dhp, P, <flt>(1 if acc else 0), dWr, H)


# ---------------------------------------------------------------------------
# GRU
# ---------------------------------------------------------------------------

cdef void _gru_fwd(const flt* gi, const flt* h0, const flt* w, const flt* bhh, flt* saved,
                   flt* out, flt* gh, Py_ssize_t T, Py_ssize_t B, Py_ssize_t H,
                   bint reverse) noexcept nogil:
    # saved[t, b] = r, z, n, (W_hn h + b_hn)
    cdef Py_ssize_t s, t, b, j, G = 3 * H, BH = B * H
    cdef const flt* hp
    cdef const flt* gir
    cdef const flt* ghr
    cdef flt* sv
    cdef flt* hr
    cdef flt n
    for s in range(T):
        t = _step_t(s, T, reverse)
        hp = h0 if s == 0 else out + _prev_t(t, reverse) * BH
        if bhh != NULL:
            for b in range(B):
                memcpy(gh + b * G, bhh, G * sizeof(flt))
            _step_gemm(CH_T, CH_N, G, B, H, <flt>1, w, H, hp, H, <flt>1, gh, G)
        else:
            _step_gemm(CH_T, CH_N, G, B, H, <flt>1, w, H, hp, H, <flt>0, gh, G)
        for b in range(B):
            gir = gi + t * B * G + b * G
            ghr = gh + b * G
            sv = saved + t * B * 4 * H + b * 4 * H
            hr = out + t * BH + b * H
            for j in range(2 * H):
                sv[j] = gir[j] + ghr[j]
            _sigmoid(sv, sv, 2 * H)
            for j in range(H):
                sv[3 * H + j] = ghr[2 * H + j]
                sv[2 * H + j] = gir[2 * H + j] + ghr[2 * H + j] * sv[j]
            _tanh(sv + 2 * H, sv + 2 * H, H)
            for j in range(H):
                n = sv[2 * H + j]
                hr[j] = (hp[b * H + j] - n) * sv[H + j] + n


cdef inline void _gru_bwd_gates(const flt* saved, const flt* hp, const flt* dout, flt* dh,
                                flt* dGI, flt* dGH, Py_ssize_t t, Py_ssize_t b0, Py_ssize_t b1,
                                Py_ssize_t B, Py_ssize_t H) noexcept nogil:
    """Step ``t``'s gradients dGI[t], dGH[t] of batch rows [b0, b1) from dh
    (+ dout[t]); dh becomes its part of the gradient of h[t-1] (dGH[t] W_hh
    is added after)."""
    cdef Py_ssize_t b, j, k, G = 3 * H, BH = B * H
    cdef const flt* sv
    cdef flt* dgi
    cdef flt* dgh
    cdef flt dhj, r, z, n, ghn, dpn, dpr, dpz
    for b in range(b0, b1):
        sv = saved + t * B * 4 * H + b * 4 * H
        dgi = dGI + t * B * G + b * G
        dgh = dGH + t * B * G + b * G
        for j in range(H):
            k = b * H + j
            r = sv[j]
            z = sv[H + j]
            n = sv[2 * H + j]
            ghn = sv[3 * H + j]
            dhj = dh[k] + dout[t * BH + k]
            dpn = dhj * (1 - z) * (1 - n * n)
            dpz = dhj * (hp[k] - n) * z * (1 - z)
            dpr = dpn * ghn * r * (1 - r)
            dgi[j] = dpr
            dgi[H + j] = dpz
            dgi[2 * H + j] = dpn
            dgh[j] = dpr
            dgh[H + j] = dpz
            dgh[2 * H + j] = dpn * r
            dh[k] = dhj * z


cdef void _gru_bwd(const flt* saved, const flt* h0, const flt* out, const flt* w,
                   const flt* dout, flt* dh, flt* dGI, flt* dGH, flt* dW, flt* db,
                   Py_ssize_t T, Py_ssize_t B, Py_ssize_t H, bint reverse,
                   bint acc) noexcept nogil:
    cdef Py_ssize_t s, t, G = 3 * H, BH = B * H
    cdef const flt* hp
    cdef bint done = False
    if flt is float:
        if _use_packed(T, H):
            done = _gru_bwd_packed(saved, h0, out, w, dout, dh, dGI, dGH, T, B, H, reverse)
    if not done:
        for s in range(T - 1, -1, -1):
            t = _step_t(s, T, reverse)
            hp = h0 if s == 0 else out + _prev_t(t, reverse) * BH
            _gru_bwd_gates(saved, hp, dout, dh, dGI, dGH, t, 0, B, B, H)
            _step_gemm(CH_N, CH_N, H, B, G, <flt>1, w, H, dGH + t * B * G, G, <flt>1, dh, H)
    _weight_grad(dGH, h0, out, dW, T, B, H, G, reverse, <flt>(1 if acc else 0))
    _col_sums(dGH, db, T * B, G, acc)


# ---------------------------------------------------------------------------
# Python entry points (shapes were validated by ptcore.nn.functional._rnn;
# these re-check what a wrong call could turn into an out-of-bounds access)
# ---------------------------------------------------------------------------

cdef int _num(_TensorBase t) except -1:
    if t is None or t._ndim != 3:
        raise ValueError("recurrent kernel: the sequence tensor must be 3-D (T, B, features)")
    cdef int num = t._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise TypeError(f"recurrent kernel: expected float32 or float64, got {t._dtype}")
    return num


cdef char* _arg(_TensorBase t, Py_ssize_t numel, int num, str name) except NULL:
    if t is None:
        raise ValueError(f"recurrent kernel: {name} is required")
    if t._dtype.num != num:
        raise TypeError(f"recurrent kernel: {name} has dtype {t._dtype}, expected the input's")
    if t._numel != numel or numel == 0 or not t._is_contig():
        raise ValueError(f"recurrent kernel: {name} must be contiguous with {numel} (> 0) "
                         f"elements, got {t._numel}")
    require_host(t, f"recurrent kernel: {name}")
    return t._ptr()


cdef char* _opt(_TensorBase t, Py_ssize_t numel, int num, str name) except? NULL:
    return NULL if t is None else _arg(t, numel, num, name)


def rnn_forward(_TensorBase gi, _TensorBase h0, _TensorBase w, _TensorBase bhh,
                _TensorBase out, bint reverse, bint relu):
    """``out (T, B, H)``: Elman recurrence over ``gi (T, B, H)`` from ``h0 (B, H)``."""
    cdef int num = _num(gi)
    cdef Py_ssize_t T = gi._shape[0], B = gi._shape[1], H = gi._shape[2]
    cdef char* pgi = _arg(gi, T * B * H, num, "gi")
    cdef char* ph0 = _arg(h0, B * H, num, "h0")
    cdef char* pw = _arg(w, H * H, num, "w_hh")
    cdef char* pb = _opt(bhh, H, num, "b_hh")
    cdef char* po = _arg(out, T * B * H, num, "out")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _rnn_fwd(<float*>pgi, <float*>ph0, <float*>pw, <float*>pb, <float*>po, T, B, H,
                         reverse, relu)
            else:
                _rnn_fwd(<double*>pgi, <double*>ph0, <double*>pw, <double*>pb, <double*>po, T, B, H,
                         reverse, relu)
        finally:
            ptc_kernel_exit()


def rnn_backward(_TensorBase h0, _TensorBase out, _TensorBase w, _TensorBase dout,
                 _TensorBase dh, _TensorBase dG, _TensorBase dW, _TensorBase db, bint reverse,
                 bint relu, bint accumulate=False):
    """``dG (T, B, H)`` (gradient of gi), ``dh`` (in: grad of h_n, out: of h0), ``dW``,
    ``db`` (or None); with ``accumulate`` the weight and bias gradients are added to
    ``dW`` and ``db``."""
    cdef int num = _num(out)
    cdef Py_ssize_t T = out._shape[0], B = out._shape[1], H = out._shape[2]
    cdef char* ph0 = _arg(h0, B * H, num, "h0")
    cdef char* po = _arg(out, T * B * H, num, "out")
    cdef char* pw = _arg(w, H * H, num, "w_hh")
    cdef char* pdo = _arg(dout, T * B * H, num, "dout")
    cdef char* pdh = _arg(dh, B * H, num, "dh")
    cdef char* pdg = _arg(dG, T * B * H, num, "dG")
    cdef char* pdw = _arg(dW, H * H, num, "dW")
    cdef char* pdb = _opt(db, H, num, "db")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _rnn_bwd(<float*>ph0, <float*>po, <float*>pw, <float*>pdo, <float*>pdh, <float*>pdg,
                         <float*>pdw, <float*>pdb, T, B, H, reverse, relu, accumulate)
            else:
                _rnn_bwd(<double*>ph0, <double*>po, <double*>pw, <double*>pdo, <double*>pdh,
                         <double*>pdg, <double*>pdw, <double*>pdb, T, B, H, reverse, relu,
                         accumulate)
        finally:
            ptc_kernel_exit()


def lstm_forward(_TensorBase gi, _TensorBase h0, _TensorBase c0, _TensorBase w,
                 _TensorBase bhh, _TensorBase gates, _TensorBase out, _TensorBase cs, bint reverse):
    """``gates (T, B, 4H)`` (activated i, f, g, o), ``out`` (h) and ``cs`` (c), each
    ``(T, B, H)``, from ``gi (T, B, 4H)``, ``h0``, ``c0`` ``(B, H)``, ``w (4H, H)``."""
    cdef int num = _num(gi)
    cdef Py_ssize_t T = gi._shape[0], B = gi._shape[1], H = gi._shape[2] // 4
    if gi._shape[2] != 4 * H:
        raise ValueError("lstm kernel: the gate dimension must be 4 * hidden_size")
    cdef char* pgi = _arg(gi, T * B * 4 * H, num, "gi")
    cdef char* ph0 = _arg(h0, B * H, num, "h0")
    cdef char* pc0 = _arg(c0, B * H, num, "c0")
    cdef char* pw = _arg(w, 4 * H * H, num, "w_hh")
    cdef char* pb = _opt(bhh, 4 * H, num, "b_hh")
    cdef char* pg = _arg(gates, T * B * 4 * H, num, "gates")
    cdef char* po = _arg(out, T * B * H, num, "out")
    cdef char* pc = _arg(cs, T * B * H, num, "cs")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _lstm_fwd(<float*>pgi, <float*>ph0, <float*>pc0, <float*>pw, <float*>pb, NULL,
                          <float*>pg, NULL, <float*>po, <float*>pc, T, B, H, H, reverse)
            else:
                _lstm_fwd(<double*>pgi, <double*>ph0, <double*>pc0, <double*>pw, <double*>pb, NULL,
                          <double*>pg, NULL, <double*>po, <double*>pc, T, B, H, H, reverse)
        finally:
            ptc_kernel_exit()


def lstmp_forward(_TensorBase gi, _TensorBase h0, _TensorBase c0, _TensorBase w,
                  _TensorBase bhh, _TensorBase w_hr, _TensorBase gates, _TensorBase hc,
                  _TensorBase out, _TensorBase cs, bint reverse):
    """The LSTM with a projection ``w_hr (P, H)``: ``gates (T, B, 4H)``, the cell
    outputs ``hc`` and ``cs`` (c) ``(T, B, H)``, ``out`` (h) ``(T, B, P)``, from
    ``gi (T, B, 4H)``, ``h0 (B, P)``, ``c0 (B, H)``, ``w (4H, P)``."""
    cdef int num = _num(gi)
    cdef Py_ssize_t T = gi._shape[0], B = gi._shape[1], H = gi._shape[2] // 4, P
    if gi._shape[2] != 4 * H:
        raise ValueError("lstm kernel: the gate dimension must be 4 * hidden_size")
    if w_hr is None or w_hr._ndim != 2 or w_hr._shape[1] != H:
        raise ValueError(f"lstm kernel: w_hr must be (proj_size, {H})")
    P = w_hr._shape[0]
    cdef char* pgi = _arg(gi, T * B * 4 * H, num, "gi")
    cdef char* ph0 = _arg(h0, B * P, num, "h0")
    cdef char* pc0 = _arg(c0, B * H, num, "c0")
    cdef char* pw = _arg(w, 4 * H * P, num, "w_hh")
    cdef char* pb = _opt(bhh, 4 * H, num, "b_hh")
    cdef char* pr = _arg(w_hr, P * H, num, "w_hr")
    cdef char* pg = _arg(gates, T * B * 4 * H, num, "gates")
    cdef char* phc = _arg(hc, T * B * H, num, "hc")
    cdef char* po = _arg(out, T * B * P, num, "out")
    cdef char* pc = _arg(cs, T * B * H, num, "cs")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _lstm_fwd(<float*>pgi, <float*>ph0, <float*>pc0, <float*>pw, <float*>pb, <float*>pr,
                          <float*>pg, <float*>phc, <float*>po, <float*>pc, T, B, H, P, reverse)
            else:
                _lstm_fwd(<double*>pgi, <double*>ph0, <double*>pc0, <double*>pw, <double*>pb,
                          <double*>pr, <double*>pg, <double*>phc, <double*>po, <double*>pc, T, B,
                          H, P, reverse)
        finally:
            ptc_kernel_exit()


def lstm_backward(_TensorBase gates, _TensorBase cs, _TensorBase c0, _TensorBase h0,
                  _TensorBase out, _TensorBase w, _TensorBase dout, _TensorBase dh,
                  _TensorBase dc, _TensorBase dG, _TensorBase dW, _TensorBase db,
                  _TensorBase tmp, bint reverse, bint accumulate=False):
    """``dG (T, B, 4H)``, ``dW (4H, H)``; ``dh``/``dc`` in: grads of h_n/c_n, out: of h0/c0;
    with ``accumulate`` the weight and bias gradients are added to ``dW`` and ``db``."""
    cdef int num = _num(out)
    cdef Py_ssize_t T = out._shape[0], B = out._shape[1], H = out._shape[2]
    cdef char* pg = _arg(gates, T * B * 4 * H, num, "gates")
    cdef char* pc = _arg(cs, T * B * H, num, "cs")
    cdef char* pc0 = _arg(c0, B * H, num, "c0")
    cdef char* ph0 = _arg(h0, B * H, num, "h0")
    cdef char* po = _arg(out, T * B * H, num, "out")
    cdef char* pw = _arg(w, 4 * H * H, num, "w_hh")
    cdef char* pdo = _arg(dout, T * B * H, num, "dout")
    cdef char* pdh = _arg(dh, B * H, num, "dh")
    cdef char* pdc = _arg(dc, B * H, num, "dc")
    cdef char* pdg = _arg(dG, T * B * 4 * H, num, "dG")
    cdef char* pdw = _arg(dW, 4 * H * H, num, "dW")
    cdef char* pdb = _opt(db, 4 * H, num, "db")
    cdef char* pt = _arg(tmp, H, num, "tmp")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _lstm_bwd(<float*>pg, <float*>pc, <float*>pc0, <float*>ph0, <float*>po, <float*>pw,
                          <float*>pdo, <float*>pdh, <float*>pdc, <float*>pdg, <float*>pdw,
                          <float*>pdb, <float*>pt, T, B, H, reverse, accumulate)
            else:
                _lstm_bwd(<double*>pg, <double*>pc, <double*>pc0, <double*>ph0, <double*>po,
                          <double*>pw, <double*>pdo, <double*>pdh, <double*>pdc, <double*>pdg,
                          <double*>pdw, <double*>pdb, <double*>pt, T, B, H, reverse, accumulate)
        finally:
            ptc_kernel_exit()


def lstmp_backward(_TensorBase gates, _TensorBase cs, _TensorBase c0, _TensorBase h0,
                   _TensorBase out, _TensorBase w, _TensorBase w_hr, _TensorBase hc,
                   _TensorBase dout, _TensorBase dh, _TensorBase dc, _TensorBase dG,
                   _TensorBase dW, _TensorBase db, _TensorBase dWr, _TensorBase dhp,
                   _TensorBase scratch, bint reverse, bint accumulate=False):
    """The backward of :func:`lstmp_forward`: ``dG (T, B, 4H)``, ``dW (4H, P)``,
    ``db (4H)`` or None, ``dWr (P, H)`` (added to with ``accumulate``); ``dh``
    ``(B, P)`` / ``dc (B, H)`` in: grads of h_n/c_n, out: of h0/c0; ``dhp (T, B, P)``
    and ``scratch`` (``(2 B + 1) H`` elements) are work space."""
    cdef int num = _num(cs)
    cdef Py_ssize_t T = cs._shape[0], B = cs._shape[1], H = cs._shape[2], P
    if w_hr is None or w_hr._ndim != 2 or w_hr._shape[1] != H:
        raise ValueError(f"lstm kernel: w_hr must be (proj_size, {H})")
    P = w_hr._shape[0]
    cdef char* pg = _arg(gates, T * B * 4 * H, num, "gates")
    cdef char* pc = _arg(cs, T * B * H, num, "cs")
    cdef char* pc0 = _arg(c0, B * H, num, "c0")
    cdef char* ph0 = _arg(h0, B * P, num, "h0")
    cdef char* po = _arg(out, T * B * P, num, "out")
    cdef char* pw = _arg(w, 4 * H * P, num, "w_hh")
    cdef char* pr = _arg(w_hr, P * H, num, "w_hr")
    cdef char* phc = _arg(hc, T * B * H, num, "hc")
    cdef char* pdo = _arg(dout, T * B * P, num, "dout")
    cdef char* pdh = _arg(dh, B * P, num, "dh")
    cdef char* pdc = _arg(dc, B * H, num, "dc")
    cdef char* pdg = _arg(dG, T * B * 4 * H, num, "dG")
    cdef char* pdw = _arg(dW, 4 * H * P, num, "dW")
    cdef char* pdb = _opt(db, 4 * H, num, "db")
    cdef char* pdr = _arg(dWr, P * H, num, "dWr")
    cdef char* pdhp = _arg(dhp, T * B * P, num, "dhp")
    cdef char* ps = _arg(scratch, (2 * B + 1) * H, num, "scratch")
    cdef Py_ssize_t BH = B * H
    cdef char* pz = ps + BH * scratch._dtype.itemsize      # B * H zeros (set by _lstmp_bwd)
    cdef char* pt = ps + 2 * BH * scratch._dtype.itemsize  # H for tanh(c)
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _lstmp_bwd(<float*>pg, <float*>pc, <float*>pc0, <float*>ph0, <float*>po, <float*>pw,
                           <float*>pr, <float*>phc, <float*>pdo, <float*>pdh, <float*>pdc,
                           <float*>pdg, <float*>pdw, <float*>pdb, <float*>pdr, <float*>pdhp,
                           <float*>ps, <float*>pz, <float*>pt, T, B, H, P, reverse, accumulate)
            else:
                _lstmp_bwd(<double*>pg, <double*>pc, <double*>pc0, <double*>ph0, <double*>po,
                           <double*>pw, <double*>pr, <double*>phc, <double*>pdo, <double*>pdh,
                           <double*>pdc, <double*>pdg, <double*>pdw, <double*>pdb, <double*>pdr,
                           <double*>pdhp, <double*>ps, <double*>pz, <double*>pt, T, B, H, P,
                           reverse, accumulate)
        finally:
            ptc_kernel_exit()


def gru_forward(_TensorBase gi, _TensorBase h0, _TensorBase w, _TensorBase bhh,
                _TensorBase saved, _TensorBase out, _TensorBase gh, bint reverse):
    """``out (T, B, H)`` and ``saved (T, B, 4H)`` (r, z, n, W_hn h + b_hn) from
    ``gi (T, B, 3H)`` (with b_ih), ``h0 (B, H)``, ``w (3H, H)``, ``bhh (3H)`` or None;
    ``gh (B, 3H)`` is scratch."""
    cdef int num = _num(gi)
    cdef Py_ssize_t T = gi._shape[0], B = gi._shape[1], H = gi._shape[2] // 3
    if gi._shape[2] != 3 * H:
        raise ValueError("gru kernel: the gate dimension must be 3 * hidden_size")
    cdef char* pgi = _arg(gi, T * B * 3 * H, num, "gi")
    cdef char* ph0 = _arg(h0, B * H, num, "h0")
    cdef char* pw = _arg(w, 3 * H * H, num, "w_hh")
    cdef char* pb = _opt(bhh, 3 * H, num, "b_hh")
    cdef char* ps = _arg(saved, T * B * 4 * H, num, "saved")
    cdef char* po = _arg(out, T * B * H, num, "out")
    cdef char* pgh = _arg(gh, B * 3 * H, num, "gh")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _gru_fwd(<float*>pgi, <float*>ph0, <float*>pw, <float*>pb, <float*>ps, <float*>po,
                         <float*>pgh, T, B, H, reverse)
            else:
                _gru_fwd(<double*>pgi, <double*>ph0, <double*>pw, <double*>pb, <double*>ps,
                         <double*>po, <double*>pgh, T, B, H, reverse)
        finally:
            ptc_kernel_exit()


def gru_backward(_TensorBase saved, _TensorBase h0, _TensorBase out, _TensorBase w,
                 _TensorBase dout, _TensorBase dh, _TensorBase dGI, _TensorBase dGH,
                 _TensorBase dW, _TensorBase db, bint reverse, bint accumulate=False):
    """``dGI``/``dGH (T, B, 3H)`` (gradients of gi and of the recurrent
    pre-activations), ``dW (3H, H)``, ``db (3H)`` or None; ``dh`` in: grad of
    h_n, out: of h0; with ``accumulate`` the weight and bias gradients are added
    to ``dW`` and ``db``."""
    cdef int num = _num(out)
    cdef Py_ssize_t T = out._shape[0], B = out._shape[1], H = out._shape[2]
    cdef char* ps = _arg(saved, T * B * 4 * H, num, "saved")
    cdef char* ph0 = _arg(h0, B * H, num, "h0")
    cdef char* po = _arg(out, T * B * H, num, "out")
    cdef char* pw = _arg(w, 3 * H * H, num, "w_hh")
    cdef char* pdo = _arg(dout, T * B * H, num, "dout")
    cdef char* pdh = _arg(dh, B * H, num, "dh")
    cdef char* pdgi = _arg(dGI, T * B * 3 * H, num, "dGI")
    cdef char* pdgh = _arg(dGH, T * B * 3 * H, num, "dGH")
    cdef char* pdw = _arg(dW, 3 * H * H, num, "dW")
    cdef char* pdb = _opt(db, 3 * H, num, "db")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _gru_bwd(<float*>ps, <float*>ph0, <float*>po, <float*>pw, <float*>pdo, <float*>pdh,
                         <float*>pdgi, <float*>pdgh, <float*>pdw, <float*>pdb, T, B, H, reverse,
                         accumulate)
            else:
                _gru_bwd(<double*>ps, <double*>ph0, <double*>po, <double*>pw, <double*>pdo,
                         <double*>pdh, <double*>pdgi, <double*>pdgh, <double*>pdw, <double*>pdb,
                         T, B, H, reverse, accumulate)
        finally:
            ptc_kernel_exit()
