"""fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine against PyTorch:
values (torch's rounding at ties), the straight-through gradient, and bad input."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _ties(scale, n=2000, seed=1):
    rs = np.random.RandomState(seed)
    k = rs.randint(-200, 200, size=n) + 0.5
    x = (k * scale).astype(np.float32)
    return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf),
                           rs.randn(n).astype(np.float32) * 10])


@pytest.mark.parametrize("scale,zp,qmin,qmax", [(0.1, 0, -128, 127), (0.0173, -5, -128, 127),
                                                (0.21856, 3, 0, 255), (0.05, 7, 0, 15)])
def test_per_tensor_values_and_gradient(scale, zp, qmin, qmax):
    xt = torch.from_numpy(_ties(scale)).requires_grad_()
    xp = ptcore.tensor(xt.detach().numpy(), requires_grad=True)
    yt = torch.fake_quantize_per_tensor_affine(xt, scale, zp, qmin, qmax)
    yp = ptcore.fake_quantize_per_tensor_affine(xp, scale, zp, qmin, qmax)
    np.testing.assert_array_equal(yp.detach().numpy(), yt.detach().numpy())
    g = torch.randn(xt.shape)
    yt.backward(g)
    yp.backward(ptcore.tensor(g.numpy()))
    np.testing.assert_array_equal(xp.grad.numpy(), xt.grad.numpy())


def test_per_tensor_tensor_qparams_and_other_dtypes():
    x = torch.randn(50) * 4
    yt = torch.fake_quantize_per_tensor_affine(x, torch.tensor(0.1), torch.tensor(2), -10, 10)
    yp = ptcore.fake_quantize_per_tensor_affine(ptcore.tensor(x.numpy()), ptcore.tensor(0.1),
                                                ptcore.tensor(2), -10, 10)
    np.testing.assert_array_equal(yp.numpy(), yt.numpy())
    for dt in ("float64", "float16"):
        yt = torch.fake_quantize_per_tensor_affine(x.to(getattr(torch, dt)), 0.1, 0, -128, 127)
        yp = ptcore.fake_quantize_per_tensor_affine(
            ptcore.tensor(x.numpy()).to(getattr(ptcore, dt)), 0.1, 0, -128, 127)
        assert yp.dtype is getattr(ptcore, dt)
        np.testing.assert_array_equal(yp.numpy(), yt.numpy())


@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel_values_and_gradient(axis):
    xt = torch.from_numpy(_ties(0.1, n=300)[:1200].reshape(4, 300).copy()).requires_grad_()
    xp = ptcore.tensor(xt.detach().numpy(), requires_grad=True)
    n = xt.shape[axis]
    sc = torch.linspace(0.01, 0.3, n)
    zp = (torch.arange(n) % 7 - 3).to(torch.int32)
    yt = torch.fake_quantize_per_channel_affine(xt, sc, zp, axis, -20, 20)
    yp = ptcore.fake_quantize_per_channel_affine(xp, ptcore.tensor(sc.numpy()),
                                                 ptcore.tensor(zp.numpy()), axis, -20, 20)
    np.testing.assert_array_equal(yp.detach().numpy(), yt.detach().numpy())
    yt.sum().backward()
    yp.sum().backward()
    np.testing.assert_array_equal(xp.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("bad", [
    lambda lib: lib.fake_quantize_per_tensor_affine(lib.tensor([1, 2]), 0.1, 0, -128, 127),
    lambda lib: lib.fake_quantize_per_tensor_affine(lib.tensor([1.0]), 0.1, 0, 5, 3),
    lambda lib: lib.fake_quantize_per_tensor_affine(lib.tensor([1.0]), 0.1, 10, -3, 3),
    lambda lib: lib.fake_quantize_per_channel_affine(
        lib.ones(2, 3), lib.tensor([0.1, 0.2]), lib.tensor([0, 1]), 0, -10, 10),
    lambda lib: lib.fake_quantize_per_channel_affine(
        lib.ones(2, 3), lib.tensor([0.1, 0.2, 0.3]), lib.tensor([0, 1, 2], dtype=lib.int32),
        0, -10, 10),
    lambda lib: lib.fake_quantize_per_channel_affine(
        lib.ones(2, 3), lib.tensor([0.1, 0.2]), lib.tensor([0, 1], dtype=lib.int32), -2, -10,
        10),
    lambda lib: lib.fake_quantize_per_channel_affine(
        lib.ones(2, 3), lib.tensor([0.1, 0.2]), lib.tensor([0, 1], dtype=lib.int32), 2, -10,
        10),
    lambda lib: lib.fake_quantize_per_channel_affine(
        lib.ones(2, 3), lib.tensor([0.1, 0.2]), lib.tensor([0, 11], dtype=lib.int32), 0, -10,
        10),
])
def test_bad_input_raises_torchs_exception_type(bad):
    with pytest.raises(Exception) as et:
        bad(torch)
    with pytest.raises(type(et.value)):
        bad(ptcore)


@pytest.mark.parametrize("name", ["default_fake_quant", "default_weight_fake_quant",
                                  "default_per_channel_weight_fake_quant"])
def test_fake_quantize_module_matches_torch(name):
    import ptcore.ao.quantization as pq
    ft, fp = getattr(torch.ao.quantization, name)(), getattr(pq, name)()
    torch.manual_seed(0)
    for i in range(4):
        x = (torch.randn(4, 6) * (i + 1) + 0.3).requires_grad_()
        xp = ptcore.tensor(x.detach().numpy(), requires_grad=True)
        yt, yp = ft(x), fp(xp)
        g = torch.randn(4, 6)
        yt.backward(g)
        yp.backward(ptcore.tensor(g.numpy()))
        np.testing.assert_array_equal(yp.detach().numpy(), yt.detach().numpy())
        np.testing.assert_array_equal(xp.grad.numpy(), x.grad.numpy())
        np.testing.assert_array_equal(fp.scale.numpy(), ft.scale.numpy())
        np.testing.assert_array_equal(fp.zero_point.numpy(), ft.zero_point.numpy())
    assert repr(fp).replace("ptcore.", "torch.") == repr(ft)
    # frozen observer, then fake quantization off: the identity
    fp.apply(pq.disable_observer)
    ft.apply(torch.ao.quantization.disable_observer)
    x = torch.randn(4, 6) * 9
    np.testing.assert_array_equal(fp(ptcore.tensor(x.numpy())).numpy(), ft(x).numpy())
    fp.apply(pq.disable_fake_quant)
    assert fp(ptcore.tensor(x.numpy())).numpy().tolist() == x.numpy().tolist()
