"""Differential sweep of ptcore.optim against torch's OptimizerInfo database.

Run by hand (not part of CI; needs torch and ``expecttest``).  For every
OptimizerInfo of ``torch.testing._internal.common_optimizers.optim_db`` and every
configuration its ``optim_inputs_func`` gives (plus ``foreach=True/False`` and
``fused=True`` where torch supports them on the CPU), both libraries optimise the
same float64 parameters with the same gradients for a few steps; the parameters
after each step, the ``state_dict()`` (param_groups and per-parameter state) and
a ``load_state_dict`` round trip into a fresh optimizer are compared.  With
``--errors`` the ``optim_error_inputs_func`` cases must raise (or warn) what torch
does.

    python tools/optiminfo_sweep.py [--optims 'Adam|SGD'] [--errors] [--steps 5]
"""
import argparse
import re
import sys
import warnings

import numpy as np

import ptcore

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from opinfo_sweep import Skip, compare, to_pt  # noqa: E402

try:
    import torch
    from torch.testing._internal.common_optimizers import OptimizerErrorEnum, optim_db
except ImportError as exc:  # pragma: no cover - by-hand tool
    sys.exit(f"optiminfo_sweep needs torch and expecttest: {exc}")

_SHAPES = [(4, 3), (5,), (2, 2, 2)]


_DTYPE = ["float64"]


def _draw(rng, shape):
    a = rng.standard_normal(shape)
    if _DTYPE[0] == "complex128":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(_DTYPE[0])


