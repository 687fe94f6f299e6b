"""The rest of torch.jit's public names that programs use: CompilationUnit,
TracedModule / TopLevelTracedModule, export_opnames, optimized_execution,
fuser, set_fusion_strategy, strict_fusion and ScriptWarning.  torch is the
oracle where it is installed; the behaviour of ptcore alone is checked
without it."""
import warnings

import numpy as np
import pytest

import ptcore
from ptcore import jit

try:
    import torch
except ImportError:                 # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

UNIT_SRC = '''
def scale(x, n: int):
    return x * n + 1

def clipped(x, lo: float = -1.0):
    y = scale(x, 3)
    if bool(y.sum() > 0):
        y = y.clamp(min=lo)
    else:
        y = -y
    return y.relu() + torch.tanh(x)

def power_loop(x, k: int):
    acc = torch.zeros_like(x)
    for i in range(k):
        acc = acc + x ** (i + 1)
    return acc

def pick(xs: List[Tensor], i: int) -> Tensor:
    return xs[i] * 2

def maybe(x, y: Optional[Tensor] = None):
    if y is None:
        return x
    return x + y
'''


def _arr(t):
    return t.detach().numpy()


def _unit_calls(lib, cu):
    x = lib.tensor([-2.0, -0.5, 0.25, 1.5])
    y = lib.tensor([1.0, 2.0, 3.0, 4.0])
    return [cu.scale(x, 2), cu.clipped(x), cu.clipped(-x, -0.25), cu.clipped(x - 5),
            cu.power_loop(x, 3), cu.power_loop(x, 0), cu.pick([x, y], 1), cu.maybe(x),
            cu.maybe(x, y)]


def test_compilation_unit_values():
    cu = jit.CompilationUnit(UNIT_SRC)
    x = np.array([-2.0, -0.5, 0.25, 1.5], np.float32)
    got = [_arr(r) for r in _unit_calls(ptcore, cu)]
    np.testing.assert_allclose(got[0], x * 2 + 1)
    np.testing.assert_allclose(got[4], x + x ** 2 + x ** 3, rtol=1e-6)
    np.testing.assert_array_equal(got[5], np.zeros(4, np.float32))
    np.testing.assert_allclose(got[8], x + np.arange(1, 5, dtype=np.float32))
    assert isinstance(cu.scale, jit.ScriptFunction)
    assert cu.find_function("scale") is cu.scale
    assert cu.find_function("missing") is None
    with pytest.raises(AttributeError, match="missing"):
        cu.missing


@needs_torch
def test_compilation_unit_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tcu = torch.jit.CompilationUnit(UNIT_SRC)
    pcu = jit.CompilationUnit(UNIT_SRC)
    for a, b in zip(_unit_calls(ptcore, pcu), _unit_calls(torch, tcu)):
        np.testing.assert_allclose(_arr(a), _arr(b), rtol=1e-6, atol=1e-7)


def test_compilation_unit_define_and_errors():
    cu = jit.CompilationUnit()
    cu.define("def f(x):\n    return x + 1\n")
    cu.define("def g(x):\n    return f(x) * 2\n")       # calls a function defined before
    np.testing.assert_array_equal(_arr(cu.g(ptcore.ones(3))), [4.0, 4.0, 4.0])
    with pytest.raises(jit.ScriptError, match="function definitions only"):
        cu.define("import os\n")
    with pytest.raises(jit.ScriptError, match="CompilationUnit"):
        cu.define("def h(x:\n")
    with pytest.raises(TypeError):
        cu.define(b"def f(x): return x")
    # a source whose second function does not compile leaves the unit as it was
    with pytest.raises(jit.ScriptError):
        cu.define("def ok(x):\n    return x * 2\ndef bad(x):\n    return undefined_name(x)\n")
    assert cu.find_function("ok") is None and cu.find_function("bad") is None
    np.testing.assert_array_equal(_arr(cu.g(ptcore.ones(3))), [4.0, 4.0, 4.0])


