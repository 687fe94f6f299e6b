"""The ``ptcore.autocast`` API against torch 2.13 on the CPU: the global state
functions, nesting, the decorator form, exceptions leaving a region, thread
locality, the weight-cast cache, the deprecated ``cpu.amp`` / ``cuda.amp``
spellings, ``custom_fwd`` / ``custom_bwd``, autograd through a region, the
errors and warnings for bad arguments, and a short bfloat16 training run."""
import threading
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

LIBS = [pytest.param(torch, id="torch"), pytest.param(ptcore, id="ptcore")]


def _name(dtype):
    return str(dtype).split(".")[-1]


def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, [(x.category, str(x.message)) for x in w]


# ---------------------------------------------------------------------------
# state functions
# ---------------------------------------------------------------------------

def _state_trace(T):
    a, b = T.ones(2, 3), T.ones(3, 2)
    out = [T.is_autocast_enabled("cpu"), _name(T.get_autocast_dtype("cpu")),
           _name(T.get_autocast_dtype("cuda")), T.is_autocast_enabled(),
           T.is_autocast_cache_enabled()]
    with T.autocast("cpu", dtype=T.float16):
        out += [T.is_autocast_enabled("cpu"), _name(T.get_autocast_dtype("cpu")),
                _name((a @ b).dtype)]
        with T.autocast("cpu", enabled=False):
            out += ["off", T.is_autocast_enabled("cpu"), _name(T.get_autocast_dtype("cpu")),
                    _name((a @ b).dtype)]
            with T.autocast("cpu", dtype=T.bfloat16):
                out += ["on", _name((a @ b).dtype)]
            out += [_name((a @ b).dtype)]
        with T.autocast("cpu"):      # dtype None: the current autocast dtype
            out += ["default", _name(T.get_autocast_dtype("cpu")), _name((a @ b).dtype)]
        out += [_name((a @ b).dtype), T.is_autocast_enabled("cpu")]
    out += ["after", T.is_autocast_enabled("cpu"), _name(T.get_autocast_dtype("cpu")),
            _name((a @ b).dtype)]
    T.set_autocast_enabled("cpu", True)
    T.set_autocast_dtype("cpu", T.float16)
    out += ["set", T.is_autocast_enabled("cpu"), _name((a @ b).dtype)]
    T.set_autocast_enabled("cpu", False)
    T.set_autocast_dtype("cpu", T.bfloat16)
    out += [T.is_autocast_enabled("cpu"), _name((a @ b).dtype)]
    out += [T.autocast_increment_nesting(), T.autocast_increment_nesting(),
            T.autocast_decrement_nesting(), T.autocast_decrement_nesting()]
    T.set_autocast_cache_enabled(False)
    out += [T.is_autocast_cache_enabled()]
    T.set_autocast_cache_enabled(True)
    T.set_autocast_enabled(True)            # the one-argument (CUDA) form
    out += ["cuda flag", T.is_autocast_enabled(), T.is_autocast_enabled("cuda"),
            T.is_autocast_enabled("cpu")]
    T.set_autocast_enabled(False)
    return out


def test_state_functions_and_nesting_match_torch():
    assert _state_trace(ptcore) == _state_trace(torch)
    assert not ptcore.is_autocast_enabled("cpu") and not ptcore.is_autocast_enabled("cuda")


@pytest.mark.parametrize("fn,msg", [
    (lambda T: T.is_autocast_cpu_enabled(), "is_autocast_enabled('cpu')"),
    (lambda T: T.set_autocast_cpu_enabled(False), "set_autocast_enabled('cpu', enabled)"),
    (lambda T: T.get_autocast_cpu_dtype(), "get_autocast_dtype('cpu')"),
    (lambda T: T.set_autocast_cpu_dtype(T.bfloat16), "set_autocast_dtype('cpu', dtype)"),
    (lambda T: T.get_autocast_gpu_dtype(), "get_autocast_dtype('cuda')"),
    (lambda T: T.set_autocast_gpu_dtype(T.float16), "set_autocast_dtype('cuda', dtype)"),
])
def test_deprecated_state_functions_warn(fn, msg):
    rt, wt = _warns(lambda: fn(torch))
    rp, wp = _warns(lambda: fn(ptcore))
    assert [c for c, _ in wt] == [c for c, _ in wp] == [DeprecationWarning]
    assert msg in wp[0][1] and msg in wt[0][1]
    assert (rt is None) == (rp is None)
    if rt is not None:
        assert str(rt).split(".")[-1] == str(rp).split(".")[-1]


