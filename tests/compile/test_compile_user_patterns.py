"""What training and inference scripts do with a compiled model, each against
the same model run eagerly (values and gradients): train()/eval() switches
(dropout's random numbers, batch norm's running statistics), grad modes,
inputs with and without requires_grad, batch sizes, gradient penalties and
double backward, hooks added after compiling, optimizer steps between calls,
frozen parameters, structured results, keyword and Python arguments, a
compiled training step, recurrent/attention/normalisation/embedding/conv
layers, float64 models, fullgraph, reset and the compile modes."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")

RTOL = 1e-5


def _close(a, b, rtol=RTOL, atol=1e-6):
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def _twins(make, **kw):
    """The same model twice (same initial parameters): one eager, one compiled."""
    ptcore.manual_seed(0)
    eager = make()
    ptcore.manual_seed(0)
    mod = make()
    return eager, mod, ptcore.compile(mod, **kw)


def _x(*shape, seed=0, rg=False, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ptcore.from_numpy(a).requires_grad_(rg)


def _same_grads(m1, m2, rtol=1e-4, atol=1e-6):
    for (name, p1), p2 in zip(m1.named_parameters(), m2.parameters()):
        _close(p2.grad, p1.grad, rtol=rtol, atol=atol)


def _same_state(m1, m2):
    for (k, v1), v2 in zip(m1.state_dict().items(), m2.state_dict().values()):
        if v1.dtype.is_floating_point:
            _close(v2, v1)
        else:
            assert v1.tolist() == v2.tolist(), k


def _ran_compiled(c):
    cf = getattr(c, "dynamo_ctx", c)
    return any(e.program is not None and e.hits for e in cf.entries)


def _forward_backward(e, m, c, xe, xc=None, loss=lambda y: y.sum()):
    """One call of each twin on its input (``xc``: the compiled one's, else
    ``xe``), results compared, then a backward of each and the gradients
    compared; returns the two results."""
    ye, yc = e(xe), c(xe if xc is None else xc)
    _close(yc, ye)
    loss(ye).backward()
    loss(yc).backward()
    _same_grads(e, m)
    return ye, yc


def _mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


# ---------------------------------------------------------------------------
# modes, grad modes, inputs
# ---------------------------------------------------------------------------

def test_train_eval_alternating_dropout_batchnorm():
    def make():
        return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3),
                             nn.Linear(8, 2))
    e, m, c = _twins(make)
    for step, train in enumerate([True, False, True, True, False, True, False]):
        e.train(train)
        c.train(train)
        assert m.training is train
        x = _x(5, 4, seed=step)
        ptcore.manual_seed(100 + step)
        ye = e(x)
        ptcore.manual_seed(100 + step)
        yc = c(x)
        _close(yc, ye)
        if train:
            ye.square().sum().backward()
            yc.square().sum().backward()
            _same_grads(e, m)
        _same_state(e, m)
    assert _ran_compiled(c)


def test_dropout_draws_the_eager_stream_without_reseeding():
    """Compiling a training graph runs its nodes again (to find their
    backward); a dropout run then must not consume the program's numbers."""
    def make():
        return nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    e, m, c = _twins(make)
    x = _x(6, 4)
    outs = {}
    for name, model in (("eager", e), ("compiled", c)):
        ptcore.manual_seed(7)
        outs[name] = [model(x) for _ in range(4)]
    for yc, ye in zip(outs["compiled"], outs["eager"]):
        _close(yc, ye)
    assert _ran_compiled(c)


def test_batchnorm_cumulative_average_in_training():
    """momentum=None: the factor is 1 / num_batches_tracked.item(), a value
    the graph must not keep from the first call."""
    def make():
        return nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4, momentum=None), nn.Linear(4, 1))
    e, m, c = _twins(make)
    for step in range(4):
        x = _x(6, 4, seed=step)
        _forward_backward(e, m, c, x)
        _same_state(e, m)


