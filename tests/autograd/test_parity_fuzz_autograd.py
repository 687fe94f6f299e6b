"""Differential checks of autograd APIs against torch (the oracle):
autograd.functional's checks, grad modes, module hooks and the rest of the
autograd surface real programs use."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _mk(T, shape, seed=0, requires_grad=False):
    r = np.random.RandomState(seed).randn(*shape)
    return T.tensor(r.tolist(), dtype=T.float64, requires_grad=requires_grad)


def _outcome(fn, T):
    """("ok", value as nested lists) or ("exc", names of the exception's types)."""
    try:
        r = fn(T)
    except Exception as e:    # noqa: BLE001 -- the type is what is compared
        return ("exc", [c.__name__ for c in type(e).__mro__])
    return ("ok", _plain(r))


def _plain(x):
    if isinstance(x, (torch.Tensor, ptcore.Tensor)):
        return np.asarray(x.detach().double().numpy()).round(8).tolist()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _same(fn):
    a, b = _outcome(fn, torch), _outcome(fn, ptcore)
    if a[0] == b[0] == "exc":       # ptcore's error is (a subclass of) torch's
        assert a[1][0] in b[1], (a, b)
    else:
        assert a == b, (a, b)
    return a


# ---- autograd.functional: the checks torch makes of functions and vectors

def _quad(x):
    return (x * x).sum()


@pytest.mark.parametrize("case", [
    # vhp: one one-element Tensor out, v given unless the input has one element
    lambda T: T.autograd.functional.vhp(lambda x: x, _mk(T, (3,)), _mk(T, (3,), 1)),
    lambda T: T.autograd.functional.vhp(_quad, _mk(T, (3,))),
    lambda T: T.autograd.functional.vhp(_quad, _mk(T, (3,)), _mk(T, (2,))),
    lambda T: T.autograd.functional.vhp(lambda x: ((x * x).sum(),), _mk(T, (3,)), _mk(T, (3,))),
    lambda T: T.autograd.functional.hvp(lambda x: ((x * x).sum(),), _mk(T, (3,)), _mk(T, (3,))),
    lambda T: T.autograd.functional.hessian(lambda x: ((x * x).sum(),), _mk(T, (3,))),
    # strict: a linear function's jacobian is independent of the input
    lambda T: T.autograd.functional.hessian(lambda x: x.sum(), _mk(T, (3,)), strict=True),
    lambda T: T.autograd.functional.hessian(lambda x, y: (x * x).sum(),
                                            (_mk(T, (3,)), _mk(T, (3,), 1)), strict=True),
    lambda T: T.autograd.functional.hvp(lambda x: x.sum(), _mk(T, (3,)), _mk(T, (3,), 1),
                                        strict=True),
    lambda T: T.autograd.functional.vhp(lambda x: x.sum(), _mk(T, (3,)), _mk(T, (3,), 1),
                                        strict=True),
    lambda T: T.autograd.functional.vhp(lambda x: T.tensor(1.0), _mk(T, (3,)), _mk(T, (3,), 1),
                                        strict=True),
    lambda T: T.autograd.functional.hessian(_quad, _mk(T, (3,)), strict=True, vectorize=True),
    # outputs must be Tensors
    lambda T: T.autograd.functional.jacobian(lambda x: 3, _mk(T, (3,))),
    lambda T: T.autograd.functional.vjp(lambda x: 3, _mk(T, (3,))),
    # the strategy names
    lambda T: T.autograd.functional.jacobian(lambda x: x, _mk(T, (3,)), strategy="x"),
    lambda T: T.autograd.functional.hessian(_quad, _mk(T, (3,)), outer_jacobian_strategy="x"),
])
def test_functional_checks_raise_as_torch(case):
    assert _same(case)[0] == "exc"


@pytest.mark.parametrize("case", [
    lambda T: T.autograd.functional.hessian(_quad, _mk(T, (3,)), strict=True),
    lambda T: T.autograd.functional.hessian(lambda x, y: (x * x * y).sum(),
                                            (_mk(T, (3,)), _mk(T, (3,), 1))),
    lambda T: T.autograd.functional.vhp(lambda x, y: (x * x * y).sum(),
                                        (_mk(T, (3,)), _mk(T, (3,), 1)),
                                        (_mk(T, (3,), 2), _mk(T, (3,), 3)), strict=True),
    lambda T: T.autograd.functional.hvp(lambda x: (x.sin() * x).sum(), _mk(T, (3,)),
                                        _mk(T, (3,), 1), strict=True),
    lambda T: T.autograd.functional.vhp(lambda x: (x ** 3).sum(), _mk(T, (1,))),
])
def test_functional_values_match_torch(case):
    assert _same(case)[0] == "ok"


# ---- grad modes

def test_no_grad_decorating_a_class_builds_it_without_grad():
    for T in (torch, ptcore):
        x = T.ones(2, requires_grad=True)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)

            @T.no_grad()
            class Holder:
                def __init__(self, v):
                    self.y = v * 2

        h = Holder(x)
        assert type(h).__name__ == "Holder"
        assert h.y.requires_grad is False
    with pytest.warns(FutureWarning):
        ptcore.enable_grad()(type("C", (), {}))


# ---- torch.func

@pytest.mark.parametrize("case", [
    lambda T: T.func.grad(lambda x: x * 2)(3.0),
    lambda T: T.func.vjp(lambda x: x, 3.0),
    lambda T: T.func.jacrev(lambda x: x)(3.0),
    lambda T: T.func.grad(lambda x: (x[0] * 1).sum())([T.ones(2), 3]),
])
def test_func_transforms_reject_non_tensor_inputs_as_torch(case):
    a = _same(case)
    assert a[0] == "exc" and a[1][0] == "ValueError"
