"""``ptcore.utils.tensorboard``: ``SummaryWriter`` writing TensorBoard event
files (``torch.utils.tensorboard``).

The event files are written by the optional ``tensorboardX`` package
(``pip install tensorboardX``, or the ``ptcore[tensorboard]`` extra);
importing this module without it raises ``ImportError``.
"""
from ptcore.utils.tensorboard.writer import SummaryWriter  # noqa: F401

__all__ = ["SummaryWriter"]
