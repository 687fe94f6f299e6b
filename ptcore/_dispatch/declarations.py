"""One declaration per op: everything ptcore knows about an op, in one place.

An op is ``name`` in its *group*: ``"ptcore"`` (the function ``ptcore.X``
and the method ``Tensor.X`` are one op), ``"nn.functional"``, ``"linalg"``,
``"fft"`` or ``"special"``.  It is declared once, by a call of the ``op``
function of its family in ``ptcore/_ops/declarations/<family>.py``, as
``native_functions.yaml`` declares PyTorch's::

    op = family("pointwise")
    op("exp", "function method inplace out", autocast="fp32")

and every layer reads the declaration from :data:`DECLARED` (through the
op's :class:`~ptcore._dispatch.table.OpDef`).  A declaration holds:

``variants``  the forms the op has, among :data:`KINDS`: ``function``
              (``ptcore.X`` or ``<group>.X``), ``method`` (``Tensor.X``),
              ``inplace`` (``X_``), ``out`` (takes ``out=``) and
              ``operator`` (a Python operator method of ``Tensor``
              computes it; :data:`OPERATOR_FORMS` says which).
``tags``      among :data:`TAGS`: ``random`` (draws from a generator),
              ``nondeterministic`` (its kernels may accumulate in a varying
              order: ``jit.trace``'s check warns of it and the jit passes
              treat it as impure; ``use_deterministic_algorithms`` only
              records its flag),
              ``factory`` (makes a tensor from no tensor argument),
              ``metadata`` (answers from its tensor's metadata alone --
              sizes, dtype, device, contiguity -- never reading an element:
              TorchScript answers it for a parameter when it compiles).
``autocast``  the op's autocast category: ``"lower"`` (runs in the autocast
              dtype), ``"fp32"`` or ``"promote"`` (the widest floating
              dtype of its arguments); None when autocast leaves it alone.
``autocast_cpu`` the op's category on CPU where PyTorch's CPU policy differs
              from ``autocast`` (None: the same): one of :data:`AUTOCAST`,
              ``"none"`` (left alone), ``"off"`` (run with autocast off, so
              its parts are not cast either) or ``"norm"`` (a lower-precision
              input with float32 parameters computed in float32, returned in
              the input's dtype).  The categories that depend on the call's
              arguments are rules registered in :mod:`ptcore._dispatch.autocast`.
``device``    ``"kernel"`` (the default: a call with a tensor off the CPU runs
              the op's kernel for that device, and is refused where the
              device has none), ``"through"`` (the op touches no element
              itself -- a view, a metadata query, or a composite written with
              other ops' entries, each of which meets the device layer
              itself -- so the device layer lets it through to its body) or
              ``"frontend"`` (the op's front-end is its kernel on a device
              that registers the loops it runs, see
              :func:`ptcore._dispatch.device.register_loop`: the device's op
              registration installs it, with
              :func:`ptcore._dispatch.device.register_frontends`, before its
              own kernels, so a kernel the device registers for one of the
              op's forms replaces it there; on a device that installs none,
              the op is refused as a ``"kernel"`` op).
``grad``      how autograd records the op: ``"formula"`` (one node, with the
              backward formula of the op's name in
              :mod:`ptcore.autograd._formulas`), ``"inside"`` (the op's
              function records what it computes itself: a composite of
              differentiable entries, or a function that attaches its own
              nodes), ``"none"`` (not differentiable: results never record,
              and the in-place form still refuses leaves that require grad)
              or ``"not_implemented"`` (backward raises torch's "the
              derivative for 'X' is not implemented").
``jvp``       how forward-mode AD treats the op's out-of-place forms, when
              not by its rule in :mod:`ptcore.autograd._jvp_formulas` (None):
              ``"same"`` (linear, a view included: the tangent is the op
              applied to the tangents), ``"none"`` (the results carry no
              tangent: indices, metadata, new tensors), ``"zero"`` (a
              sampler: a zero tangent when a parameter has one) or
              ``"inside"`` (a random composite whose inner ops carry the
              tangents).  In-place forms follow the in-place rule (but for
              ``"none"``, which holds for every form).
``jvp_inplace`` how forward-mode AD treats the op's in-place form ``X_``,
              when not by the in-place rule on the old value: ``"same"`` (it
              changes metadata only: the tangent gets the same in-place op,
              ``t_``, ``squeeze_``, ``resize_``) or ``"linear"`` (its rule reads
              no old value of ``self``, which is not kept: ``add_``,
              ``index_put_``); None.
``out_dtype``  the position of the op's ``out_dtype`` parameter, where torch
              has an ``out_dtype`` overload (``aten::mm.dtype``), which has no
              derivative in either mode; None.
``batch``     how ``vmap`` runs the op once over a whole batch, when it has
              no rule of its own in :mod:`ptcore.func` (None: one call per
              sample): ``"pointwise"`` (the batch dims aligned and
              broadcast), ``"reduce"`` (reduces over its ``dim``, over every
              dim when ``dim`` is None), ``"reduce_dims"`` (the same, ``dim``
              may list several), ``"dims"`` (several dims, never all),
              ``"scan"`` (``dim`` kept: scans, softmax, sort), ``"dim"``
              (one ``dim``: topk, kthvalue, mode) or ``"loop"`` (one call
              per sample, where the family's default would batch it).
              Every form of the op shares it.
``alias``     the op this one is another name of (``arccos`` of ``acos``):
              the same function, so the same body, kernels, formula and fast
              path, JVP and batching treatment; an alias declares its variants,
              tags and autocast category, and the rest comes from its op.
``fast``      the C fast path of the op's elementwise kernel, or None:
              ``"binary:<k>"`` (binary kernel ``k`` of the CPU driver, taken
              for host and device tensors alike, in place too),
              ``"device_binary:<k>"`` (the same on devices only),
              ``"unary"`` (the unary kernel of the op's name, on devices),
              ``"compare:<k>"`` (comparison kernel ``k``, on devices) or
              ``"integer:<k>"`` (binary kernel ``k`` of two integer or bool
              tensors, on devices, in place too: the bitwise ops).
``inplace_fn`` True where the function ``ptcore.X_`` is the in-place method
              ``Tensor.X_`` called as a function (torch's ``torch.abs_``):
              :mod:`ptcore._ops.pointwise_composite` makes it.  The op has
              the ``inplace`` variant; the in-place function forms written
              apart (``ptcore.cos_``, ``ptcore.celu_`` ...) do not declare it.
``method_fn`` True where the function ``ptcore.X`` is the tensor core's
              method ``Tensor.X`` called as a function (``ptcore.transpose(x,
              0, 1)`` is ``x.transpose(0, 1)``): :mod:`ptcore` makes it.  The
              op has the ``function`` and ``method`` variants.
``foreach``   True where torch has the op's unary list forms ``_foreach_X``
              and ``_foreach_X_`` (the method over each tensor of a list):
              :mod:`ptcore._ops.foreach` makes them.  The op has the
              ``method`` and ``inplace`` variants.
``copy_of``   the Tensor method (a view op, ``"alias"`` the tensor itself)
              whose result the op returns a contiguous copy of, for
              torch's ``X_copy`` ops that :mod:`ptcore._ops.shape_composite`
              makes from the method (``view_copy`` of ``view``); None.
``data_dependent`` None, or why the op's result cannot be computed from
              its arguments' metadata alone (the meta device refuses it):
              ``"output"`` (its size or value depends on the elements:
              torch's data-dependent error) or ``"item"`` (it reads an
              element: torch's "Tensor.item() cannot be called on meta
              tensors").
``default_device`` True where the function form takes the default device
              (``ptcore.set_default_device``, ``with ptcore.device(d):``)
              when the call names none: torch's ``_device_constructors``,
              read by :mod:`ptcore._dispatch.default_device`.  The op has the
              ``function`` variant.
``layout_bound`` True where the op's result depends on its input's memory
              layout (strides), not only its values (``as_strided``,
              ``set_``): the AOT backward tracer of :mod:`ptcore._inductor.aot`
              does not bake in a formula that calls it.
``correction`` True where torch's Python API reaches the op's ``correction``
              overload first (``x.var(0)`` is ``aten.var.correction``, ``unbiased``
              given as ``correction`` 1 or 0): what a dispatch mode receives
              (:mod:`ptcore._dispatch.python_dispatch`).
``grad_fallback`` True where torch has no derivative formula for the op at
              all: its autograd fallback records a node named ``NotImplemented`` whose
              backward raises RuntimeError, where derivatives.yaml's
              ``not_implemented()`` raises NotImplementedError from a node named
              after the op (:func:`ptcore.autograd._record.not_implemented`).
``core_entry`` the forms of the op, among ``method`` (``Tensor.X``) and
              ``inplace`` (``Tensor.X_``), that the tensor core implements
              (Cython ``_TensorBase``, ``ptcore.tensor``) and that make or
              change tensors: :func:`ptcore._dispatch.generate.declare_core`
              makes them entries of the dispatch point, which the dispatcher
              puts on the class while a layer is on (the tracer,
              ``__torch_function__``, forward AD and vmap see them); with no
              layer on the Cython method is called directly.  The core's
              other methods (metadata, hooks) stay plain.  Empty by default.
``script_tensor`` True where :func:`ptcore.jit.script` knows that the method
              ``Tensor.X`` (the out-of-place form) called on a Tensor returns
              a Tensor, so the value is typed as one (the methods that may
              return numbers, tuples or lists are not declared: their results'
              types stay unknown).
``pure_view``  True where the op (its out-of-place function or method) only
              makes a view of its input and writes nothing: the fusion
              planner of :mod:`ptcore.jit._fusion` keeps a run open across it
              (the table's ``view`` tag is the shape family's, which holds
              scatters and in-place writes too).
``beyond_torch`` the op's variants that torch does not have (``Tensor.maximum_``,
              ``Tensor.rsub``): ptcore's own additions, which a layer mirroring
              torch's surface leaves out (:mod:`ptcore.masked`).  Empty by default.
``tf_args``   (``nn.functional`` ops only) how many leading parameters
              torch's Python function hands ``__torch_function__``
              positionally, the others by keyword with their defaults
              filled in -- the call :mod:`ptcore.fx` records, as torch's
              tracer does; None: the call's arguments as given.

How the forms of an op share its facts: ``random`` and ``nondeterministic``
hold for every form, ``factory`` for the function form only, and the
autocast category for the out-of-place function and method (not the
in-place form nor the operator methods, which call the op's entry again).
Tags that follow from the family or the form (``pointwise``, ``view``,
``inplace`` ...) are added by the table and not declared.
"""

