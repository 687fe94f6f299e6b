"""Transformer layers and stacks against PyTorch (eval mode, loaded state dicts)."""
import itertools
import warnings

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

DTYPES = [("float32", 1e-4, 2e-5), ("float64", 1e-10, 1e-11)]


def _pt(t):
    return ptcore.from_numpy(t.detach().cpu().numpy().copy())


def _close(a, b, rtol, atol):
    a = a.detach().numpy() if isinstance(a, ptcore.Tensor) else np.asarray(a)
    b = b.detach().cpu().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
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


def _randomise(tm):
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.3)


def _tact(a):
    return {"relu": "relu", "gelu": "gelu", "tanh": torch.tanh}[a]


def _pact(a):
    return {"relu": "relu", "gelu": "gelu", "tanh": ptcore.tanh}[a]


LAYER_GRID = list(itertools.product([False, True], [False, True], ["relu", "gelu", "tanh"],
                                    [True, False]))


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("batch_first,norm_first,act,bias", LAYER_GRID)
def test_encoder_layer(dt, rtol, atol, batch_first, norm_first, act, bias):
    E, H, FF, S, N = 8, 2, 16, 5, 3
    kw = dict(dim_feedforward=FF, dropout=0.1, batch_first=batch_first, norm_first=norm_first,
              bias=bias, layer_norm_eps=1e-6)
    tm = torch.nn.TransformerEncoderLayer(E, H, activation=_tact(act), dtype=getattr(torch, dt),
                                          **kw)
    _randomise(tm)
    pm = nn.TransformerEncoderLayer(E, H, activation=_pact(act), dtype=getattr(ptcore, dt), **kw)
    _copy_module(tm, pm)
    tm.eval()
    pm.eval()
    g = torch.Generator().manual_seed(1)
    tdt = getattr(torch, dt)
    x = torch.randn(*((N, S, E) if batch_first else (S, N, E)), generator=g, dtype=tdt)
    kpm = torch.zeros(N, S, dtype=torch.bool)
    kpm[1, -2:] = True
    causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=tdt)
    for masks in [{}, {"src_key_padding_mask": kpm}, {"src_mask": causal, "is_causal": True},
                  {"src_mask": causal, "src_key_padding_mask": kpm.to(tdt) * -1e9}]:
        exp = tm(x, **masks)
        got = pm(_pt(x), **{a: (_pt(b) if isinstance(b, torch.Tensor) else b)
                            for a, b in masks.items()})
        _close(got, exp, rtol, atol)


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("batch_first,norm_first,act,bias", LAYER_GRID[::2])
def test_decoder_layer(dt, rtol, atol, batch_first, norm_first, act, bias):
    E, H, FF, T, S, N = 8, 4, 12, 4, 6, 2
    kw = dict(dim_feedforward=FF, batch_first=batch_first, norm_first=norm_first, bias=bias)
    tm = torch.nn.TransformerDecoderLayer(E, H, activation=_tact(act), dtype=getattr(torch, dt),
                                          **kw)
    _randomise(tm)
    pm = nn.TransformerDecoderLayer(E, H, activation=_pact(act), dtype=getattr(ptcore, dt), **kw)
    _copy_module(tm, pm)
    tm.eval()
    pm.eval()
    g = torch.Generator().manual_seed(2)
    tdt = getattr(torch, dt)
    shp = (lambda a: (N, a, E)) if batch_first else (lambda a: (a, N, E))
    tgt = torch.randn(*shp(T), generator=g, dtype=tdt)
    mem = torch.randn(*shp(S), generator=g, dtype=tdt)
    mkpm = torch.zeros(N, S, dtype=torch.bool)
    mkpm[0, -3:] = True
    causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=tdt)
    for masks in [{}, {"tgt_mask": causal, "tgt_is_causal": True},
                  {"tgt_mask": causal, "memory_key_padding_mask": mkpm,
                   "tgt_key_padding_mask": torch.zeros(N, T, dtype=torch.bool)}]:
        exp = tm(tgt, mem, **masks)
        got = pm(_pt(tgt), _pt(mem), **{a: (_pt(b) if isinstance(b, torch.Tensor) else b)
                                        for a, b in masks.items()})
        _close(got, exp, rtol, atol)


