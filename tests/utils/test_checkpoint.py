"""ptcore.utils.checkpoint and ptcore.autograd.graph.saved_tensors_hooks vs torch 2.13."""
import threading
import warnings
import weakref

import numpy as np
import pytest

import ptcore
import ptcore.utils.checkpoint as pc
from ptcore.autograd.graph import (saved_tensors_hooks, save_on_cpu,
                                   disable_saved_tensors_hooks)

try:
    import torch
    import torch.utils.checkpoint as tc
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

RT = dict(rtol=1e-6, atol=1e-7)
MODES = [True, False]


def _np(t):
    return t.detach().numpy()


def _mlp_pair(p_drop=0.0, seed=0):
    """A torch MLP and a ptcore copy of it (same parameters)."""
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Dropout(p_drop),
                             torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
    pm = ptcore.nn.Sequential(ptcore.nn.Linear(6, 16), ptcore.nn.Tanh(),
                              ptcore.nn.Dropout(p_drop), ptcore.nn.Linear(16, 16),
                              ptcore.nn.GELU(), ptcore.nn.Linear(16, 3))
    with ptcore.no_grad():
        for tp, pp in zip(tm.parameters(), pm.parameters()):
            pp.copy_(ptcore.from_numpy(tp.detach().numpy().copy()))
    return tm, pm


def _x(n=5, d=6, seed=1):
    return np.random.RandomState(seed).randn(n, d).astype(np.float32)


def _grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


def _zero(m, *xs):
    for p in m.parameters():
        p.grad = None
    for x in xs:
        x.grad = None


def _warn_msgs(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w]


def _err(fn, exc=Exception):
    with pytest.raises(exc) as ei:
        fn()
    return str(ei.value)


# ---------------------------------------------------------------------------
# values and gradients vs torch
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("reentrant", MODES)
def test_mlp_matches_torch(reentrant):
    tm, pm = _mlp_pair()
    xn = _x()
    tx = torch.tensor(xn, requires_grad=True)
    px = ptcore.tensor(xn, requires_grad=True)
    ty = tc.checkpoint(tm, tx, use_reentrant=reentrant)
    py = pc.checkpoint(pm, px, use_reentrant=reentrant)
    np.testing.assert_allclose(_np(py), _np(ty), **RT)
    assert type(py.grad_fn).__name__ == type(ty.grad_fn).__name__
    gn = np.random.RandomState(2).randn(5, 3).astype(np.float32)
    ty.backward(torch.tensor(gn))
    py.backward(ptcore.tensor(gn))
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), **RT)
    for a, b in zip(_grads(pm), [p.grad.numpy() for p in tm.parameters()]):
        np.testing.assert_allclose(a, b, **RT)


@needs_torch
def test_grad_fn_names():
    x = ptcore.randn(3, requires_grad=True)
    assert type(pc.checkpoint(lambda a: a * 2, x, use_reentrant=True).grad_fn).__name__ == \
        "CheckpointFunctionBackward"
    assert type(pc.checkpoint(lambda a: a.sin() * a, x, use_reentrant=False).grad_fn).__name__ \
        == "MulBackward0"


@pytest.mark.parametrize("reentrant", MODES)
def test_dropout_preserve_rng_matches_plain(reentrant):
    _, pm = _mlp_pair(p_drop=0.5) if torch is not None else (None, None)
    if pm is None:
        pytest.skip("torch is not installed")
    xn = _x(16)
    px = ptcore.tensor(xn, requires_grad=True)
    ptcore.manual_seed(7)
    y_plain = pm(px)
    y_plain.sum().backward()
    g_plain = [px.grad.numpy().copy()] + _grads(pm)
    _zero(pm, px)
    ptcore.manual_seed(7)
    y = pc.checkpoint(pm, px, use_reentrant=reentrant)
    after_fwd = ptcore.rand(4).numpy()
    y.sum().backward()
    # (allclose: ptcore's gelu rounds differently with grad off, as the
    # reentrant forward runs; a different dropout mask would differ by O(1))
    np.testing.assert_allclose(_np(y), _np(y_plain), **RT)
    for a, b in zip([px.grad.numpy()] + _grads(pm), g_plain):
        np.testing.assert_allclose(a, b, **RT)
    # the recomputation does not advance the caller's RNG stream
    ptcore.manual_seed(7)
    pm(px)
    np.testing.assert_array_equal(ptcore.rand(4).numpy(), after_fwd)


