"""The tracing layer of the dispatch point: while a tracer is active on a
thread (``ptcore.jit.trace``), every op call made by the traced program —
not the calls an op makes inside its own implementation — is handed to the
tracer with its arguments and result, which records it as a graph node.
Conversions of a tensor to a Python value (``item``, ``bool(t)`` ...) are
reported too: the tracer warns that the value becomes a constant."""
import threading

from ptcore._dispatch import dispatcher as _D

__all__ = ["TracerWarning", "TracedInt", "active_tracer", "static_sizes", "tracing"]


class TracerWarning(Warning):
    """A traced program did something the trace cannot generalise (``torch.jit.TracerWarning``)."""

    @staticmethod
    def ignore_lib_warnings():
        import warnings
        warnings.filterwarnings("ignore", category=TracerWarning, module="ptcore")


TracerWarning.__module__ = "ptcore.jit"

# core methods that turn a tensor into a Python value: not graph nodes
CONVERSIONS = {"item": "number", "__float__": "number", "__int__": "number",
               "__index__": "number", "__bool__": "boolean", "tolist": "list",
               "numpy": "NumPy array"}


class _Tls(threading.local):
    def __init__(self):
        self.tracer = None
        self.depth = 0


_tls = _Tls()


def active_tracer():
    return _tls.tracer


class tracing:
    """Context: ``tracer`` records the op calls made on this thread."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        if _tls.tracer is not None:
            raise RuntimeError("ptcore.jit.trace: a trace is already running on this thread")
        _tls.tracer = self.tracer
        _tls.depth = 0
        _LAYER.set_enabled(True)
        _install_sizes()
        return self.tracer

    def __exit__(self, *exc):
        _tls.tracer = None
        _LAYER.set_enabled(False)
        _remove_sizes()
        return False


# ---------------------------------------------------------------------------
# sizes read by the traced program: ``x.size(0)``, ``x.shape[0]`` are recorded
# (``Tensor::size`` nodes, arithmetic on them as ``prim`` nodes) so that the
# graph follows the sizes of its inputs, as torch's tracer does
# (``x.view(x.size(0), -1)`` traced at batch size 1 runs at batch size 8)
# ---------------------------------------------------------------------------

class TracedInt(int):
    """A size read while tracing: an int that knows how the graph computes it
    (``source()`` -> the encoded value, recorded on first use)."""
    def __new__(cls, value, tracer, make):
        self = int.__new__(cls, value)
        self._tracer = tracer
        self._make = make
        self._ref = None
        return self

    def source(self, tracer):
        """The encoded graph value of this int, or None (not of ``tracer``'s trace)."""
        if tracer is not self._tracer:
            return None
        if self._ref is None:
            self._ref = self._make()
        return self._ref

    def _op(self, name, other, reverse=False):
        py = _PYOPS[name]
        value = py(other, int(self)) if reverse else py(int(self), other)
        if type(value) is not int or (not isinstance(other, int) or isinstance(other, bool)):
            return value
        tracer = self._tracer
        if _tls.tracer is not tracer:
            return value
        a, b = (other, self) if reverse else (self, other)
        return TracedInt(value, tracer, lambda: tracer.record_prim(name, [a, b]))

    def __add__(self, o): return self._op("add", o)
    def __radd__(self, o): return self._op("add", o, True)
    def __sub__(self, o): return self._op("sub", o)
    def __rsub__(self, o): return self._op("sub", o, True)
    def __mul__(self, o): return self._op("mul", o)
    def __rmul__(self, o): return self._op("mul", o, True)
    def __floordiv__(self, o): return self._op("floordiv", o)
    def __rfloordiv__(self, o): return self._op("floordiv", o, True)
    def __mod__(self, o): return self._op("mod", o)
    def __rmod__(self, o): return self._op("mod", o, True)

    def __neg__(self):
        tracer = self._tracer
        if _tls.tracer is not tracer:
            return -int(self)
        return TracedInt(-int(self), tracer, lambda: tracer.record_prim("neg", [self]))

    def __pos__(self):
        return self

    def __reduce__(self):
        return (int, (int(self),))

    def __repr__(self):
        return repr(int(self))

    __str__ = __repr__


import operator as _operator  # noqa: E402
_PYOPS = {"add": _operator.add, "sub": _operator.sub, "mul": _operator.mul,
          "floordiv": _operator.floordiv, "mod": _operator.mod}

_SIZE_OWN = {}


def _traced_sizes(x, tracer):
    from ptcore import Size
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


def _install_sizes():
    import ptcore
    from ptcore._tensor import _TensorBase
    if "size" in ptcore.Tensor.__dict__ or "shape" in ptcore.Tensor.__dict__:
        return                          # the class defines its own: leave it
    _SIZE_OWN["size"] = _TensorBase.size
    _SIZE_OWN["shape"] = _TensorBase.__dict__["shape"]
    ptcore.Tensor.size = _size
    ptcore.Tensor.shape = property(_shape)


def _remove_sizes():
    import ptcore
    if ptcore.Tensor.__dict__.get("size") is _size:
        del ptcore.Tensor.size
    sh = ptcore.Tensor.__dict__.get("shape")
    if isinstance(sh, property) and sh.fget is _shape:
        del ptcore.Tensor.shape


class _TracingLayer(_D.Layer):
    order = 30
    name = "tracing"

    def handle(self, entry, opdef, args, kwargs, nxt):
        st = _tls
        tracer = st.tracer
        if tracer is None or st.depth:
            return nxt(args, kwargs)
        st.depth += 1
        try:
            out = nxt(args, kwargs)
            # recording may call ops itself (a captured tensor becomes a
            # constant through ``detach``): those are not part of the trace
            if opdef.name in CONVERSIONS and opdef.namespace == "Tensor":
                tracer.converted(opdef.name, CONVERSIONS[opdef.name])
            else:
                tracer.record(opdef, args, kwargs, out)
        finally:
            st.depth -= 1
        return out


_LAYER = _D.register_layer(_TracingLayer())
