"""``ptcore.distributed.tensor``: tensors placed on a device mesh (``torch.distributed.tensor``).

:class:`DTensor` with :class:`Shard`, :class:`Replicate` and :class:`Partial` placements,
:func:`distribute_tensor`, and :class:`~ptcore.distributed.DeviceMesh`.  ptcore's DTensor holds
the whole tensor on every rank (replicated data, or any placement on a mesh dimension of size
1); sharded and partial DTensors across several ranks raise :class:`NotImplementedError`.
"""
from ptcore.distributed.device_mesh import DeviceMesh, init_device_mesh
from ptcore.distributed.tensor import device_mesh, experimental, placement_types
from ptcore.distributed.tensor._api import DTensor, distribute_tensor
from ptcore.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "Partial", "Placement", "Replicate", "Shard",
           "distribute_tensor", "init_device_mesh"]
