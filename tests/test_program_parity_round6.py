"""Round six of whole programs written once against the module they are given and run
under torch and under ptcore (``import ptcore as torch``) from the same initial weights
(tests/program_pairs.py); what they return (losses, parameters, printed text, metric
counters, generated code) must agree.

Covered here: TorchScript (script and trace of models, their save/load round trip through
a buffer, Final constants, sizes kept dynamic by trace at another batch size, check_inputs),
torch.fx (symbolic_trace, graph rewrites, Interpreter/Transformer, custom Tracers with
concrete_args, the recorded arguments of torch.nn.functional calls, print_readable, DCE
keeping torch._assert, ShapeProp, replace_pattern, fx.experimental.optimization.fuse,
passes.split_module, passes.infra.PassManager, fx.annotate), autograd.functional in
optimisation loops (Newton, Gauss-Newton, conjugate gradients, MAML), actor-critic and SAC
with torch.distributions, distributions holding the leaves an optimizer updates, GNN message
passing with index_add_/scatter_reduce/segment sums, every lr_scheduler with its state_dict
round trip, optimizers' less-used options and parameter groups, torch.utils.data samplers
and datasets, nn.utils helpers, einsum attention variants, integer metric bookkeeping,
printed logs, checkpoints (state dicts and whole pickled models) resumed from a buffer,
RNG state reproducibility, VQ-VAE, CRF, TransE, matrix factorisation with sparse
gradients, length-bucketed packed LSTMs and an EM-fitted Gaussian mixture.
"""
import collections
import io
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import (  # noqa: E402
    assert_close, norm_repr, one_thread, randn_data as _data, run_pair, text_of)


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


R = text_of


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
        "step": lambda o: S.StepLR(o, step_size=3, gamma=0.4),
        "exponential": lambda o: S.ExponentialLR(o, gamma=0.85),
        "linear": lambda o: S.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=7),
        "constant": lambda o: S.ConstantLR(o, factor=0.3, total_iters=6),
        "multiplicative": lambda o: S.MultiplicativeLR(o, lr_lambda=lambda e: 0.9 if e % 2 else 0.97),
        "plateau": lambda o: S.ReduceLROnPlateau(o, mode="max", factor=0.5, patience=1, threshold=0.05, cooldown=1, min_lr=[0.01, 0.02]),
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
        opt.zero_grad(); loss.backward(); opt.step()
        if kind == "plateau":
            sch.step(-loss.item() if len(out) % 3 else -10.0)
        else:
            sch.step()
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
    out.append(R(getattr(sch2, "num_bad_epochs", None)))
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


def einsum_attn_prog(torch, init):
    nn = torch.nn; F = nn.functional
    class MQA(nn.Module):
        def __init__(self, d=16, h=4):
            super().__init__()
            self.h = h; self.dk = d // h
            self.q = nn.Linear(d, d); self.kv = nn.Linear(d, 2 * self.dk); self.o = nn.Linear(d, d)
            self.rel = nn.Parameter(torch.randn(h, 9) * 0.1)
        def forward(self, x, mask):
            B, T, _ = x.shape
            q = self.q(x).view(B, T, self.h, self.dk)
            k, v = self.kv(x).chunk(2, -1)
            s = torch.einsum("bthd,bsd->bhts", q, k) / math.sqrt(self.dk)
            pos = torch.arange(T)
            rel = (pos[None, :] - pos[:, None]).clamp(-4, 4) + 4
            s = s + self.rel[:, rel]
            s = s.masked_fill(~mask[:, None, None, :], float("-inf"))
            a = s.softmax(-1)
            o = torch.einsum("bhts,bsd->bthd", a, v).reshape(B, T, -1)
            return self.o(o), a
    class LinAttn(nn.Module):
        def __init__(self, d=16):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, -1)
            q, k = F.elu(q) + 1, F.elu(k) + 1
            kv = torch.einsum("bsd,bse->bde", k, v)
            z = 1 / (torch.einsum("btd,bd->bt", q, k.sum(1)) + 1e-6)
            return torch.einsum("btd,bde,bt->bte", q, kv, z)
    torch.manual_seed(0)
    m1 = MQA(); m2 = LinAttn(); init(m1, m2)
    x, = _data(torch, 21, (2, 5, 16))
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]).bool()
    opt = torch.optim.Adam(list(m1.parameters()) + list(m2.parameters()), lr=1e-2)
    out = []
    for _ in range(3):
        y, a = m1(x, mask)
        loss = (y + m2(y)).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(a.detach())
    out.append(m1.rel.grad)
    # einsum odds: diagonal, trace, outer, batch bilinear, ellipsis, sublist format
    A, B, v = _data(torch, 22, (3, 3), (2, 3, 4), (3,))
    out.append([torch.einsum("ii->i", A), torch.einsum("ii", A), torch.einsum("i,j->ij", v, v),
                torch.einsum("...ij,jk->...ik", B, B[0].t()), torch.einsum(B, [0, 1, 2], v, [1], [0, 2]),
                torch.einsum("bij,bkj->bik", B, B), torch.einsum("ij->", A)])
    W = torch.nn.Bilinear(3, 3, 2); init(W)
    out.append([W(A, A), torch.einsum("bi,oij,bj->bo", A, W.weight, A) + W.bias])
    return out


def metrics_prog(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4)); init(model)
    rng = np.random.RandomState(23)
    X = torch.from_numpy(rng.randn(40, 6).astype(np.float32))
    Y = torch.from_numpy(rng.randint(0, 4, 40))
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    out = []
    for ep in range(3):
        correct = 0; total = 0; top2 = 0; running = 0.0
        conf = torch.zeros(4, 4, dtype=torch.int64)
        for i in range(0, 40, 10):
            xb, yb = X[i:i + 10], Y[i:i + 10]
            logits = model(xb)
            loss = nn.functional.cross_entropy(logits, yb, label_smoothing=0.1)
            opt.zero_grad(); loss.backward(); opt.step()
            running += loss.item() * xb.size(0)
            pred = logits.argmax(dim=1)
            correct += (pred == yb).sum().item()
            total += yb.size(0)
            _, t2 = logits.topk(2, dim=1)
            top2 += t2.eq(yb.view(-1, 1).expand_as(t2)).any(1).float().sum().item()
            conf += torch.bincount(yb * 4 + pred, minlength=16).view(4, 4)
        tp = conf.diag()
        prec = tp.float() / conf.sum(0).clamp(min=1)
        rec = tp.float() / conf.sum(1).clamp(min=1)
        f1 = 2 * prec * rec / (prec + rec).clamp(min=1e-8)
        out.append([correct, total, top2, running / total, 100.0 * correct / total, conf, prec, rec, f1.mean().item(),
                    type(correct).__name__, type(top2).__name__])
        out.append(f"epoch {ep}: loss={running / total:.4f} acc={100. * correct / total:.2f}% top2={top2 / total:.3f}")
    with torch.no_grad():
        probs = model(X).softmax(-1)
    vals, idx = probs.topk(3, dim=-1, largest=True, sorted=True)
    out.append([vals[:5], idx[:5], R(idx.dtype)])
    kth = probs.kthvalue(2, dim=-1)
    out.append([kth.values[:4], kth.indices[:4]])
    out.append(torch.unique(Y, return_counts=True))
    out.append(torch.histc(probs[:, 0], bins=5, min=0, max=1))
    ones = torch.nn.functional.one_hot(Y, 4)
    out.append([ones.sum(0), R(ones.dtype)])
    # AUC by rank
    s = probs[:, 1]; lab = (Y == 1)
    order = s.argsort()
    ranks = torch.empty_like(order); ranks[order] = torch.arange(1, 41)
    npos = lab.sum(); nneg = (~lab).sum()
    auc = (ranks[lab].sum() - npos * (npos + 1) / 2) / (npos * nneg)
    out.append([auc, R(auc.dtype), R(npos.dtype), R((npos * (npos + 1) / 2).dtype)])
    out.append(torch.mode(Y).values)
    return out


