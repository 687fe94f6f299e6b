"""cummax / cummin / logcumsumexp on CUDA (emulated device): the parallel
scans -- one thread a short row, one block a row, chunks of a long row over
many blocks -- against the CPU ops (exact values and positions for the
indexed scans, rounding for log-add-exp) and against torch; NaN, infinities
and ties in every chunk position; which variant each shape takes."""
import math

import numpy as np
import pytest

import ptcore
from ptcore.cuda.ops import index as LI

from kernel_launches import launched

torch = pytest.importorskip("torch")

_INT = (ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64)
_FLOAT = (ptcore.float16, ptcore.bfloat16, ptcore.float32, ptcore.float64)
_TOL = {ptcore.float16: 2e-3, ptcore.bfloat16: 1e-2, ptcore.float32: 1e-5, ptcore.float64: 1e-12}

# (shape, dim): a short row (one thread each), rows of a block or more, a
# transposed view, long rows split in chunks (few rows), one long row
_SHAPES = [((3, 5), 1), ((4, 300), 1), ((300, 4), 0), ((2, 9000), 1), ((9000,), 0), ((2, 3, 70), 2)]


def _values(shape, seed, low=-3, high=3):
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(np.float64) \
        + np.random.default_rng(seed + 1).random(shape).round(1)


def _check(x, dim):
    xc = x.cuda()
    for fn in (ptcore.cummax, ptcore.cummin):
        got, want = fn(xc, dim), fn(x, dim)
        v, w = got.values.cpu(), want.values
        assert v.dtype == w.dtype and v.shape == w.shape
        assert np.array_equal(v.double().numpy(), w.double().numpy(), equal_nan=True), (fn.__name__, x.dtype)
        assert got.indices.cpu().tolist() == want.indices.tolist(), (fn.__name__, x.dtype)
    if x.dtype.is_floating_point:
        got = ptcore.logcumsumexp(xc, dim).cpu()
        want = ptcore.logcumsumexp(x.double(), dim)
        t = _TOL[x.dtype]
        assert got.dtype == x.dtype
        assert ptcore.allclose(got.double(), want, rtol=t, atol=t, equal_nan=True), x.dtype


@pytest.mark.parametrize("dtype", _INT + _FLOAT, ids=str)
@pytest.mark.parametrize("shape,dim", _SHAPES)
def test_matches_cpu(shape, dim, dtype):
    lo = 0 if dtype is ptcore.uint8 else -3
    x = ptcore.tensor(_values(shape, 7, lo, lo + 6))
    _check(x.to(dtype) if not dtype.is_floating_point else x.to(dtype), dim)


