"""``ptcore.distributed.device_mesh``: the ranks of the world arranged as an n-dimensional
mesh, with one process group per mesh dimension (``torch.distributed.device_mesh``):
:func:`init_device_mesh` and :class:`DeviceMesh`.

Every rank must build a mesh (the groups of every dimension are created collectively, in
the same order on all ranks).  ``mesh["dp"]`` is this rank's one-dimensional sub-mesh along
the named dimension, sharing that dimension's group.
"""
import numpy as np

from ptcore.distributed.process_group import _world, get_rank, get_world_size, new_group

__all__ = ["DeviceMesh", "init_device_mesh"]


def _dim_groups(mesh, dim):
    """Collectively create the groups along ``dim``; the one holding this rank."""
    me, mine = get_rank(), None
    moved = np.moveaxis(mesh, dim, -1).reshape(-1, mesh.shape[dim])
    for ranks in moved.tolist():
        g = new_group(ranks)
        if me in ranks:
            mine = g
    return mine


class DeviceMesh:
    """A mesh of global ranks (``mesh``: an int array or tensor of shape ``mesh_shape``)
    on ``device_type`` devices, with a process group per dimension.

    Parameters
    ----------
    device_type : str
        ``"cpu"`` or ``"cuda"``.
    mesh : array_like of int
        The global ranks, laid out in the mesh's shape (each rank once).
    mesh_dim_names : tuple of str, optional
    """

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, backend_override=None,
                 _groups=None):
        from ptcore import Tensor
        arr = mesh.numpy() if isinstance(mesh, Tensor) else np.asarray(mesh)
        arr = arr.astype(np.int64)
        if arr.ndim == 0:
            raise ValueError("DeviceMesh: mesh must have at least one dimension")
        if len(np.unique(arr)) != arr.size:
            raise RuntimeError(f"DeviceMesh cannot have duplicate values, but found "
                               f"{arr.tolist()}")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != arr.ndim:
                raise RuntimeError(f"mesh_dim_names should have same length as mesh dimensions:"
                                   f" expected {arr.ndim} but got {len(mesh_dim_names)}.")
            if len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError(f"Each mesh_dim_name must be unique, got {mesh_dim_names}")
        self.device_type = device_type
        self._mesh = arr
        self.mesh_dim_names = mesh_dim_names
        if _groups is None:
            _world("DeviceMesh")
            _groups = [_dim_groups(arr, d) for d in range(arr.ndim)]
        self._groups = list(_groups)

    @property
    def mesh(self):
        import ptcore
        return ptcore.tensor(self._mesh)

    @property
    def ndim(self):
        return self._mesh.ndim

    @property
    def shape(self):
        return tuple(self._mesh.shape)

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return self._mesh.size if mesh_dim is None else self._mesh.shape[mesh_dim]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if self.mesh_dim_names is None or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions. "
                                   f"Optional kwarg `mesh_dim` needs to be specified when "
                                   f"device_mesh.ndim > 1.")
            return 0
        return int(mesh_dim)

    def get_group(self, mesh_dim=None):
        """The process group of the ranks sharing this rank's coordinates but along
        ``mesh_dim`` (an index or a name)."""
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self):
        """The group of each dimension."""
        return list(self._groups)

    def get_rank(self):
        """This process's global rank."""
        return get_rank()

    def get_coordinate(self):
        """This rank's coordinates in the mesh (None when it is not in the mesh)."""
        where = np.argwhere(self._mesh == get_rank())
        return tuple(int(v) for v in where[0]) if len(where) else None

    def get_local_rank(self, mesh_dim=None):
        """This rank's coordinate along ``mesh_dim``."""
        coord = self.get_coordinate()
        if coord is None:
            raise RuntimeError("get_local_rank: this rank is not in the mesh")
        return coord[self._dim(mesh_dim)]

    def __getitem__(self, mesh_dim_names):
        """This rank's sub-mesh along the named dimension(s) (one name, or a tuple of names
        of one dimension)."""
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if len(names) != 1:
            raise NotImplementedError("DeviceMesh: slicing several dimensions at once is not "
                                      "supported yet")
        d = self._dim(names[0])
        coord = self.get_coordinate()
        if coord is None:
            raise RuntimeError("DeviceMesh: this rank is not in the mesh")
        index = tuple(slice(None) if i == d else c for i, c in enumerate(coord))
        return DeviceMesh(self.device_type, self._mesh[index], mesh_dim_names=names,
                          _groups=[self._groups[d]])

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and self.device_type == other.device_type and \
            np.array_equal(self._mesh, other._mesh) and \
            self.mesh_dim_names == other.mesh_dim_names

    def __hash__(self):
        return hash((self.device_type, self._mesh.tobytes(), self._mesh.shape,
                     self.mesh_dim_names))

    def __repr__(self):
        names = "" if self.mesh_dim_names is None else f", mesh_dim_names={self.mesh_dim_names}"
        return f"DeviceMesh('{self.device_type}', {self._mesh.tolist()}{names})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A :class:`DeviceMesh` of the whole world in ``mesh_shape`` (row-major rank order);
    every rank must call it."""
    if device_type not in ("cpu", "cuda"):
        raise RuntimeError(f"init_device_mesh: device_type must be 'cpu' or 'cuda', got "
                           f"{device_type!r}")
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if mesh_dim_names is not None and len(mesh_dim_names) != len(mesh_shape):
        raise RuntimeError("mesh_shape and mesh_dim_names should have same length!")
    world = get_world_size()
    if int(np.prod(mesh_shape)) != world:
        raise RuntimeError(f"init_device_mesh: the mesh shape {mesh_shape} holds "
                           f"{int(np.prod(mesh_shape))} ranks, the world has {world}")
    return DeviceMesh(device_type, np.arange(world).reshape(mesh_shape),
                      mesh_dim_names=mesh_dim_names)
