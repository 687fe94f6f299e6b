"""Neural-network ops of nested tensors: ``matmul``/``bmm``, ``linear``,
``layer_norm``/``rms_norm``, ``softmax``/``log_softmax``, ``embedding`` and
``scaled_dot_product_attention`` (per component: attention never mixes the
components of a batch)."""
import operator as _operator

from ptcore._tensor import _TensorBase
from ptcore.nested._tensor import NestedTensor, jagged, _pt
from ptcore.nested._ops import register, rebuild, _arg, _comp_dim, _per_component, _shifted

__all__ = []


def _ragged_not_in(nt, cdims):
    """True for a jagged tensor whose ragged dim is none of the components' ``cdims``."""
    return nt.layout is jagged and (nt._ragged_idx - 1) not in cdims


@register("matmul", "bmm", "mm")
def _matmul(func, args, kwargs):
    a, b = args[0], args[1]
    name = func.__name__
    if name == "bmm":
        for t in (a, b):
            if t.dim() != 3:
                raise RuntimeError(f"bmm(): expected 3-D operands, got {t.dim()}-D")
    if isinstance(a, NestedTensor) and isinstance(b, NestedTensor):
        if a._batch() != b._batch():
            raise RuntimeError(f"{name}(): nested tensors of different batch sizes "
                               f"{a._batch()} and {b._batch()}")
        mm = _pt().matmul
        return rebuild([mm(x, y) for x, y in zip(a.unbind(), b.unbind())], a)
    if isinstance(a, NestedTensor):
        if not isinstance(b, _TensorBase):
            raise TypeError(f"{name}(): expected a tensor, got {type(b).__name__}")
        if name == "bmm":
            raise RuntimeError("bmm(): expected both operands nested")
        nd = a.dim() - 1
        if b.dim() <= 2 and _ragged_not_in(a, {nd - 1}):
            return _shifted(a, _pt().matmul(a._values, b), a._ragged_idx)
        return _per_component(lambda c: _pt().matmul(c, b), a)
    if name == "bmm":
        raise RuntimeError("bmm(): expected both operands nested")
    return _per_component(lambda c: _pt().matmul(a, c), b,
                          ragged=b._ragged_idx - 1 if b.layout is jagged else None)


@register("linear")
def _linear(func, args, kwargs):
    x = args[0]
    weight = _arg(args, kwargs, 1, "weight")
    bias = _arg(args, kwargs, 2, "bias")
    if not isinstance(x, NestedTensor) or isinstance(weight, NestedTensor) or \
            isinstance(bias, NestedTensor):
        raise RuntimeError("linear(): only the input may be a nested tensor")
    last = x.dim() - 2
    if _ragged_not_in(x, {last}):
        return _shifted(x, func(x._values, weight, bias), x._ragged_idx)
    if x.layout is jagged:
        raise RuntimeError("linear(): the last dim of the input may not be its ragged dim")
    return _per_component(lambda c: func(c, weight, bias), x)


@register("layer_norm", "rms_norm")
def _norm(func, args, kwargs):
    x = args[0]
    shape = _arg(args, kwargs, 1, "normalized_shape")
    shape = [shape] if isinstance(shape, int) else list(shape)
    nd = x.dim() - 1
    cdims = set(range(nd - len(shape), nd))
    if x.layout is jagged:
        if not _ragged_not_in(x, cdims) or nd - len(shape) < 0:
            raise RuntimeError(f"{func.__name__}(): normalizing over the ragged dim of a jagged "
                               "nested tensor is not supported")
        return x._with_values(func(x._values, *args[1:], **kwargs))
    if nd - len(shape) < 0:
        raise RuntimeError(f"{func.__name__}(): normalized_shape has more dims than the "
                           "components")
    return _per_component(lambda c: func(c, *args[1:], **kwargs), x)


@register("softmax", "log_softmax", "softmin", "cumsum", "cumprod", "logcumsumexp")
def _along_dim(func, args, kwargs):
    x = args[0]
    kwargs = dict(kwargs)
    if len(args) > 1:
        dim, rest = args[1], args[2:]
    else:
        dim, rest = kwargs.pop("dim", None), ()
    if dim is None:
        raise RuntimeError(f"{func.__name__}(): a nested tensor needs an explicit dim")
    d = x._wrap_dim(dim)
    if d == 0:
        raise RuntimeError(f"{func.__name__}(): not supported along the batch dim 0 of a nested "
                           "tensor")
    cd = d - 1
    if x.layout is jagged and cd == x._ragged_idx - 1 and func.__name__ != "softmax":
        raise RuntimeError(f"{func.__name__}(): not supported along the ragged dim of a jagged "
                           "nested tensor")
    if _ragged_not_in(x, {cd}):
        return x._with_values(func(x._values, cd, *rest, **kwargs))
    return _per_component(lambda c: func(c, cd, *rest, **kwargs), x)


@register("embedding")
def _embedding(func, args, kwargs):
    idx = args[0]
    if not isinstance(idx, NestedTensor) or any(isinstance(a, NestedTensor) for a in args[1:]):
        raise RuntimeError("embedding(): only the indices may be a nested tensor")
    if idx.layout is jagged:
        return _shifted(idx, func(idx._values, *args[1:], **kwargs), idx._ragged_idx)
    return _per_component(lambda c: func(c, *args[1:], **kwargs), idx)


@register("scaled_dot_product_attention")
def _sdpa(func, args, kwargs):
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
             "enable_gqa")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    q, k, v = bound.pop("query"), bound.pop("key"), bound.pop("value")
    if not all(isinstance(t, NestedTensor) for t in (q, k, v)):
        raise RuntimeError("scaled_dot_product_attention(): query, key and value must all be "
                           "nested tensors (or none)")
    if bound.get("attn_mask") is not None:
        raise RuntimeError("scaled_dot_product_attention(): attn_mask is not supported with "
                           "nested tensors: the ragged lengths already mask each component")
    if not (q._batch() == k._batch() == v._batch()):
        raise RuntimeError("scaled_dot_product_attention(): query, key and value have different "
                           "batch sizes")
    if q.dim() != 4:
        raise RuntimeError(f"scaled_dot_product_attention(): expected nested tensors of shape "
                           f"(B, H, L, E) ({q.dim()}-D given)")
    out = [func(a, b, c, **bound) for a, b, c in zip(q.unbind(), k.unbind(), v.unbind())]
    return rebuild(out, q, ragged=1)


@register("select")
def _select(func, args, kwargs):
    nt = args[0]
    d = nt._wrap_dim(_arg(args, kwargs, 1, "dim"))
    i = _operator.index(_arg(args, kwargs, 2, "index"))
    if d == 0:
        return nt.unbind()[i]
    cd = _comp_dim(nt, d, "select")
    if nt.layout is jagged and cd == nt._ragged_idx - 1:
        raise RuntimeError("select(): not supported along the ragged dim of a jagged nested "
                           "tensor")
    return _per_component(lambda c: c.select(cd, i), nt,
                          ragged=nt._ragged_idx - 1 - (cd < nt._ragged_idx - 1)
                          if nt.layout is jagged else None)
