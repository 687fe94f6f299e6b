"""Differential sweep of ptcore.nn against torch's own ModuleInfo database.

Run by hand (not part of CI): it needs torch and ``expecttest``.  For every
ModuleInfo of ``torch.testing._internal.common_modules.module_db`` whose name
matches ``--modules``, for each dtype and for training True/False, it draws
torch's module inputs, builds the torch module and ``ptcore.nn.<same class>``
from the same (converted) constructor arguments, and compares

- the ordered ``state_dict`` keys right after construction,
- ``repr(module)`` (so ``extra_repr``),
- the forward outputs, after copying torch's ``state_dict`` into ptcore,
- the buffers after the forward (running statistics),
- the gradients of the inputs and of every parameter for one fixed random
  cotangent per differentiable output,

and, with ``--errors``, that ``module_error_inputs`` raise the same exception
type (at construction or at forward, as torch's entry says).

    python tools/moduleinfo_sweep.py --modules 'BatchNorm|Conv' \\
        --dtypes float32,float64 --report /tmp/modules.txt [--errors] [--verbose]

Each mismatch is one report line: ``module dtype train|eval desc: detail``.
"""
import argparse
import copy
import os
import re
import sys
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opinfo_sweep import Skip, compare, pt_dtype, time_limit, to_np, to_pt  # noqa: E402

import ptcore  # noqa: E402

try:
    import torch
    from torch.testing._internal.common_modules import ModuleErrorEnum, module_db
except ImportError as exc:  # pragma: no cover - by-hand tool
    sys.exit(f"moduleinfo_sweep needs torch and expecttest: {exc}")

# modules whose outputs are random: compare dtype and shape only
_NONDET = re.compile(r"(Dropout|FractionalMaxPool|RReLU)")


def convert(x, memo):
    """to_pt, with torch modules among the constructor arguments rebuilt as
    the ptcore module of the same class (deep copy of torch's, then its
    state loaded)."""
    if isinstance(x, torch.nn.Module):
        return pt_module_like(x, memo)
    if isinstance(x, (list, tuple)) and any(isinstance(v, torch.nn.Module) for v in x):
        return type(x)(convert(v, memo) for v in x)
    return to_pt(x, memo)


def pt_module_like(tm, memo):
    """ptcore module equivalent to the torch module ``tm`` (its init arguments
    recorded by our constructor patch)."""
    rec = getattr(tm, "_sweep_ctor", None)
    if rec is None:
        raise Skip(f"constructor argument {type(tm).__name__} built without a record")
    cls = pt_class(type(tm))
    args, kwargs = rec
    pm = cls(*convert(args, memo), **convert(kwargs, memo))
    load_from(pm, tm)
    return pm


def pt_class(tcls):
    name = tcls.__name__
    if not hasattr(ptcore.nn, name):
        raise Skip(f"ptcore.nn has no {name}")
    return getattr(ptcore.nn, name)


def load_from(pm, tm):
    sd = {k: to_pt(v.detach()) if isinstance(v, torch.Tensor) else v
          for k, v in tm.state_dict().items()}
    pm.load_state_dict(sd)


class _RecordCtor:
    """Record the constructor arguments of torch modules built while sample
    inputs are drawn (TransformerEncoder takes a TransformerEncoderLayer):
    each torch.nn class's own __init__ is wrapped for the duration."""

    def __enter__(self):
        import functools
        self.saved = []
        for name in dir(torch.nn):
            cls = getattr(torch.nn, name)
            if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)) \
                    or "__init__" not in cls.__dict__:
                continue
            orig = cls.__dict__["__init__"]

            def init(self_, *args, __orig=orig, __cls=cls, **kwargs):
                if type(self_) is __cls and "_sweep_ctor" not in self_.__dict__:
                    object.__setattr__(self_, "_sweep_ctor", (args, kwargs))
                return __orig(self_, *args, **kwargs)

            functools.update_wrapper(init, orig)
            self.saved.append((cls, orig))
            cls.__init__ = init
        return self

    def __exit__(self, *exc):
        for cls, orig in self.saved:
            cls.__init__ = orig
        return False


