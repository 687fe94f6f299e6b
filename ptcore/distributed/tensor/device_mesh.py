"""``torch.distributed.tensor.device_mesh``: :class:`~ptcore.distributed.DeviceMesh` and
:func:`~ptcore.distributed.init_device_mesh` under the tensor package's name."""
from ptcore.distributed.device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DeviceMesh", "init_device_mesh"]
