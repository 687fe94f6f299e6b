"""The ``__torch_function__`` layer of the dispatch point (PyTorch's
protocol, ``torch/overrides.py``): Tensor subclasses and other objects that
define ``__torch_function__``, and ``TorchFunctionMode`` context managers,
intercept every ptcore function and Tensor method.

The layer is off (and costs nothing) while no instance of a Tensor subclass
overriding ``__torch_function__`` lives and no mode is entered: the core
counts those instances as it makes and frees them (``_tensor.pyx``,
``_tf_live``), switches the layer on when the first appears, and the layer
switches itself off once it has found none for a while.  Merely defining
such a class costs nothing (Pyro defines one at import; its SVI and NUTS
never make one).  Objects that are not Tensors are found when an op raises
on them (an op body never accepts them), so they cost nothing either.
"""
import weakref

from ptcore._dispatch.mode_stack import ModeStack
import warnings

from ptcore._tensor import _TensorBase
from ptcore._tensor import Size as _Size
from ptcore._tensor import _set_tf_first, _tf_live_count, _tf_recount
from ptcore._tensor import _layout_live_count, _route_args
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch.table import op_of

__all__ = ["TorchFunctionMode", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "tensor_torch_function", "as_subclass", "join_protocol", "_get_current_function_mode",
           "_get_current_function_mode_stack", "_pop_mode_temporarily",
           "is_torch_function_mode_enabled", "is_torch_function_enabled"]


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """``__torch_function__`` of classes that opt out of the protocol
    (``nn.Parameter``): the op runs as for a plain Tensor."""
    return NotImplemented


_disabled_torch_function_impl = classmethod(_disabled_torch_function_impl).__func__


class _State(ModeStack):
    def __init__(self):
        super().__init__()
        self.sub_disabled = 0
        self.all_disabled = 0


_st = _State()
_plain_types = set()        # Tensor classes that do not override the protocol
# the layer's subclass half is on: an instance of an overriding class may live
_subclass_seen = [False]
_overriding = weakref.WeakSet()   # the overriding classes
# classes whose instances the core does not count (join_protocol's: instances made
# before the class joined): the layer stays on while one of them exists
_uncounted = weakref.WeakSet()
# calls the layer has run since it last found an overriding instance alive
_quiet = [0]
# calls without an overriding instance alive after which the layer switches off (a
# program making and dropping one instance per step keeps it on, not toggling)
_QUIET_CALLS = 512


def _instances_may_live():
    return _tf_live_count() > 0 or any(True for _ in _uncounted)


def _subclass_gone():
    _subclass_seen[0] = _instances_may_live()
    _quiet[0] = 0
    _LAYER.update()


def _first_instance():
    """The core made an instance of an overriding class while none lived."""
    _quiet[0] = 0
    if not _subclass_seen[0]:
        _subclass_seen[0] = True
        _LAYER.update()


_set_tf_first(_first_instance)
_mode_count = [0]


def _tf_of(t):
    """The class's ``__torch_function__`` if it takes part in the protocol, else None."""
    if t in _plain_types:
        return None
    f = getattr(t, "__torch_function__", None)
    if f is None:
        return None
    fn = getattr(f, "__func__", f)
    if fn is _disabled_torch_function_impl or (getattr(fn, "_ptc_default_tf", False)
                                               and "__torch_function__" in vars(t)):
        # opted out (nn.Parameter), or Tensor itself; a subclass inheriting
        # Tensor's default takes part, as in torch (its ops return the subclass)
        if issubclass(t, _TensorBase):
            _plain_types.add(t)
        return None
    if _is_torch_tensor_type(t):
        # a PyTorch tensor (an input ptcore converts, e.g. through DLPack):
        # its __torch_function__ serves torch's functions, not ptcore's
        _plain_types.add(t)
        return None
    return f


def _is_torch_tensor_type(t):
    # (not ptcore's own Tensor, whose __module__ is "torch" under ptcore.as_torch)
    return not issubclass(t, _TensorBase) and any(
        c.__name__ == "Tensor" and c.__module__ in ("torch", "torch._tensor") for c in t.__mro__)


# types whose instances never take part: numbers, strings, None (plain Tensor classes are
# learnt into _plain_types as they are met)
_SCALAR_TYPES = frozenset((int, float, bool, complex, str, type(None)))


def _all_plain(values):
    """Whether no value (nor an element of a list/tuple value) can take part in the
    protocol: its type is a number's, a string's, None's or a plain Tensor class.  The
    common case of every op while some subclass exists elsewhere (Pyro defines one at
    import): answered without building the overloaded list."""
    plain, scalars = _plain_types, _SCALAR_TYPES
    for a in values:
        t = type(a)
        if t in plain or t in scalars:
            continue
        if t is list or t is tuple:
            for b in a:
                tb = type(b)
                if tb not in plain and tb not in scalars:
                    return False
            continue
        return False
    return True


