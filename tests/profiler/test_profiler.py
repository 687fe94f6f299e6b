"""``ptcore.profiler`` and ``ptcore.autograd.profiler`` against torch 2.13:
call counts per op, record_function ranges and their nesting, the summary
table's columns, sort_by and row_limit, input shapes, Chrome-trace export,
schedules with on_trace_ready and tensorboard_trace_handler, and that
profiling changes no result.  No timing is asserted beyond consistency
(non-negative durations, children inside their parents)."""
import gzip
import json
import os
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._dispatch import dispatcher as _D

torch = pytest.importorskip("torch")

LIBS = [pytest.param(torch, id="torch"), pytest.param(ptcore, id="ptcore")]
# ops the program below calls directly, none of which torch also calls internally
COUNTED = {"aten::mm": 3, "aten::add": 3, "aten::relu": 1, "aten::sub": 1, "aten::sum": 1,
           "aten::mul": 1, "my_block": 1, "inner": 2}


def _program(T):
    x = T.tensor(np.arange(20, dtype=np.float32).reshape(4, 5) / 10)
    w = T.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    for _ in range(3):
        y = T.mm(x, w)
        y = y.add(1.0)
    z = T.relu(y - 2)
    with T.profiler.record_function("my_block"):
        s = z.sum()
        for _ in range(2):
            with T.autograd.profiler.record_function("inner"):
                pass
        s = s * 2
    return s


def _profile(T, **kw):
    P = T.profiler
    with P.profile(activities=[P.ProfilerActivity.CPU], **kw) as prof:
        out = _program(T)
    return prof, out


@pytest.mark.parametrize("T", LIBS)
def test_key_averages_counts(T):
    prof, _ = _profile(T, record_shapes=True)
    counts = {e.key: e.count for e in prof.key_averages()}
    for name, n in COUNTED.items():
        assert counts.get(name) == n, (name, counts.get(name))
    for e in prof.key_averages():
        assert e.cpu_time_total >= e.self_cpu_time_total >= 0
        assert e.cpu_time == pytest.approx(e.cpu_time_total / e.count)


def test_counts_match_torch():
    pt, _ = _profile(torch)
    pp, _ = _profile(ptcore)
    ct = {e.key: e.count for e in pt.key_averages()}
    cp = {e.key: e.count for e in pp.key_averages()}
    assert {k: cp.get(k) for k in COUNTED} == {k: ct.get(k) for k in COUNTED}
    assert all(k.startswith("aten::") or k in ("my_block", "inner") for k in cp)


@pytest.mark.parametrize("T", LIBS)
def test_record_function_nesting(T):
    prof, _ = _profile(T)
    evs = prof.events()
    block = [e for e in evs if e.name == "my_block"]
    assert len(block) == 1
    block = block[0]
    kids = {e.name for e in block.cpu_children}
    assert {"aten::sum", "aten::mul", "inner"} <= kids
    assert "aten::mm" not in kids
    for e in evs:
        assert e.cpu_time_total >= 0
        if e.cpu_parent is not None:
            p = e.cpu_parent
            assert p.time_range.start <= e.time_range.start
            assert e.time_range.end <= p.time_range.end
            assert e.time_range.elapsed_us() == pytest.approx(e.cpu_time_total, abs=1e-2)
    assert block.cpu_time_total >= sum(c.cpu_time_total for c in block.cpu_children)
    assert block.self_cpu_time_total == pytest.approx(
        block.cpu_time_total - sum(c.cpu_time_total for c in block.cpu_children), abs=1e-2)


@pytest.mark.parametrize("T", LIBS)
def test_record_shapes(T):
    prof, _ = _profile(T, record_shapes=True)
    mm = [e for e in prof.events() if e.name == "aten::mm"]
    assert [e.input_shapes for e in mm] == [[[4, 5], [5, 3]]] * 3
    groups = {(e.key, str(e.input_shapes)): e.count
              for e in prof.key_averages(group_by_input_shape=True)}
    assert groups[("aten::mm", str([[4, 5], [5, 3]]))] == 3
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()
    prof2, _ = _profile(T)
    assert all(not e.input_shapes for e in prof2.events())


