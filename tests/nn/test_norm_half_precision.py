"""Norms of half-precision inputs compute in float32 and round once, as torch's kernels:
layer_norm and group_norm give torch's bits; batch/instance norm are at least as
accurate as torch's against a float64 reference (torch's own bfloat16 batch norm rounds
its intermediate terms)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _norms(L, dt, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    F = L.nn.functional
    x = L.from_numpy(rng.standard_normal((8, 6, 5, 5)).astype(np.float32)).to(dt)
    x.requires_grad_()
    w = L.from_numpy(rng.standard_normal(6).astype(np.float32)).to(dt).requires_grad_()
    b = L.from_numpy(rng.standard_normal(6).astype(np.float32)).to(dt).requires_grad_()
    lw = L.from_numpy(rng.standard_normal(25).astype(np.float32)).to(dt).requires_grad_()
    outs = [F.layer_norm(x.reshape(8, 6, 25), (25,), lw, None), F.layer_norm(x, (5, 5)),
            F.group_norm(x, 3, w, b), F.group_norm(x, 2)]
    s = sum((o.float() * L.arange(o.numel()).reshape(o.shape).float() / o.numel()).sum()
            for o in outs)
    s.backward()
    return [o.detach().float().numpy() for o in outs] + [str(outs[0].dtype).split(".")[-1]]


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_layer_and_group_norm_round_once_as_torch(dt):
    p = _norms(ptcore, getattr(ptcore, dt))
    t = _norms(torch, getattr(torch, dt))
    for a, b in zip(p, t):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_batch_and_instance_norm_in_float32(dt):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 6, 5, 5)).astype(np.float32)
    x64 = torch.from_numpy(a).to(getattr(torch, dt)).double()
    F = torch.nn.functional
    refs = [F.batch_norm(x64, None, None, training=True).numpy(),
            F.instance_norm(x64).numpy()]
    errs = {}
    for L in (ptcore, torch):
        x = L.from_numpy(a).to(getattr(L, dt))
        rm, rv = L.zeros(6, dtype=x.dtype), L.ones(6, dtype=x.dtype)
        ys = [L.nn.functional.batch_norm(x, rm, rv, training=True),
              L.nn.functional.instance_norm(x)]
        assert all(y.dtype == x.dtype for y in ys)
        errs[L.__name__] = [np.abs(y.float().numpy() - r).max() for y, r in zip(ys, refs)]
        # the running statistics keep their dtype
        assert rm.dtype == x.dtype and float(rv.float().mean()) != 1.0
    assert all(e <= 1.05 * f for e, f in zip(errs["ptcore"], errs["torch"]))
