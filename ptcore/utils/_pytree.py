"""``ptcore.utils._pytree``: nested containers as trees of leaves (``torch.utils._pytree``).

Tuples, lists, dicts, ``OrderedDict``, ``defaultdict``, ``deque`` and named tuples (ptcore's
``return_types`` too) are nodes; everything else (tensors, numbers, ``None``, ``ptcore.Size``)
is a leaf, unless registered with :func:`register_pytree_node`.  ``tree_flatten`` gives the
leaves in order and a :class:`TreeSpec` that ``tree_unflatten`` rebuilds the tree from.
"""
import collections
import types as _types

__all__ = ["PyTree", "Context", "TreeSpec", "LeafSpec", "register_pytree_node", "tree_is_leaf",
           "tree_flatten", "tree_unflatten", "tree_iter", "tree_leaves", "tree_structure",
           "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "KeyEntry", "KeyPath", "SequenceKey", "MappingKey",
           "GetAttrKey", "keystr", "key_get", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path", "NodeDef", "SUPPORTED_NODES"]

PyTree = object
Context = object

#: How a node type flattens and unflattens (torch's ``NodeDef``: libraries such as
#: Lightning read ``SUPPORTED_NODES[type].flatten_fn``).
NodeDef = collections.namedtuple("NodeDef", ["type", "flatten_fn", "unflatten_fn",
                                             "flatten_with_keys_fn"], defaults=(None,))
SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make ``cls`` a node: ``flatten_fn(x) -> (children, context)`` and
    ``unflatten_fn(children, context) -> x``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


# --- key paths: how to reach a leaf from the root (torch's KeyEntry types) ---

class SequenceKey(collections.namedtuple("SequenceKey", ["idx"])):
    """The position of a child of a sequence node: ``[idx]``."""
    __slots__ = ()

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


class MappingKey(collections.namedtuple("MappingKey", ["key"])):
    """The key of a child of a mapping node: ``[key]``."""
    __slots__ = ()

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


class GetAttrKey(collections.namedtuple("GetAttrKey", ["name"])):
    """The attribute holding a child (named tuple fields ...): ``.name``."""
    __slots__ = ()

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


KeyEntry = object
KeyPath = tuple


def keystr(kp):
    """A key path as source text: ``"['layers'][0].weight"``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The part of ``obj`` that the key path ``kp`` leads to."""
    for k in kp:
        obj = k.get(obj)
    return obj


def _seq_keys(flatten):
    def with_keys(t):
        children, context = flatten(t)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], context
    return with_keys


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _tuple_flatten(t):
    return list(t), None


def _deque_flatten(d):
    return list(d), d.maxlen


# torch's names for the built-in nodes' functions (libraries register their own list and
# dict subclasses with them: tensordict's LinkedList takes _list_flatten/_list_unflatten)
_list_flatten = _tuple_flatten
_tuple_flatten_with_keys = _list_flatten_with_keys = _seq_keys(_tuple_flatten)


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_unflatten(values, context):
    return list(values)


def _dict_unflatten(values, context):
    return dict(zip(context, values))


register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten,
                     flatten_with_keys_fn=_tuple_flatten_with_keys)
register_pytree_node(list, _list_flatten, _list_unflatten,
                     flatten_with_keys_fn=_list_flatten_with_keys)
register_pytree_node(dict, _dict_flatten, _dict_unflatten,
                     flatten_with_keys_fn=_dict_flatten_with_keys)
register_pytree_node(collections.OrderedDict, _dict_flatten,
                     lambda xs, keys: collections.OrderedDict(zip(keys, xs)),
                     flatten_with_keys_fn=_dict_flatten_with_keys)
register_pytree_node(collections.defaultdict, _defaultdict_flatten,
                     lambda xs, ctx: collections.defaultdict(ctx[0], zip(ctx[1], xs)),
                     flatten_with_keys_fn=lambda d: ([(MappingKey(k), v) for k, v in d.items()],
                                                     _defaultdict_flatten(d)[1]))
register_pytree_node(collections.deque, _deque_flatten,
                     lambda xs, maxlen: collections.deque(xs, maxlen=maxlen),
                     flatten_with_keys_fn=_seq_keys(_deque_flatten))


def is_structseq_class(cls):
    """Whether ``cls`` is a C struct sequence type (``os.stat_result``, ``time.struct_time``):
    a direct, final subclass of tuple with the struct sequence's field counts."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & (1 << 10))      # (Py_TPFLAGS_BASETYPE)


def is_structseq_instance(obj):
    """Whether ``obj`` is an instance of a C struct sequence type."""
    return is_structseq_class(type(obj))


def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and \
        isinstance(getattr(cls, "_fields", None), tuple)


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    """True for a named tuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


# named tuples share one node kind, keyed (as in torch) by collections.namedtuple itself,
# the class being the context
register_pytree_node(collections.namedtuple, lambda t: (list(t), type(t)),
                     lambda xs, cls: cls(*xs),
                     flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), getattr(t, f))
                                                      for f in t._fields], type(t)))


