"""The emulated CUDA device runs ptcore's CUDA kernel library on the host.

Every kernel family (unary, cast, binary, ternary, reduce, scan, softmax,
index, fill/arange/linspace, random) runs through the EmulatedDriver
(mem_alloc, memcpy, module_load, launch, synchronize) over every dtype, with
contiguous and strided (broadcast, transposed) operands, several block sizes
and grids, and is compared with PyTorch's CPU ops (random: bit-identical to
ptcore's CPU Philox generator).  Custom kernels check the execution model:
barriers, shared memory, warp shuffles and votes, atomics, 3-D indices and
the divergence errors.

Kernels are compiled many per program (one program per family and dtype) to
amortise the compiler's start-up.  By default each family runs a sample of
its ops per dtype (every op for float32 and int32); PTCORE_TEST_EMULATED_FULL=1
runs every op of every family and dtype (several minutes on a cold cache).
"""
import ctypes
import math
import os
import shutil
import warnings

import numpy as np
import pytest

from ptcore.cuda.kernels import library as K

torch = pytest.importorskip("torch")

if not (os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")):
    pytest.skip("the emulated device needs a C++ compiler", allow_module_level=True)

FULL = os.environ.get("PTCORE_TEST_EMULATED_FULL", "") not in ("", "0")

TD = {"bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
      "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
      "float64": torch.float64}
ALL = list(K.DTYPES)
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
# (grid, block) configurations cycled through by the tests
CONFIGS = [((1, 1, 1), (32, 1, 1)), ((3, 1, 1), (64, 1, 1)), ((2, 1, 1), (1024, 1, 1)), ((16, 1, 1), (256, 1, 1)),
           ((5, 1, 1), (96, 1, 1)), ((1, 1, 1), (512, 1, 1))]


# ---------------------------------------------------------------------------
# the device
# ---------------------------------------------------------------------------
class Dev:
    def __init__(self):
        from ptcore.cuda.emulated.driver import EmulatedDriver
        self.d = EmulatedDriver(1)
        self.progs = {}

    def put(self, t):
        t = t.contiguous()
        nb = t.numel() * t.element_size()
        p = self.d.mem_alloc(0, max(nb, 8))
        if nb:
            self.d.memcpy_htod(p, t.data_ptr(), nb, 0)
        return p

    def empty(self, numel, dtype, fill=None):
        t = torch.zeros(numel, dtype=dtype) if fill is None else torch.full((numel,), fill, dtype=dtype)
        return self.put(t)

    def get(self, p, shape, dtype):
        t = torch.empty(shape, dtype=dtype)
        nb = t.numel() * t.element_size()
        if nb:
            self.d.memcpy_dtoh(t.data_ptr(), p, nb, 0)
        return t

    def kernels(self, names):
        key = tuple(names)
        if key not in self.progs:
            self.progs[key] = self.d.module_load(0, K.program_source(list(names)), list(names))
        return self.progs[key]

    def launch(self, fn, cfg, args):
        grid, block = cfg
        self.d.launch(fn, grid, block, args, 0, 0)
        self.d.device_synchronize(0)


# test function -> the kernel names its program holds, given its dtype parameter
def _program_table():
    return {"test_unary": _names_unary, "test_cast": _names_cast, "test_binary": _names_binary,
            "test_ternary": _names_ternary, "test_reduce": _names_reduce, "test_scan": _names_scan,
            "test_softmax": _names_softmax, "test_index": _names_index, "test_fill_arange_linspace": _names_fill,
            "test_random_matches_cpu_generator": _names_random}


@pytest.fixture(scope="module")
def dev(request):
    """The device; the programs of the selected tests are compiled up front, two at a time (the
    compiler, not the kernels, dominates a cold run)."""
    from concurrent.futures import ThreadPoolExecutor
    d = Dev()
    table = _program_table()
    wanted = []
    for item in request.session.items:
        fn = getattr(item, "originalname", None)
        if item.module is request.module and fn in table and hasattr(item, "callspec"):
            prm = item.callspec.params
            wanted.append(tuple(table[fn](prm.get("dt", prm.get("src")))))
    wanted = list(dict.fromkeys(wanted))
    if len(wanted) > 1:
        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as ex:
            list(ex.map(d.kernels, wanted))
    return d


def ll(v):
    return ctypes.c_longlong(int(v))


def ptr(p):
    return ctypes.c_void_p(p)


def params(**kw):
    b = K.pack_params(**kw)
    return ctypes.create_string_buffer(b, len(b))


def strided(sizes, strides):
    b = K.pack_strided(sizes, strides)
    return ctypes.create_string_buffer(b, len(b))


def tol(dt):
    return {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-5, 1e-6),
            "float64": (1e-11, 1e-12)}.get(dt, (0, 0))


def assert_same(got, ref, dt, what=""):
    assert got.shape == ref.shape and got.dtype == ref.dtype, (what, got.shape, ref.shape, got.dtype, ref.dtype)
    if dt in FLOATS and ref.dtype.is_floating_point:
        rtol, atol = tol(dt)
        g, r = got.double(), ref.double()
        ok = torch.isclose(g, r, rtol=rtol, atol=atol, equal_nan=True)
        if not bool(ok.all()):
            bad = (~ok).nonzero()[:5].flatten().tolist()
            raise AssertionError(f"{what}: {int((~ok).sum())} mismatches, e.g. at {bad}: got "
                                 f"{g.flatten()[bad].tolist()} expected {r.flatten()[bad].tolist()}")
    else:
        if not torch.equal(got, ref):
            bad = (got != ref).nonzero()[:5].flatten().tolist()
            raise AssertionError(f"{what}: mismatch at {bad}: got {got.flatten()[bad].tolist()} expected "
                                 f"{ref.flatten()[bad].tolist()}")


def gen(dt, n, lo=-3.0, hi=3.0, seed=0, specials=False):
    g = torch.Generator().manual_seed(seed)
    if dt == "bool":
        return torch.rand(n, generator=g) < 0.5
    if dt in INTS:
        a = max(int(lo), torch.iinfo(TD[dt]).min)
        b = min(int(hi), torch.iinfo(TD[dt]).max)
        return torch.randint(a, b + 1, (n,), generator=g).to(TD[dt])
    x = (torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(TD[dt])
    if specials and n >= 8:
        x[:5] = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0], dtype=TD[dt])
    return x


def pick(full_list, sample):
    return list(full_list) if FULL else [x for x in full_list if x in sample]


# ---------------------------------------------------------------------------
# unary
# ---------------------------------------------------------------------------
F = torch.nn.functional


def _gelu_ref(x):
    # computed in float64: torch's vectorized float32/bfloat16 CPU gelu gives
    # nan at +inf on AVX-512 machines (inf on others, and on CUDA)
    return F.gelu(x.double()).to(x.dtype) if x.dtype in (torch.float32, torch.bfloat16) else F.gelu(x)


