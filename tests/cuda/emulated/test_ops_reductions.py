"""Reductions with dims/keepdim, max/min with indices, var/std, norms,
logsumexp, all/any and the scans on CUDA tensors (emulated device),
compared with the CPU ops: dtypes, several dims, non-contiguous inputs,
out= and gradients."""
import math

import pytest

import ptcore

torch = pytest.importorskip("torch")


def _rand(shape, dtype=ptcore.float32, seed=0):
    g = ptcore.Generator().manual_seed(seed)
    return (ptcore.rand(*shape, generator=g) * 6 - 3).to(dtype)


def _close(dev, cpu, tol=None):
    got = dev.cpu()
    assert got.dtype == cpu.dtype and tuple(got.shape) == tuple(cpu.shape), (got.dtype, cpu.dtype, got.shape,
                                                                           cpu.shape)
    if not cpu.dtype.is_floating_point:
        assert got.tolist() == cpu.tolist()
        return
    t = tol or {ptcore.float16: 2e-3, ptcore.bfloat16: 1e-2, ptcore.float32: 2e-6}.get(cpu.dtype, 1e-12)
    assert ptcore.allclose(got.double(), cpu.double(), rtol=t, atol=t, equal_nan=True), (got, cpu)


_DIMS = [0, 1, -1, (0, 2), (1, 2), (), None]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.float64, ptcore.int32, ptcore.bool])
def test_sum_mean_prod_amax_with_dims(dtype):
    x = _rand((3, 4, 5), ptcore.float32, 1)
    x = (x > 0) if dtype is ptcore.bool else x.to(dtype)
    xc = x.cuda()
    for dim in _DIMS:
        kw = {} if dim is None else {"dim": dim}
        for keepdim in (False, True):
            if dim is None and keepdim:
                continue
            if dim is not None:
                kw["keepdim"] = keepdim
            _close(ptcore.sum(xc, **kw), ptcore.sum(x, **kw))
            if dim is not None and dim != ():
                _close(ptcore.amax(xc, **kw), ptcore.amax(x, **kw))
                _close(ptcore.amin(xc.transpose(0, 2), **kw), ptcore.amin(x.transpose(0, 2), **kw))
            if dtype.is_floating_point:
                _close(ptcore.mean(xc, **kw), ptcore.mean(x, **kw))
            if isinstance(dim, int):
                _close(ptcore.prod(xc, dim, keepdim), ptcore.prod(x, dim, keepdim))
                _close(ptcore.all(xc, dim, keepdim), ptcore.all(x, dim, keepdim))
                _close(ptcore.any(xc, dim, keepdim), ptcore.any(x, dim, keepdim))
    _close(ptcore.sum(xc, 1, dtype=ptcore.float64), ptcore.sum(x, 1, dtype=ptcore.float64))
    _close(ptcore.count_nonzero(xc, (0, 1)), ptcore.count_nonzero(x, (0, 1)))


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.bfloat16, ptcore.int64, ptcore.uint8])
def test_max_min_argmax_with_indices(dtype):
    x = (_rand((4, 6), ptcore.float32, 2) * 3).to(dtype)          # ties for the integer types
    xc = x.cuda()
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            for fn in (ptcore.max, ptcore.min):
                a, b = fn(xc, dim, keepdim), fn(x, dim, keepdim)
                _close(a.values, b.values)
                _close(a.indices, b.indices)
            _close(ptcore.argmax(xc.t(), dim, keepdim), ptcore.argmax(x.t(), dim, keepdim))
            _close(ptcore.argmin(xc, dim, keepdim), ptcore.argmin(x, dim, keepdim))
    _close(ptcore.argmax(xc), ptcore.argmax(x))
    mn, mx = ptcore.aminmax(xc, dim=1)
    mn0, mx0 = ptcore.aminmax(x, dim=1)
    _close(mn, mn0)
    _close(mx, mx0)
    v = ptcore.empty(6, dtype=dtype, device="cuda")
    i = ptcore.empty(6, dtype=ptcore.int64, device="cuda")
    ptcore.max(xc, 0, out=(v, i))
    _close(v, ptcore.max(x, 0).values)
    _close(i, ptcore.max(x, 0).indices)


