"""The C dense fast paths of CUDA's mm, matmul (2-D), addmm and F.linear
(ptcore/cuda/ops/matmul_fast.pyx), taken from the entries (OpDef.device_fast)
before the device layer: values against the CPU, bitwise the general
path's (the same cuBLAS call), autograd with the general path's graph, and
every case they must leave to the general path (which raises the errors)."""
import numpy as np
import pytest

import ptcore
from ptcore.cuda.ops import matmul_fast as _matmul_fast
from ptcore.cuda.runtime import state as _runtime

F = ptcore.nn.functional
_TOL = {ptcore.float32: 1e-5, ptcore.float64: 1e-12, ptcore.float16: 2e-2, ptcore.bfloat16: 1e-1}


def _t(shape, dtype=ptcore.float32, seed=0):
    x = ptcore.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(dtype)
    return x, x.cuda()


def _close(got, ref, dtype):
    assert got.device.type == "cuda" and got.dtype == ref.dtype and got.shape == ref.shape
    tol = _TOL[dtype]
    np.testing.assert_allclose(got.cpu().double().numpy(), ref.double().numpy(), rtol=tol, atol=tol)


def _general(fn):
    """``fn()`` with the matmul fast paths removed (the general path)."""
    _matmul_fast.uninstall()
    try:
        return fn()
    finally:
        _matmul_fast.install()


def _cases(dtype):
    a, da = _t((7, 5), dtype, 1)
    b, db = _t((5, 3), dtype, 2)
    w, dw = _t((3, 5), dtype, 3)        # a Linear weight (out, in)
    at, dat = _t((5, 7), dtype, 4)      # a.T's storage
    bias, dbias = _t((3,), dtype, 5)
    full, dfull = _t((7, 3), dtype, 6)
    row, drow = _t((1, 3), dtype, 7)
    s, ds = _t((), dtype, 8)
    v, dv = _t((5, 3), dtype, 9)        # a weight stored transposed
    return [
        ("mm", lambda L, D: ptcore.mm(*((da, db) if D else (a, b)))),
        ("mm a.T", lambda L, D: ptcore.mm(*((dat.t(), db) if D else (at.t(), b)))),
        ("mm b=w.t()", lambda L, D: (da if D else a).mm((dw if D else w).t())),
        ("matmul", lambda L, D: ptcore.matmul(*((da, db) if D else (a, b)))),
        ("@", lambda L, D: (da @ dw.t()) if D else (a @ w.t())),
        ("addmm (n,)", lambda L, D: ptcore.addmm(*((dbias, da, db) if D else (bias, a, b)))),
        ("addmm (m, n)", lambda L, D: ptcore.addmm(*((dfull, da, db) if D else (full, a, b)),
                                                   beta=0.5, alpha=-2)),
        ("addmm (1, n)", lambda L, D: (drow if D else row).addmm(*((da, db) if D else (a, b)),
                                                                 alpha=3)),
        ("addmm ()", lambda L, D: ptcore.addmm(*((ds, da, db) if D else (s, a, b)), beta=2.0)),
        ("addmm beta 0", lambda L, D: ptcore.addmm(*((dbias, da, db) if D else (bias, a, b)), beta=0)),
        ("linear", lambda L, D: F.linear(*((da, dw, dbias) if D else (a, w, bias)))),
        ("linear bias=", lambda L, D: F.linear(*((da, dw) if D else (a, w)),
                                               bias=dbias if D else bias)),
        ("linear no bias", lambda L, D: F.linear(*((da, dw) if D else (a, w)))),
        ("linear w=v.t()", lambda L, D: F.linear(*((da, dv.t()) if D else (a, v.t())))),
    ]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
def test_values_without_the_layer_and_bitwise_the_general_path(counted, dtype):
    for name, f in _cases(dtype):
        counted.clear()
        got = f(ptcore, True)
        assert counted == [], name
        _close(got, f(ptcore, False), dtype)
        assert ptcore.equal(got.cpu(), _general(lambda: f(ptcore, True)).cpu()), name


