"""Round six of whole programs written once against the module they are given and run
under torch and under ptcore (``import ptcore as torch``) from the same initial weights
(tests/program_pairs.py); what they return (losses, parameters, printed text, metric
counters) must agree.

Covered here: TorchScript (script and trace of models, their save/load round trip through
a buffer), torch.fx (symbolic_trace, a graph rewrite, recompile, an Interpreter),
autograd.functional in optimisation loops (Newton steps with hessian, Gauss-Newton with
jacobian, conjugate gradients with hvp, vjp), actor-critic with torch.distributions and
fixed actions, GNN message passing with index_add_/scatter_reduce/segment sums, every
lr_scheduler with its state_dict round trip, optimizers' less-used options and parameter
groups added mid-training, torch.utils.data samplers and datasets, nn.utils helpers,
einsum attention variants, integer metric bookkeeping (accuracy counters, bincount
confusion matrices, top-k), printed logs, and checkpoints with optimizer state resumed
from a buffer.
"""
import collections
import io
import math
import re

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, norm_repr, one_thread, run_pair  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


def R(o):
    """Text of ``o`` with object addresses and the library's name made comparable."""
    return re.sub("0x[0-9a-f]+", "ADDR", str(o)).replace("ptcore", "torch")


def _data(torch, seed, *shapes, dtype=np.float32):
    rng = np.random.RandomState(seed)
    return [torch.from_numpy(rng.randn(*s).astype(dtype)) for s in shapes]


