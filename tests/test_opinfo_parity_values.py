"""Forward values, dtypes and exception types found different from torch by
torch's OpInfo database (tools/opinfo_sweep.py), compared here against torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pt(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def _same(got, want, rtol=1.3e-6, atol=1e-5):
    assert isinstance(got, ptcore.Tensor)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dt", ["bool", "int8", "float32"])
@pytest.mark.parametrize("shape,size", [((), ()), ((3,), ()), ((1,), ()), ((3,), (1,)),
                                        ((2, 3), (3,)), ((2, 3), (2, 3))])
def test_sum_to_size_dtype(dt, shape, size):
    # at::sum_to: an empty size is a full sum (bool/int -> int64), even of a 0-d tensor
    w = torch.ones(shape, dtype=getattr(torch, dt)).sum_to_size(size)
    g = ptcore.ones(shape, dtype=getattr(ptcore, dt)).sum_to_size(size)
    _same(g, w)


@pytest.mark.parametrize("dim", [None, 1])
def test_gradient_spacing_none(dim):
    x = torch.tensor([[1., 4., 9., 16.], [2., 3., 5., 8.]])
    want = torch.gradient(x, spacing=None, dim=dim)
    got = ptcore.gradient(_pt(x), spacing=None, dim=dim)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


@pytest.mark.parametrize("name", ["__rsub__", "__rpow__", "__rmod__", "__rdiv__",
                                  "__rtruediv__", "__rfloordiv__"])
@pytest.mark.parametrize("a,b", [([1.5, -2.0], [3.0, 0.5]), ([2, 3], [7, -7]),
                                 ([1 + 2j], [3 - 1j]), ([True], [False])])
def test_reflected_dunder_with_tensor(name, a, b):
    # torch's Tensor.__rsub__(other) etc. called by name with a tensor compute other op self
    ta, tb = torch.tensor(a), torch.tensor(b)
    pa, pb = ptcore.tensor(a), ptcore.tensor(b)
    try:
        want = getattr(ta, name)(tb)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(pa, name)(pb)
        return
    _same(getattr(pa, name)(pb), want)
