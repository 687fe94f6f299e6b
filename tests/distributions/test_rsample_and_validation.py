"""Gradients of rsample (location-scale reparameterization and the implicit
reparameterization of Gamma/Beta/Dirichlet/Chi2/StudentT) against torch's
formulas, and argument/sample validation errors."""
import numpy as np
import pytest

import ptcore
import ptcore.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def P(x, grad=False):
    return ptcore.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def Tt(x, grad=False):
    return torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


W = np.array([[0.7, -1.3, 2.0], [1.1, 0.4, -0.6]])


def _weighted_grads(dist_p, params, x_shape=(2, 3)):
    ptcore.manual_seed(0)
    x = dist_p.rsample()
    assert tuple(x.shape) == x_shape
    (x * P(W[..., :x_shape[-1]] if len(x_shape) == 2 else W[0])).sum().backward()
    return x.detach().numpy(), [p.grad.numpy() for p in params]


def test_location_scale_rsample_gradients():
    loc, scale = np.array([[0.1, -1.0, 2.0], [0.0, 0.5, 1.0]]), np.array([[1.0, 0.3, 2.0], [0.7, 1.5, 0.2]])
    for name in ("Normal", "Laplace", "Cauchy", "Gumbel", "LogNormal"):
        lp, sp = P(loc, True), P(scale, True)
        x, (gl, gs) = _weighted_grads(getattr(D, name)(lp, sp), (lp, sp))
        # torch's gradient for the same draw: recover its standard noise from x
        lt, st = Tt(loc, True), Tt(scale, True)
        xt = torch.tensor(x)
        if name == "LogNormal":
            eps = (torch.log(xt) - lt.detach()) / st.detach()
            y = torch.exp(lt + st * eps)
        else:
            eps = (xt - lt.detach()) / st.detach()
            y = lt + st * eps
        (y * torch.tensor(W)).sum().backward()
        np.testing.assert_allclose(gl, lt.grad.numpy(), rtol=1e-10, err_msg=name)
        np.testing.assert_allclose(gs, st.grad.numpy(), rtol=1e-10, err_msg=name)


def test_gamma_rsample_gradient_matches_torch():
    conc = np.array([[0.05, 0.4, 1.0], [2.5, 10.0, 150.0]])
    rate = np.array([[1.0, 2.0, 0.5], [3.0, 1.0, 0.1]])
    cp, rp = P(conc, True), P(rate, True)
    x, (gc, gr) = _weighted_grads(D.Gamma(cp, rp), (cp, rp))
    assert (x > 0).all()
    # torch: x = standard_gamma(alpha) / rate, d standard_gamma / d alpha = _standard_gamma_grad
    z = torch.tensor(x * rate)
    dz = torch._standard_gamma_grad(torch.tensor(conc), z).numpy()
    np.testing.assert_allclose(gc, W * dz / rate, rtol=2e-4)
    np.testing.assert_allclose(gr, -W * x / rate, rtol=1e-10)


def test_chi2_and_student_t_rsample_are_differentiable():
    df = P([[1.5, 4.0, 9.0], [2.5, 3.0, 30.0]], True)
    x, (g,) = _weighted_grads(D.Chi2(df), (df,))
    dz = torch._standard_gamma_grad(Tt(df.detach().numpy()) / 2, torch.tensor(x / 2)).numpy()
    np.testing.assert_allclose(g, W * dz, rtol=2e-4)  # x = 2 * Gamma(df / 2)
    df2 = P([[3.0, 5.0, 9.0], [2.5, 3.0, 30.0]], True)
    loc = P(np.zeros((2, 3)), True)
    ptcore.manual_seed(0)
    s = D.StudentT(df2, loc, P(np.ones((2, 3)))).rsample()
    s.sum().backward()
    assert np.isfinite(df2.grad.numpy()).all() and (np.abs(df2.grad.numpy()) > 0).all()
    np.testing.assert_allclose(loc.grad.numpy(), 1.0)


def test_dirichlet_and_beta_rsample_gradients_match_torch():
    alpha = np.array([[0.3, 2.0, 3.5], [5.0, 0.8, 1.2]])
    ap = P(alpha, True)
    x, (g,) = _weighted_grads(D.Dirichlet(ap), (ap,))
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    xt, at = torch.tensor(x), torch.tensor(alpha)
    dg = torch._dirichlet_grad(xt, at, at.sum(-1, True).expand_as(at))
    go = torch.tensor(W)
    expected = (dg * (go - (xt * go).sum(-1, True))).numpy()
    # torch's _dirichlet_grad is a set of series/rational approximations (~1e-3)
    np.testing.assert_allclose(g, expected, rtol=5e-3, atol=1e-6)

    c1, c0 = P([0.6, 2.0, 7.0], True), P([1.5, 9.0, 8.0], True)
    ptcore.manual_seed(0)
    b = D.Beta(c1, c0).rsample()
    b.sum().backward()
    bt = torch.tensor(b.detach().numpy())
    xs = torch.stack([bt, 1 - bt], -1)
    a2 = torch.tensor(np.stack([[0.6, 2.0, 7.0], [1.5, 9.0, 8.0]], -1))
    dg = torch._dirichlet_grad(xs, a2, a2.sum(-1, True).expand_as(a2))
    go = torch.tensor([1.0, 0.0]).expand_as(a2)
    expected = dg * (go - (xs * go).sum(-1, True))
    np.testing.assert_allclose(c1.grad.numpy(), expected[..., 0].numpy(), rtol=5e-3)
    np.testing.assert_allclose(c0.grad.numpy(), expected[..., 1].numpy(), rtol=5e-3)


