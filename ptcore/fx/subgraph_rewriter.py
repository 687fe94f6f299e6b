"""Subgraph rewriting: find every occurrence of a pattern graph in a
GraphModule and replace it with a replacement graph
(``torch.fx.subgraph_rewriter``)."""
import copy
from typing import NamedTuple

from ptcore.nn import Module

from ptcore.fx.graph import Graph
from ptcore.fx.graph_module import GraphModule
from ptcore.fx.node import Node
from ptcore.fx._symbolic_trace import symbolic_trace

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """One match: the pattern's output node matched at ``anchor``, and the
    map from pattern nodes to graph nodes."""

    anchor: Node
    nodes_map: dict


class ReplacedPatterns(NamedTuple):
    """One replacement: the anchor, the node map, and the nodes inserted."""

    anchor: Node
    nodes_map: dict
    replacements: list


class _InternalMatch:
    def __init__(self, anchors):
        self.anchors = anchors
        self.nodes_map = {}
        self.placeholder_nodes = []
        self.returning_nodes = []


def _graph_of(obj):
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


def _module_of(obj):
    if isinstance(obj, Module):
        return obj
    if isinstance(obj, Graph):
        return obj.owning_module
    return None


class _SubgraphMatcher:
    """Matches a pattern graph (placeholders match anything) against a graph,
    anchored at the pattern's returned nodes."""

    def __init__(self, pattern, pattern_module, graph_module, ignore_literals=False,
                 node_name_match=""):
        self.ignore_literals = ignore_literals
        self.node_name_match = node_name_match
        self.pattern = pattern
        self.pattern_module = pattern_module
        self.graph_module = graph_module
        outputs = [n for n in pattern.nodes if n.op == "output"]
        if len(outputs) != 1:
            raise ValueError("the pattern graph must have exactly one output node")
        self.pattern_placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        out = outputs[0].args[0]
        self.pattern_returning = list(out) if isinstance(out, (tuple, list)) else [out]
        self.pattern_anchors = [n for n in self.pattern_returning if isinstance(n, Node)]

    def _attr_equal(self, pn, gn):
        def fetch(mod, target):
            obj = mod
            for atom in target.split("."):
                obj = getattr(obj, atom, None)
            return obj
        if self.pattern_module is None or self.graph_module is None:
            return pn.target == gn.target
        pv, gv = fetch(self.pattern_module, pn.target), fetch(self.graph_module, gn.target)
        return type(pv) is type(gv) or pn.target == gn.target

    def _nodes_equal(self, pn, gn):
        if pn.op == "placeholder":
            return True
        if self.node_name_match and self.node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "get_attr":
            return self._attr_equal(pn, gn)
        return pn.target == gn.target

    def _match_args(self, pa, ga, m):
        if isinstance(pa, Node):
            if not isinstance(ga, Node):
                if pa.op == "placeholder":        # a placeholder matches a literal
                    prev = m.nodes_map.get(pa, _MISSING)
                    if prev is not _MISSING:
                        return prev is ga or (not isinstance(prev, Node) and prev == ga)
                    m.nodes_map[pa] = ga
                    return True
                return self.ignore_literals
            return self._match_nodes(pa, ga, m)
        if isinstance(pa, (list, tuple)):
            return (isinstance(ga, (list, tuple)) and len(pa) == len(ga)
                    and all(self._match_args(a, b, m) for a, b in zip(pa, ga)))
        if isinstance(pa, dict):
            return (isinstance(ga, dict) and pa.keys() == ga.keys()
                    and all(self._match_args(pa[k], ga[k], m) for k in pa))
        if isinstance(ga, Node):
            return False
        return self.ignore_literals or (type(pa) is type(ga) and pa == ga)

    def _match_nodes(self, pn, gn, m):
        if pn in m.nodes_map:
            return m.nodes_map[pn] is gn
        if any(v is gn for v in m.nodes_map.values()):     # one pattern node per graph node
            return False
        if not self._nodes_equal(pn, gn):
            return False
        m.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        ok = (len(pn.args) == len(gn.args) and pn.kwargs.keys() == gn.kwargs.keys()
              and all(self._match_args(a, b, m) for a, b in zip(pn.args, gn.args))
              and all(self._match_args(pn.kwargs[k], gn.kwargs[k], m) for k in pn.kwargs))
        if not ok:
            del m.nodes_map[pn]
        return ok

    def _contained(self, m):
        """No value computed inside the match escapes it except the
        returned ones."""
        returned = {m.nodes_map[a] for a in self.pattern_anchors}
        inner = {gn for pn, gn in m.nodes_map.items()
                 if pn.op not in ("placeholder", "output") and isinstance(gn, Node)}
        for gn in inner:
            if gn in returned:
                continue
            if any(u not in inner for u in gn.users):
                return False
        return True

    def match(self, graph):
        if not self.pattern_anchors:
            return []
        first = self.pattern_anchors[0]
        matches = []
        for gn in graph.nodes:
            m = _InternalMatch(self.pattern_anchors)
            if not self._match_nodes(first, gn, m):
                continue
            ok = True
            for other in self.pattern_anchors[1:]:
                for cand in graph.nodes:
                    trial = dict(m.nodes_map)
                    if self._match_nodes(other, cand, m):
                        break
                    m.nodes_map = trial
                else:
                    ok = False
                    break
            if not ok or not self._contained(m):
                continue
            # every pattern node must be matched (unused placeholders too)
            for pn in self.pattern.nodes:
                if pn.op not in ("output",) and pn not in m.nodes_map:
                    if pn.op == "placeholder" and not pn.users:
                        continue
                    ok = False
            if not ok:
                continue
            m.placeholder_nodes = [m.nodes_map.get(pn) for pn in self.pattern_placeholders]
            m.returning_nodes = [m.nodes_map[a] for a in self.pattern_anchors]
            matches.append(m)
        # overlapping matches: the first one wins
        taken = set()
        result = []
        for m in matches:
            inner = {gn for pn, gn in m.nodes_map.items()
                     if pn.op != "placeholder" and isinstance(gn, Node)}
            if inner & taken:
                continue
            taken |= inner
            result.append(m)
        return result