__all__ = ["KINDS", "TAGS", "AUTOCAST", "OPERATOR_FORMS", "OPERATOR_METHODS", "OperatorMethod",
           "PROTOCOL_METHODS", "ProtocolMethod", "Declaration", "DECLARED", "family",
           "resolve_aliases", "declaration_of", "base_of", "variants_of", "same_call_as",
           "form_tags", "form_autocast", "form_jvp"]

KINDS = ("function", "method", "inplace", "out", "operator")
TAGS = ("random", "nondeterministic", "factory", "metadata")
AUTOCAST = ("lower", "fp32", "promote")
AUTOCAST_CPU = AUTOCAST + ("none", "off", "norm")
DEVICE = ("kernel", "through", "frontend")
GRAD = ("formula", "inside", "none", "not_implemented")
JVP = ("same", "none", "zero", "inside")
JVP_INPLACE = ("same", "linear")
BATCH = ("pointwise", "reduce", "reduce_dims", "dims", "scan", "dim", "loop")
FAST_KINDS = ("binary", "device_binary", "unary", "compare", "integer")
DATA_DEPENDENT = ("output", "item")
GROUPS = ("ptcore", "nn.functional", "linalg", "fft", "special")


class OperatorMethod:
    """One Python operator method of ``Tensor`` (a row of :data:`OPERATOR_FORMS`).

    ``op``           the op it computes.
    ``form``         ``"plain"`` (``__add__``), ``"reflected"`` (``__radd__``:
                     ``other + self``) or ``"inplace"`` (``__iadd__``), by its name.
    ``reported_as``  the Tensor method torch hands ``__torch_function__`` (and
                     ptcore every layer) for a call of it, when not the method
                     itself: ``a > b`` is ``Tensor.gt``, ``a += b`` ``Tensor.add_``.
    ``name``         its ``__name__``: torch's is another where the method *is*
                     another (``__pow__`` is ``Tensor.pow``, ``__rtruediv__``
                     ``__rdiv__``); else the method's own name.
    ``aten``         the aten op it is (what ``TorchDispatchMode`` and the profiler
                     show), or None where torch has none (most reflected forms are
                     Python functions calling another op).  By rule the op for a
                     plain form, the op's in-place form (``add_``) for an in-place
                     one, None for a reflected one.
    ``autograd_fast`` autograd makes it (with its recording fast path), not
                     :func:`ptcore._dispatch.generate.bind_operators`.
    ``syntax``       the Python code that calls a plain or in-place form, as a
                     template of its operands (``"{} + {}"``, ``"-{}"``, ``"{} += {}"``),
                     or None (reflected forms, ``abs()``, Python 2's ``__div__``).
    ``script_prim``  a scripted graph's generic operator of the method's Python
                     operator (``prim::add``, ``prim::truediv``, ``prim::neg``) is this
                     method when its operand is a Tensor (the plain form: the first;
                     the reflected form: the second, the first a number), as
                     ``jit.trace`` records it; the floordiv/mod/matmul/bitwise prims
                     stay prims.
    """
    __slots__ = ("method", "op", "form", "reported_as", "name", "aten", "autograd_fast",
                 "syntax", "script_prim")

    def __init__(self, method, op, form, syntax, reported_as, name, aten, autograd_fast,
                 script_prim):
        self.method, self.op, self.form, self.syntax = method, op, form, syntax
        self.reported_as, self.name, self.aten = reported_as, name or method, aten
        self.autograd_fast, self.script_prim = autograd_fast, script_prim

    def __repr__(self):
        return f"<operator method Tensor.{self.method}: {self.form} form of {self.op}>"


