"""uint8 bilinear/bicubic interpolate as torch's CPU image kernel (fixed-point
separable passes): bit-for-bit equal to torch, with and without anti-aliasing
and align_corners, down- and upsampling, by size and by scale factor."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

SIZES = [((4, 4), (3, 3)), ((17, 23), (8, 40)), ((32, 32), (7, 9)), ((10, 12), (10, 30)),
         ((64, 48), (32, 24)), ((5, 5), (1, 2))]


def _image(C, H, W, seed):
    return np.random.default_rng(seed).integers(0, 256, (2, C, H, W)).astype(np.uint8)


@pytest.mark.parametrize("C", [1, 3, 8])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_resize_bit_exact_as_torch(C, mode):
    for k, ((H, W), size) in enumerate(SIZES):
        img = _image(C, H, W, k)
        for align_corners in (False, True):
            for antialias in (False, True):
                kw = dict(size=size, mode=mode, align_corners=align_corners, antialias=antialias)
                got = ptcore.nn.functional.interpolate(ptcore.from_numpy(img), **kw)
                expect = torch.nn.functional.interpolate(torch.from_numpy(img), **kw)
                assert got.dtype == ptcore.uint8
                np.testing.assert_array_equal(got.numpy(), expect.numpy(), err_msg=str(kw))


@pytest.mark.parametrize("scale", [0.5, 1.7, 2.0, 0.3])
def test_uint8_resize_by_scale_factor_as_torch(scale):
    img = _image(3, 19, 26, 7)
    for mode, antialias in (("bilinear", False), ("bicubic", False), ("bicubic", True),
                            ("bilinear", True)):
        kw = dict(scale_factor=scale, mode=mode, antialias=antialias)
        got = ptcore.nn.functional.interpolate(ptcore.from_numpy(img), **kw)
        expect = torch.nn.functional.interpolate(torch.from_numpy(img), **kw)
        np.testing.assert_array_equal(got.numpy(), expect.numpy(), err_msg=str(kw))


def test_uint8_resize_keeps_channels_last_and_refuses_other_ranks():
    img = _image(3, 20, 20, 3)
    x = ptcore.from_numpy(img).contiguous(memory_format=ptcore.channels_last)
    tx = torch.from_numpy(img).contiguous(memory_format=torch.channels_last)
    got = ptcore.nn.functional.interpolate(x, size=(9, 13), mode="bilinear", antialias=True)
    expect = torch.nn.functional.interpolate(tx, size=(9, 13), mode="bilinear", antialias=True)
    np.testing.assert_array_equal(got.numpy(), expect.numpy())
    assert got.stride() == expect.stride()
    line = ptcore.arange(20, dtype=ptcore.uint8).reshape(1, 1, 20)
    with pytest.raises(NotImplementedError):
        ptcore.nn.functional.interpolate(line, size=7, mode="linear")
