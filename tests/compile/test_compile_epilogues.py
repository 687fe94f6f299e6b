"""ptcore.compile's GEMM epilogues (ptcore._inductor.epilogues): relu(addmm), the
ReLU gradient's mask of a product and a residual add run as one product with the op
applied where the product leaves its output (ptcore._ops.kernels._blas.gemm_epilogue).
The kernel is compared bit for bit with the product and the op in sequence on every
path (ptcore's GEMM with the per-tile epilogue on each ISA the CPU has, the BLAS, two
threads, small products, transposed operands, NaN and -0); its refusals; compiled
training steps (Linear-ReLU stacks, a residual block) with losses, gradients and
parameters after several SGD steps against eager (bits) and torch, for odd inputs
(non-contiguous, batch 1, no bias, float64: the chain's own ops), with the fused
steps counted in the generated code so a pass that stops applying fails here."""
import re

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _blas
from ptcore._ops.pointwise import _threshold_backward
from ptcore._inductor import epilogues

from training_oracle import assert_same_bits, copy_params, train_sgd

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _threads_and_switch():
    n = ptcore.get_num_threads()
    yield
    ptcore.set_num_threads(n)
    epilogues.enabled[0] = True


def _eager(kind, a, b, bias, aux):
    p = ptcore.mm(a, b) if bias is None else ptcore.addmm(bias, a, b)
    if kind == 1:
        return ptcore.relu(p)
    if kind == 2:
        return _threshold_backward(p, aux, 0)
    return aux + p


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [(96, 80, 72), (128, 784, 64), (7, 5, 3), (200, 33, 130),
                                  (32, 256, 128)])
def test_kernel_bits_equal_product_then_op(threads, size, sgemm_kernel):
    # (sgemm_kernel: once per float32 GEMM kernel the CPU runs -- BLAS, AVX2, AVX-512 --
    # the per-tile epilogue on the own GEMM's, the separate pass on the BLAS's)
    M, K, N = size
    rng = np.random.default_rng(M + K + N)
    ptcore.set_num_threads(threads)

    def t(*shape):
        return ptcore.from_numpy(rng.standard_normal(shape).astype(np.float32))
    x, w, bias = t(M, K), t(N, K), t(N)
    aux = t(M, N)
    aux[0, :3] = ptcore.tensor([float("nan"), -0.0, 0.0])
    xs = t(K, M).t()                    # a transposed operand
    for a, b in ((x, w.t()), (xs, w.t()), (x, w.t().contiguous())):
        for bb in (bias, None):
            for kind in (1, 2, 3):
                got = _blas.gemm_epilogue(kind, a, b, bb, None if kind == 1 else aux)
                want = _eager(kind, a, b, bb, aux)
                assert got is not None and got.is_contiguous()
                assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True), \
                    (kind, bb is None)


def test_kernel_relu_and_mask_keep_nan_and_signed_zero():
    a = ptcore.tensor([[1.0, 0.0], [0.0, 1.0]])
    b = ptcore.tensor([[float("nan"), -0.0], [-2.0, 3.0]])
    got = _blas.gemm_epilogue(1, a, b, None, None)
    want = ptcore.relu(ptcore.mm(a, b))
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
    assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True)
    y = ptcore.tensor([[float("nan"), 0.0], [-1.0, 2.0]])
    g = ptcore.tensor([[5.0, 6.0], [7.0, float("inf")]])
    got = _blas.gemm_epilogue(2, g, ptcore.eye(2), None, y)
    assert ptcore.equal(got, _threshold_backward(ptcore.mm(g, ptcore.eye(2)), y, 0))


def test_kernel_refuses_what_it_does_not_take():
    x, w = ptcore.randn(4, 3), ptcore.randn(3, 5)
    assert _blas.gemm_epilogue(1, x.double(), w.double(), None, None) is None
    assert _blas.gemm_epilogue(1, x[:1], w, None, None) is None          # a vector product
    assert _blas.gemm_epilogue(3, x, w, None, ptcore.randn(5)) is None   # broadcast aux
    assert _blas.gemm_epilogue(3, x, w, None, ptcore.randn(5, 4).t()) is None
    assert _blas.gemm_epilogue(1, x, w, ptcore.randn(4), None) is None   # bias of wrong size
    with pytest.raises(ValueError):
        _blas.gemm_epilogue(6, x, w, None, None)


def test_step_falls_back_to_the_chain():
    # float64, a broadcast residual and a recorded chain take the ops themselves
    x, w, b = ptcore.randn(6, 4, dtype=ptcore.float64), ptcore.randn(4, 3, dtype=ptcore.float64), \
        ptcore.randn(3, dtype=ptcore.float64)

    def run(bias, a, bm, aux):
        return aux + ptcore.addmm(bias, a, bm)
    r = ptcore.randn(6, 3, dtype=ptcore.float64)
    assert ptcore.equal(epilogues.gemm_epilogue(3, b, x, w, r, (6, 3), run), run(b, x, w, r))
    xf, wf, bf = x.float(), w.float(), b.float()
    r1 = ptcore.randn(1, 3)
    assert ptcore.equal(epilogues.gemm_epilogue(3, bf, xf, wf, r1, (6, 3), run),
                        run(bf, xf, wf, r1))
    xg = xf.clone().requires_grad_(True)
    out = epilogues.gemm_epilogue(3, bf, xg, wf, r.float(), (6, 3), run)
    assert out.grad_fn is not None
    out.sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), ptcore.ones(6, 3).mm(wf.t()).numpy(), rtol=1e-6)