def outputs_with_grad(out, kind):
    from opinfo_sweep import flat_tensors
    return [t for t in flat_tensors(out, kind)
            if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]


def cotangents(wouts):
    rng = np.random.default_rng(0)
    wc, gc = [], []
    for w in wouts:
        a = np.asarray(rng.standard_normal(tuple(w.shape)))
        wc.append(torch.from_numpy(a).to(w.dtype))
        gc.append(ptcore.from_numpy(a).to(pt_dtype(w.dtype)))
    return wc, gc


def build(mi, dtype, training, ci, memo):
    """(torch module, ptcore module), both in ``dtype`` and the mode."""
    tm = mi.module_cls(*ci.args, **ci.kwargs)
    tm.to(dtype)
    tm.train(training)
    pargs, pkw = convert(ci.args, memo), convert(ci.kwargs, memo)
    cls = pt_class(mi.module_cls)
    pm = cls(*pargs, **pkw)
    pm.to(pt_dtype(dtype))
    pm.train(training)
    return tm, pm


def exc_mismatch(stage, got_exc, want_exc):
    """Mismatch strings when ptcore or torch (or both) raised at ``stage``."""
    if want_exc is not None and got_exc is not None:
        if isinstance(got_exc, type(want_exc)):
            return []
        return [f"{stage} exception {type(got_exc).__name__}({str(got_exc)[:150]}) vs torch "
                f"{type(want_exc).__name__}({str(want_exc)[:150]})"]
    if got_exc is not None:
        return [f"{stage}: ptcore raised {type(got_exc).__name__}: {str(got_exc)[:300]}"]
    return [f"{stage}: ptcore returned, torch raised {type(want_exc).__name__}: "
            f"{str(want_exc)[:200]}"]


def run_input(mi, dtype, training, mod_input, nondet, extra=False, module_dtype=None):
    """Mismatch strings for one ModuleInput (the module in ``module_dtype``
    when given, the inputs in ``dtype``)."""
    bad = []
    ci, fi = mod_input.constructor_input, mod_input.forward_input
    memo = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        tm, pm = build(mi, module_dtype or dtype, training, ci, memo)
        tkeys, pkeys = list(tm.state_dict().keys()), list(pm.state_dict().keys())
        if tkeys != pkeys:
            bad.append(f"state_dict keys {pkeys} vs torch {tkeys}")
        tr, pr = repr(tm), repr(pm)
        if tr != pr:
            bad.append(f"repr {pr!r} vs torch {tr!r}")
        if fi is None:
            return bad
        fargs, fkw = to_pt(fi.args, memo), to_pt(fi.kwargs, memo)
        if mi.is_lazy:
            # materialise torch's parameters on a copy of the inputs, then ptcore
            # must take them from load_state_dict as torch's lazy modules do
            with torch.no_grad():
                _, e = _call(tm, *copy.deepcopy(fi.args), **copy.deepcopy(fi.kwargs))
            if e is not None:
                raise Skip(f"torch's lazy module refused the input: {e}")
        try:
            load_from(pm, tm)
        except Exception as e:
            bad.append(f"load_state_dict raised {type(e).__name__}: {str(e)[:200]}")
            return bad
        snap = _snapshot(tm) if extra else None
        bad += forward_backward(tm, pm, fi.args, fi.kwargs, fargs, fkw, nondet, "")
    if bad or not extra:
        return bad
    return extra_checks(mi, dtype, training, mod_input, nondet, tm, pm, snap)


