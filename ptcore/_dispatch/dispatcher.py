"""The one dispatch point every public op call passes through.

Each public callable (``ptcore.add``, ``Tensor.add``, ``nn.functional.linear``
...) is an *entry* made by :func:`make_entry` over its :class:`OpDef`.  An
entry does one test: is any interception layer on?  If not, it runs the op's
body (autograd recording, then the device kernel) directly, so a layer that is
off costs one list lookup.  If one is, the call travels down the ordered
layer stack::

    __torch_function__ (subclasses, TorchFunctionMode)   order 0
    profiler (record per-op time)                         order 5
    forward-mode AD (tangents of dual tensors)            order 8
    vmap batching                                         order 10
    autocast                                              order 20
    tracing (jit)                                         order 30
    autograd recording + device kernel (the op's body)
        -> dispatch-level modes (TorchDispatchMode) see the kernel call

A layer is an object with ``order``, ``enabled`` and
``handle(entry, opdef, args, kwargs, nxt)``; it calls ``nxt(args, kwargs)`` to
continue down the stack (possibly with changed arguments) or returns a
result of its own.

A layer with ``off_cpu_only = True`` (the device layer, order 40) acts only on
calls with a tensor argument off the CPU: while it is the only one on, an
entry tests its arguments' devices (:func:`off_cpu`, one ``is_cpu`` per
tensor argument) and an all-CPU call runs the body directly, as with no
layer on.

The layout classes (ptcore.sparse's tensors, ``_ptc_layout_tf``: torch computes
them with a dispatch key of their own, below the ``__torch_function__``
protocol) do not switch the protocol's layer on: while one of their instances
lives (or the device layer is on) ``arg_scan[0]`` is true and an entry tests its
arguments in C (``_route_args``: a flag of the instance, one byte); a call with a
layout argument goes to the protocol's handling of its class
(:data:`layout_call`), any other runs as with no layer on.  The core methods
(views, conversions) are entries on the layout classes themselves
(:func:`add_layout_class`), so ``s.view(...)`` reaches them too.
"""
import threading

from ptcore._tensor import _TensorBase
from ptcore._tensor import _route_args, _set_arg_scan, _set_scan_device
from ptcore._dispatch.table import _register_entry

__all__ = ["Layer", "register_layer", "refresh", "make_entry", "run_layers", "kernel_layer",
           "parts_intercepted",
           "on", "off_cpu_on", "off_cpu", "register_core_entry", "arg_scan", "layout_call",
           "add_layout_class", "core_entry"]

# on[0]: some layer is enabled (the only test an entry makes when none is)
on = [False]
# off_cpu_on[0]: a layer that acts only on calls with an argument off the CPU
# (the device layer) is enabled; an entry then tests its arguments' devices
off_cpu_on = [False]
# arg_scan[0]: an entry tests its arguments (_route_args): the device layer is on or an
# instance of a layout class (a sparse tensor) lives (the core keeps it)
arg_scan = [False]
_set_arg_scan(arg_scan)
# set by ptcore._dispatch.torch_function: (entry, opdef, args, kwargs) -> the result of a
# call with a layout-class argument (its class's __torch_function__ handling)
layout_call = [None]
# the __torch_function__ layer is on (it finds non-Tensor objects implementing the protocol
# itself; with only other layers on, the entry retries a failed call through them)
protocol_on = [False]
# a core op (a Cython tensor method: view, clone ...) has a device kernel
# registered (ptcore._dispatch.device.register_kernel sets it)
core_device_kernels = [False]
_core_swapped = [False]
_LAYERS = []
_next_on = [(None, 0)]     # refresh(): position -> (first enabled layer from it, the next position)
# kernel-level interception (TorchDispatchMode): set by that module
kernel_layer = [None]
_tls = threading.local()