def test_nan_handling():
    x = ptcore.tensor([[1.0, float("nan"), 3.0], [float("-inf"), 2.0, 2.0], [float("nan")] * 3])
    xc = x.cuda()
    for fn in (ptcore.amax, ptcore.amin, ptcore.argmax, ptcore.argmin, ptcore.nansum, ptcore.nanmean,
               ptcore.logsumexp):
        _close(fn(xc, 1), fn(x, 1))
    a, b = ptcore.max(xc, 1), ptcore.max(x, 1)
    _close(a.values, b.values)
    _close(a.indices, b.indices)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16])
def test_var_std_norm_logsumexp(dtype):
    x = _rand((3, 4, 5), dtype, 3)
    xc = x.cuda()
    for dim in (1, (0, 2), None):
        for corr in (0, 1, 2):
            _close(ptcore.var(xc, dim, correction=corr), ptcore.var(x, dim, correction=corr))
            _close(ptcore.std(xc, dim, correction=corr, keepdim=True),
                   ptcore.std(x, dim, correction=corr, keepdim=True))
        v, m = ptcore.var_mean(xc, dim)
        v0, m0 = ptcore.var_mean(x, dim)
        _close(v, v0)
        _close(m, m0)
        s, m = ptcore.std_mean(xc.transpose(0, 1), dim)
        s0, m0 = ptcore.std_mean(x.transpose(0, 1), dim)
        _close(s, s0)
        _close(m, m0)
        for p in (2, 1, 0, 3.5, math.inf, -math.inf):
            _close(ptcore.linalg.vector_norm(xc, p, dim), ptcore.linalg.vector_norm(x, p, dim))
        _close(ptcore.norm(xc, dim=dim), ptcore.norm(x, dim=dim))
        if dim is not None:
            _close(ptcore.logsumexp(xc, dim), ptcore.logsumexp(x, dim))


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.int32, ptcore.float64])
def test_scans(dtype):
    x = _rand((3, 5), ptcore.float32, 4).to(dtype)
    xc = x.cuda()
    for dim in (0, 1, -1):
        _close(ptcore.cumsum(xc, dim), ptcore.cumsum(x, dim))
        _close(ptcore.cumprod(xc.t(), dim), ptcore.cumprod(x.t(), dim))
        for fn in (ptcore.cummax, ptcore.cummin):
            a, b = fn(xc, dim), fn(x, dim)
            _close(a.values, b.values)
            _close(a.indices, b.indices)
        if dtype.is_floating_point:
            _close(ptcore.logcumsumexp(xc, dim), ptcore.logcumsumexp(x, dim))
    _close(ptcore.cumsum(xc, 1, dtype=ptcore.float64), ptcore.cumsum(x, 1, dtype=ptcore.float64))
    a, b = xc.clone(), x.clone()
    a.cumsum_(0)
    b.cumsum_(0)
    _close(a, b)
    y = ptcore.tensor([1.0, float("nan"), 3.0, -1.0])
    a, b = ptcore.cummax(y.cuda(), 0), ptcore.cummax(y, 0)
    _close(a.values, b.values)
    _close(a.indices, b.indices)


def test_reduction_grads():
    x = _rand((3, 4), ptcore.float32, 5)
    grads = []
    for dev in ("cpu", "cuda"):
        t = x.to(dev, copy=True).requires_grad_()
        y = (t.sum(1) * ptcore.arange(3.0, device=dev)).sum() + t.amax(0).sum() + t.max(1).values.sum() \
            + t.var(1).sum() + t.std(0, keepdim=True).sum() + t.logsumexp(1).sum() + t.norm(dim=1).sum() \
            + (t.cumsum(1) * t).sum() + t.cumprod(0).sum() + t.prod(1).sum() + t.mean((0, 1)) \
            + t.cummax(1).values.sum()
        y.backward()
        grads.append(t.grad)
    _close(grads[1], grads[0], 1e-5)


