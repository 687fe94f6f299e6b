"""The host-side fast paths of the CUDA backend (issue 17) give the same
values as the general paths: elementwise ops on dense operands skip the
dimension collapsing, reductions read a dense input in place and write a
dense output of the kernel's dtype directly; anything else (broadcast,
strided, another out dtype, an out sharing the input's storage) takes the
general path.  Compared with PyTorch on the CPU."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.driver.interface import CudaError

torch = pytest.importorskip("torch")


def _pair(shape, seed=0, dtype="float32"):
    a = np.random.default_rng(seed).uniform(-3, 3, shape).astype(dtype)
    return ptcore.tensor(a).to("cuda"), torch.tensor(a)


def _eq(p, t, tol=1e-6):
    got = torch.from_numpy(np.asarray(p.cpu().numpy()))
    assert got.dtype == t.dtype and got.shape == t.shape
    assert torch.allclose(got, t, rtol=tol, atol=tol), (got, t)


def test_elementwise_dense_and_general_paths(launches):
    a, ta = _pair((3, 5), 1)
    b, tb = _pair((3, 5), 2)
    del launches[:]
    _eq(a + b, ta + tb)
    assert launches == ["ptc_binary_add_f32_c"]
    _eq(a.t() * b.t(), ta.t() * tb.t())             # both transposed: dense in storage order
    _eq(a + b[0], ta + tb[0])                       # broadcast
    _eq(a[:, :4:2] - b[:, 1::2], ta[:, :4:2] - tb[:, 1::2])   # strided
    _eq(ptcore.exp(a[1]), torch.exp(ta[1]))
    s, ts = _pair((), 3)
    _eq(s * s, ts * ts)                             # 0-d


def test_reduction_reads_dense_input_and_writes_out_directly(launches):
    x, tx = _pair((4, 6), 4)
    del launches[:]
    _eq(x.sum(), tx.sum(), 1e-5)
    assert launches == ["ptc_reduce_sum_f32_f32_c"]       # no copy, no cast
    _eq(x.sum(1), tx.sum(1), 1e-5)
    del launches[:]
    _eq(x.sum(0), tx.sum(0), 1e-5)                  # columns: read in place
    assert launches == ["ptc_reduce_sum_f32_f32_k"]
    y, ty = _pair((3, 4, 5, 2), 7)
    del launches[:]
    _eq(y.mean((1, 2), keepdim=True), ty.mean((1, 2), keepdim=True), 1e-5)
    assert launches == ["ptc_reduce_mean_f32_f32_k"]
    _eq(y.sum((0, 2)), ty.sum((0, 2)), 1e-5)        # not one run: permuted, a copy first
    del launches[:]
    _eq(y.sum((0, 2, 3)), ty.sum((0, 2, 3)), 1e-5)  # a conv bias gradient's dims: rows, then columns
    assert launches == ["ptc_reduce_sum_f32_f32_c", "ptc_reduce_sum_f32_f32_k"]
    for dims in ((0, 3), (0, 1, 3), (1, 3), (0, 2, 3)):
        for keepdim in (False, True):
            _eq(y.mean(dims, keepdim), ty.mean(dims, keepdim), 1e-5)
            _eq(y.double().sum(dims, keepdim), ty.double().sum(dims, keepdim), 1e-5)
    _eq(y.half().sum((0, 2, 3)), ty.half().sum((0, 2, 3)), 1e-2)
    _eq(y.half().mean((0, 3)), ty.half().mean((0, 3)), 1e-2)
    _eq(y.half().sum(1), ty.half().sum(1), 1e-2)
    _eq(y.half().mean(0), ty.half().mean(0), 1e-2)
    _eq(y.double().sum(0), ty.double().sum(0), 1e-5)
    _eq(x.t().sum(1), tx.t().sum(1), 1e-5)
    _eq(x.mean(1, keepdim=True), tx.mean(1, keepdim=True), 1e-5)
    _eq(x.amax(1), tx.amax(1))
    _eq(x.sum(1, dtype=ptcore.float64), tx.sum(1, dtype=torch.float64), 1e-5)
    o = ptcore.empty(4, device="cuda")
    r = ptcore.sum(x, 1, out=o)
    assert r is o
    _eq(o, tx.sum(1), 1e-5)
    big = ptcore.zeros(4, 2, device="cuda")
    ptcore.sum(x, 1, out=big[:, 1])                 # a strided out: through a temporary
    tbig = torch.zeros(4, 2)
    tbig[:, 1] = tx.sum(1)
    _eq(big, tbig, 1e-5)
    i, ti = _pair((5, 3), 5, "int32")
    _eq(i.sum(0), ti.sum(0))                        # int32 -> int64 result
    _eq(i.sum(), ti.sum())
    e = ptcore.empty(0, 3, device="cuda")
    _eq(e.sum(0), torch.empty(0, 3).sum(0))


def test_softmax_last_dim_written_in_place(launches):
    x, tx = _pair((3, 4, 5), 6)
    del launches[:]
    _eq(ptcore.softmax(x, -1), torch.softmax(tx, -1))
    assert launches == ["ptc_softmax_softmax_f32_c"]      # no copy back
    _eq(ptcore.softmax(x, 1), torch.softmax(tx, 1))
    _eq(ptcore.log_softmax(x, 0), torch.log_softmax(tx, 0))
    _eq(ptcore.log_softmax(x.transpose(1, 2), 2), torch.log_softmax(tx.transpose(1, 2), 2))
    s, ts = _pair((), 7)
    _eq(ptcore.softmax(s, 0), torch.softmax(ts, 0))


def test_driver_names_the_kernel_handles_it_loaded():
    drv = _runtime.lazy_init("test")
    src = ('extern "C" __global__ void ptc_test_name_a(float* x) { x[0] = 1.0f; }\n'
           'extern "C" __global__ void ptc_test_name_b(float* x) { x[0] = 2.0f; }\n')
    fns = drv.module_load(0, src, ["ptc_test_name_a", "ptc_test_name_b"])
    assert len(set(fns.values())) == 2
    assert {n: drv.kernel_name(h) for n, h in fns.items()} == {n: n for n in fns}
    for bad in (0, max(fns.values()) + 1):
        with pytest.raises(CudaError, match="unknown kernel handle") as ei:
            drv.kernel_name(bad)
        assert ei.value.code == "CUDA_ERROR_INVALID_HANDLE"



def test_out_is_written_directly_when_dense_and_disjoint(launches):
    """``out=`` of the result's dtype/shape, dense, sharing no memory with the
    inputs (or being one of them exactly) gets the kernel's result itself:
    one launch, no temporary and copy; the version counter moves.  Another
    dtype goes through a temporary; overlaps raise PyTorch's errors."""
    a, ta = _pair((4, 6), 11)
    b, tb = _pair((4, 6), 12)
    o = ptcore.empty(4, 6, device="cuda")
    ptr, v0 = o.data_ptr(), o._version
    del launches[:]
    r = ptcore.add(a, b, out=o)
    assert r is o and o.data_ptr() == ptr and o._version > v0
    assert launches == ["ptc_binary_add_f32_c"]
    _eq(o, ta + tb)
    del launches[:]
    assert ptcore.exp(a, out=o) is o and launches == ["ptc_unary_exp_f32_c"]
    _eq(o, torch.exp(ta))
    del launches[:]
    ptcore.mul(o, b, out=o)                         # out is exactly an input
    assert launches == ["ptc_binary_mul_f32_c"]
    _eq(o, torch.exp(ta) * tb)
    # a partial overlap (out a shifted view of an input), an out whose
    # elements overlap: PyTorch's errors, as on the CPU
    x, tx = _pair((10,), 13)
    for args, out in (((x[:-1], x[1:]), x[1:]), ((x[:3],), x[1:4])):
        with pytest.raises(RuntimeError, match="single memory location"):
            (ptcore.add if len(args) == 2 else ptcore.exp)(*args, out=out)
    with pytest.raises(RuntimeError, match="more than one element"):
        ptcore.add(x[:3], x[:3], out=x[:1].expand(3))
    _eq(x, tx)                                      # untouched
    # another dtype: through a temporary and a cast
    od = ptcore.empty(4, 6, dtype=ptcore.float64, device="cuda")
    ptcore.add(a, b, out=od)
    _eq(od, (ta + tb).double())
    ob = ptcore.empty(4, 6, dtype=ptcore.bool, device="cuda")
    del launches[:]
    ptcore.gt(a, b, out=ob)
    assert launches == ["ptc_binary_gt_f32_c"]
    _eq(ob, ta > tb)


