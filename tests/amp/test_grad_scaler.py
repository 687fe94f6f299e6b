"""``ptcore.amp.GradScaler`` against ``torch.amp.GradScaler`` on the CPU: the
same model, optimizer and data in both libraries; scale, unscale_, skipped
steps on inf/NaN gradients, growth and backoff, state_dict round trips, the
disabled scaler, the deprecated cpu/cuda spellings and the ordering errors."""
import pickle
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

LIBS = [pytest.param(torch, id="torch"), pytest.param(ptcore, id="ptcore")]


def _model(T, seed=0):
    torch.manual_seed(seed)
    ref = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    if T is torch:
        return ref
    m = ptcore.nn.Sequential(ptcore.nn.Linear(5, 8), ptcore.nn.Tanh(), ptcore.nn.Linear(8, 2))
    m.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    return m


def _data(T, n_iter):
    rs = np.random.RandomState(3)
    return [(T.tensor(rs.randn(6, 5).astype(np.float32)),
             T.tensor(rs.randn(6, 2).astype(np.float32))) for _ in range(n_iter)]


def _loop(T, bad_iters, n_iter=12, opt_name="SGD", **scaler_kw):
    """A training loop whose loss is made non-finite on ``bad_iters``; the
    per-iteration trace of the scaler and the final weights."""
    m = _model(T)
    if opt_name == "SGD":
        opt = T.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    else:
        opt = T.optim.Adam(m.parameters(), lr=0.01)
    scaler = T.amp.GradScaler("cpu", **scaler_kw)
    trace = []
    for i, (x, y) in enumerate(_data(T, n_iter)):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        if i in bad_iters:
            loss = loss * bad_iters[i]
        scaled = scaler.scale(loss)
        trace.append(("scaled", round(float(scaled.detach()) / float(loss.detach()), 3)
                      if np.isfinite(float(loss.detach())) else None))
        scaled.backward()
        if i % 3 == 1:          # unscale_ explicitly (gradient clipping's pattern)
            scaler.unscale_(opt)
            g = m[0].weight.grad.numpy().copy()
            trace.append(("unscaled", np.isfinite(g).all()))
        before = [p.detach().numpy().copy() for p in m.parameters()]
        scaler.step(opt)
        moved = any(not np.array_equal(b, p.detach().numpy()) for b, p in
                    zip(before, m.parameters()))
        trace.append(("stepped", moved))
        scaler.update()
        trace.append(("scale", scaler.get_scale(), scaler._get_growth_tracker()))
    weights = [p.detach().numpy().copy() for p in m.parameters()]
    return trace, weights, scaler.state_dict()


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("bad", [{}, {2: float("inf")}, {0: float("nan"), 1: float("inf"),
                                                          7: float("nan")}])
