"""The ops of nested tensors: the ``__torch_function__`` table (one entry
per op name), element-wise ops, shape ops, reductions and ``repr``.

Every op has a per-component form (unbind, run the regular op on each
component, pack the results), which is what the semantics are defined by.
Where the values line up with the components dim for dim (the jagged
layout: the values are the components concatenated along the ragged dim),
ops that act independently along other dims run once on the values instead.
"""
import operator as _operator

from ptcore._tensor import _TensorBase
from ptcore.nested._tensor import NestedTensor, jagged, _pt, _RaggedSize, register_op_table
from ptcore.nested._creation import to_padded_tensor, _pack

__all__ = ["torch_function", "nested_repr", "register", "rebuild", "unsupported"]

_TABLE = {}


def register(*names):
    """Decorator: the function handles the ops (functions and Tensor methods) named ``names``."""
    def deco(fn):
        for n in names:
            _TABLE[n] = fn
        return fn
    return deco


def unsupported(name, nt):
    layout = "jagged" if nt is not None and nt.layout is jagged else "strided"
    return NotImplementedError(f"{name}(): not supported for nested tensors ({layout} layout)")


def torch_function(func, args, kwargs):
    """Run ``func`` (a ptcore function or Tensor method) on arguments some of
    which are nested tensors."""
    name = getattr(func, "__name__", "")
    handler = _TABLE.get(name)
    if handler is None:
        raise unsupported(name, _first_nested(args, kwargs))
    return handler(func, args, kwargs)


def _first_nested(args, kwargs=None):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, NestedTensor):
            return a
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, NestedTensor):
                    return b
    return None


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


# ---------------------------------------------------------------------------
# packing per-component results
# ---------------------------------------------------------------------------

def rebuild(comps, like, ragged=None):
    """A nested tensor of ``like``'s layout holding ``comps``.  ``ragged``: the
    components' ragged dim for the jagged layout when it cannot be read from
    the sizes (all equal); by default that of ``like`` when the dims match."""
    pt = _pt()
    comps = list(comps)
    if like.layout is not jagged:
        return _pack(comps, pt.strided, dtype=like.dtype, device=like.device)
    nd = comps[0].dim() if comps else 0
    differ = [d for d in range(nd) if len({int(c.shape[d]) for c in comps}) > 1]
    if len(differ) > 1:
        raise RuntimeError("the result of this op has more than one ragged dim, which the "
                           "jagged layout cannot represent (shapes: "
                           + ", ".join(str(list(c.shape)) for c in comps) + ")")
    if ragged is None:
        ragged = like._ragged_idx - 1 if nd == like.dim() - 1 else 0
    r = differ[0] if differ else ragged
    if nd == 0:
        raise RuntimeError("the result of this op has 0-dim components, which a nested tensor "
                           "of jagged layout cannot hold")
    if any(tuple(c.shape[:r]) + tuple(c.shape[r + 1:]) !=
           tuple(comps[0].shape[:r]) + tuple(comps[0].shape[r + 1:]) for c in comps):
        raise RuntimeError("the components of the result differ in more than one dim")
    lens = [int(c.shape[r]) for c in comps]
    values = pt.cat(comps, r)
    if like._lengths is None and lens == like._seq_lengths():
        offsets = like._offsets        # the same ragged size (nested int) as the input
    else:
        offs = [0]
        for n in lens:
            offs.append(offs[-1] + n)
        offsets = pt.tensor(offs, dtype=pt.int64, device=values.device)
    return NestedTensor(jagged, values, offsets=offsets, ragged_idx=r + 1,
                        min_seqlen=min(lens), max_seqlen=max(lens))


def _per_component(fn, nt, ragged=None):
    return rebuild([fn(c) for c in nt.unbind()], nt, ragged)


def _comp_dim(nt, dim, what):
    """The components' dim for the nested dim ``dim`` (raises for the batch dim)."""
    d = nt._wrap_dim(dim)
    if d == 0:
        raise RuntimeError(f"{what}(): not supported along the batch dim 0 of a nested tensor")
    return d - 1


# ---------------------------------------------------------------------------
# element-wise ops
# ---------------------------------------------------------------------------

