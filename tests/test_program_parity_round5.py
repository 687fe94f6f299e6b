"""Round five of whole programs in the style of the pytorch.org tutorials and recipes
and of common training scripts, each written once against the module it is given and
run under torch and under ptcore (``import ptcore as torch``) from the same initial
weights (tests/program_pairs.py); their losses, outputs, state dicts, reprs and the
exception types of common mistakes must agree.

Covered here: custom ops with torch.library (custom_op with register_fake,
register_autograd, register_vmap and register_autocast, Tensor[] and optional arguments
with defaults, the schema's printed defaults, argument type errors, define/impl),
pruning (ln_structured, pruning containers, a custom BasePruningMethod with
global_unstructured, importance scores, identity, remove), parametrizations (custom
right_inverse, chained, cached, weight_norm / spectral_norm / orthogonal with each map),
torch.func model ensembling and per-sample gradients, jacobians, hessians and
torch.autograd.functional, forward-mode AD through modules and a custom Function's jvp,
Functions with setup_context, vmap staticmethods, once_differentiable and
mark_non_differentiable, conv/linear-bn fusion after channels_last training, a DQN with
replay memory, a GRU seq2seq with Bahdanau attention, a spatial transformer over the
grid_sample modes, neural style transfer with LBFGS, a VAE checked against
distributions, CPU autocast with GradScaler, sequential and plateau LR schedulers,
EMA/SWA with update_bn, training checkpoints resumed (weights_only, mmap), activation
checkpointing with MultiheadAttention masks, a full nn.Transformer with greedy decoding,
the optimizers with parameter groups, named parameters and hooks, meta-device
initialisation with load_state_dict(assign=True), module hooks of every kind, the
EmbeddingBag text classifier, a char-RNN, CTC, super-resolution with PixelShuffle and
interpolate modes, tensors printed under set_printoptions, DataLoader collation and
samplers, and the exception types of common mistakes.
"""
import collections
import copy
import importlib
import io
import math
import os
import pickle
import random
import tempfile
import typing
from typing import Optional, Sequence

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, norm_repr, one_thread, run_pair, text_of  # noqa: E402


Transition = collections.namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))
# custom-op namespaces used so far, per library (an op name is defined once a process)
CNT = collections.Counter()


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


R = text_of


def library_prog(torch, init):
    nn = torch.nn
    lib = torch.library
    ns = "pp_lib_" + torch.__name__
    @lib.custom_op(ns + "::scaled_tanh", mutates_args=())
    def scaled_tanh(x: torch.Tensor, s: float) -> torch.Tensor:
        return torch.tanh(x.clone()) * s
    @scaled_tanh.register_fake
    def _(x, s):
        return torch.empty_like(x)
    def setup_context(ctx, inputs, output):
        x, s = inputs
        ctx.save_for_backward(output)
        ctx.s = s
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (ctx.s - y * y / ctx.s), None
    scaled_tanh.register_autograd(backward, setup_context=setup_context)
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 8); self.l2 = nn.Linear(8, 2)
        def forward(self, x):
            return self.l2(scaled_tanh(self.l1(x), 2.0))
    m = M(); init(m)
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(16, 4).astype(np.float32))
    y = torch.from_numpy(rng.randn(16, 2).astype(np.float32))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    out = []
    for _ in range(3):
        loss = torch.nn.functional.mse_loss(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    op = getattr(getattr(torch.ops, ns), "scaled_tanh")
    z = op(x[:2], 3.0)
    out.append(z)
    out.append(type(scaled_tanh).__name__)
    xx = x[:3].clone().requires_grad_()
    r = op.default(xx, 1.5)
    r.sum().backward()
    out.append(xx.grad)
    # mutating op
    @lib.custom_op(ns + "::add_one_", mutates_args=("x",))
    def add_one_(x: torch.Tensor) -> None:
        x.add_(1)
    t = torch.zeros(3)
    add_one_(t)
    out.append(t)
    # torch.library.opcheck-free: Library define/impl
    L = lib.Library(ns + "_old", "DEF")
    L.define("mysq(Tensor x) -> Tensor")
    L.impl("mysq", lambda x: x * x, "CompositeExplicitAutograd")
    out.append(getattr(torch.ops, ns + "_old").mysq(torch.arange(4.)))
    return out


def prune_prog(torch, init):
    nn = torch.nn; prune = importlib.import_module(torch.__name__ + '.nn.utils.prune')
    rng = np.random.RandomState(1)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(1, 4, 3); self.f1 = nn.Linear(4 * 4 * 4, 16); self.f2 = nn.Linear(16, 3)
        def forward(self, x):
            x = torch.relu(self.c(x)).flatten(1)
            return self.f2(torch.relu(self.f1(x)))
    net = Net(); init(net)
    out = []
    prune.ln_structured(net.c, name="weight", amount=0.5, n=2, dim=0)
    prune.l1_unstructured(net.c, name="bias", amount=1)
    prune.l1_unstructured(net.f1, name="weight", amount=0.3)
    prune.l1_unstructured(net.f1, name="weight", amount=0.3)  # container
    hooks = list(net.f1._forward_pre_hooks.values())
    out.append([type(h).__name__ for h in hooks])
    out.append([type(m).__name__ for m in hooks[0]._pruning_methods])
    class ThresholdPruning(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"
        def __init__(self, threshold):
            self.threshold = threshold
        def compute_mask(self, t, default_mask):
            return default_mask * (torch.abs(t) > self.threshold)
    prune.global_unstructured([(net.f2, "weight"), (net.f2, "bias")], pruning_method=ThresholdPruning, threshold=0.1)
    out.append(sorted(k for k, _ in net.named_buffers()))
    out.append(sorted(net.state_dict().keys()))
    out.append([prune.is_pruned(net), prune.is_pruned(nn.Linear(2, 2))])
    x = torch.from_numpy(rng.randn(8, 1, 6, 6).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 3, 8))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(3):
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append([float((m == 0).sum()) for n, m in net.named_buffers()])
    for mod, name in [(net.c, "weight"), (net.c, "bias"), (net.f1, "weight"), (net.f2, "weight"), (net.f2, "bias")]:
        prune.remove(mod, name)
    out.append(sorted(net.state_dict().keys()))
    out.append(net.f1.weight)
    out.append(type(net.f1.weight).__name__)
    # importance scores
    lin = nn.Linear(5, 5); init(lin)
    imp = torch.from_numpy(rng.rand(5, 5).astype(np.float32))
    prune.l1_unstructured(lin, "weight", amount=0.4, importance_scores=imp)
    out.append(lin.weight_mask)
    prune.random_structured  # exists
    prune.identity(lin, "bias")
    out.append(lin.bias_mask)
    return out


def parametrize_prog(torch, init):
    nn = torch.nn; P = torch.nn.utils.parametrize; PZ = torch.nn.utils.parametrizations
    class Symmetric(nn.Module):
        # the lower triangle is the parameter; right_inverse keeps it
        def forward(self, X):
            L = X.tril()
            return L + L.tril(-1).mT
        def right_inverse(self, A):
            return A.tril()
    class Skew(nn.Module):
        def forward(self, X):
            U = torch.triu(X, diagonal=1)
            return U - U.mT
    class MatExp(nn.Module):
        def forward(self, X):
            return torch.matrix_exp(X)
    rng = np.random.RandomState(2)
    l1 = nn.Linear(4, 4); l2 = nn.Linear(4, 4); l3 = nn.Linear(4, 6); l4 = nn.Linear(6, 3)
    init(l1, l2, l3, l4)
    P.register_parametrization(l1, "weight", Symmetric())
    P.register_parametrization(l2, "weight", Skew())
    P.register_parametrization(l2, "weight", MatExp())
    l3 = PZ.weight_norm(l3, dim=0)
    l4 = PZ.spectral_norm(l4, n_power_iterations=3)
    out = [str(l1), str(l2), sorted(l1.state_dict()), sorted(l2.state_dict()), sorted(l3.state_dict()), sorted(l4.state_dict())]
    out.append([P.is_parametrized(l1), P.is_parametrized(l1, "bias"), P.is_parametrized(l3, "weight")])
    out.append(torch.dist(l1.weight, l1.weight.T).item())
    W = l2.weight
    out.append((W @ W.T - torch.eye(4)).abs().max().item() < 1e-5)
    model = nn.Sequential(l1, nn.Tanh(), l2, nn.Tanh(), l3, nn.ReLU(), l4)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.from_numpy(rng.randn(10, 4).astype(np.float32))
    y = torch.from_numpy(rng.randn(10, 3).astype(np.float32))
    for i in range(3):
        with P.cached():
            loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append([n for n, _ in model.named_parameters()])
    l1.weight = torch.eye(4) * 2
    out.append(l1.parametrizations.weight.original)
    P.remove_parametrizations(l2, "weight", leave_parametrized=True)
    P.remove_parametrizations(l3, "weight")
    out.append(sorted(model.state_dict()))
    out.append([type(l2.weight).__name__, l2.weight.requires_grad])
    model.eval()
    with torch.no_grad():
        out.append(model(x))
    o = nn.Linear(3, 3); init(o)
    for m in ["matrix_exp", "cayley", "householder"]:
        q = PZ.orthogonal(copy.deepcopy(o), orthogonal_map=m)
        Q = q.weight
        out.append([m, (Q @ Q.T - torch.eye(3)).abs().max().item() < 1e-5, q.weight.shape])
    return out


def func_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    from_func = torch.func
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 8); self.fc2 = nn.Linear(8, 2)
        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x)))
    models = [MLP() for _ in range(4)]
    init(*models)
    params, buffers = from_func.stack_module_state(models)
    out = [sorted(params), [v.shape for k, v in sorted(params.items())]]
    base = copy.deepcopy(models[0]).to("meta")
    def fmodel(params, buffers, x):
        return from_func.functional_call(base, (params, buffers), (x,))
    rng = np.random.RandomState(3)
    x = torch.from_numpy(rng.randn(5, 3).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 2, 5))
    ens = from_func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    out.append(ens)
    xs = torch.from_numpy(rng.randn(4, 5, 3).astype(np.float32))
    out.append(from_func.vmap(fmodel)(params, buffers, xs))
    # per-sample grads
    m = models[1]
    p = {k: v.detach() for k, v in m.named_parameters()}
    def loss_fn(p, xi, yi):
        logits = from_func.functional_call(m, p, (xi.unsqueeze(0),))
        return F.cross_entropy(logits, yi.unsqueeze(0))
    psg = from_func.vmap(from_func.grad(loss_fn), in_dims=(None, 0, 0))(p, x, y)
    out.append({k: v for k, v in psg.items()})
    # grad with has_aux, argnums
    def f2(p, xi):
        o = from_func.functional_call(m, p, (xi,))
        return o.pow(2).sum(), o
    g, aux = from_func.grad(f2, has_aux=True)(p, x)
    out.append([g["fc1.weight"], aux])
    gv, val = from_func.grad_and_value(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x + 1)
    out.append([gv, val])
    # jacobians / hessian of the network w.r.t. input
    f = lambda xi: m(xi)
    out.append(from_func.jacrev(f)(x[0]))
    out.append(from_func.jacfwd(f)(x[0]))
    out.append(from_func.hessian(lambda xi: m(xi).sum())(x[0]))
    out.append(from_func.vmap(from_func.jacrev(f))(x))
    out.append(from_func.jacrev(f, chunk_size=1)(x[0]))
    # vjp / jvp
    o, vjp_fn = from_func.vjp(f, x[0])
    out.append(vjp_fn(torch.ones(2)))
    out.append(from_func.jvp(f, (x[0],), (torch.ones(3),)))
    AF = torch.autograd.functional
    out.append(AF.jacobian(f, x[0]))
    out.append(AF.jacobian(f, x[0], vectorize=True, strategy="forward-mode"))
    out.append(AF.hessian(lambda xi: m(xi).pow(2).sum(), x[0]))
    out.append(AF.vjp(f, x[0], torch.ones(2)))
    out.append(AF.jvp(f, x[0], torch.ones(3)))
    out.append(AF.hvp(lambda xi: m(xi).pow(2).sum(), x[0], torch.ones(3)))
    out.append(AF.vhp(lambda xi: m(xi).pow(2).sum(), x[0], torch.ones(3)))
    return out


