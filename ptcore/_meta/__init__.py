"""The meta device: tensors with a shape, a dtype and strides but no data
(``torch.device('meta')``).

Building a model on it costs no memory (``nn.Linear(1000, 1000,
device='meta')``, ``with ptcore.device('meta'):``, ``model.to('meta')``,
then ``model.to_empty(device='cpu')``), and running ops on meta tensors
gives their results' shapes and dtypes without computing anything.

The runtime has the layers of the emulated CUDA device's: the tensor core
calls its device ops (:mod:`ptcore._meta._tensors`) for everything that
would touch a meta tensor's bytes, the dispatch point's device layer routes
every op with a meta argument to its meta kernel or to the device's
fallback (:mod:`ptcore._meta._infer`), and ``Tensor.to`` reaches its
transfers through the device layer's runtime registry.  The device layer
turns on, and the kernels are registered, when the first meta tensor is
made; CPU-only programs never pay for it.
"""
from ptcore import _tensor as _C
from ptcore._dispatch import device as _device_layer
from ptcore._meta import _tensors

__all__ = []


def _on_first_tensor():
    # the shape functions (and the nn.functional entries they cover) load with the first
    # lazy: meta tensor: programs that never make one never pay for them
    from ptcore._meta import _infer
    _infer.register()


_C._set_device_ops(_tensors.DEVICE_OPS, "meta")
_device_layer.register_runtime("meta", transfer_priority=1, to_device=_tensors.to_device)
for _name, _fn in _tensors.LOOPS.items():
    _device_layer.register_loop(_name, "meta", _fn)
_tensors._first_tensor_hooks.append(_on_first_tensor)
del _name, _fn
