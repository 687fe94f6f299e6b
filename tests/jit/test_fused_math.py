"""Accuracy of the fused kernel's float32 exp/log/tanh/sigmoid/SiLU/GELU
(ptcore/_ops/kernels/include/ptc_fused_body.h) against float64 NumPy/SciPy references over
the whole float32 range (a sample of every 1021st bit pattern: subnormals,
tails, overflow), their special values (+-0, +-inf, NaN, subnormals), and
the same bits from every instruction-set copy of the kernel the CPU can run."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _fused
from ptcore.jit._fusion import OPCODES

sp = pytest.importorskip("scipy.special")

F32 = np.finfo(np.float32)
OPS = ("exp", "log", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh")


def fused(op, x):
    """One fused instruction ``op`` over the float32 array ``x``."""
    prog = np.array([OPCODES[op], 1, 0, 0, 0], np.int32)
    out = _fused.run([ptcore.tensor(x)], prog, 2, np.array([1], np.int32), [ptcore.float32],
                     (x.size,), False)[0]
    return out.numpy()


def _sample():
    bits = np.arange(0, 2 ** 32, 1021, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[np.isfinite(x)]


def _reference(op, x64):
    with np.errstate(all="ignore"):
        if op == "exp":
            return np.exp(x64)
        if op == "log":
            return np.log(x64)
        if op == "tanh":
            return np.tanh(x64)
        if op == "sigmoid":
            return sp.expit(x64)
        if op == "silu":
            return x64 * sp.expit(x64)
        if op == "gelu":
            return 0.5 * x64 * (1.0 + sp.erf(x64 / np.sqrt(2.0)))
        # 0.5 x (1 + tanh(u)) = x sigmoid(2 u), without float64's cancellation
        return x64 * sp.expit(2.0 * np.sqrt(2.0 / np.pi) * (x64 + 0.044715 * x64 ** 3))


def _ulps(got, ref):
    """|got - ref| in units of the float32 spacing at ref (ref normal)."""
    r32 = np.abs(ref.astype(np.float32))
    return np.abs(got.astype(np.float64) - ref) / np.spacing(r32).astype(np.float64)


@pytest.mark.parametrize("op,max_ulp", [("exp", 1.5), ("log", 1.5), ("tanh", 6), ("sigmoid", 3),
                                        ("silu", 4)])
def test_ulp_error_over_the_float32_range(op, max_ulp):
    x = _sample()
    ref = _reference(op, x.astype(np.float64))
    got = fused(op, x)
    with np.errstate(over="ignore"):
        r32 = ref.astype(np.float32)
    # sigmoid (and SiLU) give exactly 0 below x = -88.72 like the eager kernel
    # (1 / (1 + inf)); the exact values there are below 1e-36
    normal = np.isfinite(r32) & (np.abs(r32) >= 1e-30)
    u = _ulps(got[normal], ref[normal])
    assert u.max() <= max_ulp, (op, u.max(), x[normal][u.argmax()])
    tiny = np.isfinite(r32) & ~normal
    assert (np.abs(got[tiny].astype(np.float64) - ref[tiny]) <= 1e-30).all()
    big = np.isinf(r32)                               # overflow: inf of the right sign
    assert np.array_equal(got[big], r32[big])
    nan = np.isnan(r32)                               # log of x < 0
    assert np.isnan(got[nan]).all()


def test_exp_subnormal_results_and_limits():
    x = np.linspace(-104.5, -87.0, 200_001).astype(np.float32)
    got = fused("exp", x).astype(np.float64)
    ref = np.exp(x.astype(np.float64))
    # two-step scaling: subnormal results within one subnormal step (2^-149)
    assert np.abs(got - ref).max() <= 2.0 ** -149
    assert (got[x < -103.98] == 0).all()
    edge = np.array([88.72283, 88.72284, 89.0, 1e30, F32.max, -103.97, -104.0, -1e30], np.float32)
    with np.errstate(over="ignore"):
        assert np.array_equal(fused("exp", edge), np.exp(edge.astype(np.float64)).astype(np.float32))


def test_log_special_values_and_subnormals():
    x = np.array([0.0, -0.0, -1.0, -np.inf, np.inf, np.nan, 1.0, F32.tiny, F32.max], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log(x.astype(np.float64)).astype(np.float32)
    got = fused("log", x)
    assert np.array_equal(got, want, equal_nan=True)
    sub = np.logspace(-45, -38, 5001).astype(np.float32)         # subnormal inputs
    sub = sub[sub > 0]
    assert _ulps(fused("log", sub), np.log(sub.astype(np.float64))).max() <= 1.5


def test_tanh_bounds_tiny_and_saturation():
    x = np.concatenate([np.linspace(-12, 12, 240_001), [F32.max, -F32.max]]).astype(np.float32)
    got = fused("tanh", x)
    assert (np.abs(got) <= 1).all()
    big = np.abs(x) >= 9.02                            # tanh rounds to 1 from 9.01 on
    assert (got[big] == np.sign(x[big])).all()
    # tiny and subnormal x: tanh(x) = x exactly, the sign of zero kept
    tiny = np.concatenate([np.logspace(-45, -4, 2000), -np.logspace(-45, -4, 2000),
                           [F32.smallest_subnormal, -F32.smallest_subnormal, 1e-40, -1e-40]])
    tiny = tiny.astype(np.float32)
    small = np.abs(tiny) < 1e-4
    assert np.array_equal(fused("tanh", tiny)[small], tiny[small])


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, F32.max, -F32.max, F32.tiny, -F32.tiny,
                    F32.smallest_subnormal, -F32.smallest_subnormal, 1e-40, -1e-40, 88.0, -88.0,
                    88.5, -88.5, 89.0, -89.0, 104.0, -104.0, 9.0, -9.0], np.float32)


@pytest.mark.parametrize("op", OPS)
def test_special_values_equal_eager(op):
    """+-0, +-inf, NaN, +-FLT_MAX and subnormals: the values of the eager ops,
    zeros with their sign, NaN where eager gives NaN.  (Up to 1e-26 apart:
    below x = -88.38 the fused sigmoid is 0 where eager's is a subnormal, and
    the fused tanh-GELU is x sigmoid(2u), not eager's 0.5 x (1 + tanh(u)),
    which cancels to 0 for x < -9.)"""
    import ptcore.nn.functional as F
    eager = {"exp": ptcore.exp, "log": ptcore.log, "tanh": ptcore.tanh, "sigmoid": ptcore.sigmoid, "silu": F.silu,
             "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}[op]
    exp = eager(ptcore.tensor(SPECIAL)).numpy()
    got = fused(op, SPECIAL)
    ref = _reference(op, SPECIAL.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(exp)), (op, got, exp)
    fin = ~np.isnan(exp)
    inf = np.isinf(exp)
    assert np.array_equal(got[inf], exp[inf])
    fin &= ~inf
    close = np.abs(got[fin] - exp[fin]) <= 2e-6 * np.abs(exp[fin]) + 1e-26
    assert close.all(), (op, SPECIAL[fin][~close], got[fin][~close], exp[fin][~close])
    zero = fin & (exp == 0) & (got == 0)              # zeros: the sign too
    assert np.array_equal(np.signbit(got[zero]), np.signbit(exp[zero])), op


def test_gelu_accuracy():
    x = np.concatenate([np.linspace(-12, 12, 120_001), _sample()]).astype(np.float32)
    x64 = x.astype(np.float64)
    for op in ("gelu", "gelu_tanh"):
        got = fused(op, x).astype(np.float64)
        ref = _reference(op, x64)
        fin = np.isfinite(ref)
        # erf from Abramowitz & Stegun 7.1.26 (absolute error 1.5e-7), as the eager kernel
        err = np.abs(got[fin] - ref[fin]) - (1e-6 * np.abs(ref[fin]) + 4e-7)
        assert err.max() <= 0, (op, x[fin][err.argmax()])


def test_every_instruction_set_copy_gives_the_same_bits():
    best = _fused.isa_level()
    assert best in (0, 1, 2)
    # odd length: a partial last block and a padded last vector
    x = np.concatenate([_sample()[::7], SPECIAL, np.linspace(-20, 20, 4099)]).astype(np.float32)
    x = x[:len(x) // 2 * 2 + 1]
    want = {op: fused(op, x).view(np.uint32) for op in OPS}
    try:
        for level in range(best):
            assert _fused._set_isa_level(level) == level
            for op in OPS:
                got = fused(op, x).view(np.uint32)
                nan = np.isnan(want[op].view(np.float32))
                assert np.array_equal(np.isnan(got.view(np.float32)), nan), (level, op)
                assert np.array_equal(got[~nan], want[op][~nan]), (level, op)
    finally:
        assert _fused._set_isa_level(-1) == best
    with pytest.raises(ValueError):
        _fused._set_isa_level(3)


def test_traced_chain_uses_the_same_kernels():
    """A traced chain gives the kernel's values (jit.trace -> fusion -> run)."""
    x = np.linspace(-30, 30, 10_007).astype(np.float32)
    # traced at the shape it runs with (another shape runs the eager ops)
    sf = ptcore.jit.trace(lambda a: ptcore.sigmoid(ptcore.tanh(a) * 3.0) * 1.0, ptcore.tensor(x))
    got = sf(ptcore.tensor(x)).numpy()
    t = fused("tanh", x) * np.float32(3.0)
    np.testing.assert_array_equal(got, fused("sigmoid", t))


