"""The training workloads of benchmarks/workloads_recurrent_gan.py (LSTM/GRU
language models, a cell loop, DCGAN, LeNet-5, an MLP) give torch's losses
for three steps at small sizes, from the same initial weights."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "workloads_recurrent_gan.py"
_spec = importlib.util.spec_from_file_location("workloads_recurrent_gan", _PATH)
W = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(W)


@pytest.fixture(autouse=True)
def _one_thread():
    # torch's reductions depend on its thread count; compare at one thread
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def test_workload_interface():
    names = [w.name for w in W.WORKLOADS]
    assert len(names) == len(set(names)) == 7
    for w in W.WORKLOADS:
        assert callable(w.build) and callable(w.params) and callable(w.step)


@pytest.mark.parametrize("wl", W.WORKLOADS, ids=lambda w: w.name)
def test_losses_match_torch(wl):
    ps = wl.build(ptcore, 3, small=True)
    ts = wl.build(torch, 3, small=True)
    pp, tp = wl.params(ps), wl.params(ts)
    assert [tuple(p.shape) for p in pp] == [tuple(t.shape) for t in tp]
    W.copy_params(pp, tp, torch)
    lp = [wl.step(ps, i) for i in range(3)]
    lt = [wl.step(ts, i) for i in range(3)]
    assert all(isinstance(v, float) and math.isfinite(v) for v in lp)
    np.testing.assert_allclose(lp, lt, rtol=2e-5, atol=2e-5)
    # the training moved the parameters the same way (and buffers such as
    # BatchNorm's running statistics)
    for a, b in zip(wl.params(ps), wl.params(ts)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)
    # the parameters did change
    assert lp[0] != lp[1]