UNARY_REF = {
    "neg": (torch.neg, {}), "abs": (torch.abs, {}), "sign": (torch.sign, {}),
    "exp": (torch.exp, {}), "exp2": (torch.exp2, {}), "expm1": (torch.expm1, {}),
    "log": (torch.log, {"lo": 0.05, "hi": 5}), "log2": (torch.log2, {"lo": 0.05, "hi": 5}),
    "log10": (torch.log10, {"lo": 0.05, "hi": 5}), "log1p": (torch.log1p, {"lo": -0.9, "hi": 5}),
    "sqrt": (torch.sqrt, {"lo": 0, "hi": 9}), "rsqrt": (torch.rsqrt, {"lo": 0.05, "hi": 9}),
    "square": (torch.square, {}), "reciprocal": (torch.reciprocal, {"lo": 0.2, "hi": 4}),
    "sin": (torch.sin, {}), "cos": (torch.cos, {}), "tan": (torch.tan, {"lo": -1.2, "hi": 1.2}),
    "asin": (torch.asin, {"lo": -0.99, "hi": 0.99}), "acos": (torch.acos, {"lo": -0.99, "hi": 0.99}),
    "atan": (torch.atan, {}), "sinh": (torch.sinh, {}), "cosh": (torch.cosh, {}), "tanh": (torch.tanh, {}),
    "asinh": (torch.asinh, {}), "acosh": (torch.acosh, {"lo": 1, "hi": 6}),
    "atanh": (torch.atanh, {"lo": -0.95, "hi": 0.95}), "sigmoid": (torch.sigmoid, {}),
    "logit": (torch.logit, {"lo": 0.02, "hi": 0.98}), "erf": (torch.erf, {}), "erfc": (torch.erfc, {}),
    "erfinv": (torch.erfinv, {"lo": -0.999, "hi": 0.999}), "lgamma": (torch.lgamma, {"lo": 0.1, "hi": 8}),
    "digamma": (torch.digamma, {"lo": 0.1, "hi": 8}), "i0": (torch.i0, {}),
    "floor": (torch.floor, {}), "ceil": (torch.ceil, {}), "trunc": (torch.trunc, {}), "round": (torch.round, {}),
    "round_dec": (lambda x: torch.round(x, decimals=2), {}, {"i0": 1, "d0": 100.0}),
    "frac": (torch.frac, {}), "isnan": (torch.isnan, {}), "isinf": (torch.isinf, {}),
    "isfinite": (torch.isfinite, {}), "isposinf": (torch.isposinf, {}), "isneginf": (torch.isneginf, {}),
    "signbit": (torch.signbit, {}), "logical_not": (torch.logical_not, {}),
    "bitwise_not": (torch.bitwise_not, {}),
    "nan_to_num": (lambda x: torch.nan_to_num(x, 0.5, 100.0, -100.0), {}, {"d0": 0.5, "d1": 100.0, "d2": -100.0}),
    "relu": (torch.relu, {}), "silu": (F.silu, {}), "gelu": (_gelu_ref, {}),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), {}),
    "softplus": (lambda x: F.softplus(x, 1.5, 2.0), {}, {"d0": 1.5, "d1": 2.0}),
    "mish": (F.mish, {}),
    "logsigmoid": (F.logsigmoid, {"lo": -30, "hi": 30}),
    "elu": (lambda x: torch.ops.aten.elu(x, 0.7, 1.3, 0.9), {}, {"d0": 0.7, "d1": 0.9, "d2": 1.3}),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.05), {}, {"d0": 0.05}),
    "hardsigmoid": (F.hardsigmoid, {"lo": -4, "hi": 4}), "hardswish": (F.hardswish, {"lo": -4, "hi": 4}),
    "hardtanh": (lambda x: F.hardtanh(x, -1.0, 2.0), {}, {"d0": -1.0, "d1": 2.0}),
    # the band ops with bounds every float type holds exactly (d0/d1 as the dtype holds them)
    "hardshrink": (lambda x: F.hardshrink(x, 0.5), {}, {"d0": 0.5}),
    "softshrink": (lambda x: F.softshrink(x, 0.5), {}, {"d0": 0.5, "d1": 0.5}),
    "threshold": (lambda x: F.threshold(x, 0.25, -2.0), {}, {"d0": 0.25, "d1": -2.0}),
    "deg2rad": (torch.deg2rad, {}), "rad2deg": (torch.rad2deg, {}), "angle": (torch.angle, {}),
    "sinc": (torch.sinc, {}),
    "frexp_mantissa": (lambda x: torch.frexp(x).mantissa, {}),
    "frexp_exponent": (lambda x: torch.frexp(x).exponent, {}),
}
UNARY_SAMPLE = {"float32": None, "int32": None,
                "float64": {"exp", "log", "sin", "erfinv", "lgamma", "digamma", "round", "isnan", "gelu", "i0",
                            "sigmoid", "nan_to_num", "round_dec", "logit"},
                "float16": {"exp", "tanh", "sqrt", "abs", "isinf", "relu", "erf", "floor", "silu"},
                "bfloat16": {"exp", "log1p", "neg", "sign", "signbit", "gelu_tanh", "hardswish", "trunc"},
                "bool": {"sign", "logical_not", "bitwise_not", "isnan", "isfinite", "floor"},
                "uint8": {"neg", "abs", "sign", "square", "bitwise_not", "relu", "hardtanh"},
                "int8": {"neg", "abs", "sign", "square", "relu", "signbit"},
                "int16": {"abs", "bitwise_not", "isinf", "logical_not"},
                "int64": {"neg", "abs", "sign", "square", "bitwise_not", "relu", "hardtanh", "signbit"}}


def _bool_ref(fn, *xs):
    """torch has no bool kernel for some ops (floor, clamp...): the uint8 result as bool."""
    try:
        return fn(*xs)
    except (RuntimeError, NotImplementedError):
        r = fn(*[x.to(torch.uint8) if x.dtype == torch.bool else x for x in xs])
        return r.to(torch.bool) if r.dtype == torch.uint8 else r


def _unary_ops(dt):
    ops = [row[0] for row in K.UNARY if K._kinds_ok(row[1], dt)]
    s = UNARY_SAMPLE[dt]
    return ops if (FULL or s is None) else [o for o in ops if o in s]


def _names_unary(dt):
    return [f"ptc_unary_{o}_{K.TAGS[dt]}_{v}" for o in _unary_ops(dt) for v in ("c", "s")]


@pytest.mark.parametrize("dt", ALL)
def test_unary(dev, dt):
    tag = K.TAGS[dt]
    ops = _unary_ops(dt)
    ks = dev.kernels(_names_unary(dt))
    for i, op in enumerate(ops):
        ref_fn, dom = UNARY_REF[op][:2]
        pk = UNARY_REF[op][2] if len(UNARY_REF[op]) > 2 else {}
        lo, hi = dom.get("lo", -3), dom.get("hi", 3)
        if dt in INTS:
            lo, hi = (0, 20) if dt == "uint8" else (-10, 10)
        if op == "hardtanh" and dt in INTS:
            # integer limits are truncated to the dtype; negative limits on uint8 raise in the front-end
            pk = {"d0": 0.5 if dt == "uint8" else -1.5, "d1": 2.5}
            ref_fn = (lambda d0, d1: lambda x: F.hardtanh(x, d0, d1))(pk["d0"], pk["d1"])
        if dt == "bool":
            ref_fn = (lambda f: lambda x: _bool_ref(f, x))(ref_fn)
        n = 300 + 37 * i
        x = gen(dt, n, lo, hi, seed=i, specials=not dom)
        ref = ref_fn(x)
        cfg = CONFIGS[i % len(CONFIGS)]
        # contiguous
        px, po = dev.put(x), dev.empty(n, ref.dtype)
        dev.launch(ks[f"ptc_unary_{op}_{tag}_c"], cfg, [ll(n), ptr(po), ptr(px), params(**pk)])
        assert_same(dev.get(po, (n,), ref.dtype), ref, dt, f"{op} {dt} contiguous")
        # strided: a transposed (13, m) view of a (m, 13) input
        m = 11 + i % 5
        x2 = gen(dt, m * 13, lo, hi, seed=100 + i).reshape(m, 13)
        xt = x2.t()
        ref2 = ref_fn(xt.contiguous())
        sz, st = K.collapse_dims(list(xt.shape), [[m, 1], list(xt.stride())])
        px2, po2 = dev.put(x2), dev.empty(m * 13, ref2.dtype)
        dev.launch(ks[f"ptc_unary_{op}_{tag}_s"], CONFIGS[(i + 1) % len(CONFIGS)],
                   [ll(m * 13), ptr(po2), ptr(px2), params(**pk), strided(sz, st)])
        assert_same(dev.get(po2, (13, m), ref2.dtype), ref2, dt, f"{op} {dt} strided")


# ---------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------
def _cast_src_values(src, n, seed):
    if src in FLOATS:
        return gen(src, n, -100.0, 120.0, seed=seed)
    return gen(src, n, -100, 120, seed=seed)


def _names_cast(src):
    return [f"ptc_cast_{K.TAGS[src]}_{K.TAGS[d]}_c" for d in ALL] + \
           [f"ptc_cast_{K.TAGS[src]}_{K.TAGS[d]}_s" for d in ALL if FULL or d in ("float32", "int64", src)]


@pytest.mark.parametrize("src", ALL)
def test_cast(dev, src):
    dsts = ALL
    ks = dev.kernels(_names_cast(src))
    for i, dst in enumerate(dsts):
        n = 257 + i
        x = _cast_src_values(src, n, seed=i)
        if src in FLOATS and dst in INTS + ["bool"]:
            x = x.trunc() if dst != "bool" else x
            if dst == "uint8":
                x = x.abs()       # negative float -> uint8 is implementation-defined in torch's CPU kernel
        ref = x.to(TD[dst])
        px, po = dev.put(x), dev.empty(n, TD[dst])
        dev.launch(ks[f"ptc_cast_{K.TAGS[src]}_{K.TAGS[dst]}_c"], CONFIGS[i % len(CONFIGS)],
                   [ll(n), ptr(po), ptr(px), params()])
        assert_same(dev.get(po, (n,), TD[dst]), ref, dst, f"cast {src}->{dst}")
        sname = f"ptc_cast_{K.TAGS[src]}_{K.TAGS[dst]}_s"
        if sname in ks:
            # broadcast: a (7,) row expanded to (9, 7)
            row = x[:7]
            ref2 = row.expand(9, 7).to(TD[dst])
            pr, po2 = dev.put(row), dev.empty(63, TD[dst])
            sz, st = K.collapse_dims([9, 7], [[7, 1], [0, 1]])
            dev.launch(ks[sname], CONFIGS[(i + 2) % len(CONFIGS)], [ll(63), ptr(po2), ptr(pr), params(), strided(sz, st)])
            assert_same(dev.get(po2, (9, 7), TD[dst]), ref2, dst, f"cast {src}->{dst} broadcast")


