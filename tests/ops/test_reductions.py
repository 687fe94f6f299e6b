"""Tests for ptcore's reductions, scans, softmax and order statistics
(``ptcore._ops.reduction`` over the kernels of ``ptcore._ops.kernels._reduce``).

PyTorch is the oracle: every op is called with the same arguments on tensors
built from the same NumPy data, and the results must agree in dtype, shape
and values (exactly for integers, bools and indices; to a dtype-dependent
tolerance for floating point), or both libraries must raise the same
exception class.  Inputs cover every dtype, 0-d and empty tensors, negative
dims, dim tuples, keepdim, transposed / sliced / expanded layouts, NaNs and
infinities, large (pairwise-summed) inputs, ``dtype=`` and ``out=``; the
float kernels run at each vector instruction level (``_simd_level``).
"""
import math
import warnings
import zlib

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _reduce as _K

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
       "float32", "float64", "complex64", "complex128"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]

# the SIMD levels this CPU can run (2: AVX-512, 1: AVX2, 0: baseline)
_ISA = {}
for _lvl in (2, 1, 0):
    _ISA.setdefault(_K._simd_level(_lvl), _lvl)
_K._simd_level(2)
LEVELS = sorted(set(_ISA.values()), reverse=True)


@pytest.fixture(params=LEVELS, ids=lambda lv: f"simd{lv}")
def simd(request):
    """Run the test with the vector kernels of one instruction-set level."""
    isa = _K._simd_level(request.param)
    yield isa
    _K._simd_level(2)


# --------------------------------------------------------------------------
# data and comparison helpers
# --------------------------------------------------------------------------
def _rng(*parts):
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def make(dt, shape, rng, nan=False, small=True):
    """NumPy data of dtype ``dt`` (bfloat16 as bf16-exact float32 values)."""
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in INTS:
        lo, hi = (0, 4) if dt == "uint8" else (-3, 3)
        if not small:
            info = np.iinfo(dt)
            lo, hi = int(info.min), int(info.max)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dt)
    if dt.startswith("complex"):
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    else:
        npdt = "float32" if dt == "bfloat16" else dt
        a = rng.standard_normal(shape).astype(npdt)
        if dt in ("float16", "bfloat16"):
            a = np.round(a * 16) / 16        # exact in both 16-bit types
            a = a.astype(npdt)
    if nan and a.size:
        flat = a.reshape(-1)
        flat[rng.random(flat.size) < 0.2] = np.nan
        a = flat.reshape(shape)
    return a


def P(a, dt):
    t = ptcore.from_numpy(np.ascontiguousarray(a))
    return t.to(ptcore.bfloat16) if dt == "bfloat16" else t


def T(a, dt):
    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(torch.bfloat16) if dt == "bfloat16" else t


def _layouts(dt, shape3, rng, nan=False):
    """(name, ptcore tensor, torch tensor) of the same values in several
    memory layouts: contiguous, transposed, sliced, expanded, 0-d, empty."""
    a, b, c = shape3
    out = []
    x = make(dt, (a, b, c), rng, nan)
    out.append(("contig", P(x, dt), T(x, dt)))
    y = make(dt, (c, b, a), rng, nan)
    out.append(("transposed", P(y, dt).permute(2, 1, 0), T(y, dt).permute(2, 1, 0)))
    z = make(dt, (2 * a, b + 3, 3 * c), rng, nan)
    out.append(("sliced", P(z, dt)[::2, 1:b + 1, ::3], T(z, dt)[::2, 1:b + 1, ::3]))
    e = make(dt, (a, 1, c), rng, nan)
    out.append(("expanded", P(e, dt).expand(a, b, c), T(e, dt).expand(a, b, c)))
    s = make(dt, (), rng, nan)
    out.append(("0d", P(s, dt), T(s, dt)))
    for shp in ((0, 3), (2, 0, 3)):
        m = make(dt, shp, rng)
        out.append((f"empty{shp}", P(m, dt), T(m, dt)))
    return out


_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-11,
         "complex64": 2e-5, "complex128": 1e-11}


def _dtname(dt):
    return str(dt).split(".")[-1]


def _np(t):
    if _dtname(t.dtype) == "bfloat16":
        t = t.float()
    return t.detach().numpy()


def assert_same(p, t, rtol=None, atol=None, path="result"):
    """ptcore result ``p`` equals torch result ``t`` (recursively for tuples):
    same dtype, shape and values (NaN where NaN)."""
    if isinstance(t, tuple):
        assert isinstance(p, tuple), f"{path}: expected a tuple, got {type(p).__name__}"
        assert len(p) == len(t), f"{path}: tuple lengths {len(p)} != {len(t)}"
        if hasattr(t, "_fields"):
            assert getattr(p, "_fields", None) == t._fields, f"{path}: fields {p} vs {t._fields}"
        for i, (pi, ti) in enumerate(zip(p, t)):
            assert_same(pi, ti, rtol, atol, f"{path}[{i}]")
        return
    assert isinstance(p, ptcore.Tensor), f"{path}: expected a Tensor, got {type(p).__name__}"
    assert _dtname(p.dtype) == _dtname(t.dtype), f"{path}: dtype {p.dtype} != {t.dtype}"
    assert tuple(p.shape) == tuple(t.shape), f"{path}: shape {tuple(p.shape)} != {tuple(t.shape)}"
    pn, tn = _np(p), _np(t)
    name = _dtname(t.dtype)
    if name in _RTOL:
        r = _RTOL[name] if rtol is None else rtol
        fin = np.abs(tn[np.isfinite(tn)]) if tn.size else np.zeros(0)
        a = r * (float(fin.max()) if fin.size else 1.0) if atol is None else atol
        np.testing.assert_allclose(pn, tn, rtol=r, atol=a, equal_nan=True, err_msg=path)
    else:
        np.testing.assert_array_equal(pn, tn, err_msg=path)


