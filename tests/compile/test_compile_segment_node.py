"""A compiled training segment's autograd node (``ptcore._inductor.aot.
apply_segment``, compiled in ``_segment_fast``): connected directly when its
outputs are new tensors, through ``autograd.function.connect`` when one is an
input or a view.  Each case is compared with the eager module: outputs,
``grad_fn`` presence, gradients of parameters, of an input that requires grad
and of the leaf under a non-leaf input, and against torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


class Net(ptcore.nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.lin = ptcore.nn.Linear(5, 4)
        self.mode = mode

    def forward(self, x):
        y = self.lin(x).tanh()
        if self.mode == "input":             # an input returned as it is
            return y, x
        if self.mode == "same":              # an op returning its input itself
            return y, x.contiguous()
        if self.mode == "view":              # a view of an intermediate
            return y.view(-1)
        if self.mode == "two":               # two new outputs, one not differentiable
            return y * 2, (y > 0).sum()
        return y


def _grads(m, x):
    return [p.grad.numpy().copy() for p in m.parameters()] + \
        ([x.grad.numpy().copy()] if x.grad is not None else [])


@pytest.mark.parametrize("mode", ["plain", "input", "same", "view", "two"])
@pytest.mark.parametrize("x_kind", ["data", "leaf", "nonleaf"])
def test_segment_node_outputs_and_gradients_match_eager(mode, x_kind):
    ptcore.manual_seed(0)
    m = Net(mode)
    cm = ptcore.compile(m)
    x0 = ptcore.randn(3, 5, requires_grad=x_kind != "data")
    for _ in range(3):
        results = []
        for f in (cm, m):
            m.zero_grad()
            x0.grad = None
            x = x0 * 1.5 if x_kind == "nonleaf" else x0
            out = f(x)
            outs = out if isinstance(out, tuple) else (out,)
            loss = outs[0].sum() * 3
            # (the input itself keeps its history: no node of the segment)
            assert x0.grad_fn is None and x0.requires_grad is (x_kind != "data")
            if mode in ("input", "same") and x.requires_grad:
                loss = loss + (outs[1] ** 2).sum()
            loss.backward()
            results.append(([o.detach().numpy().copy() for o in outs],
                            [o.grad_fn is not None for o in outs], _grads(m, x0)))
        (got_o, got_fn, got_g), (want_o, want_fn, want_g) = results
        for a, b in zip(got_o, want_o):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        assert got_fn == want_fn
        assert len(got_g) == len(want_g)
        for a, b in zip(got_g, want_g):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert cm.dynamo_ctx.entries[0].program is not None


def test_segment_node_gradient_matches_torch():
    ptcore.manual_seed(0)
    m = Net("two")
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 5, requires_grad=True)
    cm(x)                                    # (captured: the eager result)
    for _ in range(2):
        m.zero_grad()
        x.grad = None
        y, n = cm(x)
        assert y.grad_fn is not None and y.grad_fn.name() == "CompiledFunctionBackward"
        assert not n.requires_grad
        y.sum().backward()
    xt = torch.from_numpy(x.detach().numpy().copy()).requires_grad_()
    wt = torch.from_numpy(m.lin.weight.detach().numpy().copy()).requires_grad_()
    bt = torch.from_numpy(m.lin.bias.detach().numpy().copy()).requires_grad_()
    (torch.tanh(xt @ wt.T + bt) * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.lin.weight.grad.numpy(), wt.grad.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(m.lin.bias.grad.numpy(), bt.grad.numpy(), rtol=1e-5, atol=1e-6)
