"""CUDA loops of the reduction and scan front-ends of ``ptcore._ops.reduction``
(reductions over any set of dims with keepdim, max/min with indices,
var/std(+mean), norms, logsumexp, all/any, cumsum/cumprod/cummax/cummin/
logcumsumexp), registered as the front-ends' device loops (``@reductions.loop``, ``@scans.loop``:
:mod:`ptcore.cuda.ops.registration`) under the names the
front-ends look up; the front-ends themselves then run on CUDA tensors.

Rows: the reduced (or scanned) dims are moved last and copied contiguous
on the device, so every kernel sees an (M, L) matrix (one block per row).
"""
import ctypes
import math

from ptcore import _tensor as _C
from ptcore.cuda.kernels import library as K
from ptcore.cuda.ops import index as LI
from ptcore.cuda.ops import launch as L
from ptcore.cuda.ops.registration import Registrations
from ptcore.cuda.runtime import state as _runtime

__all__ = ["register"]

_OUT_RULE = {row[0]: row[2] for row in K.REDUCE}
_HALVES = ("float16", "bfloat16")
_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


def _rows(x, dims):
    """(contiguous (M, L) tensor (``x`` itself or a copy) with the ``dims`` last, M, L)."""
    nd = x.dim()
    kept = [d for d in range(nd) if d not in dims]
    shape = list(x.shape)
    M = 1
    for d in kept:
        M *= shape[d]
    Lr = 1
    for d in dims:
        Lr *= shape[d]
    xp = x.permute(kept + list(dims)) if nd else x
    c = LI._dense(xp) if M * Lr else xp      # the kernels only read it: no copy when dense
    return c, M, Lr


_COLUMN_MAX_L = 1 << 16         # shorter columns always take the column kernel
_COLUMN_MIN_BLOCKS = 256        # longer ones when they give this many blocks


