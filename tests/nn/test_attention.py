"""scaled_dot_product_attention, multi_head_attention_forward and MultiheadAttention vs PyTorch."""
import itertools

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

DTYPES = [("float32", 1e-5, 1e-6), ("float64", 1e-10, 1e-12)]


def _pt(t):
    return ptcore.from_numpy(t.detach().cpu().numpy().copy())


def _close(a, b, rtol, atol):
    a = a.detach().numpy() if isinstance(a, ptcore.Tensor) else a
    b = b.detach().cpu().numpy() if torch is not None and isinstance(b, torch.Tensor) else b
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _autograd_works():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


needs_autograd = pytest.mark.skipif(not _autograd_works(), reason="autograd not available")


def _copy_module(tmod, pmod):
    sd = {k: _pt(v) for k, v in tmod.state_dict().items()}
    assert list(pmod.state_dict().keys()) == list(sd.keys())
    for k, v in pmod.state_dict().items():
        assert tuple(v.shape) == tuple(sd[k].shape), k
    pmod.load_state_dict(sd)


# ---------------------------------------------------------------------------
# scaled_dot_product_attention
# ---------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("mask_kind", [None, "bool", "float", "causal", "bool_bcast"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa_matches_torch(dt, rtol, atol, mask_kind, scale):
    g = torch.Generator().manual_seed(0)
    tdt = getattr(torch, dt)
    q = torch.randn(2, 3, 5, 8, generator=g, dtype=tdt)
    k = torch.randn(2, 3, 7, 8, generator=g, dtype=tdt)
    v = torch.randn(2, 3, 7, 6, generator=g, dtype=tdt)
    kw = {}
    if mask_kind == "bool":
        m = torch.rand(5, 7, generator=g) > 0.3
        m[:, 0] = True
        kw["attn_mask"] = m
    elif mask_kind == "bool_bcast":
        m = torch.rand(2, 1, 5, 7, generator=g) > 0.5
        m[0, 0, 1] = False          # a fully masked row -> zeros
        kw["attn_mask"] = m
    elif mask_kind == "float":
        kw["attn_mask"] = torch.randn(5, 7, generator=g, dtype=tdt)
    elif mask_kind == "causal":
        kw["is_causal"] = True
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale, **kw)
    pkw = {k_: (_pt(v_) if isinstance(v_, torch.Tensor) else v_) for k_, v_ in kw.items()}
    got = F.scaled_dot_product_attention(_pt(q), _pt(k), _pt(v), scale=scale, **pkw)
    assert got.dtype == getattr(ptcore, dt)
    _close(got, expected, rtol * 10, atol * 10)


@needs_torch
def test_sdpa_gqa_and_3d():
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 4, 5, 8, generator=g, dtype=torch.float64)
    k = torch.randn(2, 2, 6, 8, generator=g, dtype=torch.float64)
    v = torch.randn(2, 2, 6, 8, generator=g, dtype=torch.float64)
    exp = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    got = F.scaled_dot_product_attention(_pt(q), _pt(k), _pt(v), enable_gqa=True)
    _close(got, exp, 1e-10, 1e-12)
    q3, k3, v3 = q[0], k[0].repeat_interleave(2, 0), v[0].repeat_interleave(2, 0)
    exp = torch.nn.functional.scaled_dot_product_attention(q3, k3, v3, is_causal=True)
    got = F.scaled_dot_product_attention(_pt(q3), _pt(k3), _pt(v3), is_causal=True)
    _close(got, exp, 1e-10, 1e-12)


def test_sdpa_errors():
    q = ptcore.randn(2, 3, 4)
    # a mask that would grow the scores (torch: the in-place add's broadcast error)
    with pytest.raises(RuntimeError, match="broadcast shape"):
        F.scaled_dot_product_attention(q[:, :1], q, q, attn_mask=ptcore.ones(3, 3,
                                                                             dtype=ptcore.bool))
    with pytest.raises(IndexError):
        # torch's CPU flash kernel's mask check (4-D operands) reads the mask's dim -2;
        # the math kernel (3-D operands here) broadcasts a 1-D mask
        F.scaled_dot_product_attention(q[None], q[None], q[None],
                                       attn_mask=ptcore.ones(3, dtype=ptcore.bool))
    with pytest.raises(RuntimeError, match="dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="embedding size"):
        F.scaled_dot_product_attention(q, ptcore.randn(2, 3, 5), ptcore.randn(2, 3, 5))


def test_sdpa_dropout_train_is_random_but_shaped():
    ptcore.manual_seed(0)
    q = ptcore.randn(1, 2, 4, 8)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.0)
    assert a.shape == b.shape
    assert not np.allclose(a.numpy(), b.numpy())


