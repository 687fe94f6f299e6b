"""x-transformers, run by tests/as_torch/test_x_transformers.py with the real torch and under
``python -m ptcore.as_torch``: small decoder-only, encoder and encoder-decoder transformers
with the library's options (rotary and ALiBi positions, RMSNorm, GLU feed-forwards, pre/post
norm, memory tokens, cross-attention), trained a few steps with their autoregressive wrapper
and sampled from greedily; weights from NumPy, dropout 0.  Each case writes what it computed
to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")

VOCAB, SEQ = 40, 16


def _fill(model, seed, scale=0.05):
    fill_normal([t for _, t in sorted(model.state_dict().items())], seed, scale)


def _tokens(seed, shape=(2, SEQ + 1)):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, VOCAB, shape))


def _train(wrapper, seq, steps=3, lr=3e-3):
    opt = torch.optim.SGD(wrapper.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = wrapper(seq)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def decoder_case():
    """Decoder-only language models with several attention options, trained with the
    AutoregressiveWrapper and sampled from greedily."""
    from x_transformers import AutoregressiveWrapper, Decoder, TransformerWrapper
    configs = {
        "rotary_rmsnorm_glu": dict(rotary_pos_emb=True, use_rmsnorm=True, ff_glu=True),
        "alibi_postnorm": dict(alibi_pos_bias=True, alibi_num_heads=2, pre_norm=False),
        "rel_pos_bias_swish": dict(rel_pos_bias=True, ff_swish=True, attn_qk_norm=True),
        "gqa_sandwich": dict(attn_kv_heads=1, sandwich_norm=True, attn_gate_values=True),
    }
    seq = _tokens(0)
    res = {}
    for name, kw in configs.items():
        model = TransformerWrapper(num_tokens=VOCAB, max_seq_len=SEQ * 2,
                                   attn_layers=Decoder(dim=32, depth=2, heads=4, **kw))
        _fill(model, 1)
        wrapper = AutoregressiveWrapper(model)
        out = {"losses": _train(wrapper, seq)}
        model.eval()
        with torch.no_grad():
            out["logits"] = model(seq[:, :8])
            out["greedy"] = wrapper.generate(seq[:1, :4], 6, temperature=0.0)
        res[name] = out
    return res


def encoder_case():
    """A bidirectional encoder with memory tokens, a classification-style embedding output,
    a padding mask and return_intermediates/attention."""
    from x_transformers import Encoder, TransformerWrapper
    model = TransformerWrapper(num_tokens=VOCAB, max_seq_len=SEQ, num_memory_tokens=2,
                               attn_layers=Encoder(dim=32, depth=2, heads=2,
                                                   attn_dim_head=16, residual_attn=True))
    _fill(model, 2)
    x = _tokens(3, (3, SEQ))
    mask = torch.ones(3, SEQ, dtype=torch.bool)
    mask[1, 10:] = False
    target = torch.from_numpy(np.random.default_rng(4).integers(0, VOCAB, (3, SEQ)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        logits = model(x, mask=mask)
        loss = torch.nn.functional.cross_entropy(logits[mask], target[mask])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        emb = model(x, mask=mask, return_embeddings=True)
        logits, inter = model(x, mask=mask, return_intermediates=True)
    return {"losses": losses, "embeddings": emb, "logits": logits,
            "n_attn_maps": len(inter.attn_intermediates),
            "hiddens": [h for h in inter.hiddens]}


def encoder_decoder_case():
    """XTransformer (encoder-decoder with cross-attention), its loss and greedy generation."""
    from x_transformers import XTransformer
    model = XTransformer(dim=32, enc_num_tokens=VOCAB, enc_depth=1, enc_heads=2,
                         enc_max_seq_len=SEQ, dec_num_tokens=VOCAB, dec_depth=2, dec_heads=2,
                         dec_max_seq_len=SEQ, tie_token_emb=True)
    _fill(model, 5)
    src = _tokens(6, (2, SEQ))
    tgt = _tokens(7, (2, SEQ))
    src_mask = torch.ones_like(src).bool()
    src_mask[0, 12:] = False
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = model(src, tgt, mask=src_mask)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        start = torch.zeros(2, 1, dtype=torch.long)
        out = model.generate(src, start, seq_len=6, mask=src_mask, temperature=0.0)
    return {"losses": losses, "generated": out}


CASES = {"decoder": decoder_case, "encoder": encoder_case,
         "encoder_decoder": encoder_decoder_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
