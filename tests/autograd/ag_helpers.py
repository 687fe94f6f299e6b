"""Shared helpers of the autograd tests: run the same function on ptcore
and torch tensors built from the same float64 arrays and compare values,
gradients (``autograd.grad`` with a random ``grad_outputs``) and second
derivatives (``create_graph=True``)."""
import numpy as np

import ptcore

try:
    import torch
except ImportError:
    torch = None

# a small float64 matrix several graph tests start from
A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def both(fn):
    """Run ``fn(mod)`` with ptcore and torch; return both results."""
    return fn(ptcore), fn(torch)


def arrays(shapes, domain="any", seed=0):
    """Float64 test inputs; ``domain`` keeps them where the op is smooth."""
    rng = np.random.default_rng(seed)
    out = []
    for i, s in enumerate(shapes):
        d = domain[i] if isinstance(domain, (tuple, list)) else domain
        if d == "pos":
            a = rng.uniform(0.5, 2.0, s)
        elif d == "unit":
            a = rng.uniform(-0.8, 0.8, s)
        elif d == "gt1":
            a = rng.uniform(1.2, 3.0, s)
        elif d == "prob":
            a = rng.uniform(0.1, 0.9, s)
        elif d == "spd":
            n = s[-1]
            m = rng.standard_normal(s)
            a = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
        elif d == "distinct":
            # well separated values (no ties: sort/max/median gradients are unique)
            n = int(np.prod(s)) if s else 1
            a = rng.permutation(n).astype(np.float64).reshape(s) * 0.37 + rng.uniform(0, 0.1, s)
        elif d == "sym":
            m = rng.standard_normal(s)
            a = m + np.swapaxes(m, -1, -2)
        elif d == "cpx":
            a = rng.standard_normal(s) + 1j * rng.standard_normal(s)
        else:
            a = rng.standard_normal(s)
        out.append(np.asarray(a))
    return out


def _tensors(mod, arrs, requires_grad=True):
    return [mod.tensor(a, requires_grad=requires_grad) for a in arrs]


def _flat_outputs(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat_outputs(o))
        return res
    return [out]


def _np(t):
    if isinstance(t, ptcore.Tensor):
        return t.detach().resolve_conj().numpy()
    if t._is_zerotensor():        # torch's symbolic zero gradients
        return np.zeros(tuple(t.shape), dtype=np.complex128 if t.is_complex() else np.float64)
    return t.detach().resolve_conj().resolve_neg().numpy()


def _diff(o):
    return o.dtype.is_floating_point or o.dtype.is_complex


def compare(fn, arrs, diff=None, rtol=1e-7, atol=1e-9, second=True, seed=1):
    """Compare outputs, gradients and (``second``) double-backward of ``fn``
    between ptcore and torch.  ``diff``: indices of arrays that require
    grad (default: all)."""
    if diff is None:
        diff = range(len(arrs))
    diff = set(diff)
    px = [ptcore.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrs)]
    tx = [torch.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrs)]
    po = _flat_outputs(fn(ptcore, *px))
    to = _flat_outputs(fn(torch, *tx))
    assert len(po) == len(to)
    for p, t in zip(po, to):
        assert tuple(p.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(p), _np(t), rtol=rtol, atol=atol)
        assert p.requires_grad == t.requires_grad, (p.dtype, t.requires_grad)
        if not _diff(p):
            assert p.grad_fn is None
    rng = np.random.default_rng(seed)
    pairs = [(p, t) for p, t in zip(po, to) if t.requires_grad]
    assert pairs, "nothing differentiable"
    gos = []
    for p, t in pairs:
        g = rng.standard_normal(tuple(t.shape))
        if t.dtype.is_complex:
            g = g + 1j * rng.standard_normal(tuple(t.shape))
        gos.append(g)
    pin = [px[i] for i in sorted(diff)]
    tin = [tx[i] for i in sorted(diff)]
    pgo = [ptcore.tensor(g, requires_grad=second) for g in gos]
    tgo = [torch.tensor(g, requires_grad=second) for g in gos]
    tg = torch.autograd.grad([t for _, t in pairs], tin, tgo, allow_unused=True, create_graph=second)
    pg = ptcore.autograd.grad([p for p, _ in pairs], pin, pgo, allow_unused=True,
                              create_graph=second)
    for i, (a, b) in enumerate(zip(pg, tg)):
        if b is None:
            assert a is None or not np.any(_np(a)), f"input {i}: torch gives no gradient"
            continue
        assert a is not None, f"input {i}: ptcore gives no gradient"
        assert tuple(a.shape) == tuple(b.shape), (i, tuple(a.shape), tuple(b.shape))
        assert a.dtype.is_complex == b.dtype.is_complex
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")
    if not second:
        return
    # second derivatives: d/d(inputs, grad_outputs) of sum(g_i * w_i)
    tsel = [(a, b) for a, b in zip(pg, tg) if b is not None and b.requires_grad]
    if not tsel:
        return
    ws = [rng.standard_normal(tuple(b.shape)) for _, b in tsel]
    if any(b.dtype.is_complex for _, b in tsel):
        ws = [w + 1j * rng.standard_normal(w.shape) if b.dtype.is_complex else w
              for w, (_, b) in zip(ws, tsel)]
    tsum = sum((b * torch.tensor(w)).sum() for (_, b), w in zip(tsel, ws))
    if tsum.dtype.is_complex:
        tsum = tsum.real
    assert all(a.requires_grad for a, _ in tsel), "ptcore gradient has no graph (create_graph)"
    psum = None
    for (a, _), w in zip(tsel, ws):
        s = (a * ptcore.tensor(w)).sum()
        psum = s if psum is None else psum + s
    if psum.dtype.is_complex:
        psum = psum.real
    tg2 = torch.autograd.grad(tsum, tin + tgo, allow_unused=True)
    pg2 = ptcore.autograd.grad(psum, pin + pgo, allow_unused=True)
    for i, (a, b) in enumerate(zip(pg2, tg2)):
        if b is None:
            assert a is None or not np.any(_np(a)), f"second-order input {i}: torch gives none"
            continue
        if a is None:
            assert not np.any(_np(b)), f"second-order input {i}: ptcore gives none"
            continue
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-8,
                                   err_msg=f"second-order gradient of input {i}")
