"""CUDA loops of the matmul family's product and dot (cuBLAS GEMM) and of the
sorting family's search, histogram, counting, membership, row-uniqueness and
quantile loops (the row sort they use is ``ptcore.cuda.ops.index.sort_rows``),
and the kernels of ``allclose``/``equal``.

Each is registered where it is defined (``@cuda.loop``,
:mod:`ptcore.cuda.ops.registration`) under the loop name its front-end looks
up with ``cpu_kernel`` (as ATen's
DispatchStub), so the front-ends keep their argument checks, dtype rules and
Cython CPU loops unchanged, and CUDA tensors reach the functions below.  The
sorting loops are written with other ops' entries (each runs its own CUDA
kernel); nothing is copied to the host except the scalars a data-dependent
output size needs (as PyTorch synchronises there too).
"""
import ctypes

from ptcore import _tensor as _C
from ptcore.cuda.ops import launch as L
from ptcore.cuda.ops.registration import Registrations

__all__ = ["register"]

# this module's loops and kernels, each registered where it is defined
cuda = Registrations()

_GEMM_DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64", "complex128")


def _cname(dt):
    return L._cname(dt)


# ---------------------------------------------------------------------------
# matmul family: c = beta * c + alpha * (a @ b) over equal batch dims

@cuda.loop('product')
def _product(a, b, c=None, alpha=1, beta=0, kname="addmm_impl_cpu_"):
    """The CUDA loop of ``ptcore._ops.linalg._product``: ``a`` (..., M, K) @
    ``b`` (..., K, N) with equal batch dims (expanded views allowed), into a
    new contiguous tensor or accumulated into ``c``."""
    res = _gemm_new(a, b, c, alpha, beta, kname, a.dtype)
    if c is not None:
        c.copy_(res)
        return c
    return res


@cuda.loop('product_out_dtype')
def _product_out_dtype(a, b, c, alpha, beta, kname, out_dtype):
    """The CUDA loop of ``ptcore._ops.matmul_out_dtype``: ``alpha * a @ b +
    beta * c`` (``c`` None, or broadcast to the result) as a new contiguous
    tensor of ``out_dtype``; half operands with a float32 ``out_dtype`` are
    accumulated and stored in float32 (GemmEx with a float32 C)."""
    return _gemm_new(a, b, c, alpha, beta, kname, out_dtype)


def _gemm_new(a, b, c, alpha, beta, kname, out_dtype):
    """A new contiguous ``out_dtype`` tensor ``alpha * a @ b (+ beta * c)``."""
    dt = a.dtype
    name = L._name(dt)
    if name not in _GEMM_DTYPES:
        raise L.gemm_unsupported(dt, a.dim() > 2)
    if isinstance(alpha, _C._TensorBase):
        alpha = alpha.item()
    if isinstance(beta, _C._TensorBase):
        beta = beta.item()
    if not dt.is_complex:
        if isinstance(alpha, complex):
            alpha = alpha.real
        if isinstance(beta, complex):
            beta = beta.real
    batch = tuple(a.shape[:-2])
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    nb = 1
    for s in batch:
        nb *= s
    shape = batch + (m, n)
    res = L._empty(shape, out_dtype, a.device)
    acc = c is not None and beta is not None and not (beta == 0)
    if acc:
        L.cast_copy(res, c)
    if res.numel():
        a3 = L._contig(a).reshape(nb, m, k)
        b3 = L._contig(b).reshape(nb, k, n)
        L.gemm_mm(a3 if batch else a3[0], b3 if batch else b3[0],
                  res.reshape(nb, m, n) if batch else res, alpha,
                  beta if acc else 0.0, kname)
    return res


