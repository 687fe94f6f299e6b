"""``jit._get_trace_graph``: a trace read through TorchScript's graph API (what fvcore's FLOP
counter walks), against torch: the ops a FLOP counter reads appear under torch's traced names
(``aten::_convolution`` ...) with torch's argument order, shapes and constants, in the scopes
a module's hooks push on the tracing state."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

# the kinds compared (what fvcore counts); elementwise and view ops may be recorded differently
KINDS = {"aten::_convolution", "aten::linear", "aten::addmm", "aten::bmm", "aten::matmul",
         "aten::mm", "aten::einsum", "aten::batch_norm", "aten::group_norm", "aten::layer_norm",
         "aten::instance_norm", "aten::upsample_nearest2d", "aten::upsample_bilinear2d",
         "aten::adaptive_avg_pool2d", "aten::grid_sampler", "aten::scaled_dot_product_attention"}


def _model(L):
    nn = L.nn

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Conv2d(3, 6, 3, stride=2, padding=1)
            self.gn = nn.GroupNorm(2, 6)
            self.up = nn.ConvTranspose2d(6, 4, 2, stride=2)
            self.bn = nn.BatchNorm2d(4)
            self.inorm = nn.InstanceNorm2d(4, affine=True)
            self.conv1d = nn.Conv1d(4, 4, 3, padding=1, bias=False)
            self.proj = nn.Linear(16, 8)
            self.ln = nn.LayerNorm(8)
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            y = self.inorm(self.bn(self.up(L.relu(self.gn(self.down(x))))))
            y = nn.functional.interpolate(y, scale_factor=0.5, mode="bilinear",
                                          align_corners=False)
            y = nn.functional.interpolate(y, size=(8, 8))
            z = nn.functional.adaptive_avg_pool2d(y, 4).flatten(2)
            z = self.ln(self.proj(self.conv1d(z)))
            att = L.bmm(z, z.transpose(1, 2)).softmax(-1)
            z = L.einsum("bij,bjk->bik", [att, z]) + att @ z
            z = self.attn(z, z, z, need_weights=False)[0]
            g = nn.functional.grid_sample(y, L.zeros(x.shape[0], 2, 2, 2), align_corners=False)
            return L.addmm(z[0], att[0], z[0]).sum() + g.sum() + L.mm(z[0], z[0].t()).sum()
    model = Mixed().eval()
    rng = np.random.default_rng(0)
    with L.no_grad():
        for _, t in sorted(model.named_parameters()):
            t.copy_(L.from_numpy((rng.standard_normal(t.shape) * 0.3).astype(np.float32)))
    return model


def _arg(v):
    return v.type().sizes() if v.isCompleteTensor() else v.toIValue()


def _read(L):
    model = _model(L)
    handles = []
    for name, m in model.named_modules():
        def push(mod, args, name=name):
            L._C._get_tracing_state().push_scope(name)

        def pop(mod, args, out):
            L._C._get_tracing_state().pop_scope()
        handles += [m.register_forward_pre_hook(push), m.register_forward_hook(pop)]
    x = L.from_numpy(np.linspace(-1, 1, 2 * 3 * 16 * 16, dtype=np.float32).reshape(2, 3, 16, 16))
    graph, out = L.jit._get_trace_graph(model, (x,))
    for h in handles:
        h.remove()
    assert L._C._get_tracing_state() is None
    nodes = []
    for n in graph.nodes():
        if n.kind() not in KINDS:
            continue
        ins = [[_arg(u) for u in v.node().inputs()]
               if v.node() is not None and v.node().kind() == "prim::ListConstruct"
               else _arg(v) for v in n.inputs()]
        nodes.append((n.kind(), n.scopeName(), ins, [o.type().sizes() for o in n.outputs()]))
    n_inputs = len(list(graph.inputs()))
    return nodes, n_inputs, float(out if isinstance(out, (int, float)) else out.sum())


def test_trace_graph_reads_as_torchs():
    got, want = _read(ptcore), _read(torch)
    assert got[1] == want[1]                 # the input and every parameter and buffer
    assert [n[:2] for n in got[0]] == [n[:2] for n in want[0]]
    for g, w in zip(got[0], want[0]):
        # (torch's eps constants are doubles rounded from the module's float attribute)
        assert [a if not isinstance(a, float) else round(a, 6) for a in g[2]] == \
            [a if not isinstance(a, float) else round(a, 6) for a in w[2]], g[0]
        assert g[3] == w[3], g[0]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5)


def test_tracing_state_is_none_outside_a_trace_and_graph_classes():
    assert ptcore._C._get_tracing_state() is None
    g, _ = ptcore.jit._get_trace_graph(lambda a: a * 2, ptcore.ones(2))
    assert isinstance(g, ptcore._C.Graph)
    (node,) = [n for n in g.nodes() if n.kind() == "aten::mul"]
    assert isinstance(node, ptcore._C.Node) and node.scopeName() == ""
    assert node.output().type().sizes() == [2] and node.output().node() is node
    with pytest.raises(AttributeError):
        ptcore._C.NoSuchGraphClass


def test_batch_first_lstm_trace_holds_only_the_rnn_op_as_torchs():
    # dead code is not in the graph, as TorchScript's tracer removes it: ptcore's module lays
    # out a batch-first input time-major before it sees the trace, and the one recorded rnn
    # op does not read that layout (a FLOP counter counted its size arithmetic as an op)
    def kinds(L):
        class Tagger(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = L.nn.Embedding(30, 12)
                self.lstm = L.nn.LSTM(12, 20, num_layers=2, batch_first=True,
                                      bidirectional=True)
                self.head = L.nn.Linear(40, 5)

            def forward(self, tokens):
                return self.head(self.lstm(self.emb(tokens))[0])
        g, out = L.jit._get_trace_graph(Tagger().eval(), L.zeros(3, 7, dtype=L.long))
        return ([n.kind() for n in g.nodes() if not n.kind().startswith("prim::")
                 and n.kind() not in ("aten::size", "aten::Int")], list(out.shape))
    assert kinds(ptcore) == kinds(torch) == (
        ["aten::embedding", "aten::zeros", "aten::zeros", "aten::lstm", "aten::linear"],
        [3, 7, 5])


def test_autograd_function_is_one_python_op_as_torchs():
    # TorchScript records Function.apply as a prim::PythonOp (its pyname the class name;
    # fvcore reports "prim::PythonOp.<name>") whose results replace its forward's, which
    # dead-code elimination then drops but for what feeds a Function applied inside it;
    # several results come through a prim::TupleUnpack
    def read(L):
        class Inner(L.autograd.Function):      # (torch's setup_context form)
            forward = staticmethod(lambda x: x * 3)
            setup_context = staticmethod(lambda ctx, inputs, output: None)
            backward = staticmethod(lambda ctx, g: g * 3)

        class Clamp2(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return Inner.apply(x.clamp(min=0)) * k, x + 1

            @staticmethod
            def backward(ctx, g, h):
                return g + h, None

        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(3, 3)

            def forward(self, x):
                a, b = Clamp2.apply(self.lin(x), 2.0)
                return (a * b).sum(-1)
        g, out = L.jit._get_trace_graph(M(), L.ones(2, 3))
        nodes = [(n.kind(), n.pyname() if n.kind() == "prim::PythonOp" else "",
                  [v.type().sizes() for v in n.inputs() if v.isCompleteTensor()],
                  [o.type().sizes() for o in n.outputs() if o.isCompleteTensor()])
                 for n in g.nodes()
                 if not n.kind().startswith("prim::") or n.kind() == "prim::PythonOp"]
        return nodes, list(out.shape)
    got, want = read(ptcore), read(torch)
    assert got == want
    assert [n[:2] for n in got[0]] == [("aten::linear", ""), ("prim::PythonOp", "Clamp2"),
                                       ("aten::clamp", ""), ("prim::PythonOp", "Inner"),
                                       ("aten::mul", ""), ("aten::sum", "")]
