"""ptcore.compile's fusions beyond pointwise chains: a mask fill (attention's causal
``masked_fill(mask, -inf)`` after its scaling, and its backward's zeroing) joins the
pointwise run around it, also across a view of a buffer in between.  Compiled values and
gradients are compared with eager ptcore and torch, for float32 and float64, with the
eager fallbacks (a value other than a number, an integer input, a mask that requires a
broadcast of the input) giving the eager result too."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _fwd_source(cf):
    seg = cf.entries[0].program.segments[0]
    code = seg.backward.fwd_code if seg.backward is not None else seg.code
    return code.source


def _attn(lib, x, mask_buf, T, value):
    s = x * 0.25
    s = s.masked_fill(mask_buf[:, :, :T, :T] == 0, value)
    return lib.softmax(s, -1) if hasattr(lib, "softmax") else lib.nn.functional.softmax(s, -1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [float("-inf"), -1e4, 0])
def test_scaled_masked_fill_fuses_and_matches(dtype, value):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((2, 3, 8, 8)).astype(dtype)
    buf = np.tril(np.ones((8, 8), dtype)).reshape(1, 1, 8, 8)
    mp = ptcore.from_numpy(buf)

    def f(x):
        return _attn(ptcore, x, mp, 8, value)
    cf = ptcore.compile(f)
    for _ in range(2):              # the capture run, then the compiled graph
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        xe = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        yc, ye = cf(xc), f(xe)
        yc.backward(ptcore.from_numpy(np.cos(xa)))
        ye.backward(ptcore.from_numpy(np.cos(xa)))
        np.testing.assert_allclose(yc.detach().numpy(), ye.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-6, atol=1e-7)
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    yt = _attn(torch, xt, torch.from_numpy(buf), 8, value)
    yt.backward(torch.from_numpy(np.cos(xa)))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(yc.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=tol * 10, atol=tol)
    src = _fwd_source(cf)
    # the scaling and the fill are one fused call (the mask's slice does not cut the run)
    assert "masked_fill" not in src, src
    assert cf.entries[0].program.segments[0].n_fused >= 2      # forward and backward


def test_masked_fill_inference_fuses():
    rng = np.random.default_rng(1)
    x = ptcore.from_numpy(rng.standard_normal((4, 6)).astype("float32"))
    mask = ptcore.from_numpy(rng.random((1, 6)) > 0.5)

    def f(x):
        return (x * 3.0).masked_fill(mask, float("nan")).exp()
    cf = ptcore.compile(f)
    with ptcore.no_grad():
        cf(x)
        got = cf(x)
        want = f(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, equal_nan=True)
    assert np.isnan(got.numpy()[:, mask.numpy()[0]]).all()
    assert "masked_fill" not in _fwd_source(cf)


@pytest.mark.parametrize("case", ["tensor_value", "int_input", "mask_broadcasts_input"])
def test_masked_fill_fallbacks_give_eager_result(case):
    rng = np.random.default_rng(2)
    if case == "int_input":
        x = ptcore.from_numpy(rng.integers(-5, 5, (3, 4)))
        mask = ptcore.from_numpy(rng.random((3, 4)) > 0.5)

        def f(x):
            return (x * 2).masked_fill(mask, 7) + 1
    elif case == "tensor_value":
        x = ptcore.from_numpy(rng.standard_normal((3, 4)).astype("float32"))
        mask = ptcore.from_numpy(rng.random((3, 4)) > 0.5)
        v = ptcore.tensor(-2.5)

        def f(x):
            return (x * 2).masked_fill(mask, v) + 1
    else:
        # the mask is bigger than the input: the fill's result has the mask's shape
        x = ptcore.from_numpy(rng.standard_normal((1, 4)).astype("float32"))
        mask = ptcore.from_numpy(rng.random((3, 4)) > 0.5)

        def f(x):
            return (x * 2).masked_fill(mask, -1.0) + 1
    cf = ptcore.compile(f)
    with ptcore.no_grad():
        cf(x)
        got = cf(x)
    want = f(x)
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if case == "tensor_value":
        assert "masked_fill" in _fwd_source(cf)


def test_fusion_run_stays_open_across_a_view_only_when_it_reads_no_run_value():
    from ptcore.jit import _fusion
    x = ptcore.randn(4, 4)
    b = ptcore.randn(2, 4, 4)

    def f(x):
        y = x * 2.0
        m = b[0]                    # a view of a buffer: the run of y stays open
        z = (y + 1.0).masked_fill(m > 0, 0.0)
        w = z.t()                   # a view of the run's value: the run is emitted first
        return w * 3.0, z
    tr = ptcore.jit.trace(f, (x,))
    steps = _fusion.plan(tr.graph)
    kinds = [("group", sorted(n.op[1] for n in s.nodes)) if isinstance(s, _fusion.FusedGroup)
             else s.op[1] for s in steps]
    # one run: the scaling, the mask's comparison, the add and the fill (the buffer's
    # view before it), then the transpose of its result after it
    assert kinds[0] == "__getitem__", kinds
    assert kinds[1] == ("group", ["add", "gt", "masked_fill", "mul"]), kinds
    assert kinds[2] == "t", kinds
    got = tr(x)
    want = f(x)
    for a, c in zip(got, want):
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-6)


# ---------------------------------------------------------------------------
# backward steps calling the one-pass kernels (ptcore._inductor.kernel_grads)
# ---------------------------------------------------------------------------

def _kernel_steps(cf):
    seg = cf.entries[0].program.segments[0]
    return seg.backward.bwd_code.source, [op for op, _ in seg.backward.opaque]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "gelu", "softmax_dim1_of_2d"])
def test_one_pass_backward_kernels_match_eager_and_torch(op, dtype):
    rng = np.random.default_rng(3)
    xa = rng.standard_normal((4, 5, 6)).astype(dtype)
    wa = rng.standard_normal((6, 6)).astype(dtype)

    def body(lib, x, w):
        h = x @ w
        if op == "softmax":
            y = lib.softmax(h, -1)
        elif op == "log_softmax":
            y = lib.nn.functional.log_softmax(h, dim=-1)
        elif op == "gelu":
            y = lib.nn.functional.gelu(h)
        else:
            y = lib.softmax(h.reshape(20, 6), 1).reshape(4, 5, 6)
        return (y * y.cos()).sum()
    cf = ptcore.compile(lambda x, w: body(ptcore, x, w))
    for _ in range(2):
        xs = [ptcore.from_numpy(xa.copy()).requires_grad_(True) for _ in range(2)]
        ws = [ptcore.from_numpy(wa.copy()).requires_grad_(True) for _ in range(2)]
        lc, le = cf(xs[0], ws[0]), body(ptcore, xs[1], ws[1])
        lc.backward()
        le.backward()
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6)
        for a, b in ((xs[0], xs[1]), (ws[0], ws[1])):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7)
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    wt = torch.from_numpy(wa.copy()).requires_grad_(True)
    body(torch, xt, wt).backward()
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(xs[0].grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ws[0].grad.numpy(), wt.grad.numpy(), rtol=tol, atol=tol)
    src, opaque = _kernel_steps(cf)
    name = {"softmax_dim1_of_2d": "softmax"}.get(op, op)
    assert f"{name}_grad" in src, src
    assert not opaque, opaque


@pytest.mark.parametrize("case", ["tanh_gelu", "softmax_other_dim", "non_contiguous_output"])
def test_one_pass_backward_fallbacks_match_eager(case):
    rng = np.random.default_rng(4)
    xa = rng.standard_normal((3, 4, 5)).astype("float32")

    def body(lib, x):
        if case == "tanh_gelu":
            y = lib.nn.functional.gelu(x * 2, approximate="tanh")
        elif case == "softmax_other_dim":
            y = lib.softmax(x * 2, 1)
        else:
            y = lib.softmax((x * 2).transpose(0, 2), -1)
        return (y * y.sin()).sum()
    cf = ptcore.compile(lambda x: body(ptcore, x))
    for _ in range(2):
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        xe = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        cf(xc).backward()
        body(ptcore, xe).backward()
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-5, atol=1e-7)
    src, _ = _kernel_steps(cf)
    if case != "non_contiguous_output":
        assert "_grad_" not in src, src


def test_one_pass_backward_with_create_graph_takes_the_composite():
    rng = np.random.default_rng(5)
    xa = rng.standard_normal((2, 7)).astype("float64")

    def body(lib, x):
        return lib.nn.functional.gelu(x * 1.5)
    cf = ptcore.compile(lambda x: body(ptcore, x))
    for _ in range(2):
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        g = ptcore.from_numpy(np.cos(xa)).requires_grad_(True)
        (gx,) = ptcore.autograd.grad(cf(xc), [xc], [g], create_graph=True)
        assert gx.requires_grad
        (gg,) = ptcore.autograd.grad(gx.sum(), [g])
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    gt = torch.from_numpy(np.cos(xa)).requires_grad_(True)
    (gxt,) = torch.autograd.grad(body(torch, xt), [xt], [gt], create_graph=True)
    (ggt,) = torch.autograd.grad(gxt.sum(), [gt])
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), ggt.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["both", "weight_frozen", "none"])
def test_layer_norm_kernel_steps_match_eager_and_torch(dtype, affine):
    rng = np.random.default_rng(6)
    xa = rng.standard_normal((3, 5, 8)).astype(dtype)
    wa = rng.standard_normal((8, 8)).astype(dtype)
    ga, ba = rng.standard_normal(8).astype(dtype), rng.standard_normal(8).astype(dtype)

    def make(lib):
        w = lib.from_numpy(wa.copy()).requires_grad_(True) if lib is torch else \
            ptcore.from_numpy(wa.copy()).requires_grad_(True)
        if affine == "none":
            return w, None, None
        frm = torch.from_numpy if lib is torch else ptcore.from_numpy
        g = frm(ga.copy()).requires_grad_(affine == "both")
        b = frm(ba.copy()).requires_grad_(True)
        return w, g, b

    def body(lib, x, w, g, b):
        F = lib.nn.functional
        h = F.layer_norm(x @ w, (8,), g, b, 1e-5)
        return (F.layer_norm(h.tanh() + x, (8,)) * h).sum()
    cf = ptcore.compile(lambda *a: body(ptcore, *a))
    for _ in range(2):
        pc, pe = make(ptcore), make(ptcore)
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        xe = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        lc, le = cf(xc, *pc), body(ptcore, xe, *pe)
        lc.backward()
        le.backward()
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6)
        for a, c in zip([xc] + list(pc), [xe] + list(pe)):
            if a is not None and a.requires_grad:
                np.testing.assert_allclose(a.grad.numpy(), c.grad.numpy(), rtol=1e-5, atol=1e-6)
            elif a is not None:
                assert a.grad is None
    pt = make(torch)
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    body(torch, xt, *pt).backward()
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, c in zip([xc] + list(pc), [xt] + list(pt)):
        if a is not None and a.requires_grad:
            np.testing.assert_allclose(a.grad.numpy(), c.grad.numpy(), rtol=tol, atol=tol)
    seg = cf.entries[0].program.segments[0]
    assert "ln_forward" in seg.backward.fwd_code.source
    assert seg.backward.bwd_code.source.count("ln_grad") == 2
    assert not seg.backward.opaque


def test_layer_norm_non_contiguous_input_and_create_graph_match_eager():
    rng = np.random.default_rng(7)
    xa = rng.standard_normal((6, 4)).astype("float64")

    def body(lib, x):
        F = lib.nn.functional
        return F.layer_norm((x * 2).t(), (6,)) * 3   # a transposed input: not the kernel's
    cf = ptcore.compile(lambda x: body(ptcore, x))

    def body2(lib, x):
        return lib.nn.functional.layer_norm(x * 2, (4,))
    cf2 = ptcore.compile(lambda x: body2(ptcore, x))
    for _ in range(2):
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        xe = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        g = ptcore.from_numpy(np.sin(xa.T).copy())
        cf(xc).backward(g)
        body(ptcore, xe).backward(g)
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-12)
        # a double backward through the gradient (create_graph): against torch
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        gc = ptcore.from_numpy(np.cos(xa)).requires_grad_(True)
        (gx,) = ptcore.autograd.grad(cf2(xc), [xc], [gc], create_graph=True)
        (ggc,) = ptcore.autograd.grad((gx * gx).sum(), [gc])
    assert "ln_forward" not in cf.entries[0].program.segments[0].backward.fwd_code.source
    assert "ln_grad" in cf2.entries[0].program.segments[0].backward.bwd_code.source
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    gt = torch.from_numpy(np.cos(xa)).requires_grad_(True)
    (gxt,) = torch.autograd.grad(body2(torch, xt), [xt], [gt], create_graph=True)
    (ggt,) = torch.autograd.grad((gxt * gxt).sum(), [gt])
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ggc.numpy(), ggt.numpy(), rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["unbind", "repeat_and_negative", "unbind_and_repeat",
                                  "other_use_first", "other_use_last"])
def test_select_and_squeeze_grads_match_eager_and_torch(dtype, case):
    # multi-head attention's q, k, v = proj.unflatten(...).unsqueeze(0).transpose(0, -2)
    # .squeeze(-2)[0], [1], [2]: the rows' gradients are written into one buffer
    rng = np.random.default_rng(8)
    xa = rng.standard_normal((4, 6)).astype(dtype)
    wa = rng.standard_normal((6, 12)).astype(dtype)

    def body(lib, x, w):
        p = (x @ w).unflatten(-1, (3, 4)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        if case == "unbind":
            a, b, c = p[0], p[1], p[2]
        elif case == "repeat_and_negative":
            a, b, c = p[0], p[-3], p[2]
        elif case == "unbind_and_repeat":
            a, b, c = p[0], p[1], p[2]
            return (a * b.sin() + c.cos() * a + p[1].exp()).sum()
        elif case == "other_use_first":
            return (p * 0.5).sum() + (p[1] * p[2]).sum()
        else:
            return (p[1] * p[2]).sum() + (p * 0.5).sum()
        return (a * b.sin() + c.cos() * a).sum()
    cf = ptcore.compile(lambda x, w: body(ptcore, x, w))
    for _ in range(2):
        xs = [ptcore.from_numpy(xa.copy()).requires_grad_(True) for _ in range(2)]
        ws = [ptcore.from_numpy(wa.copy()).requires_grad_(True) for _ in range(2)]
        cf(xs[0], ws[0]).backward()
        body(ptcore, xs[1], ws[1]).backward()
        for a, c in ((xs[0], xs[1]), (ws[0], ws[1])):
            np.testing.assert_allclose(a.grad.numpy(), c.grad.numpy(), rtol=1e-6, atol=1e-7)
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    wt = torch.from_numpy(wa.copy()).requires_grad_(True)
    body(torch, xt, wt).backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(xs[0].grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ws[0].grad.numpy(), wt.grad.numpy(), rtol=tol, atol=tol)
    seg = cf.entries[0].program.segments[0]
    src = seg.backward.bwd_code.source
    assert "select_grad_" in src and "squeeze_grad" in src, src
    assert ("select_grad_into" in src) == (case != "other_use_last"), src
    # every row written: the buffer is not zero-filled first
    import re
    # (its fourth argument; a fifth, the buffer's strides, where the views after it
    # read it as a contiguous tensor: copies.fold_select_layout)
    first = re.search(r"select_grad_\d+\(\w+, \w+, -?\d+, (True|False)", src).group(1)
    assert first == ("False" if case in ("unbind", "unbind_and_repeat") else "True"), src
    assert not seg.backward.opaque


def test_select_grad_with_create_graph_matches_torch():
    rng = np.random.default_rng(9)
    xa = rng.standard_normal((3, 5)).astype("float64")

    def body(lib, x):
        y = x * 2
        return y[0] * y[2] + y[0]
    cf = ptcore.compile(lambda x: body(ptcore, x))
    for _ in range(2):
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        gc = ptcore.from_numpy(np.cos(xa[0])).requires_grad_(True)
        (gx,) = ptcore.autograd.grad(cf(xc), [xc], [gc], create_graph=True)
        (ggc,) = ptcore.autograd.grad((gx * gx).sum(), [gc])
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    gt = torch.from_numpy(np.cos(xa[0])).requires_grad_(True)
    (gxt,) = torch.autograd.grad(body(torch, xt), [xt], [gt], create_graph=True)
    (ggt,) = torch.autograd.grad((gxt * gxt).sum(), [gt])
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ggc.numpy(), ggt.numpy(), rtol=1e-12)
