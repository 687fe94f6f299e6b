"""Backward passes recorded under ``create_graph`` as torch records them: one
node per backward kernel (layer norm's NativeLayerNormBackwardBackward0,
leaky_relu's LeakyReluBackwardBackward0, mm's TBackward0 + MmBackward0), not
the composite's dozens of small ops; values, gradients of every order and
node semantics (saved tensors, version checks, next_functions) against
PyTorch."""
import collections

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

LIBS = (ptcore, torch)


def _t(lib, a, grad=True):
    return lib.from_numpy(np.array(a, copy=True)).requires_grad_(grad)


def _np(t):
    return None if t is None else t.detach().numpy()


def _close(a, b, dt):
    tol = dict(rtol=1e-9, atol=1e-10) if dt == np.float64 else dict(rtol=2e-4, atol=2e-5)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
            continue
        np.testing.assert_allclose(x, y, **tol)


def _ln_second_order(lib, x, w, b, v, ns):
    """gradients of layer_norm in (x, w, b) with a grad_output ``v`` that
    requires grad, then the gradients of a loss over all three of them in
    (x, w, b, v)."""
    xx, vv = _t(lib, x), _t(lib, v)
    ww = None if w is None else _t(lib, w)
    bb = None if b is None else _t(lib, b)
    ins = [t for t in (xx, ww, bb) if t is not None]
    y = lib.nn.functional.layer_norm(xx, ns, ww, bb)
    gs = lib.autograd.grad(y, ins, vv, create_graph=True)
    names = {type(g.grad_fn).__name__ for g in gs}
    loss = sum((g.sin() * (k + 1)).sum() for k, g in enumerate(gs)) + (gs[0] ** 3).sum()
    gg = lib.autograd.grad(loss, ins + [vv], allow_unused=True)   # (b: none)
    return names, [_np(g) for g in gs] + [_np(g) for g in gg]


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("ns,shape", [((6,), (4, 6)), ((2, 5), (3, 2, 5)), ((7,), (2, 3, 7))])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_double_backward_one_node(dt, ns, shape, affine):
    rng = np.random.default_rng(len(shape) + len(ns))
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dt)
    v = rng.standard_normal(shape).astype(dt)
    w = rng.standard_normal(ns).astype(dt) if affine != "none" else None
    b = rng.standard_normal(ns).astype(dt) if affine == "both" else None
    (pn, p), (tn, t) = (_ln_second_order(lib, x, w, b, v, ns) for lib in LIBS)
    assert pn == tn == {"NativeLayerNormBackwardBackward0"}
    _close(p, t, dt)


def _composite_layer_norm(lib, x, ns, w, b, eps=1e-5):
    dims = tuple(range(-len(ns), 0))
    mu = x.mean(dims, keepdim=True)
    y = (x - mu) * lib.rsqrt(((x - mu) * (x - mu)).mean(dims, keepdim=True) + eps)
    return y * w + b


def test_layer_norm_third_order_against_the_composite():
    # a third derivative differentiates the double backward's formula again: its
    # statistics are recomputed from x there (torch's fused formula takes its
    # saved mean and rstd as constants, so the oracle is torch's composite)
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((3, 5)), rng.standard_normal(5), rng.standard_normal(5)
    res = []
    for lib, ln in ((ptcore, ptcore.nn.functional.layer_norm),
                    (torch, lambda x, ns, w, b: _composite_layer_norm(torch, x, ns, w, b))):
        xx, ww, bb = _t(lib, x), _t(lib, w), _t(lib, b)
        y = ln(xx, (5,), ww, bb)
        g = lib.autograd.grad((y.sin() * y).sum(), (xx, ww, bb), create_graph=True)
        g2 = lib.autograd.grad(sum((t * t * t).sum() for t in g), (xx, ww, bb), create_graph=True)
        g3 = lib.autograd.grad(sum(t.cos().sum() for t in g2), (xx, ww, bb))
        res.append([_np(t) for t in g + g2 + g3])
    _close(res[0], res[1], np.float64)


