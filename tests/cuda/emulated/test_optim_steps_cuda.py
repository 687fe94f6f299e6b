"""SGD with momentum as one kernel on CUDA (``ptc_nnoptim_sgd_<tag>``,
registered as the ``sgd_step`` loop): the same bits as the chain of CUDA ops
it replaces (``mul_``, ``add_(alpha=)``, Nesterov's and weight decay's
``add``) on the device that runs them, the CPU's values to rounding, one
launch per parameter instead of three, and clear errors on bad operands.
The SGD and Adam loops launch from C (``ptcore.cuda.ops.optim_fast``) with the
Python launchers' kernels and arguments: the same bits."""
import numpy as np
import pytest

import ptcore
import ptcore.optim.sgd as sgd_mod
from ptcore._dispatch.device import cpu_kernel
from ptcore.cuda.ops import nn as _launch_nn
from ptcore.cuda.ops import optim_fast as _optim_fast

CASES = [
    dict(momentum=0.9),
    dict(momentum=0.9, dampening=0.1, weight_decay=1e-2),
    dict(momentum=0.8, nesterov=True, weight_decay=0.05),
    dict(momentum=0.5, maximize=True, dampening=0.3),
]


def _run(dev, dt, kw, fused, steps=4):
    rng = np.random.default_rng(1)
    p = ptcore.from_numpy(rng.standard_normal((65, 9)).astype(dt)).to(dev).requires_grad_()
    opt = ptcore.optim.SGD([p], lr=0.05, **kw)
    old = sgd_mod._fusable
    if not fused:
        sgd_mod._fusable = lambda *a: False
    try:
        for _ in range(steps):
            p.grad = ptcore.from_numpy(rng.standard_normal((65, 9)).astype(dt)).to(dev)
            opt.step()
    finally:
        sgd_mod._fusable = old
    return p.detach().cpu().numpy(), opt.state[p]["momentum_buffer"].cpu().numpy()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", CASES, ids=[str(sorted(c.items())) for c in CASES])
def test_fused_kernel_equals_op_chain_and_cpu(dt, kw):
    want_p, want_b = _run("cuda", dt, kw, fused=False)
    got_p, got_b = _run("cuda", dt, kw, fused=True)
    assert np.array_equal(got_p, want_p)
    assert np.array_equal(got_b, want_b)
    cpu_p, cpu_b = _run("cpu", dt, kw, fused=True)
    tol = 1e-6 if dt == np.float32 else 1e-14
    np.testing.assert_allclose(got_p, cpu_p, rtol=0, atol=tol)
    np.testing.assert_allclose(got_b, cpu_b, rtol=0, atol=tol)


def test_c_launcher_is_the_loop_and_equals_the_python_launcher():
    """The registered loop launches from C (``_optim_fast``); the Python
    launcher gives the same bits; what C does not take goes there."""
    assert cpu_kernel("sgd_step", ptcore.device("cuda"), None) is _optim_fast.sgd_step
    rng = np.random.default_rng(5)
    for dt in (np.float32, np.float64):
        p0, g, b0 = (rng.standard_normal(1000).astype(dt) for _ in range(3))
        outs = []
        for fn in (_optim_fast.sgd_step, _launch_nn.sgd_step):
            p = ptcore.from_numpy(p0.copy()).cuda()
            b = ptcore.from_numpy(b0.copy()).cuda()
            v = (p._version, b._version)
            fn(p, ptcore.from_numpy(g).cuda(), b, 0.1, 0.9, 0.2, 0.01, True, True)
            assert p._version > v[0] and b._version > v[1]
            outs.append((p.cpu().numpy(), b.cpu().numpy()))
        assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][1], outs[1][1])
    p = ptcore.randn(6, 4).cuda()
    with pytest.raises(RuntimeError, match="contiguous"):
        _optim_fast.sgd_step(p, ptcore.randn(4, 6).cuda().t(), ptcore.randn(6, 4).cuda(), 0.1, 0.9,
                             0.0, 0.0, False, False)
    e = ptcore.empty(0).cuda()
    _optim_fast.sgd_step(e, e.clone(), e.clone(), 0.1, 0.9, 0.0, 0.0, False, False)


