"""ptcore.nn.attention.flex_attention against torch's eager flex_attention (its math
path, ``_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG``), SDPA, and explicit formulas where
torch refuses on CPU (backward) or differs by design (block sparsity of hand-made
BlockMasks)."""
import math
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as PF
from ptcore.nn.attention import flex_attention as pfa

torch = pytest.importorskip("torch")
tfa = pytest.importorskip("torch.nn.attention.flex_attention")

_DTYPES = {"float32": (torch.float32, ptcore.float32),
           "float64": (torch.float64, ptcore.float64),
           "bfloat16": (torch.bfloat16, ptcore.bfloat16)}
_TOL = {"float32": 2e-5, "float64": 1e-10, "bfloat16": 2e-2}


@pytest.fixture
def eager_torch(monkeypatch):
    """torch's flex_attention without torch.compile (fast, same math)."""
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield tfa.flex_attention


def to_pt(t, requires_grad=False):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        out = ptcore.tensor(t.float().numpy()).to(ptcore.bfloat16)
    else:
        out = ptcore.tensor(t.numpy())
    return out.requires_grad_(requires_grad)


def to_np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    t = t.detach()
    return (t.float() if t.dtype == ptcore.bfloat16 else t).numpy()


def close(a, b, tol):
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=tol, atol=tol)


def qkv(B=2, Hq=2, Hkv=2, L=37, S=37, E=8, Ev=8, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, Hq, L, E, generator=g).to(dtype),
            torch.randn(B, Hkv, S, E, generator=g).to(dtype),
            torch.randn(B, Hkv, S, Ev, generator=g).to(dtype))


# mask_mods and score_mods written once over a namespace (torch or ptcore)
def mask_mods(xp):
    docs = xp.tensor([0] * 15 + [1] * 12 + [2] * 10)   # document id per position (37)

    def causal(b, h, q, kv):
        return q >= kv

    def window(b, h, q, kv):
        return (q - kv).abs() <= 5

    def prefix(b, h, q, kv):
        return kv < 9

    def same_doc(b, h, q, kv):
        return docs[q] == docs[kv]
    return {"causal": causal,
            "sliding_window": tfa_and(xp)(causal, window),
            "prefix_lm": tfa_or(xp)(prefix, causal),
            "document": tfa_and(xp)(same_doc, causal)}


def tfa_and(xp):
    return tfa.and_masks if xp is torch else pfa.and_masks


def tfa_or(xp):
    return tfa.or_masks if xp is torch else pfa.or_masks


def score_mods(xp, bias=None, slopes=None):
    def relative(s, b, h, q, kv):
        return s + (q - kv)

    def alibi(s, b, h, q, kv):
        return s + slopes[h] * (kv - q)

    def softcap(s, b, h, q, kv):
        return 5.0 * xp.tanh(s / 5.0)

    def biased(s, b, h, q, kv):
        return s + bias[h, q, kv]

    def causal_where(s, b, h, q, kv):
        return xp.where(q >= kv, s, float("-inf"))
    return {"relative": relative, "alibi": alibi, "softcap": softcap, "bias": biased,
            "causal_where": causal_where}


def test_no_mods_equals_sdpa():
    q, k, v = qkv(L=33, S=45, Ev=6)
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v))
    close(out, torch.nn.functional.scaled_dot_product_attention(q, k, v), 2e-5)
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), scale=0.3)
    close(out, torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.3), 2e-5)


@pytest.mark.parametrize("block_size", [128, 16, (8, 32)])
def test_causal_block_mask_equals_sdpa_is_causal(block_size):
    q, k, v = qkv(L=37, S=37)
    bm = pfa.create_block_mask(mask_mods(ptcore)["causal"], None, None, 37, 37,
                               device="cpu", BLOCK_SIZE=block_size)
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=bm)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    close(out, ref, 2e-5)


