"""ptcore.compile's GELU epilogues (ptcore._inductor.epilogues kinds 4 and 5): exact
GELU of a product, and exact GELU's gradient of the product after it (a transformer
MLP's backward): the product, then eager's own vectorised GELU map once over the whole
result in place (ptcore._ops.kernels._blas.gemm_epilogue with _ew.gelu_map /
_nn_kernels.gelu_backward_map).  Eager's maps take whole vectors from the start of
their range and their scalar expression for the last numel % width elements, and the
gradient's two expressions differ in bits, so the kernel is compared bit for bit with
the product and eager's op on shapes whose tails end mid-vector (with inputs where the
two expressions are known to differ), with NaN, infinities and -0 in the saved input,
transposed operands, every float32 GEMM kernel the CPU runs and (in a child process)
AVX2's 8-float lanes; its refusals; compiled training and inference against eager
(bits) and torch, with the fused steps counted in the generated code so a pass that
stops applying fails here."""
import re
import textwrap

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _blas, _ew, _nn_kernels
from ptcore.autograd._formulas_nn import _gelu_grad
from ptcore._inductor import epilogues

from cpu_capability import run_child, skip_unless_runnable
from training_oracle import assert_same_bits, copy_params, train_sgd

torch = pytest.importorskip("torch")

GELU, GRAD = _ew.gelu_map(), _nn_kernels.gelu_backward_map()
# (eager's maps take whole vectors of 16 floats on AVX-512, 8 on AVX2)
WIDTH = 16 if ptcore.backends.cpu.get_cpu_capability() == "AVX512" else 8


# (the kernel's own tests; on the baseline copy the compiled steps still run, by the ops)
needs_maps = pytest.mark.skipif(
    GELU is None or GRAD is None, reason="eager's F.gelu does not run the vector maps on this "
    "CPU (the baseline copy; test_kernel_on_other_cpu_paths checks the kernel declines)")


@pytest.fixture(autouse=True)
def _one_thread():
    n = ptcore.get_num_threads()
    ptcore.set_num_threads(1)
    yield
    ptcore.set_num_threads(n)


def _operands(M, K, N, seed, scale=1.0):
    rng = np.random.default_rng(seed)

    def t(*shape):
        return ptcore.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))
    x, w, bias, aux = t(M, K), t(N, K), t(N), t(M, N)
    k = min(4, N)
    aux[0, :k] = ptcore.tensor([float("nan"), -0.0, float("inf"), -float("inf")][:k])
    x[-1, :min(2, K)] = ptcore.tensor([float("inf"), float("nan")][:min(2, K)])
    return x, w, bias, aux, t(K, M).t()


def _bits_equal(a, b):
    return np.array_equal(a.numpy().view(np.int32), b.numpy().view(np.int32))


_SIZES = [(768, 128, 512), (96, 80, 72), (7, 5, 3), (200, 33, 130), (37, 64, 129),
          (1000, 40, 17), (3, 300, 5)]


@needs_maps
@pytest.mark.parametrize("size", _SIZES)
def test_kernel_bits_equal_product_then_eager_gelu(size, sgemm_kernel):
    # (sgemm_kernel: once per float32 GEMM kernel the CPU runs: the BLAS, the own
    # AVX2 and AVX-512 GEMMs, each followed by the map)
    M, K, N = size
    for scale in (1.0, 4.0):
        x, w, bias, aux, xs = _operands(M, K, N, M + K + N, scale)
        for a, b in ((x, w.t()), (xs, w.t()), (x, w.t().contiguous())):
            for bb in (bias, None):
                p = ptcore.mm(a, b) if bb is None else ptcore.addmm(bb, a, b)
                got = _blas.gemm_epilogue(4, a, b, bb, None, GELU)
                assert got is not None and got.is_contiguous()
                assert _bits_equal(got, ptcore.nn.functional.gelu(p)), (size, scale, bb is None)
                got = _blas.gemm_epilogue(5, a, b, bb, aux, GRAD)
                assert got is not None
                assert _bits_equal(got, _gelu_grad(p, aux, None, "none")), \
                    (size, scale, bb is None)


