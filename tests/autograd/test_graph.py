"""Graph semantics of ptcore.autograd compared with PyTorch: accumulation,
retain_graph, errors, backward(inputs=), grad(), hooks, grad modes, detach,
leaves, node structure and names, anomaly mode, memory."""

import numpy as np
import pytest

import ptcore
from ptcore import autograd

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

from ag_helpers import A, _np, both  # noqa: E402


@needs_torch
def test_grad_accumulates_across_backward_calls():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        (x * x).sum().backward()
        (3 * x).sum().backward()
        return x.grad
    p, t = both(run)
    np.testing.assert_allclose(_np(p), _np(t))


@needs_torch
def test_retain_graph_and_freed_graph_error():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
        return x.grad
    p, t = both(run)
    np.testing.assert_allclose(_np(p), _np(t))


def test_backward_nonscalar_needs_gradient():
    x = ptcore.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(ptcore.ones_like(x))
    np.testing.assert_allclose(_np(x.grad), 2 * np.ones_like(A))


def test_backward_on_tensor_without_grad_raises():
    x = ptcore.tensor(A)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        x.sum().backward()


def test_gradient_shape_mismatch():
    x = ptcore.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(ptcore.ones(3))


def _usage_error(m, case):
    x = m.ones(3, requires_grad=case != "grad_nothing_requires")
    try:
        if case == "shape":
            (x * 2).backward(m.ones(4))
        elif case == "grad_nothing_requires":
            m.autograd.grad((x * 2).sum(), x)
        else:
            x.grad = m.ones(4)
    except RuntimeError as e:
        return str(e).replace("torch.", "").replace("ptcore.", "")
    raise AssertionError("no error")


@needs_torch
@pytest.mark.parametrize("case", ["shape", "grad_nothing_requires", "grad_setter_size"])
def test_usage_error_messages_as_torch(case):
    # the shapes as Size reprs; grad() names the outputs before the inputs;
    # the .grad setter's size message
    assert _usage_error(ptcore, case) == _usage_error(torch, case)


@needs_torch
def test_backward_inputs_restricts_accumulation():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        w = m.tensor(A.T.copy(), requires_grad=True)
        h = x @ w
        h.retain_grad()
        y = (h * h).sum()
        y.backward(inputs=[w], retain_graph=True)
        res = [x.grad, w.grad.clone()]
        y.backward(inputs=[h])
        return res + [h.grad]
    p, t = both(run)
    assert p[0] is None and t[0] is None
    np.testing.assert_allclose(_np(p[1]), _np(t[1]))
    np.testing.assert_allclose(_np(p[2]), _np(t[2]))
    x = ptcore.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])


@needs_torch
def test_grad_allow_unused_and_materialize():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        z = m.tensor(A, requires_grad=True)
        y = (x * 2).sum()
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            m.autograd.grad(y, [x, z], retain_graph=True)
        g1 = m.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
        g2 = m.autograd.grad(y, [x, z], materialize_grads=True)
        return g1, g2, x.grad
    (p1, p2, pg), (t1, t2, tg) = both(run)
    assert p1[1] is None and t1[1] is None
    np.testing.assert_allclose(_np(p1[0]), _np(t1[0]))
    np.testing.assert_allclose(_np(p2[1]), _np(t2[1]))
    assert pg is None and tg is None          # grad() does not accumulate
    with pytest.raises(ValueError):
        x = ptcore.tensor(A, requires_grad=True)
        autograd.grad(x.sum(), x, allow_unused=False, materialize_grads=True)


@needs_torch
def test_grad_of_nonleaf_and_multiple_outputs():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        h = x.sin()
        y1 = (h * h).sum()
        y2 = h.exp().sum()
        return m.autograd.grad([y1, y2], [h, x])
    p, t = both(run)
    for a, b in zip(p, t):
        np.testing.assert_allclose(_np(a), _np(b))


@needs_torch
def test_double_backward_create_graph():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        y = (x ** 3).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    p, t = both(run)
    for a, b in zip(p, t):
        np.testing.assert_allclose(_np(a), _np(b))
    assert p[0].requires_grad


