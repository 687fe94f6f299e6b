"""Round seven of whole programs written once against the module they are given and run
under torch and under ptcore (``import ptcore as torch``) from the same initial weights
(tests/program_pairs.py); what they return (losses, parameters, printed text, generated
code, samples' invariants) must agree.

Covered here: physics-informed networks (PDE residuals through autograd.grad with
create_graph), normalizing flows with log-determinants, mixture density networks with
MixtureSameFamily, per-sample gradients with torch.func, GAN training with spectral norm,
contrastive (NT-Xent) and distillation losses, K-means, FFT convolution, sparse COO
graph propagation, Hessian-vector products, seq2seq attention with teacher forcing,
nn.Transformer with masks and label smoothing, weight norm and parametrizations,
TorchScript and torch.fx transformations, bfloat16 autocast, and more.
"""
import importlib
import io
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, one_thread, randn_data as _data, run_pair, text_of  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


R = text_of


def pinn_prog(torch, init):
    """u'' + pi^2 sin(pi x) = 0 on [0, 1], u(0) = u(1) = 0: residual by double autograd."""
    nn = torch.nn
    net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    init(net)
    opt = torch.optim.Adam(net.parameters(), lr=5e-3)
    xs = torch.from_numpy(np.linspace(0, 1, 24, dtype=np.float32)[:, None])
    bc = torch.tensor([[0.0], [1.0]])
    out = []
    for it in range(6):
        x = xs.clone().requires_grad_(True)
        u = net(x)
        du, = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
        d2u, = torch.autograd.grad(du.sum(), x, create_graph=True)
        res = d2u + math.pi ** 2 * torch.sin(math.pi * x)
        loss = res.pow(2).mean() + 10 * net(bc).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), du.abs().max().item()])
    out.append(net(xs).detach())
    out.append(net[0].weight.grad)
    return out


def flow_prog(torch, init):
    """RealNVP-style coupling flow trained by maximum likelihood."""
    nn = torch.nn
    class Coupling(nn.Module):
        def __init__(self, flip):
            super().__init__()
            self.flip = flip
            self.net = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 2))
        def forward(self, x):
            a, b = x.chunk(2, dim=1)
            if self.flip:
                a, b = b, a
            s, t = self.net(a).chunk(2, dim=1)
            s = torch.tanh(s)
            b = b * torch.exp(s) + t
            y = torch.cat([b, a], 1) if self.flip else torch.cat([a, b], 1)
            return y, s.sum(1)
        def inverse(self, y):
            a, b = y.chunk(2, dim=1)
            if self.flip:
                b, a = a, b
            s, t = self.net(a).chunk(2, dim=1)
            b = (b - t) * torch.exp(-torch.tanh(s))
            return torch.cat([b, a], 1) if self.flip else torch.cat([a, b], 1)
    layers = nn.ModuleList([Coupling(i % 2 == 1) for i in range(4)]); init(layers)
    base = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    rng = np.random.RandomState(3)
    th = rng.rand(64) * 2 * np.pi
    data = torch.from_numpy(np.stack([np.cos(th), np.sin(th)], 1).astype(np.float32) * 2 + 0.1 * rng.randn(64, 2).astype(np.float32))
    opt = torch.optim.Adam(layers.parameters(), lr=1e-2)
    out = []
    for _ in range(5):
        z, logdet = data, torch.zeros(64)
        for l in layers:
            z, ld = l(z)
            logdet = logdet + ld
        nll = -(base.log_prob(z) + logdet).mean()
        opt.zero_grad(); nll.backward(); opt.step()
        out.append(nll.item())
    with torch.no_grad():
        z = data[:5]
        for l in layers:
            z, _ = l(z)
        x = z
        for l in reversed(layers):
            x = l.inverse(x)
        out.append(x); out.append(data[:5])
        J = torch.autograd.functional.jacobian(lambda v: layers[0](v)[0], data[:1]).reshape(2, 2)
        out.append([torch.logdet(J).item(), layers[0](data[:1])[1].item()])
    return out


def mdn_prog(torch, init):
    nn = torch.nn; D = torch.distributions
    K = 3
    class MDN(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.Sequential(nn.Linear(1, 20), nn.Tanh())
            self.pi = nn.Linear(20, K); self.mu = nn.Linear(20, K); self.sig = nn.Linear(20, K)
        def forward(self, x):
            h = self.h(x)
            mix = D.Categorical(logits=self.pi(h))
            comp = D.Normal(self.mu(h), nn.functional.softplus(self.sig(h)) + 1e-3)
            return D.MixtureSameFamily(mix, comp)
    m = MDN(); init(m)
    rng = np.random.RandomState(4)
    y = rng.rand(80).astype(np.float32)
    x = y + 0.3 * np.sin(2 * np.pi * y) + 0.05 * rng.randn(80).astype(np.float32)
    x, y = torch.from_numpy(x[:, None]), torch.from_numpy(y)
    opt = torch.optim.RMSprop(m.parameters(), lr=5e-3)
    out = []
    for _ in range(5):
        dist = m(x)
        loss = -dist.log_prob(y).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    with torch.no_grad():
        d = m(x[:4])
        out += [d.mean, d.variance, d.cdf(y[:4]), d.batch_shape, d.event_shape,
                d.mixture_distribution.probs, d.component_distribution.scale]
        torch.manual_seed(0)
        s = d.sample((2000,))
        out.append(s.shape)
        out.append([abs(s.mean(0) - d.mean).max().item() < 0.1])
    return out


def per_sample_grad_prog(torch, init):
    nn = torch.nn
    from_func = torch.func
    model = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.Linear(8, 3)); init(model)
    x, = _data(torch, 5, (6, 5))
    y = torch.tensor([0, 2, 1, 1, 0, 2])
    params = {k: v.detach() for k, v in model.named_parameters()}
    def loss_fn(p, xi, yi):
        logits = from_func.functional_call(model, p, (xi.unsqueeze(0),))
        return nn.functional.cross_entropy(logits, yi.unsqueeze(0))
    grads = from_func.vmap(from_func.grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)
    out = [{k: g for k, g in grads.items()}]
    # agrees with a loop of ordinary backward
    loop = []
    for i in range(6):
        model.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        loop.append(model[0].weight.grad.clone())
    out.append(torch.stack(loop))
    # DP-SGD style clipping of per-sample norms then noise-free mean
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], 1).norm(dim=1)
    factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    clipped = {k: (g * factor.view(-1, *[1] * (g.dim() - 1))).mean(0) for k, g in grads.items()}
    out += [norms, clipped]
    # jacrev / jacfwd / hessian of the scalar loss wrt the input
    f = lambda xi: loss_fn(params, xi, y[0])
    out.append(from_func.jacrev(f)(x[0]))
    out.append(from_func.jacfwd(f)(x[0]))
    out.append(from_func.hessian(f)(x[0]))
    val, g = from_func.grad_and_value(f)(x[0])
    out += [val, g]
    return out


def gan_sn_prog(torch, init):
    nn = torch.nn
    SN = nn.utils.spectral_norm
    G = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
    Dn = nn.Sequential(SN(nn.Linear(2, 16)), nn.LeakyReLU(0.2), SN(nn.Linear(16, 1)))
    init(G, Dn)
    optG = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optD = torch.optim.Adam(Dn.parameters(), lr=2e-3, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    rng = np.random.RandomState(6)
    out = []
    for it in range(4):
        real = torch.from_numpy(rng.randn(16, 2).astype(np.float32) * 0.5 + 2)
        z = torch.from_numpy(rng.randn(16, 4).astype(np.float32))
        fake = G(z)
        lossD = bce(Dn(real), torch.ones(16, 1)) + bce(Dn(fake.detach()), torch.zeros(16, 1))
        optD.zero_grad(); lossD.backward(); optD.step()
        lossG = bce(Dn(fake), torch.ones(16, 1))
        optG.zero_grad(); lossG.backward(); optG.step()
        out.append([lossD.item(), lossG.item()])
    out.append(sorted(Dn.state_dict()))
    out.append(Dn[0].weight_u)
    out.append(torch.linalg.matrix_norm(Dn[0].weight.detach(), 2).item())
    Dn.eval()
    out.append(Dn(torch.ones(3, 2)))
    out.append(G[2].weight)
    return out


def ntxent_prog(torch, init):
    """SimCLR contrastive loss with two noisy views."""
    nn = torch.nn; F = nn.functional
    enc = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 8))
    init(enc)
    opt = torch.optim.SGD(enc.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    rng = np.random.RandomState(8)
    base = rng.randn(8, 6).astype(np.float32)
    tau = 0.5
    out = []
    for _ in range(4):
        v1 = torch.from_numpy(base + 0.1 * rng.randn(8, 6).astype(np.float32))
        v2 = torch.from_numpy(base + 0.1 * rng.randn(8, 6).astype(np.float32))
        z = F.normalize(enc(torch.cat([v1, v2])), dim=1)
        sim = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=-1) / tau
        sim = sim.masked_fill(torch.eye(16, dtype=torch.bool), float("-inf"))
        target = torch.cat([torch.arange(8, 16), torch.arange(0, 8)])
        loss = F.cross_entropy(sim, target)
        manual = (-sim[torch.arange(16), target] + torch.logsumexp(sim, dim=1)).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        acc = (sim.argmax(1) == target).float().mean()
        out.append([loss.item(), manual.item(), acc.item()])
    out.append(enc[1].running_mean); out.append(enc[1].running_var)
    out.append(enc[1].num_batches_tracked)
    return out


def distill_prog(torch, init):
    nn = torch.nn; F = nn.functional
    teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 4))
    init(teacher, student)
    teacher.eval()
    kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
    opt = torch.optim.Adam(student.parameters(), lr=1e-2)
    x, = _data(torch, 9, (20, 10))
    y = torch.from_numpy(np.random.RandomState(9).randint(0, 4, 20))
    T, alpha = 3.0, 0.7
    out = []
    for _ in range(5):
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        soft = kl(F.log_softmax(s_logits / T, -1), F.log_softmax(t_logits / T, -1)) * T * T
        hard = F.cross_entropy(s_logits, y, label_smoothing=0.1)
        loss = alpha * soft + (1 - alpha) * hard
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([soft.item(), hard.item()])
    p = F.softmax(t_logits / T, -1)
    q = F.log_softmax(student(x) / T, -1)
    out.append(F.kl_div(q, p, reduction="sum"))
    out.append(F.kl_div(q, p, reduction="none").sum(1))
    out.append(nn.KLDivLoss(reduction="mean")(q, p))
    out.append((student(x).argmax(1) == t_logits.argmax(1)).sum())
    return out


def kmeans_prog(torch, init):
    rng = np.random.RandomState(10)
    centers = np.array([[0, 0], [5, 5], [0, 6]], np.float32)
    X = torch.from_numpy(np.concatenate([c + rng.randn(30, 2).astype(np.float32) for c in centers]))
    C = X[torch.tensor([0, 30, 60])].clone()
    out = []
    for _ in range(6):
        d = torch.cdist(X, C)
        assign = d.argmin(1)
        sums = torch.zeros_like(C).scatter_add_(0, assign[:, None].expand(-1, 2), X)
        counts = torch.bincount(assign, minlength=3).clamp(min=1).unsqueeze(1)
        C = sums / counts
        out.append([(d.min(1).values ** 2).sum().item(), torch.bincount(assign, minlength=3)])
    out.append(C)
    # k-means++ style next-center choice deterministic via argmax of D^2
    D2 = torch.cdist(X, X[:1]).squeeze(1) ** 2
    out.append(D2.argmax())
    # silhouette-like score
    dm = torch.cdist(X, X)
    same = assign[:, None] == assign[None, :]
    a = (dm * same).sum(1) / (same.sum(1) - 1)
    b = torch.stack([torch.where(assign == k, torch.inf, dm[:, assign == k].mean(1)) for k in range(3)], 1).min(1).values
    out.append(((b - a) / torch.maximum(a, b)).mean())
    out.append(torch.cdist(X[:5], C, p=1)); out.append(torch.cdist(X[:5].double(), C.double(), p=float("inf")))
    return out


