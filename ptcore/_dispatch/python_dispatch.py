"""The kernel level of the dispatch point: ``TorchDispatchMode``.

A dispatch mode sees each op *below* autograd, as PyTorch's
``__torch_dispatch__`` does: the call that reaches the device kernel, with
autograd already handled (inside backward, the ops of the backward formulas
are seen too).  ``func`` is the op's :class:`OpOverload`, the same object as
``ptcore.ops.aten.<op>.<overload>``: ``func is ptcore.ops.aten.mm.default``,
``func.overloadpacket is ptcore.ops.aten.add``, ``str(func) == "aten.add.Tensor"``.

ptcore's ops are the public functions (``ptcore.add``, ``Tensor.view``,
``nn.functional.linear`` ...), so a mode sees the aten op of the public call
(``aten.linear.default``, where torch's CPU kernels would show ``aten.t`` and
``aten.addmm``); the overload is the one torch's overload resolution picks
for the arguments (``x.sum()`` is ``aten.sum.default``, ``x.sum(0)``
``aten.sum.dim_IntList``, ``x + 2`` ``aten.add.Tensor``).  The arguments
reach the mode in the form torch's dispatcher gives them where ptcore's
function takes that form too: positional up to the schema's ``*``, lists as
lists, defaults left out (``x.sum(0)`` as ``(x, [0])``, ``x.view(2, 3)`` as
``(x, [2, 3])``).  An op torch has no aten op for (or whose arguments differ
from aten's, like ``nn.functional.embedding``) is reported as
``aten.<name>.default`` of a packet of its own.
"""
import inspect
import weakref

from ptcore._dispatch.mode_stack import ModeStack
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch import op_overload as _ov
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch.declarations import DECLARED, OPERATOR_FORMS
from ptcore._dispatch.op_overload import OpOverload, OpOverloadPacket
from ptcore._settings import get_default_device
from ptcore._tensor import _TensorBase, device, _tf_live_count

__all__ = ["TorchDispatchMode", "OpOverload", "OpOverloadPacket", "_get_current_dispatch_mode",
           "_get_current_dispatch_mode_stack", "_pop_mode_temporarily", "kernel_records_autograd",
           "on_subclass", "note_instance_class", "_disabled_torch_dispatch_impl",
           "record_around", "dispatch_as"]


# ---------------------------------------------------------------------------
# which aten op a ptcore op is
# ---------------------------------------------------------------------------

# nn.functional's functions whose positional arguments are those of the aten op
# of the same name (the others, e.g. embedding(input, weight) against
# aten::embedding(weight, indices), or the losses' reduction strings, are not)
_FUNCTIONAL_ATEN = frozenset("""
    adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d alpha_dropout avg_pool1d
    avg_pool2d avg_pool3d bilinear celu celu_ channel_shuffle conv1d conv2d conv3d conv_tbc
    conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity dropout elu elu_
    feature_alpha_dropout gelu glu group_norm hardshrink hardsigmoid hardswish hardtanh
    hardtanh_ layer_norm leaky_relu leaky_relu_ linear log_softmax max_pool1d max_pool2d
    max_pool3d max_pool1d_with_indices max_pool2d_with_indices max_pool3d_with_indices mish
    native_channel_shuffle one_hot pad pairwise_distance pdist pixel_shuffle pixel_unshuffle
    prelu relu relu6 relu_ rms_norm rrelu rrelu_ scaled_dot_product_attention selu selu_
    sigmoid silu softmax softplus softshrink tanh threshold threshold_
""".split())
_PREFIX = {"linalg": "linalg_", "special": "special_", "fft": "fft_"}
# overloads torch's Python API never calls (it wraps the number in a tensor)
_HIDDEN = frozenset(f"{op}.{ov}" for op in ("add", "sub", "mul", "div", "add_", "sub_", "mul_",
                                           "div_") for ov in ("Scalar", "Scalar_mode"))