class Layer:
    """Base of the interception layers (see the module docstring)."""
    order = 100
    name = "layer"
    enabled = False
    # True: the layer has work only in calls with a tensor argument off the CPU
    off_cpu_only = False

    def handle(self, entry, opdef, args, kwargs, nxt):
        return nxt(args, kwargs)

    def sees_parts(self):
        """Whether the layer must see the ops a composite is made of now (a
        fused kernel would hide them): the autocast layer does not inside an
        op it cast for."""
        return True

    def set_enabled(self, flag):
        self.enabled = bool(flag)
        refresh()


def register_layer(layer):
    """Add ``layer`` to the stack (kept sorted by ``order``)."""
    if layer not in _LAYERS:
        _LAYERS.append(layer)
        _LAYERS.sort(key=lambda l: l.order)
    refresh()
    return layer


def parts_intercepted():
    """Whether an enabled layer must see the parts of a composite now: a
    front-end then takes its general path, written with ops, rather than a
    fused kernel (``on[0]`` is the cheap first test: no layer, no interception).
    Inside an op that autocast cast for, with no other layer on, nothing
    intercepts its parts (autocast is off there): batch/layer/group norm,
    attention and the recurrent layers keep their kernels under autocast."""
    if not on[0]:
        return False
    kl = kernel_layer[0]
    if kl is not None and kl.enabled:
        return True
    for layer in _LAYERS:
        if layer.enabled and not layer.off_cpu_only and layer.sees_parts():
            return True
    return False


def refresh(keep_entries=False):
    """Recompute which layers run; ``keep_entries``: leave the core methods as
    they are (entries stay entries while no layer is on, where they call the
    op's body: a region that turns a layer off for a moment, as
    :class:`ptcore._dispatch.autocast.suspended`, pays no swap each way)."""
    now = any(l.enabled and not l.off_cpu_only for l in _LAYERS) or \
        kernel_layer[0] is not None and kernel_layer[0].enabled
    off_cpu_on[0] = any(l.enabled and l.off_cpu_only for l in _LAYERS)
    _set_scan_device(off_cpu_on[0])
    protocol_on[0] = any(l.enabled and l.name == "torch_function" for l in _LAYERS)
    # for each position in the stack: the first enabled layer from there and
    # the position after it (run_layers' walk, without testing every layer)
    nxt = [(None, len(_LAYERS))]
    for layer, pos in zip(reversed(_LAYERS), range(len(_LAYERS), 0, -1)):
        nxt.append((layer, pos) if layer.enabled else nxt[-1])
    _next_on[:] = nxt[::-1]
    on[0] = now
    # the core methods are entries while a layer is on, or while the device
    # layer is on and a core op has a device kernel of its own
    swap = now or (off_cpu_on[0] and core_device_kernels[0])
    if swap != _core_swapped[0] and not (keep_entries and _core_swapped[0]):
        _core_swapped[0] = swap
        _swap_core_entries(swap)


# (class, name, own attribute or None, entry): the core methods that are
# entries only while a layer is on
_CORE_ENTRIES = []


def register_core_entry(cls, name, own, entry):
    _CORE_ENTRIES.append((cls, name, own, entry))
    if _core_swapped[0]:
        setattr(cls, name, entry)
    for lc in _LAYOUT_CLASSES:
        _put_layout_entry(lc, cls, name, entry)


def core_entry(name):
    """The entry of the core method ``Tensor.<name>`` (None if it has none)."""
    for _, n, _, entry in _CORE_ENTRIES:
        if n == name:
            return entry
    return None


# the layout classes (add_layout_class)
_LAYOUT_CLASSES = []


def add_layout_class(cls):
    """Make the core methods entries on the layout class ``cls`` (those its own
    classes do not define): ``s.view(...)`` on one of its instances then reaches the
    entry, which routes the call to the class, while the base class keeps its C
    methods for dense tensors."""
    if cls in _LAYOUT_CLASSES:
        return
    _LAYOUT_CLASSES.append(cls)
    for base, name, own, entry in _CORE_ENTRIES:
        _put_layout_entry(cls, base, name, entry)