def compare(fp, ft, *, rtol=None, atol=None, ctx=""):
    """Call ``fp()`` (ptcore) and ``ft()`` (torch): both raise the same
    exception class, or both return equal results."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = ft()
        except Exception as e:          # noqa: BLE001 - the oracle's error class
            terr = e
        else:
            terr = None
        try:
            p = fp()
        except Exception as e:          # noqa: BLE001
            if terr is None:
                raise AssertionError(f"{ctx}: ptcore raised {type(e).__name__}: {e}; torch "
                                     f"returned") from e
            assert isinstance(e, type(terr)) or type(terr).__name__ == type(e).__name__, (
                f"{ctx}: ptcore raised {type(e).__name__}({e}), torch "
                f"{type(terr).__name__}({terr})")
            return
    if terr is not None:
        raise AssertionError(f"{ctx}: torch raised {type(terr).__name__}({terr}); ptcore "
                             f"returned {p!r}")
    assert_same(p, t, rtol, atol, ctx)


def _conv(v, lib):
    """Map ptcore-neutral argument values to the library: dtype names
    given as ``("dtype", name)`` and ptcore tensors."""
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "dtype":
        return getattr(lib, v[1])
    if isinstance(v, np.ndarray):
        return lib.from_numpy(v.copy())
    return v


def _call(lib, fname, x, args, kwargs):
    fn = lib
    for part in fname.split("."):
        fn = getattr(fn, part)
    return fn(x, *[_conv(a, lib) for a in args], **{k: _conv(v, lib) for k, v in kwargs.items()})


def _short(e, n=500):
    """One line of an assertion message (the pytest diff dropped)."""
    lines = [ln for ln in str(e).splitlines() if ln.strip() and not ln.lstrip().startswith(
        ("+", "-", "?", "where", "assert"))]
    return " ".join(" ".join(lines).split())[:n]


def _skip(fname, dt, lname, args, kwargs):
    """Cases where torch's answer is not a specification: the median of an
    empty integer tensor reads uninitialised memory."""
    return (fname in ("median", "nanmedian") and lname.startswith("empty") and not args
            and dt not in FLOATS)


# torch's median/nanmedian read wrong elements of expanded (stride-0) inputs
# (torch 2.13: e.g. tensor(15.).reshape(3,1,5).expand(3,4,5).median(1)); the
# oracle gets a contiguous copy there
_TORCH_CONTIG = {"median", "nanmedian"}


def run_variants(fname, variants, dt, seed_shape=(3, 4, 5), nan=False, rtol=None, atol=None):
    """Every (args, kwargs) variant of ``fname`` on every layout; collect all
    mismatches and fail with the list."""
    rng = _rng(fname, dt, nan)
    errors = []
    for lname, xp, xt in _layouts(dt, seed_shape, rng, nan):
        if fname in _TORCH_CONTIG:
            xt = xt.contiguous()
        for args, kwargs in variants:
            if _skip(fname, dt, lname, args, kwargs):
                continue
            ctx = f"{fname}[{dt}, {lname}, args={args}, kwargs={kwargs}]"
            # the index torch reports for an all-NaN row of nanmedian is an
            # artefact of its nth_element (e.g. 2 for length 4, 5 for 7)
            pick = (lambda r: r[0]) if fname == "nanmedian" and nan and lname == "expanded" \
                else (lambda r: r)
            try:
                compare(lambda: pick(_call(ptcore, fname, xp, args, kwargs)),
                        lambda: pick(_call(torch, fname, xt, args, kwargs)), rtol=rtol, atol=atol,
                        ctx=ctx)
            except AssertionError as e:
                errors.append(_short(e))
    assert not errors, f"{len(errors)} mismatches:\n" + "\n".join(errors)


# --------------------------------------------------------------------------
# the ops and their argument variants
# --------------------------------------------------------------------------
def V(*args, **kwargs):
    return (args, kwargs)


F64 = ("dtype", "float64")
I64 = ("dtype", "int64")
F32 = ("dtype", "float32")
C128 = ("dtype", "complex128")

_SUM = [V(), V(1), V(-1, keepdim=True), V((0, 2)), V([-1, 0], True), V(dim=[]), V(dtype=F64),
        V(1, dtype=I64), V(2, dtype=C128), V(0, dtype=F32), V(3), V((0, 0))]
_MEAN = [V(), V(1), V(-1, keepdim=True), V((0, 2)), V(dim=[]), V(dtype=F64), V(1, dtype=F32),
         V(1, dtype=I64), V(dim=(1, -1), keepdim=True)]
_VAR = [V(), V(1), V(-1, keepdim=True), V((0, 2)), V(1, unbiased=False), V(1, correction=0),
        V((0, 1), correction=2, keepdim=True), V(True), V(False), V(dim=None, correction=0),
        V(dim=[])]

OPS = {
    "sum": _SUM,
    "nansum": _SUM,
    "mean": _MEAN,
    "nanmean": _MEAN,
    "prod": [V(), V(1), V(-1, keepdim=True), V(0, dtype=F64), V(dtype=I64), V(2, dtype=F32),
             V(-3)],
    "max": [V(), V(1), V(-1, True), V(0, keepdim=True), V(5)],
    "min": [V(), V(1), V(-1, True), V(0, keepdim=True), V(5)],
    "amax": [V(), V(1), V((0, 2)), V(-1, True), V(dim=[])],
    "amin": [V(), V(1), V((0, 2)), V(-1, True), V(dim=[])],
    "aminmax": [V(), V(dim=1), V(dim=-1, keepdim=True), V(keepdim=True)],
    "argmax": [V(), V(1), V(-1, True), V(0, keepdim=True), V(keepdim=True)],
    "argmin": [V(), V(1), V(-1, True), V(0, keepdim=True), V(keepdim=True)],
    "var": _VAR,
    "std": _VAR,
    "var_mean": _VAR,
    "std_mean": _VAR,
    "norm": [V(), V(1), V(float("inf")), V(float("-inf")), V(0), V(3), V(0.5), V("fro", 1),
             V(2, (0, 1), True), V(1, -1), V(dtype=F64), V(p="nuc", dim=(0, 1))],
    "linalg.vector_norm": [V(), V(0), V(1), V(2), V(float("inf")), V(float("-inf")), V(0.5),
                           V(3.5), V(-1.5), V(2, 1), V(1, (0, 2), True), V(float("inf"), -1),
                           V(dtype=F64), V(2, dim=[])],
    # (dim=() is left out: torch 2.13 raises a shape error there, a torch bug)
    "logsumexp": [V(1), V(-1, True), V((0, 2)), V(0)],
    "all": [V(), V(1), V(-1, True), V((0, 2)), V(())],     # () reduces nothing here
    "any": [V(), V(1), V(-1, True), V((0, 2)), V([], True)],
    "count_nonzero": [V(), V(1), V((0, 2)), V(-1)],
    "cumsum": [V(0), V(1), V(-1), V(2, dtype=F64), V(1, dtype=I64)],
    "cumprod": [V(0), V(-1), V(1, dtype=F64)],
    "cummax": [V(0), V(1), V(-1)],
    "cummin": [V(0), V(1), V(-1)],
    "logcumsumexp": [V(0), V(-1)],
    "softmax": [V(0), V(1), V(-1), V(-1, dtype=F64), V(1, dtype=F32)],
    "log_softmax": [V(0), V(1), V(-1), V(-1, dtype=F64), V(1, dtype=F32)],
    "median": [V(), V(1), V(-1, True), V(0)],
    "nanmedian": [V(), V(1), V(-1, True), V(0)],
    "mode": [V(), V(1), V(-1, True), V(0)],
    "quantile": [V(0.3), V(0.5, 1), V(0.25, -1, True), V(np.array([0.1, 0.5, 0.9]), 1),
                 V(0.4, interpolation="lower"), V(0.4, 0, interpolation="higher"),
                 V(0.4, 1, interpolation="midpoint"), V(0.4, 2, interpolation="nearest"),
                 V(0.5, interpolation="nearest"), V(1.5), V(np.array(0.7), 0)],
    "nanquantile": [V(0.3), V(0.5, 1), V(0.25, -1, True), V(np.array([0.1, 0.5, 0.9]), 1),
                    V(0.4, interpolation="lower"), V(0.4, 0, interpolation="higher"),
                    V(0.4, 1, interpolation="midpoint"), V(0.4, 2, interpolation="nearest")],
}


def _adapt_q(variants, dt):
    """quantile's tensor q must have the input's dtype."""
    npdt = {"float64": "float64"}.get(dt, "float32")
    out = []
    for args, kw in variants:
        args = tuple(a.astype(npdt) if isinstance(a, np.ndarray) else a for a in args)
        out.append((args, kw))
    return out


@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("fname", list(OPS))
def test_matches_torch(fname, dt):
    variants = OPS[fname]
    if fname in ("quantile", "nanquantile"):
        variants = _adapt_q(variants, dt)
    run_variants(fname, variants, dt)


NAN_OPS = ["sum", "nansum", "mean", "nanmean", "prod", "max", "min", "amax", "amin", "aminmax",
           "argmax", "argmin", "var", "std", "var_mean", "linalg.vector_norm", "logsumexp",
           "all", "any", "count_nonzero", "cumsum", "cumprod", "cummax", "cummin",
           "logcumsumexp", "softmax", "log_softmax", "median", "nanmedian", "quantile",
           "nanquantile"]
# (mode is left out: torch's CPU mode sorts with operator< , which is no strict
# weak order with NaNs, so its answer depends on std::sort's internals)


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("fname", NAN_OPS)
def test_nan_propagation(fname, dt):
    # NaN cast to an integer dtype= is undefined behaviour: left out
    variants = [(a, k) for a, k in OPS[fname] if k.get("dtype") not in (I64,)]
    if fname in ("quantile", "nanquantile"):
        variants = _adapt_q(variants, dt)
    run_variants(fname, variants, dt, nan=True)


# --------------------------------------------------------------------------
# SIMD levels: the vector kernels (contiguous float sums, max/argmax, column
# max, softmax, norms, var) on lengths around the vector widths and blocks
# --------------------------------------------------------------------------
SIMD_CASES = [
    ("sum", V()), ("sum", V(1)), ("sum", V(0)), ("mean", V(1)), ("nansum", V(1)),
    ("amax", V(1)), ("amin", V(0)), ("max", V(1)), ("min", V(0)), ("argmax", V(1)),
    ("argmin", V()), ("amax", V()), ("var", V(1)), ("std", V(0)),
    ("linalg.vector_norm", V(2, 1)), ("linalg.vector_norm", V(1, 1)),
    ("linalg.vector_norm", V(2)), ("logsumexp", V(1)), ("logsumexp", V(0)),
    ("softmax", V(1)), ("softmax", V(0)), ("log_softmax", V(1)), ("log_softmax", V(0)),
]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 33, 1023, 1025, 4099])
def test_simd_levels(simd, dt, n):
    rng = _rng("simd", dt, n)
    errors = []
    for nan in (False, True):
        for rows in (1, 3):
            a = make(dt, (rows, n), rng, nan=nan)
            if nan and n > 4:        # NaN only late in the row as well
                a[:, :n - 2] = np.nan_to_num(a[:, :n - 2])
            xp, xt = P(a, dt), T(a, dt)
            for fname, (args, kw) in SIMD_CASES:
                ctx = f"{simd}: {fname}{args}{kw} n={n} rows={rows} nan={nan}"
                try:
                    compare(lambda: _call(ptcore, fname, xp, args, kw),
                            lambda: _call(torch, fname, xt, args, kw), ctx=ctx)
                except AssertionError as e:
                    errors.append(_short(e))
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("n", [7, 16, 64, 129])
def test_simd_softmax_underflow(simd, n):
    """Masked (-inf) and far-below-max entries give exactly 0 in softmax and
    the row sums of the rest are unchanged (a causal attention mask), around
    the border where exp's result goes subnormal."""
    rng = _rng("underflow", n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    a[np.triu_indices(n, 1)] = -np.inf
    a[0, -1] = 200.0            # row 0: the others about 200 below the max
    a[1, :] = np.linspace(-110.0, 0.0, n, dtype=np.float32)   # through -104 and -87
    for fname in ("softmax", "log_softmax"):
        p = getattr(ptcore, fname)(ptcore.from_numpy(a.copy()), -1).numpy()
        t = getattr(torch, fname)(torch.from_numpy(a.copy()), -1).numpy()
        np.testing.assert_allclose(p, t, rtol=2e-6, atol=0, err_msg=f"{simd} {fname}")
        if fname == "softmax":
            assert all((p[i, i + 1:] == 0).all() for i in range(2, n))
            assert (p[0, :-1] == 0).all()


@pytest.mark.parametrize("fname,args", [("argmax", ()), ("argmin", ()), ("max", (0,)),
                                        ("amax", ()), ("amin", ())])
def test_simd_ties_and_specials(simd, fname, args):
    """First index among ties; +-inf; NaN wins wherever it is; -0.0 vs 0.0."""
    errors = []
    for dt in ("float32", "float64"):
        for n in (5, 16, 40, 1000):
            for case in range(6):
                a = np.zeros(n, dtype=dt)
                if case == 0:
                    a[[1, n - 2]] = 3.0
                elif case == 1:
                    a[:] = -np.inf
                elif case == 2:
                    a[[2, n - 1]] = np.inf
                    a[0] = -np.inf
                elif case == 3:
                    a[n - 1] = np.nan
                elif case == 4:
                    a[n // 2] = np.nan
                    a[n - 1] = np.nan
                    a[0] = np.inf
                else:
                    a[:] = -0.0
                    a[n // 3] = 0.0
                ctx = f"{simd}: {fname} {dt} n={n} case={case}"
                try:
                    compare(lambda: getattr(ptcore, fname)(P(a, dt), *args),
                            lambda: getattr(torch, fname)(T(a, dt), *args), ctx=ctx)
                except AssertionError as e:
                    errors.append(_short(e))
    assert not errors, "\n".join(errors)


# --------------------------------------------------------------------------
# large inputs: pairwise summation, parallel-free accuracy
# --------------------------------------------------------------------------
def test_large_float32_sums(simd):
    rng = _rng("large")
    a = (rng.standard_normal(1_000_003) + 0.5).astype("float32")
    xp, xt = P(a, "float32"), T(a, "float32")
    exact = float(np.sum(a.astype(np.float64)))
    ps, ts = ptcore.sum(xp).item(), torch.sum(xt).item()
    assert ps == pytest.approx(ts, rel=1e-5)
    assert ps == pytest.approx(exact, rel=1e-5)
    assert ptcore.mean(xp).item() == pytest.approx(torch.mean(xt).item(), rel=1e-5)
    # a constant: naive float32 accumulation would be off by far more than 1e-5
    c = np.full(1_000_000, 0.1, dtype="float32")
    assert ptcore.sum(P(c, "float32")).item() == pytest.approx(
        torch.sum(T(c, "float32")).item(), rel=1e-5)
    assert ptcore.sum(P(c, "float32")).item() == pytest.approx(float(np.float32(0.1)) * 1e6, rel=1e-5)
    m = a[:1_000_000].reshape(1000, 1000)
    for dim in (0, 1):
        compare(lambda: ptcore.sum(P(m, "float32"), dim), lambda: torch.sum(T(m, "float32"), dim),
                rtol=1e-5, atol=1e-4, ctx=f"sum dim={dim}")
    compare(lambda: ptcore.var(P(a, "float32")), lambda: torch.var(T(a, "float32")), rtol=1e-5,
            ctx="var")
    compare(lambda: ptcore.linalg.vector_norm(P(a, "float32")),
            lambda: torch.linalg.vector_norm(T(a, "float32")), rtol=1e-5, ctx="norm")
    compare(lambda: ptcore.logsumexp(P(a, "float32"), 0),
            lambda: torch.logsumexp(T(a, "float32"), 0), rtol=1e-5, ctx="logsumexp")
    compare(lambda: ptcore.cumsum(P(a, "float32"), 0)[-5:],
            lambda: torch.cumsum(T(a, "float32"), 0)[-5:], rtol=1e-5, ctx="cumsum")
    h = (rng.standard_normal(200_000) * 4).round().astype("float16")
    compare(lambda: ptcore.sum(P(h, "float16")), lambda: torch.sum(T(h, "float16")),
            rtol=2e-3, ctx="float16 sum")


def test_large_argmax_and_ints(simd):
    rng = _rng("large-int")
    a = rng.standard_normal(1_000_000).astype("float32")
    a[777_777] = 50.0
    a[888_888] = 50.0
    assert ptcore.argmax(P(a, "float32")).item() == 777_777
    i = rng.integers(-1000, 1000, 1_000_000).astype("int32")
    assert ptcore.sum(P(i, "int32")).item() == int(i.astype(np.int64).sum())
    compare(lambda: ptcore.sum(P(i, "int32").view(1000, 1000), 0),
            lambda: torch.sum(T(i, "int32").view(1000, 1000), 0))
    b = rng.integers(0, 2, 1_000_000).astype("int8")
    compare(lambda: ptcore.count_nonzero(P(b, "int8")), lambda: torch.count_nonzero(T(b, "int8")))


# --------------------------------------------------------------------------
# dtypes, promotion, out=
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ALL)
def test_result_dtypes(dt):
    x = make(dt, (2, 3), _rng("dtypes", dt))
    xp, xt = P(x, dt), T(x, dt)
    for f in ("sum", "prod", "nansum", "cumsum", "cumprod"):
        kw = {} if f in ("sum", "prod", "nansum") else {"dim": 0}
        compare(lambda: getattr(ptcore, f)(xp, **kw), lambda: getattr(torch, f)(xt, **kw), ctx=f)
    for f, dd in (("sum", "int8"), ("sum", "float16"), ("prod", "int16"), ("mean", "float16"),
                  ("cumsum", "int32"), ("sum", "bool")):
        kw = {"dim": 0} if f == "cumsum" else {}
        compare(lambda: getattr(ptcore, f)(xp, dtype=getattr(ptcore, dd), **kw),
                lambda: getattr(torch, f)(xt, dtype=getattr(torch, dd), **kw), ctx=f"{f}:{dd}")


OUT_CASES = [
    ("sum", V(1), "int64"), ("sum", V(1), "float64"), ("sum", V(1), "float32"),
    ("mean", V(1), "float64"), ("mean", V(0), "float32"), ("prod", V(1), "float32"),
    ("nansum", V(1), "float32"), ("amax", V(1), "float32"), ("amax", V(1), "float64"),
    ("var", V(1), "float32"), ("std", V(1), "float64"), ("logsumexp", V(1), "float32"),
    ("all", V(1), "bool"), ("any", V(1), "float32"), ("cumsum", V(1), "float32"),
    ("cumsum", V(1), "float64"), ("cumprod", V(0), "float32"), ("logcumsumexp", V(0), "float32"),
    ("linalg.vector_norm", V(2, 1), "float32"), ("linalg.vector_norm", V(2, 1), "float64"),
    ("quantile", V(0.3, 1), "float32"), ("nanquantile", V(0.3, 1), "float32"),
    ("argmax", V(1), "int64"), ("argmax", V(1), "int32"), ("median", V(), "float32"),
]


@pytest.mark.parametrize("fname,variant,outdt", OUT_CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(OUT_CASES)])
@pytest.mark.parametrize("dt", ["float32", "int32"])
def test_out(fname, variant, outdt, dt):
    x = make(dt, (3, 4), _rng("out", fname, dt))
    args, kw = variant
    for shape in ((3,), (0,), (2, 2)):
        def fp():
            o = ptcore.zeros(shape, dtype=getattr(ptcore, outdt))
            r = _call(ptcore, fname, P(x, dt), args, dict(kw, out=o))
            assert r is o, "out= must return the out tensor"
            return o

        def ft():
            o = torch.zeros(shape, dtype=getattr(torch, outdt))
            _call(torch, fname, T(x, dt), args, dict(kw, out=o))
            return o
        compare(fp, ft, ctx=f"{fname} out={outdt}{shape}")


@pytest.mark.parametrize("fname", ["max", "min", "median", "nanmedian", "mode", "cummax",
                                   "cummin", "aminmax"])
def test_out_tuples(fname):
    x = make("float32", (3, 4), _rng("out-tuple", fname))
    kw = {"dim": 1}

    def run(lib, a):
        o = (lib.zeros(0), lib.zeros(0, dtype=lib.float32 if fname == "aminmax" else lib.int64))
        r = getattr(lib, fname)(a, **kw, out=o)
        assert r[0] is o[0] and r[1] is o[1]
        return r
    compare(lambda: run(ptcore, P(x, "float32")), lambda: run(torch, T(x, "float32")),
            ctx=fname)
    if fname != "aminmax":          # wrong index dtype
        def bad(lib, a):
            return getattr(lib, fname)(a, 1, out=(lib.zeros(0), lib.zeros(0)))
        compare(lambda: bad(ptcore, P(x, "float32")), lambda: bad(torch, T(x, "float32")),
                ctx=f"{fname} bad out")


# --------------------------------------------------------------------------
# max / min / binary forms, errors on empty inputs
# --------------------------------------------------------------------------
def test_max_min_binary_forms():
    rng = _rng("binary")
    a, b = make("float32", (3, 4), rng, nan=True), make("float32", (4,), rng)
    for f in ("max", "min"):
        compare(lambda: getattr(ptcore, f)(P(a, "float32"), P(b, "float32")),
                lambda: getattr(torch, f)(T(a, "float32"), T(b, "float32")), ctx=f)
        compare(lambda: getattr(ptcore, f)(P(a, "float32"), other=P(b, "float32")),
                lambda: getattr(torch, f)(T(a, "float32"), other=T(b, "float32")), ctx=f)
        compare(lambda: getattr(P(a, "float32"), f)(P(b, "float32")),
                lambda: getattr(T(a, "float32"), f)(T(b, "float32")), ctx=f + " method")
        i = make("int32", (3, 4), rng)
        compare(lambda: getattr(ptcore, f)(P(i, "int32"), P(b, "float32")),
                lambda: getattr(torch, f)(T(i, "int32"), T(b, "float32")), ctx=f + " promote")


EMPTY_CASES = [
    ("max", V()), ("min", V()), ("max", V(0)), ("max", V(1)), ("amax", V()), ("amax", V(1)),
    ("amin", V(0)), ("argmax", V()), ("argmax", V(0)), ("argmin", V(1)), ("aminmax", V()),
    ("aminmax", V(dim=0)), ("aminmax", V(dim=1)), ("median", V()), ("median", V(0)),
    ("nanmedian", V(1)), ("mode", V(0)), ("mode", V(1)), ("quantile", V(0.5)),
    ("quantile", V(0.5, 1)), ("logsumexp", V(0)), ("logsumexp", V(1)), ("prod", V(0)),
    ("sum", V(0)), ("mean", V()), ("mean", V(0)), ("var", V()), ("var", V(0)), ("std", V(1)),
    ("linalg.vector_norm", V(float("inf"))), ("linalg.vector_norm", V(float("inf"), 1)),
    ("linalg.vector_norm", V(float("-inf"), 0)), ("linalg.vector_norm", V(-1)),
    ("linalg.vector_norm", V(0)), ("softmax", V(0)), ("cumsum", V(0)), ("cummax", V(0)),
    ("all", V(0)), ("any", V()), ("count_nonzero", V(1)),
]


@pytest.mark.parametrize("dt", ["float32", "int64"])
def test_empty_inputs_and_errors(dt):
    errors = []
    for shape in ((0,), (0, 3), (3, 0)):
        x = make(dt, shape, _rng("empty"))
        for fname, (args, kw) in EMPTY_CASES:
            if _skip(fname, dt, "empty", args, kw):
                continue
            ctx = f"{fname}{args}{kw} shape={shape}"
            try:
                compare(lambda: _call(ptcore, fname, P(x, dt), args, kw),
                        lambda: _call(torch, fname, T(x, dt), args, kw), ctx=ctx)
            except AssertionError as e:
                errors.append(_short(e))
    assert not errors, "\n".join(errors)


ERROR_CASES = [
    ("sum", V(3)), ("sum", V(-4)), ("sum", V((0, 0))), ("sum", V(1.5)), ("sum", V("a")),
    ("mean", V()), ("var", V()), ("max", V(2)), ("prod", V((0, 1))), ("argmax", V((0,))),
    ("softmax", V()), ("cumsum", V(2)), ("logcumsumexp", V(0)), ("quantile", V(-0.1)),
    ("quantile", V(0.5, interpolation="bogus")), ("median", V(2)), ("mode", V(5)),
    ("linalg.vector_norm", V("fro")), ("amax", V((1, 1))), ("count_nonzero", V((0, 0))),
]


@pytest.mark.parametrize("dt", ["int64", "float32", "bool"])
def test_argument_errors(dt):
    x = make(dt, (2, 3), _rng("errors", dt))
    errors = []
    for fname, (args, kw) in ERROR_CASES:
        ctx = f"{fname}{args}{kw}"
        try:
            compare(lambda: _call(ptcore, fname, P(x, dt), args, kw),
                    lambda: _call(torch, fname, T(x, dt), args, kw), ctx=ctx)
        except AssertionError as e:
            errors.append(_short(e))
    assert not errors, "\n".join(errors)
    with pytest.raises(TypeError):
        ptcore.sum([1, 2, 3])


def test_error_messages_match_torch():
    """Messages of the common user errors match PyTorch's."""
    cases = [
        (lambda lib: lib.max(lib.zeros(0)), None),
        (lambda lib: lib.zeros(2, 3).sum(2), None),
        (lambda lib: lib.zeros(2, 0).max(1), None),
        (lambda lib: lib.arange(3).mean(), None),
        (lambda lib: lib.zeros(2, 3).sum((0, 0)), None),
        (lambda lib: lib.argmax(lib.zeros(2, 3), (0,)), None),
    ]
    for fn, _ in cases:
        with pytest.raises(Exception) as et:
            fn(torch)
        with pytest.raises(type(et.value)) as ep:
            fn(ptcore)
        assert str(ep.value).split("\n")[0] == str(et.value).split("\n")[0]


# --------------------------------------------------------------------------
# methods, aliases, 0-d tensors, requires_grad inputs
# --------------------------------------------------------------------------
METHOD_CASES = [
    ("sum", V(1)), ("mean", V(dim=0, keepdim=True)), ("prod", V()), ("max", V(1)),
    ("min", V()), ("amax", V(0)), ("argmin", V(1)), ("var", V(1, correction=0)), ("std", V()),
    ("norm", V(1)), ("logsumexp", V(1)), ("all", V()), ("any", V(1)), ("count_nonzero", V(0)),
    ("cumsum", V(1)), ("cumprod", V(0)), ("cummax", V(1)), ("softmax", V(1)),
    ("log_softmax", V(0)), ("median", V(1)), ("nanmedian", V()), ("mode", V(0)),
    ("quantile", V(0.3, 1)), ("nansum", V(0)), ("nanmean", V(1)), ("aminmax", V()),
    ("logcumsumexp", V(1)), ("cummin", V(0)),
]


@pytest.mark.parametrize("fname,variant", METHOD_CASES, ids=[c[0] + str(i) for i, c in
                                                              enumerate(METHOD_CASES)])
def test_methods(fname, variant):
    x = make("float32", (3, 4), _rng("method", fname))
    args, kw = variant
    compare(lambda: getattr(P(x, "float32"), fname)(*args, **kw),
            lambda: getattr(T(x, "float32"), fname)(*args, **kw), ctx=fname)


def test_numpy_aliases_and_inplace_scans():
    x = make("float32", (3, 4), _rng("aliases"))
    for f in ("sum", "mean", "amax", "std", "any", "nansum"):
        compare(lambda: getattr(ptcore, f)(P(x, "float32"), axis=1, keepdims=True),
                lambda: getattr(torch, f)(T(x, "float32"), axis=1, keepdims=True), ctx=f)
    for f in ("cumsum_", "cumprod_"):
        def run(lib, a):
            r = getattr(a, f)(1)
            assert r is a
            return a
        compare(lambda: run(ptcore, P(x, "float32")), lambda: run(torch, T(x, "float32")), ctx=f)
    # the in-place scans refuse a different dtype
    compare(lambda: P(x, "float32").cumsum_(0, dtype=ptcore.float64),
            lambda: T(x, "float32").cumsum_(0, dtype=torch.float64), ctx="cumsum_ dtype")


def test_named_tuple_types_and_repr():
    x = P(np.array([[1., 5., 5.], [7., 0., 2.]], "float32"), "float32")
    r = ptcore.max(x, 1)
    assert type(r).__name__ == "max" and r._fields == ("values", "indices")
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    assert repr(r).startswith("ptcore.return_types.max(")
    mm = ptcore.aminmax(x)
    assert mm._fields == ("min", "max")
    assert ptcore.return_types.max is type(r)


def _sq(L):
    return L.tensor([[3., 1., 2.], [0., 5., 4.], [1., 1., 7.]])


def _empties(L, *names):
    return tuple(L.empty(0, dtype=getattr(L, n)) for n in names)


NAMED_OUT_CALLS = {
    "max": (lambda L, o: L.max(_sq(L), 1, out=o), ("float32", "int64")),
    "min": (lambda L, o: L.min(_sq(L), dim=1, keepdim=True, out=o), ("float32", "int64")),
    "sort": (lambda L, o: L.sort(_sq(L), out=o), ("float32", "int64")),
    "topk": (lambda L, o: L.topk(_sq(L), 2, out=o), ("float32", "int64")),
    "kthvalue": (lambda L, o: L.kthvalue(_sq(L), 2, out=o), ("float32", "int64")),
    "mode": (lambda L, o: L.mode(_sq(L), out=o), ("float32", "int64")),
    "median": (lambda L, o: L.median(_sq(L), 1, out=o), ("float32", "int64")),
    "nanmedian": (lambda L, o: L.nanmedian(_sq(L), 1, out=o), ("float32", "int64")),
    "aminmax": (lambda L, o: L.aminmax(_sq(L), out=o), ("float32", "float32")),
    "cummax": (lambda L, o: L.cummax(_sq(L), 1, out=o), ("float32", "int64")),
    "cummin": (lambda L, o: L.cummin(_sq(L), 1, out=o), ("float32", "int64")),
    "frexp": (lambda L, o: L.frexp(_sq(L), out=o), ("float32", "int32")),
    "histogram": (lambda L, o: L.histogram(_sq(L).flatten(), 3, out=o), ("float32", "float32")),
    "geqrf": (lambda L, o: L.geqrf(_sq(L), out=o), ("float32", "float32")),
    "linalg.inv_ex": (lambda L, o: L.linalg.inv_ex(_sq(L), out=o), ("float32", "int32")),
    "linalg.lstsq": (lambda L, o: L.linalg.lstsq(_sq(L), _sq(L), out=o),
                     ("float32", "float32", "int64", "float32")),
    "linalg.qr": (lambda L, o: L.linalg.qr(_sq(L), out=o), ("float32", "float32")),
    "linalg.slogdet": (lambda L, o: L.linalg.slogdet(_sq(L), out=o), ("float32", "float32")),
    "linalg.svd": (lambda L, o: L.linalg.svd(_sq(L), out=o), ("float32", "float32", "float32")),
    "lu_unpack": (lambda L, o: L.lu_unpack(*L.linalg.lu_factor(_sq(L)), out=o),
                  ("float32", "float32", "float32")),
    "qr": (lambda L, o: L.qr(_sq(L), out=o), ("float32", "float32")),
    "slogdet": (lambda L, o: L.slogdet(_sq(L), out=o), ("float32", "float32")),
    "svd": (lambda L, o: L.svd(_sq(L), out=o), ("float32", "float32", "float32")),
    "triangular_solve": (lambda L, o: L.triangular_solve(_sq(L), _sq(L).triu(), out=o),
                         ("float32", "float32")),
}


@pytest.mark.parametrize("name", list(NAMED_OUT_CALLS))
def test_named_results_given_out_are_the_out_types_as_torch(name):
    # torch returns ``return_types.<name>_out`` (the out tensors) when given out=
    call, dts = NAMED_OUT_CALLS[name]

    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            o = _empties(L, *dts)
            r = call(L, o)
            plain = call(L, None)
        return (type(r).__name__, repr(r).split("(")[0].split(".", 1)[1], type(r).__match_args__,
                all(a is b for a, b in zip(r, o)), type(plain).__name__,
                [np.asarray(t.tolist()).shape for t in r])
    assert run(ptcore) == run(torch)
    out_t = getattr(ptcore.return_types, type(call(ptcore, None)).__name__ + "_out")
    assert out_t.__module__ == "ptcore.return_types"


def test_var_degrees_of_freedom_warning():
    with pytest.warns(UserWarning, match="degrees of freedom"):
        r = ptcore.var(ptcore.tensor([1.0]))
    assert math.isnan(r.item())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda: ptcore.std(ptcore.ones(3, 2), 1, correction=3),
                lambda: torch.std(torch.ones(3, 2), 1, correction=3), ctx="std correction>n")


