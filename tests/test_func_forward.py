"""ptcore.func's forward-mode transforms (jvp, linearize, jacfwd, hessian)
and autograd.functional's forward-mode paths, against torch.func /
torch.autograd.functional on the same float64 inputs."""
import numpy as np
import pytest

import ptcore
import ptcore.func as pf
from ptcore.autograd import functional as PF

torch = pytest.importorskip("torch")
tf = torch.func
TF = torch.autograd.functional

RNG = np.random.default_rng(1)


def _np(x):
    return x.detach().numpy()


def _same(a, b, rtol=1e-9, atol=1e-11):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y, rtol, atol)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k], rtol, atol)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _pair(*shapes, pos=False):
    arrs = [RNG.uniform(0.5, 1.5, s) if pos else RNG.standard_normal(s) for s in shapes]
    return [ptcore.tensor(a) for a in arrs], [torch.tensor(a) for a in arrs]


FUNCS = {
    "sin_prod": lambda m: (lambda x: x.sin() * x.prod()),
    "mlp": lambda m: (lambda x: m.tanh(x @ m.ones(3, 4, dtype=x.dtype) * 0.3).sum(-1)),
    "softmax_norm": lambda m: (lambda x: m.softmax(x, -1) * m.linalg.vector_norm(x)),
    "cumprod_logsumexp": lambda m: (lambda x: x.cumprod(0) + m.logsumexp(x, 0)),
    "var_std": lambda m: (lambda x: m.stack([x.var(), x.std(), x.amax()])),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jvp_matches_torch_func(name):
    (x,), (tx,) = _pair((3,))
    (v,), (tv,) = _pair((3,))
    _same(pf.jvp(FUNCS[name](ptcore), (x,), (v,)), tf.jvp(FUNCS[name](torch), (tx,), (tv,)))


def test_jvp_pytrees_and_aux():
    (a, b), (ta, tb) = _pair((2, 3), (3,))
    (va, vb), (tva, tvb) = _pair((2, 3), (3,))

    def f(m):
        def g(d, c):
            return {"y": (d["a"] * c).sin(), "z": (d["a"] @ c, c.exp())}, d["a"].sum()
        return g
    r = pf.jvp(f(ptcore), ({"a": a}, b), ({"a": va}, vb), has_aux=True)
    e = tf.jvp(f(torch), ({"a": ta}, tb), ({"a": tva}, tvb), has_aux=True)
    _same(r[0], e[0])
    _same(r[1], e[1])
    _same(r[2], e[2])


def test_jvp_errors():
    x = ptcore.ones(3)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        pf.jvp(ptcore.sin, x, (x,))
    with pytest.raises(RuntimeError, match="same python structure"):
        pf.jvp(ptcore.sin, (x,), x)
    with pytest.raises(RuntimeError, match="same python structure"):
        pf.jvp(ptcore.sin, (x,), (x, x))
    with pytest.raises(RuntimeError, match=r"size \[3\] while the given forward gradient"):
        pf.jvp(ptcore.sin, (x,), (ptcore.ones(4),))
    with pytest.raises(RuntimeError, match="return only tensors"):
        pf.jvp(lambda x: 3, (x,), (x,))
    with pytest.raises(RuntimeError, match="at least one Tensor"):
        pf.jvp(ptcore.sin, (), ())
    with pytest.raises(RuntimeError, match=r"\(output, aux\)"):
        pf.jvp(lambda x: x, (x,), (x,), has_aux=True)
    with pytest.raises(ValueError, match="floating point"):
        pf.jvp(ptcore.sin, (ptcore.ones(3, dtype=ptcore.int64),), (x,))


def test_jvp_outputs_carry_no_tangent_after():
    import ptcore.autograd.forward_ad as fwAD
    x = ptcore.ones(3)
    out, t = pf.jvp(lambda x: x * 2, (x,), (x,))
    with fwAD.dual_level():
        assert fwAD.unpack_dual(out).tangent is None


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacfwd_matches_torch(name):
    (x,), (tx,) = _pair((3,))
    _same(pf.jacfwd(FUNCS[name](ptcore))(x), tf.jacfwd(FUNCS[name](torch))(tx))


def test_jacfwd_argnums_outputs_aux():
    (a, b), (ta, tb) = _pair((2, 3), (3,))

    def f(m):
        return lambda a, b: (((a * b).sum(0), a @ b), (a + 1).sum())
    r = pf.jacfwd(f(ptcore), argnums=(0, 1), has_aux=True)(a, b)
    e = tf.jacfwd(f(torch), argnums=(0, 1), has_aux=True)(ta, tb)
    _same(r[0], e[0])
    _same(r[1], e[1])
    _same(pf.jacfwd(f(ptcore), argnums=1, has_aux=True)(a, b)[0],
          tf.jacfwd(f(torch), argnums=1, has_aux=True)(ta, tb)[0])
    with pytest.raises(RuntimeError, match="only 2 positional inputs"):
        pf.jacfwd(f(ptcore), argnums=2)(a, b)


@pytest.mark.parametrize("name", ["sin_prod", "mlp", "softmax_norm", "var_std"])
def test_hessian_matches_torch(name):
    (x,), (tx,) = _pair((3,))

    def scal(m):
        g = FUNCS[name](m)
        return lambda x: (g(x) ** 2).sum()
    _same(pf.hessian(scal(ptcore))(x), tf.hessian(scal(torch))(tx), rtol=1e-8)


def test_hessian_argnums_tuple():
    (a, b), (ta, tb) = _pair((3,), (3,))

    def f(m):
        return lambda a, b: (a.sin() * b.exp() * a.prod()).sum()
    _same(pf.hessian(f(ptcore), argnums=(0, 1))(a, b),
          tf.hessian(f(torch), argnums=(0, 1))(ta, tb), rtol=1e-8)


@pytest.mark.parametrize("outer,inner", [("jacfwd", "jacfwd"), ("jacrev", "jacfwd"),
                                         ("jacfwd", "jacrev")])
def test_nested_transforms(outer, inner):
    (x,), (tx,) = _pair((3,), pos=True)

    def f(m):
        return lambda x: (x.log() * x.cumprod(0)).sum()
    r = getattr(pf, outer)(getattr(pf, inner)(f(ptcore)))(x)
    e = getattr(tf, outer)(getattr(tf, inner)(f(torch)))(tx)
    _same(r, e, rtol=1e-8)


def test_third_order_forward():
    (x,), (tx,) = _pair((2,))

    def f(m):
        return lambda x: (x.sin() * x.prod()).sum()
    _same(pf.jacfwd(pf.jacfwd(pf.jacrev(f(ptcore))))(x),
          tf.jacfwd(tf.jacfwd(tf.jacrev(f(torch))))(tx), rtol=1e-8)


def test_jvp_of_grad_is_hvp():
    (x,), (tx,) = _pair((3,))
    (v,), (tv,) = _pair((3,))

    def f(m):
        return lambda x: (x.exp() * x.sin()).sum()
    _same(pf.jvp(pf.grad(f(ptcore)), (x,), (v,)), tf.jvp(tf.grad(f(torch)), (tx,), (tv,)))


def test_func_jvp_inside_a_dual_level():
    import ptcore.autograd.forward_ad as fwAD
    x = ptcore.tensor([0.5, 1.0], dtype=ptcore.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ptcore.ones(2, dtype=ptcore.float64))
        out, jv = pf.jvp(lambda y: y ** 3, (d,), (ptcore.ones(2, dtype=ptcore.float64),))
        # the outer level's tangent flows through: d(3 y^2)/dy = 6 y
        np.testing.assert_allclose(fwAD.unpack_dual(jv).tangent.numpy(), [3.0, 6.0])
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), [0.75, 3.0])


