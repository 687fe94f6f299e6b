"""The ops that gained a CUDA path in the coverage sweep (tools/cuda_coverage.py),
on the emulated device, each compared with the CPU op on the same values:
float32 and float64, non-contiguous inputs, and gradients through autograd
for the differentiable ones."""
import math
import pathlib
import sys
import warnings

import pytest

import ptcore
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")


def _rand(*shape, dtype=ptcore.float32, seed=0, lo=-2.0, hi=2.0):
    g = ptcore.Generator().manual_seed(seed)
    return (ptcore.rand(shape, generator=g, dtype=ptcore.float64) * (hi - lo) + lo).to(dtype)


def _to(x, dev):
    if isinstance(x, ptcore.Tensor):
        return x.to(dev)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_to(v, dev) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, dev) for k, v in x.items()}
    return x


def _same(got, ref, tol=None):
    if isinstance(ref, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(ref)
        for a, b in zip(got, ref):
            _same(a, b, tol)
        return
    if not isinstance(ref, ptcore.Tensor):
        assert got == ref or (isinstance(ref, float) and math.isnan(ref) and math.isnan(got))
        return
    assert isinstance(got, ptcore.Tensor) and got.device.type == "cuda", got
    g = got.detach().cpu()
    assert g.dtype == ref.dtype and tuple(g.shape) == tuple(ref.shape), (g.dtype, g.shape, ref.dtype,
                                                                        ref.shape)
    if ref.dtype.is_floating_point:
        t = tol if tol is not None else (1e-5 if ref.dtype is ptcore.float32 else 1e-12)
        assert ptcore.allclose(g, ref.detach(), rtol=t, atol=t, equal_nan=True), (g, ref)
    else:
        assert g.tolist() == ref.tolist()


def check(fn, *args, grad=False, tol=None, **kwargs):
    """``fn(*args, **kwargs)`` on CUDA copies equals the CPU call; with
    ``grad`` the gradients of every floating input that asks for one agree."""
    cpu_args = [a.detach().clone().requires_grad_(grad and a.is_floating_point())
                if isinstance(a, ptcore.Tensor) else a for a in args]
    dev_args = [a.detach().to("cuda").requires_grad_(grad and a.is_floating_point())
                if isinstance(a, ptcore.Tensor) else _to(a, "cuda") for a in args]
    ref = fn(*cpu_args, **kwargs)
    got = fn(*dev_args, **_to(kwargs, "cuda"))
    _same(got, ref, tol)
    if grad:
        outs_r = ref if isinstance(ref, (list, tuple)) else [ref]
        outs_g = got if isinstance(got, (list, tuple)) else [got]
        loss_r = sum((o * _rand(*o.shape, dtype=o.dtype, seed=9)).sum() for o in outs_r
                     if isinstance(o, ptcore.Tensor) and o.requires_grad)
        loss_g = sum((o * _rand(*o.shape, dtype=o.dtype, seed=9).cuda()).sum() for o in outs_g
                     if isinstance(o, ptcore.Tensor) and o.requires_grad)
        loss_r.backward()
        loss_g.backward()
        n = 0
        for a, b in zip(dev_args, cpu_args):
            if isinstance(b, ptcore.Tensor) and b.requires_grad:
                _same(a.grad, b.grad, tol)
                n += 1
        assert n
    return got


FLOATS = [ptcore.float32, ptcore.float64]


# ---------------------------------------------------------------------------
# the matmul family (product/dot loops on cuBLAS)

@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_products(dtype):
    m, v, w = _rand(3, 4, dtype=dtype), _rand(4, dtype=dtype, seed=1), _rand(3, dtype=dtype, seed=2)
    check(ptcore.mv, m, v, grad=True)
    check(ptcore.mv, m.t().contiguous().t(), v, grad=True)
    check(ptcore.dot, v, v.flip(0), grad=True)
    check(ptcore.vdot, v, v * 2, grad=True)
    check(ptcore.outer, w, v, grad=True)
    check(ptcore.ger, w, v)
    check(ptcore.inner, m, _rand(2, 4, dtype=dtype, seed=3), grad=True)
    check(ptcore.addmv, w, m, v, beta=0.5, alpha=2.0, grad=True)
    check(ptcore.addmv, w, m, v, beta=0)
    check(ptcore.addr, _rand(3, 4, dtype=dtype, seed=4), w, v, beta=2, alpha=-1, grad=True)
    check(ptcore.matmul, v, v)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batched_products(dtype):
    inp = _rand(2, 3, 5, dtype=dtype)
    b1 = _rand(2, 4, 3, dtype=dtype, seed=1).transpose(1, 2)      # non-contiguous
    b2 = _rand(2, 4, 5, dtype=dtype, seed=2)
    check(ptcore.baddbmm, inp, b1, b2, beta=0.5, alpha=2.0, grad=True)
    check(ptcore.baddbmm, inp[:, :1], b1, b2)                      # broadcast input
    check(ptcore.addbmm, inp[0], b1, b2, beta=1.5, alpha=0.5, grad=True)
    check(ptcore.kron, _rand(2, 3, dtype=dtype), _rand(3, 2, dtype=dtype, seed=5), grad=True)
    check(ptcore.kron, _rand(2, dtype=dtype), _rand(2, 2, 2, dtype=dtype, seed=5))
    check(ptcore.tensordot, _rand(3, 4, 2, dtype=dtype), _rand(4, 2, 5, dtype=dtype, seed=1), dims=2,
          grad=True)
    check(ptcore.tensordot, _rand(3, 4, dtype=dtype), _rand(5, 3, dtype=dtype, seed=1),
          dims=([0], [1]))
    with warnings.catch_warnings():         # (deprecated; warned once per process)
        warnings.simplefilter("ignore")
        check(ptcore.chain_matmul, _rand(3, 4, dtype=dtype), _rand(4, 2, dtype=dtype, seed=1),
              _rand(2, 5, dtype=dtype, seed=2))
    sq = _rand(3, 3, dtype=dtype) / 2
    for n in (0, 1, 3):
        check(ptcore.matrix_power, sq, n)
    check(ptcore.matrix_power, _rand(2, 3, 3, dtype=dtype) / 2, 4, grad=True)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(3, 3)]),
    ("i,i->", [(4,), (4,)]), ("...ij->...ji", [(2, 3, 4)]), ("ij,kj,k->i", [(3, 4), (5, 4), (5,)]),
    ("bi,bj->bij", [(2, 3), (2, 4)]),
])
def test_einsum(eq, shapes):
    ops = [_rand(*s, seed=i) for i, s in enumerate(shapes)]
    check(lambda *t: ptcore.einsum(eq, *t), *ops, grad=True)