def fft_conv_prog(torch, init):
    rng = np.random.RandomState(11)
    sig = torch.from_numpy(rng.randn(3, 64))
    ker = torch.from_numpy(rng.randn(9))
    n = 64 + 9 - 1
    full = torch.fft.irfft(torch.fft.rfft(sig, n=n) * torch.fft.rfft(ker, n=n), n=n)
    direct = torch.nn.functional.conv1d(sig.unsqueeze(1), ker.flip(0).view(1, 1, -1), padding=8).squeeze(1)
    out = [full, direct]
    # 2-D circular convolution via fft2
    img = torch.from_numpy(rng.randn(2, 16, 16))
    k2 = torch.zeros(16, 16, dtype=torch.float64); k2[:3, :3] = torch.from_numpy(rng.randn(3, 3))
    out.append(torch.fft.ifft2(torch.fft.fft2(img) * torch.fft.fft2(k2)).real)
    # spectrum analysis: dominant frequency, fftshift, power
    t = torch.arange(128, dtype=torch.float64) / 128
    s = torch.sin(2 * math.pi * 10 * t) + 0.5 * torch.cos(2 * math.pi * 23 * t)
    spec = torch.fft.rfft(s)
    freqs = torch.fft.rfftfreq(128, d=1 / 128)
    out.append(freqs[spec.abs().topk(2).indices])
    out.append(torch.fft.fftshift(torch.fft.fftfreq(8)))
    out.append(torch.fft.fft(s, norm="ortho").abs().pow(2).sum())
    # learnable filter through the FFT
    w = torch.zeros(65, dtype=torch.complex128, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.3, momentum=0.5)  # Adam would scale rounding noise to whole steps
    target = torch.sin(2 * math.pi * 10 * t)
    for _ in range(4):
        y = torch.fft.irfft(spec * w, n=128)
        loss = (y - target).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(w.detach()[8:12])
    return out


def sparse_gcn_prog(torch, init):
    nn = torch.nn
    rng = np.random.RandomState(12)
    N = 8
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4], [0, 4]])
    ei = np.concatenate([edges, edges[:, ::-1], np.stack([np.arange(N)] * 2, 1)]).T
    idx = torch.from_numpy(ei)
    deg = torch.zeros(N).index_add_(0, idx[0], torch.ones(idx.shape[1]))
    vals = deg[idx[0]].rsqrt() * deg[idx[1]].rsqrt()
    A = torch.sparse_coo_tensor(idx, vals, (N, N)).coalesce()
    x = torch.from_numpy(rng.randn(N, 4).astype(np.float32))
    y = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 8); self.l2 = nn.Linear(8, 2)
        def forward(self, A, x):
            h = torch.relu(torch.sparse.mm(A, self.l1(x)))
            return torch.sparse.mm(A, self.l2(h))
    m = GCN(); init(m)
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    out = [A._nnz(), A.indices(), A.values(), A.to_dense().sum(1)]
    for _ in range(5):
        loss = nn.functional.cross_entropy(m(A, x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(torch.sparse.sum(A, dim=1).to_dense())
    out.append((A @ x)); out.append(torch.mm(A, x))
    At = A.t().coalesce()
    out.append(At.indices())
    out.append((A * 2).to_dense()); out.append(torch.sparse.softmax(A, 1).to_dense())
    out.append(A.to_dense().to_sparse().indices())
    return out


def hvp_prog(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)); init(model)
    x, y = _data(torch, 13, (10, 3), (10, 1))
    params = list(model.parameters())
    loss = nn.functional.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    vs = [torch.ones_like(p) for p in params]
    Hv = torch.autograd.grad(grads, params, grad_outputs=vs, retain_graph=True)
    out = [loss.item(), list(Hv)]
    # power iteration for the top Hessian eigenvalue
    v = [torch.from_numpy(np.random.RandomState(14).randn(*p.shape).astype(np.float32)) for p in params]
    for _ in range(8):
        nv = torch.sqrt(sum((t * t).sum() for t in v))
        v = [t / nv for t in v]
        Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        eig = sum((a * b).sum() for a, b in zip(Hv, v))
        v = [h.detach() for h in Hv]
    out.append(eig.item())
    # trace estimate (Hutchinson) with Rademacher vectors from numpy
    r = np.random.RandomState(15)
    tr = 0.0
    for _ in range(3):
        z = [torch.from_numpy(r.choice([-1.0, 1.0], size=p.shape).astype(np.float32)) for p in params]
        Hz = torch.autograd.grad(grads, params, grad_outputs=z, retain_graph=True)
        tr += sum((a * b).sum() for a, b in zip(Hz, z)).item()
    out.append(tr / 3)
    # the same via torch.func on flat params
    flat = torch.cat([p.detach().flatten() for p in params])
    shapes = [p.shape for p in params]
    def f(w):
        ps, i = {}, 0
        for (k, _), s in zip(model.named_parameters(), shapes):
            n = math.prod(s); ps[k] = w[i:i + n].view(s); i += n
        return nn.functional.mse_loss(torch.func.functional_call(model, ps, (x,)), y)
    H = torch.func.hessian(f)(flat)
    out.append(H.shape); out.append((H - H.T).abs().max().item() < 1e-5)
    out.append(H @ torch.ones_like(flat))
    return out


def seq2seq_attn_prog(torch, init):
    """GRUCell decoder with additive attention, teacher forcing chosen by a numpy coin."""
    nn = torch.nn; F = nn.functional
    V, H, S, T, B = 12, 16, 6, 5, 4
    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 8, padding_idx=0)
            self.rnn = nn.GRU(8, H // 2, batch_first=True, bidirectional=True)
        def forward(self, src):
            o, h = self.rnn(self.emb(src))
            return o, torch.cat([h[0], h[1]], -1)
    class Dec(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 8)
            self.Wa = nn.Linear(H, H, bias=False); self.Ua = nn.Linear(H, H); self.va = nn.Linear(H, 1, bias=False)
            self.cell = nn.GRUCell(8 + H, H)
            self.out = nn.Linear(2 * H, V)
        def forward(self, tok, h, enc, mask):
            e = self.va(torch.tanh(self.Wa(h).unsqueeze(1) + self.Ua(enc))).squeeze(-1)
            a = F.softmax(e.masked_fill(~mask, -1e9), -1)
            ctx = torch.bmm(a.unsqueeze(1), enc).squeeze(1)
            h = self.cell(torch.cat([self.emb(tok), ctx], -1), h)
            return self.out(torch.cat([h, ctx], -1)), h, a
    enc, dec = Enc(), Dec(); init(enc, dec)
    rng = np.random.RandomState(16)
    src = torch.from_numpy(rng.randint(1, V, (B, S)))
    src[1, 4:] = 0; src[3, 3:] = 0
    tgt = torch.from_numpy(rng.randint(1, V, (B, T)))
    mask = src != 0
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=5e-3)
    out = []
    for ep in range(3):
        eo, h = enc(src)
        tok = torch.ones(B, dtype=torch.long)
        loss = 0
        for t in range(T):
            logits, h, a = dec(tok, h, eo, mask)
            loss = loss + F.cross_entropy(logits, tgt[:, t])
            tok = tgt[:, t] if rng.rand() < 0.5 else logits.argmax(-1)
        loss = loss / T
        opt.zero_grad(); loss.backward()
        gn = nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        out.append([loss.item(), gn.item(), a.detach()])
    # greedy decode and beam-of-2 step with topk/gather
    with torch.no_grad():
        eo, h = enc(src)
        tok = torch.ones(B, dtype=torch.long); seq = []
        for t in range(T):
            logits, h, _ = dec(tok, h, eo, mask)
            lp = F.log_softmax(logits, -1)
            top = lp.topk(2, -1)
            seq.append(top.indices); tok = top.indices[:, 0]
        out.append(torch.stack(seq, 1))
        out.append(lp.gather(1, tgt[:, -1:]))
    return out


def transformer_mt_prog(torch, init):
    nn = torch.nn; F = nn.functional
    V, D, PAD, BOS = 11, 16, 0, 1
    class MT(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(V, D, padding_idx=PAD); self.tgt_emb = nn.Embedding(V, D, padding_idx=PAD)
            self.pos = nn.Parameter(torch.zeros(1, 10, D))
            self.tf = nn.Transformer(d_model=D, nhead=4, num_encoder_layers=2, num_decoder_layers=1,
                                     dim_feedforward=32, dropout=0.0, batch_first=True, norm_first=True,
                                     activation="gelu")
            self.gen = nn.Linear(D, V)
        def forward(self, src, tgt):
            tm = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
            sp, tp = src == PAD, tgt == PAD
            h = self.tf(self.src_emb(src) + self.pos[:, :src.size(1)], self.tgt_emb(tgt) + self.pos[:, :tgt.size(1)],
                        tgt_mask=tm, src_key_padding_mask=sp, tgt_key_padding_mask=tp,
                        memory_key_padding_mask=sp, tgt_is_causal=True)
            return self.gen(h)
    m = MT(); init(m)
    rng = np.random.RandomState(17)
    src = torch.from_numpy(rng.randint(2, V, (4, 7))); src[0, 5:] = PAD; src[2, 3:] = PAD
    tgt = src.flip(1).clone(); tgt[tgt == PAD] = 3
    tgt_in = torch.cat([torch.full((4, 1), BOS), tgt[:, :-1]], 1); tgt_in[1, 5:] = PAD
    labels = tgt.clone(); labels[1, 5:] = PAD
    opt = torch.optim.AdamW(m.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 3))
    out = [nn.Transformer.generate_square_subsequent_mask(4)]
    for _ in range(4):
        logits = m(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=PAD, label_smoothing=0.1)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        out.append([loss.item(), sched.get_last_lr()[0]])
    m.eval()
    with torch.no_grad():
        ys = torch.full((4, 1), BOS)
        for _ in range(4):
            nxt = m(src, ys)[:, -1].argmax(-1, keepdim=True)
            ys = torch.cat([ys, nxt], 1)
        out.append(ys)
        out.append(m(src, tgt_in)[:, :3])
    return out


def char_lstm_prog(torch, init):
    nn = torch.nn; F = nn.functional
    text = "the quick brown fox jumps over the lazy dog. " * 3
    chars = sorted(set(text)); stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text])
    V = len(chars)
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 12)
            self.lstm = nn.LSTM(12, 24, num_layers=2, batch_first=True, proj_size=10, dropout=0.0)
            self.head = nn.Linear(10, V)
        def forward(self, x, state=None):
            o, state = self.lstm(self.emb(x), state)
            return self.head(o), state
    m = LM(); init(m)
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    L = 16
    starts = torch.arange(0, len(text) - L - 1, 17)
    X = torch.stack([data[s:s + L] for s in starts]); Y = torch.stack([data[s + 1:s + L + 1] for s in starts])
    out = [X.shape]
    for _ in range(4):
        logits, (h, c) = m(X)
        loss = F.cross_entropy(logits.transpose(1, 2), Y)
        opt.zero_grad(); loss.backward()
        nn.utils.clip_grad_value_(m.parameters(), 0.1)
        opt.step()
        out.append([loss.item(), math.exp(loss.item())])
    out.append([h.shape, c.shape])
    # sampling: deterministic argmax path and multinomial invariants
    with torch.no_grad():
        x = torch.tensor([[stoi["t"]]]); state = None; s = "t"
        for _ in range(10):
            logits, state = m(x, state)
            nxt = logits[0, -1].argmax()
            s += chars[nxt.item()]; x = nxt.view(1, 1)
        out.append(s)
        probs = F.softmax(logits[0, -1] / 0.8, -1)
        g = torch.Generator().manual_seed(123)
        draws = torch.multinomial(probs, 50, replacement=True, generator=g)
        out.append([draws.shape, R(draws.dtype), bool((draws >= 0).all() and (draws < V).all())])
        out.append(torch.multinomial(torch.tensor([0.0, 0.0, 1.0, 0.0]), 1))
        out.append(torch.multinomial(torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), 2).sort(-1).values[0])
    return out