def printing_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(4, momentum=0.2), nn.LeakyReLU(0.1, inplace=True))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.drop = nn.Dropout(p=0.25)
            self.head = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1, bias=False)})
            self.emb = nn.Embedding(10, 4, padding_idx=0, max_norm=2.0)
            self.rnn = nn.LSTM(4, 5, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)
            self.ln = nn.LayerNorm([4], eps=1e-6, elementwise_affine=False)
            self.plist = nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(3, 2))])
        def forward(self, x):
            h = self.pool(self.conv(x)).flatten(1)
            return self.head["cls"](self.drop(h))
    m = Net(); init(m)
    buf = io.StringIO()
    print(m, file=buf)
    print(sum(p.numel() for p in m.parameters()), "params", file=buf)
    print(sum(p.numel() for p in m.parameters() if p.requires_grad), file=buf)
    for name, p in m.named_parameters():
        print(f"{name:30s} {str(tuple(p.shape)):>12} {p.dtype}", file=buf)
    x, = _data(torch, 24, (2, 1, 6, 6))
    m.eval()
    y = m(x)
    print(y, file=buf)
    print(f"loss: {y.pow(2).mean().item():.4f} | max {y.max():.3f} | {y.argmax()}", file=buf)
    print(y.detach().numpy().round(3).tolist(), file=buf)
    print(torch.tensor([[1, 2], [3, 4]]), torch.tensor([0.5, 1e-5]), torch.tensor([1e10, 1.0]), file=buf)
    print(torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([], dtype=torch.int32), file=buf)
    print(torch.ones(2, 2, dtype=torch.bfloat16), torch.tensor(True), torch.tensor([-0.0, 0.0]), file=buf)
    print(torch.arange(12).reshape(2, 2, 3), file=buf)
    print(torch.tensor([1.23456789e-3, 1234.5]), torch.tensor([[1e-10]]), file=buf)
    print(torch.zeros(3, requires_grad=True), torch.ones(2, requires_grad=True) * 2, file=buf)
    print(torch.tensor([3.0]).long(), torch.tensor(7).item(), torch.tensor(2.5).item(), file=buf)
    print(x.shape, x.size(1), x.dtype, y.device, x.stride(), file=buf)
    print(m.state_dict()["conv.1.running_mean"], file=buf)
    print(list(m.state_dict())[:6], file=buf)
    print(m.head, m.plist, sep="\n", file=buf)
    print(repr(torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)), file=buf)
    print(repr(torch.optim.AdamW(m.parameters())), file=buf)
    return norm_repr(buf.getvalue().splitlines())


def checkpoint_resume_prog(torch, init):
    nn = torch.nn
    def make():
        model = nn.Sequential(nn.Linear(5, 10), nn.BatchNorm1d(10), nn.ReLU(), nn.Linear(10, 2))
        return model
    X, Y = _data(torch, 25, (32, 5), (32, 2))
    def train(model, opt, sched, epochs, scaler_state=None):
        losses = []
        for ep in range(epochs):
            for i in range(0, 32, 8):
                loss = nn.functional.smooth_l1_loss(model(X[i:i + 8]), Y[i:i + 8], beta=0.5)
                opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
                losses.append(loss.item())
            sched.step()
        return losses
    model = make(); init(model)
    snap = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    out = [train(model, opt, sched, 2)]
    buf = io.BytesIO()
    torch.save({"epoch": 2, "model": model.state_dict(), "optim": opt.state_dict(), "sched": sched.state_dict(),
                "rng_np": np.random.RandomState(0).get_state()[1][:3], "best": torch.tensor(0.25), "hist": out[0]}, buf)
    size = buf.tell()
    out.append(size > 0)
    out.append(train(model, opt, sched, 2))
    ref = model.state_dict()
    buf.seek(0)
    ck = torch.load(buf, weights_only=False)
    m2 = make(); m2.load_state_dict(ck["model"])
    o2 = torch.optim.Adam(m2.parameters(), lr=1e-2, weight_decay=1e-4); o2.load_state_dict(ck["optim"])
    s2 = torch.optim.lr_scheduler.StepLR(o2, step_size=1, gamma=0.7); s2.load_state_dict(ck["sched"])
    out.append([ck["epoch"], ck["best"], ck["hist"][:2], sorted(ck["optim"]["state"]), ck["optim"]["param_groups"][0]["lr"]])
    out.append(train(m2, o2, s2, 2))
    out.append([torch.equal(ref[k], m2.state_dict()[k]) for k in ref])
    out.append(m2.state_dict()["1.num_batches_tracked"])
    # strict=False loading into a changed model, missing/unexpected keys
    m3 = nn.Sequential(nn.Linear(5, 10), nn.BatchNorm1d(10), nn.ReLU(), nn.Linear(10, 3))
    sd = {k: v for k, v in ck["model"].items() if not k.startswith("3.")}
    sd["extra.weight"] = torch.zeros(1)
    res = m3.load_state_dict(sd, strict=False)
    out.append([sorted(res.missing_keys), sorted(res.unexpected_keys), R(res)])
    # model restored from snapshot restarts identically
    model.load_state_dict(snap)
    o3 = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    s3 = torch.optim.lr_scheduler.StepLR(o3, step_size=1, gamma=0.7)
    out.append(train(model, o3, s3, 1))
    # weights_only loading of a plain state dict with nested containers
    buf = io.BytesIO(); torch.save({"w": [model[0].weight.detach(), (1, 2.5, "s")], "n": None}, buf); buf.seek(0)
    ld = torch.load(buf, weights_only=True)
    out.append([ld["w"][0], R(ld["w"][1]), R(ld["n"])])
    return out