def test_item_in_a_training_forward():
    def f(x, w):
        s = (x * w).sum().item()
        return (x * w * s).tanh()
    cf = ptcore.compile(f)
    w = _x(3, seed=1, rg=True)
    for step in range(4):
        x = _x(2, 3, seed=step)
        ge, = ptcore.autograd.grad(f(x, w).sum(), w)
        yc = cf(x, w)
        gc, = ptcore.autograd.grad(yc.sum(), w)
        _close(yc, f(x, w))
        _close(gc, ge)
    assert _ran_compiled(cf)


def test_no_grad_and_inference_mode_then_grad():
    e, m, c = _twins(_mlp)
    x = _x(3, 4)
    for ctx in (ptcore.no_grad, ptcore.inference_mode, ptcore.enable_grad, ptcore.no_grad,
                ptcore.enable_grad):
        with ctx():
            ye, yc = e(x), c(x)
        _close(yc, ye)
        assert yc.requires_grad == ye.requires_grad
        if ye.requires_grad:
            ye.sum().backward()
            yc.sum().backward()
            _same_grads(e, m)
    assert _ran_compiled(c)


def test_input_requires_grad_alternating():
    e, m, c = _twins(_mlp)
    for step in range(6):
        rg = step % 2 == 0
        xe, xc = _x(3, 4, seed=step, rg=rg), _x(3, 4, seed=step, rg=rg)
        _forward_backward(e, m, c, xe, xc)
        _close(xc.grad, xe.grad)
    assert _ran_compiled(c)


@pytest.mark.parametrize("dynamic", [None, True])
def test_batch_size_changes_and_back(dynamic):
    e, m, c = _twins(_mlp, dynamic=dynamic)
    for step, n in enumerate([4, 6, 4, 6, 1, 4]):
        x = _x(n, 4, seed=step)
        _forward_backward(e, m, c, x, loss=lambda y: y.mean())
    assert _ran_compiled(c)


# ---------------------------------------------------------------------------
# higher-order gradients
# ---------------------------------------------------------------------------

def _critic():
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


_CRITICS = {
    "mlp": (_critic, (3, 4)),
    "conv": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3), nn.Tanh(), nn.Flatten(),
                                   nn.Linear(3 * 4 * 4, 1)), (3, 2, 6, 6)),
    # (composites writing into buffers of their own: no effect, recomputed)
    "conv_transpose": (lambda: nn.Sequential(nn.ConvTranspose2d(2, 2, 3, stride=2),
                                             nn.GroupNorm(1, 2), nn.SiLU(),
                                             nn.Upsample(scale_factor=2), nn.Conv2d(2, 1, 1)),
                       (2, 2, 3, 3)),
}


@pytest.mark.parametrize("name", list(_CRITICS))
def test_gradient_penalty_then_backward(name):
    make, shape = _CRITICS[name]
    e, m, c = _twins(make)
    for step in range(3):
        losses = []
        for model in (e, c):
            x = _x(*shape, seed=step, rg=True)
            d = model(x)
            g, = ptcore.autograd.grad(d.sum(), x, create_graph=True)
            pen = (g.flatten(1).norm(2, dim=1) - 1).square().mean()
            loss = d.mean() + 10 * pen
            loss.backward()
            losses.append(loss)
        _close(losses[1], losses[0])
        _same_grads(e, m)
        e.zero_grad()
        m.zero_grad()
    assert _ran_compiled(c)


def test_double_backward():
    e, m, c = _twins(_critic)
    for step in range(3):
        res = []
        for model in (e, c):
            x = _x(3, 4, seed=step, rg=True)
            g, = ptcore.autograd.grad(model(x).sum(), x, create_graph=True)
            gg, = ptcore.autograd.grad(g.square().sum(), x)
            res.append((g, gg))
        _close(res[1][0], res[0][0])
        _close(res[1][1], res[0][1], rtol=1e-4)
    assert _ran_compiled(c)


# ---------------------------------------------------------------------------
# changes between calls
# ---------------------------------------------------------------------------

def test_hooks_registered_after_compile():
    e, m, c = _twins(_mlp)
    x = _x(3, 4)
    _close(c(x), e(x))
    seen = []
    for model in (e, m):
        model[1].register_forward_hook(lambda mod, inp, out: out * 2)
        model[0].register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
    ye, yc = e(x), c(x)
    _close(yc, ye)
    for y in (ye, yc):
        y.register_hook(lambda g: seen.append(g.shape) or g * 3)
        y.sum().backward()
    assert len(seen) == 2
    _same_grads(e, m)


