"""The operator table: one :class:`OpDef` per public op.

Each form of an op (``ptcore.X``, ``Tensor.X``, ``Tensor.X_`` ...) has an
OpDef, made when its entry is; it carries what the op's declaration
(:mod:`ptcore._dispatch.declarations`) says of that form -- variants, tags
(random, nondeterministic, factory), autocast category -- plus the tags its
family and form imply (pointwise, reduction, view, inplace ...) and the
autograd body that :mod:`ptcore.autograd` supplies.  :mod:`ptcore._dispatch.generate` makes the
public callables (``ptcore.X``, ``Tensor.X``, ``nn.functional.X``) from it,
each an entry of the one dispatch point (:mod:`ptcore._dispatch.dispatcher`).
"""

from ptcore._dispatch.declarations import declaration_of, form_autocast, form_tags

__all__ = ["OpDef", "OPS", "declare", "lookup", "op_of", "set_body_maker", "make_body"]


class OpDef:
    """One public op: ``name`` (PyTorch's), the implementation ``raw`` (the
    device-routing front-end), ``body`` (``raw`` under autograd recording),
    its ``family`` (the module group it belongs to), ``tags`` and the
    ``autocast`` category (``"lower"``, ``"fp32"``, ``"promote"`` or None).
    ``kernels`` maps a device type (``"cuda"``) to the op's kernel there
    (see :mod:`ptcore._dispatch.device`); the CPU kernel is ``raw``;
    ``fast_forms`` maps a device type to the fast form of that kernel (the
    calls it takes without the layers, in C), and ``device_fast`` is the
    one callable the entry tries for a call off the CPU, derived from them;
    only :mod:`ptcore._dispatch.device` writes either.
    ``decl`` is the op's :class:`~ptcore._dispatch.declarations.Declaration`
    (None for custom ops and protocol methods); ``variants`` its declared
    forms (function, method, inplace, out, operator), shared by the OpDefs of
    those forms."""

    __slots__ = ("name", "raw", "body", "family", "tags", "autocast", "aliases", "kind", "namespace",
                 "_hooked_body", "_body_factory", "kernels", "device_bodies", "variants",
                 "fast_forms", "device_fast", "decl", "__weakref__")

    def __init__(self, name, raw, family="", kind="function", tags=(), namespace=None):
        self.name = name
        self.namespace = namespace or ("Tensor" if kind == "method" else "ptcore")
        self.raw = raw
        self.body = raw
        self.family = family
        self.kind = kind
        decl = self.decl = declaration_of(self.namespace, name)
        self.tags = frozenset(tags) | _tags_of(name, family, kind) | form_tags(decl, name, kind)
        self.autocast = form_autocast(decl, name)
        self.aliases = []
        self._hooked_body = None
        self._body_factory = None
        self.kernels = {}
        self.device_bodies = {}
        # device type -> the kernel's fast form there, (args, kwargs) -> result
        # or None for the layers (register_fast_form)
        self.fast_forms = {}
        # what a call with an argument off the CPU tries first while no layer
        # but the device layer is on: the cache of fast_forms that
        # ptcore._dispatch.device keeps (one read on the entry's hot path)
        self.device_fast = None
        self.variants = decl.variants if decl is not None else frozenset()

    def __repr__(self):
        return f"<op {self.name} ({self.family}, {self.kind})>"


# (namespace, name) -> OpDef for every public op, namespace one of "ptcore",
# "Tensor", "nn.functional", "linalg"; entries (the public callables) -> OpDef
OPS = {}
_BY_ENTRY = {}
_ENTRIES = {}       # (namespace, name) -> the op's public callable (its first)


def declare(name, raw, family="", kind="function", tags=(), namespace=None):
    """Declare (or extend) the op ``name`` of ``namespace`` implemented by ``raw``."""
    d = OpDef(name, raw, family, kind, tags, namespace)
    key = (d.namespace, name)
    old = OPS.get(key)
    if old is not None:
        return old
    OPS[key] = d
    return d


# the autograd layer's body maker (set by ptcore.autograd when it loads):
# ``make(opdef)`` gives an OpDef its recording body, ``_body_factory`` and
# (registered with ptcore._dispatch.device) its driver fast form from its declaration
_BODY_MAKER = [None]


def set_body_maker(make):
    """Register ``make(opdef)``: run it on every op entry made so far and on
    each one made later (see :func:`ptcore._dispatch.generate.entry`)."""
    _BODY_MAKER[0] = make
    for d in list(OPS.values()):
        make(d)


def make_body(opdef):
    """Give ``opdef`` its body from the registered body maker (if any)."""
    m = _BODY_MAKER[0]
    if m is not None:
        m(opdef)


def lookup(name, namespace="ptcore"):
    return OPS.get((namespace, name))


def op_of(entry):
    """The OpDef behind a public callable, or None."""
    try:
        return _BY_ENTRY.get(entry)
    except TypeError:       # unhashable: not an entry
        return None


def entry(name, namespace="ptcore"):
    """The public callable of the op ``name``: the front-ends of one family
    call another family's ops through it (the operator table) instead of
    importing that family's module, so the op modules import only downwards."""
    return _ENTRIES[(namespace, name)]


class _NamespaceEntries:
    """Attribute access to one namespace's entries (see :func:`entries`)."""

    __slots__ = ("_ns",)

    def __init__(self, namespace):
        self._ns = namespace

    def __getattr__(self, name):
        e = _ENTRIES.get((self._ns, f"{self._ns}_{name}"))     # torch's linalg_X
        if e is None:
            e = _ENTRIES.get((self._ns, name))
        if e is None:
            raise AttributeError(f"no op {name!r} in the {self._ns} namespace")
        return e


def entries(namespace):
    """The ops of ``namespace`` (e.g. ``"linalg"``) as attributes: ``entries("linalg").inv``
    is ``ptcore.linalg.inv``, for front-ends below the namespace's package."""
    return _NamespaceEntries(namespace)


def _register_entry(entry, opdef):
    _BY_ENTRY[entry] = opdef
    _ENTRIES.setdefault((opdef.namespace, opdef.name), entry)


# ---------------------------------------------------------------------------
# tags
# ---------------------------------------------------------------------------

_FAMILY_TAGS = {
    "pointwise": "pointwise", "reduction": "reduction", "shape": "view",
    "random": "random", "linalg": "linalg", "sorting": "sorting", "indexing": "indexing",
}


def _tags_of(name, family, kind):
    tags = set()
    t = _FAMILY_TAGS.get(family)
    if t:
        tags.add(t)
    if kind == "inplace" or (name.endswith("_") and not name.startswith("_")):
        tags.add("inplace")
    return frozenset(tags)
