"""Normalization layers and functions of ptcore.nn against PyTorch: BatchNorm
(train/eval, running statistics over several steps, momentum None),
LayerNorm, GroupNorm, InstanceNorm, RMSNorm, LocalResponseNorm, normalize;
error classes; gradients when autograd is available."""
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch

DTYPES = ["float32", "float64"]


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)


def P(t):
    if t is None:
        return None
    return ptcore.from_numpy(t.detach().numpy().copy())


def rnd(shape, dtype, seed=0, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=getattr(torch, dtype)) * scale + shift


def check(p, t, dtype):
    assert tuple(p.shape) == tuple(t.shape), (p.shape, t.shape)
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), **tol(dtype))


def same_error(pfn, tfn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(Exception) as pe:
        pfn()
    assert type(pe.value) is type(te.value), (pe.value, te.value)
    assert str(pe.value).split("\n")[0] == str(te.value).split("\n")[0].replace("torch.", "ptcore.")


def _has_autograd():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


HAS_AUTOGRAD = _has_autograd()
needs_autograd = pytest.mark.skipif(not HAS_AUTOGRAD, reason="ptcore autograd not available")


def copy_params(pm, tm):
    """Copy torch module parameters and buffers into the ptcore module."""
    for name, tp in list(tm.named_parameters()) + list(tm.named_buffers()):
        target = pm
        *path, leaf = name.split(".")
        for part in path:
            target = getattr(target, part)
        cur = getattr(target, leaf)
        with ptcore.no_grad():
            cur.copy_(P(tp))


def compare_module_state(pm, tm, dtype):
    for name, tb in tm.named_buffers():
        pb = dict(pm.named_buffers())[name]
        np.testing.assert_allclose(pb.numpy(), tb.numpy(), **tol(dtype))


# ---------------------------------------------------------------------------
# functional forms
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("with_running", [False, True])
def test_batch_norm_functional(dtype, shape, affine, training, with_running):
    if not training and not with_running:
        return
    x = rnd(shape, dtype, 1, 2.0, 0.5)
    C = shape[1]
    w = rnd((C,), dtype, 2) if affine else None
    b = rnd((C,), dtype, 3) if affine else None
    rm = rnd((C,), dtype, 4) if with_running else None
    rv = (rnd((C,), dtype, 5).abs() + 0.5) if with_running else None
    prm, prv = P(rm), P(rv)
    out_t = TF.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-4)
    out_p = F.batch_norm(P(x), prm, prv, P(w), P(b), training=training, momentum=0.3, eps=1e-4)
    check(out_p, out_t, dtype)
    if with_running:
        check(prm, rm, dtype)
        check(prv, rv, dtype)


def test_batch_norm_errors():
    x = torch.randn(4, 3, 5)
    cases = [
        lambda F_, X, T: F_.batch_norm(X, T(torch.zeros(4)), T(torch.ones(3)), training=True),
        lambda F_, X, T: F_.batch_norm(X, T(torch.zeros(3)), T(torch.ones(4)), training=True),
        lambda F_, X, T: F_.batch_norm(X, None, None, weight=T(torch.ones(4)), training=True),
        lambda F_, X, T: F_.batch_norm(X, None, None, bias=T(torch.ones(4)), training=True),
        lambda F_, X, T: F_.batch_norm(X, None, None, training=False),
        lambda F_, X, T: F_.batch_norm(X[:1, :, :1], None, None, training=True),
        lambda F_, X, T: F_.batch_norm(X, None, None, training=True, eps=0.0),
        lambda F_, X, T: F_.batch_norm(X, None, None, training=False, eps=-1.0),
    ]
    ident = lambda t: t  # noqa: E731
    for c in cases:
        same_error(lambda: c(F, P(x), P), lambda: c(TF, x, ident))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)),
                                      ((2, 3, 2, 5), (2, 5))])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_functional(dtype, shape, ns, affine):
    x = rnd(shape, dtype, 1, 3.0, 1.0)
    w = rnd(ns, dtype, 2) if affine != "none" else None
    b = rnd(ns, dtype, 3) if affine == "both" else None
    check(F.layer_norm(P(x), list(ns), P(w), P(b), eps=1e-3),
          TF.layer_norm(x, list(ns), w, b, eps=1e-3), dtype)
    check(F.rms_norm(P(x), list(ns), P(w)), TF.rms_norm(x, list(ns), w), dtype)
    check(F.rms_norm(P(x), list(ns), P(w), eps=0.1), TF.rms_norm(x, list(ns), w, eps=0.1), dtype)


