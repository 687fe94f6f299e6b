"""Elementwise outputs larger than the cache are written with non-temporal
stores (``ptc_stream.h``): the float32 add/sub/mul/div/maximum/minimum loops
and the one-instruction maps (neg, abs, reciprocal, square, relu) stream
from an output of ``ptc_stream_min_bytes`` (half the L3).  The tests
lower that size so that small tensors take the path, and check the bits
against NumPy for every operand form the loops have (tensor-tensor,
tensor-number, number-tensor, a broadcast row, a broadcast column), outputs
at every float offset from a cache line (the scalar head that aligns the
streaming stores), one and two threads, and the AVX2 copy in a child process.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _ewdrv

_NP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
       "maximum": np.maximum, "minimum": np.minimum}


@pytest.fixture
def streaming():
    """Every elementwise output of 4 KiB or more streams."""
    old = _ewdrv._stream_min_bytes(4096)
    try:
        yield
    finally:
        _ewdrv._stream_min_bytes(0)
        assert _ewdrv._stream_min_bytes(0) == old


@pytest.fixture
def threads():
    n = ptcore.get_num_threads()
    yield
    ptcore.set_num_threads(n)


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint32)


def _operands(rng, form, m, n):
    a = rng.standard_normal((m, n)).astype(np.float32) * 4
    b = {"tt": rng.standard_normal((m, n)), "row": rng.standard_normal(n),
         "col": rng.standard_normal((m, 1)), "ts": np.float32(1.7),
         "st": np.float32(-0.3)}[form]
    b = np.float32(b) if np.ndim(b) == 0 else b.astype(np.float32)
    return (b, a) if form == "st" else (a, b)


def _pt(x):
    return ptcore.from_numpy(np.ascontiguousarray(x))


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("form", ["tt", "row", "col", "ts", "st"])
@pytest.mark.parametrize("op", list(_NP))
def test_streamed_bits_equal_numpy(streaming, threads, op, form, nthreads):
    ptcore.set_num_threads(nthreads)
    rng = np.random.default_rng(3)
    x, y = _operands(rng, form, 97, 1000)      # rows of 4000 bytes: a ragged tail
    before = _ewdrv._stream_count()
    if np.ndim(y) == 0 and op in ("add", "sub", "mul", "div"):
        got = getattr(ptcore, op)(_pt(x), float(y))          # a Python number
    else:                                                  # 0-d tensors broadcast
        got = getattr(ptcore, op)(*(ptcore.full((), float(v)) if np.ndim(v) == 0 else _pt(v)
                                    for v in (x, y)))
    want = _NP[op](x, y)
    assert _ewdrv._stream_count() > before          # the streaming loop ran
    assert got.shape == want.shape and got.dtype == ptcore.float32
    np.testing.assert_array_equal(_bits(got.numpy()), _bits(want.astype(np.float32)))


@pytest.mark.parametrize("offset", range(17))
def test_every_output_alignment(streaming, offset):
    rng = np.random.default_rng(offset)
    n = 5000 + offset
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    buf = ptcore.full((n + 32,), 7.0)
    out = buf[offset:offset + n]
    before = _ewdrv._stream_count()
    ptcore.add(ptcore.from_numpy(a), ptcore.from_numpy(b), out=out)
    assert _ewdrv._stream_count() > before
    np.testing.assert_array_equal(_bits(out.numpy()), _bits(a + b))
    # nothing written outside the view
    rest = buf.numpy()
    assert (rest[:offset] == 7.0).all() and (rest[offset + n:] == 7.0).all()


_UNARY = {"neg": np.negative, "abs": np.abs, "reciprocal": lambda v: np.float32(1) / v,
          "square": np.square, "relu": lambda v: np.where(v < 0, np.float32(0), v)}


@pytest.mark.parametrize("offset", [0, 1, 5, 15])
@pytest.mark.parametrize("op", list(_UNARY))
def test_streamed_unary_maps(streaming, op, offset):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(3000) * 3).astype(np.float32)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.0]
    buf = ptcore.full((3000 + 16,), 5.0)
    out = buf[offset:offset + 3000]
    before = _ewdrv._stream_count()
    with np.errstate(all="ignore"):
        want = _UNARY[op](x)
        if op == "relu":                   # (no out=, as torch): in place
            out.copy_(ptcore.from_numpy(x))
            out.relu_()
        else:
            getattr(ptcore, op)(ptcore.from_numpy(x), out=out)
    assert _ewdrv._stream_count() > before
    np.testing.assert_array_equal(_bits(out.numpy()), _bits(want))
    rest = buf.numpy()
    assert (rest[:offset] == 5.0).all() and (rest[offset + 3000:] == 5.0).all()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_bits(getattr(ptcore, op)(ptcore.from_numpy(x)).numpy()),
                                      _bits(want))


def test_operator_fast_path_and_in_place(streaming):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 512)).astype(np.float32)
    b = rng.standard_normal((64, 512)).astype(np.float32)
    pa, pb = ptcore.from_numpy(a.copy()), ptcore.from_numpy(b)
    before = _ewdrv._stream_count()
    np.testing.assert_array_equal(_bits((pa * pb).numpy()), _bits(a * b))
    np.testing.assert_array_equal(_bits((pa - 2.5).numpy()), _bits(a - np.float32(2.5)))
    pa += pb                              # in place: the output is an input
    np.testing.assert_array_equal(_bits(pa.numpy()), _bits(a + b))
    assert _ewdrv._stream_count() >= before + 2


def test_short_rows_and_small_outputs_keep_plain_stores(streaming):
    # rows under 1 KiB (a (n, 3) broadcast) and outputs under the size do not stream
    before = _ewdrv._stream_count()
    x = ptcore.randn(4000, 3)
    y = x + ptcore.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(y.numpy(), x.numpy() + np.float32([1, 2, 3]))
    ptcore.randn(100) + 1.0
    assert _ewdrv._stream_count() == before


def test_default_size_is_half_the_cache():
    size = _ewdrv._stream_min_bytes(0)
    assert 4 << 20 <= size <= 256 << 20
    assert _ewdrv._stream_min_bytes(0) == size


def test_large_default_output():
    # an output of the machine's own size streams with the default setting
    n = _ewdrv._stream_min_bytes(0) // 4
    if n > 1 << 25:
        pytest.skip("this machine streams only outputs over 128 MiB")
    a = ptcore.arange(n, dtype=ptcore.float32)
    before = _ewdrv._stream_count()
    y = a + ptcore.ones(n)
    assert _ewdrv._stream_count() == before + 1
    assert float(y[0]) == 1.0 and float(y[-1]) == float(np.float32(n - 1) + np.float32(1))
    assert float((y - a).sum()) == n


_CHILD = """
import sys, numpy as np, ptcore
from ptcore._ops.kernels import _ewdrv
_ewdrv._stream_min_bytes(4096)
rng = np.random.default_rng(11)
a = rng.standard_normal((50, 1001)).astype(np.float32)
b = rng.standard_normal(1001).astype(np.float32)
pa, pb = ptcore.from_numpy(a), ptcore.from_numpy(b)
out = {op: getattr(ptcore, op)(pa, pb).numpy() for op in sys.argv[2:]}
out["scalar"] = (pa * 3.0).numpy()
out["neg"] = (-pa).numpy()
out["relu"] = pa.relu().numpy()
assert _ewdrv._stream_count() == len(sys.argv) + 1
np.savez(sys.argv[1], **out)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_streams_the_same_bits(cap, tmp_path):
    from ptcore._cpu_features import detect_cpu_capability
    have = detect_cpu_capability()
    if cap == "avx2" and have == "DEFAULT":
        pytest.skip("this CPU has no AVX2/FMA")
    env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
    subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "y.npz")] + list(_NP),
                   env=env, check=True, timeout=600)
    child = np.load(tmp_path / "y.npz")
    rng = np.random.default_rng(11)
    a = rng.standard_normal((50, 1001)).astype(np.float32)
    b = rng.standard_normal(1001).astype(np.float32)
    for op, f in _NP.items():
        np.testing.assert_array_equal(_bits(child[op]), _bits(f(a, b)), err_msg=op)
    np.testing.assert_array_equal(_bits(child["scalar"]), _bits(a * np.float32(3.0)))
    np.testing.assert_array_equal(_bits(child["neg"]), _bits(-a))
    np.testing.assert_array_equal(_bits(child["relu"]), _bits(np.where(a < 0, np.float32(0), a)))
