"""The old import path of torch's FSDP2 API (``torch.distributed._composable.fsdp``): the
names of :mod:`ptcore.distributed.fsdp._fully_shard`."""
from ptcore.distributed.fsdp._fully_shard import (  # noqa: F401
    CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard,
    register_fsdp_forward_method,
)

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "fully_shard", "register_fsdp_forward_method"]
