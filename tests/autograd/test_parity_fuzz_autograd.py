"""Differential checks of autograd APIs against torch (the oracle):
autograd.functional's checks, grad modes, module hooks and the rest of the
autograd surface real programs use."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _mk(T, shape, seed=0, requires_grad=False):
    r = np.random.RandomState(seed).randn(*shape)
    return T.tensor(r.tolist(), dtype=T.float64, requires_grad=requires_grad)


def _outcome(fn, T):
    """("ok", value as nested lists) or ("exc", names of the exception's types)."""
    try:
        r = fn(T)
    except Exception as e:    # noqa: BLE001 -- the type is what is compared
        return ("exc", [c.__name__ for c in type(e).__mro__])
    return ("ok", _plain(r))


def _plain(x):
    if isinstance(x, (torch.Tensor, ptcore.Tensor)):
        return np.asarray(x.detach().double().numpy()).round(8).tolist()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _same(fn):
    a, b = _outcome(fn, torch), _outcome(fn, ptcore)
    if a[0] == b[0] == "exc":       # ptcore's error is (a subclass of) torch's
        assert a[1][0] in b[1], (a, b)
    else:
        assert a == b, (a, b)
    return a


# ---- autograd.functional: the checks torch makes of functions and vectors

def _quad(x):
    return (x * x).sum()


@pytest.mark.parametrize("case", [
    # vhp: one one-element Tensor out, v given unless the input has one element
    lambda T: T.autograd.functional.vhp(lambda x: x, _mk(T, (3,)), _mk(T, (3,), 1)),
    lambda T: T.autograd.functional.vhp(_quad, _mk(T, (3,))),
    lambda T: T.autograd.functional.vhp(_quad, _mk(T, (3,)), _mk(T, (2,))),
    lambda T: T.autograd.functional.vhp(lambda x: ((x * x).sum(),), _mk(T, (3,)), _mk(T, (3,))),
    lambda T: T.autograd.functional.hvp(lambda x: ((x * x).sum(),), _mk(T, (3,)), _mk(T, (3,))),
    lambda T: T.autograd.functional.hessian(lambda x: ((x * x).sum(),), _mk(T, (3,))),
    # strict: a linear function's jacobian is independent of the input
    lambda T: T.autograd.functional.hessian(lambda x: x.sum(), _mk(T, (3,)), strict=True),
    lambda T: T.autograd.functional.hessian(lambda x, y: (x * x).sum(),
                                            (_mk(T, (3,)), _mk(T, (3,), 1)), strict=True),
    lambda T: T.autograd.functional.hvp(lambda x: x.sum(), _mk(T, (3,)), _mk(T, (3,), 1),
                                        strict=True),
    lambda T: T.autograd.functional.vhp(lambda x: x.sum(), _mk(T, (3,)), _mk(T, (3,), 1),
                                        strict=True),
    lambda T: T.autograd.functional.vhp(lambda x: T.tensor(1.0), _mk(T, (3,)), _mk(T, (3,), 1),
                                        strict=True),
    lambda T: T.autograd.functional.hessian(_quad, _mk(T, (3,)), strict=True, vectorize=True),
    # outputs must be Tensors
    lambda T: T.autograd.functional.jacobian(lambda x: 3, _mk(T, (3,))),
    lambda T: T.autograd.functional.vjp(lambda x: 3, _mk(T, (3,))),
    # the strategy names
    lambda T: T.autograd.functional.jacobian(lambda x: x, _mk(T, (3,)), strategy="x"),
    lambda T: T.autograd.functional.hessian(_quad, _mk(T, (3,)), outer_jacobian_strategy="x"),
])
def test_functional_checks_raise_as_torch(case):
    assert _same(case)[0] == "exc"


@pytest.mark.parametrize("case", [
    lambda T: T.autograd.functional.hessian(_quad, _mk(T, (3,)), strict=True),
    lambda T: T.autograd.functional.hessian(lambda x, y: (x * x * y).sum(),
                                            (_mk(T, (3,)), _mk(T, (3,), 1))),
    lambda T: T.autograd.functional.vhp(lambda x, y: (x * x * y).sum(),
                                        (_mk(T, (3,)), _mk(T, (3,), 1)),
                                        (_mk(T, (3,), 2), _mk(T, (3,), 3)), strict=True),
    lambda T: T.autograd.functional.hvp(lambda x: (x.sin() * x).sum(), _mk(T, (3,)),
                                        _mk(T, (3,), 1), strict=True),
    lambda T: T.autograd.functional.vhp(lambda x: (x ** 3).sum(), _mk(T, (1,))),
])
def test_functional_values_match_torch(case):
    assert _same(case)[0] == "ok"


# ---- grad modes

def test_no_grad_decorating_a_class_builds_it_without_grad():
    for T in (torch, ptcore):
        x = T.ones(2, requires_grad=True)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)

            @T.no_grad()
            class Holder:
                def __init__(self, v):
                    self.y = v * 2

        h = Holder(x)
        assert type(h).__name__ == "Holder"
        assert h.y.requires_grad is False
    with pytest.warns(FutureWarning):
        ptcore.enable_grad()(type("C", (), {}))


