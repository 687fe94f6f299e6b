"""Vector paths of nansum/nanmean (ptcr_nansum: sum's order with NaN as 0),
div(rounding_mode='trunc') (ptc_tdiv) and nan_to_num (ptc_nan_to_num):
values against NumPy for every length around the vector widths, special
values, rows and whole tensors, and the other CPU paths in a child process."""
import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable


def _nan_laden(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    a[rng.random(shape) < 0.25] = np.nan
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nansum_is_the_sum_with_nan_as_zero(dtype):
    for n in list(range(1, 70)) + [1000, 1031, 70001]:
        a = _nan_laden(n, dtype, n)
        zeroed = np.where(np.isnan(a), 0, a).astype(dtype)
        got = ptcore.from_numpy(a).nansum().item()
        assert got == ptcore.from_numpy(zeroed).sum().item(), n
        np.testing.assert_allclose(got, np.nansum(a.astype(np.float64)), rtol=1e-5, atol=1e-4)
    b = _nan_laden((7, 1031), dtype, 1)
    np.testing.assert_array_equal(ptcore.from_numpy(b).nansum(1).numpy(),
                                  ptcore.from_numpy(np.where(np.isnan(b), 0, b)).sum(1).numpy())
    allnan = np.full((3, 40), np.nan, dtype)
    assert ptcore.from_numpy(allnan).nansum(1).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nanmean_against_numpy(dtype):
    for shape in [(1,), (5,), (3, 17), (4, 1000), (2, 1031)]:
        a = _nan_laden(shape, dtype, sum(shape))
        a.reshape(-1)[0] = 2.0
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(ptcore.from_numpy(a).nanmean().item(), np.nanmean(a), rtol=1e-5)
            np.testing.assert_allclose(ptcore.from_numpy(a).nanmean(-1).numpy(),
                                       np.nanmean(a, -1), rtol=1e-5, equal_nan=True)
    a = np.full((2, 9), np.nan, dtype)
    assert np.isnan(ptcore.from_numpy(a).nanmean(1).numpy()).all()


def _specials(dtype):
    sp = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38, -1, 0.5, -2.5, 7], np.float64)
    a, b = (m.ravel() for m in np.meshgrid(sp, sp))
    rng = np.random.default_rng(3)
    return (np.concatenate([rng.standard_normal(1031) * 10, a]).astype(dtype),
            np.concatenate([rng.standard_normal(1031), b]).astype(dtype))


def _same(p, r):
    return bool(np.all(((p == r) & (np.signbit(p) == np.signbit(r))) | (np.isnan(p) & np.isnan(r))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_division_against_numpy(dtype):
    a, b = _specials(dtype)
    with np.errstate(all="ignore"):
        for x, y in ((a, b), (a, b[:1]), (a[:1], b)):
            got = ptcore.div(ptcore.from_numpy(x), ptcore.from_numpy(y), rounding_mode="trunc").numpy()
            assert _same(got, np.trunc(x / y))
        for n in range(1, 40):
            got = ptcore.div(ptcore.from_numpy(a[:n]), 0.3, rounding_mode="trunc").numpy()
            assert _same(got, np.trunc(a[:n] / a.dtype.type(0.3)))
        strided = ptcore.from_numpy(np.repeat(a, 2))[::2]
        assert _same(ptcore.div(strided, ptcore.from_numpy(b), rounding_mode="trunc").numpy(),
                     np.trunc(a / b))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nan_to_num_against_numpy(dtype):
    sp = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38, -1], np.float64)
    for n in (1, 7, 8, 9, 31, 1031):
        with np.errstate(over="ignore"):
            a = np.resize(sp, n).astype(dtype)
        with np.errstate(all="ignore"):
            fin = np.finfo(dtype)
            got = ptcore.from_numpy(a).nan_to_num().numpy()
            assert _same(got, np.nan_to_num(a, nan=0.0, posinf=fin.max, neginf=fin.min))
            got = ptcore.from_numpy(a).nan_to_num(1.5, 2.0, -7.0).numpy()
            assert _same(got, np.nan_to_num(a, nan=1.5, posinf=2.0, neginf=-7.0))
    with np.errstate(over="ignore"):
        t = ptcore.from_numpy(np.resize(sp, 40).astype(dtype))
    t.nan_to_num_(0.0, 1.0, -1.0)
    assert np.isfinite(t.numpy()).all()


_CHILD = """
import sys, numpy as np, ptcore
d = np.load(sys.argv[1])
a, b = ptcore.from_numpy(d["a"]), ptcore.from_numpy(d["b"])
np.savez(sys.argv[2], nansum=np.array(a.nansum().item()), nanmean=a.nanmean(-1).numpy(),
         tdiv=ptcore.div(a, b, rounding_mode="trunc").numpy(), n2n=a.nan_to_num(1.0, 2.0, 3.0).numpy())
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    a, b = _specials("float32")
    np.savez(tmp_path / "in.npz", a=a, b=b)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz")
    child = np.load(tmp_path / "o.npz")
    x, y = ptcore.from_numpy(a), ptcore.from_numpy(b)
    assert _same(child["tdiv"], ptcore.div(x, y, rounding_mode="trunc").numpy())
    assert _same(child["n2n"], x.nan_to_num(1.0, 2.0, 3.0).numpy())
    # (the reductions' copy is chosen at import from the CPU: values within rounding)
    np.testing.assert_allclose(child["nansum"], x.nansum().item(), rtol=1e-5)