def _calls(src, name):
    return len(re.findall(rf"= {name}_\d+\(", src))


def _mlp(lib, dtype, bias=True):
    lib.manual_seed(0)
    nn = lib.nn
    m = nn.Sequential(nn.Linear(40, 64, bias=bias), nn.ReLU(), nn.Linear(64, 48, bias=bias),
                      nn.ReLU(), nn.Linear(48, 5, bias=bias))
    return m.to(getattr(lib, dtype))


class _Residual:
    @staticmethod
    def make(lib, dtype):
        nn = lib.nn
        lib.manual_seed(1)

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(32, 96)
                self.b = nn.Linear(96, 32)
                self.out = nn.Linear(32, 4)

            def forward(self, x):
                h = x.relu()
                h = h + self.b(lib.relu(self.a(h)))     # residual after the Linear
                return self.out(h)
        return Block().to(getattr(lib, dtype))


def _data(lib, dtype, batch, feat, classes, layout, steps=4):
    rng = np.random.default_rng(3)
    xs, ys = [], []
    for _ in range(steps):
        a = rng.standard_normal((feat, batch) if layout == "t" else (batch, feat)).astype(dtype)
        x = lib.from_numpy(a)
        xs.append(x.t() if layout == "t" else x)
        ys.append(lib.from_numpy(rng.integers(0, classes, batch).astype(np.int64)))
    return xs, ys


