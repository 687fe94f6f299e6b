"""Transforms (forward, inverse, log_abs_det_jacobian, shapes), biject_to /
transform_to, TransformedDistribution, Independent and MixtureSameFamily
against torch.distributions."""
import numpy as np
import pytest

import ptcore
import ptcore.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions

rng = np.random.default_rng(11)


def _pair(name, *args, **kw):
    conv = lambda v: (ptcore.tensor(v), torch.tensor(v)) if isinstance(v, np.ndarray) else (v, v)  # noqa: E731
    pa = [conv(a)[0] for a in args]
    ta = [conv(a)[1] for a in args]
    return getattr(D, name)(*pa, **kw), getattr(TD, name)(*ta, **kw)


# (transform name, args, kwargs, input generator)
TRANSFORMS = [
    ("ExpTransform", (), {}, lambda: rng.normal(size=(4, 3))),
    ("SigmoidTransform", (), {}, lambda: rng.normal(size=(4, 3)) * 3),
    ("TanhTransform", (), {}, lambda: rng.normal(size=(4, 3))),
    ("SoftplusTransform", (), {}, lambda: rng.normal(size=(4, 3)) * 3),
    ("AbsTransform", (), {}, lambda: rng.normal(size=(4, 3))),
    ("AffineTransform", (np.array([0.5, -1.0, 2.0]), np.array([2.0, -0.5, 0.1])), {}, lambda: rng.normal(size=(4, 3))),
    ("AffineTransform", (1.5, 3.0), {"event_dim": 1}, lambda: rng.normal(size=(4, 3))),
    ("PowerTransform", (np.array([2.0, 0.5, 3.0]),), {}, lambda: rng.uniform(0.2, 2, size=(4, 3))),
    ("SoftmaxTransform", (), {}, lambda: rng.normal(size=(4, 3))),
    ("StickBreakingTransform", (), {}, lambda: rng.normal(size=(4, 3))),
    ("LowerCholeskyTransform", (), {}, lambda: rng.normal(size=(2, 3, 3))),
    ("CorrCholeskyTransform", (), {}, lambda: rng.normal(size=(4, 6))),
    ("PositiveDefiniteTransform", (), {}, lambda: rng.normal(size=(2, 3, 3))),
    ("ReshapeTransform", ((6,), (2, 3)), {}, lambda: rng.normal(size=(4, 6))),
]