def test_compilation_unit_runs_no_python():
    # the source is compiled, never executed: a call of a Python builtin that
    # does I/O is refused at compile time, and nothing ran
    import os
    path = "/tmp/ptcore_cu_should_not_exist"
    if os.path.exists(path):
        os.remove(path)
    cu = jit.CompilationUnit()
    with pytest.raises(jit.ScriptError, match="undefined name 'open'") as info:
        cu.define(f"def f(x):\n    open('{path}', 'w')\n    return x\n")
    assert f"open('{path}', 'w')" in str(info.value)        # the line, quoted
    assert not os.path.exists(path)
    assert cu.find_function("f") is None


def _seq(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2),
                             lib.nn.Tanh())


def test_traced_module_classes():
    m = jit.trace(_seq(ptcore), ptcore.randn(2, 3))
    assert type(m) is jit.TopLevelTracedModule
    assert isinstance(m, jit.TracedModule) and isinstance(m, jit.ScriptModule)
    assert all(type(c) is jit.TracedModule for c in m.children())
    assert issubclass(jit.TopLevelTracedModule, jit.TracedModule)
    x = ptcore.randn(5, 3)
    np.testing.assert_allclose(_arr(m(x)), _arr(_seq(ptcore)(x)), rtol=1e-6)


@needs_torch
def test_export_opnames_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want_script = torch.jit.export_opnames(torch.jit.script(_seq(torch)))
        want_trace = torch.jit.export_opnames(torch.jit.trace(_seq(torch), torch.randn(2, 3)))
    assert jit.export_opnames(jit.script(_seq(ptcore))) == want_script
    assert jit.export_opnames(jit.trace(_seq(ptcore), ptcore.randn(2, 3))) == want_trace


def test_export_opnames_needs_script_module():
    with pytest.raises(TypeError, match="ScriptModule"):
        jit.export_opnames(_seq(ptcore))


def _chain(x):
    return ((x * 2 + 1).relu() - 3).sigmoid() * x


def test_optimized_execution_and_fuser_same_values():
    f = jit.trace(_chain, ptcore.randn(64))
    x = ptcore.randn(64)
    ref = _arr(f(x))
    with jit.optimized_execution(False):
        a = _arr(f(x))
    with jit.fuser("none"):
        b = _arr(f(x))
    with jit.fuser("fuser2"):
        c = _arr(f(x))
    for r in (a, b, c):
        np.testing.assert_allclose(r, ref, rtol=1e-6)
    np.testing.assert_allclose(ref, _arr(_chain(x)), rtol=1e-6)
    # the switches are restored on exit, also after an exception
    from ptcore.jit import _executor
    with pytest.raises(ZeroDivisionError):
        with jit.optimized_execution(False):
            assert not _executor.fusing()
            1 / 0
    assert _executor.fusing()


def test_fuser_rejects_unknown_name():
    with pytest.raises(Exception, match="unrecognized fuser option"):
        with jit.fuser("fuserX"):
            pass


def test_set_fusion_strategy_returns_previous():
    first = jit.set_fusion_strategy([("DYNAMIC", 3)])
    try:
        assert jit.set_fusion_strategy([("STATIC", 1), ("DYNAMIC", 2)]) == [("DYNAMIC", 3)]
        with pytest.raises(ValueError, match="STATIC' or 'DYNAMIC"):
            jit.set_fusion_strategy([("FOO", 1)])
        with pytest.raises(TypeError, match="pairs"):
            jit.set_fusion_strategy(["STATIC"])
    finally:
        jit.set_fusion_strategy(first)
    if torch is not None:
        prev = torch.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
        torch.jit.set_fusion_strategy(prev)
        assert first == [("STATIC", 2), ("DYNAMIC", 10)] == prev


def test_strict_fusion_and_script_warning():
    with pytest.warns(UserWarning, match="Only works in script mode"):
        with jit.strict_fusion():
            pass
    assert issubclass(jit.ScriptWarning, Warning)
    if torch is not None:
        assert jit.ScriptWarning.__mro__[1:] == torch.jit.ScriptWarning.__mro__[1:]