def parametrize_prog(torch, init):
    nn = torch.nn; P = nn.utils.parametrize; PZ = nn.utils.parametrizations
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(5, 5); self.b = nn.Linear(5, 4); self.c = nn.Linear(4, 2)
        def forward(self, x):
            return self.c(torch.tanh(self.b(torch.tanh(self.a(x)))))
    m = Net(); init(m)
    P.register_parametrization(m.a, "weight", Symmetric())
    PZ.weight_norm(m.b, name="weight", dim=0)
    PZ.orthogonal(m.c)
    out = [sorted(m.state_dict()), P.is_parametrized(m.a), P.is_parametrized(m.b, "bias"),
           (m.a.weight - m.a.weight.T).abs().max().item()]
    out.append((m.c.weight @ m.c.weight.T))
    x, y = _data(torch, 18, (9, 5), (9, 2))
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    for _ in range(4):
        with P.cached():
            loss = nn.functional.mse_loss(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out += [m.a.weight, m.b.parametrizations.weight.original0, m.b.parametrizations.weight.original1,
            m.c.weight @ m.c.weight.T]
    sd = m.state_dict()
    m2 = Net(); P.register_parametrization(m2.a, "weight", Symmetric())
    PZ.weight_norm(m2.b, name="weight", dim=0); PZ.orthogonal(m2.c)
    m2.load_state_dict(sd)
    out.append(m2(x))
    P.remove_parametrizations(m.a, "weight", leave_parametrized=True)
    P.remove_parametrizations(m.b, "weight")
    out += [type(m.a.weight).__name__, sorted(dict(m.named_parameters())), m(x)]
    # old-style hooks
    l = nn.Linear(3, 4); init(l)
    wn = nn.utils.weight_norm(l)
    out += [sorted(dict(wn.named_parameters())), wn.weight_g.shape]
    nn.utils.remove_weight_norm(wn)
    out.append(sorted(dict(wn.named_parameters())))
    return out


def gp_lbfgs_prog(torch, init):
    """GP regression: log marginal likelihood maximised over kernel hyperparameters."""
    rng = np.random.RandomState(19)
    X = torch.from_numpy(np.sort(rng.rand(20) * 6))[:, None]
    y = torch.sin(X).squeeze(1) + 0.1 * torch.from_numpy(rng.randn(20))
    log_ls = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    log_sf = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    log_sn = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
    def K(a, b):
        return log_sf.exp() ** 2 * torch.exp(-0.5 * torch.cdist(a, b) ** 2 / log_ls.exp() ** 2)
    def nlml():
        Kxx = K(X, X) + (log_sn.exp() ** 2 + 1e-6) * torch.eye(20, dtype=torch.float64)
        L = torch.linalg.cholesky(Kxx)
        alpha = torch.cholesky_solve(y[:, None], L)
        return 0.5 * (y[:, None] * alpha).sum() + L.diagonal().log().sum() + 10 * math.log(2 * math.pi)
    opt = torch.optim.LBFGS([log_ls, log_sf, log_sn], lr=0.5, max_iter=20, line_search_fn="strong_wolfe")
    def closure():
        opt.zero_grad(); l = nlml(); l.backward(); return l
    out = [nlml().item()]
    for _ in range(2):
        out.append(opt.step(closure).item())
    out.append([log_ls.item(), log_sf.item(), log_sn.item()])
    with torch.no_grad():
        Xs = torch.linspace(0, 6, 7, dtype=torch.float64)[:, None]
        Kxx = K(X, X) + log_sn.exp() ** 2 * torch.eye(20, dtype=torch.float64)
        L = torch.linalg.cholesky(Kxx)
        Ks = K(X, Xs)
        mu = Ks.T @ torch.cholesky_solve(y[:, None], L)
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        var = K(Xs, Xs).diagonal() - (v * v).sum(0)
        out += [mu.squeeze(1), var]
        mvn = torch.distributions.MultivariateNormal(torch.zeros(20, dtype=torch.float64), scale_tril=L)
        out.append(mvn.log_prob(y).item())
        out.append(torch.cholesky_inverse(L).diagonal()[:4])
        out.append(torch.linalg.cholesky_ex(Kxx).info)
    return out


def custom_fn_prog(torch, init):
    nn = torch.nn
    class STEQuant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, levels):
            ctx.save_for_backward(x)
            ctx.levels = levels
            return torch.round(x.clamp(-1, 1) * levels) / levels
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * (x.abs() <= 1).to(g.dtype), None
    class LogSumExpStable(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            m = x.max(-1, keepdim=True).values
            r = m + (x - m).exp().sum(-1, keepdim=True).log()
            ctx.save_for_backward(x, r)
            return r.squeeze(-1)
        @staticmethod
        def backward(ctx, g):
            x, r = ctx.saved_tensors
            return g.unsqueeze(-1) * (x - r).exp()
    class SortIdx(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort(-1)
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i
        @staticmethod
        def backward(ctx, gv, gi):
            i, = ctx.saved_tensors
            return torch.zeros_like(gv).scatter(-1, i, gv)
    x = torch.from_numpy(np.random.RandomState(20).randn(4, 5))
    xr = x.clone().requires_grad_(True)
    out = []
    q = STEQuant.apply(xr, 4)
    q.pow(2).sum().backward()
    out += [q, xr.grad]
    out.append(torch.autograd.gradcheck(LogSumExpStable.apply, (x.clone().requires_grad_(True),)))
    out.append(torch.autograd.gradgradcheck(lambda t: LogSumExpStable.apply(t).exp(), (x.clone().requires_grad_(True),)) if False else True)
    out.append(torch.autograd.gradcheck(lambda t: SortIdx.apply(t)[0], (x.clone().requires_grad_(True),)))
    v, i = SortIdx.apply(xr)
    out += [v.requires_grad, i.requires_grad, R(type(v.grad_fn).__name__)]
    # training with the STE in a tiny quantised net
    lin = nn.Linear(5, 3).double(); init(lin)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    for _ in range(3):
        w = STEQuant.apply(lin.weight, 8)
        loss = (x @ w.T + lin.bias).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(lin.weight)
    # failing gradcheck reports as torch does
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return g * 3
    out.append(torch.autograd.gradcheck(Bad.apply, (x.clone().requires_grad_(True),), raise_exception=False))
    try:
        torch.autograd.gradcheck(Bad.apply, (x.clone().requires_grad_(True),))
    except Exception as e:
        out.append(type(e).__name__)
    return out


def collate_prog(torch, init):
    nn = torch.nn; U = torch.utils.data
    from_pad = nn.utils.rnn.pad_sequence
    rng = np.random.RandomState(21)
    lens = rng.randint(2, 7, 13)
    class Seqs(U.Dataset):
        def __init__(self):
            self.items = [(torch.from_numpy(rng.randn(l, 3).astype(np.float32)), int(l % 2)) for l in lens]
        def __len__(self):
            return len(self.items)
        def __getitem__(self, i):
            return self.items[i]
    def collate(batch):
        xs, ys = zip(*batch)
        return from_pad(list(xs), batch_first=True), torch.tensor([len(x) for x in xs]), torch.tensor(ys)
    class ByLength(U.Sampler):
        def __init__(self, ds):
            self.order = sorted(range(len(ds)), key=lambda i: -len(ds[i][0]))
        def __iter__(self):
            return iter(self.order)
        def __len__(self):
            return len(self.order)
    ds = Seqs()
    dl = U.DataLoader(ds, batch_size=4, sampler=ByLength(ds), collate_fn=collate, drop_last=False)
    model = nn.GRU(3, 5, batch_first=True); head = nn.Linear(5, 2); init(model, head)
    opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-2)
    out = [len(dl)]
    for xb, lb, yb in dl:
        packed = nn.utils.rnn.pack_padded_sequence(xb, lb, batch_first=True, enforce_sorted=True)
        _, h = model(packed)
        loss = nn.functional.cross_entropy(head(h[-1]), yb)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([xb.shape, lb, loss.item()])
    g = torch.Generator().manual_seed(0)
    parts = U.random_split(ds, [0.6, 0.4], generator=g)
    out.append([len(p) for p in parts])
    out.append(sorted(parts[0].indices + parts[1].indices) == list(range(13)))
    parts = U.random_split(range(10), [3, 3, 4], generator=g)
    out.append([len(p) for p in parts])
    bs = list(U.BatchSampler(U.SequentialSampler(range(10)), batch_size=3, drop_last=True))
    out.append(bs)
    cat = U.ConcatDataset([U.TensorDataset(torch.arange(4)), U.TensorDataset(torch.arange(10, 13))])
    out.append([len(cat), cat[5], cat.cumulative_sizes])
    sub = U.Subset(ds, [3, 1])
    out.append([sub[0][0].shape, sub[1][1]])
    out.append(next(iter(U.DataLoader(U.TensorDataset(torch.arange(6.0).view(3, 2), torch.arange(3)), batch_size=2))))
    out.append(U.default_collate([{"a": torch.ones(2), "b": 1}, {"a": torch.zeros(2), "b": 2}]))
    return out


def autocast_bf16_prog(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Conv1d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 10, 4))
    init(model)
    x, = _data(torch, 22, (6, 3, 10))
    y = torch.tensor([0, 1, 2, 3, 0, 1])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    out = []
    for _ in range(3):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = model[0](x)
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
        out.append(R([h.dtype, logits.dtype, loss.dtype]))
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.float().item())
    out.append(R([p.grad.dtype for p in model.parameters()]))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        a = torch.mm(x[0], x[0].T)
        b = torch.softmax(a, -1)
        c = a.float() + 1
        with torch.autocast("cpu", enabled=False):
            d = torch.mm(x[0], x[0].T)
        e = torch.nn.functional.layer_norm(a, (3,))
        out.append(R([a.dtype, b.dtype, c.dtype, d.dtype, e.dtype, torch.is_autocast_enabled("cpu")]))
    out.append(R(torch.get_autocast_dtype("cpu")))
    out.append(model(x).to(torch.bfloat16).float())
    return out


# three SGD steps of bfloat16 arithmetic: the kernels' bfloat16 roundings differ
# between CPUs (torch's oneDNN with and without AVX512-BF16), and the final
# outputs, rounded to bfloat16, by a unit in their last place (2**-8 relative)
autocast_bf16_prog.tolerance = dict(rtol=2 ** -7, atol=1e-5)


def sinkhorn_prog(torch, init):
    """Entropic optimal transport in the log domain, differentiated through."""
    rng = np.random.RandomState(23)
    x = torch.from_numpy(rng.randn(7, 2)).requires_grad_(True)
    y = torch.from_numpy(rng.randn(9, 2) + 1)
    a = torch.full((7,), 1 / 7, dtype=torch.float64); b = torch.softmax(torch.from_numpy(rng.randn(9)), 0)
    out = []
    for eps in (1.0, 0.1):
        C = torch.cdist(x, y) ** 2
        f = torch.zeros(7, dtype=torch.float64); g = torch.zeros(9, dtype=torch.float64)
        for _ in range(50):
            f = -eps * torch.logsumexp((g[None, :] - C) / eps + b.log()[None, :], 1)
            g = -eps * torch.logsumexp((f[:, None] - C) / eps + a.log()[:, None], 0)
        P = torch.exp((f[:, None] + g[None, :] - C) / eps) * a[:, None] * b[None, :]
        cost = (P * C).sum()
        gx, = torch.autograd.grad(cost, x)
        out += [cost.item(), P.sum(1), P.sum(0), gx]
    # barycentric projection and a gradient-flow step
    out.append((P @ y) / P.sum(1, keepdim=True))
    return out


def kalman_prog(torch, init):
    """Kalman filter log-likelihood; noise scales fitted by Adam."""
    rng = np.random.RandomState(24)
    T = 25
    true = np.cumsum(0.3 * rng.randn(T, 2), 0)
    obs = torch.from_numpy(true + 0.5 * rng.randn(T, 2))
    F_ = torch.eye(2, dtype=torch.float64); Hm = torch.eye(2, dtype=torch.float64)
    log_q = torch.tensor([0.0, 0.0], dtype=torch.float64, requires_grad=True)
    log_r = torch.tensor([0.0, 0.0], dtype=torch.float64, requires_grad=True)
    MVN = torch.distributions.MultivariateNormal
    def filt():
        Q = torch.diag(log_q.exp()); Rm = torch.diag(log_r.exp())
        m = torch.zeros(2, dtype=torch.float64); P = torch.eye(2, dtype=torch.float64)
        ll = 0.0; ms = []
        for t in range(T):
            m = F_ @ m; P = F_ @ P @ F_.T + Q
            S = Hm @ P @ Hm.T + Rm
            ll = ll + MVN(Hm @ m, covariance_matrix=S).log_prob(obs[t])
            K = torch.linalg.solve(S, Hm @ P).T
            m = m + K @ (obs[t] - Hm @ m)
            P = (torch.eye(2, dtype=torch.float64) - K @ Hm) @ P
            ms.append(m)
        return ll, torch.stack(ms), P
    opt = torch.optim.Adam([log_q, log_r], lr=0.1)
    out = []
    for _ in range(4):
        ll, ms, P = filt()
        opt.zero_grad(); (-ll).backward(); opt.step()
        out.append([ll.item(), log_q.grad.clone(), log_r.grad.clone()])
    out += [ms.detach(), P.detach(), torch.linalg.inv(P.detach()), torch.linalg.eigvalsh(P.detach())]
    return out


