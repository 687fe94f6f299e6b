"""tril/triu and flip on CUDA: one kernel each (tril/triu used to build a
mask from two aranges copied from the host, flip ran one index_select per
dim over an arange), compared with the CPU ops bit for bit, on every dtype,
strided inputs, in-place writes into views, and tensors whose dims do not
collapse to the strided kernels' limit (the contiguous fallbacks; their
host copies back and forth had no fallback either)."""
import pytest

import ptcore

DTYPES = [ptcore.bool, ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64,
          ptcore.float16, ptcore.bfloat16, ptcore.float32, ptcore.float64, ptcore.complex64,
          ptcore.complex128]


def _data(dtype, shape=(3, 4, 5, 6), seed=0):
    g = ptcore.Generator().manual_seed(seed)
    x = ptcore.randn(shape, generator=g, dtype=ptcore.float64) * 5
    if dtype.is_complex:
        return ptcore.complex(x, x.flip(-1)).to(dtype)
    if dtype is ptcore.bool:
        return x > 0
    if not dtype.is_floating_point:
        x = x.abs() if dtype is ptcore.uint8 else x
    return x.to(dtype)


def _views(x):
    return [x, x.transpose(0, 2), x[:, ::2, 1:], x.permute(3, 1, 0, 2)]


def _kernels(monkeypatch):
    from ptcore.cuda.ops import launch as L
    names = []
    real = L._launch

    def spy(idx, name, *rest, **kw):
        names.append(name)
        return real(idx, name, *rest, **kw)

    monkeypatch.setattr(L, "_launch", spy)
    return names


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tril_triu(dtype):
    x = _data(dtype)
    for v, vc in zip(_views(x), _views(x.cuda())):
        for d in (-7, -3, -1, 0, 2, 7):
            assert ptcore.equal(vc.tril(d).cpu(), v.tril(d)), d
            assert ptcore.equal(vc.triu(d).cpu(), v.triu(d)), d


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tri_inplace_on_views(dtype):
    x = _data(dtype, seed=1)
    xc = x.cuda()
    xc.transpose(1, 3)[:, 1:].tril_(1)
    ref = x.clone()
    ref.transpose(1, 3)[:, 1:].tril_(1)
    assert ptcore.equal(xc.cpu(), ref)
    xc = x.cuda()
    xc[:, ::2].triu_(-1)
    ref = x.clone()
    ref[:, ::2].triu_(-1)
    assert ptcore.equal(xc.cpu(), ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_flip(dtype):
    x = _data(dtype, seed=2)
    for v, vc in zip(_views(x), _views(x.cuda())):
        for dims in ((0,), (1, 3), (0, 1, 2, 3), (-1,), ()):
            got = vc.flip(dims)
            assert got.device.type == "cuda"
            assert ptcore.equal(got.cpu(), v.flip(dims)), dims


def test_one_kernel_each(monkeypatch):
    x = _data(ptcore.float32).cuda().transpose(0, 2)
    names = _kernels(monkeypatch)
    x.flip(0, 2)
    assert names == ["ptc_cast_f32_f32_s"]
    names.clear()
    y = x.clone()
    names.clear()
    y.tril_(1)
    assert names == ["ptc_index_tri_zero_b4_s"]


def test_gradients_through_flip_and_tril():
    x = _data(ptcore.float64, seed=3)
    xc = x.cuda().requires_grad_()
    xr = x.clone().requires_grad_()
    w = _data(ptcore.float64, seed=4)
    (xc.flip(1, 2).tril(1) * w.cuda()).sum().backward()
    (xr.flip(1, 2).tril(1) * w).sum().backward()
    assert ptcore.equal(xc.grad.cpu(), xr.grad)


def test_more_dims_than_the_strided_kernels_take():
    x = _data(ptcore.float32, shape=(2,) * 10, seed=5)
    perm = list(range(10))[::-1]
    v, vc = x.permute(*perm), x.cuda().permute(*perm)
    # device -> host copies of such a view (went to a cast kernel that refused it)
    assert ptcore.equal(vc.cpu(), v)
    assert ptcore.equal(vc.double().cpu(), v.double())
    q = ptcore.empty((2,) * 10, device="cuda").permute(*perm)
    q.copy_(v)                                  # host -> device into such a view
    assert ptcore.equal(q.cpu(), v)
    for dims in ((0, 3, 9), (0, 2, 4, 6, 8)):
        assert ptcore.equal(vc.flip(dims).cpu(), v.flip(dims))
        assert ptcore.equal(x.cuda().flip(dims).cpu(), x.flip(dims))
    assert ptcore.equal(vc.tril(0).cpu(), v.tril(0))
    z = x.cuda()
    z.permute(*perm).triu_(1)
    ref = x.clone()
    ref.permute(*perm).triu_(1)
    assert ptcore.equal(z.cpu(), ref)