def _conv_bn():
    ptcore.manual_seed(0)
    m = ptcore.nn.Sequential(ptcore.nn.Conv2d(1, 3, 3), ptcore.nn.BatchNorm2d(3),
                             ptcore.nn.ReLU())
    m(ptcore.randn(4, 1, 6, 6))             # running statistics that are not the defaults
    return m.eval()


def test_run_frozen_optimizations_folds_in_place():
    m = _conv_bn()
    x = ptcore.randn(2, 1, 6, 6)
    frozen = jit.freeze(jit.trace(m, x), optimize_numerics=False)
    assert "batch_norm" in str(frozen.graph)
    assert jit.run_frozen_optimizations(frozen) is None
    assert "batch_norm" not in str(frozen.graph)
    np.testing.assert_allclose(_arr(frozen(x)), _arr(m(x)), rtol=1e-5, atol=1e-6)
    kept = jit.freeze(jit.trace(m, x), optimize_numerics=False)
    jit.run_frozen_optimizations(kept, optimize_numerics=False)
    assert "batch_norm" in str(kept.graph)
    with pytest.raises(AttributeError, match="nope"):
        jit.run_frozen_optimizations(kept, preserved_methods=["nope"])


def test_last_executed_optimized_graph():
    f = jit.trace(_chain, ptcore.randn(8))
    g = jit.trace(lambda x: x.exp(), ptcore.randn(8))
    f(ptcore.randn(8))
    assert jit.last_executed_optimized_graph() is f.graph
    g(ptcore.randn(8))
    assert jit.last_executed_optimized_graph() is g.graph


HAND_WRITTEN = '''
def collect(x, n: int):
    out = torch.jit.annotate(List[Tensor], [])
    for i in range(n):
        out.append(x * i)
    return torch.stack(out)

def namespaces(x):
    y = x.to(torch.float64) * torch.pi
    z = torch.zeros(3, dtype=torch.float64)
    n = torch.linalg.norm(x)
    s = torch.nn.functional.softmax(x, dim=0)
    if torch.jit.is_scripting():
        s = s * 2
    return y, z, n, s

def loops(x, k: int = 2):
    t = 0
    for v in [1, 2, 3]:
        t += v
    while k > 0:
        x = x * 2
        k -= 1
    return torch.where(x > 0, x, torch.zeros_like(x)) + t, x.size(0) * 2

def keyed(x, d: Dict[str, int]):
    return x * d["a"]
'''


def _hand_written_calls(lib, cu):
    x = lib.tensor([-1.5, 0.5, 2.0])
    return [cu.collect(x, 3), cu.namespaces(x), cu.loops(x), cu.loops(x, 0),
            cu.keyed(x, {"a": 3})]


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [y for a in v for y in _flat(a)]
    return [v]


def test_compilation_unit_hand_written_torchscript():
    cu = jit.CompilationUnit(HAND_WRITTEN)
    got = _flat(_hand_written_calls(ptcore, cu))
    x = np.array([-1.5, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(_arr(got[0]), np.stack([x * 0, x, x * 2]))
    assert got[1].dtype == ptcore.float64 and got[2].dtype == ptcore.float64
    np.testing.assert_allclose(_arr(got[3]), np.linalg.norm(x), rtol=1e-6)
    np.testing.assert_allclose(_arr(got[4]), 2 * np.exp(x) / np.exp(x).sum(), rtol=1e-6)
    if torch is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            want = _flat(_hand_written_calls(torch, torch.jit.CompilationUnit(HAND_WRITTEN)))
        assert len(want) == len(got)
        for a, b in zip(got, want):
            if hasattr(b, "numpy"):
                assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
                np.testing.assert_allclose(_arr(a), _arr(b), rtol=1e-6)
            else:
                assert a == b


def test_compilation_unit_refuses_non_table_functions():
    with pytest.raises(jit.ScriptError, match="torch.jit.save"):
        jit.CompilationUnit("def f(x):\n    torch.jit.save(x, 'f')\n    return x\n")