def _operator_methods(op, names, syntax=None, **facts):
    """The rows of ``op``'s operator methods ``names`` (its plain, reflected and
    in-place forms, by their names); ``syntax`` the plain form's (the in-place
    form's follows: ``{} + {}`` makes ``{} += {}``);
    ``facts``: method -> dict of the facts that differ from the rule."""
    rows = {}
    plain = names.split()[0]
    for method in names.split():
        f = dict(facts.get(method, ()))
        if method == plain:
            form, sym, aten = "plain", syntax, op
        elif method == "__r" + plain[2:]:
            form, sym, aten = "reflected", None, None
        elif method == "__i" + plain[2:]:
            form, sym, aten = "inplace", syntax and syntax.replace(" {}", "= {}"), op + "_"
        else:
            raise ValueError(f"{method} is no form of {plain}")
        aten = f.pop("aten", aten)
        rows[method] = OperatorMethod(method, op, form, sym, f.pop("reported_as", None),
                                      f.pop("name", None), aten, f.pop("autograd_fast", False),
                                      f.pop("script_prim", False))
        if f:
            raise ValueError(f"{method}: unknown facts {sorted(f)}")
    return rows


_FAST = {"autograd_fast": True}
_S = {"script_prim": True}
_m = _operator_methods

# Tensor's Python operator methods: what each computes, and how torch names and
# reports it where that is not the rule of OperatorMethod
OPERATOR_FORMS = {
    **_m("add", "__add__ __radd__ __iadd__", "{} + {}",
         __add__=dict(_FAST, **_S, reported_as="add"),
         __radd__=dict(_FAST, **_S, reported_as="add", aten="add"),
         __iadd__=dict(reported_as="add_")),
    **_m("sub", "__sub__ __rsub__ __isub__", "{} - {}",
         __sub__=dict(_FAST, **_S, reported_as="sub"), __rsub__=dict(aten="rsub"),
         __isub__=dict(reported_as="sub_")),
    **_m("mul", "__mul__ __rmul__ __imul__", "{} * {}",
         __mul__=dict(_FAST, **_S, reported_as="mul"),
         __rmul__=dict(_FAST, **_S, reported_as="mul", aten="mul"),
         __imul__=dict(reported_as="mul_")),
    **_m("div", "__truediv__ __rtruediv__ __itruediv__", "{} / {}",
         __truediv__=dict(_FAST, **_S, reported_as="div"), __rtruediv__=dict(name="__rdiv__"),
         __itruediv__=dict(reported_as="div_", name="__idiv__")),
    **_m("div", "__div__ __rdiv__", __div__=dict(reported_as="div")),
    **_m("floor_divide", "__floordiv__ __rfloordiv__ __ifloordiv__", "{} // {}",
         __ifloordiv__=dict(reported_as="floor_divide_")),
    **_m("remainder", "__mod__ __rmod__ __imod__", "{} % {}",
         __mod__=dict(reported_as="remainder"), __imod__=dict(reported_as="remainder_")),
    **_m("pow", "__pow__ __rpow__ __ipow__", "{} ** {}",
         __pow__=dict(_S, name="pow"), __ipow__=dict(name="pow_")),
    **_m("matmul", "__matmul__ __rmatmul__ __imatmul__", "{} @ {}",
         __matmul__=dict(reported_as="matmul"),
         __imatmul__=dict(aten=None)),             # torch has no ``@=``
    # torch's bitwise operators are aten ops of their own names (``aten::__and__``)
    **_m("bitwise_and", "__and__ __rand__ __iand__", "{} & {}",
         __and__=dict(aten="__and__"), __rand__=dict(reported_as="bitwise_and"),
         __iand__=dict(aten="__iand__")),
    **_m("bitwise_or", "__or__ __ror__ __ior__", "{} | {}",
         __or__=dict(aten="__or__"), __ror__=dict(reported_as="bitwise_or"),
         __ior__=dict(aten="__ior__")),
    **_m("bitwise_xor", "__xor__ __rxor__ __ixor__", "{} ^ {}",
         __xor__=dict(aten="__xor__"), __rxor__=dict(reported_as="bitwise_xor"),
         __ixor__=dict(aten="__ixor__")),
    **_m("bitwise_left_shift", "__lshift__ __rlshift__ __ilshift__", "{} << {}",
         __lshift__=dict(aten="__lshift__"), __ilshift__=dict(aten="__ilshift__")),
    **_m("bitwise_right_shift", "__rshift__ __rrshift__ __irshift__", "{} >> {}",
         __rshift__=dict(aten="__rshift__"), __irshift__=dict(aten="__irshift__")),
    **_m("eq", "__eq__", "{} == {}", __eq__=_S),
    **_m("ne", "__ne__", "{} != {}", __ne__=dict(_S, reported_as="ne")),
    **_m("lt", "__lt__", "{} < {}", __lt__=dict(_S, reported_as="lt")),
    **_m("le", "__le__", "{} <= {}", __le__=dict(_S, reported_as="le")),
    **_m("gt", "__gt__", "{} > {}", __gt__=dict(_S, reported_as="gt")),
    **_m("ge", "__ge__", "{} >= {}", __ge__=dict(_S, reported_as="ge")),
    **_m("neg", "__neg__", "-{}", __neg__=dict(_S, name="neg")),
    **_m("abs", "__abs__", __abs__=dict(name="abs")),
    **_m("positive", "__pos__", "+{}", __pos__=dict(name="positive")),
    **_m("bitwise_not", "__invert__", "~{}"),
}
del _FAST, _S, _m