def test_half_conversions_round_exactly(dev):
    """float32 <-> float16 / bfloat16 as cvt.rn does (round to nearest even, subnormals, overflow to inf):
    every 16-bit pattern widened, and 200k float32 patterns of every exponent (subnormals, NaN, inf,
    values near the overflow threshold and half-way cases) narrowed, compared with torch's conversions."""
    names = ["ptc_cast_f16_f32_c", "ptc_cast_bf16_f32_c", "ptc_cast_f32_f16_c", "ptc_cast_f32_bf16_c"]
    ks = dev.kernels(names)
    bits16 = torch.arange(0, 65536, dtype=torch.int32).to(torch.int16)
    g = torch.Generator().manual_seed(1)
    rnd = torch.randint(-2**31, 2**31 - 1, (200_000,), generator=g, dtype=torch.int64).to(torch.int32)
    half_way = (torch.arange(0, 65536, dtype=torch.int32) << 16) | 0x8000          # bf16 ties
    f16_ties = (torch.arange(0x33000000 >> 13, 0x47800000 >> 13, dtype=torch.int32) << 13) | 0x1000   # f16 ties
    f32 = torch.cat([rnd, half_way, f16_ties, torch.tensor([0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x33000000,
                                                              0x33000001, 0x7F800000, 0x7FC00000],
                                                             dtype=torch.int32)]).view(torch.float32)
    for src, dst, x in [("f16", "f32", bits16.view(torch.float16)), ("bf16", "f32", bits16.view(torch.bfloat16)),
                        ("f32", "f16", f32), ("f32", "bf16", f32)]:
        odt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dst]
        n = x.numel()
        px, po = dev.put(x), dev.empty(n, odt)
        dev.launch(ks[f"ptc_cast_{src}_{dst}_c"], CONFIGS[3], [ll(n), ptr(po), ptr(px), params()])
        got, ref = dev.get(po, (n,), odt), x.to(odt)
        nan = torch.isnan(ref)
        assert torch.equal(torch.isnan(got), nan), (src, dst)
        gb = got.view(torch.int16 if odt != torch.float32 else torch.int32)
        rb = ref.view(torch.int16 if odt != torch.float32 else torch.int32)
        bad = (gb != rb) & ~nan
        assert not bool(bad.any()), (src, dst, x[bad][:5].tolist(), got[bad][:5].tolist(), ref[bad][:5].tolist())
        if dst != "f32":
            assert set(gb[nan].tolist()) <= {0x7FFF}, "NaN narrows to the canonical 0x7fff"


def test_float_to_int_casts_saturate_as_the_device():
    """Out-of-range float -> integer casts follow cvt.rzi (saturate, NaN -> 0; 8/16-bit through int64), as
    ptcore.cuda.kernels.library documents, not the host's undefined C++ conversion."""
    d = Dev()
    names = ["ptc_cast_f32_i32_c", "ptc_cast_f64_i64_c", "ptc_cast_f32_u8_c", "ptc_cast_f16_i16_c"]
    ks = d.kernels(names)
    vals = [math.nan, math.inf, -math.inf, 1e20, -1e20, 3e9, -3e9, 2.9, -2.9, 300.7]
    i32, i64 = 2**31 - 1, 2**63 - 1
    exp = {"ptc_cast_f32_i32_c": [0, i32, -i32 - 1, i32, -i32 - 1, i32, -i32 - 1, 2, -2, 300],
           "ptc_cast_f64_i64_c": [0, i64, -i64 - 1, i64, -i64 - 1, 3 * 10**9, -3 * 10**9, 2, -2, 300],
           "ptc_cast_f32_u8_c": [0, 255, 0, 255, 0, (3 * 10**9) % 256, (-3 * 10**9) % 256, 2, 254, 44],
           "ptc_cast_f16_i16_c": None}
    src_dt = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}
    out_dt = {"i32": torch.int32, "i64": torch.int64, "u8": torch.uint8, "i16": torch.int16}
    for name, want in exp.items():
        _, _, s_tag, d_tag, _ = name.split("_")
        x = torch.tensor(vals, dtype=src_dt[s_tag])
        px, po = d.put(x), d.empty(len(vals), out_dt[d_tag])
        d.launch(ks[name], CONFIGS[0], [ll(len(vals)), ptr(po), ptr(px), params()])
        got = d.get(po, (len(vals),), out_dt[d_tag]).tolist()
        if d_tag == "i16":      # float16 holds 3e9 / 1e20 as inf: int64 saturates, the low 16 bits of
            want = [int(np.int64(v).astype(np.int16)) for v in                         # INT64_MAX are -1
                    [0, i64, -i64 - 1, i64, -i64 - 1, i64, -i64 - 1, 2, -2, 300]]
        assert got == want, (name, got, want)


# ---------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------
def _floor_div(x, y):
    return torch.div(x, y, rounding_mode="floor")


BINARY_REF = {
    "add": (torch.add, {}), "add_alpha": (lambda x, y: torch.add(x, y, alpha=2), {}, {"d0": 2.0, "i0": 2}),
    "sub": (torch.sub, {}), "mul": (torch.mul, {}), "div": (torch.div, {"ynz": True}),
    "prelu": (lambda x, y: torch.where(x > 0, x, x * y), {}),
    "div_floor": (_floor_div, {"ynz": True}),
    "div_trunc": (lambda x, y: torch.div(x, y, rounding_mode="trunc"), {"ynz": True}),
    "remainder": (torch.remainder, {"ynz": True}), "fmod": (torch.fmod, {"ynz": True}),
    "pow": (torch.pow, {"ypos": True}), "atan2": (torch.atan2, {}), "hypot": (torch.hypot, {}),
    "copysign": (torch.copysign, {}), "nextafter": (torch.nextafter, {}),
    "gcd": (torch.gcd, {}), "lcm": (torch.lcm, {}),
    "logaddexp": (torch.logaddexp, {}), "logaddexp2": (torch.logaddexp2, {}),
    "maximum": (torch.maximum, {}), "minimum": (torch.minimum, {}), "fmax": (torch.fmax, {}),
    "fmin": (torch.fmin, {}), "bitwise_and": (torch.bitwise_and, {}), "bitwise_or": (torch.bitwise_or, {}),
    "bitwise_xor": (torch.bitwise_xor, {}), "left_shift": (torch.bitwise_left_shift, {"shift": True}),
    "right_shift": (torch.bitwise_right_shift, {"shift": True}),
    "logical_and": (torch.logical_and, {}), "logical_or": (torch.logical_or, {}),
    "logical_xor": (torch.logical_xor, {}),
    "eq": (torch.eq, {}), "ne": (torch.ne, {}), "lt": (torch.lt, {}), "le": (torch.le, {}), "gt": (torch.gt, {}),
    "ge": (torch.ge, {}), "xlogy": (torch.xlogy, {"ypos": True}),
    "sigmoid_backward": (lambda x, y: torch.ops.aten.sigmoid_backward(x, y), {}),
    "threshold_fill": (lambda x, y: torch.where(x <= 0.25, torch.tensor(-7.0, dtype=x.dtype), y), {},
                       {"d0": 0.25, "d1": -7.0}),
    "masked_fill": (lambda x, m: x.masked_fill(m, 3.0 if x.is_floating_point() else 3), {"mask": True},
                    {"d0": 3.0, "i0": 3}),
}
BINARY_SAMPLE = {"float32": None, "int32": None,
                 "float64": {"add", "div", "div_floor", "remainder", "pow", "atan2", "maximum", "fmin", "lt",
                             "xlogy", "nextafter", "masked_fill"},
                 "float16": {"add", "mul", "div", "maximum", "eq", "pow", "masked_fill", "logaddexp", "nextafter"},
                 "bfloat16": {"sub", "div", "minimum", "ge", "copysign", "hypot", "logaddexp2", "nextafter"},
                 "bool": {"add", "mul", "maximum", "bitwise_xor", "logical_or", "eq", "masked_fill"},
                 "uint8": {"add", "sub", "mul", "div_floor", "remainder", "right_shift", "lt", "gcd"},
                 "int8": {"add", "div_floor", "div_trunc", "remainder", "fmod", "pow", "left_shift"},
                 "int16": {"mul", "bitwise_and", "maximum", "ne", "gcd", "lcm"},
                 "int64": {"add", "add_alpha", "div_floor", "remainder", "pow", "left_shift", "right_shift",
                           "masked_fill", "le"}}