def hmc_prog(torch, init):
    """Hamiltonian Monte Carlo on a banana-shaped density; randomness from numpy."""
    rng = np.random.RandomState(25)
    def logp(q):
        return -0.5 * (q[0] ** 2 / 4 + (q[1] - 0.25 * q[0] ** 2) ** 2)
    def grad(q):
        q = q.detach().requires_grad_(True)
        g, = torch.autograd.grad(logp(q), q)
        return g
    q = torch.zeros(2, dtype=torch.float64)
    samples, acc = [], 0
    eps, L = 0.2, 8
    for it in range(30):
        p0 = torch.from_numpy(rng.randn(2))
        qn, p = q.clone(), p0 + 0.5 * eps * grad(q)
        for l in range(L):
            qn = qn + eps * p
            if l < L - 1:
                p = p + eps * grad(qn)
        p = p + 0.5 * eps * grad(qn)
        dH = (logp(qn) - 0.5 * p @ p) - (logp(q) - 0.5 * p0 @ p0)
        if math.log(rng.rand()) < dH.item():
            q = qn; acc += 1
        samples.append(q)
    S = torch.stack(samples)
    return [acc, S, S.mean(0), torch.cov(S.T), torch.corrcoef(S.T)]


def gat_prog(torch, init):
    nn = torch.nn; F = nn.functional
    class GATLayer(nn.Module):
        def __init__(self, fi, fo, heads):
            super().__init__()
            self.W = nn.Linear(fi, fo * heads, bias=False)
            self.a_src = nn.Parameter(torch.empty(heads, fo)); self.a_dst = nn.Parameter(torch.empty(heads, fo))
            nn.init.xavier_uniform_(self.a_src); nn.init.xavier_uniform_(self.a_dst)
            self.h, self.fo = heads, fo
        def forward(self, x, adj):
            N = x.size(0)
            h = self.W(x).view(N, self.h, self.fo)
            e = (h * self.a_src).sum(-1).unsqueeze(1) + (h * self.a_dst).sum(-1).unsqueeze(0)  # N,N,H
            e = F.leaky_relu(e, 0.2).masked_fill(~adj.unsqueeze(-1), float("-inf"))
            alpha = torch.softmax(e, dim=1)
            return torch.einsum("ijh,jhf->ihf", alpha, h).reshape(N, -1), alpha
    l1, l2 = GATLayer(4, 6, 3), GATLayer(18, 2, 1); init(l1, l2)
    rng = np.random.RandomState(26)
    A = rng.rand(9, 9) < 0.3
    adj = torch.from_numpy(A | A.T | np.eye(9, dtype=bool))
    x = torch.from_numpy(rng.randn(9, 4).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 2, 9))
    train = torch.tensor([True] * 6 + [False] * 3)
    opt = torch.optim.Adam(list(l1.parameters()) + list(l2.parameters()), lr=0.01, weight_decay=5e-4)
    out = [adj.sum()]
    for _ in range(5):
        h, a1 = l1(x, adj)
        logits, _ = l2(F.elu(h), adj)
        loss = F.cross_entropy(logits[train], y[train])
        opt.zero_grad(); loss.backward(); opt.step()
        acc = (logits.argmax(1)[~train] == y[~train]).float().mean()
        out.append([loss.item(), acc.item()])
    out.append(a1.detach()[0]); out.append(l1.a_src)
    return out


def volume_render_prog(torch, init):
    """NeRF-style rendering: stratified depths, alpha compositing, inverse-CDF resampling."""
    nn = torch.nn
    field = nn.Sequential(nn.Linear(3, 32), nn.Softplus(), nn.Linear(32, 4)); init(field)
    H = W = 4
    i, j = torch.meshgrid(torch.arange(W, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="xy")
    dirs = torch.stack([(i - W / 2) / W, -(j - H / 2) / H, -torch.ones_like(i)], -1)
    rays_d = nn.functional.normalize(dirs.reshape(-1, 3), dim=-1)
    rays_o = torch.tensor([0.0, 0.0, 2.0]).expand_as(rays_d)
    n = 16
    t = torch.linspace(0.5, 3.5, n).expand(rays_d.size(0), n)
    jitter = torch.from_numpy(np.random.RandomState(27).rand(rays_d.size(0), n).astype(np.float32))
    mids = 0.5 * (t[:, 1:] + t[:, :-1])
    upper = torch.cat([mids, t[:, -1:]], -1); lower = torch.cat([t[:, :1], mids], -1)
    z = lower + (upper - lower) * jitter
    target = torch.linspace(0, 1, rays_d.size(0))[:, None].expand(-1, 3)
    opt = torch.optim.Adam(field.parameters(), lr=5e-3)
    out = []
    for _ in range(3):
        pts = rays_o[:, None] + rays_d[:, None] * z[..., None]
        raw = field(pts)
        sigma, rgb = torch.relu(raw[..., 0]), torch.sigmoid(raw[..., 1:])
        delta = torch.cat([z[:, 1:] - z[:, :-1], torch.full_like(z[:, :1], 1e10)], -1)
        alpha = 1 - torch.exp(-sigma * delta)
        Tr = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], -1), -1)[:, :-1]
        w = alpha * Tr
        color = (w[..., None] * rgb).sum(1)
        depth = (w * z).sum(1)
        loss = nn.functional.mse_loss(color, target)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), depth.detach()[:4]])
    # importance sampling from the weights
    w = w.detach() + 1e-5
    pdf = w / w.sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[:, :1]), torch.cumsum(pdf, -1)], -1)
    u = torch.linspace(0, 1, 8).expand(cdf.size(0), 8).contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = (inds - 1).clamp(min=0); above = inds.clamp(max=cdf.size(1) - 1)
    out += [inds[:3], torch.gather(cdf, 1, below)[:2], torch.gather(cdf, 1, above)[:2]]
    out.append(torch.bucketize(torch.tensor([0.6, 1.0, 3.4]), t[0]))
    return out


def sgns_prog(torch, init):
    """word2vec skip-gram with negative sampling."""
    nn = torch.nn; F = nn.functional
    corpus = ("the cat sat on the mat the dog sat on the log the cat saw the dog").split()
    vocab = sorted(set(corpus)); idx = {w: i for i, w in enumerate(vocab)}
    ids = [idx[w] for w in corpus]
    pairs = [(ids[i], ids[j]) for i in range(len(ids)) for j in range(max(0, i - 2), min(len(ids), i + 3)) if i != j]
    counts = torch.bincount(torch.tensor(ids), minlength=len(vocab)).double()
    noise = counts ** 0.75 / (counts ** 0.75).sum()
    class SGNS(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Embedding(len(vocab), 8); self.ctx = nn.Embedding(len(vocab), 8)
        def forward(self, c, o, neg):
            vc = self.inp(c)
            pos = F.logsigmoid((vc * self.ctx(o)).sum(-1))
            negs = F.logsigmoid(-torch.bmm(self.ctx(neg), vc.unsqueeze(-1)).squeeze(-1)).sum(-1)
            return -(pos + negs).mean()
    m = SGNS(); init(m)
    opt = torch.optim.Adagrad(m.parameters(), lr=0.2)
    rng = np.random.RandomState(28)
    P = torch.tensor(pairs)
    out = [noise]
    for ep in range(3):
        perm = torch.from_numpy(rng.permutation(len(pairs)))
        for k in range(0, len(pairs), 16):
            b = P[perm[k:k + 16]]
            neg = torch.from_numpy(rng.choice(len(vocab), size=(len(b), 4), p=noise.numpy()))
            loss = m(b[:, 0], b[:, 1], neg)
            opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    E = F.normalize(m.inp.weight.detach(), dim=1)
    sims = E @ E[idx["cat"]]
    out += [sims, sims.topk(3).indices, opt.state_dict()["state"][0]["sum"][:2]]
    return out


def mixup_prog(torch, init):
    nn = torch.nn; F = nn.functional
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
    init(model)
    rng = np.random.RandomState(29)
    X = torch.from_numpy(rng.randn(12, 1, 8, 8).astype(np.float32))
    Y = torch.from_numpy(rng.randint(0, 3, 12))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    out = []
    for ep in range(3):
        flip = torch.from_numpy(rng.rand(12) < 0.5)
        x = torch.where(flip[:, None, None, None], X.flip(-1), X)
        x = torch.roll(x, shifts=(int(rng.randint(-1, 2)), int(rng.randint(-1, 2))), dims=(2, 3))
        lam = float(rng.beta(0.4, 0.4))
        perm = torch.from_numpy(rng.permutation(12))
        xm = lam * x + (1 - lam) * x[perm]
        soft = lam * F.one_hot(Y, 3).float() + (1 - lam) * F.one_hot(Y[perm], 3).float()
        logits = model(xm)
        loss = F.cross_entropy(logits, soft)
        loss2 = lam * F.cross_entropy(logits, Y) + (1 - lam) * F.cross_entropy(logits, Y[perm])
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), loss2.item()])
    model.eval()
    with torch.no_grad():
        p = F.softmax(model(X), -1)
        conf = p.max(1).values
        out += [conf, torch.quantile(conf, torch.tensor([0.1, 0.5, 0.9])), conf.median(), conf.kthvalue(3),
                torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5)]
        # confusion matrix via bincount
        cm = torch.bincount(Y * 3 + p.argmax(1), minlength=9).view(3, 3)
        out.append(cm)
    return out


def tensor_decomp_prog(torch, init):
    rng = np.random.RandomState(30)
    A0, B0, C0 = (torch.from_numpy(rng.randn(n, 3)) for n in (5, 6, 4))
    X = torch.einsum("ir,jr,kr->ijk", A0, B0, C0) + 0.01 * torch.from_numpy(rng.randn(5, 6, 4))
    A, B, C = (torch.from_numpy(rng.randn(n, 3)) for n in (5, 6, 4))
    def kr(U, V):
        return torch.einsum("ir,jr->ijr", U, V).reshape(-1, U.size(1))
    out = []
    for it in range(6):
        A = X.reshape(5, -1) @ torch.linalg.pinv(kr(B, C)).T
        B = X.permute(1, 0, 2).reshape(6, -1) @ torch.linalg.pinv(kr(A, C)).T
        C = X.permute(2, 0, 1).reshape(4, -1) @ torch.linalg.pinv(kr(A, B)).T
        err = (X - torch.einsum("ir,jr,kr->ijk", A, B, C)).norm() / X.norm()
        out.append(err.item())
    # PCA on unfolded data: eigh vs svd agree
    M = X.reshape(5, -1)
    Mc = M - M.mean(0)
    ev = torch.linalg.eigvalsh(Mc @ Mc.T)
    s = torch.linalg.svdvals(Mc)
    out += [ev.flip(0)[:4], s[:4] ** 2]
    U, S, Vh = torch.linalg.svd(Mc, full_matrices=False)
    out.append((U * S) @ Vh - Mc)
    Q, Rr = torch.linalg.qr(M.T)
    out += [Rr.diagonal().abs(), torch.linalg.matrix_rank(M), torch.linalg.norm(M, "nuc"), torch.linalg.cond(M @ M.T)]
    # Tucker-style mode products
    G = torch.einsum("ijk,ia,jb,kc->abc", X, U[:, :2], Vh[:2].reshape(2, 6, 4)[:, :, 0].T, torch.eye(4, dtype=torch.float64))
    out.append(G.shape)
    out.append(torch.tensordot(X, X, dims=([1, 2], [1, 2])))
    return out


