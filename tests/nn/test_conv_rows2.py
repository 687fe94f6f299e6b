"""The forward product's image panels of column-stride-2 float32 convolutions
by vector loads and even-lane permutes (ptc_sgemm.h's ptc_sg_pack_rows2:
AVX-512 with BMI2, output rows 4/8/16/32 wide; ptc_sg_pack_rows2_avx2: AVX2,
rows 4/8/16 wide) give the
same bits as the gathers they replace: DCGAN's layers, padding wider than
the kernel reach, dilation, row strides, ragged batches; and values within
float32 rounding of float64."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _conv

F = ptcore.nn.functional

# N, C, H, W, OC, kh, kw, stride, padding, dilation
CASES = [
    (64, 64, 16, 16, 128, 4, 4, 2, 1, 1),        # DCGAN D2: output rows of 8
    (64, 128, 8, 8, 256, 4, 4, 2, 1, 1),         # D3: rows of 4
    (20, 16, 32, 32, 128, 4, 4, 2, 1, 1),        # rows of 16
    (6, 8, 64, 64, 96, 4, 4, 2, 1, 1),           # rows of 32
    (33, 16, 8, 8, 96, 4, 4, 2, 1, 1),           # a ragged last batch unit
    (12, 4, 32, 16, 96, 4, 4, (1, 2), (1, 2), 1),  # row stride 1, padding 2 columns
    (10, 8, 18, 17, 100, 3, 5, 2, (2, 3), (1, 2)),  # dilation, odd width
    (9, 8, 12, 12, 128, 4, 4, 2, 0, 1),          # rows of 5: the gathers
    (40, 8, 7, 7, 96, 4, 4, 2, 2, 1),            # rows of 4 from 7-wide rows: masked loads
    (40, 8, 9, 10, 96, 3, 4, 2, (1, 4), 1),      # rows of 8, padding past a whole chunk
]


def _conv_pair(x, w, s, p, d):
    outs = []
    old = _conv._set_rows2(True)
    try:
        for on in (True, False):
            _conv._set_rows2(on)
            outs.append(F.conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w), stride=s,
                                 padding=p, dilation=d).numpy())
    finally:
        _conv._set_rows2(old)
    return outs


@pytest.fixture(params=[1, 2], ids=["avx2", "avx512"])
def isa(request):
    from ptcore._ops import linalg
    got = linalg._set_sgemm_isa(request.param)
    try:
        if got != request.param:
            pytest.skip(f"the CPU lacks ISA level {request.param}")
        yield got
    finally:
        linalg._set_sgemm_isa(-1)


@pytest.mark.parametrize("case", CASES)
def test_same_bits_as_gathers(case, isa):
    N, C, H, W, OC, kh, kw, s, p, d = case
    rng = np.random.default_rng(N * 100 + OC)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((OC, C, kh, kw)).astype(np.float32)
    a, b = _conv_pair(x, w, s, p, d)
    assert a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("case", CASES[:4])
def test_values_against_float64(case):
    N, C, H, W, OC, kh, kw, s, p, d = case
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((OC, C, kh, kw)).astype(np.float32)
    got = F.conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w), stride=s, padding=p,
                   dilation=d).numpy()
    ref = F.conv2d(ptcore.from_numpy(x.astype(np.float64)), ptcore.from_numpy(w.astype(np.float64)),
                   stride=s, padding=p, dilation=d).numpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4 * max(1.0, np.abs(ref).max()))
