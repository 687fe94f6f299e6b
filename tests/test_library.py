"""ptcore.library.custom_op against torch.library.custom_op: schemas, errors,
autograd, and the op seen by every layer of the dispatch point."""
import itertools
from typing import Optional, Sequence

import numpy as np
import pytest

import ptcore
from ptcore import Tensor
from ptcore.library import custom_op, infer_schema

torch = pytest.importorskip("torch")

_ids = itertools.count()


def _name(base):
    """A fresh op name (the registries are process-wide)."""
    return f"ptc_test::{base}_{next(_ids)}"


def _t(x):
    return torch.tensor(np.asarray(x.detach().numpy()))


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------

def test_infer_schema_matches_torch():
    def f_pt(x: Tensor, a: float, n: int = 2, flag: bool = False,
             w: Optional[Tensor] = None) -> Tensor: ...

    def f_t(x: torch.Tensor, a: float, n: int = 2, flag: bool = False,
            w: Optional[torch.Tensor] = None) -> torch.Tensor: ...
    assert infer_schema(f_pt, mutates_args=()) == \
        torch.library.infer_schema(f_t, mutates_args=())

    def g_pt(xs: Sequence[Tensor], sizes: list[int], out: Tensor) -> None: ...

    def g_t(xs: Sequence[torch.Tensor], sizes: list[int], out: torch.Tensor) -> None: ...
    assert infer_schema(g_pt, mutates_args=("out",)) == \
        torch.library.infer_schema(g_t, mutates_args=("out",))

    def h_pt(x: Tensor, *, alpha: float = 1.0) -> tuple[Tensor, Tensor]: ...

    def h_t(x: torch.Tensor, *, alpha: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]: ...
    assert infer_schema(h_pt, mutates_args=()) == \
        torch.library.infer_schema(h_t, mutates_args=())


@pytest.mark.parametrize("case", ["unannotated", "bad_mutates", "no_return", "bad_type"])
def test_schema_errors_are_valueerrors_as_torch(case):
    def unannotated(x, a): ...

    def good(x: Tensor) -> Tensor: ...

    def no_return(x: Tensor): ...

    def bad_type(x: Tensor, d: dict) -> Tensor: ...
    fn, mut = {"unannotated": (unannotated, ()), "bad_mutates": (good, ("y",)),
               "no_return": (no_return, ()), "bad_type": (bad_type, ())}[case]
    with pytest.raises(ValueError):
        infer_schema(fn, mutates_args=mut)
    if case in ("unannotated", "bad_mutates"):
        # torch's verdict on the same function
        tfn = {"unannotated": unannotated,
               "bad_mutates": lambda x: x}[case]
        if case == "bad_mutates":
            def tfn(x: torch.Tensor) -> torch.Tensor: ...
        with pytest.raises(ValueError):
            torch.library.infer_schema(tfn, mutates_args=mut)


@pytest.mark.parametrize("bad", ["noname", "a::b::c", "1ns::f", "ns::"])
def test_bad_names(bad):
    with pytest.raises(ValueError, match="namespace::opname"):
        custom_op(bad, mutates_args=())(lambda x: x)


def test_mutates_args_is_required_as_in_torch():
    with pytest.raises(TypeError):
        custom_op("ptc_test::x")       # noqa: the keyword-only argument is missing
    with pytest.raises(TypeError):
        torch.library.custom_op("ptc_test::x")


# ---------------------------------------------------------------------------
# calling, autograd
# ---------------------------------------------------------------------------

def _both(name_base, fn_pt, fn_t):
    """Register the op with ptcore and with torch."""
    return (custom_op(_name(name_base), fn_pt, mutates_args=()),
            torch.library.custom_op(f"ptctorch::{name_base}_{next(_ids)}", fn_t,
                                    mutates_args=()))