@pytest.mark.parametrize("fn", [
    lambda T: T.is_autocast_enabled("foo"),
    lambda T: T.get_autocast_dtype("foo"),
    lambda T: T.set_autocast_enabled("foo", True),
    lambda T: T.amp.is_autocast_available("foo"),
    lambda T: T.autocast("foo"),
])
def test_unknown_device_type_is_a_runtime_error(fn):
    with pytest.raises(RuntimeError):
        fn(torch)
    with pytest.raises(RuntimeError, match="foo"):
        fn(ptcore)


def test_device_type_must_be_a_string():
    with pytest.raises(ValueError):
        torch.autocast(1)
    with pytest.raises(ValueError, match="str"):
        ptcore.autocast(1)


@pytest.mark.parametrize("dt", ["float64", "float32", "int32"])
def test_unsupported_cpu_dtype_warns_and_disables(dt):
    def go(T):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with T.autocast("cpu", dtype=getattr(T, dt)) as ac:
                r = (T.ones(2, 2) @ T.ones(2, 2)).dtype
                on = T.is_autocast_enabled("cpu")
        return ac._enabled, on, _name(r), [x.category for x in w], [str(x.message) for x in w]
    et, ot, rt, ct, mt = go(torch)
    ep, op, rp, cp, mp = go(ptcore)
    assert (et, ot, rt, ct) == (ep, op, rp, cp) == (False, False, "float32", [UserWarning])
    assert "CPU Autocast only supports" in mp[0]


def test_cuda_autocast_without_cuda_warns_and_disables():
    if torch.cuda.is_available() or ptcore.cuda.is_available():
        pytest.skip("a CUDA device is present")
    _, wt = _warns(lambda: torch.autocast("cuda"))
    ac, wp = _warns(lambda: ptcore.autocast("cuda"))
    assert [c for c, _ in wt] == [c for c, _ in wp] == [UserWarning]
    assert "CUDA" in wp[0][1] and "Disabling" in wp[0][1]
    with ac:
        assert not ptcore.is_autocast_enabled("cuda")


def test_is_autocast_available():
    for d in ("cpu", "cuda"):
        assert ptcore.amp.is_autocast_available(d) == torch.amp.is_autocast_available(d)


# ---------------------------------------------------------------------------
# decorator, exceptions, threads
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("T", LIBS)
def test_decorator(T):
    @T.autocast("cpu", dtype=T.float16)
    def f(a, b):
        return a @ b, T.is_autocast_enabled("cpu")

    @T.autocast("cpu", enabled=False)
    def g(a, b):
        return a @ b

    a, b = T.ones(2, 3), T.ones(3, 2)
    r, on = f(a, b)
    assert r.dtype == T.float16 and on and f.__name__ == "f"
    assert not T.is_autocast_enabled("cpu")
    with T.autocast("cpu"):
        assert g(a, b).dtype == T.float32
        assert (a @ b).dtype == T.bfloat16
    assert (a @ b).dtype == T.float32


@pytest.mark.parametrize("T", LIBS)
def test_exception_inside_region_restores_state(T):
    with pytest.raises(KeyError):
        with T.autocast("cpu", dtype=T.float16):
            raise KeyError("x")
    assert not T.is_autocast_enabled("cpu")
    assert T.get_autocast_dtype("cpu") == T.bfloat16
    assert (T.ones(2, 2) @ T.ones(2, 2)).dtype == T.float32