def jit_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 3)
        def forward(self, x):
            h = torch.relu(self.fc1(x))
            if h.sum() > 0:
                h = h * 2
            return self.fc2(h)
    m = Net(); init(m)
    x, = _data(torch, 1, (5, 4))
    out = [m(x)]
    sm = torch.jit.script(m)
    out.append(sm(x))
    buf = io.BytesIO()
    torch.jit.save(sm, buf)
    buf.seek(0)
    lm = torch.jit.load(buf)
    out.append(lm(x))
    out.append(sorted(k for k, _ in lm.named_parameters()))
    tm = torch.jit.trace(m, x)
    out.append(tm(x + 1))
    buf = io.BytesIO()
    torch.jit.save(tm, buf); buf.seek(0)
    out.append(torch.jit.load(buf)(x - 1))
    @torch.jit.script
    def loop(x: torch.Tensor, n: int) -> torch.Tensor:
        acc = torch.zeros_like(x)
        for i in range(n):
            acc = acc + x * i
        return acc
    out.append(loop(x, 4))
    # training the scripted module updates the same parameters
    opt = torch.optim.SGD(sm.parameters(), lr=0.1)
    y = torch.arange(5) % 3
    for _ in range(3):
        loss = nn.functional.cross_entropy(sm(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(m.fc1.weight)
    out.append(isinstance(sm, torch.jit.ScriptModule))
    return out


def fx_prog(torch, init):
    nn = torch.nn; fx = torch.fx
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.norm = nn.LayerNorm(6)
        def forward(self, x):
            y = self.lin(x)
            y = torch.add(y, x)
            y = torch.relu(y)
            return self.norm(y).sum(dim=-1)
    m = Block(); init(m)
    x, = _data(torch, 2, (3, 6))
    gm = fx.symbolic_trace(m)
    out = [gm(x), [(n.op, n.name) for n in gm.graph.nodes]]
    # rewrite: add -> mul, relu -> gelu
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is torch.add:
            n.target = torch.mul
        elif n.op == "call_function" and n.target is torch.relu:
            with gm.graph.inserting_after(n):
                g = gm.graph.call_function(torch.nn.functional.gelu, n.args)
            n.replace_all_uses_with(g)
            gm.graph.erase_node(n)
    gm.graph.lint()
    gm.recompile()
    ref = m.norm(torch.nn.functional.gelu(m.lin(x) * x)).sum(dim=-1)
    out.append(gm(x)); out.append(ref)
    out.append([(n.op, n.name) for n in gm.graph.nodes])
    # count calls with an Interpreter subclass
    class Counter(fx.Interpreter):
        def __init__(self, mod):
            super().__init__(mod); self.seen = []
        def call_module(self, target, args, kwargs):
            self.seen.append(target)
            return super().call_module(target, args, kwargs)
    c = Counter(gm)
    out.append(c.run(x)); out.append(c.seen)
    # a traced function with a constant
    def f(a, b):
        return (a @ b.t()).softmax(-1) * 3.0
    g2 = fx.symbolic_trace(f)
    out.append(g2(x, x))
    out.append(len(list(g2.graph.nodes)))
    return out


def functional_opt_prog(torch, init):
    F = torch.autograd.functional
    rng = np.random.RandomState(3)
    A = torch.tensor(rng.randn(6, 4))
    b = torch.tensor(rng.randn(6))
    out = []
    # Newton on a smooth convex function
    def f(w):
        r = A @ w - b
        return (r ** 2).sum() + 0.1 * (w ** 4).sum()
    w = torch.zeros(4, dtype=torch.float64)
    for _ in range(4):
        g = F.jacobian(f, w)
        H = F.hessian(f, w)
        w = w - torch.linalg.solve(H, g)
        out.append(f(w).item())
    out.append(w)
    # Gauss-Newton with the residual's jacobian
    def res(p):
        t = torch.linspace(0, 1, 8, dtype=torch.float64)
        return p[0] * torch.exp(-p[1] * t) - (2.0 * torch.exp(-3.0 * t) + 0.01 * torch.sin(9 * t))
    p = torch.tensor([1.0, 1.0], dtype=torch.float64)
    for _ in range(5):
        J = F.jacobian(res, p)
        r = res(p)
        p = p - torch.linalg.lstsq(J, r.unsqueeze(-1)).solution.squeeze(-1)
        out.append(p.clone())
    # conjugate gradients with Hessian-vector products
    w0 = torch.tensor(rng.randn(4))
    g = F.vjp(f, w0)[1]
    xk = torch.zeros(4, dtype=torch.float64); r = -g.clone(); d = r.clone()
    for _ in range(4):
        Hd = F.hvp(f, w0, d)[1]
        alpha = (r @ r) / (d @ Hd)
        xk = xk + alpha * d
        r_new = r - alpha * Hd
        beta = (r_new @ r_new) / (r @ r)
        d = r_new + beta * d; r = r_new
    out.append(xk)
    out.append(F.vhp(f, w0, torch.ones(4, dtype=torch.float64))[1])
    out.append(F.jvp(lambda w: A @ w, w0, torch.ones(4, dtype=torch.float64))[1])
    # jacobian of a model output wrt parameters via functional_call
    net = torch.nn.Linear(4, 2).double(); init(net)
    names = [k for k, _ in net.named_parameters()]
    params = tuple(p.detach() for _, p in net.named_parameters())
    def fn(*ps):
        return torch.func.functional_call(net, dict(zip(names, ps)), (A,))
    J = F.jacobian(fn, params)
    out.append([j.shape for j in J]); out.append(list(J))
    return out


def actor_critic_prog(torch, init):
    nn = torch.nn; D = torch.distributions
    class AC(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 16), nn.Tanh())
            self.pi = nn.Linear(16, 3)
            self.mu = nn.Linear(16, 2)
            self.log_std = nn.Parameter(torch.zeros(2))
            self.v = nn.Linear(16, 1)
        def forward(self, s):
            h = self.body(s)
            return self.pi(h), self.mu(h), self.log_std.exp(), self.v(h).squeeze(-1)
    m = AC(); init(m)
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    rng = np.random.RandomState(5)
    out = []
    gamma = 0.9
    for ep in range(3):
        s = torch.from_numpy(rng.randn(6, 4).astype(np.float32))
        a_disc = torch.from_numpy(rng.randint(0, 3, 6))
        a_cont = torch.from_numpy(rng.randn(6, 2).astype(np.float32))
        rew = rng.randn(6).astype(np.float32)
        R_ = 0.0; rets = []
        for r in rew[::-1]:
            R_ = r + gamma * R_
            rets.insert(0, R_)
        rets = torch.tensor(rets)
        logits, mu, std, v = m(s)
        cat = D.Categorical(logits=logits)
        nrm = D.Independent(D.Normal(mu, std), 1)
        logp = cat.log_prob(a_disc) + nrm.log_prob(a_cont)
        adv = (rets - v).detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ent = cat.entropy().mean() + nrm.entropy().mean()
        loss = -(logp * adv).mean() + 0.5 * nn.functional.smooth_l1_loss(v, rets) - 0.01 * ent
        opt.zero_grad(); loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        opt.step()
        out.append([loss.item(), ent.item(), cat.probs.detach(), nrm.mean.detach()])
    out.append(D.kl_divergence(cat, D.Categorical(probs=torch.full((6, 3), 1 / 3))).detach())
    out.append(D.kl_divergence(D.Normal(mu, std), D.Normal(0.0, 1.0)).detach())
    out.append([cat.batch_shape, cat.event_shape, nrm.batch_shape, nrm.event_shape])
    out.append(R(D.Categorical(logits=torch.zeros(2, 3))))
    out.append(R(D.Normal(torch.zeros(2), 1.0)))
    return out


def gnn_prog(torch, init):
    nn = torch.nn
    rng = np.random.RandomState(7)
    N, E, Fi = 7, 16, 5
    src = torch.from_numpy(rng.randint(0, N, E)); dst = torch.from_numpy(rng.randint(0, N, E))
    x = torch.from_numpy(rng.randn(N, Fi).astype(np.float32))
    batch = torch.tensor([0, 0, 0, 1, 1, 2, 2])
    y = torch.tensor([0, 1, 0])
    class MP(nn.Module):
        def __init__(self):
            super().__init__()
            self.msg = nn.Linear(2 * Fi, 8); self.upd = nn.Linear(Fi + 8 + 8, 8)
            self.att = nn.Linear(8, 1); self.out = nn.Linear(16, 2)
        def forward(self, x):
            m_ = torch.relu(self.msg(torch.cat([x[src], x[dst]], -1)))
            agg_sum = torch.zeros(N, 8).index_add_(0, dst, m_)
            agg_max = torch.zeros(N, 8).scatter_reduce(0, dst[:, None].expand(-1, 8), m_, reduce="amax", include_self=False)
            h = torch.relu(self.upd(torch.cat([x, agg_sum, agg_max], -1)))
            # attention over nodes of a graph: segment softmax
            sc = self.att(h).squeeze(-1)
            mx = torch.full((3,), -1e9).scatter_reduce(0, batch, sc, reduce="amax")
            e = (sc - mx[batch]).exp()
            den = torch.zeros(3).index_add(0, batch, e)
            a = e / den[batch]
            pooled = torch.zeros(3, 8).index_add_(0, batch, a[:, None] * h)
            mean = torch.zeros(3, 8).scatter_reduce(0, batch[:, None].expand(-1, 8), h, reduce="mean", include_self=False)
            return self.out(torch.cat([pooled, mean], -1))
    m = MP(); init(m)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.05)
    out = []
    for _ in range(4):
        loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    deg = torch.bincount(dst, minlength=N)
    out.append(deg)
    counts = torch.bincount(batch)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)])
    out.append(offsets)
    seg = torch.segment_reduce(x[:, 0], "sum", lengths=counts)
    out.append(seg)
    out.append(torch.segment_reduce(x[:, 1], "max", lengths=counts))
    csum = torch.cat([torch.zeros(1, Fi), x.cumsum(0)])
    out.append(csum[offsets[1:]] - csum[offsets[:-1]])
    out.append(m.out.weight)
    return out


