"""A backward pass computes only the gradients it uses (torch's
task_should_compute_output, which its built-in kernels read; ptcore's conv
Functions through ptcore.autograd.function.output_mask, the mm/addmm formulas
through graph.current_output_mask): ``autograd.grad(D(x), x)`` -- a gradient
penalty's first backward -- runs no weight-gradient kernel, ``autograd.grad(loss,
weights)`` no input gradient of the first layer; the values and the penalty's
second-order gradients are torch's, a plain backward() computes every gradient,
and a user's Function sees needs_input_grad fixed at forward time, as torch's."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd._formulas_linalg as FL
import ptcore.nn.functional._conv as C

torch = pytest.importorskip("torch")


def _counting(monkeypatch, calls, owner, names):
    """Count in ``calls`` the calls of ``owner``'s attributes ``names``
    (label -> attribute)."""
    for label, attr in names.items():
        calls[label] = 0
        real = getattr(owner, attr)

        def counted(*a, _real=real, _label=label):
            calls[_label] += 1
            return _real(*a)
        monkeypatch.setattr(owner, attr, counted)
    return calls


def _grads_of_weights(p, t, a):
    """``autograd.grad`` of each net's summed output w.r.t. its parameters, the
    input ``a`` requiring grad (ptcore's then torch's, as arrays)."""
    got = []
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        got.append([g.numpy() for g in lib.autograd.grad(net(x).sum(), list(net.parameters()))])
    return got


def _penalty_matches_torch(p, t, a, calls, penalty, rtol, atol):
    """A gradient penalty on each net: ``g = autograd.grad(out.sum(), x,
    create_graph=True)`` (ptcore's running no weight gradient: ``calls``),
    then ``penalty(g, out).backward()``; g and the parameters' gradients
    (None where a parameter does not reach the penalty) equal torch's."""
    res = {}
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        out = net(x)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        if lib is ptcore:
            assert calls == {"weight": 0, "input": 2}
        penalty(g, out).backward()
        res[lib.__name__] = [g.detach().numpy()] + [None if q.grad is None else q.grad.numpy()
                                                    for q in net.parameters()]
    for u, v in zip(res["ptcore"], res["torch"]):
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


@pytest.fixture
def kernel_calls(monkeypatch):
    # (the primitives' values: a backward that records nothing computes them
    # without their Functions, one that records through them)
    calls = {}
    _counting(monkeypatch, calls, C, {"weight": "_bw"})
    return _counting(monkeypatch, calls, C, {"input": "_bx"})


@pytest.fixture
def products(monkeypatch):
    return _counting(monkeypatch, {}, FL, {"input": "_mm_grad_a", "weight": "_mm_grad_b"})


def _conv_nets(dim):
    conv = {1: "Conv1d", 2: "Conv2d", 3: "Conv3d"}[dim]
    ptcore.manual_seed(0)
    p = ptcore.nn.Sequential(getattr(ptcore.nn, conv)(3, 6, 3, padding=1), ptcore.nn.Tanh(),
                             getattr(ptcore.nn, conv)(6, 4, 3, stride=2))
    t = torch.nn.Sequential(getattr(torch.nn, conv)(3, 6, 3, padding=1), torch.nn.Tanh(),
                            getattr(torch.nn, conv)(6, 4, 3, stride=2))
    with torch.no_grad():
        for a, b in zip(p.parameters(), t.parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return p, t


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_gradient_penalty_runs_no_weight_gradient_and_matches_torch(dim, kernel_calls):
    p, t = _conv_nets(dim)
    a = np.random.default_rng(dim).standard_normal((2, 3) + (7,) * dim).astype(np.float32)
    _penalty_matches_torch(p, t, a, kernel_calls, lambda g, out: (g ** 2).sum() + out.square().mean(),
                           2e-4, 2e-5)


def test_grad_of_the_weights_only_runs_no_first_input_gradient(kernel_calls):
    p, t = _conv_nets(2)
    a = np.random.default_rng(5).standard_normal((2, 3, 9, 9)).astype(np.float32)
    got = _grads_of_weights(p, t, a)
    # the second conv's input gradient feeds the first conv's weights; the first's own
    # input gradient (toward x, which requires grad but was not asked for) is not made
    assert kernel_calls == {"weight": 2, "input": 1}
    for u, v in zip(*got):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-5)


def test_plain_backward_and_user_functions_keep_needs_input_grad(kernel_calls):
    p, _ = _conv_nets(2)
    x = ptcore.randn(2, 3, 9, 9, requires_grad=True)
    p(x).sum().backward()
    assert kernel_calls == {"weight": 2, "input": 2}
    seen = []

    class F(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, g

    a = ptcore.randn(3, requires_grad=True)
    b = ptcore.randn(3, requires_grad=True)
    ptcore.autograd.grad(F.apply(a, b).sum(), a)
    assert seen == [(True, True)]          # torch's: fixed at forward time


def _linear_nets(bias):
    ptcore.manual_seed(0)
    p = ptcore.nn.Sequential(ptcore.nn.Linear(6, 12, bias=bias), ptcore.nn.Tanh(),
                             ptcore.nn.Linear(12, 1, bias=bias))
    t = torch.nn.Sequential(torch.nn.Linear(6, 12, bias=bias), torch.nn.Tanh(),
                            torch.nn.Linear(12, 1, bias=bias))
    with torch.no_grad():
        for a, b in zip(p.parameters(), t.parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return p, t


@pytest.mark.parametrize("bias", [True, False])          # addmm / mm
def test_linear_gradient_penalty_runs_no_weight_product_and_matches_torch(bias, products):
    p, t = _linear_nets(bias)
    a = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    _penalty_matches_torch(p, t, a, products, lambda g, out: ((g.norm(dim=1) - 1) ** 2).mean(),
                           1e-4, 1e-6)


def test_linear_weights_only_and_plain_backward(products):
    p, t = _linear_nets(True)
    a = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    got = _grads_of_weights(p, t, a)
    assert products == {"weight": 2, "input": 1}
    for u, v in zip(*got):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    products.update(weight=0, input=0)
    x = ptcore.tensor(a, requires_grad=True)
    p(x).sum().backward()
    assert products == {"weight": 2, "input": 2}
    assert x.grad is not None and all(q.grad is not None for q in p.parameters())


# ---------------------------------------------------------------------------
# normalization layers: torch's native_{layer,batch,group}_norm_backward take an
# output_mask; ptcore's layer norm node, batch norm Function and the mul/add
# nodes of the composite norms (group, instance, evaluation-mode batch norm) read
# the running pass's
# ---------------------------------------------------------------------------

import ptcore.nn.functional._norm as N      # noqa: E402


class _Recorder:
    """Stands for a kernel module, recording which gradients each backward call
    of ``name`` makes (``flags(args, result)``)."""

    def __init__(self, real, name, flags):
        self._real, self._name, self._flags, self.seen = real, name, flags, []

    def __getattr__(self, attr):
        fn = getattr(self._real, attr)
        if attr != self._name:
            return fn

        def counted(*a):
            r = fn(*a)
            self.seen.append(self._flags(a, r))
            return r
        return counted


@pytest.fixture
def ln_calls(monkeypatch):
    rec = _Recorder(N._cpu_ln_kernels(), "layer_norm_backward",
                    lambda a, r: (r[0] is not None, r[1] is not None, r[2] is not None))
    monkeypatch.setattr(N, "_cpu_ln_kernels", lambda: rec)
    return rec.seen


@pytest.fixture
def bn_calls(monkeypatch):
    rec = _Recorder(N._norm_kernels, "batch_norm_backward",
                    lambda a, r: tuple(t is not None for t in a[-3:]))
    monkeypatch.setattr(N, "_norm_kernels", rec)
    return rec.seen


def _copy_params(p, t):
    with torch.no_grad():
        for a, b in zip(p.parameters(), t.parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
        for a, b in zip(p.buffers(), t.buffers()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return p, t


def _norm_nets(kind, train=True):
    """A small WGAN-GP style critic with a normalization layer, ptcore's and torch's."""
    nets = []
    for lib in (ptcore, torch):
        nn = lib.nn
        if kind == "layer":
            layers = [nn.Linear(6, 12), nn.LayerNorm(12), nn.LeakyReLU(0.2), nn.Linear(12, 1)]
        elif kind == "layer2d":         # LayerNorm over (C, H, W) of a conv critic
            layers = [nn.Conv2d(3, 4, 3, padding=1), nn.LayerNorm([4, 5, 5]), nn.LeakyReLU(0.2),
                      nn.Flatten(), nn.Linear(100, 1)]
        elif kind == "batch":
            layers = [nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.LeakyReLU(0.2),
                      nn.Flatten(), nn.Linear(100, 1)]
        elif kind == "group":
            layers = [nn.Conv2d(3, 4, 3, padding=1), nn.GroupNorm(2, 4), nn.LeakyReLU(0.2),
                      nn.Flatten(), nn.Linear(100, 1)]
        else:
            layers = [nn.Conv2d(3, 4, 3, padding=1), nn.InstanceNorm2d(4, affine=True),
                      nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(100, 1)]
        if lib is ptcore:
            ptcore.manual_seed(0)
        nets.append(nn.Sequential(*layers))
    p, t = _copy_params(*nets)
    for m in (p, t):
        m.train(train)
        for q in m.parameters():        # non-trivial affine parameters
            if q.dim() == 1 and q.shape[0] in (4, 12):
                with _no_grad(q):
                    q.add_(0.3)
    return p, t


def _no_grad(q):
    return (ptcore if isinstance(q, ptcore.Tensor) else torch).no_grad()


def _input(kind, seed):
    shape = (5, 6) if kind == "layer" else (3, 3, 5, 5)
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _wgan_penalty(g, out):
    return ((g.flatten(1).norm(dim=1) - 1) ** 2).mean() + out.mean()


@pytest.mark.parametrize("kind,train", [("layer", True), ("layer2d", True), ("batch", True),
                                        ("batch", False), ("group", True), ("instance", True)])
def test_norm_gradient_penalty_matches_torch_with_second_order(kind, train):
    p, t = _norm_nets(kind, train)
    a = _input(kind, 3)
    res = {}
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        out = net(x)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        _wgan_penalty(g, out).backward()
        res[lib.__name__] = [g.detach().numpy()] + [q.grad.numpy() for q in net.parameters()]
    for u, v in zip(res["ptcore"], res["torch"]):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-5)
    if train:       # (the running statistics were updated alike)
        for u, v in zip(p.buffers(), t.buffers()):
            np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-5, atol=1e-6)


def test_layer_norm_kernel_runs_only_the_gradients_asked_for(ln_calls):
    p, t = _norm_nets("layer")
    a = _input("layer", 4)
    x = ptcore.tensor(a, requires_grad=True)
    gx, = ptcore.autograd.grad(p(x).sum(), x)                 # the penalty's backward
    assert ln_calls == [(True, False, False)]
    xt = torch.tensor(a, requires_grad=True)
    np.testing.assert_allclose(gx.numpy(), torch.autograd.grad(t(xt).sum(), xt)[0].numpy(),
                               rtol=1e-4, atol=1e-6)
    ln = p[1]
    del ln_calls[:]
    h = ptcore.tensor(a @ np.ones((6, 12), np.float32) / 6, requires_grad=True)
    gw, = ptcore.autograd.grad(ln(h).square().sum(), ln.weight)      # no input gradient
    assert ln_calls == [(False, True, False)]
    ht = torch.tensor(h.detach().numpy(), requires_grad=True)
    np.testing.assert_allclose(gw.numpy(), torch.autograd.grad(t[1](ht).square().sum(),
                                                               t[1].weight)[0].numpy(),
                               rtol=1e-4, atol=1e-5)
    del ln_calls[:]
    p(x).sum().backward()                                      # a plain backward: all three
    assert ln_calls == [(True, True, True)]


def test_batch_norm_kernel_runs_only_the_gradients_asked_for(bn_calls):
    p, t = _norm_nets("batch")
    a = _input("batch", 5)
    x = ptcore.tensor(a, requires_grad=True)
    gx, = ptcore.autograd.grad(p(x).sum(), x)
    assert bn_calls == [(True, False, False)]
    xt = torch.tensor(a, requires_grad=True)
    np.testing.assert_allclose(gx.numpy(), torch.autograd.grad(t(xt).sum(), xt)[0].numpy(),
                               rtol=1e-4, atol=1e-6)
    del bn_calls[:]
    bn = p[1]
    ptcore.autograd.grad(p(x).sum(), [bn.weight])            # conv output needs no gradient
    assert bn_calls == [(False, True, False)]
    del bn_calls[:]
    p(x).sum().backward()
    assert bn_calls == [(True, True, True)]


def _profiled_ops(fn):
    with ptcore.autograd.profiler.profile() as prof:
        fn()
    return [e.name for e in prof.function_events]


@pytest.mark.parametrize("kind", ["group", "instance", "batch-eval"])
def test_composite_norms_reduce_no_parameter_gradient_for_the_input(kind):
    # the input's gradient through an affine norm runs the reductions of the same
    # norm without parameters: the weight's and bias's (g * y and g summed over
    # the batch and space) are skipped, as torch's output_mask skips them
    x = ptcore.randn(3, 4, 5, 5, requires_grad=True)
    sums = []
    for affine in (True, False):
        ptcore.manual_seed(1)
        if kind == "group":
            m = ptcore.nn.GroupNorm(2, 4, affine=affine)
        elif kind == "instance":
            m = ptcore.nn.InstanceNorm2d(4, affine=affine)
        else:
            m = ptcore.nn.BatchNorm2d(4, affine=affine).eval()
        y = m(x)
        ops = _profiled_ops(lambda: ptcore.autograd.grad(y, x, ptcore.ones_like(y)))
        sums.append(ops.count("aten::sum"))
        if affine:
            full = _profiled_ops(lambda: ptcore.autograd.grad(m(x), [x] + list(m.parameters()),
                                                              ptcore.ones_like(y)))
            assert full.count("aten::sum") == sums[0] + 2       # the parameters' two
    assert sums[0] == sums[1]


_PRODUCTS = ("aten::mm", "aten::bmm", "aten::matmul", "aten::sum")


@pytest.mark.parametrize("op", ["bmm", "matmul", "baddbmm", "linear3d"])
def test_batched_products_run_only_the_products_asked_for(op):
    # torch's bmm/baddbmm/matmul backward and a Linear on a (B, T, C) input (addmm on
    # the folded rows, whose bias reduction is skipped too) under grad of one operand
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4, 5), (3, 5, 2), (3, 4, 2))]
    got = {}
    for lib in (ptcore, torch):
        a, b, c = (lib.tensor(t, requires_grad=True) for t in arrays)
        if op == "linear3d":
            w, bias = lib.tensor(arrays[1][0].T.copy(), requires_grad=True), c[0, 0]
            fn = lambda: lib.nn.functional.linear(a, w, bias)       # noqa: E731
        else:
            fn = {"bmm": lambda: lib.bmm(a, b), "matmul": lambda: a @ b,
                  "baddbmm": lambda: lib.baddbmm(c, a, b, alpha=0.5)}[op]
        out = fn()
        if lib is ptcore:
            with ptcore.autograd.profiler.profile() as prof:
                ga, = lib.autograd.grad(out, a, lib.ones_like(out), retain_graph=True)
            ran = [e.name for e in prof.function_events if e.name in _PRODUCTS]
            assert len(ran) == 1 and ran[0] != "aten::sum", ran     # one product, no reduction
        else:
            ga, = lib.autograd.grad(out, a, lib.ones_like(out), retain_graph=True)
        got[lib.__name__] = ga.numpy()
    np.testing.assert_allclose(got["ptcore"], got["torch"], rtol=1e-5, atol=1e-6)
