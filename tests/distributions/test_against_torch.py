"""Each distribution against torch.distributions with the same float64
parameters: shapes, log_prob, cdf/icdf, entropy, moments, support checks,
expand, enumerate_support and gradients of log_prob."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from dist_cases import CASES, HAS_CDF, HAS_ICDF, as_np, build_pair, case_id  # noqa: E402

IDS = [case_id(c) for c in CASES]


def _close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(as_np(a), as_np(b), rtol=rtol, atol=atol, equal_nan=True)


def _torch_values(td, n=3):
    torch.manual_seed(0)
    return td.sample((n,))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shapes_and_support(case):
    pd, td, _, _ = build_pair(*case)
    assert tuple(pd.batch_shape) == tuple(td.batch_shape)
    assert tuple(pd.event_shape) == tuple(td.event_shape)
    assert pd.has_rsample == td.has_rsample
    assert pd.has_enumerate_support == td.has_enumerate_support
    assert repr(pd.support) == repr(td.support).replace("torch.", "ptcore.")
    ptcore.manual_seed(0)
    for shape in [(), (5,), (2, 3)]:
        s = pd.sample(shape)
        assert tuple(s.shape) == tuple(td.sample(shape).shape)
        assert bool(pd.support.check(s).all())
    assert repr(pd).split("(")[0] == repr(td).split("(")[0]


def test_von_mises_scalar_parameters_sample_shape():
    # 0-d loc and concentration: sample() is 0-d as torch's (was 1-d)
    for shape in [(), (4,), (2, 3)]:
        pd = ptcore.distributions.VonMises(ptcore.tensor(0.5), ptcore.tensor(2.0))
        td = torch.distributions.VonMises(torch.tensor(0.5), torch.tensor(2.0))
        assert tuple(pd.sample(shape).shape) == tuple(td.sample(shape).shape)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob(case):
    pd, td, _, _ = build_pair(*case)
    v = _torch_values(td)
    lp_t = td.log_prob(v)
    lp_p = pd.log_prob(ptcore.tensor(v.numpy()))
    rtol = 2e-6 if case[0] == "VonMises" else 1e-7
    _close(lp_p, lp_t, rtol=rtol, atol=1e-9 if rtol < 1e-6 else 1e-6)
    assert lp_p.dtype == ptcore.float64


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_moments_entropy(case):
    pd, td, _, _ = build_pair(*case)
    for attr in ("mean", "variance", "stddev", "mode"):
        if case[0] == "Kumaraswamy" and attr == "mode":
            # torch 2.13's Kumaraswamy.mode is NaN for every concentration0 > 1 (it takes
            # log1p(-concentration0)); ptcore returns the mode ((a - 1) / (a b - 1)) ** (1 / a)
            a, b = case[1]["concentration1"], case[1]["concentration0"]
            _close(pd.mode, ((a - 1) / (a * b - 1)) ** (1 / a), rtol=1e-12)
            continue
        try:
            expected = getattr(td, attr)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(pd, attr)
            continue
        rtol = 2e-6 if case[0] == "VonMises" else 1e-7
        _close(getattr(pd, attr), expected, rtol=rtol, atol=1e-7)
    try:
        expected = td.entropy()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            pd.entropy()
        return
    _close(pd.entropy(), expected, rtol=1e-7)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in HAS_CDF], ids=case_id)
def test_cdf_icdf(case):
    pd, td, _, _ = build_pair(*case)
    v = _torch_values(td)
    _close(pd.cdf(ptcore.tensor(v.numpy())), td.cdf(v), rtol=1e-7, atol=1e-9)
    if case[0] in HAS_ICDF:
        q = torch.tensor(np.linspace(0.05, 0.95, 7)).reshape((7,) + (1,) * len(td.batch_shape))
        _close(pd.icdf(ptcore.tensor(q.numpy())), td.icdf(q), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expand(case):
    pd, td, _, _ = build_pair(*case)
    shape = (2,) + tuple(td.batch_shape)
    pe, te = pd.expand(shape), td.expand(shape)
    assert type(pe) is type(pd)
    assert tuple(pe.batch_shape) == tuple(te.batch_shape)
    assert tuple(pe.event_shape) == tuple(te.event_shape)
    v = _torch_values(te, 2)
    _close(pe.log_prob(ptcore.tensor(v.numpy())), te.log_prob(v), rtol=2e-6, atol=1e-6)
    assert tuple(pe.sample((3,)).shape) == (3,) + shape + tuple(te.event_shape)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in
                                  ("Bernoulli", "Binomial", "Categorical", "OneHotCategorical")], ids=case_id)
def test_enumerate_support(case):
    pd, td, _, _ = build_pair(*case)
    if case[0] == "Binomial" and len(set(case[1]["total_count"].tolist())) > 1:
        with pytest.raises(NotImplementedError):
            td.enumerate_support()
        with pytest.raises(NotImplementedError, match="Inhomogeneous"):
            pd.enumerate_support()
        return
    for expand in (True, False):
        _close(pd.enumerate_support(expand), td.enumerate_support(expand))
    v = td.enumerate_support()
    _close(pd.log_prob(ptcore.tensor(v.numpy())), td.log_prob(v))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob_gradients(case):
    pd, td, pk, tk = build_pair(*case, requires_grad=True)
    v = _torch_values(td).detach()
    w = np.random.default_rng(0).normal(size=tuple(td.log_prob(v).shape))
    (td.log_prob(v) * torch.tensor(w)).sum().backward()
    (pd.log_prob(ptcore.tensor(v.numpy())) * ptcore.tensor(w)).sum().backward()
    rtol = 2e-6 if case[0] == "VonMises" else 1e-6
    checked = 0
    for k, tp in tk.items():
        if isinstance(tp, torch.Tensor) and tp.requires_grad:
            assert (pk[k].grad is None) == (tp.grad is None), k
            if tp.grad is not None:
                _close(pk[k].grad, tp.grad, rtol=rtol, atol=1e-7)
                checked += 1
    assert checked >= 1


def test_generalized_pareto_float32():
    # torch 2.13's GeneralizedPareto.log_prob/cdf raise for float64 parameters (isclose
    # against a float32 zero), so this comparison runs in float32
    loc, scale, xi = [0.5, -1.0, 0.2], [1.5, 0.7, 2.0], [0.3, -0.4, 0.0]
    pk = [ptcore.tensor(v, requires_grad=True) for v in (loc, scale, xi)]
    tk = [torch.tensor(v, requires_grad=True) for v in (loc, scale, xi)]
    pd, td = ptcore.distributions.GeneralizedPareto(*pk), torch.distributions.GeneralizedPareto(*tk)
    v = _torch_values(td, 4).detach()
    pv = ptcore.tensor(v.numpy())
    lp, lt = pd.log_prob(pv), td.log_prob(v)
    _close(lp, lt, rtol=1e-5, atol=1e-6)
    _close(pd.cdf(pv), td.cdf(v), rtol=1e-5, atol=1e-6)
    q = torch.linspace(0.05, 0.95, 5)[:, None]
    _close(pd.icdf(ptcore.tensor(q.numpy())), td.icdf(q), rtol=1e-5, atol=1e-6)
    for attr in ("mean", "variance", "mode"):
        _close(getattr(pd, attr), getattr(td, attr), rtol=1e-6)
    _close(pd.entropy(), td.entropy(), rtol=1e-6)
    _close(pd.support.upper_bound, td.support.upper_bound)
    lp.sum().backward()
    lt.sum().backward()
    for a, b in zip(pk, tk):
        _close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    assert tuple(pd.expand((2, 3)).sample((4,)).shape) == (4, 2, 3)


@pytest.mark.parametrize("dim", [2, 4])
def test_lkj_cholesky(dim):
    conc = np.array([0.5, 1.0, 3.0])
    pc, tc = ptcore.tensor(conc, requires_grad=True), torch.tensor(conc, requires_grad=True)
    pd, td = ptcore.distributions.LKJCholesky(dim, pc), torch.distributions.LKJCholesky(dim, tc)
    assert tuple(pd.batch_shape) == (3,) and tuple(pd.event_shape) == (dim, dim)
    v = _torch_values(td, 2)
    lp, lt = pd.log_prob(ptcore.tensor(v.numpy())), td.log_prob(v)
    _close(lp, lt, rtol=1e-10, atol=1e-12)
    lp.sum().backward()
    lt.sum().backward()
    _close(pc.grad, tc.grad, rtol=1e-9)
    ptcore.manual_seed(0)
    s = pd.sample((2000,))
    assert tuple(s.shape) == (2000, 3, dim, dim)
    assert bool(pd.support.check(s).all())
    # the correlation matrices' off-diagonal entries have mean 0 and variance 1 / (2 eta + dim - 1)
    corr = (s @ s.mT).numpy()
    off = corr[..., 1, 0]
    np.testing.assert_allclose(corr.diagonal(axis1=-2, axis2=-1), 1.0, rtol=1e-10)
    var = 1 / (2 * conc + dim - 1)
    assert (np.abs(off.mean(0)) < 6 * np.sqrt(var / 2000)).all()
    assert (np.abs(off.var(0) / var - 1) < 0.2).all()
    assert tuple(pd.expand((2, 3)).sample().shape) == (2, 3, dim, dim)
    with pytest.raises(ValueError):
        ptcore.distributions.LKJCholesky(1, 1.0)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(param):
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 3, 3)) * 0.5
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    mat = np.linalg.cholesky(spd) if param == "scale_tril" else spd
    df = np.array([3.5, 6.0])
    pm, tm = ptcore.tensor(mat, requires_grad=True), torch.tensor(mat, requires_grad=True)
    pdf, tdf = ptcore.tensor(df, requires_grad=True), torch.tensor(df, requires_grad=True)
    pd = ptcore.distributions.Wishart(pdf, **{param: pm})
    td = torch.distributions.Wishart(tdf, **{param: tm})
    assert tuple(pd.batch_shape) == (2,) and tuple(pd.event_shape) == (3, 3)
    v = _torch_values(td, 3).detach()
    lp, lt = pd.log_prob(ptcore.tensor(v.numpy())), td.log_prob(v)
    _close(lp, lt, rtol=1e-9, atol=1e-10)
    (lp.sum() + pd.entropy().sum()).backward()
    (lt.sum() + td.entropy().sum()).backward()
    _close(pdf.grad, tdf.grad, rtol=1e-8, atol=1e-10)
    _close(pm.grad, tm.grad, rtol=1e-8, atol=1e-10)
    for attr in ("mean", "variance", "mode"):
        _close(getattr(pd, attr), getattr(td, attr), rtol=1e-10)
    ptcore.manual_seed(0)
    s = pd.sample((4000,))
    assert tuple(s.shape) == (4000, 2, 3, 3) and bool(pd.support.check(s).all())
    # sample mean within 6 standard errors of df * Sigma
    se = np.sqrt(td.variance.detach().numpy() / 4000)
    assert (np.abs(s.numpy().mean(0) - td.mean.detach().numpy()) < 6 * se).all()
    assert tuple(pd.expand((4, 2)).rsample().shape) == (4, 2, 3, 3)
    with pytest.raises(ValueError):
        ptcore.distributions.Wishart(ptcore.tensor(1.5, dtype=ptcore.float64), covariance_matrix=ptcore.tensor(spd[0]))


def test_wishart_rsample_gradient():
    df = ptcore.tensor([4.0], dtype=ptcore.float64, requires_grad=True)
    L = ptcore.tensor(np.eye(2) * 1.5, requires_grad=True)
    ptcore.manual_seed(0)
    x = ptcore.distributions.Wishart(df, scale_tril=L).rsample((3000,))
    x.diagonal(dim1=-2, dim2=-1).sum().backward()
    # E[trace X] = df * trace(L L^T): d/d df = trace(L L^T) = 4.5 (Monte Carlo, seeded)
    assert abs(df.grad.item() / 3000 - 4.5) < 0.3
    # (per-draw gradients have standard deviation ~10: 6 standard errors of the mean are ~1.2)
    np.testing.assert_allclose(L.grad.numpy() / 3000, 2 * 4.0 * np.eye(2) * 1.5, atol=1.2)