# operator method -> the op it computes (a view of OPERATOR_FORMS)
OPERATOR_METHODS = {m: f.op for m, f in OPERATOR_FORMS.items()}

class ProtocolMethod:
    """A Python protocol method of the tensor core that is an entry of the table
    (indexing, conversions to Python numbers), not a form of an op.

    ``aten``  the aten op torch's profiler shows for a call (None: the method's name).
    ``jvp``   how forward-mode AD treats it: ``"same"`` (a view: the same indexing
              of the tangent), ``"inplace"`` (it writes into ``self``: an in-place
              op, whose tangent rule :mod:`ptcore.autograd._jvp_formulas`
              registers) or ``"none"`` (a Python value: no tangent).
    ``core_entry`` the method is an entry of the dispatch point while a layer is
              on, as a declared op's ``core_entry`` form (the layers see it).
    ``pure_view`` it only makes a view of the tensor, as a declared op's
              ``pure_view`` fact.
    """
    __slots__ = ("aten", "jvp", "core_entry", "pure_view")

    def __init__(self, aten, jvp, core_entry=True, pure_view=False):
        self.aten, self.jvp = aten, jvp
        self.core_entry, self.pure_view = core_entry, pure_view


_NUMBER = ProtocolMethod(None, "none")
PROTOCOL_METHODS = {"__getitem__": ProtocolMethod("index", "same", pure_view=True),
                    "__setitem__": ProtocolMethod("index_put_", "inplace", core_entry=False),
                    "__bool__": _NUMBER, "__int__": _NUMBER, "__float__": _NUMBER,
                    "__index__": _NUMBER}
