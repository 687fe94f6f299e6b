"""Make the public callables from the operator table: the one place where
entries are created.

``ptcore.X``, ``Tensor.X`` and ``nn.functional.X`` are entries of the one
dispatch point (:func:`ptcore._dispatch.dispatcher.make_entry`).  An op
module lists its functions in ``__all__`` and its Tensor methods in
``_TENSOR_METHODS`` and ends with :func:`bind_module`, which makes each an
entry in the module's own namespace: from the moment the module is
importable its public names are entries (and calls between its own ops go
through them).  Each entry's OpDef finds its declaration
(:mod:`ptcore._dispatch.declarations`); the autograd layer gives it its
recording body when it loads (:func:`ptcore._dispatch.table.set_body_maker`),
and the entry reads the body from the table at each call.  The package
root attaches the method entries to ``Tensor`` (:func:`attach_methods`) and
binds the operator methods (:func:`bind_operators`) and the tensor core's
own methods (:func:`declare_core`).
"""
from ptcore._dispatch.table import declare, lookup, op_of, make_body
from ptcore._dispatch.dispatcher import make_entry, register_core_entry
from ptcore._dispatch.declarations import DECLARED, OPERATOR_FORMS
from ptcore._dispatch import dispatcher as D

__all__ = ["entry", "bind_module", "bind_functions", "attach_methods", "bind_operators",
           "declare_core", "CORE"]


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
        g[name] = made[name] = entry(opname, fn, family=family, namespace=namespace,
                                     public_name=name if opname != name else None)
    return made


def bind_module(g, family, namespace="ptcore"):
    """Called at the end of an op module's body with its ``globals()``: its
    public functions (``__all__``) become entries in its own namespace, and
    its ``_TENSOR_METHODS`` (name -> function) method entries, to be attached
    to ``Tensor`` by the package root (operator methods stay as they are:
    :func:`bind_operators` makes them)."""
    bind_functions(g, g.get("__all__", ()), family, namespace)
    methods = g.get("_TENSOR_METHODS")
    if methods:
        for name, fn in list(methods.items()):
            if not _is_op(fn) or name.startswith("__") or op_of(fn) is not None:
                continue
            methods[name] = entry(name, fn, kind="method", family=family)


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
    dflag = D.off_cpu_on
    devs = D.off_cpu
    name, target = form.method, form.reported_as
    d = declare(name, fn, "pointwise", "method", namespace="Tensor")
    d.raw = d.body = fn

    def op(self, *args):
        if (flag[0] or dflag[0] and (not self.is_cpu or devs(args))) and \
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
        if form.form == "plain":
            # it computes its op with the same arguments, for tensors and numbers:
            # the op's device fast path is its own (``a == b`` is ``a.eq(b)`` then)
            base = lookup(form.op, "Tensor")
            op_of(e).device_fast = base.device_fast if base is not None else None
        setattr(tensor_cls, name, e)


# names of the tensor-core methods (Cython ``_TensorBase`` and ``tensor.py``:
# views, conversions, metadata) declared in the table
CORE = set()

# the core methods that make tensors: entries of the dispatch point (a layer
# such as the tracer or __torch_function__ sees them); when no layer is on an
# entry calls the Cython method directly.  Metadata (size, dim, stride ...),
# conversions out of ptcore (item, tolist, numpy) and hooks stay plain.
CORE_ENTRIES = (
    "view", "view_as", "reshape", "reshape_as", "transpose", "swapaxes", "swapdims", "permute",
    "t", "expand", "expand_as", "broadcast_to", "unsqueeze", "squeeze", "flatten", "unflatten",
    "narrow", "select", "split", "split_with_sizes", "tensor_split", "chunk", "unbind",
    "contiguous", "clone", "detach", "to", "type_as", "float", "double", "half", "bfloat16",
    "int", "long", "bool", "byte", "char", "short", "cfloat", "cdouble", "chalf", "cpu",
    "__getitem__", "as_strided", "diagonal", "movedim", "moveaxis", "unfold", "new_empty",
    "new_zeros", "new_ones", "new_full", "new_tensor",
    # conversions to Python values: seen by the layers (the tracer warns)
    "item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__",
    # in-place random fills and the other tensor-making/mutating methods of the
    # class (forward AD zeroes a filled tensor's tangent, vmap applies its
    # randomness mode, __torch_function__ and the tracer see them)
    "normal_", "uniform_", "bernoulli_", "exponential_", "random_", "index_put_", "detach_",
    "new_empty_strided", "geqrf", "orgqr", "ormqr", "stft", "istft", "cuda", "pin_memory",
    "resize_", "resize_as_", "set_",
)


def declare_core(tensor_cls, skip=()):
    """Declare every public method of ``tensor_cls`` that is not an entry as
    a core op (kind ``"core"``).  The tensor-making ones (``CORE_ENTRIES``)
    get entries that the dispatcher puts on the class while a layer is on;
    with none on, the Cython methods are called directly (a view or
    ``a[i]`` stays at C speed).  Metadata methods are always direct."""
    for name in dir(tensor_cls):
        if name.startswith("_") and name not in CORE_ENTRIES and name != "__setitem__":
            continue
        if name in skip:
            continue
        fn = getattr(tensor_cls, name, None)
        if fn is None or isinstance(fn, type) or not callable(fn) or op_of(fn) is not None:
            continue
        if name in CORE_ENTRIES:
            e = entry(name, fn, kind="core", family="core", namespace="Tensor")
            own = tensor_cls.__dict__.get(name)
            register_core_entry(tensor_cls, name, own, e)
        else:
            declare(name, fn, "core", "core", namespace="Tensor")
        CORE.add(name)