def _bin_inputs(op, dt, n, seed):
    dom = BINARY_REF[op][1]
    if dt in INTS:
        lo, hi = (0, 30) if dt == "uint8" else (-20, 20)
        if op == "pow":
            lo, hi = (0, 5) if dt == "uint8" else (-4, 4)
    else:
        lo, hi = -4.0, 4.0
    x = gen(dt, n, lo, hi, seed=seed, specials=(dt in FLOATS and not dom))
    if dom.get("mask"):
        return x, gen("bool", n, seed=seed + 1)
    y = gen(dt, n, lo, hi, seed=seed + 1)
    if dom.get("ynz") and dt != "bool":
        one = torch.ones((), dtype=y.dtype)
        y = torch.where(y == 0, one, y)
        if dt in FLOATS:
            y = torch.where(y.abs() < 0.05, one, y)
    if dom.get("ypos"):
        if dt in INTS:
            y = y.abs() % 4
        else:
            y = y.abs() + 0.1
            if op == "pow":
                x = x.abs()
    if dom.get("shift"):
        y = y.abs() % 9
    return x, y


def _binary_ops(dt):
    rows = [K._binary_spec(r) for r in K.BINARY]
    ops = [r[0] for r in rows if K._kinds_ok(r[1], dt, r[4])]
    s = BINARY_SAMPLE[dt]
    return ops if (FULL or s is None) else [o for o in ops if o in s]


def _names_binary(dt):
    return [f"ptc_binary_{o}_{K.TAGS[dt]}_{v}" for o in _binary_ops(dt) for v in ("c", "s")]


@pytest.mark.parametrize("dt", ALL)
def test_binary(dev, dt):
    tag = K.TAGS[dt]
    ops = _binary_ops(dt)
    ks = dev.kernels(_names_binary(dt))
    for i, op in enumerate(ops):
        ref_fn = BINARY_REF[op][0]
        pk = BINARY_REF[op][2] if len(BINARY_REF[op]) > 2 else {}
        n = 200 + 13 * i
        x, y = _bin_inputs(op, dt, n, seed=10 * i)
        ref = ref_fn(x, y)
        px, py, po = dev.put(x), dev.put(y), dev.empty(n, ref.dtype)
        dev.launch(ks[f"ptc_binary_{op}_{tag}_c"], CONFIGS[i % len(CONFIGS)],
                   [ll(n), ptr(po), ptr(px), ptr(py), params(**pk)])
        assert_same(dev.get(po, (n,), ref.dtype), ref, dt, f"{op} {dt} contiguous")
        # strided: x (6, 1, 5) broadcast against a transposed y (6, 4, 5) view, output (6, 4, 5)
        xs, ys = _bin_inputs(op, dt, 6 * 5, seed=10 * i + 3)[0], _bin_inputs(op, dt, 6 * 4 * 5, seed=10 * i + 5)[1]
        xb = xs.reshape(6, 1, 5)
        ybase = ys.reshape(6, 5, 4)          # stored (6, 5, 4), used as (6, 4, 5)
        yv = ybase.transpose(1, 2)
        ref2 = ref_fn(xb.expand(6, 4, 5), yv)
        sz, st = K.collapse_dims([6, 4, 5], [[20, 5, 1], [5, 0, 1], list(yv.stride())])
        px2, py2, po2 = dev.put(xb), dev.put(ybase), dev.empty(120, ref2.dtype)
        dev.launch(ks[f"ptc_binary_{op}_{tag}_s"], CONFIGS[(i + 3) % len(CONFIGS)],
                   [ll(120), ptr(po2), ptr(px2), ptr(py2), params(**pk), strided(sz, st)])
        assert_same(dev.get(po2, (6, 4, 5), ref2.dtype), ref2, dt, f"{op} {dt} strided")


# ---------------------------------------------------------------------------
# ternary
# ---------------------------------------------------------------------------
TERNARY_REF = {
    "where": lambda a, b, c: torch.where(a, b, c),
    "clamp": lambda a, b, c: torch.clamp(a, b, c),
    "lerp": lambda a, b, c: torch.lerp(a, b, c),
    "addcmul": lambda a, b, c: torch.addcmul(a, b, c, value=2),
    "addcdiv": lambda a, b, c: torch.addcdiv(a, b, c, value=0.5),
}


def _names_ternary(dt):
    return [f"ptc_ternary_{r[0]}_{K.TAGS[dt]}_{v}" for r in K.TERNARY if K._kinds_ok(r[1], dt) for v in ("c", "s")]


@pytest.mark.parametrize("dt", ALL)
def test_ternary(dev, dt):
    tag = K.TAGS[dt]
    ops = [r[0] for r in K.TERNARY if K._kinds_ok(r[1], dt)]
    ks = dev.kernels(_names_ternary(dt))
    for i, op in enumerate(ops):
        n = 333 + i
        lo, hi = ((0, 9) if dt == "uint8" else (-9, 9)) if dt in INTS else (-3.0, 3.0)
        a = gen("bool", n, seed=i) if op == "where" else gen(dt, n, lo, hi, seed=i, specials=dt in FLOATS)
        b, c = gen(dt, n, lo, hi, seed=i + 1), gen(dt, n, lo, hi, seed=i + 2)
        if op == "clamp" and dt != "bool":
            b, c = torch.minimum(b, c), torch.maximum(b, c)
            b[:3] = c[:3] + 1 if dt in FLOATS else b[:3]      # lo > hi: hi wins
        if op == "lerp":
            c = gen(dt, n, 0.0, 1.0, seed=i + 2)
        if op == "addcdiv":
            c = torch.where(c.abs() < 0.1, torch.ones((), dtype=c.dtype), c)
        ref = _bool_ref(TERNARY_REF[op], a, b, c) if dt == "bool" else TERNARY_REF[op](a, b, c)
        pk = {"d0": 2.0, "i0": 2} if op == "addcmul" else ({"d0": 0.5} if op == "addcdiv" else {})
        pa, pb, pc, po = dev.put(a), dev.put(b), dev.put(c), dev.empty(n, ref.dtype)
        dev.launch(ks[f"ptc_ternary_{op}_{tag}_c"], CONFIGS[i % len(CONFIGS)],
                   [ll(n), ptr(po), ptr(pa), ptr(pb), ptr(pc), params(**pk)])
        assert_same(dev.get(po, (n,), ref.dtype), ref, dt, f"{op} {dt} contiguous")
        # strided: a broadcast scalar-per-row (4, 1), b transposed, c contiguous; output (4, 9)
        a2 = a[:4].reshape(4, 1)
        b2base = b[:36].reshape(9, 4)
        c2 = c[:36].reshape(4, 9)
        args2 = (a2.expand(4, 9), b2base.t(), c2)
        ref2 = _bool_ref(TERNARY_REF[op], *args2) if dt == "bool" else TERNARY_REF[op](*args2)
        sz, st = K.collapse_dims([4, 9], [[9, 1], [1, 0], [1, 4], [9, 1]])
        pa2, pb2, pc2, po2 = dev.put(a2), dev.put(b2base), dev.put(c2), dev.empty(36, ref2.dtype)
        dev.launch(ks[f"ptc_ternary_{op}_{tag}_s"], CONFIGS[(i + 1) % len(CONFIGS)],
                   [ll(36), ptr(po2), ptr(pa2), ptr(pb2), ptr(pc2), params(**pk), strided(sz, st)])
        assert_same(dev.get(po2, (4, 9), ref2.dtype), ref2, dt, f"{op} {dt} strided")


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
def _vnorm(o):
    return lambda x, d: torch.linalg.vector_norm(x, o, dim=d)


REDUCE_REF = {
    "sum": lambda x, d: torch.sum(x, d), "nansum": lambda x, d: torch.nansum(x, d),
    "prod": lambda x, d: torch.prod(x, d), "mean": lambda x, d: torch.mean(x, d),
    "amax": lambda x, d: torch.amax(x, d), "amin": lambda x, d: torch.amin(x, d),
    "argmax": lambda x, d: torch.argmax(x, d), "argmin": lambda x, d: torch.argmin(x, d),
    "all": lambda x, d: torch.all(x, d), "any": lambda x, d: torch.any(x, d),
    "count_nonzero": lambda x, d: torch.count_nonzero(x, d),
    "var": lambda x, d: torch.var(x, d, correction=1), "std": lambda x, d: torch.std(x, d, correction=1),
    "norm0": _vnorm(0), "norm1": _vnorm(1), "norm2": _vnorm(2), "norminf": _vnorm(math.inf),
    "normneginf": _vnorm(-math.inf), "normp": _vnorm(3.0), "logsumexp": lambda x, d: torch.logsumexp(x, d),
}
REDUCE_SAMPLE = {"float32": None, "int32": None, "float64": {"sum", "mean", "var", "argmax", "logsumexp", "norm2"},
                 "float16": {"sum", "amax", "std", "argmin", "normp"},
                 "bfloat16": {"mean", "prod", "amin", "nansum", "norm1"},
                 "bool": {"sum", "all", "any", "amax"}, "uint8": {"sum", "all", "amin", "argmax"},
                 "int8": {"prod", "amax", "argmin"}, "int16": {"sum", "count_nonzero"},
                 "int64": {"sum", "prod", "amax", "argmax", "any"}}


