"""``make_fx`` (torch.fx.experimental.proxy_tensor) against torch: the aten ops of the
traced graph, its generated code, the values the traced module computes, fake tracing,
decomposition tables, and autograd inside the traced function."""
import numpy as np
import pytest

import ptcore
from ptcore.fx.experimental.proxy_tensor import get_proxy_mode as p_get_proxy_mode
from ptcore.fx.experimental.proxy_tensor import make_fx as p_make_fx

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import get_proxy_mode as t_get_proxy_mode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx as t_make_fx  # noqa: E402

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.1, -0.4]], dtype=np.float32)
MAKE = {"torch": t_make_fx, "ptcore": p_make_fx}

_F = {
    "pointwise": lambda L, x: (x.sin() * 2 + x).exp(),
    "mm": lambda L, x: L.mm(x, x.t()),
    "reductions": lambda L, x: (x.sum(), x.sum(0), x.mean(1, keepdim=True), x.amax(-1)),
    "views": lambda L, x: x.view(3, 2).transpose(0, 1).permute(1, 0).unsqueeze(0)
    .expand(2, 3, 2),
    "inplace": lambda L, x: x.clone().add_(1).mul_(x),
    "factory": lambda L, x: x + L.ones(2, 3),
    "indexing": lambda L, x: x[0] + x[:, 1:].sum(),
    "where": lambda L, x: L.where(x > 0, x, L.zeros_like(x)),
    "cat": lambda L, x: L.cat([x, x * 2], 1).softmax(-1),
}


