"""CUDA kernel sources of the row sort (generated, header-free; part of the
library of :mod:`ptcore.cuda.kernels.library`, which lists them through
:func:`generate`).

Family **sortx** (no family prelude), ``S`` the storage type and ``T`` the
compute type of the tag; order: ascending with NaN last, or descending with
NaN first (``descending != 0``); equal keys keep their input order (stable):

* ``ptc_sortx_bitonic_<tag>_c(M, L, C, P, S* vals, long long* idx, const S* in,
  int descending)``: every row ``in[r*L:(r+1)*L]`` cut into chunks of ``C``
  elements, each chunk sorted by one block with a bitonic network over ``P``
  (a power of two >= ``C``) (key, position) pairs in dynamic shared memory
  (``P * (sizeof(S) + 4)`` bytes); ``idx`` gets the positions in the row.
  Ties are broken by position, so the network's result is the stable order.
  Any grid (blocks loop over the ``M * ceil(L / C)`` chunks), any block size.
* ``ptc_sortx_merge_<tag>_c(n, L, w, const S* kin, const long long* iin, S* kout,
  long long* iout, int descending)``: one merge pass over ``n = M * L``
  elements: in every row, the sorted runs ``[2kw, 2kw + w)`` and
  ``[2kw + w, 2kw + 2w)`` become one sorted run; each element finds its
  place by a binary search in the other run (an element of the first run
  goes before equal keys of the second: stable).
* ``ptc_sortx_search_<tag>_c(n, m, L, bstride, const S* bd, const S* v, long long* out,
  int right)``: ``out[i]`` = the insertion point of ``v[i]`` in the sorted row
  ``bd + (i / m) * bstride`` of ``L`` boundaries (``bstride`` 0: one row for
  all), by PyTorch's binary search (``!(b >= v)`` or, with ``right``,
  ``!(b > v)`` moves right).
* ``ptc_sortx_histc_<tag>_c(n, nb, unsigned long long* counts, const S* in, double lo,
  double hi)`` (floating tags): ``counts[b] += 1`` (atomically) for every
  ``in[i]`` in [lo, hi], ``b = (in[i] - lo) * nb / (hi - lo)`` truncated and
  clamped to [0, nb), each step rounded to the tag's type as PyTorch (a
  float16 input's bins are computed in float16).
* ``ptc_sortx_histcfin_<tag>_c(nb, S* hist, const unsigned long long* counts,
  long long cap)``: ``hist[b] = min(counts[b], cap)`` (the count where +1
  stops changing a bin of that type).
"""
from ptcore.cuda.kernels.source import DTYPES, TAGS, kernel_name, _storage, _compute, _load, _store

__all__ = ["generate", "BITONIC_MAX"]

BITONIC_MAX = 4096      # the longest chunk one block sorts (48 KiB of shared memory for 8-byte keys)

_ALL = tuple(DTYPES)


def _lt(a, b):
    """a before b in ascending order with NaN last (x != x is false for ints)."""
    return f"(!({a} != {a}) && (({b} != {b}) || {a} < {b}))"


def _before(dt, a, b):
    """``key a`` strictly before ``key b`` in the requested order."""
    return f"(descending ? {_lt(b, a)} : {_lt(a, b)})"


