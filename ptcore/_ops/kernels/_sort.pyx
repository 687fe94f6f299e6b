# cython: language_level=3, cdivision=True
"""Sorting and searching kernels: sort/argsort, topk, kthvalue, unique,
searchsorted, histc, bincount, isin.

Structure
---------
* Every real dtype has a C storage type (one-member structs for bool, half
  and bfloat16, as in ``_copy.pyx``); ``real_t`` fuses them.  Complex dtypes
  have no order and are rejected by the Python layer before a kernel runs.
* Ordering goes through *keys*: ``_key`` maps an element to an unsigned
  integer of the element's width whose unsigned order is the element order of
  ``torch.sort`` -- integers by flipping the sign bit, floats by the usual
  sign-magnitude flip, with every NaN mapped to the largest key (NaN sorts
  last) and -0.0 mapped to +0.0's key (so they tie and keep their relative
  order in a stable sort).  Descending order is the bitwise complement of the
  key.  Values are then gathered from the input through the sorted indices,
  so NaN payloads and the sign of zero are preserved.
* ``_radix_sort`` is a stable LSD radix sort over the key bytes with an index
  payload; byte passes whose digit is constant are skipped, already sorted
  rows and short rows (insertion sort) take shortcuts.
* Row kernels (sort, topk, kthvalue, searchsorted) walk the rows of a tensor
  along one dim through ``_rows_t`` (the outer dims with per-operand element
  strides), any strides allowed; rows are split over OpenMP threads in
  contiguous blocks when there are several rows and the work reaches
  ``parallel_grain()``.  Every row is computed independently and serially,
  so results never depend on the thread count.
* ``kthvalue`` runs the median-of-three quickselect that PyTorch's CPU kernel
  runs (Sedgewick's partition), on keys, so it returns PyTorch's index among
  ties.  ``topk`` runs libstdc++'s nth_element / sort / partial_sort on
  (key, index) pairs as PyTorch's CPU kernel does, so its indices among ties
  are PyTorch's too.
* ``searchsorted`` compares values natively (half/bfloat16 through float),
  with PyTorch's ``!(mid >= v)`` / ``!(mid > v)`` binary-search steps, so
  NaNs behave as in PyTorch.

The ``def`` functions at the bottom are the Python entry points; the public
functions in ``ptcore._ops.sorting`` check arguments, promote dtypes and allocate
outputs before calling them.
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
from libc.string cimport memcpy, memset
from cython.parallel cimport prange

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig, dtype_from_num
from ptcore import _tensor as _C
from ptcore._ops.kernels._types cimport (
    PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
    PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_NUM_TYPES, PT_MAX_DIMS,
    ptc_half_to_float, ptc_float_to_half, ptc_bf16_to_float, ptc_float_to_bf16,
)
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
scratch_bind()      # this module's scratch requests obey _fault's test switch


# --------------------------------------------------------------------------
# storage types
# --------------------------------------------------------------------------
ctypedef struct pt_bool_s:
    uint8_t v

ctypedef struct pt_half_s:
    uint16_t bits

ctypedef struct pt_bf16_s:
    uint16_t bits

ctypedef fused real_t:
    pt_bool_s
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t
    pt_half_s
    pt_bf16_s
    float
    double

# floating types only (histc)
ctypedef fused flt_t:
    pt_half_s
    pt_bf16_s
    float
    double

# integer types only (bincount)
ctypedef fused int_t:
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t


cdef inline int _type_num(real_t* tag) noexcept nogil:
    if real_t is pt_bool_s:
        return PT_BOOL
    elif real_t is uint8_t:
        return PT_UINT8
    elif real_t is int8_t:
        return PT_INT8
    elif real_t is int16_t:
        return PT_INT16
    elif real_t is int32_t:
        return PT_INT32
    elif real_t is int64_t:
        return PT_INT64
    elif real_t is pt_half_s:
        return PT_FLOAT16
    elif real_t is pt_bf16_s:
        return PT_BFLOAT16
    elif real_t is float:
        return PT_FLOAT32
    else:
        return PT_FLOAT64


cdef inline bint _is_float(real_t* tag) noexcept nogil:
    return real_t is pt_half_s or real_t is pt_bf16_s or real_t is float or real_t is double


# --------------------------------------------------------------------------
# ordered keys
# --------------------------------------------------------------------------
cdef inline uint64_t _width_mask(int width) noexcept nogil:
    return (<uint64_t>0xFFFFFFFFFFFFFFFFULL) >> (64 - 8 * width)


cdef inline uint64_t _fkey16(uint16_t b, uint16_t inf) noexcept nogil:
    cdef uint16_t a = b & 0x7FFF
    if a > inf:
        return 0xFFFF                       # NaN: largest
    if a == 0:
        return 0x8000                       # -0.0 ties with +0.0
    if b & 0x8000:
        return (~b) & 0xFFFF
    return b | 0x8000


cdef inline uint64_t _fkey32(uint32_t u) noexcept nogil:
    # without a branch on the sign (random signs mispredict half the time): negative
    # values flip every bit, others set the sign bit; the NaN and zero selects compile
    # to conditional moves
    cdef uint32_t a = u & 0x7FFFFFFFU
    cdef uint32_t key = u ^ ((<uint32_t>0 - (u >> 31)) | 0x80000000U)
    key = 0xFFFFFFFFU if a > 0x7F800000U else key          # NaN: largest
    key = 0x80000000U if a == 0 else key                   # -0.0 ties with +0.0
    return key


cdef inline uint64_t _fkey64(uint64_t u) noexcept nogil:
    cdef uint64_t a = u & 0x7FFFFFFFFFFFFFFFULL
    cdef uint64_t key = u ^ ((<uint64_t>0 - (u >> 63)) | 0x8000000000000000ULL)
    key = 0xFFFFFFFFFFFFFFFFULL if a > 0x7FF0000000000000ULL else key
    key = 0x8000000000000000ULL if a == 0 else key
    return key


cdef inline uint64_t _key(const real_t* p) noexcept nogil:
    if real_t is pt_bool_s:
        return 1 if p.v != 0 else 0
    elif real_t is uint8_t:
        return p[0]
    elif real_t is int8_t:
        return (<uint8_t>p[0]) ^ 0x80
    elif real_t is int16_t:
        return (<uint16_t>p[0]) ^ 0x8000
    elif real_t is int32_t:
        return (<uint32_t>p[0]) ^ (<uint32_t>0x80000000ULL)
    elif real_t is int64_t:
        return (<uint64_t>p[0]) ^ (<uint64_t>0x8000000000000000ULL)
    elif real_t is pt_half_s:
        return _fkey16(p.bits, 0x7C00)
    elif real_t is pt_bf16_s:
        return _fkey16(p.bits, 0x7F80)
    elif real_t is float:
        return _fkey32((<const uint32_t*>p)[0])
    else:
        return _fkey64((<const uint64_t*>p)[0])


ctypedef void (*keyrow_fn)(const char* p, Py_ssize_t n, Py_ssize_t stride, uint64_t flip,
                           uint64_t* out) noexcept nogil


cdef void _keyrow(const real_t* p, Py_ssize_t n, Py_ssize_t stride, uint64_t flip,
                  uint64_t* out) noexcept nogil:
    """Keys of n elements at element stride ``stride``, xor ``flip``."""
    cdef Py_ssize_t j
    if stride == 1:
        for j in range(n):
            out[j] = _key(&p[j]) ^ flip
    else:
        for j in range(n):
            out[j] = _key(&p[j * stride]) ^ flip


# --------------------------------------------------------------------------
# native comparisons (searchsorted) and loads
# --------------------------------------------------------------------------
cdef inline bint _ge(const real_t* a, const real_t* b) noexcept nogil:
    if real_t is pt_bool_s:
        return a.v >= b.v
    elif real_t is pt_half_s:
        return ptc_half_to_float(a.bits) >= ptc_half_to_float(b.bits)
    elif real_t is pt_bf16_s:
        return ptc_bf16_to_float(a.bits) >= ptc_bf16_to_float(b.bits)
    else:
        return a[0] >= b[0]


cdef inline bint _gt(const real_t* a, const real_t* b) noexcept nogil:
    if real_t is pt_bool_s:
        return a.v > b.v
    elif real_t is pt_half_s:
        return ptc_half_to_float(a.bits) > ptc_half_to_float(b.bits)
    elif real_t is pt_bf16_s:
        return ptc_bf16_to_float(a.bits) > ptc_bf16_to_float(b.bits)
    else:
        return a[0] > b[0]


cdef inline double _ld_f64(const real_t* p) noexcept nogil:
    if real_t is pt_bool_s:
        return <double>p.v
    elif real_t is pt_half_s:
        return <double>ptc_half_to_float(p.bits)
    elif real_t is pt_bf16_s:
        return <double>ptc_bf16_to_float(p.bits)
    else:
        return <double>p[0]


# --------------------------------------------------------------------------
# stable sort of (key, index) pairs
# --------------------------------------------------------------------------
cdef enum:
    _INSERTION_MAX = 24


cdef inline void _insert_at(uint64_t* k, int64_t* ix, Py_ssize_t j, uint64_t kk,
                            int64_t vv) noexcept nogil:
    """Insert (kk, vv) into the sorted k[:j] (slot j free), after any equal keys."""
    while j > 0 and k[j - 1] > kk:
        k[j] = k[j - 1]
        ix[j] = ix[j - 1]
        j -= 1
    k[j] = kk
    ix[j] = vv


cdef void _insertion_sort(uint64_t* k, int64_t* ix, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(1, n):
        _insert_at(k, ix, i, k[i], ix[i])


cdef bint _radix_sort(uint64_t* k, int64_t* ix, uint64_t* kb, int64_t* ib,
                      Py_ssize_t n, int width) noexcept nogil:
    """Stable sort of keys ``k`` (``width`` bytes used) carrying ``ix``.

    ``kb``/``ib`` are scratch of n entries.  Returns True when the result
    ended in ``kb``/``ib`` instead of ``k``/``ix``.
    """
    cdef Py_ssize_t cnt[8][256]
    cdef Py_ssize_t i, s, t, p
    cdef int b, sh, d
    cdef bint sorted_ = True
    cdef bint swapped = False
    cdef uint64_t* sk
    cdef int64_t* si
    cdef uint64_t* dk
    cdef int64_t* di
    cdef uint64_t* tk
    cdef int64_t* ti
    cdef uint64_t key
    if n < 2:
        return False
    for i in range(1, n):
        if k[i] < k[i - 1]:
            sorted_ = False
            break
    if sorted_:
        return False
    if n <= _INSERTION_MAX:
        _insertion_sort(k, ix, n)
        return False
    memset(cnt, 0, sizeof(cnt))
    for i in range(n):
        key = k[i]
        for b in range(width):
            cnt[b][(key >> (8 * b)) & 0xFF] += 1
    sk = k
    si = ix
    dk = kb
    di = ib
    for b in range(width):
        sh = 8 * b
        if cnt[b][(sk[0] >> sh) & 0xFF] == n:
            continue                        # constant digit
        s = 0
        for d in range(256):
            t = cnt[b][d]
            cnt[b][d] = s
            s += t
        for i in range(n):
            key = sk[i]
            d = (key >> sh) & 0xFF
            p = cnt[b][d]
            cnt[b][d] = p + 1
            dk[p] = key
            di[p] = si[i]
        tk = sk
        sk = dk
        dk = tk
        ti = si
        si = di
        di = ti
        swapped = not swapped
    return swapped


cdef void _quickselect(uint64_t* a, int64_t* ix, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Move the element of rank k to position k: the median-of-three
    quickselect of PyTorch's kthvalue (same swaps, so the same index among
    ties)."""
    cdef Py_ssize_t L = 0, R = n - 1, P, i, j
    cdef uint64_t piv, tk
    cdef int64_t tv
    while True:
        if R <= L:
            return
        if R == L + 1:
            if a[L] > a[R]:
                tk = a[L]; a[L] = a[R]; a[R] = tk
                tv = ix[L]; ix[L] = ix[R]; ix[R] = tv
            return
        P = (L + R) >> 1
        tk = a[P]; a[P] = a[L + 1]; a[L + 1] = tk
        tv = ix[P]; ix[P] = ix[L + 1]; ix[L + 1] = tv
        if a[L + 1] > a[R]:
            tk = a[L + 1]; a[L + 1] = a[R]; a[R] = tk
            tv = ix[L + 1]; ix[L + 1] = ix[R]; ix[R] = tv
        if a[L] > a[R]:
            tk = a[L]; a[L] = a[R]; a[R] = tk
            tv = ix[L]; ix[L] = ix[R]; ix[R] = tv
        if a[L + 1] > a[L]:
            tk = a[L + 1]; a[L + 1] = a[L]; a[L] = tk
            tv = ix[L + 1]; ix[L + 1] = ix[L]; ix[L] = tv
        i = L + 1
        j = R
        piv = a[L]
        while True:
            i += 1
            while piv > a[i]:
                i += 1
            j -= 1
            while a[j] > piv:
                j -= 1
            if j < i:
                break
            tk = a[i]; a[i] = a[j]; a[j] = tk
            tv = ix[i]; ix[i] = ix[j]; ix[j] = tv
        tk = a[L]; a[L] = a[j]; a[j] = tk
        tv = ix[L]; ix[L] = ix[j]; ix[j] = tv
        if j <= k:
            L = i
        if j >= k:
            R = j - 1


