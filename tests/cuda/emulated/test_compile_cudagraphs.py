"""ptcore.compile(mode="reduce-overhead") and backend="cudagraphs" on the emulated
device: the compiled run is captured into CUDA graphs after one warm-up call and
replayed (forward, and the compiled backward of a training step), with the values
and parameter gradients of eager ptcore; what cannot be captured runs compiled,
with one "skipping cudagraphs due to ..." warning."""
import copy
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._inductor import cudagraphs as cg

nn, F = ptcore.nn, ptcore.nn.functional


@pytest.fixture(autouse=True)
def _fresh():
    ptcore.compiler.reset()
    yield
    ptcore.compiler.reset()


def _np(t):
    return t.detach().cpu().numpy()


def _counts():
    return dict(cg.counters)


def _delta(before):
    return {k: cg.counters[k] - before[k] for k in before}


def _mlp():
    return nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 4)).cuda()


class _Block(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.fc, self.out = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class _GPT(nn.Module):
    """benchmarks/cuda_check.py's small GPT, narrower."""

    def __init__(self, vocab=32, block=8, layers=2, heads=2, c=16):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, c), nn.Embedding(block, c)
        self.blocks = nn.Sequential(*[_Block(c, heads) for _ in range(layers)])
        self.ln, self.head = nn.LayerNorm(c), nn.Linear(c, vocab, bias=False)

    def forward(self, idx):
        pos = ptcore.arange(idx.shape[1], device=idx.device)
        return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))


def _train(model, compiled, batches, loss_fn, steps=5):
    """``steps`` SGD steps of the compiled model next to an eager copy: the
    losses of both and the parameters after each step are compared."""
    ref = copy.deepcopy(model)
    opt = ptcore.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    opt_ref = ptcore.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    for i in range(steps):
        x, y = batches(i)
        loss = loss_fn(compiled(x), y)
        loss.backward()
        loss_ref = loss_fn(ref(x), y)
        loss_ref.backward()
        np.testing.assert_allclose(_np(loss), _np(loss_ref), rtol=1e-6, atol=1e-7)
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-5, atol=1e-7,
                                       err_msg=f"step {i}: grad of {name}")
        opt.step()
        opt.zero_grad()
        opt_ref.step()
        opt_ref.zero_grad()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(_np(p), _np(q), rtol=1e-5, atol=1e-7)


def _mse(out, y):
    return ((out - y) ** 2).mean()


def _lm(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("how", [{"mode": "reduce-overhead"}, {"backend": "cudagraphs"}])
def test_mlp_training_is_eager_and_replays_two_graphs(how):
    ptcore.manual_seed(0)
    model = _mlp()
    compiled = ptcore.compile(model, **how)
    gen = np.random.default_rng(0)

    def batches(i):
        return (ptcore.tensor(gen.standard_normal((6, 8)).astype(np.float32), device="cuda"),
                ptcore.tensor(gen.standard_normal((6, 4)).astype(np.float32), device="cuda"))
    before = _counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (no "skipping cudagraphs")
        _train(model, compiled, batches, _mse)
    d = _delta(before)
    # call 1 captures the program eagerly, call 2 warms the forward and backward up,
    # call 3 captures both graphs; calls 3-5 replay them
    assert (d["warmups"], d["captures"], d["replays"], d["skips"]) == (2, 2, 6, 0)


def test_gpt_training_is_eager_and_replays_two_graphs():
    ptcore.manual_seed(1)
    model = _GPT().cuda()
    compiled = ptcore.compile(model, mode="reduce-overhead")
    gen = np.random.default_rng(1)

    def batches(i):
        tok = gen.integers(0, 32, (3, 9))
        return (ptcore.tensor(tok[:, :-1], device="cuda"), ptcore.tensor(tok[:, 1:], device="cuda"))
    before = _counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _train(model, compiled, batches, _lm)
    d = _delta(before)
    assert (d["warmups"], d["captures"], d["replays"], d["skips"]) == (2, 2, 6, 0)


def test_gradients_accumulate_across_replays_without_zero_grad():
    # the backward graph's outputs are the same tensors at every replay: the first
    # one must not become .grad (the next replay would overwrite it)
    ptcore.manual_seed(2)
    model = _mlp()
    ref = copy.deepcopy(model)
    compiled = ptcore.compile(model, mode="reduce-overhead")
    gen = np.random.default_rng(2)
    for _ in range(5):
        x = ptcore.tensor(gen.standard_normal((6, 8)).astype(np.float32), device="cuda")
        compiled(x).square().sum().backward()
        ref(x).square().sum().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-5, atol=1e-6)


