"""Signal processing (``torch.signal``): the window functions of :mod:`ptcore.signal.windows`."""
from ptcore.signal import windows

__all__ = ["windows"]