# ---------------------------------------------------------------------------
# MultiheadAttention
# ---------------------------------------------------------------------------

MHA_GRID = list(itertools.product(
    [False, True],          # batch_first
    [True, False],          # bias
    [False, True],          # add_bias_kv
    [False, True],          # add_zero_attn
    [None, 6],              # kdim/vdim
))


def _mha_pair(embed, heads, dt, **kw):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(embed, heads, dtype=getattr(torch, dt), **kw)
    if tm.in_proj_bias is not None:   # make the zero-initialised biases non-trivial
        with torch.no_grad():
            tm.in_proj_bias.normal_()
            tm.out_proj.bias.normal_()
    pm = nn.MultiheadAttention(embed, heads, dtype=getattr(ptcore, dt), **kw)
    _copy_module(tm, pm)
    tm.eval()
    pm.eval()
    return tm, pm


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("batch_first,bias,add_bias_kv,add_zero_attn,kvdim", MHA_GRID)
def test_mha_matches_torch(dt, rtol, atol, batch_first, bias, add_bias_kv, add_zero_attn,
                           kvdim):
    E, H, L, S, N = 8, 2, 4, 5, 3
    tm, pm = _mha_pair(E, H, dt, batch_first=batch_first, bias=bias, add_bias_kv=add_bias_kv,
                       add_zero_attn=add_zero_attn, kdim=kvdim, vdim=kvdim)
    tdt = getattr(torch, dt)
    g = torch.Generator().manual_seed(1)
    kd = kvdim or E
    shp = (lambda a, b: (N, a, b)) if batch_first else (lambda a, b: (a, N, b))
    q = torch.randn(*shp(L, E), generator=g, dtype=tdt)
    k = torch.randn(*shp(S, kd), generator=g, dtype=tdt)
    v = torch.randn(*shp(S, kd), generator=g, dtype=tdt)
    kpm = torch.zeros(N, S, dtype=torch.bool)
    kpm[0, -2:] = True
    am = torch.rand(L, S, generator=g) > 0.8
    am[:, 0] = False
    for need_weights, avg in [(True, True), (True, False), (False, True)]:
        for masks in [{}, {"key_padding_mask": kpm}, {"attn_mask": am},
                      {"key_padding_mask": kpm, "attn_mask": am}]:
            to, tw = tm(q, k, v, need_weights=need_weights, average_attn_weights=avg, **masks)
            po, pw = pm(_pt(q), _pt(k), _pt(v), need_weights=need_weights,
                        average_attn_weights=avg, **{a: _pt(b) for a, b in masks.items()})
            _close(po, to, rtol * 10, atol * 10)
            if need_weights:
                _close(pw, tw, rtol * 10, atol * 10)
            else:
                assert pw is None and tw is None


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
def test_mha_self_attention_float_and_3d_masks_unbatched(dt, rtol, atol):
    E, H, L, N = 8, 4, 5, 2
    tm, pm = _mha_pair(E, H, dt)
    tdt = getattr(torch, dt)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(L, N, E, generator=g, dtype=tdt)
    fm = torch.randn(N * H, L, L, generator=g, dtype=tdt)
    fkpm = torch.zeros(N, L, dtype=tdt)
    fkpm[1, 0] = float("-inf")
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=tdt)
    for masks in [{"attn_mask": fm}, {"key_padding_mask": fkpm, "attn_mask": fm},
                  {"attn_mask": causal, "is_causal": True}]:
        for need_weights in (True, False):
            to, tw = tm(x, x, x, need_weights=need_weights, **masks)
            po, pw = pm(_pt(x), _pt(x), _pt(x), need_weights=need_weights,
                        **{a: (_pt(b) if isinstance(b, torch.Tensor) else b)
                           for a, b in masks.items()})
            _close(po, to, rtol * 10, atol * 10)
            if need_weights:
                _close(pw, tw, rtol * 10, atol * 10)
    # unbatched input
    xu = x[:, 0]
    to, tw = tm(xu, xu, xu, average_attn_weights=False)
    po, pw = pm(_pt(xu), _pt(xu), _pt(xu), average_attn_weights=False)
    _close(po, to, rtol * 10, atol * 10)
    _close(pw, tw, rtol * 10, atol * 10)


