"""Batching rules: how each op runs once over a whole vmap batch.

The handler installed into the batching layer (:mod:`ptcore._dispatch.batching`)
finds the highest vmap level among an op's arguments, takes the physical
tensors of that level (batch dim 0) and applies the op's rule, chosen from the
operator table: by name where an op needs its own rule (views, matmul,
conv, losses ...), else by family (pointwise ops of any arity align and
broadcast their batch dims; reductions, scans and sorts shift their ``dim``;
batch-capable linalg ops run on the stacked matrices).  Ops with no rule run
once per slice (a warning, once per op, says so) and the results are stacked.
Rules call ops on physical tensors through the layer again, so lower levels
(nested vmaps) are batched by the same rules.
"""
import builtins
import inspect
import numbers
import warnings

import ptcore
from ptcore._ops.reduction import _Unset
from ptcore._ops.sorting import _sort_args
from ptcore._dispatch import batching as _B
from ptcore._dtype_utils import _result_type
from ptcore._tensor import _TensorBase
from ptcore.func._batched import BatchedTensor, wrap, physical as _physical, _loc

__all__ = ["handle", "RULES", "fallback_ops_seen", "set_op_rule"]

_BT = BatchedTensor


_warned = set()
fallback_ops_seen = _warned      # names of ops that ran per slice (tests read it)


class Call:
    """One op call at one vmap level, as the rules see it."""
    __slots__ = ("level", "frame", "size", "entry", "opdef", "args", "kwargs", "nxt", "layer")

    def __init__(self, layer, frame, entry, opdef, args, kwargs, nxt):
        self.layer = layer
        self.frame = frame
        self.level = frame.level
        self.size = frame.size
        self.entry = entry
        self.opdef = opdef
        self.args = args
        self.kwargs = kwargs
        self.nxt = nxt

    # the op itself on new (physical) arguments, lower levels still batched
    def op(self, *args, **kwargs):
        return self.layer.handle(self.entry, self.opdef, args, kwargs, self.nxt)

    def phys(self, x):
        if type(x) is _BT and x._bt_level == self.level:
            return x._bt_phys if x._bt_shared is None else _physical(x)
        return None

    def is_b(self, x):
        return type(x) is _BT and x._bt_level == self.level

    def unwrap(self, x):
        """Physical tensor of ``x`` (expanded over the batch if not batched)."""
        p = self.phys(x)
        if p is not None:
            return p
        return x.unsqueeze(0).expand((self.size,) + tuple(x.shape))

    def wrap(self, r):
        if isinstance(r, _TensorBase):
            return wrap(r, self.level)
        if isinstance(r, tuple):
            items = [self.wrap(x) for x in r]
            if hasattr(r, "_fields") or type(r) is not tuple:
                try:
                    return type(r)(items)
                except TypeError:
                    return type(r)(*items)
            return tuple(items)
        if isinstance(r, list):
            return [self.wrap(x) for x in r]
        return r

    def bind(self):
        return _bind(self.opdef, self.args, self.kwargs)


_SIGS = {}


class _Bound:
    """A cheap ``inspect.BoundArguments``: ``arguments`` (every parameter,
    defaults applied, in order) and ``args``/``kwargs`` to call with."""
    __slots__ = ("arguments", "_npos", "_names")

    def __init__(self, arguments, npos, names):
        self.arguments = arguments
        self._npos = npos
        self._names = names

    def apply_defaults(self):
        pass

    @property
    def args(self):
        a = self.arguments
        return tuple(a[n] for n in self._names[:self._npos])

    @property
    def kwargs(self):
        a = self.arguments
        pos = set(self._names[:self._npos])
        return {k: v for k, v in a.items() if k not in pos}


def _sig_info(opdef):
    s = _SIGS.get(opdef, 0)
    if s == 0:
        s = None
        try:
            sig = inspect.signature(opdef.raw)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            names, defaults, npos_max, simple = [], {}, 0, True
            for p in sig.parameters.values():
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
                    simple = False
                    break
                names.append(p.name)
                if p.kind is p.POSITIONAL_OR_KEYWORD:
                    npos_max += 1
                defaults[p.name] = p.default
            s = (names, defaults, npos_max) if simple else sig
        _SIGS[opdef] = s
    return s