@pytest.mark.parametrize("reentrant", MODES)
def test_dropout_without_preserve_rng_differs(reentrant):
    drop = ptcore.nn.Dropout(0.5)
    x = ptcore.ones(200, requires_grad=True)
    ptcore.manual_seed(3)
    y = pc.checkpoint(lambda a: drop(a * 1.0), x, use_reentrant=reentrant,
                      preserve_rng_state=False)
    y.sum().backward()
    # the gradient uses the recomputation's (new) mask, not the forward's
    assert not np.array_equal(x.grad.numpy(), _np(y))
    x.grad = None
    ptcore.manual_seed(3)
    y = pc.checkpoint(lambda a: drop(a * 1.0), x, use_reentrant=reentrant)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), _np(y))


@pytest.mark.parametrize("reentrant", MODES)
def test_recompute_happens(reentrant):
    calls = []

    def f(a, b):
        calls.append(ptcore.is_grad_enabled())
        return (a.sin() * b).tanh()

    a = ptcore.randn(4, requires_grad=True)
    b = ptcore.randn(4, requires_grad=True)
    y = pc.checkpoint(f, a, b, use_reentrant=reentrant)
    assert len(calls) == 1
    assert calls[0] is (not reentrant)          # reentrant forward runs under no_grad
    y.sum().backward()
    assert len(calls) == 2 and calls[1] is True
    ga, gb = a.grad.clone(), b.grad.clone()
    a.grad = b.grad = None
    f(a, b).sum().backward()
    np.testing.assert_allclose(ga.numpy(), a.grad.numpy(), **RT)
    np.testing.assert_allclose(gb.numpy(), b.grad.numpy(), **RT)


def test_non_reentrant_frees_activations():
    refs = []

    def f(x):
        h = x.sin()
        refs.append(weakref.ref(h))
        h2 = h * h
        refs.append(weakref.ref(h2))
        return h2.cos() * x

    x = ptcore.randn(4, requires_grad=True)
    y = f(x)
    assert all(r() is not None for r in refs)       # plain: kept for backward
    refs.clear()
    y = pc.checkpoint(f, x, use_reentrant=False)
    assert all(r() is None for r in refs)           # checkpointed: dropped
    y.sum().backward()
    g = x.grad.clone()
    x.grad = None
    f(x).sum().backward()
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), **RT)


@pytest.mark.parametrize("reentrant", MODES)
def test_retain_graph_recomputes_each_backward(reentrant):
    calls = [0]

    def f(a):
        calls[0] += 1
        return a.exp() * a

    a = ptcore.randn(3, requires_grad=True)
    y = pc.checkpoint(f, a, use_reentrant=reentrant)
    y.sum().backward(retain_graph=True)
    g1 = a.grad.clone()
    y.sum().backward()
    assert calls[0] == 3
    np.testing.assert_allclose(a.grad.numpy(), 2 * g1.numpy(), **RT)


@needs_torch
@pytest.mark.parametrize("reentrant", MODES)
def test_non_tensor_args_and_multiple_outputs(reentrant):
    def mk(lib):
        def f(a, scale, b, flag, none):
            assert none is None and flag == "on"
            return a * scale + b.sin(), (a * b).sum(), lib.arange(3)
        return f

    an, bn = _x(2, 3), _x(2, 3, seed=5)
    res = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        a = lib.tensor(an, requires_grad=True)
        b = lib.tensor(bn, requires_grad=True)
        y1, y2, idx = ck(mk(lib), a, 2.5, b, "on", None, use_reentrant=reentrant)
        assert not idx.requires_grad
        (y1.sum() * 2 + y2 * 3).backward()
        res.append((_np(y1), _np(y2), a.grad.numpy(), b.grad.numpy()))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, **RT)


@needs_torch
def test_reentrant_output_without_grad():
    # an output whose recomputation does not require grad gets no gradient
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        a = lib.ones(3, requires_grad=True)
        y, z = ck(lambda t: (t * 3, t.detach() + 1), a, use_reentrant=True)
        assert z.requires_grad        # every output of the Function joins the graph
        y.sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), [3, 3, 3])


