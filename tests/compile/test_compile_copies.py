"""ptcore.compile's backward graphs without needless copies and calls
(ptcore._inductor.copies): the gradient of a split's pieces, each reshaped from
a permuted view (attention's q, k, v), is written straight into its slice of
one buffer (no reshape copies, no cat); ``t(t(x))`` of a weight gradient is
``x``; a bias gradient is one ``sum`` without keepdim.  Values and gradients
are compared with eager ptcore and torch (float32, float64), the step's
fallbacks (a reshape with -1, pieces of other dtypes, mismatched shapes,
create_graph) with eager's plain ops, and the generated backward's calls are
counted so that the structure cannot regress."""
import re

import numpy as np
import pytest

import ptcore
from ptcore._inductor import copies
from ptcore._inductor.copies import cat_reshaped

from training_oracle import copy_params

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _pieces_of_every_size(monkeypatch):
    """(the tests' pieces are small: cat_reshaped writes them itself all the same)"""
    monkeypatch.setattr(copies, "_SMALL", 0)


def _bwd_source(cm):
    cf = cm.dynamo_ctx            # (the compiled module's CompiledFunction)
    return cf.entries[0].program.segments[0].backward.bwd_code.source


def _calls(src, name):
    """How many calls of the op ``name`` a generated function makes."""
    return len(re.findall(rf"= {name}_\d+\(", src))


def _attention(lib, B, T, C, H):
    nn = lib.nn

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(C, 3 * C)
            self.proj = nn.Linear(C, C)

        def forward(self, x):
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.view(B, T, H, C // H).transpose(1, 2)
            k = k.view(B, T, H, C // H).transpose(1, 2)
            v = v.view(B, T, H, C // H).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * 0.5
            att = lib.softmax(att, -1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.proj(y)
    return Attn()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_split_pieces_gradients_written_into_one_buffer(dtype):
    B, T, C, H = 2, 5, 8, 2
    ptcore.manual_seed(0)
    m = _attention(ptcore, B, T, C, H).to(getattr(ptcore, dtype))
    me = _attention(ptcore, B, T, C, H).to(getattr(ptcore, dtype))
    me.load_state_dict(m.state_dict())
    mt = _attention(torch, B, T, C, H).to(getattr(torch, dtype))
    copy_params(m, mt)
    cf = ptcore.compile(m)
    rng = np.random.default_rng(1)
    for step in range(3):           # the capture run, then the compiled graph
        xa = rng.standard_normal((B, T, C)).astype(dtype)
        ga = rng.standard_normal((B, T, C)).astype(dtype)
        xc = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        xe = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        xt = torch.from_numpy(xa.copy()).requires_grad_(True)
        for mod in (m, me, mt):
            mod.zero_grad()
        cf(xc).backward(ptcore.from_numpy(ga.copy()))
        me(xe).backward(ptcore.from_numpy(ga.copy()))
        mt(xt).backward(torch.from_numpy(ga.copy()))
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=tol * 10, atol=tol)
        for (n, p), pe, pt in zip(m.named_parameters(), me.parameters(), mt.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), pe.grad.numpy(), rtol=tol, atol=tol,
                                       err_msg=n)
            np.testing.assert_allclose(p.grad.numpy(), pt.grad.numpy(), rtol=tol * 10,
                                       atol=tol, err_msg=n)
    src = _bwd_source(cf)
    # one step computes the three pieces' gradients into their slices (the products
    # of q's, k's and v's gradients: products_cat); no cat, no reshape copy before it
    assert _calls(src, "products_cat") == 1 and _calls(src, "cat_reshaped") == 0
    assert _calls(src, "cat") == 0
    assert _calls(src, "batched_product") == 1      # (the gradient of att: not a piece)
    # both linear layers: a weight gradient is the product itself (no t of t), a bias
    # gradient one sum without keepdim and no reshape of it
    assert src.count("keepdim=True") == 0
    assert _calls(src, "sum") == 2
    # the t of each product's operands only (mm's backward: ``g.mm(b.t())`` and
    # ``a.t().mm(g)``, as torch's mm_mat1/mat2_backward), no t of a product
    assert _calls(src, "t") == 4 and _calls(src, "transpose") == 4


def test_linear_stack_backward_calls_counted():
    nn = ptcore.nn
    m = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4))
    mt = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 4))
    copy_params(m, mt)
    cf = ptcore.compile(m)
    xa = np.random.default_rng(2).standard_normal((7, 6)).astype("float32")
    for _ in range(2):
        m.zero_grad()
        cf(ptcore.from_numpy(xa)).square().sum().backward()
    mt(torch.from_numpy(xa)).square().sum().backward()
    for p, pt in zip(m.parameters(), mt.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), pt.grad.numpy(), rtol=1e-5, atol=1e-6)
    src = _bwd_source(cf)
    assert _calls(src, "sum") == 2 and src.count("keepdim=True") == 0
    # (t: both weight gradients' ``x.t().mm(g)``, the hidden input's ``g.mm(w.t().t())``)
    assert _calls(src, "t") == 3 and _calls(src, "reshape") == 0


