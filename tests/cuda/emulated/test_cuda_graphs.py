"""CUDA graphs (ptcore.cuda.CUDAGraph / graph / make_graphed_callables) on the
emulated device: a capture records the queued work without running it, a
replay reruns it on the same addresses, the graph's memory pool is private,
and what CUDA forbids during a capture fails here as on a GPU."""
import warnings

import numpy as np
import pytest

import ptcore
from ptcore import cuda
from device_target import REAL


def _warm(fn):
    """Run ``fn`` once on a side stream (kernels compiled, pools primed), as
    PyTorch's docs ask before a capture."""
    s = cuda.Stream()
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        out = fn()
    cuda.current_stream().wait_stream(s)
    cuda.synchronize()
    return out


def _np(t):
    return t.detach().cpu().numpy()


def test_replay_recomputes_from_refilled_static_inputs():
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((8, 5)).astype(np.float32)
    b_np = rng.standard_normal((5, 3)).astype(np.float32)
    a = ptcore.tensor(a_np, device="cuda")
    b = ptcore.tensor(b_np, device="cuda")

    def work():
        h = (a @ b).relu() * 2.0
        return h, h.sum(dim=0), h.cumsum(0)
    _warm(work)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        h, colsum, csum = work()
    for step in range(3):
        new_a = rng.standard_normal((8, 5)).astype(np.float32)
        a.copy_(ptcore.tensor(new_a, device="cuda"))
        g.replay()
        ref = np.maximum(new_a @ b_np, 0) * 2
        np.testing.assert_allclose(_np(h), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(_np(colsum), ref.sum(0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(_np(csum), ref.cumsum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(REAL, reason="inspects the emulated driver's recorded nodes")
def test_capture_records_instead_of_running():
    x = ptcore.arange(16, dtype=ptcore.float32, device="cuda")
    _warm(lambda: x + 1)
    g = cuda.CUDAGraph(keep_graph=True)
    with cuda.graph(g):
        y = x + 1
        y.mul_(3)
    drv = cuda._runtime.get()
    labels = drv.graph_node_labels(g.raw_cuda_graph())
    assert len(labels) >= 2 and all(lab.startswith("kernel ") for lab in labels)
    g.replay()
    np.testing.assert_array_equal(_np(y), (np.arange(16) + 1) * 3)


def test_capture_on_the_default_stream_is_refused():
    g = cuda.CUDAGraph()
    with cuda.stream(cuda.default_stream()):
        with pytest.raises(RuntimeError, match="non-default stream"):
            g.capture_begin()
    assert not cuda.is_current_stream_capturing()


def test_host_sync_invalidates_the_capture_and_cuda_stays_usable():
    x = ptcore.ones(10, device="cuda")
    _warm(lambda: x.sum())
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="captur"):
        with cuda.graph(g):
            x.sum().item()          # a device-to-host copy the host waits for
    assert not cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError):
        g.replay()
    # a new capture on the same side stream works
    g2 = cuda.CUDAGraph()
    with cuda.graph(g2):
        y = x * 5
    g2.replay()
    np.testing.assert_array_equal(_np(y), np.full(10, 5.0, np.float32))


def test_is_current_stream_capturing():
    assert not cuda.is_current_stream_capturing()
    x = ptcore.ones(4, device="cuda")
    _warm(lambda: x + 1)
    g = cuda.CUDAGraph()
    seen = []
    with cuda.graph(g):
        seen.append(cuda.is_current_stream_capturing())
        x + 1
    assert seen == [True] and not cuda.is_current_stream_capturing()


def test_graph_pool_is_private_and_reserved_while_the_graph_lives():
    n = 1 << 16
    x = ptcore.ones(n, device="cuda")
    _warm(lambda: (x * 3) + 1)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        tmp = x * 3                 # freed during the capture, reused by the replay
        tmp_ptr = tmp.data_ptr()
        out = tmp + 1
        del tmp
    # memory allocated after the capture -- even on the capturing stream, whose
    # own cache would otherwise hand out tmp's block -- never overlaps the pool
    with cuda.stream(cuda.graph.default_capture_stream):
        others = [ptcore.full((n,), float(i), device="cuda") for i in range(4)]
    assert tmp_ptr not in {t.data_ptr() for t in others}
    x.fill_(2.0)
    g.replay()
    cuda.synchronize()
    np.testing.assert_array_equal(_np(out), np.full(n, 7.0, np.float32))
    for i, t in enumerate(others):
        np.testing.assert_array_equal(_np(t), np.full(n, float(i), np.float32))
    # empty_cache keeps the pool's segments while the graph exists ...
    del out
    cuda.empty_cache()
    kept = cuda.memory_reserved()
    assert kept >= 4 * n * 4 + 2 * n * 4
    # ... and gives them back once it is reset
    g.reset()
    cuda.empty_cache()
    assert cuda.memory_reserved() < kept


def test_two_graphs_share_a_pool():
    x = ptcore.arange(6, dtype=ptcore.float32, device="cuda")
    _warm(lambda: (x + 1) * 2)
    g1, g2 = cuda.CUDAGraph(), cuda.CUDAGraph()
    with cuda.graph(g1):
        y = x + 1
    with cuda.graph(g2, pool=g1.pool()):
        z = y * 2
    assert g2.pool() == g1.pool()
    x.copy_(ptcore.full((6,), 10.0, device="cuda"))
    g1.replay()
    g2.replay()
    np.testing.assert_array_equal(_np(z), np.full(6, 22.0, np.float32))
    h = cuda.graph_pool_handle()
    assert isinstance(h, tuple) and len(h) == 2 and h != cuda.graph_pool_handle()


def test_forked_stream_joins_the_capture():
    x = ptcore.arange(8, dtype=ptcore.float32, device="cuda")
    _warm(lambda: (x * 2, x + 5))
    side = cuda.Stream()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        cap = cuda.current_stream()
        side.wait_stream(cap)       # fork
        with cuda.stream(side):
            b = x + 5
        a = x * 2
        cap.wait_stream(side)       # join
        c = a + b
    x.copy_(ptcore.ones(8, device="cuda"))
    g.replay()
    np.testing.assert_array_equal(_np(c), np.full(8, 8.0, np.float32))


def test_unjoined_fork_fails_the_capture():
    x = ptcore.ones(8, device="cuda")
    _warm(lambda: x + 5)
    side = cuda.Stream()
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="UNJOINED|join"):
        with cuda.graph(g):
            side.wait_stream(cuda.current_stream())
            with cuda.stream(side):
                x + 5
    assert not cuda.is_current_stream_capturing()


def _draws(shape):
    """One of each CUDA random op (the capture below records the same calls)."""
    x, y = ptcore.empty(shape, device="cuda"), ptcore.empty(shape, device="cuda")
    return [ptcore.randn(shape, device="cuda"), ptcore.rand(shape, device="cuda"),
            ptcore.randint(0, 1000, shape, device="cuda"), x.exponential_(2.0),
            y.bernoulli_(0.3), ptcore.randn(shape, dtype=ptcore.float64, device="cuda")]


def test_random_ops_are_graph_safe():
    shape = (257,)
    _warm(lambda: _draws(shape))
    # eager reference: three calls in a row from seed 5
    cuda.manual_seed(5)
    ref = [[_np(t) for t in _draws(shape)] for _ in range(3)]
    cuda.manual_seed(5)
    state = cuda.get_rng_state()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        outs = _draws(shape)
    # the capture drew nothing: the generator is where it was
    assert ptcore.equal(cuda.get_rng_state(), state)
    for k in range(2):
        g.replay()                  # replay k draws what eager call k drew
        for got, want in zip(outs, ref[k]):
            np.testing.assert_array_equal(_np(got), want)
    # and advanced the generator as the eager calls would: call 3 follows
    for got, want in zip(_draws(shape), ref[2]):
        np.testing.assert_array_equal(_np(got), want)


def test_graphed_dropout_masks_differ_between_replays():
    x = ptcore.ones(4096, device="cuda")
    _warm(lambda: ptcore.nn.functional.dropout(x, 0.5))
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = ptcore.nn.functional.dropout(x, 0.5)
    g.replay()
    first = _np(y)
    g.replay()
    second = _np(y)
    assert set(np.unique(first)) <= {0.0, 2.0} and set(np.unique(second)) <= {0.0, 2.0}
    assert 0.4 < (first == 0).mean() < 0.6 and not np.array_equal(first, second)


def test_host_side_random_draws_cannot_be_captured():
    _warm(lambda: ptcore.randperm(10, device="cuda"))
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="host"):
        with cuda.graph(g, capture_error_mode="relaxed"):
            ptcore.randperm(10, device="cuda")
    assert ptcore.randperm(4, device="cuda").shape == (4,)


