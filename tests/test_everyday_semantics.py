"""Everyday tensor semantics as scripts and notebooks write them (indexing
with NumPy values, Python protocols, reprs users see), against PyTorch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _same(p, t):
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(p.shape) == tuple(t.shape)
    np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("index", [
    lambda: np.array([[True, False, True, False]] * 3),      # a 2-D mask, not a tuple of rows
    lambda: np.array([[0, 2], [1, 1]]),
    lambda: (np.array([[0], [2]]), np.array([1, 3])),        # broadcast index arrays
    lambda: (np.array([0, 2]), slice(None), np.array([1, 3])),
    lambda: (Ellipsis, np.array([0, 4])),
])
def test_numpy_array_indices(index):
    base = np.arange(60).reshape(3, 4, 5)
    p, t = ptcore.tensor(base), torch.tensor(base)
    _same(p[index()], t[index()])
    p[index()] = -1
    t[index()] = -1
    _same(p, t)


@pytest.mark.parametrize("items", [[torch.tensor(2), 3], [True, 2], [torch.tensor([4])], [-1]])
def test_size_from_tensors_and_bools(items):
    conv = [ptcore.tensor(x.tolist()) if isinstance(x, torch.Tensor) else x for x in items]
    p, t = ptcore.Size(conv), torch.Size(items)
    assert tuple(p) == tuple(t)
    assert [type(v) for v in p] == [type(v) for v in t]


@pytest.mark.parametrize("item", [2.5, "a", None, 1j])
def test_size_rejects_non_ints(item):
    with pytest.raises(TypeError) as t_err:
        torch.Size([1, item])
    with pytest.raises(TypeError) as p_err:
        ptcore.Size([1, item])
    assert "(item 1 is" in str(t_err.value) and "(item 1 is" in str(p_err.value)
    with pytest.raises(TypeError):
        ptcore.Size([ptcore.tensor(2.0)])


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"])
def test_iinfo_repr(name):
    assert repr(ptcore.iinfo(getattr(ptcore, name))) == repr(torch.iinfo(getattr(torch, name)))
