# bfloat16 products with the AVX512-BF16 dot-product instruction (ptc_bgemm.h),
# ``include``d by _blas.pyx.  The caller (linalg._product_raw) takes the result
# or, where bf16_mm returns None (no AVX512-BF16, other dtypes or devices),
# computes in float32 as before.

cdef extern from "ptc_bgemm.h":
    int ptc_bgemm_isa() nogil
    int ptc_bgemm_force_isa(int isa) nogil
    int ptc_bgemm_set_direct(int on) nogil
    int ptc_bgemm(Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                  const uint16_t* a, Py_ssize_t sa0, Py_ssize_t sa1,
                  const uint16_t* b, Py_ssize_t sb0, Py_ssize_t sb1,
                  const float* init, Py_ssize_t si0, Py_ssize_t si1,
                  uint16_t* o, Py_ssize_t so0, Py_ssize_t j0, Py_ssize_t j1) nogil

cdef enum:
    BGEMM_NR = 32


def _set_bgemm_isa(int isa):
    """Tests: 0 turns the bfloat16 kernel off (products in float32), -1 back
    to the CPU's; returns 1 when the kernel runs."""
    return ptc_bgemm_force_isa(isa)


def _set_bgemm_direct(int on):
    """Tests and benchmarks: 0 packs every A panel, 1 reads A's k-contiguous
    rows in place (the default, the same bits); returns the previous mode."""
    return ptc_bgemm_set_direct(on)


def bgemm_available():
    return ptc_bgemm_isa() != 0


def bf16_mm(_TensorBase a, _TensorBase b, _TensorBase init=None):
    """``a @ b`` of bfloat16 CPU tensors, (m, k) @ (k, n) or with one or two
    batch dims of equal sizes in front, any strides (stride 0 included), into
    a new contiguous bfloat16 tensor, plus ``init`` (float32 of the result's
    shape, any strides: addmm's ``beta * c``) before the one rounding; None
    where the kernel does not run (the caller computes in float32)."""
    cdef int nd = a._ndim, d
    if ptc_bgemm_isa() == 0 or nd < 2 or nd > 4 or b._ndim != nd \
            or a._dtype.num != PT_BFLOAT16 or b._dtype.num != PT_BFLOAT16 \
            or a._storage.device._type_code != 0 or b._storage.device._type_code != 0:
        return None
    cdef int o0 = nd - 2
    cdef Py_ssize_t nb0 = 1, nb1 = 1
    cdef Py_ssize_t sab0 = 0, sab1 = 0, sbb0 = 0, sbb1 = 0, sib0 = 0, sib1 = 0
    cdef Py_ssize_t m = a._shape[o0], k = a._shape[o0 + 1], n = b._shape[o0 + 1]
    for d in range(o0):
        if b._shape[d] != a._shape[d]:
            raise RuntimeError(f"bf16_mm: batch sizes {tuple(a.shape)} and {tuple(b.shape)} differ")
    if b._shape[o0] != k:
        raise RuntimeError(f"bf16_mm: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied")
    if o0 >= 1:
        nb1 = a._shape[o0 - 1]
        sab1 = a._strides[o0 - 1]
        sbb1 = b._strides[o0 - 1]
    if o0 == 2:
        nb0 = a._shape[0]
        sab0 = a._strides[0]
        sbb0 = b._strides[0]
    cdef const float* ip = NULL
    cdef Py_ssize_t si0 = 0, si1 = 0
    if init is not None:
        if init._dtype.num != PT_FLOAT32 or init._ndim != nd or init._storage.device._type_code != 0 \
                or init._shape[o0] != m or init._shape[o0 + 1] != n \
                or any(init._shape[d] != a._shape[d] for d in range(o0)):
            return None
        ip = <const float*>init._ptr()
        si0 = init._strides[o0]
        si1 = init._strides[o0 + 1]
        if o0 >= 1:
            sib1 = init._strides[o0 - 1]
        if o0 == 2:
            sib0 = init._strides[0]
    cdef Py_ssize_t shape[4]
    for d in range(nd):
        shape[d] = a._shape[d]
    shape[nd - 1] = n
    cdef _TensorBase out = _empty_contig(a._dtype, nd, shape, a._storage.device, False)
    cdef Py_ssize_t nb = nb0 * nb1
    if m == 0 or n == 0 or nb == 0:
        return out
    cdef const uint16_t* ap = <const uint16_t*>a._ptr()
    cdef const uint16_t* bp = <const uint16_t*>b._ptr()
    cdef uint16_t* op = <uint16_t*>out._ptr()
    cdef Py_ssize_t sa0 = a._strides[o0], sa1 = a._strides[o0 + 1]
    cdef Py_ssize_t sb0 = b._strides[o0], sb1 = b._strides[o0 + 1]
    # column ranges (multiples of NR) per thread, each of at least GEMM_TILE_WORK
    # multiply-adds, or whole products of a batch per thread; every column is
    # computed whole by one thread, so the bits do not depend on the thread count
    cdef Py_ssize_t panels = (n + BGEMM_NR - 1) // BGEMM_NR
    cdef Py_ssize_t work = m * k * BGEMM_NR
    cdef Py_ssize_t nt = get_num_threads()
    if nb > 1:
        nt = min(nt, nb, max(1, nb * panels * work // GEMM_TILE_WORK))
    elif work > 0 and nt > 1:
        nt = min(nt, max(1, panels * work // GEMM_TILE_WORK), panels)
    else:
        nt = 1
    cdef Py_ssize_t c, i, i0, i1, err = 0
    ptc_kernel_enter()
    try:
        with nogil:
            if nb > 1:
                for i in prange(nb, num_threads=nt, schedule='static'):
                    i0 = i // nb1
                    i1 = i - i0 * nb1
                    err += ptc_bgemm(m, n, k, ap + i0 * sab0 + i1 * sab1, sa0, sa1,
                                     bp + i0 * sbb0 + i1 * sbb1, sb0, sb1,
                                     (ip + i0 * sib0 + i1 * sib1) if ip != NULL else NULL, si0, si1,
                                     op + i * m * n, n, 0, n)
            elif nt <= 1:
                err = ptc_bgemm(m, n, k, ap, sa0, sa1, bp, sb0, sb1, ip, si0, si1, op, n, 0, n)
            else:
                for c in prange(nt, num_threads=nt, schedule='static'):
                    err += ptc_bgemm(m, n, k, ap, sa0, sa1, bp, sb0, sb1, ip, si0, si1, op, n,
                                     min(n, (c * panels // nt) * BGEMM_NR),
                                     min(n, ((c + 1) * panels // nt) * BGEMM_NR))
    finally:
        ptc_kernel_exit()
    if err != 0:
        raise MemoryError(f"bfloat16 matmul: out of memory for the packing buffers "
                          f"of a {tuple(a.shape)} @ {tuple(b.shape)} product")
    return out