def jit2_prog(torch, init):
    nn = torch.nn
    from typing import List, Dict, Optional, Tuple
    from typing import Final
    class Enc(nn.Module):
        __constants__ = ["scale"]
        reps: Final[int] = 2
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.scale = 2.0
            self.register_buffer("count", torch.zeros((), dtype=torch.long))
        def forward(self, xs: List[torch.Tensor], opt: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, Dict[str, int]]:
            acc = torch.zeros(3)
            for x in xs:
                acc = acc + self.lin(x) * self.scale
            if opt is not None:
                acc = acc - opt
            self.count += 1
            return acc, {"n": len(xs)}
        @torch.jit.export
        def embed(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x).tanh()
        @torch.jit.ignore
        def debug(self, x):
            return x.numpy().sum()
    m = Enc(); init(m)
    sm = torch.jit.script(m)
    a, b = _data(torch, 26, (3,), (3,))
    out = [sm([a, b]), sm([a], b), sm.embed(a), sm.count]
    buf = io.BytesIO(); torch.jit.save(sm, buf); buf.seek(0)
    lm = torch.jit.load(buf)
    out += [lm([a, b, a]), lm.embed(b), lm.count, sorted(lm.state_dict()), [sm.reps, lm.reps, lm.scale]]
    sm.eval()
    fm = torch.jit.freeze(sm)
    out.append(fm([a]))
    @torch.jit.script
    def clamp_list(xs: List[float], lo: float = 0.0) -> List[float]:
        return [max(x, lo) for x in xs]
    out.append(clamp_list([-1.0, 2.0, -0.5]))
    def f(x, y):
        return torch.where(x > y, x * 2, y - 1).cumsum(0)
    tf = torch.jit.trace(f, (a, b))
    out.append(tf(b, a))
    seq = nn.Sequential(nn.Conv1d(2, 4, 3), nn.ReLU(), nn.AdaptiveMaxPool1d(2)); init(seq)
    z, = _data(torch, 27, (2, 2, 7))
    tseq = torch.jit.trace(seq, z)
    out.append(tseq(z * 2))
    out.append(torch.jit.is_scripting())
    return out


