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

from ptcore._tensor import _TensorBase, float32 as _float32
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch.handlers import Handlers

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


def widened(t, dtype):
    """``t`` rounded to ``dtype`` and widened to float32 again: an operand of a
    float32 kernel that stands for an op autocast would run in ``dtype`` (the
    recurrent layers').  The cast of a weight (a leaf that requires grad) is
    cached for the autocast region, as :func:`_cast`'s."""
    st = state
    use_cache = st.cache_enabled and t._requires_grad and t._grad_fn is None
    key = (id(t), dtype)
    if use_cache:
        hit = st.cache.get(key)
        if hit is not None and hit[0] is t:
            return hit[1]
    r = _cast(t, dtype).to(_float32)
    if use_cache:
        st.cache[key] = (t, r)
    return r


class suspended:
    """Autocast off for ``device_type`` inside (as ``autocast(device_type,
    enabled=False)``) for a region that calls kernels only -- a recurrent
    cell's fused step, once per time step: the dispatcher's core methods stay
    as they are (``refresh(keep_entries=True)``), 5 us a use instead of 18."""
    __slots__ = ("device_type", "was")

    def __init__(self, device_type):
        self.device_type = device_type

    def __enter__(self):
        self.was = was = bool(state.enabled.get(self.device_type, False))
        if was:
            state.enabled[self.device_type] = False
            _active[0] -= 1
            _LAYER.enabled = _active[0] > 0
            _D.refresh(keep_entries=True)
        return self

    def __exit__(self, *exc):
        if self.was:
            state.enabled[self.device_type] = True
            _active[0] += 1
            _LAYER.enabled = True
            _D.refresh(keep_entries=True)
        return False


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


def _promote_target(opdef, lower, args, kwargs):
    """PyTorch's ``promote`` policy: the autocast dtype unless a float32
    argument makes it float32; float64 arguments are ignored (left as they
    are); another floating dtype is an error, as in torch."""
    import ptcore
    target = lower
    for a in list(args) + list((kwargs or {}).values()):
        for t in (a if type(a) in (list, tuple) else (a,)):
            if not (isinstance(t, _TensorBase) and t.dtype.is_floating_point):
                continue
            d = t.dtype
            if d is ptcore.float64:
                continue
            if target is ptcore.float32 or d is ptcore.float32:
                target = ptcore.float32
            elif not (target is lower and d is lower):
                raise RuntimeError(
                    f"autocast: {opdef.name} got a {d} tensor while autocasting to {lower}; "
                    f"its floating arguments must be float32, float64 or {lower}")
    return target


# -- per-device refinements of the table's categories ----------------------
#
# The table's "lower" list is CUDA's; PyTorch's CPU list leaves mv, addmv and
# addr alone.  Some of PyTorch's ops reach a listed op (bmm, mm) only for some
# arguments (einsum contracting an index, tensordot, inner and matrix_power
# calling mm), others are single kernels that ptcore composes of listed ops
# (bilinear: torch's _trilinear is not cast, so its parts must not be either),
# and multi_head_attention_forward runs every one of its parts in the autocast
# dtype.  PyTorch's norms take a lower-precision input with float32 parameters
# and return the input's dtype; F.pad's reflect/replicate modes are
# float32 ops for 1-d/2-d (replicate also 3-d) padding.

# op name -> rule(args, kwargs) giving its CPU category from the call's arguments
# (the ops' fixed CPU categories are their declared autocast_cpu)
_cpu_rule = Handlers("CPU autocast")


def _ndim(t):
    return t.dim() if isinstance(t, _TensorBase) else -1