_HEADER = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
           "# of Calls"]


def _table_rows(table):
    lines = table.splitlines()
    dash = [i for i, l in enumerate(lines) if l.startswith("---")]
    header = lines[dash[0] + 1]
    rows = lines[dash[1] + 1:dash[2]]
    return header, rows, lines


@pytest.mark.parametrize("T", LIBS)
def test_table_columns_sort_and_limit(T):
    prof, _ = _profile(T)
    ka = prof.key_averages()
    header, rows, lines = _table_rows(ka.table(sort_by="count", row_limit=4))
    pos = [header.index(h) for h in _HEADER]
    assert pos == sorted(pos)
    assert len(rows) == 4
    counts = [int(r.split()[-1]) for r in rows]
    assert counts == sorted(counts, reverse=True) and counts[0] == max(e.count for e in ka)
    assert lines[-1].startswith("Self CPU time total:") or \
        lines[-2].startswith("Self CPU time total:")
    # rows of the full table: one per key, with the call counts of key_averages
    _, rows, _ = _table_rows(ka.table(row_limit=-1))
    names = {r.split()[0]: int(r.split()[-1]) for r in rows}
    assert names == {e.key: e.count for e in ka}
    # sorted by self time: the Self CPU column goes down
    _, rows, _ = _table_rows(ka.table(sort_by="self_cpu_time_total"))
    selfs = [e.self_cpu_time_total for e in sorted(ka, key=lambda e: -e.self_cpu_time_total)]
    assert [r.split()[0] for r in rows] == [e.key for e in sorted(
        ka, key=lambda e: -e.self_cpu_time_total)] or selfs == sorted(selfs, reverse=True)
    pct = [float(r.split()[1].rstrip("%")) for r in rows]
    assert pct == sorted(pct, reverse=True)
    assert sum(pct) == pytest.approx(100.0, abs=0.2)


def test_table_bad_sort_key():
    for T in (torch, ptcore):
        prof, _ = _profile(T)
        with pytest.raises(AttributeError):
            prof.key_averages().table(sort_by="no_such_column")