def test_inplace_products_and_errors():
    for name, args in (("addmm_", ((3, 4), (4, 5))), ("addmv_", ((3, 4), (4,))),
                       ("addr_", ((3,), (5,))), ("baddbmm_", ((2, 3, 4), (2, 4, 5))),
                       ("addbmm_", ((2, 3, 4), (2, 4, 5)))):
        shape = {"addmm_": (3, 5), "addmv_": (3,), "addr_": (3, 5), "baddbmm_": (2, 3, 5),
                 "addbmm_": (3, 5)}[name]
        base = _rand(*shape)
        ops = [_rand(*s, seed=i + 1) for i, s in enumerate(args)]
        r = base.clone()
        getattr(r, name)(*ops, beta=0.5, alpha=2.0)
        d = base.cuda()
        out = getattr(d, name)(*[o.cuda() for o in ops], beta=0.5, alpha=2.0)
        assert out is d
        _same(d, r)
    # torch's CUDA GEMM has no integer kernel; bool and devices are refused
    i = ptcore.ones(2, 2, dtype=ptcore.int64, device="cuda")
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        ptcore.mv(i, i[0])
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.mv(_rand(2, 2).cuda(), _rand(2))
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.einsum("ij,jk->ik", _rand(2, 2).cuda(), _rand(2, 2))


# ---------------------------------------------------------------------------
# the sorting family: search, histograms, counting, membership, uniqueness