def test_requires_grad_inputs_forward():
    x = make("float32", (3, 4), _rng("grad"))
    for f, args in (("sum", (1,)), ("mean", ()), ("max", (1,)), ("softmax", (1,)),
                    ("logsumexp", (0,)), ("var", (1,)), ("cumsum", (0,)), ("median", (1,))):
        compare(lambda: getattr(ptcore, f)(P(x, "float32").requires_grad_(), *args),
                lambda: getattr(torch, f)(T(x, "float32").requires_grad_(), *args), ctx=f)


# --------------------------------------------------------------------------
# softmax / scans on special values, quantile interpolation
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_softmax_special_values(dt):
    rows = np.array([[0., 1., 2.], [-np.inf, 0., 1.], [np.inf, 0., 1.], [-np.inf, -np.inf, -np.inf],
                     [1e30 if dt != "float16" else 6e4, 0., -1.], [np.nan, 0., 1.],
                     [np.inf, np.inf, 0.]], dtype="float64" if dt == "float64" else "float32")
    for f in ("softmax", "log_softmax"):
        for d in (0, 1):
            compare(lambda: getattr(ptcore, f)(P(rows, dt), d),
                    lambda: getattr(torch, f)(T(rows, dt), d), ctx=f"{f} dim={d}")
    for f, d in (("logsumexp", 1), ("logsumexp", 0), ("logcumsumexp", 1), ("logcumsumexp", 0),
                 ("cummax", 1), ("cummin", 0), ("cumsum", 1), ("cumprod", 1)):
        compare(lambda: getattr(ptcore, f)(P(rows, dt), d),
                lambda: getattr(torch, f)(T(rows, dt), d), ctx=f"{f} dim={d}")


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_quantile_interpolations(interp, dt):
    rng = _rng("quantile", interp, dt)
    x = make(dt, (4, 7), rng)
    xn = make(dt, (4, 7), rng, nan=True)
    xn[1] = np.nan
    q = np.array([0., 0.1, 0.25, 0.5, 0.5000001, 0.75, 0.9, 1.0], dtype=dt)
    for a in (x, xn):
        for f in ("quantile", "nanquantile"):
            for dim in (None, 0, 1):
                compare(lambda: getattr(ptcore, f)(P(a, dt), ptcore.from_numpy(q), dim,
                                                   interpolation=interp),
                        lambda: getattr(torch, f)(T(a, dt), torch.from_numpy(q), dim,
                                                  interpolation=interp), ctx=f"{f} dim={dim}")
    even = np.arange(8, dtype=dt)
    for qq in (0.5, 1 / 7, 3 / 7, 0.25):
        compare(lambda: ptcore.quantile(P(even, dt), qq, interpolation=interp),
                lambda: torch.quantile(T(even, dt), qq, interpolation=interp), ctx=f"q={qq}")


