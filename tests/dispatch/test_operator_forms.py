"""The declaration table of Tensor's Python operator methods (OPERATOR_FORMS)
checked against torch: the op each computes and in which form, its name, how
``__torch_function__`` reports it, its aten op and the profiler's event, the
Python syntax that calls it; and ptcore's Tensor doing the same."""
import gc

import pytest

import ptcore
from ptcore.profiler import profile as ptcore_profile
from ptcore._dispatch.declarations import OPERATOR_FORMS, OPERATOR_METHODS
from ptcore._dispatch.table import op_of
from ptcore._dynamo.capture import written

torch = pytest.importorskip("torch")
from torch.profiler import profile as torch_profile  # noqa: E402

BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_not"}
UNARY = {"neg", "abs", "positive", "bitwise_not"}
# torch has no ``@=`` (Tensor.__imatmul__ is ptcore's, as an in-place matmul)
NOT_IN_TORCH = {"__imatmul__"}


def _operands(lib, form):
    if form.op in BITWISE:
        return lib.tensor([[3, 5], [6, 7]]), lib.tensor([[1, 2], [1, 1]])
    return lib.tensor([[1.5, 2.0], [3.0, 4.0]]), lib.tensor([[2.0, 1.0], [0.5, 3.0]])


def _call(lib, method, form):
    a, b = _operands(lib, form)
    args = () if form.op in UNARY else (b,)
    out = getattr(a, method)(*args)
    return a, out


def _recording_subclass(lib):
    """A Tensor subclass of ``lib`` whose ``__torch_function__`` notes the
    names of the functions it receives in ``Sub.seen`` (one class per library
    for the module: a class made per test would make the suite's conftest
    collect garbage before every test, ~1 s each with the whole suite loaded)."""
    seen = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    Sub.seen = seen
    return Sub


_SUBCLASSES = {}


@pytest.fixture(autouse=True, scope="module")
def _drop_subclasses():
    """The recording subclasses go with the module (while one lives, ptcore's
    dispatch point keeps its __torch_function__ layer on)."""
    yield
    _SUBCLASSES.clear()
    gc.collect()


def _reported(lib, method, form):
    """The names of the functions ``__torch_function__`` receives for one call."""
    Sub = _SUBCLASSES.get(lib.__name__)
    if Sub is None:
        Sub = _SUBCLASSES[lib.__name__] = _recording_subclass(lib)
    seen = Sub.seen
    a, b = _operands(lib, form)
    a = a.as_subclass(Sub)
    seen.clear()
    getattr(a, method)(*(() if form.op in UNARY else (b,)))
    return seen


def _first_event(lib, profile, method, form):
    a, b = _operands(lib, form)
    args = () if form.op in UNARY else (b,)
    with profile() as prof:
        getattr(a, method)(*args)
    return [e.name for e in prof.events()][0]


FORMS = sorted(OPERATOR_FORMS.items())
IN_TORCH = [(m, f) for m, f in FORMS if m not in NOT_IN_TORCH]


def test_the_table_lists_every_operator_method_of_torch():
    ours = set(OPERATOR_FORMS)
    names = {n for n in dir(torch.Tensor) if n.startswith("__") and n.endswith("__")}
    operators = {n for n in names if any(n in (f"__{p}{s}__",) for s in (
        "add sub mul truediv div floordiv mod pow matmul and or xor lshift rshift".split())
        for p in ("", "r", "i"))} | ({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                                      "__neg__", "__abs__", "__pos__", "__invert__"} & names)
    # Python 3 never calls __idiv__: torch keeps it as the name of __itruediv__
    assert operators - ours == {"__idiv__"}
    assert ours - operators == NOT_IN_TORCH
    assert OPERATOR_METHODS == {m: f.op for m, f in OPERATOR_FORMS.items()}


@pytest.mark.parametrize("method,form", IN_TORCH, ids=[m for m, _ in IN_TORCH])
def test_operator_method_computes_its_op_in_its_form(method, form):
    a, out = _call(torch, method, form)
    x, y = _operands(torch, form)
    op = getattr(torch, form.op)
    if form.op in UNARY:
        want = op(x)
    elif form.form == "reflected":
        want = op(y, x)
    else:
        want = op(x, y)
    torch.testing.assert_close(out, want)
    if form.form == "inplace":
        assert out is a
    _, mine = _call(ptcore, method, form)
    torch.testing.assert_close(torch.from_numpy(mine.numpy()), want)


@pytest.mark.parametrize("method,form", IN_TORCH, ids=[m for m, _ in IN_TORCH])
def test_operator_method_name_and_report_match_torch(method, form):
    assert getattr(torch.Tensor, method).__name__ == form.name
    assert getattr(ptcore.Tensor, method).__name__ == form.name
    want = [form.reported_as or form.name]
    assert _reported(torch, method, form) == want
    assert _reported(ptcore, method, form) == want


@pytest.mark.parametrize("method,form", IN_TORCH, ids=[m for m, _ in IN_TORCH])
def test_operator_method_aten_op_matches_torch(method, form):
    if form.aten is not None:
        assert hasattr(torch.ops.aten, form.aten), form.aten
    else:
        # torch's reflected operators are Python functions calling another op
        assert not hasattr(torch.ops.aten, method), method
    theirs = _first_event(torch, torch_profile, method, form)
    ours = _first_event(ptcore, ptcore_profile, method, form)
    if method in ("__rtruediv__", "__rdiv__"):
        # torch computes ``other / self`` as ``self.reciprocal() * other``; ptcore
        # records the one division
        assert (theirs, ours) == ("aten::reciprocal", "aten::div")
    else:
        assert theirs == ours == "aten::" + (form.aten or form.op)


@pytest.mark.parametrize("method,form", FORMS, ids=[m for m, _ in FORMS])
def test_operator_method_syntax_calls_it(method, form):
    if form.syntax is None:
        assert form.form == "reflected" or method in ("__abs__", "__div__")
        return
    a, b = _operands(ptcore, form)
    want = getattr(a.clone(), method)(*(() if form.op in UNARY else (b,)))
    env = {"a": a.clone(), "b": b}
    if form.form == "inplace":
        exec(form.syntax.format("a", "b"), env)
        got = env["a"]
    else:
        got = eval(form.syntax.format("a", "b"), env)
    assert ptcore.equal(got, want)


def test_operator_methods_are_the_entries_the_table_says():
    for method, form in OPERATOR_FORMS.items():
        d = op_of(getattr(ptcore.Tensor, method))
        assert d is not None, method
        if d.name != method:                     # bound to the op's own entry
            assert (d.namespace, d.name) == ("ptcore", form.op), method


def test_compile_capture_sees_the_inplace_forms_as_writes():
    t, u = ptcore.tensor([1, 2]), ptcore.tensor([3, 4])
    for method, form in OPERATOR_FORMS.items():
        d = op_of(getattr(ptcore.Tensor, method))
        if d.name != method:
            continue
        args = (t,) if form.op in UNARY else (t, u)
        # ``~t`` (``__invert__``) writes nothing, ``t &= u`` writes t
        assert (written(d, args, {}) is t) == (form.form == "inplace"), method
