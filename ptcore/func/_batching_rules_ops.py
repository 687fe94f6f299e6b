"""Named batching rules: unary ops and activations, views and shape ops,
cat/stack, indexing, matmul and einsum, linear, batch-capable linalg and
creation-like ops (the nn.functional rules are in
:mod:`ptcore.func._batching_rules_nn`).  They register into
:data:`ptcore.func._batching_rules.RULES`; see that module for the handler.
"""
import builtins
import numbers

import ptcore
from ptcore._tensor import _TensorBase
from ptcore.func._batched import BatchedTensor
from ptcore.func._per_sample import shared_linear
from ptcore.func._batching_rules import rule, _fallback, _pointwise, _dim_op, _inplace_error

__all__ = []

_BT = BatchedTensor


def _arg(c, i, name, default=None):
    """Argument ``i`` (counting ``self``/``input``) or keyword ``name``."""
    if len(c.args) > i:
        return c.args[i]
    return c.kwargs.get(name, default)


def _wd(d, nd):
    """Logical dim ``d`` of an ``nd``-dim tensor as the physical dim (batch in front)."""
    d = int(d)
    n = builtins.max(nd, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n + 1


def _shape_args(c, start=1):
    a = c.args[start:]
    if len(a) == 1 and isinstance(a[0], (tuple, list, ptcore.Size)):
        return tuple(a[0])
    if not a:
        for k in ("shape", "size", "sizes", "dims"):
            if k in c.kwargs:
                return tuple(c.kwargs[k])
    return tuple(a)


# ---------------------------------------------------------------------------
# unary ops whose result has the batch where the input had it
# ---------------------------------------------------------------------------

def _physical_others(c):
    """args/kwargs with the first argument replaced by its physical tensor; None
    if another argument is batched at this level."""
    args = list(c.args)
    for a in args[1:]:
        if c.is_b(a):
            return None
    for v in c.kwargs.values():
        if c.is_b(v):
            return None
    args[0] = c.phys(args[0])
    return args


@rule("contiguous", "clone", "detach", "float", "double", "half", "bfloat16", "int", "long",
      "bool", "byte", "char", "short", "cfloat", "cdouble", "chalf", "cpu", "cuda", "conj",
      "conj_physical", "resolve_conj", "resolve_neg", "zeros_like", "ones_like", "empty_like",
      "full_like", "rand_like", "randn_like", "randint_like", "bernoulli", "poisson",
      "relu", "relu6", "gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh",
      "hardsigmoid", "hardswish", "hardshrink", "softshrink", "tanhshrink", "softsign",
      "softplus", "logsigmoid", "sigmoid", "tanh", "threshold", "relu_", "elu_", "selu_",
      "celu_", "leaky_relu_", "hardtanh_", "threshold_", "rrelu", "rrelu_", "dropout",
      "alpha_dropout", "dropout_", "alpha_dropout_", "tril", "triu",
      "tril_", "triu_", "layer_norm", "rms_norm", "view_as_real", "view_as_complex", "real",
      "imag", "nan_to_num", "nan_to_num_", "fill_", "zero_", "new_empty_like")
def _unary(c):
    x = c.args[0] if c.args else None
    if not c.is_b(x):
        return _fallback(c)
    name = c.opdef.name
    if name in ("tril", "triu", "tril_", "triu_") and x.dim() < 2:
        return _fallback(c)
    args = _physical_others(c)
    if args is None:
        return _fallback(c)
    r = c.op(*args, **c.kwargs)
    if name.endswith("_") and not name.startswith("_") or c.kwargs.get("inplace"):
        return x
    return c.wrap(r)


@rule("to", "type_as")
def _to(c):
    x = c.args[0]
    if not c.is_b(x):
        return c.op(*[_logical_proxy(c, a) for a in c.args],
                    **{k: _logical_proxy(c, v) for k, v in c.kwargs.items()})
    args = [c.phys(x)] + [_logical_proxy(c, a) for a in c.args[1:]]
    kw = {k: _logical_proxy(c, v) for k, v in c.kwargs.items()}
    return c.wrap(c.op(*args, **kw))


def _logical_proxy(c, a):
    """A tensor argument used only for its dtype/device: its physical tensor."""
    p = c.phys(a)
    return a if p is None else p


@rule("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided")
def _new(c):
    # a new, unbatched tensor with self's dtype/device
    return c.op(*[_logical_proxy(c, a) for a in c.args],
                **{k: _logical_proxy(c, v) for k, v in c.kwargs.items()})


# ---------------------------------------------------------------------------
# views and shape ops
# ---------------------------------------------------------------------------

@rule("view", "reshape", "view_copy")
def _view(c):
    x = c.args[0]
    shape = _shape_args(c)
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        return _fallback(c)             # view(dtype)
    p = c.phys(x)
    shape = (c.size,) + tuple(int(s) for s in shape)
    if c.opdef.name == "view":
        try:
            return c.wrap(p.view(shape))
        except RuntimeError:
            pass
    return c.wrap(p.reshape(shape))


@rule("view_as", "reshape_as")
def _view_as(c):
    x, other = c.args[0], c.args[1]
    if not c.is_b(x):
        return _fallback(c)
    p = c.phys(x)
    return c.wrap(p.reshape((c.size,) + tuple(other.shape)))


@rule("flatten")
def _flatten(c):
    x = c.args[0]
    nd = x.dim()
    p = c.phys(x)
    if nd == 0:
        return c.wrap(p.unsqueeze(1))
    s = _wd(_arg(c, 1, "start_dim", 0), nd)
    e = _wd(_arg(c, 2, "end_dim", -1), nd)
    return c.wrap(p.flatten(s, e))


@rule("ravel")
def _ravel(c):
    p = c.phys(c.args[0])
    return c.wrap(p.flatten(1) if p.dim() > 1 else p.unsqueeze(1))


@rule("unflatten")
def _unflatten(c):
    x = c.args[0]
    d = _wd(_arg(c, 1, "dim"), x.dim())
    sizes = _arg(c, 2, "sizes")
    return c.wrap(c.phys(x).unflatten(d, sizes))


@rule("permute")
def _permute(c):
    x = c.args[0]
    dims = _shape_args(c)
    nd = x.dim()
    return c.wrap(c.phys(x).permute((0,) + tuple(_wd(d, nd) for d in dims)))


@rule("transpose", "swapaxes", "swapdims")
def _transpose(c):
    x = c.args[0]
    nd = x.dim()
    if nd == 0:
        return c.wrap(c.phys(x))
    d0 = _arg(c, 1, "dim0", _arg(c, 1, "axis0"))
    d1 = _arg(c, 2, "dim1", _arg(c, 2, "axis1"))
    return c.wrap(c.phys(x).transpose(_wd(d0, nd), _wd(d1, nd)))


@rule("t", "adjoint")
def _t(c):
    x = c.args[0]
    nd = x.dim()
    p = c.phys(x)
    if c.opdef.name == "adjoint":
        r = p.transpose(-2, -1)
        return c.wrap(r.conj() if r.is_complex() else r)
    if nd > 2:
        return _fallback(c)
    return c.wrap(p.transpose(1, 2) if nd == 2 else p)


@rule("squeeze")
def _squeeze(c):
    x = c.args[0]
    nd = x.dim()
    p = c.phys(x)
    d = _arg(c, 1, "dim")
    if nd == 0:
        return c.wrap(p)
    if d is None:
        dims = [i + 1 for i, s in enumerate(x.shape) if s == 1]
    elif isinstance(d, (tuple, list)):
        dims = [_wd(e, nd) for e in d]
    else:
        dims = [_wd(d, nd)]
    for i in sorted(dims, reverse=True):
        p = p.squeeze(i)
    return c.wrap(p)


@rule("unsqueeze")
def _unsqueeze(c):
    x = c.args[0]
    nd = x.dim() + 1
    d = int(_arg(c, 1, "dim"))
    if not -nd <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {d})")
    return c.wrap(c.phys(x).unsqueeze(d % nd + 1))


