"""Advanced indexing's one-call fast path for tuples of full slices and int64 index tensors
(ptcore._ops.kernels._index.index_tensors_fast: ``x[i, j]``, ``x[:, i]``, a mask builder's
``mask[b, k]``) gives torch's values, shapes and errors, adjacent and not, broadcast,
negative, strided and empty indices, every dtype; anything else is left to the general path;
autograd records through it."""
import itertools

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _index as K

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int64", "int8", "bool", "complex64"]
S = slice(None)


def _pair(shape, dtype, seed=0):
    a = (np.random.default_rng(seed).standard_normal(shape) * 4)
    if dtype == "bool":
        a = a > 0
    elif dtype == "complex64":
        a = a + 1j * a[::-1] if a.ndim else a
    a = np.ascontiguousarray(a).astype(dtype)
    return ptcore.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _idx(values, shape=None):
    v = np.asarray(values, dtype=np.int64)
    if shape is not None:
        v = v.reshape(shape)
    return ptcore.from_numpy(v.copy()), torch.from_numpy(v.copy())


def _items(spec):
    """spec: a list of None (a full slice) or index arrays -> the two libraries' tuples."""
    p, t = [], []
    for s in spec:
        if s is None:
            p.append(S)
            t.append(S)
        else:
            a, b = _idx(s)
            p.append(a)
            t.append(b)
    return tuple(p), tuple(t)


CASES = [
    ((5, 6), [[0, 4, -1]]),
    ((5, 6), [[0, 4, -1], [1, -6, 5]]),
    ((5, 6), [None, [5, 0, -2, 3]]),
    ((3, 4, 5), [[[0], [2]], [[1, 3, -4]]]),              # broadcast (2,1) with (3,)
    ((3, 4, 5), [[2, 0], None, [4, -5]]),                 # not adjacent: index dims first
    ((3, 4, 5), [None, [3, 1], [0, 4]]),
    ((3, 4, 5), [None, [[3, 1], [0, 2]]]),
    ((2, 3, 4, 5), [None, [1, 2], None, [0, 4]]),         # not adjacent, slices between
    ((2, 3, 4, 5), [[1], [2], [3], [4]]),
    ((2, 8), [np.arange(2).reshape(2, 1, 1, 1), np.arange(8).reshape(1, 1, 1, 8)]),
    ((4, 6), [[], None]),                                  # an empty index
    ((4, 6), [np.zeros((2, 0), dtype=np.int64)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,spec", CASES)
def test_values_as_torch(dtype, shape, spec):
    x, tx = _pair(shape, dtype)
    p, t = _items(spec)
    assert K.index_tensors_fast(x, p) is not None
    got, want = x[p], tx[t]
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.is_contiguous()


@pytest.mark.parametrize("shape,spec", CASES[:9])
def test_strided_operands(shape, spec):
    # a transposed source and strided / expanded indices
    x, tx = _pair(shape[::-1], "float32", seed=3)
    x, tx = x.permute(*range(len(shape) - 1, -1, -1)), tx.permute(*range(len(shape) - 1, -1, -1))
    p, t = [], []
    for s in spec:
        if s is None:
            p.append(S)
            t.append(S)
            continue
        a = np.asarray(s, dtype=np.int64)
        big = np.repeat(a[..., None], 2, axis=-1)        # every other element: a strided view
        pp, tt = _idx(big)
        p.append(pp[..., 0])
        t.append(tt[..., 0])
    p, t = tuple(p), tuple(t)
    got, want = x[p], tx[t]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("spec", [
    [[0, 5]],                         # out of range
    [[-7]],
    [[0, 1], [0, 1, 2]],              # shapes that do not broadcast
    [None, [6]],
])
def test_errors_as_torch(spec):
    x, tx = _pair((5, 6), "float32")
    p, t = _items(spec)
    assert K.index_tensors_fast(x, p) is None       # left to the general path
    with pytest.raises(Exception) as te:
        tx[t]
    with pytest.raises(Exception) as pe:
        x[p]
    assert type(pe.value) is type(te.value)


def test_empty_dim_error_as_torch():
    x, tx = _pair((0, 3), "float32")
    p, t = _items([[0]])
    with pytest.raises(IndexError):
        tx[t]
    with pytest.raises(IndexError):
        x[p]


@pytest.mark.parametrize("items", [
    (slice(1, None), "i"), ("i", 0), ("i", None), (Ellipsis, "i"), ("f", ), ("b", ), ("i32", ),
    ("0d", ),
])
def test_other_items_left_to_the_general_path(items):
    x = ptcore.arange(30.0).reshape(5, 6)
    tx = torch.arange(30.0).reshape(5, 6)
    conv = {"i": (ptcore.tensor([1, 2]), torch.tensor([1, 2])),
            "f": (ptcore.tensor([1.0]), torch.tensor([1.0])),
            "b": (ptcore.tensor([True, False, True, False, True]),
                  torch.tensor([True, False, True, False, True])),
            "i32": (ptcore.tensor([1, 2], dtype=ptcore.int32), torch.tensor([1, 2], dtype=torch.int32)),
            "0d": (ptcore.tensor(3), torch.tensor(3))}
    p = tuple(conv[o][0] if isinstance(o, str) else o for o in items)
    t = tuple(conv[o][1] if isinstance(o, str) else o for o in items)
    assert K.index_tensors_fast(x, p) is None
    try:
        want = tx[t]
    except Exception as e:          # noqa: BLE001 -- the type is compared
        with pytest.raises(type(e)):
            x[p]
        return
    np.testing.assert_array_equal(x[p].numpy(), want.numpy())


def test_gradient_through_the_fast_path():
    x, tx = _pair((4, 5, 3), "float64", seed=5)
    x.requires_grad_()
    tx.requires_grad_()
    for spec in ([[0, 3, 0], None, [2, 1, 2]], [None, [[4], [0]], [1, 2]]):
        p, t = _items(spec)
        w = np.random.default_rng(1).standard_normal(tuple(tx[t].shape))
        (x[p] * ptcore.from_numpy(w)).sum().backward()
        (tx[t] * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert type(x[_items([[0, 1]])[0]].grad_fn).__name__ == "IndexBackward0"
