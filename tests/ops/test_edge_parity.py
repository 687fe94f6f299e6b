"""Edge cases found by a differential sweep against torch (empty inputs,
scalar special cases, NaN handling, ...): each compares ptcore with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` with ptcore and torch: (ptcore result, torch result) or the
    exception types when either raises."""
    out = []
    for lib in (ptcore, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the type is compared
            out.append(type(e))
    return out


def _np(t):
    t = t.detach()
    if str(t.dtype).split(".")[-1] in ("bfloat16", "float16"):
        t = t.float()
    return t.numpy()


def _same(p, r):
    if isinstance(r, type):
        assert p is r, f"ptcore {p} vs torch raises {r.__name__}"
        return
    assert not isinstance(p, type), f"ptcore raised {p.__name__}, torch returned {r!r}"
    if isinstance(r, (tuple, list)):
        assert type(p).__name__ == type(r).__name__ and len(p) == len(r)
        for a, b in zip(p, r):
            _same(a, b)
        return
    if not isinstance(r, torch.Tensor):
        assert type(p) is type(r) and (p == r or (p != p and r != r)), (p, r)
        return
    assert str(p.dtype).split(".")[-1] == str(r.dtype).split(".")[-1], (p.dtype, r.dtype)
    assert tuple(p.shape) == tuple(r.shape), (tuple(p.shape), tuple(r.shape))
    np.testing.assert_allclose(_np(p), _np(r), rtol=1e-6, atol=1e-6, equal_nan=True)


def _check(fn):
    _same(*_both(fn))


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64", "bool", "float16",
                                "bfloat16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_median_of_empty_is_nan_cast_to_dtype(name, dt, shape):
    # torch: full([], nan).to(dtype) -- int32/int64 minimum, 0 for 8/16-bit ints, True for bool
    _check(lambda T: getattr(T, name)(T.ones(shape, dtype=getattr(T, dt))))


@pytest.mark.parametrize("expo", [0, 0.0, 0j, 1 + 0j, 2 + 0j, -1 + 0j, True, 1j])
@pytest.mark.parametrize("fn", ["pow", "float_power"])
@pytest.mark.parametrize("dt", ["float32", "complex64"])
def test_pow_scalar_exponent_special_cases(fn, expo, dt):
    # a scalar exponent 0 fills ones (0 ** 0 of a complex base included); a
    # complex exponent with a zero imaginary part counts as its real part
    _check(lambda T: getattr(T, fn)(T.tensor([0, 1 + 1j, 0.5, -2]).to(getattr(T, dt)), expo))
