"""Small training programs written once against ``torch`` and run under torch and under
ptcore (same initial weights, same data), comparing what they print and return: the
training infrastructure around a model (module hooks, parametrize / prune / rnn utils /
functional_call / fusion, every lr scheduler and their state dicts, optimizer resume and
hooks, swa_utils, LBFGS, SparseAdam, CPU autocast with GradScaler, checkpointing,
save/load, module containers, data utilities, logging idioms)."""
import collections
import contextlib
import copy
import importlib
import io
import math

import pytest

import ptcore
from program_pairs import assert_close, run_pair

torch = pytest.importorskip("torch")


def _norm(o):
    """Reprs say ``ptcore.`` where torch's say ``torch.`` (accepted); None as text."""
    if isinstance(o, str):
        return o.replace("ptcore", "torch")
    if isinstance(o, dict):
        return {k: _norm(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return type(o)(_norm(v) for v in o)
    return "None" if o is None else o


def _check(prog, **kw):
    got, want = run_pair(prog, torch, **kw)
    assert_close(_norm(got), _norm(want))

def hooks_prog(torch, init):
    nn = torch.nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    init(m)
    log = []
    feats = {}
    def pre(mod, args, kwargs):
        log.append(("pre", type(mod).__name__, len(args), sorted(kwargs)))
        return None
    def fwd(mod, args, kwargs, out):
        log.append(("fwd", tuple(out.shape)))
        return out * 2
    h1 = m[0].register_forward_pre_hook(pre, with_kwargs=True)
    h2 = m[0].register_forward_hook(fwd, with_kwargs=True, always_call=True)
    h3 = m[1].register_forward_hook(lambda mod, i, o: feats.__setitem__("relu", o.detach()))
    bw = []
    def bhook(mod, gin, gout):
        bw.append(("bh", [None if g is None else tuple(g.shape) for g in gin], [tuple(g.shape) for g in gout]))
        return tuple(None if g is None else g * 0.5 for g in gin)
    def bpre(mod, gout):
        bw.append(("bpre", [tuple(g.shape) for g in gout]))
        return (gout[0] * 3,)
    h4 = m[2].register_full_backward_hook(bhook)
    h5 = m[2].register_full_backward_pre_hook(bpre)
    x = torch.tensor([[0.1, -0.2, 0.3, 0.4], [1.0, 2.0, -3.0, 0.5]], requires_grad=True)
    xh = x.register_hook(lambda g: g + 1)
    out = m(x)
    loss = out.pow(2).sum()
    loss.backward()
    r = [out.detach(), x.grad.clone(), m[0].weight.grad.clone(), feats["relu"], str(log), str(bw)]
    for h in (h1, h2, h3, h4, h5, xh):
        h.remove()
    m.zero_grad()
    x.grad = None
    out2 = m(x)
    out2.sum().backward()
    r += [out2.detach(), x.grad.clone(), len(log), len(bw)]
    # global hooks
    g = []
    gh = torch.nn.modules.module.register_module_forward_hook(lambda mod, i, o: g.append(type(mod).__name__))
    m(x)
    gh.remove()
    m(x)
    r.append(str(g))
    # always_call on exception
    calls = []
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    b = Boom()
    b.register_forward_hook(lambda mod, i, o: calls.append("called"), always_call=True)
    try:
        b(x)
    except ValueError:
        calls.append("raised")
    r.append(str(calls))
    # state_dict hooks
    sd_calls = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: sd_calls.append(prefix))
    sd = m.state_dict(prefix="model.")
    r.append(str(list(sd)))
    r.append(str(sd_calls))
    return r


def param_prog(torch, init):
    nn = torch.nn
    P = nn.utils.parametrize
    class Sym(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    init(lin)
    P.register_parametrization(lin, "weight", Sym())
    r = [str(list(lin.state_dict())), str([n for n, _ in lin.named_parameters()]), P.is_parametrized(lin), P.is_parametrized(lin, "bias"), type(lin).__name__]
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    r.append(lin(x).detach())
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad(); l = lin(x).pow(2).sum(); l.backward(); opt.step()
    r.append(lin.weight.detach())
    with P.cached():
        a = lin.weight; b = lin.weight
        r.append(a is b)
    lin.weight = torch.eye(4)
    r.append(lin.parametrizations.weight.original.detach())
    P.remove_parametrizations(lin, "weight", leave_parametrized=True)
    r.append(str(list(lin.state_dict())))
    r.append(type(lin).__name__)
    # orthogonal
    ol = nn.Linear(3, 3)
    init(ol)
    nn.utils.parametrizations.orthogonal(ol)
    W = ol.weight
    r.append((W @ W.T).detach())
    r.append(str(list(ol.state_dict())))
    # spectral norm new
    sl = nn.Linear(5, 3)
    init(sl)
    nn.utils.parametrizations.spectral_norm(sl)
    r.append(str(sorted(sl.state_dict())))
    # weight norm new
    wl = nn.Linear(5, 3)
    init(wl)
    nn.utils.parametrizations.weight_norm(wl)
    r.append(str(sorted(wl.state_dict())))
    r.append(wl.parametrizations.weight.original0.detach())
    r.append(wl(torch.ones(2, 5)).detach())
    # old weight_norm
    wl2 = nn.Linear(5, 3)
    init(wl2)
    wl2 = nn.utils.weight_norm(wl2, name="weight", dim=0)
    r.append(str(sorted(wl2.state_dict())))
    r.append(wl2.weight_g.detach())
    r.append(wl2(torch.ones(2, 5)).detach())
    nn.utils.remove_weight_norm(wl2)
    r.append(str(sorted(wl2.state_dict())))
    # old spectral_norm
    sl2 = nn.Linear(5, 3)
    init(sl2)
    sl2 = nn.utils.spectral_norm(sl2)
    r.append(str(sorted(sl2.state_dict())))
    return r


def prune_prog(torch, init):
    nn = torch.nn
    import importlib; prune = importlib.import_module(torch.__name__ + ".nn.utils.prune")
    m = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
    init(m)
    prune.l1_unstructured(m[0], name="weight", amount=0.3)
    r = [str(sorted(m.state_dict())), m[0].weight_mask.clone(), str([n for n, _ in m.named_parameters()])]
    r.append(str(sorted(m[0]._forward_pre_hooks.keys().__len__() for _ in [0])))
    prune.global_unstructured([(m[0], "bias"), (m[2], "weight")], pruning_method=prune.L1Unstructured, amount=4)
    r.append(m[2].weight_mask.clone()); r.append(m[0].bias_mask.clone())
    prune.random_unstructured(m[2], "bias", amount=0.0)
    prune.ln_structured(m[0], "weight", amount=0.4, n=2, dim=0)
    r.append(m[0].weight_mask.clone())
    x = torch.linspace(-1, 1, 12).reshape(2, 6)
    r.append(m(x).detach())
    r.append(prune.is_pruned(m))
    prune.remove(m[0], "weight")
    r.append(str(sorted(m.state_dict())))
    r.append(m[0].weight.detach())
    return r


def rnn_utils_prog(torch, init):
    nn = torch.nn
    U = nn.utils.rnn
    seqs = [torch.arange(1., 4.), torch.arange(4., 9.), torch.arange(9., 11.)]
    r = [U.pad_sequence(seqs, batch_first=True), U.pad_sequence(seqs, padding_value=-1.0)]
    r.append(U.pad_sequence(seqs, batch_first=True, padding_side="left"))
    lengths = torch.tensor([3, 5, 2])
    padded = U.pad_sequence([s.unsqueeze(-1) for s in seqs], batch_first=True)
    packed = U.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    r += [packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices]
    lstm = nn.LSTM(1, 3, batch_first=True)
    init(lstm)
    out, (h, c) = lstm(packed)
    o, l = U.pad_packed_sequence(out, batch_first=True, total_length=6)
    r += [o.detach(), l, h.detach(), c.detach()]
    r.append([t.detach() for t in U.unpad_sequence(o, l, batch_first=True)])
    ps = U.pack_sequence(seqs, enforce_sorted=False)
    r.append([t for t in U.unpack_sequence(ps)])
    gru = nn.GRU(1, 2, num_layers=2, bidirectional=True)
    init(gru)
    pk = U.pack_padded_sequence(padded.transpose(0, 1), lengths, enforce_sorted=False)
    o2, h2 = gru(pk)
    o2p, l2 = U.pad_packed_sequence(o2)
    r += [o2p.detach(), h2.detach()]
    (o2p.sum() + h2.sum()).backward()
    r.append(gru.weight_ih_l0.grad)
    r.append(str(type(packed).__name__))
    r.append(str(packed._fields if hasattr(packed, "_fields") else None))
    return r


def fcall_prog(torch, init):
    nn = torch.nn
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.out = nn.Linear(3, 5, bias=False)
            self.out.weight = self.emb.weight
        def forward(self, i):
            return self.out(self.emb(i))
    m = Tied()
    init(m)
    i = torch.tensor([0, 2, 4])
    new_w = torch.ones(5, 3) * 0.1
    functional_call = torch.func.functional_call
    a = functional_call(m, {"emb.weight": new_w}, (i,))
    b = torch.nn.utils.stateless.functional_call(m, {"emb.weight": new_w}, (i,), tie_weights=True)
    c = functional_call(m, ({"emb.weight": new_w}, {}), (i,), strict=False)
    r = [a.detach(), b.detach(), c.detach(), m(i).detach()]
    params = dict(m.named_parameters())
    r.append(str(list(params)))
    r.append(str(list(m.state_dict())))
    r.append(str([n for n, _ in m.named_parameters(remove_duplicate=False)]))
    try:
        functional_call(m, {"emb.weight": new_w, "out.weight": new_w * 2}, (i,))
        r.append("noerr")
    except ValueError as e:
        r.append("ValueError")
    # grad through functional_call
    grad = torch.func.grad
    def loss(p, i):
        return functional_call(m, p, (i,)).sum()
    g = grad(loss)({k: v.detach() for k, v in m.named_parameters()}, i)
    r.append({k: v for k, v in g.items()})
    return r


def fusion_prog(torch, init):
    nn = torch.nn
    conv = nn.Conv2d(2, 3, 3, padding=1)
    bn = nn.BatchNorm2d(3)
    init(conv, bn)
    x = torch.linspace(-1, 1, 2*2*4*4).reshape(2, 2, 4, 4)
    bn.train(); bn(conv(x)); bn(conv(x * 2))
    conv.eval(); bn.eval()
    f = nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
    r = [bn(conv(x)).detach(), f(x).detach(), type(f).__name__]
    lin = nn.Linear(3, 4); bn1 = nn.BatchNorm1d(4)
    init(lin, bn1)
    bn1.running_mean.fill_(0.3); bn1.running_var.fill_(2.0)
    lin.eval(); bn1.eval()
    fl = nn.utils.fusion.fuse_linear_bn_eval(lin, bn1)
    xx = torch.ones(2, 3)
    r += [bn1(lin(xx)).detach(), fl(xx).detach()]
    v = nn.utils.parameters_to_vector(conv.parameters())
    r.append(v.detach())
    nn.utils.vector_to_parameters(v * 2, conv.parameters())
    r.append(conv.weight.detach())
    conv.train()
    y = conv(x).sum(); y.backward()
    r.append(str(nn.utils.clip_grad_value_(conv.parameters(), 0.5)))
    r.append(conv.weight.grad.clone())
    y = conv(x).sum(); y.backward()
    n = nn.utils.clip_grad_norm_(conv.parameters(), 1.0, norm_type=2.0)
    r.append(n)
    r.append(conv.bias.grad.clone())
    y = conv(x).sum(); y.backward()
    grads = [p.grad for p in conv.parameters()]
    tn = nn.utils.get_total_norm(grads, norm_type=3.0)
    r.append(tn)
    nn.utils.clip_grads_with_norm_(conv.parameters(), 2.0, tn)
    r.append(conv.bias.grad.clone())
    r.append(nn.utils.clip_grad_norm_(conv.parameters(), 1.0, norm_type="inf"))
    return r


def _model(torch, init):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    init(m)
    return m


def sched_prog(torch, init):
    S = torch.optim.lr_scheduler
    m = _model(torch, init)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    r = []
    def run(opt, sched, n=12, arg=None, step_per_batch=False):
        lrs = []
        for e in range(n):
            opt.zero_grad()
            l = (m(x) - y).pow(2).mean(); l.backward(); opt.step()
            if arg == "loss":
                sched.step(l.item())
            elif arg == "frac":
                sched.step(e + 0.5)
            else:
                sched.step()
            lrs.append([g["lr"] for g in opt.param_groups])
            if "momentum" in opt.param_groups[0]:
                lrs.append([g["momentum"] for g in opt.param_groups])
            if "betas" in opt.param_groups[0]:
                lrs.append([g["betas"][0] for g in opt.param_groups])
        return lrs
    O = torch.optim
    opt = O.SGD(m.parameters(), lr=0.1, momentum=0.9)
    s1 = S.LinearLR(opt, start_factor=0.1, total_iters=3)
    s2 = S.ExponentialLR(opt, gamma=0.9)
    r.append(run(opt, S.SequentialLR(opt, [s1, s2], milestones=[3])))
    opt = O.SGD(m.parameters(), lr=0.1, momentum=0.9)
    r.append(run(opt, S.ChainedScheduler([S.StepLR(opt, 2, 0.5), S.ExponentialLR(opt, 0.95)])))
    opt = O.Adam(m.parameters(), lr=0.01)
    r.append(run(opt, S.OneCycleLR(opt, max_lr=0.1, total_steps=12, three_phase=True)))
    opt = O.SGD(m.parameters(), lr=0.01, momentum=0.9)
    r.append(run(opt, S.OneCycleLR(opt, max_lr=0.1, epochs=3, steps_per_epoch=4, anneal_strategy="linear")))
    opt = O.SGD(m.parameters(), lr=0.01, momentum=0.9)
    r.append(run(opt, S.CyclicLR(opt, 0.001, 0.1, step_size_up=2, mode="triangular2")))
    opt = O.SGD(m.parameters(), lr=0.01, momentum=0.9)
    r.append(run(opt, S.CyclicLR(opt, 0.001, 0.1, step_size_up=2, step_size_down=3, mode="exp_range", gamma=0.9)))
    opt = O.Adam(m.parameters(), lr=0.01)
    r.append(run(opt, S.CyclicLR(opt, 0.001, 0.1, step_size_up=2, cycle_momentum=False)))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001), arg="frac"))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=1)))
    for mode in ("min", "max"):
        for tm in ("rel", "abs"):
            opt = O.SGD(m.parameters(), lr=0.1)
            r.append(run(opt, S.ReduceLROnPlateau(opt, mode=mode, factor=0.5, patience=1, threshold=0.01, threshold_mode=tm, cooldown=1, min_lr=0.01), arg="loss"))
    opt = O.SGD([{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.5}], lr=0.1)
    r.append(run(opt, S.LambdaLR(opt, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.MultiplicativeLR(opt, lambda e: 0.95)))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.PolynomialLR(opt, total_iters=8, power=2.0)))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.CosineAnnealingLR(opt, T_max=5, eta_min=0.01)))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.MultiStepLR(opt, [2, 5], gamma=0.3)))
    opt = O.SGD(m.parameters(), lr=0.1)
    r.append(run(opt, S.ConstantLR(opt, factor=0.25, total_iters=4)))
    opt = O.SGD(m.parameters(), lr=0.1)
    s = S.StepLR(opt, 3)
    run(opt, s, 4)
    r.append(str(sorted(s.state_dict().items())))
    r.append(s.get_last_lr())
    r.append(str(sorted(k for k in S.OneCycleLR(opt, 1.0, total_steps=5).state_dict())))
    r.append(m[0].weight.detach())
    return r


