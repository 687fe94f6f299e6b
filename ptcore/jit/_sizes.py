"""Sizes read by a traced program (the jit layer's part of tracing):
``x.size(0)``, ``x.shape[0]``, ``x.numel()`` are recorded (``Tensor::size`` nodes,
arithmetic on them as ``prim`` nodes) so that the graph follows the sizes of
its inputs, as torch's tracer does (``x.view(x.size(0), -1)`` traced at batch
size 1 runs at batch size 8).  The tracer of ``ptcore.jit`` installs these
``size``/``shape`` on ``ptcore.Tensor`` while it traces (``install`` /
``remove``, from its ``start``/``stop`` hooks of the dispatch point's
``tracing`` context)."""
import operator as _operator

import ptcore
from ptcore._dispatch.tracing import _tls
from ptcore._tensor import _TensorBase

__all__ = ["TracedInt", "TracedFloat", "static_sizes", "install", "remove"]


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
        py = _PYOPS[name]
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


_PYOPS = {"add": _operator.add, "sub": _operator.sub, "mul": _operator.mul,
          "truediv": _operator.truediv, "floordiv": _operator.floordiv, "mod": _operator.mod,
          "pow": _operator.pow}

_SIZE_OWN = {}


def _traced_sizes(x, tracer):
    Size = ptcore.Size
    shape = _SIZE_OWN["shape"].__get__(x)
    if not tracer.knows(x):
        return shape
    return Size([TracedInt(n, tracer, (lambda d: lambda: tracer.record_size(x, d))(d))
                 for d, n in enumerate(shape)])


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


def _size(self, dim=None):
    tracer = _tls.tracer
    if tracer is None or _tls.depth or getattr(_tls, "static", False):
        return _SIZE_OWN["size"](self, dim) if dim is not None else _SIZE_OWN["size"](self)
    sizes = _traced_sizes(self, tracer)
    if dim is None:
        return sizes
    return sizes[dim]


def _shape(self):
    tracer = _tls.tracer
    if tracer is None or _tls.depth or getattr(_tls, "static", False):
        return _SIZE_OWN["shape"].__get__(self)
    return _traced_sizes(self, tracer)


def _numel(self):
    n = _SIZE_OWN["numel"](self)
    tracer = _tls.tracer
    if tracer is None or _tls.depth or getattr(_tls, "static", False) or \
            not tracer.knows(self):
        return n
    return TracedInt(n, tracer, lambda: tracer.record_size(self, None))


def install():
    if any(k in ptcore.Tensor.__dict__ for k in ("size", "shape", "numel")):
        return                          # the class defines its own: leave it
    _SIZE_OWN["size"] = _TensorBase.size
    _SIZE_OWN["shape"] = _TensorBase.__dict__["shape"]
    _SIZE_OWN["numel"] = _TensorBase.numel
    ptcore.Tensor.size = _size
    ptcore.Tensor.shape = property(_shape)
    ptcore.Tensor.numel = _numel


def remove():
    if ptcore.Tensor.__dict__.get("numel") is _numel:
        del ptcore.Tensor.numel
    if ptcore.Tensor.__dict__.get("size") is _size:
        del ptcore.Tensor.size
    sh = ptcore.Tensor.__dict__.get("shape")
    if isinstance(sh, property) and sh.fget is _shape:
        del ptcore.Tensor.shape
