"""fill_/zero_ of a contiguous tensor: repeated 64-byte stores of the value's
pattern (ptcore/_ops/kernels/_copy.pyx ``_fill_contiguous``), memset for
all-equal bytes, split over the threads on pattern boundaries.  Every byte
written, none past the end, for every item size, odd lengths, thread counts
and small grains (several pieces); strided tensors take the copy loop."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _parallel

DTYPES = [ptcore.uint8, ptcore.bool, ptcore.float16, ptcore.bfloat16, ptcore.float32,
          ptcore.int64, ptcore.float64, ptcore.complex64, ptcore.complex128]
VALUES = {ptcore.bool: [True, False], ptcore.complex64: [1.5 - 2j, 0], ptcore.complex128: [3 + 1j, 0]}


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    old_n, old_g = ptcore.get_num_threads(), _parallel._get_parallel_grain()
    ptcore.set_num_threads(request.param)
    _parallel._set_parallel_grain(64)          # several pieces even for small tensors
    yield request.param
    _parallel._set_parallel_grain(old_g)
    ptcore.set_num_threads(old_n)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_byte_and_no_more(threads, dtype):
    for value in VALUES.get(dtype, [7, -1.25, 0]):
        if dtype in (ptcore.uint8,) and value == -1.25:
            continue
        for n in [1, 3, 15, 16, 17, 63, 64, 65, 1000, 4097, 100_001, 262_145]:
            base = ptcore.full((n + 10,), 1 if dtype is not ptcore.bool else True, dtype=dtype)
            t = base[5:5 + n]
            t.fill_(value)
            want = np.full(n, value, dtype=ptcore.empty(0, dtype=dtype).numpy().dtype
                           if dtype is not ptcore.bfloat16 else np.float32)
            got = (t.float() if dtype is ptcore.bfloat16 else t).numpy()
            np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{dtype} {n}")
            guard = (base[:5].float() if dtype is ptcore.bfloat16 else base[:5]).numpy()
            tail = (base[5 + n:].float() if dtype is ptcore.bfloat16 else base[5 + n:]).numpy()
            assert (guard == 1).all() and (tail == 1).all(), (dtype, n)


def test_shapes_and_strided_destinations(threads):
    x = ptcore.zeros(6, 7, 9)
    x.fill_(2.5)                                       # contiguous 3-d
    assert (x.numpy() == 2.5).all()
    x[:, ::2].fill_(-1.0)                              # strided: the copy loop
    want = np.full((6, 7, 9), 2.5, np.float32)
    want[:, ::2] = -1.0
    np.testing.assert_array_equal(x.numpy(), want)
    y = ptcore.zeros(5, 1, 8)[:, :, :].expand(5, 3, 8)  # an expanded tensor's base is written
    y.fill_(4.0)
    assert (y.numpy() == 4.0).all()
    z = ptcore.ones(4, 6).t()                          # transposed: the copy loop
    z.zero_()
    assert (z.numpy() == 0).all()
