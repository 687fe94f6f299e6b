"""Activation functions (functional and modules) against PyTorch."""
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

_X = np.concatenate([np.linspace(-25, 25, 101), [-3.0, 3.0, 0.0, -1e-3, 1e-3, 19.9, 20.1]])

# (module name, constructor args, functional name, functional kwargs)
_CASES = [
    ("ReLU", (), "relu", {}),
    ("ReLU6", (), "relu6", {}),
    ("LeakyReLU", (0.2,), "leaky_relu", {"negative_slope": 0.2}),
    ("ELU", (0.7,), "elu", {"alpha": 0.7}),
    ("SELU", (), "selu", {}),
    ("CELU", (1.3,), "celu", {"alpha": 1.3}),
    ("GELU", (), "gelu", {}),
    ("GELU", ("tanh",), "gelu", {"approximate": "tanh"}),
    ("SiLU", (), "silu", {}),
    ("Mish", (), "mish", {}),
    ("Sigmoid", (), "sigmoid", {}),
    ("Tanh", (), "tanh", {}),
    ("Hardtanh", (-2.0, 1.5), "hardtanh", {"min_val": -2.0, "max_val": 1.5}),
    ("Hardswish", (), "hardswish", {}),
    ("Hardsigmoid", (), "hardsigmoid", {}),
    ("Softplus", (), "softplus", {}),
    ("Softplus", (2.0, 5.0), "softplus", {"beta": 2.0, "threshold": 5.0}),
    ("Softsign", (), "softsign", {}),
    ("Tanhshrink", (), "tanhshrink", {}),
    ("Threshold", (0.5, -2.0), "threshold", {"threshold": 0.5, "value": -2.0}),
    ("LogSigmoid", (), "logsigmoid", {}),
    ("Hardshrink", (0.7,), "hardshrink", {"lambd": 0.7}),
    ("Softshrink", (0.7,), "softshrink", {"lambd": 0.7}),
]


def _ids(c):
    return f"{c[0]}{c[1]}"


@needs_torch
@pytest.mark.parametrize("case", _CASES, ids=[_ids(c) for c in _CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_match_torch(case, dtype):
    mod_name, args, fn_name, kwargs = case
    x = _X.astype(dtype).reshape(-1)
    want = getattr(TF, fn_name)(torch.from_numpy(x.copy()), **kwargs).numpy()
    got_f = getattr(F, fn_name)(ptcore.from_numpy(x.copy()), **kwargs).numpy()
    got_m = getattr(nn, mod_name)(*args)(ptcore.from_numpy(x.copy())).numpy()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_f, want, **tol)
    np.testing.assert_allclose(got_m, want, **tol)
    assert repr(getattr(nn, mod_name)(*args)) == repr(getattr(torch.nn, mod_name)(*args))


@needs_torch
@pytest.mark.parametrize("case", _CASES, ids=[_ids(c) for c in _CASES])
def test_composite_path_matches_kernel(case):
    # with requires_grad the functions compose differentiable ops; same values
    mod_name, args, fn_name, kwargs = case
    x = _X.astype("float64")
    want = getattr(TF, fn_name)(torch.from_numpy(x.copy()), **kwargs).numpy()
    xp = ptcore.from_numpy(x.copy()).requires_grad_()
    got = getattr(F, fn_name)(xp, **kwargs).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("fn_name, kwargs", [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.3}), ("elu", {}),
    ("selu", {}), ("celu", {}), ("silu", {}), ("mish", {}), ("hardtanh", {}),
    ("hardswish", {}), ("hardsigmoid", {}), ("threshold", {"threshold": 0.1, "value": 3.0}),
])
def test_inplace_variants(fn_name, kwargs):
    x = np.random.default_rng(0).standard_normal(20).astype(np.float32) * 4
    t = torch.from_numpy(x.copy())
    getattr(TF, fn_name)(t, inplace=True, **kwargs)
    p = ptcore.from_numpy(x.copy())
    out = getattr(F, fn_name)(p, inplace=True, **kwargs)
    assert out is p
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    # module form
    p2 = ptcore.from_numpy(x.copy())
    assert F.relu_(p2) is p2


@needs_torch
def test_inplace_reprs_match_torch():
    for name, args in [("ReLU", ()), ("ReLU6", ()), ("SiLU", ()), ("Mish", ()), ("SELU", ()),
                       ("ELU", (1.0,)), ("CELU", (0.5,)), ("LeakyReLU", (0.1,)),
                       ("Hardtanh", (-1.0, 1.0)), ("Threshold", (0.1, 20.0)),
                       ("RReLU", (0.1, 0.3))]:
        got = repr(getattr(nn, name)(*args, inplace=True))
        want = repr(getattr(torch.nn, name)(*args, inplace=True))
        assert got == want


@needs_torch
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(dim):
    x = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float32)
    for name, mod in [("softmax", "Softmax"), ("log_softmax", "LogSoftmax"), ("softmin", "Softmin")]:
        want = getattr(TF, name)(torch.from_numpy(x), dim=dim).numpy()
        got = getattr(F, name)(ptcore.from_numpy(x), dim=dim).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        got_m = getattr(nn, mod)(dim=dim)(ptcore.from_numpy(x)).numpy()
        np.testing.assert_allclose(got_m, want, rtol=1e-5, atol=1e-6)
        assert repr(getattr(nn, mod)(dim)) == repr(getattr(torch.nn, mod)(dim))
    want = TF.softmax(torch.from_numpy(x), dim=dim, dtype=torch.float64).numpy()
    got = F.softmax(ptcore.from_numpy(x), dim=dim, dtype=ptcore.float64)
    assert got.dtype is ptcore.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(ptcore.randn(2, 3))
    np.testing.assert_allclose(out.sum(1).numpy(), np.ones(2), rtol=1e-6)