def test_implicit_gradients_are_unbiased():
    """E[d x / d alpha] equals d E[x] / d alpha (seeded Monte Carlo, 6 standard errors)."""
    n = 20000
    conc = P([0.3, 2.0], True)
    ptcore.manual_seed(1)
    x = D.Gamma(conc, P([1.0, 1.0])).rsample((n,))
    x.sum().backward()
    # d E[x] / d alpha = 1 for Gamma(alpha, 1); per-draw gradients have std < 3 here
    assert np.abs(conc.grad.numpy() / n - 1.0).max() < 6 * 3 / np.sqrt(n)
    alpha = np.array([0.7, 2.0, 3.5])
    ap = P(alpha, True)
    w = np.array([1.0, -2.0, 0.5])
    ptcore.manual_seed(2)
    (D.Dirichlet(ap).rsample((n,)) * P(w)).sum().backward()
    at = Tt(alpha, True)
    (at / at.sum() * torch.tensor(w)).sum().backward()
    assert np.abs(ap.grad.numpy() / n - at.grad.numpy()).max() < 0.01


def test_sample_has_no_graph_and_rsample_flags():
    loc = P([0.0, 1.0], True)
    d = D.Normal(loc, P([1.0, 2.0]))
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad
    for name in ("Bernoulli", "Categorical", "Poisson"):
        assert not getattr(D, name).has_rsample
    with pytest.raises(NotImplementedError):
        D.Poisson(P([1.0])).rsample()


# ---------------------------------------------------------------- validation

BAD_ARGS = [
    ("Normal", dict(loc=[0.0], scale=[-1.0])),
    ("Normal", dict(loc=[float("nan")], scale=[1.0])),
    ("Exponential", dict(rate=[0.0])),
    ("Gamma", dict(concentration=[-0.5], rate=[1.0])),
    ("Beta", dict(concentration1=[1.0], concentration0=[0.0])),
    ("Uniform", dict(low=[1.0], high=[0.5])),
    ("Bernoulli", dict(probs=[1.5])),
    ("Categorical", dict(probs=[[0.5, -0.1, 0.6]])),
    ("Poisson", dict(rate=[-1.0])),
    ("Dirichlet", dict(concentration=[[1.0, 0.0]])),
    ("StudentT", dict(df=[0.0])),
    ("VonMises", dict(loc=[0.0], concentration=[-1.0])),
    ("Geometric", dict(probs=[0.0])),
    ("MultivariateNormal", dict(loc=[0.0, 0.0], covariance_matrix=[[1.0, 2.0], [2.0, 1.0]])),
]


@pytest.mark.parametrize("case", BAD_ARGS, ids=[c[0] + "-" + "-".join(c[1]) for c in BAD_ARGS])
def test_invalid_arguments_raise_like_torch(case):
    name, kw = case
    with pytest.raises(ValueError):
        getattr(TD, name)(**{k: Tt(v) for k, v in kw.items()}, validate_args=True)
    # (Beta validates through its Dirichlet, as torch: the message names `concentration`)
    with pytest.raises(ValueError, match="concentration" if name == "Beta" else "|".join(kw)):
        getattr(D, name)(**{k: P(v) for k, v in kw.items()}, validate_args=True)
    if name == "MultivariateNormal":
        return  # the Cholesky factor in __init__ fails on an indefinite matrix, as in torch
    if name == "StudentT":
        # torch builds a Chi2(df) with the default validation: df <= 0 raises anyway
        with pytest.raises(ValueError):
            getattr(TD, name)(**{k: Tt(v) for k, v in kw.items()}, validate_args=False)
        with pytest.raises(ValueError, match="df"):
            getattr(D, name)(**{k: P(v) for k, v in kw.items()}, validate_args=False)
        return
    # validation off: constructed without complaint
    getattr(D, name)(**{k: P(v) for k, v in kw.items()}, validate_args=False)


