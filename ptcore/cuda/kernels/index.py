"""CUDA kernel sources for sorting, selection, compaction, sequential scans
and the integer-valued Philox samplers (generated, header-free; part of the
library of :mod:`ptcore.cuda.kernels.library`, which lists them through
:func:`generate`).

Families and ABIs (``S`` storage type, ``T`` compute type of the tag):

* **index** (no family prelude)

  - ``ptc_index_sort_<tag>_c(M, L, S* vals, long long* idx, const S* in, int descending)``:
    rows ``in[r*L:(r+1)*L]`` sorted stably (ascending, or descending with
    ``descending != 0``), NaN greater than every number (last ascending,
    first descending), equal keys in input order.  Each thread ranks its
    elements (O(L) comparisons each): one block per row, any grid.
  - ``ptc_index_compact_<tag>_c(n, S* out, const S* src, const unsigned char* mask,
    const long long* pos)``: ``out[pos[i] - 1] = src[i]`` where ``mask[i]``
    (``pos`` the inclusive prefix sum of the mask; contiguous operands).
  - ``ptc_index_expand_<tag>_c(n, S* out, const S* src, const unsigned char* mask,
    const long long* pos)``: ``out[i] = src[pos[i] - 1]`` where ``mask[i]``
    (masked_scatter_; contiguous operands).
  - ``ptc_index_scatter_<prod|amax|amin>_<f32|f64|i32|i64>_s``: the ABI of
    ``ptc_index_scatter_add`` (:mod:`ptcore.cuda.kernels.library`), combining with a
    compare-and-swap loop (NaN propagates through amax/amin).
  - ``ptc_index_nonzero_c(n, long long* out, const unsigned char* mask,
    const long long* pos, ptc_strided<1> shape)``: row ``pos[i] - 1`` of
    ``out`` (``shape.ndim`` columns) = the coordinates of flat index ``i``
    over ``shape.sizes`` where ``mask[i]``.
  - ``ptc_index_median_<tag>_c(M, L, S* vals, long long* idx, const S* sorted,
    const long long* sidx, int ignore_nan)``: per row of an ascending
    stable sort (values ``sorted``, source positions ``sidx``): the lower
    median (element ``(m - 1) / 2`` of the ``m`` non-NaN values when
    ``ignore_nan``; otherwise the first NaN when the row has one).

  - ``ptc_index_mode_<tag>_c(M, L, S* vals, long long* idx, const S* sorted,
    const long long* sidx)``: per sorted row the value of the longest run of
    equal values (NaNs equal; the smallest value on ties) and the largest
    source position in that run.

* **scan** (REDUCE_OPS prelude; the state functors ``ptc_s_cumext`` and
  ``ptc_s_logaddexp``), in four variants each (see :func:`_line_scan_kernels`):
  ``_t`` one thread per row, ``_c`` one block per row, ``_p``/``_k`` long
  rows in chunks:

  - ``ptc_scan_cummax_<tag>_<t|c>`` / ``ptc_scan_cummin_<tag>_<t|c>(M, L, S* out,
    long long* idx, const S* in)``: running max/min and its index; after a
    NaN the value is NaN at the latest NaN's index; ties take the later index
    (PyTorch's ``>=`` / ``<=``);
    ``..._p(M, L, C, nch, void* part, const S* in)``,
    ``..._k(M, L, C, nch, S* out, long long* idx, const S* in, const void* part)``.
  - ``ptc_scan_logcumsumexp_<tag>_<t|c|p|k>``: the same arguments (``idx``
    unused, may be null).

* **random** (PHILOX prelude), bit-identical to ``ptcore._ops.kernels._random``:

  - ``ptc_random_randint_<tag>_c(n, S* out, seed, offset, long long low,
    unsigned long long range, int tier)``: the three multiply-shift tiers
    (range <= 2^16: 4 per block; <= 2^32: 2; else 1).
  - ``ptc_random_bernoulli_<tag>_c(n, S* out, seed, offset, const double* p,
    long long p_stride)``: 1 iff ``x * 2^-32 < p[i * p_stride]``.
  - ``ptc_random_exponential_<tag>_c(n, S* out, seed, offset, double lambd)``.
  - ``ptc_random_dropnoise_<tag>_c(n, S* out, seed, offset, double keep, double q)``:
    dropout's scaled mask, the bernoulli draw of ``keep`` divided by ``q`` (floats).
  - multinomial over float64 rows ``p`` (rows x cats): ``ptc_random_multinomial_cdf_c(rows,
    cats, double* cdf, long long* last_nz, const double* p)`` (left-to-right sums, last
    positive category), ``ptc_random_multinomial_repl_c(n, long long* out, seed, offset,
    const double* cdf, const long long* last_nz, cats, num_samples)`` (with replacement),
    ``ptc_random_multinomial_keys_c(n, double* keys, seed, offset, const double* p)``
    (the exponential-race keys; a stable row sort of them gives the samples without
    replacement).
  - ``ptc_random_poisson_f64_c(n, double* out, const double* rate, seed, offset)`` and
    ``ptc_random_binomial_f64_c(n, double* out, const double* count, const double* prob,
    seed, offset)`` (count an integer >= 0, prob in [0, 1]): rejection samplers, element i
    on its own Philox stream (counter words 2, 3 = i + 1); the caller advances the offset
    by ``SAMPLER_BLOCKS[kind]``.
"""
from ptcore.cuda.kernels.source import DTYPES, FLOATS, TAGS, kernel_name, _storage, _compute, _load, _store, _kind