@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.int64])
def test_searchsorted_bucketize(dtype):
    bd = ptcore.tensor([-1.0, 0.0, 0.0, 1.5, 3.0]).to(dtype)
    vals = ptcore.tensor([[-2.0, 0.0, 1.0], [1.5, 3.0, 9.0]]).to(dtype)
    for right in (False, True):
        check(ptcore.searchsorted, bd, vals, right=right)
        check(ptcore.bucketize, vals, bd, right=right, out_int32=True)
        check(ptcore.searchsorted, bd, vals.t(), side="right" if right else "left")
    rows = ptcore.sort(_rand(2, 6, seed=3).to(dtype), 1).values
    check(ptcore.searchsorted, rows, vals)
    perm = ptcore.tensor([3, 0, 4, 1, 2])
    unsorted = ptcore.empty(5, dtype=dtype).index_copy_(0, perm, bd)
    check(ptcore.searchsorted, unsorted, vals, sorter=perm)
    check(ptcore.searchsorted, bd, 0.0 if dtype.is_floating_point else 0)
    if dtype.is_floating_point:
        check(ptcore.searchsorted, bd, ptcore.tensor([float("nan"), 0.5], dtype=dtype))


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16])
def test_histc(dtype):
    x = _rand(50, seed=4, lo=-1.0, hi=3.0).to(dtype)
    check(ptcore.histc, x, bins=7, min=-0.5, max=2.0)
    check(ptcore.histc, x, bins=5)                         # the data's range
    check(ptcore.histc, x[::3], bins=4, min=0, max=1)      # strided
    edge = ptcore.tensor([0.0, 1.0, 2.0, 0.999, float("nan")], dtype=dtype)
    check(ptcore.histc, edge, bins=2, min=0, max=2)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_histc_kernel_counts_and_caps(dtype, launches):
    """histc is one counting kernel (64-bit atomic counters) and one store
    after a memset (no composite of ~25 launches): bins computed in the input's dtype step
    by step as the CPU, the count capped where +1 stops changing a bin of
    that dtype (3000 equal float16 values count 2048, bfloat16 256), and the
    data's range read with one synchronization."""
    g = ptcore.Generator().manual_seed(3)
    x = (ptcore.rand(3001, generator=g) * 7 - 2).to(dtype)
    x[:3000:2] = 1.25                                  # 1500 equal values
    x[7] = float("nan")
    x[8] = float("inf")
    finite = ptcore.nan_to_num(x, 0.0, 0.0, 0.0)
    for t, kw in ((x, {"bins": 13, "min": -1.5, "max": 4.0}), (x, {"bins": 3000, "min": -2, "max": 5}),
                  (finite, {"bins": 6})):
        launches.clear()
        got = ptcore.histc(t.cuda(), **kw)
        if "min" in kw:
            assert len(launches) == 2 and all("histc" in n for n in launches), launches
        want = ptcore.histc(t, **kw)
        assert got.dtype == want.dtype and ptcore.equal(got.cpu(), want), (kw, got.cpu(), want)
    y = ptcore.full((3000,), 0.5, dtype=dtype)
    got = ptcore.histc(y.cuda(), bins=4, min=0, max=1)
    assert ptcore.equal(got.cpu(), ptcore.histc(y, bins=4, min=0, max=1))
    cap = {ptcore.float16: 2048, ptcore.bfloat16: 256}.get(dtype, 3000)
    assert got.cpu().tolist() == [0, 0, cap, 0]
    # a strided input, out= and the data's range of a constant input (widened by 1)
    xs = x.cuda()[1::3]
    assert ptcore.equal(ptcore.histc(xs, bins=5, min=0, max=3).cpu(), ptcore.histc(x[1::3], bins=5, min=0, max=3))
    out = ptcore.empty(4, dtype=dtype).cuda()
    assert ptcore.histc(y.cuda(), bins=4, out=out) is out
    assert ptcore.equal(out.cpu(), ptcore.histc(y, bins=4))


@pytest.mark.parametrize("dtype", FLOATS)
def test_histogram(dtype):
    x = _rand(40, seed=5, dtype=dtype)
    check(lambda t: tuple(ptcore.histogram(t, 6)), x)
    check(lambda t: tuple(ptcore.histogram(t, 4, range=(-1.0, 1.0), density=True)), x)
    check(lambda t, w: tuple(ptcore.histogram(t, 5, weight=w)), x, _rand(40, seed=6, dtype=dtype))
    edges = ptcore.tensor([-2.0, -0.5, 0.0, 0.25, 2.0], dtype=dtype)
    check(lambda t, e: tuple(ptcore.histogram(t.reshape(5, 8), e)), x, edges)
    with pytest.raises(RuntimeError, match="monotonically"):
        ptcore.histogram(x.cuda(), edges.flip(0).cuda())


