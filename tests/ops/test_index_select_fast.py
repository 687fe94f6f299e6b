"""index_select's one-call fast path (ptcore._ops.kernels._index.index_select_fast:
contiguous CPU input, in-range int64 positions; rows over threads past 256
KiB) gives the
values of the general path (reached with ``out=``) for every dtype, dim and
element size, and leaves every other case to it (which raises PyTorch's
errors); autograd records through it."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _index as K

DTYPES = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16, ptcore.int64,
          ptcore.int32, ptcore.int16, ptcore.uint8, ptcore.bool, ptcore.complex64,
          ptcore.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (2, 1, 3, 2)])
def test_values_as_the_general_path(dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = ptcore.from_numpy(rng.standard_normal(shape) * 5).to(dtype)
    for dim in range(-len(shape), len(shape)):
        size = shape[dim]
        for idx in ([0], [size - 1, 0, size - 1], list(rng.integers(0, size, 9)), []):
            i = ptcore.tensor(idx, dtype=ptcore.int64)
            fast = K.index_select_fast(x, dim, i)
            assert fast is not None
            got = x.index_select(dim, i)
            want_shape = list(shape)
            want_shape[dim] = len(idx)
            general = ptcore.empty(want_shape, dtype=dtype)
            ptcore.index_select(x, dim, i, out=general)
            assert got.dtype == dtype and tuple(got.shape) == tuple(want_shape)
            assert ptcore.equal(got, general) and ptcore.equal(fast, general)
            np.testing.assert_array_equal(
                got.to(ptcore.float64 if not dtype.is_complex else ptcore.complex128).numpy(),
                np.take(x.to(ptcore.float64 if not dtype.is_complex else ptcore.complex128).numpy(),
                        np.asarray(idx, dtype=np.int64), axis=dim))


def test_other_cases_take_the_general_path():
    x = ptcore.arange(12.0).reshape(3, 4)
    i = ptcore.tensor([2, 0])
    declined = [(x.t(), 0, i), (x, 0, i.to(ptcore.int32)), (x, 0, ptcore.tensor([3])),
                (x, 0, ptcore.tensor([-1])), (x, 2, i), (x, 0, ptcore.tensor([[0]])),
                (x, 0, ptcore.tensor(1)), (x, 0, ptcore.tensor([0, 2, 4])[::2]),
                (x, 0.0, i), (ptcore.tensor(3.0), 0, ptcore.tensor([0])),
                (x.to(ptcore.uint16), 0, i)]
    for args in declined:
        assert K.index_select_fast(*args) is None
    assert x.index_select(0, i.to(ptcore.int32)).tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    with pytest.raises(IndexError, match="index out of range"):
        x.index_select(0, ptcore.tensor([3]))
    with pytest.raises(IndexError, match="index out of range"):
        x.index_select(0, ptcore.tensor([-1]))
    with pytest.raises(RuntimeError, match="out of DATA bounds"):
        x.index_select(1, ptcore.tensor([4]))
    with pytest.raises(NotImplementedError):
        x.to(ptcore.uint16).index_select(0, i)


@pytest.mark.parametrize("nthreads,grain", [(1, 32768), (2, 1), (3, 1000)])
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.int16, ptcore.complex64])
def test_large_results_over_threads(nthreads, grain, dtype):
    # results past 256 KiB: rows split over the team (a row per item), any dim
    from ptcore._ops.kernels import _parallel
    n0, g0 = _parallel._get_num_threads(), _parallel._get_parallel_grain()
    try:
        _parallel._set_num_threads(nthreads)
        _parallel._set_parallel_grain(grain)
        rng = np.random.default_rng(5)
        base = rng.standard_normal((3, 300, 65)) * 9
        x = ptcore.from_numpy(base).to(dtype)
        ref = x.to(ptcore.complex128 if dtype.is_complex else ptcore.float64).numpy()
        for dim, size, count in ((0, 3, 30), (1, 300, 1500), (2, 65, 400)):
            idx = rng.integers(0, size, count)
            i = ptcore.from_numpy(idx)
            fast = K.index_select_fast(x, dim, i)
            assert fast is not None and fast.dtype == dtype
            want = np.take(ref, idx, axis=dim)
            np.testing.assert_array_equal(
                fast.to(ptcore.complex128 if dtype.is_complex else ptcore.float64).numpy(), want)
            assert ptcore.equal(x.index_select(dim, i), fast)
    finally:
        _parallel._set_num_threads(n0)
        _parallel._set_parallel_grain(g0)


def test_autograd_through_the_fast_path():
    x = ptcore.arange(12.0).reshape(3, 4).requires_grad_()
    y = x.index_select(0, ptcore.tensor([2, 0, 2]))
    assert y.grad_fn.name() == "IndexSelectBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [[1.0] * 4, [0.0] * 4, [2.0] * 4]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64, ptcore.int64, ptcore.bool,
                                   ptcore.float16, ptcore.complex64])
def test_getitem_with_a_position_vector(dtype):
    """``x[idx]`` with a 1-D int64 tensor takes the fast path for in-range
    non-negative positions and the general rows path otherwise (negative
    positions wrap, out-of-range ones raise), with the same values and
    torch's IndexBackward0."""
    from ptcore._ops.indexing import _take_rows
    x = ptcore.from_numpy(np.random.default_rng(0).standard_normal((6, 3, 2)) * 4).to(dtype)
    for idx in ([5, 0, 5, 2], [0], [], [-1, 2, -6]):
        i = ptcore.tensor(idx, dtype=ptcore.int64)
        got = x[i]
        assert ptcore.equal(got, _take_rows(x, i)) and got.dtype == dtype
        assert tuple(got.shape) == (len(idx), 3, 2)
    with pytest.raises(IndexError, match="out of bounds"):
        x[ptcore.tensor([6])]
    xg = ptcore.ones(4, 2, requires_grad=True)
    y = xg[ptcore.tensor([3, 3, 0])]
    assert y.grad_fn.name() == "IndexBackward0"
    y.sum().backward()
    assert xg.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [2.0, 2.0]]
