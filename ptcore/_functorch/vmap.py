"""``ptcore._functorch.vmap`` (``torch._functorch.vmap``): the helpers of torch's vmap
implementation that libraries import by this path (tensordict's functional modules and
TensorDict class take ``_add_batch_dim``, ``_maybe_remove_batch_dim``, ``_get_name`` ...).
``vmap`` itself is :func:`ptcore.func.vmap`, which calls ``_process_batched_inputs``,
``_create_batched_inputs`` and ``_unwrap_batched`` through this module, as torch's does:
tensordict replaces them to carry TensorDicts through vmap (TorchRL's value estimators)."""
import functools

from ptcore.func._c_functorch import _add_batch_dim, _remove_batch_dim, is_batchedtensor
from ptcore.func._vmap import vmap
# the steps of a vmapped call, looked up here at each call (libraries replace them)
from ptcore.func._vmap import _create_batched_inputs, _process_batched_inputs, _unwrap_batched
from ptcore.tensor import Tensor
from ptcore.utils._pytree import (_broadcast_to_and_flatten, tree_flatten, tree_map_,
                                  tree_unflatten)

__all__ = ["vmap", "Tensor", "tree_flatten", "tree_unflatten", "tree_map_",
           "_broadcast_to_and_flatten", "_add_batch_dim", "_remove_batch_dim",
           "is_batchedtensor", "_get_name", "_maybe_remove_batch_dim", "vmap_impl",
           "_process_batched_inputs", "_create_batched_inputs", "_unwrap_batched"]


def _get_name(func):
    """``func``'s name for vmap's messages."""
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _maybe_remove_batch_dim(name, batched_output, vmap_level, batch_size, out_dim):
    """One output of a vmapped function as a plain tensor with its batch dimension at
    ``out_dim`` (``None``: the output must not be batched, and is returned as it is)."""
    if out_dim is None:
        if isinstance(batched_output, Tensor) and is_batchedtensor(batched_output):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             f"when out_dim is None")
        return batched_output
    if not isinstance(batched_output, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(batched_output)}. Did you mean to set out_dims= to None for "
                         f"output?")
    return _remove_batch_dim(batched_output, vmap_level, batch_size, out_dim)


def vmap_impl(func, in_dims, out_dims, randomness, chunk_size, *args, **kwargs):
    """``torch._functorch.vmap.vmap_impl``: ``vmap(func, ...)(*args, **kwargs)``."""
    return vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)(*args, **kwargs)