def fx2_prog(torch, init):
    import importlib
    nn = torch.nn; fx = torch.fx
    ShapeProp = importlib.import_module(torch.__name__ + ".fx.passes.shape_prop").ShapeProp
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3, padding=1); self.bn = nn.BatchNorm2d(4); self.fc = nn.Linear(4, 2)
        def forward(self, x):
            y = torch.relu(self.bn(self.c(x)))
            y = y.mean(dim=(2, 3))
            return torch.sigmoid(self.fc(y)) + 1
    m = M(); init(m); m.eval()
    x, = _data(torch, 28, (2, 3, 5, 5))
    gm = fx.symbolic_trace(m)
    ShapeProp(gm).propagate(x)
    out = [[(n.name, tuple(n.meta["tensor_meta"].shape), R(n.meta["tensor_meta"].dtype)) for n in gm.graph.nodes if "tensor_meta" in n.meta]]
    out.append([(n.op, R(n.target) if n.op != "call_function" else n.target.__name__) for n in gm.graph.nodes])
    # replace_pattern: sigmoid(x) + 1 -> 1 + sigmoid(x)*1 (equivalent)
    def pattern(a):
        return torch.sigmoid(a) + 1
    def replacement(a):
        return torch.add(torch.mul(torch.sigmoid(a), 1.0), 1.0)
    matches = fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    out.append(len(matches))
    out.append(gm(x)); out.append(m(x))
    out.append(sorted(n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"))
    # build a graph by hand
    g = fx.Graph()
    a = g.placeholder("a"); b = g.placeholder("b")
    c = g.call_function(torch.matmul, (a, b))
    d = g.call_method("relu", (c,))
    e = g.call_function(torch.sum, (d,), {"dim": 0})
    g.output(e)
    hm = fx.GraphModule(nn.Module(), g)
    A, B = _data(torch, 29, (3, 4), (4, 2))
    out.append(hm(A, B))
    out.append([n.op for n in g.nodes])
    # dead code elimination and node users
    gm2 = fx.symbolic_trace(lambda x: (x + 1, (x * 2).sum())[0])
    before = len(gm2.graph.nodes)
    gm2.graph.eliminate_dead_code(); gm2.recompile()
    out.append([before, len(gm2.graph.nodes), gm2(A)])
    # wrap a leaf function
    out.append(sorted(dict(gm.named_modules())))
    return out


def dist_params_prog(torch, init):
    D = torch.distributions
    rng = np.random.RandomState(30)
    data = torch.from_numpy((rng.randn(50) * 1.5 + 2.0).astype(np.float32))
    out = []
    # MLE where the distribution holds the leaves the optimizer updates
    d = D.Normal(torch.zeros(1, requires_grad=True), torch.ones(1, requires_grad=True))
    out.append([d.loc.is_leaf, d.scale.is_leaf])
    opt = torch.optim.Adam([d.loc, d.scale], lr=0.1)
    for _ in range(5):
        nll = -d.log_prob(data[:, None]).mean()
        opt.zero_grad(); nll.backward()
        out.append([nll.item(), d.loc.grad.clone(), d.scale.grad.clone()])
        opt.step()
    out.append([d.loc, d.scale])
    # variational inference with a mean-field Normal and a Gamma prior
    mu = torch.zeros(2, requires_grad=True); rho = torch.full((2,), -1.0, requires_grad=True)
    eps = torch.from_numpy(rng.randn(8, 2).astype(np.float32))
    opt = torch.optim.SGD([mu, rho], lr=0.05, momentum=0.9)
    prior = D.Normal(torch.zeros(2), torch.ones(2))
    for _ in range(4):
        q = D.Normal(mu, torch.nn.functional.softplus(rho))
        z = q.loc + q.scale * eps
        lik = D.Normal(z[:, :1] + z[:, 1:] * 0.1, 1.0).log_prob(data[:8, None]).sum()
        elbo = lik - D.kl_divergence(q, prior).sum() * 0.5
        opt.zero_grad(); (-elbo).backward(); opt.step()
        out.append([elbo.item(), q.loc is mu])
    out.append([mu, rho, mu.grad])
    g = D.Gamma(torch.tensor([2.0], requires_grad=True), torch.tensor([1.0], requires_grad=True))
    g.log_prob(torch.tensor([1.5])).sum().backward()
    out.append([g.concentration.grad, g.rate.grad])
    b = D.Bernoulli(logits=torch.tensor([0.2, -0.3], requires_grad=True))
    b.log_prob(torch.tensor([1.0, 0.0])).sum().backward()
    out.append(b.logits.grad)
    return out


def jit_trace_batch_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.fc = nn.Linear(4 * 4 * 4, 3)
            self.pos = nn.Parameter(torch.linspace(0, 1, 8))
        def forward(self, x):
            b = x.size(0)
            h = torch.relu(self.conv(x))
            h = nn.functional.max_pool2d(h, 2)
            h = h.view(b, -1)
            logits = self.fc(h)
            # batch-size arithmetic as users write it
            scale = 1 / b + (b * 0.5) ** 2
            offs = b - torch.arange(b).float()
            weights = 2 ** x.size(1) * logits.softmax(-1)
            return logits * scale + offs[:, None] * 0.01, weights, (x.size(0) * x.mean((1, 2, 3))), self.pos[: x.size(-1)]
    m = Net(); init(m)
    x1, x4 = _data(torch, 31, (1, 1, 8, 8), (4, 1, 8, 8))
    t = torch.jit.trace(m, x1, check_trace=False)
    out = [t(x4), m(x4)]
    buf = io.BytesIO(); torch.jit.save(t, buf); buf.seek(0)
    lt = torch.jit.load(buf)
    out.append(lt(x4))
    out.append(lt(x4[:3]))
    t2 = torch.jit.trace(lambda a: (a.size(0) - a.sum(1))[:, None] + a.shape[1] % (a + 3), x4[:, 0, 0, :2])
    out.append(t2(x4[:3, 0, :2, 0]))
    # check_inputs: a Python-side difference (is_tracing) warns, another path raises
    import warnings
    def marked(a):
        return a * 2 + (1.0 if torch.jit.is_tracing() else 0.0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t3 = torch.jit.trace(marked, x1[0, 0], check_inputs=[(x4[0, 0],)])
    out.append([t3(x4[1, 0]), "TracerWarning" in {c.category.__name__ for c in w}])
    def branchy(a):
        return a * 2 if a.sum() > 0 else a - 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.jit.trace(branchy, x1.abs(), check_inputs=[(-x1.abs(),)])
        out.append("no error")
    except torch.jit.TracingCheckError as e:
        out.append([type(e).__name__, "Graphs differed across invocations" in str(e)])
    return out


def fx_passes_prog(torch, init):
    import copy
    import operator
    nn = torch.nn; fx = torch.fx
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
            self.head = nn.Linear(8, 2)
            self.register_buffer("shift", torch.tensor([0.5, -0.5]))
        def forward(self, x, use_shift=True):
            h = self.enc(x)
            h = torch.relu(h) + h.mean(dim=0, keepdim=True)
            y = self.head(h)
            return y + self.shift if use_shift else y
    m = Net(); init(m)
    x, = _data(torch, 32, (5, 4))
    class LeafSeq(fx.Tracer):
        def is_leaf_module(self, mod, qualname):
            return isinstance(mod, nn.Sequential) or super().is_leaf_module(mod, qualname)
    g = LeafSeq().trace(m, concrete_args={"use_shift": True})
    gm = fx.GraphModule(m, g)
    out = [gm(x), m(x), [(n.op, getattr(n.target, "__name__", n.target)) for n in g.nodes], R(gm.code)]
    # a Transformer pass: add -> sub of the negation (same value), relu -> clamp_min
    class Rewrite(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is torch.relu:
                return super().call_function(torch.clamp_min, (args[0], 0.0), {})
            return super().call_function(target, args, kwargs)
    gm2 = Rewrite(gm).transform()
    out += [gm2(x), [n.target.__name__ for n in gm2.graph.nodes if n.op == "call_function"]]
    # copy the graph node by node, dropping the shift
    new_g = fx.Graph(); env = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is operator.add and any(
                isinstance(a, fx.Node) and a.op == "get_attr" for a in n.args):
            env[n] = env[n.args[0]]
            continue
        env[n] = new_g.node_copy(n, lambda a: env[a])
    new_g.lint()
    gm3 = fx.GraphModule(gm, new_g)
    out += [gm3(x), len(new_g.nodes)]
    # training the traced module trains the original's parameters (shared)
    opt = torch.optim.SGD(gm.parameters(), lr=0.1)
    for _ in range(3):
        loss = gm(x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(m.head.weight)
    # save / load of the GraphModule, deepcopy
    buf = io.BytesIO(); torch.save(gm, buf); buf.seek(0)
    g4 = torch.load(buf, weights_only=False)
    out += [g4(x), R(g4).splitlines()[0], type(g4).__name__, R(copy.deepcopy(gm)).splitlines()[0]]
    out.append(sorted(g4.state_dict()))
    # a user's torch._assert survives dead-code elimination
    def checked(x):
        torch._assert(x.sum() > 0, "negative input")
        unused = x * 3  # noqa: F841
        return x * 2
    g5 = fx.symbolic_trace(checked)
    g5.graph.eliminate_dead_code(); g5.recompile()
    out.append([n.op for n in g5.graph.nodes])
    try:
        g5(-x)
        out.append("no error")
    except AssertionError as e:
        out.append(str(e))
    return out


def maml_prog(torch, init):
    nn = torch.nn; F = nn.functional
    net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1)); init(net)
    meta = torch.optim.Adam(net.parameters(), lr=1e-2)
    rng = np.random.RandomState(40)
    out = []
    for it in range(3):
        meta.zero_grad()
        tot = 0.0
        for task in range(2):
            amp, ph = rng.uniform(0.5, 2.0), rng.uniform(0, 3)
            xs = torch.from_numpy(rng.uniform(-3, 3, (8, 1)).astype(np.float32))
            xq = torch.from_numpy(rng.uniform(-3, 3, (8, 1)).astype(np.float32))
            ys, yq = amp * torch.sin(xs + ph), amp * torch.sin(xq + ph)
            params = dict(net.named_parameters())
            for _ in range(2):
                l = F.mse_loss(torch.func.functional_call(net, params, (xs,)), ys)
                g = torch.autograd.grad(l, list(params.values()), create_graph=True)
                params = {k: v - 0.05 * gi for (k, v), gi in zip(params.items(), g)}
            lq = F.mse_loss(torch.func.functional_call(net, params, (xq,)), yq)
            (lq / 2).backward()
            tot += lq.item()
        meta.step()
        out.append(tot)
    out.append(net[0].weight.grad)
    out.append(net[2].weight)
    return out


def tied_lm_prog(torch, init):
    nn = torch.nn
    class LM(nn.Module):
        def __init__(self, V=12, D=6):
            super().__init__()
            self.emb = nn.Embedding(V, D)
            self.rnn = nn.GRU(D, D, batch_first=True)
            self.out = nn.Linear(D, V)
            self.out.weight = self.emb.weight
        def forward(self, x, h=None):
            o, h = self.rnn(self.emb(x), h)
            return self.out(o), h
    m = LM(); init(m)
    rng = np.random.RandomState(41)
    data = torch.from_numpy(rng.randint(0, 12, (3, 13)))
    opt = torch.optim.RMSprop(m.parameters(), lr=5e-3, alpha=0.95)
    out = [sorted(n for n, _ in m.named_parameters()), len(list(m.parameters())), sorted(m.state_dict())]
    h = None
    for i in range(0, 12, 4):
        x, y = data[:, i:i + 4], data[:, i + 1:i + 5]
        logits, h = m(x, h)
        h = h.detach()   # truncated BPTT
        loss = nn.functional.cross_entropy(logits.reshape(-1, 12), y.reshape(-1))
        opt.zero_grad(); loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 0.25)
        opt.step()
        out.append([loss.item(), math.exp(loss.item())])
    out.append(m.emb.weight is m.out.weight)
    out.append(m.out.weight)
    # greedy generation
    tok = torch.tensor([[1]]); h = None; gen = []
    with torch.no_grad():
        for _ in range(6):
            lg, h = m(tok, h)
            tok = lg[:, -1].argmax(-1, keepdim=True)
            gen.append(tok.item())
    out.append(gen)
    sd = m.state_dict()
    m2 = LM(); m2.load_state_dict(sd)
    out.append(m2.out.weight is m2.emb.weight)
    return out


def rng_repro_prog(torch, init):
    nn = torch.nn
    out = []
    torch.manual_seed(7)
    state = torch.get_rng_state()
    drop = nn.Dropout(0.5)
    x = torch.ones(4, 6)
    a = drop(x)
    torch.set_rng_state(state)
    b = drop(x)
    out.append(torch.equal(a, b))
    out.append([(a == 0).sum().item() + (a == 2).sum().item(), a.unique().tolist() in ([0.0, 2.0], [2.0], [0.0])])
    g = torch.Generator().manual_seed(3)
    s = g.get_state()
    p1 = torch.randperm(10, generator=g)
    g.set_state(s)
    p2 = torch.randperm(10, generator=g)
    out.append([torch.equal(p1, p2), sorted(p1.tolist()) == list(range(10))])
    with torch.random.fork_rng():
        torch.rand(100)
    after = torch.rand(2)
    torch.set_rng_state(state); drop(x); again = torch.rand(2)
    out.append(torch.equal(after, again))
    out.append([g.initial_seed(), torch.initial_seed(), R(state.dtype), state.dim()])
    D = torch.utils.data
    ds = D.TensorDataset(torch.arange(10))
    ld1 = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(1))]
    ld2 = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(1))]
    out.append([ld1 == ld2, sorted(sum(ld1, [])) == list(range(10)), [len(b) for b in ld1]])
    return out


