"""What running PyTorch-ecosystem libraries on ptcore (tests/as_torch: kornia, PyTorch
Geometric, Captum, diffusers) found missing or different, checked here directly against
torch: each library's need as a small call of its own."""
import importlib

import pytest

import ptcore

torch = pytest.importorskip("torch")


# --- kornia ---

def test_package_is_its_own_attribute():
    """``torch.torch is torch`` (kornia annotates with ``torch.torch.Tensor``)."""
    assert torch.torch is torch
    assert ptcore.torch is ptcore
    assert ptcore.torch.Tensor is ptcore.Tensor


def test_is_fake_and_fake_tensor_mode():
    """``torch._subclasses.fake_tensor.is_fake``: false for real and meta tensors and for
    other objects, true for a fake tensor (tests/test_fake_tensor.py tests the mode)."""
    from torch._subclasses.fake_tensor import is_fake as t_is_fake

    from ptcore._subclasses.fake_tensor import FakeTensor, FakeTensorMode, is_fake
    for L, fn in ((torch, t_is_fake), (ptcore, is_fake)):
        assert fn(L.ones(2)) is False
        assert fn(L.empty(2, device="meta")) is False
        assert fn(3) is False
    assert issubclass(FakeTensor, ptcore.Tensor)
    assert is_fake(FakeTensorMode().from_tensor(ptcore.ones(2)))
    assert importlib.import_module("ptcore._subclasses").FakeTensor is FakeTensor


def test_no_proxy_mode_outside_make_fx():
    from torch.fx.experimental.proxy_tensor import get_proxy_mode as t_get

    from ptcore.fx.experimental.proxy_tensor import get_proxy_mode
    assert t_get() is None and get_proxy_mode() is None


def _transform_flags(L):
    f = L._C._are_functorch_transforms_active
    seen = [f()]
    L.func.grad(lambda x: (seen.append(f()), x.sum())[1])(L.ones(2))
    L.func.vmap(lambda x: (seen.append(f()), x)[1])(L.ones(2))
    L.func.jvp(lambda x: (seen.append(f()), x)[1], (L.ones(2),), (L.ones(2),))
    L.func.vjp(lambda x: (seen.append(f()), x)[1], L.ones(2))
    L.func.jacfwd(lambda x: (seen.append(f()), x)[1])(L.ones(2))
    L.func.vmap(L.func.grad(lambda x: (seen.append(f()), x.sum())[1]))(L.ones(2, 2))
    L.func.functionalize(lambda x: (seen.append(f()), x * 2)[1])(L.ones(2))
    L.func.hessian(lambda x: (seen.append(f()), (x ** 3).sum())[1])(L.ones(2))
    with L.autograd.forward_ad.dual_level():          # no transform: forward AD alone
        seen.append(f())
    L.func.functional_call(L.nn.Linear(2, 2), {}, (L.ones(2),))
    seen.append(f())
    return seen


def test_are_functorch_transforms_active():
    """True inside grad/vmap/jvp/vjp/jacfwd/functionalize/hessian (and nested), false
    outside and under a plain forward-AD dual level, as torch's.  (``linearize`` differs:
    torch's runs the function under make_fx with plain forward AD, ptcore's under jvp.)"""
    assert _transform_flags(ptcore) == _transform_flags(torch)


@pytest.mark.parametrize("args", [(True,), (1.5,), (float("nan"),), ([2],), (False,), (0.0,),
                                  (0j,), ([1, 1],), ([],)])
def test_assert_async(args):
    """``torch._assert_async``: RuntimeError unless the one element is nonzero; several or
    no elements raise as ``bool()`` does; a message replaces torch's."""
    for msg in ((), ("boom",)):
        results = []
        for L in (torch, ptcore):
            try:
                results.append(("ok", L._assert_async(L.tensor(args[0]), *msg)))
            except RuntimeError as e:
                results.append(("RuntimeError", str(e)))
        assert results[0] == results[1]
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        ptcore._assert_async(1)


# --- PyTorch Geometric ---

