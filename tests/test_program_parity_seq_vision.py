"""Sequence and vision-ops programs written once against ``torch`` the way practitioners
write them, run under torch and under ptcore (same initial weights copied through NumPy,
same NumPy data), comparing what they return and print: char-level LSTM/GRU language
models with weight tying and truncated BPTT, packed bidirectional RNNs, RNN cells,
Embedding (padding_idx, max_norm, scale_grad_by_freq, sparse with SparseAdam/Adagrad/SGD),
EmbeddingBag, CrossEntropyLoss on (N, C, T), CTC, adaptive softmax, Transformer and
MultiheadAttention variants (masks, fast path, kdim/vdim, bias_kv, zero_attn), greedy /
top-k / top-p / beam decoding, Bahdanau seq2seq, rotary embeddings with a KV cache; spatial
transformers and grid_sample, interpolate modes, PixelShuffle, fold/unfold im2col,
transposed and depthwise convolutions, pooling with indices and unpooling, padding modes,
normalisation layers, channels_last training, activations, a UNet with dice/focal losses,
box IoU/NMS, ROI-align by grid_sample, tensor augmentation; a TCN, LSTM proj_size,
variable-length utilities, autoregressive rollout, seasonal decomposition."""
import contextlib
import io
import math

import numpy as np
import pytest

import ptcore
from program_pairs import assert_close, norm_repr as _norm, one_thread, run_pair

torch = pytest.importorskip("torch")


def char_lm(torch, init):
    nn = torch.nn
    V, E, H = 20, 8, 12
    class LM(nn.Module):
        def __init__(s):
            super().__init__()
            s.emb = nn.Embedding(V, H, padding_idx=0)
            s.rnn = nn.LSTM(H, H, num_layers=2, dropout=0.0, batch_first=True)
            s.out = nn.Linear(H, V)
            s.out.weight = s.emb.weight
        def forward(s, x, h=None):
            o, h = s.rnn(s.emb(x), h)
            return s.out(o), h
    m = LM(); init(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(0)
    data = torch.from_numpy(rng.integers(1, V, size=(4, 41)))
    out = []
    h = None
    for i in range(0, 40, 10):
        x, y = data[:, i:i+10], data[:, i+1:i+11]
        if h is not None:
            h = tuple(v.detach() for v in h)
        logits, h = m(x, h)
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), y, label_smoothing=0.1)
        opt.zero_grad(); loss.backward()
        gn = nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        opt.step()
        out += [loss.item(), float(gn)]
    out.append(math.exp(loss.item()))
    out.append(h[0].shape)
    out.append(sum(p.numel() for p in m.parameters()))
    out.append([k for k in m.state_dict()])
    return out

def bigru_packed(torch, init):
    nn = torch.nn
    R = torch.nn.utils.rnn
    pack_padded_sequence, pad_packed_sequence, pad_sequence, pack_sequence = R.pack_padded_sequence, R.pad_packed_sequence, R.pad_sequence, R.pack_sequence
    rng = np.random.default_rng(1)
    lens = [5, 2, 7, 3]
    seqs = [torch.from_numpy(rng.normal(size=(l, 4)).astype(np.float32)) for l in lens]
    rnn = nn.GRU(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    head = nn.Linear(12, 3)
    init(rnn, head)
    padded = pad_sequence(seqs, batch_first=True)
    out = [padded.shape]
    packed = pack_padded_sequence(padded, torch.tensor(lens), batch_first=True, enforce_sorted=False)
    out += [packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices]
    o, h = rnn(packed)
    u, ul = pad_packed_sequence(o, batch_first=True, total_length=8)
    out += [u, ul, h]
    last = torch.cat([h[-2], h[-1]], dim=1)
    y = torch.tensor([0, 1, 2, 1])
    loss = nn.functional.cross_entropy(head(last), y)
    loss.backward()
    out += [loss, rnn.weight_hh_l1_reverse.grad, head.weight.grad]
    ps = pack_sequence(seqs, enforce_sorted=False)
    o2, h2 = rnn(ps)
    out += [o2.data, h2]
    pd = pad_sequence(seqs, padding_value=-1.0)
    out.append(pd.shape); out.append(pd[:, 1])
    pl = pad_sequence(seqs, batch_first=True, padding_side="left")
    out.append(pl[1])
    return out

def cells(torch, init):
    nn = torch.nn
    lc = nn.LSTMCell(3, 5); gc = nn.GRUCell(5, 4); rc = nn.RNNCell(4, 4, nonlinearity="relu")
    init(lc, gc, rc)
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.normal(size=(6, 2, 3)).astype(np.float32))
    h = torch.zeros(2, 5); c = torch.zeros(2, 5); g = torch.zeros(2, 4); r = None
    outs = []
    for t in range(x.size(0)):
        h, c = lc(x[t], (h, c))
        g = gc(h, g)
        r = rc(g, r)
        outs.append(r)
    y = torch.stack(outs)
    y.pow(2).sum().backward()
    res = [y, lc.weight_ih.grad, gc.bias_hh.grad, rc.weight_hh.grad]
    # unbatched
    res.append(lc(x[0, 0])[0]); res.append(gc(x[0, 0, :3].repeat(2)[:5] if False else torch.ones(5)))
    return res

def embeddings(torch, init):
    nn = torch.nn
    e1 = nn.Embedding(10, 4, padding_idx=0, max_norm=1.0)
    e2 = nn.Embedding(10, 4, scale_grad_by_freq=True)
    e3 = nn.Embedding(10, 4, sparse=True)
    init(e1, e2, e3)
    idx = torch.tensor([[0, 2, 2, 5], [5, 5, 1, 0]])
    out = []
    v = e1(idx); out.append(v); out.append(e1.weight.detach().clone())
    v.sum().backward(); out.append(e1.weight.grad)
    e2(idx).pow(2).sum().backward(); out.append(e2.weight.grad)
    opt = torch.optim.SparseAdam(list(e3.parameters()), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        l = e3(idx).pow(2).sum()
        l.backward()
        g = e3.weight.grad
        out.append(g.is_sparse)
        opt.step()
    out.append(e3.weight.detach())
    out.append(g.coalesce().to_dense())
    fe = nn.Embedding.from_pretrained(torch.arange(12.).view(6, 2), freeze=True, padding_idx=1)
    out.append(fe(torch.tensor([1, 3]))); out.append(fe.weight.requires_grad)
    out.append(nn.functional.embedding(torch.tensor([1, 2]), torch.arange(12.).view(6, 2) , max_norm=2.0))
    out.append(repr(e1)); out.append(repr(e3))
    return out

def embbag(torch, init):
    nn = torch.nn
    b1 = nn.EmbeddingBag(10, 3, mode="sum")
    b2 = nn.EmbeddingBag(10, 3, mode="max")
    b3 = nn.EmbeddingBag(10, 3, mode="mean", padding_idx=2, include_last_offset=True)
    init(b1, b2, b3)
    inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 4])
    psw = torch.linspace(0.1, 0.8, 8)
    out = [b1(inp, off, per_sample_weights=psw), b2(inp, off), b3(inp, torch.tensor([0, 3, 8]))]
    x2 = torch.tensor([[1, 2, 4], [4, 3, 2]])
    out.append(b2(x2)); out.append(b1(x2))
    s = sum(o.sum() for o in out)
    s.backward()
    out += [b1.weight.grad, b2.weight.grad, b3.weight.grad]
    out.append(nn.functional.embedding_bag(inp, b1.weight.detach(), off, mode="mean"))
    out.append(repr(b3))
    # empty bag
    out.append(b1(inp, torch.tensor([0, 0, 4])))
    return out

def ce_variants(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.normal(size=(3, 5, 7))).requires_grad_()
    y = torch.from_numpy(rng.integers(0, 5, size=(3, 7)))
    y[0, 0] = -100; y[1, 3] = -100
    w = torch.tensor([1., 2., 0.5, 1., 3.], dtype=torch.float64)
    out = []
    for kw in [dict(), dict(ignore_index=-100, reduction="none"), dict(weight=w), dict(weight=w, label_smoothing=0.2),
               dict(label_smoothing=0.3, reduction="sum"), dict(weight=w, reduction="none", label_smoothing=0.1)]:
        l = F.cross_entropy(x, y, **kw)
        out.append(l)
    total = sum(l.sum() for l in out)
    total.backward()
    out.append(x.grad)
    # probabilities target
    p = torch.softmax(torch.from_numpy(rng.normal(size=(3, 5, 7))), 1)
    out.append(F.cross_entropy(x, p, label_smoothing=0.1))
    out.append(F.nll_loss(F.log_softmax(x, 1), y, weight=w))
    y2 = y.clone(); y2[y2 == -100] = 0
    out.append(torch.nn.CrossEntropyLoss(weight=w, ignore_index=3)(x, y2))
    # all ignored
    out.append(F.cross_entropy(x[:1, :, :1], torch.tensor([[-100]])))
    return out

def ctc(torch, init):
    nn = torch.nn
    T, N, C, S = 12, 3, 6, 4
    lin = nn.Linear(5, C); init(lin)
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.normal(size=(T, N, 5)).astype(np.float32))
    lp = lin(x).log_softmax(2)
    tg = torch.from_numpy(rng.integers(1, C, size=(N, S)))
    il = torch.tensor([12, 10, 9]); tl = torch.tensor([4, 2, 3])
    out = []
    for red in ["mean", "sum", "none"]:
        out.append(nn.CTCLoss(blank=0, reduction=red, zero_infinity=True)(lp, tg, il, tl))
    l = out[0]; l.backward(); out.append(lin.weight.grad)
    flat = torch.cat([tg[i, :tl[i]] for i in range(N)])
    out.append(nn.functional.ctc_loss(lp.detach(), flat, il, tl))
    out.append(nn.functional.ctc_loss(lp.detach().double(), tg, tuple(il.tolist()), tuple(tl.tolist()), reduction="sum"))
    # greedy decode
    best = lp.argmax(2).T
    dec = []
    for row in best.tolist():
        s, prev = [], 0
        for c in row:
            if c != prev and c != 0: s.append(c)
            prev = c
        dec.append(s)
    out.append(dec)
    # unbatched
    out.append(nn.functional.ctc_loss(lp[:, 0].detach(), tg[0], torch.tensor(12), torch.tensor(4)))
    return out

