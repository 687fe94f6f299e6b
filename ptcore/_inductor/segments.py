"""Passes over a captured graph before code is generated for it: removing the
op calls whose results nothing reads (and that change nothing), cutting the
graph into segments at its breaks, and the values each segment reads and
must hand on."""
from ptcore._inductor.codegen import node_inputs, node_outputs

__all__ = ["dead_code", "cut", "Segment"]


def dead_code(nodes, live, keep):
    """``nodes`` without the calls whose outputs neither ``live`` (value ids
    read after the nodes) nor a later node reads; ``keep``: ids of the nodes
    that stay whatever (those with effects, those whose result is checked)."""
    used = set(live)
    out = []
    for n in reversed(nodes):
        if id(n) in keep or any(v in used for v in node_outputs(n)):
            out.append(n)
            used.update(node_inputs(n))
    out.reverse()
    return out


class Segment:
    """Nodes run between two breaks; ``brk`` is the break after them (None
    for the last segment)."""
    __slots__ = ("nodes", "brk", "in_ids", "out_ids")

    def __init__(self, nodes, brk):
        self.nodes = nodes
        self.brk = brk
        self.in_ids = []
        self.out_ids = []


def cut(nodes, breaks, final_ids):
    """The segments of ``nodes`` (the graph's, in order) at ``breaks`` (by
    ``index``: the number of nodes recorded before each), each with the
    values it reads from before (``in_ids``) and those it must hand on
    (``out_ids``: read by a later segment, by a break's conversion, or part
    of the result ``final_ids``)."""
    segs, start = [], 0
    for b in breaks:
        segs.append(Segment(nodes[start:b.index], b))
        start = b.index
    segs.append(Segment(nodes[start:], None))
    made_in = {}
    for k, s in enumerate(segs):
        for n in s.nodes:
            for v in node_outputs(n):
                made_in[v] = k
    need_after = {}              # segment -> values needed from it or earlier after it
    reads = []
    for k, s in enumerate(segs):
        r = []
        for n in s.nodes:
            r.extend(node_inputs(n))
        reads.append(r)
    later = set(final_ids)
    for k in range(len(segs) - 1, -1, -1):
        s = segs[k]
        if s.brk is not None and s.brk.vid is not None:
            later.add(s.brk.vid)
        need_after[k] = set(later)
        later.update(reads[k])
    for k, s in enumerate(segs):
        own = {v for n in s.nodes for v in node_outputs(n)}
        ins, seen = [], set()
        for v in reads[k]:
            if v not in own and v not in seen:
                seen.add(v)
                ins.append(v)
        s.in_ids = ins
        s.out_ids = sorted(v for v in need_after[k] if v in own)
    return segs
