"""Linear, Bilinear, Identity, Flatten/Unflatten, Dropout*, Embedding against PyTorch."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _p(a):
    return ptcore.from_numpy(np.ascontiguousarray(a))


def _copy_module(tm, pm):
    pm.load_state_dict({k: _p(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 5), (5,), (2, 3, 5), (2, 1, 3, 5), (0, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(dtype, shape, bias):
    tdt = torch.float32 if dtype == np.float32 else torch.float64
    tm = torch.nn.Linear(5, 4, bias=bias, dtype=tdt)
    pm = nn.Linear(5, 4, bias=bias, dtype=ptcore.float32 if dtype == np.float32 else ptcore.float64)
    _copy_module(tm, pm)
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    want = tm(torch.from_numpy(x)).detach().numpy()
    got = pm(_p(x)).detach().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **_tol(dtype))
    assert repr(pm) == repr(tm)
    assert list(pm.state_dict()) == list(tm.state_dict())


@needs_torch
def test_linear_functional_noncontiguous_and_errors():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((3, 6)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    want = TF.linear(torch.from_numpy(x).t(), torch.from_numpy(w), torch.from_numpy(b))
    got = F.linear(_p(x).t(), _p(w), _p(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x6 and 3x6\)"):
        F.linear(_p(x).t(), _p(w.T.copy()))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x4\)"):
        F.linear(ptcore.randn(2, 2, 3), ptcore.randn(4, 5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        F.linear(ptcore.randn(2, 3), ptcore.randn(4, 3, dtype=ptcore.float64))


def test_linear_init_distribution():
    ptcore.manual_seed(0)
    m = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)  # kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    w = m.weight.detach().numpy()
    assert w.min() >= -bound and w.max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.02 * bound
    b = m.bias.detach().numpy()
    assert b.min() >= -bound and b.max() <= bound
    assert m.weight.requires_grad and isinstance(m.weight, nn.Parameter)


@needs_torch
@pytest.mark.parametrize("shape", [(6,), (2, 6)])
def test_bilinear_matches_torch(shape):
    tm = torch.nn.Bilinear(3, 4, 5, dtype=torch.float64)
    pm = nn.Bilinear(3, 4, 5, dtype=ptcore.float64)
    _copy_module(tm, pm)
    rng = np.random.default_rng(2)
    x1 = rng.standard_normal(shape + (3,))
    x2 = rng.standard_normal(shape + (4,))
    want = tm(torch.from_numpy(x1), torch.from_numpy(x2)).detach().numpy()
    got = pm(_p(x1), _p(x2)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert repr(pm) == repr(tm)
    nb = nn.Bilinear(3, 4, 5, bias=False)
    assert nb.bias is None and repr(nb) == repr(torch.nn.Bilinear(3, 4, 5, bias=False))


def test_bilinear_errors():
    with pytest.raises(RuntimeError, match="input1 size does not match weight size"):
        F.bilinear(ptcore.randn(2, 2), ptcore.randn(2, 4), ptcore.randn(5, 3, 4))
    with pytest.raises(ValueError, match="in1_features must be > 0"):
        nn.Bilinear(0, 1, 1)


@needs_torch
def test_identity_flatten_unflatten():
    x = ptcore.randn(2, 3, 4, 5)
    assert nn.Identity(1, foo=2)(x) is x
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 2)(x).shape) == (24, 5)
    assert tuple(nn.Unflatten(1, (3, 1))(x).shape) == (2, 3, 1, 4, 5)
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())
    assert repr(nn.Unflatten(1, (2, 2))) == repr(torch.nn.Unflatten(1, (2, 2)))
    assert repr(nn.Identity()) == repr(torch.nn.Identity())
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints"):
        nn.Unflatten(1, (2, 2.0))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints"):
        nn.Unflatten(1, 4)


# -- dropout ------------------------------------------------------------------------


def test_dropout_statistics_and_scaling():
    ptcore.manual_seed(0)
    x = ptcore.ones(200, 500)
    out = F.dropout(x, 0.3, training=True)
    vals = out.numpy()
    kept = vals != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(vals[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, 0.3, training=False) is x
    assert float(F.dropout(x, 1.0).abs().sum()) == 0.0
    assert F.dropout(x, 0.0) is x
    y = x.clone()
    assert F.dropout(y, 0.5, inplace=True) is y
    assert abs((y.numpy() == 0).mean() - 0.5) < 0.01


def test_dropout_p_validation():
    for bad in (-0.1, 1.1):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got"):
            F.dropout(ptcore.ones(2), bad)
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            nn.Dropout(bad)
        with pytest.raises(ValueError, match="dropout probability"):
            F.alpha_dropout(ptcore.ones(2), bad, True)


def test_dropout_module_train_eval():
    m = nn.Dropout(0.5)
    x = ptcore.ones(1000)
    assert float((m(x) == 0).sum()) > 300
    m.eval()
    assert m(x) is x


@pytest.mark.parametrize("fn, shape", [(F.dropout1d, (8, 50, 30)), (F.dropout1d, (50, 30)),
                                       (F.dropout2d, (8, 50, 6, 5)), (F.dropout3d, (4, 50, 3, 2, 5)),
                                       (F.dropout3d, (50, 3, 2, 5))])
def test_feature_dropout_zeroes_whole_channels(fn, shape):
    ptcore.manual_seed(1)
    x = ptcore.ones(*shape)
    out = fn(x, 0.4, training=True).numpy()
    batched = out if out.ndim == len(shape) and (fn is F.dropout1d and len(shape) == 3 or
                                                 fn is F.dropout2d or
                                                 fn is F.dropout3d and len(shape) == 5) else out[None]
    per_channel = batched.reshape(batched.shape[0], batched.shape[1], -1)
    # every channel is all-zero or all-scaled
    assert np.all((per_channel == 0).all(-1) | np.isclose(per_channel, 1 / 0.6).all(-1))
    frac = (per_channel[..., 0] == 0).mean()
    assert 0.25 < frac < 0.55


def test_feature_dropout_dim_checks():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(ptcore.ones(1, 2, 3, 4))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input"):
        F.dropout2d(ptcore.ones(2, 3))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(ptcore.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input"):
        F.dropout3d(ptcore.ones(2, 3, 4))


def test_alpha_dropout_keeps_mean_and_std():
    ptcore.manual_seed(2)
    x = ptcore.randn(400, 500)
    out = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.02
    assert abs(out.std() - 1.0) < 0.02
    assert F.alpha_dropout(x, 0.2, training=False) is x
    fa = F.feature_alpha_dropout(ptcore.randn(64, 32, 50), 0.3, training=True).numpy()
    assert abs(fa.mean()) < 0.05 and abs(fa.std() - 1.0) < 0.05
    m = nn.AlphaDropout(0.2)
    assert abs(m(x).numpy().std() - 1.0) < 0.02


@needs_torch
def test_dropout_reprs():
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        assert repr(getattr(nn, name)(0.25, inplace=True)) == repr(getattr(torch.nn, name)(0.25, inplace=True))
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())


# -- embedding ----------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 0}, {"padding_idx": -1},
                                    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0},
                                    {"scale_grad_by_freq": True}])
def test_embedding_matches_torch(kwargs):
    tm = torch.nn.Embedding(10, 4, **kwargs)
    pm = nn.Embedding(10, 4, **kwargs)
    assert repr(pm) == repr(tm)
    _copy_module(tm, pm)
    idx = np.array([[1, 2, 4, 5], [4, 3, 2, 9], [0, 0, 9, 1]])
    want = tm(torch.from_numpy(idx)).detach().numpy()
    got = pm(ptcore.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # max_norm renormalises the weight in place, as torch
    np.testing.assert_allclose(pm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6,
                               atol=1e-7)


def test_embedding_padding_row_zero_and_errors():
    m = nn.Embedding(5, 3, padding_idx=2)
    assert float(m.weight[2].abs().sum()) == 0.0
    assert m.padding_idx == 2
    assert nn.Embedding(5, 3, padding_idx=-1).padding_idx == 4
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=5)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ptcore.tensor([0]), ptcore.randn(3, 2), padding_idx=-4)
    with pytest.raises(IndexError, match="index out of range in self"):
        m(ptcore.tensor([5]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        m(ptcore.tensor([1.0]))
    assert nn.Embedding(3, 2, sparse=True).sparse      # gradients: tests/sparse/test_sparse_embedding.py
    out = m(ptcore.tensor([1, 2], dtype=ptcore.int32))
    assert tuple(out.shape) == (2, 3)
    assert tuple(m(ptcore.tensor(3)).shape) == (3,)


def test_embedding_from_pretrained():
    w = ptcore.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad
    np.testing.assert_allclose(e(ptcore.tensor([1])).numpy(), [[4.0, 5.1, 6.3]], rtol=1e-6)
    e2 = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=0)
    assert e2.weight.requires_grad and e2.padding_idx == 0
    assert float(e2.weight[0, 0]) == 1.0  # pretrained padding row is not zeroed
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(ptcore.zeros(3))


def test_embedding_init_distribution():
    ptcore.manual_seed(3)
    w = nn.Embedding(500, 200).weight.detach().numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01
