"""ptcore.compile of programs that write Python state they did not create (a forward hook
collecting outputs, a call counter, an object's attribute, a dict passed in): every call
has the eager effects (the entry runs the program eagerly and says why), where a graph
would have done them only on the captured call.  Containers the program builds itself,
and a logger call that logs nothing, leave the program compiled."""
import logging

import numpy as np
import pytest

import ptcore


def _entries(cf):
    return cf.dynamo_ctx.entries if hasattr(cf, "dynamo_ctx") else cf.entries


def _eager_entry(cf, *words):
    """Every entry runs the program eagerly, for the reason ``words`` name (a
    program whose guards read the value it changes has one entry per value)."""
    ents = _entries(cf)
    assert ents
    for e in ents:
        assert e.program is None, "the entry should run the program eagerly"
        for w in words:
            assert w in e.reason, e.reason
        assert "side effect" in e.reason


def test_forward_hook_collecting_outputs_runs_every_call():
    lin = ptcore.nn.Linear(4, 3)
    seen = []
    lin.register_forward_hook(lambda mod, args, out: seen.append(out.detach().clone()))
    cl = ptcore.compile(lin)
    xs = [ptcore.randn(2, 4) for _ in range(3)]
    outs = [cl(x) for x in xs]
    assert len(seen) == 3
    for x, o, s in zip(xs, outs, seen):
        np.testing.assert_array_equal(s.numpy(), lin(x).detach().numpy())
        np.testing.assert_array_equal(o.detach().numpy(), s.numpy())
    _eager_entry(cl, "list", "'seen'")


def test_forward_pre_hook_counting_in_a_dict():
    lin = ptcore.nn.Linear(4, 3)
    stats = {"calls": 0}

    def pre(mod, args):
        stats["calls"] += 1
    lin.register_forward_pre_hook(pre)
    cl = ptcore.compile(lin)
    for _ in range(4):
        cl(ptcore.randn(1, 4))
    assert stats["calls"] == 4
    _eager_entry(cl, "dict", "'stats'")


_CALLS = 0


def _count_global(x):
    global _CALLS
    _CALLS += 1
    return x * 2


def test_global_assignment():
    global _CALLS
    _CALLS = 0
    cf = ptcore.compile(_count_global)
    x = ptcore.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(cf(x).numpy(), np.full(3, 2.0, np.float32))
    assert _CALLS == 3
    _eager_entry(cf, "assigns the global '_CALLS'")


def test_nonlocal_assignment():
    def make():
        n = 0

        def f(x):
            nonlocal n
            n += 1
            return x + n
        return f, lambda: n
    f, count = make()
    cf = ptcore.compile(f)
    got = [cf(ptcore.zeros(2)).numpy() for _ in range(3)]
    assert count() == 3
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, np.full(2, i + 1.0, np.float32))
    _eager_entry(cf, "variable 'n'")


def test_attribute_of_an_object_and_argument_dict():
    class Meter:
        def __init__(self):
            self.total = 0.0
    meter = Meter()

    def f(x, out):
        meter.total += 1
        out["double"] = x * 2
        return x + 1
    cf = ptcore.compile(f)
    for i in range(3):
        d = {}
        cf(ptcore.full((2,), float(i)), d)
        np.testing.assert_array_equal(d["double"].numpy(), np.full(2, 2.0 * i, np.float32))
    assert meter.total == 3
    _eager_entry(cf, "side effect")


def test_containers_the_program_builds_stay_compiled():
    scale = {"k": 3.0}

    def f(x):
        parts, named = [], {}
        for i in range(3):
            parts.append(x * i)
            named[i] = x + i
        acc = type("Acc", (), {})()
        acc.value = parts[2] + named[1]
        return acc.value * scale["k"]
    cf = ptcore.compile(f)
    x = ptcore.randn(5)
    for _ in range(3):
        np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-6)
    (e,) = _entries(cf)
    assert e.program is not None, e.reason


@pytest.fixture
def quiet_logger():
    log = logging.getLogger("ptcore_test_compile_effects")
    old = log.level
    log.setLevel(logging.ERROR)
    yield log
    log.setLevel(old)


def test_logger_call_below_the_level_stays_compiled(quiet_logger, caplog):
    def f(x):
        quiet_logger.warning("not shown")
        quiet_logger.log(logging.INFO, "not shown either")
        return x.exp()
    cf = ptcore.compile(f)
    x = ptcore.randn(3)
    with caplog.at_level(logging.ERROR, logger=quiet_logger.name):
        for _ in range(2):
            np.testing.assert_allclose(cf(x).numpy(), x.exp().numpy(), rtol=1e-6)
    (e,) = _entries(cf)
    assert e.program is not None, e.reason
    assert not caplog.records


def test_logger_call_that_logs_runs_eagerly(quiet_logger, caplog):
    def f(x):
        quiet_logger.error("shown")
        return x.exp()
    cf = ptcore.compile(f)
    x = ptcore.randn(3)
    with caplog.at_level(logging.ERROR, logger=quiet_logger.name):
        for _ in range(3):
            cf(x)
    assert [r.getMessage() for r in caplog.records] == ["shown"] * 3
    (e,) = _entries(cf)
    assert e.program is None and "logging" in e.reason


