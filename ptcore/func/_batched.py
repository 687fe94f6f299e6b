"""The batched tensor of ``vmap`` (functorch's BatchedTensor).

A :class:`BatchedTensor` is what the function under ``vmap`` sees: a tensor
with the *logical* (per-sample) shape, dtype and device, standing for a
*physical* tensor whose dimension 0 is the batch dimension of one vmap
level.  Nested vmaps nest the wrappers: the physical tensor of an inner
level may itself be batched at an outer level.

The wrapper's own Cython fields describe slice 0 of the physical tensor, so
its metadata (``shape``, ``dim()``, ``dtype``, ``device``) is the logical
one at C speed; every op on it goes through the batching layer of the
dispatch point (:mod:`ptcore._dispatch.batching`), which computes on the
physical tensor.
"""
from ptcore._tensor import _TensorBase, _make_subclass_impl, _set_data
from ptcore.tensor import Tensor
from ptcore._dispatch import batching as _B
from ptcore._dispatch.torch_function import _disabled_torch_function_impl

__all__ = ["BatchedTensor", "wrap", "is_batched", "level_of", "to_physical", "from_physical",
           "maybe_level"]


class BatchedTensor(Tensor):
    """A tensor batched over one vmap level (see the module docstring)."""

    # _bt_shared: None, or for a per-sample copy of one tensor made by
    # grad/vjp inside vmap (an expanded, stride-0 leaf): True, then the
    # materialized copy the rules compute on
    __slots__ = ("_bt_phys", "_bt_level", "_bt_shared")
    __torch_function__ = _disabled_torch_function_impl

    @property
    def requires_grad(self):
        return self._bt_phys.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        raise RuntimeError("vmap: setting requires_grad on a tensor inside vmap is not "
                           "supported; use ptcore.func.grad / vjp inside vmap instead")

    @property
    def grad_fn(self):
        return None

    def __repr__(self):
        return f"BatchedTensor(lvl={self._bt_level}, bdim=0, value=\n{self._bt_phys!r})"

    def __reduce_ex__(self, proto):
        raise RuntimeError("vmap: cannot pickle or save a tensor inside vmap")


def wrap(phys, level):
    """The BatchedTensor of level ``level`` over ``phys`` (batch dim 0)."""
    t = _make_subclass_impl(BatchedTensor, phys, False)
    _set_data(t, _TensorBase.select(t, 0, 0))
    t._bt_phys = phys
    t._bt_level = level
    t._bt_shared = None
    return t


def physical(x):
    """The physical tensor of BatchedTensor ``x`` to compute on: a per-sample
    copy of a shared (expanded) leaf is materialized once, since views of a
    tensor whose elements overlap in memory cannot carry per-element
    gradients."""
    s = x._bt_shared
    if s is None:
        return x._bt_phys
    if s is True:
        s = x._bt_shared = x._bt_phys.contiguous()
    return s


def is_batched(x):
    return type(x) is BatchedTensor


def level_of(x):
    return x._bt_level if type(x) is BatchedTensor else None


def maybe_level(x, level):
    """``x``'s physical tensor if it is batched at ``level``, else None."""
    if type(x) is BatchedTensor and x._bt_level == level:
        return x._bt_phys
    return None


def to_physical(t, frames):
    """``t`` as a plain tensor of shape ``(B_1, ..., B_k, *logical)`` over the
    vmap ``frames`` (outermost first); levels ``t`` is not batched at are
    expanded."""
    for f in reversed(frames):
        p = maybe_level(t, f.level)
        if p is None:
            p = t.unsqueeze(0).expand((f.size,) + tuple(t.shape))
        t = p
    return t


def from_physical(p, frames):
    """Inverse of :func:`to_physical`: wrap the leading dims of ``p`` as the levels."""
    for f in frames:
        p = wrap(p, f.level)
    return p
