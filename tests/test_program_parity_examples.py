"""Programs in the style of the pytorch/examples repository and of popular research code,
written once against the module they are given and run under torch and under ptcore
(``import ptcore as torch``) from the same initial weights and NumPy data; their printed
losses, metrics and outputs must agree.

Covered here and not in the other program files: a UNet (MaxPool2d with indices and
MaxUnpool2d, ConvTranspose2d with output_padding, F.pad to match skip sizes, bilinear
upsampling), Gaussian-process regression in float64 (cdist, Cholesky, cholesky_solve,
solve_triangular, MultivariateNormal with scale_tril), torch.func and
torch.autograd.functional on small models, a neural ODE with an RK4 loop, graph message
passing with index_add_/scatter_reduce/segment softmax, a llama-style block (RMSNorm,
rotary embeddings through view_as_complex/polar, grouped-query attention with
repeat_interleave, SiLU gating, a top-k mixture of experts), NumPy round trips that share
memory, normalizing flows (RealNVP couplings, MADE masks), a CTC speech model with greedy
decoding, and WaveNet-style dilated causal convolutions.
"""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, one_thread, run_pair  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


def _np(t):
    return t.detach().numpy().copy()


def unet(torch, init, steps=3):
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(0)
    class DoubleConv(nn.Sequential):
        def __init__(self, cin, cout):
            super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding='same'),
                             nn.GroupNorm(2, cout), nn.LeakyReLU(0.1, inplace=True))
    class Up(nn.Module):
        def __init__(self, cin, skip, cout, bilinear):
            super().__init__()
            if bilinear:
                self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
                self.conv = DoubleConv(cin + skip, cout)
            else:
                self.up = nn.ConvTranspose2d(cin, cin // 2, kernel_size=3, stride=2, padding=1, output_padding=1)
                self.conv = DoubleConv(cin // 2 + skip, cout)
        def forward(self, x1, x2):
            x1 = self.up(x1)
            diffY = x2.size()[2] - x1.size()[2]
            diffX = x2.size()[3] - x1.size()[3]
            x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
            return self.conv(torch.cat([x2, x1], dim=1))
    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inc = DoubleConv(2, 4)
            self.pool = nn.MaxPool2d(2, return_indices=True, ceil_mode=True)
            self.unpool = nn.MaxUnpool2d(2)
            self.down1 = DoubleConv(4, 8)
            self.down2 = DoubleConv(8, 8)
            self.up1 = Up(8, 8, 4, bilinear=False)
            self.up2 = Up(4, 4, 4, bilinear=True)
            self.outc = nn.Conv2d(4, 1, kernel_size=1)
        def forward(self, x):
            x1 = self.inc(x)
            p, idx = self.pool(x1)
            x2 = self.down1(p)
            x3 = self.down2(F.max_pool2d(x2, 2, ceil_mode=True))
            x = self.up1(x3, x2)
            x = self.up2(x, x1 + self.unpool(p, idx, output_size=x1.shape[-2:]))
            return self.outc(x)
    model = UNet()
    init(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    crit = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
    x = torch.from_numpy(rng.randn(2, 2, 11, 13).astype(np.float32))
    y = torch.from_numpy((rng.rand(2, 1, 11, 13) > 0.6).astype(np.float32))
    out = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        loss = crit(logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        with torch.no_grad():
            pred = (torch.sigmoid(logits) > 0.5).float()
            inter = (pred * y).sum(dim=(1, 2, 3))
            dice = (2 * inter + 1) / (pred.sum(dim=(1, 2, 3)) + y.sum(dim=(1, 2, 3)) + 1)
        out.append([loss.item(), dice, tuple(logits.shape)])
    model.eval()
    with torch.inference_mode():
        out.append(model(x).sigmoid())
    out.append(sorted(model.state_dict().keys()))
    return out


def gp_regression(torch, init, iters=15):
    nn = torch.nn
    rng = np.random.RandomState(1)
    X = torch.from_numpy(np.sort(rng.rand(12, 1) * 6, axis=0))
    y = torch.sin(X).squeeze(-1) + 0.1 * torch.from_numpy(rng.randn(12))
    Xs = torch.linspace(0, 6, 7, dtype=torch.float64).unsqueeze(-1)
    class GP(nn.Module):
        def __init__(self):
            super().__init__()
            self.raw_ls = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
            self.raw_var = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
            self.raw_noise = nn.Parameter(torch.tensor(-2.0, dtype=torch.float64))
        def kernel(self, a, b):
            ls = nn.functional.softplus(self.raw_ls)
            d2 = torch.cdist(a / ls, b / ls, p=2).pow(2)
            return nn.functional.softplus(self.raw_var) * torch.exp(-0.5 * d2)
        def nll(self, X, y):
            K = self.kernel(X, X) + (nn.functional.softplus(self.raw_noise) + 1e-6) * torch.eye(len(X), dtype=X.dtype)
            L = torch.linalg.cholesky(K)
            alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
            mvn = torch.distributions.MultivariateNormal(torch.zeros_like(y), scale_tril=L)
            nll1 = 0.5 * (y.unsqueeze(0) @ alpha).squeeze() + torch.log(torch.diagonal(L)).sum() + 0.5 * len(X) * math.log(2 * math.pi)
            return nll1, -mvn.log_prob(y)
        def predict(self, X, y, Xs):
            K = self.kernel(X, X) + nn.functional.softplus(self.raw_noise) * torch.eye(len(X), dtype=X.dtype)
            L, info = torch.linalg.cholesky_ex(K)
            Ks = self.kernel(X, Xs)
            v = torch.linalg.solve_triangular(L, Ks, upper=False)
            mean = Ks.T @ torch.cholesky_solve(y[:, None], L)
            var = self.kernel(Xs, Xs).diag() - (v * v).sum(0)
            return mean.squeeze(-1), var, info
    gp = GP()
    init(gp)
    opt = torch.optim.Adam(gp.parameters(), lr=0.1)
    out = []
    for i in range(iters):
        opt.zero_grad()
        nll, nll2 = gp.nll(X, y)
        nll.backward()
        opt.step()
        out.append([nll.item(), nll2.item()])
    with torch.no_grad():
        mean, var, info = gp.predict(X, y, Xs)
    out += [mean, var, info, [p.detach().clone() for p in gp.parameters()]]
    K = gp.kernel(X, X).detach()
    ev = torch.linalg.eigvalsh(K)
    out += [ev, torch.linalg.slogdet(K + torch.eye(12, dtype=torch.float64)), torch.logdet(K + torch.eye(12, dtype=torch.float64))]
    return out


def func_scientific(torch, init):
    nn = torch.nn; F = torch.nn.functional
    tf = torch.func
    functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, vmap = (
        tf.functional_call, tf.grad, tf.grad_and_value, tf.hessian, tf.jacfwd, tf.jacrev, tf.vmap)
    rng = np.random.RandomState(2)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()
    init(model)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.from_numpy(rng.randn(4, 3))
    t = torch.from_numpy(rng.randn(4, 2))
    def loss_fn(p, xb, tb):
        return F.mse_loss(functional_call(model, p, (xb,)), tb)
    out = []
    g = grad(loss_fn)(params, x, t)
    out.append({k: v for k, v in g.items()})
    gv, val = grad_and_value(loss_fn)(params, x, t)
    out.append(val)
    # per-sample gradients
    ps = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x.unsqueeze(1), t.unsqueeze(1))
    out.append({k: v for k, v in ps.items()})
    f = lambda inp: functional_call(model, params, (inp,))
    out.append(vmap(jacrev(f))(x))
    out.append(vmap(jacfwd(f))(x))
    out.append(hessian(lambda inp: f(inp).pow(2).sum())(x[0]))
    # torch.autograd.functional
    AF = torch.autograd.functional
    out.append(AF.jacobian(f, x[0]))
    out.append(AF.hessian(lambda inp: f(inp).sum(), x[1]))
    v = torch.ones(2, dtype=torch.float64)
    out.append(AF.vjp(f, x[0], v))
    out.append(AF.jvp(f, x[0], torch.ones(3, dtype=torch.float64)))
    out.append(AF.hvp(lambda inp: f(inp).pow(2).sum(), x[0], torch.ones(3, dtype=torch.float64)))
    out.append(AF.vhp(lambda inp: f(inp).pow(2).sum(), x[0], torch.ones(3, dtype=torch.float64)))
    jac = AF.jacobian(lambda a, b: (a * b, a + b.sum()), (x[0], x[1]), create_graph=True, vectorize=True)
    out.append(jac)
    # einsum-heavy bits
    A = torch.from_numpy(rng.randn(2, 3, 4)); B = torch.from_numpy(rng.randn(4, 5)); C = torch.from_numpy(rng.randn(2, 5))
    out.append(torch.einsum('bij,jk,bk->bi', A, B, C))
    out.append(torch.einsum('bij,bij->b', A, A))
    out.append(torch.einsum('...ij->...ji', A))
    out.append(torch.einsum('ii', torch.from_numpy(rng.randn(3, 3))))
    out.append(torch.einsum(A, [0, 1, 2], B, [2, 3], [0, 3, 1]))
    return out


def neural_ode(torch, init, iters=4):
    nn = torch.nn
    rng = np.random.RandomState(3)
    class ODEFunc(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 16), nn.Softplus(beta=2.0), nn.Linear(16, 2))
            for m in self.net.modules():
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, mean=0, std=0.1)
                    nn.init.constant_(m.bias, val=0)
            self.nfe = 0
        def forward(self, t, y):
            self.nfe += 1
            return self.net(y ** 3) * torch.cos(t)
    def rk4(func, y0, t):
        ys = [y0]
        y = y0
        for t0, t1 in zip(t[:-1], t[1:]):
            h = t1 - t0
            k1 = func(t0, y)
            k2 = func(t0 + h / 2, y + h * k1 / 2)
            k3 = func(t0 + h / 2, y + h * k2 / 2)
            k4 = func(t1, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys.append(y)
        return torch.stack(ys)
    true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]], dtype=torch.float64)
    t = torch.linspace(0., 1., 9, dtype=torch.float64)
    y0 = torch.tensor([[2., 0.]], dtype=torch.float64)
    with torch.no_grad():
        true_y = rk4(lambda t, y: torch.mm(y ** 3, true_A), y0, t)
    func = ODEFunc().to(torch.float64)
    init(func)
    opt = torch.optim.RMSprop(func.parameters(), lr=1e-2, centered=True)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=3)
    out = [true_y]
    for it in range(iters):
        opt.zero_grad()
        idx = torch.from_numpy(np.array([0, 2, 4, 5]))
        pred_y = rk4(func, y0, t)
        loss = torch.mean(torch.abs(pred_y[idx] - true_y[idx]))
        loss.backward()
        opt.step(); sched.step()
        out.append([loss.item(), func.nfe, sched.get_last_lr()])
    # second-order: gradient of the dynamics' divergence (FFJORD-style trace)
    y = true_y[3].clone().requires_grad_(True)
    f = func(t[3], y)
    div = sum(torch.autograd.grad(f[:, i].sum(), y, create_graph=True)[0][:, i] for i in range(2))
    g, = torch.autograd.grad(div.sum(), list(func.parameters())[0])
    out += [div, g]
    return out


