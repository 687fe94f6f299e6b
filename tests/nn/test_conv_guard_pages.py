"""The float32 convolution kernels never read outside their tensors: the
input, weight and output gradient each end right before (or start right
after) an inaccessible page, so a read past either end faults.  Covers the
direct few-channel and many-channel kernels, the image gathers, the column-matrix paths (with
the vectorised column rows of the same ISA) and
uneven "same" padding, for every ISA build the CPU has."""
import sys

import numpy as np
import pytest

import ptcore
from guard_pages import Guarded
from ptcore._ops.kernels import _conv
from ptcore._ops import linalg as _linalg_ops

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="mprotect through ctypes (Linux)")

F = ptcore.nn.functional


# N, C, H, W, OC, kh, kw, stride, padding, dilation
CASES = [
    (4, 6, 14, 14, 16, 5, 5, 1, 0, 1),          # direct kernels
    (3, 3, 9, 11, 64, 4, 4, 2, 1, 1),           # direct kernels, stride 2
    (40, 16, 8, 8, 128, 4, 4, 2, 1, 1),         # gathers (batched: N > 512 // (OH*OW))
    (10, 8, 7, 9, 130, 3, 3, 1, 1, 1),
    (2, 3, 8, 9, 12, 4, 3, 1, "same", 1),       # uneven padding
    (1, 2, 5, 13, 20, 2, 6, 1, "same", (1, 2)),
    (40, 32, 6, 6, 256, 3, 3, (2, 1), (3, 0), (2, 1)),
    (4, 1, 28, 28, 6, 5, 5, 1, 2, 1),           # column rows (ptc_im2col.h), LeNet conv1
    (3, 2, 6, 19, 5, 3, 3, 1, (2, 7), 1),       # column rows, padding wider than the kernel
    (3, 2, 9, 37, 5, 4, 4, 2, (1, 3), 1),       # col2im rows with column stride 2
    (40, 8, 16, 16, 128, 4, 4, 2, 1, 1),        # stride-2 panels by vector loads: rows of 8
    (8, 4, 32, 32, 96, 4, 4, 2, 1, 1),          # rows of 16
    (4, 4, 64, 64, 96, 4, 4, 2, 1, 1),          # rows of 32
    (2, 16, 12, 13, 100, 3, 3, 1, 1, 1),        # many-channel tiles: uneven blocks
    (2, 12, 11, 15, 40, 3, 4, (2, 1), (1, 0), (1, 2)),
    (2, 8, 20, 21, 48, 5, 5, 3, 2, 2),          # stride-3 phases
    (1, 24, 9, 9, 36, 2, 2, 1, "same", 1),
    (2, 32, 9, 11, 48, 3, 3, 2, 0, 1),          # input gradient by stride phases
    (2, 48, 20, 20, 40, 1, 3, 2, (0, 1), 1),    # phases no tap reaches
    (2, 32, 17, 15, 32, 4, 4, 2, 3, 1),
]


@pytest.mark.parametrize("isa", [2, 1, 0])
def test_no_reads_outside_the_tensors(isa):
    if _linalg_ops._set_sgemm_isa(isa) != isa:
        _linalg_ops._set_sgemm_isa(-1)
        pytest.skip("the CPU lacks this ISA")
    _conv._set_vec_rows(isa)        # the column rows of the same ISA
    g = Guarded()
    rng = np.random.default_rng(isa)
    try:
        for (N, C, H, W, OC, kh, kw, s, p, d) in CASES:
            for at_end in (True, False):
                x = g.place(rng.standard_normal((N, C, H, W)).astype(np.float32), at_end)
                w = g.place(rng.standard_normal((OC, C, kh, kw)).astype(np.float32), at_end)
                px = ptcore.from_numpy(x).requires_grad_()
                pw = ptcore.from_numpy(w).requires_grad_()
                y = F.conv2d(px, pw, stride=s, padding=p, dilation=d)
                gy = g.place(rng.standard_normal(tuple(y.shape)).astype(np.float32), at_end)
                gx, gw = ptcore.autograd.grad(y, [px, pw], ptcore.from_numpy(gy))
                ref = F.conv2d(ptcore.from_numpy(x.astype(np.float64)),
                               ptcore.from_numpy(w.astype(np.float64)),
                               stride=s, padding=p, dilation=d)
                np.testing.assert_allclose(y.detach().numpy(), ref.numpy(), rtol=0, atol=1e-3)
                assert np.isfinite(gx.numpy()).all() and np.isfinite(gw.numpy()).all()
    finally:
        _linalg_ops._set_sgemm_isa(-1)
        _conv._set_vec_rows(2)