def fwd_ad_prog(torch, init):
    nn = torch.nn; fwAD = torch.autograd.forward_ad
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.LayerNorm(5), nn.Linear(5, 2))
    init(model)
    rng = np.random.RandomState(4)
    x = torch.from_numpy(rng.randn(4, 3).astype(np.float32))
    v = torch.from_numpy(rng.randn(4, 3).astype(np.float32))
    out = []
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, v)
        y = model(dx)
        p, t = fwAD.unpack_dual(y)
        out += [p, t, type(fwAD.unpack_dual(y)).__name__, fwAD.unpack_dual(x).tangent is None]
    # tangents for module params
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.ones_like(p) for name, p in params.items()}
    with fwAD.dual_level():
        dual_params = {}
        for name, p in params.items():
            dual_params[name] = fwAD.make_dual(p, tangents[name])
        yy = torch.func.functional_call(model, dual_params, (x,))
        out.append(fwAD.unpack_dual(yy).tangent)
    # custom Function with jvp
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r); ctx.save_for_forward(r)
            return r
        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r
        @staticmethod
        def jvp(ctx, gx):
            (r,) = ctx.saved_tensors
            return gx * r
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        out.append(fwAD.unpack_dual(Exp.apply(d)).tangent)
    return out


def autograd_fn_prog(torch, init):
    nn = torch.nn
    once_differentiable = importlib.import_module(torch.__name__ + '.autograd.function').once_differentiable
    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])
        @staticmethod
        def backward(ctx, grad_out, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_out * dx + grad_dx * 6 * x
        @staticmethod
        def vmap(info, in_dims, x):
            r = MyCube.apply(x)
            return r, (in_dims[0], in_dims[0])
    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo, hi):
            ctx.save_for_backward(x)
            ctx.lo, ctx.hi = lo, hi
            idx = (x > hi).nonzero()
            ctx.mark_non_differentiable(idx)
            return x.clamp(lo, hi), idx
        @staticmethod
        @once_differentiable
        def backward(ctx, g, _):
            (x,) = ctx.saved_tensors
            return g * ((x >= ctx.lo) & (x <= ctx.hi)).to(g.dtype), None, None
    class Sq(torch.autograd.Function):
        generate_vmap_rule = True
        @staticmethod
        def forward(x):
            return x * x
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    rng = np.random.RandomState(5)
    x = torch.from_numpy(rng.randn(6).astype(np.float64)).requires_grad_()
    y, dy = MyCube.apply(x)
    out = [y, dy, y.grad_fn.name() if hasattr(y.grad_fn, "name") else None, type(y.grad_fn).__name__]
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), x)
    out += [g, gg]
    c, idx = Clamp.apply(x, -0.5, 0.5)
    out += [c, idx, idx.requires_grad, type(c.grad_fn).__name__]
    c.sum().backward()
    out.append(x.grad)
    try:
        c2, _ = Clamp.apply(x, -0.5, 0.5)
        gc, = torch.autograd.grad(c2.sum(), x, create_graph=True)
        gc.sum().backward()
        out.append("no error")
    except RuntimeError as e:
        out.append("RuntimeError")
    out.append(torch.func.vmap(Sq.apply)(torch.arange(6.).reshape(2, 3)))
    out.append(torch.func.vmap(MyCube.apply)(torch.arange(6.).reshape(2, 3)))
    out.append(torch.func.grad(lambda t: Sq.apply(t).sum())(torch.arange(3.)))
    out.append(torch.autograd.gradcheck(lambda t: MyCube.apply(t)[0], (x.detach().requires_grad_(),)))
    out.append(torch.autograd.gradgradcheck(lambda t: MyCube.apply(t)[0], (x.detach().requires_grad_(),)))
    return out


def fuse_prog(torch, init):
    nn = torch.nn
    fu = torch.nn.utils.fusion
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval = fu.fuse_conv_bn_eval, fu.fuse_conv_bn_weights, fu.fuse_linear_bn_eval
    rng = np.random.RandomState(6)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False); self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2); self.bn2 = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8, 4); self.bn3 = nn.BatchNorm1d(4)
        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            x = torch.relu(self.bn2(self.conv2(x)))
            x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
            return self.bn3(self.fc(x))
    net = Net(); init(net)
    net = net.to(memory_format=torch.channels_last)
    out = [net.conv1.weight.is_contiguous(memory_format=torch.channels_last), net.conv1.weight.stride()]
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    for _ in range(3):
        x = torch.from_numpy(rng.randn(6, 3, 8, 8).astype(np.float32)).to(memory_format=torch.channels_last)
        y = torch.from_numpy(rng.randint(0, 4, 6))
        o = net(x)
        loss = nn.functional.cross_entropy(o, y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), net.conv1.weight.grad.is_contiguous(memory_format=torch.channels_last)])
    net.eval()
    x = torch.from_numpy(rng.randn(2, 3, 8, 8).astype(np.float32))
    with torch.no_grad():
        ref = net(x)
        f1 = fuse_conv_bn_eval(net.conv1, net.bn1)
        f2 = fuse_conv_bn_eval(net.conv2, net.bn2)
        f3 = fuse_linear_bn_eval(net.fc, net.bn3)
        fused = nn.Sequential(f1, nn.ReLU(), f2, nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), f3)
        got = fused(x)
    out += [ref, got, str(fused), f1.bias is not None, type(f1.weight).__name__, f1.weight.requires_grad]
    w, b = fuse_conv_bn_weights(net.conv2.weight, net.conv2.bias, net.bn2.running_mean, net.bn2.running_var, net.bn2.eps, net.bn2.weight, net.bn2.bias, transpose=False)
    out += [w, b, type(w).__name__]
    return out


def dqn_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    class ReplayMemory:
        def __init__(self, cap):
            self.memory = collections.deque([], maxlen=cap)
        def push(self, *args):
            self.memory.append(Transition(*args))
        def sample(self, k):
            return random.Random(len(self.memory)).sample(self.memory, k)
        def __len__(self):
            return len(self.memory)
    class DQN(nn.Module):
        def __init__(self, n_obs, n_act):
            super().__init__()
            self.layer1 = nn.Linear(n_obs, 32); self.layer2 = nn.Linear(32, 32); self.layer3 = nn.Linear(32, n_act)
        def forward(self, x):
            x = F.relu(self.layer1(x)); x = F.relu(self.layer2(x))
            return self.layer3(x)
    policy, target = DQN(4, 2), DQN(4, 2)
    init(policy)
    target.load_state_dict(policy.state_dict())
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-3, amsgrad=True)
    mem = ReplayMemory(100)
    rng = np.random.RandomState(7)
    state = torch.tensor(rng.randn(4), dtype=torch.float32).unsqueeze(0)
    out = []
    steps_done = 0
    for t in range(40):
        eps = 0.05 + 0.85 * math.exp(-1. * steps_done / 20)
        steps_done += 1
        if rng.rand() > eps:
            with torch.no_grad():
                action = policy(state).max(1).indices.view(1, 1)
        else:
            action = torch.tensor([[rng.randint(2)]], dtype=torch.long)
        obs = rng.randn(4)
        reward = torch.tensor([float(rng.rand())])
        terminated = rng.rand() < 0.1
        next_state = None if terminated else torch.tensor(obs, dtype=torch.float32).unsqueeze(0)
        mem.push(state, action, next_state, reward)
        state = next_state if next_state is not None else torch.tensor(rng.randn(4), dtype=torch.float32).unsqueeze(0)
        if len(mem) >= 16:
            transitions = mem.sample(16)
            batch = Transition(*zip(*transitions))
            non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
            non_final_next = torch.cat([s for s in batch.next_state if s is not None])
            state_batch = torch.cat(batch.state); action_batch = torch.cat(batch.action); reward_batch = torch.cat(batch.reward)
            sav = policy(state_batch).gather(1, action_batch)
            nsv = torch.zeros(16)
            with torch.no_grad():
                nsv[non_final_mask] = target(non_final_next).max(1).values
            expected = (nsv * 0.99) + reward_batch
            crit = nn.SmoothL1Loss()
            loss = crit(sav, expected.unsqueeze(1))
            opt.zero_grad(); loss.backward()
            torch.nn.utils.clip_grad_value_(policy.parameters(), 100)
            opt.step()
            tsd = target.state_dict(); psd = policy.state_dict()
            for key in psd:
                tsd[key] = psd[key] * 0.005 + tsd[key] * (1 - 0.005)
            target.load_state_dict(tsd)
            out.append(loss.item())
    out.append(target.layer3.weight)
    out.append(sorted(opt.state_dict()["state"][0].keys()))
    out.append(str(opt.state_dict()["param_groups"]))
    return out


def seq2seq_gru_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    SOS, EOS, V, H, L = 0, 1, 12, 16, 6
    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(V, H); self.gru = nn.GRU(H, H, batch_first=True); self.dropout = nn.Dropout(0.0)
        def forward(self, x):
            return self.gru(self.dropout(self.embedding(x)))
    class BahdanauAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.Wa = nn.Linear(H, H); self.Ua = nn.Linear(H, H); self.Va = nn.Linear(H, 1)
        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            return torch.bmm(weights, keys), weights
    class Dec(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(V, H); self.attention = BahdanauAttention()
            self.gru = nn.GRU(2 * H, H, batch_first=True); self.out = nn.Linear(H, V)
        def forward(self, enc_out, enc_hidden, target=None):
            B = enc_out.size(0)
            dec_in = torch.empty(B, 1, dtype=torch.long).fill_(SOS)
            hidden = enc_hidden
            outs, attns = [], []
            for i in range(L):
                emb = self.embedding(dec_in)
                query = hidden.permute(1, 0, 2)
                ctx, w = self.attention(query, enc_out)
                o, hidden = self.gru(torch.cat((emb, ctx), dim=2), hidden)
                o = self.out(o)
                outs.append(o); attns.append(w)
                if target is not None:
                    dec_in = target[:, i].unsqueeze(1)
                else:
                    _, topi = o.topk(1)
                    dec_in = topi.squeeze(-1).detach()
            outs = torch.cat(outs, dim=1)
            return F.log_softmax(outs, dim=-1), hidden, torch.cat(attns, dim=1)
    enc, dec = Enc(), Dec(); init(enc, dec)
    rng = np.random.RandomState(8)
    src = torch.from_numpy(rng.randint(2, V, (5, L)))
    tgt = torch.from_numpy(rng.randint(2, V, (5, L)))
    eo = torch.optim.Adam(enc.parameters(), lr=0.01); do = torch.optim.Adam(dec.parameters(), lr=0.01)
    crit = nn.NLLLoss()
    out = []
    for ep in range(4):
        eo.zero_grad(); do.zero_grad()
        e_out, e_h = enc(src)
        d_out, _, _ = dec(e_out, e_h, tgt)
        loss = crit(d_out.view(-1, d_out.size(-1)), tgt.view(-1))
        loss.backward(); eo.step(); do.step()
        out.append(loss.item())
    with torch.no_grad():
        e_out, e_h = enc(src)
        d_out, h, att = dec(e_out, e_h)
        _, topi = d_out.topk(1)
        out += [topi.squeeze(), att, h]
    return out


def stn_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=3); self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
            self.conv2_drop = nn.Dropout2d(p=0.0)
            self.fc1 = nn.Linear(32, 16); self.fc2 = nn.Linear(16, 3)
            self.localization = nn.Sequential(nn.Conv2d(1, 4, kernel_size=3), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                                              nn.Conv2d(4, 6, kernel_size=3), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(6 * 4 * 4, 8), nn.ReLU(True), nn.Linear(8, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
        def stn(self, x, ac, mode, pad):
            xs = self.localization(x)
            xs = xs.view(-1, 6 * 4 * 4)
            theta = self.fc_loc(xs).view(-1, 2, 3)
            theta = theta + 0.05 * torch.linspace(-1, 1, 6).view(1, 2, 3)
            grid = F.affine_grid(theta, x.size(), align_corners=ac)
            return F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
        def forward(self, x, ac=False, mode="bilinear", pad="zeros"):
            x = self.stn(x, ac, mode, pad)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)
    net = Net(); init(net)
    rng = np.random.RandomState(9)
    x = torch.from_numpy(rng.rand(4, 1, 14, 14).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 3, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    out = []
    for ac, mode, pad in [(False, "bilinear", "zeros"), (True, "bilinear", "border"), (False, "nearest", "reflection"), (True, "bicubic", "zeros"), (False, "bilinear", "reflection")]:
        o = net(x, ac, mode, pad)
        loss = F.nll_loss(o, y)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), net.fc_loc[2].weight.grad.abs().sum().item()])
    th = torch.tensor([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]])
    out.append(F.affine_grid(th, (1, 1, 3, 4), align_corners=False))
    th3 = torch.eye(3, 4).unsqueeze(0) * 0.8
    g3 = F.affine_grid(th3, (1, 1, 2, 3, 3), align_corners=True)
    out.append(g3)
    vol = torch.from_numpy(rng.rand(1, 1, 2, 3, 3).astype(np.float32))
    out.append(F.grid_sample(vol, g3, align_corners=True))
    return out


