"""F.gelu, F.silu and softmax/log_softmax along the last dim of a dense
floating CUDA tensor: the forward kernel launched from C
(``ptcore.cuda.ops.dense_fast.activation``, ``softmax_lastdim``) before the
device layer, recorded as the general path records (ptcore/cuda/ops/nn.py's
``_gelu_fast``/``_silu_fast``, ``_record.device_fast_softmax``): values
against the CPU, bitwise the general path's forward and gradients, double
backward, and the calls left to the general path (which raises the errors)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore._dispatch.device import register_fast_form
from ptcore.cuda.ops import dense_fast as _dense_fast
from ptcore.cuda.ops import nn as cuda_nn

CALLS = [("gelu", lambda x: F.gelu(x)), ("gelu none", lambda x: F.gelu(x, approximate="none")),
         ("gelu tanh", lambda x: F.gelu(x, approximate="tanh")),
         ("silu", lambda x: F.silu(x)), ("silu inplace=False", lambda x: F.silu(x, inplace=False)),
         ("silu positional False", lambda x: F.silu(x, False)),
         ("nn.GELU", lambda x: ptcore.nn.GELU()(x)), ("nn.GELU tanh", lambda x: ptcore.nn.GELU("tanh")(x)),
         ("nn.SiLU", lambda x: ptcore.nn.SiLU()(x))]


class _GeneralPath:
    """Within: the fast forms removed (the device layer's kernels run)."""

    def __enter__(self):
        register_fast_form("gelu", "cuda", None, ("nn.functional",))
        register_fast_form("silu", "cuda", None, ("nn.functional",))

    def __exit__(self, *exc):
        cuda_nn.install_fast_forms()


def _input(dtype, shape=(7, 33)):
    rng = np.random.default_rng(3)
    x = ptcore.from_numpy(rng.standard_normal(shape) * 3).to(dtype)
    return x, x.cuda()


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name,call", CALLS)
def test_forward_values_from_c(counted, name, call, dtype):
    x, dx = _input(dtype)
    got = call(dx)
    assert counted == [] and got.dtype is dtype and got.shape == x.shape and got.is_contiguous()
    tol = {ptcore.float16: 2e-3, ptcore.bfloat16: 2e-2}.get(dtype, 1e-6)
    np.testing.assert_allclose(got.cpu().double().numpy(), call(x).double().numpy(), rtol=tol, atol=tol)
    with _GeneralPath():
        want = call(dx)
    np.testing.assert_array_equal(got.cpu().double().numpy(), want.cpu().double().numpy())


@pytest.mark.parametrize("name,call", CALLS)
def test_gradients_equal_the_general_path(name, call):
    x, _ = _input(ptcore.float64)
    dx = x.cuda().requires_grad_()
    y = call(dx)
    assert y.grad_fn.name() == ("SiluBackward0" if "silu" in name.lower() else "GeluBackward0")
    g = ptcore.linspace(-2, 2, x.numel(), dtype=ptcore.float64).reshape(x.shape).cuda()
    (gx,) = ptcore.autograd.grad(y, dx, g)
    with _GeneralPath():
        (want,) = ptcore.autograd.grad(call(dx), dx, g)
    np.testing.assert_array_equal(gx.cpu().numpy(), want.cpu().numpy())
    xc = x.clone().requires_grad_()
    (gc,) = ptcore.autograd.grad(call(xc), xc, g.cpu())
    np.testing.assert_allclose(gx.cpu().numpy(), gc.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [lambda x: F.gelu(x), lambda x: F.gelu(x, approximate="tanh"),
                                  lambda x: F.silu(x)])
def test_double_backward_through_the_fast_form(call):
    x, _ = _input(ptcore.float64, (4, 5))
    dx = x.cuda().requires_grad_()
    xc = x.clone().requires_grad_()
    got = ptcore.autograd.grad(ptcore.autograd.grad(call(dx).sum(), dx, create_graph=True)[0].sum(), dx)[0]
    want = ptcore.autograd.grad(ptcore.autograd.grad(call(xc).sum(), xc, create_graph=True)[0].sum(), xc)[0]
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_no_grad_and_detached_inputs_record_nothing():
    _, dx = _input(ptcore.float32)
    dx.requires_grad_()
    with ptcore.no_grad():
        assert F.gelu(dx).grad_fn is None and F.silu(dx).grad_fn is None
    assert F.gelu(dx.detach()).grad_fn is None


def test_other_calls_take_the_general_path(counted):
    x = ptcore.arange(-6., 6., device="cuda").reshape(3, 4)
    for call in (lambda: F.gelu(x.t()), lambda: F.gelu(x[:, ::2]), lambda: F.silu(x.t()),
                 lambda: F.silu(x.clone(), inplace=True)):
        del counted[:]
        got = call()
        assert counted and got.device.type == "cuda"
    del counted[:]
    np.testing.assert_allclose(F.gelu(x.t()).cpu().numpy(), F.gelu(x.cpu().t()).numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(x, approximate="sigmoid")
    with pytest.raises((RuntimeError, NotImplementedError)):
        F.gelu(ptcore.arange(6, device="cuda"))
    with pytest.raises(TypeError):
        F.gelu(x, approximate="none", bogus=1)
    with pytest.raises(TypeError):
        F.gelu(x, "tanh")                      # keyword-only, as torch's
    y = x.clone()
    assert F.silu(y, inplace=True) is y
    np.testing.assert_allclose(y.cpu().numpy(), F.silu(x.cpu()).numpy(), rtol=1e-6, atol=1e-6)


SOFTMAX_CALLS = [("ptcore.softmax", lambda x, d: ptcore.softmax(x, d)),
                 ("ptcore.log_softmax", lambda x, d: ptcore.log_softmax(x, d)),
                 ("Tensor.softmax", lambda x, d: x.softmax(d)),
                 ("Tensor.log_softmax dim=", lambda x, d: x.log_softmax(dim=d)),
                 ("F.softmax", lambda x, d: F.softmax(x, dim=d)),
                 ("F.log_softmax", lambda x, d: F.log_softmax(x, d)),
                 ("nn.Softmax", lambda x, d: ptcore.nn.Softmax(d)(x))]


class _SoftmaxGeneralPath:
    def __enter__(self):
        for op in ("softmax", "log_softmax"):
            register_fast_form(op, "cuda", None, ("ptcore", "Tensor", "nn.functional"))

    def __exit__(self, *exc):
        _dense_fast.uninstall()
        _dense_fast.install()


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("name,call", SOFTMAX_CALLS)
def test_softmax_lastdim_from_c(counted, name, call, dtype):
    for shape in ((9,), (5, 33), (2, 3, 130), (4, 1)):
        x, dx = _input(dtype, shape)
        for d in (-1, len(shape) - 1):
            del counted[:]
            got = call(dx, d)
            assert counted == [] and got.dtype is dtype and got.shape == x.shape, (shape, d)
            tol = {ptcore.float16: 2e-3, ptcore.bfloat16: 2e-2}.get(dtype, 1e-6)
            np.testing.assert_allclose(got.cpu().double().numpy(), call(x, d).double().numpy(),
                                       rtol=tol, atol=tol)
            with _SoftmaxGeneralPath():
                want = call(dx, d)
            np.testing.assert_array_equal(got.cpu().double().numpy(), want.cpu().double().numpy())


@pytest.mark.parametrize("name,call", SOFTMAX_CALLS)
def test_softmax_gradients_equal_the_general_path(name, call):
    x, _ = _input(ptcore.float64, (6, 17))
    dx = x.cuda().requires_grad_()
    y = call(dx, -1)
    assert y.grad_fn.name() == ("LogSoftmaxBackward0" if "log" in name else "SoftmaxBackward0")
    g = ptcore.linspace(-2, 2, x.numel(), dtype=ptcore.float64).reshape(x.shape).cuda()
    (gx,) = ptcore.autograd.grad(y, dx, g)
    with _SoftmaxGeneralPath():
        (want,) = ptcore.autograd.grad(call(dx, -1), dx, g)
    np.testing.assert_array_equal(gx.cpu().numpy(), want.cpu().numpy())
    xc = x.clone().requires_grad_()
    (gc,) = ptcore.autograd.grad(call(xc, -1), xc, g.cpu())
    np.testing.assert_allclose(gx.cpu().numpy(), gc.numpy(), rtol=1e-10, atol=1e-12)


def test_softmax_other_calls_take_the_general_path(counted):
    x = ptcore.arange(-6., 6., device="cuda").reshape(3, 4)
    for call in (lambda: ptcore.softmax(x, 0), lambda: ptcore.softmax(x.t(), -1),
                 lambda: ptcore.softmax(x, -1, dtype=ptcore.float64), lambda: ptcore.softmax(x[0, 0], 0),
                 lambda: ptcore.softmax(x[:0], -1), lambda: x.log_softmax(-2),
                 lambda: F.softmax(x, -1, 5)):
        del counted[:]
        got = call()
        assert counted and got.device.type == "cuda"
    np.testing.assert_allclose(ptcore.softmax(x, 0).cpu().numpy(), ptcore.softmax(x.cpu(), 0).numpy(),
                               rtol=1e-6)
    assert ptcore.softmax(x, -1, dtype=ptcore.float64).dtype is ptcore.float64
    with pytest.raises(IndexError):
        ptcore.softmax(x, 2)
    with pytest.raises((RuntimeError, NotImplementedError)):
        ptcore.softmax(ptcore.arange(6, device="cuda"), -1)
    with pytest.raises(TypeError):
        ptcore.softmax(x)
    with pytest.raises(TypeError):
        ptcore.softmax(x, -1, _stacklevel=5)      # F.softmax's keyword only
    del counted[:]
    F.softmax(x, dim=-1, _stacklevel=5)
    assert counted == []


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_layer_norm_rows_from_c(monkeypatch, dtype):
    """The layer norm loop's forward (statistics and result) runs its row
    kernel from C: bitwise the Python loop's outputs (the same kernel and
    arguments), with and without the affine parameters; a parameter of
    another dtype or device, or a strided input, is left to the loop."""
    calls = []
    orig = _dense_fast.layer_norm_rows

    def spy(*a):
        r = orig(*a)
        calls.append(r is not None)
        return r
    x, dx = _input(dtype, (5, 3, 40))
    w, b = (ptcore.linspace(-1, 1, 40).to(dtype).cuda(), ptcore.linspace(0, 2, 40).to(dtype).cuda())
    kernels = cuda_nn._LayerNormKernels
    for args in ((None, None), (w, None), (w, b)):
        monkeypatch.setattr(_dense_fast, "layer_norm_rows", spy)
        del calls[:]
        got = kernels.layer_norm_forward(dx, 40, *args, 1e-5)
        assert calls == [True]
        monkeypatch.setattr(_dense_fast, "layer_norm_rows", lambda *a: None)
        want = kernels.layer_norm_forward(dx, 40, *args, 1e-5)
        for g_, w_ in zip(got, want):
            assert g_.shape == w_.shape and g_.dtype is dtype
            np.testing.assert_array_equal(g_.cpu().double().numpy(), w_.cpu().double().numpy())
    monkeypatch.setattr(_dense_fast, "layer_norm_rows", spy)
    tol = {ptcore.float16: 5e-3, ptcore.bfloat16: 3e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(F.layer_norm(dx, (40,), w, b).cpu().double().numpy(),
                               F.layer_norm(x, (40,), w.cpu(), b.cpu()).double().numpy(), rtol=tol, atol=tol)
    for args in ((w.double() if dtype is not ptcore.float64 else w.float(), None), (w.cpu(), None),
                 (w[:20], None)):
        del calls[:]
        r = kernels.layer_norm_forward(dx, 40, *args, 1e-5)
        assert calls == [False]
        if args[0].device != dx.device:
            # the general loop declines it too (its kernel would read the host
            # pointer: an illegal address on a GPU, seen on an H200); the front-end raises
            assert r is None
            with pytest.raises(RuntimeError, match="same device"):
                F.layer_norm(dx, (40,), *args)
    del calls[:]
    assert kernels.layer_norm_forward(dx.transpose(0, 1), 40, None, None, 1e-5) is None
    assert calls == [False]
