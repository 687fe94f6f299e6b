"""The vectorised contiguous rounding loops (ptcore/_ops/kernels/include/ptc_round_vec.h:
floor, ceil, trunc, round, frac of float32/float64 with the x86 rounding
instructions) against NumPy, bit for bit: special values (NaN, infinities,
signed zeros, ties, values beyond 2**23 / 2**52, subnormals), every tail
length of the vector loops, strided input (the generic loop) and float16 /
bfloat16 (computed in float32)."""
import numpy as np
import pytest

import ptcore

_NP = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.rint,
       "frac": lambda a: a - np.trunc(a)}

_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997,
            -0.49999997, 1e-45, -1e-45, 1e-310, -1e-310, 8388607.5, -8388607.5, 8388608.0,
            16777217.0, 4503599627370495.5, -4503599627370495.5, 1e300, -1e300, 3.4e38, -3.4e38,
            1.0000001, -0.9999999, 123.456, -987.654]


def _same_bits(got, want):
    got = np.asarray(got)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8)), (got, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(_NP))
def test_special_values_every_tail(op, dt):
    with np.errstate(all="ignore"):
        base = np.array(_SPECIAL, dtype=np.float64).astype(dt)
    rng = np.random.default_rng(5)
    rand = (rng.standard_normal(97) * rng.choice([1, 10, 1e4, 1e8], 97)).astype(dt)
    vals = np.concatenate([base, rand])
    for n in list(range(0, 41)) + [len(vals)]:
        a = vals[:n].copy()
        with np.errstate(all="ignore"):
            want = _NP[op](a)
        _same_bits(getattr(ptcore, op)(ptcore.from_numpy(a)).numpy(), want)
        # the in-place method and out= take the same loops
        t = ptcore.from_numpy(a.copy())
        getattr(t, op + "_")()
        _same_bits(t.numpy(), want)


@pytest.mark.parametrize("op", sorted(_NP))
def test_strided_and_low_precision(op):
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((40, 6)) * 300).astype(np.float32)
    with np.errstate(all="ignore"):
        want = _NP[op](a[:, ::2])
    _same_bits(getattr(ptcore, op)(ptcore.from_numpy(a)[:, ::2]).numpy(), want)
    h = ptcore.from_numpy(a).half()
    got = getattr(ptcore, op)(h).float().numpy()
    ref = _NP[op](h.float().numpy()).astype(np.float16).astype(np.float32)
    _same_bits(got, ref)
    b = ptcore.from_numpy(a).bfloat16()
    got = getattr(ptcore, op)(b).float().numpy()
    ref = getattr(ptcore, op)(b.float()).bfloat16().float().numpy()
    _same_bits(got, ref)