def knn_prog(torch, init):
    rng = np.random.RandomState(42)
    Xtr = torch.from_numpy(rng.randn(30, 4).astype(np.float32))
    ytr = torch.from_numpy(rng.randint(0, 3, 30))
    Xte = torch.from_numpy(rng.randn(10, 4).astype(np.float32))
    out = []
    for k in (1, 3, 5):
        d = torch.cdist(Xte, Xtr)
        dist, idx = d.topk(k, largest=False)
        votes = ytr[idx]
        pred = torch.mode(votes, dim=1).values
        counts = torch.zeros(10, 3, dtype=torch.long).scatter_add_(1, votes, torch.ones_like(votes))
        wpred = torch.zeros(10, 3).scatter_add_(1, votes, 1.0 / (dist + 1e-6)).argmax(1)
        out.append([pred, counts, wpred, dist])
    # nearest centroid + cosine retrieval
    cent = torch.stack([Xtr[ytr == c].mean(0) for c in range(3)])
    out.append(torch.cdist(Xte, cent, p=1).argmin(1))
    sim = torch.nn.functional.normalize(Xte, dim=1) @ torch.nn.functional.normalize(Xtr, dim=1).T
    top = sim.topk(3, dim=1)
    out.append([top.values, top.indices])
    out.append(torch.nn.functional.pdist(Xte[:4]))
    bins = torch.bucketize(sim.max(1).values, torch.tensor([0.25, 0.5, 0.75]))
    out.append([bins, torch.bincount(bins, minlength=4)])
    return out


def logging_prog(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2)); init(model)
    X, = _data(torch, 43, (20, 3))
    Y = (X[:, 0] > 0).long()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    lines = []
    hist = collections.defaultdict(list)
    for ep in range(3):
        logits = model(X)
        loss = nn.functional.cross_entropy(logits, Y)
        opt.zero_grad(); loss.backward(); opt.step()
        acc = (logits.argmax(1) == Y).float().mean()
        gn = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        hist["loss"].append(loss.item()); hist["acc"].append(acc.item())
        lines.append(f"[{ep + 1:02d}/03] loss {loss:.4f} acc {acc * 100:5.1f}% |g| {gn:.3e} lr {opt.param_groups[0]['lr']:g}")
        lines.append("{:>6} {:<8.3f} {}".format(ep, loss.item(), (logits.argmax(1) == Y).sum()))
        lines.append("%5.2f %d %s" % (loss, (logits.argmax(1) == Y).sum(), acc.dtype))
    lines.append(str({k: [round(v, 4) for v in vs] for k, vs in hist.items()}))
    lines.append(str(model(X[:2]).detach()))
    lines.append(str(model[0].weight.grad.abs().max()))
    lines.append(repr(torch.stack([torch.tensor(v) for v in hist["loss"]])))
    lines.append(str(Y[:8]) + " " + str(Y.dtype) + " " + str(Y.shape))
    lines.append(str(X.mean(0, keepdim=True)) + str(X.std(0).round(decimals=2)))
    lines.append(repr(torch.tensor([[0.5, float('nan')], [1e-4, 123.0]])))
    lines.append(str(torch.tensor([1.0, 2.0]).tolist()) + str(np.array(torch.tensor([1.5, 2.5]))))
    return norm_repr(lines)


def whole_model_save_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv1d(2, 3, 3), nn.BatchNorm1d(3), nn.ReLU())
            self.head = nn.Linear(3, 1)
            self.register_buffer("scale", torch.tensor(2.0))
            self.register_buffer("cache", torch.zeros(1), persistent=False)
        def forward(self, x):
            return self.head(self.body(x).mean(-1)) * self.scale
    # pickled whole: the class must be reachable by its module-level name
    Net.__name__ = Net.__qualname__ = "SavedNet_" + torch.__name__
    globals()[Net.__name__] = Net
    m = Net(); init(m)
    x, = _data(torch, 44, (4, 2, 6))
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    buf = io.BytesIO()
    torch.save({"model": m, "opt": opt.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=False)
    m2 = ck["model"]
    out = [R(type(m2).__name__), m2(x), m(x), sorted(m2.state_dict()), sorted(dict(m2.named_buffers())), m2.training]
    opt2 = torch.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9); opt2.load_state_dict(ck["opt"])
    for _ in range(2):
        loss = m2(x).pow(2).mean(); opt2.zero_grad(); loss.backward(); opt2.step()
        out.append(loss.item())
    m2.eval()
    out.append(m2(x))
    out.append(m2.body[1].running_var)
    out.append(R(m2))
    return out


def vqvae_prog(torch, init):
    nn = torch.nn; F = nn.functional
    class VQ(nn.Module):
        def __init__(self, K=6, D=4):
            super().__init__()
            self.enc = nn.Linear(8, D); self.dec = nn.Linear(D, 8)
            self.codebook = nn.Embedding(K, D)
            self.codebook.weight.data.uniform_(-1 / K, 1 / K)
        def forward(self, x):
            z = self.enc(x)
            d = (z.pow(2).sum(1, keepdim=True) - 2 * z @ self.codebook.weight.t()
                 + self.codebook.weight.pow(2).sum(1))
            idx = d.argmin(1)
            zq = self.codebook(idx)
            commit = F.mse_loss(z, zq.detach()); cb = F.mse_loss(zq, z.detach())
            zq = z + (zq - z).detach()          # straight-through
            return self.dec(zq), idx, commit, cb
    m = VQ(); init(m)
    x, = _data(torch, 50, (16, 8))
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    out = []
    for _ in range(4):
        rec, idx, commit, cb = m(x)
        loss = F.mse_loss(rec, x) + cb + 0.25 * commit
        opt.zero_grad(); loss.backward(); opt.step()
        usage = torch.bincount(idx, minlength=6)
        probs = usage.float() / usage.sum()
        perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
        out.append([loss.item(), usage, perplexity.item()])
    out.append(m.codebook.weight)
    out.append(m.enc.weight.grad)
    return out


