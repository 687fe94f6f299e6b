"""The forward-mode AD layer of the dispatch point (order 8).

A *dual level* is a numbered scope (``ptcore.autograd.forward_ad.dual_level``
and the ``ptcore.func`` transforms open them); a tensor holds at most one
tangent per level, stored on the tensor itself (``t._fw``: level -> tangent)
and forgotten when its level exits.  While some level holds a dual tensor
this layer is on: an op call with an argument that has a tangent at a visible
level is computed as

* the primal result, with that level hidden (the op runs on the primals; the
  lower levels are handled the same way, recursively), then
* the tangent of the result at that level, by the op's JVP rule (or the
  generic double-vjp fallback), computed with ptcore ops while the level is
  hidden, so that tangents of the lower levels flow through the rule itself
  (``jacfwd(jacfwd(f))``) and so does reverse mode (``jacfwd(jacrev(f))``).

The math lives in the autograd layer (``ptcore.autograd._jvp_formulas``),
which installs its driver in :data:`driver`; this module holds the mechanism:
levels, tangent storage, the visible-level ceiling, and the layer itself.
With no dual tensor alive the layer is off and costs nothing.
"""
import threading
import weakref

from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch import batching as _batching
from ptcore._tensor import _TensorBase
from ptcore._tensor import Size as _Size
from ptcore import _tensor as _C

__all__ = ["Level", "push_level", "pop_level", "levels", "current_level", "get_tangent",
           "set_tangent", "visible_level", "hidden", "driver"]

# the live levels, innermost last
_LEVELS = []
_lock = threading.RLock()
# driver[0](entry, opdef, args, kwargs, nxt, level, lower) and
# function_driver[0](cls, args, kwargs, level): set by ptcore.autograd._jvp_formulas
driver = [None]
function_driver = [None]
# stored at a level where a tensor must not take its view base's tangent
_NO = object()


class _Tls(threading.local):
    def __init__(self):
        # only levels below the ceiling are visible to the op being run
        self.ceiling = 1 << 30


_tls = _Tls()


class Level:
    """One dual level: its index and the tensors holding a tangent at it
    (weakly, keyed by id; a dead tensor's entry removes itself)."""
    __slots__ = ("idx", "holders", "__weakref__")

    def __init__(self, idx):
        self.idx = idx
        self.holders = {}

    def hold(self, t):
        k = id(t)
        if k not in self.holders:
            h = self.holders
            self.holders[k] = weakref.ref(t, lambda r, k=k, h=h: h.pop(k, None))

    def __repr__(self):
        return f"<dual level {self.idx}>"


def levels():
    return tuple(_LEVELS)


def current_level():
    """Index of the innermost live level, or -1."""
    return _LEVELS[-1].idx if _LEVELS else -1


def push_level():
    with _lock:
        lv = Level(len(_LEVELS))
        _LEVELS.append(lv)
        return lv


def enable_layer():
    """Switch the forward-AD layer on for the levels now open (a public
    ``dual_level`` does at entry: a method bound before the level's first
    ``make_dual`` -- ``x.index_put_(i, make_dual(a, t))``, one expression --
    must dispatch too); ``pop_level`` of the last level switches it off."""
    with _lock:
        if _LEVELS and not _LAYER.enabled:
            _LAYER.set_enabled(True)


def pop_level(idx):
    """Exit level ``idx`` (must be the innermost): its tangents vanish."""
    with _lock:
        if not _LEVELS or _LEVELS[-1].idx != idx:
            raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                               "was created. This is not supported.")
        lv = _LEVELS.pop()
        for r in list(lv.holders.values()):
            t = r()
            if t is not None:
                d = t.__dict__.get("_fw")
                if d is not None:
                    d.pop(idx, None)
                    if not d:
                        del t.__dict__["_fw"]
        lv.holders.clear()
        if not _LEVELS:
            _LAYER.set_enabled(False)


def _level_obj(idx):
    if 0 <= idx < len(_LEVELS) and _LEVELS[idx].idx == idx:
        return _LEVELS[idx]
    return None


def is_live(idx):
    return _level_obj(idx) is not None


def _own(t, idx):
    try:
        d = t.__dict__.get("_fw")
    except AttributeError:
        return None
    return None if d is None else d.get(idx)


def get_tangent(t, idx):
    """``t``'s tangent at level ``idx`` (a view of a dual base gets the
    same view of the base's tangent), or None."""
    tg = _own(t, idx)
    if tg is not None:
        return None if tg is _NO else tg
    b = t._base
    if b is None:
        return None
    bt = _own(b, idx)
    if bt is None or bt is _NO or not (t.dtype.is_floating_point or t.dtype.is_complex):
        return None
    if _batching.is_batched(bt) and not _batching.is_batched(b):
        # a vmap over jvp's batched tangent of an unbatched base: each sample's
        # tangent laid out contiguously, as the base must be for its views to map
        if not b.is_contiguous():
            raise NotImplementedError(
                f"forward AD under vmap: a view of a non-contiguous tensor (shape "
                f"{tuple(b.shape)}, strides {tuple(b.stride())}) with a batched tangent")
        if not bt.is_contiguous():
            bt = bt.contiguous()
            _store(b, idx, bt)
    elif tuple(bt.stride()) != tuple(b.stride()) or tuple(bt.shape) != tuple(b.shape):
        # lay the base's tangent out as the base (views then map onto it)
        nb = _empty_like_layout(b, bt.dtype)
        nb.copy_(bt)
        _store(b, idx, nb)
        bt = nb
    tg = bt.as_strided(tuple(t.shape), tuple(t.stride()),
                       bt.storage_offset() + t.storage_offset() - b.storage_offset())
    _store(t, idx, tg)
    return tg