@needs_maps
def test_scalar_tail_is_what_eager_gives():
    # the gradient's scalar expression differs from its vector one for some inputs:
    # a result whose numel is not a multiple of the width has its last elements by
    # the scalar one in eager, and the epilogue must give each element eager's kind
    # (a product of exactly 1.0 everywhere: the gradient is gelu'(x) itself)
    w_ = WIDTH
    rng = np.random.default_rng(11)
    cand = (rng.standard_normal(4096) * 3).astype(np.float32)
    vec = _gelu_grad(ptcore.ones(4096), ptcore.from_numpy(cand), None, "none").numpy()
    sca = np.array([_gelu_grad(ptcore.ones(1), ptcore.from_numpy(cand[i:i + 1]), None,
                               "none").item() for i in range(300)], dtype=np.float32)
    differ = cand[:300][vec[:300].view(np.int32) != sca.view(np.int32)]
    assert len(differ) >= w_          # (enough inputs where the two kinds differ)
    M, K, N = 31, 64, 45              # numel 1395: a tail of 1395 % width elements
    tail = M * N % w_
    assert tail > 0
    x = ptcore.full((M, K), 0.25)
    w = ptcore.full((K, N), 0.0625)
    aux = ptcore.from_numpy((rng.standard_normal((M, N)) * 3).astype(np.float32))
    flat = aux.view(-1)
    flat[-tail:] = ptcore.from_numpy(differ[:tail].copy())
    flat[:w_] = ptcore.from_numpy(differ[:w_].copy())     # (and some in the vectors)
    p = ptcore.mm(x, w)
    assert bool((p == 1.0).all())
    eager = _gelu_grad(p, aux, None, "none")
    got = _blas.gemm_epilogue(5, x, w, None, aux, GRAD)
    assert _bits_equal(got, eager)
    # the tail by the vector expression would not be eager's bits
    as_vec = _gelu_grad(ptcore.ones(w_), ptcore.from_numpy(differ[:w_].copy()), None, "none")
    assert not np.array_equal(as_vec.numpy()[:tail].view(np.int32),
                              eager.view(-1)[-tail:].numpy().view(np.int32))
    assert _bits_equal(eager.view(-1)[:w_], as_vec)


_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import ptcore
    from ptcore._ops.kernels import _blas, _ew, _nn_kernels
    from ptcore.autograd._formulas_nn import _gelu_grad
    ptcore.set_num_threads(1)
    G, B = _ew.gelu_map(), _nn_kernels.gelu_backward_map()
    cap = sys.argv[1]
    rng = np.random.default_rng(0)
    for M, K, N in [(96, 80, 72), (7, 5, 3), (37, 64, 129), (1000, 40, 17)]:
        x = ptcore.from_numpy(rng.standard_normal((M, K)).astype(np.float32) * 3)
        w = ptcore.from_numpy(rng.standard_normal((K, N)).astype(np.float32))
        aux = ptcore.from_numpy(rng.standard_normal((M, N)).astype(np.float32) * 3)
        aux[0, :3] = ptcore.tensor([float("nan"), float("inf"), -0.0])
        p = ptcore.mm(x, w)
        g4 = _blas.gemm_epilogue(4, x, w, None, None, G)
        g5 = _blas.gemm_epilogue(5, x, w, None, aux, B)
        if cap == "default":
            # (eager's baseline F.gelu is not the map's whole-vector pass: no epilogue)
            assert G is None and B is None and g4 is None and g5 is None
            continue
        e4 = ptcore.nn.functional.gelu(p).numpy().view(np.int32)
        e5 = _gelu_grad(p, aux, None, "none").numpy().view(np.int32)
        assert np.array_equal(g4.numpy().view(np.int32), e4), (M, K, N)
        assert np.array_equal(g5.numpy().view(np.int32), e5), (M, K, N)
