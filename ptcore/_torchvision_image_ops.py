"""torchvision's compiled image library (``torchvision.io``'s decoders), built on Pillow.

torchvision's ``image`` extension is linked against libtorch (and libjpeg/libpng), which
ptcore cannot load.  When torchvision loads it (``torch.ops.load_library``, at
``import torchvision.io``), ptcore defines the same operators in the ``image`` namespace
instead, decoding and encoding with Pillow -- a dependency of torchvision, built on the
same libjpeg-turbo, libpng, giflib-compatible and libwebp codecs: ``read_file``,
``write_file``, ``decode_jpeg``, ``decode_png``, ``decode_gif``, ``decode_webp``,
``decode_image``, ``encode_jpeg``, ``encode_png``.  ``torchvision.io.read_image``/
``decode_image``/``encode_*``/``write_*`` then work.

Results are torchvision's: (C, H, W) uint8 tensors (uint16 for 16-bit grayscale PNGs) with
the channels the mode asks for; a JPEG decoded to GRAY is libjpeg's luma channel, an RGB
PNG decoded to GRAY uses libpng's weights (6968, 23434, 2366) / 32768, as torchvision's
libpng call.  Not provided: 16-bit colour PNGs (Pillow reads them as 8 bits: they raise
NotImplementedError), AVIF/HEIC, and the CUDA (nvjpeg) batch decoders and encoders
(``decode_jpegs_cuda``/``encode_jpegs_cuda`` raise).  Without Pillow the library is not
provided: loading it raises OSError as before and torchvision reports no image ops.
"""
import io
import os

import numpy as np

import ptcore

__all__ = ["register", "registered", "is_image_library"]

_LIB = []

_SCHEMAS = (
    "read_file(str filename) -> Tensor",
    "write_file(str filename, Tensor data) -> ()",
    "decode_jpeg(Tensor data, int mode, bool apply_exif_orientation=False) -> Tensor",
    "decode_png(Tensor data, int mode, bool apply_exif_orientation=False) -> Tensor",
    "decode_gif(Tensor data) -> Tensor",
    "decode_webp(Tensor encoded_data, int mode) -> Tensor",
    "decode_image(Tensor data, int mode, bool apply_exif_orientation=False) -> Tensor",
    "encode_jpeg(Tensor data, int quality) -> Tensor",
    "encode_png(Tensor data, int compression_level) -> Tensor",
    "decode_jpegs_cuda(Tensor[] encoded_images, int mode, Device device) -> Tensor[]",
    "encode_jpegs_cuda(Tensor[] decoded_images, int quality) -> Tensor[]",
    "_jpeg_version() -> int",
    "_is_compiled_against_turbo() -> bool",
)

# torchvision.io.ImageReadMode's values
UNCHANGED, GRAY, GRAY_ALPHA, RGB, RGB_ALPHA = 0, 1, 2, 3, 4


def is_image_library(path):
    """Whether ``path`` is torchvision's image library (``torchvision/image*.so``)."""
    return os.path.basename(os.path.dirname(os.path.abspath(path))) == "torchvision" and \
        os.path.basename(path).split(".")[0] == "image"


def registered():
    return bool(_LIB)


def _pil():
    try:
        from PIL import Image, ImageOps
    except ImportError:
        return None
    return Image, ImageOps


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _encoded(data, name="data"):
    if not isinstance(data, ptcore.Tensor):
        raise TypeError(f"{name} must be a tensor, got {type(data).__name__}")
    if data.dtype != ptcore.uint8:
        raise RuntimeError("Expected a torch.uint8 tensor")
    if data.dim() != 1 or data.numel() == 0:
        raise RuntimeError("Expected a non empty 1-dimensional tensor")
    if data.device.type != "cpu":
        raise RuntimeError("Expected a CPU tensor")
    return data.contiguous().numpy().tobytes()


def _open(raw, kind, load=True):
    Image, _ = _pil()
    try:
        im = Image.open(io.BytesIO(raw))
        if load:
            im.load()
    except Exception as e:          # (Pillow's UnidentifiedImageError, OSError, SyntaxError)
        raise RuntimeError(f"decode_{kind}: the data is not a valid {kind} image ({e})") from None
    return im


def _load(im, kind):
    try:
        im.load()
    except Exception as e:
        raise RuntimeError(f"decode_{kind}: the data is not a valid {kind} image ({e})") from None