def test_layer_norm_double_backward_node_semantics():
    rng = np.random.default_rng(8)
    x, v = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    for lib in LIBS:
        ln = lib.nn.LayerNorm(6).double()
        xx, vv = _t(lib, x), _t(lib, v)
        g, = lib.autograd.grad(ln(xx), xx, vv, create_graph=True)
        node = g.grad_fn
        assert type(node).__name__ == "NativeLayerNormBackwardBackward0"
        # edges: grad_out, input, mean, rstd (not differentiable), weight, bias
        nf = node.next_functions
        assert len(nf) == 6 and nf[2][0] is None and nf[3][0] is None
        assert type(nf[4][0]).__name__ == "AccumulateGrad" and nf[4][0].variable is ln.weight
        assert tuple(node._saved_normalized_shape) == (6,)
        assert node._saved_grad_out is vv or lib is torch
        np.testing.assert_allclose(_np(node._saved_rstd).reshape(-1),
                                   1 / np.sqrt(x.var(1) + 1e-5), rtol=1e-6)
        # the saved input is version-checked
        h = xx * 1
        g, = lib.autograd.grad(ln(h), h, vv, create_graph=True)
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            g.sum().backward()
        # freed after a backward that does not retain the graph
        g, = lib.autograd.grad(ln(xx), xx, vv, create_graph=True)
        s = (g * g).sum()
        s.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            s.backward()


def _penalty(lib, critic, x):
    xi = x.clone().requires_grad_(True)
    out = critic(xi)
    g, = lib.autograd.grad(out.sum(), xi, create_graph=True)
    names = []
    seen, stack = set(), [g.grad_fn]
    fwd = set()
    fstack = [out.grad_fn]
    while fstack:
        n = fstack.pop()
        if n is None or n in fwd:
            continue
        fwd.add(n)
        fstack += [f for f, _ in n.next_functions]
    while stack:
        n = stack.pop()
        if n is None or n in seen or n in fwd:
            continue
        seen.add(n)
        names.append(type(n).__name__)
        stack += [f for f, _ in n.next_functions]
    loss = out.mean() + 10 * ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()
    critic.zero_grad()
    loss.backward()
    return collections.Counter(names), [_np(g), _np(loss)] + [_np(p.grad)
                                                            for p in critic.parameters()]


@pytest.mark.parametrize("norm", [True, False])
@pytest.mark.parametrize("act", ["leaky_relu", "relu"])
def test_gradient_penalty_records_torchs_nodes(norm, act):
    # WGAN-GP: the recorded backward is torch's graph node for node (mm, t,
    # the activation's and layer norm's backward kernels), the step's values
    # and every parameter's gradient torch's
    rng = np.random.default_rng(9)
    x = rng.standard_normal((8, 12))
    res = []
    for lib in LIBS:
        lib.manual_seed(0)
        nn = lib.nn
        a = nn.LeakyReLU(0.2) if act == "leaky_relu" else nn.ReLU()
        layers = [nn.Linear(12, 10)] + ([nn.LayerNorm(10)] if norm else []) + \
            [a, nn.Linear(10, 6)] + ([nn.LayerNorm(6)] if norm else []) + [a, nn.Linear(6, 1)]
        critic = nn.Sequential(*layers).double()
        with lib.no_grad():
            for k, p in enumerate(critic.parameters()):
                p.copy_(lib.from_numpy(np.random.default_rng(k).standard_normal(tuple(p.shape))))
        res.append(_penalty(lib, critic, lib.from_numpy(x.copy())))
    assert res[0][0] == res[1][0]
    _close(res[0][1], res[1][1], np.float64)


def test_leaky_relu_recorded_backward_float32_and_order3():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    v = rng.standard_normal((5, 7)).astype(np.float32)
    res = []
    for lib in LIBS:
        xx, vv = _t(lib, x), _t(lib, v)
        y = lib.nn.functional.leaky_relu(xx * 2, 0.1)
        g, = lib.autograd.grad(y, xx, vv, create_graph=True)
        assert type(g.grad_fn).__name__ == "MulBackward0"
        gv, gx = lib.autograd.grad((g * g).sum(), (vv, xx), create_graph=True, allow_unused=True)
        g3, = lib.autograd.grad((gv * gv).sum(), vv)
        res.append([_np(g), _np(gv), _np(g3)])
        assert gx is None or not np.any(_np(gx)) or lib is torch
    _close(res[0], res[1], np.float32)


def test_layer_norm_hessian_forward_over_reverse():
    # forward AD over a recorded backward takes the composite (the kernels
    # carry no tangents): func.hessian of a layer norm + leaky_relu
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal(5), rng.standard_normal(5)
    res = []
    for lib in LIBS:
        ww = lib.from_numpy(w.copy())

        def f(t, lib=lib, ww=ww):
            y = lib.nn.functional.layer_norm(t.reshape(1, 5), (5,), ww)
            return (lib.nn.functional.leaky_relu(y, 0.3) * y).sum()
        res.append([_np(lib.func.hessian(f)(lib.from_numpy(x.copy())))])
    _close(res[0], res[1], np.float64)