del _NUMBER


class Declaration:
    """What ptcore knows about one op (see the module docstring)."""

    __slots__ = ("group", "name", "family", "variants", "tags", "autocast", "device", "grad",
                 "fast", "jvp", "batch", "alias", "tf_args", "inplace_fn",
                 "foreach", "copy_of", "data_dependent", "default_device", "method_fn",
                 "layout_bound", "correction", "grad_fallback",
                 "jvp_inplace", "out_dtype", "autocast_cpu", "core_entry", "script_tensor",
                 "pure_view", "beyond_torch")

    def __init__(self, group, name, family, variants, tags, autocast, device, grad, fast,
                 jvp=None, batch=None, alias=None, tf_args=None, inplace_fn=False,
                 foreach=False, copy_of=None, data_dependent=None, default_device=False,
                 method_fn=False, layout_bound=False, correction=False,
                 grad_fallback=False, jvp_inplace=None, out_dtype=None, autocast_cpu=None,
                 core_entry=frozenset(), script_tensor=False, pure_view=False,
                 beyond_torch=frozenset()):
        self.group = group
        self.name = name
        self.family = family
        self.variants = variants
        self.tags = tags
        self.autocast = autocast
        self.device = device
        self.grad = grad
        self.fast = fast
        self.jvp = jvp
        self.batch = batch
        self.alias = alias
        self.tf_args = tf_args
        self.inplace_fn = inplace_fn
        self.foreach = foreach
        self.copy_of = copy_of
        self.data_dependent = data_dependent
        self.default_device = default_device
        self.method_fn = method_fn
        self.layout_bound = layout_bound
        self.correction = correction
        self.grad_fallback = grad_fallback
        self.jvp_inplace = jvp_inplace
        self.out_dtype = out_dtype
        self.autocast_cpu = autocast_cpu
        self.core_entry = core_entry
        self.script_tensor = script_tensor
        self.pure_view = pure_view
        self.beyond_torch = beyond_torch

    def __repr__(self):
        return f"<declaration {self.group}.{self.name} ({self.family})>"