def _expand_to(c, x, sizes):
    p = c.unwrap(x)
    k = x.dim()
    n = len(sizes)
    if n < k:
        raise RuntimeError(f"expand: the number of sizes provided ({n}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({k})")
    p = p.reshape((c.size,) + (1,) * (n - k) + tuple(x.shape))
    full = (1,) * (n - k) + tuple(x.shape)
    target = [c.size] + [full[i] if int(s) == -1 else int(s) for i, s in enumerate(sizes)]
    return p.expand(target)


@rule("expand", "broadcast_to", "expand_copy")
def _expand(c):
    x = c.args[0]
    if not c.is_b(x):
        return _fallback(c)
    return c.wrap(_expand_to(c, x, _shape_args(c)))


@rule("expand_as")
def _expand_as(c):
    x, other = c.args[0], c.args[1]
    if not c.is_b(x):
        return c.wrap(_expand_to(c, x, tuple(other.shape)))
    return c.wrap(_expand_to(c, x, tuple(other.shape)))


@rule("select", "select_copy")
def _select(c):
    x = c.args[0]
    return c.wrap(c.phys(x).select(_wd(_arg(c, 1, "dim"), x.dim()), _arg(c, 2, "index")))


@rule("narrow", "narrow_copy")
def _narrow(c):
    x = c.args[0]
    if any(c.is_b(a) for a in c.args[1:]):
        return _fallback(c)
    return c.wrap(c.phys(x).narrow(_wd(_arg(c, 1, "dim"), x.dim()), _arg(c, 2, "start"),
                                   _arg(c, 3, "length")))