def graph_message_passing(torch, init, epochs=4):
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(4)
    N, E = 9, 24
    src = torch.from_numpy(rng.randint(0, N, E)); dst = torch.from_numpy(rng.randint(0, N, E))
    edge_index = torch.stack([src, dst])
    edge_index = torch.cat([edge_index, torch.arange(N).repeat(2, 1)], dim=1)
    x = torch.from_numpy(rng.randn(N, 5).astype(np.float32))
    labels = torch.from_numpy(rng.randint(0, 3, N))
    train_mask = torch.zeros(N, dtype=torch.bool); train_mask[:6] = True
    def segment_softmax(e, index, n):
        emax = torch.full((n,) + e.shape[1:], float('-inf'), dtype=e.dtype).scatter_reduce(
            0, index.view(-1, 1).expand_as(e), e, reduce='amax', include_self=True)
        ex = (e - emax[index]).exp()
        den = torch.zeros((n,) + e.shape[1:], dtype=e.dtype).index_add_(0, index, ex)
        return ex / (den[index] + 1e-16)
    class GATLayer(nn.Module):
        def __init__(self, cin, cout, heads):
            super().__init__()
            self.lin = nn.Linear(cin, heads * cout, bias=False)
            self.att_src = nn.Parameter(torch.empty(1, heads, cout))
            self.att_dst = nn.Parameter(torch.empty(1, heads, cout))
            nn.init.xavier_uniform_(self.att_src); nn.init.xavier_uniform_(self.att_dst)
            self.heads, self.cout = heads, cout
        def forward(self, x, ei):
            h = self.lin(x).view(-1, self.heads, self.cout)
            a_s = (h * self.att_src).sum(-1); a_d = (h * self.att_dst).sum(-1)
            e = F.leaky_relu(a_s[ei[0]] + a_d[ei[1]], 0.2)
            alpha = segment_softmax(e, ei[1], x.size(0))
            msg = h[ei[0]] * alpha.unsqueeze(-1)
            out = torch.zeros_like(h).scatter_add_(0, ei[1].view(-1, 1, 1).expand_as(msg), msg)
            return out.mean(dim=1), alpha
    class SAGELayer(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.lin_l = nn.Linear(cin, cout); self.lin_r = nn.Linear(cin, cout, bias=False)
        def forward(self, x, ei):
            agg = torch.zeros(x.size(0), x.size(1), dtype=x.dtype).scatter_reduce(
                0, ei[1].unsqueeze(-1).expand(-1, x.size(1)), x[ei[0]], reduce='mean', include_self=False)
            mx = x.new_zeros(x.shape).index_reduce_(0, ei[1], x[ei[0]], 'amax', include_self=False)
            return self.lin_l(agg) + self.lin_r(mx)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.gat = GATLayer(5, 8, heads=2)
            self.sage = SAGELayer(8, 3)
        def forward(self, x, ei):
            h, alpha = self.gat(x, ei)
            return self.sage(F.elu(h), ei), alpha
    model = Net()
    init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4, amsgrad=True)
    deg = torch.bincount(edge_index[1], minlength=N)
    vals = torch.ones(edge_index.size(1))
    A = torch.sparse_coo_tensor(edge_index, vals, (N, N)).coalesce()
    dinv = deg.float().pow(-0.5)
    dinv.masked_fill_(dinv == float('inf'), 0)
    An = torch.sparse_coo_tensor(A.indices(), dinv[A.indices()[0]] * A.values() * dinv[A.indices()[1]], (N, N))
    out = [deg, A.to_dense(), torch.sparse.mm(An, x), (An @ x).sum(), torch.sparse.sum(A, dim=1).to_dense()]
    for ep in range(epochs):
        model.train(); opt.zero_grad()
        logits, alpha = model(x, edge_index)
        loss = F.cross_entropy(logits[train_mask], labels[train_mask])
        loss.backward(); opt.step()
        pred = logits.argmax(dim=1)
        acc = (pred[~train_mask] == labels[~train_mask]).sum().item() / int((~train_mask).sum())
        out.append([loss.item(), acc, alpha.sum(0)])
    u, inv, cnt = torch.unique(dst, sorted=True, return_inverse=True, return_counts=True)
    out += [u, inv, cnt, torch.sort(dst, stable=True), torch.argsort(src, stable=True, descending=True)]
    return out


