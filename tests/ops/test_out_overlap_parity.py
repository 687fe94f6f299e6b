"""torch's checks of the tensor an op writes and of its ``out=`` argument, found
by sweeping torch's namespace with ``f(x[:6], out=x[1:7])`` and its variants:
an ``out=`` partly over an input is refused (being exactly an input is
allowed), an ``out=`` whose elements share memory is refused, and an ``out=``
of the wrong type, or one a signature does not take, is torch's TypeError.
Each case runs on torch and ptcore: the same exception type, or the same
values (the result and the whole buffer written into) when both accept it."""

import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _base(lib):
    return lib.arange(1., 9., dtype=lib.float64) / 10 + 0.05


def _outcome(case, lib):
    b = _base(lib)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = case(lib, b)
    except Exception as e:      # noqa: BLE001 (the type is what is compared)
        return type(e)
    rs = r if isinstance(r, (tuple, list)) else (r,)
    return [np.asarray(t.numpy()) for t in rs if hasattr(t, "numpy")] + [b.numpy().copy()]


def _same(case, values=True, rtol=1e-12):
    """torch's and ptcore's outcome of ``case``: the same exception type, or
    (``values``) the same results and written buffer."""
    t, p = _outcome(case, torch), _outcome(case, ptcore)
    if isinstance(t, type):
        assert p is t, (t, p)
    else:
        assert not isinstance(p, type), f"ptcore raised {p.__name__}, torch gave values"
        assert len(p) == len(t)
        for a, e in zip(p if values else (), t):
            np.testing.assert_allclose(a, e, rtol=rtol, atol=1e-15)
    return t


def _f(name):
    """``lib.name`` for a dotted name (``nn.functional.hardshrink``)."""
    def get(lib):
        obj = lib
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    return get


# (name, call of fn on the base tensor b with the given out)
UNARY_OUT = ["diff", "sinc", "special.sinc", "hardshrink", "nn.functional.hardshrink", "msort",
             "nn.functional.gelu", "nn.functional.softplus", "nn.functional.softshrink"]


@pytest.mark.parametrize("name", UNARY_OUT)
def test_out_partly_over_the_input_is_refused(name):
    assert _same(lambda lib, b: _f(name)(lib)(b[:6], out=b[1:7])) is RuntimeError


@pytest.mark.parametrize("name", ["sinc", "hardshrink", "msort", "nn.functional.gelu",
                                  "nn.functional.softplus", "nn.functional.softshrink"])
def test_out_that_is_the_input_is_allowed(name):
    assert not isinstance(_same(lambda lib, b: _f(name)(lib)(b, out=b)), type)


@pytest.mark.parametrize("name", UNARY_OUT)
def test_out_with_elements_sharing_memory_is_refused(name):
    def case(lib, b):
        return _f(name)(lib)(b[:6], out=lib.zeros(1, dtype=lib.float64).expand(6))
    assert _same(case) is RuntimeError


@pytest.mark.parametrize("call", [
    lambda lib, b: lib.diff(b, out=b[:7]),           # out over the first 7 of the input
    lambda lib, b: lib.diff(b[:6], out=b[:5]),
    lambda lib, b: lib.diff(b, n=0, out=b[1:]),
    lambda lib, b: lib.msort(b[2:8], out=b[:6]),
], ids=["diff_prefix", "diff_short", "diff_n0", "msort_shifted"])
def test_more_partial_overlaps_are_refused(call):
    assert _same(call) is RuntimeError


@pytest.mark.parametrize("call", [
    lambda lib, b: lib.diff(b[:6], n=2, out=b[1:5]),     # the input of the last step is a temporary
    lambda lib, b: lib.diff(b[:6], prepend=b[:2], out=b[1:8]),
    lambda lib, b: lib.diff(b, n=0, out=b),
    lambda lib, b: lib.msort(b[:6], out=b),              # resized to the input's own memory first
    lambda lib, b: lib.hardshrink(b, 0.3, out=b),
], ids=["diff_n2", "diff_prepend", "diff_n0_self", "msort_resized", "hardshrink_lambd"])
def test_overlaps_torch_allows_give_its_values(call):
    assert not isinstance(_same(call), type)


