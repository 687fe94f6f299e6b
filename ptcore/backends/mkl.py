"""``ptcore.backends.mkl``: ptcore's kernels do not use Intel MKL."""

__all__ = ["is_available", "verbose", "VERBOSE_OFF", "VERBOSE_ON"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    """False: ptcore is not built with MKL."""
    return False


class verbose:
    """Context manager for MKL's verbose mode (a no-op in ptcore)."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