_UNARY = (
    "abs absolute neg negative positive relu relu6 gelu silu tanh sigmoid sin cos tan asin acos "
    "atan arcsin arccos arctan sinh cosh asinh acosh atanh arcsinh arccosh arctanh exp exp2 expm1 "
    "log log2 log10 log1p sqrt rsqrt square sgn sign signbit floor ceil round trunc fix frac "
    "clamp clip clamp_min clamp_max erf erfc erfinv reciprocal nan_to_num logical_not "
    "bitwise_not isnan isinf isfinite isposinf isneginf hardtanh leaky_relu elu selu celu "
    "softplus softsign mish hardswish hardsigmoid hardshrink softshrink tanhshrink logsigmoid "
    "threshold dropout alpha_dropout to type type_as float double half "
    "bfloat16 int long bool short char byte cpu cuda detach clone zeros_like ones_like "
    "empty_like full_like rand_like randn_like deg2rad rad2deg conj real imag sinc logit i0 "
    "digamma lgamma"
).split()
_INPLACE_UNARY = {n + "_" for n in _UNARY if not n.endswith("_")} | {"fill_", "zero_",
                                                                     "normal_", "uniform_",
                                                                     "bernoulli_"}


def _map_values(func, args, kwargs):
    nt = args[0]
    if not isinstance(nt, NestedTensor):
        raise unsupported(getattr(func, "__name__", "op"), _first_nested(args, kwargs))
    out = func(nt._values, *args[1:], **kwargs)
    if out is nt._values:
        return nt
    if not isinstance(out, _TensorBase):     # (``nt.type()``: the type's name)
        return out
    return nt._with_values(out)


@register(*_UNARY)
def _unary(func, args, kwargs):
    if any(isinstance(a, NestedTensor) for a in args[1:]):
        return _elementwise(func, args, kwargs)
    if kwargs.get("inplace"):
        func(args[0]._values, *args[1:], **kwargs)
        return args[0]
    return _map_values(func, args, kwargs)


def _inplace_unary(func, args, kwargs):
    nt = args[0]
    func(nt._values, *args[1:], **kwargs)
    return nt


for _n in _INPLACE_UNARY:
    _TABLE[_n] = _inplace_unary

_BINARY = (
    "add sub subtract rsub mul multiply div divide true_divide floor_divide remainder fmod pow "
    "float_power maximum minimum fmax fmin atan2 arctan2 hypot eq ne lt le gt ge greater less "
    "greater_equal less_equal not_equal logical_and logical_or logical_xor bitwise_and "
    "bitwise_or bitwise_xor xlogy copysign where lerp addcmul addcdiv masked_fill nextafter "
    "heaviside"
).split()


def _elementwise(func, args, kwargs):
    """An element-wise op of nested tensors (of one structure), regular tensors
    (broadcast against each component; a tensor with the nested tensor's number
    of dims has one entry per component in dim 0) and numbers."""
    name = getattr(func, "__name__", "op")
    inplace = name.endswith("_")
    nested = [a for a in args if isinstance(a, NestedTensor)] + \
        [v for v in kwargs.values() if isinstance(v, NestedTensor)]
    lead = nested[0]
    shapes = lead._component_shapes()
    for other in nested[1:]:
        if other.layout is not lead.layout or other._batch() != lead._batch():
            raise RuntimeError(f"{name}(): nested tensors of different layouts or batch sizes")
        if other._component_shapes() != shapes:
            raise RuntimeError(f"{name}(): the nested tensors have different structures "
                               f"(component shapes {[list(s) for s in shapes]} and "
                               f"{[list(s) for s in other._component_shapes()]})")
    dense = [a for a in list(args) + list(kwargs.values())
             if isinstance(a, _TensorBase) and a.dim() > 0 and a.numel() > 1]
    # one pass over the values when they line up
    if all(lead._same_packing(o) for o in nested[1:]) and \
            all(_dense_fits_values(lead, d) for d in dense):
        def sub(a):
            return a._values if isinstance(a, NestedTensor) else a
        out = func(*[sub(a) for a in args], **{k: sub(v) for k, v in kwargs.items()})
        if inplace:
            return args[0]
        return lead._with_values(out)
    b = lead._batch()
    for d in dense:
        if d.dim() == lead.dim() and int(d.shape[0]) not in (1, b):
            raise RuntimeError(f"{name}(): a regular tensor of shape {list(d.shape)} does not "
                               f"broadcast over the nested tensor's batch of {b}")
        if d.dim() > lead.dim():
            raise RuntimeError(f"{name}(): a regular tensor of shape {list(d.shape)} has more "
                               f"dims than the nested tensor ({lead.dim()})")
    unbound = {id(n): n.unbind() for n in nested}

    def pick(a, i):
        if isinstance(a, NestedTensor):
            return unbound[id(a)][i]
        if isinstance(a, _TensorBase) and a.dim() == lead.dim() and a.dim() > 0:
            return a[i if int(a.shape[0]) > 1 else 0]
        return a
    res = [func(*[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kwargs.items()})
           for i in range(b)]
    if inplace:             # (the components are views of the values: they changed)
        return args[0]
    return rebuild(res, lead)


