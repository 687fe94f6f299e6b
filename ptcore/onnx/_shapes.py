"""Sizes computed by the exported graph (``dynamic_axes``).

An export with dynamic axes traces the model with its size reads recorded
(``x.size(0)``, ``x.shape[-1]``, ``numel()`` and the arithmetic on them:
``Tensor::size`` and ``prim`` nodes, see :mod:`ptcore.jit._sizes`).  Each
such value becomes a 0-d int64 ONNX tensor (``Shape`` -> ``Squeeze``, ``Add``,
``Mul``, ...), and the converters see it as a :class:`Sym`: an ``int`` holding
the example's value (so code that only needs the value keeps working) that
also names its ONNX tensor, so that shape arguments (``view(B, T, -1)``,
``x[:, :T]``, ``arange(T)``, ``zeros(B, n)``, ``expand(B, -1, -1)``) are
built from the graph's sizes instead of the example's.

The symbol table of the export in progress is a context variable read by
:func:`dec`, the decoder every converter uses for its arguments.
"""
import contextvars
import operator

import numpy as np

from ptcore.jit._ir import decode
import ptcore.onnx._proto as P
from ptcore.onnx.errors import UnsupportedOperatorError
from ptcore.onnx._registration import converter, register

__all__ = ["Sym", "dec", "is_value", "symbols", "ints", "init", "scalar", "vector",
           "floor_div_int", "signs_differ", "INT64_MAX", "NP_DTYPES"]

INT64_MAX = 2 ** 63 - 1

# ONNX tensor dtype name -> NumPy dtype, for the initializers the export writes
NP_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
             "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8,
             "uint8": np.uint8, "bool": np.bool_}

_SYMS = contextvars.ContextVar("ptcore_onnx_symbols", default=None)


class Sym(int):
    """A size the exported graph computes: the example's value, and ``name``,
    the ONNX 0-d int64 tensor holding it at run time -- made by ``make()``
    when first asked for, so a size no converter uses adds nothing to the file."""

    def __new__(cls, value, make, nonneg=False):
        self = int.__new__(cls, int(value))
        self._make = make
        self._name = None
        self.nonneg = nonneg        # never below 0 (a size, sums and products of sizes)
        return self

    @property
    def name(self):
        if self._name is None:
            self._name = self._make()
        return self._name

    @property
    def used(self):
        return self._name is not None

    def __repr__(self):
        return f"Sym({int(self)})"


class symbols:
    """Context: ``table`` (value id -> :class:`Sym`) is the one :func:`dec` reads."""

    def __init__(self, table):
        self.table = table

    def __enter__(self):
        self.token = _SYMS.set(self.table)
        return self.table

    def __exit__(self, *exc):
        _SYMS.reset(self.token)
        return False


class _Values:
    """The environment :func:`dec` decodes with: a recorded size is its
    :class:`Sym`; any other value reference (a tensor argument -- a graph
    input, a weight, a constant or a node's result) stays encoded as
    ``{"v": id}``, the form converters take tensor operands in."""
    __slots__ = ("table",)

    def __init__(self, table):
        self.table = table

    def __getitem__(self, vid):
        sym = self.table.get(vid)
        return {"v": vid} if sym is None else sym


def dec(enc):
    """Decode an encoded argument; references to recorded sizes become
    :class:`Sym`, references to tensors stay ``{"v": id}`` (see :func:`is_value`)."""
    table = _SYMS.get()
    return decode(enc, _Values({} if table is None else table))


def is_value(x):
    """Whether ``x`` (an argument as :func:`dec` gives it) is a tensor value."""
    return type(x) is dict and "v" in x


def ints(b, values):
    """A 1-D int64 initializer."""
    return b.const(np.array([int(v) for v in values], dtype=np.int64), "int64")


def init(b, arr, dtype):
    """An initializer holding ``arr`` with its exact shape (a 0-d array stays
    a scalar: the builder's ``const`` makes it 1-d)."""
    name = b.fresh("const")
    arr = np.asarray(arr, dtype=NP_DTYPES[dtype])
    b.const_inits[name] = P.tensor(name, dtype, arr.shape, arr.tobytes())
    b.const_values[name] = arr
    return name


def scalar(b, v):
    """A 0-d int64 tensor of ``v`` (an int or a :class:`Sym`)."""
    if isinstance(v, Sym):
        return v.name
    return init(b, np.array(int(v)), "int64")


def vector(b, items):
    """A 1-D int64 tensor of ``items`` (ints and :class:`Sym` s): a constant
    when none is computed, else a ``Concat`` of the pieces."""
    if not any(isinstance(i, Sym) for i in items):
        return ints(b, items)
    parts, run = [], []
    for i in items:
        if isinstance(i, Sym):
            if run:
                parts.append(ints(b, run))
                run = []
            parts.append(b.add("Unsqueeze", [i.name, ints(b, [0])]))
        else:
            run.append(int(i))
    if run:
        parts.append(ints(b, run))
    return parts[0] if len(parts) == 1 else b.add("Concat", parts, axis=0)


def has_sym(items):
    return any(isinstance(i, Sym) for i in items)


def shape_of(b, enc, start=None, end=None):
    """The 1-D int64 shape of a tensor value (``Shape``, optionally a range of dims)."""
    attrs = {}
    if start is not None:
        attrs["start"] = int(start)
    if end is not None:
        attrs["end"] = int(end)
    return b.add("Shape", [b.name(enc)], **attrs)


