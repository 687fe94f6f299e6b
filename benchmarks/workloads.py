"""End-to-end training workloads: ptcore vs PyTorch, same program, same weights.

    python benchmarks/workloads.py [--only NAME ...] [--quick] [--loaded] [--autocast]

A workload is any object with

    name: str
    build(lib, seed, small=False) -> state   # lib is ptcore or torch: model, optimizer and the data
                                             # batches (from numpy.random.Generator(seed), lib.from_numpy)
    params(state) -> list of tensors         # every parameter and buffer, fixed order, same for both libs
    step(state, i) -> float                  # one train step on batch i (forward, backward, clip,
                                             # optimizer step); returns the loss

For each workload the runner builds both libraries with the same seed, copies
ptcore's parameters and buffers into torch's through NumPy, runs 20 steps in
each and fails loudly when a loss differs by more than 2e-3 (relative); then it
times ``step`` (warm-up, then the median ms/step, ptcore and torch alternating
so load drift biases neither) at 1 thread and at each library's default thread
count, and prints one table.  Targets (issue 22): every workload <= 1.0x torch
at both thread counts, the GPT <= 0.9x.

``--autocast`` runs every step under ``autocast("cpu", dtype=bfloat16)`` in
both libraries (CPU mixed precision: the products in bfloat16), without the
loss agreement check.

The transformer workloads live here; the recurrent, GAN, LeNet and MLP ones
in ``workloads_recurrent_gan.py`` (its ``WORKLOADS`` list, when present).

``--loaded`` times a shared machine instead (issue 63): every workload (and
two memory-bound micro rows: ``a + b`` over 1e6 float32 with a fresh output,
a 2048x2048 + (2048,) broadcast add) at 1 thread and at the default thread
count in both libraries, on the machine as it is ("idle") and while a busy
loop in a subprocess the runner starts keeps one core busy ("loaded").  The
four settings alternate sample by sample (0.15 s each, in a random order per
round), the idle and loaded blocks alternate too (the busy loop is paused
with SIGSTOP in between: 1 pair of blocks with --quick, else 3), and each
cell is the median of its samples; before a block is timed, ptcore's default
setting runs until its team size has followed the change (ptcore lowers its
team while the process does not get the cores, see
``ptcore/_ops/kernels/include/ptc_team.h``; the time that took is printed, and the table
gives the mean team of ptcore's default samples).  Targets: at the default
thread count no row slower than ptcore's own 1-thread time, nor than torch's
default, idle or loaded.  The machine's load (/proc/loadavg) before and after
and the runnable tasks during each condition are printed: on a machine that
other jobs load, "idle" is not idle.
"""
import argparse
import gc
import importlib.util
import math
import os
import statistics
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))

AGREE_STEPS = 20
AGREE_RTOL = 2e-3


# --------------------------------------------------------------------------
# (a) character-level GPT (nanoGPT's model, dropout 0)
# --------------------------------------------------------------------------

def _gpt_classes(lib):
    nn = lib.nn
    F = nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd, n_head, block, sdpa):
            super().__init__()
            self.n_head = n_head
            self.sdpa = sdpa
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            if not sdpa:
                self.register_buffer("bias", lib.tril(lib.ones(block, block)).view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            hs = C // self.n_head
            k = k.view(B, T, self.n_head, hs).transpose(1, 2)
            q = q.view(B, T, self.n_head, hs).transpose(1, 2)
            v = v.view(B, T, self.n_head, hs).transpose(1, 2)
            if self.sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self, n_embd):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, n_embd, n_head, block, sdpa):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention(n_embd, n_head, block, sdpa)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP(n_embd)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, vocab, block, n_layer, n_head, n_embd, sdpa):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block(n_embd, n_head, block, sdpa) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.lm_head.weight = self.wte.weight        # weight tying

        def forward(self, idx, targets):
            B, T = idx.size()
            pos = lib.arange(0, T, dtype=lib.long)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT


class GPTWorkload:
    """Character-level GPT: 4 layers x 4 heads, 128 wide, block 64, batch 12,
    vocabulary 65, AdamW (weight decay 0.1), clip_grad_norm_(1.0)."""

    def __init__(self, sdpa):
        self.sdpa = sdpa
        self.name = "gpt-sdpa" if sdpa else "gpt-masked"

    def build(self, lib, seed, small=False):
        lib.manual_seed(seed)
        if small:
            n_layer, n_head, n_embd, block, batch = 2, 2, 32, 16, 3
        else:
            n_layer, n_head, n_embd, block, batch = 4, 4, 128, 64, 12
        vocab = 65
        model = _gpt_classes(lib)(vocab, block, n_layer, n_head, n_embd, self.sdpa)
        model.train()
        with lib.no_grad():                              # nanoGPT's initialisation
            for name, p in model.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif p.dim() >= 2:
                    std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                    p.normal_(0.0, std)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
        rng = np.random.default_rng(seed)
        # "text" with structure a model can learn: a random walk over the vocabulary
        batches = []
        for _ in range(8):
            steps = rng.integers(-2, 3, size=(batch, block + 1))
            toks = (np.cumsum(steps, axis=1) + rng.integers(0, vocab, size=(batch, 1))) % vocab
            toks = lib.from_numpy(toks.astype(np.int64))
            batches.append((toks[:, :-1].contiguous(), toks[:, 1:].contiguous()))
        return {"lib": lib, "model": model, "opt": opt, "batches": batches}

    def params(self, state):
        m = state["model"]
        return list(m.parameters()) + list(m.buffers())

    def step(self, state, i):
        lib, model, opt = state["lib"], state["model"], state["opt"]
        x, y = state["batches"][i % len(state["batches"])]
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()


# --------------------------------------------------------------------------
# (e) nn.TransformerEncoder + nn.MultiheadAttention, token classification
# --------------------------------------------------------------------------

def _encoder_classes(lib):
    nn = lib.nn

    class Tagger(nn.Module):
        def __init__(self, vocab, classes, d_model, nhead, layers, seq):
            super().__init__()
            self.emb = nn.Embedding(vocab, d_model)
            self.pos = nn.Parameter(lib.zeros(1, seq, d_model))
            layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model,
                                               dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(d_model, classes)

        def forward(self, x):
            return self.head(self.enc(self.emb(x) + self.pos[:, :x.shape[1]]))

    return Tagger


class EncoderWorkload:
    """nn.TransformerEncoder (batch_first, d_model 128, 4 heads, 2 layers, ReLU
    feed-forward 512) tagging each token of a 64-token sequence (batch 16) with
    one of 10 classes; Adam, clip_grad_norm_(1.0)."""

    name = "transformer-encoder"

    def build(self, lib, seed, small=False):
        lib.manual_seed(seed)
        if small:
            d_model, nhead, layers, seq, batch = 32, 2, 1, 12, 3
        else:
            d_model, nhead, layers, seq, batch = 128, 4, 2, 64, 16
        vocab, classes = 100, 10
        model = _encoder_classes(lib)(vocab, classes, d_model, nhead, layers, seq)
        model.train()
        with lib.no_grad():
            model.pos.normal_(0.0, 0.02)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        rng = np.random.default_rng(seed)
        batches = []
        for _ in range(8):
            toks = rng.integers(0, vocab, size=(batch, seq))
            # the class of a token depends on it and on its left neighbour
            tags = (toks + np.roll(toks, 1, axis=1)) % classes
            batches.append((lib.from_numpy(toks.astype(np.int64)),
                            lib.from_numpy(tags.astype(np.int64))))
        return {"lib": lib, "model": model, "opt": opt, "batches": batches, "classes": classes}

    def params(self, state):
        m = state["model"]
        return list(m.parameters()) + list(m.buffers())

    def step(self, state, i):
        lib, model, opt = state["lib"], state["model"], state["opt"]
        x, y = state["batches"][i % len(state["batches"])]
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, state["classes"]), y.reshape(-1))
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()


def _other_workloads():
    """``WORKLOADS`` of workloads_recurrent_gan.py next to this file, if present."""
    path = os.path.join(_HERE, "workloads_recurrent_gan.py")
    if not os.path.exists(path):
        return []
    spec = importlib.util.spec_from_file_location("_ptcore_workloads_recurrent_gan", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.WORKLOADS)


WORKLOADS = [GPTWorkload(sdpa=False), GPTWorkload(sdpa=True), EncoderWorkload()]


def all_workloads():
    return WORKLOADS + _other_workloads()


# --------------------------------------------------------------------------
# runner
# --------------------------------------------------------------------------