def _dense_fits_values(nt, d):
    """True if the regular tensor ``d`` broadcasts against the values as it
    does against every component."""
    if nt.layout is not jagged or d.dim() >= nt.dim():
        return False
    r = nt._ragged_idx - 1             # the ragged dim, right-aligned against d
    k = r - (nt.dim() - 1 - d.dim())
    return k < 0 or int(d.shape[k]) == 1


register(*_BINARY)(_elementwise)
for _n in ("add_", "sub_", "mul_", "div_", "pow_", "clamp_", "masked_fill_", "lerp_",
           "addcmul_", "addcdiv_", "copy_", "maximum_", "minimum_"):
    _TABLE[_n] = _elementwise
del _n


# ---------------------------------------------------------------------------
# metadata and conversions
# ---------------------------------------------------------------------------

@register("unbind")
def _unbind(func, args, kwargs):
    return args[0].unbind(_arg(args, kwargs, 1, "dim", 0))


@register("numel", "dim", "is_floating_point", "is_complex", "is_contiguous", "values",
          "requires_grad_", "retain_grad", "backward", "size", "element_size")
def _method(func, args, kwargs):
    return getattr(NestedTensor, func.__name__)(*args, **kwargs)


@register("is_nonzero", "item", "tolist", "numpy", "__index__", "__float__", "__int__")
def _no_single_value(func, args, kwargs):
    raise RuntimeError(f"{func.__name__}(): a nested tensor has no single value or array form; "
                       "use unbind() or to_padded_tensor()")


@register("to_padded_tensor")
def _to_padded(func, args, kwargs):
    return to_padded_tensor(*args, **kwargs)


@register("contiguous")
def _contiguous(func, args, kwargs):
    nt = args[0]
    if nt.is_contiguous():
        return nt
    return rebuild(nt.unbind(), nt, ragged=nt._ragged_idx - 1 if nt.layout is jagged else None)


# ---------------------------------------------------------------------------
# shape ops
# ---------------------------------------------------------------------------

@register("transpose", "swapaxes", "swapdims")
def _transpose(func, args, kwargs):
    nt = args[0]
    d0 = nt._wrap_dim(_arg(args, kwargs, 1, "dim0"))
    d1 = nt._wrap_dim(_arg(args, kwargs, 2, "dim1"))
    return _permuted(nt, _swap(list(range(nt.dim())), d0, d1), "transpose")


def _swap(p, a, b):
    p[a], p[b] = p[b], p[a]
    return p


@register("permute")
def _permute(func, args, kwargs):
    nt = args[0]
    dims = args[1:] if len(args) > 1 else kwargs.get("dims")
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    dims = [nt._wrap_dim(d) for d in dims]
    if sorted(dims) != list(range(nt.dim())):
        raise RuntimeError(f"permute(): dims {list(dims)} are not a permutation of the "
                           f"{nt.dim()} dims")
    return _permuted(nt, dims, "permute")


def _permuted(nt, dims, what):
    if dims[0] != 0:
        raise RuntimeError(f"{what}(): the batch dim 0 of a nested tensor cannot be moved")
    cdims = [d - 1 for d in dims[1:]]
    if nt.layout is jagged:
        return _shifted(nt, nt._values.permute(cdims), dims.index(nt._ragged_idx))
    out = nt._with_values(nt._values)
    out._perm = tuple(nt._perm[c] for c in cdims)
    return out


def _jagged_values_shape(nt, shape, what):
    """The values' shape for a reshape of the jagged ``nt`` to ``shape`` (batch
    dim and ragged dim kept in place, ``-1`` or the ragged size there)."""
    r = nt._ragged_idx
    if len(shape) <= r or shape[0] not in (-1, nt._batch()):
        raise RuntimeError(f"{what}(): a nested tensor's batch dim and ragged dim must stay in "
                           f"place, got shape {list(shape)}")
    rs = shape[r]
    if not (isinstance(rs, _RaggedSize) and rs == _RaggedSize.of(nt._offsets)) and rs != -1:
        raise RuntimeError(f"{what}(): the ragged dim {r} must be given as -1 (or the ragged "
                           f"size), got {rs}")
    vs = list(nt._values.shape)
    if [int(s) for s in shape[1:r]] != vs[:r - 1]:
        raise RuntimeError(f"{what}(): the dims before the ragged dim must stay as they are")
    rest = [int(s) for s in shape[r + 1:]]
    if -1 in rest:
        raise RuntimeError(f"{what}(): only the ragged dim may be -1")
    return vs[:r] + rest