@needs_torch
def test_hooks_order_and_replacement():
    def run(m):
        log = []
        x = m.tensor(A, requires_grad=True)
        x.register_hook(lambda g: log.append(("leaf1", float(g.sum()))))
        x.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: log.append(("leaf3", float(g.sum()))))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", float(t.grad.sum()))))
        h = x * 3
        h.register_hook(lambda g: log.append(("h", float(g.sum()))))
        hd = h.register_hook(lambda g: g + 1)
        y = (h * h).sum()
        fn = h.grad_fn
        fn.register_prehook(lambda go: log.append(("pre", float(go[0].sum()))))
        fn.register_hook(lambda gi, go: log.append(("node", float(gi[0].sum()))))
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        hd.remove()
        x.grad = None
        y.backward()
        return log, g1, x.grad
    (pl, p1, p2), (tl, t1, t2) = both(run)
    assert [k for k, _ in pl] == [k for k, _ in tl]
    np.testing.assert_allclose([v for _, v in pl], [v for _, v in tl])
    np.testing.assert_allclose(_np(p1), _np(t1))
    np.testing.assert_allclose(_np(p2), _np(t2))


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ptcore.zeros(2).register_hook(lambda g: g)
    x = ptcore.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


@needs_torch
def test_retain_grad():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        h = x.exp()
        h.retain_grad()
        h.retain_grad()
        v = h[0]
        v.retain_grad()
        (h * v).sum().backward()
        return h.grad, v.grad, h.retains_grad, x.retains_grad
    p, t = both(run)
    np.testing.assert_allclose(_np(p[0]), _np(t[0]))
    np.testing.assert_allclose(_np(p[1]), _np(t[1]))
    assert p[2:] == t[2:] == (True, False)
    with pytest.raises(RuntimeError, match="can't retain_grad"):
        ptcore.zeros(2).retain_grad()


def test_nonleaf_grad_access_warns():
    x = ptcore.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert (x * 2).grad is None


def test_grad_modes_context_and_decorator():
    x = ptcore.ones(2, requires_grad=True)
    with autograd.no_grad():
        assert not (x * 2).requires_grad
        assert not ptcore.is_grad_enabled()
        with autograd.enable_grad():
            assert (x * 2).requires_grad
        with ptcore.set_grad_enabled(True):
            assert (x * 2).requires_grad
    assert ptcore.is_grad_enabled()
    with ptcore.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    ptcore.set_grad_enabled(False)
    try:
        assert not ptcore.is_grad_enabled()
    finally:
        ptcore.set_grad_enabled(True)
    assert ptcore.is_grad_enabled()

    @ptcore.no_grad()
    def f(t):
        return t * 2

    @ptcore.enable_grad()
    def g(t):
        return t * 2

    @ptcore.inference_mode()
    def h(t):
        return t * 2

    assert not f(x).requires_grad
    with ptcore.no_grad():
        assert g(x).requires_grad
    r = h(x)
    assert not r.requires_grad
    with ptcore.inference_mode():
        assert ptcore.is_inference_mode_enabled()
        assert not (x * 3).requires_grad
        with ptcore.inference_mode(False):
            assert (x * 3).requires_grad
            assert not ptcore.is_inference_mode_enabled()
    assert not ptcore.is_inference_mode_enabled()
    with ptcore.no_grad(), ptcore.inference_mode(False):     # as torch: grad comes back on
        assert (x * 3).requires_grad

    @ptcore.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield (x * 2).requires_grad
    assert list(gen()) == [False, False]


@needs_torch
@pytest.mark.parametrize("make", [
    lambda m: m.no_grad(), lambda m: m.enable_grad(), lambda m: m.set_grad_enabled(False),
    lambda m: m.inference_mode(), lambda m: m.inference_mode(False)])
@pytest.mark.parametrize("start", [True, False])
def test_exit_of_a_context_never_entered_as_torch(make, start):
    # torch: a fresh no_grad() restores grad mode False; enable_grad() and
    # inference_mode() have nothing to restore and raise AttributeError
    def run(m):
        m.set_grad_enabled(start)
        try:
            make(m).__exit__(None, None, None)
            return m.is_grad_enabled(), m.is_inference_mode_enabled()
        except AttributeError:
            return AttributeError
        finally:
            m.set_grad_enabled(True)
    assert run(ptcore) == run(torch)


