"""The vector loops of ``ptc_ew_vec.h`` for float64 (add, sub, mul, div,
maximum, minimum; neg, abs, square, reciprocal, relu, sign, and ``x ** 3``'s
cube) and float32's sign and cube: the same bits as the generic loops they
replace (NumPy's IEEE operations), torch's where torch is installed, on the
AVX-512 and AVX2 copies (a child process runs the lower one), with lengths
that leave every tail size.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import ptcore

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324, 1e-310, 1.7e308,
           -1.7e308, 0.5, 3.0, 1e200, -1e-200]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want).astype(got.dtype)
    ok = (_bits(got) == _bits(want)) | (np.isnan(got) & np.isnan(want))
    return ok.all()


def _data(dt, n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 4).astype(dt)
    with np.errstate(over="ignore"):
        sp = np.array(SPECIAL, np.float64).astype(dt)
    x[:min(n, sp.size)] = sp[:min(n, sp.size)]
    return x


_UNARY = {"neg": np.negative, "abs": np.abs, "square": lambda v: v * v,
          "reciprocal": lambda v: np.ones_like(v) / v,
          "relu": lambda v: np.where(v < 0, np.zeros_like(v), v),
          # (x > 0) - (x < 0): +0 for zeros of either sign and for NaN
          "sign": lambda v: ((v > 0).astype(v.dtype) - (v < 0).astype(v.dtype))}


@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 16, 17, 1000, 1031])
@pytest.mark.parametrize("op", list(_UNARY))
def test_unary_f64_bits(op, n):
    x = _data(np.float64, n, n)
    with np.errstate(all="ignore"):
        want = _UNARY[op](x)
    got = getattr(ptcore, op)(ptcore.from_numpy(x)).numpy()
    assert got.dtype == np.float64 and _same(got, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sign_and_cube(dt):
    x = _data(dt, 1037, 5)
    got = ptcore.sign(ptcore.from_numpy(x)).numpy()
    assert _same(got, _UNARY["sign"](x))
    with np.errstate(all="ignore"):
        want = x * x * x                     # rounded per product, as torch's pow(x, 3)
    for e in (3, 3.0):
        assert _same((ptcore.from_numpy(x) ** e).numpy(), want)
        assert _same(ptcore.pow(ptcore.from_numpy(x), e).numpy(), want)
    y = ptcore.from_numpy(x.copy())
    y.pow_(3)
    assert _same(y.numpy(), want)
    o = ptcore.empty(1037, dtype=y.dtype)
    ptcore.pow(ptcore.from_numpy(x), 3, out=o)
    assert _same(o.numpy(), want)
    # strided input: the general path, the same loop
    z = ptcore.from_numpy(np.repeat(x, 2))[::2]
    assert _same((z ** 3).numpy(), want)


def test_cube_keeps_pow_semantics():
    x = ptcore.tensor([1.5, -2.0, 0.25], requires_grad=True)
    y = x ** 3
    assert y.grad_fn is not None and "Pow" in type(y.grad_fn).__name__
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([1.5, -2.0, 0.25]) ** 2, rtol=1e-6)
    i = ptcore.arange(5)
    assert (i ** 3).dtype == ptcore.int64 and (i ** 3).tolist() == [0, 1, 8, 27, 64]
    assert (i ** 3.0).dtype == ptcore.float32
    h = ptcore.tensor([1.5, -2.0], dtype=ptcore.float16)
    assert (h ** 3).dtype == ptcore.float16 and (h ** 3).tolist() == [3.375, -8.0]


_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "maximum": np.maximum, "minimum": np.minimum}


@pytest.mark.parametrize("form", ["tt", "ts", "st", "row"])
@pytest.mark.parametrize("op", list(_BINARY))
def test_binary_f64_bits(op, form):
    a = _data(np.float64, 1031, 1)
    b = _data(np.float64, 1031, 2)[::-1].copy()
    if form == "tt":
        x, y = a, b
    elif form == "ts":
        x, y = a, np.float64(2.5)
    elif form == "st":
        x, y = np.float64(-1.5), b
    else:
        x, y = a[:1030].reshape(10, 103), b[:103]
    px = ptcore.from_numpy(np.array(x)) if np.ndim(x) else ptcore.tensor(float(x), dtype=ptcore.float64)
    py = ptcore.from_numpy(np.array(y)) if np.ndim(y) else ptcore.tensor(float(y), dtype=ptcore.float64)
    with np.errstate(all="ignore"):
        want = _BINARY[op](x, y)
    got = getattr(ptcore, op)(px, py).numpy()
    assert got.dtype == np.float64
    if op in ("maximum", "minimum"):
        # equal zeros of opposite sign: the second operand (see test_f32_vector_math)
        xb, yb = np.broadcast_arrays(x, y)
        tie = (xb == 0) & (yb == 0)
        assert _same(got[~tie], want[~tie]) and _same(got[tie], yb[tie])
    else:
        assert _same(got, want)


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = _data(np.float64, 1031, 9)
    tx, px = torch.from_numpy(x.copy()), ptcore.from_numpy(x.copy())
    for op in ("neg", "abs", "square", "reciprocal", "relu", "sign"):
        assert _same(getattr(ptcore, op)(px).numpy(), getattr(torch, op)(tx).numpy()), op
    assert _same((px ** 3).numpy(), (tx ** 3).numpy())
    assert _same((px.float() ** 3).numpy(), (tx.float() ** 3).numpy())
    assert _same((px + px.flip(0)).numpy(), (tx + tx.flip(0)).numpy())
    assert _same((px / 3.0).numpy(), (tx / 3.0).numpy())


_CHILD = """
import sys, numpy as np, ptcore
x = np.load(sys.argv[1])
px = ptcore.from_numpy(x)
out = {op: getattr(ptcore, op)(px).numpy() for op in ("neg", "abs", "square", "reciprocal",
                                                       "relu", "sign")}
out["cube"] = (px ** 3).numpy()
out["cube32"] = (px.float() ** 3).numpy()
out["sign32"] = px.float().sign().numpy()
for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
    out[op] = getattr(ptcore, op)(px, px.flip(0)).numpy()
np.savez(sys.argv[2], **out)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    from ptcore._cpu_features import detect_cpu_capability
    have = detect_cpu_capability()
    if cap == "avx2" and have == "DEFAULT":
        pytest.skip("this CPU has no AVX2/FMA")
    if cap == have.lower():
        pytest.skip("the capability this process runs")
    x = _data(np.float64, 1031, 13)
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
    subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "x.npy"), str(tmp_path / "y.npz")],
                   env=env, check=True, timeout=600)
    child = np.load(tmp_path / "y.npz")
    px = ptcore.from_numpy(x)
    here = {op: getattr(ptcore, op)(px).numpy() for op in ("neg", "abs", "square", "reciprocal",
                                                          "relu", "sign")}
    here["cube"] = (px ** 3).numpy()
    here["cube32"] = (px.float() ** 3).numpy()
    here["sign32"] = px.float().sign().numpy()
    for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
        here[op] = getattr(ptcore, op)(px, px.flip(0)).numpy()
    for k, v in here.items():
        assert _same(child[k], v), k
