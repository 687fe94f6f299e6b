"""ptcore.onnx.export of recurrent, attention, Transformer, transposed
convolution and resampling layers, and of the shape and indexing ops they
record: onnx.checker passes and ONNX Runtime gives eager ptcore's outputs.
Multi-head attention is recorded as the ops it calls (a composite the export
decomposes); the tracer refuses a decomposition that would bake in a value
computed outside the operator table."""
import io
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore import jit

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _flat(r, out):
    if isinstance(r, (tuple, list)):
        for x in r:
            _flat(x, out)
    elif r is not None:
        out.append(r)
    return out


def _compare(sess, model, args, atol=1e-5):
    """ONNX Runtime's outputs on ``args`` against eager ptcore's."""
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)}
    got = sess.run(None, feeds)
    with ptcore.no_grad():
        want = _flat(model(*args), [])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=atol)


def _check(model, *args, atol=1e-5):
    if isinstance(model, nn.Module):
        model.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        ptcore.onnx.export(model, args, buf)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    _compare(ort.InferenceSession(data, providers=["CPUExecutionProvider"]), model, args, atol)
    return data


class _Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(50, 16)
        self.ln = nn.LayerNorm(16)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        return self.out(self.ln(self.e(x))).softmax(-1)


def test_transformer_encoder():
    ptcore.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, dropout=0.0)
    _check(nn.TransformerEncoder(layer, 2), ptcore.randn(2, 5, 16))


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_transformer_encoder_norm_first_gelu():
    ptcore.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True)
    _check(nn.TransformerEncoder(layer, 1), ptcore.randn(4, 3, 8))


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention(need_weights):
    ptcore.manual_seed(2)
    m = nn.MultiheadAttention(16, 4, batch_first=True)
    q, k = ptcore.randn(2, 5, 16), ptcore.randn(2, 7, 16)

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, q, k):
            out, w = self.m(q, k, k, need_weights=need_weights)
            return (out, w) if need_weights else out
    _check(Wrap(), q, k)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_recurrent_layers(kind):
    ptcore.manual_seed(3)
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
    _check(cls(8, 16, num_layers=2, batch_first=True), ptcore.randn(3, 6, 8))
    _check(cls(8, 12, bidirectional=True), ptcore.randn(5, 2, 8))


def test_recurrent_cells():
    ptcore.manual_seed(4)
    _check(nn.LSTMCell(8, 16), ptcore.randn(3, 8))
    _check(nn.GRUCell(8, 16), ptcore.randn(3, 8), ptcore.randn(3, 16))


def test_embedding_layer_norm_softmax_method():
    ptcore.manual_seed(5)
    _check(_Embed(), ptcore.randint(0, 50, (2, 6)))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_transposed_convolution_and_upsampling(mode):
    ptcore.manual_seed(6)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.MaxPool2d(2), nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1,
                                                          output_padding=1),
                      nn.Upsample(scale_factor=2, mode=mode), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten())
    _check(m, ptcore.randn(2, 3, 8, 8))
    _check(nn.ConvTranspose1d(4, 2, 3, stride=2, groups=2), ptcore.randn(2, 4, 7))


def test_indexing_and_shape_ops():
    def f(x):
        a = x[:, 1:3]
        b = x[0]
        c = x[..., None]
        d = x[:, -1]
        e = ptcore.stack([a.sum(1), d], 1).unsqueeze(0).squeeze(0)
        z = ptcore.zeros(2, 4) + ptcore.ones(2, 4) * 3
        p, q = x.chunk(2, dim=1)
        r = x.unbind(0)
        s1, s2 = ptcore.split(x, [1, 3], dim=1)
        return a, b, c, d, e, x.narrow(1, 1, 2), z, x.unflatten(1, (2, 2)), p - q, r[2], s2 * s1
    _check(f, ptcore.randn(3, 4, 5)[:, :4, 0].contiguous())


@pytest.mark.parametrize("mask", ["causal", "bool", "float", None])
def test_scaled_dot_product_attention(mask):
    ptcore.manual_seed(7)
    q, k, v = ptcore.randn(2, 3, 5, 4), ptcore.randn(2, 3, 5, 4), ptcore.randn(2, 3, 5, 4)
    if mask == "causal":
        _check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
        return
    m = None
    if mask == "bool":
        m = ptcore.rand(5, 5) > 0.3
        m[:, 0] = True
    elif mask == "float":
        m = ptcore.randn(5, 5)
    _check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
           q, k, v)