def test_dense_fast_paths_launch_one_kernel(launches):
    # add with the default alpha, sub, a Python number, a unary op and the
    # in-place forms of a dense float tensor: one contiguous kernel each
    a, ta = _pair((3, 5), 5)
    b, tb = _pair((3, 5), 6)
    for f, name in ((lambda m, x, y: m.add(x, y), "ptc_binary_add_f32_c"),
                    (lambda m, x, y: m.sub(x, y), "ptc_binary_sub_f32_c"),
                    (lambda m, x, y: x * 2.5, "ptc_scalar_mul_f32_c"),
                    (lambda m, x, y: x - 3, "ptc_scalar_sub_f32_c"),
                    (lambda m, x, y: m.exp(x), "ptc_unary_exp_f32_c")):
        del launches[:]
        _eq(f(ptcore, a, b), f(torch, ta, tb), 1e-6)
        assert launches == [name]
    _eq(ptcore.add(a, b, alpha=2), torch.add(ta, tb, alpha=2))     # alpha: the general kernel
    _eq(ptcore.sub(a, b, alpha=0.5), torch.sub(ta, tb, alpha=0.5))
    x, tx = a.clone(), ta.clone()
    for step in (lambda t, y: t.mul_(1.5), lambda t, y: t.add_(y), lambda t, y: t.sub_(y),
                 lambda t, y: t.div_(4), lambda t, y: t.add_(t)):
        del launches[:]
        r = step(x, b)
        step(tx, tb)
        assert r is x and len(launches) == 1
        _eq(x, tx, 1e-5)
    v0 = x._version
    x.add_(1.0)
    assert x._version == v0 + 1