def style_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    def gram(x):
        a, b, c, d = x.size()
        f = x.view(a * b, c * d)
        return torch.mm(f, f.t()).div(a * b * c * d)
    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__(); self.target = target.detach()
        def forward(self, x):
            self.loss = F.mse_loss(x, self.target); return x
    class StyleLoss(nn.Module):
        def __init__(self, tf):
            super().__init__(); self.target = gram(tf).detach()
        def forward(self, x):
            self.loss = F.mse_loss(gram(x), self.target); return x
    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean = torch.tensor(mean, dtype=torch.float64).view(-1, 1, 1); self.std = torch.tensor(std, dtype=torch.float64).view(-1, 1, 1)
        def forward(self, img):
            return (img - self.mean) / self.std
    cnn = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 8, 3, padding=1), nn.ReLU())
    init(cnn)
    cnn = cnn.double().eval().requires_grad_(False)
    rng = np.random.RandomState(10)
    style = torch.from_numpy(rng.rand(1, 3, 8, 8))
    content = torch.from_numpy(rng.rand(1, 3, 8, 8))
    model = nn.Sequential(Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))
    cls, sls = [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1; name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"; layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = f"pool_{i}"
        model.add_module(name, layer)
        if name == "conv_2":
            t = model(content).detach(); cl = ContentLoss(t); model.add_module(f"content_loss_{i}", cl); cls.append(cl)
        if name in ("conv_1", "conv_2", "conv_3"):
            tf = model(style).detach(); sl = StyleLoss(tf); model.add_module(f"style_loss_{i}", sl); sls.append(sl)
    input_img = content.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([input_img])
    run = [0]; out = [str(model)]
    while run[0] <= 20:
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            s = sum(sl.loss for sl in sls) * 1e4
            c = sum(cl.loss for cl in cls)
            loss = s + c
            loss.backward()
            run[0] += 1
            return s + c
        l = optimizer.step(closure)
        out.append(l.item())
    with torch.no_grad():
        input_img.clamp_(0, 1)
    out.append(input_img)
    st = optimizer.state_dict()["state"][0]
    out.append(sorted(st.keys()))
    out.append([st["func_evals"], st["n_iter"]])
    return out


def vae_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional; D = torch.distributions
    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 12); self.fc21 = nn.Linear(12, 3); self.fc22 = nn.Linear(12, 3)
            self.fc3 = nn.Linear(3, 12); self.fc4 = nn.Linear(12, 16)
        def encode(self, x):
            h1 = F.relu(self.fc1(x)); return self.fc21(h1), self.fc22(h1)
        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar); return mu + eps * std
        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))
        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 16))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar
    model = VAE(); init(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.RandomState(11)
    data = torch.from_numpy((rng.rand(32, 1, 4, 4) > 0.5).astype(np.float32))
    out = []
    for epoch in range(3):
        model.train()
        for b in range(0, 32, 8):
            x = data[b:b + 8]
            eps = torch.from_numpy(rng.randn(8, 3).astype(np.float32))
            recon, mu, logvar = model(x, eps)
            BCE = F.binary_cross_entropy(recon, x.view(-1, 16), reduction='sum')
            KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            q = D.Normal(mu, torch.exp(0.5 * logvar)); p = D.Normal(torch.zeros_like(mu), torch.ones_like(mu))
            kl2 = D.kl_divergence(q, p).sum()
            qi = D.Independent(q, 1)
            lp = qi.log_prob(mu.detach()).sum()
            loss = BCE + KLD
            opt.zero_grad(); loss.backward(); opt.step()
            out.append([loss.item(), (kl2 - KLD).abs().item() < 1e-3, lp.item(), q.entropy().sum().item(), qi.event_shape, qi.batch_shape])
    with torch.no_grad():
        z = torch.from_numpy(rng.randn(4, 3).astype(np.float32))
        out.append(model.decode(z).view(4, 1, 4, 4))
        mvn = D.MultivariateNormal(torch.zeros(3), scale_tril=torch.diag(torch.ones(3) * 0.5))
        out.append(D.kl_divergence(mvn, D.MultivariateNormal(torch.zeros(3), torch.eye(3))))
        bern = D.Bernoulli(probs=model.decode(z))
        out.append(bern.log_prob(data[:4].view(4, 16)).sum(1))
    return out


def amp_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.LayerNorm(16), nn.Linear(16, 3))
    init(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2. ** 8, growth_interval=2)
    rng = np.random.RandomState(12)
    out = []
    for i in range(4):
        x = torch.from_numpy(rng.randn(6, 8).astype(np.float32))
        y = torch.from_numpy(rng.randint(0, 3, 6))
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            h = model[0](x)
            o = model(x)
            loss = F.cross_entropy(o, y)
            out.append(str([h.dtype, o.dtype, loss.dtype, torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")]).replace("ptcore", "torch"))
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        out.append([loss.float().item(), gn.item(), scaler.get_scale()])
    out.append(sorted(scaler.state_dict().items()))
    with torch.autocast("cpu", enabled=False):
        out.append(str(model(x).dtype).replace("ptcore", "torch"))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.ones(2, 3)
        out.append(str([torch.mm(a, a.t()).dtype, (a + 1).dtype, torch.softmax(a, 0).dtype, F.layer_norm(a, (3,)).dtype]).replace('ptcore', 'torch'))
        with torch.autocast("cpu", enabled=False):
            out.append(str(torch.mm(a, a.t()).dtype).replace('ptcore', 'torch'))
    return out


def sched_prog(torch, init):
    nn = torch.nn; S = torch.optim.lr_scheduler
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)); init(model)
    rng = np.random.RandomState(13)
    x = torch.from_numpy(rng.randn(16, 4).astype(np.float32)); y = torch.from_numpy(rng.randn(16, 1).astype(np.float32))
    out = []
    def train(opt, sched, n, metric=False):
        for i in range(n):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            if metric:
                sched.step(loss.item() if i % 3 else 10.0)
            else:
                sched.step()
            out.append([round(loss.item(), 5)] + [g["lr"] for g in opt.param_groups] + [g.get("momentum", g.get("betas", (0,))[0]) for g in opt.param_groups])
    opt = torch.optim.SGD([{"params": model[0].parameters(), "lr": 0.05}, {"params": model[2].parameters()}], lr=0.1, momentum=0.9)
    s = S.OneCycleLR(opt, max_lr=[0.1, 0.2], total_steps=10, pct_start=0.3, anneal_strategy="cos", three_phase=True)
    train(opt, s, 10)
    out.append(R(sorted((k, v) for k, v in s.state_dict().items() if k not in ("_schedule_phases", "anneal_func"))))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    s = S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=1e-4)
    for ep in range(2):
        for i in range(5):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            s.step(ep + i / 5)
            out.append(s.get_last_lr())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    s1 = S.LinearLR(opt, start_factor=0.1, total_iters=3)
    s2 = S.ExponentialLR(opt, gamma=0.9)
    s3 = S.StepLR(opt, step_size=2, gamma=0.5)
    seq = S.SequentialLR(opt, schedulers=[s1, s2, s3], milestones=[3, 5])
    train(opt, seq, 8)
    out.append(R(seq.state_dict()["_milestones"]))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    s = S.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, threshold=0.01, threshold_mode="abs", cooldown=1, min_lr=0.02)
    train(opt, s, 9, metric=True)
    out.append(R(sorted((k, v) for k, v in s.state_dict().items() if k not in ("mode_worse",))))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    s = S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)
    train(opt, s, 6)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    s = S.PolynomialLR(opt, total_iters=4, power=2.0)
    train(opt, s, 6)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    s = S.LambdaLR(opt, lr_lambda=lambda e: 0.95 ** e)
    train(opt, s, 3)
    s = S.MultiplicativeLR(opt, lr_lambda=lambda e: 0.9)
    train(opt, s, 3)
    s = S.ConstantLR(opt, factor=0.5, total_iters=2)
    train(opt, s, 3)
    out.append(R(opt))
    return out


def ema_swa_prog(torch, init):
    nn = torch.nn; U = torch.optim.swa_utils
    model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1)); init(model)
    ema = U.AveragedModel(model, multi_avg_fn=U.get_ema_multi_avg_fn(0.9), use_buffers=True)
    swa = U.AveragedModel(model)
    ema2 = U.AveragedModel(model, avg_fn=U.get_ema_avg_fn(0.8))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    swa_sched = U.SWALR(opt, swa_lr=0.02, anneal_epochs=2, anneal_strategy="linear")
    rng = np.random.RandomState(14)
    X = torch.from_numpy(rng.randn(32, 3).astype(np.float32)); Y = torch.from_numpy(rng.randn(32, 1).astype(np.float32))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=8, shuffle=False)
    out = []
    for epoch in range(6):
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad(); loss.backward(); opt.step()
            ema.update_parameters(model); ema2.update_parameters(model)
        if epoch >= 3:
            swa.update_parameters(model); swa_sched.step()
        else:
            sched.step()
        out.append([loss.item(), opt.param_groups[0]["lr"]])
    out.append(swa.n_averaged)
    out.append(ema.n_averaged)
    U.update_bn(loader, swa)
    out.append([swa.module[1].running_mean, swa.module[1].running_var, swa.module[1].num_batches_tracked, swa.module[1].momentum])
    out.append(sorted(swa.state_dict().keys()))
    out.append(ema.module[1].running_mean)
    out.append(ema2.module[0].weight)
    with torch.no_grad():
        swa.eval(); ema.eval()
        out += [swa(X[:4]), ema(X[:4])]
    out.append(R(swa))
    return out