def forward_backward(tm, pm, targs, tkw, pargs, pkw, nondet, tag, gradgrad=False):
    """Mismatch strings of one forward (outputs, buffers after it) and one
    backward (input and parameter gradients) of torch's and ptcore's module."""
    bad = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, want_exc = _call(tm, *targs, **tkw)
        got, got_exc = _call(pm, *pargs, **pkw)
    if want_exc is not None or got_exc is not None:
        return exc_mismatch(f"{tag}forward", got_exc, want_exc)
    bad += compare_out(got, want, nondet, f"{tag}out")
    tb = dict(tm.named_buffers())
    pb = dict(pm.named_buffers())
    for k, w in tb.items():
        if k not in pb:
            bad.append(f"{tag}buffer {k} missing")
            continue
        bad += compare(pb[k], w, False, f"{tag}buffer {k}")
    if bad or nondet:
        return bad
    # gradients of inputs and parameters
    wouts, gouts = outputs_with_grad(want, torch.Tensor), outputs_with_grad(got, ptcore.Tensor)
    if len(wouts) != len(gouts):
        return bad + [f"grad: {len(gouts)} differentiable outputs vs torch {len(wouts)}"]
    if not wouts:
        return bad
    from opinfo_sweep import flat_tensors
    tin = [t for t in flat_tensors([list(targs), list(tkw.values())], torch.Tensor)
           if t.requires_grad]
    pin = [t for t in flat_tensors([list(pargs), list(pkw.values())], ptcore.Tensor)
           if t.requires_grad]
    tparams = [(k, p) for k, p in tm.named_parameters() if p.requires_grad]
    pparams = dict(pm.named_parameters())
    names = [k for k, _ in tparams]
    missing = [k for k in names if k not in pparams]
    if missing:
        return bad + [f"parameters {missing} missing"]
    wt = tin + [p for _, p in tparams]
    gt = pin + [pparams[k] for k in names]
    wc, gc = cotangents(wouts)
    wg, we = _call(torch.autograd.grad, wouts, wt, wc, allow_unused=True, create_graph=gradgrad)
    gg, ge = _call(ptcore.autograd.grad, gouts, gt, gc, allow_unused=True, create_graph=gradgrad)
    if we is not None or ge is not None:
        return bad + exc_mismatch(f"{tag}grad", ge, we)
    labels = [f"input{i}" for i in range(len(tin))] + names
    bad += compare_grads(labels, gg, wg, f"{tag}grad")
    if bad or not gradgrad:
        return bad
    # second order: gradients of sum(grad * v) for a fixed random v
    # (a first gradient that is constant in the inputs, e.g. a bias's, may or may
    # not be marked differentiable: its second-order share is zero either way)
    keep = [i for i, w in enumerate(wg) if w is not None and w.requires_grad]
    if not keep:
        return bad
    wc2, gc2 = cotangents([wg[i] for i in keep])
    pk = [j for j, i in enumerate(keep) if gg[i] is not None and gg[i].requires_grad]
    wg2, we = _call(torch.autograd.grad, [wg[i] for i in keep], wt, wc2, allow_unused=True)
    gg2, ge = ((None,) * len(gt), None) if not pk else _call(
        ptcore.autograd.grad, [gg[keep[j]] for j in pk], gt, [gc2[j] for j in pk],
        allow_unused=True)
    if we is not None and ge is None and "not implemented" in str(we):
        return bad  # torch has no second derivative here (CTCLoss); ptcore's is not compared
    if we is not None or ge is not None:
        return bad + exc_mismatch(f"{tag}gradgrad", ge, we)
    # None and zeros are the same second derivative
    wg2 = [w if w is None or w.count_nonzero() else None for w in wg2]
    gg2 = [g if g is None or int(g.count_nonzero()) else None for g in gg2]
    return bad + compare_grads(labels, gg2, wg2, f"{tag}gradgrad")


def compare_grads(labels, gg, wg, tag):
    bad = []
    for lab, g, w in zip(labels, gg, wg):
        if g is None or w is None:
            bad += [] if g is w else [f"{tag} {lab}: {g is None and 'None' or 'tensor'} vs "
                                      f"torch {w is None and 'None' or 'tensor'}"]
        else:
            bad += compare_grad(g, w, f"{tag} {lab}")
    return bad


def _snapshot(tm):
    """torch's state_dict before the forward (cloned), to rebuild modules for
    the extra checks."""
    return {k: v.detach().clone() for k, v in tm.state_dict().items()}


def _noncontig(x):
    """torch's test_non_contiguous_tensors: every floating tensor of dim > 0 as
    a non-contiguous view of a larger one (same values).  Integer tensors stay:
    torch's own CTCLoss misreads non-contiguous int64 1-d targets (its loss
    changes), which ptcore reads right."""
    if isinstance(x, torch.Tensor):
        if x.dim() == 0 or not x.is_floating_point():
            return x
        out = torch.repeat_interleave(x.detach(), 2, dim=-1)[..., ::2].detach()
        out.requires_grad_(x.requires_grad)
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(_noncontig(v) for v in x)
    if isinstance(x, dict):
        return {k: _noncontig(v) for k, v in x.items()}
    return x