def test_linearize_matches_torch():
    (x,), (tx,) = _pair((3,))
    (v,), (tv,) = _pair((3,))

    def f(m):
        return lambda x: x.sin() * x.sum()
    out, fn = pf.linearize(f(ptcore), x)
    tout, tfn = tf.linearize(f(torch), tx)
    _same(out, tout)
    _same(fn(v), tfn(tv))
    with pytest.raises(RuntimeError, match="shape"):
        fn(ptcore.ones(4, dtype=ptcore.float64))


# ---------------------------------------------------------------------------
# autograd.functional
# ---------------------------------------------------------------------------

def test_functional_jvp_forward_and_double_vjp_agree_with_torch():
    (a, b), (ta, tb) = _pair((3,), (3,))
    (va, vb), (tva, tvb) = _pair((3,), (3,))

    def f(m):
        return lambda x, y: (x.exp() * y, x @ y)
    e = TF.jvp(f(torch), (ta, tb), (tva, tvb))
    _same(PF.jvp(f(ptcore), (a, b), (va, vb)), e)
    _same(PF.jvp(f(ptcore), (a, b), (va, vb), create_graph=True), e)
    with pytest.raises(RuntimeError, match="invalid size"):
        PF.jvp(f(ptcore), (a, b), (va, ptcore.ones(4, dtype=ptcore.float64)))
    with pytest.raises(RuntimeError, match="invalid length"):
        PF.jvp(f(ptcore), (a, b), (va,))