def test_recurrent_layer_follows_dynamic_axes():
    # an ONNX LSTM node, no longer unrolled at the traced sizes (more in
    # test_export_recurrent.py)
    ptcore.manual_seed(9)
    m = nn.LSTM(4, 6).eval()
    buf = io.BytesIO()
    ptcore.onnx.export(m, (ptcore.randn(3, 2, 4),), buf, input_names=["x"],
                       output_names=["y", "h", "c"],
                       dynamic_axes={n: {1: "batch"} for n in ("x", "y", "h", "c")})
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    _compare(sess, m, (ptcore.randn(3, 5, 4),))


def test_decomposition_refuses_values_computed_outside_the_table():
    # scaled_dot_product_attention's CPU path computes its products in
    # Cython: recorded as its calls, the trace would miss them
    def f(q):
        return F.scaled_dot_product_attention(q, q, q) * 2
    q = ptcore.randn(1, 2, 3, 4)
    with pytest.raises(jit.JitError, match="outside the operator table"):
        jit.trace(f, q, _transparent={("nn.functional", "scaled_dot_product_attention")})
    assert jit.trace(f, q) is not None         # recorded whole: fine


def test_transformer_decoder():
    ptcore.manual_seed(8)
    layer = nn.TransformerDecoderLayer(16, 4, 32, batch_first=True, dropout=0.0)
    _check(nn.TransformerDecoder(layer, 1), ptcore.randn(2, 5, 16), ptcore.randn(2, 6, 16))


class _GPTAttention(nn.Module):
    """minGPT's causal self-attention: masked_fill of a tril buffer, split,
    head views, Python operators."""

    def __init__(self, C=16, H=4, T=8):
        super().__init__()
        self.c_attn = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.H = H
        self.register_buffer("bias", ptcore.tril(ptcore.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(F.gelu(y)) + 2 ** y


def _activations(x):
    return (F.silu(x) + F.elu(x, 0.5) + F.softplus(x) + F.softplus(x, beta=2.0) +
            F.hardtanh(x) + x.clamp(-0.5, 0.5) + x.clamp(min=0.1) + F.relu6(x) +
            F.hardswish(x) + F.hardsigmoid(x) + F.mish(x) + ptcore.rsqrt(x.abs() + 1) +
            x ** 2 + F.normalize(x, dim=-1) + x.max(dim=-1, keepdim=True).values +
            x.min(-1, True)[0] + ptcore.where(x > 0.2, x, -x) + (x <= 0).float() +
            (x != 0.5).float() * 3 - 1 / (x.abs() + 1))


@pytest.mark.parametrize("opset", [17, 18])
def test_gpt_attention_and_activations(opset):
    ptcore.manual_seed(9)
    for model, args in ((_GPTAttention(), (ptcore.randn(2, 8, 16),)),
                        (_activations, (ptcore.randn(3, 4, 6),))):
        buf = io.BytesIO()
        ptcore.onnx.export(model, args, buf, opset_version=opset)
        sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: args[0].numpy()})[0]
        with ptcore.no_grad():
            np.testing.assert_allclose(got, model(*args).numpy(), rtol=1e-5, atol=1e-5)


class _ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = nn.Linear(8, 5)
        self.bn1d = nn.BatchNorm1d(5)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = y + self.dw(y)
        y = ptcore.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return F.log_softmax(self.bn1d(self.fc(y)), dim=1), y.argmax(dim=1)


def test_residual_depthwise_argmax():
    ptcore.manual_seed(10)
    _check(_ResBlock(), ptcore.randn(2, 3, 8, 8))


@pytest.mark.parametrize("opset", [17, 18])
def test_max_min_forms_and_whole_reductions(opset):
    def f(x, y):
        return (ptcore.max(x, y) + x.min(y) + ptcore.maximum(x, y) + x.max() +
                x.min(dim=1)[0].sum() + y.mean())
    x, y = ptcore.randn(3, 4), ptcore.randn(3, 4)
    buf = io.BytesIO()
    ptcore.onnx.export(f, (x, y), buf, opset_version=opset)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), (x, y))})[0]
    np.testing.assert_allclose(got, f(x, y).numpy(), rtol=1e-6)


def test_unsupported_op_is_named():
    with pytest.raises(ptcore.onnx.UnsupportedOperatorError, match="cumprod"):
        ptcore.onnx.export(lambda x: x.cumprod(0), (ptcore.randn(3),), io.BytesIO())