@pytest.mark.parametrize("name", ["causal", "sliding_window", "prefix_lm", "document"])
@pytest.mark.parametrize("block_size", [128, 8])
@pytest.mark.parametrize("batched", [False, True])
def test_mask_mods_match_torch(eager_torch, name, block_size, batched):
    q, k, v = qkv()
    B, H = (2, 2) if batched else (None, None)
    tbm = tfa.create_block_mask(mask_mods(torch)[name], B, H, 37, 37, device="cpu",
                                BLOCK_SIZE=block_size)
    pbm = pfa.create_block_mask(mask_mods(ptcore)[name], B, H, 37, 37, device="cpu",
                                BLOCK_SIZE=block_size)
    for attr in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                 "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"):
        np.testing.assert_array_equal(getattr(pbm, attr).numpy(), getattr(tbm, attr).numpy())
        assert getattr(pbm, attr).dtype == ptcore.int32
    np.testing.assert_array_equal(pbm.to_dense().numpy(), tbm.to_dense().numpy())
    assert pbm.sparsity() == pytest.approx(tbm.sparsity())
    assert pbm.shape == tbm.shape and pbm.BLOCK_SIZE == tbm.BLOCK_SIZE
    assert pbm.to_string() == tbm.to_string()
    out, lse = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm,
                                  return_aux=pfa.AuxRequest(lse=True))
    tout, tlse = eager_torch(q, k, v, block_mask=tbm, return_aux=tfa.AuxRequest(lse=True))
    close(out, tout, 2e-5)
    close(lse.lse, tlse.lse, 2e-5)
    assert lse.max_scores is None


@pytest.mark.parametrize("name", ["relative", "alibi", "softcap", "bias", "causal_where"])
@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_score_mods_match_torch(eager_torch, name, dt):
    tdt, pdt = _DTYPES[dt]
    q, k, v = qkv(dtype=tdt, L=21, S=19)
    g = torch.Generator().manual_seed(3)
    bias = torch.randn(2, 21, 19, generator=g)
    slopes = torch.tensor([0.5, 0.25])
    tmod = score_mods(torch, bias, slopes)[name]
    pmod = score_mods(ptcore, to_pt(bias), to_pt(slopes))[name]
    out, lse = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), score_mod=pmod,
                                  return_aux=pfa.AuxRequest(lse=True))
    tout, tlse = eager_torch(q, k, v, score_mod=tmod, return_aux=tfa.AuxRequest(lse=True))
    assert out.dtype == pdt
    assert str(lse.lse.dtype).split(".")[-1] == str(tlse.lse.dtype).split(".")[-1]
    close(out, tout, _TOL[dt])
    lse, tlse = lse.lse, tlse.lse
    close(lse, tlse, _TOL[dt] if dt != "bfloat16" else 5e-2)


def test_score_mod_and_block_mask_together(eager_torch):
    q, k, v = qkv(L=40, S=40)
    # document ids of length 40
    tdocs = torch.tensor([0] * 11 + [1] * 20 + [2] * 9)
    pdocs = to_pt(tdocs)
    tbm = tfa.create_block_mask(lambda b, h, qi, ki: tdocs[qi] == tdocs[ki], 2, None,
                                40, 40, device="cpu", BLOCK_SIZE=16)
    pbm = pfa.create_block_mask(lambda b, h, qi, ki: pdocs[qi] == pdocs[ki], 2, None,
                                40, 40, device="cpu", BLOCK_SIZE=16)
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm,
                             score_mod=score_mods(ptcore)["softcap"])
    tout = eager_torch(q, k, v, block_mask=tbm, score_mod=score_mods(torch)["softcap"])
    close(out, tout, 2e-5)