@pytest.mark.parametrize("n", [5, 40, 300, 9000])
@pytest.mark.parametrize("pattern", ["nan_mid", "nan_first", "two_nans", "ties", "inf", "neginf", "mixinf"])
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16], ids=str)
def test_special_values(n, pattern, dtype):
    nan, inf = math.nan, math.inf
    b = np.random.default_rng(n).integers(-3, 3, size=(3, n)).astype(np.float64)
    if pattern == "nan_mid":
        b[0, n // 2] = nan
        b[1, n - 1] = nan
    elif pattern == "nan_first":
        b[:, 0] = nan
    elif pattern == "two_nans":          # the latest NaN's position, as PyTorch
        b[:, n // 3] = nan
        b[:, 2 * n // 3] = nan
    elif pattern == "ties":
        b[:] = 1.0
    elif pattern == "inf":
        b[:, n // 3] = inf
    elif pattern == "neginf":
        b[:] = -inf
    else:
        b[0, ::7] = inf
        b[1, ::5] = -inf
        b[2, 1], b[2, 2] = inf, -inf
    x = ptcore.tensor(b).to(dtype)
    _check(x, 1)
    _check(ptcore.tensor(b.T.copy()).to(dtype), 0)


def test_against_torch():
    b = _values((4, 5000), 3)
    b[1, 4000] = math.nan
    b[2, 100] = math.nan
    b[2, 4999] = math.nan
    b[3, 2500:] = math.inf
    for fn in ("cummax", "cummin"):
        got = getattr(ptcore, fn)(ptcore.tensor(b, dtype=ptcore.float32).cuda(), 1)
        want = getattr(torch, fn)(torch.tensor(b, dtype=torch.float32), 1)
        assert np.array_equal(got.values.cpu().numpy(), want.values.numpy(), equal_nan=True)
        assert np.array_equal(got.indices.cpu().numpy(), want.indices.numpy())
    for n in (20, 5000, 20000):
        c = _values((2, n), n)
        got = ptcore.logcumsumexp(ptcore.tensor(c, dtype=ptcore.float32).cuda(), 1).cpu().numpy()
        want = torch.logcumsumexp(torch.tensor(c, dtype=torch.float64), 1).numpy()
        assert np.allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,dim,variants", [
    ((64, 8), 1, ["t"]),                    # short rows: a thread each
    ((64, 300), 1, ["c"]),                  # a block a row
    ((2, 9000), 1, ["p", "k"]),             # few long rows: chunks over blocks
])
def test_variant_by_shape(shape, dim, variants):
    x = ptcore.zeros(*shape, device="cuda")
    for op, fn in (("cummax", lambda: ptcore.cummax(x, dim)), ("logcumsumexp", lambda: ptcore.logcumsumexp(x, dim))):
        _, names = launched(fn)
        scans = [n for n in names if n.startswith(f"ptc_scan_{op}_")]
        assert [n.rsplit("_", 1)[1] for n in scans] == variants, names


def test_chunk_boundaries():
    """Extremes, ties and NaNs placed on both sides of every chunk edge of a
    chunked row."""
    n = 4 * LI._SCAN_CHUNK + 77
    assert LI._scan_chunks(LI._SCAN_FEW_ROWS, n) is None     # enough rows fill the device a block each
    C, nch = LI._scan_chunks(1, n)
    b = np.zeros((1, n))
    for c in range(1, nch):
        b[0, c * C - 1] = c
        b[0, c * C] = c             # a tie across the edge: the later position
    b[0, 3 * C + 5] = math.nan
    b[0, 3 * C - 2] = -math.inf
    _check(ptcore.tensor(b, dtype=ptcore.float32), 1)
    _check(ptcore.tensor(b[:, :3 * C], dtype=ptcore.float64), 1)


def test_grad_through_chunked_cummax():
    b = _values((2, 9000), 11)
    grads = []
    for dev in ("cpu", "cuda"):
        t = ptcore.tensor(b, dtype=ptcore.float64, device=dev).requires_grad_()
        (t.cummax(1).values * ptcore.arange(9000.0, device=dev)).sum().backward()
        (t.logcumsumexp(1).sum()).backward()
        grads.append(t.grad.cpu())
    assert ptcore.allclose(grads[0], grads[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.float64, ptcore.bfloat16], ids=str)
def test_scans_write_their_result_in_one_kernel(dtype):
    """Along the last dim of a contiguous tensor each scan is one kernel
    writing the result (and the indices) in place: no casts of the input to
    the accumulation type and back (float32 accumulates in double inside the
    kernel, as the CPU's scans), no copies of the rows; in place and out=
    too.  Values as the CPU's."""
    x = ptcore.tensor(_values((5, 300), 23)).to(dtype)
    xc = x.cuda()
    tol = {ptcore.float32: 2.4e-7, ptcore.float64: 1e-15}.get(dtype, 1e-2)
    for op in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
        y = x if op != "cumprod" else (1 + x.double() * 1e-3).to(dtype)
        yc = y.cuda()
        got, names = launched(lambda: getattr(ptcore, op)(yc, 1))
        assert len(names) == 1 and names[0].startswith(f"ptc_scan_{op}_"), names
        want = getattr(ptcore, op)(y, 1)
        if op in ("cummax", "cummin"):
            assert got.indices.cpu().tolist() == want.indices.tolist()
            got, want = got.values, want.values
        # (log-add-exp steps group differently in a block scan: a few ulps)
        t = tol if op != "logcumsumexp" else _TOL[dtype]
        # (partial sums near zero: their absolute error is the rows' scale's)
        assert ptcore.allclose(got.cpu().double(), want.double(), rtol=t, atol=1e-11, equal_nan=True), op
    # in place, and into a given contiguous out
    z = xc.clone()
    _, names = launched(lambda: z.cumsum_(1))
    assert len(names) == 1, names
    assert ptcore.allclose(z.cpu().double(), x.cumsum(1).double(), rtol=tol, atol=1e-11)
    vo, io = ptcore.empty_like(xc), ptcore.empty(xc.shape, dtype=ptcore.int64, device="cuda")
    _, names = launched(lambda: ptcore.cummax(xc, 1, out=(vo, io)))
    assert len(names) == 1, names
    assert io.cpu().tolist() == x.cummax(1).indices.tolist()
    # along another dim the rows are gathered and put back (values still the CPU's)
    assert ptcore.allclose(xc.cumsum(0).cpu().double(), x.cumsum(0).double(), rtol=tol, atol=1e-11)