def test_values_autograd_and_setup_context_match_torch():
    def f_pt(x: Tensor, y: Tensor, alpha: float) -> Tensor:
        return ptcore.sin(x) * y + alpha

    def f_t(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        return torch.sin(x) * y + alpha
    op, top = _both("sinmul", f_pt, f_t)

    def setup_context(ctx, inputs, output):
        x, y, _ = inputs
        ctx.save_for_backward(x, y)

    def backward_pt(ctx, g):
        x, y = ctx.saved_tensors
        return g * ptcore.cos(x) * y, g * ptcore.sin(x), None

    def backward_t(ctx, g):
        x, y = ctx.saved_tensors
        return g * torch.cos(x) * y, g * torch.sin(x), None
    op.register_autograd(backward_pt, setup_context=setup_context)
    top.register_autograd(backward_t, setup_context=setup_context)

    x = ptcore.randn(4, 3, dtype=ptcore.float64, requires_grad=True)
    y = ptcore.randn(4, 3, dtype=ptcore.float64, requires_grad=True)
    xt, yt = _t(x).requires_grad_(), _t(y).requires_grad_()
    out, tout = op(x, y, 0.5), top(xt, yt, 0.5)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    gw = ptcore.randn(4, 3, dtype=ptcore.float64)
    out.backward(gw)
    tout.backward(_t(gw))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    np.testing.assert_allclose(y.grad.numpy(), yt.grad.numpy())
    # the backward is written with ptcore ops: differentiable again
    x2 = x.detach().requires_grad_()
    y2 = y.detach().requires_grad_()
    assert ptcore.autograd.gradcheck(lambda a, b: op(a, b, 1.0), (x2, y2))
    assert ptcore.autograd.gradgradcheck(lambda a, b: op(a, b, 1.0), (x2, y2))
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__.replace(
        "ptctorch", "ptc_test").replace(top._name, op._name)


def test_keyword_only_inputs_reach_setup_context():
    seen = {}

    @custom_op(_name("kw"), mutates_args=())
    def scale(x: Tensor, *, alpha: float = 2.0) -> Tensor:
        return x * alpha

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        seen.update(keyword_only_inputs)
        ctx.alpha = keyword_only_inputs["alpha"]

    scale.register_autograd(lambda ctx, g: g * ctx.alpha, setup_context=setup_context)
    x = ptcore.ones(3, requires_grad=True)
    scale(x, alpha=3.0).sum().backward()
    assert seen == {"alpha": 3.0}
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])
    scale(x).sum()          # the default applies
    with pytest.raises(TypeError, match="alpha"):
        scale(x, 3.0)       # keyword-only, as in the signature


def test_backward_without_formula_raises_like_torch():
    def f_pt(x: Tensor) -> Tensor:
        return x * 2

    def f_t(x: torch.Tensor) -> torch.Tensor:
        return x * 2
    op, top = _both("noformula", f_pt, f_t)
    x = ptcore.ones(2, requires_grad=True)
    y = op(x)
    assert y.requires_grad and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        top(torch.ones(2, requires_grad=True)).sum().backward()
    # no grad required: no node at all
    assert op(ptcore.ones(2)).grad_fn is None


def test_wrong_number_of_gradients():
    @custom_op(_name("wrongn"), mutates_args=())
    def f(x: Tensor, y: Tensor) -> Tensor:
        return x + y
    f.register_autograd(lambda ctx, g: g)
    x = ptcore.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="expected one per positional input"):
        f(x, ptcore.ones(2)).sum().backward()


def test_returning_an_input_is_an_error_as_in_torch():
    def f_pt(x: Tensor) -> Tensor:
        return x

    def f_t(x: torch.Tensor) -> torch.Tensor:
        return x
    op, top = _both("alias", f_pt, f_t)
    with pytest.raises(RuntimeError, match="may not"):
        op(ptcore.ones(2))
    with pytest.raises(RuntimeError):
        top(torch.ones(2))

    @custom_op(_name("view"), mutates_args=())
    def view(x: Tensor) -> Tensor:
        return x[1:]
    with pytest.raises(RuntimeError, match="view"):
        view(ptcore.ones(3))


def test_mutating_op():
    @custom_op(_name("fill"), mutates_args=("out",))
    def fill(x: Tensor, out: Tensor) -> None:
        out.copy_(x * 2)
    out = ptcore.zeros(3)
    assert fill(ptcore.ones(3), out) is None
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0, 2.0])
    assert "inplace" in fill._opdef.tags and "(a1!)" in fill._schema
    with pytest.raises(RuntimeError, match="mutates"):
        fill.register_autograd(lambda ctx, g: g)


