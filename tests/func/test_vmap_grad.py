"""vmap composed with the autograd transforms: per-sample gradients
(vmap(grad)), vmap(vjp), vmap(jacrev), vmap(hessian), jacrev by vmap over the
cotangents, gradients through vmap from outside, and model ensembling with
stack_module_state + functional_call; against torch.func."""
import copy
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore.func import (vmap, grad, grad_and_value, vjp, jacrev, hessian, functional_call,
                         stack_module_state)
from ptcore.utils._python_dispatch import TorchDispatchMode

torch = pytest.importorskip("torch")
import torch.func as tf  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

PERF = "performance drop"


def P(t):
    return ptcore.tensor(t.detach().numpy())


def close(a, b, tol=1e-5):
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            close(a[k], b[k], tol)
        return
    if isinstance(a, (tuple, list)):
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _mlp(lib):
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16),
                            torch.nn.ReLU(), torch.nn.Linear(16, 4))
    if lib is torch:
        return t
    p = ptcore.nn.Sequential(ptcore.nn.Linear(6, 16), ptcore.nn.Tanh(), ptcore.nn.Linear(16, 16),
                             ptcore.nn.ReLU(), ptcore.nn.Linear(16, 4))
    p.load_state_dict({k: P(v) for k, v in t.state_dict().items()})
    return p


def _cnn(lib):
    torch.manual_seed(1)
    nn = torch.nn
    t = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(4, 3, 3), nn.Flatten(), nn.Linear(3, 5))
    if lib is torch:
        return t
    pn = ptcore.nn
    p = pn.Sequential(pn.Conv2d(2, 4, 3, padding=1), pn.ReLU(), pn.MaxPool2d(2),
                      pn.Conv2d(4, 3, 3), pn.Flatten(), pn.Linear(3, 5))
    p.load_state_dict({k: P(v) for k, v in t.state_dict().items()})
    return p


def _per_sample_grads(lib, model, x, y):
    fn = tf if lib is torch else ptcore.func
    Fn = TF if lib is torch else F
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        out = fn.functional_call(model, p, (xi.unsqueeze(0),))
        return Fn.cross_entropy(out, yi.unsqueeze(0))
    return fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, x, y)


@pytest.mark.parametrize("make,shape", [(_mlp, (8, 6)), (_cnn, (5, 2, 6, 6))])
def test_per_sample_gradients_match_torch_func(make, shape):
    torch.manual_seed(2)
    x = torch.randn(*shape)
    y = torch.randint(0, 4, (shape[0],))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*" + PERF)
        got = _per_sample_grads(ptcore, make(ptcore), P(x), P(y))
    want = _per_sample_grads(torch, make(torch), x, y)
    close(got, want, 2e-5)
    # and the loop over samples
    model = make(ptcore)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return F.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    for i in (0, shape[0] - 1):
        gi = grad(loss)(params, P(x[i]), P(y[i]))
        for k in gi:
            np.testing.assert_allclose(got[k][i].numpy(), gi[k].numpy(), rtol=2e-5, atol=2e-5)


def test_per_sample_gradient_backward_runs_batched():
    """The backward of the batched computation is itself batched: one
    weight-gradient product for the whole batch, not one per sample."""
    w = ptcore.randn(4, 3)
    x = ptcore.randn(32, 3)

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.n = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            k = str(func).split(".")[1]
            self.n[k] = self.n.get(k, 0) + 1
            return func(*args, **(kwargs or {}))
    with Count() as c:
        g = vmap(grad(lambda w, xi: ptcore.tanh(F.linear(xi, w)).sum()), in_dims=(None, 0))(w, x)
    assert sum(c.n.values()) < 40, c.n
    ref = ptcore.stack([grad(lambda w, xi: ptcore.tanh(F.linear(xi, w)).sum())(w, x[i])
                        for i in range(32)])
    np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_grad_variants_inside_vmap():
    torch.manual_seed(3)
    x, w = torch.randn(5, 3), torch.randn(3)

    def f(lib):
        def h(w, xi):
            v = (lib.sin(w * xi)).sum()
            return v, {"aux": v * 2}
        return h
    got = vmap(grad_and_value(f(ptcore), argnums=(0, 1), has_aux=True), in_dims=(None, 0))(P(w), P(x))
    want = tf.vmap(tf.grad_and_value(f(torch), argnums=(0, 1), has_aux=True), in_dims=(None, 0))(w, x)
    close(got[0], want[0])
    close(got[1][0], want[1][0])
    close(got[1][1]["aux"], want[1][1]["aux"])


def test_vmap_of_vjp():
    torch.manual_seed(4)
    x, ct = torch.randn(6, 3), torch.randn(6, 3)

    def f(lib):
        def h(xi, ci):
            out, fn = (tf.vjp if lib is torch else vjp)(lambda a: a.exp() * a.sum(), xi)
            return fn(ci)[0]
        return h
    close(vmap(f(ptcore))(P(x), P(ct)), tf.vmap(f(torch))(x, ct))


