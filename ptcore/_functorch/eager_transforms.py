"""``ptcore._functorch.eager_transforms`` (``torch._functorch.eager_transforms``): the module
path of torch's function transforms, which libraries read them from (the transforms are
:mod:`ptcore.func`'s), and ``_wrap_tensor_for_grad``, which PyPose replaces while its
``pp.func.jacrev`` runs (to keep LieTensor inputs LieTensors)."""
from ptcore.func import (functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                         linearize, vjp)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functionalize"]


def _wrap_tensor_for_grad(maybe_tensor, level):
    """torch's wrapping of an input of a grad transform at ``level`` in a tensor of that
    level.  ptcore's transforms differentiate a detached copy of the input itself (of the
    input's own type: a subclass stays one), wrap nothing and call no such hook: the
    input comes back as it is."""
    return maybe_tensor
