"""ptcore.onnx.export at every opset from 9 to 21 (tutorials pass 9-14):
the converters write each op in its newest form and the builder rewrites
the nodes whose form changed (axes as attributes before 13, Shape start/end
before 15, HardSwish before 14, LayerNormalization before 17, Softmax over
another dim than the last before 13, Slice attributes at 9, ...).  The file
passes onnx.checker, declares the opset and runs in ONNX Runtime with eager
ptcore's outputs -- or the export names the op and the opset it needs."""
import io
import math
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore import jit

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

OPSETS = list(range(9, 22))


class SuperResolution(nn.Module):
    """The PyTorch ONNX tutorial's model (exported there at opset 10)."""

    def __init__(self, r=3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, 1, 2)
        self.conv2 = nn.Conv2d(16, 16, 3, 1, 1)
        self.conv3 = nn.Conv2d(16, r * r, 3, 1, 1)
        self.r = r

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return F.pixel_shuffle(self.conv3(x), self.r)


class Mixed(nn.Module):
    """Ops whose ONNX form changed across opsets."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.ln = nn.LayerNorm(6)

    def forward(self, x):                       # x: (2, 3, 6)
        y = self.ln(self.lin(x))
        y = F.hardswish(y) + F.softmax(y, dim=1) + F.log_softmax(y, dim=-1)
        y = y.clamp(-1.0, 2.0) + y.unsqueeze(1).squeeze(1) + y.sum(-1, keepdim=True)
        a, c = y.split([2, 4], dim=-1)
        z = ptcore.cat([c, a], dim=-1) * (y >= 0.1).float() * (y <= 0.9).float()
        return z.mean(-1) + y[:, 1:, 2:4].sum(-1).mean(-1, keepdim=True) + \
            z.argmax(-1).float()


def _tiny_gpt_block():
    class Block(nn.Module):
        def __init__(self, C=16, nh=2):
            super().__init__()
            self.qkv, self.proj, self.nh = nn.Linear(C, 3 * C), nn.Linear(C, C), nh
            self.ln = nn.LayerNorm(C)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
            q, k, v = (t.view(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return x + self.proj(y.transpose(1, 2).reshape(B, T, C))
    return Block()


def _models():
    ptcore.manual_seed(0)
    lenet = nn.Sequential(nn.Conv2d(1, 4, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 12 * 12, 10), nn.LogSoftmax(dim=1))
    lstm = nn.LSTM(5, 7, num_layers=2)
    return {"lenet": (lenet, ptcore.randn(2, 1, 28, 28), None),
            "superres": (SuperResolution(), ptcore.randn(1, 1, 8, 8), None),
            "mixed": (Mixed(), ptcore.randn(2, 3, 6), None),
            "lstm": (lstm, ptcore.randn(4, 2, 5), None),
            "gpt_dynamic": (_tiny_gpt_block(), ptcore.randn(2, 5, 16),
                            {"x": {0: "b", 1: "t"}})}


_MODELS = _models()


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(_MODELS))
def test_model_at_opset(name, opset):
    model, x, dyn = _MODELS[name]
    model.eval()
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jit.TracerWarning)
            ptcore.onnx.export(model, (x,), buf, opset_version=opset, input_names=["x"],
                               dynamic_axes=dyn)
    except ptcore.onnx.UnsupportedOperatorError as e:
        # only a dynamic-shape model may need a newer opset (Range from 11)
        assert dyn is not None and opset < 11 and "opset 11" in str(e), str(e)
        return
    data = buf.getvalue()
    m = onnx.load_from_string(data)
    onnx.checker.check_model(m, full_check=True)
    assert [o.version for o in m.opset_import if o.domain == ""] == [opset]
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    inputs = [x] if dyn is None else [x, ptcore.randn(3, 7, 16)]
    for xi in inputs:
        got = sess.run(None, {"x": xi.numpy()})[0]
        with ptcore.no_grad():
            want = model(xi)
        want = want[0] if isinstance(want, tuple) else want
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)


def test_lowered_forms_are_the_old_ones():
    model, x, _ = _MODELS["mixed"]
    buf = io.BytesIO()
    ptcore.onnx.export(model.eval(), (x,), buf, opset_version=12)
    nodes = onnx.load_from_string(buf.getvalue()).graph.node
    ops = [n.op_type for n in nodes]
    assert "LayerNormalization" not in ops and "HardSwish" not in ops
    for n in nodes:
        if n.op_type in ("Unsqueeze", "Squeeze", "ReduceSum", "Split"):
            assert len(n.input) == 1 and {a.name for a in n.attribute} & {"axes", "split"}
    buf = io.BytesIO()
    ptcore.onnx.export(model.eval(), (x,), buf, opset_version=17)
    ops = [n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node]
    assert "LayerNormalization" in ops and "HardSwish" in ops


def test_an_op_newer_than_the_opset_is_named():
    def f(x):
        return x + ptcore.arange(x.shape[0]).float()
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError, match="Range needs opset 11"):
        ptcore.onnx.export(f, (ptcore.randn(4),), io.BytesIO(), opset_version=10,
                           input_names=["x"], dynamic_axes={"x": [0]})