def test_addmm_beta_zero_ignores_nan_input():
    a, da = _t((4, 3))
    b, db = _t((3, 2))
    nan = ptcore.full((2,), float("nan")).cuda()
    r = ptcore.addmm(nan, da, db, beta=0)
    assert not ptcore.isnan(r.cpu()).any()
    _close(r, a @ b, ptcore.float32)


def test_autograd_graph_and_gradients_as_the_general_path():
    x, dx = _t((6, 4), seed=1)
    w, dw = _t((3, 4), seed=2)
    b, db = _t((3,), seed=3)

    def run(x, w, b, bias):
        x = x.clone().requires_grad_()
        w = w.clone().requires_grad_()
        b = b.clone().requires_grad_()
        y = F.linear(x, w, b if bias else None)
        z = (y * y).sum() + (x @ w.t()).sum() + ptcore.mm(x, w.t()).sum() + \
            ptcore.addmm(b, x, w.t(), beta=0.5, alpha=2).sum()
        z.backward()
        return y, x.grad, w.grad, b.grad
    for bias in (True, False):
        y, gx, gw, gb = run(dx, dw, db, bias)
        assert y.grad_fn.name() == ("AddmmBackward0" if bias else "MmBackward0")
        names = [n.name() for n, _ in y.grad_fn.next_functions]
        assert names == ["torch::autograd::AccumulateGrad"] * (2 if bias else 1) + ["TBackward0"]
        assert y.grad_fn.next_functions[-1][0].next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
        ry, rgx, rgw, rgb = run(x, w, b, bias)
        for g, r in ((y, ry), (gx, rgx), (gw, rgw)):
            _close(g.detach(), r.detach(), ptcore.float32)
        _close(gb, rgb, ptcore.float32)
        gy, ggx, ggw, ggb = _general(lambda: run(dx, dw, db, bias))
        for g, r in ((y, gy), (gx, ggx), (gw, ggw), (gb, ggb)):
            assert ptcore.equal(g.detach().cpu(), r.detach().cpu())


def test_declined_calls_take_the_general_path(counted):
    a, da = _t((4, 6))
    b, db = _t((6, 5))
    declined = [
        lambda: ptcore.mm(da[:, ::2], db[:3]),                      # strided, not transposed
        lambda: ptcore.mm(da.to(ptcore.int64), db.to(ptcore.int64)),   # integers: no cuBLAS GEMM
        lambda: ptcore.mm(da.to(ptcore.complex64), db.to(ptcore.complex64)),
        lambda: ptcore.matmul(da.unsqueeze(0), db),                 # 3-D
        lambda: ptcore.mm(da[:, :0], db[:0]),                       # k = 0
        lambda: ptcore.mm(da[:0], db),                              # m = 0
        lambda: ptcore.mm(da, db, out=ptcore.empty(4, 5, device="cuda")),
        lambda: ptcore.addmm(ptcore.ones(4, 1, device="cuda"), da, db),   # a (m, 1) input
        lambda: ptcore.addmm(ptcore.ones(5, device="cuda").double(), da, db),
        lambda: ptcore.addmm(ptcore.ones(5, device="cuda"), da, db, beta=True),
        lambda: F.linear(da.unsqueeze(0), db.t()),                  # a batch of rows
        lambda: F.linear(da, db.t(), ptcore.ones(4, 5, device="cuda")),   # a 2-D bias
    ]
    for f in declined:
        counted.clear()
        try:
            r = f()
        except NotImplementedError:
            r = None                # (the general path's answer for integer products)
        assert counted and (r is None or r.device.type == "cuda")


def test_errors_stay_those_of_the_general_path():
    a, da = _t((4, 6))
    b, db = _t((5, 5))
    for f in (lambda A, B: ptcore.mm(A, B), lambda A, B: A @ B, lambda A, B: F.linear(A, B),
              lambda A, B: ptcore.addmm(ptcore.ones(5, device=A.device), A, B),
              lambda A, B: ptcore.mm(A, B.double())):
        with pytest.raises(RuntimeError) as cpu:
            f(a, b)
        with pytest.raises(type(cpu.value)):
            f(da, db)
    with pytest.raises(RuntimeError):
        ptcore.mm(da, ptcore.ones(6, 2))                            # a CPU operand
    if ptcore.cuda.device_count() > 1:
        with pytest.raises(RuntimeError):
            ptcore.mm(da, ptcore.ones(6, 2, device="cuda:1"))