@pytest.mark.parametrize("name", ["_pin_memory", "_sparse_addmm", "_sparse_mm_reduce_impl"])
def test_aten_packets_libraries_register_handlers_for(name):
    """PyG registers ``__torch_dispatch__`` handlers for these at import: the packets and
    their overloads exist with torch's schemas."""
    t, p = getattr(torch.ops.aten, name), getattr(ptcore.ops.aten, name)
    assert sorted(p.overloads()) == sorted(t.overloads())
    for ov in t.overloads():
        assert str(getattr(p, ov)._schema) == str(getattr(t, ov)._schema)


def test_aten_pin_memory_without_an_accelerator():
    for L in (torch, ptcore):
        with pytest.raises(RuntimeError):
            L.ops.aten._pin_memory(L.ones(2))


def test_aten_sparse_mm_reduce_impl_is_named_when_called():
    with pytest.raises(NotImplementedError, match="_sparse_mm_reduce_impl"):
        ptcore.ops.aten._sparse_mm_reduce_impl(ptcore.ones(2, 2), ptcore.ones(2, 2), "sum")


@pytest.mark.parametrize("make", [lambda L: L.tensor([[1.0, 2.5], [3.0, 4.0]]),
                                  lambda L: L.tensor([[1, 2], [3, 40]]),
                                  lambda L: L.arange(2000.0).reshape(2, 1000),
                                  lambda L: L.tensor([True, False]),
                                  lambda L: L.tensor(3.25),
                                  lambda L: L.tensor([]),
                                  lambda L: L.tensor([1e-8, 1.0, 1e8])])
@pytest.mark.parametrize("indent", [0, 4])
def test_tensor_str_body(make, indent):
    """``torch._tensor_str._tensor_str(t, indent)``: the values part of the repr (PyG's OFF
    writer prints with it)."""
    from torch._tensor_str import _tensor_str as t_str

    from ptcore._tensor_str import _tensor_str
    assert _tensor_str(make(ptcore), indent) == t_str(make(torch), indent)


def test_distributed_rpc_is_absent_as_on_a_build_without_it():
    """``torch.distributed.rpc`` imports (PyG imports it at module level) and says it is not
    available; nothing of RPC's API is there (PyG checks ``hasattr(rpc, "api")``)."""
    import ptcore.distributed.rpc as rpc
    assert rpc.is_available() is False
    assert not hasattr(rpc, "api") and not hasattr(rpc, "init_rpc")
    assert hasattr(torch.distributed.rpc, "is_available")


# --- Captum ---

def test_future_is_generic_and_a_root_name():
    """``Future[Tensor]`` in annotations (Captum) and ``torch.Future`` for isinstance checks."""
    import typing

    import ptcore.futures
    for L in (torch, ptcore):
        alias = L.futures.Future[L.Tensor]
        assert typing.get_args(alias) == (L.Tensor,)
        assert typing.get_origin(alias) is L.futures.Future
        fut = L.futures.Future()
        assert isinstance(fut, L.Future)
        fut.set_result(3)
        assert fut.wait() == 3


# --- diffusers (accelerate's init_empty_weights) ---

def test_parameter_dict_holds_only_what_user_code_set():
    """A leaf's gradient accumulator is no instance attribute: after backward, ``.to()``
    and an attribute set by user code, ``p.__dict__`` is what torch's is, so
    ``Parameter(p.to(device), **p.__dict__)`` (accelerate) works."""
    dicts = []
    for L in (torch, ptcore):
        p = L.nn.Parameter(L.ones(2))
        (p * 2).sum().backward()
        q = p.to(L.float64)
        q.sum().backward()
        before = dict(p.__dict__)
        p.tag = "x"
        kwargs = dict(p.__dict__)
        kwargs.pop("tag")
        again = type(p)(p.to("meta"), **kwargs)
        dicts.append((before, dict(p.__dict__), p.grad.tolist(), again.device.type))
    assert dicts[0] == dicts[1] == ({}, {"tag": "x"}, [3.0, 3.0], "meta")