def test_tensor_hooks_on_parameters_and_retain_graph():
    e, m, c = _twins(_mlp)
    x = _x(3, 4)
    _close(c(x), e(x))
    for model in (e, m):
        model[0].weight.register_hook(lambda g: g * 0.5)
    ye, yc = e(x), c(x)
    for y in (ye, yc):
        y.sum().backward(retain_graph=True)
        y.square().sum().backward()
    _same_grads(e, m)


def test_non_contiguous_inputs_alternating():
    e, m, c = _twins(_mlp)
    for step in range(4):
        base = _x(4, 3, seed=step)
        x = base.t() if step % 2 else base.t().contiguous()
        _forward_backward(e, m, c, x)
    assert _ran_compiled(c)


def test_full_backward_hook_registered_after_compile():
    e, m, c = _twins(_mlp)
    x = _x(3, 4, rg=True)
    _close(c(x), e(x))
    seen = {"eager": [], "compiled": []}
    for name, model in (("eager", e), ("compiled", m)):
        model[0].register_full_backward_hook(
            lambda mod, gin, gout, name=name: seen[name].append(gout[0].sum().item()))
    for step in range(3):
        _forward_backward(e, m, c, x)
    assert len(seen["compiled"]) == len(seen["eager"]) == 3
    np.testing.assert_allclose(seen["compiled"], seen["eager"], rtol=1e-5)


class _StraightThrough(ptcore.autograd.Function):
    """Rounding with the gradient passed straight through (quantisation-aware
    training): not the derivative of the forward's ops (zero)."""

    @staticmethod
    def forward(ctx, x):
        return (x * 4).round() / 4

    @staticmethod
    def backward(ctx, g):
        return g


def test_custom_autograd_function():
    def f(x, w):
        return _StraightThrough.apply((x @ w).tanh()).square().sum()
    cf = ptcore.compile(f)
    w = _x(4, 2, seed=1, rg=True)
    for step in range(3):
        x = _x(3, 4, seed=step)
        ge, = ptcore.autograd.grad(f(x, w), w)
        gc, = ptcore.autograd.grad(cf(x, w), w)
        _close(gc, ge)
    with ptcore.no_grad():
        _close(cf(x, w), f(x, w))


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_optimizer_steps_between_calls(opt):
    e, m, c = _twins(_mlp)
    kw = {"lr": 0.1, "momentum": 0.9} if opt == "SGD" else {"lr": 0.01}
    oe = getattr(ptcore.optim, opt)(e.parameters(), **kw)
    oc = getattr(ptcore.optim, opt)(m.parameters(), **kw)
    for step in range(4):
        x = _x(5, 4, seed=step)
        le, lc = e(x).square().mean(), c(x).square().mean()
        _close(lc, le)
        for o, l in ((oe, le), (oc, lc)):
            o.zero_grad()
            l.backward()
            o.step()
        _same_state(e, m)
    assert _ran_compiled(c)


def test_parameters_frozen_after_compile():
    e, m, c = _twins(_mlp)
    x = _x(3, 4)
    for step in range(4):
        if step == 2:
            for model in (e, m):
                model[0].weight.requires_grad_(False)
                model[0].bias.requires_grad_(False)
        _forward_backward(e, m, c, x)
    assert m[0].weight.grad is not None        # (from the first two steps, kept)
    assert _ran_compiled(c)


def test_parameter_written_in_place_without_optimizer():
    e, m, c = _twins(_mlp)
    x = _x(3, 4)
    for step in range(3):
        _close(c(x), e(x))
        with ptcore.no_grad():
            for model in (e, m):
                model[0].weight.mul_(0.5)
                model[2].bias.add_(1.0)


# ---------------------------------------------------------------------------
# results and arguments
# ---------------------------------------------------------------------------

class _Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.a = nn.Linear(6, 2)
        self.b = nn.Linear(6, 3)

    def forward(self, x, *, scale=1.0, shift=None, flag=False, k=1):
        h = self.body(x).relu() * scale
        if shift is not None:
            h = h + shift
        if flag:
            h = -h
        return {"a": self.a(h), "pair": (self.b(h)[:, :k], h.sum())}