@pytest.mark.parametrize("T", LIBS)
def test_export_chrome_trace(T, tmp_path):
    prof, _ = _profile(T, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        data = json.load(f)
    evs = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    ops = [e for e in evs if e.get("cat") == "cpu_op"]
    names = [e["name"] for e in ops]
    assert names.count("aten::mm") == 3 and names.count("aten::add") == 3
    for e in evs:
        assert {"name", "ts", "dur", "pid", "tid"} <= set(e)
        assert float(e["dur"]) >= 0
    block = [e for e in evs if e["name"] == "my_block"]
    assert len(block) == 1 and block[0]["cat"] == "user_annotation"
    b0, b1 = float(block[0]["ts"]), float(block[0]["ts"]) + float(block[0]["dur"])
    inside = [e["name"] for e in ops if b0 <= float(e["ts"]) and
              float(e["ts"]) + float(e["dur"]) <= b1 + 1]
    assert "aten::sum" in inside and "aten::mul" in inside and "aten::mm" not in inside
    mm = [e for e in ops if e["name"] == "aten::mm"][0]
    assert mm["args"]["Input Dims"] == [[4, 5], [5, 3]]
    assert float(mm["ts"]) < b0


def _scheduled(T, sched_kw, n_steps, handler_log, acc_events=False):
    P = T.profiler
    x = T.ones(3, 3)

    def handler(prof):
        evs = prof.events()
        handler_log.append((prof.step_num,
                            sum(e.name == "aten::mm" for e in evs),
                            sum(e.name == "ProfilerStep*" for e in evs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with P.profile(activities=[P.ProfilerActivity.CPU], schedule=P.schedule(**sched_kw),
                       on_trace_ready=handler, acc_events=acc_events) as prof:
            for i in range(n_steps):
                for _ in range(i + 1):         # step i runs i + 1 mm's: counts tell steps apart
                    T.mm(x, x)
                prof.step()
    return handler_log


@pytest.mark.parametrize("sched_kw,n_steps", [
    (dict(wait=1, warmup=1, active=2, repeat=2), 10),
    (dict(wait=1, warmup=1, active=2), 9),
    (dict(wait=0, warmup=0, active=1, repeat=3), 5),
    (dict(wait=2, warmup=1, active=3, skip_first=2), 12),
    (dict(wait=1, warmup=0, active=3), 5),               # exits in an active span
    (dict(wait=3, warmup=1, active=1, skip_first_wait=1), 8),
    (dict(wait=1, warmup=2, active=1, repeat=1), 3),      # exits during warmup
])
def test_schedule_and_on_trace_ready(sched_kw, n_steps):
    lt = _scheduled(torch, sched_kw, n_steps, [])
    lp = _scheduled(ptcore, sched_kw, n_steps, [])
    assert lp == lt
    assert lp     # the handler ran


def test_schedule_function_and_warnings():
    for kw in [dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
               dict(wait=2, warmup=0, active=1), dict(wait=0, warmup=2, active=3,
                                                      skip_first_wait=1),
               dict(wait=3, warmup=1, active=2, skip_first=5, skip_first_wait=1, repeat=2)]:
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            st = torch.profiler.schedule(**kw)
        with warnings.catch_warnings(record=True) as wp:
            warnings.simplefilter("always")
            sp = ptcore.profiler.schedule(**kw)
        assert [w.category for w in wp] == [w.category for w in wt]
        assert [sp(i).name for i in range(30)] == [st(i).name for i in range(30)]
    for bad in [dict(wait=-1, warmup=0, active=1), dict(wait=0, warmup=0, active=0)]:
        with pytest.raises(AssertionError):
            torch.profiler.schedule(**bad)
        with pytest.raises(AssertionError):
            ptcore.profiler.schedule(**bad)


def test_on_trace_ready_without_schedule_runs_at_exit():
    for T in (torch, ptcore):
        seen = []
        with T.profiler.profile(on_trace_ready=lambda p: seen.append(
                sum(e.name == "aten::mm" for e in p.events()))):
            T.mm(T.ones(2, 2), T.ones(2, 2))
        assert seen == [1]


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler(tmp_path, use_gzip):
    P = ptcore.profiler
    x = ptcore.ones(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1, repeat=2),
                       on_trace_ready=P.tensorboard_trace_handler(str(tmp_path), "w0",
                                                                  use_gzip=use_gzip)) as prof:
            for _ in range(6):
                ptcore.mm(x, x)
                prof.step()
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2
    for f in files:
        assert f.startswith("w0.") and f.endswith(".pt.trace.json" + (".gz" if use_gzip else ""))
        opener = gzip.open if use_gzip else open
        with opener(tmp_path / f, "rt") as fh:
            data = json.load(fh)
        names = [e["name"] for e in data["traceEvents"]]
        assert names.count("aten::mm") == 1 and any(n.startswith("ProfilerStep#") for n in names)


def test_profiler_start_stop_methods():
    for T in (torch, ptcore):
        prof = T.profiler.profile(activities=[T.profiler.ProfilerActivity.CPU])
        T.mm(T.ones(2, 2), T.ones(2, 2))       # before start: not recorded
        prof.start()
        T.mm(T.ones(2, 2), T.ones(2, 2))
        prof.stop()
        T.mm(T.ones(2, 2), T.ones(2, 2))       # after stop: not recorded
        assert {e.key: e.count for e in prof.key_averages()}["aten::mm"] == 1


def test_acc_events_keeps_cycles():
    lt = _scheduled(torch, dict(wait=0, warmup=1, active=1, repeat=3), 7, [], acc_events=True)
    lp = _scheduled(ptcore, dict(wait=0, warmup=1, active=1, repeat=3), 7, [], acc_events=True)
    assert lp == lt


# ---------------------------------------------------------------------------
# the legacy interface
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("T", LIBS)
def test_autograd_profiler(T):
    with T.autograd.profiler.profile(record_shapes=True) as prof:
        out = _program(T)
    counts = {e.key: e.count for e in prof.key_averages()}
    for name, n in COUNTED.items():
        assert counts.get(name) == n
    names = [e.name for e in prof.function_events]
    assert names.count("aten::mm") == 3
    header, rows, _ = _table_rows(prof.table(sort_by="cpu_time_total", row_limit=3))
    assert all(h in header for h in _HEADER) and len(rows) == 3
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    assert float(out) == pytest.approx(float(_program(T)))
    off = T.autograd.profiler.profile(enabled=False)
    with off as bound:
        _program(T)
    assert bound is None


@pytest.mark.parametrize("T", LIBS)
def test_record_function_as_decorator_and_outside_profile(T):
    @T.profiler.record_function("decorated")
    def f(a):
        return a * 2
    assert f(T.ones(2)).tolist() == [2.0, 2.0]      # no profile: just runs
    with T.profiler.profile() as prof:
        f(T.ones(2))
        f(T.ones(2))
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["decorated"] == 2 and counts["aten::mul"] == 2


@pytest.mark.parametrize("T", LIBS)
def test_backward_ops_are_recorded(T):
    w = T.ones(3, 3, requires_grad=True)
    with T.profiler.profile() as prof:
        T.mm(T.ones(2, 3), w).sum().backward()
    keys = {e.key for e in prof.key_averages()}
    assert "aten::mm" in keys
    assert sum(e.count for e in prof.key_averages() if e.key == "aten::mm") >= 2   # fwd + bwd


def test_backward_node_events_as_torch():
    """The engine's events: ``autograd::engine::evaluate_function: <node>``
    around ``<node>`` (the node's ops inside), AccumulateGrad's by torch's name."""
    got = []
    for T in (torch, ptcore):
        m = T.nn.Linear(4, 3)
        x = T.ones(2, 4, requires_grad=True)
        with T.profiler.profile() as prof:
            T.relu(m(x)).sum().backward()
        evs = list(prof.events())
        keys = {e.key for e in prof.key_averages()}
        nodes = sorted(k for k in keys if (k.endswith("Backward0") or k.endswith("AccumulateGrad"))
                       and not k.startswith("autograd::"))
        outer = sorted(k for k in keys if k.startswith("autograd::engine::evaluate_function: "))
        # every node event sits inside its evaluate_function event
        inside = all(e.cpu_parent is not None and
                     e.cpu_parent.name == "autograd::engine::evaluate_function: " + e.name
                     for e in evs if e.name in nodes)
        got.append((nodes, outer, inside))
    assert got[0] == got[1]
    assert "AddmmBackward0" in got[1][0] and got[1][2]


def test_nested_profile_is_refused():
    x = ptcore.ones(2, 2)
    with ptcore.profiler.profile() as outer:
        with pytest.raises(RuntimeError):
            with ptcore.profiler.profile():
                pass
        ptcore.mm(x, x)
    assert {e.key: e.count for e in outer.key_averages()}["aten::mm"] == 1


# ---------------------------------------------------------------------------
# profiling off
# ---------------------------------------------------------------------------

def test_profiling_changes_no_result_and_switches_off():
    ref = float(_program(ptcore))
    assert not _D.on[0]
    prof, out = _profile(ptcore, record_shapes=True)
    assert float(out) == ref == pytest.approx(float(_program(torch)))
    assert not _D.on[0]              # the dispatch point is back on its fast path
    n = len(prof.events())
    _program(ptcore)                 # ops after the profile are not recorded anywhere
    assert len(prof.events()) == n
    prof2, _ = _profile(ptcore)
    assert len(prof2.events()) == n   # a new profile sees only its own ops


def test_profile_with_exception_stops_recording():
    with pytest.raises(ZeroDivisionError):
        with ptcore.profiler.profile():
            ptcore.mm(ptcore.ones(2, 2), ptcore.ones(2, 2))
            1 / 0
    assert not _D.on[0]
    with ptcore.profiler.profile() as prof:       # a new one can start
        ptcore.ones(2)
    assert [e.key for e in prof.key_averages()] == ["aten::ones"]


def test_supported_activities():
    assert ptcore.profiler.ProfilerActivity.CPU in ptcore.profiler.supported_activities()
    assert {a.name for a in ptcore.profiler.supported_activities()} <= \
        {a.name for a in torch.profiler.supported_activities()} | {"CPU"}


def test_small_model_call_counts_match_torch():
    """Module calls: one event per op call, whichever spelling the module used
    (nn.ReLU -> F.relu -> ptcore.relu is one aten::relu); backward's mm's too."""
    def go(T):
        torch.manual_seed(0)
        nn = T.nn
        m = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10),
                          nn.LogSoftmax(1))
        x = T.ones(2, 1, 8, 8)
        with T.profiler.profile() as prof:
            for _ in range(3):
                loss = T.nn.functional.nll_loss(m(x), T.tensor([1, 2]))
            loss.backward()
        return {e.key: e.count for e in prof.key_averages()}
    keys = ["aten::conv2d", "aten::linear", "aten::relu", "aten::log_softmax", "aten::nll_loss",
            "aten::addmm", "aten::flatten", "aten::mm", "aten::ones_like"]
    ct, cp = go(torch), go(ptcore)
    assert {k: cp.get(k) for k in keys} == {k: ct.get(k) for k in keys}
    assert cp["aten::relu"] == 3 and cp["aten::mm"] == 2


def test_profile_memory_as_torch():
    # net host bytes per range (allocations minus frees), self excluding the children
    def run(T):
        P = T.profiler
        m = T.nn.Sequential(T.nn.Linear(256, 512), T.nn.ReLU(), T.nn.Linear(512, 10))
        x = T.ones(64, 256)
        with P.profile(activities=[P.ProfilerActivity.CPU], profile_memory=True) as prof:
            with P.record_function("model_inference"):
                m(x)
        got = {e.key: (e.cpu_memory_usage, e.self_cpu_memory_usage)
               for e in prof.key_averages()}
        table = prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=5)
        return got, table
    gp, tp = run(ptcore)
    gt, tt = run(torch)
    for key in ("model_inference", "aten::linear", "aten::addmm"):
        assert gp[key] == gt[key], key
    for col in ("CPU Mem", "Self CPU Mem", "130.50 KB"):
        assert col in tp and col in tt
    # without profile_memory: no memory columns, zeros; flops is an attribute to sort by
    prof, _ = _profile(ptcore)
    assert "CPU Mem" not in prof.key_averages().table()
    assert all(e.cpu_memory_usage == 0 for e in prof.key_averages())
    assert "aten::mm" in prof.key_averages().table(sort_by="flops")