__all__ = ["generate"]

_ALL = tuple(DTYPES)


def _lt(a, b):
    """a before b in ascending order with NaN last (also for ints: x != x is false)."""
    return f"(!({a} != {a}) && (({b} != {b}) || {a} < {b}))"


def _sort_kernel(dt):
    name = kernel_name("index", "sort", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    x = _load(dt, "row[j]")
    y = _load(dt, "row[k]")
    return name, (
        f'extern "C" __global__ void {name}(long long M, long long L, {S}* vals, long long* idx, '
        f"const {S}* in, int descending) {{\n"
        f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n"
        f"        const {S}* row = in + r * L;\n"
        f"        for (long long j = threadIdx.x; j < L; j += blockDim.x) {{\n"
        f"            const {T} x = {x};\n"
        f"            long long rank = 0;\n"
        f"            for (long long k = 0; k < L; ++k) {{\n"
        f"                const {T} y = {y};\n"
        f"                const bool ylt = {_lt('y', 'x')}, xlt = {_lt('x', 'y')};\n"
        f"                if ((descending ? xlt : ylt) || (k < j && !ylt && !xlt)) ++rank;\n"
        f"            }}\n"
        f"            vals[r * L + rank] = row[j];\n"
        f"            idx[r * L + rank] = j;\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _compact_kernel(dt):
    name = kernel_name("index", "compact", TAGS[dt], "c")
    S = _storage(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* out, const {S}* src, '
        f"const unsigned char* mask, const long long* pos) {{\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        if (mask[i]) out[pos[i] - 1] = src[i];\n"
        f"    }}\n}}\n")


def _expand_kernel(dt):
    name = kernel_name("index", "expand", TAGS[dt], "c")
    S = _storage(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* out, const {S}* src, '
        f"const unsigned char* mask, const long long* pos) {{\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        if (mask[i]) out[i] = src[pos[i] - 1];\n"
        f"    }}\n}}\n")


# scatter_reduce's prod/amax/amin on 32/64-bit types: a CAS loop on the element's bits
_RMW = {
    "float32": ("unsigned int", "__int_as_float((int)b)", "(unsigned int)__float_as_int(x)"),
    "float64": ("unsigned long long", "__longlong_as_double((long long)b)",
                "(unsigned long long)__double_as_longlong(x)"),
    "int32": ("unsigned int", "(int)b", "(unsigned int)x"),
    "int64": ("unsigned long long", "(long long)b", "(unsigned long long)x"),
}
# the read-modify-write scatter kernels: reduce -> combine expression (kept: the
# kernels' source, keyed by the kernel each entry generates)
_RMW_OPS = {"prod": "cur * v", "amax": "((cur > v) || (cur != cur)) ? cur : v",
            "amin": "((cur < v) || (cur != cur)) ? cur : v"}


def _scatter_rmw_kernel(op, dt):
    name = kernel_name("index", f"scatter_{op}", TAGS[dt], "s")
    S, T = _storage(dt), _compute(dt)
    B, frm, to = _RMW[dt]
    params = ["long long n", f"{S}* out", f"const {S}* src", "const long long* index", "long long dim_size",
              "long long dim_stride", "int* err", "ptc_params p", "ptc_strided<3> ix"]
    return name, (
        f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
        f"    PTC_FOR(i, n) {{\n"
        f"        long long o[3];\n        ptc_offsets<3>(ix, i, o);\n"
        f"        long long idx = index[o[2]];\n"
        f"        if (idx < 0) idx += dim_size;\n"
        f"        if (idx < 0 || idx >= dim_size) {{ if (err) atomicExch(err, 1); continue; }}\n"
        f"        const {T} v = src[o[1]];\n"
        f"        {B}* a = ({B}*)(out + o[0] + idx * dim_stride);\n"
        f"        {B} old = *a, assumed;\n"
        f"        do {{\n"
        f"            assumed = old;\n"
        f"            const {B} b = assumed;\n"
        f"            const {T} cur = {frm};\n"
        f"            const {T} x = {_RMW_OPS[op]};\n"
        f"            old = atomicCAS(a, assumed, {to});\n"
        f"        }} while (assumed != old);\n"
        f"    }}\n}}\n")


def _nonzero_kernel():
    name = "ptc_index_nonzero_c"
    return name, (
        f'extern "C" __global__ void {name}(long long n, long long* out, const unsigned char* mask, '
        f"const long long* pos, ptc_strided<1> shape) {{\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        if (!mask[i]) continue;\n"
        f"        const long long nd = shape.ndim, base = (pos[i] - 1) * nd;\n"
        f"        long long rem = i;\n"
        f"        for (long long d = nd - 1; d >= 0; --d) {{\n"
        f"            const long long sz = shape.sizes[d];\n"
        f"            out[base + d] = rem % sz;\n"
        f"            rem /= sz;\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _index_bounds_kernel():
    """``*first`` = the smallest ``i`` with ``idx[i]`` outside ``[lo, hi)``
    (left as it was, ``n``, when none is)."""
    name = "ptc_index_bounds_c"
    return name, (
        f'extern "C" __global__ void {name}(long long n, const long long* idx, long long lo, long long hi, '
        f"unsigned long long* first) {{\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const long long v = idx[i];\n"
        f"        if (v < lo || v >= hi) atomicMin(first, (unsigned long long)i);\n"
        f"    }}\n}}\n")


def _tri_zero_kernels():
    """``tril_``/``triu_`` in place: zero the elements of the (possibly
    strided) ``data`` on the dropped side of diagonal ``diag`` of its last two
    dims (``rows`` x ``cols``), one kernel per element size (a zero is all
    zero bits in every dtype); ``i`` is the logical C-order index, ``ix`` its
    element offsets."""
    out = []
    for nbytes, T, width in ((1, "unsigned char", 1), (2, "unsigned short", 1), (4, "unsigned int", 1),
                             (8, "unsigned long long", 1), (16, "unsigned long long", 2)):
        name = f"ptc_index_tri_zero_b{nbytes}_s"
        store = "".join(f"            data[{width} * o[0] + {k}] = 0;\n" for k in range(width))
        out.append((name, (
            f'extern "C" __global__ void {name}(long long n, {T}* data, long long rows, long long cols, '
            f"long long diag, long long upper, ptc_strided<1> ix) {{\n"
            f"    PTC_FOR(i, n) {{\n"
            f"        const long long q = i / cols, d = (i - q * cols) - q % rows;\n"
            f"        if (upper ? d < diag : d > diag) {{\n"
            f"            long long o[1];\n"
            f"            ptc_offsets<1>(ix, i, o);\n"
            f"{store}"
            f"        }}\n"
            f"    }}\n}}\n")))
    return out


def _unpack_pivots_kernel():
    """``perm`` (nb, m) int64 from LAPACK's 1-based row interchanges ``piv``
    (nb, k) int32: one thread per matrix, the interchanges in order (as
    ATen's unpack_pivots kernel); the caller checked the pivots' range."""
    name = "ptc_index_unpack_pivots_c"
    return name, (
        f'extern "C" __global__ void {name}(long long nb, long long m, long long k, long long* perm, '
        f"const int* piv) {{\n"
        f"    PTC_FOR(b, nb) {{\n"
        f"        long long* p = perm + b * m;\n"
        f"        const int* v = piv + b * k;\n"
        f"        for (long long i = 0; i < m; ++i) p[i] = i;\n"
        f"        for (long long i = 0; i < k; ++i) {{\n"
        f"            const long long j = (long long)v[i] - 1;\n"
        f"            if (j == i || j < 0 || j >= m) continue;\n"
        f"            const long long t = p[i];\n"
        f"            p[i] = p[j];\n"
        f"            p[j] = t;\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _median_kernel(dt):
    name = kernel_name("index", "median", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    v = _load(dt, "sorted[r * L + k]")
    return name, (
        f'extern "C" __global__ void {name}(long long M, long long L, {S}* vals, long long* idx, '
        f"const {S}* sorted, const long long* sidx, int ignore_nan) {{\n"
        f"    PTC_FOR(r, M) {{\n"
        f"        long long m = L;\n"
        f"        while (m > 0) {{ const long long k = m - 1; const {T} x = {v}; if (!(x != x)) break; --m; }}\n"
        f"        long long k;\n"
        f"        if (!ignore_nan && m < L) k = m;\n"
        f"        else if (m == 0) k = 0;\n"
        f"        else k = (m - 1) / 2;\n"
        f"        vals[r] = sorted[r * L + k];\n"
        f"        idx[r] = sidx[r * L + k];\n"
        f"    }}\n}}\n")


def _mode_kernel(dt):
    name = kernel_name("index", "mode", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    a = _load(dt, "row[e]")
    b = _load(dt, "row[s]")
    return name, (
        f'extern "C" __global__ void {name}(long long M, long long L, {S}* vals, long long* idx, '
        f"const {S}* sorted, const long long* sidx) {{\n"
        f"    PTC_FOR(r, M) {{\n"
        f"        const {S}* row = sorted + r * L;\n"
        f"        long long s = 0, best_s = 0, best_e = 0, best_c = 0;\n"
        f"        while (s < L) {{\n"
        f"            long long e = s + 1;\n"
        f"            const {T} y = {b};\n"
        f"            while (e < L) {{ const {T} x = {a}; if (!(x == y || (x != x && y != y))) break; ++e; }}\n"
        f"            if (e - s > best_c) {{ best_c = e - s; best_s = s; best_e = e; }}\n"
        f"            s = e;\n"
        f"        }}\n"
        f"        vals[r] = row[best_s];\n"
        f"        idx[r] = sidx[r * L + best_e - 1];\n"
        f"    }}\n}}\n")


def _line_scan_kernels(op, dt):
    """The kernels of ``op`` (cummax, cummin, logcumsumexp) along contiguous
    rows of ``L`` elements, as (name, source) pairs; every one takes the
    state functor of :data:`REDUCE_OPS` (``ptc_s_cumext`` / ``ptc_s_logaddexp``):

    * ``_t`` one thread per row, scanning it in order (short rows);
    * ``_c`` one block per row: a block scan of ``blockDim.x`` elements at a
      time, carried across (blocks loop over rows);
    * ``_p`` / ``_k`` long rows split in chunks of ``C`` so that many blocks
      share a row: ``_p`` reduces each (row, chunk) into ``part[b]`` (the
      state, 16 bytes for the indexed scans, ``A`` for logcumsumexp), ``_k``
      combines the partials before its chunk into a carry and scans the
      chunk from it.

    ``idx`` (int64, the running extreme's position) is written by the
    indexed scans only; logcumsumexp's kernels take it unused (may be null).
    The indexed combine is order-free, so the four agree exactly; the
    log-add-exp steps group differently in each (rounding only)."""
    tag = TAGS[dt]
    S, T = _storage(dt), _compute(dt)
    if op == "logcumsumexp":
        op_t = f"ptc_s_logaddexp<{T}>"
        put = (f"out[{{o}}] = {_store(dt, '{w}')};")
    else:
        op_t = f"ptc_s_cumext<{T}, {'true' if op == 'cummax' else 'false'}>"
        put = (f"out[{{o}}] = {_store(dt, '{w}.v')}; idx[{{o}}] = {{w}}.i;")
    head = f"    typedef {op_t} Op;\n    typedef Op::S St;\n"
    load = _load(dt, "in[r * L + j]")
    rowsig = f"long long M, long long L, {S}* out, long long* idx, const {S}* in"
    out = []
    name = kernel_name("scan", op, tag, "t")
    out.append((name, (
        f'extern "C" __global__ void {name}({rowsig}) {{\n{head}'
        f"    PTC_FOR(r, M) {{\n"
        f"        St acc = Op::init();\n"
        f"        for (long long j = 0; j < L; ++j) {{\n"
        f"            acc = Op::combine(acc, Op::make({load}, j));\n"
        f"            {put.format(o='r * L + j', w='acc')}\n"
        f"        }}\n"
        f"    }}\n}}\n")))
    scan_from = (
        "            const long long j = b0 + threadIdx.x;\n"
        f"            St v = j < {{end}} ? Op::make({load}, j) : Op::init();\n"
        "            St total;\n"
        "            v = ptc_block_scan<Op>(v, sm, &total);\n"
        "            if (j < {end}) { const St w = Op::combine(carry, v); "
        f"{put.format(o='r * L + j', w='w')} }}\n"
        "            carry = Op::combine(carry, total);\n")
    name = kernel_name("scan", op, tag, "c")
    out.append((name, (
        f'extern "C" __global__ void {name}({rowsig}) {{\n{head}'
        f"    __shared__ St sm[32];\n"
        f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n"
        f"        St carry = Op::init();\n"
        f"        for (long long b0 = 0; b0 < L; b0 += blockDim.x) {{\n"
        f"{scan_from.replace('{end}', 'L')}"
        f"        }}\n"
        f"    }}\n}}\n")))
    chunk = (f"    __shared__ St sm[32];\n"
             f"    for (long long b = blockIdx.x; b < M * nch; b += gridDim.x) {{\n"
             f"        const long long r = b / nch, c = b - r * nch;\n"
             f"        const long long j0 = c * C, j1 = j0 + C < L ? j0 + C : L;\n")
    name = kernel_name("scan", op, tag, "p")
    out.append((name, (
        f'extern "C" __global__ void {name}(long long M, long long L, long long C, long long nch, '
        f"void* part_, const {S}* in) {{\n{head}"
        f"    St* part = (St*)part_;\n{chunk}"
        f"        St v = Op::init();\n"
        f"        for (long long j = j0 + threadIdx.x; j < j1; j += blockDim.x) "
        f"v = Op::combine(v, Op::make({load}, j));\n"
        f"        v = ptc_block_allreduce<Op>(v, sm);\n"
        f"        if (threadIdx.x == 0) part[b] = v;\n"
        f"    }}\n}}\n")))
    name = kernel_name("scan", op, tag, "k")
    out.append((name, (
        f'extern "C" __global__ void {name}(long long M, long long L, long long C, long long nch, '
        f"{S}* out, long long* idx, const {S}* in, const void* part_) {{\n{head}"
        f"    const St* part = (const St*)part_;\n{chunk}"
        f"        St carry = Op::init();\n"
        f"        for (long long k = threadIdx.x; k < c; k += blockDim.x) "
        f"carry = Op::combine(carry, part[r * nch + k]);\n"
        f"        carry = ptc_block_allreduce<Op>(carry, sm);\n"
        f"        for (long long b0 = j0; b0 < j1; b0 += blockDim.x) {{\n"
        f"{scan_from.replace('{end}', 'j1')}"
        f"        }}\n"
        f"    }}\n}}\n")))
    return out


# 64x64 -> high 64 bits, portable (the same on the device and the host)
_MULHI = (
    "#ifndef PTC_MULHI64\n"
    "#define PTC_MULHI64(a, b, res) do { const unsigned long long a0_ = (unsigned int)(a), a1_ = (a) >> 32, "
    "b0_ = (unsigned int)(b), b1_ = (b) >> 32; const unsigned long long p00_ = a0_ * b0_, p01_ = a0_ * b1_, "
    "p10_ = a1_ * b0_, p11_ = a1_ * b1_; const unsigned long long mid_ = (p00_ >> 32) + (unsigned int)p01_ + "
    "(unsigned int)p10_; (res) = p11_ + (p01_ >> 32) + (p10_ >> 32) + (mid_ >> 32); } while (0)\n"
    "#endif\n")


def _randint_kernel(dt):
    name = kernel_name("random", "randint", TAGS[dt], "c")
    S = _storage(dt)
    val = "(double)v" if _kind(dt) == "f" else "v"
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* out, unsigned long long seed, '
        f"unsigned long long offset, const unsigned long long* philox_graph, "
        f"long long low, unsigned long long r, int tier) {{\n"
        f"    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
        f"{_MULHI}"
        f"    const long long per = tier == 0 ? 4 : (tier == 1 ? 2 : 1);\n"
        f"    const long long nblocks = (n + per - 1) / per;\n"
        f"    PTC_FOR(q, nblocks) {{\n"
        f"        unsigned int w[4];\n"
        f"        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, "
        f"(unsigned int)(seed >> 32), w);\n"
        f"        for (long long j = 0; j < per; ++j) {{\n"
        f"            const long long s = q * per + j;\n"
        f"            if (s >= n) break;\n"
        f"            unsigned long long off;\n"
        f"            if (tier == 0) {{\n"
        f"                off = ((unsigned long long)w[j] * r) >> 32;\n"
        f"            }} else if (tier == 1) {{\n"
        f"                const unsigned long long d = (unsigned long long)w[2 * j] | "
        f"((unsigned long long)w[2 * j + 1] << 32);\n"
        f"                PTC_MULHI64(d, r, off);\n"
        f"            }} else {{\n"
        f"                const unsigned long long lo = (unsigned long long)w[0] | ((unsigned long long)w[1] << 32);\n"
        f"                const unsigned long long hi = (unsigned long long)w[2] | ((unsigned long long)w[3] << 32);\n"
        f"                unsigned long long t, ph;\n"
        f"                PTC_MULHI64(lo, r, t);\n"
        f"                PTC_MULHI64(hi, r, ph);\n"
        f"                const unsigned long long pl = hi * r, sm = pl + t;\n"
        f"                off = ph + (unsigned long long)(sm < pl);\n"
        f"            }}\n"
        f"            const long long v = (long long)((unsigned long long)low + off);\n"
        f"            out[s] = {_store(dt, val)};\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _bernoulli_kernel(dt):
    name = kernel_name("random", "bernoulli", TAGS[dt], "c")
    S = _storage(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* out, unsigned long long seed, '
        f"unsigned long long offset, const unsigned long long* philox_graph, "
        f"const double* p, long long p_stride) {{\n"
        f"    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
        f"    const long long nblocks = (n + 3) / 4;\n"
        f"    PTC_FOR(q, nblocks) {{\n"
        f"        unsigned int w[4];\n"
        f"        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, "
        f"(unsigned int)(seed >> 32), w);\n"
        f"        for (int j = 0; j < 4; ++j) {{\n"
        f"            const long long s = q * 4 + j;\n"
        f"            if (s >= n) break;\n"
        f"            const int v = __dmul_rn((double)w[j], 2.3283064365386963e-10) < p[s * p_stride] ? 1 : 0;\n"
        f"            out[s] = {_store(dt, 'v')};\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _dropout_noise_kernel(dt):
    """Dropout's scaled mask in one kernel: the bernoulli kernel's draw of probability
    ``keep`` (the same Philox words), stored and read back in the dtype, divided by ``q``
    as the scalar ``div`` kernel divides (``q`` rounded to the dtype, float for the half
    types): the bits of ``bernoulli_(keep)`` then ``div_(q)``."""
    name = kernel_name("random", "dropnoise", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    y = "(T)q" if dt in ("float16", "bfloat16") else _load(dt, _store(dt, "q"))
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* out, unsigned long long seed, '
        f"unsigned long long offset, const unsigned long long* philox_graph, double keep, "
        f"double q) {{\n"
        f"    typedef {T} T;\n"
        f"    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
        f"    const T y = {y};\n"
        f"    const long long nblocks = (n + 3) / 4;\n"
        f"    PTC_FOR(q4, nblocks) {{\n"
        f"        unsigned int w[4];\n"
        f"        ptc_philox_block(offset + (unsigned long long)q4, (unsigned int)seed, "
        f"(unsigned int)(seed >> 32), w);\n"
        f"        for (int j = 0; j < 4; ++j) {{\n"
        f"            const long long s = q4 * 4 + j;\n"
        f"            if (s >= n) break;\n"
        f"            const int v = __dmul_rn((double)w[j], 2.3283064365386963e-10) < keep ? 1 : 0;\n"
        f"            const T b = {_load(dt, _store(dt, 'v'))};\n"
        f"            out[s] = {_store(dt, 'b / y')};\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _exponential_kernel(dt):
    name = kernel_name("random", "exponential", TAGS[dt], "c")
    S = _storage(dt)
    wide = dt == "float64"
    per = 2 if wide else 4
    if wide:
        u = ("const unsigned long long d = (unsigned long long)w[2 * j] | ((unsigned long long)w[2 * j + 1] << 32);\n"
             "            const double u = __dmul_rn(__dadd_rn((double)(d >> 12), 0.5), 2.220446049250313e-16);\n")
    else:
        u = "const double u = __dmul_rn(__dadd_rn((double)w[j], 0.5), 2.3283064365386963e-10);\n"
    return name, (
        f'extern "C" __global__ void {name}(long long n, {S}* out, unsigned long long seed, '
        f"unsigned long long offset, const unsigned long long* philox_graph, double lambd) {{\n"
        f"    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
        f"    const long long nblocks = (n + {per - 1}) / {per};\n"
        f"    PTC_FOR(q, nblocks) {{\n"
        f"        unsigned int w[4];\n"
        f"        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, "
        f"(unsigned int)(seed >> 32), w);\n"
        f"        for (int j = 0; j < {per}; ++j) {{\n"
        f"            const long long s = q * {per} + j;\n"
        f"            if (s >= n) break;\n"
        f"            {u}"
        f"            const double e = -ptc_det_log(u);\n"
        f"            out[s] = {_store(dt, '__ddiv_rn(e, lambd)')};\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _multinomial_kernels():
    cdf = ("ptc_random_multinomial_cdf_c",
           'extern "C" __global__ void ptc_random_multinomial_cdf_c(long long rows, long long cats, double* cdf, '
           "long long* last_nz, const double* p) {\n"
           "    PTC_FOR(r, rows) {\n"
           "        double s = 0.0;\n"
           "        long long nz = cats - 1;\n"
           "        for (long long c = 0; c < cats; ++c) {\n"
           "            s = __dadd_rn(s, p[r * cats + c]);\n"
           "            cdf[r * cats + c] = s;\n"
           "        }\n"
           "        for (long long c = cats - 1; c >= 0; --c) if (p[r * cats + c] > 0) { nz = c; break; }\n"
           "        last_nz[r] = nz;\n"
           "    }\n}\n")
    repl = ("ptc_random_multinomial_repl_c",
            'extern "C" __global__ void ptc_random_multinomial_repl_c(long long n, long long* out, '
            "unsigned long long seed, unsigned long long offset, const unsigned long long* philox_graph, "
            "const double* cdf, const long long* last_nz, "
            "long long cats, long long ns) {\n"
            "    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
            "    const long long nblocks = (n + 1) / 2;\n"
            "    PTC_FOR(q, nblocks) {\n"
            "        unsigned int w[4];\n"
            "        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, (unsigned int)(seed >> 32), w);\n"
            "        for (int j = 0; j < 2; ++j) {\n"
            "            const long long e = q * 2 + j;\n"
            "            if (e >= n) break;\n"
            "            const unsigned long long d = (unsigned long long)w[2 * j] | ((unsigned long long)w[2 * j + 1] << 32);\n"
            "            const double u = __dmul_rn((double)(d >> 11), 1.1102230246251565e-16);\n"
            "            const long long row = e / ns;\n"
            "            const double* c = cdf + row * cats;\n"
            "            const double target = __dmul_rn(u, c[cats - 1]);\n"
            "            long long lo = 0, hi = cats;\n"
            "            while (lo < hi) { const long long mid = (lo + hi) / 2; if (c[mid] > target) hi = mid; else lo = mid + 1; }\n"
            "            if (lo >= cats) lo = last_nz[row];\n"
            "            out[e] = lo;\n"
            "        }\n"
            "    }\n}\n")
    keys = ("ptc_random_multinomial_keys_c",
            'extern "C" __global__ void ptc_random_multinomial_keys_c(long long n, double* keys, '
            "unsigned long long seed, unsigned long long offset, const unsigned long long* philox_graph, "
            "const double* p) {\n"
            "    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
            "    const long long nblocks = (n + 1) / 2;\n"
            "    PTC_FOR(q, nblocks) {\n"
            "        unsigned int w[4];\n"
            "        ptc_philox_block(offset + (unsigned long long)q, (unsigned int)seed, (unsigned int)(seed >> 32), w);\n"
            "        for (int j = 0; j < 2; ++j) {\n"
            "            const long long e = q * 2 + j;\n"
            "            if (e >= n) break;\n"
            "            const double pc = p[e];\n"
            "            double key = __longlong_as_double(0x7ff0000000000000LL);\n"
            "            if (pc > 0) {\n"
            "                const unsigned long long d = (unsigned long long)w[2 * j] | ((unsigned long long)w[2 * j + 1] << 32);\n"
            "                const double u = __dmul_rn(__dadd_rn((double)(d >> 12), 0.5), 2.220446049250313e-16);\n"
            "                key = __ddiv_rn(-ptc_det_log(u), pc);\n"
            "                if (!(key <= 1.7976931348623157e308)) key = 1.7976931348623157e308;\n"
            "            }\n"
            "            keys[e] = key;\n"
            "        }\n"
            "    }\n}\n")
    return [cdf, repl, keys]


# The rejection samplers (poisson, binomial) draw a variable number of
# uniforms per element: element i reads its own Philox stream, the blocks
# (offset + j, i + 1) of the 128-bit counter (the bulk samplers above use
# words 2, 3 = 0, so the streams never meet theirs), and the caller advances
# the generator's offset by a fixed SAMPLER_BLOCKS[kind] (as PyTorch's
# philox_cuda_state(20) / (42)).
SAMPLER_BLOCKS = {"poisson": 20, "binomial": 42}

SAMPLERS = r"""
struct ptc_substream { unsigned long long ctr, sub; unsigned int k0, k1; unsigned int w[4]; int left; };
__device__ __forceinline__ void ptc_substream_init(ptc_substream* s, unsigned long long seed,
                                                   unsigned long long offset, unsigned long long sub) {
    s->ctr = offset; s->sub = sub; s->k0 = (unsigned int)seed; s->k1 = (unsigned int)(seed >> 32);
    s->left = 0;
}
/* the stream's next uniform in (0, 1): 53 bits, two per block */
__device__ __forceinline__ double ptc_substream_uniform(ptc_substream* s) {
    if (s->left == 0) {
        ptc_philox_block128(s->ctr, s->sub, s->k0, s->k1, s->w);
        s->ctr += 1ULL;
        s->left = 2;
    }
    const int j = 2 - s->left;
    s->left -= 1;
    const unsigned long long d = (unsigned long long)s->w[2 * j] | ((unsigned long long)s->w[2 * j + 1] << 32);
    return ((double)(d >> 11) + 0.5) * 1.1102230246251565e-16;
}
/* Poisson(lam), lam >= 0: multiplication for lam < 10, Hoermann's PTRS
   (transformed rejection with squeeze) above, the rounded normal
   approximation above 1e15 (as the CPU sampler), inf for inf */
__device__ double ptc_sample_poisson(ptc_substream* s, double lam) {
    if (!(lam > 0.0)) return 0.0;
    if (!(lam <= 1.7976931348623157e308)) return lam;
    if (lam > 1e15) {
        const double u1 = ptc_substream_uniform(s), u2 = ptc_substream_uniform(s);
        const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        return rint(lam + sqrt(lam) * z);
    }
    if (lam < 10.0) {
        const double enlam = exp(-lam);
        double prod = 1.0, k = 0.0;
        while (1) {
            prod *= ptc_substream_uniform(s);
            if (prod <= enlam) return k;
            k += 1.0;
        }
    }
    const double slam = sqrt(lam), loglam = log(lam);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
    while (1) {
        const double U = ptc_substream_uniform(s) - 0.5, V = ptc_substream_uniform(s);
        const double us = 0.5 - fabs(U);
        const double k = floor((2.0 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) return k;
        if (k < 0.0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0)) return k;
    }
}
/* log(k!) - Stirling's approximation of it, k >= 0 an integer */
__device__ __forceinline__ double ptc_stirling_tail(double k) {
    const double tail[10] = {0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                             0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                             0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                             0.00833056343336287};
    if (k <= 9.0) return tail[(int)k];
    const double kp1sq = (k + 1.0) * (k + 1.0);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0);
}
/* Binomial(count, p) by inversion (count * p < 10): geometric waiting times */
__device__ double ptc_binomial_inversion(ptc_substream* s, double count, double p) {
    const double logq = log1p(-p);
    double geom_sum = 0.0, k = 0.0;
    while (1) {
        geom_sum += ceil(log(ptc_substream_uniform(s)) / logq);
        if (geom_sum > count) return k;
        k += 1.0;
    }
}
/* Binomial(count, p), count * p >= 10, p <= 1/2: Hoermann's BTRS */
__device__ double ptc_binomial_btrs(ptc_substream* s, double count, double p) {
    const double stddev = sqrt(count * p * (1.0 - p));
    const double b = 1.15 + 2.53 * stddev, a = -0.0873 + 0.0248 * b + 0.01 * p;
    const double c = count * p + 0.5, v_r = 0.92 - 4.2 / b, r = p / (1.0 - p);
    const double alpha = (2.83 + 5.1 / b) * stddev, m = floor((count + 1.0) * p);
    while (1) {
        const double U = ptc_substream_uniform(s) - 0.5;
        double V = ptc_substream_uniform(s);
        const double us = 0.5 - fabs(U);
        const double k = floor((2.0 * a / us + b) * U + c);
        if (k < 0.0 || k > count) continue;
        if (us >= 0.07 && V <= v_r) return k;
        V = log(V * alpha / (a / (us * us) + b));
        const double bound = (m + 0.5) * log((m + 1.0) / (r * (count - m + 1.0)))
            + (count + 1.0) * log((count - m + 1.0) / (count - k + 1.0))
            + (k + 0.5) * log(r * (count - k + 1.0) / (k + 1.0))
            + ptc_stirling_tail(m) + ptc_stirling_tail(count - m)
            - ptc_stirling_tail(k) - ptc_stirling_tail(count - k);
        if (V <= bound) return k;
    }
}
/* Binomial(count, p) for an integer count >= 0 and p in [0, 1] (PyTorch's sample_binomial) */
__device__ double ptc_sample_binomial(ptc_substream* s, double count, double p) {
    if (count <= 0.0 || p <= 0.0) return 0.0;
    if (p >= 1.0) return count;
    const bool flip = p > 0.5;
    const double q = flip ? 1.0 - p : p;
    const double k = count * q >= 10.0 ? ptc_binomial_btrs(s, count, q) : ptc_binomial_inversion(s, count, q);
    return flip ? count - k : k;
}
"""


def _sampler_kernels():
    """poisson(rate) and binomial(count, p) over float64, one stream per element."""
    pname = kernel_name("random", "poisson", "f64", "c")
    poisson = (f'extern "C" __global__ void {pname}(long long n, double* out, const double* rate, '
               "unsigned long long seed, unsigned long long offset, "
               "const unsigned long long* philox_graph) {\n"
               "    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
               "    PTC_FOR(i, n) {\n"
               "        ptc_substream s;\n"
               "        ptc_substream_init(&s, seed, offset, (unsigned long long)i + 1ULL);\n"
               "        out[i] = ptc_sample_poisson(&s, rate[i]);\n"
               "    }\n}\n")
    bname = kernel_name("random", "binomial", "f64", "c")
    binomial = (f'extern "C" __global__ void {bname}(long long n, double* out, const double* count, '
                "const double* prob, unsigned long long seed, unsigned long long offset, "
                "const unsigned long long* philox_graph) {\n"
                "    PTC_PHILOX_GRAPH(seed, offset, philox_graph);\n"
                "    PTC_FOR(i, n) {\n"
                "        ptc_substream s;\n"
                "        ptc_substream_init(&s, seed, offset, (unsigned long long)i + 1ULL);\n"
                "        out[i] = ptc_sample_binomial(&s, count[i], prob[i]);\n"
                "    }\n}\n")
    return [(pname, poisson), (bname, binomial)]


#: kernel name -> the extra prelude of that kernel alone (after the family's PHILOX)
KERNEL_PRELUDE = {name: SAMPLERS for name, _ in _sampler_kernels()}


def generate():
    """``(name, family, source)`` of every kernel of this module."""
    for dt in _ALL:
        for fn in (_sort_kernel, _compact_kernel, _expand_kernel, _median_kernel, _mode_kernel):
            name, src = fn(dt)
            yield name, "index", src
    for fn in (_nonzero_kernel, _unpack_pivots_kernel, _index_bounds_kernel):
        name, src = fn()
        yield name, "index", src
    for name, src in _tri_zero_kernels():
        yield name, "index", src
    for dt in _RMW:
        for op in _RMW_OPS:
            name, src = _scatter_rmw_kernel(op, dt)
            yield name, "index", src
    for dt in _ALL:
        if dt == "bool":
            continue
        for op in ("cummax", "cummin"):
            for name, src in _line_scan_kernels(op, dt):
                yield name, "scan", src
    for dt in FLOATS:
        for name, src in _line_scan_kernels("logcumsumexp", dt):
            yield name, "scan", src
    for dt in _ALL:
        for fn in (_randint_kernel, _bernoulli_kernel):
            name, src = fn(dt)
            yield name, "random", src
    for dt in FLOATS:
        for fn in (_exponential_kernel, _dropout_noise_kernel):
            name, src = fn(dt)
            yield name, "random", src
    for name, src in _multinomial_kernels() + _sampler_kernels():
        yield name, "random", src