def replace_base_tangent(b, idx, tg):
    """Give the view base ``b`` the new tangent ``tg`` at level ``idx``: the
    views of ``b`` that took a view of its old tangent take one of ``tg``
    when next asked (:func:`get_tangent`)."""
    old = _own(b, idx)
    _store(b, idx, tg)
    lv = _level_obj(idx)
    if old is None or old is _NO or lv is None:
        return
    st = old.untyped_storage()
    for r in list(lv.holders.values()):
        t = r()
        if t is None or t is b or t._base is not b:
            continue
        vt = _own(t, idx)
        if vt is not None and vt is not _NO and vt.untyped_storage() is st:
            t.__dict__["_fw"].pop(idx, None)


def block(t, idx):
    """``t`` has no tangent at level ``idx``, whatever its view base has."""
    if _level_obj(idx) is not None:
        _store(t, idx, _NO)


def overlapping(t):
    """Whether ``t`` has expanded (stride-0) dims: not writable in place."""
    return any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape))


def empty_like_layout(p, dtype):
    return _empty_like_layout(p, dtype)


def _empty_like_layout(p, dtype):
    return _C.empty_strided(tuple(p.shape), tuple(p.stride()), dtype=dtype, device=p.device)


def _store(t, idx, tg):
    lv = _level_obj(idx)
    if lv is None:
        raise RuntimeError(f"forward AD level {idx} does not exist")
    d = t.__dict__.get("_fw")
    if d is None:
        d = t.__dict__["_fw"] = {}
    if idx not in d:
        lv.hold(t)
    d[idx] = tg


def set_tangent(t, idx, tg):
    """Give ``t`` the tangent ``tg`` at level ``idx`` (None removes it) and
    switch the layer on."""
    if tg is None:
        d = t.__dict__.get("_fw")
        if d is not None:
            d.pop(idx, None)
        return
    _store(t, idx, tg)
    al = t.__dict__.get("_fw_aliases")
    if al:
        for r in al:
            a = r()
            if a is not None:
                _store(a, idx, tg)
    if not _LAYER.enabled:
        _LAYER.set_enabled(True)


def note_alias(t, a):
    """``a`` is a detached alias of ``t`` that autograd saved for backward
    (an op's output): it shares ``t``'s tangents, now and when ``t`` gets
    them after the op's formula ran (forward-over-reverse)."""
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        return
    for lv in _LEVELS:
        tg = get_tangent(t, lv.idx)
        if tg is not None:
            _store(a, lv.idx, tg)
    al = t.__dict__.get("_fw_aliases")
    if al is None:
        al = t.__dict__["_fw_aliases"] = []
    al.append(weakref.ref(a))


def has_own_tangent(t, idx):
    return _own(t, idx) is not None


def _tangent_levels(t, ceil, best):
    d = t.__dict__.get("_fw")
    if d:
        for k, v in d.items():
            if best < k < ceil and v is not _NO:
                best = k
    b = t._base
    if b is not None:
        db = b.__dict__.get("_fw")
        if db and (t.dtype.is_floating_point or t.dtype.is_complex):
            for k, v in db.items():
                if best < k < ceil and v is not _NO and not (d and k in d):
                    best = k
    return best


def visible_level(args, kwargs, ceil=None):
    """The highest level below the ceiling at which an argument (or a tensor
    in a list/tuple argument) has a tangent; -1 if none."""
    if ceil is None:
        ceil = _tls.ceiling
    best = -1
    for a in args:
        if isinstance(a, _TensorBase):
            best = _tangent_levels(a, ceil, best)
        elif isinstance(a, (list, tuple)) and not isinstance(a, _Size):
            for b in a:
                if isinstance(b, _TensorBase):
                    best = _tangent_levels(b, ceil, best)
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, _TensorBase):
                best = _tangent_levels(a, ceil, best)
            elif isinstance(a, (list, tuple)) and not isinstance(a, _Size):
                for b in a:
                    if isinstance(b, _TensorBase):
                        best = _tangent_levels(b, ceil, best)
    return best


class hidden:
    """Context: levels ``>= idx`` are invisible to the ops run inside."""
    __slots__ = ("idx", "prev")

    def __init__(self, idx):
        self.idx = idx

    def __enter__(self):
        self.prev = _tls.ceiling
        _tls.ceiling = min(self.prev, self.idx)
        return self

    def __exit__(self, *exc):
        _tls.ceiling = self.prev
        return False


def detach(x):
    """``x.detach()`` that keeps ``x``'s tangents (the transforms' inputs and
    results stay dual for the forward-mode levels around them)."""
    d = x.detach()
    if _LEVELS and _LAYER.enabled and (d.dtype.is_floating_point or d.dtype.is_complex):
        for lv in _LEVELS:
            tg = get_tangent(x, lv.idx)
            if tg is not None:
                _store(d, lv.idx, tg)
    return d


def ceiling():
    return _tls.ceiling


class _ForwardADLayer(_D.Layer):
    order = 8
    name = "forward_ad"

    def handle(self, entry, opdef, args, kwargs, nxt):
        lvl = visible_level(args, kwargs)
        if lvl < 0 or driver[0] is None:
            return nxt(args, kwargs)

        def lower(a, k):
            # the primal of this op: the lower levels, then the rest of the stack
            return self.handle(entry, opdef, a, k, nxt)
        return driver[0](entry, opdef, args, kwargs, nxt, lvl, lower)


_LAYER = _D.register_layer(_ForwardADLayer())


def layer():
    return _LAYER
