"""Smaller torch 2.13 names added for the public-API walk, compared with torch: nonzero_static,
as_strided_scatter, Tensor.volatile/reinforce/module_load, autograd's engine switches,
nn.grad, nn.factory_kwargs, nn.common_types, F.conv_tbc / assert_int_or_pair, and the module
paths ptcore.functional, ptcore.version, ptcore.windows, ptcore.storage."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")


def _t(a):
    return ptcore.tensor(np.asarray(a))


@pytest.mark.parametrize("data, size, fill", [
    ([[0, 1], [2, 0]], 4, -1), ([[0, 1], [2, 0]], 1, 7), ([0, 3, 4], 3, -1), ([0, 0], 2, 5),
    (5, 2, -1), ([[True, False, True]], 0, -1),
])
def test_nonzero_static(data, size, fill):
    t = torch.nonzero_static(torch.tensor(data), size=size, fill_value=fill)
    p = ptcore.nonzero_static(ptcore.tensor(data), size=size, fill_value=fill)
    assert tuple(p.shape) == tuple(t.shape) and p.dtype is ptcore.int64
    np.testing.assert_array_equal(p.numpy(), t.numpy())
    np.testing.assert_array_equal(ptcore.tensor(data).nonzero_static(size=size,
                                                                     fill_value=fill).numpy(),
                                  t.numpy())


def test_nonzero_static_bad_size():
    with pytest.raises(RuntimeError):
        torch.nonzero_static(torch.tensor([1]), size=-1)
    with pytest.raises(RuntimeError, match="non-negative"):
        ptcore.nonzero_static(ptcore.tensor([1]), size=-1)


@pytest.mark.parametrize("shape, size, stride, offset", [
    ((3, 3), (2,), (4,), 0), ((4, 5), (2, 2), (5, 1), 3), ((6,), (3,), (2,), None),
])
def test_as_strided_scatter_values(shape, size, stride, offset):
    rng = np.random.default_rng(0)
    a, s = rng.standard_normal(shape), rng.standard_normal(size)
    t = torch.as_strided_scatter(torch.tensor(a), torch.tensor(s), size, stride, offset)
    p = ptcore.as_strided_scatter(_t(a), _t(s), size, stride, offset)
    np.testing.assert_array_equal(p.numpy(), t.numpy())
    np.testing.assert_array_equal(_t(a).as_strided_scatter(_t(s), size, stride, offset).numpy(),
                                  t.numpy())


def test_as_strided_scatter_grad():
    # d/d src is torch's; d/d input is the incoming gradient with the window zeroed (torch
    # 2.13's AsStridedScatterBackward gives the input the window's gradient instead).
    a = ptcore.zeros(3, 3, requires_grad=True)
    s = ptcore.ones(2, requires_grad=True)
    w = ptcore.arange(9.).reshape(3, 3)
    (ptcore.as_strided_scatter(a * 1, s, (2,), (4,), 0) * w).sum().backward()
    ts = torch.ones(2, requires_grad=True)
    (torch.as_strided_scatter(torch.zeros(3, 3), ts, (2,), (4,), 0)
     * torch.arange(9.).reshape(3, 3)).sum().backward()
    np.testing.assert_array_equal(s.grad.numpy(), ts.grad.numpy())
    expect = np.arange(9.).reshape(3, 3)
    expect[0, 0] = expect[1, 1] = 0
    np.testing.assert_array_equal(a.grad.numpy(), expect)
    with pytest.raises(RuntimeError, match="size"):
        ptcore.as_strided_scatter(ptcore.zeros(3), ptcore.ones(3), (2,), (1,))


def test_volatile_and_reinforce():
    for m in (torch, ptcore):
        x = m.zeros(2)
        with pytest.warns(UserWarning, match="volatile was removed"):
            assert x.volatile is False
        with pytest.warns(UserWarning, match="no effect"):
            x.volatile = True
        with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
            x.reinforce(1.0)


def test_module_load():
    for m in (torch, ptcore):
        p = m.nn.Parameter(m.zeros(3))
        other = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            p.module_load(other)
        with m.no_grad():
            r = p.module_load(other)
        assert r is not p and not r.requires_grad and r.tolist() == [1.0] * 3
        assert p.tolist() == [1.0] * 3
        r2 = p.module_load(other * 2, assign=True)
        assert r2.tolist() == [2.0] * 3 and not r2.requires_grad


def test_autograd_engine_switches():
    for m in (torch, ptcore):
        A = m.autograd
        assert A.is_multithreading_enabled() is True
        with A.set_multithreading_enabled(False):
            assert A.is_multithreading_enabled() is False
        assert A.is_multithreading_enabled() is True
        A.set_multithreading_enabled(False)
        assert A.is_multithreading_enabled() is False
        A.set_multithreading_enabled(True)
        assert A.is_view_replay_enabled() is False
        assert A.variable.Variable is not None
    assert ptcore.autograd.SavedTensor is ptcore.autograd.graph.SavedTensor


@pytest.mark.parametrize("nd, xshape, wshape, kw", [
    (1, (2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
    (2, (2, 3, 7, 6), (4, 3, 3, 2), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    (3, (1, 2, 5, 4, 4), (3, 2, 2, 2, 2), {"padding": 1}),
])
def test_nn_grad_convolutions(nd, xshape, wshape, kw):
    rng = np.random.default_rng(nd)
    x, w = rng.standard_normal(xshape), rng.standard_normal(wshape)
    tconv = getattr(torch.nn.functional, f"conv{nd}d")
    out = tconv(torch.tensor(x), torch.tensor(w), **kw)
    go = rng.standard_normal(tuple(out.shape))
    ti = getattr(torch.nn.grad, f"conv{nd}d_input")(xshape, torch.tensor(w), torch.tensor(go), **kw)
    tw = getattr(torch.nn.grad, f"conv{nd}d_weight")(torch.tensor(x), wshape, torch.tensor(go), **kw)
    pi = getattr(pnn.grad, f"conv{nd}d_input")(xshape, _t(w), _t(go), **kw)
    pw = getattr(F.grad, f"conv{nd}d_weight")(_t(x), wshape, _t(go), **kw)
    np.testing.assert_allclose(pi.numpy(), ti.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(pw.numpy(), tw.numpy(), rtol=1e-10, atol=1e-10)
    assert not pi.requires_grad
    with pytest.raises(RuntimeError, match="grad_output"):
        getattr(pnn.grad, f"conv{nd}d_input")(xshape, _t(w), _t(go)[:1, :1], **kw)


def test_factory_kwargs():
    for m in (torch.nn, pnn):
        assert m.factory_kwargs(None) == {}
        assert m.factory_kwargs({"device": "cpu", "dtype": 1}) == {"device": "cpu", "dtype": 1}
        assert m.factory_kwargs({"factory_kwargs": {"dtype": 2}, "device": "cpu"}) == {
            "dtype": 2, "device": "cpu"}
        with pytest.raises(TypeError, match="unexpected kwargs"):
            m.factory_kwargs({"bias": True})
        with pytest.raises(TypeError, match="specified twice"):
            m.factory_kwargs({"dtype": 1, "factory_kwargs": {"dtype": 2}})


def test_common_types():
    from ptcore.nn.common_types import _size_2_t, _ratio_any_t, _size_any_opt_t  # noqa: F401
    from torch.nn.common_types import _size_2_t as t2
    assert str(_size_2_t) == str(t2)


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc(pad):
    rng = np.random.default_rng(pad)
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    px, pw, pb = (_t(a).requires_grad_(True) for a in (x, w, b))
    ty = torch.conv_tbc(tx, tw, tb, pad)
    py = ptcore.conv_tbc(px, pw, pb, pad)
    np.testing.assert_allclose(py.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(F.conv_tbc(px, pw, pb, pad=pad).detach().numpy(),
                               torch.nn.functional.conv_tbc(tx, tw, tb, pad=pad).detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    py.backward(_t(g))
    for p, t in ((px, tx), (pw, tw), (pb, tb)):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError):
        torch.conv_tbc(tx, tw, tb[:2])
    with pytest.raises(RuntimeError, match="Bias size"):
        ptcore.conv_tbc(px, pw, pb[:2])


def test_assert_int_or_pair():
    for f in (torch.nn.functional.assert_int_or_pair, F.assert_int_or_pair):
        assert f(2, "k", "bad {}") is None
        assert f((1, 2), "k", "bad {}") is None
        with pytest.raises(AssertionError, match="bad k"):
            f((1, 2, 3), "k", "bad {}")


def test_module_paths():
    import ptcore.functional
    import ptcore.version
    for name in torch.functional.__all__:
        if hasattr(ptcore, name):
            assert getattr(ptcore.functional, name) is getattr(ptcore, name)
    assert ptcore.version.__version__ == ptcore.__version__ and ptcore.version.cuda is None
    assert ptcore.windows is ptcore.signal.windows
    assert ptcore.storage.TypedStorage is ptcore.TypedStorage
    assert ptcore.storage.UntypedStorage is ptcore.UntypedStorage
    assert ptcore.OutOfMemoryError is ptcore.cuda.OutOfMemoryError
    assert issubclass(ptcore.OutOfMemoryError, RuntimeError)
    assert ptcore.grid_sampler is F._grid_sample.grid_sampler
    x = ptcore.randn(1, 1, 4, 4)
    g = F.affine_grid(ptcore.tensor([[[1., 0., 0.], [0., 1., 0.]]]), (1, 1, 4, 4),
                      align_corners=False)
    np.testing.assert_allclose(ptcore.grid_sampler(x, g, 0, 0, False).numpy(),
                               F.grid_sample(x, g, align_corners=False).numpy())
    np.testing.assert_allclose(
        ptcore.affine_grid_generator(ptcore.tensor([[[1., 0., 0.], [0., 1., 0.]]]),
                                     (1, 1, 4, 4), False).numpy(), g.numpy())


def test_linalg_error_class_name_is_torchs():
    torch = pytest.importorskip("torch")
    import pickle
    assert ptcore.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    with pytest.raises(ptcore.linalg.LinAlgError) as info:
        ptcore.linalg.inv(ptcore.zeros(2, 2))
    assert type(info.value).__name__ == "_LinAlgError"
    assert type(pickle.loads(pickle.dumps(info.value))) is ptcore.linalg.LinAlgError
