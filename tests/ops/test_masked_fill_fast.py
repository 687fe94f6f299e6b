"""masked_fill / masked_fill_ with a bool mask that broadcasts to the input without growing
it and a Python number (an attention mask's fill) take a short path: torch's values, dtypes,
overflow errors, version counter, gradients; other calls keep the general path."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def _pair(a, dtype):
    return (ptcore.from_numpy(a.copy()).to(getattr(ptcore, dtype)),
            torch.from_numpy(a.copy()).to(getattr(torch, dtype)))


def _same(p, t):
    assert tuple(p.shape) == tuple(t.shape) and p.dtype.itemsize == t.dtype.itemsize
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(p.to(ptcore.float64).numpy(), t.to(torch.float64).numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mshape", [(2, 3, 4, 5), (2, 1, 1, 5), (5,), (4, 1), ()])
def test_values_as_torch(dtype, mshape):
    rng = np.random.default_rng(len(mshape))
    a = rng.standard_normal((2, 3, 4, 5)) * 50
    m = rng.standard_normal(mshape) > 0
    x, tx = _pair(a, dtype)
    pm, tm = ptcore.from_numpy(np.asarray(m).copy()), torch.from_numpy(np.asarray(m).copy())
    values = [0, 1, -3, 7] if not (dtype.startswith("float") or dtype == "bfloat16") \
        else [0.0, -1e4, 2.5, float("-inf"), float("nan"), 3]
    if dtype == "bool":
        values = [0, 1, True and 1]
    if dtype == "uint8":
        values = [0, 9, 255, -1]      # (-1 wraps to 255, as torch)
    for v in values:
        _same(x.masked_fill(pm, v), tx.masked_fill(tm, v))
        y, ty = x.clone(), tx.clone()
        before = y._version
        assert y.masked_fill_(pm, v) is y
        ty.masked_fill_(tm, v)
        _same(y, ty)
        assert y._version == before + 1
    # a transposed input: the result is contiguous as torch's
    xt, txt = x.transpose(0, 3), tx.transpose(0, 3)
    pmt = pm.transpose(0, -1) if pm.dim() == 4 else pm
    tmt = tm.transpose(0, -1) if tm.dim() == 4 else tm
    if tuple(pmt.shape) == tuple(tmt.shape):
        try:
            want = txt.masked_fill(tmt, 1)
        except RuntimeError:
            return
        got = xt.masked_fill(pmt, 1)
        _same(got, want)
        assert got.stride() == want.stride()


@pytest.mark.parametrize("value,dtype", [(300, "uint8"), (1e30, "float16"), (70000, "int16"),
                                         (float("nan"), "int64")])
def test_overflow_errors_as_torch(value, dtype):
    x, tx = _pair(np.zeros(3), dtype)
    m = [True, False, True]
    with pytest.raises(Exception) as te:
        tx.masked_fill(torch.tensor(m), value)
    with pytest.raises(type(te.value)) as pe:
        x.masked_fill(ptcore.tensor(m), value)
    assert str(pe.value) == str(te.value)
    with pytest.raises(type(te.value)):
        x.masked_fill_(ptcore.tensor(m), value)


def test_general_path_cases_unchanged():
    # a mask that grows the input (out of place broadcasts, in place refuses), an expanded
    # target (torch's deprecation warning), a 0-d tensor value
    x, tx = ptcore.zeros(1, 3), torch.zeros(1, 3)
    pm, tm = ptcore.tensor([[True], [False]]), torch.tensor([[True], [False]])
    _same(x.masked_fill(pm, 2.0), tx.masked_fill(tm, 2.0))
    with pytest.raises(RuntimeError):
        tx.clone().masked_fill_(tm, 2.0)
    with pytest.raises(RuntimeError):
        x.clone().masked_fill_(pm, 2.0)
    e = ptcore.zeros(3).expand(2, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        e.masked_fill_(ptcore.tensor([True, False, False]), 1.0)
    assert any("expanded tensors" in str(r.message) for r in w)
    _same(x.masked_fill(ptcore.tensor([True, False, True]), ptcore.tensor(4.0)),
          tx.masked_fill(torch.tensor([True, False, True]), torch.tensor(4.0)))


def test_gradient_as_torch():
    a = np.random.default_rng(2).standard_normal((2, 3, 4))
    x, tx = ptcore.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    m = a[:, :1, :] > 0
    y = x.masked_fill(ptcore.from_numpy(m.copy()), -1e4).softmax(-1)
    ty = tx.masked_fill(torch.from_numpy(m.copy()), -1e4).softmax(-1)
    w = np.random.default_rng(3).standard_normal(a.shape)
    (y * ptcore.from_numpy(w)).sum().backward()
    (ty * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert type(y.grad_fn.next_functions[0][0]).__name__ == \
        type(ty.grad_fn.next_functions[0][0]).__name__


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int16", "float32", "int64"])
def test_long_rows_fill_and_select_as_torch(dtype):
    """Rows of 64 mask bytes and more take the vector fill (2-, 4- and 8-byte
    elements) and the branch-free compaction of ``x[mask]``; their tails the
    scalar loop."""
    rng = np.random.default_rng(7)
    for n in (63, 64, 65, 130, 200):
        a = (rng.standard_normal((3, n)) * 10).astype(np.float32)
        m = rng.random((3, n)) < 0.4
        m[1] = False
        m[2, :64] = True
        p, t = _pair(a, dtype)
        pm, tm = ptcore.from_numpy(m.copy()), torch.from_numpy(m.copy())
        _same(p.masked_fill(pm, 3), t.masked_fill(tm, 3))
        _same(p[pm], t[tm])
        # a broadcast mask row (attention's causal mask)
        row = ptcore.from_numpy(m[0].copy())
        _same(p.masked_fill(row, -2), t.masked_fill(torch.from_numpy(m[0].copy()), -2))
        p.masked_fill_(pm, 1)
        t.masked_fill_(tm, 1)
        _same(p, t)
