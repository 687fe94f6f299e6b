"""Convolutions and max pooling of contiguous float32/float64 CUDA tensors
from C (``ptcore.cuda.ops.conv_pool_fast``): the ``F.conv1d/2d/3d`` and
``F.max_pool2d/3d`` fast forms, the primitives ``_prim`` hands to the
device (``conv_prim``, the input and weight gradients of a backward) and
max pooling's gathering backward, and ReLU's ``threshold_backward`` from C
(``dense_fast.binary_params``).  Each gives bitwise the general path's
values, gradients and graph (the same kernels and GEMMs with the same
arguments), close to the CPU's; everything else -- channels-last, strided,
half-precision or unbatched operands, a batch over the column budget,
arguments the general path rejects -- is left to the general path, whose
results and errors are the CPU's."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore._dispatch.device import register_fast_form
from ptcore.cuda.ops import nn as cuda_nn
from ptcore.cuda.ops import index as cuda_index
from ptcore.cuda.ops import conv_pool_fast


_LAUNCHERS = ("conv_forward", "conv_backward_input", "conv_backward_weight", "max_pool_forward",
              "max_pool_backward")
_ORIGINAL = {name: cuda_nn._ConvKernelSet.__dict__[name] for name in _LAUNCHERS}


class _GeneralPath:
    """Within: no fast form, no C primitive, no C threshold_backward (the
    Python launchers run every kernel, restored if a test replaced them)."""

    def __enter__(self):
        self.mp = pytest.MonkeyPatch()
        for nd in (1, 2, 3):
            register_fast_form(f"conv{nd}d", "cuda", None, ("nn.functional",))
        for nd in (2, 3):
            register_fast_form(f"max_pool{nd}d", "cuda", None, ("nn.functional",))
        self.mp.setattr(cuda_nn._ConvKernelSet, "conv_prim", None)
        self.mp.setattr(cuda_nn._ConvKernelSet, "max_pool_backward_prim", None)
        for name, fn in _ORIGINAL.items():
            self.mp.setattr(cuda_nn._ConvKernelSet, name, fn)
        self.mp.setattr(cuda_index, "_binary_params_fast", [None])
        return self

    def __exit__(self, *exc):
        self.mp.undo()
        cuda_nn.install_fast_forms()


@pytest.fixture
def general():
    return _GeneralPath()


@pytest.fixture
def no_python_launchers(monkeypatch):
    """The Python launchers of the conv/pool kernels raise: a call that
    reaches them did not take the C path."""
    def refuse(*a, **k):
        raise AssertionError("the general path ran")
    for name in _LAUNCHERS:
        monkeypatch.setattr(cuda_nn._ConvKernelSet, name, staticmethod(refuse))
    return refuse


def _spy(monkeypatch, name):
    """The fast forms made again around ``conv_pool_fast.<name>`` spied on:
    the list of whether each call took the C path (True) or declined."""
    calls = []
    orig = getattr(conv_pool_fast, name)

    def spy(*a):
        r = orig(*a)
        calls.append(r is not None)
        return r
    monkeypatch.setattr(conv_pool_fast, name, spy)
    cuda_nn.install_fast_forms()
    return calls


def _arr(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _pair(a, dtype):
    t = ptcore.from_numpy(a).to(dtype)
    return t, t.cuda()


CONVS = [
    # (nd, x shape, w shape, kwargs)
    (2, (4, 3, 11, 9), (5, 3, 3, 3), {}),
    (2, (4, 1, 12, 12), (6, 1, 5, 5), {"padding": 2}),                    # LeNet's first
    (2, (3, 6, 9, 10), (4, 3, 3, 2), {"groups": 2, "stride": (2, 1)}),
    (2, (2, 4, 13, 11), (6, 4, 3, 3), {"dilation": 2, "padding": (1, 3)}),
    (2, (2, 3, 8, 8), (4, 3, 4, 3), {"padding": "same"}),                 # asymmetric 'same'
    (2, (2, 3, 8, 8), (4, 3, 3, 3), {"padding": "valid", "stride": [3]}),
    # one output position: the weight gradient's per-sample products (3 x 50) outgrow the
    # columns (50): the general path's other branch (its launcher runs)
    (2, (1, 2, 5, 5), (3, 2, 5, 5), {"stride": 7}),
    (1, (3, 4, 17), (6, 2, 3), {"groups": 2, "padding": 1}),
    (3, (2, 2, 5, 6, 4), (3, 2, 2, 3, 2), {"stride": (1, 2, 1), "padding": 1}),
]


def _conv(nd):
    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("nd,xs,ws,kw", CONVS)
def test_conv_forward_and_gradients_from_c(monkeypatch, general, no_python_launchers, nd, xs, ws,
                                           kw, dtype, bias):
    conv = _conv(nd)
    if kw.get("stride") == 7:
        monkeypatch.setattr(cuda_nn._ConvKernelSet, "conv_backward_weight",
                            _ORIGINAL["conv_backward_weight"])
    x, dx = _pair(_arr(xs, 1), dtype)
    w, dw = _pair(_arr(ws, 2, 0.3), dtype)
    b, db = _pair(_arr((ws[0],), 3), dtype) if bias else (None, None)
    with general:
        conv(dx, dw, db, **kw)              # the kernels' group loaded (the general path does)
    leaves = [t.requires_grad_() for t in (dx, dw, db) if t is not None]
    y = conv(dx, dw, db, **kw)              # the fast form, the C primitives of its backward
    assert y.grad_fn.name() == "ConvolutionBackward0" and y.is_contiguous()
    g = ptcore.from_numpy(_arr(tuple(y.shape), 4)).to(dtype).cuda()
    grads = ptcore.autograd.grad(y, leaves, g)
    yc = conv(x, w, b, **kw)
    tol = 1e-4 if dtype is ptcore.float32 else 1e-10
    np.testing.assert_allclose(y.detach().cpu().numpy(), yc.numpy(), rtol=tol, atol=tol)
    cl = [t.requires_grad_() for t in (x, w, b) if t is not None]
    for got, want in zip(grads, ptcore.autograd.grad(conv(x, w, b, **kw), cl, g.cpu())):
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("nd,xs,ws,kw", CONVS)
def test_conv_bits_equal_the_general_path(nd, xs, ws, kw):
    conv = _conv(nd)
    dx = ptcore.from_numpy(_arr(xs, 5)).float().cuda().requires_grad_()
    dw = ptcore.from_numpy(_arr(ws, 6, 0.3)).float().cuda().requires_grad_()
    db = ptcore.from_numpy(_arr((ws[0],), 7)).float().cuda().requires_grad_()
    g = None

    def run():
        nonlocal g
        y = conv(dx, dw, db, **kw)
        if g is None:
            g = ptcore.from_numpy(_arr(tuple(y.shape), 8)).float().cuda()
        return [y.detach()] + list(ptcore.autograd.grad(y, (dx, dw, db), g))
    with _GeneralPath():
        want = run()
    got = run()
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.stride() == b.stride()
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())


def test_conv_double_backward_through_the_fast_form():
    x = ptcore.from_numpy(_arr((2, 3, 7, 6), 9)).cuda().requires_grad_()
    w = ptcore.from_numpy(_arr((4, 3, 3, 3), 10, 0.3)).cuda().requires_grad_()

    def second():
        y = F.conv2d(x, w, padding=1)
        (gx,) = ptcore.autograd.grad((y * y).sum(), x, create_graph=True)
        return ptcore.autograd.grad(gx.square().sum(), (x, w))
    with _GeneralPath():
        want = second()
    got = second()
    xc, wc = x.detach().cpu().requires_grad_(), w.detach().cpu().requires_grad_()
    yc = F.conv2d(xc, wc, padding=1)
    (gxc,) = ptcore.autograd.grad((yc * yc).sum(), xc, create_graph=True)
    cpu = ptcore.autograd.grad(gxc.square().sum(), (xc, wc))
    for a, b, c in zip(got, want, cpu):
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
        np.testing.assert_allclose(a.cpu().numpy(), c.numpy(), rtol=1e-10, atol=1e-10)


def test_conv_module_and_no_grad(no_python_launchers):
    m = ptcore.nn.Conv2d(3, 4, 3, padding=1).cuda()
    x = ptcore.randn(2, 3, 6, 6).cuda()
    F.conv2d(x.clone(), m.weight.detach(), padding=1)
    mc = ptcore.nn.Conv2d(3, 4, 3, padding=1)
    mc.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})
    with ptcore.no_grad():
        y = m(x)
    assert y.grad_fn is None
    np.testing.assert_allclose(y.cpu().numpy(), mc(x.cpu()).detach().numpy(), rtol=1e-4, atol=1e-5)
    y = m(x)
    y.sum().backward()
    mc(x.cpu()).sum().backward()
    np.testing.assert_allclose(m.weight.grad.cpu().numpy(), mc.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(m.bias.grad.cpu().numpy(), mc.bias.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_conv_calls_the_c_path_declines(monkeypatch):
    """Layouts, dtypes and arguments the C paths leave to the general path
    give the CPU's values, and the CPU's errors."""
    x = ptcore.randn(2, 4, 7, 7)
    w = ptcore.randn(6, 4, 3, 3)
    dx, dw = x.cuda(), w.cuda()
    F.conv2d(dx, dw)
    calls = _spy(monkeypatch, "conv")
    try:
        cases = [
            (lambda t: t.contiguous(memory_format=ptcore.channels_last), lambda t: t),
            (lambda t: t.transpose(2, 3), lambda t: t),
            (lambda t: t[0], lambda t: t),                                   # unbatched
            (lambda t: t.half(), lambda t: t.half()),
            (lambda t: t, lambda t: t.contiguous(memory_format=ptcore.channels_last)),
        ]
        for fx, fw in cases:
            del calls[:]
            got = F.conv2d(fx(dx), fw(dw), padding=1)
            assert calls == [False]
            want = F.conv2d(fx(x).float(), fw(w).float(), padding=1)
            assert got.shape == want.shape and got.stride() == F.conv2d(fx(x), fw(w), padding=1).stride()
            np.testing.assert_allclose(got.float().cpu().numpy(), want.numpy(), rtol=2e-2, atol=2e-2)
        for bad, err in [(dict(padding="full"), RuntimeError), (dict(stride=0), RuntimeError),
                         (dict(padding=-1), RuntimeError), (dict(groups=3), RuntimeError),
                         (dict(dilation=(1, 2, 3)), RuntimeError), (dict(bogus=1), TypeError)]:
            with pytest.raises(err) as e_cuda:
                F.conv2d(dx, dw, **bad)
            with pytest.raises(err) as e_cpu:
                F.conv2d(x, w, **bad)
            assert str(e_cuda.value) == str(e_cpu.value)
        with pytest.raises(RuntimeError, match="size"):
            F.conv2d(dx, dw, padding=0, stride=1, dilation=4)
        with pytest.raises(RuntimeError):
            F.conv2d(dx, dw.double())
    finally:
        monkeypatch.undo()
        cuda_nn.install_fast_forms()


def test_conv_over_the_column_budget_is_chunked(monkeypatch, no_python_launchers):
    """A batch whose columns exceed COL_BUDGET goes to the general path,
    which chunks it (its launchers: here they raise)."""
    dx = ptcore.randn(4, 2, 6, 6).cuda()
    dw = ptcore.randn(3, 2, 3, 3).cuda()
    F.conv2d(dx, dw)
    monkeypatch.setattr(cuda_nn, "COL_BUDGET", 2 * 9 * 16 * 4 * 2)   # two samples' columns
    with pytest.raises(AssertionError, match="general path"):
        F.conv2d(dx, dw)


def test_conv_prim_rejects_inconsistent_operands():
    """conv_pool_fast.prim (reachable from Python) declines operands whose
    shapes do not agree, instead of launching over them."""
    x = ptcore.randn(2, 3, 6, 6).cuda()
    w = ptcore.randn(4, 3, 3, 3).cuda()
    F.conv2d(x, w)
    geo = (2, (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, (1, 4, 4))
    P = conv_pool_fast.prim
    assert P("fwd", x, w, None, geo, (2, 4, 4, 4), 1 << 28) is not None
    for args in [("fwd", x, w, None, geo, (2, 5, 4, 4)), ("fwd", x, w[:, :2].contiguous(), None, geo,
                                                          (2, 4, 4, 4)),
                 ("fwd", x, w, None, geo, (3, 4, 4, 4)), ("fwd", x, w, None, geo, (2, 4, 4)),
                 ("fwd", x, w, ptcore.zeros(5).cuda(), geo, (2, 4, 4, 4)),
                 ("bx", x, w, ptcore.zeros(3).cuda(), geo, (2, 3, 6, 6)),
                 ("xx", x, w, None, geo, (2, 4, 4, 4)),
                 ("fwd", x, w.double(), None, geo, (2, 4, 4, 4)),
                 ("fwd", x, w, None, (2, (0, 1, 1)) + geo[2:], (2, 4, 4, 4)),
                 ("fwd", x, w, None, (2, (1, 1, 1), (0, -1, 0)) + geo[3:], (2, 4, 4, 4)),
                 ("fwd", x, w, None, (3,) + geo[1:], (2, 4, 4, 4)),
                 ("fwd", x, w, None, geo[:4] + (2,) + geo[5:], (2, 4, 4, 4))]:
        assert P(*args, 1 << 28) is None, args[0]


# ---------------------------------------------------------------------------
# max pooling

POOLS = [
    (2, (4, 3, 12, 12), dict(kernel_size=2)),
    (2, (2, 3, 11, 9), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 2, 10, 10), dict(kernel_size=(3, 2), stride=(2, 3), dilation=(2, 1), ceil_mode=True)),
    (2, (3, 9, 8), dict(kernel_size=2, stride=[1, 2])),                     # unbatched
    (2, (1, 1, 5, 5), dict(kernel_size=5, stride=None, padding=2)),
    (3, (2, 2, 6, 5, 7), dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1))),
]


@pytest.mark.parametrize("return_indices", [False, True])
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("nd,xs,kw", POOLS)
def test_max_pool_from_c(general, no_python_launchers, nd, xs, kw, dtype, return_indices):
    pool = F.max_pool2d if nd == 2 else F.max_pool3d
    a = _arr(xs, 11)
    a[..., 0] = np.nan if dtype is ptcore.float64 else a[..., 0]      # NaN wins, as the CPU's
    x, dx = _pair(a, dtype)
    with general:
        pool(dx, **kw)
    dx.requires_grad_()
    r = pool(dx, return_indices=return_indices, **kw)
    y, ind = r if return_indices else (r, None)
    assert y.grad_fn.name() == f"MaxPool{nd}DWithIndicesBackward0"
    g = ptcore.from_numpy(_arr(tuple(y.shape), 12)).to(dtype).cuda()
    (gx,) = ptcore.autograd.grad(y, dx, g)
    xc = x.clone().requires_grad_()
    rc = F.max_pool2d(xc, return_indices=True, **kw) if nd == 2 else \
        F.max_pool3d(xc, return_indices=True, **kw)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), rc[0].detach().numpy())
    if return_indices:
        assert ind.dtype is ptcore.int64 and ind.grad_fn is None and not ind.requires_grad
        np.testing.assert_array_equal(ind.cpu().numpy(), rc[1].numpy())
    (gc,) = ptcore.autograd.grad(rc[0], xc, g.cpu())
    np.testing.assert_array_equal(gx.cpu().numpy(), gc.numpy())


@pytest.mark.parametrize("nd,xs,kw", POOLS)
def test_max_pool_bits_and_graph_equal_the_general_path(nd, xs, kw):
    pool = F.max_pool2d if nd == 2 else F.max_pool3d
    dx = ptcore.from_numpy(_arr(xs, 13)).float().cuda().requires_grad_()

    def run():
        y, ind = pool(dx, return_indices=True, **kw)
        g = ptcore.ones_like(y)
        names = [y.grad_fn.name()] + [f[0].name() for f in y.grad_fn.next_functions if f[0]]
        return [y.detach(), ind, ptcore.autograd.grad(y, dx, g)[0]], names
    with _GeneralPath():
        want, want_names = run()
    got, names = run()
    assert names == want_names
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.stride() == b.stride() and a.dtype is b.dtype
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())


def test_max_pool_double_backward():
    x = ptcore.from_numpy(_arr((2, 2, 6, 6), 14)).cuda().requires_grad_()

    def second():
        y = F.max_pool2d(x, 2)
        (gx,) = ptcore.autograd.grad((y * y).sum(), x, create_graph=True)
        return ptcore.autograd.grad((gx * gx).sum(), x)[0]
    with _GeneralPath():
        want = second()
    np.testing.assert_array_equal(second().cpu().numpy(), want.cpu().numpy())


def test_max_pool_declines_and_errors(monkeypatch):
    x = ptcore.randn(2, 3, 8, 8)
    dx = x.cuda()
    F.max_pool2d(dx, 2)
    calls = _spy(monkeypatch, "max_pool")
    try:
        for f in (lambda t: t.contiguous(memory_format=ptcore.channels_last),
                  lambda t: t.transpose(2, 3), lambda t: t.half(), lambda t: t[:, :, ::2]):
            del calls[:]
            got = F.max_pool2d(f(dx), 2)
            assert calls == [False]
            want = F.max_pool2d(f(x), 2) if f(x).dtype is not ptcore.float16 else \
                F.max_pool2d(f(x).float(), 2).half()
            assert got.stride() == want.stride()
            np.testing.assert_array_equal(got.cpu().float().numpy(), want.float().numpy())
        del calls[:]
        with pytest.raises(TypeError, match="must be bool"):
            F.max_pool2d(dx, 2, ceil_mode=1)                # not a bool: the general path's error
        assert calls == [False]
        for bad in (dict(kernel_size=0), dict(kernel_size=2, padding=2), dict(kernel_size=2, stride=0),
                    dict(kernel_size=(2, 2, 2)), dict(kernel_size=20),
                    dict(kernel_size=2, dilation=0), dict(kernel_size=2, bogus=1),
                    dict(kernel_size=2**40)):
            err = TypeError if "bogus" in bad else RuntimeError
            with pytest.raises(err) as e_cuda:
                F.max_pool2d(dx, **bad)
            with pytest.raises(err) as e_cpu:
                F.max_pool2d(x, **bad)
            assert str(e_cuda.value) == str(e_cpu.value), bad
    finally:
        monkeypatch.undo()
        cuda_nn.install_fast_forms()


def test_max_pool_window_in_the_padding_backward():
    """A window wholly in the padding (dilation steps it past the row): the
    forward from C, the backward by the general path's scatter."""
    x = ptcore.randn(1, 1, 4, 4)
    kw = dict(kernel_size=2, padding=1, dilation=3, stride=1)
    dx = x.cuda().requires_grad_()
    xc = x.clone().requires_grad_()
    F.max_pool2d(dx.detach(), **kw)
    y, yc = F.max_pool2d(dx, **kw), F.max_pool2d(xc, **kw)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), yc.detach().numpy())
    g = ptcore.randn(*y.shape)
    np.testing.assert_array_equal(ptcore.autograd.grad(y, dx, g.cuda())[0].cpu().numpy(),
                                  ptcore.autograd.grad(yc, xc, g)[0].numpy())


