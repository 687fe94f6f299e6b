"""Differences the parity fuzz helpers found outside their own files, against
torch: clamp's gradient where the incoming gradient is inf/NaN outside the
band (it was NaN: g * mask; torch's where(mask, g, 0) gives 0); tensor() of
a NumPy array with a negative stride raises torch's ValueError (it copied)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def test_clamp_gradient_is_zero_outside_the_band_even_for_inf_gradients():
    for L in (torch, ptcore):
        x = L.tensor([0.5, 2.0, float("nan")], requires_grad=True)
        (1 / (x.clamp(min=1) - 1)).sum().backward()
        assert x.grad.tolist() == [0.0, -1.0, 0.0]
        x = L.tensor([[0.5, 2.0]], requires_grad=True)
        (1 / (x.clamp(max=1.0) - 1)).sum().backward()
        assert x.grad.tolist() == [[-4.0, 0.0]]


def test_clamp_tensor_bounds_gradients():
    res = []
    for L in (torch, ptcore):
        x = L.tensor([0.5, 2.0, 3.0], requires_grad=True)
        lo = L.tensor([1.0, 1.0, 1.0], requires_grad=True)
        hi = L.tensor([2.5], requires_grad=True)
        (L.clamp(x, lo, hi) * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        res.append((x.grad.tolist(), lo.grad.tolist(), hi.grad.tolist()))
    assert res[0] == res[1]


@pytest.mark.parametrize("make", [lambda: np.arange(3)[::-1], lambda: np.arange(6.0).reshape(2, 3)[:, ::-1]])
def test_tensor_of_negatively_strided_numpy_raises(make):
    for L in (torch, ptcore):
        with pytest.raises(ValueError, match="negative"):
            L.tensor(make())
    # a list holding such an array, and positive steps, are copied as torch's
    assert ptcore.tensor([np.arange(3)[::-1]]).tolist() == [[2, 1, 0]]
    assert ptcore.tensor(np.arange(5)[::2]).tolist() == [0, 2, 4]


def test_setitem_false_selects_nothing_whatever_the_value():
    for L in (torch, ptcore):
        x = L.zeros(4)
        x[False] = L.ones(2)
        x[False] = 5.0
        assert x.tolist() == [0.0] * 4
        with pytest.raises(RuntimeError):
            x[None, False] = L.ones(3)          # with other indices the shape is checked


def test_gradient_through_views_of_empty_leaves_with_zero_strides():
    import numpy as np
    for L in (torch, ptcore):
        x = L.from_numpy(np.zeros((0, 2))).requires_grad_()      # NumPy's strides (0, 0)
        assert tuple(L.autograd.grad(x[:, 1:].sum(), [x])[0].shape) == (0, 2)
        x = L.from_numpy(np.zeros((3, 0, 2))).requires_grad_()
        (g,) = L.autograd.grad(x.transpose(0, 2)[1:].sum() + x.sum(), [x])
        assert tuple(g.shape) == (3, 0, 2)
        x = L.from_numpy(np.zeros((2, 3))).requires_grad_()
        (g,) = L.autograd.grad(x[:, 1:1].sum() + x[0].sum(), [x])
        assert g.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3).index_add(0, L.tensor([-1]), L.ones(1)),
    lambda L: L.zeros(3).index_add(0, L.tensor([5]), L.ones(1)),
    lambda L: L.zeros(1, 0).index_add(1, L.tensor([0, 0, 0]), L.ones(1, 3)),
    lambda L: L.zeros(3, 1, 3).index_copy(1, L.tensor(0), L.ones(3, 3, 3)),
    lambda L: L.zeros(3, 1, 3).index_copy(1, L.tensor(0), L.ones(3, 1, 3)),
    lambda L: L.zeros(4).put_(L.tensor([0, 1]), L.ones(3)),
    lambda L: L.frexp(L.ones(2), out=L.zeros(0)),
])
def test_index_write_errors_as_torch(case):
    """index_add out of range is IndexError (was RuntimeError) and checks no index when
    self is empty; index_copy with a 0-d index and a source of another size is
    IndexError (was a reshape error); put_ with mismatched counts is IndexError;
    frexp(out=<one tensor>) is TypeError."""
    out = []
    for L in (torch, ptcore):
        try:
            r = case(L)
            out.append(("ok", tuple(r.shape)))
        except Exception as e:      # noqa: BLE001 - the exception type is the point
            out.append((type(e).__name__,))
    assert out[0] == out[1]


def test_cdist_empty_coordinates_and_half_as_torch():
    """cdist of rows with no coordinates is all zeros for every p (the inf norm
    raised); float16/bfloat16 on the CPU raise torch's NotImplementedError."""
    for L in (torch, ptcore):
        for p in (0.0, 0.5, 1.0, 2.0, float("inf")):
            r = L.cdist(L.ones(3, 0), L.ones(5, 0), p=p)
            assert tuple(r.shape) == (3, 5) and float(r.abs().sum()) == 0.0
        for dt in (L.float16, L.bfloat16):
            with pytest.raises(NotImplementedError, match="cdist"):
                L.cdist(L.ones(3, 2, dtype=dt), L.ones(5, 2, dtype=dt))


