"""Differences from torch.distributions found by differential fuzzing, each
checked against torch itself with the same float64 parameters."""
import numpy as np
import pytest

import ptcore
import ptcore.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def _np(t):
    return t.detach().numpy()


def _pair(lib, conv):
    return lib, conv


PT = (D, lambda a: ptcore.tensor(np.asarray(a, dtype=np.float64)))
TT = (TD, lambda a: torch.tensor(np.asarray(a, dtype=np.float64)))


def test_uniform_arg_constraints_are_the_bounds():
    # torch: low < high as LessThan / GreaterThan of the other bound (ptcore had Dependent())
    for lib, c in (PT, TT):
        u = lib.Uniform(c([0.0, 1.0]), c([2.0, 3.0]))
        ac = u.arg_constraints
        assert type(ac["low"]).__name__ == "_LessThan"
        assert type(ac["high"]).__name__ == "_GreaterThan"
        assert ac["low"].check(c([1.9, 2.5])).tolist() == [True, True]
        assert ac["high"].check(c([0.0, 1.5])).tolist() == [False, True]
    pr = {k: repr(v) for k, v in D.Uniform(0.0, 1.0).arg_constraints.items()}
    tr = {k: repr(v) for k, v in TD.Uniform(0.0, 1.0).arg_constraints.items()}
    assert pr == tr
    for lib, c in (PT, TT):
        with pytest.raises(ValueError, match="low"):
            lib.Uniform(c([1.0, 2.0]), c([1.0, 3.0]), validate_args=True)
        lib.Uniform(c([1.0, 2.0]), c([1.5, 3.0]), validate_args=True)


