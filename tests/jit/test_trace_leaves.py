"""The tracer's internal ``_leaves`` option (used by ptcore.onnx.export): each
call of a submodule of those types is recorded as one node, its ops not;
ordinary tracing is unchanged."""
import warnings

import pytest

import ptcore
import ptcore.nn as nn
from ptcore import jit
from ptcore._dispatch import tracing


class _Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, num_layers=2)
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out).relu(), c


def _ops(graph):
    return [n.op for n in graph.nodes]


def test_ordinary_trace_records_the_ops():
    g = jit.trace(_Tagger().eval(), ptcore.randn(3, 2, 4)).graph
    assert all(ns != "nn.modules" for ns, _ in _ops(g))
    # the LSTM is its op (ptcore.lstm, as torch's aten::lstm), not its steps
    assert ("ptcore", "lstm") in _ops(g) and ("nn.functional", "linear") in _ops(g)


def test_leaf_is_one_node():
    m = _Tagger().eval()
    g = jit.trace(m, ptcore.randn(3, 2, 4), _leaves=(nn.LSTM,)).graph
    assert _ops(g) == [("nn.modules", "LSTM"), ("nn.functional", "linear"),
                       ("Tensor", "relu")]
    node = g.nodes[0]
    assert node.args[0] == {"v": g.inputs[0]} and node.args[1] is None
    weights = node.args[2]["list"]
    assert [g.values[w["v"]].name for w in weights] == \
        ["lstm." + n for n, _ in m.lstm.named_parameters()]
    assert node.kwargs["mode"] == "LSTM" and node.kwargs["num_layers"] == 2
    assert node.kwargs["training"] is False
    # the node's outputs are read by the later ops and returned
    out, h, c = node.output_ids()
    assert g.nodes[1].args[0] == {"v": out}
    assert g.outputs["tuple"][1] == {"v": c}


def test_leaf_as_the_traced_module_and_with_a_state():
    m = nn.GRU(4, 5, bidirectional=True).eval()
    x, h0 = ptcore.randn(3, 2, 4), ptcore.randn(2, 2, 5)
    g = jit.trace(m, (x, h0), _leaves=(nn.GRU,)).graph
    assert _ops(g) == [("nn.modules", "GRU")]
    assert g.nodes[0].args[1] == {"v": g.inputs[1]}
    assert g.nodes[0].kwargs["bidirectional"] is True


def test_subclass_overriding_forward_is_traced_through():
    class Mine(nn.LSTM):
        def forward(self, x, hx=None):
            return super().forward(x * 2, hx)
    m = Mine(4, 6).eval()
    g = jit.trace(m, ptcore.randn(3, 2, 4), _leaves=(nn.LSTM,)).graph
    assert all(ns != "nn.modules" for ns, _ in _ops(g))


def test_recording_resumes_when_the_leaf_raises():
    m = _Tagger().eval()
    with pytest.raises(RuntimeError, match="input_size"):
        jit.trace(m, ptcore.randn(3, 2, 5), _leaves=(nn.LSTM,))
    assert tracing.active_tracer() is None
    assert "size" not in ptcore.Tensor.__dict__
    assert not m.lstm._forward_hooks and not m.lstm._forward_pre_hooks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jit.TracerWarning)
        sm = jit.trace(m, ptcore.randn(3, 2, 4))
    x = ptcore.randn(3, 2, 4)
    assert ptcore.allclose(sm(x)[0], m(x)[0])
