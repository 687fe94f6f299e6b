"""The decompositions ``make_fx`` traces for the ops torch decomposes above its Python
dispatch key (CompositeImplicitAutograd): ``linear`` into ``t`` and ``addmm``,
``reshape`` into ``view`` (or ``clone`` and ``_unsafe_view``), ``softmax`` into
``_softmax`` ...  ptcore's dispatch modes see these ops as called; a trace without
``pre_dispatch`` records them as torch's does.

Each entry is ``fn(emit, *args, **kwargs)``; ``emit(target, args, kwargs, compute)``
runs ``compute()`` and records it as a node calling the aten op ``target``.  An entry
returns ``NotImplemented`` for a call it leaves as it is.
"""
import ptcore
from ptcore.autograd._dispatch_backward import inferred_shape as _inferred

__all__ = ["COMPOSITE_IMPLICIT"]

aten = ptcore.ops.aten
COMPOSITE_IMPLICIT = {}


def _decomposes(*funcs):
    def deco(fn):
        for f in funcs:
            COMPOSITE_IMPLICIT[f] = fn
        return fn
    return deco


def _reshape_to(emit, x, shape):
    shape = _inferred(shape, x.numel())
    try:
        return emit(aten.view.default, (x, shape), {}, lambda: x.view(shape))
    except RuntimeError:
        # (not viewable: torch's reshape copies, then views the copy)
        c = emit(aten.clone.default, (x,), {"memory_format": ptcore.contiguous_format},
                 lambda: x.clone(memory_format=ptcore.contiguous_format))
        return emit(aten._unsafe_view.default, (c, shape), {}, lambda: c.view(shape))


@_decomposes(aten.reshape.default)
def _reshape(emit, x, shape):
    return _reshape_to(emit, x, shape)


@_decomposes(aten.flatten.using_ints)
def _flatten(emit, x, start_dim=0, end_dim=-1):
    n = x.dim()
    if n == 0:
        return _reshape_to(emit, x, [1])
    s, e = start_dim % n, end_dim % n
    if s == e:
        return NotImplemented
    shape = list(x.shape)
    k = 1
    for d in shape[s:e + 1]:
        k *= d
    return _reshape_to(emit, x, shape[:s] + [k] + shape[e + 1:])


@_decomposes(aten.movedim.int)
def _movedim(emit, x, source, destination):
    n = x.dim()
    if n == 0:
        return NotImplemented
    src, dst = source % n, destination % n
    perm = [d for d in range(n) if d != src]
    perm.insert(dst, src)
    return emit(aten.permute.default, (x, perm), {}, lambda: x.permute(perm))


@_decomposes(aten.narrow.default)
def _narrow(emit, x, dim, start, length):
    if not isinstance(start, int):
        return NotImplemented
    if start < 0:
        start += x.shape[dim]
    end = start + length
    return emit(aten.slice.Tensor, (x, dim, start, end), {}, lambda: x.narrow(dim, start, length))


def _softmax_like(op, public):
    def fn(emit, x, dim, dtype=None):
        if dtype is not None:
            y = emit(aten._to_copy.default, (x,), {"dtype": dtype}, lambda: x.to(dtype))
        else:
            y = x
        return emit(op, (y, dim, False), {}, lambda: getattr(y, public)(dim))
    return fn


COMPOSITE_IMPLICIT[aten.softmax.int] = _softmax_like(aten._softmax.default, "softmax")
COMPOSITE_IMPLICIT[aten.log_softmax.int] = _softmax_like(aten._log_softmax.default,
                                                         "log_softmax")


def _t(emit, w):
    return emit(aten.t.default, (w,), {}, lambda: w.t())


@_decomposes(aten.linear.default)
def _linear(emit, x, w, b=None):
    if w.dim() != 2 or x.dim() < 2 or (b is not None and b.dim() > 1):
        return NotImplemented
    if x.dim() == 2:
        wt = _t(emit, w)
        if b is None:
            return emit(aten.mm.default, (x, wt), {}, lambda: x.mm(wt))
        return emit(aten.addmm.default, (b, x, wt), {}, lambda: ptcore.addmm(b, x, wt))
    if b is None:
        return _matmul(emit, x, _t(emit, w))
    batch = list(x.shape[:-1])
    x2 = _reshape_to(emit, x, [-1, x.shape[-1]])
    wt = _t(emit, w)
    y = emit(aten.addmm.default, (b, x2, wt), {}, lambda: ptcore.addmm(b, x2, wt))
    return emit(aten.view.default, (y, batch + [w.shape[0]]), {},
                lambda: y.view(batch + [w.shape[0]]))


@_decomposes(aten.matmul.default)
def _matmul(emit, a, b):
    if a.dim() == 2 and b.dim() == 2:
        return emit(aten.mm.default, (a, b), {}, lambda: a.mm(b))
    if a.dim() > 2 and b.dim() == 2:
        batch = list(a.shape[:-1])
        a2 = _reshape_to(emit, a, [-1, a.shape[-1]])
        y = emit(aten.mm.default, (a2, b), {}, lambda: a2.mm(b))
        shape = batch + [b.shape[1]]
        return emit(aten._unsafe_view.default, (y, shape), {}, lambda: y.view(shape))
    return NotImplemented
