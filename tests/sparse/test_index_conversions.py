"""``ptcore._convert_indices_from_coo_to_csr`` / ``_convert_indices_from_csr_to_coo``
against torch's (libraries build compressed structures with them: PyG's
``index2ptr``), and their checks of malformed input where torch's kernels read or
write out of bounds."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(11)


def _sorted_rows(n, size):
    return np.sort(_rng.integers(0, size, n)) if size else np.zeros(0, np.int64)


@pytest.mark.parametrize("n,size", [(0, 0), (0, 4), (1, 1), (7, 3), (50, 10), (10, 50)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("out_int32", [False, True])
def test_coo_to_csr_matches_torch(n, size, dtype, out_int32):
    rows = _sorted_rows(n, size).astype(dtype)
    t = torch._convert_indices_from_coo_to_csr(torch.from_numpy(rows), size,
                                               out_int32=out_int32)
    p = ptcore._convert_indices_from_coo_to_csr(ptcore.from_numpy(rows), size,
                                                out_int32=out_int32)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(p.numpy(), t.numpy())


def test_coo_to_csr_of_a_0d_index_and_out():
    t = torch._convert_indices_from_coo_to_csr(torch.tensor(1), 3)
    p = ptcore._convert_indices_from_coo_to_csr(ptcore.tensor(1), 3)
    np.testing.assert_array_equal(p.numpy(), t.numpy())
    out = ptcore.empty(0, dtype=ptcore.int64)
    r = ptcore._convert_indices_from_coo_to_csr(ptcore.tensor([0, 2, 2]), 3, out=out)
    assert r is out and out.tolist() == [0, 1, 1, 3]


@pytest.mark.parametrize("counts", [[2, 1, 0, 2], [0], [], [0, 0, 5], [3]])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
def test_csr_to_coo_matches_torch(counts, transpose, out_int32):
    crow = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    col = _rng.integers(0, 6, int(crow[-1])).astype(np.int64)
    t = torch._convert_indices_from_csr_to_coo(torch.from_numpy(crow), torch.from_numpy(col),
                                               out_int32=out_int32, transpose=transpose)
    p = ptcore._convert_indices_from_csr_to_coo(ptcore.from_numpy(crow),
                                                ptcore.from_numpy(col),
                                                out_int32=out_int32, transpose=transpose)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(p.shape) == tuple(t.shape)
    np.testing.assert_array_equal(p.numpy(), t.numpy())


def test_round_trip_through_a_csr_tensor():
    d = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 0], [4, 0, 5]], np.float32)
    s = ptcore.from_numpy(d).to_sparse_csr()
    coo = ptcore._convert_indices_from_csr_to_coo(s.crow_indices(), s.col_indices())
    np.testing.assert_array_equal(coo.numpy(), np.stack(np.nonzero(d)))
    crow = ptcore._convert_indices_from_coo_to_csr(coo[0], d.shape[0])
    np.testing.assert_array_equal(crow.numpy(), s.crow_indices().numpy())


@pytest.mark.parametrize("rows,size", [([0, 3], 3), ([-1, 0], 3), ([5], 0)])
def test_coo_to_csr_rejects_rows_out_of_range(rows, size):
    # (torch's kernel writes past its output for these)
    with pytest.raises(RuntimeError, match="out of range"):
        ptcore._convert_indices_from_coo_to_csr(ptcore.tensor(rows), size)


@pytest.mark.parametrize("crow,ncol", [([0, 3, 1], 3), ([1, 2, 3], 3), ([0, 2], 3),
                                       ([0, 4], 3)])
def test_csr_to_coo_rejects_malformed_pointers(crow, ncol):
    # (torch's kernel reads and writes past its operands for [0, 3, 1]: a crash)
    with pytest.raises(RuntimeError, match="crow_indices"):
        ptcore._convert_indices_from_csr_to_coo(ptcore.tensor(crow), ptcore.arange(ncol))


def test_bad_types_and_ranks_raise_as_torch():
    for lib in (torch, ptcore):
        with pytest.raises(NotImplementedError):
            lib._convert_indices_from_coo_to_csr(lib.tensor([0.0, 1.0]), 3)
        with pytest.raises(NotImplementedError):
            lib._convert_indices_from_csr_to_coo(lib.tensor([0.0, 1.0]), lib.tensor([0]))
        with pytest.raises(RuntimeError, match="vector"):
            lib._convert_indices_from_coo_to_csr(lib.tensor([[0, 1]]), 3)
    with pytest.raises(RuntimeError, match="vectors"):
        ptcore._convert_indices_from_csr_to_coo(ptcore.tensor([[0, 1]]), ptcore.tensor([0]))
    with pytest.raises(RuntimeError, match="non-negative"):
        ptcore._convert_indices_from_coo_to_csr(ptcore.tensor([0]), -1)
    for lib in (torch, ptcore):
        for size in (3.5, "3"):
            with pytest.raises(TypeError):
                lib._convert_indices_from_coo_to_csr(lib.tensor([0]), size)
