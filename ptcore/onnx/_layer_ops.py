"""ONNX converters of nn layers' functionals: ``F.pad`` (Pad: constant, reflect,
replicate; circular as Slice + Concat), adaptive average / max pooling (to sizes
that divide the input a pooling with kernel = stride = input // output, as torch's
exporter writes them; otherwise a Slice + Reduce per output cell and dim),
``prelu`` (PRelu) and ``unfold`` / ``fold`` (im2col / col2im as Gathers of the
patch positions, known from the static sizes)."""
import numpy as np

import ptcore.nn.functional as F
from ptcore.onnx._more_ops import _shape, _slice, _reduce
from ptcore.onnx._registration import converter, register
from ptcore.onnx._norm_ops import _bound
from ptcore.onnx._shapes import ints as _ints, init as _init
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = []

_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


@converter("nn.functional.pad")
def _pad(b, node):
    a = _bound(node, F.pad)
    x, mode = a["input"], a["mode"]
    if mode not in _MODES and mode != "circular":
        raise UnsupportedOperatorError(f"pad(mode={mode!r})")
    rank = len(_shape(b, x))
    p = [int(v) for v in a["pad"]]
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(p) // 2):       # torch: (last dim's left, right, the one before's ...)
        begins[rank - 1 - i], ends[rank - 1 - i] = p[2 * i], p[2 * i + 1]
    if mode == "circular":
        return _circular_pad(b, x, begins, ends)
    ins = [b.name(x), _ints(b, begins + ends)]
    if mode == "constant":
        value = a["value"] if a["value"] is not None else 0.0
        ins.append(_init(b, np.array(value), b.dtype_of(x)))
    return b.add("Pad", ins, mode=_MODES[mode])


def _circular_pad(b, x, begins, ends):
    """Circular padding, dim by dim as torch fills it: the input cropped where
    a pad is negative, then its last ``begin`` elements before it and its
    first ``end`` elements after it."""
    shape = _shape(b, x)
    y = b.name(x)
    for d, (lo, hi) in enumerate(zip(begins, ends)):
        if lo == 0 and hi == 0:
            continue
        n = shape[d] - max(-lo, 0) - max(-hi, 0)
        if max(lo, hi) > n:
            raise ValueError(f"pad(mode='circular'): padding {max(lo, hi)} of dim {d} is "
                             f"larger than its size {n}")
        if lo < 0 or hi < 0:
            y = _slice(b, y, [d], [max(-lo, 0)], [shape[d] - max(-hi, 0)])
        parts = ([_slice(b, y, [d], [n - lo], [n])] if lo > 0 else []) + [y] + \
            ([_slice(b, y, [d], [0], [hi])] if hi > 0 else [])
        if len(parts) > 1:
            y = b.add("Concat", parts, axis=d)
    return y if y != b.name(x) else b.add("Identity", [y])


def _adaptive_axis(b, y, axis, n_in, n_out, op):
    """Adaptive pooling along one axis (max and mean pool a box dim by dim):
    output cell i reduces [floor(i * in / out), ceil((i + 1) * in / out))."""
    cells = []
    for i in range(n_out):
        start, end = i * n_in // n_out, -(-(i + 1) * n_in // n_out)
        cells.append(_reduce(b, op, _slice(b, y, [axis], [start], [end]), [axis], 1))
    return cells[0] if n_out == 1 else b.add("Concat", cells, axis=axis)


