"""nn.init: formulas, statistics and errors (the random streams differ from torch's)."""
import math

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
from ptcore.nn import init

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@needs_torch
@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 1),
                                  ("selu",)])
def test_calculate_gain_matches_torch(args):
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


@needs_torch
@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 3), (2, 3, 1, 2, 2)])
def test_fan_in_fan_out_matches_torch(shape):
    assert init._calculate_fan_in_and_fan_out(ptcore.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fan_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ptcore.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(ptcore.empty(3, 3), mode="fan_avg")


def _stats(t):
    a = t.detach().numpy().astype(np.float64)
    return a.min(), a.max(), a.mean(), a.std()


def test_uniform_normal_constant():
    ptcore.manual_seed(0)
    t = ptcore.empty(300, 300)
    lo, hi, mean, std = _stats(init.uniform_(t, -2.0, 3.0))
    assert lo >= -2 and hi <= 3 and abs(mean - 0.5) < 0.03 and abs(std - 5 / math.sqrt(12)) < 0.02
    _, _, mean, std = _stats(init.normal_(t, 1.0, 0.5))
    assert abs(mean - 1.0) < 0.01 and abs(std - 0.5) < 0.01
    assert np.all(init.constant_(t, 0.25).numpy() == 0.25)
    assert np.all(init.ones_(t).numpy() == 1)
    assert np.all(init.zeros_(t).numpy() == 0)


def test_trunc_normal():
    ptcore.manual_seed(1)
    t = ptcore.empty(400, 400)
    lo, hi, mean, std = _stats(init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=3.0))
    assert lo >= -1.0 and hi <= 3.0
    # truncated-normal moments
    from math import erf, exp, pi, sqrt
    alpha, beta = (-1.0 - 0.5) / 2.0, (3.0 - 0.5) / 2.0
    phi = lambda z: exp(-z * z / 2) / sqrt(2 * pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + erf(z / sqrt(2)))  # noqa: E731
    Z = cdf(beta) - cdf(alpha)
    m = 0.5 + 2.0 * (phi(alpha) - phi(beta)) / Z
    v = 4.0 * (1 + (alpha * phi(alpha) - beta * phi(beta)) / Z - ((phi(alpha) - phi(beta)) / Z) ** 2)
    assert abs(mean - m) < 0.02 and abs(std - math.sqrt(v)) < 0.02
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        init.trunc_normal_(ptcore.empty(3), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(200, 300), (64, 32, 3, 3)])
def test_xavier_and_kaiming(shape):
    ptcore.manual_seed(2)
    t = ptcore.empty(*shape)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
    bound = math.sqrt(6.0 / (fan_in + fan_out)) * 2.0
    lo, hi, _, std = _stats(init.xavier_uniform_(t, gain=2.0))
    assert lo >= -bound and hi <= bound and abs(std - bound / math.sqrt(3)) < 0.03 * bound
    _, _, _, std = _stats(init.xavier_normal_(t))
    assert abs(std - math.sqrt(2.0 / (fan_in + fan_out))) < 0.03 * std
    gain = math.sqrt(2.0 / (1 + 0.1 ** 2))
    b = gain * math.sqrt(3.0 / fan_in)
    lo, hi, _, std = _stats(init.kaiming_uniform_(t, a=0.1))
    assert lo >= -b and hi <= b and abs(std - b / math.sqrt(3)) < 0.03 * b
    _, _, _, std = _stats(init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"))
    assert abs(std - math.sqrt(2.0) / math.sqrt(fan_out)) < 0.03 * std


def test_kaiming_zero_element_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ptcore.empty(0, 3))


def test_eye_and_dirac():
    t = ptcore.empty(3, 5)
    np.testing.assert_array_equal(init.eye_(t).numpy(), np.eye(3, 5))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ptcore.empty(2, 2, 2))
    w = init.dirac_(ptcore.empty(4, 2, 3, 3), groups=2)
    # channel d of each group picks input channel d at the kernel centre
    wn = w.numpy()
    assert wn.sum() == 4 and wn[0, 0, 1, 1] == 1 and wn[1, 1, 1, 1] == 1 and wn[2, 0, 1, 1] == 1
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(ptcore.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ptcore.empty(3, 2, 3), groups=2)


@needs_torch
def test_dirac_matches_torch():
    t = torch.nn.init.dirac_(torch.empty(6, 3, 3, 3, 3), groups=3)
    p = init.dirac_(ptcore.empty(6, 3, 3, 3, 3), groups=3)
    np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3)])
def test_orthogonal(shape):
    ptcore.manual_seed(3)
    t = init.orthogonal_(ptcore.empty(*shape), gain=1.5)
    a = t.numpy().reshape(shape[0], -1).astype(np.float64)
    if a.shape[0] <= a.shape[1]:
        np.testing.assert_allclose(a @ a.T, 2.25 * np.eye(a.shape[0]), atol=1e-5)
    else:
        np.testing.assert_allclose(a.T @ a, 2.25 * np.eye(a.shape[1]), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(ptcore.empty(3))


def test_sparse():
    ptcore.manual_seed(4)
    t = init.sparse_(ptcore.empty(10, 50), sparsity=0.3, std=0.5)
    zeros_per_col = (t.numpy() == 0).sum(0)
    assert np.all(zeros_per_col == 3)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(ptcore.empty(2, 2, 2), 0.1)


def test_init_runs_under_no_grad_and_keeps_parameter():
    p = nn.Parameter(ptcore.empty(3, 3))
    out = init.normal_(p)
    assert out is p and p.requires_grad and p.grad_fn is None
    init.xavier_uniform_(p)
    assert p.grad_fn is None


def test_generator_argument_reproducible():
    g1 = ptcore.Generator().manual_seed(7)
    g2 = ptcore.Generator().manual_seed(7)
    a = init.kaiming_normal_(ptcore.empty(4, 4), generator=g1)
    b = init.kaiming_normal_(ptcore.empty(4, 4), generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="`nn.init.normal` is now deprecated in favor of `nn.init.normal_`"):
        init.normal(ptcore.empty(2))