# ---- torch.func

@pytest.mark.parametrize("case", [
    lambda T: T.func.grad(lambda x: x * 2)(3.0),
    lambda T: T.func.vjp(lambda x: x, 3.0),
    lambda T: T.func.jacrev(lambda x: x)(3.0),
    lambda T: T.func.grad(lambda x: (x[0] * 1).sum())([T.ones(2), 3]),
])
def test_func_transforms_reject_non_tensor_inputs_as_torch(case):
    a = _same(case)
    assert a[0] == "exc" and a[1][0] == "ValueError"


# ---- derivative formulas

def _grads_and_tangent(T, f, x0, tangent):
    """f(x), the first and second gradients (of a fixed weighting) and the
    forward-mode tangent, as nested lists (None for an absent gradient)."""
    x = T.tensor(x0, dtype=T.float64, requires_grad=True)
    y = f(T, x)
    g, = T.autograd.grad((y * 1.3).sum(), x, create_graph=True)
    g2 = None
    if g.requires_grad:
        g2, = T.autograd.grad((g * g).sum() + g.sin().sum(), x, allow_unused=True)
    fa = T.autograd.forward_ad
    with fa.dual_level():
        d = fa.make_dual(x.detach(), T.tensor(tangent, dtype=T.float64))
        t = fa.unpack_dual(f(T, d)).tangent
    return [_plain(v) if v is not None else None for v in (y, g, g2, t)]


@pytest.mark.parametrize("f", [
    lambda T, x: x.std(1, correction=0),
    lambda T, x: x.std(),
    lambda T, x: T.std_mean(x, 1)[0],
    lambda T, x: T.std_mean(x, 1, correction=0)[0] * 2,
])
def test_std_where_the_std_is_zero_has_zero_derivatives(f):
    # row 0 is constant: torch's std backward/jvp are 0 there (NaN before,
    # in the double backward and the tangent)
    x0, t0 = [[0.3, 0.3], [0.1, 0.5]], [[1.0, 2.0], [1.0, 1.0]]
    a = _grads_and_tangent(torch, f, x0, t0)
    b = _grads_and_tangent(ptcore, f, x0, t0)
    for u, v in zip(a, b):
        np.testing.assert_allclose(np.array(v, dtype=float), np.array(u, dtype=float),
                                   atol=1e-12)


