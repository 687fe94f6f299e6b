"""Found by differential fuzzing against torch 2.13: indexing assignments with several
Python bools, and in-place / out= complex ``pow`` with a scalar exponent 0."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("idx", [
    (False, 1, True), (False, slice(None), True), (True, True), (False, True),
    (None, True, Ellipsis, False), (slice(None), False, False), (True, Ellipsis, False),
    (1, True, slice(0, 2)), (True,), (True, 1), (False,),
])
def test_setitem_with_python_bools(idx):
    # several bools are advanced indices broadcast together (a (0,) and a (1,) index give one
    # dim of size 0), so the value has the indexing result's shape, not one dim per bool
    got = ptcore.arange(16.).reshape(4, 4)
    want = torch.arange(16.).reshape(4, 4)
    shape = tuple(want[idx].shape)
    assert tuple(got[idx].shape) == shape
    n = int(np.prod(shape))
    got[idx] = ptcore.arange(float(n)).reshape(shape) + 100
    want[idx] = torch.arange(float(n)).reshape(shape) + 100
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # a scalar value too
    got[idx] = 7.0
    want[idx] = 7.0
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_setitem_several_bools_refuses_a_mismatched_value():
    x, t = ptcore.zeros(4, 4), torch.zeros(4, 4)
    with pytest.raises(RuntimeError):
        t[True, True] = torch.ones(3, 4, 4)
    with pytest.raises(RuntimeError):
        x[True, True] = ptcore.ones(3, 4, 4)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_pow_zero_in_place_and_out(dtype):
    vals = [0j, 1 + 1j, 0j, -2.5 + 0j]
    for L in (torch, ptcore):
        a = L.tensor(vals, dtype=getattr(L, dtype))
        r1 = a.clone().pow_(0)
        o = L.empty(0, dtype=getattr(L, dtype))
        r2 = L.pow(a, 0, out=o)
        b = a.clone()
        b **= 0
        if L is torch:
            want = [r.numpy() for r in (r1, r2, b)]
        else:
            got = [r.numpy() for r in (r1, r2, b)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)          # ones, also at 0 (the kernel's 0 ** 0 is nan)
    assert tuple(o.shape) == (4,)