def _bind(opdef, args, kwargs):
    info = _sig_info(opdef)
    if info is None:
        return None
    if not isinstance(info, tuple):
        try:
            b = info.bind(*args, **kwargs)
        except TypeError:
            return None
        b.apply_defaults()
        return b
    names, defaults, npos_max = info
    if len(args) > npos_max:
        return None
    a = {}
    for n, v in zip(names, args):
        a[n] = v
    for k, v in kwargs.items():
        if k in a or k not in defaults:
            return None
        a[k] = v
    for n in names:
        if n not in a:
            d = defaults[n]
            if d is inspect.Parameter.empty:
                return None
            a[n] = d
    return _Bound({n: a[n] for n in names}, len(args), names)


# ---------------------------------------------------------------------------
# the handler
# ---------------------------------------------------------------------------

def _max_level(args, kwargs):
    lv = None
    for a in args:
        t = type(a)
        if t is _BT:
            if lv is None or a._bt_level > lv:
                lv = a._bt_level
        elif t is list or t is tuple:
            for b in a:
                if type(b) is _BT and (lv is None or b._bt_level > lv):
                    lv = b._bt_level
    if kwargs:
        for a in kwargs.values():
            t = type(a)
            if t is _BT:
                if lv is None or a._bt_level > lv:
                    lv = a._bt_level
            elif t is list or t is tuple:
                for b in a:
                    if type(b) is _BT and (lv is None or b._bt_level > lv):
                        lv = b._bt_level
    return lv


_DATA_DEPENDENT = {
    "item": "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations.",
    "__bool__": "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                "control flow. We don't support that yet, please shout over at "
                "https://github.com/pytorch/functorch/issues/257 .",
}
for _n in ("tolist", "numpy", "__int__", "__float__", "__index__"):
    _DATA_DEPENDENT[_n] = _DATA_DEPENDENT["item"].replace(".item()", f".{_n}()")


def _is_random_call(c):
    od = c.opdef
    if "random" not in od.tags:
        return False
    name = od.name
    if "dropout" in name or name == "rrelu":
        b = c.bind()
        if b is not None:
            a = b.arguments
            if a.get("training", name != "rrelu" or False) is False:
                return False
            if name != "rrelu" and a.get("p", 0.5) == 0:
                return False
    return True


def handle(layer, entry, opdef, args, kwargs, nxt):
    level = _max_level(args, kwargs)
    frames = _B.frames()
    if level is None:
        if "random" in opdef.tags and not _loc.raw_random and frames:
            return _random_unbatched(layer, frames[-1], entry, opdef, args, kwargs, nxt)
        return nxt(args, kwargs)
    frame = _B.frame_of(level)
    if frame is None:
        raise RuntimeError(f"vmap: {opdef.name}: a batched tensor of a vmap that has already "
                           f"returned was used (it escaped the function under vmap, e.g. "
                           f"through a global or a closure); return it from the function instead")
    c = Call(layer, frame, entry, opdef, args, kwargs, nxt)
    msg = _DATA_DEPENDENT.get(opdef.name)
    if msg is not None:
        raise RuntimeError(msg)
    if not _loc.raw_random and _is_random_call(c):
        mode = frame.randomness
        if mode == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags on "
                               "vmap or perform the randomness operation out of vmap")
        if mode == "same":
            return _fallback(c, same_random=True)
        _loc.raw_random += 1
        try:
            return _rule_of(opdef)(c)
        finally:
            _loc.raw_random -= 1
    return _rule_of(opdef)(c)


