"""Evaluation-mode batch norm and group norm as one autograd node each, against PyTorch:
``NativeBatchNormBackward0`` / ``NativeGroupNormBackward0`` whose next functions are the
input's and the parameters' nodes (torch-pruning's dependency graph walks from a layer's
output to the layer before it), with torch's outputs, gradients and gradients of gradients,
with and without affine parameters, and channels-last inputs kept channels-last."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _node_names(y):
    return type(y.grad_fn).__name__, [type(f).__name__ if f is not None else None
                                      for f, _ in y.grad_fn.next_functions][:3]


def _batch_norm_eval(lib, h, w, b, rng_stats):
    rm, rv = rng_stats
    return lib.nn.functional.batch_norm(h, lib.from_numpy(rm.copy()), lib.from_numpy(rv.copy()),
                                        w, b, training=False, eps=1e-3)


def _group_norm(lib, h, w, b, rng_stats):
    return lib.nn.functional.group_norm(h, 2, w, b, eps=1e-3)


def _check(norm, shape, affine):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    C = shape[1]
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    stats = (rng.standard_normal(C), rng.random(C) + 0.5)
    g = rng.standard_normal(shape)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_() if affine != "none" else None
        bt = lib.from_numpy(b.copy()).requires_grad_() if affine == "both" else None
        y = norm(lib, xt * 2.0, wt, bt, stats)
        params = [t for t in (xt, wt, bt) if t is not None]
        grads = lib.autograd.grad(y, params, lib.from_numpy(g), create_graph=True)
        gg = []
        if grads[0].requires_grad:   # (batch norm without a weight: a constant gradient)
            gg = lib.autograd.grad(sum((q * q).sum() for q in grads), params,
                                   allow_unused=True)
        res.append((_node_names(y), [y, *grads, *[q for q in gg if q is not None]]))
    assert res[0][0] == res[1][0]
    assert len(res[0][1]) == len(res[1][1])
    for a, c in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-10,
                                   atol=1e-10)
    if len(shape) == 4:
        outs = [norm(lib, lib.from_numpy(x.copy()).to(memory_format=lib.channels_last), None,
                     None, stats) for lib in (ptcore, torch)]
        assert outs[0].is_contiguous(memory_format=ptcore.channels_last) == \
            outs[1].is_contiguous(memory_format=torch.channels_last)
        np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 4), (4, 4, 5), (2, 4, 3, 5)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("norm", [_batch_norm_eval, _group_norm], ids=["bn_eval", "group"])
def test_norm_is_one_node_as_torch(norm, shape, affine):
    _check(norm, shape, affine)


def _two_levels(y):
    node = y.grad_fn
    below = [f for f, _ in node.next_functions if f is not None]
    return (type(node).__name__, [type(f).__name__ for f in below],
            [[type(g).__name__ if g is not None else None for g, _ in f.next_functions][:3]
             for f in below])


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("running", [True, False])
def test_instance_norm_graph_as_torch(shape, affine, running):
    """Instance norm with input statistics is torch's composite: a view of a batch norm of
    the folded input, with the parameters repeated per sample (View -> NativeBatchNorm ->
    View, Repeat, Repeat), with torch's output, gradients, gradients of gradients and running
    statistics."""
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal(shape), rng.standard_normal(shape)
    C = shape[1]
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_() if affine else None
        bt = lib.from_numpy(b.copy()).requires_grad_() if affine else None
        rm = lib.zeros(C, dtype=lib.float64) if running else None
        rv = lib.ones(C, dtype=lib.float64) if running else None
        y = lib.nn.functional.instance_norm(xt, rm, rv, wt, bt, momentum=0.3, eps=1e-3)
        params = [t for t in (xt, wt, bt) if t is not None]
        grads = lib.autograd.grad(y, params, lib.from_numpy(g), create_graph=True)
        gg = lib.autograd.grad(sum((q * q).sum() for q in grads), params, allow_unused=True)
        res.append((_two_levels(y), [y, *grads, *[q for q in gg if q is not None]] +
                    ([rm, rv] if running else [])))
    assert res[0][0] == res[1][0]
    assert len(res[0][1]) == len(res[1][1])
    for a, c in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-10,
                                   atol=1e-10)