def test_bincount_isin_repeat_interleave():
    idx = ptcore.tensor([0, 3, 3, 1, 7, 3, 0])
    check(ptcore.bincount, idx)
    check(ptcore.bincount, idx, minlength=10)
    check(ptcore.bincount, idx, _rand(7))
    check(ptcore.bincount, idx, _rand(7, dtype=ptcore.float64))
    check(ptcore.bincount, idx.to(ptcore.int32), ptcore.arange(7))    # int weights -> float64
    check(ptcore.bincount, ptcore.tensor([], dtype=ptcore.int64), minlength=3)
    with pytest.raises(RuntimeError, match="non-negative"):
        ptcore.bincount(ptcore.tensor([1, -1], device="cuda"))
    el = ptcore.tensor([[1, 2, 3], [4, 5, 6]])
    check(ptcore.isin, el, ptcore.tensor([2, 6, 9]))
    check(ptcore.isin, el.t(), ptcore.tensor([2, 6, 9]), invert=True)
    check(ptcore.isin, el, ptcore.tensor([], dtype=ptcore.int64))
    check(ptcore.isin, ptcore.tensor([0.0, -0.0, float("nan")]), ptcore.tensor([0.0, float("nan")]))
    x = _rand(3, 4)
    check(ptcore.repeat_interleave, x, ptcore.tensor([1, 0, 2]), dim=0, grad=True)
    check(ptcore.repeat_interleave, x, ptcore.tensor([2, 1, 0, 3]), dim=1)
    check(ptcore.repeat_interleave, ptcore.tensor([0, 3, 1]))
    check(lambda t: t.repeat_interleave(2), x.t())


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.int64])
def test_unique_dim(dtype):
    x = ptcore.tensor([[1, 2, 1], [0, 5, 1], [1, 2, 1], [0, 5, 0], [1, 2, 1]]).to(dtype)
    for dim in (0, 1, -1):
        check(lambda t: ptcore.unique(t, dim=dim, return_inverse=True, return_counts=True), x)
    check(lambda t: ptcore.unique(t, dim=0), x.t().contiguous().t())
    check(lambda t: ptcore.unique_consecutive(t, dim=0, return_inverse=True, return_counts=True),
          x)
    check(lambda t: ptcore.unique(t, dim=1, sorted=False), x.reshape(3, 5))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(dtype, interpolation):
    x = _rand(4, 9, dtype=dtype, seed=6)
    q = ptcore.tensor([0.0, 0.1, 0.5, 0.77, 1.0], dtype=dtype)
    check(ptcore.quantile, x, q, dim=1, interpolation=interpolation)
    check(ptcore.quantile, x.t(), 0.3, dim=0, keepdim=True, interpolation=interpolation)
    check(ptcore.quantile, x, 0.25, interpolation=interpolation)
    y = x.clone()
    y[1, 3] = float("nan")
    y[2] = float("nan")
    check(ptcore.quantile, y, q, dim=1, interpolation=interpolation)
    check(ptcore.nanquantile, y, q, dim=1, interpolation=interpolation)
    check(ptcore.nanquantile, y, 0.6, interpolation=interpolation)


def test_quantile_grad():
    check(ptcore.quantile, _rand(3, 7), ptcore.tensor([0.2, 0.9]), dim=1, grad=True)


# ---------------------------------------------------------------------------
# nn.functional and friends (composites that now run on every device)

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode):
    x = _rand(2, 3, 5, 6)
    check(F.pad, x, (1, 2, 2, 1), mode=mode, grad=True)
    check(F.pad, x[0, :, :, ::2], (2, 1), mode=mode, grad=True)
    check(F.pad, x, (-1, 2, 0, 1), mode=mode)
    check(F.pad, _rand(1, 2, 3, 4, 5), (1, 1, 1, 0, 0, 2), mode=mode)
    if mode == "constant":
        check(F.pad, x, (1, 1), value=2.5)
        check(ptcore.constant_pad_nd, x, (1, -1, 2, 0), 1.5)


@pytest.mark.parametrize("mode,ndim,align", [
    ("nearest", 1, None), ("nearest", 2, None), ("nearest-exact", 2, None), ("linear", 1, False),
    ("linear", 1, True), ("bilinear", 2, False), ("bilinear", 2, True), ("bicubic", 2, False),
    ("trilinear", 3, True), ("area", 2, None), ("nearest", 3, None),
])
def test_interpolate(mode, ndim, align):
    x = _rand(*((2, 3) + (5, 4, 3)[:ndim]), dtype=ptcore.float64)
    check(F.interpolate, x, scale_factor=2, mode=mode, align_corners=align, grad=True)
    check(F.interpolate, x, size=(3, 6, 2)[:ndim], mode=mode, align_corners=align, grad=True)