def _torch_reference(q, k, v, bias, mask):
    """Explicit attention in torch (differentiable): softcapped scores plus bias."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    s = 5.0 * torch.tanh(s / 5.0) + bias
    s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("masked", [False, True])
def test_gradients_with_learnable_bias(masked):
    q, k, v = (t.double() for t in qkv(L=13, S=11))
    bias = torch.randn(2, 13, 11, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    tq, tk, tv, tb = (t.clone().requires_grad_() for t in (q, k, v, bias))
    mask = torch.ones(13, 11, dtype=torch.bool)
    if masked:
        mask = torch.arange(13)[:, None] >= torch.arange(11)[None, :]
    tout = _torch_reference(tq, tk, tv, tb, mask)
    gout = torch.randn(tout.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    tout.backward(gout)

    pq, pk, pv, pb = (to_pt(t, requires_grad=True) for t in (q, k, v, bias))

    def mod(s, b, h, qi, ki):
        return 5.0 * ptcore.tanh(s / 5.0) + pb[h, qi, ki]
    bm = None
    if masked:
        bm = pfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 13, 11,
                                   device="cpu", BLOCK_SIZE=4)
    out = pfa.flex_attention(pq, pk, pv, score_mod=mod, block_mask=bm)
    close(out, tout, 1e-10)
    out.backward(to_pt(gout))
    for p, t in ((pq, tq), (pk, tk), (pv, tv), (pb, tb)):
        close(p.grad, t.grad, 1e-10)


@pytest.mark.parametrize("Hq,Hkv", [(4, 2), (6, 1)])
def test_gqa(eager_torch, Hq, Hkv):
    q, k, v = qkv(Hq=Hq, Hkv=Hkv, L=17, S=23, Ev=5)
    mod_t = score_mods(torch)["relative"]
    mod_p = score_mods(ptcore)["relative"]
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), score_mod=mod_p, enable_gqa=True)
    tout = eager_torch(q, k, v, score_mod=mod_t, enable_gqa=True)
    close(out, tout, 2e-5)
    sdpa = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), enable_gqa=True)
    close(sdpa, torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True),
          2e-5)


def test_return_lse_legacy_and_natural_log(eager_torch):
    q, k, v = qkv(L=9, S=12)
    with pytest.warns(FutureWarning):
        out, lse = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), return_lse=True)
    tout, tlse = eager_torch(q, k, v, return_lse=True)
    close(lse, tlse, 2e-5)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(8)
    close(lse, torch.logsumexp(s, dim=-1), 2e-5)
    assert lse.dtype == ptcore.float32 and tuple(lse.shape) == (2, 2, 9)


def test_fully_masked_rows(eager_torch):
    q, k, v = qkv(L=12, S=12)
    # rows q_idx < 4 see nothing
    tbm = tfa.create_block_mask(lambda b, h, qi, ki: (qi >= 4) & (ki <= qi), None, None,
                                12, 12, device="cpu", BLOCK_SIZE=4)
    pbm = pfa.create_block_mask(lambda b, h, qi, ki: (qi >= 4) & (ki <= qi), None, None,
                                12, 12, device="cpu", BLOCK_SIZE=4)
    pq, pk, pv = (to_pt(t, requires_grad=True) for t in (q, k, v))
    out, aux = pfa.flex_attention(pq, pk, pv, block_mask=pbm,
                                  return_aux=pfa.AuxRequest(lse=True, max_scores=True))
    tout, tlse = eager_torch(q, k, v, block_mask=tbm, return_lse=True)
    close(out, tout, 2e-5)
    close(aux.lse, tlse, 2e-5)
    assert np.all(to_np(out)[:, :, :4] == 0)
    assert np.all(np.isneginf(to_np(aux.lse)[:, :, :4]))
    assert np.all(np.isneginf(to_np(aux.max_scores)[:, :, :4]))
    s = to_np(q @ k.transpose(-2, -1)) / math.sqrt(8)
    np.testing.assert_allclose(to_np(aux.max_scores)[:, :, 4:],
                               np.tril(s, 0)[:, :, 4:].max(-1, where=np.tril(np.ones((12, 12)),
                                                                              0)[4:].astype(bool),
                                                           initial=-np.inf), rtol=1e-5)
    (out.sum() + aux.lse[:, :, 4:].sum()).backward()
    for t in (pq, pk, pv):
        assert np.all(np.isfinite(t.grad.numpy()))
    assert np.all(pq.grad.numpy()[:, :, :4] == 0)


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_dtypes_causal_matches_torch(eager_torch, dt):
    tdt, pdt = _DTYPES[dt]
    q, k, v = qkv(dtype=tdt, L=130, S=130, E=4, Ev=4, B=1, Hq=1, Hkv=1)
    causal_t, causal_p = mask_mods(torch)["causal"], mask_mods(ptcore)["causal"]
    tbm = tfa.create_block_mask(causal_t, None, None, 130, 130, device="cpu")
    pbm = pfa.create_block_mask(causal_p, None, None, 130, 130, device="cpu")
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm)
    assert out.dtype == pdt
    close(out, eager_torch(q, k, v, block_mask=tbm), _TOL[dt])


def test_hand_made_block_mask_skips_unlisted_blocks():
    # blocks of 4: row block 0 keeps kv block 1 only, row block 1 keeps blocks 0 and 2
    kv_num = ptcore.tensor([[[1, 2]]], dtype=ptcore.int32)
    kv_idx = ptcore.tensor([[[[1, 0, 0], [0, 2, 1]]]], dtype=ptcore.int32)
    bm = pfa.BlockMask.from_kv_blocks(kv_num, kv_idx, BLOCK_SIZE=4, seq_lengths=(8, 12))
    tbm = tfa.BlockMask.from_kv_blocks(torch.tensor(kv_num.numpy()),
                                       torch.tensor(kv_idx.numpy()), BLOCK_SIZE=4,
                                       seq_lengths=(8, 12))
    np.testing.assert_array_equal(bm.to_dense().numpy(), [[[[0, 1, 0], [1, 0, 1]]]])
    np.testing.assert_array_equal(bm.q_num_blocks.numpy(), tbm.q_num_blocks.numpy())
    np.testing.assert_array_equal(bm.q_indices.numpy(), tbm.q_indices.numpy())
    assert bm.sparsity() == pytest.approx(tbm.sparsity())
    q, k, v = qkv(B=1, Hq=1, Hkv=1, L=8, S=12)
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=bm)
    keep = np.kron(np.array([[0, 1, 0], [1, 0, 1]]), np.ones((4, 4))).astype(bool)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                           attn_mask=torch.tensor(keep))
    close(out, ref, 2e-5)


def test_block_mask_indexing_and_repr():
    tbm = tfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, 2, 3, 64, 64, device="cpu",
                                BLOCK_SIZE=16)
    pbm = pfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, 2, 3, 64, 64, device="cpu",
                                BLOCK_SIZE=16)
    for index in (1, (0, 2), (slice(0, 2), slice(1, 3)), (-1, slice(None), 2)):
        t, p = tbm[index], pbm[index]
        assert p.shape == t.shape
        np.testing.assert_array_equal(p.kv_num_blocks.numpy(), t.kv_num_blocks.numpy())
        np.testing.assert_array_equal(p.to_dense().numpy(), t.to_dense().numpy())
        np.testing.assert_array_equal(p.q_indices.numpy(), t.q_indices.numpy())
    q, k, v = qkv(L=64, S=64)
    with pytest.raises(RuntimeError):
        pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm[0])
    text = repr(pbm)
    assert "kv_num_blocks=(2, 3, 4)" in text and "BLOCK_SIZE=(16, 16)" in text
    assert str(pbm).startswith("BlockMask(shape=(2, 3, 64, 64), sparsity=37.50%")
    assert pbm.numel() == tbm.numel()
    assert pbm.to_string(grid_size=-1, limit=2) == tbm.to_string(grid_size=-1, limit=2)
    moved = pbm.to("cpu")
    np.testing.assert_array_equal(moved.kv_indices.numpy(), pbm.kv_indices.numpy())


@pytest.mark.parametrize("kind", ["mask", "score"])
def test_create_mask_matches_torch(kind):
    if kind == "mask":
        tmod, pmod = mask_mods(torch)["sliding_window"], mask_mods(ptcore)["sliding_window"]
    else:
        tmod, pmod = score_mods(torch)["causal_where"], score_mods(ptcore)["causal_where"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = tfa.create_mask(tmod, 2, 3, 37, 37, device="cpu")
    pm = pfa.create_mask(pmod, 2, 3, 37, 37, device="cpu")
    assert pm.dtype == ptcore.bool and tuple(pm.shape) == tuple(tm.shape)
    np.testing.assert_array_equal(pm.numpy(), tm.numpy())


def test_mask_combinators_and_noop():
    b, h, qi, ki = (ptcore.arange(n).view(*s) for n, s in
                    ((1, (1, 1, 1, 1)), (1, (1, 1, 1, 1)), (6, (1, 1, 6, 1)), (6, (1, 1, 1, 6))))
    lower, even = (lambda b, h, q, k: q >= k), (lambda b, h, q, k: (k % 2) == 0)
    qn, kn = np.arange(6)[:, None], np.arange(6)[None, :]
    np.testing.assert_array_equal(pfa.and_masks(lower, even)(b, h, qi, ki)[0, 0].numpy(),
                                  (qn >= kn) & (kn % 2 == 0))
    np.testing.assert_array_equal(pfa.or_masks(lower, even)(b, h, qi, ki)[0, 0].numpy(),
                                  (qn >= kn) | (kn % 2 == 0))
    assert pfa.noop_mask(b, h, qi, ki).item() is True
    assert pfa.and_masks()(b, h, qi, ki).item() is True
    assert pfa.or_masks()(b, h, qi, ki).item() is False
    with pytest.raises(RuntimeError):
        pfa.and_masks(lower, 3)
    with pytest.raises(RuntimeError):
        tfa.and_masks(lower, 3)


def test_mod_that_needs_vmap(eager_torch):
    # stack() of differently shaped index tensors fails on broadcast grids: the
    # per-position vmap fallback gives torch's result
    def make(xp):
        return lambda s, b, h, qi, ki: s + xp.stack([qi, ki]).sum(0) * 0.01
    q, k, v = qkv(L=6, S=5, B=1)
    out = pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), score_mod=make(ptcore))
    close(out, eager_torch(q, k, v, score_mod=make(torch)), 2e-5)


def _raises_like_torch(exc, pt_call, torch_call):
    with pytest.raises(exc):
        pt_call()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            torch_call()


def test_errors_match_torch(eager_torch):
    q, k, v = qkv(L=8, S=8)
    P = [to_pt(t) for t in (q, k, v)]
    cases = [
        (NotImplementedError, lambda x: (x[0][0], x[1][0], x[2][0]), {}),
        (ValueError, lambda x: (x[0], x[1][..., :4], x[2]), {}),
        (ValueError, lambda x: (x[0], x[1][:, :1], x[2][:, :1]), {}),
        (ValueError, lambda x: (x[0][:, :1].expand(2, 3, 8, 8), x[1], x[2]),
         {"enable_gqa": True}),
        (ValueError, lambda x: (x[0], x[1][:1], x[2][:1]), {}),
        (RuntimeError, lambda x: (x[0], x[1], x[2][:, :, :7]), {}),
    ]
    for exc, pick, kw in cases:
        _raises_like_torch(exc, lambda: pfa.flex_attention(*pick(P), **kw),
                           lambda: eager_torch(*pick((q, k, v)), **kw))
    # a block mask made for other lengths
    tbm = tfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 16, 16,
                                device="cpu")
    pbm = pfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 16, 16,
                                device="cpu")
    _raises_like_torch(ValueError, lambda: pfa.flex_attention(*P, block_mask=pbm),
                       lambda: eager_torch(q, k, v, block_mask=tbm))
    _raises_like_torch(ValueError,
                       lambda: pfa.flex_attention(*P, return_lse=True,
                                                  return_aux=pfa.AuxRequest(lse=True)),
                       lambda: eager_torch(q, k, v, return_lse=True,
                                           return_aux=tfa.AuxRequest(lse=True)))
    _raises_like_torch(AssertionError,
                       lambda: pfa.create_block_mask(score_mods(ptcore)["relative"], 1, 1,
                                                     8, 8, device="cpu"),
                       lambda: tfa.create_block_mask(score_mods(torch)["relative"], 1, 1,
                                                     8, 8, device="cpu"))
    _raises_like_torch(ValueError,
                       lambda: pfa.flex_attention(*P, kernel_options={"BACKEND": "NOPE"}),
                       lambda: eager_torch(q, k, v, kernel_options={"BACKEND": "NOPE"}))
    # integer inputs: torch computes nonsense in int64, ptcore refuses
    with pytest.raises(TypeError):
        pfa.flex_attention(*(t.long() for t in P))


def test_mixed_dtypes_follow_query(eager_torch):
    q, k, v = qkv(L=8, S=8)
    out = pfa.flex_attention(to_pt(q), to_pt(k.double()), to_pt(v.double()))
    tout = eager_torch(q, k.double(), v.double())
    assert out.dtype == ptcore.float32 and tout.dtype == torch.float32
    close(out, tout, 2e-5)
    sdpa = PF.scaled_dot_product_attention(to_pt(q), to_pt(k), to_pt(v))
    close(out, sdpa, 2e-5)


def test_adjust_crops_like_torch(eager_torch):
    tbm = tfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 64, 64,
                                device="cpu", BLOCK_SIZE=16)._adjust(40, 40)
    pbm = pfa.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 64, 64,
                                device="cpu", BLOCK_SIZE=16)._adjust(40, 40)
    assert pbm.shape == tbm.shape
    np.testing.assert_array_equal(pbm.to_dense().numpy(), tbm.to_dense().numpy())
    np.testing.assert_array_equal(pbm.kv_num_blocks.numpy(), tbm.kv_num_blocks.numpy())
    np.testing.assert_array_equal(pbm.full_kv_num_blocks.numpy(),
                                  tbm.full_kv_num_blocks.numpy())
    q, k, v = qkv(L=40, S=40)
    close(pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm),
          eager_torch(q, k, v, block_mask=tbm), 2e-5)


def test_key_value_batch_broadcasts_with_block_mask(eager_torch):
    q, k, v = qkv(L=10, S=10)
    k, v = k[:1], v[:1]
    tbm = tfa.create_block_mask(lambda b, h, qi, ki: qi >= ki + b, 2, None, 10, 10,
                                device="cpu", BLOCK_SIZE=4)
    pbm = pfa.create_block_mask(lambda b, h, qi, ki: qi >= ki + b, 2, None, 10, 10,
                                device="cpu", BLOCK_SIZE=4)
    close(pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm),
          eager_torch(q, k, v, block_mask=tbm), 2e-5)


def test_mask_mod_that_needs_vmap(eager_torch):
    def make(xp):
        return lambda b, h, qi, ki: xp.stack([qi, ki]).sum(0) % 3 != 1
    q, k, v = qkv(L=7, S=7, B=1)
    tbm = tfa.create_block_mask(make(torch), None, None, 7, 7, device="cpu", BLOCK_SIZE=4)
    pbm = pfa.create_block_mask(make(ptcore), None, None, 7, 7, device="cpu", BLOCK_SIZE=4)
    np.testing.assert_array_equal(pbm.kv_num_blocks.numpy(), tbm.kv_num_blocks.numpy())
    close(pfa.flex_attention(to_pt(q), to_pt(k), to_pt(v), block_mask=pbm),
          eager_torch(q, k, v, block_mask=tbm), 2e-5)


def test_gqa_gradients_and_lse_gradient():
    q, k, v = (t.double() for t in qkv(Hq=4, Hkv=2, L=6, S=9))
    tq, tk, tv = (t.clone().requires_grad_() for t in (q, k, v))
    tk4, tv4 = tk.repeat_interleave(2, dim=1), tv.repeat_interleave(2, dim=1)
    s = tq @ tk4.transpose(-2, -1) * 0.7
    tout = torch.softmax(s, -1) @ tv4
    (tout.sum() + torch.logsumexp(s, -1).pow(2).sum()).backward()
    pq, pk, pv = (to_pt(t, requires_grad=True) for t in (q, k, v))
    out, aux = pfa.flex_attention(pq, pk, pv, scale=0.7, enable_gqa=True,
                                  return_aux=pfa.AuxRequest(lse=True))
    (out.sum() + aux.lse.pow(2).sum()).backward()
    for p, t in ((pq, tq), (pk, tk), (pv, tv)):
        close(p.grad, t.grad, 1e-10)
