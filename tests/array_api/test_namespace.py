"""The array API namespace: discovery, info, constants and the Tensor side of the standard."""
import math

import numpy as np
import pytest

import ptcore
import ptcore.array_api as xp


def test_array_namespace_versions():
    x = ptcore.ones(3)
    assert x.__array_namespace__() is xp
    for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert x.__array_namespace__(api_version=v) is xp
    with pytest.raises(ValueError, match="2020.10"):
        x.__array_namespace__(api_version="2020.10")
    assert xp.__array_api_version__ == "2025.12"


def test_array_api_compat_finds_the_namespace():
    compat = pytest.importorskip("scipy._lib.array_api_compat")
    assert compat.array_namespace(ptcore.ones(2), ptcore.zeros(3)) is xp


def test_info():
    info = xp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert info.default_device() == ptcore.device("cpu")
    assert ptcore.device("cpu") in info.devices()
    d = info.default_dtypes()
    assert d["real floating"] == ptcore.float32 and d["integral"] == ptcore.int64
    assert d["indexing"] == ptcore.int64 and d["complex floating"] == ptcore.complex64
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64",
                                  "complex64", "complex128"}
    assert info.dtypes(kind="real floating") == {"float32": ptcore.float32, "float64": ptcore.float64}
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {"bool", "uint8"}
    with pytest.raises(ValueError):
        info.dtypes(kind="floating")


def test_constants_top_level_and_namespace():
    for mod in (ptcore, xp):
        assert mod.e == math.e and mod.pi == math.pi and mod.inf == math.inf
        assert math.isnan(mod.nan) and mod.newaxis is None
    x = ptcore.arange(3)
    assert x[ptcore.newaxis].shape == (1, 3)


def test_isdtype():
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.float32, ("integral", "real floating"))
    assert xp.isdtype(xp.complex64, "numeric") and not xp.isdtype(xp.bool, "numeric")
    assert xp.isdtype(xp.float64, xp.float64) and not xp.isdtype(xp.float64, xp.float32)
    with pytest.raises(ValueError):
        xp.isdtype(xp.float32, "floating")
    with pytest.raises(TypeError):
        xp.isdtype("float32", "numeric")


def test_finfo_iinfo_dtype_objects():
    fi = xp.finfo(xp.complex64)
    assert fi.dtype == xp.float32 and fi.eps == np.finfo(np.float32).eps and fi.bits == 32
    assert xp.finfo(ptcore.ones(2, dtype=ptcore.float64)).max == np.finfo(np.float64).max
    ii = xp.iinfo(xp.int16)
    assert (ii.min, ii.max, ii.bits, ii.dtype) == (-32768, 32767, 16, xp.int16)


def test_tensor_side():
    x = ptcore.arange(6.0).reshape(2, 3)
    assert x.to_device("cpu") is x
    assert x.to_device(x.device).device == x.device
    assert x.mT.shape == (3, 2)
    assert x.__dlpack_device__() == (1, 0)
    y = np.from_dlpack(x)                      # versioned capsule path (numpy asks max_version=(1, 0))
    np.testing.assert_array_equal(y, x.numpy())
    cap = x.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)
    assert ptcore.from_dlpack(cap).data_ptr() == x.data_ptr()
    z = xp.from_dlpack(x, copy=True)
    assert z.data_ptr() != x.data_ptr() and bool(xp.all(z == x))
    assert xp.from_dlpack(x).data_ptr() == x.data_ptr()
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))


def test_operators_with_python_scalars():
    x = ptcore.tensor([1, 2, 3], dtype=ptcore.int16)
    for out in (x + 1, 1 + x, x * 2, 2 - x, x // 2, x % 2, x ** 2, x & 1, x << 1):
        assert out.dtype == ptcore.int16
    f = ptcore.tensor([1.0, 2.0], dtype=ptcore.float32)
    assert (f + 1.5).dtype == ptcore.float32 and (2.0 / f).dtype == ptcore.float32
    assert (f < 1).dtype == ptcore.bool


def test_namespace_returns_plain_tensors_without_copies():
    x = ptcore.arange(12.0).reshape(3, 4)
    for out in (xp.permute_dims(x, (1, 0)), xp.matrix_transpose(x), xp.reshape(x, (4, 3)),
                xp.broadcast_to(x[0], (2, 4)), xp.expand_dims(x, axis=0), xp.asarray(x)):
        assert type(out) is ptcore.Tensor
        assert out.data_ptr() == x.data_ptr()
    with pytest.raises(ValueError):
        xp.reshape(x.mT, (12,), copy=False)
    assert xp.reshape(x, (12,), copy=True).data_ptr() != x.data_ptr()
    assert xp.astype(x, xp.float32, copy=False) is x
    assert xp.astype(x, xp.float32).data_ptr() != x.data_ptr()
