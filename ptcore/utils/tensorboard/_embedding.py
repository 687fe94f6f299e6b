"""The projector plugin's files for ``SummaryWriter.add_embedding``:
``tensors.tsv`` (the points), ``metadata.tsv`` (their labels),
``sprite.png`` (their images) and ``projector_config.pbtxt`` (as torch's
``torch/utils/tensorboard/_embedding.py`` writes them, through
``tf.io.gfile``, so remote log directories work where TensorBoard's file
system layer reaches them)."""
import io
import math

import numpy as np
from tensorboard.compat import tf
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ptcore.utils.tensorboard._convert import make_grid, make_np

__all__ = ["make_tsv", "make_sprite", "make_mat", "get_embedding_info", "write_pbtxt"]


def _join(a, b):
    gfile = tf.io.gfile
    return gfile.join(a, b) if hasattr(gfile, "join") else gfile.get_filesystem(a).join(a, b)


def _write(path, data):
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)


def make_tsv(metadata, save_path, metadata_header=None):
    """One label per line (or, with ``metadata_header``, tab-separated columns)."""
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    _write(_join(save_path, "metadata.tsv"), ("\n".join(lines) + "\n").encode("utf-8"))


def make_sprite(label_img, save_path):
    """The label images (NCHW, values in [0, 1]) tiled in one square PNG."""
    from PIL import Image               # lazy: Pillow is optional
    imgs = make_np(label_img)
    grid = make_grid(imgs, ncols=math.ceil(imgs.shape[0] ** 0.5))       # CHW
    square = np.zeros((grid.shape[2], grid.shape[2], 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    buf = io.BytesIO()
    Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buf, format="PNG")
    _write(_join(save_path, "sprite.png"), buf.getvalue())


def make_mat(matlist, save_path):
    """The points, one tab-separated row each."""
    rows = ("\t".join(str(v.item()) for v in row) + "\n" for row in matlist)
    _write(_join(save_path, "tensors.tsv"), "".join(rows).encode("utf-8"))


def get_embedding_info(metadata, label_img, subdir, global_step, tag):
    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = _join(subdir, "tensors.tsv")
    if metadata is not None:
        info.metadata_path = _join(subdir, "metadata.tsv")
    if label_img is not None:
        shape = make_np(label_img).shape
        info.sprite.image_path = _join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([shape[3], shape[2]])
    return info


def write_pbtxt(save_path, contents):
    _write(_join(save_path, "projector_config.pbtxt"), contents.encode("utf-8"))