def test_device_types_and_register_kernel():
    @custom_op(_name("dev"), mutates_args=(), device_types="cuda")
    def f(x: Tensor) -> Tensor:
        return x + 1
    with pytest.raises(NotImplementedError, match="no kernel for device type 'cpu'"):
        f(ptcore.ones(2))
    f.register_kernel("cpu", lambda x: x + 10)
    np.testing.assert_array_equal(f(ptcore.ones(2)).numpy(), [11.0, 11.0])

    @f.register_kernel(["cpu"])
    def _(x):
        return x + 100
    np.testing.assert_array_equal(f(ptcore.ones(2)).numpy(), [101.0, 101.0])


def test_ops_namespace_and_redefinition():
    name = _name("ns")
    ns, op_name = name.split("::")

    @custom_op(name, mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x + 1
    packet = getattr(getattr(ptcore.ops, ns), op_name)
    assert packet.default is f._opoverload and packet.overloads() == ["default"]
    assert str(f._opoverload._schema) == f"{ns}::{op_name}(Tensor x) -> Tensor"
    np.testing.assert_array_equal(packet(ptcore.zeros(2)).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(packet.default(ptcore.zeros(2)).numpy(), [1.0, 1.0])
    with pytest.raises(AttributeError, match="no op"):
        getattr(ptcore.ops, ns).not_an_op

    @custom_op(name, mutates_args=())
    def f2(x: Tensor) -> Tensor:
        return x + 2
    np.testing.assert_array_equal(getattr(getattr(ptcore.ops, ns), op_name)(
        ptcore.zeros(2)).numpy(), [2.0, 2.0])


def test_custom_op_handles_are_torchs():
    """``ptcore.ops.<ns>.<op>`` is an OpOverloadPacket as in torch (not a function),
    with torch's str/repr/name/schema; the mode's ``func`` is its ``default``."""
    from ptcore.utils._python_dispatch import TorchDispatchMode
    from torch.utils._python_dispatch import TorchDispatchMode as TMode
    k = next(_ids)
    got = []
    for lib, mod, base, ns in ((ptcore, ptcore.library, TorchDispatchMode, f"ptc_h{k}"),
                               (torch, torch.library, TMode, f"ptc_h{k}")):
        @mod.custom_op(f"{ns}::twice", mutates_args=())
        def twice(x: lib.Tensor, a: float) -> lib.Tensor:
            return x * a
        packet = getattr(lib.ops, ns).twice
        seen = []

        class Grab(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(func)
                return func(*args, **(kwargs or {}))
        with Grab():
            r = twice(lib.ones(2), 3.0)
        func = [f for f in seen if "twice" in str(f)][0]
        assert func is packet.default is twice._opoverload
        assert func.overloadpacket is packet
        got.append((type(packet).__name__, type(func).__name__, repr(packet), str(packet),
                    repr(func), str(func), func.name(), func.__name__,
                    str(func._schema).replace(ns, "NS"), func._schema.name,
                    func._schema.overload_name, packet.overloads(), r.tolist()))
    assert got[0] == got[1]


# ---------------------------------------------------------------------------
# the dispatch point's layers see the op
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def square_plus():
    @custom_op("ptc_layers::square_plus", mutates_args=())
    def square_plus(x: Tensor, y: Tensor) -> Tensor:
        return x * x + y

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * g * x, g
    square_plus.register_autograd(backward, setup_context=setup_context)
    return square_plus


def test_torch_function_mode_sees_the_op(square_plus):
    from ptcore.overrides import TorchFunctionMode
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    a, b = ptcore.ones(2), ptcore.ones(2)
    with Log():
        square_plus(a, b)
    assert seen == ["square_plus"]


def test_jit_trace_records_one_node_and_replays(square_plus, tmp_path):
    def prog(a, b):
        return square_plus(a, b).sin()
    a, b = ptcore.randn(3), ptcore.randn(3)
    tm = ptcore.jit.trace(prog, (a, b))
    text = str(tm.graph)
    assert "ptc_layers::square_plus" in text
    assert "mul" not in text          # the op's inside is not traced
    a2, b2 = ptcore.randn(3), ptcore.randn(3)
    np.testing.assert_allclose(tm(a2, b2).numpy(), prog(a2, b2).numpy(), rtol=1e-6)
    path = tmp_path / "m.pt"
    ptcore.jit.save(tm, str(path))
    loaded = ptcore.jit.load(str(path))
    np.testing.assert_allclose(loaded(a2, b2).numpy(), prog(a2, b2).numpy(), rtol=1e-6)
    # autograd through the traced graph uses the registered formula
    x = ptcore.randn(3, requires_grad=True)
    tm(x, b2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(),
                               (np.cos(x.detach().numpy() ** 2 + b2.numpy()) * 2 *
                                x.detach().numpy()), rtol=1e-5)


def test_profiler_and_dispatch_mode_see_the_op(square_plus):
    from ptcore.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))
    with Log():
        square_plus(ptcore.ones(2), ptcore.ones(2))
    assert any("square_plus" in s for s in seen)

    with ptcore.profiler.profile() as prof:
        square_plus(ptcore.ones(2), ptcore.ones(2))
    names = [e.key for e in prof.key_averages()]
    assert any("square_plus" in n for n in names), names


def test_opcheck(square_plus):
    x, y = ptcore.randn(3, dtype=ptcore.float64), ptcore.randn(3, dtype=ptcore.float64)
    square_plus.register_fake(lambda x, y: ptcore.empty_like(x))
    assert ptcore.library.opcheck(square_plus, (x, y)) == {
        "test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}
    square_plus.register_fake(lambda x, y: x.new_empty(5))
    with pytest.raises(AssertionError, match="test_faketensor failed .* fake function"):
        ptcore.library.opcheck(square_plus, (x, y))
    square_plus.register_fake(lambda x, y: ptcore.empty_like(x))

    @custom_op(_name("badgrad"), mutates_args=())
    def cube(x: Tensor) -> Tensor:
        return x * x * x
    cube.register_autograd(lambda ctx, g: g * 2)
    with pytest.raises(AssertionError, match="no fake impl"):
        ptcore.library.opcheck(cube, (x,))
    with pytest.raises(AssertionError, match="finite differences"):
        ptcore.library.opcheck(cube, (x,), test_utils="test_aot_dispatch_dynamic")


def test_opcheck_returns_torchs_dict():
    """torch.library.opcheck returns {test name: "SUCCESS" or the exception}; ptcore's too."""
    k = next(_ids)
    results = []
    for lib, mod in ((ptcore, ptcore.library), (torch, torch.library)):
        @mod.custom_op(f"ptc_oc{k}::sq", mutates_args=())
        def sq(x: lib.Tensor) -> lib.Tensor:
            return x * x
        x = lib.ones(2, dtype=lib.float64)
        no_fake = mod.opcheck(sq, (x,), raise_exception=False)
        sq.register_fake(lambda x: lib.empty_like(x))
        full = mod.opcheck(sq, (x,))
        one = mod.opcheck(sq, (x,), test_utils=("test_schema",))
        results.append(({k: "SUCCESS" if v == "SUCCESS" else "FAIL" for k, v in no_fake.items()},
                        full, one))
    assert results[0][1:] == results[1][1:]
    assert results[0][1] == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                             "test_faketensor": "SUCCESS",
                             "test_aot_dispatch_dynamic": "SUCCESS"}
    # without a fake function test_faketensor fails in both (the value is the exception)
    assert list(results[0][0]) == list(results[1][0])
    assert results[0][0]["test_faketensor"] == results[1][0]["test_faketensor"] == "FAIL"
    assert results[0][0]["test_schema"] == results[1][0]["test_schema"] == "SUCCESS"


# ---------------------------------------------------------------------------
# Library.define / impl (schema strings)
# ---------------------------------------------------------------------------

def test_library_define_and_impl_as_torch():
    ns = f"ptc_lib{next(_ids)}"
    results = []
    for mod, lib_ns, ones in ((ptcore.library, ns, ptcore.ones),
                              (torch.library, "t" + ns, torch.ones)):
        lib = mod.Library(lib_ns, "DEF")
        assert lib.define("foo(Tensor x, float a=1.5, *, int n=2) -> Tensor") == "foo"
        ops_ns = getattr(ptcore.ops if mod is ptcore.library else torch.ops, lib_ns)
        with pytest.raises(NotImplementedError):
            ops_ns.foo(ones(2))                       # no kernel yet
        lib.impl("foo", lambda x, a=1.5, n=2: x * a + n, "CPU")
        results.append((ops_ns.foo(ones(2)).tolist(), ops_ns.foo(ones(2), 2.0, n=1).tolist()))
    assert results[0] == results[1] == ([3.5, 3.5], [3.0, 3.0])
    with pytest.raises(ValueError, match="Unsupported kind"):
        ptcore.library.Library(ns, "BAD")


def test_impl_decorator_with_a_library_as_torch():
    """torch.library.impl(lib, "name", "CPU") as a decorator (the older form), and
    torch.library.define(lib, schema)."""
    k = next(_ids)
    results = []
    for mod, lib in ((ptcore.library, ptcore), (torch.library, torch)):
        L = mod.Library(f"ptc_impl{k}", "DEF")
        L.define("twice(Tensor x) -> Tensor")

        @mod.impl(L, "twice", "CPU")
        def twice(x):
            return x * 2

        @mod.define(L, "thrice(Tensor x) -> Tensor")
        def thrice(x):
            return x * 3
        ns = getattr(lib.ops, f"ptc_impl{k}")
        results.append((twice(lib.ones(2)).tolist(), ns.twice(lib.ones(2)).tolist(),
                        ns.thrice.default(lib.ones(2)).tolist(), str(ns.twice.default._schema)))
        del L
    assert results[0] == results[1] == ([2.0, 2.0], [2.0, 2.0], [3.0, 3.0],
                                        f"ptc_impl{k}::twice(Tensor x) -> Tensor")


def test_define_impl_functions_and_autograd():
    q = _name("dfn")
    ptcore.library.define(q, "(Tensor x, Tensor(a!) out) -> ()")

    @ptcore.library.impl(q, "cpu")
    def _(x, out):
        out.copy_(x + 1)
    out = ptcore.zeros(2)
    ns, name = q.split("::")
    getattr(getattr(ptcore.ops, ns), name)(ptcore.ones(2), out)
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0])

    q2 = _name("dgrad")
    ptcore.library.define(q2, "(Tensor x) -> Tensor")
    ptcore.library.impl(q2, "CompositeExplicitAutograd", lambda x: x * x)
    ptcore.library.register_autograd(q2, lambda ctx, g: 2 * g * ctx.saved_tensors[0],
                                     setup_context=lambda ctx, i, o: ctx.save_for_backward(i[0]))
    x = ptcore.tensor([3.0], requires_grad=True)
    getattr(getattr(ptcore.ops, q2.split("::")[0]), q2.split("::")[1])(x).sum().backward()
    assert x.grad.tolist() == [6.0]