@pytest.mark.parametrize("T", LIBS)
def test_record_function_ops(T):
    # torch.ops.profiler's range ops (what record_function runs; libraries call them
    # directly): the new form's script object, the older form's tensor handle
    ops = T.ops.profiler
    with T.profiler.profile() as prof:
        h = ops._record_function_enter_new("outer_range", None)
        T.ones(2).add(1)
        h2 = ops._record_function_enter("inner_range")
        assert isinstance(h2, T.Tensor)
        T.ones(2).mul(2)
        ops._record_function_exit(h2)
        ops._record_function_exit._RecordFunction(h)
    ev = {e.name: e for e in prof.events()}
    assert ev["outer_range"].count == ev["inner_range"].count == 1
    assert ev["outer_range"].cpu_children[0].name in ("inner_range", "aten::ones")
    assert str(h) == "ScriptObject <__torch__.torch.classes.profiler._RecordFunction>"
    assert repr(h).startswith(f"<{T.__name__}.ScriptObject object at 0x")


def test_record_function_op_schemas_as_torch():
    for name in ("_record_function_enter", "_record_function_enter_new",
                 "_record_function_exit"):
        t, p = getattr(torch.ops.profiler, name), getattr(ptcore.ops.profiler, name)
        assert p.overloads() == t.overloads()
        for o in t.overloads():
            assert getattr(p, o).name() == getattr(t, o).name()
            assert str(getattr(p, o)._schema) == str(getattr(t, o)._schema)
    for T in (torch, ptcore):
        with pytest.raises(RuntimeError, match="Expected a value of type 'str' for argument "
                                               "'name'"):
            T.ops.profiler._record_function_enter_new(3)
    # outside a profile the ops run and record nothing
    ptcore.ops.profiler._record_function_exit(
        ptcore.ops.profiler._record_function_enter_new("nothing"))
