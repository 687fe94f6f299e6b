"""AccumulateGrad takes a first gradient that only the engine references as
``.grad`` without copying it (as PyTorch's use_count() check), including a
view that covers a fresh buffer nothing else uses (Linear's transposed weight
gradient); it copies whenever anything else can see that memory: the
caller's gradient, a hook's saved or returned tensor, a retained non-leaf
gradient, another gradient."""
import numpy as np

import ptcore


def _not_aliased(a, b):
    return a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()


def test_linear_parameter_grads_are_plain_tensors():
    lin = ptcore.nn.Linear(8, 5)
    x = ptcore.randn(4, 8)
    lin(x).sum().backward()
    for p in lin.parameters():
        assert p.grad._base is None and p.grad.is_contiguous()
    want = x.sum(0).numpy()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(want, (5, 1)), rtol=1e-6)
    lin(x).sum().backward()                          # accumulation into the taken buffer
    np.testing.assert_allclose(lin.weight.grad.numpy(), 2 * np.tile(want, (5, 1)), rtol=1e-6)


def test_caller_gradient_is_copied():
    x = ptcore.randn(3, 4, requires_grad=True)
    G = ptcore.ones(3, 4)
    x.backward(G)
    assert _not_aliased(x.grad, G)
    y = ptcore.randn(12, requires_grad=True)
    G2 = ptcore.ones(3, 4)
    y.view(3, 4).backward(G2)                        # the view's backward reshapes G2
    assert _not_aliased(y.grad, G2)
    G2.add_(5)
    assert (y.grad.numpy() == 1).all()


def test_hook_saved_or_returned_tensors_are_copied():
    x = ptcore.randn(5, requires_grad=True)
    saved = []
    x.register_hook(lambda g: saved.append(g))
    (x * 3).sum().backward()
    assert _not_aliased(x.grad, saved[0])
    x.grad.add_(1)
    assert (saved[0].numpy() == 3).all()

    z = ptcore.randn(5, requires_grad=True)
    kept = []

    def h(g):
        r = g * 2
        kept.append(r)
        return r
    z.register_hook(h)
    (z * 3).sum().backward()
    assert _not_aliased(z.grad, kept[0])
    z.grad.zero_()
    assert (kept[0].numpy() == 6).all()


def test_retained_non_leaf_grad_is_separate():
    x = ptcore.randn(4, requires_grad=True)
    y = x * 1
    y.retain_grad()
    y.backward(ptcore.full((4,), 2.0))
    assert _not_aliased(x.grad, y.grad)
    y.grad.add_(1)
    assert (x.grad.numpy() == 2).all()


def test_backward_inputs_path():
    x = ptcore.randn(3, requires_grad=True)
    w = ptcore.randn(3, requires_grad=True)
    loss = (x * w).sum()
    ptcore.autograd.backward(loss, inputs=[x])
    np.testing.assert_array_equal(x.grad.numpy(), w.detach().numpy())
    assert w.grad is None


def test_shared_gradient_goes_to_two_leaves():
    a = ptcore.randn(4, requires_grad=True)
    b = ptcore.randn(4, requires_grad=True)
    (a + b).sum().backward()            # add's backward hands the same tensor to both
    assert _not_aliased(a.grad, b.grad)
    a.grad.add_(1)
    assert (b.grad.numpy() == 1).all()


def test_create_graph_first_gradient_is_a_copy_with_the_leafs_strides_as_torch():
    # with create_graph, torch's AccumulateGrad copies the first gradient into a tensor with
    # the leaf's strides (clone_obey_contract, a CopyBackwards node): never the engine's
    # buffer or a view of it, so ``p.grad.detach_()`` (torch-optimizer's Adahessian) works
    import warnings

    import pytest
    torch = pytest.importorskip("torch")

    def run(L):
        lin = L.nn.Linear(3, 2)
        with L.no_grad():
            lin.weight.copy_(L.tensor(np.arange(6.0).reshape(2, 3) / 7))
            lin.bias.fill_(0.5)
        w = L.tensor(np.arange(12.0).reshape(3, 4)).t().requires_grad_()
        x = L.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=L.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # (create_graph's reference-cycle warning)
            (lin(x).pow(2).sum() + (w * w).sum()).backward(create_graph=True)
        out = []
        for p in (lin.weight, lin.bias, w):
            g = p.grad
            out.append((g._is_view(), g.stride(), g.grad_fn.name().split("::")[-1],
                        g.detach().numpy().tolist()))
            second = L.autograd.grad(g.sum(), p, retain_graph=True)[0]
            out.append(second.numpy().tolist())
            g.detach_()
            assert g.grad_fn is None and not g.requires_grad
        return out
    got, want = run(ptcore), run(torch)
    assert [o[:3] for o in got[::2]] == [o[:3] for o in want[::2]]
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a[-1] if isinstance(a, tuple) else a),
                                   np.asarray(b[-1] if isinstance(b, tuple) else b), rtol=1e-6)