def _packet_for(opdef):
    """The packet a dispatch mode reports ``opdef`` as."""
    ns, name = opdef.namespace, opdef.name
    if ns.startswith("ops."):
        return _ov.packet(ns[4:], name) or _ov.ptcore_only_packet(ns[4:], name)
    if ns in ("ptcore", "Tensor"):
        form = OPERATOR_FORMS.get(name)       # an operator method: its declared aten op
        aten = name if form is None else form.aten or name
    elif ns == "nn.functional":
        aten = "log_sigmoid" if name == "logsigmoid" else name if name in _FUNCTIONAL_ATEN else None
    else:
        pre = _PREFIX.get(ns)
        aten = None if pre is None else name if name.startswith(pre) else pre + name
    p = _ov.packet("aten", aten) if aten is not None else None
    return p or _ov.ptcore_only_packet("aten", name)


def _tag(v):
    if isinstance(v, _TensorBase):
        return "T"
    if isinstance(v, (list, tuple)):
        return ("L", _tag(v[0])) if v else "L"
    return type(v)


def _trailing_ints(args):
    """The position from which ``args`` are all ints (sizes given one by one), or None."""
    k = len(args)
    while k > 0 and type(args[k - 1]) is int:
        k -= 1
    return k if k < len(args) else None


class _Choice:
    """How calls of one op with one kind of arguments reach a mode: the overload;
    when its sizes were given one by one, where they start (``pack``); whether
    the arguments are given in torch's form (``normalize``); the keywords
    renamed to aten's names (``rename``); the factory options torch's Python
    API fills in (``fill``) and those of them ptcore's function does not take
    (``drop``, left out when the mode's handler runs the kernel)."""
    __slots__ = ("func", "pack", "normalize", "rename", "fill", "drop")

    def __init__(self, func, pack=None, normalize=False, rename=None):
        self.func, self.pack, self.normalize, self.rename = func, pack, normalize, rename
        self.fill = self.drop = ()


def _candidates(packet, kwargs):
    names = packet.overloads()
    d = DECLARED.get(("ptcore", packet.__name__))
    if d is not None and d.correction:        # (torch's var(x, dim, unbiased) family)
        names = ["correction"] + [n for n in names if n != "correction"]
    out = "out" in kwargs
    return [packet._overload(n) for n in names
            if f"{packet.__name__}.{n}" not in _HIDDEN and
            (out or not any(a.is_out for a in packet._overload(n)._schema.arguments))] or \
        [packet._overload(n) for n in names]