def adaptive_sm(torch, init):
    nn = torch.nn
    asm = nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs=[4, 10], div_value=2.0, head_bias=True)
    init(asm)
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.normal(size=(6, 8)).astype(np.float32))
    y = torch.tensor([0, 3, 5, 11, 19, 9])
    r = asm(x, y)
    r.loss.backward()
    out = [r.output, r.loss, asm.head.weight.grad, asm.tail[1][1].weight.grad, asm.log_prob(x), asm.predict(x)]
    out.append([k for k in asm.state_dict()]); out.append(repr(asm))
    out.append(asm(x[0], y[0]).output)
    return out

def transformer_full(torch, init):
    nn = torch.nn
    m = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=32,
                       dropout=0.0, batch_first=True, norm_first=True, activation="gelu")
    init(m)
    rng = np.random.default_rng(0)
    src = torch.from_numpy(rng.normal(size=(3, 7, 16)).astype(np.float32))
    tgt = torch.from_numpy(rng.normal(size=(3, 5, 16)).astype(np.float32))
    tm = nn.Transformer.generate_square_subsequent_mask(5)
    spm = torch.tensor([[False]*7, [False]*5 + [True]*2, [False]*3 + [True]*4])
    out = [tm]
    y = m(src, tgt, tgt_mask=tm, src_key_padding_mask=spm, memory_key_padding_mask=spm, tgt_is_causal=True)
    out.append(y)
    y.sum().backward()
    out.append(m.encoder.layers[0].self_attn.in_proj_weight.grad)
    out.append(m.decoder.layers[1].multihead_attn.out_proj.weight.grad)
    m.eval()
    with torch.no_grad():
        out.append(m(src, tgt, tgt_mask=tm, src_key_padding_mask=spm, memory_key_padding_mask=spm))
    out.append(sorted(m.state_dict().keys())[:8])
    out.append(str(tm.dtype)); out.append(nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64))
    return out

def encoder_masks(torch, init):
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(12, 3, 24, dropout=0.1, batch_first=False)
    enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(12), enable_nested_tensor=True)
    init(enc)
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.normal(size=(6, 2, 12)).astype(np.float32))
    kpm = torch.tensor([[False]*6, [False]*4 + [True]*2])
    fkpm = torch.zeros(2, 6).masked_fill(kpm, float("-inf"))
    out = []
    enc.eval()
    with torch.no_grad():
        a = enc(x, src_key_padding_mask=kpm)
        b = enc(x, src_key_padding_mask=fkpm)
        out += [a[:4], b[:4], a[:, 0]]
        cm = nn.Transformer.generate_square_subsequent_mask(6)
        out.append(enc(x, mask=cm, is_causal=True))
        out.append(enc(x, mask=cm.bool() if False else (cm == float("-inf"))))
    enc.train()
    torch.manual_seed(0)
    l = enc(x, src_key_padding_mask=kpm)
    out.append(l.shape)
    return out

def decoder_only(torch, init):
    nn = torch.nn
    dl = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=False, bias=False)
    dec = nn.TransformerDecoder(dl, 2)
    init(dec)
    rng = np.random.default_rng(2)
    t = torch.from_numpy(rng.normal(size=(2, 4, 8)).astype(np.float32))
    mem = torch.from_numpy(rng.normal(size=(2, 3, 8)).astype(np.float32))
    mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    y = dec(t, mem, tgt_mask=mask, tgt_is_causal=True, tgt_key_padding_mask=torch.tensor([[False]*4, [False, False, False, True]]))
    y.pow(2).mean().backward()
    return [y, dec.layers[0].linear1.weight.grad, dec.layers[1].norm3.weight.grad, len(dec.state_dict())]

def mha_variants(torch, init):
    nn = torch.nn
    m1 = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, batch_first=True)
    m2 = nn.MultiheadAttention(8, 4, add_bias_kv=True, add_zero_attn=True, dropout=0.0)
    m3 = nn.MultiheadAttention(8, 2, bias=False)
    init(m1, m2, m3)
    rng = np.random.default_rng(3)
    q = torch.from_numpy(rng.normal(size=(2, 4, 8)).astype(np.float32))
    k = torch.from_numpy(rng.normal(size=(2, 6, 5)).astype(np.float32))
    v = torch.from_numpy(rng.normal(size=(2, 6, 3)).astype(np.float32))
    kpm = torch.tensor([[False]*6, [False]*3 + [True]*3])
    out = []
    o, w = m1(q, k, v, key_padding_mask=kpm, average_attn_weights=False)
    out += [o, w]
    o, w = m1(q, k, v, key_padding_mask=kpm)
    out += [o, w]
    qs = q.transpose(0, 1)
    am = torch.from_numpy(rng.normal(size=(4, 4)).astype(np.float32))
    o, w = m2(qs, qs, qs, attn_mask=am, need_weights=True, average_attn_weights=False)
    out += [o, w]
    o, w = m2(qs, qs, qs, key_padding_mask=torch.tensor([[False]*4, [False, False, True, True]]))
    out += [o, w]
    o, w = m3(qs, qs, qs, need_weights=False)
    out += [o, w]
    am3 = torch.from_numpy(rng.normal(size=(4, 4, 4)).astype(np.float32))
    o, w = m3(qs, qs, qs, attn_mask=am3)
    out += [o, w]
    (out[0].sum() + out[4].sum() + out[8].sum()).backward()
    out += [m1.q_proj_weight.grad, m1.v_proj_weight.grad, m2.bias_k.grad, m2.in_proj_bias.grad]
    out.append(sorted(m1.state_dict())); out.append(sorted(m2.state_dict()))
    # unbatched
    o, w = m3(qs[:, 0], qs[:, 0], qs[:, 0])
    out += [o, w]
    return out

def decoding(torch, init):
    nn = torch.nn
    V = 11
    emb = nn.Embedding(V, 8); rnn = nn.GRU(8, 8, batch_first=True); head = nn.Linear(8, V)
    init(emb, rnn, head)
    out = []
    def step(tok, h):
        o, h = rnn(emb(tok), h)
        return head(o[:, -1]), h
    with torch.no_grad():
        # greedy
        tok = torch.tensor([[1], [2]]); h = None; seq = [tok]
        for _ in range(6):
            logits, h = step(tok, h)
            tok = logits.argmax(-1, keepdim=True); seq.append(tok)
        out.append(torch.cat(seq, 1))
        # top-k / top-p filtering
        logits, _ = step(torch.tensor([[1], [2]]), None)
        logits = logits / 0.7
        v, ix = torch.topk(logits, 4)
        out += [v, ix]
        lk = logits.clone(); lk[lk < v[:, [-1]]] = -float("inf")
        out.append(lk)
        sl, si = torch.sort(logits, descending=True)
        cp = torch.cumsum(torch.softmax(sl, -1), -1)
        rem = cp > 0.6
        rem[..., 1:] = rem[..., :-1].clone(); rem[..., 0] = False
        ir = rem.scatter(1, si, rem)
        lp = logits.masked_fill(ir, float("-inf"))
        out += [cp, ir, lp]
        torch.manual_seed(0)
        s = torch.multinomial(torch.softmax(lp, -1), num_samples=3, replacement=True)
        out.append(s.shape); out.append(bool(((s >= 0) & (s < V)).all()))
        s2 = torch.multinomial(torch.softmax(lk, -1), 2)
        out.append(bool(torch.isfinite(lk.gather(1, s2)).all()))
        # beam search
        B = 3
        beams = [([1], 0.0, None)]
        for _ in range(4):
            cand = []
            for toks, sc, hh in beams:
                lg, h2 = step(torch.tensor([[toks[-1]]]), hh)
                lps = torch.log_softmax(lg, -1)[0]
                tv, ti = lps.topk(B)
                for a, b in zip(tv.tolist(), ti.tolist()):
                    cand.append((toks + [b], sc + a, h2))
            beams = sorted(cand, key=lambda c: -c[1])[:B]
        out.append([b[0] for b in beams]); out.append([b[1] for b in beams])
    return out

def bahdanau(torch, init):
    nn = torch.nn; F = nn.functional
    class Enc(nn.Module):
        def __init__(s):
            super().__init__(); s.emb = nn.Embedding(12, 6); s.rnn = nn.GRU(6, 8, bidirectional=True, batch_first=True); s.fc = nn.Linear(16, 8)
        def forward(s, x, lens):
            p = nn.utils.rnn.pack_padded_sequence(s.emb(x), lens, batch_first=True, enforce_sorted=False)
            o, h = s.rnn(p)
            o, _ = nn.utils.rnn.pad_packed_sequence(o, batch_first=True)
            return o, torch.tanh(s.fc(torch.cat((h[-2], h[-1]), 1)))
    class Attn(nn.Module):
        def __init__(s):
            super().__init__(); s.W = nn.Linear(16 + 8, 8); s.v = nn.Linear(8, 1, bias=False)
        def forward(s, h, enc, mask):
            L = enc.shape[1]
            hh = h.unsqueeze(1).repeat(1, L, 1)
            e = torch.tanh(s.W(torch.cat((hh, enc), 2)))
            a = s.v(e).squeeze(2).masked_fill(mask == 0, -1e10)
            return F.softmax(a, 1)
    class Dec(nn.Module):
        def __init__(s):
            super().__init__(); s.emb = nn.Embedding(10, 6); s.att = Attn(); s.rnn = nn.GRU(16 + 6, 8); s.fc = nn.Linear(8 + 16 + 6, 10)
        def forward(s, tok, h, enc, mask):
            e = s.emb(tok).unsqueeze(0)
            a = s.att(h, enc, mask).unsqueeze(1)
            w = torch.bmm(a, enc).permute(1, 0, 2)
            o, h2 = s.rnn(torch.cat((e, w), 2), h.unsqueeze(0))
            return s.fc(torch.cat((o.squeeze(0), w.squeeze(0), e.squeeze(0)), 1)), h2.squeeze(0), a.squeeze(1)
    enc, dec = Enc(), Dec(); init(enc, dec)
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-2)
    rng = np.random.default_rng(4)
    src = torch.from_numpy(rng.integers(1, 12, size=(3, 5))); lens = torch.tensor([5, 3, 4])
    for i, l in enumerate(lens.tolist()): src[i, l:] = 0
    trg = torch.from_numpy(rng.integers(1, 10, size=(4, 3)))
    out = []
    for it in range(3):
        eo, h = enc(src, lens)
        mask = (src[:, :eo.shape[1]] != 0)
        tok = trg[0]; loss = 0
        for t in range(1, 4):
            lo, h, a = dec(tok, h, eo, mask)
            loss = loss + F.cross_entropy(lo, trg[t], ignore_index=0)
            tok = trg[t] if it % 2 == 0 else lo.argmax(1)
        opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(enc.parameters(), 1.0); opt.step()
        out += [loss.item(), a]
    return out