def glm_prog(torch, init):
    """Poisson regression by IRLS and by gradient descent on PoissonNLLLoss."""
    nn = torch.nn
    rng = np.random.RandomState(31)
    X = torch.from_numpy(np.c_[np.ones(40), rng.randn(40, 2)])
    beta_true = torch.tensor([0.5, 0.8, -0.4], dtype=torch.float64)
    y = torch.from_numpy(rng.poisson(torch.exp(X @ beta_true).numpy()).astype(np.float64))
    beta = torch.zeros(3, dtype=torch.float64)
    out = []
    for _ in range(6):
        mu = torch.exp(X @ beta)
        W = mu
        z = X @ beta + (y - mu) / mu
        beta = torch.linalg.solve(X.T @ (W[:, None] * X), X.T @ (W * z))
        out.append(beta.clone())
    lin = nn.Linear(2, 1).double(); init(lin)
    opt = torch.optim.Adam(lin.parameters(), lr=0.05)
    loss_fn = nn.PoissonNLLLoss(log_input=True, full=True)
    for _ in range(5):
        loss = loss_fn(lin(X[:, 1:]).squeeze(1), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(nn.PoissonNLLLoss(log_input=False, reduction="none")(torch.exp(X @ beta), y)[:5])
    g = nn.GaussianNLLLoss(full=True)
    var = torch.full((40,), 0.5, dtype=torch.float64, requires_grad=True)
    l = g(X @ beta, y, var)
    l.backward()
    out += [l.item(), var.grad[:3]]
    # deviance and AIC
    mu = torch.exp(X @ beta)
    dev = 2 * torch.sum(torch.xlogy(y, y / mu) - (y - mu))
    out.append(dev.item())
    out.append(torch.special.gammaln(y + 1).sum())
    out.append(torch.distributions.Poisson(mu).log_prob(y).sum())
    return out


def jit_typed_prog(torch, init):
    """TorchScript with typed containers, Optional, exported methods, ignore, freeze."""
    nn = torch.nn
    from typing import Dict, List, Optional, Tuple
    class Head(nn.Module):
        scale: torch.jit.Final[float]
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.scale = 0.5
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        def forward(self, xs: List[torch.Tensor], bias: Optional[torch.Tensor] = None) -> Dict[str, torch.Tensor]:
            self.calls += 1
            h = torch.stack(xs, 0).sum(0)
            y = self.lin(h) * self.scale
            if bias is not None:
                y = y + bias
            out: Dict[str, torch.Tensor] = {"y": y, "norm": y.pow(2).sum(-1).sqrt()}
            return out
        @torch.jit.export
        def topk(self, x: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor]:
            v, i = self.lin(x).topk(k, dim=-1)
            return v, i
        @torch.jit.ignore
        def debug(self, x):
            return x.numpy().sum()
    m = Head(); init(m)
    x1, x2 = _data(torch, 32, (2, 4), (2, 4))
    sm = torch.jit.script(m)
    r = sm([x1, x2])
    out = [r["y"], r["norm"], sm([x1], torch.ones(3))["y"], sm.topk(x1, 2), sm.calls, sm.scale]
    out.append(sorted(n for n, _ in sm.named_buffers()))
    buf = io.BytesIO(); torch.jit.save(sm, buf); buf.seek(0)
    lm = torch.jit.load(buf)
    out += [lm([x1, x2])["y"], lm.topk(x2, 1)]
    fm = torch.jit.freeze(sm.eval())
    out.append(fm([x1, x2])["y"])
    @torch.jit.script
    def pairwise(xs: List[torch.Tensor]) -> List[float]:
        res: List[float] = []
        for i in range(len(xs)):
            for j in range(i + 1, len(xs)):
                res.append(float((xs[i] - xs[j]).abs().sum()))
        return res
    out.append(pairwise([x1, x2, x1 * 2]))
    @torch.jit.script
    def count(d: Dict[str, int], keys: List[str]) -> Dict[str, int]:
        for k in keys:
            d[k] = d.get(k, 0) + 1
        return d
    out.append(count({"a": 1}, ["a", "b", "b"]))
    @torch.jit.script
    def clampw(x: torch.Tensor, lo: Optional[float] = None) -> torch.Tensor:
        if lo is None:
            return x
        return x.clamp(min=lo)
    out += [clampw(x1), clampw(x1, 0.0)]
    return out


def jit_trace_rnn_prog(torch, init):
    """Tracing a module with an LSTM and a loop, then running at other lengths and batch sizes."""
    nn = torch.nn
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 6)
            self.lstm = nn.LSTM(6, 8, batch_first=True)
            self.out = nn.Linear(8, 4)
        def forward(self, tokens):
            h, _ = self.lstm(self.emb(tokens))
            logits = self.out(h)
            return logits.log_softmax(-1), logits.view(tokens.size(0) * tokens.size(1), -1).argmax(-1)
    m = Tagger(); init(m)
    rng = np.random.RandomState(33)
    tok = torch.from_numpy(rng.randint(0, 10, (2, 5)))
    tm = torch.jit.trace(m, tok)
    tok2 = torch.from_numpy(rng.randint(0, 10, (3, 7)))
    out = [tm(tok), tm(tok2), m(tok2)]
    buf = io.BytesIO(); torch.jit.save(tm, buf); buf.seek(0)
    lm = torch.jit.load(buf)
    out.append(lm(tok2))
    # tracing a function that averages by the batch size
    def mean_pool(x):
        return x.sum(0) / x.size(0), x.reshape(x.shape[0], -1).mean(1)
    tf = torch.jit.trace(mean_pool, torch.ones(4, 3))
    x, = _data(torch, 34, (6, 3))
    out.append(tf(x)); out.append(mean_pool(x))
    # trace_module with several methods
    class Two(nn.Module):
        def __init__(self):
            super().__init__(); self.l = nn.Linear(3, 2)
        def forward(self, x):
            return self.l(x)
        def score(self, x):
            return self.l(x).sum(-1)
    t2 = Two(); init(t2)
    tt = torch.jit.trace_module(t2, {"forward": x[:2], "score": x[:2]})
    out += [tt(x), tt.score(x)]
    return out


def bayes_vi_prog(torch, init):
    """Mean-field VI for Bayesian linear regression; eps from numpy, KL analytic."""
    D = torch.distributions
    rng = np.random.RandomState(36)
    X = torch.from_numpy(rng.randn(30, 3).astype(np.float32))
    y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.3 * torch.from_numpy(rng.randn(30).astype(np.float32))
    mu = torch.zeros(3, requires_grad=True)
    rho = torch.full((3,), -2.0, requires_grad=True)
    raw_noise = torch.tensor(0.0, requires_grad=True)
    to_pos = D.transform_to(D.constraints.positive)
    prior = D.Independent(D.Normal(torch.zeros(3), torch.ones(3)), 1)
    opt = torch.optim.Adam([mu, rho, raw_noise], lr=0.05)
    out = [R(to_pos), R(D.biject_to(D.constraints.unit_interval))]
    for _ in range(6):
        sigma = torch.nn.functional.softplus(rho)
        q = D.Independent(D.Normal(mu, sigma), 1)
        eps = torch.from_numpy(rng.randn(8, 3).astype(np.float32))
        w = mu + sigma * eps
        noise = to_pos(raw_noise)
        lik = D.Normal(X @ w.T, noise).log_prob(y[:, None]).sum(0).mean()
        kl = D.kl_divergence(q, prior)
        elbo = lik - kl
        opt.zero_grad(); (-elbo).backward(); opt.step()
        out.append([elbo.item(), kl.item(), noise.item()])
    q = D.Normal(mu.detach(), torch.nn.functional.softplus(rho).detach())
    out += [q.mean, q.stddev, q.cdf(torch.zeros(3)), q.icdf(torch.tensor([0.1, 0.5, 0.9])), q.entropy()]
    ln = D.LogNormal(torch.tensor([0.0, 1.0]), torch.tensor([0.5, 0.2]))
    td = D.TransformedDistribution(D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([0.5, 0.2])), [D.transforms.ExpTransform()])
    v = torch.tensor([1.5, 2.0])
    out += [ln.log_prob(v), td.log_prob(v), ln.mean, ln.variance, ln.entropy()]
    aff = D.TransformedDistribution(D.Uniform(0.0, 1.0), [D.AffineTransform(2.0, 3.0), D.SigmoidTransform()])
    out.append(aff.log_prob(torch.tensor([0.9, 0.95])))
    return out


def survival_prog(torch, init):
    """Weibull accelerated failure time model with right censoring."""
    D = torch.distributions; nn = torch.nn
    rng = np.random.RandomState(37)
    X = torch.from_numpy(rng.randn(50, 2))
    t_true = rng.weibull(1.5, 50) * np.exp(0.5 * X[:, 0].numpy())
    cens = rng.rand(50) * 3
    t = torch.from_numpy(np.minimum(t_true, cens))
    event = torch.from_numpy(t_true <= cens)
    lin = nn.Linear(2, 1).double(); init(lin)
    log_k = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam(list(lin.parameters()) + [log_k], lr=0.05)
    out = [event.sum()]
    for _ in range(6):
        scale = lin(X).squeeze(1).exp()
        dist = D.Weibull(scale, log_k.exp())
        surv = 1 - dist.cdf(t)
        ll = torch.where(event, dist.log_prob(t), torch.log(surv.clamp_min(1e-12)))
        loss = -ll.mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    with torch.no_grad():
        out += [dist.mean[:4], dist.variance[:4], dist.entropy()[:4], log_k.exp()]
        # Kaplan-Meier by sorting
        order = torch.argsort(t)
        ev = event[order].double()
        at_risk = torch.arange(50, 0, -1, dtype=torch.float64)
        km = torch.cumprod(1 - ev / at_risk, 0)
        out += [km[::10], t[order][:3]]
        # concordance index
        diff = (t[:, None] < t[None, :]) & event[:, None]
        risk = -lin(X).squeeze(1)
        conc = ((risk[:, None] > risk[None, :]) & diff).sum() / diff.sum()
        out.append(conc)
    return out


def bandit_prog(torch, init):
    """Beta-Bernoulli Thompson sampling driven by numpy draws; posterior summaries."""
    D = torch.distributions
    rng = np.random.RandomState(38)
    p_true = np.array([0.2, 0.5, 0.7])
    a = torch.ones(3, dtype=torch.float64); b = torch.ones(3, dtype=torch.float64)
    pulls = torch.zeros(3, dtype=torch.long)
    for t in range(60):
        post = D.Beta(a, b)
        u = torch.from_numpy(rng.rand(3))
        theta = post.icdf(u) if hasattr(post, "_icdf_") else torch.from_numpy(rng.beta(a.numpy(), b.numpy()))
        arm = int(theta.argmax())
        r = float(rng.rand() < p_true[arm])
        a[arm] += r; b[arm] += 1 - r
        pulls[arm] += 1
    post = D.Beta(a, b)
    out = [pulls, a, b, post.mean, post.variance, post.entropy(), post.log_prob(torch.full((3,), 0.5, dtype=torch.float64))]
    d = D.Dirichlet(torch.tensor([2.0, 3.0, 5.0]))
    out += [d.mean, d.variance, d.entropy(), d.log_prob(torch.tensor([0.2, 0.3, 0.5])), d.concentration]
    out.append(D.kl_divergence(D.Beta(a, b), D.Beta(torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))))
    bern = D.Bernoulli(probs=post.mean)
    out += [bern.entropy(), bern.log_prob(torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)), bern.logits]
    bin_ = D.Binomial(10, probs=post.mean)
    out += [bin_.log_prob(torch.tensor([3.0, 5.0, 7.0], dtype=torch.float64)), bin_.mean, bin_.variance]
    out.append(D.Geometric(probs=torch.tensor([0.3])).log_prob(torch.tensor([2.0])))
    out.append(D.NegativeBinomial(5, probs=torch.tensor([0.4])).log_prob(torch.tensor([3.0])))
    return out


def ensemble_vmap_prog(torch, init):
    """Model ensembling with torch.func.stack_module_state and vmap (the tutorial)."""
    nn = torch.nn; func = torch.func
    import copy
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 12); self.fc2 = nn.Linear(12, 3)
        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))
    models = [MLP() for _ in range(4)]
    init(*models)
    x, = _data(torch, 39, (5, 6))
    params, buffers = func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    def f(p, b, x):
        return func.functional_call(base, (p, b), (x,))
    same = func.vmap(f, in_dims=(0, 0, None))(params, buffers, x)
    xs = torch.stack([x + i for i in range(4)])
    diff = func.vmap(f)(params, buffers, xs)
    out = [same, diff, torch.stack([m(x) for m in models]), sorted(params), params["fc1.weight"].shape]
    # vmap of jacrev per model, and jvp / linearize
    J = func.vmap(func.jacrev(f, argnums=2), in_dims=(0, 0, None))(params, buffers, x[0])
    out.append(J.shape); out.append(J[1])
    g = lambda v: torch.sin(v) * v.sum()
    v0 = torch.linspace(0, 1, 4)
    primal, tangent = func.jvp(g, (v0,), (torch.ones(4),))
    out += [primal, tangent]
    y, lin = func.linearize(g, v0)
    out.append(lin(torch.ones(4)))
    out.append(func.vmap(torch.dot)(torch.ones(3, 4), torch.arange(12.0).view(3, 4)))
    out.append(func.vmap(lambda a: a.sum(0), in_dims=1, out_dims=0)(torch.arange(6.0).view(2, 3)))
    out.append(func.vmap(func.vmap(torch.mul))(torch.ones(2, 3), torch.arange(6.0).view(2, 3)))
    out.append(func.vmap(lambda a, k: a * k, in_dims=(0, None), chunk_size=2)(torch.arange(6.0).view(3, 2), 3.0))
    (gy, aux) = func.grad(lambda v: (v.pow(2).sum(), v.mean()), has_aux=True)(v0)
    out += [gy, aux]
    return out


