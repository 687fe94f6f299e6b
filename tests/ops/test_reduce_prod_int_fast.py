"""The vectorised products, integer sums, count_nonzero and float32 scans
(ptc_reduce_vec.h's second template, _reduce_scan.pxi's scan_f32).

Float products of a row follow ATen's vectorized_reduction with torch's
32-byte vectors (8 floats, 4 doubles; its reductions run their AVX2 copy on
AVX-512 CPUs too): the NumPy model below
(``_torch_order_prod``) gives their bits without torch; where torch is
installed it is compared too.  Integer sums/products are exact (wrapping).
Every ISA copy of this CPU runs in-process (``_reduce._simd_level``); torch's
narrower width runs in a child process with ATEN_CPU_CAPABILITY.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _reduce

LENGTHS = list(range(1, 71)) + [1000, 1031]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "bool"]
LEVELS = [lv for lv in (0, 1, 2) if lv == 0 or _reduce._simd_level(lv) != _reduce._simd_level(lv - 1)]
_reduce._simd_level(2)


@pytest.fixture(params=LEVELS, ids=lambda lv: f"isa{lv}")
def level(request):
    """Each vector copy of this CPU (the baseline, AVX2, AVX-512)."""
    _reduce._simd_level(request.param)
    yield request.param
    _reduce._simd_level(2)


@pytest.fixture(params=[1, 2], ids=lambda n: f"{n}thr")
def threads(request):
    prev = ptcore.get_num_threads()
    ptcore.set_num_threads(request.param)
    yield request.param
    ptcore.set_num_threads(prev)


def _lanes(dtype):
    return 32 // np.dtype(dtype).itemsize


def _torch_order_prod(row):
    """The product of ``row`` as ATen's vectorized_reduction forms it."""
    row = np.asarray(row)
    v = _lanes(row.dtype)
    n = len(row)
    r = row.dtype.type(1)
    i = 0
    with np.errstate(all="ignore"):
        if n >= 4 * v:
            acc = row[:4 * v].copy()
            for i in range(4 * v, n - 4 * v + 1, 4 * v):
                acc = acc * row[i:i + 4 * v]
            i = n // (4 * v) * 4 * v
            a = (acc[:v] * acc[v:2 * v]) * (acc[2 * v:3 * v] * acc[3 * v:])
            r = a[0]
            for k in range(1, v):
                r = r * a[k]
        for j in range(i, n):
            r = r * row[j]
    return r


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    both_nan = np.isnan(a) & np.isnan(b)
    same = (a == b) & (np.signbit(a) == np.signbit(b))
    return bool((both_nan | same).all())


def _floats(n, dtype, seed):
    # values near 1 in magnitude so long products stay finite, signs mixed
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.6, n) * rng.choice([-1.0, 1.0], n)
    return x.astype(dtype)


