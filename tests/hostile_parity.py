"""Helpers of the hardening tests (test_hardening_fuzz_round*.py): run one expression with
``m`` bound to torch and to ptcore and compare the exception type or the value; run code
in a fresh interpreter (a crash fails the test, not pytest)."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np


def outcome(code, lib):
    """``(exception type, None)`` when ``code`` raises with ``m`` bound to ``lib`` (``F`` to
    its nn.functional, ``np`` to NumPy), else ``(None, value)``."""
    g = {"m": lib, "F": lib.nn.functional, "np": np}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return None, eval(code, g)
    except Exception as e:      # the type is what is compared
        return type(e), None


def same_error(code, torch, ptcore):
    """torch raises for ``code`` and ptcore raises the same type (or a subclass)."""
    expected, _ = outcome(code, torch)
    assert expected is not None, f"torch accepts {code}"
    got, val = outcome(code, ptcore)
    assert got is not None, f"ptcore returned {val!r} for {code}; torch raised {expected.__name__}"
    assert issubclass(got, expected), (code, got, expected)


def same_value(code, torch, ptcore):
    """Both return for ``code``, values of the same repr (NaN equals NaN; a Size or a
    tensor must be turned into a tuple or a list first)."""
    _, want = outcome(code, torch)
    got_exc, got = outcome(code, ptcore)
    assert got_exc is None, (code, got_exc)
    assert repr(got) == repr(want), (code, got, want)


def child_prints(code, expected, package_parent):
    """Run ``code`` in a fresh interpreter with ``package_parent`` (the folder holding the
    ptcore package) on its path (a crash or a hang fails the test, not pytest); it must
    exit cleanly having printed ``expected``."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=package_parent + os.pathsep
                                + os.environ.get("PYTHONPATH", "")))
    assert r.returncode == 0 and r.stdout.strip() == expected, \
        (r.returncode, r.stdout, r.stderr[-2000:])
