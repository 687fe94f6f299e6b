"""The float8 dtypes (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz) against
torch: every cast bit for bit (rounding, subnormals, saturation and overflow rules, NaN
payloads), the range checks of fill_/full/setitem, the dtype's properties, finfo and promotion,
and which operators work (same values) or raise (as torch's CPU kernels)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]


def _pt(name):
    return getattr(ptcore, name)


def _th(name):
    return getattr(torch, name)


def _bytes(t, lib):
    return t.contiguous().view(lib.uint8).numpy()


def _float32_patterns():
    """Every float32 whose top 16 bits vary, with the low bits that decide rounding (ties at
    every float8 rounding position included): 2**16 * 8 values, NaN and inf among them."""
    hi = np.arange(2 ** 16, dtype=np.uint32) << 16
    lows = np.array([0, 1, 0x4000, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFF], dtype=np.uint32)
    return (hi[:, None] | lows[None, :]).ravel().view(np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_cast_from_float32_bit_exact(name):
    x = _float32_patterns()
    want = _bytes(torch.from_numpy(x.copy()).to(_th(name)), torch)
    got = _bytes(ptcore.from_numpy(x.copy()).to(_pt(name)), ptcore)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(x.view(np.uint32)[i]), got[i], want[i]) for i in bad[:5]]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("target", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                    "int8", "uint8", "bool", "complex64"])
def test_cast_every_code_to(name, target):
    codes = np.arange(256, dtype=np.uint8)
    want = torch.from_numpy(codes.copy()).view(_th(name)).to(_th(target))
    got = ptcore.from_numpy(codes.copy()).view(_pt(name)).to(_pt(target))
    if target in ("float16", "bfloat16"):
        np.testing.assert_array_equal(_bytes(got, ptcore), _bytes(want, torch))
    elif target in ("float32", "float64", "complex64"):
        # the same bits, NaN payloads included
        g, w = got.numpy(), want.numpy()
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
    else:
        # float -> integer casts of out-of-range/NaN values are C's (x86) in both
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", NAMES)
def test_cast_from_other_dtypes(name):
    rng = np.random.default_rng(0)
    # float64: cast to float32 first (double rounding), as torch's kernels
    d = rng.standard_normal(20000) * 2.0 ** rng.integers(-20, 18, 20000)
    d[:4] = [np.inf, -np.inf, np.nan, -0.0]
    # float16 / bfloat16: every bit pattern
    h = np.arange(2 ** 16, dtype=np.uint16)
    ints = np.arange(-70000, 70000, 7, dtype=np.int64)
    cases = [(d, "float64", d), (h.view(np.float16), "float16", h.view(np.float16)),
             (h, "bfloat16", None), (ints, "int64", ints),
             (np.array([True, False]), "bool", None),
             ((d[:100] + 1j * d[100:200]).astype(np.complex64), "complex64", None)]
    for arr, src, _ in cases:
        if src == "bfloat16":
            tw = torch.from_numpy(arr.copy().view(np.int16)).view(torch.bfloat16)
            tg = ptcore.from_numpy(arr.copy().view(np.int16)).view(ptcore.bfloat16)
        else:
            tw, tg = torch.from_numpy(arr.copy()), ptcore.from_numpy(arr.copy())
        np.testing.assert_array_equal(_bytes(tg.to(_pt(name)), ptcore),
                                      _bytes(tw.to(_th(name)), torch), err_msg=src)
    # float8 -> float8, every code
    codes = np.arange(256, dtype=np.uint8)
    for other in NAMES:
        want = torch.from_numpy(codes.copy()).view(_th(other)).to(_th(name))
        got = ptcore.from_numpy(codes.copy()).view(_pt(other)).to(_pt(name))
        np.testing.assert_array_equal(_bytes(got, ptcore), _bytes(want, torch), err_msg=other)


def _outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as e:          # the exception type is part of the comparison
        return ("raises", type(e).__name__, str(e).replace("ptcore", "torch"))
    return ("ok", None if r is None else _bytes(r, lib).tolist())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", [1000.0, 470.0, 448.0, 300, 240.0, 61440.0, 70000.0,
                                   float("inf"), float("-inf"), float("nan"), -0.0, 1e-9,
                                   -1e-9, 3.3, 5, -250, True, 57344])
def test_number_to_float8_checks(name, value):
    def fill(lib):
        return lib.zeros(2, dtype=getattr(lib, name)).fill_(value)

    def full_one(lib):
        return lib.full((1,), value, dtype=getattr(lib, name))

    def setitem(lib):
        t = lib.zeros(2, dtype=getattr(lib, name))
        t[0] = value
        return t

    def from_list(lib):
        return lib.tensor([value], dtype=getattr(lib, name))

    for fn in (fill, full_one, setitem, from_list):
        assert _outcome(fn, ptcore) == _outcome(fn, torch), fn.__name__


@pytest.mark.parametrize("name", NAMES)
def test_dtype_properties_finfo_promotion(name):
    p, t = _pt(name), _th(name)
    assert (p.itemsize, p.is_floating_point, p.is_complex, p.is_signed) == \
        (t.itemsize, t.is_floating_point, t.is_complex, t.is_signed)
    assert repr(p) == repr(t).replace("torch", "ptcore") and str(p) == str(t).replace("torch", "ptcore")
    fp, ft = ptcore.finfo(p), torch.finfo(t)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(fp, attr) == getattr(ft, attr), attr
    assert repr(fp) == repr(ft)
    assert p.to_real() is p
    with pytest.raises(RuntimeError) as want:
        t.to_complex()
    with pytest.raises(RuntimeError) as got:
        p.to_complex()
    assert str(got.value) == str(want.value)
    for other in NAMES + ["bool", "uint8", "int64", "float16", "bfloat16", "float32",
                          "complex64", "uint16"]:
        for a, b in ((name, other), (other, name)):
            try:
                w = str(torch.promote_types(_th(a), _th(b))).replace("torch.", "")
            except RuntimeError as e:
                w = ("raises", str(e))
            try:
                g = str(ptcore.promote_types(_pt(a), _pt(b))).replace("ptcore.", "")
            except RuntimeError as e:
                g = ("raises", str(e))
            assert g == w, (a, b)
        assert ptcore.can_cast(p, _pt(other)) == torch.can_cast(t, _th(other))
        assert ptcore.can_cast(_pt(other), p) == torch.can_cast(_th(other), t)
    x, y = ptcore.zeros(2, dtype=p), torch.zeros(2, dtype=t)
    for s in (1, 1.5, True, ptcore.tensor(1.0)):
        s_t = torch.tensor(1.0) if isinstance(s, ptcore.Tensor) else s
        assert str(ptcore.result_type(x, s)).replace("ptcore", "torch") == \
            str(torch.result_type(y, s_t))


X = [[0.5, 1.5, -3.0], [250.0, 0.0, -0.125]]
MASK = [[True, False, True], [False, True, False]]

# operators torch's CPU kernels run on the float8 types: ptcore gives the same bytes
SUPPORTED = {
    "abs": lambda L, x: x.abs(), "eq": lambda L, x: x == x.flip(0),
    "ne": lambda L, x: x != x.flip(0), "eq_number": lambda L, x: x == 1.5,
    "eq_0d": lambda L, x: x == L.tensor(1.5), "isnan": lambda L, x: x.isnan(),
    "where": lambda L, x: L.where(L.tensor(MASK), x, x.flip(0)),
    "where_number": lambda L, x: L.where(L.tensor(MASK), x, 0.3),
    "cat": lambda L, x: L.cat([x, x.flip(0)]), "stack": lambda L, x: L.stack([x, x]),
    "clone": lambda L, x: x.clone(), "contiguous": lambda L, x: x.t().contiguous(),
    "fill": lambda L, x: x.clone().fill_(2), "zero_": lambda L, x: x.clone().zero_(),
    "index": lambda L, x: x[L.tensor([1, 0])], "bool_index": lambda L, x: x[L.tensor(MASK)],
    "index_select": lambda L, x: x.index_select(1, L.tensor([2, 0])),
    "masked_select": lambda L, x: x.masked_select(L.tensor(MASK)),
    "flip": lambda L, x: x.flip(0), "eye": lambda L, x: L.eye(3, dtype=x.dtype),
    "zeros_like": lambda L, x: L.zeros_like(x), "ones_like": lambda L, x: L.ones_like(x),
    "full_like": lambda L, x: L.full_like(x, 3.0), "repeat": lambda L, x: x.repeat(2, 1),
    "setitem": lambda L, x: _set(x.clone(), (0, 1), 5.0),
    "setitem_tensor": lambda L, x: _set(x.clone(), 0, x[1]),
    "copy_from_float32": lambda L, x: x.clone().copy_(L.ones(2, 3) * 3.3),
    "view_uint8": lambda L, x: x.view(L.uint8).view(x.dtype),
    "mm": lambda L, x: x @ x.t(), "addmm": lambda L, x: L.addmm(x[:, :2], x, x.t()),
    "linear": lambda L, x: L.nn.functional.linear(x, x),
    "any": lambda L, x: x.any(), "all": lambda L, x: x.all(),
    "narrow": lambda L, x: x.narrow(1, 1, 2), "unbind": lambda L, x: x.unbind(0)[1],
    "to_float32": lambda L, x: x.float(),
}
# operators torch refuses for them: ptcore raises too (the same exception type)
REFUSED = {
    "add": lambda L, x: x + x, "mul": lambda L, x: x * 2, "neg": lambda L, x: -x,
    "lt": lambda L, x: x < x, "sum": lambda L, x: x.sum(), "mean": lambda L, x: x.mean(),
    "max": lambda L, x: x.max(), "amax": lambda L, x: x.amax(0), "argmax": lambda L, x: x.argmax(),
    "sort": lambda L, x: x.sort().values, "topk": lambda L, x: x.topk(1).values,
    "unique": lambda L, x: L.unique(x), "cumsum": lambda L, x: x.cumsum(0),
    "exp": lambda L, x: x.exp(), "relu": lambda L, x: L.relu(x), "clamp": lambda L, x: x.clamp(0, 1),
    "softmax": lambda L, x: x.softmax(0), "sign": lambda L, x: x.sign(),
    "isposinf": lambda L, x: x.isposinf(), "signbit": lambda L, x: x.signbit(),
    "rand": lambda L, x: L.rand(3, dtype=x.dtype), "randn": lambda L, x: L.randn(3, dtype=x.dtype),
    "add_float32": lambda L, x: x + L.ones(3), "numpy": lambda L, x: x.numpy(),
}
# (ptcore is more permissive than torch's CPU kernels for gather/scatter, masked_fill,
# nonzero/count_nonzero, arange, triu, equal and bmm/matmul of batches: they give values)


def _set(t, idx, v):
    t[idx] = v
    return t


def _result(fn, lib, name):
    x = lib.tensor(X).to(getattr(lib, name))
    try:
        r = fn(lib, x)
    except Exception as e:          # noqa: BLE001 - compared with torch's
        return ("raises", type(e).__name__)
    if isinstance(r, lib.Tensor):
        if r.dtype.is_floating_point and r.dtype.itemsize == 1:
            return (str(r.dtype).split(".")[-1], _bytes(r, lib).tolist(), tuple(r.shape))
        return (str(r.dtype).split(".")[-1], np.asarray(r.numpy()).view(np.uint8).tolist(),
                tuple(r.shape))
    return r


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("op", sorted(SUPPORTED) + sorted(REFUSED))
def test_operators_as_torch(name, op):
    fn = SUPPORTED.get(op) or REFUSED[op]
    want, got = _result(fn, torch, name), _result(fn, ptcore, name)
    assert got == want
    assert (want[0] == "raises") == (op in REFUSED)


@pytest.mark.parametrize("name", NAMES)
def test_values_print_and_convert_as_torch(name):
    codes = np.arange(256, dtype=np.uint8)
    p = ptcore.from_numpy(codes.copy()).view(_pt(name))
    t = torch.from_numpy(codes.copy()).view(_th(name))
    fin = [i for i in range(256) if np.isfinite(t[i].item())]
    assert p[fin].tolist() == t[fin].tolist()
    assert [p[i].item() for i in fin[:40]] == [t[i].item() for i in fin[:40]]
    x = torch.tensor(X).to(_th(name))
    assert repr(ptcore.tensor(X).to(_pt(name))) == repr(x).replace("torch", "ptcore")
    assert repr(ptcore.tensor(X).to(_pt(name))[0, 1]) == repr(x[0, 1]).replace("torch", "ptcore")
    assert ptcore.zeros(2, dtype=_pt(name)).type() == \
        torch.zeros(2, dtype=_th(name)).type().replace("torch", "ptcore")