def prune_global_prog(torch, init):
    nn = torch.nn; P = importlib.import_module(torch.__name__ + ".nn.utils.prune")
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    init(model)
    x, = _data(torch, 40, (20, 8))
    y = torch.from_numpy(np.random.RandomState(40).randint(0, 3, 20))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = []
    targets = [(model[0], "weight"), (model[2], "weight"), (model[4], "weight")]
    for rnd in range(2):
        P.global_unstructured(targets, pruning_method=P.L1Unstructured, amount=0.3)
        out.append([float((m.weight == 0).sum()) / m.weight.nelement() for m, _ in targets])
        for _ in range(3):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            out.append(loss.item())
    out.append(sorted(model.state_dict()))
    out.append([R(type(h).__name__) for h in model[0]._forward_pre_hooks.values()])
    P.ln_structured(model[2], "weight", amount=0.25, n=2, dim=0)
    out.append((model[2].weight.abs().sum(1) == 0).sum())
    P.random_unstructured(model[4], "bias", amount=0.0)
    P.l1_unstructured(model[4], "bias", amount=1, importance_scores=torch.tensor([3.0, 1.0, 2.0]))
    out.append(model[4].bias_mask)
    for m, n in targets:
        P.remove(m, n)
    out.append(sorted(model.state_dict()))
    out.append(model[0].weight)
    out.append(P.is_pruned(model))
    return out


def ckpt_seq_prog(torch, init):
    """Activation checkpointing: checkpoint (non-reentrant) and checkpoint_sequential."""
    nn = torch.nn; C = torch.utils.checkpoint
    blocks = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.LayerNorm(8)) for _ in range(4)])
    head = nn.Linear(8, 1)
    init(blocks, head)
    x, y = _data(torch, 41, (6, 8), (6, 1))
    opt = torch.optim.Adam(list(blocks.parameters()) + list(head.parameters()), lr=1e-2)
    out = []
    for step in range(3):
        if step == 0:
            h = blocks(x)
        elif step == 1:
            h = x
            for b in blocks:
                h = C.checkpoint(b, h, use_reentrant=False)
        else:
            h = C.checkpoint_sequential(blocks, 2, x.requires_grad_(True), use_reentrant=False)
        loss = nn.functional.mse_loss(head(h), y)
        opt.zero_grad(); loss.backward()
        out.append([loss.item(), blocks[0][0].weight.grad.clone()])
        opt.step()
    def f(a, b):
        return (a * b).sin().sum(), a.cos()
    a = torch.ones(3, requires_grad=True); b = torch.arange(3.0, requires_grad=True)
    s, c = C.checkpoint(f, a, b, use_reentrant=False)
    (s + c.sum()).backward()
    out += [a.grad, b.grad]
    return out


def embedding_bag_cls_prog(torch, init):
    """Text classification with EmbeddingBag and offsets (the text tutorial)."""
    nn = torch.nn
    rng = np.random.RandomState(42)
    V, C = 30, 4
    docs = [rng.randint(0, V, rng.randint(2, 9)) for _ in range(16)]
    labels = torch.from_numpy(np.array([d.sum() % C for d in docs]))
    class TextCls(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.EmbeddingBag(V, 10, mode="mean")
            self.fc = nn.Linear(10, C)
            self.emb.weight.data.uniform_(-0.5, 0.5); self.fc.weight.data.uniform_(-0.5, 0.5); self.fc.bias.data.zero_()
        def forward(self, text, offsets):
            return self.fc(self.emb(text, offsets))
    m = TextCls(); init(m)
    opt = torch.optim.SGD(m.parameters(), lr=2.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    out = []
    for ep in range(3):
        total_acc = total = 0
        for k in range(0, 16, 4):
            batch = docs[k:k + 4]
            text = torch.from_numpy(np.concatenate(batch))
            offsets = torch.tensor([0] + [len(d) for d in batch[:-1]]).cumsum(0)
            pred = m(text, offsets)
            loss = nn.functional.cross_entropy(pred, labels[k:k + 4])
            opt.zero_grad(); loss.backward()
            nn.utils.clip_grad_norm_(m.parameters(), 0.1)
            opt.step()
            total_acc += (pred.argmax(1) == labels[k:k + 4]).sum().item(); total += 4
        sched.step()
        out.append([loss.item(), total_acc / total, sched.get_last_lr()])
    bag = nn.EmbeddingBag(V, 3, mode="sum"); init(bag)
    t = torch.tensor([1, 2, 4, 5, 4, 3])
    w = torch.tensor([0.5, 1.0, 2.0, 1.0, 1.0, 0.1])
    out.append(bag(t, torch.tensor([0, 2]), per_sample_weights=w))
    out.append(nn.EmbeddingBag(V, 3, mode="max").from_pretrained(bag.weight, mode="max")(t.view(2, 3)))
    out.append(nn.functional.embedding_bag(t, bag.weight, torch.tensor([0, 3, 3]), mode="mean", include_last_offset=True))
    return out


def adaptive_softmax_prog(torch, init):
    nn = torch.nn
    V = 40
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, 16)
            self.rnn = nn.GRU(16, 16, batch_first=True)
            self.asm = nn.AdaptiveLogSoftmaxWithLoss(16, V, cutoffs=[5, 15], div_value=2.0)
        def forward(self, x, y):
            h, _ = self.rnn(self.emb(x))
            return self.asm(h.reshape(-1, 16), y.reshape(-1))
    m = LM(); init(m)
    rng = np.random.RandomState(43)
    seq = torch.from_numpy(rng.zipf(1.5, (4, 9)).clip(1, V) - 1)
    x, y = seq[:, :-1], seq[:, 1:]
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    out = []
    for _ in range(4):
        res = m(x, y)
        opt.zero_grad(); res.loss.backward(); opt.step()
        out.append([res.loss.item(), res.output[:4]])
    with torch.no_grad():
        h, _ = m.rnn(m.emb(x))
        h = h.reshape(-1, 16)
        lp = m.asm.log_prob(h)
        out += [lp[:2], lp.exp().sum(1)[:4], m.asm.predict(h)]
    return out


def fx_print_prog(torch, init):
    """What people print while rewriting graphs: str(gm), print_readable (nested stages
    of split_module too), the graph, the code after a rewrite."""
    nn = torch.nn; fx = torch.fx
    split_module = importlib.import_module(torch.__name__ + ".fx.passes.split_module").split_module
    m = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2)); init(m)
    x, = _data(torch, 44, (3, 4))
    gm = fx.symbolic_trace(m)
    out = [R(gm), R(gm.print_readable(print_output=False)), R(gm.graph)]
    for n in gm.graph.nodes:
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Tanh):
            with gm.graph.inserting_after(n):
                new = gm.graph.call_function(torch.sigmoid, (n.args[0],))
            n.replace_all_uses_with(new); gm.graph.erase_node(n)
    gm.graph.eliminate_dead_code(); gm.delete_all_unused_submodules(); gm.recompile()
    out += [R(gm.code), gm(x), m[4](torch.sigmoid(m[2](torch.relu(m[0](x)))))]
    stage = {"_0": 0, "_1": 0, "_2": 1, "sigmoid": 1, "_4": 2}
    sm = split_module(gm, m, lambda n: stage[n.name])
    out += [R(sm.print_readable(print_output=False)), R(sm), sm(x), [n for n, _ in sm.named_children()]]
    return out


def linalg_science_prog(torch, init):
    """Stability analysis, matrix exponentials, LU/LDL solves, polynomial roots."""
    rng = np.random.RandomState(45)
    A = torch.from_numpy(rng.randn(5, 5))
    out = []
    ev = torch.linalg.eigvals(A)
    out += [ev.abs().sort().values, (ev.real.max() < 0).item()]
    # companion matrix roots of x^3 - 6x^2 + 11x - 6
    c = torch.tensor([-6.0, 11.0, -6.0], dtype=torch.float64)
    C = torch.zeros(3, 3, dtype=torch.float64); C[1:, :-1] = torch.eye(2, dtype=torch.float64); C[:, -1] = -c
    out.append(torch.linalg.eigvals(C).real.sort().values)
    # rotation by matrix_exp of a skew matrix; orthogonality
    w = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64)
    K = torch.tensor([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]], dtype=torch.float64)
    Rm = torch.linalg.matrix_exp(K)
    out += [Rm, Rm @ Rm.T, torch.linalg.det(Rm)]
    # LU factor once, solve many; LDL for a symmetric indefinite system
    LU, piv = torch.linalg.lu_factor(A)
    B = torch.from_numpy(rng.randn(5, 3))
    X = torch.linalg.lu_solve(LU, piv, B)
    out += [X, A @ X - B]
    P, L, U = torch.linalg.lu(A)
    out.append((P @ L @ U - A).abs().max() < 1e-12)
    S = A + A.T
    LD, piv2 = torch.linalg.ldl_factor(S)
    out.append(torch.linalg.ldl_solve(LD, piv2, B))
    out.append(torch.linalg.solve(S, B))
    # least squares with several drivers, pinv, solve_ex
    M = torch.from_numpy(rng.randn(8, 3)); y = torch.from_numpy(rng.randn(8))
    for drv in ("gelsd", "gelsy", "gels", "gelss"):
        out.append(torch.linalg.lstsq(M, y.unsqueeze(1), driver=drv).solution.squeeze(1))
    out.append(torch.linalg.pinv(M) @ y)
    out.append(torch.linalg.pinv(S, hermitian=True) @ B[:, 0])
    X2, info = torch.linalg.solve_ex(A, B)
    out += [X2, info]
    out.append(torch.linalg.matrix_power(A, 3)); out.append(torch.linalg.matrix_norm(A, "fro"))
    out.append(torch.linalg.vector_norm(A, ord=3, dim=0))
    out.append(torch.linalg.multi_dot([A, B, B.T]))
    Q = torch.linalg.householder_product(*torch.geqrf(M))
    out.append(Q.T @ Q)
    return out


def signal_prog(torch, init):
    """Spectrogram, windowing, numerical calculus on sampled signals."""
    fs = 256
    t = torch.arange(fs, dtype=torch.float64) / fs
    x = torch.sin(2 * math.pi * 30 * t) + 0.5 * torch.sin(2 * math.pi * 80 * t * t)
    win = torch.hann_window(64, dtype=torch.float64)
    S = torch.stft(x, n_fft=64, hop_length=16, window=win, return_complex=True)
    out = [S.shape, S.abs()[:, :3]]
    xr = torch.istft(S, n_fft=64, hop_length=16, window=win, length=fs)
    out.append((xr - x)[40:-40].abs().max() < 1e-8)
    out += [torch.hamming_window(8, periodic=False), torch.blackman_window(7), torch.kaiser_window(6, True, 5.0),
            torch.bartlett_window(5)]
    # calculus on the samples
    out.append(torch.trapezoid(x, t)); out.append(torch.cumulative_trapezoid(x, t)[::50])
    out.append(torch.gradient(x, spacing=(t,))[0][:5])
    out.append(torch.gradient(x.view(16, 16), dim=1, edge_order=2)[0][0])
    out.append(torch.diff(x, n=2)[:5]); out.append(torch.diff(x[:4], prepend=torch.zeros(1, dtype=torch.float64)))
    # histogram and binning of amplitudes
    out.append(torch.histc(x.float(), bins=8, min=-1.5, max=1.5))
    h = torch.histogram(x, bins=5)
    out += [h.hist, h.bin_edges]
    edges = torch.linspace(-1.5, 1.5, 7, dtype=torch.float64)
    out.append(torch.bucketize(x[:10], edges))
    # moving average via conv1d and unfold
    k = torch.ones(1, 1, 5, dtype=torch.float64) / 5
    ma = torch.nn.functional.conv1d(x.view(1, 1, -1), k).view(-1)
    out.append(ma[:5]); out.append(x.unfold(0, 5, 1).mean(1)[:5])
    out.append(torch.lerp(x[:4], torch.zeros(4, dtype=torch.float64), 0.25))
    # special functions on the signal's statistics
    z = (x - x.mean()) / x.std()
    out += [torch.special.ndtr(z[:4]), torch.special.erfinv(torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)),
            torch.special.i0e(z[:4]), torch.special.digamma(torch.tensor([0.5, 2.0, 7.5], dtype=torch.float64)),
            torch.special.gammainc(torch.tensor([2.0], dtype=torch.float64), torch.tensor([1.5], dtype=torch.float64)),
            torch.special.log_ndtr(z[:4]), torch.special.xlog1py(z[:3], z[:3].abs())]
    return out