@rule("split", "chunk", "tensor_split", "split_with_sizes", "unsafe_split", "unsafe_chunk",
      "unsafe_split_with_sizes", "split_copy", "split_with_sizes_copy")
def _split(c):
    x = c.args[0]
    if not c.is_b(x) or any(c.is_b(a) for a in c.args[1:]):
        return _fallback(c)
    sec = c.args[1] if len(c.args) > 1 else next(
        (c.kwargs[k] for k in ("split_size", "split_size_or_sections", "chunks", "sections",
                               "indices", "indices_or_sections", "split_sizes", "tensor_indices_or_sections")
         if k in c.kwargs), None)
    d = _arg(c, 2, "dim", 0)
    p = c.phys(x)
    # the copy and unsafe variants split as their plain op (unsafe_chunk(a, 2) is chunk's
    # two pieces, not pieces of size 2)
    name = {"unsafe_chunk": "chunk", "unsafe_split_with_sizes": "split_with_sizes",
            "split_with_sizes_copy": "split_with_sizes"}.get(c.opdef.name, c.opdef.name)
    parts = getattr(p, name if name in ("split", "chunk", "tensor_split",
                                        "split_with_sizes") else "split")(sec, _wd(d, x.dim()))
    return c.wrap(tuple(parts))


@rule("unbind", "unbind_copy")
def _unbind(c):
    x = c.args[0]
    return c.wrap(tuple(c.phys(x).unbind(_wd(_arg(c, 1, "dim", 0), x.dim()))))


@rule("movedim", "moveaxis")
def _movedim(c):
    x = c.args[0]
    nd = x.dim()
    src, dst = _arg(c, 1, "source"), _arg(c, 2, "destination")
    if isinstance(src, (tuple, list)):
        src = tuple(_wd(s, nd) for s in src)
        dst = tuple(_wd(s, nd) for s in dst)
    else:
        src, dst = _wd(src, nd), _wd(dst, nd)
    return c.wrap(c.phys(x).movedim(src, dst))


@rule("diagonal", "diagonal_copy")
def _diagonal(c):
    x = c.args[0]
    nd = x.dim()
    lin = c.opdef.namespace == "linalg"
    off = _arg(c, 1, "offset", 0)
    d1 = _arg(c, 2, "dim1", -2 if lin else 0)
    d2 = _arg(c, 3, "dim2", -1 if lin else 1)
    return c.wrap(c.phys(x).diagonal(off, _wd(d1, nd), _wd(d2, nd)))


@rule("unfold", "unfold_copy")
def _unfold(c):
    x = c.args[0]
    return c.wrap(c.phys(x).unfold(_wd(_arg(c, 1, "dimension"), x.dim()), _arg(c, 2, "size"),
                                   _arg(c, 3, "step")))


