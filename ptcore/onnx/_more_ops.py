"""ONNX conversions of the shape, indexing, creation and attention ops a
traced model records besides the core set in ``_export``: what recurrent
cells (unrolled into addmm / narrow / sigmoid / tanh / stack; the layers are
``_recurrent``'s), Transformer layers (multi-head attention recorded as its
ops, ``scaled_dot_product_attention``) and transposed convolutions need.  Each
converter takes the builder and the node and returns the ONNX value name;
each registers itself in :mod:`ptcore.onnx._registration`.  Size arguments may be
:class:`~ptcore.onnx._shapes.Sym` s (sizes the graph computes, with
``dynamic_axes``): the converters of shapes, slices and fills build them into
the graph."""
import inspect
import math

import numpy as np

from ptcore.onnx._shapes import (Sym, dec, is_value, ints as _ints, init as _init, scalar,
                                 vector, has_sym, shape_of, INT64_MAX, NP_DTYPES)
import ptcore.nn.functional as F
import ptcore.onnx._opsets as _opsets
import ptcore.onnx._proto as P
from ptcore.onnx.errors import UnsupportedOperatorError
from ptcore.onnx._registration import converter, register

__all__ = ["DECOMPOSED"]

# composites an export records as the ops they call
DECOMPOSED = frozenset({("nn.functional", "multi_head_attention_forward")})


def _arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _val(node, i, name, default=None):
    a = _arg(node, i, name, default)
    return dec(a) if a is not default else default


def _shape(b, enc):
    return list(b.g.values[enc["v"]].shape)


def _out_shape(b, node):
    return list(b.g.values[node.output_ids()[0]].shape)


def _slice(b, x, axes, starts, ends, steps=None):
    """A Slice; starts/ends items are ints or :class:`Sym` s (graph sizes)."""
    ins = [x, vector(b, starts), vector(b, ends), _ints(b, axes)]
    if steps is not None:
        ins.append(_ints(b, steps))
    return b.add("Slice", ins)


@converter("narrow")
def _narrow(b, node):
    x = node.args[0]
    rank = len(_shape(b, x))
    dim = int(_val(node, 1, "dim")) % rank
    start, length = _val(node, 2, "start"), _val(node, 3, "length")
    if isinstance(start, Sym) or isinstance(length, Sym):
        end = Sym(int(start) + int(length),
                  lambda: b.add("Add", [scalar(b, start), scalar(b, length)]))
    else:
        start, length = int(start), int(length)
        if start < 0 and not b.dynamic:
            start += _shape(b, x)[dim]
        end = start + length
        if start < 0 and end >= 0:          # the last elements (dynamic: from the end)
            end = INT64_MAX
    return _slice(b, b.name(x), [dim], [start], [end])


def basic_index(b, x, idx):
    """``x[idx]``, ``idx`` a tuple of ints, slices, None and Ellipsis: Slice,
    Gather of the ints, Unsqueeze of the Nones (the indexing with tensors and
    lists is ``_indexing_ops``', which calls this for the rest)."""
    shape = _shape(b, x)
    for i in idx:
        if not (i is None or i is Ellipsis or isinstance(i, (int, slice))) or \
                isinstance(i, bool):
            raise UnsupportedOperatorError(f"indexing with {i!r}")
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        fill = len(shape) - sum(1 for i in idx if i is not None and i is not Ellipsis)
        idx = idx[:k] + (slice(None),) * fill + idx[k + 1:]
    slices, ints, unsq = [], [], []
    d = o = 0
    for i in idx:
        if i is None:
            unsq.append(o)
            o += 1
        elif isinstance(i, int):
            # (with dynamic axes a negative index stays one: Gather counts from the end)
            ints.append((d, i if isinstance(i, Sym) or b.dynamic else i % shape[d]))
            d += 1
        else:
            if isinstance(i.step, Sym):
                raise UnsupportedOperatorError("a slice whose step is a computed size")
            step = 1 if i.step is None else int(i.step)
            if step <= 0:
                raise UnsupportedOperatorError("slices with a step below 1")
            if b.dynamic or has_sym((i.start, i.stop)):
                # Python's slice rules are Slice's: negative bounds count from the end
                start = 0 if i.start is None else i.start
                stop = INT64_MAX if i.stop is None else i.stop
                if (start, stop, step) != (0, INT64_MAX, 1):
                    slices.append((d, start, stop, step))
            else:
                start, stop, step = i.indices(shape[d])
                if (start, stop, step) != (0, shape[d], 1):
                    slices.append((d, start, max(stop, start), step))
            d += 1
            o += 1
    y = b.name(x)
    if slices:
        y = _slice(b, y, [s[0] for s in slices], [s[1] for s in slices],
                   [s[2] for s in slices], [s[3] for s in slices])
    for dim, i in sorted(ints, reverse=True):
        y = b.add("Gather", [y, scalar(b, i)], axis=dim)
    if unsq:
        y = b.add("Unsqueeze", [y, _ints(b, unsq)])
    if y == b.name(x):
        y = b.add("Identity", [y])
    return y


