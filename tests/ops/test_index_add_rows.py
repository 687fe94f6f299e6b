"""index_add along dim 0 of contiguous float rows (ptcore/_ops/kernels/_index.pyx
index_add_rows, behind embedding's backward) gives the same bits as the
general indexed kernel, repeated indices accumulated in order; other layouts
keep the general kernel; values against NumPy."""
import numpy as np
import pytest

import ptcore
from ptcore._ops import shape as _shape
from ptcore._ops.kernels import _index


def _general(dst, idx, src):
    """The general indexed kernel on the same operands."""
    out = dst.clone()
    st = _shape._dim_vector_strides(idx, out.dim(), 0)
    _shape._along_dim(_shape._MODE_REDUCE, _index.REDUCTIONS["add"], src, list(src.stride()),
                      out, 0, idx, st, list(src.shape))
    return out


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape,n", [((65, 128), 768), ((10, 3, 5), 40), ((7,), 100), ((1, 9), 5)])
def test_same_bits_as_general_kernel(dt, shape, n):
    rng = np.random.default_rng(n)
    d0 = rng.standard_normal(shape).astype(dt)
    s0 = rng.standard_normal((n,) + shape[1:]).astype(dt)
    idx = ptcore.from_numpy(rng.integers(0, shape[0], n))
    dst = ptcore.from_numpy(d0.copy())
    src = ptcore.from_numpy(s0)
    fast = dst.clone()
    assert _index.index_add_rows(fast, idx, src)
    np.testing.assert_array_equal(fast.numpy(), _general(dst, idx, src).numpy())
    got = ptcore.from_numpy(d0.copy()).index_add(0, idx, src).numpy()
    want = d0.astype(np.float64)
    np.add.at(want, idx.numpy(), s0.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5 if dt == np.float32 else 1e-12, atol=1e-5)


def test_other_layouts_decline():
    dst = ptcore.zeros(4, 6)
    idx = ptcore.tensor([0, 2, 2])
    assert not _index.index_add_rows(dst.t(), idx, ptcore.ones(3, 4))        # strided dst
    assert not _index.index_add_rows(dst, idx, ptcore.ones(6, 3).t())        # strided src
    assert not _index.index_add_rows(dst, idx.int(), ptcore.ones(3, 6))      # int32 index
    assert not _index.index_add_rows(dst.long(), idx, ptcore.ones(3, 6).long())
    # index_add along dim 1 and on a transposed tensor still work (general kernel)
    r = ptcore.zeros(4, 6).index_add(1, idx, ptcore.ones(4, 3))
    assert r.sum().item() == 12 and r[:, 2].sum().item() == 8


def test_embedding_gradient():
    w = ptcore.randn(11, 4, requires_grad=True)
    i = ptcore.tensor([[1, 3, 3], [10, 1, 1]])
    ptcore.nn.functional.embedding(i, w).sum().backward()
    want = np.zeros((11, 4))
    for k, c in {1: 3, 3: 2, 10: 1}.items():
        want[k] = c
    np.testing.assert_array_equal(w.grad.numpy(), want)


def test_out_of_range_indices_decline():
    # reachable from Python: indices outside dst make the kernel decline
    # (index_add itself raises before calling it)
    dst = ptcore.zeros(4, 3)
    src = ptcore.ones(2, 3)
    for bad in ([0, 4], [-1, 0], [2, 10**12]):
        assert not _index.index_add_rows(dst, ptcore.tensor(bad), src)
    assert (dst.numpy() == 0).all()
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 0 with size 4"):
        dst.index_add(0, ptcore.tensor([0, 4]), src)            # torch's error