@register("reshape", "view")
def _reshape(func, args, kwargs):
    nt = args[0]
    shape = args[1:] if len(args) > 1 else kwargs.get("shape", kwargs.get("size"))
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    shape = list(shape)
    name = func.__name__
    if nt.layout is jagged:
        new = _jagged_values_shape(nt, shape, name)
        v = nt._values
        return _shifted(nt, v.view(new) if name == "view" else v.reshape(new), nt._ragged_idx)
    if not shape or shape[0] not in (-1, nt._batch()):
        raise RuntimeError(f"{name}(): the batch dim 0 of a nested tensor cannot change, got "
                           f"shape {shape}")
    spec = [int(s) for s in shape[1:]]
    return _per_component(lambda c: getattr(c, name)(spec), nt)


def _shifted(nt, values, ragged_idx):
    """A jagged tensor of ``nt``'s components' lengths over other values, whose
    ragged dim is ``ragged_idx``."""
    return NestedTensor(jagged, values, offsets=nt._offsets, lengths=nt._lengths,
                        ragged_idx=ragged_idx, min_seqlen=nt._min_seqlen,
                        max_seqlen=nt._max_seqlen)


@register("unflatten")
def _unflatten(func, args, kwargs):
    nt = args[0]
    cd = _comp_dim(nt, _arg(args, kwargs, 1, "dim"), "unflatten")
    sizes = list(_arg(args, kwargs, 2, "sizes"))
    if nt.layout is jagged:
        r = nt._ragged_idx - 1
        if cd == r:
            raise RuntimeError("unflatten(): not supported along the ragged dim of a jagged "
                               "nested tensor")
        return _shifted(nt, nt._values.unflatten(cd, sizes),
                        nt._ragged_idx + (len(sizes) - 1 if cd < r else 0))
    return _per_component(lambda c: c.unflatten(cd, sizes), nt)


@register("flatten")
def _flatten(func, args, kwargs):
    nt = args[0]
    s = nt._wrap_dim(_arg(args, kwargs, 1, "start_dim", 0))
    e = nt._wrap_dim(_arg(args, kwargs, 2, "end_dim", -1))
    if s == 0:
        raise RuntimeError("flatten(): the batch dim 0 of a nested tensor cannot be flattened")
    if e <= s:
        return nt
    if nt.layout is jagged:
        r = nt._ragged_idx
        if s <= r <= e:
            raise RuntimeError("flatten(): not supported across the ragged dim of a jagged "
                               "nested tensor")
        return _shifted(nt, nt._values.flatten(s - 1, e - 1), r - (e - s) if e < r else r)
    return _per_component(lambda c: c.flatten(s - 1, e - 1), nt)


@register("unsqueeze")
def _unsqueeze(func, args, kwargs):
    nt = args[0]
    d = _operator.index(_arg(args, kwargs, 1, "dim"))
    d = d + nt.dim() + 1 if d < 0 else d
    if not 1 <= d <= nt.dim():
        raise RuntimeError(f"unsqueeze(): dim {d} is the batch dim or out of range")
    if nt.layout is jagged:
        r = nt._ragged_idx
        return _shifted(nt, nt._values.unsqueeze(d - 1), r + 1 if d <= r else r)
    return _per_component(lambda c: c.unsqueeze(d - 1), nt)


@register("squeeze")
def _squeeze(func, args, kwargs):
    nt = args[0]
    dim = _arg(args, kwargs, 1, "dim")
    if dim is None:
        raise RuntimeError("squeeze(): a nested tensor needs the dim to squeeze")
    cd = _comp_dim(nt, dim, "squeeze")
    if nt.layout is jagged:
        r = nt._ragged_idx
        if cd == r - 1 or int(nt._values.shape[cd]) != 1:
            return nt
        return _shifted(nt, nt._values.squeeze(cd), r - 1 if cd < r - 1 else r)
    return _per_component(lambda c: c.squeeze(cd), nt)