# ---------------------------------------------------------------------------
# non-reentrant extras: kwargs, autograd.grad, nesting, no_grad, context_fn
# ---------------------------------------------------------------------------

@needs_torch
def test_non_reentrant_kwargs_and_autograd_grad():
    an = _x(3, 4)
    res = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        a = lib.tensor(an, requires_grad=True)
        w = lib.tensor(an.T.copy(), requires_grad=True)
        y = ck(lambda x, *, weight, bias=0.0: (x @ weight).tanh() + bias, a, weight=w, bias=1.5,
               use_reentrant=False)
        ga, gw = lib.autograd.grad(y.sum(), (a, w), create_graph=False)
        res.append((_np(y), ga.numpy(), gw.numpy()))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, **RT)


@needs_torch
def test_non_reentrant_inputs_without_grad_use_parameters():
    # inputs that do not require grad: parameters inside still get gradients
    tm, pm = _mlp_pair()
    xn = _x()
    ty = tc.checkpoint(tm, torch.tensor(xn), use_reentrant=False)
    py = pc.checkpoint(pm, ptcore.tensor(xn), use_reentrant=False)
    assert py.requires_grad and ty.requires_grad
    ty.sum().backward()
    py.sum().backward()
    for a, b in zip(_grads(pm), [p.grad.numpy() for p in tm.parameters()]):
        np.testing.assert_allclose(a, b, **RT)


@needs_torch
def test_nested_non_reentrant():
    an = _x(4, 4)
    res = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        calls = {"inner": 0, "outer": 0}

        def inner(t):
            calls["inner"] += 1
            return (t.sin() * t).exp()

        def outer(t):
            calls["outer"] += 1
            u = t.cos() * 2
            return ck(inner, u, use_reentrant=False).tanh() * u

        a = lib.tensor(an, requires_grad=True)
        y = ck(outer, a, use_reentrant=False)
        y.sum().backward()
        res.append((_np(y), a.grad.numpy(), dict(calls)))
    np.testing.assert_allclose(res[1][0], res[0][0], **RT)
    np.testing.assert_allclose(res[1][1], res[0][1], **RT)
    assert res[1][2] == res[0][2]


@pytest.mark.parametrize("reentrant", MODES)
def test_under_no_grad_runs_once(reentrant):
    calls = [0]

    def f(a):
        calls[0] += 1
        return a * 2

    a = ptcore.randn(3, requires_grad=True)
    with ptcore.no_grad():
        y = pc.checkpoint(f, a, use_reentrant=reentrant)
    assert calls[0] == 1 and not y.requires_grad and y.grad_fn is None


def test_context_fn():
    seen = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *a):
            return False

    a = ptcore.randn(3, requires_grad=True)
    y = pc.checkpoint(lambda t: t.sin(), a, use_reentrant=False,
                      context_fn=lambda: (Ctx("fwd"), Ctx("recompute")))
    assert seen == ["fwd"]
    y.sum().backward()
    assert seen == ["fwd", "recompute"]
    np.testing.assert_allclose(a.grad.numpy(), a.detach().cos().numpy(), **RT)


