"""LeakyReLU through the branch-free kernels of ptcore._ops.kernels._activation
against PyTorch: values (NaN, +-0, +-inf), gradients, float32/float64,
non-contiguous inputs (generic path), large tensors split over threads."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("slope", [0.2, 0.0, -0.5, 3.0])
def test_leaky_relu_values_and_grad_match_torch(dt, slope):
    x = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.5, 1e-30, -1e-30], dtype=dt)
    x = np.concatenate([x, np.random.default_rng(0).standard_normal(1000).astype(dt)])
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dt)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        y = lib.nn.functional.leaky_relu(xt, slope)
        y.backward(lib.from_numpy(g))
        res.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def test_leaky_relu_non_contiguous_and_large():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 2000)).astype("float32")
    for make in (lambda lib: lib.from_numpy(x.copy()), lambda lib: lib.from_numpy(x.copy()).t()):
        outs = []
        for lib in (ptcore, torch):
            xt = make(lib).requires_grad_()
            y = lib.nn.LeakyReLU(0.1)(xt)
            y.backward(lib.ones_like(y) * 0.5)
            outs.append((y.detach().numpy(), xt.grad.numpy()))
        for a, b in zip(*outs):
            np.testing.assert_array_equal(a, b)
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(2)
        y2 = ptcore.nn.functional.leaky_relu(ptcore.from_numpy(x), 0.1).numpy()
    finally:
        ptcore.set_num_threads(old)
    np.testing.assert_array_equal(y2, torch.nn.functional.leaky_relu(torch.from_numpy(x), 0.1))


def test_leaky_relu_kernel_rejects_bad_buffers():
    from ptcore._ops.kernels import _activation as K
    x = ptcore.zeros(4)
    with pytest.raises(ValueError, match="sizes"):
        K.leaky_relu_forward(x, ptcore.zeros(3), 0.1)
    with pytest.raises(TypeError, match="dtypes"):
        K.leaky_relu_backward(x, x.double(), x, 0.1)
    with pytest.raises(ValueError, match="contiguous"):
        K.leaky_relu_forward(ptcore.zeros(2, 2).t(), ptcore.zeros(2, 2), 0.1)


@pytest.mark.parametrize("slope", ["a", None, np.array(0.5), "tensor1d"])
@pytest.mark.parametrize("inplace", [False, True])
def test_slope_that_is_no_number_raises_torchs_type_error(slope, inplace):
    msgs = []
    for lib in (ptcore, torch):
        s = lib.tensor([0.1]) if isinstance(slope, str) and slope == "tensor1d" else slope
        with pytest.raises(TypeError) as ei:
            lib.nn.functional.leaky_relu(-lib.ones(3), s, inplace)
        msgs.append(str(ei.value).split(" (a ")[0])       # ptcore adds the tensor's dtype and shape
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("slope", [0.2, True, np.float32(0.5), "tensor0d"])
def test_number_slopes_match_torch(slope):
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    got = ptcore.nn.functional.leaky_relu(ptcore.from_numpy(x), ptcore.tensor(0.3) if slope == "tensor0d" else slope)
    want = torch.nn.functional.leaky_relu(torch.from_numpy(x), torch.tensor(0.3) if slope == "tensor0d" else slope)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
