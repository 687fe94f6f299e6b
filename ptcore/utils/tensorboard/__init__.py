"""``ptcore.utils.tensorboard`` (``torch.utils.tensorboard``): ``SummaryWriter``
writes TensorBoard event files through the ``tensorboard`` package (``pip
install tensorboard``), as torch's does: scalars, histograms, images, text,
hyperparameters, precision-recall curves, embeddings, figures, audio, video,
meshes and model graphs (from ``ptcore.jit.trace``).

Where ``tensorboard`` is not installed, the ``tensorboardX`` package writes
the event files instead (``SummaryWriter`` with the same methods but
``add_graph``); without either, importing this module raises ``ImportError``.
"""
try:
    import tensorboard as _tb
except ImportError:
    _tb = None

if _tb is not None and tuple(int(p) for p in _tb.__version__.split(".")[:2]
                             if p.isdigit()) >= (1, 15):
    from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: F401

    from ptcore.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: F401

    __all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
else:
    try:
        from ptcore.utils.tensorboard._tensorboardx_writer import SummaryWriter  # noqa: F401
    except ImportError as e:
        raise ImportError("ptcore.utils.tensorboard needs the tensorboard package (pip install "
                          "tensorboard; TensorBoard 1.15 or above), or tensorboardX") from e
    __all__ = ["SummaryWriter"]
del _tb