@pytest.mark.parametrize("f", [
    lambda T, x: x.mean(-1, keepdim=True),
    lambda T, x: x.var(0),
    lambda T, x: x.std(-1),
    lambda T, x: x.sum(0) * x,
    lambda T, x: x.logsumexp(0),
    lambda T, x: x.norm(dim=-1),
])
def test_reductions_of_a_0d_tensor_over_dim_0_or_minus_1(f):
    # dim 0 / -1 of a 0-d tensor: IndexError in the backward/jvp before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # var's degrees of freedom
        a = _grads_and_tangent(torch, f, 0.7, 0.5)
        b = _grads_and_tangent(ptcore, f, 0.7, 0.5)
    for u, v in zip(a, b):
        np.testing.assert_allclose(np.array(v, dtype=float), np.array(u, dtype=float),
                                   atol=1e-12, equal_nan=True)


def test_rrelu_eval_gradient_is_in_the_graph_under_create_graph():
    outs = []
    for T in (torch, ptcore):
        x = T.tensor([[0.3, -0.5]], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(T.nn.functional.rrelu(x, training=False).sum(), x,
                             create_graph=True)
        outs.append((g.requires_grad, g.grad_fn.name(), _plain(g),
                     _plain(T.autograd.grad(g.sum(), x)[0])))
    assert outs[0] == outs[1]


# ---- hooks on graph nodes and modules: their results are checked as torch's

def _exp_node_hook(kind, result):
    def case(T):
        x = _mk(T, (2, 3), requires_grad=True)
        y = x.exp()
        if kind == "post":
            y.grad_fn.register_hook(lambda gi, go: result(T, gi[0]))
        else:
            y.grad_fn.register_prehook(lambda go: result(T, go[0]))
        y.sum().backward()
        return x.grad
    return case


@pytest.mark.parametrize("case", [
    _exp_node_hook("post", lambda T, g: (g[:1],)),                 # a smaller size
    _exp_node_hook("post", lambda T, g: (g[0],)),                  # a broadcastable size
    _exp_node_hook("post", lambda T, g: (g.float(),)),             # another dtype
    _exp_node_hook("pre", lambda T, g: (g[:1],)),
    _exp_node_hook("pre", lambda T, g: (g.float(),)),
    _exp_node_hook("pre", lambda T, g: (g, g)),                    # too many values
])
def test_node_hook_results_are_checked(case):
    a = _same(case)
    assert a[0] == "exc" and a[1][0] == "RuntimeError"


def test_node_hook_results_of_the_right_kind_replace_the_gradients():
    assert _same(_exp_node_hook("post", lambda T, g: (g * 3,)))[0] == "ok"
    assert _same(_exp_node_hook("pre", lambda T, g: (g * 3,)))[0] == "ok"
    assert _same(_exp_node_hook("post", lambda T, g: (None,)))[0] == "ok"


def test_module_full_backward_hook_changing_the_size_raises():
    def case(T):
        m = T.nn.Linear(3, 2).double()
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0][:1],))
        m(_mk(T, (2, 3), requires_grad=True)).sum().backward()
    a = _same(case)
    assert a[0] == "exc" and a[1][0] == "RuntimeError"


# ---- torch.func over ptcore's kernel-backed ops and the threshold-like backwards

def _np_in(T, a):
    return T.tensor(np.asarray(a).tolist(), dtype=T.float64)


_X4 = np.random.RandomState(0).randn(1, 2, 4, 4)
_W3 = np.random.RandomState(1).randn(1, 2, 3, 3)