def test_errors_and_empty():
    xc = ptcore.zeros(3, 0, device="cuda")
    _close(xc.sum(1), ptcore.zeros(3, 0).sum(1))
    _close(xc.prod(1), ptcore.zeros(3, 0).prod(1))
    with pytest.raises(IndexError):
        xc.amax(1)
    with pytest.raises(IndexError):
        ptcore.ones(2, 3, device="cuda").sum(2)
    with pytest.raises(RuntimeError):
        ptcore.ones(2, 3, device="cuda", dtype=ptcore.int64).mean(0)


def test_against_torch():
    x = _rand((4, 5), ptcore.float32, 6)
    tx = torch.tensor(x.tolist())
    assert ptcore.allclose(ptcore.var(x.cuda(), 1).cpu(), ptcore.tensor(torch.var(tx, 1).tolist()))
    assert ptcore.cumsum(x.cuda(), 0).cpu().tolist() == torch.cumsum(tx, 0).tolist()
    assert ptcore.max(x.cuda(), 1).indices.cpu().tolist() == torch.max(tx, 1).indices.tolist()


@pytest.mark.parametrize("dtype", [ptcore.float64, ptcore.float32, ptcore.int32, ptcore.bool])
def test_long_row_scans_run_in_chunks(dtype, launches, monkeypatch):
    """cumsum/cumprod along long contiguous rows of few rows split each row
    into chunks (a partials kernel, then each chunk scanned from the
    partials before it): the same values as the CPU; a row longer than
    _SCAN_MAX_CHUNKS chunks of _SCAN_CHUNK gets longer chunks.  (One block
    per row scanned a 2^21-element mask in 8 ms on the H200.)"""
    from ptcore.cuda.ops import index as R      # the row scans (cumsum of masks, scan front-ends)
    n = 4 * R._SCAN_CHUNK + 77
    x = _rand((3, n), dtype, seed=5) if dtype is not ptcore.bool else _rand((3, n), seed=5) > 0
    for op in ("cumsum", "cumprod"):
        y = x if op == "cumsum" else (1 + x.double() * 1e-4).to(dtype) if dtype.is_floating_point else x
        if op == "cumprod" and not dtype.is_floating_point:
            continue
        del launches[:]
        got = getattr(ptcore, op)(y.cuda(), 1)
        scans = [k for k in launches if k.startswith("ptc_scan")]
        assert len(scans) == 2 and scans[0].startswith(f"ptc_scan_{op}_"), launches
        assert scans[0].endswith("_p") and scans[1] == scans[0][:-2] + "_k", launches
        _close(got, getattr(ptcore, op)(y, 1), 1e-5 if dtype is ptcore.float32 else None)
    # a short row, or many rows: one block per row
    del launches[:]
    _close(ptcore.cumsum(x[:, :100].cuda(), 1), ptcore.cumsum(x[:, :100], 1))
    assert [k for k in launches if k.startswith("ptc_scan")][-1].endswith("_c")
    # more chunks than allowed: longer chunks (a multiple of 128 elements)
    monkeypatch.setattr(R, "_SCAN_MAX_CHUNKS", 3)
    _close(ptcore.cumsum(x.cuda(), 1), ptcore.cumsum(x, 1), 1e-5 if dtype is ptcore.float32 else None)
    # the mask prefix of nonzero / masked_select / masked_scatter / x[mask]
    m = (x[0] > 0) if dtype is not ptcore.bool else x[0]
    v = _rand((n,), seed=6)
    assert ptcore.equal(ptcore.nonzero(m.cuda()).cpu(), ptcore.nonzero(m))
    assert ptcore.equal(v.cuda()[m.cuda()].cpu(), v[m])
    assert ptcore.equal(ptcore.masked_select(v.cuda(), m.cuda()).cpu(), ptcore.masked_select(v, m))
    s = _rand((n,), seed=7)
    assert ptcore.equal(v.cuda().masked_scatter(m.cuda(), s.cuda()).cpu(), v.masked_scatter(m, s))