def test_one_launch_per_parameter(monkeypatch):
    """After the first step (which clones the gradients into the buffers):
    one ``sgd_step`` per parameter, no elementwise op."""
    m = ptcore.nn.Sequential(ptcore.nn.Linear(6, 5), ptcore.nn.ReLU(), ptcore.nn.Linear(5, 2))
    m = m.cuda()
    opt = ptcore.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = ptcore.randn(4, 6).cuda()
    m(x).sum().backward()
    opt.step()
    calls = []
    real = _optim_fast.sgd_step
    monkeypatch.setattr(sgd_mod, "_loop", lambda op, dev, fn: (
        lambda *a: calls.append(op) or real(*a)))
    m(x).sum().backward()
    opt.step()
    assert calls == ["sgd_step"] * 4


def test_bad_operands_raise():
    p = ptcore.randn(10).cuda()
    with pytest.raises(RuntimeError, match="momentum_buffer"):
        _launch_nn.sgd_step(p, ptcore.randn(10).cuda(), ptcore.randn(9).cuda(), 0.1, 0.9, 0.0,
                            0.0, False, False)
    with pytest.raises(RuntimeError, match="grad"):
        _launch_nn.sgd_step(p, ptcore.randn(10, dtype=ptcore.float64).cuda(), ptcore.randn(10).cuda(),
                            0.1, 0.9, 0.0, 0.0, False, False)
    with pytest.raises(NotImplementedError, match="sgd_step"):
        h = ptcore.randn(10).half().cuda()
        _launch_nn.sgd_step(h, h.clone(), h.clone(), 0.1, 0.9, 0.0, 0.0, False, False)


@pytest.mark.parametrize("amsgrad,decoupled,wd,maximize",
                         [(False, False, 0.0, False), (True, False, 0.1, False),
                          (False, True, 0.05, True), (True, True, 0.0, False)])
def test_adam_c_launcher_equals_the_python_launcher(amsgrad, decoupled, wd, maximize):
    assert cpu_kernel("adam_step", ptcore.device("cuda"), None) is _optim_fast.adam_step
    rng = np.random.default_rng(7)
    for dt in (np.float32, np.float64):
        arrs = [rng.standard_normal(777).astype(dt) for _ in range(5)]
        arrs[3] = np.abs(arrs[3])
        arrs[4] = np.abs(arrs[4])
        outs = []
        for fn in (_optim_fast.adam_step, _launch_nn.adam_step):
            p, g, m, v, vmax = (ptcore.from_numpy(a.copy()).cuda() for a in arrs)
            vmax = vmax if amsgrad else None
            fn(p, g, m, v, vmax, 1e-2, 0.9, 0.999, 1e-8, wd, 1 - 0.9 ** 3, 1 - 0.999 ** 3,
               maximize, decoupled)
            outs.append([t.cpu().numpy() for t in (p, m, v) + ((vmax,) if amsgrad else ())])
        for a, b in zip(*outs):
            assert np.array_equal(a, b)


def test_missing_operands_raise_before_any_launch():
    """A None gradient or buffer never reaches a kernel as a null pointer:
    the C launcher hands it to the Python one, which raises TypeError."""
    p = ptcore.randn(10).cuda()
    z = ptcore.zeros(10).cuda()
    with pytest.raises(TypeError, match="grad"):
        _optim_fast.sgd_step(p, None, z.clone(), 0.1, 0.9, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match="momentum_buffer"):
        _optim_fast.sgd_step(p, z.clone(), None, 0.1, 0.9, 0.0, 0.0, False, False)
    for k in range(3):
        ops = [z.clone(), z.clone(), z.clone()]
        ops[k] = None
        with pytest.raises(TypeError, match="must be a tensor"):
            _optim_fast.adam_step(p, *ops, None, 1e-2, 0.9, 0.999, 1e-8, 0.0, 0.1, 0.001,
                                  False, False)
    before = p.cpu().numpy().copy()
    _optim_fast.adam_step(p, z.clone(), z.clone(), z.clone(), None, 1e-2, 0.9, 0.999, 1e-8, 0.0,
                          0.1, 0.001, False, False)     # amsgrad's buffer may be None
    assert np.array_equal(p.cpu().numpy(), before)     # a zero gradient: no step
