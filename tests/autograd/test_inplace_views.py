"""In-place ops and views under autograd, compared with PyTorch: version
counter errors, leaf checks, CopySlices on views of non-leaves."""
import numpy as np
import pytest


try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

from ag_helpers import A, _np, both  # noqa: E402


@needs_torch
@pytest.mark.parametrize("case", ["exp", "sigmoid", "mul-saved", "pow-saved", "view-of-saved"])
def test_modified_saved_tensor_raises(case):
    def run(m):
        x = m.tensor(A, requires_grad=True)
        if case == "exp":
            y = x.exp()
            z = y.sum()
            y.add_(1)
        elif case == "sigmoid":
            y = (x * 1).sigmoid()
            z = y.sum()
            y.mul_(2)
        elif case == "mul-saved":
            h = x * 2
            z = (h * x).sum()
            h.zero_()
        elif case == "pow-saved":
            h = x + 1
            z = (h ** 2).sum()
            h[0, 0] = 3.0
        else:
            h = x + 1
            z = (h * h).sum()
            h[0].mul_(2)                      # in-place through a view bumps the base
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward()
        return True
    assert both(run) == (True, True)


@needs_torch
def test_version_counter_as_torch():
    def run(m):
        x = m.tensor(A)
        v = [x._version]
        x.add_(1)
        v.append(x._version)
        x[0] = 2.0
        v.append(x._version)
        x[1].mul_(3)
        v.append(x._version)
        y = x.view(-1)
        y.sub_(1)
        v.append(x._version)
        return [b - v[0] for b in v]
    p, t = both(run)
    assert p == t           # increments as torch (ptcore.tensor() itself starts at version 1)


@needs_torch
def test_inplace_on_leaf_and_view_of_leaf_raise():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            x.add_(1)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
            x[0].mul_(2)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x[0, 0] = 1.0
        with m.no_grad():
            x.add_(1)                          # allowed under no_grad
            x[0] = 0.0
        return x
    p, t = both(run)
    np.testing.assert_allclose(_np(p), _np(t))


@needs_torch
@pytest.mark.parametrize("case", range(7))
def test_inplace_on_views_of_nonleaves(case):
    def run(m):
        x = m.tensor(A, requires_grad=True)
        w = m.tensor(A[0] * 2, requires_grad=True)
        h = x * 1
        if case == 0:
            h[0].mul_(w)
        elif case == 1:
            h[:, 1:].copy_(w[:2].expand(2, 2))
        elif case == 2:
            h.t()[1] += w[:2]
        elif case == 3:
            h[h > 0] = 0.0
        elif case == 4:
            h.view(-1)[::2].exp_()
        elif case == 5:
            h.diagonal().zero_()
            h[1].fill_(w[0])
        else:
            v = h[0]
            h.mul_(w)                           # base modified: the view sees it
            h = v * 2
        out = (h * h).sum()
        gx, gw = m.autograd.grad(out, [x, w], allow_unused=True)
        return h, gx, gw
    p, t = both(run)
    np.testing.assert_allclose(_np(p[0]), _np(t[0]))
    for a, b in zip(p[1:], t[1:]):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(_np(a), _np(b))


@needs_torch
def test_copyslices_grad_fn_name_and_view_history():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        h = x * 1
        v = h[0]
        v.mul_(2)
        return h.grad_fn.name(), v.requires_grad, v.grad_fn is not None
    p, t = both(run)
    assert p == t


@needs_torch
def test_inplace_grad_matches_torch_double_backward():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        h = x.clone()
        h.mul_(x)
        h.sin_()
        h[1] = x[0] * 3
        g, = m.autograd.grad(h.sum(), x, create_graph=True)
        gg, = m.autograd.grad((g * g).sum(), x)
        return g, gg
    p, t = both(run)
    for a, b in zip(p, t):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10)


@needs_torch
def test_inplace_of_non_requires_grad_by_requires_grad():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        buf = m.zeros(2, 3, dtype=m.float64)
        buf[0] = x[1] * 2
        buf.add_(x)
        return buf.requires_grad, m.autograd.grad(buf.pow(2).sum(), x)[0]
    p, t = both(run)
    assert p[0] is t[0] is True
    np.testing.assert_allclose(_np(p[1]), _np(t[1]))


@needs_torch
def test_views_share_and_track_base():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        h = x * 2
        v = h.t()[1:]
        return v._base is h, v.is_leaf, v.requires_grad
    p, t = both(run)
    assert p == t


@needs_torch
@pytest.mark.parametrize("op", ["div_", "mul_", "pow_", "lerp_", "atan2_", "fmod_", "xlogy_",
                                "clamp_min", "scatter_reduce_", "index_reduce_"])
