"""arange of floating dtypes by ptc_arange.h (torch's chunked vector/scalar
rule in C) and long int64 ranges by the fill kernel: torch's bits at 1 and 2
threads, values against NumPy, sizes and edge cases."""
import numpy as np
import pytest

import ptcore

CASES = [(0, 1, 1e-6), (-1, 1, 0.2), (0, 10, 0.1), (3.3, -7.1, -0.37), (0, 100000, 0.7),
         (1e5, 1e5 + 3, 1e-3), (0.5, 70000.5, 1.0), (0, 1, 1 / 3), (0, 300000, 1.0), (0, 5, 1),
         (-70000, 70000, 3), (2.0, 2.5, 1.0), (0, 65, 0.5)]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _np(t):
    return t.float().numpy() if t.dtype in (ptcore.float16, ptcore.bfloat16) else t.numpy()


@pytest.mark.parametrize("dtype", FLOATS)
def test_values_against_numpy(dtype):
    for a, b, s in CASES:
        try:
            got = ptcore.arange(a, b, s, dtype=getattr(ptcore, dtype))
        except RuntimeError:
            continue                   # (float16 past its range: torch's error too)
        n = int(np.ceil((b - a) / s))
        assert got.shape == (n,) and got.dtype == getattr(ptcore, dtype)
        ref = a + np.arange(n) * s
        if np.abs(ref).max() > float(ptcore.finfo(getattr(ptcore, dtype)).max):
            assert np.isinf(_np(got)).any()        # (past float16's range: inf, as torch)
            continue
        tol = {"float64": 1e-12, "float32": 1e-6, "float16": 2e-3, "bfloat16": 1e-2}[dtype]
        np.testing.assert_allclose(_np(got), ref, rtol=tol, atol=tol * max(1, abs(s)))
    assert ptcore.arange(0.0, 0.0, 0.1).shape == (0,)
    with pytest.raises(RuntimeError):
        ptcore.arange(0, 1, 0.0)


def test_torch_bits_at_one_and_two_threads():
    torch = pytest.importorskip("torch")
    old, told = ptcore.get_num_threads(), torch.get_num_threads()
    try:
        for nt in (1, 2):
            ptcore.set_num_threads(nt)
            torch.set_num_threads(nt)
            for dtype in FLOATS:
                for a, b, s in CASES:
                    try:
                        t = torch.arange(a, b, s, dtype=getattr(torch, dtype))
                    except RuntimeError:
                        continue
                    p = ptcore.arange(a, b, s, dtype=getattr(ptcore, dtype))
                    tv = t.float().numpy() if dtype in ("float16", "bfloat16") else t.numpy()
                    np.testing.assert_array_equal(_np(p), tv, err_msg=f"{nt} {dtype} {a} {b} {s}")
    finally:
        ptcore.set_num_threads(old)
        torch.set_num_threads(told)


def test_long_int64_ranges():
    for n in (65537, 300001, 1 << 20):
        np.testing.assert_array_equal(ptcore.arange(n).numpy(), np.arange(n))
        np.testing.assert_array_equal(ptcore.arange(-5, 7 * n, 7).numpy(), np.arange(-5, 7 * n, 7))
        np.testing.assert_array_equal(ptcore.arange(n, 0, -3).numpy(), np.arange(n, 0, -3))
    big = 2 ** 62 - 10
    assert ptcore.arange(big, big + 5).tolist() == list(range(big, big + 5))
