"""Forward values, dtypes and exception types found different from torch by
torch's OpInfo database (tools/opinfo_sweep.py), compared here against torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _pt(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def _same(got, want, rtol=1.3e-6, atol=1e-5):
    assert isinstance(got, ptcore.Tensor)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dt", ["bool", "int8", "float32"])
@pytest.mark.parametrize("shape,size", [((), ()), ((3,), ()), ((1,), ()), ((3,), (1,)),
                                        ((2, 3), (3,)), ((2, 3), (2, 3))])
def test_sum_to_size_dtype(dt, shape, size):
    # at::sum_to: an empty size is a full sum (bool/int -> int64), even of a 0-d tensor
    w = torch.ones(shape, dtype=getattr(torch, dt)).sum_to_size(size)
    g = ptcore.ones(shape, dtype=getattr(ptcore, dt)).sum_to_size(size)
    _same(g, w)


@pytest.mark.parametrize("dim", [None, 1])
def test_gradient_spacing_none(dim):
    x = torch.tensor([[1., 4., 9., 16.], [2., 3., 5., 8.]])
    want = torch.gradient(x, spacing=None, dim=dim)
    got = ptcore.gradient(_pt(x), spacing=None, dim=dim)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


@pytest.mark.parametrize("name", ["__rsub__", "__rpow__", "__rmod__", "__rdiv__",
                                  "__rtruediv__", "__rfloordiv__"])
@pytest.mark.parametrize("a,b", [([1.5, -2.0], [3.0, 0.5]), ([2, 3], [7, -7]),
                                 ([1 + 2j], [3 - 1j]), ([True], [False])])
def test_reflected_dunder_with_tensor(name, a, b):
    # torch's Tensor.__rsub__(other) etc. called by name with a tensor compute other op self
    ta, tb = torch.tensor(a), torch.tensor(b)
    pa, pb = ptcore.tensor(a), ptcore.tensor(b)
    try:
        want = getattr(ta, name)(tb)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(pa, name)(pb)
        return
    _same(getattr(pa, name)(pb), want)


def _out_cases(m):
    x = m.arange(6.).reshape(2, 3)
    i = m.tensor([[0, 1, 0]])
    return {
        "scatter": lambda o: m.scatter(x, 0, i, x[:1], out=o),
        "scatter_add": lambda o: m.scatter_add(x, 0, i, x[:1], out=o),
        "scatter_reduce": lambda o: m.scatter_reduce(x, 0, i, x[:1], "amax", out=o),
        "index_add": lambda o: m.index_add(x, 0, m.tensor([1]), x[:1], out=o),
        "index_copy": lambda o: m.index_copy(x, 0, m.tensor([1]), x[:1], out=o),
        "tril": lambda o: m.tril(x, out=o),
        "triu": lambda o: m.triu(x, 1, out=o),
        "diag": lambda o: m.diag(x, out=o),
        "view_copy": lambda o: m.view_copy(x, (3, 2), out=o),
        "permute_copy": lambda o: m.permute_copy(x, (1, 0), out=o),
        "slice_copy": lambda o: m.slice_copy(x, 1, 0, 2, out=o),
        "select_copy": lambda o: m.select_copy(x, 0, 1, out=o),
        "view_as_real_copy": lambda o: m.view_as_real_copy(x.to(m.complex64), out=o),
    }


@pytest.mark.parametrize("name", sorted(_out_cases(torch)))
@pytest.mark.parametrize("odt", ["float32", "float64", "int64", "complex64"])
def test_out_must_have_result_dtype(name, odt):
    # torch's structured non-TensorIterator ops refuse an out= of another dtype,
    # even a wider one ("Expected out tensor to have dtype float, but got double instead")
    fw, fg = _out_cases(torch)[name], _out_cases(ptcore)[name]
    wo, go = torch.empty(0, dtype=getattr(torch, odt)), ptcore.empty(0, dtype=getattr(ptcore, odt))
    try:
        want = fw(wo)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
            fg(go)
        return
    got = fg(go)
    assert got is go
    _same(go, want)


def test_unbind_copy_out_dtype():
    x = torch.arange(4.).reshape(2, 2)
    with pytest.raises(RuntimeError):
        torch.unbind_copy(x, out=[torch.empty(2, dtype=torch.float64)] * 2)
    px = ptcore.arange(4.).reshape(2, 2)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float"):
        ptcore.unbind_copy(px, out=[ptcore.empty(2, dtype=ptcore.float64)] * 2)
    outs = [ptcore.empty(2), ptcore.empty(2)]
    assert ptcore.unbind_copy(px, out=outs) is None
    _same(outs[1], torch.unbind_copy(x)[1])


def _alias_cases(m):
    F = m.nn.functional

    def take_idx():
        buf = m.tensor([0, 1, 0])
        return m.take(m.arange(3), buf[1:], out=buf[:2])

    def gather_idx():
        buf = m.tensor([0, 1, 0])
        return m.gather(m.arange(3), 0, buf[1:], out=buf[:1])

    x = m.arange(6.)
    i = m.tensor([0, 2, 1])
    mask = m.tensor([True, False, True, True, False, True])
    return {
        "take_out_is_input": lambda: m.take(x, i, out=x),
        "take_out_overlaps_index": take_idx,
        "gather_out_is_input": lambda: m.gather(x, 0, i, out=x),
        "gather_out_overlaps_index": gather_idx,
        "masked_select_out_is_input": lambda: m.masked_select(x, mask, out=x),
        "masked_select_out_is_mask": lambda: m.masked_select(mask, mask, out=mask),
        "kthvalue_values_is_input": lambda: m.kthvalue(x, 2, out=(x, m.empty((), dtype=m.int64))),
        "multinomial_float_out": lambda: m.multinomial(m.ones(1, 2, dtype=m.float64), 2,
                                                       out=m.empty(1, 2, dtype=m.float64)),
        "narrow_copy_dim_too_big": lambda: m.narrow_copy(m.ones(10, 5, 20), 3, 0, 0),
        "narrow_copy_dim_negative": lambda: m.narrow_copy(m.ones(10, 5, 20), -4, 0, 0),
        "adaptive_avg_pool2d_2d": lambda: F.adaptive_avg_pool2d(m.ones(2, 2), (2, 2)),
        "adaptive_avg_pool3d_3d": lambda: F.adaptive_avg_pool3d(m.ones(2, 2, 2), (2, 2, 2)),
        "adaptive_max_pool2d_2d": lambda: F.adaptive_max_pool2d(m.ones(2, 2), [None, 2]),
        "adaptive_max_pool3d_3d": lambda: F.adaptive_max_pool3d(m.ones(2, 2, 2), (2, 2, 2)),
        "adaptive_avg_pool2d_int": lambda: F.adaptive_avg_pool2d(m.ones(2, 2), 2),
    }


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(_alias_cases(torch)))
def test_error_type_as_torch(name):
    with pytest.raises(Exception) as want:
        _alias_cases(torch)[name]()
    with pytest.raises(want.type):
        _alias_cases(ptcore)[name]()


def test_gather_out_may_be_the_index():
    # assert_no_partial_overlap: the index itself may be the out
    for m in (torch, ptcore):
        idx = m.tensor([2, 0, 1])
        r = m.gather(m.tensor([5, 6, 7]), 0, idx, out=idx)
        assert r is idx and idx.tolist() == [7, 5, 6]


def _wider_out_cases(m):
    x = m.tensor([[2., 1.], [1., 3.]])
    E = lambda d: m.empty(0, dtype=getattr(m, d))  # noqa: E731
    return {
        "geqrf": lambda d: m.geqrf(x, out=(E(d), E(d))),
        "linalg.eig": lambda d: m.linalg.eig(x, out=(E(d), E(d))),
        "linalg.eigvals": lambda d: m.linalg.eigvals(x, out=E(d)),
        "linalg.lstsq": lambda d: m.linalg.lstsq(x, x, out=(E(d), E(d), E("int64"), E(d))),
        "matrix_power0": lambda d: m.linalg.matrix_power(x, 0, out=E(d)),
        "matrix_power1": lambda d: m.linalg.matrix_power(x, 1, out=E(d)),
        "matrix_power2": lambda d: m.linalg.matrix_power(x, 2, out=E(d)),
        "matrix_power-1": lambda d: m.linalg.matrix_power(x, -1, out=E(d)),
        "matrix_power4": lambda d: m.linalg.matrix_power(x, 4, out=E(d)),
        "matrix_power-8": lambda d: m.linalg.matrix_power(x, -8, out=E(d)),
        "matrix_power6": lambda d: m.linalg.matrix_power(x, 6, out=E(d)),
        "diff_n0": lambda d: m.diff(x, 0, out=E(d)),
        "diff_n1": lambda d: m.diff(x, 1, out=E(d)),
        "eye": lambda d: m.eye(2, dtype=m.float32, out=E(d)),
        "randn": lambda d: m.randn(2, dtype=m.float32, out=E(d)),
        "rand": lambda d: m.rand(2, dtype=m.float32, out=E(d)),
        "randint": lambda d: m.randint(0, 3, (2,), dtype=m.float32, out=E(d)),
        "randperm": lambda d: m.randperm(3, dtype=m.float32, out=E(d)),
        "normal": lambda d: m.normal(0., 1., (2,), dtype=m.float32, out=E(d)),
    }


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(_wider_out_cases(torch)))
@pytest.mark.parametrize("odt", ["float32", "float64", "complex128", "int64"])
def test_out_dtype_acceptance(name, odt):
    # which out dtypes torch takes: a copy into out (geqrf, eig, lstsq, matrix_power 0/1)
    # casts; factories refuse an out whose dtype is not the dtype= given
    try:
        want = _wider_out_cases(torch)[name](odt)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            _wider_out_cases(ptcore)[name](odt)
        return
    got = _wider_out_cases(ptcore)[name](odt)
    wl = list(want) if isinstance(want, tuple) else [want]
    gl = list(got) if isinstance(got, tuple) else [got]
    for g, w in zip(gl, wl):
        assert str(g.dtype).rsplit(".", 1)[-1] == str(w.dtype).rsplit(".", 1)[-1]
        if not (name.startswith(("rand", "normal", "linalg.eig")) or w.numel() == 0):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-6)


def _ti_out_cases(m):
    x = m.tensor([[0.5, -1.0, 2.0], [3.0, 0.25, -0.5]])
    lo, hi = m.zeros(2, 3), m.ones(2, 3)
    i = m.tensor([3, -2, 1])
    return {
        "clamp_tensor": lambda o: m.clamp(x, lo, hi, out=o),
        "clamp_min_tensor": lambda o: m.clamp_min(x, lo, out=o),
        "clamp_max_tensor": lambda o: m.clamp_max(x, hi, out=o),
        "clamp_max_none_min": lambda o: m.clamp(x, None, hi, out=o),
        "clamp_int_tensor": lambda o: m.clamp(i, m.zeros(3, dtype=m.int64), out=o),
        "clamp_scalar": lambda o: m.clamp(x, 0, 1, out=o),
        "lerp_tensor_weight": lambda o: m.lerp(x, hi, m.full((2, 3), 0.25), out=o),
        "lerp_0d_weight": lambda o: m.lerp(x, hi, m.tensor(0.25), out=o),
        "lerp_number_weight": lambda o: m.lerp(x, hi, 0.25, out=o),
    }


@pytest.mark.parametrize("name", sorted(_ti_out_cases(torch)))
@pytest.mark.parametrize("odt", ["float32", "float64", "int64", "bool"])
def test_clamp_lerp_out_dtype(name, odt):
    # clamp.Tensor casts into a wider out (a TensorIterator op); clamp.Scalar and
    # lerp with a tensor weight want exactly the result dtype
    wo, go = torch.empty(0, dtype=getattr(torch, odt)), ptcore.empty(0, dtype=getattr(ptcore, odt))
    try:
        want = _ti_out_cases(torch)[name](wo)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            _ti_out_cases(ptcore)[name](go)
        return
    got = _ti_out_cases(ptcore)[name](go)
    assert got is go
    _same(go, want)


@pytest.mark.parametrize("shape,size", [((1, 6, 3), 2), ((2, 5, 2, 3), 3), ((1, 4, 2, 2, 2), 2)])
def test_local_response_norm_integer_input(shape, size):
    # torch averages the squares with avg_pool, whose integer kernels truncate
    x = torch.randint(-50, 50, shape, generator=torch.Generator().manual_seed(0))
    want = torch.nn.functional.local_response_norm(x, size, alpha=3e-2, beta=0.5, k=1.25)
    got = ptcore.nn.functional.local_response_norm(_pt(x), size, alpha=3e-2, beta=0.5, k=1.25)
    _same(got, want)


def test_nonzero_as_tuple_out_tuple_is_type_error():
    for m in (torch, ptcore):
        with pytest.raises(TypeError):
            m.nonzero(m.ones(2), as_tuple=True, out=(m.empty(0, dtype=m.int64),))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("batch", [0, 2])
def test_unfold_fold_complex(dt, batch):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 3, 5, 5, dtype=getattr(torch, dt), generator=g)
    _same(ptcore.nn.functional.unfold(_pt(x), 2, 1, 1, 2),
          torch.nn.functional.unfold(x, 2, 1, 1, 2))
    y = torch.randn(max(batch, 1), 12, 9, dtype=getattr(torch, dt), generator=g)
    _same(ptcore.nn.functional.fold(_pt(y), (5, 5), 2, 1, 1, 2),
          torch.nn.functional.fold(y, (5, 5), 2, 1, 1, 2))


def _nn_out_cases(m):
    F = m.nn.functional
    x = m.tensor([[-2.0, -0.25, 0.0], [0.3, 1.5, 30.0]])
    w = m.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 1.0]])
    img = m.arange(32.).reshape(2, 4, 4)
    vol = m.arange(64.).reshape(1, 4, 4, 4)
    return {
        "gelu": lambda o: F.gelu(x, out=o),
        "gelu_tanh": lambda o: F.gelu(x, approximate="tanh", out=o),
        "softplus": lambda o: F.softplus(x, 2.0, 10.0, out=o),
        "softshrink": lambda o: F.softshrink(x, 0.5, out=o),
        "logsigmoid": lambda o: F.logsigmoid(x, out=o),
        "linear": lambda o: F.linear(x, w, out=o),
        "linear_bias": lambda o: F.linear(x, w, m.tensor([1.0, -1.0]), out=o),
        "avg_pool2d": lambda o: F.avg_pool2d(img, 2, out=o),
        "avg_pool3d": lambda o: F.avg_pool3d(vol, 2, out=o),
    }


@pytest.mark.parametrize("name", sorted(_nn_out_cases(torch)))
@pytest.mark.parametrize("odt", ["float32", "float64"])
def test_nn_functional_out(name, odt):
    # torch's F.gelu/softplus/softshrink/logsigmoid/linear/avg_pool2d/3d are its
    # torch._C._nn bindings, which take out= of exactly the result dtype
    wo, go = torch.empty(0, dtype=getattr(torch, odt)), ptcore.empty(0, dtype=getattr(ptcore, odt))
    try:
        want = _nn_out_cases(torch)[name](wo)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            _nn_out_cases(ptcore)[name](go)
        return
    got = _nn_out_cases(ptcore)[name](go)
    assert got is go
    _same(go, want)


def test_nn_functional_out_refuses_grad():
    for m in (torch, ptcore):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError):
            m.nn.functional.gelu(x, out=m.empty(3))


@pytest.mark.parametrize("case", ["internal", "input", "index"])
def test_index_select_out_aliasing(case):
    for m in (torch, ptcore):
        x = m.arange(18.).reshape(3, 6)
        idx = m.tensor([0, 1])
        if case == "internal":
            out = m.empty(6).expand(2, 6)
        elif case == "input":
            out = x
        else:
            idx = m.tensor([0, 1, 0, 0])
            x = idx
            out = idx[2:]
        with pytest.raises(RuntimeError, match="unsupported operation"):
            m.index_select(x, 1 if case != "index" else 0, idx[:2], out=out)


def test_float_power_of_two_numbers_is_type_error():
    for m in (torch, ptcore):
        with pytest.raises(TypeError):
            m.float_power(2, 3)
        assert m.float_power(2, m.tensor([3])).tolist() == [8.0]


@pytest.mark.parametrize("shape,k,st,ceil", [((1, 2, 3, 6), 3, 2, True), ((2, 5, 5), 2, 1, False),
                                             ((2, 3, 7, 4), 2, 2, False)])
def test_aten_max_pool2d_with_indices_backward(shape, k, st, ceil):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, dtype=torch.float64, generator=g)
    out, idx = torch.nn.functional.max_pool2d(x, k, st, 0, 1, ceil, return_indices=True)
    go = torch.randn(out.shape, dtype=torch.float64, generator=g)
    args = ([k, k], [st, st], [0, 0], [1, 1], ceil)
    want = torch.ops.aten.max_pool2d_with_indices_backward.default(go, x, *args, idx)
    got = ptcore.ops.aten.max_pool2d_with_indices_backward.default(_pt(go), _pt(x), *args, _pt(idx))
    _same(got, want)


@pytest.mark.parametrize("name", ["__rand__", "__ror__", "__rxor__", "__and__", "__mod__"])
def test_unbound_operator_with_number_self(name):
    for m in (torch, ptcore):
        with pytest.raises(TypeError):
            getattr(m.Tensor, name)(2, m.tensor([1, 2, 3]))


def _more_out_cases(m):
    z = m.tensor([0.5 + 1j, -2.0 - 0.25j, 1e-3 + 0j])
    t = m.ones(2, 3)
    c = m.tensor([[1 + 2j, 3 - 1j]])
    cases = {f"{n}_complex": (lambda n: lambda o: getattr(m, n)(z, out=o))(n)
             for n in ("log1p", "log10", "log2", "exp2", "expm1")}
    cases.update({
        "normal_tensors": lambda o: m.normal(t, t, out=o),
        "mean_all": lambda o: m.mean(c, out=o),
        "mean_dim_none": lambda o: m.mean(c, None, out=o),
        "mean_dim0": lambda o: m.mean(c, 0, out=o),
    })
    return cases


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(_more_out_cases(torch)))
@pytest.mark.parametrize("odt", ["float32", "int64", "complex64", "complex128"])
def test_more_out_dtype_rules(name, odt):
    # complex results refuse a real out ('result type ComplexFloat can't be cast'),
    # normal samples into out's dtype (NotImplementedError for integers), the
    # all-elements mean of a complex input refuses a real out (with a dim it casts)
    wo, go = torch.empty(0, dtype=getattr(torch, odt)), ptcore.empty(0, dtype=getattr(ptcore, odt))
    try:
        want = _more_out_cases(torch)[name](wo)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            _more_out_cases(ptcore)[name](go)
        return
    got = _more_out_cases(ptcore)[name](go)
    assert got is go
    if name.startswith("normal"):
        assert go.dtype == getattr(ptcore, odt) and tuple(go.shape) == tuple(want.shape)
    else:
        _same(go, want)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_logaddexp_complex_extremal(dt):
    # torch's _log_add_exp_helper: NaN parts give NaN, equal infinite real parts are
    # special-cased, and exp of a -inf real part is 0 whatever the imaginary part
    inf, nan = float("inf"), float("nan")
    vals = [complex(a, b) for a in (-inf, -1.5, 0.0, 2.0, inf) for b in (-inf, 0.5, inf, nan)]
    x = [v for v in vals for _ in vals]
    y = [w for _ in vals for w in vals]
    tx, ty = torch.tensor(x, dtype=getattr(torch, dt)), torch.tensor(y, dtype=getattr(torch, dt))
    want = torch.logaddexp(tx, ty)
    got = ptcore.logaddexp(_pt(tx), _pt(ty))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_nan_and_infinite_operands(name):
    inf, nan = float("inf"), float("nan")
    vals = [-inf, -1.0, 0.0, 0.5, 2.0, inf, nan]
    a = torch.tensor([u for u in vals for _ in vals], dtype=torch.float64)
    x = torch.tensor([v for _ in vals for v in vals], dtype=torch.float64)
    want = getattr(torch, name)(a, x)
    got = getattr(ptcore, name)(_pt(a), _pt(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("fn,kw", [("ihfft2", {"dim": 0}), ("ihfftn", {"dim": 0}),
                                   ("ihfftn", {"dim": (1,)}), ("ihfft2", {}), ("ihfftn", {})])
def test_ihfftn_one_axis_out_dtype(fn, kw):
    # over one axis torch's ihfftn/ihfft2 write through a conjugation: an out of
    # another complex dtype is refused; over more axes it is cast into
    x = torch.arange(30.).reshape(5, 6)
    wo = torch.empty(0, dtype=torch.complex128)
    go = ptcore.empty(0, dtype=ptcore.complex128)
    try:
        want = getattr(torch.fft, fn)(x, **kw, out=wo)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(ptcore.fft, fn)(_pt(x), **kw, out=go)
        return
    assert getattr(ptcore.fft, fn)(_pt(x), **kw, out=go) is go
    _same(go, want, rtol=1e-5)


@pytest.mark.parametrize("odt", ["float32", "float64", "int64", "complex64"])
@pytest.mark.parametrize("scalar_first", [True, False])
def test_inner_of_scalar_out_casts(odt, scalar_first):
    # torch's inner with a 0-d operand is mul(out=): a castable out
    s, t = torch.tensor(2.5), torch.arange(6.).reshape(2, 3)
    a, b = (s, t) if scalar_first else (t, s)
    wo, go = torch.empty(0, dtype=getattr(torch, odt)), ptcore.empty(0, dtype=getattr(ptcore, odt))
    try:
        torch.inner(a, b, out=wo)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ptcore.inner(_pt(a), _pt(b), out=go)
        return
    assert ptcore.inner(_pt(a), _pt(b), out=go) is go
    _same(go, wo)


def _bernoulli_cases(m):
    c = m.ones(2, dtype=m.complex64)
    h = m.full((2,), 0.5)
    return {
        "complex_input": lambda: m.bernoulli(c),
        "complex_input_real_out": lambda: m.bernoulli(c, out=m.empty(2)),
        "complex_out": lambda: m.bernoulli(h, out=m.empty(2, dtype=m.complex64)),
        "complex_input_scalar_p": lambda: m.bernoulli(c, 0.5),
    }


@pytest.mark.parametrize("name", sorted(_bernoulli_cases(torch)))
def test_bernoulli_complex_is_not_implemented(name):
    for m in (torch, ptcore):
        with pytest.raises(NotImplementedError):
            _bernoulli_cases(m)[name]()
    for d in ("int64", "bool", "float64"):
        o = ptcore.empty(0, dtype=getattr(ptcore, d))
        assert ptcore.bernoulli(ptcore.full((3,), 0.5), out=o) is o and o.dtype == getattr(ptcore, d)


def test_bernoulli_empty_complex_runs_no_kernel():
    for m in (torch, ptcore):
        e = m.empty(0, 3)
        assert m.bernoulli(e, out=m.empty(0, dtype=m.complex128)).shape == (0, 3)
        assert m.bernoulli(e.to(m.complex64)).dtype == m.complex64
        assert m.bernoulli(e.to(m.complex64), 0.5).shape == (0, 3)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("odt", ["float32", "float64"])
def test_native_batch_norm_out(training, odt):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 2, generator=g)
    args = [torch.ones(3), torch.zeros(3), torch.zeros(3), torch.ones(3)]
    wo = tuple(torch.empty(0, dtype=getattr(torch, odt)) for _ in range(3))
    go = tuple(ptcore.empty(0, dtype=getattr(ptcore, odt)) for _ in range(3))
    try:
        want = torch.native_batch_norm(x, *args, training, 0.1, 1e-5, out=wo)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            ptcore.native_batch_norm(_pt(x), *map(_pt, args), training, 0.1, 1e-5, out=go)
        return
    got = ptcore.native_batch_norm(_pt(x), *map(_pt, args), training, 0.1, 1e-5, out=go)
    for g_, w_, o in zip(got, want, go):
        assert g_ is o
        _same(g_, w_, rtol=1e-5)