@rule("flip")
def _flip(c):
    x = c.args[0]
    dims = _arg(c, 1, "dims")
    if isinstance(dims, numbers.Integral):
        dims = (dims,)
    if len(c.args) > 2:
        dims = c.args[1:]
    if dims is None:
        return _fallback(c)
    return c.wrap(c.phys(x).flip(tuple(_wd(d, x.dim()) for d in dims)))


@rule("fliplr")
def _fliplr(c):
    return c.wrap(c.phys(c.args[0]).flip(2))


@rule("flipud")
def _flipud(c):
    return c.wrap(c.phys(c.args[0]).flip(1))


@rule("roll")
def _roll(c):
    x = c.args[0]
    shifts, dims = _arg(c, 1, "shifts"), _arg(c, 2, "dims")
    if dims is None or any(c.is_b(a) for a in c.args[1:]):
        return _fallback(c)
    if isinstance(dims, numbers.Integral):
        dims = (dims,)
    if isinstance(shifts, numbers.Integral):
        shifts = (shifts,)
    return c.wrap(ptcore.roll(c.phys(x), tuple(shifts), tuple(_wd(d, x.dim()) for d in dims)))


@rule("repeat")
def _repeat(c):
    x = c.args[0]
    sizes = _shape_args(c)
    k, n = x.dim(), len(sizes)
    if n < k:
        return _fallback(c)
    p = c.phys(x).reshape((c.size,) + (1,) * (n - k) + tuple(x.shape))
    return c.wrap(p.repeat((1,) + tuple(sizes)))


@rule("tile")
def _tile(c):
    x = c.args[0]
    dims = tuple(_shape_args(c))
    k = x.dim()
    if len(dims) < k:
        dims = (1,) * (k - len(dims)) + dims
    n = len(dims)
    p = c.phys(x).reshape((c.size,) + (1,) * (n - k) + tuple(x.shape))
    return c.wrap(p.repeat((1,) + dims))


@rule("trace")
def _trace(c):
    x = c.args[0]
    if x.dim() != 2:
        return _fallback(c)
    return c.wrap(c.phys(x).diagonal(0, 1, 2).sum(-1))


@rule("cat", "concat", "concatenate")
def _cat(c):
    ts = _arg(c, 0, "tensors")
    d = _arg(c, 1, "dim", c.kwargs.get("axis", 0))
    live = [t for t in ts if not (t.dim() == 1 and t.shape[0] == 0)]
    if not live:
        return _fallback(c)
    nd = live[0].dim()
    return c.wrap(ptcore.cat([c.unwrap(t) for t in live], _wd(d, nd)))


@rule("stack")
def _stack(c):
    ts = _arg(c, 0, "tensors")
    d = int(_arg(c, 1, "dim", 0))
    nd = ts[0].dim() + 1
    if not -nd <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {d})")
    return c.wrap(ptcore.stack([c.unwrap(t) for t in ts], d % nd + 1))


@rule("hstack")
def _hstack(c):
    ts = ptcore.atleast_1d(*_arg(c, 0, "tensors"))
    ts = ts if isinstance(ts, (tuple, list)) else [ts]
    return ptcore.cat(ts, 0 if ts[0].dim() == 1 else 1)


@rule("vstack", "row_stack")
def _vstack(c):
    ts = [t.unsqueeze(0) if t.dim() == 1 else (t.reshape(1, 1) if t.dim() == 0 else t)
          for t in _arg(c, 0, "tensors")]
    return ptcore.cat(ts, 0)


# torch's shapes for 0-d, 1-d (n,) and 2-d (m, n) inputs
_ATLEAST = {1: (lambda s: (1,), lambda s: s, lambda s: s),
            2: (lambda s: (1, 1), lambda s: (1,) + s, lambda s: s),
            3: (lambda s: (1, 1, 1), lambda s: (1,) + s + (1,), lambda s: s + (1,))}


@rule("atleast_1d", "atleast_2d", "atleast_3d")
def _atleast(c):
    n = int(c.opdef.name[-2])
    single = len(c.args) == 1 and not isinstance(c.args[0], (tuple, list))
    ts = c.args[0] if len(c.args) == 1 and not single else c.args
    out = [t if t.dim() >= n or t.dim() > 2 else t.reshape(_ATLEAST[n][t.dim()](tuple(t.shape)))
           for t in ts]
    return out[0] if single else tuple(out)