def build_pair(wl, ptcore, torch, seed=0, small=False):
    """Both libraries' states, torch's parameters and buffers set to ptcore's."""
    kw = {"small": True} if small else {}
    ps = wl.build(ptcore, seed, **kw)
    ts = wl.build(torch, seed, **kw)
    pp, tp = wl.params(ps), wl.params(ts)
    if len(pp) != len(tp):
        raise RuntimeError(f"{wl.name}: ptcore has {len(pp)} parameters/buffers, torch {len(tp)}")
    with torch.no_grad():
        for k, (a, b) in enumerate(zip(pp, tp)):
            arr = a.detach().numpy().copy()     # (ascontiguousarray turns 0-d into 1-d)
            if tuple(arr.shape) != tuple(b.shape):
                raise RuntimeError(f"{wl.name}: parameter {k} has shape {tuple(arr.shape)} in ptcore "
                                   f"but {tuple(b.shape)} in torch")
            b.copy_(torch.from_numpy(arr.copy()))
    return ps, ts


def loss_agreement(wl, ps, ts, steps=AGREE_STEPS):
    """(largest relative loss difference, ptcore losses, torch losses)."""
    lp, lt, worst = [], [], 0.0
    for i in range(steps):
        a, b = wl.step(ps, i), wl.step(ts, i)
        lp.append(a)
        lt.append(b)
        if not (math.isfinite(a) and math.isfinite(b)):
            raise AssertionError(f"{wl.name}: step {i} loss ptcore {a}, torch {b} (not finite)")
        worst = max(worst, abs(a - b) / max(abs(b), 1e-12))
    return worst, lp, lt


def check_agreement(wl, ps, ts, steps=AGREE_STEPS, rtol=AGREE_RTOL):
    worst, lp, lt = loss_agreement(wl, ps, ts, steps)
    if worst > rtol:
        raise AssertionError(
            f"{wl.name}: losses of ptcore and torch differ by {worst:.3g} relative (> {rtol}) within "
            f"{steps} steps\n  ptcore {[round(v, 5) for v in lp]}\n  torch  {[round(v, 5) for v in lt]}")
    return worst, lp, lt


def paired_step_times(fns, budget_s, clock=time.perf_counter):
    """Median seconds per call of each of ``fns``, the functions alternating
    in rounds until each has run about ``budget_s`` seconds; ``clock`` is
    wall time, or ``time.process_time`` (CPU time of the process: at one
    thread, robust to other programs taking the CPU)."""
    for f in fns:                    # warm-up
        f()
        f()
    per = []
    for f in fns:
        t0 = clock()
        f()
        per.append(max(clock() - t0, 1e-6))
    reps = [max(1, int(0.1 / p)) for p in per]            # ~0.1 s per timing sample
    rounds = max(5, int(budget_s / 0.1))
    times = [[] for _ in fns]
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            for k, f in enumerate(fns):
                t0 = clock()
                for _ in range(reps[k]):
                    f()
                times[k].append((clock() - t0) / reps[k])
            if r % 4 == 3:
                gc.collect()
    finally:
        if gc_was:
            gc.enable()
    return [statistics.median(t) for t in times]


def prepared_pair(wl, ptcore, torch, check, failures):
    """Both libraries' states built at 1 thread (:func:`build_pair`), after the
    loss agreement check when ``check`` (a failure is printed and its name
    appended to ``failures``)."""
    _set_threads(ptcore, torch, 1, 1)
    ps, ts = build_pair(wl, ptcore, torch, seed=0)
    if check:
        try:
            worst, lp, lt = check_agreement(wl, ps, ts, rtol=getattr(wl, "agree_rtol", AGREE_RTOL))
            print(f"{wl.name}: {AGREE_STEPS}-step losses agree, max rel diff {worst:.2e} "
                  f"(first {lp[0]:.5f} / {lt[0]:.5f}, last {lp[-1]:.5f} / {lt[-1]:.5f})",
                  flush=True)
        except AssertionError as e:
            print(f"FAIL {e}", flush=True)
            failures.append(wl.name)
    return ps, ts


def step_fns(wl, ps, ts):
    """Two argument-less functions running the next training step of ptcore's
    state ``ps`` and of torch's ``ts`` (each on its own batch counter)."""
    cnt = [0, 0]

    def fp():
        cnt[0] += 1
        wl.step(ps, cnt[0])

    def ft():
        cnt[1] += 1
        wl.step(ts, cnt[1])

    return fp, ft