def test_detach_and_detach_():
    x = ptcore.tensor(A, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0, 0] = 100.0              # shares memory
    assert float(y[0, 0]) == 100.0
    z = x * 3
    z.detach_()
    assert z.grad_fn is None and not z.requires_grad and z.is_leaf
    v = (x * 2)[0]
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        v.detach_()
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        x[0].detach_()


@needs_torch
def test_requires_grad_errors_and_is_leaf():
    def run(m):
        res = []
        x = m.tensor(A, requires_grad=True)
        y = x * 2
        res += [x.is_leaf, y.is_leaf, m.tensor(A).is_leaf, (m.tensor(A) * 2).is_leaf]
        with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
            y.requires_grad_(False)
        with pytest.raises(RuntimeError, match="floating point"):
            m.tensor([1, 2]).requires_grad_()
        with pytest.raises(RuntimeError, match="floating point"):
            m.tensor([1, 2], requires_grad=True)
        y.requires_grad_(True)              # allowed no-op
        d = x.detach().requires_grad_()
        res += [d.is_leaf, d.requires_grad]
        return res
    p, t = both(run)
    assert p == t


_NAMES = [
    ("mul", lambda x, y: x * y), ("add", lambda x, y: x + y), ("sub", lambda x, y: x - y),
    ("div", lambda x, y: x / y), ("sum", lambda x, y: x.sum()), ("sumdim", lambda x, y: x.sum(0)),
    ("mean", lambda x, y: x.mean()), ("mm", lambda x, y: x @ y.t()), ("exp", lambda x, y: x.exp()),
    ("tanh", lambda x, y: x.tanh()), ("sigmoid", lambda x, y: x.sigmoid()),
    ("relu", lambda x, y: x.relu()), ("pow", lambda x, y: x ** 2), ("neg", lambda x, y: -x),
    ("t", lambda x, y: x.t()), ("clone", lambda x, y: x.clone()), ("cat", lambda x, y:
                                                                    ptcore.cat([x, y]) if isinstance(x, ptcore.Tensor) else torch.cat([x, y])),
    ("softmax", lambda x, y: x.softmax(1)), ("log_softmax", lambda x, y: x.log_softmax(1)),
    ("index", lambda x, y: x[[0, 1], [1, 2]]), ("max", lambda x, y: x.max()),
    ("where", lambda x, y: (x if isinstance(x, ptcore.Tensor) else x).where(x > 0, y)),
    ("bmm", lambda x, y: x.unsqueeze(0).bmm(y.t().unsqueeze(0))),
    ("addmm", lambda x, y: (ptcore if isinstance(x, ptcore.Tensor) else torch).addmm(x, x, y.t() @ x)),
    ("abs", lambda x, y: x.abs()), ("sqrt", lambda x, y: x.abs().sqrt()),
    ("to", lambda x, y: x.float()), ("var", lambda x, y: x.var()),
]


@needs_torch
@pytest.mark.parametrize("name,fn", _NAMES, ids=[n for n, _ in _NAMES])
def test_grad_fn_names_as_torch(name, fn):
    px, py = (ptcore.tensor(A, requires_grad=True) for _ in range(2))
    tx, ty = (torch.tensor(A, requires_grad=True) for _ in range(2))
    assert fn(px, py).grad_fn.name() == fn(tx, ty).grad_fn.name()


@needs_torch
def test_next_functions_structure():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        c = m.tensor(A)
        y = (x * c + x).sum()
        return y, x

    (p, px), (t, tx) = both(run)

    def walk(fn, depth=0):
        if fn is None:
            return None
        return (fn.name(), tuple(walk(f) for f, _ in fn.next_functions))
    assert walk(p.grad_fn) == walk(t.grad_fn)
    acc = p.grad_fn.next_functions[0][0].next_functions[1][0]
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc.variable is px


@needs_torch
def test_anomaly_mode_reports_nan():
    x = ptcore.tensor([0.0, 1.0], requires_grad=True)
    with autograd.detect_anomaly():
        y = x.sqrt() * 0 + (x * 0).sqrt()       # 0 * inf -> nan in the backward of sqrt
        with pytest.raises(RuntimeError, match="returned nan values"):
            y.sum().backward()
    tx = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly():
        ty = tx.sqrt() * 0 + (tx * 0).sqrt()
        with pytest.raises(RuntimeError, match="returned nan values"):
            ty.sum().backward()
    assert not ptcore.is_anomaly_enabled() if hasattr(ptcore, "is_anomaly_enabled") else True


