"""ctc_loss / CTCLoss against PyTorch."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

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
