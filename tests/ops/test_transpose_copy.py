"""Transposed copies of 4- and 8-byte elements of one dtype (the block
transposes of ptc_transpose.h and the copy's tiles cut for them): every
element lands where NumPy puts it, for sizes around the 8x8 / 4x4 blocks and
the 16x32 tiles, offset views, padded destinations, batches and threads, on
every CPU path the machine runs."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _copy, _parallel
from cpu_capability import run_child, skip_unless_runnable

DTYPES = [np.float32, np.int32, np.float64, np.int64, np.complex64]
SIZES = [1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100]


def _values(rng, shape, dt):
    if np.dtype(dt).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if np.dtype(dt).kind == "f":
        v = rng.standard_normal(shape).astype(dt)
        v.flat[::7] = np.nan          # bits, not values, are copied: NaN payloads too
        return v
    return rng.integers(-2**31, 2**31 - 1, shape).astype(dt)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_size_around_the_blocks(dt):
    rng = np.random.default_rng(5)
    for m in SIZES:
        for n in SIZES:
            a = _values(rng, (n, m), dt)
            src = a.T
            dst = np.empty(src.shape, dt)
            _copy._copy_cast_arrays(dst, src)
            assert np.array_equal(dst.view(np.uint8), np.ascontiguousarray(src).view(np.uint8)), (m, n)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_offset_views_padded_destinations_and_batches(dt):
    rng = np.random.default_rng(6)
    big = _values(rng, (3, 301, 203), dt)
    for src in (big[1, 3:250, 1:200].T,            # odd start: unaligned rows
                big[:, 5:, 2:].transpose(0, 2, 1),  # a batch of transposes
                big.transpose(2, 0, 1),
                big[:, ::2, :].transpose(0, 2, 1)):  # a step on the other dim
        ref = np.ascontiguousarray(src)
        dst = np.empty(src.shape, dt)
        _copy._copy_cast_arrays(dst, src)
        assert np.array_equal(dst.view(np.uint8), ref.view(np.uint8))
        # a destination with padded rows (its row stride is not its width)
        pad = np.zeros(src.shape[:-1] + (src.shape[-1] + 13,), dt)
        view = pad[..., 5:5 + src.shape[-1]]
        _copy._copy_cast_arrays(view, src)
        assert np.array_equal(view.view(np.uint8), ref.view(np.uint8))
        assert not pad[..., :5].any() and not pad[..., 5 + src.shape[-1]:].any()


@pytest.mark.parametrize("nthreads,grain", [(2, 1), (3, 100)])
def test_threads(nthreads, grain):
    n0, g0 = _parallel._get_num_threads(), _parallel._get_parallel_grain()
    try:
        _parallel._set_num_threads(nthreads)
        _parallel._set_parallel_grain(grain)
        rng = np.random.default_rng(7)
        for dt in (np.float32, np.int64):
            for shape in ((517, 389), (1024, 1024), (3, 2000), (2000, 3)):
                src = _values(rng, shape, dt).T
                dst = np.empty(src.shape, dt)
                _copy._copy_cast_arrays(dst, src)
                assert np.array_equal(dst.view(np.uint8), np.ascontiguousarray(src).view(np.uint8))
    finally:
        _parallel._set_num_threads(n0)
        _parallel._set_parallel_grain(g0)


def test_tensor_contiguous_and_permute():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 37, 45, 3)).astype(np.float32)
    t = ptcore.from_numpy(x)
    for perm in ((0, 2, 1, 3), (0, 3, 1, 2), (3, 2, 1, 0), (1, 0, 3, 2)):
        np.testing.assert_array_equal(t.permute(*perm).contiguous().numpy(), x.transpose(perm))
    y = rng.standard_normal((300, 129))
    np.testing.assert_array_equal(ptcore.from_numpy(y).t().contiguous().numpy(), y.T)
    np.testing.assert_array_equal(ptcore.from_numpy(y).mT.clone().numpy(), y.T)


_CHILD = """
import sys, numpy as np
from ptcore._ops.kernels import _copy
rng = np.random.default_rng(9)
sizes = [1, 4, 7, 8, 9, 16, 17, 32, 33, 100, 1024]
for dt in (np.float32, np.int64, np.complex64):
    for m in sizes:
        for n in (3, 8, 31, 64, 257):
            a = rng.integers(0, 2**16, (n, m)).astype(dt)
            src = a.T
            dst = np.empty(src.shape, dt)
            _copy._copy_cast_arrays(dst, src)
            assert np.array_equal(dst, src), (np.dtype(dt).name, m, n)
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path(cap):
    skip_unless_runnable(cap)
    run_child(cap, _CHILD)