@rule("gather")
def _gather(c):
    x, d, idx = _arg(c, 0, "input"), _arg(c, 1, "dim"), _arg(c, 2, "index")
    nd = x.dim()
    xp = c.unwrap(x)
    ip = c.unwrap(idx)
    if nd == 0:
        return c.wrap(ptcore.gather(xp.unsqueeze(1), 1, ip.reshape(c.size, 1)).squeeze(1))
    return c.wrap(ptcore.gather(xp, _wd(d, nd), ip))


@rule("index_select")
def _index_select(c):
    x, d, idx = _arg(c, 0, "input"), _arg(c, 1, "dim"), _arg(c, 2, "index")
    if c.is_b(idx) or not c.is_b(x):
        # a batched index: gather along the (broadcast) dim
        nd = x.dim()
        if nd == 0:
            return _fallback(c)
        dd = _wd(d, nd)
        xp = c.unwrap(x)
        ip = c.unwrap(idx)
        if ip.dim() == 1:
            ip = ip.unsqueeze(1)
        shape = list(xp.shape)
        shape[dd] = ip.shape[1]
        view = [c.size] + [1] * (nd)
        view[dd] = ip.shape[1]
        return c.wrap(ptcore.gather(xp, dd, ip.reshape(view).expand(shape)))
    return c.wrap(ptcore.index_select(c.phys(x), _wd(d, x.dim()), idx))


@rule("index_add", "index_copy", "index_fill")
def _index_add(c):
    name = c.opdef.name
    x, d, idx = c.args[0], _arg(c, 1, "dim"), _arg(c, 2, "index")
    if c.is_b(idx) or x.dim() == 0:
        return _fallback(c)
    src = _arg(c, 3, "source" if name != "index_fill" else "value")
    rest = list(c.args[4:])
    xp = c.unwrap(x)
    if isinstance(src, _TensorBase) and src.dim() > 0:
        src = c.unwrap(src)
    elif c.is_b(src):
        return _fallback(c)
    return c.wrap(getattr(ptcore, name)(xp, _wd(d, x.dim()), idx, src, *rest, **c.kwargs))


@rule("scatter", "scatter_add", "scatter_reduce", "scatter_", "scatter_add_", "scatter_reduce_")
def _scatter(c):
    name = c.opdef.name
    x, d, idx = c.args[0], _arg(c, 1, "dim"), _arg(c, 2, "index")
    inplace = name.endswith("_")
    if inplace and not c.is_b(x):
        _inplace_error(name)
    nd = x.dim()
    if nd == 0:
        return _fallback(c)
    rest = [c.unwrap(a) if isinstance(a, _TensorBase) and (c.is_b(a) or a.dim() > 0) else a
            for a in c.args[3:]]
    kw = {k: (c.unwrap(v) if isinstance(v, _TensorBase) and (c.is_b(v) or v.dim() > 0) else v)
          for k, v in c.kwargs.items()}
    if any(c.is_b(v) for v in rest + list(kw.values())):
        return _fallback(c)
    xp = c.phys(x) if inplace else c.unwrap(x)
    r = getattr(xp if inplace else ptcore, name)(*([] if inplace else [xp]), _wd(d, nd),
                                                 c.unwrap(idx), *rest, **kw)
    return x if inplace else c.wrap(r)


@rule("as_strided")
def _as_strided(c):
    x = c.args[0]
    size, stride = _arg(c, 1, "size"), _arg(c, 2, "stride")
    off = _arg(c, 3, "storage_offset")
    p = c.phys(x)
    if not p.is_contiguous() or type(p) is _BT:
        return _fallback(c)
    off = x.storage_offset() if off is None else off
    # each sample's row of the physical tensor is its storage
    return c.wrap(p.as_strided((c.size,) + tuple(size), (p.stride(0),) + tuple(stride),
                               p.storage_offset() + off - x.storage_offset()))


