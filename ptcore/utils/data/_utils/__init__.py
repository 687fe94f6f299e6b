"""DataLoader internals (``torch.utils.data._utils``)."""
try:
    import numpy  # noqa: F401
    HAS_NUMPY = True
except ImportError:
    HAS_NUMPY = False

# Seconds between checks of worker/main-process liveness while waiting.
MP_STATUS_CHECK_INTERVAL = 1.0

from ptcore.utils.data._utils import collate, fetch, worker, pin_memory  # noqa: E402,F401
