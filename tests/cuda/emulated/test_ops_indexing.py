"""Indexing, masking, concatenation, where/clamp and sorting on CUDA tensors
(emulated device), every result compared with the CPU op on the same
values: dtypes, non-contiguous inputs, broadcasting, out=, in-place and
gradients."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _rand(shape, dtype=ptcore.float32, seed=0):
    g = ptcore.Generator().manual_seed(seed)
    return (ptcore.rand(*shape, generator=g) * 8 - 4).to(dtype)


def _same(dev, cpu):
    got = dev.cpu()
    assert got.dtype == cpu.dtype and tuple(got.shape) == tuple(cpu.shape)
    assert got.tolist() == cpu.tolist() or ptcore.equal(got, cpu) or (
        cpu.dtype.is_floating_point and ptcore.allclose(got, cpu, equal_nan=True))


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.int64])
def test_where_clamp_masked_fill(dtype):
    x = _rand((4, 6), dtype, 1)
    y = _rand((6,), dtype, 2)
    xc, yc = x.cuda(), y.cuda()
    _same(ptcore.where(xc > 0, xc, yc), ptcore.where(x > 0, x, y))
    _same(ptcore.where(xc.t() > 0, xc.t(), 1), ptcore.where(x.t() > 0, x.t(), 1))     # strided + scalar
    _same(ptcore.clamp(xc, -1, 2), ptcore.clamp(x, -1, 2))
    _same(ptcore.clamp(xc, min=yc), ptcore.clamp(x, min=y))
    _same(xc.clamp(max=yc[:1]), x.clamp(max=y[:1]))
    _same(xc.masked_fill(xc < 0, 7), x.masked_fill(x < 0, 7))
    a, b = xc.clone(), x.clone()
    a.masked_fill_(yc > 0, 3)
    b.masked_fill_(y > 0, 3)
    _same(a, b)
    a.clamp_(0, 1)
    b.clamp_(0, 1)
    _same(a, b)
    out = ptcore.empty(4, 6, dtype=dtype, device="cuda")      # (device tensors do not grow by resize_)
    ptcore.where(xc > 1, xc, yc, out=out)
    _same(out, ptcore.where(x > 1, x, y))


def test_where_clamp_nan_and_grad():
    x = ptcore.tensor([[1.0, float("nan"), -3.0], [0.5, 2.0, -0.1]])
    _same(ptcore.clamp(x.cuda(), -1, 1), ptcore.clamp(x, -1, 1))
    xs = [x.clone().requires_grad_(), x.cuda().requires_grad_()]
    for t in xs:
        (ptcore.where(t > 0, t * 2, t.clamp(-1, 1)).nan_to_num().sum() if False else
         ptcore.where(t > 0, t * 2, t.clamp(-1, 1)).sum()).backward()
    _same(xs[1].grad, xs[0].grad)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.bfloat16, ptcore.int32, ptcore.bool])
def test_gather_scatter_index_select(dtype):
    x = _rand((4, 5), ptcore.float32, 3)
    x = (x > 0) if dtype is ptcore.bool else x.to(dtype)
    idx = ptcore.tensor([[0, 4, 1], [3, 3, 2], [1, 0, 0], [2, 2, 4]])
    xc, ic = x.cuda(), idx.cuda()
    _same(ptcore.gather(xc, 1, ic), ptcore.gather(x, 1, idx))
    _same(ptcore.gather(xc.t(), 0, ic[:3, :3].t()), ptcore.gather(x.t(), 0, idx[:3, :3].t()))
    _same(ptcore.index_select(xc, 1, ic[0]), ptcore.index_select(x, 1, idx[0]))
    _same(xc.index_select(0, ic[:, 0]), x.index_select(0, idx[:, 0]))
    src = x[:, :3].contiguous()
    perm = ptcore.tensor([[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]])
    _same(ptcore.zeros_like(xc).scatter(1, perm.cuda(), src.cuda()), ptcore.zeros_like(x).scatter(1, perm, src))
    _same(xc.scatter(1, perm.cuda(), 1), x.scatter(1, perm, 1))
    if dtype is not ptcore.bool:
        _same(xc.scatter_add(1, ic[:, :3], src.cuda()), x.scatter_add(1, idx[:, :3], src))
        _same(xc.index_add(0, ptcore.tensor([1, 1, 3]).cuda(), xc[:3]),
              x.index_add(0, ptcore.tensor([1, 1, 3]), x[:3]))
        _same(xc.scatter_reduce(1, ic[:, :3], src.cuda(), "sum"), x.scatter_reduce(1, idx[:, :3], src, "sum"))
    _same(xc.index_copy(0, ptcore.tensor([2, 0]).cuda(), xc[:2]), x.index_copy(0, ptcore.tensor([2, 0]), x[:2]))
    _same(xc.index_fill(1, ptcore.tensor([0, 3]).cuda(), 1), x.index_fill(1, ptcore.tensor([0, 3]), 1))
    _same(ptcore.take(xc, ptcore.tensor([[0, 19], [7, -1]]).cuda()), ptcore.take(x, ptcore.tensor([[0, 19], [7, -1]])))
    a, b = xc.clone(), x.clone()
    a.put_(ptcore.tensor([1, 6]).cuda(), xc[0, :2].clone())
    b.put_(ptcore.tensor([1, 6]), x[0, :2].clone())
    _same(a, b)


def test_index_errors():
    xc = ptcore.zeros(3, 4, device="cuda")
    with pytest.raises((IndexError, RuntimeError)):
        ptcore.gather(xc, 1, ptcore.tensor([[4]], device="cuda"))
    with pytest.raises((IndexError, RuntimeError)):
        xc.index_select(0, ptcore.tensor([3], device="cuda"))
    with pytest.raises(IndexError):
        xc[ptcore.tensor([5], device="cuda")]
    with pytest.raises(RuntimeError, match="out of bounds"):
        xc.scatter_reduce(1, ptcore.tensor([[9]], device="cuda"), xc[:1, :1], "prod")
    with pytest.raises(IndexError):
        ptcore.take(xc, ptcore.tensor([12], device="cuda"))
    with pytest.raises(IndexError):
        ptcore.unique(xc, dim=2)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.int64, ptcore.float16])
def test_advanced_getitem_setitem(dtype):
    x = _rand((4, 5, 3), dtype, 4)
    xc = x.cuda()
    i = ptcore.tensor([0, 3, -1])
    j = ptcore.tensor([[1], [4]])
    m = x[..., 0] > 0
    for key_c, key in [((i.cuda(),), (i,)), ((slice(None), j.cuda()), (slice(None), j)),
                       ((i.cuda(), slice(1, 3), ptcore.tensor([0, 2, 1]).cuda()),
                        (i, slice(1, 3), ptcore.tensor([0, 2, 1]))),
                       ((m.cuda(),), (m,)), ((Ellipsis, ptcore.tensor([2, 0]).cuda()), (Ellipsis, ptcore.tensor([2, 0])))]:
        _same(xc[key_c], x[key])
    _same(xc.transpose(0, 2)[ptcore.tensor([1, 0]).cuda()], x.transpose(0, 2)[ptcore.tensor([1, 0])])
    _same(xc[[0, 2], [1, 1]], x[[0, 2], [1, 1]])
    a, b = xc.clone(), x.clone()
    a[i.cuda()] = 5
    b[i] = 5
    _same(a, b)
    a[m.cuda()] = xc[m.cuda()] * 0
    b[m] = x[m] * 0
    _same(a, b)
    a[:, j.cuda()] = xc[:, :1, None, :]
    b[:, j] = x[:, :1, None, :]
    _same(a, b)
    a.index_put_((ptcore.tensor([0, 0, 1]).cuda(),), xc[:3], accumulate=True)
    b.index_put_((ptcore.tensor([0, 0, 1]),), x[:3], accumulate=True)
    _same(a, b)
    _same(ptcore.masked_select(xc, xc > 0), ptcore.masked_select(x, x > 0))
    _same(ptcore.masked_select(xc, (xc > 0)[0]), ptcore.masked_select(x, (x > 0)[0]))   # broadcast mask


def test_nonzero_argwhere():
    x = _rand((3, 4, 2), ptcore.float32, 5)
    x[x.abs() < 2] = 0
    for t in (x, x.transpose(0, 2), x[0], x.reshape(-1), ptcore.zeros(2, 3)):
        _same(t.cuda().nonzero(), t.nonzero())
        _same(ptcore.argwhere(t.cuda()), ptcore.argwhere(t))
    a = ptcore.nonzero(x.cuda(), as_tuple=True)
    b = ptcore.nonzero(x, as_tuple=True)
    for p, q in zip(a, b):
        _same(p, q)


def test_advanced_index_grad():
    x = _rand((4, 3), ptcore.float32, 6)
    i = ptcore.tensor([0, 2, 2])
    res = []
    for t, ii in ((x.clone().requires_grad_(), i), (x.cuda().requires_grad_(), i.cuda())):
        y = (t[ii] * 2).sum() + t[t > 0].sum() + ptcore.gather(t, 1, ii[:, None][:2]).sum() \
            + t.index_select(0, ii).pow(2).sum()
        y.backward()
        res.append(t.grad)
    _same(res[1], res[0])


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.bfloat16, ptcore.int16])
def test_cat_stack_split_flip(dtype):
    a = _rand((2, 3), dtype, 7)
    b = _rand((4, 3), dtype, 8)
    ac, bc = a.cuda(), b.cuda()
    _same(ptcore.cat([ac, bc]), ptcore.cat([a, b]))
    _same(ptcore.cat([ac.t(), bc.t()], 1), ptcore.cat([a.t(), b.t()], 1))
    _same(ptcore.cat([ac, bc.to(ptcore.float64)]), ptcore.cat([a, b.to(ptcore.float64)]))  # promotion
    _same(ptcore.stack([ac, bc[:2]], 1), ptcore.stack([a, b[:2]], 1))
    _same(ptcore.hstack([ac, bc[1:3]]), ptcore.hstack([a, b[1:3]]))
    out = ptcore.empty(2, 6, dtype=dtype, device="cuda")
    ptcore.cat([ac, ac], dim=-1, out=out)
    _same(out, ptcore.cat([a, a], dim=-1))
    for p, q in zip(ptcore.split(bc, [1, 3]), ptcore.split(b, [1, 3])):
        _same(p.contiguous(), q.contiguous())
    _same(ptcore.flip(bc, [0, 1]), ptcore.flip(b, [0, 1]))
    _same(bc.t().flip(1), b.t().flip(1))


def test_cat_stack_grad():
    a, b = _rand((2, 3), seed=9), _rand((1, 3), seed=10)
    grads = []
    for dev in ("cpu", "cuda"):
        x, y = a.to(dev, copy=True).requires_grad_(), b.to(dev, copy=True).requires_grad_()
        (ptcore.cat([x, y]) * ptcore.arange(9.0, device=dev).reshape(3, 3)).sum().backward()
        (ptcore.stack([x[0], y[0]]) ** 2).sum().backward()
        grads.append((x.grad, y.grad))
    _same(grads[1][0], grads[0][0])
    _same(grads[1][1], grads[0][1])


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float16, ptcore.int64, ptcore.uint8])
def test_sort_argsort_topk_kthvalue(dtype):
    x = (_rand((3, 7), ptcore.float32, 11) * 10).to(dtype)       # ties for the integer types
    xc = x.cuda()
    for dim in (0, 1, -1):
        for desc in (False, True):
            v, i = ptcore.sort(xc, dim=dim, descending=desc, stable=True)
            v0, i0 = ptcore.sort(x, dim=dim, descending=desc, stable=True)
            _same(v, v0)
            _same(i, i0)
    _same(xc.t().argsort(), x.t().argsort(stable=True))
    if dtype is not ptcore.uint8:
        y = _rand((3, 7), ptcore.float32, 12).to(dtype) if dtype.is_floating_point else \
            ptcore.randperm(21, generator=ptcore.Generator().manual_seed(1)).reshape(3, 7).to(dtype)
        for largest in (True, False):
            v, i = ptcore.topk(y.cuda(), 3, largest=largest)
            v0, i0 = ptcore.topk(y, 3, largest=largest)
            _same(v, v0)
            _same(i, i0)
        v, i = ptcore.kthvalue(y.cuda(), 2, 0, keepdim=True)
        v0, i0 = ptcore.kthvalue(y, 2, 0, keepdim=True)
        _same(v, v0)
        _same(i, i0)


def test_sort_nan_and_median():
    x = ptcore.tensor([[3.0, float("nan"), 1.0, 2.0, 1.0], [float("nan")] * 2 + [0.0, -1.0, 5.0]])
    for desc in (False, True):
        v, i = ptcore.sort(x.cuda(), descending=desc, stable=True)
        v0, i0 = ptcore.sort(x, descending=desc, stable=True)
        _same(v, v0)
        _same(i, i0)
    y = _rand((4, 5), ptcore.float32, 13)
    for t in (x, y, y.t()):
        for fn in (ptcore.median, ptcore.nanmedian):
            a, b = fn(t.cuda(), 1), fn(t, 1)
            _same(a.values, b.values)
            _same(a.indices, b.indices)
            _same(fn(t.cuda()), fn(t))
    # (rows without NaN: the CPU kernel follows torch's CPU kernel, whose sort makes each
    # NaN a run of its own; the device kernel's NaN runs are not compared with it)
    z = ptcore.tensor([[3.0, 1.0, 2.0, 2.0, 1.0, 5.0, 1.0], [2.0, 2.0, 1.0, 1.0, 0.0, 3.0, 0.0]])
    for t in (z, z.round().to(ptcore.int64)[:1], (z > 1.5)):
        a, b = ptcore.mode(t.cuda(), 1, keepdim=True), ptcore.mode(t, 1, keepdim=True)
        _same(a.values, b.values)
        _same(a.indices, b.indices)


def test_sort_grad():
    x = _rand((3, 4), seed=14)
    grads = []
    for dev in ("cpu", "cuda"):
        t = x.to(dev, copy=True).requires_grad_()
        v, _ = t.sort(1)
        (v * ptcore.arange(4.0, device=dev)).sum().backward()
        ptcore.topk(t, 2).values.sum().backward()
        grads.append(t.grad)
    _same(grads[1], grads[0])


def test_against_torch():
    x = _rand((5, 4), seed=15)
    tx = torch.tensor(x.tolist())
    idx = [4, 0, 2]
    assert ptcore.sort(x.cuda(), 0).values.cpu().tolist() == torch.sort(tx, 0).values.tolist()
    assert x.cuda()[idx].cpu().tolist() == tx[idx].tolist()
    assert ptcore.where(x.cuda() > 0, x.cuda(), -1.0).cpu().tolist() == torch.where(tx > 0, tx, -1.0).tolist()


def test_masked_scatter_tri_trace_roll_repeat():
    x = _rand((4, 5), ptcore.float32, 16)
    xc = x.cuda()
    m = x > 0
    src = _rand((20,), ptcore.float32, 17)
    _same(xc.masked_scatter(m.cuda(), src.cuda()), x.masked_scatter(m, src))
    for k in (-1, 0, 2):
        _same(ptcore.tril(xc, k), ptcore.tril(x, k))
        _same(ptcore.triu(xc.t(), k), ptcore.triu(x.t(), k))
    _same(ptcore.trace(xc), ptcore.trace(x))
    _same(ptcore.trace(xc.to(ptcore.int32)), ptcore.trace(x.to(ptcore.int32)))
    _same(ptcore.roll(xc, (1, -2), (0, 1)), ptcore.roll(x, (1, -2), (0, 1)))
    _same(xc.repeat(2, 1, 3), x.repeat(2, 1, 3))
    _same(ptcore.diag(xc[0]), ptcore.diag(x[0]))
    _same(ptcore.rot90(xc), ptcore.rot90(x))


def test_index_put_and_masked_select_grads():
    x = _rand((4, 5), ptcore.float32, 18)
    res = []
    for dev in ("cpu", "cuda"):
        t = x.to(dev, copy=True).requires_grad_()
        w = ptcore.arange(20.0, device=dev).reshape(4, 5)
        y = t.index_put((ptcore.tensor([0, 0]).to(dev),), t[1:3] * 2, accumulate=True)
        z = ptcore.masked_select(t, t > 0)
        ((y * w).sum() + (z * ptcore.arange(float(z.numel()), device=dev)).sum()
         + (ptcore.tril(t) * w).sum() + ptcore.logcumsumexp(t, 0).sum()).backward()
        res.append(t.grad)
    _same(res[1], res[0])


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.int64, ptcore.float64])
def test_scatter_reduce_all_reductions(dtype):
    x = (_rand((3, 6), ptcore.float32, 19) * 3).to(dtype)
    src = (_rand((3, 4), ptcore.float32, 20) * 3).to(dtype)
    idx = ptcore.tensor([[0, 0, 5, 2], [1, 3, 3, 3], [4, 4, 4, 0]])
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            _same(x.cuda().scatter_reduce(1, idx.cuda(), src.cuda(), red, include_self=inc),
                  x.scatter_reduce(1, idx, src, red, include_self=inc))
    if dtype is ptcore.float32:
        _same(x.cuda().scatter(1, idx.cuda(), src.cuda(), reduce="multiply"), x.scatter(1, idx, src, reduce="multiply"))
        # float16 products accumulate in float32 and round once (b458500, as torch's
        # CUDA kernels): the float32 product rounded, not the CPU's per-step rounding
        for inc in (True, False):
            got = x.half().cuda().scatter_reduce(1, idx.cuda(), src.half().cuda(), "prod",
                                                 include_self=inc).cpu()
            want = x.half().float().scatter_reduce(1, idx, src.half().float(), "prod",
                                                   include_self=inc).half()
            assert got.dtype is ptcore.float16
            assert ptcore.allclose(got.float(), want.float(), rtol=1e-3, atol=0)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.int64, ptcore.bool])
def test_unique(dtype):
    x = (_rand((3, 7), ptcore.float32, 21) * 2).round().to(dtype)
    for t in (x, x.t(), x[0, :0]):
        for inv in (False, True):
            for cnt in (False, True):
                a = ptcore.unique(t.cuda(), return_inverse=inv, return_counts=cnt)
                b = ptcore.unique(t, return_inverse=inv, return_counts=cnt)
                for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
                    _same(p, q)
                a = ptcore.unique_consecutive(t.cuda(), return_inverse=inv, return_counts=cnt)
                b = ptcore.unique_consecutive(t, return_inverse=inv, return_counts=cnt)
                for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
                    _same(p, q)


def test_index_range_check_is_one_kernel(launches):
    """The range check of index_select/gather/embedding/x[idx] is one kernel
    finding the first bad position and one read of it (it was 3-5 ops and
    amin+amax reads; 170-270 us an op on the H200); the error names the
    first bad value in the index's logical order, as on the CPU."""
    x = ptcore.arange(20.).reshape(5, 4)
    w = ptcore.arange(30.).reshape(10, 3)
    for fn in (lambda d, i: d.index_select(0, i), lambda d, i: ptcore.nn.functional.embedding(i, d)):
        for src in (x, w):
            i = ptcore.tensor([3, 0, 2, 1])
            del launches[:]
            got = fn(src.cuda(), i.cuda())
            assert launches.count("ptc_index_bounds_c") == 1, launches
            assert not any(k.startswith(("ptc_reduce_amax", "ptc_reduce_amin", "ptc_reduce_any")) for k in launches)
            assert ptcore.equal(got.cpu(), fn(src, i))
    bad = ptcore.tensor([[1, 9], [7, 0]]).t()          # logical order: 1, 7, 9, 0
    for dev in ("cpu", "cuda"):
        with pytest.raises(IndexError, match="index 7 is out of bounds|out of range"):
            x.to(dev)[bad.to(dev)]
        with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 0 with size 5"):
            x.to(dev).gather(0, bad.to(dev))
        with pytest.raises(IndexError, match="index out of range in self"):
            ptcore.nn.functional.embedding(ptcore.tensor([0, 12]).to(dev), w.to(dev))