@needs_torch
def test_custom_function_inside_non_reentrant():
    def mk(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * g * x
        return Sq

    an = _x(2, 3)
    res = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        Sq = mk(lib)
        a = lib.tensor(an, requires_grad=True)
        y = ck(lambda t: Sq.apply(t.exp()).sum(), a, use_reentrant=False)
        y.backward()
        res.append(a.grad.numpy())
    np.testing.assert_allclose(res[1], res[0], **RT)


@needs_torch
def test_unpack_twice_error_matches_torch():
    def mk(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                ctx.saved_tensors
                ctx.saved_tensors
                return g * 2
        return Twice

    msgs = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        Twice = mk(lib)
        a = lib.randn(3, requires_grad=True)
        y = ck(lambda t: Twice.apply(t.sin()), a, use_reentrant=False)
        err_cls = tc.CheckpointError if lib is torch else pc.CheckpointError
        msgs.append(_err(lambda: y.sum().backward(), err_cls))
    assert msgs[0] == msgs[1]


@needs_torch
def test_determinism_check():
    msgs, grads = [], []
    for lib, ck, E in ((torch, tc.checkpoint, tc.CheckpointError),
                       (ptcore, pc.checkpoint, pc.CheckpointError)):
        state = {"n": 0}

        def f(t):
            state["n"] += 1
            if state["n"] == 1:
                return t.sin().sum()
            return t.double().sin().sum().float()    # saves a float64 tensor instead

        a = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = ck(f, a, use_reentrant=False)
        msgs.append(_err(lambda: y.backward(), E))
        # "none" skips the check (the recomputed values are used as they are)
        state["n"] = 0
        ck(f, a, use_reentrant=False, determinism_check="none").backward()
        grads.append(a.grad.numpy())
    head = ("torch.utils.checkpoint: Recomputed values for the following tensors have different "
            "metadata than during the forward pass.\ntensor at position 0:\nsaved metadata: ")
    assert msgs[0].startswith(head) and msgs[1].startswith(head)
    assert "'dtype': ptcore.float32" in msgs[1] and "'dtype': ptcore.float64" in msgs[1]
    np.testing.assert_allclose(grads[1], grads[0], **RT)
    x = ptcore.randn(2, requires_grad=True)
    tmsg = _err(lambda: tc.checkpoint(torch.sin, torch.randn(2, requires_grad=True),
                                      use_reentrant=False, determinism_check="bad"), ValueError)
    assert _err(lambda: pc.checkpoint(ptcore.sin, x, use_reentrant=False,
                                      determinism_check="bad"), ValueError) == tmsg


@needs_torch
def test_more_tensors_saved_in_recompute():
    msgs = []
    for lib, ck, E in ((torch, tc.checkpoint, tc.CheckpointError),
                       (ptcore, pc.checkpoint, pc.CheckpointError)):
        state = {"n": 0}

        def f(t):
            state["n"] += 1
            return t.sin() if state["n"] == 1 else t.sin().cos()

        a = lib.randn(3, requires_grad=True)
        y = ck(f, a, use_reentrant=False, early_stop=False)
        msgs.append(_err(lambda: y.sum().backward(), E))
    assert msgs[0] == msgs[1]


# ---------------------------------------------------------------------------
# reentrant-only errors and warnings (torch's texts)
# ---------------------------------------------------------------------------

@needs_torch
def test_use_reentrant_none_warns_and_is_reentrant():
    tw = _warn_msgs(lambda: tc.checkpoint(torch.sin, torch.randn(2, requires_grad=True)))
    pw = []
    out = []

    def run():
        out.append(pc.checkpoint(ptcore.sin, ptcore.randn(2, requires_grad=True)))
    pw = _warn_msgs(run)
    assert pw == tw and len(pw) == 1
    assert type(out[0].grad_fn).__name__ == "CheckpointFunctionBackward"
    seq_t = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Tanh())
    seq_p = ptcore.nn.Sequential(ptcore.nn.Tanh(), ptcore.nn.Tanh())
    tw = _warn_msgs(lambda: tc.checkpoint_sequential(seq_t, 2, torch.randn(2, requires_grad=True)))
    pw = _warn_msgs(lambda: pc.checkpoint_sequential(seq_p, 2,
                                                     ptcore.randn(2, requires_grad=True)))
    assert pw[0] == tw[0]


@needs_torch
def test_reentrant_kwargs_and_context_fn_errors():
    tmsg = _err(lambda: tc.checkpoint(lambda a, b=1: a, torch.ones(1), use_reentrant=True, b=2,
                                      c=3), ValueError)
    pmsg = _err(lambda: pc.checkpoint(lambda a, b=1: a, ptcore.ones(1), use_reentrant=True, b=2,
                                      c=3), ValueError)
    assert pmsg == tmsg == "Unexpected keyword arguments: b,c"
    tmsg = _err(lambda: tc.checkpoint(torch.sin, torch.ones(1), use_reentrant=True, debug=True),
                ValueError)
    pmsg = _err(lambda: pc.checkpoint(ptcore.sin, ptcore.ones(1), use_reentrant=True, debug=True),
                ValueError)
    assert pmsg == tmsg
    tmsg = _err(lambda: tc.checkpoint_sequential([torch.sin], 1, torch.ones(1),
                                                 use_reentrant=True, foo=1), ValueError)
    pmsg = _err(lambda: pc.checkpoint_sequential([ptcore.sin], 1, ptcore.ones(1),
                                                 use_reentrant=True, foo=1), ValueError)
    assert pmsg == tmsg


@needs_torch
def test_reentrant_no_input_requires_grad_warns():
    tw = _warn_msgs(lambda: tc.checkpoint(torch.sin, torch.ones(2), use_reentrant=True))
    out = []
    pw = _warn_msgs(lambda: out.append(pc.checkpoint(ptcore.sin, ptcore.ones(2),
                                                     use_reentrant=True)))
    assert pw == tw == ["None of the inputs have requires_grad=True. Gradients will be None"]
    assert not out[0].requires_grad
    # non-reentrant: no warning
    assert _warn_msgs(lambda: pc.checkpoint(ptcore.sin, ptcore.ones(2),
                                            use_reentrant=False)) == []


@needs_torch
def test_reentrant_autograd_grad_unsupported():
    msgs = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        a = lib.randn(3, requires_grad=True)
        y = ck(lambda t: t.sin(), a, use_reentrant=True)
        msgs.append(_err(lambda: lib.autograd.grad(y.sum(), a), RuntimeError))
        b = lib.randn(3, requires_grad=True)
        y = ck(lambda t: t.sin(), b, use_reentrant=True)
        msgs.append(_err(lambda: y.sum().backward(inputs=[b]), RuntimeError))
    assert msgs[2] == msgs[0] and msgs[3] == msgs[1]
    assert msgs[2].startswith("When use_reentrant=True, torch.utils.checkpoint is incompatible"
                              " with .grad() or passing an `inputs` parameter to .backward().")


@needs_torch
def test_reentrant_no_output_requires_grad_error():
    msgs = []
    for lib, ck in ((torch, tc.checkpoint), (ptcore, pc.checkpoint)):
        a = lib.randn(3, requires_grad=True)
        y = ck(lambda t: t.detach() * 2, a, use_reentrant=True)
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
        msgs.append(_err(lambda: y.sum().backward(), RuntimeError))
    assert msgs[0] == msgs[1] == ("none of output has requires_grad=True, this checkpoint() is "
                                  "not necessary")


# ---------------------------------------------------------------------------
# checkpoint_sequential
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("reentrant", MODES)
@pytest.mark.parametrize("segments", [1, 2, 3, 6])
def test_checkpoint_sequential_matches_torch(reentrant, segments):
    tm, pm = _mlp_pair()
    xn = _x()
    tx = torch.tensor(xn, requires_grad=True)
    px = ptcore.tensor(xn, requires_grad=True)
    ty = tc.checkpoint_sequential(tm, segments, tx, use_reentrant=reentrant)
    py = pc.checkpoint_sequential(pm, segments, px, use_reentrant=reentrant)
    np.testing.assert_allclose(_np(py), _np(ty), **RT)
    assert type(py.grad_fn).__name__ == type(ty.grad_fn).__name__
    ty.sum().backward()
    py.sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), **RT)
    for a, b in zip(_grads(pm), [p.grad.numpy() for p in tm.parameters()]):
        np.testing.assert_allclose(a, b, **RT)


