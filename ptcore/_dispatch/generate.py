"""Make the public callables from the operator table: the one place where
entries are created.

``ptcore.X``, ``Tensor.X`` and ``nn.functional.X`` are entries of the one
dispatch point (:func:`ptcore._dispatch.dispatcher.make_entry`).  An op
module lists its functions in ``__all__`` and ends with :func:`bind_module`,
which makes each an entry in the module's own namespace: from the moment the
module is importable its public names are entries (and calls between its own
ops go through them).  The same call makes the module's Tensor methods from
the declarations (:mod:`ptcore._dispatch.declarations`): an op declared with
the ``method`` variant is ``Tensor.X``, an entry of the same function, and
``Tensor.X_`` (``inplace``) the module's ``X_``; where the method is written
apart (another signature, a property, an operator method's body) the module
marks that implementation with :func:`method_form`.  Each entry's OpDef
finds its declaration; the autograd layer gives it its recording body when it
loads (:func:`ptcore._dispatch.table.set_body_maker`), and the entry reads the
body from the table at each call.  The package root attaches each module's
methods to ``Tensor`` (:func:`methods_of`, :func:`attach_methods`) and binds
the operator methods (:func:`bind_operators`) and the tensor core's own
methods (:func:`declare_core`).
"""
import sys

from ptcore._tensor import _TensorBase
from ptcore._dispatch.table import declare, lookup, op_of, make_body
from ptcore._dispatch.dispatcher import make_entry, register_core_entry
from ptcore._dispatch.declarations import (DECLARED, OPERATOR_FORMS, PROTOCOL_METHODS, base_of,
                                           declaration_of)
from ptcore._dispatch import dispatcher as D
from ptcore._dispatch.device import follow_fast_forms

__all__ = ["entry", "bind_module", "bind_functions", "method_form", "methods_of",
           "attach_methods", "bind_operators", "declare_core", "CORE"]


def entry(name, raw, body=None, kind="function", family="", factory=None, public_name=None,
          namespace=None):
    """The public callable for op ``name`` (kind ``"function"`` or
    ``"method"``) implemented by ``raw``; ``body`` is ``raw`` under autograd
    recording (default ``raw``), ``factory(kernel)`` rebuilds that body over
    another kernel (for dispatch-level modes)."""
    d = declare(name, raw, family, kind, namespace=namespace)
    d.raw = raw
    d.body = body if body is not None else raw
    d._body_factory = factory
    d._hooked_body = None
    if body is None:
        make_body(d)
    return make_entry(d, public_name=public_name)


def _is_op(fn):
    return callable(fn) and not isinstance(fn, (type, property, staticmethod, classmethod))


def bind_functions(g, names, family, namespace="ptcore"):
    """Make ``g[name]`` an entry for each of ``names`` (``g``: the globals of
    the module being defined, which owns them); returns ``{name: entry}``.
    In the ``linalg`` group an op's name is torch's ``linalg_X`` where one is
    declared (``linalg.inv`` is the op ``linalg_inv``)."""
    made = {}
    for name in names:
        fn = g.get(name)
        if not _is_op(fn) or name.startswith("__") or op_of(fn) is not None:
            continue
        opname = name
        if namespace == "linalg" and ("linalg", "linalg_" + name) in DECLARED:
            opname = "linalg_" + name
        # (named as bound: an alias of another op's function is ``arctan``, not ``atan``)
        g[name] = made[name] = entry(opname, fn, family=family, namespace=namespace,
                                     public_name=name)
    return made


# Tensor attributes written apart from their op's function, marked by method_form:
# module name -> {attribute name: implementation}, until that module's bind_module
_FORMS = {}
# the Tensor attributes made for each module (by bind_module, or marked in a module that
# binds no op): module name -> {name: method entry, or a plain attribute}
_METHODS = {}
# Tensor method name -> the module that made it, and whether from a method_form
_MADE_BY = {}


