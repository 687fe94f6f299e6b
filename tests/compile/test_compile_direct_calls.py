"""ptcore.compile's BatchedProduct steps (ptcore._inductor.direct_calls): a matmul of
two CPU float32/float64 tensors with equal batch sizes calls the product kernel matmul
ends in.  The step is compared bit for bit with ptcore.matmul (transposed and permuted
operands), its fallbacks (broadcast batches, other dtypes, mismatched shapes, a recorded
product) with matmul's results, errors and history, and a compiled attention block's
generated forward and backward are checked to call it instead of matmul, with values and
gradients against eager and torch.  The generated functions' unlayered form (the ops'
bodies called directly while no dispatch layer and no grad mode is on): its forms of
entries, the layered form taken under a dispatch mode and create_graph, and the opaque
calls (recording under enable_grad) keeping their entries."""
import re

import numpy as np
import pytest

import ptcore
from ptcore._dispatch.table import _BY_ENTRY
from ptcore._inductor.direct_calls import _forwarded, _through, batched_product, unlayered
from ptcore.utils._python_dispatch import TorchDispatchMode

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batched_product_equals_matmul_bits(dtype):
    rng = np.random.default_rng(0)
    q = ptcore.from_numpy(rng.standard_normal((2, 5, 3, 8)).astype(dtype)).transpose(1, 2)
    k = ptcore.from_numpy(rng.standard_normal((2, 5, 3, 8)).astype(dtype)).transpose(1, 2)
    pairs = [(q, k.transpose(-2, -1)), (q.transpose(-2, -1), k),
             (q.contiguous(), k.transpose(-2, -1).contiguous()),
             (q[:, :, :4], k[:, :, :4].transpose(-2, -1))]
    for a, b in pairs:
        got, want = batched_product(a, b), ptcore.matmul(a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert ptcore.equal(got, want)
    qt = torch.from_numpy(q.numpy().copy())
    kt = torch.from_numpy(k.numpy().copy())
    np.testing.assert_allclose(batched_product(q, k.transpose(-2, -1)).numpy(),
                               (qt @ kt.transpose(-2, -1)).numpy(), rtol=1e-5, atol=1e-5)


def test_batched_product_falls_back_to_matmul():
    a = ptcore.randn(1, 3, 4, 5)
    b = ptcore.randn(2, 3, 5, 6)
    assert ptcore.equal(batched_product(a, b), ptcore.matmul(a, b))       # broadcast batch
    ai = ptcore.arange(24).view(2, 3, 4)
    bi = ptcore.arange(24).view(2, 4, 3)
    assert ptcore.equal(batched_product(ai, bi), ptcore.matmul(ai, bi))   # integers
    with pytest.raises(RuntimeError) as e:
        ptcore.matmul(a, a)
    with pytest.raises(type(e.value)):
        batched_product(a, a)
    with pytest.raises(RuntimeError):
        batched_product(ptcore.randn(2, 3, 4), ptcore.randn(2, 3, 4, dtype=ptcore.float64))
    x = ptcore.randn(2, 3, 4, requires_grad=True)
    y = ptcore.randn(2, 4, 3)
    r = batched_product(x, y)           # recorded: matmul's history
    assert r.grad_fn is not None
    r.sum().backward()
    want = ptcore.ones(2, 3, 3).matmul(y.transpose(1, 2))
    np.testing.assert_allclose(x.grad.numpy(), want.numpy(), rtol=1e-6)


def _calls(src, name):
    return len(re.findall(rf"= {name}_\d+\(", src))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_attention_calls_the_product_kernel(dtype):
    rng = np.random.default_rng(5)
    qa, ka, va = (rng.standard_normal((2, 3, 6, 4)).astype(dtype) for _ in range(3))
    ga = rng.standard_normal((2, 3, 6, 4)).astype(dtype)

    def attn(lib, q, k, v):
        s = (q @ k.transpose(-2, -1)) * 0.5
        return lib.softmax(s, -1) @ v
    cf = ptcore.compile(lambda q, k, v: attn(ptcore, q, k, v))
    for _ in range(2):
        pc = [ptcore.from_numpy(a.copy()).requires_grad_(True) for a in (qa, ka, va)]
        pe = [ptcore.from_numpy(a.copy()).requires_grad_(True) for a in (qa, ka, va)]
        yc, ye = cf(*pc), attn(ptcore, *pe)
        yc.backward(ptcore.from_numpy(ga))
        ye.backward(ptcore.from_numpy(ga))
        assert ptcore.equal(yc.detach(), ye.detach())
        for a, b in zip(pc, pe):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-7)
    pt = [torch.from_numpy(a.copy()).requires_grad_(True) for a in (qa, ka, va)]
    attn(torch, *pt).backward(torch.from_numpy(ga))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(pc, pt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    seg = cf.entries[0].program.segments[0]
    fwd, bwd = seg.backward.fwd_code.source, seg.backward.bwd_code.source
    assert _calls(fwd, "batched_product") == 2 and "matmul" not in fwd
    assert _calls(bwd, "batched_product") == 4 and "matmul" not in bwd


def test_unlayered_forms_of_entries():
    """An op's entry stands for its body; a plain recording body for the
    function it records (``raw``); anything else and NumPy-aliased keywords
    keep the entry."""
    entry = ptcore.mm
    opdef = _BY_ENTRY[entry]
    got = unlayered(entry)
    assert got is not None and got is not entry
    assert got in (opdef.body, getattr(opdef.body, "__wrapped__", None))
    a, b = ptcore.randn(3, 4), ptcore.randn(4, 2)
    with ptcore.no_grad():
        assert ptcore.equal(got(a, b), ptcore.mm(a, b))
    assert unlayered(lambda x: x) is None
    assert unlayered(ptcore.sum, ("axis",)) is None          # (the entry renames it to dim)
    assert unlayered(ptcore.sum, ("dim",)) is not None
    # a method form that only passes its arguments on: what its function's entry calls
    assert unlayered(ptcore.Tensor.mm) is unlayered(ptcore.mm)
    assert unlayered(ptcore.Tensor.addmm) is unlayered(ptcore.addmm)


mm = ptcore.mm          # (the global the forwarders below call)


def _passes_on(self, mat2, *, out=None):
    return mm(self, mat2, out=out)


def _other_default(self, mat2, *, out=1):
    return mm(self, mat2, out=out)


def _changes_an_argument(self, mat2, *, out=None):
    return mm(self, mat2.t(), out=out)


def _positional_default(self, mat2=None):
    return mm(self, mat2)


def test_only_pure_forwarders_are_looked_through():
    assert _forwarded(_passes_on) == (ptcore.mm, ("out",))
    assert _through(_passes_on) is unlayered(ptcore.mm)
    assert _forwarded(_other_default) is not None
    assert _through(_other_default) is _other_default        # (another default value)
    assert _forwarded(_changes_an_argument) is None
    assert _forwarded(_positional_default) is None
    assert _forwarded(lambda a, b: ptcore.mm(a, b)) is None   # (an attribute, not a global)


class _Mlp(ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = ptcore.nn.Linear(5, 7)
        self.b = ptcore.nn.Linear(7, 3)

    def forward(self, x):
        return self.b(self.a(x).relu()).sum(dim=0)


def test_generated_segment_runs_layered_while_a_layer_is_on():
    """A training segment's forward and backward call the ops' bodies directly
    while no layer is on and grad mode is off, their entries otherwise: a
    dispatch mode sees the segment's ops, a backward under create_graph
    records them, and the values are the same either way."""
    ptcore.manual_seed(0)
    m = _Mlp()
    cm = ptcore.compile(m)
    x = ptcore.randn(4, 5)
    for _ in range(2):
        cm(x).sum().backward()
    ts = cm.dynamo_ctx.entries[0].program.root.fn
    assert "_layered" in ts.forward.__globals__ and "_layered" in ts.backward.__globals__
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))
    ins = [x] + list(ts.free)
    with ptcore.no_grad():
        direct = ts.forward(*ins)
        assert not seen
        with Log():
            layered = ts.forward(*ins)
    assert seen
    for d, l in zip(direct, layered):
        assert ptcore.equal(d, l)
    # (create_graph: the backward records, its gradients are differentiable)
    m.zero_grad()
    y = cm(x).sum()
    g, = ptcore.autograd.grad(y, m.a.weight, create_graph=True)
    assert g.requires_grad
    xt = torch.from_numpy(x.numpy().copy())
    wa = torch.from_numpy(m.a.weight.detach().numpy().copy()).requires_grad_()
    ba = torch.from_numpy(m.a.bias.detach().numpy().copy())
    wb = torch.from_numpy(m.b.weight.detach().numpy().copy())
    bb = torch.from_numpy(m.b.bias.detach().numpy().copy())
    yt = (torch.relu(xt @ wa.T + ba) @ wb.T + bb).sum(dim=0).sum()
    gt, = torch.autograd.grad(yt, wa)
    np.testing.assert_allclose(g.detach().numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


class _Dropped(ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ptcore.nn.Linear(6, 5)

    def forward(self, x):
        return ptcore.nn.functional.dropout(self.lin(x), 0.5).cumprod(1).relu().sum()


def test_opaque_calls_keep_their_entries_in_the_unlayered_form():
    """Opaque nodes (dropout: random numbers; cumprod: its formula converts a
    tensor) run under enable_grad inside the generated forward; their calls
    record, so they keep the ops' entries: the gradients are eager's for the
    same random numbers."""
    ptcore.manual_seed(0)
    m = _Dropped()
    cm = ptcore.compile(m)
    x = ptcore.randn(8, 6)
    for seed in (1, 2, 3):
        m.zero_grad()
        ptcore.manual_seed(seed)
        cm(x).backward()
        got = [p.grad.numpy().copy() for p in m.parameters()]
        m.zero_grad()
        ptcore.manual_seed(seed)
        m(x).backward()
        for g, w in zip(got, [p.grad.numpy() for p in m.parameters()]):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    ts = cm.dynamo_ctx.entries[0].program.root.fn
    assert len(ts.opaque) == 2 and "_layered" in ts.forward.__globals__
