"""Shapes and offsets of a DTensor's local pieces (``torch.distributed.tensor._utils``)."""
from ptcore.distributed.tensor.placement_types import Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """The shape of this rank's local piece of a tensor of ``global_shape`` placed on ``mesh``
    with ``placements``, and where that piece starts in the global tensor.

    Shards apply left to right over the mesh dimensions, each one cutting what the earlier ones
    left in ``torch.chunk``'s pieces.  A rank outside the mesh gets ``((0,), ())``; with
    ``skip_offset`` the offset is ``()``.

    Raises
    ------
    NotImplementedError
        For a ``_StridedShard`` placement (its interleaved layout is not implemented).
    """
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,), ()
    return _compute_local_shape_and_global_offset(global_shape, mesh.shape, coordinate,
                                                  placements, skip_offset)


def _compute_local_shape_and_global_offset(global_shape, mesh_shape, coordinate, placements,
                                           skip_offset=False):
    """:func:`compute_local_shape_and_global_offset` for the rank at ``coordinate`` of a mesh
    of ``mesh_shape``."""
    if len(placements) != len(mesh_shape):
        raise ValueError(f"compute_local_shape_and_global_offset: {len(placements)} placements "
                         f"for a mesh of {len(mesh_shape)} dimensions")
    local_shape = [int(s) for s in global_shape]
    offset = [0] * len(local_shape)
    for mesh_dim, placement in enumerate(placements):
        if isinstance(placement, _StridedShard):
            raise NotImplementedError(
                "compute_local_shape_and_global_offset: _StridedShard placements are not "
                "implemented in ptcore")
        if not isinstance(placement, Shard):
            continue
        dim = placement.dim
        if not -len(local_shape) <= dim < len(local_shape):
            raise ValueError(f"Sharding dim {dim} greater than tensor ndim {len(local_shape)}")
        dim %= len(local_shape)
        size, start = Shard.local_shard_size_and_offset(
            local_shape[dim], mesh_shape[mesh_dim], coordinate[mesh_dim])
        local_shape[dim] = size
        # an empty piece starts at the end of the dimension, as torch reports it
        offset[dim] = int(global_shape[dim]) if size == 0 else offset[dim] + start
    if skip_offset:
        return tuple(local_shape), ()
    return tuple(local_shape), tuple(offset)