_LONG_ROW_CASES = [
    ("var", lambda t: t.var(1)), ("std", lambda t: t.std(1, correction=0)), ("var_all", lambda t: t.var()),
    ("std_mean", lambda t: ptcore.std_mean(t, 1, correction=2)[0]),
    ("argmax", lambda t: t.argmax(1)), ("argmin_all", lambda t: t.argmin()),
    ("max_dim", lambda t: t.max(1)[1]), ("min_dim", lambda t: t.min(1)[1]),
    ("norm2", lambda t: ptcore.linalg.vector_norm(t, dim=1)), ("norm1", lambda t: t.norm(1)),
    ("norm3", lambda t: ptcore.linalg.vector_norm(t, 3.0, dim=1)),
    ("norm_neg", lambda t: ptcore.linalg.vector_norm(t, -1.5, dim=1)),
    ("norminf", lambda t: ptcore.linalg.vector_norm(t, math.inf, dim=1)),
    ("normneginf", lambda t: ptcore.linalg.vector_norm(t, -math.inf, dim=1)),
    ("norm0", lambda t: ptcore.linalg.vector_norm(t, 0, dim=1)),
    ("logsumexp", lambda t: ptcore.logsumexp(t, 1)),
]


@pytest.mark.parametrize("dtype", [ptcore.float64, ptcore.float32, ptcore.bfloat16])
@pytest.mark.parametrize("name,fn", _LONG_ROW_CASES, ids=[c[0] for c in _LONG_ROW_CASES])
def test_long_row_reductions_run_in_two_passes(name, fn, dtype, launches):
    """var/std, argmax/argmin, the norms and logsumexp of few long rows run
    in chunks, many blocks a row (one block a row took 0.7-2.2 ms for 2^21
    elements on the H200), and combine the chunks' results: the CPU's values,
    ties and NaN resolved as the CPU does (the first index)."""
    x = _rand((3, 70_001), dtype, seed=9)
    x[1, 50_000] = 7
    x[1, 60_000] = 7                    # a tie: the first
    x[2, 40_000] = -7
    x[2, 65_000] = float("nan")         # NaN wins argmax/argmin, norms, logsumexp
    x[2, 69_000] = float("nan")
    del launches[:]
    got = fn(x.cuda())
    # (the chunk kernels: ``_s``, or argmax/argmin's one-launch pair kernel ``_g``)
    assert any(k.startswith("ptc_reduce_") and k.endswith(("_s", "_g")) for k in launches), launches
    want = fn(x)
    tol = {ptcore.float64: 1e-12, ptcore.float32: 2e-5, ptcore.bfloat16: 1e-2}[dtype]
    _close(got, want, tol)


@pytest.mark.parametrize("shape,dims", [((2048, 96), 0), ((3001, 40), (0,)), ((4, 1024, 64), 1),
                                        ((600, 3, 8, 8), (0, 2, 3)), ((2, 7, 600, 33), (1, 2))])