def _random_unbatched(layer, frame, entry, opdef, args, kwargs, nxt):
    mode = frame.randomness
    c = Call(layer, frame, entry, opdef, args, kwargs, nxt)
    if not _is_random_call(c):
        return nxt(args, kwargs)
    if mode == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. "
                           "Please either use the 'same' or 'different' randomness flags on "
                           "vmap or perform the randomness operation out of vmap")
    if mode == "same":
        return nxt(args, kwargs)
    if "inplace" in opdef.tags or opdef.name.endswith("_"):
        raise RuntimeError(f"vmap: {opdef.name}: in-place random op on a tensor that is not "
                           f"batched, with randomness='different': the per-sample results "
                           f"cannot be written into it. Use an out-of-place op instead")
    # 'different': one draw per sample
    _loc.raw_random += 1
    try:
        # (no samples: one draw gives the sample's shape, none is kept)
        outs = [layer.handle(entry, opdef, args, kwargs, nxt)
                for _ in range(builtins.max(frame.size, 1))]
    finally:
        _loc.raw_random -= 1
    return c.wrap(_first(_stack_results(outs, opdef.name), frame.size))


# ---------------------------------------------------------------------------
# the fallback: once per slice, stacked
# ---------------------------------------------------------------------------

def _warn_fallback(name):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for {name}. ptcore runs it once per sample and stacks the "
                      f"results.", UserWarning, stacklevel=4)


def _slice_arg(c, a, i):
    p = c.phys(a)
    if p is not None:
        if not c.size:          # no samples: a zero sample stands in for the shapes
            return p.new_zeros(tuple(p.shape[1:]))
        return p.select(0, i)
    t = type(a)
    if t is list or t is tuple:
        return t(_slice_arg(c, b, i) for b in a)
    return a


def _stack_results(outs, name):
    first = outs[0]
    if isinstance(first, _TensorBase):
        shapes = {tuple(o.shape) for o in outs}
        if len(shapes) > 1:
            raise RuntimeError(f"vmap: {name} returned tensors of different shapes for "
                               f"different samples ({sorted(shapes)}); vmap needs the same "
                               f"shape for every sample")
        return ptcore.stack(outs)
    if isinstance(first, (tuple, list)):
        cols = [_stack_results([o[j] for o in outs], name) for j in range(len(first))]
        if isinstance(first, list):
            return cols
        if type(first) is tuple:
            return tuple(cols)
        try:
            return type(first)(cols)
        except TypeError:
            return type(first)(*cols)
    if first is None or all(o == first for o in outs):
        return _Plain(first)
    raise RuntimeError(f"vmap: {name} returned a Python value ({type(first).__name__}) that "
                       f"depends on the data; vmap cannot batch data-dependent Python values")


def _first(r, n):
    """The stacked result ``r`` cut to its first ``n`` samples (``n`` is 0
    when a vmap over no samples ran the op once on a stand-in sample)."""
    return _map_stacked(r, lambda x: x.narrow(0, 0, n)
                        if isinstance(x, _TensorBase) and x.shape[0] != n else x)


class _Plain:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


def _map_stacked(r, f):
    """``r`` (a stacked result: lists and tuples of tensors and _Plain) with
    ``f`` applied to each leaf."""
    if isinstance(r, list):
        return [_map_stacked(x, f) for x in r]
    if isinstance(r, tuple):
        items = [_map_stacked(x, f) for x in r]
        if type(r) is tuple:
            return tuple(items)
        try:
            return type(r)(items)
        except TypeError:
            return type(r)(*items)
    return f(r)


def _wrap_stacked(c, r):
    return _map_stacked(r, lambda x: x.v if isinstance(x, _Plain)
                        else wrap(x, c.level) if isinstance(x, _TensorBase) else x)


def _fallback(c, same_random=False):
    name = c.opdef.name
    inplace = "inplace" in c.opdef.tags or (name.endswith("_") and not name.startswith("_")) \
        or name == "__setitem__"
    if inplace:
        self_ = c.args[0] if c.args else None
        if not c.is_b(self_):
            _inplace_error(name)
    if not same_random:
        _warn_fallback(name)
    gen = ptcore.default_generator
    start = gen.get_state() if same_random else None
    outs = []
    _loc.raw_random += 1
    try:
        for i in range(builtins.max(c.size, 1)):      # (no samples: one stand-in)
            if same_random:
                gen.set_state(start)
            a = tuple(_slice_arg(c, x, i) for x in c.args)
            k = {key: _slice_arg(c, v, i) for key, v in c.kwargs.items()}
            outs.append(c.op(*a, **k))
    finally:
        _loc.raw_random -= 1
    if inplace:
        return c.args[0]
    return _wrap_stacked(c, _first(_stack_results(outs, name), c.size))