@register("narrow")
def _narrow(func, args, kwargs):
    nt = args[0]
    d = nt._wrap_dim(_arg(args, kwargs, 1, "dim"))
    start = _operator.index(_arg(args, kwargs, 2, "start"))
    length = _operator.index(_arg(args, kwargs, 3, "length"))
    if d == 0 and nt.layout is not jagged:     # a range of the components
        b = nt._batch()
        if not (0 <= start <= b and 0 <= length and start + length <= b):
            raise IndexError(f"narrow(): start {start} + length {length} exceeds the batch of {b}")
        return _pack(list(nt.unbind()[start:start + length]), nt.layout, dtype=nt.dtype,
                     device=nt.device)
    cd = _comp_dim(nt, d, "narrow")
    return _per_component(lambda c: c.narrow(cd, start, length), nt)


def _split_dim(nt, dim, what):
    cd = _comp_dim(nt, dim, what)
    if nt.layout is jagged and cd == nt._ragged_idx - 1:
        raise RuntimeError(f"{what}(): not supported along the ragged dim of a jagged nested "
                           "tensor")
    if nt.layout is not jagged and nt._wrap_dim(dim) != nt.dim() - 1:
        raise RuntimeError(f"{what}(): nested tensors of strided layout support it only along "
                           "the last dim")
    return cd


@register("chunk", "split", "tensor_split", "split_with_sizes")
def _chunk(func, args, kwargs):
    nt = args[0]
    name = func.__name__
    arg = _arg(args, kwargs, 1, "chunks" if name == "chunk" else "split_size_or_sections")
    if arg is None:
        arg = _arg(args, kwargs, 1, "split_size", kwargs.get("sections",
                                                              kwargs.get("indices")))
    cd = _split_dim(nt, _arg(args, kwargs, 2, "dim", 0), name)
    method = "split" if name == "split_with_sizes" else name
    if nt.layout is jagged:
        return tuple(_shifted(nt, p, nt._ragged_idx)
                     for p in getattr(nt._values, method)(arg, cd))
    per = [getattr(c, method)(arg, cd) for c in nt.unbind()]
    return tuple(rebuild([p[k] for p in per], nt) for k in range(len(per[0])))


@register("cat", "concat", "concatenate")
def _cat(func, args, kwargs):
    ts = list(_arg(args, kwargs, 0, "tensors"))
    dim = _arg(args, kwargs, 1, "dim", 0)
    if not all(isinstance(t, NestedTensor) for t in ts):
        raise RuntimeError("cat(): expected all nested tensors (or none)")
    lead = ts[0]
    cd = _comp_dim(lead, dim, "cat")
    if lead.layout is jagged and cd == lead._ragged_idx - 1:
        raise RuntimeError("cat(): not supported along the ragged dim of a jagged nested tensor")
    pt = _pt()
    if lead.layout is jagged and all(lead._offsets is t._offsets and lead._lengths is
                                     t._lengths and lead._ragged_idx == t._ragged_idx
                                     for t in ts):
        return lead._with_values(pt.cat([t._values for t in ts], cd))
    unb = [t.unbind() for t in ts]
    if any(len(u) != len(unb[0]) for u in unb):
        raise RuntimeError("cat(): nested tensors of different batch sizes")
    return rebuild([pt.cat([u[i] for u in unb], cd) for i in range(len(unb[0]))], lead)


def _getitem(nt, index):
    if not isinstance(index, tuple):
        index = (index,)
    first, rest = index[0], index[1:]
    if isinstance(first, _TensorBase) and first.dim() == 0:
        first = int(first)
    if isinstance(first, int) or hasattr(type(first), "__index__") and not \
            isinstance(first, (slice, _TensorBase)):
        comp = nt.unbind()[_operator.index(first)]
        return comp[rest] if rest else comp
    if first is Ellipsis:
        return _per_component(lambda c: c[index], nt)
    if first == slice(None):
        if not rest:
            return nt
        return _per_component(lambda c: c[rest], nt)
    raise RuntimeError("indexing a nested tensor: the batch dim takes an int or ':' only")


NestedTensor.__getitem__ = _getitem


@register("__getitem__")
def _getitem_op(func, args, kwargs):
    return _getitem(args[0], args[1])


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

@register("sum", "mean", "amax", "amin", "prod", "logsumexp", "nansum", "nanmean", "all", "any",
          "std", "var")