class AutocastWorkload:
    """A workload whose steps run under ``lib.autocast("cpu", dtype=lib.bfloat16)``
    (``--autocast``): CPU mixed precision, the products in bfloat16."""

    def __init__(self, wl):
        self.wl = wl
        self.name = wl.name

    def build(self, lib, seed, small=False):
        return self.wl.build(lib, seed, small)

    def params(self, state):
        return self.wl.params(state)

    def step(self, state, i):
        lib = state["lib"]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            return self.wl.step(state, i)


def _set_threads(ptcore, torch, n_pt, n_torch):
    ptcore.set_num_threads(n_pt)
    torch.set_num_threads(n_torch)


# --------------------------------------------------------------------------
# a shared machine: idle and with one core kept busy (--loaded, issue 63)
# --------------------------------------------------------------------------

SETTINGS = ("ptcore 1t", "ptcore dflt", "torch 1t", "torch dflt")
# one timing sample: calls repeated for at least this long (3 of the
# governor's 50 ms ticks: a probe of a larger team is judged within a sample)
SAMPLE_S = 0.15


def _sample(fn, min_s=SAMPLE_S):
    """Seconds per call of ``fn``, called until ``min_s`` has passed (at least once)."""
    n = 0
    t0 = time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_s:
            return dt / n


def _settle(fn, team, want, limit_s):
    """Call ``fn`` (ptcore at its default thread count) for at least 0.3 s and
    until ``want(team())`` (ptcore's team size has followed the machine's new
    condition) or ``limit_s`` has passed; (seconds, followed)."""
    t0 = time.perf_counter()
    while True:
        fn()
        dt = time.perf_counter() - t0
        ok = want(team())
        if (dt >= 0.3 and ok) or dt >= limit_s:
            return dt, ok


def shared_machine_times(fns, setters, blocks, rounds, busy, team, n_default, log, load,
                         probing=lambda: False):
    """Median seconds per call of each setting of ``fns`` (a dict over
    SETTINGS) in each condition ("idle", "loaded"), and the mean team size
    ``team()`` of ptcore's default samples.  ``setters[s]()`` sets the thread
    counts of setting ``s``; ``blocks`` lists the conditions in the order they
    run, ``rounds`` samples of every setting per block, the settings in a new
    random order every round (a setting after torch's default pays for its
    threads' spinning).  Before a block's samples ptcore's default setting runs
    until its team is ``n_default`` (idle; and ``probing()`` false: a raised
    team that is not judged yet has not followed) or less (loaded); ``log`` collects
    those settle times and the machine's runnable counts (``load()``)."""
    times = {c: {k: [] for k in SETTINGS} for c in ("idle", "loaded")}
    teams = {"idle": [], "loaded": []}
    rng = np.random.default_rng(len(blocks) * rounds)
    for f in fns.values():          # warm-up
        f()
    gc_was = gc.isenabled()
    try:
        for cond in blocks:
            if cond == "loaded":
                busy.resume()
            else:
                busy.pause()
            setters["ptcore dflt"]()
            if cond == "loaded":
                log["settle loaded"].append(_settle(fns["ptcore dflt"], team,
                                                    lambda n: n < n_default, 2.0))
            else:
                log["settle idle"].append(_settle(fns["ptcore dflt"], team,
                                                  lambda n: n == n_default and not probing(),
                                                  10.0))
            for k in SETTINGS[2:]:
                setters[k]()
                fns[k]()
            gc.disable()
            for r in range(rounds):
                for k in map(str, rng.permutation(SETTINGS)):
                    setters[k]()
                    times[cond][k].append(_sample(fns[k]))
                    if k == "ptcore dflt":
                        teams[cond].append(team())
                ld = load()
                if ld is not None:
                    log["runnable " + cond].append(ld[1])
                gc.enable()
                gc.collect()
                gc.disable()
    finally:
        busy.pause()
        if gc_was:
            gc.enable()
    med = {c: {k: statistics.median(v) if v else float("nan") for k, v in d.items()}
           for c, d in times.items()}
    for c in teams:
        med[c]["team"] = statistics.mean(teams[c]) if teams[c] else float("nan")
    return med


