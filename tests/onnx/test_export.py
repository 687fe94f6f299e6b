"""ptcore.onnx.export: the files pass onnx.checker and ONNX Runtime gives
eager ptcore's outputs (dynamic batch included); unsupported ops and modes
are refused clearly."""
import io

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _export(model, args, **kw):
    buf = io.BytesIO()
    ptcore.onnx.export(model, args, buf, **kw)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data, ort.InferenceSession(data, providers=["CPUExecutionProvider"])


class LeNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 4, 5, padding=2)
        self.bn = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 8, 5)
        self.f1 = nn.Linear(200, 32)
        self.ln = nn.LayerNorm(32)
        self.f2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.c1(x))), 2)
        x = F.avg_pool2d(F.gelu(self.c2(x)), 2)
        x = x.view(x.size(0), -1)
        x = self.ln(F.leaky_relu(self.f1(x), 0.1))
        return F.log_softmax(self.f2(x) * 2.0 + 1.0, dim=1)


def _model(name):
    ptcore.manual_seed(0)
    if name == "mlp":
        return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Dropout(0.5), nn.Linear(16, 3),
                             nn.Softmax(dim=-1)), (4, 6)
    if name == "lenet":
        m = LeNetish()
        m(ptcore.randn(8, 1, 28, 28))       # running statistics that are not the defaults
        return m, (2, 1, 28, 28)
    if name == "cnn":
        return nn.Sequential(nn.Conv1d(3, 5, 3, stride=2, padding=1), nn.Sigmoid(),
                             nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(5, 2)), (2, 3, 16)
    raise KeyError(name)


