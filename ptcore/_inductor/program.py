"""What the backend makes of a captured program: its compiled segments
(:class:`Segment`, chained through the values of the breaks between them)
and the :class:`Program` holding them."""

__all__ = ["Segment", "Program", "signature"]


class Segment:
    """A compiled segment: ``fn(*values of in_ids) -> values of out_ids``,
    the break after it (``brk``; None for the last), the segments that follow
    each value of the break (``children``) and, for the last, the encoded
    result (``out_spec``)."""
    __slots__ = ("fn", "in_ids", "out_ids", "brk", "children", "out_spec", "code", "key",
                 "n_fused", "n_ops", "backward")

    def __init__(self, fn, in_ids, out_ids, brk, code=None, key=None):
        self.fn = fn
        self.in_ids = in_ids
        self.out_ids = out_ids
        self.brk = brk
        self.children = {}
        self.out_spec = None
        self.code = code
        self.key = key
        self.n_fused = 0
        self.n_ops = 0
        self.backward = None


class Program:
    """A compiled capture: its segments (a chain from ``root``), the inputs
    taken from the arguments, and what it holds (for explain and tests)."""
    # (the driver's short form of a program of one segment, made on its first
    # run: see ptcore._dynamo.compiled._one_segment; None when it has none)
    one_segment = False

    def __init__(self, mode, segments, arg_inputs, speculative, break_inputs=None):
        self.mode = mode
        self.segments = segments
        self.root = segments[0]
        self.arg_inputs = arg_inputs
        # tensors kept by reference (a buffer, a global) that a break converts
        # as they are (``if self.initted:``): no segment makes them
        self.break_inputs = break_inputs or {}
        # the segments before a break may run and be thrown away (the value
        # differs): False when one of them writes an input
        self.speculative = speculative

    @property
    def n_graphs(self):
        return len(self.segments)



def signature(nodes, brk):
    """What identifies a segment across captures (same calls, same break)."""
    sig = [(n.op, repr(n.args), repr(n.kwargs), repr(n.outputs)) for n in nodes]
    if brk is not None:
        sig.append((brk.kind, brk.vid, brk.method))
    return hash(tuple(sig))
