"""``DTensor``: a tensor placed on a :class:`~ptcore.distributed.DeviceMesh`
(``torch.distributed.tensor.DTensor``), and :func:`distribute_tensor`.

ptcore's DTensor holds data equal to the global tensor on every rank: every placement that
splits or leaves partial values (:class:`Shard`, :class:`Partial`) must lie on a mesh
dimension of size 1, where it places the whole tensor; :class:`Replicate` may lie on any.
That covers single-process meshes and replicated tensors, with torch's values, shapes and
autograd.  A DTensor whose ranks would hold different data (a shard of a dimension, partial
sums over several ranks) raises :class:`NotImplementedError` naming its placements: ptcore
has no sharding propagation for operators.

An operator applied to DTensors runs on their data and returns DTensors on the same mesh
(placed as the first DTensor argument when the shapes agree, else replicated).
"""
import numpy as np

from ptcore.distributed.collectives import broadcast
from ptcore.distributed.device_mesh import DeviceMesh
from ptcore.distributed.tensor.placement_types import Placement, Replicate, Shard
from ptcore._dispatch.torch_function import (DisableTorchFunctionSubclass, as_subclass,
                                             _disabled_torch_function_impl, join_protocol)
from ptcore.tensor import Tensor
from ptcore.utils import _pytree

__all__ = ["DTensor", "distribute_tensor"]


def _normalize_placements(mesh, placements, fn):
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"{fn}: device_mesh must be a DeviceMesh, got {type(mesh).__name__}")
    if placements is None:
        placements = [Replicate()] * mesh.ndim
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"{fn}: `placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"{fn}: placements must be Placement objects (Shard, Replicate, "
                            f"Partial), got {p!r}")
    return placements


def _check_whole(mesh, placements, ndim, fn):
    """Refuse placements under which the ranks would hold different data."""
    for mesh_dim, p in enumerate(placements):
        if isinstance(p, Shard) and not -max(ndim, 1) <= p.dim < max(ndim, 1):
            raise ValueError(f"{fn}: {p!r} is out of range for a tensor of {ndim} dimensions")
        if not p.is_replicate() and mesh.size(mesh_dim) > 1:
            raise NotImplementedError(
                f"{fn}: placements {placements} put {p!r} on mesh dimension {mesh_dim} of size "
                f"{mesh.size(mesh_dim)}: ptcore's DTensor holds the whole tensor on every rank "
                "(Replicate, or any placement on a mesh dimension of size 1); sharded and "
                "partial DTensors across ranks are not implemented")
    if len(placements) != mesh.ndim:
        raise ValueError(f"{fn}: {len(placements)} placements for a mesh of {mesh.ndim} "
                         "dimensions")