@pytest.mark.parametrize("reentrant", MODES)
def test_checkpoint_sequential_segments_and_list(reentrant):
    calls = [0] * 5

    def mk(i):
        def f(t):
            calls[i] += 1
            return (t * (i + 1)).sin()
        return f

    fns = [mk(i) for i in range(5)]
    a = ptcore.randn(4, requires_grad=True)
    y = pc.checkpoint_sequential(fns, 2, a, use_reentrant=reentrant)
    # segment size 5 // 2 = 2: [0, 1] checkpointed, [2, 3, 4] run plainly
    y.sum().backward()
    assert calls == [2, 2, 1, 1, 1]
    g = a.grad.clone()
    a.grad = None
    t = a
    for f in fns:
        t = f(t)
    t.sum().backward()
    np.testing.assert_allclose(g.numpy(), a.grad.numpy(), **RT)


@pytest.mark.parametrize("reentrant", MODES)
def test_checkpoint_sequential_dropout_preserve_rng(reentrant):
    pm = ptcore.nn.Sequential(ptcore.nn.Linear(8, 8), ptcore.nn.Dropout(0.5),
                              ptcore.nn.Linear(8, 8), ptcore.nn.Dropout(0.5),
                              ptcore.nn.Linear(8, 2))
    x = ptcore.randn(6, 8, requires_grad=True)
    ptcore.manual_seed(11)
    pm(x).sum().backward()
    ref = [x.grad.numpy().copy()] + _grads(pm)
    _zero(pm, x)
    ptcore.manual_seed(11)
    pc.checkpoint_sequential(pm, 2, x, use_reentrant=reentrant).sum().backward()
    for u, v in zip([x.grad.numpy()] + _grads(pm), ref):
        np.testing.assert_array_equal(u, v)