@pytest.mark.parametrize("chunk", [None, 3])
def test_jacrev_vmaps_the_vjp(chunk):
    torch.manual_seed(5)
    W, x = torch.randn(4, 5), torch.randn(5)

    def f(lib):
        return lambda W, x: lib.tanh(W @ x).softmax(0) * x[:4]
    close(jacrev(f(ptcore), argnums=(0, 1), chunk_size=chunk)(P(W), P(x)),
          tf.jacrev(f(torch), argnums=(0, 1), chunk_size=chunk)(W, x))


def test_jacrev_backward_runs_once_for_all_rows():
    x = ptcore.randn(40)

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func).split(".")[1] == "cos":
                self.n += 1
            return func(*args, **(kwargs or {}))
    with Count() as c:
        j = jacrev(ptcore.sin)(x)
    assert c.n == 1
    np.testing.assert_allclose(j.numpy(), np.diag(np.cos(x.numpy())), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,fn", [
    ("indexing", lambda lib, a: a[1:, [0, 2, 2]].exp()),
    ("views", lambda lib, a: (a.t() * 2).reshape(-1)[:5]),
    ("reductions", lambda lib, a: a.logsumexp(1) + a.norm(dim=1) + a.max(1).values),
    ("cat_expand", lambda lib, a: lib.cat([a, a[0].expand(3, 4)], 1).sin()),
])
def test_jacrev_matches_torch(name, fn):
    torch.manual_seed(6)
    x = torch.randn(3, 4)
    close(jacrev(lambda a: fn(ptcore, a))(P(x)), tf.jacrev(lambda a: fn(torch, a))(x))


def test_vmap_of_jacrev_and_hessian():
    torch.manual_seed(7)
    W, xs = torch.randn(3, 5), torch.randn(4, 5)

    def f(lib):
        return lambda W, x: lib.tanh(W @ x)
    close(vmap(jacrev(f(ptcore)), in_dims=(None, 0))(P(W), P(xs)),
          tf.vmap(tf.jacrev(f(torch)), in_dims=(None, 0))(W, xs))
    close(vmap(jacrev(f(ptcore)), in_dims=(None, 0))(P(W), P(xs)),
          tf.vmap(tf.jacrev(f(torch)), in_dims=(None, 0))(W, xs))
    h = lambda x: (x.sin() * x).sum() + (x @ x) ** 2  # noqa: E731
    close(vmap(hessian(h))(P(xs)), tf.vmap(tf.hessian(h))(xs), 1e-4)
    close(vmap(grad(grad(lambda v: v.sin().sum() * v.sum())))(P(xs[:, 0])),
          tf.vmap(tf.grad(tf.grad(lambda v: v.sin().sum() * v.sum())))(xs[:, 0]))


def test_nested_vmap_of_grad():
    torch.manual_seed(8)
    w, x = torch.randn(3), torch.randn(2, 4, 3)

    def f(lib):
        return lambda w, xi: (lib.tanh(w * xi) ** 2).sum()
    close(vmap(vmap(grad(f(ptcore)), in_dims=(None, 0)), in_dims=(None, 0))(P(w), P(x)),
          tf.vmap(tf.vmap(tf.grad(f(torch)), in_dims=(None, 0)), in_dims=(None, 0))(w, x))


def test_gradient_through_vmap_from_outside():
    torch.manual_seed(9)
    x, w = torch.randn(5, 3), torch.randn(3, 3)
    px, pw = P(x).requires_grad_(), P(w).requires_grad_()
    vmap(lambda r: (ptcore.tanh(r @ pw) * r.sum()).sum())(px).sum().backward()
    tx, tw = x.clone().requires_grad_(), w.clone().requires_grad_()
    tf.vmap(lambda r: (torch.tanh(r @ tw) * r.sum()).sum())(tx).sum().backward()
    close(px.grad, tx.grad)
    close(pw.grad, tw.grad)


def test_ensembling_with_stack_module_state():
    torch.manual_seed(10)
    tms = [torch.nn.Linear(5, 3) for _ in range(4)]
    pms = [ptcore.nn.Linear(5, 3) for _ in range(4)]
    for a, b in zip(pms, tms):
        a.load_state_dict({k: P(v) for k, v in b.state_dict().items()})
    pp, pb = stack_module_state(pms)
    tp, tb = tf.stack_module_state(tms)
    assert pp["weight"].requires_grad and tuple(pp["weight"].shape) == (4, 3, 5)
    x = torch.randn(6, 5)
    base, tbase = copy.deepcopy(pms[0]), copy.deepcopy(tms[0]).to("meta")
    out = vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
        pp, pb, P(x))
    tout = tf.vmap(lambda p, b, x: tf.functional_call(tbase, (p, b), (x,)),
                   in_dims=(0, 0, None))(tp, tb, x)
    close(out, tout)
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    close(pp["weight"].grad, tp["weight"].grad)
    close(pp["bias"].grad, tp["bias"].grad)
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([ptcore.nn.Linear(2, 2), ptcore.nn.Tanh()])
