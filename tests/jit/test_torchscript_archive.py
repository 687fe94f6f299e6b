"""ptcore.jit.load of archives written by torch.jit.save: values and gradients
equal torch's, and a hostile archive is refused without running its code."""
import io
import os
import re
import zipfile

import numpy as np
import pytest

import ptcore
from ptcore.jit._ir import JitError

torch = pytest.importorskip("torch")
tnn = torch.nn


class CNN(tnn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = tnn.Conv2d(1, 4, 3, padding=1)
        self.c2 = tnn.Conv2d(4, 8, 3, stride=2)
        self.pool = tnn.MaxPool2d(2)
        self.bn = tnn.BatchNorm2d(8)
        self.ap = tnn.AdaptiveAvgPool2d((3, 3))
        self.drop = tnn.Dropout(0.2)
        self.fc = tnn.Linear(72, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.c1(x)))
        x = self.ap(self.bn(self.c2(x)))
        return self.fc(self.drop(torch.flatten(x, 1)))


class MLP(tnn.Module):
    def __init__(self):
        super().__init__()
        self.net = tnn.Sequential(tnn.Linear(6, 16), tnn.GELU(), tnn.LayerNorm(16),
                                  tnn.Linear(16, 3), tnn.Softmax(-1))

    def forward(self, x):
        return self.net(x)


class Loop(tnn.Module):
    def __init__(self):
        super().__init__()
        self.emb = tnn.Embedding(20, 8)
        self.lin = tnn.Linear(8, 2)

    def forward(self, idx):
        h = self.emb(idx).mean(1)
        out = []
        for i in range(h.size(0)):
            out.append(h[i] * float(i))
        y = self.lin(torch.stack(out, 0))
        if bool(y.sum() > 0):
            y = y * 2
        return y, h.shape[0]