def crf_prog(torch, init):
    nn = torch.nn
    T, B, K = 5, 3, 4
    class CRF(nn.Module):
        def __init__(self):
            super().__init__()
            self.emit = nn.Linear(6, K)
            self.trans = nn.Parameter(torch.zeros(K, K))
            self.start = nn.Parameter(torch.zeros(K)); self.end = nn.Parameter(torch.zeros(K))
        def nll(self, x, tags, mask):
            em = self.emit(x)                            # T, B, K
            score = self.start[tags[0]] + em[0].gather(1, tags[0][:, None]).squeeze(1)
            for t in range(1, T):
                s = self.trans[tags[t - 1], tags[t]] + em[t].gather(1, tags[t][:, None]).squeeze(1)
                score = score + s * mask[t]
            last = tags.gather(0, (mask.sum(0).long() - 1)[None]).squeeze(0)
            score = score + self.end[last]
            alpha = self.start + em[0]
            for t in range(1, T):
                nxt = torch.logsumexp(alpha[:, :, None] + self.trans + em[t][:, None, :], dim=1)
                alpha = torch.where(mask[t][:, None].bool(), nxt, alpha)
            logz = torch.logsumexp(alpha + self.end, dim=1)
            return (logz - score).mean()
        def viterbi(self, x, mask):
            em = self.emit(x)
            score = self.start + em[0]; hist = []
            for t in range(1, T):
                s = score[:, :, None] + self.trans + em[t][:, None, :]
                best, idx = s.max(1)
                score = torch.where(mask[t][:, None].bool(), best, score)
                hist.append(idx)
            score = score + self.end
            best_last = score.argmax(1)
            paths = []
            lens = mask.sum(0).long()
            for b in range(B):
                tag = best_last[b].item(); path = [tag]
                for h in reversed(hist[:lens[b] - 1]):
                    tag = h[b, tag].item(); path.append(tag)
                paths.append(path[::-1])
            return score.max(1).values, paths
    m = CRF(); init(m)
    rng = np.random.RandomState(51)
    x = torch.from_numpy(rng.randn(T, B, 6).astype(np.float32))
    tags = torch.from_numpy(rng.randint(0, K, (T, B)))
    mask = torch.tensor([[1, 1, 1], [1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 0, 0]], dtype=torch.float32)
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    out = []
    for _ in range(4):
        loss = m.nll(x, tags, mask)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    with torch.no_grad():
        out.append(m.viterbi(x, mask))
    out.append(m.trans)
    return out


def transe_prog(torch, init):
    nn = torch.nn; F = nn.functional
    ne, nr, D = 10, 3, 5
    ent = nn.Embedding(ne, D, max_norm=1.0); rel = nn.Embedding(nr, D); init(ent, rel)
    rng = np.random.RandomState(52)
    triples = torch.from_numpy(rng.randint(0, [ne, nr, ne], (12, 3)))
    corrupt = torch.from_numpy(rng.randint(0, ne, 12))
    opt = torch.optim.SGD(list(ent.parameters()) + list(rel.parameters()), lr=0.05)
    loss_fn = nn.MarginRankingLoss(margin=1.0)
    out = []
    for ep in range(4):
        h, r, t = triples.unbind(1)
        pos = (ent(h) + rel(r) - ent(t)).norm(p=1, dim=1)
        neg = (ent(corrupt) + rel(r) - ent(t)).norm(p=1, dim=1)
        loss = loss_fn(neg, pos, torch.ones(12))
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(ent.weight.norm(dim=1))
    with torch.no_grad():
        h, r, t = triples[:4].unbind(1)
        scores = (ent(h)[:, None] + rel(r)[:, None] - ent.weight[None]).norm(p=1, dim=2)
        ranks = (scores < scores.gather(1, t[:, None])).sum(1) + 1
        out.append([ranks, (1.0 / ranks.float()).mean(), (ranks <= 3).float().mean()])
    out.append(F.triplet_margin_loss(ent(h), ent(t), ent(corrupt[:4]), margin=0.5, p=2))
    out.append(F.cosine_embedding_loss(ent(h), ent(t), torch.tensor([1, -1, 1, -1]), margin=0.1))
    return out


def recsys_prog(torch, init):
    nn = torch.nn
    nu, ni, D = 8, 10, 4
    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.u = nn.Embedding(nu, D, sparse=True); self.i = nn.Embedding(ni, D, sparse=True)
            self.ub = nn.Embedding(nu, 1, sparse=True); self.ib = nn.Embedding(ni, 1, sparse=True)
            self.mu = nn.Parameter(torch.tensor(3.0))
        def forward(self, u, i):
            return (self.u(u) * self.i(i)).sum(1) + self.ub(u).squeeze(1) + self.ib(i).squeeze(1) + self.mu
    m = MF(); init(m)
    rng = np.random.RandomState(53)
    u = torch.from_numpy(rng.randint(0, nu, 24)); i = torch.from_numpy(rng.randint(0, ni, 24))
    r = torch.from_numpy(rng.randint(1, 6, 24).astype(np.float32))
    sparse_params = [p for n, p in m.named_parameters() if n != "mu"]
    opt_s = torch.optim.SparseAdam(sparse_params, lr=0.05)
    opt_d = torch.optim.Adagrad([m.mu], lr=0.1, lr_decay=0.01)
    out = []
    for ep in range(4):
        for b in range(0, 24, 8):
            pred = m(u[b:b + 8], i[b:b + 8])
            loss = nn.functional.mse_loss(pred, r[b:b + 8])
            opt_s.zero_grad(); opt_d.zero_grad(); loss.backward()
            if ep == 0 and b == 0:
                g = m.u.weight.grad
                out.append([g.is_sparse, g.coalesce().indices(), g.coalesce().values()])
            opt_s.step(); opt_d.step()
        out.append(loss.item())
    with torch.no_grad():
        full = m.u.weight @ m.i.weight.t() + m.ub.weight + m.ib.weight.t() + m.mu
        top = full.topk(3, dim=1).indices
    out.append([full, top, m.mu])
    out.append(sorted(opt_s.state_dict()["state"][0]))
    out.append(opt_d.state_dict()["state"][0]["step"])
    return out


