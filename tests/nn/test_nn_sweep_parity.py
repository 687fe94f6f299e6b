"""Differential checks of torch.nn corners against PyTorch (found by a module sweep)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _exc(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    return None


def _same_exc(fn):
    """``fn(lib)`` raises the same exception type and message under torch and ptcore."""
    t, p = _exc(lambda: fn(torch)), _exc(lambda: fn(ptcore))
    assert t is not None
    assert p is not None and p[0] is t[0], (t, p)
    assert p[1] == t[1]


@pytest.mark.parametrize("shape", [(), (4,), (4, 4), (1, 1, 1, 4, 4)])
def test_unfold_bad_rank_errors(shape):
    _same_exc(lambda lib: lib.nn.functional.unfold(lib.ones(shape), 2))
    _same_exc(lambda lib: lib.nn.Unfold(2)(lib.ones(shape)))


@pytest.mark.parametrize("shape", [(), (4,), (1, 4, 4, 4)])
def test_fold_bad_rank_errors(shape):
    _same_exc(lambda lib: lib.nn.functional.fold(lib.ones(shape), (3, 3), 2))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_circular_pad_module_bad_rank_is_value_error(nd):
    _same_exc(lambda lib: getattr(lib.nn, f"CircularPad{nd}d")(1)(lib.ones((2,) * (nd + 3))))
    _same_exc(lambda lib: getattr(lib.nn, f"CircularPad{nd}d")(1)(lib.ones((2,) * nd)))
    x = np.random.RandomState(0).randn(*(3,) * (nd + 1)).astype(np.float32)
    out = getattr(ptcore.nn, f"CircularPad{nd}d")(1)
    ref = getattr(torch.nn, f"CircularPad{nd}d")(1)
    np.testing.assert_allclose(out(ptcore.from_numpy(x)).numpy(), ref(torch.from_numpy(x)).numpy())