_MISSING = object()


def _replace(gm, pattern, replacement, match_filters=None, ignore_literals=False,
             replacement_callback=None, node_name_match=""):
    original_graph = gm.graph
    pattern_graph = _graph_of(pattern)
    matcher = _SubgraphMatcher(pattern_graph, _module_of(pattern), gm, ignore_literals,
                               node_name_match)
    matches = matcher.match(original_graph)
    match_filters = match_filters or []
    matches = [m for m in matches
               if all(f(m, original_graph, pattern_graph) for f in match_filters)]
    common_replacement = None
    if replacement is not None:
        common_replacement = _graph_of(replacement)
        if isinstance(replacement, Module):
            _copy_replacement_attrs(gm, replacement, common_replacement)
    elif replacement_callback is None:
        raise ValueError("provide either a replacement or a replacement_callback")

    match_changed_node = {}
    replaced = []
    for m in matches:
        if replacement_callback is not None:
            replacement_graph = replacement_callback(m, original_graph, pattern_graph)
        else:
            replacement_graph = common_replacement
        replacement_placeholders = [n for n in replacement_graph.nodes
                                    if n.op == "placeholder"]
        if len(replacement_placeholders) != len(m.placeholder_nodes):
            raise ValueError(f"pattern and replacement must take the same number of inputs: "
                             f"{len(m.placeholder_nodes)} != {len(replacement_placeholders)}")
        val_map = {}
        for rn, gn in zip(replacement_placeholders, m.placeholder_nodes):
            if isinstance(gn, Node):
                while gn in match_changed_node:
                    gn = match_changed_node[gn]
            val_map[rn] = gn
        user_nodes = set()
        for n in m.returning_nodes:
            user_nodes.update(n.users)
        first_user = None
        for n in original_graph.nodes:
            if n in user_nodes:
                first_user = n
                break
        insert_point = first_user
        if insert_point is None:
            last = m.returning_nodes[-1]
            insert_point = last.next
        before = set(original_graph.nodes)
        with original_graph.inserting_before(insert_point):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node):
            copied = [copied]
        copied = list(copied) if isinstance(copied, (list, tuple)) else [copied]
        if len(copied) != len(m.returning_nodes):
            raise ValueError("the replacement must return as many values as the pattern")
        for gn, new in zip(m.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            match_changed_node[gn] = new
        inner = {gn for pn, gn in m.nodes_map.items()
                 if pn.op != "placeholder" and isinstance(gn, Node)}
        for gn in reversed(original_graph.nodes):      # users before their inputs
            if gn in inner and not gn.users:
                original_graph.erase_node(gn)
        new_nodes = [n for n in original_graph.nodes if n not in before]
        replaced.append(ReplacedPatterns(m.anchors[0],
                                         {k: v for k, v in m.nodes_map.items()}, new_nodes))
    gm.recompile()
    return replaced


def _copy_replacement_attrs(gm, replacement, replacement_graph):
    for node in replacement_graph.nodes:
        if node.op in ("get_attr", "call_module"):
            obj = replacement
            for atom in node.target.split("."):
                obj = getattr(obj, atom)
            if not hasattr(gm, node.target.split(".")[0]):
                if isinstance(obj, Module):
                    gm.add_submodule(node.target, copy.deepcopy(obj))
                else:
                    setattr(gm, node.target, obj)


def replace_pattern(gm, pattern, replacement):
    """Replace every non-overlapping occurrence of ``pattern`` in ``gm`` with
    ``replacement``.

    Pattern placeholders match any value; the pattern's returned values are
    replaced by the replacement's, in order.

    Parameters
    ----------
    gm : GraphModule
        Rewritten in place (and recompiled).
    pattern : callable or Graph
        Traced with :func:`~ptcore.fx.symbolic_trace` if callable.
    replacement : callable or Graph
        Same inputs and number of outputs as ``pattern``.

    Returns
    -------
    list of Match
        One per replaced occurrence.

    Examples
    --------
    >>> import ptcore, ptcore.fx as fx
    >>> def f(x):
    ...     return ptcore.relu(x) + 1
    >>> gm = fx.symbolic_trace(f)
    >>> len(fx.replace_pattern(gm, lambda x: ptcore.relu(x), lambda x: ptcore.sigmoid(x)))
    1
    >>> gm(ptcore.zeros(1))
    tensor([1.5000])
    """
    done = _replace(gm, pattern, replacement)
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in done]


def replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None,
                                 ignore_literals=False, replacement_callback=None,
                                 node_name_match=""):
    """:func:`replace_pattern` with more control.

    Parameters
    ----------
    gm : GraphModule
        Rewritten in place (and recompiled).
    pattern : callable, Graph or GraphModule
        The subgraph to find.
    replacement : callable, Graph or GraphModule, optional
        What to put in its place (or use ``replacement_callback``).
    match_filters : list of callable, optional
        Keep only the matches for which every ``f(match, original_graph,
        pattern_graph)`` is True.
    ignore_literals : bool, optional
        Constants in the pattern match any constant.
    replacement_callback : callable, optional
        ``replacement_callback(match, original_graph, pattern_graph)``
        returns the replacement graph for one match.
    node_name_match : str, optional
        Graph nodes whose name contains this string match any pattern node.

    Returns
    -------
    list of ReplacedPatterns
        ``anchor``, ``nodes_map`` and the ``replacements`` nodes inserted,
        one per replaced occurrence.
    """
    return _replace(gm, pattern, replacement, match_filters, ignore_literals,
                    replacement_callback, node_name_match)
