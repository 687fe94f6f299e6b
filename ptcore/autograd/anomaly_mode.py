"""``detect_anomaly``: record the forward stack of every node and check
each backward result for NaN."""
import warnings

from ptcore import _settings
from ptcore._settings import _anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


def is_anomaly_enabled():
    return _anomaly[0]


class detect_anomaly:
    """Context manager / decorator: backward errors and NaN gradients name
    the forward operation (with its stack) that created the failing node."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = False
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                      "should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = _flags()
        _set_flags(True, self.check_nan)

    def __exit__(self, *exc):
        _set_flags(*self.prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(self.check_nan):
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self.prev = _flags()
        _set_flags(bool(mode), bool(check_nan))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_flags(*self.prev)
        return False


def _flags():
    return _anomaly[0], _settings._state["anomaly_check_nan"]


def _set_flags(enabled, check_nan):
    # check_nan=False: nodes still record their forward stack, but backward
    # results are not checked for NaN (torch.is_anomaly_check_nan_enabled)
    _anomaly[0] = enabled
    _settings._state["anomaly_check_nan"] = check_nan