def _sched_cases(torch):
    S = torch.optim.lr_scheduler
    return {
        "onecycle": lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=12, pct_start=0.25, anneal_strategy="linear", div_factor=10, final_div_factor=100),
        "onecycle_cos": lambda o: S.OneCycleLR(o, max_lr=[0.3, 0.6], epochs=3, steps_per_epoch=4, cycle_momentum=True, base_momentum=0.8, max_momentum=0.95),
        "warm_restarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3, eta_min=0.001),
        "cyclic_tri2": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.2, step_size_up=2, step_size_down=3, mode="triangular2"),
        "cyclic_fn": lambda o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.3, step_size_up=3, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations", cycle_momentum=False),
        "sequential": lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.25, total_iters=3), S.CosineAnnealingLR(o, T_max=5, eta_min=0.01)], milestones=[3]),
        "chained": lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3), S.ExponentialLR(o, gamma=0.8), S.MultiStepLR(o, milestones=[2, 5], gamma=0.3)]),
        "lambda": lambda o: S.LambdaLR(o, lr_lambda=[lambda e: 1 / (1 + e), lambda e: 0.9 ** e]),
        "poly": lambda o: S.PolynomialLR(o, total_iters=6, power=0.5),
        "cosine": lambda o: S.CosineAnnealingLR(o, T_max=4, eta_min=0.02),
        "multistep": lambda o: S.MultiStepLR(o, milestones=[1, 3, 4], gamma=0.5),
    }


