"""The CUDA registrations of an op module, written where each kernel or loop
is defined: a decorator names the op (or front-end loop) a function
implements, so no separate table of op names has to be kept in step with the
functions.

Each op module makes one :class:`Registrations` and decorates its functions::

    cuda = Registrations()

    @cuda.loop("gather")                       # the front-end loop gather runs
    def _gather(out, input, dim, index): ...

    @cuda.kernel("gelu", namespaces=("nn.functional",))
    def gelu(input, approximate="none"): ...

A kernel registered ``real_only=True`` is a direct launcher of real-dtype
kernels: :mod:`ptcore.cuda.ops.complex` sends its complex arguments to the
op's front-end (:func:`real_only_ops`); one registered ``complex32=True`` as
well computes complex32 (ComplexHalf) operands in complex64, rounded once to
the result's dtype (:func:`complex32_ops`), as torch's CPU does for it.

The decorators only record; when the CUDA runtime comes up
(:mod:`ptcore.cuda.ops.register`), the module's ``register`` -- its
:meth:`Registrations.install`, or a function calling it -- hands each entry,
in the order the module declared them, to
:func:`ptcore._dispatch.device.register_loop` or
:func:`~ptcore._dispatch.device.register_kernel` (once).
"""
from ptcore._dispatch.device import register_kernel, register_loop

__all__ = ["Registrations"]

_OPS_NS = ("ptcore", "Tensor")

# the op names installed with real_only=True, and with complex32=True (filled
# by Registrations.install)
_real_only = set()
_complex32 = set()


def real_only_ops():
    """The names of the ops some CUDA kernel was installed for with
    ``real_only=True`` (sorted)."""
    return sorted(_real_only)


def complex32_ops():
    """The names of the ops some CUDA kernel was installed for with
    ``complex32=True`` (a frozenset)."""
    return frozenset(_complex32)


class Registrations:
    """The loops and kernels one CUDA op module implements, in declaration order."""

    def __init__(self):
        self._entries = []
        self._installed = False

    def loop(self, op):
        """Register the decorated function as the CUDA form of front-end loop ``op``."""
        def deco(fn):
            self._entries.append(("loop", op, fn, None, False, False, False))
            return fn
        return deco

    def kernel(self, op, namespaces=_OPS_NS, optional=False, real_only=False, complex32=False):
        """Register the decorated function as op ``op``'s CUDA kernel in
        ``namespaces`` (KeyError at install when the op is declared in none,
        unless ``optional``); ``real_only``: it launches real-dtype kernels
        only (complex arguments go to the op's front-end); ``complex32`` (with
        ``real_only``): complex32 operands go to the front-end in complex64."""
        if complex32 and not real_only:
            raise ValueError(f"cuda.kernel({op!r}): complex32 is for a real_only kernel")

        def deco(fn):
            self._entries.append(("kernel", op, fn, tuple(namespaces), optional, real_only,
                                  complex32))
            return fn
        return deco

    def names(self, kind):
        """The op (or loop) names registered as ``kind`` ("loop" or "kernel")."""
        return [e[1] for e in self._entries if e[0] == kind]

    def install(self):
        """Hand every entry to the device layer, in declaration order (once:
        a later call does nothing)."""
        if self._installed:
            return
        self._installed = True
        for kind, op, fn, namespaces, optional, real_only, complex32 in self._entries:
            if real_only:
                _real_only.add(op)
            if complex32:
                _complex32.add(op)
            if kind == "loop":
                register_loop(op, "cuda", fn)
            else:
                register_kernel(op, "cuda", fn, namespaces=namespaces, optional=optional)
