"""``ptcore.backends.mps``: Apple's Metal backend, which ptcore does not have."""


def is_available():
    """False: ptcore has no MPS backend."""
    return False


def is_built():
    """False: ptcore is not built with MPS."""
    return False


def is_macos_or_newer(major, minor):
    return False
