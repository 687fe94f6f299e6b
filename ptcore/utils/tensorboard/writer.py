"""``SummaryWriter`` and ``FileWriter``: TensorBoard event files written
through the ``tensorboard`` package's ``EventFileWriter``, as
``torch.utils.tensorboard`` writes them (same records, tags, steps and
values for the same calls)."""
import os
import time

from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ptcore.utils.tensorboard import _embedding
from ptcore.utils.tensorboard._convert import figure_to_image, make_np
from ptcore.utils.tensorboard._graph import graph, onnx_graph
from ptcore.utils.tensorboard.summary import (
    audio, custom_scalars, histogram, histogram_raw, hparams, image, image_boxes, mesh,
    pr_curve, pr_curve_raw, scalar, tensor_proto, text, video,
)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protocol buffers to one event file in ``log_dir``
    (asynchronously: a queue of ``max_queue`` events, flushed every
    ``flush_secs`` seconds)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self):
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        graph_def, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph_def.SerializeToString()), None, walltime)
        run = event_pb2.TaggedRunMetadata(tag="step1",
                                          run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=run), None, walltime)

    def add_onnx_graph(self, graph, walltime=None):
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


def _default_log_dir(comment):
    import socket                       # lazy: only for the default directory name
    from datetime import datetime
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", stamp + "_" + socket.gethostname() + comment)


class SummaryWriter:
    """Write TensorBoard event files to ``log_dir`` (``torch.utils.tensorboard.SummaryWriter``).

    Parameters
    ----------
    log_dir : str, optional
        Where to write; ``runs/<Mon><day>_<H>-<M>-<S>_<hostname><comment>`` by default.
    comment : str
        Suffix of the default ``log_dir`` (ignored when ``log_dir`` is given).
    purge_step : int, optional
        After a crash at step T+X and a restart at step T: events of steps
        ``>= purge_step`` already in ``log_dir`` are hidden by TensorBoard.
    max_queue : int
        Events buffered before a write to disk.
    flush_secs : int
        Seconds between flushes.
    filename_suffix : str
        Suffix of the event files' names.

    Examples
    --------
    >>> import tempfile
    >>> from ptcore.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp()) as w:
    ...     for step in range(3):
    ...         w.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        self.log_dir = log_dir or _default_log_dir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # the histogram bins of TensorFlow's summaries: +-1e-12 * 1.1**k up to 1e20, and 0
        v, edges = 1e-12, []
        while v < 1e20:
            edges.append(v)
            v *= 1.1
        self.default_bins = [-e for e in reversed(edges)] + [0] + edges

    def _get_file_writer(self):
        """The writer of ``log_dir``, made again after :meth:`close`."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(
                    status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory the event files are written to."""
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # -- numbers ----------------------------------------------------------------------
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One number (a Python number, a NumPy scalar or a one-element tensor)."""
        self._add(scalar(tag, scalar_value, new_style=new_style,
                         double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several numbers under ``main_tag``: each key is written to its own run
        directory ``<log_dir>/<main_tag>_<key>``, as torch does."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            key = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(key)
            if fw is None:
                fw = self.all_writers[key] = FileWriter(key, self.max_queue, self.flush_secs,
                                                        self.filename_suffix)
            fw.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """A whole tensor (the ``tensor`` plugin)."""
        self._add(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """A histogram of ``values``; ``bins`` as ``np.histogram`` takes them, or
        ``"tensorflow"`` (the default) for TensorFlow's exponential bins."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """A histogram given by its statistics and buckets."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                bucket_counts), global_step, walltime)

    # -- pictures and sound -----------------------------------------------------------
    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image (floats in [0, 1] or uint8), CHW by default."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images, tiled in one grid."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """An image with boxes drawn on it (``box_tensor``: N x [x1, y1, x2, y2])."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._add(image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                              dataformats=dataformats, labels=labels), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them) as an image."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats=fmt)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """A (N, T, C, H, W) batch of videos as an animated GIF (needs moviepy)."""
        self._add(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Samples in [-1, 1] as a WAV clip."""
        self._add(audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (Markdown in TensorBoard's text dashboard)."""
        self._add(text(tag, text_string), global_step, walltime)

    # -- graphs and embeddings --------------------------------------------------------
    def add_onnx_graph(self, prototxt):
        """The graph of the ONNX model in the file ``prototxt`` (needs onnx)."""
        self._get_file_writer().add_onnx_graph(onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The graph of ``model`` run on ``input_to_model`` (a tensor or a tuple),
        from a ``ptcore.jit.trace``; errors of the trace are raised, as torch's."""
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose,
                                                use_strict_trace))

    @staticmethod
    def _encode(rawstr):
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """Points (N x D) for the projector, with labels (``metadata``) and
        images (``label_img``, N x C x H x W)."""
        mat = make_np(mat)
        global_step = 0 if global_step is None else global_step
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if not fs.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot "
                                         "proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            fs.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _embedding.make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _embedding.make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data "
                                 "points")
        _embedding.make_mat(mat, save_path)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([_embedding.get_embedding_info(
            metadata, label_img, subdir, global_step, tag)])
        from google.protobuf import text_format   # lazy: only the projector needs it
        _embedding.write_pbtxt(self._get_file_writer().get_logdir(),
                               text_format.MessageToString(self._projector_config))

    # -- curves, layouts, meshes, hyperparameters -------------------------------------
    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """A precision-recall curve of ``predictions`` (in [0, 1]) against 0/1 ``labels``."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._add(pr_curve(tag, labels, predictions, num_thresholds, weights), global_step,
                  walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        self._add(pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                               true_negative_counts, false_negative_counts, precision, recall,
                               num_thresholds, weights), global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self._add(custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._add(custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout):
        """The custom-scalars dashboard's layout: ``{category: {title: [kind, tags]}}``."""
        self._add(custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        self._add(mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """A run's hyperparameters with its metrics, written (as torch writes them)
        to the sub-directory ``run_name`` (the time by default) of ``log_dir``."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in (exp, ssi, sei):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    # -- lifetime ---------------------------------------------------------------------
    def flush(self):
        """Write every pending event to disk."""
        for w in (self.all_writers or {}).values():
            w.flush()

    def close(self):
        """Flush and close every event file (a later ``add_*`` opens new ones)."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