def ckpt_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 4, 3); self.bn = nn.BatchNorm1d(4); self.fc = nn.Linear(4 * 6, 2)
            self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        def forward(self, x):
            self.steps += 1
            return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))
    net = Net(); init(net)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)
    rng = np.random.RandomState(15)
    X = torch.from_numpy(rng.randn(8, 2, 8).astype(np.float32)); Y = torch.from_numpy(rng.randint(0, 2, 8))
    def step():
        loss = nn.functional.cross_entropy(net(X), Y)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        return loss.item()
    out = [step() for _ in range(3)]
    buf = io.BytesIO()
    torch.save({"epoch": 3, "model_state_dict": net.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "scheduler": sched.state_dict(), "loss": out[-1], "rng": np.arange(3), "meta": {"name": "net", "tags": ("a", 1)}}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=False, map_location="cpu")
    buf.seek(0)
    try:
        torch.load(buf, weights_only=True)
        out.append("loaded")
    except Exception as e:
        out.append(type(e).__name__)
    out.append([ck["epoch"], ck["loss"], ck["meta"], list(ck["rng"])])
    cont = [step() for _ in range(2)]
    net2 = Net(); opt2 = torch.optim.Adam(net2.parameters(), lr=1e-2, weight_decay=1e-3)
    sched2 = torch.optim.lr_scheduler.StepLR(opt2, 2, 0.5)
    net2.load_state_dict(ck["model_state_dict"]); opt2.load_state_dict(ck["optimizer_state_dict"]); sched2.load_state_dict(ck["scheduler"])
    net, opt, sched = net2, opt2, sched2
    again = [step() for _ in range(2)]
    out += [cont, again, net.steps]
    # weights_only with plain state dict
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.pt")
        torch.save(net.state_dict(), p)
        sd = torch.load(p, weights_only=True, map_location=torch.device("cpu"))
        out.append([type(sd).__name__, list(sd.keys()), sd["steps"]])
        sd2 = torch.load(p, weights_only=True, mmap=True)
        out.append(sd2["fc.weight"])
        p = os.path.join(d, "m2.pt")
        torch.save([net.fc.weight, net.fc.weight[0]], p)
        a, b = torch.load(p, weights_only=True)
        out.append(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
        p = os.path.join(d, "m3.pt")
        torch.save(opt.state_dict(), p)
        osd = torch.load(p, weights_only=True)
        out.append(R(osd["param_groups"]))
        out.append(osd["state"][0]["step"])
    return out


def checkpoint_attn_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    cp = importlib.import_module(torch.__name__ + ".utils.checkpoint")
    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.attn = nn.MultiheadAttention(d, 2, batch_first=True, dropout=0.0)
            self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(approximate="tanh"), nn.Linear(2 * d, d))
            self.n1 = nn.LayerNorm(d); self.n2 = nn.LayerNorm(d)
        def forward(self, x, kpm, am):
            h = self.n1(x)
            a, w = self.attn(h, h, h, key_padding_mask=kpm, attn_mask=am, need_weights=True, average_attn_weights=False)
            x = x + a
            return x + self.ff(self.n2(x)), w
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 8); self.blocks = nn.ModuleList([Block(8) for _ in range(2)]); self.head = nn.Linear(8, 10)
        def forward(self, ids, kpm, use_ckpt, reentrant):
            x = self.emb(ids)
            am = nn.Transformer.generate_square_subsequent_mask(ids.size(1))
            ws = []
            for b in self.blocks:
                if use_ckpt:
                    x, w = cp.checkpoint(b, x, kpm, am, use_reentrant=reentrant)
                else:
                    x, w = b(x, kpm, am)
                ws.append(w)
            return self.head(x), ws
    m = Model(); init(m)
    rng = np.random.RandomState(16)
    ids = torch.from_numpy(rng.randint(0, 10, (3, 5)))
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    out = []
    grads = []
    for use_ckpt, re_ in [(False, False), (True, False), (True, True)]:
        m.zero_grad()
        logits, ws = m(ids, kpm, use_ckpt, re_)
        loss = F.cross_entropy(logits.reshape(-1, 10), ids.reshape(-1), reduction="none").masked_fill(kpm.reshape(-1), 0).sum()
        loss.backward()
        out.append([loss.item(), ws[0].shape, ws[1]])
        grads.append([p.grad.clone() for p in m.parameters()])
    out.append(grads)
    seq = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(4)]); init(seq)
    xi = torch.from_numpy(rng.randn(2, 4).astype(np.float32)).requires_grad_()
    o = cp.checkpoint_sequential(seq, 2, xi, use_reentrant=False)
    o.sum().backward()
    out += [o, xi.grad, seq[0][0].weight.grad]
    mha = nn.MultiheadAttention(6, 3, kdim=4, vdim=5, bias=False, add_bias_kv=True, add_zero_attn=True); init(mha)
    q = torch.from_numpy(rng.randn(2, 3, 6).astype(np.float32)); k = torch.from_numpy(rng.randn(4, 3, 4).astype(np.float32)); v = torch.from_numpy(rng.randn(4, 3, 5).astype(np.float32))
    kp = torch.zeros(3, 4); kp[1, 2:] = float("-inf")
    a, w = mha(q, k, v, key_padding_mask=kp)
    out += [a, w, R(mha), sorted(mha.state_dict())]
    mha.eval()
    with torch.no_grad():
        a2, w2 = mha(q, k, v, need_weights=False)
    out += [a2, w2 is None]
    return out


def transformer_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=False, activation="gelu")
    emb = nn.Embedding(12, 8, padding_idx=0); head = nn.Linear(8, 12)
    init(model, emb, head)
    rng = np.random.RandomState(17)
    src = torch.from_numpy(rng.randint(1, 12, (3, 6))); tgt = torch.from_numpy(rng.randint(1, 12, (3, 5)))
    src[1, 4:] = 0; tgt[2, 3:] = 0
    params = list(model.parameters()) + list(emb.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    out = []
    for i in range(3):
        model.train()
        tin, tout = tgt[:, :-1], tgt[:, 1:]
        tm = model.generate_square_subsequent_mask(tin.size(1))
        o = model(emb(src), emb(tin), tgt_mask=tm, src_key_padding_mask=src == 0, tgt_key_padding_mask=tin == 0, memory_key_padding_mask=src == 0, tgt_is_causal=True)
        loss = F.cross_entropy(head(o).reshape(-1, 12), tout.reshape(-1), ignore_index=0)
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params, 1.0); opt.step()
        out.append(loss.item())
    model.eval()
    with torch.no_grad():
        mem = model.encoder(emb(src), src_key_padding_mask=src == 0)
        ys = torch.ones(3, 1, dtype=torch.long)
        for _ in range(4):
            tm = model.generate_square_subsequent_mask(ys.size(1))
            o = model.decoder(emb(ys), mem, tgt_mask=tm, memory_key_padding_mask=src == 0)
            nxt = head(o[:, -1]).argmax(-1, keepdim=True)
            ys = torch.cat([ys, nxt], 1)
        out += [ys, mem]
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, norm_first=True), 2, enable_nested_tensor=False)
        init(enc)
        out.append(enc(emb(src), src_key_padding_mask=src == 0))
        out.append(enc(emb(src), mask=nn.Transformer.generate_square_subsequent_mask(6), is_causal=True))
    out.append(R(model.encoder.layers[0]))
    out.append(len(list(model.named_parameters())))
    return out


def named_optim_prog(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2)); init(model)
    rng = np.random.RandomState(20)
    x = torch.from_numpy(rng.randn(8, 3).astype(np.float32)); y = torch.from_numpy(rng.randn(8, 2).astype(np.float32))
    out = []
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    no_decay = [p for n, p in model.named_parameters() if not n.endswith("weight")]
    for name, kw in [("Adam", dict(lr=torch.tensor(0.01))), ("AdamW", dict(fused=True)), ("Adam", dict(foreach=True, maximize=True)),
                     ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)), ("RAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)),
                     ("Adamax", dict(foreach=False)), ("Adagrad", dict(lr_decay=0.01, initial_accumulator_value=0.1)),
                     ("RMSprop", dict(centered=True, momentum=0.5)), ("Adadelta", dict(rho=0.8)), ("Rprop", dict(etas=(0.4, 1.3))),
                     ("ASGD", dict(t0=1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1)), ("Adafactor", dict(lr=0.01)),
                     ("AdamW", dict(amsgrad=True, capturable=False))]:
        m = copy.deepcopy(model)
        Opt = getattr(torch.optim, name)
        opt = Opt([{"params": [p for n, p in m.named_parameters() if n.endswith("weight")], "weight_decay": 0.01},
                   {"params": [p for n, p in m.named_parameters() if not n.endswith("weight")], "weight_decay": 0.0}], **kw)
        for _ in range(3):
            loss = nn.functional.mse_loss(m(x), y)
            opt.zero_grad(set_to_none=False); loss.backward(); opt.step()
        out.append([name, loss.item(), m[2].weight.detach().clone()])
        sd = opt.state_dict()
        out.append(R(sorted((k, v) for k, v in sd["param_groups"][0].items() if k != "params")))
        out.append(sorted(sd["state"][0].keys()))
        st = sd["state"][0]
        out.append([R(type(v).__name__) + (str(v.dtype).replace("ptcore", "torch") + str(tuple(v.shape)) if hasattr(v, "dtype") else "") for k, v in sorted(st.items())])
    # named parameters passed to optimizer
    m = copy.deepcopy(model)
    opt = torch.optim.SGD(m.named_parameters(), lr=0.1)
    out.append(R(opt.state_dict()["param_groups"]))
    try:
        opt.add_param_group({"params": [nn.Parameter(torch.ones(2))], "lr": 0.5})
    except ValueError as e:
        out.append("ValueError")
    opt.add_param_group({"params": [("extra", nn.Parameter(torch.ones(2)))], "lr": 0.5})
    out.append(R(opt))
    hooks = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: hooks.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: hooks.append("post"))
    opt.register_state_dict_pre_hook(lambda o: hooks.append("sdpre"))
    opt.register_state_dict_post_hook(lambda o, sd: sd.update(extra=1) or hooks.append("sdpost"))
    loss = nn.functional.mse_loss(m(x), y); loss.backward(); opt.step(); h1.remove(); opt.step()
    sd = opt.state_dict()
    out += [hooks, sorted(sd)]
    return out


def meta_init_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            self.a = nn.Linear(4, 4, device=device); self.bn = nn.BatchNorm1d(4, device=device); self.b = nn.Linear(4, 2, device=device)
        def forward(self, x):
            return self.b(torch.relu(self.bn(self.a(x))))
    ref = Net(); init(ref)
    with torch.device("meta"):
        m = Net()
    out = [m.a.weight.device.type, m.a.weight.is_meta, R(m.a.weight)]
    m.to_empty(device="cpu")
    out.append(m.a.weight.device.type)
    r = m.load_state_dict(ref.state_dict(), assign=True)
    out.append(R(r))
    out.append(m.a.weight is not None and isinstance(m.a.weight, nn.Parameter))
    m2 = Net(device="meta")
    m2.load_state_dict(ref.state_dict(), assign=True)
    out.append([m2.a.weight.device.type, type(m2.a.weight).__name__, m2.a.weight.requires_grad])
    rng = np.random.RandomState(21)
    x = torch.from_numpy(rng.randn(5, 4).astype(np.float32))
    out.append(m2(x))
    sk = nn.utils.skip_init(nn.Linear, 3, 3)
    out.append([sk.weight.shape, sk.weight.dtype == torch.float32])
    r = m2.load_state_dict({k: v for k, v in ref.state_dict().items() if not k.startswith("b.")}, strict=False)
    out.append([sorted(r.missing_keys), sorted(r.unexpected_keys)])
    try:
        m2.load_state_dict({"a.weight": torch.zeros(3, 3)}, strict=False)
    except RuntimeError as e:
        out.append("RuntimeError")
    sd = ref.state_dict(keep_vars=True)
    out.append([type(v).__name__ for v in sd.values()])
    sd = ref.state_dict(prefix="model.")
    out.append(list(sd))
    out.append([n for n, _ in ref.named_modules(prefix="root")])
    out.append([n for n, _ in ref.named_buffers(recurse=False)] + [n for n, _ in ref.bn.named_buffers(prefix="bn")])
    # default dtype float64 models
    torch.set_default_dtype(torch.float64)
    try:
        l = nn.Linear(2, 2)
        out.append(R([l.weight.dtype, torch.tensor([1.0]).dtype, torch.tensor([1.0j]).dtype, torch.arange(3.).dtype, nn.BatchNorm1d(2).running_mean.dtype]))
    finally:
        torch.set_default_dtype(torch.float32)
    h = copy.deepcopy(ref).half()
    out.append(R([h.a.weight.dtype, h.bn.running_mean.dtype, h.bn.num_batches_tracked.dtype]))
    b = copy.deepcopy(ref).to(torch.bfloat16)
    with torch.no_grad():
        out.append(b.eval()(x.bfloat16()).float())
    d = copy.deepcopy(ref).double()
    out.append(d.eval()(x.double()))
    try:
        buf = io.BytesIO(); torch.save(ref, buf)
    except (AttributeError, pickle.PicklingError) as e:
        out.append('pickle error')
    seq = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)); init(seq)
    buf = io.BytesIO(); torch.save(seq, buf); buf.seek(0)
    m3 = torch.load(buf, weights_only=False)
    out.append(R(m3))
    m4 = pickle.loads(pickle.dumps(seq))
    out.append(m4.eval()(x))
    return out


