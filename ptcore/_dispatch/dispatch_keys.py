"""``torch._C.DispatchKey``, ``DispatchKeySet`` and the key guards, as far as ptcore's
dispatch point has their meaning.

PyTorch routes every op call through a set of dispatch keys; libraries name keys to
register kernels and to step past a layer (torchvision's autocast wrappers call its
ops inside ``_ExcludeDispatchKeyGuard(<the autocast keys>)`` so that the call does not
autocast again).  ptcore's dispatch point has layers, not keys (doc/dev/dispatch.rst);
the keys here are values a program can build, combine and test, and the guard
excludes the one layer a key set can name in ptcore: autocast (its casts stop inside
the guard, as ATen's autocast keys do).  Excluding any other key raises
NotImplementedError naming it: ptcore has no layer of that key to step past.
"""
import enum

from ptcore._dispatch import autocast as _autocast

__all__ = ["DispatchKey", "DispatchKeySet", "ExcludeDispatchKeyGuard"]


class DispatchKey(enum.IntEnum):
    """Names of PyTorch's dispatch keys (``torch._C.DispatchKey``), by torch's order."""
    Undefined = 0
    Dense = 1
    Sparse = 2
    SparseCsr = 3
    Quantized = 4
    NestedTensor = 5
    BackendSelect = 6
    Python = 7
    Fake = 8
    FuncTorchDynamicLayerBackMode = 9
    Functionalize = 10
    Named = 11
    Conjugate = 12
    Negative = 13
    ZeroTensor = 14
    ADInplaceOrView = 15
    AutogradOther = 16
    AutogradFunctionality = 17
    AutogradNestedTensor = 18
    Tracer = 19
    AutocastCPU = 20
    AutocastMTIA = 21
    AutocastMAIA = 22
    AutocastXPU = 23
    AutocastIPU = 24
    AutocastHPU = 25
    AutocastXLA = 26
    AutocastMPS = 27
    AutocastCUDA = 28
    AutocastPrivateUse1 = 29
    FuncTorchBatched = 30
    BatchedNestedTensor = 31
    FuncTorchVmapMode = 32
    Batched = 33
    VmapMode = 34
    FuncTorchGradWrapper = 35
    DeferredInit = 36
    PythonTLSSnapshot = 37
    FuncTorchDynamicLayerFrontMode = 38
    TESTING_ONLY_GenericWrapper = 39
    TESTING_ONLY_GenericMode = 40
    PreDispatch = 41
    PythonDispatcher = 42
    CPU = 43
    CUDA = 44
    Meta = 45
    AutogradCPU = 46
    AutogradCUDA = 47
    AutogradMeta = 48
    CompositeImplicitAutograd = 49
    CompositeExplicitAutograd = 50
    Autograd = 51


_AUTOCAST = frozenset(k for k in DispatchKey if k.name.startswith("Autocast"))


def _key(key, what):
    if not isinstance(key, DispatchKey):
        raise TypeError(f"DispatchKeySet.{what}(): expected a DispatchKey, got "
                        f"{type(key).__name__}")
    return key


class DispatchKeySet:
    """A set of :class:`DispatchKey` s (``torch._C.DispatchKeySet``): built from one key
    (or none), combined with ``|``, ``&`` and ``-``, tested with :meth:`has`."""
    __slots__ = ("_keys",)

    def __init__(self, key=None):
        if key is None:
            self._keys = frozenset()
        elif isinstance(key, DispatchKeySet):
            self._keys = key._keys
        elif isinstance(key, DispatchKey):
            self._keys = frozenset((key,))
        else:
            raise TypeError(f"DispatchKeySet(): expected a DispatchKey, got "
                            f"{type(key).__name__}")

    @classmethod
    def _of(cls, keys):
        s = cls()
        s._keys = frozenset(keys)
        return s

    def _other(self, other, op):
        if not isinstance(other, DispatchKeySet):
            raise TypeError(f"unsupported operand type(s) for {op}: 'DispatchKeySet' and "
                            f"'{type(other).__name__}'")
        return other._keys

    def __or__(self, other):
        return DispatchKeySet._of(self._keys | self._other(other, "|"))

    def __and__(self, other):
        return DispatchKeySet._of(self._keys & self._other(other, "&"))

    def __sub__(self, other):
        return DispatchKeySet._of(self._keys - self._other(other, "-"))

    def add(self, key):
        """A new set with ``key`` added."""
        return DispatchKeySet._of(self._keys | {_key(key, "add")})

    def remove(self, key):
        """A new set without ``key``."""
        return DispatchKeySet._of(self._keys - {_key(key, "remove")})

    def has(self, key):
        return _key(key, "has") in self._keys

    def empty(self):
        return not self._keys

    def highestPriorityTypeId(self):  # noqa: N802  (torch's name)
        return max(self._keys) if self._keys else DispatchKey.Undefined

    def __iter__(self):
        return iter(sorted(self._keys))

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self):
        return hash(self._keys)

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in sorted(self._keys))})"


class ExcludeDispatchKeyGuard:
    """``with torch._C._ExcludeDispatchKeyGuard(keyset):`` ops inside skip the layers of
    the keys in ``keyset`` -- autocast for the ``Autocast*`` keys (ops run in their
    inputs' dtypes, as inside an op autocast already cast for).  Other keys name no
    layer of ptcore's: NotImplementedError.  As torch's, the guard holds from
    ``__enter__`` to ``__exit__``."""

    def __init__(self, keyset):
        keys = DispatchKeySet(keyset)._keys
        other = sorted(keys - _AUTOCAST)
        if other:
            raise NotImplementedError(
                f"_ExcludeDispatchKeyGuard: ptcore has no dispatch layer for "
                f"{', '.join(k.name for k in other)} to exclude (only the Autocast keys: "
                "autocast)")
        self._autocast = bool(keys & _AUTOCAST)
        self._held = 0

    def __enter__(self):
        if self._autocast:
            _autocast.state.excluded += 1
            self._held += 1
        return self

    def __exit__(self, *exc):
        if self._held:
            _autocast.state.excluded -= 1
            self._held -= 1
        return False