class Encoder(tnn.Module):
    def __init__(self):
        super().__init__()
        self.layer = tnn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class BNTrain(tnn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tnn.Linear(4, 6)
        self.bn = tnn.BatchNorm1d(6)

    def forward(self, x):
        return self.bn(self.lin(x)).tanh()


def _input(name, rng):
    if name == "Loop":
        return torch.from_numpy(rng.integers(0, 20, (3, 5)))
    shape = {"CNN": (2, 1, 12, 12), "MLP": (4, 6), "Encoder": (2, 5, 16), "BNTrain": (5, 4)}[name]
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def _archive(model, how, x):
    sm = torch.jit.script(model) if how == "script" else torch.jit.trace(model, (x,),
                                                                         check_trace=False)
    buf = io.BytesIO()
    torch.jit.save(sm, buf)
    return sm, buf.getvalue()


def _first(y):
    return y[0] if isinstance(y, tuple) else y


@pytest.mark.parametrize("how", ["script", "trace"])
@pytest.mark.parametrize("cls", [CNN, MLP, Loop, Encoder, BNTrain])
def test_outputs_and_gradients_match_torch(cls, how):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = cls()
    model.train(cls is BNTrain)
    if cls is Encoder and how == "trace":
        model.eval()
    x = _input(cls.__name__, rng)
    sm, data = _archive(model, how, x)
    pm = ptcore.jit.load(io.BytesIO(data))
    assert isinstance(pm, ptcore.jit.ScriptModule)
    # the parameters are the archive's, under the same names
    tsd = sm.state_dict()
    psd = pm.state_dict()
    assert sorted(tsd) == sorted(psd)
    for k in tsd:
        np.testing.assert_array_equal(psd[k].numpy(), tsd[k].numpy())
    xp = ptcore.from_numpy(x.numpy().copy())
    ty, py = sm(x), pm(xp)
    if isinstance(ty, tuple):
        assert int(py[1]) == int(ty[1])
    np.testing.assert_allclose(_first(py).detach().numpy(), _first(ty).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    # gradients through the loaded program equal torch's
    w = rng.standard_normal(tuple(_first(ty).shape)).astype(np.float32)
    (_first(ty) * torch.from_numpy(w)).sum().backward()
    (_first(py) * ptcore.from_numpy(w)).sum().backward()
    tp = dict(sm.named_parameters())
    for name, p in pm.named_parameters():
        if tp[name].grad is None:
            assert p.grad is None or float(p.grad.abs().sum()) == 0.0
            continue
        np.testing.assert_allclose(p.grad.numpy(), tp[name].grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    if cls is BNTrain:
        # the training branch updated the running statistics as torch's did
        np.testing.assert_allclose(pm.bn.running_mean.numpy(), sm.bn.running_mean.numpy(),
                                   rtol=1e-5, atol=1e-6)
        assert int(pm.bn.num_batches_tracked) == int(sm.bn.num_batches_tracked)


def test_graph_and_code_are_readable(tmp_path):
    torch.manual_seed(0)
    sm, data = _archive(MLP().eval(), "script", None)
    f = tmp_path / "mlp.pt"
    f.write_bytes(data)
    pm = ptcore.jit.load(str(f), map_location="cpu")
    g = str(pm.graph)
    assert "linear" in g and "layer_norm" in g and "softmax" in g
    # and it round-trips through ptcore's own format
    buf = io.BytesIO()
    ptcore.jit.save(pm, buf)
    buf.seek(0)
    again = ptcore.jit.load(buf)
    x = ptcore.randn(3, 6)
    np.testing.assert_allclose(again(x).detach().numpy(), pm(x).detach().numpy(), rtol=1e-6)


def test_extra_files():
    sm = torch.jit.script(MLP().eval())
    buf = io.BytesIO()
    torch.jit.save(sm, buf, _extra_files={"meta.txt": b"hello"})
    extra = {"meta.txt": b"", "absent": b""}
    ptcore.jit.load(io.BytesIO(buf.getvalue()), _extra_files=extra)
    assert extra == {"meta.txt": b"hello", "absent": b""}


def test_unsupported_op_fails_when_reached():
    class R(tnn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = tnn.LSTM(3, 4)

        def forward(self, x):
            return self.rnn(x)[0]
    _, data = _archive(R().eval(), "script", None)
    # an op ptcore does not have, in place of aten::lstm: the archive loads,
    # the call that reaches it fails naming it
    # (every code file: torch names the class's file rnn.py, or
    # rnn/___torch_mangle_N.py when LSTM was scripted before in the process)
    data = _rewrite(data, lambda n: n.endswith(".py") and "/code/" in n,
                    lambda raw: raw.replace(b"torch.lstm(", b"torch.not_an_aten_op("))
    assert b"not_an_aten_op" in b"".join(zipfile.ZipFile(io.BytesIO(data)).read(n)
                                         for n in zipfile.ZipFile(io.BytesIO(data)).namelist())
    pm = ptcore.jit.load(io.BytesIO(data))
    with pytest.raises(NotImplementedError, match="aten::not_an_aten_op"):
        pm(ptcore.randn(2, 1, 3))


def _rewrite(data, member_pred, fn):
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            raw = src.read(info.filename)
            if member_pred(info.filename):
                raw = fn(raw)
            z.writestr(info.filename, raw)
    return out.getvalue()


@pytest.mark.parametrize("payload", [
    '__import__("os").system("touch {marker}")',
    'CONSTANTS.__class__.__init__.__globals__["os"].system("touch {marker}")',
    'self.__class__.__init__.__globals__["os"].system("touch {marker}")',
    'torch.__class__.__init__.__globals__["os"].system("touch {marker}")',
    'open("{marker}", "w")',
])
def test_hostile_code_is_refused_without_running(tmp_path, payload):
    marker = tmp_path / "pwned"
    _, data = _archive(MLP().eval(), "script", None)
    line = payload.format(marker=marker)

    def inject(raw):
        text = raw.decode()
        text = re.sub(r"(\n    net = self\.net\n)", r"\n    _x = " + line.replace("\\", "\\\\")
                      + r"\1", text, count=1)
        assert "_x = " in text
        return text.encode()
    bad = _rewrite(data, lambda n: n.endswith("code/__torch__/test_torchscript_archive.py")
                   or n.endswith("code/__torch__.py"), inject)
    with pytest.raises(JitError):
        m = ptcore.jit.load(io.BytesIO(bad))
        m(ptcore.randn(2, 6))
    assert not os.path.exists(marker)


def test_hostile_pickle_is_refused(tmp_path):
    import pickle
    marker = tmp_path / "pwned"
    _, data = _archive(MLP().eval(), "script", None)

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    bad = _rewrite(data, lambda n: n.endswith("/data.pkl"), lambda raw: pickle.dumps(Evil(), 2))
    with pytest.raises(JitError, match="refus|not allowed|unsupported|Unsupported|global"):
        ptcore.jit.load(io.BytesIO(bad))
    assert not os.path.exists(marker)


def test_truncated_archive():
    _, data = _archive(MLP().eval(), "script", None)
    with pytest.raises(JitError):
        ptcore.jit.load(io.BytesIO(data[: len(data) // 2]))
    bad = _rewrite(data, lambda n: "/data/" in n, lambda raw: raw[:3])
    with pytest.raises((JitError, RuntimeError)):
        ptcore.jit.load(io.BytesIO(bad))


class _RNNs(tnn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = tnn.LSTM(8, 16, 2, batch_first=True)
        self.gru = tnn.GRU(16, 12, bidirectional=True)
        self.rnn = tnn.RNN(24, 6, nonlinearity="relu")

    def forward(self, x):
        y, _ = self.lstm(x)
        y, h = self.gru(y.transpose(0, 1))
        return self.rnn(y)[0], h


class _GPTish(tnn.Module):
    def __init__(self):
        super().__init__()
        self.emb = tnn.Embedding(20, 16)
        self.enc = tnn.TransformerEncoder(
            tnn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True,
                                        norm_first=True, activation="gelu"), 2)
        self.mha = tnn.MultiheadAttention(16, 4, batch_first=True)
        self.up = tnn.Sequential(tnn.ConvTranspose1d(16, 8, 3, stride=2), tnn.Upsample(scale_factor=2),
                                 tnn.Upsample(scale_factor=1.5, mode="linear"))
        self.head = tnn.Linear(16, 20)

    def forward(self, idx):
        x = self.enc(self.emb(idx))
        a, w = self.mha(x, x, x)
        return self.head(x + a).log_softmax(-1), w, self.up(x.transpose(1, 2))


@pytest.mark.parametrize("how", ["script", "trace"])
@pytest.mark.parametrize("cls", [_RNNs, _GPTish])
def test_recurrent_and_transformer_archives(cls, how):
    """torch's eval-mode fast paths (aten::_transformer_encoder_layer_fwd,
    _native_multi_head_attention), aten::lstm/gru/rnn_relu, upsampling, and the
    dtype numbers of traced code (torch.zeros(..., dtype=6) is float32)."""
    torch.manual_seed(0)
    model = cls().eval()
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.integers(0, 20, (2, 6))) if cls is _GPTish else \
        torch.from_numpy(rng.standard_normal((3, 5, 8)).astype(np.float32))
    sm, data = _archive(model, how, x)
    pm = ptcore.jit.load(io.BytesIO(data))
    with torch.no_grad():
        want = sm(x)
    with ptcore.no_grad():
        got = pm(ptcore.from_numpy(x.numpy().copy()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1]
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_scripted_lstm_overloaded_forward():
    # torch's scripted nn.LSTM has forward__0 (tensors) and forward__1
    # (PackedSequence) and no callable forward; ptcore runs the tensor overload
    torch.manual_seed(0)
    m = tnn.LSTM(4, 5, batch_first=True).eval()
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(m), buf)
    pm = ptcore.jit.load(io.BytesIO(buf.getvalue()))
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    with ptcore.no_grad():
        out, (h, c) = pm(ptcore.from_numpy(x))
    with torch.no_grad():
        wout, (wh, wc) = m(torch.from_numpy(x))
    for a, b in ((out, wout), (h, wh), (c, wc)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
