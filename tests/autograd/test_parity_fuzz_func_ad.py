"""Differential checks of torch.func, forward AD, autograd.Function and the
autograd.functional API against torch (the oracle): the differences found by
fuzzing, each pinned here."""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

LIBS = (torch, ptcore)


def _t(lib, a, rg=False):
    return lib.tensor(a, dtype=lib.float64, requires_grad=rg)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(y) for y in x]
    return np.asarray(x.detach().tolist(), dtype=float)


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)


def _both(f):
    """f(lib) for torch and ptcore: the same values, or the same exception type."""
    res = []
    for lib in LIBS:
        try:
            res.append(("ok", f(lib)))
        except Exception as e:      # noqa: BLE001 - the type is what is compared
            res.append(("err", type(e)))
    (kt, vt), (kp, vp) = res
    assert kt == kp, res
    if kt == "err":
        assert vt is vp, res
        return None
    return vt, vp


# ---- autograd.functional.jvp: strict mode checks as torch's

_X = [1.0, -2.0, 3.0]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", [
    lambda L: (lambda x, y: x * 2, (_t(L, _X), _t(L, [[1.0, 2.0, 3.0]]))),   # independent of y
    lambda L: (lambda x: _t(L, _X), _t(L, _X)),                               # constant output
    lambda L: (lambda x: x * 2, _t(L, _X)),                                   # linear
    lambda L: (lambda x: (x * 2, x.exp()), _t(L, _X)),
    lambda L: (lambda x: x.exp(), _t(L, _X)),
    lambda L: (lambda x: x.relu(), _t(L, _X)),
])
def test_functional_jvp_strict_raises_as_torch(case, create_graph):
    def f(L):
        fn, ins = case(L)
        v = tuple(ptcore.ones_like(i) if L is ptcore else torch.ones_like(i) for i in ins) \
            if isinstance(ins, tuple) else L.ones_like(ins)
        return L.autograd.functional.jvp(fn, ins, v, create_graph=create_graph, strict=True)
    r = _both(f)
    if r is not None:
        _same(_np(r[0][1]), _np(r[1][1]))


@pytest.mark.parametrize("name", ["vjp", "vhp", "hvp"])
def test_functional_strict_create_graph_needs_a_graph_in_the_inputs(name):
    fn = {"vjp": lambda L, x: x * 2, "vhp": lambda L, x: (x * x).sum(),
          "hvp": lambda L, x: (x * x).sum()}[name]
    _both(lambda L: getattr(L.autograd.functional, name)(
        lambda x: fn(L, x), _t(L, _X), _t(L, _X), create_graph=True, strict=True))


# ---- threshold-like backwards: torch's kernels under create_graph

_ACTS = {
    "relu": lambda L, x: x.relu(),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.1, 2.0),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x, 0.25),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x, 0.25),
    "rrelu_eval": lambda L, x: L.nn.functional.rrelu(x, training=False),
}


