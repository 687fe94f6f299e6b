"""Sizes read by a traced program (the jit layer's part of tracing):
``x.size(0)``, ``x.shape[0]``, ``x.numel()`` are recorded (``Tensor::size`` nodes,
arithmetic on them as ``prim`` nodes) so that the graph follows the sizes of
its inputs, as torch's tracer does (``x.view(x.size(0), -1)`` traced at batch
size 1 runs at batch size 8).  The dispatch point's tracing layer hands the
sizes a traced program reads to the jit tracer's ``read_size``, which calls
:func:`read_size` here."""
import operator as _operator

import ptcore
from ptcore._dispatch.tracing import _tls, plain_size
from ptcore._tensor import _TensorBase

__all__ = ["TracedInt", "TracedFloat", "static_sizes", "read_size"]


class _Traced:
    """Arithmetic of a number read while tracing (a size, or a number computed
    from sizes): the result of ``+ - * / // % **`` with another number is
    again traced, so that the graph computes it from the input's sizes."""
    __slots__ = ()
    _base = None

    def _init(self, tracer, make):
        self._tracer = tracer
        self._make = make
        self._ref = None
        return self

    def source(self, tracer):
        """The encoded graph value of this number, or None (not of ``tracer``'s trace)."""
        if tracer is not self._tracer:
            return None
        if self._ref is None:
            self._ref = self._make()
        return self._ref

    def _op(self, name, other, reverse=False):
        if isinstance(other, _TensorBase):
            # ``x.size(0) * t``: the tensor's reflected op takes this number as
            # its scalar, so the graph reads the size (the number's own op
            # would return a tensor computed from the example input's size)
            return NotImplemented
        py = getattr(_operator, name)
        # (plain numbers: ``int * TracedInt`` would call the other's __rmul__)
        o = other._base(other) if isinstance(other, _Traced) else other
        mine = self._base(self)
        value = py(o, mine) if reverse else py(mine, o)
        if type(value) not in (int, float) or not isinstance(other, (int, float)) or \
                isinstance(other, bool):
            return value
        tracer = self._tracer
        if _tls.tracer is not tracer:
            return value
        a, b = (other, self) if reverse else (self, other)
        cls = TracedInt if type(value) is int else TracedFloat
        return cls(value, tracer, lambda: tracer.record_prim(name, [a, b]))

    def __add__(self, o): return self._op("add", o)
    def __radd__(self, o): return self._op("add", o, True)
    def __sub__(self, o): return self._op("sub", o)
    def __rsub__(self, o): return self._op("sub", o, True)
    def __mul__(self, o): return self._op("mul", o)
    def __rmul__(self, o): return self._op("mul", o, True)
    def __truediv__(self, o): return self._op("truediv", o)
    def __rtruediv__(self, o): return self._op("truediv", o, True)
    def __floordiv__(self, o): return self._op("floordiv", o)
    def __rfloordiv__(self, o): return self._op("floordiv", o, True)
    def __mod__(self, o): return self._op("mod", o)
    def __rmod__(self, o): return self._op("mod", o, True)

    def __pow__(self, o, mod=None):
        return self._op("pow", o) if mod is None else pow(self._base(self), o, mod)

    def __rpow__(self, o): return self._op("pow", o, True)

    def __neg__(self):
        tracer = self._tracer
        if _tls.tracer is not tracer:
            return -self._base(self)
        return type(self)(-self._base(self), tracer, lambda: tracer.record_prim("neg", [self]))

    def __pos__(self):
        return self

    def __reduce__(self):
        return (self._base, (self._base(self),))

    def __repr__(self):
        return repr(self._base(self))

    __str__ = __repr__


class TracedInt(_Traced, int):
    """A size read while tracing: an int that knows how the graph computes it
    (``source()`` -> the encoded value, recorded on first use)."""
    _base = int

    def __new__(cls, value, tracer, make):
        return int.__new__(cls, value)._init(tracer, make)


class TracedFloat(_Traced, float):
    """A float computed from sizes while tracing (``1.0 / x.size(0)``), which
    the graph computes at run time as torch's tracer does."""
    _base = float

    def __new__(cls, value, tracer, make):
        return float.__new__(cls, value)._init(tracer, make)


class static_sizes:
    """Context: sizes read while tracing on this thread are plain ints, so the
    graph keeps the example input's sizes (the ONNX exporter, which lowers no
    ``Tensor::size`` nodes; its ``dynamic_axes`` mark the graph's inputs)."""

    def __enter__(self):
        self.old = getattr(_tls, "static", False)
        _tls.static = True
        return self

    def __exit__(self, *exc):
        _tls.static = self.old
        return False


def read_size(tracer, t, which, value):
    """What a traced program reads as ``t``'s sizes (the tracing layer calls
    this through the tracer): ``which`` None (the shape), a dimension, or
    "numel"; ``value`` the plain shape (or number of elements).  Sizes of
    tensors the trace knows become traced ints, unless static_sizes is on."""
    if getattr(_tls, "static", False) or not tracer.knows(t):
        return plain_size(which, value)
    if which == "numel":
        return TracedInt(value, tracer, lambda: tracer.record_size(t, None))
    sizes = ptcore.Size([TracedInt(n, tracer, (lambda d: lambda: tracer.record_size(t, d))(d))
                         for d, n in enumerate(value)])
    return sizes if which is None else sizes[which]