@pytest.mark.parametrize("name", ["mlp", "lenet", "cnn"])
def test_onnxruntime_matches_eager(name):
    m, shape = _model(name)
    m.eval()
    x = ptcore.randn(*shape)
    data, sess = _export(m, (x,), input_names=["x"], output_names=["y"])
    inp = sess.get_inputs()[0]
    assert inp.name == "x" and list(inp.shape) == list(shape)
    got = sess.run(None, {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, m(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_dynamic_batch():
    m, shape = _model("lenet")
    m.eval()
    data, sess = _export(m, (ptcore.randn(*shape),), input_names=["x"], output_names=["y"],
                         dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    assert sess.get_inputs()[0].shape[0] == "batch"
    for bs in (1, 3, 7):
        x = ptcore.randn(bs, *shape[1:])
        got = sess.run(None, {"x": x.numpy()})[0]
        assert got.shape == (bs, 10)
        np.testing.assert_allclose(got, m(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_export_leaves_training_mode_and_weights_alone(tmp_path):
    m, shape = _model("mlp")
    m.train()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    path = tmp_path / "m.onnx"
    ptcore.onnx.export(m, ptcore.randn(*shape), str(path))
    assert m.training
    for k, v in m.state_dict().items():
        assert ptcore.equal(v, before[k])
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    assert model.opset_import[0].version == 17
    names = {i.name for i in model.graph.initializer}
    assert "0.weight" in names and "3.bias" in names


def test_functions_and_opset_choice():
    def f(a, b):
        return ptcore.tanh(a @ b.t()) - 1.0, (a * 3.0).sum(dim=1)
    a, b = ptcore.randn(3, 4), ptcore.randn(5, 4)
    data, sess = _export(f, (a, b), opset_version=18)
    outs = sess.run(None, {"a": a.numpy(), "b": b.numpy()})        # the function's names
    for got, exp in zip(outs, f(a, b)):
        np.testing.assert_allclose(got, exp.numpy(), rtol=1e-5, atol=1e-6)
    for bad in (8, 22):
        with pytest.raises(ptcore.onnx.OnnxExporterError, match="9-21"):
            ptcore.onnx.export(f, (a, b), io.BytesIO(), opset_version=bad)


def test_unsupported_op_is_named():
    def f(a):
        return ptcore.cumprod(a, 0)
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError, match="cumprod"):
        ptcore.onnx.export(f, (ptcore.randn(3),), io.BytesIO())


def test_mixed_dtype_arithmetic_follows_type_promotion():
    # int / int is true division (float), int * 2.5 is float, int + float tensor is float
    def f(a, b, x):
        return a / b + a * 2.5 + (a + b) / 3 + a + x
    a, b = ptcore.randint(1, 9, (2, 3)), ptcore.randint(1, 9, (2, 3))
    x = ptcore.randn(2, 3)
    data, sess = _export(f, (a, b, x))
    got = sess.run(None, {"a": a.numpy(), "b": b.numpy(), "x": x.numpy()})[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, f(a, b, x).numpy(), rtol=1e-6)


def test_where_of_two_numbers_exports():
    # torch.where(cond, 1.0, 0.0): both branches numbers, constants of the result's dtype
    class M(nn.Module):
        def forward(self, x):
            return ptcore.where(x > 0, 1.0, 0.0) + ptcore.where(x > 1, 2, 3)
    x = ptcore.tensor([-1.0, 0.5, 2.0, 0.0])
    _, sess = _export(M(), (x,))
    got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    np.testing.assert_array_equal(got, M()(x).numpy())
    assert got.dtype == np.float32


@pytest.mark.parametrize("name", ["tensor-const", "index_select", "gather", "topk",
                                  "topk-smallest", "sort", "argsort", "flip", "triu-tril",
                                  "logsumexp", "amax-amin", "clamp_min-max", "one_hot"])
def test_selection_and_ordering_ops_export(name):
    fns = {
        "tensor-const": lambda x: x * ptcore.tensor([[1.5, -1.0, 2.0, 0.0, 1.0]]) + ptcore.tensor(2.0),
        "index_select": lambda x: x.index_select(1, ptcore.tensor([2, 0])),
        "gather": lambda x: ptcore.gather(x, 1, ptcore.tensor([[1], [0], [4]])),
        "topk": lambda x: x.topk(2, 1),
        "topk-smallest": lambda x: ptcore.topk(x, 2, dim=0, largest=False)[1],
        "sort": lambda x: x.sort(1, descending=True),
        "argsort": lambda x: x.argsort(dim=0),
        "flip": lambda x: x.flip(1) + x.flip([0, 1]),
        "triu-tril": lambda x: x.triu(1) + ptcore.tril(x, -1),
        "logsumexp": lambda x: ptcore.logsumexp(x, 1),
        "amax-amin": lambda x: x.amax(1, keepdim=True) + x.amin(),
        "clamp_min-max": lambda x: x.clamp_min(0.1) + x.clamp_max(0.2),
        "one_hot": lambda x: F.one_hot(x.argmax(1), 5),
    }

    class M(nn.Module):
        def forward(self, x):
            return fns[name](x)
    x = ptcore.tensor(np.random.default_rng(len(name)).standard_normal((3, 5)).astype(np.float32))
    _, sess = _export(M(), (x,))
    got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})
    ref = M()(x)
    ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.dtype == r.numpy().dtype
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["group_norm", "group_norm-module", "instance_norm",
                                  "instance_norm-module", "std", "var", "var-corrections", "norm",
                                  "vector_norm", "any", "all", "floor_divide", "mse_loss",
                                  "cosine_similarity"])
def test_norm_and_statistics_ops_export(name):
    fns = {
        "group_norm": lambda m, x: F.group_norm(x, 4),
        "group_norm-module": lambda m, x: m.gn(x),
        "instance_norm": lambda m, x: F.instance_norm(x),
        "instance_norm-module": lambda m, x: m.inn(x),
        "std": lambda m, x: x.std(1),
        "var": lambda m, x: x.var((2, 3), keepdim=True) + x.var(),
        "var-corrections": lambda m, x: x.var(1, unbiased=False) + ptcore.std(x, dim=2,
                                                                             correction=0),
        "norm": lambda m, x: x.norm(dim=1) + x.norm(p=1, dim=1),
        "vector_norm": lambda m, x: ptcore.linalg.vector_norm(x, 2, 1, True),
        "any": lambda m, x: (x > 1).any(1),
        "all": lambda m, x: (x > -3).all(),
        "floor_divide": lambda m, x: x // 0.5,
        "mse_loss": lambda m, x: F.mse_loss(x, x * 2) + F.mse_loss(x, x.flip(0), reduction="sum"),
        "cosine_similarity": lambda m, x: F.cosine_similarity(x, x + 1),
    }

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.gn = nn.GroupNorm(2, 4)
            self.inn = nn.InstanceNorm2d(4, affine=True)
            with ptcore.no_grad():
                self.gn.weight.copy_(ptcore.arange(4.0) + 1)
                self.gn.bias.fill_(0.5)
                self.inn.weight.copy_(ptcore.arange(4.0))
                self.inn.bias.fill_(-1.0)

        def forward(self, x):
            return fns[name](self, x)
    m = M().eval()
    x = ptcore.tensor(np.random.default_rng(len(name)).standard_normal((2, 4, 4, 4))
                      .astype(np.float32))
    data, sess = _export(m, (x,))
    # constants that an opset lowering turned into attributes are not left behind
    g = onnx.load_from_string(data).graph
    read = {i for n in g.node for i in n.input}
    assert all(t.name in read for t in g.initializer)
    got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    ref = m(x).detach().numpy()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["pad-constant", "pad-value", "pad-reflect", "pad-replicate",
                                  "pad-crop", "ZeroPad2d", "adaptive-avg-2", "adaptive-avg-3x1",
                                  "adaptive-avg-1", "adaptive-max-2", "adaptive-max-1d",
                                  "prelu"])
def test_pad_adaptive_pool_prelu_export(name):
    fns = {
        "pad-constant": lambda m, x: F.pad(x, (1, 2, 0, 1)),
        "pad-value": lambda m, x: F.pad(x, (1, 1), value=3.5),
        "pad-reflect": lambda m, x: F.pad(x, (1, 1, 2, 2), mode="reflect"),
        "pad-replicate": lambda m, x: F.pad(x, (1, 2, 1, 0), mode="replicate"),
        "pad-crop": lambda m, x: F.pad(x, (-1, 1)),
        "ZeroPad2d": lambda m, x: nn.ZeroPad2d(1)(x),
        "adaptive-avg-2": lambda m, x: F.adaptive_avg_pool2d(x, 2),
        "adaptive-avg-3x1": lambda m, x: F.adaptive_avg_pool2d(x, (3, 1)),
        "adaptive-avg-1": lambda m, x: F.adaptive_avg_pool2d(x, 1),
        "adaptive-max-2": lambda m, x: F.adaptive_max_pool2d(x, 2),
        "adaptive-max-1d": lambda m, x: F.adaptive_max_pool1d(x.flatten(2), 4),
        "prelu": lambda m, x: m.per_channel(x) + m.single(x),
    }

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.per_channel, self.single = nn.PReLU(4), nn.PReLU()
            with ptcore.no_grad():
                self.per_channel.weight.copy_(ptcore.tensor([0.1, 0.2, 0.3, 0.4]))

        def forward(self, x):
            return fns[name](self, x)
    m = M().eval()
    x = ptcore.tensor(np.random.default_rng(len(name)).standard_normal((2, 4, 6, 6))
                      .astype(np.float32))
    _, sess = _export(m, (x,))
    got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    ref = m(x).detach().numpy()
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_adaptive_pool_to_a_size_that_does_not_divide_is_refused():
    class M(nn.Module):
        def forward(self, x):
            return F.adaptive_avg_pool2d(x, 4)
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError, match="divide"):
        _export(M(), (ptcore.ones(1, 2, 6, 6),))
