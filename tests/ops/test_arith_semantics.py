"""Bit-level arithmetic semantics checked against PyTorch: complex add/sub/mul
with infinities, NaNs and signed zeros, ``scalar / tensor`` rounding,
low-precision results written to wider ``out=`` tensors, Python scalars with
infinite parts, and PyTorch's range checks of fill values and ``alpha``."""
import math

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

INF, NAN = math.inf, math.nan
PARTS = [0.0, -0.0, 1.5, -2.0, INF, -INF, NAN]
SPECIAL = [complex(a, b) for a in PARTS for b in PARTS]


def _bits(t):
    """(real, imag) float64 pairs of a complex tensor, or floats, NaN-aware."""
    if t.dtype in (ptcore.complex32, torch.complex32 if torch else None):
        t = t.to(ptcore.complex64 if isinstance(t, ptcore.Tensor) else torch.complex64)
    vals = t.reshape(-1).tolist()
    out = []
    for v in vals:
        for p in ((v.real, v.imag) if isinstance(v, complex) else (v,)):
            out.append("nan" if p != p else (p, math.copysign(1.0, p)))
    return out


def _same(p, t):
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert _bits(p) == _bits(t)


def _pair(dtype_name, values):
    return (ptcore.tensor(values, dtype=getattr(ptcore, dtype_name)),
            torch.tensor(values, dtype=getattr(torch, dtype_name)))


@needs_torch
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "add_alpha", "sub_alpha_complex"])
def test_complex_special_values_tensor_tensor(dt, op):
    # every ordered pair of special values: torch computes a + b * alpha with a
    # complex alpha (1+0j; -1+0j for sub) and plain (non Annex G) products
    a_vals = [x for x in SPECIAL for _ in SPECIAL]
    b_vals = [y for _ in SPECIAL for y in SPECIAL]
    pa, ta = _pair(dt, a_vals)
    pb, tb = _pair(dt, b_vals)
    f = {"add": lambda L, a, b: L.add(a, b), "sub": lambda L, a, b: L.sub(a, b),
         "mul": lambda L, a, b: L.mul(a, b),
         "add_alpha": lambda L, a, b: L.add(a, b, alpha=2),
         "sub_alpha_complex": lambda L, a, b: L.sub(a, b, alpha=0.5 - 2j)}[op]
    _same(f(ptcore, pa, pb), f(torch, ta, tb))


@needs_torch
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("s", [1, -0.0, 2.5, complex(0, INF), complex(INF, 0), complex(NAN, 1), 1j])
def test_complex_special_values_with_python_scalars(dt, s):
    pa, ta = _pair(dt, SPECIAL)
    for f in (lambda a: a + s, lambda a: s + a, lambda a: a - s, lambda a: s - a,
              lambda a: a * s, lambda a: s * a):
        _same(f(pa), f(ta))


@needs_torch
def test_python_complex_scalar_with_infinite_part_is_not_mangled():
    # complex(0, inf) must stay 0+inf*j (a C complex built as re + im*I would
    # give nan+inf*j)
    for dt in ("complex32", "complex64", "complex128"):
        p = ptcore.full((2,), complex(0, INF), dtype=getattr(ptcore, dt))
        t = torch.full((2,), complex(0, INF), dtype=getattr(torch, dt))
        _same(p, t)
        p[0] = complex(-INF, 0)
        t[0] = complex(-INF, 0)
        _same(p, t)


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64"])
def test_scalar_divided_by_tensor_rounds_like_torch(dt):
    # torch's ``s / t`` is ``t.reciprocal() * s`` (one rounding more than s/t)
    v = (np.arange(1, 2000) * 0.37).astype(np.float64)
    if dt == "int64":
        v = np.arange(1, 2000)
    p = ptcore.tensor(v.tolist(), dtype=getattr(ptcore, dt))
    t = torch.tensor(v.tolist(), dtype=getattr(torch, dt))
    for s in (3, 0.1, -7.5, 1 + 1j):
        _same(s / p, s / t)


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "complex32"])
def test_low_precision_result_rounded_before_wider_out(dt):
    # the result is computed in the inputs' dtype, then cast to out's dtype
    rng = np.random.default_rng(3)
    a = rng.standard_normal(64).tolist()
    b = rng.standard_normal(64).tolist()
    if dt == "complex32":
        a = [complex(x, y) for x, y in zip(a, b)]
        wide = "complex64"
    else:
        wide = "float32"
    pa, ta = _pair(dt, a)
    pb, tb = _pair(dt, b)
    po = ptcore.empty(64, dtype=getattr(ptcore, wide))
    to = torch.empty(64, dtype=getattr(torch, wide))
    _same(ptcore.mul(pa, pb, out=po), torch.mul(ta, tb, out=to))
    _same(ptcore.add(pa, pb, out=po), torch.add(ta, tb, out=to))
    if dt == "complex32":
        po, to = ptcore.empty(64), torch.empty(64)
        _same(ptcore.abs(pa, out=po), torch.abs(ta, out=to))


