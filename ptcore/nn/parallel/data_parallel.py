"""``DataParallel``: on a machine with at most one CUDA device (and on CPU)
it wraps the module as PyTorch's does -- ``.module`` is the wrapped module,
``forward`` calls it, the state dict's keys gain the prefix ``module.`` --
without replicating it."""
from ptcore.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _device_ids(device_ids):
    import ptcore
    if not ptcore.cuda.is_available():
        return []
    if device_ids is None:
        return list(range(ptcore.cuda.device_count()))
    return [d if isinstance(d, int) else ptcore.device(d).index for d in device_ids]


class DataParallel(Module):
    """Run ``module`` on the batch split across CUDA devices (torch.nn.DataParallel).

    Parameters
    ----------
    module : Module
    device_ids : list of int or devices, optional
    output_device : int or device, optional
    dim : int, optional
        The batch dimension to scatter along.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = _device_ids(device_ids)
        if not self.device_ids:     # as torch on CPU: only .module and .device_ids
            return
        self.dim = dim
        if len(self.device_ids) > 1:
            raise NotImplementedError("DataParallel over several CUDA devices needs ptcore's CUDA "
                                      "backend (replicate / scatter / gather)")
        self.output_device = self.device_ids[0] if output_device is None else output_device
        import ptcore
        self.src_device_obj = ptcore.device("cuda", self.device_ids[0])

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Functional :class:`DataParallel`: ``module(*inputs, **module_kwargs)``
    over the given devices (directly, with at most one device)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    ids = _device_ids(device_ids)
    if len(ids) > 1:
        raise NotImplementedError("data_parallel over several CUDA devices needs ptcore's CUDA "
                                  "backend")
    return module(*inputs, **(module_kwargs or {}))
