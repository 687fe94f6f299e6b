"""Hook handles and module backward hooks (``torch.utils.hooks``)."""
import warnings

from ptcore._hooks import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f):
    """Mark a function as an unserializable hook (suppresses serialization warnings)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each backward hook on ``tensor`` that serialization drops
    (those not marked with :func:`unserializable_hook`)."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks:
        for hook in hooks.values():
            if not hasattr(hook, "__torch_unserializable__"):
                warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                              "is expected, you can decorate the function with "
                              "@ptcore.utils.hooks.unserializable_hook to suppress this warning",
                              stacklevel=2)


def __getattr__(name):
    # BackwardHook (what nn.Module's full backward hooks run on) lives with the
    # Function it routes tensors through; nn imports this module, so on first use
    if name == "BackwardHook":
        from ptcore.nn.modules._functions import BackwardHook
        return BackwardHook
    raise AttributeError(f"module 'ptcore.utils.hooks' has no attribute '{name}'")
