"""More ops that differed on the emulated CUDA device when torch's OpInfo samples were
run there (tools/opinfo_sweep.py with its inputs moved to cuda): each compared with torch
on the CPU (torch's CUDA kernels are the same elementwise formulas)."""
import numpy as np
import pytest

import ptcore
from device_target import REAL

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_addr_on_cuda_is_elementwise_for_every_dtype(dtype):
    # torch's CUDA addr is an elementwise kernel (addr_kernel_cuda) for every dtype:
    # integers and bool work (ptcore raised '"addmm_cuda" not implemented for Long'), and
    # with alpha == 0 a NaN/inf in the vectors still gives NaN (ptcore's GEMM gave 0)
    rng = np.random.default_rng(0)
    a, v1, v2 = rng.integers(-3, 4, (3, 4)), rng.integers(-3, 4, 3), rng.integers(-3, 4, 4)
    args = [np.asarray(x).astype(dtype) for x in (a, v1, v2)]
    if dtype.startswith("float"):
        args[1][1] = np.nan
        args[2][2] = np.inf
    kws = [{}, {"beta": 0, "alpha": 2}, {"beta": 2, "alpha": 0}, {"beta": 0, "alpha": 0}]
    if dtype == "bool":
        kws = [{}, {"beta": False, "alpha": True}, {"beta": True, "alpha": False}]
    elif dtype.startswith("float"):
        kws += [{"beta": 0.0, "alpha": 0.0}, {"beta": 0.5, "alpha": -1.5}]
    for kw in kws:
        got = ptcore.addr(*[ptcore.tensor(x).cuda() for x in args], **kw)
        want = torch.addr(*[torch.tensor(x) for x in args], **kw)
        assert got.device.type == "cuda" and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(_np(got), want.numpy())
    x = ptcore.tensor(args[0]).cuda()
    x.addr_(ptcore.tensor(args[1]).cuda(), ptcore.tensor(args[2]).cuda())
    np.testing.assert_array_equal(_np(x), torch.tensor(args[0]).addr_(
        torch.tensor(args[1]), torch.tensor(args[2])).numpy())
    # broadcast self
    got = ptcore.addr(ptcore.tensor(args[0][:1]).cuda(), ptcore.tensor(args[1]).cuda(),
                      ptcore.tensor(args[2]).cuda())
    want = torch.addr(torch.tensor(args[0][:1]), torch.tensor(args[1]), torch.tensor(args[2]))
    np.testing.assert_array_equal(_np(got), want.numpy())