@pytest.mark.parametrize("T", LIBS)
def test_autocast_is_thread_local(T):
    seen = []

    def work():
        seen.append((T.is_autocast_enabled("cpu"), (T.ones(2, 2) @ T.ones(2, 2)).dtype))
    with T.autocast("cpu"):
        th = threading.Thread(target=work)
        th.start()
        th.join(30)
        assert (T.ones(2, 2) @ T.ones(2, 2)).dtype == T.bfloat16
    assert seen == [(False, T.float32)]


def _out_trace(T):
    a = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = T.zeros(2, 2)
    out = []
    with T.autocast("cpu"):
        r = T.mm(a, a, out=c)               # out= runs as called: float32, written in place
        out += [r is c, _name(r.dtype), c.tolist()]
        r = T.cat([a, a.to(T.bfloat16)], 0, out=T.zeros(4, 2))
        out += [_name(r.dtype), r.tolist()]
        try:
            T.mm(a, a, out=T.zeros(2, 2, dtype=T.bfloat16))
            out.append("no error")
        except RuntimeError:
            out.append("RuntimeError")
    return out


def test_out_variants_are_not_cast():
    assert _out_trace(ptcore) == _out_trace(torch)


# ---------------------------------------------------------------------------
# the cast cache
# ---------------------------------------------------------------------------

def _cache_trace(T, cache_enabled):
    w = T.ones(3, 3, requires_grad=True)
    x = T.ones(3, 3)
    out = []
    with T.autocast("cpu", cache_enabled=cache_enabled):
        out.append(float((x @ w)[0, 0].detach()))
        with T.no_grad():
            w.add_(1)
        out.append(float((x @ w)[0, 0].detach()))     # a cached cast does not see the change
        with T.autocast("cpu"):              # nested region: the cache lives on
            out.append(float((x @ w)[0, 0].detach()))
        out.append(T.is_autocast_cache_enabled())
    with T.autocast("cpu", cache_enabled=cache_enabled):   # a new region: a new cache
        out.append(float((x @ w)[0, 0].detach()))
    out.append(T.is_autocast_cache_enabled())
    return out


@pytest.mark.parametrize("cache", [True, False])
def test_weight_cast_cache(cache):
    assert _cache_trace(ptcore, cache) == _cache_trace(torch, cache)


def test_cache_not_used_for_non_leaf_or_no_grad_tensors():
    def go(T):
        w0 = T.ones(3, 3, requires_grad=True)
        w = w0 * 1            # not a leaf
        v = T.ones(3, 3)      # no grad
        x = T.ones(3, 3)
        with T.autocast("cpu"):
            a = float((x @ w)[0, 0].detach())
            b = float((x @ v)[0, 0])
            with T.no_grad():
                w.add_(1)
                v.add_(1)
            return a, b, float((x @ w)[0, 0].detach()), float((x @ v)[0, 0])
    assert go(ptcore) == go(torch) == (3.0, 3.0, 6.0, 6.0)


# ---------------------------------------------------------------------------
# the deprecated per-device spellings
# ---------------------------------------------------------------------------

def test_cpu_amp_autocast_alias():
    at, wt = _warns(lambda: torch.cpu.amp.autocast(dtype=torch.float16))
    ap, wp = _warns(lambda: ptcore.cpu.amp.autocast(dtype=ptcore.float16))
    assert [c for c, _ in wt] == [c for c, _ in wp] == [FutureWarning]
    assert wp[0][1] == wt[0][1]
    with ap:
        assert ptcore.is_autocast_enabled("cpu")
        assert (ptcore.ones(2, 2) @ ptcore.ones(2, 2)).dtype == ptcore.float16
    assert not ptcore.is_autocast_enabled("cpu")
    assert _warns(lambda: ptcore.cpu.amp.autocast())[0].fast_dtype == ptcore.bfloat16

    with pytest.warns(FutureWarning):
        @ptcore.cpu.amp.autocast()
        def f():
            return (ptcore.ones(2, 2) @ ptcore.ones(2, 2)).dtype
    assert f() == ptcore.bfloat16
    assert isinstance(ap, ptcore.amp.autocast)