@needs_torch
def test_softmax2d():
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 4)).astype(np.float32)
    want = torch.nn.Softmax2d()(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(nn.Softmax2d()(ptcore.from_numpy(x)).numpy(), want, rtol=1e-5)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(ptcore.randn(2, 3))


@needs_torch
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_glu(dim):
    x = np.random.default_rng(3).standard_normal((4, 6, 2)).astype(np.float32)
    want = TF.glu(torch.from_numpy(x), dim).numpy()
    np.testing.assert_allclose(F.glu(ptcore.from_numpy(x), dim).numpy(), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(nn.GLU(dim)(ptcore.from_numpy(x)).numpy(), want, rtol=1e-5, atol=1e-7)
    assert repr(nn.GLU(dim)) == repr(torch.nn.GLU(dim))


def test_glu_errors():
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(ptcore.randn(3, 5))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(ptcore.tensor(1.0))


@needs_torch
@pytest.mark.parametrize("shape, nparam", [((4, 3), 3), ((2, 3, 5), 3), ((2, 3, 4, 4), 1), ((5,), 1)])
def test_prelu(shape, nparam):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.uniform(0.0, 0.5, nparam).astype(np.float32)
    want = TF.prelu(torch.from_numpy(x), torch.from_numpy(w)).numpy()
    np.testing.assert_allclose(F.prelu(ptcore.from_numpy(x), ptcore.from_numpy(w)).numpy(), want,
                               rtol=1e-6)
    m = nn.PReLU(nparam, init=0.1)
    tm = torch.nn.PReLU(nparam, init=0.1)
    assert repr(m) == repr(tm)
    np.testing.assert_allclose(m(ptcore.from_numpy(x)).detach().numpy(),
                               tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
    assert list(m.state_dict()) == ["weight"]


def test_prelu_channel_mismatch():
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(ptcore.randn(2, 3), ptcore.ones(4))
    # 1-D input has one channel (as torch)
    with pytest.raises(RuntimeError, match="channel size = 1"):
        F.prelu(ptcore.randn(5), ptcore.ones(5))


def test_rrelu_eval_and_training():
    x = ptcore.linspace(-4, 4, 1000)
    out = F.rrelu(x, 0.1, 0.3, training=False)
    neg = x < 0
    np.testing.assert_allclose(out[neg].numpy(), (x[neg] * 0.2).numpy(), rtol=1e-6)
    ptcore.manual_seed(0)
    out_t = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = (out_t[neg] / x[neg]).numpy()
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6
    assert slopes.std() > 0.01
    np.testing.assert_array_equal(out_t[~neg].numpy(), x[~neg].numpy())
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), out.numpy())


def test_errors_and_dtypes():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(ptcore.randn(2), 2.0, 1.0)
    with pytest.raises(AssertionError, match="must be greater than min_val"):
        nn.Hardtanh(1.0, 1.0)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(ptcore.randn(2), approximate="fast")
    with pytest.raises(NotImplementedError, match="silu"):
        F.silu(ptcore.arange(3))
    with pytest.raises(TypeError, match="must be Tensor"):
        F.silu([1.0, 2.0])
    # relu keeps integer dtypes
    assert F.relu(ptcore.tensor([-1, 2])).tolist() == [0, 2]
    with pytest.warns(FutureWarning, match="min_value"):
        nn.Hardtanh(min_value=-2.0)


@needs_torch
def test_half_precision_activations():
    x = np.linspace(-5, 5, 41).astype(np.float32)
    for fn in ("gelu", "silu", "softplus", "elu", "hardswish"):
        want = getattr(TF, fn)(torch.from_numpy(x).to(torch.bfloat16)).float().numpy()
        got = getattr(F, fn)(ptcore.from_numpy(x).to(ptcore.bfloat16)).float().numpy()
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)


def test_silu_complex_forward_only_as_torch():
    torch = pytest.importorskip("torch")
    import numpy as np
    z = np.array([1 + 1j, -2 + 0.5j, 0.3 - 4j], dtype=np.complex64)
    for dt in (np.complex64, np.complex128):
        got = ptcore.nn.functional.silu(ptcore.tensor(z.astype(dt)))
        expect = torch.nn.functional.silu(torch.tensor(z.astype(dt)))
        assert got.dtype == getattr(ptcore, str(expect.dtype).split(".")[1])
        np.testing.assert_allclose(got.numpy(), expect.numpy(), rtol=1e-6)
    x = ptcore.tensor(z, requires_grad=True)
    with pytest.raises(RuntimeError, match="does not support automatic differentiation"):
        ptcore.nn.functional.silu(x)
    with ptcore.no_grad():
        ptcore.nn.functional.silu(x)


def test_hardtanh_unsigned_with_negative_limits_raises_as_torch():
    torch = pytest.importorskip("torch")
    for lims in ((-1, 1), (-1.0, 300), (0, 6), (0.5, 2.5)):
        def run(T):
            try:
                return T.nn.functional.hardtanh(T.tensor([0, 1, 2, 3], dtype=T.uint8),
                                                *lims).tolist()
            except RuntimeError as e:
                return str(e)
        assert run(ptcore) == run(torch)
