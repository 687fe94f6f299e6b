"""Sampling ops with tensor parameters that require grad are in the graph,
as torch: normal (NormalBackward1/2/3) and bernoulli(p) (BernoulliBackward0)
pass zero gradients; bernoulli(x, p=float) raises at backward."""
import pytest

import ptcore

torch = pytest.importorskip("torch")

CASES = {
    "normal_tensor_mean": lambda L, m: L.normal(m, 1.0),
    "normal_tensor_std": lambda L, m: L.normal(0.0, m),
    "normal_both": lambda L, m: L.normal(m, m),
    "normal_broadcast": lambda L, m: L.normal(m[:1], L.ones(3, 1)),
    "bernoulli_probs": lambda L, m: L.bernoulli(m.sigmoid()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_sampling_op_node_and_zero_gradient(case):
    got = {}
    for L in (torch, ptcore):
        m = L.tensor([0.5, 1.0], requires_grad=True)
        r = CASES[case](L, m)
        assert r.requires_grad
        name = r.grad_fn.name()
        (r * 3).sum().backward()
        got[L] = (name, m.grad.tolist())
        with L.no_grad():
            assert not CASES[case](L, m).requires_grad
    assert got[ptcore] == got[torch]


def test_bernoulli_scalar_p_backward_raises():
    for L in (torch, ptcore):
        m = L.tensor([0.5, 1.0], requires_grad=True)
        r = L.bernoulli(m, 0.3)
        assert r.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not implemented"):
            r.sum().backward()
