"""ptcore.quasirandom.SobolEngine against torch.quasirandom.SobolEngine."""
import numpy as np
import pytest

import ptcore
from ptcore.quasirandom import SobolEngine, _initial_state, _scramble_state

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dim", [1, 2, 3, 7, 64, 1111, 21201])
def test_unscrambled_points_equal_torch(dim):
    t = torch.quasirandom.SobolEngine(dim)
    p = SobolEngine(dim)
    n = 40 if dim < 21201 else 5
    np.testing.assert_array_equal(p.draw(n).numpy(), t.draw(n).numpy())
    np.testing.assert_array_equal(p.draw(n, dtype=ptcore.float64).numpy(),
                                  t.draw(n, dtype=torch.float64).numpy())
    np.testing.assert_array_equal(p.quasi.numpy(), t.quasi.numpy())
    np.testing.assert_array_equal(p.sobolstate.numpy(), t.sobolstate.numpy())


def test_draw_one_at_a_time_fast_forward_reset_base2():
    t = torch.quasirandom.SobolEngine(5)
    p = SobolEngine(5)
    for _ in range(3):
        np.testing.assert_array_equal(p.draw().numpy(), t.draw().numpy())
    p.fast_forward(13)
    t.fast_forward(13)
    np.testing.assert_array_equal(p.draw(9).numpy(), t.draw(9).numpy())
    assert p.num_generated == t.num_generated == 25
    p.reset()
    t.reset()
    np.testing.assert_array_equal(p.draw_base2(4).numpy(), t.draw_base2(4).numpy())
    np.testing.assert_array_equal(p.draw_base2(4).numpy(), t.draw_base2(4).numpy())
    with pytest.raises(ValueError):
        t.draw_base2(3)
    with pytest.raises(ValueError, match="power of 2"):
        p.draw_base2(3)
    # fast_forward from the start
    p2, t2 = SobolEngine(3).fast_forward(6), torch.quasirandom.SobolEngine(3).fast_forward(6)
    np.testing.assert_array_equal(p2.draw(4).numpy(), t2.draw(4).numpy())


def test_out_and_default_dtype():
    t = torch.quasirandom.SobolEngine(2)
    p = SobolEngine(2)
    out = ptcore.empty(0)
    res = p.draw(6, out=out)
    assert res is out and tuple(out.shape) == (6, 2)
    np.testing.assert_array_equal(out.numpy(), t.draw(6).numpy())
    old = ptcore.get_default_dtype()
    ptcore.set_default_dtype(ptcore.float64)
    try:
        assert SobolEngine(2).draw(3).dtype == ptcore.float64
    finally:
        ptcore.set_default_dtype(old)


def test_bad_dimension():
    for d in (0, 21202):
        with pytest.raises(ValueError):
            torch.quasirandom.SobolEngine(d)
        with pytest.raises(ValueError, match="dimensionality"):
            SobolEngine(d)


@pytest.mark.parametrize("dim, seed", [(1, 0), (4, 123), (37, 7)])
def test_scramble_matrix_as_torch(dim, seed):
    # The scrambling itself is torch's: fed the same random bits it gives torch's state.
    t = torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed)
    g = torch.Generator().manual_seed(seed)
    torch.randint(2, (dim, 30), generator=g)  # the shift bits are drawn first
    ltm = torch.randint(2, (dim, 30, 30), generator=g).tril().numpy().astype(np.int64)
    state = _scramble_state(_initial_state(dim, 30), ltm, 30)
    np.testing.assert_array_equal(state, t.sobolstate.numpy())


def test_scrambled_sequence_properties():
    p = SobolEngine(3, scramble=True, seed=5)
    q = SobolEngine(3, scramble=True, seed=5)
    a = p.draw(64).numpy()
    np.testing.assert_array_equal(a, q.draw(64).numpy())       # seeded: reproducible
    assert not np.array_equal(a, SobolEngine(3, scramble=True, seed=6).draw(64).numpy())
    assert ((a >= 0) & (a < 1)).all()
    # a scrambled Sobol' net: every dyadic interval of length 1/64 holds exactly one point
    for j in range(3):
        np.testing.assert_array_equal(np.sort(np.floor(a[:, j] * 64)), np.arange(64))
    assert repr(p) == "SobolEngine(dimension=3, scramble=True, seed=5)"
    assert repr(SobolEngine(2)) == repr(torch.quasirandom.SobolEngine(2))


def test_reachable_as_torch():
    assert ptcore.quasirandom.SobolEngine is SobolEngine
