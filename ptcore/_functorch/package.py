"""The ``functorch`` package of torch's distribution, which the launcher
(:mod:`ptcore.as_torch`) answers ``import functorch`` with: the function transforms of
:mod:`ptcore.func` and the functional-module API of
:mod:`ptcore._functorch.make_functional`.  (``functorch.dim`` is not provided: ``from functorch
import dim`` raises ImportError, which libraries such as tensordict take as its absence.)"""
from ptcore._functorch.make_functional import (FunctionalModule, FunctionalModuleWithBuffers,
                                               combine_state_for_ensemble, make_functional,
                                               make_functional_with_buffers)
from ptcore.func import (functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                         vjp, vmap)
from ptcore.fx.experimental.proxy_tensor import make_fx

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "make_functional", "make_functional_with_buffers", "functionalize", "grad",
           "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "vmap", "make_fx"]