@needs_torch
def test_anomaly_mode_check_nan_false():
    # check_nan=False keeps the stacks but lets NaN gradients through, and the
    # flag reads back (the NaN check ran regardless)
    import warnings

    def run(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = m.tensor([0.0, 1.0], requires_grad=True)
            with m.autograd.detect_anomaly(check_nan=False):
                flags = (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled())
                (x.sqrt() * 0 + (x * 0).sqrt()).sum().backward()
            with m.autograd.set_detect_anomaly(True, check_nan=False):
                flags += (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled())
        return flags + (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()), x.grad.isnan().tolist()
    assert run(ptcore) == run(torch)


def test_graph_freed_when_output_dropped():
    import gc
    import weakref
    x = ptcore.randn(3, requires_grad=True)
    y = (x * 2).exp()
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


def _rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_training_loop_does_not_leak():
    ptcore.manual_seed(0)
    w1 = (ptcore.randn(16, 32) * 0.1).requires_grad_()
    b1 = ptcore.zeros(32, requires_grad=True)
    w2 = (ptcore.randn(32, 4) * 0.1).requires_grad_()
    x = ptcore.randn(8, 16)
    target = ptcore.randn(8, 4)
    params = [w1, b1, w2]

    def step():
        h = (x @ w1 + b1).relu()
        loss = ((h @ w2 - target) ** 2).mean()
        loss.backward()
        with ptcore.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
        return loss

    first = float(step())
    for _ in range(500):
        step()
    base = _rss_kib()
    for _ in range(10000):
        last = step()
    grown = _rss_kib() - base
    assert float(last) < first
    assert grown < 4 * 1024, f"RSS grew by {grown} KiB over 10000 steps"


@needs_torch
def test_grad_with_respect_to_an_intermediate_view():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        v = x.view(-1)
        y = (v[0] * v[1]).sin() + v[2:].sum()
        return m.autograd.grad(y, v)[0]
    p, t = both(run)
    np.testing.assert_allclose(_np(p), _np(t))


_VIEW_CASES = {
    "view": lambda m, x, a: x.view(12, 5), "reshape": lambda m, x, a: x.reshape(60),
    "flatten": lambda m, x, a: x.flatten(), "unflatten": lambda m, x, a: x.unflatten(2, (5, 1)),
    "transpose": lambda m, x, a: x.transpose(0, 1), "swapaxes": lambda m, x, a: x.swapaxes(0, 1),
    "t": lambda m, x, a: a.t(), "T": lambda m, x, a: a.T, "mT": lambda m, x, a: x.mT,
    "permute": lambda m, x, a: x.permute(2, 0, 1), "movedim": lambda m, x, a: x.movedim(0, 2),
    "squeeze()": lambda m, x, a: x[:, :1].squeeze(),
    "squeeze(d)": lambda m, x, a: x.unsqueeze(0).squeeze(0),
    "squeeze(t)": lambda m, x, a: x.unsqueeze(0).squeeze((0,)),
    "unsqueeze": lambda m, x, a: x.unsqueeze(1), "expand": lambda m, x, a: x[:1].expand(4, 4, 5),
    "expand_as": lambda m, x, a: x[:1].expand_as(m.empty(4, 4, 5)),
    "broadcast_to": lambda m, x, a: x[:1].broadcast_to((2, 4, 5)),
    "narrow": lambda m, x, a: x.narrow(0, 1, 2), "slice": lambda m, x, a: x[1:3],
    "slice_step": lambda m, x, a: x[::2], "full_slice": lambda m, x, a: x[:],
    "select": lambda m, x, a: x[1], "select_m": lambda m, x, a: x.select(1, 2),
    "slice_select": lambda m, x, a: x[1:3, 0], "select_slice": lambda m, x, a: x[0, 1:3],
    "trailing_full": lambda m, x, a: x[0, :], "none": lambda m, x, a: x[None],
    "ellipsis": lambda m, x, a: x[..., 0], "none_select": lambda m, x, a: x[None, 0],
    "full_full": lambda m, x, a: x[:, :], "ell_full": lambda m, x, a: x[..., :],
    "full_then": lambda m, x, a: x[:, 1:], "full_none": lambda m, x, a: x[:, None],
    "sel_none": lambda m, x, a: x[0, None], "only_ellipsis": lambda m, x, a: x[...],
    "tuple_full": lambda m, x, a: x[(slice(None),)], "slice_past": lambda m, x, a: x[0:100],
    "diagonal": lambda m, x, a: x.diagonal(), "unfold": lambda m, x, a: x.unfold(2, 2, 1),
    "as_strided": lambda m, x, a: x.as_strided((2, 2), (1, 1)),
    "split": lambda m, x, a: x.split(1)[0], "chunk": lambda m, x, a: x.chunk(3)[1],
    "unbind": lambda m, x, a: x.unbind()[0], "tensor_split": lambda m, x, a: x.tensor_split(3)[0],
    "split_sizes": lambda m, x, a: x.split([1, 2])[1], "view_as": lambda m, x, a: x.view_as(x),
}


@needs_torch
@pytest.mark.parametrize("name", list(_VIEW_CASES))
def test_view_node_names_as_torch(name):
    fn = _VIEW_CASES[name]
    names = []
    for m in (ptcore, torch):
        x = m.randn(3, 4, 5, requires_grad=True)
        a = m.randn(3, 4, requires_grad=True)
        y = fn(m, x, a)
        names.append(type(y.grad_fn).__name__)
        # the gradient flows through to the leaf whatever the node's name
        y.sum().backward()
        names.append(float((x.grad if x.grad is not None else a.grad).sum()))
    assert names[:2] == names[2:]


def _inplace_after_save_cases(m):
    def c_leaf():
        a = m.randn(3, requires_grad=True)
        b = m.randn(3)
        z = a * b
        b.add_(1)
        z.sum().backward()

    def c_input():
        a = m.randn(3, requires_grad=True)
        a2 = a * 1
        z = a2 * a2
        a2.add_(1)
        z.sum().backward()

    def c_output():
        a = m.randn(3, requires_grad=True)
        y = a.exp()
        y.add_(1)
        y.sum().backward()

    def c_mul_both():
        a = m.randn(3, requires_grad=True)
        w = m.randn(3, requires_grad=True)
        a2 = a * 1
        z = a2 * w
        a2.mul_(2)
        z.sum().backward()

    def c_chunk_output():
        a = m.randn(2, 3, requires_grad=True)
        q, _ = a.sigmoid().chunk(2)
        y = q.tanh()
        y.mul_(2)
        y.sum().backward()
    return [c_leaf, c_input, c_output, c_mul_both, c_chunk_output]


@needs_torch
@pytest.mark.parametrize("k", range(5))
def test_modified_saved_tensor_message_as_torch(k):
    msgs = []
    for m in (ptcore, torch):
        with pytest.raises(RuntimeError) as ei:
            _inplace_after_save_cases(m)[k]()
        msgs.append(str(ei.value).replace("ptcore.", "torch."))
    assert msgs[0] == msgs[1]


def _hook_cases(m):
    def double(g):
        return g.double()

    def size_nonleaf():
        x = m.randn(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: m.ones(3))
        y.sum().backward()

    def size_leaf():
        x = m.randn(2, requires_grad=True)
        x.register_hook(lambda g: m.ones(3))
        (x * 2).sum().backward()

    def type_nonleaf():
        x = m.randn(2, requires_grad=True)
        y = x * 2
        y.register_hook(double)
        y.sum().backward()

    def type_leaf():
        x = m.randn(2, requires_grad=True)
        x.register_hook(double)
        (x * 2).sum().backward()

    def not_tensor():
        x = m.randn(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: 5)
        y.sum().backward()
    return [size_nonleaf, size_leaf, type_nonleaf, type_leaf, not_tensor]


@needs_torch
@pytest.mark.parametrize("k", range(5))
def test_hook_result_checks_as_torch(k):
    res = []
    for m in (ptcore, torch):
        with pytest.raises((RuntimeError, TypeError)) as ei:
            _hook_cases(m)[k]()
        res.append((ei.type, str(ei.value).replace("ptcore.", "torch.")))
    assert res[0] == res[1]


@needs_torch
def test_grad_is_grads_batched_as_torch():
    a = np.random.default_rng(8).standard_normal(3)
    wv = np.random.default_rng(9).standard_normal(3)
    res = []
    for m in (ptcore, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        w = m.from_numpy(wv.copy()).requires_grad_()
        y = x ** 2 * w
        g1 = m.autograd.grad(y, [x, w], m.eye(3, dtype=m.float64), is_grads_batched=True,
                             retain_graph=True)
        g2 = m.autograd.grad((x * w).sum(), [x, w], m.ones(2, dtype=m.float64),
                             is_grads_batched=True)
        res.append([t.detach().numpy() for t in g1 + g2])
        with pytest.raises(RuntimeError, match="is_grads_batched=True"):
            m.autograd.grad((x * w), x, m.ones(2, 4, dtype=m.float64), is_grads_batched=True)
    for p, t in zip(*res):
        np.testing.assert_allclose(p, t, rtol=1e-12)


def _inference_cases(m):
    with m.inference_mode():
        x = m.randn(3)
        y = m.randn(3)
    w = m.randn(3, requires_grad=True)
    return [lambda: x.add_(1), lambda: x.fill_(1), lambda: x.zero_(), lambda: x.copy_(y),
            lambda: x.__setitem__(0, 1.0), lambda: x.requires_grad_(), lambda: x * w,
            lambda: (x + w).sum().backward(), lambda: x.exp(), lambda: x.clone().add_(1),
            lambda: x.exp().mul_(2), lambda: x.__iadd__(1), lambda: x.sin_(),
            lambda: (x.is_inference(), x[:2].is_inference(), x.detach().is_inference(),
                     x.clone().is_inference(), w.is_inference())]


@needs_torch
@pytest.mark.parametrize("k", range(14))
def test_inference_tensors_as_torch(k):
    res = []
    for m in (ptcore, torch):
        try:
            r = _inference_cases(m)[k]()
            res.append(("ok", r if isinstance(r, tuple) else None))
        except RuntimeError as e:
            res.append(("err", str(e)))
    assert res[0] == res[1]


def test_inference_mode_is_per_thread():
    import threading
    out = []
    with ptcore.inference_mode():
        t = threading.Thread(target=lambda: out.append(ptcore.randn(2).is_inference()))
        t.start()
        t.join()
        out.append(ptcore.randn(2).is_inference())
    assert out == [False, True]


def test_leaf_tensor_hooks_apply_to_autograd_grad_results():
    """torch: hooks registered on a leaf change the gradient autograd.grad
    returns for it (they already applied to .grad through backward)."""
    torch = pytest.importorskip("torch")

    def run(L):
        a = L.ones(2, requires_grad=True)
        a.register_hook(lambda g: g * 10)
        a.register_hook(lambda g: g + 1)
        r1 = L.autograd.grad((a * 2).sum(), a)[0]
        b = L.ones(2, requires_grad=True)
        h = b.register_hook(lambda g: g * 10)
        h.remove()
        r2 = L.autograd.grad((b * 2).sum(), b)[0]
        c = L.ones(2, requires_grad=True)
        c.register_hook(lambda g: g * 3)
        (c * 2).sum().backward()
        return [r1.tolist(), r2.tolist(), c.grad.tolist()]
    assert run(ptcore) == run(torch)


@needs_torch
def test_grad_mode_inside_inference_mode_does_not_record():
    # torch: enable_grad / set_grad_enabled inside inference mode switch grad mode on
    # (is_grad_enabled() is True) but nothing records
    def run(m):
        seen = []
        w = m.ones(2, requires_grad=True)
        with m.inference_mode():
            seen.append(m.is_grad_enabled())
            with m.enable_grad():
                leaf = m.ones(2, requires_grad=True)
                a, b = leaf * 2, w * 2
                seen += [m.is_grad_enabled(), leaf.requires_grad, a.requires_grad,
                         a.grad_fn is None, b.requires_grad]
                with m.no_grad():
                    seen.append(m.is_grad_enabled())
                seen.append(m.is_grad_enabled())
            with m.set_grad_enabled(True):
                seen += [(w * 3).requires_grad, m.is_grad_enabled()]
            seen.append(m.is_grad_enabled())
            with m.inference_mode(False):
                d = w * 3
                seen += [d.requires_grad, d.grad_fn is not None, m.is_grad_enabled()]
        seen.append(m.is_grad_enabled())
        return seen
    assert run(ptcore) == run(torch)


def test_backward_create_graph_warns_once_and_grad_variables_is_deprecated():
    from ptcore.autograd import engine
    engine._warned_create_graph[0] = False
    x = ptcore.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x * 2).sum().backward(create_graph=True)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * 2).sum().backward(create_graph=True)      # once per process, as torch
        ptcore.autograd.grad((x * 2).sum(), x, create_graph=True)
    with pytest.warns(FutureWarning, match="grad_variables"):
        autograd.backward((x * 2).sum(), grad_variables=ptcore.tensor(1.0))
    with pytest.raises(RuntimeError, match="only use `grad_tensors`"), \
            pytest.warns(FutureWarning):
        autograd.backward((x * 2).sum(), grad_tensors=ptcore.tensor(1.0),
                          grad_variables=ptcore.tensor(1.0))