# --------------------------------------------------------------------------
# NumPy checks (no torch)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_products_have_torch_order_bits(dtype, level, threads):
    for n in LENGTHS:
        a = np.stack([_floats(n, dtype, n), _floats(n, dtype, n + 1000)])
        got = ptcore.from_numpy(a).prod(1).numpy()
        want = np.array([_torch_order_prod(r) for r in a], dtype=dtype)
        assert _same_bits(got, want), (n, got, want)
        # the product of all elements of one short row is the same row product
        assert _same_bits(ptcore.from_numpy(a[0]).prod().numpy(), want[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_products_in_row_order(dtype, level, threads):
    for n in (1, 3, 17, 70, 1031):
        a = _floats(n * 37, dtype, n).reshape(n, 37)
        want = a[0].copy()
        for r in a[1:]:
            want = want * r
        assert _same_bits(ptcore.from_numpy(a).prod(0).numpy(), want)
        # wide rows: vector blocks plus a tail of columns
        b = _floats(5 * n, dtype, n + 3).reshape(5, n)
        want = b[0] * b[1] * b[2] * b[3] * b[4]
        assert _same_bits(ptcore.from_numpy(b).prod(0).numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_product_edge_values(dtype, level):
    big = np.finfo(dtype).max ** 0.75
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, big, -big, 1e-30, np.finfo(dtype).tiny / 4]
    rng = np.random.default_rng(7)
    for n in (5, 64, 65, 200):
        for trial in range(20):
            a = _floats(n, dtype, trial)
            k = rng.integers(1, 4)
            a[rng.integers(0, n, k)] = rng.choice(specials, k)
            got = ptcore.from_numpy(a).prod().numpy()
            assert _same_bits(got, _torch_order_prod(a)), (n, a)
            # (a column: each product in row order; an (n, 1) column would be one row)
            got0 = ptcore.from_numpy(np.stack([a, a], 1)).prod(0).numpy()[0]
            with np.errstate(all="ignore"):
                seq = a.dtype.type(1)
                for v in a:
                    seq = seq * v
            assert _same_bits(got0, seq)


def test_long_products_match_numpy_closely(threads):
    # more elements than one unit of the engine (units cascade): not one row's
    # order, the same value to float rounding, whatever the thread count
    a = _floats(300_000, "float64", 1)
    a /= np.exp(np.log(np.abs(a)).mean())
    got = ptcore.from_numpy(a).prod().item()
    np.testing.assert_allclose(got, np.prod(a), rtol=1e-9)
    b = ptcore.from_numpy(a.astype(np.float32))
    ptcore.set_num_threads(1)
    one = b.prod().numpy()
    ptcore.set_num_threads(threads)
    assert _same_bits(b.prod().numpy(), one)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_sums_exact(dtype, level, threads):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype) if dtype != "bool" else None
    for n in LENGTHS:
        if dtype == "bool":
            a = rng.integers(0, 2, (3, n)).astype(bool)
        else:
            a = rng.integers(info.min, info.max, (3, n), dtype=dtype, endpoint=True)
        x = ptcore.from_numpy(a)
        want1 = a.astype(np.int64).sum(1)
        assert x.sum(1).dtype == ptcore.int64
        np.testing.assert_array_equal(x.sum(1).numpy(), want1)
        np.testing.assert_array_equal(x.sum(0).numpy(), a.astype(np.int64).sum(0))
        assert x.sum().item() == int(want1.sum())
        np.testing.assert_array_equal(x.sum(1, keepdim=True).numpy(), want1[:, None])
        np.testing.assert_array_equal(x.flip(1).sum(1).numpy(), want1)
        np.testing.assert_array_equal(x[:, ::2].sum(1).numpy(), a[:, ::2].astype(np.int64).sum(1))
        np.testing.assert_array_equal(x.t().sum(0).numpy(), want1)


def test_int64_sums_and_products_wrap(level, threads):
    rng = np.random.default_rng(4)
    for n in LENGTHS:
        a = rng.integers(-2**63, 2**63 - 1, (2, n), dtype=np.int64, endpoint=True)
        x = ptcore.from_numpy(a)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(x.sum(1).numpy(), a.sum(1))
            np.testing.assert_array_equal(x.prod(1).numpy(), a.prod(1))
            np.testing.assert_array_equal(x.prod(0).numpy(), a.prod(0))
            np.testing.assert_array_equal(x.sum(0).numpy(), a.sum(0))
            assert x.prod().item() == int(a.prod())
        small = rng.integers(-3, 4, (4, n)).astype(np.int32)
        np.testing.assert_array_equal(ptcore.from_numpy(small).prod(1).numpy(),
                                      small.astype(np.int64).prod(1))


def test_integer_sums_of_expanded_and_empty_inputs():
    x = ptcore.tensor([3, -5, 7], dtype=ptcore.int32).reshape(3, 1).expand(3, 1000)
    np.testing.assert_array_equal(x.sum(1).numpy(), [3000, -5000, 7000])
    np.testing.assert_array_equal(x.sum(0).numpy(), np.full(1000, 5))
    assert x.sum().item() == 5000
    e = ptcore.zeros((0, 4), dtype=ptcore.int16)
    np.testing.assert_array_equal(e.sum(0).numpy(), np.zeros(4, np.int64))
    assert e.sum(1).shape == (0,)
    assert e.prod().item() == 1
    f = ptcore.zeros((3, 0))
    np.testing.assert_array_equal(f.prod(1).numpy(), np.ones(3, np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "uint8",
                                   "int16", "int32", "int64", "bool"])
def test_count_nonzero(dtype, level, threads):
    rng = np.random.default_rng(5)
    for n in LENGTHS:
        a = rng.integers(-2, 3, (2, n)).astype(np.float64)
        if dtype in ("float32", "float64", "float16", "bfloat16"):
            a[a == 2] = np.nan
            a[a == -2] = -0.0
        x = ptcore.from_numpy(a).to(getattr(ptcore, dtype))
        ref = (a.astype(bool) if dtype == "bool" else a)
        want = int(np.count_nonzero(ref))
        assert ptcore.count_nonzero(x).item() == want
        np.testing.assert_array_equal(ptcore.count_nonzero(x, 1).numpy(), np.count_nonzero(ref, 1))
        np.testing.assert_array_equal(ptcore.count_nonzero(x, 0).numpy(), np.count_nonzero(ref, 0))
        assert ptcore.count_nonzero(x.flip(1)).item() == want


def test_count_nonzero_long_runs_of_bytes():
    # more than 255 vector steps of byte lanes in one row (the lane counters'
    # blocks), all nonzero
    a = np.ones(300_001, np.uint8)
    assert ptcore.count_nonzero(ptcore.from_numpy(a)).item() == 300_001
    assert ptcore.count_nonzero(ptcore.from_numpy(a.view(bool))).item() == 300_001


@pytest.mark.parametrize("shape,dim", [((7, 1031), 1), ((1031, 7), 0), ((5, 70, 9), 1),
                                       ((3, 5, 300), 2), ((600, 600), 1), ((600, 600), 0)])
@pytest.mark.parametrize("name", ["cumprod", "cumsum"])
def test_float32_scans_accumulate_in_double(shape, dim, name, threads):
    a = _floats(int(np.prod(shape)), "float32", 11).reshape(shape)
    got = getattr(ptcore.from_numpy(a), name)(dim).numpy()
    want = getattr(np, name)(a.astype(np.float64), axis=dim).astype(np.float32)
    assert _same_bits(got, want)
    # the non-contiguous input takes the general path: the same values
    t = ptcore.from_numpy(np.ascontiguousarray(np.swapaxes(a, 0, -1))).transpose(0, -1)
    assert _same_bits(getattr(t, name)(dim).numpy(), want)


# --------------------------------------------------------------------------
# against torch
# --------------------------------------------------------------------------
def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_match_torch_bits(dtype, threads):
    torch = _torch()
    prev = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for n in LENGTHS + [4099]:
            a = np.stack([_floats(n, dtype, n + s) for s in range(3)])
            x, t = ptcore.from_numpy(a), torch.from_numpy(a)
            assert _same_bits(x.prod(1).numpy(), t.prod(1).numpy()), n
            assert _same_bits(x.prod(0).numpy(), t.prod(0).numpy()), n
            assert _same_bits(x.prod(1, keepdim=True).numpy(), t.prod(1, keepdim=True).numpy())
            assert _same_bits(x.t().prod(0).numpy(), t.t().prod(0).numpy())
            if a.size < 32768:          # (torch's grain: one thread's serial row)
                assert _same_bits(x.prod().numpy(), t.prod().numpy()), n
    finally:
        torch.set_num_threads(prev)


def test_products_match_torch_edge_cases():
    torch = _torch()
    cases = [
        np.array([[np.nan, 1.0, 2.0] * 30, [np.inf, 0.0, 1.0] * 30], np.float32),
        np.array([[-0.0] * 70, [0.0] * 69 + [-1.0]], np.float32),
        np.array([[1e30, 1e30, 0.0] + [1.0] * 100], np.float32),
        np.array([[3.0] * 200], np.float32),
    ]
    for a in cases:
        x, t = ptcore.from_numpy(a), torch.from_numpy(a)
        assert _same_bits(x.prod(1).numpy(), t.prod(1).numpy())
        assert _same_bits(x.prod(0).numpy(), t.prod(0).numpy())
        assert _same_bits(x.prod().numpy(), t.prod().numpy())
    a = _floats(3 * 100, "float32", 1).reshape(3, 100)
    x, t = ptcore.from_numpy(a), torch.from_numpy(a)
    assert _same_bits(x.prod(1, dtype=ptcore.float64).numpy(), t.prod(1, dtype=torch.float64).numpy())
    assert _same_bits(x.flip(1).prod(1).numpy(), t.flip(1).prod(1).numpy())
    assert _same_bits(x[:, ::3].prod(1).numpy(), t[:, ::3].prod(1).numpy())
    o, ot = ptcore.empty(3), torch.empty(3)
    x.prod(1, out=o)
    torch.prod(t, 1, out=ot)
    assert _same_bits(o.numpy(), ot.numpy())
    e = ptcore.from_numpy(a[:, :0])
    assert _same_bits(e.prod(1).numpy(), torch.from_numpy(a[:, :0]).prod(1).numpy())
    for dt in ("float16", "bfloat16"):
        xh, th = x.to(getattr(ptcore, dt)), t.to(getattr(torch, dt))
        np.testing.assert_allclose(xh.prod(1).float().numpy(), th.prod(1).float().numpy(), rtol=3e-2)
        np.testing.assert_allclose(xh.prod(0).float().numpy(), th.prod(0).float().numpy(), rtol=3e-2)


def test_large_products_close_to_torch(threads):
    torch = _torch()
    a = _floats(10**6, "float32", 2).reshape(1000, 1000)
    a /= np.float32(np.exp(np.log(np.abs(a)).mean()))
    x, t = ptcore.from_numpy(a), torch.from_numpy(a)
    np.testing.assert_allclose(x.prod().item(), t.prod().item(), rtol=1e-4)
    assert _same_bits(x.prod(1).numpy(), t.prod(1).numpy())
    assert _same_bits(x.prod(0).numpy(), t.prod(0).numpy())


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_sums_and_products_match_torch(dtype, threads):
    torch = _torch()
    rng = np.random.default_rng(9)
    for n in (1, 17, 64, 65, 1000, 1031):
        if dtype == "bool":
            a = rng.integers(0, 2, (4, n)).astype(bool)
        else:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, (4, n), dtype=dtype, endpoint=True)
        x, t = ptcore.from_numpy(a), torch.from_numpy(a)
        for f in (lambda v: v.sum(1), lambda v: v.sum(0), lambda v: v.sum(), lambda v: v.prod(1),
                  lambda v: v.prod(0), lambda v: v.sum(1, dtype=getattr(v, "int32", None) and None)):
            got, want = f(x), f(t)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert ptcore.count_nonzero(x).item() == torch.count_nonzero(t).item()


