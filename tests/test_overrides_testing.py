"""``overrides.get_testing_overrides`` as torch's: a dummy per overridable
function, with its signature, returning -1 -- used to check that a
``__torch_function__`` handler sees every function it overrides."""
import inspect

import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore import overrides


def test_every_overridable_function_has_a_dummy_with_its_signature():
    dummies = overrides.get_testing_overrides()
    funcs = [f for fs in overrides.get_overridable_functions().values() for f in fs]
    assert set(dummies) == set(funcs) and len(funcs) > 500
    for f in (ptcore.add, ptcore.Tensor.add, F.linear, ptcore.linalg.norm):
        assert dummies[f](*([None] * 2)) == -1
        assert inspect.signature(dummies[f]) == inspect.signature(f)


def test_a_subclass_handler_sees_each_function_called_with_the_dummys_arguments():
    seen = []

    class Traced:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return -1

    dummies = overrides.get_testing_overrides()
    for f in (ptcore.add, ptcore.mm, F.relu, ptcore.Tensor.sum):
        sig = inspect.signature(dummies[f])
        args = [Traced() for p in sig.parameters.values()
                if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        assert f(*args) == -1
    assert seen == [ptcore.add, ptcore.mm, F.relu, ptcore.Tensor.sum]


def test_names_resolve_as_torch():
    torch = pytest.importorskip("torch")
    tdummies = torch.overrides.get_testing_overrides()
    for name in ("add", "mm", "cat", "where"):
        assert overrides.get_testing_overrides()[getattr(ptcore, name)](1, 2) == \
            tdummies[getattr(torch, name)](*([1] * len(inspect.signature(
                tdummies[getattr(torch, name)]).parameters)))
    assert overrides.resolve_name(ptcore.add) == "ptcore.add"
