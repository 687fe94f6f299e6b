"""ptcore.tensor of nested Python lists (the list fast path, ptcore/_ops/kernels/_nested.pyx,
and the general path it hands everything else to) against torch.tensor."""
import math

import pytest

import ptcore

torch = pytest.importorskip("torch")

_CASES = [
    [[1.0, 2.0, 3.0]] * 10, [1.5], [[[0.1, -2.5], [3.25, 1e-7]]], [[1, 2], [3, 4]], [2 ** 63 - 1],
    [-2 ** 63], [2 ** 63], [True, False], [1, 2.5], [1.0, 2], [[[]]], [], [[1.0], [2.0, 3.0]],
    [[1.0, 2.0], 3.0], [[1.0, [2.0]]], [1e300, -1e-320, math.inf, -0.0, 1.0000000596046448],
    [(1.0, 2.0)], [[1.0, 2.0], (3.0, 4.0)],
]


def _result(lib, data, dtype):
    kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
    try:
        t = lib.tensor(data, **kw)
    except Exception as e:      # noqa: BLE001 - the type is compared
        return type(e).__name__
    return (str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(), t._version, t.tolist())


@pytest.mark.parametrize("dtype", [None, "float64", "float32", "int64", "float16"])
@pytest.mark.parametrize("i", range(len(_CASES)))
def test_tensor_of_lists_matches_torch(i, dtype):
    data = _CASES[i]
    assert _result(ptcore, data, dtype) == _result(torch, data, dtype)


def test_tensor_of_lists_follows_default_dtype():
    prev = ptcore.get_default_dtype()
    try:
        for dt in (ptcore.float64, ptcore.float16, ptcore.float32):
            ptcore.set_default_dtype(dt)
            assert ptcore.tensor([[1.0, 2.0]]).dtype is dt
            assert ptcore.tensor([[1, 2]]).dtype is ptcore.int64
    finally:
        ptcore.set_default_dtype(prev)


def test_tensor_of_lists_is_a_fresh_copy():
    data = [[1.0, 2.0], [3.0, 4.0]]
    t = ptcore.tensor(data, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    data[0][0] = 9.0
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_ragged_nest_with_a_huge_first_row_is_a_value_error_not_an_allocation():
    # the first row alone would size a 4 TB tensor: the shape is checked before
    # anything is allocated, and the error is torch's
    data = [[0.0] * 1_000_000] + [[]] * 1_000_000
    with pytest.raises(ValueError, match="expected sequence of length 1000000 at dim 1"):
        ptcore.tensor(data)