# (group, name) -> Declaration
DECLARED = {}


def family(family_name, group="ptcore", *, device="kernel", grad="inside", batch=None):
    """The ``op(name, variants, **facts)`` function that declares the ops of
    one family in one group; ``device``, ``grad`` and ``batch`` are the
    family's defaults for the facts of those names."""
    if group not in GROUPS:
        raise ValueError(f"declarations: unknown group {group!r}")
    defaults = {"device": device, "grad": grad, "batch": batch}

    def op(name, variants, *, tags=(), autocast=None, device=None, grad=None, fast=None,
           jvp=None, batch=None, alias=None, tf_args=None, inplace_fn=False,
           foreach=False, copy_of=None, data_dependent=None, default_device=False,
           method_fn=False, layout_bound=False, correction=False,
           grad_fallback=False, jvp_inplace=None, out_dtype=None, autocast_cpu=None,
           core_entry="", script_tensor=False, pure_view=False, beyond_torch=""):
        where = f"declaration of {group}.{name}"
        if alias is not None and (device, grad, fast, jvp) != (None, None, None, None):
            raise ValueError(f"{where}: an alias takes device, grad, fast and jvp from {alias}")
        v = frozenset(variants.split())
        bad = v - set(KINDS)
        if bad:
            raise ValueError(f"{where}: unknown variants {sorted(bad)}")
        t = frozenset(tags.split() if isinstance(tags, str) else tags)
        if t - set(TAGS):
            raise ValueError(f"{where}: unknown tags {sorted(t - set(TAGS))}")
        device = defaults["device"] if device is None else device
        grad = defaults["grad"] if grad is None else grad
        batch = defaults["batch"] if batch is None else batch
        for fact, value, allowed in (("autocast", autocast, AUTOCAST + (None,)),
                                     ("autocast_cpu", autocast_cpu, AUTOCAST_CPU + (None,)),
                                     ("device", device, DEVICE), ("grad", grad, GRAD),
                                     ("jvp", jvp, JVP + (None,)),
                                     ("jvp_inplace", jvp_inplace, JVP_INPLACE + (None,)),
                                     ("batch", batch, BATCH + (None,)),
                                     ("data_dependent", data_dependent,
                                      DATA_DEPENDENT + (None,))):
            if value not in allowed:
                raise ValueError(f"{where}: {fact} must be one of {allowed}, not {value!r}")
        if fast is not None and fast.partition(":")[0] not in FAST_KINDS:
            raise ValueError(f"{where}: fast must be None or one of {FAST_KINDS} (kind:kernel)")
        if tf_args is not None and (group != "nn.functional" or type(tf_args) is not int
                                    or tf_args < 1):
            raise ValueError(f"{where}: tf_args is a positive int, of nn.functional ops only")
        if inplace_fn not in (False, True) or inplace_fn and (group != "ptcore"
                                                              or "inplace" not in v):
            raise ValueError(f"{where}: inplace_fn is a bool, True only for a ptcore op with "
                             f"the inplace variant")
        if foreach not in (False, True) or foreach and (group != "ptcore"
                                                        or not {"method", "inplace"} <= v):
            raise ValueError(f"{where}: foreach is a bool, True only for a ptcore op with "
                             f"the method and inplace variants")
        if copy_of is not None and (group != "ptcore" or not isinstance(copy_of, str)
                                    or not name.endswith("_copy")):
            raise ValueError(f"{where}: copy_of is the name of a Tensor method, for a ptcore "
                             f"X_copy op only")
        if layout_bound not in (False, True):
            raise ValueError(f"{where}: layout_bound is a bool")
        if correction not in (False, True) or correction and group != "ptcore":
            raise ValueError(f"{where}: correction is a bool, True only for a ptcore op")
        if out_dtype is not None and (type(out_dtype) is not int or out_dtype < 1):
            raise ValueError(f"{where}: out_dtype is the position of the out_dtype parameter")
        if jvp_inplace is not None and "inplace" not in v:
            raise ValueError(f"{where}: jvp_inplace is for an op with the inplace variant")
        if grad_fallback not in (False, True) or grad_fallback and group != "ptcore":
            raise ValueError(f"{where}: grad_fallback is a bool, True only for a ptcore op")
        if method_fn not in (False, True) or method_fn and (group != "ptcore"
                                                            or not {"function", "method"} <= v):
            raise ValueError(f"{where}: method_fn is a bool, True only for a ptcore op with "
                             f"the function and method variants")
        if default_device not in (False, True) or default_device and "function" not in v:
            raise ValueError(f"{where}: default_device is a bool, True only for an op with the "
                             f"function variant")
        ce = frozenset(core_entry.split())
        if ce - {"method", "inplace"} or ce - v or ce and group != "ptcore":
            raise ValueError(f"{where}: core_entry names forms among the op's method and "
                             f"inplace variants, of a ptcore op")
        if script_tensor not in (False, True) or script_tensor and "method" not in v:
            raise ValueError(f"{where}: script_tensor is a bool, True only for an op with the "
                             f"method variant")
        if pure_view not in (False, True):
            raise ValueError(f"{where}: pure_view is a bool")
        bt = frozenset(beyond_torch.split())
        if bt - v or bt and group != "ptcore":
            raise ValueError(f"{where}: beyond_torch names variants of a ptcore op")
        key = (group, name)
        if key in DECLARED:
            raise ValueError(f"{group}.{name} is declared twice")
        d = DECLARED[key] = Declaration(group, name, family_name, v, t, autocast, device, grad,
                                        fast, jvp, batch, alias, tf_args,
                                        inplace_fn, foreach, copy_of, data_dependent,
                                        default_device, method_fn, layout_bound, correction,
                                        grad_fallback, jvp_inplace, out_dtype, autocast_cpu,
                                        ce, script_tensor, pure_view, bt)
        return d
    return op


