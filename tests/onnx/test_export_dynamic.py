"""ptcore.onnx.export with ``dynamic_axes``: the sizes a model reads
(``x.size(0)``, ``B, T, C = x.shape``, ``numel()`` and their arithmetic) are
computed by the exported graph, so the file runs in ONNX Runtime at other
batch sizes and sequence lengths with eager ptcore's outputs: minGPT blocks
(``view(B, T, nh, C // nh)``, the causal mask sliced ``[:, :, :T, :T]``,
``arange(T)`` positions), ``scaled_dot_product_attention(is_causal=True)``,
``nn.TransformerEncoder`` and ``nn.MultiheadAttention`` (``bsz * num_heads``
reshapes), a ViT-style class token ``expand(B, -1, -1)``; and a conversion
that must keep a size as a number says so."""
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


def _export(model, example, dynamic_axes, names=("x",)):
    model.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        ptcore.onnx.export(model, example, buf, input_names=list(names), output_names=["y"],
                           dynamic_axes=dynamic_axes)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data, ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _check(model, example, dynamic_axes, others, atol=1e-5):
    data, sess = _export(model, example, dynamic_axes)
    for x in others:
        got = sess.run(None, {"x": x.numpy()})[0]
        with ptcore.no_grad():
            want = model(x)
        want = want[0] if isinstance(want, tuple) else want
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=atol)
    return data, sess