@converter("unflatten")
def _unflatten(b, node):
    """unflatten(dim, sizes): Reshape that copies every other dim (0), so a
    dynamic axis elsewhere follows."""
    x = node.args[0]
    rank = len(_shape(b, x))
    dim = int(_val(node, 1, "dim")) % rank
    sizes = list(_val(node, 2, "sizes"))
    shape = [0] * dim + sizes + [0] * (rank - dim - 1)
    return b.add("Reshape", [b.name(x), vector(b, shape)])


@converter("unsqueeze")
def _unsqueeze(b, node):
    rank = len(_shape(b, node.args[0])) + 1
    return b.add("Unsqueeze", [b.name(node.args[0]), _ints(b, [int(_val(node, 1, "dim")) % rank])])


@converter("squeeze")
def _squeeze(b, node):
    x = node.args[0]
    shape = _shape(b, x)
    dim = _val(node, 1, "dim")
    dims = list(range(len(shape))) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    dims = [d % len(shape) for d in dims if shape[d % len(shape)] == 1]
    if not dims:
        return b.add("Identity", [b.name(x)])
    return b.add("Squeeze", [b.name(x), _ints(b, dims)])


@converter("ptcore.stack")
def _stack(b, node):
    items = node.args[0].get("list", node.args[0].get("tuple"))
    rank = len(_shape(b, items[0])) + 1
    dim = int(_val(node, 1, "dim", 0)) % rank
    parts = [b.add("Unsqueeze", [b.name(t), _ints(b, [dim])]) for t in items]
    return b.add("Concat", parts, axis=dim)


def _filled(b, node, value):
    """A tensor of ``value``: a constant of the recorded shape, or, with
    dynamic axes, the value expanded to the sizes the graph computes (the
    size arguments, or the shape of the ``*_like`` / ``new_*`` source)."""
    dt = b.g.values[node.output_ids()[0]].dtype
    if dt not in NP_DTYPES:
        raise UnsupportedOperatorError(f"a {dt} constant")
    if not b.dynamic:
        return b.add("Identity", [_init(b, np.full(_out_shape(b, node), value), dt)])
    name = node.op[1]
    if name.endswith("_like"):
        shape = shape_of(b, node.args[0])
    else:
        first = 1 if node.op[0] == "Tensor" else 0
        vals = [dec(a) for a in node.args[first:]]
        if name in ("full", "new_full") and len(node.args) > first + 1:
            vals = vals[:-1]                    # (the fill value)
        if len(vals) == 1 and isinstance(vals[0], (list, tuple)):
            vals = list(vals[0])
        if not vals and "size" in node.kwargs:
            vals = list(dec(node.kwargs["size"]))
        shape = vector(b, vals)
    return b.add("Expand", [_init(b, np.array(value), dt), shape])


@converter("ptcore.zeros", "ptcore.ones", "ptcore.full", "ptcore.empty", "ptcore.zeros_like",
           "ptcore.ones_like", "ptcore.full_like", "ptcore.empty_like", "Tensor.new_zeros",
           "Tensor.new_ones", "Tensor.new_full", "Tensor.new_empty")