def test_median_mode_ties_and_ints():
    rng = _rng("median-ties")
    for dt in ("int64", "int16", "uint8", "float32", "float16", "bfloat16"):
        a = make(dt, (5, 9), rng)
        for f in ("median", "nanmedian", "mode"):
            for d in (0, 1):
                compare(lambda: getattr(ptcore, f)(P(a, dt), d),
                        lambda: getattr(torch, f)(T(a, dt), d), ctx=f"{f} {dt} dim={d}")
        b = make(dt, (4, 6), rng)
        compare(lambda: ptcore.median(P(b, dt)), lambda: torch.median(T(b, dt)), ctx=f"{dt} full")


@pytest.mark.parametrize("n", [17, 40, 100, 1000])
def test_mode_index_of_ties_in_long_rows_as_torch(n):
    # which occurrence mode() returns is fixed by torch's (unstable) std::sort of
    # (value, index) pairs: past 16 elements it is not the last one along the row;
    # each NaN is a run of its own
    rng = _rng("mode-long", n)
    for dt in ("float32", "int64", "float16", "bool"):
        a = make(dt, (6, n), rng)
        if dt.startswith("float"):
            a = np.round(a).astype(a.dtype)          # many ties
        if dt == "float32":
            a[1, ::5] = np.nan
            a[2] = np.sort(a[2])
        for d in (1, 0):
            compare(lambda: ptcore.mode(P(a, dt), d), lambda: torch.mode(T(a, dt), d),
                    ctx=f"mode {dt} n={n} dim={d}")