def test_layer_norm_errors():
    x = torch.randn(4, 3, 5)
    for ns, kw in [((4,), {}), ((3, 5), {"weight": torch.ones(5)}),
                   ((3, 5), {"bias": torch.ones(5)}), ((), {}), (5, {})]:
        pkw = {k: P(v) for k, v in kw.items()}
        same_error(lambda: F.layer_norm(P(x), ns, **pkw), lambda: TF.layer_norm(x, ns, **kw))
    same_error(lambda: F.rms_norm(P(x), (4,)), lambda: TF.rms_norm(x, (4,)))
    same_error(lambda: F.rms_norm(P(x), (5,), weight=P(torch.ones(3))),
               lambda: TF.rms_norm(x, (5,), weight=torch.ones(3)))
    same_error(lambda: F.layer_norm(P(x.int()), (5,)), lambda: TF.layer_norm(x.int(), (5,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,groups", [((4, 6), 3), ((2, 6, 5), 2), ((2, 6, 3, 4), 3),
                                          ((2, 4, 2, 2, 3), 4), ((3, 4, 5), 1)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_functional(dtype, shape, groups, affine):
    x = rnd(shape, dtype, 1, 2.0, -1.0)
    C = shape[1]
    w = rnd((C,), dtype, 2) if affine else None
    b = rnd((C,), dtype, 3) if affine else None
    check(F.group_norm(P(x), groups, P(w), P(b), eps=1e-4),
          TF.group_norm(x, groups, w, b, eps=1e-4), dtype)


def test_group_norm_errors():
    x = torch.randn(4, 3, 5)
    for args, kw in [((x, 2), {}), ((x, 3), {"weight": torch.ones(4)}),
                     ((torch.randn(1, 3), 3), {}), ((torch.randn(3), 3), {})]:
        pkw = {k: P(v) for k, v in kw.items()}
        same_error(lambda: F.group_norm(P(args[0]), args[1], **pkw),
                   lambda: TF.group_norm(*args, **kw))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("use_input_stats,with_running", [(True, False), (True, True),
                                                           (False, True)])
def test_instance_norm_functional(dtype, shape, affine, use_input_stats, with_running):
    x = rnd(shape, dtype, 1, 2.0, 0.5)
    C = shape[1]
    w = rnd((C,), dtype, 2) if affine else None
    b = rnd((C,), dtype, 3) if affine else None
    rm = rnd((C,), dtype, 4) if with_running else None
    rv = (rnd((C,), dtype, 5).abs() + 0.5) if with_running else None
    prm, prv = P(rm), P(rv)
    out_t = TF.instance_norm(x, rm, rv, w, b, use_input_stats, momentum=0.2, eps=1e-4)
    out_p = F.instance_norm(P(x), prm, prv, P(w), P(b), use_input_stats, momentum=0.2, eps=1e-4)
    check(out_p, out_t, dtype)
    if with_running:
        check(prm, rm, dtype)
        check(prv, rv, dtype)


def test_instance_norm_errors():
    x = torch.randn(4, 3, 5)
    same_error(lambda: F.instance_norm(P(x), P(torch.zeros(4)), P(torch.ones(3))),
               lambda: TF.instance_norm(x, torch.zeros(4), torch.ones(3)))
    same_error(lambda: F.instance_norm(P(x), None, None, use_input_stats=False),
               lambda: TF.instance_norm(x, None, None, use_input_stats=False))
    same_error(lambda: F.instance_norm(P(x[:, :, :1])), lambda: TF.instance_norm(x[:, :, :1]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 7, 3, 4), (1, 5, 2, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm(dtype, shape, size):
    x = rnd(shape, dtype, 1, 3.0)
    check(F.local_response_norm(P(x), size, alpha=0.01, beta=0.6, k=1.5),
          TF.local_response_norm(x, size, alpha=0.01, beta=0.6, k=1.5), dtype)
    check(ptcore.nn.LocalResponseNorm(size, 0.01, 0.6, 1.5)(P(x)),
          torch.nn.LocalResponseNorm(size, 0.01, 0.6, 1.5)(x), dtype)
    x2 = x.reshape(x.shape[0], -1)
    same_error(lambda: F.local_response_norm(P(x2), 2), lambda: TF.local_response_norm(x2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("dim", [1, 0, -1])
def test_normalize(dtype, p, dim):
    x = rnd((3, 4, 5), dtype, 1)
    x[0, 0] = 0.0
    check(F.normalize(P(x), p=p, dim=dim), TF.normalize(x, p=p, dim=dim), dtype)
    check(F.normalize(P(x), p=p, dim=dim, eps=0.5), TF.normalize(x, p=p, dim=dim, eps=0.5), dtype)


# ---------------------------------------------------------------------------
# modules
# ---------------------------------------------------------------------------
BN_CASES = [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (4, 4, 6)), ("BatchNorm2d", (3, 4, 5, 2)),
            ("BatchNorm3d", (2, 4, 3, 2, 2))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BN_CASES)
@pytest.mark.parametrize("momentum", [0.1, None, 0.5])
@pytest.mark.parametrize("affine,track", [(True, True), (False, True), (True, False)])
def test_batchnorm_module(dtype, case, momentum, affine, track):
    name, shape = case
    C = shape[1]
    tdt = getattr(torch, dtype)
    tm = getattr(torch.nn, name)(C, eps=1e-4, momentum=momentum, affine=affine,
                                 track_running_stats=track, dtype=tdt)
    pm = getattr(ptcore.nn, name)(C, eps=1e-4, momentum=momentum, affine=affine,
                                  track_running_stats=track, dtype=getattr(ptcore, dtype))
    if affine:
        with torch.no_grad():
            tm.weight.copy_(rnd((C,), dtype, 7))
            tm.bias.copy_(rnd((C,), dtype, 8))
    copy_params(pm, tm)
    for step in range(3):      # training steps update running stats
        x = rnd(shape, dtype, 10 + step, 1.5, step * 0.3)
        check(pm(P(x)), tm(x), dtype)
        compare_module_state(pm, tm, dtype)
    if track:
        assert int(pm.num_batches_tracked.item()) == 3
    tm.eval()
    pm.eval()
    x = rnd(shape, dtype, 20)
    check(pm(P(x)), tm(x), dtype)
    compare_module_state(pm, tm, dtype)


def test_batchnorm_module_misc():
    nn = ptcore.nn
    m = nn.BatchNorm2d(3)
    assert set(dict(m.named_parameters())) == {"weight", "bias"}
    assert set(dict(m.named_buffers())) == {"running_mean", "running_var", "num_batches_tracked"}
    assert m.num_batches_tracked.dtype == ptcore.int64
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(m.bias.detach().numpy(), np.zeros(3, np.float32))
    assert repr(m) == repr(torch.nn.BatchNorm2d(3))
    assert repr(nn.BatchNorm1d(4, affine=False, bias=False)) == repr(
        torch.nn.BatchNorm1d(4, affine=False, bias=False))
    m2 = nn.BatchNorm1d(3, bias=False)
    assert m2.bias is None
    m3 = nn.BatchNorm1d(3, track_running_stats=False)
    assert m3.running_mean is None and m3.num_batches_tracked is None
    for mod, x in [(nn.BatchNorm1d(3), ptcore.zeros(2, 3, 4, 5)), (nn.BatchNorm2d(3), ptcore.zeros(2, 3)),
                   (nn.BatchNorm3d(3), ptcore.zeros(2, 3, 4, 5))]:
        with pytest.raises(ValueError, match="expected"):
            mod(x)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(ptcore.zeros(1, 3))
    # state_dict round trip matches torch's keys
    tsd = torch.nn.BatchNorm1d(3).state_dict()
    assert list(m2.state_dict().keys()) == [k for k in tsd.keys() if k != "bias"]
    m.running_mean.fill_(3.0)
    m.reset_running_stats()
    assert float(m.running_mean.sum().item()) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (3, 4, 6)), ("InstanceNorm1d", (4, 6)),
                                        ("InstanceNorm2d", (2, 4, 3, 5)),
                                        ("InstanceNorm2d", (4, 3, 5)),
                                        ("InstanceNorm3d", (2, 4, 2, 3, 2))])
@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (True, True),
                                          (False, True)])
def test_instancenorm_module(dtype, name, shape, affine, track):
    C = 4
    tdt = getattr(torch, dtype)
    tm = getattr(torch.nn, name)(C, eps=1e-4, momentum=0.2, affine=affine,
                                 track_running_stats=track, dtype=tdt)
    pm = getattr(ptcore.nn, name)(C, eps=1e-4, momentum=0.2, affine=affine,
                                  track_running_stats=track, dtype=getattr(ptcore, dtype))
    if affine:
        with torch.no_grad():
            tm.weight.copy_(rnd((C,), dtype, 7))
            tm.bias.copy_(rnd((C,), dtype, 8))
    copy_params(pm, tm)
    for step in range(2):
        x = rnd(shape, dtype, 10 + step, 1.5, 0.2)
        check(pm(P(x)), tm(x), dtype)
        compare_module_state(pm, tm, dtype)
    tm.eval()
    pm.eval()
    x = rnd(shape, dtype, 20)
    check(pm(P(x)), tm(x), dtype)
    assert repr(pm) == repr(tm).replace(f", dtype={tdt}", "")


def test_instancenorm_num_features_mismatch():
    x = rnd((2, 5, 6), "float32")
    with pytest.raises(ValueError, match="to match num_features"):
        ptcore.nn.InstanceNorm1d(4, affine=True)(P(x))
    with pytest.warns(UserWarning, match="does not match num_features"):
        ptcore.nn.InstanceNorm1d(4)(P(x))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        ptcore.nn.InstanceNorm1d(4)(P(x[None]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ns,shape", [(6, (4, 6)), ((3, 4), (2, 3, 4)), ([4], (2, 3, 4))])
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True)])
def test_layernorm_rmsnorm_modules(dtype, ns, shape, affine, bias):
    tdt, pdt = getattr(torch, dtype), getattr(ptcore, dtype)
    tm = torch.nn.LayerNorm(ns, eps=1e-4, elementwise_affine=affine, bias=bias, dtype=tdt)
    pm = ptcore.nn.LayerNorm(ns, eps=1e-4, elementwise_affine=affine, bias=bias, dtype=pdt)
    assert repr(pm) == repr(tm)
    if affine:
        with torch.no_grad():
            tm.weight.copy_(torch.randn(tm.weight.shape, dtype=tdt))
            if bias:
                tm.bias.copy_(torch.randn(tm.bias.shape, dtype=tdt))
    copy_params(pm, tm)
    x = rnd(shape, dtype, 1, 2.0, 1.0)
    check(pm(P(x)), tm(x), dtype)
    for eps in (None, 1e-3):
        tr = torch.nn.RMSNorm(ns, eps=eps, elementwise_affine=affine, dtype=tdt)
        pr = ptcore.nn.RMSNorm(ns, eps=eps, elementwise_affine=affine, dtype=pdt)
        assert repr(pr) == repr(tr)
        if affine:
            with torch.no_grad():
                tr.weight.copy_(torch.randn(tr.weight.shape, dtype=tdt))
        copy_params(pr, tr)
        check(pr(P(x)), tr(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("groups,C,shape", [(2, 4, (3, 4, 5)), (4, 4, (2, 4, 3, 3)), (1, 3, (2, 3))])
@pytest.mark.parametrize("affine", [True, False])
def test_groupnorm_module(dtype, groups, C, shape, affine):
    tdt, pdt = getattr(torch, dtype), getattr(ptcore, dtype)
    tm = torch.nn.GroupNorm(groups, C, eps=1e-4, affine=affine, dtype=tdt)
    pm = ptcore.nn.GroupNorm(groups, C, eps=1e-4, affine=affine, dtype=pdt)
    assert repr(pm) == repr(tm)
    if affine:
        with torch.no_grad():
            tm.weight.copy_(torch.randn(C, dtype=tdt))
            tm.bias.copy_(torch.randn(C, dtype=tdt))
    copy_params(pm, tm)
    x = rnd(shape, dtype, 1, 2.0, 1.0)
    check(pm(P(x)), tm(x), dtype)
    with pytest.raises(ValueError, match="must be divisible by num_groups"):
        ptcore.nn.GroupNorm(3, 4)


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------
def _grad_compare(pm, tm, x, dtype):
    tx = x.clone().requires_grad_(True)
    px = P(x).requires_grad_(True)
    tout, pout = tm(tx), pm(px)
    check(pout, tout, dtype)
    r = rnd(tuple(tout.shape), dtype, 77)
    (tout * r).sum().backward()
    (pout * P(r)).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), **tol(dtype))
    tparams = dict(tm.named_parameters())
    for name, pp in pm.named_parameters():
        np.testing.assert_allclose(pp.grad.numpy(), tparams[name].grad.numpy(), **tol(dtype))


@needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mod,args,shape", [
    ("BatchNorm1d", (4,), (6, 4)), ("BatchNorm2d", (4,), (3, 4, 3, 2)),
    ("LayerNorm", ((3, 2),), (4, 3, 2)), ("GroupNorm", (2, 4), (3, 4, 5)),
    ("InstanceNorm1d", (4,), (3, 4, 5)), ("RMSNorm", (5,), (3, 5)),
    ("LocalResponseNorm", (3,), (2, 4, 5)),
])
@pytest.mark.parametrize("train", [True, False])
def test_norm_gradients(dtype, mod, args, shape, train):
    tdt = getattr(torch, dtype)
    kw = {"affine": True} if mod.startswith("Instance") else {}
    tm = getattr(torch.nn, mod)(*args, **kw).to(tdt)
    pm = getattr(ptcore.nn, mod)(*args, **kw).to(getattr(ptcore, dtype))
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn(p.shape, dtype=tdt))
        for name, b in tm.named_buffers():
            if name == "running_var":
                b.copy_(torch.rand(b.shape, dtype=tdt) + 0.5)
            elif name == "running_mean":
                b.copy_(torch.randn(b.shape, dtype=tdt))
    copy_params(pm, tm)
    if not train:
        tm.eval()
        pm.eval()
    _grad_compare(pm, tm, rnd(shape, dtype, 3, 2.0, 0.5), dtype)