def test_interpolate_antialias_and_upsample():
    x = _rand(1, 2, 8, 7)
    check(F.interpolate, x, size=(3, 4), mode="bilinear", antialias=True, grad=True)
    check(F.interpolate, x, size=(5, 3), mode="bicubic", antialias=True)
    check(F.upsample_nearest, x, scale_factor=2)
    check(F.upsample_bilinear, x, size=(4, 4))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding_mode, align):
    x = _rand(2, 3, 5, 6, dtype=ptcore.float64)
    grid = _rand(2, 4, 3, 2, dtype=ptcore.float64, seed=3, lo=-1.2, hi=1.2)
    check(F.grid_sample, x, grid, mode=mode, padding_mode=padding_mode, align_corners=align,
          grad=mode != "nearest")


def test_grid_sample_3d_and_affine_grid():
    x = _rand(1, 2, 3, 4, 5, dtype=ptcore.float64)
    grid = _rand(1, 2, 3, 2, 3, dtype=ptcore.float64, seed=4, lo=-1, hi=1)
    check(F.grid_sample, x, grid, align_corners=False, grad=True)
    theta = _rand(2, 2, 3, dtype=ptcore.float64, seed=5, lo=-1, hi=1)
    check(F.affine_grid, theta, [2, 3, 4, 5], align_corners=False, grad=True)
    check(F.affine_grid, _rand(1, 3, 4, dtype=ptcore.float64), [1, 1, 2, 3, 4], align_corners=True)


def test_shuffles_and_unpool():
    x = _rand(2, 8, 3, 4)
    check(F.pixel_shuffle, x, 2, grad=True)
    check(F.pixel_unshuffle, _rand(2, 2, 4, 6), 2, grad=True)
    check(F.channel_shuffle, x, 4)
    check(ptcore.native_channel_shuffle, x, 2)
    check(ptcore.pixel_shuffle, x.transpose(2, 3), 2)
    out, idx = F.max_pool2d(_rand(1, 2, 4, 6), 2, return_indices=True)
    check(F.max_unpool2d, out, idx, 2, grad=True)
    out, idx = F.max_pool1d(_rand(2, 3, 8), 2, return_indices=True)
    check(F.max_unpool1d, out, idx, 2, output_size=[9])


@pytest.mark.parametrize("dtype", FLOATS)
def test_fractional_max_pool(dtype):
    x = _rand(2, 3, 7, 6, dtype=dtype)
    smp = _rand(2, 3, 2, dtype=dtype, seed=3, lo=0, hi=1)
    check(lambda t, r: F.fractional_max_pool2d(t, 2, output_size=(4, 3), return_indices=True,
                                               _random_samples=r), x, smp, grad=True)
    x3 = _rand(1, 2, 5, 6, 5, dtype=dtype)
    smp3 = _rand(1, 2, 3, dtype=dtype, seed=4, lo=0, hi=1)
    check(lambda t, r: F.fractional_max_pool3d(t, (2, 3, 2), output_ratio=0.5,
                                               _random_samples=r), x3, smp3)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    w = _rand(10, 3)
    idx = ptcore.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offs = ptcore.tensor([0, 3, 3, 6])
    check(F.embedding_bag, idx, w, offs, mode=mode, grad=True)
    check(F.embedding_bag, idx.reshape(2, 4), w, mode=mode, grad=True)
    check(F.embedding_bag, idx, w, ptcore.tensor([0, 2, 5, 8]), mode=mode, include_last_offset=True)
    check(F.embedding_bag, idx, w, offs, mode=mode, padding_idx=4)
    if mode == "sum":
        check(F.embedding_bag, idx, w, offs, mode=mode, per_sample_weights=_rand(8, seed=3),
              grad=True)
    with pytest.raises(RuntimeError, match="idx"):     # (torch's type, as on the CPU)
        F.embedding_bag(ptcore.tensor([1, 12], device="cuda"), w.cuda(), ptcore.tensor([0], device="cuda"))


def test_embedding_bag_and_embedding_max_norm():
    w = _rand(6, 4) * 3
    idx = ptcore.tensor([1, 2, 4, 1])
    wc, wd = w.clone(), w.cuda()
    r = F.embedding_bag(idx, wc, ptcore.tensor([0, 2]), max_norm=1.0)
    d = F.embedding_bag(idx.cuda(), wd, ptcore.tensor([0, 2], device="cuda"), max_norm=1.0)
    _same(d, r)
    _same(wd, wc)                                  # the referenced rows renormalised in place
    wc, wd = w.clone(), w.cuda()
    _same(F.embedding(idx.cuda(), wd, max_norm=1.5), F.embedding(idx, wc, max_norm=1.5))
    _same(wd, wc)
    table = ptcore.arange(12).reshape(6, 2)
    _same(F.embedding(idx.cuda(), table.cuda()), F.embedding(idx, table))


