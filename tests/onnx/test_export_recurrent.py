"""ptcore.onnx.export of nn.LSTM / nn.GRU / nn.RNN as ONNX's LSTM / GRU / RNN
operators (one per layer, as torch.onnx.export writes them), not unrolled:
onnx.checker passes, ONNX Runtime gives eager ptcore's outputs, and the
sequence length and batch stay dynamic (dynamic_axes)."""
import io
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
from ptcore import jit
from ptcore.onnx import UnsupportedOperatorError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from test_export_layers import _compare, _flat        # noqa: E402

_RECURRENT = {"LSTM", "GRU", "RNN"}
_UNROLLED = {"Gemm", "MatMul", "Sigmoid", "Tanh", "Relu", "Split", "Loop", "Scan"}


def _export(model, args, **kw):
    model.eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        ptcore.onnx.export(model, args, buf, **kw)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data, ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _ops(data):
    return [n.op_type for n in onnx.load_from_string(data).graph.node]


def _check(model, *args):
    data, sess = _export(model, args)
    _compare(sess, model, args)
    return data


def _layer(kind, *a, **kw):
    if kind.startswith("rnn"):
        return nn.RNN(*a, nonlinearity=kind[4:], **kw)
    return {"lstm": nn.LSTM, "gru": nn.GRU}[kind](*a, **kw)


def _op(kind):
    return "RNN" if kind.startswith("rnn") else kind.upper()


class _WithState(nn.Module):
    """The recurrent layer called with its initial state (model inputs)."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h0, c0=None):
        return self.rnn(x, h0 if c0 is None else (h0, c0))


def _states(kind, m, batch, unbatched=False):
    dims = (m.num_layers * (2 if m.bidirectional else 1),) + (() if unbatched else (batch,))
    h0 = ptcore.randn(*dims, m.hidden_size)
    return (h0, ptcore.randn(*dims, m.hidden_size)) if kind == "lstm" else (h0,)


KINDS = ["lstm", "gru", "rnn_tanh", "rnn_relu"]
CONFIGS = [dict(), dict(num_layers=2), dict(bidirectional=True), dict(batch_first=True),
           dict(bias=False), dict(num_layers=2, bidirectional=True, batch_first=True)]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(c) or "default")
@pytest.mark.parametrize("kind", KINDS)
def test_recurrent_op(kind, cfg):
    ptcore.manual_seed(0)
    m = _layer(kind, 4, 6, **cfg)
    x = ptcore.randn(2, 5, 4) if cfg.get("batch_first") else ptcore.randn(5, 2, 4)
    ops = _ops(_check(m, x))
    assert ops.count(_op(kind)) == cfg.get("num_layers", 1)
    assert not (set(ops) & _UNROLLED), ops
    assert set(ops) & _RECURRENT == {_op(kind)}


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2, bidirectional=True),
                                 dict(num_layers=2, batch_first=True)],
                         ids=["default", "2-layers-bidirectional", "2-layers-batch-first"])
@pytest.mark.parametrize("kind", KINDS)
def test_initial_states(kind, cfg):
    ptcore.manual_seed(1)
    m = _WithState(_layer(kind, 4, 6, **cfg))
    x = ptcore.randn(2, 5, 4) if cfg.get("batch_first") else ptcore.randn(5, 2, 4)
    ops = _ops(_check(m, x, *_states(kind, m.rnn, 2)))
    assert ops.count(_op(kind)) == cfg.get("num_layers", 1)


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_unbatched_input(kind, with_state):
    ptcore.manual_seed(2)
    rnn = _layer(kind, 4, 6, num_layers=2, bidirectional=True)
    x = ptcore.randn(5, 4)
    if with_state:
        _check(_WithState(rnn), x, *_states(kind, rnn, 1, unbatched=True))
    else:
        _check(rnn, x)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh"])
def test_dynamic_sequence_and_batch(kind, batch_first):
    ptcore.manual_seed(3)
    rnn = _layer(kind, 4, 6, num_layers=2, bidirectional=True, batch_first=batch_first)
    m = _WithState(rnn)
    seq_ax, batch_ax = (1, 0) if batch_first else (0, 1)

    def inputs(seq, batch):
        x = ptcore.randn(batch, seq, 4) if batch_first else ptcore.randn(seq, batch, 4)
        return (x,) + _states(kind, rnn, batch)
    names = ["x", "h0", "c0"][:len(inputs(1, 1))]
    outs = ["y", "h", "c"][:len(names)]
    axes = {"x": {seq_ax: "seq", batch_ax: "batch"}, "y": {seq_ax: "seq", batch_ax: "batch"}}
    axes.update({n: {1: "batch"} for n in names[1:] + outs[1:]})
    data, sess = _export(m, inputs(5, 2), input_names=names, output_names=outs,
                         dynamic_axes=axes)
    assert sess.get_inputs()[0].shape[seq_ax] == "seq"
    for seq, batch in ((9, 3), (1, 1), (5, 2)):
        _compare(sess, m, inputs(seq, batch))
    # and without initial states
    data, sess = _export(rnn, inputs(5, 2)[:1], input_names=["x"], output_names=outs,
                         dynamic_axes={"x": axes["x"], "y": axes["y"],
                                       **{n: {1: "batch"} for n in outs[1:]}})
    for seq, batch in ((9, 3), (1, 1)):
        _compare(sess, rnn, inputs(seq, batch)[:1])


class _Classifier(nn.Module):
    """Embedding -> LSTM -> Linear on the last step (or the last layer's h_n)."""

    def __init__(self, last="output"):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 3)
        self.last = last

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.emb(tokens))
        return self.fc(out[:, -1] if self.last == "output" else h[-1])