@cuda.loop('dot')
def _dot(a, b, conj):
    """The CUDA loop of ``ptcore._ops.linalg._dot_impl`` (1-D ``a`` . ``b``)."""
    if a.dtype.is_complex:
        # (cuBLAS dotc/dotu as a 1 x K @ K x 1 product: vdot conjugates its first argument;
        # conjugate views are materialized first, so the product sees plain values)
        import ptcore
        a = ptcore.conj_physical(a) if conj else a.resolve_conj()
        b = b.resolve_conj()
    if L._name(a.dtype) not in _GEMM_DTYPES:
        raise NotImplementedError(f"\"dot\" not implemented for '{_cname(a.dtype)}'")
    return _product(a.reshape(1, -1), b.reshape(-1, 1), kname="dot").reshape(())


# ---------------------------------------------------------------------------
# sorting family

@cuda.loop('sorting_minmax')
def _minmax(x1):
    """(min, max) of a 1-D tensor as Python numbers (NaN propagates)."""
    import ptcore
    lo, hi = ptcore.stack(ptcore.aminmax(x1)).tolist()      # one synchronization
    return lo, hi


@cuda.loop('searchsorted')
def _searchsorted(bd, values, out, right, sorter):
    """``out[..., j]``: the insertion point of ``values[..., j]`` in the
    innermost dim of ``bd`` (1-D, or with the values' leading dims), one
    binary search per value (PyTorch's: ``!(b >= v)`` or, right,
    ``!(b > v)`` moves right)."""
    import ptcore
    if sorter is not None:
        if sorter.numel():
            lo, hi = _minmax(sorter.reshape(-1))
            if lo < 0 or hi >= bd.shape[-1]:
                raise RuntimeError("torch.searchsorted(): sorter index out of range")
        bd = ptcore.take_along_dim(bd, sorter, -1) if bd.dim() > 1 else bd.index_select(0, sorter)
    n = out.numel()
    Lb = bd.shape[-1]
    if n == 0:
        return
    if Lb == 0:
        out.zero_()
        return
    b = L._contig(bd)
    v = L._contig(values)
    m = values.shape[-1] if values.dim() else 1
    res = out if (out.dtype is _C.int64 and out.is_contiguous()) else L._empty(list(out.shape), _C.int64,
                                                                                  out.device)
    L._launch(out.device.index, f"ptc_sortx_search_{L._tag(b.dtype, 'searchsorted')}_c", n,
              [L._ll(n), L._ll(m), L._ll(Lb), L._ll(0 if bd.dim() == 1 else Lb), L._ptr(b), L._ptr(v),
               L._ptr(res), ctypes.c_int(int(bool(right)))])
    if res is not out:
        L.cast_copy(out, res)


# the count where +1 stops changing a bin of that dtype (PyTorch accumulates in it)
_HISTC_CAP = {"float16": 2048, "bfloat16": 256, "float32": 2 ** 24, "float64": 2 ** 62}


@cuda.loop('histc')
def _histc(x1, hist, lo, hi):
    """Equal-width bins over [lo, hi] computed in the input's dtype as
    PyTorch (``(x - lo) * bins / (hi - lo)`` rounded per step), counted
    exactly (atomics on 64-bit counters) and stored capped where +1 stops
    changing a bin of that dtype: a fill, the count and the store kernel."""
    import ptcore
    dt, dev = x1.dtype, x1.device
    nb = hist.numel()
    tag = L._tag(dt, "histc")
    counts = ptcore.zeros(nb, dtype=ptcore.int64, device=dev)
    x = L._contig(x1)
    n = x.numel()
    if n:
        L._launch(dev.index, f"ptc_sortx_histc_{tag}_c", n,
                  [L._ll(n), L._ll(nb), L._ptr(counts), L._ptr(x), ctypes.c_double(lo), ctypes.c_double(hi)])
    res = hist if hist.is_contiguous() else L._empty([nb], dt, dev)
    L._launch(dev.index, f"ptc_sortx_histcfin_{tag}_c", nb,
              [L._ll(nb), L._ptr(res), L._ptr(counts), L._ll(_HISTC_CAP[L._name(dt)])])
    if res is not hist:
        L.cast_copy(hist, res)