@pytest.mark.parametrize("schema", ["foo(Tensor x -> Tensor", "(Tensor x) -> Tensor",
                                    "foo(Tensor) -> Tensor", "foo(Tensor x, int n=[) -> Tensor"])
def test_bad_schemas(schema):
    lib = ptcore.library.Library(f"ptc_bad{next(_ids)}", "FRAGMENT")
    with pytest.raises(ValueError):
        lib.define(schema)


def test_unsupported_dispatch_key_and_impl_library():
    lib = ptcore.library.Library(f"ptc_key{next(_ids)}", "FRAGMENT")
    lib.define("g(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match="dispatch key"):
        lib.impl("g", lambda x: x, "XLA")
    with pytest.raises(RuntimeError, match="cannot define"):
        ptcore.library.Library(lib.ns, "IMPL").define("h(Tensor x) -> Tensor")


def test_custom_ops_keep_the_table_consistent(square_plus):
    from ptcore._dispatch.table import OPS, op_of
    d = OPS[("ops.ptc_layers", "square_plus")]
    assert d is square_plus._opdef is op_of(square_plus._entry)
    assert d.tags == {"custom"} and d.kind == "function" and d.autocast is None
    assert callable(d.raw) and callable(d.body)


# ---------------------------------------------------------------------------
# autograd through Tensor[] inputs and outputs, get_ctx
# ---------------------------------------------------------------------------

def _list_ops(lib):
    """cat-like (Tensor[] in), split-like (Tensor[] out) and (Tensor[], int) ops with
    NumPy kernels and registered derivatives, defined under ``lib``."""
    T = lib.Tensor
    cat_name, split_name, split2_name = _name("cat"), _name("split"), _name("split2")

    def cat(xs: Sequence[T], dim: int) -> T:
        return lib.tensor(np.concatenate([x.detach().numpy() for x in xs], axis=dim))
    cat.__annotations__ = {"xs": Sequence[T], "dim": int, "return": T}
    cat = lib.library.custom_op(cat_name, mutates_args=())(cat)

    def cat_setup(ctx, inputs, output):
        xs, dim = inputs
        ctx.sizes, ctx.dim = [x.shape[dim] for x in xs], dim
    cat.register_autograd(lambda ctx, g: (list(lib.split(g, ctx.sizes, ctx.dim)), None),
                          setup_context=cat_setup)

    def split(x: T, n: int) -> list[T]:
        return [lib.tensor(a) for a in np.array_split(x.detach().numpy(), n)]
    split.__annotations__ = {"x": T, "n": int, "return": list[T]}
    split = lib.library.custom_op(split_name, mutates_args=())(split)
    split.register_autograd(lambda ctx, grads: (lib.cat([g * (k + 1) for k, g in
                                                         enumerate(grads)]), None),
                            setup_context=lambda ctx, inputs, output: None)

    def split2(x: T, n: int) -> tuple[list[T], int]:
        return [lib.tensor(a) for a in np.array_split(x.detach().numpy(), n)], n
    split2.__annotations__ = {"x": T, "n": int, "return": tuple[list[T], int]}
    split2 = lib.library.custom_op(split2_name, mutates_args=())(split2)
    split2.register_autograd(lambda ctx, grads, _: (lib.cat(grads) * 3, None),
                             setup_context=lambda ctx, inputs, output: None)
    return cat, split, split2


def test_custom_op_autograd_through_tensor_lists():
    rng = np.random.default_rng(0)
    a0, b0, x0 = rng.standard_normal((2, 3)), rng.standard_normal((1, 3)), rng.standard_normal(6)
    got = []
    for lib in (ptcore, torch):
        cat, split, split2 = _list_ops(lib)
        a, b = lib.tensor(a0, requires_grad=True), lib.tensor(b0)
        y = cat([a, b], 0)                     # only a requires grad
        assert y.requires_grad and type(y.grad_fn).__name__.startswith("GeneratedBackwardFor")
        (y * lib.arange(9.0).reshape(3, 3)).sum().backward()
        x = lib.tensor(x0, requires_grad=True)
        outs = split(x, 3)
        assert isinstance(outs, list) and all(o.requires_grad for o in outs)
        (outs[0].sum() + 5 * outs[2].sum()).backward()     # outs[1] unused: zeros
        z = lib.tensor(x0, requires_grad=True)
        pieces, n = split2(z, 2)
        assert isinstance(pieces, list) and n == 2
        (pieces[1] ** 2).sum().backward()
        got.append([a.grad.numpy(), b.grad, x.grad.numpy(), z.grad.numpy()])
    np.testing.assert_allclose(got[0][0], got[1][0])
    assert got[0][1] is None and got[1][1] is None
    np.testing.assert_allclose(got[0][2], got[1][2])
    np.testing.assert_allclose(got[0][3], got[1][3])


def test_get_ctx_dynamic_size_in_a_fake_function():
    T = ptcore.Tensor

    def nonzero(x: T) -> T:
        return ptcore.tensor(np.stack(np.nonzero(x.numpy()), axis=1))
    nonzero.__annotations__ = {"x": T, "return": T}
    op = custom_op(_name("nonzero"), mutates_args=())(nonzero)
    seen = []

    @op.register_fake
    def _(x):
        ctx = ptcore.library.get_ctx()
        seen.append(ctx)
        n = ctx.new_dynamic_size()
        return x.new_empty(n, x.dim(), dtype=ptcore.int64)
    assert ptcore.library.get_ctx() is None
    ptcore.library.opcheck(op, (ptcore.tensor([[1.0, 0.0], [0.0, 2.0]]),),
                           test_utils="test_faketensor")
    assert isinstance(seen[0], ptcore.library.FakeImplCtx)
    assert ptcore.library.get_ctx() is None
    with pytest.raises(ValueError, match="min"):
        seen[0].new_dynamic_size(min=-1)
    with pytest.raises(RuntimeError, match="allow_override"):
        ptcore.library.register_fake(op, lambda x: x, allow_override=False)