def _fresh_pair(mi, dtype, training, ci, snap):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, pm = build(mi, dtype, training, ci, {})
    if mi.is_lazy:
        raise Skip("lazy module")
    tm.load_state_dict(snap)
    load_from(pm, tm)
    return tm, pm


def extra_checks(mi, dtype, training, mod_input, nondet, tm0, pm0, snap):
    """The checks of torch's test_modules beyond test_forward: factory kwargs,
    non-contiguous inputs, channels_last inputs, float64 gradgrad, pickling."""
    import pickle
    bad = []
    ci, fi = mod_input.constructor_input, mod_input.forward_input
    # factory kwargs: parameters and buffers made in the asked dtype
    try:
        tf = mi.module_cls(*ci.args, **ci.kwargs, device="cpu", dtype=dtype)
    except Exception:
        tf = None
    if tf is not None and not mi.is_lazy:
        memo = {}
        pf, pe = _call(pt_class(mi.module_cls), *convert(ci.args, memo),
                       **convert(ci.kwargs, memo), device="cpu", dtype=pt_dtype(dtype))
        if pe is not None:
            bad.append(f"factory kwargs: ptcore raised {type(pe).__name__}: {str(pe)[:200]}")
        else:
            want = {k: str(v.dtype)[6:] for k, v in tf.state_dict().items()}
            got = {k: str(v.dtype).rsplit(".", 1)[-1] for k, v in pf.state_dict().items()}
            if want != got:
                bad.append(f"factory kwargs dtypes {got} vs torch {want}")
    if nondet or mi.is_lazy:
        return bad
    # non-contiguous inputs
    tm, pm = _fresh_pair(mi, dtype, training, ci, snap)
    targs, tkw = _noncontig(fi.args), _noncontig(fi.kwargs)
    memo = {}
    bad += forward_backward(tm, pm, targs, tkw, to_pt(targs, memo), to_pt(tkw, memo), nondet,
                            "noncontig ")
    # channels_last inputs: values and the output's memory format
    for nd, fmt in ((4, torch.channels_last), (5, torch.channels_last_3d)):
        if not any(isinstance(t, torch.Tensor) and t.dim() == nd for t in fi.args):
            continue
        tm, pm = _fresh_pair(mi, dtype, training, ci, snap)
        targs = tuple(t.detach().to(memory_format=fmt).requires_grad_(t.requires_grad)
                      if isinstance(t, torch.Tensor) and t.dim() == nd else t for t in fi.args)
        memo = {}
        pargs = to_pt(targs, memo)
        bad += forward_backward(tm, pm, targs, fi.kwargs, pargs, to_pt(fi.kwargs, memo),
                                nondet, "channels_last ")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want, got = tm(*targs, **fi.kwargs), pm(*pargs, **to_pt(fi.kwargs, memo))
        want, got = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
        if isinstance(want, torch.Tensor) and want.dim() == nd and want.numel() > 1:
            pfmt = getattr(ptcore, str(fmt).rsplit(".", 1)[-1])
            w, g = want.is_contiguous(memory_format=fmt), got.is_contiguous(memory_format=pfmt)
            if w != g:
                bad.append(f"channels_last input: output channels_last {g} vs torch {w} "
                           f"(strides {tuple(got.stride())} vs {tuple(want.stride())})")
    # second derivatives (float64, as torch's test_gradgrad)
    if dtype == torch.float64 and mi.supports_gradgrad:
        tm, pm = _fresh_pair(mi, dtype, training, ci, snap)
        memo = {}
        bad += forward_backward(tm, pm, fi.args, fi.kwargs, to_pt(fi.args, memo),
                                to_pt(fi.kwargs, memo), nondet, "", gradgrad=True)
    # pickling keeps the module
    tm, pm = _fresh_pair(mi, dtype, training, ci, snap)
    p2, pe = _call(lambda: pickle.loads(pickle.dumps(pm)))
    if pe is not None:
        bad.append(f"pickle round trip raised {type(pe).__name__}: {str(pe)[:200]}")
    else:
        memo = {}
        bad += forward_backward(tm, p2, fi.args, fi.kwargs, to_pt(fi.args, memo),
                                to_pt(fi.kwargs, memo), nondet, "unpickled ")
    return bad


