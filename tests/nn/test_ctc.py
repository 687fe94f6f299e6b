"""ctc_loss / CTCLoss against PyTorch."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

from threads_util import kernel_threads

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _pt(t):
    return ptcore.from_numpy(t.detach().cpu().numpy().copy())


def _close(a, b, rtol, atol):
    a = a.detach().numpy() if isinstance(a, ptcore.Tensor) else np.asarray(a)
    b = b.detach().cpu().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _autograd_works():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


needs_autograd = pytest.mark.skipif(not _autograd_works(), reason="autograd not available")


def _problem(dt, seed=0, T=12, N=4, C=6, S=5, blank=0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(T, N, C, generator=g, dtype=getattr(torch, dt))
    lp = logits.log_softmax(-1)
    labels = [c for c in range(C) if c != blank]
    tg = torch.tensor(labels)[torch.randint(0, len(labels), (N, S), generator=g)]
    tg[0, 1] = tg[0, 0]                      # a repeated label (needs a blank between)
    il = [12, 10, 3, 7][:N]
    tl = [5, 3, 2, 0][:N]
    return logits, lp, tg, il, tl


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", [("float32", 1e-5, 1e-5), ("float64", 1e-10, 1e-10)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("targets_layout", ["padded", "concatenated"])
@pytest.mark.parametrize("lengths_as", ["tuple", "tensor"])
def test_ctc_forward(dt, rtol, atol, reduction, zero_infinity, targets_layout, lengths_as):
    _, lp, tg, il, tl = _problem(dt)
    il = list(il)
    il[2] = 1   # impossible alignment (2 labels in 1 frame) -> inf
    if targets_layout == "concatenated":
        tg = torch.cat([tg[n, :tl[n]] for n in range(len(tl))])
    if lengths_as == "tensor":
        til, ttl = torch.tensor(il), torch.tensor(tl)
        pil, ptl = _pt(til), _pt(ttl)
    else:
        til, ttl = tuple(il), tuple(tl)
        pil, ptl = til, ttl
    exp = torch.nn.functional.ctc_loss(lp, tg, til, ttl, reduction=reduction,
                                       zero_infinity=zero_infinity)
    got = F.ctc_loss(_pt(lp), _pt(tg), pil, ptl, reduction=reduction,
                     zero_infinity=zero_infinity)
    assert got.dtype == getattr(ptcore, dt)
    _close(got, exp, rtol, atol)
    mod = nn.CTCLoss(reduction=reduction, zero_infinity=zero_infinity)
    _close(mod(_pt(lp), _pt(tg), pil, ptl), exp, rtol, atol)


@needs_torch
@pytest.mark.parametrize("blank", [0, 5])
def test_ctc_blank_and_unbatched(blank):
    _, lp, tg, il, tl = _problem("float64", seed=1, blank=blank)
    exp = torch.nn.functional.ctc_loss(lp, tg, il, tl, blank=blank, reduction="none")
    got = F.ctc_loss(_pt(lp), _pt(tg), il, tl, blank=blank, reduction="none")
    _close(got, exp, 1e-10, 1e-10)
    for red in ("none", "mean", "sum"):
        exp = torch.nn.functional.ctc_loss(lp[:, 0], tg[0], torch.tensor(il[0]),
                                           torch.tensor(tl[0]), blank=blank, reduction=red)
        got = F.ctc_loss(_pt(lp[:, 0]), _pt(tg[0]), ptcore.tensor(il[0]), ptcore.tensor(tl[0]),
                         blank=blank, reduction=red)
        _close(got, exp, 1e-10, 1e-10)


@needs_torch
def test_ctc_edge_lengths():
    _, lp, tg, _, _ = _problem("float64", N=2, T=5, S=2)
    for il, tl in [((5, 5), (2, 2)), ((0, 5), (0, 2)), ((0, 5), (1, 2)), ((1, 5), (0, 2))]:
        exp = torch.nn.functional.ctc_loss(lp, tg, il, tl, reduction="none")
        got = F.ctc_loss(_pt(lp), _pt(tg), il, tl, reduction="none")
        _close(got, exp, 1e-10, 1e-10)


def test_ctc_errors():
    lp = ptcore.randn(5, 2, 4).log_softmax(-1)
    t = ptcore.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 5"):
        F.ctc_loss(lp, t, (6, 5), (2, 2))
    with pytest.raises(RuntimeError, match="size at least 3"):
        F.ctc_loss(lp, t, (5, 5), (3, 2))
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, t, (5,), (2, 2))
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, t, (5, 5), (2, 2), blank=4)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.ctc_loss(lp, t, (5, 5), (2, 2), reduction="x")
    with pytest.raises(RuntimeError, match="size 3 at dimension 0"):
        F.ctc_loss(lp, ptcore.tensor([1, 2, 1, 1]), (5, 5), (2, 1))
    with pytest.raises(RuntimeError, match="target labels must be in"):
        F.ctc_loss(lp, ptcore.tensor([[1, 7], [1, 1]]), (5, 5), (2, 2))


@needs_torch
@needs_autograd
@pytest.mark.parametrize("dt,tol", [("float32", 1e-5), ("float64", 1e-10)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_gradients(dt, tol, reduction, zero_infinity):
    logits, _, tg, il, tl = _problem(dt, seed=2)
    if zero_infinity:
        il = list(il)
        il[2] = 1
    x = logits.clone().requires_grad_()
    lp = x.log_softmax(-1)
    lp.retain_grad()
    loss = torch.nn.functional.ctc_loss(lp, tg, il, tl, reduction=reduction,
                                        zero_infinity=zero_infinity)
    w = torch.linspace(0.5, 1.5, len(il), dtype=x.dtype)
    (loss * w).sum().backward() if reduction == "none" else loss.backward()
    px = _pt(logits).requires_grad_()
    plp = px.log_softmax(-1)
    plp.retain_grad()
    ploss = F.ctc_loss(plp, _pt(tg), il, tl, reduction=reduction, zero_infinity=zero_infinity)
    (ploss * _pt(w)).sum().backward() if reduction == "none" else ploss.backward()
    _close(plp.grad, lp.grad, tol, tol)
    _close(px.grad, x.grad, tol, tol)


# ---------------------------------------------------------------------------
# the CPU kernels (ptcore._ops.kernels._ctc)
# ---------------------------------------------------------------------------
def _crnn_case(dt, T, B, C, S, seed):
    rng = np.random.default_rng(seed)
    lp = np.log(rng.dirichlet(np.ones(C), (T, B))).astype(dt)
    tl = rng.integers(0, S + 1, B)
    tl[0] = S
    il = rng.integers(max(1, T // 2), T + 1, B)
    il[-1] = T
    il[1] = 1                                   # an impossible alignment (infinite loss)
    tg = rng.integers(1, C, (B, S))
    tg[0, 1] = tg[0, 0]                         # a repeated label
    return lp, tg, il, tl


@needs_torch
@needs_autograd
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("T,B,C,S", [(30, 8, 20, 10), (100, 16, 40, 30), (5, 3, 4, 3)])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("form", ["padded", "concatenated"])
def test_ctc_kernel_matches_torch_bits(dt, T, B, C, S, zero_infinity, form):
    """The kernels run ATen's loops in its order: per-element losses and the
    gradient are torch's bits (both call the C library's exp and log)."""
    lp, tg, il, tl = _crnn_case(dt, T, B, C, S, T + B)
    if form == "concatenated":
        tg = np.concatenate([tg[b, :tl[b]] for b in range(B)])
    res = []
    for lib in (ptcore, torch):
        x = lib.from_numpy(lp).requires_grad_()
        loss = lib.nn.functional.ctc_loss(x, lib.from_numpy(tg), lib.from_numpy(il),
                                         lib.from_numpy(tl), reduction="none",
                                         zero_infinity=zero_infinity)
        loss.backward(lib.from_numpy(np.linspace(0.5, 2, B).astype(dt)))
        res.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


@needs_autograd
def test_ctc_kernel_thread_count_and_label_check():
    """Batch elements are split among threads whole (the same bits at 1 and 3
    threads); labels outside [0, C) raise RuntimeError before any kernel reads."""
    lp, tg, il, tl = _crnn_case(np.float32, 40, 6, 12, 8, 1)
    res = []
    for n in (1, 3):
        with kernel_threads(n):
            x = ptcore.from_numpy(lp).requires_grad_()
            loss = F.ctc_loss(x, ptcore.from_numpy(tg), tuple(il), tuple(tl))
            loss.backward()
            res.append((loss.item(), x.grad.numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_array_equal(res[0][1], res[1][1])
    bad = tg.copy()
    bad[0, 0] = 12
    with pytest.raises(RuntimeError, match="target labels"):
        F.ctc_loss(ptcore.from_numpy(lp), ptcore.from_numpy(bad), tuple(il), tuple(tl))