def _overloaded(args, kwargs):
    """Arguments whose types override ``__torch_function__``, subclasses
    before their base classes (PyTorch's ``_get_overloaded_args``)."""
    if _all_plain(args) and (not kwargs or _all_plain(kwargs.values())):
        return ()
    found = []
    types = []

    def add(a):
        t = type(a)
        if t in types or _tf_of(t) is None:
            return
        index = len(found)
        for i, old in enumerate(found):
            if issubclass(t, type(old)):
                index = i
                break
        types.append(t)
        found.insert(index, a)
    for a in args:
        if type(a) in (list, tuple) or (isinstance(a, (list, tuple)) and not isinstance(a, _Size)):
            for b in a:
                add(b)
        else:
            add(a)
    if kwargs:
        for a in kwargs.values():
            if type(a) in (list, tuple) or (isinstance(a, (list, tuple)) and not isinstance(a, _Size)):
                for b in a:
                    add(b)
            else:
                add(a)
    return found


def _einsum_handler_args(args):
    # torch.einsum's Python wrapper hands the handlers the equation and the operands one by
    # one: the list form einsum(eq, [a, b]) as einsum(eq, a, b) (what fx records; e3nn's
    # opt_einsum_fx reads the operands so)
    if len(args) == 2 and isinstance(args[0], str) and type(args[1]) in (list, tuple):
        return (args[0], *args[1])
    return args


# (namespace, name) of an op whose torch function is a Python wrapper that rearranges its
# arguments before calling the handlers -> that rearrangement
_HANDLER_ARGS = {("ptcore", "einsum"): _einsum_handler_args}


def _dispatch(public_api, overloaded, args, kwargs):
    d = op_of(public_api)
    if d is not None and (d.namespace, d.name) in _HANDLER_ARGS:
        args = _HANDLER_ARGS[d.namespace, d.name](args)
    types = tuple(type(a) for a in overloaded)
    st = _st
    if st.modes and not st.all_disabled:
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for a in overloaded:
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public_api, '__module__', 'ptcore')}.{getattr(public_api, '__name__', public_api)}"
    lines = "".join(f"\n  - tensor subclass {type(a)}" for a in overloaded)
    if st.modes:
        lines += f"\n  - mode object {st.modes[-1]!r}"
    msg = (f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
           f"NotImplemented:\n{lines}\n")
    raise TypeError(msg)


class _TorchFunctionLayer(_D.Layer):
    order = 0
    name = "torch_function"

    def handle(self, entry, opdef, args, kwargs, nxt):
        st = _st
        if _layout_live_count() and _route_args(tuple(args), kwargs) == 2:
            # a layout-class (sparse) argument: its class's handling, as with the layer off
            return _layout_handle(entry, args, kwargs, nxt)
        if st.all_disabled:
            if _subclass_seen[0] and _tf_live_count():
                return _layout_dispatch(entry, args, kwargs, nxt)
            return nxt(args, kwargs)
        ov = ()
        if _subclass_seen[0]:
            if _tf_live_count() or _uncounted:
                _quiet[0] = 0
                if not st.sub_disabled:
                    ov = _overloaded(args, kwargs)
                elif not st.modes:
                    return _layout_dispatch(entry, args, kwargs, nxt)
            elif not st.modes:
                # no overriding Tensor lives: as with the layer off, an object that is
                # no Tensor but implements the protocol is found when the op raises
                _quiet[0] += 1
                if _quiet[0] > _QUIET_CALLS:
                    _subclass_gone()
                try:
                    return nxt(args, kwargs)
                except Exception:
                    r = _foreign(entry, args, kwargs)
                    if r is not _D.NOT_HANDLED:
                        return r
                    raise
        if ov or st.modes:
            return _dispatch(entry, ov, args, kwargs or {})
        return nxt(args, kwargs)

    def update(self):
        self.set_enabled(_subclass_seen[0] or _mode_count[0] > 0)


_LAYER = _D.register_layer(_TorchFunctionLayer())


def _layout_handle(entry, args, kwargs, nxt):
    """A call with an argument of a layout class (the sparse tensors, ``_ptc_layout_tf``):
    the layout classes do not switch the layer on (the dispatch entries find their
    instances among the arguments, :data:`ptcore._dispatch.dispatcher.layout_call`);
    their ``__torch_function__`` runs the call, as an overriding class's does, and
    inside ``DisableTorchFunction[Subclass]`` too."""
    st = _st
    if st.all_disabled or st.sub_disabled and not st.modes:
        return _layout_dispatch(entry, args, kwargs, nxt)
    ov = () if st.sub_disabled else _overloaded(args, kwargs)
    if ov or st.modes:
        return _dispatch(entry, ov, args, kwargs or {})
    return nxt(args, kwargs)


