"""The names of the kernels a call launches on the emulated device (test helper)."""
import ptcore
from ptcore.cuda.runtime import state as _runtime


def launched(fn):
    """``(fn(), [kernel name of each launch, in order])``, the device synchronized."""
    drv = _runtime.lazy_init("test")
    names, orig = [], drv.launch

    def launch(f, *a, **k):
        names.append(drv.kernel_name(f))
        return orig(f, *a, **k)
    drv.launch = launch
    try:
        out = fn()
        ptcore.cuda.synchronize()
    finally:
        drv.launch = orig
    return out, names
