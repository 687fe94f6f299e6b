"""The batched tensor of ``vmap`` (functorch's BatchedTensor).

A :class:`BatchedTensor` is what the function under ``vmap`` sees: a tensor
with the *logical* (per-sample) shape, dtype and device, standing for a
*physical* tensor whose dimension 0 is the batch dimension of one vmap
level.  Nested vmaps nest the wrappers: the physical tensor of an inner
level may itself be batched at an outer level.

The wrapper's own Cython fields give the logical shape, dtype and device at
C speed; its data is a single poisoned element (NaN, or the dtype's minimum)
broadcast with zero strides, so code that reads a wrapper's memory directly
instead of calling an op shows it rather than silently using one sample.
Every op on it goes through the batching layer of the dispatch point
(:mod:`ptcore._dispatch.batching`), which computes on the physical tensor.
"""
import threading

from ptcore._tensor import _TensorBase, _make_subclass_impl, _set_data
from ptcore.tensor import Tensor
from ptcore._dispatch import batching as _B
from ptcore._dispatch.torch_function import _disabled_torch_function_impl

__all__ = ["BatchedTensor", "wrap", "is_batched", "level_of", "to_physical", "from_physical",
           "maybe_level"]


class _Local(threading.local):
    def __init__(self):
        self.raw_random = 0      # > 0 while a rule runs a random op on physical tensors


# (read by the batching rules: such a random op is the vmap's own draw, not an
# unbatched random op of the function)
_loc = _Local()


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

    def requires_grad_(self, requires_grad=True):
        raise RuntimeError("You are attempting to call Tensor.requires_grad_() (or perhaps using "
                           "ptcore.autograd.functional.* APIs) inside of a function being "
                           "transformed by vmap. This is unsupported, please attempt to use the "
                           "ptcore.func transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or "
                           "call requires_grad_() outside of a function being transformed instead.")

    @property
    def grad_fn(self):
        return None

    # the Cython view properties read the wrapper's own fields: go through ops
    @property
    def T(self):
        return self.permute(*range(self.dim() - 1, -1, -1)) if self.dim() > 1 else self.view_as(self)

    @property
    def mT(self):
        return self.transpose(-2, -1)

    @property
    def H(self):
        return self.T.conj()

    @property
    def mH(self):
        return self.transpose(-2, -1).conj()

    def __format__(self, spec):
        # torch's batched tensors are plain Tensors: a 0-d one formats as its
        # item(), which vmap refuses
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self):
        return f"BatchedTensor(lvl={self._bt_level}, bdim=0, value=\n{self._bt_phys!r})"

    def __reduce_ex__(self, proto):
        raise RuntimeError("vmap: cannot pickle or save a tensor inside vmap")

    # the in-place random fills are core methods (not ops of the table): batched here
    def _random_fill(self, name, args, kwargs):
        f = _B.frame_of(self._bt_level)
        if f is None:
            raise RuntimeError(f"vmap: {name} on a batched tensor of a vmap that has returned")
        if f.randomness == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags on "
                               "vmap or perform the randomness operation out of vmap")
        p = physical(self)
        # the fill of the physical tensor is this vmap's own random draw: the
        # batching layer must not treat it as an unbatched random op
        _loc.raw_random += 1
        try:
            if f.randomness == "different":
                getattr(p, name)(*args, **kwargs)
            else:
                first = p.select(0, 0)
                getattr(first, name)(*args, **kwargs)
                p.copy_(first.unsqueeze(0).expand(p.shape))
        finally:
            _loc.raw_random -= 1
        return self

    def uniform_(self, *args, **kwargs):
        return self._random_fill("uniform_", args, kwargs)

    def normal_(self, *args, **kwargs):
        return self._random_fill("normal_", args, kwargs)

    def random_(self, *args, **kwargs):
        return self._random_fill("random_", args, kwargs)

    def bernoulli_(self, *args, **kwargs):
        return self._random_fill("bernoulli_", args, kwargs)

    def exponential_(self, *args, **kwargs):
        return self._random_fill("exponential_", args, kwargs)

    def geometric_(self, *args, **kwargs):
        return self._random_fill("geometric_", args, kwargs)

    def cauchy_(self, *args, **kwargs):
        return self._random_fill("cauchy_", args, kwargs)

    def log_normal_(self, *args, **kwargs):
        return self._random_fill("log_normal_", args, kwargs)


_POISON = {}


def _poison(dtype, device):
    key = (dtype, str(device))
    p = _POISON.get(key)
    if p is None:
        import ptcore
        if dtype.is_floating_point or dtype.is_complex:
            v = float("nan")
        elif dtype is ptcore.bool:
            v = False
        else:
            v = ptcore.iinfo(dtype).min
        p = _POISON[key] = ptcore.full((1,), v, dtype=dtype, device=device)
    return p


def wrap(phys, level):
    """The BatchedTensor of level ``level`` over ``phys`` (batch dim 0)."""
    shape = phys.shape[1:]
    t = _make_subclass_impl(BatchedTensor, _poison(phys.dtype, phys.device), False)
    _set_data(t, _TensorBase.as_strided(t, shape, (0,) * len(shape), 0))
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