@pytest.mark.parametrize("dtype", FLOATS)
def test_distances_and_cross(dtype):
    a, b = _rand(2, 4, 3, dtype=dtype), _rand(2, 5, 3, dtype=dtype, seed=1)
    check(ptcore.cdist, a, b, grad=True)
    check(ptcore.cdist, a, b, p=1.0, grad=True)
    check(ptcore.cdist, _rand(30, 3, dtype=dtype), _rand(27, 3, dtype=dtype, seed=2))   # matmul form
    check(F.pdist, _rand(5, 3, dtype=dtype), grad=True)
    check(ptcore.cross, a, a.flip(1), dim=2, grad=True)
    check(ptcore.linalg.cross, _rand(3, 4, dtype=dtype).t(), _rand(1, 3, dtype=dtype, seed=7),
          grad=True)
    check(ptcore.linalg.cross, ptcore.tensor([[1, 2, 3]]), ptcore.tensor([[4, 5, 7]]))
    with pytest.raises(RuntimeError, match="length 3"):
        ptcore.linalg.cross(a.cuda(), a.cuda(), dim=1)


def test_losses_and_activations():
    x = _rand(3, 4)
    check(F.multi_margin_loss, x, ptcore.tensor([0, 3, 1]), grad=True)
    check(F.multilabel_margin_loss, x, ptcore.tensor([[1, 0, -1, 2]] * 3), grad=True)
    check(F.triplet_margin_with_distance_loss, x, _rand(3, 4, seed=1), _rand(3, 4, seed=2),
          grad=True)
    check(F.one_hot, ptcore.tensor([0, 3, 1]), num_classes=5)
    check(ptcore.selu, x, grad=True)
    check(ptcore.celu, x, 0.5, grad=True)
    check(ptcore.hardshrink, x, grad=True)
    check(ptcore.threshold, x, 0.1, 20.0)
    check(ptcore.prelu, _rand(2, 3, 4), _rand(3, seed=1), grad=True)
    check(ptcore.kl_div, x.log_softmax(1), _rand(3, 4, seed=1).softmax(1), grad=True)
    check(ptcore.native_layer_norm, x, [4], _rand(4), _rand(4, seed=1), 1e-5, grad=True)
    check(F.bilinear, _rand(2, 3), _rand(2, 4, seed=1), _rand(5, 3, 4, seed=2), _rand(5, seed=3),
          grad=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_ctc_loss(dtype):
    lp = _rand(7, 3, 5, dtype=dtype, seed=4).log_softmax(2)
    padded = ptcore.tensor([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    concat = ptcore.tensor([1, 2, 2, 3, 1])
    tol = 1e-5 if dtype is ptcore.float32 else None
    check(F.ctc_loss, lp, padded, [7, 6, 0], [3, 2, 0], reduction="none", zero_infinity=True,
          grad=True, tol=tol)
    check(F.ctc_loss, lp, concat, [2, 7, 5], [3, 2, 0], reduction="sum", zero_infinity=True,
          grad=True, tol=tol)
    check(F.ctc_loss, lp, padded, ptcore.tensor([7, 6, 5]), ptcore.tensor([3, 2, 1]), grad=True,
          tol=tol)
    check(F.ctc_loss, lp[:, 0], padded[0], [7], [3])                      # unbatched
    with pytest.raises(RuntimeError, match="target labels"):
        F.ctc_loss(lp.cuda(), (padded + 3).cuda(), [7, 7, 7], [3, 2, 1])


def test_stft_istft():
    sig = _rand(2, 40, dtype=ptcore.float64)
    win = ptcore.hann_window(8, dtype=ptcore.float64)
    spec = check(lambda s, w: ptcore.view_as_real(ptcore.stft(s, 8, hop_length=2, window=w,
                                                              return_complex=True)), sig, win)
    check(lambda s, w: ptcore.istft(ptcore.stft(s, 8, hop_length=2, window=w, return_complex=True),
                                    8, hop_length=2, window=w, length=40), sig, win)
    assert spec.shape[-1] == 2


# ---------------------------------------------------------------------------
# pointwise leftovers and errors

@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.int64])
def test_special_closed_forms(dtype):
    import ptcore.special as S
    x = ptcore.tensor([-30.0, -3.0, -1e-3, 0.0, 0.5, 2.0, 40.0, float("nan"), float("inf")])
    x = x.to(dtype) if dtype.is_floating_point else ptcore.tensor([-3, 0, 2, 5])
    tol = 2e-3 if dtype is ptcore.float16 else None
    check(S.ndtr, x, tol=tol)
    check(S.entr, x, tol=tol)
    check(S.xlog1py, x, x.flip(0).abs(), tol=tol)
    check(S.xlog1py, 2.0, x.abs(), tol=tol)
    if dtype is not ptcore.float16:
        check(S.spherical_bessel_j0, x)
    if dtype is ptcore.float64:
        pos = x[4:7]
        check(S.ndtr, pos, grad=True)
        check(S.entr, pos, grad=True)
        check(S.xlog1py, pos - 1, pos, grad=True)


def test_integer_max_pool():
    x = (_rand(2, 3, 6, 7, seed=3) * 10).to(ptcore.int64)
    check(F.max_pool2d, x, 2)
    check(lambda t: F.max_pool2d(t, 3, stride=2, padding=1, return_indices=True), x)
    # (torch's CPU 1-d max pooling without indices takes floating types only, its
    # CUDA one and the pooling with indices integers too)
    check(lambda t: F.max_pool1d(t, 2, return_indices=True), x[0])
    _same(F.max_pool1d(x[0].cuda(), 2), F.max_pool1d(x[0], 2, return_indices=True)[0])
    # adaptive max pooling: floating types only on both devices, as torch's kernels
    for t in (x.to(ptcore.int32), x.to(ptcore.int32).cuda()):
        with pytest.raises(NotImplementedError, match="adaptive_max_pool2d"):
            F.adaptive_max_pool2d(t, (2, 3))

@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.int64])
def test_div_rounding_modes(dtype):
    a = ptcore.tensor([7, -7, 5, -5, 9]).to(dtype)
    b = ptcore.tensor([2, 2, -3, -3, 4]).to(dtype)
    for mode in ("trunc", "floor"):
        check(ptcore.div, a, b, rounding_mode=mode)
        check(ptcore.div, a, 3, rounding_mode=mode)
        x, y = a.clone(), a.cuda()
        x.div_(b, rounding_mode=mode)
        y.div_(b.cuda(), rounding_mode=mode)
        _same(y, x)