BAD_VALUES = [
    (D.Exponential, dict(rate=[1.0]), [-1.0]),
    (D.Beta, dict(concentration1=[1.0], concentration0=[2.0]), [1.5]),
    (D.Bernoulli, dict(probs=[0.3]), [0.5]),
    (D.Poisson, dict(rate=[2.0]), [1.5]),
    (D.Categorical, dict(probs=[[0.2, 0.8]]), [2.0]),
    (D.Dirichlet, dict(concentration=[[1.0, 2.0]]), [[0.3, 0.3]]),
    (D.Uniform, dict(low=[0.0], high=[1.0]), [1.5]),
]


@pytest.mark.parametrize("case", BAD_VALUES, ids=[c[0].__name__ for c in BAD_VALUES])
def test_log_prob_outside_support_raises(case):
    cls, kw, value = case
    d = cls(**{k: P(v) for k, v in kw.items()}, validate_args=True)
    with pytest.raises(ValueError, match="support"):
        d.log_prob(P(value))


def test_shape_errors():
    d = D.Normal(P(np.zeros((2, 3))), P(np.ones((2, 3))), validate_args=True)
    with pytest.raises(ValueError, match="broadcastable"):
        d.log_prob(P(np.zeros((4,))))
    mvn = D.MultivariateNormal(P(np.zeros(3)), covariance_matrix=P(np.eye(3)), validate_args=True)
    with pytest.raises(ValueError, match="event_shape"):
        mvn.log_prob(P(np.zeros((2, 2))))
    with pytest.raises(ValueError):
        D.MultivariateNormal(P(np.zeros(3)))  # none of covariance/precision/scale_tril
    with pytest.raises(ValueError):
        D.MultivariateNormal(P(np.zeros(3)), covariance_matrix=P(np.eye(3)), scale_tril=P(np.eye(3)))
    with pytest.raises(ValueError):
        D.Categorical(probs=P([0.5, 0.5]), logits=P([0.0, 0.0]))
    with pytest.raises(ValueError):
        D.Bernoulli()
    with pytest.raises(ValueError):
        D.Dirichlet(P(1.0))
    with pytest.raises(ValueError, match="Number"):
        D.Normal("a", 1.0)


def test_default_validate_args_switch():
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(P([0.0]), P([-1.0]))  # no error
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(P([0.0]), P([-1.0]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_number_arguments_and_dtypes():
    d = D.Normal(0.0, 1.0)
    assert tuple(d.batch_shape) == () and d.sample().dtype == ptcore.float32
    assert D.Normal(P([0.0]), 2.0).scale.dtype == ptcore.float64
    assert tuple(D.Normal(0.0, 1.0).sample((4, 2)).shape) == (4, 2)
    assert D.Bernoulli(0.3).sample().dtype == ptcore.float32
    assert D.Categorical(probs=ptcore.ones(3)).sample().dtype == ptcore.int64
    assert D.Poisson(P([2.0])).sample().dtype == ptcore.float64


def test_relaxed_and_multivariate_rsample_gradients():
    """Recover the noise of ptcore's draw, redo torch's reparameterization with it,
    and compare the parameter gradients."""
    logits = np.array([[0.3, -1.2, 0.8], [1.5, 0.0, -0.4]])
    temp = 0.7
    lp = P(logits, True)
    x, (g,) = _weighted_grads(D.RelaxedBernoulli(P(temp), logits=lp), (lp,))
    lt = Tt(logits, True)
    noise = torch.logit(torch.tensor(x)) * temp - lt.detach()
    (torch.sigmoid((lt + noise) / temp) * torch.tensor(W)).sum().backward()
    np.testing.assert_allclose(g, lt.grad.numpy(), rtol=1e-7, atol=1e-10)

    lp = P(logits, True)
    x, (g,) = _weighted_grads(D.RelaxedOneHotCategorical(P(temp), logits=lp), (lp,))
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    lt = Tt(logits, True)
    gumbels = torch.log(torch.tensor(x)) * temp - lt.detach()
    (torch.softmax((lt + gumbels) / temp, -1) * torch.tensor(W)).sum().backward()
    np.testing.assert_allclose(g, lt.grad.numpy(), rtol=1e-7, atol=1e-10)

    a = np.array([[1.0, 0.0, 0.0], [0.4, 0.8, 0.0], [-0.3, 0.2, 1.5]])
    loc = np.array([0.5, -1.0, 2.0])
    lp, sp = P(loc, True), P(a, True)
    ptcore.manual_seed(0)
    x = D.MultivariateNormal(lp, scale_tril=sp).rsample((2,))
    (x * P(W)).sum().backward()
    lt, st = Tt(loc, True), Tt(a, True)
    eps = torch.linalg.solve_triangular(st.detach(), (torch.tensor(x.detach().numpy()) - lt.detach()).mT,
                                        upper=False).mT
    ((lt + (st @ eps.mT).mT) * torch.tensor(W)).sum().backward()
    np.testing.assert_allclose(lp.grad.numpy(), lt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(sp.grad.numpy(), st.grad.numpy(), rtol=1e-9, atol=1e-12)