def test_training_loop_matches_torch(bad, opt_name):
    kw = dict(init_scale=2.0 ** 10, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)
    tt, wt, st = _loop(torch, bad, opt_name=opt_name, **kw)
    tp, wp, sp = _loop(ptcore, bad, opt_name=opt_name, **kw)
    assert tp == tt
    assert sp == st
    for a, b in zip(wp, wt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_skipped_step_leaves_weights_and_optimizer_state():
    for T in (torch, ptcore):
        m = _model(T)
        opt = T.optim.Adam(m.parameters(), lr=0.1)
        scaler = T.amp.GradScaler("cpu", init_scale=8.0)
        before = [p.detach().numpy().copy() for p in m.parameters()]
        x, y = _data(T, 1)[0]
        scaler.scale(((m(x) - y) ** 2).mean() * float("inf")).backward()
        assert scaler.step(opt) is None
        scaler.update()
        assert scaler.get_scale() == 4.0
        assert len(opt.state) == 0
        for a, p in zip(before, m.parameters()):
            np.testing.assert_array_equal(a, p.detach().numpy())


def test_scale_values_and_containers():
    for T in (torch, ptcore):
        s = T.amp.GradScaler("cpu", init_scale=4.0)
        assert s.get_scale() == 4.0           # before the first scale()
        a, b = T.tensor([1.0, 2.0]), T.tensor(3.0)
        assert s.scale(a).tolist() == [4.0, 8.0]
        lst = s.scale([a, b])
        assert isinstance(lst, list) and lst[1].item() == 12.0
        tup = s.scale((a, b))
        assert isinstance(tup, tuple) and tup[0].tolist() == [4.0, 8.0]
        it = s.scale(iter([a, b]))
        assert [t.tolist() for t in it] == [[4.0, 8.0], 12.0]
        assert s.scale(a.to(T.bfloat16)).dtype == T.bfloat16
        assert s.scale(a.to(T.float16)).dtype == T.float16
        with pytest.raises(ValueError):
            s.scale([a, 3.0])


@pytest.mark.parametrize("T", LIBS)
def test_new_scale_in_update(T):
    m = _model(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    s = T.amp.GradScaler("cpu", init_scale=16.0)
    x, y = _data(T, 1)[0]
    s.scale(((m(x) - y) ** 2).mean()).backward()
    s.step(opt)
    s.update(2.0)
    assert s.get_scale() == 2.0
    s.scale(((m(x) - y) ** 2).mean()).backward()
    s.step(opt)
    s.update(T.tensor(5.0))
    assert s.get_scale() == 5.0
    s.scale(((m(x) - y) ** 2).mean()).backward()
    s.step(opt)
    with pytest.raises(AssertionError):
        s.update(T.tensor([1.0, 2.0]))


@pytest.mark.parametrize("T", LIBS)
def test_growth_stops_at_inf(T):
    m = _model(T)
    opt = T.optim.SGD(m.parameters(), lr=0.0)
    s = T.amp.GradScaler("cpu", init_scale=2.0 ** 120, growth_factor=2.0 ** 10, growth_interval=1)
    x, y = _data(T, 1)[0]
    scales = []
    for _ in range(3):
        opt.zero_grad()
        s.scale(((m(x) - y) ** 2).mean() * 0.0).backward()
        s.step(opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [2.0 ** 120, 2.0 ** 120, 2.0 ** 120]   # 2**130 overflows float32


def _errors(T):
    out = []
    m = _model(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    s = T.amp.GradScaler("cpu")
    x, y = _data(T, 1)[0]

    def catch(fn):
        try:
            fn()
            return None
        except Exception as e:       # noqa: BLE001 - the type is what is compared
            return type(e).__name__
    out.append(catch(lambda: s.unscale_(opt)))       # before scale(): no scale yet
    out.append(catch(lambda: s.step(opt)))
    out.append(catch(lambda: s.update()))
    s.scale(((m(x) - y) ** 2).mean()).backward()
    out.append(catch(lambda: s.update()))            # no inf checks recorded yet
    out.append(catch(lambda: s.unscale_(opt)))
    out.append(catch(lambda: s.unscale_(opt)))       # twice
    out.append(catch(lambda: s.step(opt)))
    out.append(catch(lambda: s.step(opt)))           # twice
    out.append(catch(lambda: s.unscale_(opt)))       # after step
    out.append(catch(lambda: s.step(opt, closure=lambda: 0)))
    out.append(catch(lambda: s.update()))
    out.append(catch(lambda: s.unscale_(opt)))       # a new iteration: allowed again
    out.append(catch(lambda: T.amp.GradScaler("cpu", growth_factor=1.0)))
    out.append(catch(lambda: T.amp.GradScaler("cpu", backoff_factor=1.0)))
    out.append(catch(lambda: T.amp.GradScaler("cpu").load_state_dict({})))
    out.append(catch(lambda: s.scale("loss")))
    return out


def test_errors_match_torch():
    assert _errors(ptcore) == _errors(torch)


def test_unscale_fp16_grads_is_an_error():
    for T in (torch, ptcore):
        p = T.zeros(3, dtype=T.float16, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.1)
        s = T.amp.GradScaler("cpu")
        s.scale((p.float() * 2).sum()).backward()
        assert p.grad.dtype == T.float16
        with pytest.raises(ValueError, match="FP16"):
            s.unscale_(opt)


def test_multiple_optimizers():
    def go(T):
        m1, m2 = _model(T, 0), _model(T, 1)
        o1 = T.optim.SGD(m1.parameters(), lr=0.1)
        o2 = T.optim.SGD(m2.parameters(), lr=0.1)
        s = T.amp.GradScaler("cpu", init_scale=32.0, growth_interval=2)
        trace = []
        for i, (x, y) in enumerate(_data(T, 5)):
            o1.zero_grad()
            o2.zero_grad()
            l1 = ((m1(x) - y) ** 2).mean()
            l2 = ((m2(x) - y) ** 2).mean() * (float("inf") if i == 2 else 1.0)
            s.scale(l1 + l2).backward()
            b1 = m1[0].weight.detach().numpy().copy()
            b2 = m2[0].weight.detach().numpy().copy()
            s.step(o1)
            s.step(o2)
            trace += [not np.array_equal(b1, m1[0].weight.detach().numpy()),
                      not np.array_equal(b2, m2[0].weight.detach().numpy())]
            s.update()
            trace.append(s.get_scale())
        return trace, [p.detach().numpy() for p in list(m1.parameters()) + list(m2.parameters())]
    tt, wt = go(torch)
    tp, wp = go(ptcore)
    assert tp == tt
    for a, b in zip(wp, wt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_state_dict_round_trip_and_accessors():
    for T in (torch, ptcore):
        s = T.amp.GradScaler("cpu", init_scale=128.0, growth_factor=3.0, backoff_factor=0.2,
                             growth_interval=7)
        sd = s.state_dict()
        assert sd == {"scale": 128.0, "growth_factor": 3.0, "backoff_factor": 0.2,
                      "growth_interval": 7, "_growth_tracker": 0}
        s2 = T.amp.GradScaler("cpu")
        s2.load_state_dict(dict(sd, scale=64.0, _growth_tracker=3))
        assert (s2.get_scale(), s2.get_growth_factor(), s2.get_backoff_factor(),
                s2.get_growth_interval(), s2._get_growth_tracker()) == (64.0, 3.0, 0.2, 7, 3)
        s2.scale(T.ones(1))                   # the lazily made tensors take the loaded values
        assert (s2.get_scale(), s2._get_growth_tracker()) == (64.0, 3)
        s2.load_state_dict(sd)                # and later loads overwrite them
        assert (s2.get_scale(), s2._get_growth_tracker()) == (128.0, 0)
        s2.set_growth_factor(5.0)
        s2.set_backoff_factor(0.1)
        s2.set_growth_interval(9)
        assert s2.state_dict()["growth_factor"] == 5.0
        assert (s2.get_backoff_factor(), s2.get_growth_interval()) == (0.1, 9)
        assert s2.is_enabled()


def test_pickle_round_trip():
    m = _model(ptcore)
    opt = ptcore.optim.SGD(m.parameters(), lr=0.1)
    s = ptcore.amp.GradScaler("cpu", init_scale=16.0)
    x, y = _data(ptcore, 1)[0]
    s.scale(((m(x) - y) ** 2).mean()).backward()
    s.step(opt)
    s.update()
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.state_dict() == s.state_dict()


def test_disabled_scaler_is_transparent():
    def go(T):
        m = _model(T)
        opt = T.optim.SGD(m.parameters(), lr=0.1)
        s = T.amp.GradScaler("cpu", enabled=False)
        trace = [s.is_enabled(), s.get_scale(), s.state_dict(), s._get_growth_tracker()]
        for x, y in _data(T, 3):
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            assert s.scale(loss) is loss
            loss.backward()
            s.unscale_(opt)
            s.unscale_(opt)            # no stage checks either
            trace.append(s.step(opt))
            s.update()
        s.load_state_dict({})
        trace.append(s.get_scale())
        return trace, [p.detach().numpy() for p in m.parameters()]
    tt, wt = go(torch)
    tp, wp = go(ptcore)
    assert tp == tt
    for a, b in zip(wp, wt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _construct(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = fn()
    return s, [(x.category, str(x.message)) for x in w]


def test_cuda_grad_scaler_without_cuda_warns_and_disables():
    if torch.cuda.is_available() or ptcore.cuda.is_available():
        pytest.skip("a CUDA device is present")
    st, wt = _construct(lambda: torch.cuda.amp.GradScaler())
    sp, wp = _construct(lambda: ptcore.cuda.amp.GradScaler())
    assert wp == wt
    assert [c for c, _ in wp] == [FutureWarning, UserWarning]
    assert sp.is_enabled() is st.is_enabled() is False
    assert sp.get_scale() == 1.0 and sp.state_dict() == {}
    st, wt = _construct(lambda: torch.amp.GradScaler("cuda"))
    sp, wp = _construct(lambda: ptcore.amp.GradScaler("cuda"))
    assert wp == wt and [c for c, _ in wp] == [UserWarning]
    assert not sp.is_enabled()
    st, wt = _construct(lambda: torch.amp.GradScaler())        # default device: cuda
    sp, wp = _construct(lambda: ptcore.amp.GradScaler())
    assert [c for c, _ in wp] == [c for c, _ in wt] and not sp.is_enabled()


def test_cpu_grad_scaler_alias():
    st, wt = _construct(lambda: torch.cpu.amp.GradScaler(init_scale=8.0))
    sp, wp = _construct(lambda: ptcore.cpu.amp.GradScaler(init_scale=8.0))
    assert wp == wt and [c for c, _ in wp] == [FutureWarning]
    assert sp.is_enabled() and sp.get_scale() == 8.0
    assert isinstance(sp, ptcore.amp.GradScaler)


def test_bf16_autocast_with_scaler():
    """The usual loop: autocast forward, scaled backward, unscale_, clip, step."""
    def go(T):
        m = _model(T)
        opt = T.optim.SGD(m.parameters(), lr=0.05)
        s = T.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)
        losses = []
        for x, y in _data(T, 6):
            opt.zero_grad()
            with T.autocast("cpu", dtype=T.bfloat16):
                out = m(x)
                loss = T.nn.functional.mse_loss(out, y)
            s.scale(loss).backward()
            s.unscale_(opt)
            T.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            s.step(opt)
            s.update()
            losses.append(float(loss.detach()))
        return losses, s.get_scale()
    lt, st = go(torch)
    lp, sp = go(ptcore)
    assert sp == st
    np.testing.assert_allclose(lp, lt, rtol=3e-2, atol=1e-2)


def test_step_without_any_grad_is_an_error():
    for T in (torch, ptcore):
        p = T.zeros(3, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.1)
        s = T.amp.GradScaler("cpu")
        s.scale(T.ones(()))
        with pytest.raises(AssertionError, match="No inf checks"):
            s.step(opt)