def hooks_prog(torch, init):
    nn = torch.nn
    log = []
    model = nn.Sequential(collections.OrderedDict([("fc1", nn.Linear(3, 4)), ("act", nn.ReLU()), ("fc2", nn.Linear(4, 2))])); init(model)
    def pre_kw(mod, args, kwargs):
        log.append(("pre_kw", type(mod).__name__, len(args), sorted(kwargs)))
        return (args[0] * 2,), kwargs
    def fwd_kw(mod, args, kwargs, output):
        log.append(("fwd_kw", sorted(kwargs)))
        return output + 1
    def bwd_pre(mod, gout):
        log.append(("bwd_pre", [g.shape for g in gout]))
        return (gout[0] * 0.5,)
    def bwd(mod, gin, gout):
        log.append(("bwd", [None if g is None else tuple(g.shape) for g in gin]))
    h = [model.fc1.register_forward_pre_hook(pre_kw, with_kwargs=True),
         model.fc2.register_forward_hook(fwd_kw, with_kwargs=True, always_call=True),
         model.fc2.register_full_backward_pre_hook(bwd_pre),
         model.fc1.register_full_backward_hook(bwd),
         model.register_forward_hook(lambda m, i, o: log.append(("seq", o.shape)), prepend=True)]
    g = nn.modules.module.register_module_forward_hook(lambda m, i, o: log.append(("global", type(m).__name__)))
    rng = np.random.RandomState(22)
    x = torch.from_numpy(rng.randn(5, 3).astype(np.float32)).requires_grad_()
    o = model(x)
    o.sum().backward()
    g.remove()
    out = [o, x.grad, model.fc1.weight.grad, log[:]]
    for hh in h: hh.remove()
    log.clear()
    model.fc1.weight.register_hook(lambda gr: gr * 0)
    acc = []
    model.fc2.weight.register_post_accumulate_grad_hook(lambda p: acc.append(p.grad.sum().item()))
    model.zero_grad()
    model(x).sum().backward()
    out += [model.fc1.weight.grad, acc, log]
    sdl = []
    model.register_state_dict_pre_hook(lambda m, prefix, keep_vars: sdl.append(("pre", prefix)))
    model.register_state_dict_post_hook(lambda m, sd, prefix, local_md: sdl.append(("post", len(sd))))
    model.register_load_state_dict_pre_hook(lambda m, sd, prefix, lm, strict, mk, uk, em: sdl.append(("lpre", prefix)))
    model.register_load_state_dict_post_hook(lambda m, keys: sdl.append(("lpost", len(keys.missing_keys))))
    sd = model.state_dict()
    model.load_state_dict(sd)
    out += [sdl, str(sd._metadata)]
    out.append(R(model))
    out.append([n for n, _ in model.named_children()])
    model.set_submodule("act", nn.Tanh())
    out.append([R(model.get_submodule("act")), model.get_parameter("fc2.bias").shape])
    return out


def textcls_prog(torch, init):
    nn = torch.nn
    rng = np.random.RandomState(30)
    data = [(int(rng.randint(1, 5)), list(rng.randint(0, 50, rng.randint(1, 9)))) for _ in range(40)]
    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _label, _text in batch:
            label_list.append(_label - 1)
            processed = torch.tensor(_text, dtype=torch.int64)
            text_list.append(processed)
            offsets.append(processed.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list, text_list, offsets
    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class, mode):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False, mode=mode)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()
        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()
        def forward(self, text, offsets, psw=None):
            return self.fc(self.embedding(text, offsets, per_sample_weights=psw))
    out = []
    for mode in ["mean", "sum", "max"]:
        model = TextClassificationModel(50, 8, 4, mode); init(model)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=5)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
        train_iter = torch.utils.data.DataLoader(data[:32], batch_size=8, shuffle=False, collate_fn=collate_batch)
        for epoch in range(2):
            model.train()
            total_acc, total_count = 0, 0
            for idx, (label, text, offsets) in enumerate(train_iter):
                optimizer.zero_grad()
                predicted_label = model(text, offsets)
                loss = criterion(predicted_label, label)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
                optimizer.step()
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
            scheduler.step()
            out.append([mode, total_acc / total_count, loss.item()])
        model.eval()
        with torch.no_grad():
            label, text, offsets = collate_batch(data[32:])
            out.append(model(text, offsets))
            if mode == "sum":
                psw = torch.from_numpy(rng.rand(text.numel()).astype(np.float32))
                out.append(model(text, offsets, psw))
    eb = nn.EmbeddingBag(10, 3, mode="max", padding_idx=2); init(eb)
    inp = torch.tensor([[1, 2, 4], [2, 2, 2]])
    w = eb(inp)
    out.append(w)
    eb2 = nn.EmbeddingBag.from_pretrained(torch.arange(12.).view(4, 3), mode="sum", include_last_offset=True)
    out.append(eb2(torch.tensor([0, 1, 2, 3, 1]), torch.tensor([0, 2, 5])))
    return out


def char_rnn_prog(torch, init):
    nn = torch.nn
    letters = "abcdefghij"
    def letterToIndex(l):
        return letters.find(l)
    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, len(letters))
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor
    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size, hidden_size); self.h2h = nn.Linear(hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size); self.softmax = nn.LogSoftmax(dim=1)
        def forward(self, input, hidden):
            hidden = torch.tanh(self.i2h(input) + self.h2h(hidden))
            return self.softmax(self.h2o(hidden)), hidden
        def initHidden(self):
            return torch.zeros(1, self.hidden_size)
    class RNN2(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(len(letters), 12, num_layers=2, nonlinearity="relu")
            self.h2o = nn.Linear(12, 3); self.softmax = nn.LogSoftmax(dim=1)
        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            return self.softmax(self.h2o(hidden[0]))
    rnn = RNN(len(letters), 16, 3); rnn2 = RNN2(); init(rnn, rnn2)
    rng = np.random.RandomState(31)
    lines = ["".join(letters[i] for i in rng.randint(0, 10, rng.randint(2, 7))) for _ in range(12)]
    cats = rng.randint(0, 3, 12)
    criterion = nn.NLLLoss()
    out = []
    lr = 0.05
    for i, (line, c) in enumerate(zip(lines, cats)):
        category_tensor = torch.tensor([c], dtype=torch.long)
        line_tensor = lineToTensor(line)
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for j in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[j], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-lr)
        top_n, top_i = output.topk(1)
        out.append([loss.item(), top_i[0].item(), round(top_n.item(), 4)])
    opt = torch.optim.SGD(rnn2.parameters(), lr=0.05)
    for line, c in zip(lines, cats):
        o = rnn2(lineToTensor(line))
        loss = criterion(o, torch.tensor([c]))
        opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(rnn2.parameters(), 3); opt.step()
        out.append(loss.item())
    confusion = torch.zeros(3, 3)
    with torch.no_grad():
        for line, c in zip(lines, cats):
            g = rnn2(lineToTensor(line)).topk(1)[1][0].item()
            confusion[c][g] += 1
    confusion = confusion / confusion.sum(1, keepdim=True).clamp(min=1)
    out.append(confusion)
    return out


def ctc_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(5, 8, 3, padding=1); self.lstm = nn.LSTM(8, 8, bidirectional=True, proj_size=4); self.fc = nn.Linear(8, 6)
        def forward(self, x):
            h = F.relu(self.conv(x)).permute(2, 0, 1)
            h, _ = self.lstm(h)
            return self.fc(h).log_softmax(2)
    m = M(); init(m)
    rng = np.random.RandomState(32)
    x = torch.from_numpy(rng.randn(3, 5, 10).astype(np.float32))
    targets = torch.from_numpy(rng.randint(1, 6, (3, 4)))
    in_len = torch.tensor([10, 9, 7]); tgt_len = torch.tensor([4, 2, 3])
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    out = []
    for red in ["mean", "sum", "none"]:
        ctc = nn.CTCLoss(blank=0, reduction=red, zero_infinity=True)
        lp = m(x)
        loss = ctc(lp, targets, in_len, tgt_len)
        out.append(loss)
        opt.zero_grad(); loss.sum().backward(); opt.step()
    flat = torch.cat([targets[i, :tgt_len[i]] for i in range(3)])
    out.append(F.ctc_loss(m(x), flat, in_len, tgt_len, reduction="none"))
    out.append(F.ctc_loss(m(x), flat, tuple(in_len.tolist()), tuple(tgt_len.tolist())))
    with torch.no_grad():
        best = m(x).argmax(2).T
        decoded = []
        for seq, L in zip(best, in_len):
            s = torch.unique_consecutive(seq[:L])
            decoded.append(s[s != 0].tolist())
    out.append(str(decoded))
    return out


def superres_unet_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional; I = torch.nn.init
    class SR(nn.Module):
        def __init__(self, r):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2)); self.conv2 = nn.Conv2d(8, 8, 3, 1, 1, padding_mode="reflect")
            self.conv3 = nn.Conv2d(8, r ** 2, 3, 1, 1, padding_mode="replicate"); self.ps = nn.PixelShuffle(r); self.pu = nn.PixelUnshuffle(r)
        def forward(self, x):
            x = self.relu(self.conv1(x)); x = self.relu(self.conv2(x))
            return self.ps(self.conv3(x))
    class Up(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Conv2d(1, 4, 3, stride=2, padding=1); self.up = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1)
            self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False); self.out = nn.Conv2d(9, 1, 1)
            self.norm = nn.GroupNorm(2, 4); self.inorm = nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
        def forward(self, x):
            d = F.leaky_relu(self.norm(self.down(x)), 0.2)
            u1 = self.inorm(self.up(d)); u2 = self.up2(d)
            return self.out(torch.cat([x, u1, u2], 1))
    sr, un = SR(2), Up()
    init(sr, un)
    rng = np.random.RandomState(33)
    lo = torch.from_numpy(rng.rand(2, 1, 6, 6).astype(np.float32)); hi = torch.from_numpy(rng.rand(2, 1, 12, 12).astype(np.float32))
    opt = torch.optim.SGD(list(sr.parameters()) + list(un.parameters()), lr=0.1, momentum=0.9)
    out = []
    for _ in range(3):
        p = sr(lo)
        q = un(p)
        loss = F.mse_loss(p, hi) + F.l1_loss(q, hi) + F.smooth_l1_loss(q, hi, beta=0.5) + F.huber_loss(p, hi, delta=0.3)
        psnr = 10 * math.log10(1 / F.mse_loss(p, hi).item())
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss.item(), round(psnr, 3)])
    out += [un.inorm.running_mean, un.inorm.running_var, sr.pu(p), R(sr), R(un)]
    with torch.no_grad():
        out.append(F.interpolate(lo, size=(9, 7), mode="bicubic", align_corners=True))
        out.append(F.interpolate(lo, scale_factor=1.5, mode="area"))
        out.append(F.interpolate(lo, scale_factor=0.5, mode="bilinear", antialias=True))
        out.append(F.interpolate(lo, scale_factor=2.5, mode="nearest-exact", recompute_scale_factor=True))
        out.append(F.interpolate(lo.squeeze(1), scale_factor=2, mode="linear"))
    return out


def printlog_prog(torch, init):
    nn = torch.nn
    model = nn.Linear(3, 2); init(model)
    rng = np.random.RandomState(34)
    x = torch.from_numpy(rng.randn(4, 3).astype(np.float32))
    buf = []
    buf.append(str(model(x)))
    torch.set_printoptions(precision=2, sci_mode=False)
    try:
        buf.append(str(model(x) * 1e5))
        buf.append(str(model.weight))
        torch.set_printoptions(profile="short")
        buf.append(str(torch.arange(2000.).view(40, 50)))
        torch.set_printoptions(profile="default")
        torch.set_printoptions(linewidth=40, threshold=5, edgeitems=1)
        buf.append(str(torch.arange(30).view(5, 6)))
    finally:
        torch.set_printoptions(profile="default")
    buf.append(str(model(x).detach()))
    buf.append(repr(x.to(torch.float16)))
    buf.append(repr(torch.tensor([1e-8, 1.0, 1e8])))
    buf.append(repr(torch.tensor([True, False])))
    buf.append(repr(torch.tensor([[1 + 2j, 3.5 - 1j]])))
    buf.append(repr(torch.zeros(2, 0, 3)))
    buf.append(repr(torch.tensor(3.5, dtype=torch.float64, requires_grad=True) * 2))
    buf.append(repr(nn.Parameter(torch.ones(2, dtype=torch.bfloat16))))
    buf.append(f"{torch.tensor(0.123456):.3f} {torch.tensor(3)} {torch.tensor([1.5])}")
    buf.append(repr(torch.tensor([float('nan'), float('inf'), -float('inf'), 2.0])))
    buf.append(repr(torch.arange(6).view(2, 3).t()))
    buf.append(repr(torch.tensor([123456789.0, 1.0])))
    buf.append(repr(torch.tensor([1, 2], dtype=torch.uint8)))
    return [norm_repr(b) for b in buf]


