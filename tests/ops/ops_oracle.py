"""Helpers shared by the ops test modules: dtype-exact random data built
with ptcore, torch and NumPy, and value/dtype/error comparisons against torch."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------------
# helpers (shared)
# ---------------------------------------------------------------------------
ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
              "float32", "float64", "complex64", "complex128"]
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def rand(shape, name, seed=0):
    """Random data of dtype ``name``, exactly representable in every dtype
    (bfloat16 data is float32 holding bfloat16-exact values)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in INT_DTYPES:
        lo = 0 if name == "uint8" else -60
        return rng.integers(lo, 60, shape).astype(name)
    vals = rng.integers(-200, 200, shape) / 4
    if name == "bfloat16":
        return vals.astype(np.float32)
    if name.startswith("complex"):
        return (vals + 1j * rng.integers(-8, 8, shape)).astype(name)
    return vals.astype(name)


def pt(a, name=None):
    t = ptcore.from_numpy(np.array(a, copy=True))
    return t.to(ptcore.bfloat16) if name == "bfloat16" else t


def th(a, name=None):
    import torch
    t = torch.from_numpy(np.array(a, copy=True))
    return t.to(torch.bfloat16) if name == "bfloat16" else t


def both(a, name=None):
    return pt(a, name), th(a, name)


def to_np(t):
    t = t.detach() if getattr(t, "requires_grad", False) else t
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy()


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def assert_same(p, r, exact=True):
    """ptcore result ``p`` equals torch result ``r`` (shape, dtype, values)."""
    if isinstance(r, (tuple, list)):
        assert isinstance(p, (tuple, list)) and len(p) == len(r)
        for a, b in zip(p, r):
            assert_same(a, b, exact)
        return
    assert tuple(p.shape) == tuple(r.shape), f"shape {tuple(p.shape)} vs torch {tuple(r.shape)}"
    assert dtype_name(p) == dtype_name(r), f"dtype {p.dtype} vs torch {r.dtype}"
    if exact:
        np.testing.assert_array_equal(to_np(p), to_np(r))
    else:
        tol = 1e-2 if dtype_name(r) in ("float16", "bfloat16") else 1e-5
        np.testing.assert_allclose(to_np(p), to_np(r), rtol=tol, atol=tol)


def same_error(torch_fn, pt_fn, words=()):
    """Both raise; same exception type; ``words`` appear in both messages."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            torch_fn()
        with pytest.raises(Exception) as pe:
            pt_fn()
    assert type(pe.value) is type(te.value), (
        f"ptcore raised {type(pe.value).__name__}({pe.value}); "
        f"torch raised {type(te.value).__name__}({te.value})")
    for w in words:
        assert w in str(te.value), f"bad test: {w!r} not in torch message {te.value}"
        assert w in str(pe.value), f"{w!r} missing from ptcore message: {pe.value}"
    return str(pe.value), str(te.value)
