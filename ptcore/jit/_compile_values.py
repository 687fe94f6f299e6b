"""The script compiler's compile-time values: a value known while compiling
(:class:`Const`), a block that always raises (``_RAISED``) and tuples/lists of
compile-time length whose items are run-time values (:class:`_Seq`, and
:class:`_NTSeq` for a NamedTuple).  The compiler (``_script``), the inliner
(``_inline``) and the TorchScript reader (``_torchscript``) share them."""

__all__ = ["Const"]


class Const:
    """A value known at compile time."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Raised(Const):
    """What a block that always raises "returns": no value, it never completes."""


_RAISED = _Raised(None)


class _Seq:
    """A tuple/list of compile-time length whose items are run-time values."""
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items)


class _NTSeq(_Seq):
    """A NamedTuple built in the scripted code: its items and its class (fields by name)."""
    __slots__ = ("cls",)

    def __init__(self, items, cls):
        super().__init__(items)
        self.cls = cls
