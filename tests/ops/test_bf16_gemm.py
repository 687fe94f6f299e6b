"""bfloat16 matrix products on CPUs with AVX512-BF16 (ptc_bgemm.h): the
instruction's sums (per lane acc += a_odd b_odd, then + a_even b_even, each
rounded once; k blocks of 512 added in order), the optional float32 term
(addmm's bias) added before the one rounding to bfloat16.  Checked against an
emulation of those steps, across operand layouts, thread counts, batches and
the blocking's edges, against torch (whose oneDNN kernels use the same
instruction), and the float32 path that runs elsewhere."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _blas

needs_bf16 = pytest.mark.skipif(not _blas.bgemm_available(),
                                reason="the CPU has no AVX512-BF16 (products run in float32)")

KC = 512


def _bf16_round(x32):
    u = np.ascontiguousarray(x32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x32), np.uint16(0xFFFF), r)


def _widen(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _rand_bf16(shape, rng, scale=1.0):
    """float32 values exactly representable in bfloat16 (no subnormals)"""
    return _widen(_bf16_round((rng.standard_normal(shape) * scale).astype(np.float32)))


def _f32_add(x, y):
    # float32 x + y (exact in float64 for these magnitudes, then one rounding)
    return (x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)


def _emulate(a, b, init=None):
    """the kernel's float32 steps for float32 matrices holding bfloat16 values"""
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), np.float32)
    for k0 in range(0, max(k, 1), KC):
        acc = np.zeros((m, n), np.float32)
        k1 = min(k, k0 + KC)
        for q in range(k0, k1, 2):
            # the pair's odd product first (0 * 0 past an odd k), then the even one
            odd = np.outer(a[:, q + 1], b[q + 1]) if q + 1 < k1 else np.zeros((m, n))
            acc = _f32_add(acc, odd.astype(np.float32))
            acc = _f32_add(acc, np.outer(a[:, q], b[q]).astype(np.float32))
        c = acc if k0 == 0 else _f32_add(c, acc)
    if init is not None:
        c = _f32_add(c, init)
    return _bf16_round(c)


def _bits(t):
    return t.contiguous().view(ptcore.int16).numpy().view(np.uint16)


def _pt(x):
    return ptcore.from_numpy(np.ascontiguousarray(x)).bfloat16()


@needs_bf16
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (5, 7, 3), (12, 2, 32), (13, 33, 65), (37, 511, 40),
                                   (25, 512, 31), (26, 513, 33), (11, 1100, 20), (250, 9, 17),
                                   (3, 6, 1100), (4, 0, 5)])
def test_bits_of_the_instruction_steps(m, k, n):
    rng = np.random.default_rng(m * 1000 + k + n)
    a = _rand_bf16((m, k), rng)
    b = _rand_bf16((k, n), rng)
    np.testing.assert_array_equal(_bits(_pt(a) @ _pt(b)), _emulate(a, b))
    bias = rng.standard_normal(n).astype(np.float32)
    bias16 = _widen(_bf16_round(bias))
    got = ptcore.addmm(_pt(bias16), _pt(a), _pt(b))
    np.testing.assert_array_equal(_bits(got), _emulate(a, b, np.broadcast_to(bias16, (m, n))))


