"""Guards of what globals, closure cells and module attributes hold: a list,
dict or plain-data object (SimpleNamespace, argparse.Namespace, a dataclass)
changed in place keeps its identity, so its items are guarded too (a compiled
function reading ``k[0]`` or ``cfg.scale`` recompiles when they change, as
torch's does, instead of returning the old value); and torch's
``_dynamo.utils.counters``."""
import argparse
import dataclasses
import types

import pytest

import ptcore
from ptcore._dynamo.utils import counters



X = ptcore.arange(12.0).reshape(3, 4)


def _twice(fn, change):
    """``fn(X).sum()`` before and after ``change()``, compiled and eager."""
    c = ptcore.compile(fn)
    got = [c(X).sum().item()]
    want = [fn(X).sum().item()]
    change()
    got.append(c(X).sum().item())
    want.append(fn(X).sum().item())
    return got, want


def test_closure_list_item():
    k = [2.0]

    def change():
        k[0] = 3.0
    got, want = _twice(lambda a: a * k[0], change)
    assert got == want == [132.0, 198.0]


GLOBAL_CFG = {"s": 2.0}


def _reads_global_dict(a):
    return a * GLOBAL_CFG["s"]


def test_global_dict_item():
    def change():
        GLOBAL_CFG["s"] = 4.0
    try:
        got, want = _twice(_reads_global_dict, change)
    finally:
        GLOBAL_CFG["s"] = 2.0
    assert got == want == [132.0, 264.0]


@dataclasses.dataclass
class _Cfg:
    scale: float = 2.0
    name: str = "a"


@pytest.mark.parametrize("make", [lambda: types.SimpleNamespace(scale=2.0),
                                  lambda: argparse.Namespace(scale=2.0),
                                  lambda: _Cfg()],
                         ids=["SimpleNamespace", "argparse.Namespace", "dataclass"])
def test_plain_data_attribute(make):
    cfg = make()

    def change():
        cfg.scale = 5.0
    got, want = _twice(lambda a: a * cfg.scale, change)
    assert got == want == [132.0, 330.0]


def test_nested_list_in_dict():
    cfg = {"sizes": [3, 4]}

    def fn(a):
        return a.reshape(cfg["sizes"]).sum(1)
    c = ptcore.compile(fn)
    assert tuple(c(X.flatten()).shape) == (3,)
    cfg["sizes"][0], cfg["sizes"][1] = 4, 3
    assert tuple(c(X.flatten()).shape) == (4,)


def test_module_attributes_changed_in_place():
    class M(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.sizes = [3, 4]
            self.cfg = types.SimpleNamespace(scale=2.0)

        def forward(self, a):
            return a.reshape(self.sizes) * self.cfg.scale

    m = M()
    c = ptcore.compile(m)
    flat = X.flatten()
    assert c(flat).sum().item() == 132.0
    m.cfg.scale = 7.0
    assert c(flat).sum().item() == 462.0
    m.sizes[0], m.sizes[1] = 4, 3
    out = c(flat)
    assert tuple(out.shape) == (4, 3)
    assert ptcore.equal(out, m(flat))


def test_tensor_in_closure_list():
    box = [ptcore.ones(4)]

    def change():
        box[0] = ptcore.full((4,), 2.0)
    got, want = _twice(lambda a: a * box[0], change)
    assert got == want == [66.0, 132.0]


def test_large_container_identity_only_still_runs():
    big = list(range(1000))
    c = ptcore.compile(lambda a: a * big[3])
    assert c(X).sum().item() == 198.0


def test_unchanged_container_does_not_recompile():
    k = [2.0]
    c = ptcore.compile(lambda a: a * k[0])
    for _ in range(5):
        c(X)
    assert len(c.entries) == 1 if hasattr(c, "entries") else True
    before = counters["frames"]["total"]
    c(X)
    assert counters["frames"]["total"] == before


def test_counters_like_torch():
    torch = pytest.importorskip("torch")

    def brk(lib):
        def f(a):
            b = a * 2
            if b.sum() > 0:         # data-dependent: a graph break
                return b + 1
            return b - 1
        return f

    results = []
    for lib in (torch, ptcore):
        lib._dynamo.reset()
        cnt = lib._dynamo.utils.counters
        cnt.clear()
        x = lib.arange(12.0).reshape(3, 4)
        lib.compile(lambda a: lib.sin(a) + 1)(x)
        lib.compile(brk(lib))(x)
        results.append((type(cnt).__name__, cnt["frames"]["total"] >= 2, cnt["frames"]["ok"] >= 1,
                        cnt["stats"]["unique_graphs"] >= 1, cnt["stats"]["calls_captured"] >= 1,
                        sum(cnt["unimplemented"].values()) >= 1))
    assert results[0] == results[1] == ("defaultdict", True, True, True, True, True)


# -- which names are the function's globals ----------------------------------------------

out = None          # (a script's globals named as the module's attributes below)
body = 0
SCALES = [1.0, 2.0]


class _Named(ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = ptcore.nn.Linear(4, 4)
        self.out = ptcore.nn.Linear(4, 2)

    def forward(self, x):
        h = sum(self.body(x) * s for s in SCALES)        # a global read in a generator
        return self.out(h.relu())


def test_attribute_names_are_not_globals(recwarn):
    # ``self.out`` puts "out" in the code's co_names; a script's global ``out``
    # rebound each iteration recompiled every call (then eager, with the warning)
    global out
    m = _Named()
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 4)
    for _ in range(12):
        out = cm(x)
    assert len(cm.dynamo_ctx.entries) == 1
    assert not [w for w in recwarn if "recompile_limit" in str(w.message)]
    want = m(x)
    ptcore.testing.assert_close(out, want)
    # a global that the generator expression reads is guarded
    SCALES.append(3.0)
    try:
        ptcore.testing.assert_close(cm(x), m(x))
        assert not ptcore.allclose(cm(x), want)
    finally:
        SCALES.pop()


_HELPER = None


class _UsesCompiledGlobal(ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ptcore.nn.Linear(4, 4)

    def forward(self, x):
        return _HELPER(self.lin(x))


def test_compiled_module_held_in_a_global_does_not_recompile():
    # (an OptimizedModule's ``training`` is a property: the guard read its
    # instance dict, found nothing, and failed on every call)
    global _HELPER
    inner = ptcore.nn.Sequential(ptcore.nn.Linear(4, 4), ptcore.nn.Tanh())
    _HELPER = ptcore.compile(inner)
    try:
        m = _UsesCompiledGlobal()
        cm = ptcore.compile(m)
        x = ptcore.randn(2, 4)
        for _ in range(4):
            ptcore.testing.assert_close(cm(x), inner(m.lin(x)))
        assert len(cm.dynamo_ctx.entries) == 1
        inner.eval()                            # the wrapped module's flag is guarded
        cm(x)
        assert len(cm.dynamo_ctx.entries) == 2
    finally:
        _HELPER = None