def resume_prog(torch, init, optname="AdamW", kw={}):
    S = torch.optim.lr_scheduler
    m = _model(torch, init)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    O = getattr(torch.optim, optname)
    opt = O(m.parameters(), **kw)
    sch = S.CosineAnnealingLR(opt, 10)
    def step():
        def closure():
            opt.zero_grad(); l = (m(x) - y).pow(2).mean(); l.backward(); return l
        l = opt.step(closure); sch.step(); return float(l)
    losses = [step() for _ in range(3)]
    buf = io.BytesIO()
    torch.save({"model": m.state_dict(), "opt": opt.state_dict(), "sched": sch.state_dict(), "epoch": 3}, buf)
    r = [str(sorted(opt.state_dict()["param_groups"][0])), str(sorted(opt.state_dict()["state"].get(0, {})))]
    cont = [step() for _ in range(3)]
    buf.seek(0)
    ck = torch.load(buf, weights_only=True)
    m2 = _model(torch, lambda *a: None)
    m2.load_state_dict(ck["model"])
    m = m2
    opt = O(m.parameters(), **kw)
    opt.load_state_dict(ck["opt"])
    sch = S.CosineAnnealingLR(opt, 10)
    sch.load_state_dict(ck["sched"])
    res = [step() for _ in range(3)]
    r += [losses, cont, res, m[0].weight.detach()]
    st = opt.state_dict()["state"][0]
    r.append({k: v for k, v in st.items() if hasattr(v, "shape")})
    return r