def test_addr_gradients_on_cuda():
    rng = np.random.default_rng(1)
    vals = [rng.standard_normal(s) for s in ((3, 4), (3,), (4,))]
    xs = [ptcore.tensor(v).cuda().requires_grad_() for v in vals]
    ts = [torch.tensor(v).requires_grad_() for v in vals]
    g = rng.standard_normal((3, 4))
    ptcore.addr(*xs, beta=0.5, alpha=2.0).backward(ptcore.tensor(g).cuda())
    torch.addr(*ts, beta=0.5, alpha=2.0).backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        assert x.grad.device.type == "cuda"
        np.testing.assert_allclose(_np(x.grad), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_of_a_0d_tensor_backward_on_cuda(fn):
    # the backward built a Python-float q as a CPU tensor: device mismatch on cuda
    for v, kw in [(np.array(1.5), {}), (np.arange(12.0).reshape(3, 4) % 5, {"dim": 1})]:
        x = ptcore.tensor(v).cuda().requires_grad_()
        t = torch.tensor(v).requires_grad_()
        getattr(ptcore, fn)(x, 0.3, **kw).sum().backward()
        getattr(torch, fn)(t, 0.3, **kw).sum().backward()
        assert x.grad.device.type == "cuda"
        np.testing.assert_allclose(_np(x.grad), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", ["dot", "vdot", "inner"])
def test_complex_dot_products_on_cuda(fn):
    # complex dot/vdot raised 'no CUDA kernel yet'; torch's CUDA runs them (cuBLAS dotu/dotc)
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal(7) + 1j * rng.standard_normal(7) for _ in range(2))
    for ca in (False, True):
        for cb in (False, True):
            pa, pb = ptcore.tensor(a).cuda(), ptcore.tensor(b).cuda()
            ta, tb = torch.tensor(a), torch.tensor(b)
            if ca:
                pa, ta = pa.conj(), ta.conj()
            if cb:
                pb, tb = pb.conj(), tb.conj()
            got = getattr(ptcore, fn)(pa, pb)
            assert got.device.type == "cuda" and got.dtype == ptcore.complex128
            np.testing.assert_allclose(got.cpu().item(), getattr(torch, fn)(ta, tb).item(),
                                       rtol=1e-13)
    got = getattr(ptcore, fn)(ptcore.tensor(np.repeat(a, 2)).cuda()[::2],
                              ptcore.tensor(b.astype(np.complex64)).cuda().to(ptcore.complex128))
    np.testing.assert_allclose(got.cpu().item(), getattr(torch, fn)(
        torch.tensor(a), torch.tensor(b.astype(np.complex64)).to(torch.complex128)).item(),
        rtol=1e-13)


def test_complex_silu_on_cuda():
    # "silu" not implemented for 'ComplexFloat' on cuda; torch computes complex silu
    # forward (no autograd) on both devices
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(20) * 3 + 1j * rng.standard_normal(20) * 3).astype(np.complex64)
    want = torch.nn.functional.silu(torch.tensor(a)).numpy()
    got = ptcore.nn.functional.silu(ptcore.tensor(a).cuda())
    assert got.device.type == "cuda" and got.dtype == ptcore.complex64
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=2e-6, atol=1e-6)
    x = ptcore.tensor(a).cuda()
    assert ptcore.nn.functional.silu(x, inplace=True) is x
    np.testing.assert_allclose(x.cpu().numpy(), want, rtol=2e-6, atol=1e-6)
    with pytest.raises(RuntimeError):
        ptcore.nn.functional.silu(ptcore.tensor(a).cuda().requires_grad_())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_lerp_with_a_number_weight_computes_in_float32_on_cuda(dtype):
    # torch's lerp_scalar_kernel keeps a number weight in float32 (opmath); ptcore's CUDA
    # path had rounded it to the tensors' dtype first (0.4 -> 0.40039 in bfloat16): a quarter
    # of the elements were off by one or more units. The emulated device's host compiler does
    # not fuse the multiply-add as torch's CPU loop does, so a few elements may round apart
    # from torch: compared exactly with the unfused float32 formula, and with torch loosely.
    rng = np.random.default_rng(4)
    a, b = (torch.tensor(rng.standard_normal(2000) * 3).to(getattr(torch, dtype))
            for _ in range(2))
    pa, pb = (ptcore.tensor(t.float().numpy()).to(getattr(ptcore, dtype)).cuda() for t in (a, b))
    x, y = a.float().numpy(), b.float().numpy()
    def half(v):
        return torch.tensor(v).to(getattr(torch, dtype)).float().numpy()

    for w in (0.4, 0.7, -1.3, 2):
        w32, d = np.float32(w), y - x
        ref = half(np.where(abs(w) < 0.5, x + w32 * d, y - d * (np.float32(1) - w32)))
        # NVRTC contracts the multiply-add into an FMA on a GPU (one rounding): an element
        # may match the fused float32 formula instead (computed exactly in float64)
        x64, y64, d64, w64 = (v.astype(np.float64) for v in (x, y, d, w32))
        fused = half(np.where(abs(w) < 0.5, x64 + w64 * d64,
                              y64 - d64 * np.float64(np.float32(1) - w32)).astype(np.float32))
        want = torch.lerp(a, b, w).float().numpy()
        x_ = pa.clone()
        x_.lerp_(pb, w)
        o = ptcore.empty(2000, dtype=ptcore.float32).cuda()
        ptcore.lerp(pa, pb, w, out=o)
        got = ptcore.lerp(pa, pb, w)
        assert got.dtype == getattr(ptcore, dtype) and got.device.type == "cuda"
        for r in (got.cpu().float().numpy(), x_.cpu().float().numpy(), o.cpu().numpy()):
            if REAL:
                bad = (r != ref) & (r != fused)
                assert not bad.any(), (r[bad], ref[bad], fused[bad])
            else:
                np.testing.assert_array_equal(r, ref)
            assert (r != want).sum() <= 10


@pytest.mark.parametrize("fn", ["eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum",
                                "logical_and", "logical_or", "logical_xor", "polar"])
