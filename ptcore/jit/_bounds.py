"""Size bounds of the Python arithmetic that scripted graphs do on plain values.

Python's integers and sequences grow without limit: ``9 ** 9 ** 9`` runs for
hours, ``[0] * 10 ** 12`` takes all memory.  Code read from a file must not
make loading (nor a call) hang, so every operator whose result can be far
larger than its operands — ``**``, ``<<``, ``*`` (numbers, or a sequence
repeated), ``%`` formatting, ``range`` materialised, ``math.factorial``,
``round`` to negative digits — estimates its result's size before computing
it and raises :class:`ResultTooLarge` past a bound.

Two bounds: what the compiler folds while compiling (small: a constant past
it is computed when the graph runs, as CPython's own compiler leaves
``2 ** 10000`` to run time), and what a graph computes when it runs (large:
nothing a real program needs comes near it).
"""
import math
import operator
import re

__all__ = ["ResultTooLarge", "FOLD", "RUN", "check", "call_ok", "length"]


class ResultTooLarge(OverflowError):
    """An operation on plain values whose result would exceed a size bound."""


class Bounds:
    """The largest integer (in bits) and sequence (in items) an operation may make."""
    __slots__ = ("bits", "items", "what")

    def __init__(self, bits, items, what):
        self.bits, self.items, self.what = bits, items, what


# folding at compile time: ints up to 4096 bits, sequences up to 65,536 items
FOLD = Bounds(4096, 1 << 16, "folded while compiling")
# a graph running: ints up to 2**20 bits (~315,000 digits), sequences up to 2**28 items
RUN = Bounds(1 << 20, 1 << 28, "computed by a scripted graph")

_SEQ = (str, bytes, list, tuple)


def _bits(x):
    return x.bit_length() if type(x) in (int, bool) else 0


def _too_large(msg, b):
    return ResultTooLarge(f"{msg}: the result would be too large to be {b.what} "
                          f"(at most {b.bits} bits for an integer, {b.items} items for a "
                          "sequence)")


def length(x):
    """``len(x)``, or None where it does not fit an index (a huge range)."""
    try:
        return len(x)
    except OverflowError:
        return None


def _check_repeat(seq, n, b):
    if type(n) in (int, bool) and n > 0 and len(seq) * n > b.items:
        raise _too_large(f"a {type(seq).__name__} of {len(seq)} items repeated {n} times", b)


def check(op, a, b, bounds):
    """Raise ResultTooLarge if ``a <op> b`` (an operator name of
    ``_script._BINOPS``) would exceed ``bounds``; the operands' own sizes
    are within them already."""
    ta, tb = type(a), type(b)
    if op in ("mul", "imul"):
        if isinstance(a, _SEQ) and tb in (int, bool):
            _check_repeat(a, b, bounds)
        elif isinstance(b, _SEQ) and ta in (int, bool):
            _check_repeat(b, a, bounds)
        elif _bits(a) + _bits(b) > bounds.bits:
            raise _too_large(f"{_bits(a)}-bit * {_bits(b)}-bit integer", bounds)
    elif op in ("pow", "ipow"):
        if ta in (int, bool) and tb in (int, bool) and b > 0 and abs(a) > 1 and \
                _bits(a) * b > bounds.bits:
            raise _too_large(f"a {_bits(a)}-bit integer to the power {b}", bounds)
    elif op == "lshift":
        if ta in (int, bool) and tb in (int, bool) and a and b > 0 and \
                _bits(a) + b > bounds.bits:
            raise _too_large(f"a {_bits(a)}-bit integer shifted left by {b}", bounds)
    elif op in ("add", "iadd"):
        if isinstance(a, _SEQ) and isinstance(b, _SEQ) and len(a) + len(b) > bounds.items:
            raise _too_large(f"{len(a)} + {len(b)} items concatenated", bounds)
    elif op in ("mod", "imod") and ta is str:
        _check_percent(a, bounds)
    elif op in ("in", "notin") and tb is range and ta not in (int, bool):
        # ``1.5 in range(n)`` compares with every item
        n = length(b)
        if n is None or n > bounds.items:
            raise _too_large(f"a search of a range of {n} items", bounds)


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?[a-zA-Z%]")


def _check_percent(fmt, bounds):
    """``fmt % args``: no field may be wider than the sequence bound (``%*d`` takes
    its width from the arguments: refused)."""
    for width, prec in _PERCENT_SPEC.findall(fmt):
        for n in (width, prec):
            if n == "*":
                raise ResultTooLarge("'%*' widths taken from the arguments are not available "
                                     "in a scripted graph")
            if n and int(n) > 4096:
                raise _too_large(f"a %-format field of width {n}", bounds)


_PYBIN = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
          "pow": operator.pow, "matmul": operator.matmul, "lshift": operator.lshift,
          "rshift": operator.rshift, "bitand": operator.and_, "bitor": operator.or_,
          "bitxor": operator.xor, "iadd": operator.iadd, "isub": operator.isub,
          "imul": operator.imul, "itruediv": operator.itruediv,
          "ifloordiv": operator.ifloordiv, "imod": operator.imod, "ipow": operator.ipow}


def _iter_len_ok(x, bounds):
    if isinstance(x, (range, list, tuple, dict, str, bytes, set, frozenset)):
        n = length(x)
        return n is not None and n <= bounds.items
    return True


def call_ok(fn, args, kwargs, bounds=FOLD):
    """Whether builtin ``fn`` (``len``, ``list``, ``min``, ``round``, ...) called with
    constant ``args`` stays within ``bounds`` (a range or sequence it would walk
    is short enough; an integer argument is not huge)."""
    vals = list(args) + list(kwargs.values())
    if fn is len:
        return all(length(v) is not None for v in vals)
    if fn is round and len(vals) == 2 and type(vals[1]) is int and \
            abs(vals[1]) > bounds.bits:
        return False
    if fn is math.factorial and vals and type(vals[0]) is int and vals[0] > 0 and \
            vals[0] * max(vals[0].bit_length(), 1) > bounds.bits:
        return False
    return all(_iter_len_ok(v, bounds) and _bits(v) <= bounds.bits for v in vals)