def test_fisher_snedecor_variance_gradient_nan_where_undefined():
    out = []
    for lib, c in (PT, TT):
        df1 = c([3.0, 5.0, 2.0]).requires_grad_()
        df2 = c([3.0, 6.0, 4.0]).requires_grad_()
        v = lib.FisherSnedecor(df1, df2).variance
        v.sum().backward()
        out.append((_np(v), _np(df1.grad), _np(df2.grad)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
    assert np.isnan(out[0][1][[0, 2]]).all()


def test_kl_uniform_gamma_and_beta_with_low_at_zero():
    # x log x at x = 0 is 0 (xlogy), not NaN
    low, high = [0.0, 0.0, 0.5], [2.0, 3.0, 1.0]
    for q_args in (("Gamma", [1.3, 2.0, 0.7], [1.5, 1.0, 2.0]),
                   ("Beta", [1.3, 2.0, 0.7], [1.5, 1.0, 2.0])):
        name, a, b = q_args
        hi = [0.5, 1.0, 0.9] if name == "Beta" else high
        res = [_np(lib.kl_divergence(lib.Uniform(c(low), c(hi)), getattr(lib, name)(c(a), c(b))))
               for lib, c in (PT, TT)]
        assert np.isfinite(res[1]).all()
        np.testing.assert_allclose(res[0], res[1], rtol=1e-10)


@pytest.mark.parametrize("kind", ["cat", "stack"])
def test_cat_stack_transform_misuse_is_assertion_error(kind):
    for lib, c in (PT, TT):
        tr = lib.transforms
        parts = [tr.ExpTransform(), tr.AffineTransform(0.0, 2.0)]
        t = tr.CatTransform(parts, dim=-1, lengths=[1, 2]) if kind == "cat" else tr.StackTransform(parts, dim=-1)
        good = c(np.ones((2, 3 if kind == "cat" else 2)))
        bad = c(np.ones((2, 4)))
        t(good)
        for call in (lambda: t(bad), lambda: t.inv(bad), lambda: t.log_abs_det_jacobian(bad, bad),
                     lambda: t.log_abs_det_jacobian(good, bad)):
            with pytest.raises(AssertionError):
                call()
        wide = tr.CatTransform(parts, dim=3, lengths=[1, 1]) if kind == "cat" else tr.StackTransform(parts, dim=3)
        with pytest.raises(AssertionError):
            wide(good)
        with pytest.raises(AssertionError):
            (tr.CatTransform if kind == "cat" else tr.StackTransform)([3])
    with pytest.raises(AssertionError):
        D.transforms.CatTransform([D.transforms.ExpTransform()], lengths=[1, 2])
    with pytest.raises(AssertionError):
        TD.transforms.CatTransform([TD.transforms.ExpTransform()], lengths=[1, 2])


def test_constraint_misuse_is_assertion_error():
    for lib, c in (PT, TT):
        C = lib.constraints
        for make in (lambda: C.independent(3, 1), lambda: C.independent(C.real, 1.5),
                     lambda: C.independent(C.real, -1), lambda: C.cat([3]), lambda: C.stack([3]),
                     lambda: C.cat([C.real], lengths=[1, 2]),
                     lambda: C.cat([C.real], dim=3).check(c([0.0, 1.0])),
                     lambda: C.stack([C.real], dim=3).check(c([0.0, 1.0]))):
            with pytest.raises(AssertionError):
                make()
        with pytest.raises(ValueError):      # a value with too few dims stays ValueError
            C.independent(C.positive, 2).check(c([1.0, 2.0]))


def test_wishart_needs_exactly_one_matrix_assertion_error():
    for lib, c in (PT, TT):
        with pytest.raises(AssertionError):
            lib.Wishart(c(4.0))
        with pytest.raises(AssertionError):
            lib.Wishart(c(4.0), covariance_matrix=c(np.eye(3)), scale_tril=c(np.eye(3)))


def test_public_namespace_as_torch():
    # LogitRelaxedBernoulli / ExpRelaxedCategorical live in their modules only
    assert set(D.__all__) == set(TD.__all__)
    assert not hasattr(D, "LogitRelaxedBernoulli") and not hasattr(D, "ExpRelaxedCategorical")
    from ptcore.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
    from ptcore.distributions.relaxed_categorical import ExpRelaxedCategorical
    assert LogitRelaxedBernoulli.__name__ == "LogitRelaxedBernoulli"
    assert ExpRelaxedCategorical.__name__ == "ExpRelaxedCategorical"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_concentration_draws_stay_finite_and_inside_as_torch(dtype):
    # torch clamps standard-gamma draws at the dtype's tiny and Dirichlet/Beta draws into
    # [tiny, 1): ptcore's underflowed to 0 (StudentT / FisherSnedecor draws inf, Beta 0 or 1)
    n = 20000
    for lib in (ptcore, torch):
        dt = getattr(lib, dtype)
        lib.manual_seed(0)
        fi = lib.finfo(dt)
        chi2 = lib.distributions.Chi2(lib.full((n,), 1e-3, dtype=dt)).rsample()
        assert bool((chi2 > 0).all())
        t = lib.distributions.StudentT(lib.full((n,), 1e-2, dtype=dt)).rsample()
        assert bool(lib.isfinite(t).all())
        beta = lib.distributions.Beta(lib.full((n,), 1e-3, dtype=dt), lib.full((n,), 1e-3, dtype=dt))
        b = beta.rsample()
        assert b.min().item() >= fi.tiny and b.max().item() <= 1 - fi.eps / 2
        assert bool(lib.isfinite(beta.log_prob(b)).all())
        d = lib.distributions.Dirichlet(lib.full((n, 3), 1e-3, dtype=dt)).sample()
        assert d.min().item() >= fi.tiny and d.max().item() <= 1 - fi.eps / 2
        g = lib.distributions.Gamma(lib.full((n,), 1e-3, dtype=dt), lib.full((n,), 1.0, dtype=dt)).sample()
        assert g.min().item() >= fi.tiny



@pytest.fixture
def emulated_cuda():
    # as tests/cuda/emulated/conftest.py: the emulated device for this test only
    import gc
    import os
    from ptcore.cuda.runtime import state as _runtime
    old = os.environ.get("PTCORE_CUDA_EMULATE")

    def switch(value):
        gc.collect()
        _runtime.reset()
        if value is None:
            os.environ.pop("PTCORE_CUDA_EMULATE", None)
        else:
            os.environ["PTCORE_CUDA_EMULATE"] = value

    switch("1")
    assert ptcore.cuda.is_available()
    try:
        yield
    finally:
        switch(old)


def test_gamma_family_and_von_mises_sample_on_cuda(emulated_cuda):
    # the numpy-based samplers read CUDA parameters with .numpy() (TypeError); torch
    # samples them on the device
    def t(x):
        return ptcore.tensor(x, device="cuda")
    ptcore.manual_seed(0)           # (the same draws in any test order; 300 seeds checked by hand)
    dists = [D.Gamma(t([0.5, 2.0]), t([1.0, 2.0])), D.Beta(t([0.5, 2.0]), t([1.0, 2.0])),
             D.Dirichlet(t([0.5, 2.0])), D.Chi2(t([0.5, 2.0])), D.StudentT(t([3.0, 5.0])),
             D.FisherSnedecor(t([3.0, 5.0]), t([3.0, 5.0])), D.InverseGamma(t([3.0, 5.0]), t([3.0, 5.0])),
             D.NegativeBinomial(t([3.0, 5.0]), t([0.3, 0.5])), D.LKJCholesky(3, t(1.0)),
             D.Wishart(t(4.0), t([[2.0, 0.5], [0.5, 1.0]])), D.VonMises(t([0.0, 1.0]), t([1.0, 2.0]))]
    for d in dists:
        s = d.sample((3,))
        assert s.device.type == "cuda" and s.dtype == ptcore.float32
        assert tuple(s.shape) == (3,) + tuple(d.batch_shape) + tuple(d.event_shape)
        assert bool(d.support.check(s).all())
        assert d.log_prob(s).device.type == "cuda"
    for make in (lambda c: D.Gamma(c, t([1.0, 1.0])), D.Dirichlet, lambda c: D.Beta(c, c), D.StudentT):
        c = t([0.5, 2.0]).requires_grad_()
        make(c).rsample((4,)).sum().backward()
        assert c.grad.device.type == "cuda" and bool(ptcore.isfinite(c.grad).all())


def test_gamma_sample_on_meta_device():
    for lib in (ptcore, torch):
        d = lib.distributions.Gamma(lib.ones(3, device="meta"), lib.ones(3, device="meta"), validate_args=False)
        for s in (d.sample((2,)), d.rsample((2,)),
                  lib.distributions.Chi2(lib.ones(3, device="meta"), validate_args=False).sample((2,))):
            assert s.device.type == "meta" and tuple(s.shape) == (2, 3) and s.dtype == lib.float32


def test_cuda_gamma_draws_follow_the_cuda_seed(emulated_cuda):
    # as torch: a CUDA parameter's draws come from the CUDA generator, so
    # cuda.manual_seed alone repeats them whatever the CPU generator's state
    def t(x):
        return ptcore.tensor(x, device="cuda")
    for make in (lambda: D.Gamma(t([0.5, 2.0]), t([1.0, 1.0])), lambda: D.Dirichlet(t([0.5, 2.0])),
                 lambda: D.VonMises(t([0.0, 1.0]), t([1.0, 2.0]))):
        ptcore.manual_seed(1)
        ptcore.cuda.manual_seed(3)
        a = make().sample((4,))
        ptcore.manual_seed(2)
        ptcore.cuda.manual_seed(3)
        b = make().sample((4,))
        assert a.device.type == "cuda" and bool((a == b).all())


def test_infinite_kl_pairs_on_cuda(emulated_cuda):
    # the pairs whose KL is infinite built their result on the CPU
    def t(x):
        return ptcore.tensor(x, device="cuda")
    pairs = [(D.Normal(t([0.0, 1.0]), t([1.0, 1.0])), D.Uniform(t([0.0, 0.0]), t([1.0, 1.0]))),
             (D.Exponential(t([1.0, 2.0])), D.Beta(t([1.0, 2.0]), t([1.0, 2.0]))),
             (D.Gamma(t([1.0, 2.0]), t([1.0, 2.0])), D.Pareto(t([1.0, 2.0]), t([1.0, 2.0]))),
             (D.Laplace(t([0.0, 1.0]), t([1.0, 1.0])), D.ContinuousBernoulli(t([0.3, 0.6])))]
    for p, q in pairs:
        k = D.kl_divergence(p, q)
        assert k.device.type == "cuda" and k.dtype == ptcore.float32
        assert k.cpu().tolist() == [float("inf")] * 2