def test_overlap_is_checked_before_the_dtype():
    # torch's TensorIterator checks the memory first: an integer out partly over
    # an integer input is the overlap error, not sinc's float result cast
    def case(lib, b):
        x = lib.arange(8)
        return lib.sinc(x[:6], out=x[1:7])
    assert _same(case) is RuntimeError


@pytest.mark.parametrize("call", [
    lambda lib, b: lib.prod(b, out=b[:1]),                       # prod(input, *, dtype): no out=
    lambda lib, b: lib.prod(b, dtype=lib.float64, out=lib.zeros((), dtype=lib.float64)),
    lambda lib, b: lib.argsort(b, out=lib.zeros(8, dtype=lib.int64)),    # out= needs stable=
    lambda lib, b: lib.argsort(b, dim=0, out=lib.zeros(8, dtype=lib.int64)),
    lambda lib, b: lib.eye(b[:6], out=b[1:7]),                   # n: an int or a 1-element tensor
    lambda lib, b: lib.eye(3, lib.arange(2)),
    lambda lib, b: lib.expand_copy(b, out=b),                    # the copied view's argument
    lambda lib, b: lib.permute_copy(b),
    lambda lib, b: lib.view_copy(b, out=b),
    lambda lib, b: lib.unbind_copy(b, out=b),                    # out: a tuple of Tensors
    lambda lib, b: lib.alias_copy(b, out=[b]),                   # out: a Tensor
    lambda lib, b: lib.t_copy(b, out=(b,)),
    lambda lib, b: lib.diff(b, out=(b,)),
    lambda lib, b: lib.sinc(b, out=[b]),
    lambda lib, b: lib.slogdet(b[:6], out=b[1:7]),               # before the input's checks
    lambda lib, b: lib.qr(b[:6], out=b[1:7]),
    lambda lib, b: lib.svd(b[:6], out=b[1:7]),
    lambda lib, b: lib.geqrf(b[:6], out=b[1:7]),
    lambda lib, b: lib.linalg.svd(b[:4].view(2, 2), out=(b, b)),     # 3 outputs
    lambda lib, b: lib.linalg.eig(b[:6], out=b),
    lambda lib, b: lib.linalg.lu_factor_ex(b[:6], out=(b, b)),
    lambda lib, b: lib.linalg.inv(b[:4].view(2, 2), out=(b,)),
    lambda lib, b: lib.linalg.det(b[:6], out=[b]),
    lambda lib, b: lib.linalg.vector_norm(b, out="x"),
], ids=["prod_all", "prod_dtype", "argsort", "argsort_dim", "eye_tensor", "eye_m_tensor",
        "expand_copy", "permute_copy", "view_copy", "unbind_copy", "alias_copy", "t_copy",
        "diff_tuple", "sinc_list", "slogdet", "qr", "svd", "geqrf", "linalg_svd_len",
        "linalg_eig", "lu_factor_ex", "linalg_inv_tuple", "linalg_det_list",
        "vector_norm_str"])
def test_argument_errors_are_type_errors(call):
    assert _same(call) is TypeError


@pytest.mark.parametrize("call", [
    lambda lib, b: lib.prod(b, 0, out=lib.zeros((), dtype=lib.float64)),
    lambda lib, b: lib.argsort(b, stable=True, out=lib.zeros(8, dtype=lib.int64)),
    lambda lib, b: lib.eye(lib.tensor([3])),
    lambda lib, b: lib.expand_copy(b[:1], (3,), out=lib.zeros(3, dtype=lib.float64)),
    lambda lib, b: lib.unbind_copy(b[:4].view(2, 2), out=[lib.zeros(2, dtype=lib.float64),
                                                          lib.zeros(2, dtype=lib.float64)]),
    lambda lib, b: lib.linalg.svd(b[:4].view(2, 2) + lib.eye(2, dtype=lib.float64),
                                  out=tuple(lib.zeros(0, dtype=lib.float64) for _ in range(3)))[1],
], ids=["prod_dim", "argsort_stable", "eye_one_element", "expand_copy", "unbind_copy",
        "linalg_svd"])
def test_the_accepted_forms_still_work(call):
    assert not isinstance(_same(call), type)