def _bitonic_kernel(dt):
    name = kernel_name("sortx", "bitonic", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    ka, kb = _load(dt, "sk[i]"), _load(dt, "sk[p]")
    return name, (
        f'extern "C" __global__ void {name}(long long M, long long L, long long C, long long P, '
        f"{S}* vals, long long* idx, const {S}* in, int descending) {{\n"
        f"    extern __shared__ __align__(8) unsigned char ptc_smem[];\n"
        f"    {S}* sk = ({S}*)ptc_smem;\n"
        f"    int* si = (int*)(ptc_smem + P * sizeof({S}));\n"
        f"    const long long nch = (L + C - 1) / C;\n"
        f"    for (long long b = blockIdx.x; b < M * nch; b += gridDim.x) {{\n"
        f"        const long long r = b / nch, base = (b % nch) * C;\n"
        f"        const long long len = (L - base) < C ? (L - base) : C;\n"
        f"        const {S}* row = in + r * L + base;\n"
        f"        for (long long i = threadIdx.x; i < P; i += blockDim.x) {{\n"
        f"            if (i < len) {{ sk[i] = row[i]; si[i] = (int)i; }} else {{ si[i] = -1; }}\n"
        f"        }}\n"
        f"        __syncthreads();\n"
        f"        for (long long k = 2; k <= P; k <<= 1) {{\n"
        f"            for (long long j = k >> 1; j > 0; j >>= 1) {{\n"
        f"                for (long long i = threadIdx.x; i < P; i += blockDim.x) {{\n"
        f"                    const long long p = i ^ j;\n"
        f"                    if (p > i) {{\n"
        f"                        bool p_first;      /* element p belongs before element i */\n"
        f"                        if (si[p] < 0) p_first = false;\n"
        f"                        else if (si[i] < 0) p_first = true;\n"
        f"                        else {{\n"
        f"                            const {T} x = {ka};\n"
        f"                            const {T} y = {kb};\n"
        f"                            p_first = {_before(dt, 'y', 'x')} ||\n"
        f"                                      (!{_before(dt, 'x', 'y')} && si[p] < si[i]);\n"
        f"                        }}\n"
        f"                        if (((i & k) == 0) == p_first) {{\n"
        f"                            const {S} tk = sk[i]; sk[i] = sk[p]; sk[p] = tk;\n"
        f"                            const int ti = si[i]; si[i] = si[p]; si[p] = ti;\n"
        f"                        }}\n"
        f"                    }}\n"
        f"                }}\n"
        f"                __syncthreads();\n"
        f"            }}\n"
        f"        }}\n"
        f"        for (long long i = threadIdx.x; i < len; i += blockDim.x) {{\n"
        f"            vals[r * L + base + i] = sk[i];\n"
        f"            idx[r * L + base + i] = base + (long long)si[i];\n"
        f"        }}\n"
        f"        __syncthreads();\n"
        f"    }}\n}}\n")


def _merge_kernel(dt):
    name = kernel_name("sortx", "merge", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, long long L, long long w, const {S}* kin, '
        f"const long long* iin, {S}* kout, long long* iout, int descending) {{\n"
        f"    PTC_FOR(e, n) {{\n"
        f"        const long long r = e / L, j = e % L, rb = r * L;\n"
        f"        const long long s0 = (j / (2 * w)) * (2 * w);\n"
        f"        const long long a1 = (s0 + w) < L ? (s0 + w) : L;\n"
        f"        const long long b1 = (s0 + 2 * w) < L ? (s0 + 2 * w) : L;\n"
        f"        const {T} x = {_load(dt, 'kin[rb + j]')};\n"
        f"        long long lo, hi, pos;\n"
        f"        if (j < a1) {{\n"
        f"            /* keys of the second run strictly before x */\n"
        f"            lo = a1; hi = b1;\n"
        f"            while (lo < hi) {{\n"
        f"                const long long m = (lo + hi) >> 1;\n"
        f"                const {T} y = {_load(dt, 'kin[rb + m]')};\n"
        f"                if ({_before(dt, 'y', 'x')}) lo = m + 1; else hi = m;\n"
        f"            }}\n"
        f"            pos = s0 + (j - s0) + (lo - a1);\n"
        f"        }} else {{\n"
        f"            /* keys of the first run not after x */\n"
        f"            lo = s0; hi = a1;\n"
        f"            while (lo < hi) {{\n"
        f"                const long long m = (lo + hi) >> 1;\n"
        f"                const {T} y = {_load(dt, 'kin[rb + m]')};\n"
        f"                if (!{_before(dt, 'x', 'y')}) lo = m + 1; else hi = m;\n"
        f"            }}\n"
        f"            pos = s0 + (j - a1) + (lo - s0);\n"
        f"        }}\n"
        f"        kout[rb + pos] = kin[rb + j];\n"
        f"        iout[rb + pos] = iin[rb + j];\n"
        f"    }}\n}}\n")


def _search_kernel(dt):
    name = kernel_name("sortx", "search", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long n, long long m, long long L, long long bstride, '
        f"const {S}* bd, const {S}* v, long long* out, int right) {{\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const {S}* b = bd + (i / m) * bstride;\n"
        f"        const {T} x = {_load(dt, 'v[i]')};\n"
        f"        long long lo = 0, hi = L;\n"
        f"        while (lo < hi) {{\n"
        f"            const long long mid = lo + ((hi - lo) >> 1);\n"
        f"            const {T} y = {_load(dt, 'b[mid]')};\n"
        f"            if (right ? !(y > x) : !(y >= x)) lo = mid + 1; else hi = mid;\n"
        f"        }}\n"
        f"        out[i] = lo;\n"
        f"    }}\n}}\n")


def _histc_kernel(dt):
    name = kernel_name("sortx", "histc", TAGS[dt], "c")
    S, T = _storage(dt), _compute(dt)

    def r(e):          # one arithmetic step rounded to the tag's type
        return _load(dt, _store(dt, e))
    return name, (
        f'extern "C" __global__ void {name}(long long n, long long nb, unsigned long long* counts, '
        f"const {S}* in, double lo, double hi) {{\n"
        f"    const {T} lo_t = {r(f'({T})lo')}, hi_t = {r(f'({T})hi')};\n"
        f"    const {T} nb_t = {r(f'({T})nb')}, w = {r('hi_t - lo_t')};\n"
        f"    PTC_FOR(i, n) {{\n"
        f"        const {T} x = {_load(dt, 'in[i]')};\n"
        f"        if (x >= lo_t && x <= hi_t) {{\n"
        f"            const {T} d = {r('x - lo_t')};\n"
        f"            const {T} m = {r('d * nb_t')};\n"
        f"            long long b = (long long)({r('m / w')});\n"
        f"            b = b < 0 ? 0 : (b >= nb ? nb - 1 : b);\n"
        f"            atomicAdd(counts + b, 1ULL);\n"
        f"        }}\n"
        f"    }}\n}}\n")


def _histc_finish_kernel(dt):
    name = kernel_name("sortx", "histcfin", TAGS[dt], "c")
    S = _storage(dt)
    return name, (
        f'extern "C" __global__ void {name}(long long nb, {S}* hist, const unsigned long long* counts, '
        f"long long cap) {{\n"
        f"    PTC_FOR(b, nb) {{\n"
        f"        const unsigned long long c = counts[b];\n"
        f"        hist[b] = {_store(dt, '(c < (unsigned long long)cap ? c : (unsigned long long)cap)')};\n"
        f"    }}\n}}\n")


_FLOATS = ("float16", "bfloat16", "float32", "float64")


def generate():
    """``(name, family, source)`` of every kernel of this module."""
    for dt in _ALL:
        for fn in (_bitonic_kernel, _merge_kernel, _search_kernel):
            name, src = fn(dt)
            yield name, "sortx", src
    for dt in _FLOATS:
        for fn in (_histc_kernel, _histc_finish_kernel):
            name, src = fn(dt)
            yield name, "sortx", src