@cuda.loop('histogram')
def _histogram(x, edges, weight, density):
    """``torch.histogram``'s counts (or weight sums) over the increasing
    ``edges`` (the last bin closed), accumulated in float64."""
    import ptcore
    f64 = ptcore.float64
    e = edges.to(f64)
    f = x.reshape(-1).to(f64)
    nb = e.shape[0] - 1
    ok = ptcore.logical_and(ptcore.ge(f, e[0]), ptcore.le(f, e[-1]))
    pos = ptcore.sub(ptcore.searchsorted(e, f, right=True), 1)
    pos = ptcore.clamp(ptcore.where(ok, pos, 0), 0, max(nb - 1, 0))
    w = ok.to(f64) if weight is None else ptcore.where(ok, weight.reshape(-1).to(f64), 0.0)
    counts = ptcore.zeros(nb, dtype=f64, device=x.device)
    if nb and f.numel():
        counts.scatter_add_(0, pos, w)
    if density:
        counts = counts / counts.sum() / (e[1:] - e[:-1])
    return counts.to(x.dtype)


@cuda.loop('bincount')
def _bincount(x1, weights, out):
    import ptcore
    out.zero_()
    if x1.numel() == 0:
        return
    w = weights if weights is not None else ptcore.ones(x1.shape, dtype=out.dtype, device=out.device)
    if w.dtype is not out.dtype:
        w = w.to(out.dtype)
    out.scatter_add_(0, x1.to(ptcore.int64), w)


@cuda.loop('isin')
def _isin(el, te, out, invert):
    import ptcore
    if te.numel() == 0:
        out.fill_(bool(invert))
        return
    srt = ptcore.sort(te).values                      # a binary search per element
    keys = srt
    if srt.dtype.is_floating_point:                   # NaN (last) as +inf: the keys stay ordered
        keys = ptcore.where(ptcore.isnan(srt), float("inf"), srt)
    pos = ptcore.clamp(ptcore.searchsorted(keys, el), max=srt.shape[0] - 1)
    hit = ptcore.eq(srt[pos], el)                     # NaN is in nothing
    L.cast_copy(out, ptcore.logical_not(hit) if invert else hit)


@cuda.loop('unique_dim')
def _unique_dim(mat, consecutive, return_inverse, return_counts):
    """Groups of the rows of a contiguous 2-D ``mat`` -> (rows, inverse,
    counts): rows sorted lexicographically (a stable sort per column, last
    column first) unless ``consecutive``; NaN rows are all distinct."""
    import ptcore
    s, r = mat.shape
    dev = mat.device
    perm = ptcore.arange(s, device=dev)
    if not consecutive:
        for col in range(r - 1, -1, -1):
            key = mat[:, col].index_select(0, perm)
            perm = perm.index_select(0, ptcore.argsort(key, stable=True))
    srt = mat.index_select(0, perm)
    first = ptcore.ones(s, dtype=ptcore.bool, device=dev)
    if s > 1:
        first[1:] = ptcore.any(ptcore.ne(srt[1:], srt[:-1]), 1) if r else False
    gid = ptcore.sub(ptcore.cumsum(first.to(ptcore.int64), 0), 1)
    rows = srt[first]
    inv = cnt = None
    if return_inverse:
        inv = ptcore.empty(s, dtype=ptcore.int64, device=dev)
        inv.scatter_(0, perm, gid)
    if return_counts:
        cnt = ptcore.zeros(rows.shape[0], dtype=ptcore.int64, device=dev)
        cnt.scatter_add_(0, gid, ptcore.ones(s, dtype=ptcore.int64, device=dev))
    return rows, inv, cnt


