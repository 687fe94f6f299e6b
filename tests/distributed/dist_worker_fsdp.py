"""Worker (mpiexec -n N): FullyShardedDataParallel training equals one process training on
the concatenated batch (float64), for an MLP and a small transformer (nested units from a
wrap policy), FULL_SHARD / SHARD_GRAD_OP / NO_SHARD, SGD and Adam.

``python dist_worker_fsdp.py train`` runs the training matrix, ``features`` the rest: names,
resharding (gathers counted), full / local / rank-0 state dicts, summon_full_params,
clip_grad_norm_, no_sync, manual wrapping, ignored modules, mixed precision, optimizer state
dicts, use_orig_params, initialization (apply, sync_module_states, meta device), activation
checkpointing, tied weights, hybrid sharding and device meshes, errors."""
import copy
import functools
import sys

import numpy as np

import ptcore
import ptcore.distributed as dist
from ptcore import nn
from ptcore.distributed.fsdp import (
    CPUOffload, FullStateDictConfig, FullyShardedDataParallel as FSDP, LocalStateDictConfig,
    MixedPrecision, OptimStateKeyType, ShardingStrategy, StateDictType,
)
from ptcore.distributed.fsdp.wrap import (
    ModuleWrapPolicy, enable_wrap, size_based_auto_wrap_policy, transformer_auto_wrap_policy,
    wrap,
)

dist.init_process_group()
rank, n = dist.get_rank(), dist.get_world_size()
LOCAL = 3
STEPS = 5
D, VOCAB, SEQ = 8, 11, 5
ptcore.set_default_dtype(ptcore.float64)


def mlp():
    return nn.Sequential(nn.Linear(7, 16), nn.Tanh(), nn.Linear(16, 13), nn.ReLU(),
                         nn.Linear(13, 3))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, 2, batch_first=True)
        self.ln2 = nn.LayerNorm(D)
        self.ff = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.ln2(x))


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 3)

    def forward(self, tokens):
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x).mean(1))


def batch(kind, step):
    g = np.random.default_rng(100 + step)
    if kind == "mlp":
        x = ptcore.from_numpy(g.standard_normal((n * LOCAL, 7)))
    else:
        x = ptcore.from_numpy(g.integers(0, VOCAB, (n * LOCAL, SEQ)))
    y = ptcore.from_numpy(g.integers(0, 3, n * LOCAL))
    return x, y


def mine(t):
    return t[rank * LOCAL:(rank + 1) * LOCAL]


def make(kind, seed=0):
    ptcore.manual_seed(seed)
    return mlp() if kind == "mlp" else Tiny()


def make_opt(name, params):
    if name == "sgd":
        return ptcore.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
    return ptcore.optim.Adam(params, lr=0.01)


def global_loss(local):
    t = local.detach().clone().reshape(1)
    dist.all_reduce(t)
    return float(t) / n


def assert_close(a, b, what, tol=1e-10):
    a = a.detach().double().numpy() if isinstance(a, ptcore.Tensor) else np.asarray(a)
    b = b.detach().double().numpy() if isinstance(b, ptcore.Tensor) else np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
        diff = np.abs(a - b).max() if a.shape == b.shape else f"shapes {a.shape} {b.shape}"
        raise AssertionError(f"rank {rank}: {what}: differs by {diff}")


def assert_same_state(sd, ref_sd, what, tol=1e-10):
    assert list(sd) == list(ref_sd), (what, list(sd), list(ref_sd))
    for k in ref_sd:
        assert_close(sd[k], ref_sd[k], f"{what}: {k}", tol)


def policy_for(kind):
    if kind == "mlp":
        return functools.partial(size_based_auto_wrap_policy, min_num_params=100)
    return ModuleWrapPolicy({Block})


