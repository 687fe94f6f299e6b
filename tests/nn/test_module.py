"""nn.Module and nn.Parameter: registration, iteration, state_dict, hooks, conversions, repr."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _build(lib):
    """The same nested model in ptcore or torch."""
    return _classes(lib)[1]()


def _classes(lib):
    n = lib.nn

    class Block(n.Module):
        def __init__(self):
            super().__init__()
            self.fc = n.Linear(4, 3)
            self.act = n.ReLU()
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.scale = n.Parameter(lib.ones(1))

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(n.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.seq = n.Sequential(n.Linear(3, 5), n.Tanh(), n.Linear(5, 2, bias=False))
            self.heads = n.ModuleList([n.Linear(2, 2) for _ in range(2)])
            self.table = n.ModuleDict({"b": n.Identity(), "a": n.Sigmoid()})

        def forward(self, x):
            y = self.seq(self.block(x))
            for h in self.heads:
                y = h(y)
            return self.table["a"](y)

    return Block, Net


PBlock, PNet = _classes(ptcore)
PBlock.__qualname__ = "PBlock"
PNet.__qualname__ = "PNet"


def _copy_params(src_torch, dst):
    sd = {k: ptcore.from_numpy(v.detach().numpy().copy()) for k, v in src_torch.state_dict().items()}
    dst.load_state_dict(sd)


@needs_torch
def test_state_dict_keys_and_repr_match_torch():
    torch.manual_seed(0)
    tm = _build(torch)
    pm = _build(ptcore)
    assert list(pm.state_dict().keys()) == list(tm.state_dict().keys())
    assert [k for k, _ in pm.named_parameters()] == [k for k, _ in tm.named_parameters()]
    assert [k for k, _ in pm.named_buffers()] == [k for k, _ in tm.named_buffers()]
    assert [k for k, _ in pm.named_modules()] == [k for k, _ in tm.named_modules()]
    assert [k for k, _ in pm.named_children()] == [k for k, _ in tm.named_children()]
    assert repr(pm) == repr(tm)


@needs_torch
def test_forward_matches_torch_with_copied_weights():
    torch.manual_seed(0)
    tm = _build(torch)
    pm = _build(ptcore)
    _copy_params(tm, pm)
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    want = tm(torch.from_numpy(x)).detach().numpy()
    got = pm(ptcore.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_state_dict_detached_and_keep_vars():
    m = nn.Linear(2, 3)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert not isinstance(sd["weight"], nn.Parameter)
    assert not sd["weight"].requires_grad
    # shares storage
    sd["weight"][0, 0] = 42.0
    assert float(m.weight[0, 0]) == 42.0
    sd2 = m.state_dict(keep_vars=True)
    assert sd2["weight"] is m.weight
    assert sd._metadata[""] == {"version": 1}


def test_load_state_dict_strict_errors_match_torch_format():
    m = nn.Sequential(nn.Linear(2, 3))
    sd = m.state_dict()
    sd["extra"] = ptcore.zeros(1)
    del sd["0.bias"]
    with pytest.raises(RuntimeError) as ei:
        m.load_state_dict(sd)
    msg = str(ei.value)
    assert msg.startswith("Error(s) in loading state_dict for Sequential:\n\t")
    assert 'Missing key(s) in state_dict: "0.bias". ' in msg
    assert 'Unexpected key(s) in state_dict: "extra". ' in msg
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["0.bias"]
    assert res.unexpected_keys == ["extra"]
    assert repr(m.load_state_dict(m.state_dict())) == "<All keys matched successfully>"


@needs_torch
def test_load_state_dict_size_mismatch_message_like_torch():
    tm = torch.nn.Linear(2, 3)
    pm = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as te:
        tm.load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(3)})
    with pytest.raises(RuntimeError) as pe:
        pm.load_state_dict({"weight": ptcore.zeros(3, 3), "bias": ptcore.zeros(3)})
    assert str(pe.value).replace("ptcore", "torch") == str(te.value)


def test_load_state_dict_copies_in_place_and_assign():
    m = nn.Linear(2, 2)
    w = m.weight
    new = ptcore.arange(4.0).view(2, 2)
    m.load_state_dict({"weight": new, "bias": ptcore.zeros(2)})
    assert m.weight is w
    np.testing.assert_array_equal(m.weight.detach().numpy(), new.numpy())
    m.load_state_dict({"weight": new, "bias": ptcore.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter)
    assert m.weight is not w
    assert m.weight.requires_grad
    assert m.weight.data_ptr() == new.data_ptr()


def test_load_state_dict_type_error():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        nn.Linear(1, 1).load_state_dict([1, 2])


def test_load_state_dict_scalar_from_one_element():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.s = nn.Parameter(ptcore.tensor(1.0))

    m = M()
    m.load_state_dict({"s": ptcore.tensor([5.0])})
    assert float(m.s) == 5.0


def test_non_persistent_buffer_excluded_from_state_dict():
    m = nn.Module()
    m.register_buffer("a", ptcore.zeros(1))
    m.register_buffer("b", ptcore.zeros(1), persistent=False)
    m.register_buffer("c", None)
    assert list(m.state_dict()) == ["a"]
    assert [k for k, _ in m.named_buffers()] == ["a", "b"]
    m.b = ptcore.ones(2)
    assert "b" in m._buffers and "b" in m._non_persistent_buffers_set


def test_buffer_class_registers():
    m = nn.Module()
    m.x = nn.Buffer(ptcore.ones(2), persistent=False)
    assert "x" in m._buffers and "x" in m._non_persistent_buffers_set
    m.y = nn.Buffer(ptcore.ones(2))
    assert list(m.state_dict()) == ["y"]


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", ptcore.zeros(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="cannot assign 'ptcore.FloatTensor' object to parameter 'w'"):
        m.register_parameter("w", ptcore.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    m.foo = 1
    with pytest.raises(KeyError, match="attribute 'foo' already exists"):
        m.register_buffer("foo", ptcore.zeros(1))
    m.w = nn.Parameter(ptcore.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'ptcore.FloatTensor' as parameter 'w'"):
        m.w = ptcore.zeros(1)
    m.w = None
    assert m.w is None and "w" in m._parameters

    class Early(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(ptcore.zeros(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()


def test_setattr_routing_and_delattr():
    m = nn.Module()
    m.a = nn.Linear(1, 1)
    m.a = nn.Parameter(ptcore.zeros(1))  # a Parameter replaces the module
    assert "a" in m._parameters and "a" not in m._modules
    with pytest.raises(TypeError, match="as parameter 'a'"):
        m.a = nn.Linear(1, 1)
    m.a = None
    del m.a
    m.a = nn.Linear(1, 1)
    m.register_buffer("b", ptcore.zeros(1))
    m.b = ptcore.ones(1)
    assert float(m._buffers["b"][0]) == 1.0
    m.c = 5
    assert m.__dict__["c"] == 5
    del m.a
    del m.b
    del m.c
    assert not m._modules and not m._buffers and "c" not in m.__dict__
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'zzz'"):
        m.zzz


def test_shared_parameters_deduplicated():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert [k for k, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert [k for k, _ in seq.named_modules()] == ["", "0", "1"]
    assert [k for k, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    # a parameter shared between two different modules
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight
    both = nn.ModuleList([a, b])
    assert [k for k, _ in both.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    # state_dict keeps both keys (as torch)
    assert list(both.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


@needs_torch
def test_dedup_matches_torch():
    def make(lib):
        n = lib.nn
        a, b = n.Linear(2, 2), n.Linear(2, 2)
        b.weight = a.weight
        return n.Sequential(a, b, a)

    t, p = make(torch), make(ptcore)
    for kw in ({}, {"remove_duplicate": False}):
        assert [k for k, _ in p.named_parameters(**kw)] == [k for k, _ in t.named_parameters(**kw)]
        assert [k for k, _ in p.named_modules(**kw)] == [k for k, _ in t.named_modules(**kw)]
    assert list(p.state_dict()) == list(t.state_dict())


def test_get_submodule_parameter_buffer():
    m = _build(ptcore)
    assert m.get_submodule("block.fc") is m.block.fc
    assert m.get_submodule("") is m
    assert m.get_parameter("seq.0.weight") is m.seq[0].weight
    assert m.get_buffer("block.running") is m.block.running
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        m.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Module"):
        m.get_submodule("block.scale")
    with pytest.raises(AttributeError, match="`running` is not an nn.Parameter"):
        m.get_parameter("block.running")
    with pytest.raises(AttributeError, match="`scale` is not a buffer"):
        m.get_buffer("block.scale")
    new = nn.Linear(4, 3)
    m.set_submodule("block.fc", new)
    assert m.block.fc is new


def test_apply_train_eval_requires_grad_zero_grad():
    m = _build(ptcore)
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Net" and seen[0] == "Linear"
    assert m.eval() is m
    assert all(not mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    for p in m.parameters():
        p.grad = ptcore.ones_like(p)
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_to_keeps_parameter_identity_and_casts_floats_only():
    m = nn.Module()
    m.w = nn.Parameter(ptcore.randn(2, 2))
    m.register_buffer("steps", ptcore.zeros(2, dtype=ptcore.int64))
    m.w.grad = ptcore.ones(2, 2)
    w = m.w
    m.to(ptcore.float64)
    assert m.w is w and isinstance(m.w, nn.Parameter)
    assert m.w.dtype is ptcore.float64 and m.w.requires_grad
    assert m.w.grad.dtype is ptcore.float64
    assert m.steps.dtype is ptcore.int64
    m.float()
    assert m.w.dtype is ptcore.float32
    m.half()
    assert m.w.dtype is ptcore.float16
    m.bfloat16()
    assert m.w.dtype is ptcore.bfloat16
    m.double()
    assert m.w.dtype is ptcore.float64
    m.type(ptcore.float32)
    assert m.w.dtype is ptcore.float32
    m.to("cpu")
    m.cpu()
    assert m.w is w
    m.to(ptcore.zeros(1, dtype=ptcore.float64))
    assert m.w.dtype is ptcore.float64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        m.to(ptcore.int32)


def test_forward_hooks_order_kwargs_and_removal():
    calls = []

    class M(nn.Module):
        def forward(self, x, scale=1.0):
            calls.append(("forward", x, scale))
            return x * scale

    m = M()
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
    h2 = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    h0 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
    h3 = m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 10.0}),
                                     with_kwargs=True)
    h4 = m.register_forward_hook(lambda mod, args, out: out + 100)
    h5 = m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(("post", kwargs)),
                                 with_kwargs=True)
    out = m(1.0)
    assert calls[0] == "pre0" and calls[1] == "pre1"
    assert calls[2] == ("forward", 2.0, 10.0)
    assert calls[3] == ("post", {"scale": 10.0})
    assert out == 120.0
    for h in (h0, h1, h2, h3, h4, h5):
        h.remove()
    h5.remove()  # removing twice is a no-op
    calls.clear()
    assert m(1.0) == 1.0
    assert not m._forward_hooks and not m._forward_pre_hooks
    assert not m._forward_hooks_with_kwargs and not m._forward_pre_hooks_with_kwargs


def test_forward_hook_always_call_and_bad_pre_hook():
    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Bad()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert seen == [None]
    m2 = nn.Identity()
    m2.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m2(1)


@needs_torch
def test_hook_order_matches_torch():
    def run(lib):
        log = []
        seq = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Identity())
        for name, mod in seq.named_modules():
            mod.register_forward_pre_hook(lambda m, a, name=name: log.append("pre:" + name))
            mod.register_forward_hook(lambda m, a, o, name=name: log.append("post:" + name))
        seq(lib.zeros(1))
        return log

    assert run(ptcore) == run(torch)


def test_missing_forward():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def test_init_rejects_args():
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        nn.Module(foo=1)


def test_state_dict_hooks_and_extra_state():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 1)
            self.v = 3

        def get_extra_state(self):
            return {"v": self.v}

        def set_extra_state(self, state):
            self.v = state["v"]

    m = M()
    sd = m.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"]
    sd["_extra_state"] = {"v": 7}
    m.load_state_dict(sd)
    assert m.v == 7
    pre, post = [], []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: pre.append(prefix))
    m.register_load_state_dict_post_hook(lambda mod, keys: post.append(tuple(keys.missing_keys)))
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: post.append("pre"))
    m.load_state_dict(m.state_dict())
    assert pre == [""]
    assert post == ["pre", ()]


def test_load_state_dict_custom_load_from_state_dict_override():
    class Legacy(nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, *args):
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, *args)

    m = nn.Sequential(Legacy(2, 2))
    m.load_state_dict({"0.w": ptcore.ones(2, 2), "0.bias": ptcore.zeros(2)})
    assert float(m[0].weight.sum()) == 4.0


def test_pickle_and_deepcopy_module():
    m = PNet()
    m.block.fc.weight.grad = ptcore.ones(3, 4)
    m2 = copy.deepcopy(m)
    for (k1, p1), (k2, p2) in zip(m.named_parameters(), m2.named_parameters()):
        assert k1 == k2 and p1 is not p2 and isinstance(p2, nn.Parameter)
        np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())
    m3 = pickle.loads(pickle.dumps(m))
    assert repr(m3) == repr(m)
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), m3.state_dict()[k].numpy())
    x = ptcore.randn(2, 4)
    np.testing.assert_allclose(m(x).detach().numpy(), m3(x).detach().numpy())


def test_deepcopy_keeps_sharing():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, a)
    c = copy.deepcopy(seq)
    assert c[0] is c[1] and c[0] is not a


def test_dir_and_extra_repr():
    m = _build(ptcore)
    d = dir(m)
    assert "block" in d and "forward" in d and "state_dict" in d
    assert "0" not in dir(m.seq)
    assert nn.Module().extra_repr() == ""


def test_share_memory_returns_self():
    m = nn.Linear(2, 2)
    assert m.share_memory() is m


# -- Parameter -----------------------------------------------------------------------


def test_parameter_basics():
    t = ptcore.randn(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, nn.Parameter) and isinstance(p, ptcore.Tensor)
    assert p.requires_grad and p.is_leaf
    assert p.data_ptr() == t.data_ptr()
    p.data[0, 0] = 9.0
    assert float(t[0, 0]) == 9.0
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    e = nn.Parameter()
    assert e.shape == (0,) and e.requires_grad
    assert type(p + 1) is ptcore.Tensor
    with pytest.raises(RuntimeError, match="floating point and complex"):
        nn.Parameter(ptcore.zeros(2, dtype=ptcore.int64))
    assert not nn.Parameter(ptcore.zeros(2, dtype=ptcore.int64), requires_grad=False).requires_grad


@needs_torch
def test_parameter_repr_matches_torch():
    p = nn.Parameter(ptcore.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tp = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert repr(p) == repr(tp)
    assert repr(nn.Parameter(ptcore.tensor([1.5]), requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.tensor([1.5]), requires_grad=False))


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(ptcore.randn(3))
    p.custom = "x"
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad
    assert q.data_ptr() != p.data_ptr()
    np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.requires_grad and r.custom == "x"
    np.testing.assert_array_equal(r.detach().numpy(), p.detach().numpy())
    s = pickle.loads(pickle.dumps(nn.Parameter(ptcore.ones(2), requires_grad=False)))
    assert not s.requires_grad


def _parameter_subclass_story(L):
    """A Parameter subclass with its own ``__new__`` taking extra arguments
    (bitsandbytes' ``Params4bit``), through ops, a module, deepcopy and pickle."""
    class Tagged(L.nn.Parameter):
        def __new__(cls, data=None, requires_grad=True, tag=None):
            p = super().__new__(cls, data, requires_grad)
            p.tag = tag
            return p

    class InitOnly(L.nn.Parameter):      # extra arguments need a __new__ (torch's TypeError)
        def __init__(self, data, requires_grad=True, tag=None):
            self.tag = tag

    p = Tagged(L.ones(2), tag="x")
    out = [type(p).__name__, p.tag, p.requires_grad, p.is_leaf, isinstance(p, L.nn.Parameter),
           type(p + 1).__name__, type(p * p).__name__,
           Tagged(L.ones(1), False).requires_grad]
    m = L.nn.Linear(2, 2)
    m.weight = Tagged(L.ones(2, 2), tag="w")
    out.append([type(q).__name__ for q in m.parameters()])
    (m(L.ones(1, 2))).sum().backward()
    out.append(m.weight.grad.tolist())
    q = copy.deepcopy(p)
    out.append((type(q).__name__, getattr(q, "tag", "NA"), q.tolist()))
    r = pickle.loads(pickle.dumps(p))
    out.append((type(r).__name__, r.tag))
    out.append(type(copy.copy(p)).__name__)
    try:
        InitOnly(L.ones(2), tag="y")
        out.append("no error")
    except TypeError:
        out.append("TypeError")
    e = L.nn.Parameter()
    out.append((type(e).__name__, tuple(e.shape)))
    return out


@needs_torch
def test_parameter_subclass_with_own_new():
    assert _parameter_subclass_story(ptcore) == _parameter_subclass_story(torch)


def test_buffer_and_uninitialized():
    b = nn.Buffer(ptcore.ones(2))
    assert type(b) is ptcore.Tensor and isinstance(b, nn.Buffer) and b.persistent
    assert not isinstance(ptcore.ones(2), nn.Buffer)
    u = nn.UninitializedParameter()
    assert repr(u) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        u.shape
    u.materialize((2, 3))
    assert type(u) is nn.Parameter and tuple(u.shape) == (2, 3) and u.requires_grad


@needs_torch
def test_module_class_surface_matches_torch():
    """Every public and private name of torch.nn.Module is on ptcore's Module
    (apart from torch's annotations).  torch's names are read in a fresh
    process: libraries that other tests run on torch add their own to its
    Module class (transformers' ``smart_apply``, torch._dynamo's generation tag)."""
    import subprocess
    import sys
    out = subprocess.run(
        [sys.executable, "-c", "import torch; print('\\n'.join(dir(torch.nn.Module)))"],
        capture_output=True, text=True, timeout=300, check=True).stdout
    missing = set(out.split()) - set(dir(nn.Module))
    assert missing <= {"__annotations__"}, sorted(missing)
    assert nn.Module.T_destination.__bound__ == torch.nn.Module.T_destination.__bound__


@needs_torch
@pytest.mark.parametrize("name", ["xpu", "mtia", "ipu"])
def test_absent_device_moves(name):
    """Module.xpu/mtia/ipu: a module without tensors returns itself; one with
    tensors raises what Tensor.<name>() raises, as in torch without that device."""
    for lib in (torch, ptcore):
        m = lib.nn.ReLU()
        assert getattr(m, name)() is m
    errors = []
    for lib in (torch, ptcore):
        with pytest.raises((AssertionError, RuntimeError)) as info:
            getattr(lib.nn.Linear(2, 2), name)()
        errors.append((info.type, str(info.value).split(".")[0].split(" support")[0]))
    assert errors[0][0] is errors[1][0]
    assert errors[0][1].replace("PyTorch", "ptcore") == errors[1][1]


def test_wrapped_call_impl_and_slow_forward():
    m = nn.Linear(3, 2)
    x = ptcore.randn(4, 3)
    expected = m(x).detach().numpy()
    np.testing.assert_array_equal(m._wrapped_call_impl(x).detach().numpy(), expected)
    np.testing.assert_array_equal(m._slow_forward(x).detach().numpy(), expected)
    calls = []
    m._compiled_call_impl = lambda *a: calls.append(a) or "compiled"
    assert m._wrapped_call_impl(x) == "compiled" and len(calls) == 1


@needs_torch
def test_global_registration_hooks_match_torch():
    """register_module_{buffer,module,parameter}_registration_hook: called by
    register_buffer/register_parameter/add_module and attribute assignment (not
    for a None parameter), a returned value replaces the registered one, and
    the handle removes the hook."""
    logs = []
    for lib in (torch, ptcore):
        mm = lib.nn.modules.module
        log = []

        def on_buffer(m, name, t):
            log.append(("buffer", type(m).__name__, name, None if t is None else t.tolist()))
            return None if t is None else t * 2

        def on_param(m, name, p):
            log.append(("param", type(m).__name__, name, tuple(p.shape)))

        def on_module(m, name, sub):
            log.append(("module", type(m).__name__, name, type(sub).__name__))
            return lib.nn.Tanh() if isinstance(sub, lib.nn.ReLU) else None

        handles = [mm.register_module_buffer_registration_hook(on_buffer),
                   mm.register_module_parameter_registration_hook(on_param),
                   mm.register_module_module_registration_hook(on_module)]
        try:
            seq = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
            seq.register_buffer("b", lib.ones(2))
            seq.b = lib.ones(1)
            seq.register_buffer("n", None)
            seq.register_parameter("p", None)
            seq.q = lib.nn.Parameter(lib.zeros(4))
            seq.add_module("extra", None)
            seq.extra = lib.nn.ReLU()
            log.append(repr(seq))
            log.append(seq.b.tolist())
            bn = lib.nn.BatchNorm1d(2)
            log.append(sorted(k for k, _ in bn.named_buffers()))
        finally:
            for h in handles:
                h.remove()
        seq.add_module("after", lib.nn.ReLU())
        log.append(type(seq.after).__name__)
        logs.append(log)
    assert logs[1] == logs[0]


@needs_torch
def test_module_files_export_what_custom_layers_import():
    """Names that layers written against torch import from torch.nn's module
    files (torch.nn.modules.conv._pair, ...activation.NonDynamicallyQuantizableLinear,
    nn.utils.clip_grad._get_total_norm) resolve in ptcore too."""
    import importlib
    names = [("nn.modules.conv", "_single"), ("nn.modules.conv", "_pair"),
             ("nn.modules.conv", "_triple"), ("nn.modules.conv", "_ConvNd"),
             ("nn.modules.pooling", "_pair"), ("nn.modules.pooling", "_triple"),
             ("nn.modules.activation", "NonDynamicallyQuantizableLinear"),
             ("nn.utils.clip_grad", "_get_total_norm"),
             ("nn.utils.clip_grad", "_clip_grads_with_norm_")]
    for lib in (torch, ptcore):
        # the layers' helper module is not what lib.nn.utils names
        assert lib.nn.utils.__name__ == f"{lib.__name__}.nn.utils"
        assert lib.nn.modules.utils.__name__ == f"{lib.__name__}.nn.modules.utils"
        got = {(m, n): getattr(importlib.import_module(f"{lib.__name__}.{m}"), n)
               for m, n in names}
        assert got["nn.modules.conv", "_pair"](3) == (3, 3)
        assert got["nn.modules.pooling", "_triple"]((1, 2, 3)) == (1, 2, 3)
        mha = lib.nn.MultiheadAttention(4, 2)
        assert type(mha.out_proj) is got["nn.modules.activation",
                                         "NonDynamicallyQuantizableLinear"]
        g = [lib.ones(2, 2), lib.full((3,), 2.0)]
        assert float(got["nn.utils.clip_grad", "_get_total_norm"](g)) == pytest.approx(4.0)
        ps = [lib.nn.Parameter(lib.zeros(2)) for _ in range(2)]
        for p in ps:
            p.grad = lib.full((2,), 3.0)
        got["nn.utils.clip_grad", "_clip_grads_with_norm_"](ps, 1.0, lib.tensor(6.0))
        assert ps[0].grad.tolist() == pytest.approx([0.5, 0.5], rel=1e-5)
