"""Differential sweep of ptcore.nn against torch's older nn test tables.

Run by hand (not part of CI): it needs torch and ``expecttest``.  torch's
``torch.testing._internal.common_nn`` holds the configurations test_nn.py
runs besides the ModuleInfo database (tools/moduleinfo_sweep.py):
``module_tests`` and ``get_new_module_tests()`` (modules and wrapped
functionals with constructor arguments and inputs) and ``criterion_tests``
(losses with inputs and targets).  For every entry whose name matches
``--tests`` this builds torch's module and ptcore's (the same nn class, or the
entry's constructor function re-bound so that ``torch``/``nn``/``F`` name
ptcore), copies torch's state_dict into ptcore's, draws torch's inputs (and
target) under the entry's default dtype, and compares the outputs, the
buffers after the forward and the gradients of the inputs and parameters
(moduleinfo_sweep's forward_backward), in train mode.

    python tools/common_nn_sweep.py --tests 'Conv|Loss' --report /tmp/nn.txt [--verbose]

Each mismatch is one report line: ``test name: detail``.
"""
import argparse
import os
import re
import sys
import types
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opinfo_sweep import _SHIM, Skip, resolve_name, to_pt  # noqa: E402
from moduleinfo_sweep import _guarded, forward_backward, load_from  # noqa: E402

import ptcore  # noqa: E402

try:
    import torch
    from torch.testing._internal import common_nn
except ImportError as exc:  # pragma: no cover - by-hand tool
    sys.exit(f"common_nn_sweep needs torch and expecttest: {exc}")

# outputs that are random: compare dtype and shape only
_NONDET = re.compile(r"(Dropout|FractionalMaxPool|RReLU|fractional_max_pool)", re.I)


def _pt_value(v):
    """A closure/global value of a torch test function, as ptcore sees it."""
    if v is torch:
        return _SHIM
    if v is torch.nn:
        return ptcore.nn
    if v is torch.nn.functional:
        return ptcore.nn.functional
    if isinstance(v, types.FunctionType):
        if str(v.__module__).startswith("torch.") and not v.__module__.startswith("torch.testing"):
            return resolve_name(f"{v.__module__}.{v.__name__}".replace("torch.nn.functional.",
                                                                     "nn.functional."), v)
        return _rebind_all(v)
    if isinstance(v, type) and issubclass(v, torch.nn.Module):
        return _pt_module_class(v)
    if callable(v) and str(getattr(v, "__module__", "")).startswith("torch") \
            and not isinstance(v, type):
        return resolve_name(getattr(v, "__name__", "?"), v)
    return to_pt(v, {})


def _rebind_all(fn):
    """``rebind`` (torch/F globals) plus ``nn`` naming ptcore.nn and every
    closure value converted."""
    g = dict(fn.__globals__)
    g["torch"] = _SHIM
    for key, mod in (("nn", ptcore.nn), ("F", ptcore.nn.functional)):
        if key in g:
            g[key] = mod
    cells = None
    if fn.__closure__:
        cells = []
        for c in fn.__closure__:
            try:
                v = c.cell_contents
            except ValueError:
                cells.append(c)
                continue
            cells.append(types.CellType(_pt_value(v)))
        cells = tuple(cells)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, cells)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _pt_module_class(cls):
    """ptcore's class for a torch module class: the nn class of the same name,
    or (common_nn's wrap_functional / local Module subclasses) a ptcore
    Module with the class's methods re-bound."""
    if cls.__module__.startswith("torch.nn"):
        if not hasattr(ptcore.nn, cls.__name__):
            raise Skip(f"ptcore.nn has no {cls.__name__}")
        return getattr(ptcore.nn, cls.__name__)
    ns = {}
    for k, v in cls.__dict__.items():
        if isinstance(v, types.FunctionType):
            ns[k] = _rebind_all(v)
    bases = tuple(_pt_module_class(b) if issubclass(b, torch.nn.Module) and b is not torch.nn.Module
                  else ptcore.nn.Module for b in cls.__bases__)
    return type(cls.__name__, bases, ns)


def _pt_constructor(ctor):
    if isinstance(ctor, type):
        return _pt_module_class(ctor)
    if isinstance(ctor, types.FunctionType):
        return _rebind_all(ctor)
    raise Skip(f"constructor {ctor!r}")


def _pt_args(args):
    """Constructor arguments for ptcore: torch's functions (an activation) by
    name, tensors and dtypes converted."""
    if isinstance(args, (tuple, list)):
        return type(args)(_pt_args(a) for a in args)
    if isinstance(args, types.FunctionType) and str(args.__module__).startswith("torch.nn"):
        return _pt_value(args)
    return to_pt(args, {})


def _entries():
    out = []
    for params in common_nn.module_tests + common_nn.get_new_module_tests():
        out.append(("module", dict(params)))
    for params in common_nn.criterion_tests:
        out.append(("criterion", dict(params)))
    return out


def _name(params):
    if params.get("fullname"):
        return params["fullname"]
    ctor = params.get("constructor")
    base = params.get("module_name") or getattr(ctor, "__name__", "?")
    return base + ("_" + params["desc"] if params.get("desc") else "")


def run_entry(kind, params):
    params = dict(params)
    if "constructor" not in params:
        params["constructor"] = getattr(torch.nn, params.pop("module_name"))
    params.pop("decorator", None)
    dt = params.get("default_dtype") or torch.float64
    test = (common_nn.NewModuleTest if kind == "module" else common_nn.CriterionTest)(**params)
    old_t, old_p = torch.get_default_dtype(), ptcore.get_default_dtype()
    torch.set_default_dtype(dt)
    ptcore.set_default_dtype(getattr(ptcore, str(dt)[6:]))
    try:
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tm = test.constructor(*test.constructor_args)
            pm = _pt_constructor(test.constructor)(*_pt_args(test.constructor_args))
            load_from(pm, tm)
            tm.train(True)
            pm.train(True)
            inp = test._get_input()
        targs = (inp,) if isinstance(inp, torch.Tensor) else tuple(inp) if kind == "module" \
            else (inp,)
        if kind == "criterion":
            targs = targs + (test._get_target(),) + tuple(test.extra_args)
        # inputs: floating ones require grad (as test_nn's jacobian checks)
        targs = tuple(t.detach().requires_grad_(True) if isinstance(t, torch.Tensor)
                      and (t.is_floating_point() or t.is_complex()) and j == 0 else t
                      for j, t in enumerate(targs))
        memo = {}
        pargs = to_pt(targs, memo)
        nondet = bool(_NONDET.search(_name(params)))
        return forward_backward(tm, pm, targs, {}, pargs, {}, nondet, "")
    finally:
        torch.set_default_dtype(old_t)
        ptcore.set_default_dtype(old_p)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", default=".", help="regex on the test name")
    ap.add_argument("--exclude", default="^$")
    ap.add_argument("--report", default=None)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    pat, excl = re.compile(a.tests), re.compile(a.exclude)
    lines, totals = [], {"ok": 0, "bad": 0, "skip": 0}
    for kind, params in _entries():
        name = _name(params)
        if not pat.search(name) or excl.search(name):
            continue
        res, bad = _guarded(run_entry, a.verbose, kind, params)
        totals[res] += 1
        if res == "skip":
            if a.verbose:
                lines.append(f"{name} skip: {bad}")
        elif res == "bad":
            lines += [f"{name}: {b}" for b in bad[:3]]
    text = "\n".join(lines) + f"\n\ntotals: {totals}\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