def train_case(kind, strategy, optim, tag="train", **kwargs):
    model = make(kind)
    ref = copy.deepcopy(model)
    fsdp = FSDP(model, sharding_strategy=strategy, auto_wrap_policy=policy_for(kind), **kwargs)
    units = FSDP.fsdp_modules(fsdp)
    assert len(units) == 3, (kind, len(units))          # root + 2 nested units
    opt = make_opt(optim, fsdp.parameters())
    ropt = make_opt(optim, ref.parameters())
    lossf = nn.CrossEntropyLoss()
    for step in range(STEPS):
        x, y = batch(kind, step)
        opt.zero_grad()
        loss = lossf(fsdp(mine(x)), mine(y))
        loss.backward()
        opt.step()
        ropt.zero_grad()
        rloss = lossf(ref(x), y)
        rloss.backward()
        ropt.step()
        assert_close(global_loss(loss), rloss.item(), f"{kind} {strategy} {optim} loss {step}")
    assert_same_state(fsdp.state_dict(), ref.state_dict(), f"{kind} {strategy} {optim}")
    if kwargs.get("use_orig_params"):
        # the original parameters, each this rank's part of it (1-D while sharded)
        names = [k for k, _ in fsdp.named_parameters()]
        assert [k.replace("_fsdp_wrapped_module.", "") for k in names] == \
            [k for k, _ in ref.named_parameters()], names
        for (k, p), q in zip(fsdp.named_parameters(), ref.parameters()):
            sizes = [None] * n
            dist.all_gather_object(sizes, p.numel())
            if strategy == ShardingStrategy.NO_SHARD:
                assert p.shape == q.shape, (k, p.shape, q.shape)
            else:
                assert p.dim() == 1 and sum(sizes) == q.numel(), (k, sizes, q.shape)
        print(f"OK-FSDP {tag} {kind} {strategy.name} {optim} rank={rank}", flush=True)
        return
    # the shards the optimizer sees: 1/n of each unit's padded flat parameter
    for name, p in fsdp.named_parameters():
        assert name.endswith("_fsdp_wrapped_module._flat_param"), name
        u = [m for m in units if m._handle is not None and m._handle.flat_param is p][0]
        h = u._handle
        if strategy == ShardingStrategy.NO_SHARD or h.world == 1:
            assert p.numel() == h.numel, (p.numel(), h.numel)
        else:
            assert p.numel() * h.world == h.padded_numel and h.padded_numel - h.numel < h.world
    print(f"OK-FSDP {tag} {kind} {strategy.name} {optim} rank={rank}", flush=True)


def stage_train():
    for kind in ("mlp", "tiny"):
        for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP,
                         ShardingStrategy.NO_SHARD):
            for optim in ("sgd", "adam"):
                train_case(kind, strategy, optim)


def sgd_steps(fsdp, ref, batches, lr=0.5):
    """SGD steps of the FSDP model on this rank's part and of the reference on the whole
    of each (x, y) batch."""
    lossf = nn.CrossEntropyLoss()
    opt = ptcore.optim.SGD(fsdp.parameters(), lr=lr)
    ropt = ptcore.optim.SGD(ref.parameters(), lr=lr)
    for xb, yb in batches:
        opt.zero_grad()
        ropt.zero_grad()
        lossf(fsdp(mine(xb)), mine(yb)).backward()
        lossf(ref(xb), yb).backward()
        opt.step()
        ropt.step()


def count_gathers(units):
    counts = {"n": 0}
    for u in units:
        h = u._handle
        orig = h.gather

        def counted(dtype=None, _orig=orig):
            counts["n"] += 1
            return _orig(dtype)
        h.gather = counted
    return counts


