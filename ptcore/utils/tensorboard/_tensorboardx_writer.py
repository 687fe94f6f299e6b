"""The fallback ``SummaryWriter`` where the ``tensorboard`` package is not
installed: ``torch.utils.tensorboard.SummaryWriter``'s API over
``tensorboardX``'s event-file writer; ptcore tensors are passed on as NumPy
arrays."""
import functools
import sys

from ptcore._tensor import _TensorBase

__all__ = ["SummaryWriter"]


def _import_tensorboardx():
    """Import tensorboardX without letting it import PyTorch (it binds torch
    when importable; ptcore passes NumPy arrays, so torch is never needed)."""
    blocked = "torch" not in sys.modules
    if blocked:
        sys.modules["torch"] = None          # makes ``import torch`` raise ImportError
    try:
        import tensorboardX
    except ImportError as e:
        raise ImportError("ptcore.utils.tensorboard needs the tensorboardX package "
                          "(pip install tensorboardX)") from e
    finally:
        if blocked and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return tensorboardX


_tbx = _import_tensorboardx()


def _to_numpy(x):
    """ptcore tensors (also inside lists, tuples and dicts) as NumPy arrays."""
    if isinstance(x, _TensorBase):
        return x.detach().cpu().numpy()
    if isinstance(x, list):
        conv = [_to_numpy(v) for v in x]
        return conv
    if isinstance(x, tuple):
        return tuple(_to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    return x


def _converting(name):
    base = getattr(_tbx.SummaryWriter, name)

    @functools.wraps(base)
    def method(self, *args, **kwargs):
        return base(self, *[_to_numpy(a) for a in args],
                    **{k: _to_numpy(v) for k, v in kwargs.items()})
    return method


def _scalar(value):
    if isinstance(value, _TensorBase):
        if value.numel() != 1:
            raise AssertionError("Tensor should contain one element (0 dimensions). Was given "
                                 f"size: {value.numel()} and {value.dim()} dimensions.")
        return value.item()
    return value


class SummaryWriter(_tbx.SummaryWriter):
    """Write TensorBoard event files to ``log_dir`` (``torch.utils.tensorboard.SummaryWriter``).

    Parameters
    ----------
    log_dir : str, optional
        Where to write (``runs/<date>_<host><comment>`` by default).
    comment : str
        Suffix of the default ``log_dir``.
    purge_step : int, optional
        Hide events at and after this step from a crashed earlier run.
    max_queue : int
        Events buffered before a write.
    flush_secs : int
        Seconds between flushes.
    filename_suffix : str
        Suffix of the event file's name.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        super().__init__(logdir=log_dir, comment=comment, purge_step=purge_step,
                         max_queue=max_queue, flush_secs=flush_secs,
                         filename_suffix=filename_suffix)
        self.log_dir = self.logdir

    def get_logdir(self):
        """The directory the event files are written to."""
        return self.logdir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Record one number (a Python number or a one-element tensor)."""
        return super().add_scalar(tag, _scalar(scalar_value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Record several numbers under ``main_tag``: as torch, each key gets
        its own run directory ``<log_dir>/<main_tag>_<key>``."""
        import time
        from tensorboardX.summary import scalar
        from tensorboardX.writer import FileWriter
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(logdir=fw_tag, max_queue=self._max_queue,
                                flush_secs=self._flush_secs,
                                filename_suffix=self._filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, _scalar(value)), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Record an image (CHW by default; float values in [0, 1] or uint8)."""
        import numpy as np
        img = _to_numpy(img_tensor)
        if isinstance(img, list):
            img = np.stack(img, 0)
            dataformats = "N" + dataformats
        return super().add_image(tag, img, global_step, walltime, dataformats)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Record a run's hyperparameters with its final metrics."""
        return super().add_hparams({k: _scalar(v) for k, v in hparam_dict.items()},
                                   {k: _scalar(v) for k, v in metric_dict.items()},
                                   name=run_name, global_step=global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not supported: needs PyTorch's JIT tracer."""
        raise NotImplementedError("SummaryWriter.add_graph needs a traced model graph, which "
                                  "ptcore cannot produce yet")


for _name in ("add_histogram", "add_histogram_raw", "add_images", "add_image_with_boxes",
              "add_video", "add_audio", "add_embedding", "add_pr_curve", "add_pr_curve_raw",
              "add_mesh", "add_text"):
    setattr(SummaryWriter, _name, _converting(_name))
del _name
