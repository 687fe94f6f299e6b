"""Custom operators (``torch.library``'s ``custom_op`` API).

:func:`custom_op` turns a Python function (which may call a compiled
kernel, e.g. a Cython extension built with
:func:`ptcore.utils.cython_extension.load`) into an op of ptcore's operator
table: the op is called through the one dispatch point, so
``__torch_function__`` overrides, the profiler, autocast, ``ptcore.jit``
tracing and ``TorchDispatchMode`` see it exactly as they see a built-in op,
and it is reachable as ``ptcore.ops.<namespace>.<name>``.  Its gradient
formula is registered with :meth:`CustomOpDef.register_autograd`, kernels
for other devices with :meth:`CustomOpDef.register_kernel`, and a shape
function with :meth:`CustomOpDef.register_fake` (checked by :func:`opcheck`).

Examples
--------
>>> import ptcore
>>> from ptcore import Tensor
>>> @ptcore.library.custom_op("mylib::scaled_tanh", mutates_args=())
... def scaled_tanh(x: Tensor, scale: float) -> Tensor:
...     return ptcore.tanh(x) * scale
>>> def backward(ctx, grad):
...     y, = ctx.saved_tensors
...     return grad * (ctx.scale - y * y / ctx.scale), None
>>> def setup_context(ctx, inputs, output):
...     ctx.save_for_backward(output)
...     ctx.scale = inputs[1]
>>> scaled_tanh.register_autograd(backward, setup_context=setup_context)
>>> x = ptcore.tensor([0.0, 1.0], requires_grad=True)
>>> ptcore.ops.mylib.scaled_tanh(x, 2.0).sum().backward()
>>> x.grad
tensor([2.0000, 0.8399])
"""
import contextlib
import enum
import inspect
import logging
import numbers
import re
import sys
import typing
from collections.abc import Sequence as _AbcSequence

from ptcore._dispatch import autocast as _autocast
from ptcore._dispatch import op_overload as _op_overload
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch import table as _table
from ptcore._dispatch.generate import entry as _make_entry
from ptcore._dispatch.op_overload import OpOverload, OpOverloadPacket
from ptcore import _torchvision_image_ops, _torchvision_ops
from ptcore._ops_namespace import add_builtin_library, ops
from ptcore._tensor import _TensorBase
from ptcore.autograd import function as _function
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd.gradcheck import gradcheck
from ptcore.func import _batching_rules, _function_vmap
from ptcore.tensor import Tensor

__all__ = ["CustomOpDef", "FakeImplCtx", "Library", "Tag", "OpOverload", "custom_op", "define",
           "get_ctx", "impl", "infer_schema", "impl_abstract", "ops", "opcheck", "register_autocast",
           "register_autograd", "register_fake", "register_kernel", "register_vmap"]

_log = logging.getLogger(__name__)

Tag = enum.Enum("Tag", [(n, i) for i, n in enumerate(
    ["core", "cudagraph_unsafe", "data_dependent_output", "dynamic_output_shape",
     "flexible_layout", "generated", "inplace", "inplace_view", "maybe_aliasing_or_mutating",
     "needs_contiguous_strides", "needs_exact_strides", "needs_fixed_stride_order",
     "nondeterministic_bitwise", "nondeterministic_seeded", "out", "out_variant", "pointwise",
     "pt2_compliant_tag", "reduction", "view_copy"])], module=__name__)
Tag.__doc__ = """The tags of an operator (``torch.Tag``): ``op.default.tags`` lists them; a
custom op has ``pt2_compliant_tag`` and those given to :func:`custom_op`."""
_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)$")
# qualname "ns::name" -> CustomOpDef
_REGISTRY = {}


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------

def _scalar_names():
    import ptcore
    return {int: "SymInt", float: "float", bool: "bool", str: "str",
            ptcore.dtype: "ScalarType", ptcore.device: "Device"}


def _is_number_union(ann):
    """``int | float | bool`` in any order (torch's ``types.Number``: a Scalar)."""
    origin = typing.get_origin(ann)
    if not (origin is typing.Union or type(ann).__name__ == "UnionType"):
        return False
    return set(typing.get_args(ann)) == {int, float, bool}


def _type_name(ann, where):
    """The schema type of annotation ``ann`` (``Tensor``, ``SymInt[]``, ``Tensor?`` ...)."""
    if ann is Tensor or ann is _TensorBase:
        return "Tensor"
    simple = _scalar_names()
    if ann in simple:
        return simple[ann]
    if _is_number_union(ann):
        return "Scalar"
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Union or (origin is not None and getattr(origin, "__name__", "") ==
                                  "UnionType") or type(ann).__name__ == "UnionType":
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return _type_name(rest[0], where) + "?"
    if origin in (list, tuple, _AbcSequence, typing.Sequence) and args:
        inner = args[0]
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            inner = None
        if inner in (Tensor, _TensorBase, int, float, bool) or _is_number_union(inner):
            return _type_name(inner, where) + "[]"
        if inner is not None and typing.get_origin(inner) is typing.Union and \
                set(typing.get_args(inner)) in ({Tensor, type(None)}, {_TensorBase, type(None)}):
            return "Tensor?[]"
    raise ValueError(f"infer_schema(func): {where} has unsupported type {ann!r}; supported: "
                     "Tensor, int, float, bool, str, dtype, device, int | float | bool, "
                     "Optional[...] of those, and list/Sequence of Tensor, int, float, bool "
                     "or Optional[Tensor]")


def _return_type(ann, where):
    if ann in (Tensor, _TensorBase):
        return "Tensor"
    if ann in (int, float, bool):
        return _scalar_names()[ann]
    if _is_number_union(ann):
        return "Scalar"
    if typing.get_origin(ann) in (list, _AbcSequence) and typing.get_args(ann) in \
            ((Tensor,), (_TensorBase,)):
        return "Tensor[]"
    raise ValueError(f"infer_schema(func): {where} has unsupported type {ann!r}; supported: "
                     "Tensor, list[Tensor], int, float, bool and int | float | bool")