# ---------------------------------------------------------------------------
# saved tensors hooks
# ---------------------------------------------------------------------------

def _run_ops(lib, x, y):
    # (not matmul: torch saves the operands of its decomposition, unsqueezed)
    return [x.sin(), x.exp(), x * 2, x * y, x.pow(3), x @ y, (x / y).tanh()]


@needs_torch
def test_hooks_pack_unpack_called_like_torch():
    xn, yn = _x(1, 4)[0], _x(1, 4, seed=3)[0]
    counts = []
    for lib in (torch, ptcore):
        x = lib.tensor(xn, requires_grad=True)
        y = lib.tensor(yn, requires_grad=True)
        log = {"pack": [], "unpack": 0}

        def pack(t):
            log["pack"].append((tuple(t.shape), lib.is_grad_enabled()))
            return t

        def unpack(t):
            log["unpack"] += 1
            return t

        per_op = []
        with saved_tensors_hooks(pack, unpack) if lib is ptcore else \
                torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            n0 = 0
            outs = []
            for o in _run_ops(lib, x, y):
                outs.append(o)
                per_op.append(len(log["pack"]) - n0)
                n0 = len(log["pack"])
        sum(o.sum() for o in outs).backward()
        counts.append((per_op, log["pack"], log["unpack"], x.grad.numpy(), y.grad.numpy()))
    (tp, tpk, tu, tgx, tgy), (pp, ppk, pu, pgx, pgy) = counts
    assert pp == tp
    assert ppk == tpk and all(g is False for _, g in ppk)     # pack runs with grad off
    assert pu == tu == len(tpk)
    np.testing.assert_allclose(pgx, tgx, **RT)
    np.testing.assert_allclose(pgy, tgy, **RT)


def test_hooks_pack_gets_original_input():
    x = ptcore.randn(3, requires_grad=True)
    got = []
    with saved_tensors_hooks(lambda t: got.append(t) or len(got) - 1, lambda i: got[i]):
        y = x.sin()
    assert len(got) == 1 and got[0] is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x.detach().cos().numpy(), **RT)


@needs_torch
def test_hooks_unpack_result_is_used():
    res = []
    for lib, H in ((torch, torch.autograd.graph.saved_tensors_hooks),
                   (ptcore, saved_tensors_hooks)):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        with H(lambda t: t * 0 + 1, lambda t: t * 2):
            y = x.sin() * x             # sin saves x; mul saves sin(x) and x
        y.sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[1], res[0], **RT)
    # cos(2) * 2 + 2 (every saved value replaced by 2)
    np.testing.assert_allclose(res[1], np.full(3, np.cos(2.0) * 2 + 2, np.float32), rtol=1e-6)


def test_hooks_nesting_innermost_applies():
    log = []
    x = ptcore.randn(3, requires_grad=True)
    outer = saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
    inner = saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t)
    with outer:
        a = x.sin()
        with inner:
            b = x.cos()
        c = x.exp()
    d = x.tanh()
    assert log == ["outer", "inner", "outer"]
    (a + b + c + d).sum().backward()
    xv = x.detach()
    np.testing.assert_allclose(x.grad.numpy(), (xv.cos() - xv.sin() + xv.exp()
                                                + 1 - xv.tanh() ** 2).numpy(), rtol=1e-5)


