"""The kernel level of the dispatch point: ``TorchDispatchMode``.

A dispatch mode sees each op *below* autograd, as PyTorch's
``__torch_dispatch__`` does: the call that reaches the device kernel, with
autograd already handled (inside backward, the ops of the backward formulas
are seen too).  ``func`` is an :class:`OpOverload`-like handle: callable
(runs the kernel), with ``__name__``, ``name()``, ``overloadpacket`` and
``str(func) == "aten.<op>.default"``.
"""
from ptcore._dispatch.mode_stack import ModeStack

from ptcore._dispatch import dispatcher as _D

__all__ = ["TorchDispatchMode", "OpOverload", "_get_current_dispatch_mode",
           "_get_current_dispatch_mode_stack", "_pop_mode_temporarily"]


class _OverloadPacket:
    def __init__(self, name):
        self.__name__ = name
        self._qualified_op_name = f"aten::{name}"

    def __repr__(self):
        return f"aten.{self.__name__}"

    def __eq__(self, other):
        return isinstance(other, _OverloadPacket) and other.__name__ == self.__name__

    def __hash__(self):
        return hash(self.__name__)


class OpOverload:
    """The kernel of one op, as a dispatch mode's ``func`` sees it."""
    _cache = {}

    def __init__(self, opdef, raw):
        name = opdef.name
        self._opdef = opdef
        self._raw = raw
        self.__name__ = f"{name}.default"
        self._overloadname = "default"
        self.overloadpacket = _OverloadPacket(name)
        self.tags = tuple(sorted(opdef.tags))

    @classmethod
    def of(cls, opdef, raw):
        h = cls._cache.get(id(opdef))
        if h is None or h._raw is not raw:
            h = cls._cache[id(opdef)] = cls(opdef, raw)
        return h

    def name(self):
        return f"aten::{self._opdef.name}"

    def __call__(self, *args, **kwargs):
        # inside a mode's handler, the modes below it still see the call
        if _st.modes and _LAYER.enabled:
            return _LAYER.handle_kernel(self._opdef, self._raw, args, kwargs)
        return self._raw(*args, **kwargs)

    def __repr__(self):
        return f"aten.{self._opdef.name}.default"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other._opdef is self._opdef

    def __hash__(self):
        return hash(id(self._opdef))


_st = ModeStack()
_count = [0]


class _KernelLayer:
    enabled = False

    def handle_kernel(self, opdef, raw, args, kwargs):
        if not _st.modes:
            return raw(*args, **kwargs)
        mode = _st.modes.pop()
        try:
            from ptcore._tensor import _TensorBase
            # as torch: only the tensor subclasses that define __torch_dispatch__
            types = tuple({type(a) for a in args if isinstance(a, _TensorBase) and
                           getattr(type(a), "__torch_dispatch__", None) is not None})
            return mode.__torch_dispatch__(OpOverload.of(opdef, raw), types, args, kwargs)
        finally:
            _st.modes.append(mode)


_LAYER = _KernelLayer()
_D.kernel_layer[0] = _LAYER


def _update():
    _LAYER.enabled = _count[0] > 0
    _D.refresh()


class TorchDispatchMode:
    """Context manager whose ``__torch_dispatch__(func, types, args, kwargs)``
    sees every op's kernel call inside it (``torch.utils._python_dispatch``).
    Inside the handler the mode is off: ``func(*args, **kwargs)`` runs the kernel."""

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _st.modes.append(self)
        _count[0] += 1
        _update()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        try:
            _st.modes.remove(self)
        except ValueError:
            pass
        _count[0] -= 1
        _update()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        import warnings
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`")
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls):
        return False


_get_current_dispatch_mode = _st.current
_get_current_dispatch_mode_stack = _st.stack
_pop_mode_temporarily = _st.pop_temporarily


def modes_on():
    """Whether a dispatch mode is active on this thread."""
    return _LAYER.enabled and bool(_st.modes)


class modes_hidden:
    """Context: this thread's dispatch modes do not see the calls of the block
    (autograd's own bookkeeping of an in-place op the modes see as one call)."""

    def __enter__(self):
        self.saved = _st.modes[:]
        _st.modes.clear()

    def __exit__(self, *exc):
        _st.modes[:] = self.saved
        return False
