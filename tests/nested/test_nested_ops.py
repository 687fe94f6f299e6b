"""ptcore.nested ops against torch.nested: values (through unbind) and
gradients, for both layouts, from the same NumPy data."""
import numpy as np
import pytest

import ptcore
import ptcore.nested as nested
import ptcore.nn.functional as PF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")

SHAPES = ((2, 4), (5, 4), (3, 4))
LAYOUTS = {"strided": (ptcore.strided, torch.strided), "jagged": (ptcore.jagged, torch.jagged)}


def _arrays(seed, shapes=SHAPES, positive=False):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s).astype(np.float64) for s in shapes]
    return [np.abs(a) + 0.5 for a in arrs] if positive else arrs


def _pair(arrs, layout, requires_grad=True):
    pl, tl = LAYOUTS[layout]
    p = nested.nested_tensor([ptcore.tensor(a) for a in arrs], layout=pl,
                             requires_grad=requires_grad)
    t = torch.nested.nested_tensor([torch.tensor(a) for a in arrs], layout=tl,
                                   requires_grad=requires_grad)
    return p, t


def _parts(x):
    """The numpy components of a nested result (or the array of a dense one)."""
    if getattr(x, "is_nested", False):
        return [c.detach().numpy() for c in x.unbind()]
    return [x.detach().numpy()]


def _items(r):
    """A result as a list of (is_nested, [tensors]): the components of a nested
    result, or the one tensor of a regular one."""
    rs = r if isinstance(r, tuple) else (r,)
    return [(True, list(a.unbind())) if getattr(a, "is_nested", False) else (False, [a])
            for a in rs]


def _loss(items, mod):
    rng = np.random.default_rng(7)
    loss = 0
    for _, ts in items:
        for c in ts:
            if c.requires_grad:
                loss = loss + (c * mod.tensor(rng.standard_normal(tuple(c.shape)))).sum()
    return loss


def _np_items(items):
    return [(n, [t.detach().numpy() for t in ts]) for n, ts in items]


def _assert_items(got, want, atol):
    assert len(got) == len(want)
    for (na, pa), (nb, pb) in zip(got, want):
        assert na == nb
        assert [x.shape for x in pa] == [x.shape for x in pb]
        for x, y in zip(pa, pb):
            np.testing.assert_allclose(x, y, atol=atol, rtol=1e-7)


def _assert_parts(got, want, atol=1e-9):
    assert len(got) == len(want)
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, atol=atol, rtol=1e-7)


def _check(fp, ft, layout, arrs=None, grad=True, atol=1e-10, oracle=None, fc=None):
    """Compare fp(ptcore nested) with ft(torch nested): values, and gradients of
    a fixed random loss.  torch's strided layout lacks many ops that its jagged
    layout has (with the same values): where it has none, or ``oracle`` says
    so, the jagged layout is the oracle.  ``fc``: the op on one regular torch
    component, the gradient oracle (torch's jagged layout lacks many backward
    formulas); a regular result of the nested op is the components' results
    stacked."""
    arrs = _arrays(1) if arrs is None else arrs
    p = _pair(arrs, layout, requires_grad=grad)[0]
    got = _items(fp(p))
    t = _pair(arrs, oracle or layout, requires_grad=False)[1]
    try:
        want = _items(ft(t))
    except (NotImplementedError, RuntimeError):
        if layout != "strided" or oracle is not None:
            raise
        want = _items(ft(_pair(arrs, "jagged", requires_grad=False)[1]))
    _assert_items(_np_items(got), _np_items(want), atol)
    if not grad:
        return
    _loss(got, ptcore).backward()
    gp = p.grad
    assert gp.is_nested and gp.layout is p.layout
    if fc is not None:
        xs = [torch.tensor(a, requires_grad=True) for a in arrs]
        outs = [fc(x) for x in xs]
        items = [(True, outs)] if got[0][0] else [(False, [torch.stack(outs)])]
        _assert_items(_np_items(items), _np_items(want), atol)
        _loss(items, torch).backward()
        _assert_parts(_parts(gp), [x.grad.numpy() for x in xs])
        return
    t = _pair(arrs, oracle or layout, requires_grad=True)[1]
    try:
        want = _items(ft(t))
        _loss(want, torch).backward()
    except (NotImplementedError, RuntimeError):
        if layout != "strided" or oracle is not None:
            raise
        t = _pair(arrs, "jagged", requires_grad=True)[1]
        _loss(_items(ft(t)), torch).backward()
    _assert_parts(_parts(gp), _parts(t.grad))


BOTH = ["strided", "jagged"]