class DTensor(Tensor):
    """A tensor placed on a device mesh (``torch.distributed.tensor.DTensor``).

    Make one with :meth:`from_local` or :func:`distribute_tensor`; read its data back with
    :meth:`to_local` or :meth:`full_tensor`.  Its shape, dtype and values are the global
    tensor's.
    """

    _mesh = None
    _placements = ()
    # the class takes part in __torch_function__ from its first instance on (_wrap): importing
    # it (transformers does) must not put every op of the process through the protocol's layer
    __torch_function__ = _disabled_torch_function_impl

    @staticmethod
    def _wrap(data, mesh, placements):
        # (before the first instance, which as_subclass counts)
        join_protocol(DTensor, _dtensor_torch_function, Tensor, none_made=True)
        out = as_subclass(data, DTensor) if type(data) is not DTensor else data
        out._mesh = mesh
        out._placements = tuple(placements)
        return out

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """The DTensor whose local piece on this rank is ``local_tensor`` (differentiable:
        gradients flow back to ``local_tensor``).  With ``run_check``, replicated data is
        broadcast from the first rank of each mesh dimension, as torch checks it."""
        if device_mesh is None:
            raise ValueError("DTensor.from_local: ptcore needs an explicit device_mesh (it keeps "
                             "no current-mesh context)")
        if not isinstance(local_tensor, Tensor):
            raise TypeError(f"DTensor.from_local: local_tensor must be a Tensor, got "
                            f"{type(local_tensor).__name__}")
        placements = _normalize_placements(device_mesh, placements, "DTensor.from_local")
        _check_whole(device_mesh, placements, local_tensor.dim(), "DTensor.from_local")
        if shape is not None and tuple(shape) != tuple(local_tensor.shape):
            raise ValueError(f"DTensor.from_local: shape {tuple(shape)} differs from the local "
                             f"tensor's {tuple(local_tensor.shape)}, which is the whole tensor "
                             "under these placements")
        if run_check:
            _broadcast_over_mesh(local_tensor, device_mesh)
        return DTensor._wrap(local_tensor, device_mesh, placements)

    @property
    def device_mesh(self):
        """The :class:`DeviceMesh` this tensor lies on."""
        return self._mesh

    @property
    def placements(self):
        """How the tensor lies on each mesh dimension (a tuple of placements)."""
        return self._placements

    def to_local(self, *, grad_placements=None):
        """This rank's piece as a plain tensor (differentiable)."""
        with DisableTorchFunctionSubclass():
            return as_subclass(self, Tensor)

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor as a plain tensor (differentiable)."""
        return self.to_local()

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        """The same tensor under other placements on ``device_mesh`` (default: its own)."""
        mesh = self._mesh if device_mesh is None else device_mesh
        if mesh != self._mesh:
            raise NotImplementedError("DTensor.redistribute: moving to another mesh is not "
                                      "implemented in ptcore")
        placements = _normalize_placements(mesh, placements, "DTensor.redistribute")
        _check_whole(mesh, placements, self.dim(), "DTensor.redistribute")
        data = self.to_local()
        if forward_dtype is not None:
            data = data.to(forward_dtype)
        return DTensor._wrap(data, mesh, placements)

    def __repr__(self, *, tensor_contents=None):
        return (f"DTensor(local_tensor={self.to_local()!r}, device_mesh={self._mesh!r}, "
                f"placements={self._placements!r})")

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("pickling a DTensor is not implemented in ptcore; pickle "
                                  "dtensor.full_tensor() instead")


def _dtensor_torch_function(cls, func, types, args=(), kwargs=None):
    """DTensor's ``__torch_function__`` (given to the class by :meth:`DTensor._wrap`): the op
    runs on the data; tensors it returns are DTensors on the arguments' mesh."""
    kwargs = kwargs or {}
    first = None
    for leaf in _pytree.tree_leaves((args, kwargs)):
        if isinstance(leaf, DTensor) and leaf._mesh is not None:
            if first is None:
                first = leaf
            elif leaf._mesh != first._mesh:
                raise RuntimeError(f"{getattr(func, '__name__', func)}: DTensor arguments "
                                   f"on different meshes: {first._mesh} and {leaf._mesh}")
    with DisableTorchFunctionSubclass():
        out = func(*args, **kwargs)
    if first is None:
        return out
    argument_ids = {id(a) for a in _pytree.tree_leaves((args, kwargs))}

    def wrap(r):
        if not isinstance(r, Tensor) or id(r) in argument_ids:
            return r
        if r.shape == first.shape:
            return DTensor._wrap(r, first._mesh, first._placements)
        return DTensor._wrap(r, first._mesh, [Replicate()] * first._mesh.ndim)
    return _pytree.tree_map(wrap, out)


def _broadcast_over_mesh(tensor, mesh, group_src=0):
    """Broadcast ``tensor`` (in place) along every mesh dimension of size > 1 from the rank at
    coordinate ``group_src`` of that dimension."""
    coordinate = mesh.get_coordinate()
    for mesh_dim in range(mesh.ndim):
        if mesh.size(mesh_dim) == 1:
            continue
        index = tuple(group_src if d == mesh_dim else c for d, c in enumerate(coordinate))
        src = int(np.asarray(mesh._mesh)[index])
        with DisableTorchFunctionSubclass():
            broadcast(tensor.detach(), src=src, group=mesh.get_group(mesh_dim))


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Place ``tensor`` on ``device_mesh`` with ``placements`` (default: replicated).

    Along each mesh dimension, the data of the rank at coordinate ``src_data_rank`` is sent to
    the others (``None``: every rank keeps its own).  The result is a leaf that requires grad when ``tensor`` does.
    """
    if device_mesh is None:
        raise ValueError("distribute_tensor: ptcore needs an explicit device_mesh")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"distribute_tensor: expected a Tensor, got {type(tensor).__name__}")
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != device_mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh {tensor.device_mesh} "
                             f"to a different device mesh {device_mesh}.")
        if tensor.placements != tuple(placements or [Replicate()] * device_mesh.ndim):
            raise ValueError(f"Cannot distribute a DTensor with placements {tensor.placements} "
                             f"to a different placements {tuple(placements)}. do you want to "
                             "call `redistribute` instead?")
        return tensor
    placements = _normalize_placements(device_mesh, placements, "distribute_tensor")
    _check_whole(device_mesh, placements, tensor.dim(), "distribute_tensor")
    data = tensor.detach()
    if src_data_rank is not None and device_mesh.size() > 1:
        data = data.clone()
        _broadcast_over_mesh(data, device_mesh, int(src_data_rank))
    out = DTensor._wrap(data, device_mesh, placements)
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out