def _get_node_type(tree):
    """The key of ``tree``'s kind in :data:`SUPPORTED_NODES` (``collections.namedtuple``
    for every named tuple, else its type)."""
    typ = type(tree)
    return collections.namedtuple if typ not in SUPPORTED_NODES and is_namedtuple_class(typ) \
        else typ


def _node_of(tree):
    typ = type(tree)
    if typ in SUPPORTED_NODES:
        return typ, SUPPORTED_NODES[typ]
    if is_namedtuple_class(typ):
        return collections.namedtuple, SUPPORTED_NODES[collections.namedtuple]
    return typ, None


class TreeSpec:
    """The structure of a tree: the node type, its context (dict keys ...) and the
    children's specs; a leaf's spec has no node type (``*``)."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self):
        return self.type is None

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.type is None:
            return next(it)
        children = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type, self.context, self.children_specs) == \
            (other.type, other.context, other.children_specs)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        inner = ",\n".join(" " * (indent + 2) + c.__repr__(indent + 2)
                           for c in self.children_specs)
        body = ("\n" + inner).lstrip() if len(self.children_specs) <= 1 else inner.lstrip()
        return f"TreeSpec({self.type.__name__}, {self.context}, [{body}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf (a class, as torch's: ``isinstance(spec, LeafSpec)`` works)."""

    def __init__(self):
        super().__init__(None, None, [])


def tree_is_leaf(tree, is_leaf=None):
    """True when ``tree`` is a leaf (not a registered node, or ``is_leaf(tree)``)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_of(tree)[1] is None


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves in order and the structure."""
    leaves = []

    def walk(t):
        if tree_is_leaf(t, is_leaf):
            leaves.append(t)
            return LeafSpec()
        typ, node = _node_of(t)
        children, context = node.flatten_fn(t)
        return TreeSpec(typ, context, [walk(c) for c in children])
    spec = walk(tree)
    return leaves, spec


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], spec)``: :func:`tree_flatten` with each leaf's
    key path (a tuple of :class:`SequenceKey`/:class:`MappingKey`/:class:`GetAttrKey`)."""
    out = []

    def walk(t, path):
        if tree_is_leaf(t, is_leaf):
            out.append((path, t))
            return LeafSpec()
        typ, node = _node_of(t)
        if node.flatten_with_keys_fn is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {typ}. Please pass "
                             "a flatten_with_keys_fn argument to register_pytree_node.")
        pairs, context = node.flatten_with_keys_fn(t)
        return TreeSpec(typ, context, [walk(c, path + (k,)) for k, c in pairs])
    spec = walk(tree, ())
    return out, spec


def tree_leaves_with_path(tree, is_leaf=None):
    """``[(key_path, leaf), ...]`` in leaf order."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """``func(key_path, leaf, *other_leaves)`` over the leaves, in a tree of
    ``tree``'s structure."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [_flatten_rest(spec, r, is_leaf) for r in rests]
    return spec.unflatten(func(kp, x, *xs) for (kp, x), *xs in zip(pairs, *others))


def tree_unflatten(leaves, treespec):
    """The tree of ``treespec``'s structure holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of ``tree``, in order (an iterator)."""
    return iter(tree_flatten(tree, is_leaf)[0])


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree``, in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The :class:`TreeSpec` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def _flatten_rest(spec, rest, is_leaf):
    """The leaves of ``rest`` along ``spec`` (``rest`` may hold deeper trees at leaves)."""
    if spec.type is None:
        return [rest]
    typ, node = _node_of(rest)
    if node is None or typ is not spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {typ}.")
    children, context = node.flatten_fn(rest)
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                         f"{len(children)}.")
    if spec.type in (dict, collections.OrderedDict) and set(context) != set(spec.context):
        raise ValueError(f"Node context mismatch for custom node type {spec.type}.")
    if spec.type in (dict, collections.OrderedDict):
        children = [rest[k] for k in spec.context]
    out = []
    for c, s in zip(children, spec.children_specs):
        out.extend(_flatten_rest(s, c, is_leaf))
    return out


def tree_map(func, tree, *rests, is_leaf=None):
    """``func`` applied to the leaves of ``tree`` (and the matching leaves of ``rests``),
    in a tree of ``tree``'s structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_rest(spec, r, is_leaf) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on the leaves (for its side effects); returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_rest(spec, r, is_leaf) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """``tree``, a prefix of the structure ``treespec``, broadcast to it and flattened: each
    leaf of ``tree`` repeated once per leaf of the subtree it stands for (vmap's in_dims);
    None when ``tree`` is no prefix of ``treespec``."""
    full_tree = tree_unflatten([0] * treespec.num_leaves, treespec)
    result = []

    def add_leaves(x, subtree):
        result.extend([x] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)
    try:
        tree_map_(add_leaves, tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        return None
    return result


def _type_pred(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple, _types.UnionType)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _only(pred, func):
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map` applying ``func`` only to the leaves of the given type(s)."""
    return tree_map(_only(_type_pred(type_or_types_or_pred), func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map_` for the leaves of the given type(s)."""
    return tree_map_(_only(_type_pred(type_or_types_or_pred), func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    check = _type_pred(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if check(x))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    check = _type_pred(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if check(x))
