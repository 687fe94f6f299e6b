"""``replicate`` (``torch.nn.parallel.replicate``): copies of a module on
several CUDA devices for ``DataParallel``.

As torch's, each replica is a shallow copy of every submodule whose
parameters are differentiable copies of the originals on its device (not
leaves: gradients flow back into the original parameters and add up there)
and whose buffers are copies; the replica on the module's own device shares
the original buffers, so running statistics updated there persist.
"""
from ptcore.nn.modules.module import Module
from ptcore.nn.parallel.scatter_gather import _device

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """``len(devices)`` replicas of ``network``, the ``j``-th on ``devices[j]``
    (``devices[0]``: the network's own device)."""
    import ptcore
    if not isinstance(network, Module):
        raise TypeError(f"replicate expects an nn.Module, got {type(network).__name__}")
    devices = [_device(d) for d in devices]
    modules = list(network.modules())
    copies = [[m._replicate_for_data_parallel() for m in modules] for _ in devices]
    index = {id(m): i for i, m in enumerate(modules)}
    for i, m in enumerate(modules):
        for j, dev in enumerate(devices):
            r = copies[j][i]
            r.__dict__["_former_parameters"] = {}
            for key, child in m._modules.items():
                r._modules[key] = None if child is None else copies[j][index[id(child)]]
            for key, p in m._parameters.items():
                if p is None:
                    r._parameters[key] = None
                    continue
                if detach or not ptcore.is_grad_enabled():
                    c = p.detach().to(dev)
                else:
                    c = p.view_as(p) if p.device == dev else p.to(dev)
                # not leaves in a replica: plain attributes (torch's replicate)
                object.__setattr__(r, key, c)
                r._former_parameters[key] = c
            for key, b in m._buffers.items():
                if b is None:
                    r._buffers[key] = None
                elif b.device == dev:
                    r._buffers[key] = b         # the source device's replica shares them
                else:
                    c = b.detach().to(dev)
                    r._buffers[key] = c.requires_grad_(b.requires_grad) if b.requires_grad else c
    return [c[0] for c in copies]
