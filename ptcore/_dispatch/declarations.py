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
              computes it; :data:`OPERATOR_METHODS` says which).
``tags``      among :data:`TAGS`: ``random`` (draws from a generator),
              ``nondeterministic`` (its kernels may accumulate in a varying
              order: ``use_deterministic_algorithms`` refuses or warns),
              ``factory`` (makes a tensor from no tensor argument).
``autocast``  the op's autocast category: ``"lower"`` (runs in the autocast
              dtype), ``"fp32"`` or ``"promote"`` (the widest floating
              dtype of its arguments); None when autocast leaves it alone.
``device``    ``"kernel"`` (the default: a call with a tensor off the CPU runs
              the op's kernel for that device, and is refused where the
              device has none) or ``"through"`` (the op touches no element
              itself -- a view, a metadata query, or a composite written with
              other ops' entries, each of which meets the device layer
              itself -- so the device layer lets it through to its body).

How the forms of an op share its facts: ``random`` and ``nondeterministic``
hold for every form, ``factory`` for the function form only, and the
autocast category for the out-of-place function and method (not the
in-place form nor the operator methods, which call the op's entry again).
Tags that follow from the family or the form (``pointwise``, ``view``,
``inplace`` ...) are added by the table and not declared.
"""

__all__ = ["KINDS", "TAGS", "AUTOCAST", "OPERATOR_METHODS", "PROTOCOL_METHODS", "Declaration",
           "DECLARED", "family", "declaration_of", "base_of", "variants_of", "form_tags",
           "form_autocast"]

KINDS = ("function", "method", "inplace", "out", "operator")
TAGS = ("random", "nondeterministic", "factory")
AUTOCAST = ("lower", "fp32", "promote")
DEVICE = ("kernel", "through")
GROUPS = ("ptcore", "nn.functional", "linalg", "fft", "special")

# operator method -> the op it computes
OPERATOR_METHODS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add",
    "__sub__": "sub", "__rsub__": "sub", "__isub__": "sub",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul",
    "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div", "__div__": "div",
    "__rdiv__": "div",
    "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide",
    "__ifloordiv__": "floor_divide",
    "__mod__": "remainder", "__rmod__": "remainder", "__imod__": "remainder",
    "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__imatmul__": "matmul",
    "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and",
    "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or",
    "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor",
    "__lshift__": "bitwise_left_shift", "__rlshift__": "bitwise_left_shift",
    "__ilshift__": "bitwise_left_shift",
    "__rshift__": "bitwise_right_shift", "__rrshift__": "bitwise_right_shift",
    "__irshift__": "bitwise_right_shift",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__neg__": "neg", "__abs__": "abs", "__pos__": "positive", "__invert__": "bitwise_not",
}

# Python protocol methods of the tensor core that are entries of the table
# (indexing, conversions to Python numbers), not forms of an op
PROTOCOL_METHODS = frozenset({"__getitem__", "__setitem__", "__bool__", "__int__", "__float__",
                              "__index__"})


class Declaration:
    """What ptcore knows about one op (see the module docstring)."""

    __slots__ = ("group", "name", "family", "variants", "tags", "autocast", "device")

    def __init__(self, group, name, family, variants, tags, autocast, device):
        self.group = group
        self.name = name
        self.family = family
        self.variants = variants
        self.tags = tags
        self.autocast = autocast
        self.device = device

    def __repr__(self):
        return f"<declaration {self.group}.{self.name} ({self.family})>"


# (group, name) -> Declaration
DECLARED = {}


def family(family_name, group="ptcore", *, device="kernel"):
    """The ``op(name, variants, **facts)`` function that declares the ops of
    one family in one group; ``device`` is the family's default for the
    fact of that name."""
    if group not in GROUPS:
        raise ValueError(f"declarations: unknown group {group!r}")
    default_device = device

    def op(name, variants, *, tags=(), autocast=None, device=default_device):
        v = frozenset(variants.split())
        bad = v - set(KINDS)
        if bad:
            raise ValueError(f"declaration of {group}.{name}: unknown variants {sorted(bad)}")
        t = frozenset(tags.split() if isinstance(tags, str) else tags)
        if t - set(TAGS):
            raise ValueError(f"declaration of {group}.{name}: unknown tags {sorted(t - set(TAGS))}")
        if autocast is not None and autocast not in AUTOCAST:
            raise ValueError(f"declaration of {group}.{name}: autocast must be one of {AUTOCAST}")
        if device not in DEVICE:
            raise ValueError(f"declaration of {group}.{name}: device must be one of {DEVICE}")
        key = (group, name)
        if key in DECLARED:
            raise ValueError(f"{group}.{name} is declared twice")
        d = DECLARED[key] = Declaration(group, name, family_name, v, t, autocast, device)
        return d
    return op


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


def form_tags(decl, name, kind):
    """The declared tags that hold for the form ``name`` of kind ``kind``."""
    if decl is None or not decl.tags:
        return frozenset()
    if "factory" in decl.tags and kind != "function":
        return decl.tags - {"factory"}
    return decl.tags


def form_autocast(decl, name):
    """The autocast category of the form ``name`` (the out-of-place function
    and method forms only)."""
    if decl is None or name != decl.name:
        return None
    return decl.autocast