UNARY = [
    (lambda m, x: m.relu(x)), (lambda m, x: x.tanh()), (lambda m, x: x.sigmoid()),
    (lambda m, x: -x), (lambda m, x: x.abs()), (lambda m, x: m.sin(x)), (lambda m, x: x.cos()),
    (lambda m, x: x.exp()), (lambda m, x: (x * x + 1).sqrt()),
]


@pytest.mark.parametrize("layout", BOTH)
@pytest.mark.parametrize("i", range(len(UNARY)))
def test_unary(layout, i):
    f = UNARY[i]
    _check(lambda x: f(ptcore, x), lambda x: f(torch, x), layout)


@pytest.mark.parametrize("layout", BOTH)
@pytest.mark.parametrize("fname", ["gelu", "silu", "relu", "tanh", "sigmoid"])
def test_functional_activations(layout, fname):
    _check(lambda x: getattr(PF, fname)(x), lambda x: getattr(TF, fname)(x), layout)


def test_gelu_tanh_jagged():
    _check(lambda x: PF.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh"),
           "jagged")


@pytest.mark.parametrize("layout", BOTH)
def test_binary_nested_nested(layout):
    arrs2 = _arrays(5)

    def run(mod, nn):
        def f(x):
            if x.layout is mod.jagged:   # (torch: the same offsets, the same ragged size)
                y = nn.nested_tensor_from_jagged(mod.tensor(np.concatenate(arrs2)), x.offsets())
            else:
                y = nn.nested_tensor([mod.tensor(a) for a in arrs2])
            return (x + y) * x - y / 3 + x * 2.5 - 1
        return f
    _check(run(ptcore, nested), run(torch, torch.nested), layout)


@pytest.mark.parametrize("layout", BOTH)
def test_scalar_ops(layout):
    f = (lambda x: 2 - x * 3 + x / 4)
    _check(f, f, layout)


def test_jagged_broadcast_dense():
    rng = np.random.default_rng(3)
    d = rng.standard_normal(4)
    b = rng.standard_normal((3, 1, 4))

    def f(mod):
        return lambda x: (x + mod.tensor(d)) * mod.tensor(b) - mod.tensor(d[None])
    _check(f(ptcore), f(torch), "jagged")


def test_jagged_pow_where():
    _check(lambda x: ptcore.where(x > 0, x ** 2, x * 0.5),
           lambda x: torch.where(x > 0, x ** 2, x * 0.5), "jagged")


def test_strided_dense_operand_raises_like_torch_or_works():
    p, _ = _pair(_arrays(1), "strided", requires_grad=False)
    r = p * ptcore.ones(4)                   # (torch refuses; ptcore broadcasts per component)
    assert [tuple(c.shape) for c in r.unbind()] == list(SHAPES)


def test_binary_structure_mismatch_raises():
    a, _ = _pair(_arrays(1), "jagged")
    b, _ = _pair(_arrays(1, ((3, 4), (4, 4), (3, 4))), "jagged")
    with pytest.raises(RuntimeError):
        a + b


@pytest.mark.parametrize("layout", BOTH)
def test_linear(layout):
    rng = np.random.default_rng(2)
    w, bias = rng.standard_normal((6, 4)), rng.standard_normal(6)
    pl = ptcore.nn.Linear(4, 6, dtype=ptcore.float64)
    with ptcore.no_grad():
        pl.weight.copy_(ptcore.tensor(w))
        pl.bias.copy_(ptcore.tensor(bias))
    _check(lambda x: pl(x), lambda x: TF.linear(x, torch.tensor(w), torch.tensor(bias)), layout)
    x, _ = _pair(_arrays(1), layout)
    pl.zero_grad()
    pl(x).to_padded_tensor(0.0).sum().backward()
    ref = sum(a.sum(0) for a in _arrays(1))
    np.testing.assert_allclose(pl.weight.grad.numpy(), np.tile(ref, (6, 1)), atol=1e-10)


def test_matmul_dense_jagged():
    w = np.random.default_rng(4).standard_normal((4, 3))
    _check(lambda x: x @ ptcore.tensor(w), lambda x: x @ torch.tensor(w), "jagged")


def test_matmul_nested_nested_strided():
    _check(lambda x: ptcore.matmul(x, x.transpose(1, 2)),
           lambda x: torch.matmul(x, x.transpose(1, 2)), "strided")
    _check(lambda x: ptcore.bmm(x, x.transpose(-1, -2)),
           lambda x: torch.bmm(x, x.transpose(-1, -2)), "strided")