def scheduler_resume_prog(torch, init, kind="onecycle"):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1)); init(model)
    x, y = _data(torch, 11, (10, 3), (10, 1))
    mom = {"onecycle_cos": 0.9, "cyclic_tri2": 0.9}.get(kind, 0.0)
    def make():
        opt = torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.2}], lr=0.1, momentum=mom)
        return opt, _sched_cases(torch)[kind](opt)
    opt, sch = make()
    out = []
    def step(opt, sch):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step(); sch.step()
        out.append([round(loss.item(), 5), [g["lr"] for g in opt.param_groups], [g.get("momentum") for g in opt.param_groups], sch.get_last_lr()])
    for _ in range(5):
        step(opt, sch)
    buf = io.BytesIO()
    torch.save({"opt": opt.state_dict(), "sched": sch.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=False)
    opt2, sch2 = make()
    opt2.load_state_dict(ck["opt"]); sch2.load_state_dict(ck["sched"])
    out.append(R(getattr(sch2, "last_epoch", None)))
    for _ in range(5):
        step(opt2, sch2)
    out.append([sorted(k for k in sch2.state_dict() if not k.startswith("_"))])
    return out


def optim_options_prog(torch, init):
    nn = torch.nn; O = torch.optim
    x, y = _data(torch, 12, (12, 4), (12, 2))
    out = []
    cases = [
        ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.01)),
        ("Adam", dict(lr=0.05, maximize=True, foreach=True)),
        ("Adam", dict(lr=0.05, betas=(0.8, 0.9), foreach=False, eps=1e-6)),
        ("AdamW", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
        ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.003)),
        ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
        ("RAdam", dict(lr=0.05)),
        ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1, weight_decay=0.01)),
        ("Adadelta", dict(lr=1.0, rho=0.8, weight_decay=0.01)),
        ("Adamax", dict(lr=0.05, weight_decay=0.01)),
        ("Rprop", dict(lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-4, 1.0))),
        ("ASGD", dict(lr=0.05, t0=2, lambd=1e-3)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.01)),
        ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, dampening=0, weight_decay=1e-3)),
        ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, maximize=True)),
    ]
    for name, kw in cases:
        model = nn.Linear(4, 2); init(model)
        opt = getattr(O, name)(model.parameters(), **kw)
        ls = []
        for _ in range(4):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            ls.append(loss.item())
        st = opt.state_dict()["state"][0]
        out.append([name, ls, model.weight, sorted(st), R(st.get("step"))])
    # param group added mid-training (frozen head unfrozen)
    body = nn.Linear(4, 3); head = nn.Linear(3, 2); init(body, head)
    head.requires_grad_(False)
    opt = O.Adam(body.parameters(), lr=0.02)
    for i in range(6):
        if i == 3:
            head.requires_grad_(True)
            opt.add_param_group({"params": head.parameters(), "lr": 0.005, "betas": (0.5, 0.6)})
        loss = nn.functional.mse_loss(head(torch.relu(body(x))), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append([sorted((k, v) for k, v in g.items() if k != "params" and not isinstance(v, (bool, type(None)))) for g in opt.param_groups])
    out.append(head.weight)
    # LBFGS with strong Wolfe on a least-squares problem
    model = nn.Linear(4, 2); init(model)
    opt = O.LBFGS(model.parameters(), lr=1, max_iter=10, history_size=5, line_search_fn="strong_wolfe")
    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y) + 0.01 * model.weight.pow(2).sum()
        loss.backward()
        return loss
    for _ in range(3):
        out.append(opt.step(closure).item())
    out.append(opt.state_dict()["state"][0]["func_evals"])
    out.append(model.weight)
    # SparseAdam on a sparse embedding
    emb = nn.Embedding(10, 3, sparse=True); init(emb)
    opt = O.SparseAdam(emb.parameters(), lr=0.1)
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    for _ in range(3):
        loss = emb(idx).pow(2).sum()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(emb.weight)
    return out


