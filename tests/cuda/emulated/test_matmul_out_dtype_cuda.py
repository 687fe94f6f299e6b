"""mm/bmm/addmm/baddbmm with ``out_dtype=`` (torch's ``aten::mm.dtype`` ...
overloads): CUDA only, as torch's.  On the emulated device float16/bfloat16
operands give a float32 result accumulated in float32 (compared with torch's
float32 product of the upcast operands); on the CPU both raise
NotImplementedError; the dtype and shape errors are compared with torch's meta
kernels (the checks its CUDA kernels make)."""
import numpy as np
import pytest

import ptcore
from device_target import REAL

torch = pytest.importorskip("torch")
_TORCH_VERSION = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])

OPS = ("mm", "bmm", "addmm", "baddbmm")
HALF = ("float16", "bfloat16")


def _shapes(op, m=5, k=7, n=3, b=2):
    mats = {"mm": [(m, k), (k, n)], "bmm": [(b, m, k), (b, k, n)],
            "addmm": [(n,), (m, k), (k, n)], "baddbmm": [(n,), (b, m, k), (b, k, n)]}
    return mats[op]


def _inputs(op, dtype, seed=0, self_dtype=None, **kw):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s).astype(np.float32) for s in _shapes(op, **kw)]
    ts = [torch.tensor(x).to(getattr(torch, dtype)) for x in arrs]
    if op in ("addmm", "baddbmm") and self_dtype is not None:
        ts[0] = ts[0].to(getattr(torch, self_dtype))
    return ts


def _pt(t, device="cuda"):
    r = ptcore.tensor(t.float().numpy()).to(getattr(ptcore, str(t.dtype).split(".")[-1]))
    return r.to(device)


def _ref(op, ts, beta=1, alpha=1):
    """float32 product of the upcast operands (torch, CPU)."""
    f = [t.float() for t in ts]
    if op == "mm":
        return f[0] @ f[1]
    if op == "bmm":
        return torch.bmm(f[0], f[1])
    if op == "addmm":
        return torch.addmm(f[0], f[1], f[2], beta=beta, alpha=alpha)
    return torch.baddbmm(f[0], f[1], f[2], beta=beta, alpha=alpha)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", HALF)
def test_half_operands_float32_result(op, dtype):
    ts = _inputs(op, dtype)
    got = getattr(ptcore, op)(*[_pt(t) for t in ts], out_dtype=ptcore.float32)
    assert got.device.type == "cuda" and got.dtype is ptcore.float32
    want = _ref(op, ts)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    # the float32 result is not rounded to the operands' dtype on the way
    low = got.to(getattr(ptcore, dtype)).to(ptcore.float32)
    assert (got.cpu().numpy() != low.cpu().numpy()).any()
    # positional out_dtype, as torch's signature allows
    got2 = getattr(ptcore, op)(*[_pt(t) for t in ts], ptcore.float32)
    np.testing.assert_array_equal(got2.cpu().numpy(), got.cpu().numpy())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64"))
def test_out_dtype_equal_to_input_dtype_is_the_plain_product(op, dtype):
    ts = _inputs(op, dtype, seed=1)
    args = [_pt(t) for t in ts]
    got = getattr(ptcore, op)(*args, out_dtype=getattr(ptcore, dtype))
    plain = getattr(ptcore, op)(*args)
    assert got.dtype is plain.dtype
    # (the same GEMM: equal bits on the emulated device; cuBLAS may pick another algorithm)
    rtol = 0 if not REAL else (1e-2 if dtype in HALF else 1e-5)
    np.testing.assert_allclose(got.float().cpu().numpy(), plain.float().cpu().numpy(), rtol=rtol)