def dataloader_prog(torch, init):
    D = torch.utils.data
    class Squares(D.Dataset):
        def __init__(self, n): self.n = n
        def __len__(self): return self.n
        def __getitem__(self, i):
            return {"x": torch.tensor([i, i * i], dtype=torch.float32), "y": i % 3, "name": f"s{i}", "arr": np.full(2, i, dtype=np.int16)}
    class Stream(D.IterableDataset):
        def __init__(self, n): self.n = n
        def __iter__(self):
            info = D.get_worker_info()
            if info is None:
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))
    out = []
    ds = Squares(10)
    dl = D.DataLoader(ds, batch_size=4, drop_last=False)
    for b in dl:
        out.append([b["x"], b["y"], b["name"], b["arr"], R(type(b["arr"]).__name__)])
    out.append(len(dl))
    dl = D.DataLoader(ds, batch_size=3, drop_last=True, num_workers=2, persistent_workers=False)
    out.append([b["y"].tolist() for b in dl])
    out.append(sorted(D.DataLoader(Stream(7), batch_size=None, num_workers=2)))
    out.append([t.tolist() for t in D.DataLoader(Stream(7), batch_size=2)])
    bs = D.BatchSampler(D.SequentialSampler(range(7)), batch_size=3, drop_last=False)
    out.append([b["y"].tolist() for b in D.DataLoader(ds, batch_sampler=bs)])
    cat = D.ConcatDataset([D.TensorDataset(torch.arange(3)), D.TensorDataset(torch.arange(10, 14))])
    out.append([len(cat), cat[4], cat.cumulative_sizes])
    sub = D.Subset(ds, [1, 5, 7])
    out.append([s["y"] for s in sub])
    st = D.StackDataset(a=D.TensorDataset(torch.arange(3)), b=torch.arange(3) * 2)
    out.append(str(st[1]).replace("ptcore", "torch"))
    out.append(D.default_collate([(1, 2.0, "a"), (3, 4.0, "b")]))
    out.append(D.default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])]))
    out.append(R(D.default_convert({"a": np.array([1, 2]), "b": [np.float64(1.5)]})))
    Pt = collections.namedtuple("Pt", "a b")
    c = D.default_collate([Pt(1, torch.ones(2)), Pt(2, torch.zeros(2))])
    out.append([type(c).__name__, c.a, c.b])
    return out


def library2_prog(torch, init):
    CNT[torch.__name__] += 1
    ns = f"pp2_{torch.__name__}_" + "abcdefghijklmnop"[CNT[torch.__name__]]
    lib = torch.library
    T = torch.Tensor
    out = []
    @lib.custom_op(f"{ns}::multi", mutates_args=(), device_types="cpu")
    def multi(xs: Sequence[torch.Tensor], w: Optional[torch.Tensor], k: int, flag: bool = True, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        s = torch.stack(list(xs)).sum(0) * scale
        if w is not None:
            s = s * w
        return s + k, (s * 2 if flag else s.clone())
    op = getattr(torch.ops, ns).multi
    out.append(R(op.default._schema))
    a, b = torch.ones(3), torch.arange(3.)
    out.append(list(multi([a, b], None, 2)))
    out.append(list(multi([a, b], torch.full((3,), 2.0), 1, flag=False, scale=0.5)))
    try:
        multi([a], None, 1.5)
        out.append("no error")
    except RuntimeError:
        out.append("RuntimeError")
    for bad in [lambda: multi(a, None, 1), lambda: multi([a], None, 1, scale="x"), lambda: multi([a], None, 1, 2, 3, 4),
                lambda: multi([a], None, k=1, alpha=2)]:
        try:
            bad()
            out.append("no error")
        except RuntimeError:
            out.append("RuntimeError")
    @lib.custom_op(f"{ns}::mysin", mutates_args=())
    def mysin(x: torch.Tensor) -> torch.Tensor:
        return x.sin()
    def bwd(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos()
    def sc(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
    mysin.register_autograd(bwd, setup_context=sc)
    mysin.register_fake(lambda x: torch.empty_like(x))
    @mysin.register_vmap
    def _(info, in_dims, x):
        return x.sin(), in_dims[0]
    x = torch.linspace(0, 1, 5).requires_grad_()
    y = mysin(x); y.sum().backward()
    out += [y, x.grad, y.grad_fn is not None]
    out.append(torch.func.vmap(mysin)(torch.arange(6.).view(2, 3)))
    # define / impl / register_kernel
    lib.define(f"{ns}::twice", "(Tensor x, *, float alpha=1.0) -> Tensor")
    @lib.impl(f"{ns}::twice", "cpu")
    def _(x, *, alpha=1.0):
        return 2 * x * alpha
    out.append(getattr(torch.ops, ns).twice(torch.ones(2), alpha=3.0))
    @lib.custom_op(f"{ns}::inc", mutates_args={"buf"})
    def inc(buf: torch.Tensor, n: int) -> None:
        buf.add_(n)
    bb = torch.zeros(2)
    r = inc(bb, 3)
    out += [bb, r is None]
    @lib.custom_op(f"{ns}::f2", mutates_args=())
    def f2(x: torch.Tensor) -> list[torch.Tensor]:
        return [x + 1, x - 1]
    out.append(f2(torch.ones(2)))
    o2 = getattr(torch.ops, ns)
    out.append([hasattr(o2, "f2"), R(o2.f2.default.name()), R(o2.f2.default.overloadpacket)])
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__(); self.l = torch.nn.Linear(3, 3)
        def forward(self, x):
            return mysin(self.l(x))
    m = M(); init(m)
    xx = torch.ones(2, 3)
    out.append(m(xx))
    lib.opcheck(mysin, (torch.randn(3, requires_grad=True),), test_utils=("test_schema", "test_autograd_registration"))
    out.append("opcheck ok")
    return out


def errors_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    prune = importlib.import_module(torch.__name__ + ".nn.utils.prune")
    out = []
    def E(f):
        try:
            f(); return "ok"
        except Exception as e:
            return type(e).__name__
    l = nn.Linear(3, 2)
    out.append(E(lambda: l(torch.ones(4, 5))))
    out.append(E(lambda: F.cross_entropy(torch.ones(3, 4), torch.ones(3))))
    out.append(E(lambda: F.cross_entropy(torch.ones(3, 4), torch.tensor([0, 1, 4]))))
    out.append(E(lambda: F.nll_loss(torch.ones(3, 4), torch.tensor([0, 1, 2]).float())))
    out.append(E(lambda: l.load_state_dict({"weight": torch.ones(3, 3), "bias": torch.ones(2)})))
    out.append(E(lambda: l.load_state_dict({"weight": torch.ones(2, 3)})))
    out.append(E(lambda: torch.optim.SGD([torch.ones(2, requires_grad=True) * 2], lr=0.1)))
    out.append(E(lambda: torch.optim.SGD([], lr=0.1)))
    out.append(E(lambda: torch.optim.Adam(l.parameters(), lr=-1)))
    out.append(E(lambda: torch.optim.Adam(l.parameters(), betas=(1.0, 0.9))))
    out.append(E(lambda: torch.optim.SGD(l.parameters(), lr=0.1, nesterov=True)))
    def twice():
        y = (l(torch.ones(1, 3)) ** 2).sum(); y.backward(); y.backward()
    out.append(E(twice))
    def inplace():
        a = torch.ones(3, requires_grad=True); b = a.sigmoid(); b.mul_(2); b.sum().backward()
    out.append(E(inplace))
    def inplace2():
        a = torch.ones(3, requires_grad=True); b = a * 1; c = b.exp(); b.add_(1); c.sum().backward()
    out.append(E(inplace2))
    out.append(E(lambda: torch.ones(3, requires_grad=True).add_(1)))
    out.append(E(lambda: torch.ones(3, requires_grad=True).numpy()))
    out.append(E(lambda: nn.Conv2d(3, 4, 3)(torch.ones(1, 2, 5, 5))))
    out.append(E(lambda: nn.BatchNorm1d(3)(torch.ones(1, 3))))
    out.append(E(lambda: nn.LSTM(3, 4)(torch.ones(5, 2, 4))))
    out.append(E(lambda: nn.Embedding(5, 2)(torch.tensor([5]))))
    out.append(E(lambda: nn.Embedding(5, 2)(torch.tensor([1.0]))))
    out.append(E(lambda: torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(3)), batch_size=0)))
    out.append(E(lambda: next(iter(torch.utils.data.DataLoader([torch.ones(2), torch.ones(3)], batch_size=2)))))
    out.append(E(lambda: torch.utils.data.TensorDataset(torch.ones(3), torch.ones(4))))
    out.append(E(lambda: torch.utils.data.random_split(range(10), [3, 3])))
    out.append(E(lambda: nn.Sequential(nn.Linear(2, 2))[3]))
    out.append(E(lambda: nn.ModuleDict({"a": nn.ReLU()})["b"]))
    out.append(E(lambda: nn.Module().register_buffer("a.b", torch.ones(1))))
    out.append(E(lambda: nn.Module().register_parameter("x", torch.ones(1))))
    out.append(E(lambda: setattr(nn.Linear(2, 2), "weight", torch.ones(2, 2))))
    out.append(E(lambda: nn.Linear(2, 2).get_submodule("nope")))
    out.append(E(lambda: torch.optim.lr_scheduler.OneCycleLR(torch.optim.SGD(l.parameters(), lr=0.1), max_lr=0.1)))
    def onecycle_over():
        o = torch.optim.SGD(l.parameters(), lr=0.1); s = torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=2)
        for _ in range(3): o.step(); s.step()
    out.append(E(onecycle_over))
    out.append(E(lambda: nn.utils.clip_grad_norm_(l.parameters(), 1.0, error_if_nonfinite=True)))
    def nonfinite():
        l.weight.grad = torch.full((2, 3), float("inf")); nn.utils.clip_grad_norm_(l.parameters(), 1.0, error_if_nonfinite=True)
    out.append(E(nonfinite))
    out.append(E(lambda: torch.func.grad(lambda t: t * 2)(torch.ones(3))))
    out.append(E(lambda: torch.func.vmap(lambda t: t.item())(torch.ones(3))))
    out.append(E(lambda: torch.func.vmap(lambda t: t, in_dims=1)(torch.ones(3))))
    try:
        torch.load(io.BytesIO(b"garbage"))
    except pickle.UnpicklingError:
        out.append("UnpicklingError")
    out.append(E(lambda: nn.MultiheadAttention(5, 2)))
    out.append(E(lambda: nn.TransformerEncoderLayer(6, 4)))
    out.append(E(lambda: nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), "bias")))
    out.append(E(lambda: prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1.5)))
    out.append(E(lambda: prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=10)))
    out.append(E(lambda: prune.remove(nn.Linear(2, 2), "weight")))
    return out


