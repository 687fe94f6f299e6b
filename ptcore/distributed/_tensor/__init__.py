"""``torch.distributed._tensor``: the old name of :mod:`ptcore.distributed.tensor`, kept as
torch keeps it (Opacus and older checkpointing code import from it); its submodules
``experimental``, ``device_mesh`` and ``placement_types`` are the new package's modules."""
import sys

from ptcore.distributed.tensor import (
    DeviceMesh, DTensor, Partial, Placement, Replicate, Shard, device_mesh, distribute_tensor,
    experimental, init_device_mesh, placement_types,
)

for _name, _module in (("device_mesh", device_mesh), ("experimental", experimental),
                       ("placement_types", placement_types)):
    sys.modules[f"{__name__}.{_name}"] = _module

__all__ = ["DTensor", "DeviceMesh", "Partial", "Placement", "Replicate", "Shard",
           "distribute_tensor", "init_device_mesh"]