class MinGPTBlock(nn.Module):
    def __init__(self, C=32, nh=4, block=16):
        super().__init__()
        self.c_attn, self.c_proj, self.nh = nn.Linear(C, 3 * C), nn.Linear(C, C), nh
        self.register_buffer("bias", ptcore.tril(ptcore.ones(block, block))
                             .view(1, 1, block, block))
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))

    def attn(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.nh, C // self.nh).transpose(1, 2)
        q = q.view(B, T, self.nh, C // self.nh).transpose(1, 2)
        v = v.view(B, T, self.nh, C // self.nh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, C=32, block=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, C), nn.Embedding(block, C)
        self.h = nn.Sequential(MinGPTBlock(C), MinGPTBlock(C))
        self.head = nn.Linear(C, vocab, bias=False)

    def forward(self, idx):
        b, t = idx.size()
        pos = ptcore.arange(0, t, dtype=ptcore.long, device=idx.device)
        return self.head(self.h(self.wte(idx) + self.wpe(pos)))


def test_mingpt_block_batch_and_sequence():
    ptcore.manual_seed(0)
    data, sess = _check(MinGPTBlock(), ptcore.randn(2, 8, 32), {"x": {0: "b", 1: "t"}},
                        [ptcore.randn(3, 5, 32), ptcore.randn(1, 16, 32), ptcore.randn(2, 8, 32)])
    model = onnx.load_from_string(data)
    ops = {n.op_type for n in model.graph.node}
    assert "Shape" in ops                        # the sizes come from the input
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in dims[:2]] == ["b", "t"]


def test_gpt_positions_follow_the_sequence():
    ptcore.manual_seed(1)
    _check(TinyGPT(), ptcore.randint(0, 50, (2, 8)), {"x": {0: "b", 1: "t"}},
           [ptcore.randint(0, 50, (3, 5)), ptcore.randint(0, 50, (1, 16))])


def test_sdpa_causal_mask_follows_the_sequence():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(32, 96)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (t.reshape(B, T, 4, -1).permute(0, 2, 1, 3) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return y.permute(0, 2, 1, 3).reshape(B, T, C)
    ptcore.manual_seed(2)
    _check(M(), ptcore.randn(2, 8, 32), {"x": {0: "b", 1: "t"}},
           [ptcore.randn(3, 5, 32), ptcore.randn(1, 11, 32)])


def test_transformer_encoder_sequence_first():
    ptcore.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # (enable_nested_tensor)
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0), 2)
    _check(enc, ptcore.randn(7, 2, 32), {"x": {0: "t", 1: "b"}},
           [ptcore.randn(5, 3, 32), ptcore.randn(9, 1, 32)])


def test_multihead_attention_bsz_times_heads():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = nn.MultiheadAttention(32, 4, batch_first=True)

        def forward(self, x):
            return self.m(x, x, x, need_weights=False)[0]
    ptcore.manual_seed(4)
    _check(M(), ptcore.randn(2, 7, 32), {"x": {0: "b", 1: "t"}},
           [ptcore.randn(3, 5, 32), ptcore.randn(1, 2, 32)])


def test_vit_class_token_expand_and_flatten_from_dim_2():
    class ViT(nn.Module):
        def __init__(self, C=32):
            super().__init__()
            self.patch = nn.Conv2d(3, C, 4, 4)
            self.cls = nn.Parameter(ptcore.randn(1, 1, C))
            self.enc = nn.TransformerEncoder(
                nn.TransformerEncoderLayer(C, 4, 64, dropout=0.0, batch_first=True), 1)
            self.head = nn.Linear(C, 10)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = ptcore.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
            return self.head(self.enc(x)[:, 0])
    ptcore.manual_seed(5)
    _check(ViT(), ptcore.randn(2, 3, 16, 16), {"x": {0: "b"}}, [ptcore.randn(5, 3, 16, 16)])


@pytest.mark.parametrize("term", ["filled", "index", "narrow", "arith", "repeat", "arange",
                                  "unflatten"])
def test_size_arguments(term):
    def f(x):
        B, T, C = x.shape
        if term == "filled":
            return (x.new_zeros(B, T, 1) + ptcore.zeros(B, T, C) + ptcore.full((B, 1, C), 2.0)
                    + ptcore.ones_like(x) + x.new_full((B, T, C), 0.5))
        if term == "index":
            return x[:, -1:] + x[:, :-1].sum(1, keepdim=True) + x[:, -1].unsqueeze(1) + \
                x[:, T - 1:T]
        if term == "narrow":
            return x.narrow(1, 0, T - 1).mean(1, keepdim=True) + \
                x.narrow(1, T - 2, 2).mean(1, keepdim=True) + x.narrow(1, -2, 2).sum(1, True)
        if term == "arith":
            # floor division of a negative size (T < 10): Python's floor, not truncation
            return x.reshape(-1, x.size(-1)).view(B, T, C) * (T // 2) - x.numel() // 7 + \
                (T - 10) // 3 + T % 4
        if term == "repeat":
            return x[:, :1].repeat(1, T, 1) + x.mean(1, keepdim=True).expand(B, T, C) + \
                x[:, :1].expand_as(x)
        if term == "arange":
            return (ptcore.arange(T).float().view(1, T, 1) / T) * x + \
                ptcore.arange(0, C, 2).repeat(2).float() + ptcore.arange(1, T + 1).view(T, 1)
        return x.unflatten(2, (4, -1)).flatten(2) + x.view(B * T, C).view(B, T, C)

    class M(nn.Module):
        def forward(self, x):
            return f(x)
    ptcore.manual_seed(6)
    _check(M(), ptcore.randn(2, 6, 8), {"x": {0: "b", 1: "t"}},
           [ptcore.randn(3, 5, 8), ptcore.randn(1, 13, 8)])


def test_interpolate_scale_factor_follows_spatial_axes():
    class M(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=2, mode="bilinear") + \
                F.interpolate(x, scale_factor=2, mode="nearest")
    _check(M(), ptcore.randn(2, 3, 4, 4), {"x": {0: "b", 2: "h", 3: "w"}},
           [ptcore.randn(3, 3, 5, 7)])

    class S(nn.Module):
        def forward(self, x):
            return F.interpolate(x, size=(8, 6), mode="nearest")
    _check(S(), ptcore.randn(2, 3, 4, 4), {"x": {0: "b"}}, [ptcore.randn(5, 3, 4, 4)])


def test_flatten_from_a_middle_dim_without_dynamic_axes():
    # ONNX Flatten is always 2-D: flatten(2) must not become Flatten(axis=2)
    class M(nn.Module):
        def forward(self, x):
            return x.flatten(2) + 1, x.flatten(1, 2) * 2, ptcore.flatten(x)
    x = ptcore.randn(2, 3, 4, 5)
    buf = io.BytesIO()
    ptcore.onnx.export(M(), (x,), buf, input_names=["x"])
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for got, want in zip(sess.run(None, {"x": x.numpy()}), M()(x)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)


def test_a_size_kept_as_a_number_warns():
    class M(nn.Module):
        def forward(self, x):
            a, c = x.split(x.size(1) // 2, dim=1)
            return a * c
    buf = io.BytesIO()
    with pytest.warns(ptcore.onnx.OnnxExporterWarning, match="Tensor::split.*dynamic_axes"):
        ptcore.onnx.export(M(), (ptcore.randn(2, 6, 8),), buf, input_names=["x"],
                           dynamic_axes={"x": {0: "b"}})
    # along the batch it still follows
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = ptcore.randn(4, 6, 8)
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], M()(x).numpy(),
                               rtol=1e-6)


def test_without_dynamic_axes_the_file_holds_no_size_arithmetic():
    data, _ = _export(MinGPTBlock(), ptcore.randn(2, 8, 32), None)
    ops = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert "Shape" not in ops and "Range" not in ops


def test_outputs_not_named_in_dynamic_axes_have_inferred_dims():
    # as torch writes them (ONNX shape inference): the dims that follow the
    # input's dynamic axes by their names, the fixed one by its size, none
    # fixed to the example's sizes
    data, sess = _export(MinGPTBlock(), ptcore.randn(2, 8, 32), {"x": {0: "b", 1: "t"}})
    out = onnx.load_from_string(data).graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in out] == ["b", "t", 32]


def test_none_outputs_are_dropped_as_torch_does():
    # MultiheadAttention(need_weights=False) returns (attn_output, None):
    # torch.onnx.export writes the one tensor (jit.trace itself refuses None)
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = nn.MultiheadAttention(8, 2)

        def forward(self, x):
            return self.m(x, x, x, need_weights=False)
    m = M().eval()
    x = ptcore.randn(3, 2, 8)
    data, sess = _export(m, (x,), {"x": {0: "t", 1: "b"}})
    assert len(sess.get_outputs()) == 1
    for xi in (x, ptcore.randn(5, 1, 8)):
        np.testing.assert_allclose(sess.run(None, {"x": xi.numpy()})[0],
                                   m(xi)[0].detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="Only tensors"):
        jit.trace(m, (x,))
