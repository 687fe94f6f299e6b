"""``ptcore.distributed``: process groups, collectives and point-to-point messages
(``torch.distributed``'s API), on MPI or over TCP sockets.

Start the processes with an MPI launcher (``mpirun -n N python train.py``, ``srun``) or with
``python -m ptcore.distributed.run --nproc-per-node N train.py``, then call
``init_process_group()``; or start them any other way (``ptcore.multiprocessing.spawn``,
torchrun-style ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``) and they meet through
a store and connect over TCP ("gloo").  mpi4py is imported by ``init_process_group`` when
MPI serves the group, never by importing this package.
"""
from ptcore.distributed.reduce_op import ReduceOp
from ptcore.distributed.store import (
    DistError, DistNetworkError, DistStoreError, FileStore, HashStore, PrefixStore,
    QueueEmptyError, Store, TCPStore,
)
from ptcore.distributed.work import DistBackendError, Work
from ptcore.distributed.grad_bucket import GradBucket
from ptcore.distributed.process_group import (
    Backend, DebugLevel, GroupMember, ProcessGroup, barrier, default_pg_timeout,
    destroy_process_group, get_backend, get_backend_config, get_debug_level, get_global_rank,
    get_group_rank, get_pg_count, get_process_group_ranks, get_rank, get_world_size, group,
    init_process_group, is_available, is_gloo_available, is_initialized, is_mpi_available,
    is_nccl_available, is_torchelastic_launched, is_ucc_available, is_xccl_available,
    monitored_barrier, new_group, set_debug_level, set_debug_level_from_env, supports_complex,
)
from ptcore.distributed.collectives import (
    P2POp, all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single,
    batch_isend_irecv, broadcast, gather, irecv, isend, recv, reduce, reduce_scatter,
    reduce_scatter_tensor, scatter, send,
)
from ptcore.distributed.object_collectives import (
    all_gather_object, broadcast_object_list, gather_object, scatter_object_list,
)
from ptcore.distributed.extras import (
    all_gather_coalesced, all_reduce_coalesced, breakpoint,
    all_gather_single, get_default_backend_for_device, get_node_local_rank, is_backend_available,
    new_subgroups, new_subgroups_by_enumeration, recv_object_list, send_object_list,
)
from ptcore.distributed import device_mesh  # noqa: E402
from ptcore.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: E402

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "FileStore", "HashStore", "PrefixStore", "Store", "TCPStore", "GradBucket", "GroupMember", "P2POp", "ProcessGroup",
    "ReduceOp", "Work",
    "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "irecv", "is_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
    "all_gather_single", "get_default_backend_for_device", "get_node_local_rank",
    "is_backend_available", "new_subgroups", "new_subgroups_by_enumeration", "recv_object_list",
    "send_object_list", "DeviceMesh", "init_device_mesh",
    "DebugLevel", "QueueEmptyError", "all_gather_coalesced", "all_reduce_coalesced",
    "breakpoint", "get_backend_config", "get_debug_level", "get_pg_count", "is_ucc_available",
    "is_xccl_available", "set_debug_level", "set_debug_level_from_env", "supports_complex",
]

# torch.distributed's submodules, imported on first use (``ptcore.distributed.algorithms``,
# ``.elastic``, ``.distributed_c10d``...) as torch's are reachable after ``import torch``
_SUBMODULES = ("algorithms", "checkpoint", "constants", "distributed_c10d", "elastic", "fsdp",
               "optim", "run")


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