def _chw(a):
    a = np.asarray(a)
    if a.ndim == 2:
        a = a[:, :, None]
    return ptcore.from_numpy(a.transpose(2, 0, 1).copy())   # (Pillow's arrays are read-only)


def _exif(im, apply):
    if apply:
        _, ImageOps = _pil()
        im = ImageOps.exif_transpose(im)
    return im


def _png_gray(rgb):
    """libpng's png_set_rgb_to_gray (default weights, no gamma) of uint8/uint16 RGB."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((6968 * r + 23434 * g + 2366 * b + 16384) >> 15).astype(rgb.dtype)


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------

def _read_file(filename):
    try:
        with open(filename, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise RuntimeError(f"[Errno {e.errno}] {e.strerror}: '{filename}'") from None
    if not raw:
        raise RuntimeError(f"Invalid file size: the file '{filename}' is empty")
    return ptcore.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())


def _write_file(filename, data):
    if data.dtype != ptcore.uint8:
        raise RuntimeError("Input tensor dtype should be uint8")
    if data.dim() != 1:
        raise RuntimeError("Input data should be a 1-dimensional tensor")
    with open(filename, "wb") as f:
        f.write(data.detach().cpu().contiguous().numpy().tobytes())


def _decode_jpeg(data, mode, apply_exif_orientation=False):
    raw = _encoded(data)
    if mode not in (UNCHANGED, GRAY, RGB):
        raise RuntimeError("The provided mode is not supported for JPEG files")
    im = _open(raw, "jpeg", load=False)
    if im.format != "JPEG":
        raise RuntimeError("decode_jpeg: the data is not a JPEG image")
    if mode == GRAY:
        im.draft("L", im.size)      # (libjpeg's grayscale output: the luma channel)
    _load(im, "jpeg")
    im = _exif(im, apply_exif_orientation)
    if mode == GRAY and im.mode != "L":
        im = im.convert("L")
    elif mode == RGB or (mode == UNCHANGED and im.mode not in ("L", "RGB")):
        im = im.convert("RGB")      # (CMYK/YCCK: converted, as torchvision's decoder)
    return _chw(im)


def _decode_png(data, mode, apply_exif_orientation=False):
    raw = _encoded(data)
    if mode not in (UNCHANGED, GRAY, GRAY_ALPHA, RGB, RGB_ALPHA):
        raise RuntimeError(f"decode_png: unsupported mode {mode}")
    im = _open(raw, "png")
    if im.format != "PNG":
        raise RuntimeError("decode_png: the data is not a PNG image")
    if raw[12:16] == b"IHDR" and raw[24] == 16 and raw[25] != 0:
        raise NotImplementedError("decode_png: 16-bit colour PNGs are not supported by ptcore "
                                  "(Pillow reads them as 8 bits)")
    im = _exif(im, apply_exif_orientation)
    if im.mode in ("I;16", "I;16B", "I"):
        # a 16-bit grayscale PNG: uint16 values, as torchvision's decoder
        a = np.asarray(im).astype(np.uint16)
        if mode in (RGB, RGB_ALPHA):
            a = np.stack([a] * 3 + ([np.full_like(a, 65535)] if mode == RGB_ALPHA else []), -1)
        elif mode == GRAY_ALPHA:
            a = np.stack([a, np.full_like(a, 65535)], -1)
        return _chw(a)
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    elif im.mode in ("1", "LA", "L", "RGB", "RGBA"):
        im = im.convert("L") if im.mode == "1" else im
    else:
        im = im.convert("RGBA")
    a = np.asarray(im)
    has_alpha = im.mode in ("LA", "RGBA")
    color = im.mode in ("RGB", "RGBA")
    if mode == UNCHANGED:
        return _chw(a)
    gray = (_png_gray(a[..., :3]) if color else (a[..., 0] if a.ndim == 3 else a))
    alpha = a[..., -1] if has_alpha else np.full(a.shape[:2], 255, np.uint8)
    if mode == GRAY:
        return _chw(gray)
    if mode == GRAY_ALPHA:
        return _chw(np.stack([gray, alpha], -1))
    rgb = a[..., :3] if color else np.stack([gray] * 3, -1)
    return _chw(rgb if mode == RGB else np.concatenate([rgb, alpha[..., None]], -1))


def _decode_gif(data):
    raw = _encoded(data)
    im = _open(raw, "gif")
    if im.format != "GIF":
        raise RuntimeError("decode_gif: the data is not a GIF image")
    frames = []
    for i in range(getattr(im, "n_frames", 1)):
        im.seek(i)
        frames.append(np.asarray(im.convert("RGB")).transpose(2, 0, 1))
    return ptcore.from_numpy(np.stack(frames) if len(frames) > 1 else frames[0].copy())


def _decode_webp(encoded_data, mode):
    raw = _encoded(encoded_data, "encoded_data")
    if mode not in (UNCHANGED, RGB, RGB_ALPHA):
        raise RuntimeError("Unsupported mode for WEBP files")
    im = _open(raw, "webp")
    if im.format != "WEBP":
        raise RuntimeError("decode_webp: the data is not a WEBP image")
    if mode == RGB or (mode == UNCHANGED and im.mode not in ("RGB", "RGBA")):
        im = im.convert("RGB" if mode == RGB or "A" not in im.mode else "RGBA")
    elif mode == RGB_ALPHA:
        im = im.convert("RGBA")
    return _chw(im)


def _decode_image(data, mode, apply_exif_orientation=False):
    raw = _encoded(data)
    if raw[:3] == b"\xff\xd8\xff":
        return _decode_jpeg(data, mode, apply_exif_orientation)
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        return _decode_png(data, mode, apply_exif_orientation)
    if raw[:6] in (b"GIF87a", b"GIF89a"):
        return _decode_gif(data)
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return _decode_webp(data, mode)
    raise RuntimeError("Unsupported image file. Only jpeg, png, webp and gif are currently "
                       "supported.")


def _image_array(data, what):
    if data.dtype != ptcore.uint8:
        raise RuntimeError(f"{what}: input tensor dtype should be uint8")
    if data.dim() != 3 or data.shape[0] not in (1, 3):
        raise RuntimeError(f"{what}: the number of channels should be 1 or 3, got shape "
                           f"{tuple(data.shape)}")
    a = data.detach().cpu().contiguous().numpy().transpose(1, 2, 0)
    return a[..., 0] if a.shape[2] == 1 else a


def _encode(im_array, fmt, **kw):
    Image, _ = _pil()
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(im_array)).save(buf, format=fmt, **kw)
    return ptcore.from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def _encode_jpeg(data, quality):
    if not 1 <= int(quality) <= 100:
        raise RuntimeError("Image quality should be a positive number between 1 and 100")
    return _encode(_image_array(data, "encode_jpeg"), "JPEG", quality=int(quality))


def _encode_png(data, compression_level):
    if not 0 <= int(compression_level) <= 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    return _encode(_image_array(data, "encode_png"), "PNG", compress_level=int(compression_level))


def _cuda_only(name):
    def kernel(*args):
        raise RuntimeError(f"image::{name}: the GPU JPEG codec (nvjpeg) is not available in "
                           "ptcore; decode or encode on the CPU")
    return kernel


def _jpeg_version():
    return 80


def _is_compiled_against_turbo():
    return True


def register(library):
    """Define the ``image`` ops with ``library`` (the ``ptcore.library`` module; once;
    needs Pillow)."""
    if _LIB:
        return
    if _pil() is None:
        raise OSError("torchvision's image library: ptcore decodes images with Pillow, "
                      "which is not installed")
    lib = library.Library("image", "DEF")
    for schema in _SCHEMAS:
        lib.define(schema)
    for name, fn in {"read_file": _read_file, "write_file": _write_file,
                     "decode_jpeg": _decode_jpeg, "decode_png": _decode_png,
                     "decode_gif": _decode_gif, "decode_webp": _decode_webp,
                     "decode_image": _decode_image, "encode_jpeg": _encode_jpeg,
                     "encode_png": _encode_png,
                     "decode_jpegs_cuda": _cuda_only("decode_jpegs_cuda"),
                     "encode_jpegs_cuda": _cuda_only("encode_jpegs_cuda"),
                     "_jpeg_version": _jpeg_version,
                     "_is_compiled_against_turbo": _is_compiled_against_turbo}.items():
        lib.impl(name, fn, "CompositeExplicitAutograd")
    _LIB.append(lib)