def _raises_like(pf, tf):
    try:
        tf()
    except Exception as e:          # noqa: BLE001 - any torch error
        with pytest.raises(type(e)) as info:
            pf()
        assert str(info.value) == str(e)
        return
    pf()


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "complex32", "bfloat16", "float32", "int8", "int32"])
@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("v", [70000, 1e5, 1e39, 300])
def test_fill_range_checks_like_torch(dt, n, v):
    # including PyTorch's one-element fill path, whose check differs for
    # float16 (none) and complex32 (the half range)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        p = ptcore.zeros(n, dtype=getattr(ptcore, dt))
        t = torch.zeros(n, dtype=getattr(torch, dt))
        _raises_like(lambda: p.fill_(v), lambda: t.fill_(v))
        _same(p, t)


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "float32", "int16"])
def test_alpha_range_checked_like_torch(dt):
    p = ptcore.ones(3, dtype=getattr(ptcore, dt))
    t = torch.ones(3, dtype=getattr(torch, dt))
    for alpha in (1e5, 1e39, 70000, 3):
        if dt == "int16" and isinstance(alpha, float):
            continue
        _raises_like(lambda: ptcore.add(p, p, alpha=alpha), lambda: torch.add(t, t, alpha=alpha))


@needs_torch
def test_python_number_conversion_of_complex_tensors():
    for v in (2 + 0j, -3.5 + 0j, 1 + 1j):
        p, t = ptcore.tensor(v), torch.tensor(v)
        for conv in (float, int, complex):
            _raises_like(lambda: conv(p), lambda: conv(t))
            try:
                assert conv(p) == conv(t)
            except RuntimeError:
                pass


@pytest.mark.parametrize("stmt, warns", [
    ("x.to(ptcore.float32)", True), ("x.float()", True), ("x.to(ptcore.int64)", True),
    ("ptcore.zeros(1).copy_(x)", True), ("x.bool()", False), ("x.real", False),
    ("x.abs()", False), ("x.to(ptcore.complex128)", False)])
