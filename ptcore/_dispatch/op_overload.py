"""Op handles: ``ptcore.ops.<ns>.<op>`` and its overloads (``torch._ops``).

An :class:`OpOverloadPacket` (``ptcore.ops.aten.add``) is an op with its
overloads; an :class:`OpOverload` (``ptcore.ops.aten.add.Tensor``) is one of
them, with its schema.  There is one object per overload in the process:
the ``func`` a ``TorchDispatchMode`` receives *is* ``ptcore.ops.aten.<op>.<overload>``,
so modes compare them with ``is``, ``==`` and ``in``, as with torch.

Calling an overload runs it through ptcore's dispatch point: the layer that
makes aten's ops callable (:mod:`ptcore._ops_namespace`) sets each
overload's implementation on first call through :data:`resolver`.  While a
dispatch mode handles an op, the overload it received runs that op's kernel
instead (:func:`bound_kernel`), so ``func(*args, **kwargs)`` in
``__torch_dispatch__`` reaches the kernel, below autograd.
"""
import threading

from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch.aten_schemas import overload_lines

__all__ = ["OpOverload", "OpOverloadPacket", "packet", "ptcore_only_packet",
           "register_custom", "remove_custom", "resolver", "kernel_call", "binding",
           "bound_kernels"]

# (namespace, name) -> packet: aten's ops (made on first use) and the custom ops
_PACKETS = {}
# (namespace, name) -> packet: ptcore ops a dispatch mode reports that torch has no op for
_PTCORE_ONLY = {}
# resolver[0](overload) -> the callable that runs ``overload`` through the
# dispatch point, or None (set by ptcore._ops_namespace)
resolver = [None]
# kernel_call[0](opdef, raw, args, kwargs): run an op's kernel, letting the
# dispatch modes below the current one see it (set by python_dispatch)
kernel_call = [None]
_tls = threading.local()


def _overload_name(line):
    head = line[:line.index("(")]
    return head.split(".", 1)[1] if "." in head else "default"


class OpOverloadPacket:
    """An op and its overloads (``torch._ops.OpOverloadPacket``).

    Attributes name the overloads (``packet.Tensor``, ``packet.default``);
    calling the packet picks the overload whose schema the arguments match
    (exact types first, then Python numbers for tensors), as torch does.
    """

    def __init__(self, namespace, name, lines=()):
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = f"ptcore.ops.{namespace}"
        self._namespace = namespace
        self._qualified_op_name = f"{namespace}::{name}"
        self._lines = {_overload_name(line): line for line in lines}
        self._overload_names = list(self._lines) or ["default"]
        self._overloads = {}
        # whether the overloads' schemas are known (aten's, a custom op's)
        self._known = bool(self._lines)

    # -- overloads -----------------------------------------------------------
    def overloads(self):
        """The overload names, in the order overload resolution tries them."""
        return list(self._overload_names)

    def _overload(self, name):
        ov = self._overloads.get(name)
        if ov is None:
            if name not in self._overload_names:
                return None
            ov = self._overloads[name] = OpOverload(self, name, self._lines.get(name))
        return ov

    def __getattr__(self, name):
        if name.startswith("__") or (name.startswith("_") and
                                     name not in self.__dict__.get("_overload_names", ())):
            raise AttributeError(name)      # (an overload may start with _: _RecordFunction)
        ov = self._overload(name)
        if ov is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")
        return ov

    def __dir__(self):
        return list(super().__dir__()) + self._overload_names

    @property
    def _schemas(self):
        return {n: self._overload(n)._schema for n in self._overload_names}

    @property
    def op(self):
        return self

    # -- calling ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if len(self._overload_names) == 1:
            return self._overload(self._overload_names[0])(*args, **kwargs)
        schema, _ = _op_schema.select([self._overload(n)._schema for n in self._overload_names],
                                      args, kwargs)
        return self._overload(schema.overload_name or "default")(*args, **kwargs)

    # -- identity ----------------------------------------------------------------
    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self.__name__}')>"

    def __str__(self):
        return f"{self._namespace}.{self.__name__}"

    def __reduce__(self):
        return (_packet_of, (self._namespace, self.__name__))

    def __deepcopy__(self, memo):
        return self