def test_dict_and_tuple_results_with_changing_kwargs():
    e, m, c = _twins(_Heads)
    calls = [{}, {"scale": 2.0}, {"scale": 2.0, "flag": True}, {"k": 2},
             {"shift": _x(6, seed=9)}, {}, {"scale": 0.5, "flag": False, "k": 3}]
    for step, kw in enumerate(calls):
        x = _x(3, 4, seed=step)
        re, rc = e(x, **kw), c(x, **kw)
        assert type(rc) is dict and list(rc) == ["a", "pair"]
        assert type(rc["pair"]) is tuple
        _close(rc["a"], re["a"])
        _close(rc["pair"][0], re["pair"][0])
        _close(rc["pair"][1], re["pair"][1])
        (re["a"].sum() + re["pair"][0].sum() * re["pair"][1]).backward()
        (rc["a"].sum() + rc["pair"][0].sum() * rc["pair"][1]).backward()
        _same_grads(e, m)
    assert _ran_compiled(c)


def test_function_with_python_arguments():
    def f(x, w, n, alpha, flag, extra):
        y = x @ w
        for _ in range(n):
            y = (y * alpha).tanh()
        if flag:
            y = y.relu()
        return y if extra is None else y + extra
    cf = ptcore.compile(f)
    w = _x(4, 4, seed=1, rg=True)
    for step, (n, alpha, flag, extra) in enumerate([(1, 0.5, False, None), (2, 0.5, False, None),
                                                    (2, 1.5, True, None), (1, 0.5, False, 1.0),
                                                    (1, 0.5, False, None), (3, 1, True, None)]):
        x = _x(2, 4, seed=step)
        ye = f(x, w, n, alpha, flag, extra)
        ge, = ptcore.autograd.grad(ye.sum(), w)
        yc = cf(x, w, n, alpha, flag, extra)
        gc, = ptcore.autograd.grad(yc.sum(), w)
        _close(yc, ye)
        _close(gc, ge)
    assert _ran_compiled(cf)


def test_compiled_training_step_function():
    def make():
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    e, m, _ = _twins(make)
    oe = ptcore.optim.Adam(e.parameters(), lr=0.01)
    om = ptcore.optim.Adam(m.parameters(), lr=0.01)

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    cstep = ptcore.compile(step)

    @ptcore.compile
    def step_m(x, y):
        om.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        om.step()
        return loss

    for i in range(6):
        x, y = _x(6, 4, seed=i), _x(6, 1, seed=10 + i)
        le = step(e, oe, x, y)
        lc = cstep(m, om, x, y) if i % 2 else step_m(x, y)
        _close(lc, le)
        _same_state(e, m)


# ---------------------------------------------------------------------------
# layers
# ---------------------------------------------------------------------------