def _trace(lib, f, mode, x):
    return MAKE[lib.__name__](lambda x: f(lib, x), tracing_mode=mode)(x)


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def _np(r):
    return [t.detach().numpy() for t in (r if isinstance(r, tuple) else (r,))]


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(_F))
def test_graph_ops_and_values_as_torch(name, mode):
    res = {}
    for lib in (torch, ptcore):
        f = _F[name]
        gm = _trace(lib, f, mode, lib.tensor(X))
        assert isinstance(gm, lib.fx.GraphModule)
        x = lib.tensor(X)
        res[lib.__name__] = (_targets(gm), _np(gm(x)), _np(f(lib, x)))
    p, t = res["ptcore"], res["torch"]
    assert p[0] == t[0]
    for a, b, c in zip(p[1], p[2], t[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)       # the module re-runs f
        np.testing.assert_allclose(a, c, rtol=1e-5)


def test_generated_code_as_torch():
    def f(L):
        return lambda x, y: ((x.sin() * y).sum(0), x[0] + L.ones(3), x.view(3, 2).t())
    code = {}
    for lib in (torch, ptcore):
        gm = MAKE[lib.__name__](f(lib))(lib.tensor(X), lib.tensor(X + 1))
        code[lib.__name__] = gm.code.replace(f"{lib.__name__}.ops", "ops")
        r = gm(lib.tensor(X), lib.tensor(X + 1))
        for a, b in zip(_np(r), _np(f(lib)(lib.tensor(X), lib.tensor(X + 1)))):
            np.testing.assert_allclose(a, b)
    assert code["ptcore"] == code["torch"]


def test_module_parameters_are_constants_as_torch():
    names = {}
    for lib in (torch, ptcore):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(1, 2, 2)
        x = lib.tensor(X).reshape(1, 1, 2, 3)
        gm = MAKE[lib.__name__](lambda x: conv(x).relu())(x)
        np.testing.assert_allclose(gm(x).detach().numpy(), conv(x).relu().detach().numpy())
        names[lib.__name__] = sorted(n.target for n in gm.graph.nodes if n.op == "get_attr")
    assert names["ptcore"] == names["torch"] == ["_param_constant0", "_param_constant1"]


def test_fake_mode_shapes_without_data():
    res = {}
    for lib in (torch, ptcore):
        gm = MAKE[lib.__name__](lambda x, y: (x @ y).sum(1), tracing_mode="fake")(
            lib.ones(4, 5), lib.ones(5, 6))
        res[lib.__name__] = tuple(gm(lib.ones(4, 5), lib.ones(5, 6)).shape)
        # the fake trace ran no kernel on data: the module computes on what it is given
        np.testing.assert_allclose(gm(lib.full((4, 5), 2.0), lib.ones(5, 6)).numpy(),
                                   np.full(4, 60.0))
    assert res["ptcore"] == res["torch"] == (4,)


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_autograd_grad_inside_traced_function_as_torch(mode):
    res = {}
    for lib in (torch, ptcore):
        def f(x):
            return lib.autograd.grad((x.sin() * x).sum(), x)[0]
        gm = MAKE[lib.__name__](f, tracing_mode=mode)(lib.tensor(X, requires_grad=True))
        x = lib.tensor(X)
        res[lib.__name__] = (_targets(gm), gm(x).numpy())
    assert res["ptcore"][0] == res["torch"][0]
    np.testing.assert_allclose(res["ptcore"][1], res["torch"][1], rtol=1e-6)


def test_backward_of_a_view_and_a_clone_in_the_graph_as_torch():
    # ops whose autograd ptcore records in their kernel: their backward is traced too
    res = {}
    for lib in (torch, ptcore):
        def f(x):
            y = x.t().clone() * x.t()
            return lib.autograd.grad(y.sum(), x)[0]
        gm = MAKE[lib.__name__](f)(lib.tensor(X, requires_grad=True))
        res[lib.__name__] = (_targets(gm), gm(lib.tensor(X)).numpy())
    assert res["ptcore"][0] == res["torch"][0]
    np.testing.assert_allclose(res["ptcore"][1], res["torch"][1])


def test_decomposition_table_as_torch():
    res = {}
    for lib in (torch, ptcore):
        aten = lib.ops.aten

        def gelu(x, approximate="none"):
            return x * 0.5 * (1 + lib.erf(x / 2 ** 0.5))
        table = {aten.gelu.default: gelu}
        f = (lambda x: lib.nn.functional.gelu(x).neg())
        gm = MAKE[lib.__name__](f, decomposition_table=table)(lib.tensor(X))
        res[lib.__name__] = (_targets(gm), gm(lib.tensor(X)).numpy())
    assert res["ptcore"][0] == res["torch"][0]
    assert "aten.gelu.default" not in res["ptcore"][0]
    np.testing.assert_allclose(res["ptcore"][1], res["torch"][1], rtol=1e-6)


def test_proxy_mode_only_inside_a_trace_as_torch():
    seen = {}
    for lib, get in ((torch, t_get_proxy_mode), (ptcore, p_get_proxy_mode)):
        inside = []
        assert get() is None
        act = __import__(f"{lib.__name__}.nn.modules.activation", fromlist=["_"])
        MAKE[lib.__name__](lambda x: (inside.append((get() is not None,
                                                     act._is_make_fx_tracing())), x + 1)[1])(
            lib.ones(2))
        assert get() is None
        seen[lib.__name__] = inside
    assert seen["ptcore"] == seen["torch"] == [(True, True)]


def test_pre_dispatch_accepted_and_symbolic_refused():
    gm = p_make_fx(lambda x: x * 2, pre_dispatch=True)(ptcore.ones(2))
    assert _targets(gm) == ["aten.mul.Tensor"]
    with pytest.raises(NotImplementedError, match="symbolic"):
        p_make_fx(lambda x: x, tracing_mode="symbolic")(ptcore.ones(2))
    with pytest.raises(AssertionError):
        p_make_fx(lambda x: x, tracing_mode="other")


WEIGHT = np.array([[0.5, -1.0, 0.25], [1.5, 0.0, -2.0], [0.1, 0.2, 0.3]], dtype=np.float32)
_COMPOSITES = ["linear_bias", "linear", "linear_3d_bias", "linear_3d", "matmul", "matmul_3d",
               "reshape_view", "reshape_copy", "reshape_infer", "flatten", "movedim", "narrow",
               "softmax", "softmax_dtype", "log_softmax"]


def _composites(L):
    w, b = L.tensor(WEIGHT), L.tensor([1.0, -1.0, 0.5])
    F = L.nn.functional
    return {
        "linear_bias": lambda x: F.linear(x, w, b),
        "linear": lambda x: F.linear(x, w),
        "linear_3d_bias": lambda x: F.linear(x.reshape(1, 2, 3), w, b),
        "linear_3d": lambda x: F.linear(x.reshape(1, 2, 3), w),
        "matmul": lambda x: x @ w.t(),
        "matmul_3d": lambda x: x.reshape(1, 2, 3) @ w.t(),
        "reshape_view": lambda x: x.reshape(3, 2),
        "reshape_copy": lambda x: x.t().reshape(6),
        "reshape_infer": lambda x: x.reshape(-1),
        "flatten": lambda x: x.flatten(),
        "movedim": lambda x: x.movedim(0, 1),
        "narrow": lambda x: x.narrow(1, 0, 2),
        "softmax": lambda x: x.softmax(-1),
        "softmax_dtype": lambda x: x.softmax(-1, dtype=L.float64),
        "log_softmax": lambda x: x.log_softmax(0),
    }


@pytest.mark.parametrize("pre_dispatch", [False, True])
@pytest.mark.parametrize("name", _COMPOSITES)
def test_composite_ops_traced_as_torch(name, pre_dispatch):
    """Without pre_dispatch: the ops torch decomposes before its Python key, as torch's
    graph shows them (t + addmm, view, _unsafe_view, _softmax); with it: as called."""
    res = {}
    for lib in (torch, ptcore):
        fs = _composites(lib)
        assert sorted(fs) == sorted(_COMPOSITES)
        f = fs[name]
        gm = MAKE[lib.__name__](f, pre_dispatch=pre_dispatch)(lib.tensor(X))
        res[lib.__name__] = (_targets(gm), gm(lib.tensor(X)).numpy(), f(lib.tensor(X)).numpy())
    p, t = res["ptcore"], res["torch"]
    assert p[0] == t[0]
    np.testing.assert_allclose(p[1], p[2], rtol=1e-6)
    np.testing.assert_allclose(p[1], t[1], rtol=1e-5)


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_traced_training_step_reruns_on_new_inputs_as_torch(mode):
    """A linear + relu layer's gradients traced with autograd.grad: the graph holds the
    backward (relu's aten.threshold_backward, the matrix products), so it gives torch's
    gradients for other inputs too (other signs: another relu mask)."""
    rng = np.random.default_rng(0)
    traced_on = [rng.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (4,))]
    rerun_on = [rng.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (4,))]
    res = {}
    for lib in (torch, ptcore):
        def step(x, w, b):
            y = lib.nn.functional.linear(x, w, b).relu()
            return lib.autograd.grad((y * y).sum(), (x, w, b))
        gm = MAKE[lib.__name__](step, tracing_mode=mode)(
            *[lib.tensor(a, requires_grad=True) for a in traced_on])
        targets = _targets(gm)
        res[lib.__name__] = (sorted(set(targets)),
                             [t.detach().numpy() for t in gm(*map(lib.tensor, rerun_on))])
    # (torch reduces the bias's gradient with keepdim, then views it: one aten.view more)
    view = {"aten.view.default"}
    assert set(res["ptcore"][0]) - view == set(res["torch"][0]) - view
    assert "aten.threshold_backward.default" in res["ptcore"][0]
    for p, t in zip(res["ptcore"][1], res["torch"][1]):
        np.testing.assert_allclose(p, t, rtol=1e-5, atol=1e-6)


def test_traced_grad_through_ops_recording_in_their_kernel_reruns_as_torch():
    # einsum and pixel_shuffle record inside their kernel: a real trace keeps their
    # backward's own ops (no aten.<name>_backward of autograd's fallback), so the graph
    # re-runs on other inputs with torch's gradients
    def f_of(lib):
        F = lib.nn.functional

        def f(x, w):
            y = F.pixel_shuffle(lib.einsum("bij,jk->bik", x, w).reshape(2, 4, 2, 2), 2)
            (g,) = lib.autograd.grad((y * y).sum(), x)
            return g
        return f
    x0 = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 4, 3)
    w0 = np.linspace(0.5, -0.5, 12, dtype=np.float32).reshape(3, 4)
    gm = p_make_fx(f_of(ptcore))(ptcore.tensor(x0, requires_grad=True), ptcore.tensor(w0))
    assert not any(str(n.target).endswith("_backward.default") and "pixel" in str(n.target)
                   for n in gm.graph.nodes)
    x1 = x0[:, ::-1].copy() * 2
    got = gm(ptcore.tensor(x1, requires_grad=True), ptcore.tensor(w0))
    want = f_of(torch)(torch.tensor(x1, requires_grad=True), torch.tensor(w0))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