def stage_features():
    lossf = nn.CrossEntropyLoss()
    x, y = batch("tiny", 0)

    # names and structure as torch's
    fsdp = FSDP(make("tiny"), auto_wrap_policy=functools.partial(
        transformer_auto_wrap_policy, transformer_layer_cls={Block}))
    names = [k for k, _ in fsdp.named_parameters()]
    assert names == ["_fsdp_wrapped_module._flat_param",
                     "_fsdp_wrapped_module.blocks.0._fsdp_wrapped_module._flat_param",
                     "_fsdp_wrapped_module.blocks.1._fsdp_wrapped_module._flat_param"], names
    assert isinstance(fsdp.module.blocks[0], FSDP) and fsdp.module is fsdp._fsdp_wrapped_module
    assert isinstance(fsdp.module.blocks[0].module, Block)
    assert list(fsdp.state_dict()) == list(make("tiny").state_dict())
    assert [m for m in FSDP.fsdp_modules(fsdp, root_only=True)] == [fsdp]
    # outside forward the original parameters are no registered parameters; sharded, they
    # keep their shapes but no values (as torch's views of the freed flat parameter)
    head = fsdp.module.head
    assert "weight" not in head._parameters and tuple(head.weight.shape) == (3, D)
    assert head.weight.is_meta == (n > 1)
    print(f"OK-FSDP names rank={rank}", flush=True)

    # FULL_SHARD gathers again for backward; SHARD_GRAD_OP keeps the forward's gathers
    for strategy, extra in ((ShardingStrategy.FULL_SHARD, True),
                            (ShardingStrategy.SHARD_GRAD_OP, False)):
        f = FSDP(make("tiny"), sharding_strategy=strategy,
                 auto_wrap_policy=ModuleWrapPolicy({Block}))
        counts = count_gathers(FSDP.fsdp_modules(f))
        loss = lossf(f(mine(x)), mine(y))
        assert counts["n"] == 3, counts
        loss.backward()
        assert (counts["n"] > 3) == (extra and n > 1), (strategy, counts)
        for u in FSDP.fsdp_modules(f):
            assert u._handle._bwd_full is None
    print(f"OK-FSDP reshard rank={rank}", flush=True)

    # load a full state dict; the outputs equal the unwrapped model's
    ref = make("tiny", seed=5)
    fsdp = FSDP(make("tiny"), auto_wrap_policy=ModuleWrapPolicy({Block}))
    res = fsdp.load_state_dict(ref.state_dict())
    assert not res.missing_keys and not res.unexpected_keys
    with ptcore.no_grad():
        assert_close(fsdp(mine(x)), ref(mine(x)), "output after load_state_dict")
    assert_same_state(fsdp.state_dict(), ref.state_dict(), "state_dict after load")
    try:
        fsdp.load_state_dict({"bogus": ptcore.zeros(1)})
        raise AssertionError("no error for a wrong state dict")
    except RuntimeError as e:
        assert "Unexpected key" in str(e) and "Missing key" in str(e), e
    # FULL_STATE_DICT with rank0_only; LOCAL_STATE_DICT round trip
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT, cfg):
        sd = fsdp.state_dict()
    assert (len(sd) > 0) == (rank == 0)
    if rank == 0:
        assert_same_state(sd, ref.state_dict(), "rank0_only state dict")
    with FSDP.state_dict_type(fsdp, StateDictType.LOCAL_STATE_DICT, LocalStateDictConfig()):
        local = fsdp.state_dict()
        assert "_flat_param" in local and "blocks.0._flat_param" in local, list(local)
        other = FSDP(make("tiny", seed=9), auto_wrap_policy=ModuleWrapPolicy({Block}))
        with FSDP.state_dict_type(other, StateDictType.LOCAL_STATE_DICT):
            other.load_state_dict(local)
    assert FSDP.get_state_dict_type(fsdp).state_dict_type == StateDictType.FULL_STATE_DICT
    assert_same_state(other.state_dict(), ref.state_dict(), "local state dict round trip")
    try:
        with FSDP.state_dict_type(fsdp, StateDictType.SHARDED_STATE_DICT):
            fsdp.state_dict()
        raise AssertionError("SHARDED_STATE_DICT did not raise")
    except NotImplementedError:
        pass
    print(f"OK-FSDP state_dict rank={rank}", flush=True)

    # summon_full_params: full shapes, in-place changes written back; the original
    # parameters are registered (named_parameters gives the unwrapped model's names)
    with FSDP.summon_full_params(fsdp):
        w = fsdp.module.head.weight
        assert isinstance(w, nn.Parameter) and tuple(w.shape) == (3, D)
        got = [(k, tuple(p.shape)) for k, p in fsdp.named_parameters()]
        assert got == [(k, tuple(p.shape)) for k, p in ref.named_parameters()], got
        assert_close(w, ref.head.weight, "summoned head.weight")
        assert_close(fsdp.module.blocks[1].ff[0].weight, ref.blocks[1].ff[0].weight,
                     "summoned nested weight")
        with ptcore.no_grad():
            w.add_(1.0)
            fsdp.module.blocks[0].attn.in_proj_weight.mul_(2.0)
    with ptcore.no_grad():
        ref.head.weight.add_(1.0)
        ref.blocks[0].attn.in_proj_weight.mul_(2.0)
    assert_same_state(fsdp.state_dict(), ref.state_dict(), "after summon writeback")
    flat_names = [k for k, _ in fsdp.named_parameters()]
    assert len(flat_names) == 3 and all(k.endswith("._flat_param") for k in flat_names)
    with FSDP.summon_full_params(fsdp, writeback=False):
        with ptcore.no_grad():
            fsdp.module.head.weight.zero_()
    assert_same_state(fsdp.state_dict(), ref.state_dict(), "after summon without writeback")
    print(f"OK-FSDP summon rank={rank}", flush=True)

    # clip_grad_norm_ equals the single-process norm (2-norm and inf-norm)
    for norm_type in (2.0, float("inf")):
        model = make("tiny")
        ref = copy.deepcopy(model)
        fsdp = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({Block}))
        lossf(fsdp(mine(x)), mine(y)).backward()
        lossf(ref(x), y).backward()
        total = fsdp.clip_grad_norm_(0.05, norm_type)
        rtotal = nn.utils.clip_grad_norm_(ref.parameters(), 0.05, norm_type)
        assert_close(total, rtotal, f"clip_grad_norm_ {norm_type}")
        assert total.dtype == rtotal.dtype, (total.dtype, rtotal.dtype)
        ptcore.optim.SGD(fsdp.parameters(), lr=1.0).step()
        ptcore.optim.SGD(ref.parameters(), lr=1.0).step()
        assert_same_state(fsdp.state_dict(), ref.state_dict(), f"step after clip {norm_type}")
    print(f"OK-FSDP clip rank={rank}", flush=True)

    # no_sync: the first micro-batch's gradients stay local, the second backward reduces both
    for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.NO_SHARD):
        model = make("mlp")
        ref = copy.deepcopy(model)
        fsdp = FSDP(model, sharding_strategy=strategy,
                    auto_wrap_policy=functools.partial(size_based_auto_wrap_policy,
                                                       min_num_params=100))
        opt = ptcore.optim.SGD(fsdp.parameters(), lr=0.1)
        ropt = ptcore.optim.SGD(ref.parameters(), lr=0.1)
        for step in range(2):
            opt.zero_grad()
            ropt.zero_grad()
            for micro in range(2):
                xb, yb = batch("mlp", 10 * step + micro)
                if micro == 0:
                    with fsdp.no_sync():
                        lossf(fsdp(mine(xb)), mine(yb)).backward()
                    assert all(p.grad is None for p in fsdp.parameters())
                else:
                    lossf(fsdp(mine(xb)), mine(yb)).backward()
                lossf(ref(xb), yb).backward()
            opt.step()
            ropt.step()
        assert_same_state(fsdp.state_dict(), ref.state_dict(), f"no_sync {strategy}")
    print(f"OK-FSDP no_sync rank={rank}", flush=True)

    # manual nesting with enable_wrap / wrap, CPUOffload accepted; equals single-process
    ptcore.manual_seed(0)
    with enable_wrap(wrapper_cls=FSDP, cpu_offload=CPUOffload(offload_params=True)):
        inner = wrap(nn.Linear(7, 16))
        model = nn.Sequential(inner, nn.ReLU(), nn.Linear(16, 3))
        fsdp = wrap(model)
    assert wrap(nn.Linear(1, 1)).__class__ is nn.Linear        # outside enable_wrap: as is
    ptcore.manual_seed(0)
    ref = nn.Sequential(nn.Linear(7, 16), nn.ReLU(), nn.Linear(16, 3))
    assert isinstance(fsdp, FSDP) and isinstance(fsdp.module[0], FSDP)
    sgd_steps(fsdp, ref, [batch("mlp", 0)])
    assert_same_state(fsdp.state_dict(), ref.state_dict(), "manual wrap")
    print(f"OK-FSDP wrap rank={rank}", flush=True)

    # ignored modules stay ordinary (replicated) parameters
    model = make("mlp")
    fsdp = FSDP(model, ignored_modules=[model[4]])
    names = [k for k, _ in fsdp.named_parameters()]
    assert names == ["_fsdp_wrapped_module.4.weight", "_fsdp_wrapped_module.4.bias",
                     "_fsdp_wrapped_module._flat_param"] or \
        names == ["_fsdp_wrapped_module._flat_param", "_fsdp_wrapped_module.4.weight",
                  "_fsdp_wrapped_module.4.bias"], names
    assert list(fsdp.state_dict()) == list(make("mlp").state_dict())
    print(f"OK-FSDP ignored rank={rank}", flush=True)

    # mixed precision: bfloat16 compute, float32 shards, losses close to float64
    model = make("mlp").float()
    ref = copy.deepcopy(model).double()
    mp = MixedPrecision(param_dtype=ptcore.bfloat16, reduce_dtype=ptcore.float32,
                        buffer_dtype=ptcore.bfloat16)
    fsdp = FSDP(model, mixed_precision=mp, auto_wrap_policy=functools.partial(
        size_based_auto_wrap_policy, min_num_params=100))
    assert all(p.dtype == ptcore.float32 for p in fsdp.parameters())
    opt = ptcore.optim.SGD(fsdp.parameters(), lr=0.1)
    ropt = ptcore.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        xb, yb = batch("mlp", step)
        opt.zero_grad()
        out = fsdp(mine(xb))
        assert out.dtype == ptcore.bfloat16, out.dtype
        loss = lossf(out.float(), mine(yb))
        loss.backward()
        assert all(p.grad.dtype == ptcore.float32 for p in fsdp.parameters())
        opt.step()
        ropt.zero_grad()
        rloss = lossf(ref(xb), yb)
        rloss.backward()
        ropt.step()
        assert abs(global_loss(loss) - rloss.item()) < 0.03, (global_loss(loss), rloss.item())
    sd = fsdp.state_dict()
    assert all(v.dtype == ptcore.float32 for v in sd.values())
    assert_same_state(sd, ref.state_dict(), "bfloat16 mixed precision", tol=0.02)
    print(f"OK-FSDP mixed rank={rank}", flush=True)

    # optimizer state dicts: full (by name, original shapes) equals the single-process
    # optimizer's; loading it into a fresh model and optimizer continues the same training
    for optim in ("adam", "sgd"):
        model = make("tiny")
        ref = copy.deepcopy(model)
        fsdp = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({Block}))
        opt, ropt = make_opt(optim, fsdp.parameters()), make_opt(optim, ref.parameters())

        def step(f, o, r, ro, s):
            xb, yb = batch("tiny", s)
            o.zero_grad()
            lossf(f(mine(xb)), mine(yb)).backward()
            o.step()
            ro.zero_grad()
            lossf(r(xb), yb).backward()
            ro.step()
        for s in range(2):
            step(fsdp, opt, ref, ropt, s)
        full = FSDP.full_optim_state_dict(fsdp, opt)
        assert (len(full) > 0) == (rank == 0)
        osd = FSDP.optim_state_dict(fsdp, opt)
        rsd = ropt.state_dict()
        rnames = [k for k, _ in ref.named_parameters()]
        assert sorted(osd["state"]) == sorted(rnames), (list(osd["state"]), rnames)
        assert sorted(osd["param_groups"][0]["params"]) == sorted(rnames)
        for i, name in enumerate(rnames):
            for k, v in rsd["state"][i].items():
                assert_close(osd["state"][name][k], v, f"{optim} optimizer state {name} {k}")
        if rank == 0:
            for name in rnames:
                for k, v in full["state"][name].items():
                    assert_close(v, osd["state"][name][k], "full_optim_state_dict")
        # re-keyed by index: the unwrapped optimizer's; and back, then sharded: this rank's
        by_id = FSDP.rekey_optim_state_dict(osd, OptimStateKeyType.PARAM_ID, ref)
        assert sorted(by_id["state"]) == sorted(rsd["state"])
        assert by_id["param_groups"][0]["params"] == sorted(rsd["param_groups"][0]["params"])
        for i, st in rsd["state"].items():
            for k, v in st.items():
                assert_close(by_id["state"][i][k], v, "rekey_optim_state_dict PARAM_ID")
        by_name = FSDP.rekey_optim_state_dict(rsd, OptimStateKeyType.PARAM_NAME, ref)
        sharded = FSDP.shard_full_optim_state_dict(by_name, fsdp)
        for i, st in opt.state_dict()["state"].items():
            for k, v in st.items():
                assert_close(sharded["state"][i][k], v, "rekey to PARAM_NAME, then shard")
        fresh = FSDP(make("tiny", seed=3), auto_wrap_policy=ModuleWrapPolicy({Block}))
        fresh.load_state_dict(fsdp.state_dict())
        fopt = make_opt(optim, fresh.parameters())
        fopt.load_state_dict(FSDP.optim_state_dict_to_load(fresh, fopt, osd))
        scattered = FSDP.scatter_full_optim_state_dict(full if rank == 0 else None, fresh)
        mine_sd = fopt.state_dict()
        for i in mine_sd["state"]:
            for k, v in mine_sd["state"][i].items():
                assert_close(scattered["state"][i][k], v, "scatter_full_optim_state_dict")
        for s in range(2, 4):
            step(fresh, fopt, ref, ropt, s)
        assert_same_state(fresh.state_dict(), ref.state_dict(), f"{optim} resumed training")
    print(f"OK-FSDP optim rank={rank}", flush=True)

    # use_orig_params=True: the optimizer steps on the original parameters' local parts
    for kind, strategy, optim in (("mlp", ShardingStrategy.FULL_SHARD, "adam"),
                                  ("tiny", ShardingStrategy.FULL_SHARD, "sgd"),
                                  ("tiny", ShardingStrategy.SHARD_GRAD_OP, "adam"),
                                  ("mlp", ShardingStrategy.NO_SHARD, "sgd")):
        train_case(kind, strategy, optim, tag="orig", use_orig_params=True)
    fsdp = FSDP(make("tiny"), auto_wrap_policy=ModuleWrapPolicy({Block}), use_orig_params=True)
    ref = make("tiny")
    with FSDP.summon_full_params(fsdp):
        w = fsdp.module.blocks[0].module.ff[0].weight
        assert isinstance(w, nn.Parameter) and w.shape == ref.blocks[0].ff[0].weight.shape
        with ptcore.no_grad():
            w.mul_(3.0)
            ref.blocks[0].ff[0].weight.mul_(3.0)
    assert_same_state(fsdp.state_dict(), ref.state_dict(), "use_orig_params summon writeback")
    lossf(fsdp(mine(x)), mine(y)).backward()
    lossf(ref(x), y).backward()
    assert_close(fsdp.clip_grad_norm_(1.0), nn.utils.clip_grad_norm_(ref.parameters(), 1.0),
                 "use_orig_params clip_grad_norm_")
    print(f"OK-FSDP orig rank={rank}", flush=True)

    # apply() sees the full parameters (initialization); sync_module_states broadcasts
    # rank 0's parameters; meta-device modules are materialized
    def init(m):
        if isinstance(m, nn.Linear):
            with ptcore.no_grad():
                m.weight.fill_(0.25)
                m.bias.copy_(ptcore.arange(m.bias.numel(), dtype=m.bias.dtype))
    fsdp = FSDP(make("mlp"), auto_wrap_policy=policy_for("mlp"))
    fsdp.apply(init)
    ref = make("mlp").apply(init)
    assert_same_state(fsdp.state_dict(), ref.state_dict(), "apply")
    fsdp = FSDP(make("tiny", seed=rank), auto_wrap_policy=ModuleWrapPolicy({Block}),
                sync_module_states=True)
    assert_same_state(fsdp.state_dict(), make("tiny", seed=0).state_dict(),
                      "sync_module_states")
    with ptcore.device("meta"):
        meta_model = mlp()
    ptcore.manual_seed(7)
    fsdp = FSDP(meta_model, auto_wrap_policy=policy_for("mlp"))
    sd = fsdp.state_dict()
    assert not any(v.is_meta for v in sd.values())
    assert all(float(v.abs().sum()) > 0 for v in sd.values())
    calls = []
    with ptcore.device("meta"):
        meta_model = mlp()

    def materialize(m):
        calls.append(type(m).__name__)
        m.to_empty(device="cpu", recurse=False)
        with ptcore.no_grad():
            for p in m.parameters(recurse=False):
                p.fill_(1.0)
    fsdp = FSDP(meta_model, param_init_fn=materialize, auto_wrap_policy=policy_for("mlp"))
    assert calls == ["Linear"] * 3, calls
    assert all(bool((v == 1).all()) for v in fsdp.state_dict().values())
    print(f"OK-FSDP init rank={rank}", flush=True)

    # activation checkpointing inside the units: the recomputation in backward sees the
    # gathered parameters again
    from ptcore.utils.checkpoint import checkpoint

    class CkptBlock(Block):
        def forward(self, x):
            return checkpoint(super().forward, x, use_reentrant=False)

    class CkptTiny(Tiny):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([CkptBlock(), CkptBlock()])
    for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP):
        for use_orig in (False, True):
            ptcore.manual_seed(0)
            model = CkptTiny()
            ref = copy.deepcopy(model)
            fsdp = FSDP(model, sharding_strategy=strategy, use_orig_params=use_orig,
                        auto_wrap_policy=ModuleWrapPolicy({CkptBlock}))
            sgd_steps(fsdp, ref, [batch("tiny", s) for s in range(2)])
            assert_same_state(fsdp.state_dict(), ref.state_dict(),
                              f"checkpointing {strategy} use_orig_params={use_orig}")
    print(f"OK-FSDP checkpoint rank={rank}", flush=True)

    # tied weights (one parameter under two names) and, with use_orig_params, frozen
    # parameters next to trained ones in one unit
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D)
            self.mid = nn.Linear(D, D)
            self.out = nn.Linear(D, VOCAB, bias=False)
            self.out.weight = self.embed.weight

        def forward(self, t):
            return self.out(self.mid(self.embed(t)).tanh()).mean(1)
    for use_orig in (False, True):
        ptcore.manual_seed(0)
        model = Tied()
        model.mid.bias.requires_grad_(not use_orig)
        ref = copy.deepcopy(model)
        fsdp = FSDP(model, use_orig_params=use_orig)
        xb, _ = batch("tiny", 1)
        yb = ptcore.from_numpy(np.random.default_rng(0).integers(0, VOCAB, n * LOCAL))
        sgd_steps(fsdp, ref, [(xb, yb)] * 2)
        sd = fsdp.state_dict()
        assert_same_state(sd, ref.state_dict(), f"tied weights use_orig_params={use_orig}")
        assert_close(sd["out.weight"], sd["embed.weight"], "tied")
    print(f"OK-FSDP tied rank={rank}", flush=True)

    # hybrid sharding: with the world group as FULL_SHARD; with a (shard, replicate) pair
    # of groups (each rank its own shard group) as NO_SHARD; over a 1-D device mesh
    train_case("mlp", ShardingStrategy.HYBRID_SHARD, "adam", tag="hybrid")
    own = [dist.new_group([r]) for r in range(n)][rank]
    train_case("mlp", ShardingStrategy.HYBRID_SHARD, "sgd", tag="hybrid",
               process_group=(own, dist.group.WORLD))
    train_case("tiny", ShardingStrategy._HYBRID_SHARD_ZERO2, "sgd", tag="hybrid",
               process_group=(own, dist.group.WORLD))
    mesh = dist.init_device_mesh("cpu", (n,))
    train_case("mlp", ShardingStrategy.FULL_SHARD, "sgd", tag="hybrid", device_mesh=mesh)
    if n == 2:
        mesh2 = dist.init_device_mesh("cpu", (2, 1))
        train_case("tiny", ShardingStrategy.HYBRID_SHARD, "adam", tag="hybrid",
                   device_mesh=mesh2)
    print(f"OK-FSDP hybrid rank={rank}", flush=True)

    # errors as torch
    for kwargs, exc in (({"device_id": "meta"}, ValueError),
                        ({"sharding_strategy": "FULL_SHARD"}, TypeError)):
        try:
            FSDP(mlp(), **kwargs)
            raise AssertionError(f"no error for {kwargs}")
        except exc:
            pass
    try:
        FSDP(nn.Sequential(FSDP(nn.Linear(2, 2))), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
        raise AssertionError("no error for auto wrapping an FSDP module")
    except ValueError:
        pass
    try:
        with FSDP.summon_full_params(fsdp, rank0_only=True, writeback=True):
            pass
        raise AssertionError("no error for rank0_only with writeback")
    except NotImplementedError:
        pass
    print(f"OK-FSDP errors rank={rank}", flush=True)


{"train": stage_train, "features": stage_features}[sys.argv[1]]()
dist.destroy_process_group()
