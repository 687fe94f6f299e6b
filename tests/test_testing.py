"""``ptcore.testing.assert_close`` against ``torch.testing.assert_close``:
the same default tolerances per dtype (pass/fail agree), including the
dtypes NumPy has no type for."""
import warnings

import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64", "complex32",
                                "complex64", "complex128"])
@pytest.mark.parametrize("rel", [0.0, 2e-7, 5e-6, 5e-4, 5e-3, 5e-2])
def test_default_tolerances_agree_with_torch(dt, rel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # complex32 is experimental
        base = [1.0, -2.5, 3.25]
        if dt.startswith("complex"):
            base = [complex(v, -v / 2) for v in base]
        moved = [v * (1 + rel) for v in base]
        results = []
        for lib, check in ((ptcore, ptcore.testing.assert_close), (torch, torch.testing.assert_close)):
            a = lib.tensor(base, dtype=getattr(lib, dt))
            b = lib.tensor(moved, dtype=getattr(lib, dt))
            try:
                check(a, b)
                results.append(True)
            except AssertionError:
                results.append(False)
    assert results[0] == results[1], f"ptcore {'passes' if results[0] else 'fails'}, torch the opposite"