def columns(shape, dims):
    """``(O, L, I)`` when reducing a contiguous tensor of ``shape`` over the
    sorted ``dims`` takes the column kernel (``ptc_reduce_<op>_..._k``):
    the dims are one run with kept dims after it (I > 1), so the reduced
    elements of each output are a column of the (O, L, I) view and no copy
    need move them last; None otherwise.  The dense fast path
    (``_dense_fast.reduce``) makes the same choice, so both give
    bitwise the same result."""
    n = len(dims)
    if n == 0 or dims[n - 1] - dims[0] != n - 1:
        return None
    O = Lr = I = 1
    for d in range(dims[0]):
        O *= shape[d]
    for d in dims:
        Lr *= shape[d]
    for d in range(dims[n - 1] + 1, len(shape)):
        I *= shape[d]
    if I == 1 or O * Lr * I == 0:
        return None
    if Lr >= _COLUMN_MAX_L and O * ((I + K.COLUMN_WIDTH - 1) // K.COLUMN_WIDTH) < _COLUMN_MIN_BLOCKS:
        return None
    return O, Lr, I


# A column reduction with few blocks (O * column groups) is latency bound
# (sum(dim=0) of a 2048 x 1024 float32: 32 blocks, 101 us against torch's
# 15 on the H200): its rows are then split in chunks, each chunk's column
# sums a partial (pass 1, many blocks), the partials' columns summed (pass 2).
_COLUMN_SPLIT_BLOCKS = 264      # fewer column blocks than this: split
_COLUMN_SPLIT_TARGET = 528      # pass-1 blocks aimed at
_COLUMN_SPLIT_MIN_ROWS = 256    # rows a chunk keeps at least


def column_chunks(O, Lr, I):
    """Rows per chunk when the column reduction of (O, Lr, I) is split
    along Lr, or 0.  With O > 1 the chunks tile every o's rows exactly (the
    (O * chunks, rows, I) view of the tensor); with O == 1 a shorter last
    chunk is allowed."""
    nb = O * ((I + K.COLUMN_WIDTH - 1) // K.COLUMN_WIDTH)
    if nb >= _COLUMN_SPLIT_BLOCKS:
        return 0
    nch = min(-(-_COLUMN_SPLIT_TARGET // nb), Lr // _COLUMN_SPLIT_MIN_ROWS)
    if O == 1:
        return -(-Lr // nch) if nch >= 2 else 0
    while nch >= 2 and Lr % nch:
        nch -= 1
    return Lr // nch if nch >= 2 else 0


def _split_columns(op, x, out, O, Lr, I, Lc):
    """sum/mean of the columns of contiguous ``x`` viewed (O, Lr, I) in two
    passes over chunks of ``Lc`` rows (see ``column_chunks``); the half
    types' partials in float32."""
    src = x if L._name(x.dtype) not in ("float16", "bfloat16") else LI._contig_copy(x, _C.float32)
    flat = src.reshape(-1)
    full = Lr // Lc
    tail = Lr - full * Lc                       # O == 1 only
    k = full + (1 if tail else 0)
    pname = K._reduce_out(L._name(src.dtype), _OUT_RULE["sum"])
    parts = L._empty([O * k * I], getattr(_C, pname), x.device)
    _column_launch("sum", flat, parts, O * full, Lc, I, L._params())
    if tail:
        _column_launch("sum", flat[full * Lc * I:], parts[full * I:], 1, tail, I, L._params())
    res = L._empty([O * I], parts.dtype, x.device)
    _column_launch("sum", parts, res, O, k, I, L._params())
    if op == "mean":
        res = L.binary("div", res, float(Lr))
    L.cast_copy(out, res.reshape(list(out.shape)))


def _trailing_first(shape, dims):
    """``(k, shape)`` when ``dims`` (sorted) are a run with kept dims after
    it followed by a run ending last whose rows are shorter than one
    block's (65,536): ``dims[k:]`` is that last run and ``shape`` the
    partial result of reducing over it, whose ``dims[:k]`` then take the
    column kernel; None otherwise."""
    n = len(dims)
    nd = len(shape)
    if n < 2 or dims[n - 1] != nd - 1:
        return None
    k = n - 1
    while k > 0 and dims[k - 1] == dims[k] - 1:
        k -= 1
    if k == 0:
        return None             # one run: the row kernel as it is
    rows = 1
    for d in dims[k:]:
        rows *= shape[d]
    part = list(shape[:dims[k]])
    if rows >= _COLUMN_MAX_L or rows == 0 or columns(tuple(part), dims[:k]) is None:
        return None
    return k, part


def _column_launch(op, x, res, O, Lr, I, params):
    name = f"ptc_reduce_{op}_{L._tag(x.dtype, op)}_{L._tag(res.dtype, op)}_k"
    L._launch(x.device.index, name, O * ((I + K.COLUMN_WIDTH - 1) // K.COLUMN_WIDTH),
              [L._ll(O), L._ll(Lr), L._ll(I), L._ptr(res), L._ptr(x), params], rows=True)


# [dense_fast.run_reduce] while the C fast paths are installed, else [None]:
# the row kernel launched from C when it reads x itself and writes out
_run_fast = [None]


def _run(op, x, dims, out, params):
    """Reduce ``x`` over ``dims`` with kernel ``ptc_reduce_<op>`` into ``out``
    (any dtype; the kernel's own result is converted)."""
    fast = _run_fast[0]
    if fast is not None and fast(op, x, dims, out, params):
        return
    fname = op
    dims = sorted(d % max(x.dim(), 1) for d in dims) if x.dim() else []
    if x.dim() == 0:
        dims = []
    col = columns(tuple(x.shape), dims) if op in K.REDUCE_COLUMNS and x.is_contiguous() else None
    if col is not None:
        O, Lr, I = col
        Lc = column_chunks(O, Lr, I)
        if Lc:
            _split_columns(op, x, out, O, Lr, I, Lc)
            return
        od = K._reduce_out(L._name(x.dtype), _OUT_RULE[op])
        rdt = getattr(_C, od) if od != "bool" else _C.bool_
        if out.dtype is rdt and out.is_contiguous() and \
                out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr():
            res = out
        else:
            res = L._empty([O * I], rdt, x.device)
        _column_launch(op, x, res, O, Lr, I, params)
        if res is not out:
            L.cast_copy(out, res.reshape(list(out.shape)))
        return
    if op in K.REDUCE_COLUMNS and x.is_contiguous() and L._name(x.dtype) in _FLOAT_NAMES:
        # (the partial result keeps x's dtype, the accumulation type:
        # float32 for a half input, read as float32 first)
        part = _trailing_first(tuple(x.shape), dims)
        if part is not None:
            if L._name(x.dtype) in _HALVES:
                x = LI._contig_copy(x, _C.float32)
            # a conv bias gradient's (0, 2, 3): the trailing run as rows,
            # then the rest of the dims as columns of that partial result
            # (for mean, the mean of equal-sized groups' means)
            lead, shape = part
            res = L._empty(shape, x.dtype, x.device)
            _run(op, x, dims[lead:], res, params)
            _run(op, res, dims[:lead], out, params)
            return
    rows, M, Lr = _rows(x, dims)
    if M == 0 or out.numel() == 0:
        return
    in_tag = L._tag(x.dtype, fname)
    od = K._reduce_out(L._name(x.dtype), _OUT_RULE[op])
    rdt = getattr(_C, od) if od != "bool" else _C.bool_
    if out.dtype is rdt and out.is_contiguous() and \
            out.untyped_storage().data_ptr() != rows.untyped_storage().data_ptr():
        res = out                   # the kernel writes the result in place
    else:
        res = L._empty([M], rdt, x.device)
    if Lr == 0:
        if op in ("amax", "amin", "argmax", "argmin"):
            raise IndexError(f"{op}(): Expected reduction dim to have non-zero size.")
        val = {"sum": 0, "nansum": 0, "prod": 1, "all": 1, "any": 0, "count_nonzero": 0, "norm0": 0,
               "norm1": 0, "norm2": 0, "norminf": 0, "normp": 0, "logsumexp": -math.inf}.get(op, math.nan)
        L.fill(res, val)
    elif op in _SPLIT and M <= _SPLIT_MAX_ROWS and Lr >= _SPLIT_MIN:
        split = _SPLIT[op]
        if callable(split):
            split(op, rows, res, M, Lr, params)
        else:
            _split_rows(op, rows, res, M, Lr, params)
    else:
        _row_launch(op, rows, res, M, Lr, params)
    if res is not out:
        L.cast_copy(out, res.reshape(list(out.shape)))


def _row_launch(op, rows, res, M, Lr, params):
    """``res[r]`` = op over row ``r`` of the contiguous (M, Lr) ``rows`` (one block per row)."""
    name = f"ptc_reduce_{op}_{L._tag(rows.dtype, op)}_{L._tag(res.dtype, op)}_c"
    L._launch(rows.device.index, name, M, [L._ll(M), L._ll(Lr), L._ptr(res), L._ptr(rows), params],
              rows=True)


# Long rows and not many of them (sum/mean/... with no dim, or over a long
# last dim): one block per row would leave the device idle, so each row is
# reduced in two passes: fixed chunks of ``_chunk(L)`` elements one block
# each (all rows in one launch), then the partials of the chunks (and of the
# tail) per row.  The split depends on L alone, so the result is
# deterministic (no atomics).  _SPLIT (below) says how, per reduce kernel.
#
# the reduce kernels with an exact result (no float accumulation: the kernel
# library's "ext" accumulation rule) read half rows as they are
_SPLIT_EXACT = frozenset(row[0] for row in K.REDUCE if row[3] == "ext")
_SPLIT_MIN = 1 << 16            # rows shorter than this stay in one block
_SPLIT_MAX_ROWS = 512           # more rows than this already fill the device
_SPLIT_CHUNKS = 4096            # at most this many pass-1 blocks per row
_CHUNK_MIN = 4096               # the smallest pass-1 chunk
# Pass 1's block size.  Measured on an H200 (sum of 2^28 float32 against
# torch): 128-thread blocks 0.82x (2026-11-26, first run), 256-thread blocks
# 0.76x (a later run: the add bandwidth of both runs 0.93x/0.94x), so 128;
# on the H100 128 gave 0.90x.  A different block size sums in another
# (fixed) order.  Those runs read one element per load; pass 1 now reads
# aligned rows in 16-byte groups (_kernels._reduce_kernel), not yet timed on
# a GPU.
_SPLIT_BLOCK = 128


def _chunk(n):
    """Elements per pass-1 block for a row of ``n``: a power of two >=
    ``_CHUNK_MIN`` giving at most ``_SPLIT_CHUNKS`` full chunks."""
    c = _CHUNK_MIN
    while c * _SPLIT_CHUNKS < n:
        c *= 2
    return c


def _strided_launch(op, src, out, sizes, out_strides, in_strides, length, params=None):
    """``out`` (contiguous) at ``out_strides`` = op over ``length`` consecutive
    elements of ``src`` starting at ``in_strides`` offsets, for every index of
    ``sizes`` (the strided reduce kernel)."""
    n = 1
    for v in sizes:
        n *= v
    ix = L._struct(K.pack_strided(sizes, [out_strides, in_strides]))
    name = f"ptc_reduce_{op}_{L._tag(src.dtype, op)}_{L._tag(out.dtype, op)}_s"
    L._launch(src.device.index, name, n, [L._ll(n), L._ll(length), L._ptr(out), L._ptr(src),
                                          params if params is not None else L._params(),
                                          ix, L._ll(1)], rows=True, block=_SPLIT_BLOCK)


def _chunk_partials(first, rows, M, n, params=None):
    """Pass 1: ``first`` over each chunk of ``_chunk(n)`` elements of the rows
    (and the tail): ((M, k) partials, chunk size, full chunks, tail).  The
    rows of a half type are read as float32 unless ``first`` is exact."""
    dev = rows.device
    rows = rows.reshape(M, n)
    if first not in _SPLIT_EXACT and L._name(rows.dtype) in ("float16", "bfloat16"):
        rows = LI._contig_copy(rows, _C.float32)   # partials keep float32 accumulation
    c = _chunk(n)
    g, tail = divmod(n, c)
    k = g + (1 if tail else 0)
    if rows.dtype.is_complex:           # (complex sum/prod: ptcore.cuda.ops.complex)
        pdt = rows.dtype
    else:
        pname = K._reduce_out(L._name(rows.dtype), _OUT_RULE[first])
        pdt = _C.bool_ if pname == "bool" else getattr(_C, pname)
    parts = L._empty([M, k], pdt, dev)
    _strided_launch(first, rows, parts, [M, g], [k, 1], [n, c], c, params)
    if tail:
        _strided_launch(first, rows[:, g * c:], parts[:, g:], [M], [k], [n], tail, params)
    return parts, c, g, tail


def _split_rows(op, rows, res, M, n, params=None):
    """``res[r]`` = op over row ``r`` of the contiguous (M, n) ``rows`` in two passes."""
    first, second = _SPLIT[op]
    parts, c, g, tail = _chunk_partials(first, rows, M, n, params)
    k = parts.shape[1]
    if op == "mean":
        total = L._empty([M], parts.dtype, rows.device)
        _row_launch(second, parts, total, M, k, L._params())
        L.cast_copy(res, L.binary("div", total, float(n)))
    else:
        p2 = params if second == "normp" else L._params()
        if parts.dtype is res.dtype:
            _row_launch(second, parts, res, M, k, p2)
        else:                   # float32 partials of a half input: the result in float32, rounded once
            tmp = L._empty([M], parts.dtype, rows.device)
            _row_launch(second, parts, tmp, M, k, p2)
            L.cast_copy(res, tmp)


def _split_var(op, rows, res, M, n, params):
    """var/std of long rows in two kernels: each chunk's Welford mean and
    M2 (read in the input's own type), then per row Chan's combination of
    its chunks, the correction (``params``' d0) and, for std, the root."""
    dev = rows.device
    rows = rows.reshape(M, n)
    c = _chunk(n)
    k = -(-n // c)
    tag = L._tag(rows.dtype, op)
    acc = _C.float64 if rows.dtype is _C.float64 else _C.float32
    mean, m2 = L._empty([M, k], acc, dev), L._empty([M, k], acc, dev)
    L._launch(dev.index, f"ptc_reduce_welford_{tag}_s", M * k,
              [L._ll(M), L._ll(n), L._ll(c), L._ll(k), L._ptr(mean), L._ptr(m2), L._ptr(rows)],
              rows=True, block=_SPLIT_BLOCK)
    out = res if res.dtype is rows.dtype else L._empty([M], rows.dtype, dev)
    L._launch(dev.index, f"ptc_reduce_welfordfin_{tag}_c", M,
              [L._ll(M), L._ll(n), L._ll(c), L._ll(k), L._ptr(out), L._ptr(mean), L._ptr(m2), params,
               ctypes.c_int(op == "std")], rows=True)
    if out is not res:
        L.cast_copy(res, out)


def _split_arg(op, rows, res, M, n, params):
    """argmax/argmin of long rows: the pair kernel, one launch (each
    chunk's extreme value and index, combined by the row's last block)."""
    _pair_launch(op, rows, (res,), M, n)


_ACC_DTYPES = {"float": _C.float32, "double": _C.float64, "int": _C.int32, "long long": _C.int64}
_SEMAPHORES = {}        # (driver, device, stream) -> the pair kernels' row counters (left at 0)
_runtime.on_reset(_SEMAPHORES.clear)


def _semaphores(dev):
    """The address of ``_SPLIT_MAX_ROWS`` zeroed counters on ``dev`` for the
    current stream (filled once; every pair kernel sets the counters it
    used back to 0, so no launch zeroes them per call)."""
    drv = _runtime.lazy_init("reduce")
    key = (drv, dev.index, _runtime.current_stream_handle(dev.index))
    t = _SEMAPHORES.get(key)
    if t is None:
        t = L._empty([_SPLIT_MAX_ROWS], _C.int32, dev)
        L.fill(t, 0)
        _SEMAPHORES[key] = t
    return t.data_ptr()


def _pair_launch(op, rows, outs, M, n):
    """``outs[k][r]`` = op over row ``r`` of the contiguous (M, n) ``rows``
    (op argmax/argmin: one int64 output; aminmax: the minima and maxima, of
    rows' dtype) with the pair kernel (``ptc_reduce_<op>_..._g``): one
    launch; long rows, and not many of them, are cut in chunks of
    ``_chunk(n)`` elements whose states the row's last block combines."""
    dev = rows.device
    c = _chunk(n) if M <= _SPLIT_MAX_ROWS and n >= _SPLIT_MIN else n
    nblk = -(-n // c)
    tin = L._tag(rows.dtype, op)
    tout = tin if op == "aminmax" else L._tag(_C.int64, op)
    ws = [0, 0, 0, 0]               # wv, wv2, wi, sem
    if nblk > 1:
        acc = _ACC_DTYPES[K._acc_type(L._name(rows.dtype), "ext")]
        wv = L._empty([M * nblk], acc, dev)
        w2 = L._empty([M * nblk], acc if op == "aminmax" else _C.int64, dev)
        ws = [wv.data_ptr(), w2.data_ptr() if op == "aminmax" else 0,
              0 if op == "aminmax" else w2.data_ptr(), _semaphores(dev)]
    out2 = outs[1].data_ptr() if len(outs) > 1 else 0
    L._launch(dev.index, f"ptc_reduce_{op}_{tin}_{tout}_g", M * nblk,
              [L._ll(M), L._ll(n), L._ll(c), L._ll(nblk), L._ptr(outs[0]), out2, L._ptr(rows)] + ws
              + [L._params()], rows=True)


def _run_aminmax(x, dims, out0, out1):
    """aminmax of ``x`` over ``dims`` into ``out0`` (minima) and ``out1``
    (maxima): the pair kernel reads x in its own dtype, one launch."""
    dims = sorted(d % max(x.dim(), 1) for d in dims) if x.dim() else []
    rows, M, Lr = _rows(x, dims)
    if M == 0 or out0.numel() == 0:
        return
    if Lr == 0:
        raise IndexError("aminmax(): Expected reduction dim to have non-zero size.")
    sp = rows.untyped_storage().data_ptr()
    res = [o if o.dtype is rows.dtype and o.is_contiguous() and o.untyped_storage().data_ptr() != sp
           else L._empty([M], rows.dtype, x.device) for o in (out0, out1)]
    _pair_launch("aminmax", rows, res, M, Lr)
    for r, o in zip(res, (out0, out1)):
        if r is not o:
            L.cast_copy(o, r.reshape(list(o.shape)))


# reduce kernel -> how this launcher splits its long rows: (pass-1 kernel, pass-2
# kernel) for _split_rows, or the function that combines the chunks itself.  The
# norms and logsumexp combine their chunks' results with the same kernel (norm2 of
# the chunks' norm2s, normp of their normps, logsumexp of their logsumexps),
# norm0/norm1 by a sum.  (A table: keyed by the kernel library's reduce kernels
# (norm0, normneginf, std ...), not by op; no op's registration names them.)
_SPLIT = {"sum": ("sum", "sum"), "nansum": ("nansum", "sum"), "mean": ("sum", "sum"),
          "prod": ("prod", "prod"), "amax": ("amax", "amax"), "amin": ("amin", "amin"),
          "all": ("all", "all"), "any": ("any", "any"), "count_nonzero": ("count_nonzero", "sum"),
          "norm0": ("norm0", "sum"), "norm1": ("norm1", "sum"), "norm2": ("norm2", "norm2"),
          "norminf": ("norminf", "norminf"), "normneginf": ("normneginf", "normneginf"),
          "normp": ("normp", "normp"), "logsumexp": ("logsumexp", "logsumexp"),
          "var": _split_var, "std": _split_var, "argmax": _split_arg, "argmin": _split_arg}


def _acc(op, x, acc, out0, out1, exact):
    """``x`` as the loop reads it: converted to the accumulation type
    ``acc`` (a full copy), except a float16/bfloat16 ``x`` whose results
    are of its own type (or exact), which the kernels read directly: they
    accumulate a half input in float32 and round the result once, as the
    conversion did (torch's CUDA reductions read halves the same way);
    ``exact``: the loop's result is one of the input's elements (or an index,
    a count), so a half input is read as it is."""
    if acc is None or acc.is_complex or x.dtype is acc:
        return x
    if op == "var" and x.dtype is _C.float32 and all(
            o is None or o.dtype is x.dtype for o in (out0, out1)):
        # float32 var/std: Welford in float32, as torch's CUDA kernels (acc_type<float> is
        # float on the device); the front-end's float64 accumulation is the CPU's
        return x
    if L._name(x.dtype) in _HALVES and op != "nanmean" and (
            exact or all(o is None or o.dtype is x.dtype for o in (out0, out1))):
        return x
    return LI._contig_copy(x, acc)


def _reduce_kernel(op, exact):
    def kernel(x, dims, acc, out0, out1, keepdim, correction=0.0, p=2.0, take_sqrt=False):
        if op == "aminmax":
            return _run_aminmax(x, dims, out0, out1)     # (exact: x in its own dtype)
        x = _acc(op, x, acc, out0, out1, exact)
        if op in ("max.dim", "min.dim"):
            if out0 is not None:
                _run("amax" if op == "max.dim" else "amin", x, dims, out0, L._params())
            if out1 is not None:
                _run("argmax" if op == "max.dim" else "argmin", x, dims, out1, L._params())
        elif op == "var":
            if out0 is not None:
                _run("std" if take_sqrt else "var", x, dims, out0, L._params(d0=float(correction)))
            if out1 is not None:
                _run("mean", x, dims, out1, L._params())
        elif op == "vector_norm":
            p = float(p)
            kop = {math.inf: "norminf", -math.inf: "normneginf", 0.0: "norm0", 1.0: "norm1",
                   2.0: "norm2"}.get(p, "normp")
            if kop in ("norm1", "norm2", "normp") and all(x.shape[d] == 1 for d in dims):
                # one element per output: |x|, as torch (and the CPU kernel)
                # answer it, not sqrt(x ** 2) (1e300 ** 2 overflows)
                kop = "norminf"
            _run(kop, x, dims, out0, L._params(d0=p))
        elif op == "nanmean":
            import ptcore
            s = L._empty(list(out0.shape), x.dtype, x.device)
            _run("nansum", x, dims, s, L._params())
            c = L._empty(list(out0.shape), x.dtype, x.device)
            _run("sum", ptcore.eq(x, x), dims, c, L._params())
            L.cast_copy(out0, ptcore.div(s, c))
        else:
            _run(op, x, dims, out0, L._params())
    return kernel


# the reductions over any dims, one loop each (ptcore.cuda.ops.complex wraps
# each for complex tensors)
reductions = Registrations()


def _reduction(op, exact=False):
    """Register the loop of reduction ``op``; ``exact``: its result is one of
    the input's elements (or an index, a count), so it needs no accumulation
    type (max.dim/min.dim/aminmax run amax/amin/argmax)."""
    reductions.loop(op)(_reduce_kernel(op, exact))


_reduction("sum")
_reduction("nansum")
_reduction("mean")
_reduction("nanmean")
_reduction("prod")
_reduction("amax", exact=True)
_reduction("amin", exact=True)
_reduction("max.dim", exact=True)
_reduction("min.dim", exact=True)
_reduction("aminmax", exact=True)
_reduction("all", exact=True)
_reduction("any", exact=True)
_reduction("var")
_reduction("logsumexp")
_reduction("count_nonzero", exact=True)
_reduction("vector_norm")

# this module's other loops
cuda = Registrations()


@cuda.loop("trace")
def _trace(out, input):
    _run("sum", input.diagonal(), [0], out, L._params())


def _rows_of(out, dim, dtype, M, Lr, dev):
    """The (M, Lr) rows a scan along ``dim`` writes: ``out`` itself (viewed)
    when its rows are contiguous and of ``dtype`` -- the kernel writes the
    result in place, and ``out`` may be the input itself (the row kernels
    read each element before writing its place) -- else a new tensor that
    :func:`ptcore.cuda.ops.index._put_rows` copies into ``out``."""
    if out is not None and out.dtype is dtype and out.dim() > 0:
        moved = out.movedim(dim, -1)
        if moved.is_contiguous():
            return moved.reshape(M, Lr)
    return L._empty([M, Lr], dtype, dev)


def _is_rows_of(rows, out):
    return rows is not None and out is not None and rows.data_ptr() == out.data_ptr() \
        and rows.numel() == out.numel() and rows.dtype is out.dtype


def _line_kernel(op):
    def kernel(x, dim, out0, out1=None):
        if x.dim() == 0:
            L.cast_copy(out0, x)
            if out1 is not None:
                L.fill(out1, 0)
            return
        rows, M, Lr = _rows(x, [dim % x.dim()])
        if M * Lr == 0:
            return
        dev = x.device
        if op in ("cumsum", "cumprod"):
            od = getattr(_C, K._reduce_out(L._name(x.dtype), "int64_if_int")) if x.dtype is not _C.bool_ \
                else _C.int64
            res = _rows_of(out0, dim, od, M, Lr, dev)
            LI.scan_rows(op, rows, res, M, Lr)
            if not _is_rows_of(res, out0):
                LI._put_rows(out0, res, dim)
            return
        res = _rows_of(out0, dim, x.dtype, M, Lr, dev)
        idx = None if op == "logcumsumexp" else _rows_of(out1, dim, _C.int64, M, Lr, dev)
        LI.line_scan(op, rows, res, idx, M, Lr)
        if not _is_rows_of(res, out0):
            LI._put_rows(out0, res, dim)
        if out1 is not None and not _is_rows_of(idx, out1):
            LI._put_rows(out1, idx, dim)
    return kernel


@cuda.loop("scan_native")
def _scan_native(op, x, dim, out0, out1=None):
    """Scan ``op`` of a float tensor in its own dtype (the front-end's fast
    form: the kernels accumulate as the CPU's scans do, so the front-end
    need not convert to the accumulation type and back)."""
    return _SCAN_LOOPS[op](x, dim, out0, out1)


# the scans along one dim, one loop each (ptcore.cuda.ops.complex wraps each
# for complex tensors)
scans = Registrations()
_SCAN_LOOPS = {}
for _op_name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
    _SCAN_LOOPS[_op_name] = scans.loop(_op_name)(_line_kernel(_op_name))
del _op_name

_registered = [False]


def register():
    if _registered[0]:
        return
    reductions.install()
    scans.install()
    cuda.install()
    _registered[0] = True
