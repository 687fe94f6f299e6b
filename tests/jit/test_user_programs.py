"""Common user programs under ``ptcore.jit`` (trace, script, save/load,
freeze), each run the same way with torch as the oracle."""
import io
import warnings
from typing import Dict, List, Optional

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

LIBS = [ptcore, torch]


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(a) for a in x]
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return x


def _close(a, b):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert a == b


def _both(build):
    """``build(T)`` for ptcore and torch; the results compared."""
    got, want = build(ptcore), build(torch)
    _close(got, want)
    return got, want


def _init(T, m):
    """Deterministic parameters (the two libraries' RNGs differ)."""
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (0.5 + 0.1 * i))
    return m


def _x(T, *shape):
    n = 1
    for s in shape:
        n *= s
    return T.sin(T.arange(float(n)) * 1.3).reshape(shape)


def _roundtrip(T, m):
    buf = io.BytesIO()
    T.jit.save(m, buf)
    buf.seek(0)
    return T.jit.load(buf)


# ---------------------------------------------------------------- script: functions

def test_script_dict_keys_are_indexable():
    def build(T):
        def f(d: Dict[str, torch.Tensor]) -> torch.Tensor:
            r = T.zeros(2)
            ks = d.keys()
            for k in ks:
                r = r + d[k]
            return r + d[ks[0]]
        return T.jit.script(f)({"a": T.ones(2), "b": 2 * T.ones(2)})
    _both(build)


def test_script_list_append_in_runtime_loop():
    def build(T):
        def f(xs: List[torch.Tensor], x):
            out: List[torch.Tensor] = []
            for v in xs:
                out.append(v * 2)
            r = []
            for i in range(x.size(0)):
                r.append(x[i].sum())
            return out, T.stack(r)
        return T.jit.script(f)([T.ones(1), 3 * T.ones(1)], T.arange(6.).reshape(3, 2))
    _both(build)


def test_script_comprehensions():
    def build(T):
        def f(xs: List[torch.Tensor], x, n: int):
            a, b = (t * 2 for t in (x, x + 1))
            doubled = [v * 2 for v in xs]
            powers = [x * i for i in range(n)]
            consts = [i * i for i in range(3)]
            return doubled, powers, a + b, T.tensor(consts)
        return T.jit.script(f)([T.ones(1), T.ones(1) * 3], T.ones(2), 3)
    _both(build)

    def build_mod(T):
        T.manual_seed(0)

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = T.nn.ModuleList([T.nn.Linear(2, 2) for _ in range(3)])

            def forward(self, x):
                return T.cat([h(x) for h in self.heads], 1)
        return T.jit.script(_init(T, M()))(T.ones(1, 2))
    _both(build_mod)


def test_script_enumerate_zip():
    def build(T):
        def f(xs: List[torch.Tensor], a, b):
            s = xs[0]
            for i, v in enumerate(xs):
                s = s + v * i
            for p, q in zip([a, b], [b, a]):
                a = a + p * q
            for i, w in enumerate([1, 2]):
                s = s + i * w
            return s, a
        return T.jit.script(f)([T.ones(1), 2 * T.ones(1), 3 * T.ones(1)], T.ones(1),
                               2 * T.ones(1))
    _both(build)


def test_script_function_keywords_and_list_of_shape():
    def build(T):
        def f(x, scale: float = 2.0, flag: bool = True):
            if flag:
                x = x * scale
            return x, list(x.shape)
        g = T.jit.script(f)
        return g(T.ones(2), scale=3.0), g(T.ones(2), flag=False), g(T.ones(1))
    _both(build)


def test_script_raise_ends_a_path():
    def build(T):
        def dtype_or_none(m: Optional[torch.Tensor]):
            if m is None:
                return None
            if isinstance(m, T.Tensor):
                return m.dtype
            raise RuntimeError("bad input")

        def f(x, m: Optional[torch.Tensor] = None):
            if x.sum() < 0:
                raise ValueError("negative input")
            if dtype_or_none(m) is None:
                return x
            return x + 1
        g = T.jit.script(f)
        with pytest.raises(T.jit.Error):
            g(-T.ones(1))
        return g(T.ones(1)), g(T.ones(1), T.ones(1))
    _both(build)


# ---------------------------------------------------------------- script: modules

