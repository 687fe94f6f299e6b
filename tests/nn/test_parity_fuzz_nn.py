"""Differential regressions of ptcore.nn against torch (found by fuzzing the
functional API and the layer modules with the parameter combinations real
programs use).  Float64 throughout, so a mismatch is a real difference."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as PF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _p(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def _close(a, b, **kw):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-7, atol=1e-9,
                               **kw)


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


# --- interpolate ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("scale", [(1.1, 1.1), (0.6, 1.1), (1.0, 1.3)])
def test_antialias_leaves_unresized_dim_untouched(mode, scale):
    # 5x6 by (1.1, 1.1) keeps the size: torch's anti-aliased kernel then skips
    # that dim (the scale factor does not re-weight it)
    x = _randn(2, 3, 5, 6)
    want = TF.interpolate(x, scale_factor=scale, mode=mode, antialias=True)
    got = PF.interpolate(_p(x), scale_factor=scale, mode=mode, antialias=True)
    _close(want, got)


def test_antialias_unresized_gradient_is_identity():
    # torch's backward of this case disagrees with its own forward (its bug);
    # ptcore's gradient is the forward's: the identity
    x = _p(_randn(1, 2, 5, 6)).requires_grad_()
    y = PF.interpolate(x, scale_factor=1.1, mode="bilinear", antialias=True)
    g = _p(_randn(1, 2, 5, 6, seed=1))
    (gx,) = ptcore.autograd.grad(y, x, g)
    np.testing.assert_array_equal(gx.numpy(), g.numpy())


# --- empty batches -------------------------------------------------------------------------

@pytest.mark.parametrize("groups,shape", [(1, (0, 3, 2)), (3, (0, 3)), (1, (2, 3, 0))])
def test_group_norm_empty(groups, shape):
    x = _randn(*shape).requires_grad_()
    w, b = _randn(3, seed=1), _randn(3, seed=2)
    want = TF.group_norm(x, groups, w, b)
    px = _p(x).requires_grad_()
    got = PF.group_norm(px, groups, _p(w), _p(b))
    _close(want, got)
    got.sum().backward()
    assert px.grad is not None and tuple(px.grad.shape) == shape


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_empty_batch(nd):
    x = _randn(0, 3, *([5] * nd))
    s = torch.rand(0, 3, nd, dtype=torch.float64)
    fn = f"fractional_max_pool{nd}d"
    want, wi = getattr(TF, fn)(x, 2, output_size=2, _random_samples=s, return_indices=True)
    got, gi = getattr(PF, fn)(_p(x), 2, output_size=2, _random_samples=_p(s),
                              return_indices=True)
    assert tuple(got.shape) == tuple(want.shape) and tuple(gi.shape) == tuple(wi.shape)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_empty_batch(nd):
    x = _randn(0, 3, *([2] * nd))
    i = torch.zeros(0, 3, *([2] * nd), dtype=torch.long)
    want = getattr(TF, f"max_unpool{nd}d")(x, i, 2)
    got = getattr(PF, f"max_unpool{nd}d")(_p(x), _p(i), 2)
    assert tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize("shape", [(0, 2, 4), (5, 2, 0), (0, 4)])
def test_ctc_loss_empty_log_probs_raises(shape):
    batched = len(shape) == 3
    args = ((torch.ones(2, 1, dtype=torch.long), torch.tensor([0, 0]), torch.tensor([1, 1]))
            if batched else (torch.ones(1, dtype=torch.long), torch.tensor(0), torch.tensor(1)))
    lp = torch.zeros(shape, dtype=torch.float64)
    with pytest.raises(RuntimeError):
        TF.ctc_loss(lp, *args)
    with pytest.raises(RuntimeError, match="empty"):
        PF.ctc_loss(_p(lp), *[_p(a) for a in args])


# --- memory format of the output -----------------------------------------------------------

_CL_CASES = {
    "group_norm": lambda F, x: F.group_norm(x, 2),
    "channel_shuffle": lambda F, x: F.channel_shuffle(x, 2),
    "pixel_shuffle": lambda F, x: F.pixel_shuffle(x, 2),
    "pixel_unshuffle": lambda F, x: F.pixel_unshuffle(x, 2),
}


@pytest.mark.parametrize("name,nd", [(n, 4) for n in sorted(_CL_CASES)]
                         + [("group_norm", 5), ("channel_shuffle", 5)])
def test_channels_last_input_gives_channels_last_output(name, nd):
    fmt_t = torch.channels_last if nd == 4 else torch.channels_last_3d
    fmt_p = ptcore.channels_last if nd == 4 else ptcore.channels_last_3d
    x = _randn(*((2, 8, 4, 6) if nd == 4 else (2, 8, 2, 4, 6))).contiguous(memory_format=fmt_t)
    want = _CL_CASES[name](TF, x.requires_grad_())
    px = _p(x).contiguous(memory_format=fmt_p).requires_grad_()
    got = _CL_CASES[name](PF, px)
    _close(want, got)
    assert got.stride() == want.stride()
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__


def test_interpolate_size_with_recompute_scale_factor_raises():
    x = torch.zeros(1, 1, 4, dtype=torch.float64)
    with pytest.raises(ValueError):
        TF.interpolate(x, size=3, recompute_scale_factor=True)
    with pytest.raises(ValueError, match="recompute_scale_factor"):
        PF.interpolate(_p(x), size=3, recompute_scale_factor=True)
    # False (or None) with a size is accepted, as torch
    assert tuple(PF.interpolate(_p(x), size=3, recompute_scale_factor=False).shape) == (1, 1, 3)


@pytest.mark.parametrize("shape,kw", [((1, 1, 1, 5), dict(scale_factor=(0.48, 0.89))),
                                      ((1, 1, 1), dict(scale_factor=0.5)),
                                      ((1, 1, 2, 3), dict(size=(0, 2)))])
def test_interpolate_area_allows_empty_output(shape, kw):
    # area is adaptive average pooling in torch: a zero output size is allowed
    x = _randn(*shape)
    want = TF.interpolate(x, mode="area", **kw)
    got = PF.interpolate(_p(x), mode="area", **kw)
    assert tuple(got.shape) == tuple(want.shape)
    with pytest.raises(RuntimeError):
        PF.interpolate(_p(x), mode="nearest", **kw)


@pytest.mark.parametrize("xd,wd", [("float32", "float64"), ("float64", "float32")])
def test_dtype_mismatch_errors(xd, wd):
    # torch's kernels refuse a weight / samples tensor of another dtype than the input
    tx, tw = getattr(torch, xd), getattr(torch, wd)
    px, pw = getattr(ptcore, xd), getattr(ptcore, wd)
    with pytest.raises(RuntimeError):
        TF.multi_margin_loss(torch.zeros(2, 3, dtype=tx), torch.tensor([0, 1]),
                             weight=torch.ones(3, dtype=tw))
    with pytest.raises(RuntimeError, match="expected scalar type"):
        PF.multi_margin_loss(ptcore.zeros(2, 3, dtype=px), ptcore.tensor([0, 1]),
                             weight=ptcore.ones(3, dtype=pw))
    with pytest.raises(RuntimeError):
        TF.fractional_max_pool2d(torch.zeros(1, 1, 5, 5, dtype=tx), 2, output_size=2,
                                 _random_samples=torch.zeros(1, 1, 2, dtype=tw))
    with pytest.raises(RuntimeError, match="same dtype"):
        PF.fractional_max_pool2d(ptcore.zeros(1, 1, 5, 5, dtype=px), 2, output_size=2,
                                 _random_samples=ptcore.zeros(1, 1, 2, dtype=pw))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p", [float("inf"), -float("inf")])
@pytest.mark.parametrize("ceil", [False, True])
def test_lp_pool_infinite_norm(nd, p, ceil):
    # torch: the largest |x| of each window for +inf, the smallest for -inf
    x = _randn(1, 2, *([5] * nd)).requires_grad_()
    want = getattr(TF, f"lp_pool{nd}d")(x, p, 2, None, ceil)
    px = _p(x).requires_grad_()
    got = getattr(PF, f"lp_pool{nd}d")(px, p, 2, None, ceil)
    _close(want, got)
    g = _randn(*want.shape, seed=3)
    (gx,) = torch.autograd.grad(want, x, g)
    (pgx,) = ptcore.autograd.grad(got, px, _p(g))
    _close(gx, pgx)


@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, float("inf")])
def test_pdist_cdist_node_names(p):
    x = _randn(2, 3, 3)
    px = _p(x).requires_grad_()
    want = type(torch.cdist(x.requires_grad_(), x, p).grad_fn).__name__
    assert type(ptcore.cdist(px, px, p).grad_fn).__name__ == want == "CdistBackward0"
    want = type(TF.pdist(x[0], p).grad_fn).__name__
    assert type(PF.pdist(px[0], p).grad_fn).__name__ == want == "PdistBackward0"


@pytest.mark.parametrize("inp,offs,pad", [([2, 2, 2], [0, 3], 2), ([], [0], None), ([0], [0], 0),
                                          ([], [], None)])
def test_embedding_bag_max_all_bags_empty_stays_in_graph(inp, offs, pad):
    w = _randn(3, 2).requires_grad_()
    i, o = torch.tensor(inp, dtype=torch.long), torch.tensor(offs, dtype=torch.long)
    want = TF.embedding_bag(i, w, o, mode="max", padding_idx=pad)
    pw = _p(w).requires_grad_()
    got = PF.embedding_bag(_p(i), pw, _p(o), mode="max", padding_idx=pad)
    _close(want, got)
    assert got.requires_grad and type(got.grad_fn).__name__ == "EmbeddingBagBackward0"
    (g,) = ptcore.autograd.grad(got.sum(), pw)
    _close(torch.autograd.grad(want.sum(), w)[0], g)


@pytest.mark.parametrize("nd,mode", [(2, "nearest"), (2, "bilinear"), (2, "bicubic"),
                                     (3, "nearest"), (3, "bilinear")])
def test_grid_sample_reflection_of_unit_dim_keeps_grid_gradient(nd, mode):
    # a size-1 dim reflected with align_corners=True maps every coordinate to 0:
    # torch still gives the grid a (zero) gradient
    x = _randn(1, 1, *([1] * (nd - 1)), 3)
    grid = torch.rand(1, 2, *([3] * (nd - 1)), nd, dtype=torch.float64) * 8 - 4
    want = TF.grid_sample(x.requires_grad_(), grid.requires_grad_(), mode=mode,
                          padding_mode="reflection", align_corners=True)
    px, pg = _p(x).requires_grad_(), _p(grid).requires_grad_()
    got = PF.grid_sample(px, pg, mode=mode, padding_mode="reflection", align_corners=True)
    _close(want, got)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    go = _randn(*want.shape, seed=5)
    for a, b in zip(torch.autograd.grad(want, [x, grid], go),
                    ptcore.autograd.grad(got, [px, pg], _p(go))):
        _close(a, b)


@pytest.mark.parametrize("shape,k,kw", [((1, 2, 3, 3), 2, {}),
                                        ((2, 4, 5), (2, 1), dict(padding=1, stride=2)),
                                        ((1, 1, 4, 4), 3, dict(dilation=1, padding=2))])
def test_unfold_fold_bool(shape, k, kw):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(*shape, generator=g) > 0.5
    want = TF.unfold(x, k, **kw)
    got = PF.unfold(ptcore.from_numpy(x.numpy()), k, **kw)
    assert got.dtype == ptcore.bool
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    want = TF.fold(want, shape[-2:], k, **kw)
    got = PF.fold(got, shape[-2:], k, **kw)
    assert got.dtype == ptcore.bool
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("xd,gd", [("int64", "int64"), ("int64", "float32"), ("bool", "float32")])
def test_grid_sample_non_float_input_is_not_implemented(xd, gd):
    with pytest.raises(NotImplementedError):
        TF.grid_sample(torch.ones(1, 1, 2, 2, dtype=getattr(torch, xd)),
                       torch.zeros(1, 1, 1, 2, dtype=getattr(torch, gd)), align_corners=False)
    with pytest.raises(NotImplementedError):
        PF.grid_sample(ptcore.ones(1, 1, 2, 2, dtype=getattr(ptcore, xd)),
                       ptcore.zeros(1, 1, 1, 2, dtype=getattr(ptcore, gd)), align_corners=False)


_NOT_FLOAT = {
    "batch_norm": lambda F, L, x: F.batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda F, L, x: F.batch_norm(x, L.zeros(2, dtype=x.dtype),
                                                    L.ones(2, dtype=x.dtype)),
    "instance_norm": lambda F, L, x: F.instance_norm(x),
    "group_norm": lambda F, L, x: F.group_norm(x, 1),
    "rms_norm": lambda F, L, x: F.rms_norm(x, (4,)),
    "smooth_l1_loss": lambda F, L, x: F.smooth_l1_loss(x, x),
    "huber_loss": lambda F, L, x: F.huber_loss(x, x),
}


@pytest.mark.parametrize("name", sorted(_NOT_FLOAT))
@pytest.mark.parametrize("dt", ["int64", "bool"])
def test_non_floating_input_is_not_implemented(name, dt):
    # torch's kernels are dispatched on floating dtypes: NotImplementedError
    # (ptcore raised RuntimeErrors from inner ops, or computed a value)
    with pytest.raises(NotImplementedError):
        _NOT_FLOAT[name](TF, torch, torch.ones(2, 2, 3, 4, dtype=getattr(torch, dt)))
    with pytest.raises(NotImplementedError, match="not implemented for"):
        _NOT_FLOAT[name](PF, ptcore, ptcore.ones(2, 2, 3, 4, dtype=getattr(ptcore, dt)))


def test_loss_dtype_rules():
    for fn in ("smooth_l1_loss", "huber_loss"):
        with pytest.raises(NotImplementedError):
            getattr(PF, fn)(ptcore.ones(3, dtype=ptcore.complex64),
                            ptcore.zeros(3, dtype=ptcore.complex64))
        # a floating input with an integer target is fine, as torch
        assert getattr(PF, fn)(ptcore.ones(3), ptcore.zeros(3, dtype=ptcore.int64)).dtype == \
            ptcore.float32
    # huber writes into a tensor like the input: an integer input cannot hold it
    with pytest.raises(RuntimeError, match="can't be cast"):
        PF.huber_loss(ptcore.ones(3, dtype=ptcore.int64), ptcore.zeros(3))
    assert PF.smooth_l1_loss(ptcore.ones(3, dtype=ptcore.int64), ptcore.zeros(3)).dtype == \
        ptcore.float32
    x = torch.randn(2, 4, dtype=torch.complex64)
    got = PF.rms_norm(ptcore.from_numpy(x.numpy()), (4,))       # complex stays allowed
    np.testing.assert_allclose(got.numpy(), TF.rms_norm(x, (4,)).numpy(), rtol=1e-5, atol=1e-6)