def test_tf32_setting_reaches_the_gemm(monkeypatch):
    drv = _runtime.lazy_init("test")
    seen = []
    orig = drv.gemm

    def gemm(*args, **kw):
        seen.append(args[18])       # the compute type
        return orig(*args, **kw)
    monkeypatch.setattr(drv, "gemm", gemm)
    a = ptcore.ones(2, 3).cuda()
    b = ptcore.ones(3, 2).cuda()
    old = ptcore.get_float32_matmul_precision()
    try:
        ptcore.mm(a, b)
        ptcore.backends.cuda.matmul.allow_tf32 = True
        ptcore.mm(a, b)
        _general(lambda: ptcore.mm(a, b))
    finally:
        ptcore.set_float32_matmul_precision(old)
    ptcore.mm(a.double(), b.double())
    ptcore.mm(a.half(), b.half())
    assert seen == [68, 77, 77, 70, 68]


def test_the_fast_paths_can_be_removed(counted):
    a = ptcore.ones(2, 2).cuda()
    _matmul_fast.uninstall()
    try:
        assert ptcore.mm(a, a).cpu().tolist() == [[2.0, 2.0], [2.0, 2.0]]
        assert counted == ["mm"]
    finally:
        _matmul_fast.install()
    counted.clear()
    assert (a @ a).cpu().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert counted == []


BATCHED = [((3, 4, 5), (3, 5, 6)), ((2, 3, 4, 5), (2, 3, 5, 2)), ((1, 1, 5), (1, 5, 1))]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16])
@pytest.mark.parametrize("sa,sb", BATCHED)
def test_batched_matmul_from_c(counted, sa, sb, dtype):
    """Operands of three or more dims with the same batch dims: one
    strided-batched GEMM from C (a transposed operand -- attention's
    ``k.transpose(-2, -1)`` -- copied first, as the general path does):
    bitwise the general path's, close to the CPU's, the same graph and
    gradients."""
    a, da = _t(sa, dtype, 11)
    b, db = _t(sb, dtype, 12)
    bt, dbt = _t(sb[:-2] + (sb[-1], sb[-2]), dtype, 13)
    for call in (lambda x, y, z: x @ y, lambda x, y, z: ptcore.matmul(x, z.transpose(-2, -1)),
                 lambda x, y, z: x.matmul(y)):
        del counted[:]
        got = call(da, db, dbt)
        assert counted == []
        _close(got, call(a.float(), b.float(), bt.float()).to(dtype) if dtype in (
            ptcore.float16, ptcore.bfloat16) else call(a, b, bt), dtype)
        want = _general(lambda: call(da, db, dbt))
        assert got.stride() == want.stride()
        np.testing.assert_array_equal(got.cpu().double().numpy(), want.cpu().double().numpy())
    if dtype is not ptcore.float64:
        return
    x, y = da.clone().requires_grad_(), dbt.clone().requires_grad_()
    g = _t(sa[:-1] + (sb[-1],), dtype, 14)[1]

    def run():
        out = x @ y.transpose(-2, -1)
        return [out.grad_fn.name()] + list(ptcore.autograd.grad(out, (x, y), g))
    got, want = run(), _general(run)
    assert got[0] == want[0]
    for u, v in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(u.cpu().numpy(), v.cpu().numpy())


def test_batched_matmul_declines(counted):
    _, a = _t((3, 4, 5), seed=1)
    for y in (_t((1, 5, 2), seed=2)[1], _t((5, 2), seed=3)[1], _t((2, 3, 5, 2), seed=4)[1],
              _t((3, 5, 2), ptcore.float64, 5)[1], _t((3, 5, 0), seed=6)[1]):
        del counted[:]
        if y.dtype is ptcore.float64:
            with pytest.raises(RuntimeError, match="same dtype"):
                a @ y
            continue
        got = a @ y
        assert counted
        _close(got, a.cpu() @ y.cpu(), ptcore.float32)
