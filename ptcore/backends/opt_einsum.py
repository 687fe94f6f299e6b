"""``ptcore.backends.opt_einsum``: contraction-order optimisation for
``einsum`` through the ``opt_einsum`` package.  ptcore's einsum does not use
it; ``enabled`` and ``strategy`` are kept as set (False and None unless
the package is installed, as in PyTorch)."""
import importlib.util


def is_available():
    """True when the ``opt_einsum`` package is installed."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum():
    """The ``opt_einsum`` module, or None."""
    if not is_available():
        return None
    import opt_einsum
    return opt_einsum


enabled = is_available()
strategy = "auto" if is_available() else None
