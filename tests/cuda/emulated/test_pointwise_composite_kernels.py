"""gcd, lcm, sinc, logaddexp and logaddexp2 on CUDA run one elementwise
kernel each, frexp two (their CPU front-ends are composites: Euclid's loop
with a synchronization per step, six kernels for sinc, 7-15 for logaddexp,
50 for frexp, 25 for float16/bfloat16 nextafter) with the CPU's values, dtypes, errors and gradients."""
import numpy as np
import pytest

import ptcore


def _cpu(t):
    return t.cpu()


@pytest.mark.parametrize("dtype", [ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64])
def test_gcd_lcm_values(dtype, launches):
    rng = np.random.default_rng(1)
    lo = 0 if dtype is ptcore.uint8 else -60
    a = ptcore.from_numpy(rng.integers(lo, 60, (6, 9))).to(dtype)
    b = ptcore.from_numpy(rng.integers(lo, 60, (9,))).to(dtype)
    a[0, :3] = 0
    b[:2] = 0
    for op in ("gcd", "lcm"):
        launches.clear()
        got = getattr(ptcore, op)(a.cuda(), b.cuda())
        assert [n for n in launches if "ternary" in n or "reduce" in n] == []
        want = getattr(ptcore, op)(a, b)
        assert got.dtype == want.dtype and ptcore.equal(_cpu(got), want), op
        if dtype in (ptcore.int32, ptcore.int64):       # (no overflow: NumPy agrees)
            np.testing.assert_array_equal(want.numpy(), getattr(np, op)(a.numpy(), b.numpy()))
        # out= and in place
        out = ptcore.empty(6, 9, dtype=dtype).cuda()
        assert getattr(ptcore, op)(a.cuda(), b.cuda(), out=out) is out and ptcore.equal(_cpu(out), want)
        x = a.cuda().clone()
        assert getattr(x, op + "_")(b.cuda()) is x and ptcore.equal(_cpu(x), want)


@pytest.mark.parametrize("dtype", [ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64])
def test_gcd_lcm_at_the_integer_extremes_match_cpu(dtype):
    """Every pair of min, min + 1, -3 .. 3, 7, max - 1, max: the device kernel
    gives the CPU's values (c10's Euclid on two's-complement absolute values:
    gcd(-3, -2**63) == 1, gcd(-128, -127) == -1 in int8; issue 61.7)."""
    info = np.iinfo(str(dtype).split(".")[-1])
    vals = sorted(v for v in {int(info.min), int(info.min) + 1, -3, -2, -1, 0, 1, 2, 3, 7,
                              int(info.max) - 1, int(info.max)} if info.min <= v <= info.max)
    a = ptcore.tensor([x for x in vals for _ in vals], dtype=dtype)
    b = ptcore.tensor([y for _ in vals for y in vals], dtype=dtype)
    for op in ("gcd", "lcm"):
        want = getattr(ptcore, op)(a, b)
        got = getattr(ptcore, op)(a.cuda(), b.cuda())
        assert got.dtype == want.dtype and _cpu(got).tolist() == want.tolist(), op
    if dtype is ptcore.int64:
        assert ptcore.gcd(ptcore.tensor([-3]).cuda(), ptcore.tensor([-2 ** 63]).cuda()).item() == 1