def _return_schema(ann, fname):
    if ann is None or ann is type(None):
        return "()"
    if typing.get_origin(ann) is tuple:
        items = typing.get_args(ann)
        if items and items[-1] is not Ellipsis:
            out = ", ".join(_return_type(a, f"a return of {fname}") for a in items)
            return "((" + out + "))" if len(items) == 1 else "(" + out + ")"
    return _return_type(ann, f"the return of {fname}")


def _default_repr(v, where):
    """A parameter default as ``infer_schema`` writes it (torch accepts None,
    numbers, strings, devices and dtypes)."""
    import ptcore
    if v is None or isinstance(v, (bool, int, float)):
        return str(v)
    if isinstance(v, (str, ptcore.device)):
        return f'"{v}"'
    if isinstance(v, ptcore.dtype):
        return str(v).split(".", 1)[1]
    raise ValueError(f"infer_schema(func): {where} has an unsupported default value type "
                     f"{type(v)}; supported: None, int, float, bool, str, device and dtype")


def _signature(fn):
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, TypeError):
        return inspect.signature(fn)


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The op schema of a type-annotated function (``torch.library.infer_schema``).

    Parameters
    ----------
    prototype_function : callable
        Every parameter and the return value must be annotated.
    mutates_args : iterable of str or "unknown"
        Names of the parameters the function writes into.
    op_name : str, optional
        Prefixed to the schema when given.
    tags : Tag or sequence of Tag, optional
        Accepted as torch's; they do not change the schema string.

    Returns
    -------
    str
        For example ``"(Tensor x, float a, SymInt n=2) -> Tensor"``.

    Raises
    ------
    ValueError
        An annotation is missing or unsupported, or ``mutates_args`` names a
        parameter the function does not have.

    Examples
    --------
    >>> from ptcore import Tensor
    >>> def f(x: Tensor, a: float, n: int = 2) -> Tensor: ...
    >>> ptcore.library.infer_schema(f, mutates_args=())
    '(Tensor x, float a, SymInt n=2) -> Tensor'
    """
    sig = _signature(prototype_function)
    fname = getattr(prototype_function, "__name__", "func")
    if isinstance(mutates_args, str):
        if mutates_args != "unknown":
            raise ValueError("mutates_args must be an iterable of parameter names or the string "
                             f"'unknown', not {mutates_args!r}")
        mutated = set()
    else:
        mutated = set(mutates_args)
        missing = mutated - set(sig.parameters)
        if missing:
            raise ValueError(f"infer_schema(func): {missing} in mutates_args were not found in "
                             f"the custom op's signature {fname}{sig}")
    params, kw_only_started = [], False
    for k, (name, p) in enumerate(sig.parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"infer_schema(func): {fname} may not take *args or **kwargs")
        if p.annotation is p.empty:
            raise ValueError(f"infer_schema(func): Parameter {name} must have a type annotation. "
                             f"Got func with signature {fname}{sig}")
        t = _type_name(p.annotation, f"Parameter {name}")
        if mutates_args == "unknown":
            if t.startswith("Tensor"):
                t = t.replace("Tensor", f"Tensor(a{k}!)", 1)
        elif name in mutated:
            if not t.startswith("Tensor"):
                raise ValueError(f"infer_schema(func): {name} in mutates_args is a {t}, "
                                 "not a Tensor")
            t = t.replace("Tensor", f"Tensor(a{k}!)", 1)
        s = f"{t} {name}"
        if p.default is not p.empty:
            s += "=" + _default_repr(p.default, f"Parameter {name}")
        if p.kind is p.KEYWORD_ONLY and not kw_only_started:
            params.append("*")
            kw_only_started = True
        params.append(s)
    if sig.return_annotation is sig.empty:
        raise ValueError(f"infer_schema(func): {fname} must have a return type annotation")
    out = f"({', '.join(params)}) -> {_return_schema(sig.return_annotation, fname)}"
    return (op_name or "") + out


# ---------------------------------------------------------------------------
# the op
# ---------------------------------------------------------------------------

def _device_type(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, _TensorBase):
            return a.device.type
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, _TensorBase):
                    return b.device.type
    return "cpu"


def _tensors(x):
    if isinstance(x, _TensorBase):
        return [x]
    if isinstance(x, (list, tuple)):
        return [a for a in x if isinstance(a, _TensorBase)]
    return []


class _ArgumentError(RuntimeError, TypeError):
    """Arguments that do not fit a custom op's schema: a RuntimeError as
    torch's dispatcher raises, and a TypeError as a Python call raises."""


def _cpp_float(v):
    """A float as torch's C++ schema printer writes it (17 significant
    digits, a trailing point for whole numbers: ``1.``, ``1.0000000000000001e-05``)."""
    r = "%.17g" % v
    return r if any(c in r for c in ".enai") else r + "."


def _printed_schema(schema):
    """``schema`` with its float defaults written as the registered op's
    schema prints them in torch (``infer_schema`` keeps Python's repr)."""
    try:
        fs = _op_schema.parse(schema, name="")
    except Exception:
        return schema
    changed = False
    for a in fs.arguments:
        t = a.type
        base = str((t.elem if t.elem is not None else t).base)
        if base != "float" or not a.has_default_value() or a._default_text == "None":
            continue
        v = a.default_value
        text = ("[" + ", ".join(_cpp_float(float(x)) for x in v) + "]"
                if isinstance(v, (list, tuple)) else _cpp_float(float(v)))
        if text != a._default_text:
            a._default_text = text
            changed = True
    return str(fs) if changed else schema


def _argument_types(schema):
    """Argument name -> parsed schema type (``{}`` when the schema cannot be parsed)."""
    try:
        fs = _op_schema.parse(schema, name="")
    except Exception:
        return {}
    return {a.name: a.type for a in fs.arguments}