def _layout_call(entry, opdef, args, kwargs):
    # (the entry found a layout argument with the layer off: the layers after it next)
    def nxt(a, k):
        return _D.run_layers(entry, opdef, a, k, _D._LAYERS.index(_LAYER) + 1)
    return _layout_handle(entry, args, kwargs, nxt)


def _layout_dispatch(entry, args, kwargs, nxt):
    """Inside ``DisableTorchFunction[Subclass]``: an argument of a layout class (the sparse
    tensors, ``_ptc_layout_tf``: torch computes them with a dispatch key of their own, below
    the protocol) still has its ops run by its class; other arguments' are not."""
    if _all_plain(args) and (not kwargs or _all_plain(kwargs.values())):
        return nxt(args, kwargs)
    ov = [a for a in _overloaded(args, kwargs) if getattr(type(a), "_ptc_layout_tf", False)]
    if not ov:
        return nxt(args, kwargs)
    types = tuple(type(a) for a in ov)
    for a in ov:
        result = type(a).__torch_function__(entry, types, args, kwargs or {})
        if result is not NotImplemented:
            return result
    return nxt(args, kwargs)


def _foreign(entry, args, kwargs):
    """An op raised: dispatch if an argument is a non-Tensor object that
    implements ``__torch_function__``."""
    if _st.all_disabled:
        return _D.NOT_HANDLED
    for a in args:
        if not isinstance(a, _TensorBase) and hasattr(type(a), "__torch_function__"):
            break
        if type(a) in (list, tuple) and any(    # (torch.cat([sparse, sparse]) ...)
                not isinstance(b, _TensorBase) and hasattr(type(b), "__torch_function__")
                for b in a):
            break
    else:
        if not kwargs or not any(not isinstance(v, _TensorBase) and
                                 hasattr(type(v), "__torch_function__")
                                 for v in kwargs.values()):
            return _D.NOT_HANDLED
    ov = [a for a in _overloaded(args, kwargs) if not isinstance(a, _TensorBase)] \
        if _st.sub_disabled else _overloaded(args, kwargs)
    if not ov:
        return _D.NOT_HANDLED
    return _dispatch(entry, ov, args, kwargs or {})


_D._foreign[0] = _foreign
_D.layout_call[0] = _layout_call


# ---------------------------------------------------------------------------
# public protocol functions (ptcore.overrides)
# ---------------------------------------------------------------------------

