"""Tensor creation: tensor / as_tensor / asarray / from_numpy, the factories
(empty, zeros, ones, full, *_like, empty_strided), ranges (arange, linspace,
logspace), eye and the Tensor.new_* constructors.  Checked against PyTorch
(dtype, shape, values, error class) wherever torch has the same function."""
import array
import collections
import fractions
import warnings

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

try:
    from hypothesis import given, settings, strategies as st
except ImportError:  # pragma: no cover
    given = None


def name_of(dt):
    return str(dt).split(".", 1)[1]


def values(t):
    """NumPy copy of a ptcore or torch tensor's values (bfloat16 via float32)."""
    if name_of(t.dtype) == "bfloat16":
        t = t.float()
    return np.array(t.detach().numpy() if hasattr(t, "detach") else t.numpy(), copy=True)


def assert_same(p, t, *, rtol=0.0, atol=0.0):
    """ptcore tensor ``p`` has torch tensor ``t``'s dtype, shape and values."""
    assert name_of(p.dtype) == name_of(t.dtype), (p.dtype, t.dtype)
    assert tuple(p.shape) == tuple(t.shape)
    if rtol == 0.0 and atol == 0.0:
        np.testing.assert_array_equal(values(p), values(t))
    else:
        np.testing.assert_allclose(values(p), values(t), rtol=rtol, atol=atol)


def both(fn):
    """Run ``fn(lib)`` on torch and ptcore; return (ptcore_result, torch_result)."""
    return fn(ptcore), fn(torch)


