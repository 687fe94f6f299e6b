"""``parallel_apply`` (``torch.nn.parallel.parallel_apply``): call each
replica on its own inputs, each under its device.

torch runs one host thread per device; ptcore issues the calls in turn from
the calling thread (grad mode and autocast state are the caller's), which
keeps every device busy as well: kernels are queued on each device's
stream without waiting, so the devices compute concurrently.  An exception
of one replica is raised with the device named, as torch's ExceptionWrapper
does.
"""
from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import is_accelerator as _is_accelerator
from ptcore.nn.parallel.scatter_gather import _device

__all__ = ["parallel_apply"]


def _first_device(obj):
    if isinstance(obj, _TensorBase):
        return obj.device
    if isinstance(obj, (list, tuple)):
        for o in obj:
            d = _first_device(o)
            if d is not None:
                return d
    if isinstance(obj, dict):
        return _first_device(list(obj.values()))
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """``[modules[i](*inputs[i], **kwargs_tup[i])]``, each call under the
    CUDA device ``devices[i]`` (by default: that of the first tensor in its
    inputs)."""
    import ptcore
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    elif len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of kwargs {len(kwargs_tup)}")
    if devices is None:
        devices = [_first_device(i) for i in inputs]
    elif len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of devices {len(devices)}")
    outputs = []
    for i, (module, inp, kw, dev) in enumerate(zip(modules, inputs, kwargs_tup, devices)):
        if not isinstance(inp, (list, tuple)):
            inp = (inp,)
        dev = None if dev is None else _device(dev)
        try:
            if dev is not None and _is_accelerator(dev):
                with ptcore.cuda.device(dev.index):
                    outputs.append(module(*inp, **kw))
            else:
                outputs.append(module(*inp, **kw))
        except Exception as e:
            msg = (f"Caught {type(e).__name__} in replica {i} on device "
                   f"{dev.index if dev is not None else -1}.\n{e}")
            try:
                wrapped = type(e)(msg)
            except Exception:       # (an exception type whose constructor takes more)
                raise e
            raise wrapped from e
    return outputs
