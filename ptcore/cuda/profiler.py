"""``ptcore.cuda.profiler`` (``torch.cuda.profiler``): mark the region an
external CUDA profiler (Nsight Systems with ``--capture-range=cudaProfilerApi``,
Nsight Compute, nvprof) records, through the driver's ``cuProfilerStart`` /
``cuProfilerStop``.  On the emulated device they only record the state."""
import contextlib

from ptcore.cuda.runtime import state as _runtime

__all__ = ["start", "stop", "profile"]


def start():
    """Start the external profiler's capture (``cuProfilerStart``)."""
    drv = _runtime.lazy_init("ptcore.cuda.profiler.start")
    drv.set_current(_runtime.current_device())
    drv.profiler_start()


def stop():
    """Stop the external profiler's capture (``cuProfilerStop``)."""
    drv = _runtime.lazy_init("ptcore.cuda.profiler.stop")
    drv.set_current(_runtime.current_device())
    drv.profiler_stop()


@contextlib.contextmanager
def profile():
    """``with ptcore.cuda.profiler.profile():`` captures the block."""
    try:
        start()
        yield
    finally:
        stop()