def _params(lib, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    return [lib.nn.Parameter(lib.tensor(_draw(rng, s))) for s in _SHAPES]


def _grads(step):
    rng = np.random.default_rng(100 + step)
    return [_draw(rng, s) for s in _SHAPES]


def _kwargs(lib, kwargs):
    if lib is torch:
        return dict(kwargs)
    return to_pt(dict(kwargs))


def _build(lib, cls_name, kwargs, sparse=False):
    ps = _params(lib)
    cls = getattr(lib.optim, cls_name)
    return ps, cls(ps, **_kwargs(lib, kwargs))


def _state_np(sd):
    """state_dict as nested plain data (tensors -> numpy)."""
    def conv(v):
        if isinstance(v, (torch.Tensor, ptcore.Tensor)):
            return ("T", str(v.dtype).rsplit(".", 1)[-1], tuple(v.shape),
                    v.detach().double().numpy() if not v.dtype.is_complex else v.detach().numpy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(conv(x) for x in v)
        return v
    return conv(sd)


def _diff(a, b, where):
    if isinstance(b, dict):
        if not isinstance(a, dict):
            return [f"{where}: {type(a).__name__} vs torch dict"]
        out = []
        if list(a.keys()) != list(b.keys()):
            ka, kb = set(a), set(b)
            if ka != kb:
                return [f"{where}: keys {sorted(map(str, ka - kb))} extra, "
                        f"{sorted(map(str, kb - ka))} missing vs torch"]
            out.append(f"{where}: key order {list(a)} vs torch {list(b)}")
        for k in b:
            out += _diff(a[k], b[k], f"{where}[{k!r}]")
        return out
    if isinstance(b, tuple) and b and b[0] == "T":
        if not (isinstance(a, tuple) and a and a[0] == "T"):
            return [f"{where}: {a!r} vs torch tensor {b[1]}{b[2]}"]
        if a[1:3] != b[1:3]:
            return [f"{where}: tensor {a[1]}{a[2]} vs torch {b[1]}{b[2]}"]
        if not np.allclose(a[3], b[3], rtol=1e-9, atol=1e-12, equal_nan=True):
            return [f"{where}: values {a[3].ravel()[:3]} vs torch {b[3].ravel()[:3]}"]
        return []
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return [f"{where}: {a!r} vs torch {b!r}"[:300]]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += _diff(x, y, f"{where}[{i}]")
        return out
    if isinstance(b, float) and isinstance(a, float):
        return [] if np.isclose(a, b, rtol=1e-12) or (a != a and b != b) else \
            [f"{where}: {a!r} vs torch {b!r}"]
    if type(a) is not type(b) or a != b:
        return [f"{where}: {a!r} ({type(a).__name__}) vs torch {b!r} ({type(b).__name__})"]
    return []


def run_config(cls_name, kwargs, steps):
    out = []
    res = {}
    for lib in (torch, ptcore):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ps, opt = _build(lib, cls_name, kwargs)
                trace = []
                for s in range(steps):
                    gs = _grads(s)

                    def closure(lib=lib, ps=ps, s=s):
                        opt.zero_grad()
                        loss = sum(((p * p.conj()).real.sum() * (0.5 + 0.1 * k)
                                    for k, p in enumerate(ps)),
                                   lib.zeros((), dtype=lib.float64))
                        loss.backward()
                        return loss
                    if cls_name == "LBFGS":
                        opt.step(closure)
                    else:
                        for p, g in zip(ps, gs):
                            p.grad = lib.tensor(g)
                        opt.step()
                    trace.append([p.detach().numpy().copy() for p in ps])
                sd = opt.state_dict()
                fresh_ps, fresh = _build(lib, cls_name, kwargs)
                fresh.load_state_dict(sd)
                res[lib.__name__] = (trace, _state_np(sd), _state_np(fresh.state_dict()))
        except Skip:
            raise
        except Exception as e:
            res[lib.__name__] = e
    t, p = res["torch"], res["ptcore"]
    if isinstance(t, Exception) or isinstance(p, Exception):
        if isinstance(t, Exception) and isinstance(p, Exception):
            if not isinstance(p, type(t)):
                out.append(f"exception {type(p).__name__}({str(p)[:150]}) vs torch "
                           f"{type(t).__name__}({str(t)[:150]})")
        elif isinstance(p, Exception):
            out.append(f"ptcore raised {type(p).__name__}: {str(p)[:300]}")
        else:
            out.append(f"ptcore ran, torch raised {type(t).__name__}: {str(t)[:200]}")
        return out
    for s, (a, b) in enumerate(zip(p[0], t[0])):
        for k, (x, y) in enumerate(zip(a, b)):
            if not np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True):
                i = np.unravel_index(np.argmax(np.abs(x - y)), x.shape)
                out.append(f"step {s} param {k}: {x[i]!r} vs torch {y[i]!r}")
                break
        if out:
            break
    out += _diff(p[1], t[1], "state_dict")
    out += _diff(p[2], t[2], "reloaded state_dict")
    return out


def run_errors(info):
    out = []
    try:
        errs = list(info.optim_error_inputs_func(device="cpu", dtype=torch.float32))
    except Exception as e:
        return [f"error inputs generation failed: {e}"]
    for ei in errs:
        oi = ei.optimizer_error_input
        if re.search("cuda|device|capturable|fused", str(ei.error_regex)) or \
                "capturable" in oi.kwargs or "fused" in oi.kwargs:
            continue
        try:
            params = to_pt(oi.params) if oi.params is not None else _params(ptcore)
            kwargs = to_pt(dict(oi.kwargs))
        except Skip:
            continue
        cls = getattr(ptcore.optim, info.optim_cls.__name__, None)
        if cls is None:
            return [f"ptcore has no optim.{info.optim_cls.__name__}"]
        is_warning = issubclass(ei.error_type, Warning)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                opt = cls(params, **kwargs)
                if ei.error_on == OptimizerErrorEnum.STEP_ERROR:
                    for p in opt.param_groups[0]["params"]:
                        if p.grad is None:
                            p.grad = ptcore.ones_like(p)
                    if info.optim_cls.__name__ == "LBFGS":
                        opt.step(lambda: ptcore.zeros(()))
                    else:
                        opt.step()
        except Exception as e:
            if is_warning or not isinstance(e, ei.error_type):
                out.append(f"{oi.desc or oi.kwargs}: ptcore raised {type(e).__name__}"
                           f"({str(e)[:150]}), torch expects {ei.error_type.__name__} "
                           f"/{ei.error_regex}/")
            continue
        if is_warning:
            if not any(issubclass(x.category, ei.error_type) for x in w):
                out.append(f"{oi.desc or oi.kwargs}: no {ei.error_type.__name__} "
                           f"/{ei.error_regex}/ warned")
            continue
        out.append(f"{oi.desc or str(oi.kwargs)[:100]}: ptcore did not raise; torch expects "
                   f"{ei.error_type.__name__} /{ei.error_regex}/ ({ei.error_on.name})")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--optims", default=".")
    ap.add_argument("--errors", action="store_true")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--complex", action="store_true", help="complex128 parameters")
    a = ap.parse_args(argv)
    if a.complex:
        _DTYPE[0] = "complex128"
    pat = re.compile(a.optims)
    lines, n_ok, n_bad = [], 0, 0
    for info in optim_db:
        name = info.optim_cls.__name__
        if not pat.search(name):
            continue
        if not hasattr(ptcore.optim, name):
            lines.append(f"{name}: ptcore has no optim.{name}")
            continue
        if a.errors:
            errs = run_errors(info)
            lines += [f"{name} errors: {e}" for e in errs]
            n_bad += len(errs)
        configs = []
        for oi in info.optim_inputs_func(device="cpu"):
            if oi.params is not None or "capturable" in oi.kwargs:
                continue
            configs.append((oi.desc, dict(oi.kwargs)))
            for impl in ("foreach", "fused"):
                if impl in info.supported_impls and impl not in oi.kwargs:
                    configs.append((f"{oi.desc} {impl}", {**oi.kwargs, impl: True}))
        for desc, kw in configs:
            try:
                bad = run_config(name, kw, a.steps)
            except Skip as e:
                lines.append(f"{name} [{desc}] skip: {e}")
                continue
            if bad:
                n_bad += 1
                lines.append(f"{name} [{desc}] {kw}\n    " + "\n    ".join(bad[:4]))
            else:
                n_ok += 1
    print("\n".join(lines))
    print(f"\nconfigs ok {n_ok}, mismatches {n_bad}")


if __name__ == "__main__":
    main()
