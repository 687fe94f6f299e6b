"""User programs with torch.onnx.export: the file's inputs, initializers
and outputs as torch writes them (export_params, keep_initializers_as_inputs,
dict outputs, keyword inputs, nested tuple inputs, output shapes), run in
ONNX Runtime."""
import io
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _export(model, args, **kw):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptcore.onnx.export(model, args, buf, **kw)
    data = buf.getvalue()
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto)
    return proto, ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _dims(value_info):
    return [d.dim_param or (d.dim_value if d.HasField("dim_value") else None)
            for d in value_info.type.tensor_type.shape.dim]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def _x(*shape, seed=0):
    return ptcore.tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32"))


def test_export_params_false_makes_the_weights_inputs():
    m = MLP().eval()
    x = _x(2, 4)
    proto, sess = _export(m, (x,), export_params=False, input_names=["x"])
    assert len(proto.graph.initializer) == 0
    names = [i.name for i in proto.graph.input]
    assert names == ["x", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert _dims(proto.graph.input[1]) == [8, 4]
    feeds = {"x": x.numpy()}
    feeds.update({k: v.detach().numpy() for k, v in m.state_dict().items()})
    np.testing.assert_allclose(sess.run(None, feeds)[0], m(x).detach().numpy(), atol=1e-5)


def test_keep_initializers_as_inputs():
    m = MLP().eval()
    x = _x(2, 4)
    proto, sess = _export(m, (x,), keep_initializers_as_inputs=True, input_names=["x"])
    inits = {t.name for t in proto.graph.initializer}
    assert {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"} <= inits
    assert [i.name for i in proto.graph.input] == ["x", "fc1.weight", "fc1.bias",
                                                   "fc2.weight", "fc2.bias"]
    # the inputs default to the initializers
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], m(x).detach().numpy(),
                               atol=1e-5)
    proto, _ = _export(m, (x,), input_names=["x"])
    assert [i.name for i in proto.graph.input] == ["x"]


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(3, 2)

    def forward(self, x):
        y = self.l(x)
        return {"logits": y, "probs": y.softmax(-1)}


def test_dict_output_is_exported_as_its_values():
    m = DictOut().eval()
    x = _x(4, 3)
    proto, sess = _export(m, (x,), input_names=["x"], output_names=["logits", "probs"])
    got = sess.run(None, {"x": x.numpy()})
    ref = m(x)
    for g, k in zip(got, ["logits", "probs"]):
        np.testing.assert_allclose(g, ref[k].detach().numpy(), atol=1e-6)


class KW(nn.Module):
    def forward(self, x, scale=None, bias=None):
        y = x if scale is None else x * scale
        return y if bias is None else y + bias


def test_trailing_dict_is_keyword_inputs():
    x, b = _x(3), _x(3, seed=1)
    proto, sess = _export(KW(), (x, {"bias": b}), input_names=["x", "bias"])
    assert [i.name for i in proto.graph.input] == ["x", "bias"]
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy(), "bias": b.numpy()})[0],
                               (x + b).numpy(), atol=1e-6)
    with pytest.raises(ptcore.onnx.OnnxExporterError, match="'nope'"):
        _export(KW(), (x, {"nope": b}))


class StateLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, batch_first=True)

    def forward(self, x, state):
        y, (h, c) = self.lstm(x, state)
        return y, h


def test_nested_tuple_inputs_are_flattened():
    m = StateLSTM().eval()
    x, h0, c0 = _x(2, 3, 4), _x(1, 2, 5, seed=1), _x(1, 2, 5, seed=2)
    proto, sess = _export(m, (x, (h0, c0)), input_names=["x", "h0", "c0"])
    assert [i.name for i in proto.graph.input] == ["x", "h0", "c0"]
    assert {t.name for t in proto.graph.initializer} & {"lstm.weight_ih_l0", "x"} <= \
        {"lstm.weight_ih_l0"}
    got = sess.run(None, {"x": x.numpy(), "h0": h0.numpy(), "c0": c0.numpy()})
    for g, r in zip(got, m(x, (h0, c0))):
        np.testing.assert_allclose(g, r.detach().numpy(), atol=1e-5)

    def fn(pair, w):
        a, b = pair
        return a * b + w
    a, b, w = _x(3), _x(3, seed=1), _x(3, seed=2)
    proto, sess = _export(fn, ((a, b), w))
    assert len(proto.graph.input) == 3
    got = sess.run(None, dict(zip([i.name for i in proto.graph.input],
                                  [a.numpy(), b.numpy(), w.numpy()])))[0]
    np.testing.assert_allclose(got, (a * b + w).numpy(), atol=1e-6)


class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.e, self.l = nn.Embedding(10, 4), nn.Linear(4, 6)

    def forward(self, ids):
        return self.l(self.e(ids)).mean(1), ids.argmax(-1)


def test_output_dims_that_dynamic_axes_do_not_name_are_inferred():
    ids = ptcore.tensor([[1, 2, 3], [4, 5, 9]])
    proto, sess = _export(Emb().eval(), (ids,), input_names=["ids"],
                          dynamic_axes={"ids": {0: "b", 1: "t"}})
    assert [_dims(o) for o in proto.graph.output] == [["b", 6], ["b"]]
    assert [o.shape for o in sess.get_outputs()] == [["b", 6], ["b"]]


def test_verbose_prints_the_exported_graph(capsys):
    _export(MLP().eval(), (_x(2, 4),), verbose=True)
    assert capsys.readouterr().out.strip()
    _export(MLP().eval(), (_x(2, 4),))
    assert not capsys.readouterr().out.strip()


def test_export_params_against_torch():
    torch = pytest.importorskip("torch")
    counts = []
    for T in (torch, ptcore):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 3)).eval()
        buf = io.BytesIO()
        kw = {"dynamo": False} if T is torch else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T.onnx.export(m, (T.ones(2, 4),), buf, export_params=False, input_names=["x"], **kw)
        p = onnx.load_from_string(buf.getvalue())
        counts.append((len(p.graph.initializer), [i.name for i in p.graph.input]))
    assert counts[0] == counts[1]


class CumSum(nn.Module):
    def forward(self, x, ids):
        return x.cumsum(1), ids.cumsum(-1), (x > 0).cumsum(0)


def test_cumsum():
    x, ids = _x(2, 5), ptcore.tensor([[1, 2, 3], [4, 5, 6]])
    proto, sess = _export(CumSum(), (x, ids), input_names=["x", "ids"],
                          dynamic_axes={"x": {1: "t"}})
    for X in (x, _x(2, 7, seed=3)):
        got = sess.run(None, {"x": X.numpy(), "ids": ids.numpy()})
        for g, r in zip(got, CumSum()(X, ids)):
            assert g.dtype == r.numpy().dtype
            np.testing.assert_allclose(g, r.numpy(), atol=1e-6)
