"""Smoke test of an installed ptcore (wheel or conda package).

Run by cibuildwheel's ``test-command`` on every repaired wheel and by the conda
recipe's test: it needs nothing but ptcore and its run dependencies (NumPy,
SciPy), so it proves the wheel works without a compiler or test extras.

It checks that the compiled kernels import (OpenMP runtime vendored), that the
free-threaded build keeps the GIL off after import, and that a small MLP trains
with autograd and Adam: the loss must fall by a large factor and the gradients
must match a finite-difference estimate.

    python tools/wheel_smoke_test.py
"""
import os
import sys
import sysconfig

import numpy as np


def _check_import():
    import ptcore

    from ptcore._ops.kernels import _parallel  # noqa: F401  compiled extension with OpenMP
    nthreads = ptcore.get_num_threads()
    if nthreads < 1:
        raise SystemExit(f"ptcore.get_num_threads() returned {nthreads}")
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        if sys._is_gil_enabled():
            raise SystemExit("importing ptcore re-enabled the GIL on a free-threaded Python: "
                             "an extension module is not declared freethreading_compatible")
    print(f"ptcore {ptcore.__version__} from {os.path.dirname(ptcore.__file__)}, "
          f"{nthreads} thread(s)")
    return ptcore


def _check_gradient(ptcore):
    """Analytic gradient of a small loss against central differences (float64)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3))
    w = rng.standard_normal((3, 2))

    def loss_np(w_):
        return float(np.tanh(a @ w_).sum() ** 2)

    wt = ptcore.tensor(w, requires_grad=True)
    loss = ptcore.tanh(ptcore.tensor(a) @ wt).sum() ** 2
    loss.backward()
    eps = 1e-6
    num = np.zeros_like(w)
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            wp = w.copy()
            wm = w.copy()
            wp[i, j] += eps
            wm[i, j] -= eps
            num[i, j] = (loss_np(wp) - loss_np(wm)) / (2 * eps)
    got = wt.grad.numpy()
    if not np.allclose(got, num, rtol=1e-5, atol=1e-7):
        raise SystemExit(f"autograd gradient differs from finite differences:\n{got}\n{num}")


def _check_training(ptcore):
    """An MLP learns a noiseless two-class problem: loss falls >= 10x in 200 steps."""
    from ptcore import nn
    from ptcore.nn import functional as F

    ptcore.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 8)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] + x[:, 2] > 0).astype(np.int64)
    xt, yt = ptcore.from_numpy(x), ptcore.from_numpy(y)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = ptcore.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for _ in range(200):
        opt.zero_grad()
        loss = F.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        if first is None:
            first = loss.item()
    last = loss.item()
    with ptcore.no_grad():
        acc = float((model(xt).argmax(1) == yt).float().mean())
    print(f"training: loss {first:.4f} -> {last:.4f}, train accuracy {100 * acc:.1f}%")
    if not (last < first / 10 and acc > 0.95):
        raise SystemExit("the smoke-test model did not train")


def _report_vendored(ptcore):
    """The shared libraries ``auditwheel repair`` vendored (``ptcore.libs/`` next to the
    package; a conda package or a source install has none)."""
    libs = os.path.join(os.path.dirname(os.path.dirname(ptcore.__file__)), "ptcore.libs")
    names = sorted(os.listdir(libs)) if os.path.isdir(libs) else []
    print(f"vendored libraries: {', '.join(names) if names else 'none'}")


def main():
    ptcore = _check_import()
    _report_vendored(ptcore)
    _check_gradient(ptcore)
    _check_training(ptcore)
    print("ptcore smoke test passed")


if __name__ == "__main__":
    main()