def test_norm_dtype_must_not_narrow():
    for L in (torch, ptcore):
        for kw in ({}, {"p": 1}, {"p": "nuc"}):
            x = L.ones(3, 3, dtype=L.float64)
            with pytest.raises(RuntimeError, match="without narrowing"):
                L.norm(x, dtype=L.float32, **kw)
        assert L.norm(L.ones(3), dtype=L.float64).dtype == L.float64


def test_linalg_vecdot_refuses_integers_array_api_takes_them():
    for L in (torch, ptcore):
        with pytest.raises(RuntimeError, match="floating point or complex"):
            L.linalg.vecdot(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64))
    import ptcore.array_api as xp
    r = xp.vecdot(xp.asarray([1, 2, 3]), xp.asarray([4, 5, 6]))
    assert int(r) == 32 and r.dtype == xp.int64


@pytest.mark.parametrize("A,info", [([[float("inf"), -float("inf")], [-float("inf"), 1.0]], 2),
                                    ([[1.0, 0.0], [float("inf"), 1.0]], 2),
                                    ([[float("nan"), 0.0], [0.0, 1.0]], 1),
                                    ([[4.0, 2.0], [2.0, float("inf")]], 0)])
def test_cholesky_of_non_finite_input_as_reference_lapack(A, info):
    """An inf entry made the optimised potrf finish with info 0 and a finite-looking
    factor; torch's (reference LAPACK's) unblocked factorization gives NaN below an
    inf pivot and fails at the next pivot (LinAlgError from linalg.cholesky)."""
    import numpy as np
    for dt in ("float64", "float32"):
        ref = torch.linalg.cholesky_ex(torch.tensor(A, dtype=getattr(torch, dt)))
        got = ptcore.linalg.cholesky_ex(ptcore.tensor(A, dtype=getattr(ptcore, dt)))
        assert int(got.info) == int(ref.info) == info
        np.testing.assert_array_equal(got.L.numpy(), ref.L.numpy())
    if info:
        with pytest.raises(ptcore.linalg.LinAlgError):
            ptcore.linalg.cholesky(ptcore.tensor(A, dtype=ptcore.float64))


def test_digamma_of_large_negative_arguments():
    """The reflection's tangent took pi * x, which loses x's fraction for large
    |x| (digamma(-1e15 - 0.5) was 35.54 where torch and mpmath give 34.54); it
    takes the fractional part, as torch's calc_digamma."""
    xs = [-1e15 - 0.5, -88048835816434.97, -1e10 - 0.5, -123456.25, -2.5, -0.3]
    want = torch.digamma(torch.tensor(xs, dtype=torch.float64)).numpy()
    got = ptcore.digamma(ptcore.tensor(xs, dtype=ptcore.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isnan(ptcore.digamma(ptcore.tensor([-1e15], dtype=ptcore.float64)).item())


def _raised(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 -- the type is compared
        return type(e)
    return None


def test_non_tensor_arguments_and_size_types_raise_as_torch():
    """is_floating_point(1.5) raised AttributeError, is_conj(1.5) returned False,
    rand(2.0)/rand(True)/rand('2')/rand((2.0,)) made tensors; torch raises TypeError."""
    import numpy as np
    for name in ("is_floating_point", "is_complex", "is_conj", "numel"):
        for v in (1.5, 1j, [1.0]):
            assert _raised(lambda: getattr(ptcore, name)(v)) is TypeError
            assert _raised(lambda: getattr(torch, name)(v)) is TypeError
    for args in ((2.0,), (True,), ("2",), ((2.0,),), (2, 3.0), ((True, 2),)):
        assert _raised(lambda: torch.rand(*args)) is TypeError
        assert _raised(lambda: ptcore.rand(*args)) is TypeError
        assert _raised(lambda: ptcore.randn(*args)) is TypeError
    for args in ((2, 3), ((2, 3),), (np.int64(3),), (ptcore.Size([2, 3]),), ((2, True),)):
        assert ptcore.rand(*args).shape == torch.rand(*args).shape
    assert ptcore.rand(ptcore.tensor(3)).shape == (3,)


@pytest.mark.parametrize("shape,kw", [((3, 8), {"size": (4,)}), ((3, 8), {"size": 4}),
                                      ((1, 3, 8), {"size": 4, "mode": "bogus"}),
                                      ((3, 8), {"size": 4, "antialias": True, "mode": "bilinear"}),
                                      ((3, 8), {"scale_factor": (2.0, 2.0)}), ((1, 3, 8), {})])
def test_interpolate_checks_in_torchs_order(shape, kw):
    """interpolate(ones(3, 8), size=(4,)): torch's size check (ValueError) comes
    before the input-rank NotImplementedError (ptcore raised that first)."""
    assert _raised(lambda: ptcore.nn.functional.interpolate(ptcore.ones(*shape), **kw)) is \
        _raised(lambda: torch.nn.functional.interpolate(torch.ones(*shape), **kw))
