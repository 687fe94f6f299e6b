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


CAPSULE_MISUSE = {
    "consumed_twice": lambda L: [L.from_dlpack(c) for c in [L.arange(4.).__dlpack__()] * 2],
    "utils_consumed_twice": lambda L: [L.utils.dlpack.from_dlpack(c)
                                       for c in [L.utils.dlpack.to_dlpack(L.arange(4.))] * 2],
    "producer_returns_non_capsule": lambda L: L.from_dlpack(_BadProducer()),
}


class _BadProducer:
    def __dlpack__(self, **kwargs):
        return 5

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("name", sorted(CAPSULE_MISUSE))
def test_invalid_dlpack_capsule_error_matches_torch(name):
    fn = CAPSULE_MISUSE[name]
    expected = _error_type(fn, torch)
    assert expected is RuntimeError
    got = _error_type(fn, ptcore)
    assert got is not None and issubclass(got, expected), (got, expected)