def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the ``__torch_function__`` overrides of ``relevant_args`` (and
    the current mode) for ``public_api(*args, **kwargs)``."""
    ov = _overloaded(tuple(relevant_args), None)
    return _dispatch(public_api, ov, args, kwargs)


def has_torch_function(relevant_args):
    """True if a mode is active or an argument overrides ``__torch_function__``."""
    st = _st
    if st.all_disabled:
        return False
    if st.modes:
        return True
    if st.sub_disabled:
        return False
    return bool(_overloaded(tuple(relevant_args), None))


def has_torch_function_unary(a):
    return has_torch_function((a,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def is_tensor_like(inp):
    """True for a ptcore Tensor or an object whose type defines ``__torch_function__``."""
    return isinstance(inp, _TensorBase) or hasattr(type(inp), "__torch_function__")


def is_torch_function_mode_enabled():
    return bool(_st.modes) and not _st.all_disabled


def is_torch_function_enabled():
    """False inside ``DisableTorchFunction`` or ``DisableTorchFunctionSubclass``
    (``torch._C._is_torch_function_enabled``)."""
    return not (_st.sub_disabled or _st.all_disabled)


_get_current_function_mode = _st.current
_get_current_function_mode_stack = _st.stack
_pop_mode_temporarily = _st.pop_temporarily


class TorchFunctionMode:
    """A context manager whose ``__torch_function__(func, types, args,
    kwargs)`` sees every ptcore function and Tensor method called inside it
    (``torch.overrides.TorchFunctionMode``).  Inside the handler the mode is
    off, so ``func(*args, **kwargs)`` runs the op."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _st.modes.append(self)
        _mode_count[0] += 1
        _LAYER.update()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        try:
            _st.modes.remove(self)
        except ValueError:
            pass
        _mode_count[0] -= 1
        _LAYER.update()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`")
        return cls(*args, **kwargs)


class DisableTorchFunctionSubclass:
    """Inside it, Tensor subclasses' ``__torch_function__`` is not called (modes still are)."""

    def __enter__(self):
        _st.sub_disabled += 1
        return self

    def __exit__(self, *exc):
        _st.sub_disabled -= 1
        return False


class DisableTorchFunction:
    """Inside it, neither subclasses nor modes intercept ops."""

    def __enter__(self):
        _st.all_disabled += 1
        return self

    def __exit__(self, *exc):
        _st.all_disabled -= 1
        return False


# ---------------------------------------------------------------------------
# Tensor.__torch_function__, as_subclass, and subclasses
# ---------------------------------------------------------------------------

_NOWRAP = set()


def get_default_nowrap_functions():
    return _NOWRAP


def _is_torch_callable(func):
    mod = getattr(func, "__module__", None) or \
        getattr(getattr(func, "__objclass__", None), "__module__", None) or ""
    return mod == "torch" or mod.startswith("torch.")


def tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with subclass dispatch
    off and return its tensors as ``cls`` (PyTorch's default)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types) or _is_torch_callable(func):
        # PyTorch asking ptcore to run one of torch's own functions on a mix of
        # torch and ptcore tensors: not ptcore's to handle (running it would ask
        # ptcore again, forever); torch then raises its TypeError
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _NOWRAP:
            return ret
        return _convert(ret, cls)



def _convert(ret, cls):
    if cls is _TensorBase or cls is None:
        return ret
    if isinstance(ret, _TensorBase) and not isinstance(ret, cls):
        ret = as_subclass(ret, cls)
    elif isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret) if type(ret) in (tuple, list) else \
            type(ret)(*(_convert(r, cls) for r in ret))
    return ret


def as_subclass(self, cls):
    """A ``cls`` instance sharing this tensor's data and autograd history."""
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a Tensor subclass, got {cls!r}")
    with DisableTorchFunction():
        r = _TensorBase.__getitem__(self, Ellipsis)
    r.__class__ = cls
    _tf_recount(r)
    return r


# Tensor methods that a subclass overriding __torch_function__ sees through the
# protocol although they are no entries of the dispatch point (autograd's; the
# tensor core's view/conversion methods, declared core_entry, are entries
# while a layer is on, as this one is for such a subclass, and entries are seen)
CORE_METHODS = ("requires_grad_", "backward")


def _core_method(public, impl):
    st = _st

    def method(*args, **kwargs):
        if not st.all_disabled and (st.modes or not st.sub_disabled):
            ov = () if st.sub_disabled else _overloaded(args, kwargs)
            if ov or st.modes:
                return _dispatch(public, ov, args, kwargs)
        return impl(*args, **kwargs)
    method.__name__ = getattr(impl, "__name__", "method")
    method.__qualname__ = getattr(impl, "__qualname__", method.__name__)
    method.__doc__ = getattr(impl, "__doc__", None)
    method.__wrapped__ = impl
    return method


def join_protocol(cls, torch_function, tensor_cls, none_made=False):
    """Give the Tensor subclass ``cls``, created opted out of the protocol
    (``__torch_function__ = _disabled_torch_function_impl``), the classmethod
    ``torch_function`` as its ``__torch_function__`` from now on (once; later calls do
    nothing).  For a class that libraries import everywhere and few programs
    instantiate (DTensor, on its first instance): an overriding class switches this
    layer on, which scans every op's arguments, while an instance lives.
    ``none_made``: the caller joins before it makes the class's first instance (the
    core counts every instance from now on), so the layer can go off again when
    they are gone; else instances made before were not counted and the layer stays
    on while the class exists."""
    if cls in _overriding:
        return
    cls.__torch_function__ = classmethod(torch_function)
    _plain_types.discard(cls)
    on_subclass(cls, tensor_cls)
    if not none_made:
        _uncounted.add(cls)
    _first_instance()


def on_subclass(cls, tensor_cls):
    """Called for every new Tensor subclass: one that overrides
    ``__torch_function__`` switches the layer on and routes the core
    methods through the protocol."""
    if _tf_of(cls) is None:
        return
    _overriding.add(cls)
    weakref.finalize(cls, _subclass_gone)
    if getattr(cls, "_ptc_layout_tf", False):
        # a layout class (sparse): its instances leave the layer off; the entries find
        # them among their arguments (the core counts them apart, _ptc_layout_watch),
        # and its core methods are entries (its base class keeps the C methods)
        cls._ptc_layout_watch = True
        _D.add_layout_class(cls)
    else:
        # (the core counts its instances from now on: the layer goes on with the first)
        cls._ptc_tf_watch = True
    for name in CORE_METHODS:
        impl = getattr(cls, name, None)
        if impl is None or name in cls.__dict__ or getattr(impl, "_ptc_core_tf", False):
            continue
        public = getattr(tensor_cls, name)
        if op_of(public) is not None:
            continue        # an entry of the dispatch point: the layer sees it
        m = _core_method(public, impl)
        m._ptc_core_tf = True
        setattr(cls, name, m)