def bucket_lstm_prog(torch, init):
    nn = torch.nn; U = nn.utils.rnn; D = torch.utils.data
    rng = np.random.RandomState(54)
    lens = rng.randint(2, 7, 14)
    seqs = [torch.from_numpy(rng.randint(1, 9, n)) for n in lens]
    labels = torch.from_numpy(rng.randint(0, 2, 14))
    class DS(D.Dataset):
        def __len__(self): return 14
        def __getitem__(self, k): return seqs[k], labels[k]
    def collate(batch):
        xs, ys = zip(*batch)
        lengths = torch.tensor([len(s) for s in xs])
        return U.pad_sequence(list(xs), batch_first=True), lengths, torch.stack(ys)
    order = sorted(range(14), key=lambda k: lens[k])
    batches = [order[k:k + 4] for k in range(0, 14, 4)]
    dl = D.DataLoader(DS(), batch_sampler=batches, collate_fn=collate)
    class Cls(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(9, 5, padding_idx=0)
            self.lstm = nn.LSTM(5, 6, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(12, 2)
        def forward(self, x, lengths):
            packed = U.pack_padded_sequence(self.emb(x), lengths, batch_first=True, enforce_sorted=False)
            o, (h, c) = self.lstm(packed)
            o, _ = U.pad_packed_sequence(o, batch_first=True)
            mask = (torch.arange(o.size(1))[None] < lengths[:, None]).unsqueeze(-1)
            pooled = (o * mask).sum(1) / lengths[:, None]
            return self.fc(pooled), torch.cat([h[0], h[1]], -1)
    m = Cls(); init(m)
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    out = []
    for ep in range(2):
        for x, l, y in dl:
            logits, hcat = m(x, l)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad(); loss.backward(); opt.step()
            out.append([loss.item(), x.shape, hcat.shape])
    out.append(m.emb.weight[0])
    out.append(m.lstm.weight_hh_l0_reverse)
    return out


def sac_prog(torch, init):
    nn = torch.nn; D = torch.distributions; T = D.transforms
    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU())
            self.mu = nn.Linear(16, 2); self.log_std = nn.Linear(16, 2)
        def dist(self, s):
            h = self.net(s)
            log_std = self.log_std(h).clamp(-5, 2)
            base = D.Normal(self.mu(h), log_std.exp())
            return D.TransformedDistribution(base, [T.TanhTransform(cache_size=1), T.AffineTransform(0.0, 2.0)])
    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
        def forward(self, s, a):
            return self.q(torch.cat([s, a], -1)).squeeze(-1)
    actor, q1, q2 = Actor(), Critic(), Critic(); init(actor, q1, q2)
    import copy
    q1_t, q2_t = copy.deepcopy(q1), copy.deepcopy(q2)
    log_alpha = torch.zeros(1, requires_grad=True)
    opt_a = torch.optim.Adam(actor.parameters(), lr=3e-3)
    opt_q = torch.optim.Adam(list(q1.parameters()) + list(q2.parameters()), lr=3e-3)
    opt_al = torch.optim.Adam([log_alpha], lr=3e-3)
    rng = np.random.RandomState(60)
    out = []
    for it in range(3):
        s = torch.from_numpy(rng.randn(8, 3).astype(np.float32))
        a = torch.from_numpy(np.tanh(rng.randn(8, 2)).astype(np.float32) * 1.9)
        r = torch.from_numpy(rng.randn(8).astype(np.float32))
        s2 = torch.from_numpy(rng.randn(8, 3).astype(np.float32))
        done = torch.from_numpy((rng.rand(8) < 0.2).astype(np.float32))
        a2 = torch.from_numpy(np.tanh(rng.randn(8, 2)).astype(np.float32) * 1.9)   # stands for a sample
        with torch.no_grad():
            lp2 = actor.dist(s2).log_prob(a2).sum(-1)
            target = r + 0.99 * (1 - done) * (torch.min(q1_t(s2, a2), q2_t(s2, a2)) - log_alpha.exp() * lp2)
        lq = nn.functional.mse_loss(q1(s, a), target) + nn.functional.mse_loss(q2(s, a), target)
        opt_q.zero_grad(); lq.backward(); opt_q.step()
        dist = actor.dist(s)
        lp = dist.log_prob(a).sum(-1)
        la = (log_alpha.exp().detach() * lp - torch.min(q1(s, a), q2(s, a)).detach() * lp.exp().clamp(max=10)).mean()
        opt_a.zero_grad(); la.backward(); opt_a.step()
        lal = -(log_alpha * (lp.detach() - 2.0)).mean()
        opt_al.zero_grad(); lal.backward(); opt_al.step()
        with torch.no_grad():
            for p, pt in zip(list(q1.parameters()) + list(q2.parameters()), list(q1_t.parameters()) + list(q2_t.parameters())):
                pt.mul_(0.995).add_(p, alpha=0.005)
        out.append([lq.item(), la.item(), lal.item(), log_alpha.item(), lp.detach()])
    out.append(q1_t.q[0].weight)
    out.append([dist.batch_shape, dist.event_shape, R(dist.support)])
    return out


def gmm_em_prog(torch, init):
    D = torch.distributions
    rng = np.random.RandomState(61)
    X = torch.from_numpy(np.concatenate([rng.randn(20, 2) + [3, 0], rng.randn(20, 2) * 0.5 - [2, 1]]))
    K = 2
    mu = X[[0, 25]].clone(); cov = torch.eye(2, dtype=torch.float64).repeat(K, 1, 1); pi = torch.full((K,), 0.5, dtype=torch.float64)
    out = []
    for it in range(5):
        comp = D.MultivariateNormal(mu, covariance_matrix=cov)
        logp = comp.log_prob(X[:, None, :]) + pi.log()
        ll = torch.logsumexp(logp, 1)
        resp = (logp - ll[:, None]).exp()
        Nk = resp.sum(0)
        pi = Nk / X.size(0)
        mu = (resp.T @ X) / Nk[:, None]
        diff = X[:, None, :] - mu
        cov = torch.einsum("nk,nki,nkj->kij", resp, diff, diff) / Nk[:, None, None] + 1e-6 * torch.eye(2, dtype=torch.float64)
        out.append(ll.sum().item())
    out += [mu, cov, pi, resp.argmax(1)]
    mix = D.MixtureSameFamily(D.Categorical(probs=pi), D.MultivariateNormal(mu, covariance_matrix=cov))
    out.append(mix.log_prob(X[:5]))
    out.append([mix.mean, mix.variance])
    return out


def group_sched_prog(torch, init):
    nn = torch.nn; S = torch.optim.lr_scheduler
    backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU()); head = nn.Linear(8, 2); init(backbone, head)
    decay, no_decay = [], []
    for n, p in list(backbone.named_parameters()) + list(head.named_parameters()):
        (no_decay if n.endswith("bias") else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0, "lr": 2e-3}], lr=1e-2)
    warm = 3; total = 10
    sched = S.LambdaLR(opt, lr_lambda=[lambda s: min(1.0, (s + 1) / warm), lambda s: max(0.0, 1 - s / total)])
    x, = _data(torch, 62, (16, 4)); y = (x.sum(1) > 0).long()
    out = []
    for step in range(total):
        loss = nn.functional.cross_entropy(head(backbone(x)), y)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        out.append([round(loss.item(), 6)] + sched.get_last_lr())
    out.append([len(g["params"]) for g in opt.param_groups])
    out.append(head.bias)
    # freeze the backbone mid-run: its group keeps its state
    for p in backbone.parameters():
        p.requires_grad_(False)
    for _ in range(2):
        loss = nn.functional.cross_entropy(head(backbone(x)), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append([backbone[0].weight.grad is None, sorted(len(s) for s in opt.state.values())])
    return out


def fx_functional_prog(torch, init):
    nn = torch.nn; F = nn.functional; fx = torch.fx
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 3, 3, padding=1); self.fc = nn.Linear(12, 4)
        def forward(self, x, y):
            h = F.leaky_relu(self.conv(x), 0.2)
            h = F.max_pool2d(h, 2)
            h = F.dropout(h.flatten(1), p=0.1, training=self.training)
            logits = self.fc(F.relu(h)) + F.tanh(h[:, :4]) * F.sigmoid(h[:, 4:8])
            return F.cross_entropy(logits, y, label_smoothing=0.05), F.softmax(logits, dim=-1)
    m = Net(); init(m); m.eval()
    x, = _data(torch, 63, (2, 1, 4, 4)); y = torch.tensor([1, 3])
    gm = fx.symbolic_trace(m)
    out = [gm(x, y), m(x, y), R(gm.code), R(gm.print_readable(print_output=False))]
    out.append([(n.name, n.op, R(n.args), R(n.kwargs)) for n in gm.graph.nodes if n.op in ("call_function", "call_method")])
    # a pass keyed on the recorded keywords: turn every in-place-capable activation in place
    for n in gm.graph.nodes:
        if n.op == "call_function" and "inplace" in n.kwargs:
            n.kwargs = {**n.kwargs, "inplace": True}
    gm.recompile()
    out.append(gm(x, y))
    out.append(sorted(n.name for n in gm.graph.nodes if n.kwargs.get("inplace")))
    return out


