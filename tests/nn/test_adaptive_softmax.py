"""nn.AdaptiveLogSoftmaxWithLoss against torch 2.13 (same weights: output, loss, grads,
log_prob, predict, errors)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn

torch = pytest.importorskip("torch")


def _pair(in_features=8, n_classes=20, cutoffs=(4, 10), div_value=2.0, head_bias=False):
    torch.manual_seed(0)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                            div_value=div_value, head_bias=head_bias)
    p = pnn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                       div_value=div_value, head_bias=head_bias)
    assert list(p.state_dict()) == list(t.state_dict())
    p.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return t, p


@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("div_value", [2.0, 1.5])
def test_forward_loss_and_grads(head_bias, div_value):
    t, p = _pair(div_value=div_value, head_bias=head_bias)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((13, 8)).astype(np.float32)
    y = rng.integers(0, 20, 13)
    tx, px = torch.tensor(x, requires_grad=True), ptcore.tensor(x, requires_grad=True)
    to, po = t(tx, torch.tensor(y)), p(px, ptcore.tensor(y))
    np.testing.assert_allclose(po.output.detach().numpy(), to.output.detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(po.loss.item(), to.loss.item(), rtol=1e-5)
    to.loss.backward()
    po.loss.backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (n, tp), pp in zip(t.named_parameters(), p.parameters()):
        np.testing.assert_allclose(pp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=n)


def test_log_prob_predict_unbatched():
    t, p = _pair()
    x = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    np.testing.assert_allclose(p.log_prob(ptcore.tensor(x)).detach().numpy(),
                               t.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_array_equal(p.predict(ptcore.tensor(x)).numpy(),
                                  t.predict(torch.tensor(x)).numpy())
    to = t(torch.tensor(x[0]), torch.tensor(3))
    po = p(ptcore.tensor(x[0]), ptcore.tensor(3))
    assert tuple(po.output.shape) == tuple(to.output.shape) == ()
    np.testing.assert_allclose(po.loss.item(), to.loss.item(), rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError):
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [10, 4])
    with pytest.raises(ValueError, match="cutoffs"):
        pnn.AdaptiveLogSoftmaxWithLoss(8, 20, [10, 4])
    t, p = _pair()
    with pytest.raises(RuntimeError):
        t(torch.zeros(3, 8), torch.tensor([0, 1, 25]))
    with pytest.raises(RuntimeError, match="Target values should be in"):
        p(ptcore.zeros(3, 8), ptcore.tensor([0, 1, 25]))
    with pytest.raises(RuntimeError):
        p(ptcore.zeros(3, 8), ptcore.tensor([0, 1]))
    from ptcore.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
    assert AdaptiveLogSoftmaxWithLoss is pnn.AdaptiveLogSoftmaxWithLoss