def test_inplace_partial_overlap_takes_the_general_path(launches):
    # other overlapping self partially (a shifted view of one storage): the
    # general path's checks; the result is torch's on the same layout
    base, tbase = _pair((8,), 7)
    x, tx = base[:6], tbase[:6]
    y, ty = base[2:], tbase[2:]
    x.add_(y.clone())                       # disjoint copy: fast path
    tx.add_(ty.clone())
    _eq(base, tbase)
    with pytest.raises(RuntimeError):
        tx.add_(ty)                         # torch: partial overlap refused
    with pytest.raises(RuntimeError):
        x.add_(y)
    _eq(base, tbase)
    with pytest.raises(RuntimeError):
        torch.zeros(1).expand(3).add_(torch.ones(3))    # torch refuses an expanded self
    with pytest.raises(RuntimeError):
        ptcore.zeros(1, device="cuda").expand(3).add_(ptcore.ones(3, device="cuda"))
    z = ptcore.zeros(2, 3, device="cuda")
    with pytest.raises(RuntimeError):
        z.add_(ptcore.ones(3, 3, device="cuda"))        # broadcast to a larger shape
    m = ptcore.ones(4, device="cuda", dtype=ptcore.float64)
    m.mul_(ptcore.full((4,), 2.0, device="cuda"))       # float32 other: general path
    assert m.dtype == ptcore.float64 and m.cpu().tolist() == [2.0] * 4
