"""Training a ptcore model, its compiled copy and the same torch model side by
side (the compiled-training comparisons of tests/compile)."""


def copy_params(src, dst):
    """``dst``'s parameters (a torch module) set to ``src``'s (a ptcore module
    of the same structure), through NumPy, in ``parameters()`` order."""
    import torch
    with torch.no_grad():
        for p, q in zip(src.parameters(), dst.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))


def train_sgd(model, fn, xs, ys, lib):
    """Steps of SGD (lr 0.05, momentum 0.9) on cross-entropy of ``fn(x)``
    (its last dim the classes; any leading dims flattened, as ``y``'s) over
    the batches ``xs``, ``ys``: ``(losses, the last step's gradients)``."""
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, grads = [], []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        out = fn(x)
        loss = lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        losses.append(loss.item())
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return losses, grads


def assert_same_bits(eager, compiled, model_e, model_c):
    """The ``(losses, gradients)`` of two :func:`train_sgd` runs, and the two
    models' parameters after them, equal bit for bit."""
    import ptcore
    assert compiled[0] == eager[0]
    for a, b in zip(compiled[1], eager[1]):
        assert ptcore.equal(a, b)
    for a, b in zip(model_c.parameters(), model_e.parameters()):
        assert ptcore.equal(a.detach(), b.detach())