def method_form(name, impl=None):
    """Mark ``impl`` as ``Tensor.<name>`` where the method is not its op's function:
    torch's method signature differs (``Tensor.norm``, ``Tensor.where``), the in-place
    form is written apart, the op has a method form only under another name, or the
    attribute is no op (a property, an operator method's implementation, a removed
    function's stub).  A decorator (``@method_form("norm")``) or a call with the
    implementation; returns it.  The calling module's :func:`bind_module` makes it the
    method entry (a lambda is named ``Tensor.<name>``)."""
    module = sys._getframe(1).f_globals["__name__"]     # the module whose code marks it

    def mark(fn):
        if getattr(fn, "__name__", None) == "<lambda>":
            fn.__name__ = name
            fn.__qualname__ = "Tensor." + name
        forms = _FORMS.setdefault(module, {})
        if name in forms:
            raise ValueError(f"Tensor.{name}: two method forms in {module}")
        forms[name] = fn
        return fn
    return mark if impl is None else mark(impl)


def _own(g, name):
    """``g[name]``'s function if the module of ``g`` defines it (its raw
    function where it is an entry already), else None."""
    fn = g.get(name)
    d = op_of(fn)
    if d is not None:
        fn = d.raw
    if not _is_op(fn) or getattr(fn, "__module__", None) != g.get("__name__"):
        return None
    return fn


def _declared_methods(g, bound):
    """``(name, function)`` of the Tensor methods the declarations give the
    module of ``g``: ``X`` for each op it binds (``bound``) declared with the
    ``method`` variant, and ``X_`` (``inplace``) where the module defines it;
    and the forms the module defines of ops it binds no function of: ``X``
    declared ``method`` without ``function`` (``Tensor.repeat``), ``X_``
    declared ``inplace`` with ``method`` or without ``function``
    (``squeeze_``, ``fill_diagonal_``)."""
    for name in bound:
        d = DECLARED.get(("ptcore", name))
        if d is None or "method" not in d.variants:
            continue
        yield name, op_of(bound[name]).raw
        if "inplace" in d.variants:
            fn_ = _own(g, name + "_")
            if fn_ is not None:
                yield name + "_", fn_
    for name in list(g):
        if name in bound or name.startswith("_"):
            continue
        fn = _own(g, name)
        key = base_of("Tensor", name)
        d = DECLARED.get(key) if fn is not None else None
        if d is None:
            continue
        if name == d.name:
            if "method" in d.variants and "function" not in d.variants:
                yield name, fn
        elif "inplace" in d.variants and ("method" in d.variants or "function" not in d.variants):
            yield name, fn


def bind_module(g, family, namespace="ptcore"):
    """Called at the end of an op module's body with its ``globals()``: its
    public functions (``__all__``) become entries in its own namespace, and
    its Tensor methods (see :func:`_declared_methods` and :func:`method_form`)
    method entries, to be attached to ``Tensor`` by the package root
    (:func:`methods_of`).  A method the tensor core (``_TensorBase``) defines
    stays the core's; operator methods stay as they are (:func:`bind_operators`
    makes them).  Each Tensor method is made by one module: a method form wins
    over a declared method of another module bound after it; two modules making
    the same method fail here."""
    module = g.get("__name__")
    bound = bind_functions(g, g.get("__all__", ()), family, namespace)
    methods = _METHODS.setdefault(module, {})
    for name, fn in _FORMS.pop(module, {}).items():
        _claim(name, module, True)
        methods[name] = fn
    if namespace == "ptcore":
        for name, fn in _declared_methods(g, bound):
            if name in methods or name in vars(_TensorBase):
                continue
            if _MADE_BY.get(name, (None, False))[1]:
                continue        # written apart by the module that has its method form
            _claim(name, module, False)
            methods[name] = fn
    for name, fn in list(methods.items()):
        if not _is_op(fn) or name.startswith("__") or op_of(fn) is not None:
            continue
        methods[name] = entry(name, fn, kind="method", family=family, public_name=name)


def _claim(name, module, form):
    prev = _MADE_BY.get(name)
    if prev is not None and prev[0] != module:
        raise ValueError(f"Tensor.{name} is made by both {prev[0]} and {module} "
                         f"(mark the one that is the method with method_form)")
    _MADE_BY[name] = (module, form)


def methods_of(module):
    """The Tensor attributes made for ``module`` (name -> method entry or
    plain attribute): its :func:`bind_module`'s, or, for a module that binds
    no op, the attributes it marked with :func:`method_form`."""
    name = module.__name__
    pending = _FORMS.pop(name, None)
    if pending:
        for attr in pending:
            _claim(attr, name, True)
        _METHODS.setdefault(name, {}).update(pending)
    return dict(_METHODS.get(name, {}))


