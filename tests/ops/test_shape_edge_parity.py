"""Edge cases of shape ops found by a differential fuzz against torch:
method forms called with no sizes raise TypeError (an explicit ``()`` is a
0-d shape), take_along_dim and unfold of a 0-d tensor check the dim as
torch, diff with n=0 returns a copy without checking dim."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("method", ["repeat", "tile", "flip", "new_zeros", "new_ones", "new_empty", "resize_"])
def test_no_size_arguments_is_a_type_error(method):
    for L in (torch, ptcore):
        x = L.tensor(1.0)
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            getattr(x.clone(), method)()
        assert tuple(getattr(x.clone(), method)(()).shape) == ()


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:                  # noqa: BLE001 - the type is compared
        return type(e).__name__
    return tuple(r.shape), r.tolist()


def test_take_along_dim_and_unfold_of_0d():
    for dim in (0, -1, None):
        got = {L: _outcome(lambda: L.take_along_dim(L.tensor(1.0), L.tensor(0), dim)) for L in (torch, ptcore)}
        assert got[ptcore] == got[torch], dim
    for d, size in ((0, 1), (0, 2), (1, 1), (-1, 1), (-2, 1), (0, 0)):
        got = {L: _outcome(lambda: L.tensor(1.0).unfold(d, size, 1)) for L in (torch, ptcore)}
        assert got[ptcore] == got[torch], (d, size)


def test_diff_order_zero():
    for L in (torch, ptcore):
        x = L.arange(3.0)
        r = L.diff(x, n=0, dim=5)               # no dim check, a copy
        assert r.tolist() == [0.0, 1.0, 2.0] and r.data_ptr() != x.data_ptr()
        with pytest.raises(IndexError):
            L.diff(x, n=0, dim=5, append=L.zeros(1))
        with pytest.raises(RuntimeError):
            L.diff(L.tensor(1.0), n=0)


def test_index_of_a_bool_tensor_is_an_int():
    import operator
    import warnings
    for L in (torch, ptcore):
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no DeprecationWarning for __index__ returning bool
            r = operator.index(L.tensor(True))
        assert type(r) is int and r == 1