def _net(T):
    T.manual_seed(0)

    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(4, 8)
            self.bn = T.nn.BatchNorm1d(8)
            self.drop = T.nn.Dropout(0.5)
            self.fc2 = T.nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(self.drop(T.relu(self.bn(self.fc1(x)))))
    return _init(T, Net())


def test_script_module_eval_after_scripting():
    def build(T):
        net = _net(T)
        x = _x(T, 5, 4)
        sm = T.jit.script(net)          # scripted in training mode
        sm.eval()
        net.eval()
        a = sm(x)
        ref = net(x)
        loaded = _roundtrip(T, T.jit.script(_net(T)))  # saved in training mode
        loaded.eval()
        other = _net(T).eval()
        frozen = T.jit.freeze(sm)(x)
        return a, ref, loaded(x), other(x), sm.fc1(x), sm.training, sm.fc1.training, frozen
    got, _ = _both(build)
    _close(got[0], got[1])
    _close(got[2], got[3])
    _close(got[7], got[1])


def test_script_module_batchnorm_counts_and_buffers():
    def build(T):
        net = _net(T)
        sm = T.jit.script(net)
        sm(_x(T, 6, 4))
        sm(_x(T, 6, 4) * 2)
        return net.bn.num_batches_tracked, net.bn.running_mean, sm.bn.running_var
    _both(build)


def test_script_parameters_are_not_folded():
    def build(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.ones(2, 2))
                self.register_buffer("b", T.zeros(2))

            def forward(self, x):
                return x @ (self.w * 2) + self.b.exp() + T.tanh(self.w).sum() + self.w.t().sum()
        m = M()
        sm = T.jit.script(m)
        sm(T.ones(1, 2)).sum().backward()
        grad = m.w.grad.clone()
        with T.no_grad():
            m.w.add_(1)
        return grad, sm(T.ones(1, 2)), m(T.ones(1, 2))
    got, _ = _both(build)
    _close(got[1], got[2])


def test_script_module_attributes():
    def build(T):
        class M(T.nn.Module):
            k: T.jit.Final[int]

            def __init__(self):
                super().__init__()
                self.k = 3
                self.alpha = 0.5
                self.sizes = [1, 2, 3]
                self.name = "m"
                self.table = {"a": 1}
                self.t = T.ones(2)
                self.lin = T.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(x) * self.alpha + self.k + len(self.sizes) + self.t

            @T.jit.export
            def shift(self, x):
                return x + self.k
        m = _init(T, M())
        sm = T.jit.script(m)
        with pytest.raises(RuntimeError):
            sm.k = 4
        x = T.ones(1, 2)
        before = sm(x)
        sm.alpha = 2.0                  # read at run time by TorchScript
        after = sm(x)
        loaded = _roundtrip(T, sm)
        return (before, after, m(x), m.alpha, sm.k, sm.alpha, sm.sizes, sm.name, sm.table,
                sm.t, loaded.k, loaded.alpha, loaded.sizes, loaded.table, loaded.t,
                loaded(x), loaded.shift(T.zeros(1)))
    _both(build)


def test_script_module_defaults_and_keywords():
    def build(T):
        T.manual_seed(0)

        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = T.nn.Linear(2, 2)

            def forward(self, x, mask: Optional[torch.Tensor] = None, scale: float = 1.0):
                y = self.lin(x) * scale
                if mask is not None:
                    y = y * mask
                return y
        sm = T.jit.script(_init(T, M()))
        x = T.ones(1, 2)
        loaded = _roundtrip(T, sm)
        return (sm(x), sm(x, T.zeros(1, 2)), sm(x, scale=3.0), sm(x, mask=None, scale=2.0),
                loaded(x, scale=2.0))
    _both(build)


def test_script_unused_raises_when_called():
    def build(T):
        class M(T.nn.Module):
            def forward(self, x):
                if x.sum() > 100:
                    return self.never(x)
                return x * 2

            @T.jit.unused
            def never(self, x):
                return x.numpy()
        sm = T.jit.script(M())
        with pytest.raises(T.jit.Error):
            sm(T.ones(1) * 1000)
        return sm(T.ones(2))
    _both(build)


# ---------------------------------------------------------------- trace