# libstdc++'s selection and sorting algorithms, step for step, on (key, index) pairs compared
# by key only: PyTorch's CPU topk runs std::nth_element (then std::sort of the first k - 1)
# or, when k * 64 <= n, std::partial_sort over (value, index) pairs, so among equal values
# the indices it returns are the ones these algorithms leave; running the same moves returns
# the same indices.  torch's CPU mode sorts (value, index) pairs with std::sort too: the keys
# are then the values themselves (``<`` on doubles, NaNs included, as torch compares them).
ctypedef fused skey_t:
    uint64_t
    int64_t
    double


cdef inline void _pswap(skey_t* a, int64_t* ix, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef skey_t tk = a[i]
    cdef int64_t tv = ix[i]
    a[i] = a[j]; a[j] = tk
    ix[i] = ix[j]; ix[j] = tv


cdef inline void _move_median_to_first(skey_t* a, int64_t* ix, Py_ssize_t result,
                                       Py_ssize_t i, Py_ssize_t j, Py_ssize_t k) noexcept nogil:
    if a[i] < a[j]:
        if a[j] < a[k]:
            _pswap(a, ix, result, j)
        elif a[i] < a[k]:
            _pswap(a, ix, result, k)
        else:
            _pswap(a, ix, result, i)
    elif a[i] < a[k]:
        _pswap(a, ix, result, i)
    elif a[j] < a[k]:
        _pswap(a, ix, result, k)
    else:
        _pswap(a, ix, result, j)


cdef Py_ssize_t _partition_pivot(skey_t* a, int64_t* ix, Py_ssize_t first,
                                 Py_ssize_t last) noexcept nogil:
    """std::__unguarded_partition_pivot: median of three to ``first``, then Hoare's
    partition of [first + 1, last) around it; returns the cut."""
    cdef Py_ssize_t lo = first + 1, hi = last
    cdef skey_t piv
    _move_median_to_first(a, ix, first, first + 1, first + (last - first) // 2, last - 1)
    piv = a[first]
    while True:
        while a[lo] < piv:
            lo += 1
        hi -= 1
        while piv < a[hi]:
            hi -= 1
        if not lo < hi:
            return lo
        _pswap(a, ix, lo, hi)
        lo += 1


cdef inline void _linear_insert(skey_t* a, int64_t* ix, Py_ssize_t last) noexcept nogil:
    """std::__unguarded_linear_insert (its walk stops at a[0] at the latest: NaN keys break
    the ordering the unguarded loop relies on)."""
    cdef skey_t vk = a[last]
    cdef int64_t vi = ix[last]
    cdef Py_ssize_t nxt = last - 1
    while nxt >= 0 and vk < a[nxt]:
        a[last] = a[nxt]; ix[last] = ix[nxt]
        last = nxt
        nxt -= 1
    a[last] = vk; ix[last] = vi


cdef void _stl_insertion_sort(skey_t* a, int64_t* ix, Py_ssize_t first,
                          Py_ssize_t last) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef skey_t vk
    cdef int64_t vi
    if first == last:
        return
    for i in range(first + 1, last):
        if a[i] < a[first]:
            vk = a[i]; vi = ix[i]
            j = i
            while j > first:
                a[j] = a[j - 1]; ix[j] = ix[j - 1]
                j -= 1
            a[first] = vk; ix[first] = vi
        else:
            _linear_insert(a, ix, i)


cdef void _adjust_heap(skey_t* a, int64_t* ix, Py_ssize_t hole, Py_ssize_t n,
                       skey_t vk, int64_t vi) noexcept nogil:
    """std::__adjust_heap (then __push_heap) of the max-heap a[0:n]."""
    cdef Py_ssize_t top = hole, second = hole, parent
    while second < (n - 1) // 2:
        second = 2 * (second + 1)
        if a[second] < a[second - 1]:
            second -= 1
        a[hole] = a[second]; ix[hole] = ix[second]
        hole = second
    if (n & 1) == 0 and second == (n - 2) // 2:
        second = 2 * (second + 1)
        a[hole] = a[second - 1]; ix[hole] = ix[second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and a[parent] < vk:
        a[hole] = a[parent]; ix[hole] = ix[parent]
        hole = parent
        parent = (hole - 1) // 2
    a[hole] = vk; ix[hole] = vi


cdef inline void _pop_heap(skey_t* a, int64_t* ix, Py_ssize_t n, Py_ssize_t result) noexcept nogil:
    """std::__pop_heap(a, a + n, a + result)."""
    cdef skey_t vk = a[result]
    cdef int64_t vi = ix[result]
    a[result] = a[0]; ix[result] = ix[0]
    _adjust_heap(a, ix, 0, n, vk, vi)


cdef void _heap_select(skey_t* a, int64_t* ix, Py_ssize_t middle, Py_ssize_t last) noexcept nogil:
    """std::__heap_select(a, a + middle, a + last): make_heap, then every smaller later
    element replaces the top."""
    cdef Py_ssize_t parent, i
    if middle >= 2:
        parent = (middle - 2) // 2
        while True:
            _adjust_heap(a, ix, parent, middle, a[parent], ix[parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, last):
        if a[i] < a[0]:
            _pop_heap(a, ix, middle, i)


cdef void _sort_heap(skey_t* a, int64_t* ix, Py_ssize_t n) noexcept nogil:
    while n > 1:
        n -= 1
        _pop_heap(a, ix, n, n)


cdef inline Py_ssize_t _lg(Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t r = 0
    while n > 1:
        n >>= 1
        r += 1
    return r


cdef void _nth_element(skey_t* a, int64_t* ix, Py_ssize_t nth, Py_ssize_t n) noexcept nogil:
    """std::nth_element(a, a + nth, a + n): libstdc++'s introselect."""
    cdef Py_ssize_t first = 0, last = n, depth, cut
    if n == 0 or nth == n:
        return
    depth = _lg(n) * 2
    while last - first > 3:
        if depth == 0:
            _heap_select(a + first, ix + first, nth + 1 - first, last - first)
            _pswap(a, ix, first, nth)
            return
        depth -= 1
        cut = _partition_pivot(a, ix, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _stl_insertion_sort(a, ix, first, last)


cdef void _introsort_loop(skey_t* a, int64_t* ix, Py_ssize_t first, Py_ssize_t last,
                          Py_ssize_t depth) noexcept nogil:
    cdef Py_ssize_t cut
    while last - first > 16:
        if depth == 0:
            _heap_select(a + first, ix + first, last - first, last - first)
            _sort_heap(a + first, ix + first, last - first)
            return
        depth -= 1
        cut = _partition_pivot(a, ix, first, last)
        _introsort_loop(a, ix, cut, last, depth)
        last = cut


cdef void _std_sort(skey_t* a, int64_t* ix, Py_ssize_t n) noexcept nogil:
    """std::sort(a, a + n): introsort, then the final insertion sort."""
    cdef Py_ssize_t i
    if n == 0:
        return
    _introsort_loop(a, ix, 0, n, _lg(n) * 2)
    if n > 16:
        _stl_insertion_sort(a, ix, 0, 16)
        for i in range(16, n):
            _linear_insert(a, ix, i)
    else:
        _stl_insertion_sort(a, ix, 0, n)


# --------------------------------------------------------------------------
# rows of a tensor along one dim
# --------------------------------------------------------------------------
cdef enum:
    _MAX_OPS = 4

ctypedef struct _rows_t:
    int nd                                   # number of outer dims
    Py_ssize_t nrows
    Py_ssize_t shape[PT_MAX_DIMS]
    Py_ssize_t st[_MAX_OPS][PT_MAX_DIMS]     # element strides of the outer dims


cdef inline void _row_offsets(const _rows_t* R, Py_ssize_t r, Py_ssize_t* offs) noexcept nogil:
    cdef int k, o
    cdef Py_ssize_t q
    for o in range(_MAX_OPS):
        offs[o] = 0
    k = R.nd - 1
    while k >= 0:
        q = r % R.shape[k]
        r = r // R.shape[k]
        for o in range(_MAX_OPS):
            offs[o] += q * R.st[o][k]
        k -= 1


cdef int _init_rows(_rows_t* R, _TensorBase src, int dim, ops) except -1:
    """Outer shape = ``src``'s shape without ``dim``; ``ops`` lists up to
    _MAX_OPS tensors (or None) iterated alongside.  An operand whose ndim is
    not src's (a 1-D boundaries tensor) repeats for every row (stride 0)."""
    cdef int d, k, o
    cdef _TensorBase t
    if len(ops) > _MAX_OPS:
        raise ValueError("too many operands")
    memset(R, 0, sizeof(_rows_t))
    k = 0
    R.nrows = 1
    for d in range(src._ndim):
        if d == dim:
            continue
        R.shape[k] = src._shape[d]
        R.nrows *= src._shape[d]
        for o in range(len(ops)):
            if ops[o] is None:
                continue
            t = <_TensorBase>ops[o]
            if t._ndim == src._ndim:
                if t._shape[d] != src._shape[d]:
                    raise ValueError("operand shapes differ outside the row dim")
                R.st[o][k] = t._strides[d]
        k += 1
    R.nd = k
    return 0


cdef inline char* _elem(_TensorBase t, Py_ssize_t off) except? NULL:
    return t._ptr() + off * t._dtype.itemsize


ctypedef int (*range_fn)(const void* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil


cdef int _run(range_fn fn, const void* job, Py_ssize_t nrows, Py_ssize_t work) noexcept nogil:
    """Run fn over rows [0, nrows) in contiguous blocks, one per thread when
    worthwhile.  Returns the sum of the blocks' error codes."""
    cdef int nthreads = get_num_threads()
    cdef Py_ssize_t nchunks, c
    cdef int err = 0
    if nrows <= 0:
        return 0
    if nthreads <= 1 or nrows < 2 or work < parallel_grain():
        return fn(job, 0, nrows)
    nchunks = nthreads if nrows >= nthreads else nrows
    for c in prange(nchunks, num_threads=nthreads, schedule='static'):
        err += fn(job, c * nrows // nchunks, (c + 1) * nrows // nchunks)
    return err


cdef int _mode_rows_range(skey_t* x, Py_ssize_t n, skey_t* vals, int64_t* idx, Py_ssize_t r0,
                          Py_ssize_t r1) noexcept nogil:
    """torch's CPU mode of rows r0..r1 of ``x`` (n per row): std::sort of (value, index) pairs
    by value, then the longest run of equal values (the first such run: the smallest value
    among ties; each NaN is a run of its own, ``!=`` being true) and the index of its last
    pair in that order (for n <= 16, the value's last occurrence in the row)."""
    cdef skey_t* v = <skey_t*>ptc_scratch_malloc(n * sizeof(skey_t))
    cdef int64_t* ix = <int64_t*>ptc_scratch_malloc(n * sizeof(int64_t))
    cdef Py_ssize_t r, i, run, best
    if v == NULL or ix == NULL:
        free(v)
        free(ix)
        return 1
    for r in range(r0, r1):
        for i in range(n):
            v[i] = x[r * n + i]
            ix[i] = i
        _std_sort(v, ix, n)
        run = 0
        best = 0
        for i in range(n):
            run += 1
            if i == n - 1 or v[i] != v[i + 1]:
                if run > best:
                    best = run
                    vals[r] = v[i]
                    idx[r] = ix[i]
                run = 0
    free(v)
    free(ix)
    return 0


def nth_element_tie_index(Py_ssize_t n):
    """The index libstdc++'s std::nth_element(first, first, first + n) leaves at ``first``
    on the indices 0..n-1 when no element compares less than another: torch's nanmedian
    index of an all-NaN row (its NaNs compare neither less nor equal)."""
    cdef uint64_t* keys
    cdef int64_t* ix
    cdef Py_ssize_t i
    cdef int64_t r
    if n <= 0:
        return 0
    keys = <uint64_t*>ptc_scratch_malloc(n * sizeof(uint64_t))
    ix = <int64_t*>ptc_scratch_malloc(n * sizeof(int64_t))
    if keys == NULL or ix == NULL:
        free(keys)
        free(ix)
        raise MemoryError(f"nanmedian: out of memory for {n * 16} bytes of tie-index scratch")
    for i in range(n):
        keys[i] = 0
        ix[i] = i
    _nth_element(keys, ix, 0, n)
    r = ix[0]
    free(keys)
    free(ix)
    return r


ctypedef struct _mode_job:
    char* x
    char* vals
    int64_t* idx
    Py_ssize_t n
    bint f64


cdef int _mode_range(const void* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef const _mode_job* J = <const _mode_job*>job
    if J.f64:
        return _mode_rows_range(<double*>J.x, J.n, <double*>J.vals, J.idx, r0, r1)
    return _mode_rows_range(<int64_t*>J.x, J.n, <int64_t*>J.vals, J.idx, r0, r1)


def mode_rows(_TensorBase x not None, _TensorBase vals not None, _TensorBase idx not None):
    """torch's mode (values into ``vals``, int64 indices into ``idx``) of each row of the
    contiguous 2-D float64 or int64 ``x``."""
    cdef _mode_job J
    cdef int err
    if x._dtype.num != PT_FLOAT64 and x._dtype.num != PT_INT64:
        raise TypeError("mode_rows: float64 or int64 rows expected")
    J.x = x._ptr()
    J.vals = vals._ptr()
    J.idx = <int64_t*>idx._ptr()
    J.n = x._shape[1]
    J.f64 = x._dtype.num == PT_FLOAT64
    if J.n == 0:
        return
    ptc_kernel_enter()
    with nogil:
        try:
            err = _run(_mode_range, &J, x._shape[0], x._numel)
        finally:
            ptc_kernel_exit()
    if err:
        raise MemoryError("mode: out of memory for a row's sort")


cdef inline void _gather(const char* src, Py_ssize_t sst, const int64_t* ix, Py_ssize_t n,
                         char* dst, Py_ssize_t dst_st, int isz) noexcept nogil:
    """dst[j] = src[ix[j]] for n elements of isz bytes; strides in bytes."""
    cdef Py_ssize_t j
    if isz == 1:
        for j in range(n):
            (<uint8_t*>(dst + j * dst_st))[0] = (<const uint8_t*>(src + ix[j] * sst))[0]
    elif isz == 2:
        for j in range(n):
            (<uint16_t*>(dst + j * dst_st))[0] = (<const uint16_t*>(src + ix[j] * sst))[0]
    elif isz == 4:
        for j in range(n):
            (<uint32_t*>(dst + j * dst_st))[0] = (<const uint32_t*>(src + ix[j] * sst))[0]
    else:
        for j in range(n):
            (<uint64_t*>(dst + j * dst_st))[0] = (<const uint64_t*>(src + ix[j] * sst))[0]


cdef inline void _put_idx(char* dst, Py_ssize_t st, const int64_t* ix, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    if st == 8:
        memcpy(dst, ix, <size_t>n * 8)
    else:
        for j in range(n):
            (<int64_t*>(dst + j * st))[0] = ix[j]


# --------------------------------------------------------------------------
# dispatch tables
# --------------------------------------------------------------------------
ctypedef void (*search_fn)(const char* bd, Py_ssize_t M, Py_ssize_t bst,
                           const int64_t* sorter, Py_ssize_t sst,
                           const char* vals, Py_ssize_t N, Py_ssize_t vst,
                           char* out, Py_ssize_t ost, bint out32, bint right) noexcept nogil

ctypedef void (*minmax_fn)(const char* p, Py_ssize_t n, Py_ssize_t st,
                           double* dmin, double* dmax, int64_t* imin, int64_t* imax) noexcept nogil

cdef object _CPU = _C._to_device("cpu")
cdef keyrow_fn _KEYROW[PT_NUM_TYPES]
cdef search_fn _SEARCH[PT_NUM_TYPES]
cdef minmax_fn _MINMAX[PT_NUM_TYPES]
cdef bint _FLOATING[PT_NUM_TYPES]
cdef int _WIDTH[PT_NUM_TYPES]


# --------------------------------------------------------------------------
# sort / topk / kthvalue over rows
# --------------------------------------------------------------------------
ctypedef struct _rowjob_t:
    _rows_t rows
    keyrow_fn keyfn
    int width
    int isz
    uint64_t flip
    Py_ssize_t n                  # row length of the input
    Py_ssize_t k                  # topk: k; kthvalue: rank (0-based)
    bint sorted                   # topk: sorted output
    bint stable                   # sort: stable (else std::sort's order)
    const char* src
    Py_ssize_t src_st             # element stride along the dim
    char* vals                    # NULL: no values output
    Py_ssize_t vals_st
    char* inds
    Py_ssize_t inds_st


cdef inline void _job_row(const _rowjob_t* J, Py_ssize_t r, const char** s, char** v,
                          char** ix) noexcept nogil:
    cdef Py_ssize_t offs[_MAX_OPS]
    _row_offsets(&J.rows, r, offs)
    s[0] = J.src + offs[0] * J.isz
    v[0] = (J.vals + offs[1] * J.isz) if J.vals != NULL else NULL
    ix[0] = J.inds + offs[2] * 8


cdef int _sort_range(const void* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef const _rowjob_t* J = <const _rowjob_t*>job
    cdef Py_ssize_t n = J.n, r, j
    cdef uint64_t* k
    cdef int64_t* ix
    cdef uint64_t* kb
    cdef int64_t* ib
    cdef int64_t* res
    cdef const char* s
    cdef char* v
    cdef char* o
    cdef char* mem = <char*>ptc_scratch_malloc(<size_t>n * 32 + 1)
    if mem == NULL:
        return 1
    k = <uint64_t*>mem
    ix = <int64_t*>(mem + n * 8)
    kb = <uint64_t*>(mem + n * 16)
    ib = <int64_t*>(mem + n * 24)
    for r in range(r0, r1):
        _job_row(J, r, &s, &v, &o)
        J.keyfn(s, n, J.src_st, J.flip, k)
        for j in range(n):
            ix[j] = j
        res = ix
        if not J.stable:
            # PyTorch's unstable sort is std::sort over (value, index) pairs: its order
            # among equal values
            _std_sort(k, ix, n)
        elif _radix_sort(k, ix, kb, ib, n, J.width):
            res = ib
        _put_idx(o, J.inds_st * 8, res, n)
        if v != NULL:
            _gather(s, J.src_st * J.isz, res, n, v, J.vals_st * J.isz, J.isz)
    free(mem)
    return 0


# Above this k (or a tenth of the row) the insertion selection below costs more than
# nth_element.
cdef enum:
    _TOPK_INSERT_MAX = 32


cdef bint _topk_insert(const uint64_t* key, Py_ssize_t n, Py_ssize_t kk, int64_t* ix) noexcept nogil:
    """The ``kk`` smallest keys' indices, in increasing key order, into ``ix[:kk]``, by one
    pass that keeps them in a sorted buffer (the comparison with the buffer's largest is
    rarely true, so it is predicted).  True only when the answer is unique: the ``kk`` keys
    distinct and no other key equal to the largest of them (the keys passed over or
    evicted that equalled the buffer's largest at the time are remembered: the last of
    them is the smallest, and only a tie with the final largest matters).  Every
    selection algorithm then gives the same output, std::nth_element and
    std::partial_sort included, so the caller needs torch's algorithms only when this
    returns False (ties, NaNs).  It also answers False, leaving the row to
    nth_element, when insertions are frequent (keys in decreasing order, the
    insertion's worst case: each one shifts the buffer)."""
    cdef uint64_t bk[_TOPK_INSERT_MAX]
    cdef uint64_t x, thr, tie = 0
    cdef bint tied = False
    cdef Py_ssize_t j, i
    cdef Py_ssize_t budget = 8 + n // 8     # insertions before nth_element is cheaper
    cdef Py_ssize_t ties = 0                # keys equal to the current largest
    for j in range(kk):                 # the first kk, insertion-sorted
        _insert_at(bk, ix, j, key[j], j)
    thr = bk[kk - 1]                    # kept in a register
    for j in range(kk, n):
        x = key[j]
        if x <= thr:
            if x == thr:
                # passed over: a tie only if the largest never drops below it; many
                # of them with no drop (a row whose answer is a tie: relu's zeros)
                # go to torch's algorithm at once
                tie = x
                tied = True
                ties += 1
                if ties > 4:
                    return False
                continue
            _insert_at(bk, ix, kk - 1, x, j)      # over the largest
            if bk[kk - 1] == thr:
                tie = thr               # the evicted key equals the new largest
                tied = True
            else:
                ties = 0
            thr = bk[kk - 1]
            budget -= 1
            if budget < 0:
                return False
    if tied and tie == thr:
        return False                    # a key left out ties with the k-th: torch's order
    for i in range(1, kk):
        if bk[i - 1] == bk[i]:
            return False
    return True


cdef int _topk_range(const void* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """PyTorch's topk_impl_loop per row: (key, index) pairs, std::partial_sort when
    k * 64 <= n, else std::nth_element and, for sorted output, std::sort of the first
    k - 1 (the k-th is in place)."""
    cdef const _rowjob_t* J = <const _rowjob_t*>job
    cdef Py_ssize_t n = J.n, kk = J.k, r, j
    cdef uint64_t* k
    cdef int64_t* ix
    cdef const char* s
    cdef char* v
    cdef char* o
    cdef char* mem = <char*>ptc_scratch_malloc(<size_t>n * 16 + 1)
    if mem == NULL:
        return 1
    cdef bint try_insert = not (kk > _TOPK_INSERT_MAX or kk * 10 > n or
                                not (J.sorted or kk * 64 <= n))
    cdef int skip = 0               # rows left to skip the insertion pass for
    cdef int misses = 0
    k = <uint64_t*>mem
    ix = <int64_t*>(mem + n * 8)
    for r in range(r0, r1):
        _job_row(J, r, &s, &v, &o)
        J.keyfn(s, n, J.src_st, J.flip, k)
        if skip > 0:
            skip -= 1
        if not try_insert or skip > 0 or not _topk_insert(k, n, kk, ix):
            # rows of one tensor tend to be alike: after an insertion pass that
            # found ties, the next rows go straight to torch's algorithms (the
            # same output: the pass only answers where it is unique), more rows
            # after each further miss
            if try_insert and skip == 0:
                misses = misses + 1 if misses < 5 else 5
                skip = 1 << misses
            # ties (or a large k): torch's algorithms, for torch's indices among equal keys
            for j in range(n):
                ix[j] = j
            if kk * 64 <= n:
                _heap_select(k, ix, kk, n)
                _sort_heap(k, ix, kk)
            else:
                _nth_element(k, ix, kk - 1, n)
                if J.sorted:
                    _std_sort(k, ix, kk - 1)
        else:
            misses = 0
        _put_idx(o, J.inds_st * 8, ix, kk)
        _gather(s, J.src_st * J.isz, ix, kk, v, J.vals_st * J.isz, J.isz)
    free(mem)
    return 0


cdef int _kth_range(const void* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef const _rowjob_t* J = <const _rowjob_t*>job
    cdef Py_ssize_t n = J.n, r, j
    cdef uint64_t* k
    cdef int64_t* ix
    cdef const char* s
    cdef char* v
    cdef char* o
    cdef char* mem = <char*>ptc_scratch_malloc(<size_t>n * 16 + 1)
    if mem == NULL:
        return 1
    k = <uint64_t*>mem
    ix = <int64_t*>(mem + n * 8)
    for r in range(r0, r1):
        _job_row(J, r, &s, &v, &o)
        J.keyfn(s, n, J.src_st, 0, k)
        for j in range(n):
            ix[j] = j
        _quickselect(k, ix, n, J.k)
        (<int64_t*>o)[0] = ix[J.k]
        _gather(s, J.src_st * J.isz, &ix[J.k], 1, v, 0, J.isz)
    free(mem)
    return 0


cdef int _setup_job(_rowjob_t* J, _TensorBase src, int dim, _TensorBase vals,
                    _TensorBase inds) except -1:
    cdef int t = src._dtype.num
    if t < 0 or t >= PT_NUM_TYPES or _KEYROW[t] == NULL:
        raise TypeError(f"sorting kernels do not support {src.dtype}")
    if inds._dtype.num != PT_INT64 or (vals is not None and vals._dtype.num != t):
        raise TypeError("sorting kernels: bad output dtypes")
    if src._ndim == 0 or dim < 0 or dim >= src._ndim:
        raise ValueError("sorting kernels need a dim of a tensor with >= 1 dims")
    _init_rows(&J.rows, src, dim, [src, vals, inds])
    J.keyfn = _KEYROW[t]
    J.width = _WIDTH[t]
    J.isz = src._dtype.itemsize
    J.n = src._shape[dim]
    J.src = src._ptr()
    J.src_st = src._strides[dim]
    J.vals = vals._ptr() if vals is not None else NULL
    J.vals_st = vals._strides[dim] if vals is not None else 0
    J.inds = inds._ptr()
    J.inds_st = inds._strides[dim]
    return 0


def sort(_TensorBase src, int dim, bint descending, bint stable, _TensorBase values,
         _TensorBase indices):
    """Sort of ``src`` along ``dim`` into ``values`` (or None) and ``indices``
    (int64), both of src's shape: stable, or in std::sort's order among equal
    elements as PyTorch's unstable CPU sort."""
    cdef _rowjob_t J
    cdef int err
    _setup_job(&J, src, dim, values, indices)
    if (values is not None and tuple(values.shape) != tuple(src.shape)) or \
            tuple(indices.shape) != tuple(src.shape):
        raise ValueError("sort kernel: output shapes differ from the input's")
    J.flip = _width_mask(J.width) if descending else 0
    J.k = 0
    J.stable = stable
    if J.n == 0 or J.rows.nrows == 0:
        return
    ptc_kernel_enter()
    with nogil:
        try:
            err = _run(_sort_range, &J, J.rows.nrows, src._numel)
        finally:
            ptc_kernel_exit()
    if err:
        raise MemoryError("sort: out of memory for the sort buffers")


def topk(_TensorBase src, int dim, Py_ssize_t k, bint largest, bint sorted, _TensorBase values,
         _TensorBase indices):
    """The k largest (smallest) elements along ``dim`` in PyTorch's order, its
    indices among ties (see ``_topk_range``)."""
    cdef _rowjob_t J
    cdef int err
    _setup_job(&J, src, dim, values, indices)
    if values is None or k < 0 or k > J.n or values._shape[dim] != k or indices._shape[dim] != k:
        raise ValueError("topk kernel: bad k or output shapes")
    J.flip = _width_mask(J.width) if largest else 0
    J.k = k
    J.sorted = sorted
    if k == 0 or J.rows.nrows == 0:
        return
    ptc_kernel_enter()
    with nogil:
        try:
            err = _run(_topk_range, &J, J.rows.nrows, src._numel)
        finally:
            ptc_kernel_exit()
    if err:
        raise _C.HostAllocationError("topk: out of memory for the selection buffers")


def topk_fast(x, k, dim, largest, sorted):
    """``(values, indices)`` of ``topk`` for the front-end's common call, or
    None to take its general path: a CPU tensor with dims of a real dtype
    the CPU topk takes (uint8 to float64, not bool), ``k`` and ``dim`` ints
    in range, ``largest`` and ``sorted`` bools.  The outputs are contiguous,
    as the general path's."""
    if not isinstance(x, _TensorBase) or type(k) is not int or type(dim) is not int \
            or type(largest) is not bool or type(sorted) is not bool:
        return None
    cdef _TensorBase t = <_TensorBase>x, values, indices
    cdef int num = t._dtype.num, nd = t._ndim, d
    cdef Py_ssize_t shape[PT_MAX_DIMS]
    if t._storage.device._type_code != 0 or nd == 0 or num < PT_UINT8 or num > PT_FLOAT64 \
            or _KEYROW[num] == NULL or not -nd <= dim < nd:
        return None
    d = dim + nd if dim < 0 else dim
    if not 0 <= k <= t._shape[d]:
        return None
    memcpy(shape, t._shape, nd * sizeof(Py_ssize_t))
    shape[d] = k
    values = _empty_contig(t._dtype, nd, shape, _CPU, False)
    indices = _empty_contig(dtype_from_num(PT_INT64), nd, shape, _CPU, False)
    if values._numel > 0:
        topk(t, d, k, largest, sorted, values, indices)
    return values, indices


def kthvalue(_TensorBase src, int dim, Py_ssize_t k, _TensorBase values, _TensorBase indices):
    """k-th smallest (1-based) along ``dim`` into keepdim-shaped outputs."""
    cdef _rowjob_t J
    cdef int err
    _setup_job(&J, src, dim, values, indices)
    if values is None or k < 1 or k > J.n or values._shape[dim] != 1 or indices._shape[dim] != 1:
        raise ValueError("kthvalue kernel: bad k or output shapes")
    J.flip = 0
    J.k = k - 1
    if J.rows.nrows == 0:
        return
    ptc_kernel_enter()
    with nogil:
        try:
            err = _run(_kth_range, &J, J.rows.nrows, src._numel)
        finally:
            ptc_kernel_exit()
    if err:
        raise _C.HostAllocationError("kthvalue: out of memory for the selection buffers")


# --------------------------------------------------------------------------
# searchsorted
# --------------------------------------------------------------------------
cdef void _search_row(const real_t* bd, Py_ssize_t M, Py_ssize_t bst,
                      const int64_t* sorter, Py_ssize_t sst,
                      const real_t* vals, Py_ssize_t N, Py_ssize_t vst,
                      char* out, Py_ssize_t ost, bint out32, bint right) noexcept nogil:
    """PyTorch's cus_lower_bound / cus_upper_bound for N values; strides in
    elements (out: of its own dtype)."""
    cdef Py_ssize_t i, lo, hi, mid
    cdef const real_t* v
    cdef const real_t* mv
    cdef bint go
    for i in range(N):
        v = &vals[i * vst]
        lo = 0
        hi = M
        # the probe sequence of PyTorch's loop (it decides the result when
        # NaNs break the order); the updates are written branch-free
        while lo < hi:
            mid = lo + ((hi - lo) >> 1)
            if sorter != NULL:
                mv = &bd[sorter[mid * sst] * bst]
            else:
                mv = &bd[mid * bst]
            if right:
                go = not _gt(mv, v)
            else:
                go = not _ge(mv, v)
            lo = (mid + 1) if go else lo
            hi = hi if go else mid
        if out32:
            (<int32_t*>out)[i * ost] = <int32_t>lo
        else:
            (<int64_t*>out)[i * ost] = lo


ctypedef struct _searchjob_t:
    _rows_t rows
    search_fn fn
    const char* bd
    Py_ssize_t M, bst
    const char* sorter
    Py_ssize_t sst
    const char* vals
    Py_ssize_t N, vst
    char* out
    Py_ssize_t ost
    int isz, osz
    bint out32, right


cdef int _search_range(const void* job, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef const _searchjob_t* J = <const _searchjob_t*>job
    cdef Py_ssize_t offs[_MAX_OPS]
    cdef Py_ssize_t r, i
    cdef const int64_t* so
    for r in range(r0, r1):
        _row_offsets(&J.rows, r, offs)
        so = NULL
        if J.sorter != NULL:
            so = <const int64_t*>(J.sorter + offs[3] * 8)
            for i in range(J.M):
                if so[i * J.sst] < 0 or so[i * J.sst] >= J.M:
                    return 1
        J.fn(J.bd + offs[0] * J.isz, J.M, J.bst, so, J.sst,
             J.vals + offs[1] * J.isz, J.N, J.vst,
             J.out + offs[2] * J.osz, J.ost, J.out32, J.right)
    return 0


def searchsorted(_TensorBase boundaries, _TensorBase values, _TensorBase out, bint right,
                 _TensorBase sorter=None):
    """Insertion points of ``values`` (..., N) in ``boundaries`` (..., M) or
    1-D, same dtype; ``out`` int32/int64 of values' shape; ``sorter`` int64
    of boundaries' shape or None.  Raises RuntimeError for sorter indices out
    of range."""
    cdef int t = boundaries._dtype.num
    cdef bint one_d = boundaries._ndim == 1
    if values._dtype.num != t or _SEARCH[t] == NULL:
        raise TypeError("searchsorted kernel: unsupported or mismatched dtypes")
    if values._ndim < 1 or boundaries._ndim < 1 or tuple(out.shape) != tuple(values.shape):
        raise ValueError("searchsorted kernel: bad shapes")
    if out._dtype.num != PT_INT32 and out._dtype.num != PT_INT64:
        raise TypeError("searchsorted kernel: bad output dtype")
    if not one_d and boundaries._ndim != values._ndim:
        raise ValueError("searchsorted kernel: bad shapes")
    if sorter is not None and (sorter._dtype.num != PT_INT64 or
                               tuple(sorter.shape) != tuple(boundaries.shape)):
        raise ValueError("searchsorted kernel: bad sorter")
    if not one_d:
        for d in range(boundaries._ndim - 1):
            if boundaries._shape[d] != values._shape[d]:
                raise ValueError("searchsorted kernel: leading dims differ")
    _search_into(boundaries, values, out, right, sorter)


def searchsorted_fast(boundaries, values, out_int32, right):
    """``searchsorted(boundaries, values, out_int32=, right=)`` for a 1-D CPU
    ``boundaries`` (fewer than 2**31 - 1 elements) and CPU ``values`` of at
    least one dim, both float32/float64/int32/int64 of one dtype, flags of
    type bool: a new contiguous int32/int64 tensor of ``values``' shape;
    None for anything else (the caller's full path checks and raises)."""
    if not isinstance(boundaries, _TensorBase) or not isinstance(values, _TensorBase) \
            or (out_int32 is not True and out_int32 is not False) \
            or (right is not True and right is not False):
        return None
    cdef _TensorBase bd = <_TensorBase>boundaries, v = <_TensorBase>values
    cdef int t = bd._dtype.num
    if bd._ndim != 1 or v._ndim < 1 or v._dtype.num != t or (
            t != PT_FLOAT32 and t != PT_FLOAT64 and t != PT_INT32 and t != PT_INT64) \
            or bd._storage.device._type_code != 0 or v._storage.device._type_code != 0 \
            or bd._shape[0] >= 2147483647:
        return None
    cdef _TensorBase out = _empty_contig(dtype_from_num(PT_INT32 if out_int32 else PT_INT64),
                                         v._ndim, v._shape, v._storage.device, False)
    _search_into(bd, v, out, right, None)
    return out


cdef int _search_into(_TensorBase boundaries, _TensorBase values, _TensorBase out, bint right,
                      _TensorBase sorter) except -1:
    """The searchsorted kernel over operands the callers checked."""
    cdef _searchjob_t J
    cdef int last, err
    cdef int t = boundaries._dtype.num
    cdef bint one_d = boundaries._ndim == 1
    last = values._ndim - 1
    _init_rows(&J.rows, values, last, [boundaries, values, out, sorter])
    J.fn = _SEARCH[t]
    J.isz = boundaries._dtype.itemsize
    J.osz = out._dtype.itemsize
    J.out32 = out._dtype.num == PT_INT32
    J.right = right
    J.bd = boundaries._ptr()
    J.M = boundaries._shape[boundaries._ndim - 1]
    J.bst = boundaries._strides[boundaries._ndim - 1]
    J.sorter = sorter._ptr() if sorter is not None else NULL
    J.sst = sorter._strides[sorter._ndim - 1] if sorter is not None else 0
    J.vals = values._ptr()
    J.N = values._shape[last]
    J.vst = values._strides[last]
    J.out = out._ptr()
    J.ost = out._strides[last]
    if J.N == 0 or J.rows.nrows == 0:
        return 0
    ptc_kernel_enter()
    with nogil:
        try:
            err = _run(_search_range, &J, J.rows.nrows, values._numel * 8)
        finally:
            ptc_kernel_exit()
    if err:
        raise RuntimeError("torch.searchsorted(): sorter index out of range")
    return 0


# --------------------------------------------------------------------------
# unique
# --------------------------------------------------------------------------
def unique_flat(_TensorBase src, bint do_sort, _TensorBase perm, _TensorBase gid):
    """Group the elements of 1-D ``src``: ``perm`` (int64, n) receives the
    stable sort order (identity when not ``do_sort``), ``gid`` (int64, n)
    the group number of the i-th element in that order (NaNs are never
    equal).  Returns the number of groups."""
    cdef int t = src._dtype.num
    cdef Py_ssize_t n, i
    cdef uint64_t* k
    cdef int64_t* ix
    cdef char* mem
    cdef int64_t* pp
    cdef int64_t* gg
    cdef int64_t g = 0
    cdef uint64_t nan_key
    cdef bint flt
    cdef const char* sp
    cdef Py_ssize_t sst
    if t < 0 or t >= PT_NUM_TYPES or _KEYROW[t] == NULL:
        raise TypeError(f"unique does not support {src.dtype}")
    if src._ndim != 1 or perm._ndim != 1 or gid._ndim != 1:
        raise ValueError("unique_flat kernel: 1-D tensors expected")
    n = src._shape[0]
    if perm._shape[0] != n or gid._shape[0] != n or perm._dtype.num != PT_INT64 or \
            gid._dtype.num != PT_INT64 or not perm._is_contig() or not gid._is_contig():
        raise ValueError("unique_flat kernel: bad outputs")
    if n == 0:
        return 0
    flt = _FLOATING[t]
    nan_key = _width_mask(_WIDTH[t])
    pp = <int64_t*>perm._ptr()
    gg = <int64_t*>gid._ptr()
    mem = <char*>ptc_scratch_malloc(<size_t>n * 24)
    if mem == NULL:
        raise MemoryError("unique: out of memory")
    k = <uint64_t*>mem
    ix = <int64_t*>(mem + n * 8)
    sp = src._ptr()
    sst = src._strides[0]
    ptc_kernel_enter()
    with nogil:
        try:
            _KEYROW[t](sp, n, sst, 0, k)
            for i in range(n):
                pp[i] = i
            if do_sort:
                # ix / k + 2n region as scratch; result copied into pp when needed
                if _radix_sort(k, pp, <uint64_t*>(mem + n * 16), ix, n, _WIDTH[t]):
                    memcpy(pp, ix, <size_t>n * 8)
                    memcpy(k, mem + n * 16, <size_t>n * 8)
            gg[0] = 0
            for i in range(1, n):
                if k[i] != k[i - 1] or (flt and k[i] == nan_key):
                    g += 1
                gg[i] = g
        finally:
            ptc_kernel_exit()
    free(mem)
    return g + 1


cdef inline bint _row_lt(const uint64_t* keys, Py_ssize_t R, int64_t a, int64_t b) noexcept nogil:
    cdef const uint64_t* x = &keys[a * R]
    cdef const uint64_t* y = &keys[b * R]
    cdef Py_ssize_t c
    for c in range(R):
        if x[c] != y[c]:
            return x[c] < y[c]
    return False


cdef void _merge_sort_rows(int64_t* a, int64_t* buf, Py_ssize_t S, const uint64_t* keys,
                           Py_ssize_t R) noexcept nogil:
    """Stable bottom-up merge sort of row numbers ``a`` by lexicographic key
    rows; runs of 16 by insertion first."""
    cdef Py_ssize_t i, j, lo, mid, hi, w, p, q, o
    cdef int64_t v
    cdef int64_t* src = a
    cdef int64_t* dst = buf
    cdef int64_t* tmp
    lo = 0
    while lo < S:
        hi = lo + 16 if lo + 16 < S else S
        for i in range(lo + 1, hi):
            v = a[i]
            j = i
            while j > lo and _row_lt(keys, R, v, a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = v
        lo = hi
    w = 16
    while w < S:
        lo = 0
        while lo < S:
            mid = lo + w if lo + w < S else S
            hi = lo + 2 * w if lo + 2 * w < S else S
            p = lo
            q = mid
            o = lo
            while p < mid and q < hi:
                if _row_lt(keys, R, src[q], src[p]):
                    dst[o] = src[q]
                    q += 1
                else:
                    dst[o] = src[p]
                    p += 1
                o += 1
            while p < mid:
                dst[o] = src[p]
                p += 1
                o += 1
            while q < hi:
                dst[o] = src[q]
                q += 1
                o += 1
            lo = hi
        tmp = src
        src = dst
        dst = tmp
        w *= 2
    if src != a:
        memcpy(a, src, <size_t>S * 8)


def unique_rows(_TensorBase mat, bint do_sort, _TensorBase perm, _TensorBase gid):
    """As unique_flat for the rows of a contiguous 2-D ``mat`` (S, R):
    lexicographic stable order; rows containing NaN are never equal."""
    cdef int t = mat._dtype.num
    cdef Py_ssize_t S, R, i, c
    cdef uint64_t* keys
    cdef int64_t* buf
    cdef int64_t* pp
    cdef int64_t* gg
    cdef int64_t g = 0
    cdef uint64_t nan_key
    cdef bint flt, same
    cdef const char* mp = mat._ptr()
    if t < 0 or t >= PT_NUM_TYPES or _KEYROW[t] == NULL:
        raise TypeError(f"unique does not support {mat.dtype}")
    if mat._ndim != 2 or not mat._is_contig():
        raise ValueError("unique_rows kernel: contiguous 2-D input expected")
    S = mat._shape[0]
    R = mat._shape[1]
    if perm._ndim != 1 or gid._ndim != 1 or perm._shape[0] != S or gid._shape[0] != S or \
            perm._dtype.num != PT_INT64 or gid._dtype.num != PT_INT64 or \
            not perm._is_contig() or not gid._is_contig():
        raise ValueError("unique_rows kernel: bad outputs")
    if S == 0:
        return 0
    flt = _FLOATING[t]
    nan_key = _width_mask(_WIDTH[t])
    pp = <int64_t*>perm._ptr()
    gg = <int64_t*>gid._ptr()
    keys = <uint64_t*>ptc_scratch_malloc(<size_t>(S * R) * 8 + 8)
    buf = <int64_t*>ptc_scratch_malloc(<size_t>S * 8 + 8)
    if keys == NULL or buf == NULL:
        free(keys)
        free(buf)
        raise MemoryError("unique: out of memory")
    ptc_kernel_enter()
    with nogil:
        try:
            _KEYROW[t](mp, S * R, 1, 0, keys)
            for i in range(S):
                pp[i] = i
            if do_sort:
                _merge_sort_rows(pp, buf, S, keys, R)
            gg[0] = 0
            for i in range(1, S):
                same = True
                for c in range(R):
                    if keys[pp[i] * R + c] != keys[pp[i - 1] * R + c] or \
                            (flt and keys[pp[i] * R + c] == nan_key):
                        same = False
                        break
                if not same:
                    g += 1
                gg[i] = g
        finally:
            ptc_kernel_exit()
    free(keys)
    free(buf)
    return g + 1


def unique_finish(_TensorBase src not None, Py_ssize_t esize, Py_ssize_t est, _TensorBase perm not None,
                  _TensorBase gid not None, _TensorBase out not None, _TensorBase inverse, _TensorBase counts):
    """Scatter the groups found by unique_flat/unique_rows.

    Element i of ``src`` is the ``esize`` bytes at byte offset ``i * est``
    (an element of a 1-D tensor, or a row of a contiguous 2-D one); ``out``
    (contiguous, G elements of esize bytes) receives the first element of
    every group, ``inverse`` (int64, n, or None) the group of every element,
    ``counts`` (int64, G, or None) the group sizes."""
    cdef Py_ssize_t n = perm._shape[0], i, G
    cdef const int64_t* pp = <const int64_t*>perm._ptr()
    cdef const int64_t* gg = <const int64_t*>gid._ptr()
    cdef const char* sp = src._ptr()
    cdef char* op = out._ptr()
    cdef int64_t* inv = NULL
    cdef int64_t* cnt = NULL
    cdef Py_ssize_t inv_st = 0
    if not out._is_contig() or gid._shape[0] != n:
        raise ValueError("unique_finish kernel: bad arguments")
    G = gg[n - 1] + 1 if n > 0 else 0
    if out._numel * out._dtype.itemsize != G * esize:
        raise ValueError("unique_finish kernel: output size mismatch")
    if inverse is not None:
        if inverse._numel != n or inverse._dtype.num != PT_INT64 or not inverse._is_contig():
            raise ValueError("unique_finish kernel: bad inverse")
        inv = <int64_t*>inverse._ptr()
    if counts is not None:
        if counts._numel != G or counts._dtype.num != PT_INT64 or not counts._is_contig():
            raise ValueError("unique_finish kernel: bad counts")
        cnt = <int64_t*>counts._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if cnt != NULL:
                memset(cnt, 0, <size_t>G * 8)
            for i in range(n):
                if i == 0 or gg[i] != gg[i - 1]:
                    memcpy(op + gg[i] * esize, sp + pp[i] * est, <size_t>esize)
                if inv != NULL:
                    inv[pp[i]] = gg[i]
                if cnt != NULL:
                    cnt[gg[i]] += 1
        finally:
            ptc_kernel_exit()


def unique_consecutive_counts(_TensorBase gid not None, _TensorBase counts not None):
    """counts[g] = size of group g (gid non-decreasing)."""
    cdef Py_ssize_t n = gid._shape[0], i
    cdef const int64_t* gg = <const int64_t*>gid._ptr()
    cdef int64_t* cnt = <int64_t*>counts._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            memset(cnt, 0, <size_t>counts._numel * 8)
            for i in range(n):
                cnt[gg[i]] += 1
        finally:
            ptc_kernel_exit()


# --------------------------------------------------------------------------
# min / max (histc range, bincount size)
# --------------------------------------------------------------------------
cdef extern from "ptc_int_minmax.h" nogil:
    void ptc_minmax_i64(const int64_t* p, Py_ssize_t n, int64_t* lo, int64_t* hi)
    void ptc_minmax_i32(const int32_t* p, Py_ssize_t n, int32_t* lo, int32_t* hi)


cdef void _minmax(const real_t* p, Py_ssize_t n, Py_ssize_t st, double* dmin, double* dmax,
                  int64_t* imin, int64_t* imax) noexcept nogil:
    """NaN-propagating min/max as doubles for floating types, exact int64
    for integer types (n >= 1)."""
    cdef Py_ssize_t j
    cdef double x, lo, hi
    cdef int64_t y, ilo, ihi
    cdef int32_t ilo32, ihi32
    if real_t is pt_half_s or real_t is pt_bf16_s or real_t is float or real_t is double:
        lo = _ld_f64(p)
        hi = lo
        for j in range(1, n):
            x = _ld_f64(&p[j * st])
            if x != x:
                lo = x
                hi = x
                break
            if x < lo:
                lo = x
            if x > hi:
                hi = x
        dmin[0] = lo
        dmax[0] = hi
    elif real_t is pt_bool_s:
        ilo = p.v != 0
        ihi = ilo
        for j in range(1, n):
            y = p[j * st].v != 0
            if y < ilo:
                ilo = y
            if y > ihi:
                ihi = y
        imin[0] = ilo
        imax[0] = ihi
    elif real_t is int64_t and st == 1:     # (vectorised: a bincount's sizing pass)
        ptc_minmax_i64(p, n, imin, imax)
    elif real_t is int32_t and st == 1:
        ptc_minmax_i32(p, n, &ilo32, &ihi32)
        imin[0] = ilo32
        imax[0] = ihi32
    else:
        ilo = <int64_t>p[0]
        ihi = ilo
        if st == 1:
            for j in range(1, n):
                y = <int64_t>p[j]
                ilo = y if y < ilo else ilo
                ihi = y if y > ihi else ihi
        else:
            for j in range(1, n):
                y = <int64_t>p[j * st]
                ilo = y if y < ilo else ilo
                ihi = y if y > ihi else ihi
        imin[0] = ilo
        imax[0] = ihi


def minmax(_TensorBase src not None):
    """(min, max) of a non-empty 1-D tensor: floats (NaN if any NaN) for
    floating dtypes, ints for integer dtypes."""
    cdef int t = src._dtype.num
    cdef double dlo = 0, dhi = 0
    cdef int64_t ilo = 0, ihi = 0
    cdef const char* sp = src._ptr()
    cdef Py_ssize_t n = src._shape[0], st = src._strides[0]
    if src._ndim != 1 or src._numel == 0 or _MINMAX[t] == NULL:
        raise ValueError("minmax kernel: non-empty 1-D real tensor expected")
    ptc_kernel_enter()
    with nogil:
        try:
            _MINMAX[t](sp, n, st, &dlo, &dhi, &ilo, &ihi)
        finally:
            ptc_kernel_exit()
    if _FLOATING[t]:
        return dlo, dhi
    return ilo, ihi


# --------------------------------------------------------------------------
# histc
# --------------------------------------------------------------------------
cdef inline float _rh(float x) noexcept nogil:
    return ptc_half_to_float(ptc_float_to_half(x))


cdef inline float _rb(float x) noexcept nogil:
    return ptc_bf16_to_float(ptc_float_to_bf16(x))


cdef inline Py_ssize_t _bin(const flt_t* p, double lo_d, double hi_d, Py_ssize_t nbins) noexcept nogil:
    """Bin of one element as PyTorch's LINEAR_INTERPOLATION computes it in the
    element type (edges rounded to it), -1 when outside [lo, hi] or NaN."""
    cdef double xd, pd
    cdef float xf, lf, hf, pf
    cdef Py_ssize_t pos
    if flt_t is double:
        xd = p[0]
        if not (xd >= lo_d and xd <= hi_d):
            return -1
        pd = (xd - lo_d) * <double>nbins / (hi_d - lo_d)
        pos = <Py_ssize_t>pd if pd < 9.2e18 else nbins
    elif flt_t is float:
        xf = p[0]
        lf = <float>lo_d
        hf = <float>hi_d
        if not (xf >= lf and xf <= hf):
            return -1
        pf = (xf - lf) * <float>nbins / (hf - lf)
        pos = <Py_ssize_t>pf if pf < 9.2e18 else nbins
    elif flt_t is pt_half_s:
        xf = ptc_half_to_float(p.bits)
        lf = _rh(<float>lo_d)
        hf = _rh(<float>hi_d)
        if not (xf >= lf and xf <= hf):
            return -1
        pf = _rh(_rh(_rh(xf - lf) * _rh(<float>nbins)) / _rh(hf - lf))
        pos = <Py_ssize_t>pf if pf < 9.2e18 else nbins
    else:
        xf = ptc_bf16_to_float(p.bits)
        lf = _rb(<float>lo_d)
        hf = _rb(<float>hi_d)
        if not (xf >= lf and xf <= hf):
            return -1
        pf = _rb(_rb(_rb(xf - lf) * _rb(<float>nbins)) / _rb(hf - lf))
        pos = <Py_ssize_t>pf if pf < 9.2e18 else nbins
    if pos >= nbins:
        pos = nbins - 1
    if pos < 0:
        pos = 0
    return pos


cdef void _histc_count(const flt_t* p, Py_ssize_t n, Py_ssize_t st, double lo, double hi,
                       Py_ssize_t nbins, int64_t* counts) noexcept nogil:
    cdef Py_ssize_t j, b
    for j in range(n):
        b = _bin(&p[j * st], lo, hi, nbins)
        if b >= 0:
            counts[b] += 1


cdef void _histc_store(flt_t* out, const int64_t* counts, Py_ssize_t nbins) noexcept nogil:
    # PyTorch adds 1 per element to a histogram of the input's dtype, so a bin
    # stops growing where +1 no longer changes it (2**(mantissa bits + 1):
    # 256 for bfloat16, 2048 for float16); exact integers below that
    cdef Py_ssize_t b
    cdef int64_t c
    for b in range(nbins):
        c = counts[b]
        if flt_t is pt_half_s:
            out[b].bits = ptc_float_to_half(<float>(c if c < 2048 else 2048))
        elif flt_t is pt_bf16_s:
            out[b].bits = ptc_float_to_bf16(<float>(c if c < 256 else 256))
        elif flt_t is float:
            out[b] = <float>(c if c < 16777216 else 16777216)
        else:
            out[b] = <double>(c if c < (<int64_t>1 << 53) else (<int64_t>1 << 53))


ctypedef void (*histc_count_fn)(const char* p, Py_ssize_t n, Py_ssize_t st, double lo, double hi,
                                Py_ssize_t nbins, int64_t* counts) noexcept nogil
ctypedef void (*histc_store_fn)(char* out, const int64_t* counts, Py_ssize_t nbins) noexcept nogil

cdef histc_count_fn _HCOUNT[PT_NUM_TYPES]
cdef histc_store_fn _HSTORE[PT_NUM_TYPES]


def histc(_TensorBase src not None, _TensorBase hist not None, double lo, double hi):
    """Histogram of 1-D floating ``src`` into contiguous ``hist`` (same
    dtype, nbins = hist.numel()) over [lo, hi] (finite, lo < hi).  Counts
    are accumulated exactly (int64) and converted once."""
    cdef int t = src._dtype.num
    cdef Py_ssize_t nbins = hist._numel, n, st, b
    cdef int nthreads = get_num_threads()
    cdef Py_ssize_t nchunks = 1, c
    cdef int64_t* counts
    cdef histc_count_fn fn
    cdef const char* sp = src._ptr()
    cdef char* hp = hist._ptr()
    cdef Py_ssize_t bst = src._strides[0] * src._dtype.itemsize if src._ndim == 1 else 0
    if _HCOUNT[t] == NULL or hist._dtype.num != t or not hist._is_contig() or src._ndim != 1:
        raise TypeError("histc kernel: bad arguments")
    if nbins == 0:
        return
    n = src._shape[0]
    st = src._strides[0]
    fn = _HCOUNT[t]
    if nthreads > 1 and n >= parallel_grain() and n >= 2 * nthreads:
        nchunks = nthreads
    counts = <int64_t*>ptc_scratch_malloc(<size_t>(nchunks * nbins) * 8)
    if counts == NULL:
        raise MemoryError("histc: out of memory")
    memset(counts, 0, <size_t>(nchunks * nbins) * 8)
    ptc_kernel_enter()
    with nogil:
        try:
            if nchunks == 1:
                fn(sp, n, st, lo, hi, nbins, counts)
            else:
                for c in prange(nchunks, num_threads=nthreads, schedule='static'):
                    fn(sp + (c * n // nchunks) * bst,
                       (c + 1) * n // nchunks - c * n // nchunks, st, lo, hi, nbins,
                       &counts[c * nbins])
                for c in range(1, nchunks):
                    for b in range(nbins):
                        counts[b] += counts[c * nbins + b]
            _HSTORE[t](hp, counts, nbins)
        finally:
            ptc_kernel_exit()
    free(counts)


# --------------------------------------------------------------------------
# bincount
# --------------------------------------------------------------------------
cdef void _bincount(const int_t* p, Py_ssize_t n, Py_ssize_t st, const char* w,
                    Py_ssize_t wst, int wtype, char* out) noexcept nogil:
    """Serial accumulation in input order (as PyTorch), so float sums match."""
    cdef Py_ssize_t j
    cdef int64_t b
    if w == NULL:
        for j in range(n):
            (<int64_t*>out)[<int64_t>p[j * st]] += 1
    elif wtype == PT_FLOAT32:
        for j in range(n):
            b = <int64_t>p[j * st]
            (<float*>out)[b] = (<float*>out)[b] + (<const float*>w)[j * wst]
    else:
        for j in range(n):
            b = <int64_t>p[j * st]
            (<double*>out)[b] = (<double*>out)[b] + (<const double*>w)[j * wst]


ctypedef void (*bincount_fn)(const char* p, Py_ssize_t n, Py_ssize_t st, const char* w,
                             Py_ssize_t wst, int wtype, char* out) noexcept nogil

cdef bincount_fn _BINCOUNT[PT_NUM_TYPES]


def bincount(_TensorBase src not None, _TensorBase weights, _TensorBase out not None):
    """Counts (or weight sums) of the non-negative 1-D integer ``src`` into
    zero-filled contiguous ``out`` (int64, or float32/float64 = weights'
    dtype) that is longer than max(src)."""
    cdef int t = src._dtype.num
    cdef int wt = weights._dtype.num if weights is not None else -1
    cdef Py_ssize_t n, j
    cdef int64_t lo = 0, hi = 0
    cdef double dlo, dhi
    cdef const char* sp = src._ptr()
    cdef const char* wp = weights._ptr() if weights is not None else NULL
    cdef Py_ssize_t wst = weights._strides[0] if weights is not None and weights._ndim == 1 else 0
    cdef char* op = out._ptr()
    cdef Py_ssize_t sst
    if _BINCOUNT[t] == NULL or src._ndim != 1 or not out._is_contig():
        raise TypeError("bincount kernel: bad arguments")
    n = src._shape[0]
    if weights is None:
        if out._dtype.num != PT_INT64:
            raise TypeError("bincount kernel: bad output dtype")
    elif (wt != PT_FLOAT32 and wt != PT_FLOAT64) or out._dtype.num != wt or \
            weights._ndim != 1 or weights._shape[0] != n:
        raise TypeError("bincount kernel: bad weights")
    if n == 0:
        return
    sst = src._strides[0]
    ptc_kernel_enter()
    with nogil:
        try:
            _MINMAX[t](sp, n, sst, &dlo, &dhi, &lo, &hi)
        finally:
            ptc_kernel_exit()
    if lo < 0 or hi >= out._numel:
        raise ValueError("bincount kernel: values out of range")
    ptc_kernel_enter()
    with nogil:
        try:
            _BINCOUNT[t](sp, n, sst, wp, wst, wt, op)
        finally:
            ptc_kernel_exit()


# --------------------------------------------------------------------------
# isin
# --------------------------------------------------------------------------
ctypedef struct _isinjob_t:
    keyrow_fn keyfn
    const char* el
    Py_ssize_t est
    int isz
    const uint64_t* tk            # sorted test keys
    Py_ssize_t m
    uint8_t* out
    Py_ssize_t ost
    bint flt, invert
    uint64_t nan_key
    Py_ssize_t n
    Py_ssize_t block


cdef int _isin_range(const void* job, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    cdef const _isinjob_t* J = <const _isinjob_t*>job
    cdef Py_ssize_t i, i0, i1, lo, hi, mid
    cdef uint64_t key
    cdef bint found
    cdef uint64_t kbuf[256]
    cdef Py_ssize_t blk, c
    i0 = b0 * J.block
    i1 = b1 * J.block
    if i1 > J.n:
        i1 = J.n
    i = i0
    while i < i1:
        blk = i1 - i if i1 - i < 256 else 256
        J.keyfn(J.el + i * J.est * J.isz, blk, J.est, 0, kbuf)
        for c in range(blk):
            key = kbuf[c]
            found = False
            if J.m > 0 and not (J.flt and key == J.nan_key):
                # branch-free lower bound
                lo = 0
                hi = J.m
                while hi > 1:
                    mid = hi >> 1
                    lo = (lo + mid) if J.tk[lo + mid - 1] < key else lo
                    hi -= mid
                lo += J.tk[lo] < key
                found = lo < J.m and J.tk[lo] == key
            J.out[(i + c) * J.ost] = found != J.invert
        i += blk
    return 0


cdef int _isin_merge(const _isinjob_t* J) noexcept nogil:
    """isin for large test sets: sort the elements' keys too and walk both
    sorted sequences once (sequential memory access)."""
    cdef Py_ssize_t n = J.n, i, p = 0
    cdef uint64_t key
    cdef bint found
    cdef char* mem = <char*>ptc_scratch_malloc(<size_t>n * 32 + 1)
    cdef uint64_t* k
    cdef int64_t* ix
    if mem == NULL:
        return 1
    k = <uint64_t*>mem
    ix = <int64_t*>(mem + n * 8)
    J.keyfn(J.el, n, J.est, 0, k)
    for i in range(n):
        ix[i] = i
    if _radix_sort(k, ix, <uint64_t*>(mem + n * 16), <int64_t*>(mem + n * 24), n, J.isz):
        k = <uint64_t*>(mem + n * 16)
        ix = <int64_t*>(mem + n * 24)
    for i in range(n):
        key = k[i]
        while p < J.m and J.tk[p] < key:
            p += 1
        found = p < J.m and J.tk[p] == key and not (J.flt and key == J.nan_key)
        J.out[ix[i] * J.ost] = found != J.invert
    free(mem)
    return 0


def isin(_TensorBase elements, _TensorBase test, _TensorBase out, bint invert):
    """out[i] = elements[i] in test (1-D tensors of one dtype; out bool 1-D);
    NaN is in nothing, -0.0 equals 0.0."""
    cdef _isinjob_t J
    cdef int t = elements._dtype.num
    cdef Py_ssize_t m, nblocks
    cdef uint64_t* mem
    cdef int64_t* ix
    cdef bint swapped
    cdef int err
    cdef const char* tp = test._ptr()
    cdef Py_ssize_t tst = test._strides[0] if test._ndim == 1 else 0
    if test._dtype.num != t or _KEYROW[t] == NULL or elements._ndim != 1 or test._ndim != 1 or \
            out._ndim != 1 or out._dtype.num != PT_BOOL or out._shape[0] != elements._shape[0]:
        raise TypeError("isin kernel: bad arguments")
    m = test._shape[0]
    mem = <uint64_t*>ptc_scratch_malloc(<size_t>m * 32 + 8)
    if mem == NULL:
        raise MemoryError("isin: out of memory")
    ix = <int64_t*>(mem + 2 * m)
    ptc_kernel_enter()
    with nogil:
        try:
            _KEYROW[t](tp, m, tst, 0, mem)
            swapped = _radix_sort(mem, ix, mem + m, ix + m, m, _WIDTH[t])
        finally:
            ptc_kernel_exit()
    J.keyfn = _KEYROW[t]
    J.el = elements._ptr()
    J.est = elements._strides[0]
    J.isz = elements._dtype.itemsize
    J.tk = (mem + m) if swapped else mem
    J.m = m
    J.out = <uint8_t*>out._ptr()
    J.ost = out._strides[0]
    J.flt = _FLOATING[t]
    J.invert = invert
    J.nan_key = _width_mask(_WIDTH[t])
    J.n = elements._shape[0]
    J.block = 4096
    nblocks = (J.n + J.block - 1) // J.block
    ptc_kernel_enter()
    with nogil:
        try:
            if m > 65536 and J.n * 64 > m:
                err = _isin_merge(&J)
            else:
                err = _run(_isin_range, &J, nblocks, J.n * 4)
        finally:
            ptc_kernel_exit()
    free(mem)
    if err:
        raise MemoryError("isin: out of memory")


# --------------------------------------------------------------------------
# table registration
# --------------------------------------------------------------------------
cdef void _register(real_t* tag) noexcept nogil:
    cdef int t = _type_num(tag)
    _KEYROW[t] = <keyrow_fn>_keyrow[real_t]
    _SEARCH[t] = <search_fn>_search_row[real_t]
    _MINMAX[t] = <minmax_fn>_minmax[real_t]
    _FLOATING[t] = _is_float(tag)
    _WIDTH[t] = sizeof(real_t)


cdef void _register_flt(flt_t* tag) noexcept nogil:
    cdef int t
    if flt_t is pt_half_s:
        t = PT_FLOAT16
    elif flt_t is pt_bf16_s:
        t = PT_BFLOAT16
    elif flt_t is float:
        t = PT_FLOAT32
    else:
        t = PT_FLOAT64
    _HCOUNT[t] = <histc_count_fn>_histc_count[flt_t]
    _HSTORE[t] = <histc_store_fn>_histc_store[flt_t]


cdef void _register_int(int_t* tag) noexcept nogil:
    cdef int t
    if int_t is uint8_t:
        t = PT_UINT8
    elif int_t is int8_t:
        t = PT_INT8
    elif int_t is int16_t:
        t = PT_INT16
    elif int_t is int32_t:
        t = PT_INT32
    else:
        t = PT_INT64
    _BINCOUNT[t] = <bincount_fn>_bincount[int_t]


cdef void _register_all() noexcept nogil:
    cdef int t
    for t in range(PT_NUM_TYPES):
        _KEYROW[t] = NULL
        _SEARCH[t] = NULL
        _MINMAX[t] = NULL
        _HCOUNT[t] = NULL
        _HSTORE[t] = NULL
        _BINCOUNT[t] = NULL
        _FLOATING[t] = False
        _WIDTH[t] = 0
    _register(<pt_bool_s*>NULL)
    _register(<uint8_t*>NULL)
    _register(<int8_t*>NULL)
    _register(<int16_t*>NULL)
    _register(<int32_t*>NULL)
    _register(<int64_t*>NULL)
    _register(<pt_half_s*>NULL)
    _register(<pt_bf16_s*>NULL)
    _register(<float*>NULL)
    _register(<double*>NULL)
    _register_flt(<pt_half_s*>NULL)
    _register_flt(<pt_bf16_s*>NULL)
    _register_flt(<float*>NULL)
    _register_flt(<double*>NULL)
    _register_int(<uint8_t*>NULL)
    _register_int(<int8_t*>NULL)
    _register_int(<int16_t*>NULL)
    _register_int(<int32_t*>NULL)
    _register_int(<int64_t*>NULL)


_register_all()