def test_forward_only_replays_one_graph_and_recaptures_a_new_shape():
    ptcore.manual_seed(3)
    model = _GPT().cuda().eval()
    compiled = ptcore.compile(model, mode="reduce-overhead")
    gen = np.random.default_rng(3)
    before = _counts()
    with ptcore.no_grad():
        for i in range(5):
            idx = ptcore.tensor(gen.integers(0, 32, (2, 8)), device="cuda")
            np.testing.assert_allclose(_np(compiled(idx)), _np(model(idx)), rtol=1e-5,
                                       atol=1e-6)
        assert _delta(before) == {"captures": 1, "replays": 3, "warmups": 1, "skips": 0,
                                  "recaptures": 0, "steps": 0, "busy": 0}
        for i in range(4):          # a new batch shape: a new entry, its own graph
            idx = ptcore.tensor(gen.integers(0, 32, (5, 6)), device="cuda")
            np.testing.assert_allclose(_np(compiled(idx)), _np(model(idx)), rtol=1e-5,
                                       atol=1e-6)
        d = _delta(before)
        assert (d["captures"], d["replays"], d["warmups"]) == (2, 5, 2)
        # the first shape still replays its graph
        idx = ptcore.tensor(gen.integers(0, 32, (2, 8)), device="cuda")
        np.testing.assert_allclose(_np(compiled(idx)), _np(model(idx)), rtol=1e-5, atol=1e-6)
        assert _delta(before)["captures"] == 2 and _delta(before)["replays"] == 6


def _run_calls(fn, make, n=4):
    outs = []
    for i in range(n):
        args = make(i)
        outs.append((_np(fn(*args)), args))
    return outs


def test_cpu_input_falls_back_with_one_warning():
    def f(x, s):
        return (x * s).relu() + 1

    compiled = ptcore.compile(f, mode="reduce-overhead")
    before = _counts()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(4):
            x = ptcore.randn(5, 3, device="cuda")
            s = ptcore.tensor(float(i) - 1.5)           # a CPU scalar tensor
            np.testing.assert_allclose(_np(compiled(x, s)), _np(f(x, s)), rtol=1e-6)
    msgs = [str(m.message) for m in w if "cudagraphs" in str(m.message)]
    assert len(msgs) == 1 and "skipping cudagraphs due to cpu device" in msgs[0]
    d = _delta(before)
    assert d["captures"] == 0 and d["replays"] == 0 and d["skips"] == 1


def test_item_in_forward_falls_back_with_one_warning():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x - 1

    compiled = ptcore.compile(f, mode="reduce-overhead")
    before = _counts()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(4):
            x = ptcore.full((4,), float(i) - 1.5, device="cuda")
            np.testing.assert_allclose(_np(compiled(x)), _np(f(x)))
    msgs = [str(m.message) for m in w if "cudagraphs" in str(m.message)]
    assert msgs and all("skipping cudagraphs due to graph breaks" in m for m in msgs)
    assert _delta(before)["captures"] == 0


def test_on_the_cpu_the_option_does_nothing():
    def f(x):
        return x.sin() * 2

    compiled = ptcore.compile(f, mode="reduce-overhead")
    before = _counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(4):
            x = ptcore.randn(7)
            np.testing.assert_allclose(_np(compiled(x)), _np(f(x)), rtol=1e-6)
    d = _delta(before)
    assert d["captures"] == 0 and d["replays"] == 0


def test_reset_drops_the_graphs():
    def f(x):
        return x.exp() - x

    compiled = ptcore.compile(f, mode="reduce-overhead")
    x = ptcore.randn(16, device="cuda")
    for _ in range(4):
        compiled(x)
    tree = compiled.entries[0].program.cudagraphs
    (gc_,) = tree.callables
    (rec,) = gc_.recordings.values()
    assert rec.graph.raw_cuda_graph_exec()
    ptcore.compiler.reset()
    assert compiled.entries == [] and gc_.recordings == {}
    with pytest.raises(RuntimeError):
        rec.graph.replay()                      # the graph was given back
    before = _counts()
    for _ in range(4):
        y = compiled(x)
    np.testing.assert_allclose(_np(y), _np(f(x)), rtol=1e-6)
    assert _delta(before)["captures"] == 1


