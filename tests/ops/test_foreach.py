"""ptcore._foreach_* (torch's multi-tensor ops, called by optimizers, gradient
clipping and EMA code written against torch) against torch: every variant of
the second operand, in-place forms, return types, errors and autograd."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.foreach import _BINARY, _UNARY

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