def _compare(make, dtype, batch, feat, classes, layout):
    """Train eager and compiled copies of ``make(lib, dtype)`` and torch's: losses,
    gradients and parameters compiled == eager (bits), close to torch; returns the
    generated forward and backward sources."""
    me, mc = make(ptcore, dtype), make(ptcore, dtype)
    cf = ptcore.compile(lambda x: mc(x))
    xs, ys = _data(ptcore, dtype, batch, feat, classes, layout)
    lc, gc = train_sgd(mc, cf, xs, ys, ptcore)
    assert_same_bits(train_sgd(me, me, xs, ys, ptcore), (lc, gc), me, mc)
    mt = make(torch, dtype)
    copy_params(make(ptcore, dtype), mt)
    lt, gt = train_sgd(mt, mt, *_data(torch, dtype, batch, feat, classes, layout), torch)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(lc, lt, rtol=tol)
    for a, b in zip(gc, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
    seg = cf.entries[0].program.segments[0]
    return seg.backward.fwd_code.source, seg.backward.bwd_code.source


@pytest.mark.parametrize("case", [("float32", 16, "c", True), ("float32", 16, "t", True),
                                  ("float32", 1, "c", True), ("float32", 16, "c", False),
                                  ("float64", 16, "c", True)])
def test_compiled_mlp_training_equals_eager(case):
    dtype, batch, layout, bias = case
    fwd, bwd = _compare(lambda lib, dt: _mlp(lib, dt, bias), dtype, batch, 40, 5, layout)
    # two Linear+ReLU pairs forward, two ReLU gradients of a product backward
    assert _calls(fwd, "gemm_epilogue") == 2 and _calls(fwd, "relu") == 0
    assert _calls(bwd, "gemm_epilogue") == 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_residual_block_equals_eager(dtype):
    fwd, bwd = _compare(_Residual.make, dtype, 24, 32, 4, "c")
    # forward: relu(Linear a), h + Linear b; backward: the mask of relu(a) (the
    # input needs no gradient: no residual gradient sum to fuse)
    assert _calls(fwd, "gemm_epilogue") == 2
    assert _calls(bwd, "gemm_epilogue") == 1


def test_pass_switch_gives_the_same_losses():
    xs, ys = _data(ptcore, "float32", 16, 40, 5, "c")
    out = []
    for on in (True, False):
        epilogues.enabled[0] = on
        ptcore.compiler.reset()
        m = _mlp(ptcore, "float32")
        cf = ptcore.compile(lambda x: m(x))
        out.append(train_sgd(m, cf, xs, ys, ptcore)[0])
        src = cf.entries[0].program.segments[0].backward.fwd_code.source
        assert (_calls(src, "gemm_epilogue") > 0) == on
    assert out[0] == out[1]


def _tl(lib, x, w, b, split):
    y = lib.matmul(x.transpose(1, 0), w) + b
    return y.view(y.shape[0], y.shape[1], 2, -1) if split else y


@pytest.mark.parametrize("case", [("float32", 16, 128, True), ("float32", 3, 64, True),
                                  ("float32", 16, 300, True), ("float64", 16, 128, True),
                                  ("float32", 16, 128, False)])
def test_transposed_linear_equals_eager(case):
    # add(matmul(x.transpose(1, 0), w), b) read by a view splitting its last dim: one
    # addmm over x's rows seen through a transpose where ptcore's GEMM runs eager's
    # products too (16 x 192 x 128), else (small batch, C = 300 over a k block,
    # float64) the chain's ops; a result read otherwise (returned) keeps the ops
    dtype, B, C, split = case
    N = 192
    rng = np.random.default_rng(C)
    xa, wa = rng.standard_normal((B, 5, C)).astype(dtype), rng.standard_normal((C, N)).astype(dtype)
    ba, ga = rng.standard_normal(N).astype(dtype), rng.standard_normal((5, B, N)).astype(dtype)
    cf = ptcore.compile(lambda x, w, b: _tl(ptcore, x, w, b, split))
    for _ in range(2):
        pc = [ptcore.from_numpy(a.copy()).requires_grad_(True) for a in (xa, wa, ba)]
        pe = [ptcore.from_numpy(a.copy()).requires_grad_(True) for a in (xa, wa, ba)]
        yc, ye = cf(*pc), _tl(ptcore, *pe, split)
        assert tuple(yc.shape) == tuple(ye.shape) and ptcore.equal(yc.detach(), ye.detach())
        yc.backward(ptcore.from_numpy(ga).view(yc.shape))
        ye.backward(ptcore.from_numpy(ga).view(ye.shape))
        for a, b in zip(pc, pe):
            assert ptcore.equal(a.grad, b.grad)
    pt = [torch.from_numpy(a.copy()).requires_grad_(True) for a in (xa, wa, ba)]
    yt = _tl(torch, *pt, split)
    yt.backward(torch.from_numpy(ga).view(yt.shape))
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(yc.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(pc, pt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    fwd = cf.entries[0].program.segments[0].backward.fwd_code.source
    assert _calls(fwd, "transposed_linear") == (1 if split else 0)
    assert ("matmul" in fwd) == (not split)
    # (the small batch and the long k take the ops)
    if B == 3 or C == 300:
        assert not _blas.bias_in_product_exact(B, N, C)


@pytest.mark.parametrize("case", [("mlp", (16, 40), True), ("mlp", (16, 40), False),
                                  ("mlp", (4, 9, 40), True), ("mlp", (4, 9, 40), False),
                                  ("residual", (4, 6, 32), True), ("mlp", (16, 40), "t"),
                                  ("mlp", (0, 40), True)])
def test_inference_graph_fuses_linear_epilogues(case):
    # an inference graph keeps F.linear: relu(linear(...)) and h + linear(...) fuse
    # into the product where eager's linear is one addmm/mm of the input's rows (a
    # 2-D input, or a contiguous one with a bias), else (a 3-D input without a bias,
    # a transposed input of more dims) the ops run; the bits are eager's either way
    which, shape, bias = case
    m = (_mlp(ptcore, "float32", bias=bias is not False) if which == "mlp"
         else _Residual.make(ptcore, "float32")).eval()
    rng = np.random.default_rng(5)
    x = ptcore.from_numpy(rng.standard_normal(shape).astype(np.float32))
    if bias == "t":
        x = ptcore.from_numpy(rng.standard_normal(shape[::-1]).astype(np.float32)).t()
    cf = ptcore.compile(lambda v: m(v))
    with ptcore.no_grad():
        want = m(x)
        for _ in range(2):
            got = cf(x)
            assert got.shape == want.shape
            assert np.array_equal(got.numpy().view(np.int32), want.numpy().view(np.int32))
    src = cf.entries[0].program.segments[0].code.source
    n = _calls(src, "gemm_epilogue")
    assert n == 2                       # (the step is in the graph; it decides per call)
    if which == "residual":
        # (relu(x) reads no product; relu(a(h)) and h + b(...) fuse)
        assert _calls(src, "relu") == 1
        assert len(re.findall(r"= gemm_epilogue_\d+\(3,", src)) == 1
    else:
        assert _calls(src, "relu") == 0


def test_inference_linear_epilogue_falls_back_for_what_eager_does_otherwise():
    # F.linear of a 3-D input without a bias is a matmul in eager, and a
    # non-contiguous 3-D input with a bias is not one addmm of its rows: the step
    # runs the chain's ops (eager's bits), and a float64 model likewise
    w, b = ptcore.randn(24, 16), ptcore.randn(24)
    calls = []

    def run(bias, x, wt, aux):
        calls.append(1)
        return ptcore.relu(ptcore.nn.functional.linear(x, wt, bias))
    x3 = ptcore.randn(3, 5, 16)
    for args in ((None, x3, w), (b, x3.transpose(0, 1), w), (b.double(), x3.double(), w.double())):
        calls.clear()
        got = epilogues.linear_epilogue(1, args[0], args[1], args[2], None, (3, 5, 24), run)
        assert calls == [1]
        assert ptcore.equal(got, ptcore.relu(ptcore.nn.functional.linear(args[1], args[2], args[0])))
    calls.clear()
    got = epilogues.linear_epilogue(1, b, x3, w, None, (3, 5, 24), run)
    assert calls == [] and ptcore.equal(got, ptcore.relu(ptcore.nn.functional.linear(x3, w, b)))