def rope_kv(torch, init):
    nn = torch.nn; F = nn.functional
    D, Hh = 16, 2
    hd = D // Hh
    def precompute(dim, end, theta=10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)
        freqs = torch.outer(t, freqs).float()
        return torch.polar(torch.ones_like(freqs), freqs)
    def apply(xq, fc):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        fc = fc.view(1, xq_.shape[1], 1, xq_.shape[-1])
        return torch.view_as_real(xq_ * fc).flatten(3).type_as(xq)
    def rot_half(x):
        x1, x2 = x.chunk(2, -1); return torch.cat((-x2, x1), -1)
    class Attn(nn.Module):
        def __init__(s):
            super().__init__(); s.wq = nn.Linear(D, D, bias=False); s.wk = nn.Linear(D, D, bias=False); s.wv = nn.Linear(D, D, bias=False); s.wo = nn.Linear(D, D, bias=False)
        def forward(s, x, fc, cache=None):
            B, L, _ = x.shape
            q = s.wq(x).view(B, L, Hh, hd); k = s.wk(x).view(B, L, Hh, hd); v = s.wv(x).view(B, L, Hh, hd)
            q, k = apply(q, fc), apply(k, fc)
            if cache is not None:
                k = torch.cat([cache[0], k], 1); v = torch.cat([cache[1], v], 1)
            q, kk, vv = (t.transpose(1, 2) for t in (q, k, v))
            o = F.scaled_dot_product_attention(q, kk, vv, is_causal=cache is None and L > 1)
            return s.wo(o.transpose(1, 2).contiguous().view(B, L, D)), (k, v)
    m = Attn(); init(m)
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.normal(size=(2, 6, D)).astype(np.float32))
    fcis = precompute(hd, 12)
    out = [fcis]
    full, _ = m(x, fcis[:6])
    out.append(full)
    with torch.no_grad():
        o, cache = m(x[:, :3], fcis[:3])
        steps = [o]
        for t in range(3, 6):
            o, cache = m(x[:, t:t+1], fcis[t:t+1], cache)
            steps.append(o)
        out.append(torch.cat(steps, 1))
    out.append(cache[0].shape)
    # HF style rotary
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
    pos = torch.arange(6).float()
    fr = torch.einsum("i,j->ij", pos, inv)
    embp = torch.cat((fr, fr), dim=-1)
    cos, sin = embp.cos()[None, None], embp.sin()[None, None]
    q = x.view(2, 6, Hh, hd).transpose(1, 2)
    out.append(q * cos + rot_half(q) * sin)
    full.sum().backward(); out.append(m.wq.weight.grad)
    # sinusoid PE
    pe = torch.zeros(10, D); position = torch.arange(0, 10, dtype=torch.float).unsqueeze(1)
    div = torch.exp(torch.arange(0, D, 2).float() * (-math.log(10000.0) / D))
    pe[:, 0::2] = torch.sin(position * div); pe[:, 1::2] = torch.cos(position * div)
    out.append(pe)
    out.append(torch.view_as_real(torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0]))))
    return out

def enc_fastpath(torch, init):
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)
    init(enc)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(3, 5, 8)).astype(np.float32))
    kpm = torch.tensor([[False]*5, [False]*3 + [True]*2, [False] + [True]*4])
    enc.eval()
    out = []
    with torch.no_grad():
        out.append(enc(x, src_key_padding_mask=kpm))
        out.append(layer.__class__(8, 2, 16, batch_first=True).eval()(x).shape)
        out.append(enc.layers[0](x, src_key_padding_mask=kpm))
    with torch.inference_mode():
        out.append(enc(x, src_key_padding_mask=kpm))
    out.append(enc(x, src_key_padding_mask=kpm))
    out.append(enc.use_nested_tensor if hasattr(enc, "use_nested_tensor") else None)
    mha = nn.MultiheadAttention(8, 2, batch_first=True); init(mha); mha.eval()
    with torch.no_grad():
        o, w = mha(x, x, x, key_padding_mask=kpm, need_weights=False)
        out += [o, w]
    return out

def sdpa_misc(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(1)
    q = torch.from_numpy(rng.normal(size=(2, 4, 5, 8)).astype(np.float32))
    k = torch.from_numpy(rng.normal(size=(2, 2, 7, 8)).astype(np.float32))
    v = torch.from_numpy(rng.normal(size=(2, 2, 7, 6)).astype(np.float32))
    out = [F.scaled_dot_product_attention(q, k, v, enable_gqa=True)]
    m = torch.ones(5, 7, dtype=torch.bool).tril(2)
    out.append(F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), attn_mask=m, scale=0.3))
    out.append(F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True))
    fm = torch.zeros(2, 1, 5, 7).masked_fill(~m, float("-inf"))
    out.append(F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), attn_mask=fm, dropout_p=0.0))
    from_attn = torch.nn.attention
    with from_attn.sdpa_kernel([from_attn.SDPBackend.MATH]):
        out.append(F.scaled_dot_product_attention(q, q, q))
    with from_attn.sdpa_kernel(from_attn.SDPBackend.EFFICIENT_ATTENTION):
        pass
    # row fully masked -> nan in torch
    m2 = torch.zeros(5, 7, dtype=torch.bool); m2[1:] = True
    out.append(F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), attn_mask=m2))
    return out

def beam_flat(torch, init):
    nn = torch.nn
    V, B, K = 7, 2, 3
    dec = nn.LSTM(4, 6, batch_first=True); emb = nn.Embedding(V, 4); proj = nn.Linear(6, V)
    init(dec, emb, proj)
    out = []
    with torch.no_grad():
        tokens = torch.full((B * K, 1), 1, dtype=torch.long)
        scores = torch.zeros(B, K); scores[:, 1:] = -1e9
        h = None
        for step in range(4):
            o, h = dec(emb(tokens[:, -1:]), h)
            lp = torch.log_softmax(proj(o[:, -1]), -1).view(B, K, V)
            cand = (scores.unsqueeze(-1) + lp).view(B, -1)
            top, ix = cand.topk(K, dim=-1)
            beam = torch.div(ix, V, rounding_mode="floor"); tok = ix % V
            base = (torch.arange(B) * K).unsqueeze(1)
            sel = (base + beam).view(-1)
            tokens = torch.cat([tokens[sel], tok.view(-1, 1)], 1)
            h = tuple(t[:, sel] for t in h)
            scores = top
            out += [beam, tok, scores]
        lengths = (tokens != 0).sum(-1).float()
        norm = scores.view(-1) / lengths ** 0.6
        out.append(norm); out.append(tokens)
        best = norm.view(B, K).argmax(-1); out.append(best)
        rep = torch.zeros(B * K, V).scatter_add_(1, tokens, torch.ones_like(tokens, dtype=torch.float)); out.append(rep)
        lg = proj(o[:, -1]); pen = torch.where(lg > 0, lg / 1.2, lg * 1.2); out.append(lg.gather(1, tokens).shape); out.append(pen)
        out.append(torch.nn.functional.gumbel_softmax(lg, tau=0.5, hard=True).sum(-1))
    return out

def embedding_extra(torch, init):
    nn = torch.nn; F = nn.functional
    e = nn.Embedding(8, 3, max_norm=0.5, norm_type=1.0, padding_idx=-1)
    init(e)
    out = [e.padding_idx, e(torch.tensor([7, 1, 1, 2])), e.weight.detach().clone()]
    w = torch.arange(24.).view(8, 3)
    out.append(F.embedding(torch.tensor([[1, 2], [3, 7]]), w, padding_idx=7))
    emb = nn.Embedding.from_pretrained(w, freeze=False, sparse=True, max_norm=10.0)
    emb(torch.tensor([1, 5])).sum().backward()
    out += [emb.weight.grad.to_dense(), emb.weight, emb.sparse, repr(emb)]
    bag = nn.EmbeddingBag.from_pretrained(w, mode="sum", padding_idx=0)
    out.append(bag(torch.tensor([[0, 1], [2, 0]])))
    oh = F.one_hot(torch.tensor([[0, 2], [1, 3]])); out += [oh, oh.dtype == torch.int64]
    out.append(F.one_hot(torch.tensor([1, 0]), num_classes=4))
    bl = nn.Bilinear(3, 4, 2); init(bl)
    out.append(bl(torch.ones(2, 3), torch.ones(2, 4))); out.append(repr(bl))
    return out