def _reduce_ops(dt):
    ops = [(op, K._reduce_out(dt, out_rule)) for op, dts, out_rule, _acc in K.REDUCE if dt in dts]
    s = REDUCE_SAMPLE[dt]
    return ops if (FULL or s is None) else [o for o in ops if o[0] in s]


def _names_reduce(dt):
    return [f"ptc_reduce_{o}_{K.TAGS[dt]}_{K.TAGS[od]}_{v}" for o, od in _reduce_ops(dt) for v in ("c", "s")]


@pytest.mark.parametrize("dt", ALL)
def test_reduce(dev, dt):
    ops = _reduce_ops(dt)
    tg = K.TAGS[dt]
    ks = dev.kernels(_names_reduce(dt))
    for i, (op, od) in enumerate(ops):
        M, L = 5 + i % 4, 50 + 131 * (i % 3)        # L up to 312: several values per thread
        lo, hi = (-3.0, 3.0) if dt in FLOATS else ((0, 9) if dt == "uint8" else (-9, 9))
        if op == "prod":
            lo, hi = (0.5, 1.5) if dt in FLOATS else (1, 2) if dt != "bool" else (0, 1)
            L = 40
        x = gen(dt, M * L, lo, hi, seed=i).reshape(M, L)
        if dt in FLOATS and op in ("nansum", "amax", "argmax", "logsumexp"):
            x[1, 3] = math.nan
        if dt in FLOATS and op in ("norminf",):
            x[2, 7] = -math.inf
        ref = REDUCE_REF[op](x, 1)
        ref = ref.to(TD[od]) if op in ("all", "any") else ref
        cfg = CONFIGS[i % len(CONFIGS)]
        pk = {"d0": 1.0} if op in ("var", "std") else ({"d0": 3.0} if op == "normp" else {})
        px, po = dev.put(x), dev.empty(M, TD[od])
        dev.launch(ks[f"ptc_reduce_{op}_{tg}_{K.TAGS[od]}_c"], cfg, [ll(M), ll(L), ptr(po), ptr(px), params(**pk)])
        assert_same(dev.get(po, (M,), TD[od]), ref, dt, f"reduce {op} {dt} contiguous")
        # strided: reduce dim 0 of a (L, M) tensor (red stride M), outputs every other element of a (2M,) buffer
        xt = x.t().contiguous()          # (L, M): column r is row r of x
        sz, st = K.collapse_dims([M], [[2], [1]])
        px2, po2 = dev.put(xt), dev.empty(2 * M, TD[od])
        dev.launch(ks[f"ptc_reduce_{op}_{tg}_{K.TAGS[od]}_s"], CONFIGS[(i + 2) % len(CONFIGS)],
                   [ll(M), ll(L), ptr(po2), ptr(px2), params(**pk), strided(sz, st), ll(M)])
        assert_same(dev.get(po2, (2 * M,), TD[od])[::2].contiguous(), ref, dt, f"reduce {op} {dt} strided")


def test_reduce_degenerate_rows(dev):
    """Rows of 0 and 1 elements: sum 0, prod 1, mean / var NaN (0 / 0), var of one element with correction 1 NaN."""
    ks = dev.kernels(_names_reduce("float32"))
    for L in (0, 1):
        M = 3
        x = torch.arange(1.0, M * L + 1.0).reshape(M, L)
        for op, pk in [("sum", {}), ("prod", {}), ("mean", {}), ("var", {"d0": 1.0}), ("std", {"d0": 0.0}),
                       ("logsumexp", {}), ("count_nonzero", {}), ("norm2", {})]:
            od = "int64" if op == "count_nonzero" else "float32"
            name = f"ptc_reduce_{op}_f32_{K.TAGS[od]}_c"
            if name not in ks:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")      # torch warns about the degrees of freedom
                ref = REDUCE_REF[op](x, 1) if op not in ("var", "std") else \
                    (torch.var if op == "var" else torch.std)(x, 1, correction=int(pk["d0"]))
            px, po = dev.put(x), dev.empty(M, TD[od], fill=7)
            dev.launch(ks[name], CONFIGS[1], [ll(M), ll(L), ptr(po), ptr(px), params(**pk)])
            assert_same(dev.get(po, (M,), TD[od]), ref, "float32", f"{op} over rows of {L}")


# ---------------------------------------------------------------------------
# scans and softmax
# ---------------------------------------------------------------------------
def _names_scan(dt):
    od = K._reduce_out(dt, "int64_if_int")
    return [f"ptc_scan_{o}_{K.TAGS[dt]}_{K.TAGS[od]}_{v}" for o in ("cumsum", "cumprod") for v in ("c", "s")]


@pytest.mark.parametrize("dt", ALL)
def test_scan(dev, dt):
    od = K._reduce_out(dt, "int64_if_int")
    ks = dev.kernels(_names_scan(dt))
    for i, op in enumerate(("cumsum", "cumprod")):
        for j, (M, L) in enumerate([(3, 40), (4, 1500), (1, 1)]):
            if op == "cumprod":
                lo, hi = (0.8, 1.25) if dt in FLOATS else (1, 2)
                L = min(L, 60)
            else:
                lo, hi = (-2.0, 2.0) if dt in FLOATS else ((0, 5) if dt == "uint8" else (-5, 5))
            x = gen(dt, M * L, lo, hi, seed=7 * i + j).reshape(M, L)
            fn = torch.cumsum if op == "cumsum" else torch.cumprod
            ref = fn(x, 1)
            if dt in FLOATS:
                # the block scan adds in another order than a sequential loop: compare with the exact
                # (float64) scan, allowing the accumulation type's rounding of each partial result
                ref = fn(x.double(), 1).to(TD[dt])
                eps = 2.0 ** -52 if dt == "float64" else 2.0 ** -23
                bound = fn(x.double().abs(), 1) * eps * 8 * math.sqrt(L)
            cfg = CONFIGS[(i + j) % len(CONFIGS)]
            px, po = dev.put(x), dev.empty(M * L, TD[od])
            dev.launch(ks[f"ptc_scan_{op}_{K.TAGS[dt]}_{K.TAGS[od]}_c"], cfg,
                       [ll(M), ll(L), ptr(po), ptr(px), params()])
            def check(got, what):
                if dt in FLOATS:
                    rtol = tol(dt)[0]
                    err = (got.double() - ref.double()).abs()
                    assert bool((err <= bound + rtol * ref.double().abs()).all()), (op, dt, M, L, what)
                else:
                    assert_same(got, ref, dt, f"{op} {dt} ({M},{L}) {what}")
            check(dev.get(po, (M, L), TD[od]), "contiguous")
            # strided: scan along dim 0 of (L, M) storage into an (L, M) output
            xt = x.t().contiguous()
            sz, st = K.collapse_dims([M], [[1], [1]])
            px2, po2 = dev.put(xt), dev.empty(M * L, TD[od])
            dev.launch(ks[f"ptc_scan_{op}_{K.TAGS[dt]}_{K.TAGS[od]}_s"], CONFIGS[(i + j + 1) % len(CONFIGS)],
                       [ll(M), ll(L), ptr(po2), ptr(px2), params(), strided(sz, st), ll(M), ll(M)])
            check(dev.get(po2, (L, M), TD[od]).t().contiguous(), "strided")


def _names_softmax(dt):
    return [f"ptc_softmax_{o}_{K.TAGS[dt]}_{v}" for o in ("softmax", "log_softmax") for v in ("c", "s")]


@pytest.mark.parametrize("dt", FLOATS)
def test_softmax(dev, dt):
    ks = dev.kernels(_names_softmax(dt))
    for i, op in enumerate(("softmax", "log_softmax")):
        fn = torch.softmax if op == "softmax" else torch.log_softmax
        for j, (M, L) in enumerate([(4, 33), (2, 2000)]):
            x = gen(dt, M * L, -6.0, 6.0, seed=i * 3 + j).reshape(M, L)
            x[0, 0] = -math.inf
            ref = fn(x.double(), 1).to(TD[dt])
            px, po = dev.put(x), dev.empty(M * L, TD[dt])
            dev.launch(ks[f"ptc_softmax_{op}_{K.TAGS[dt]}_c"], CONFIGS[(i + j) % len(CONFIGS)],
                       [ll(M), ll(L), ptr(po), ptr(px), params()])
            assert_same(dev.get(po, (M, L), TD[dt]), ref, dt, f"{op} {dt} contiguous")
            xt = x.t().contiguous()
            sz, st = K.collapse_dims([M], [[1], [1]])
            px2, po2 = dev.put(xt), dev.empty(M * L, TD[dt])
            dev.launch(ks[f"ptc_softmax_{op}_{K.TAGS[dt]}_s"], CONFIGS[(i + j + 2) % len(CONFIGS)],
                       [ll(M), ll(L), ptr(po2), ptr(px2), params(), strided(sz, st), ll(M), ll(M)])
            assert_same(dev.get(po2, (L, M), TD[dt]).t().contiguous(), ref, dt, f"{op} {dt} strided")


