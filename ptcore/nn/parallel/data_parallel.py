"""``DataParallel`` and ``data_parallel`` (``torch.nn.parallel``).

Without an accelerator (CPU) ``DataParallel`` wraps the module as PyTorch's
does -- ``.module`` is the wrapped module, ``device_ids`` is empty, forward
calls the module, the state dict's keys gain the prefix ``module.`` -- and
``data_parallel`` raises PyTorch's "device type could not be determined".
With CUDA devices the module lives on ``device_ids[0]``; forward scatters
the inputs along ``dim`` (:mod:`.scatter_gather`), calls the module directly
with one device, else calls a replica per device (:mod:`.replicate`,
:mod:`.parallel_apply`) and gathers the outputs on ``output_device``; the
gradients of every replica add up in the module's own parameters.
"""
import builtins
from itertools import chain

import ptcore

from ptcore.nn.modules.module import Module
from ptcore.nn.parallel.parallel_apply import parallel_apply as _parallel_apply
from ptcore.nn.parallel.replicate import replicate as _replicate
from ptcore.nn.parallel.scatter_gather import gather as _gather, scatter_kwargs as _scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]

def _device_type():
    """'cuda' when a CUDA device is usable, else None (torch's _get_available_device_type)."""
    import ptcore
    return "cuda" if ptcore.cuda.is_available() else None


def _index(d):
    import ptcore
    if isinstance(d, builtins.int) and not isinstance(d, builtins.bool):
        return d
    dev = ptcore.device(d)
    if dev.index is None:
        return ptcore.cuda.current_device()
    return dev.index


def _resolve(device_ids, output_device):
    import ptcore
    if device_ids is None:
        device_ids = list(range(ptcore.cuda.device_count()))
    if not device_ids:
        raise RuntimeError("no available devices were found")
    ids = [_index(d) for d in device_ids]
    out = ids[0] if output_device is None else _index(output_device)
    return ids, out


def _check_on(module, src):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{src} (device_ids[0]) but found one of them on device: "
                               f"{t.device}")


class DataParallel(Module):
    """Run ``module`` on the batch split across CUDA devices (``torch.nn.DataParallel``).

    Parameters
    ----------
    module : Module
        The module to run.
    device_ids : list of int or devices, optional
        CUDA devices to use (all, by default).
    output_device : int or device, optional
        Where the output is gathered (``device_ids[0]`` by default).
    dim : int, optional
        The batch dimension to scatter along.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        device_type = _device_type()
        if device_type is None:          # as torch without an accelerator
            self.module = module
            self.device_ids = []
            return
        import ptcore
        ids, out = _resolve(device_ids, output_device)
        self.dim = dim
        self.module = module
        self.device_ids = ids
        self.output_device = out
        self.src_device_obj = ptcore.device(device_type, ids[0])
        if len(ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        # a forward without inputs runs on device_ids[0]
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return _replicate(module, device_ids, not ptcore.is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return _scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return _parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return _gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Functional :class:`DataParallel`: ``module(*inputs, **module_kwargs)``
    over the given CUDA devices; like torch, it needs an accelerator."""
    import ptcore
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    device_type = _device_type()
    if device_type is None:
        raise RuntimeError("device type could not be determined")
    ids, out = _resolve(device_ids, output_device)
    _check_on(module, ptcore.device(device_type, ids[0]))
    inputs, module_kwargs = _scatter_kwargs(inputs, module_kwargs or {}, ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = ids[:len(inputs)]
    replicas = _replicate(module, used)
    return _gather(_parallel_apply(replicas, inputs, module_kwargs, used), out, dim)