def test_mha_parameters_and_init():
    m = nn.MultiheadAttention(12, 3)
    names = [n for n, _ in m.named_parameters()]
    assert names == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert tuple(m.in_proj_weight.shape) == (36, 12)
    assert np.all(m.in_proj_bias.detach().numpy() == 0)
    assert np.all(m.out_proj.bias.detach().numpy() == 0)
    bound = np.sqrt(6.0 / (12 + 36))
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= bound
    m2 = nn.MultiheadAttention(12, 3, kdim=5, vdim=7, add_bias_kv=True, bias=False)
    names = [n for n, _ in m2.named_parameters()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v",
                     "out_proj.weight"]
    assert tuple(m2.k_proj_weight.shape) == (12, 5)
    assert tuple(m2.v_proj_weight.shape) == (12, 7)
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="greater than 0"):
        nn.MultiheadAttention(0, 3)


def test_mha_errors():
    m = nn.MultiheadAttention(8, 2)
    x = ptcore.randn(4, 2, 8)
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        m(x, x, x, attn_mask=ptcore.zeros(3, 4, dtype=ptcore.bool))
    with pytest.raises(RuntimeError, match="3D attn_mask"):
        m(x, x, x, attn_mask=ptcore.zeros(3, 4, 4, dtype=ptcore.bool))
    with pytest.raises(AssertionError, match="only bool and floating"):
        m(x, x, x, attn_mask=ptcore.zeros(4, 4, dtype=ptcore.int64))
    with pytest.raises(AssertionError, match="embedding dimension"):
        m(ptcore.randn(4, 2, 6), ptcore.randn(4, 2, 6), ptcore.randn(4, 2, 6))
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="key_padded_mask"):
        m(x, x, x, key_padding_mask=ptcore.zeros(2, 3, dtype=ptcore.bool))


