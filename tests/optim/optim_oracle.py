"""Shared helpers for the optimizer tests against torch.optim: the same
parameters and gradient function in both libraries, trajectory runs and
state-dict comparisons."""
import numpy as np

import ptcore
from ptcore import optim

try:
    import torch
except ImportError:
    torch = None

# (48, 50) is above ptcore.optim's size threshold for composed (non-fused) updates
SHAPES = [(3, 4), (5,), (2, 1, 3), (), (48, 50)]
NSTEPS = 20
PT_DTYPES = {"float32": ptcore.float32, "float64": ptcore.float64}
TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def np_data(seed, dtype):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    cs = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    ws = [(rng.random(s) + 0.5).astype(dtype) for s in SHAPES]
    return xs, cs, ws


class Side:
    """Parameters and the fixed gradient function for one library."""

    def __init__(self, lib, dtype, seed=0):
        self.lib = lib
        xs, cs, ws = np_data(seed, dtype)
        self.params = [lib.tensor(x.copy(), requires_grad=True) for x in xs]
        self.cs = [lib.tensor(c) for c in cs]
        self.ws = [lib.tensor(w) for w in ws]

    def set_grads(self, step, sign=1.0, skip=None):
        # grad of sum(w * (x - c)^2 / 2 + 0.025 * x^4), same op order on both sides
        for i, (p, c, w) in enumerate(zip(self.params, self.cs, self.ws)):
            if skip is not None and skip(step, i):
                p.grad = None
                continue
            x = p.detach()
            g = (x - c) * w + x * x * x * 0.1
            if sign != 1.0:
                g = g * sign
            p.grad = g

    def groups(self, override):
        if override is None:
            return self.params
        return [{"params": self.params[:2]}, dict({"params": self.params[2:]}, **override)]


def skip_some(step, i):
    # parameter 1 has no gradient on every third step
    return i == 1 and step % 3 == 2


def close(actual, desired, rtol, atol, err_msg=""):
    # elementwise rtol plus a normwise term: an element whose gradient is a
    # cancellation (near a minimum) legitimately amplifies last-bit differences
    desired = np.asarray(desired)
    scale = float(np.abs(desired).max()) if desired.size else 0.0
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol + rtol * scale,
                               err_msg=err_msg)


def assert_close_params(pp, tp, dtype, msg=""):
    for a, b in zip(pp, tp):
        assert a.dtype == PT_DTYPES[dtype]
        close(a.detach().numpy(), b.detach().numpy(), err_msg=msg, **TOL[dtype])


def dtype_name(d):
    return str(d).split(".")[-1]


def assert_state_dict_equal(psd, tsd, dtype, ordered=False):
    """ptcore's optimizer state_dict equals torch's (values to TOL[dtype]);
    ``ordered``: the group keys and per-parameter state keys also come in
    torch's order."""
    assert len(psd["param_groups"]) == len(tsd["param_groups"])
    for pg, tg in zip(psd["param_groups"], tsd["param_groups"]):
        assert pg == tg
        if ordered:
            assert list(pg.keys()) == list(tg.keys())
    assert sorted(psd["state"].keys()) == sorted(tsd["state"].keys())
    for k, ts in tsd["state"].items():
        ps = psd["state"][k]
        if ordered:
            assert list(ps.keys()) == list(ts.keys())
        else:
            assert sorted(ps.keys()) == sorted(ts.keys())
        for name, tv in ts.items():
            pv = ps[name]
            if isinstance(tv, torch.Tensor):
                assert isinstance(pv, ptcore.Tensor), name
                assert dtype_name(pv.dtype) == dtype_name(tv.dtype), name
                assert tuple(pv.shape) == tuple(tv.shape), name
                if name == "step":
                    assert pv.item() == tv.item()
                else:
                    close(pv.numpy(), tv.numpy(), err_msg=name, **TOL[dtype])
            else:
                assert pv == tv, name


def config_id(c):
    name, opts, ov = c
    s = name + "-" + ",".join(f"{k}={v}" for k, v in opts.items())
    if ov:
        s += "|" + ",".join(f"{k}={v}" for k, v in ov.items())
    return s


def make(name, opts, override, dtype, seed=0):
    """(ptcore side, torch side, ptcore optimizer, torch optimizer)."""
    ps = Side(ptcore, dtype, seed)
    ts = Side(torch, dtype, seed)
    popt = getattr(optim, name)(ps.groups(override), **opts)
    topt = getattr(torch.optim, name)(ts.groups(override), **opts)
    return ps, ts, popt, topt


def run(side, opt, steps, start, opts, skip=skip_some):
    # with maximize, the gradient is flipped so that the trajectory stays bounded
    sign = -1.0 if opts.get("maximize", False) else 1.0
    for k in range(start, start + steps):
        side.set_grads(k, sign=sign, skip=skip)
        opt.step()


def torch_sd_to_ptcore(tsd):
    """A torch optimizer state_dict with its tensors converted (through NumPy)."""
    def conv(v):
        if isinstance(v, torch.Tensor):
            return ptcore.from_numpy(v.numpy().copy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(tsd)
