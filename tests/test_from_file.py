"""ptcore.from_file against torch.from_file (copied and shared reads, dtypes, errors)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(10, dtype=np.float32).tofile(path)
    return path


@pytest.mark.parametrize("size, dtype", [(4, "float32"), (0, "float32"), (3, "float64"),
                                         (20, "bfloat16"), (40, "uint8"), (5, "int64")])
def test_from_file_matches_torch(data_file, size, dtype):
    t = torch.from_file(str(data_file), False, size, dtype=getattr(torch, dtype))
    p = ptcore.from_file(str(data_file), False, size, dtype=getattr(ptcore, dtype))
    assert tuple(p.shape) == tuple(t.shape) and str(p.dtype)[7:] == str(t.dtype)[6:]
    np.testing.assert_array_equal(p.float().numpy(), t.float().numpy())


def test_from_file_shared_writes_back(data_file):
    p = ptcore.from_file(data_file, shared=True, size=10)
    p[0] = 42.0
    assert np.fromfile(data_file, dtype=np.float32)[0] == 42.0
    c = ptcore.from_file(data_file, size=10)   # a copy: writes stay in memory
    c[1] = -1.0
    assert np.fromfile(data_file, dtype=np.float32)[1] == 1.0
    assert ptcore.from_file(data_file, size=2).dtype is ptcore.get_default_dtype()


def test_from_file_errors(data_file, tmp_path):
    with pytest.raises(RuntimeError):
        torch.from_file(str(data_file), size=20)
    with pytest.raises(RuntimeError, match="smaller than the required mapping size <80>"):
        ptcore.from_file(data_file, size=20)
    with pytest.raises(RuntimeError):
        torch.from_file(str(tmp_path / "missing.bin"), size=2)
    with pytest.raises(RuntimeError, match="unable to open file"):
        ptcore.from_file(tmp_path / "missing.bin", size=2)