def test_mha_dropout_in_training_only():
    ptcore.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = ptcore.randn(4, 2, 8)
    m.eval()
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    c, _ = m(x, x, x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------

@needs_torch
@needs_autograd
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("kvdim", [None, 6])
def test_mha_gradients_match_torch(need_weights, kvdim):
    E, H, L, S, N = 8, 2, 4, 5, 3
    tm, pm = _mha_pair(E, H, "float64", add_bias_kv=True, kdim=kvdim, vdim=kvdim)
    g = torch.Generator().manual_seed(3)
    kd = kvdim or E
    q = torch.randn(L, N, E, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(S, N, kd, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(S, N, kd, generator=g, dtype=torch.float64, requires_grad=True)
    am = torch.rand(L, S + 1, generator=g) > 0.8
    am[:, 0] = False
    am = am[:, :S]
    w = torch.randn(L, N, E, generator=g, dtype=torch.float64)
    to, _ = tm(q, k, v, attn_mask=am, need_weights=need_weights)
    (to * w).sum().backward()
    pq, pk, pv = (_pt(t).requires_grad_() for t in (q, k, v))
    po, _ = pm(pq, pk, pv, attn_mask=_pt(am), need_weights=need_weights)
    (po * _pt(w)).sum().backward()
    for a, b in ((pq, q), (pk, k), (pv, v)):
        _close(a.grad, b.grad, 1e-9, 1e-10)
    tparams = dict(tm.named_parameters())
    for name, p in pm.named_parameters():
        _close(p.grad, tparams[name].grad, 1e-9, 1e-10)


@needs_torch
@needs_autograd
@pytest.mark.parametrize("mask_kind", [None, "causal", "bool"])
def test_sdpa_gradients(mask_kind):
    g = torch.Generator().manual_seed(4)
    q = torch.randn(2, 2, 5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 2, 5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    kw = {}
    if mask_kind == "causal":
        kw["is_causal"] = True
    elif mask_kind == "bool":
        m = torch.rand(5, 5, generator=g) > 0.5
        m[2] = False  # fully masked row
        kw["attn_mask"] = m
    w = torch.randn(2, 2, 5, 3, generator=g, dtype=torch.float64)
    (torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw) * w).sum().backward()
    pq, pk, pv = (_pt(t).requires_grad_() for t in (q, k, v))
    pkw = {a: (_pt(b) if isinstance(b, torch.Tensor) else b) for a, b in kw.items()}
    (F.scaled_dot_product_attention(pq, pk, pv, **pkw) * _pt(w)).sum().backward()
    for a, b in ((pq, q), (pk, k), (pv, v)):
        _close(a.grad, b.grad, 1e-9, 1e-10)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("layout", ["heads", "contiguous", "permuted"])
def test_sdpa_grads_of_head_views(causal, layout):
    """Gradients of q, k, v given as views (the heads of a fused projection:
    split -> view -> transpose; a full permute) come back in the views'
    memory order, so the backward through the views needs no copy; values
    against torch for every layout."""
    torch = pytest.importorskip("torch")
    B, H, T, d = 2, 3, 7, 4
    C = H * d
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((B, T, 3 * C)).astype(np.float32)
    g0 = rng.standard_normal((B, T, C)).astype(np.float32)
    res = []
    for lib in (ptcore, torch):
        x = lib.from_numpy(x0.copy()).requires_grad_()
        if layout == "heads":
            q, k, v = [t.view(B, T, H, d).transpose(1, 2) for t in x.split(C, dim=2)]
        elif layout == "contiguous":
            q, k, v = [t.reshape(B, T, H, d).transpose(1, 2).contiguous() for t in x.split(C, dim=2)]
        else:
            q, k, v = [t.reshape(B, T, d, H).permute(0, 3, 1, 2) for t in x.split(C, dim=2)]
        for t in (q, k, v):
            t.retain_grad()
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        y.transpose(1, 2).reshape(B, T, C).backward(lib.from_numpy(g0.copy()))
        res.append([x.grad.numpy()] + [t.grad.numpy() for t in (q, k, v)])
        if lib is ptcore and layout == "heads":
            assert all(t.grad.transpose(1, 2).is_contiguous() for t in (q, k, v))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# the output's layout: PyTorch's CPU flash kernel gives the query's

def _sdpa_layouts(t, kind):
    rng = np.random.default_rng(0)
    B, H, L, E = 2, 4, 5, 8
    if kind == "contiguous":
        return t.from_numpy(rng.standard_normal((B, H, L, E)).astype(np.float32))
    if kind == "heads_view":          # x.view(B, T, H, d).transpose(1, 2)
        return t.from_numpy(rng.standard_normal((B, L, H, E)).astype(np.float32)).transpose(1, 2)
    if kind == "heads_first":
        return t.from_numpy(rng.standard_normal((H, B, L, E)).astype(np.float32)).transpose(0, 1)
    if kind == "embedding_strided":   # the math path: a contiguous output
        return t.from_numpy(rng.standard_normal((B, H, E, L)).astype(np.float32)).transpose(2, 3)
    return t.from_numpy(rng.standard_normal((B * H, L, E)).astype(np.float32))


@pytest.mark.parametrize("kind", ["contiguous", "heads_view", "heads_first",
                                  "embedding_strided", "three_d"])
@pytest.mark.parametrize("extra", ["none", "causal", "bool_mask", "float_mask", "dropout"])
def test_sdpa_output_layout_as_torch(kind, extra):
    torch = pytest.importorskip("torch")
    got = []
    for t in (torch, ptcore):
        q = _sdpa_layouts(t, kind).requires_grad_()
        L = q.shape[-2]
        kw = {"causal": {"is_causal": True},
              "bool_mask": {"attn_mask": t.ones(L, L, dtype=t.bool).tril()},
              "float_mask": {"attn_mask": t.zeros(L, L)},
              "dropout": {"dropout_p": 0.5}}.get(extra, {})
        o = t.nn.functional.scaled_dot_product_attention(q, q, q, **kw)
        if extra != "dropout":
            o.sum().backward()
            got.append((tuple(o.stride()), o.detach().numpy().copy(), q.grad.numpy().copy()))
        else:
            got.append((tuple(o.stride()),))
    assert got[0][0] == got[1][0]
    if extra != "dropout":
        np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-4, atol=1e-5)


def test_sdpa_heads_view_output_views_back():
    """nanoGPT's CausalSelfAttention: ``y.transpose(1, 2).view(B, T, C)``."""
    B, T, H, d = 2, 6, 3, 4
    x = ptcore.randn(B, T, 3 * H * d)
    q, k, v = (z.view(B, T, H, d).transpose(1, 2) for z in x.split(H * d, dim=2))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert y.transpose(1, 2).view(B, T, H * d).shape == (B, T, H * d)


@pytest.mark.parametrize("L,S", [(4, 4), (3, 6), (6, 3)])
@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias_as_torch(L, S, variant):
    """torch.nn.attention.bias: the masks, and attention with them as
    attn_mask (the fully masked rows of lower-right with L > S are zeros)."""
    torch = pytest.importorskip("torch")
    import importlib
    import warnings
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 2, L, 8)).astype(np.float32)
    k = rng.standard_normal((2, 2, S, 8)).astype(np.float32)
    got = []
    for t in (torch, ptcore):
        bias = importlib.import_module(t.__name__ + ".nn.attention.bias")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = getattr(bias, variant)(L, S)
        o = t.nn.functional.scaled_dot_product_attention(t.from_numpy(q), t.from_numpy(k),
                                                         t.from_numpy(k), attn_mask=m)
        got.append((m._materialize().numpy(), o.numpy(), m.variant.value, m.seq_len_q,
                    m.seq_len_kv))
    assert np.array_equal(got[0][0], got[1][0]) and got[0][2:] == got[1][2:]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-6)


