"""TensorBoard ``Summary`` protocol buffers from ptcore tensors, NumPy arrays
and numbers (``torch.utils.tensorboard.summary``): scalars, histograms,
images (PNG), text, hyperparameters, precision-recall curves, audio (WAV),
video (GIF), custom-scalar layouts, meshes and raw tensors.  Each function
returns what torch's function of the same name returns for the same values,
so TensorBoard (and its ``EventAccumulator``) shows the same data.
"""
import io
import json
import struct

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

import ptcore
from ptcore._tensor import _TensorBase
from ptcore.utils.tensorboard._convert import convert_to_HWC, make_np, prepare_video

__all__ = ["hparams", "scalar", "histogram_raw", "histogram", "make_histogram", "image",
           "image_boxes", "draw_boxes", "make_image", "video", "make_video", "audio",
           "custom_scalars", "text", "tensor_proto", "pr_curve_raw", "pr_curve",
           "compute_curve", "mesh", "half_to_int", "int_to_half"]


def _plugin(name, content=b""):
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name,
                                                                  content=content))


def _shape(*dims):
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in dims])


def half_to_int(f):
    """The bits of ``f`` as a float32, read as an int32 (torch's helper of the same name)."""
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i):
    return struct.unpack("f", struct.pack("i", i))[0]


# ---------------------------------------------------------------------------
# scalars, tensors, histograms
# ---------------------------------------------------------------------------

def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """One number: ``simple_value``, or (``new_style``) a float/double tensor
    of the ``scalars`` plugin."""
    value = make_np(tensor).squeeze()
    if value.ndim != 0:
        raise AssertionError("Tensor should contain one element (0 dimensions). Was given "
                             f"size: {value.size} and {value.ndim} dimensions.")
    value = float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=_plugin("scalars"))])


def _half_bits(t):
    return [half_to_int(x) for x in t.reshape(-1).tolist()]


def _complex_parts(t):
    return ptcore.view_as_real(t.to(ptcore.complex64) if t.dtype == ptcore.complex32
                               else t).reshape(-1).tolist()


def _values(t):
    return t.reshape(-1).tolist()


# dtype name -> (TensorProto dtype, field, conversion), as torch's _TENSOR_TYPE_MAP
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _half_bits),
    "bfloat16": ("DT_BFLOAT16", "half_val", _half_bits),
    "float32": ("DT_FLOAT", "float_val", _values),
    "float64": ("DT_DOUBLE", "double_val", _values),
    "int8": ("DT_INT8", "int_val", _values),
    "uint8": ("DT_UINT8", "uint32_val", _values),
    "int16": ("DT_INT16", "int_val", _values),
    "int32": ("DT_INT32", "int_val", _values),
    "int64": ("DT_INT64", "int64_val", _values),
    "complex32": ("DT_COMPLEX32", "scomplex_val", _complex_parts),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
    "bool": ("DT_BOOL", "bool_val", _values),
}


def tensor_proto(tag, tensor):
    """A whole tensor as a ``TensorProto`` of the ``tensor`` plugin."""
    if tensor.numel() * tensor.element_size() >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    kind = _TENSOR_TYPES.get(tensor.dtype._name)
    if kind is None:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, convert = kind
    proto = TensorProto(dtype=dtype, tensor_shape=_shape(*tensor.shape),
                        **{field: convert(tensor.detach().cpu())})
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin("tensor"), tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values, bins, max_bins=None):
    """A ``HistogramProto`` of ``values`` (``bins`` as ``np.histogram`` takes
    them), at most ``max_bins`` buckets, trimmed to the non-empty range."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        if len(counts) % group:
            counts = np.pad(counts, [[0, group - len(counts) % group]])
        counts = counts.reshape(-1, group).sum(axis=-1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    # keep from one bucket before the first non-empty one to the last non-empty one
    nonempty = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(nonempty, [0, nonempty[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


# ---------------------------------------------------------------------------
# images, video, audio
# ---------------------------------------------------------------------------

def _to_uint8(arr):
    """Floats in [0, 1] (or uint8 values) as uint8 pixels."""
    scale = 1 if arr.dtype == np.uint8 else 255
    return (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image (or a batch, tiled) as a PNG ``Summary.Image``."""
    pixels = _to_uint8(convert_to_HWC(make_np(tensor), dataformats))
    return Summary(value=[Summary.Value(tag=tag, image=make_image(pixels, rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """An image with boxes (N x [x_min, y_min, x_max, y_max]) drawn on it."""
    pixels = _to_uint8(convert_to_HWC(make_np(tensor_image), dataformats))
    img = make_image(pixels, rescale=rescale, rois=make_np(tensor_boxes), labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def _draw_box(img, xmin, ymin, xmax, ymax, label, color="Red", color_text="black",
              thickness=2):
    from PIL import ImageDraw, ImageFont     # lazy: Pillow is optional
    draw = ImageDraw.Draw(img)
    draw.line([(xmin, ymin), (xmin, ymax), (xmax, ymax), (xmax, ymin), (xmin, ymin)],
              width=thickness, fill=color)
    if label:
        font = ImageFont.load_default()
        left, top, right, bottom = font.getbbox(label)
        tw, th = right - left, bottom - top
        margin = np.ceil(0.05 * th)
        draw.rectangle([(xmin, ymax - th - 2 * margin), (xmin + tw, ymax)], fill=color)
        draw.text((xmin + margin, ymax - th - margin), label, fill=color_text, font=font)
    return img


def draw_boxes(disp_image, boxes, labels=None):
    for i in range(boxes.shape[0]):
        disp_image = _draw_box(disp_image, *boxes[i, :4],
                               label=None if labels is None else labels[i])
    return disp_image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """An HWC uint8 array as a ``Summary.Image`` (PNG)."""
    from PIL import Image                     # lazy: Pillow is optional
    height, width, channel = tensor.shape
    img = Image.fromarray(tensor)
    if rois is not None:
        img = draw_boxes(img, rois, labels=labels)
    img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channel,
                         encoded_image_string=out.getvalue())


def video(tag, tensor, fps=4):
    frames = _to_uint8(prepare_video(make_np(tensor)))
    return Summary(value=[Summary.Value(tag=tag, image=make_video(frames, fps))])


def make_video(tensor, fps):
    """(time, H, W, C) uint8 frames as an animated GIF ``Summary.Image`` (needs
    moviepy, as torch's)."""
    try:
        from moviepy import editor as mpy     # lazy: an optional dependency
    except ImportError:
        raise ImportError("add_video needs the moviepy package (pip install moviepy)") from None
    import tempfile
    _, h, w, c = tensor.shape
    clip = mpy.ImageSequenceClip(list(tensor), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        try:
            clip.write_gif(f.name, verbose=False, logger=None)
        except TypeError:
            clip.write_gif(f.name, verbose=False)
        f.seek(0)
        data = f.read()
    return Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=data)


def audio(tag, tensor, sample_rate=44100):
    """Samples in [-1, 1] (clipped) as a 16-bit mono WAV ``Summary.Audio``."""
    import wave
    samples = make_np(tensor).squeeze()
    if abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.data)
    snd = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                        encoded_audio_string=out.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=snd)])