def llama_block(torch, init, steps=3):
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(5)
    dim, n_heads, n_kv, T, V = 16, 4, 2, 6, 19
    hd = dim // n_heads
    def precompute_freqs_cis(d, end, theta=10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, d, 2)[: (d // 2)].float() / d))
        t = torch.arange(end, device=freqs.device, dtype=torch.float32)
        freqs = torch.outer(t, freqs)
        return torch.polar(torch.ones_like(freqs), freqs)
    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        fc = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
        xq_out = torch.view_as_real(xq_ * fc).flatten(3)
        xk_out = torch.view_as_real(xk_ * fc).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(dim, n_heads * hd, bias=False)
            self.wk = nn.Linear(dim, n_kv * hd, bias=False)
            self.wv = nn.Linear(dim, n_kv * hd, bias=False)
            self.wo = nn.Linear(n_heads * hd, dim, bias=False)
        def forward(self, x, freqs_cis, mask):
            B, L, _ = x.shape
            xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
            xq = xq.view(B, L, n_heads, hd); xk = xk.view(B, L, n_kv, hd); xv = xv.view(B, L, n_kv, hd)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
            keys = torch.repeat_interleave(xk, dim=2, repeats=n_heads // n_kv)
            values = xv[:, :, :, None, :].expand(B, L, n_kv, n_heads // n_kv, hd).reshape(B, L, n_heads, hd)
            xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
            scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(hd) + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            o1 = torch.matmul(scores, values)
            o2 = F.scaled_dot_product_attention(xq, xk.transpose(1, 2), xv.transpose(1, 2), is_causal=True, enable_gqa=True)
            return self.wo(o1.transpose(1, 2).contiguous().view(B, L, -1)), (o1 - o2).abs().max()
    class MoE(nn.Module):
        def __init__(self, n_exp=4, k=2):
            super().__init__()
            self.gate = nn.Linear(dim, n_exp, bias=False)
            self.experts = nn.ModuleList(nn.ModuleDict({"w1": nn.Linear(dim, 24, bias=False), "w2": nn.Linear(24, dim, bias=False),
                                                        "w3": nn.Linear(dim, 24, bias=False)}) for _ in range(n_exp))
            self.k = k
        def forward(self, x):
            flat = x.view(-1, dim)
            logits = self.gate(flat)
            weights, sel = torch.topk(logits, self.k, dim=-1)
            weights = F.softmax(weights, dim=1, dtype=torch.float).to(x.dtype)
            out = torch.zeros_like(flat)
            for i, e in enumerate(self.experts):
                tok, which = torch.where(sel == i)
                if tok.numel() == 0:
                    continue
                h = e["w2"](F.silu(e["w1"](flat[tok])) * e["w3"](flat[tok]))
                out.index_add_(0, tok, weights[tok, which, None] * h)
            onehot = F.one_hot(sel, num_classes=len(self.experts)).sum(1)
            aux = (onehot.float().mean(0) * F.softmax(logits, -1).mean(0)).sum() * len(self.experts)
            return out.view_as(x), aux
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, dim)
            self.attention_norm = nn.RMSNorm(dim, eps=1e-6)
            self.ffn_norm = nn.RMSNorm(dim, eps=1e-6)
            self.attention = Attention()
            self.moe = MoE()
            self.out = nn.Linear(dim, V, bias=False)
        def forward(self, tokens):
            x = self.tok(tokens)
            fc = precompute_freqs_cis(hd, T)
            mask = torch.full((T, T), float("-inf")).triu(diagonal=1)
            a, diff = self.attention(self.attention_norm(x), fc, mask)
            h = x + a
            m, aux = self.moe(self.ffn_norm(h))
            return self.out(h + m), aux, diff
    model = Block()
    init(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    tokens = torch.from_numpy(rng.randint(0, V, (2, T + 1)))
    out = []
    for _ in range(steps):
        logits, aux, diff = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), tokens[:, 1:].reshape(-1)) + 0.01 * aux
        opt.zero_grad(); loss.backward()
        gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=2.0, error_if_nonfinite=True)
        opt.step()
        out.append([loss.item(), aux.item(), gn, float(diff) < 1e-5])
    with torch.no_grad():
        seq = tokens[:1, :2]
        for _ in range(4):
            lg, _, _ = model(F.pad(seq, (0, T - seq.size(1)), value=0))
            seq = torch.cat([seq, lg[:, seq.size(1) - 1].argmax(-1, keepdim=True)], dim=1)
    out.append(seq)
    return out


def numpy_roundtrip(torch, init):
    out = []
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.from_numpy(a)
    t[0, 0] = 100.0
    out.append(float(a[0, 0]))
    a[1, 1] = -5
    out.append(t[1, 1].item())
    n = t.numpy(); n[2, 2] = 7.5
    out.append(t[2, 2].item())
    t.add_(1)
    out.append(a.copy())
    out.append(np.shares_memory(t.numpy(), a))
    tt = t.t()
    out.append([tt.is_contiguous(), tt.numpy().flags['C_CONTIGUOUS'], tt.numpy().strides])
    u = torch.as_tensor(a)
    u.mul_(2)
    out.append(a.copy())
    v = torch.tensor(a); v.zero_()
    out.append(float(a.sum()))
    out.append([np.asarray(t).dtype.name, np.mean(t.numpy()), np.array(torch.ones(2, dtype=torch.int16)).dtype.name])
    out.append(torch.from_numpy(np.array([1, 2], dtype=np.int32)).dtype is torch.int32)
    out.append(torch.from_numpy(np.array([True, False])).dtype is torch.bool)
    out.append(str(torch.from_numpy(np.zeros(2, dtype=np.float16)).dtype).split(".")[-1])
    out.append(str(torch.as_tensor(np.float64(2.5)).dtype).split(".")[-1])
    out.append(str(torch.tensor(np.array([1.5, 2.5])).dtype).split(".")[-1])
    out.append(str(torch.tensor([np.float32(1.0), np.float32(2.0)]).dtype).split(".")[-1])
    s = torch.from_numpy(a[:, ::2])
    out.append([s.stride(), s.shape])
    r = torch.from_numpy(a[::-1].copy())
    out.append(r[0].tolist())
    x = torch.arange(6.).reshape(2, 3).requires_grad_()
    try:
        x.numpy()
        out.append("no error")
    except RuntimeError:
        out.append("RuntimeError")
    out.append(x.detach().numpy().sum())
    out.append(type(x.tolist()[0][0]).__name__)
    out.append(type(torch.tensor(3).item()).__name__)
    out.append(np.array(torch.arange(4)).tolist())
    out.append(torch.tensor(np.int64(7)) + 1)
    out.append((np.float64(2.0) * torch.ones(2)).dtype == torch.float32)
    out.append(torch.from_numpy(np.arange(3)).dtype == torch.int64)
    out.append([int(i) for i in torch.tensor([3, 1, 2]).numpy().argsort()])
    out.append(torch.stack([torch.from_numpy(np.ones(2)), torch.from_numpy(np.zeros(2))]).numpy())
    return out


CASES = {
    "unet_unpool_transpose_pad": (unet, {}),
    "gaussian_process_cholesky": (gp_regression, {}),
    "func_and_autograd_functional_einsum": (func_scientific, {}),
    "neural_ode_rk4": (neural_ode, {}),
    "graph_attention_scatter_reduce_sparse": (graph_message_passing, {}),
    "llama_rotary_gqa_moe": (llama_block, {}),
    "numpy_roundtrip_shares_memory": (numpy_roundtrip, {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_program_matches_torch(name):
    prog, kw = CASES[name]
    got, want = run_pair(prog, torch, **kw)
    assert_close(got, want)
