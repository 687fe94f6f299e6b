"""Namespace functions against NumPy 2 (array API compliant) where torch's semantics differ."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import ptcore
import ptcore.array_api as xp

_SET = settings(max_examples=40, deadline=None)
_FLOAT_DT = st.sampled_from([np.float32, np.float64])
_INT_DT = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8])


def _t(a):
    return ptcore.from_numpy(np.array(a, order="C", copy=True))


def _eq(out, ref, **kw):
    assert type(out) is ptcore.Tensor
    ref = np.asarray(ref)
    assert str(out.dtype).split(".")[-1] == str(ref.dtype), (out.dtype, ref.dtype)
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, equal_nan=True, **kw)


def _arrays(dtype, min_dims=0, max_dims=3, **kw):
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=4),
                      **kw)


@_SET
@given(st.data(), st.sampled_from(["add", "subtract", "multiply", "maximum", "minimum", "equal", "less"]))
def test_binary_zero_d_promotes_like_any_array(data, name):
    dt1, dt2 = data.draw(_INT_DT), data.draw(_INT_DT)
    a = data.draw(_arrays(dt1, max_dims=2, elements=st.integers(0, 5)))
    b = data.draw(hnp.arrays(dt2, (), elements=st.integers(0, 5)))
    if data.draw(st.booleans()):
        a, b = b, a
    with np.errstate(over="ignore"):
        ref = getattr(np, name)(a, b)
    _eq(getattr(xp, name)(_t(a), _t(b)), ref)


@_SET
@given(_arrays(np.float32, elements=st.floats(-10, 10, width=32)), st.floats(-4, 4, width=32),
       st.sampled_from(["add", "multiply", "divide", "atan2", "hypot", "copysign", "greater", "pow"]))
def test_python_scalar_on_either_side(a, s, name):
    if name == "pow":
        a = np.abs(a) + 1
    ours = (getattr(xp, name)(_t(a), s), getattr(xp, name)(s, _t(a)))
    with np.errstate(all="ignore"):
        refs = (getattr(np, name)(a, np.float32(s)), getattr(np, name)(np.float32(s), a))
    for out, ref in zip(ours, refs):
        _eq(out, ref, rtol=1e-5, atol=1e-6)


@_SET
@given(st.data(), st.sampled_from(["sum", "prod", "max", "min", "mean", "std", "var", "any", "all",
                                   "count_nonzero"]))
def test_reductions_axis_and_keepdims(data, name):
    a = data.draw(_arrays(np.float64, min_dims=1, elements=st.floats(-3, 3)))
    if name in ("max", "min") and a.size == 0:
        return
    axes = data.draw(st.one_of(st.none(), st.just(()),
                               st.lists(st.integers(0, a.ndim - 1), unique=True).map(tuple),
                               st.integers(-a.ndim, a.ndim - 1)))
    keep = data.draw(st.booleans())
    kw = {"axis": axes, "keepdims": keep}
    with np.errstate(all="ignore"), pytest.warns(None) if False else _nowarn():
        if name in ("max", "min") and axes is not None and axes != () and any(
                a.shape[i] == 0 for i in (axes if isinstance(axes, tuple) else (axes,))):
            return
        ref = getattr(np, name)(a, **kw)
        out = getattr(xp, name)(_t(a), **kw)
    if name == "count_nonzero":
        ref = np.asarray(ref, dtype=np.int64)
    _eq(out, ref, rtol=1e-10, atol=1e-12)


class _nowarn:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


@_SET
@given(_arrays(np.int8, min_dims=1, elements=st.integers(-5, 5)))
def test_sum_prod_of_small_ints_use_int64(a):
    _eq(xp.sum(_t(a)), np.sum(a, dtype=np.int64))
    _eq(xp.prod(_t(a), axis=0), np.prod(a, axis=0, dtype=np.int64))
    _eq(xp.sum(_t(a), axis=()), a.astype(np.int64))


@_SET
@given(_arrays(np.float64, min_dims=1, max_dims=1, elements=st.sampled_from([0.0, -0.0, 1.0, 2.0, np.nan])))
def test_unique_functions(a):
    x = _t(a)
    r_all = np.unique_all(a)
    o_all = xp.unique_all(x)
    for o, r in zip(o_all, r_all):
        _eq(o, r.astype(np.int64) if r.dtype.kind in "iu" else r)
    _eq(xp.unique_values(x), np.unique_values(a))
    v, c = xp.unique_counts(x)
    _eq(c, np.unique_counts(a).counts.astype(np.int64))
    v, inv = xp.unique_inverse(x)
    np.testing.assert_array_equal(v.numpy()[inv.numpy()], a)


@_SET
@given(_arrays(np.complex128, min_dims=1, max_dims=2,
               elements=st.sampled_from([0j, 1 + 1j, 1 - 1j, -2 + 1j, complex(0, -0.0), complex(np.nan, 0)])))
def test_unique_functions_of_complex_arrays(a):
    # torch has no complex sort or unique; the standard's unique_* take every dtype
    x = _t(a)
    # np.unique sorts complex values by real then imaginary part (unique_all may not sort them)
    refs = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for o, r in zip(xp.unique_all(x), refs):
        _eq(o, r.astype(np.int64) if r.dtype.kind in "iu" else r)
    _eq(xp.unique_values(x), refs[0])
    _eq(xp.unique_counts(x).counts, refs[3].astype(np.int64))
    v, inv = xp.unique_inverse(x)
    np.testing.assert_array_equal(v.numpy()[inv.numpy()], a)


def test_unique_inverse_keeps_the_input_shape():
    x = xp.asarray([[3, 1], [1, 2]])
    v, inv = xp.unique_inverse(x)
    assert inv.shape == (2, 2)
    np.testing.assert_array_equal(v.numpy()[inv.numpy()], x.numpy())


@_SET
@given(_arrays(np.int16, min_dims=1, elements=st.integers(0, 3)), st.booleans())
def test_sort_argsort_stable_descending(a, desc):
    x = _t(a)
    ref_idx = np.argsort(-a.astype(np.int64) if desc else a, axis=-1, kind="stable")
    _eq(xp.argsort(x, descending=desc), ref_idx.astype(np.int64))
    _eq(xp.sort(x, descending=desc), np.take_along_axis(a, ref_idx, -1))


@_SET
@given(st.data())
def test_take_and_take_along_axis_negative_indices(data):
    a = data.draw(_arrays(np.float32, min_dims=2, max_dims=2, elements=st.floats(-5, 5, width=32)).filter(
        lambda a: a.shape[0] > 0 and a.shape[1] > 0))
    idx = data.draw(hnp.arrays(np.int64, st.integers(0, 5), elements=st.integers(-a.shape[1], a.shape[1] - 1)))
    _eq(xp.take(_t(a), _t(idx), axis=1), np.take(a, idx, axis=1))
    idx2 = data.draw(hnp.arrays(np.int64, (a.shape[0], 3), elements=st.integers(-a.shape[1], a.shape[1] - 1)))
    _eq(xp.take_along_axis(_t(a), _t(idx2), axis=1), np.take_along_axis(a, idx2, axis=1))


def test_clip_with_array_bounds_keeps_dtype():
    a = np.array([[1, 5, 9], [0, -3, 7]], dtype=np.int16)
    lo, hi = np.array([0, 2, 3], dtype=np.int16), np.array(6, dtype=np.int16)
    _eq(xp.clip(_t(a), _t(lo), _t(hi)), np.clip(a, lo, hi))
    _eq(xp.clip(_t(a), 2, _t(hi)), np.clip(a, 2, hi))
    _eq(xp.clip(_t(a)), a)
    f = np.array([1.5, np.nan, -2.0], dtype=np.float32)
    _eq(xp.clip(_t(f), -1.0, 1.0), np.clip(f, -1.0, 1.0))


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(fn):
    a = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    for axis in (0, 1, -1):
        for inc in (False, True):
            _eq(getattr(xp, fn)(_t(a), axis=axis, include_initial=inc),
                getattr(np, fn)(a, axis=axis, include_initial=inc, dtype=np.int64))
    with pytest.raises(ValueError):
        getattr(xp, fn)(_t(a))
    f = np.array([0.5, 2.0, 3.0], dtype=np.float32)
    _eq(getattr(xp, fn)(_t(f)), getattr(np, fn)(f))


def test_searchsorted_diff_repeat_and_shapes():
    s = np.array([0.0, 1.0, 1.0, 3.0], dtype=np.float32)
    v = np.array([1.0, 2.0, -1.0], dtype=np.float32)
    for side in ("left", "right"):
        _eq(xp.searchsorted(_t(s), _t(v), side=side), np.searchsorted(s, v, side=side).astype(np.int64))
    _eq(xp.searchsorted(_t(s), 1.0), np.asarray(np.searchsorted(s, 1.0), dtype=np.int64))
    a = np.arange(12.0).reshape(3, 4) ** 2
    _eq(xp.diff(_t(a), axis=0, n=2), np.diff(a, axis=0, n=2))
    _eq(xp.diff(_t(a), prepend=_t(a[:, :1])), np.diff(a, prepend=a[:, :1]))
    _eq(xp.repeat(_t(a), 2), np.repeat(a, 2))
    _eq(xp.repeat(_t(a), _t(np.array([1, 0, 2])), axis=0), np.repeat(a, [1, 0, 2], axis=0))
    _eq(xp.expand_dims(_t(a), axis=(0, -1)), np.expand_dims(a, (0, -1)))
    _eq(xp.concat([_t(a), _t(a.astype(np.float32))], axis=None), np.concat([a, a.astype(np.float32)], axis=None))
    _eq(xp.stack([_t(a[0]), _t(a[1])], axis=1), np.stack([a[0], a[1]], axis=1))
    _eq(xp.squeeze(_t(a[None, :, None]), axis=(0, 2)), a)
    with pytest.raises(ValueError):
        xp.squeeze(_t(a), axis=0)
    _eq(xp.flip(_t(a)), np.flip(a))
    _eq(xp.roll(_t(a), 5), np.roll(a, 5))
    _eq(xp.moveaxis(_t(a[None]), 0, -1), np.moveaxis(a[None], 0, -1))
    _eq(xp.tile(_t(a), (2, 1)), np.tile(a, (2, 1)))
    for o, r in zip(xp.unstack(_t(a), axis=1), np.unstack(a, axis=1)):
        _eq(o, r)
    assert xp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    _eq(xp.isin(_t(a), _t(np.array([4.0, 9.0]))), np.isin(a, [4.0, 9.0]))


def test_creation_functions():
    _eq(xp.arange(5, 1), np.arange(5, 1))
    _eq(xp.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32))
    _eq(xp.eye(3, 4, k=1), np.eye(3, 4, k=1, dtype=np.float32))
    _eq(xp.eye(3, k=-5), np.eye(3, k=-5, dtype=np.float32))
    _eq(xp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False, dtype=np.float32))
    _eq(xp.full(3, 7), np.full(3, 7, dtype=np.int64))
    _eq(xp.full((2,), True), np.full(2, True))
    g = xp.meshgrid(xp.arange(3), xp.arange(2))
    r = np.meshgrid(np.arange(3), np.arange(2))
    assert isinstance(g, tuple)
    for o, ref in zip(g, r):
        _eq(o, ref)
    _eq(xp.tril(_t(np.ones((3, 3))), k=-1), np.tril(np.ones((3, 3)), k=-1))


@_SET
@given(_arrays(np.float64, elements=st.sampled_from([-2.5, -0.5, 0.0, 0.5, 1.5, np.nan, np.inf])))
def test_unary_special_cases(a):
    _eq(xp.sign(_t(a)), np.sign(a))
    _eq(xp.round(_t(a)), np.round(a))
    c = a + 1j * a[::-1] if a.ndim else a + 0j
    with np.errstate(all="ignore"):
        _eq(xp.round(_t(c)), np.round(c))
        _eq(xp.sign(_t(np.nan_to_num(c))), np.sign(np.nan_to_num(c)))
    _eq(xp.real(_t(a)), np.real(a))
    _eq(xp.imag(_t(c)), np.imag(c))
    _eq(xp.conj(_t(c)), np.conj(c))


@_SET
@given(st.data())
def test_floor_divide_and_remainder(data):
    a = data.draw(_arrays(np.int32, max_dims=2, elements=st.integers(-20, 20)))
    b = data.draw(hnp.arrays(np.int32, a.shape, elements=st.integers(-5, 5).filter(bool)))
    _eq(xp.floor_divide(_t(a), _t(b)), np.floor_divide(a, b))
    _eq(xp.remainder(_t(a), _t(b)), np.remainder(a, b))
    f = a.astype(np.float64) + 0.5
    _eq(xp.floor_divide(_t(f), -1.5), np.floor_divide(f, -1.5))
    _eq(xp.remainder(_t(f), -1.5), np.remainder(f, -1.5))


def test_result_type_and_can_cast():
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.result_type(xp.asarray(1, dtype=xp.int8), xp.int32) == xp.int32   # 0-D counts fully
    assert xp.result_type(xp.int8, 1) == xp.int8 and xp.result_type(xp.int8, 1.0) == xp.float32
    assert xp.result_type(xp.float32, xp.complex128) == xp.complex128
    assert xp.can_cast(xp.int8, xp.int16) and not xp.can_cast(xp.float64, xp.int64)
    with pytest.raises(ValueError):
        xp.result_type(1, 2.0)


def test_floor_divide_and_remainder_infinity_and_signed_zero_cases():
    # the standard's special cases (NumPy's floor_divide gives NaN for inf // finite; the
    # standard, and so the namespace, gives the signed infinity)
    inf = np.inf
    a = np.array([inf, inf, -inf, -inf, 3.0, -3.0, 3.0, -3.0, 7.0])
    b = np.array([2.0, -2.0, 2.0, -2.0, inf, -inf, -inf, inf, 2.0])
    out = xp.floor_divide(_t(a), _t(b)).numpy()
    ref = np.array([inf, -inf, -inf, inf, 0.0, 0.0, -0.0, -0.0, 3.0])
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))
    z = np.array([-0.0, 0.0, 5.0, -5.0])
    d = np.array([3.0, -3.0, 5.0, 5.0])
    out = xp.remainder(_t(z), _t(d)).numpy()
    ref = np.remainder(z, d)  # NumPy follows the standard here: +0, -0, +0, +0
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))
    assert np.signbit(xp.remainder(_t(np.array([0.0])), -2.0).numpy()).all()


def test_vecdot_dtype_and_contracted_axis_is_not_broadcast():
    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    b = np.array([1, 2, 3], dtype=np.uint8)
    _eq(xp.vecdot(_t(a), _t(b)), np.vecdot(a, b))
    _eq(xp.linalg.vecdot(_t(a), _t(b)), np.vecdot(a, b))
    c = np.arange(6.0).reshape(3, 2) + 1j
    _eq(xp.vecdot(_t(c), _t(c[:, :1]), axis=0), np.vecdot(c, c[:, :1], axis=0))
    with pytest.raises(ValueError, match="same size"):
        xp.vecdot(_t(a), _t(b[:1]))
    with pytest.raises(ValueError):
        xp.vecdot(_t(np.zeros(0)), _t(np.zeros(1)))


def test_broadcast_shapes_error_and_repeat_with_small_int_counts():
    with pytest.raises(ValueError):
        xp.broadcast_shapes((3,), (4,))
    with pytest.raises(RuntimeError):  # ptcore keeps torch's error type
        ptcore.broadcast_shapes((3,), (4,))
    a = np.array([True, False, True])
    for dt in (np.int8, np.uint8, np.int16, np.int32):
        r = np.array([2, 0, 1], dtype=dt)
        _eq(xp.repeat(_t(a), _t(r)), np.repeat(a, r))
    _eq(xp.repeat(_t(a[:0]), _t(np.zeros(0, np.int8))), np.repeat(a[:0], np.zeros(0, np.int8)))


def test_take_negative_and_empty_indices():
    a = np.arange(12.0).reshape(3, 4)
    for idx in ([0, 2, 1], [-1, 0, -4], []):
        i = np.array(idx, dtype=np.int64)
        _eq(xp.take(_t(a), _t(i), axis=1), np.take(a, i, axis=1))
    i = np.array([-3, 2], dtype=np.int32)
    _eq(xp.take(_t(a), _t(i), axis=0), np.take(a, i, axis=0))


def test_complex_expm1_special_cases():
    inf, nan = np.inf, np.nan
    z = np.array([complex(inf, 0), complex(-inf, inf), complex(inf, inf), complex(-inf, nan),
                  complex(inf, nan), complex(nan, 0), complex(1, 2), complex(1e-10, 1e-10)])
    out = xp.expm1(_t(z)).numpy()
    ref = np.array([complex(inf, 0), complex(-1, 0), complex(inf, nan), complex(-1, 0),
                    complex(inf, nan), complex(nan, 0), np.expm1(1 + 2j), np.expm1(1e-10 + 1e-10j)])
    np.testing.assert_allclose(out.real, ref.real, rtol=1e-12)
    np.testing.assert_allclose(np.abs(out.imag), np.abs(ref.imag), rtol=1e-12)
    _eq(xp.expm1(_t(np.array([0.5, -inf]))), np.expm1(np.array([0.5, -inf])))


def test_linalg_outer_keeps_the_sign_of_zero():
    a, b = np.array([-0.0, 2.0, 0.0]), np.array([3.0, -0.0, -1.0])
    out = xp.linalg.outer(_t(a), _t(b))
    ref = np.outer(a, b)
    _eq(out, ref)
    np.testing.assert_array_equal(np.signbit(out.numpy()), np.signbit(ref))


@pytest.mark.parametrize("ord", [2, 1, 0, np.inf, -np.inf, -1, 3])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norm_over_no_axis_is_elementwise(ord, keepdims):
    # axis=() reduces nothing (torch's dim=() reduces every axis)
    for a in (np.array([[3.0, -0.0, -4.0]]), np.array(-2.0 + 1j), np.array([1 - 1j, 0j], np.complex64)):
        ref = np.linalg.vector_norm(a, axis=(), ord=ord, keepdims=keepdims)
        _eq(xp.linalg.vector_norm(_t(a), axis=(), ord=ord, keepdims=keepdims), ref, rtol=1e-6)


def test_linalg_cross_broadcasts_other_axes():
    a = np.arange(3, dtype=np.uint8)
    b = (np.arange(12, dtype=np.uint8) % 5).reshape(4, 3)
    _eq(xp.linalg.cross(_t(a), _t(b)), np.linalg.cross(a, b))
    f = np.arange(6.0).reshape(3, 2)
    _eq(xp.linalg.cross(_t(f), _t(f[:, ::-1].copy()), axis=-2), np.cross(f, f[:, ::-1], axis=-2))
