"""float16/bfloat16 sums and means of contiguous rows with the conversions in
registers (ptc_reduce_vec.h's sum_h16/sum_bf16): the same bits as summing
the float32 values chunk by chunk the way the conversion buffer did -- each
chunk of 16384 elements (the 64 KiB buffer of float32) by float32 ``sum``,
the chunk sums added in order -- on every CPU path the machine runs, and
torch's values within rounding."""
import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

CHUNK = 65536 // 4       # _reduce.pyx's _CBUF over the float32 accumulator
SIZES = [1, 5, 8, 9, 31, 33, 64, 1000, 1023, 1024, 1025, 8191, 16383, 16384, 16385,
         40000, 100003]


def _data(n, dt, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 3 + 0.25).astype(np.float32)
    return ptcore.from_numpy(x).to(getattr(ptcore, dt))


def _chunked(xf):
    """float32 sum of the float32 row ``xf`` the buffer's way."""
    acc = np.float32(0)
    for c0 in range(0, xf.numel(), CHUNK):
        acc = np.float32(acc + np.float32(xf[c0:c0 + CHUNK].sum().item()))
    return acc


@pytest.fixture
def one_thread():
    n = ptcore.get_num_threads()
    ptcore.set_num_threads(1)
    yield
    ptcore.set_num_threads(n)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_sum_and_mean_equal_the_chunked_float32_sum(dt, one_thread):
    for i, n in enumerate(SIZES):
        x = _data(n, dt, i)
        want = _chunked(x.float())
        got = x.sum(dtype=ptcore.float32).item()
        assert np.float32(got).tobytes() == want.tobytes(), (n, got, want)
        # the 16-bit results: the float32 sum rounded once
        d = getattr(ptcore, dt)
        assert x.sum().item() == ptcore.tensor(float(want)).to(d).item(), n
        # the mean: the float32 sum over the count (in double), rounded
        mean = np.float32(np.float64(want) / n)
        assert x.mean().item() == ptcore.tensor(float(mean)).to(d).item(), n


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_rows_special_values_and_strided_rows(dt, one_thread):
    d = getattr(ptcore, dt)
    x = _data(7 * 3001, dt, 9).reshape(7, 3001)
    rows = x.sum(1, dtype=ptcore.float32)
    for r in range(7):
        assert np.float32(rows[r].item()).tobytes() == _chunked(x[r].float()).tobytes()
    # NaN and infinities propagate as in the float32 sum
    y = _data(5000, dt, 10)
    y[17] = float("nan")
    assert np.isnan(y.sum().float().item())
    z = _data(5000, dt, 11)
    z[4000] = float("inf")
    assert z.sum().float().item() == float("inf")
    z[10] = float("-inf")
    assert np.isnan(z.sum().float().item())
    # a strided row still goes through the buffer: the same values
    w = _data(20001, dt, 12)
    assert w[::2].sum(dtype=ptcore.float32).item() == \
        pytest.approx(w[::2].float().sum().item(), rel=1e-5)
    assert x.sum().dtype == d


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_matches_torch(dt):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    x = rng.standard_normal((64, 777)).astype(np.float32)
    p = ptcore.from_numpy(x).to(getattr(ptcore, dt))
    t = torch.from_numpy(x).to(getattr(torch, dt))
    for f in (lambda a: a.sum(), lambda a: a.sum(1), lambda a: a.mean(), lambda a: a.mean(1),
              lambda a: a.sum(dtype=a.new_zeros(()).float().dtype)):
        np.testing.assert_allclose(f(p).float().numpy(), f(t).float().numpy(), rtol=2e-2, atol=2e-2)


_CHILD = """
import sys, numpy as np, ptcore
ptcore.set_num_threads(1)
CHUNK = 16384
for dt in ("float16", "bfloat16"):
    for i, n in enumerate((7, 1025, 16385, 40000)):
        x = ptcore.from_numpy((np.random.default_rng(i).standard_normal(n) * 3).astype(np.float32)
                              ).to(getattr(ptcore, dt))
        xf = x.float()
        acc = np.float32(0)
        for c0 in range(0, n, CHUNK):
            acc = np.float32(acc + np.float32(xf[c0:c0 + CHUNK].sum().item()))
        got = np.float32(x.sum(dtype=ptcore.float32).item())
        assert got.tobytes() == acc.tobytes(), (dt, n, got, acc)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path(cap):
    skip_unless_runnable(cap)
    run_child(cap, _CHILD)
