"""ptcore.vmap / ptcore.func against torch.func: outputs equal on the same inputs."""
import numpy as np
import pytest

import ptcore
import ptcore.func as pfunc

try:
    import torch
    import torch.func as tfunc
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

rng = np.random.default_rng(0)


def R(*shape):
    return rng.standard_normal(shape)


def both(*arrays):
    return [torch.from_numpy(a.copy()) for a in arrays], [ptcore.from_numpy(a.copy())
                                                          for a in arrays]


def close(p, t, rtol=1e-10, atol=1e-12):
    if isinstance(t, (tuple, list)):
        assert isinstance(p, (tuple, list)) and len(p) == len(t)
        for a, b in zip(p, t):
            close(a, b, rtol, atol)
    elif isinstance(t, dict):
        assert set(p) == set(t)
        for k in t:
            close(p[k], t[k], rtol, atol)
    else:
        assert tuple(p.shape) == tuple(t.shape), (p.shape, t.shape)
        np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def test_vmap_is_lazy_and_same_object():
    assert ptcore.vmap is pfunc.vmap


@needs_torch
@pytest.mark.parametrize("case", range(8))
def test_vmap_matches_torch(case):
    x, y, w = R(5, 3), R(3, 5), R(3, 4)
    (tx, ty, tw), (px, py, pw) = both(x, y, w)
    if case == 0:      # default in_dims=0
        f = lambda lib: (lambda a: lib.dot(a, a))
        args_t, args_p, kw = (tx,), (px,), {}
    elif case == 1:    # per-arg in_dims with None
        f = lambda lib: (lambda a, m: a @ m)
        args_t, args_p, kw = (tx, tw), (px, pw), dict(in_dims=(0, None))
    elif case == 2:    # mapped over dim 1 of the second input
        f = lambda lib: (lambda a, b: a * b)
        args_t, args_p, kw = (tx, ty), (px, py), dict(in_dims=(0, 1))
    elif case == 3:    # out_dims=1
        f = lambda lib: (lambda a: a.exp() + 1)
        args_t, args_p, kw = (tx,), (px,), dict(out_dims=1)
    elif case == 4:    # tuple outputs, tuple out_dims
        f = lambda lib: (lambda a: (a.sum(), a * 2))
        args_t, args_p, kw = (tx,), (px,), dict(out_dims=(0, 1))
    elif case == 5:    # nested input structure
        f = lambda lib: (lambda pair: pair[0] - pair[1].sin())
        args_t, args_p, kw = ((tx, ty.T.contiguous()),), ((px, py.T.contiguous()),), {}
    elif case == 6:    # nested in_dims inside a tuple argument, negative dim
        f = lambda lib: (lambda pair, s: (pair[0] * s + pair[1]).sum(-1))
        args_t, args_p = ((tx, ty), 2.0), ((px, py), 2.0)
        kw = dict(in_dims=((0, -1), None))
    else:              # nested vmap: outer product
        f = lambda lib: lib.vmap(lib.vmap(lambda a, b: a * b, in_dims=(None, 0)),
                                 in_dims=(0, None))
        args_t, args_p, kw = (tx[:, 0], ty[0]), (px[:, 0], py[0]), {}
    if case == 7:
        close(f(ptcore)(*args_p), f(torch)(*args_t))
    else:
        close(ptcore.vmap(f(ptcore), **kw)(*args_p), torch.vmap(f(torch), **kw)(*args_t))


@needs_torch
def test_vmap_kwargs_chunk_and_dict_output():
    x = R(4, 3)
    (tx,), (px,) = both(x)

    def f(lib):
        return lambda a, scale=1.0: {"s": a.sum() * scale, "m": a.max()}
    close(pfunc.vmap(f(ptcore), chunk_size=2)(px, scale=3.0),
          tfunc.vmap(f(torch), chunk_size=2)(tx, scale=3.0))
    # out_dims=None for an output that does not depend on the mapped input
    g = lambda lib, c: (lambda a: (a * 2, c))
    cp, ct = ptcore.ones(2), torch.ones(2)
    close(pfunc.vmap(g(ptcore, cp), out_dims=(0, None))(px),
          tfunc.vmap(g(torch, ct), out_dims=(0, None))(tx))