def library_vmap_autocast_prog(torch, init):
    """Batching rules (register_vmap, also for a Tensor[] argument and through
    autograd) and autocast rules (register_autocast) of custom ops; a custom op
    named like a built-in one is not autocast itself."""
    CNT[torch.__name__] += 1
    ns = f"pp3_{torch.__name__}_" + "abcdefghijklmnop"[CNT[torch.__name__]]
    lib = torch.library
    out, calls = [], []

    @lib.custom_op(ns + "::mysin", mutates_args=())
    def mysin(x: torch.Tensor) -> torch.Tensor:
        return x.sin()

    @mysin.register_vmap
    def _(info, in_dims, x):
        calls.append((info.batch_size, info.randomness))
        return x.sin() * 10, in_dims[0]
    a = torch.arange(6.).view(2, 3)
    out.append(torch.func.vmap(mysin)(a))
    out.append(torch.func.vmap(mysin, in_dims=1)(a))
    out.append(torch.func.vmap(torch.func.vmap(mysin))(a.view(1, 2, 3)))
    out.append(torch.func.vmap(mysin, randomness="same")(a))
    out.append(calls)

    @lib.custom_op(ns + "::madd", mutates_args=())
    def madd(xs: list[torch.Tensor], y: torch.Tensor, k: float = 2.0) -> tuple[torch.Tensor, torch.Tensor]:
        return xs[0] + xs[1] * k + y, y.clone()

    def madd_vmap(info, in_dims, xs, y, k=2.0):
        calls.append(("madd", [d is None for d in in_dims[0]], in_dims[1] is None, k))
        xs = [x.movedim(d, 0) if d is not None else x.expand(info.batch_size, *x.shape)
              for x, d in zip(xs, in_dims[0])]
        y2 = y.movedim(in_dims[1], 0) if in_dims[1] is not None else y.expand(info.batch_size, *y.shape)
        return madd(xs, y2, k), (0, 0)
    lib.register_vmap(ns + "::madd", madd_vmap)
    b = torch.ones(3)
    out.append(list(torch.func.vmap(madd, in_dims=([0, None], None))([a, b], b)))
    out.append(list(torch.func.vmap(lambda u, v: madd([b, u], v, 0.5), in_dims=(1, 0))(a.T, a)))
    out.append(calls[-2:])

    @lib.custom_op(ns + "::sq", mutates_args=())
    def sq(x: torch.Tensor) -> torch.Tensor:
        return x * x
    sq.register_autograd(lambda ctx, g: 2 * ctx.saved_tensors[0] * g,
                         setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    sq.register_vmap(lambda info, in_dims, x: (sq(x), in_dims[0]))
    x = a.clone().requires_grad_()
    y = torch.func.vmap(sq)(x)
    y.sum().backward()
    out += [y, x.grad, R(y.grad_fn.name().replace(ns, "NS"))]

    @lib.custom_op(ns + "::mm", mutates_args=())
    def mm(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        return p @ q

    @lib.custom_op(ns + "::softmax", mutates_args=())
    def softmax(p: torch.Tensor) -> torch.Tensor:
        return (p @ p).softmax(0)
    m = torch.ones(2, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        before = [mm(m, m).dtype, softmax(m).dtype]
    mm.register_autocast("cpu", torch.float16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        after = [mm(m, m).dtype, mm(m.double(), m.double()).dtype, softmax(m).dtype]
    out.append(R(before + after + [mm(m, m).dtype]))
    try:
        mm.register_autocast(1, torch.float16)
    except ValueError:
        out.append("ValueError")

    @lib.custom_op(ns + "::plus", mutates_args=())
    def plus(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    @plus.register_kernel("cpu")
    def _(x):
        return x + 100
    z = torch.zeros(1)
    seen = [plus(z)]
    with plus.set_kernel_enabled("cpu", False):
        seen.append(plus(z))
        with plus.set_kernel_enabled("cpu", True):
            seen.append(plus(z))
        seen.append(plus(z))
    seen.append(plus(z))
    out.append(seen)
    with pytest.warns(FutureWarning):
        lib.impl_abstract(ns + "::plus")(lambda x: torch.empty_like(x))
    return out


def containers_prog(torch, init):
    nn = torch.nn
    out = []
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    init(seq)
    seq.append(nn.Linear(3, 1))
    seq.insert(1, nn.BatchNorm1d(3))
    seq.extend([nn.Sigmoid()])
    out.append(R(seq))
    out.append(R(seq[1:3]))
    out.append(type(seq[1:3]).__name__)
    out.append(R(seq[-1]))
    p = seq.pop(1)
    out.append([R(p), len(seq)])
    del seq[-1]
    out.append(R(seq))
    s2 = seq + nn.Sequential(nn.Tanh())
    out.append(R(s2))
    s3 = nn.Sequential(nn.ReLU(), nn.Tanh()) * 2
    out.append(R(s3))
    out.append([n for n, _ in s2.named_children()])
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.insert(1, nn.GELU()); ml.extend([nn.SiLU()]); ml.append(nn.ELU())
    out.append(R(ml)); out.append(R(ml[1:]))
    ml.pop(0)
    out.append(R(ml))
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
    md.update([("c", nn.GELU())]); md["d"] = nn.SiLU()
    out.append([list(md.keys()), R(md.pop("b")), "b" in md, len(md)])
    out.append(R(md))
    pl = nn.ParameterList([nn.Parameter(torch.ones(2)), torch.zeros(3)])
    pl.append(torch.full((1,), 2.0)); pl.extend([nn.Parameter(torch.ones(1, 1))])
    out.append([type(x).__name__ for x in pl])
    out.append([x.requires_grad for x in pl])
    out.append(R(pl))
    pd = nn.ParameterDict({"w": nn.Parameter(torch.ones(2)), "b": torch.zeros(2)})
    pd.update({"c": torch.ones(1)}); pd.setdefault("d", nn.Parameter(torch.zeros(1)))
    out.append([list(pd.keys()), [type(v).__name__ for v in pd.values()], R(pd)])
    out.append(R(pd.pop("c")))
    out.append(sorted(dict(nn.Module().named_parameters())))
    # weight tying
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4); self.dec = nn.Linear(4, 10, bias=False)
            self.dec.weight = self.emb.weight
        def forward(self, x):
            return self.dec(self.emb(x))
    lm = LM(); init(lm)
    out.append([n for n, _ in lm.named_parameters()])
    out.append([n for n, _ in lm.named_parameters(remove_duplicate=False)])
    out.append(sorted(lm.state_dict()))
    opt = torch.optim.SGD(lm.parameters(), lr=0.1)
    out.append(len(opt.param_groups[0]["params"]))
    x = torch.tensor([[1, 2, 3]])
    loss = nn.functional.cross_entropy(lm(x).view(-1, 10), torch.tensor([2, 3, 4]))
    loss.backward(); opt.step()
    out.append([lm.dec.weight is lm.emb.weight, lm.emb.weight])
    # losses with weights as buffers
    ce = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]), label_smoothing=0.1)
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
    out.append([sorted(ce.state_dict()), sorted(bce.state_dict()), R(ce), R(bce)])
    out.append([R(nn.Flatten(0)), R(nn.Unflatten(1, (2, 5))), R(nn.Identity(54, unused=1))])
    out.append(nn.Unflatten(1, (2, 5))(torch.arange(20.).view(2, 10)).shape)
    m = nn.Linear(2, 2)
    out.append([m.train() is m, m.eval() is m, m.requires_grad_(False) is m, m.weight.requires_grad, m.training])
    m2 = nn.Linear(2, 2).type(torch.float64)
    out.append(R(m2.weight.dtype))
    out.append(R(nn.Linear(2, 2).half().float().weight.dtype))
    out.append(sorted(x for x in dir(nn.Linear(1, 1)) if x in ("weight", "bias", "in_features", "forward")))
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = 0.5
            self.inner = nn.Linear(2, 2)
        def extra_repr(self):
            return f"alpha={self.alpha}"
    out.append(R(Custom()))
    out.append(R(nn.Sequential(collections.OrderedDict([("x", Custom()), ("y", nn.Sequential())]))))
    return out


def lazy_prog(torch, init):
    nn = torch.nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.LazyConv2d(4, 3); self.bn = nn.LazyBatchNorm2d(); self.fc = nn.LazyLinear(3)
        def forward(self, x):
            return self.fc(torch.relu(self.bn(self.c(x))).flatten(1))
    net = Net()
    out = [R(net), R(type(net.c.weight).__name__), net.c.has_uninitialized_params()]
    rng = np.random.RandomState(40)
    x = torch.from_numpy(rng.randn(2, 2, 5, 5).astype(np.float32))
    net(x)
    out.append([R(net), type(net.c).__name__, type(net.fc.weight).__name__, net.fc.weight.shape])
    init(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        loss = net(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
        out.append(loss.item())
    out.append(sorted(net.state_dict()))
    n2 = Net()
    n2.load_state_dict(net.state_dict())
    out.append([type(n2.c).__name__, n2.c.weight.shape, n2(x)])
    return out


def sdpa_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd=8, n_head=2):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd); self.c_proj = nn.Linear(n_embd, n_embd)
            self.n_head = n_head; self.n_embd = n_embd
        def forward(self, x, mode):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if mode == "causal":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            elif mode == "mask":
                m = torch.ones(T, T, dtype=torch.bool).tril(diagonal=0)
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)
            elif mode == "float":
                m = torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(torch.tril(torch.ones(T, T)).view(1, 1, T, T) == 0, float('-inf'))
                y = F.softmax(att, dim=-1) @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)
    m = CausalSelfAttention(); init(m)
    rng = np.random.RandomState(41)
    x = torch.from_numpy(rng.randn(2, 5, 8).astype(np.float32))
    out = []
    for mode in ["causal", "mask", "float", "manual"]:
        m.zero_grad()
        y = m(x, mode)
        y.pow(2).sum().backward()
        out += [y, m.c_attn.weight.grad.clone()]
    q = torch.from_numpy(rng.randn(1, 4, 3, 2).astype(np.float32))
    kv = torch.from_numpy(rng.randn(1, 2, 3, 2).astype(np.float32))
    out.append(F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        out.append(F.scaled_dot_product_attention(q, q, q, is_causal=True))
    return out


def grad_utils_prog(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)); init(model)
    rng = np.random.RandomState(42)
    x = torch.from_numpy(rng.randn(5, 3).astype(np.float32))
    out = []
    loss = model(x).pow(2).sum()
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    tn = nn.utils.get_total_norm(grads, norm_type=2.0)
    out.append(tn)
    nn.utils.clip_grads_with_norm_(model.parameters(), max_norm=0.5, total_norm=tn)
    out.append([p.grad.clone() for p in model.parameters()])
    out.append(nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type="inf"))
    out.append(nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type=1, foreach=True))
    vec = nn.utils.parameters_to_vector(model.parameters())
    out.append(vec)
    nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    out.append(model[0].weight)
    out.append(nn.init.calculate_gain("leaky_relu", 0.2))
    out.append([nn.init.calculate_gain(n) for n in ["linear", "conv2d", "sigmoid", "tanh", "relu", "selu"]])
    w = torch.empty(3, 5)
    nn.init.constant_(w, 0.3); out.append(w.clone())
    nn.init.eye_(w); out.append(w.clone())
    c = torch.empty(4, 2, 3, 3); nn.init.dirac_(c, groups=2); out.append(c.clone())
    out.append(nn.init._calculate_fan_in_and_fan_out(c))
    # autograd niceties
    a = torch.from_numpy(rng.randn(3).astype(np.float32)).requires_grad_()
    b = torch.from_numpy(rng.randn(3).astype(np.float32)).requires_grad_()
    y = (a * 2).sum()
    out.append(torch.autograd.grad(y, [a, b], allow_unused=True, materialize_grads=True))
    z = a * b
    torch.autograd.backward([z.sum(), (a ** 2).sum()], grad_tensors=[torch.tensor(2.0), torch.tensor(0.5)])
    out += [a.grad, b.grad]
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        w2 = (a.detach().requires_grad_() * b.detach()).exp().sum()
    out.append(w2)
    with torch.autograd.graph.save_on_cpu():
        r = model(x).sum()
    r.backward()
    out.append(model[2].weight.grad)
    seen = []
    t1 = torch.ones(2, requires_grad=True); t2 = torch.ones(2, requires_grad=True)
    torch.autograd.graph.register_multi_grad_hook((t1, t2), lambda gs: seen.append([g is None for g in gs]))
    (t1 * 3).sum().backward()
    out.append(seen)
    with torch.autograd.set_detect_anomaly(True):
        q = torch.ones(2, requires_grad=True)
        (q * 2).sum().backward()
    out.append(q.grad)
    out.append(torch.is_anomaly_enabled())
    return out