def test_inplace_on_plain_tensor_with_grad_argument(op):
    # ``logits /= temperature``: self needs no grad, the argument does; the formula
    # needs the old self, which the in-place write must not destroy
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 2.0, (4, 3))
    w = rng.uniform(0.5, 2.0, (4, 3))

    def run(m):
        x = m.tensor(a)
        p = m.tensor(w, requires_grad=True)
        if op in ("div_", "mul_", "pow_", "atan2_", "fmod_", "xlogy_"):
            getattr(x, op)(p)
        elif op == "lerp_":
            x.lerp_(m.zeros(4, 3, dtype=m.float64), p)
        elif op == "clamp_min":
            x.clamp_(min=p)
        elif op == "scatter_reduce_":
            x = m.zeros(2, 3, dtype=m.float64)
            x.scatter_reduce_(0, m.tensor([[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0]]), p,
                              "amax", include_self=False)
        else:
            x = m.ones(2, 3, dtype=m.float64)
            x.index_reduce_(0, m.tensor([0, 1, 0, 1]), p, "prod", include_self=True)
        (x.exp() * 2).sum().backward()
        return x, p.grad
    (xp, gp), (xt, gt) = run(__import__("ptcore")), run(torch)
    np.testing.assert_allclose(_np(xp), xt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(gp), gt.numpy(), rtol=1e-10, atol=1e-12)


def _retain_then_inplace(m, case):
    """A tensor retains its grad, then its history changes in place: torch moves
    the retain slot to the new node (its other hooks stay on the old one)."""
    x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
    y = x * 2
    seen = []
    if case == "mul_":
        y.retain_grad()
        y.mul_(2)
        loss, watched = (y * 5).sum(), y
    elif case == "two_inplace":
        y.retain_grad()
        y.mul_(2)
        y.add_(1)
        loss, watched = (y * 7).sum(), y
    elif case == "copy_":
        y.retain_grad()
        y.copy_(x * 3)
        loss, watched = (y * 5).sum(), y
    elif case == "hook_stays":
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.retain_grad()
        y.mul_(2)
        loss, watched = (y * 5).sum(), y
    elif case == "base_of_view":
        y.retain_grad()
        y[:2].mul_(3)
        loss, watched = (y * 5).sum(), y
    elif case == "view_of_base":
        v = y[:2]
        v.retain_grad()
        y.mul_(3)
        loss, watched = (v * 5).sum(), v
    else:       # mark_dirty in a custom Function
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2
        y.retain_grad()
        Twice.apply(y)
        loss, watched = (y * 5).sum(), y
    loss.backward()
    return watched.grad.tolist(), x.grad.tolist(), seen


@needs_torch
@pytest.mark.parametrize("case", ["mul_", "two_inplace", "copy_", "hook_stays", "base_of_view",
                                  "view_of_base", "mark_dirty"])
def test_retain_grad_follows_inplace(case):
    p, t = both(lambda m: _retain_then_inplace(m, case))
    assert p == t


def test_inplace_on_a_view_of_a_reshape_that_copied_as_torch():
    """``einsum(...).reshape(...).T += ...`` (PEFT's GraLoRA delta weight): the reshape copies
    (its node is view-named but the result has no base), the transpose views it, and the
    in-place add rebases the view; the copy's node was refreshed as a view's and crashed."""
    import ptcore
    if torch is None:
        pytest.skip("torch is not installed")
    res = []
    for L in (ptcore, torch):
        a = L.tensor(np.arange(24.).reshape(4, 2, 3) / 10, requires_grad=True)
        b = L.tensor(np.arange(30.).reshape(2, 3, 5) / 10, requires_grad=True)
        c = L.tensor(np.arange(20.).reshape(10, 2) / 10, requires_grad=True)
        d = L.einsum("ikr,kro->iko", a, b).reshape(4, 10).T
        d += c @ L.ones(2, 4, dtype=L.float64)
        (d * L.arange(40, dtype=L.float64).reshape(10, 4)).sum().backward()
        res.append([d.grad_fn.name(), d.detach().numpy(), a.grad.numpy(), b.grad.numpy(),
                    c.grad.numpy()])
    assert res[0][0] == res[1][0]
    for x, y in zip(res[0][1:], res[1][1:]):
        np.testing.assert_allclose(x, y, rtol=1e-12)


@needs_torch
def test_setitem_with_numpy_index_arrays_records_as_torch():
    # ``lower[np.tril_indices(...)] = entries`` (normflows' LU flows): NumPy index arrays are
    # advanced indexing; a write that requires grad went into a copy (the arrays, which have
    # __index__, passed for basic indices) and was lost.  0-d integer arrays and NumPy
    # integers stay ints
    import ptcore

    def run(L):
        e = L.tensor([0.5, 2.0, 3.0], requires_grad=True)
        idx = np.tril_indices(3, k=-1)
        low = e.new_zeros(3, 3)
        low[idx[0], idx[1]] = e
        low[np.diag_indices(3)] = 1.0
        w = L.zeros(2, 3)
        w[np.array([1]), 1:] = e[1:] * 2
        w[np.array(0), np.int64(0)] = e[0]
        m = L.zeros(2, 3)
        m[np.array([True, False])] = e
        loss = (low * L.arange(9.0).reshape(3, 3)).sum() + (w * w).sum() + (m * 3).sum()
        loss.backward()
        return [low.tolist(), w.tolist(), m.tolist(), e.grad.tolist()]
    assert run(ptcore) == run(torch)
