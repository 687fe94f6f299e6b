"""Constants shared by the DataLoader internals."""
try:
    import numpy  # noqa: F401
    HAS_NUMPY = True
except ImportError:
    HAS_NUMPY = False

# Seconds between checks of worker/main-process liveness while waiting.
MP_STATUS_CHECK_INTERVAL = 1.0
