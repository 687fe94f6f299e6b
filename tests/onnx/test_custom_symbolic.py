"""ptcore.onnx.register_custom_op_symbolic: a user's symbolic function
converts an op (a built-in one, taking precedence over ptcore's conversion,
or a custom op of ptcore.library), with torch's ``g.op`` attribute suffixes,
custom domains and opset gating; ONNX Runtime runs the result."""
import io

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore.onnx import register_custom_op_symbolic, unregister_custom_op_symbolic
from ptcore.onnx.symbolic_helper import parse_args

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _export(fn, args, **kw):
    buf = io.BytesIO()
    ptcore.onnx.export(fn, args, buf, **kw)
    return buf.getvalue()


def _run(data, *xs):
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x.numpy() for i, x in zip(sess.get_inputs(), xs)})


@pytest.fixture
def registered():
    done = []

    def reg(name, fn, opset=17):
        register_custom_op_symbolic(name, fn, opset)
        done.append((name, opset))
    yield reg
    for name, opset in done:
        unregister_custom_op_symbolic(name, opset)


def test_an_unsupported_op_becomes_exportable(registered):
    def f(x):
        return F.selu(x) * 2
    x = ptcore.randn(4, 5)
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError, match="selu"):
        _export(f, (x,))
    registered("aten::selu", lambda g, x, *rest: g.op("Selu", x))
    data = _export(f, (x,))
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    np.testing.assert_allclose(_run(data, x)[0], f(x).numpy(), rtol=1e-5, atol=1e-6)


def test_registration_overrides_the_builtin_and_attribute_suffixes(registered):
    @parse_args("v", "f", "b")
    def leaky(g, x, slope, inplace):
        assert isinstance(slope, float) and slope == 0.01
        return g.op("LeakyRelu", x, alpha_f=0.25)
    registered("aten::leaky_relu", leaky)
    m = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU()).eval()
    x = ptcore.randn(6, 3)
    data = _export(m, (x,))
    node = [n for n in onnx.load_from_string(data).graph.node if n.op_type == "LeakyRelu"][0]
    assert node.attribute[0].name == "alpha" and abs(node.attribute[0].f - 0.25) < 1e-7
    y = m[0](x)
    np.testing.assert_allclose(_run(data, x)[0], F.leaky_relu(y, 0.25).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    unregister_custom_op_symbolic("aten::leaky_relu", 17)
    node = [n for n in onnx.load_from_string(_export(m, (x,))).graph.node
            if n.op_type == "LeakyRelu"][0]
    assert abs(node.attribute[0].f - 0.01) < 1e-7        # the built-in conversion again


def test_library_custom_op(registered):
    from ptcore.library import custom_op

    @custom_op("onnxtest::scale_shift", mutates_args=())
    def scale_shift(x: ptcore.Tensor, a: float) -> ptcore.Tensor:
        return x * a + 1

    def sym(g, x, a):
        return g.op("Add", g.op("Mul", x, ptcore.tensor(a)), ptcore.tensor(1.0))
    registered("onnxtest::scale_shift", sym)

    def f(x):
        return ptcore.ops.onnxtest.scale_shift(x, 3.0).relu()
    x = ptcore.randn(2, 5)
    data = _export(f, (x,))
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    np.testing.assert_allclose(_run(data, x)[0], f(x).numpy(), rtol=1e-6)


def test_custom_domain_and_multiple_outputs(registered):
    def sym(g, x, dim, keepdim=False):
        values, idx = g.op("mydomain::TopOne", x, axis_i=int(dim), outputs=2)
        return values, idx
    registered("aten::max", sym)

    def f(x):
        v, i = ptcore.max(x, 1)
        return v, i
    data = _export(f, (ptcore.randn(3, 4),), custom_opsets={"mydomain": 2})
    model = onnx.load_from_string(data)
    node = [n for n in model.graph.node if n.op_type == "TopOne"][0]
    assert node.domain == "mydomain" and len(node.output) == 2
    assert node.attribute[0].name == "axis" and node.attribute[0].i == 1
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 17), ("mydomain", 2)}


def test_opset_gating(registered):
    registered("aten::selu", lambda g, x, *rest: g.op("Selu", x), opset=18)

    def f(x):
        return F.selu(x)
    x = ptcore.randn(3)
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError):
        _export(f, (x,), opset_version=17)
    data = _export(f, (x,), opset_version=19)
    np.testing.assert_allclose(_run(data, x)[0], f(x).numpy(), rtol=1e-5, atol=1e-6)


def test_bad_registrations():
    with pytest.raises(ValueError, match="domain::name"):
        register_custom_op_symbolic("selu", lambda g, x: x, 17)
    with pytest.raises(TypeError):
        register_custom_op_symbolic("aten::selu", None, 17)
    unregister_custom_op_symbolic("aten::never_registered", 17)        # no error


def test_a_symbolic_returning_something_else_is_named(registered):
    registered("aten::selu", lambda g, x, *rest: 3)
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError, match="selu.*g.op"):
        _export(lambda x: F.selu(x), (ptcore.randn(3),))