def _inplace_error(name):
    raise RuntimeError(f"vmap: {name}(self, *extra_args) is not possible because there exists a "
                       f"Tensor `other` in extra_args that has more elements than `self`. This "
                       f"happened due to `other` being vmapped over but `self` not being vmapped "
                       f"over in a vmap. Please try to use out-of-place operators instead of "
                       f"{name}. If said operator is being called inside the PyTorch framework, "
                       f"please file a bug report instead.")


# ---------------------------------------------------------------------------
# rule selection
# ---------------------------------------------------------------------------

RULES = {}           # op name (any namespace) or (namespace, name) -> rule(c)
_CACHE = {}


def rule(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


def set_op_rule(opdef, fn):
    """Install ``fn(c)`` as the batching rule of the op ``opdef`` (None: remove
    it); custom ops register theirs with this (``register_vmap``)."""
    key = (opdef.namespace, opdef.name)
    if fn is None:
        RULES.pop(key, None)
    else:
        RULES[key] = fn
    for od in [od for od in _CACHE if (od.namespace, od.name) == key]:
        del _CACHE[od]


def _rule_of(opdef):
    r = _CACHE.get(opdef)
    if r is None:
        r = RULES.get((opdef.namespace, opdef.name)) or RULES.get(opdef.name)
        if r is None:
            kind = _batch_kind(opdef)
            r = _pointwise if kind == "pointwise" else \
                _fallback if kind is None or kind == "loop" else _dim_op
        _CACHE[opdef] = r
    return r


def _batch_kind(opdef):
    """The op's declared batching kind (``batch`` in its declaration)."""
    decl = opdef.decl
    return decl.batch if decl is not None else None


# ---------------------------------------------------------------------------
# pointwise ops of any arity
# ---------------------------------------------------------------------------

def _tensor_args(c):
    ts = [a for a in c.args if isinstance(a, _TensorBase)]
    ts += [a for a in c.kwargs.values() if isinstance(a, _TensorBase)]
    return ts


def _pointwise(c):
    args, kwargs = c.args, c.kwargs
    name = c.opdef.name
    if name == "where" and len(args) + len(kwargs) == 1:
        return _fallback(c)
    inplace = "inplace" in c.opdef.tags or name.startswith("__i")
    ts = _tensor_args(c)
    if inplace:
        self_ = args[0]
        if not c.is_b(self_):
            _inplace_error(name)
        r = self_.dim()
    else:
        r = builtins.max(t.dim() for t in ts)
    # a batched 0-dim operand must not promote like a dimensioned one
    cast = None
    if r > 0 and any(c.is_b(t) and t.dim() == 0 for t in ts) and \
            len({t.dtype for t in ts}) > 1:
        scal = [a for a in args if isinstance(a, numbers.Number)]
        cast = _result_type(*ts, *scal)

    def conv(a):
        p = c.phys(a)
        if p is None:
            if type(a) is list or type(a) is tuple:
                return type(a)(conv(b) for b in a)
            return a
        k = a.dim()
        if cast is not None and k == 0 and p.dtype is not cast and p.dtype is not ptcore.bool:
            p = p.to(cast)
        if k < r:
            p = p.reshape((c.size,) + (1,) * (r - k) + tuple(a.shape))
        return p
    pa = tuple(conv(a) for a in args)
    pk = {k: conv(v) for k, v in kwargs.items()}
    if inplace:
        c.op(*pa, **pk)
        return args[0]
    return c.wrap(c.op(*pa, **pk))


# ---------------------------------------------------------------------------
# reductions, scans, sorts: shift ``dim``
# ---------------------------------------------------------------------------

# the declared batching kinds (``batch``) of the ops that shift their ``dim``
_FULL_REDUCE = frozenset({"reduce", "reduce_dims"})     # dim=None reduces over every dim
_MULTI_DIM = frozenset({"reduce_dims", "dims"})          # dim may list several dims
_SAME_SHAPE = frozenset({"scan"})                        # the result keeps the input's shape


def _legacy_softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def _dim_op(c):
    name = c.opdef.name
    kind = _batch_kind(c.opdef)
    b = c.bind()
    if b is None:
        return _fallback(c)
    b.apply_defaults()
    a = b.arguments
    names = list(a)
    for k in ("dim", "keepdim"):
        if isinstance(a.get(k), _Unset):         # "not given" (prod/max/min/median/nanmedian)
            a[k] = None if k == "dim" else False
    if name in ("sort", "argsort") and "args" in a:
        # torch's two overloads ((dim, descending) positional, or all keyword with stable)
        # read into keywords
        a["dim"], a["descending"], a["stable"] = _sort_args(name, a["args"], a["dim"], a["descending"],
                                                            a["stable"])
        a["args"] = ()
    x = a[names[0]]
    if not c.is_b(x):
        return _fallback(c)
    if name in ("max", "min") and (isinstance(a.get("dim"), _TensorBase) or
                                   a.get("other") is not None):
        other = a.get("other") if a.get("other") is not None else a.get("dim")
        return ptcore.maximum(x, other) if name == "max" else ptcore.minimum(x, other)
    for k, v in a.items():
        if k not in ("dim", names[0]) and c.is_b(v):
            return _fallback(c)
    if name in ("quantile", "nanquantile") and isinstance(a.get("q"), _TensorBase) and \
            a["q"].dim() > 0:
        return _fallback(c)
    p = c.phys(x)
    nd = x.dim()
    dkey = "dim" if "dim" in a else ("axis" if "axis" in a else None)
    if name == "msort":
        return c.wrap(ptcore.sort(p, dim=1 if nd > 0 else 0).values) if nd > 0 else x.clone()
    d = a.get(dkey) if dkey else None
    if isinstance(d, (list, tuple)) and len(d) == 0 and kind in _FULL_REDUCE:
        d = None            # dim=() / [] reduces over every dim, as torch
    if d is None and name in ("softmax", "log_softmax", "softmin") and dkey:
        d = _legacy_softmax_dim(nd)
    zero_d = nd == 0
    if zero_d:
        p = p.unsqueeze(1)
        nd1 = 1
    else:
        nd1 = nd
    keep = bool(a.get("keepdim", False))
    if d is None and dkey is not None:
        if kind not in _FULL_REDUCE:
            return _fallback(c)
        # over all dims: flatten the sample
        p = p.flatten(1)
        a[dkey] = 1
        if "keepdim" in a:
            a["keepdim"] = False
        res = _call_bound(c, b, names[0], p)
        if isinstance(res, tuple) and name in ("max", "min", "median", "nanmedian"):
            res = res[0]
        if keep and nd > 0:
            res = _map_tensors(res, lambda t: t.reshape((c.size,) + (1,) * nd + tuple(t.shape[2:])))
        return c.wrap(res)
    if isinstance(d, (list, tuple)):
        if kind not in _MULTI_DIM and len(d) != 1:
            return _fallback(c)
        nd_ = [_shift(int(e), nd1) for e in d]
        a[dkey] = type(d)(nd_) if kind in _MULTI_DIM else nd_[0]
    elif isinstance(d, (int, numbers.Integral)):
        a[dkey] = _shift(int(d), nd1)
    else:
        return _fallback(c)
    res = _call_bound(c, b, names[0], p)
    if zero_d:
        if kind in _SAME_SHAPE or keep or name in ("topk",):
            res = _map_tensors(res, lambda t: t.squeeze(1) if t.dim() > 1 else t)
    return c.wrap(res)


def _shift(d, nd):
    if not -nd <= d < builtins.max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-builtins.max(nd, 1)}, {builtins.max(nd, 1) - 1}], but got {d})")
    return (d % nd if nd else 0) + 1


def _map_tensors(r, fn):
    if isinstance(r, _TensorBase):
        return fn(r)
    if isinstance(r, tuple):
        items = [_map_tensors(x, fn) for x in r]
        if type(r) is tuple:
            return tuple(items)
        try:
            return type(r)(items)
        except TypeError:
            return type(r)(*items)
    return r


def _call_bound(c, b, first, p):
    b.arguments[first] = p
    return c.op(*b.args, **b.kwargs)