def stn(torch, init):
    nn = torch.nn; F = nn.functional
    loc = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 3 * 3, 6))
    init(loc)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(2, 1, 8, 8))).float().requires_grad_()
    theta = loc(x).view(-1, 2, 3) * 0.1 + torch.tensor([[1., 0, 0], [0, 1, 0]])
    out = []
    for ac in (False, True):
        g = F.affine_grid(theta, x.size(), align_corners=ac)
        out.append(g)
        for mode in ("bilinear", "nearest", "bicubic"):
            for pm in ("zeros", "border", "reflection"):
                out.append(F.grid_sample(x, g, mode=mode, padding_mode=pm, align_corners=ac))
    tot = sum((o * (i + 1)).sum() for i, o in enumerate(out[1:]) if o.dtype == torch.float32)
    tot.backward()
    out += [x.grad, loc[0].weight.grad, loc[4].bias.grad]
    # 3d
    th3 = torch.eye(3, 4).unsqueeze(0) + 0.05 * torch.from_numpy(rng.normal(size=(1, 3, 4))).float()
    g3 = F.affine_grid(th3, (1, 1, 3, 4, 5), align_corners=False)
    v = torch.from_numpy(rng.normal(size=(1, 1, 3, 4, 5))).float()
    out += [g3, F.grid_sample(v, g3, align_corners=False), F.grid_sample(v, g3, mode="nearest", padding_mode="border", align_corners=True)]
    # grid outside
    gbig = torch.from_numpy(rng.uniform(-1.7, 1.7, size=(2, 5, 6, 2))).float()
    for mode in ("bilinear", "nearest", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                out.append(F.grid_sample(x.detach(), gbig, mode=mode, padding_mode=pm, align_corners=ac))
    return out

def interp(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.normal(size=(2, 3, 7, 9))).requires_grad_()
    out = []
    cases = [dict(size=(10, 13), mode="nearest"), dict(size=(10, 13), mode="nearest-exact"),
             dict(scale_factor=1.7, mode="nearest"), dict(scale_factor=0.6, mode="nearest-exact"),
             dict(scale_factor=1.5, mode="bilinear", align_corners=False), dict(size=(4, 5), mode="bilinear", align_corners=True),
             dict(size=(4, 5), mode="bilinear", antialias=True), dict(size=(3, 4), mode="bicubic", antialias=True),
             dict(size=(12, 11), mode="bicubic", align_corners=False), dict(size=(12, 11), mode="bicubic", antialias=True),
             dict(scale_factor=(1.3, 0.7), mode="bilinear", recompute_scale_factor=True),
             dict(scale_factor=(1.3, 0.7), mode="bilinear", recompute_scale_factor=False),
             dict(scale_factor=0.45, mode="area"), dict(size=(3, 4), mode="area"), dict(size=(5, 5), mode="bicubic", align_corners=True),
             dict(scale_factor=2.5, mode="nearest", recompute_scale_factor=True)]
    for kw in cases:
        y = F.interpolate(x, **kw)
        out.append(y)
    sum((o * (i + 1)).mean() for i, o in enumerate(out)).backward()
    out.append(x.grad)
    v = torch.from_numpy(rng.normal(size=(1, 2, 3, 4, 5)))
    out += [F.interpolate(v, scale_factor=1.5, mode="trilinear", align_corners=False),
            F.interpolate(v, size=(2, 6, 7), mode="trilinear", align_corners=True),
            F.interpolate(v, size=(5, 5, 5), mode="nearest"), F.interpolate(v, size=(2, 2, 3), mode="area")]
    s = torch.from_numpy(rng.normal(size=(2, 3, 10)))
    out += [F.interpolate(s, scale_factor=0.35, mode="linear"), F.interpolate(s, size=15, mode="linear", align_corners=True),
            F.interpolate(s, size=4, mode="nearest-exact"), F.interpolate(s, size=7, mode="area")]
    out.append(F.upsample(s, scale_factor=2) if hasattr(F, "upsample") else 0)
    u = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    out.append(u(x.detach())); out.append(repr(u))
    out.append(torch.nn.UpsamplingNearest2d(scale_factor=2)(x.detach()[:, :, :2, :2]))
    out.append(torch.nn.UpsamplingBilinear2d(size=(3, 3))(x.detach()))
    xi = torch.from_numpy(rng.integers(0, 255, size=(1, 3, 5, 6)).astype(np.uint8))
    out.append(F.interpolate(xi, size=(8, 9), mode="nearest"))
    out.append(F.interpolate(xi, size=(8, 9), mode="bilinear", antialias=False))
    out.append(F.interpolate(xi, size=(3, 4), mode="bilinear", antialias=True))
    return out

def pixshuf_fold(torch, init):
    nn = torch.nn; F = nn.functional
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.normal(size=(2, 8, 3, 5)).astype(np.float32)).requires_grad_()
    ps = nn.PixelShuffle(2); pu = nn.PixelUnshuffle(2)
    y = ps(x); out = [y, pu(y), F.pixel_unshuffle(torch.ones(1, 1, 4, 4), 2).shape, repr(ps)]
    # patch embedding with unfold
    img = torch.from_numpy(rng.normal(size=(2, 3, 8, 8)).astype(np.float32))
    patches = F.unfold(img, kernel_size=4, stride=4)
    out.append(patches.shape); out.append(patches.transpose(1, 2)[0, 1])
    pe = nn.Conv2d(3, 6, 4, 4); init(pe)
    out.append(pe(img).flatten(2).transpose(1, 2))
    w = pe.weight.view(6, -1)
    out.append(patches.transpose(1, 2) @ w.t() + pe.bias)
    # im2col conv by hand
    conv = nn.Conv2d(3, 5, 3, padding=1, stride=2, dilation=1, bias=True); init(conv)
    cols = F.unfold(img, 3, padding=1, stride=2)
    yy = (conv.weight.view(5, -1) @ cols + conv.bias[:, None]).view(2, 5, 4, 4)
    out += [yy, conv(img)]
    cols2 = F.unfold(img, (2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))
    out.append(cols2.shape)
    out.append(F.fold(cols2, (8, 8), (2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2)))
    fo = nn.Fold(output_size=(4, 5), kernel_size=2, stride=1); uf = nn.Unfold(kernel_size=2)
    z = torch.from_numpy(rng.normal(size=(1, 2, 4, 5)).astype(np.float32)).requires_grad_()
    r = fo(uf(z)); r.sum().backward(); out += [r, z.grad, repr(fo), repr(uf)]
    out.append(F.fold(torch.ones(3 * 4, 9), (4, 4), 2))  # unbatched
    ((y ** 2).sum()).backward(); out.append(x.grad)
    return out

def convT(torch, init):
    nn = torch.nn
    c1 = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    c2 = nn.ConvTranspose2d(6, 2, (3, 2), stride=(2, 3), padding=(0, 1), output_padding=(1, 2), dilation=(1, 2), bias=False)
    c3 = nn.ConvTranspose1d(3, 3, 4, stride=2, padding=1, groups=3)
    c4 = nn.ConvTranspose3d(2, 2, 2, stride=2)
    dw = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False); pw = nn.Conv2d(4, 8, 1)
    init(c1, c2, c3, c4, dw, pw)
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.normal(size=(2, 4, 5, 5)).astype(np.float32)).requires_grad_()
    y1 = c1(x); y2 = c2(y1)
    out = [y1, y2, c1(x, output_size=[9, 10]).shape]
    y3 = c3(torch.from_numpy(rng.normal(size=(1, 3, 6)).astype(np.float32)))
    y4 = c4(torch.from_numpy(rng.normal(size=(1, 2, 2, 2, 3)).astype(np.float32)))
    ds = pw(dw(x))
    out += [y3, y4, ds]
    (y2.sum() + y3.sum() + y4.sum() + ds.pow(2).sum()).backward()
    out += [x.grad, c1.weight.grad, c2.weight.grad, c3.bias.grad, dw.weight.grad, c1.weight.shape]
    out += [repr(c1), repr(c2), repr(dw)]
    out.append(nn.functional.conv_transpose2d(x.detach(), c1.weight.detach(), c1.bias.detach(), 2, 1, 1, 2))
    return out

def pools(torch, init):
    nn = torch.nn; F = nn.functional
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.normal(size=(2, 3, 9, 7))).requires_grad_()
    mp = nn.MaxPool2d(2, stride=2, return_indices=True, ceil_mode=True)
    y, idx = mp(x)
    un = nn.MaxUnpool2d(2, stride=2)
    out = [y, idx, un(y, idx, output_size=x.size())]
    y2, i2 = F.max_pool2d(x, 3, 2, 1, dilation=1, return_indices=True)
    out += [y2, i2, F.max_unpool2d(y2, i2, 3, 2, 1, output_size=(9, 7))]
    out.append(F.max_pool2d(x, (2, 3), dilation=(2, 1), ceil_mode=True))
    for s in [(3, 5), (4, 4), 5, (None, 3), 1]:
        out.append(nn.AdaptiveAvgPool2d(s)(x)); out.append(nn.AdaptiveMaxPool2d(s)(x))
    am, ai = F.adaptive_max_pool2d(x, (4, 3), return_indices=True); out += [am, ai]
    out.append(nn.LPPool2d(2, 3, stride=2)(x)); out.append(nn.LPPool2d(1.5, (2, 3))(x.abs()))
    out.append(nn.LPPool1d(3, 2)(x[:, :, 0].abs()))
    out.append(nn.AvgPool2d(3, 2, padding=1, count_include_pad=False, ceil_mode=True)(x))
    out.append(nn.AvgPool2d(3, 2, padding=1, divisor_override=4)(x))
    out.append(F.avg_pool1d(x[:, :, 0], 3, 2, 1, ceil_mode=True, count_include_pad=True))
    s = sum((o * (i + 1)).sum() for i, o in enumerate(out) if o.dtype == torch.float64)
    s.backward()
    out.append(x.grad)
    torch.manual_seed(0)
    f = nn.FractionalMaxPool2d(3, output_size=(5, 4), return_indices=True)
    fy, fi = f(x.detach()); out += [fy.shape, fi.shape, fi.dtype == torch.int64]
    f2 = nn.FractionalMaxPool2d(2, output_ratio=0.5)
    out.append(f2(x.detach()).shape)
    fv = x.detach().flatten(2).gather(2, fi.flatten(2)).view_as(fy)
    out.append(bool((fv == fy).all()))
    x1 = torch.from_numpy(rng.normal(size=(2, 3, 10)))
    y1, i1 = F.max_pool1d(x1, 3, 2, return_indices=True)
    out += [y1, i1, F.max_unpool1d(y1, i1, 3, 2), nn.AdaptiveMaxPool1d(4)(x1), nn.AdaptiveAvgPool1d(3)(x1)]
    x3 = torch.from_numpy(rng.normal(size=(1, 2, 5, 6, 7)))
    y3, i3 = F.max_pool3d(x3, 2, return_indices=True)
    out += [y3, i3, F.max_unpool3d(y3, i3, 2, output_size=x3.shape[2:]), nn.AdaptiveAvgPool3d((2, 3, 4))(x3), nn.AdaptiveMaxPool3d(3)(x3), F.avg_pool3d(x3, 2, ceil_mode=True)]
    out += [repr(mp), repr(un), repr(nn.LPPool2d(2, 3)), repr(nn.AdaptiveAvgPool2d((None, 3)))]
    return out