@needs_autograd
@pytest.mark.parametrize("dtype", DTYPES)
def test_normalize_gradients(dtype):
    x = rnd((3, 4), dtype, 1)
    tx, px = x.clone().requires_grad_(True), P(x).requires_grad_(True)
    r = rnd((3, 4), dtype, 2)
    (TF.normalize(tx, dim=1) * r).sum().backward()
    (F.normalize(px, dim=1) * P(r)).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), **tol(dtype))


def test_batchnorm_state_dict_roundtrip_and_legacy():
    tm = torch.nn.BatchNorm1d(3)
    tm(torch.randn(5, 3) * 2 + 1)
    sd = {k: P(v) for k, v in tm.state_dict().items()}
    pm = ptcore.nn.BatchNorm1d(3)
    pm.load_state_dict(sd)
    assert int(pm.num_batches_tracked.item()) == 1
    pm.eval()
    tm.eval()
    x = torch.randn(4, 3)
    check(pm(P(x)), tm(x), "float32")
    assert list(pm.state_dict().keys()) == list(tm.state_dict().keys())
    # a checkpoint from before num_batches_tracked existed (version 1) still loads strictly
    old = {k: v for k, v in sd.items() if k != "num_batches_tracked"}
    from collections import OrderedDict
    old = OrderedDict(old)
    old._metadata = {"": {"version": 1}}
    pm2 = ptcore.nn.BatchNorm1d(3)
    pm2.load_state_dict(old)
    check(pm2.running_mean, tm.running_mean, "float32")
    # without version metadata the key is filled in as well (as torch does)
    pm3 = ptcore.nn.BatchNorm1d(3)
    pm3.load_state_dict(OrderedDict((k, v) for k, v in sd.items() if k != "num_batches_tracked"))
    assert int(pm3.num_batches_tracked.item()) == 0
    # a current-version checkpoint missing the key is an error
    cur = OrderedDict((k, v) for k, v in sd.items() if k != "num_batches_tracked")
    cur._metadata = {"": {"version": 2}}
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        ptcore.nn.BatchNorm1d(3).load_state_dict(cur)


