"""2-d float32 convolutions whose forward product and weight gradient gather
their operand from the image (ptc_sgemm.h's im2col packers) instead of
building the column matrix: the same bits as the column-matrix path, values
against float64 (and PyTorch when installed), every geometry the gathers
handle (stride, padding, dilation, groups, rectangular kernels, partial
batch units), at 1 and 2 threads."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _conv
from ptcore._ops import linalg as _linalg_ops

F = ptcore.nn.functional

# (N, C, H, W), (OC, C/groups, kh, kw), stride, padding, dilation, groups;
# OC / groups >= 96 (where the gathers are used) and N above one batch unit
# (512 // (OH*OW) samples for the forward, 256 // (OH*OW) for the weight
# gradient: smaller batches take the one-GEMM column-matrix path)
CASES = [
    ((64, 64, 16, 16), (128, 64, 4, 4), 2, 1, 1, 1),        # DCGAN discriminator
    ((37, 128, 8, 8), (256, 128, 4, 4), 2, 1, 1, 1),        # a ragged last batch unit
    ((5, 16, 19, 23), (100, 16, 3, 5), (2, 1), (1, 2), (2, 1), 1),
    ((12, 24, 12, 10), (200, 12, 3, 3), 1, 1, 1, 2),        # groups
    ((23, 33, 7, 9), (97, 33, 7, 9), 1, 3, 1, 1),           # kernel as large as the image
    ((130, 8, 6, 6), (96, 8, 2, 2), 3, 0, 1, 1),            # stride > kernel: skipped pixels
    # 4-wide kernels: the weight gradient's panels by 4-float row loads
    ((40, 8, 10, 7), (96, 8, 3, 4), (1, 2), (2, 1), (2, 1), 1),  # right edge, dilated rows
    ((60, 4, 6, 5), (100, 4, 2, 4), (1, 3), (0, 6), 1, 1),  # padding past whole rows
    ((140, 4, 5, 3), (96, 4, 2, 4), 1, (0, 1), 1, 1),       # rows narrower than 4: gathers
]


def _run(xs, ws, stride, padding, dilation, groups, implicit):
    rng = np.random.default_rng(sum(xs) + sum(ws))
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(np.float32)
    px = ptcore.from_numpy(x).requires_grad_()
    pw = ptcore.from_numpy(w).requires_grad_()
    old = _conv._set_implicit(implicit)
    try:
        y = F.conv2d(px, pw, stride=stride, padding=padding, dilation=dilation, groups=groups)
        gy = ptcore.from_numpy(rng.standard_normal(tuple(y.shape)).astype(np.float32))
        gx, gw = ptcore.autograd.grad(y, [px, pw], gy)
    finally:
        _conv._set_implicit(old)
    return x, w, gy.numpy(), y.detach().numpy(), gx.numpy(), gw.numpy()


@pytest.mark.parametrize("case", CASES, ids=[str(c[0]) + str(c[1]) for c in CASES])
def test_same_bits_as_column_matrix(case):
    got = _run(*case, implicit=True)
    want = _run(*case, implicit=False)
    for a, b in zip(got[3:], want[3:]):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("case", CASES, ids=[str(c[0]) + str(c[1]) for c in CASES])
def test_values_against_float64(case):
    xs, ws, stride, padding, dilation, groups = case
    x, w, gy, y, gx, gw = _run(*case, implicit=True)
    px = ptcore.from_numpy(x.astype(np.float64)).requires_grad_()
    pw = ptcore.from_numpy(w.astype(np.float64)).requires_grad_()
    y64 = F.conv2d(px, pw, stride=stride, padding=padding, dilation=dilation, groups=groups)
    gx64, gw64 = ptcore.autograd.grad(y64, [px, pw], ptcore.from_numpy(gy.astype(np.float64)))
    k = np.prod(ws[1:])
    np.testing.assert_allclose(y, y64.detach().numpy(), rtol=0, atol=2e-5 * np.sqrt(k))
    np.testing.assert_allclose(gx, gx64.numpy(), rtol=0, atol=2e-5 * np.sqrt(ws[0] * 16))
    n_terms = xs[0] * y.shape[2] * y.shape[3]
    np.testing.assert_allclose(gw, gw64.numpy(), rtol=0,
                               atol=2e-5 * np.sqrt(n_terms) * max(1.0, np.abs(gw).max()))


def test_against_torch():
    torch = pytest.importorskip("torch")
    xs, ws, stride, padding, dilation, groups = CASES[2]
    x, w, gy, y, gx, gw = _run(*CASES[2], implicit=True)
    tx = torch.from_numpy(x).requires_grad_()
    tw = torch.from_numpy(w).requires_grad_()
    ty = torch.nn.functional.conv2d(tx, tw, stride=stride, padding=padding, dilation=dilation,
                                    groups=groups)
    tgx, tgw = torch.autograd.grad(ty, [tx, tw], torch.from_numpy(gy))
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gx, tgx.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, tgw.numpy(), rtol=1e-4, atol=2e-4)


def test_thread_count_independent():
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        one = _run(*CASES[1], implicit=True)
        ptcore.set_num_threads(2)
        two = _run(*CASES[1], implicit=True)
    finally:
        ptcore.set_num_threads(old)
    for a, b in zip(one[3:], two[3:]):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("isa", [1, 2])
@pytest.mark.parametrize("case", [0, 2, 6, 7])
def test_each_isa(isa, case):
    """The AVX2 panels (16 rows) and the AVX-512 ones (32 rows): gathers, and
    the 4-wide kernels' row loads."""
    if _linalg_ops._set_sgemm_isa(isa) != isa:
        _linalg_ops._set_sgemm_isa(-1)
        pytest.skip("the CPU lacks this ISA")
    try:
        got = _run(*CASES[case], implicit=True)
        want = _run(*CASES[case], implicit=False)
    finally:
        _linalg_ops._set_sgemm_isa(-1)
    for a, b in zip(got[3:], want[3:]):
        assert np.array_equal(a, b)
