"""The Tensor methods come from the declarations: ``generate.bind_module``
makes each op module's methods (``method``/``inplace`` variants, and the
implementations marked ``method_form``), and the package root attaches every
module's; no module keeps a list of its method names."""
import importlib
import inspect
import types

import pytest

import ptcore
from ptcore._dispatch import generate, table
from ptcore._dispatch.declarations import DECLARED, family


def test_every_made_method_is_on_tensor():
    missing = []
    for module, methods in generate._METHODS.items():
        for name, made in methods.items():
            have = inspect.getattr_static(ptcore.Tensor, name, None)
            if name in generate.OPERATOR_FORMS:
                ok = table.op_of(have) is not None        # bound by bind_operators
            elif table.op_of(made) is not None:
                # the same OpDef (autograd's recording index_put_ replaces the entry),
                # or the function's entry (autograd's index_put is ptcore.index_put)
                ok = table.op_of(have) is table.op_of(made) or have is getattr(ptcore, name, None)
            else:
                ok = have is made
            if not ok:
                missing.append(f"{module}: Tensor.{name}")
    assert not missing, missing


def test_no_module_lists_its_methods():
    for name in ("pointwise", "reduction", "linalg", "shape", "sorting", "pointwise_composite",
                 "reduction_composite", "calculus", "linalg_composite", "shape_composite",
                 "indexing_composite", "creation_composite", "tensor_info", "random",
                 "random_samplers", "removed"):
        mod = importlib.import_module("ptcore._ops." + name)
        assert not hasattr(mod, "_TENSOR_METHODS"), name
    assert not hasattr(importlib.import_module("ptcore.storage"), "_TENSOR_METHODS")


def test_declared_method_is_the_function_and_a_method_form_wins():
    t = ptcore.tensor([1.0, -2.0])
    # exp: declared "function method inplace out": Tensor.exp is an entry of ptcore.exp's function
    assert table.op_of(ptcore.Tensor.exp).raw is table.op_of(ptcore.exp).raw
    assert table.op_of(ptcore.Tensor.exp).kind == "method"
    assert table.op_of(ptcore.Tensor.exp_).name == "exp_"
    # norm: Tensor.norm is reduction's _norm_method (torch's method signature: no out=)
    assert table.op_of(ptcore.Tensor.norm).raw is not table.op_of(ptcore.norm).raw
    assert float(t.norm()) == pytest.approx(5 ** 0.5)
    # a method the Cython core defines stays the core's
    assert ptcore.Tensor.split_with_sizes is ptcore._tensor._TensorBase.split_with_sizes


def _module(name, opname):
    """A module defining the method-only op ``opname`` (no function form)."""
    mod = types.ModuleType(name)

    def fn(self):
        return self
    fn.__name__ = fn.__qualname__ = opname
    fn.__module__ = name
    setattr(mod, opname, fn)
    mod.__all__ = []
    return mod


def test_two_modules_making_one_method_fail():
    op = family("pointwise")
    name = "example_twice"
    if ("ptcore", name) not in DECLARED:
        op(name, "method")
    first, second = _module("example_first", name), _module("example_second", name)
    try:
        generate.bind_module(vars(first), "pointwise")
        assert "example_twice" in generate.methods_of(first)
        with pytest.raises(ValueError, match="made by both"):
            generate.bind_module(vars(second), "pointwise")
    finally:
        d = table.OPS.pop(("Tensor", name), None)
        table._ENTRIES.pop(("Tensor", name), None)
        for e in [e for e, od in table._BY_ENTRY.items() if od is d]:
            del table._BY_ENTRY[e]
        DECLARED.pop(("ptcore", name), None)
        for m in ("example_first", "example_second"):
            generate._METHODS.pop(m, None)
        generate._MADE_BY.pop(name, None)
