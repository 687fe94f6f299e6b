"""The autograd graph's structure against PyTorch's: ``grad_fn`` class names and
``next_functions`` (one entry per differentiable tensor input of torch's op, None for
one that needs no gradient), two levels deep, for ops whose ptcore form is a
composite, a fused kernel or takes non-tensor arguments.  Graph-walking libraries
(torchviz, captum, opacus hooks) read exactly this."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _names(fn, depth=2):
    """``[class name, [children ...]]`` of a node, ``None`` for a missing edge."""
    if fn is None:
        return None
    out = [type(fn).__name__]
    if depth:
        out.append([_names(n, depth - 1) for n, _ in fn.next_functions])
    return out


def _graph(lib, make):
    rng = np.random.default_rng(0)

    def X(*shape):
        return lib.tensor(rng.standard_normal(shape), dtype=lib.float32, requires_grad=True)
    return _names(make(lib, X).grad_fn)


CASES = {
    # non-tensor arguments take no slot in next_functions
    "pad": lambda L, X: L.nn.functional.pad(X(2, 3), (1, 1)),
    "pad_reflect": lambda L, X: L.nn.functional.pad(X(1, 2, 3), (1, 1), mode="reflect"),
    "pad_replicate": lambda L, X: L.nn.functional.pad(X(1, 2, 3, 3), (1, 1, 1, 1),
                                                      mode="replicate"),
    "interp_bilinear": lambda L, X: L.nn.functional.interpolate(X(1, 1, 4, 4), scale_factor=2,
                                                                mode="bilinear"),
    "interp_nearest": lambda L, X: L.nn.functional.interpolate(X(1, 1, 4, 4), scale_factor=2),
    "interp_linear": lambda L, X: L.nn.functional.interpolate(X(1, 2, 4), size=7,
                                                              mode="linear"),
    "sdpa": lambda L, X: L.nn.functional.scaled_dot_product_attention(
        X(1, 2, 3, 4), X(1, 2, 3, 4), X(1, 2, 3, 4)),
    "sdpa_causal": lambda L, X: L.nn.functional.scaled_dot_product_attention(
        X(1, 2, 3, 4), X(1, 2, 3, 4), X(1, 2, 3, 4), is_causal=True),
    "scatter_value": lambda L, X: X(3, 4).scatter(1, L.tensor([[0], [1], [2]]), 1.0),
    "scatter_src": lambda L, X: X(3, 4).scatter(1, L.tensor([[0], [1], [2]]), X(3, 1)),
    "add_number": lambda L, X: X(3) + 1,
    "mul_number": lambda L, X: X(3) * 2,
    "clamp_min": lambda L, X: X(3).clamp_min(0.1),
    # a double added in torch's C++ code: aten::add.Scalar, AddBackward1 with one edge
    "pairwise_distance": lambda L, X: L.nn.functional.pairwise_distance(X(2, 3), X(2, 3)),
    "margin_ranking": lambda L, X: L.nn.functional.margin_ranking_loss(X(3), X(3), L.ones(3)),
    "triplet_margin": lambda L, X: L.nn.functional.triplet_margin_loss(X(2, 3), X(2, 3),
                                                                       X(2, 3)),
    # torch's single kernels, composites in ptcore: one node over the input
    "glu": lambda L, X: L.nn.functional.glu(X(4, 6)),
    "glu_dim0": lambda L, X: L.nn.functional.glu(X(4, 6), 0),
    "pixel_shuffle": lambda L, X: L.nn.functional.pixel_shuffle(X(1, 4, 2, 2), 2),
    "pixel_unshuffle": lambda L, X: L.nn.functional.pixel_unshuffle(X(1, 1, 4, 4), 2),
    "channel_shuffle": lambda L, X: L.nn.functional.channel_shuffle(X(1, 4, 2, 2), 2),
    "channel_shuffle_1": lambda L, X: L.nn.functional.channel_shuffle(X(1, 4, 3), 1),
    "glu_then_shuffle": lambda L, X: L.nn.functional.pixel_shuffle(
        L.nn.functional.glu(X(1, 8, 2, 2), 1), 2),
    "affine_grid": lambda L, X: L.nn.functional.affine_grid(X(1, 2, 3), (1, 1, 2, 2),
                                                            align_corners=False),
    "affine_grid3d": lambda L, X: L.nn.functional.affine_grid(X(2, 3, 4), (2, 1, 2, 3, 2),
                                                              align_corners=True),
    # 1-d pooling is torch's 2-d kernel between an unsqueeze and a squeeze
    "max_pool1d": lambda L, X: L.nn.functional.max_pool1d(X(1, 2, 8), 2),
    "max_pool1d_unbatched": lambda L, X: L.nn.functional.max_pool1d(X(2, 9), 3, 2, 1),
    "avg_pool1d": lambda L, X: L.nn.functional.avg_pool1d(X(1, 2, 8), 2),
    "adaptive_avg_pool1d": lambda L, X: L.nn.functional.adaptive_avg_pool1d(X(1, 2, 8), 3),
    "adaptive_avg_pool1d_1": lambda L, X: L.nn.functional.adaptive_avg_pool1d(X(1, 2, 8), 1),
    "adaptive_max_pool1d": lambda L, X: L.nn.functional.adaptive_max_pool1d(X(1, 2, 8), 3),
    # reshape that copies: torch's _unsafe_view of the clone
    "reshape_copy": lambda L, X: X(2, 3).t().reshape(6),
    "flatten_copy": lambda L, X: X(2, 3, 4).transpose(0, 1).flatten(),
    "reshape_view": lambda L, X: X(2, 3).reshape(3, 2),
    "mha": lambda L, X: L.nn.MultiheadAttention(4, 2)(X(3, 1, 4), X(3, 1, 4), X(3, 1, 4))[0],
    # already matching: kept so that they stay so
    "linear": lambda L, X: L.nn.functional.linear(X(2, 3), X(4, 3), X(4)),
    "linear_nobias": lambda L, X: L.nn.functional.linear(X(2, 3), X(4, 3)),
    "linear3d": lambda L, X: L.nn.functional.linear(X(2, 5, 3), X(4, 3), X(4)),
    "conv2d": lambda L, X: L.nn.functional.conv2d(X(1, 2, 5, 5), X(3, 2, 3, 3), X(3)),
    "layer_norm": lambda L, X: L.nn.functional.layer_norm(X(2, 4), (4,), X(4), X(4)),
    "softmax": lambda L, X: L.nn.functional.softmax(X(2, 4), -1),
    "max_pool2d": lambda L, X: L.nn.functional.max_pool2d(X(1, 2, 4, 4), 2),
    "embedding": lambda L, X: L.nn.functional.embedding(L.tensor([0, 1, 2, 1]), X(5, 3)),
    "mse_loss": lambda L, X: L.nn.functional.mse_loss(X(3, 4), X(3, 4)),
    "matmul": lambda L, X: X(2, 3) @ X(3, 4),
    "where": lambda L, X: L.where(L.tensor([True, False]), X(2), X(2)),
    "cat": lambda L, X: L.cat([X(2), X(3)]),
    "index": lambda L, X: X(5)[L.tensor([0, 2])],
    "split": lambda L, X: X(4).split(2)[0],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_names_and_edges(case):
    assert _graph(ptcore, CASES[case]) == _graph(torch, CASES[case])


def test_input_without_grad_is_a_none_edge():
    # next_functions keeps the slot of a tensor input that needs no gradient
    for L in (ptcore, torch):
        x = L.randn(3, requires_grad=True)
        y = L.randn(3)
        assert [f is None for f, _ in (x * y).grad_fn.next_functions] == [False, True]
        assert [f is None for f, _ in L.nn.functional.pad(x.view(1, 3), (1, 1))
                .grad_fn.next_functions] == [False]


def _run(lib, fn, x):
    x = lib.tensor(x, requires_grad=True)
    y = fn(lib, x)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
    g, = lib.autograd.grad((y * w).sum() ** 2, x, create_graph=True)
    gg, = lib.autograd.grad((g * g).sum(), x)
    return y.detach().numpy(), g.detach().numpy(), gg.numpy()


ONE_NODE = {
    "glu": lambda L, x: L.nn.functional.glu(x.reshape(6, 6), 1),
    "glu0": lambda L, x: L.nn.functional.glu(x.reshape(6, 6), 0),
    "pixel_shuffle": lambda L, x: L.nn.functional.pixel_shuffle(x.reshape(1, 4, 3, 3), 2),
    "pixel_unshuffle": lambda L, x: L.nn.functional.pixel_unshuffle(x.reshape(1, 1, 6, 6), 2),
    "channel_shuffle": lambda L, x: L.nn.functional.channel_shuffle(x.reshape(1, 4, 9), 2),
    "reshape_copy": lambda L, x: L.sin(x.t().reshape(4, 9)),
    "pairwise_distance": lambda L, x: L.nn.functional.pairwise_distance(x[:2], x[2:]),
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x.reshape(2, 2, 9), 3, 2, 1,
                                                          ceil_mode=True),
    "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x.reshape(2, 18), 4, 3, 2),
    "adaptive_max_pool1d": lambda L, x: L.nn.functional.adaptive_max_pool1d(
        x.reshape(1, 4, 9), 4),
    "affine_grid": lambda L, x: L.nn.functional.affine_grid(x[:, :6].reshape(4, 2, 3),
                                                            (4, 1, 3, 2), align_corners=False),
    "affine_grid3d": lambda L, x: L.nn.functional.affine_grid(
        x.reshape(3, 3, 4), (3, 1, 2, 2, 3), align_corners=True),
    "margin_ranking": lambda L, x: L.nn.functional.margin_ranking_loss(
        x[0], x[1], L.sign(x[2]), margin=0.3, reduction="none"),
}


@pytest.mark.parametrize("case", sorted(ONE_NODE))
def test_one_node_gradients(case):
    # values, gradients and second derivatives (create_graph) through the one node
    x = np.random.default_rng(0).standard_normal((4, 9))
    for a, b in zip(_run(ptcore, ONE_NODE[case], x), _run(torch, ONE_NODE[case], x)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_glu_saved_input_checks_version():
    x = ptcore.randn(4, 6, requires_grad=True)
    a = x * 1
    y = ptcore.nn.functional.glu(a)
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_one_node_hooks_and_metadata():
    x = ptcore.randn(4, 6, requires_grad=True)
    y = ptcore.nn.functional.glu(x)
    node = y.grad_fn
    assert node.name() == "GluBackward0"
    node.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}
    seen = []
    node.register_prehook(lambda go: seen.append(("pre", tuple(go[0].shape))))
    node.register_hook(lambda gi, go: seen.append(("post", tuple(gi[0].shape))))
    y.sum().backward()
    assert seen == [("pre", (4, 3)), ("post", (4, 6))]


def test_reshape_copy_is_no_view():
    for L in (ptcore, torch):
        x = L.randn(2, 3, requires_grad=True)
        y = x.t().reshape(6)
        assert y._base is None and not y._is_view()
        z = y * 1
        y.mul_(2)               # an in-place write to the copy: no view rules apply
        (y.sum() + z.sum()).backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 3.0))
    x = ptcore.randn(2, 3)
    assert x.t().reshape(6).grad_fn is None
    with ptcore.no_grad():
        assert x.requires_grad_().t().reshape(6).grad_fn is None


@pytest.mark.parametrize("mode,psw", [("sum", False), ("mean", False), ("sum", True)])
def test_embedding_bag_one_node(mode, psw):
    rng = np.random.default_rng(0)
    w0, p0 = rng.standard_normal((6, 3)), rng.standard_normal(7)
    res = []
    for L in (ptcore, torch):
        w = L.tensor(w0, requires_grad=True)
        p = L.tensor(p0, requires_grad=True) if psw else None
        idx, off = L.tensor([0, 2, 1, 5, 2, 2, 4]), L.tensor([0, 3, 3, 5])
        y = L.nn.functional.embedding_bag(idx, w, off, mode=mode, per_sample_weights=p,
                                          padding_idx=4)
        names = _names(y.grad_fn)
        wt = L.tensor(rng.standard_normal(tuple(y.shape)) if L is ptcore else wt_np)
        wt_np = wt.numpy()
        ins = (w, p) if psw else (w,)
        gs = L.autograd.grad((y * wt).sum() ** 2, ins)     # (torch has no double backward)
        res.append((names, y.detach().numpy(), [g.numpy() for g in gs]))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)
    for a, b in zip(res[0][2], res[1][2]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_embedding_bag_double_backward():
    # ptcore's node is differentiable again (torch's raises): against finite differences
    w = ptcore.randn(5, 3, dtype=ptcore.float64, requires_grad=True)
    p = ptcore.randn(4, dtype=ptcore.float64, requires_grad=True)

    def f(w, p):
        return ptcore.nn.functional.embedding_bag(ptcore.tensor([0, 2, 1, 2]), w,
                                                  ptcore.tensor([0, 1]), mode="sum",
                                                  per_sample_weights=p) ** 2
    assert ptcore.autograd.gradgradcheck(f, (w, p))