@cuda.loop('repeat_interleave_index')
def _repeat_interleave_index(repeats, total):
    """``[0]*r0 + [1]*r1 + ...`` for non-negative int64 ``repeats``."""
    import ptcore
    dev = repeats.device
    n = repeats.shape[0]
    if total == 0:
        return ptcore.empty(0, dtype=ptcore.int64, device=dev)
    # position i belongs to the number of cumulative ends <= i
    ends = ptcore.cumsum(repeats, 0)
    pos = ptcore.arange(total, device=dev)
    return ptcore.searchsorted(ends, pos, right=True).clamp(max=n - 1)


# ---------------------------------------------------------------------------
# quantiles

def _quantile_loop(ignore):
    def loop(rows, q, out, interp, ignore_nan, single):
        """``out[k, r]``: quantile ``q[k]`` of row ``r`` of float64 ``rows``
        (M, n) by PyTorch's algorithm (rank ``q * (count - 1)`` in the input
        precision, then its lerp), as the CPU loop computes it."""
        import ptcore
        dev = rows.device
        M, n = rows.shape
        nq = q.shape[0]
        f64 = ptcore.float64

        def rnd(t):
            return t.to(ptcore.float32).to(f64) if single else t

        srt = ptcore.sort(rows, 1).values                     # NaN last
        if ignore_nan:
            cnt = ptcore.sum(ptcore.eq(srt, srt), 1).to(f64)  # (M,)
            rank = rnd(ptcore.mul(q.unsqueeze(1), rnd(ptcore.sub(cnt, 1)).unsqueeze(0)))
            rank = ptcore.clamp(rank, min=0)
        else:
            last = float(n - 1)
            rank = rnd(ptcore.mul(q, rnd(ptcore.full((), last, dtype=f64, device=dev))))
            rank = rank.unsqueeze(1).expand(nq, M)
            rank = ptcore.where(ptcore.isnan(srt[:, n - 1]).unsqueeze(0),
                                ptcore.full((), last, dtype=f64, device=dev), rank)
        if interp == 1:
            rank = ptcore.floor(rank)
        elif interp == 2:
            rank = ptcore.ceil(rank)
        elif interp == 4:
            rank = ptcore.round(rank)
        below = rank.to(ptcore.int64)
        lo = ptcore.gather(srt, 1, below.t().contiguous()).t()
        if interp in (0, 3):
            hi = ptcore.gather(srt, 1, ptcore.ceil(rank).to(ptcore.int64).t().contiguous()).t()
            if interp == 3:
                wgt = ptcore.full((nq, M), 0.5, dtype=f64, device=dev)
            else:
                wgt = rnd(ptcore.sub(rank, below.to(f64)))
            d = rnd(ptcore.sub(hi, lo))
            a = rnd(ptcore.add(lo, rnd(ptcore.mul(wgt, d))))
            b = rnd(ptcore.sub(hi, rnd(ptcore.mul(d, rnd(ptcore.sub(1.0, wgt))))))
            lo = ptcore.where(ptcore.lt(wgt, 0.5), a, b)
        L.cast_copy(out, lo)
    return loop


cuda.loop("quantile")(_quantile_loop(False))
cuda.loop("nanquantile")(_quantile_loop(True))


# ---------------------------------------------------------------------------
# comparisons to a Python bool

@cuda.kernel("allclose")
def _allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    import ptcore
    return bool(ptcore.all(ptcore.isclose(input, other, rtol, atol, equal_nan)).item())


@cuda.kernel("equal")
def _equal(input, other):
    import ptcore
    for x, name in ((input, "input"), (other, "other")):
        if not isinstance(x, _C._TensorBase):
            raise TypeError(f"equal(): argument '{name}' must be Tensor, not {type(x).__name__}")
    if tuple(input.shape) != tuple(other.shape):
        return False
    if input.numel() == 0:
        return True
    return bool(ptcore.all(ptcore.eq(input, other)).item())


register = cuda.install       # run by ptcore.cuda.ops.register at CUDA's start
