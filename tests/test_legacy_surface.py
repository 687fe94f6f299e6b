"""Torch's legacy surface: FloatTensor ... types, layout/memory_format, constants, removed
functions (lstsq, solve, ...), TypedStorage / FloatStorage ..., Tensor.storage, set_,
storage_type and the deprecated out-of-place resize / resize_as; compared with torch 2.13."""
import math
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
          "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


def test_constants():
    for name in ("inf", "nan", "pi", "e"):
        a, b = getattr(ptcore, name), getattr(torch, name)
        assert type(a) is type(b) and (a == b or (math.isnan(a) and math.isnan(b)))
    assert ptcore.newaxis is torch.newaxis is None
    x = ptcore.arange(3.)
    assert tuple(x[ptcore.newaxis].shape) == (1, 3)


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types(name):
    P, T = getattr(ptcore, name), getattr(torch, name)
    assert str(P.dtype) == str(T.dtype).replace("torch", "ptcore")
    assert tuple(P(2, 3).shape) == tuple(T(2, 3).shape)
    assert P(2, 3).dtype is P.dtype
    assert tuple(P().shape) == tuple(T().shape) == (0,)
    assert tuple(P(ptcore.Size([4])).shape) == (4,)
    data = [1, 0, 1]
    np.testing.assert_array_equal(P(data).float().numpy(), T(data).float().numpy())
    assert isinstance(ptcore.zeros(2, dtype=P.dtype), P)
    other = ptcore.float64 if P.dtype is not ptcore.float64 else ptcore.float32
    assert not isinstance(ptcore.zeros(2, dtype=other), P)
    assert not isinstance(ptcore.zeros(2, dtype=P.dtype), int)
    # x.type(ptcore.LongTensor) converts as torch's x.type(torch.LongTensor)
    src = ptcore.tensor([1.5, -2.0])
    assert src.type(P).dtype is P.dtype
    assert str(torch.tensor([1.5, -2.0]).type(T).dtype).replace("torch", "ptcore") == str(P.dtype)
    assert not P.is_cuda and not P.is_sparse


def test_legacy_constructor_errors():
    with pytest.raises(TypeError):
        torch.FloatTensor(2, "a")
    with pytest.raises(TypeError):
        ptcore.FloatTensor(2, "a")
    with pytest.raises(TypeError):
        ptcore.FloatTensor(ptcore.zeros(2, dtype=ptcore.int64))
    with pytest.raises(RuntimeError):
        torch.FloatTensor(2, device="meta")
    with pytest.raises(RuntimeError, match="cpu"):
        ptcore.FloatTensor(2, device="meta")
    t = ptcore.zeros(3)
    assert ptcore.FloatTensor(t).data_ptr() == t.data_ptr()


def test_layout_and_memory_format_types():
    assert isinstance(ptcore.strided, ptcore.layout)
    assert isinstance(torch.strided, torch.layout)
    for fmt in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        assert isinstance(getattr(ptcore, fmt), ptcore.memory_format)
        assert isinstance(getattr(torch, fmt), torch.memory_format)
    assert not isinstance(ptcore.strided, ptcore.memory_format)
    assert not isinstance(ptcore.float32, ptcore.layout)
    with pytest.raises(TypeError):
        ptcore.layout()


@pytest.mark.parametrize("name, args", [("lstsq", 2), ("solve", 2), ("symeig", 1), ("eig", 1),
                                        ("matrix_rank", 1)])
def test_removed_functions_raise_as_torch(name, args):
    a = [torch.eye(3)] * args
    with pytest.raises(RuntimeError) as te:
        getattr(torch, name)(*a)
    p = [ptcore.eye(3)] * args
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed") as pe:
        getattr(ptcore, name)(*p)
    assert "linalg" in str(pe.value) and "linalg" in str(te.value)
    if hasattr(torch.Tensor, name):
        with pytest.raises(RuntimeError, match="removed"):
            getattr(ptcore.eye(3), name)(*p[1:])


# -- storages --------------------------------------------------------------------------------