@pytest.mark.parametrize("shape", [(2, 3, 8), (2, 3, -1), (-1, 3, 8)])
def test_cat_reshaped_equals_cat_of_reshapes(shape):
    rng = np.random.default_rng(3)
    parts = [ptcore.from_numpy(rng.standard_normal((2, 2, 3, 4)).astype("float32"))
             .permute(0, 2, 1, 3) for _ in range(3)]
    other = ptcore.from_numpy(rng.standard_normal((2, 3, 5)).astype("float32"))
    want = ptcore.cat([p.reshape(shape) for p in parts] + [other], 2)
    got = cat_reshaped(parts + [other], [shape] * 3 + [None], 2)
    assert got.shape == want.shape and got.is_contiguous()
    assert ptcore.equal(got, want)
    got = cat_reshaped(parts + [other], [shape] * 3 + [None], -1)
    assert ptcore.equal(got, want)


def test_cat_reshaped_falls_back_to_eager_ops():
    a = ptcore.arange(24.0).view(2, 3, 4).transpose(1, 2)
    b64 = ptcore.arange(24, dtype=ptcore.float64).view(2, 3, 4).transpose(1, 2)
    # other dtypes: cat's promotion, as eager
    want = ptcore.cat([a.reshape(2, 12), b64.reshape(2, 12)], 1)
    got = cat_reshaped([a, b64], [(2, 12), (2, 12)], 1)
    assert got.dtype == want.dtype == ptcore.float64 and ptcore.equal(got, want)
    # a shape reshape refuses, and pieces that disagree: eager's exceptions
    with pytest.raises(RuntimeError) as e1:
        a.reshape(5, 5)
    with pytest.raises(type(e1.value)):
        cat_reshaped([a, a], [(5, 5), (5, 5)], 0)
    with pytest.raises(RuntimeError) as e2:
        ptcore.cat([a.reshape(2, 12), a.reshape(4, 6)], 0)
    with pytest.raises(type(e2.value)):
        cat_reshaped([a, a], [(2, 12), (4, 6)], 0)
    # recorded (create_graph): the plain ops, with their history
    x = ptcore.arange(24.0).view(2, 3, 4).requires_grad_(True)
    y = cat_reshaped([x.transpose(1, 2), x.transpose(1, 2)], [(2, 12), (2, 12)], 1)
    assert y.grad_fn is not None
    y.sum().backward()
    assert ptcore.equal(x.grad, ptcore.full((2, 3, 4), 2.0))


def test_double_backward_through_folded_calls_matches_torch():
    # (the folded t(t(x)) and sum steps under create_graph: recorded ops, history kept)
    def make(lib):
        nn = lib.nn
        # (no activation: a tanh between gives a wrong second derivative through a compiled
        # graph without these passes too -- left as found, see the report)
        return nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 3)).double()
    m, mt = make(ptcore), make(torch)
    copy_params(m, mt)
    cf = ptcore.compile(m)
    xa = np.random.default_rng(4).standard_normal((6, 4))
    for _ in range(2):
        x = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        (gx,) = ptcore.autograd.grad(cf(x).square().sum(), x, create_graph=True)
        (ggx,) = ptcore.autograd.grad(gx.sin().sum(), x)
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    (gxt,) = torch.autograd.grad(mt(xt).square().sum(), xt, create_graph=True)
    (ggxt,) = torch.autograd.grad(gxt.sin().sum(), xt)
    np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ggx.numpy(), ggxt.numpy(), rtol=1e-9, atol=1e-11)
    src = _bwd_source(cf)
    assert _calls(src, "sum") == 2 and src.count("keepdim=True") == 0


def test_small_pieces_take_the_plain_ops(monkeypatch):
    monkeypatch.setattr(copies, "_SMALL", 16384)
    rng = np.random.default_rng(4)
    parts = [ptcore.from_numpy(rng.standard_normal((2, 2, 3, 4)).astype("float32"))
             .permute(0, 2, 1, 3) for _ in range(3)]
    calls = []
    monkeypatch.setattr(copies, "_cat", lambda *a: calls.append(a) or ptcore.cat(*a))
    got = cat_reshaped(parts, [(2, 3, 8)] * 3, 2)
    assert len(calls) == 1
    assert ptcore.equal(got, ptcore.cat([p.reshape(2, 3, 8) for p in parts], 2))