def test_number_first_argument_is_refused_on_cuda(fn):
    # torch's comparisons, logical ops, maximum/minimum and polar take no number as their
    # first argument (TypeError); ptcore's CUDA kernels computed a result
    with pytest.raises(TypeError):
        getattr(torch, fn)(2, torch.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        getattr(ptcore, fn)(2, ptcore.tensor([1.0, 2.0, 3.0]).cuda())


def test_number_first_argument_still_works_where_torch_takes_it_on_cuda():
    t = ptcore.tensor([1, 2, 3]).cuda()
    tt = torch.tensor([1, 2, 3])
    for fn in ("add", "sub", "mul", "div", "pow"):
        np.testing.assert_array_equal(_np(getattr(ptcore, fn)(2, t)),
                                      getattr(torch, fn)(2, tt).numpy())
    for got, want in [(2 - t, 2 - tt), (2 < t, 2 < tt), (2 == t, 2 == tt), (2 ** t, 2 ** tt)]:
        np.testing.assert_array_equal(_np(got), want.numpy())


def test_complex_out_of_another_complex_dtype_is_refused_on_cuda():
    re = ptcore.ones(10, 5, dtype=ptcore.float64).cuda()
    with pytest.raises(RuntimeError, match="ComplexDouble"):
        ptcore.complex(re, re, out=ptcore.empty(10, 5, dtype=ptcore.complex64).cuda())
    with pytest.raises(RuntimeError):
        torch.complex(torch.ones(10, 5, dtype=torch.float64), torch.ones(10, 5, dtype=torch.float64),
                      out=torch.empty(10, 5, dtype=torch.complex64))
    o = ptcore.empty(10, 5, dtype=ptcore.complex128).cuda()
    assert ptcore.complex(re, -re, out=o) is o
    assert o.cpu().numpy()[0, 0] == 1 - 1j


@pytest.mark.parametrize("alpha", [False, True, 0, 2])
def test_bool_add_with_alpha_on_cuda(alpha):
    # a bool add with alpha is a | (alpha & b); ptcore looked up a missing bool add_alpha kernel
    a = np.array([[True, False], [False, False]])
    b = np.array([True, True])
    want = torch.add(torch.tensor(a), torch.tensor(b), alpha=alpha)
    got = ptcore.add(ptcore.tensor(a).cuda(), ptcore.tensor(b).cuda(), alpha=alpha)
    assert got.dtype == ptcore.bool
    np.testing.assert_array_equal(_np(got), want.numpy())
    x = ptcore.tensor(a).cuda()
    x.add_(ptcore.tensor(b).cuda(), alpha=alpha)
    np.testing.assert_array_equal(_np(x), want.numpy())


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype,wdtype", [("bfloat16", "float32"), ("float16", "float64")])
def test_half_lerp_casts_a_wider_0d_weight_tensor(device, dtype, wdtype):
    # torch's iterator casts a 0-d float32/float64 weight to the float16/bfloat16 dtype of
    # the lerp (unlike a number weight); ptcore's CPU loop had used it unrounded
    rng = np.random.default_rng(5)
    a, b = (torch.tensor(rng.standard_normal(1000) * 3).to(getattr(torch, dtype))
            for _ in range(2))
    w = torch.tensor(0.4, dtype=getattr(torch, wdtype))
    want = torch.lerp(a, b, w).float().numpy()
    pa, pb = (ptcore.tensor(t.float().numpy()).to(getattr(ptcore, dtype)).to(device)
              for t in (a, b))
    pw = ptcore.tensor(0.4, dtype=getattr(ptcore, wdtype))
    got = ptcore.lerp(pa, pb, pw)
    assert got.dtype == getattr(ptcore, dtype)
    np.testing.assert_array_equal(got.cpu().float().numpy(), want)
    pa.lerp_(pb, pw)
    np.testing.assert_array_equal(pa.cpu().float().numpy(), want)


def test_cat_backward_of_a_legacy_empty_input_stays_on_cuda():
    # torch.cat skips 1-d empty inputs of another rank; their gradient was made on the CPU
    a = ptcore.ones(2, 3).cuda().requires_grad_()
    e = ptcore.zeros(0).cuda().requires_grad_()
    (ptcore.cat([a, e]) * 2).sum().backward()
    ta, te = torch.ones(2, 3, requires_grad=True), torch.zeros(0, requires_grad=True)
    (torch.cat([ta, te]) * 2).sum().backward()
    assert e.grad.device.type == "cuda" and tuple(e.grad.shape) == tuple(te.grad.shape)
    np.testing.assert_array_equal(_np(a.grad), ta.grad.numpy())


_EMPTY_LINALG = {
    "det": lambda L, x: L.linalg.det(x), "slogdet": lambda L, x: L.linalg.slogdet(x),
    "logdet": lambda L, x: L.logdet(x), "inv": lambda L, x: L.linalg.inv(x),
    "solve": lambda L, x: L.linalg.solve(x, x), "cholesky": lambda L, x: L.linalg.cholesky(x),
    "qr": lambda L, x: L.linalg.qr(x), "svd": lambda L, x: L.linalg.svd(x),
    "eigh": lambda L, x: L.linalg.eigh(x), "lstsq": lambda L, x: L.linalg.lstsq(x, x).solution,
    "lu_factor": lambda L, x: L.linalg.lu_factor(x),
    "cholesky_inverse": lambda L, x: L.cholesky_inverse(x),
    "cholesky_solve": lambda L, x: L.cholesky_solve(x, x),
    "matrix_power": lambda L, x: L.linalg.matrix_power(x, -2),
}


def _flat(r):
    return [y for z in r for y in _flat(z)] if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize("name", sorted(_EMPTY_LINALG))
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_complex_linalg_of_empty_matrices_on_cuda(name, shape):
    # the CUDA solver loops (float32/float64 only) refused complex dtypes up front, also for
    # empty matrices, where no solver routine runs and torch returns empty/identity results
    f = _EMPTY_LINALG[name]
    want = _flat(f(torch, torch.zeros(shape, dtype=torch.complex64)))
    got = _flat(f(ptcore, ptcore.zeros(shape, dtype=ptcore.complex64).cuda()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device.type == "cuda" and tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


def test_complex_linalg_of_nonempty_matrices_on_cuda():
    # the solver loops run complex64/complex128 too now (cuSOLVER's C/Z routines; more in
    # test_linalg_complex_cuda.py)
    a = np.eye(3) * (2 - 1j) + np.triu(np.ones((3, 3)), 1)
    got = ptcore.linalg.inv(ptcore.tensor(a).to(ptcore.complex64).cuda())
    want = torch.linalg.inv(torch.tensor(a).to(torch.complex64))
    assert got.dtype == ptcore.complex64
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "float16", "bfloat16"])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_of_small_dtypes_on_cuda(dtype, reduce):
    # prod/amax/amin had CUDA kernels for float32/float64/int32/int64 only; bool and the
    # small integers now run in int32 (products wrap as torch's), the half types' amax/amin
    # in float32 (exact), their prod in float32 rounded once (torch's CPU scatter_reduce;
    # it raised NotImplementedError).
    rng = np.random.default_rng(6)
    x, s = rng.integers(-3, 6, (10, 5)), rng.integers(-3, 6, (5, 5))
    idx = rng.integers(0, 10, (5, 5))
    if dtype == "bool":
        x, s = x > 1, s > 1
    elif dtype == "uint8":
        x, s = np.abs(x), np.abs(s)
    tdt, pdt = getattr(torch, dtype), getattr(ptcore, dtype)
    for include_self in (True, False):
        want = torch.tensor(x).to(tdt).scatter_reduce(0, torch.tensor(idx), torch.tensor(s).to(tdt),
                                                      reduce, include_self=include_self)
        px, ps = ptcore.tensor(x).to(pdt).cuda(), ptcore.tensor(s).to(pdt).cuda()
        got = px.scatter_reduce(0, ptcore.tensor(idx).cuda(), ps, reduce, include_self=include_self)
        assert got.dtype == pdt and got.device.type == "cuda"
        np.testing.assert_array_equal(got.cpu().to(ptcore.float64).numpy(),
                                      want.to(torch.float64).numpy())


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "uint8"])
def test_integer_einsum_sums_on_cuda(dtype):
    # einsum's sums of one operand's dims went through an integer GEMM, which CUDA has not
    # ('"addmm_cuda" not implemented for Long'); torch sums them with its reduction
    rng = np.random.default_rng(7)
    a = rng.integers(0, 5, (3, 4, 3)).astype(dtype)
    for eq, ops in [("ijk->", [a]), ("ijk->j", [a]), ("iji->j", [a[:, :3]]), ("ijk->ik", [a]),
                    ("ijk,l->il", [a, a[0, 0]])]:
        want = torch.einsum(eq, *[torch.tensor(x) for x in ops])
        got = ptcore.einsum(eq, *[ptcore.tensor(x).cuda() for x in ops])
        assert got.device.type == "cuda"
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(_np(got), want.numpy())