def _full(b, node):
    name = node.op[1]
    if name in ("zeros", "zeros_like", "empty", "empty_like", "new_zeros", "new_empty"):
        return _filled(b, node, 0)
    if name in ("ones", "ones_like", "new_ones"):
        return _filled(b, node, 1)
    if name in ("full", "new_full"):
        first = 1 if node.op[0] == "Tensor" else 0
        value = dec(node.args[first + 1]) if len(node.args) > first + 1 else \
            _val(node, 99, "fill_value")
    else:
        value = _val(node, 1, "fill_value")
    if isinstance(value, Sym):
        raise UnsupportedOperatorError(f"{name} filled with a computed size")
    return _filled(b, node, value)


@converter("ptcore.tensor", "ptcore.as_tensor")
def _tensor(b, node):
    """``ptcore.tensor(data)`` in a forward: the data as a constant of the result's dtype."""
    data = dec(node.args[0]) if node.args else dec(node.kwargs["data"])

    def computed(v):
        return isinstance(v, Sym) or (isinstance(v, (list, tuple)) and any(map(computed, v)))
    if computed(data):
        raise UnsupportedOperatorError("tensor() of values the graph computes (sizes)")
    return _init(b, np.array(data), b.dtype_of(node.outputs))


@converter("addmm")
def _addmm(b, node):
    inp, m1, m2 = node.args[:3]
    beta = float(dec(node.kwargs.get("beta", 1)))
    alpha = float(dec(node.kwargs.get("alpha", 1)))
    return b.add("Gemm", [b.name(m1), b.name(m2), b.name(inp)], alpha=alpha, beta=beta)


@converter("softmax", "log_softmax")
def _softmax(b, node):
    dim = _val(node, 1, "dim")
    if node.kwargs.get("dtype") is not None or (len(node.args) > 2 and
                                                 dec(node.args[2]) is not None):
        raise UnsupportedOperatorError(f"{node.op[1]} with dtype=")
    op = "Softmax" if node.op[1] == "softmax" else "LogSoftmax"
    return _opsets.softmax(b, op, b.name(node.args[0]), dim, len(_shape(b, node.args[0])))


def _bind(fn, args, kwargs):
    """The arguments of a call of ``fn`` by parameter name, defaults filled in."""
    sig = inspect.signature(fn)
    b = sig.bind(*args, **kwargs)
    b.apply_defaults()
    return b.arguments


def _pair(v, n):
    """``v`` (an int or a sequence) as a list of ``n`` ints."""
    if isinstance(v, (list, tuple)):
        return [int(i) for i in v]
    return [int(v)] * n


@converter("nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
           "nn.functional.conv_transpose3d")
def _conv_transpose(b, node):
    nd = int(node.op[1][-2])
    a = _bind(getattr(F, f"conv_transpose{nd}d"), node.args, node.kwargs)
    pads = _pair(dec(a["padding"]), nd)
    ins = [b.name(a["input"]), b.name(a["weight"])]
    if a["bias"] is not None:
        ins.append(b.name(a["bias"]))
    return b.add("ConvTranspose", ins, strides=_pair(dec(a["stride"]), nd),
                 pads=pads + pads, output_padding=_pair(dec(a["output_padding"]), nd),
                 dilations=_pair(dec(a["dilation"]), nd), group=int(a["groups"]))