@pytest.mark.parametrize("f", [
    lambda T, a, w: T.nn.functional.avg_pool2d(T.nn.functional.conv2d(a, w), 2).pow(2).sum(),
    lambda T, a, w: T.nn.functional.adaptive_avg_pool2d(a * w.sum(), 1).pow(2).sum(),
    lambda T, a, w: T.nn.functional.interpolate(a * w.sum(), scale_factor=2,
                                                mode="bilinear").pow(2).sum(),
    lambda T, a, w: T.nn.functional.unfold(a, 2).pow(2).sum() * w.sum(),
    lambda T, a, w: T.nn.functional.lp_pool2d(a.abs() + 0.1, 2, 2).sum() * w.sum(),
])
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian"])
def test_func_transforms_through_kernel_backed_functions(f, transform):
    # these ops' autograd Functions run kernels on their tensors' memory: under
    # vmap (jacrev/jacfwd/hessian) they raised a kernel error, or (a batched
    # one-element tensor) read its poisoned memory; now they run per sample
    res = []
    for T in (torch, ptcore):
        a, w = _np_in(T, _X4), _np_in(T, _W3)
        if transform == "hessian":
            r = T.func.hessian(lambda a: f(T, a, w))(a)
        else:
            r = getattr(T.func, transform)(lambda a, w: f(T, a, w), argnums=(0, 1))(a, w)
        res.append([np.asarray(t.detach().numpy()) for t in (r if isinstance(r, tuple) else (r,))])
    for u, v in zip(*res):
        np.testing.assert_allclose(v, u, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [
    lambda T, a: a.relu().pow(3).sum(),
    lambda T, a: T.nn.functional.hardtanh(a).pow(3).sum(),
    lambda T, a: T.nn.functional.threshold(a, 0.1, 0.0).pow(3).sum(),
    lambda T, a: T.nn.functional.max_pool1d(a.view(1, 1, 3), 2).pow(3).sum(),
    lambda T, a: T.nn.functional.gelu(a[:1].reshape(())) * a.sum(),
])
def test_second_derivatives_through_threshold_backwards(f):
    # relu's threshold backward: its kernel dropped the tangents (jacfwd(jacrev),
    # forward-over-reverse gave zeros / None) and its zero link cut the batched
    # graph (jacrev(jacrev) gave zeros); gelu's one-pass kernel read a batched
    # one-element cotangent's memory (NaN)
    res = []
    for T in (torch, ptcore):
        x = T.tensor([0.5, -0.3, 1.2], dtype=T.float64)
        r = [T.func.hessian(lambda a: f(T, a))(x),
             T.func.jacrev(T.func.jacrev(lambda a: f(T, a)))(x)]
        fa = T.autograd.forward_ad
        with fa.dual_level():
            d = fa.make_dual(x.clone().requires_grad_(), T.ones(3, dtype=T.float64))
            g, = T.autograd.grad(f(T, d), d, create_graph=True)
            r.append(fa.unpack_dual(g).tangent)
        res.append([np.asarray(t.detach().numpy()) for t in r])
    for u, v in zip(*res):
        np.testing.assert_allclose(v, u, rtol=1e-9, atol=1e-12)


def test_load_state_dict_into_meta_parameters_warns_without_assign():
    for T in (torch, ptcore):
        with T.device("meta"):
            m = T.nn.Linear(2, 2)
        with pytest.warns(UserWarning, match="assign=True"):
            m.load_state_dict({"weight": T.ones(2, 2), "bias": T.zeros(2)})
        assert m.weight.is_meta
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.load_state_dict({"weight": T.ones(2, 2), "bias": T.zeros(2)}, assign=True)
        assert not m.weight.is_meta


@pytest.mark.parametrize("case", [
    # training batch norm under vmap with unbatched running statistics
    lambda T: T.func.vmap(T.nn.BatchNorm1d(3).double())(_mk(T, (2, 4, 3))),
    lambda T: T.func.vmap(lambda x: T.nn.functional.batch_norm(
        x, T.zeros(3, dtype=T.float64), None, training=True))(_mk(T, (2, 4, 3))),
    # stack_module_state of models whose parameters differ in requires_grad
    lambda T: T.func.stack_module_state(
        [T.nn.Linear(3, 2), T.nn.Linear(3, 2).requires_grad_(False)]),
])
def test_func_raises_as_torch(case):
    a = _same(case)
    assert a[0] == "exc" and a[1][0] == "RuntimeError"


