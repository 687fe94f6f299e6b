"""ONNX converters of the selection, ordering and triangle ops models use in their
forwards: ``index_select`` (Gather), ``gather`` (GatherElements), ``topk`` (TopK),
``sort``/``argsort`` (TopK over the whole dim), ``flip`` (Slice with step -1),
``triu``/``tril`` (Trilu), ``one_hot`` (OneHot), ``logsumexp``/``amax``/``amin``
(Reduce*) and ``clamp_min``/``clamp_max`` (Max/Min with a constant), in the shapes
torch's exporter writes; ``x[idx]`` with tensor, list or bool-mask indices (Gather /
GatherND after the basic indices); ``roll`` (Slice + Concat), ``repeat_interleave``
and ``Tensor.unfold`` (Gather of indices known when exporting).  Registered in the
exporter's converter table."""
import numpy as np

import ptcore.onnx._opsets as _opsets
from ptcore.onnx._more_ops import (_arg, _val, _shape, _slice, _reduce,
                                   _scalar_like, basic_index)
from ptcore.onnx._norm_ops import _bound
from ptcore.onnx._registration import converter, register
from ptcore.onnx._shapes import dec, is_value, ints as _ints, init as _init, INT64_MAX
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = []

_INT64_MIN = -(1 << 63)


def _axis(b, x, dim):
    return _opsets.axis(b, int(dim), len(_shape(b, x)))


@converter("index_select")
def _index_select(b, node):
    x, dim, index = node.args[0], _val(node, 1, "dim"), _arg(node, 2, "index")
    return b.add("Gather", [b.name(x), b.name(index)], axis=_axis(b, x, dim))


@converter("gather")
def _gather(b, node):
    x, dim, index = node.args[0], _val(node, 1, "dim"), _arg(node, 2, "index")
    if _val(node, 3, "sparse_grad", False):
        raise UnsupportedOperatorError("gather(sparse_grad=True)")
    return b.add("GatherElements", [b.name(x), b.name(index)], axis=_axis(b, x, dim))


def _topk_node(b, x, k, dim, largest, sorted_):
    return b.add("TopK", [b.name(x), _ints(b, [int(k)])], outputs=[b.fresh("topk_values"),
                                                                  b.fresh("topk_indices")],
                 axis=_axis(b, x, dim), largest=int(bool(largest)), sorted=int(bool(sorted_)))


@converter("topk")
def _topk(b, node):
    x = node.args[0]
    k = _val(node, 1, "k")
    return list(_topk_node(b, x, k, _val(node, 2, "dim", -1), _val(node, 3, "largest", True),
                           _val(node, 4, "sorted", True)))


@converter("sort", "argsort")
def _sort(b, node):
    x = node.args[0]
    dim = _val(node, 1, "dim", -1)
    descending = _val(node, 2, "descending", False)
    if isinstance(dim, bool):           # sort(x, descending) positionally
        dim, descending = -1, dim
    if _val(node, 99, "stable", False):
        raise UnsupportedOperatorError("sort(stable=True) (ONNX TopK does not keep the order "
                                       "of equal elements)")
    n = _shape(b, x)[_axis(b, x, dim)]
    values, indices = _topk_node(b, x, n, dim, descending, True)
    return indices if node.op[1] == "argsort" else [values, indices]


@converter("flip")
def _flip(b, node):
    x = node.args[0]
    dims = _val(node, 1, "dims")
    if isinstance(dims, int):
        dims = [dims]
    axes = [_axis(b, x, d) for d in dims]
    return _slice(b, b.name(x), axes, [-1] * len(axes), [_INT64_MIN] * len(axes),
                  [-1] * len(axes))


@converter("triu", "tril")
def _trilu(b, node):
    if b.opset < 14:
        raise UnsupportedOperatorError(f"{node.op[1]} before opset 14 (Trilu)")
    x = node.args[0]
    k = int(_val(node, 1, "diagonal", 0))
    return b.add("Trilu", [b.name(x), _init(b, np.array(k), "int64")],
                 upper=int(node.op[1] == "triu"))


@converter("nn.functional.one_hot")
def _one_hot(b, node):
    x = node.args[0]
    n = int(_val(node, 1, "num_classes", -1))
    if n < 0:
        raise UnsupportedOperatorError("one_hot without num_classes (it depends on the data)")
    values = _init(b, np.array([0, 1]), "int64")
    return b.add("OneHot", [b.name(x), _init(b, np.array(n), "int64"), values], axis=-1)


