"""A module-level boolean flag with PyTorch's type check (shared by the
backends' modules)."""
import builtins
import contextlib


def check_bool(name, value):
    if not isinstance(value, builtins.bool):
        raise RuntimeError(f"{name} expects a bool, but got {type(value).__name__}")
    return value


class FlagModule:
    """Mixin for a module class whose attributes in ``_FLAGS`` are checked bools."""

    def __setattr__(self, name, value):
        checks = type(self).__dict__.get("_FLAGS", {})
        if name in checks:
            value = check_bool(checks[name], value)
        super().__setattr__(name, value)


@contextlib.contextmanager
def flags_context(module, **values):
    """Set module attributes for the block, restore them after."""
    old = {k: getattr(module, k) for k, v in values.items() if v is not None}
    try:
        for k in old:
            setattr(module, k, values[k])
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)