@rule("take_along_dim")
def _take_along_dim(c):
    x, idx, d = _arg(c, 0, "input"), _arg(c, 1, "indices"), _arg(c, 2, "dim")
    if d is None:
        return _fallback(c)
    r = builtins.max(x.dim(), idx.dim())

    def al(t):
        p = c.unwrap(t)
        return p.reshape((c.size,) + (1,) * (r - t.dim()) + tuple(t.shape))
    return c.wrap(ptcore.take_along_dim(al(x), al(idx), _wd(d, r)))


@rule("masked_fill", "masked_fill_", "where", "clamp", "clamp_", "clip", "clip_", "lerp",
      "lerp_", "normal", "binomial")
def _pointwise_named(c):
    name = c.opdef.name
    if name in ("normal",) and not any(c.is_b(a) for a in c.args[:2]):
        return _fallback(c)
    if name in ("masked_fill", "masked_fill_"):
        b = c.bind()
        a = None if b is None else (b.arguments if hasattr(b, "arguments") else b)
        if a is not None and c.is_b(a.get("value")):
            # a value tensor that differs per sample (0-dim in each): a where()
            x = a["self"] if "self" in a else a["input"]
            r = ptcore.where(a["mask"], a["value"].to(x.dtype), x)
            return x.copy_(r) if name == "masked_fill_" else r
    return _pointwise(c)


def _index_key(c, key):
    """The physical key (batch in front) or None when the key needs the per-sample path."""
    if not isinstance(key, tuple):
        key = (key,)
    adv = []
    for i, k in enumerate(key):
        if isinstance(k, _TensorBase) or isinstance(k, list):
            if c.is_b(k) or (isinstance(k, _TensorBase) and k.dtype is ptcore.bool):
                return None
            adv.append(i)
        elif type(k) is _BT:
            return None
    if adv and adv != list(range(adv[0], adv[0] + len(adv))):
        return None
    return (slice(None),) + key


def _batched_int_index(c, x, key):
    """``x[idx]`` for one integer index tensor ``idx`` batched at this level."""
    idx = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if not (c.is_b(idx) and not idx.dtype.is_floating_point and idx.dtype is not ptcore.bool):
        return None
    ip = c.phys(idx)
    if not c.is_b(x):
        return c.wrap(x[ip])
    xp = c.phys(x)
    if x.dim() == 0:
        return None
    ar = ptcore.arange(c.size, device=ip.device).reshape((c.size,) + (1,) * idx.dim())
    return c.wrap(xp[ar, ip])


@rule("__getitem__")
def _getitem(c):
    x, key = c.args[0], c.args[1]
    r = _batched_int_index(c, x, key)
    if r is not None:
        return r
    if not c.is_b(x):
        return _fallback(c)
    pk = _index_key(c, key)
    if pk is None:
        return _fallback(c)
    return c.wrap(c.phys(x)[pk])


@rule("__setitem__")
def _setitem(c):
    x, key, value = c.args[0], c.args[1], c.args[2]
    if not c.is_b(x):
        _inplace_error("__setitem__")
    pk = _index_key(c, key)
    if pk is None:
        return _fallback(c)
    p = c.phys(x)
    if c.is_b(value):
        dst = p[pk]
        vp = c.phys(value)
        r = dst.dim() - 1
        k = value.dim()
        if k < r:
            vp = vp.reshape((c.size,) + (1,) * (r - k) + tuple(value.shape))
        value = vp
    elif isinstance(value, _TensorBase) and value.dim() > 0:
        pass            # broadcasts from the right
    p[pk] = value
    return None


# ---------------------------------------------------------------------------
# matmul family
# ---------------------------------------------------------------------------