def attach_methods(tensor_cls, methods, operators=None):
    """Put the method entries (and plain methods, properties) of ``methods``
    on ``tensor_cls``; the operator methods' implementations among them go
    to the dict ``operators`` instead (:func:`bind_operators` makes them)."""
    for name, fn in methods.items():
        if operators is not None and name in OPERATOR_FORMS and op_of(fn) is None:
            operators[name] = fn
            continue
        setattr(tensor_cls, name, fn)


def _reported(tensor_cls, form, fn):
    """Operator method ``form.method``: ``fn`` when no layer is on, else the call
    of method ``form.reported_as`` (which the layers then see), as torch reports it."""
    from numbers import Number
    flag = D.on
    scan = D.arg_scan
    route = D._route_args
    name, target = form.method, form.reported_as
    d = declare(name, fn, "pointwise", "method", namespace="Tensor")
    d.raw = d.body = fn

    def op(self, *args):
        # (an argument off the CPU with the device layer on, or a sparse one: the entry)
        if (flag[0] or scan[0] and route((self,) + args, None)) and \
                all(isinstance(a, (tensor_cls, Number)) for a in args):
            return getattr(tensor_cls, target)(self, *args)
        return fn(self, *args)
    op.__name__ = form.name
    op.__qualname__ = "Tensor." + name
    op.__doc__ = getattr(fn, "__doc__", None)
    D._register_entry(op, d)
    return op


def bind_operators(tensor_cls, impls):
    """Make the operator methods of ``tensor_cls`` (namespace Tensor) from
    ``impls`` (operator method name -> implementation, or an entry already:
    the fast binary operators, ``__neg__`` is ``ptcore.neg``), as
    :data:`~ptcore._dispatch.declarations.OPERATOR_FORMS` declares them."""
    for name, form in OPERATOR_FORMS.items():
        fn = impls.get(name)
        if fn is None:
            continue
        if op_of(fn) is not None:
            setattr(tensor_cls, name, fn)
            continue
        target = form.reported_as
        if target is not None and callable(getattr(tensor_cls, target, None)):
            setattr(tensor_cls, name, _reported(tensor_cls, form, fn))
            continue
        e = entry(name, fn, kind="method", family="pointwise", namespace="Tensor",
                  public_name=form.name)
        base = None
        if form.form == "plain":
            # it computes its op with the same arguments, for tensors and numbers:
            # the op's fast forms are its own (``a == b`` is ``a.eq(b)`` then)
            base = lookup(form.op, "Tensor")
        elif form.form == "inplace":
            # ``a &= b`` is ``a.bitwise_and_(b)``: that method's fast forms
            base = lookup(form.op + "_", "Tensor")
        if base is not None:
            follow_fast_forms(op_of(e), base)
        setattr(tensor_cls, name, e)


# names of the tensor-core methods (Cython ``_TensorBase`` and ``tensor.py``:
# views, conversions, metadata) declared in the table
CORE = set()


def _core_entry(name):
    """Whether the tensor-core method ``Tensor.<name>`` is an entry of the
    dispatch point: its op declares the form ``core_entry`` (a protocol
    method, its ``core_entry`` row of PROTOCOL_METHODS)."""
    p = PROTOCOL_METHODS.get(name)
    if p is not None:
        return p.core_entry
    d = declaration_of("Tensor", name)
    if d is None:
        return False
    return ("method" if name == d.name else "inplace" if name == d.name + "_" else None) \
        in d.core_entry


def declare_core(tensor_cls, skip=()):
    """Declare every public method of ``tensor_cls`` that is not an entry as
    a core op (kind ``"core"``).  The tensor-making ones (the forms their
    declarations name ``core_entry``: views, conversions, in-place fills) get
    entries that the dispatcher puts on the class while a layer is on; with
    none on, the Cython methods are called directly (a view or ``a[i]``
    stays at C speed).  Metadata methods are always direct."""
    for name in dir(tensor_cls):
        if name.startswith("_") and name not in PROTOCOL_METHODS:
            continue
        if name in skip:
            continue
        fn = getattr(tensor_cls, name, None)
        if fn is None or isinstance(fn, type) or not callable(fn) or op_of(fn) is not None:
            continue
        if _core_entry(name):
            e = entry(name, fn, kind="core", family="core", namespace="Tensor")
            own = tensor_cls.__dict__.get(name)
            register_core_entry(tensor_cls, name, own, e)
        else:
            declare(name, fn, "core", "core", namespace="Tensor")
        CORE.add(name)