@_cpu_rule("einsum")
def _einsum_category(args, kwargs):
    if not args or not isinstance(args[0], str):
        return None
    eq = args[0].replace(" ", "")
    ops = args[1:]
    if len(ops) == 1 and type(ops[0]) in (list, tuple):
        ops = ops[0]
    if len(ops) < 2:
        return None
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    seen = {}
    for term in terms:
        for c in set(term.replace(".", "")):
            seen[c] = seen.get(c, 0) + 1
    if not arrow:
        counts = {}
        for c in lhs.replace(",", "").replace(".", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(c for c in counts if counts[c] == 1)
    return "lower" if any(n >= 2 and c not in out for c, n in seen.items()) else None


@_cpu_rule("tensordot")
def _tensordot_category(args, kwargs):
    a = args[0] if args else kwargs.get("a")
    b = args[1] if len(args) > 1 else kwargs.get("b")
    dims = args[2] if len(args) > 2 else kwargs.get("dims", 2)
    if isinstance(dims, _TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        n = dims
    elif type(dims) in (list, tuple) and len(dims) == 2 and type(dims[0]) in (list, tuple):
        n = len(dims[0])
    else:
        n = 1
    # a full contraction (0-d result) is a dot product: not cast on CPU
    return None if n == _ndim(a) and n == _ndim(b) else "lower"


@_cpu_rule("inner")
def _inner_category(args, kwargs):
    a = args[0] if args else kwargs.get("input")
    b = args[1] if len(args) > 1 else kwargs.get("other")
    da, db = _ndim(a), _ndim(b)
    return "lower" if da >= 1 and db >= 1 and not (da == 1 and db == 1) else None


@_cpu_rule("matrix_power")
def _matrix_power_category(args, kwargs):
    n = args[1] if len(args) > 1 else kwargs.get("n", 0)
    return "lower" if isinstance(n, int) and n >= 2 else None


@_cpu_rule("pad")
def _pad_category(args, kwargs):
    pad = args[1] if len(args) > 1 else kwargs.get("pad", ())
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    k = len(pad) // 2
    if (mode == "reflect" and k in (1, 2)) or (mode == "replicate" and k in (1, 2, 3)):
        return "fp32"
    return None


def _category(opdef, dev, args, kwargs):
    cat = opdef.autocast
    if dev == "cpu":
        rule = _cpu_rule.get(opdef.name)
        if rule is not None:
            return rule(args, kwargs)
        d = opdef.decl
        if d is not None and d.autocast_cpu is not None and opdef.name == d.name:
            return None if d.autocast_cpu == "none" else d.autocast_cpu
    return cat


def _run_norm(args, kwargs, nxt):
    """A lower-precision input with float32 parameters: computed in float32,
    returned in the input's dtype (PyTorch's mixed-dtype norm kernels)."""
    import ptcore
    inp = args[0] if args else kwargs.get("input")
    if not (isinstance(inp, _TensorBase) and inp.dtype in (ptcore.bfloat16, ptcore.float16)):
        return nxt(args, kwargs)
    others = [v for v in list(args[1:]) + list((kwargs or {}).values())
              if isinstance(v, _TensorBase) and v is not inp]
    if not any(v.dtype.is_floating_point and v.dtype is not inp.dtype for v in others):
        return nxt(args, kwargs)
    if args:
        args = (inp.float(),) + tuple(args[1:])
    else:
        kwargs = dict(kwargs, input=inp.float())
    return nxt(args, kwargs).to(inp.dtype)


class _AutocastLayer(_D.Layer):
    order = 20
    name = "autocast"

    def sees_parts(self):
        return not state.excluded

    def handle(self, entry, opdef, args, kwargs, nxt):
        st = state
        if st.excluded or (kwargs and kwargs.get("out") is not None):
            # out= overloads are not autocast in PyTorch: they run as called
            return nxt(args, kwargs)
        dev = _device_type(args, kwargs)
        if dev is None or not st.enabled.get(dev, False):
            return nxt(args, kwargs)
        cat = _category(opdef, dev, args, kwargs)
        if cat is None:
            return nxt(args, kwargs)
        if cat == "off" or cat == "norm":
            st.excluded += 1
            try:
                return _run_norm(args, kwargs, nxt) if cat == "norm" else nxt(args, kwargs)
            finally:
                st.excluded -= 1
        import ptcore
        if cat == "lower":
            target = get_dtype(dev)
        elif cat == "fp32":
            target = ptcore.float32
        else:
            target = _promote_target(opdef, get_dtype(dev), args, kwargs)

        def cast(t):
            if cat == "promote":
                return t.to(target) if _eligible(t) and t.dtype is not target else t
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