def test_tensor_storage_is_typed_and_shared():
    x, tx = ptcore.arange(6.), torch.arange(6.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, ts = x.storage(), tx.storage()
    assert isinstance(s, ptcore.TypedStorage) and isinstance(s, ptcore.FloatStorage)
    assert not isinstance(s, ptcore.DoubleStorage)
    assert isinstance(ts, torch.FloatStorage)
    assert s.dtype is ptcore.float32 and s.size() == len(s) == ts.size() == 6
    assert s.nbytes() == ts.nbytes() and s.element_size() == ts.element_size()
    assert s.tolist() == ts.tolist() and s[2] == ts[2] and s[-1] == ts[-1]
    assert s.data_ptr() == x.data_ptr()
    assert s.untyped() is x.untyped_storage()
    s[0] = 5.0
    assert x[0].item() == 5.0
    assert x.storage_type() is ptcore.FloatStorage and tx.storage_type() is torch.FloatStorage
    assert ptcore.zeros(1, dtype=ptcore.int64).storage_type() is ptcore.LongStorage
    assert ptcore.is_storage(s) and torch.is_storage(ts)
    with pytest.raises(RuntimeError, match="slices"):
        s[1:3]
    with pytest.raises(IndexError):
        s[6]
    assert repr(s).endswith("[ptcore.storage.TypedStorage(dtype=ptcore.float32, device=cpu) of size 6]")


def test_storage_warns_like_torch():
    import ptcore.storage as ts
    ts._WARNED = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ptcore.zeros(2).storage()
        ptcore.zeros(2).storage()
    msgs = [str(m.message) for m in w if "TypedStorage is deprecated" in str(m.message)]
    assert len(msgs) == 1


def test_legacy_storage_constructors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ptcore.FloatStorage(3).size() == torch.FloatStorage(3).size() == 3
        assert ptcore.LongStorage([1, 2]).tolist() == torch.LongStorage([1, 2]).tolist()
        assert ptcore.FloatStorage([1, 2]).dtype is ptcore.float32
        s = ptcore.DoubleStorage(4).fill_(2.5)
        assert s.tolist() == [2.5] * 4
        assert s.clone().tolist() == [2.5] * 4 and s.clone().data_ptr() != s.data_ptr()


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(ptcore), fn(torch)


@pytest.mark.parametrize("case", [
    lambda m, x: m.empty(0).set_(x),
    lambda m, x: m.empty(0).set_(x.untyped_storage(), 2, (2,)),
    lambda m, x: m.empty(0).set_(x.untyped_storage(), 1, (2, 2), (1, 2)),
    lambda m, x: m.empty(0).set_(x.storage(), 1, (2, 2), (1, 2)),
    lambda m, x: m.empty(0).set_(x.storage()),
    lambda m, x: m.empty(0).set_(x.untyped_storage()),
    lambda m, x: m.empty(0).set_(x, 3, (3,), (1,)),
    lambda m, x: m.zeros(4).set_(),
])
def test_set_matches_torch(case):
    p, t = _both(lambda m: case(m, m.arange(6.)))
    assert tuple(p.shape) == tuple(t.shape) and tuple(p.stride()) == tuple(t.stride())
    assert p.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(p.numpy(), t.numpy())


def test_set_shares_memory_and_errors():
    x = ptcore.arange(6.)
    y = ptcore.empty(0).set_(x)
    assert y.is_set_to(x) and y.data_ptr() == x.data_ptr()
    y[0] = 7.0
    assert x[0].item() == 7.0
    with pytest.raises(RuntimeError) as te:
        torch.empty(0, dtype=torch.int64).set_(torch.arange(6.))
    with pytest.raises(RuntimeError) as pe:
        ptcore.empty(0, dtype=ptcore.int64).set_(x)
    assert str(pe.value) == str(te.value)       # "Could not set tensor of type float to ..."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            torch.empty(0, dtype=torch.int64).set_(torch.arange(6.).storage())
        with pytest.raises(RuntimeError, match="dtype"):
            ptcore.empty(0, dtype=ptcore.int64).set_(x.storage())
    with pytest.raises(RuntimeError):
        torch.zeros(2, requires_grad=True).set_(torch.arange(6.))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ptcore.zeros(2, requires_grad=True).set_(x)
    with ptcore.no_grad():
        leaf = ptcore.zeros(2, requires_grad=True).set_(x)
    assert tuple(leaf.shape) == (6,)
    if hasattr(ptcore._tensor, "_set_storage_impl"):  # the C setter grows storage as torch
        grown = ptcore.empty(0).set_(ptcore.arange(6.).untyped_storage(), 4, (3,))
        assert tuple(grown.shape) == (3,) and grown.storage_offset() == 4
    else:
        with pytest.raises(RuntimeError, match="do not fit"):
            ptcore.empty(0).set_(x.untyped_storage(), 4, (3,))
    with pytest.raises(TypeError):
        ptcore.empty(0).set_([1, 2])


def test_out_of_place_resize():
    for m in (ptcore, torch):
        x = m.arange(6., requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        assert tuple(y.shape) == (2, 3)
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = x.resize_as(m.zeros(3, 2))
        assert tuple(z.shape) == (3, 2)
        (y * m.arange(6.).reshape(2, 3)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy() if m is ptcore else x.grad.numpy(),
                                      np.arange(6.))
        with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="6 elements"):
            x.resize(4)


def _gen():
    yield 1
    yield 2


@pytest.mark.parametrize("make", [
    "range(3)", "range(0)", "range(1, 7, 2)", "(2, 3)", "[range(2), range(2)]", "np.array([1, 2])",
    "np.array(3.5)", "bytearray(b'ab')", "memoryview(b'ab')", "np.int64(3)",
    "np.float32(3.5)", "_gen()", "iter([1, 2])", "{1: 2}", "{1, 2}", "'ab'", "b'ab'", "3.5",
    "True", "None", "(x for x in range(3))"])
@pytest.mark.parametrize("name", ["LongTensor", "FloatTensor", "BoolTensor", "HalfTensor"])
def test_legacy_constructor_data(name, make):
    """The legacy constructors take any sequence as data (pygcn's LongTensor(range(n)),
    NumPy arrays, bytearray), an integer (NumPy's too) as a size, and refuse other
    iterables, str/bytes and numbers that are not sizes with TypeError."""
    got = []
    for L in (torch, ptcore):
        try:
            r = getattr(L, name)(eval(make))
            got.append((str(r.dtype).split(".")[-1], tuple(r.shape),
                        r.tolist() if "(" not in make or "range" in make or "array" in make
                        or "bytearray" in make or "memoryview" in make else None))
        except TypeError as e:
            got.append((TypeError, str(e)))
    assert got[1] == got[0]


def test_cuda_legacy_types():
    torch = pytest.importorskip("torch")
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                 "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"):
        p, t = getattr(ptcore.cuda, name), getattr(torch.cuda, name)
        assert repr(p) == repr(t).replace("torch", "ptcore")
        assert p.is_cuda and not getattr(ptcore, name).is_cuda
        assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert not isinstance(ptcore.ones(1, dtype=p.dtype), p)     # a CPU tensor
    if not ptcore.cuda.is_available():
        with pytest.raises(TypeError, match="not available"):
            ptcore.cuda.FloatTensor(2)


@pytest.mark.parametrize("arg", ["3.5", "2.0", "True", "np.float32(1)", "None", "'ab'", "{1: 2}"])
def test_tensor_constructor_refuses_non_sequences(arg):
    """``Tensor(3.5)`` is not a sequence: torch raises TypeError (ints are sizes)."""
    with pytest.raises(TypeError) as te:
        torch.Tensor(eval(arg))
    with pytest.raises(type(te.value)):
        ptcore.Tensor(eval(arg))


def test_tensor_constructor_takes_sequences():
    for data in ([1, 2], (3.5,), range(3), np.arange(4.0), bytearray(b"\x01\x02")):
        np.testing.assert_array_equal(ptcore.Tensor(data).numpy(), torch.Tensor(data).numpy())
        assert ptcore.Tensor(data).dtype == ptcore.float32
