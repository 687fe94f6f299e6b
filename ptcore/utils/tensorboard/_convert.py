"""Values to NumPy for the summaries: tensors (ptcore's), arrays and numbers;
image layouts to HWC, image batches to one grid, matplotlib figures and
video batches to image arrays (``torch/utils/tensorboard/_utils.py`` and
``_convert_np.py``)."""
import numpy as np

import ptcore
from ptcore._tensor import _TensorBase

__all__ = ["make_np", "convert_to_HWC", "make_grid", "figure_to_image", "prepare_video"]


def make_np(x):
    """``x`` as a NumPy array: arrays as they are, numbers as one-element
    arrays, tensors detached and copied to the host (bfloat16 as float16, as
    torch does: NumPy has no bfloat16)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, _TensorBase):
        if x.device.type == "meta":
            return np.random.randn(1)           # (torch logs noise for meta tensors too)
        if x.dtype == ptcore.bfloat16:
            x = x.to(ptcore.float16)
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def make_grid(images, ncols=8):
    """An NCHW batch (1 or 3 channels) as one CHW image, ``ncols`` per row."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor, input_format):  # noqa: N802 - torch's name
    """An image array in ``input_format`` (``"CHW"``, ``"HWC"``, ``"HW"``,
    ``"NCHW"`` ...) as HWC with 3 channels (batches as a grid)."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError("You can not use the same dimension shorthand twice. "
                             f"input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError("size of input tensor and input format are different. tensor "
                             f"shape: {tensor.shape}, input_format: {input_format}")
    fmt = input_format.upper()
    if len(fmt) == 4:
        return make_grid(tensor.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        hw = tensor.transpose([fmt.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    raise AssertionError(f"unsupported image format {input_format!r}")


def figure_to_image(figures, close=True):
    """A matplotlib figure (or a list of them) rendered as a CHW (NCHW) uint8 array."""
    import matplotlib.pyplot as plt      # lazy: an optional dependency, imported when used
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        w, h = figure.canvas.get_width_height()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)
    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


def prepare_video(v):
    """A (batch, time, C, H, W) array as (time, H', W', C) frames: the batch
    tiled in a grid of a power-of-two number of cells."""
    b, t, c, h, w = v.shape
    if v.dtype == np.uint8:
        v = np.float32(v) / 255.0
    if b & (b - 1):
        v = np.concatenate((v, np.zeros((2 ** b.bit_length() - b, t, c, h, w))), axis=0)
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = v.shape[0] // n_rows
    v = v.reshape(n_rows, n_cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return v.reshape(t, n_rows * h, n_cols * w, c)