def test_keep_graph_instantiate_raw_handles_and_debug_dump(tmp_path):
    x = ptcore.ones(3, device="cuda")
    _warm(lambda: x * 4)
    g = cuda.CUDAGraph(keep_graph=True)
    g.enable_debug_mode()
    with cuda.graph(g):
        y = x * 4
    assert isinstance(g.raw_cuda_graph(), int)
    with pytest.raises(RuntimeError, match="instantiate"):
        g.raw_cuda_graph_exec()
    g.replay()                      # instantiates on first use
    assert isinstance(g.raw_cuda_graph_exec(), int)
    np.testing.assert_array_equal(_np(y), np.full(3, 4.0, np.float32))
    path = tmp_path / "graph.dot"
    g.debug_dump(str(path))
    assert path.exists() and path.stat().st_size > 0

    g2 = cuda.CUDAGraph()
    with cuda.graph(g2):
        x * 4
    with pytest.raises(RuntimeError, match="keep_graph"):
        g2.raw_cuda_graph()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g2.debug_dump(str(tmp_path / "no.dot"))
    assert any("enable_debug_mode" in str(m.message) for m in w)


def test_misuse_errors():
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.pool()
    with pytest.raises(RuntimeError, match="capture error mode"):
        with cuda.stream(cuda.Stream()):
            g.capture_begin(capture_error_mode="loose")
    x = ptcore.ones(2, device="cuda")
    _warm(lambda: x + 1)
    with cuda.graph(g, capture_error_mode="thread_local"):
        x + 1
    with pytest.raises(RuntimeError, match="already owns a captured graph"):
        with cuda.graph(g):
            pass
    with pytest.raises(TypeError, match="graph_pool_handle"):
        with cuda.stream(cuda.Stream()):
            cuda.CUDAGraph().capture_begin(pool=3)


