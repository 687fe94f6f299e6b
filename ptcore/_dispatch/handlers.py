"""Registries of a tensor subclass's own implementations of ops.

A tensor subclass (sparse, masked, nested) answers ``__torch_function__``
for the ops it implements itself.  Each implementation registers where it is
written, naming the op once::

    implements = Handlers("sparse")

    @implements("div", "true_divide", "divide")
    def div(input, other, *, rounding_mode=None):
        ...

and the subclass's ``__torch_function__`` looks the called op's name up in
the registry (a ``dict``: op name -> implementation).
"""

__all__ = ["Handlers"]


class Handlers(dict):
    """op name -> the implementation ``owner`` (a subclass's name, for
    errors) registered for it; calling it with op names gives the decorator
    that registers a function for them."""

    def __init__(self, owner):
        super().__init__()
        self.owner = owner

    def __call__(self, *names):
        def register(fn):
            for name in names:
                if name in self:
                    raise ValueError(f"{self.owner}: op {name!r} has two implementations "
                                     f"({self[name].__name__} and {fn.__name__})")
                self[name] = fn
            return fn
        return register

    def __repr__(self):
        return f"<{self.owner} implementations of {len(self)} ops>"