def _dims_reduce(op):
    def convert(b, node):
        x = node.args[0]
        dims = _val(node, 1, "dim", None)
        keep = int(bool(_val(node, 2, "keepdim", False)))
        if dims is None or dims == [] or dims == ():
            dims = list(range(len(_shape(b, x))))
        elif isinstance(dims, int):
            dims = [dims]
        return _reduce(b, op, b.name(x), [_axis(b, x, d) for d in dims], keep)
    return convert


def _clamp_one(op, name):
    def convert(b, node):
        x, v = node.args[0], _arg(node, 1, name)
        if type(v) is dict and "v" in v:
            return b.add(op, [b.name(x), b.operand(v, x)])
        return b.add(op, [b.name(x), _scalar_like(b, v if not isinstance(v, dict) else
                                                  _val(node, 1, name), x)])
    return convert


# ---- indexing with tensors (advanced indexing) ------------------------------------

@converter("Tensor.__getitem__")
def _getitem(b, node):
    """``x[idx]``: basic indexing (``_more_ops``), or with integer / bool
    tensors or lists among the indices: the basic indices first (torch
    treats an int as a select, not as an advanced index), then one integer
    index as Gather; several (broadcast) or a bool mask as GatherND, their
    dims in place when adjacent, first otherwise (torch's placement)."""
    x = node.args[0]
    idx = dec(node.args[1])
    idx = idx if isinstance(idx, tuple) else (idx,)
    if not any(is_value(i) or isinstance(i, list) for i in idx):
        return basic_index(b, x, idx)
    rank = len(_shape(b, x))
    adv = {}                                # position in idx -> (kind, ONNX index, shape)
    for k, i in enumerate(idx):
        if is_value(i) or isinstance(i, list):
            adv[k] = _index_operand(b, i)

    def consumed(k, i):
        if k in adv:
            return len(adv[k][2]) if adv[k][0] == "mask" else 1
        return 0 if i is None or i is Ellipsis else 1
    used = sum(consumed(k, i) for k, i in enumerate(idx))
    basic, positions, o = [], {}, 0
    for k, i in enumerate(idx):
        if i is Ellipsis:
            basic += [slice(None)] * (rank - used)
            o += rank - used
        elif k in adv:
            n = consumed(k, i)
            positions[k] = list(range(o, o + n))
            basic += [slice(None)] * n
            o += n
        else:
            basic.append(i)
            o += not isinstance(i, int)
    y_rank = o + max(rank - len([i for i in basic if i is not None]), 0)
    y = b.name(x) if all(i == slice(None) for i in basic) else basic_index(b, x, tuple(basic))
    if len(adv) == 1:
        (k, (kind, index, shape)), = adv.items()
        if kind == "index":
            return b.add("Gather", [y, index], axis=positions[k][0])
        nz = b.add("Transpose", [b.add("NonZero", [index])], perm=[1, 0])     # (N, mask dims)
        return _gather_nd(b, y, y_rank, positions[k], nz, 1)
    if any(kind == "mask" for kind, _, _ in adv.values()):
        raise UnsupportedOperatorError("indexing with a bool mask among other tensor indices")
    shape = list(np.broadcast_shapes(*(s for _, _, s in adv.values())))
    parts = []
    for _, index, s in adv.values():
        if list(s) != shape:
            index = b.add("Expand", [index, _ints(b, shape)])
        parts.append(b.add("Unsqueeze", [index, _ints(b, [len(shape)])]))
    dims = [positions[k][0] for k in sorted(adv)]
    return _gather_nd(b, y, y_rank, dims, b.add("Concat", parts, axis=len(shape)), len(shape))


def _index_operand(b, i):
    """``(kind, name, shape)`` of a tensor or list index: 'index' (int64) or 'mask'."""
    if isinstance(i, list):
        arr = np.array(i)
        if arr.dtype == np.bool_:
            return "mask", _init(b, arr, "bool"), arr.shape
        if arr.dtype.kind not in "iu" and arr.size:
            raise UnsupportedOperatorError(f"indexing with the list {i!r}")
        return "index", _init(b, arr.astype(np.int64), "int64"), arr.shape
    dt = b.dtype_of(i)
    shape = tuple(b.g.values[i["v"]].shape)
    if dt in ("bool", "uint8"):
        return "mask", b.as_dtype(i, "bool"), shape
    if dt not in ("int64", "int32", "int16", "int8"):
        raise UnsupportedOperatorError(f"indexing with a tensor of dtype {dt} (tensors used "
                                       "as indices must be long, int, byte or bool)")
    return "index", b.as_dtype(i, "int64"), shape