def addgroup_prog(torch, init):
    m = _model(torch, init)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    opt = torch.optim.Adam(m[0].parameters(), lr=0.01, maximize=False, foreach=False)
    r = []
    for i in range(4):
        if i == 2:
            opt.add_param_group({"params": m[2].parameters(), "lr": 0.1, "weight_decay": 0.01})
        opt.zero_grad(set_to_none=False)
        l = (m(x) - y).pow(2).mean(); l.backward(); opt.step()
        r.append(l.item())
    r.append(str([sorted(g) for g in opt.param_groups]))
    r.append(str([(g["lr"], g["weight_decay"], g["amsgrad"]) for g in opt.param_groups]))
    opt.zero_grad(set_to_none=False)
    r.append(m[0].weight.grad)
    opt.zero_grad()
    r.append(str(m[0].weight.grad))
    # hooks
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("sdpre"))
    opt.register_state_dict_post_hook(lambda o, sd: (calls.append("sdpost"), sd)[1])
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("ldpre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("ldpost"))
    l = (m(x) - y).pow(2).mean(); l.backward(); opt.step()
    h1.remove()
    opt.step()
    opt.load_state_dict(opt.state_dict())
    r.append(str(calls))
    # maximize
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    o2 = torch.optim.SGD([p], lr=0.1, maximize=True, momentum=0.5, nesterov=True, dampening=0)
    for _ in range(3):
        o2.zero_grad(); (-(p - 3).pow(2).sum()).backward(); o2.step()
    r.append(p.detach())
    for name, kw in [("Adam", dict(maximize=True, amsgrad=True)), ("AdamW", dict(maximize=True, foreach=True)), ("RMSprop", dict(maximize=True, centered=True, momentum=0.5)), ("Adagrad", dict(maximize=True, lr_decay=0.1)), ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)), ("RAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)), ("Adamax", dict(maximize=True)), ("ASGD", dict(maximize=True)), ("Rprop", dict(maximize=True)), ("Adadelta", dict(maximize=True)), ("Adafactor", dict(maximize=True)), ("Adam", dict(differentiable=False, capturable=False, fused=None))]:
        q = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [0.5, -1.0]]))
        o = getattr(torch.optim, name)([q], lr=0.05, **kw)
        for _ in range(3):
            o.zero_grad(); (-(q - 3).pow(2).sum()).backward(); o.step()
        r.append(q.detach())
    return r


def swa_prog(torch, init):
    nn = torch.nn
    swa = torch.optim.swa_utils
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    init(m)
    ema = swa.AveragedModel(m, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9), use_buffers=True)
    sw = swa.AveragedModel(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear")
    x = torch.linspace(-1, 1, 24).reshape(8, 3); y = torch.linspace(0, 1, 8).reshape(8, 1)
    r = []
    for e in range(5):
        opt.zero_grad(); l = (m(x) - y).pow(2).mean(); l.backward(); opt.step()
        ema.update_parameters(m); sw.update_parameters(m); sched.step()
        r.append(opt.param_groups[0]["lr"])
    loader = [x[:4], x[4:]]
    swa.update_bn(loader, sw)
    r.append(str(list(sw.state_dict())))
    r.append(str(list(ema.state_dict())))
    r.append({k: v for k, v in sw.state_dict().items()})
    r.append({k: v for k, v in ema.state_dict().items()})
    sw.eval()
    r.append(sw(x).detach())
    r.append(sw.n_averaged)
    ema2 = swa.AveragedModel(m, avg_fn=swa.get_ema_avg_fn(0.8))
    ema2.update_parameters(m); ema2.update_parameters(m)
    r.append({k: v for k, v in ema2.state_dict().items()})
    return r


def lbfgs_prog(torch, init, ls=None):
    m = _model(torch, init)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    opt = torch.optim.LBFGS(m.parameters(), lr=1, max_iter=5, history_size=4, line_search_fn=ls)
    r = []
    for _ in range(3):
        def closure():
            opt.zero_grad(); l = (m(x) - y).pow(2).mean(); l.backward(); return l
        r.append(float(opt.step(closure)))
    r.append(m[0].weight.detach())
    st = opt.state_dict()["state"][0]
    r.append(str(sorted(st)))
    r.append(st["func_evals"]); r.append(st["n_iter"])
    return r


def sparse_prog(torch, init):
    nn = torch.nn
    emb = nn.Embedding(10, 3, sparse=True)
    lin = nn.Linear(3, 1)
    init(emb, lin)
    o1 = torch.optim.SparseAdam(list(emb.parameters()), lr=0.05)
    o2 = torch.optim.Adam(lin.parameters(), lr=0.05)
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    r = []
    for _ in range(4):
        o1.zero_grad(); o2.zero_grad()
        l = lin(emb(idx)).pow(2).mean(); l.backward()
        r.append(emb.weight.grad.is_sparse)
        o1.step(); o2.step(); r.append(l.item())
    r.append(emb.weight.detach())
    e2 = nn.EmbeddingBag(10, 3, mode="sum", sparse=True); init(e2)
    o3 = torch.optim.SGD(e2.parameters(), lr=0.1)
    e2(idx).sum().backward(); o3.step()
    r.append(e2.weight.detach())
    return r


def amp_prog(torch, init):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    init(m)
    x = torch.linspace(-1, 1, 20).reshape(5, 4); y = torch.tensor([0, 1, 2, 1, 0])
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.**8, growth_interval=2)
    r = []
    for i in range(4):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = m(x)
            r.append(str(out.dtype))
            loss = nn.functional.cross_entropy(out, y)
            r.append(str(loss.dtype))
            s = torch.softmax(out, 1); r.append(str(s.dtype))
            mm = x @ x.T; r.append(str(mm.dtype))
            a = x + 1; r.append(str(a.dtype))
            ex = torch.exp(out); r.append(str(ex.dtype))
            ls = torch.log_softmax(out, -1); r.append(str(ls.dtype))
            ms = nn.functional.mse_loss(out.float(), torch.zeros(5, 3)); r.append(str(ms.dtype))
            bm = torch.bmm(x[None], x.T[None]); r.append(str(bm.dtype))
            st = torch.stack([out, out.float()]); r.append(str(st.dtype))
            c = torch.cat([out, out.float()]); r.append(str(c.dtype))
            ln = nn.functional.layer_norm(out, (3,)); r.append(str(ln.dtype))
            sm = out.sum(); r.append(str(sm.dtype))
            n = torch.norm(out); r.append(str(n.dtype))
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        r.append(scaler.get_scale())
        r.append(round(loss.item(), 2))
    r.append(str(sorted(scaler.state_dict().items())))
    r.append(str(m[0].weight.dtype))
    with torch.autocast(device_type="cpu", enabled=False):
        r.append(str(m(x).dtype))
    r.append(torch.is_autocast_enabled("cpu"))
    with torch.autocast("cpu"):
        r.append(torch.is_autocast_enabled("cpu"))
        r.append(str(torch.get_autocast_dtype("cpu")))
        r.append(str(m(x).dtype))
    with torch.cpu.amp.autocast():
        r.append(str(m(x).dtype))
    class F(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2
        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2
    xx = x.clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        o = F.apply(m[0](xx))
        r.append(str(o.dtype))
    o.float().sum().backward()
    r.append(xx.grad)
    sc = torch.amp.GradScaler("cpu")
    r.append(sc.is_enabled())
    r.append(str(sorted(sc.state_dict())))
    return r


def ckpt_prog(torch, init):
    nn = torch.nn
    cp = torch.utils.checkpoint
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 1))
    init(m)
    x = torch.linspace(-1, 1, 20).reshape(5, 4).requires_grad_()
    r = []
    for reent in (True, False):
        m.zero_grad(); x.grad = None
        h = cp.checkpoint(m[0:2], x, use_reentrant=reent)
        h = cp.checkpoint(lambda a, b=1.0: m[2:4](a) * b, h, use_reentrant=reent, b=2.0) if not reent else cp.checkpoint(m[2:4], h, use_reentrant=reent)
        out = m[4](h).sum(); out.backward()
        r += [out.detach(), x.grad.clone(), m[0].weight.grad.clone()]
    m.zero_grad(); x.grad = None
    out = cp.checkpoint_sequential(m, 2, x, use_reentrant=False).sum(); out.backward()
    r += [out.detach(), x.grad.clone(), m[2].weight.grad.clone()]
    # gradient accumulation
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    opt.zero_grad()
    for i in range(4):
        l = m(x[i:i+1].detach()).pow(2).sum() / 4
        l.backward()
    opt.step()
    r.append(m[0].weight.detach())
    return r