def _m(b, lo, *shape):
    """``b[lo:lo + prod(shape)]`` viewed as ``shape``."""
    return b[lo:lo + int(np.prod(shape))].view(*shape)


def _z(lib, *shape):
    return lib.zeros(*shape, dtype=lib.float64)


SPECIAL_UNARY = ["entr", "ndtri", "log_ndtr", "erfcx", "i1e", "bessel_j0", "airy_ai",
                 "spherical_bessel_j0", "scaled_modified_bessel_k0"]
SPECIAL_BINARY = ["xlog1py", "zeta", "hermite_polynomial_h", "chebyshev_polynomial_t"]


@pytest.mark.parametrize("name", SPECIAL_UNARY + SPECIAL_BINARY)
def test_special_out_partly_over_an_input_is_refused(name):
    f = _f("special." + name)
    if name in SPECIAL_UNARY:
        assert _same(lambda lib, b: f(lib)(b[:6], out=b[1:7])) is RuntimeError
        assert not isinstance(_same(lambda lib, b: f(lib)(b, out=b)), type)
    else:
        assert _same(lambda lib, b: f(lib)(b[:6], b[2:8], out=b[1:7])) is RuntimeError
        assert _same(lambda lib, b: f(lib)(b[2:8], b[:6], out=b[1:7])) is RuntimeError
        assert not isinstance(_same(lambda lib, b: f(lib)(b, b.flip(0), out=b)), type)


# calls torch refuses: an out= partly over an input (or sharing memory with one at all,
# for cross), judged after out's resize where torch resizes it first
REFUSED = {
    "cumsum": lambda lib, b: lib.cumsum(b[:6], 0, out=b[1:7]),
    "cumsum_2d": lambda lib, b: lib.cumsum(_m(b, 0, 2, 3), 1, out=_m(b, 1, 2, 3)),
    "cumprod": lambda lib, b: lib.cumprod(b[:6], 0, out=b[1:7]),
    "logcumsumexp": lambda lib, b: lib.logcumsumexp(b[:6], 0, out=b[1:7]),
    "sort": lambda lib, b: lib.sort(b[:6], out=(b[1:7], lib.zeros(6, dtype=lib.int64))),
    "sort_stable": lambda lib, b: lib.sort(b[:6], stable=True,
                                           out=(b[1:7], lib.zeros(6, dtype=lib.int64))),
    "topk": lambda lib, b: lib.topk(b[:6], 3, out=(b[1:4], lib.zeros(3, dtype=lib.int64))),
    "topk_resized": lambda lib, b: lib.topk(b[:6], 3, out=(b[:6], lib.zeros(3, dtype=lib.int64))),
    "mode": lambda lib, b: lib.mode(b[:6], out=(b[1:2], lib.zeros(1, dtype=lib.int64))),
    "addmm": lambda lib, b: lib.addmm(_m(b, 0, 2, 2), _z(lib, 2, 2), _z(lib, 2, 2),
                                      out=_m(b, 1, 2, 2)),
    "addmv": lambda lib, b: lib.addmv(b[:2], _z(lib, 2, 2), _z(lib, 2), out=b[1:3]),
    "addr_self": lambda lib, b: lib.addr(_m(b, 0, 2, 2), _z(lib, 2), _z(lib, 2),
                                         out=_m(b, 1, 2, 2)),
    "addr_vec": lambda lib, b: lib.addr(_z(lib, 2, 2), b[:2], b[2:4], out=_m(b, 1, 2, 2)),
    "baddbmm": lambda lib, b: lib.baddbmm(_m(b, 0, 1, 2, 2), _z(lib, 1, 2, 2), _z(lib, 1, 2, 2),
                                          out=_m(b, 1, 1, 2, 2)),
    "addbmm": lambda lib, b: lib.addbmm(_m(b, 0, 2, 2), _z(lib, 1, 2, 2), _z(lib, 1, 2, 2),
                                        out=_m(b, 1, 2, 2)),
    "outer": lambda lib, b: lib.outer(b[:2], b[2:4], out=_m(b, 1, 2, 2)),
    "outer_full": lambda lib, b: lib.outer(b[:2], b[2:4], out=_m(b, 0, 2, 2)),
    "ger": lambda lib, b: lib.ger(_z(lib, 2), b[2:4], out=_m(b, 1, 2, 2)),
    "kron": lambda lib, b: lib.kron(b[:2], _z(lib, 2), out=b[1:5]),
    "cross": lambda lib, b: lib.cross(_m(b, 0, 1, 3), _m(b, 3, 1, 3), dim=1, out=_m(b, 1, 1, 3)),
    "cross_same": lambda lib, b: lib.cross(b[:3], _z(lib, 3), dim=0, out=b[:3]),
    "linalg_cross": lambda lib, b: lib.linalg.cross(_z(lib, 3), b[:3], out=b[:3]),
    "complex": lambda lib, b: lib.complex(b[:2], b[2:4], out=b.view(lib.complex128)[:2]),
    "frexp_mantissa": lambda lib, b: lib.frexp(b[:6], out=(b[1:7], lib.zeros(6, dtype=lib.int32))),
    "polygamma": lambda lib, b: lib.polygamma(1, b[:6], out=b[1:7]),
    "renorm": lambda lib, b: lib.renorm(_m(b, 0, 2, 3), 2, 0, 1., out=_m(b, 1, 2, 3)),
}

