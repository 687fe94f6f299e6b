"""unbind records one UnbindBackward0 node for all its slices, as torch's
(it recorded a view node per slice, whose backward scattered each slice's
gradient into a zero copy of the input: a 32-slice unbind/stack round trip
took 6x torch's time); the backward stacks the slices' gradients."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    out = []
    for L in (torch, ptcore):
        L.manual_seed(0)
        out.append(fn(L))
    return out


def test_one_node_with_output_numbers():
    for L in (torch, ptcore):
        x = L.randn(3, 4, requires_grad=True)
        u = x.unbind(1)
        assert type(u[0].grad_fn).__name__ == "UnbindBackward0"
        assert all(v.grad_fn is u[0].grad_fn for v in u)
        assert [v.output_nr for v in u] == [0, 1, 2, 3]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradients_some_slices_unused(dim):
    def run(L):
        x = L.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=L.float64, requires_grad=True)
        u = x.unbind(dim)
        loss = (u[0] * u[0]).sum() + 3 * u[-1].sum()
        (g,) = L.autograd.grad(loss, x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)
        return g.detach().tolist(), gg.tolist()
    a, b = _both(run)
    assert a == b


def test_slices_refuse_in_place_and_stack_round_trip():
    for L in (torch, ptcore):
        x = L.randn(3, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Output 0 of Unbind"):
            x.unbind(1)[0].mul_(2)
    a, b = _both(lambda L: (lambda x: (L.stack(x.unbind(0), 1).pow(2).sum().backward(), x.grad)[1])(
        L.arange(12.0, dtype=L.float64).view(4, 3).requires_grad_()).tolist())
    assert a == b


def test_single_slice_and_no_grad():
    for L in (torch, ptcore):
        x = L.randn(1, 3, requires_grad=True)
        (u,) = x.unbind(0)
        u.sum().backward()
        assert x.grad.tolist() == [[1.0, 1.0, 1.0]]
        with L.no_grad():
            assert all(v.grad_fn is None for v in x.unbind(1))