def same_error(fn):
    """``fn(lib)`` raises the same exception class on ptcore as on torch."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as pe:
        fn(ptcore)
    assert isinstance(pe.value, te.type), (
        f"torch raised {te.type.__name__}({te.value}), ptcore raised "
        f"{type(pe.value).__name__}({pe.value})")


# ---------------------------------------------------------------------------
# tensor(): dtype inference and values
# ---------------------------------------------------------------------------

DATA = {
    "int_list": lambda L: [1, 2, 3],
    "float_list": lambda L: [1.0, 2.5, -3.0],
    "bool_list": lambda L: [True, False, True],
    "mixed_bool_int": lambda L: [True, 2],
    "mixed_int_float": lambda L: [1, 2.5],
    "mixed_int_complex": lambda L: [1, 2j],
    "mixed_float_complex": lambda L: [1.5, 2 + 1j],
    "nested": lambda L: [[1, 2], [3, 4], [5, 6]],
    "nested_tuples": lambda L: ((1.5, 2.0), (3.0, 4.0)),
    "deep": lambda L: [[[1], [2]], [[3], [4]]],
    "int_scalar": lambda L: 3,
    "float_scalar": lambda L: 3.5,
    "bool_scalar": lambda L: True,
    "complex_scalar": lambda L: 1 - 2j,
    "empty": lambda L: [],
    "empty_nested": lambda L: [[], []],
    "range": lambda L: range(4),
    "int64_extremes": lambda L: [2 ** 63 - 1, -2 ** 63],
    "special_floats": lambda L: [float("inf"), float("-inf"), -0.0],
    "np_float64_scalar": lambda L: np.float64(1.5),
    "np_int16_scalar": lambda L: np.int16(3),
    "np_bool_scalar": lambda L: np.bool_(True),
    "np_float32_array": lambda L: np.array([1.5, 2.5], dtype=np.float32),
    "np_float64_array": lambda L: np.array([[1.5, 2.5]], dtype=np.float64),
    "np_float16_array": lambda L: np.array([1.5, 2.5], dtype=np.float16),
    "np_int8_array": lambda L: np.array([-1, 2], dtype=np.int8),
    "np_uint8_array": lambda L: np.array([1, 255], dtype=np.uint8),
    "np_int32_array": lambda L: np.array([1, 2], dtype=np.int32),
    "np_bool_array": lambda L: np.array([True, False]),
    "np_complex128_array": lambda L: np.array([1 + 1j]),
    "np_0d_array": lambda L: np.array(7, dtype=np.int16),
    "np_noncontig_array": lambda L: np.arange(12.0).reshape(3, 4)[:, ::2],
    "list_of_np_float64_scalars": lambda L: [np.float64(1.0), np.float64(2.0)],
    "list_of_np_int32_scalars": lambda L: [np.int32(1), np.int32(2)],
    "list_of_np_int32_arrays": lambda L: [np.array([1, 2], dtype=np.int32),
                                          np.array([3, 4], dtype=np.int32)],
    "list_of_0d_int32_tensors": lambda L: [L.tensor(1, dtype=L.int32), L.tensor(2, dtype=L.int32)],
    "list_of_0d_float64_tensor_and_int": lambda L: [L.tensor(1.0, dtype=L.float64), 2],
    "list_of_1elem_tensors": lambda L: [L.tensor([1.0]), L.tensor([2.0])],
    "big_int_in_float_list": lambda L: [1.0, 2 ** 70],
}


@needs_torch
@pytest.mark.parametrize("key", sorted(DATA))
def test_tensor_inference_matches_torch(key):
    p, t = both(lambda L: L.tensor(DATA[key](L)))
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                   "bfloat16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("data", [[0, 1, 2], [0.0, 1.75, -1.75], [True, False]], ids=str)
def test_tensor_with_dtype_matches_torch(dtype, data):
    if dtype == "uint8" and data[-1] == -1.75:
        data = [0.0, 1.75, 2.25]   # negative float -> uint8 is undefined behaviour in C
    p, t = both(lambda L: L.tensor(data, dtype=getattr(L, dtype)))
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("key", [
    "ragged", "ragged_scalar_after_list", "ragged_list_after_scalar", "str", "list_of_str",
    "none", "list_of_none", "dict", "set", "fraction", "int_too_big", "int_too_small",
    "int_too_big_in_list", "int_requires_grad", "bool_requires_grad", "complex_to_real_dtype",
    "uint8_overflow", "int8_overflow", "numpy_object_array", "numpy_str_array",
    "tensor_list_multi_element"])
def test_tensor_errors_match_torch(key):
    cases = {
        "ragged": lambda L: L.tensor([[1, 2], [3]]),
        "ragged_scalar_after_list": lambda L: L.tensor([[1, 2], 3]),
        "ragged_list_after_scalar": lambda L: L.tensor([1, [2, 3]]),
        "str": lambda L: L.tensor("abc"),
        "list_of_str": lambda L: L.tensor(["a", "b"]),
        "none": lambda L: L.tensor(None),
        "list_of_none": lambda L: L.tensor([None]),
        "dict": lambda L: L.tensor({1: 2}),
        "set": lambda L: L.tensor({1, 2}),
        "fraction": lambda L: L.tensor(fractions.Fraction(1, 2)),
        "int_too_big": lambda L: L.tensor(2 ** 63),
        "int_too_small": lambda L: L.tensor(-2 ** 63 - 1),
        "int_too_big_in_list": lambda L: L.tensor([1, 2 ** 63]),
        "int_requires_grad": lambda L: L.tensor([1, 2], requires_grad=True),
        "bool_requires_grad": lambda L: L.tensor([True], requires_grad=True),
        "complex_to_real_dtype": lambda L: L.tensor([1 + 2j], dtype=L.float32),
        "uint8_overflow": lambda L: L.tensor([300], dtype=L.uint8),
        "int8_overflow": lambda L: L.tensor(200, dtype=L.int8),
        "numpy_object_array": lambda L: L.tensor(np.array([1, "a"], dtype=object)),
        "numpy_str_array": lambda L: L.tensor(np.array(["a"])),
        "tensor_list_multi_element": lambda L: L.tensor([L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])]),
    }
    same_error(cases[key])


# per-element conversion rules of tensor(data, dtype=...) (PyTorch's store_scalar)
STORE_OK = {
    "uint8_neg_int_wraps": lambda L: L.tensor([-1, -255, 7], dtype=L.uint8),
    "uint8_mixed_int_float": lambda L: L.tensor([-1, 0.5], dtype=L.uint8),
    "int8_float_truncates": lambda L: L.tensor([[1.9, -1.9], [127.0, -128.0]], dtype=L.int8),
    "bool_any_number": lambda L: L.tensor([0.0, float("nan"), 2j, -3], dtype=L.bool),
    "float32_big_int": lambda L: L.tensor([2 ** 64, 1], dtype=L.float32),
    "float16_overflow_is_inf": lambda L: L.tensor([1e6, -1e6], dtype=L.float16),
    "np_scalars_promote": lambda L: L.tensor([np.uint8(1), np.int8(-2)]),
    "np_float32_and_float": lambda L: L.tensor([np.float32(1.5), 2.5]),
    "np_int32_and_float": lambda L: L.tensor([[np.int32(1)], [2.5]]),
    "complex_and_np_float64": lambda L: L.tensor([1j, np.float64(2.0)]),
    "np_array_and_list_rows": lambda L: L.tensor([np.array([1, 2], dtype=np.int32), [3, 4]]),
    "tensor_in_nested_list": lambda L: L.tensor([[L.tensor(1, dtype=L.int32)], [2.5]]),
    "tuples_and_lists": lambda L: L.tensor(([1, 2], (3, 4))),
    "range_rows": lambda L: L.tensor([range(3), range(3)]),
    "empty_rows": lambda L: L.tensor([[], []], dtype=L.uint8),
    # the returns deque of the REINFORCE example, here holding tensors that require grad
    "deque_of_grad_tensors": lambda L: L.tensor(
        collections.deque([L.tensor(1.5, requires_grad=True) * 2, L.tensor(2.0)])),
    "bool_and_int_tensors_to_int": lambda L: L.tensor([L.tensor(True), L.tensor(3)], dtype=L.int8),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(STORE_OK))
def test_tensor_store_rules_match_torch(key):
    p, t = both(STORE_OK[key])
    assert_same(p, t)


STORE_ERR = {
    "uint8_neg_int_past_max": lambda L: L.tensor([-256], dtype=L.uint8),
    "uint8_neg_float": lambda L: L.tensor([-0.5], dtype=L.uint8),
    "uint8_float_above_max": lambda L: L.tensor([255.5], dtype=L.uint8),
    "int_nan": lambda L: L.tensor([float("nan")], dtype=L.int32),
    "int_inf": lambda L: L.tensor([float("inf")], dtype=L.int64),
    "int64_unpack_overflow": lambda L: L.tensor([2 ** 63], dtype=L.uint8),
    "complex_to_int": lambda L: L.tensor([1 + 2j], dtype=L.int32),
    "np_float32_to_int": lambda L: L.tensor([np.float32(1.5)], dtype=L.int64),
    "huge_int_to_float": lambda L: L.tensor([1.0, 2 ** 1100]),
    "list_in_float_row": lambda L: L.tensor([1.0, [2, 3]]),
    "bytes_in_list": lambda L: L.tensor([b"ab"]),
    "str_after_list": lambda L: L.tensor([[1], "a"]),
    "none_then_str": lambda L: L.tensor([None, "a"]),
    "zero_d_array_in_list": lambda L: L.tensor([np.array(5)]),
    "ragged_longer_row": lambda L: L.tensor([[1, 2], [3, 4, 5]]),
    # a tensor in a list is read through __index__ for integer and bool dtypes
    "float_tensor_to_int": lambda L: L.tensor([L.tensor(2.5)], dtype=L.int64),
    "float_tensor_to_bool": lambda L: L.tensor([[L.tensor(0.0)]], dtype=L.bool),
    "two_element_int_tensor_in_a_row": lambda L: L.tensor([L.tensor([1, 2]), [3, 4]]),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(STORE_ERR))
def test_tensor_store_errors_match_torch(key):
    same_error(STORE_ERR[key])


_CONVERSION_WARNINGS = '''
import warnings, numpy as np, {lib} as T
warnings.simplefilter("always")
b = T.tensor(2.5, requires_grad=True) * 2
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    {call}
print([(str(x.message).split(" (Triggered internally")[0], x.lineno) for x in w])
'''


@needs_torch
@pytest.mark.parametrize("call", [
    "T.tensor([b, b])",                          # __float__ of a tensor requiring grad
    "T.tensor([np.ones(2), np.zeros(2)])",       # 'extremely slow'
    # none of these warn
    "T.tensor([b.detach(), 1.0]); T.tensor(np.ones((2, 2))); T.tensor([np.float32(1.0), 2.0]); "
    "T.set_grad_enabled(False); T.tensor([b], dtype=T.float64)",
])
def test_tensor_from_a_list_warns_as_torch(call):
    # both warnings are torch's C++ warn-once: torch runs in a fresh interpreter
    import contextlib
    import io
    import subprocess
    import sys
    want = subprocess.run([sys.executable, "-c", _CONVERSION_WARNINGS.format(lib="torch", call=call)],
                          capture_output=True, text=True, check=True).stdout
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(_CONVERSION_WARNINGS.format(lib="ptcore", call=call), "<string>", "exec"), {})
    finally:
        ptcore.set_grad_enabled(True)
    assert out.getvalue() == want


def test_tensor_basic_inference():
    assert ptcore.tensor([1, 2]).dtype is ptcore.int64
    assert ptcore.tensor([1.0, 2]).dtype is ptcore.float32
    assert ptcore.tensor([True]).dtype is ptcore.bool
    assert ptcore.tensor([1j]).dtype is ptcore.complex64
    assert ptcore.tensor(3).shape == ()
    assert ptcore.tensor([[1, 2, 3]]).shape == (1, 3)
    assert ptcore.tensor([]).shape == (0,)
    assert ptcore.tensor([1.7, -1.7], dtype=ptcore.int64).tolist() == [1, -1]


def test_tensor_copies_its_input():
    a = np.arange(4.0)
    t = ptcore.tensor(a)
    a[0] = 100.0
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    t.fill_(-1.0)
    assert a[1] == 1.0


def test_tensor_requires_grad():
    t = ptcore.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert ptcore.tensor([1.0]).requires_grad is False
    assert ptcore.tensor([1j], requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        ptcore.tensor([1, 2], requires_grad=True)


def test_tensor_from_tensor_warns_and_copies():
    src = ptcore.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning):
        t = ptcore.tensor(src)
    assert t.data_ptr() != src.data_ptr()
    assert t.tolist() == [1.0, 2.0]
    assert not t.requires_grad
    with pytest.warns(UserWarning):
        t2 = ptcore.tensor(src, dtype=ptcore.float64)
    assert t2.dtype is ptcore.float64


@needs_torch
def test_tensor_from_torch_tensor_via_dlpack_copies():
    src = torch.arange(4, dtype=torch.int32)
    t = ptcore.tensor(src)
    assert t.dtype is ptcore.int32
    assert t.tolist() == [0, 1, 2, 3]
    src[0] = 99
    assert t.tolist()[0] == 0


if given is not None:
    _SCALAR = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1), st.floats(allow_nan=False, width=64),
                        st.booleans())

    @st.composite
    def _rectangular(draw):
        shape = draw(st.lists(st.integers(0, 3), max_size=3))
        n = int(np.prod(shape)) if shape else 1
        flat = draw(st.lists(_SCALAR, min_size=n, max_size=n))
        if not shape:
            return flat[0]
        def build(dims, items):
            if len(dims) == 1:
                return items[:dims[0]]
            step = int(np.prod(dims[1:]))
            return [build(dims[1:], items[i * step:(i + 1) * step]) for i in range(dims[0])]
        return build(shape, flat)

    @settings(max_examples=80, deadline=None)
    @given(_rectangular())
    def test_tensor_property_matches_torch(data):
        if torch is None:
            pytest.skip("torch is not installed")
        p, t = ptcore.tensor(data), torch.tensor(data)
        assert_same(p, t)


# ---------------------------------------------------------------------------
# as_tensor / from_numpy
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("np_dtype", [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64,
                                      np.float16, np.float32, np.float64, np.complex64,
                                      np.complex128])
def test_from_numpy_shares_memory_both_ways(np_dtype):
    a = np.zeros((2, 3), dtype=np_dtype)
    t = ptcore.from_numpy(a)
    assert t.shape == (2, 3)
    assert t.data_ptr() == a.ctypes.data
    a[1, 2] = 1
    assert t.tolist()[1][2] == 1
    t[0, 0] = 1
    assert a[0, 0] == 1
    n = t.numpy()
    assert np.shares_memory(n, a)


def test_from_numpy_keeps_strides_and_0d():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = ptcore.from_numpy(a)
    assert t.stride() == (4, 2)
    assert t.tolist() == a.tolist()
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert ptcore.from_numpy(f).stride() == (1, 2)
    b = np.broadcast_to(np.arange(3.0), (2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ptcore.from_numpy(b).stride() == (0, 1)
    z = ptcore.from_numpy(np.array(2.5))
    assert z.shape == () and z.item() == 2.5


FROM_NUMPY_LAYOUTS = {
    "contiguous": lambda: np.arange(24.0).reshape(2, 3, 4),
    "sliced": lambda: np.arange(24.0).reshape(2, 3, 4)[:, ::2, 1:],
    "transposed": lambda: np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(2, 0, 1),
    "offset": lambda: np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)[1, 1:],
    "0d": lambda: np.array(True),
    "empty": lambda: np.zeros((3, 0, 2)),
    "empty_sliced": lambda: np.zeros((3, 0, 4), dtype=np.int16)[:, :, ::2].T,
    "empty_rows": lambda: np.arange(12.0).reshape(3, 4)[:0],
    "broadcast": lambda: np.lib.stride_tricks.as_strided(np.arange(3.0), (3, 4), (8, 0)),
    "unaligned": lambda: np.frombuffer(bytearray(17), dtype=np.float64, offset=1, count=2),
    "complex_view": lambda: (np.arange(8.0) * (1 + 2j)).astype(np.complex64)[::3],
    "float16": lambda: np.linspace(-1, 1, 7).astype(np.float16).reshape(7, 1),
    "uint64": lambda: np.array([[2 ** 64 - 1, 0]], dtype=np.uint64).T,
}


@needs_torch
@pytest.mark.parametrize("key", sorted(FROM_NUMPY_LAYOUTS))
def test_from_numpy_layouts_match_torch(key):
    # dtype, shape, strides, offset, values and shared memory as torch's
    a = FROM_NUMPY_LAYOUTS[key]()
    p, t = ptcore.from_numpy(a), torch.from_numpy(a)
    assert str(p.dtype) == str(t.dtype).replace("torch.", "ptcore.")
    assert (p.shape, p.stride(), p.storage_offset()) == (t.shape, t.stride(), t.storage_offset())
    assert p.tolist() == t.tolist()
    assert p.data_ptr() == t.data_ptr()


def test_from_numpy_keeps_array_alive():
    t = ptcore.from_numpy(np.arange(1000, dtype=np.int64))
    import gc
    gc.collect()
    assert t.tolist()[999] == 999


def test_from_numpy_negative_strides_raise():
    with pytest.raises(ValueError):
        ptcore.from_numpy(np.arange(4)[::-1])
    if torch is not None:
        with pytest.raises(ValueError):
            torch.from_numpy(np.arange(4)[::-1])


_READ_ONLY_FROM_NUMPY = '''
import warnings, numpy as np, {lib} as T
a = np.arange(3.0)
a.flags.writeable = False
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    t = T.from_numpy(a)
    T.tensor(a); T.as_tensor(a, dtype=T.int64)      # copies: no warning
    T.from_numpy(a)                                 # warned once per process already
print([type(x.message).__name__ for x in w], [x.filename == "<string>" for x in w], t.tolist())
'''


@needs_torch
def test_from_numpy_read_only_warns():
    # torch's TORCH_WARN_ONCE: the first read-only array of the process warns, in a fresh
    # interpreter for both libraries
    import subprocess
    import sys
    got = [subprocess.run([sys.executable, "-c", _READ_ONLY_FROM_NUMPY.format(lib=lib)],
                          capture_output=True, text=True, check=True).stdout
           for lib in ("torch", "ptcore")]
    assert got[0].startswith("['UserWarning']")
    assert got[1] == got[0]


@needs_torch
@pytest.mark.parametrize("key", ["list", "object", "big_endian", "str"])
def test_from_numpy_errors_match_torch(key):
    data = {"list": [1, 2], "object": np.array([1], dtype=object),
            "big_endian": np.arange(3, dtype=">i4"), "str": np.array(["a"])}[key]
    same_error(lambda L: L.from_numpy(data))


@needs_torch
@pytest.mark.parametrize("np_dtype", [object, "datetime64[s]", "timedelta64[ms]", "U3", "S2", "V4",
                                      [("a", "f4")], np.longdouble, np.clongdouble, ">f4", ">c8"])
@pytest.mark.parametrize("fn", ["from_numpy", "tensor", "as_tensor"])
def test_unsupported_numpy_dtype_message_matches_torch(np_dtype, fn):
    # torch names the array's scalar type (numpy.object_, numpy.datetime64 without its unit,
    # numpy.str_, numpy.void, numpy.longdouble); byte-swapped arrays get a ValueError
    a = np.zeros(2, dtype=np_dtype)
    with pytest.raises((TypeError, ValueError)) as want:
        getattr(torch, fn)(a)
    with pytest.raises(want.type) as got:
        getattr(ptcore, fn)(a)
    assert str(got.value) == str(want.value)


def test_as_tensor_shares_or_copies():
    a = np.arange(4.0)
    t = ptcore.as_tensor(a)
    assert t.dtype is ptcore.float64
    a[0] = 10.0
    assert t.tolist()[0] == 10.0                 # shared
    c = ptcore.as_tensor(a, dtype=ptcore.float32)
    a[1] = 20.0
    assert c.dtype is ptcore.float32
    assert c.tolist()[1] == 1.0                  # converted copy
    x = ptcore.zeros(3)
    assert ptcore.as_tensor(x) is x
    assert ptcore.as_tensor(x, dtype=ptcore.float32) is x
    assert ptcore.as_tensor(x, dtype=ptcore.float64).dtype is ptcore.float64
    assert ptcore.as_tensor([1, 2]).dtype is ptcore.int64
    assert ptcore.as_tensor(2.5).shape == ()


@needs_torch
@pytest.mark.parametrize("key", ["negative_strides", "big_endian"])
def test_as_tensor_errors_match_torch(key):
    data = {"negative_strides": np.arange(4)[::-1], "big_endian": np.arange(3, dtype=">i4")}[key]
    same_error(lambda L: L.as_tensor(data))


# ---------------------------------------------------------------------------
# asarray
# ---------------------------------------------------------------------------

def test_asarray_numpy_copy_semantics():
    a = np.arange(4.0)
    shared = ptcore.asarray(a)
    forced = ptcore.asarray(a, copy=True)
    nocopy = ptcore.asarray(a, copy=False)
    a[0] = 7.0
    assert shared.tolist()[0] == 7.0
    assert nocopy.tolist()[0] == 7.0
    assert forced.tolist()[0] == 0.0
    conv = ptcore.asarray(a, dtype=ptcore.float32)
    assert conv.dtype is ptcore.float32
    with pytest.raises(ValueError):
        ptcore.asarray(a, dtype=ptcore.float32, copy=False)


def test_asarray_tensor_copy_semantics():
    x = ptcore.arange(3.0)
    assert ptcore.asarray(x) is x
    assert ptcore.asarray(x, copy=False) is x
    y = ptcore.asarray(x, copy=True)
    assert y is not x and y.data_ptr() != x.data_ptr() and y.tolist() == x.tolist()
    z = ptcore.asarray(x, dtype=ptcore.float64)
    assert z.dtype is ptcore.float64
    with pytest.raises(ValueError):
        ptcore.asarray(x, dtype=ptcore.float64, copy=False)


def test_asarray_sequences():
    assert ptcore.asarray([1, 2]).dtype is ptcore.int64
    assert ptcore.asarray([1.5, 2.5], dtype=ptcore.float64).tolist() == [1.5, 2.5]
    with pytest.raises(ValueError):
        ptcore.asarray([1, 2], copy=False)
    r = ptcore.asarray([1.0, 2.0], requires_grad=True)
    assert r.requires_grad


def test_asarray_buffer_protocol_with_dtype_shares_memory():
    b = bytearray(b"\x01\x02\x03\x04")
    t = ptcore.asarray(b, dtype=ptcore.uint8)
    assert t.tolist() == [1, 2, 3, 4]
    b[0] = 200
    assert t.tolist()[0] == 200
    t[1] = 9
    assert b[1] == 9
    m = memoryview(np.arange(4, dtype=np.int16))
    t16 = ptcore.asarray(m, dtype=ptcore.int16)
    assert t16.tolist() == [0, 1, 2, 3]
    d = array.array("d", [1.0, 2.0])
    td = ptcore.asarray(d, dtype=ptcore.float64)
    d[1] = 5.0
    assert td.tolist() == [1.0, 5.0]


@needs_torch
@pytest.mark.parametrize("key", ["bytes", "bytearray_even", "array_d", "array_i", "memoryview"])
def test_asarray_buffer_protocol_without_dtype_matches_torch(key):
    # torch reads a buffer-protocol object's raw bytes as the default dtype
    make = {"bytes": lambda: b"abcd", "bytearray_even": lambda: bytearray(b"\x00\x00\x80\x3f"),
            "array_d": lambda: array.array("d", [1.0, 2.0]),
            "array_i": lambda: array.array("i", [1, 2]),
            "memoryview": lambda: memoryview(np.arange(4, dtype=np.int16))}[key]
    p, t = ptcore.asarray(make()), torch.asarray(make())
    assert_same(p, t)


@needs_torch
def test_asarray_dlpack_producer_shares_memory():
    src = torch.arange(6, dtype=torch.float32).view(2, 3)
    t = ptcore.asarray(src)
    assert t.dtype is ptcore.float32 and t.shape == (2, 3)
    src[1, 1] = -5.0
    assert t.tolist()[1][1] == -5.0
    c = ptcore.asarray(src, copy=True)
    src[0, 0] = 42.0
    assert c.tolist()[0][0] == 0.0


@needs_torch
def test_asarray_numpy_scalars_match_torch():
    for data in (np.float64(3.5), 3.5, [np.float64(1.0)], True):
        p, t = both(lambda L: L.asarray(data))
        assert_same(p, t)


# ---------------------------------------------------------------------------
# empty / zeros / ones / full
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("size_args", [(2, 3), ((2, 3),), ([2, 3],), (ptcore.Size([2, 3]),),
                                       (np.int64(2), 3)], ids=str)
@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
def test_factory_size_forms(fn, size_args):
    t = getattr(ptcore, fn)(*size_args)
    assert t.shape == (2, 3)
    assert isinstance(t.shape, ptcore.Size)
    assert t.dtype is ptcore.float32
    assert t.is_contiguous() and t.stride() == (3, 1)
    if fn == "zeros":
        assert t.tolist() == [[0.0] * 3] * 2
    if fn == "ones":
        assert t.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
def test_factory_zero_dim_and_empty(fn):
    f = getattr(ptcore, fn)
    assert f(()).shape == ()
    assert f(0).shape == (0,)
    assert f(2, 0, 3).numel() == 0


@pytest.mark.parametrize("dt", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_zeros_ones_dtypes(dt):
    z = ptcore.zeros(2, 2, dtype=getattr(ptcore, dt))
    o = ptcore.ones(2, 2, dtype=getattr(ptcore, dt))
    assert z.dtype is o.dtype is getattr(ptcore, dt)
    zz = z.float() if dt == "bfloat16" else z
    oo = o.float() if dt == "bfloat16" else o
    np.testing.assert_array_equal(zz.numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(oo.numpy(), np.ones((2, 2)))


def test_factory_requires_grad_and_out():
    t = ptcore.zeros(2, requires_grad=True)
    assert t.requires_grad
    with pytest.raises(RuntimeError):
        ptcore.zeros(2, dtype=ptcore.int64, requires_grad=True)
    out = ptcore.empty(5)
    r = ptcore.ones(2, 3, out=out)
    assert r is out
    assert out.shape == (2, 3) and out.tolist() == [[1.0] * 3] * 2
    r2 = ptcore.zeros(2, 3, out=out)
    assert r2 is out and out.tolist() == [[0.0] * 3] * 2


@needs_torch
def test_factory_size_keyword_matches_torch():
    p, t = both(lambda L: L.zeros(size=(2, 3)))
    assert_same(p, t)
    p, t = both(lambda L: L.ones(size=(4,), dtype=L.int32))
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("key", ["negative", "float_size", "str_size", "tuple_plus_int"])
def test_factory_errors_match_torch(key):
    call = {"negative": lambda L: L.zeros(2, -1),
            "float_size": lambda L: L.zeros(2.0),
            "str_size": lambda L: L.ones("a"),
            "tuple_plus_int": lambda L: L.empty((2, 3), 4)}[key]
    same_error(call)


@needs_torch
@pytest.mark.parametrize("fill", [1, 1.5, True, 1j, -7, np.float64(2.5),
                                  "0d_int32", "0d_float64"], ids=str)
def test_full_infers_dtype_like_torch(fill):
    def make(L):
        f = fill
        if f == "0d_int32":
            f = L.tensor(3, dtype=L.int32)
        elif f == "0d_float64":
            f = L.tensor(2.5, dtype=L.float64)
        return L.full((2, 2), f)
    p, t = both(make)
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("fill,dtype", [(1.5, "int64"), (True, "float32"), (3, "float16"),
                                        (2.5, "complex64"), (0.0, "bool"), (255, "uint8"),
                                        (-128, "int8"), (1e30, "float32")], ids=str)
def test_full_with_dtype_matches_torch(fill, dtype):
    p, t = both(lambda L: L.full((3,), fill, dtype=getattr(L, dtype)))
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("fill,dtype", [(300, "uint8"), (float("inf"), "int32"),
                                        (float("nan"), "int64"), (1j, "float32")], ids=str)
def test_full_overflow_errors_match_torch(fill, dtype):
    same_error(lambda L: L.full((2,), fill, dtype=getattr(L, dtype)))


def test_full_values_and_default_dtype():
    t = ptcore.full((2, 3), 7)
    assert t.dtype is ptcore.int64 and t.tolist() == [[7] * 3] * 2
    assert ptcore.full((2,), 1.5).dtype is ptcore.float32
    assert ptcore.full((2,), True).dtype is ptcore.bool
    assert ptcore.full((2,), 1j).dtype is ptcore.complex64
    assert ptcore.full((), 3.0).shape == ()
    out = ptcore.empty(0)
    assert ptcore.full((2,), 4.0, out=out) is out and out.tolist() == [4.0, 4.0]


# ---------------------------------------------------------------------------
# *_like
# ---------------------------------------------------------------------------

LIKE = ["empty_like", "zeros_like", "ones_like", "full_like"]


def _call_like(lib, name, x, **kw):
    f = getattr(lib, name)
    return f(x, 2.5, **kw) if name == "full_like" else f(x, **kw)


def _sources(lib):
    base = lib.arange(24, dtype=lib.float32).view(2, 3, 4)
    return {
        "contiguous": base,
        "transposed": base.transpose(0, 2),
        "permuted": base.permute(1, 2, 0),
        "sliced": base[:, :, ::2],                   # not dense -> contiguous result
        "expanded": lib.zeros(3, 1).expand(3, 4),    # overlapping -> contiguous result
        "zero_dim": lib.tensor(1.0),
        "empty": lib.zeros(0, 3),
    }


@needs_torch
@pytest.mark.parametrize("name", LIKE)
@pytest.mark.parametrize("src", ["contiguous", "transposed", "permuted", "sliced", "expanded",
                                 "zero_dim", "empty"])
def test_like_strides_match_torch(name, src):
    p = _call_like(ptcore, name, _sources(ptcore)[src])
    t = _call_like(torch, name, _sources(torch)[src])
    assert p.shape == tuple(t.shape)
    assert p.stride() == t.stride()
    assert name_of(p.dtype) == name_of(t.dtype)
    if name != "empty_like":
        np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("name", LIKE)
def test_like_keywords(name):
    x = ptcore.arange(6, dtype=ptcore.float32).view(2, 3).t()
    r = _call_like(ptcore, name, x, dtype=ptcore.float64)
    assert r.dtype is ptcore.float64 and r.shape == (3, 2)
    assert r.data_ptr() != x.data_ptr()
    r = _call_like(ptcore, name, x, memory_format=ptcore.contiguous_format)
    assert r.is_contiguous()
    r = _call_like(ptcore, name, x, requires_grad=True)
    assert r.requires_grad
    r = _call_like(ptcore, name, ptcore.zeros(2, dtype=ptcore.int32))
    assert r.dtype is ptcore.int32


def test_like_values():
    x = ptcore.zeros(2, 3, dtype=ptcore.int16)
    assert ptcore.ones_like(x).tolist() == [[1] * 3] * 2
    assert ptcore.full_like(x, 9).tolist() == [[9] * 3] * 2
    assert ptcore.full_like(x, 2.7).tolist() == [[2] * 3] * 2      # like torch: cast to input dtype
    o = ptcore.ones(2, 3)
    assert ptcore.zeros_like(o).tolist() == [[0.0] * 3] * 2


# ---------------------------------------------------------------------------
# empty_strided
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 0), (1, 2)),
                                         ((4,), (3,)), ((2, 2), (0, 1)), ((), ())], ids=str)
def test_empty_strided_matches_torch(size, stride):
    p, t = both(lambda L: L.empty_strided(size, stride))
    assert p.shape == tuple(t.shape)
    assert p.stride() == t.stride()
    assert p.untyped_storage().nbytes() == t.untyped_storage().nbytes()
    assert name_of(p.dtype) == name_of(t.dtype)


def test_empty_strided_keywords_and_errors():
    t = ptcore.empty_strided((2, 3), (1, 2), dtype=ptcore.float64, requires_grad=True)
    assert t.dtype is ptcore.float64 and t.requires_grad and t.stride() == (1, 2)
    with pytest.raises(RuntimeError):
        ptcore.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError):
        ptcore.empty_strided((2, -3), (1, 1))


# ---------------------------------------------------------------------------
# arange
# ---------------------------------------------------------------------------

ARANGE = [
    (5,), (0, 5), (2, 9, 3), (10, 0, -3), (-5, 5, 2), (3, 3), (0, 1, 0.1), (1, 2.5, 0.5),
    (1.0, -1.0, -0.25), (0.0, 1.0, 0.3), (-3.1, 7.9, 0.013), (0.5, 10), (2.0,),
    (2 ** 62, 2 ** 62 + 3), (True,), (0, 1e-3, 1e-4), (1e6, 1e6 + 10, 0.5),
    (0.5, 10),
]


def _atol(dtype_name, args):
    eps = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
           "float64": 2.0 ** -52}.get(dtype_name, 0.0)
    return 4 * eps * max(abs(float(a)) for a in args)


@needs_torch
@pytest.mark.parametrize("args", ARANGE, ids=str)
@pytest.mark.parametrize("dtype", [None, "float64", "float32", "float16", "bfloat16", "int32",
                                   "int64"])
def test_arange_matches_torch(args, dtype):
    if args[0] == 2 ** 62 and dtype not in (None, "int64"):
        pytest.skip("out of range for the dtype")
    if dtype in ("int32", "int64") and len(args) == 3 and args[2] != int(args[2]):
        pytest.skip("fractional step with an integer dtype: see the dedicated test")
    kw = lambda L: {} if dtype is None else {"dtype": getattr(L, dtype)}
    try:
        t = torch.arange(*args, **kw(torch))
    except Exception as e:
        with pytest.raises(type(e)):
            ptcore.arange(*args, **kw(ptcore))
        return
    p = ptcore.arange(*args, **kw(ptcore))
    assert p.shape == tuple(t.shape), "length differs"
    assert_same(p, t, atol=_atol(name_of(t.dtype), args) or 0.0, rtol=0.0) \
        if t.dtype.is_floating_point else assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("args", [(0, 5, 0), (0, 5, -1), (5, 0, 1), (0, float("inf")),
                                  (0, float("nan")), (float("-inf"), 0), (0, 1j)], ids=str)
def test_arange_errors_match_torch(args):
    same_error(lambda L: L.arange(*args))


@needs_torch
def test_arange_float_step_truncated_to_zero_by_int_dtype_matches_torch():
    same_error(lambda L: L.arange(0, 2.5, 0.5, dtype=L.int64))


def test_arange_basics():
    assert ptcore.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert ptcore.arange(5).dtype is ptcore.int64
    assert ptcore.arange(5.0).dtype is ptcore.float32
    assert ptcore.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert ptcore.arange(1, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert len(ptcore.arange(0, 1, 0.1)) == 10
    assert ptcore.arange(ptcore.tensor(4)).tolist() == [0, 1, 2, 3]
    assert ptcore.arange(np.int64(3)).dtype is ptcore.int64
    assert ptcore.arange(0, 4, requires_grad=True, dtype=ptcore.float32).requires_grad
    out = ptcore.empty(0, dtype=ptcore.int64)
    assert ptcore.arange(3, out=out) is out and out.tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError):
        ptcore.arange(0, 5, 0)
    with pytest.raises(RuntimeError):
        ptcore.arange(0, 5, -1)


# ---------------------------------------------------------------------------
# linspace / logspace
# ---------------------------------------------------------------------------

LINSPACE = [(0, 1, 5), (0, 10, 4), (-7, 13, 9), (3, 5, 1), (3, 5, 0), (5, -5, 6),
            (-1.3, 2.9, 101), (-1.3, 2.9, 17), (0, 255, 7), (1e-3, 1e3, 33), (2, 2, 4)]


@needs_torch
@pytest.mark.parametrize("args", LINSPACE, ids=str)
@pytest.mark.parametrize("dtype", [None, "float64", "float16", "bfloat16", "int64", "int32",
                                   "uint8", "complex64"])
def test_linspace_matches_torch(args, dtype):
    if dtype == "uint8" and (min(args[:2]) < 0 or max(args[:2]) > 255):
        pytest.skip("values outside uint8 are undefined behaviour")
    kw = lambda L: {} if dtype is None else {"dtype": getattr(L, dtype)}
    p, t = ptcore.linspace(*args, **kw(ptcore)), torch.linspace(*args, **kw(torch))
    real = name_of(t.dtype) if not t.dtype.is_complex else "float32"
    atol = _atol(real, args[:2]) * 2
    if t.dtype.is_floating_point or t.dtype.is_complex:
        assert_same(p, t, atol=atol)
    else:
        assert_same(p, t)


@needs_torch
def test_linspace_complex_and_tensor_args_match_torch():
    p, t = both(lambda L: L.linspace(0, 1 + 1j, 5))
    assert_same(p, t, atol=1e-6)
    p, t = both(lambda L: L.linspace(L.tensor(0.0), L.tensor(1.0), 3))
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("args", [(0, 1, -1), (0, 1, 2.0)], ids=str)
def test_linspace_errors_match_torch(args):
    same_error(lambda L: L.linspace(*args))


def test_linspace_basics():
    assert ptcore.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    t = ptcore.linspace(-1.3, 2.9, 101, dtype=ptcore.float64)
    assert t.tolist()[0] == -1.3 and t.tolist()[-1] == 2.9
    np.testing.assert_allclose(t.numpy(), np.linspace(-1.3, 2.9, 101), rtol=0, atol=1e-15)
    assert ptcore.linspace(0, 10, 4, dtype=ptcore.int64).tolist() == [0, 3, 6, 10]


LOGSPACE = [(0, 3, 4, 10.0), (0, 10, 11, 2), (-2.5, 2.5, 21, 10.0), (2, 3, 1, 10.0),
            (0, 3, 4, -2), (1, 0, 5, 3.0), (0, 1, 0, 10.0)]


@needs_torch
@pytest.mark.parametrize("args", LOGSPACE, ids=str)
@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
def test_logspace_matches_torch(args, dtype):
    kw = lambda L: {} if dtype is None else {"dtype": getattr(L, dtype)}
    p, t = ptcore.logspace(*args, **kw(ptcore)), torch.logspace(*args, **kw(torch))
    if t.dtype.is_floating_point:
        assert_same(p, t, rtol=4 * float(np.finfo(values(t).dtype).eps))
    else:
        assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("args", [(0, 3, 50, 10.0), (0.5, 7.25, 101, 10.0), (-10, 10, 1000, 1.5),
                                  (-3, 5, 777, 0.5)], ids=str)
def test_logspace_float64_bit_exact(args):
    # libm's pow per element, as torch's kernel (NumPy's vectorised power was
    # an ulp off in about a tenth of the values)
    p, t = ptcore.logspace(*args, dtype=ptcore.float64), torch.logspace(*args, dtype=torch.float64)
    assert np.array_equal(p.numpy(), t.numpy())


@needs_torch
def test_logspace_complex_matches_torch():
    p, t = both(lambda L: L.logspace(0, 1j, 3))
    assert_same(p, t, atol=1e-6)


# ---------------------------------------------------------------------------
# eye
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (0, 3), (1,)], ids=str)
@pytest.mark.parametrize("dtype", [None, "bool", "int32", "float64", "complex64"])
def test_eye_matches_torch(args, dtype):
    kw = lambda L: {} if dtype is None else {"dtype": getattr(L, dtype)}
    p, t = ptcore.eye(*args, **kw(ptcore)), torch.eye(*args, **kw(torch))
    assert_same(p, t)


@needs_torch
@pytest.mark.parametrize("args", [(-1,), (2, -1), (2.0,)], ids=str)
def test_eye_errors_match_torch(args):
    same_error(lambda L: L.eye(*args))


def test_eye_out_and_requires_grad():
    out = ptcore.empty(0)
    assert ptcore.eye(2, out=out) is out and out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert ptcore.eye(2, requires_grad=True).requires_grad


# ---------------------------------------------------------------------------
# Tensor.new_*
# ---------------------------------------------------------------------------

def test_new_constructors_inherit_dtype():
    base = ptcore.zeros(1, dtype=ptcore.int16)
    t = base.new_tensor([1, 2, 3])
    assert t.dtype is ptcore.int16 and t.tolist() == [1, 2, 3]
    e = base.new_empty(2, 3)
    assert e.dtype is ptcore.int16 and e.shape == (2, 3)
    z = base.new_zeros((2, 3))
    assert z.dtype is ptcore.int16 and z.tolist() == [[0] * 3] * 2
    o = base.new_ones(2)
    assert o.dtype is ptcore.int16 and o.tolist() == [1, 1]
    f = base.new_full((2,), 7)
    assert f.dtype is ptcore.int16 and f.tolist() == [7, 7]
    f = base.new_full((2,), 2.9)
    assert f.tolist() == [2, 2]
    d = base.new_zeros(3, dtype=ptcore.float64)
    assert d.dtype is ptcore.float64
    s = base.new_empty_strided((2, 3), (1, 2))
    assert s.stride() == (1, 2) and s.dtype is ptcore.int16
    g = ptcore.zeros(1).new_ones(2, requires_grad=True)
    assert g.requires_grad


def test_new_tensor_copies():
    a = np.arange(3.0)
    base = ptcore.zeros(1, dtype=ptcore.float64)
    t = base.new_tensor(a)
    a[0] = 10.0
    assert t.tolist() == [0.0, 1.0, 2.0]
    src = ptcore.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t2 = base.new_tensor(src)
    assert t2.data_ptr() != src.data_ptr()
    assert t2.dtype is ptcore.float64


@needs_torch
@pytest.mark.parametrize("call", [
    lambda b, L: b.new_tensor([1.5, 2.5]),
    lambda b, L: b.new_zeros(2, 3),
    lambda b, L: b.new_ones((3,)),
    lambda b, L: b.new_full((2, 2), 3.7),
    lambda b, L: b.new_full((2,), True),
    lambda b, L: b.new_zeros((2,), dtype=L.complex64),
    lambda b, L: b.new_empty(()).shape,
], ids=lambda f: "")
@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_new_constructors_match_torch(call, dtype):
    p = call(ptcore.zeros(1, dtype=getattr(ptcore, dtype)), ptcore)
    t = call(torch.zeros(1, dtype=getattr(torch, dtype)), torch)
    if isinstance(t, tuple):
        assert tuple(p) == tuple(t)
    else:
        assert_same(p, t)


COMPLEX_UNDER_DEFAULT = {
    "tensor": lambda L: L.tensor(1j).dtype,
    "tensor_list": lambda L: L.tensor([1.0, 2j]).dtype,
    "full": lambda L: L.full((2,), 1j).dtype,
    "float32_times_1j": lambda L: (L.ones(2, dtype=L.float32) * 1j).dtype,
    "default_times_1j": lambda L: (L.ones(2) * 1j).dtype,
    "int_times_1j": lambda L: (L.ones(2, dtype=L.int64) * 1j).dtype,
    "result_type": lambda L: L.result_type(L.ones(2, dtype=L.int64), 1j),
}


@pytest.mark.parametrize("default", ["float16", "bfloat16"])
@pytest.mark.parametrize("key", sorted(COMPLEX_UNDER_DEFAULT))
def test_complex_dtypes_under_a_16_bit_default_match_torch(default, key):
    """torch.tensor(1j) is complex32 under a float16 default and raises under
    bfloat16; promotion with an int tensor follows the default complex type."""
    torch = pytest.importorskip("torch")
    fn = COMPLEX_UNDER_DEFAULT[key]

    def run(L):
        old = L.get_default_dtype()
        L.set_default_dtype(getattr(L, default))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return "ok", str(fn(L)).split(".")[-1]
        except RuntimeError as e:
            return "err", str(e)
        finally:
            L.set_default_dtype(old)
    assert run(ptcore) == run(torch)
