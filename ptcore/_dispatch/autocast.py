"""The autocast layer of the dispatch point (mixed precision).

While autocast is on for a device type, an op whose table entry has an
autocast category runs with its floating-point tensor arguments cast
(PyTorch's policy): ``"lower"`` ops (matmul, linear, conv ...) in the
autocast dtype, ``"fp32"`` ops (losses, norms of matrices, fft ...) in
float32, ``"promote"`` ops (cat, stack) in the widest floating dtype of their
arguments.  float64 tensors are left alone, as in PyTorch.  Inside an op that
autocast cast for, autocast is off (the op's own parts are not cast again).
Casts of leaf tensors that require grad (weights) are cached for the
duration of the outermost autocast region when ``cache_enabled``.

The public API is :mod:`ptcore.amp` (``autocast``, ``GradScaler``).
"""
import threading

from ptcore._tensor import _TensorBase
from ptcore._dispatch import dispatcher as _D

__all__ = ["state", "is_enabled", "get_dtype", "set_enabled", "set_dtype", "clear_cache"]

_DEFAULT_DTYPES = {}       # device type -> default autocast dtype (filled lazily)


def _default_dtype(device_type):
    import ptcore
    return {"cpu": ptcore.bfloat16, "cuda": ptcore.float16, "mps": ptcore.float16,
            "xpu": ptcore.bfloat16}.get(device_type, ptcore.float16)


class _State(threading.local):
    def __init__(self):
        self.enabled = {}          # device type -> bool
        self.dtype = {}            # device type -> dtype
        self.excluded = 0          # > 0 inside an op autocast already cast for
        self.cache_enabled = True
        self.cache = {}            # id(tensor) -> (tensor, dtype, cast)
        self.nesting = 0


state = _State()
_active = [0]                      # number of (thread, device) pairs with autocast on


def is_enabled(device_type="cuda"):
    return bool(state.enabled.get(device_type, False))


def get_dtype(device_type="cuda"):
    dt = state.dtype.get(device_type)
    return dt if dt is not None else _default_dtype(device_type)


def set_dtype(device_type, dtype):
    state.dtype[device_type] = dtype


def set_enabled(device_type, flag):
    was = bool(state.enabled.get(device_type, False))
    flag = bool(flag)
    state.enabled[device_type] = flag
    if was != flag:
        _active[0] += 1 if flag else -1
        _LAYER.set_enabled(_active[0] > 0)


def clear_cache():
    state.cache.clear()


def _eligible(t):
    return isinstance(t, _TensorBase) and t.dtype.is_floating_point and \
        t.dtype.itemsize != 8


def _cast(t, dtype):
    if not _eligible(t) or t.dtype is dtype:
        return t
    st = state
    use_cache = st.cache_enabled and t._requires_grad and t._grad_fn is None
    if use_cache:
        hit = st.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1] is dtype:
            return hit[2]
    r = t.to(dtype)
    if use_cache:
        st.cache[id(t)] = (t, dtype, r)
    return r


def _map(x, fn):
    if isinstance(x, _TensorBase):
        return fn(x)
    if type(x) in (list, tuple):
        return type(x)(_map(v, fn) for v in x)
    return x


def _device_type(args, kwargs):
    for a in args:
        if isinstance(a, _TensorBase):
            return a.device.type
        if type(a) in (list, tuple):
            for b in a:
                if isinstance(b, _TensorBase):
                    return b.device.type
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, _TensorBase):
                return a.device.type
    return None


def _widest(args, kwargs):
    import ptcore
    best = None
    for a in list(args) + list((kwargs or {}).values()):
        for t in (a if type(a) in (list, tuple) else (a,)):
            if isinstance(t, _TensorBase) and t.dtype.is_floating_point:
                best = t.dtype if best is None else ptcore.promote_types(best, t.dtype)
    return best


class _AutocastLayer(_D.Layer):
    order = 20
    name = "autocast"

    def handle(self, entry, opdef, args, kwargs, nxt):
        cat = opdef.autocast
        st = state
        if cat is None or st.excluded:
            return nxt(args, kwargs)
        dev = _device_type(args, kwargs)
        if dev is None or not st.enabled.get(dev, False):
            return nxt(args, kwargs)
        import ptcore
        if cat == "lower":
            target = get_dtype(dev)
        elif cat == "fp32":
            target = ptcore.float32
        else:
            target = _widest(args, kwargs)
            if target is None:
                return nxt(args, kwargs)

        def cast(t):
            if cat == "promote":
                return t.to(target) if t.dtype.is_floating_point and t.dtype is not target else t
            return _cast(t, target)
        args = tuple(_map(a, cast) for a in args)
        if kwargs:
            kwargs = {k: _map(v, cast) for k, v in kwargs.items()}
        st.excluded += 1
        try:
            return nxt(args, kwargs)
        finally:
            st.excluded -= 1


_LAYER = _D.register_layer(_AutocastLayer())