def func2_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional; fc = torch.func
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(3, 4); self.bn = nn.BatchNorm1d(4); self.l2 = nn.Linear(4, 2)
            self.l3 = nn.Linear(4, 2)
            self.l3.weight = self.l2.weight
        def forward(self, x):
            h = torch.relu(self.bn(self.l1(x)))
            return self.l2(h) + self.l3(h)
    net = Net(); init(net)
    rng = np.random.RandomState(50)
    x = torch.from_numpy(rng.randn(6, 3).astype(np.float32))
    out = []
    params = dict(net.named_parameters()); buffers = dict(net.named_buffers())
    out.append(sorted(params)); out.append(sorted(buffers))
    new_w = {"l2.weight": torch.ones(2, 4)}
    net.eval()
    out.append(fc.functional_call(net, new_w, (x,), tie_weights=True))
    out.append(fc.functional_call(net, (new_w, {"l3.weight": torch.zeros(2, 4)}), (x,), tie_weights=False))
    try:
        fc.functional_call(net, {"nope": torch.ones(1)}, (x,), strict=True)
    except RuntimeError:
        out.append("RuntimeError")
    out.append(fc.functional_call(net, {**params, **buffers}, x, strict=True))
    out.append(net.bn.num_batches_tracked)
    net.train()
    fc.functional_call(net, {}, (x,))
    out.append([net.bn.running_mean, net.bn.num_batches_tracked])
    def loss_fn(p, xi):
        o = fc.functional_call(net, p, (xi,))
        return o.pow(2).sum(), o.detach()
    net.eval()
    (g, aux) = fc.grad(loss_fn, has_aux=True)(params, x)
    out.append([g["l2.weight"], aux])
    j, aux2 = fc.jacrev(lambda xi: (net(xi), xi.sum()), has_aux=True)(x[:2])
    out += [j, aux2]
    jf = fc.jacfwd(lambda a, b: (a * b).sum(0), argnums=(0, 1))(x[:2], x[2:4])
    out.append(list(jf))
    out.append(fc.vmap(lambda xi: (xi.sum(), xi * 2), out_dims=(0, 1))(x))
    out.append(fc.vmap(lambda xi: xi @ xi, chunk_size=2)(x))
    out.append(fc.vmap(lambda a, b: a * b, in_dims=(0, None))(x, torch.ones(3)))
    out.append(fc.vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": 1},))({"a": x, "b": x.T}))
    yv, jvp_fn = fc.linearize(lambda t: t.sin() * 2, x[0])
    out += [yv, jvp_fn(torch.ones(3))]
    out.append(fc.functionalize(lambda t: t.clone().add_(1).mul_(2))(x[0]))
    m2 = copy.deepcopy(net)
    fc.replace_all_batch_norm_modules_(m2)
    out.append([m2.bn.running_mean is None, m2.bn.track_running_stats])
    out.append(fc.vmap(fc.grad(lambda p, xi: fc.functional_call(net, p, (xi.unsqueeze(0),)).sum()), in_dims=(None, 0))(params, x)["l1.bias"])
    ps, bs = fc.stack_module_state([copy.deepcopy(net) for _ in range(3)])
    out.append([sorted(ps), sorted(bs), ps["l1.weight"].shape, bs["bn.running_mean"].shape, ps["l1.weight"].requires_grad])
    base = copy.deepcopy(net)      # (torch's .to("meta") would untie l3.weight from l2.weight)
    ens = fc.vmap(lambda p, b, xi: fc.functional_call(base, (p, b), (xi,)), in_dims=(0, 0, None))(ps, bs, x)
    out.append(ens)
    return out


def nn_modules_misc_prog(torch, init):
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(51)
    out = []
    mods = [nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0),
            nn.Bilinear(4, 5, 3), nn.RNNCell(4, 3, nonlinearity="relu"), nn.GRUCell(4, 3), nn.LSTMCell(4, 3),
            nn.MultiLabelSoftMarginLoss(weight=torch.ones(4)), nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(), margin=0.5),
            nn.CosineEmbeddingLoss(margin=0.2), nn.MarginRankingLoss(0.1), nn.HingeEmbeddingLoss(0.5), nn.SoftMarginLoss(),
            nn.PoissonNLLLoss(log_input=False, full=True), nn.GaussianNLLLoss(full=True, eps=1e-3),
            nn.LocalResponseNorm(2), nn.ChannelShuffle(2), nn.RMSNorm([4], eps=1e-5), nn.Fold((4, 4), 2, stride=2), nn.Unfold(2, stride=2),
            nn.CircularPad2d((1, 0, 1, 2)), nn.ReflectionPad1d(2), nn.ZeroPad3d(1), nn.Hardshrink(0.3), nn.Softmin(1), nn.Softmax2d(),
            nn.Threshold(0.1, 20.0), nn.RReLU(0.1, 0.3), nn.PReLU(3, 0.1), nn.CELU(0.5), nn.GLU(1), nn.MaxUnpool2d(2), nn.LPPool2d(2, 2),
            nn.AdaptiveMaxPool2d((2, 3), return_indices=True),
            nn.Upsample(size=(3, 5), mode="bicubic", align_corners=False), nn.UpsamplingNearest2d(scale_factor=2), nn.UpsamplingBilinear2d(scale_factor=2),
            nn.ConvTranspose1d(2, 3, 3, stride=2, dilation=2, output_padding=1), nn.Conv3d(2, 2, 2, padding="same", padding_mode="circular"),
            nn.SyncBatchNorm(3), nn.InstanceNorm1d(3), nn.LayerNorm(4, elementwise_affine=False, bias=False), nn.GroupNorm(1, 3, affine=False)]
    for m in mods:
        if sum(1 for _ in m.parameters()):
            init(m)
    out.append([R(m) for m in mods])
    asm = mods[0]
    h = torch.from_numpy(rng.randn(5, 8).astype(np.float32)); t = torch.from_numpy(rng.randint(0, 10, 5))
    r = asm(h, t)
    out += [r.output, r.loss, type(r).__name__, asm.log_prob(h), asm.predict(h)]
    a4 = torch.from_numpy(rng.randn(3, 4).astype(np.float32)); a5 = torch.from_numpy(rng.randn(3, 5).astype(np.float32))
    out.append(mods[1](a4, a5))
    hx = torch.zeros(3, 3)
    out += [mods[2](a4, hx), mods[3](a4), list(mods[4](a4))]
    tgt = torch.from_numpy((rng.rand(3, 4) > 0.5).astype(np.float32))
    out.append(mods[5](a4, tgt))
    out.append(mods[6](a4, a4 + 0.1, a4.flip(0)))
    out.append(mods[7](a4, a4.flip(0), torch.tensor([1, -1, 1])))
    out.append(mods[8](a4[:, 0], a4[:, 1], torch.tensor([1., -1., 1.])))
    out.append(mods[9](a4, torch.tensor([[1., -1., 1., -1.]] * 3)))
    out.append(mods[10](a4, torch.sign(a4)))
    out.append(mods[11](a4.abs() + 0.1, tgt * 3))
    out.append(mods[12](a4, a4 * 0.9, torch.ones(3, 4) * 0.5))
    img = torch.from_numpy(rng.randn(2, 4, 4, 4).astype(np.float32))
    out += [mods[13](img), mods[14](img), mods[15](a4)]
    unf = mods[17](img)
    out += [unf, mods[16](unf)]
    out += [mods[18](img), mods[19](a4.unsqueeze(0)), mods[20](img.unsqueeze(0)).shape]
    out += [mods[21](a4), mods[22](a4), mods[23](img), mods[24](a4)]
    mods[25].eval()
    out.append(mods[25](a4))
    out += [mods[26](img[:, :3]), mods[27](a4), mods[28](a4)]
    pooled, idx = F.max_pool2d(img, 2, return_indices=True)
    out += [mods[29](pooled, idx), mods[30](img.abs())]
    v, i = mods[31](img)
    out += [v, i]
    out += [mods[32](img), mods[33](img), mods[34](img)]
    out.append(mods[35](img[:, :2, 0]))
    out.append(mods[36](img[:, :2].unsqueeze(2).expand(2, 2, 3, 4, 4)).shape)
    sbn = mods[37]; sbn.train()
    out.append(sbn(img[:, :3]))
    out.append(R(nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(2))))))
    out += [mods[38](img[:, :3, 0]), mods[39](a4), mods[40](img[:, :3])]
    return out


def library_schema_prog(torch, init):
    """Custom ops with scalar returns, Scalar / dtype / device / Tensor?[]
    parameters, mutates_args="unknown", and an in-place op defined with an
    aliasing schema; infer_schema's accepted and refused annotations."""
    CNT[torch.__name__] += 1
    ns = f"pp4_{torch.__name__}_" + "abcdefghijklmnop"[CNT[torch.__name__]]
    lib = torch.library
    T = torch.Tensor
    out = []

    @lib.custom_op(ns + "::count", mutates_args=())
    def count(x: T, thr: typing.Union[int, float, bool] = 0.5) -> tuple[T, int, float, bool]:
        m = x > thr
        return x[m].clone(), int(m.sum()), float(x.sum()), bool(m.any())
    out.append(list(count(torch.arange(4.))) + list(count(torch.arange(4.), 2)))

    @lib.custom_op(ns + "::cast", mutates_args=())
    def cast(x: T, ts: list[Optional[T]], dtype: Optional[torch.dtype] = None) -> T:
        return x.to(dtype or x.dtype).clone() + sum(t.sum() for t in ts if t is not None)
    out += [cast(torch.arange(3), [None, torch.ones(2)], torch.float64), cast(torch.arange(3), [None])]

    @lib.custom_op(ns + "::nnz", mutates_args=())
    def nnz(x: T) -> int:
        return int((x != 0).sum())
    out.append(nnz(torch.arange(3.).requires_grad_()))

    @lib.custom_op(ns + "::bump", mutates_args="unknown")
    def bump(x: T, y: T) -> T:
        y.add_(1)
        return x + y
    y = torch.zeros(2)
    out += [bump(torch.ones(2), y), y]
    lib.define(ns + "::double_", "(Tensor(a!) x) -> Tensor(a!)")
    lib.impl(ns + "::double_", "CompositeExplicitAutograd", lambda x: x.mul_(2))
    z = torch.ones(2)
    r = getattr(torch.ops, ns).double_(z)
    out += [r is z, z]
    out.append(R(str([count._opoverload._schema, cast._opoverload._schema, nnz._opoverload._schema,
                      bump._opoverload._schema, getattr(torch.ops, ns).double_.default._schema]).replace(ns, "NS")))

    def f1(x: T, n: int = 3, f: float = 1.5, b: bool = True, s: str = "a", d: torch.dtype = torch.float32,
           dev: torch.device = torch.device("cpu")) -> T: ...

    def f2(x: T, sc: typing.Union[int, float, bool], scl: list[typing.Union[int, float, bool]],
           ot: list[Optional[T]], oi: Optional[list[int]] = None) -> tuple[T, int, float, bool]: ...

    def f3(x: T) -> tuple[T]: ...

    def f4(x: T, l: list[int] = (1, 2)) -> T: ...

    def f5(x: T, l: list[int] = [1, 2]) -> T: ...      # noqa: B006

    def f6(x: T) -> list[int]: ...

    def f7(x: T, y: list[T], z: Optional[T], *, d: Optional[torch.dtype] = None) -> None: ...
    # torch.Tag (ptcore has it as ptcore.library.Tag)
    Tag = getattr(torch, "Tag", None) or torch.library.Tag

    @lib.custom_op(ns + "::tagged", mutates_args=(), tags=(Tag.pointwise, Tag.needs_fixed_stride_order))
    def tagged(x: T) -> T:
        return x.clone()

    @lib.custom_op(ns + "::tagged1", mutates_args=(), tags=Tag.core)
    def tagged1(x: T) -> T:
        return x.clone()
    out.append([[repr(t) for t in op._opoverload.tags] for op in (tagged, tagged1, count)])
    for f in [f1, f2, f3, f4, f5, f6, f7]:
        for m in [(), "unknown"]:
            try:
                out.append(lib.infer_schema(f, mutates_args=m))
            except ValueError:
                out.append("ValueError")
    return out


PROGRAMS = [library_prog,
            prune_prog,
            parametrize_prog,
            func_prog,
            fwd_ad_prog,
            autograd_fn_prog,
            fuse_prog,
            dqn_prog,
            seq2seq_gru_prog,
            stn_prog,
            style_prog,
            vae_prog,
            amp_prog,
            sched_prog,
            ema_swa_prog,
            ckpt_prog,
            checkpoint_attn_prog,
            transformer_prog,
            named_optim_prog,
            meta_init_prog,
            hooks_prog,
            textcls_prog,
            char_rnn_prog,
            ctc_prog,
            superres_unet_prog,
            printlog_prog,
            dataloader_prog,
            library2_prog,
            errors_prog,
            library_vmap_autocast_prog,
            containers_prog,
            lazy_prog,
            sdpa_prog,
            grad_utils_prog,
            func2_prog,
            nn_modules_misc_prog,
            library_schema_prog]


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program(prog):
    got, want = run_pair(prog, torch)
    assert_close(got, want)