@needs_bf16
def test_layouts_threads_and_batches_give_the_same_bits():
    rng = np.random.default_rng(7)
    a = _pt(_rand_bf16((70, 300), rng))
    b = _pt(_rand_bf16((300, 200), rng))
    want = _bits(a @ b)
    layouts = [(a.t().contiguous().t(), b), (a, b.t().contiguous().t()),
               (a.t().contiguous().t(), b.t().contiguous().t())]
    big_a = _pt(_rand_bf16((140, 600), rng))
    big_a[::2, ::2] = a
    big_b = _pt(_rand_bf16((300, 600), rng))
    big_b[:, 1::3] = b
    layouts.append((big_a[::2, ::2], big_b[:, 1::3]))
    for x, y in layouts:
        np.testing.assert_array_equal(_bits(x @ y), want)
    # A's k-contiguous rows read in place or packed: the same bits (odd k and
    # more than one k block, full and partial row panels)
    for shape_a, shape_b in [((70, 300), (300, 200)), ((37, 1031), (1031, 33))]:
        x = _pt(_rand_bf16(shape_a, rng))
        y = _pt(_rand_bf16(shape_b, rng))
        was = _blas._set_bgemm_direct(0)
        try:
            packed = _bits(x @ y)
        finally:
            _blas._set_bgemm_direct(was)
        np.testing.assert_array_equal(_bits(x @ y), packed)
    wide = _pt(_rand_bf16((300, 2000), rng))
    ref = _bits(a @ wide)
    old = ptcore.get_num_threads()
    try:
        for nt in (1, 2, 3):
            ptcore.set_num_threads(nt)
            np.testing.assert_array_equal(_bits(a @ b), want)
            np.testing.assert_array_equal(_bits(a @ wide), ref)
    finally:
        ptcore.set_num_threads(old)
    # a batch: each product the 2-D one's bits; a broadcast (stride-0) operand too
    xs = ptcore.stack([a, a * 2, a.neg()])
    got = ptcore.bmm(xs, b.expand(3, 300, 200))
    for i in range(3):
        np.testing.assert_array_equal(_bits(got[i]), _bits(xs[i] @ b))
    got = ptcore.matmul(xs, b)
    for i in range(3):
        np.testing.assert_array_equal(_bits(got[i]), _bits(xs[i] @ b))
    # two batch dims with strides of their own (attention's (B, T, H, d) viewed
    # as (B, H, T, d)), k^T, and five dims (folded into the kernel's two)
    q = _pt(_rand_bf16((2, 13, 3, 16), rng)).transpose(1, 2)
    kt = _pt(_rand_bf16((2, 13, 3, 16), rng)).transpose(1, 2).transpose(-2, -1)
    att = q @ kt
    assert att.shape == (2, 3, 13, 13)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(_bits(att[i, j]), _bits(q[i, j] @ kt[i, j]))
    got = q.unsqueeze(0).expand(2, 2, 3, 13, 16) @ kt
    for h in range(2):
        np.testing.assert_array_equal(_bits(got[h]), _bits(att))


@needs_bf16
@pytest.mark.parametrize("k", [2, 7, 16, 37, 300, 513, 1031])
def test_linear_weight_panels_of_every_k(k):
    # a contiguous (n, k) weight (B = W^T, k contiguous): its full 32-column
    # panels are packed by 8 x 8 transposes of 32-bit pairs (the last pair of an
    # odd k, and a partial panel, by the element loop); the instruction's bits
    rng = np.random.default_rng(k)
    a = _rand_bf16((29, k), rng)
    w = _rand_bf16((70, k), rng)                  # two full panels and one of 6
    got = ptcore.nn.functional.linear(_pt(a), _pt(w))
    np.testing.assert_array_equal(_bits(got), _emulate(a, np.ascontiguousarray(w.T)))


@needs_bf16
def test_broadcast_weight_folds_the_batch_into_rows():
    # F.linear over a (T, B, d) view of a (B, T, d) input (attention's in-projection,
    # seq-first): one product of the rows (a copy where the layout does not fold),
    # each row the 2-D product's bits; the bias added to the rounded product as
    # torch's linear does for a non-contiguous input (matmul, then add_), and
    # before the one rounding (addmm) for a contiguous one
    rng = np.random.default_rng(11)
    x = _pt(_rand_bf16((6, 9, 40), rng)).transpose(0, 1)
    w = _pt(_rand_bf16((24, 40), rng))
    bias = _pt(_rand_bf16((24,), rng))
    got = ptcore.nn.functional.linear(x, w, bias)
    assert got.shape == (9, 6, 24) and got.is_contiguous()
    fused = ptcore.nn.functional.linear(x.contiguous(), w, bias)
    for t in range(9):
        np.testing.assert_array_equal(_bits(got[t]), _bits(x[t].contiguous() @ w.t() + bias))
        np.testing.assert_array_equal(_bits(fused[t]),
                                      _bits(ptcore.addmm(bias, x[t].contiguous(), w.t())))
    np.testing.assert_array_equal(_bits(x @ w.t()), _bits(x.contiguous() @ w.t()))
    # an out= product and a 4-D batch over the same weight
    out = ptcore.empty(9, 6, 24, dtype=ptcore.bfloat16)
    ptcore.matmul(x, w.t(), out=out)
    np.testing.assert_array_equal(_bits(out), _bits(x.contiguous() @ w.t()))
    x4 = x.reshape(3, 3, 6, 40)
    np.testing.assert_array_equal(_bits(x4 @ w.t()), _bits(x.contiguous() @ w.t()).reshape(3, 3, 6, 24))


@needs_bf16
def test_nan_inf_and_empty():
    a = _pt(np.array([[1.0, np.nan], [np.inf, 0.0], [1.0, 2.0]], np.float32))
    b = _pt(np.array([[1.0, 0.0], [1.0, 1.0]], np.float32))
    r = (a @ b).float().numpy()
    assert np.isnan(r[0]).all()
    assert r[1, 0] == np.inf and np.isnan(r[1, 1])          # inf * 0
    np.testing.assert_array_equal(r[2], [3.0, 2.0])
    z = ptcore.empty(3, 0, dtype=ptcore.bfloat16) @ ptcore.empty(0, 4, dtype=ptcore.bfloat16)
    assert z.shape == (3, 4) and (z.float() == 0).all()
    bias = ptcore.ones(4, dtype=ptcore.bfloat16)
    z = ptcore.addmm(bias, ptcore.empty(3, 0, dtype=ptcore.bfloat16),
                     ptcore.empty(0, 4, dtype=ptcore.bfloat16))
    assert (z.float() == 1).all()
    assert (ptcore.empty(0, 5, dtype=ptcore.bfloat16) @ b.new_ones(5, 2)).shape == (0, 2)