def test_vmap_batch_norm_training_without_or_with_batched_statistics_runs():
    for T in (torch, ptcore):
        bn = T.nn.BatchNorm1d(3, track_running_stats=False).double()
        assert tuple(T.func.vmap(bn)(_mk(T, (2, 4, 3))).shape) == (2, 4, 3)
    _same(lambda T: T.func.vmap(lambda x, rm, rv: T.nn.functional.batch_norm(
        x, rm, rv, training=True))(_mk(T, (2, 4, 3)), T.zeros(2, 3, dtype=T.float64),
                                   T.ones(2, 3, dtype=T.float64)))


def test_inference_mode_ops_carry_no_forward_tangents():
    for T in (torch, ptcore):
        fa = T.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(_mk(T, (2, 3)), _mk(T, (2, 3), 1))
            with T.inference_mode():
                y = x * 2
            z = x * 2
            assert fa.unpack_dual(y).tangent is None
            np.testing.assert_allclose(fa.unpack_dual(z).tangent.numpy(),
                                       2 * _mk(T, (2, 3), 1).numpy())


def test_rrelu_forward_ad():
    # rrelu's op is random: it carried no tangent; its composite does
    for T in (torch, ptcore):
        fa = T.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(T.tensor([0.5, -0.5], dtype=T.float64),
                             T.ones(2, dtype=T.float64))
            t = fa.unpack_dual(T.nn.functional.rrelu(x, training=False)).tangent
            np.testing.assert_allclose(t.numpy(), [1.0, (1 / 8 + 1 / 3) / 2])
            y = T.nn.functional.rrelu(x, training=True)
            t = fa.unpack_dual(y).tangent
            np.testing.assert_allclose(t.numpy(), (y / x).detach().numpy())
            with pytest.raises(NotImplementedError):
                T.nn.functional.rrelu(x * 1, training=False, inplace=True)


@pytest.mark.parametrize("f", [
    lambda T, a: T.nn.functional.dropout(a, 0.5),
    lambda T, a: T.nn.Dropout(0.3)(a),
    lambda T, a: T.nn.functional.dropout2d(a.reshape(1, 2, 2, 4), 0.5).reshape(2, 8),
    lambda T, a: T.nn.functional.dropout(a * 1, 0.5, inplace=True),
])
def test_dropout_in_training_carries_forward_tangents(f):
    # dropout's op is random: it carried no tangent (jvp / jacfwd gave zeros)
    for T in (torch, ptcore):
        fa = T.autograd.forward_ad
        x0 = T.arange(16, dtype=T.float64).reshape(2, 8) / 7 - 1.01
        T.manual_seed(0)
        with fa.dual_level():
            y = f(T, fa.make_dual(x0, 2 * T.ones(2, 8, dtype=T.float64)))
            p, t = fa.unpack_dual(y)
            assert t is not None
            np.testing.assert_allclose((t * x0).numpy(), (2 * p).numpy(), atol=1e-12)
    ptcore.manual_seed(0)
    j = ptcore.func.jacfwd(lambda a: ptcore.nn.functional.dropout(a, 0.5),
                           randomness="same")(ptcore.ones(64, dtype=ptcore.float64))
    assert sorted(set(j.reshape(-1).tolist())) == [0.0, 2.0]


def test_alpha_dropout_and_gumbel_softmax_carry_forward_tangents():
    for T in (torch, ptcore):
        T.manual_seed(0)
        fa = T.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(T.arange(64, dtype=T.float64) / 3, 2 * T.ones(64, dtype=T.float64))
            t = fa.unpack_dual(T.nn.functional.alpha_dropout(x, 0.5, training=True)).tangent
            vals = sorted(set(round(v, 6) for v in t.tolist()))
            assert vals[0] == 0.0 and len(vals) <= 2
            t = fa.unpack_dual(T.nn.functional.gumbel_softmax(x, tau=1.0)).tangent
            assert t is not None and abs(float(t.sum())) < 1e-9