# the same ops with an out= that is an input's own memory (or with no input's), as torch allows
ALLOWED = {
    "cumsum": lambda lib, b: lib.cumsum(b, 0, out=b),
    "cumsum_resized": lambda lib, b: lib.cumsum(b[:6], 0, out=b),
    "cumprod": lambda lib, b: lib.cumprod(b, 0, out=b),
    "logcumsumexp": lambda lib, b: lib.logcumsumexp(b, 0, out=b),
    "sort": lambda lib, b: lib.sort(b, out=(b, lib.zeros(8, dtype=lib.int64))),
    "sort_resized": lambda lib, b: lib.sort(b[:6], out=(b, lib.zeros(8, dtype=lib.int64))),
    "topk_indices": lambda lib, b: lib.topk(b[:6], 3, out=(_z(lib, 3), lib.zeros(3, dtype=lib.int64))),
    "addmm": lambda lib, b: lib.addmm(_m(b, 0, 2, 2), _m(b, 4, 2, 2), _m(b, 4, 2, 2),
                                      out=_m(b, 0, 2, 2)),
    "addmv": lambda lib, b: lib.addmv(b[:2], _z(lib, 2, 2), _z(lib, 2), out=b[:2]),
    "addr": lambda lib, b: lib.addr(_m(b, 0, 2, 2), _z(lib, 2), _z(lib, 2), out=_m(b, 0, 2, 2)),
    "baddbmm": lambda lib, b: lib.baddbmm(_m(b, 0, 1, 2, 2), _z(lib, 1, 2, 2), _z(lib, 1, 2, 2),
                                          out=_m(b, 0, 1, 2, 2)),
    "addbmm": lambda lib, b: lib.addbmm(_m(b, 0, 2, 2), _z(lib, 1, 2, 2), _z(lib, 1, 2, 2),
                                        out=_m(b, 0, 2, 2)),
    "frexp": lambda lib, b: lib.frexp(b, out=(b, lib.zeros(8, dtype=lib.int32))),
    "polygamma": lambda lib, b: lib.polygamma(1, b, out=b),
    "renorm": lambda lib, b: lib.renorm(_m(b, 0, 2, 3), 2, 0, 1., out=_m(b, 0, 2, 3)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_out_over_an_input_is_refused_as_torch(name):
    assert _same(REFUSED[name]) is RuntimeError


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_out_over_an_input_torch_allows(name):
    assert not isinstance(_same(ALLOWED[name], rtol=1e-8), type)


# accepted by torch, whose kernels then read what they already wrote (its values
# are not ptcore's): only that both accept the call is compared
ACCEPTED = {
    "addmm_expanded_input": lambda lib, b: lib.addmm(b[:2], _z(lib, 2, 2), _z(lib, 2, 2),
                                                     out=_m(b, 1, 2, 2)),
    "complex_resized": lambda lib, b: lib.complex(b[:2], _z(lib, 2),
                                                  out=b.view(lib.complex128)[:1]),
    "mm_over_an_operand": lambda lib, b: lib.mm(_m(b, 0, 2, 2), _m(b, 4, 2, 2),
                                                out=_m(b, 1, 2, 2)),
    "cummax": lambda lib, b: lib.cummax(b[:6], 0, out=(b[1:7], lib.zeros(6, dtype=lib.int64))),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_out_over_an_input_torch_accepts(name):
    assert not isinstance(_same(ACCEPTED[name], values=False), type)


def _i(lib):
    return lib.tensor([0, 1])


# scatter/index_add/index_copy and their reductions write self (or out=, input's copy) in
# place: torch refuses a source sharing any memory with it
SOURCE_OVER_SELF = {
    "index_add_": lambda lib, b: b.index_add_(0, _i(lib), b[2:4]),
    "index_add_alpha": lambda lib, b: b.index_add_(0, _i(lib), b[6:8], alpha=2),
    "index_copy_": lambda lib, b: b.index_copy_(0, _i(lib), b[2:4]),
    "scatter_": lambda lib, b: b.scatter_(0, _i(lib), b[2:4]),
    "scatter_add_": lambda lib, b: b.scatter_add_(0, _i(lib), b[2:4]),
    "scatter_reduce_": lambda lib, b: b.scatter_reduce_(0, _i(lib), b[2:4], "sum"),
    "index_reduce_": lambda lib, b: b.index_reduce_(0, _i(lib), b[2:4], "prod"),
    "index_add_out": lambda lib, b: lib.index_add(b, 0, _i(lib), b[2:4], out=b),
    "index_copy_out": lambda lib, b: lib.index_copy(b, 0, _i(lib), b[2:4], out=b),
    "scatter_out": lambda lib, b: lib.scatter(b, 0, _i(lib), b[2:4], out=b),
    "scatter_add_out": lambda lib, b: lib.scatter_add(b, 0, _i(lib), b[2:4], out=b),
    "scatter_reduce_out": lambda lib, b: lib.scatter_reduce(b, 0, _i(lib), b[2:4], "sum", out=b),
    "index_reduce_out": lambda lib, b: lib.index_reduce(b, 0, _i(lib), b[2:4], "prod", out=b),
}


@pytest.mark.parametrize("name", sorted(SOURCE_OVER_SELF))
def test_source_sharing_memory_with_the_written_tensor_is_refused(name):
    assert _same(SOURCE_OVER_SELF[name]) is RuntimeError


@pytest.mark.parametrize("call", [
    lambda lib, b: b[:6].index_add_(0, _i(lib), _z(lib, 2)),
    lambda lib, b: b[:6].index_copy_(0, _i(lib), b.clone()[6:8]),
    lambda lib, b: b.scatter_(0, _i(lib), 0.5),
    lambda lib, b: lib.scatter_add(b, 0, _i(lib), b[2:4]),       # a new result: no overlap
    lambda lib, b: lib.index_add(b[:6], 0, _i(lib), b[6:8], out=_z(lib, 6)),
], ids=["index_add_", "index_copy_", "scatter_value", "scatter_add", "index_add_out"])
def test_sources_apart_from_the_written_tensor_give_torchs_values(call):
    assert not isinstance(_same(call), type)


@pytest.mark.parametrize("name", ["masked_fill_", "index_fill_"])
def test_fills_of_an_expanded_tensor_warn_and_fill(name):
    # torch accepts them (one value for every aliased element) with a deprecation warning
    got = []
    for lib in (torch, ptcore):
        e = lib.zeros(2, 1, dtype=lib.float64).expand(2, 3)
        with pytest.warns(UserWarning, match=f"Use of {name} on expanded tensors is deprecated"):
            if name == "masked_fill_":
                e.masked_fill_(lib.tensor([[True, False, False], [False, False, False]]), 5.0)
            else:
                e.index_fill_(0, lib.tensor([0]), 5.0)
        got.append(e.tolist())
    assert got[0] == got[1] == [[5.0] * 3, [0.0] * 3]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.threshold(lib.tensor([[0.05], [0.5], [-1.]]).expand(3, 4),
                                            0.1, 20., inplace=True),
    lambda lib: lib.nn.functional.threshold_(lib.tensor([[0.05, 0.5, -1.]]).expand(2, 3).t(),
                                             0.1, -3.),
    lambda lib: lib.threshold_(lib.tensor([[0.05], [0.5]]).expand(2, 3), 0.1, 7.),
], ids=["threshold_inplace", "threshold_transposed", "torch.threshold_"])
def test_threshold_writes_an_expanded_tensor(call):
    # torch's threshold_ skips the overlap check (each memory location gets one value);
    # the other in-place activations refuse it, as torch's
    got = [call(lib) for lib in (torch, ptcore)]
    assert got[1].stride() == got[0].stride()
    np.testing.assert_array_equal(got[1].numpy(), got[0].numpy())
    for lib in (torch, ptcore):
        with pytest.raises(RuntimeError, match="more than one element"):
            lib.nn.functional.relu(lib.zeros(3, 1).expand(3, 4), inplace=True)


def test_threshold_of_an_expanded_non_leaf_then_refuses_backward():
    # torch writes it, then its backward through the expanded memory is the overlap error
    got = []
    for lib in (torch, ptcore):
        x = lib.tensor([[0.05], [0.5], [-1.0]], requires_grad=True)
        y = lib.nn.functional.threshold((x * 2).expand(3, 4), 0.3, 20., inplace=True)
        got.append(y.detach().numpy())
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            lib.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(got[1], got[0])


def _expanded(lib, dt):
    return lib.zeros(3, 1, dtype=getattr(lib, dt)).expand(3, 4)


# the written tensor's memory is checked before its dtype (torch's TensorIterator
# checks the operands' memory first): an expanded or partly overlapping written
# tensor of a dtype the op refuses is the overlap's RuntimeError
@pytest.mark.parametrize("call", [
    lambda lib: _expanded(lib, "float32").bitwise_and_(lib.ones(3, 4, dtype=lib.int64)),
    lambda lib: _expanded(lib, "int64").bitwise_or_(lib.ones(3, 4)),
    lambda lib: _expanded(lib, "float32").__iand__(lib.ones(3, 4, dtype=lib.int64)),
    lambda lib: _expanded(lib, "float32").__ior__(1),
    lambda lib: _expanded(lib, "bool").__ixor__(lib.ones(3, 4)),
    lambda lib: _expanded(lib, "float32").__ilshift__(1),
    lambda lib: _expanded(lib, "int32").__ilshift__(1.5),
    lambda lib: _expanded(lib, "float32").bitwise_not_(),
    lambda lib: _expanded(lib, "int64").add_(lib.ones(3, 4)),
    lambda lib: lib.bitwise_xor(lib.ones(3, 4), lib.ones(3, 4), out=_expanded(lib, "int64")),
    lambda lib: lib.bitwise_and(lib.ones(3, 4, dtype=lib.int64), lib.ones(3, 4, dtype=lib.int64),
                                out=_expanded(lib, "float32")),
    lambda lib: lib.bitwise_not(lib.ones(3, 4), out=_expanded(lib, "float32")),
    lambda lib: lib.add(lib.ones(3, 4), lib.ones(3, 4), out=_expanded(lib, "int64")),
    lambda lib: lib.gcd(lib.ones(3, 4), lib.ones(3, 4), out=_expanded(lib, "int64")),
    lambda lib: (lambda x: lib.bitwise_or(x[:4], x[2:], out=x[1:5]))(lib.ones(6)),
    lambda lib: (lambda x: x[1:5].__iand__(x[:4]))(lib.ones(6)),
], ids=["bitwise_and_", "bitwise_or_", "iand", "ior_scalar", "ixor_bool", "ilshift",
        "ilshift_int_by_float", "bitwise_not_", "add_", "bitwise_xor_out", "bitwise_and_out",
        "bitwise_not_out", "add_out", "gcd_out", "bitwise_or_partial", "iand_partial"])
def test_memory_of_the_written_tensor_is_checked_before_its_dtype(call):
    msgs = []
    for lib in (torch, ptcore):
        with pytest.raises(RuntimeError) as e:
            call(lib)
        msgs.append(str(e.value).split(".")[0])
    assert msgs[1] == msgs[0]
    assert msgs[0].startswith("unsupported operation")