# ---------------------------------------------------------------------------
# index: gather / scatter / scatter_add and the error flag
# ---------------------------------------------------------------------------
def _names_index(dt):
    return [f"ptc_index_{o}_{K.TAGS[dt]}_s" for o in ("gather", "scatter", "scatter_add")]


@pytest.mark.parametrize("dt", ALL)
def test_index(dev, dt):
    tg = K.TAGS[dt]
    ks = dev.kernels(_names_index(dt))
    g = torch.Generator().manual_seed(3)
    R, C, Ci = 6, 10, 7
    src = gen(dt, R * C, -5, 5, seed=1).reshape(R, C)
    # gather along dim 1: out (R, Ci)
    index = torch.randint(0, C, (R, Ci), generator=g)
    ref = torch.gather(src, 1, index)
    ps, pi, po, perr = dev.put(src), dev.put(index), dev.empty(R * Ci, TD[dt]), dev.empty(1, torch.int32)
    sz, st = K.collapse_dims([R, Ci], [[Ci, 1], [C, 0], [Ci, 1]])
    dev.launch(ks[f"ptc_index_gather_{tg}_s"], CONFIGS[0],
               [ll(R * Ci), ptr(po), ptr(ps), ptr(pi), ll(C), ll(1), ptr(perr), params(), strided(sz, st)])
    assert_same(dev.get(po, (R, Ci), TD[dt]), ref, dt, f"gather {dt}")
    assert int(dev.get(perr, (1,), torch.int32)[0]) == 0
    # scatter along dim 1 with a unique index per row (deterministic)
    uidx = torch.stack([torch.randperm(C, generator=g)[:Ci] for _ in range(R)])
    upd = gen(dt, R * Ci, -5, 5, seed=2).reshape(R, Ci)
    base = gen(dt, R * C, -5, 5, seed=4).reshape(R, C)
    ref = base.scatter(1, uidx, upd)
    pb, pu, pix = dev.put(base), dev.put(upd), dev.put(uidx)
    sz, st = K.collapse_dims([R, Ci], [[C, 0], [Ci, 1], [Ci, 1]])
    dev.launch(ks[f"ptc_index_scatter_{tg}_s"], CONFIGS[3],
               [ll(R * Ci), ptr(pb), ptr(pu), ptr(pix), ll(C), ll(1), ptr(perr), params(), strided(sz, st)])
    assert_same(dev.get(pb, (R, C), TD[dt]), ref, dt, f"scatter {dt}")
    # scatter_add with repeated indices (the atomics), index transposed in memory
    ridx = torch.randint(0, C, (Ci, R), generator=g)       # stored (Ci, R), used as (R, Ci)
    idx_v = ridx.t()
    if dt == "bool":
        ref = base.clone()
        for r in range(R):
            for c in range(Ci):
                ref[r, idx_v[r, c]] |= bool(upd[r, c])
    else:
        ref = base.scatter_add(1, idx_v, upd)
    pb, pu, pix = dev.put(base), dev.put(upd), dev.put(ridx)
    sz, st = K.collapse_dims([R, Ci], [[C, 0], [Ci, 1], [1, R]])
    dev.launch(ks[f"ptc_index_scatter_add_{tg}_s"], CONFIGS[2],
               [ll(R * Ci), ptr(pb), ptr(pu), ptr(pix), ll(C), ll(1), ptr(perr), params(d0=1.0, i0=1),
                strided(sz, st)])
    assert_same(dev.get(pb, (R, C), TD[dt]), ref, dt, f"scatter_add {dt}")
    assert int(dev.get(perr, (1,), torch.int32)[0]) == 0
    # an index out of range skips its element and raises the error flag
    bad = index.clone()
    bad[2, 3] = C
    bad[4, 0] = -C - 1
    bad[1, 1] = -1                  # counts from the end
    pbad, po = dev.put(bad), dev.empty(R * Ci, TD[dt], fill=0)
    sz, st = K.collapse_dims([R, Ci], [[Ci, 1], [C, 0], [Ci, 1]])
    dev.launch(ks[f"ptc_index_gather_{tg}_s"], CONFIGS[1],
               [ll(R * Ci), ptr(po), ptr(ps), ptr(pbad), ll(C), ll(1), ptr(perr), params(), strided(sz, st)])
    assert int(dev.get(perr, (1,), torch.int32)[0]) == 1
    got = dev.get(po, (R, Ci), TD[dt])
    ok = (bad >= -C) & (bad < C)
    ref = torch.gather(src, 1, torch.where(bad < 0, bad + C, bad).clamp(0, C - 1))
    assert torch.equal(got[ok], ref[ok]) and not bool(got[~ok].to(torch.float64).abs().sum())


# ---------------------------------------------------------------------------
# fill, arange, linspace
# ---------------------------------------------------------------------------
def _names_fill(dt):
    tg = K.TAGS[dt]
    return [f"ptc_fill_{tg}_c", f"ptc_fill_{tg}_s"] + \
        ([f"ptc_arange_{tg}_c", f"ptc_linspace_{tg}_c"] if dt != "bool" else [])


@pytest.mark.parametrize("dt", ALL)
def test_fill_arange_linspace(dev, dt):
    tg = K.TAGS[dt]
    ks = dev.kernels(_names_fill(dt))
    val = 2.75 if dt in FLOATS else (1 if dt == "bool" else 7)
    n = 1000
    po = dev.empty(n, TD[dt])
    dev.launch(ks[f"ptc_fill_{tg}_c"], CONFIGS[3], [ll(n), ptr(po), params(d0=val, i0=int(val))])
    assert_same(dev.get(po, (n,), TD[dt]), torch.full((n,), val, dtype=TD[dt]), dt, "fill")
    # strided fill: every third element of a (5, 9) buffer's transposed view
    buf = torch.zeros(5, 9, dtype=TD[dt])
    pb = dev.put(buf)
    view = buf.t()[::3]                    # (3, 5) with strides (3, 9)
    sz, st = K.collapse_dims(list(view.shape), [list(view.stride())])
    dev.launch(ks[f"ptc_fill_{tg}_s"], CONFIGS[0], [ll(view.numel()), ptr(pb), params(d0=val, i0=int(val)),
                                                   strided(sz, st)])
    view.fill_(val)
    assert_same(dev.get(pb, (5, 9), TD[dt]), buf, dt, "strided fill")
    if dt == "bool":
        return
    if dt in FLOATS:
        start, step, n = -3.5, 0.25, 40
        ref = torch.arange(start, start + step * n, step, dtype=TD[dt])[:n]
        pk = {"d0": start, "d1": step}
    else:
        start, step, n = (2, 3, 40) if dt == "uint8" else (-50, 3, 40)
        ref = torch.arange(start, start + step * n, step, dtype=TD[dt])
        pk = {"i0": start, "i1": step}
    po = dev.empty(n, TD[dt])
    dev.launch(ks[f"ptc_arange_{tg}_c"], CONFIGS[1], [ll(n), ptr(po), params(**pk)])
    assert_same(dev.get(po, (n,), TD[dt]), ref, dt, "arange")
    for a, b, n in [(-2.0, 5.0, 11), (0.0, 1.0, 1000), (10.0, -3.0, 7), (3.0, 3.0, 1), (0.5, 10.2, 5)]:
        if dt == "uint8":
            a, b = abs(a), abs(b)
        ref = torch.linspace(a, b, n, dtype=TD[dt])
        po = dev.empty(n, TD[dt])
        dev.launch(ks[f"ptc_linspace_{tg}_c"], CONFIGS[n % len(CONFIGS)], [ll(n), ptr(po), params(d0=a, d1=b)])
        got = dev.get(po, (n,), TD[dt])
        if dt in ("float16", "bfloat16") and n > 16:
            # torch's CPU kernel is vectorised past 16 points (lanes computed as base + k * step):
            # within one unit in the last place of the endpoints
            ulp = max(abs(a), abs(b)) * (2.0 ** -10 if dt == "float16" else 2.0 ** -7)
            assert float((got.double() - ref.double()).abs().max()) <= ulp, (dt, a, b, n)
        else:
            assert_same(got, ref, dt, f"linspace({a}, {b}, {n})")


