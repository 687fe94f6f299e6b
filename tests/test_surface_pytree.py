"""ptcore.utils._pytree against torch.utils._pytree (plain-Python trees: the same leaves,
structure reprs, rebuilt trees and errors)."""
import collections

import pytest

import ptcore
from ptcore.utils import _pytree as P

torch = pytest.importorskip("torch")
TP = torch.utils._pytree

NT = collections.namedtuple("NT", "x y")
TREES = [
    {"a": [1, (2, 3)], "b": None}, [None, 1], 5, (), [], {},
    collections.OrderedDict(b=1, a=2), NT(1, (2,)), collections.deque([1, 2], maxlen=3),
    collections.defaultdict(list, {"k": [1, 2]}), [{"x": (1, [2, {"y": 3}])}, "s"],
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_unflatten_map_as_torch(tree):
    leaves, spec = P.tree_flatten(tree)
    tleaves, tspec = TP.tree_flatten(tree)
    assert leaves == tleaves
    assert repr(spec) == repr(tspec)
    assert spec.num_leaves == tspec.num_leaves and spec.num_nodes == tspec.num_nodes
    rebuilt = P.tree_unflatten(list(range(len(leaves))), spec)
    expect = TP.tree_unflatten(list(range(len(leaves))), tspec)
    assert rebuilt == expect and type(rebuilt) is type(expect)
    f = (lambda v: (v, 0))
    assert P.tree_map(f, tree) == TP.tree_map(f, tree)
    assert P.tree_structure(tree) == P.tree_structure(P.tree_map(lambda v: 0, tree))


def test_multi_tree_map_only_all_any_and_errors():
    assert P.tree_map(lambda a, b: a + b, [1, (2,)], [3, (4,)]) == [4, (6,)]
    assert P.tree_map(lambda a, b: (a, b), [1, 2], [[5], {"z": 6}]) == \
        TP.tree_map(lambda a, b: (a, b), [1, 2], [[5], {"z": 6}])
    assert P.tree_map_only(int, lambda v: -v, [1, "a", 2.0]) == [-1, "a", 2.0]
    assert P.tree_map_only((int, float), lambda v: -v, [1, "a", 2.0]) == [-1, "a", -2.0]
    assert P.tree_all(lambda v: v > 0, [1, [2]]) and not P.tree_any(lambda v: v > 1, (1,))
    assert P.tree_all_only(str, lambda s: s == "a", [1, "a"])
    seen = []
    assert P.tree_map_(seen.append, {"k": [1, 2]}) == {"k": [1, 2]} and seen == [1, 2]
    assert P.tree_map(lambda x: 0, [[1], 2], is_leaf=lambda x: isinstance(x, list)) == 0
    for bad in ([1], (1, 2), {"a": 1, "b": 2}):
        with pytest.raises(ValueError):
            TP.tree_map(lambda a, b: a, [1, 2], bad)
        with pytest.raises(ValueError):
            P.tree_map(lambda a, b: a, [1, 2], bad)
    with pytest.raises(ValueError):
        P.tree_unflatten([1, 2], P.tree_structure([1]))
    with pytest.raises(TypeError):
        P.tree_unflatten([1], "spec")


def test_tensors_sizes_return_types_and_registration():
    x = ptcore.ones(2)
    leaves, spec = P.tree_flatten({"t": x, "s": ptcore.Size([2, 3])})
    assert leaves[0] is x and leaves[1] == ptcore.Size([2, 3])
    r = ptcore.max(ptcore.tensor([[1.0, 5.0]]), dim=1)
    leaves, spec = P.tree_flatten(r)
    assert len(leaves) == 2 and type(P.tree_unflatten(leaves, spec)) is type(r)

    class Point:
        def __init__(self, a, b):
            self.a, self.b = a, b
    P.register_pytree_node(Point, lambda p: ([p.a, p.b], None), lambda xs, _: Point(*xs))
    try:
        out = P.tree_map(lambda v: v * 10, [Point(1, 2)])
        assert (out[0].a, out[0].b) == (10, 20)
        with pytest.raises(ValueError):
            P.register_pytree_node(Point, lambda p: ([], None), lambda xs, _: None)
    finally:
        P.SUPPORTED_NODES.pop(Point)
    assert ptcore.utils._pytree is P


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_with_path_as_torch(tree):
    pairs, spec = P.tree_flatten_with_path(tree)
    tpairs, tspec = TP.tree_flatten_with_path(tree)
    assert [(P.keystr(k), v) for k, v in pairs] == [(TP.keystr(k), v) for k, v in tpairs]
    assert [[(type(e).__name__, repr(e)) for e in k] for k, _ in pairs] == \
        [[(type(e).__name__, repr(e)) for e in k] for k, _ in tpairs]
    assert repr(spec) == repr(tspec)
    for k, v in pairs:
        assert P.key_get(tree, k) == v
    assert P.tree_leaves_with_path(tree) == pairs
    got = P.tree_map_with_path(lambda kp, x, y: (P.keystr(kp), x, y), tree, tree)
    expect = TP.tree_map_with_path(lambda kp, x, y: (TP.keystr(kp), x, y), tree, tree)
    assert got == expect


def test_flatten_with_path_of_a_node_without_keys_raises_valueerror_as_torch():
    class Box:
        def __init__(self, v):
            self.v = v

    for M in (P, TP):
        M.register_pytree_node(Box, lambda b: ([b.v], None), lambda xs, _: Box(xs[0]))
        try:
            assert M.tree_leaves(Box(3)) == [3]
            with pytest.raises(ValueError, match="flatten_with_keys_fn"):
                M.tree_flatten_with_path([Box(3)])
        finally:
            M.SUPPORTED_NODES.pop(Box)


def test_custom_node_with_keys():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    def with_keys(p):
        return [(P.GetAttrKey("a"), p.a), (P.GetAttrKey("b"), p.b)], None
    P.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda xs, _: Pair(*xs),
                           flatten_with_keys_fn=with_keys)
    try:
        pairs, _ = P.tree_flatten_with_path({"p": Pair(1, [2])})
        assert [(P.keystr(k), v) for k, v in pairs] == [("['p'].a", 1), ("['p'].b[0]", 2)]
    finally:
        P.SUPPORTED_NODES.pop(Pair)