def _reduce(func, args, kwargs):
    pt = _pt()
    nt = args[0]
    name = func.__name__
    kwargs = dict(kwargs)
    dim = _arg(args, kwargs, 1, "dim")
    kwargs.pop("dim", None)
    keepdim = kwargs.pop("keepdim", False)
    if len(args) > 2:
        keepdim = args[2]
    rest = args[3:]
    if nt.layout is not jagged:
        if name != "sum":
            raise NotImplementedError(f"{name}(): not supported for nested tensors of strided "
                                      "layout (use the jagged layout)")
        last = nt.dim() - 1
        dims = [nt._wrap_dim(d) for d in (dim if isinstance(dim, (list, tuple)) else [dim])] \
            if dim is not None else None
        if dims != [last]:
            raise RuntimeError(f"sum(): nested tensors of strided layout can be reduced across "
                               f"the last dim {last} only, got dim={dim}")
        if not keepdim:
            raise RuntimeError("sum(): nested tensors of strided layout need keepdim=True")
        return _per_component(lambda c: func(c, last - 1, True, *rest, **kwargs), nt)
    comps = nt.unbind()
    r = nt._ragged_idx
    if dim is None:
        flat = pt.cat([c.reshape(-1) for c in comps])
        return func(flat, *rest, **kwargs)
    dims = sorted({nt._wrap_dim(d) for d in (dim if isinstance(dim, (list, tuple)) else [dim])})
    if 0 in dims:
        if r not in dims:
            raise RuntimeError(f"{name}(): reducing along the batch dim but not the ragged dim is "
                               "not supported for nested tensors")
        packed = pt.cat(comps, r - 1)
        out = func(packed, [d - 1 for d in dims if d != 0], keepdim, *rest, **kwargs)
        return out.unsqueeze(0) if keepdim else out
    cdims = [d - 1 for d in dims]
    if r in dims:
        return pt.stack([func(c, cdims, keepdim, *rest, **kwargs) for c in comps])
    out = func(nt._values, cdims, keepdim, *rest, **kwargs)
    shift = 0 if keepdim else sum(1 for d in dims if d < r)
    return _shifted(nt, out, r - shift)


@register("max", "min")
def _max_min(func, args, kwargs):
    """``max()``/``min()`` of all the entries (jagged layout), or ``(values,
    indices)`` along a dim (nested, or regular along the ragged dim)."""
    nt = args[0]
    dim = _arg(args, kwargs, 1, "dim")
    if isinstance(dim, NestedTensor):
        return _elementwise(func, args, kwargs)
    if nt.layout is not jagged:
        raise NotImplementedError(f"{func.__name__}(): not supported for nested tensors of "
                                  "strided layout (use the jagged layout)")
    if dim is None:
        return func(_pt().cat([c.reshape(-1) for c in nt.unbind()]))
    keepdim = _arg(args, kwargs, 2, "keepdim", False)
    d = _comp_dim(nt, dim, func.__name__)
    r = nt._ragged_idx
    if d == r - 1:
        per = [func(c, d, keepdim) for c in nt.unbind()]
        pt = _pt()
        return type(per[0])((pt.stack([p[0] for p in per]), pt.stack([p[1] for p in per])))
    res = func(nt._values, d, keepdim)
    r2 = r - 1 if not keepdim and d < r - 1 else r
    return type(res)((_shifted(nt, res[0], r2), _shifted(nt, res[1], r2)))


# ---------------------------------------------------------------------------
# repr
# ---------------------------------------------------------------------------

def nested_repr(nt):
    if nt.layout is jagged:       # (torch's form)
        size = "(" + ", ".join(str(s) for s in nt.shape) + ")"
        grad = f", grad_fn={nt.grad_fn!r}" if nt.grad_fn is not None else \
            ", requires_grad=True" if nt.requires_grad else ""
        return (f"NestedTensor(size={size}, offsets={nt._offsets!r}{grad}, "
                f"contiguous={nt.is_contiguous()})")
    with _pt().no_grad():
        parts = [repr(c.detach()) for c in nt.unbind()]
    if nt.requires_grad:        # (as torch: each component says so, the grad_fn follows)
        parts = [p[:-1] + ", requires_grad=True)" for p in parts]
    body = ",\n".join("\n".join("  " + line for line in p.splitlines()) for p in parts)
    tail = f", grad_fn=<{type(nt.grad_fn).__name__}>" if nt.grad_fn is not None else \
        ", requires_grad=True" if nt.requires_grad else ""
    return "nested_tensor([\n" + body + ("\n" if body else "") + "]" + tail + ")"


register_op_table(torch_function, nested_repr)