@needs_torch
@pytest.mark.parametrize("dt,rtol,atol", DTYPES)
@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_full_transformer(dt, rtol, atol, batch_first, norm_first):
    E, H = 8, 2
    kw = dict(d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=16, batch_first=batch_first, norm_first=norm_first,
              activation="gelu")
    torch.manual_seed(0)
    tm = torch.nn.Transformer(dtype=getattr(torch, dt), **kw)
    _randomise(tm)
    pm = nn.Transformer(dtype=getattr(ptcore, dt), **kw)
    _copy_module(tm, pm)
    tm.eval()
    pm.eval()
    g = torch.Generator().manual_seed(3)
    tdt = getattr(torch, dt)
    src = torch.randn(*((2, 5, E) if batch_first else (5, 2, E)), generator=g, dtype=tdt)
    tgt = torch.randn(*((2, 4, E) if batch_first else (4, 2, E)), generator=g, dtype=tdt)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=tdt)
    skpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    exp = tm(src, tgt, tgt_mask=tmask, src_key_padding_mask=skpm,
             memory_key_padding_mask=skpm)
    got = pm(_pt(src), _pt(tgt), tgt_mask=_pt(tmask), src_key_padding_mask=_pt(skpm),
             memory_key_padding_mask=_pt(skpm))
    _close(got, exp, rtol, atol)
    # a stand-alone encoder stack with a final norm and unbatched input
    enc_t = tm.encoder
    enc_p = pm.encoder
    s0 = src[0] if batch_first else src[:, 0]
    _close(enc_p(_pt(s0)), enc_t(s0), rtol, atol)


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(4)
    assert m.dtype == ptcore.float32 and tuple(m.shape) == (4, 4)
    a = m.numpy()
    assert np.all(np.isneginf(a[np.triu_indices(4, 1)]))
    assert np.all(a[np.tril_indices(4)] == 0)
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=ptcore.float64).dtype == \
        ptcore.float64


def test_transformer_structure_and_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                           dim_feedforward=16)
    names = [n for n, _ in m.named_parameters()]
    assert names[0] == "encoder.layers.0.self_attn.in_proj_weight"
    assert "decoder.layers.0.multihead_attn.out_proj.bias" in names
    assert "encoder.norm.weight" in names and "decoder.norm.bias" in names
    assert len(m.encoder.layers) == 2 and len(m.decoder.layers) == 1
    # deep copies, not shared
    assert m.encoder.layers[0].linear1.weight is not m.encoder.layers[1].linear1.weight
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        m(ptcore.randn(5, 2, 8), ptcore.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="feature number"):
        m(ptcore.randn(5, 2, 6), ptcore.randn(4, 2, 6))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")
    layer = nn.TransformerEncoderLayer(8, 2, activation="gelu")
    assert layer.activation is F.gelu and layer.activation_relu_or_gelu == 2


def test_transformer_dropout_train_vs_eval():
    ptcore.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.5)
    x = ptcore.randn(5, 2, 8)
    layer.eval()
    a = layer(x).detach()
    np.testing.assert_array_equal(a.numpy(), layer(x).detach().numpy())
    layer.train()
    assert not np.allclose(a.numpy(), layer(x).detach().numpy())


@needs_torch
@needs_autograd
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_gradients(norm_first):
    E, H = 8, 2
    kw = dict(d_model=E, nhead=H, num_encoder_layers=1, num_decoder_layers=1,
              dim_feedforward=16, norm_first=norm_first, dropout=0.0)
    tm = torch.nn.Transformer(dtype=torch.float64, **kw)
    _randomise(tm)
    pm = nn.Transformer(dtype=ptcore.float64, **kw)
    _copy_module(tm, pm)
    g = torch.Generator().manual_seed(4)
    src = torch.randn(5, 2, E, generator=g, dtype=torch.float64, requires_grad=True)
    tgt = torch.randn(4, 2, E, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 2, E, generator=g, dtype=torch.float64)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    (tm(src, tgt, tgt_mask=mask) * w).sum().backward()
    ps, ptg = _pt(src).requires_grad_(), _pt(tgt).requires_grad_()
    (pm(ps, ptg, tgt_mask=_pt(mask)) * _pt(w)).sum().backward()
    _close(ps.grad, src.grad, 1e-8, 1e-10)
    _close(ptg.grad, tgt.grad, 1e-8, 1e-10)
    tparams = dict(tm.named_parameters())
    for name, p in pm.named_parameters():
        _close(p.grad, tparams[name].grad, 1e-8, 1e-10)
