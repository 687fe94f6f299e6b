"""ptcore._foreach_* (torch's multi-tensor ops, called by optimizers, gradient
clipping and EMA code written against torch) against torch: every variant of
the second operand, in-place forms, return types, errors and autograd."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch.declarations import DECLARED

# the unary list forms are those the declarations give (foreach); the binary ones
_UNARY = sorted(d.name for d in DECLARED.values() if d.foreach)
_BINARY = ("add", "sub", "mul", "div", "clamp_max", "clamp_min", "maximum", "minimum", "pow")

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
_POS = [_RNG.random((2, 3)) + 0.5, _RNG.random((4,)) + 0.5, _RNG.random((1, 2, 2)) + 0.5]
_MIXED = [a - 1.0 for a in _POS]


def _list(lib, arrays=_POS, dtype="float32", requires_grad=False):
    return [lib.tensor(a.astype(dtype), requires_grad=requires_grad) for a in arrays]


def _call(lib, name, *args, **kwargs):
    """The result of lib.<name>, or the in-place target after lib.<name>_ runs."""
    out = getattr(lib, name)(*args, **kwargs)
    if name.endswith("_"):
        assert out is args[0]
    else:
        assert type(out) is tuple
    return out


def _same(make):
    """make(lib) gives tensors (or raises) alike in torch and ptcore."""
    got = []
    for lib in (torch, ptcore):
        try:
            got.append(list(make(lib)))
        except (RuntimeError, TypeError, NotImplementedError) as e:
            got.append(type(e))
    t, p = got
    if isinstance(t, type) or isinstance(p, type):
        assert p is t
        return
    assert len(p) == len(t)
    for a, b in zip(p, t):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("op", _UNARY)
@pytest.mark.parametrize("suffix", ["", "_"])
@pytest.mark.parametrize("arrays,dtype", [(_POS, "float32"), (_MIXED, "float64"),
                                          (_MIXED, "int64")])
def test_unary(op, suffix, arrays, dtype):
    _same(lambda lib: _call(lib, f"_foreach_{op}{suffix}", _list(lib, arrays, dtype)))


_OTHERS = {
    "number": lambda lib: 0.7,
    "int": lambda lib: 2,
    "numbers": lambda lib: [0.7, 2, 1.5],
    "tensors": lambda lib: _list(lib, _MIXED),
    "float64 tensors": lambda lib: _list(lib, dtype="float64"),
    "0-d tensor": lambda lib: lib.tensor(0.3),
}


@pytest.mark.parametrize("op", list(_BINARY))
@pytest.mark.parametrize("suffix", ["", "_"])
@pytest.mark.parametrize("other", list(_OTHERS))
def test_binary_variants(op, suffix, other):
    _same(lambda lib: _call(lib, f"_foreach_{op}{suffix}", _list(lib), _OTHERS[other](lib)))
    _same(lambda lib: _call(lib, f"_foreach_{op}{suffix}", _list(lib, dtype="int64"),
                            _OTHERS[other](lib)))


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("suffix", ["", "_"])
def test_alpha(op, suffix):
    _same(lambda lib: _call(lib, f"_foreach_{op}{suffix}", _list(lib), _list(lib, _MIXED),
                            alpha=0.5))
    if op == "add":
        _same(lambda lib: _call(lib, f"_foreach_add{suffix}", _list(lib), lib.tensor(0.3),
                                alpha=2))
    _same(lambda lib: _call(lib, f"_foreach_{op}{suffix}", _list(lib), 0.7, alpha=2))


def test_pow_number_base():
    _same(lambda lib: lib._foreach_pow(2.0, _list(lib, _MIXED)))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("suffix", ["", "_"])
@pytest.mark.parametrize("value", [None, 0.3, [0.3, 1, 2], "tensor"])
def test_addcmul_addcdiv(op, suffix, value):
    def make(lib):
        args = [_list(lib), _list(lib, _MIXED), _list(lib)]
        if value is not None:
            args.append(lib.tensor([0.3, 1.0, 2.0]) if value == "tensor" else value)
        return _call(lib, f"_foreach_{op}{suffix}", *args)
    _same(make)


@pytest.mark.parametrize("suffix", ["", "_"])
@pytest.mark.parametrize("weight", ["number", "numbers", "tensors", "0-d tensor"])
def test_lerp(suffix, weight):
    w = {"number": lambda lib: 0.3, "numbers": lambda lib: [0.3, 0.1, 0.9],
         "tensors": lambda lib: _list(lib), "0-d tensor": lambda lib: lib.tensor(0.2)}[weight]
    _same(lambda lib: _call(lib, f"_foreach_lerp{suffix}", _list(lib), _list(lib, _MIXED),
                            w(lib)))


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, float("inf"), float("-inf")])
def test_norm_and_powsum(ord):
    _same(lambda lib: _call(lib, "_foreach_norm", _list(lib, _MIXED), ord))
    _same(lambda lib: _call(lib, "_foreach_powsum", _list(lib, _MIXED), ord))
    _same(lambda lib: _call(lib, "_foreach_norm", _list(lib, _MIXED), ord, dtype=lib.float64))


def test_max_zero_copy_clone_mm():
    _same(lambda lib: _call(lib, "_foreach_max", _list(lib, _MIXED)))
    _same(lambda lib: _call(lib, "_foreach_zero_", _list(lib)))
    _same(lambda lib: _call(lib, "_foreach_copy_", _list(lib), _list(lib, _MIXED, "float64")))
    _same(lambda lib: _call(lib, "_foreach_clone", _list(lib)))
    _same(lambda lib: _call(lib, "_foreach_mm", [lib.ones(2, 3), lib.ones(1, 4) * 2],
                            [lib.ones(3, 2), lib.ones(4, 5)]))
    tup = tuple(_list(ptcore))
    assert ptcore._foreach_mul_(tup, 2.0) is tup


@pytest.mark.parametrize("make", [
    lambda lib: lib._foreach_add([], 1.0),
    lambda lib: lib._foreach_add(_list(lib), _list(lib)[:2]),
    lambda lib: lib._foreach_add(_list(lib), [1.0]),
    lambda lib: lib._foreach_add(_list(lib), lib.tensor([1.0, 2.0])),
    lambda lib: lib._foreach_addcmul(_list(lib), _list(lib), _list(lib), lib.tensor([1.0])),
    lambda lib: lib._foreach_addcmul(_list(lib), _list(lib), _list(lib), lib.tensor(1.0)),
    lambda lib: lib._foreach_max([lib.ones(0)]),
    lambda lib: lib._foreach_add(_list(lib), 1.0, alpha=2),
    lambda lib: lib._foreach_add(lib.ones(2), 1.0),
    lambda lib: lib._foreach_add([lib.ones(2), "x"], 1.0),
    lambda lib: lib._foreach_mul_([lib.ones(2, requires_grad=True)], 3.0),
    lambda lib: lib._foreach_neg([lib.ones(2, dtype=lib.bool)]),
], ids=["empty", "lengths", "scalar list length", "1-d tensor", "packed scalars length",
        "packed scalars 0-d", "max of empty", "alpha with number", "not a list",
        "not a tensor", "leaf in place", "bool neg"])
def test_errors_match_torch(make):
    got = []
    for lib in (torch, ptcore):
        with pytest.raises((RuntimeError, TypeError)) as info:
            make(lib)
        got.append((info.type, str(info.value) if info.type is RuntimeError else ""))
    assert got[1] == got[0]


def test_out_of_place_forms_are_differentiable():
    grads = []
    for lib in (torch, ptcore):
        xs = _list(lib, _MIXED, "float64", requires_grad=True)
        ys = lib._foreach_mul(xs, 3.0)
        zs = lib._foreach_addcmul(ys, xs, xs, 0.5)
        zs = lib._foreach_lerp(zs, lib._foreach_exp(xs), 0.25)
        sum(lib._foreach_norm(zs)).backward()
        grads.append([x.grad.numpy() for x in xs])
    for p, t in zip(*grads):
        np.testing.assert_allclose(p, t, rtol=1e-12)


def test_ema_update_like_timm():
    """An EMA of a model's parameters the way timm and torch's swa_utils write it."""
    res = []
    for lib in (torch, ptcore):
        params = _list(lib, _MIXED)
        ema = _list(lib)
        for _ in range(5):
            lib._foreach_lerp_(ema, params, 1 - 0.9)
            lib._foreach_add_(params, 0.1)
        res.append([e.numpy() for e in ema])
    for p, t in zip(*res):
        np.testing.assert_allclose(p, t, rtol=1e-6)


# ---------------------------------------------------------------------------
# the multi-tensor loop (ptcore._ops.kernels._foreach): the per-tensor ops' values
# ---------------------------------------------------------------------------
# sizes around the vector widths, an empty tensor, and one past the parallel grain
_SHAPES = [(64, 3, 3), (1,), (17,), (0, 4), (5, 33), (300, 1000)]


def _fresh(dtype, seed, shapes=_SHAPES, positive=False):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    if positive:
        arrays = [np.abs(a) + 0.5 for a in arrays]
    return [ptcore.from_numpy(a.astype(dtype)) for a in arrays]


def _per_tensor(fn_name, tensors, *rest, **kw):
    """What the per-tensor methods give (the reference of the fast loop)."""
    method = fn_name[len("_foreach_"):]
    out = []
    for i, t in enumerate(tensors):
        args = [r[i] if isinstance(r, (list, tuple)) else r for r in rest]
        kwi = {k: (v[i] if isinstance(v, (list, tuple)) else v) for k, v in kw.items()}
        out.append(getattr(t, method)(*args, **kwi))
    return out


_FAST_CASES = [
    ("_foreach_add_", lambda l: (l(1), ), {"alpha": 0.001}),
    ("_foreach_add_", lambda l: (l(1), ), {}),
    ("_foreach_sub_", lambda l: (l(1), ), {"alpha": 3}),
    ("_foreach_sub", lambda l: (l(1), ), {"alpha": -1}),
    ("_foreach_add", lambda l: (0.001, ), {}),
    ("_foreach_mul_", lambda l: (0.999, ), {}),
    ("_foreach_mul_", lambda l: (l(1), ), {}),
    ("_foreach_mul", lambda l: ([0.5 + i for i in range(len(_SHAPES))], ), {}),
    ("_foreach_div_", lambda l: (l(1, True), ), {}),
    ("_foreach_div", lambda l: (3, ), {}),
    ("_foreach_lerp_", lambda l: (l(1), 0.01), {}),
    ("_foreach_lerp", lambda l: (l(1), 0.9), {}),
    ("_foreach_lerp_", lambda l: (l(1), l(2)), {}),
    ("_foreach_addcmul_", lambda l: (l(1), l(2)), {"value": 0.001}),
    ("_foreach_addcmul", lambda l: (l(1), l(2), [0.1 * i for i in range(len(_SHAPES))]), {}),
    ("_foreach_addcdiv_", lambda l: (l(1), l(2, True)), {"value": -0.001}),
    ("_foreach_addcdiv", lambda l: (l(1), l(2, True)), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(_FAST_CASES)))
def test_fast_loop_gives_the_per_tensor_values(dtype, case):
    name, make_args, kw = _FAST_CASES[case]
    ptcore_threads = ptcore.get_num_threads()
    ptcore.set_num_threads(2)       # the large tensor runs in chunks
    try:
        def lists(seed, positive=False):
            return _fresh(dtype, seed, positive=positive)
        self_fast, self_ref = lists(0), lists(0)
        args_fast, args_ref = make_args(lists), make_args(lists)
        versions = [t._version for t in self_fast]
        got = getattr(ptcore, name)(self_fast, *args_fast, **kw)
        if name.startswith("_foreach_addc") and len(args_ref) == 3:
            args_ref, kw_ref = args_ref[:2], {"value": args_ref[2]}   # scalars: value=
        else:
            kw_ref = kw
        want = _per_tensor(name, self_ref, *args_ref, **kw_ref)
        if name.endswith("_"):
            assert got is self_fast
            assert [t._version for t in self_fast] == [v + 1 for v in versions]
        else:
            assert type(got) is tuple
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g.numpy().view(np.uint8), w.numpy().view(np.uint8))
        # and torch's values
        tl = [torch.from_numpy(t.numpy()) for t in lists(0)]
        targs = make_args(lambda seed, positive=False: [torch.from_numpy(t.numpy())
                                                        for t in lists(seed, positive)])
        tgot = getattr(torch, name)(tl, *targs, **kw)
        for g, t in zip(got, tgot):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6 if dtype == "float32"
                                       else 1e-14, atol=1e-7 if dtype == "float32" else 1e-15)
    finally:
        ptcore.set_num_threads(ptcore_threads)


@pytest.mark.parametrize("op", _UNARY)
@pytest.mark.parametrize("suffix", ["", "_"])
def test_fast_unary_loop_gives_the_per_tensor_values(op, suffix):
    for dtype in ("float32", "float64"):
        xs, ref = _fresh(dtype, 1, positive=True), _fresh(dtype, 1, positive=True)
        got = getattr(ptcore, f"_foreach_{op}{suffix}")(xs)
        want = [getattr(t, op + suffix)() for t in ref]
        for g, w in zip(got, want):
            assert np.array_equal(g.numpy().view(np.uint8), w.numpy().view(np.uint8)), (op, dtype)


def test_fast_norm_zero_copy_give_the_per_tensor_values():
    for dtype in ("float32", "float64"):
        xs = _fresh(dtype, 2)
        for g, t in zip(ptcore._foreach_norm(xs), xs):
            assert g.dtype == t.dtype and g.shape == ()
            assert g.item() == ptcore.linalg.vector_norm(t).item()
        src = _fresh(dtype, 3)
        assert ptcore._foreach_copy_(xs, src) is xs
        assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(xs, src))
        assert ptcore._foreach_zero_(xs) is xs
        assert all(not t.numpy().any() for t in xs)


def test_fast_loop_leaves_other_cases_to_the_per_tensor_ops():
    """Non-contiguous, mixed-dtype, broadcast and partly overlapping operands,
    autograd and inference tensors give what the per-tensor ops give."""
    def make():
        base = ptcore.arange(12.0).reshape(3, 4)
        return ([base.t(), ptcore.ones(3), ptcore.ones(2, 3)],
                [ptcore.ones(4, 3) * 2, ptcore.full((3,), 0.1, dtype=ptcore.float64),
                 ptcore.arange(3.0)])
    xs, ys = make()
    ptcore._foreach_add_(xs, ys, alpha=0.5)
    rx, ry = make()
    for a, b, x in zip(rx, ry, xs):
        a.add_(b, alpha=0.5)
        assert np.array_equal(a.numpy(), x.numpy())
    for lib in (torch, ptcore):            # partly overlapping: the per-tensor op's error
        buf = lib.arange(6.0)
        with pytest.raises(RuntimeError, match="single memory location"):
            lib._foreach_add_([buf[:4]], [buf[2:]])
    w = [ptcore.ones(3, requires_grad=True)]
    out = ptcore._foreach_mul(w, 2.0)
    assert out[0].requires_grad and out[0].grad_fn is not None
    with ptcore.no_grad():
        assert not ptcore._foreach_mul(w, 2.0)[0].requires_grad
        ptcore._foreach_add_(w, 1.0)       # optimizer-style update of a leaf
    assert w[0].tolist() == [2.0, 2.0, 2.0] and w[0].grad_fn is None
    with ptcore.inference_mode():
        inf = [ptcore.ones(3)]
    for fn in (lambda: ptcore._foreach_add_(inf, 1.0), lambda: ptcore._foreach_zero_(inf),
               lambda: ptcore._foreach_copy_(inf, [ptcore.ones(3)])):
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            fn()


def test_pointwise_value_and_scalars_forms():
    # torch's overloads: a number positional or value=, a list / 1-D tensor
    # positional or scalars=; value= of a list or tensor and scalars= of a number
    # are TypeErrors
    arrays = [a.astype("float32") for a in _POS]
    for name in ("_foreach_addcmul", "_foreach_addcdiv", "_foreach_addcmul_",
                 "_foreach_addcdiv_"):
        for args, kw in [((), {"value": 2.0}), ((), {"scalars": [1.0, 2.0, 3.0]}),
                         ((), {"scalars": "tensor"}), (([1.0, -2.0, 0.5],), {}), ((3,), {}),
                         (("tensor",), {}), ((), {}), ((), {"value": [1.0, 2.0, 3.0]}),
                         ((), {"value": "tensor"}), ((), {"scalars": 2.0})]:
            results = []
            for lib in (ptcore, torch):
                sc = lib.tensor([0.5, 2.0, -1.0])
                a_ = tuple(sc if v == "tensor" else v for v in args)
                k_ = {k: sc if v == "tensor" else v for k, v in kw.items()}
                try:
                    r = getattr(lib, name)(_list(lib, arrays), _list(lib, arrays),
                                           _list(lib, arrays), *a_, **k_)
                    results.append([t.numpy() for t in r])
                except TypeError:
                    results.append(TypeError)
            if results[1] is TypeError:
                assert results[0] is TypeError, (name, args, kw)
            else:
                for g, w in zip(*results):
                    np.testing.assert_allclose(g, w, rtol=1e-6)


def test_maximum_minimum_of_complex_lists_not_implemented():
    c = [np.ones(2, np.complex64)]
    for name in ("_foreach_maximum", "_foreach_minimum", "_foreach_maximum_"):
        for lib in (ptcore, torch):
            with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
                getattr(lib, name)([lib.tensor(c[0])], [lib.tensor(c[0])])
