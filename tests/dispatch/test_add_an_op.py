"""The worked example of ``doc/dev/dispatch.rst`` ("Adding an op"), performed.

An op is added the way the guide says -- one declaration, its backward
formula, its forward-mode (JVP) rule, its function in a family module that
ends with ``bind_module`` -- and then works under every layer: as a function
and a method, recorded with its own node, differentiated in forward mode by
its rule, seen by ``__torch_function__`` modes, batched by ``vmap`` with the
declared rule, traced by ``jit.trace``, and let through by the device layer
(declared ``device="through"``) so that it runs on another device (the meta
device here) as its inner ops do.  The op (``example_softsign``) is taken out
of the table, the declarations, the formulas and the JVP rules afterwards, so
that the tests that check the table against the declaration files
(tests/dispatch/test_variants.py) do not see it.
"""
import types
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._dispatch.declarations import DECLARED, family
from ptcore._dispatch import generate
from ptcore._dispatch.device import passes_through
from ptcore._dispatch.generate import attach_methods, bind_module, methods_of
from ptcore._dispatch.table import op_of
from ptcore.autograd._formulas import unary
from ptcore.autograd._jvp_formulas import JVP, jvp_rule
from ptcore.overrides import TorchFunctionMode

torch = pytest.importorskip("torch")

NAME = "example_softsign"
JVP_CALLS = []


@pytest.fixture(scope="module")
def example_op():
    # 1. the declaration (in ptcore/_ops/declarations/pointwise.py it would be
    #    one line: op("example_softsign", "function method", device="through"))
    if ("ptcore", NAME) not in DECLARED:
        op = family("pointwise", grad="formula", batch="pointwise")
        op(NAME, "function method", device="through")

    # 2. its backward formula, under its name (ptcore/autograd/_formulas.py,
    #    which the package loads before it gives the table's ops their bodies)
    unary(NAME, lambda g, x, y: g / (1 + x.abs()) ** 2)

    # 3. its forward-mode rule, under its name (ptcore/autograd/_jvp_formulas.py;
    #    without one, forward AD derives it from the backward formula)
    @jvp_rule(NAME)
    def _example_softsign_jvp(tan, out, input):
        JVP_CALLS.append(NAME)
        t = tan(input)
        return None if t is None else t / (1 + input.abs()) ** 2

    # 4. the function, in the module of its family (composed of other ops'
    #    entries here, so it runs on every device); the module ends with
    #    bind_module, which makes its public names entries and, the
    #    declaration having the method variant, Tensor.example_softsign
    mod = types.ModuleType("example_family")

    def example_softsign(input):
        """``input / (1 + |input|)``."""
        return input / (1 + input.abs())

    mod.example_softsign = example_softsign
    mod.__all__ = [NAME]
    bind_module(vars(mod), "pointwise")

    # 5. the package root exports the function (``from <module> import *``) and
    #    puts the method on Tensor
    ptcore.example_softsign = mod.example_softsign
    attach_methods(ptcore.Tensor, methods_of(mod))
    yield mod
    delattr(ptcore.Tensor, NAME)
    del ptcore.example_softsign
    _forget(NAME)


def _forget(name):
    """Take the op ``name`` out of every table the steps above filled."""
    from ptcore._dispatch import table
    from ptcore.autograd._formulas import FORMULAS
    for ns in ("ptcore", "Tensor"):
        d = table.OPS.pop((ns, name), None)
        table._ENTRIES.pop((ns, name), None)
        for e in [e for e, od in table._BY_ENTRY.items() if od is d]:
            del table._BY_ENTRY[e]
        DECLARED.pop((ns, name), None)
    FORMULAS.pop(name, None)
    JVP.pop(name, None)
    generate._METHODS.pop("example_family", None)
    generate._MADE_BY.pop(name, None)


def test_the_function_and_method_are_entries_with_the_declared_facts(example_op):
    fn = example_op.example_softsign
    d = op_of(fn)
    assert d is not None and d.name == NAME and d.decl is DECLARED[("ptcore", NAME)]
    assert d.variants == frozenset({"function", "method"}) and "pointwise" in d.tags
    assert op_of(getattr(ptcore.Tensor, NAME)).kind == "method"
    x = np.linspace(-3, 3, 11, dtype=np.float32)
    want = torch.nn.functional.softsign(torch.tensor(x)).numpy()
    np.testing.assert_allclose(fn(ptcore.tensor(x)).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(getattr(ptcore.tensor(x), NAME)().numpy(), want, rtol=1e-6)


def test_it_records_one_node_with_its_formula(example_op):
    x = np.array([-2.0, -0.5, 0.0, 0.25, 3.0])
    p = ptcore.tensor(x, requires_grad=True)
    y = example_op.example_softsign(p)
    assert type(y.grad_fn).__name__ == "ExampleSoftsignBackward0"
    y.sum().backward()
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.softsign(t).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_layers_see_it(example_op):
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", None))
            return func(*args, **(kwargs or {}))

    x = ptcore.ones(3)
    with Log():
        example_op.example_softsign(x)
    assert seen[0] == NAME

    # vmap batches it with the pointwise rule of its declaration (no per-sample loop)
    xs = ptcore.randn(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the per-sample fallback warns
        out = ptcore.vmap(example_op.example_softsign)(xs)
    np.testing.assert_allclose(out.numpy(), (xs / (1 + xs.abs())).numpy(), rtol=1e-6)

    # jit.trace records it as one node of its own
    traced = ptcore.jit.trace(lambda t: example_op.example_softsign(t) * 2, (ptcore.ones(3),))
    assert NAME in str(traced.graph)
    np.testing.assert_allclose(traced(xs[0]).numpy(), (2 * xs[0] / (1 + xs[0].abs())).numpy(),
                               rtol=1e-6)


def test_forward_mode_uses_its_rule(example_op):
    x = np.array([-2.0, -0.5, 0.0, 0.25, 3.0])
    t = np.array([1.0, -1.0, 0.5, 2.0, -0.25])
    del JVP_CALLS[:]
    out, tangent = ptcore.func.jvp(example_op.example_softsign, (ptcore.tensor(x),),
                                   (ptcore.tensor(t),))
    assert JVP_CALLS == [NAME]                  # its own rule, not the double-vjp fallback
    want_out, want_tangent = torch.func.jvp(torch.nn.functional.softsign, (torch.tensor(x),),
                                            (torch.tensor(t),))
    np.testing.assert_allclose(out.numpy(), want_out.numpy(), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), want_tangent.numpy(), rtol=1e-12)


def test_the_device_layer_lets_it_through(example_op):
    # declared device="through": on a device the op's composite body runs, and
    # each inner op meets the device layer itself (no kernel of its own needed)
    assert passes_through(op_of(example_op.example_softsign))
    y = example_op.example_softsign(ptcore.ones(2, 3, device="meta"))
    assert y.device.type == "meta" and tuple(y.shape) == (2, 3) and y.dtype == ptcore.float32