@converter("nn.functional.scaled_dot_product_attention")
def _sdpa(b, node):
    a = _bind(F.scaled_dot_product_attention, node.args, node.kwargs)
    if float(dec(a["dropout_p"])) != 0.0:
        raise UnsupportedOperatorError("scaled_dot_product_attention with dropout_p > 0")
    q, k, v = a["query"], a["key"], a["value"]
    qs, ks = _shape(b, q), _shape(b, k)
    dt = b.dtype_of(q)
    scale = dec(a["scale"])
    scale = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    perm = list(range(len(ks)))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    kn, vn = b.name(k), b.name(v)
    if dec(a["enable_gqa"]) and len(qs) >= 3 and qs[-3] != ks[-3]:
        # grouped-query attention: each key / value head serves q_heads // kv_heads
        # query heads (torch's repeat_interleave along the head dim)
        heads = np.repeat(np.arange(ks[-3]), qs[-3] // ks[-3])
        kn, vn = (b.add("Gather", [t, _init(b, heads, "int64")], axis=len(ks) - 3)
                  for t in (kn, vn))
    s = b.add("MatMul", [b.name(q), b.add("Transpose", [kn], perm=perm)])
    s = b.add("Mul", [s, b.const(np.array(scale), dt)])
    L, S = qs[-2], ks[-2]
    mask = a["attn_mask"]
    if dec(a["is_causal"]) and b.dynamic:
        # -inf above the diagonal of the scores' (L, S), whatever their sizes
        ls = b.add("Shape", [s], start=-2)
        if b.opset >= 14:
            bias = b.add("Trilu", [b.add("Expand", [_init(b, np.array(-np.inf), dt), ls]),
                                   _init(b, np.array(1), "int64")], upper=1)
            s = b.add("Add", [s, bias])
        else:                                   # (no Trilu): column index > row index
            rng = [b.add("Range", [_init(b, np.array(0), "int64"),
                                   b.add("Squeeze", [_slice(b, ls, [0], [i], [i + 1]),
                                                     _ints(b, [0])]),
                                   _init(b, np.array(1), "int64")]) for i in (0, 1)]
            above = b.add("Greater", [b.add("Unsqueeze", [rng[1], _ints(b, [0])]),
                                      b.add("Unsqueeze", [rng[0], _ints(b, [1])])])
            s = b.add("Where", [above, _init(b, np.array(-np.inf), dt), s])
    elif dec(a["is_causal"]):
        bias = np.where(np.triu(np.ones((L, S), bool), 1), -np.inf, 0.0)
        s = b.add("Add", [s, b.const(bias, dt)])
    elif mask is not None:
        if b.dtype_of(mask) == "bool":
            s = b.add("Where", [b.name(mask), s, b.const(np.array(-np.inf), dt)])
        else:
            s = b.add("Add", [s, b.name(mask)])
    p = _opsets.softmax(b, "Softmax", s, -1, len(qs))
    if mask is not None and not dec(a["is_causal"]):
        # torch's safe softmax: a row whose every score is masked (-inf) attends to
        # nothing (zeros), not NaN; -inf found as below the dtype's lowest number
        low = b.add("Less", [s, b.const(np.array(-np.finfo(NP_DTYPES[dt]).max), dt)])
        rank = len(qs)
        every = _reduce(b, "ReduceMin", b.add("Cast", [low], to=P.DTYPES[dt]),
                        [rank - 1], 1)
        p = b.add("Where", [b.add("Cast", [every], to=P.DTYPES["bool"]),
                            b.const(np.array(0.0), dt), p])
    return b.add("MatMul", [p, vn])


@converter("split", "chunk", "unbind", "split_with_sizes")
def _split(b, node):
    """split / chunk / unbind: one ONNX Split (its parts' sizes from the
    recorded results), the unbound dim squeezed away."""
    x = node.args[0]
    rank = len(_shape(b, x))
    outs = node.output_ids()
    unbind = node.op[1] == "unbind"
    if unbind:
        dim = int(_val(node, 1, "dim", 0)) % rank
        sizes = [1] * len(outs)
    else:
        dim = int(_val(node, 2, "dim", 0)) % rank
        sizes = [b.g.values[o].shape[dim] for o in outs]
    names = [b.fresh("split") for _ in outs]
    b.add("Split", [b.name(x), _ints(b, sizes)], names, axis=dim)
    if unbind:
        names = [b.add("Squeeze", [n, _ints(b, [dim])]) for n in names]
    return names


@converter("nn.functional.interpolate")
def _interpolate(b, node):
    a = _bind(F.interpolate, node.args, node.kwargs)
    mode = dec(a["mode"])
    align = bool(dec(a["align_corners"]))
    if dec(a["antialias"]):
        raise UnsupportedOperatorError("interpolate with antialias=True")
    if mode == "nearest":
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
    elif mode == "nearest-exact":
        # torch: source index floor((i + 0.5) * scale), which is round-half-up
        # of half_pixel's (i + 0.5) * scale - 0.5
        attrs = dict(mode="nearest", coordinate_transformation_mode="half_pixel",
                     nearest_mode="round_prefer_ceil")
    elif mode in ("linear", "bilinear", "trilinear", "bicubic"):
        attrs = dict(mode="linear", coordinate_transformation_mode=(
            "align_corners" if align else "pytorch_half_pixel"))
        if mode == "bicubic":               # torch's cubic convolution: A = -0.75
            attrs.update(mode="cubic", cubic_coeff_a=-0.75)
    else:
        raise UnsupportedOperatorError(f"interpolate with mode={mode!r}")
    x = a["input"]
    sf = dec(a["scale_factor"])
    if sf is not None and not dec(a["recompute_scale_factor"]):
        # sizes floor(in * scale), coordinates mapped by the scale: torch's rule
        nd = len(_shape(b, x)) - 2
        sf = [float(v) for v in (sf if isinstance(sf, (list, tuple)) else [sf] * nd)]
        return b.add("Resize", [b.name(x), _no_roi(b),
                                b.const(np.array([1.0, 1.0] + sf), "float32")], **attrs)
    sizes = _out_shape(b, node)[2:]
    size = dec(a["size"])
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * len(sizes)
    elif b.dynamic:
        raise UnsupportedOperatorError(
            "interpolate with recompute_scale_factor=True: its output sizes are the "
            "example's, which cannot follow dynamic_axes")
    full = b.add("Concat", [shape_of(b, x, 0, 2), vector(b, sizes)], axis=0) \
        if b.dynamic else _ints(b, _out_shape(b, node))
    return b.add("Resize", [b.name(x), _no_roi(b), _no_roi(b), full], **attrs)


def _no_roi(b):
    """Resize's roi (and scales beside sizes): optional from opset 13, an
    empty tensor before."""
    return "" if b.opset >= 13 else _init(b, np.zeros(0), "float32")

# ---- comparisons, selection and activations ---------------------------------

def _comparison(op, negate):
    """The converter of a comparison that is the ONNX operator ``op``, its
    result negated when ``negate`` (``ne`` is ``Not(Equal)``)."""
    def convert(b, node):
        x, y = node.args[:2]
        if type(x) is dict and "v" in x:
            ins = [b.name(x), b.operand(y, x)]
        else:
            ins = [b.operand(x, y), b.name(y)]
        out = b.add(op, ins)
        return b.add("Not", [out]) if negate else out
    return convert


register(_comparison("Equal", False), "eq", "Tensor.__eq__")
register(_comparison("Equal", True), "ne", "Tensor.__ne__")
register(_comparison("Less", False), "lt", "Tensor.__lt__")
register(_comparison("LessOrEqual", False), "le", "Tensor.__le__")
register(_comparison("Greater", False), "gt", "Tensor.__gt__")
register(_comparison("GreaterOrEqual", False), "ge", "Tensor.__ge__")


def _scalar_like(b, value, like):
    return _init(b, np.array(value), b.dtype_of(like))


@converter("masked_fill")
def _masked_fill(b, node):
    x, mask, value = node.args[:3]
    v = b.name(value) if type(value) is dict and "v" in value else \
        _scalar_like(b, dec(value), x)
    return b.add("Where", [b.name(mask), v, b.name(x)])


@converter("where")
def _where(b, node):
    if len(node.args) < 3:
        raise UnsupportedOperatorError("where(condition) (the indices form)")
    cond, x, y = node.args[:3]
    like = x if type(x) is dict and "v" in x else y
    if not (type(like) is dict and "v" in like):
        # two numbers: constants in the result's dtype (the default float dtype, int64 ...)
        out = node.outputs
        dt = b.dtype_of(out) if type(out) is dict and "v" in out else None
        return b.add("Where", [b.name(cond), b.as_dtype(x, dt), b.as_dtype(y, dt)])
    return b.add("Where", [b.name(cond), b.operand(x, like), b.operand(y, like)])


def _clip(b, x, lo, hi):
    ins = [b.name(x), "" if lo is None else _scalar_like(b, lo, x),
           "" if hi is None else _scalar_like(b, hi, x)]
    while ins[-1] == "":
        ins.pop()
    return b.add("Clip", ins)


@converter("clamp", "clip")
def _clamp(b, node):
    lo, hi = _val(node, 1, "min"), _val(node, 2, "max")
    if not (is_value(lo) or is_value(hi)):
        return _clip(b, node.args[0], lo, hi)
    # tensor bounds (broadcast; ONNX Clip takes scalars only): max(x, lo), then min(., hi),
    # in the result's dtype (torch's type promotion)
    dt = b.dtype_of(node.outputs)
    y = b.as_dtype(node.args[0], dt)
    if lo is not None:
        y = b.add("Max", [y, b.as_dtype(lo, dt)])
    if hi is not None:
        y = b.add("Min", [y, b.as_dtype(hi, dt)])
    return y


@converter("nn.functional.hardtanh")
def _hardtanh(b, node):
    return _clip(b, node.args[0], float(_val(node, 1, "min_val", -1.0)),
                 float(_val(node, 2, "max_val", 1.0)))


@converter("nn.functional.relu6")
def _relu6(b, node):
    return _clip(b, node.args[0], 0.0, 6.0)


@converter("nn.functional.silu")
def _silu(b, node):
    x = b.name(node.args[0])
    return b.add("Mul", [x, b.add("Sigmoid", [x])])


@converter("nn.functional.mish")
def _mish(b, node):
    x = b.name(node.args[0])
    return b.add("Mul", [x, b.add("Tanh", [b.add("Softplus", [x])])])


@converter("nn.functional.elu")
def _elu(b, node):
    return b.add("Elu", [b.name(node.args[0])], alpha=float(_val(node, 1, "alpha", 1.0)))


@converter("nn.functional.softplus")
def _softplus(b, node):
    x = node.args[0]
    beta = float(_val(node, 1, "beta", 1.0))
    if beta == 1.0:
        return b.add("Softplus", [b.name(x)])
    bx = b.add("Mul", [b.name(x), _scalar_like(b, beta, x)])
    return b.add("Div", [b.add("Softplus", [bx]), _scalar_like(b, beta, x)])


@converter("nn.functional.hardswish")
def _hardswish(b, node):
    return b.add("HardSwish", [b.name(node.args[0])])


@converter("nn.functional.hardsigmoid")
def _hardsigmoid(b, node):
    return b.add("HardSigmoid", [b.name(node.args[0])], alpha=1.0 / 6.0, beta=0.5)


@converter("rsqrt")
def _rsqrt(b, node):
    return b.add("Reciprocal", [b.add("Sqrt", [b.name(node.args[0])])])


@converter("nn.functional.normalize")
def _normalize(b, node):
    x = node.args[0]
    p = float(_val(node, 1, "p", 2.0))
    dim = int(_val(node, 2, "dim", 1))
    eps = float(_val(node, 3, "eps", 1e-12))
    if p not in (1.0, 2.0):
        raise UnsupportedOperatorError(f"normalize with p={p}")
    dim %= len(_shape(b, x))
    norm = _reduce(b, "ReduceL2" if p == 2.0 else "ReduceL1", b.name(x), [dim], 1)
    return b.add("Div", [b.name(x), b.add("Max", [norm, _scalar_like(b, eps, x)])])


@converter("Tensor.float", "Tensor.double", "Tensor.half", "Tensor.bfloat16", "Tensor.int",
           "Tensor.long", "Tensor.short", "Tensor.bool", "Tensor.byte", "Tensor.char",
           "Tensor.to", "Tensor.type_as")
def _cast(b, node):
    """float() / long() / to(dtype) / type_as(): Cast to the recorded result's dtype."""
    src = b.dtype_of(node.args[0])
    dst = b.g.values[node.output_ids()[0]].dtype
    if dst == src:
        return b.add("Identity", [b.name(node.args[0])])
    if dst not in P.DTYPES:
        raise UnsupportedOperatorError(f"a cast to {dst}")
    return b.add("Cast", [b.name(node.args[0])], to=P.DTYPES[dst])


def _reduce(b, op, x, dims, keep):
    """A Reduce* node, axes as an input (the exporter lowers it to the attribute of the
    opsets before that op took it: ReduceSum 13, the others 18)."""
    return b.add(op, [x, _ints(b, dims)], keepdims=keep)


@converter("sum", "mean")
def _reduce_all(b, node):
    """sum() / mean() of a whole tensor (the forms with dims are in _export)."""
    if node.kwargs.get("dtype") is not None or len(node.args) > 1:
        raise UnsupportedOperatorError(f"{node.op[1]} with dtype= or positional options")
    op = "ReduceSum" if node.op[1] == "sum" else "ReduceMean"
    return b.add(op, [b.name(node.args[0])], keepdims=0)


@converter("argmax", "argmin")
def _arg_reduce(b, node):
    dim = _val(node, 1, "dim")
    if dim is None:
        raise UnsupportedOperatorError(f"{node.op[1]} without dim")
    keep = bool(_val(node, 2, "keepdim", False))
    op = "ArgMax" if node.op[1] == "argmax" else "ArgMin"
    return b.add(op, [b.name(node.args[0])], axis=_opsets.axis(b, dim, len(_shape(b, node.args[0]))),
                 keepdims=int(keep))


@converter("max", "min")
def _max_min_dim(b, node):
    """max / min over a dim: (values, indices); max(x) of the whole tensor
    and max(x, y) elementwise too."""
    x = node.args[0]
    name = node.op[1]
    other = _arg(node, 1, "other")
    if type(other) is dict and "v" in other:          # max(x, y): elementwise
        return b.add("Max" if name == "max" else "Min", [b.name(x), b.name(other)])
    dim = _val(node, 1, "dim")
    red, arg = ("ReduceMax", "ArgMax") if name == "max" else ("ReduceMin", "ArgMin")
    if dim is None:
        return b.add(red, [b.name(x)], keepdims=0)
    keep = int(bool(_val(node, 2, "keepdim", False)))
    dim = _opsets.axis(b, dim, len(_shape(b, x)))
    values = _reduce(b, red, b.name(x), [dim], keep)
    return [values, b.add(arg, [b.name(x)], axis=dim, keepdims=keep)]



@converter("cumsum")
def _cumsum(b, node):
    """cumsum(x, dim[, dtype]): ONNX CumSum in the result's dtype."""
    dim = int(_val(node, 1, "dim"))
    dtype = b.g.values[node.output_ids()[0]].dtype
    return b.add("CumSum", [b.as_dtype(node.args[0], dtype), scalar(b, dim)])


@converter("nn.functional.pixel_shuffle")
def _pixel_shuffle(b, node):
    """pixel_shuffle(x, r): DepthToSpace in CRD order (opset 11); before, its
    Reshape / Transpose / Reshape (channels and spatial sizes of the trace)."""
    x = node.args[0]
    r = int(_val(node, 1, "upscale_factor"))
    shape = _shape(b, x)
    if len(shape) != 4:
        raise UnsupportedOperatorError("pixel_shuffle of a tensor that is not 4-D")
    if b.opset >= 11:
        return b.add("DepthToSpace", [b.name(x)], blocksize=r, mode="CRD")
    n, c, h, w = shape
    y = b.add("Reshape", [b.name(x), _ints(b, [0, c // (r * r), r, r, h, w])])
    y = b.add("Transpose", [y], perm=[0, 1, 4, 2, 5, 3])
    return b.add("Reshape", [y, _ints(b, [0, c // (r * r), h * r, w * r])])

