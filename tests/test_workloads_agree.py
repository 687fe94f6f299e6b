"""The training workloads of benchmarks/workloads.py compute torch's losses.

Each workload is built small in both libraries from the same seed, torch's
parameters are set to ptcore's, and the losses of the first steps (forward,
backward, clipping, optimizer step) must agree to float32 tolerance.
"""
import importlib.util
import inspect
import os

import pytest

torch = pytest.importorskip("torch")

import ptcore  # noqa: E402

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PATH = os.path.join(_ROOT, "benchmarks", "workloads.py")


def _load():
    if not os.path.exists(_PATH):
        pytest.skip("benchmarks/workloads.py is not in this checkout")
    spec = importlib.util.spec_from_file_location("_ptcore_bench_workloads", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_MOD = _load() if os.path.exists(_PATH) else None
_WLS = _MOD.all_workloads() if _MOD is not None else []


@pytest.mark.parametrize("wl", _WLS, ids=[w.name for w in _WLS])
def test_workload_losses_agree_with_torch(wl):
    if "small" not in inspect.signature(wl.build).parameters:
        pytest.skip(f"{wl.name} has no small build")
    old_p, old_t = ptcore.get_num_threads(), torch.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        torch.set_num_threads(1)
        ps, ts = _MOD.build_pair(wl, ptcore, torch, seed=3, small=True)
        worst, lp, lt = _MOD.loss_agreement(wl, ps, ts, steps=3)
    finally:
        ptcore.set_num_threads(old_p)
        torch.set_num_threads(old_t)
    assert len(lp) == 3
    # the optimizer moved the model: a step that changed nothing would agree trivially
    assert lp[0] != lp[2]
    assert worst <= 1e-4, f"{wl.name}: ptcore {lp} vs torch {lt}"


def test_build_pair_copies_every_parameter_and_buffer():
    wl = next(w for w in _WLS if w.name == "gpt-masked") if _WLS else pytest.skip("no workloads")
    ps, ts = _MOD.build_pair(wl, ptcore, torch, seed=5, small=True)
    pp, tp = wl.params(ps), wl.params(ts)
    assert len(pp) == len(tp) > 0
    for a, b in zip(pp, tp):
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()


def test_paired_step_times_cpu_clock():
    # --cpu-time: the samples come from the clock given (CPU time of the process)
    import time
    mod = _load()
    ticks = [0.0]

    def clock():
        return ticks[0]

    def heavy():
        ticks[0] += 0.004

    def light():
        ticks[0] += 0.001

    t_heavy, t_light = mod.paired_step_times([heavy, light], 0.05, clock=clock)
    assert abs(t_heavy - 0.004) < 1e-9 and abs(t_light - 0.001) < 1e-9
    t_cpu = mod.paired_step_times([lambda: sum(range(2000))], 0.05, clock=time.process_time)
    assert 0 < t_cpu[0] < 0.05