@pytest.mark.parametrize("n", [1, 3, 4, 8, 17, 100])
def test_nanmedian_index_of_an_all_nan_row_as_torch(n):
    # torch's nanmedian runs std::nth_element with a comparator under which NaNs are
    # all equivalent: an all-NaN row's index is where libstdc++'s moves leave it
    for dt in ("float32", "float64", "float16"):
        a = np.full((3, n), np.nan, dtype=dt)
        a[1, 0] = 1.0
        for d in (1, 0):
            compare(lambda: ptcore.nanmedian(P(a, dt), d), lambda: torch.nanmedian(T(a, dt), d),
                    ctx=f"nanmedian {dt} n={n} dim={d}")


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8"])
def test_integer_overflow_wraps_like_torch(dt):
    x = make(dt, (4, 50), _rng("overflow", dt), small=False)
    for f, args in (("sum", ()), ("sum", (1,)), ("prod", (1,)), ("cumsum", (1,)),
                    ("cumprod", (0,)), ("max", (1,)), ("argmin", ()), ("aminmax", ())):
        compare(lambda: getattr(ptcore, f)(P(x, dt), *args),
                lambda: getattr(torch, f)(T(x, dt), *args), ctx=f"{f}{args}")


def test_parallel_results_equal_serial():
    """The same bits with several threads (fixed reduction order)."""
    from ptcore._ops.kernels import _parallel
    rng = _rng("parallel")
    a = P(rng.standard_normal((64, 3000)).astype("float32"), "float32")
    grain = _parallel._get_parallel_grain()
    nt = ptcore.get_num_threads()
    serial = [ptcore.sum(a).item(), ptcore.sum(a, 1).numpy(), ptcore.sum(a, 0).numpy(),
              ptcore.var(a, 1).numpy(), ptcore.argmax(a, 1).numpy(), ptcore.softmax(a, 1).numpy()]
    try:
        _parallel._set_parallel_grain(16)
        ptcore.set_num_threads(2)
        par = [ptcore.sum(a).item(), ptcore.sum(a, 1).numpy(), ptcore.sum(a, 0).numpy(),
               ptcore.var(a, 1).numpy(), ptcore.argmax(a, 1).numpy(), ptcore.softmax(a, 1).numpy()]
    finally:
        _parallel._set_parallel_grain(grain)
        ptcore.set_num_threads(nt)
    assert serial[0] == par[0]
    for s, p in zip(serial[1:], par[1:]):
        np.testing.assert_array_equal(s, p)