class _Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.c2 = nn.Conv2d(3, 3, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        h = F.relu(self.bn(self.c1(x)))
        h = F.relu(x + self.c2(h))
        return self.fc(self.pool(h).flatten(1))


class _Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.rnn = cell(4, 5, batch_first=True, num_layers=2)
        self.norm = nn.LayerNorm(5)

    def forward(self, idx):
        out, _ = self.rnn(self.emb(idx))
        return self.norm(out)


class _Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        y, w = self.att(x, x, x)
        return self.norm(x + y), w


_LAYERS = {
    "residual": (_Residual, lambda s: _x(2, 3, 5, 5, seed=s)),
    "lstm": (lambda: _Recurrent(nn.LSTM),
             lambda s: ptcore.from_numpy(np.random.default_rng(s).integers(0, 10, (2, 5)))),
    "gru": (lambda: _Recurrent(nn.GRU),
            lambda s: ptcore.from_numpy(np.random.default_rng(s).integers(0, 10, (2, 5)))),
    "attention": (_Attention, lambda s: _x(2, 4, 8, seed=s)),
}


def _loss(y):
    if isinstance(y, tuple):
        return sum(t.square().sum() for t in y)
    return y.square().sum()


@pytest.mark.parametrize("name", list(_LAYERS))
def test_layers_train_then_eval(name):
    make, data = _LAYERS[name]
    e, m, c = _twins(make)
    for step in range(3):
        x = data(step)
        ye, yc = e(x), c(x)
        le, lc = _loss(ye), _loss(yc)
        _close(lc, le, rtol=1e-4)
        le.backward()
        lc.backward()
        # (atol 1e-5: eager's fused recurrent kernels keep the older float32 exp/sigmoid/tanh,
        # the compiled graph's pointwise ops the float-lane ones, both within an ulp or two:
        # a GRU weight gradient of 2.4e-4 differed by 1.6e-6 after three steps)
        _same_grads(e, m, rtol=1e-3, atol=1e-5)
    e.eval()
    c.eval()
    with ptcore.no_grad():
        x = data(7)
        _close(_loss(c(x)), _loss(e(x)), rtol=1e-4)
    _same_state(e, m)
    assert _ran_compiled(c)


def test_float64_model():
    e, m, c = _twins(lambda: _mlp().double())
    for step in range(3):
        x = _x(3, 4, seed=step, dtype=np.float64, rg=True)
        ye, yc = e(x), c(x)
        assert yc.dtype == ptcore.float64
        np.testing.assert_allclose(yc.detach().numpy(), ye.detach().numpy(), rtol=1e-12)
        ye.sum().backward()
        yc.sum().backward()
        for p1, p2 in zip(e.parameters(), m.parameters()):
            np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=1e-12)
    assert _ran_compiled(c)


# ---------------------------------------------------------------------------
# compile's own arguments
# ---------------------------------------------------------------------------

def test_fullgraph_raises_torchs_exception_type_on_a_break():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(f, fullgraph=True, backend="eager")(torch.ones(3))
    with pytest.raises(ptcore._dynamo.exc.Unsupported) as info:
        ptcore.compile(f, fullgraph=True)(ptcore.ones(3))
    assert isinstance(info.value, RuntimeError)
    assert issubclass(torch._dynamo.exc.Unsupported, RuntimeError)
    _close(ptcore.compile(f)(ptcore.ones(3)), f(ptcore.ones(3)))



@pytest.mark.parametrize("name", ["item", "int", "float", "item_as_size", "item_as_index"])
def test_fullgraph_takes_numbers_converted_from_tensors_as_torch(name):
    # torch's fullgraph=True captures item()/int()/float() as symbolic numbers;
    # ptcore runs them as a break keyed by the value: same results, no error
    f = {"item": lambda t: t * t.sum().item() + t.max().item(),
         "int": lambda t: t * int(t.sum()),
         "float": lambda t: t * float(t.sum()),
         "item_as_size": lambda t: t.new_zeros(t.long().sum().item()),
         "item_as_index": lambda t: t[: t.long().max().item() - 3]}[name]
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    want = torch.compile(f, fullgraph=True, backend="eager")(torch.from_numpy(a))
    c = ptcore.compile(f, fullgraph=True)
    for k in (1.0, 1.0, 2.0):        # the second call replays, the third takes a new value
        got = c(ptcore.from_numpy(a * k))
        want = f(torch.from_numpy(a * k))
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy())


def test_fullgraph_still_refuses_a_branch_on_a_converted_bool():
    def f(t):
        return t + 1 if bool(t.sum() > 0) else t

    with pytest.raises(torch._dynamo.exc.TorchDynamoException):
        torch.compile(f, fullgraph=True, backend="eager")(torch.ones(3))
    with pytest.raises(ptcore._dynamo.exc.Unsupported):
        ptcore.compile(f, fullgraph=True)(ptcore.ones(3))


@pytest.mark.parametrize("options", [{"no_such_option": 1}, {"shape_padding": 1},
                                     {"epilogue_fusion": "yes"}, [("max_autotune", True)],
                                     {3: True}])
def test_inductor_options_are_checked_as_torch(options):
    def errs(lib):
        try:
            lib.compile(lambda t: t + 1, options=options)
        except Exception as e:          # noqa: BLE001 -- the type is what is compared
            return type(e), str(e).split(",")[0]
        return None, None

    t_type, t_msg = errs(torch)
    p_type, p_msg = errs(ptcore)
    assert t_type is not None and p_type is t_type
    assert p_msg == t_msg


