"""SGD with momentum in one pass (``ptcore._ops.kernels._optim.sgd_step``, ptc_sgd.h):
the same bits as the chain of ops it replaces (``buf.mul_(m).add_(g,
alpha=1 - d)``, ``param.add_(buf, alpha=-lr)``, Nesterov's and weight decay's
``add``), which is PyTorch's single-tensor CPU SGD; on one thread and on
several (the threads split the elements); and PyTorch's values."""
import numpy as np
import pytest

import ptcore
import ptcore.optim.sgd as sgd_mod

CASES = [
    dict(momentum=0.9),
    dict(momentum=0.9, dampening=0.1, weight_decay=1e-2),
    dict(momentum=0.8, nesterov=True, weight_decay=0.05),
    dict(momentum=0.5, maximize=True, dampening=0.3),
    dict(momentum=0.99, nesterov=True, maximize=True),
]


def _run(shape, dt, kw, fused, steps=5, threads=None, seed=0):
    rng = np.random.default_rng(seed)
    p = ptcore.from_numpy(rng.standard_normal(shape).astype(dt)).requires_grad_()
    opt = ptcore.optim.SGD([p], lr=0.05, **kw)
    old = sgd_mod._fusable
    old_threads = ptcore.get_num_threads()
    calls = []
    if not fused:
        sgd_mod._fusable = lambda *a: False
    else:
        sgd_mod._fusable = lambda *a: calls.append(1) or old(*a)
    try:
        if threads is not None:
            ptcore.set_num_threads(threads)
        for _ in range(steps):
            p.grad = ptcore.from_numpy(rng.standard_normal(shape).astype(dt))
            opt.step()
    finally:
        sgd_mod._fusable = old
        ptcore.set_num_threads(old_threads)
    return p.detach().numpy(), opt.state[p]["momentum_buffer"].numpy(), len(calls)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", CASES, ids=[str(sorted(c.items())) for c in CASES])
def test_same_bits_as_the_op_chain(dt, kw):
    want_p, want_b, _ = _run((37, 29), dt, kw, fused=False)
    got_p, got_b, calls = _run((37, 29), dt, kw, fused=True)
    assert calls == 4                   # every step after the first (which clones the gradient)
    assert np.array_equal(got_p, want_p)
    assert np.array_equal(got_b, want_b)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_split_the_elements(threads):
    """Large enough to run on the threads: the same bits as the op chain."""
    kw = CASES[1]
    want_p, want_b, _ = _run((700, 400), np.float32, kw, fused=False, steps=3, threads=1)
    got_p, got_b, _ = _run((700, 400), np.float32, kw, fused=True, steps=3, threads=threads)
    assert np.array_equal(got_p, want_p)
    assert np.array_equal(got_b, want_b)


def test_not_fused_where_it_does_not_apply():
    """float16, a non-contiguous parameter and grad enabled (differentiable)
    keep the op chain, with the same values as before."""
    p = ptcore.randn(8, 6, dtype=ptcore.float16).requires_grad_()
    opt = ptcore.optim.SGD([p], lr=0.1, momentum=0.9)
    for _ in range(3):
        p.grad = ptcore.randn(8, 6, dtype=ptcore.float16)
        opt.step()
    assert p.dtype is ptcore.float16
    base = ptcore.randn(6, 8)
    q = base.t()
    assert not sgd_mod._fusable(q, ptcore.randn(8, 6), ptcore.randn(8, 6))
    with ptcore.enable_grad():
        assert not sgd_mod._fusable(*(ptcore.randn(4) for _ in range(3)))
    assert not sgd_mod._fusable(ptcore.randn(4), ptcore.randn(4, dtype=ptcore.float64),
                                ptcore.randn(4))


def test_kernel_rejects_bad_operands():
    from ptcore._ops.kernels import _optim
    p = ptcore.randn(10)
    with pytest.raises(RuntimeError, match="momentum_buffer"):
        _optim.sgd_step(p, ptcore.randn(10), ptcore.randn(9), 0.1, 0.9, 0.0, 0.0, False, False)
    with pytest.raises(RuntimeError, match="grad"):
        _optim.sgd_step(p, ptcore.randn(10, dtype=ptcore.float64), ptcore.randn(10), 0.1, 0.9,
                        0.0, 0.0, False, False)
    for args in ((p, None, ptcore.randn(10)), (p, ptcore.randn(10), None)):
        with pytest.raises(TypeError, match="NoneType"):
            _optim.sgd_step(*args, 0.1, 0.9, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match="NoneType"):
        _optim.adam_step(p, None, p.clone(), p.clone(), None, 0.1, 0.9, 0.99, 1e-8, 0.0, 0.1,
                         0.01, False, False)
    with pytest.raises(RuntimeError, match="float32 or float64"):
        _optim.sgd_step(ptcore.zeros(10, dtype=ptcore.int64), ptcore.zeros(10, dtype=ptcore.int64),
                        ptcore.zeros(10, dtype=ptcore.int64), 0.1, 0.9, 0.0, 0.0, False, False)


@pytest.mark.parametrize("kw", CASES, ids=[str(sorted(c.items())) for c in CASES])
def test_against_torch(kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal((33, 17)).astype(np.float32)
    grads = [rng.standard_normal((33, 17)).astype(np.float32) for _ in range(6)]
    p = ptcore.from_numpy(p0.copy()).requires_grad_()
    t = torch.from_numpy(p0.copy()).requires_grad_()
    opt = ptcore.optim.SGD([p], lr=0.05, **kw)
    topt = torch.optim.SGD([t], lr=0.05, foreach=False, **kw)
    for g in grads:
        p.grad = ptcore.from_numpy(g.copy())
        t.grad = torch.from_numpy(g.copy())
        opt.step()
        topt.step()
    np.testing.assert_array_equal(p.detach().numpy(), t.detach().numpy())
    np.testing.assert_array_equal(opt.state[p]["momentum_buffer"].numpy(),
                                  topt.state[t]["momentum_buffer"].numpy())


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_refuses_complex_params_at_the_step(name):
    # torch constructs the optimizer and raises at the first step, naming the
    # dtype and device (its _device_dtype_check_for_fused in _init_group)
    torch = pytest.importorskip("torch")
    for lib in (ptcore, torch):
        p = lib.nn.Parameter(lib.zeros(2, dtype=lib.complex128))
        opt = getattr(lib.optim, name)([p], lr=0.1, fused=True)
        p.grad = lib.ones_like(p)
        with pytest.raises(RuntimeError, match=r"`fused=True` requires all the params to be "
                                               r"floating point.*complex128 and cpu"):
            opt.step()