def _call(fn, *args, **kwargs):
    """(fn's result, None) or (None, the exception it raised)."""
    try:
        return fn(*args, **kwargs), None
    except Skip:
        raise
    except Exception as e:
        return None, e


# (rtol, atol) of module gradients and of half-precision outputs: a module's
# parameter gradient sums over the batch and the layers in an order of its own
# (torch's differs between its own CPU kernels), and half-precision modules round
# each intermediate, so assert_close's defaults flag rounding; float64 keeps them
_LOOSE = {torch.float32: (2e-5, 5e-5), torch.complex64: (2e-5, 5e-5),
          torch.float16: (1e-2, 1e-2), torch.bfloat16: (3e-2, 3e-2)}


def compare_grad(g, w, where):
    """compare, at the _LOOSE tolerance of w's dtype where it has one."""
    if w.dtype not in _LOOSE or not isinstance(g, ptcore.Tensor) \
            or str(g.dtype)[7:] != str(w.dtype)[6:] or tuple(g.shape) != tuple(w.shape):
        return compare(g, w, False, where)
    ga, wa = to_np(g)[1], to_np(w)[1]
    ok = np.isclose(ga, wa, *_LOOSE[w.dtype], equal_nan=True)
    if ok.all():
        return []
    i = tuple(np.argwhere(~ok)[0])
    return [f"{where}: values differ at {i} ({int((~ok).sum())}/{ok.size}): {ga[i]!r} vs "
            f"torch {wa[i]!r}"]


def compare_out(got, want, nondet, where):
    """compare; half-precision outputs at the _LOOSE tolerance."""
    if isinstance(want, (tuple, list)) and isinstance(got, (tuple, list)) \
            and len(got) == len(want):
        return [m for i, (g, w) in enumerate(zip(got, want))
                for m in compare_out(g, w, nondet, f"{where}[{i}]")]
    if isinstance(want, torch.Tensor) and want.dtype in (torch.float16, torch.bfloat16) \
            and not nondet:
        return compare_grad(got, want, where)
    return compare(got, want, nondet, where)


def run_errors(mi, dtype):
    out = []
    try:
        errs = mi.module_error_inputs_func(mi, device="cpu", dtype=dtype,
                                           requires_grad=False, training=True)
    except Exception as e:
        return [f"error inputs generation failed: {e}"], 0
    for ei in errs:
        mei = ei.module_error_input
        ci, fi = mei.constructor_input, mei.forward_input
        memo = {}
        stage = "construction"
        try:
            with warnings.catch_warnings(), time_limit(30):
                warnings.simplefilter("ignore")
                cls = pt_class(mi.module_cls)
                pargs, pkw = convert(ci.args, memo), convert(ci.kwargs, memo)
                pm = cls(*pargs, **pkw)  # as torch's test_errors: no .to(dtype)
                if ei.error_on == ModuleErrorEnum.FORWARD_ERROR:
                    stage = "forward"
                    fargs, fkw = to_pt(fi.args, memo), to_pt(fi.kwargs, memo)
                    pm(*fargs, **fkw)
        except Skip:
            continue
        except ei.error_type as e:
            want_stage = "forward" if ei.error_on == ModuleErrorEnum.FORWARD_ERROR else "construction"
            if stage != want_stage:
                out.append(f"error input {ci.args} {ci.kwargs}: raised at {stage}, torch at "
                           f"{want_stage}: {str(e)[:120]}")
            continue
        except Exception as e:
            out.append(f"error input ctor={ci.args} {ci.kwargs}: ptcore raised at {stage} "
                       f"{type(e).__name__}({str(e)[:150]}), torch expects "
                       f"{ei.error_type.__name__} /{ei.error_regex}/")
            continue
        out.append(f"error input ctor={ci.args} {ci.kwargs}: ptcore did not raise; torch "
                   f"expects {ei.error_type.__name__} /{ei.error_regex}/ at {ei.error_on.name}")
    return out, len(errs)