def test_make_graphed_callables_trains_like_eager():
    def build():
        ptcore.manual_seed(0)
        return ptcore.nn.Sequential(ptcore.nn.Linear(6, 16), ptcore.nn.Tanh(),
                                    ptcore.nn.Linear(16, 2)).to("cuda")
    eager, graphed = build(), build()
    rng = np.random.default_rng(1)
    sample = ptcore.tensor(rng.standard_normal((4, 6)).astype(np.float32), device="cuda")
    graphed = cuda.make_graphed_callables(graphed, (sample,))
    opt_e = ptcore.optim.SGD(eager.parameters(), lr=0.1)
    opt_g = ptcore.optim.SGD(graphed.parameters(), lr=0.1)
    for step in range(4):
        xb = ptcore.tensor(rng.standard_normal((4, 6)).astype(np.float32), device="cuda")
        tb = ptcore.tensor(rng.standard_normal((4, 2)).astype(np.float32), device="cuda")
        losses = []
        for model, opt in ((eager, opt_e), (graphed, opt_g)):
            opt.zero_grad(set_to_none=True)
            loss = ptcore.nn.functional.mse_loss(model(xb), tb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5, abs=1e-6)
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        np.testing.assert_allclose(_np(pg), _np(pe), rtol=1e-5, atol=1e-6)
    # eval mode (not the captured training state) runs the module eagerly
    graphed.eval()
    np.testing.assert_allclose(_np(graphed(sample)), _np(eager(sample)), rtol=1e-5, atol=1e-6)


def test_make_graphed_callables_functions_and_input_checks():
    w = ptcore.randn(3, 3, device="cuda", requires_grad=True)

    def f(x):
        return (x @ w).sin()
    x0 = ptcore.randn(2, 3, device="cuda", requires_grad=True)
    gf = cuda.make_graphed_callables(f, (x0,))
    x = ptcore.randn(2, 3, device="cuda", requires_grad=True)
    out = gf(x)
    out.sum().backward()
    x_ref = x.detach().clone().requires_grad_(True)
    (x_ref @ w.detach()).sin().sum().backward()
    np.testing.assert_allclose(_np(out), _np((x_ref @ w).sin()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(x.grad), _np(x_ref.grad), rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="only Tensors"):
        cuda.make_graphed_callables(f, (x0, 3))
    m = ptcore.nn.Linear(3, 3).to("cuda")
    m.register_forward_hook(lambda *a: None)
    with pytest.raises(AssertionError, match="hooks"):
        cuda.make_graphed_callables(m, (x0,))


@pytest.mark.skipif(REAL, reason="drives the emulated driver directly")
def test_emulated_driver_capture_rules():
    from ptcore.cuda.driver.interface import CudaError
    drv = cuda._runtime.lazy_init("test")
    drv.set_current(0)
    s = drv.stream_create(0)
    # global mode: cuMemAlloc is refused unless the thread exchanged to relaxed
    drv.stream_begin_capture(s, "global")
    with pytest.raises(CudaError, match="not permitted"):
        drv.mem_alloc(0, 256)
    assert drv.stream_capture_info(s)[0] == 2            # invalidated
    with pytest.raises(CudaError, match="INVALIDATED|invalidated"):
        drv.stream_end_capture(s)
    drv.stream_begin_capture(s, "global")
    old = drv.exchange_capture_mode("relaxed")
    ptr = drv.mem_alloc(0, 256)
    drv.exchange_capture_mode(old)
    ev = drv.event_create(0)
    drv.event_record(ev, s)
    with pytest.raises(CudaError, match="capture"):
        drv.event_synchronize(ev)
    with pytest.raises(CudaError):
        drv.stream_end_capture(s)
    # relaxed captures allow the unsafe calls; an event recorded in a capture
    # cannot be waited on after it ended
    drv.stream_begin_capture(s, "relaxed")
    drv.mem_free(0, ptr)
    drv.event_record(ev, s)
    g = drv.stream_end_capture(s)
    other = drv.stream_create(0)
    with pytest.raises(CudaError, match="CAPTURED_EVENT|ended"):
        drv.stream_wait_event(other, ev)
    drv.graph_destroy(g)
    drv.event_destroy(ev)
    drv.stream_destroy(other)
    drv.stream_destroy(s)