def samplers_prog(torch, init):
    D = torch.utils.data
    out = []
    g = torch.Generator().manual_seed(0)
    ds = D.TensorDataset(torch.arange(20).float(), torch.arange(20) % 4)
    parts = D.random_split(ds, [0.5, 0.3, 0.2], generator=g)
    out.append([len(p) for p in parts])
    parts = D.random_split(range(10), [0.34, 0.33, 0.33], generator=g)
    out.append([len(p) for p in parts])
    out.append(sorted(i for p in parts for i in p))
    w = D.WeightedRandomSampler([0.1, 0.0, 0.9, 0.0], num_samples=7, replacement=True, generator=g)
    drawn = list(w)
    out.append([len(drawn), set(drawn) <= {0, 2}, len(w)])
    sub = D.SubsetRandomSampler([3, 5, 7, 9], generator=g)
    out.append([len(sub), sorted(sub)])
    rs = D.RandomSampler(ds, replacement=False, generator=g)
    out.append([len(rs), sorted(rs) == list(range(20))])
    rs = D.RandomSampler(ds, replacement=True, num_samples=5, generator=g)
    out.append(len(list(rs)))
    bs = D.BatchSampler(D.SequentialSampler(ds), batch_size=6, drop_last=True)
    out.append([len(bs), list(bs)])
    bs = D.BatchSampler(range(7), batch_size=3, drop_last=False)
    out.append([len(bs), list(bs)])
    cat = D.ConcatDataset([ds, D.TensorDataset(torch.ones(3), torch.zeros(3, dtype=torch.long))])
    out.append([len(cat), cat[21], cat[-1], cat.cumulative_sizes])
    class It(D.IterableDataset):
        def __init__(self, a, b): self.a, self.b = a, b
        def __iter__(self): return iter(range(self.a, self.b))
    ch = D.ChainDataset([It(0, 3), It(10, 12)])
    out.append(list(ch))
    out.append([b.tolist() for b in D.DataLoader(ch, batch_size=2)])
    Item = collections.namedtuple("Item", ["img", "meta"])
    batch = [Item(torch.full((2, 2), float(i)), {"id": i, "tags": [i, i + 1], "w": 0.5 * i, "name": "n%d" % i}) for i in range(3)]
    c = D.default_collate(batch)
    out.append([type(c).__name__, c.img, c.meta["id"], c.meta["tags"], c.meta["w"], c.meta["name"]])
    out.append(R(c.meta["w"].dtype))
    dl = D.DataLoader(ds, batch_size=8, sampler=D.SequentialSampler(ds), collate_fn=lambda b: torch.stack([t[0] for t in b]).sum())
    out.append([v for v in dl])
    dl = D.DataLoader(ds, batch_size=None)
    out.append(next(iter(dl)))
    out.append(len(D.DataLoader(ds, batch_size=6, drop_last=True)))
    return out


