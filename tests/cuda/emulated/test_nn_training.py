"""Optimizers on CUDA parameters and end-to-end training on the emulated
device: an MLP and a LeNet give the CPU run's losses and weights;
model.to('cuda'), ptcore.save of CUDA tensors and ptcore.load(map_location)."""
import io

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore._dispatch.device import kernel_for


def _mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 12),
                         nn.SiLU(), nn.Linear(12, 4))


def _lenet():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(6, 10))


def _convnet_bn():
    # a bias right before batch norm has a gradient of rounding noise only,
    # which Adam would scale up to full steps: no bias there, and SGD below
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.AvgPool2d(2), nn.Conv2d(4, 6, 3, stride=1, dilation=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 10))


def _train(dev, make_model, make_opt, x, t, steps=3, dtype=ptcore.float32, clip=None):
    ptcore.manual_seed(0)
    m = make_model().to(dtype=dtype).to(dev)
    opt = make_opt(m.parameters())
    x, t = x.to(dtype).to(dev), t.to(dev)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), t)
        loss.backward()
        if clip is not None:
            clip(m.parameters())
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().cpu() for k, v in m.state_dict().items()}


def _same_run(make_model, make_opt, x, t, dtype=ptcore.float32, clip=None, rtol=1e-5, atol=1e-6):
    cl, cs = _train("cpu", make_model, make_opt, x, t, dtype=dtype, clip=clip)
    dl, ds = _train("cuda", make_model, make_opt, x, t, dtype=dtype, clip=clip)
    assert np.allclose(cl, dl, rtol=rtol, atol=atol), (cl, dl)
    assert cs.keys() == ds.keys()
    for k in cs:
        assert ds[k].dtype == cs[k].dtype
        assert ptcore.allclose(cs[k].double(), ds[k].double(), rtol=rtol, atol=atol), \
            (k, (cs[k].double() - ds[k].double()).abs().max())


def _data(seed=0, image=False):
    g = ptcore.Generator().manual_seed(seed)
    x = ptcore.randn((6, 1, 8, 8) if image else (6, 8), generator=g)
    t = ptcore.tensor([0, 1, 2, 3, 1, 0]) if not image else ptcore.tensor([1, 3, 0, 9, 2, 7])
    return x, t


OPTIMIZERS = [
    ("sgd", lambda p: ptcore.optim.SGD(p, lr=0.1)),
    ("sgd_momentum_nesterov_wd", lambda p: ptcore.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                                             weight_decay=0.01)),
    ("sgd_momentum_dampening", lambda p: ptcore.optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.2,
                                                          maximize=True)),
    ("adam", lambda p: ptcore.optim.Adam(p, lr=0.01)),
    ("adam_amsgrad_wd", lambda p: ptcore.optim.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("adamw", lambda p: ptcore.optim.AdamW(p, lr=0.01, weight_decay=0.05)),
    ("adamw_maximize", lambda p: ptcore.optim.AdamW(p, lr=0.01, maximize=True)),
]


@pytest.mark.parametrize("name,make_opt", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_mlp_training_matches_cpu(name, make_opt):
    _same_run(_mlp, make_opt, *_data())


def test_mlp_training_float64_and_differentiable_adam():
    _same_run(_mlp, lambda p: ptcore.optim.Adam(p, lr=0.01), *_data(), dtype=ptcore.float64,
              rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [ptcore.bfloat16, ptcore.float16])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_unfused_update_with_ops(dtype, amsgrad):
    # low-precision parameters take the op-by-op update (lerp_, addcmul_,
    # addcdiv_, maximum(out=) ...), not the fused kernel
    g = ptcore.Generator().manual_seed(3)
    vals = [ptcore.randn(5, 3, generator=g).to(dtype) for _ in range(4)]
    res = {}
    for dev in ("cpu", "cuda"):
        p = ptcore.nn.Parameter(vals[0].to(dev).clone())
        opt = ptcore.optim.Adam([p], lr=0.1, amsgrad=amsgrad, weight_decay=0.01)
        for gv in vals[1:]:
            p.grad = gv.to(dev)
            opt.step()
        res[dev] = (p.detach().cpu(), opt.state[p]["exp_avg_sq"].cpu())
    for a, b in zip(res["cpu"], res["cuda"]):
        assert ptcore.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2)


def test_optimizer_pointwise_ops():
    a, b, c = (ptcore.randn(4, 3, generator=ptcore.Generator().manual_seed(i)) for i in range(3))
    ac, bc, cc = a.cuda(), b.cuda(), c.cuda()
    for w in (0.1, 0.9):
        assert ptcore.allclose(ac.clone().lerp_(bc, w).cpu(), a.clone().lerp_(b, w))
    assert ptcore.allclose(ac.clone().addcmul_(bc, cc, value=-0.5).cpu(),
                           a.clone().addcmul_(b, c, value=-0.5))
    assert ptcore.allclose(ac.clone().addcdiv_(bc, cc.abs() + 1, value=2).cpu(),
                           a.clone().addcdiv_(b, c.abs() + 1, value=2))
    assert ptcore.allclose(ptcore.clamp(ac, -0.5, 0.5).cpu(), ptcore.clamp(a, -0.5, 0.5))
    assert ptcore.allclose(ac.clamp_min(0.1).cpu(), a.clamp_min(0.1))
    assert ptcore.allclose(ac.clamp(max=bc).cpu(), a.clamp(max=b))


def test_lenet_training_matches_cpu():
    _same_run(_lenet, lambda p: ptcore.optim.Adam(p, lr=0.01), *_data(image=True))


