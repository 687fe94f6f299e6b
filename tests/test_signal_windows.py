"""ptcore.signal.windows against torch.signal.windows (values, dtypes, errors)."""
import numpy as np
import pytest

import ptcore
from ptcore.signal import windows as pw

torch = pytest.importorskip("torch")
tw = torch.signal.windows

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
         "kaiser", "nuttall"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M", [0, 1, 2, 7, 10, 33])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_matches_torch(name, M, sym, dtype):
    p = getattr(pw, name)(M, sym=sym, dtype=getattr(ptcore, dtype))
    t = getattr(tw, name)(M, sym=sym, dtype=getattr(torch, dtype))
    assert str(p.dtype)[7:] == str(t.dtype)[6:] and tuple(p.shape) == tuple(t.shape)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name, kw", [
    ("exponential", {"tau": 0.5}), ("exponential", {"center": 2.0, "sym": False}),
    ("gaussian", {"std": 0.7}), ("kaiser", {"beta": 0.9}), ("kaiser", {"beta": 0.0}),
    ("general_hamming", {"alpha": 0.6}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_cosine", {"a": (1.0,), "sym": False}),
])
def test_window_parameters(name, kw):
    p = getattr(pw, name)(12, **kw)
    t = getattr(tw, name)(12, **kw)
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
    assert p.dtype is ptcore.float32


def test_window_requires_grad_and_default_dtype():
    p = pw.gaussian(5, requires_grad=True)
    assert p.requires_grad == tw.gaussian(5, requires_grad=True).requires_grad
    old = ptcore.get_default_dtype()
    ptcore.set_default_dtype(ptcore.float64)
    try:
        assert pw.hann(4).dtype is ptcore.float64
    finally:
        ptcore.set_default_dtype(old)


@pytest.mark.parametrize("call", [
    lambda m: m.hann(-1), lambda m: m.hann(4, dtype=m_dtype(m, "int64")),
    lambda m: m.gaussian(4, std=0), lambda m: m.exponential(4, tau=-1.0),
    lambda m: m.exponential(4, center=1.0), lambda m: m.kaiser(4, beta=-1.0),
    lambda m: m.general_cosine(4, a=[]),
])
def test_window_errors(call):
    with pytest.raises(ValueError):
        call(tw)
    with pytest.raises(ValueError):
        call(pw)


def m_dtype(m, name):
    return getattr(torch if m is tw else ptcore, name)


def test_general_cosine_needs_iterable():
    with pytest.raises(TypeError):
        tw.general_cosine(4, a=3)
    with pytest.raises(TypeError):
        pw.general_cosine(4, a=3)


def test_reachable_as_torch():
    assert ptcore.signal.windows.hann is pw.hann
    import ptcore.signal.windows.windows as mod
    assert mod.kaiser is pw.kaiser
