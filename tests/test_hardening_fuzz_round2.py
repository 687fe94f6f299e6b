"""Second hardening round: hostile input found by fuzzing ptcore against torch
must raise torch's exception type (never a crash or a silent result)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _error_type(fn, L):
    try:
        fn(L)
    except Exception as e:      # the type is what is compared
        return type(e)
    return None


# a sparse tensor has no strided memory to export (torch refuses it)
SPARSE_EXPORT = {
    "numpy": lambda L: L.ones(3).to_sparse().numpy(),
    "np_asarray": lambda L: np.asarray(L.ones(3).to_sparse()),
    "dlpack": lambda L: L.ones(3).to_sparse().__dlpack__(),
    "np_from_dlpack": lambda L: np.from_dlpack(L.ones(3).to_sparse()),
    "narrow_copy_past_end": lambda L: L.ones(3).to_sparse().narrow_copy(0, 2, 5),
    "narrow_copy_negative_start": lambda L: L.narrow_copy(L.ones(3).to_sparse(), 0, -1, 2),
}


@pytest.mark.parametrize("name", sorted(SPARSE_EXPORT))
def test_sparse_refusals_match_torch(name):
    fn = SPARSE_EXPORT[name]
    expected = _error_type(fn, torch)
    assert expected is not None
    got = _error_type(fn, ptcore)
    assert got is not None and issubclass(got, expected), (got, expected)


def test_sparse_narrow_copy_in_range_still_works():
    t = torch.tensor([[0., 1., 0.], [2., 0., 3.]])
    want = t.to_sparse().narrow_copy(1, 1, 2).to_dense()
    got = ptcore.tensor(t.tolist()).to_sparse().narrow_copy(1, 1, 2).to_dense()
    assert got.tolist() == want.tolist()