def padding(torch, init):
    nn = torch.nn; F = nn.functional
    convs = [nn.Conv2d(2, 3, 3, padding=2, padding_mode=m, dilation=2) for m in ("zeros", "reflect", "replicate", "circular")]
    convs += [nn.Conv2d(2, 3, (3, 5), padding="same", padding_mode=m) for m in ("reflect", "circular")]
    convs.append(nn.Conv1d(2, 2, 4, padding="same", padding_mode="replicate"))
    init(*convs)
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.normal(size=(2, 2, 6, 7)).astype(np.float32)).requires_grad_()
    out = [c(x) for c in convs[:-1]] + [convs[-1](x[:, :, 0])]
    sum(o.sum() * (i + 1) for i, o in enumerate(out)).backward()
    out += [x.grad] + [c.weight.grad for c in convs]
    xd = x.detach()
    for mode in ("constant", "reflect", "replicate", "circular"):
        out.append(F.pad(xd, (1, 2, 2, 1), mode=mode))
        out.append(F.pad(xd[:, :, 0], (3, 1), mode=mode))
        out.append(F.pad(xd.unsqueeze(2).expand(2, 2, 3, 6, 7), (1, 1, 2, 0, 1, 2), mode=mode))
    out.append(F.pad(xd, (-1, 2, 0, -2)))
    out.append(F.pad(xd, (1, 1), value=3.5))
    out.append(F.pad(xd[0], (2, 2, 1, 1), mode="reflect"))
    out += [nn.ReflectionPad2d((1, 0, 2, 1))(xd), nn.ReplicationPad1d(2)(xd[:, :, 0]), nn.ZeroPad2d(1)(xd), nn.ConstantPad3d(1, 2.0)(xd[None]), nn.CircularPad2d(2)(xd)]
    out += [repr(convs[1]), repr(convs[4]), repr(nn.ReflectionPad2d(2))]
    return out

def norms(torch, init):
    nn = torch.nn; F = nn.functional
    gn = nn.GroupNorm(2, 6); gn2 = nn.GroupNorm(3, 6, affine=False, eps=1e-3)
    inn = nn.InstanceNorm2d(6, affine=True, track_running_stats=True, momentum=0.2)
    inn2 = nn.InstanceNorm2d(6)
    ln = nn.LayerNorm([6, 4, 5]); ln2 = nn.LayerNorm(5, elementwise_affine=False, bias=False)
    bn = nn.BatchNorm2d(6, momentum=None); bn2 = nn.BatchNorm2d(6, affine=False, track_running_stats=False)
    bn1 = nn.BatchNorm1d(6)
    mods = [gn, gn2, inn, inn2, ln, ln2, bn, bn2, bn1]
    init(*mods); [m.double() for m in mods]
    rng = np.random.default_rng(0)
    out = []
    for it in range(3):
        x = torch.from_numpy(rng.normal(loc=it, size=(3, 6, 4, 5)).astype(np.float64)).requires_grad_()
        ys = [m(x) for m in mods[:-1]] + [bn1(x[:, :, 0, 0]), bn1(x[:, :, 0])]
        sum((y * (i + 1)).sum() + y.pow(2).sum() for i, y in enumerate(ys)).backward()
        out += ys + [x.grad]
    out += [inn.running_mean, inn.running_var, bn.running_mean, bn.running_var, bn.num_batches_tracked, bn1.running_var]
    for m in mods: m.eval()
    x = torch.from_numpy(rng.normal(size=(3, 6, 4, 5)).astype(np.float64))
    out += [m(x) for m in mods[:-1]] + [bn1(x[:, :, 0])]
    out += [gn.weight.grad, inn.weight.grad, ln.bias.grad, bn.weight.grad]
    out += [repr(m) for m in mods]
    out.append(sorted(inn.state_dict())); out.append(sorted(bn2.state_dict()))
    out.append(F.group_norm(x, 3)); out.append(F.instance_norm(x, use_input_stats=True))
    out.append(F.layer_norm(x, (5,), eps=1e-2))
    out.append(F.batch_norm(x, torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64), training=False))
    out.append(nn.LocalResponseNorm(3)(x))
    out.append(nn.InstanceNorm1d(6)(x[:, :, 0]))
    out.append(F.rms_norm(x, (4, 5)) if hasattr(F, "rms_norm") else 0)
    out.append(nn.RMSNorm([5], eps=1e-5)(x))
    return out

def channels_last_net(torch, init):
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(), nn.Conv2d(8, 8, 3, groups=8, padding=1),
                        nn.Hardswish(), nn.Conv2d(8, 4, 1), nn.Mish(), nn.Dropout2d(0.3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.AlphaDropout(0.2), nn.Linear(4, 3))
    init(net); net.double()
    net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2, weight_decay=0.05, amsgrad=True)
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.normal(size=(4, 3, 6, 6)).astype(np.float64)).to(memory_format=torch.channels_last)
    y = torch.tensor([0, 1, 2, 1])
    out = [x.is_contiguous(memory_format=torch.channels_last), net[0].weight.is_contiguous(memory_format=torch.channels_last), x.stride()]
    net.eval()  # dropouts off
    for _ in range(3):
        net.train(); net[7].eval(); net[10].eval()
        l = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(); l.backward(); opt.step(); out.append(l.item())
    net.eval()
    with torch.no_grad():
        h = net[:3](x); out.append(h.is_contiguous(memory_format=torch.channels_last)); out.append(h.stride())
        out.append(net(x))
    out.append(net[1].running_mean)
    out.append(net[0].weight.grad.stride())
    out.append(torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride())
    out.append(x.contiguous().stride()); out.append(x.clone().stride()); out.append((x + 1).stride())
    out.append(x.permute(0, 2, 3, 1).stride())
    return out

def activations(torch, init):
    nn = torch.nn; F = nn.functional
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.normal(scale=3, size=(50,)).astype(np.float32)).requires_grad_()
    mods = [nn.SiLU(), nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(), nn.GELU(approximate="tanh"), nn.GELU(), nn.ELU(0.5), nn.CELU(1.5), nn.SELU(),
            nn.LeakyReLU(0.2), nn.PReLU(), nn.RReLU(), nn.Softplus(2, 5), nn.Softsign(), nn.Tanhshrink(), nn.Hardtanh(-2, 2), nn.ReLU6(),
            nn.LogSigmoid(), nn.Softshrink(0.5), nn.Hardshrink(0.7), nn.Threshold(0.1, -1.0), nn.GLU()]
    init(*mods)
    mods[11].eval()
    ys = [m(x) for m in mods]
    sum(y.sum() * (i + 1) for i, y in enumerate(ys)).backward()
    out = ys + [x.grad, mods[10].weight.grad] + [repr(m) for m in mods]
    xi = x.detach().clone()
    F.silu(xi, inplace=True); F.hardswish(xi.clone(), inplace=True); F.mish(xi.clone(), inplace=True)
    out.append(xi)
    out.append(nn.PReLU(3, init=0.1)(x.detach()[:12].view(2, 3, 2)))
    return out

def unet(torch, init):
    nn = torch.nn; F = nn.functional
    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True), nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
    class UNet(nn.Module):
        def __init__(s):
            super().__init__()
            s.d1 = block(1, 4); s.d2 = block(4, 8); s.b = block(8, 16)
            s.u2 = nn.ConvTranspose2d(16, 8, 2, 2); s.c2 = block(16, 8)
            s.u1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True); s.c1 = block(16 + 4, 4)
            s.out = nn.Conv2d(4, 2, 1)
        def forward(s, x):
            a = s.d1(x); b = s.d2(F.max_pool2d(a, 2)); c = s.b(F.max_pool2d(b, 2))
            u = s.u2(c)
            dy, dx = b.size(2) - u.size(2), b.size(3) - u.size(3)
            u = F.pad(u, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
            d = s.c2(torch.cat([b, u], 1))
            d = s.c1(torch.cat([a, s.u1(torch.cat([d, d], 1))], 1))
            return s.out(d)
    m = UNet(); init(m)
    opt = torch.optim.Adam(m.parameters(), 1e-3)
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.normal(size=(2, 1, 8, 8)).astype(np.float32))
    t = torch.from_numpy((rng.uniform(size=(2, 8, 8)) > 0.5).astype(np.int64))
    out = []
    def dice_loss(logits, target, eps=1.0):
        p = logits.softmax(1)
        oh = F.one_hot(target, 2).permute(0, 3, 1, 2).float()
        inter = (p * oh).sum((0, 2, 3)); card = (p + oh).sum((0, 2, 3))
        return 1 - ((2 * inter + eps) / (card + eps)).mean()
    def focal(logits, target, gamma=2.0, alpha=0.25):
        ce = F.cross_entropy(logits, target, reduction="none")
        pt = torch.exp(-ce)
        return (alpha * (1 - pt) ** gamma * ce).mean()
    for _ in range(3):
        lo = m(x)
        l = F.cross_entropy(lo, t) + dice_loss(lo, t) + focal(lo, t)
        opt.zero_grad(); l.backward(); opt.step(); out.append(l.item())
    bce = F.binary_cross_entropy_with_logits(lo[:, 0], t.float(), pos_weight=torch.tensor(2.0))
    p = torch.sigmoid(lo[:, 0]); pt = torch.where(t == 1, p, 1 - p)
    out.append(bce); out.append(((1 - pt) ** 2 * F.binary_cross_entropy(p, t.float(), reduction="none")).mean())
    m.eval()
    with torch.no_grad():
        pr = m(x).argmax(1)
        out.append(pr)
        iou = ((pr == 1) & (t == 1)).sum().float() / ((pr == 1) | (t == 1)).sum().clamp(min=1)
        out.append(iou)
    return out