def fx_optimization_prog(torch, init):
    import importlib
    nn = torch.nn
    O = importlib.import_module(torch.__name__ + ".fx.experimental.optimization")
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                          nn.Identity(),
                                          nn.Conv2d(4, 4, 3, groups=2), nn.BatchNorm2d(4))
            self.drop = nn.Dropout(0.3)
            self.fc = nn.Linear(4, 3); self.bn = nn.BatchNorm1d(3)
        def forward(self, x):
            h = self.features(x).mean((2, 3))
            return self.bn(self.fc(self.drop(h)))
    m = Net(); init(m)
    x, = _data(torch, 64, (6, 2, 5, 5))
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    torch.manual_seed(0)
    m.drop.p = 0.0
    for _ in range(3):
        loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    m.eval()
    fused = O.fuse(m)
    out = [fused(x), m(x), [n.target for n in fused.graph.nodes if n.op == "call_module"],
           R(type(getattr(fused.features, "0")).__name__), getattr(fused.features, "0").weight, fused.fc.bias]
    out.append(sorted(fused.state_dict()))
    nodrop = O.remove_dropout(m)
    out.append([nodrop(x), [n.target for n in nodrop.graph.nodes if n.op == "call_module"]])
    gm = torch.fx.symbolic_trace(m)
    nodes = [n for n in gm.graph.nodes if n.op == "call_module" and n.target.startswith("features")]
    sub = O.extract_subgraph(gm, nodes, [nodes[0].args[0]], [nodes[-1]])
    out.append([sub(x), m.features(x)])
    out.append(O.matches_module_pattern((nn.Linear, nn.BatchNorm1d), [n for n in gm.graph.nodes if n.target == "bn"][0], dict(gm.named_modules())))
    return out


def split_stages_prog(torch, init):
    import importlib
    nn = torch.nn
    SM = importlib.import_module(torch.__name__ + ".fx.passes.split_module")
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(6, 8)
            self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 8), nn.GELU()) for _ in range(4)])
            self.head = nn.Linear(8, 3)
            self.scale = nn.Parameter(torch.ones(8))
        def forward(self, x):
            h = self.embed(x) * self.scale
            for b in self.blocks:
                h = h + b(h)
            return self.head(h)
    m = Net(); init(m)
    gm = torch.fx.symbolic_trace(m)
    # two pipeline stages: everything up to blocks.1 on stage 0
    stage = [0]
    def split(n):
        if n.op == "call_module" and n.target.startswith("blocks.2"):
            stage[0] = 1
        return stage[0]
    qm = {}
    sp = SM.split_module(gm, m, split, qualname_map=qm)
    x, = _data(torch, 65, (5, 6)); y = torch.arange(5) % 3
    out = [sp(x), m(x), R(sp.code), R(sp.submod_0.code), R(sp.submod_1.code), sorted(qm.items()),
           sorted(sp.meta["partition_names"]), sorted(n for n, _ in sp.named_children())]
    # the stages' signatures, then training through the split module
    import inspect
    out.append([list(inspect.signature(sp.submod_0.forward).parameters),
                list(inspect.signature(sp.submod_1.forward).parameters)])
    opt = torch.optim.Adam(sp.parameters(), lr=1e-2)
    for _ in range(3):
        loss = nn.functional.cross_entropy(sp(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(m.head.weight)       # the stages share the original parameters
    return out


def fx_pass_manager_prog(torch, init):
    import importlib
    import operator
    nn = torch.nn; fx = torch.fx
    base = importlib.import_module(torch.__name__ + ".fx.passes.infra.pass_base")
    mgr = importlib.import_module(torch.__name__ + ".fx.passes.infra.pass_manager")
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 4); self.l2 = nn.Linear(4, 2)
        def forward(self, x):
            h = torch.add(self.l1(x), 0.0)
            h = torch.mul(h, 1.0)
            h = torch.relu(h)
            return self.l2(h * 1.0)
    m = Net(); init(m)
    x, = _data(torch, 66, (3, 4))
    log = []
    class DropIdentities(base.PassBase):
        """x + 0, x * 1 -> x"""
        def call(self, gm):
            changed = False
            for n in list(gm.graph.nodes):
                if n.op == "call_function" and n.target in (torch.add, torch.mul, operator.mul) and \
                        n.args[1] == (0.0 if n.target is torch.add else 1.0):
                    n.replace_all_uses_with(n.args[0]); gm.graph.erase_node(n); changed = True
            log.append(("drop", changed))
            return base.PassResult(gm, changed)
        def requires(self, gm):
            log.append("requires")
        def ensures(self, gm):
            gm.graph.lint(); log.append("ensures")
    def relu_to_tanh(gm):
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target is torch.relu:
                n.target = torch.tanh
        log.append("tanh")
    drop = DropIdentities()
    wrapped = mgr.pass_result_wrapper(relu_to_tanh)
    pm = mgr.PassManager([wrapped, drop], constraints=[mgr.this_before_that_pass_constraint(drop, wrapped)], steps=3,
                         run_checks_after_each_pass=True)
    pm.add_checks(lambda mod: log.append(("check", type(mod).__name__ == "GraphModule" or R(type(mod).__name__))))
    gm = fx.symbolic_trace(m)
    res = pm(gm)
    out = [res.modified, [type(p).__name__ if not hasattr(p, "__wrapped__") else p.__name__ for p in pm.passes], log,
           res.graph_module(x), nn.functional.linear(torch.tanh(m.l1(x)), m.l2.weight, m.l2.bias),
           R(res.graph_module.code), isinstance(res, tuple), res._fields]
    try:
        mgr.PassManager([drop, wrapped], constraints=[mgr.this_before_that_pass_constraint(wrapped, drop)]).validate_constraints()
    except RuntimeError as e:
        out.append(type(e).__name__)
    def bad(gm):
        return 3
    try:
        mgr.PassManager([bad])(fx.symbolic_trace(m))
    except Exception as e:
        out.append([type(e).__name__, type(e.__cause__).__name__])
    # torch.fx.annotate: the annotation shows in the generated code
    A = importlib.import_module(torch.__name__ + ".fx.annotate")
    def scaled(x, n):
        n = A.annotate(n, int)
        return A.annotate(x * n, torch.Tensor) + 1
    g = fx.symbolic_trace(scaled)
    out += [R(g.code), g(x, 3), [R(nd.type) for nd in g.graph.nodes]]
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