def _matmul(c, a, b):
    """Logical ``a @ b`` of tensors batched at ``c``'s level (or not)."""
    ka, kb = a.dim(), b.dim()
    if ka == 0 or kb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{ka}D and {kb}D")
    ab, bb = c.is_b(a), c.is_b(b)
    pa = c.phys(a) if ab else a
    pb = c.phys(b) if bb else b
    sq_a = sq_b = False
    if ka == 1:
        pa = pa.unsqueeze(-2)
        ka = 2
        sq_a = True
    if kb == 1:
        pb = pb.unsqueeze(-1)
        kb = 2
        sq_b = True
    if ab and bb:
        r = builtins.max(ka, kb)
        if ka < r:
            pa = pa.reshape((c.size,) + (1,) * (r - ka) + tuple(pa.shape[1:]))
        if kb < r:
            pb = pb.reshape((c.size,) + (1,) * (r - kb) + tuple(pb.shape[1:]))
    elif ab and kb > 2:
        pa = pa.reshape((c.size,) + (1,) * (kb - ka) + tuple(pa.shape[1:])) if kb > ka else pa
    elif bb and ka > 2:
        pb = pb.reshape((c.size,) + (1,) * (ka - kb) + tuple(pb.shape[1:])) if ka > kb else pb
    elif bb:
        # (n, k) @ (B, ..., k, m): broadcasts
        pass
    r = ptcore.matmul(pa, pb)
    if sq_b:
        r = r.squeeze(-1)
    if sq_a:
        r = r.squeeze(-1 if sq_b else -2)
    return r


def _check_nd(name, a, b, na, nb):
    if (na is not None and a.dim() != na) or (nb is not None and b.dim() != nb):
        raise RuntimeError(f"{name}: expected {na}-D and {nb}-D tensors, got {a.dim()}-D "
                           f"{list(a.shape)} and {b.dim()}-D {list(b.shape)}")


@rule("matmul", "__matmul__")
def _matmul_rule(c):
    a, b = c.args[0], _arg(c, 1, "other")
    return c.wrap(_matmul(c, a, b))


@rule("__rmatmul__")
def _rmatmul_rule(c):
    return c.wrap(_matmul(c, c.args[1], c.args[0]))


@rule("mm", "bmm", "mv", "dot", "vdot", "inner")
def _mm_rule(c):
    name = c.opdef.name
    a, b = c.args[0], c.args[1] if len(c.args) > 1 else next(iter(
        v for k, v in c.kwargs.items() if k != "out"))
    nds = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1), "vdot": (1, 1)}
    if name == "inner":
        if a.dim() == 1 and b.dim() == 1:
            return c.wrap(_matmul(c, a, b))
        return _fallback(c)
    _check_nd(name, a, b, *nds[name])
    if name == "vdot" and a.is_complex():
        a = a.conj()
    return c.wrap(_matmul(c, a, b))


@rule("outer", "ger")
def _outer(c):
    a, b = c.args[0], c.args[1]
    return a.unsqueeze(-1) * b


@rule("addmm", "addmv", "baddbmm", "addbmm", "addr")
def _addmm(c):
    name = c.opdef.name
    inp, m1, m2 = c.args[0], c.args[1], c.args[2]
    beta = c.kwargs.get("beta", 1)
    alpha = c.kwargs.get("alpha", 1)
    if name == "addr":
        prod = m1.unsqueeze(-1) * m2
    elif name == "addbmm":
        prod = ptcore.matmul(m1, m2).sum(0)
    else:
        prod = ptcore.matmul(m1, m2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod + ptcore.zeros_like(inp)
    return prod + (inp if beta == 1 else inp * beta)


@rule("einsum")
def _einsum(c):
    args = c.args
    eq = args[0]
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    if not isinstance(eq, str):
        return _fallback(c)
    eq = eq.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ops):
        return _fallback(c)
    used = set(eq)
    free = next(ch for ch in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                if ch not in used)
    if "->" not in eq:
        letters = "".join(ins)
        counts = {ch: letters.count(ch) for ch in letters if ch.isalpha()}
        rhs = ("..." if "..." in letters else "") + "".join(sorted(ch for ch, n in counts.items()
                                                                  if n == 1))
    new_ins, new_ops = [], []
    for s, t in zip(ins, ops):
        if c.is_b(t):
            new_ins.append(free + s)
            new_ops.append(c.phys(t))
        else:
            new_ins.append(s)
            new_ops.append(t)
    return c.wrap(ptcore.einsum(",".join(new_ins) + "->" + free + rhs, *new_ops))


# batch-capable matrix ops of one tensor: run on the stacked matrices
@rule("det", "logdet", "slogdet", "inverse", "matrix_exp", "cholesky", "qr", "svd", "pinverse",
      "matrix_power", "linalg_det", "linalg_inv", "linalg_inv_ex", "linalg_cholesky",
      "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_eigvals", "linalg_eigvalsh",
      "linalg_qr", "linalg_svd", "linalg_svdvals", "linalg_slogdet", "linalg_pinv",
      "matrix_rank", "linalg_lu_factor", "linalg_lu_factor_ex", "cholesky_inverse")