def _short(x):
    """Constructor arguments for a report line, tensors as T(shape):dtype."""
    if isinstance(x, torch.Tensor):
        return f"T{tuple(x.shape)}:{str(x.dtype)[6:]}"
    if isinstance(x, (list, tuple)):
        return type(x)(_short(v) for v in x)
    if isinstance(x, dict):
        return {k: _short(v) for k, v in x.items()}
    if isinstance(x, torch.nn.Module):
        return type(x).__name__
    return x


def _guarded(fn, verbose, *args):
    """("ok" | "bad" | "skip", mismatch strings or the skip reason) of fn(*args)."""
    try:
        with time_limit(60):
            bad = fn(*args)
    except Skip as e:
        return "skip", str(e)
    except Exception as e:
        bad = [f"harness/ptcore failure {type(e).__name__}: {str(e)[:300]}"
               + ("\n" + traceback.format_exc() if verbose else "")]
    return ("bad" if bad else "ok"), bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", default=".", help="regex on the ModuleInfo name (nn.X)")
    ap.add_argument("--exclude", default="^$")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--errors", action="store_true", help="check module_error_inputs")
    ap.add_argument("--module-dtype", default=None,
                    help="build the modules in this dtype (inputs keep --dtypes): torch's "
                         "mixed-dtype rules (e.g. float32 InstanceNorm stats, float64 input)")
    ap.add_argument("--extra", action="store_true",
                    help="also factory kwargs, non-contiguous and channels_last inputs, "
                         "float64 gradgrad, pickling")
    ap.add_argument("--report", default=None)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    pat, excl = re.compile(a.modules), re.compile(a.exclude)
    dtypes = [getattr(torch, d) for d in a.dtypes.split(",")]
    mdt = getattr(torch, a.module_dtype) if a.module_dtype else None
    lines, totals = [], {"ok": 0, "bad": 0, "skip": 0}
    for mi in module_db:
        name = mi.name
        if not pat.search(name) or excl.search(name):
            continue
        if not hasattr(ptcore.nn, mi.module_cls.__name__):
            lines.append(f"{name} - skip: ptcore.nn has no {mi.module_cls.__name__}")
            totals["skip"] += 1
            continue
        nondet = bool(_NONDET.search(name))
        if a.errors and mi.module_error_inputs_func is not None:
            for dt in dtypes:
                if dt not in mi.dtypes:
                    continue
                errs, n = run_errors(mi, dt)
                lines += [f"{name} {str(dt)[6:]} errors: {e}" for e in errs]
                totals["bad"] += len(errs)
                totals["ok"] += n - len(errs)
        for dt in dtypes:
            if dt not in mi.dtypes:
                continue
            for training in (True, False):
                mode = "train" if training else "eval"
                reported = set()
                try:
                    with _RecordCtor():
                        inputs = mi.module_inputs_func(mi, device="cpu", dtype=dt,
                                                       requires_grad=True, training=training)
                except Exception as e:
                    lines.append(f"{name} {mode} input generation failed: {type(e).__name__}: {e}")
                    continue
                for mod_input in inputs:
                    label = (f"{name} {str(dt)[6:]} {mode} {mod_input.desc or '-'} "
                             f"ctor={_short(mod_input.constructor_input.args)} "
                             f"{_short(mod_input.constructor_input.kwargs)}")
                    kind, bad = _guarded(run_input, a.verbose, mi, dt, training, mod_input,
                                         nondet, a.extra, mdt)
                    totals[kind] += 1
                    if kind == "skip":
                        if a.verbose:
                            lines.append(f"{label} skip: {bad}")
                    elif kind == "bad" and (a.verbose or bad[0][:40] not in reported):
                        reported.add(bad[0][:40])
                        lines.append(f"{label}\n    " + "\n    ".join(bad))
    text = "\n".join(lines + ["", f"totals: {totals}"]) + "\n"
    if not a.report:
        print(text[-20000:])
        return
    with open(a.report, "w") as f:
        f.write(text)
    print(f"{len(lines)} report lines in {a.report}; totals {totals}")


if __name__ == "__main__":
    main()