def test_comparisons_lcm_and_samplers():
    x = _rand(3, 4)
    assert ptcore.allclose(x.cuda(), (x + 1e-9).cuda())
    assert not ptcore.allclose(x.cuda(), (x + 1).cuda())
    assert ptcore.equal(x.cuda(), x.cuda().clone()) and not ptcore.equal(x.cuda(), x.cuda()[:2])
    assert x.cuda().equal(x.cuda()) and not x.cuda().equal(x.cuda() * 2)
    a, b = ptcore.tensor([4, 6, 0, -9, 7]), ptcore.tensor([6, 4, 5, 6, 0])
    check(ptcore.lcm, a, b)
    check(ptcore.gcd, a, b)
    for meth, args in (("log_normal_", (0.5, 0.3)), ("cauchy_", (1.0, 2.0)), ("geometric_", (0.3,))):
        ptcore.manual_seed(5)
        r = getattr(ptcore.empty(4, 5), meth)(*args)
        ptcore.manual_seed(5)
        d = getattr(ptcore.empty(4, 5, device="cuda"), meth)(*args)
        _same(d, r)
    # igamma/igammac run on CUDA (wide ranges and edges: test_special_cuda.py)
    check(ptcore.igamma, x.abs() + 0.5, x[:1].abs() + 0.25, tol=1e-6)
    check(ptcore.igammac, x.abs().double() + 0.5, x.abs().double() + 0.25)


# ---------------------------------------------------------------------------
# multi-block reductions of long rows, the bitonic/merge sort

@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.int32,
                                   ptcore.bool])