def _close(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", TRANSFORMS, ids=[c[0] + str(i) for i, c in enumerate(TRANSFORMS)])
def test_transform_against_torch(case):
    name, args, kw, gen = case
    pt, tt = _pair(name, *args, **kw)
    x = gen()
    px, tx = ptcore.tensor(x), torch.tensor(x)
    py, ty = pt(px), tt(tx)
    _close(py, ty)
    assert pt.bijective == tt.bijective
    assert pt.domain.event_dim == tt.domain.event_dim and pt.codomain.event_dim == tt.codomain.event_dim
    assert tuple(pt.forward_shape(x.shape)) == tuple(tt.forward_shape(x.shape))
    assert bool(pt.codomain.check(py).all())
    if name == "PositiveDefiniteTransform":
        return  # torch has no log_abs_det_jacobian for it
    if name != "AbsTransform":
        _close(pt.inv(py), tt.inv(ty), rtol=1e-8, atol=1e-10)
    if name in ("AbsTransform", "SoftmaxTransform"):
        return  # not bijective: no log-det
    try:
        expected = tt.log_abs_det_jacobian(tx, ty)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            pt.log_abs_det_jacobian(px, py)
        return
    _close(pt.log_abs_det_jacobian(px, py), expected, rtol=1e-9, atol=1e-11)


def test_compose_and_cache():
    x = rng.normal(size=(5, 2))
    pt = D.ComposeTransform([D.AffineTransform(ptcore.tensor(0.5), ptcore.tensor(2.0)), D.ExpTransform(),
                             D.AffineTransform(ptcore.tensor(1.0), ptcore.tensor(3.0))])
    tt = TD.ComposeTransform([TD.AffineTransform(torch.tensor(0.5), torch.tensor(2.0)), TD.ExpTransform(),
                              TD.AffineTransform(torch.tensor(1.0), torch.tensor(3.0))])
    py, ty = pt(ptcore.tensor(x)), tt(torch.tensor(x))
    _close(py, ty)
    _close(pt.log_abs_det_jacobian(ptcore.tensor(x), py), tt.log_abs_det_jacobian(torch.tensor(x), ty))
    _close(pt.inv(py), x)
    cached = D.ExpTransform(cache_size=1)
    px = ptcore.tensor(x)
    y = cached(px)
    assert cached.inv(y) is px
    with pytest.raises(ValueError):
        D.ExpTransform(cache_size=2)
    assert D.ExpTransform().inv.inv.__class__ is D.ExpTransform


@pytest.mark.parametrize("constraint", ["real", "positive", "unit_interval", "simplex", "lower_cholesky",
                                        "corr_cholesky", "positive_definite", "greater_than", "interval"])
def test_biject_to(constraint):
    if constraint == "greater_than":
        pc, tc = D.constraints.greater_than(ptcore.tensor(1.5)), TD.constraints.greater_than(torch.tensor(1.5))
    elif constraint == "interval":
        pc = D.constraints.interval(ptcore.tensor(-1.0), ptcore.tensor(2.0))
        tc = TD.constraints.interval(torch.tensor(-1.0), torch.tensor(2.0))
    else:
        pc, tc = getattr(D.constraints, constraint), getattr(TD.constraints, constraint)
    shape = {"lower_cholesky": (2, 3, 3), "positive_definite": (2, 3, 3), "corr_cholesky": (2, 3)}.get(
        constraint, (2, 4))
    x = rng.normal(size=shape)
    for fn in ("biject_to", "transform_to"):
        try:
            tt = getattr(TD, fn)(tc)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(D, fn)(pc)
            continue
        pt = getattr(D, fn)(pc)
        py = pt(ptcore.tensor(x))
        _close(py, tt(torch.tensor(x)), rtol=1e-9, atol=1e-11)
        assert bool(pc.check(py).all())


def test_transformed_distribution():
    base_p = D.Normal(ptcore.tensor([0.2, -0.3], dtype=ptcore.float64), ptcore.tensor([0.5, 1.2], dtype=ptcore.float64))
    base_t = TD.Normal(torch.tensor([0.2, -0.3], dtype=torch.float64), torch.tensor([0.5, 1.2], dtype=torch.float64))
    pd = D.TransformedDistribution(base_p, [D.ExpTransform(), D.AffineTransform(1.0, 2.0)])
    td = TD.TransformedDistribution(base_t, [TD.ExpTransform(), TD.AffineTransform(1.0, 2.0)])
    torch.manual_seed(0)
    v = td.sample((5,))
    _close(pd.log_prob(ptcore.tensor(v.numpy())), td.log_prob(v))
    _close(pd.cdf(ptcore.tensor(v.numpy())), td.cdf(v))
    q = torch.linspace(0.1, 0.9, 5)[:, None].double()
    _close(pd.icdf(ptcore.tensor(q.numpy())), td.icdf(q))
    assert tuple(pd.sample((3,)).shape) == (3, 2) and pd.has_rsample
    assert tuple(pd.expand((4, 2)).batch_shape) == (4, 2)
    # an event-reshaping transform moves batch dims into the event
    pi = D.TransformedDistribution(base_p, [D.ReshapeTransform((2,), (1, 2))])
    ti = TD.TransformedDistribution(base_t, [TD.ReshapeTransform((2,), (1, 2))])
    assert tuple(pi.batch_shape) == tuple(ti.batch_shape) and tuple(pi.event_shape) == tuple(ti.event_shape)


def test_independent():
    loc, scale = rng.normal(size=(3, 4)), rng.uniform(0.5, 2, size=(3, 4))
    pd = D.Independent(D.Normal(ptcore.tensor(loc), ptcore.tensor(scale)), 1)
    td = TD.Independent(TD.Normal(torch.tensor(loc), torch.tensor(scale)), 1)
    assert tuple(pd.batch_shape) == (3,) and tuple(pd.event_shape) == (4,)
    v = td.sample((2,))
    _close(pd.log_prob(ptcore.tensor(v.numpy())), td.log_prob(v))
    _close(pd.entropy(), td.entropy())
    _close(pd.mean, td.mean)
    _close(pd.variance, td.variance)
    assert tuple(pd.expand((5, 3)).batch_shape) == (5, 3)
    with pytest.raises(ValueError):
        D.Independent(D.Normal(ptcore.tensor(loc), ptcore.tensor(scale)), 3)


def test_mixture_same_family():
    w = rng.uniform(0.1, 1, size=(2, 3))
    loc, scale = rng.normal(size=(2, 3)), rng.uniform(0.5, 2, size=(2, 3))
    lw = ptcore.tensor(w, requires_grad=True)
    lloc = ptcore.tensor(loc, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tloc = torch.tensor(loc, requires_grad=True)
    pd = D.MixtureSameFamily(D.Categorical(probs=lw), D.Normal(lloc, ptcore.tensor(scale)))
    td = TD.MixtureSameFamily(TD.Categorical(probs=tw), TD.Normal(tloc, torch.tensor(scale)))
    assert tuple(pd.batch_shape) == (2,) and tuple(pd.event_shape) == ()
    v = torch.tensor(rng.normal(size=(5, 2)))
    lp, lt = pd.log_prob(ptcore.tensor(v.numpy())), td.log_prob(v)
    _close(lp, lt)
    lp.sum().backward()
    lt.sum().backward()
    _close(lw.grad, tw.grad, rtol=1e-9)
    _close(lloc.grad, tloc.grad, rtol=1e-9)
    _close(pd.cdf(ptcore.tensor(v.numpy())), td.cdf(v))
    _close(pd.mean, td.mean)
    _close(pd.variance, td.variance)
    ptcore.manual_seed(0)
    s = pd.sample((20000,)).numpy()
    assert np.abs(s.mean(0) - td.mean.detach().numpy()).max() < 6 * np.sqrt(td.variance.detach().numpy().max() / 20000)
    # multivariate components
    comp = D.Independent(D.Normal(ptcore.tensor(rng.normal(size=(3, 2))), ptcore.ones(3, 2, dtype=ptcore.float64)), 1)
    mix = D.MixtureSameFamily(D.Categorical(logits=ptcore.zeros(3, dtype=ptcore.float64)), comp)
    assert tuple(mix.event_shape) == (2,) and tuple(mix.sample((4,)).shape) == (4, 2)
    with pytest.raises(ValueError):
        D.MixtureSameFamily(D.Categorical(logits=ptcore.zeros(4)), D.Normal(ptcore.zeros(3), ptcore.ones(3)))


def test_mixture_same_family_support_constraint():
    low = ptcore.tensor([[0.0, 1.0, 2.0], [0.0, 0.5, 0.2]], dtype=ptcore.float64)
    comp = D.Uniform(low, low + 1.0)
    mix = D.MixtureSameFamily(D.Categorical(logits=ptcore.zeros(2, 3, dtype=ptcore.float64)), comp)
    tmix = TD.MixtureSameFamily(TD.Categorical(logits=torch.zeros(2, 3, dtype=torch.float64)),
                                TD.Uniform(torch.tensor(low.numpy()), torch.tensor(low.numpy()) + 1.0))
    assert isinstance(mix.support, D.constraints.MixtureSameFamilyConstraint)
    v = np.array([[0.5, 0.7], [2.5, 0.6], [1.5, 1.1]])
    np.testing.assert_array_equal(mix.support.check(ptcore.tensor(v)).numpy(),
                                  tmix.support.check(torch.tensor(v)).numpy())
    assert repr(mix.support) == repr(tmix.support).replace("torch.", "ptcore.")
    with pytest.raises(AssertionError):   # torch's type for this misuse
        TD.constraints.MixtureSameFamilyConstraint(3)
    with pytest.raises(AssertionError):
        D.constraints.MixtureSameFamilyConstraint(3)
