"""Ops that the OpInfo sweep on the emulated CUDA device (tools/opinfo_sweep_more.py cuda)
found missing or raising the wrong error there: half-precision prod scatters, complex()
of float16 operands, and the dispatch errors of GEMMs of integer tensors.  Each compared
with torch on the CPU (or with torch's CUDA error where CUDA differs by design)."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

HALF = ("float16", "bfloat16")


def _pair(x, dtype):
    return (torch.tensor(x).to(getattr(torch, dtype)),
            ptcore.tensor(x).to(getattr(ptcore, dtype)).cuda())


def _same(got, want):
    assert got.device.type == "cuda"
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.cpu().to(ptcore.float64).numpy(),
                                  want.to(torch.float64).numpy())


@pytest.mark.parametrize("dtype", HALF)
def test_half_prod_scatters_on_cuda(dtype):
    # scatter_reduce(reduce='prod') and scatter(reduce='multiply') of float16/bfloat16 had no
    # CUDA kernel (NotImplementedError); they run in float32 and round once, as torch's CPU
    # scatter_reduce (torch's CUDA rounds every product, in no fixed order)
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (10, 5)).astype(np.float32)
    src = rng.uniform(0.5, 1.5, (30, 5)).astype(np.float32)
    src[3, 2] = np.nan
    idx = rng.integers(0, 10, (30, 5))
    (tx, px), (ts, ps) = _pair(x, dtype), _pair(src, dtype)
    ti, pi = torch.tensor(idx), ptcore.tensor(idx).cuda()
    for include_self in (True, False):
        _same(px.scatter_reduce(0, pi, ps, "prod", include_self=include_self),
              tx.scatter_reduce(0, ti, ts, "prod", include_self=include_self))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (its deprecation warning, once per process)
        want = tx.scatter(0, ti, ts, reduce="multiply")
    _same(px.scatter(0, pi, ps, reduce="multiply"), want)
    y = px.clone()
    y.scatter_reduce_(1, pi[:10, :3] % 5, ps[:10, :3], "prod")
    _same(y, tx.clone().scatter_reduce_(1, ti[:10, :3] % 5, ts[:10, :3], "prod"))


@pytest.mark.parametrize("dtype", HALF)
def test_half_index_reduce_prod_on_cuda(dtype):
    # index_reduce(reduce='prod') of the half types raised NotImplementedError on CUDA; it
    # accumulates in float32 (torch's CPU rounds every product in index order, so the two
    # may differ in the last bits; torch's CUDA rounds every product in no fixed order)
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 1.5, (10, 4)).astype(np.float32)
    src = rng.uniform(0.5, 1.5, (25, 4)).astype(np.float32)
    idx = rng.integers(0, 10, 25)
    (tx, px), (ts, ps) = _pair(x, dtype), _pair(src, dtype)
    for include_self in (True, False):
        got = px.index_reduce(0, ptcore.tensor(idx).cuda(), ps, "prod", include_self=include_self)
        want = tx.index_reduce(0, torch.tensor(idx), ts, "prod", include_self=include_self)
        assert got.dtype is getattr(ptcore, dtype)
        exact = tx.double().index_reduce(0, torch.tensor(idx), ts.double(), "prod",
                                         include_self=include_self)
        tol = 4e-3 if dtype == "float16" else 3e-2
        np.testing.assert_allclose(got.cpu().double().numpy(), exact.numpy(), rtol=tol)
        np.testing.assert_allclose(got.cpu().double().numpy(), want.double().numpy(), rtol=tol)


def test_complex_of_float16_gives_complex32_on_cuda():
    # complex(real, imag) of float16 tensors raised NotImplementedError on CUDA
    rng = np.random.default_rng(2)
    re, im = rng.standard_normal((3, 4)), rng.standard_normal(4)
    (tre, pre), (tim, pim) = _pair(re, "float16"), _pair(im, "float16")
    want = torch.complex(tre, tim)
    got = ptcore.complex(pre, pim)
    assert got.dtype is ptcore.complex32 and got.device.type == "cuda"
    np.testing.assert_array_equal(ptcore.view_as_real(got).cpu().numpy(),
                                  torch.view_as_real(want).numpy())
    out = ptcore.empty(0, dtype=ptcore.complex32, device="cuda")
    assert ptcore.complex(pre, pim, out=out) is out
    np.testing.assert_array_equal(ptcore.view_as_real(out).cpu().numpy(),
                                  torch.view_as_real(want).numpy())


def test_complex32_copies_on_cuda():
    # cat/stack (and device copies with a cast) of complex32 CUDA tensors raised
    # NotImplementedError: the cast kernel has no complex32 version; the parts are cast
    rng = np.random.default_rng(3)
    re, im = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    (tre, pre), (tim, pim) = _pair(re, "float16"), _pair(im, "float16")
    tc, pc = torch.complex(tre, tim), ptcore.complex(pre, pim)

    def same(got, want):
        assert got.device.type == "cuda" and got.dtype.itemsize == want.dtype.itemsize
        g, w = (ptcore.view_as_real(got), torch.view_as_real(want)) if want.is_complex() \
            else (got, want)
        np.testing.assert_array_equal(g.cpu().float().numpy(), w.float().numpy())
    same(ptcore.cat([pc, pc[:1]]), torch.cat([tc, tc[:1]]))
    same(ptcore.stack([pc, pc], 1), torch.stack([tc, tc], 1))
    same(ptcore.cat([pc, pre]), torch.cat([tc, tre]))        # float16 joins as complex32
    same(pc.to(ptcore.complex64), tc.to(torch.complex64))
    same(pc.to(ptcore.complex64).to(ptcore.complex32), tc)
    same(pre.to(ptcore.complex32), tre.to(torch.complex32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (the discarded imaginary part's warning)
        same(pc.to(ptcore.float32), tc.to(torch.float32))


def test_complex32_arithmetic_on_cuda():
    # add/sub/mul/neg/abs/eq/ne of complex32 CUDA tensors (the ComplexHalf ops torch's CPU
    # has too) raised NotImplementedError; computed in complex64, rounded once (torch's bits)
    rng = np.random.default_rng(4)
    a, b, c, d = (rng.standard_normal((3, 4)) * 3 for _ in range(4))
    (ta, pa), (tb, pb), (tc, pc), (td, pd) = (_pair(x, "float16") for x in (a, b, c, d))
    tx, px = torch.complex(ta, tb), ptcore.complex(pa, pb)
    ty, py = torch.complex(tc, td), ptcore.complex(pc, pd)

    def same(got, want):
        assert got.device.type == "cuda" and str(got.dtype)[7:] == str(want.dtype)[6:]
        g, w = (ptcore.view_as_real(got), torch.view_as_real(want)) if want.is_complex() \
            else (got, want)
        np.testing.assert_array_equal(g.cpu().float().numpy(), w.float().numpy())
    same(px + py, tx + ty)
    same(ptcore.sub(px, py, alpha=2), torch.sub(tx, ty, alpha=2))
    same(px * py, tx * ty)
    same(px * pa[0], tx * ta[0])                              # with float16: complex32
    same(px * (1 + 2j), tx * (1 + 2j))
    same(2 + px, 2 + tx)
    same(px + py.to(ptcore.complex64), tx + ty.to(torch.complex64))    # complex64 result
    same(px + pa[0].float(), tx + ta[0].float())
    same(-px, -tx)
    same(px.abs(), tx.abs())                                  # float16
    same(px == py, tx == ty)
    same(px != px, tx != tx)


@pytest.mark.parametrize("fn,kname", [
    (lambda i: ptcore.mm(i, i), "addmm_cuda"),
    (lambda i: ptcore.addmm(i, i, i), "addmm_cuda"),
    (lambda i: ptcore.nn.functional.linear(i, i), "addmm_cuda"),
    (lambda i: ptcore.bmm(i[None], i[None]), "bmm_cuda"),
    (lambda i: ptcore.matmul(i[None], i[None]), "bmm_cuda"),
    (lambda i: ptcore.baddbmm(i[None], i[None], i[None]), "bmm_cuda"),
    (lambda i: ptcore.dot(i[0], i[0]), "dot"),
])
def test_integer_gemm_raises_torchs_dispatch_error_on_cuda(fn, kname):
    # torch's CUDA GEMMs have no integer kernels: its dispatch raises NotImplementedError
    # '"addmm_cuda" not implemented for 'Long'' (ptcore raised a NotImplementedError naming
    # cuBLAS, or a RuntimeError); the type is torch's for its CPU dispatch errors too
    with pytest.raises(NotImplementedError) as cpu_err:
        torch.mm(torch.ones(2, 2, dtype=torch.bool), torch.ones(2, 2, dtype=torch.bool))
    assert "not implemented for 'Bool'" in str(cpu_err.value)
    i = ptcore.ones(2, 2, dtype=ptcore.int64, device="cuda")
    with pytest.raises(NotImplementedError, match=f"\"{kname}\" not implemented for 'Long'"):
        fn(i)


def test_bitwise_of_floats_and_hardtanh_of_bool_errors_on_cuda():
    x = ptcore.ones(3, device="cuda")
    with pytest.raises(NotImplementedError):
        torch.bitwise_and(torch.ones(3), torch.ones(3))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        ptcore.bitwise_and(x, x)
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.hardtanh(torch.ones(3, dtype=torch.bool))
    with pytest.raises(RuntimeError) as got:
        ptcore.nn.functional.hardtanh(x.bool())
    assert str(got.value) == str(want.value)


_BOOL_REFUSALS = [
    ("neg", lambda m, t: m.neg(t)), ("operator -", lambda m, t: -t),
    ("neg_", lambda m, t: t.clone().neg_()), ("negative", lambda m, t: m.negative(t)),
    ("neg out=", lambda m, t: m.neg(t, out=m.empty_like(t))),
    ("relu", lambda m, t: m.relu(t)), ("F.relu", lambda m, t: m.nn.functional.relu(t)),
    ("relu_", lambda m, t: t.clone().relu_()),
    ("F.relu inplace", lambda m, t: m.nn.functional.relu(t.clone(), inplace=True)),
]


@pytest.mark.parametrize("name,call", _BOOL_REFUSALS, ids=[n for n, _ in _BOOL_REFUSALS])
def test_bool_neg_relu_refused_like_torch_on_cuda(name, call):
    # neg and relu of a CUDA bool tensor raised NotImplementedError from the kernel library
    # (no bool kernel); torch refuses them on every device with a RuntimeError before any kernel
    tb, pb = _pair([True, False], "bool")
    with pytest.raises(RuntimeError) as want:
        call(torch, tb)
    with pytest.raises(RuntimeError) as got:
        call(ptcore, pb)
    assert str(got.value) == str(want.value)
    # the other dtypes still run, with torch's values
    tx, px = _pair([1.5, -2.0, 0.0], "float32")
    _same(call(ptcore, px), call(torch, tx))


_INPLACE_METHODS = ["atan2_", "fmod_", "hypot_", "copysign_", "remainder_", "xlogy_",
                    "nextafter_", "float_power_", "bitwise_or_"]


def _written_case(lib, dev, case, op):
    dt = lib.int32 if op == "bitwise_or_" else (lib.float64 if op == "float_power_" else lib.float32)
    y = lib.arange(1, 9).to(dt)
    if dev == "cuda":
        y = y.cuda()
    if case == "partial":
        a, b = y[1:], y[:-1]
    else:                               # a written tensor with an element twice
        a, b = y[:4].unsqueeze(0).expand(2, 4), y[:4].clone()
    getattr(a, op)(b)
    return y


@pytest.mark.parametrize("case", ["partial", "internal"])
@pytest.mark.parametrize("op", _INPLACE_METHODS)
def test_inplace_methods_refuse_overlapping_writes_on_cuda(op, case):
    # the in-place methods without a C path wrote through overlapping memory on CUDA
    # (y[1:].atan2_(y[:-1]) gave order-dependent values); torch refuses on every device
    with pytest.raises(RuntimeError) as want:
        _written_case(torch, "cpu", case, op)
    with pytest.raises(RuntimeError) as got:
        _written_case(ptcore, "cuda", case, op)
    assert str(got.value) == str(want.value)
    # the same memory exactly stays allowed
    y = ptcore.arange(1.0, 9.0).cuda()
    y.atan2_(y)
    np.testing.assert_allclose(y.cpu().numpy(), np.full(8, np.pi / 4, dtype=np.float32), rtol=1e-6)