def test_lenet_on_the_second_device():
    if ptcore.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    cl, cs = _train("cpu", _lenet, lambda p: ptcore.optim.Adam(p, lr=0.01), *_data(image=True))
    dl, ds = _train("cuda:1", _lenet, lambda p: ptcore.optim.Adam(p, lr=0.01), *_data(image=True))
    assert np.allclose(cl, dl, rtol=1e-5)
    for k in cs:
        assert ptcore.allclose(cs[k], ds[k], rtol=1e-5, atol=1e-6), k


def test_convnet_with_batch_norm_matches_cpu():
    _same_run(_convnet_bn, lambda p: ptcore.optim.SGD(p, lr=0.1, momentum=0.9),
              *_data(image=True))


def test_clip_grad_norm_and_zero_grad():
    if kernel_for("stack", "cuda") is None:
        pytest.skip("clip_grad_norm_ stacks the per-tensor norms: ptcore.stack has no CUDA kernel "
                    "in this build")
    _same_run(_mlp, lambda p: ptcore.optim.SGD(p, lr=0.1),
              *_data(), clip=lambda ps: nn.utils.clip_grad_norm_(ps, 0.05))


def test_zero_grad_and_fused_adam_state_on_device():
    m = nn.Linear(3, 2).to("cuda")
    opt = ptcore.optim.Adam(m.parameters(), lr=0.1)
    m(ptcore.ones(4, 3, device="cuda")).sum().backward()
    assert m.weight.grad.device.type == "cuda"
    opt.step()
    st = opt.state[m.weight]
    assert st["exp_avg"].device.type == "cuda" and st["exp_avg_sq"].device.type == "cuda"
    v = m.weight._version
    opt.step()
    assert m.weight._version > v
    opt.zero_grad()
    assert m.weight.grad is None
    m(ptcore.ones(4, 3, device="cuda")).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert m.weight.grad.device.type == "cuda" and m.weight.grad.abs().sum().item() == 0


def test_save_and_load_cuda_tensors(tmp_path):
    ptcore.manual_seed(0)
    m = _mlp().to("cuda")
    opt = ptcore.optim.Adam(m.parameters())
    m(ptcore.ones(2, 8, device="cuda")).sum().backward()
    opt.step()
    buf = io.BytesIO()
    ptcore.save({"model": m.state_dict(), "opt": opt.state_dict()}, buf)
    for loc, want in (("cpu", "cpu"), ("cuda", "cuda"), (None, "cuda")):
        buf.seek(0)
        ck = ptcore.load(buf, map_location=loc) if loc else ptcore.load(buf)
        for k, v in ck["model"].items():
            assert v.device.type == want, (loc, k, v.device)
            assert ptcore.equal(v.cpu(), m.state_dict()[k].cpu())
        st = ck["opt"]["state"][0]["exp_avg"]
        assert st.device.type == want
    path = tmp_path / "m.pt"
    ptcore.save(m.state_dict(), path)
    m2 = _mlp()
    m2.load_state_dict(ptcore.load(path, map_location="cpu"))
    m2.to("cuda")
    x = ptcore.randn(3, 8)
    assert ptcore.allclose(m2(x.cuda()).cpu(), m(x.cuda()).cpu())


# where torch puts the 0-d per-parameter state scalars of CUDA parameters:
# on the device for capturable / fused groups (and always for ASGD), else on the CPU
_SCALAR_STATE_DEVICES = [
    ("Adam", {}, {"step": "cpu"}),
    ("Adam", {"capturable": True}, {"step": "cuda"}),
    ("Adam", {"fused": True}, {"step": "cuda"}),
    ("AdamW", {"fused": True}, {"step": "cuda"}),
    ("Adagrad", {}, {"step": "cpu"}),
    ("Adagrad", {"fused": True}, {"step": "cuda"}),
    ("Adamax", {"capturable": True}, {"step": "cuda"}),
    ("Adadelta", {"capturable": True}, {"step": "cuda"}),
    ("RAdam", {"capturable": True}, {"step": "cuda"}),
    ("RMSprop", {"capturable": True}, {"step": "cuda"}),
    ("Rprop", {"capturable": True}, {"step": "cuda"}),
    ("NAdam", {}, {"step": "cpu", "mu_product": "cpu"}),
    ("NAdam", {"capturable": True}, {"step": "cuda", "mu_product": "cuda"}),
    ("ASGD", {}, {"step": "cuda", "eta": "cuda", "mu": "cuda"}),
    ("Adafactor", {}, {"step": "cpu"}),
]


@pytest.mark.parametrize("name,opts,devices", _SCALAR_STATE_DEVICES,
                         ids=[f"{n}-{'-'.join(o) or 'default'}" for n, o, _ in
                              _SCALAR_STATE_DEVICES])
def test_optimizer_scalar_state_devices(name, opts, devices):
    """The step (and NAdam's mu_product, ASGD's eta and mu) sit where torch puts
    them, and the trajectory is the CPU run's (without capturable, which the
    CPU refuses)."""
    runs = []
    for dev in ("cpu", "cuda"):
        ptcore.manual_seed(0)
        p = nn.Parameter(ptcore.randn(3, 4).to(dev))
        kw = {k: v for k, v in opts.items() if dev == "cuda" or k != "capturable"}
        opt = getattr(ptcore.optim, name)([p], lr=0.01, **kw)
        for _ in range(3):
            p.grad = p.detach() * 2 + 1
            opt.step()
        runs.append(p.detach().cpu())
        if dev == "cuda":
            state = opt.state[p]
            assert {k: state[k].device.type for k in devices} == devices
            assert all(state[k].dtype == ptcore.float32 for k in devices)
    assert ptcore.allclose(runs[0], runs[1], rtol=1e-5, atol=1e-6)
