"""Autograd methods of ``ptcore.Tensor`` (:func:`methods`; the package root binds them)."""
import weakref
import sys
import warnings

from ptcore.autograd.graph import _add_hook, gradient_edge
from ptcore.autograd.engine import backward as _engine_backward
from ptcore.autograd.graph import _HookDict
from ptcore.autograd.graph import _RemovableHandle

_GRAD_WARN = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
              ".grad attribute won't be populated during autograd.backward(). If you indeed want "
              "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
              "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
              "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
              "information.")


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor w.r.t. the graph leaves into their ``.grad``."""
    _engine_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self, hook):
    """``hook(grad) -> Tensor or None`` runs when this tensor's gradient is computed."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = self._grad_fn
    if fn is not None:
        return fn._register_tensor_prehook(self._output_nr, hook)
    if self._backward_hooks is None:
        self._backward_hooks = _HookDict()
    h = _RemovableHandle(self._backward_hooks)
    self._backward_hooks[h.id] = hook
    gradient_edge(self)       # make sure the accumulator exists
    return h


def register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor)`` runs after a leaf's ``.grad`` has been accumulated."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if self._post_acc_hooks is None:
        self._post_acc_hooks = _HookDict()
    h = _RemovableHandle(self._post_acc_hooks)
    self._post_acc_hooks[h.id] = hook
    return h


def retain_grad(self):
    """Populate ``.grad`` for this non-leaf tensor during backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None:
        return
    if self._retains_grad:
        return
    fn = self._grad_fn
    if fn._retain is None:
        fn._retain = {}
    fn._retain[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


def _grad_get(self):
    if self._grad_fn is not None and not self._retains_grad and self._grad is None:
        warnings.warn(_GRAD_WARN, UserWarning, stacklevel=2)
    return self._grad


def _sole_owner(self):
    st = self.untyped_storage()
    return (sys.getrefcount(st) <= 3 and self.storage_offset() == 0
            and st.nbytes() == self.numel() * self.element_size())


def methods(T):
    """The autograd methods and attributes of ``T`` (the package root puts
    them on ``ptcore.Tensor``)."""
    old = T.grad
    return {"backward": backward, "register_hook": register_hook,
            "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
            "retain_grad": retain_grad, "_output_nr": 0,
            "_sole_owner": _sole_owner,
            "grad": property(_grad_get, old.fset, old.fdel, old.__doc__)}
