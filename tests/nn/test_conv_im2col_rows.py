"""The vectorised column-matrix rows of 2-d float32 convolutions with column
stride 1 (ptcore/_ops/kernels/include/ptc_im2col.h: masked AVX-512 moves, AVX2 8-float moves)
and col2im's rows with column stride 2 (permuted to every other lane: AVX-512
masked adds, AVX2 blends)
and col2im of whole images of up to 256 floats by permuted vector moves
give the same bits as the element loops they replace, in the forward, both
gradients, ``F.unfold`` and ``F.fold``, over widths around the 16-lane and
8-lane chunks, padding wider than the kernel, dilation, row strides and
inputs narrower than the kernel; and values within float32 rounding of a
float64 reference."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _conv

F = ptcore.nn.functional

# N, C, H, W, OC, kh, kw, stride, padding, dilation
CASES = [
    (4, 1, 28, 28, 6, 5, 5, 1, 2, 1),            # LeNet conv1
    (5, 6, 14, 14, 16, 5, 5, 1, 0, 1),           # LeNet conv2
    (3, 2, 7, 5, 3, 3, 3, 1, 1, 1),              # OW 5
    (2, 3, 9, 16, 4, 3, 1, 1, 0, 1),             # OW 16: one whole chunk
    (2, 3, 6, 17, 5, 2, 2, 1, (1, 1), 1),        # OW 18: a chunk and two lanes
    (2, 2, 5, 40, 3, 3, 5, (2, 1), (1, 3), 1),   # row stride 2, OW 40
    (2, 2, 6, 9, 3, 3, 3, 1, (2, 7), 1),         # padding wider than the kernel
    (2, 2, 8, 11, 3, 3, 3, 1, (2, 4), (2, 3)),   # dilation
    (3, 2, 6, 3, 3, 2, 5, 1, (0, 3), 1),         # input narrower than the kernel
    (1, 2, 4, 70, 2, 1, 3, 1, (0, 1), (1, 33)),  # wide row, far dilation
    (2, 4, 5, 6, 6, 3, 3, (1, 1), "same", 1),
    # column stride 2: col2im's stride-2 rows (AVX-512), im2col's element loops
    (3, 4, 8, 8, 5, 4, 4, 2, 1, 1),              # DCGAN's 4x4 stride-2 layers
    (2, 3, 16, 16, 6, 4, 4, 2, 1, 1),
    (2, 2, 9, 37, 3, 3, 5, 2, (1, 2), 1),        # odd width, chunks of 32 columns
    (2, 2, 7, 70, 3, 2, 3, (1, 2), (0, 3), (1, 2)),
    (2, 2, 6, 5, 3, 3, 4, (2, 2), (1, 4), 1),    # padding wider than the kernel
    (2, 2, 5, 41, 3, 2, 10, (1, 2), (0, 3), 1),  # AVX2: kernel wider than its stage
    (1, 2, 3, 150, 2, 2, 4, (1, 2), (0, 1), 1),  # AVX2: rows wider than its stage
]


@pytest.fixture(params=[True, False], ids=["plane", "rows"])
def column_path(request):
    """Force the column-matrix path (no direct kernels, no image gathers),
    with col2im of small images by whole-image vector moves or by rows."""
    d = _conv._set_direct(False)
    i = _conv._set_implicit(False)
    pl = _conv._set_plane_col2im(request.param)
    yield
    _conv._set_direct(d)
    _conv._set_implicit(i)
    _conv._set_plane_col2im(pl)
    _conv._set_vec_rows(2)


def _run(level, x, w, s, p, d):
    _conv._set_vec_rows(level)
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    pw = ptcore.from_numpy(w.copy()).requires_grad_()
    y = F.conv2d(px, pw, stride=s, padding=p, dilation=d)
    gy = np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(np.float32)
    gx, gw = ptcore.autograd.grad(y, [px, pw], ptcore.from_numpy(gy))
    return y.detach().numpy(), gx.numpy(), gw.numpy()


@pytest.mark.parametrize("case", CASES)
def test_same_bits_at_every_level(case, column_path):
    N, C, H, W, OC, kh, kw, s, p, d = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((OC, C, kh, kw)).astype(np.float32)
    ref = _run(0, x, w, s, p, d)
    for level in (2, 1):
        got = _run(level, x, w, s, p, d)
        for a, b in zip(got, ref):
            assert a.shape == b.shape
            assert np.array_equal(a, b), f"level {level} differs from the element loops"


@pytest.mark.parametrize("case", CASES)
def test_values_against_float64(case, column_path):
    N, C, H, W, OC, kh, kw, s, p, d = case
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((OC, C, kh, kw)).astype(np.float32)
    y, gx, gw = _run(2, x, w, s, p, d)
    x64 = ptcore.from_numpy(x.astype(np.float64)).requires_grad_()
    w64 = ptcore.from_numpy(w.astype(np.float64)).requires_grad_()
    y64 = F.conv2d(x64, w64, stride=s, padding=p, dilation=d)
    gy = np.random.default_rng(7).standard_normal(tuple(y64.shape))
    gx64, gw64 = ptcore.autograd.grad(y64, [x64, w64], ptcore.from_numpy(gy))
    for a, b in ((y, y64.detach()), (gx, gx64), (gw, gw64)):
        b = b.numpy()
        tol = 1e-5 * max(1.0, float(np.abs(b).max())) * 4
        np.testing.assert_allclose(a, b, rtol=0, atol=tol)


@pytest.mark.parametrize("kernel,dilation,padding,stride",
                         [((3, 3), 1, 1, 1), ((2, 5), (1, 2), (1, 3), (2, 1)), ((4, 4), 1, 0, 1),
                          ((4, 4), 1, 1, 2), ((3, 2), (2, 1), (0, 2), (1, 2))])
def test_unfold_fold_same_bits(kernel, dilation, padding, stride):
    rng = np.random.default_rng(11)
    x = ptcore.from_numpy(rng.standard_normal((2, 3, 9, 21)).astype(np.float32))
    try:
        outs = []
        for level in (0, 1, 2):
            _conv._set_vec_rows(level)
            u = F.unfold(x, kernel, dilation=dilation, padding=padding, stride=stride)
            f = F.fold(u, (9, 21), kernel, dilation=dilation, padding=padding, stride=stride)
            outs.append((u.numpy(), f.numpy()))
    finally:
        _conv._set_vec_rows(2)
    for u, f in outs[1:]:
        assert np.array_equal(u, outs[0][0]) and np.array_equal(f, outs[0][1])


@pytest.mark.parametrize("cin,cout,hw,k,s,p,d,op", [
    (128, 256, 8, 4, 2, 1, 1, 0),     # DCGAN discriminator 128 -> 256: 8x8 images
    (64, 128, 16, 4, 2, 1, 1, 0),     # 16x16 images: 256 floats, the largest
    (256, 128, 4, 4, 2, 1, 1, 1),     # transposed 4x4 -> 8x8 (the forward's col2im)
    (5, 3, 7, 3, 2, (1, 2), (2, 1), 0),
    (4, 6, 9, 5, (1, 2), 2, 1, 1),    # partial vectors of positions and image
    (3, 2, 11, 3, 1, 0, 2, 0),        # 11x11: the last image vector partial
])
def test_plane_col2im_same_bits(cin, cout, hw, k, s, p, d, op):
    """Whole-image col2im (the input gradient of a convolution, the forward of
    a transposed one) gives the row path's bits and the element loops' at
    both vector levels."""
    rng = np.random.default_rng(cin * 7 + hw)
    x = rng.standard_normal((3, cin, hw, hw)).astype(np.float32)
    wshape = (cin, cout, k, k) if op else (cout, cin, k, k)
    w = rng.standard_normal(wshape).astype(np.float32)
    fn = F.conv_transpose2d if op else F.conv2d
    dv, iv = _conv._set_direct(False), _conv._set_implicit(False)
    outs = []
    try:
        for level, plane in ((0, False), (1, False), (2, False), (1, True), (2, True)):
            _conv._set_vec_rows(level)
            _conv._set_plane_col2im(plane)
            px = ptcore.from_numpy(x).requires_grad_()
            y = fn(px, ptcore.from_numpy(w), stride=s, padding=p, dilation=d)
            gy = np.random.default_rng(5).standard_normal(tuple(y.shape)).astype(np.float32)
            outs.append((y.detach().numpy(), ptcore.autograd.grad(y, px, ptcore.from_numpy(gy))[0].numpy()))
    finally:
        _conv._set_vec_rows(2)
        _conv._set_plane_col2im(True)
        _conv._set_direct(dv)
        _conv._set_implicit(iv)
    for got in outs[1:]:
        for a, b in zip(got, outs[0]):
            assert np.array_equal(a, b)


def test_knob_rejects_bad_levels():
    with pytest.raises(ValueError):
        _conv._set_vec_rows(3)
    with pytest.raises(ValueError):
        _conv._set_vec_rows(-1)