# --------------------------------------------------------------------------
# torch's narrower vector widths (child processes)
# --------------------------------------------------------------------------
_CHILD = r"""
import json, numpy as np, torch, ptcore
from ptcore._cpu_features import get_cpu_capability
rng = np.random.default_rng(0)
bad = []
for dt in ("float32", "float64"):
    for n in list(range(1, 71)) + [1000, 1031]:
        a = (rng.uniform(0.5, 1.6, (3, n)) * rng.choice([-1.0, 1.0], (3, n))).astype(dt)
        p, t = ptcore.from_numpy(a).prod(1).numpy(), torch.from_numpy(a).prod(1).numpy()
        if not np.array_equal(p.view(np.uint8), t.view(np.uint8)):
            bad.append([dt, n])
v = rng.integers(-1000, 1000, 10**5)
s = [int(ptcore.from_numpy(v.astype(d)).sum()) == int(v.astype(d).astype(np.int64).sum())
     for d in ("int8", "int16", "int32", "int64", "uint8")]
print(json.dumps({"cap": get_cpu_capability(), "torch_cap": torch.backends.cpu.get_cpu_capability(),
                  "bad": bad, "sums": s}))
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_narrower_torch_widths_in_a_child(cap):
    pytest.importorskip("torch")
    from ptcore._cpu_features import detect_cpu_capability
    if cap == "avx2" and detect_cpu_capability() == "DEFAULT":
        pytest.skip("this CPU has no AVX2/FMA")
    env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True, timeout=600,
                         capture_output=True, text=True).stdout
    res = json.loads(out.strip().splitlines()[-1])
    assert res["cap"] == cap.upper() and res["torch_cap"] == cap.upper()
    assert res["bad"] == []
    assert all(res["sums"])