def test_complex_to_real_cast_warns_once(tmp_path, stmt, warns):
    # PyTorch's TORCH_WARN_ONCE: the first complex -> real (non-bool) copy in
    # a process warns, later ones do not
    import subprocess
    import sys
    code = ("import warnings, ptcore\n"
            "x = ptcore.tensor([1 + 2j])\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            f"    {stmt}\n"
            f"    {stmt}\n"
            "print(sum('discards the imaginary part' in str(i.message) for i in w))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       check=True)
    assert r.stdout.strip() == ("1" if warns else "0")


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_fused_multiply_add_ops_bit_exact(dt, layout):
    # torch's add/sub with alpha, lerp and addcmul are fused multiply-adds
    rng = np.random.default_rng(11)
    vals = [rng.standard_normal(2048).tolist() for _ in range(3)]
    ps = [ptcore.tensor(v, dtype=getattr(ptcore, dt)) for v in vals]
    ts = [torch.tensor(v, dtype=getattr(torch, dt)) for v in vals]
    if layout == "strided":
        if dt in ("float16", "bfloat16"):
            pytest.skip("torch's strided 16-bit loop rounds alpha * other separately (its scalar path)")
        ps = [p[::2] for p in ps]
        ts = [t[::2] for t in ts]
    (pa, pb, pc), (ta, tb, tc) = ps, ts
    w = ptcore.tensor(np.linspace(-0.2, 1.2, pa.numel()).tolist(), dtype=pa.dtype)
    tw = torch.tensor(np.linspace(-0.2, 1.2, ta.numel()).tolist(), dtype=ta.dtype)
    for fp, ft in ((lambda: ptcore.add(pa, pb, alpha=0.3), lambda: torch.add(ta, tb, alpha=0.3)),
                   (lambda: ptcore.sub(pa, pb, alpha=-0.01), lambda: torch.sub(ta, tb, alpha=-0.01)),
                   (lambda: pa.clone().add_(pb, alpha=2.5), lambda: ta.clone().add_(tb, alpha=2.5)),
                   (lambda: ptcore.lerp(pa, pb, 0.3), lambda: torch.lerp(ta, tb, 0.3)),
                   (lambda: ptcore.lerp(pa, pb, 0.7), lambda: torch.lerp(ta, tb, 0.7)),
                   (lambda: ptcore.lerp(pa, pb, w), lambda: torch.lerp(ta, tb, tw)),
                   (lambda: ptcore.addcmul(pa, pb, pc, value=0.1), lambda: torch.addcmul(ta, tb, tc, value=0.1)),
                   (lambda: ptcore.addcdiv(pa, pb, pc + 3, value=-0.3), lambda: torch.addcdiv(ta, tb, tc + 3, value=-0.3))):
        _same(fp(), ft())


@needs_torch
@pytest.mark.parametrize("call", [
    lambda L, x: L.addcmul(x, 0, x), lambda L, x: L.addcmul(x, x, 0), lambda L, x: L.addcmul(2, x, x),
    lambda L, x: L.addcdiv(x, 1.0, x), lambda L, x: x.addcmul_(x, 0), lambda L, x: x.addcdiv_(1, x)])
def test_addcmul_addcdiv_take_tensors_only(call):
    _raises_like(lambda: call(ptcore, ptcore.ones(3)), lambda: call(torch, torch.ones(3)))


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "bool", "complex64", "uint8"])
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("other", ["same", "self", "int", "float", "overlap", "broadcast"])
def test_inplace_fast_path_matches_torch(dt, op, other):
    # the Cython fast path for plain in-place ops must agree with the general
    # path: results, dtype errors, aliasing, version counters
    rng = np.random.default_rng(5)
    base = (rng.standard_normal(24) * 5).round(1).tolist()
    if dt in ("int32", "int64", "uint8"):
        base = [int(abs(v)) + 1 for v in base]
    if dt == "bool":
        base = [v > 0 for v in base]
    libs = []
    for L in (ptcore, torch):
        x = L.tensor(base, dtype=getattr(L, dt)).reshape(4, 6)
        y = L.tensor(base[::-1], dtype=getattr(L, dt)).reshape(4, 6)
        arg = {"same": y, "self": x, "int": 3, "float": 0.5, "overlap": None,
               "broadcast": y[0]}[other]
        if other == "overlap":
            flat = x.reshape(-1)
            x, arg = flat[:12], flat[6:18]
        libs.append((L, x, arg))
    (P, px, pa), (T, tx, ta) = libs
    v0 = px._version

    def run(x, a):
        return getattr(x, op)(a)
    try:
        rt = run(tx, ta)
    except Exception as e:              # noqa: BLE001 - compare the class
        with pytest.raises(type(e)):
            run(px, pa)
        return
    rp = run(px, pa)
    assert rp is px
    assert px._version > v0
    _same(px, tx)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda L, x, b: L.add(x, x, alpha=0.5j), lambda L, x, b: b.clamp(min=True),
    lambda L, x, b: b.clamp(max=True), lambda L, x, b: b.clamp(True, True),
    lambda L, x, b: L.lerp(x, x, 0.5), lambda L, x, b: L.lerp(x, x, x),
    lambda L, x, b: (1 + 2j) // x, lambda L, x, b: (1 + 2j) % x, lambda L, x, b: x // (1 + 2j),
    lambda L, x, b: L.bitwise_left_shift(b, b), lambda L, x, b: L.bitwise_right_shift(x, 0.5),
    lambda L, x, b: x.float() << 1])
def test_error_messages_name_torch_kernels(call):
    def run(L):
        return call(L, L.ones(3, dtype=L.int32), L.ones(3, dtype=L.bool))
    _raises_like(lambda: run(ptcore), lambda: run(torch))