# ---------------------------------------------------------------------------
# text, hyperparameters, custom scalars
# ---------------------------------------------------------------------------

def text(tag, text):
    """A string for the ``text`` plugin (tag ``<tag>/text_summary``, as torch's)."""
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=_shape(1))
    meta = _plugin("text", TextPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                        tensor=proto)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The experiment, session-start and session-end summaries of the
    ``hparams`` plugin for one run."""
    from tensorboard.plugins.hparams import metadata          # lazy: plugin protos
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import (
        HParamsPluginData, SessionEndInfo, SessionStartInfo,
    )
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    for k, v in discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    infos, ssi = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, _TensorBase):
            ssi.hparams[k].number_value = make_np(v).reshape(-1)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        if isinstance(v, (int, float)):      # (a bool is an int here, as in torch)
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(ssi.hparams[k], field, v)
        domain = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                               for d in discrete[k]])
                  if k in discrete else None)
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def wrap(tag, **content):
        data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
        return Summary(value=[Summary.Value(tag=tag, metadata=_plugin(
            metadata.PLUGIN_NAME, data.SerializeToString()))])
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (wrap(metadata.EXPERIMENT_TAG, experiment=experiment),
            wrap(metadata.SESSION_START_INFO_TAG, session_start_info=ssi),
            wrap(metadata.SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(
                status=Status.Value("STATUS_SUCCESS"))))


def custom_scalars(layout):
    """The ``custom_scalars`` plugin's layout: ``{category: {title: ["Multiline"
    or "Margin", tags]}}``."""
    categories = []
    for cat, charts in layout.items():
        out = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                content = layout_pb2.MarginChartContent(series=[
                    layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                         upper=tags[2])])
                out.append(layout_pb2.Chart(title=title, margin=content))
            else:
                out.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=cat, chart=out))
    proto = TensorProto(dtype="DT_STRING", tensor_shape=TensorShapeProto(), string_val=[
        layout_pb2.Layout(category=categories).SerializeToString()])
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=_plugin("custom_scalars"))])


# ---------------------------------------------------------------------------
# precision-recall curves
# ---------------------------------------------------------------------------

def _pr_summary(tag, data, num_thresholds):
    meta = _plugin("pr_curves", PrCurvePluginData(
        version=0, num_thresholds=num_thresholds).SerializeToString())
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=_shape(*data.shape))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)),
                       min(num_thresholds, 127))


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)      # (more breaks the plugin, as in torch)
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights),
                       num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """(tp, fp, tn, fn, precision, recall) at ``num_thresholds`` thresholds."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    kw = dict(bins=num_thresholds, range=(0, num_thresholds - 1))
    tp_b, _ = np.histogram(buckets, weights=positive * weights, **kw)
    fp_b, _ = np.histogram(buckets, weights=(1.0 - positive) * weights, **kw)
    tp = np.cumsum(tp_b[::-1])[::-1]
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


# ---------------------------------------------------------------------------
# meshes
# ---------------------------------------------------------------------------

def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """Vertices (B, N, 3), faces (B, F, 3) and colors (B, N, 3) for the ``mesh`` plugin."""
    from tensorboard.plugins.mesh import metadata               # lazy: plugin protos
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
    config = json.dumps(config_dict, sort_keys=True) if config_dict is not None else "{}"
    parts = [(t, kind) for t, kind in ((vertices, MeshPluginData.VERTEX),
                                       (faces, MeshPluginData.FACE),
                                       (colors, MeshPluginData.COLOR)) if t is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for t, kind in parts:
        arr = make_np(t)
        meta = metadata.create_summary_metadata(tag, display_name, kind, components, arr.shape,
                                                description, json_config=config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=arr.reshape(-1).tolist(),
                            tensor_shape=_shape(*arr.shape[:3]))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto,
                                    metadata=meta))
    return Summary(value=values)
