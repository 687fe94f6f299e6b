"""The TorchScript tutorials' programs and others like them under
``ptcore.jit``: traced modules called from scripted loops and scripted
modules called from traces, ``return`` inside loops, ``fork``/``wait``,
values a scripted method returns to Python (dtypes, sizes), scripted
containers, the legacy ``ScriptModule``/``script_method`` API; each program
runs the same way with torch as the oracle."""
import math
import typing
from typing import Dict, List, Optional, Tuple

import pytest

from test_user_programs import _both, _init, _x, _roundtrip

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.filterwarnings("ignore")


# ------------------------------------------- "Introduction to TorchScript"

def _cell_classes(T):
    class MyDecisionGate(T.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            else:
                return -x

    class MyCell(T.nn.Module):
        def __init__(self, dg):
            super().__init__()
            self.dg = dg
            self.linear = T.nn.Linear(4, 4)

        def forward(self, x, h):
            new_h = T.tanh(self.dg(self.linear(x)) + h)
            return new_h, new_h
    return MyDecisionGate, MyCell


def test_tutorial_traced_cell_in_scripted_loop_and_wrapped_trace():
    """MyRNNLoop scripts a loop over a traced cell; WrapRNN traces a module
    that calls the scripted loop, which keeps following the input's length."""
    def build(T):
        MyDecisionGate, MyCell = _cell_classes(T)
        x, h = _x(T, 3, 4), T.zeros(3, 4)
        scripted_gate = T.jit.script(MyDecisionGate())

        class MyRNNLoop(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = T.jit.trace(_init(T, MyCell(scripted_gate)), (x, h))

            def forward(self, xs):
                h, y = T.zeros(3, 4), T.zeros(3, 4)
                for i in range(xs.size(0)):
                    y, h = self.cell(xs[i], h)
                return y, h

        class WrapRNN(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.loop = T.jit.script(MyRNNLoop())

            def forward(self, xs):
                y, h = self.loop(xs)
                return T.relu(y)

        rnn_loop = T.jit.script(MyRNNLoop())
        xs = _x(T, 10, 3, 4)
        traced = T.jit.trace(WrapRNN(), (xs,))
        assert "relu" in traced.code
        return (rnn_loop(xs), _roundtrip(T, rnn_loop)(xs[:2]), traced(xs), traced(xs[:4]),
                _roundtrip(T, traced)(xs[:5]))
    _both(build)


def test_tutorial_scripted_cell_decision_gate():
    def build(T):
        MyDecisionGate, MyCell = _cell_classes(T)
        cell = _init(T, MyCell(MyDecisionGate()))
        s = T.jit.script(cell)
        x, h = _x(T, 3, 4), T.ones(3, 4)
        assert "tanh" in s.code
        return s(x, h), s(-10 * x, h), _roundtrip(T, s)(-10 * x, h)
    _both(build)


def test_traced_function_called_from_script():
    def build(T):
        def act(x):
            return T.relu(x) * 2
        tr = T.jit.trace(act, (T.ones(2),))

        @T.jit.script
        def f(x):
            y = x
            for _ in range(2):
                y = tr(y) - 1
            return y
        return f(_x(T, 4)), _roundtrip(T, f)(_x(T, 3))
    _both(build)


def test_scripted_submodule_methods_and_gradients():
    """Exported methods of a scripted submodule and a traced submodule,
    called from a scripted module: values, saved file, gradients."""
    def build(T):
        class Enc(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.l = T.nn.Linear(3, 3)

            @T.jit.export
            def embed(self, x):
                return self.l(x) * 2

            def forward(self, x):
                return self.embed(x) + 1

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = T.jit.script(_init(T, Enc()))
                self.tr = T.jit.trace(_init(T, T.nn.Linear(3, 2)), _x(T, 1, 3))

            def forward(self, x):
                return self.tr(self.enc.embed(x) + self.enc(x))
        s = T.jit.script(M())
        x = _x(T, 2, 3)
        out = s(x)
        out.sum().backward()
        return out, _roundtrip(T, s)(x), s.enc.l.weight.grad, s.tr.weight.grad
    _both(build)


def test_trace_of_scripted_control_flow_follows_inputs():
    """A scripted function or module with control flow called while
    tracing stays control flow in the trace (torch records the call)."""
    def build(T):
        @T.jit.script
        def clamp_loop(x, n: int):
            for _ in range(n):
                x = T.where(x > 1, x - 1, x)
            return x

        def f(x):
            return clamp_loop(x * 3, 2) + 1
        tr = T.jit.trace(f, (_x(T, 4),))

        Gate, _ = _cell_classes(T)      # the tutorial's MyDecisionGate

        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.gate = T.jit.script(Gate())
                self.lin = T.nn.Linear(3, 3)

            def forward(self, x):
                return self.gate(self.lin(x))
        net = _init(T, Net())
        tn = T.jit.trace(net, _x(T, 2, 3))
        neg = -5 * _x(T, 2, 3)
        out = tn(neg)
        out.sum().backward()
        return (tr(_x(T, 6) * 2), _roundtrip(T, tr)(_x(T, 5)), out, net(neg),
                tn.lin.weight.grad, _roundtrip(T, tn)(neg))
    _both(build)


# ------------------------------------------------------ return inside loops

def test_return_inside_loops():
    def build(T):
        @T.jit.script
        def first_pos(x):
            for i in range(x.size(0)):
                if x[i] > 0:
                    return i
            return -1

        @T.jit.script
        def find(xs: List[int], v: int) -> int:
            for i, x in enumerate(xs):
                if x == v:
                    return i
            return -1

        @T.jit.script
        def grow(x):
            i = 0
            while i < 10:
                if x.sum() > 5:
                    return x, i
                x = x + 1
                i += 1
            return x, -1

        @T.jit.script
        def in_if(x, flag: bool):
            if flag:
                for i in range(x.size(0)):
                    if x[i] < 0:
                        return x[i]
            return x.sum()

        @T.jit.script
        def nested(m: List[List[int]], v: int) -> Tuple[int, int]:
            for i in range(len(m)):
                for j in range(len(m[i])):
                    if m[i][j] == v:
                        return i, j
            return -1, -1

        @T.jit.script
        def newton(a, tol: float = 1e-6):
            x = a.clone()
            for it in range(100):
                nx = 0.5 * (x + a / x)
                if (nx - x).abs().max() < tol:
                    return nx, it
                x = nx
            return x, 100
        return (first_pos(T.tensor([-1., -2., 3.])), first_pos(-T.ones(3)),
                find([3, 4, 5], 5), find([1], 9), grow(T.zeros(2)), grow(-100 * T.ones(2)),
                in_if(T.tensor([1., -2., 3.]), True), in_if(T.tensor([1., -2.]), False),
                nested([[1, 2], [3, 4]], 4), nested([[1]], 5), newton(T.tensor([4., 9.])),
                _roundtrip(T, newton)(T.tensor([16., 2.]), 1e-6))
    _both(build)


def test_return_inside_loop_over_module_list():
    def build(T):
        class Router(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.experts = T.nn.ModuleList([T.nn.Linear(2, 2) for _ in range(3)])
                self.thresholds = [0.5, 1.0, 2.0]

            def forward(self, x):
                s = x.abs().mean()
                for i, e in enumerate(self.experts):
                    if s < self.thresholds[i]:
                        return e(x), i
                return x, -1
        s = T.jit.script(_init(T, Router()))
        return [s(_x(T, 2, 2) * k) for k in (0.1, 1.5, 100)] + \
            [_roundtrip(T, s)(_x(T, 2, 2) * 1.5)]
    _both(build)


# ----------------------------------------------------------- fork / wait

def test_fork_wait_in_script():
    def build(T):
        def foo(a, b: int):
            return a + b

        @T.jit.script
        def bar(x):
            fut = T.jit.fork(foo, x, b=2)
            futs = [T.jit.fork(foo, x, i) for i in range(3)]
            s = x
            for f in futs:
                s = s + T.jit.wait(f)
            return T.jit.wait(fut), s

        class Sub(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.l = T.nn.Linear(2, 2)

            def forward(self, x):
                return self.l(x)

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Sub()
                self.b = Sub()

            def forward(self, x):
                fa = T.jit.fork(self.a, x)
                fb = T.jit.fork(self.b, x * 2)
                return T.jit.wait(fa) + T.jit.wait(fb)
        s = T.jit.script(_init(T, M()))
        return bar(T.ones(2)), T.jit.wait(T.jit.fork(foo, T.ones(1), 3)), s(T.ones(1, 2)), \
            _roundtrip(T, s)(T.ones(1, 2))
    _both(build)


# ------------------------------------------- values returned to Python

def test_scripted_dtype_and_shape_are_returned_as_torch_does():
    """TorchScript has no dtype type: a returned ``x.dtype`` is its
    ScalarType number; ``x.shape`` comes back as a list of ints."""
    def build(T):
        @T.jit.script
        def f(x):
            return x.dtype

        @T.jit.script
        def g(x):
            return x.shape, x.size(), [x.dtype], {"a": x.dtype}, x.dtype == T.float32

        class M(T.nn.Module):
            def forward(self, x):
                return x.dtype, x.shape, x.to(T.float64)
        s = T.jit.script(M())
        names = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
                 "complex64", "complex128", "bool", "bfloat16"]
        codes = [f(T.zeros(1, dtype=getattr(T, n))) for n in names]
        assert all(type(c) is int for c in codes)
        return codes, g(T.ones(2, 3)), s(T.ones(2, 3)), _roundtrip(T, s)(T.ones(2).long())
    _both(build)


# -------------------------------------------------------- modules, misc

def test_scripted_containers_index_iterate_and_size():
    def build(T):
        m = _init(T, T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU(), T.nn.Linear(3, 1)))
        s = T.jit.script(m)
        x = _x(T, 2, 2)
        ml = T.jit.script(T.nn.ModuleList([T.nn.ReLU(), T.nn.Tanh()]))
        md = T.jit.script(T.nn.ModuleDict({"a": T.nn.ReLU()}))
        return (s[0](x), s[-1](s[1](s[0](x))), len(s), len(list(s)), len(ml), ml[1](x),
                list(md), "a" in md, md["a"](x), bool(s))
    _both(build)


def test_buffer_augmented_assignment_in_script():
    def build(T):
        class Avg(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", T.zeros(2))
                self.register_buffer("n", T.zeros(()))

            def forward(self, x):
                self.total += x.sum(0)
                self.n += x.size(0)
                return self.total / self.n
        s = T.jit.script(Avg())
        s(_x(T, 3, 2))
        out = s(_x(T, 2, 2))
        r = _roundtrip(T, s)
        r(_x(T, 1, 2))
        return out, s.total, s.n, r.total, r.n
    _both(build)


def test_inlined_parameter_types_decide_isinstance():
    """``isinstance(input, PackedSequence)`` in a submodule's forward, on a
    value computed by the caller: the parameter is a Tensor."""
    def build(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = T.nn.Embedding(10, 4)
                self.rnn = T.nn.GRU(4, 3, batch_first=True)
                self.out = T.nn.Linear(3, 2)

            def forward(self, tokens, lengths: Optional[torch.Tensor] = None):
                o, h = self.rnn(self.emb(tokens))
                if lengths is not None:
                    idx = (lengths - 1).view(-1, 1, 1).expand(-1, 1, o.size(2))
                    last = o.gather(1, idx).squeeze(1)
                else:
                    last = o[:, -1]
                return self.out(last)
        s = T.jit.script(_init(T, M()).eval())
        tok = T.tensor([[1, 2, 3, 4], [5, 6, 7, 0]])
        return s(tok), s(tok, T.tensor([4, 3])), _roundtrip(T, s)(tok, T.tensor([4, 3]))
    _both(build)


def test_runtime_dict_iteration_math_and_jit_isinstance():
    def build(T):
        @T.jit.script
        def f(d: Dict[str, int], x):
            total = 0
            for k in d:
                total += d[k]
            keys = list(d.keys())
            keys.sort()
            return x * total + d.get("missing", 7), keys

        @T.jit.script
        def attn_scale(q, k):
            d = q.size(-1)
            return (q @ k.transpose(-2, -1)) / math.sqrt(d), math.ceil(d / 3), math.exp(1.0)

        @T.jit.script
        def g(x, y: Optional[List[int]] = None):
            if T.jit.isinstance(y, List[int]):
                return x * len(y)
            return x
        return (f({"b": 2, "a": 1}, T.ones(1)), attn_scale(_x(T, 2, 4), _x(T, 3, 4)),
                _roundtrip(T, attn_scale)(_x(T, 2, 4), _x(T, 1, 4)), g(T.ones(1)),
                g(T.ones(1), [1, 2, 3]), T.jit.isinstance({"a": [1]}, Dict[str, List[int]]),
                T.jit.isinstance([1], List[float]))
    _both(build)


def test_trace_example_kwarg_inputs():
    def build(T):
        class M(T.nn.Module):
            def forward(self, x, y, scale: float = 2.0):
                return x * scale + y
        tr = T.jit.trace(M(), example_kwarg_inputs={"y": T.ones(2), "x": T.ones(2)})
        tp = T.jit.trace(M(), (T.ones(2), T.ones(2)))
        # a traced module is called positionally or by the forward's parameter names
        return (tr(T.ones(2), 3 * T.ones(2)), tr(x=T.ones(2), y=3 * T.ones(2)),
                tp(2 * T.ones(2), y=T.ones(2)))
    _both(build)


def test_legacy_script_module_subclass():
    def build(T):
        class M(T.jit.ScriptModule):
            __constants__ = ["k"]

            def __init__(self):
                super().__init__()
                self.k = 3
                self.lin = T.nn.Linear(2, 2)

            @T.jit.script_method
            def forward(self, x):
                return self.lin(x) * self.k
        m = _init(T, M())
        return m(T.ones(1, 2)), _roundtrip(T, m)(T.ones(1, 2))
    _both(build)


# ------------------------------------------- submodules of loaded modules

def test_submodules_of_loaded_modules_are_callable():
    """torch refuses calling a traced submodule ("Trace submodules cannot be
    called.") but saves each submodule's part of the trace: once loaded,
    ``loaded.backbone(x)`` runs, as do a loaded scripted module's
    submodules."""
    def build(T):
        Gate, _ = _cell_classes(T)      # the tutorial's MyDecisionGate

        class Block(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(2, 2, 3, padding=1)
                self.bn = T.nn.BatchNorm2d(2)

            def forward(self, x):
                return T.relu(self.bn(self.conv(x))) + x

        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = T.nn.Sequential(Block(), Block())
                self.gate = T.jit.script(Gate())
                self.head = T.nn.Linear(2, 3)

            def forward(self, x):
                return self.head(self.gate(self.backbone(x)).mean((2, 3)))
        m = _init(T, Net()).eval()
        tr = T.jit.trace(m, _x(T, 2, 2, 4, 4))
        with pytest.raises(RuntimeError, match="Trace submodules cannot be called"):
            tr.backbone(_x(T, 2, 2, 4, 4))
        lt, ls = _roundtrip(T, tr), _roundtrip(T, T.jit.script(m))
        x = -3 * _x(T, 1, 2, 5, 5)
        with T.no_grad():
            return (lt(x), lt.backbone(x), getattr(lt.backbone, "1")(x), lt.gate(-x),
                    lt.head(x[:, :, 0, :2]), ls.backbone(x), ls.gate(x), ls(x))
    _both(build)


def test_print_and_size_arithmetic_in_script(capsys):
    """``print`` runs when the graph runs (torch's prim::Print); a size is
    TorchScript's List[int], so it concatenates with a list."""
    def build(T):
        @T.jit.script
        def f(x):
            print("rows", x.size(0))
            s = x.size()
            new_shape = s[:-1] + [2, s[-1] // 2]
            return x.view(new_shape), s, len(s)
        return f(_x(T, 3, 4)), _roundtrip(T, f)(_x(T, 1, 2))
    capsys.readouterr()
    _both(build)
    assert capsys.readouterr().out.splitlines()[:2] == ["rows 3", "rows 1"]


def test_buffer_assignment_in_scripted_methods():
    """``self.h = h.detach()`` in forward and an exported ``reset``: the
    module's buffer follows, after save/load and in a frozen module (which
    keeps an assigned buffer an attribute, as torch's freeze does)."""
    def build(T):
        class Stateful(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = T.nn.GRUCell(3, 2)
                self.register_buffer("h", T.zeros(1, 2))
                self.register_buffer("steps", T.zeros(()))

            def forward(self, x):
                h = self.cell(x, self.h)
                self.h = h.detach()
                self.steps += 1
                return h * 2, self.h

            @T.jit.export
            def reset(self):
                self.h = T.zeros(1, 2)

        class Ema(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("ema", T.zeros(2))

            def forward(self, x):
                self.ema = self.ema * 0.9 + x * 0.1
                return self.ema + 1
        m = _init(T, Stateful())
        s = T.jit.script(m)
        x = _x(T, 1, 3)
        a, ha = s(x)
        b, hb = s(x)
        loaded = _roundtrip(T, s)
        c, _ = loaded(x)
        s.reset()
        d, _ = s(x)
        b.sum().backward()
        frozen = T.jit.freeze(T.jit.script(Ema()).eval())
        frozen(T.ones(2))
        return (a, ha, b, hb, c, d, s.h, s.steps, loaded.h, m.h, s.cell.weight_ih.grad,
                frozen(T.ones(2)))
    _both(build)


def test_trace_dict_inputs_and_untraceable_inputs():
    def build(T):
        class M(T.nn.Module):
            def forward(self, inputs: Dict[str, torch.Tensor]):
                return inputs["a"] * 2 + inputs["b"]

        class Rep(T.nn.Module):
            def forward(self, x, n: int):
                return x.repeat(n, 1)
        tr = T.jit.trace(M(), ({"a": T.ones(2), "b": T.ones(2)},), strict=False)
        with pytest.raises(RuntimeError, match=r"Type 'Tuple\[Tensor, int\]' cannot be traced"):
            T.jit.trace(Rep(), (T.ones(1, 2), 3))
        return tr({"a": T.arange(2.), "b": T.ones(2)}), _roundtrip(T, tr)({"b": T.ones(2),
                                                                           "a": T.ones(2)})
    _both(build)


def test_graph_text_names_ops_as_torch():
    """A program checking a graph's text for an op finds it under
    TorchScript's name (``aten::linear``, ``prim::If``); ``.code`` shows the
    ops inside control flow."""
    def build(T):
        m = _init(T, T.nn.Sequential(T.nn.Linear(2, 2), T.nn.ReLU()))
        tr = T.jit.trace(m, T.ones(1, 2))

        @T.jit.script
        def f(x):
            if x.sum() > 0:
                return T.relu(x) + 1
            return x.tanh()
        conv = _init(T, T.nn.Sequential(T.nn.Conv2d(1, 2, 3), T.nn.BatchNorm2d(2))).eval()
        frozen = T.jit.freeze(T.jit.script(conv))
        g, fg, fz = str(tr.inlined_graph), str(f.graph), str(frozen.graph)
        return (["aten::linear" in g, "aten::relu" in g, "prim::If" in fg, "aten::relu" in fg,
                 "aten::tanh" in fg, "aten::sum" in fg, "relu" in f.code, "tanh" in f.code,
                 "aten::batch_norm" in fz, "aten::conv2d" in fz],
                f(T.ones(2)), frozen(_x(T, 1, 1, 4, 4)))
    _both(build)


def test_freeze_folds_batch_norm_read_inside_a_branch():
    """The folded batch norm's result read inside an If block (renamed
    there too; it was left undefined)."""
    def build(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(1, 2, 3)
                self.bn = T.nn.BatchNorm2d(2)

            def forward(self, x):
                y = self.bn(self.conv(x))
                if y.sum() > 0:
                    y = y * 2
                return y
        m = _init(T, M()).eval()
        f = T.jit.freeze(T.jit.script(m))
        x = _x(T, 1, 1, 4, 4)
        return f(x), f(-x), T.jit.optimize_for_inference(T.jit.script(m))(x)
    _both(build)


def test_dtype_returned_by_one_scripted_function_passed_to_another():
    """A returned dtype is an int (TorchScript's); a parameter annotated
    ``dtype`` (or ``Optional[dtype]``) takes it back, also once loaded."""
    def build(T):
        @T.jit.script
        def get_dtype(x):
            return x.dtype

        @T.jit.script
        def cast(x, dt: torch.dtype):
            return x.to(dt)

        @T.jit.script
        def maybe_cast(x, dt: Optional[torch.dtype] = None):
            if dt is None:
                return x
            return x.to(dt)
        d = get_dtype(T.ones(1, dtype=T.float64))
        outs = (cast(T.ones(2), d), maybe_cast(T.ones(2), d), maybe_cast(T.ones(2)),
                cast(T.ones(2), T.int32), _roundtrip(T, cast)(T.ones(1), d))
        return d, outs, [str(t.dtype).split(".")[1] for t in outs]
    _both(build)


def test_trace_arithmetic_between_two_sizes():
    """``b * c`` of two traced sizes: both stay read from the input (the
    left one was recorded as its example value)."""
    def build(T):
        def f(x):
            b, c = x.shape[0], x.shape[1]
            return x.reshape(b * c // 2, 2).sum(0) / (b * c), x.new_zeros(b + c, c - b)
        tr = T.jit.trace(f, _x(T, 2, 4))
        return tr(_x(T, 3, 6)), _roundtrip(T, tr)(_x(T, 1, 4))
    _both(build)


def test_trace_numel_and_slices_by_sizes_follow_the_input():
    def build(T):
        def f(x):
            return x.sum() / x.numel(), x[:, : x.size(1) - 1] * (x.size(0) - 1)
        tr = T.jit.trace(f, _x(T, 2, 4))
        assert "slice" in str(tr.graph)
        return tr(_x(T, 3, 6)), _roundtrip(T, tr)(_x(T, 4, 3))
    _both(build)


class _Out(typing.NamedTuple):
    y: torch.Tensor         # (torch's scripting needs a TorchScript type; ptcore reads none)
    n: int = 5


def test_script_enumerate_zip_str_join_and_namedtuples():
    def build(T):
        from typing import List

        def pairs(a: List[T.Tensor], b: List[T.Tensor]) -> T.Tensor:
            out = T.zeros(1)
            for i, (x, y) in enumerate(zip(a, b)):
                out = out + x * y * i
            return out

        def joined(xs: List[str]) -> str:
            return ",".join(xs)

        def make(x):
            o = _Out(x * 2)
            return _Out(o.y + 1, o.n + 1)
        make.__annotations__ = {"x": T.Tensor, "return": _Out}

        class M(T.nn.Module):
            def forward(self, x) -> _Out:
                return _Out(x - 1, 2)
        a = [T.ones(1), 2 * T.ones(1)]
        b = [3 * T.ones(1), 4 * T.ones(1)]
        r = T.jit.script(make)(T.ones(2))
        rm = T.jit.script(M())(T.ones(2))
        # (torch returns a NamedTuple type it rebuilds, of the same name and fields)
        assert type(r).__name__ == type(rm).__name__ == "_Out"
        assert r._fields == rm._fields == ("y", "n")
        return (T.jit.script(pairs)(a, b), T.jit.script(joined)(["a", "b", "c"]), r.y, r.n,
                rm.y, rm.n)
    _both(build)
