"""ptcore.utils.benchmark against torch.utils.benchmark: the statistics, repr
and Compare tables from the same raw times, and Timer's run counts."""
import random
import re

import pytest

import ptcore
from ptcore.utils import benchmark as B

torch = pytest.importorskip("torch")
TB = pytest.importorskip("torch.utils.benchmark")


def _pair(raw, number=10, **spec):
    spec.setdefault("stmt", "x + y")
    spec.setdefault("setup", "pass")
    p = B.Measurement(number, list(raw), B.TaskSpec(**spec))
    t = TB.Measurement(number, list(raw), TB.TaskSpec(**spec))
    return p, t


def _norm(s):
    return re.sub(r"object at 0x[0-9a-f]+", "object", s).replace(
        "ptcore.utils.benchmark.common", "M").replace("torch.utils.benchmark.utils.common", "M")


RAWS = [[1e-3], [2e-5, 3e-5], [1.0, 1.1, 0.9, 1.05, 1.2, 0.95, 3.0],
        [5e-7 * (1 + 0.01 * i) for i in range(40)], [2.5e-2, 2.6e-2, 2.4e-2, 9e-2]]


@pytest.mark.parametrize("raw", RAWS)
@pytest.mark.parametrize("spec", [{}, {"label": "add", "sub_label": "f32", "description": "n=4"},
                                  {"stmt": "a = 1\nb = a + 1", "setup": "import math\nx = 1",
                                   "num_threads": 2}])
def test_measurement_statistics_and_repr_match_torch(raw, spec):
    p, t = _pair(raw, **spec)
    for name in ("median", "mean", "iqr"):
        assert getattr(p, name) == pytest.approx(getattr(t, name), rel=1e-12, abs=0), name
    assert p.times == t.times
    assert p.significant_figures == t.significant_figures
    assert p.has_warnings == t.has_warnings
    assert p.meets_confidence(0.2) == t.meets_confidence(0.2)
    assert p.title == t.title and p.as_row_name == t.as_row_name
    assert p.label == t.label and p.num_threads == t.num_threads
    assert _norm(repr(p)) == _norm(repr(t))


def test_merge_and_helpers_match_torch():
    ps, ts = zip(*[_pair([1e-3 * (i + 1), 2e-3], number=i + 1, label="L") for i in range(3)])
    mp, mt = B.Measurement.merge(ps), TB.Measurement.merge(ts)
    assert len(mp) == len(mt) == 1
    assert mp[0].raw_times == mt[0].raw_times and mp[0].number_per_run == 1
    for t in (3e-10, 4.2e-8, 1e-6, 5.5e-4, 0.3, 12.0):
        assert B.select_unit(t) == TB.select_unit(t)
    for x, n in ((3.14159, 2), (123456.0, 3), (0.000123456, 1)):
        assert B.trim_sigfig(x, n) == pytest.approx(TB.trim_sigfig(x, n))
    assert B.unit_to_english("us") == TB.unit_to_english("us")


@pytest.mark.parametrize("opts", [(), ("trim",), ("trim", "colorize"), ("warnings",),
                                  ("colorize_rows",)])
def test_compare_table_matches_torch(opts):
    rng = random.Random(0)
    specs = [dict(stmt=s, label="ops", sub_label=sub, description=d, num_threads=nt)
             for s, sub in (("x + y", "add"), ("x * y", "mul"))
             for d in ("n=10", "n=1000") for nt in (1, 2)]
    ps, ts = [], []
    for k, spec in enumerate(specs):
        raw = [1e-6 * (k + 1) * (1 + 0.3 * rng.random()) for _ in range(12)]
        p, t = _pair(raw, **spec)
        ps.append(p)
        ts.append(t)
    ps.append(_pair([4e-3], stmt="z", label="other", description="n=1")[0])
    ts.append(_pair([4e-3], stmt="z", label="other", description="n=1")[1])
    cp, ct = B.Compare(ps), TB.Compare(ts)
    for c in (cp, ct):
        if "trim" in opts:
            c.trim_significant_figures()
        if "colorize" in opts:
            c.colorize()
        if "colorize_rows" in opts:
            c.colorize(rowwise=True)
        if "warnings" in opts:
            c.highlight_warnings()
    assert str(cp) == str(ct)
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        B.Compare([1])


def test_timer_timeit_counts_runs():
    calls = []
    m = B.Timer("f()", globals={"f": lambda: calls.append(1)}).timeit(300)
    assert len(calls) == 3 + 300              # warm-up of number // 100 (at least 2), then number
    assert m.number_per_run == 300 and len(m.raw_times) == 1 and m.median > 0
    assert isinstance(m, B.Measurement)


def test_timer_blocked_autorange_and_adaptive():
    x = ptcore.ones(64)
    seen = []
    t = B.Timer("torch.add(x, x)", setup="y = 1", globals={"x": x}, label="add",
                description="n=64", num_threads=1)
    m = t.blocked_autorange(callback=lambda n, s: seen.append((n, s)), min_run_time=0.02)
    assert len(seen) == len(m.raw_times) >= 1
    assert all(n == m.number_per_run for n, _ in seen)
    assert sum(m.raw_times) >= 0.02
    assert m.median > 0 and m.iqr >= 0 and m.title == "add"
    assert "n=64" in repr(m)
    a = t.adaptive_autorange(threshold=10.0, min_run_time=0.01, max_run_time=1.0)
    assert len(a.raw_times) >= 4 and a.median > 0
    assert ptcore.get_num_threads() >= 1


def test_timer_errors_match_torch():
    for L in (TB, B):
        with pytest.raises(ValueError, match="only a `str` stmt"):
            L.Timer(lambda: 1)
        with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
            L.Timer("pass", global_setup="x = 1")
        with pytest.raises(ValueError, match="Invalid language"):
            L.Timer("pass", language="rust")
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            L.Timer("pass").repeat()
    with pytest.raises(NameError):
        B.Timer("undefined_name + 1").timeit(2)