def save_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.register_buffer("steps", torch.tensor(0))
            self.register_buffer("tmp", torch.zeros(2), persistent=False)
        def forward(self, x):
            return self.fc(x)
    Net.__qualname__ = Net.__name__ = "Net_" + torch.__name__
    globals()[Net.__name__] = Net
    m = Net(); init(m)
    r = []
    buf = io.BytesIO(); torch.save(m, buf); buf.seek(0)
    m2 = torch.load(buf, weights_only=False)
    r.append(type(m2).__name__[:3]); r.append(m2(torch.ones(1, 3)).detach())
    buf = io.BytesIO(); torch.save(m.state_dict(), buf); buf.seek(0)
    sd = torch.load(buf, weights_only=True, map_location="cpu")
    r.append(str(list(sd))); r.append(str(type(sd).__name__))
    r.append(str(getattr(sd, "_metadata", None)))
    res = m.load_state_dict({"fc.weight": sd["fc.weight"], "extra": torch.ones(1)}, strict=False)
    r.append(str(res.missing_keys)); r.append(str(res.unexpected_keys)); r.append(str(type(res).__name__))
    r.append(str(res))
    try:
        m.load_state_dict({"fc.weight": torch.ones(3, 3)}, strict=False)
    except RuntimeError as e:
        r.append("RuntimeError")
    try:
        m.load_state_dict({"fc.weight": sd["fc.weight"]})
    except RuntimeError as e:
        r.append("RuntimeError-strict")
    r.append(str(list(m.state_dict(prefix="net."))))
    r.append(str(list(m.state_dict(keep_vars=True))))
    r.append(str(m.state_dict(keep_vars=True)["fc.weight"].requires_grad))
    # post hook
    hooks = []
    def post(mod, incompatible):
        hooks.append((list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
        incompatible.missing_keys.clear()
    m.register_load_state_dict_post_hook(post)
    m.load_state_dict({"fc.weight": sd["fc.weight"]})
    r.append(str(hooks))
    # _load_from_state_dict override
    class Old(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(2))
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
            if prefix + "old_w" in state_dict:
                state_dict[prefix + "w"] = state_dict.pop(prefix + "old_w")
            r.append(str(sorted(local_metadata)))
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    o = nn.Sequential(Old())
    o.load_state_dict({"0.old_w": torch.ones(2)})
    r.append(o[0].w.detach())
    # safe_globals
    import collections
    Pt = collections.namedtuple("Pt", "a b")
    buf = io.BytesIO(); torch.save({"cfg": {"lr": 0.1}, "t": torch.arange(3), "sl": slice(1, 2)}, buf); buf.seek(0)
    with torch.serialization.safe_globals([slice]):
        r.append(str(torch.load(buf, weights_only=True)))
    buf = io.BytesIO(); torch.save({"opt": torch.optim.SGD(m.parameters(), lr=0.1)}, buf); buf.seek(0)
    try:
        torch.load(buf, weights_only=True)
        r.append("loaded")
    except Exception as e:
        r.append(type(e).__name__)
    buf.seek(0)
    with torch.serialization.safe_globals([torch.optim.SGD]):
        try:
            o = torch.load(buf, weights_only=True)
            r.append("loaded2")
        except Exception as e:
            r.append(type(e).__name__)
    buf.seek(0)
    r.append(type(torch.load(buf, weights_only=False)["opt"]).__name__)
    return r


def modmanip_prog(torch, init):
    nn = torch.nn
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.act = nn.ReLU()
            self.pd = nn.ParameterDict({"a": nn.Parameter(torch.ones(3)), "b": nn.Parameter(torch.zeros(3))})
            self.pl = nn.ParameterList([nn.Parameter(torch.ones(2)), torch.zeros(2)])
        def forward(self, x):
            return self.act(self.lin(x)) * self.pd["a"] + self.pd["b"] + self.pl[0].sum()
    shared = nn.Linear(3, 3)
    m = nn.ModuleDict({"b1": Block(), "b2": Block(), "s1": shared, "s2": shared})
    init(m)
    r = [str([n for n, _ in m.named_modules()]), str([n for n, _ in m.named_modules(remove_duplicate=False)])]
    r.append(str([n for n, _ in m.named_parameters()]))
    r.append(str(list(m.state_dict())))
    r.append(str(type(m.get_submodule("b1.lin")).__name__))
    m.set_submodule("b1.act", nn.Tanh())
    r.append(str(m["b1"]))
    try:
        m.get_submodule("b1.nope")
    except AttributeError as e:
        r.append("AttributeError")
    r.append(str(m.get_parameter("b1.pd.a").shape))
    counts = collections.Counter()
    m.apply(lambda mod: counts.update([type(mod).__name__]))
    r.append(str(sorted(counts.items())))
    def init_w(mod):
        if isinstance(mod, nn.Linear):
            nn.init.constant_(mod.weight, 0.1); nn.init.zeros_(mod.bias)
    m.apply(init_w)
    x = torch.linspace(-1, 1, 6).reshape(2, 3)
    r.append(m["b1"](x).detach())
    m["b3"] = nn.Identity()
    del m["b2"]
    r.append(str(list(m.keys())))
    r.append(str(m.pop("b3")))
    m.update({"z": nn.Linear(1, 1)})
    r.append(str(list(m)))
    b = m["b1"]
    b.pd["c"] = nn.Parameter(torch.full((3,), 2.0))
    b.pd.update({"d": nn.Parameter(torch.zeros(1))})
    r.append(str(list(b.pd.keys())))
    r.append(str(b.pd))
    b.pl.append(nn.Parameter(torch.ones(1)))
    b.pl.extend([nn.Parameter(torch.ones(1))])
    r.append(str(b.pl))
    r.append(len(list(b.parameters())))
    r.append(str(m))
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.insert(1, nn.ReLU())
    ml += [nn.Tanh()]
    r.append(str(ml))
    r.append(str(ml[1:3]))
    r.append(str(ml[-1]))
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq.append(nn.Linear(2, 1))
    r.append(str(seq))
    r.append(str(seq[:2]))
    seq.insert(0, nn.Identity()); r.append(str(seq))
    r.append(str(seq.pop(0)))
    r.append(sum(p.numel() for p in seq.parameters() if p.requires_grad))
    seq.requires_grad_(False); r.append(str([p.requires_grad for p in seq.parameters()]))
    r.append(str(seq.extra_repr()))
    r.append(str(m["b1"].lin.extra_repr()))
    return r


def deepcopy_prog(torch, init):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    init(m)
    x = torch.linspace(-1, 1, 18).reshape(6, 3); y = torch.linspace(0, 1, 6).reshape(6, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    r = []
    best = None
    for e in range(4):
        opt.zero_grad(); l = nn.functional.mse_loss(m(x), y); l.backward(); opt.step()
        if e == 1:
            best = copy.deepcopy(m)
            best_sd = copy.deepcopy(m.state_dict())
            best_opt = copy.deepcopy(opt.state_dict())
        r.append(l.item())
    r.append(best[0].weight.detach()); r.append(best_sd["1.running_mean"]); r.append(best_sd["1.num_batches_tracked"])
    r.append(best[0].weight.grad)
    r.append(best[0].weight is not m[0].weight)
    m.load_state_dict(best_sd); opt.load_state_dict(best_opt)
    opt.zero_grad(); l = nn.functional.mse_loss(m(x), y); l.backward(); opt.step()
    r.append(l.item())
    m2 = copy.deepcopy(m).eval()
    with torch.no_grad():
        r.append(m2(x))
    r.append(m.training)
    st = {k: v.clone() for k, v in m.state_dict().items()}
    r.append(st)
    return r


def data_prog(torch, init):
    U = torch.utils.data
    X = torch.arange(40, dtype=torch.float32).reshape(20, 2)
    Y = torch.arange(20) % 3
    ds = U.TensorDataset(X, Y)
    r = [len(ds), ds[3]]
    g = torch.Generator().manual_seed(0)
    a, b, c = U.random_split(ds, [0.5, 0.3, 0.2], generator=g)
    r.append([len(a), len(b), len(c)])
    r.append(str(type(a).__name__))
    sub = U.Subset(ds, [1, 5, 7, 9])
    r.append(sub[2])
    cat = U.ConcatDataset([sub, U.Subset(ds, [0, 2])])
    r.append(len(cat)); r.append(cat[5]); r.append(cat.cumulative_sizes)
    dl = U.DataLoader(cat, batch_size=4, shuffle=False, drop_last=False)
    r.append([batch for batch in dl])
    r.append(len(dl))
    Pt = collections.namedtuple("Pt", "x y")
    def collate(batch):
        xs, ys = zip(*batch)
        return {"x": torch.stack(xs), "y": torch.tensor(ys)}
    dl2 = U.DataLoader(sub, batch_size=3, collate_fn=collate)
    r.append([b for b in dl2])
    dc = U.default_collate([{"a": torch.ones(2), "b": 1, "c": 2.5, "d": "s", "e": (1, 2)}, {"a": torch.zeros(2), "b": 2, "c": 3.5, "d": "t", "e": (3, 4)}])
    r.append(dc)
    r.append(str({k: type(v).__name__ for k, v in dc.items()}))
    r.append(str(dc["b"].dtype)); r.append(str(dc["c"].dtype))
    dn = U.default_collate([Pt(torch.ones(1), 1), Pt(torch.ones(1) * 2, 2)])
    r.append(type(dn).__name__); r.append(list(dn))
    dnp = U.default_collate([__import__("numpy").ones(2), __import__("numpy").zeros(2)])
    r.append(str(dnp.dtype)); r.append(dnp)
    r.append(U.default_convert(__import__("numpy").arange(3)))
    bs = U.BatchSampler(U.SequentialSampler(range(10)), batch_size=3, drop_last=True)
    r.append(list(bs)); r.append(len(bs))
    class It(U.IterableDataset):
        def __iter__(self):
            for i in range(7):
                yield torch.tensor([i, i * i])
    r.append([b for b in U.DataLoader(It(), batch_size=3)])
    r.append([b for b in U.DataLoader(It(), batch_size=None)][:2])
    chain = U.ChainDataset([It(), It()])
    r.append(sum(1 for _ in chain))
    def wif(worker_id):
        r.append(("wif", worker_id))
    dl3 = U.DataLoader(ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(1), worker_init_fn=wif, num_workers=0)
    r.append(sum(len(b[0]) for b in dl3))
    r.append(str(type(dl3.sampler).__name__))
    ws = U.WeightedRandomSampler([0.1, 0.9, 0.0, 0.5], num_samples=6, replacement=True)
    r.append(len(list(ws))); r.append(2 not in list(ws))
    rs = U.RandomSampler(ds, replacement=False, num_samples=5)
    r.append(len(list(rs)))
    sr = U.SubsetRandomSampler([1, 2, 3])
    r.append(sorted(list(sr)))
    dl4 = U.DataLoader(ds, batch_size=6, sampler=U.SubsetRandomSampler(list(range(10))))
    r.append(len(dl4))
    r.append([len(b[1]) for b in dl4])
    dl5 = U.DataLoader(ds, batch_sampler=bs)
    r.append([b[1] for b in dl5])
    r.append(str(dl5.batch_size))
    return r


def log_prog(torch, init):
    nn = torch.nn
    buf = io.StringIO()
    saved = (torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
             torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.set_float32_matmul_precision("high")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    m = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    init(m)
    x = torch.linspace(-2, 2, 32).reshape(8, 4); y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    crit = nn.CrossEntropyLoss()
    @torch.no_grad()
    def evaluate():
        out = m(x)
        return (out.argmax(dim=1) == y).sum().item(), out.argmax(1).eq(y).sum(), out.argmax(1).eq(y).float().mean()
    @torch.inference_mode()
    def predict():
        return m(x).softmax(-1)
    with contextlib.redirect_stdout(buf):
        running = 0.0
        for epoch in range(3):
            opt.zero_grad(); out = m(x); loss = crit(out, y); loss.backward(); opt.step()
            running += loss.item()
            correct, c2, acc = evaluate()
            print(f"epoch {epoch} loss {loss:.4f} acc {acc:.2%} correct {correct}/{len(y)} c2={c2} {c2.item()}")
            print(f"loss={loss} {loss.item():.3e} {float(loss):8.3f} {loss:>10.2f}")
            print("loss:", loss, "acc", acc, "lr", opt.param_groups[0]["lr"])
            print("{:.3f}".format(loss), "%.3f" % loss, "%d" % c2)
        p = predict()
        print(p)
        print(p.requires_grad, torch.is_inference_mode_enabled(), p.is_inference())
        print(m[0].weight)
        print(m[0].bias.grad)
        torch.set_printoptions(precision=2, sci_mode=False)
        print(p)
        print(torch.tensor([1e-8, 1e8, 1.0]))
        torch.set_printoptions(profile="full")
        print(torch.arange(1200).reshape(2, 600)[:, :5])
        torch.set_printoptions(profile="default")
        print(torch.arange(2000.))
        torch.set_printoptions(linewidth=40, threshold=10, edgeitems=2)
        print(torch.arange(30.).reshape(3, 10))
        torch.set_printoptions(profile="default")
        print(torch.tensor([1.5, float("nan"), float("inf")]), torch.tensor([True, False]), torch.tensor(3), torch.tensor([1, 2], dtype=torch.int8))
        print(torch.zeros(2, 0), torch.tensor([], dtype=torch.int64), torch.ones(2, 2, dtype=torch.float64))
        print(torch.tensor([1.0, 2.0], requires_grad=True) * 2)
        print(torch.tensor([0.1234567, 123456.7]))
        print(torch.tensor([1+2j, 3-1j]))
        print(torch.tensor([1.0], dtype=torch.bfloat16), torch.tensor([0.5], dtype=torch.float16))
        print(m.state_dict()["0.bias"].shape, list(m.state_dict()["0.bias"].shape), m[0].weight.size(), m[0].weight.size(1))
        print(f"{torch.tensor(3)}", f"{torch.tensor(2.5):.1f}", f"{torch.tensor(7):3d}")
        print(repr(torch.tensor(0.1)), str(torch.tensor([[1]])))
        print(x.dtype, x.device, x.shape, x.numel(), x.dim())
        print(torch.randn(3).device, m[0].weight.device)
        total = sum(p.numel() for p in m.parameters())
        print(f"Total params: {total:,}")
        print(torch.__version__ is not None, hasattr(torch, "cuda"), torch.cuda.is_available(), torch.backends.mps.is_available())
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        print(dev, m.to(dev)[0].weight.device, x.to(dev, non_blocking=True).shape)
        try:
            print(f"{torch.tensor([1.0, 2.0]):.2f}")
        except Exception as e:
            print(type(e).__name__)
    (torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic, precision, det, warn,
     torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) = saved
    torch.set_float32_matmul_precision(precision)
    torch.use_deterministic_algorithms(det, warn_only=warn)
    return buf.getvalue().splitlines()


def custom_opt_prog(torch, init):
    nn = torch.nn
    class MySGD(torch.optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.9):
            if lr < 0: raise ValueError("bad lr")
            super().__init__(params, dict(lr=lr, momentum=momentum))
        def __setstate__(self, state):
            super().__setstate__(state)
            for g in self.param_groups:
                g.setdefault("momentum", 0.9)
        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None: continue
                    st = self.state[p]
                    if len(st) == 0:
                        st["buf"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                        st["step"] = 0
                    st["step"] += 1
                    st["buf"].mul_(group["momentum"]).add_(p.grad, alpha=1.0)
                    p.add_(st["buf"], alpha=-group["lr"])
            return loss
    class Halve(torch.optim.lr_scheduler.LRScheduler):     # chainable form
        def get_lr(self):
            f = 0.5 if self.last_epoch > 0 and self.last_epoch % 2 == 0 else 1.0
            return [g["lr"] * f for g in self.optimizer.param_groups]
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    init(m)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    opt = MySGD(m.parameters(), lr=0.05)
    sch = Halve(opt)
    r = [opt.param_groups[0]["lr"]]
    for e in range(6):
        def closure():
            opt.zero_grad(); l = (m(x) - y).pow(2).mean(); l.backward(); return l
        l = opt.step(closure); sch.step()
        r.append((l.item(), sch.get_last_lr()[0], sch.last_epoch))
    sd = opt.state_dict()
    r.append(str(sorted(sd["param_groups"][0])))
    r.append(sd["state"][0]["step"])
    r.append(sd["state"][0]["buf"])
    r.append(str(opt))
    opt2 = MySGD(m.parameters())
    opt2.load_state_dict(sd)
    r.append(str(sorted(opt2.param_groups[0])))
    r.append(opt2.state[m[0].weight]["buf"])
    r.append(str(sch.state_dict()))
    r.append(str(repr(torch.optim.Adam(m.parameters(), lr=0.01))))
    r.append(str(torch.optim.SGD(m.parameters(), lr=0.01)))
    try:
        MySGD(m.parameters(), lr=-1)
    except ValueError:
        r.append("VE")
    try:
        torch.optim.Adam(m.parameters(), lr=-1)
    except ValueError:
        r.append("VE2")
    try:
        torch.optim.SGD([], lr=0.1)
    except ValueError:
        r.append("VE3")
    try:
        torch.optim.SGD([{"params": m[0].parameters()}, {"params": m[0].parameters()}], lr=0.1)
    except ValueError:
        r.append("VE4")
    try:
        torch.optim.SGD(m[0].weight, lr=0.1)
    except TypeError:
        r.append("TE")
    return r


def post_acc_prog(torch, init):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    init(m)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    opts = {p: torch.optim.Adam([p], lr=0.01) for p in m.parameters()}
    order = []
    def hook(p):
        order.append(tuple(p.shape))
        opts[p].step(); opts[p].zero_grad()
    for p in m.parameters():
        p.register_post_accumulate_grad_hook(hook)
    r = []
    for _ in range(3):
        l = (m(x) - y).pow(2).mean(); l.backward(); r.append(l.item())
    r.append(str(order)); r.append(m[0].weight.detach()); r.append(str(m[0].weight.grad))
    # saved tensor hooks
    packed = []
    def pack(t):
        packed.append(tuple(t.shape)); return t.clone()
    def unpack(t):
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        l = (m(x) - y).pow(2).mean()
    for p in m.parameters():
        pass
    r.append(len(packed) > 0)
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        l2 = (m(x) - y).pow(2).mean()
    return r


def gp_prog(torch, init):
    nn = torch.nn
    D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    init(D)
    opt = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))
    real = torch.linspace(-1, 1, 16).reshape(8, 2); fake = torch.linspace(0, 2, 16).reshape(8, 2)
    r = []
    for _ in range(3):
        alpha = torch.linspace(0, 1, 8).reshape(8, 1)
        inter = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        d = D(inter)
        g = torch.autograd.grad(outputs=d, inputs=inter, grad_outputs=torch.ones_like(d), create_graph=True, retain_graph=True)[0]
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = D(fake).mean() - D(real).mean() + 10 * gp
        opt.zero_grad(); loss.backward(); opt.step()
        r.append(loss.item()); r.append(gp.item())
    r.append(D[0].weight.detach())
    # hessian-vector product
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    f = (w ** 3).sum()
    gr, = torch.autograd.grad(f, w, create_graph=True)
    hv, = torch.autograd.grad(gr, w, torch.tensor([1.0, 0.5]))
    r.append(hv)
    r.append(torch.autograd.functional.hessian(lambda v: (v ** 3).sum(), w.detach()))
    r.append(torch.autograd.functional.jacobian(lambda v: v ** 2, w.detach()))
    r.append(torch.func.vmap(torch.func.grad(lambda v: (v ** 3).sum()))(torch.ones(3, 2)))
    r.append(torch.func.jacrev(lambda v: v.sin())(w.detach()))
    r.append(torch.func.jacfwd(lambda v: v.sin())(w.detach()))
    return r


def sn_values_prog(torch, init):
    nn = torch.nn
    a = nn.Linear(5, 3); b = nn.Linear(5, 3); c = nn.Conv2d(2, 3, 3)
    init(a, b, c)
    a = nn.utils.spectral_norm(a)
    nn.utils.parametrizations.spectral_norm(b, n_power_iterations=2)
    c = nn.utils.spectral_norm(c)
    init(a, b, c)
    x = torch.linspace(-1, 1, 10).reshape(2, 5)
    xc = torch.linspace(-1, 1, 2 * 2 * 16).reshape(2, 2, 4, 4)
    opt = torch.optim.SGD(list(a.parameters()) + list(b.parameters()) + list(c.parameters()), lr=0.1)
    r = []
    for _ in range(3):
        opt.zero_grad(); l = a(x).pow(2).sum() + b(x).pow(2).sum() + c(xc).pow(2).sum(); l.backward(); opt.step()
        r.append(l.item())
    a.eval(); b.eval(); c.eval()
    r += [a(x).detach(), b(x).detach(), c(xc).detach(), a.weight_u, b.parametrizations.weight[0]._u]
    r.append(str(sorted(a.state_dict()))); r.append(str(sorted(c.state_dict())))
    return r


def scaler_inf_prog(torch, init):
    nn = torch.nn
    m = nn.Linear(3, 2); init(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    sc = torch.amp.GradScaler("cpu", init_scale=1024., growth_factor=2., backoff_factor=0.25, growth_interval=2)
    x = torch.tensor([[1., 2., 3.], [0.5, -1., 2.]])
    r = []
    for i in range(6):
        opt.zero_grad()
        out = m(x * (float("inf") if i in (1, 4) else 1.0))
        loss = out.pow(2).mean()
        sc.scale(loss).backward()
        ret = sc.step(opt)
        r.append(str(ret))
        sc.update()
        r.append(sc.get_scale()); r.append(m.weight.detach().clone())
        r.append(str(sc._found_inf_per_device(opt) if False else ""))
    r.append(str(sorted(sc.state_dict().items())))
    sc2 = torch.amp.GradScaler("cpu"); sc2.load_state_dict(sc.state_dict()); r.append(sc2.get_scale())
    r.append(sc.get_growth_factor()); r.append(sc.get_backoff_factor()); r.append(sc.get_growth_interval())
    sc3 = torch.amp.GradScaler("cpu", enabled=False)
    l = m(x).sum(); r.append(sc3.scale(l) is l); r.append(sc3.get_scale())
    r.append(str(sc.scale(torch.tensor(2.0))))
    r.append(str([t for t in sc.scale([torch.tensor(1.0), torch.tensor(3.0)])]))
    return r


def meta_prog(torch, init):
    nn = torch.nn
    src = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    init(src)
    with torch.device("meta"):
        m = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    r = [str(m[0].weight.device), m[0].weight.is_meta]
    m.load_state_dict(src.state_dict(), assign=True)
    r.append(str(m[0].weight.device)); r.append(m(torch.ones(2, 3)).detach())
    r.append(type(m[0].weight).__name__); r.append(m[0].weight.requires_grad)
    m2 = nn.Linear(3, 4, device="meta")
    m2 = m2.to_empty(device="cpu")
    r.append(str(m2.weight.device)); r.append(tuple(m2.weight.shape))
    m2.reset_parameters()
    r.append(m2.weight.abs().max().item() <= 1 / math.sqrt(3) + 1e-6)
    m3 = nn.utils.skip_init(nn.Linear, 3, 4)
    r.append(tuple(m3.weight.shape))
    torch.set_default_dtype(torch.float64)
    try:
        m4 = nn.Linear(2, 2)
        r.append(str(m4.weight.dtype)); r.append(str(torch.tensor([1.0]).dtype)); r.append(str(torch.arange(3.).dtype))
        r.append(str(torch.zeros(1).dtype))
    finally:
        torch.set_default_dtype(torch.float32)
    r.append(str(m4.double()(torch.ones(1, 2, dtype=torch.float64)).dtype))
    m5 = nn.Linear(2, 2).to(torch.float64); r.append(str(m5.bias.dtype))
    m5.half(); r.append(str(m5.bias.dtype)); m5.bfloat16(); r.append(str(m5.weight.dtype)); m5.float()
    m5.to(dtype=torch.float16); r.append(str(m5.weight.dtype))
    return r


def resume_sched_prog(torch, init, which="plateau"):
    S = torch.optim.lr_scheduler
    nn = torch.nn
    m = nn.Linear(3, 1); init(m)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    def make(opt):
        if which == "plateau":
            return S.ReduceLROnPlateau(opt, factor=0.5, patience=0, threshold=0.5)
        if which == "onecycle":
            return S.OneCycleLR(opt, max_lr=0.2, total_steps=12)
        if which == "cyclic":
            return S.CyclicLR(opt, 0.01, 0.2, step_size_up=2, mode="exp_range", gamma=0.9)
        if which == "seq":
            return S.SequentialLR(opt, [S.LinearLR(opt, 0.1, total_iters=2), S.CosineAnnealingLR(opt, 6)], milestones=[2])
        if which == "chained":
            return S.ChainedScheduler([S.LinearLR(opt, 0.1, total_iters=2), S.ExponentialLR(opt, 0.9)], optimizer=opt)
        if which == "lambda":
            return S.LambdaLR(opt, lambda e: 0.9 ** e)
        if which == "warm":
            return S.CosineAnnealingWarmRestarts(opt, 2, 2)
        if which == "poly":
            return S.PolynomialLR(opt, total_iters=6, power=1.5)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    s = make(opt)
    def step():
        opt.zero_grad(); l = (m(x) - y).pow(2).mean(); l.backward(); opt.step()
        s.step(l.item()) if which == "plateau" else s.step()
        return (l.item(), opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"])
    r = [step() for _ in range(4)]
    buf = io.BytesIO(); torch.save({"o": opt.state_dict(), "s": s.state_dict(), "m": m.state_dict()}, buf)
    cont = [step() for _ in range(4)]
    buf.seek(0); ck = torch.load(buf, weights_only=False)
    m.load_state_dict(ck["m"])
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt.load_state_dict(ck["o"])
    s = make(opt); s.load_state_dict(ck["s"])
    res = [step() for _ in range(4)]
    r += [cont, res, str(sorted(k for k in ck["s"]))]
    r.append(str(sorted(opt.param_groups[0])))
    return r


def lr_tensor_prog(torch, init):
    nn = torch.nn
    m = nn.Linear(3, 1); init(m)
    x = torch.linspace(-1, 1, 12).reshape(4, 3); y = torch.tensor([[1.], [0.], [-1.], [0.5]])
    r = []
    for name in ("Adam", "AdamW", "SGD"):
        mm = copy.deepcopy(m)
        kw = dict(lr=torch.tensor(0.01))
        if name == "SGD": kw["momentum"] = 0.9
        opt = getattr(torch.optim, name)(mm.parameters(), **kw)
        s = torch.optim.lr_scheduler.StepLR(opt, 1, 0.5)
        for _ in range(3):
            opt.zero_grad(); l = (mm(x) - y).pow(2).mean(); l.backward(); opt.step(); s.step()
        r.append(mm.weight.detach()); r.append(str(type(opt.param_groups[0]["lr"]).__name__)); r.append(opt.param_groups[0]["lr"])
    for name, kw in [("Adam", dict(foreach=True)), ("Adam", dict(fused=True)), ("AdamW", dict(fused=True, amsgrad=True)), ("SGD", dict(fused=True, momentum=0.5)), ("Adagrad", dict(fused=True))]:
        mm = copy.deepcopy(m)
        opt = getattr(torch.optim, name)(mm.parameters(), lr=0.01, **kw)
        for _ in range(3):
            opt.zero_grad(); l = (mm(x) - y).pow(2).mean(); l.backward(); opt.step()
        r.append(mm.weight.detach())
        r.append(str({k: (str(v.dtype), tuple(v.shape)) if hasattr(v, "dtype") else v for k, v in opt.state_dict()["state"][0].items()}))
    return r


def hooks2_prog(torch, init):
    nn = torch.nn
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3); self.b = nn.Linear(3, 2)
        def forward(self, x, scale=1.0, mask=None):
            h = self.a(x) * scale
            if mask is not None: h = h * mask
            return self.b(h), h
    m = Two(); init(m)
    r = []
    def pre(mod, args, kwargs):
        kwargs = dict(kwargs); kwargs["scale"] = 2.0
        return args, kwargs
    def pre_single(mod, inp):
        return inp[0] + 1          # non-tuple return
    def fh(mod, inp, out):
        r.append(("fh", type(out).__name__, len(out)))
        return (out[0] + 1, out[1])
    def fh_first(mod, inp, out):
        r.append("first")
    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.a.register_forward_pre_hook(pre_single)
    m.register_forward_hook(fh)
    m.register_forward_hook(fh_first, prepend=True)
    x = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
    bh = []
    def bhook(mod, gin, gout):
        bh.append(("full", [None if g is None else tuple(g.shape) for g in gin], [None if g is None else tuple(g.shape) for g in gout]))
    m.register_full_backward_hook(bhook)
    m.a.register_full_backward_hook(bhook)
    o, h = m(x, mask=torch.ones(3))
    (o.sum() + h.sum()).backward()
    r.append(o.detach()); r.append(x.grad.clone()); r.append(str(bh))
    r.append(len(m._forward_hooks)); r.append(len(m._forward_pre_hooks)); r.append(len(m._backward_hooks))
    r.append(str(type(m._forward_hooks).__name__))
    # input not requiring grad
    bh.clear()
    m2 = nn.Linear(3, 2); init(m2)
    m2.register_full_backward_hook(bhook)
    m2(torch.ones(2, 3)).sum().backward()
    r.append(str(bh))
    # module used twice
    cnt = []
    shared = nn.Linear(2, 2); init(shared)
    shared.register_forward_hook(lambda mod, i, o: cnt.append(1))
    shared.register_full_backward_hook(lambda mod, gi, go: cnt.append(2))
    z = torch.ones(1, 2, requires_grad=True)
    shared(shared(z)).sum().backward()
    r.append(str(cnt)); r.append(z.grad)
    # handle as context manager
    with shared.register_forward_hook(lambda mod, i, o: o * 0):
        r.append(shared(z).detach())
    r.append(shared(z).detach())
    m._forward_hooks.clear()
    r.append(m(x)[0].detach())
    # hooks + state dict hooks (_register_state_dict_hook post)
    sdh = []
    m.register_state_dict_post_hook(lambda mod, sd, prefix, local_metadata: sdh.append(sorted(sd)))
    m.state_dict()
    r.append(str(sdh))
    lh = []
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, lm, strict, mk, uk, em: lh.append(prefix))
    m.load_state_dict(m.state_dict())
    r.append(str(lh))
    # buffer/parameter/module registration global hooks
    reg = []
    M = torch.nn.modules.module
    h1 = M.register_module_parameter_registration_hook(lambda mod, name, p: reg.append(("p", name)))
    h2 = M.register_module_module_registration_hook(lambda mod, name, sub: reg.append(("m", name)))
    h3 = M.register_module_buffer_registration_hook(lambda mod, name, b: reg.append(("b", name)))
    nn.BatchNorm1d(2)
    h1.remove(); h2.remove(); h3.remove()
    nn.Linear(1, 1)
    r.append(str(reg))
    # global full backward hook / forward pre
    gb = []
    g1 = M.register_module_full_backward_hook(lambda mod, gi, go: gb.append(type(mod).__name__))
    g2 = M.register_module_forward_pre_hook(lambda mod, inp: gb.append("pre-" + type(mod).__name__))
    nn.Sequential(nn.Linear(2, 2), nn.ReLU())(torch.ones(1, 2, requires_grad=True)).sum().backward()
    g1.remove(); g2.remove()
    r.append(str(gb))
    return r


def prune2_prog(torch, init):
    nn = torch.nn
    prune = importlib.import_module(torch.__name__ + ".nn.utils.prune")
    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"
        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    init(m)
    EveryOther.apply(m[3], "weight")
    prune.custom_from_mask(m[3], "bias", torch.tensor([1., 0.]))
    prune.l1_unstructured(m[3], "weight", amount=0.25)    # iterative
    prune.random_structured(m[0], "weight", amount=0.0, dim=0)
    prune.ln_structured(m[0], "weight", amount=1, n=1, dim=1 if False else 0)
    prune.identity(m[0], "bias")
    r = [m[3].weight_mask.clone(), m[3].bias_mask.clone(), m[0].weight_mask.clone()]
    hooks = [type(h).__name__ for h in m[3]._forward_pre_hooks.values()]
    r.append(str(hooks))
    x = torch.linspace(-1, 1, 32).reshape(2, 1, 4, 4)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad(); l = m(x).pow(2).sum(); l.backward(); opt.step()
    r.append(m[3].weight.detach()); r.append(m[3].weight_orig.detach())
    sd = m.state_dict()
    r.append(str(list(sd)))
    try:
        copy.deepcopy(m); r.append("copied")
    except RuntimeError:
        r.append("RE")
    buf = io.BytesIO(); torch.save(m.state_dict(), buf); buf.seek(0)
    m3 = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    prune.identity(m3[3], "weight"); prune.identity(m3[3], "bias"); prune.identity(m3[0], "weight"); prune.identity(m3[0], "bias")
    m3.load_state_dict(torch.load(buf))
    r.append(m3(x).detach())
    for mod, name in [(m[3], "weight"), (m[3], "bias"), (m[0], "weight"), (m[0], "bias")]:
        prune.remove(mod, name)
    r.append(str(list(m.state_dict())))
    r.append(float(100. * float(torch.sum(m[3].weight == 0)) / float(m[3].weight.nelement())))
    try:
        prune.remove(m[3], "weight")
    except ValueError:
        r.append("VE")
    try:
        prune.l1_unstructured(m[3], "weight", amount=1.5)
    except ValueError:
        r.append("VE2")
    try:
        prune.l1_unstructured(m[3], "weight", amount=100)
    except ValueError:
        r.append("VE3")
    return r


def param_multi_prog(torch, init):
    nn = torch.nn
    P = nn.utils.parametrize
    class LowRank(nn.Module):
        def forward(self, A, B):
            return A @ B
        def right_inverse(self, W):
            return W[:, :2].clone(), torch.eye(2, W.shape[1])
    class Scale(nn.Module):
        def forward(self, X):
            return X * 2
        def right_inverse(self, X):
            return X / 2
    m = nn.Linear(4, 3); init(m)
    P.register_parametrization(m, "weight", LowRank())
    r = [str(sorted(m.state_dict())), m.weight.detach()]
    P.register_parametrization(m, "weight", Scale())
    r.append(m.weight.detach()); r.append(str(sorted(m.state_dict())))
    r.append(str(m))
    r.append(len(m.parametrizations.weight))
    P.register_parametrization(m, "bias", Scale(), unsafe=True)
    r.append(m.bias.detach())
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    x = torch.ones(2, 4)
    for _ in range(2):
        opt.zero_grad(); m(x).pow(2).sum().backward(); opt.step()
    r.append(m(x).detach())
    r.append(str(P.type_before_parametrizations(m).__name__))
    r.append(str(type(m).__name__))
    m2 = copy.deepcopy(m)
    r.append(m2(x).detach())
    P.remove_parametrizations(m, "weight", leave_parametrized=False) if False else None
    P.remove_parametrizations(m, "bias")
    r.append(str(sorted(m.state_dict())))
    # parametrization on buffer
    bn = nn.BatchNorm1d(3); init(bn)
    P.register_parametrization(bn, "running_var", Scale())
    r.append(str(sorted(bn.state_dict()))); r.append(bn.running_var)
    # orthogonal variants
    for om in ("matrix_exp", "cayley", "householder"):
        l = nn.Linear(4, 3); init(l)
        nn.utils.parametrizations.orthogonal(l, orthogonal_map=om)
        r.append((l.weight @ l.weight.T).detach())
        r.append(str(sorted(l.state_dict())))
    return r


_PROGRAMS = [hooks_prog, hooks2_prog, param_prog, param_multi_prog, prune_prog, prune2_prog,
             rnn_utils_prog, fcall_prog, fusion_prog, sched_prog, addgroup_prog, swa_prog,
             sparse_prog, amp_prog, ckpt_prog, save_prog, modmanip_prog, deepcopy_prog,
             data_prog, log_prog, custom_opt_prog, post_acc_prog, gp_prog, sn_values_prog,
             scaler_inf_prog, meta_prog, lr_tensor_prog]


@pytest.mark.parametrize("prog", _PROGRAMS, ids=lambda p: p.__name__)
def test_program(prog):
    _check(prog)


@pytest.mark.parametrize("ls", [None, "strong_wolfe"])
def test_lbfgs(ls):
    _check(lbfgs_prog, ls=ls)


@pytest.mark.parametrize("optname,kw", [
    ("AdamW", {}), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("RMSprop", dict(lr=0.01, centered=True)), ("Adafactor", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01)), ("ASGD", dict(lr=0.01)), ("Rprop", dict(lr=0.01))])
def test_resume_optimizer(optname, kw):
    _check(resume_prog, optname=optname, kw=kw)


@pytest.mark.parametrize("which", ["plateau", "onecycle", "cyclic", "seq", "chained",
                                   "lambda", "warm", "poly"])
def test_resume_scheduler(which):
    _check(resume_sched_prog, which=which)


def test_prune_remove_keeps_earlier_state_dict():
    """prune.remove rebinds ``weight_orig``'s data as torch does: a state dict taken
    before keeps the unpruned values (ptcore copied the pruned weight into them)."""
    for lib in (torch, ptcore):
        prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
        lin = lib.nn.Linear(4, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.arange(1., 9.).reshape(2, 4))
        prune.l1_unstructured(lin, "weight", amount=0.5)
        sd = lin.state_dict()
        prune.remove(lin, "weight")
        assert sd["weight_orig"].tolist() == [[1., 2., 3., 4.], [5., 6., 7., 8.]]
        assert lin.weight.tolist() == [[0., 0., 0., 0.], [5., 6., 7., 8.]]
        assert type(lin.weight).__name__ == "Parameter"
