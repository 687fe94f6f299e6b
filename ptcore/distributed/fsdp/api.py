"""Configuration types of ``ptcore.distributed.fsdp`` (``torch.distributed.fsdp.api``):
sharding strategies, mixed precision, CPU offload, backward prefetch and state-dict settings."""
from dataclasses import dataclass
from enum import Enum, auto

__all__ = [
    "BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
    "LocalOptimStateDictConfig", "LocalStateDictConfig", "MixedPrecision", "OptimStateDictConfig",
    "ShardedOptimStateDictConfig", "ShardedStateDictConfig", "ShardingStrategy",
    "StateDictConfig", "StateDictSettings", "StateDictType",
]


class ShardingStrategy(Enum):
    """How FSDP shards parameters, gradients and optimizer state over the ranks.

    ``FULL_SHARD`` shards all three and gathers parameters for each unit's forward and again
    for its backward; ``SHARD_GRAD_OP`` keeps the gathered parameters from forward through
    backward; ``NO_SHARD`` replicates everything and all-reduces gradients (as DDP);
    ``HYBRID_SHARD`` shards within the first group of a ``(shard_group, replicate_group)``
    pair and all-reduces over the second (with the default world group: as ``FULL_SHARD``);
    ``_HYBRID_SHARD_ZERO2`` is the same with ``SHARD_GRAD_OP`` inside the shard group.
    """
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """When to gather the next unit's parameters in backward.  ptcore's collectives run on
    the calling thread, so prefetching does not change the schedule; the value is kept for
    torch parity."""
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    """What ``state_dict()`` of an FSDP model returns: the full unflattened tensors with the
    original names (``FULL_STATE_DICT``), each rank's local flat shard (``LOCAL_STATE_DICT``)
    or per-parameter shards (``SHARDED_STATE_DICT``, not supported: ptcore has no
    ShardedTensor/DTensor)."""
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class MixedPrecision:
    """Low-precision compute for FSDP.

    Parameters
    ----------
    param_dtype : dtype, optional
        Dtype of the gathered parameters used by forward and backward (the sharded
        parameters the optimizer updates keep their dtype).
    reduce_dtype : dtype, optional
        Dtype in which gradients are reduced (default: ``param_dtype``).
    buffer_dtype : dtype, optional
        Dtype of the module's floating-point buffers during forward.
    keep_low_precision_grads : bool
        Leave the sharded gradients in the reduce dtype instead of casting them back.
    cast_forward_inputs, cast_root_forward_inputs : bool
        Cast floating-point forward inputs to ``param_dtype`` for every FSDP unit / for the
        root only (default).
    """
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


@dataclass
class CPUOffload:
    """Keep parameters (and gradients) on the CPU between uses.  ptcore computes on the CPU,
    so this is always the case; accepted for torch parity."""
    offload_params: bool = False


@dataclass
class StateDictConfig:
    """Base of the state-dict configurations; ``offload_to_cpu`` is a no-op on the CPU."""
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """``FULL_STATE_DICT`` options: with ``rank0_only`` only rank 0 receives the full state
    dict (the others get an empty one)."""
    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    """``LOCAL_STATE_DICT`` options."""


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    """``SHARDED_STATE_DICT`` options (that state-dict type is not supported by ptcore)."""
    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    """Base of the optimizer state-dict configurations."""
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    """Full optimizer state dict options: ``rank0_only`` as in :class:`FullStateDictConfig`."""
    rank0_only: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    """Local optimizer state dict options."""
    offload_to_cpu: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    """Sharded optimizer state dict options."""
    _use_dtensor: bool = False


@dataclass
class StateDictSettings:
    """What :meth:`FullyShardedDataParallel.get_state_dict_type` returns."""
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig
