"""ptcore.utils.data against torch.utils.data: differences found by
differential fuzzing, each checked against torch itself."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.utils.data as PU

torch = pytest.importorskip("torch")
import torch.utils.data as TU  # noqa: E402

BOTH = [(ptcore, PU), (torch, TU)]


@pytest.mark.parametrize("lib,U", BOTH)
def test_concat_dataset_deprecated_cummulative_sizes(lib, U):
    ds = U.ConcatDataset([[1, 2], [], [3]])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert ds.cummulative_sizes == [2, 2, 3]
    assert [x.category for x in w] == [FutureWarning]


@pytest.mark.parametrize("lib,U", BOTH)
def test_default_collate_refuses_negative_stride_arrays(lib, U):
    a = np.arange(3)[::-1]
    with pytest.raises(ValueError):
        U.default_collate([a, a])
    with pytest.raises(ValueError):
        list(U.DataLoader([a, a], batch_size=2))
    b = np.ascontiguousarray(a)
    assert U.default_collate([b, b]).tolist() == [[2, 1, 0], [2, 1, 0]]
    # non-contiguous but positive strides are fine
    c = np.arange(6).reshape(2, 3).T
    assert U.default_collate([c, c]).tolist() == [c.tolist(), c.tolist()]


def test_dataset_kind_in_all():
    assert "_DatasetKind" in TU.__all__
    assert "_DatasetKind" in PU.__all__
    assert PU._DatasetKind.Map == TU._DatasetKind.Map
    assert PU._DatasetKind.Iterable == TU._DatasetKind.Iterable
