"""gcd, lcm and sinc on CUDA run one elementwise kernel each (their CPU
front-ends are composites: Euclid's loop with a synchronization per step,
six kernels for sinc) with the CPU's values, dtypes, errors and gradients."""
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