@pytest.mark.parametrize("dtype", [ptcore.float64, ptcore.float32, ptcore.bfloat16, ptcore.int32])
def test_column_sums_with_few_blocks_split_their_rows(shape, dims, dtype, launches):
    """sum/mean over leading dims with few column blocks (sum(dim=0) of a
    2048 x 1024 float32: 32 blocks, 101 us against torch's 15 on the H200)
    split the rows in chunks: a pass of many blocks into partials, then the
    partials' columns; the CPU's values (the dense C fast path defers to
    this path for such shapes)."""
    from ptcore.cuda.ops import reduce as R
    if dims == (0, 2, 3) and dtype is ptcore.int32:
        pytest.skip("two runs of dims take the rows-then-columns path for float32/float64 only")
    x = _rand(shape, dtype, seed=11)
    for op in ("sum", "mean"):
        if op == "mean" and not dtype.is_floating_point:
            continue
        del launches[:]
        got = getattr(x.cuda(), op)(dims)
        cols = [k for k in launches if k.startswith("ptc_reduce_") and k.endswith("_k")]
        assert len(cols) >= 2, launches            # the chunks' pass, then the partials'
        tol = {ptcore.float64: 1e-12, ptcore.float32: 1e-5, ptcore.bfloat16: 1e-2}.get(dtype)
        _close(got, getattr(x, op)(dims), tol)
    assert R.column_chunks(1, 2048, 1024) == 256 and R.column_chunks(1, 2048, 1024 * 300) == 0
    assert R.column_chunks(3, 1001, 32) == 0 or 1001 % (1001 // R.column_chunks(3, 1001, 32)) == 0


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.int32, ptcore.uint8])
@pytest.mark.parametrize("shape", [(3, 70_000), (5, 1_000)])
@pytest.mark.parametrize("offset", [0, 1, 3])
def test_aligned_rows_read_in_vector_groups(dtype, shape, offset, launches):
    """Contiguous rows whose start is aligned to four elements are read in
    ptc_vec4 groups (the split pass-1 ``s`` kernel of long rows, the ``c``
    kernel of short ones), the rest element by element: same values, and
    ties (inside one group, across groups and threads) and NaN resolved as
    on the CPU, whatever the row's alignment (offset views)."""
    n = shape[1] + offset
    x = _rand((shape[0], n), ptcore.float32, seed=11)
    if not dtype.is_floating_point:
        x = (x * 40).abs()
    x = x.to(dtype)
    hi = 100 if dtype is not ptcore.float16 else 60
    for p in (n // 2 + 1, n // 2 + 2, n // 2 + 7, n - 1):     # ties in a group, across groups, at the tail
        x[0, p] = hi
        x[1, p] = -hi if dtype.is_floating_point and dtype.is_signed else 0
    if dtype.is_floating_point:
        x[2, n // 3] = float("nan")
    x = x[:, offset:]
    cases = [lambda t: t.sum(1), lambda t: t.amax(1), lambda t: t.amin(1), lambda t: t.argmax(1),
             lambda t: t.argmin(1), lambda t: t.argmax(), lambda t: (t != 0).sum(1),
             lambda t: ptcore.count_nonzero(t, 1)]
    if dtype.is_floating_point:
        cases += [lambda t: t.mean(1), lambda t: t.sum(), lambda t: ptcore.linalg.vector_norm(t, dim=1),
                  lambda t: ptcore.linalg.vector_norm(t, 3.0, dim=1), lambda t: t.var(1),
                  lambda t: ptcore.logsumexp(t, 1), lambda t: t.norm(1)]
    xc = x.cuda()
    del launches[:]
    for fn in cases:
        want = fn(x)
        tol = {ptcore.float64: 1e-12, ptcore.float32: 2e-5, ptcore.float16: 2e-3}.get(want.dtype)
        _close(fn(xc), want, tol)
    assert any(k.startswith("ptc_reduce_") for k in launches), launches


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16])
def test_long_row_var_is_two_kernels(dtype, launches):
    """var/std of few long rows: one kernel for the chunks' Welford (mean,
    M2) read in the input's own type, one combining them per row (the tail
    chunk shorter), the correction and the root (it took ~15 launches)."""
    x = _rand((2, 70_003), dtype, seed=5) * 3 + 11
    for fn in (lambda t: t.var(1), lambda t: t.std(1, correction=3), lambda t: t.std(correction=0)):
        del launches[:]
        got = fn(x.cuda())
        # read in the input's own type: no float64 copy of a float32 input (torch's CUDA var
        # accumulates float32 in float32), no float32 copy of a half one
        assert sorted(n.split("_")[2] for n in launches) == ["welford", "welfordfin"], launches
        want = fn(x.double()).to(dtype)
        _close(got, want, {ptcore.float32: 1e-6, ptcore.float16: 1e-3}[dtype])


@pytest.mark.parametrize("dtype", [ptcore.float64, ptcore.float32, ptcore.complex128])
def test_norm_over_dims_of_one_is_abs(dtype):
    # |x| (the CPU's and torch's answer) for one element per output, not
    # sqrt(x ** 2); order 0 counts values too small to square
    big = 1e30 if dtype is ptcore.float32 else 1e300
    x = ptcore.tensor([[big], [3.0], [-2.5], [math.nan], [0.0], [1e-40 if dtype is ptcore.float32 else 5e-324]],
                      dtype=ptcore.float64).to(dtype)
    for p in (2, 3, 0.5, 1, 0, -1, math.inf):
        for keepdim in (False, True):
            _close(ptcore.linalg.vector_norm(x.cuda(), p, 1, keepdim=keepdim),
                   ptcore.linalg.vector_norm(x, p, 1, keepdim=keepdim), 0.0)
