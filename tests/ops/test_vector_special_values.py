"""The explicitly vectorised float32 kernels (exp, sigmoid, silu, relu;
8- and 16-lane clones chosen by CPU) against torch on special values placed
in every lane position of the vector body and in the scalar tail."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

_SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 88.7, 88.73, -103.9, -104.0, -110.0, 1e-40,
            -1e-40, 100.0, -200.0, 1.0, -1.0, 20.0]


@needs_torch
@pytest.mark.parametrize("name", ["exp", "sigmoid", "silu", "relu"])
@pytest.mark.parametrize("n", [7, 16, 37, 100])
def test_special_values_every_lane(name, n):
    rng = np.random.default_rng(0)
    base = np.asarray(_SPECIAL, dtype=np.float32)
    for shift in range(len(base)):
        a = np.resize(np.roll(base, shift), n).astype(np.float32)
        a[rng.integers(0, n, 2)] = rng.standard_normal(2).astype(np.float32)
        if name == "silu":
            got = ptcore.nn.functional.silu(ptcore.from_numpy(a)).numpy()
            want = torch.nn.functional.silu(torch.from_numpy(a)).numpy()
        else:
            got = getattr(ptcore, name)(ptcore.from_numpy(a)).numpy()
            want = getattr(torch, name)(torch.from_numpy(a)).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        if name == "sigmoid":
            # torch's 1 / (1 + exp(-x)) is 0 once exp(-x) overflows (x < -88.72);
            # ptcore's e^x / (1 + e^x) there is the float64 value (within 1 ulp,
            # subnormal for x in (-103.98, -87.3))
            ref = (1 / (1 + np.exp(-a.astype(np.float64)))).astype(np.float32)
            ok = ~np.isnan(ref)
            d = np.abs(got[ok].view(np.int32).astype(np.int64) - ref[ok].view(np.int32).astype(np.int64))
            assert d.max(initial=0) <= 1
            keep = ~(a < -88.72)
            got, want = got[keep], want[keep]
        np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)