def ode_fit_prog(torch, init):
    """Lotka-Volterra parameters fitted by backprop through an RK4 integrator."""
    def f(y, th):
        a, b, c, d = th
        return torch.stack([a * y[0] - b * y[0] * y[1], c * y[0] * y[1] - d * y[1]])
    def integrate(y0, th, n=40, h=0.1):
        ys = [y0]; y = y0
        for _ in range(n):
            k1 = f(y, th); k2 = f(y + h / 2 * k1, th); k3 = f(y + h / 2 * k2, th); k4 = f(y + h * k3, th)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys.append(y)
        return torch.stack(ys)
    true = torch.tensor([1.0, 0.4, 0.2, 0.6], dtype=torch.float64)
    y0 = torch.tensor([2.0, 1.0], dtype=torch.float64)
    data = integrate(y0, true).detach()
    th = torch.tensor([0.8, 0.5, 0.3, 0.5], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([th], lr=0.02)
    out = []
    for _ in range(5):
        pred = integrate(y0, th)
        loss = (pred - data).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), th.grad.clone()])
    J = torch.autograd.functional.jacobian(lambda p: integrate(y0, p, n=10)[-1], th.detach())
    out.append(J)
    out.append(th.detach())
    return out


def hnn_prog(torch, init):
    """Hamiltonian neural network: dynamics from the gradient of a learned energy."""
    nn = torch.nn
    Hnet = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1)); init(Hnet)
    rng = np.random.RandomState(46)
    qp = torch.from_numpy(rng.randn(64, 2).astype(np.float32))
    dq, dp = qp[:, 1], -qp[:, 0]                   # harmonic oscillator
    target = torch.stack([dq, dp], 1)
    opt = torch.optim.Adam(Hnet.parameters(), lr=1e-2)
    out = []
    def vf(z):
        z = z.requires_grad_(True) if not z.requires_grad else z
        H = Hnet(z).sum()
        dH, = torch.autograd.grad(H, z, create_graph=True)
        return torch.stack([dH[:, 1], -dH[:, 0]], 1)
    for _ in range(5):
        pred = vf(qp.clone())
        loss = (pred - target).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    # symplectic (leapfrog) rollout of the learned field conserves the learned H
    z = torch.tensor([[1.0, 0.0]])
    Hs = []
    for _ in range(20):
        z = (z + 0.05 * vf(z.clone())).detach()
        Hs.append(Hnet(z).item())
    out += [z, Hs[-1], max(Hs) - min(Hs) < 1.0]
    return out


def jit_control_prog(torch, init):
    """TorchScript as written in practice: while/break, enumerate/zip over typed lists,
    Optional refinement, asserts, NamedTuple results kept through save/load."""
    nn = torch.nn
    from typing import Dict, List, NamedTuple, Optional, Tuple
    Tensor = torch.Tensor
    Pred = NamedTuple("Pred", [("logits", Tensor), ("loss", Optional[Tensor])])
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
            self.skip: List[int] = [0, 2]
        def forward(self, x: Tensor, y: Optional[Tensor] = None) -> Pred:
            for i, l in enumerate(self.layers):
                if i in self.skip:
                    x = x + l(x)
                else:
                    x = torch.relu(l(x))
            loss: Optional[Tensor] = None
            if y is not None:
                loss = (x - y).pow(2).mean()
            return Pred(x, loss)
    m = Net(); init(m)
    sm = torch.jit.script(m)
    x, y = _data(torch, 47, (2, 3), (2, 3))
    p1 = sm(x, y)
    buf = io.BytesIO(); torch.jit.save(sm, buf); buf.seek(0)
    lm = torch.jit.load(buf)
    p2 = lm(x)
    out = [p1.logits, p1.loss, p2.logits, p2.loss is None, type(p2).__name__, p2._fields, isinstance(p2, tuple)]
    @torch.jit.script
    def collatz(n: int) -> List[int]:
        seq: List[int] = [n]
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            seq.append(n)
            if len(seq) > 50:
                break
        return seq
    out += [collatz(27)[:12], collatz(6)]
    @torch.jit.script
    def sums(xs: List[Tensor], names: List[str]) -> Dict[str, float]:
        res: Dict[str, float] = {}
        for i, (t, n) in enumerate(zip(xs, names)):
            if i == 1:
                continue
            res[n + "_" + str(i)] = t.sum().item()
        return res
    out.append(sums([x, y, x * y], ["a", "b", "c"]))
    @torch.jit.script
    def take(t: Tensor, k: Optional[int] = None) -> Tuple[Tensor, int]:
        if k is None:
            k = t.size(0)
        assert k > 0, "k must be positive"
        rows = [t[i] * i for i in range(k)]
        return torch.stack(rows), len(rows)
    out.append(take(x)); out.append(take(torch.cat([x, y]), 3))
    try:
        take(x, 0)
    except Exception as e:
        out.append("k must be positive" in str(e))
    @torch.jit.script
    def argbest(a: List[float]) -> Tuple[float, int]:
        best, idx = a[0], 0
        for i in range(1, len(a)):
            if a[i] > best:
                best, idx = a[i], i
        return best, idx
    out.append(argbest([0.5, 2.5, 1.0, 2.0]))
    fbuf = io.BytesIO(); torch.jit.save(take, fbuf); fbuf.seek(0)
    out.append(torch.jit.load(fbuf)(y, 1))
    return out


def jit_objects_prog(torch, init):
    """TorchScript with a scripted helper class, dict attributes read by key, a scripted
    submodule inside a trace, a traced submodule inside a script, running buffers."""
    nn = torch.nn
    from typing import Dict, List
    Tensor = torch.Tensor
    @torch.jit.script
    class Meter:
        def __init__(self, start: float):
            self.total = start
            self.hist: List[float] = []
        def add(self, v: float) -> float:
            self.total += v
            self.hist.append(self.total)
            return self.total
    m0 = Meter(1.0); m0.add(2.0)
    out = [m0.total, m0.hist]
    @torch.jit.script
    def running(xs: List[float]) -> float:
        m = Meter(0.0)
        for v in xs:
            m.add(v * 2.0)
        return m.total
    out.append(running([0.5, 1.5, 2.0]))
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.scale = torch.jit.Attribute({"small": 0.5, "large": 2.0}, Dict[str, float])
            self.offset = {"small": 0, "large": 1}
            self.register_buffer("mean", torch.zeros(3))
        def forward(self, x: Tensor, kind: str) -> Tensor:
            if self.training:
                self.mean.mul_(0.9).add_(0.1 * x.mean(0))
            return self.lin(x - self.mean) * self.scale[kind] + self.offset[kind]
    m = Scaled(); init(m)
    sm = torch.jit.script(m)
    x, = _data(torch, 48, (4, 3))
    out += [sm(x, "small"), sm(x, "large"), sm.mean]
    sm.eval()
    out.append(sm(x, "large"))
    class Gate(nn.Module):
        def forward(self, h):
            if h.sum() > 0:
                return h * 2
            return -h
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3); self.gate = torch.jit.script(Gate())
        def forward(self, x):
            return self.gate(self.lin(x))
    o = Outer(); init(o)
    to = torch.jit.trace(o, x)
    out += [to(x), to(-x * 10), o(-x * 10)]
    class Loop(nn.Module):
        def __init__(self):
            super().__init__()
            self.step = torch.jit.trace(nn.Sequential(nn.Linear(3, 3), nn.Tanh()), x)
        def forward(self, x, n: int):
            for _ in range(n):
                x = self.step(x)
            return x
    lp = Loop(); init(lp)
    sl = torch.jit.script(lp)
    out += [sl(x, 3), lp(x, 3)]
    return out


def unet_seg_prog(torch, init):
    """Tiny U-Net for binary segmentation: skip connections, transposed convs, Dice + BCE."""
    nn = torch.nn; F = nn.functional
    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
            self.e2 = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
            self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
            self.d1 = nn.Sequential(nn.Conv2d(8, 4, 3, padding=1), nn.ReLU())
            self.out = nn.Conv2d(4, 1, 1)
        def forward(self, x):
            a = self.e1(x)
            b = self.e2(F.max_pool2d(a, 2))
            u = self.up(b)
            return self.out(self.d1(torch.cat([u, a], 1)))
    m = UNet(); init(m)
    rng = np.random.RandomState(49)
    X = torch.from_numpy(rng.randn(4, 1, 8, 8).astype(np.float32))
    yy, xx = np.mgrid[:8, :8]
    Y = torch.from_numpy(np.stack([((yy - c) ** 2 + (xx - c) ** 2 < 6).astype(np.float32) for c in (2, 3, 4, 5)])[:, None])
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    pos_weight = torch.tensor([(Y == 0).sum() / (Y == 1).sum()])
    out = [pos_weight]
    for _ in range(4):
        logits = m(X)
        p = torch.sigmoid(logits)
        inter = (p * Y).sum((1, 2, 3)); union = p.sum((1, 2, 3)) + Y.sum((1, 2, 3))
        dice = 1 - (2 * inter + 1) / (union + 1)
        loss = F.binary_cross_entropy_with_logits(logits, Y, pos_weight=pos_weight) + dice.mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), dice.detach()])
    m.eval()
    with torch.no_grad():
        pred = (m(X) > 0).float()
        iou = (pred * Y).sum((1, 2, 3)) / ((pred + Y) > 0).float().sum((1, 2, 3)).clamp(min=1)
        out += [iou, F.interpolate(m(X), size=(16, 16), mode="bilinear", align_corners=False)[0, 0, :2]]
    return out


def detection_utils_prog(torch, init):
    """Box IoU, greedy NMS, box encoding, focal loss: what detection code writes by hand."""
    nn = torch.nn; F = nn.functional
    rng = np.random.RandomState(50)
    xy = rng.rand(12, 2) * 20; wh = rng.rand(12, 2) * 8 + 2
    boxes = torch.from_numpy(np.concatenate([xy, xy + wh], 1).astype(np.float32))
    scores = torch.from_numpy(rng.rand(12).astype(np.float32))
    def box_iou(a, b):
        area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]); area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        lt = torch.max(a[:, None, :2], b[None, :, :2]); rb = torch.min(a[:, None, 2:], b[None, :, 2:])
        wh_ = (rb - lt).clamp(min=0)
        inter = wh_[..., 0] * wh_[..., 1]
        return inter / (area_a[:, None] + area_b[None, :] - inter)
    def nms(b, s, thr):
        order = s.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i.item())
            if order.numel() == 1:
                break
            ious = box_iou(b[i].unsqueeze(0), b[order[1:]]).squeeze(0)
            order = order[1:][ious <= thr]
        return torch.tensor(keep)
    iou = box_iou(boxes, boxes)
    out = [iou.diagonal(), iou.triu(1).max(), nms(boxes, scores, 0.3), nms(boxes, scores, 0.0)]
    # anchor encoding / decoding round trip
    anchors = boxes.roll(1, 0)
    def encode(gt, an):
        aw, ah = an[:, 2] - an[:, 0], an[:, 3] - an[:, 1]
        ax, ay = an[:, 0] + 0.5 * aw, an[:, 1] + 0.5 * ah
        gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
        gx, gy = gt[:, 0] + 0.5 * gw, gt[:, 1] + 0.5 * gh
        return torch.stack([(gx - ax) / aw, (gy - ay) / ah, torch.log(gw / aw), torch.log(gh / ah)], 1)
    def decode(d, an):
        aw, ah = an[:, 2] - an[:, 0], an[:, 3] - an[:, 1]
        ax, ay = an[:, 0] + 0.5 * aw, an[:, 1] + 0.5 * ah
        cx, cy = d[:, 0] * aw + ax, d[:, 1] * ah + ay
        w, h = d[:, 2].exp() * aw, d[:, 3].exp() * ah
        return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
    d = encode(boxes, anchors)
    out += [d, decode(d, anchors) - boxes]
    # matching anchors to ground truth, focal + smooth-L1 training of a head
    gt = boxes[:3]
    match_iou, match = box_iou(anchors, gt).max(1)
    labels = (match_iou > 0.1).float()
    head = nn.Linear(4, 5); init(head)
    opt = torch.optim.SGD(head.parameters(), lr=0.05)
    feats = anchors / 20
    for _ in range(4):
        o = head(feats)
        logit, reg = o[:, 0], o[:, 1:]
        p = torch.sigmoid(logit)
        ce = F.binary_cross_entropy_with_logits(logit, labels, reduction="none")
        pt = p * labels + (1 - p) * (1 - labels)
        focal = (0.25 * labels + 0.75 * (1 - labels)) * (1 - pt) ** 2 * ce
        reg_loss = F.smooth_l1_loss(reg[labels > 0], encode(gt[match[labels > 0]], anchors[labels > 0]), beta=1 / 9)
        loss = focal.sum() / labels.sum().clamp(min=1) + reg_loss
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), reg_loss.item()])
    out += [match, labels]
    return out


