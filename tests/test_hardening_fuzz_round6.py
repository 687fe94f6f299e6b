"""Sixth hardening round: hostile and odd input found by running cases in torch and in
ptcore side by side (tools/hostile_probe.py, cases in tools/hostile_cases_round6.py)."""
import os
import subprocess
import sys
import textwrap

import ptcore

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


def _child_prints(code, expected):
    """Run ``code`` in a fresh interpreter (a crash or a hang fails the test, not pytest);
    it must exit cleanly having printed ``expected``."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep
                                + os.environ.get("PYTHONPATH", "")))
    assert r.returncode == 0 and r.stdout.strip() == expected, \
        (r.returncode, r.stdout, r.stderr[-2000:])


def test_copies_of_a_huge_expanded_view_raise():
    # ones(1).expand(2**62) holds 2**62 elements in 4 bytes; a dense copy of it needs
    # 2**64 bytes, which wrapped to 0 in the allocation of clone()/to() (then a copy of
    # 2**62 elements: SIGSEGV); it must raise RuntimeError as every other allocation does
    _child_prints("""
        import ptcore
        x = ptcore.ones(1).expand(2**62)
        for f in (lambda: x.clone(), lambda: x.to(ptcore.float64), lambda: x.contiguous(),
                  lambda: ptcore.empty_like(x), lambda: ptcore.zeros_like(x),
                  lambda: x.clone(memory_format=ptcore.contiguous_format)):
            try:
                f()
                print("no error")
            except RuntimeError:
                pass
        print("ok")
    """, "ok")
