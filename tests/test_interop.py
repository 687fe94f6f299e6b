"""The Python protocols of tensors (item, tolist, len, iteration, bool/int/
float/complex/index conversions, hashing, pickling, deepcopy, repr) and the
data-exchange protocols (numpy(), __array__, the buffer protocol, DLPack with
NumPy and PyTorch, zero-copy both ways)."""
import copy
import gc
import operator
import pickle
import sys

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]
NUMPY_OK = [d for d in ALL if d != "bfloat16"]


def name_of(dt):
    return str(dt).split(".", 1)[1]


def outcome(fn, lib):
    """('ok', value) or ('err', exception class) for fn(lib)."""
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001
        return "err", type(e)


def check_like_torch(fn):
    """fn(ptcore) returns what fn(torch) returns (same type and value), or
    raises an instance of the exception class torch raises."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kind_t, val_t = outcome(fn, torch)
    if kind_t == "err":
        with pytest.raises(val_t):
            fn(ptcore)
        return
    val_p = fn(ptcore)
    assert type(val_p) is type(val_t), (val_p, val_t)
    if isinstance(val_t, float) and val_t != val_t:
        assert val_p != val_p
    else:
        assert val_p == val_t


# ---------------------------------------------------------------------------
# item / tolist / len / iteration
# ---------------------------------------------------------------------------

ITEM_CASES = {
    "int": lambda L: L.tensor(3).item(),
    "float": lambda L: L.tensor(2.5).item(),
    "bool": lambda L: L.tensor(True).item(),
    "complex": lambda L: L.tensor(1 - 2j).item(),
    "uint8": lambda L: L.tensor(200, dtype=L.uint8).item(),
    "int8": lambda L: L.tensor(-100, dtype=L.int8).item(),
    "float16": lambda L: L.tensor(1.1, dtype=L.float16).item(),
    "bfloat16": lambda L: L.tensor(1.1, dtype=L.bfloat16).item(),
    "complex64": lambda L: L.tensor(1.1 + 2j, dtype=L.complex64).item(),
    "one_element_1d": lambda L: L.tensor([2.5]).item(),
    "one_element_3d": lambda L: L.tensor([[[7]]]).item(),
    "view": lambda L: L.arange(10).view(2, 5)[1, 3].item(),
    "int64_max": lambda L: L.tensor(2 ** 63 - 1).item(),
    "nan": lambda L: L.tensor(float("nan")).item(),
    "two_elements": lambda L: L.tensor([1, 2]).item(),
    "empty": lambda L: L.tensor([]).item(),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(ITEM_CASES))
def test_item_matches_torch(key):
    check_like_torch(ITEM_CASES[key])


def test_item_values():
    assert ptcore.tensor(3).item() == 3 and type(ptcore.tensor(3).item()) is int
    assert type(ptcore.tensor(2.5).item()) is float
    assert type(ptcore.tensor(True).item()) is bool
    assert ptcore.tensor(1 - 2j).item() == 1 - 2j
    with pytest.raises(RuntimeError):
        ptcore.tensor([1, 2]).item()


TOLIST_CASES = {
    "0d": lambda L: L.tensor(3).tolist(),
    "1d": lambda L: L.tensor([1.5, 2.5]).tolist(),
    "2d_bool": lambda L: L.tensor([[True, False], [False, True]]).tolist(),
    "float16": lambda L: L.tensor([1.1, -2.2], dtype=L.float16).tolist(),
    "bfloat16": lambda L: L.tensor([1.1, -2.2], dtype=L.bfloat16).tolist(),
    "complex64": lambda L: L.tensor([1.1 + 2j], dtype=L.complex64).tolist(),
    "uint8": lambda L: L.tensor([0, 255], dtype=L.uint8).tolist(),
    "transposed": lambda L: L.arange(6).view(2, 3).t().tolist(),
    "strided": lambda L: L.arange(24).view(2, 3, 4)[:, ::2, 1::2].tolist(),
    "expanded": lambda L: L.tensor([1, 2]).expand(3, 2).tolist(),
    "empty": lambda L: L.zeros(2, 0, 3).tolist(),
    "empty_1d": lambda L: L.zeros(0).tolist(),
    "empty_trailing": lambda L: L.zeros(2, 3, 0).tolist(),
    "0d_bfloat16": lambda L: L.tensor(1.1, dtype=L.bfloat16).tolist(),
    "0d_bool": lambda L: L.tensor(True).tolist(),
    "0d_complex128": lambda L: L.tensor(1.5 - 2j, dtype=L.complex128).tolist(),
    "0d_view": lambda L: L.arange(6.0).view(2, 3)[1, 2].tolist(),
    "bool_transposed": lambda L: (L.arange(12).view(3, 4) % 3 == 0).t().tolist(),
    "bfloat16_strided": lambda L: L.linspace(-3, 3, 24).to(L.bfloat16).view(4, 6)[::2, 1::2]
    .tolist(),
    "float16_transposed": lambda L: L.linspace(-3, 3, 12).to(L.float16).view(3, 4).t().tolist(),
    "float32_nonfinite": lambda L: L.tensor([float("inf"), -float("inf"), 1e-40, 0.1])
    .tolist(),
    "float64_strided": lambda L: L.linspace(-1, 1, 30, dtype=L.float64).view(5, 6)[1:, ::3]
    .tolist(),
    "complex64_transposed": lambda L: L.complex(L.arange(6.0), -L.arange(6.0)).view(2, 3).t()
    .tolist(),
    "complex128_strided": lambda L: L.complex(
        L.arange(8.0, dtype=L.float64), L.ones(8, dtype=L.float64)).view(2, 4)[:, ::2].tolist(),
    "int64_extremes": lambda L: L.tensor([2 ** 63 - 1, -2 ** 63, 0]).tolist(),
    "int8_negative": lambda L: L.tensor([[-128, 127], [-1, 5]], dtype=L.int8).t().tolist(),
    "int16_int32": lambda L: [L.tensor([-3, 30000], dtype=L.int16).tolist(),
                              L.tensor([-2 ** 31, 7], dtype=L.int32).tolist()],
    "uint_wide": lambda L: [L.tensor([65535], dtype=L.uint16).tolist(),
                            L.tensor([2 ** 32 - 1], dtype=L.uint32).tolist(),
                            L.tensor([2 ** 64 - 1], dtype=L.uint64).tolist()],
    "3d_permuted": lambda L: L.arange(24.0).view(2, 3, 4).permute(2, 0, 1)[:, 1:, ::2].tolist(),
    "expanded_0_stride_rows": lambda L: L.tensor([[1.5], [2.5]]).expand(2, 3).tolist(),
    "complex32": lambda L: L.tensor([[1.5 - 2j, 0.1j]]).to(L.complex32).t().tolist(),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(TOLIST_CASES))
def test_tolist_matches_torch(key):
    p, t = TOLIST_CASES[key](ptcore), TOLIST_CASES[key](torch)
    assert p == t
    assert repr(p) == repr(t)    # same Python types all the way down


def test_len_and_iteration():
    t = ptcore.arange(6).view(3, 2)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3
    assert all(isinstance(r, ptcore.Tensor) for r in rows)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    rows[1][0] = 99                      # rows are views
    assert t.tolist()[1][0] == 99
    assert len(ptcore.zeros(0, 4)) == 0
    assert list(ptcore.zeros(0, 4)) == []
    assert [x.item() for x in ptcore.tensor([1.5, 2.5])] == [1.5, 2.5]
    with pytest.raises(TypeError):
        len(ptcore.tensor(3))
    with pytest.raises(TypeError):
        iter(ptcore.tensor(3))
    if torch is not None:
        with pytest.raises(TypeError):
            len(torch.tensor(3))
        with pytest.raises(TypeError):
            iter(torch.tensor(3))


# ---------------------------------------------------------------------------
# bool / int / float / complex / operator.index
# ---------------------------------------------------------------------------

CONVERSIONS = {
    "bool_true": lambda L: bool(L.tensor(2)),
    "bool_false": lambda L: bool(L.tensor([0.0])),
    "bool_nan": lambda L: bool(L.tensor(float("nan"))),
    "bool_complex0": lambda L: bool(L.tensor(0j)),
    "bool_complex_imag": lambda L: bool(L.tensor(1j)),
    "bool_multi": lambda L: bool(L.tensor([1, 2])),
    "bool_empty": lambda L: bool(L.tensor([])),
    "int_from_float": lambda L: int(L.tensor(-2.7)),
    "int_from_bool": lambda L: int(L.tensor(True)),
    "int_1d": lambda L: int(L.tensor([7])),
    "int_multi": lambda L: int(L.tensor([1, 2])),
    "int_complex": lambda L: int(L.tensor(1 + 2j)),
    "int_nan": lambda L: int(L.tensor(float("nan"))),
    "int_inf": lambda L: int(L.tensor(float("inf"))),
    "int_empty": lambda L: int(L.tensor([])),
    "float_from_int": lambda L: float(L.tensor(3)),
    "float_from_f16": lambda L: float(L.tensor(0.1, dtype=L.float16)),
    "float_complex": lambda L: float(L.tensor(1 + 2j)),
    "float_multi": lambda L: float(L.tensor([1.0, 2.0])),
    "complex_from_float": lambda L: complex(L.tensor(1.5)),
    "complex_from_int": lambda L: complex(L.tensor(2)),
    "complex_multi": lambda L: complex(L.tensor([1.0, 2.0])),
    "index_int": lambda L: operator.index(L.tensor(3)),
    "index_int8": lambda L: operator.index(L.tensor(-3, dtype=L.int8)),
    "index_1d": lambda L: operator.index(L.tensor([3])),
    "index_bool": lambda L: operator.index(L.tensor(True)),
    "index_float": lambda L: operator.index(L.tensor(3.0)),
    "index_multi": lambda L: operator.index(L.tensor([1, 2])),
    "list_subscript": lambda L: [10, 20, 30][L.tensor(1)],
    "slice_subscript": lambda L: list(range(10))[L.tensor(1):L.tensor(7):L.tensor(2)],
    "hex": lambda L: hex(L.tensor(255)),
    "range_arg": lambda L: list(range(L.tensor(3))),
    "format_0d": lambda L: f"{L.tensor(2.5):.3f}",
    "round_0d": lambda L: round(float(L.tensor(2.567)), 1),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(CONVERSIONS))
def test_scalar_conversions_match_torch(key):
    check_like_torch(CONVERSIONS[key])


def test_scalar_conversion_values():
    assert bool(ptcore.tensor([3])) is True
    assert int(ptcore.tensor(-2.7)) == -2
    assert float(ptcore.tensor(3)) == 3.0
    assert complex(ptcore.tensor(1.5)) == 1.5 + 0j
    assert operator.index(ptcore.tensor(5)) == 5
    with pytest.raises(RuntimeError):
        bool(ptcore.tensor([1, 2]))
    with pytest.raises(TypeError):
        operator.index(ptcore.tensor(3.0))
    with pytest.raises(ValueError):
        int(ptcore.tensor([1, 2]))


# ---------------------------------------------------------------------------
# hashing
# ---------------------------------------------------------------------------

def test_hash_is_identity_based():
    a = ptcore.zeros(3)
    b = ptcore.zeros(3)
    assert hash(a) == hash(a)
    assert hash(a) == id(a)
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    assert len({a, b, a}) == 2
    a.fill_(5.0)                       # mutation does not change the hash
    assert d[a] == "a"
    v = a[:]
    assert v not in d                  # a view is a different object
    if torch is not None:
        t = torch.zeros(3)
        assert hash(t) == id(t)


# ---------------------------------------------------------------------------
# numpy() and __array__
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", NUMPY_OK)
def test_numpy_is_zero_copy(dt):
    t = ptcore.zeros(2, 3, dtype=getattr(ptcore, dt))
    n = t.numpy()
    assert n.shape == (2, 3)
    assert n.ctypes.data == t.data_ptr()
    assert n.dtype == np.dtype(dt if dt != "bool" else np.bool_)
    n[1, 2] = 1
    assert t.tolist()[1][2] == 1
    t[0, 1] = 1
    assert n[0, 1] == 1


def test_numpy_of_views_keeps_strides_and_lifetime():
    base = ptcore.arange(12, dtype=ptcore.float64).view(3, 4)
    n = base[:, 1::2].numpy()
    assert n.strides == (32, 16)
    assert n.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    n2 = base.t().numpy()
    assert n2.strides == (8, 32)
    del base
    gc.collect()
    assert n.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    z = ptcore.tensor(2.5).numpy()
    assert z.shape == () and z == 2.5


@pytest.mark.parametrize("dt", NUMPY_OK)
def test_numpy_layouts_flags_and_lifetime(dt):
    # the array NumPy builds from the tensor's layout: dtype, strides,
    # flags, shared memory; it keeps the tensor alive and its storage
    # refuses resize_ while it lives
    base = ptcore.arange(24).view(2, 3, 4).to(getattr(ptcore, dt))
    isz = base.element_size()
    for t in (base, base[:, ::2, 1:], base.permute(2, 0, 1), base[1, 2], base[:, :0],
              base[:1, :1, :1].expand(2, 3, 4)):
        n = t.numpy()
        assert n.dtype == np.dtype(dt if dt != "bool" else np.bool_)
        assert n.shape == tuple(t.shape)
        assert n.strides == tuple(s * isz for s in t.stride())
        assert n.flags.writeable and n.flags.aligned
        assert n.flags.c_contiguous == t.is_contiguous()
        assert n.tolist() == t.tolist()
        if t.numel():
            assert n.ctypes.data == t.data_ptr()
    e = ptcore.zeros(0, 3, dtype=getattr(ptcore, dt)).numpy()
    assert e.shape == (0, 3) and e.size == 0
    t = ptcore.arange(5).to(getattr(ptcore, dt))
    n = t.numpy()
    with pytest.raises(RuntimeError):
        t.resize_(100)
    del t
    gc.collect()
    assert n.tolist() == ptcore.arange(5).to(getattr(ptcore, dt)).tolist()
    u = ptcore.zeros(3, dtype=getattr(ptcore, dt))
    m = u.numpy()
    del m
    gc.collect()
    u.resize_(10)
    assert u.shape == (10,)


NUMPY_CASES = {
    "requires_grad": lambda L: L.ones(2, requires_grad=True).numpy().tolist(),
    "requires_grad_force": lambda L: L.ones(2, requires_grad=True).numpy(force=True).tolist(),
    "bfloat16": lambda L: L.ones(2, dtype=L.bfloat16).numpy().tolist(),
    "asarray_requires_grad": lambda L: np.asarray(L.ones(2, requires_grad=True)).tolist(),
    "asarray_bfloat16": lambda L: np.asarray(L.ones(2, dtype=L.bfloat16)).tolist(),
    "asarray_dtype": lambda L: repr(np.asarray(L.ones(2), dtype=np.float64)),
    "array_copy": lambda L: repr(np.array(L.arange(3))),
    "asarray_0d": lambda L: repr(np.asarray(L.tensor(1.5))),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(NUMPY_CASES))
def test_numpy_conversions_match_torch(key):
    check_like_torch(NUMPY_CASES[key])


def test_np_asarray_shares_memory_and_np_array_copies():
    t = ptcore.arange(4, dtype=ptcore.float32)
    a = np.asarray(t)
    assert a.dtype == np.float32
    a[0] = 10.0
    assert t.tolist()[0] == 10.0
    c = np.array(t)
    c[1] = -1.0
    assert t.tolist()[1] == 1.0
    d = np.asarray(t, dtype=np.float64)
    assert d.dtype == np.float64 and d.tolist() == [10.0, 1.0, 2.0, 3.0]
    # NumPy ufuncs accept tensors through __array__
    assert float(np.sum(np.asarray(t))) == 16.0


@pytest.mark.parametrize("dt", NUMPY_OK)
def test_np_asarray_gives_the_canonical_numpy_dtype(dt):
    # as torch: np.asarray(t).dtype.type is exactly t.numpy().dtype.type
    # (e.g. numpy.int64, not the equal-comparing numpy.longlong)
    t = ptcore.zeros(2, dtype=getattr(ptcore, dt))
    assert np.asarray(t).dtype.type is t.numpy().dtype.type
    assert np.array(t).dtype.type is t.numpy().dtype.type
    if torch is not None:
        assert np.asarray(t).dtype.type is np.asarray(torch.zeros(2, dtype=getattr(torch, dt))).dtype.type


# ---------------------------------------------------------------------------
# buffer protocol
# ---------------------------------------------------------------------------

# int64 uses NumPy's canonical char ('l' on LP64, 'q' where long is 32-bit), so that
# np.asarray(t) (which reads the buffer) gives numpy.int64 exactly, as torch's __array__ does
@pytest.mark.parametrize("dt,fmt", [("bool", "?"), ("uint8", "B"), ("int8", "b"), ("int16", "h"),
                                    ("int32", "i"), ("int64", np.dtype(np.int64).char), ("float16", "e"),
                                    ("float32", "f"), ("float64", "d"), ("complex64", "Zf"),
                                    ("complex128", "Zd")])
def test_memoryview_format(dt, fmt):
    t = ptcore.zeros(2, 3, dtype=getattr(ptcore, dt))
    m = memoryview(t)
    assert m.format == fmt
    assert m.itemsize == getattr(ptcore, dt).itemsize
    assert m.shape == (2, 3)
    assert m.strides == (3 * m.itemsize, m.itemsize)
    assert m.ndim == 2
    assert not m.readonly
    assert m.nbytes == 6 * m.itemsize
    # NumPy reads the same memory through the buffer
    n = np.asarray(m)
    assert n.ctypes.data == t.data_ptr()


def test_memoryview_strided_and_writes_through():
    t = ptcore.arange(12, dtype=ptcore.int32).view(3, 4)
    v = t[:, ::2]
    m = memoryview(v)
    assert m.strides == (16, 8)
    assert not m.c_contiguous
    assert m.tolist() == [[0, 2], [4, 6], [8, 10]]
    m[1, 1] = -7
    assert t.tolist()[1][2] == -7
    m0 = memoryview(ptcore.tensor(3.5, dtype=ptcore.float64))
    assert m0.shape == () and m0.format == "d"
    assert struct_unpack(m0) == 3.5
    assert bytes(memoryview(ptcore.tensor([1, 2], dtype=ptcore.uint8))) == b"\x01\x02"


def struct_unpack(m):
    import struct
    return struct.unpack(m.format, m.tobytes())[0]


def test_memoryview_bfloat16_raises_buffer_error():
    with pytest.raises(BufferError):
        memoryview(ptcore.zeros(2, dtype=ptcore.bfloat16))


def test_memoryview_keeps_tensor_alive():
    t = ptcore.arange(1000, dtype=ptcore.int64)
    m = memoryview(t)
    del t
    gc.collect()
    assert m[999] == 999
    m.release()


# ---------------------------------------------------------------------------
# DLPack
# ---------------------------------------------------------------------------

def test_dlpack_device():
    dev = ptcore.zeros(2).__dlpack_device__()
    assert tuple(dev) == (1, 0)
    if torch is not None:
        assert tuple(torch.zeros(2).__dlpack_device__()) == tuple(dev)


@pytest.mark.parametrize("dt", NUMPY_OK)
def test_numpy_from_dlpack_is_zero_copy(dt):
    t = ptcore.zeros(2, 3, dtype=getattr(ptcore, dt))
    n = np.from_dlpack(t)
    assert n.shape == (2, 3)
    assert n.ctypes.data == t.data_ptr()
    n[1, 1] = 1
    assert t.tolist()[1][1] == 1
    t[0, 2] = 1
    assert n[0, 2] == 1


@pytest.mark.parametrize("dt", NUMPY_OK)
def test_ptcore_from_dlpack_of_numpy_is_zero_copy(dt):
    a = np.zeros((3, 2), dtype=dt if dt != "bool" else np.bool_)
    t = ptcore.from_dlpack(a)
    assert t.dtype is getattr(ptcore, dt)
    assert t.shape == (3, 2)
    assert t.data_ptr() == a.ctypes.data
    a[2, 1] = 1
    assert t.tolist()[2][1] == 1
    t[0, 0] = 1
    assert a[0, 0] == 1


def test_dlpack_strides_and_special_shapes():
    base = ptcore.arange(12, dtype=ptcore.float64).view(3, 4)
    assert np.from_dlpack(base[:, 1::2]).strides == (32, 16)
    assert np.from_dlpack(base[:, 1::2]).tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    assert np.from_dlpack(ptcore.tensor(3.5)).shape == ()
    assert np.from_dlpack(ptcore.zeros(0, 3)).shape == (0, 3)
    b = np.broadcast_to(np.arange(3.0), (2, 3))
    assert ptcore.from_dlpack(b).stride() == (0, 1)
    assert ptcore.from_dlpack(np.arange(12.0).reshape(3, 4)[:, ::2]).stride() == (4, 2)


def test_dlpack_lifetime():
    t = ptcore.arange(1000, dtype=ptcore.int64)
    n = np.from_dlpack(t)
    del t
    gc.collect()
    assert n[999] == 999
    a = np.arange(1000, dtype=np.int64)
    p = ptcore.from_dlpack(a)
    del a
    gc.collect()
    assert p.tolist()[999] == 999


def test_dlpack_capsule_and_errors():
    t = ptcore.arange(3)
    cap = t.__dlpack__()
    assert type(cap).__name__ == "PyCapsule"
    assert ptcore.from_dlpack(cap).tolist() == [0, 1, 2]
    with pytest.raises(Exception):
        ptcore.from_dlpack([1, 2, 3])
    with pytest.raises(BufferError):
        ptcore.from_dlpack(np.arange(4)[::-1])


@needs_torch
@pytest.mark.parametrize("dt", ALL)
def test_torch_from_dlpack_of_ptcore_is_zero_copy(dt):
    p = ptcore.zeros(2, 3, dtype=getattr(ptcore, dt))
    t = torch.from_dlpack(p)
    assert t.dtype is getattr(torch, dt)
    assert tuple(t.shape) == (2, 3)
    assert t.data_ptr() == p.data_ptr()
    t[1, 2] = 1
    assert p.tolist()[1][2] == 1
    p[0, 0] = 1
    assert t[0, 0].item() == 1


@needs_torch
@pytest.mark.parametrize("dt", ALL)
def test_ptcore_from_dlpack_of_torch_is_zero_copy(dt):
    t = torch.zeros(3, 2, dtype=getattr(torch, dt))
    p = ptcore.from_dlpack(t)
    assert p.dtype is getattr(ptcore, dt)
    assert p.shape == (3, 2)
    assert p.data_ptr() == t.data_ptr()
    t[2, 1] = 1
    assert p.tolist()[2][1] == 1
    p[0, 1] = 1
    assert t[0, 1].item() == 1


@needs_torch
def test_dlpack_with_torch_views_and_lifetime():
    p = ptcore.arange(12, dtype=ptcore.float32).view(3, 4)[:, 1::2]
    t = torch.from_dlpack(p)
    assert t.stride() == (4, 2)
    assert t.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    del p
    gc.collect()
    assert t.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    src = torch.arange(12, dtype=torch.float64).view(3, 4).t()
    q = ptcore.from_dlpack(src)
    assert q.stride() == (1, 4)
    assert q.tolist() == src.tolist()
    del src
    gc.collect()
    assert q.tolist()[3] == [3.0, 7.0, 11.0]
    # torch accepts a ptcore capsule too
    assert torch.from_dlpack(ptcore.arange(3).__dlpack__()).tolist() == [0, 1, 2]


def test_dlpack_requires_grad_raises_buffer_error_like_torch():
    if torch is not None:
        with pytest.raises(BufferError):
            torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError):
        ptcore.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError):
        np.from_dlpack(ptcore.ones(2, requires_grad=True))
    # detached is fine
    assert np.from_dlpack(ptcore.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------
# pickle / deepcopy
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)], ids=str)
def test_pickle_round_trip(dt, shape):
    t = ptcore.arange(int(np.prod(shape)), dtype=ptcore.float64).view(shape).to(getattr(ptcore, dt))
    for proto in (2, pickle.HIGHEST_PROTOCOL):
        r = pickle.loads(pickle.dumps(t, protocol=proto))
        assert type(r) is type(t)
        assert r.dtype is t.dtype and r.shape == t.shape
        assert r.tolist() == t.tolist()
        assert r.data_ptr() != t.data_ptr() or t.numel() == 0


def test_pickle_keeps_requires_grad_and_is_by_value():
    t = ptcore.tensor([1.0, 2.0], requires_grad=True)
    r = pickle.loads(pickle.dumps(t))
    assert r.requires_grad and r.is_leaf
    assert r.tolist() == [1.0, 2.0]
    r.detach().fill_(0.0)
    assert t.tolist() == [1.0, 2.0]


def test_pickle_of_view_holds_only_its_values():
    big = ptcore.arange(100_000, dtype=ptcore.float64)
    view = big.view(1000, 100)[10:13, 5:80:7]
    data = pickle.dumps(view)
    assert len(data) < 2000                      # not the 800 kB storage
    r = pickle.loads(data)
    assert r.shape == view.shape
    assert r.tolist() == view.tolist()
    assert r.is_contiguous()


def test_pickle_of_nested_structures_and_transposed():
    t = ptcore.arange(6, dtype=ptcore.int16).view(2, 3).t()
    obj = {"a": t, "b": [t, 3]}
    r = pickle.loads(pickle.dumps(obj))
    assert r["a"].tolist() == [[0, 3], [1, 4], [2, 5]]
    assert r["a"].dtype is ptcore.int16
    assert r["b"][0].tolist() == r["a"].tolist()


def test_pickle_rejects_corrupt_data():
    t = ptcore.arange(4, dtype=ptcore.int32)
    fn, args = t.__reduce_ex__(2)[:2]
    bad = (args[0][:-1],) + tuple(args[1:])
    with pytest.raises(ValueError):
        fn(*bad)


def test_deepcopy():
    t = ptcore.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    c = copy.deepcopy(t)
    assert c is not t
    assert c.data_ptr() != t.data_ptr()
    assert c.tolist() == t.tolist() and c.requires_grad and c.dtype is t.dtype
    c.detach().fill_(0.0)
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    v = ptcore.arange(6.0).view(2, 3).t()
    cv = copy.deepcopy(v)
    assert cv.stride() == v.stride() == (1, 3)
    memo_obj = [t, t]
    r = copy.deepcopy(memo_obj)
    assert r[0] is r[1]
    s = copy.copy(t)
    assert s.tolist() == t.tolist()


@needs_torch
def test_deepcopy_preserves_view_relationships_like_torch():
    def run(L):
        a = L.zeros(4)
        a2, b2 = copy.deepcopy([a, a[1:]])
        a2[1] = 5.0
        return b2[0].item()
    assert run(ptcore) == run(torch) == 5.0


# ---------------------------------------------------------------------------
# repr (smoke; printing is tested in detail in test_tensor_str.py)
# ---------------------------------------------------------------------------

@needs_torch
def test_repr_smoke_matches_torch():
    for make in (lambda L: L.tensor([[1.5, 2.0], [3.0, -4.25]]),
                 lambda L: L.arange(3, dtype=L.int32),
                 lambda L: L.tensor(True)):
        assert repr(make(ptcore)) == repr(make(torch)).replace("torch.", "ptcore.")
    assert str(ptcore.tensor([1, 2])) == "tensor([1, 2])"


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_ptcore_leaves_the_shared_openmp_thread_count_alone():
    """ptcore passes its thread count to each parallel loop; importing it or
    calling set_num_threads must not change torch's (they share libgomp)."""
    import os
    import subprocess
    parent = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    code = ("import torch; torch.set_num_threads(2); import ptcore; "
            "ptcore.set_num_threads(1); assert torch.get_num_threads() == 2, "
            "torch.get_num_threads(); ptcore.set_num_threads(3); "
            "assert torch.get_num_threads() == 2; print('ok')")
    env = dict(os.environ, PYTHONPATH=parent)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