@pytest.mark.parametrize("layout", BOTH)
def test_transpose(layout):
    _check(lambda x: x.transpose(1, 2) * 2, lambda x: x.transpose(1, 2) * 2, layout)
    p, t = _pair(_arrays(1), layout, requires_grad=False)
    assert p.transpose(1, 2).is_contiguous() == t.transpose(1, 2).is_contiguous()
    assert p.transpose(1, 2).contiguous().is_contiguous()
    with pytest.raises((RuntimeError, ValueError)):
        p.transpose(0, 1)


def test_jagged_transposed_parts_like_torch():
    p, t = _pair(_arrays(1), "jagged", requires_grad=False)
    pt_, tt = p.transpose(1, 2), t.transpose(1, 2)
    assert tuple(pt_.values().shape) == tuple(tt.values().shape)
    assert pt_.shape[1] == 4 and pt_.shape[2] == p.shape[1]


@pytest.mark.parametrize("layout", BOTH)
def test_reshape_view_unflatten(layout):
    _check(lambda x: x.reshape(3, -1, 2, 2) * 2, lambda x: x.reshape(3, -1, 2, 2) * 2, layout)
    _check(lambda x: x.view(3, -1, 2, 2) * 1, lambda x: x.view(3, -1, 2, 2) * 1, layout)
    if layout == "jagged":
        _check(lambda x: x.unflatten(-1, (2, 2)).flatten(-2),
               lambda x: x.unflatten(-1, (2, 2)).flatten(-2), layout)


def test_reshape_batch_dim_raises():
    x, _ = _pair(_arrays(1), "jagged")
    with pytest.raises(RuntimeError):
        x.reshape(-1, 4)


@pytest.mark.parametrize("layout", BOTH)
@pytest.mark.parametrize("dim", [-1, 1])
def test_softmax(layout, dim):
    # (torch's jagged softmax backward along the ragged dim is wrong in 2.13: the
    # components are the gradient oracle)
    cd = dim - 1 if dim > 0 else dim
    _check(lambda x: PF.softmax(x, dim=dim), lambda x: TF.softmax(x, dim=dim), layout,
           fc=lambda c: torch.softmax(c, cd))
    _check(lambda x: ptcore.softmax(x, dim), lambda x: torch.softmax(x, dim), layout,
           fc=lambda c: torch.softmax(c, cd))


def test_log_softmax_jagged():
    _check(lambda x: PF.log_softmax(x, -1), lambda x: TF.log_softmax(x, -1), "jagged",
           fc=lambda c: torch.log_softmax(c, -1))


@pytest.mark.parametrize("layout", BOTH)
def test_layer_norm(layout):
    rng = np.random.default_rng(6)
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    _check(lambda x: PF.layer_norm(x, (4,), ptcore.tensor(w), ptcore.tensor(b)),
           lambda x: TF.layer_norm(x, (4,), torch.tensor(w), torch.tensor(b)), layout,
           atol=1e-9)
    ln = ptcore.nn.LayerNorm(4, dtype=ptcore.float64)
    _check(lambda x: ln(x), lambda x: TF.layer_norm(x, (4,), torch.ones(4, dtype=torch.float64),
                                                    torch.zeros(4, dtype=torch.float64)),
           layout, atol=1e-9)


@pytest.mark.parametrize("layout", BOTH)
def test_dropout_identity(layout):
    _check(lambda x: PF.dropout(x, 0.0, training=True), lambda x: TF.dropout(x, 0.0, True),
           layout)
    _check(lambda x: ptcore.nn.Dropout(0.5).eval()(x), lambda x: TF.dropout(x, 0.5, False),
           layout)


def test_dropout_p_keeps_structure():
    x, _ = _pair(_arrays(1, positive=True), "jagged", requires_grad=False)
    y = PF.dropout(x, 0.5, training=True)
    for a, b in zip(y.unbind(), x.unbind()):
        kept = a.numpy() != 0
        np.testing.assert_allclose(a.numpy()[kept], 2 * b.numpy()[kept])


@pytest.mark.parametrize("spec", [(-1, False), (-1, True), (1, False), (1, True), (2, True)])
@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reductions_jagged(spec, op):
    # (torch's jagged layout has no backward for these: the components are the oracle)
    dim, keep = spec
    cd = dim - 1 if dim > 0 else dim
    _check(lambda x: getattr(x, op)(dim, keepdim=keep), lambda x: getattr(x, op)(dim, keepdim=keep),
           "jagged", fc=lambda c: getattr(c, op)(cd, keepdim=keep))


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_reduce_batch_and_ragged_dims_jagged(op):
    arrs = _arrays(1)
    p, t = _pair(arrs, "jagged")
    rp = getattr(p, op)((0, 1))
    np.testing.assert_allclose(rp.detach().numpy(), getattr(t, op)((0, 1)).detach().numpy(),
                               atol=1e-12)
    rp.sum().backward()
    n = sum(a.shape[0] for a in arrs)
    for g in p.grad.unbind():
        np.testing.assert_allclose(g.numpy(), 1.0 if op == "sum" else 1.0 / n)


