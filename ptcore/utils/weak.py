"""Weak references keyed by object identity (``torch.utils.weak``).

A tensor's ``==`` is elementwise, so tensors cannot be keys of a
``weakref.WeakKeyDictionary`` (which compares keys with ``==``).  These
classes compare and hash the referents by identity instead:

- :class:`WeakIdRef`: a ``weakref.ref`` whose hash is the referent's ``id``
  (kept after the referent dies) and whose equality is identity of live
  referents;
- :class:`WeakIdKeyDictionary` (alias :data:`WeakTensorKeyDictionary`): a
  mutable mapping from objects to values that holds its keys weakly, by
  identity; an entry disappears when its key is collected;
- :class:`TensorWeakRef`: a weak reference to a tensor.
"""
from collections.abc import Mapping, MutableMapping
import copy as _copy
import weakref
from weakref import ref

from ptcore._tensor import _TensorBase

__all__ = ["WeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary",
           "TensorWeakRef"]

WeakRef = ref


class _IterationGuard:
    """While iterating a dictionary, defer the removals of collected keys
    (their callbacks would change the dict's size during the iteration)."""

    def __init__(self, weakcontainer):
        self.weakcontainer = ref(weakcontainer)

    def __enter__(self):
        w = self.weakcontainer()
        if w is not None:
            w._iterating.add(self)
        return self

    def __exit__(self, e, t, b):
        w = self.weakcontainer()
        if w is not None:
            s = w._iterating
            s.remove(self)
            if not s:
                w._commit_removals()


class WeakIdRef(weakref.ref):
    """A weak reference hashed by its referent's ``id`` and equal to another
    only when both referents are alive and the same object (a dead reference
    is equal only to itself)."""
    __slots__ = ["_id"]

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        if not isinstance(other, weakref.ref):
            return NotImplemented
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq


class WeakIdKeyDictionary(MutableMapping):
    """A mapping whose keys are held weakly and compared by identity.

    Parameters
    ----------
    dict : mapping or iterable of pairs, optional
        Initial entries.
    ref_type : type, optional
        The weak reference class that wraps keys (default :class:`WeakIdRef`).
    """

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data = {}
        self.ref_type = ref_type

        def remove(k, selfref=ref(self)):
            self = selfref()
            if self is not None:
                if self._iterating:
                    self._pending_removals.append(k)
                else:
                    self.data.pop(k, None)
        self._remove = remove
        self._pending_removals = []
        self._iterating = set()
        self._dirty_len = False
        if dict is not None:
            self.update(dict)

    def _commit_removals(self):
        pending, d = self._pending_removals, self.data
        while pending:
            d.pop(pending.pop(), None)

    def _scrub_removals(self):
        d = self.data
        self._pending_removals = [k for k in self._pending_removals if k in d]
        self._dirty_len = False

    def __delitem__(self, key):
        self._dirty_len = True
        del self.data[self.ref_type(key)]

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __len__(self):
        if self._dirty_len and self._pending_removals:
            self._scrub_removals()
        return len(self.data) - len(self._pending_removals)

    def __repr__(self):
        return f"<{self.__class__.__name__} at {id(self):#x}>"

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def copy(self):
        new = WeakIdKeyDictionary(ref_type=self.ref_type)
        with _IterationGuard(self):
            for key, value in self.data.items():
                o = key()
                if o is not None:
                    new[o] = value
        return new

    __copy__ = copy

    def __deepcopy__(self, memo):
        new = self.__class__(ref_type=self.ref_type)
        with _IterationGuard(self):
            for key, value in self.data.items():
                o = key()
                if o is not None:
                    new[o] = _copy.deepcopy(value, memo)
        return new

    def get(self, key, default=None):
        return self.data.get(self.ref_type(key), default)

    def __contains__(self, key):
        try:
            wr = self.ref_type(key)
        except TypeError:
            return False
        return wr in self.data

    def items(self):
        with _IterationGuard(self):
            for wr, value in self.data.items():
                key = wr()
                if key is not None:
                    yield key, value

    def keys(self):
        with _IterationGuard(self):
            for wr in self.data:
                obj = wr()
                if obj is not None:
                    yield obj

    __iter__ = keys

    def values(self):
        with _IterationGuard(self):
            for wr, value in self.data.items():
                if wr() is not None:
                    yield value

    def keyrefs(self):
        """The weak references to the keys (some may be dead)."""
        return list(self.data)

    def popitem(self):
        self._dirty_len = True
        while True:
            key, value = self.data.popitem()
            o = key()
            if o is not None:
                return o, value

    def pop(self, key, *args):
        self._dirty_len = True
        return self.data.pop(self.ref_type(key), *args)

    def setdefault(self, key, default=None):
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def update(self, dict=None, **kwargs):
        d = self.data
        if dict is not None:
            if not hasattr(dict, "items"):
                dict = type({})(dict)
            for key, value in dict.items():
                d[self.ref_type(key, self._remove)] = value
        if kwargs:
            self.update(kwargs)

    def __ior__(self, other):
        self.update(other)
        return self

    def __or__(self, other):
        if isinstance(other, Mapping):
            c = self.copy()
            c.update(other)
            return c
        return NotImplemented

    def __ror__(self, other):
        if isinstance(other, Mapping):
            c = self.__class__(ref_type=self.ref_type)
            c.update(other)
            c.update(self)
            return c
        return NotImplemented

    def __eq__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor: calling it gives the tensor, or None once
    it has been collected."""
    __slots__ = ["ref"]

    def __init__(self, tensor):
        if not isinstance(tensor, _TensorBase):
            raise TypeError(f"TensorWeakRef expects a Tensor, got {type(tensor).__name__}")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