def test_inductor_options_torch_knows_are_accepted():
    options = {"max_autotune": True, "epilogue_fusion": False, "triton.cudagraphs": False,
               "shape-padding": True, "trace.enabled": False, "cpp.threads": 1}
    torch.compile(lambda t: t + 1, options=options)
    f = ptcore.compile(lambda t: t + 1, options=options)
    np.testing.assert_allclose(f(ptcore.ones(2)).numpy(), [2.0, 2.0])
    # other backends take options unchecked (torch passes them to the backend)
    ptcore.compile(lambda t: t, backend="eager", options={"no_such_option": 1})

def test_compiler_reset_between_calls():
    e, m, c = _twins(_mlp)
    x = _x(3, 4, rg=True)
    for step in range(4):
        if step == 2:
            ptcore.compiler.reset()
            assert not c.dynamo_ctx.entries
        _forward_backward(e, m, c, x)
    assert _ran_compiled(c)


@pytest.mark.parametrize("kw", [{"mode": "max-autotune"}, {"mode": "reduce-overhead"},
                                {"mode": "max-autotune-no-cudagraphs"}, {"mode": "default"},
                                {"dynamic": True}, {"dynamic": False}])
def test_compile_modes_on_cpu(kw):
    e, m, c = _twins(_mlp, **kw)
    for step in range(3):
        xe, xc = (_x(2 + step % 2, 4, seed=step, rg=True) for _ in range(2))
        _forward_backward(e, m, c, xe, xc)
        _close(xc.grad, xe.grad)
    assert _ran_compiled(c)


def test_linalg_ops_whose_table_name_is_not_their_binding():
    """``ptcore.linalg.inv`` is the table's ``linalg::linalg_inv``: a compiled model calling it
    (and det, svdvals, slogdet, solve, norms) resolved no function for the op and failed to
    compile.  Forward and gradient equal eager's; every op of the table resolves."""
    from ptcore._dispatch import table
    from ptcore.jit._ir import resolve_op
    for d in table.OPS.values():
        resolve_op((d.namespace, d.name))

    class M(ptcore.nn.Module):
        def forward(self, x):
            L = ptcore.linalg
            return (L.det(x) + L.svdvals(x).sum(-1) + L.inv(x).sum((-2, -1)) +
                    L.slogdet(x)[1] + L.matrix_norm(x) + L.solve(x, x.mT).sum((-2, -1)))
    m = M()
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 4, 4, dtype=ptcore.float64, requires_grad=True)
    y, ye = cm(x), m(x)
    assert ptcore.allclose(y, ye, rtol=1e-12, atol=1e-12)
    g, = ptcore.autograd.grad(y.sum(), x)
    ge, = ptcore.autograd.grad(ye.sum(), x)
    assert ptcore.allclose(g, ge, rtol=1e-10, atol=1e-10)


def softmax(x, y):
    return (x.softmax(-1) * y).sum()


def mm(x):
    return ptcore.mm(x, x.t()) + 1


def cumsum(x):
    return x.cumsum(1) * 2


@pytest.mark.parametrize("fn", [softmax, mm, cumsum])
@pytest.mark.parametrize("grad", [False, True])
def test_a_function_named_like_an_op_it_calls(fn, grad):
    """A segment's code is ``<function>_<k>``, the globals naming its ops
    ``<op>_<n>``: a function ``softmax`` whose first op is ``softmax`` made both
    ``softmax_0``, the segment shadowed the op and called itself (RecursionError
    from the second call on, when the compiled code runs)."""
    c = ptcore.compile(fn)
    args = [ptcore.arange(12.).reshape(3, 4).div(7).requires_grad_(grad)
            for _ in range(fn.__code__.co_argcount)]
    want = fn(*args)
    for _ in range(3):
        got = c(*args)
        _close(got, want)
    if grad:
        (g,) = ptcore.autograd.grad(c(*args).sum(), args[:1])
        (w,) = ptcore.autograd.grad(fn(*args).sum(), args[:1])
        _close(g, w)