def resolve_aliases():
    """Give each alias the facts of the op it names (after every family's
    declarations ran)."""
    for d in DECLARED.values():
        if d.alias is not None:
            target = DECLARED.get((d.group, d.alias))
            if target is None or target.alias is not None:
                raise ValueError(f"{d.group}.{d.name}: alias of an undeclared op {d.alias!r}")
            d.device, d.grad, d.fast, d.jvp, d.batch = (target.device, target.grad, target.fast,
                                                        target.jvp, target.batch)


_GROUP = {"ptcore": "ptcore", "Tensor": "ptcore", "nn.functional": "nn.functional",
          "linalg": "linalg", "fft": "fft", "special": "special"}


def base_of(namespace, name):
    """``(group, op)`` whose form ``namespace.name`` is, or None (custom ops
    and the tensor core's protocol methods)."""
    group = _GROUP.get(namespace)
    if group is None or name in PROTOCOL_METHODS:
        return None
    if name.startswith("__") and name.endswith("__"):
        return group, OPERATOR_METHODS.get(name, name)
    if name.endswith("_") and not name.startswith("_"):
        return group, name[:-1]
    return group, name


def declaration_of(namespace, name):
    """The declaration of the op that ``namespace.name`` is a form of, or None."""
    key = base_of(namespace, name)
    return DECLARED.get(key) if key is not None else None