# --- PyTorch Geometric's to_hetero: a tracer written against torch.fx's module internals ---

def _subclassed_trace(L, module):
    """A Tracer whose ``trace`` is rebuilt from ``torch.fx._symbolic_trace``'s module-level
    names, as PyG's ``torch_geometric.nn.fx`` does."""
    st = importlib.import_module(f"{L.__name__}.fx._symbolic_trace")

    class Tracer(L.fx.Tracer):
        @st.compatibility(is_backward_compatible=True)
        def trace(self, root, concrete_args=None):
            self.root = root
            fn = type(root).forward
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            self.graph = L.fx.Graph(tracer_cls=type(self))
            self.tensor_attrs = {}
            for k, v in root.__dict__.items():
                if isinstance(v, (L.Tensor, st.ScriptObject)):
                    self.tensor_attrs[v] = k
            assert isinstance(fn, st.FunctionType)
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, True, concrete_args)
            cache = {}

            @st.functools.wraps(st._orig_module_getattr)
            def module_getattr_wrapper(mod, attr):
                return self.getattr(attr, st._orig_module_getattr(mod, attr), cache)

            @st.functools.wraps(st._orig_module_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return st._orig_module_call(mod, *args, **kwargs)
                return self.call_module(mod, forward, args, kwargs)

            with st._Patcher() as patcher:
                patcher.patch_method(L.nn.Module, "__getattr__", module_getattr_wrapper,
                                     deduplicate=False)
                patcher.patch_method(L.nn.Module, "__call__", module_call_wrapper,
                                     deduplicate=False)
                st._patch_wrapped_functions(patcher)
                st._autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {})
            self.submodule_paths = None
            return self.graph

    assert "guaranteed" in Tracer.trace.__doc__
    return L.fx.GraphModule(module, Tracer().trace(module))


def test_tracer_subclass_built_from_symbolic_trace_internals():
    import numpy as np
    graphs = []
    for L in (torch, ptcore):
        class Net(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Linear(3, 4)
                self.b = L.nn.Linear(4, 2)

            def forward(self, x):
                return self.b(self.a(x).relu()) * 2

        net = Net()
        with L.no_grad():
            for i, p in enumerate(net.parameters()):
                p.copy_(L.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1))
        gm = _subclassed_trace(L, net)
        x = L.tensor([[0.5, -1.0, 2.0]])
        graphs.append(([(n.op, str(n.target)) for n in gm.graph.nodes],
                       gm(x).detach().numpy(), net(x).detach().numpy()))
    (t_nodes, t_out, t_ref), (p_nodes, p_out, p_ref) = graphs
    assert p_nodes == t_nodes
    np.testing.assert_allclose(p_out, t_out, rtol=1e-6)
    np.testing.assert_allclose(p_out, p_ref, rtol=1e-6)


def test_fx_compatibility_decorator_as_torch():
    from torch.fx._compatibility import compatibility as t_compat

    from ptcore.fx._compatibility import compatibility
    for flag in (True, False):
        docs = []
        for deco in (t_compat, compatibility):
            def f():
                """Summary."""
            docs.append(deco(is_backward_compatible=flag)(f).__doc__)
        assert docs[0] == docs[1]


# --- torchmetrics ---

def test_parameter_repr_when_the_root_module_is_named_torch(monkeypatch):
    """Under ``ptcore.as_torch`` ptcore's ``__name__`` is "torch" and ``torch.nn`` need not be
    in sys.modules (TorchMetrics' test suite prints scripted parameters): a Parameter still
    prints as torch's, ``Parameter containing:`` then ``tensor(...)``."""
    import ptcore.nn  # noqa: F401  (loaded as ptcore.nn only, as the launcher leaves it)
    monkeypatch.setattr(ptcore, "__name__", "torch")
    got = repr(ptcore.nn.Parameter(ptcore.tensor([1.0, -2.0])))
    monkeypatch.undo()
    assert got == repr(torch.nn.Parameter(torch.tensor([1.0, -2.0])))