# --------------------------------------------------------------------------
# randomised layouts (a few dozen hypothesis examples)
# --------------------------------------------------------------------------
try:
    from hypothesis import given, settings, HealthCheck, strategies as st
except ImportError:  # pragma: no cover - depends on the environment
    given = None

if given is not None:
    @st.composite
    def _cases(draw):
        nd = draw(st.integers(1, 4))
        shape = draw(st.lists(st.integers(0, 6), min_size=nd, max_size=nd))
        perm = draw(st.permutations(list(range(nd))))
        step = draw(st.integers(1, 3))
        dims = draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda d: d % nd, max_size=nd))
        keep = draw(st.booleans())
        op = draw(st.sampled_from(["sum", "mean", "amax", "amin", "var", "prod", "logsumexp",
                                   "nansum", "count_nonzero", "std", "any"]))
        dt = draw(st.sampled_from(["float32", "float64", "int32", "float16"]))
        seed = draw(st.integers(0, 2 ** 16))
        return shape, perm, step, dims, keep, op, dt, seed

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_cases())
    def test_random_layouts_match_torch(case):
        shape, perm, step, dims, keep, op, dt, seed = case
        base = [s * step for s in shape]
        a = make(dt, base, np.random.default_rng(seed))
        sl = tuple(slice(None, None, step) for _ in base)
        xp = P(a, dt)[sl].permute(*perm)
        xt = T(a, dt)[sl].permute(*perm)
        kw = {} if op == "count_nonzero" else {"keepdim": keep}
        dim = tuple(dims)
        if op == "logsumexp" and not dim:
            dim = tuple(range(len(shape)))   # logsumexp's () is a torch bug, see OPS
        atol = None
        if op in ("sum", "mean", "nansum", "var", "std") and dt in ("float32", "float16") and a.size:
            # summation order differs from torch's: allow a few ulp of the summands
            # (a sum that cancels to near zero has no relative accuracy)
            eps = float(np.finfo(np.float32 if dt == "float32" else np.float16).eps)
            mag = float(np.nanmax(np.abs(np.asarray(a, dtype=np.float64))))
            atol = eps * (a.size + 1) * mag * (mag if op in ("var", "std") else 1.0)
        compare(lambda: getattr(ptcore, op)(xp, dim, **kw),
                lambda: getattr(torch, op)(xt, dim, **kw), atol=atol, ctx=f"{op} {case}")


