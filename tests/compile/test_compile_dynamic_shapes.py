"""``ptcore.compile``'s ``dynamic=`` and ``mark_dynamic``: a function whose
argument shapes keep changing becomes shape-dynamic (its entries found by
shape; a shape not seen before runs eagerly and is compiled when it comes
again, up to a cap) instead of recompiling per shape up to the recompile
limit and then warning; ``dynamic=False`` keeps specialising every shape.
Results equal eager's throughout, forward and backward."""
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._dynamo import compiled as _compiled

nn = ptcore.nn


def _counts():
    return dict(_compiled.counters)


def _delta(before):
    now = _compiled.counters
    return {k: now[k] - before[k] for k in ("captures", "eager_calls")}


def _mlp():
    ptcore.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3))


def _run(cm, m, sizes, grad=False):
    """Calls of ``cm`` and ``m`` on batches of ``sizes``: outputs (and input
    gradients) equal."""
    for i, n in enumerate(sizes):
        ptcore.manual_seed(100 + i)
        x = ptcore.randn(n, 6)
        if grad:
            xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
            ya, yb = cm(xa), m(xb)
            ya.pow(2).sum().backward()
            yb.pow(2).sum().backward()
            np.testing.assert_allclose(xa.grad.numpy(), xb.grad.numpy(), rtol=1e-5, atol=1e-6)
        else:
            ya, yb = cm(x), m(x)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-6,
                                   atol=1e-6)


@pytest.mark.parametrize("dynamic", [None, True])
def test_changing_shapes_no_warning_compiled_when_they_recur(dynamic):
    m = _mlp()
    cm = ptcore.compile(m, dynamic=dynamic)
    before = _counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (no recompile-limit warning)
        _run(cm, m, range(1, 14))               # 13 shapes, each new
        first = _delta(before)
        _run(cm, m, range(1, 14))               # they recur: compiled now
        second = _delta(before)
        _run(cm, m, range(1, 14))               # all compiled
        third = _delta(before)
    # default: the first shape and the first change captured at once (as torch
    # recompiles once), the rest on recurrence; dynamic=True: the first only
    at_once = 2 if dynamic is None else 1
    assert first["captures"] == at_once and first["eager_calls"] == 13 - at_once
    assert second["captures"] == 13 and second["eager_calls"] == 13 - at_once
    assert third == second
    ctx = cm.dynamo_ctx
    assert len(ctx.entries) == 13 and len(ctx._by_shape) == 13
    assert all(e.hits >= 1 for e in ctx.entries)


def test_static_dynamic_false_specialises_up_to_the_limit():
    m = _mlp()
    cm = ptcore.compile(m, dynamic=False)
    old = ptcore._dynamo.config.recompile_limit
    ptcore._dynamo.config.recompile_limit = 3
    try:
        with pytest.warns(UserWarning, match="recompile_limit"):
            _run(cm, m, [1, 2, 3, 4, 5])
    finally:
        ptcore._dynamo.config.recompile_limit = old
    assert len(cm.dynamo_ctx.entries) == 3 and cm.dynamo_ctx._by_shape is None


def test_one_shape_stays_on_the_plain_cache():
    m = _mlp()
    cm = ptcore.compile(m)
    _run(cm, m, [4, 4, 4])
    assert cm.dynamo_ctx._by_shape is None and len(cm.dynamo_ctx.entries) == 1


def test_other_guards_still_recompile_within_a_shape():
    """A dtype or requires_grad change at a compiled shape is a recompile of
    that shape (its own limit), not a new shape."""
    cf = ptcore.compile(lambda a: (a * 2 + 1).relu())
    x = ptcore.randn(4, 5)
    cf(x)
    cf(ptcore.randn(6, 5))                      # a shape change: shape-dynamic
    assert cf._by_shape is not None
    r = cf(ptcore.randn(4, 5, dtype=ptcore.float64))
    assert r.dtype == ptcore.float64 and len(cf._by_shape[(ptcore.Size([4, 5]),)]) == 2
    xg = ptcore.randn(4, 5, requires_grad=True)
    r = cf(xg)
    assert r.requires_grad and len(cf._by_shape[(ptcore.Size([4, 5]),)]) == 3
    r.sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), (xg.detach().numpy() * 2 + 1 > 0) * 2.0)
    old = ptcore._dynamo.config.recompile_limit
    ptcore._dynamo.config.recompile_limit = 3
    try:
        with pytest.warns(UserWarning, match="recompile_limit"):
            r = cf(ptcore.randn(4, 5, dtype=ptcore.float16))
        assert r.dtype == ptcore.float16
    finally:
        ptcore._dynamo.config.recompile_limit = old


def test_training_with_changing_batch_sizes():
    m = _mlp()
    cm = ptcore.compile(m)
    sizes = [8, 8, 5, 8, 5, 3, 5, 3, 8]
    _run(cm, m, sizes, grad=True)
    for p, q in zip(cm.parameters(), m.parameters()):
        assert p is q
    assert cm.dynamo_ctx._by_shape is not None
    assert {k[0][0] for k in cm.dynamo_ctx._by_shape} == {8, 5, 3}


def test_mark_dynamic():
    x = ptcore.randn(4, 6)
    ptcore._dynamo.mark_dynamic(x, 0)
    assert x._dynamo_dynamic_indices == {0}
    ptcore._dynamo.maybe_mark_dynamic(x, [1])
    assert x._dynamo_dynamic_indices == {0, 1}
    m = _mlp()
    cm = ptcore.compile(m)
    np.testing.assert_allclose(cm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert cm.dynamo_ctx._by_shape is not None
    with pytest.raises(TypeError):
        ptcore._dynamo.mark_dynamic(3, 0)
    with pytest.raises(AssertionError, match="Expected index to be int"):
        ptcore._dynamo.mark_dynamic(x, 1.5)


def test_int_arguments_are_part_of_the_shape():
    cf = ptcore.compile(lambda a, n: a[:n] * 2)
    x = ptcore.randn(10)
    for n in [3, 4, 5, 3, 4, 5, 3]:
        np.testing.assert_array_equal(cf(x, n).numpy(), (x[:n] * 2).numpy())
    assert cf._by_shape is not None and len(cf._by_shape) == 3


def test_shape_cap_then_eager(monkeypatch):
    monkeypatch.setattr(_compiled, "_SHAPES_CAP", 3)
    cf = ptcore.compile(lambda a: a.sin() + 1, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rep in range(3):
            for n in range(1, 7):
                x = ptcore.randn(n)
                np.testing.assert_allclose(cf(x).numpy(), (x.sin() + 1).numpy(), rtol=1e-6)
    assert len(cf._by_shape) == 3


def test_reset_forgets_the_shapes():
    cf = ptcore.compile(lambda a: a * 3)
    for n in (1, 2, 3, 3):
        cf(ptcore.randn(n))
    assert cf._by_shape
    ptcore.compiler.reset()
    assert cf._by_shape is None and cf.entries == [] and cf._seen == {}
    cf(ptcore.randn(2))
    assert len(cf.entries) == 1 and cf._by_shape is None


def test_graph_breaks_and_keyword_tensors():
    def f(a, *, b):
        s = a.sum()
        if s > 0:                               # a break on the data
            return a * b.mean()
        return a - b.mean()
    cf = ptcore.compile(f)
    for rep in range(2):
        for n in (2, 3, 4, 2):
            for sign in (1, -1):
                a = ptcore.ones(n) * sign
                b = ptcore.arange(float(n + 1))
                np.testing.assert_array_equal(cf(a, b=b).numpy(), f(a, b=b).numpy())
    assert cf._by_shape is not None