# ---------------------------------------------------------------------------
# random: bit-identical to ptcore's CPU Philox generator
# ---------------------------------------------------------------------------
_PT = {"float16": 6, "bfloat16": 7, "float32": 8, "float64": 9}


def _names_random(dt):
    return [f"ptc_random_uniform_{K.TAGS[dt]}_c", f"ptc_random_normal_{K.TAGS[dt]}_c"]


@pytest.mark.parametrize("dt", FLOATS)
def test_random_matches_cpu_generator(dev, dt):
    from ptcore._ops.kernels import _random as R
    tg = K.TAGS[dt]
    ks = dev.kernels(_names_random(dt))
    for j, (seed, offset, n) in enumerate([(0, 0, 1), (42, 7, 1001), (2**63 + 12345, 2**64 - 3, 37),
                                           (123456789, 5, 4096)]):
        ref = torch.zeros(n, dtype=TD[dt])
        new_off = R.fill_uniform_addr(ref.data_ptr(), _PT[dt], n, seed, offset, -3.0, 2.5)
        assert new_off == (offset + K.philox_blocks(dt, n)) % 2**64
        lo, rng, hi, clamp = K.philox_uniform_args(dt, -3.0, 2.5)
        po = dev.empty(n, TD[dt], fill=1)
        dev.launch(ks[f"ptc_random_uniform_{tg}_c"], CONFIGS[j % len(CONFIGS)],
                   [ll(n), ptr(po), ctypes.c_ulonglong(seed), ctypes.c_ulonglong(offset), ctypes.c_void_p(None),
                    ctypes.c_double(lo), ctypes.c_double(rng), ctypes.c_double(hi), ctypes.c_double(clamp)])
        assert dev.get(po, (n,), TD[dt]).view(torch.uint8).numpy().tobytes() == \
            ref.view(torch.uint8).numpy().tobytes(), (dt, seed, offset, n)
        # captured in a CUDA graph: (seed, base offset) read from device memory, the
        # by-value offset counted from the base -- the same numbers
        inner = offset % 5
        state = dev.put(torch.from_numpy(np.array([seed, (offset - inner) % 2**64], dtype=np.uint64)))
        po = dev.empty(n, TD[dt], fill=1)
        dev.launch(ks[f"ptc_random_uniform_{tg}_c"], CONFIGS[j % len(CONFIGS)],
                   [ll(n), ptr(po), ctypes.c_ulonglong(0), ctypes.c_ulonglong(inner), ptr(state),
                    ctypes.c_double(lo), ctypes.c_double(rng), ctypes.c_double(hi), ctypes.c_double(clamp)])
        assert dev.get(po, (n,), TD[dt]).view(torch.uint8).numpy().tobytes() == \
            ref.view(torch.uint8).numpy().tobytes(), ("graph", dt, seed, offset, n)
        ref = torch.zeros(n, dtype=TD[dt])
        R.fill_normal_addr(ref.data_ptr(), _PT[dt], n, seed, offset, 2.0, 0.5)
        po = dev.empty(n, TD[dt], fill=1)
        dev.launch(ks[f"ptc_random_normal_{tg}_c"], CONFIGS[(j + 1) % len(CONFIGS)],
                   [ll(n), ptr(po), ctypes.c_ulonglong(seed), ctypes.c_ulonglong(offset), ctypes.c_void_p(None),
                    ctypes.c_double(2.0), ctypes.c_double(0.5)])
        assert dev.get(po, (n,), TD[dt]).view(torch.uint8).numpy().tobytes() == \
            ref.view(torch.uint8).numpy().tobytes(), (dt, seed, offset, n)


# ---------------------------------------------------------------------------
# the execution model, with small custom kernels
# ---------------------------------------------------------------------------
MODEL_SRC = r'''
extern "C" __global__ void m_ids(int* out) {
    /* each thread writes (thread, block) coordinates at its global linear index */
    long long tpb = (long long)blockDim.x * blockDim.y * blockDim.z;
    long long b = ((long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    long long t = ((long long)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int* o = out + (b * tpb + t) * 6;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
}
extern "C" __global__ void m_reverse(const float* in, float* out) {
    /* block-wise reversal through shared memory: needs the barrier */
    __shared__ float sm[1024];
    int t = threadIdx.x, n = blockDim.x;
    sm[t] = in[blockIdx.x * n + t];
    __syncthreads();
    out[blockIdx.x * n + t] = sm[n - 1 - t];
}
extern "C" __global__ void m_shfl(const int* in, int* out, int width) {
    int t = threadIdx.x, v = in[t];
    out[5 * t + 0] = __shfl_down_sync(0xffffffffu, v, 3, width);
    out[5 * t + 1] = __shfl_up_sync(0xffffffffu, v, 5, width);
    out[5 * t + 2] = __shfl_xor_sync(0xffffffffu, v, 6, width);
    out[5 * t + 3] = __shfl_sync(0xffffffffu, v, 7, width);
    out[5 * t + 4] = (int)(__shfl_sync(0xffffffffu, (double)v * 0.5, t + 1, width) * 2.0);
}
extern "C" __global__ void m_vote(const int* in, unsigned int* out) {
    int t = threadIdx.x, p = in[t];
    out[4 * t + 0] = __ballot_sync(0xffffffffu, p);
    out[4 * t + 1] = __any_sync(0xffffffffu, p);
    out[4 * t + 2] = __all_sync(0xffffffffu, p);
    out[4 * t + 3] = __syncthreads_count(p);
}
extern "C" __global__ void m_hist(long long n, const int* in, int* hist, float* fsum) {
    PTC_FOR(i, n) { atomicAdd(hist + in[i], 1); atomicAdd(fsum, 0.5f); }
}
extern "C" __global__ void m_divergent_exit(int* out) {
    if (threadIdx.x % 3 == 0) return;
    __syncthreads();
    out[threadIdx.x] = 1;
}
extern "C" __global__ void m_divergent_sites(int* out) {
    if (threadIdx.x < 16) { out[threadIdx.x] = 1; __syncthreads(); }
    else { out[threadIdx.x] = 2; __syncthreads(); }
}
extern "C" __global__ void m_warp_deadlock(int* out) {
    if (threadIdx.x == 5) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1);
}
extern "C" __global__ void m_loop_barrier(int* out, int rounds) {
    /* a barrier inside a loop, running totals in shared memory */
    __shared__ int acc[256];
    acc[threadIdx.x] = threadIdx.x;
    for (int r = 0; r < rounds; ++r) {
        __syncthreads();
        int left = acc[(threadIdx.x + blockDim.x - 1) % blockDim.x];
        __syncthreads();
        acc[threadIdx.x] += left;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc[threadIdx.x];
}
'''
MODEL_SRC += r'''
extern "C" __global__ void m_dyn_reverse(const float* in, float* out) {
    extern __shared__ __align__(16) float dyn[];
    int t = threadIdx.x, n = blockDim.x;
    dyn[t] = in[blockIdx.x * n + t];
    __syncthreads();
    out[blockIdx.x * n + t] = dyn[n - 1 - t];
}
'''
MODEL_NAMES = ["m_dyn_reverse", "m_ids", "m_reverse", "m_shfl", "m_vote", "m_hist", "m_divergent_exit", "m_divergent_sites",
               "m_warp_deadlock", "m_loop_barrier"]


@pytest.fixture(scope="module")
def model(dev):
    return dev.d.module_load(0, K.PRELUDE + MODEL_SRC, MODEL_NAMES)


@pytest.mark.parametrize("grid,block", [((2, 3, 1), (4, 2, 3)), ((1, 1, 2), (32, 1, 1)), ((3, 1, 1), (8, 8, 2))])
def test_thread_and_block_indices(dev, model, grid, block):
    nb, nt = grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2]
    po = dev.empty(nb * nt * 6, torch.int32, fill=-1)
    dev.launch(model["m_ids"], (grid, block), [ptr(po)])
    got = dev.get(po, (nb * nt, 6), torch.int32)
    exp = [(tx, ty, tz, bx, by, bz) for bz in range(grid[2]) for by in range(grid[1]) for bx in range(grid[0])
           for tz in range(block[2]) for ty in range(block[1]) for tx in range(block[0])]
    assert got.tolist() == [list(e) for e in exp]


@pytest.mark.parametrize("bs", [32, 96, 1024])
def test_shared_memory_and_barrier(dev, model, bs):
    x = torch.randn(3 * bs)
    px, po = dev.put(x), dev.empty(3 * bs, torch.float32)
    dev.launch(model["m_reverse"], ((3, 1, 1), (bs, 1, 1)), [ptr(px), ptr(po)])
    assert torch.equal(dev.get(po, (3, bs), torch.float32), x.reshape(3, bs).flip(1))