def test_two_pass_reductions(dtype, monkeypatch):
    from ptcore.cuda.ops import reduce as R
    monkeypatch.setattr(R, "_SPLIT_MIN", 1000)         # small rows take the two-pass path too
    monkeypatch.setattr(R, "_CHUNK_MIN", 256)
    monkeypatch.setattr(R, "_SPLIT_CHUNKS", 16)
    assert R._chunk(20_011) == 2048                    # 9 full chunks and a tail
    x = _rand(20_011, seed=8, lo=-1, hi=3)
    x = (x > 1) if dtype is ptcore.bool else x.to(dtype)
    tol = 2e-3 if dtype is ptcore.float16 else 1e-5
    for op in ("sum", "mean", "amax", "amin", "all", "any", "count_nonzero", "nansum", "prod"):
        fn = getattr(ptcore, op)
        try:
            ref = fn(x)
        except RuntimeError:                           # (mean of integers)
            continue
        got = fn(x.cuda())
        assert got.dtype == ref.dtype
        assert ptcore.allclose(got.cpu().double(), ref.double(), rtol=tol, atol=tol, equal_nan=True), op
        assert ptcore.equal(fn(x.cuda()).cpu(), got.cpu()) or op == "prod"    # deterministic
    two = _rand(3, 5000, seed=9).to(dtype) if dtype is not ptcore.bool else x[:15000].reshape(3, 5000)
    _same(ptcore.sum(two.cuda(), 1), ptcore.sum(two, 1), tol)          # few long rows
    _same(ptcore.sum(two.cuda().t(), 0), ptcore.sum(two.t(), 0), tol)


def test_two_pass_first_pass_block_size(monkeypatch):
    """The first pass of a long reduction runs ``_SPLIT_BLOCK``-thread blocks
    (128: 256 measured slower on the H200), the second the rows' 128."""
    from ptcore.cuda.ops import launch as L
    from ptcore.cuda.ops import reduce as R
    seen = []
    real = L.launch_function

    def spy(drv, fn, grid, block, *rest):
        seen.append(block)
        return real(drv, fn, grid, block, *rest)

    monkeypatch.setattr(L, "launch_function", spy)
    x = _rand(70_001, seed=8)                          # 17 chunks of 4096 and a tail
    xc = x.cuda()
    got = ptcore.sum(xc)
    assert seen == [R._SPLIT_BLOCK, R._SPLIT_BLOCK, 128] and R._SPLIT_BLOCK == 128
    assert abs(float(got) - float(ptcore.sum(x.double()))) < 1e-3


@pytest.mark.parametrize("dtype,n", [
    (ptcore.float32, 1), (ptcore.float32, 37), (ptcore.float32, 4096), (ptcore.float32, 9000),
    (ptcore.float64, 9000), (ptcore.bfloat16, 300), (ptcore.int64, 37), (ptcore.int64, 9000),
    (ptcore.uint8, 5000), (ptcore.bool, 37), (ptcore.bool, 4500),
])
def test_sort_bitonic_and_merge(dtype, n):
    x = _rand(2, n, seed=n, lo=-3, hi=3)
    if dtype in (ptcore.int64, ptcore.uint8):
        x = (x.abs() * 2).to(dtype)                     # many ties: stability shows
    elif dtype is ptcore.bool:
        x = x > 0
    else:
        x = x.to(dtype)
        x[0, ::5] = float("nan")
    for desc in (False, True):
        check(lambda t: ptcore.sort(t, dim=1, descending=desc, stable=True), x)
        check(lambda t: ptcore.sort(t, dim=0, descending=desc, stable=True), x.t())
    if n > 3 and dtype is not ptcore.bool:
        # among equal values topk may pick any index (the CPU kernel picks
        # torch's CPU ones, the device kernel its own, as torch's devices
        # differ): the values agree and each index holds its value
        check(lambda t: ptcore.topk(t, 3, dim=1).values, x)
        got = ptcore.topk(x.to("cuda"), 3, dim=1)
        picked = x.gather(1, got.indices.cpu())
        assert ptcore.equal(picked.isnan(), got.values.cpu().isnan())
        ok = (picked == got.values.cpu()) | picked.isnan()
        assert bool(ok.all())


def test_sort_grad_and_argsort():
    x = _rand(3, 50, seed=2)
    check(lambda t: ptcore.sort(t, 1).values, x, grad=True)
    check(lambda t: ptcore.argsort(t, dim=0, descending=True, stable=True), x)


def test_coverage_sweep_tool():
    """The sweep tool itself: the ops above come out OK (or raise no
    NotImplementedError) on the emulated device."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tools"))
    try:
        import cuda_coverage
    finally:
        sys.path.pop(0)
    rows = cuda_coverage.sweep({"kron", "einsum", "baddbmm", "histc", "quantile", "pad",
                                "interpolate", "embedding_bag", "searchsorted", "cdist", "poisson",
                                "binomial", "scatter_reduce", "index_put", "masked_scatter"})
    assert rows and all(st == "OK" for _, st, _ in rows), rows
