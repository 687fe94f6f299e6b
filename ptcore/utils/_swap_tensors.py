"""``swap_tensors``: exchange the contents of two tensors while each keeps its identity."""

import sys
import weakref

from ptcore import _tensor as _C

__all__ = ["swap_tensors"]

# autograd state held in the tensor core's slots
_AUTOGRAD_SLOTS = ("_requires_grad", "_grad", "_grad_fn", "_backward_hooks", "_post_acc_hooks",
                   "_retains_grad")


def swap_tensors(t1, t2):
    """Swap the contents of ``t1`` and ``t2``: afterwards ``t1`` is what ``t2`` was and vice versa.

    The Python objects keep their identities (so references held elsewhere, e.g. by an optimizer,
    see the new contents); what moves is the class, the instance ``__dict__``, the storage, shape,
    strides and dtype, and the autograd state (``requires_grad``, ``grad``, ``grad_fn``, hooks).
    Each tensor keeps its own version counter.  As in torch, a tensor with weak references to it,
    or a leaf that a graph which has not run backward yet flows into, cannot be swapped
    (``RuntimeError``).
    """
    from ptcore import Tensor
    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors: {name} must be a Tensor, got {type(t).__name__}")
    if t1 is t2:
        return
    # A leaf's cached gradient accumulator refers to it weakly.  While an autograd graph that has
    # not run backward holds that accumulator, the swap is refused (torch's use-count check);
    # otherwise the accumulator is dropped and a new one is made on the next use.
    for name, t in (("t1", t1), ("t2", t2)):
        acc = t._grad_acc
        if any(acc is None or r is not acc._var for r in weakref.getweakrefs(t)):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
        # references: the tensor's slot, ``acc`` and getrefcount's argument
        if acc is not None and sys.getrefcount(acc) > 3:
            raise RuntimeError(
                f"Cannot swap {name}: it is an input of an autograd graph that has not run "
                "backward yet (make sure no other references to it are held)")
        del acc

    t1._grad_acc = t2._grad_acc = None
    alias1 = t1.detach()                        # keeps t1's storage and layout alive
    state1 = [getattr(t1, s) for s in _AUTOGRAD_SLOTS]
    state2 = [getattr(t2, s) for s in _AUTOGRAD_SLOTS]
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    _C._tf_recount(t1)
    _C._tf_recount(t2)
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    _C._set_data(t1, t2)
    _C._set_data(t2, alias1)
    for s, v1, v2 in zip(_AUTOGRAD_SLOTS, state1, state2):
        setattr(t1, s, v2)
        setattr(t2, s, v1)