def _put_layout_entry(cls, base, name, entry):
    if not issubclass(cls, base):
        return
    for c in cls.__mro__:
        if c is base or not issubclass(c, base):
            break
        if name in c.__dict__:
            return          # the layout class's own method
    setattr(cls, name, entry)


def _swap_core_entries(layers_on):
    for cls, name, own, entry in _CORE_ENTRIES:
        if layers_on:
            setattr(cls, name, entry)
        elif own is not None:
            setattr(cls, name, own)
        elif name in cls.__dict__:
            delattr(cls, name)      # the base class's (Cython) method again


def off_cpu(args, kwargs=None):
    """Whether a tensor among ``args`` (also inside lists and tuples) or the
    values of ``kwargs`` lives off the CPU."""
    for a in args:
        if isinstance(a, _TensorBase):
            if not a.is_cpu:
                return True
        elif (type(a) is tuple or type(a) is list) and off_cpu(a):
            return True
    if kwargs:
        return off_cpu(kwargs.values())
    return False


def run_layers(entry, opdef, args, kwargs, start=0):
    """Run the enabled layers from ``start`` on, then the op's body."""
    layer, i = _next_on[start]
    if layer is not None:
        def nxt(a, k, _i=i):
            return run_layers(entry, opdef, a, k, _i)
        return layer.handle(entry, opdef, args, kwargs, nxt)
    kl = kernel_layer[0]
    if kl is not None and kl.enabled:
        return _hooked_body(opdef)(*args, **kwargs)
    return opdef.body(*args, **kwargs)


def _hooked_body(opdef):
    """The op's body with its kernel call routed through the kernel layer."""
    b = opdef._hooked_body
    if b is None:
        raw = opdef.raw
        if getattr(opdef, "_body_factory", None) is None and opdef.body is not raw:
            # a body that cannot be rebuilt over another kernel (autograd's copy_,
            # fill_, __setitem__ ...): the mode sees the op and its ``func`` runs that
            # whole body, so the op still records
            raw = opdef.body

        def kernel(*args, **kwargs):
            kl = kernel_layer[0]
            if kl is not None and kl.enabled:
                return kl.handle_kernel(opdef, raw, args, kwargs)
            return raw(*args, **kwargs)
        kernel.__name__ = getattr(raw, "__name__", opdef.name)
        factory = getattr(opdef, "_body_factory", None)
        b = factory(kernel) if factory is not None else kernel
        opdef._hooked_body = b
    return b


_PUBLIC_MODULE = {"ptcore": "ptcore", "nn.functional": "ptcore.nn.functional",
                  "linalg": "ptcore.linalg", "Tensor": "ptcore", "fft": "ptcore.fft",
                  "special": "ptcore.special"}

# set by ptcore._dispatch.torch_function: (args, kwargs) -> handled result or _NOT_HANDLED
_foreign = [None]
NOT_HANDLED = object()


# NumPy's spellings of torch's argument names, which torch's native functions and
# Tensor methods accept as aliases (its argument parser's numpy_compatibility_arg_names):
# ``x.cumsum(axis=0)``, ``x.mean(0, keepdims=True)``, ``ptcore.add(x1=a, x2=b)``
_NUMPY_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"), ("x", "input"), ("a", "input"),
                  ("x1", "input"), ("x2", "other"))
_ALIASED_NAMESPACES = frozenset(("ptcore", "Tensor", "linalg", "special", "fft"))


def _kwarg_aliases(opdef, raw):
    """The ``(alias, name)`` pairs that apply to the op: ``name`` is a parameter of
    its Python function and ``alias`` is not; None when none applies."""
    if getattr(opdef, "namespace", None) not in _ALIASED_NAMESPACES:
        return None
    fn = raw
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    pairs = tuple((a, n) for a, n in _NUMPY_ALIASES if n in params and a not in params)
    return pairs or None


