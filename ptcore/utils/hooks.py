"""Hook handles (``torch.utils.hooks``)."""
from ptcore._hooks import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]


def unserializable_hook(f):
    """Mark a function as an unserializable hook (suppresses serialization warnings)."""
    f.__torch_unserializable__ = True
    return f