def variants_of(namespace, name):
    """The declared variants of the op that ``namespace.name`` is a form of
    (an empty frozenset when it is not declared)."""
    d = declaration_of(namespace, name)
    return d.variants if d is not None else frozenset()


def same_call_as(name):
    """The op that a call of the function ``ptcore.<name>`` or the method
    ``Tensor.<name>`` is, with the same arguments: an operator method's aten
    op (``__radd__`` is ``add``, ``__rsub__`` ``rsub``; the method itself
    where torch has none), an alias's op (``multiply`` is ``mul``), ``div``
    for ``true_divide`` (``div`` without a rounding mode); else ``name``."""
    form = OPERATOR_FORMS.get(name)
    if form is not None:
        return form.aten or name
    if name == "true_divide":
        return "div"
    d = DECLARED.get(("ptcore", name))
    return d.alias if d is not None and d.alias is not None else name

def form_tags(decl, name, kind):
    """The declared tags that hold for the form ``name`` of kind ``kind``."""
    if decl is None or not decl.tags:
        return frozenset()
    if "factory" in decl.tags and kind != "function":
        return decl.tags - {"factory"}
    return decl.tags


def form_jvp(decl, name):
    """The ``jvp`` fact of the form ``name``: ``"none"`` holds for every form
    (``detach_`` too), the others for the out-of-place function and method."""
    if decl is None or decl.jvp is None:
        return None
    if name != decl.name and decl.jvp != "none":
        return None
    return decl.jvp


def form_autocast(decl, name):
    """The autocast category of the form ``name`` (the out-of-place function
    and method forms only)."""
    if decl is None or name != decl.name:
        return None
    return decl.autocast
