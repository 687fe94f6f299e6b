"""Layer norm's float32 rows four at a time on AVX-512 and on AVX2
(ptcore/_ops/kernels/include/ptc_layernorm.h) give the same bits as the row loops, forward
and backward, for every affine variant, row count (groups of four and the
rest), width (vectors of 8/16 and tails) and thread count; and values within
float32 rounding of float64."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _nn_kernels as K

F = ptcore.nn.functional
SHAPES = [(768, 128), (13, 37), (5, 8), (3, 7), (1000, 300), (2, 1), (4, 2, 24)]


def _levels():
    old = K._set_ln_rows(2)
    cpu = K._set_ln_rows(old)
    return list(range(1, cpu + 1))


LEVELS = _levels()


def _run(x, w, b, g, n):
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    pw = None if w is None else ptcore.from_numpy(w.copy()).requires_grad_()
    pb = None if b is None else ptcore.from_numpy(b.copy()).requires_grad_()
    y = F.layer_norm(px, (n,), pw, pb)
    y.backward(ptcore.from_numpy(g))
    return [y.detach().numpy(), px.grad.numpy()] + \
        [p.grad.numpy() for p in (pw, pb) if p is not None]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [0, 1, 2, 3])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("level", LEVELS, ids=lambda v: {1: "avx2", 2: "avx512"}[v])
def test_same_bits_as_row_loops(shape, affine, threads, level):
    rng = np.random.default_rng(shape[0] * 10 + affine)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    n = shape[-1]
    w = rng.standard_normal(n).astype(np.float32) if affine & 1 else None
    b = rng.standard_normal(n).astype(np.float32) if affine & 2 else None
    g = rng.standard_normal(shape).astype(np.float32)
    old_t = ptcore.get_num_threads()
    old = K._set_ln_rows(level)
    try:
        ptcore.set_num_threads(threads)
        assert K._set_ln_rows(level) == level
        fast = _run(x, w, b, g, n)
        K._set_ln_rows(0)
        loops = _run(x, w, b, g, n)
    finally:
        K._set_ln_rows(old)
        ptcore.set_num_threads(old_t)
    for a, c in zip(fast, loops):
        assert np.array_equal(a, c)


@pytest.mark.parametrize("shape", [(768, 128), (9, 45)])
def test_values_against_float64(shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 2 + 5).astype(np.float32)
    n = shape[-1]
    w = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    got = _run(x, w, b, g, n)
    ref = _run(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
               g.astype(np.float64), n)
    for a, c in zip(got, ref):
        np.testing.assert_allclose(a, c, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(c).max()))


def test_row_loops_threads_give_one_thread_bits():
    # the row loops' backward sums were shared between threads (written only
    # through their addresses inside the parallel loop): rows read another
    # thread's sums now and then; repeated to catch the interleaving
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((1000, 300)) * 3 + 1).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    g = rng.standard_normal((1000, 300)).astype(np.float32)
    old_t = ptcore.get_num_threads()
    old = K._set_ln_rows(0)
    try:
        ptcore.set_num_threads(1)
        ref = _run(x, None, b, g, 300)
        ptcore.set_num_threads(2)
        for _ in range(30):
            got = _run(x, None, b, g, 300)
            for a, c in zip(got, ref):
                assert np.array_equal(a, c)
    finally:
        K._set_ln_rows(old)
        ptcore.set_num_threads(old_t)