def boxes(torch, init):
    rng = np.random.default_rng(4)
    xy = rng.uniform(0, 20, size=(12, 2)); wh = rng.uniform(2, 10, size=(12, 2))
    b = torch.tensor(np.concatenate([xy, xy + wh], 1), dtype=torch.float32)
    scores = torch.tensor(rng.uniform(size=12), dtype=torch.float32)
    def area(b): return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    def iou(a, c):
        lt = torch.max(a[:, None, :2], c[:, :2]); rb = torch.min(a[:, None, 2:], c[:, 2:])
        wh = (rb - lt).clamp(min=0); inter = wh[..., 0] * wh[..., 1]
        return inter / (area(a)[:, None] + area(c) - inter)
    def nms(b, s, th):
        order = s.argsort(descending=True); keep = []
        while order.numel() > 0:
            i = order[0]; keep.append(i.item())
            if order.numel() == 1: break
            ious = iou(b[i].unsqueeze(0), b[order[1:]])[0]
            order = order[1:][ious <= th]
        return torch.tensor(keep, dtype=torch.long)
    out = [iou(b, b), nms(b, scores, 0.3)]
    cxcywh = torch.cat([(b[:, :2] + b[:, 2:]) / 2, b[:, 2:] - b[:, :2]], 1)
    x0, y0, w, h = cxcywh.unbind(-1)
    back = torch.stack([x0 - 0.5 * w, y0 - 0.5 * h, x0 + 0.5 * w, y0 + 0.5 * h], -1)
    out += [cxcywh, back]
    # GIoU
    ii = iou(b, b); lt = torch.min(b[:, None, :2], b[:, :2]); rb = torch.max(b[:, None, 2:], b[:, 2:])
    enc = (rb - lt).clamp(min=0).prod(-1)
    union = area(b)[:, None] + area(b) - ii * 0
    out.append(ii - (enc - union) / enc)
    # batched nms offsets trick
    cls = torch.from_numpy(rng.integers(0, 3, size=12))
    off = cls.to(b) * (b.max() + 1)
    out.append(nms(b + off[:, None], scores, 0.5))
    # topk + gather + clamp + matching
    mx, arg = ii.max(0); out += [mx, arg]
    v, i = scores.topk(5, sorted=True); out += [v, i, b.index_select(0, i)]
    out.append(b.clamp(min=2, max=18)); out.append(b[:, 0::2].clamp_(0, 15))
    out.append(torch.where(ii > 0.1, ii, torch.zeros_like(ii)).nonzero())
    anchors = torch.stack(torch.meshgrid(torch.arange(3.), torch.arange(4.), indexing="ij"), -1).reshape(-1, 2)
    out.append(anchors)
    return out

def roi_align(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(5)
    feat = torch.from_numpy(rng.normal(size=(2, 3, 10, 12)).astype(np.float32)).requires_grad_()
    rois = torch.tensor([[0, 1.0, 2.0, 7.0, 6.0], [1, 0.5, 0.5, 11.0, 9.0], [0, 3.3, 1.1, 5.7, 8.2]])
    P = 4
    def roi_align_by_grid(feat, rois, P):
        N, C, H, W = feat.shape
        outs = []
        for r in rois:
            bi = int(r[0]); x1, y1, x2, y2 = r[1:]
            theta = torch.zeros(1, 2, 3)
            theta[0, 0, 0] = (x2 - x1) / (W - 1); theta[0, 0, 2] = (x1 + x2) / (W - 1) - 1
            theta[0, 1, 1] = (y2 - y1) / (H - 1); theta[0, 1, 2] = (y1 + y2) / (H - 1) - 1
            g = F.affine_grid(theta, (1, C, P, P), align_corners=True)
            outs.append(F.grid_sample(feat[bi:bi + 1], g, mode="bilinear", align_corners=True))
        return torch.cat(outs)
    r = roi_align_by_grid(feat, rois, P)
    r.pow(2).sum().backward()
    out = [r, feat.grad]
    # deformable-style sampling: offsets predicted by a conv
    off_conv = torch.nn.Conv2d(3, 2, 3, padding=1); init(off_conv)
    x = feat.detach()
    off = off_conv(x).permute(0, 2, 3, 1) * 0.1
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, 10), torch.linspace(-1, 1, 12), indexing="ij")
    base = torch.stack([xs, ys], -1).unsqueeze(0).expand(2, -1, -1, -1)
    s = F.grid_sample(x, base + off, align_corners=True, padding_mode="border")
    s.sum().backward()
    out += [s, off_conv.weight.grad]
    return out

def augment(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(6)
    img = torch.from_numpy(rng.uniform(size=(2, 3, 8, 10)).astype(np.float32))
    out = [torch.flip(img, [3]), img.flip(-2), torch.fliplr(img[0, 0]), torch.flipud(img[0, 0]), torch.roll(img, shifts=(2, -3), dims=(2, 3)), torch.roll(img, 5)]
    out.append(img.narrow(2, 1, 5).narrow(3, 2, 6)); out.append(torch.rot90(img, 1, [2, 3])); out.append(torch.rot90(img, -3, [2, 3]))
    # color jitter
    b, c, s = 1.2, 0.8, 1.3
    x = (img * b).clamp(0, 1)
    gray = (0.299 * x[:, 0] + 0.587 * x[:, 1] + 0.114 * x[:, 2]).unsqueeze(1)
    x = (c * x + (1 - c) * gray.mean(dim=(-3, -2, -1), keepdim=True)).clamp(0, 1)
    x = (s * x + (1 - s) * gray).clamp_(0, 1)
    out.append(x)
    # gaussian blur with grouped conv
    k = 5; sigma = 1.1
    ax = torch.arange(k, dtype=torch.float32) - (k - 1) / 2
    g1 = torch.exp(-0.5 * (ax / sigma) ** 2); g1 = g1 / g1.sum()
    k2 = torch.outer(g1, g1)
    w = k2.expand(3, 1, k, k)
    out.append(F.conv2d(F.pad(img, (2, 2, 2, 2), mode="reflect"), w, groups=3))
    sep = F.conv2d(F.conv2d(img, g1.view(1, 1, 1, k).repeat(3, 1, 1, 1), padding=(0, 2), groups=3), g1.view(1, 1, k, 1).repeat(3, 1, 1, 1), padding=(2, 0), groups=3)
    out.append(sep)
    # normalize, to uint8 and back
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1); std = torch.tensor([0.229, 0.224, 0.225])[:, None, None]
    out.append((img - mean) / std)
    u8 = (img * 255).round().to(torch.uint8); out.append(u8); out.append(u8.float().div(255))
    out.append(img.mul(255).byte()); out.append(torch.clamp(img * 300, 0, 255).to(torch.uint8).sum(dtype=torch.int64))
    # random resized crop deterministic
    i, j, h, w_ = 1, 2, 5, 6
    crop = img[..., i:i + h, j:j + w_]
    out.append(F.interpolate(crop, size=(8, 8), mode="bilinear", align_corners=False, antialias=True))
    # cutout
    m = torch.ones_like(img); m[:, :, 2:5, 3:7] = 0; out.append(img * m)
    # mixup
    lam = 0.3; perm = torch.tensor([1, 0]); out.append(lam * img + (1 - lam) * img[perm])
    # sobel
    sx = torch.tensor([[-1., 0, 1], [-2, 0, 2], [-1, 0, 1]])
    gx = F.conv2d(gray, sx.view(1, 1, 3, 3), padding=1); gy = F.conv2d(gray, sx.t().reshape(1, 1, 3, 3), padding=1)
    out.append(torch.hypot(gx, gy)); out.append(torch.atan2(gy, gx))
    # hsv-ish
    mx, am = img.max(1); mn = img.amin(1); out += [mx, am, mx - mn]
    out.append(torch.histc(img, bins=10, min=0, max=1))
    out.append(torch.bucketize(img[0, 0, 0], torch.tensor([0.25, 0.5, 0.75])))
    return out

def tcn(torch, init):
    nn = torch.nn; F = nn.functional
    wn = nn.utils.parametrizations.weight_norm
    class Chomp(nn.Module):
        def __init__(s, c): super().__init__(); s.c = c
        def forward(s, x): return x[:, :, :-s.c].contiguous()
    class Block(nn.Module):
        def __init__(s, i, o, k, d):
            super().__init__()
            p = (k - 1) * d
            s.net = nn.Sequential(wn(nn.Conv1d(i, o, k, padding=p, dilation=d)), Chomp(p), nn.ReLU(), nn.Dropout(0.0),
                                  nn.utils.weight_norm(nn.Conv1d(o, o, k, padding=p, dilation=d)), Chomp(p), nn.ReLU())
            s.down = nn.Conv1d(i, o, 1) if i != o else None
        def forward(s, x):
            r = x if s.down is None else s.down(x)
            return F.relu(s.net(x) + r)
    net = nn.Sequential(Block(2, 6, 3, 1), Block(6, 6, 3, 2), Block(6, 6, 3, 4))
    head = nn.Linear(6, 1)
    init(net, head)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(4, 2, 20))).float(); y = torch.from_numpy(rng.normal(size=(4, 1))).float()
    opt = torch.optim.Adam(list(net.parameters()) + list(head.parameters()), lr=2e-3)
    out = []
    for _ in range(3):
        l = F.mse_loss(head(net(x)[:, :, -1]), y)
        opt.zero_grad(); l.backward(); opt.step(); out.append(l.item())
    # causal check: output at t independent of future
    x2 = x.clone(); x2[:, :, 15:] += 1
    with torch.no_grad():
        out.append((net(x)[:, :, :15] - net(x2)[:, :, :15]).abs().max())
    out.append(sorted(net.state_dict())[:6])
    # causal conv via left pad
    c = nn.Conv1d(2, 3, 4, dilation=2); init(c)
    out.append(c(F.pad(x, (6, 0))))
    return out