def _gather_nd(b, y, rank, dims, index, nb):
    """GatherND of ``y`` (rank ``rank``) at ``index`` (``nb`` batch dims, then one
    coordinate per dim of ``dims``); the batch dims where ``dims`` were when
    those are adjacent, first otherwise."""
    _opsets.needs(b, "GatherND", " (indexing with several tensors or a bool mask)")
    others = [d for d in range(rank) if d not in dims]
    perm = list(dims) + others
    if perm != list(range(rank)):
        y = b.add("Transpose", [y], perm=perm)
    out = b.add("GatherND", [y, index])
    first = dims[0]
    if first and dims == list(range(first, first + len(dims))):
        n = nb + len(others)
        out = b.add("Transpose", [out], perm=list(range(nb, nb + first)) + list(range(nb)) +
                    list(range(nb + first, n)))
    return out


# ---- roll, repeat_interleave, unfold: Slice / Gather with indices known now ----------

@converter("roll")
def _roll(b, node):
    import ptcore
    a = _bound(node, ptcore.roll)
    x = a["input"]
    shape = _shape(b, x)
    shifts, dims = a["shifts"], a["dims"]
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: shifts {shifts} without dims (one shift only)")
        flat = b.add("Reshape", [b.name(x), _ints(b, [-1])])
        rolled = _roll_axis(b, flat, 0, shifts[0], int(np.prod(shape, dtype=np.int64)))
        return b.add("Reshape", [rolled, b.add("Shape", [b.name(x)])])
    dims = [dims] if isinstance(dims, int) else list(dims)
    if len(dims) != len(shifts):
        raise ValueError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                         f"dims: {len(dims)}")
    y = b.name(x)
    for s, d in zip(shifts, dims):
        d = int(d) % len(shape)
        y = _roll_axis(b, y, d, int(s), shape[d])
    return y if y != b.name(x) else b.add("Identity", [y])


def _roll_axis(b, y, axis, shift, n):
    """``y`` rolled by ``shift`` along ``axis`` (size ``n``): its last ``s``
    elements, then the others (``s`` = shift mod n)."""
    s = shift % n if n else 0
    if s == 0:
        return y
    return b.add("Concat", [_slice(b, y, [axis], [-s], [INT64_MAX]),
                            _slice(b, y, [axis], [0], [-s])], axis=axis)


def _known_ints(b, v, what):
    """A tensor argument whose value the export knows (a constant), as int64."""
    arr = b.value_of(v)
    if arr is None:
        raise UnsupportedOperatorError(f"{what} computed by the graph or given as an input "
                                       "(only values known when exporting)")
    return np.asarray(arr).astype(np.int64)


@converter("repeat_interleave")
def _repeat_interleave(b, node):
    """Gather with the repeated indices (repeats known when exporting)."""
    import ptcore
    a = _bound(node, ptcore.repeat_interleave)
    x, reps, dim = a["input"], a["repeats"], a["dim"]
    if reps is None:                        # repeat_interleave(repeats): the indices
        counts = _known_ints(b, x, "repeat_interleave's repeats")
        return _init(b, np.repeat(np.arange(counts.size), counts), "int64")
    reps = _known_ints(b, reps, "repeat_interleave's repeats") if is_value(reps) else int(reps)
    shape = _shape(b, x)
    y = b.name(x)
    if dim is None:
        y, axis, n = b.add("Reshape", [y, _ints(b, [-1])]), 0, int(np.prod(shape,
                                                                           dtype=np.int64))
    else:
        axis = int(dim) % max(len(shape), 1)
        n = shape[axis] if shape else 1
    index = np.repeat(np.arange(n), np.broadcast_to(reps, (n,)) if np.size(reps) == 1 else reps)
    return b.add("Gather", [y, _init(b, index, "int64")], axis=axis)


@converter("Tensor.unfold")
def _unfold(b, node):
    """Tensor.unfold(dim, size, step): Gather of the windows' indices (count,
    size) along dim, the window dim moved last."""
    x = node.args[0]
    dim, size, step = (int(_val(node, i, n)) for i, n in ((1, "dimension"), (2, "size"),
                                                           (3, "step")))
    shape = _shape(b, x)
    if not shape:
        raise UnsupportedOperatorError("unfold of a 0-d tensor")
    dim %= len(shape)
    count = (shape[dim] - size) // step + 1
    index = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    y = b.add("Gather", [b.name(x), _init(b, index, "int64")], axis=dim)
    if dim == len(shape) - 1:
        return y
    perm = list(range(dim + 1)) + list(range(dim + 2, len(shape) + 1)) + [dim + 1]
    return b.add("Transpose", [y], perm=perm)


register(_dims_reduce("ReduceLogSumExp"), "logsumexp")
register(_dims_reduce("ReduceMax"), "amax")
register(_dims_reduce("ReduceMin"), "amin")
register(_clamp_one("Max", "min"), "clamp_min")
register(_clamp_one("Min", "max"), "clamp_max")