@pytest.mark.parametrize("act", sorted(_ACTS))
def test_threshold_backward_derivative_in_the_gradient_stays_in_the_graph(act):
    # torch: d(threshold_backward(g, x))/dg is threshold_backward again, recorded
    # against x, so a third-order gradient still requires grad (zeros in x)
    out = []
    for L in LIBS:
        x = _t(L, [1.0, -2.0, 3.0, 0.2, -0.3], True)
        u = L.zeros(5, dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(_ACTS[act](L, x), x, u, create_graph=True)
        j, = L.autograd.grad(g, u, _t(L, [2.0, -4.0, 6.0, 0.4, -0.6]), create_graph=True)
        k, = L.autograd.grad(j.sum(), x, allow_unused=True)
        out.append((g.requires_grad, j.requires_grad, j.grad_fn.name(), _np(j), _np(k)))
    assert out[0][:3] == out[1][:3]
    _same(out[0][3:], out[1][3:])
    # the masked entries are +0, as torch's kernels write them
    assert (np.signbit(out[1][3]) == np.signbit(out[0][3])).all()


@pytest.mark.parametrize("act", sorted(_ACTS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_threshold_backward_of_inf_and_nan_gradients(act, create_graph):
    a = [1.0, -2.0, 3.0, 0.2, -0.3, math.nan]
    g = [math.inf, -math.inf, math.nan, math.inf, -math.inf, math.inf]
    r = [_np(L.autograd.grad(_ACTS[act](L, x), x, _t(L, g), create_graph=create_graph)[0])
         for L in LIBS for x in [_t(L, a, True)]]
    _same(r[0], r[1])


def test_functional_jvp_strict_create_graph_through_relu_runs():
    r = _both(lambda L: L.autograd.functional.jvp(lambda x: x.relu(), _t(L, _X), _t(L, _X),
                                                  create_graph=True, strict=True))
    _same(_np(r[0][1]), _np(r[1][1]))


# ---- vmap over no samples

def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in _leaves(e)]
    return [x]


@pytest.mark.parametrize("case", [
    lambda L, Z: L.func.vmap(lambda a: a.sum())(Z(0, 3)),
    lambda L, Z: L.func.vmap(lambda a: (a.max(), a.argmax(), a.max(0), a.median()))(Z(0, 3)),
    lambda L, Z: L.func.vmap(lambda a: (a.mean(), a.std(), a.norm(), a.logsumexp(1)))(Z(0, 3, 2)),
    lambda L, Z: L.func.vmap(lambda a: (a.flatten(), a.sum().flatten()))(Z(0, 3, 2)),
    lambda L, Z: L.func.vmap(lambda a: a.kthvalue(1))(Z(0, 3)),
    lambda L, Z: L.func.vmap(lambda a, b: a @ b, in_dims=(0, None))(Z(0, 3), Z(3, 2)),
    lambda L, Z: L.func.vmap(L.func.vmap(lambda a: a.sum()))(Z(0, 2, 3)),
    lambda L, Z: L.func.vmap(L.func.vmap(lambda a: a.sum()))(Z(2, 0, 3)),
    lambda L, Z: L.func.vmap(L.func.grad(lambda a: (a ** 2).sum()))(Z(0, 3)),
    lambda L, Z: L.func.vmap(lambda a: a + L.rand(3, dtype=L.float64),
                             randomness="different")(Z(0, 3)),
    lambda L, Z: L.func.vmap(lambda a: L.nn.functional.dropout(a),
                             randomness="different")(Z(0, 3)),
])
def test_vmap_over_an_empty_batch(case):
    r = _both(lambda L: case(L, lambda *s: L.zeros(*s, dtype=L.float64)))
    assert r is not None
    t, p = (_leaves(x) for x in r)
    assert [tuple(x.shape) for x in t] == [tuple(x.shape) for x in p]
    assert [str(x.dtype).split(".")[1] for x in t] == [str(x.dtype).split(".")[1] for x in p]


# ---- torch.func.vjp's vjp_fn(cotangents, retain_graph=True, create_graph=None)

_A = np.arange(6.0).reshape(2, 3) / 7


@pytest.mark.parametrize("case", [
    (lambda a: a.sum(0), lambda L: (L.ones(3, dtype=L.float64),)),           # tuple for a tensor
    (lambda a: (a.sum(0), a), lambda L: [L.ones(3, dtype=L.float64),
                                         L.ones(2, 3, dtype=L.float64)]),   # list for a tuple
    (lambda a: {"x": a.sum(0), "y": a}, lambda L: {"z": L.ones(3, dtype=L.float64),
                                                   "y": L.ones(2, 3, dtype=L.float64)}),
])
def test_vjp_fn_checks_the_structure_of_the_cotangents(case):
    fn, ct = case
    _both(lambda L: L.func.vjp(fn, _t(L, _A))[1](ct(L)))


def test_vjp_fn_takes_one_cotangent_argument():
    _both(lambda L: L.func.vjp(lambda a: (a.sum(0), a), _t(L, _A))[1](
        L.ones(3, dtype=L.float64), L.ones(2, 3, dtype=L.float64)))


def test_vjp_fn_retain_graph_false_frees_the_graph():
    for L in LIBS:
        _, f = L.func.vjp(lambda a: a.exp() * a, _t(L, _A))
        f(L.ones(2, 3, dtype=L.float64), retain_graph=False)
        with pytest.raises(RuntimeError):
            f(L.ones(2, 3, dtype=L.float64))


def test_vjp_fn_create_graph_follows_grad_mode_at_the_call():
    out = []
    for L in LIBS:
        x = _t(L, _A, True)
        o, f = L.func.vjp(lambda a: a.exp() * a, x)
        with L.no_grad():
            r1 = f(L.ones(2, 3, dtype=L.float64))
        r2 = f(L.ones(2, 3, dtype=L.float64), create_graph=False)
        r3 = f(L.ones(2, 3, dtype=L.float64))
        out.append((r1[0].requires_grad, r2[0].requires_grad, r3[0].requires_grad,
                    o.requires_grad))
        g, = L.autograd.grad(r3[0].sum(), x)
        out.append(_np(g).round(10).tolist())
    assert out[0] == out[2] and out[1] == out[3]


# ---- autograd.Function: ctx.mark_dirty of a tensor the forward does not return

@pytest.mark.parametrize("returned_input", [False, True])
def test_mark_dirty_of_a_tensor_not_returned_raises(returned_input):
    def f(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                x.mul_(2)
                y.mul_(2)
                ctx.mark_dirty(x, y)
                return x if returned_input else x.view(-1)
            @staticmethod
            def backward(ctx, g):
                return g, g
        return F.apply(_t(L, [1.0, 2.0], True).clone(), _t(L, [1.0, 2.0]))
    assert _both(f) is None


# ---- the transforms under no_grad / inference_mode, and their output dtypes

_TRANSFORMS = {
    "grad": lambda L, f: L.func.grad(lambda x: f(x).sum()),
    "vjp": lambda L, f: lambda x: (lambda o, fn: (o, fn(L.ones_like(o))))(*L.func.vjp(f, x)),
    "jacrev": lambda L, f: L.func.jacrev(f),
    "jacfwd": lambda L, f: L.func.jacfwd(f),
    "hessian": lambda L, f: L.func.hessian(lambda x: f(x).sum()),
    "jvp": lambda L, f: lambda x: L.func.jvp(f, (x,), (L.ones_like(x),)),
    "vmap_grad": lambda L, f: L.func.vmap(L.func.grad(lambda x: f(x).sum())),
}


@pytest.mark.parametrize("mode", ["no_grad", "inference", "inference_input", "rg_no_grad"])
@pytest.mark.parametrize("name", sorted(_TRANSFORMS))
def test_transforms_under_no_grad_and_inference_mode(name, mode):
    a = np.arange(6.0).reshape(2, 3) / 5 + 0.1
    out = []
    for L in LIBS:
        tf = _TRANSFORMS[name](L, lambda x: x ** 3)
        if mode == "no_grad":
            with L.no_grad():
                r = tf(_t(L, a))
        elif mode == "inference":
            with L.inference_mode():
                r = tf(_t(L, a))
        elif mode == "inference_input":
            with L.inference_mode():
                x = _t(L, a)
            r = tf(x)
        else:
            x = _t(L, a, True)
            with L.no_grad():
                r = tf(x)
        leaves = _leaves(r)
        out.append(([t.requires_grad for t in leaves], [_np(t) for t in leaves]))
    assert out[0][0] == out[1][0]
    _same(out[0][1], out[1][1])


@pytest.mark.parametrize("case", [
    lambda L: L.func.vjp(lambda x: x.int(), L.ones(2)),
    lambda L: L.func.vjp(lambda x: (x * 2, x.bool()), L.ones(2)),
    lambda L: L.func.jacrev(lambda x: x.int())(L.ones(2)),
    lambda L: L.func.jacrev(lambda x: (x * 2, x.long()))(L.ones(2)),
])
def test_reverse_transforms_reject_integer_outputs(case):
    assert _both(case) is None


# ---- vmap: masked_fill with a value tensor that differs per sample

_MX = np.random.default_rng(5).standard_normal((4, 3, 5))
_MV = np.array([0.5, -1.0, 2.0, 3.0])


@pytest.mark.parametrize("case", [
    lambda L: L.func.vmap(lambda x, v: x.masked_fill(x > 0, v))(_t(L, _MX), _t(L, _MV)),
    lambda L: L.func.vmap(lambda x, v: x.masked_fill(x > 0, v), in_dims=(None, 0))(
        _t(L, _MX[0]), _t(L, _MV)),
    lambda L: L.func.vmap(lambda x, v: x.clone().masked_fill_(x > 0, v))(_t(L, _MX), _t(L, _MV)),
    lambda L: L.func.vmap(lambda x, v: L.masked_fill(x, mask=x > 0, value=v))(
        _t(L, _MX), _t(L, _MV)),
    lambda L: L.func.vmap(lambda x, v: x.float().masked_fill(x > 0, v))(_t(L, _MX), _t(L, _MV)),
    lambda L: L.func.vmap(lambda x, v: x.masked_fill(x > 0, v))(_t(L, _MX), L.tensor([1, 2, 3, 4])),
    lambda L: L.func.vmap(L.func.grad(lambda v, x: (x.masked_fill(x > 0, v) ** 2).sum()))(
        _t(L, _MV), _t(L, _MX)),
])
def test_vmap_masked_fill_with_a_batched_value(case):
    t, p = _both(case)
    assert str(t.dtype).split(".")[1] == str(p.dtype).split(".")[1]
    _same(_np(t), _np(p))


# ---- torch.func argument checks

@pytest.mark.parametrize("case", [
    lambda L: L.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 0))(_t(L, _X), _t(L, _X)),
    lambda L: L.func.grad(lambda x, y: (x * y).sum(), argnums=(1, -1))(_t(L, _X), _t(L, _X)),
    lambda L: L.func.jacrev(lambda x: x, argnums=(0, 0))(_t(L, _X)),
    lambda L: L.func.jacfwd(lambda x: x, argnums=(0, -1))(_t(L, _X)),
    lambda L: L.func.grad(lambda x: (x.sum(), "a"), has_aux=True)(_t(L, _X)),
    lambda L: L.func.grad(lambda x: (x.sum(), None), has_aux=True)(_t(L, _X)),
    lambda L: L.func.grad_and_value(lambda x: (x.sum(), 3.0), has_aux=True)(_t(L, _X)),
    lambda L: L.func.vjp(lambda x: (x.sum(), [x, 1]), _t(L, _X), has_aux=True),
    lambda L: L.func.jacrev(lambda x: (x, {"a": "b"}), has_aux=True)(_t(L, _X)),
    lambda L: L.func.vmap(lambda x: x.requires_grad_())(_t(L, [_X, _X])),
    lambda L: L.func.vmap(lambda x: f"{x.sum()}")(_t(L, [_X, _X])),
])
def test_func_argument_errors_as_torch(case):
    assert _both(case) is None


def test_func_aux_of_tensors_passes():
    r = _both(lambda L: L.func.grad(lambda x: (x.sum(), {"a": x, "b": (x * 2,)}),
                                    has_aux=True)(_t(L, _X)))
    _same([_np(r[0][0]), _np(r[0][1]["b"][0])], [_np(r[1][0]), _np(r[1][1]["b"][0])])


def test_func_jvp_accepts_strict_as_torch():
    r = _both(lambda L: L.func.jvp(lambda x: x.sin(), (_t(L, _X),), (_t(L, _X),), strict=True))
    _same(_np(r[0]), _np(r[1]))


# ---- functional_call: a key that names a non-tensor attribute (a submodule)

def test_functional_call_key_of_a_submodule_raises_type_error():
    for L in LIBS:
        m = L.nn.Sequential(L.nn.Linear(3, 3), L.nn.Linear(3, 1)).double()
        with pytest.raises(TypeError):
            L.func.functional_call(m, {"1.weight": L.ones(1, 3, dtype=L.float64),
                                       "0": L.ones(3, 3, dtype=L.float64)},
                                   (L.ones(3, dtype=L.float64),))
        assert isinstance(m[0], L.nn.Linear) and isinstance(m[1].weight, L.nn.Parameter)


# ---- custom Function jvp: torch's checks of what jvp returns

_JA = np.arange(1.0, 7.0).reshape(2, 3) / 7


def _function_jvp(L, forward, jvp, dirty=False, rg=False):
    class F(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if dirty:
                ctx.mark_dirty(x)
            return forward(x)

        @staticmethod
        def backward(ctx, *g):
            return g[0]

        @staticmethod
        def jvp(ctx, t):
            return jvp(t)
    fa = L.autograd.forward_ad
    with fa.dual_level():
        x = _t(L, _JA, rg)
        d = fa.make_dual(x.clone() if rg else x, _t(L, np.ones_like(_JA)))
        o = F.apply(d)
        os = o if isinstance(o, tuple) else (o,)
        return [fa.unpack_dual(v).tangent for v in os]


@pytest.mark.parametrize("rg", [False, True])
@pytest.mark.parametrize("case", [
    (lambda x: x.mul_(2), lambda t: t.mul_(2), True),          # in place: fine
    (lambda x: x.mul_(2), lambda t: t * 2, True),              # not in place: error
    (lambda x: (x * 2, x * 3), lambda t: t * 2, False),        # one tangent for two outputs
    (lambda x: x * 2, lambda t: t[0], False),                  # wrong size
    (lambda x: x, lambda t: t, False),                         # input as-is, jvp not a view
    (lambda x: x, lambda t: t.view_as(t), False),
    (lambda x: x.view(-1), lambda t: t.view(-1), False),
    (lambda x: x.view(-1), lambda t: t.reshape(-1).clone(), False),
    (lambda x: x.T, lambda t: t.T, False),
    (lambda x: x.detach(), lambda t: t.detach(), False),
    (lambda x: x.clone(), lambda t: t, False),
])
def test_function_jvp_results_are_checked_as_torch(case, rg):
    fw, jv, dirty = case
    r = _both(lambda L: _function_jvp(L, fw, jv, dirty, rg))
    if r is not None:
        _same(_np(r[0]), _np(r[1]))


# ---- vmap over channel dropouts: which dims share one mask entry

def _mask_pattern(r):
    """For each dim after the batch: whether the result is constant along it."""
    return [bool((r == r.narrow(d, 0, 1)).all()) for d in range(1, r.dim())]


@pytest.mark.parametrize("shape", [(40, 2, 3, 4), (40, 2, 3, 4, 5), (40, 3, 4), (40, 2, 3)])
@pytest.mark.parametrize("name", ["feature_alpha_dropout", "dropout2d", "dropout1d", "dropout3d",
                                  "alpha_dropout", "dropout"])
def test_vmap_channel_dropout_masks_as_torch(name, shape):
    if name == "dropout1d" and len(shape) == 5:
        return
    out = []
    for L in LIBS:
        L.manual_seed(0)
        r = L.func.vmap(lambda v: getattr(L.nn.functional, name)(v, 0.5, True),
                        randomness="different")(L.ones(*shape, dtype=L.float64))
        out.append(_mask_pattern(r))
    assert out[0] == out[1]


def test_vmap_feature_alpha_dropout_of_a_1d_sample_raises():
    assert _both(lambda L: L.func.vmap(lambda v: L.nn.functional.feature_alpha_dropout(
        v, 0.5, True), randomness="different")(L.ones(3, 4, dtype=L.float64))) is None


# ---- forward-over-reverse through linear with a dual weight (its weight.t()
# is made inside the op that forward AD drives by its own rule)

_LX = np.random.default_rng(1).standard_normal((4, 5))
_LW = np.random.default_rng(2).standard_normal((3, 5))
_LT = np.random.default_rng(3).standard_normal((3, 5))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("wrt", ["x", "w"])
@pytest.mark.parametrize("same", [False, True])
def test_forward_over_reverse_through_linear_with_a_dual_weight(bias, wrt, same):
    out = []
    for L in LIBS:
        fa = L.autograd.forward_ad
        with fa.dual_level():
            x = _t(L, _LX[:, :5] if not same else _LW, True)
            w0 = _t(L, _LW, True)
            w = fa.make_dual(w0, _t(L, _LT))
            b = _t(L, [0.1, -0.2, 0.3]) if bias else None
            o = L.nn.functional.linear(w if same else x, w, b)
            g, = L.autograd.grad((o.tanh() ** 2).sum(), x if wrt == "x" and not same else w0,
                                 create_graph=True)
            out.append(_np(fa.unpack_dual(g).tangent))
    _same(out[0], out[1])


# ---- grad_fn names of torch's overloads

@pytest.mark.parametrize("case", [
    lambda L, x: x.prod(1, keepdim=True),
    lambda L, x: x.prod(dim=0),
    lambda L, x: x.prod(),
    lambda L, x: x.masked_fill(x > 0, 1.0),
    lambda L, x: x.masked_fill(x > 0, L.tensor(1.0, dtype=L.float64)),
    lambda L, x: x.clone().masked_fill_(x > 0, L.tensor(1.0, dtype=L.float64)),
    lambda L, x: L.diag(x, 1),
    lambda L, x: x[0].diag(),
    lambda L, x: L.linalg.eigvalsh(x[:, :3] @ x[:, :3].T),
    lambda L, x: L.lerp(x, x * 2, x),
    lambda L, x: L.lerp(x, x * 2, 0.3),
    lambda L, x: x.clone().lerp_(x * 2, x),
])
def test_grad_fn_names_of_overloads(case):
    names = [case(L, L.ones(3, 5, dtype=L.float64, requires_grad=True)).grad_fn.name()
             for L in LIBS]
    assert names[0] == names[1]


# ---- post-accumulate-grad hooks must return None

@pytest.mark.parametrize("ret", [lambda p: p.grad.mul_(2), lambda p: 5, lambda p: None])
def test_post_accumulate_grad_hook_result_is_checked(ret):
    def f(L):
        x = _t(L, [0.5, 1.0, 2.0], True)
        x.register_post_accumulate_grad_hook(ret)
        (x * 3).sum().backward()
        return x.grad
    r = _both(f)
    if r is not None:
        _same(_np(r[0]), _np(r[1]))


# ---- Hessians through slices of slices (jacfwd over jacrev: a gradient
# scattered into a base laid out with gaps, under batched tangents)

_HX = np.random.default_rng(0).standard_normal((3, 5))


@pytest.mark.parametrize("f", [
    lambda L, a: (a.T[:2] ** 3).sum(),
    lambda L, a: (a[:, :4][:, :2] ** 3).sum(),
    lambda L, a: L.nn.functional.glu(a[:, :4]).sum(),
    lambda L, a: (a[:, :4].chunk(2, 1)[0] ** 3).sum(),
    lambda L, a: (a[:, ::2][1:] ** 3).sum(),
    lambda L, a: (a[:, 1:4].diagonal() ** 3).sum(),
])
@pytest.mark.parametrize("transform", ["hessian", "jacfwd_jacrev", "grad_create_graph"])
def test_second_derivatives_through_slices_of_slices(f, transform):
    def run(L):
        x = _t(L, _HX)
        if transform == "hessian":
            return L.func.hessian(lambda a: f(L, a))(x)
        if transform == "jacfwd_jacrev":
            return L.func.jacfwd(L.func.jacrev(lambda a: f(L, a)))(x)
        x.requires_grad_()
        g, = L.autograd.grad(f(L, x), x, create_graph=True)
        assert g.requires_grad
        return L.autograd.grad((g ** 2).sum(), x)[0]
    _same(_np(run(torch)), _np(run(ptcore)))