def test_functional_hvp_forward_over_reverse():
    (x,), (tx,) = _pair((3,))
    (v,), (tv,) = _pair((3,))

    def f(m):
        return lambda x: (x.sin() * x.prod()).sum()
    _same(PF.hvp(f(ptcore), x, v), TF.hvp(f(torch), tx, tv))
    _same(PF.hvp(f(ptcore), x, v, create_graph=True), TF.hvp(f(torch), tx, tv))

    def g(m):
        return lambda x, y: (x * y.exp()).sum()
    (a, b), (ta, tb) = _pair((2,), (2,))
    _same(PF.hvp(g(ptcore), (a, b), (a, b)), TF.hvp(g(torch), (ta, tb), (ta, tb)))


def test_functional_forward_mode_jacobian_and_hessian():
    (x,), (tx,) = _pair((3,))

    def f(m):
        return lambda x: x.sin() * x.prod()
    _same(PF.jacobian(f(ptcore), x, strategy="forward-mode", vectorize=True),
          TF.jacobian(f(torch), tx, strategy="forward-mode", vectorize=True))
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        PF.jacobian(f(ptcore), x, strategy="forward-mode")
    with pytest.raises(ValueError, match="strategy"):
        PF.jacobian(f(ptcore), x, strategy="sideways")

    def s(m):
        return lambda x: (x.sin() * x.prod()).sum()
    _same(PF.hessian(s(ptcore), x, outer_jacobian_strategy="forward-mode", vectorize=True),
          TF.hessian(s(torch), tx, outer_jacobian_strategy="forward-mode", vectorize=True))
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        PF.hessian(s(ptcore), x, outer_jacobian_strategy="forward-mode")


def test_jvp_through_a_module_with_functional_call():
    outs = []
    for m, F in ((ptcore, pf), (torch, tf)):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv2d(2, 3, 3), m.nn.BatchNorm2d(3), m.nn.ReLU(),
                              m.nn.Flatten(), m.nn.Linear(12, 4), m.nn.LayerNorm(4))
        net = net.double().eval()
        names = [(k, tuple(v.shape)) for k, v in net.named_parameters()]
        p = {k: m.tensor(np.random.default_rng(i).standard_normal(s))
             for i, (k, s) in enumerate(names)}
        t = {k: m.tensor(np.random.default_rng(100 + i).standard_normal(s))
             for i, (k, s) in enumerate(names)}
        x = m.tensor(np.random.default_rng(7).standard_normal((5, 2, 4, 4)))
        outs.append(F.jvp(lambda q: F.functional_call(net, q, (x,)), (p,), (t,)))
    _same(outs[0], outs[1], rtol=1e-8, atol=1e-10)