@needs_torch
def test_saved_attributes_of_mm_and_sum_and_calling_a_node():
    def run(m):
        x = m.ones(3, 4, requires_grad=True)
        y = m.ones(4, 2)
        out = []
        g = x.sum(1).grad_fn
        out += [g._saved_dim, g._saved_keepdim, tuple(g._saved_self_sym_sizes),
                sorted(a for a in dir(g) if a.startswith("_saved"))]
        out.append(x.sum(-1, keepdim=True).grad_fn._saved_dim)
        out.append(tuple(x.sum().grad_fn._saved_self_sym_sizes))
        for gm in (x.mm(y).grad_fn, (x @ y.requires_grad_()).grad_fn):
            out += [type(gm).__name__, sorted(a for a in dir(gm) if a.startswith("_saved")),
                    gm._saved_self is None,
                    None if gm._saved_self is None else tuple(gm._saved_self.shape),
                    tuple(gm._saved_mat2.shape), tuple(gm._saved_mat2_sym_sizes),
                    tuple(gm._saved_self_sym_strides)]
        # a node of a one-input op returns that gradient itself; of two, a tuple
        r1 = x.exp().grad_fn(m.ones(3, 4))
        r2 = (x * y.sum()).grad_fn(m.ones(3, 4))
        out += [isinstance(r1, m.Tensor), type(r2).__name__, len(r2)]
        return out
    assert run(ptcore) == run(torch)