def test_full_sum_jagged():
    arrs = _arrays(1)
    p, t = _pair(arrs, "jagged")
    s = p.sum()
    assert s.dim() == 0
    np.testing.assert_allclose(s.item(), t.sum().item())
    s.backward()
    for g in p.grad.unbind():
        np.testing.assert_allclose(g.numpy(), 1.0)


def test_reductions_strided_like_torch():
    _check(lambda x: x.sum(-1, keepdim=True), lambda x: x.sum(-1, keepdim=True), "strided")


@pytest.mark.parametrize("layout", BOTH)
def test_chunk_split_cat_last_dim(layout):
    # (torch's strided chunk backward crashes the interpreter: jagged is the oracle)
    _check(lambda x: x.chunk(2, -1), lambda x: x.chunk(2, -1), layout, oracle="jagged")
    _check(lambda x: ptcore.cat([x, x * 2], -1), lambda x: torch.cat([x, x * 2], -1), layout,
           oracle="jagged")
    if layout == "jagged":
        # (torch's backward of a jagged split with sizes crashes: values only)
        _check(lambda x: x.split([1, 3], -1), lambda x: x.split([1, 3], -1), layout, grad=False)


def test_sdpa_jagged_matches_per_sample():
    rng = np.random.default_rng(9)
    lens, heads, d = (3, 6, 2), 2, 4
    qa = [rng.standard_normal((n, heads, d)) for n in lens]
    ka = [rng.standard_normal((n, heads, d)) for n in lens]
    va = [rng.standard_normal((n, heads, d)) for n in lens]

    def run(mod, nn, F):
        q, k, v = (nn.nested_tensor([mod.tensor(a) for a in arrs], layout=mod.jagged,
                                    requires_grad=True) for arrs in (qa, ka, va))
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                             v.transpose(1, 2)).transpose(1, 2)
        (out * out).to_padded_tensor(0.0).sum().backward()
        return out, (q.grad, k.grad, v.grad)
    op, gp = run(ptcore, nested, PF)
    ot, gt = run(torch, torch.nested, TF)
    assert op.shape[1] == op.shape[1] and op.dim() == 4
    for a, b in zip(_parts(op), _parts(ot)):
        np.testing.assert_allclose(a, b, atol=1e-10)
    for x, y in zip(gp, gt):
        for a, b in zip(_parts(x), _parts(y)):
            np.testing.assert_allclose(a, b, atol=1e-10)
    # each component as its own (1, H, L, D) batch
    for i, n in enumerate(lens):
        q, k, v = (ptcore.tensor(a[i]).transpose(0, 1)[None] for a in (qa, ka, va))
        ref = PF.scaled_dot_product_attention(q, k, v)[0].transpose(0, 1)
        np.testing.assert_allclose(op.unbind()[i].detach().numpy(), ref.numpy(), atol=1e-12)


def test_sdpa_causal_jagged():
    rng = np.random.default_rng(10)
    arrs = [rng.standard_normal((n, 2, 4)) for n in (2, 5)]

    # (torch's jagged layout has no CPU kernel for causal attention: per sample)
    q = nested.nested_tensor([ptcore.tensor(a) for a in arrs], layout=ptcore.jagged)
    q = q.transpose(1, 2)
    out = PF.scaled_dot_product_attention(q, q, q, is_causal=True)
    for a, o in zip(arrs, out.unbind()):
        x = torch.tensor(a).transpose(0, 1)
        ref = TF.scaled_dot_product_attention(x, x, x, is_causal=True)
        np.testing.assert_allclose(o.numpy(), ref.numpy(), atol=1e-12)


def test_embedding_jagged():
    w = np.random.default_rng(0).standard_normal((10, 3))
    idx = [np.array([1, 2, 3]), np.array([4]), np.array([5, 9])]
    p = nested.nested_tensor([ptcore.tensor(i) for i in idx], layout=ptcore.jagged)
    t = torch.nested.nested_tensor([torch.tensor(i) for i in idx], layout=torch.jagged)
    rp, rt = PF.embedding(p, ptcore.tensor(w)), TF.embedding(t, torch.tensor(w))
    for a, b in zip(_parts(rp), _parts(rt)):
        np.testing.assert_allclose(a, b)