def test_cuda_amp_autocast_alias():
    if torch.cuda.is_available() or ptcore.cuda.is_available():
        pytest.skip("a CUDA device is present")
    at, wt = _warns(lambda: torch.cuda.amp.autocast())
    ap, wp = _warns(lambda: ptcore.cuda.amp.autocast())
    assert [c for c, _ in wt] == [c for c, _ in wp] == [FutureWarning, UserWarning]
    assert wp[0][1] == wt[0][1]
    assert ap.fast_dtype == ptcore.float16 and not ap._enabled


@pytest.mark.parametrize("which", ["custom_fwd", "custom_bwd"])
def test_cuda_amp_custom_fwd_bwd_aliases_warn(which):
    _, wt = _warns(lambda: getattr(torch.cuda.amp, which)(lambda ctx, x: x))
    f, wp = _warns(lambda: getattr(ptcore.cuda.amp, which)(lambda ctx, x: x))
    assert [c for c, _ in wt] == [c for c, _ in wp] == [FutureWarning]
    assert wp[0][1] == wt[0][1]
    assert callable(f)


# ---------------------------------------------------------------------------
# custom_fwd / custom_bwd
# ---------------------------------------------------------------------------

def _custom_trace(T):
    log = []

    class CastMM(T.autograd.Function):
        @staticmethod
        @T.amp.custom_fwd(device_type="cpu", cast_inputs=T.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            log.append(("fwd", _name(a.dtype), _name(b.dtype), T.is_autocast_enabled("cpu")))
            return a.mm(b)

        @staticmethod
        @T.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            log.append(("bwd", _name(g.dtype), T.is_autocast_enabled("cpu")))
            return g.mm(b.t()), a.t().mm(g)

    class PlainMM(T.autograd.Function):
        @staticmethod
        @T.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            log.append(("fwd2", _name(a.dtype), T.is_autocast_enabled("cpu")))
            return a.mm(b)

        @staticmethod
        @T.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            r = g.mm(b.t())
            log.append(("bwd2", T.is_autocast_enabled("cpu"), _name(T.get_autocast_dtype("cpu")),
                        _name(g.dtype), _name(r.dtype)))
            return r, a.t().mm(g)

    rs = np.random.RandomState(0)
    a = T.tensor(rs.randn(3, 4).astype(np.float32), requires_grad=True)
    b = T.tensor(rs.randn(4, 2).astype(np.float32), requires_grad=True)
    with T.autocast("cpu", dtype=T.float16):
        y = CastMM.apply(a.half(), b)
        y2 = PlainMM.apply(a, b)
    log.append(("out", _name(y.dtype), _name(y2.dtype)))
    (y.sum() + y2.float().sum()).backward()
    log.append(("grads", _name(a.grad.dtype), _name(b.grad.dtype)))
    # outside autocast, cast_inputs does nothing
    CastMM.apply(a.half(), b.half())
    return log, a.grad.numpy(), b.grad.numpy()


def test_custom_fwd_bwd():
    lt, gat, gbt = _custom_trace(torch)
    lp, gap, gbp = _custom_trace(ptcore)
    assert lp == lt
    np.testing.assert_allclose(gap, gat, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(gbp, gbt, rtol=1e-2, atol=1e-2)


def test_custom_fwd_requires_device_type():
    with pytest.raises(TypeError):
        torch.amp.custom_fwd(lambda ctx: 0)
    with pytest.raises(TypeError):
        ptcore.amp.custom_fwd(lambda ctx: 0)
    with pytest.raises(ValueError):
        ptcore.amp.custom_fwd(lambda ctx: 0, device_type=1)


# ---------------------------------------------------------------------------
# autograd through autocast
# ---------------------------------------------------------------------------

def _net(L, arch):
    nn = L.nn
    if arch == "mlp":
        return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    # norms between the low-precision layers: float32 parameters, low-precision input
    return nn.Sequential(nn.Linear(10, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 12),
                         nn.Unflatten(1, (3, 4)), nn.BatchNorm1d(3), nn.Flatten(),
                         nn.Linear(12, 4))


def _mlp_grads(T, dtype_name, arch="mlp"):
    rs = np.random.RandomState(1)
    torch.manual_seed(0)
    ref = _net(torch, arch)
    if T is torch:
        m = ref
    else:
        m = _net(ptcore, arch)
        m.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    x = T.tensor(rs.randn(8, 10).astype(np.float32), requires_grad=True)
    y = T.tensor(rs.randint(0, 4, 8))
    with T.autocast("cpu", dtype=getattr(T, dtype_name)):
        out = m(x)
        loss = (F if T is ptcore else TF).cross_entropy(out, y)
    loss.backward()
    return (_name(out.dtype), _name(loss.dtype), [(_name(p.grad.dtype), p.grad.numpy())
                                                  for p in m.parameters()],
            _name(x.grad.dtype), x.grad.numpy(), float(loss.detach()))


@pytest.mark.parametrize("arch", ["mlp", "norms"])
@pytest.mark.parametrize("dtype_name,tol", [("bfloat16", 5e-2), ("float16", 1e-2)])
def test_autograd_through_autocast(dtype_name, tol, arch):
    ot, lt, gt, xt, xgt, losst = _mlp_grads(torch, dtype_name, arch)
    op, lp, gp, xp, xgp, lossp = _mlp_grads(ptcore, dtype_name, arch)
    assert (op, lp, xp) == (ot, lt, xt) == (dtype_name, "float32", "float32")
    assert abs(lossp - losst) < tol
    for (dp, vp), (dt, vt) in zip(gp, gt):
        assert dp == dt == "float32"          # grads in the parameters' dtype
        np.testing.assert_allclose(vp, vt, rtol=tol, atol=tol * max(1.0, np.abs(vt).max()))
    np.testing.assert_allclose(xgp, xgt, rtol=tol, atol=tol * max(1.0, np.abs(xgt).max()))


def test_backward_outside_region_uses_no_autocast():
    """backward() after the region: the backward ops are not cast again."""
    for T in (torch, ptcore):
        w = T.ones(3, 3, requires_grad=True)
        with T.autocast("cpu"):
            y = T.ones(2, 3) @ w
        assert y.dtype == T.bfloat16
        y.float().sum().backward()
        assert w.grad.dtype == T.float32
        assert w.grad.numpy().tolist() == [[2.0] * 3] * 3


# ---------------------------------------------------------------------------
# a short bfloat16 training run (sklearn's digits)
# ---------------------------------------------------------------------------

def _train_digits(use_autocast, epochs=6):
    sk = pytest.importorskip("sklearn.datasets")
    d = sk.load_digits()
    X = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    rs = np.random.RandomState(0)
    perm = rs.permutation(len(X))
    X, y = X[perm], y[perm]
    Xtr, ytr, Xte, yte = X[:1400], y[:1400], X[1400:], y[1400:]
    ptcore.manual_seed(0)
    nn = ptcore.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4, 10))
    opt = ptcore.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    Xtr_t, ytr_t = ptcore.tensor(Xtr), ptcore.tensor(ytr)
    seen_dtypes = set()
    for _ in range(epochs):
        order = rs.permutation(len(Xtr))
        for i in range(0, len(order), 64):
            idx = ptcore.tensor(order[i:i + 64])
            xb, yb = Xtr_t[idx], ytr_t[idx]
            opt.zero_grad()
            with ptcore.autocast("cpu", dtype=ptcore.bfloat16, enabled=use_autocast):
                out = model(xb)
                loss = F.cross_entropy(out, yb)
            seen_dtypes.add((out.dtype, loss.dtype))
            loss.backward()
            opt.step()
    model.eval()
    with ptcore.no_grad(), ptcore.autocast("cpu", enabled=use_autocast):
        pred = model(ptcore.tensor(Xte)).float().argmax(1).numpy()
    assert all(p.dtype == ptcore.float32 for p in model.parameters())
    return float((pred == yte).mean()), seen_dtypes


def test_bf16_training_on_digits_matches_float32():
    acc32, d32 = _train_digits(False)
    acc16, d16 = _train_digits(True)
    assert d32 == {(ptcore.float32, ptcore.float32)}
    assert d16 == {(ptcore.bfloat16, ptcore.float32)}
    assert acc32 > 0.9
    assert acc16 >= acc32 - 0.03