# ---------------------------------------------------------------------------
# NumPy ufuncs and ndarray operands (__array_wrap__, as torch)
# ---------------------------------------------------------------------------

NDARRAY_OPERAND_CASES = {
    "t_plus_arr": lambda L: L.ones(2) + np.ones(2),
    "t_times_arr0d": lambda L: L.ones(2) * np.array(2.0),
    "int_t_plus_f32arr": lambda L: L.ones(2, dtype=L.int64) + np.ones(2, dtype=np.float32),
    "t_minus_arr": lambda L: L.ones(2) - np.arange(2),
    "t_div_arr": lambda L: L.ones(2) / np.arange(1.0, 3.0),
    "arr_div_t": lambda L: np.arange(1.0, 3.0) / L.full((2,), 4.0),
    "arr_div_int_t": lambda L: np.arange(1.0, 3.0) / L.full((2,), 4),
    "t_pow_arr": lambda L: L.full((2,), 2.0) ** np.array([1.0, 3.0]),
    "t_matmul_arr2d": lambda L: L.ones(2) @ np.ones((2, 2)),
    "t_eq_arr": lambda L: L.ones(2) == np.array([1.0, 0.0]),
    "arr_eq_t": lambda L: np.array([1.0, 0.0]) == L.ones(2),
    "int_t_eq_arr": lambda L: L.ones(2, dtype=L.int64) == np.array([1.0, 1.5]),
    "np_sin": lambda L: np.sin(L.tensor([0.0, 1.0])),
    "np_exp_f64": lambda L: np.exp(L.tensor([0.5], dtype=L.float64)),
    "np_sqrt_int": lambda L: np.sqrt(L.arange(3)),
    "np_isnan_is_uint8": lambda L: np.isnan(L.tensor([1.0, float("nan")])),
    "np_maximum": lambda L: np.maximum(L.tensor([1.0, -1.0]), np.zeros(2)),
    "np_add_scalar": lambda L: np.add(L.ones(2, dtype=L.int32), 1),
    "np_multiply_reduce": lambda L: np.multiply.reduce(L.tensor([2.0, 3.0])),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(NDARRAY_OPERAND_CASES))
