"""complex64/complex128 add, sub and mul on the vector lanes (ptc_cplx_vec.h):
the bits of the scalar formulas (x + y (ar + ai i) for add/sub, (ac - bd,
ad + bc) for mul, each product rounded, no FMA) emulated in NumPy, for every
length around the vector widths, a number on either side, strided operands,
special values, in place and out=, and the other CPU paths in a child process."""
import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

CDT = ["complex64", "complex128"]


def _values(n, dtype, seed):
    rng = np.random.default_rng(seed)
    rdt = np.float32 if dtype == "complex64" else np.float64
    re = rng.standard_normal(n).astype(rdt)
    im = rng.standard_normal(n).astype(rdt)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38, -1.5], rdt)
    k = min(n, len(sp))
    re[:k] = sp[:k]
    im[:k] = sp[::-1][:k]
    out = np.empty(n, dtype)
    out.real, out.imag = re, im
    return out


def _emulate(op, x, y):
    a, b = x.real, x.imag
    c, d = y.real, y.imag
    with np.errstate(all="ignore"):
        if op == "mul":
            re, im = a * c - b * d, a * d + b * c
        else:
            ar = a.dtype.type(1 if op == "add" else -1)
            z = a.dtype.type(0)
            re, im = a + (c * ar - d * z), b + (c * z + d * ar)
    out = np.empty(np.broadcast(x, y).shape, x.dtype)
    out.real, out.imag = re, im
    return out


def _same_bits(a, b):
    rdt = np.float32 if a.dtype == np.complex64 else np.float64
    av, bv = a.view(rdt), b.view(rdt)
    return bool(np.all((av == bv) & (np.signbit(av) == np.signbit(bv)) | (np.isnan(av) & np.isnan(bv))))


@pytest.mark.parametrize("dtype", CDT)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_every_length_and_broadcast(op, dtype):
    fn = getattr(ptcore, op)
    for n in list(range(1, 40)) + [1031]:
        x = _values(n, dtype, n)
        y = _values(n, dtype, n + 1000)[::-1].copy()
        got = fn(ptcore.from_numpy(x), ptcore.from_numpy(y)).numpy()
        assert _same_bits(got, _emulate(op, x, y)), (op, dtype, n)
        one = y[:1]
        got = fn(ptcore.from_numpy(x), ptcore.from_numpy(one)).numpy()
        assert _same_bits(got, _emulate(op, x, one)), (op, dtype, n, "number second")
        got = fn(ptcore.from_numpy(one), ptcore.from_numpy(x)).numpy()
        assert _same_bits(got, _emulate(op, one, x)), (op, dtype, n, "number first")
        xs = ptcore.from_numpy(np.repeat(x, 2))[::2]
        got = fn(xs, ptcore.from_numpy(y)).numpy()
        assert _same_bits(got, _emulate(op, x, y)), (op, dtype, n, "strided")


@pytest.mark.parametrize("dtype", CDT)
def test_python_numbers_and_in_place(dtype):
    x = _values(77, dtype, 5)
    t = ptcore.from_numpy(x.copy())
    assert _same_bits((t * 2.0).numpy(), _emulate("mul", x, np.array([2 + 0j], dtype)))
    assert _same_bits((t * (1 + 2j)).numpy(), _emulate("mul", x, np.array([1 + 2j], dtype)))
    assert _same_bits((t + 1).numpy(), _emulate("add", x, np.array([1 + 0j], dtype)))
    y = _values(77, dtype, 6)
    t.mul_(ptcore.from_numpy(y))
    assert _same_bits(t.numpy(), _emulate("mul", x, y))
    out = ptcore.empty(77, dtype=getattr(ptcore, dtype))
    ptcore.sub(ptcore.from_numpy(x), ptcore.from_numpy(y), out=out)
    assert _same_bits(out.numpy(), _emulate("sub", x, y))


def test_matches_torch_away_from_its_tails():
    torch = pytest.importorskip("torch")
    for dtype in CDT:
        x = _values(4096, dtype, 1)
        y = _values(4096, dtype, 2)
        for op in ("add", "sub", "mul"):
            a = getattr(ptcore, op)(ptcore.from_numpy(x), ptcore.from_numpy(y)).numpy()
            b = getattr(torch, op)(torch.from_numpy(x), torch.from_numpy(y)).numpy()
            # (4096 values: torch's loops have no scalar tail here)
            assert _same_bits(a[8:], b[8:]), (dtype, op)


_CHILD = """
import sys, numpy as np, ptcore
d = np.load(sys.argv[1])
res = {op + k: getattr(ptcore, op)(ptcore.from_numpy(d["x" + k]), ptcore.from_numpy(d["y" + k])).numpy()
       for op in ("add", "sub", "mul") for k in ("64", "128")}
np.savez(sys.argv[2], **res)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    d = {"x64": _values(1031, "complex64", 3), "y64": _values(1031, "complex64", 4),
         "x128": _values(1031, "complex128", 3), "y128": _values(1031, "complex128", 4)}
    np.savez(tmp_path / "in.npz", **d)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz")
    child = np.load(tmp_path / "o.npz")
    for op in ("add", "sub", "mul"):
        for k in ("64", "128"):
            here = getattr(ptcore, op)(ptcore.from_numpy(d["x" + k]), ptcore.from_numpy(d["y" + k]))
            assert _same_bits(child[op + k], here.numpy()), (cap, op, k)


def test_complex64_abs_is_hypot():
    """|z| in double lanes: glibc's hypotf, sqrt((double) re^2 + (double) im^2)
    rounded to float (the strided loop's cabsf), an infinite part +inf beside
    a NaN, every tail length, strided the same."""
    rng = np.random.default_rng(7)
    n = 100003
    bits = lambda: np.frombuffer(rng.integers(0, 2 ** 32, n, dtype=np.uint32).tobytes(), np.float32)
    sp = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38, -1], np.float32)
    a, b = (m.ravel() for m in np.meshgrid(sp, sp))
    z = np.empty(n + len(a), np.complex64)
    z.real = np.concatenate([bits(), a])
    z.imag = np.concatenate([bits(), b])
    got = ptcore.from_numpy(z).abs().numpy()
    with np.errstate(all="ignore"):
        re, im = z.real.astype(np.float64), z.imag.astype(np.float64)
        ref = np.sqrt(re * re + im * im).astype(np.float32)
        ref[np.isinf(re) | np.isinf(im)] = np.inf
    same = (got.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(got) & np.isnan(ref))
    assert same.all()
    assert got[-len(a):][np.isinf(a) | np.isinf(b)].tolist() == [np.inf] * int((np.isinf(a) | np.isinf(b)).sum())
    for m in range(1, 20):
        np.testing.assert_array_equal(ptcore.from_numpy(z[:m]).abs().numpy().view(np.uint32),
                                      got[:m].view(np.uint32))
    strided = ptcore.from_numpy(np.repeat(z[:999], 2))[::2].abs().numpy()
    np.testing.assert_array_equal(strided.view(np.uint32), got[:999].view(np.uint32))
