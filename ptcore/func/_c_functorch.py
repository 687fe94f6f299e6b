"""``ptcore._C._functorch`` (``torch._C._functorch``): functorch's batched-tensor primitives,
which libraries that carry their own containers through ``vmap`` call directly (tensordict
imports ``is_batchedtensor``, ``_add_batch_dim``, ``_remove_batch_dim`` and
``get_unwrapped``).  Over ptcore's :class:`~ptcore.func._batched.BatchedTensor`, whose
physical tensor holds its batch dimension first: ``maybe_get_bdim`` of a batched tensor is 0
and ``get_unwrapped`` returns that physical tensor."""
from ptcore._dispatch import batching as _B
from ptcore._tensor import _TensorBase
from ptcore.func import _batched

__all__ = ["is_batchedtensor", "_add_batch_dim", "_remove_batch_dim", "get_unwrapped",
           "maybe_get_level", "maybe_get_bdim", "current_level", "maybe_current_level",
           "is_functorch_wrapped_tensor", "is_gradtrackingtensor", "_unwrap_batched"]


def _tensor_arg(fn, t):
    if not isinstance(t, _TensorBase):
        raise TypeError(f"{fn}(): argument 'self' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")


def is_batchedtensor(tensor):
    """Whether ``tensor`` is a vmap level's batched tensor."""
    _tensor_arg("is_batchedtensor", tensor)
    return _batched.is_batched(tensor)


def is_functorch_wrapped_tensor(tensor):
    """Whether ``tensor`` is a transform's wrapper (here: a batched tensor)."""
    return is_batchedtensor(tensor)


def is_gradtrackingtensor(tensor):
    """ptcore's grad transforms track on plain tensors: never a wrapper."""
    _tensor_arg("is_gradtrackingtensor", tensor)
    return False


def _add_batch_dim(self, batch_dim, level):
    """``self`` seen with dimension ``batch_dim`` as the batch dimension of vmap ``level``."""
    _tensor_arg("_add_batch_dim", self)
    nd = self.dim()
    if not -nd <= batch_dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {batch_dim})")
    return _batched.wrap(self.movedim(batch_dim, 0), int(level))


def _remove_batch_dim(self, level, batch_size, out_dim):
    """The plain tensor of ``self`` at vmap ``level``, its batch dimension at ``out_dim``
    (a tensor not batched at ``level`` is expanded to ``batch_size`` there)."""
    _tensor_arg("_remove_batch_dim", self)
    phys = _batched.maybe_level(self, level)
    if phys is None:
        phys = self.unsqueeze(0).expand((int(batch_size),) + tuple(self.shape))
    return phys.movedim(0, out_dim)


def get_unwrapped(tensor):
    """The tensor a batched ``tensor`` wraps (its batch dimension first)."""
    _tensor_arg("get_unwrapped", tensor)
    if not _batched.is_batched(tensor):
        raise RuntimeError("No wrappers present!")
    return tensor._bt_phys


def _unwrap_batched(tensor, level):
    """``(physical tensor, batch dim)`` of ``tensor`` at ``level``, or ``(tensor, None)``."""
    phys = _batched.maybe_level(tensor, level)
    return (tensor, None) if phys is None else (phys, 0)


def maybe_get_level(tensor):
    """The vmap level ``tensor`` is batched at, or -1."""
    level = _batched.level_of(tensor)
    return -1 if level is None else level


def maybe_get_bdim(tensor):
    """The batch dimension of a batched ``tensor``'s physical tensor (0), or -1."""
    return 0 if _batched.is_batched(tensor) else -1


def maybe_current_level():
    """The innermost active vmap level on this thread, or None."""
    levels = _B.current_levels()
    return levels[-1] if levels else None


def current_level():
    """The innermost active vmap level on this thread."""
    level = maybe_current_level()
    if level is None:
        raise RuntimeError("current_level(): no function transform is active")
    return level
