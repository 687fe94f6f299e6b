"""``GradBucket`` (``torch.distributed.GradBucket``): what a DDP communication hook
receives, one flat buffer of gradients of several parameters."""

__all__ = ["GradBucket"]


class GradBucket:
    """A bucket of gradients for ``DistributedDataParallel.register_comm_hook``:
    ``buffer()`` is the flat tensor the hook reduces, ``gradients()`` its views per
    parameter, ``parameters()`` the parameters, ``index()`` its position (the last
    bucket is reduced last, ``is_last()``)."""

    def __init__(self, index, buffer, parameters, gradients, is_last):
        self._index = index
        self._buffer = buffer
        self._parameters = list(parameters)
        self._gradients = list(gradients)
        self._is_last = bool(is_last)

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._is_last

    def set_buffer(self, buffer):
        """Make ``buffer`` the bucket's tensor (a compressed copy, say); DDP takes the
        hook's result, whatever tensor it is, as the reduced bucket."""
        self._buffer = buffer

    def __repr__(self):
        return (f"GradBucket(index={self._index}, numel={self._buffer.numel()}, "
                f"parameters={len(self._parameters)})")