def _type_label(t):
    return str(t).replace("SymInt", "int")


def _matches(t, v):
    """Whether ``v`` is accepted for an argument of schema type ``t`` (the
    conversions torch's dispatcher makes: ints for floats, bools for ints,
    one-element tensors for numbers; an undefined Tensor is None)."""
    if t.optional and v is None:
        return True
    if t.elem is not None:
        if not isinstance(v, (list, tuple)):
            # a number for an int[] / float[] (broadcast), never for Tensor[]
            return str(t.elem.base) != "Tensor" and _matches(t.elem, v)
        return all(_matches(t.elem, x) for x in v)
    base = str(t.base)
    if base == "Tensor":
        return v is None or isinstance(v, _TensorBase)
    if isinstance(v, _TensorBase):
        return base in ("int", "SymInt", "float", "bool", "Scalar")
    if base in ("int", "SymInt"):
        return isinstance(v, numbers.Integral)
    if base in ("float", "Scalar"):
        return isinstance(v, numbers.Number)
    if base == "bool":
        return isinstance(v, (bool, numbers.Integral))
    if base == "str":
        return isinstance(v, str)
    return True


class CustomOpDef:
    """An op made by :func:`custom_op` (``torch.library.CustomOpDef``).

    Calling it calls the op through ptcore's dispatch point.  The op is also
    ``ptcore.ops.<namespace>.<name>``.
    """

    def __init__(self, namespace, name, schema, fn, mutates_args, device_types, sig=None):
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._schema = schema
        self._init_fn = fn
        self._sig = sig if sig is not None else _signature(fn)
        self._positional = [n for n, p in self._sig.parameters.items()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._kwonly = [n for n, p in self._sig.parameters.items() if p.kind is p.KEYWORD_ONLY]
        self._mutates_args = mutates_args
        # device type (None: every device) -> kernel
        self._kernels = {}
        for d in device_types:
            self._kernels[d] = fn
        self._backward = None
        self._setup_context = None
        self._fake = None
        self._vmap_fn = None
        self._disabled_kernel = set()  # device types whose registered kernel is switched off
        self._arg_types = None       # argument name -> schema type (parsed on first call)
        self._returns_alias = None   # whether the schema declares an aliasing return
        self._autocast = {}          # device type -> dtype the inputs are cast to
        self._autocast_kernels = {}  # device type -> function run under autocast (Autocast* key)
        self._autograd_fn = self._make_autograd_function()
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__module__ = getattr(fn, "__module__", None)
        self._opdef, self._opoverload = self._register()

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._entry(*args, **kwargs)

    # -- registration -------------------------------------------------------
    def _register(self):
        ns = "ops." + self._namespace
        _table.OPS.pop((ns, self._name), None)       # a redefinition replaces the op
        kernel = self._dispatch_kernel

        def factory(k):
            return self._make_body(k)
        entry = _make_entry(self._name, kernel, body=self._make_body(kernel), kind="function",
                            family="custom", factory=factory, namespace=ns)
        opdef = _table.op_of(entry)
        _batching_rules.set_op_rule(opdef, None)     # a redefined op drops the old vmap rule
        # autocast leaves a custom op's inputs alone (the ops inside it are
        # autocast as usual) unless register_autocast says otherwise; the
        # table's category goes by the name, which may be a built-in op's
        opdef.autocast = None
        opdef.tags = opdef.tags | {"custom"} | ({"inplace"} if self._mutates_args else set())
        entry.__name__ = self._name
        entry.__qualname__ = self._name
        entry.__module__ = "ptcore.ops." + self._namespace
        entry.__doc__ = self.__doc__
        self._entry = entry
        packet = _op_overload.register_custom(self._namespace, self._name,
                                              _printed_schema(self._schema), entry)
        return opdef, packet.default

    def register_kernel(self, device_types, fn=None, /):
        """Register ``fn`` as the op's kernel for ``device_types`` ("cpu", "cuda" or a sequence).

        Used as ``op.register_kernel("cuda")(fn)`` or ``op.register_kernel("cuda", fn)``.
        ``None`` registers the kernel for every device.
        """
        types_ = _device_types(device_types)

        def register(f):
            for d in types_:
                self._kernels[d] = f
            return f
        return register if fn is None else register(fn)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Switch the kernel registered for ``device_type`` off (the op runs
        the function it was made from there) or back on, for the ``with``
        block; the state before is restored after it (torch's
        ``set_kernel_enabled``; switching a kernel to the state it is in, or
        one never registered, is logged and changes nothing)."""
        action = "enable" if enabled else "disable"
        was_disabled = device_type in self._disabled_kernel
        if device_type not in self._kernels:
            _log.warning("Attempted to %s kernel for %s but no kernel was registered for this "
                         "device type.", action, device_type)
        if enabled == (not was_disabled):
            _log.warning("Attempted to %s kernel for %s but it was already %sd.", action,
                         device_type, action)
        elif enabled:
            self._disabled_kernel.discard(device_type)
        else:
            self._disabled_kernel.add(device_type)
        try:
            yield
        finally:
            if was_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    def register_fake(self, fn, /):
        """Register the op's shape function: ``fn`` takes the op's arguments and
        returns outputs of the right shape and dtype without computing values
        (e.g. ``x.new_empty(shape)``).  ptcore has no fake tensors; the function
        receives the real arguments and :func:`opcheck` compares its outputs'
        metadata with the kernel's."""
        if not callable(fn):
            raise TypeError(f"register_fake: expected a function, got {type(fn).__name__}")
        self._fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register the op's derivative formula.

        ``setup_context(ctx, inputs, output)`` saves what backward needs
        (``ctx.save_for_backward``) after the forward ran (``inputs`` is the
        tuple of positional arguments; a function of four parameters receives
        ``(ctx, inputs, keyword_only_inputs, output)``).
        ``backward(ctx, *grads)`` returns one gradient (or None) per positional
        input.  Write it with ptcore ops and it is itself differentiable.
        """
        if not callable(backward):
            raise TypeError(f"register_autograd: backward must be callable, got "
                            f"{type(backward).__name__}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError("register_autograd: setup_context must be callable or None")
        if self._mutates_args:
            raise RuntimeError(f"register_autograd: {self._qualname} mutates its arguments "
                               f"({self._mutates_args}); autograd for mutating custom ops is "
                               "not supported")
        self._backward = backward
        self._setup_context = setup_context

    def register_vmap(self, func=None, /):
        """Register the op's batching rule for :func:`ptcore.func.vmap`.

        ``func(info, in_dims, *args, **kwargs)`` receives the arguments with
        the vmapped dimension of each batched tensor at ``in_dims`` (None for
        an argument not batched at this level; a list of dims for a list of
        tensors), ``info.batch_size`` and ``info.randomness``, and returns
        ``(output, out_dims)``.  Without one, vmap runs the op once per
        sample.  Used as a decorator or called with ``func``.
        """
        def register(f):
            if not callable(f):
                raise TypeError(f"register_vmap: expected a function, got {type(f).__name__}")
            self._vmap_fn = f

            def rule(c):
                pos, kw = self._without_defaults(*self._split(c.args, c.kwargs))
                return _function_vmap.run_vmap_rule(self._vmap_fn, c.frame, pos, kw,
                                                    f"The vmap function of {self._qualname}")
            _batching_rules.set_op_rule(self._opdef, rule)
            return f
        return register if func is None else register(func)

    def register_autocast(self, device_type, cast_inputs):
        """Under autocast on ``device_type``, run the op with its floating-point
        tensor inputs (not float64) cast to ``cast_inputs`` and autocast off
        inside it (torch's ``register_autocast``)."""
        import ptcore
        if not isinstance(device_type, str):
            raise ValueError(f"register_autocast: expected `device_type` to be a string, got "
                             f"{type(device_type).__name__}")
        if not isinstance(cast_inputs, ptcore.dtype):
            raise ValueError(f"register_autocast: expected `cast_inputs` to be a dtype, got "
                             f"{type(cast_inputs).__name__}")
        self._autocast[device_type] = cast_inputs

    # -- calling ------------------------------------------------------------
    def _dispatch_kernel(self, *args, **kwargs):
        dev = _device_type(args, kwargs)
        fn = self._kernels.get(dev) or self._kernels.get(None)
        if dev in self._disabled_kernel and dev in self._kernels:
            fn = self._init_fn
        if fn is None:
            have = sorted(k for k in self._kernels if k is not None)
            raise NotImplementedError(f"{self._qualname}: no kernel for device type '{dev}' "
                                      f"(registered: {', '.join(have) or 'none'}); use "
                                      "register_kernel to add one")
        out = fn(*args, **kwargs)
        self._check_no_alias(args, kwargs, out)
        return out

    def _check_no_alias(self, args, kwargs, out):
        if self._returns_alias is None:
            # a schema that declares an aliasing return (``-> Tensor(a!)``, an
            # in-place op defined with ``define``) may return its input
            try:
                fs = _op_schema.parse(self._schema, name="")
                self._returns_alias = any(r.alias_info is not None for r in fs.returns)
            except ValueError:
                self._returns_alias = False
        if self._returns_alias:
            return
        ins = [t for a in list(args) + list(kwargs.values()) for t in _tensors(a)]
        if not ins:
            return
        stores = {id(t.untyped_storage()) for t in ins}
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for o in outs:
            if isinstance(o, _TensorBase) and (any(o is t for t in ins) or
                                               id(o.untyped_storage()) in stores):
                raise RuntimeError(
                    f"{self._qualname}: the output of a custom op may not be an input or a "
                    "view of one; return a copy (e.g. x.clone()) instead")

    def _split(self, args, kwargs):
        """(positional inputs, keyword-only inputs) with defaults applied; the
        arguments checked against the schema's types as torch's dispatcher
        does (RuntimeError)."""
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise _ArgumentError(f"{self._qualname}{self._schema[self._schema.index('('):]}: "
                                 f"{e}") from None
        bound.apply_defaults()
        a = bound.arguments
        types_ = self._arg_types
        if types_ is None:
            types_ = self._arg_types = _argument_types(self._schema)
        for n, v in a.items():
            t = types_.get(n)
            if t is not None and not _matches(t, v):
                raise _ArgumentError(f"{self._qualname}() Expected a value of type "
                                     f"'{_type_label(t)}' for argument '{n}' but instead found "
                                     f"type '{type(v).__name__}'.")
        return tuple(a[n] for n in self._positional), {n: a[n] for n in self._kwonly}

    def _without_defaults(self, pos, kw):
        """``(pos, kw)`` as torch's dispatcher hands them to a Python kernel:
        trailing positional arguments and keyword-only ones equal to their
        defaults left out."""
        params = self._sig.parameters

        def is_default(name, v):
            d = params[name].default
            if d is inspect.Parameter.empty or isinstance(v, _TensorBase):
                return False
            try:
                return v is d or bool(v == d)
            except Exception:
                return False
        n = len(pos)
        while n and is_default(self._positional[n - 1], pos[n - 1]):
            n -= 1
        return pos[:n], {k: v for k, v in kw.items() if not is_default(k, v)}

    def _make_body(self, kernel):
        state = _gm._state
        fn_cls = self._autograd_fn

        def body(*args, **kwargs):
            if self._autocast_kernels and not _autocast.state.excluded:
                # (a kernel registered for an Autocast key: it casts and calls the op
                # again with autocast excluded, as ATen's autocast kernels)
                dev = _device_type(args, kwargs)
                akernel = self._autocast_kernels.get(dev)
                if akernel is not None and _autocast.is_enabled(dev):
                    return akernel(*args, **kwargs)
            pos, kw = self._split(args, kwargs)
            if self._autocast:
                dev = _device_type(pos, kw)
                dtype = self._autocast.get(dev)
                if dtype is not None and _autocast.is_enabled(dev) and not _autocast.state.excluded:
                    def cast(t):
                        return t.to(dtype) if _autocast._eligible(t) and t.device.type == dev \
                            else t
                    pos = tuple(_autocast._map(a, cast) for a in pos)
                    kw = {k: _autocast._map(v, cast) for k, v in kw.items()}
                    _autocast.state.excluded += 1
                    try:
                        return run(pos, kw)
                    finally:
                        _autocast.state.excluded -= 1
            return run(pos, kw)

        def run(pos, kw):
            if state.enabled and any(t._requires_grad for a in pos for t in _tensors(a)):
                # a list of tensors (Tensor[]) is one schema argument but one
                # autograd input per tensor: flattened for the node, rebuilt for
                # the kernel, setup_context and backward (torch's pytree flattening)
                spec, flat = [], []
                for a in pos:
                    if isinstance(a, (list, tuple)) and any(isinstance(t, _TensorBase)
                                                            for t in a):
                        spec.append(len(a))
                        flat.extend(a)
                    else:
                        spec.append(None)
                        flat.append(a)
                box = []
                out = fn_cls.apply(kernel, kw, tuple(spec), box, *flat)
                return _unflatten_out(out if isinstance(out, tuple) else (out,), box[0])
            return kernel(*pos, **kw)
        body.__name__ = self._name
        return body

    def _make_autograd_function(self):
        op = self

        class _Fn:
            @staticmethod
            def forward(ctx, kernel, kw, spec, box, *flat):
                needs, pos, i = [], [], 0
                for n in spec:
                    if n is None:
                        pos.append(flat[i])
                        needs.append(ctx.needs_input_grad[4 + i])
                        i += 1
                    else:
                        pos.append(list(flat[i:i + n]))
                        needs.append(any(ctx.needs_input_grad[4 + i:4 + i + n]))
                        i += n
                pos = tuple(pos)
                ctx.needs_input_grad = tuple(needs)
                ctx._ptc_spec = spec
                out = kernel(*pos, **kw)
                flat_out, ctx._ptc_out = _flatten_out(out)   # (one node output per tensor)
                box.append(ctx._ptc_out)
                if op._setup_context is not None:
                    sc = op._setup_context
                    if len(_signature(sc).parameters) == 4:
                        sc(ctx, pos, kw, out)
                    else:
                        sc(ctx, pos, out)
                return flat_out

            @staticmethod
            def backward(ctx, *grads):
                if op._backward is None:
                    raise RuntimeError(f"Trying to backward through {op._qualname} but no "
                                       "autograd formula was registered. Please use "
                                       "register_autograd to add one.")
                # one gradient argument per output as the op returned it (a list
                # for a Tensor[] output, as torch's)
                res = op._backward(ctx, *_unflatten_out(grads, ctx._ptc_out, grads=True))
                if not isinstance(res, tuple):
                    res = (res,)
                n = len(op._positional)
                if len(res) != n:
                    raise RuntimeError(f"{op._qualname}: backward returned {len(res)} "
                                       f"gradient(s); expected one per positional input ({n})")
                flat = []
                for r, k in zip(res, ctx._ptc_spec):
                    if k is None:
                        flat.append(r)
                    elif r is None:
                        flat.extend([None] * k)
                    else:
                        if not isinstance(r, (list, tuple)) or len(r) != k:
                            raise RuntimeError(
                                f"{op._qualname}: backward must return a list of {k} "
                                f"gradients (or None) for a list input of {k} tensors, got "
                                f"{type(r).__name__}")
                        flat.extend(r)
                return (None, None, None, None) + tuple(flat)
        # torch's name for the node class: GeneratedBackwardFor_<ns>_<name>_defaultBackward
        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        return type(name, (_function.Function,), {"forward": _Fn.__dict__["forward"],
                                                  "backward": _Fn.__dict__["backward"]})


def _flatten_out(out):
    """(flat tuple of a custom op's outputs, their structure): a list output (or a
    list item of a tuple output) becomes one node output per tensor."""
    if isinstance(out, list):
        return tuple(out), ("list", len(out))
    if isinstance(out, tuple):
        flat, items = [], []
        for o in out:
            if isinstance(o, list):
                items.append(len(o))
                flat.extend(o)
            else:
                items.append(None)
                flat.append(o)
        return tuple(flat), ("tuple", tuple(items))
    return (out,), ("one", None)


def _unflatten_out(flat, struct, grads=False):
    """The outputs (or, with ``grads``, the backward's gradient arguments: a tuple
    of one per output) in the structure :func:`_flatten_out` recorded."""
    kind, items = struct
    if kind == "one":
        return tuple(flat) if grads else flat[0]
    if kind == "list":
        return (list(flat),) if grads else list(flat)
    out, i = [], 0
    for n in items:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return tuple(out)


def _device_types(device_types):
    if device_types is None:
        return (None,)
    if isinstance(device_types, str):
        return (device_types,)
    out = tuple(device_types)
    if not all(isinstance(d, str) for d in out):
        raise TypeError(f"device_types must be a string or a sequence of strings, not "
                        f"{device_types!r}")
    return out


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` a custom op of ptcore's operator table (``torch.library.custom_op``).

    Parameters
    ----------
    name : str
        ``"namespace::opname"``; the op becomes ``ptcore.ops.namespace.opname``.
    fn : callable, optional
        The implementation; omit it to use ``custom_op`` as a decorator.  Its
        parameters and return value must be type-annotated (see
        :func:`infer_schema`) unless ``schema`` is given.  It must not return
        an input or a view of one.
    mutates_args : iterable of str or "unknown"
        The parameters the function writes into (``()`` for none).
    device_types : str or sequence of str, optional
        The device types ``fn`` is the kernel for (default: all);
        :meth:`CustomOpDef.register_kernel` adds others.
    schema : str, optional
        The schema, instead of inferring it from the annotations.
    tags : Tag or sequence of Tag, optional
        Tags of the op (``op._opoverload.tags`` lists ``Tag.pt2_compliant_tag``
        and these).

    Returns
    -------
    CustomOpDef
        Callable like ``fn``; every call goes through the dispatch point.

    Raises
    ------
    ValueError
        ``name`` is not ``"namespace::opname"``, or an annotation is missing.

    Examples
    --------
    >>> from ptcore import Tensor
    >>> @ptcore.library.custom_op("mylib::mul3", mutates_args=())
    ... def mul3(x: Tensor) -> Tensor:
    ...     return x * 3
    >>> mul3(ptcore.ones(2))
    tensor([3., 3.])
    >>> ptcore.ops.mylib.mul3.default is mul3._opoverload
    True
    """
    if not isinstance(name, str):
        raise TypeError(f"custom_op: name must be a string 'namespace::opname', not "
                        f"{type(name).__name__}")
    m = _NAME.match(name)
    if m is None:
        raise ValueError(f"custom_op: expected a name of the form 'namespace::opname' "
                         f"(identifiers), got {name!r}")
    if not isinstance(mutates_args, str):
        mutates_args = tuple(mutates_args)
    types_ = _device_types(device_types)

    def inner(f):
        if not callable(f):
            raise TypeError(f"custom_op: expected a function, got {type(f).__name__}")
        if schema is None:
            s = infer_schema(f, mutates_args=mutates_args)
        else:
            if not isinstance(schema, str) or "->" not in schema:
                raise ValueError(f"custom_op: schema must look like '(Tensor x) -> Tensor', "
                                 f"got {schema!r}")
            s = schema
        op = CustomOpDef(m.group(1), m.group(2), s, f, mutates_args, types_)
        extra = [] if tags is None else [tags] if isinstance(tags, Tag) else list(tags)
        op._opoverload.tags = [Tag.pt2_compliant_tag] + extra
        _add_to_registry(op)
        return op
    return inner if fn is None else inner(fn)


# fake functions registered by name before their op exists (torch keeps them for an op
# a library defines later, e.g. torchvision's for ops of its compiled library)
_PENDING_FAKE = {}


def _add_to_registry(op):
    _REGISTRY[op._qualname] = op
    fake = _PENDING_FAKE.pop(op._qualname, None)
    if fake is not None and op._fake is None:
        op._fake = fake


def _op(op):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverload):
        op = op.overloadpacket
    q = op._qualified_op_name if isinstance(op, OpOverloadPacket) else op
    if isinstance(q, str) and q in _REGISTRY:
        return _REGISTRY[q]
    raise ValueError(f"not a custom op of ptcore.library: {op!r}")


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """``op.register_autograd(backward, setup_context=...)`` for an op given by
    its name ``"ns::name"`` or object (``lib``: the Library that defined it,
    accepted as torch's)."""
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_vmap(op, func=None, /, *, lib=None):
    """``op.register_vmap(func)`` for an op given by name or object (a decorator without ``func``)."""
    return _op(op).register_vmap(func)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """``op.register_autocast(device_type, cast_inputs)`` for an op given by name or object."""
    _op(op).register_autocast(device_type, cast_inputs)


def register_fake(op, fn=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """``op.register_fake(fn)`` for an op given by name or object (a decorator without
    ``fn``).  ``allow_override=False`` refuses to replace a registered fake function."""
    if isinstance(op, str) and "::" in op and op not in _REGISTRY:
        # (torch's registry takes a fake function for an op not defined yet)
        def pending(f):
            if not callable(f):
                raise TypeError(f"register_fake: expected a function, got {type(f).__name__}")
            if not allow_override and op in _PENDING_FAKE:
                raise RuntimeError(f"register_fake({op}): the op already has a fake impl "
                                   "registered and allow_override=False")
            _PENDING_FAKE[op] = f
            return f
        return pending if fn is None else pending(fn)
    o = _op(op)

    def reg(f):
        if not allow_override and o._fake is not None:
            raise RuntimeError(f"register_fake({o._qualname}): the op already has a fake impl "
                               "registered and allow_override=False")
        return o.register_fake(f)
    return reg if fn is None else reg(fn)


class FakeImplCtx:
    """What :func:`get_ctx` returns inside a fake function (``torch.library``'s
    context): :meth:`new_dynamic_size` stands for an output size that depends on
    the input's values (``nonzero``'s count).  ptcore runs fake functions on real
    inputs (:func:`opcheck`), so such a size is not checked against the kernel's."""

    def __init__(self):
        self.dynamic = False

    def new_dynamic_size(self, *, min=0, max=None):
        if min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, ...): expected min to be "
                             "greater than or equal to 0")
        if max is not None and max < min:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected min "
                             "to be less than or equal to max")
        self.dynamic = True
        return min

    def create_unbacked_symint(self, *, min=2, max=None):
        """Deprecated name of :meth:`new_dynamic_size` (as torch's, with its warning)."""
        import warnings
        warnings.warn("create_unbacked_symint is deprecated, please use new_dynamic_size "
                      "instead", FutureWarning, stacklevel=2)
        return self.new_dynamic_size(min=min, max=max)


_FAKE_CTX = [None]


def get_ctx():
    """The :class:`FakeImplCtx` of the fake function running now (None outside one)."""
    return _FAKE_CTX[0]


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """The former name of :func:`register_fake` (deprecated in torch, with the same warning)."""
    import warnings
    warnings.warn("torch.library.impl_abstract was renamed to torch.library.register_fake. "
                  "Please use that instead; we will remove torch.library.impl_abstract in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    """``op.register_kernel(device_types, fn)`` for an op given by name or object."""
    return _op(op).register_kernel(device_types, fn)


class OpCheckError(AssertionError):
    """A check of :func:`opcheck` failed (torch's ``OpCheckError``)."""


_OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor",
                  "test_aot_dispatch_dynamic")


def opcheck(op, args, kwargs=None, *, test_utils=_OPCHECK_TESTS, raise_exception=True,
            atol=None, rtol=None):
    """Check a custom op's registrations on one input (``torch.library.opcheck``).

    The tests, named as torch's:

    ``test_schema``
        The op runs, and its outputs do not alias its inputs.
    ``test_autograd_registration``
        When an input requires grad, the op has a derivative formula
        (:meth:`CustomOpDef.register_autograd`) or mutates its arguments.
    ``test_faketensor``
        A shape function is registered (:meth:`CustomOpDef.register_fake`) and
        its outputs have the kernel's shapes and dtypes.
    ``test_aot_dispatch_dynamic``
        When a formula is registered and the floating-point inputs can be
        promoted to float64, its gradients agree with finite differences
        (:func:`ptcore.autograd.gradcheck`, ``atol``/``rtol``).

    Returns
    -------
    dict
        test name -> ``"SUCCESS"``, or the exception it raised when
        ``raise_exception`` is False.

    Raises
    ------
    OpCheckError
        A test failed and ``raise_exception`` is True (an ``AssertionError``).
    """
    o = _op(op)
    kwargs = dict(kwargs or {})
    tests = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    unknown = [t for t in tests if t not in _OPCHECK_TESTS]
    if unknown:
        raise ValueError(f"opcheck: unknown test_utils {unknown}; expected some of "
                         f"{list(_OPCHECK_TESTS)}")
    results = {}
    for t in tests:
        try:
            _OPCHECKS[t](o, args, kwargs, 1e-6 if atol is None else atol,
                         1e-5 if rtol is None else rtol)
            results[t] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {t} failed with {e}") from e
            results[t] = e
    return results


def _check_schema(o, args, kwargs, atol, rtol):
    o._entry(*args, **kwargs)


def _check_autograd_registration(o, args, kwargs, atol, rtol):
    grads = any(t.requires_grad for a in list(args) + list(kwargs.values()) for t in _tensors(a))
    if grads and o._backward is None and not o._mutates_args:
        raise RuntimeError(f"{o._qualname}: an input requires grad but no autograd formula is "
                           "registered; use register_autograd to add one")


def _check_fake(o, args, kwargs, atol, rtol):
    if o._fake is None:
        raise RuntimeError(f"There was no fake impl registered for {o!r}. Please use "
                           f"`{o._name}.register_fake` to add an fake impl.")
    out = o._entry(*args, **kwargs)
    ctx, _FAKE_CTX[0] = _FAKE_CTX[0], FakeImplCtx()
    try:
        fake = o._fake(*args, **kwargs)
        dynamic = _FAKE_CTX[0].dynamic
    finally:
        _FAKE_CTX[0] = ctx
    real_t = out if isinstance(out, (tuple, list)) else (out,)
    fake_t = fake if isinstance(fake, (tuple, list)) else (fake,)
    if len(real_t) != len(fake_t):
        raise AssertionError(f"{o._qualname}: the fake function returns {len(fake_t)} "
                             f"outputs, the kernel {len(real_t)}")
    for k, (r, f) in enumerate(zip(real_t, fake_t)):
        if isinstance(r, _TensorBase) and (not isinstance(f, _TensorBase) or
                                           (r.dim() != f.dim() if dynamic else
                                            tuple(r.shape) != tuple(f.shape)) or
                                           r.dtype != f.dtype):
            raise AssertionError(
                f"{o._qualname}: output {k}: the kernel gives {tuple(r.shape)} {r.dtype}, "
                f"the fake function {getattr(f, 'shape', None)} "
                f"{getattr(f, 'dtype', type(f).__name__)}")


def _check_gradients(o, args, kwargs, atol, rtol):
    if o._backward is None:
        return

    def is_float(a):
        return isinstance(a, _TensorBase) and a.dtype.is_floating_point
    dargs = tuple(a.detach().double().requires_grad_(True) if is_float(a) else a for a in args)
    if any(is_float(a) for a in dargs) and \
            not gradcheck(lambda *a: o._entry(*a, **kwargs), dargs, atol=atol, rtol=rtol,
                          raise_exception=False):
        raise AssertionError(f"{o._qualname}: the registered backward disagrees with finite "
                             "differences")


_OPCHECKS = {"test_schema": _check_schema,
             "test_autograd_registration": _check_autograd_registration,
             "test_faketensor": _check_fake, "test_aot_dispatch_dynamic": _check_gradients}


# ---------------------------------------------------------------------------
# the low-level API: Library.define / impl (schema strings)
# ---------------------------------------------------------------------------

def _parse_schema(schema):
    """(name or None, inspect.Signature, mutated argument names) of a schema string."""
    try:
        fs = _op_schema.parse(schema, name="")
    except ValueError as e:
        raise ValueError(f"cannot parse the schema {schema!r}: {e}") from None
    params = [inspect.Parameter(a.name, inspect.Parameter.KEYWORD_ONLY if a.kwarg_only else
                                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                default=a.default_value if a.has_default_value() else
                                inspect.Parameter.empty) for a in fs.arguments]
    try:
        sig = inspect.Signature(params)
    except ValueError as e:
        raise ValueError(f"schema {schema!r}: {e}") from None
    mutated = tuple(a.name for a in fs.arguments if a.is_write)
    return fs.name or None, sig, mutated


_AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "ipu", "mtia", "maia", "xla")
_DEVICE_OF_KEY = {"cpu": "cpu", "cuda": "cuda", "compositeimplicitautograd": None,
                  "compositeexplicitautograd": None, "": None, "default": None}


class Library:
    """A namespace of ops defined by schema strings (``torch.library.Library``).

    ``kind`` is ``"DEF"`` or ``"FRAGMENT"`` (ops may be defined) or ``"IMPL"``
    (kernels may be added to existing ops).  ``define(schema)`` adds an op
    without a kernel; ``impl(name, fn, dispatch_key)`` gives it one for a
    device (``"CPU"``, ``"CUDA"``) or for every device
    (``"CompositeImplicitAutograd"``/``"CompositeExplicitAutograd"``/``""``);
    the ``"Meta"`` key registers the shape function.  Ops made this way are
    custom ops like those of :func:`custom_op` (``ptcore.ops.<ns>.<name>``,
    :func:`register_autograd` ...).
    """

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if not isinstance(ns, str) or not ns.isidentifier():
            raise ValueError(f"Library: the namespace must be an identifier, got {ns!r}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define the op of ``schema`` (``"name(Tensor x, float a=1.0) -> Tensor"``); return its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"Library(ns={self.ns!r}, kind='IMPL') cannot define ops; use "
                               "kind 'DEF' or 'FRAGMENT'")
        name, sig, mutated = _parse_schema(schema)
        if name is None or "::" in name:
            raise ValueError(f"Library.define: the schema must start with the op's name "
                             f"(without namespace), got {schema!r}")
        op = CustomOpDef(self.ns, name, schema[schema.index("("):].strip(), None, mutated, (),
                         sig=sig)
        _add_to_registry(op)
        self._defined.append(op._qualname)
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``."""
        if with_keyset:
            raise NotImplementedError("Library.impl: with_keyset is not supported by ptcore")
        if not callable(fn):
            raise TypeError(f"Library.impl: fn must be callable, got {type(fn).__name__}")
        if isinstance(op_name, str):
            op = _op(op_name if "::" in op_name else f"{self.ns}::{op_name}")
        else:       # (an op object: torch.ops.ns.name or its .default overload)
            op = _op(op_name)
        _register_for_key(op, dispatch_key or self.dispatch_key, fn)

    def _destroy(self):
        """Remove the ops this library defined."""
        for qual in self._defined:
            op = _REGISTRY.pop(qual, None)
            if op is not None:
                _table.OPS.pop(("ops." + op._namespace, op._name), None)
                _op_overload.remove_custom(op._namespace, op._name)
        self._defined = []


def _register_for_key(op, key, fn):
    k = str(key).lower()
    if k == "meta":
        op.register_fake(fn)
        return
    if k.startswith("autocast") and k[len("autocast"):] in _AUTOCAST_DEVICES:
        # the op's behaviour under autocast on that device (torch's AutocastCPU/CUDA...)
        op._autocast_kernels[k[len("autocast"):]] = fn
        return
    if k not in _DEVICE_OF_KEY:
        raise NotImplementedError(f"{op._qualname}: dispatch key {key!r} is not supported "
                                  "(use 'CPU', 'CUDA', 'Meta', 'AutocastCPU'/'AutocastCUDA' or "
                                  "'CompositeImplicitAutograd'; autograd formulas go through "
                                  "register_autograd)")
    op.register_kernel(_DEVICE_OF_KEY[k], fn)


def define(qualname, schema, *, lib=None, tags=()):
    """Define the op ``"ns::name"`` with ``schema`` (``"(Tensor x) -> Tensor"``), without a kernel.

    ``define(lib, "name(Tensor x) -> Tensor")`` (a :class:`Library` first, torch's
    older form) is a decorator: it defines the op in ``lib`` and registers the
    function as its kernel for every device.

    Examples
    --------
    >>> ptcore.library.define("mylib::twice", "(Tensor x) -> Tensor")
    >>> @ptcore.library.impl("mylib::twice", "cpu")
    ... def _(x):
    ...     return x * 2
    >>> ptcore.ops.mylib.twice(ptcore.ones(2))
    tensor([2., 2.])
    """
    if isinstance(qualname, Library):
        def wrap(f):
            qualname.impl(qualname.define(schema), f)
            return f
        return wrap
    m = _NAME.match(qualname) if isinstance(qualname, str) else None
    if m is None:
        raise ValueError(f"define: expected a name of the form 'namespace::opname', got "
                         f"{qualname!r}")
    (lib or Library(m.group(1), "FRAGMENT")).define(m.group(2) + schema.strip())


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` as the kernel of op ``qualname`` for device ``types``
    (``"cpu"``, ``"cuda"``, a sequence of them, or a dispatch key); a decorator without ``func``.

    ``impl(lib, "name", "CPU")`` (a :class:`Library` first, torch's older form)
    is a decorator that registers the function with ``lib.impl(name, f, "CPU")``.

    Examples
    --------
    >>> lib = ptcore.library.Library("mylib2", "DEF")
    >>> lib.define("twice(Tensor x) -> Tensor")
    'twice'
    >>> @ptcore.library.impl(lib, "twice", "CPU")
    ... def twice(x):
    ...     return x * 2
    >>> ptcore.ops.mylib2.twice(ptcore.ones(2))
    tensor([2., 2.])
    """
    if isinstance(qualname, Library):
        key = func if func is not None else ""

        def wrap(f):
            qualname.impl(types, f, key)
            return f
        return wrap
    op = _op(qualname)
    keys = (types,) if isinstance(types, str) else tuple(types)

    def register(f):
        for k in keys:
            _register_for_key(op, k, f)
        return f
    return register if func is None else register(func)


# libtorch-linked libraries whose ops ptcore defines itself when a program loads them
# (torchvision's operators and image codecs: ``torch.ops.load_library`` at its import)
add_builtin_library(_torchvision_ops.is_torchvision_library,
                    lambda: _torchvision_ops.register(sys.modules[__name__]))
add_builtin_library(_torchvision_image_ops.is_image_library,
                    lambda: _torchvision_image_ops.register(sys.modules[__name__]))
