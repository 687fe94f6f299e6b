"""The causal softmax of attention scores in one fused pass per row, AVX-512
or AVX2 (ptcore/_ops/kernels/include/ptc_softmax_rows.h, behind
F.scaled_dot_product_attention with is_causal=True) gives the same bits as the
row loops: partial and whole vectors, rows longer than the keys, -inf/inf/NaN
scores, any thread count; each copy this CPU has runs."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _nn_kernels as K

# the fused copies this CPU runs (2 AVX-512, 1 AVX2)
_old = K._set_softmax_rows(2)
LEVELS = list(range(1, K._softmax_rows_isa() + 1))
K._set_softmax_rows(_old)
need_fused = pytest.mark.skipif(not LEVELS, reason="no fused row copy on this CPU")

SHAPES = [(12, 4, 64, 64), (3, 5, 7), (2, 40, 17), (1, 20, 45), (2, 3, 100, 100), (1, 1, 1),
          (4, 70, 33), (2, 16, 16)]


@need_fused
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_same_bits_as_row_loops(shape, threads):
    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    if shape == (3, 5, 7):
        x[0, 2, 1] = np.nan
        x[1, 3, :] = -np.inf
        x[2, 4, 0] = np.inf
    outs = []
    old_t = ptcore.get_num_threads()
    old = K._set_softmax_rows(0)
    try:
        ptcore.set_num_threads(threads)
        for level in [0] + LEVELS:
            K._set_softmax_rows(level)
            assert K._softmax_rows_isa() == level
            t = ptcore.from_numpy(x.copy())
            assert K.causal_softmax_(t) is t
            outs.append(t.numpy())
    finally:
        K._set_softmax_rows(old)
        ptcore.set_num_threads(old_t)
    for o in outs[1:]:
        assert np.array_equal(outs[0], o, equal_nan=True)


@pytest.mark.parametrize("shape", [(12, 4, 64, 64), (3, 5, 7), (2, 40, 17), (1, 20, 45)])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_scale_is_the_scores_product(shape, dt):
    # causal_softmax_(s, scale) gives the bits of s.mul_(scale) followed by
    # causal_softmax_(s): each copy multiplies the scores as it reads them
    rng = np.random.default_rng(shape[-1])
    x = (rng.standard_normal(shape) * 4).astype(dt)
    old = K._set_softmax_rows(2)
    try:
        for level in [0] + LEVELS:
            K._set_softmax_rows(level)
            for scale in (0.17677669529663687, 3.0, 1.0):
                a = ptcore.from_numpy(x.copy())
                assert K.causal_softmax_(a, scale) is a
                b = ptcore.from_numpy(x.copy()).mul_(scale)
                K.causal_softmax_(b)
                assert np.array_equal(a.numpy(), b.numpy(), equal_nan=True), (level, scale)
    finally:
        K._set_softmax_rows(old)
    for bad in (0.0, -0.5, float("inf"), float("nan")):
        assert K.causal_softmax_(ptcore.from_numpy(x.copy()), bad) is None


def test_knob_refuses_unknown_levels():
    for bad in (-1, 3, 100):
        with pytest.raises(ValueError, match="level must be 0, 1 or 2"):
            K._set_softmax_rows(bad)
    assert K._softmax_rows_isa() in (0, 1, 2)


def test_values_against_numpy():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 37, 37)) * 3).astype(np.float32)
    t = ptcore.from_numpy(x.copy())
    K.causal_softmax_(t)
    mask = np.triu(np.ones((37, 37), bool), 1)
    xm = np.where(mask, -np.inf, x.astype(np.float64))
    e = np.exp(xm - xm.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(t.numpy(), want, rtol=2e-6, atol=1e-7)
    assert (t.numpy()[..., mask] == 0).all()


@pytest.mark.parametrize("C", [1, 7, 8, 9, 16, 17, 24, 65, 256, 257, 263, 1000, 10000])
def test_cross_entropy_row_lse_same_bits_as_row_loops(C):
    """cross_entropy's float32 row log-sum-exp, fused on AVX-512 and AVX2
    (ptc_lse_row_f32_avx512/_avx2), gives the bits of the piecewise loop:
    whole and partial vectors and pieces, inf/-inf/NaN logits; values
    against NumPy in float64."""
    rng = np.random.default_rng(C)
    x = (rng.standard_normal((9, C)) * 20).astype(np.float32)
    x[1, -1] = -np.inf
    if C > 3:
        x[0, 1] = np.inf
        x[2, C // 2] = np.nan
    t = rng.integers(0, C, 9)
    outs = []
    old = K._set_softmax_rows(0)
    try:
        for level in [0] + LEVELS:
            K._set_softmax_rows(level)
            out, lse, _ = K.cross_entropy_forward(ptcore.from_numpy(x), ptcore.from_numpy(t), -100, 0)
            outs.append(np.concatenate([out.numpy(), lse.numpy()]))
    finally:
        K._set_softmax_rows(old)
    for o in outs[1:]:
        assert np.array_equal(outs[0], o, equal_nan=True)
    xd = x.astype(np.float64)
    for r in range(3, 9):          # the rows without inf/NaN
        m = xd[r].max()
        want = m + np.log(np.exp(xd[r] - m).sum())
        np.testing.assert_allclose(outs[0][9 + r], want, rtol=1e-6)