def test_norm_module_dtype_conversion():
    m = ptcore.nn.BatchNorm2d(3).double()
    assert m.weight.dtype == ptcore.float64 and m.running_mean.dtype == ptcore.float64
    assert m.num_batches_tracked.dtype == ptcore.int64
    x = rnd((2, 3, 2, 2), "float64")
    t = torch.nn.BatchNorm2d(3).double()
    check(m(P(x)), t(x), "float64")


@needs_autograd
@pytest.mark.parametrize("mod,args,shape", [("BatchNorm2d", (3,), (4, 3, 2, 2)),
                                            ("LayerNorm", ((5,),), (4, 5)),
                                            ("GroupNorm", (1, 3), (2, 3, 4))])
def test_inplace_op_on_output_keeps_backward_valid(mod, args, shape):
    kw = {"elementwise_affine": False} if mod == "LayerNorm" else {"affine": False}
    tm, pm = getattr(torch.nn, mod)(*args, **kw), getattr(ptcore.nn, mod)(*args, **kw)
    x = rnd(shape, "float64", 1)
    tx, px = x.float().clone().requires_grad_(True), P(x.float()).requires_grad_(True)
    ty, py = tm(tx), pm(px)
    ty.mul_(ty.detach() + 2.0)      # in-place on the normalised output (as a ReLU(inplace) would)
    py.mul_(py.detach() + 2.0)
    ty.sum().backward()
    py.sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