def lstm_proj(torch, init):
    nn = torch.nn
    l = nn.LSTM(3, 8, num_layers=2, proj_size=4, batch_first=True, bidirectional=True)
    g = nn.GRU(3, 5, num_layers=3, dropout=0.5)
    r = nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bias=False)
    init(l, g, r)
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.normal(size=(2, 6, 3)).astype(np.float32))
    o, (h, c) = l(x)
    out = [o, h, c, sorted(l.state_dict()), l.weight_hr_l0.shape, l.weight_hh_l1_reverse.shape]
    h0 = torch.zeros(4, 2, 4); c0 = torch.ones(4, 2, 8)
    o2, (h2, c2) = l(x, (h0, c0)); out += [o2, h2, c2]
    g.eval()
    og, hg = g(x.transpose(0, 1)); out += [og, hg]
    g.train()
    og2, _ = g(x.transpose(0, 1)); out.append(og2.shape)
    orr, hr = r(x.transpose(0, 1)); out += [orr, hr]
    (o.sum() + og.sum() + orr.sum()).backward()
    out += [l.weight_hr_l1_reverse.grad, g.weight_ih_l2.grad, r.weight_hh_l0.grad]
    out += [repr(l), repr(g), repr(r)]
    # unbatched
    ou, (hu, cu) = l(x[0]); out += [ou, hu]
    # packed with proj
    p = nn.utils.rnn.pack_padded_sequence(x, torch.tensor([6, 3]), batch_first=True)
    op, (hp, cp) = l(p)
    out += [nn.utils.rnn.pad_packed_sequence(op, batch_first=True)[0], hp]
    out.append(l.all_weights[0][4].shape if len(l.all_weights[0]) > 4 else 0)
    out.append([tuple(w.shape) for w in l._flat_weights])
    return out

def var_len(torch, init):
    nn = torch.nn
    R = nn.utils.rnn
    rng = np.random.default_rng(2)
    lens = [7, 3, 5, 1]
    seqs = [torch.from_numpy(rng.normal(size=(n, 2)).astype(np.float32)) for n in lens]
    lstm = nn.LSTM(2, 4, batch_first=True); init(lstm)
    ps = R.pack_sequence(seqs, enforce_sorted=False)
    o, (h, c) = lstm(ps)
    un = R.unpack_sequence(o)
    out = [u for u in un] + [h]
    pad, l = R.pad_packed_sequence(o, batch_first=True, padding_value=-5.0)
    out += [pad, l]
    # mask-based mean pooling
    mask = torch.arange(pad.size(1))[None, :] < l[:, None]
    mp = (pad * mask.unsqueeze(-1)).sum(1) / l[:, None]
    out.append(mp)
    # last valid output via gather
    idx = (l - 1).view(-1, 1, 1).expand(-1, 1, 4)
    out.append(pad.gather(1, idx).squeeze(1))
    mp.sum().backward(); out.append(lstm.weight_ih_l0.grad)
    out.append(R.unpad_sequence(pad, l, batch_first=True))
    ps2 = R.pack_padded_sequence(pad, l, batch_first=True, enforce_sorted=False)
    out += [ps2.data, ps2.batch_sizes]
    out.append(ps.to(torch.float64).data.dtype == torch.float64)
    out.append(type(ps).__name__); out.append(len(ps)); out.append(ps.is_cuda)
    out.append(R.invert_permutation(torch.tensor([2, 0, 1])) if hasattr(R, "invert_permutation") else 0)
    return out

def rollout(torch, init):
    nn = torch.nn
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.GRU(1, 8, 2, batch_first=True); s.o = nn.Linear(8, 1)
        def forward(s, x, h=None):
            y, h = s.l(x, h); return s.o(y), h
    m = M(); init(m)
    t = torch.linspace(0, 6 * math.pi, 60)
    series = torch.sin(t) + 0.1 * torch.cos(3 * t)
    x = series[:-1].view(1, -1, 1); y = series[1:].view(1, -1, 1)
    opt = torch.optim.Adam(m.parameters(), 1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=5)
    out = []
    for _ in range(5):
        p, _ = m(x)
        loss = nn.functional.smooth_l1_loss(p, y, beta=0.5) + nn.functional.huber_loss(p, y, delta=0.3)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step(); out.append(loss.item())
        out.append(sched.get_last_lr()[0])
    m.eval()
    with torch.no_grad():
        _, h = m(x[:, :40])
        cur = x[:, 39:40]; preds = []
        for _ in range(10):
            p, h = m(cur, h); preds.append(p); cur = p
        out.append(torch.cat(preds, 1).squeeze())
    out.append(torch.is_grad_enabled())
    # quantile loss
    qs = torch.tensor([0.1, 0.5, 0.9])
    pred = torch.stack([series[1:] - 0.2, series[1:], series[1:] + 0.2], -1) + 0.05 * torch.sin(7 * t[1:, None])
    err = series[1:, None] - pred
    ql = torch.max(qs * err, (qs - 1) * err).mean()
    out.append(ql)
    out.append(torch.quantile(series, qs)); out.append(torch.nanquantile(series, 0.3, interpolation="midpoint"))
    return out

def seasonal(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(3)
    n = 48
    t = torch.arange(n, dtype=torch.float64)
    s = 0.05 * t + torch.sin(2 * math.pi * t / 12) + torch.from_numpy(rng.normal(scale=0.1, size=n))
    x = s.view(1, 1, -1)
    k = 13
    front = x[:, :, :1].repeat(1, 1, (k - 1) // 2); end = x[:, :, -1:].repeat(1, 1, (k - 1) // 2)
    trend = F.avg_pool1d(torch.cat([front, x, end], -1), kernel_size=k, stride=1)
    seas = x - trend
    out = [trend, seas]
    w = torch.ones(1, 1, k, dtype=torch.float64) / k
    out.append(F.conv1d(F.pad(x, (6, 6), mode="replicate"), w))
    per = seas.view(-1)[:48].view(4, 12).mean(0)
    out.append(per)
    out.append(torch.fft.rfft(s).abs()[:6])
    ma = s.unfold(0, 5, 1).mean(-1); out.append(ma)
    ew = [s[0]]
    for v in s[1:]: ew.append(0.3 * v + 0.7 * ew[-1])
    out.append(torch.stack(ew))
    out.append(torch.diff(s, n=2)); out.append(torch.cumsum(s, 0)); out.append(torch.cummax(s, 0)[1])
    lag = torch.stack([s.roll(i) for i in range(1, 4)], 1)[3:]
    sol = torch.linalg.lstsq(lag, s[3:, None]).solution
    out.append(sol)
    out.append(F.avg_pool1d(x, 4, 4)); out.append(F.max_pool1d(x, 6))
    zs = (s - s.mean()) / s.std(unbiased=True); out.append(zs)
    out.append(torch.corrcoef(torch.stack([s[:-1], s[1:]])))
    return out

def reprs(torch, init):
    nn = torch.nn
    ms = [nn.Transformer(16, 2, 1, 1, 32), nn.LSTM(3, 4, 2, proj_size=2, batch_first=True, dropout=0.2, bidirectional=True),
          nn.GRU(3, 4), nn.MultiheadAttention(8, 2, kdim=3, vdim=5), nn.EmbeddingBag(5, 2, mode="max"), nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 10]),
          nn.CTCLoss(), nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=3), nn.Upsample(size=(3, 4)), nn.Upsample(scale_factor=(2.0, 1.5), mode="bicubic"),
          nn.PixelShuffle(3), nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5)), nn.MaxUnpool2d(2), nn.LPPool1d(2, 3), nn.Fold((4, 4), 2), nn.GroupNorm(2, 4),
          nn.InstanceNorm2d(3, track_running_stats=True), nn.BatchNorm2d(3, momentum=None), nn.LayerNorm((3, 4), bias=False), nn.Dropout2d(), nn.AlphaDropout(0.1),
          nn.ConvTranspose2d(2, 4, 3, 2, 1, output_padding=1, groups=2, dilation=2, padding_mode="zeros"), nn.Conv2d(2, 2, 3, padding="same", padding_mode="reflect", bias=False),
          nn.Conv1d(2, 2, 3, stride=2), nn.LSTMCell(2, 3, bias=False), nn.RNN(2, 2, nonlinearity="relu"), nn.TransformerDecoderLayer(8, 2, norm_first=True),
          nn.Embedding(5, 3, padding_idx=0, max_norm=1, scale_grad_by_freq=True, sparse=True), nn.AdaptiveMaxPool2d((2, None)), nn.Hardswish(inplace=True), nn.SiLU(True), nn.Mish(),
          nn.ReflectionPad1d((1, 2)), nn.CircularPad3d(1), nn.ChannelShuffle(2), nn.Unflatten(1, (2, 3)), nn.RMSNorm(4), nn.Identity(3, x=1)]
    return [repr(m) for m in ms] + [str(nn.Sequential(nn.Linear(2, 3), nn.ModuleDict({"a": nn.ReLU(), "b": nn.ModuleList([nn.Tanh(), nn.GELU("tanh")])})))]

def lazy(torch, init):
    nn = torch.nn
    m = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(), nn.LazyLinear(3))
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(2, 2, 5, 5)).astype(np.float32))
    out = [repr(m)]
    with torch.no_grad():
        m(x)
    init(m)
    out.append(repr(m)); out.append(m(x)); out.append(type(m[0]).__name__)
    out.append(sorted(m.state_dict()))
    return out