@needs_torch
def test_allow_mutation_on_saved_tensors_as_torch():
    def run(m):
        G = m.autograd.graph
        res = []
        with G.allow_mutation_on_saved_tensors():
            a = m.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()                        # b was saved by pow: cloned first
            out.backward()
            res += [a.grad.tolist(), b.tolist()]
            x = m.arange(6.0).reshape(2, 3).requires_grad_()
            w = m.ones(3) * 2
            y = (x * w).sum()
            w.mul_(5)
            w[0] = 100.0                    # an input saved by mul, written twice
            y.backward()
            res.append(x.grad.tolist())
            z = m.tensor([1.0, 2.0], requires_grad=True)
            u = z.exp()
            s = (u * u).sum()
            u.add_(1)                       # exp's saved result, mutated
            s.backward()
            res.append(z.grad.tolist())
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with G.allow_mutation_on_saved_tensors():
                with G.allow_mutation_on_saved_tensors():
                    pass
        with G.allow_mutation_on_saved_tensors():
            o = (m.ones(2, requires_grad=True).clone() ** 2).sum()
        with pytest.raises(AssertionError):
            o.backward()                    # outside the block it was recorded in
        return res
    assert run(ptcore) == run(torch)


@needs_torch
def test_dispatch_mode_keeps_autograd_of_setitem_and_copy():
    def run(m, mode_base):
        class Passthrough(mode_base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        a = m.ones(2, 3, requires_grad=True)
        with Passthrough():
            b = a.clone()
            b.sin_()
            b[0] = 1.0
            c = b * 1
            b.copy_(a * 3)
        (b.sum() + c.sum()).backward()
        return a.grad.tolist()
    from ptcore.utils._python_dispatch import TorchDispatchMode as P
    from torch.utils._python_dispatch import TorchDispatchMode as T
    np.testing.assert_allclose(run(ptcore, P), run(torch, T), rtol=1e-6)