def test_softmax_exp_same_bits_at_every_level():
    """The softmax family's vector exp is the same function at every
    instruction-set level (AVX-512's own operations included): rows shorter
    than a vector are exponentiated as one padded vector and summed in
    order, so their results agree bit for bit across levels -- over the
    clamps (89, -104), subnormal results, inf, -inf and NaN; and the exp is
    ptcore.exp's (within 1 ulp: rows [x, 0] with x <= 0 are exact to the
    sum's and the scaling's roundings)."""
    rng = np.random.default_rng(5)
    v = np.concatenate([rng.uniform(-120, 100, 20000), rng.standard_normal(20000) * 6,
                        [np.inf, -np.inf, np.nan, 88.79, 88.81, -103.99, -104.01, -87.4, 0.0, -0.0]])
    x = ptcore.from_numpy(np.stack([v, np.zeros_like(v), -v], 1).astype(np.float32))
    outs = []
    try:
        for lvl in LEVELS:
            _K._simd_level(lvl)
            outs.append([x.softmax(-1).numpy(), x.log_softmax(-1).numpy(), x.logsumexp(-1).numpy()])
    finally:
        _K._simd_level(2)
    for other in outs[1:]:
        for a, b in zip(outs[0], other):
            assert np.array_equal(a, b, equal_nan=True)
    # values: float32 x - max rounds by up to |x - max| * 2^-24 (~1e-5 relative in the exp here)
    p = outs[0][0][:40000].astype(np.float64)
    w = x.numpy()[:40000].astype(np.float64)
    e = np.exp(w - w.max(1, keepdims=True))
    np.testing.assert_allclose(p, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-38)
    # rows [x, 0], x <= 0: x - max is x itself, so p = e / (1 + e) carries the
    # exp's error (<= 1 ulp) and three roundings
    w = -np.linspace(0, 87, 60001).astype(np.float32)
    y = ptcore.from_numpy(np.stack([w, np.zeros_like(w)], 1)).softmax(-1).numpy()
    e = np.exp(w.astype(np.float64))
    np.testing.assert_allclose(y[:, 0], e / (1 + e), rtol=4.5e-7, atol=0)
    np.testing.assert_allclose(y[:, 1], 1 / (1 + e), rtol=3e-7, atol=0)


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_dim_lists_same_bits_as_general_path(op, dt):
    # a list/tuple of distinct int dims takes the compiled fast path (autograd's sums of
    # broadcast gradients, g.sum([0, 1])): the same bits and shapes as the general path
    # (its kernel called with the sorted dims); repeated or out-of-range dims still raise
    from ptcore._ops import reduction as R
    x = ptcore.tensor(np.random.default_rng(5).standard_normal((7, 30, 3, 5))).to(getattr(ptcore, dt))
    acc = {"sum": R._acc_of(x.dtype), "mean": R._acc_of(x.dtype)}.get(op, R._ext_acc(x.dtype))
    for d in ([0], (1,), [-1], [0, 1], (3, 0), [-1, 1, 0], [0, 1, 2, 3]):
        for keep in (False, True):
            r = getattr(ptcore, op)(x, d, keep)
            ref = R._reduce(op, x, R._dims(d, x.ndim, op), keep, acc, x.dtype)[0]
            assert r.dtype == ref.dtype and r.shape == ref.shape
            assert bool((r == ref).all())
    with pytest.raises(IndexError):
        getattr(ptcore, op)(x, [4])
    with pytest.raises(RuntimeError, match="multiple times"):
        getattr(ptcore, op)(x, [0, -4])


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "float16", "int32"])
@pytest.mark.parametrize("fname", ["cummax", "cummin"])
def test_cumext_blocks_as_torch(fname, dt):
    # contiguous lines run 16 elements a block: blocks wholly below (above) the
    # running value repeat it; ties, NaNs and infinities on every side of a
    # block edge, ascending and descending lines, lengths around 16
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    rows = []
    for n in (1, 15, 16, 17, 31, 32, 33, 100, 257):
        a = rng.integers(-4, 4, size=(6, n)).astype(np.float64)
        a[1] = np.sort(a[1])
        a[2] = -np.sort(a[2])
        a[3, ::16] = 9                             # a new extreme at every block's first element
        a[4, 15::16] = -9 if fname == "cummin" else 9   # ... and at its last
        if dt.startswith("float"):
            a[5, n // 2] = np.nan
            a[5, n - 1] = np.nan
            a[0, ::7] = np.inf
            a[0, 3::11] = -np.inf
        rows.append(a)
    for a in rows:
        p = getattr(ptcore, fname)(ptcore.tensor(a).to(getattr(ptcore, dt)), 1)
        t = getattr(torch, fname)(torch.tensor(a).to(getattr(torch, dt)), 1)
        np.testing.assert_array_equal(p.values.float().numpy(), t.values.float().numpy())
        np.testing.assert_array_equal(p.indices.numpy(), t.indices.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fname", ["amax", "amin"])
@pytest.mark.parametrize("n", [1, 3, 8, 15, 16, 17, 64, 65, 300])
def test_row_extremes_as_torch(fname, dt, n):
    # amax/amin over the last dim: rows shorter than 16 take the outer
    # traversal (strided columns, a branch-free select), longer ones a row
    # kernel each; NaN, infinities, signed zeros and ties in every position
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    a = rng.integers(-3, 3, size=(40, n)).astype(np.float64)
    a[1] = np.nan
    a[2, rng.integers(0, n)] = np.nan
    a[3] = np.inf
    a[4] = -np.inf
    a[5, 0] = np.inf
    a[6, n - 1] = -np.inf
    a[7] = 0.0
    a[8, ::2] = -0.0
    a[9, n // 2] = np.nan
    a[9, 0] = np.inf
    for x in (a, a[:, ::-1].copy()):
        p = getattr(ptcore, fname)(ptcore.tensor(x).to(getattr(ptcore, dt)), 1)
        t = getattr(torch, fname)(torch.tensor(x).to(getattr(torch, dt)), 1)
        np.testing.assert_array_equal(p.numpy(), t.numpy())
        # keepdim and a leading batch dim take the same kernels
        p3 = getattr(ptcore, fname)(ptcore.tensor(x.reshape(4, 10, n)).to(getattr(ptcore, dt)), -1, True)
        np.testing.assert_array_equal(p3.numpy().reshape(-1), t.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 7, 64, 65, 1000, 5000])
def test_row_logsumexp_as_torch(dt, n):
    # logsumexp over the last dim of contiguous rows goes straight from the row
    # kernels (max, then the exps' double sum) into the result: rows of -inf,
    # of +inf, with a NaN, with one +inf, and ordinary ones
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n + 3)
    a = rng.standard_normal((12, n)) * 5
    a[1] = -np.inf
    a[2] = np.inf
    a[3, n // 2] = np.nan
    a[4, n - 1] = np.inf
    a[5, 0] = -np.inf
    a[6] = 80.0 + np.arange(n) / n          # near float32's exp overflow without the shift
    p = ptcore.tensor(a).to(getattr(ptcore, dt)).logsumexp(1).numpy()
    t = torch.tensor(a).to(getattr(torch, dt)).logsumexp(1).numpy()
    tol = 2e-6 if dt == "float32" else 1e-14
    np.testing.assert_allclose(p, t, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fname", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("n", [1, 7, 16, 17, 32, 65, 1000])
def test_row_extremes_with_indices_as_torch(fname, dt, n):
    # max/min with indices and argmax/argmin over the last dim of contiguous
    # rows: the row kernel's (value, position) straight into the results;
    # ties (the first position), NaNs (the first NaN), infinities
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n + 11)
    a = rng.integers(-3, 3, size=(10, n)).astype(np.float64)
    a[1] = -np.inf
    a[2] = np.inf
    a[3, n // 2] = np.nan
    a[4, -1] = np.nan
    a[4, n // 3] = np.nan
    a[5] = 1.0
    for x in (a, a[:, ::-1].copy()):
        p = getattr(ptcore.tensor(x).to(getattr(ptcore, dt)), fname)(1)
        t = getattr(torch.tensor(x).to(getattr(torch, dt)), fname)(1)
        if fname in ("max", "min"):
            np.testing.assert_array_equal(p.values.numpy(), t.values.numpy())
            np.testing.assert_array_equal(p.indices.numpy(), t.indices.numpy())
        else:
            np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 8, 15, 16, 64, 1000])
def test_row_norms_and_nansum_as_torch(dt, n):
    # 2-norm, 1-norm and nansum over the last dim: rows of 16 or more straight
    # from the row kernels into the result, shorter rows as strided columns
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n + 5)
    a = rng.standard_normal((9, n)) * 3
    a[1] = -np.inf
    a[2, n // 2] = np.nan
    a[3] = 0.0
    a[4, 0] = 1e30 if dt == "float32" else 1e300      # squares that overflow the float type
    x, t = ptcore.tensor(a).to(getattr(ptcore, dt)), torch.tensor(a).to(getattr(torch, dt))
    tol = 2e-6 if dt == "float32" else 1e-13
    for f in (lambda L, v: v.norm(dim=1), lambda L, v: L.linalg.vector_norm(v, 1, 1),
              lambda L, v: v.nansum(1), lambda L, v: v.norm(dim=-1, keepdim=True)):
        p, q = f(ptcore, x).numpy(), f(torch, t).numpy()
        assert p.dtype == q.dtype and p.shape == q.shape
        np.testing.assert_allclose(p, q, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dt", ["float32", "float64", "complex128"])
def test_norm_over_dims_of_one_is_abs_as_torch(dt):
    # a norm whose reduced dims all have size 1 is |x| in torch (no powers:
    # 1e300 ** 2 would overflow, (|x| ** 0.5) ** 2 round); order 0 counts
    # values too small to square (5e-324, 1e-200) as non-zero
    torch = pytest.importorskip("torch")
    big = 1e30 if dt == "float32" else 1e300
    a = np.array([[big], [3.0], [-2.5], [np.nan], [0.0], [-0.0], [1e-40 if dt == "float32" else 5e-324],
                  [1e-30 if dt == "float32" else 1e-200]])
    if dt == "complex128":
        a = a + 1j * a[::-1]
    x, t = ptcore.tensor(a).to(getattr(ptcore, dt)), torch.tensor(a).to(getattr(torch, dt))
    for p in (2, 3, 0.5, 1, 0, -1, math.inf, -math.inf):
        for keepdim in (False, True):
            got = ptcore.linalg.vector_norm(x, p, 1, keepdim=keepdim)
            want = torch.linalg.vector_norm(t, p, 1, keepdim=keepdim)
            assert tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            np.testing.assert_array_equal(x.norm(p, 1, keepdim).numpy(), t.norm(p, 1, keepdim).numpy())
    # all dims of a one-element tensor; order 0 over a whole row of tiny values
    one = ptcore.tensor([big], dtype=getattr(ptcore, dt))
    assert ptcore.linalg.vector_norm(one).item() == torch.linalg.vector_norm(
        torch.tensor([big], dtype=getattr(torch, dt))).item()
    assert ptcore.linalg.vector_norm(x.reshape(-1), 0).item() == torch.linalg.vector_norm(t.reshape(-1), 0).item()


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 8, 15, 16, 64, 1000])
def test_row_aminmax_as_torch(dt, n):
    # aminmax over the last dim: rows of 16 or more from the row kernels, shorter
    # ones as strided columns (a branch-free select for both extremes)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n + 17)
    a = rng.integers(-3, 3, size=(8, n)).astype(np.float64)
    a[1] = -np.inf
    a[2, n // 2] = np.nan
    a[3, -1] = np.nan
    a[4, 0] = np.inf
    x, t = ptcore.tensor(a).to(getattr(ptcore, dt)), torch.tensor(a).to(getattr(torch, dt))
    for keepdim in (False, True):
        p, q = x.aminmax(dim=1, keepdim=keepdim), t.aminmax(dim=1, keepdim=keepdim)
        np.testing.assert_array_equal(p.min.numpy(), q.min.numpy())
        np.testing.assert_array_equal(p.max.numpy(), q.max.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 64])
def test_softmax_rows_in_passes_same_bits_as_one_row(dt, n):
    """softmax/log_softmax over many contiguous rows run 16 rows a pass, the
    short ones packed into shared vector exps (float32 logsumexp and float64
    logsumexp over rows of up to 16 too): the same bits as each row alone,
    NaN, inf and all -inf rows included, and torch's values."""
    rng = _rng("rows-passes", dt, n)
    for rows in (1, 5, 16, 17, 40):
        a = (rng.standard_normal((rows, n)) * 5).astype(dt)
        if rows > 4:
            a[2, 0] = np.nan
            a[3, -1] = np.inf
            a[4, :] = -np.inf
        x = ptcore.from_numpy(a)
        for f in ("softmax", "log_softmax"):
            full = getattr(ptcore, f)(x, 1).numpy()
            one = np.stack([getattr(ptcore, f)(x[i], 0).numpy() for i in range(rows)])
            assert np.array_equal(full, one, equal_nan=True), (f, rows)
            ref = getattr(torch, f)(torch.from_numpy(a), 1).numpy()
            np.testing.assert_allclose(full, ref, rtol=1e-5 if dt == "float32" else 1e-12,
                                       atol=1e-6 if dt == "float32" else 1e-13)
        lse = ptcore.logsumexp(x, 1).numpy()
        one = np.array([ptcore.logsumexp(x[i:i + 1].t().contiguous().t(), 1).numpy()[0]
                        for i in range(rows)])
        assert np.array_equal(lse, one, equal_nan=True), rows
        ref = torch.logsumexp(torch.from_numpy(a), 1).numpy()
        np.testing.assert_allclose(lse, ref, rtol=1e-5 if dt == "float32" else 1e-12, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim,keepdim", [((7, 1), 1, False), ((7, 1), (1,), True),
                                               ((3, 1, 4, 1), (1, 3), False), ((1,), 0, False),
                                               ((1, 5), 0, True), ((2, 1, 3), -2, False)])
