"""default_collate refuses sparse tensors with torch's RuntimeError."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_default_collate_refuses_sparse_batches(layout):
    for lib in (ptcore, torch):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1], [1, 0]]), lib.tensor([1.0, 2.0]), (2, 2))
        if layout == "csr":
            s = s.to_sparse_csr()
        with pytest.raises(RuntimeError, match="Batches of sparse tensors are not currently "
                                               "supported by the default collate_fn"):
            lib.utils.data.default_collate([s, s])