def test_lstm_inside_a_model():
    ptcore.manual_seed(4)
    m = _Classifier()
    ops = _ops(_check(m, ptcore.randint(0, 30, (2, 7))))
    assert ops.count("LSTM") == 2 and "Gather" in ops and "Gemm" in ops


def test_lstm_inside_a_model_dynamic_axes():
    ptcore.manual_seed(5)
    m = _Classifier(last="h_n")
    data, sess = _export(m, (ptcore.randint(0, 30, (2, 7)),), input_names=["tokens"],
                         output_names=["logits"],
                         dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                                       "logits": {0: "batch"}})
    for batch, seq in ((4, 11), (1, 1)):
        _compare(sess, m, (ptcore.randint(0, 30, (batch, seq)),))


def test_shared_layer_weights_written_once():
    ptcore.manual_seed(6)

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(4, 6)

        def forward(self, a, b):
            return self.gru(a)[0] + self.gru(b)[0]
    data = _check(Twice(), ptcore.randn(3, 2, 4), ptcore.randn(3, 2, 4))
    assert _ops(data).count("GRU") == 2
    inits = onnx.load_from_string(data).graph.initializer
    assert [list(t.dims) for t in inits].count([1, 18, 4]) == 1      # W


def test_projection_refused():
    m = nn.LSTM(4, 6, proj_size=3).eval()
    with pytest.raises(UnsupportedOperatorError, match="proj_size"):
        ptcore.onnx.export(m, (ptcore.randn(5, 2, 4),), io.BytesIO())


def test_dropout_in_training_mode_refused():
    m = nn.GRU(4, 6, num_layers=2, dropout=0.3)
    with pytest.raises(UnsupportedOperatorError, match="dropout in training mode"):
        ptcore.onnx.export(m, (ptcore.randn(5, 2, 4),), io.BytesIO(),
                           training=ptcore.onnx.TrainingMode.TRAINING)
    assert m.training
    _check(m, ptcore.randn(5, 2, 4))                 # eval mode: dropout is off


def test_packed_sequence_refused():
    from ptcore.nn.utils.rnn import pack_padded_sequence
    from ptcore.onnx import _recurrent
    from ptcore.onnx._export import _Builder
    from ptcore.onnx._registration import CONVERTERS

    class Packed(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 6)

        def forward(self, x):
            return self.lstm(pack_padded_sequence(x, [3, 2]))[1][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        g = jit.trace(Packed().eval(), (ptcore.randn(3, 2, 4),),
                      _leaves=_recurrent.LEAVES).graph
    node = next(n for n in g.nodes if n.op == ("nn.modules", "LSTM"))
    b = _Builder(g, 17)
    b.params = {}
    with pytest.raises(UnsupportedOperatorError, match="PackedSequence"):
        CONVERTERS[node.op](b, node)


@pytest.mark.parametrize("kind", KINDS)
def test_same_op_types_as_torch(kind):
    torch = pytest.importorskip("torch")
    ptcore.manual_seed(7)
    cfg = dict(num_layers=2, bidirectional=True)
    m = _layer(kind, 4, 6, **cfg).eval()
    ops = _ops(_check(m, ptcore.randn(5, 2, 4)))
    tm = (torch.nn.RNN(4, 6, nonlinearity=kind[4:], **cfg) if kind.startswith("rnn") else
          {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](4, 6, **cfg)).eval()
    tm.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                        for k, v in m.state_dict().items()})
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(tm, (torch.randn(5, 2, 4),), buf, dynamo=False)
    except Exception as e:                          # (no legacy exporter, no onnxscript ...)
        pytest.skip(f"torch.onnx.export failed here: {type(e).__name__}: {e}")
    theirs = _ops(buf.getvalue())
    assert [o for o in ops if o in _RECURRENT] == [o for o in theirs if o in _RECURRENT]
    assert not (set(theirs) & _UNROLLED - {"Relu", "Tanh", "Sigmoid"})
    # the same weights give the same outputs in both files
    x = np.random.default_rng(0).standard_normal((5, 2, 4)).astype(np.float32)
    a = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    feed = {a.get_inputs()[0].name: x}
    with ptcore.no_grad():
        want = _flat(m(ptcore.from_numpy(x)), [])
    for g, w in zip(a.run(None, feed), want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)