def _same_positionals(opdef, schema):
    """Whether a Python function's positional parameters are the schema's (an
    nn.functional function may differ: ``softmax(input, dim, _stacklevel, dtype)``)."""
    if opdef.namespace != "nn.functional":
        return True
    try:
        params = [p.name for p in inspect.signature(opdef.raw).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    alias = {"self": "input", "train": "training"}
    return all(alias.get(a.name, a.name) == alias.get(p, p)
               for a, p in zip(schema._positional, params))


# nn.functional's keywords that aten's op names otherwise (``dropout(x, training=False)``)
_KW_RENAMES = {"training": "train"}


def _renamed(kwargs, rename):
    return {rename.get(n, n): v for n, v in kwargs.items()} if rename else kwargs


def _fills(opdef, schema):
    """The factory options torch's Python API passes although they are not given
    (``pin_memory=False``; ``device`` where no tensor argument gives it), and
    those of them ptcore's function does not take."""
    names = {a.name for a in schema.arguments}
    fill = []
    if "pin_memory" in names:
        fill.append("pin_memory")
    if "device" in names and not any(a.type.base == "Tensor" for a in schema.arguments):
        fill.append("device")
    if not fill:
        return (), ()
    try:
        params = inspect.signature(opdef.raw).parameters.values()
    except (TypeError, ValueError):
        return tuple(fill), ()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return tuple(fill), ()
    taken = {p.name for p in params}
    return tuple(fill), tuple(n for n in fill if n not in taken)


def _filled(schema, kwargs, fill):
    """``kwargs`` with the options of ``fill`` torch's Python API sets, in the schema's
    order (a device given as a string as the device, as torch's argument parser)."""
    if all(kwargs.get(n) is not None for n in fill) and type(kwargs.get("device")) is not str:
        return kwargs
    given = dict(kwargs)
    for n in fill:
        if given.get(n) is None:
            given[n] = False if n == "pin_memory" else _device()
    if type(given.get("device")) is str:
        given["device"] = _device(given["device"])
    order = [a.name for a in schema.arguments]
    return {n: given[n] for n in sorted(given, key=lambda n: order.index(n) if n in order
                                         else len(order))}


def _device(name=None):
    return get_default_device() if name is None else device(name)


def _without(raw, names):
    """``raw`` leaving out the keywords ``names`` (options ptcore's function has not)."""
    def kernel(*args, **kwargs):
        return raw(*args, **{n: v for n, v in kwargs.items() if n not in names})
    return kernel


_UNBIASED_FORM = ("input", "dim", "unbiased", "keepdim")


def _unbiased_as_correction(args, kwargs):
    if not args or len(args) > len(_UNBIASED_FORM) or kwargs.get("correction") is not None:
        return args, kwargs
    v = dict(zip(_UNBIASED_FORM, args))
    kw = dict(kwargs)
    for n in _UNBIASED_FORM[1:]:
        if n in kw:
            if n in v:
                return args, kwargs
            v[n] = kw.pop(n)
    if type(v.get("dim")) is bool and "unbiased" not in v:
        v["unbiased"] = v.pop("dim")          # ``x.var(False)``
    if "dim" not in v and "unbiased" not in v:
        return args, kwargs
    kw.pop("correction", None)
    kw["correction"] = 0 if v.pop("unbiased", None) is False else 1
    if "keepdim" in v:
        kw["keepdim"] = v.pop("keepdim")
    return (v["input"],) + ((v["dim"],) if "dim" in v else ()), kw


def _choose(opdef, packet, args, kwargs):
    if not packet._known:
        return _Choice(packet.default)
    cands = _candidates(packet, kwargs)
    schemas = [o._schema for o in cands]
    by_schema = dict(zip(map(id, schemas), cands))
    for pack in (None, _trailing_ints(args)):
        a = args if pack is None else args[:pack] + (list(args[pack:]),)
        try:
            schema = _op_schema.select(schemas, a, kwargs)[0]
        except _op_schema.SchemaMismatch:
            continue
        return _Choice(by_schema[id(schema)], pack, _same_positionals(opdef, schema))
    # keywords of the public function that aten's op names otherwise (``training``)
    # or does not have (``inplace``)
    rename = {n: _KW_RENAMES[n] for n in kwargs if n in _KW_RENAMES} or None
    known = {a.name for s in schemas for a in s.arguments}
    try:
        kw = {n: v for n, v in _renamed(kwargs, rename).items() if n in known}
        schema = _op_schema.select(schemas, args, kw)[0]
        return _Choice(by_schema[id(schema)], None,
                       rename is not None and _same_positionals(opdef, schema), rename)
    except _op_schema.SchemaMismatch:
        # arguments aten's op does not take (``ptcore.tensor(data)``): an op of its own
        return _Choice(_ov.ptcore_only_packet(packet._namespace, packet.__name__).default)


_PACKET_OF = weakref.WeakKeyDictionary()     # opdef -> packet
_CHOICE = weakref.WeakKeyDictionary()        # opdef -> {argument kinds: _Choice}


def func_for(opdef, args, kwargs):
    """(the OpOverload a dispatch mode receives for this call, the args and kwargs it
    receives, the keywords to leave out when its handler runs the kernel)."""
    d = opdef.decl
    if d is not None and d.correction and opdef.namespace in ("ptcore", "Tensor"):
        # ``correction`` 1 (unbiased) or 0 when a dimension or ``unbiased`` is given
        args, kwargs = _unbiased_as_correction(args, kwargs)
    choices = _CHOICE.get(opdef)
    if choices is None:
        choices = _CHOICE[opdef] = {}
    key = (tuple(map(_tag, args)), tuple((n, _tag(v)) for n, v in kwargs.items()))
    c = choices.get(key)
    if c is None:
        p = _PACKET_OF.get(opdef)
        if p is None:
            p = _PACKET_OF[opdef] = _packet_for(opdef)
        c = choices[key] = _choose(opdef, p, args, kwargs)
        if c.normalize:
            c.fill, c.drop = _fills(opdef, c.func._schema)
    if c.pack is not None:
        args = args[:c.pack] + (list(args[c.pack:]),)
    if c.normalize:
        try:
            args, kwargs = _op_schema.normalize(c.func._schema, args,
                                                _renamed(kwargs, c.rename))
        except _op_schema.SchemaMismatch:
            return c.func, args, kwargs, ()
        if c.fill:
            kwargs = _filled(c.func._schema, kwargs, c.fill)
    return c.func, args, kwargs, c.drop


# ---------------------------------------------------------------------------
# indexing as torch's dispatcher sees it
# ---------------------------------------------------------------------------

_INDEX_END = 9223372036854775807      # torch's end of an open slice


def _prefix(t, dim, extra=0):
    return (slice(None),) * (dim % (t.dim() + extra) if t.dim() + extra else 0)


def _select_index(self, dim, index):
    return _prefix(self, dim) + (index,)


def _slice_index(self, dim=0, start=None, end=None, step=1):
    return _prefix(self, dim) + (slice(start, end, step),)


def _unsqueeze_index(self, dim):
    return _prefix(self, dim, 1) + (None,)


def _alias_index(self):
    return Ellipsis


class _IndexOp:
    """One step of basic indexing (``select``, ``slice``, ``unsqueeze``, ``alias``), an
    op a dispatch mode sees; its kernel is the indexing kernel with one index."""
    namespace = "Tensor"
    decl = None                 # (no declared op: the steps of Tensor.__getitem__)

    def __init__(self, name, index):
        self.name = name
        self.raw = index
        self._index = index

    def kernel(self, getitem):
        index = self._index

        def kernel(self, *args, **kwargs):
            return getitem(self, index(self, *args, **kwargs))
        return kernel


_SELECT, _SLICE, _UNSQUEEZE, _ALIAS = (_IndexOp(n, f) for n, f in (
    ("select", _select_index), ("slice", _slice_index), ("unsqueeze", _unsqueeze_index),
    ("alias", _alias_index)))


def _is_int(v):
    return type(v) is int


def _basic_index_steps(t, index):
    """The aten ops torch's indexing runs for ``t[index]`` when ``index`` is basic
    (ints, slices of ints, None, Ellipsis): ``[(op, args)]``; None otherwise.
    As torch: a single slice is always a ``slice``; within a tuple, a slice of
    the whole dimension is skipped; no step at all is an ``alias``."""
    single = not isinstance(index, tuple)
    items = (index,) if single else index
    specified = 0
    for i in items:
        if _is_int(i):
            specified += 1
        elif type(i) is slice:
            if not all(v is None or _is_int(v) for v in (i.start, i.stop, i.step)) or \
                    i.step is not None and i.step <= 0:
                return None
            specified += 1
        elif i is not None and i is not Ellipsis:
            return None
    ndim = t.dim()
    if specified > ndim or sum(i is Ellipsis for i in items) > 1:
        return None
    steps = []
    dim = src = 0       # the dimension in the result so far, and in ``t``
    for i in items:
        if i is Ellipsis:
            dim += ndim - specified
            src += ndim - specified
        elif i is None:
            steps.append((_UNSQUEEZE, (dim,)))
            dim += 1
        elif _is_int(i):
            steps.append((_SELECT, (dim, i)))
            src += 1
        else:
            start = 0 if i.start is None else i.start
            stop = _INDEX_END if i.stop is None else i.stop
            step = 1 if i.step is None else i.step
            if single or not (start == 0 and stop >= t.shape[src] and step == 1):
                steps.append((_SLICE, (dim, start, stop) + ((step,) if step != 1 else ())))
            dim += 1
            src += 1
    return steps or [(_ALIAS, ())]


_st = ModeStack()
_count = [0]


# ---------------------------------------------------------------------------
# tensor subclasses with __torch_dispatch__ (torch's Python dispatch key)
# ---------------------------------------------------------------------------

# class -> its __torch_dispatch__, or None (the class has none, or opted out)
_td_classes = weakref.WeakKeyDictionary()
# an instance of a class with __torch_dispatch__ may live: the kernel layer is on (from
# the first instance made by _make_wrapper_subclass, _make_subclass, as_subclass or
# Tensor's constructor; the core counts the instances, as those of classes overriding
# __torch_function__: the classes are marked _ptc_tf_watch); the layer goes off again once
# it has met none for a while and the count is 0
_td_on = [False]
_td_quiet = [0]
_TD_QUIET_CALLS = 512


def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """``__torch_dispatch__`` of a class that opts out (torch's
    ``torch._C._disabled_torch_dispatch_impl``): the ops run their kernels."""
    return NotImplemented


_disabled_torch_dispatch_impl._ptc_disabled_td = True


def _td_of(cls):
    try:
        return _td_classes[cls]
    except KeyError:
        pass
    f = getattr(cls, "__torch_dispatch__", None)
    if f is not None and getattr(getattr(f, "__func__", f), "_ptc_disabled_td", False):
        f = None
    _td_classes[cls] = f
    return f


def on_subclass(cls):
    """Called for every new Tensor subclass: the core counts the instances of one
    with a ``__torch_dispatch__``."""
    if _td_of(cls) is not None:
        cls._ptc_tf_watch = True


def _first_instance():
    if not _td_on[0]:
        _td_on[0] = True
        _update()


def switch_off_if_unused():
    """Switch the layer off now if no instance of a class with ``__torch_dispatch__`` (or
    one overriding ``__torch_function__``: the core counts both) lives (tests)."""
    if _td_on[0] and _tf_live_count() == 0:
        _td_on[0] = False
        _td_quiet[0] = 0
        _update()


def note_instance_class(cls):
    """An instance of ``cls`` is being made: switch the layer on if ``cls`` has a
    ``__torch_dispatch__``."""
    if not _td_on[0] and _td_of(cls) is not None:
        _first_instance()


def _dispatch_types(args, kwargs):
    """The classes with a ``__torch_dispatch__`` among the tensors of a call (in
    lists too), in order of appearance, subclasses before their base classes."""
    found = []
    for a in (args if not kwargs else list(args) + list(kwargs.values())):
        if isinstance(a, _TensorBase):
            t = type(a)
            if t not in found and _td_of(t) is not None:
                found.append(t)
        elif type(a) is list or type(a) is tuple:
            for e in a:
                if isinstance(e, _TensorBase):
                    t = type(e)
                    if t not in found and _td_of(t) is not None:
                        found.append(t)
    if len(found) > 1:
        ordered = []
        for t in found:
            k = next((i for i, o in enumerate(ordered) if issubclass(t, o)), len(ordered))
            ordered.insert(k, t)
        found = ordered
    return tuple(found)


def _subclass_dispatch(opdef, raw, args, kwargs):
    types = _dispatch_types(args, kwargs)
    if not types:
        _td_quiet[0] += 1
        if _td_quiet[0] > _TD_QUIET_CALLS:
            _td_quiet[0] = 0
            if _tf_live_count() == 0:
                _td_on[0] = False
                _update()
        return raw(*args, **kwargs)
    _td_quiet[0] = 0
    records = _records_inside(opdef, raw)
    call = (args, kwargs, raw)
    func, args, kwargs, drop = func_for(opdef, args, kwargs)
    if drop:
        raw = _without(raw, drop)
    with _ov.binding(func, opdef, raw):
        for t in types:
            if records:
                r = record_around[0](func, args, kwargs, _td_of(t), types, call)
            else:
                r = _td_of(t)(func, types, args, kwargs)
            if r is not NotImplemented:
                return r
    raise TypeError(f"Multiple dispatch failed for '{func}': every __torch_dispatch__ "
                    f"returned NotImplemented (types {[t.__name__ for t in types]})")


# record_around[0](func, args, kwargs, handler, types, call): the handler's result for an
# op whose kernel records its autograd itself, with the op recorded around it when an
# input requires grad (the handler then runs below autograd, as torch's Python key);
# ``call``: the (args, kwargs, kernel) of the public call; set by ptcore.autograd, which
# knows those ops' backward formulas
record_around = [None]


def _records_inside(opdef, raw):
    """Whether the kernel ``raw`` of ``opdef`` records the op's autograd itself (a
    view, ``clone``, a composite or a function computing on the data), so that a
    handler returning a result of its own would leave it out of the graph."""
    return record_around[0] is not None and (
        isinstance(opdef, _IndexOp) or raw is getattr(opdef, "body", None))


class _AtenKernel:
    """An op a backward formula runs through the kernel layer as ``aten.<name>``
    (``convolution_backward``): a handler sees it as torch's, and ``func(...)`` in the
    handler runs ``kernel``."""
    namespace = "ops.aten"
    decl = None

    def __init__(self, name, kernel, meta):
        self.name = name
        self.raw = self.body = kernel
        self.meta = meta


def dispatch_as(name, kernel, meta=None):
    """``kernel`` as the aten op ``name``: called, it goes to the dispatch modes and
    the ``__torch_dispatch__`` of its tensor arguments while the kernel layer is on,
    else runs ``kernel``.  ``meta``: the same call's results' metadata from meta
    tensors, for ``FakeTensorMode`` (by default ptcore's aten op ``name``)."""
    op = _AtenKernel(name, kernel, meta)

    def call(*args, **kwargs):
        if _LAYER.enabled and (_st.modes or _td_on[0]):
            return _LAYER.handle_kernel(op, kernel, args, kwargs)
        return kernel(*args, **kwargs)
    call.__name__ = name
    return call


class _KernelLayer:
    enabled = False

    def handle_kernel(self, opdef, raw, args, kwargs):
        if not _st.modes:
            if not _td_on[0]:
                return raw(*args, **kwargs)
            if not (opdef.name == "__getitem__" and _dispatch_types(args, kwargs)):
                return _subclass_dispatch(opdef, raw, args, kwargs)
        if opdef.name == "__getitem__" and opdef.namespace == "Tensor" and not kwargs:
            steps = _basic_index_steps(*args)
            if steps is not None:
                # as torch: basic indexing is select / slice / unsqueeze / alias
                t = args[0]
                for op, step_args in steps:
                    t = self.handle_kernel(op, op.kernel(raw), (t,) + step_args, {})
                return t
        if not _st.modes:
            return _subclass_dispatch(opdef, raw, args, kwargs)
        mode = _st.modes.pop()
        try:
            # as torch: only the tensor subclasses that define __torch_dispatch__
            types = tuple({type(a) for a in args if isinstance(a, _TensorBase) and
                           _td_of(type(a)) is not None})
            records = _records_inside(opdef, raw)
            call = (args, kwargs, raw)
            func, args, kwargs, drop = func_for(opdef, args, kwargs)
            if drop:
                raw = _without(raw, drop)
            with _ov.binding(func, opdef, raw):
                if records:
                    return record_around[0](func, args, kwargs, mode.__torch_dispatch__, types,
                                            call)
                return mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            _st.modes.append(mode)


_LAYER = _KernelLayer()
_D.kernel_layer[0] = _LAYER


def _kernel_call(opdef, raw, args, kwargs):
    # inside a mode's handler, the modes below it still see the call
    if _LAYER.enabled and (_st.modes or _td_on[0]):
        return _LAYER.handle_kernel(opdef, raw, args, kwargs)
    return raw(*args, **kwargs)


_ov.kernel_call[0] = _kernel_call


def _update():
    _LAYER.enabled = _count[0] > 0 or _td_on[0]
    _D.refresh()


class TorchDispatchMode:
    """Context manager whose ``__torch_dispatch__(func, types, args, kwargs)``
    sees every op's kernel call inside it (``torch.utils._python_dispatch``).
    Inside the handler the mode is off: ``func(*args, **kwargs)`` runs the kernel."""

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _st.modes.append(self)
        _count[0] += 1
        _update()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        try:
            _st.modes.remove(self)
        except ValueError:
            pass
        _count[0] -= 1
        _update()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        import warnings
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`")
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


_get_current_dispatch_mode = _st.current
_get_current_dispatch_mode_stack = _st.stack
_pop_mode_temporarily = _st.pop_temporarily


def kernel_records_autograd(func):
    """Whether the op a dispatch mode's handler is handling as ``func`` records
    its autograd inside its kernel (ptcore's core tensor methods: views,
    ``clone``, ``contiguous``; ops whose whole body runs as their kernel), so
    that a handler returning a value of its own instead of calling ``func``
    leaves the op out of the autograd graph.  False outside a handler of ``func``."""
    for f, opdef, raw in reversed(_ov.bound_kernels()):
        if f is func:
            # (basic indexing's steps are Tensor.__getitem__, a core method)
            return isinstance(opdef, _IndexOp) or raw is opdef.body
    return False


def modes_on():
    """Whether a dispatch mode is active on this thread."""
    return _LAYER.enabled and bool(_st.modes)


class modes_hidden:
    """Context: this thread's dispatch modes do not see the calls of the block
    (autograd's own bookkeeping of an in-place op the modes see as one call)."""

    def __enter__(self):
        self.saved = _st.modes[:]
        _st.modes.clear()

    def __exit__(self, *exc):
        _st.modes[:] = self.saved
        return False