def test_logsumexp_over_dims_of_size_one_has_torch_bits(dtype, shape, dim, keepdim):
    # (one element per output: torch's max + log(exp(x - max)) is x + 0.0)
    special = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45, -3e38, 3e38, 1.5, -2.25])
    rng = np.random.default_rng(11)
    a = rng.standard_normal(shape)
    a.reshape(-1)[:min(a.size, special.size)] = special[:a.size]
    a = a.astype(dtype)
    want = torch.logsumexp(torch.from_numpy(a), dim, keepdim).numpy()
    x = ptcore.from_numpy(a).requires_grad_(True)
    got = ptcore.logsumexp(x, dim, keepdim)
    assert got.shape == want.shape and got.dtype == getattr(ptcore, dtype)
    u = "u4" if dtype == "float32" else "u8"
    assert np.array_equal(got.detach().numpy().view(u), want.view(u))
    out = ptcore.empty(0, dtype=getattr(ptcore, dtype))
    ptcore.logsumexp(x.detach(), dim, keepdim, out=out)
    assert np.array_equal(out.numpy().view(u), want.view(u))
    # the gradient: exp(x - result), 1 where x is finite
    tx = torch.from_numpy(a).requires_grad_(True)
    torch.logsumexp(tx, dim, keepdim).sum().backward()
    got.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((10, 1), 1), ((1, 10), 0), ((2, 1, 5), 1), ((10, 1), -1),
                                       ((1,), 0)])
def test_softmax_over_a_dim_of_size_one_has_torch_bits(op, dtype, shape, dim):
    # (one element per line: exp(x - x) / 1 is (x - x) + 1 and (x - x) - log(1) is x - x:
    # 1 (0) for finite x, NaN for inf and NaN -- the one-pass path of a contiguous input)
    special = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45, -3e38, 3e38, 1.5, -2.25])
    a = special[:int(np.prod(shape))].reshape(shape).astype(dtype)
    want = getattr(torch.from_numpy(a), op)(dim).numpy()
    x = ptcore.from_numpy(a).requires_grad_(True)
    got = getattr(x, op)(dim)
    assert got.shape == want.shape and got.dtype == getattr(ptcore, dtype)
    u = "u4" if dtype == "float32" else "u8"
    g, w = got.detach().numpy(), want
    assert np.array_equal(np.isnan(g), np.isnan(w))
    assert np.array_equal(g[~np.isnan(g)].view(u), w[~np.isnan(w)].view(u))
    # a non-contiguous input (the line path) agrees
    xt = ptcore.from_numpy(np.ascontiguousarray(a.T)).t() if a.ndim == 2 else None
    if xt is not None:
        gt = getattr(xt, op)(dim).numpy()
        assert np.array_equal(np.isnan(gt), np.isnan(g)) and np.array_equal(gt[~np.isnan(gt)], g[~np.isnan(g)])
    # the gradient (from the output) is torch's
    tx = torch.from_numpy(a).requires_grad_(True)
    wgt = torch.from_numpy(np.linspace(-1, 1, a.size).reshape(shape).astype(dtype))
    (getattr(tx, op)(dim) * wgt).sum().backward()
    (got * ptcore.from_numpy(wgt.numpy())).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
