"""torch 2.13's export API: ``torch.onnx.export`` returns an ``ONNXProgram``
(its default ``dynamo=True`` exporter), ``f`` may be omitted, model keyword
inputs come as ``kwargs=``, dynamic dims as ``dynamic_shapes=``, inputs are
named after the model's parameters; the program saves, shows its
``model_proto`` and runs like the model through ONNX Runtime."""
import io

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 10)

    def forward(self, image, scale=None):
        y = self.fc(self.conv(image).relu().flatten(1))
        return y if scale is None else y * scale


def test_the_tutorial_flow(tmp_path):
    model = Net().eval()
    example = (ptcore.randn(1, 1, 8, 8),)
    program = ptcore.onnx.export(model, example, dynamo=True)
    assert isinstance(program, ptcore.onnx.ONNXProgram)
    program.optimize()
    path = tmp_path / "net.onnx"
    program.save(str(path))
    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    assert [i.name for i in m.graph.input] == ["image"]          # forward's parameter name
    assert program.model_proto.graph.input[0].name == "image"
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = example[0]
    want = model(x).detach().numpy()
    np.testing.assert_allclose(sess.run(None, {"image": x.numpy()})[0], want,
                               rtol=1e-5, atol=1e-6)
    got = program(x)                                              # runs in ONNX Runtime
    assert isinstance(got, tuple) and isinstance(got[0], ptcore.Tensor)
    np.testing.assert_allclose(got[0].numpy(), want, rtol=1e-5, atol=1e-6)
    program.release()
    assert "image" in repr(program)


def test_file_argument_and_return_values():
    model = Net().eval()
    x = ptcore.randn(1, 1, 8, 8)
    buf = io.BytesIO()
    program = ptcore.onnx.export(model, (x,), buf)                 # torch 2.13: dynamo=True
    assert isinstance(program, ptcore.onnx.ONNXProgram)
    assert buf.getvalue() and onnx.load_from_string(buf.getvalue()).graph.node
    assert ptcore.onnx.export(model, (x,), io.BytesIO(), dynamo=False) is None
    assert isinstance(ptcore.onnx.export(model, (x,), dynamo=False), ptcore.onnx.ONNXProgram)


def test_kwargs_and_dynamic_shapes():
    model = Net().eval()
    x = ptcore.randn(2, 1, 8, 8)
    s = ptcore.tensor(3.0)
    program = ptcore.onnx.export(model, (x,), kwargs={"scale": s},
                                 dynamic_shapes={"image": {0: "batch"}, "scale": None})
    m = program.model_proto
    assert [i.name for i in m.graph.input] == ["image", "scale"]
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    x5 = ptcore.randn(5, 1, 8, 8)
    np.testing.assert_allclose(program(x5, scale=s)[0].numpy(),
                               model(x5, scale=s).detach().numpy(), rtol=1e-5, atol=1e-6)
    # the tuple form: one entry per positional input
    program = ptcore.onnx.export(model, (x,), dynamic_shapes=({0: "n"},))
    assert program.model_proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "n"


def test_save_options(tmp_path):
    program = ptcore.onnx.export(Net().eval(), (ptcore.randn(1, 1, 8, 8),))
    p = tmp_path / "a.onnx"
    program.save(str(p), keep_initializers_as_inputs=True)
    m = onnx.load(str(p))
    assert {"fc.weight", "conv.weight"} <= {i.name for i in m.graph.input}
    p2 = tmp_path / "b.onnx"
    program.save(str(p2), include_initializers=False)
    assert len(onnx.load(str(p2)).graph.initializer) == 0