def test_causal_bias_with_is_causal_raises():
    from ptcore.nn.attention.bias import causal_upper_left
    q = ptcore.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match="causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=causal_upper_left(3, 3), is_causal=True)


def test_sdpa_kernel_choice_on_cpu_as_torch():
    """sdpa_kernel on the CPU: efficient/cuDNN only -> torch's "No viable
    backend"; flash only -> fine without dropout, "No available kernel"
    with it; the enum prints its name."""
    from ptcore.nn.attention import SDPBackend, sdpa_kernel
    q = ptcore.randn(1, 1, 3, 4)
    for b in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        with sdpa_kernel(b), pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        F.scaled_dot_product_attention(q, q, q)
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        F.scaled_dot_product_attention(q, q, q)
    assert str(SDPBackend.MATH) == f"{SDPBackend.MATH}" == "SDPBackend.MATH"


def test_sdpa_mask_with_is_causal_applies_both_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)) for _ in range(3))
    keep = rng.random((4, 4)) > 0.3
    bias = rng.standard_normal((4, 4))
    for mask in (keep, bias):
        got = F.scaled_dot_product_attention(*(ptcore.tensor(a) for a in (q, k, v)),
                                             attn_mask=ptcore.tensor(mask), is_causal=True)
        exp = torch.nn.functional.scaled_dot_product_attention(
            *(torch.tensor(a) for a in (q, k, v)), attn_mask=torch.tensor(mask), is_causal=True)
        np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-10, atol=1e-12)



@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask_kind", ["padding", "rows_hidden", "float", "2d", "causal_and_bool"])
def test_sdpa_mask_one_node_as_torchs_flash(dtype, mask_kind):
    """A mask that torch's CPU flash kernel takes (4-D heads, no dropout, no grad
    on the mask) gives one node, as torch's (its name, values and gradients of q,
    k, v given as head views of one projection; a row the mask hides entirely
    gives 0, not NaN)."""
    torch = pytest.importorskip("torch")
    B, H, T, d = 2, 3, 6, 4
    rng = np.random.default_rng(11)
    x0 = rng.standard_normal((B, T, 3 * H * d)).astype(dtype)
    g0 = rng.standard_normal((B, T, H * d)).astype(dtype)
    kw = {}
    if mask_kind in ("padding", "rows_hidden", "causal_and_bool"):
        m = np.ones((B, 1, T, T), dtype=bool)
        m[1, :, :, -2:] = False                 # padded keys of the second sequence
        if mask_kind == "rows_hidden":
            m[0, :, 3] = False                  # a query that sees no key
        kw["attn_mask"] = m
        kw["is_causal"] = mask_kind == "causal_and_bool"
    elif mask_kind == "float":
        kw["attn_mask"] = rng.standard_normal((B, 1, T, T)).astype(dtype)
    else:
        kw["attn_mask"] = rng.random((T, T)) > 0.3
    res = []
    for lib in (ptcore, torch):
        x = lib.from_numpy(x0.copy()).requires_grad_()
        q, k, v = [t.view(B, T, H, d).transpose(1, 2) for t in x.split(H * d, dim=2)]
        lkw = {a: (lib.from_numpy(b.copy()) if isinstance(b, np.ndarray) else b)
               for a, b in kw.items()}
        o = lib.nn.functional.scaled_dot_product_attention(q, k, v, **lkw)
        name = o.grad_fn.name()
        out = o.transpose(1, 2).reshape(B, T, H * d)
        (out * lib.from_numpy(g0.copy())).sum().backward()
        res.append((name, out.detach().numpy(), x.grad.numpy()))
    (pn, po, pg), (tn, to, tg) = res
    assert pn == tn == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert not np.isnan(po).any()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(po, to, **tol)
    np.testing.assert_allclose(pg, tg, **tol)