@pytest.mark.parametrize("f64", [False, True])
def test_pair_instructions_equal_the_two_instructions(f64):
    """The planner's pair instructions (t = a OP1 b; d = t OP2 c, or t * t, in
    one pass) give the bits of the two instructions, with scalar and buffer
    operands and partial blocks."""
    from ptcore.jit._fusion import _encode, PAIR0
    rng = np.random.default_rng(1)
    dt = np.float64 if f64 else np.float32
    n = 1000
    vals = [rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt) + 3, 1.5, -0.25]
    ops = [ptcore.tensor(v) if isinstance(v, np.ndarray) else v for v in vals]
    arith = ("add", "sub", "mul", "div")
    seen = set()
    for op1 in arith:
        for a, b in ((0, 1), (0, 2), (2, 1), (2, 3)):
            for op2, c in [(o, c) for o in arith for c in (1, 3)] + [("mul", None)]:
                instrs = [(op1, 4, [a, b]), (op2, 5, [4, 4] if c is None else [4, c])]
                code = np.asarray(_encode(instrs, [5]), np.int32)
                assert len(code) == 5 and code[0] >= PAIR0
                seen.add(int(code[0]))
                plain = np.asarray([OPCODES[op1], 4, a, b, a,
                                    OPCODES[op2], 5, 4, 4 if c is None else c, 4], np.int32)
                outs = []
                for prog in (code, plain):
                    o = _fused.run(ops, prog, 6, np.array([5], np.int32),
                                   [ptcore.float64 if f64 else ptcore.float32], (n,), f64)[0]
                    outs.append(o.numpy())
                np.testing.assert_array_equal(outs[0], outs[1], err_msg=f"{op1} {op2} {a} {b} {c}")
    assert len(seen) == 20
    # not paired: the first result is read again later, or is an output
    keep = [("mul", 4, [0, 2]), ("add", 5, [4, 3]), ("mul", 6, [5, 4])]
    code = _encode(keep, [6])                  # 4 is read by the third: only 5, 6 pair
    assert len(code) == 10 and code[0] == OPCODES["mul"] and code[5] >= PAIR0
    assert _encode(keep[:2], [4, 5])[::5] == [OPCODES["mul"], OPCODES["add"]]
