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
import io
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, one_thread, run_pair, text_of  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


R = text_of


def _data(torch, seed, *shapes, dtype=np.float32):
    rng = np.random.RandomState(seed)
    return [torch.from_numpy(rng.randn(*s).astype(dtype)) for s in shapes]


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


# ---- new programs go above this line ----
PROGRAMS = [v for k, v in list(globals().items()) if k.endswith("_prog")]


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program(prog):
    got, want = run_pair(prog, torch)
    assert_close(got, want)



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
    return [OnInput(), OnParameter()]


@pytest.mark.parametrize("which", [0, 1])
def test_script_refuses_an_unknown_tensor_method_as_torch(which):
    # TorchScript refuses a method Tensor lacks when it compiles, not when it runs
    with pytest.raises(RuntimeError, match="no_such_method"):
        torch.jit.script(_unknown_method_modules(torch)[which])
    with pytest.raises(RuntimeError, match="no_such_method"):
        ptcore.jit.script(_unknown_method_modules(ptcore)[which])
