"""The one-pass kernels (ptcore/_ops/kernels/_nn_kernels.pyx) behind GELU's, softmax's
and log_softmax's backward, layer_norm forward/backward and causal
scaled_dot_product_attention give torch's values and gradients, and a recorded
backward (create_graph) still differentiates."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

DTYPES = [(np.float32, 1e-5), (np.float64, 1e-12)]


def _pair(a, grad=True):
    p = ptcore.from_numpy(a.copy())
    t = torch.from_numpy(a.copy())
    if grad:
        p.requires_grad_()
        t.requires_grad_()
    return p, t


def _close(p, t, tol):
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dt,tol", DTYPES)
@pytest.mark.parametrize("contiguous_grad", [True, False])
def test_gelu_backward(dt, tol, contiguous_grad):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((5, 37, 19)) * 3).astype(dt)
    x[0, 0, :4] = [0.0, -0.0, 8.5, -9.0]
    base = rng.standard_normal((19, 37, 5)).astype(dt)
    g = np.ascontiguousarray(base.transpose(2, 1, 0))
    # a permuted (non-contiguous) gradient takes the composite formula
    pg = ptcore.from_numpy(g.copy()) if contiguous_grad else ptcore.from_numpy(base).permute(2, 1, 0)
    px, tx = _pair(x)
    ptcore.nn.functional.gelu(px).backward(pg)
    torch.nn.functional.gelu(tx).backward(torch.from_numpy(g))
    _close(px.grad, tx.grad, tol)


@pytest.mark.parametrize("n", [5, 16, 8 * 97 + 3])
def test_gelu_extremes_forward_backward(n):
    # the vector GELU (FMA where the CPU has it) and its exp of -x^2/2 on
    # arguments through the underflow border (|x| ~ 14.4), +-inf, NaN, +-0,
    # in whole vectors and the scalar tail: torch's values within float32
    # rounding (absolutely within 1e-6: far below 0 torch's gradient cancels
    # to 0 where ptcore keeps the tiny true value), NaN where torch has it.
    # torch computes in float64 here: its vectorized float32 CPU GELU returns
    # NaN at +inf on AVX-512 machines (+inf elsewhere, on CUDA and in float64)
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 6).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 14.3, -14.3, 14.5, -14.5, 20.0,
                        -20.0, 100.0, -100.0, 1e-30, -1e-30], np.float32)
    x[:min(n, len(special))] = special[:n]
    x[-min(n, len(special)):] = special[:n][::-1]
    g = rng.standard_normal(n).astype(np.float32)
    px, _ = _pair(x)
    tx = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    py = ptcore.nn.functional.gelu(px)
    ty = torch.nn.functional.gelu(tx)
    py.backward(ptcore.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(g.astype(np.float64)))
    for a, b in ((py, ty), (px.grad, tx.grad)):
        a, b = a.detach().numpy(), b.detach().numpy().astype(np.float32)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=3e-6, atol=1e-6)


def test_gelu_forward_through_exp_clamp():
    # the vector GELU's exp(-u^2) clamps its argument at -87 (|x| ~ 13.19) and
    # scales once: every float32 from 4 to 2e4 in magnitude (a stride through
    # their bit patterns, both signs, whole vectors and tails) is x's exact
    # limit where erf saturates (x, or -0.0 below 0) and within the erf
    # approximation's error of the float64 formula elsewhere
    special = pytest.importorskip("scipy.special")
    bits = np.arange(np.float32(4.0).view(np.int32), np.float32(2e4).view(np.int32), 37,
                     dtype=np.int32)
    mag = bits.view(np.float32)
    x = np.concatenate([mag, -mag, np.float32([13.19, -13.19, 13.2, -13.2, 87.0, -87.0])])
    y = ptcore.nn.functional.gelu(ptcore.from_numpy(x)).numpy()
    x64 = x.astype(np.float64)
    ref = x64 * 0.5 * (1.0 + special.erf(x64 / np.sqrt(2.0)))
    np.testing.assert_allclose(y, ref, rtol=2e-7, atol=1e-6)
    sat = np.abs(x) >= 6.0
    np.testing.assert_array_equal(y[sat & (x > 0)], x[sat & (x > 0)])
    neg = y[sat & (x < 0)]
    assert np.all(neg == 0.0) and np.all(np.signbit(neg))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [-1, 2, 0])
@pytest.mark.parametrize("dt,tol", DTYPES)
def test_softmax_backward(fn, dim, dt, tol):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 6, 33)) * 2).astype(dt)
    g = rng.standard_normal(x.shape).astype(dt)
    px, tx = _pair(x)
    getattr(ptcore, fn)(px, dim).backward(ptcore.from_numpy(g.copy()))
    getattr(torch, fn)(tx, dim).backward(torch.from_numpy(g.copy()))
    _close(px.grad, tx.grad, 10 * tol)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_softmax_backward_scale_is_a_following_mul(dt):
    # attention's scores gradient: softmax_backward(..., scale) gives the bits
    # of the gradient followed by mul_(scale); log_softmax takes no scale
    from ptcore._ops.kernels import _nn_kernels as K
    rng = np.random.default_rng(4)
    y = ptcore.softmax(ptcore.from_numpy(rng.standard_normal((6, 4, 33)).astype(dt)), -1)
    g = ptcore.from_numpy(rng.standard_normal((6, 4, 33)).astype(dt))
    for scale in (0.17677669529663687, 3.0, -2.5):
        a = K.softmax_backward(g, y, -1, False, scale)
        b = K.softmax_backward(g, y, -1, False).mul_(scale)
        assert np.array_equal(a.numpy(), b.numpy())
    assert K.softmax_backward(g, y, -1, True, 0.5) is None


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "gelu"])
def test_recorded_backward_keeps_double_backward(fn):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 8)).astype(np.float64)
    g = rng.standard_normal((3, 8)).astype(np.float64)
    res = []
    for lib in (ptcore, torch):
        xx = lib.from_numpy(x.copy()).requires_grad_()
        gg = lib.from_numpy(g.copy()).requires_grad_()
        y = lib.nn.functional.gelu(xx) if fn == "gelu" else getattr(lib, fn)(xx, -1)
        (gx,) = lib.autograd.grad(y, xx, gg, create_graph=True)
        (gx * gx).sum().backward()
        res.append((gx.detach().numpy(), xx.grad.numpy(), gg.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _layer_norm_pair(x, g, w, b, ns):
    """[output, input grad, weight grad?, bias grad?] of layer_norm (w/b None:
    no affine part) in ptcore and in torch."""
    out = []
    for lib in (ptcore, torch):
        xx = lib.from_numpy(x.copy()).requires_grad_()
        ww = None if w is None else lib.from_numpy(w.copy()).requires_grad_()
        bb = None if b is None else lib.from_numpy(b.copy()).requires_grad_()
        y = lib.nn.functional.layer_norm(xx, ns, ww, bb, eps=1e-5)
        y.backward(lib.from_numpy(g.copy()))
        out.append([y, xx.grad] + [t.grad for t in (ww, bb) if t is not None])
        assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0" or lib is torch
    return out


@pytest.mark.parametrize("dt,tol", DTYPES)
@pytest.mark.parametrize("ns", [(33,), (6, 33)])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_forward_backward(dt, tol, ns, affine):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 6, 33)) * 3 + 1).astype(dt)
    g = rng.standard_normal(x.shape).astype(dt)
    w = rng.standard_normal(ns).astype(dt) if affine in ("both", "weight") else None
    b = rng.standard_normal(ns).astype(dt) if affine in ("both", "bias") else None
    for a, c in zip(*_layer_norm_pair(x, g, w, b, ns)):
        _close(a, c, 20 * tol)


@pytest.mark.parametrize("dt,tol", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 4, 8, 11, 128, 133])
@pytest.mark.parametrize("affine", [True, False])
def test_row_sums_in_lanes_and_tails(dt, tol, n, affine):
    # the row sums of layer norm and softmax's backward run in 8 partial sums
    # plus a tail: rows shorter than, equal to and not a multiple of that
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((5, n)) * 3 + 1).astype(dt)
    g = rng.standard_normal(x.shape).astype(dt)
    w = rng.standard_normal(n).astype(dt) if affine else None
    b = rng.standard_normal(n).astype(dt) if affine else None
    out = _layer_norm_pair(x, g, w, b, (n,))
    for lib, res in zip((ptcore, torch), out):
        xs = lib.from_numpy(x.copy()).requires_grad_()
        lib.softmax(xs, -1).backward(lib.from_numpy(g.copy()))
        res.append(xs.grad)
    for a, c in zip(*out):
        _close(a, c, 20 * tol)


def test_layer_norm_non_contiguous_and_double_backward():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 5, 12)).astype(np.float64)
    w = rng.standard_normal(12).astype(np.float64)
    res = []
    for lib in (ptcore, torch):
        xx = lib.from_numpy(x.copy()).requires_grad_()
        ww = lib.from_numpy(w.copy()).requires_grad_()
        xt = xx.transpose(0, 1)                         # not contiguous: the composite path
        y = lib.nn.functional.layer_norm(xt, (12,), ww)
        y2 = lib.nn.functional.layer_norm(xx, (12,), ww)  # contiguous: the kernel
        gx, gw = lib.autograd.grad((y.sum(1) * y2.sum(0)).pow(2).sum(), (xx, ww), create_graph=True)
        (gx.square().sum() + gw.sum()).backward()
        res.append([y, gx, gw, xx.grad, ww.grad])
    for a, c in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("L,S", [(9, 9), (5, 9), (9, 5), (1, 1), (64, 64), (17, 33), (40, 8)])
@pytest.mark.parametrize("dt,tol", DTYPES)
def test_causal_sdpa_values_and_grads(L, S, dt, tol):
    # (the causal softmax keeps keys j <= i of each row: rows shorter than,
    # equal to and longer than the 8-lane vectors, and S < L)
    rng = np.random.default_rng(5)
    q = (rng.standard_normal((2, 3, L, 8)) * 2).astype(dt)
    k = rng.standard_normal((2, 3, S, 8)).astype(dt)
    v = rng.standard_normal((2, 3, S, 4)).astype(dt)
    g = rng.standard_normal((2, 3, L, 4)).astype(dt)
    res = []
    for lib in (ptcore, torch):
        qq, kk, vv = (lib.from_numpy(a.copy()).requires_grad_() for a in (q, k, v))
        o = lib.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=True)
        o.backward(lib.from_numpy(g.copy()))
        res.append([o, qq.grad, kk.grad, vv.grad])
    for a, c in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=10 * tol,
                                   atol=10 * tol)


def test_causal_softmax_kernel_masks_and_normalises():
    # the in-place kernel itself: 0 above the diagonal, rows summing to 1,
    # softmax's values on the kept keys; NaN in a row turns its kept part NaN
    from ptcore._ops.kernels import _nn_kernels
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((3, 11, 13)) * 4).astype(np.float32)
    a[1, 4, 2] = np.nan
    s = ptcore.from_numpy(a.copy())
    assert _nn_kernels.causal_softmax_(s) is s
    r = s.numpy()
    keep = np.tril(np.ones((11, 13), bool))
    assert (r[:, ~keep] == 0).all()
    t = torch.from_numpy(a.copy()).masked_fill(torch.from_numpy(~keep), float("-inf")).softmax(-1)
    ok = ~np.isnan(a).any(-1, keepdims=True) & keep
    np.testing.assert_allclose(r[np.broadcast_to(ok, r.shape)],
                               t.numpy()[np.broadcast_to(ok, r.shape)], rtol=2e-6, atol=1e-7)
    assert np.isnan(r[1, 4, :5]).all()
    assert _nn_kernels.causal_softmax_(ptcore.zeros(4, 4, dtype=ptcore.int64)) is None


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_node_and_double_backward(causal):
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    res = []
    for lib in (ptcore, torch):
        qq, kk, vv = (lib.from_numpy(a.copy()).requires_grad_() for a in (q, k, v))
        o = lib.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=causal, scale=0.7)
        gq, gk, gv = lib.autograd.grad(o.square().sum(), (qq, kk, vv), create_graph=True)
        (gq.sum() + (gk * gk).sum() + gv.pow(3).sum()).backward()
        res.append([o, gq, gk, gv, qq.grad, kk.grad, vv.grad])
    for a, c in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("n", [1, 3, 4, 7, 8, 12, 128, 133])
@pytest.mark.parametrize("affine", ["both", "bias", "none"])
def test_row_sum_avx_loops_same_bits(n, affine):
    # the float32 row sums of layer norm (forward and backward), its
    # weight/bias accumulation and softmax's backward run on 4-double vectors
    # where the CPU has AVX: the same bits as the 2-double loops (same
    # per-lane operations and combination order), at 1 and 2 threads
    from ptcore._ops.kernels import _nn_kernels
    rng = np.random.default_rng(n + 7)
    x = (rng.standard_normal((37, n)) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32) if affine == "both" else None
    b = rng.standard_normal(n).astype(np.float32) if affine != "none" else None

    def grads():
        xx = ptcore.from_numpy(x.copy()).requires_grad_()
        ps = [None if a is None else ptcore.from_numpy(a.copy()).requires_grad_() for a in (w, b)]
        y = ptcore.nn.functional.layer_norm(xx, (n,), *ps)
        y.backward(ptcore.from_numpy(g.copy()))
        res = [y.detach().numpy()] + [t.grad.numpy() for t in [xx] + ps if t is not None]
        for f in (ptcore.softmax, ptcore.log_softmax):
            xs = ptcore.from_numpy(x.copy()).requires_grad_()
            res.append(ptcore.autograd.grad(f(xs, -1), [xs], ptcore.from_numpy(g.copy()))[0].numpy())
        return res

    old = _nn_kernels._set_ln_avx(False)
    threads = ptcore.get_num_threads()
    try:
        plain = grads()
        _nn_kernels._set_ln_avx(True)
        for nt in (1, 2):
            ptcore.set_num_threads(nt)
            for a, c in zip(grads(), plain):
                np.testing.assert_array_equal(a, c)
    finally:
        _nn_kernels._set_ln_avx(old)
        ptcore.set_num_threads(threads)
    out = _layer_norm_pair(x, g, w, b, (n,))
    for a, c in zip(out[0][1:], out[1][1:]):
        _close(a, c, 2e-4)


def test_layer_norm_node_semantics():
    # the kernel path records one NativeLayerNormBackward0 node: saved tensors
    # are checked for in-place changes, go through saved-tensor hooks, are
    # freed after backward, and only the parameters that need grads get them
    for lib in (ptcore, torch):
        ln = lib.nn.LayerNorm(8)
        x = lib.randn(4, 8, requires_grad=True)
        z = x * 1
        y = ln(z)
        assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
        z.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        packed = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(t), t)[1], lambda t: t):
            y = ln(x)
        assert len(packed) >= 4
        s = y.sum()
        s.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            s.backward()
        ln.weight.grad = ln.bias.grad = None
        ln.bias.requires_grad_(False)
        ln(lib.randn(4, 8)).sum().backward()
        assert ln.weight.grad is not None and ln.bias.grad is None
        with lib.no_grad():
            assert not ln(x).requires_grad