def test_objects_that_cannot_be_read_and_big_containers():
    """A proxy whose attribute access raises is no watched state (the program
    compiles); a container of more items than are looked into is still
    compared whole (an item added is seen)."""
    class Raising:
        def __getattribute__(self, name):
            raise RuntimeError("no attributes here")
    proxy = Raising()
    vocab = {f"w{i}": i for i in range(5000)}

    def reads(x):
        return x * 2 if proxy is not None and len(vocab) else x
    cf = ptcore.compile(reads)
    x = ptcore.ones(2)
    for _ in range(2):
        np.testing.assert_array_equal(cf(x).numpy(), np.full(2, 2.0, np.float32))
    (e,) = _entries(cf)
    assert e.program is not None, e.reason

    def grows(x):
        vocab[f"w{len(vocab)}"] = 0
        return x + 1
    cg = ptcore.compile(grows)
    n = len(vocab)
    for _ in range(3):
        cg(x)
    assert len(vocab) == n + 3
    _eager_entry(cg, "dict", "'vocab'")


# -- state written on the first call only: captured again before settling on eager ----------

_PLANS = {}


def _plan(n):
    if n not in _PLANS:             # a cache the program fills on its first call
        _PLANS[n] = (n // 2, 2)
    return _PLANS[n]


def _reshape_with_plan(x):
    a, b = _plan(x.shape[1])
    return ptcore.relu(x.reshape(x.shape[0], a, b)).sum(-1) * 2 + 1


def test_cache_filled_on_the_first_call_compiles_on_the_second():
    from ptcore._dynamo.compiled import counters
    _PLANS.clear()
    cf = ptcore.compile(_reshape_with_plan)
    x = ptcore.randn(4, 8)
    want = _reshape_with_plan(x).numpy()
    _PLANS.clear()
    graphs = counters["graphs"]
    for _ in range(4):
        np.testing.assert_allclose(cf(x).numpy(), want, rtol=1e-6)
    assert _PLANS == {8: (4, 2)}
    ents = _entries(cf)
    assert len(ents) == 1 and ents[0].program is not None, [e.reason for e in ents]
    assert counters["graphs"] > graphs


def test_attribute_set_lazily_in_forward_compiles_afterwards():
    class Scaled(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ptcore.nn.Linear(6, 6)
            self.scale = None

        def forward(self, x):
            if self.scale is None:
                self.scale = 0.5
            return ptcore.tanh(self.lin(x)) * self.scale
    m = Scaled()
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 6)
    outs = [cm(x) for _ in range(3)]
    want = (ptcore.tanh(m.lin(x)) * 0.5).detach().numpy()
    for o in outs:
        np.testing.assert_allclose(o.detach().numpy(), want, rtol=1e-6)
    assert any(e.program is not None for e in _entries(cm))
    assert _entries(cm)[0].program is not None


def test_state_written_every_call_settles_on_one_eager_entry(recwarn):
    from ptcore._dynamo.compiled import counters
    losses = []

    def f(x):
        y = (x * x).sum()
        losses.append(float(y))     # (a growing list the guards would compare)
        return y * 2
    cf = ptcore.compile(f)
    x = ptcore.arange(3.0)
    before = counters["captures"]
    for i in range(12):
        assert float(cf(x)) == 10.0
    assert losses == [5.0] * 12
    # the first capture, and the one on its next call; then eager, without a
    # recompile per call up to the limit and its warning
    assert counters["captures"] - before == 2
    ents = _entries(cf)
    assert len(ents) == 1 and ents[0].program is None and "list" in ents[0].reason
    assert not [w for w in recwarn if "recompile_limit" in str(w.message)]
    # another shape is a new entry, the eager one is kept for this one
    cf(ptcore.arange(4.0))
    assert losses[-1] == 14.0


def test_eager_entry_of_a_module_still_compiles_in_eval_mode():
    class Logged(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ptcore.nn.Linear(3, 3)
            self.log = []

        def forward(self, x):
            if self.training:
                self.log.append(x.shape[0])
            return self.lin(x).relu()
    m = Logged()
    cm = ptcore.compile(m)
    x = ptcore.randn(2, 3)
    for _ in range(3):
        cm(x)
    assert m.log == [2, 2, 2]
    m.eval()
    with ptcore.no_grad():
        for _ in range(2):
            np.testing.assert_allclose(cm(x).numpy(), m.lin(x).relu().numpy(), rtol=1e-6)
    assert m.log == [2, 2, 2]
    assert any(e.program is not None for e in _entries(cm))
    assert any(e.program is None for e in _entries(cm))


def test_inner_function_reading_its_enclosing_loop_variable_stays_compiled():
    # (x-transformers: a generator expression over the layers reads the loop
    # variable of the forward that runs it; the forward assigns it, nothing
    # from before the call changes)
    class Stack(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = ptcore.nn.ModuleList(ptcore.nn.Linear(4, 4) for _ in range(3))

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                scale = sum(1.0 for j in range(3) if j <= i)     # reads ``i``
                x = (lambda y: layer(y).tanh() * scale)(x)       # reads ``layer``, ``scale``
            return x
    ptcore.manual_seed(0)
    m = Stack()
    cm = ptcore.compile(m)
    x = ptcore.randn(2, 4)
    with ptcore.no_grad():
        want = m(x).numpy()
        for _ in range(3):
            # (the compiled tanh chain is fused: float rounding, an element near 0
            # differs relatively by more than 1e-6)
            np.testing.assert_allclose(cm(x).numpy(), want, rtol=1e-5, atol=1e-6)
    ents = _entries(cm)
    assert len(ents) == 1 and ents[0].program is not None, ents[0].reason
