# ptcore's float32 GEMM (ptc_sgemm.h: packed, AVX-512F / AVX2+FMA micro-kernels
# chosen at run time), ``include``d by the modules whose ``_gemm_one`` runs
# float32 products through it (_blas.pyx, _gemm_real.pxi: _conv, _rnn).  Other
# CPUs and compilers, and products below OWN_SGEMM_MIN multiply-adds, use the
# BLAS's sgemm.

cdef extern from "ptc_sgemm.h":
    int ptc_sgemm_isa() nogil
    int ptc_sgemm_force_isa(int isa) nogil
    int ptc_sgemm_set_direct(int mode) nogil
    int ptc_sgemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, float alpha,
                  const float* a, Py_ssize_t lda, const float* b, Py_ssize_t ldb, float beta,
                  float* c, Py_ssize_t ldc) nogil
    int ptc_sgemm_ci(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, float alpha,
                     const float* a, Py_ssize_t lda, const float* b, Py_ssize_t ldb, float beta,
                     float* c, Py_ssize_t ldc, const float* ci, Py_ssize_t ldci) nogil

cdef enum:
    # below 64**3 multiply-adds OpenBLAS's small-matrix kernels win (no
    # packing); _gemm_tiles.pxi never splits a product into tiles smaller
    # than GEMM_TILE_WORK (2**21), so a product and its thread tiles always
    # take the same side of this threshold (thread-count independent results)
    OWN_SGEMM_MIN = 262144


cdef inline bint _own_sgemm(char ta, char tb, int m, int n, int k, float alpha,
                            float* a, int lda, float* b, int ldb, float beta,
                            float* c, int ldc) noexcept nogil:
    """Run the product through ptc_sgemm where it applies; False: use the BLAS."""
    if <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k < OWN_SGEMM_MIN or ptc_sgemm_isa() == 0:
        return False
    return ptc_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == 0


from ptcore._config import SGEMM_ISA as _SGEMM_ISA
ptc_sgemm_force_isa(_SGEMM_ISA)     # PTCORE_SGEMM, read by ptcore._config


def _set_sgemm_isa(int isa):
    """Force ptc_sgemm's micro-kernels in this module (tests, benchmarks):
    0 = the BLAS, 1 = AVX2+FMA, 2 = AVX-512F, -1 = the best the CPU has;
    returns the one in effect (never one the CPU lacks)."""
    return ptc_sgemm_force_isa(isa)


def _set_sgemm_direct(int mode):
    """Whether ptc_sgemm reads unpacked operands in place (tests,
    benchmarks): 0 = always pack, 1 = where it pays (the default), 2 = in
    place wherever the layout allows, 3 = only A, 4 = only B; returns the
    mode in effect (the same bits in every mode)."""
    return ptc_sgemm_set_direct(mode)
