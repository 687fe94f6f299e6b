"""torch's aliases are callables of their own: ``torch.arctan.__name__ == 'arctan'``
(not ``atan``), at ``torch.X``, ``Tensor.X`` and ``Tensor.X_``, and each has its own
``torch.ops.aten`` packet.  ptcore's entries of an alias run its op's body under the
alias's name."""
import pytest

import ptcore

torch = pytest.importorskip("torch")

# (alias, op)
ALIASES = [("arctan", "atan"), ("arcsin", "asin"), ("arccos", "acos"), ("arctanh", "atanh"),
           ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctan2", "atan2"),
           ("absolute", "abs"), ("clip", "clamp"), ("ger", "outer"), ("true_divide", "div"),
           ("divide", "div"), ("multiply", "mul"), ("subtract", "sub"), ("negative", "neg"),
           ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
           ("not_equal", "ne"), ("fix", "trunc"), ("moveaxis", "movedim"),
           ("swapaxes", "transpose"), ("swapdims", "transpose"), ("concat", "cat"),
           ("concatenate", "cat"), ("row_stack", "vstack"), ("det", "linalg_det")]


def _forms(name):
    for where, ns in (("torch", "root"), ("Tensor", "Tensor")):
        for n in (name, name + "_"):
            yield where, n


@pytest.mark.parametrize("alias,op", ALIASES)
def test_alias_names(alias, op):
    checked = 0
    for where, n in _forms(alias):
        t = getattr(torch if where == "torch" else torch.Tensor, n, None)
        p = getattr(ptcore if where == "torch" else ptcore.Tensor, n, None)
        if t is None:
            continue
        assert p is not None, f"{where}.{n} is missing"
        assert p.__name__ == t.__name__ == n, (where, n, p.__name__)
        checked += 1
    assert checked


@pytest.mark.parametrize("alias,op", ALIASES)
def test_alias_is_not_its_op(alias, op):
    # the alias's entry is its own object, and its op keeps its name
    for where, n in _forms(alias):
        t = getattr(torch if where == "torch" else torch.Tensor, n, None)
        target = getattr(ptcore if where == "torch" else ptcore.Tensor, op + n[len(alias):], None)
        if t is None or target is None:
            continue
        p = getattr(ptcore if where == "torch" else ptcore.Tensor, n)
        assert p is not target
        assert target.__name__ == op + n[len(alias):]


@pytest.mark.parametrize("alias,op", ALIASES)
def test_aten_alias_packets(alias, op):
    t = getattr(torch.ops.aten, alias, None)
    if t is None:
        pytest.skip(f"torch has no aten.{alias}")
    p = getattr(ptcore.ops.aten, alias)
    assert p.__name__ == t.__name__ == alias
    assert str(p) == f"aten.{alias}"
    # every overload of torch's with a tensor in its schema (the others are TorchScript's
    # number overloads)
    want = [o for o in t.overloads() if "Tensor" in str(getattr(t, o)._schema)]
    assert [o for o in p.overloads() if o in want] == want
    for o in want:
        assert getattr(p, o).name() == getattr(t, o).name()


def test_alias_calls_and_torch_function_name():
    x = ptcore.tensor([0.5, -0.25])
    assert ptcore.arctan(x).tolist() == ptcore.atan(x).tolist()
    seen = []

    class M(ptcore.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    y = ptcore.randn(2, 3, 4)
    with M():
        ptcore.arctan(x)
        x.multiply(2)
        y.swapdims(0, 1)
        y.moveaxis(0, 1)
    assert seen == ["arctan", "multiply", "swapdims", "moveaxis"]
    tseen = []

    class TM(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            tseen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    tx, ty = torch.tensor([0.5, -0.25]), torch.randn(2, 3, 4)
    with TM():
        torch.arctan(tx)
        tx.multiply(2)
        ty.swapdims(0, 1)
        ty.moveaxis(0, 1)
    assert tseen == seen


def test_keyword_error_names_the_alias():
    with pytest.raises(TypeError, match=r"^multiply\(\)"):
        ptcore.multiply(input=ptcore.ones(1), x1=ptcore.ones(1), other=2)