""")


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_kernel_on_other_cpu_paths(cap):
    skip_unless_runnable(cap)
    run_child(cap, _CHILD, cap)


@needs_maps
def test_kernel_refuses_what_it_does_not_take():
    x, w, aux = ptcore.randn(40, 30), ptcore.randn(30, 20), ptcore.randn(40, 20)
    with pytest.raises(TypeError):
        _blas.gemm_epilogue(4, x, w, None, None, (GELU, 16))      # not a capsule
    with pytest.raises(ValueError):
        _blas.gemm_epilogue(5, x, w, None, aux, GELU)             # the forward's map
    with pytest.raises(ValueError):
        _blas.gemm_epilogue(4, x, w, None, None, GRAD)
    with pytest.raises(TypeError):
        _blas.gemm_epilogue(4, x, w, None, None, object())
    assert _blas.gemm_epilogue(4, x, w, None, None) is None      # (no map on this CPU)
    assert _blas.gemm_epilogue(5, x, w, None, aux.t().contiguous().t(), GRAD) is None
    assert _blas.gemm_epilogue(5, x, w, None, ptcore.randn(40, 40)[:, :20], GRAD) is None
    assert _blas.gemm_epilogue(5, x, w, None, None, GRAD) is None
    assert _blas.gemm_epilogue(4, x.double(), w.double(), None, None, GELU) is None
    ptcore.set_num_threads(2)
    # (eager's GELU pass is parallel at two threads: the ops themselves run)
    assert _blas.gemm_epilogue(4, x, w, None, None, GELU) is None
    assert _blas.gemm_epilogue(5, x, w, None, aux, GRAD) is None


def _calls(src, name):
    return len(re.findall(rf"= {name}_\d+\(", src))


def _gelu_mlp(lib, approximate="none"):
    lib.manual_seed(0)
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(40, 96)
            self.b = nn.Linear(96, 64)
            self.out = nn.Linear(64, 5)
            self.act = nn.GELU(approximate=approximate)

        def forward(self, x):
            h = self.act(self.a(x))
            h = lib.nn.functional.gelu(self.b(h), approximate=approximate)
            return self.out(h)
    return Block()


def _data(lib, shape, steps=4):
    rng = np.random.default_rng(7)
    xs = [lib.from_numpy(rng.standard_normal(shape + (40,)).astype(np.float32))
          for _ in range(steps)]
    ys = [lib.from_numpy(rng.integers(0, 5, shape).astype(np.int64)) for _ in range(steps)]
    return xs, ys


@pytest.mark.parametrize("shape", [(16,), (4, 9), (1,)])
def test_compiled_gelu_mlp_training_equals_eager(shape):
    # (4, 9): a transformer's (B, T, C) tokens, a view between product and GELU
    me, mc = _gelu_mlp(ptcore), _gelu_mlp(ptcore)
    cf = ptcore.compile(lambda x: mc(x))
    xs, ys = _data(ptcore, shape)
    lc, gc = train_sgd(mc, cf, xs, ys, ptcore)
    assert_same_bits(train_sgd(me, me, xs, ys, ptcore), (lc, gc), me, mc)
    mt = _gelu_mlp(torch)
    copy_params(_gelu_mlp(ptcore), mt)
    lt, gt = train_sgd(mt, mt, *_data(torch, shape), torch)
    np.testing.assert_allclose(lc, lt, rtol=1e-4)
    for a, b in zip(gc, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)
    seg = cf.entries[0].program.segments[0]
    fwd, bwd = seg.backward.fwd_code.source, seg.backward.bwd_code.source
    # backward: both GELUs' gradients of the product after them (the second one's
    # product is the output layer's input gradient); forward: GELU's input is saved
    # for its gradient, so the forward GELUs stay
    assert len(re.findall(r"= gemm_epilogue_\d+\(5,", bwd)) == 2
    assert _calls(bwd, "gelu_grad") == 0
    assert _calls(fwd, "gelu") == 2


def test_compiled_gelu_inference_fuses_the_forward():
    m = _gelu_mlp(ptcore).eval()
    cf = ptcore.compile(lambda x: m(x))
    x = ptcore.from_numpy(np.random.default_rng(1).standard_normal((4, 9, 40)).astype(np.float32))
    with ptcore.no_grad():
        want = m(x)
        for _ in range(2):
            assert _bits_equal(cf(x), want)
    src = cf.entries[0].program.segments[0].code.source
    assert len(re.findall(r"= gemm_epilogue_\d+\(4,", src)) == 2
    assert _calls(src, "gelu") == 0


def test_tanh_gelu_and_the_pass_switch_keep_the_ops():
    # approximate="tanh" has no epilogue: the ops, eager's bits; with the pass off
    # nothing fuses and the losses are the same bits as with it on
    me, mc = _gelu_mlp(ptcore, "tanh"), _gelu_mlp(ptcore, "tanh")
    cf = ptcore.compile(lambda x: mc(x))
    xs, ys = _data(ptcore, (8,))
    assert train_sgd(mc, cf, xs, ys, ptcore)[0] == train_sgd(me, me, xs, ys, ptcore)[0]
    bwd = cf.entries[0].program.segments[0].backward.bwd_code.source
    assert "gemm_epilogue_" not in bwd or not re.findall(r"= gemm_epilogue_\d+\(5,", bwd)
    out = []
    try:
        for on in (True, False):
            epilogues.enabled[0] = on
            ptcore.compiler.reset()
            m = _gelu_mlp(ptcore)
            f = ptcore.compile(lambda x: m(x))
            out.append(train_sgd(m, f, xs, ys, ptcore)[0])
            bwd = f.entries[0].program.segments[0].backward.bwd_code.source
            assert bool(re.findall(r"= gemm_epilogue_\d+\(5,", bwd)) == on
    finally:
        epilogues.enabled[0] = True
    assert out[0] == out[1]