def init_stats(torch, init):
    nn = torch.nn
    torch.manual_seed(0)
    out = []
    w = torch.empty(400, 300)
    want = {"xavier_uniform_": 5 / 3 * math.sqrt(2 / 700), "kaiming_normal_": math.sqrt(2 / 400), "trunc_normal_": 0.02, "xavier_normal_": math.sqrt(2 / 700), "normal_": 0.5}
    for f, kw in [(nn.init.xavier_uniform_, dict(gain=nn.init.calculate_gain("tanh"))), (nn.init.kaiming_normal_, dict(mode="fan_out", nonlinearity="relu")),
                  (nn.init.kaiming_uniform_, dict(a=math.sqrt(5))), (nn.init.trunc_normal_, dict(std=0.02)), (nn.init.orthogonal_, dict(gain=2.0)), (nn.init.xavier_normal_, {}),
                  (nn.init.normal_, dict(mean=1, std=0.5)), (nn.init.uniform_, dict(a=-2, b=3))]:
        f(w, **kw)
        if f.__name__ in want: out.append(abs(float(w.std()) / want[f.__name__] - 1) < 0.05)
        out.append(f.__name__); out.append(tuple(w.shape)); out.append(bool(torch.isfinite(w).all()))
    out.append([nn.init.calculate_gain(n) for n in ["linear", "relu", "tanh", "selu", "sigmoid", "conv2d"]] + [nn.init.calculate_gain("leaky_relu", 0.2)])
    q = nn.init.orthogonal_(torch.empty(5, 8)); out.append(q @ q.T)
    e = nn.init.eye_(torch.empty(3, 4)); out.append(e)
    d = nn.init.dirac_(torch.empty(4, 2, 3, 3), groups=2); out.append(d)
    s = nn.init.sparse_(torch.empty(10, 6), 0.3); out.append((s == 0).sum(0))
    out.append(nn.init.constant_(torch.empty(2), 0.3)); out.append(nn.init.zeros_(torch.empty(2))); out.append(nn.init.ones_(torch.empty(2)))
    lstm = nn.LSTM(4, 5)
    for n, p in lstm.named_parameters():
        if "weight" in n: nn.init.orthogonal_(p)
        else:
            nn.init.zeros_(p); p.data[5:10].fill_(1.0)
    out.append(lstm.bias_ih_l0); out.append(nn.init._calculate_fan_in_and_fan_out(torch.empty(6, 3, 2, 2)))
    return out

def _cap(f):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        f()
    return buf.getvalue()

def char_rnn_script(torch, init):
    nn = torch.nn
    text = "hello world, this is a tiny corpus for a tiny char model. " * 4
    chars = sorted(set(text)); stoi = {c: i for i, c in enumerate(chars)}; itos = {i: c for c, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    class DS(torch.utils.data.Dataset):
        def __init__(s, d, L): s.d, s.L = d, L
        def __len__(s): return (len(s.d) - 1) // s.L
        def __getitem__(s, i):
            c = s.d[i * s.L:(i + 1) * s.L + 1]; return c[:-1], c[1:]
    dl = torch.utils.data.DataLoader(DS(data, 16), batch_size=4, shuffle=False, drop_last=True)
    class M(nn.Module):
        def __init__(s, V):
            super().__init__(); s.e = nn.Embedding(V, 16); s.r = nn.GRU(16, 32, 2, batch_first=True, dropout=0.1); s.d = nn.Dropout(0.2); s.f = nn.Linear(32, V)
        def forward(s, x, h=None):
            o, h = s.r(s.e(x), h); return s.f(s.d(o)), h
    m = M(len(chars)); init(m)
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    def run():
        for ep in range(3):
            m.eval()  # dropout off for determinism
            tot = 0.0
            for i, (x, y) in enumerate(dl):
                lo, _ = m(x)
                loss = crit(lo.view(-1, lo.size(-1)), y.view(-1))
                opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(m.parameters(), 1.0); opt.step()
                tot += loss.item()
            sched.step()
            print(f"epoch {ep} loss {tot / len(dl):.4f} lr {sched.get_last_lr()[0]:.5f} ppl {math.exp(tot / len(dl)):.3f}")
        with torch.no_grad():
            idx = torch.tensor([[stoi["h"]]]); h = None; s = "h"
            for _ in range(20):
                lo, h = m(idx, h); idx = lo[:, -1].argmax(-1, keepdim=True); s += itos[idx.item()]
            print(repr(s))
            print(lo[0, -1, :4])
            print(h.shape, h.dtype, h[0, 0, :3])
    return _cap(run)

def seq_classify_script(torch, init):
    nn = torch.nn
    R = nn.utils.rnn
    rng = np.random.default_rng(0)
    seqs = [rng.integers(1, 30, size=int(rng.integers(3, 12))).tolist() for _ in range(24)]
    labels = [int(sum(s) % 3) for s in seqs]
    def collate(batch):
        xs, ys = zip(*batch)
        lens = torch.tensor([len(x) for x in xs])
        xs = R.pad_sequence([torch.tensor(x) for x in xs], batch_first=True, padding_value=0)
        return xs, lens, torch.tensor(ys)
    ds = list(zip(seqs, labels))
    tr, va = torch.utils.data.random_split(ds, [18, 6], generator=torch.Generator().manual_seed(0))
    dl = torch.utils.data.DataLoader(ds[:18], batch_size=6, collate_fn=collate)
    vl = torch.utils.data.DataLoader(ds[18:], batch_size=3, collate_fn=collate)
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.e = nn.Embedding(30, 8, padding_idx=0); s.l = nn.LSTM(8, 8, batch_first=True, bidirectional=True); s.a = nn.Linear(16, 1); s.o = nn.Linear(16, 3)
        def forward(s, x, lens):
            p = R.pack_padded_sequence(s.e(x), lens.cpu(), batch_first=True, enforce_sorted=False)
            o, _ = s.l(p); o, _ = R.pad_packed_sequence(o, batch_first=True)
            mask = torch.arange(o.size(1))[None] >= lens[:, None]
            a = s.a(o).squeeze(-1).masked_fill(mask, float("-inf")).softmax(-1)
            return s.o((a.unsqueeze(-1) * o).sum(1)), a
    m = M(); init(m)
    opt = torch.optim.RMSprop(m.parameters(), lr=1e-2, momentum=0.5, centered=True)
    def run():
        for ep in range(2):
            m.train()
            for x, lens, y in dl:
                lo, a = m(x, lens)
                loss = nn.functional.cross_entropy(lo, y, label_smoothing=0.05)
                opt.zero_grad(); loss.backward(); opt.step()
            m.eval(); correct = 0; n = 0
            with torch.no_grad():
                for x, lens, y in vl:
                    lo, a = m(x, lens); correct += (lo.argmax(1) == y).sum().item(); n += len(y)
            print(f"ep {ep}: loss={loss.item():.5f} acc={correct / n:.3f}")
        print(a)
        print(len(tr), len(va))
    return _cap(run)

def vision_script(torch, init):
    nn = torch.nn; F = nn.functional
    rng = np.random.default_rng(1)
    X = torch.from_numpy(rng.normal(size=(32, 3, 12, 12)).astype(np.float32)); Y = torch.from_numpy(rng.integers(0, 4, size=32))
    ds = torch.utils.data.TensorDataset(X, Y)
    dl = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=False)
    class Net(nn.Module):
        def __init__(s):
            super().__init__()
            s.f = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect"), nn.GroupNorm(2, 8), nn.SiLU(), nn.MaxPool2d(2),
                                nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16), nn.Hardswish(), nn.AdaptiveAvgPool2d((3, 3)))
            s.h = nn.Sequential(nn.Flatten(), nn.Dropout(0.0), nn.Linear(144, 4))
        def forward(s, x): return s.h(s.f(x))
    m = Net(); init(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8)
    def run():
        for ep in range(2):
            m.train(); rl = 0.0
            for i, (x, y) in enumerate(dl):
                if i % 2: x = torch.flip(x, dims=[3])
                out = m(x); loss = F.cross_entropy(out, y)
                opt.zero_grad(); loss.backward(); opt.step(); sched.step()
                rl += loss.item() * x.size(0)
            print("Epoch [{}/{}], Loss: {:.4f}".format(ep + 1, 2, rl / len(ds)))
        m.eval()
        with torch.no_grad():
            o = m(X); p = o.softmax(1)
            conf, pred = p.max(1)
            print("acc", (pred == Y).float().mean().item())
            print(conf[:4])
            cm = torch.zeros(4, 4, dtype=torch.long)
            for t, pp in zip(Y, pred): cm[t, pp] += 1
            print(cm)
            print(torch.bincount(pred, minlength=4))
            print(m.f[6].running_mean)
    return _cap(run)

def sparse_opts(torch, init):
    nn = torch.nn
    out = []
    idx = torch.tensor([[1, 2, 2, 7], [0, 7, 7, 3]])
    for name, mk in [("sgd", lambda p: torch.optim.SGD(p, lr=0.1)), ("sgdm", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
                     ("adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1)), ("sparseadam", lambda p: torch.optim.SparseAdam(p, lr=0.05, betas=(0.8, 0.9))),
                     ("sparseadam_max", lambda p: torch.optim.SparseAdam(p, lr=0.05, maximize=True))]:
        e = nn.Embedding(8, 3, sparse=True); b = nn.EmbeddingBag(8, 3, sparse=True, mode="mean")
        init(e, b)
        opt = mk(list(e.parameters()) + list(b.parameters()))
        for _ in range(3):
            opt.zero_grad()
            l = e(idx).pow(2).sum() + b(idx).sin().sum()
            l.backward()
            opt.step()
        out += [name, e.weight.detach(), b.weight.detach(), e.weight.grad.coalesce().indices(), b.weight.grad.coalesce().values()]
        out.append(sorted(opt.state_dict()["state"].keys()))
    e = nn.Embedding(8, 3, sparse=True); init(e)
    e(idx).sum().backward()
    g = e.weight.grad
    out += [g.is_sparse, g._nnz(), g.shape, str(g.layout), g.is_coalesced()]
    out.append(e.weight.grad.to_dense())
    return out



PROGRAMS = {name: f for name, f in dict(globals()).items()
            if callable(f) and not name.startswith("_") and getattr(f, "__module__", None) == __name__
            and not name.startswith("test") and name not in ("assert_close", "one_thread", "run_pair")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name):
    with one_thread(torch):
        got, want = run_pair(PROGRAMS[name], torch)
    assert_close(_norm(got), _norm(want), rtol=1e-4, atol=1e-5, scaled=True)


def test_sparse_embedding_gradient_clipping_raises_as_torch():
    # a sparse gradient has no norm nor in-place clamp in torch: both libraries refuse
    for lib in (torch, ptcore):
        e = lib.nn.Embedding(8, 3, sparse=True)
        e(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(NotImplementedError):
            lib.nn.utils.clip_grad_norm_(e.parameters(), 0.5)
        with pytest.raises(NotImplementedError):
            lib.nn.utils.clip_grad_value_(e.parameters(), 0.5)
