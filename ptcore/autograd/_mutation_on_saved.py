"""``torch.autograd.graph.allow_mutation_on_saved_tensors``: inside the block, a
tensor saved for backward may be modified in place; the first in-place write
to it (or to a tensor sharing its memory, at the same version) clones the saved
value first, so backward reads the value the forward saw.

As torch: saved tensors are stored through ``saved_tensors_hooks`` as handles,
and a ``TorchDispatchMode`` sees every in-place kernel call and makes the
clones; both forward and backward must run inside the block."""
import contextlib
from collections import defaultdict
from weakref import WeakKeyDictionary, WeakValueDictionary

from ptcore._dispatch.python_dispatch import TorchDispatchMode
from ptcore._tensor import _TensorBase
from ptcore.autograd.graph import saved_tensors_hooks

__all__ = ["allow_mutation_on_saved_tensors"]

_enabled = [False]
_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in "
            "which the graph was originally recorded.")


class _Handle:
    pass


def _tid(t):
    return (id(t), t.data_ptr(), t._version)


def _sid(t):
    return (t.data_ptr(), t._version)


class _AllowMutationOnSavedContext:
    """The state of one block: the saved tensors by handle, their clones."""

    def __init__(self):
        self.cloned = WeakKeyDictionary()
        self.original = WeakKeyDictionary()
        self.tid_to_weakhandle = WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx):
        def pack_hook(t):
            tid = _tid(t)
            ctx.sid_to_tid[_sid(t)].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:       # (the same tensor at the same version: one handle)
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = t
            return handle

        def unpack_hook(handle):
            if not _enabled[0]:
                raise AssertionError(_OUTSIDE)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(_OUTSIDE)
            return ctx.original[handle]
        super().__init__(pack_hook, unpack_hook)


def _written(name, args, kwargs):
    """The tensors an op call writes: ``self`` of an in-place op (a list of them
    for the in-place foreach ops), the ``out=`` tensors."""
    out = kwargs.get("out")
    if isinstance(out, _TensorBase):
        yield out
    elif isinstance(out, (tuple, list)):
        yield from (t for t in out if isinstance(t, _TensorBase))
    inplace = (name.endswith("_") and not name.endswith("__")) or name == "__setitem__" or \
        (name.startswith("__i") and name.endswith("__"))
    if inplace and args:
        first = args[0]
        if isinstance(first, _TensorBase):
            yield first
        elif isinstance(first, (tuple, list)):
            yield from (t for t in first if isinstance(t, _TensorBase))


class _CloneArgBeforeMutateMode(TorchDispatchMode):
    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ctx = self.ctx
        for t in _written(func.overloadpacket.__name__, args, kwargs):
            for tid in ctx.sid_to_tid.get(_sid(t), ()):
                handle = ctx.tid_to_weakhandle.get(tid)
                if handle is None or handle in ctx.cloned:
                    continue        # freed by a backward already, or cloned already
                ctx.cloned[handle] = ctx.original[handle].clone()
                del ctx.original[handle]
        return func(*args, **kwargs)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be mutated in
    place: they are cloned on their first mutation, so backward uses the values
    the forward saved (``torch.autograd.graph.allow_mutation_on_saved_tensors``).
    Run both forward and backward inside it; it yields the block's state object,
    cleared on exit.  Blocks cannot be nested."""
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx), _CloneArgBeforeMutateMode(ctx):
        try:
            if _enabled[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled[0] = True
            yield ctx
        finally:
            ctx.clear()
            _enabled[0] = False