def test_ndarray_operands_and_ufuncs_give_tensors_like_torch(key):
    import warnings
    fn = NDARRAY_OPERAND_CASES[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(torch)
    got = fn(ptcore)
    assert isinstance(want, torch.Tensor)
    assert isinstance(got, ptcore.Tensor), type(got)
    assert name_of(got.dtype) == name_of(want.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_ufunc_result_tensor_shares_the_result_memory():
    out = np.sin(ptcore.tensor([0.0, 1.0], dtype=ptcore.float64))
    assert isinstance(out, ptcore.Tensor)
    np.testing.assert_allclose(out.numpy(), np.sin([0.0, 1.0]))
    with pytest.raises(RuntimeError):
        # as torch: NumPy converts with __array__, refused for a grad tensor
        ptcore.ones(2, requires_grad=True) + np.ones(2)


def test_numpy_of_a_tensor_that_requires_grad_follows_grad_mode():
    """torch refuses only while grad mode is on: under no_grad (or in a
    custom Function's forward, which runs without it) the data goes to
    NumPy, as the extending-autograd docs' NumpySort does."""
    x = ptcore.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()
    with ptcore.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0, 1.0]
        assert np.asarray(x).tolist() == [1.0, 1.0, 1.0]

    class NumpySort(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = np.argsort(x.numpy())
            ctx.save_for_backward(ptcore.from_numpy(idx))
            return ptcore.from_numpy(x.numpy()[idx])

        @staticmethod
        def backward(ctx, g):
            (idx,) = ctx.saved_tensors
            out = ptcore.zeros_like(g)
            out[idx] = g
            return out

    x = ptcore.tensor([3.0, 1.0, 2.0], requires_grad=True)
    y = NumpySort.apply(x)
    assert y.tolist() == [1.0, 2.0, 3.0]
    (y * ptcore.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