def nn_utils_prog(torch, init):
    nn = torch.nn; U = nn.utils
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3)); init(model)
    x, = _data(torch, 13, (8, 4))
    y = torch.arange(8) % 3
    out = []
    loss = nn.functional.cross_entropy(model(x), y) * 10
    loss.backward()
    out.append(U.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=2.0, foreach=True))
    out.append(model[0].weight.grad.clone())
    out.append(U.clip_grad_norm_(model.parameters(), max_norm=0.1, norm_type="inf"))
    U.clip_grad_value_(model.parameters(), clip_value=0.01)
    out.append(model[2].bias.grad.clone())
    out.append(U.get_total_norm([p.grad for p in model.parameters()], norm_type=1.0))
    vec = U.parameters_to_vector(model.parameters())
    out.append(vec.shape)
    U.vector_to_parameters(vec * 0.5, model.parameters())
    out.append(model[2].weight)
    # weight norm / spectral norm parametrizations, trained
    P = nn.utils.parametrizations
    lin = nn.Linear(5, 4); init(lin)
    P.weight_norm(lin, name="weight", dim=0)
    lin2 = nn.Linear(4, 3); init(lin2)
    P.spectral_norm(lin2, n_power_iterations=3)
    opt = torch.optim.SGD(list(lin.parameters()) + list(lin2.parameters()), lr=0.1)
    z, = _data(torch, 14, (6, 5))
    for _ in range(3):
        l = lin2(torch.tanh(lin(z))).pow(2).mean()
        opt.zero_grad(); l.backward(); opt.step()
        out.append(l.item())
    out.append(sorted(k for k in lin.state_dict()))
    out.append(lin.parametrizations.weight.original0)
    out.append(R(lin))
    nn.utils.parametrize.remove_parametrizations(lin, "weight")
    out.append(sorted(k for k in lin.state_dict()))
    out.append(lin.weight)
    # rnn packing
    seqs = [torch.arange(float(n)).unsqueeze(-1) + n for n in (4, 2, 3)]
    packed = U.rnn.pack_sequence(seqs, enforce_sorted=False)
    out.append([packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices])
    rnn = nn.GRU(1, 2, batch_first=True); init(rnn)
    po, h = rnn(packed)
    pad, lens = U.rnn.pad_packed_sequence(po, batch_first=True, padding_value=-1.0, total_length=5)
    out.append([pad, lens, h])
    padded = U.rnn.pad_sequence(seqs, batch_first=False, padding_value=0.5)
    out.append(padded)
    pk = U.rnn.pack_padded_sequence(padded, torch.tensor([4, 2, 3]), enforce_sorted=False)
    out.append(U.rnn.unpack_sequence(pk))
    out.append(U.rnn.unpad_sequence(padded, torch.tensor([4, 2, 3])))
    # fuse conv + bn in eval
    conv = nn.Conv2d(2, 3, 3, padding=1); bn = nn.BatchNorm2d(3); init(conv, bn)
    bn.train()
    img, = _data(torch, 15, (2, 2, 5, 5))
    for _ in range(3):
        bn(conv(img))
    conv.eval(); bn.eval()
    fused = U.fusion.fuse_conv_bn_eval(conv, bn)
    out.append([fused(img), bn(conv(img))])
    out.append(U.convert_conv2d_weight_memory_format(conv, torch.channels_last).weight.is_contiguous(memory_format=torch.channels_last))
    return out


# ---- new programs go above this line ----
PROGRAMS = [v for k, v in list(globals().items()) if k.endswith("_prog") and k != "scheduler_resume_prog"]


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program(prog):
    got, want = run_pair(prog, torch)
    assert_close(got, want)


@pytest.mark.parametrize("kind", sorted(_sched_cases(torch)))
def test_scheduler_resume(kind):
    got, want = run_pair(scheduler_resume_prog, torch, kind=kind)
    assert_close(got, want)