def _adaptive(kind, nd):
    def convert(b, node):
        a = _bound(node, getattr(F, f"adaptive_{kind}_pool{nd}d"))
        if kind == "max" and a.get("return_indices"):
            raise UnsupportedOperatorError("adaptive_max_pool with return_indices=True")
        x = a["input"]
        sp = _shape(b, x)[-nd:]
        out = a["output_size"]
        out = [out] * nd if isinstance(out, int) else list(out)
        out = [s if o is None else int(o) for o, s in zip(out, sp)]
        if any(o <= 0 for o in out):
            raise ValueError(f"adaptive_{kind}_pool{nd}d: output size {out} must be positive")
        if any(s % o for o, s in zip(out, sp)):
            # windows of unequal sizes: one Slice and Reduce per output cell and dim
            rank = len(_shape(b, x))
            y = b.name(x)
            for i, (o, s) in enumerate(zip(out, sp)):
                if o != s:
                    y = _adaptive_axis(b, y, rank - nd + i, s, o,
                                       "ReduceMean" if kind == "avg" else "ReduceMax")
            return y
        if all(o == 1 for o in out):
            return b.add("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", [b.name(x)])
        k = [s // o for s, o in zip(sp, out)]
        return b.add("AveragePool" if kind == "avg" else "MaxPool", [b.name(x)], kernel_shape=k,
                     strides=k, pads=[0] * (2 * nd))
    return convert


def _conv_params(a, nd):
    return [[int(v)] * nd if isinstance(v, int) else [int(i) for i in v]
            for v in (a["kernel_size"], a["dilation"], a["padding"], a["stride"])]


def _zero_pad(b, y, rank, begins, ends, dt):
    """``y`` padded with zeros: ``begins`` / ``ends`` for its last dims."""
    lead = [0] * (rank - len(begins))
    return b.add("Pad", [y, _ints(b, lead + list(begins) + lead + list(ends)),
                         _init(b, np.array(0), dt)], mode="constant")


def _patch_index(size, k, dil, stride):
    """The flat positions (in the padded image of ``size``) that unfold reads:
    (kernel offsets, output positions), row-major over the 2 spatial dims."""
    out = [(s - d * (kk - 1) - 1) // st + 1 for s, kk, d, st in zip(size, k, dil, stride)]
    rows = (np.arange(out[0]) * stride[0])[None, :, None] + \
        (np.arange(k[0]) * dil[0])[:, None, None]          # (kh, oh, 1)
    cols = (np.arange(out[1]) * stride[1])[None, None, :] + \
        (np.arange(k[1]) * dil[1])[:, None, None]          # (kw, 1, ow)
    flat = rows[:, None] * size[1] + cols[None]            # (kh, kw, oh, ow)
    return flat.reshape(k[0] * k[1], out[0] * out[1])


@converter("nn.functional.unfold")
def _im2col(b, node):
    """F.unfold: the input zero-padded, its spatial dims flattened, Gather of
    each patch's positions: (N, C, kh * kw, L) -> (N, C * kh * kw, L)."""
    a = _bound(node, F.unfold)
    x = a["input"]
    shape = _shape(b, x)
    if len(shape) not in (3, 4):
        raise ValueError(f"unfold: expected a 3-D or 4-D input, got shape {tuple(shape)}")
    k, dil, pad, stride = _conv_params(a, 2)
    y = b.name(x)
    if any(pad):
        y = _zero_pad(b, y, len(shape), pad, pad, b.dtype_of(x))
    size = [s + 2 * p for s, p in zip(shape[-2:], pad)]
    index = _patch_index(size, k, dil, stride)
    lead = [0] * (len(shape) - 2)                           # (the batch and channel dims)
    y = b.add("Reshape", [y, _ints(b, lead + [-1])])
    y = b.add("Gather", [y, _init(b, index, "int64")], axis=len(shape) - 2)
    return b.add("Reshape", [y, _ints(b, lead[:-1] + [shape[-3] * index.shape[0],
                                                      index.shape[1]])])


@converter("nn.functional.fold")
def _col2im(b, node):
    """F.fold: each output pixel sums the patch entries that read it -- a
    Gather of their positions (a zero appended for the pixels read by fewer
    patches) and a ReduceSum, then the padding cropped."""
    a = _bound(node, F.fold)
    x = a["input"]
    shape = _shape(b, x)
    if len(shape) not in (2, 3):
        raise ValueError(f"fold: expected a 2-D or 3-D input, got shape {tuple(shape)}")
    out_size = a["output_size"]
    out_size = [int(out_size)] * 2 if isinstance(out_size, int) else [int(v) for v in out_size]
    k, dil, pad, stride = _conv_params(a, 2)
    size = [s + 2 * p for s, p in zip(out_size, pad)]
    index = _patch_index(size, k, dil, stride)               # (kk, L): pixel of each entry
    kk, n_blocks = index.shape
    if shape[-2] % kk or shape[-1] != n_blocks:
        raise ValueError(f"fold: input of shape {tuple(shape)} does not hold {kk}-element "
                         f"patches at {n_blocks} positions for output size {out_size}")
    readers = [[] for _ in range(size[0] * size[1])]
    for e, pixel in enumerate(index.reshape(-1)):
        readers[pixel].append(e)
    width = max(len(r) for r in readers)
    gather = np.full((len(readers), width), kk * n_blocks, dtype=np.int64)     # the zero
    for pixel, r in enumerate(readers):
        gather[pixel, :len(r)] = r
    lead = [0] * (len(shape) - 2)                           # (the batch dim)
    rank = len(shape) + 1
    y = b.add("Reshape", [b.name(x), _ints(b, lead + [shape[-2] // kk, kk * n_blocks])])
    y = _zero_pad(b, y, rank - 1, [0], [1], b.dtype_of(x))
    y = b.add("Gather", [y, _init(b, gather, "int64")], axis=rank - 2)
    y = _reduce(b, "ReduceSum", y, [rank - 1], 0)
    y = b.add("Reshape", [y, _ints(b, lead + [shape[-2] // kk] + size)])
    if any(pad):
        y = _slice(b, y, [rank - 2, rank - 1], pad, [s - p for s, p in zip(size, pad)])
    return y


@converter("nn.functional.prelu")
def _prelu(b, node):
    a = _bound(node, F.prelu)
    x, w = a["input"], a["weight"]
    rank = len(_shape(b, x))
    n = int(np.prod(_shape(b, w)))
    slope = b.name(w)
    if n > 1 and rank >= 2:             # one slope per channel (dim 1): broadcast from there
        slope = b.add("Reshape", [slope, _ints(b, [n] + [1] * (rank - 2))])
    return b.add("PRelu", [b.name(x), slope])


for _nd in (1, 2, 3):
    for _kind in ("avg", "max"):
        register(_adaptive(_kind, _nd), f"nn.functional.adaptive_{_kind}_pool{_nd}d")
