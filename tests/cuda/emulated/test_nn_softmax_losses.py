"""softmax/log_softmax and the losses on the emulated CUDA device against the
CPU run: forward values and gradients, every reduction, errors."""
import pytest

import ptcore
import ptcore.nn.functional as F
from nn_device_compare import check, close, rand

FLOATS = [ptcore.float32, ptcore.float64]


@pytest.mark.parametrize("dtype", FLOATS + [ptcore.float16])
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family_any_dim(fn, dim, dtype):
    check(fn, rand((3, 4, 5), dtype), dim, grad=(0,) if dtype != ptcore.float16 else ())


def test_softmax_dtype_argument_and_errors():
    x = rand((2, 3))
    d, = check(lambda t: ptcore.softmax(t, 1, dtype=ptcore.float64), x)[0]
    assert d.dtype == ptcore.float64
    check(lambda t: t.log_softmax(0), rand((4,)))
    check(lambda t: ptcore.softmax(t, 0), rand(()))
    xi = ptcore.ones(3, dtype=ptcore.int64, device="cuda")
    with pytest.raises(NotImplementedError, match="Long"):
        ptcore.softmax(xi, 0)
    with pytest.raises(IndexError):
        ptcore.softmax(x.cuda(), 2)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_entropy_class_indices(reduction, dtype):
    t = ptcore.tensor([0, 4, -100, 2, 2, 1])
    check(F.cross_entropy, rand((6, 5), dtype), t, reduction=reduction)
    w = rand((5,), dtype, seed=3).abs()
    check(F.cross_entropy, rand((6, 5), dtype), t, w, reduction=reduction)
    check(F.cross_entropy, rand((6, 5), dtype), ptcore.tensor([0, 4, 3, 2, 2, 1]), w,
          ignore_index=2, reduction=reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_label_smoothing(reduction):
    t = ptcore.tensor([0, 4, 3, 2, 2, 1])
    check(F.cross_entropy, rand((6, 5)), t, label_smoothing=0.1, reduction=reduction)
    w = rand((5,), seed=3).abs()
    check(F.cross_entropy, rand((6, 5)), t, w, label_smoothing=0.2, ignore_index=2,
          reduction=reduction)


def test_cross_entropy_probabilities_and_spatial():
    p = ptcore.softmax(rand((6, 5), seed=1), 1)
    check(F.cross_entropy, rand((6, 5)), p, grad=(0, 1))
    check(F.cross_entropy, rand((6, 5)), p, rand((5,), seed=2).abs(), label_smoothing=0.1)
    t = ptcore.randint(0, 3, (2, 4, 5), generator=ptcore.Generator().manual_seed(0))
    check(F.cross_entropy, rand((2, 3, 4, 5)), t)
    check(F.cross_entropy, rand((5,)), ptcore.tensor(3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    lp = F.log_softmax(rand((4, 3)), 1)
    check(F.nll_loss, lp, ptcore.tensor([0, 1, 2, 1]), reduction=reduction)
    check(F.nll_loss, lp, ptcore.tensor([0, 1, 2, 1]), rand((3,), seed=5).abs(), ignore_index=1,
          reduction=reduction)
    t = ptcore.randint(0, 3, (2, 4, 5), generator=ptcore.Generator().manual_seed(1))
    check(F.nll_loss, rand((2, 3, 4, 5)), t, reduction=reduction)
    check(F.nll_loss, lp, ptcore.tensor([0, 1, 2, 1], dtype=ptcore.uint8), reduction=reduction)


def test_nll_loss_all_ignored_and_errors():
    lp = rand((3, 4))
    out, grads = check(F.nll_loss, lp, ptcore.tensor([-100, -100, -100]))
    assert out[0].isnan().item()
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(lp.cuda(), ptcore.tensor([0, 7, 1]).cuda())
    with pytest.raises(ValueError, match="batch_size"):
        F.nll_loss(lp.cuda(), ptcore.tensor([0, 1]).cuda())
    with pytest.raises(RuntimeError, match="same device"):
        F.cross_entropy(lp.cuda(), ptcore.tensor([0, 1, 2]))


def test_cross_entropy_matches_torch():
    torch = pytest.importorskip("torch")
    x = rand((6, 5))
    t = ptcore.tensor([0, 4, 3, 2, 2, 1])
    xc = x.cuda().requires_grad_()
    loss = F.cross_entropy(xc, t.cuda(), label_smoothing=0.1)
    loss.backward()
    tx = torch.tensor(x.numpy(), requires_grad=True)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(t.numpy()), label_smoothing=0.1)
    tl.backward()
    assert abs(loss.item() - tl.item()) < 1e-6
    assert ptcore.allclose(xc.grad.cpu(), ptcore.tensor(tx.grad.numpy()), atol=1e-6)
    assert loss.grad_fn is not None


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_regression_and_binary_losses(reduction, dtype):
    a, b = rand((4, 3), dtype), rand((4, 3), dtype, seed=1)
    check(F.mse_loss, a, b, grad=(0, 1), reduction=reduction)
    check(F.l1_loss, a, b, grad=(0, 1), reduction=reduction)
    p, q = ptcore.sigmoid(a), ptcore.sigmoid(b)
    check(F.binary_cross_entropy, p, q, grad=(0, 1), reduction=reduction)
    check(F.binary_cross_entropy, p, q, rand((4, 3), dtype, seed=2).abs(), reduction=reduction)
    check(F.binary_cross_entropy_with_logits, a, q, grad=(0, 1), reduction=reduction)
    check(F.binary_cross_entropy_with_logits, a, q, rand((3,), dtype, seed=4).abs(),
          reduction=reduction)


def test_bce_with_logits_pos_weight_and_range_error():
    a, q = rand((4, 3)), ptcore.sigmoid(rand((4, 3), seed=1))
    pw = rand((3,), seed=6).abs()
    check(lambda x, t, w: F.binary_cross_entropy_with_logits(x, t, pos_weight=w), a, q, pw,
          grad=(0, 1))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(a.cuda(), q.cuda())
    close(F.mse_loss(a.cuda(), q.cuda()).cpu(), F.mse_loss(a, q))


@pytest.mark.parametrize("log", [False, True])
def test_one_pass_softmax_backward_kernel(log):
    from ptcore.cuda.ops import nn as _launch_nn
    y = (F.log_softmax if log else F.softmax)(rand((5, 7)), -1)
    g = rand((5, 7), seed=3)
    want = g - y.exp() * g.sum(-1, keepdim=True) if log else y * (g - (g * y).sum(-1, keepdim=True))
    got = _launch_nn.softmax_backward(g.cuda(), y.cuda(), -1, log)
    close(got.cpu(), want)
    assert _launch_nn.softmax_backward(g.cuda().t(), y.cuda().t(), -1, log) is None
