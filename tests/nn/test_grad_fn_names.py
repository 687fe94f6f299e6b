"""The grad_fn names of nn layers' outputs, compared with torch 2.13 CPU: they show in
``print(output)`` (``grad_fn=<AvgPool2DBackward0>``) and torch names the node after its
own kernel for the whole op."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _cases(L):
    nn, F = L.nn, L.nn.functional
    x5 = L.randn(1, 2, 4, 4, 4, requires_grad=True)
    x4 = L.randn(2, 4, 6, 6, requires_grad=True)
    x3 = L.randn(2, 4, 8, requires_grad=True)
    x2u = L.randn(4, 8, requires_grad=True)
    xs = L.randn(5, 2, 8, requires_grad=True)
    x2 = L.randn(3, 8, requires_grad=True)
    idx = L.tensor([[0], [1], [2]])
    return {
        "avgpool1d": lambda: nn.AvgPool1d(2)(x3), "avgpool1d-unbatched": lambda: nn.AvgPool1d(2)(x2u),
        "avgpool2d": lambda: nn.AvgPool2d(2)(x4), "avgpool3d": lambda: nn.AvgPool3d(2)(x5),
        "adaptiveavg1d": lambda: nn.AdaptiveAvgPool1d(3)(x3),
        "adaptiveavg2d": lambda: nn.AdaptiveAvgPool2d(3)(x4),
        "adaptiveavg2d-1": lambda: nn.AdaptiveAvgPool2d(1)(x4),
        "adaptiveavg3d": lambda: nn.AdaptiveAvgPool3d(2)(x5),
        "adaptiveavg3d-1": lambda: nn.AdaptiveAvgPool3d((1, 1, 1))(x5),
        "maxpool1d": lambda: nn.MaxPool1d(2)(x3), "maxpool2d": lambda: nn.MaxPool2d(2)(x4),
        "maxpool3d": lambda: nn.MaxPool3d(2)(x5),
        "adaptivemax1d": lambda: nn.AdaptiveMaxPool1d(2)(x3),
        "adaptivemax2d": lambda: nn.AdaptiveMaxPool2d(3)(x4),
        "adaptivemax3d": lambda: nn.AdaptiveMaxPool3d(2)(x5),
        "convtranspose1d": lambda: nn.ConvTranspose1d(4, 2, 2)(x3),
        "convtranspose2d": lambda: nn.ConvTranspose2d(4, 2, 2)(x4),
        "unfold": lambda: F.unfold(x4, 2),
        "fold": lambda: F.fold(F.unfold(x4, 2).detach().requires_grad_(), (6, 6), 2),
        "instancenorm2d": lambda: nn.InstanceNorm2d(4)(x4),
        "instancenorm2d-affine": lambda: nn.InstanceNorm2d(4, affine=True)(x4),
        "groupnorm": lambda: nn.GroupNorm(2, 4)(x4),
        "groupnorm-no-affine": lambda: nn.GroupNorm(2, 4, affine=False)(x4),
        "batchnorm-eval": lambda: nn.BatchNorm2d(4).eval()(x4),
        "batchnorm-train": lambda: nn.BatchNorm2d(4)(x4),
        "gru": lambda: nn.GRU(8, 3)(xs)[0], "gru-batch-first": lambda: nn.GRU(8, 3, batch_first=True)(xs)[0],
        "gru-bidirectional": lambda: nn.GRU(8, 3, bidirectional=True)(xs)[0],
        "rnn": lambda: nn.RNN(8, 3)(xs)[0], "rnn-batch-first": lambda: nn.RNN(8, 3, batch_first=True)(xs)[0],
        "lstm": lambda: nn.LSTM(8, 3)(xs)[0], "lstm-2-layers": lambda: nn.LSTM(8, 3, num_layers=2)(xs)[0],
        "lstm-batch-first": lambda: nn.LSTM(8, 3, batch_first=True)(xs)[0],
        "lstm-bidirectional": lambda: nn.LSTM(8, 3, bidirectional=True)(xs)[0],
        "lstm-proj": lambda: nn.LSTM(8, 3, proj_size=2)(xs)[0],
        "lstm-hidden": lambda: nn.LSTM(8, 3)(xs)[1][0],
        "grucell": lambda: nn.GRUCell(8, 3)(x2), "rnncell": lambda: nn.RNNCell(8, 3)(x2),
        "rnncell-relu": lambda: nn.RNNCell(8, 3, nonlinearity="relu")(x2),
        "bilinear": lambda: nn.Bilinear(8, 8, 2)(x2, x2),
        "bilinear-no-bias": lambda: nn.Bilinear(8, 8, 2, bias=False)(x2, x2),
        "bilinear-unbatched": lambda: nn.Bilinear(8, 8, 2)(x2[0], x2[0]),
        "pixel-shuffle": lambda: nn.PixelShuffle(2)(x4), "pixel-unshuffle": lambda: nn.PixelUnshuffle(2)(x4),
        "prelu": lambda: nn.PReLU()(x4), "glu": lambda: F.glu(x4, 1),
        "threshold": lambda: F.threshold(x2, 0.1, 20.0),
        "pairwise-distance": lambda: F.pairwise_distance(x2, x2 * 2),
        "embedding-bag-mean": lambda: nn.EmbeddingBag(10, 3)(L.tensor([[1, 2], [3, 4]])),
        "embedding-bag-max": lambda: nn.EmbeddingBag(10, 3, mode="max")(L.tensor([1, 2, 3]),
                                                                     L.tensor([0, 2])),
        "scatter-value": lambda: (x2 * 1).scatter_(1, idx, 1.0),
        "scatter-src": lambda: (x2 * 1).scatter(1, idx, x2),
    }


@pytest.mark.parametrize("name", sorted(_cases(ptcore)))
def test_grad_fn_name_as_torch(name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = type(_cases(ptcore)[name]().grad_fn).__name__
        want = type(_cases(torch)[name]().grad_fn).__name__
    assert got == want


def test_renamed_nodes_still_differentiate():
    # the renamed node behaves as before: gradients through a few of them, against torch
    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 6, 6))
    grads = []
    for L in (ptcore, torch):
        L.manual_seed(0)
        x = L.tensor(a, requires_grad=True)
        y = L.nn.functional.group_norm(x, 2) * 2 + L.nn.functional.adaptive_avg_pool2d(x, 1)
        y = y + L.nn.functional.instance_norm(x) + L.nn.functional.max_pool1d(x.flatten(2), 3).mean()
        (y ** 2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-10)


def _edge_cases(L):
    F = L.nn.functional
    g = L.Generator().manual_seed(0)
    x = L.randn(2, 4, 6, 6, generator=g).requires_grad_()
    w = L.randn(3, 4, 3, 3, generator=g).requires_grad_()
    b = L.randn(3, generator=g).requires_grad_()
    wt = L.randn(4, 3, 3, 3, generator=g).requires_grad_()
    p = L.randn(4, generator=g).requires_grad_()
    grid = (L.rand(2, 5, 5, 2, generator=g) * 2 - 1).requires_grad_()
    return {
        "conv2d": lambda: F.conv2d(x, w, b), "conv2d-no-bias": lambda: F.conv2d(x, w),
        "conv1d": lambda: F.conv1d(x[:, :, 0], w[..., 0], b),
        "conv-transpose2d": lambda: F.conv_transpose2d(x, wt, b),
        "batch-norm-train": lambda: F.batch_norm(x, L.zeros(4), L.ones(4), p, p, training=True),
        "batch-norm-eval": lambda: F.batch_norm(x, L.zeros(4), L.ones(4), p, p),
        "batch-norm-no-stats": lambda: F.batch_norm(x, None, None, p, None, training=True),
        "group-norm": lambda: F.group_norm(x, 2, p, p),
        "max-pool2d": lambda: F.max_pool2d(x, 2), "avg-pool2d": lambda: F.avg_pool2d(x, 2),
        "adaptive-avg-pool2d": lambda: F.adaptive_avg_pool2d(x, 3),
        "grid-sample": lambda: F.grid_sample(x, grid, align_corners=False),
        "unfold": lambda: F.unfold(x, 2), "fold": lambda: F.fold(F.unfold(x, 2), (6, 6), 2),
        "prelu": lambda: F.prelu(x, p),
    }


@pytest.mark.parametrize("name", sorted(_edge_cases(ptcore)))
def test_next_functions_as_torch(name):
    """The node of a fused op has one edge per tensor input of torch's kernel (conv: input,
    weight, bias; batch norm: input, weight, bias; pooling: input), not one per argument of
    ptcore's Function, to the same kinds of nodes as torch's."""
    def edges(lib):
        y = _edge_cases(lib)[name]()
        return [type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions]
    assert edges(ptcore) == edges(torch)