def test_outputs_of_a_replay_are_overwritten_by_the_next():
    # torch raises "accessing tensor output of CUDAGraphs that has been overwritten by a
    # subsequent run" on reading such an output; ptcore returns the graph's static
    # outputs, so the earlier result holds the later values (a clone keeps them)
    def f(x):
        return x * 3

    compiled = ptcore.compile(f, mode="reduce-overhead")
    for _ in range(3):
        compiled(ptcore.zeros(4, device="cuda"))
    a = compiled(ptcore.ones(4, device="cuda"))
    kept = a.clone()
    b = compiled(ptcore.full((4,), 2.0, device="cuda"))
    assert a is b
    np.testing.assert_array_equal(_np(a), np.full(4, 6.0, np.float32))
    np.testing.assert_array_equal(_np(kept), np.full(4, 3.0, np.float32))


def test_mark_step_begin_is_counted():
    n = cg.counters["steps"]
    ptcore.compiler.cudagraph_mark_step_begin()
    assert cg.counters["steps"] == n + 1


def test_dropout_replays_draw_the_eager_numbers():
    # random kernels are graph-safe (ptcore.cuda.graphs): each replay draws new numbers,
    # those eager ptcore draws from the same seed
    def f(x):
        return F.dropout(x, 0.5, training=True).sin() * 2

    compiled = ptcore.compile(f, mode="reduce-overhead")
    x = ptcore.randn(64, device="cuda")
    before = _counts()
    ptcore.manual_seed(5)
    got = [_np(compiled(x)).copy() for _ in range(5)]
    ptcore.manual_seed(5)
    want = [_np(f(x)) for _ in range(5)]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got[3], got[4])
    d = _delta(before)
    assert (d["captures"], d["replays"], d["skips"]) == (1, 3, 0)


@pytest.mark.parametrize("train", [False, True])
def test_a_parameter_given_new_memory_is_captured_again(train):
    ptcore.manual_seed(6)
    model = nn.Linear(4, 3).cuda()
    compiled = ptcore.compile(model, mode="reduce-overhead")
    x = ptcore.randn(2, 4, device="cuda")

    def call(m):
        if train:
            out = m(x)
            out.sum().backward()
            return out
        with ptcore.no_grad():
            return m(x)
    for _ in range(4):
        call(compiled)
    before = _counts()
    with ptcore.no_grad():
        model.weight.data = ptcore.randn(3, 4, device="cuda")
    model.zero_grad()
    got = _np(call(compiled)).copy()
    g_got = _np(model.weight.grad).copy() if train else None
    model.zero_grad()
    np.testing.assert_allclose(got, _np(call(model)), rtol=1e-6, atol=1e-7)
    if train:
        np.testing.assert_allclose(g_got, _np(model.weight.grad), rtol=1e-6)
    assert _delta(before)["recaptures"] >= 1


def test_two_forwards_before_one_backward_keep_the_first_saved_tensors():
    # micro-batches: the second forward must not overwrite what the first one's backward
    # reads (it runs without replaying while that backward is pending)
    ptcore.manual_seed(7)
    model = _mlp()
    ref = copy.deepcopy(model)
    compiled = ptcore.compile(model, mode="reduce-overhead")
    gen = np.random.default_rng(7)
    before = _counts()
    for step in range(5):
        xs = [ptcore.tensor(gen.standard_normal((6, 8)).astype(np.float32), device="cuda")
              for _ in range(2)]
        (compiled(xs[0]).square().mean() + compiled(xs[1]).sin().mean()).backward()
        (ref(xs[0]).square().mean() + ref(xs[1]).sin().mean()).backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-5, atol=1e-7,
                                       err_msg=f"step {step}")
    d = _delta(before)
    assert d["busy"] >= 3 and d["replays"] >= 4 and d["skips"] == 0
