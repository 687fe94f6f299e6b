"""``DistributedDataParallel``: importable here; its implementation belongs to
``ptcore.distributed``.  Until then, constructing one checks, as PyTorch
does first, that a default process group has been initialised."""
from ptcore.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]


def _process_group_initialized():
    import importlib
    try:
        dist = importlib.import_module("ptcore.distributed")
    except ImportError:
        return False
    is_init = getattr(dist, "is_initialized", None)
    return bool(is_init()) if is_init is not None else False


class DistributedDataParallel(Module):
    """Data parallelism across processes (``torch.nn.parallel.DistributedDataParallel``)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        if process_group is None and not _process_group_initialized():
            raise ValueError("Default process group has not been initialized, please make sure "
                             "to call init_process_group.")
        raise NotImplementedError("DistributedDataParallel is provided by ptcore.distributed")