def test_vmap_of_jvp_with_unbatched_primal_batched_tangent():
    # the NTK tutorial's empirical_ntk_ntk_vps: vmap over tangents of one primal
    (p, T), (tp, tT) = _pair((3,), (4, 3))
    _same(pf.vmap(lambda t: pf.jvp(ptcore.sin, (p,), (t,))[1])(T),
          tf.vmap(lambda t: tf.jvp(torch.sin, (tp,), (t,))[1])(tT))
    (W,), (tW,) = _pair((3, 5))
    _same(pf.vmap(lambda t: pf.jvp(lambda x: ptcore.tanh(x @ W).sum(0) * x.norm(), (p,), (t,)))(T),
          tf.vmap(lambda t: tf.jvp(lambda x: torch.tanh(x @ tW).sum(0) * x.norm(), (tp,), (t,)))(tT))
    # forward over reverse under vmap: jvp of grad, one unit tangent per sample
    f = lambda m: (lambda z: (z ** 3 * z.sin()).sum())
    E, tE = ptcore.eye(3, dtype=ptcore.float64), torch.eye(3, dtype=torch.float64)
    _same(pf.vmap(lambda t: pf.jvp(pf.grad(f(ptcore)), (p,), (t,))[1])(E),
          tf.vmap(lambda t: tf.jvp(tf.grad(f(torch)), (tp,), (t,))[1])(tE))


def test_jacfwd_is_vmapped_and_matches_torch_on_modules():
    rng = np.random.default_rng(5)
    ws = [rng.standard_normal((6, 4)), rng.standard_normal(6), rng.standard_normal((2, 6)),
          rng.standard_normal(2)]

    def net(lib, W1, b1, W2, b2):
        return lambda x: lib.tanh(x @ W1.T + b1) @ W2.T + b2
    pw, tw = [ptcore.tensor(w) for w in ws], [torch.tensor(w) for w in ws]
    (x,), (tx,) = _pair((3, 4))
    _same(pf.jacfwd(net(ptcore, *pw))(x), tf.jacfwd(net(torch, *tw))(tx))
    _same(pf.hessian(lambda z: net(ptcore, *pw)(z).sum())(x[0]),
          tf.hessian(lambda z: net(torch, *tw)(z).sum())(tx[0]))
    # dict input, aux, several argnums
    (a, b), (ta, tb) = _pair((2,), (3,))
    _same(pf.jacfwd(lambda d: d["a"] * d["b"].sum())({"a": a, "b": b}),
          tf.jacfwd(lambda d: d["a"] * d["b"].sum())({"a": ta, "b": tb}))
    jp, auxp = pf.jacfwd(lambda u, v: (u.sin() * v.sum(), u.cos()), argnums=(0, 1),
                         has_aux=True)(a, b)
    jt, auxt = tf.jacfwd(lambda u, v: (u.sin() * v.sum(), u.cos()), argnums=(0, 1),
                         has_aux=True)(ta, tb)
    _same(jp, jt)
    _same(auxp, auxt)
    # a random op under jacfwd's vmap: torch's randomness rule
    with pytest.raises(RuntimeError, match="random"):
        pf.jacfwd(lambda u: u * ptcore.rand(2, dtype=u.dtype))(a)


def test_autograd_functional_vectorized_jacobians():
    (x,), (tx,) = _pair((5,))
    (W,), (tW,) = _pair((5,))
    f = lambda lib, W: (lambda z: lib.tanh(z * W) * z.sum())
    for strategy in ("reverse-mode", "forward-mode"):
        _same(PF.jacobian(f(ptcore, W), x, vectorize=True, strategy=strategy),
              TF.jacobian(f(torch, tW), tx, vectorize=True, strategy=strategy))
    g = lambda a, b: (a * b, (a.sin() * b).sum())
    (a, b), (ta, tb) = _pair((3,), (3,))
    for strategy in ("reverse-mode", "forward-mode"):
        rp = PF.jacobian(g, (a, b), vectorize=True, strategy=strategy)
        rt = TF.jacobian(g, (ta, tb), vectorize=True, strategy=strategy)
        assert type(rp) is type(rt) and type(rp[0]) is type(rt[0])
        _same(rp, rt)
    s = lambda z: (z ** 3 * z.exp()).sum()
    _same(PF.hessian(s, x, vectorize=True, outer_jacobian_strategy="forward-mode"),
          TF.hessian(s, tx, vectorize=True, outer_jacobian_strategy="forward-mode"))