class OpOverload:
    """One overload of an op (``torch._ops.OpOverload``): ``ptcore.ops.aten.add.Tensor``.

    ``str`` gives ``"aten.add.Tensor"``, :meth:`name` ``"aten::add.Tensor"``;
    ``overloadpacket`` is the op's packet and ``_schema`` its
    :class:`~ptcore._dispatch.op_schema.FunctionSchema`.
    """

    def __init__(self, packet, overload_name, line=None, schema=None):
        self._overloadpacket = packet
        self._overloadname = overload_name
        self._line = line
        self._schema_obj = schema
        self._impl = None
        # (opdef, raw) of the last op a dispatch mode saw as this overload
        self._last_kernel = None
        ns, op = packet._namespace, packet.__name__
        self.__name__ = f"{op}.{overload_name}"
        self.__qualname__ = self.name()
        self.__module__ = f"ptcore.ops.{ns}"
        self.namespace = ns
        self.tags = ()

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def op(self):
        return self

    @property
    def _opname(self):
        return self._overloadpacket.__name__

    def name(self):
        p = self._overloadpacket
        ov = "" if self._overloadname == "default" else "." + self._overloadname
        return f"{p._namespace}::{p.__name__}{ov}"

    @property
    def _schema(self):
        s = self._schema_obj
        if s is None:
            p = self._overloadpacket
            line = self._line or f"{p.__name__}(...) -> ..."
            if self._line is None:
                # an op torch has no schema for: its name, no arguments known
                s = _op_schema.FunctionSchema(p._qualified_op_name, "", [], [])
            else:
                s = _op_schema.parse(line, namespace=p._namespace)
            self._schema_obj = s
        return s

    @property
    def is_view(self):
        s = self._schema
        return bool(s.returns) and s.returns[0].alias_info is not None and \
            not s.returns[0].alias_info.is_write

    # -- calling ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        stack = getattr(_tls, "bound", None)
        if stack:
            for func, opdef, raw in reversed(stack):
                if func is self:
                    # a dispatch mode's handler: the op's kernel, below autograd
                    return kernel_call[0](opdef, raw, args, kwargs)
        impl = self._impl
        if impl is None:
            r = resolver[0]
            impl = self._impl = r(self) if r is not None else None
            if impl is None:
                return self._kernel_of_last_call(*args, **kwargs)
        return impl(*args, **kwargs)

    def _kernel_of_last_call(self, *args, **kwargs):
        last = self._last_kernel
        if last is None:
            raise NotImplementedError(f"{self.name()}: ptcore has no implementation of this "
                                      "operator")
        return last[1](*args, **kwargs)

    # -- identity ----------------------------------------------------------------
    def __repr__(self):
        p = self._overloadpacket
        return f"<OpOverload(op='{p._namespace}.{p.__name__}', overload='{self._overloadname}')>"

    def __str__(self):
        p = self._overloadpacket
        return f"{p._namespace}.{p.__name__}.{self._overloadname}"

    def __reduce__(self):
        p = self._overloadpacket
        return (_overload_of, (p._namespace, p.__name__, self._overloadname))

    def __deepcopy__(self, memo):
        return self


def bound_kernels():
    """The ``(func, opdef, raw)`` of the calls dispatch modes' handlers are
    handling on this thread, innermost last."""
    return getattr(_tls, "bound", None) or ()


class binding:
    """Context: while a dispatch mode handles the call, ``func`` runs ``raw``
    (the kernel of ``opdef``) when the handler calls it."""

    __slots__ = ("entry",)

    def __init__(self, func, opdef, raw):
        self.entry = (func, opdef, raw)
        func._last_kernel = (opdef, raw)

    def __enter__(self):
        stack = getattr(_tls, "bound", None)
        if stack is None:
            stack = _tls.bound = []
        stack.append(self.entry)

    def __exit__(self, *exc):
        _tls.bound.pop()
        return False


# ---------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------

def packet(namespace, name):
    """The packet of op ``namespace::name``, or None when there is no such op."""
    p = _PACKETS.get((namespace, name))
    if p is None and namespace == "aten":
        lines = overload_lines().get(name)
        if lines:
            p = _PACKETS[(namespace, name)] = OpOverloadPacket(namespace, name, lines)
    return p


def ptcore_only_packet(namespace, name):
    """The packet a dispatch mode receives for a ptcore op that torch has no op
    for (it has one overload, ``default``, and no known schema)."""
    p = _PTCORE_ONLY.get((namespace, name))
    if p is None:
        p = _PTCORE_ONLY[(namespace, name)] = OpOverloadPacket(namespace, name)
    return p


def register_custom(namespace, name, schema_text, impl):
    """Make (or replace) the packet of custom op ``namespace::name``, its one
    overload ``default`` running ``impl``; returns the packet."""
    p = OpOverloadPacket(namespace, name)
    ov = p._overload("default")
    ov._schema_obj = _op_schema.parse(schema_text, namespace=namespace, name=name)
    ov._impl = impl
    p._known = True
    _PACKETS[(namespace, name)] = p
    return p


def register_builtin(namespace, name, impls):
    """Make the packet of a torch built-in op outside aten (``profiler::
    _record_function_exit``): ``impls`` maps each overload's schema line, as torch
    prints it (``"_record_function_exit._RecordFunction(...) -> ()"``), to the
    function that runs it; returns the packet."""
    p = OpOverloadPacket(namespace, name, tuple(impls))
    for line, impl in impls.items():
        p._overload(_overload_name(line))._impl = impl
    _PACKETS[(namespace, name)] = p
    return p


def remove_custom(namespace, name):
    _PACKETS.pop((namespace, name), None)


def _packet_of(namespace, name):
    p = packet(namespace, name) or _PTCORE_ONLY.get((namespace, name))
    if p is None:
        raise AttributeError(f"'{namespace}.{name}' is not an op")
    return p


def _overload_of(namespace, name, overload):
    return getattr(_packet_of(namespace, name), overload)