def test_indexing_batch():
    p, t = _pair(_arrays(1), "jagged", requires_grad=False)
    np.testing.assert_allclose(p[1].numpy(), t[1].numpy())
    np.testing.assert_allclose(p[2, 0].numpy(), t[2, 0].numpy())


def test_inplace_ops():
    p, t = _pair(_arrays(1), "jagged", requires_grad=False)
    p.mul_(2).add_(1).relu_()
    t.mul_(2).add_(1).relu_()
    for a, b in zip(_parts(p), _parts(t)):
        np.testing.assert_allclose(a, b)


def test_unbind_function_and_iteration():
    p, t = _pair(_arrays(1), "strided", requires_grad=False)
    assert [tuple(c.shape) for c in ptcore.unbind(p)] == [tuple(c.shape) for c in t]
    assert len(list(iter(p))) == 3


def test_backward_with_nested_gradient():
    p, t = _pair(_arrays(1), "jagged")
    y = p * 3
    y.backward(nested.nested_tensor([ptcore.ones(s, dtype=ptcore.float64) for s in SHAPES],
                                    layout=ptcore.jagged))
    for c in p.grad.unbind():
        np.testing.assert_allclose(c.numpy(), 3.0)


ERRORS = [   # (layout, op, exception type): torch raises it too
    ("jagged", lambda x: x.log_softmax(1), RuntimeError),
    ("strided", lambda x: x.softmax(0), RuntimeError),
    ("jagged", lambda x: x.softmax(0), RuntimeError),
    ("jagged", lambda x: x.sum(0), RuntimeError),
    ("strided", lambda x: x.chunk(2, 1), RuntimeError),
    ("jagged", lambda x: x.chunk(2, 1), RuntimeError),
    ("jagged", lambda x: x.matmul(x.transpose(1, 2)), RuntimeError),
    ("strided", lambda x: x.size(1), RuntimeError),
    ("strided", lambda x: x.sum(-1), RuntimeError),
    ("strided", lambda x: x.sum(1, keepdim=True), RuntimeError),
    ("strided", lambda x: x.mean(-1, keepdim=True), NotImplementedError),
    ("jagged", lambda x: x.kthvalue(1), NotImplementedError),
    ("strided", lambda x: x.kthvalue(1), NotImplementedError),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_like_torch(case):
    layout, f, exc = ERRORS[case]
    p, t = _pair(_arrays(1), layout, requires_grad=False)
    with pytest.raises(exc):
        f(t)
    with pytest.raises(exc):
        f(p)


@pytest.mark.parametrize("dim", [-1, 1])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_along_dim_jagged(op, dim):
    cd = dim - 1 if dim > 0 else dim
    _check(lambda x: getattr(x, op)(dim)[0], lambda x: getattr(x, op)(dim)[0], "jagged",
           fc=lambda c: getattr(c, op)(cd)[0])
    _check(lambda x: getattr(x, op)(dim)[1], lambda x: getattr(x, op)(dim)[1], "jagged",
           grad=False)
    p, t = _pair(_arrays(1), "jagged", requires_grad=False)
    assert float(getattr(p, op)()) == float(getattr(t, op)())


def test_ellipsis_index():
    _check(lambda x: x[..., 1], lambda x: x[..., 1], "jagged", fc=lambda c: c[..., 1])
    _check(lambda x: x[..., 1:3], lambda x: x[..., 1:3], "jagged", fc=lambda c: c[..., 1:3])


def test_modules_on_nested():
    """nn layers take nested tensors (through their functional forms)."""
    ptcore.manual_seed(0)
    x = nested.nested_tensor([ptcore.randn(2, 4), ptcore.randn(3, 4)], layout=ptcore.jagged)
    for m in (ptcore.nn.RMSNorm(4), ptcore.nn.Softmax(-1), ptcore.nn.SiLU(), ptcore.nn.Tanh()):
        y = m(x)
        for a, c in zip(y.unbind(), x.unbind()):
            np.testing.assert_allclose(a.detach().numpy(), m(c).detach().numpy(), atol=1e-6)
    emb = ptcore.nn.Embedding(10, 3)
    idx = nested.nested_tensor([ptcore.tensor([1, 2]), ptcore.tensor([3])], layout=ptcore.jagged)
    out = emb(idx)
    assert out.shape[0] == 2 and out.shape[2] == 3
    np.testing.assert_allclose(out.unbind()[1].detach().numpy(),
                               emb.weight[3:4].detach().numpy())
    s = nested.nested_tensor([ptcore.randn(2, 4), ptcore.randn(3, 5)])
    assert ptcore.nn.ReLU(inplace=True)(s) is s
    assert all(float(c.min()) >= 0 for c in s.unbind())