@needs_torch
def test_vmap_errors():
    x = ptcore.randn(3, 2)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        ptcore.vmap(lambda a, b: a + b)(x, ptcore.randn(4, 2))
    with pytest.raises(ValueError, match="at least one input must be mapped"):
        ptcore.vmap(lambda a: a, in_dims=(None,))(x)
    with pytest.raises(ValueError, match="cannot vmap over non-Tensor"):
        ptcore.vmap(lambda a, b: a)(x, 3)
    with pytest.raises(ValueError, match="expected in_dim to satisfy -2 <= in_dim < 2"):
        ptcore.vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        ptcore.vmap(lambda a: 3)(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ptcore.vmap(lambda a: a, randomness="bad")
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        ptcore.vmap(lambda a: a, chunk_size=0)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ptcore.vmap(lambda a: a + ptcore.rand(2))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torch.vmap(lambda a: a + torch.rand(2))(torch.randn(3, 2))


def test_vmap_randomness_modes():
    x = ptcore.zeros(4, 3)
    ptcore.manual_seed(0)
    same = ptcore.vmap(lambda a: a + ptcore.rand(3), randomness="same")(x)
    assert bool((same == same[0]).all())
    ptcore.manual_seed(0)
    diff = ptcore.vmap(lambda a: a + ptcore.rand(3), randomness="different")(x)
    assert not bool((diff == diff[0]).all())
    ptcore.manual_seed(0)
    assert bool((ptcore.vmap(lambda a: a + ptcore.rand(3), randomness="different")(x) ==
                 diff).all())


@needs_torch
def test_vmap_gradients_flow():
    x = R(4, 3)
    (tx,), (px,) = both(x)
    tx.requires_grad_()
    px.requires_grad_()
    torch.vmap(lambda a: (a.sin() * a).sum())(tx).sum().backward()
    ptcore.vmap(lambda a: (a.sin() * a).sum())(px).sum().backward()
    close(px.grad, tx.grad)


@needs_torch
def test_grad_and_value():
    x, y = R(4), R(4)
    (tx, ty), (px, py) = both(x, y)

    def f(lib):
        return lambda a, b: (a.sin() * b).sum() + (a * a).sum()
    close(pfunc.grad(f(ptcore))(px, py), tfunc.grad(f(torch))(tx, ty))
    close(pfunc.grad(f(ptcore), argnums=(0, 1))(px, py),
          tfunc.grad(f(torch), argnums=(0, 1))(tx, ty))
    close(pfunc.grad_and_value(f(ptcore), argnums=1)(px, py),
          tfunc.grad_and_value(f(torch), argnums=1)(tx, ty))

    def h(lib):
        return lambda a: ((a ** 3).sum(), a.cos())
    gp, auxp = pfunc.grad(h(ptcore), has_aux=True)(px)
    gt, auxt = tfunc.grad(h(torch), has_aux=True)(tx)
    close((gp, auxp), (gt, auxt))
    # a dict argument
    d = lambda lib: (lambda p: (p["w"] * p["b"]).sum())
    close(pfunc.grad(d(ptcore))({"w": px, "b": py}), tfunc.grad(d(torch))({"w": tx, "b": ty}))
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        pfunc.grad(lambda a: a * 2)(px)
    # unused input: zeros, as torch
    close(pfunc.grad(lambda a, b: (a * 2).sum(), argnums=1)(px, py),
          tfunc.grad(lambda a, b: (a * 2).sum(), argnums=1)(tx, ty))
    assert not pfunc.grad(f(ptcore))(px, py).requires_grad


@needs_torch
def test_vjp_jvp():
    x, v = R(3, 2), R(3, 2)
    (tx, tv), (px, pv) = both(x, v)
    f = lambda a: (a.exp() * a).sum(0)
    out_t, fn_t = tfunc.vjp(f, tx)
    out_p, fn_p = pfunc.vjp(f, px)
    close(out_p, out_t)
    ct = R(2)
    close(fn_p(ptcore.from_numpy(ct)), fn_t(torch.from_numpy(ct)))
    g = lambda a, b: (a * b, a.sin())
    o_t, fn_t = tfunc.vjp(g, tx, tv)
    o_p, fn_p = pfunc.vjp(g, px, pv)
    close(o_p, o_t)
    c1, c2 = R(3, 2), R(3, 2)
    close(fn_p((ptcore.from_numpy(c1), ptcore.from_numpy(c2))),
          fn_t((torch.from_numpy(c1), torch.from_numpy(c2))))
    close(pfunc.jvp(f, (px,), (pv,)), tfunc.jvp(f, (tx,), (tv,)))
    close(pfunc.jvp(g, (px, pv), (pv, px)), tfunc.jvp(g, (tx, tv), (tv, tx)))


@needs_torch
def test_jacobians_and_hessian():
    x, y = R(3), R(3)
    (tx, ty), (px, py) = both(x, y)
    f = lambda lib: (lambda a, b: lib.stack([(a * b).sum(), (a.sin() * b ** 2).sum()]) * a[:2])
    for fn in ("jacrev", "jacfwd"):
        close(getattr(pfunc, fn)(f(ptcore))(px, py), getattr(tfunc, fn)(f(torch))(tx, ty))
        close(getattr(pfunc, fn)(f(ptcore), argnums=(0, 1))(px, py),
              getattr(tfunc, fn)(f(torch), argnums=(0, 1))(tx, ty))
    m = lambda lib: (lambda a: (a.sin(), a.reshape(3, 1) * a))
    close(pfunc.jacrev(m(ptcore))(px), tfunc.jacrev(m(torch))(tx))
    s = lambda a, b: (a.exp() * b).sum() + (a ** 3).prod()
    close(pfunc.hessian(s)(px, py), tfunc.hessian(s)(tx, ty), rtol=1e-9)
    close(pfunc.hessian(s, argnums=(0, 1))(px, py), tfunc.hessian(s, argnums=(0, 1))(tx, ty),
          rtol=1e-9)
    # jacrev of a vmapped function and vmap of grad (per-example gradients)
    X = R(5, 3)
    (tX,), (pX,) = both(X)
    close(ptcore.vmap(pfunc.grad(lambda a: (a.sin() * a).sum()))(pX),
          torch.vmap(tfunc.grad(lambda a: (a.sin() * a).sum()))(tX))


@needs_torch
def test_functional_call():
    lin_t = torch.nn.Linear(3, 2).double()
    lin_p = ptcore.nn.Linear(3, 2).double()
    w, b, x = R(2, 3), R(2), R(4, 3)
    (tw, tb, tx), (pw, pb, px) = both(w, b, x)
    out_t = tfunc.functional_call(lin_t, {"weight": tw, "bias": tb}, (tx,))
    out_p = pfunc.functional_call(lin_p, {"weight": pw, "bias": pb}, (px,))
    close(out_p, out_t)
    assert lin_p.weight.shape == (2, 3) and lin_p.weight is not pw
    # gradient with respect to the substituted parameters
    gp = pfunc.grad(lambda ps: pfunc.functional_call(lin_p, ps, px).sum())({"weight": pw,
                                                                             "bias": pb})
    gt = tfunc.grad(lambda ps: tfunc.functional_call(lin_t, ps, tx).sum())({"weight": tw,
                                                                             "bias": tb})
    close(gp, gt)


def _tied_module(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", lib.zeros((), dtype=lib.float64))
            self.a = lib.nn.Linear(3, 3, bias=False).double()
            self.b = lib.nn.Linear(3, 3, bias=False).double()
            self.b.weight = self.a.weight

        def forward(self, x):
            self.calls = self.calls + 1
            return self.b(self.a(x))
    return M()


@needs_torch
def test_functional_call_tied_weights_strict_and_write_back():
    # a value for one name of a tied weight replaces it under every name
    # (only 'a.weight' was replaced); a buffer the module assigns anew is
    # written back into the given dict; torch's strict / ambiguity errors
    w, x = R(3, 3), R(2, 3)
    results = []
    for lib in (ptcore, torch):
        m = _tied_module(lib)
        lw, lx = lib.from_numpy(w.copy()), lib.from_numpy(x.copy())
        given = {"a.weight": lw, "calls": lib.zeros((), dtype=lib.float64)}
        out = lib.func.functional_call(m, given, (lx,))
        assert float(given["calls"]) == 1 and float(m.calls) == 0
        assert m.a.weight is m.b.weight and m.a.weight is not lw
        with pytest.raises(ValueError, match="which are tied"):
            lib.func.functional_call(m, {"a.weight": lw, "b.weight": lw * 1}, (lx,))
        with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'calls'"):
            lib.func.functional_call(m, {"a.weight": lw}, (lx,), strict=True)
        with pytest.raises(ValueError, match=r"\['a.weight'\] appeared in multiple"):
            lib.func.functional_call(m, ({"a.weight": lw}, {"a.weight": lw}), (lx,))
        results.append(out)
    close(*results)


CLOSED_OVER_CASES = {
    "grad": lambda L, f, xs: L.func.grad(f)(xs[0]),
    "grad_and_value": lambda L, f, xs: L.func.grad_and_value(f)(xs[0])[1],
    "vmap_grad": lambda L, f, xs: L.func.vmap(L.func.grad(f))(xs),
    "vmap_jacrev": lambda L, f, xs: L.func.vmap(L.func.jacrev(f))(xs),
    "vmap_hessian": lambda L, f, xs: L.func.vmap(L.func.hessian(f))(xs),
    "jacrev_vector_out": lambda L, f, xs: L.func.jacrev(lambda x: L.tanh(x * xs[1]) * f(x))(xs[0]),
    "vjp": lambda L, f, xs: L.func.vjp(f, xs[0])[1](L.ones((), dtype=L.float64))[0],
}


@needs_torch
@pytest.mark.parametrize("key", sorted(CLOSED_OVER_CASES))
def test_transforms_stay_differentiable_in_closed_over_tensors(key):
    """As torch.func: the results depend differentiably on tensors the
    function closes over (a PINN trains its parameters through vmap(hessian))."""
    def run(L):
        w = L.tensor([[0.5, -0.3], [0.2, 0.8]], dtype=L.float64, requires_grad=True)
        xs = L.tensor([[0.1, 0.2], [0.3, -0.4], [1.0, 0.5]], dtype=L.float64)
        r = CLOSED_OVER_CASES[key](L, lambda x: L.tanh(x @ w).pow(3).sum(), xs)
        assert r.requires_grad
        return r.detach().numpy(), L.autograd.grad((r ** 2).sum(), w)[0].numpy()
    (rp, gp), (rt, gt) = run(ptcore), run(torch)
    np.testing.assert_allclose(rp, rt, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gp, gt, rtol=1e-10, atol=1e-12)


def test_transforms_detach_when_nothing_outside_requires_grad():
    w = ptcore.tensor([0.5, -0.3], dtype=ptcore.float64)
    g = pfunc.grad(lambda x: (x * w).sin().sum())(ptcore.tensor([0.1, 0.2], dtype=ptcore.float64))
    assert not g.requires_grad and g.grad_fn is None
    with ptcore.no_grad():
        w2 = w.clone().requires_grad_()
        g = pfunc.grad(lambda x: (x * w2).sin().sum())(ptcore.ones(2, dtype=ptcore.float64))
    assert not g.requires_grad


@needs_torch
def test_distribution_validation_under_vmap():
    """torch._is_all_true reduces over the vmap batch, so distributions
    validate their (batched) parameters and values inside vmap."""
    def run(L):
        D = L.distributions
        loc = L.func.vmap(lambda m: D.Normal(m, 1.0).log_prob(L.tensor(0.0)))(L.tensor([0.0, 1.0]))
        val = L.func.vmap(lambda x: D.Normal(L.tensor(0.0), 1.0).log_prob(x))(L.tensor([-1.0, 2.0]))
        g = L.func.vmap(L.func.grad(lambda m: D.Normal(m, 1.0).log_prob(L.tensor(0.5))))(
            L.tensor([0.0, 1.0]))
        # an invalid value is caught (the error message's repr of the batched
        # value then raises vmap's RuntimeError, in torch too)
        with pytest.raises(RuntimeError, match="vmap"):
            L.func.vmap(lambda x: D.Uniform(L.tensor(0.0), 1.0).log_prob(x))(L.tensor([0.5, 2.0]))
        return [t.numpy() for t in (loc, val, g)] + [
            L._is_all_true(L.tensor([True, False])).item(),
            L._is_any_true(L.tensor([True, False])).item()]
    for a, b in zip(run(ptcore), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@needs_torch
def test_replace_all_batch_norm_modules_then_vmap():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 2, 5, 5))
    outs = []
    for L, F in ((ptcore, pfunc), (torch, tfunc)):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.BatchNorm2d(2), L.nn.ReLU(),
                              L.nn.Sequential(L.nn.BatchNorm2d(2))).double()
        assert F.replace_all_batch_norm_modules_(net) is net
        bn = net[2][0]
        outs.append((bn.running_mean, bn.running_var, bn.num_batches_tracked,
                     bn.track_running_stats, sorted(net.state_dict())))
        outs.append(F.vmap(net)(L.tensor(x, dtype=L.float64)).detach().numpy())
    assert outs[0] == (None, None, None, False, outs[2][4]) and outs[2][:4] == outs[0][:4]
    np.testing.assert_allclose(outs[1], outs[3], rtol=1e-10)