def _matrix_unary(c):
    x = c.args[0]
    if not c.is_b(x) or x.dim() < 2:
        return _fallback(c)
    args = _physical_others(c)
    if args is None:
        return _fallback(c)
    return c.wrap(c.op(*args, **c.kwargs))


@rule("linear")
def _linear(c):
    x, w = c.args[0], _arg(c, 1, "weight")
    bias = _arg(c, 2, "bias")
    if not c.is_b(w) and not c.is_b(bias):
        return c.wrap(c.op(c.unwrap(x), w, bias))
    y = _linear_batched_weight(c, x, w)
    if bias is not None:
        y = y + bias
    return y


def _linear_batched_weight(c, x, w):
    r = shared_linear(c, x, w)
    if r is not None:
        return r
    return ptcore.matmul(x, w.transpose(-1, -2) if w.dim() == 2 else w)

# the dim ops of nn.functional / linalg (their declarations carry the kind)
rule("glu", "normalize", ("linalg", "vector_norm"), ("linalg", "matrix_norm"),
     ("nn.functional", "softmax"), ("nn.functional", "log_softmax"),
     ("nn.functional", "softmin"))(_dim_op)

# ---------------------------------------------------------------------------
# two-tensor ops along a dim: align like pointwise ops, then shift the dim
# ---------------------------------------------------------------------------

def _aligned(c, ts):
    r = builtins.max(t.dim() for t in ts)
    out = []
    for t in ts:
        p = c.phys(t)
        if p is not None and t.dim() < r:
            p = p.reshape((c.size,) + (1,) * (r - t.dim()) + tuple(t.shape))
        out.append(t if p is None else p)
    return out, r

@rule("cross", "linalg_cross")
def _cross(c):
    x, y = c.args[0], _arg(c, 1, "other")
    d = _arg(c, 2, "dim", -1 if c.opdef.name == "linalg_cross" else None)
    (px, py), r = _aligned(c, [x, y])
    px, py = [p if p.dim() == r + 1 else p.reshape((1,) * (r + 1 - p.dim()) + tuple(p.shape))
              for p in (px, py)]
    if d is None:
        shape = ptcore.broadcast_shapes(tuple(x.shape), tuple(y.shape))
        d = next((i for i, s in enumerate(shape) if s == 3), None)
        if d is None:
            return _fallback(c)
    return c.wrap(ptcore.linalg.cross(px, py, dim=_wd(d, r)))


@rule("dist")
def _dist(c):
    x, y = c.args[0], _arg(c, 1, "other")
    p = _arg(c, 2, "p", 2)
    return ptcore.linalg.vector_norm(x - y, p)


@rule("diag")
def _diag(c):
    x = c.args[0]
    off = _arg(c, 1, "diagonal", 0)
    if not c.is_b(x) or x.dim() not in (1, 2) or c.kwargs.get("out") is not None:
        return _fallback(c)
    p = c.phys(x)
    return c.wrap(ptcore.diag_embed(p, off) if x.dim() == 1 else p.diagonal(off, 1, 2))


@rule("diag_embed")
def _diag_embed(c):
    x = c.args[0]
    if not c.is_b(x):
        return _fallback(c)
    nd = x.dim() + 1
    d1, d2 = int(_arg(c, 2, "dim1", -2)), int(_arg(c, 3, "dim2", -1))
    if not (-nd <= d1 < nd and -nd <= d2 < nd):
        return _fallback(c)
    return c.wrap(ptcore.diag_embed(c.phys(x), _arg(c, 1, "offset", 0), d1 % nd + 1,
                                    d2 % nd + 1))


@rule("rot90")
def _rot90(c):
    x = c.args[0]
    dims = _arg(c, 2, "dims", (0, 1))
    if not c.is_b(x) or x.dim() < 2 or len(dims) != 2:
        return _fallback(c)
    return c.wrap(ptcore.rot90(c.phys(x), _arg(c, 1, "k", 1),
                               tuple(_wd(d, x.dim()) for d in dims)))