@needs_bf16
def test_in_place_and_out_forms():
    rng = np.random.default_rng(3)
    a = _pt(_rand_bf16((30, 50), rng))
    b = _pt(_rand_bf16((50, 20), rng))
    c = _pt(_rand_bf16((30, 20), rng))
    want = _bits(ptcore.addmm(c, a, b))
    c2 = c.clone()
    r = c2.addmm_(a, b)
    assert r is c2
    np.testing.assert_array_equal(_bits(c2), want)
    # c in other layouts (column-major, a column broadcast): the same bits as the
    # same values contiguous
    ct = c.t().contiguous().t()
    np.testing.assert_array_equal(_bits(ptcore.addmm(ct, a, b)), want)
    col = c[:, :1]
    np.testing.assert_array_equal(_bits(ptcore.addmm(col, a, b)),
                                  _bits(ptcore.addmm(col.expand(30, 20).contiguous(), a, b)))
    init = ptcore.from_numpy(np.asfortranarray(c.float().numpy()))
    assert init.stride() == (1, 30)
    np.testing.assert_array_equal(_bits(_blas.bf16_mm(a, b, init)), want)
    o = ptcore.empty(30, 20, dtype=ptcore.bfloat16)
    ptcore.mm(a, b, out=o)
    np.testing.assert_array_equal(_bits(o), _bits(a @ b))
    # beta and alpha other than 1: beta * c in float32; alpha: the float32 path
    np.testing.assert_array_equal(
        _bits(ptcore.addmm(c, a, b, beta=0.5)),
        _emulate(a.float().numpy(), b.float().numpy(), c.float().numpy() * np.float32(0.5)))
    r = ptcore.addmm(c, a, b, alpha=2).float().numpy()
    ref = 2 * (a.float().numpy() @ b.float().numpy()) + c.float().numpy()
    np.testing.assert_allclose(r, ref, rtol=2e-2, atol=2e-2)


def test_the_float32_path_where_the_kernel_is_off():
    rng = np.random.default_rng(4)
    a = _pt(_rand_bf16((40, 70), rng))
    b = _pt(_rand_bf16((70, 30), rng))
    was = _blas.bgemm_available()
    try:
        assert _blas._set_bgemm_isa(0) == 0
        r = a @ b
        np.testing.assert_array_equal(_bits(r), _bits((a.float() @ b.float()).bfloat16()))
    finally:
        assert bool(_blas._set_bgemm_isa(-1)) == was
    if was:
        # the two paths sum differently; both within bfloat16's rounding of the float64 product
        exact = a.float().numpy().astype(np.float64) @ b.float().numpy().astype(np.float64)
        np.testing.assert_allclose((a @ b).float().numpy(), exact, rtol=1e-2, atol=1e-2)


def _cpu_has_amx():
    try:
        with open("/proc/cpuinfo") as f:
            return "amx_bf16" in f.read()
    except OSError:
        return False


@needs_bf16
def test_same_bits_as_torch():
    """torch's oneDNN kernels run VDPBF16PS too (with AMX, on Intel Sapphire
    Rapids and later, its tiles sum in another order: values to an ulp there)"""
    torch = pytest.importorskip("torch")
    exact = not _cpu_has_amx()
    rng = np.random.default_rng(5)
    for m, k, n in [(64, 96, 40), (100, 512, 77), (7, 300, 129)]:
        a = _rand_bf16((m, k), rng)
        b = _rand_bf16((k, n), rng)
        bias = _widen(_bf16_round(rng.standard_normal(n).astype(np.float32)))
        ta, tb, tbias = (torch.from_numpy(x).bfloat16() for x in (a, b, bias))

        def tbits(t):
            return t.contiguous().view(torch.int16).numpy().view(np.uint16)
        pairs = [(_bits(_pt(a) @ _pt(b)), tbits(ta @ tb)),
                 (_bits(ptcore.nn.functional.linear(_pt(a), _pt(b).t(), _pt(bias))),
                  tbits(torch.nn.functional.linear(ta, tb.t(), tbias)))]
        for got, want in pairs:
            if exact:
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(_widen(got), _widen(want), rtol=2.0 ** -7, atol=1e-3)