def test_trace_dict_output_needs_strict_false():
    def build(T):
        def f(x, y):
            return {"sum": x + y, "prod": x * y}
        with pytest.raises(RuntimeError):
            T.jit.trace(f, (T.ones(2), T.ones(2)))

        class M(T.nn.Module):
            def forward(self, x):
                return x, (x * 2, {"b": x + 1})
        g = T.jit.trace(f, (T.ones(2), T.ones(2)), strict=False)
        tm = T.jit.trace(M(), T.ones(2), strict=False)
        return g(T.ones(2), 2 * T.ones(2)), tm(3 * T.ones(2))
    _both(build)


def test_trace_tuple_input_lstm():
    def build(T):
        T.manual_seed(0)
        lstm = _init(T, T.nn.LSTM(3, 4))
        x = _x(T, 5, 2, 3)
        h0 = (_x(T, 1, 2, 4), _x(T, 1, 2, 4) * 2)
        tm = T.jit.trace(lstm, (x, h0))
        loaded = _roundtrip(T, tm)
        h1 = (T.zeros(1, 2, 4), T.ones(1, 2, 4))
        return tm(x, h1), lstm(x, h1), loaded(x, h1)
    got, _ = _both(build)
    _close(got[0], got[1])


def test_trace_check_skips_nondeterministic_programs():
    def build(T):
        def f(x):
            return x + T.rand(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = T.jit.trace(f, T.ones(1))
        return tuple(g(T.ones(3)).shape)
    _both(build)


def test_script_calls_a_scripted_function():
    def build(T):
        @T.jit.script
        def inner(x, k: int = 3):
            return x * k

        def outer(x):
            return inner(x) + inner(x, 2)
        return T.jit.script(outer)(T.ones(2)), T.jit.trace(outer, T.ones(1))(T.ones(2))
    _both(build)


def test_trace_follows_input_sizes():
    def build(T):
        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(1, 2, 3, padding=1)
                self.fc = T.nn.Linear(2 * 4 * 4, 3)

            def forward(self, x):
                b, c, h, w = x.shape
                y = self.conv(x).view(x.size(0), -1)
                return self.fc(y), x.reshape(b, -1).sum(1), T.arange(x.size(0)) * (h * w - 1)
        net = _init(T, Net())
        tm = T.jit.trace(net, _x(T, 1, 1, 4, 4))
        loaded = _roundtrip(T, tm)

        def f(x):
            return x.reshape(x.shape[0], -1) + T.zeros(x.size(0), 1), x.new_zeros(x.size(1) // 2)
        tf = T.jit.trace(f, T.ones(2, 2, 2))
        x3 = _x(T, 3, 1, 4, 4)
        return tm(x3), net(x3), loaded(x3), tf(_x(T, 3, 4, 2))
    got, _ = _both(build)
    _close(got[0], got[1])


def test_compiled_call_argument_errors():
    def build(T):
        @T.jit.script
        def f(x, k: int = 2):
            return x * k
        tm = T.jit.trace(_init(T, T.nn.Linear(2, 2)), T.ones(1, 2))
        for bad in (lambda: f(), lambda: f(T.ones(1), z=3), lambda: f(T.ones(1), 2, 3),
                    lambda: tm(T.ones(1, 2), T.ones(1))):
            with pytest.raises(RuntimeError):
                bad()
        return f(k=3, x=T.ones(1)), tm(T.ones(2, 2))
    _both(build)


def test_script_iterating_dict_attributes_yields_keys():
    def build(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = {"a": 1, "b": 2}
                self.md = T.nn.ModuleDict({"x": T.nn.Identity(), "y": T.nn.Identity()})

            def forward(self, x):
                for k in self.w:
                    x = x + self.w[k]
                for k in self.md:
                    x = x * 2
                for k, m in self.md.items():
                    x = m(x) + 1
                return x, [k for k in self.w]
        return T.jit.script(M())(T.zeros(1))
    _both(build)


def test_corrupt_attribute_records_raise_jit_error():
    """A saved module's data-attribute records that a hostile or damaged file
    mangles give ptcore.jit's clear error, never a TypeError/ValueError."""
    from ptcore.jit._serialization import _dec_data
    from ptcore.jit._ir import JitError
    for bad in ({"dict": [[1, 2, 3]]}, {"dict": [["k"]]}, {"dict": 5}, {"tuple": 3},
                {"x": 1}, [object()]):
        with pytest.raises(JitError, match="corrupt module attribute record"):
            _dec_data(bad, {})
    assert _dec_data({"dict": [["a", {"tuple": [1, 2.5, None]}]]}, {}) == {"a": (1, 2.5, None)}