def _unalias(name, kwargs, pairs):
    """``kwargs`` with the NumPy aliases among them renamed (a new dict when any is)."""
    for alias, canon in pairs:
        if alias in kwargs:
            if canon in kwargs:
                raise TypeError(f"{name}() got multiple values for argument '{canon}' "
                                f"(also given as '{alias}')")
            kwargs = dict(kwargs)
            kwargs[canon] = kwargs.pop(alias)
    return kwargs


def _foreign_call(entry, args, kwargs):
    """The result of a failed call retried through an argument's
    ``__torch_function__`` (NOT_HANDLED when none takes it)."""
    f = _foreign[0]
    return NOT_HANDLED if f is None else f(entry, args, kwargs)


def _layers_or_foreign(entry, opdef, args, kwargs):
    """:func:`run_layers`, the call retried through an argument's ``__torch_function__``
    when it raises (an argument that is no Tensor but implements the protocol)."""
    try:
        return run_layers(entry, opdef, args, kwargs)
    except Exception:
        r = _foreign_call(entry, args, kwargs)
        if r is not NOT_HANDLED:
            return r
        raise


def make_entry(opdef, public_name=None, qualname=None, doc=None):
    """The public callable of ``opdef``.  It reads the op's body from the
    table at each call (``opdef.body``): the entry exists from the moment its
    module defines it, and autograd supplies the recording body later."""
    flag = on
    scan = arg_scan
    pflag = protocol_on
    slow_or_foreign = _layers_or_foreign
    route = _route_args
    lcall = layout_call
    slow = run_layers

    raw = opdef.raw
    aliases = _kwarg_aliases(opdef, raw)
    # (empty where the op has no alias: its calls by keyword pay a truth test only;
    # ptcore._inductor.direct_calls reads this cell as a frozenset)
    alias_names = frozenset(a for a, _ in aliases) if aliases is not None else frozenset()

    def entry(*args, **kwargs):
        if kwargs and alias_names and not alias_names.isdisjoint(kwargs):
            kwargs = _unalias(entry.__name__, kwargs, aliases)
        if flag[0]:
            if pflag[0]:
                return slow(entry, opdef, args, kwargs)
            if scan[0] and route(args, kwargs) == 2:
                # (a layout argument with other layers on: its class first, as the
                # protocol's layer, order 0, would)
                return lcall[0](entry, opdef, args, kwargs)
            # (a dispatch mode or a __torch_dispatch__ instance on, the protocol's layer
            # off: an argument implementing __torch_function__ is found as below)
            return slow_or_foreign(entry, opdef, args, kwargs)
        if scan[0]:
            # no layer is on but the device layer, or a layout-class (sparse) tensor
            # lives: a call with a layout argument goes to its class, one with an
            # argument off the CPU (device layer on) down the stack
            k = route(args, kwargs)
            if k == 2:
                return lcall[0](entry, opdef, args, kwargs)
            if k:
                # the fast form of the op's device kernel first, when it has one
                # and takes the call (the cache ptcore._dispatch.device derives)
                fd = opdef.device_fast
                if fd is not None:
                    r = fd(args, kwargs)
                    if r is not None:
                        return r
                # (as below: a device tensor with an argument that implements
                # __torch_function__, a sparse gradient among them)
                return slow_or_foreign(entry, opdef, args, kwargs)
        try:
            return opdef.body(*args, **kwargs)
        except Exception:
            # an argument that is not a Tensor but implements __torch_function__
            r = _foreign_call(entry, args, kwargs)
            if r is not NOT_HANDLED:
                return r
            raise
    own = getattr(raw, "__name__", opdef.name)
    entry.__name__ = name = public_name or own
    # (an alias bound to another op's function, ``arctan`` of ``atan``: its own name, as
    # torch's aliases)
    entry.__qualname__ = qualname or (getattr(raw, "__qualname__", name) if name == own else name)
    entry.__doc__ = doc if doc is not None else getattr(raw, "__doc__", None)
    entry.__wrapped__ = raw
    mod = _PUBLIC_MODULE.get(opdef.namespace) or getattr(raw, "__module__", None)
    if mod:
        entry.__module__ = mod
    _register_entry(entry, opdef)
    return entry
