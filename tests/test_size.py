"""``ptcore.Size`` against ``torch.Size``: a tuple subclass whose slices,
sums and products stay Sizes, with torch's errors, repr, pickling and
equality with plain tuples."""
import copy
import pickle

import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _same(p, t):
    assert type(p).__name__ == type(t).__name__, (type(p), type(t))
    assert tuple(p) == tuple(t) if isinstance(t, tuple) else p == t


@needs_torch
@pytest.mark.parametrize("op", [
    lambda s: s[0], lambda s: s[-1], lambda s: s[1:], lambda s: s[::-1], lambda s: s[5:],
    lambda s: s + (7,), lambda s: (7,) + s, lambda s: s * 2, lambda s: 2 * s, lambda s: s.numel(),
    lambda s: len(s), lambda s: list(s), lambda s: s == (2, 3, 4), lambda s: s != (2, 3),
    lambda s: hash(s) == hash((2, 3, 4)), lambda s: s.index(3), lambda s: s.count(2),
    lambda s: 3 in s, lambda s: tuple(s), lambda s: s[:0].numel(),
    lambda s: pickle.loads(pickle.dumps(s)), lambda s: copy.deepcopy(s),
    lambda s: repr(s).split(".", 1)[1], lambda s: str(s).split(".", 1)[1],
])
def test_size_ops_match_torch(op):
    _same(op(ptcore.zeros(2, 3, 4).shape), op(torch.zeros(2, 3, 4).shape))


@needs_torch
@pytest.mark.parametrize("bad", [lambda s: s[3], lambda s: s["a"], lambda s: s[1.0],
                                 lambda s: s + [1], lambda s: ptcore.Size([1.5]) if isinstance(s, ptcore.Size) else torch.Size([1.5])])
def test_size_errors_match_torch(bad):
    with pytest.raises(Exception) as et:
        bad(torch.zeros(2, 3, 4).shape)
    with pytest.raises(type(et.value)):
        bad(ptcore.zeros(2, 3, 4).shape)


def test_size_of_views_and_methods():
    x = ptcore.zeros(5, 6)
    assert isinstance(x.shape, ptcore.Size) and isinstance(x.size(), ptcore.Size)
    assert x.t().shape == (6, 5) and x[1:].shape[0] == 4
    assert isinstance(x.shape[1:], ptcore.Size)
    assert ptcore.zeros(()).shape == () and isinstance(ptcore.zeros(()).shape, ptcore.Size)
    assert ptcore.zeros(x.shape[::-1]).shape == (6, 5)