@pytest.mark.parametrize("op", ("addmm", "baddbmm"))
@pytest.mark.parametrize("self_dtype", ("bfloat16", "float32"))
def test_add_forms_beta_alpha_and_broadcast_self(op, self_dtype):
    ts = _inputs(op, "bfloat16", seed=2, self_dtype=self_dtype)
    for kw in ({"beta": 0.5, "alpha": -2.0}, {"beta": 1, "alpha": 1}, {"beta": 0, "alpha": 3}):
        got = getattr(ptcore, op)(*[_pt(t) for t in ts], ptcore.float32, **kw)
        assert got.dtype is ptcore.float32
        np.testing.assert_allclose(got.cpu().numpy(), _ref(op, ts, **kw).numpy(),
                                   rtol=1e-5, atol=1e-5)
    # beta == 0 ignores the values of self (NaN included)
    nan_self = ts[0].clone().fill_(float("nan"))
    got = getattr(ptcore, op)(_pt(nan_self), *[_pt(t) for t in ts[1:]], ptcore.float32, beta=0)
    assert not np.isnan(got.cpu().numpy()).any()
    # self of the full result shape
    full = _ref(op, ts).to(getattr(torch, self_dtype))
    got = getattr(ptcore, op)(_pt(full), *[_pt(t) for t in ts[1:]], ptcore.float32, beta=2)
    np.testing.assert_allclose(got.cpu().numpy(), _ref(op, [full] + ts[1:], beta=2).numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(REAL, reason="inspects the emulated driver's cuBLAS calls")
def test_one_gemm_with_a_float32_c(monkeypatch):
    # the product is one GemmEx call: half A/B, float32 C, float32 compute (68), no
    # separate half product or cast
    from ptcore.cuda.emulated import blas as _host_blas
    calls = []
    real = _host_blas.gemm

    def spy(*args):
        calls.append((args[7], args[10], args[14], args[16]))   # A, B, C, compute types
        return real(*args)
    monkeypatch.setattr(_host_blas, "gemm", spy)
    ts = _inputs("addmm", "bfloat16", seed=13)
    got = ptcore.addmm(*[_pt(t) for t in ts], ptcore.float32, beta=0.5)
    got.cpu()
    assert calls == [(_host_blas.R_16BF, _host_blas.R_16BF, _host_blas.R_32F, 68)]


def test_transposed_and_strided_operands():
    ts = _inputs("mm", "float16", seed=3, m=6, k=4, n=5)
    a = _pt(ts[0].t().contiguous()).t()          # a transposed view: cuBLAS op T
    b = _pt(ts[1])[:, ::2]                        # strided columns: copied
    got = ptcore.mm(a, b, out_dtype=ptcore.float32)
    want = ts[0].float() @ ts[1].float()[:, ::2]
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    bt = _inputs("bmm", "bfloat16", seed=4)
    got = ptcore.bmm(_pt(bt[0][:1]).expand(3, 5, 7), _pt(bt[1][:1]).expand(3, 7, 3),
                     out_dtype=ptcore.float32)
    want = torch.bmm(bt[0][:1].float().expand(3, 5, 7), bt[1][:1].float().expand(3, 7, 3))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_empty_inner_dimension():
    a = ptcore.zeros(3, 0, dtype=ptcore.float16, device="cuda")
    b = ptcore.zeros(0, 4, dtype=ptcore.float16, device="cuda")
    got = ptcore.mm(a, b, out_dtype=ptcore.float32)
    assert got.dtype is ptcore.float32 and tuple(got.shape) == (3, 4)
    assert (got.cpu().numpy() == 0).all()
    s = ptcore.full((4,), 2.0, dtype=ptcore.float16, device="cuda")
    got = ptcore.addmm(s, a, b, out_dtype=ptcore.float32, beta=3)
    np.testing.assert_array_equal(got.cpu().numpy(), np.full((3, 4), 6.0, np.float32))


def test_out_variants():
    ts = _inputs("mm", "float16", seed=5)
    a, b = _pt(ts[0]), _pt(ts[1])
    out = ptcore.empty(5, 3, device="cuda")
    r = ptcore.mm(a, b, out_dtype=ptcore.float32, out=out)
    assert r is out
    np.testing.assert_allclose(out.cpu().numpy(), _ref("mm", ts).numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError):                 # out's dtype must be out_dtype
        ptcore.mm(a, b, out_dtype=ptcore.float32, out=ptcore.empty(5, 3, device="cuda").half())
    with pytest.raises(RuntimeError):                 # mm.dtype_out does not resize out
        ptcore.mm(a, b, out_dtype=ptcore.float32, out=ptcore.empty(5, 4, device="cuda"))
    tb = _inputs("bmm", "bfloat16", seed=6)
    out = ptcore.empty(2, 5, 3, device="cuda")
    ptcore.bmm(_pt(tb[0]), _pt(tb[1]), ptcore.float32, out=out)
    np.testing.assert_allclose(out.cpu().numpy(), _ref("bmm", tb).numpy(), rtol=1e-5, atol=1e-5)
    # the add forms write into (and resize) out as addmm's out= does
    ta = _inputs("addmm", "float16", seed=7)
    out = ptcore.empty(0, device="cuda")
    ptcore.addmm(*[_pt(t) for t in ta], ptcore.float32, beta=0.5, out=out)
    np.testing.assert_allclose(out.cpu().numpy(), _ref("addmm", ta, beta=0.5).numpy(),
                               rtol=1e-5, atol=1e-5)


def _call(lib, op, ts, device, out_dtype, **kw):
    dev = {"meta": "meta", "cuda": "cuda"}[device]
    if lib is torch:
        args = [t.to(dev) for t in ts]
    else:
        args = [_pt(t, dev) for t in ts]
    return getattr(lib, op)(*args, out_dtype=getattr(lib, out_dtype), **kw)


def _outcome(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 - the exception type is what is compared
        return type(e)
    return None


# checked by torch's meta kernels too (its CUDA kernels make the same checks)
META_CASES = [
    ("mm", ["float16", "float16"], "float64"),        # only fp32 (or the input dtype) out
    ("mm", ["float32", "float32"], "float16"),
    ("bmm", ["bfloat16", "bfloat16"], "float16"),
    ("bmm", ["float16", "float32"], "float32"),       # batch dtypes differ
    ("addmm", ["float16", "float16", "float16"], "float64"),
]
# checked by torch's CUDA kernels only (cuda/Blas.cpp: "input dtypes must be the same",
# "mat1 and mat2 must have the same dtype"; its baddbmm meta kernel fails on out_dtype)
KERNEL_CASES = [
    ("mm", ["float16", "bfloat16"], "float32"),
    ("addmm", ["float16", "float16", "bfloat16"], "float32"),
    ("baddbmm", ["float16", "bfloat16", "bfloat16"], "float16"),
    ("baddbmm", ["float32", "float16", "float16"], "float64"),
]


def _cast(op, dtypes, seed=8):
    return [t.to(getattr(torch, d)) for t, d in zip(_inputs(op, "float32", seed=seed), dtypes)]


@pytest.mark.parametrize("op,dtypes,out_dtype", META_CASES)
def test_dtype_errors_as_torch(op, dtypes, out_dtype):
    ts = _cast(op, dtypes)
    got = _outcome(lambda: _call(ptcore, op, ts, "cuda", out_dtype))
    assert got is RuntimeError
    # the oracle is torch 2.13 (the test extra's): torch 2.11's meta kernels let bmm's
    # mixed batch dtypes through and refused addmm's out_dtype with a TypeError (seen
    # on the H200 run of 2026-11-28, whose image has torch 2.11)
    if _TORCH_VERSION >= (2, 13):
        assert _outcome(lambda: _call(torch, op, ts, "meta", out_dtype)) is RuntimeError


@pytest.mark.parametrize("op,dtypes,out_dtype", KERNEL_CASES)
def test_dtype_errors_of_the_cuda_kernels(op, dtypes, out_dtype):
    with pytest.raises(RuntimeError, match="dtype"):
        _call(ptcore, op, _cast(op, dtypes), "cuda", out_dtype)


@pytest.mark.parametrize("op", OPS)
def test_shape_errors(op):
    ts = _inputs(op, "float16", seed=9)
    bad = list(ts)
    bad[-1] = bad[-1][..., :-1, :]                    # inner dimensions disagree
    with pytest.raises(RuntimeError):
        _call(ptcore, op, bad, "cuda", "float32")
    if op in ("mm", "addmm"):
        bad = list(ts)
        bad[-1] = bad[-1][None]                       # 3-D mat2
        with pytest.raises(RuntimeError):
            _call(ptcore, op, bad, "cuda", "float32")


def test_self_dtype_must_be_input_or_out_dtype():
    ts = _inputs("addmm", "float16", seed=10, self_dtype="float64")
    with pytest.raises(RuntimeError):
        _call(ptcore, "addmm", ts, "cuda", "float32")
    ts = _inputs("baddbmm", "bfloat16", seed=10, self_dtype="float16")
    with pytest.raises(RuntimeError):
        _call(ptcore, "baddbmm", ts, "cuda", "float32")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("out_dtype", ("float32", "float16"))
def test_cpu_raises_not_implemented_as_torch(op, out_dtype):
    ts = _inputs(op, "float16", seed=11)
    with pytest.raises(NotImplementedError):
        getattr(torch, op)(*ts, out_dtype=getattr(torch, out_dtype))
    with pytest.raises(NotImplementedError, match=op):
        getattr(ptcore, op)(*[_pt(t, "cpu") for t in ts], out_dtype=getattr(ptcore, out_dtype))


def test_out_dtype_must_be_a_dtype():
    ts = _inputs("mm", "float16", seed=12)
    with pytest.raises(TypeError):
        torch.mm(*ts, out_dtype=5)
    with pytest.raises(TypeError):
        ptcore.mm(*[_pt(t) for t in ts], out_dtype=5)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_tensor_methods_take_no_out_dtype(device):
    # torch's Tensor.mm/bmm/addmm/baddbmm have no out_dtype (only torch.mm & co.)
    a = torch.ones(2, 2)
    with pytest.raises(TypeError):
        a.mm(a, out_dtype=torch.float32)
    with pytest.raises(TypeError):
        a.addmm(a, a, torch.float32)
    p = ptcore.ones(2, 2, device=device)
    b = p[None]
    for call in (lambda: p.mm(p, out_dtype=ptcore.float32), lambda: p.mm(p, ptcore.float32),
                 lambda: b.bmm(b, out_dtype=ptcore.float32),
                 lambda: p.addmm(p, p, ptcore.float32),
                 lambda: b.baddbmm(b, b, out_dtype=ptcore.float32)):
        with pytest.raises(TypeError):
            call()
    np.testing.assert_array_equal(p.addmm(p, p, beta=2).cpu().numpy(), np.full((2, 2), 4.0))


def test_out_dtype_products_have_no_derivative_as_torchs():
    # torch (meta device): grad_fn torch::autograd::NotImplemented, backward raises
    # "derivative for aten::mm is not implemented"; no forward AD either
    a = ptcore.randn(3, 4, device="cuda", dtype=ptcore.float16, requires_grad=True)
    b = ptcore.randn(4, 5, device="cuda", dtype=ptcore.float16)
    calls = {"mm": lambda: ptcore.mm(a, b, out_dtype=ptcore.float32),
             "bmm": lambda: ptcore.bmm(a[None], b[None], out_dtype=ptcore.float32),
             "addmm": lambda: ptcore.addmm(ptcore.zeros(3, 5, device="cuda"), a, b,
                                           out_dtype=ptcore.float32),
             "baddbmm": lambda: ptcore.baddbmm(ptcore.zeros(1, 3, 5, device="cuda"), a[None],
                                               b[None], out_dtype=ptcore.float32)}
    for name, call in calls.items():
        r = call()
        assert r.dtype is ptcore.float32 and r.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match=f"derivative for '{name}' is not implemented"):
            r.sum().backward()
    import ptcore.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        d = fwAD.make_dual(a.detach(), ptcore.ones_like(a))
        with pytest.raises(NotImplementedError, match="forward AD with mm"):
            ptcore.mm(d, b, out_dtype=ptcore.float32)