def test_dynamic_shared_memory(dev, model):
    bs = 128
    x = torch.randn(2 * bs)
    px, po = dev.put(x), dev.empty(2 * bs, torch.float32)
    dev.d.launch(model["m_dyn_reverse"], (2, 1, 1), (bs, 1, 1), [ptr(px), ptr(po)], bs * 4, 0)
    dev.d.device_synchronize(0)
    assert torch.equal(dev.get(po, (2, bs), torch.float32), x.reshape(2, bs).flip(1))


def test_barrier_in_a_loop(dev, model):
    po = dev.empty(2 * 256, torch.int32)
    rounds = 5
    dev.launch(model["m_loop_barrier"], ((2, 1, 1), (256, 1, 1)), [ptr(po), ctypes.c_int(rounds)])
    acc = np.arange(256)
    for _ in range(rounds):
        acc = acc + np.roll(acc, 1)
    got = dev.get(po, (2, 256), torch.int32).numpy()
    assert (got == acc[None, :].astype(np.int32)).all()


@pytest.mark.parametrize("width", [32, 16, 8])
def test_warp_shuffles(dev, model, width):
    n = 64
    vals = np.arange(n, dtype=np.int32) * 7 + 3
    pi, po = dev.put(torch.from_numpy(vals)), dev.empty(5 * n, torch.int32)
    dev.launch(model["m_shfl"], ((1, 1, 1), (n, 1, 1)), [ptr(pi), ptr(po), ctypes.c_int(width)])
    got = dev.get(po, (n, 5), torch.int32).numpy()
    for t in range(n):
        seg = (t // width) * width
        lane = t - seg
        down = vals[t + 3] if lane + 3 < width else vals[t]
        up = vals[t - 5] if lane >= 5 else vals[t]
        xr = vals[seg + ((lane ^ 6) % width)] if (lane ^ 6) < width else vals[t]
        idx = vals[seg + (7 % width)]
        nxt = vals[seg + ((lane + 1) % width)]
        assert got[t].tolist() == [down, up, xr, idx, nxt], (t, width)


def test_warp_votes_and_syncthreads_count(dev, model):
    n = 80            # the last warp is partial (16 lanes)
    pred = (np.arange(n) % 3 == 0).astype(np.int32)
    pred[32:64] = 1   # warp 1: all true
    pi, po = dev.put(torch.from_numpy(pred)), dev.empty(4 * n, torch.int32)
    dev.launch(model["m_vote"], ((1, 1, 1), (n, 1, 1)), [ptr(pi), ptr(po)])
    got = dev.get(po, (n, 4), torch.int32).numpy().view(np.uint32)
    for t in range(n):
        w = t // 32
        lanes = pred[32 * w: 32 * w + 32]
        ballot = sum(1 << i for i, p in enumerate(lanes) if p)
        assert got[t].tolist() == [ballot, int(lanes.any()), int(lanes.all()), int(pred.sum())], t


def test_atomics_across_blocks(dev, model):
    n = 5000
    g = torch.Generator().manual_seed(0)
    vals = torch.randint(0, 17, (n,), generator=g, dtype=torch.int32)
    pi, ph, pf = dev.put(vals), dev.empty(17, torch.int32), dev.empty(1, torch.float32)
    dev.launch(model["m_hist"], ((7, 1, 1), (128, 1, 1)), [ll(n), ptr(pi), ptr(ph), ptr(pf)])
    assert torch.equal(dev.get(ph, (17,), torch.int32), torch.bincount(vals, minlength=17).to(torch.int32))
    assert float(dev.get(pf, (1,), torch.float32)[0]) == n * 0.5


@pytest.mark.parametrize("kernel,match", [
    ("m_divergent_exit", r"m_divergent_exit.*divergent __syncthreads.*exited"),
    ("m_divergent_sites", r"m_divergent_sites.*two different __syncthreads"),
    ("m_warp_deadlock", r"m_warp_deadlock.*__shfl_down_sync.*0x00000020"),
])
def test_divergence_is_a_clear_error_and_the_device_stays_usable(dev, model, kernel, match):
    po = dev.empty(64, torch.int32)
    with pytest.raises(RuntimeError, match=match):
        dev.launch(model[kernel], ((2, 1, 1), (64, 1, 1)), [ptr(po)])
    # the abandoned threads' fibers are reclaimed: the next launches run normally
    x = torch.randn(2 * 64)
    px, po2 = dev.put(x), dev.empty(2 * 64, torch.float32)
    dev.launch(model["m_reverse"], ((2, 1, 1), (64, 1, 1)), [ptr(px), ptr(po2)])
    assert torch.equal(dev.get(po2, (2, 64), torch.float32), x.reshape(2, 64).flip(1))


def test_launch_argument_and_configuration_errors(dev, model):
    from ptcore.cuda.emulated import kernels as H
    po = dev.empty(8, torch.int32)
    with pytest.raises(TypeError, match=r"m_reverse takes 2 arguments, got 1"):
        H.launcher(model["m_reverse"], (1,), (32,), [ptr(po)])
    with pytest.raises(TypeError, match=r"argument 1 is 4 bytes .*8 bytes"):
        H.launcher(model["m_reverse"], (1,), (32,), [ptr(po), ctypes.c_int(3)])
    with pytest.raises(ValueError, match=r"block \(2048, 1, 1\) exceeds"):
        H.launcher(model["m_reverse"], (1,), (2048,), [ptr(po), ptr(po)])
    with pytest.raises(ValueError, match=r"grid dimensions must be positive"):
        H.launcher(model["m_reverse"], (0, 1, 1), (32,), [ptr(po), ptr(po)])
    with pytest.raises(TypeError, match="kernel handle"):
        H.launcher("m_reverse", (1,), (32,), [])
    with pytest.raises(TypeError, match="kernel handle"):
        H.launcher(12345, (1,), (32,), [])
    assert all(isinstance(h, int) for h in model.values())          # handles are ints, as the driver's
    assert H.kernel_info(model["m_reverse"]).sizes == (8, 8)


def test_compile_error_names_the_compiler_output(dev):
    with pytest.raises(RuntimeError, match=r"(?s)compiling a CUDA program for the emulated device failed.*"
                                           r"undeclared|not declared"):
        dev.d.module_load(0, 'extern "C" __global__ void k_bad(int* x) { x[0] = undefined_thing; }', ["k_bad"])


def test_missing_compiler_is_a_clear_error(monkeypatch):
    from ptcore.cuda.emulated import kernels as H
    monkeypatch.setattr(H, "_compiler_info", None)
    monkeypatch.setenv("CXX", "ptcore-no-such-compiler")
    with pytest.raises(RuntimeError, match="needs a C.. compiler.*ptcore-no-such-compiler"):
        H.compiler()


def test_disk_cache_is_keyed_and_atomic(tmp_path, monkeypatch):
    from ptcore.cuda.emulated import kernels as H
    monkeypatch.setenv("PTCORE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(H, "_programs", {})
    src = 'extern "C" __global__ void k_one(int* x) { x[threadIdx.x] = 7; }\n'
    before = H.stats()
    H.load(src, ["k_one"])
    mid = H.stats()
    assert mid["compiles"] >= before["compiles"] + 1
    files = sorted(p.name for p in (tmp_path / "emulated").iterdir())
    assert any(f.startswith("prog-") and f.endswith(".so") for f in files) and not any(f.endswith(".tmp") for f in files)
    H.load(src, ["k_one"])                      # memory hit
    assert H.stats()["memory_hits"] == mid["memory_hits"] + 1
    monkeypatch.setattr(H, "_programs", {})
    H.load(src, ["k_one"])                      # disk hit, no compile
    assert H.stats()["compiles"] == mid["compiles"] and H.stats()["disk_hits"] > mid["disk_hits"]
    H.load(src + "\n", ["k_one"])               # another source: another entry
    assert len([p for p in (tmp_path / "emulated").iterdir() if p.name.startswith("prog-")]) == 2


def test_grid_stride_elementwise_launch(dev):
    """1e5 elements, 16 blocks x 256 threads (each thread strides over the grid);
    relaunching over the same buffers gives the same sum (its speed is
    benchmarks/cuda_overhead.py's, not a test's)."""
    names = ["ptc_binary_add_f32_c"]
    ks = dev.kernels(names)
    n = 100_000
    x, y = torch.randn(n), torch.randn(n)
    px, py, po = dev.put(x), dev.put(y), dev.empty(n, torch.float32)
    args = [ll(n), ptr(po), ptr(px), ptr(py), params()]
    dev.launch(ks[names[0]], ((16, 1, 1), (256, 1, 1)), args)
    for _ in range(2):
        dev.launch(ks[names[0]], ((16, 1, 1), (256, 1, 1)), args)
    assert torch.equal(dev.get(po, (n,), torch.float32), x + y)