def test_gcd_errors_match_cpu():
    a, f = ptcore.tensor([4, 6]), ptcore.tensor([1.0, 2.0])
    for x, y in ((a, f), (f, f), (ptcore.tensor([True]), ptcore.tensor([False]))):
        with pytest.raises(Exception) as cpu_err:
            ptcore.gcd(x, y)
        with pytest.raises(type(cpu_err.value)):
            ptcore.gcd(x.cuda(), y.cuda())
    with pytest.raises(TypeError):
        ptcore.gcd(a.cuda(), 2)
    # promotion int32 with int64 into an int32 self: the CPU's answer
    s = ptcore.tensor([12, 18], dtype=ptcore.int32)
    o = ptcore.tensor([8, 27])
    want = s.clone().gcd_(o)
    got = s.cuda().gcd_(o.cuda())
    assert got.dtype == ptcore.int32 and ptcore.equal(_cpu(got), want)
    with pytest.raises(RuntimeError):
        ptcore.tensor([1, 2]).cuda().gcd_(ptcore.tensor([[1, 2], [3, 4]]).cuda())


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_sinc_values_and_grad(dtype, launches):
    x = ptcore.tensor([0.0, -0.0, 0.5, -1.0, 1.0, 2.25, 1e-8, -3.7, float("inf"), float("nan"), 1e6],
                      dtype=dtype)
    launches.clear()
    got = ptcore.sinc(x.cuda())
    assert sum(1 for n in launches if "sinc" in n) == 1 and not any("where" in n for n in launches)
    want = ptcore.sinc(x)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype in (ptcore.float32, ptcore.float64) else dict(rtol=1e-2, atol=1e-3)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(_cpu(got).double().numpy(), want.double().numpy(), equal_nan=True, **tol)
    y = x.cuda().clone()
    assert y.sinc_() is y
    np.testing.assert_allclose(_cpu(y).double().numpy(), want.double().numpy(), equal_nan=True, **tol)
    if dtype is ptcore.float64:
        v = ptcore.tensor([0.3, -1.2, 2.5, 0.0], dtype=dtype)
        vc = v.cuda().requires_grad_()
        vv = v.clone().requires_grad_()
        ptcore.sinc(vc).sum().backward()
        ptcore.sinc(vv).sum().backward()
        np.testing.assert_allclose(_cpu(vc.grad).numpy(), vv.grad.numpy(), rtol=1e-12, atol=1e-12)
        # in place on a tensor recording autograd
        w = v.cuda().requires_grad_()
        z = w * 1.0
        z.sinc_()
        z.sum().backward()
        np.testing.assert_allclose(_cpu(w.grad).numpy(), vv.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_sinc_int_and_out():
    x = ptcore.tensor([0, 1, 2, -3])
    got = ptcore.sinc(x.cuda())
    assert got.dtype == ptcore.get_default_dtype()
    np.testing.assert_allclose(_cpu(got).numpy(), ptcore.sinc(x).numpy(), atol=1e-7)
    with pytest.raises(RuntimeError):
        ptcore.sinc(x.cuda(), out=ptcore.empty(4, dtype=ptcore.int64).cuda())
    with pytest.raises(RuntimeError):
        x.cuda().sinc_()


_TOLS = {ptcore.float32: dict(rtol=2e-6, atol=1e-6), ptcore.float64: dict(rtol=1e-13, atol=1e-13),
         ptcore.float16: dict(rtol=2e-3, atol=1e-3), ptcore.bfloat16: dict(rtol=1e-2, atol=1e-2)}


def _special_pairs(dtype):
    inf, nan = float("inf"), float("nan")
    a = ptcore.tensor([[inf, -inf, inf, nan, 0.0, -0.0, 3.0, -50.0, 1e-30, 80.0, -inf],
                       [1.5, -2.5, 0.25, 7.0, -7.0, 30.0, -30.0, 1e4, -1e4, 0.0, 2.0]], dtype=ptcore.float64)
    b = ptcore.tensor([inf, -inf, -inf, 1.0, -0.0, 0.0, 3.0, 49.0, -1e-30, -80.0, 5.0], dtype=ptcore.float64)
    return a.to(dtype), b.to(dtype)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("op", ["logaddexp", "logaddexp2"])
def test_logaddexp_one_kernel(op, dtype, launches):
    a, b = _special_pairs(dtype)
    want = getattr(ptcore, op)(a, b)
    launches.clear()
    got = getattr(ptcore, op)(a.cuda(), b.cuda())
    assert len(launches) == 1 and launches[0].startswith(f"ptc_binary_{op}_"), launches
    assert got.dtype == want.dtype
    np.testing.assert_allclose(_cpu(got).double().numpy(), want.double().numpy(), equal_nan=True,
                               **_TOLS[dtype])
    # broadcast non-contiguous operands, out= and the method form
    got = getattr(a.cuda().t(), op)(b.cuda()[:, None])
    np.testing.assert_allclose(_cpu(got).double().numpy(),
                               getattr(ptcore, op)(a.t(), b[:, None]).double().numpy(), equal_nan=True,
                               **_TOLS[dtype])
    out = ptcore.empty(2, 11, dtype=dtype).cuda()
    assert getattr(ptcore, op)(a.cuda(), b.cuda(), out=out) is out
    np.testing.assert_allclose(_cpu(out).double().numpy(), want.double().numpy(), equal_nan=True,
                               **_TOLS[dtype])


def test_logaddexp_grads_errors_complex():
    a = ptcore.tensor([0.3, -1.2, 2.5, 4.0], dtype=ptcore.float64)
    b = ptcore.tensor([1.3, -1.2, -2.0, 4.0], dtype=ptcore.float64)
    for op in ("logaddexp", "logaddexp2"):
        ac, bc = a.cuda().requires_grad_(), b.cuda().requires_grad_()
        av, bv = a.clone().requires_grad_(), b.clone().requires_grad_()
        getattr(ptcore, op)(ac, bc).sum().backward()
        getattr(ptcore, op)(av, bv).sum().backward()
        np.testing.assert_allclose(_cpu(ac.grad).numpy(), av.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(_cpu(bc.grad).numpy(), bv.grad.numpy(), rtol=1e-12)
        i = ptcore.tensor([1, 2])
        with pytest.raises(NotImplementedError):
            getattr(ptcore, op)(i.cuda(), i.cuda())
        with pytest.raises(TypeError):
            getattr(ptcore, op)(a.cuda(), 2.0)
        with pytest.raises(RuntimeError):
            getattr(ptcore, op)(a.cuda(), b.cuda(), out=ptcore.empty(4, dtype=ptcore.int64).cuda())
    z = ptcore.tensor([1 + 2j, -3 + 0.5j], dtype=ptcore.complex128)
    w = ptcore.tensor([0.5 - 1j, 2 + 2j], dtype=ptcore.complex128)
    np.testing.assert_allclose(_cpu(ptcore.logaddexp(z.cuda(), w.cuda())).numpy(),
                               ptcore.logaddexp(z, w).numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_frexp_two_kernels(dtype, launches):
    a, _ = _special_pairs(dtype)
    x = ptcore.cat([a.reshape(-1), ptcore.tensor([5e-324, 2.0 ** -1022, 0.75, -1.0, 1024.0,
                                                  6e-8, 1e-40, 2.0 ** -126, 3.4e38],
                                                 dtype=ptcore.float64).to(dtype)])
    wm, we = ptcore.frexp(x)
    launches.clear()
    m, e = ptcore.frexp(x.cuda())
    assert sorted(launches) == [f"ptc_unary_frexp_exponent_{launches[0].split('_')[-2]}_c",
                                f"ptc_unary_frexp_mantissa_{launches[0].split('_')[-2]}_c"], launches
    assert m.dtype == dtype and e.dtype == ptcore.int32
    np.testing.assert_array_equal(_cpu(m).double().numpy(), wm.double().numpy())
    np.testing.assert_array_equal(_cpu(e).numpy(), we.numpy())
    # a strided view, out= and the method
    xs = x.cuda()[::2]
    ms, es = xs.frexp()
    np.testing.assert_array_equal(_cpu(ms).double().numpy(), wm[::2].double().numpy())
    np.testing.assert_array_equal(_cpu(es).numpy(), we[::2].numpy())
    mo, eo = ptcore.empty(x.shape, dtype=dtype).cuda(), ptcore.empty(x.shape, dtype=ptcore.int32).cuda()
    r = ptcore.frexp(x.cuda(), out=(mo, eo))
    assert r.mantissa is mo and r.exponent is eo and ptcore.equal(_cpu(eo), we)


def test_frexp_grad_and_errors():
    x = ptcore.tensor([0.3, -12.0, 2.5, 1e-3], dtype=ptcore.float64)
    xc, xv = x.cuda().requires_grad_(), x.clone().requires_grad_()
    ptcore.frexp(xc).mantissa.sum().backward()
    ptcore.frexp(xv).mantissa.sum().backward()
    np.testing.assert_allclose(_cpu(xc.grad).numpy(), xv.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError):
        ptcore.frexp(ptcore.tensor([1, 2]).cuda())
    with pytest.raises(RuntimeError):
        ptcore.frexp(x.cuda(), out=(ptcore.empty(4).cuda(), ptcore.empty(4, dtype=ptcore.int32).cuda()))
    with pytest.raises(RuntimeError):
        ptcore.frexp(x.cuda(), out=(ptcore.empty(4, dtype=ptcore.float64).cuda(), ptcore.empty(4).cuda()))


@pytest.mark.parametrize("dtype", [ptcore.float16, ptcore.bfloat16])
def test_nextafter_half_one_kernel(dtype, launches):
    info = ptcore.finfo(dtype)
    inf, nan = float("inf"), float("nan")
    xs = [0.0, -0.0, 0.0, 1.0, 1.0, -1.0, -1.0, info.max, -info.max, inf, -inf, inf, nan, 2.0, info.tiny,
          info.smallest_normal / 4, -info.smallest_normal / 4, 3.0, 0.5]
    ys = [1.0, -1.0, -0.0, 2.0, 0.0, -2.0, 5.0, inf, -inf, 0.0, 0.0, inf, 1.0, nan, 0.0, 0.0, 0.0, 3.0, -0.5]
    x, y = ptcore.tensor(xs, dtype=dtype), ptcore.tensor(ys, dtype=dtype)
    want = ptcore.nextafter(x, y)
    launches.clear()
    got = ptcore.nextafter(x.cuda(), y.cuda())
    assert len(launches) == 1 and launches[0].startswith("ptc_binary_nextafter_"), launches
    assert got.dtype == dtype
    np.testing.assert_array_equal(_cpu(got).float().numpy(), want.float().numpy())
    # broadcasting a strided view, out=, in place
    m = x.reshape(1, -1).expand(3, -1)
    w = ptcore.stack([y, -y, y.flip(0)])
    want2 = ptcore.nextafter(m, w)
    np.testing.assert_array_equal(_cpu(ptcore.nextafter(m.cuda(), w.cuda())).float().numpy(),
                                  want2.float().numpy())
    out = ptcore.empty(len(xs), dtype=ptcore.float32).cuda()
    assert ptcore.nextafter(x.cuda(), y.cuda(), out=out) is out
    np.testing.assert_array_equal(_cpu(out).numpy(), want.float().numpy())
    z = x.cuda().clone()
    assert z.nextafter_(y.cuda()) is z
    np.testing.assert_array_equal(_cpu(z).float().numpy(), want.float().numpy())
    with pytest.raises(RuntimeError):
        ptcore.nextafter(x.cuda(), y.cuda(), out=ptcore.empty(len(xs), dtype=ptcore.int16).cuda())
    with pytest.raises(TypeError):
        ptcore.nextafter(x.cuda(), 1.0)
    # a float32 other promotes: the float32 kernel
    launches.clear()
    r = ptcore.nextafter(x.cuda(), y.float().cuda())
    assert r.dtype == ptcore.float32 and not any("nextafter_f16" in n or "nextafter_bf16" in n for n in launches)
