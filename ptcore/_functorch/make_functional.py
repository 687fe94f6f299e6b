"""``ptcore._functorch.make_functional`` (``torch._functorch.make_functional``, exported by the
``functorch`` package): functorch's original functional-module API, ``make_functional`` and
``make_functional_with_buffers`` (a stateless copy of a module called with its parameters
and buffers as arguments) and ``combine_state_for_ensemble``, over
:func:`ptcore.func.functional_call`.  tensordict subclasses ``FunctionalModule`` and
``FunctionalModuleWithBuffers``."""
import copy

from ptcore import nn
from ptcore import stack
from ptcore.func import functional_call

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "make_functional",
           "make_functional_with_buffers", "combine_state_for_ensemble"]


def _state(named, disable_autograd_tracking=False):
    names, tensors = [], []
    for name, t in named:
        names.append(name)
        tensors.append(t.requires_grad_(False) if disable_autograd_tracking else t)
    return tuple(names), tuple(tensors)


class FunctionalModuleWithBuffers(nn.Module):
    """What :func:`make_functional_with_buffers` returns: ``fmodel(params, buffers, *args)``
    calls the module with those parameters and buffers."""

    def __init__(self, stateless_model, param_names, buffer_names, param_names_map=None,
                 buffer_names_map=None):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)
        self.buffer_names = tuple(buffer_names)
        self.all_names_map = dict(param_names_map or {n: [n] for n in self.param_names})
        self.all_names_map.update(buffer_names_map or {n: [n] for n in self.buffer_names})

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        param_names, params = _state(model_copy.named_parameters(), disable_autograd_tracking)
        buffer_names, buffers = _state(model_copy.named_buffers())
        return (FunctionalModuleWithBuffers(model_copy, param_names, buffer_names),
                params, buffers)

    def forward(self, params, buffers, *args, **kwargs):
        state = dict(zip(self.param_names, params))
        state.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, state, args, kwargs)


class FunctionalModule(nn.Module):
    """What :func:`make_functional` returns: ``fmodel(params, *args)`` calls the module with
    those parameters."""

    def __init__(self, stateless_model, param_names, names_map=None):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)
        self.names_map = dict(names_map or {n: [n] for n in self.param_names})

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        param_names, params = _state(model_copy.named_parameters(), disable_autograd_tracking)
        return FunctionalModule(model_copy, param_names), params

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                               args, kwargs)


def make_functional(model, disable_autograd_tracking=False):
    """``(fmodel, params)``: a functional copy of ``model`` and its parameters."""
    if len(tuple(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(fmodel, params, buffers)``: a functional copy of ``model``, its parameters and
    buffers."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def _transpose_stack(tuple_of_tuples):
    return tuple(stack(ts).detach() for ts in zip(*tuple_of_tuples))


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` for same-class ``models``: each parameter and buffer
    stacked over the models along a new first dimension (for ``vmap``)."""
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    return funcs[0], _transpose_stack(params), _transpose_stack(buffers)