def floor_div_int(b, x, y, dtype):
    """``x // y`` of integer tensors ``x``, ``y`` (names, ONNX ``dtype``): ONNX
    Div truncates toward zero, Python and torch floor: q - (r != 0 and the
    signs of r and y differ), with r = x - q * y."""
    q = b.add("Div", [x, y])
    r = b.add("Sub", [x, b.add("Mul", [q, y])])
    fix = signs_differ(b, r, y, init(b, np.array(0), dtype))
    return b.add("Sub", [q, b.add("Cast", [fix], to=P.DTYPES[dtype])])


def signs_differ(b, r, y, zero):
    """``r != 0 and sign(r) != sign(y)`` (Less / Greater only: Equal of floats
    needs opset 11)."""
    def both(u, v):
        return b.add("And", [u, v])
    return b.add("Or", [both(b.add("Less", [r, zero]), b.add("Greater", [y, zero])),
                        both(b.add("Greater", [r, zero]), b.add("Less", [y, zero]))])


# ---- the size nodes ----------------------------------------------------------

@converter("Tensor.size")
def _size(b, node):
    x = node.args[0]
    shape = b.g.values[x["v"]].shape
    d = int(dec(node.args[1])) % len(shape)

    def make():
        one = b.add("Shape", [b.name(x)], start=d, end=d + 1)
        return b.add("Squeeze", [one, ints(b, [0])])
    return Sym(shape[d], make, True)


@converter("numel")
def _numel(b, node):
    x = node.args[0]
    return Sym(int(np.prod(b.g.values[x["v"]].shape, dtype=np.int64)),
               lambda: b.add("Size", [b.name(x)]), True)


def _size_arith(op, py, keeps_nonneg=True):
    """The converter of ``prim`` arithmetic on sizes: the ONNX operator ``op``
    on the graph's sizes, ``py`` on the known ones; the result is non-negative
    when the operands are and ``keeps_nonneg``."""
    def convert(b, node):
        x, y = vals = [dec(a) for a in node.args]
        nonneg = all(isinstance(v, Sym) and v.nonneg or not isinstance(v, Sym) and v >= 0
                     for v in vals)
        if py is operator.floordiv and not (nonneg and not isinstance(y, Sym) and y > 0):
            return Sym(py(int(x), int(y)),
                       lambda: floor_div_int(b, scalar(b, x), scalar(b, y), "int64"))
        return Sym(py(int(x), int(y)), lambda: b.add(op, [scalar(b, x), scalar(b, y)]),
                   nonneg and keeps_nonneg)
    return convert


register(_size_arith("Add", operator.add), "prim.add")
register(_size_arith("Sub", operator.sub, keeps_nonneg=False), "prim.sub")
register(_size_arith("Mul", operator.mul), "prim.mul")
register(_size_arith("Div", operator.floordiv), "prim.floordiv")
register(_size_arith("Mod", operator.mod), "prim.mod")      # (ONNX Mod of ints: Python's sign rule)


@converter("prim.neg")
def _prim_neg(b, node):
    v = dec(node.args[0])
    return Sym(-int(v), lambda: b.add("Neg", [scalar(b, v)]))


# ---- ops whose arguments are sizes ---------------------------------------------

@converter("ptcore.arange")
def _arange(b, node):
    vals = [dec(a) for a in node.args]
    kw = {k: dec(v) for k, v in node.kwargs.items()}
    if len(vals) == 1:
        vals = [0] + vals
    start, end = vals[:2] if vals else (kw.get("start", 0), kw.get("end"))
    step = vals[2] if len(vals) > 2 else kw.get("step", 1)
    dt = b.g.values[node.output_ids()[0]].dtype
    if dt not in NP_DTYPES or dt == "bool":
        raise UnsupportedOperatorError(f"arange of dtype {dt}")

    def part(v):
        if isinstance(v, Sym):
            return v.name if dt == "int64" else b.add("Cast", [v.name], to=P.DTYPES[dt])
        return init(b, np.array(v), dt)
    return b.add("Range", [part(start), part(end), part(step)])


def _size_list(node, first):
    """The sizes of ``f(x, *sizes)`` / ``f(x, sizes)`` from argument ``first`` on."""
    vals = [dec(a) for a in node.args[first:]]
    if len(vals) == 1 and isinstance(vals[0], (list, tuple)):
        vals = list(vals[0])
    if not vals and "size" in node.kwargs:
        vals = list(dec(node.kwargs["size"]))
    return vals


@converter("Tensor.expand")
def _expand(b, node):
    sizes = _size_list(node, 1)
    # Expand broadcasts: a dim of 1 keeps the input's size, as -1 asks
    target = [1 if (not isinstance(s, Sym) and int(s) == -1) else s for s in sizes]
    return b.add("Expand", [b.name(node.args[0]), vector(b, target)])


@converter("Tensor.expand_as")
def _expand_as(b, node):
    return b.add("Expand", [b.name(node.args[0]), shape_of(b, node.args[1])])


@converter("Tensor.repeat")
def _repeat(b, node):
    x = node.args[0]
    reps = _size_list(node, 1)
    rank = len(b.g.values[x["v"]].shape)
    y = b.name(x)
    if len(reps) > rank:
        y = b.add("Unsqueeze", [y, ints(b, range(len(reps) - rank))])
    return b.add("Tile", [y, vector(b, reps)])

