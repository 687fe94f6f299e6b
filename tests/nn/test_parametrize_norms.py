"""nn.utils.parametrize, parametrizations (weight_norm, orthogonal, spectral_norm), the
hook-based weight_norm / spectral_norm and stateless.functional_call, against torch 2.13."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn
import ptcore.nn.utils.parametrize as P

torch = pytest.importorskip("torch")
TP = torch.nn.utils.parametrize

RNG = np.random.default_rng(0)
W = RNG.standard_normal((5, 4)).astype(np.float32)
X = RNG.standard_normal((3, 4)).astype(np.float32)


def _pair(tcls=None, pcls=None, w=W):
    t, p = (tcls or (lambda: torch.nn.Linear(4, 5)))(), (pcls or (lambda: pnn.Linear(4, 5)))()
    with torch.no_grad():
        t.weight.copy_(torch.tensor(w))
        t.bias.zero_()
    with ptcore.no_grad():
        p.weight.copy_(ptcore.tensor(w))
        p.bias.zero_()
    return t, p


def _close(p, t, tol=1e-5):
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


class PSym(pnn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class TSym(torch.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def test_register_parametrization_as_torch():
    sq = RNG.standard_normal((4, 4)).astype(np.float32)
    t, p = _pair(lambda: torch.nn.Linear(4, 4), lambda: pnn.Linear(4, 4), sq)
    TP.register_parametrization(t, "weight", TSym())
    P.register_parametrization(p, "weight", PSym())
    assert type(p).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(p, pnn.Linear) and P.is_parametrized(p) and P.is_parametrized(p, "weight")
    assert list(p.state_dict()) == list(t.state_dict())
    assert [n for n, _ in p.named_parameters()] == [n for n, _ in t.named_parameters()]
    _close(p.weight, t.weight)
    _close(p(ptcore.tensor(X)), t(torch.tensor(X)))
    p(ptcore.tensor(X)).sum().backward()
    t(torch.tensor(X)).sum().backward()
    _close(p.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    with P.cached():
        assert p.weight is p.weight
    assert p.weight is not p.weight
    P.remove_parametrizations(p, "weight")
    TP.remove_parametrizations(t, "weight")
    assert type(p) is pnn.Linear and not P.is_parametrized(p)
    _close(p.weight, t.weight)


def test_parametrization_right_inverse_and_assignment():
    class PPos(pnn.Module):
        def forward(self, X):
            return X.exp()

        def right_inverse(self, Y):
            return Y.log()

    m = pnn.Linear(2, 2)
    P.register_parametrization(m, "weight", PPos())
    target = ptcore.tensor([[1.0, 2.0], [3.0, 4.0]])
    m.weight = target
    _close(m.weight, torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    _close(m.parametrizations.weight.original, torch.tensor([[1.0, 2.0], [3.0, 4.0]]).log())
    with pytest.raises(ValueError):
        P.remove_parametrizations(pnn.Linear(2, 2), "weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(dim):
    t, p = _pair()
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    ptcore.nn.utils.parametrizations.weight_norm(p, dim=dim)
    assert list(p.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        _close(p.state_dict()[k], v)
    _close(p(ptcore.tensor(X)), t(torch.tensor(X)))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm(dim):
    t, p = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t, dim=dim)
    with pytest.warns(FutureWarning, match="deprecated"):
        pnn.utils.weight_norm(p, dim=dim)
    assert sorted(p.state_dict()) == sorted(t.state_dict())
    _close(p.weight_g, t.weight_g)
    _close(p(ptcore.tensor(X)), t(torch.tensor(X)))
    p(ptcore.tensor(X)).pow(2).sum().backward()
    t(torch.tensor(X)).pow(2).sum().backward()
    _close(p.weight_g.grad, t.weight_g.grad, 1e-4)
    _close(p.weight_v.grad, t.weight_v.grad, 1e-4)
    with pytest.raises(RuntimeError, match="two weight_norm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            pnn.utils.weight_norm(p, dim=dim)
    pnn.utils.remove_weight_norm(p)
    assert sorted(p.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError):
        pnn.utils.remove_weight_norm(p)


def test_weight_norm_conv_dims():
    w = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32)
    t = torch.nn.Conv2d(3, 4, 2)
    p = pnn.Conv2d(3, 4, 2)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(w))
    with ptcore.no_grad():
        p.weight.copy_(ptcore.tensor(w))
    torch.nn.utils.parametrizations.weight_norm(t, dim=2)
    ptcore.nn.utils.parametrizations.weight_norm(p, dim=2)
    _close(p.parametrizations.weight.original0, t.parametrizations.weight.original0)


def test_orthogonal():
    t, p = _pair()
    torch.nn.utils.parametrizations.orthogonal(t)
    ptcore.nn.utils.parametrizations.orthogonal(p)
    _close(p.weight, t.weight, 1e-5)
    q = p.weight.detach().numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    p(ptcore.tensor(X)).sum().backward()
    assert p.parametrizations.weight.original.grad is not None


def _copy_uv(p, t, prefix):
    with ptcore.no_grad():
        getattr(p, prefix + "u").copy_(ptcore.tensor(getattr(t, prefix + "u").numpy()))
        getattr(p, prefix + "v").copy_(ptcore.tensor(getattr(t, prefix + "v").numpy()))


def test_hook_spectral_norm_same_vectors():
    t, p = _pair()
    torch.nn.utils.spectral_norm(t, n_power_iterations=2)
    pnn.utils.spectral_norm(p, n_power_iterations=2)
    assert sorted(p.state_dict()) == sorted(t.state_dict())
    _copy_uv(p, t, "weight_")
    for _ in range(3):
        _close(p(ptcore.tensor(X)), t(torch.tensor(X)), 1e-4)
    _close(p.weight_u, t.weight_u, 1e-4)
    p.eval()
    t.eval()
    _close(p(ptcore.tensor(X)), t(torch.tensor(X)), 1e-4)
    pnn.utils.remove_spectral_norm(p)
    assert sorted(p.state_dict()) == ["bias", "weight"]


def test_parametrizations_spectral_norm_same_vectors():
    t, p = _pair()
    torch.nn.utils.parametrizations.spectral_norm(t)
    ptcore.nn.utils.parametrizations.spectral_norm(p)
    assert list(p.state_dict()) == list(t.state_dict())
    _copy_uv(p.parametrizations.weight[0], t.parametrizations.weight[0], "_")
    _close(p.weight, t.weight, 1e-4)
    for _ in range(20):
        p(ptcore.tensor(X))
    assert abs(np.linalg.svd(p.weight.detach().numpy(), compute_uv=False)[0] - 1) < 1e-3


def test_stateless_functional_call():
    t, p = _pair()
    w2 = RNG.standard_normal((5, 4)).astype(np.float32)
    with pytest.warns(FutureWarning):
        ty = torch.nn.utils.stateless.functional_call(t, {"weight": torch.tensor(w2)},
                                                      (torch.tensor(X),))
    with pytest.warns(FutureWarning, match="functional_call"):
        py = pnn.utils.stateless.functional_call(p, {"weight": ptcore.tensor(w2)},
                                                 (ptcore.tensor(X),))
    _close(py, ty)
    _close(p.weight, t.weight)  # the module keeps its own weight