def test_hooks_are_thread_local():
    log = []

    def other():
        ptcore.randn(2, requires_grad=True).sin()

    with saved_tensors_hooks(lambda t: log.append(1) or t, lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert log == []


@needs_torch
def test_hooks_errors_match_torch():
    def bad_unpack(lib, H):
        x = lib.randn(3, requires_grad=True)
        with H(lambda t: t, lambda t: 5):
            y = x.sin()
        return _err(lambda: y.sum().backward(), TypeError)

    def inplace_pack(lib, H):
        x = lib.randn(3, requires_grad=True)

        def pack(t):
            t.add_(1)
            return t
        with H(pack, lambda t: t):
            return _err(lambda: (x * 1).sin(), RuntimeError)

    def disabled(lib, H, D):
        with D("hooks are off here"):
            return _err(lambda: H(lambda t: t, lambda t: t).__enter__(), RuntimeError)

    TH, TD = torch.autograd.graph.saved_tensors_hooks, torch.autograd.graph.disable_saved_tensors_hooks
    assert bad_unpack(ptcore, saved_tensors_hooks) == bad_unpack(torch, TH)
    assert inplace_pack(ptcore, saved_tensors_hooks) == inplace_pack(torch, TH)
    assert disabled(ptcore, saved_tensors_hooks, disable_saved_tensors_hooks) == \
        disabled(torch, TH, TD) == "hooks are off here"


def test_hooks_freed_after_backward():
    x = ptcore.randn(3, requires_grad=True)
    unpacked = [0]

    def unpack(t):
        unpacked[0] += 1
        return t
    with saved_tensors_hooks(lambda t: t, unpack):
        y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert unpacked[0] == 1


@needs_torch
def test_hooks_custom_function_save_for_backward():
    log = []

    class Sq(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * g * a

    x = ptcore.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: log.append("p") or t.detach().numpy().copy(),
                             lambda n: log.append("u") or ptcore.from_numpy(n)):
        y = Sq.apply(x)
    y.sum().backward()
    assert log == ["p", "u"]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


@needs_torch
def test_save_on_cpu_with_double_backward():
    xn = _x(1, 5)[0]
    res = []
    for lib, S in ((torch, torch.autograd.graph.save_on_cpu), (ptcore, save_on_cpu)):
        x = lib.tensor(xn, requires_grad=True)
        with S():
            y = ((x * x).exp() * x.sin()).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        res.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5)


def test_public_names():
    import ptcore.utils
    assert ptcore.utils.checkpoint is pc
    assert issubclass(pc.CheckpointError, RuntimeError)
    assert issubclass(pc.CheckpointFunction, ptcore.autograd.Function)
    assert ptcore.autograd.graph.saved_tensors_hooks is saved_tensors_hooks
    for name in pc.__all__:
        assert hasattr(pc, name)


def test_debug_flag_accepted_non_reentrant():
    a = ptcore.randn(3, requires_grad=True)
    with pc.set_checkpoint_debug_enabled(True):
        y = pc.checkpoint(lambda t: t.exp() * t, a, use_reentrant=False)
    y.sum().backward()
    av = a.detach()
    np.testing.assert_allclose(a.grad.numpy(), (av.exp() * (av + 1)).numpy(), **RT)
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
        pc.checkpoint(ptcore.sin, a, use_reentrant=False, debug=True,
                      context_fn=lambda: pc.noop_context_fn())


@needs_torch
@pytest.mark.parametrize("make", ["bn1d", "bn1d-double", "bn2d-no-affine", "instance"])
@pytest.mark.parametrize("early_stop", [True, False])
def test_norm_running_stats_under_non_reentrant_checkpoint(make, early_stop):
    # torch's batch_norm kernel updates the running statistics before autograd saves
    # its tensors, so the early-stopping recomputation updates them a second time;
    # instance_norm copies them back after its batch_norm call, so it does not
    def run(m, ckpt):
        nn = m.nn
        mod = {"bn1d": lambda: nn.BatchNorm1d(3), "bn1d-double": lambda: nn.BatchNorm1d(3).double(),
               "bn2d-no-affine": lambda: nn.BatchNorm2d(3, affine=False),
               "instance": lambda: nn.InstanceNorm1d(3, track_running_stats=True)}[make]()
        dt = m.float64 if make == "bn1d-double" else m.float32
        shape = (4, 3, 2, 2) if make == "bn2d-no-affine" else (4, 3, 2)
        x = (m.arange(48.0, dtype=dt)[:int(np.prod(shape))].reshape(shape) ** 1.5)
        x.requires_grad_()
        with ckpt.set_checkpoint_early_stop(early_stop):
            ckpt.checkpoint(mod, x, use_reentrant=False).sum().backward()
        return [_np(mod.running_mean), _np(mod.running_var), int(mod.num_batches_tracked),
                _np(x.grad)]
    for a, b in zip(run(ptcore, pc), run(torch, tc)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