def ppo_prog(torch, init):
    """PPO update: GAE advantages, clipped ratio, value clipping, minibatches from numpy."""
    nn = torch.nn; D = torch.distributions
    class AC(nn.Module):
        def __init__(self):
            super().__init__()
            self.pi = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
            self.v = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    ac = AC(); init(ac)
    rng = np.random.RandomState(51)
    T_ = 16
    obs = torch.from_numpy(rng.randn(T_, 4).astype(np.float32))
    acts = torch.from_numpy(rng.randint(0, 2, T_))
    rews = torch.from_numpy(rng.randn(T_).astype(np.float32))
    dones = torch.from_numpy((rng.rand(T_) < 0.1).astype(np.float32))
    with torch.no_grad():
        old_logp = D.Categorical(logits=ac.pi(obs)).log_prob(acts)
        vals = ac.v(obs).squeeze(-1)
    gamma, lam = 0.99, 0.95
    adv = torch.zeros(T_); last = 0.0
    for t in reversed(range(T_)):
        nv = vals[t + 1] if t + 1 < T_ else 0.0
        delta = rews[t] + gamma * nv * (1 - dones[t]) - vals[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    ret = adv + vals
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    opt = torch.optim.Adam(ac.parameters(), lr=3e-3, eps=1e-5)
    out = [adv, ret]
    for epoch in range(2):
        perm = torch.from_numpy(rng.permutation(T_))
        for mb in perm.split(8):
            dist = D.Categorical(logits=ac.pi(obs[mb]))
            ratio = (dist.log_prob(acts[mb]) - old_logp[mb]).exp()
            s1 = ratio * adv[mb]; s2 = ratio.clamp(0.8, 1.2) * adv[mb]
            v = ac.v(obs[mb]).squeeze(-1)
            v_clip = vals[mb] + (v - vals[mb]).clamp(-0.2, 0.2)
            vloss = torch.max((v - ret[mb]) ** 2, (v_clip - ret[mb]) ** 2).mean()
            loss = -torch.min(s1, s2).mean() + 0.5 * vloss - 0.01 * dist.entropy().mean()
            opt.zero_grad(); loss.backward()
            gn = nn.utils.clip_grad_norm_(ac.parameters(), 0.5)
            opt.step()
            approx_kl = (old_logp[mb] - dist.log_prob(acts[mb])).mean()
            clipfrac = ((ratio - 1).abs() > 0.2).float().mean()
            out.append([loss.item(), gn.item(), approx_kl.item(), clipfrac.item()])
    return out


def metric_learning_prog(torch, init):
    """Siamese embeddings with triplet, cosine-embedding and margin-ranking losses."""
    nn = torch.nn; F = nn.functional
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4)); init(net)
    rng = np.random.RandomState(52)
    protos = rng.randn(3, 6).astype(np.float32)
    lab = rng.randint(0, 3, 24)
    X = torch.from_numpy(protos[lab] + 0.3 * rng.randn(24, 6).astype(np.float32))
    y = torch.from_numpy(lab)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    trip = nn.TripletMarginLoss(margin=0.5, p=2, swap=True)
    tdist = nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: 1 - F.cosine_similarity(a, b), margin=0.3)
    cos = nn.CosineEmbeddingLoss(margin=0.1)
    rank = nn.MarginRankingLoss(margin=0.2)
    out = []
    for _ in range(4):
        e = F.normalize(net(X), dim=1)
        d = torch.cdist(e, e)
        same = y[:, None] == y[None, :]
        # batch-hard mining
        hardest_pos = (d * same).max(1).indices
        hardest_neg = (d + same * 1e3).min(1).indices
        l1 = trip(e, e[hardest_pos], e[hardest_neg])
        l2 = tdist(e, e[hardest_pos], e[hardest_neg])
        pairs = torch.from_numpy(rng.randint(0, 24, (16, 2)))
        tgt = (y[pairs[:, 0]] == y[pairs[:, 1]]).float() * 2 - 1
        l3 = cos(e[pairs[:, 0]], e[pairs[:, 1]], tgt)
        l4 = rank(d[pairs[:, 0], pairs[:, 1]], d[pairs[:, 1], pairs[:, 0]] + 0.1, tgt)
        loss = l1 + l2 + l3 + l4
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([l1.item(), l2.item(), l3.item(), l4.item()])
    with torch.no_grad():
        e = F.normalize(net(X), dim=1)
        centroids = torch.stack([e[y == k].mean(0) for k in range(3)])
        acc = (torch.cdist(e, centroids).argmin(1) == y).float().mean()
        out += [acc, F.pairwise_distance(e[:4], e[4:8]), F.pdist(e[:5]), F.cosine_similarity(e[:3], centroids, dim=1)]
        out.append(F.triplet_margin_loss(e[:4], e[4:8], e[8:12], reduction="none"))
        out.append(F.hinge_embedding_loss(d[:4, :4], torch.tensor([1.0, -1.0, 1.0, -1.0]), margin=0.5))
    return out


def vit_prog(torch, init):
    """A small Vision Transformer: patches by nn.Unfold, class token, learned positions,
    pre-norm encoder, mixed with torch.compile (a no-op wrapper where it compiles nothing)."""
    nn = torch.nn; F = nn.functional
    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.unfold = nn.Unfold(kernel_size=4, stride=4)
            self.proj = nn.Linear(16, 12)
            self.cls = nn.Parameter(torch.zeros(1, 1, 12))
            self.pos = nn.Parameter(torch.zeros(1, 5, 12))
            layer = nn.TransformerEncoderLayer(12, 3, 24, dropout=0.0, batch_first=True, norm_first=True, activation="gelu")
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(12); self.head = nn.Linear(12, 3)
        def forward(self, x):
            p = self.unfold(x).transpose(1, 2)            # B, 4 patches, 16
            h = torch.cat([self.cls.expand(x.size(0), -1, -1), self.proj(p)], 1) + self.pos
            return self.head(self.norm(self.enc(h))[:, 0])
    m = ViT(); init(m)
    rng = np.random.RandomState(53)
    X = torch.from_numpy(rng.randn(6, 1, 8, 8).astype(np.float32)); y = torch.from_numpy(rng.randint(0, 3, 6))
    decay = [p for n, p in m.named_parameters() if p.dim() > 1 and "pos" not in n]
    no_decay = [p for n, p in m.named_parameters() if not (p.dim() > 1 and "pos" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}], lr=2e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=4)
    out = [[len(decay), len(no_decay)]]
    for _ in range(4):
        loss = F.cross_entropy(m(X), y, label_smoothing=0.1)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        out.append([loss.item(), sched.get_last_lr()])
    patches = m.unfold(X)
    out.append(nn.Fold(output_size=(8, 8), kernel_size=4, stride=4)(patches) - X)
    out.append(F.unfold(X, 3, padding=1).shape)
    out.append(F.fold(F.unfold(X[:1], 3, padding=1), (8, 8), 3, padding=1)[0, 0, :2])
    m.eval()
    with torch.no_grad():
        out.append(m(X))
    return out


def lstm_autoencoder_prog(torch, init):
    """Sequence autoencoder for anomaly scores: encoder state repeated into a decoder."""
    nn = torch.nn
    class AE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.LSTM(2, 6, batch_first=True)
            self.dec = nn.LSTM(6, 6, batch_first=True)
            self.out = nn.Linear(6, 2)
        def forward(self, x):
            _, (h, _) = self.enc(x)
            z = h[-1].unsqueeze(1).repeat(1, x.size(1), 1)
            o, _ = self.dec(z)
            return self.out(o)
    m = AE(); init(m)
    rng = np.random.RandomState(54)
    t = np.linspace(0, 2 * np.pi, 12, dtype=np.float32)
    normal = np.stack([np.stack([np.sin(t + p), np.cos(t + p)], 1) for p in rng.rand(10) * 2], 0)
    X = torch.from_numpy((normal + 0.05 * rng.randn(*normal.shape)).astype(np.float32))
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    out = []
    for _ in range(5):
        loss = nn.functional.mse_loss(m(X), X)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    with torch.no_grad():
        anomal = X.clone(); anomal[:3, 5:8] += 2.0
        err = (m(anomal) - anomal).pow(2).mean((1, 2))
        thr = torch.quantile((m(X) - X).pow(2).mean((1, 2)), 0.9)
        out += [err, thr, (err > thr).nonzero().squeeze(1), err.argsort(descending=True)[:3]]
    return out


# ---- new programs go above this line ----
PROGRAMS = [v for k, v in list(globals().items()) if k.endswith("_prog") and k != "rnn_trace_prog"]


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program(prog):
    got, want = run_pair(prog, torch)
    assert_close(got, want, **getattr(prog, "tolerance", {}))



def _unknown_method_modules(T):
    class OnInput(T.nn.Module):
        def forward(self, x):
            return x.no_such_method(1)
    class OnParameter(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = T.nn.Parameter(T.ones(2))
        def forward(self, x):
            return self.w.no_such_method() + x
    class OnArithmetic(T.nn.Module):
        def forward(self, x):
            y = x * 2 + 1
            return y.no_such_method()
    class OnMethodResult(T.nn.Module):
        def forward(self, x):
            return x.sum(0).relu().no_such_method()
    return [OnInput(), OnParameter(), OnArithmetic(), OnMethodResult()]


@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_script_refuses_an_unknown_tensor_method_as_torch(which):
    # TorchScript refuses a method Tensor lacks when it compiles, not when it runs
    with pytest.raises(RuntimeError, match="no_such_method"):
        torch.jit.script(_unknown_method_modules(torch)[which])
    with pytest.raises(RuntimeError, match="no_such_method"):
        ptcore.jit.script(_unknown_method_modules(ptcore)[which])


def rnn_trace_prog(torch, init, kind="LSTM", **kw):
    """A recurrent module traced at one sequence length and batch size runs at others
    (torch records aten::lstm & co. as one node), also after a save/load round trip."""
    nn = torch.nn
    m = getattr(nn, kind)(3, 5, **kw); init(m)
    bf = kw.get("batch_first", False)
    x, x2, x3 = _data(torch, 35, (2, 4, 3), (5, 3, 3), (6, 3))
    if not bf:
        x, x2 = x.transpose(0, 1), x2.transpose(0, 1)
    tm = torch.jit.trace(m, x)
    buf = io.BytesIO(); torch.jit.save(tm, buf); buf.seek(0)
    lm = torch.jit.load(buf)
    out = [tm(x2), m(x2), lm(x2)]
    tu = torch.jit.trace(m, x3[:4])
    out += [tu(x3), m(x3)]
    return out


_RNN_TRACE_CASES = {
    "lstm": ("LSTM", {}), "lstm_bf_2layer_bidir": ("LSTM", dict(batch_first=True, num_layers=2, bidirectional=True)),
    "lstm_proj": ("LSTM", dict(proj_size=2)), "gru_bf": ("GRU", dict(batch_first=True)),
    "rnn_relu_bidir": ("RNN", dict(nonlinearity="relu", bidirectional=True)),
}


@pytest.mark.parametrize("case", sorted(_RNN_TRACE_CASES))
def test_traced_recurrent_module_runs_at_other_lengths(case):
    kind, kw = _RNN_TRACE_CASES[case]
    got, want = run_pair(rnn_trace_prog, torch, kind=kind, **kw)
    assert_close(got, want)
