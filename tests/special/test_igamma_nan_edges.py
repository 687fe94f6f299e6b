"""igamma/igammac (special.gammainc/gammaincc) with a NaN operand take torch's early
answers: calc_igamma decides x == 0, a == inf and x == inf before looking at the other
operand, so e.g. gammainc(nan, 0) is 0, not NaN."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
A = [NAN, NAN, INF, NAN, NAN, 1.0, 0.0, NAN, 2.0, INF, 0.5]
X = [0.0, INF, NAN, 1.0, -1.0, NAN, NAN, NAN, 0.0, INF, 3.0]


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_operands_as_torch(name, dtype):
    def call(L):
        f = L
        for part in name.split("."):
            f = getattr(f, part)
        dt = getattr(L, dtype)
        return f(L.tensor(A, dtype=dt), L.tensor(X, dtype=dt)).numpy()
    got, want = call(ptcore), call(torch)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    # broadcast 0-d operands too
    g = getattr(ptcore, name.split(".")[-1].replace("gammaincc", "igammac")
                .replace("gammainc", "igamma"))(ptcore.tensor(NAN), ptcore.zeros(3))
    upper = name.endswith(("igammac", "gammaincc"))
    assert g.tolist() == ([1.0] * 3 if upper else [0.0] * 3)
