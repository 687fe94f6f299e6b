"""torch's FSDP2 API (``torch.distributed.fsdp.fully_shard``): its policies and its module
class, so that code written for it imports.  ptcore implements FSDP1
(:class:`~ptcore.distributed.fsdp.FullyShardedDataParallel`); :func:`fully_shard`, whose
parameters are sharded DTensors, raises :class:`NotImplementedError`.
"""
from dataclasses import dataclass

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "fully_shard", "register_fsdp_forward_method"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes FSDP2 computes (``param_dtype``), reduces gradients (``reduce_dtype``) and
    returns outputs (``output_dtype``) in; ``cast_forward_inputs`` casts the inputs too."""
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading (the base of the offload policies)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep sharded parameters, gradients and optimizer states on the CPU."""
    pin_memory: bool = True


class FSDPModule:
    """The class that ``fully_shard`` mixes into a module's class.  ptcore never makes one
    (:func:`fully_shard` is not implemented), so ``isinstance(m, FSDPModule)`` is False."""


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(),
                ignored_params=None, dp_mesh_dims=None):
    """FSDP2: not implemented in ptcore (its parameters are DTensors sharded over the ranks).

    Raises
    ------
    NotImplementedError
        Always; wrap the model in :class:`~ptcore.distributed.fsdp.FullyShardedDataParallel`
        (FSDP1) instead.
    """
    raise NotImplementedError(
        "fully_shard (FSDP2) is not implemented in ptcore: its parameters are DTensors sharded "
        "over the ranks, which ptcore's DTensor does not support; use "
        "ptcore.distributed.fsdp.FullyShardedDataParallel (FSDP1)")


def register_fsdp_forward_method(module, method_name):
    """Register another forward method of a ``fully_shard`` module: nothing to do in ptcore,
    whose modules are never FSDP2 modules."""