def _micro_rows(ptcore, torch):
    """The two memory-bound rows of issue 63: (name, ptcore fn, torch fn)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1_000_000), dtype=np.float32)
    m = rng.standard_normal((2048, 2048), dtype=np.float32)
    v = rng.standard_normal(2048, dtype=np.float32)
    pa, pb, pm, pv = (ptcore.from_numpy(x.copy()) for x in (a, b, m, v))
    ta, tb, tm, tv = (torch.from_numpy(x.copy()) for x in (a, b, m, v))
    return [("a + b, 1e6 float32, fresh output", lambda: pa + pb, lambda: ta + tb),
            ("2048x2048 + (2048,) broadcast add", lambda: pm + pv, lambda: tm + tv)]


def _shared_row(name, med, unit):
    cells = []
    for cond in ("idle", "loaded"):
        d = med[cond]
        cells += [f"{d[k] * unit:.2f}" for k in SETTINGS]
        cells += [f"{d['ptcore dflt'] / d['ptcore 1t']:.2f}",
                  f"{d['ptcore dflt'] / d['torch dflt']:.2f}", f"{d['team']:.1f}"]
    return f"| {name} | " + " | ".join(cells) + " |"


def run_shared(args, ptcore, torch, wls, pt_default, torch_default):
    """--loaded: the idle/loaded table (issue 63)."""
    from _harness import BusyCore, machine_load
    from ptcore._ops.kernels import _parallel
    blocks = ["idle", "loaded"] * (1 if args.quick else 3)
    rounds = 5 if args.quick else 6
    setters = {"ptcore 1t": lambda: ptcore.set_num_threads(1),
               "ptcore dflt": lambda: ptcore.set_num_threads(pt_default),
               "torch 1t": lambda: torch.set_num_threads(1),
               "torch dflt": lambda: torch.set_num_threads(torch_default)}
    log = {k: [] for k in ("settle idle", "settle loaded", "runnable idle", "runnable loaded")}
    before = machine_load()
    rows, failures = [], []
    def timed(name, fp, ft, n, unit):
        fns = {"ptcore 1t": fp, "ptcore dflt": fp, "torch 1t": ft, "torch dflt": ft}
        med = shared_machine_times(fns, setters, blocks, n, busy, _parallel._team_size,
                                   pt_default, log, machine_load,
                                   lambda: _parallel._team_stats()["probing"])
        rows.append((name, med, unit, len(blocks) // 2 * n))
        print(_shared_row(name, med, unit), flush=True)

    with BusyCore() as busy:
        for wl in wls:
            ps, ts = prepared_pair(wl, ptcore, torch, not args.no_check, failures)
            timed(wl.name, *step_fns(wl, ps, ts), rounds, 1e3)
        for name, fp, ft in _micro_rows(ptcore, torch):
            timed(name + " (us)", fp, ft, 2 * rounds, 1e6)
    _set_threads(ptcore, torch, pt_default, torch_default)
    after = machine_load()
    print(f"\n## a shared machine (issue 63): ms/step (micro rows: us/call), median of "
          f"{rows[0][3]} samples per cell (micro rows {rows[-1][3]}), wall time; ptcore default "
          f"threads {pt_default}, torch default {torch_default}; loaded: a busy loop keeps one "
          f"core busy; team: ptcore's mean team size in its default samples\n")
    head = []
    for cond in ("idle", "loaded"):
        head += [f"{cond}: ptcore 1t", "ptcore dflt", "torch 1t", "torch dflt",
                 "ptcore dflt/1t", "ptcore/torch dflt", "team"]
    print("| workload | " + " | ".join(head) + " |")
    print("|---|" + "---:|" * len(head))
    for name, med, unit, _ in rows:
        print(_shared_row(name, med, unit))
    misses = [f"{name} {cond}: {what} {r:.2f}" for name, med, _, _ in rows
              for cond in ("idle", "loaded")
              for what, r in (("default/1-thread",
                               med[cond]["ptcore dflt"] / med[cond]["ptcore 1t"]),
                              ("ptcore/torch at default",
                               med[cond]["ptcore dflt"] / med[cond]["torch dflt"]))
              if r > 1.0]
    print(f"\nabove 1.00 (noise included): {misses if misses else 'none'}")
    for cond in ("idle", "loaded"):
        st = log["settle " + cond]
        print(f"{cond}: ptcore's team followed in {statistics.median(s for s, _ in st):.2f} s "
              f"(median; longest {max(s for s, _ in st):.2f} s; not within the limit in "
              f"{sum(1 for _, ok in st if not ok)} of {len(st)} blocks)")
        if log["runnable " + cond]:
            v = log["runnable " + cond]
            print(f"{cond}: runnable tasks on the machine during the samples (this benchmark and "
                  f"the busy loop included) median {statistics.median(v)}, max {max(v)}")
    print(f"load average (1/5/15 min) before {before[0] if before else '-'}, "
          f"after {after[0] if after else '-'}; CPUs {os.cpu_count()}")
    if failures:
        print(f"\nFAILED loss agreement: {failures}")
        return 1
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these workloads")
    ap.add_argument("--quick", action="store_true", help="short timings (smoke test)")
    ap.add_argument("--no-check", action="store_true", help="skip the 20-step loss agreement check")
    ap.add_argument("--one-thread", action="store_true",
                    help="time at 1 thread only (the default-threads columns are left out)")
    ap.add_argument("--loaded", action="store_true",
                    help="time on a shared machine: idle and while a busy loop started by the "
                         "runner keeps one core busy, 1 thread and default threads (issue 63)")
    ap.add_argument("--autocast", action="store_true",
                    help="run every step under autocast('cpu', dtype=bfloat16); no loss "
                         "agreement check (bfloat16 roundings make the runs drift apart)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with CPU time (time.process_time) instead of wall time; "
                         "meaningful at 1 thread (use with --one-thread)")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu_time else time.perf_counter

    sys.path.insert(0, _HERE)
    from _harness import print_cpu
    import torch
    torch_default = torch.get_num_threads()     # before ptcore: both set OpenMP's count
    import ptcore

    print_cpu()
    wls = all_workloads()
    if args.only:
        known = {w.name for w in wls}
        bad = [n for n in args.only if n not in known]
        if bad:
            ap.error(f"unknown workload(s) {bad}; known: {sorted(known)}")
        wls = [w for w in wls if w.name in args.only]
    if args.autocast:
        wls = [AutocastWorkload(w) for w in wls]
        args.no_check = True
        print("every step under autocast('cpu', dtype=bfloat16)")
    pt_default = ptcore.get_num_threads()
    print(f"threads: ptcore default {pt_default}, torch default {torch_default}; "
          f"torch {torch.__version__}, numpy {np.__version__}")
    if args.loaded:
        return run_shared(args, ptcore, torch, wls, pt_default, torch_default)
    budget = 0.5 if args.quick else 3.0
    rows = []
    failures = []
    for wl in wls:
        ps, ts = prepared_pair(wl, ptcore, torch, not args.no_check, failures)
        res = {}
        settings = [("1", 1, 1)] if args.one_thread else [("1", 1, 1),
                                                          ("default", pt_default, torch_default)]
        for label, npt, nto in settings:
            _set_threads(ptcore, torch, npt, nto)
            fp, ft = step_fns(wl, ps, ts)
            res[label] = paired_step_times([fp, ft], budget, clock)
        _set_threads(ptcore, torch, pt_default, torch_default)
        rows.append((wl.name, res))
        (p1, t1) = res["1"]
        line = f"{wl.name}: 1 thread {p1 * 1e3:.2f} / {t1 * 1e3:.2f} ms ({p1 / t1:.2f}x)"
        if "default" in res:
            (pd, td) = res["default"]
            line += f", default {pd * 1e3:.2f} / {td * 1e3:.2f} ms ({pd / td:.2f}x)"
        print(line, flush=True)

    what = "CPU ms/step" if args.cpu_time else "ms/step"
    print(f"\n## training workloads, {what} (ptcore default threads {pt_default}, "
          f"torch default threads {torch_default})\n")
    if args.one_thread:
        print("| workload | ptcore ms 1t | torch ms 1t | ratio 1t |")
        print("|---|---:|---:|---:|")
    else:
        print("| workload | ptcore ms 1t | torch ms 1t | ratio 1t | ptcore ms dflt | torch ms dflt "
              "| ratio dflt |")
        print("|---|---:|---:|---:|---:|---:|---:|")
    for name, res in rows:
        (p1, t1) = res["1"]
        line = f"| {name} | {p1 * 1e3:.2f} | {t1 * 1e3:.2f} | {p1 / t1:.2f} |"
        if "default" in res:
            (pd, td) = res["default"]
            line += f" {pd * 1e3:.2f} | {td * 1e3:.2f} | {pd / td:.2f} |"
        print(line)
    if failures:
        print(f"\nFAILED loss agreement: {failures}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