def test_max_pool_backward_rejects_foreign_entries():
    x = ptcore.randn(2, 3, 8, 8).cuda()
    F.max_pool2d(x, 2)                  # (the general path loads the kernels)
    y, ind = F.max_pool2d(x, 2, return_indices=True)
    B = conv_pool_fast.max_pool_backward
    entry = next(e for e in cuda_nn._MAX_POOL_FAST.values() if e[5][0] == (1, 8, 8)
                 and e[4] == (4, 4))
    assert B(y, ind, (2, 3, 8, 8), 2, entry) is not None
    for args in [(y, ind, (2, 3, 9, 8), 2, entry), (y, ind, (2, 4, 8, 8), 2, entry),
                 (y, ind.int(), (2, 3, 8, 8), 2, entry), (y, ind[:1], (2, 3, 8, 8), 2, entry),
                 (y, ind, (2, 3, 8, 8), 3, entry), (y, ind, (2, 3, 8, 8), 2, entry[:5]),
                 (y, ind, (2, 3, 8, 8), 2, entry[:1] + (entry[1][:3],) + entry[2:]),
                 (y, ind, (2, 3, 8, 8), 2, entry[:2] + (b"\0" * 80,) + entry[3:]),
                 (y.half(), ind, (2, 3, 8, 8), 2, entry), (y.transpose(2, 3), ind, (2, 3, 8, 8), 2, entry)]:
        assert B(*args) is None
