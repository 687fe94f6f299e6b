"""User programs with torch.jit run under ptcore as under torch: named
tuple fields of scripted results, ``del``, dict comprehensions, the
exceptions of unsupported constructs (torch.jit.frontend), argument type
checks of scripted calls, and torch.jit.load's errors."""
import io
import os
from typing import Dict, List

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from test_user_programs import _np          # noqa: E402


def _same(a, b):
    """Equal values of the same types (dtypes and shapes for tensors)."""
    a, b = _np(a), _np(b)
    assert type(a) is type(b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    else:
        assert a == b


def _both(fn, *args):
    """``fn`` scripted by torch and by ptcore, run on ``args`` (NumPy arrays
    become each library's tensors)."""
    out = []
    for T in (torch, ptcore):
        conv = [T.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        out.append(T.jit.script(fn)(*conv))
    return out


_A = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")


def named_fields(a):
    r = a.topk(2, dim=-1)
    s = a.sort(dim=1, descending=True)
    return (r.values, r.indices, a.max(dim=1).values, a.min(1).indices, s.indices,
            a.median(1).values, a.cummax(1).indices, a.aminmax().min)


def test_named_tuple_fields_of_results():
    _same(*_both(named_fields, _A))


def deletes(x, d: Dict[str, int], xs: List[int]):
    del d["a"]
    del xs[0]
    y = x * 2
    del y
    return x * len(d), d, xs


def test_del_of_items_and_names():
    _same(*_both(deletes, _A, {"a": 1, "b": 2}, [1, 2, 3]))


def dict_comp(x, keys: List[str]):
    d = {k: x * i for i, k in enumerate(keys)}
    e = {i: x.sum() for i in range(3)}
    return d, e


def test_dict_comprehension():
    _same(*_both(dict_comp, _A, ["p", "q"]))


def star_args(*xs):
    return xs[0]


def kw_only(x, *, y: int = 1):
    return x + y


def try_except(x):
    try:
        return x + 1
    except Exception:
        return x


def uses_lambda(x):
    f = lambda a: a + 1      # noqa: E731
    return f(x)


def uses_global(x):
    global _A
    return x


def set_comp(x):
    s = {i for i in range(3)}
    return x + len(s)


@pytest.mark.parametrize("fn, name", [
    (star_args, "NotSupportedError"), (kw_only, "NotSupportedError"),
    (try_except, "UnsupportedNodeError"), (uses_lambda, "UnsupportedNodeError"),
    (uses_global, "UnsupportedNodeError"), (set_comp, "UnsupportedNodeError")])
def test_unsupported_constructs_raise_frontend_errors(fn, name):
    with pytest.raises(getattr(torch.jit.frontend, name)):
        torch.jit.script(fn)
    with pytest.raises(getattr(ptcore.jit.frontend, name)) as e:
        ptcore.jit.script(fn)
    assert isinstance(e.value, ptcore.jit.frontend.FrontendError)
    assert issubclass(ptcore.jit.frontend.UnsupportedNodeError,
                      ptcore.jit.frontend.NotSupportedError)


def typed(x, n: int, r: float, b: bool, s: str):
    return x * n * r


@pytest.mark.parametrize("args", [
    (1, 1.0, True, "a"), (True, 2, 1, "a"), ("t", "t", True, "a"),   # "t": a 0-dim tensor
    (1.5, 1.0, True, "a"), (1, 1.0, True, 3), (1, "x", True, "a"), (None, 1.0, True, "a")])
def test_scripted_call_checks_argument_types(args):
    errs = []
    for T in (torch, ptcore):
        sf = T.jit.script(typed)
        conv = [T.tensor(2) if a == "t" else a for a in args]
        try:
            errs.append(_np(sf(T.ones(2), *conv)))
        except RuntimeError as e:
            errs.append(str(e).split(" for argument ")[1].split(" ")[0])
    _same(errs[0], errs[1])


def unannotated(x, y):
    return x + y


@pytest.mark.parametrize("bad", [3, 2.5, [1.0]])
def test_tensor_parameters_reject_python_values(bad):
    for T in (torch, ptcore):
        sf = T.jit.script(unannotated)
        sf(T.ones(2), T.ones(2))
        with pytest.raises(RuntimeError, match="argument 'y'"):
            sf(T.ones(2), bad)


def test_load_missing_file_or_directory_raises_value_error(tmp_path):
    for T in (torch, ptcore):
        with pytest.raises(ValueError, match="does not exist"):
            T.jit.load(os.fspath(tmp_path / "missing.pt"))
        with pytest.raises(ValueError, match="is a directory"):
            T.jit.load(os.fspath(tmp_path))


def test_script_of_a_non_function_raises_type_error():
    for T in (torch, ptcore):
        with pytest.raises(TypeError):
            T.jit.script(3)


def test_named_fields_and_deletes_survive_save_and_load():
    sf = ptcore.jit.script(named_fields)
    buf = io.BytesIO()
    ptcore.jit.save(sf, buf)
    buf.seek(0)
    _same(ptcore.jit.load(buf)(ptcore.tensor(_A)), torch.jit.script(named_fields)(
        torch.tensor(_A)))


def _with_export(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = T.nn.Linear(3, 2)

        def forward(self, x):
            return self.l(x).relu()

        @T.jit.export
        def embed(self, x):
            return self.l(x)
    return M()


def test_compiled_methods_have_graph_and_code():
    for T in (torch, ptcore):
        s = T.jit.script(_with_export(T))
        x = T.ones(2, 3)
        for meth in (s.forward, s.embed):
            assert isinstance(meth.code, str) and meth.code
            assert isinstance(str(meth.graph), str)
            assert isinstance(str(meth.inlined_graph), str)
        _same(s.forward(x), s(x))
        _same(s.embed(x), s.l(x))
        t = T.jit.trace(T.nn.Linear(3, 2), x)
        assert isinstance(t.forward.code, str) and isinstance(str(t.forward.graph), str)


def fmt_and_sum(x, name: str, xs: List[float]):
    s = "{} has {} elements".format(name, x.numel())
    return s, sum(xs) / len(xs), min(xs), max(xs)


def test_str_format_and_sum_of_runtime_values():
    _same(*_both(fmt_and_sum, _A, "x", [1.0, 3.0, 2.5]))


def test_freeze_keeps_forward_and_the_preserved_methods_only():
    for T in (torch, ptcore):
        s = T.jit.script(_with_export(T).eval())
        x = T.ones(2, 3)
        f = T.jit.freeze(s)
        _same(f(x), s(x))
        with pytest.raises(AttributeError):
            f.embed(x)
        f = T.jit.freeze(s, preserved_attrs=["embed"])
        _same(f.embed(x), s.embed(x))


def _helper_with_import(x):
    import math as m
    from ptcore.nn import functional as Fn
    return Fn.relu(x) * m.pi


def test_imports_in_ptcore_functions_are_bound_user_imports_unsupported():
    with pytest.raises(ptcore.jit.frontend.UnsupportedNodeError):
        ptcore.jit.script(_helper_with_import)
    # one of ptcore's own functions (a layer's helper) may import in its body
    internal = type(_helper_with_import)(_helper_with_import.__code__, globals())
    internal.__module__ = "ptcore.nn.modules.fake"

    class M(ptcore.nn.Module):
        def forward(self, x):
            return internal(x) + 1

    x = ptcore.tensor(_A)
    s = ptcore.jit.script(M())
    np.testing.assert_allclose(s(x).numpy(), (x.relu() * np.pi + 1).numpy(), rtol=1e-6)
    # torch's scripted LSTM, whose ptcore forward imports in a helper
    lstm = ptcore.nn.LSTM(4, 3)
    out, _ = ptcore.jit.script(lstm)(ptcore.ones(2, 1, 4))
    np.testing.assert_allclose(out.detach().numpy(), lstm(ptcore.ones(2, 1, 4))[0].detach().numpy(),
                               rtol=1e-6)
