"""torchvision's image library (``torchvision.io``), built into ptcore on Pillow
(``ptcore._torchvision_image_ops``): lossless round trips through PNG are exact; a JPEG
decodes to what libjpeg gives (the image encoded, then decoded, to within the codec's
error); modes give torchvision's channels, with libpng's grayscale weights; files read
and write bytes; bad data raises RuntimeError.
"""
import io

import numpy as np
import pytest

import ptcore

Image = pytest.importorskip("PIL.Image")

from ptcore import _torchvision_image_ops as img_ops  # noqa: E402

img_ops.register(ptcore.library)
image = ptcore.ops.image
UNCHANGED, GRAY, GRAY_ALPHA, RGB, RGBA = 0, 1, 2, 3, 4


def _bytes(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, format=fmt, **kw)
    return ptcore.from_numpy(np.frombuffer(buf.getvalue(), np.uint8).copy())


def _rgb(seed=0, h=13, w=17, c=3):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def test_png_round_trips_and_modes():
    a = _rgb()
    for arr, chans in ((a, 3), (a[..., 0], 1), (np.concatenate([a, a[..., :1]], -1), 4)):
        data = _bytes(Image.fromarray(arr), "PNG")
        out = image.decode_png(data, UNCHANGED)
        assert out.dtype == ptcore.uint8 and out.shape == (chans, 13, 17)
        np.testing.assert_array_equal(out.numpy().transpose(1, 2, 0).squeeze(), arr)
    # modes: GRAY from RGB with libpng's weights; RGB from gray repeats it; alpha added
    data = _bytes(Image.fromarray(a), "PNG")
    r, g, b = (a[..., i].astype(np.int64) for i in range(3))
    gray = ((6968 * r + 23434 * g + 2366 * b + 16384) >> 15).astype(np.uint8)
    np.testing.assert_array_equal(image.decode_png(data, GRAY).numpy()[0], gray)
    ga = image.decode_png(data, GRAY_ALPHA).numpy()
    assert ga.shape == (2, 13, 17) and (ga[1] == 255).all()
    rgba = image.decode_png(data, RGBA).numpy()
    np.testing.assert_array_equal(rgba[:3].transpose(1, 2, 0), a)
    assert (rgba[3] == 255).all()
    gdata = _bytes(Image.fromarray(np.ascontiguousarray(a[..., 1])), "PNG")
    np.testing.assert_array_equal(image.decode_png(gdata, RGB).numpy(),
                                  np.stack([a[..., 1]] * 3))


def test_png_16bit_gray_and_palette():
    v = np.random.default_rng(1).integers(0, 65536, (5, 6)).astype(np.uint16)
    data = _bytes(Image.fromarray(v), "PNG")          # (mode I;16)
    out = image.decode_png(data, UNCHANGED)
    assert out.dtype == ptcore.uint16 and out.shape == (1, 5, 6)
    np.testing.assert_array_equal(out.numpy()[0], v)
    pal = Image.fromarray(_rgb(2, 6, 7)).quantize(8)
    out = image.decode_png(_bytes(pal, "PNG"), UNCHANGED)
    np.testing.assert_array_equal(out.numpy().transpose(1, 2, 0), np.asarray(pal.convert("RGB")))


def test_encode_png_decodes_back():
    a = _rgb(3)
    t = ptcore.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
    for level in (0, 6, 9):
        enc = image.encode_png(t, level)
        assert enc.dtype == ptcore.uint8 and enc.dim() == 1
        np.testing.assert_array_equal(image.decode_image(enc, UNCHANGED).numpy(), t.numpy())
    with pytest.raises(RuntimeError, match="Compression level"):
        image.encode_png(t, 10)


def test_jpeg_decode_encode_and_gray():
    # a smooth image: JPEG's error stays small
    y, x = np.mgrid[0:32, 0:48]
    a = np.stack([x * 5, y * 7, (x + y) * 3], -1).astype(np.uint8)
    data = _bytes(Image.fromarray(a), "JPEG", quality=95)
    out = image.decode_jpeg(data, UNCHANGED)
    assert out.shape == (3, 32, 48)
    assert np.abs(out.numpy().transpose(1, 2, 0).astype(int) - a).mean() < 3
    assert image.decode_image(data, RGB).equal(out)
    gray = image.decode_jpeg(data, GRAY).numpy()
    assert gray.shape == (1, 32, 48)
    luma = (0.299 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2])
    assert np.abs(gray[0] - luma).mean() < 3
    t = ptcore.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
    enc = image.encode_jpeg(t, 90)
    assert enc[:3].tolist() == [0xFF, 0xD8, 0xFF]
    assert np.abs(image.decode_jpeg(enc, UNCHANGED).numpy().astype(int) - t.numpy()).mean() < 3
    with pytest.raises(RuntimeError, match="not supported for JPEG"):
        image.decode_jpeg(data, RGBA)
    with pytest.raises(RuntimeError, match="quality"):
        image.encode_jpeg(t, 0)


def test_gif_and_webp():
    frames = [Image.fromarray(_rgb(s, 8, 9)).quantize(16) for s in range(3)]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    data = ptcore.from_numpy(np.frombuffer(buf.getvalue(), np.uint8).copy())
    out = image.decode_gif(data)
    assert out.shape == (3, 3, 8, 9) and out.dtype == ptcore.uint8
    np.testing.assert_array_equal(out.numpy()[1].transpose(1, 2, 0),
                                  np.asarray(frames[1].convert("RGB")))
    single = image.decode_image(_bytes(frames[0], "GIF"), UNCHANGED)
    assert single.shape == (3, 8, 9)
    w = _bytes(Image.fromarray(_rgb(4, 8, 9)), "WEBP", lossless=True)
    np.testing.assert_array_equal(image.decode_webp(w, UNCHANGED).numpy().transpose(1, 2, 0),
                                  _rgb(4, 8, 9))
    assert image.decode_image(w, RGBA).shape == (4, 8, 9)


def test_files_and_bad_data(tmp_path):
    p = tmp_path / "x.bin"
    data = ptcore.tensor([1, 2, 250], dtype=ptcore.uint8)
    image.write_file(str(p), data)
    assert p.read_bytes() == bytes([1, 2, 250])
    assert image.read_file(str(p)).tolist() == [1, 2, 250]
    with pytest.raises(RuntimeError, match="No such file"):
        image.read_file(str(tmp_path / "missing.png"))
    with pytest.raises(RuntimeError, match="uint8"):
        image.decode_png(ptcore.zeros(4, dtype=ptcore.int32), UNCHANGED)
    with pytest.raises(RuntimeError, match="non empty 1-dimensional"):
        image.decode_jpeg(ptcore.zeros(0, dtype=ptcore.uint8), UNCHANGED)
    junk = ptcore.from_numpy(np.frombuffer(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, np.uint8).copy())
    with pytest.raises(RuntimeError, match="not a valid png"):
        image.decode_png(junk, UNCHANGED)
    with pytest.raises(RuntimeError, match="Unsupported image file"):
        image.decode_image(ptcore.tensor([1, 2, 3, 4], dtype=ptcore.uint8), UNCHANGED)
    truncated = _bytes(Image.fromarray(_rgb()), "JPEG")[:60]
    with pytest.raises(RuntimeError, match="jpeg"):
        image.decode_jpeg(truncated, UNCHANGED)
    with pytest.raises(RuntimeError, match="nvjpeg"):
        image.decode_jpegs_cuda([truncated], UNCHANGED, ptcore.device("cpu"))