def test_node_definitions_as_torch():
    """What libraries read of the registry (Lightning's ``_pytree``): ``SUPPORTED_NODES``
    holds torch's ``NodeDef`` fields, ``_get_node_type`` keys named tuples under
    ``collections.namedtuple``, and ``LeafSpec`` is a TreeSpec class."""
    node = P.SUPPORTED_NODES[tuple]
    assert node.type is tuple
    children, ctx = node.flatten_fn((1, 2))
    assert children == [1, 2] and node.unflatten_fn(children, ctx) == (1, 2)
    assert node.flatten_with_keys_fn is not None
    Point = collections.namedtuple("Point", "x y")
    assert P._get_node_type(Point(1, 2)) is collections.namedtuple
    assert P._get_node_type([1]) is list and P._get_node_type(3) is int
    assert P._get_node_type(3) not in P.SUPPORTED_NODES
    leaf = P.LeafSpec()
    assert isinstance(leaf, P.LeafSpec) and isinstance(leaf, P.TreeSpec) and leaf.is_leaf()
    assert leaf.num_leaves == 1
    # a tree rebuilt by hand from NodeDefs, as Lightning's _tree_flatten does
    spec = P.TreeSpec(dict, ["a", "b"], [P.LeafSpec(), P.TreeSpec(list, None, [P.LeafSpec()])])
    assert P.tree_unflatten([1, 2], spec) == {"a": 1, "b": [2]}
    assert P.tree_structure({"a": 0, "b": [0]}) == spec
    torch = pytest.importorskip("torch")
    import torch.utils._pytree as T
    assert T.SUPPORTED_NODES[tuple]._fields == node._fields


def test_builtin_node_functions_by_torchs_names():
    """``_list_flatten``/``_list_unflatten``/``_list_flatten_with_keys`` (tensordict registers
    its list subclass with them), the tuple and dict ones, ``_broadcast_to_and_flatten`` and
    ``is_structseq_instance``, as torch's."""
    import os
    import time

    class MyList(list):
        pass
    for lib in (P, TP):
        lib.register_pytree_node(MyList, lib._list_flatten, lib._list_unflatten,
                                 flatten_with_keys_fn=lib._list_flatten_with_keys)
    try:
        tree = {"a": MyList([1, (2, 3)]), "b": [4]}
        got, want = P.tree_flatten(tree), TP.tree_flatten(tree)
        assert got[0] == want[0] == [1, 2, 3, 4]
        assert P.tree_unflatten(got[0], got[1]) == TP.tree_unflatten(want[0], want[1])
        assert type(P.tree_unflatten(got[0], got[1])["a"]) is list
        assert [P.keystr(k) for k, _ in P.tree_flatten_with_path(tree)[0]] == \
            [TP.keystr(k) for k, _ in TP.tree_flatten_with_path(tree)[0]]
    finally:
        P.SUPPORTED_NODES.pop(MyList)
        TP.SUPPORTED_NODES.pop(MyList)
    for name in ("_tuple_unflatten", "_list_unflatten"):
        assert getattr(P, name)([1, 2], None) == getattr(TP, name)([1, 2], None)
    assert P._dict_unflatten([1, 2], ["a", "b"]) == TP._dict_unflatten([1, 2], ["a", "b"])
    full = [1, {"k": (2, 3)}, 4]
    for prefix in (0, [0, 1, 2], [0, {"k": None}, 2], [0, {"k": (1, 2)}, 3], [0, 1], {"k": 0}):
        assert P._broadcast_to_and_flatten(prefix, P.tree_structure(full)) == \
            TP._broadcast_to_and_flatten(prefix, TP.tree_structure(full))
    for obj in (os.stat("."), time.gmtime(0), (1, 2), NT(1, 2), ptcore.ones(2).max(0), [1]):
        assert P.is_structseq_instance(obj) == TP.is_structseq_instance(obj), obj
    assert P.is_structseq_class(os.stat_result) and not P.is_structseq_class(NT)
