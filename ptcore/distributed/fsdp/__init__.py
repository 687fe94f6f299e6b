"""``ptcore.distributed.fsdp``: fully sharded data parallelism (``torch.distributed.fsdp``,
the FSDP1 ``FullyShardedDataParallel`` API) on ptcore's MPI process groups.

Each FSDP unit flattens its parameters into one flat parameter and keeps a
``1/world_size`` shard of it on every rank; forward gathers the full parameters of the
unit, backward reduce-scatters the averaged gradients into the shards, and the optimizer
steps on the shards.  Nested units come from ``auto_wrap_policy``
(:mod:`ptcore.distributed.fsdp.wrap`) or from wrapping submodules by hand.
"""
from ptcore.distributed.fsdp import api, fully_sharded_data_parallel, wrap  # noqa: F401
from ptcore.distributed.fsdp.fully_sharded_data_parallel import *  # noqa: F401,F403
from ptcore.distributed.fsdp._fully_shard import (  # noqa: F401
    CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard,
    register_fsdp_forward_method,
)

__all__ = list(fully_sharded_data_parallel.__all__) + [
    "CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard",
    "register_fsdp_forward_method"]
