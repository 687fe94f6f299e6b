"""Differential sweep of ptcore against torch's own OpInfo database.

Run by hand (not part of CI): it needs torch and ``expecttest`` (torch's test
utilities import it).  For every OpInfo of
``torch.testing._internal.common_methods_invocations.op_db`` whose name matches
``--ops`` it draws torch's sample inputs on the CPU, calls the op under torch and
the same op under ptcore (the OpInfo's function rebound so that ``torch`` names
ptcore), and compares dtypes, shapes and values; ``--grad`` compares first
derivatives (float64 samples that require grad), ``--fwad`` forward-mode
tangents (dual numbers, ops with ``supports_forward_ad``), ``--gradgrad``
second derivatives (the first gradient, recorded, differentiated again along a
random direction; ops with ``supports_gradgrad``), ``--errors`` checks that
ptcore raises the exception type torch's ``error_inputs`` expect.

    python tools/opinfo_sweep.py --ops '^linalg\\.' --dtypes float32,float64 \\
        --report /tmp/linalg.txt [--grad] [--errors] [--verbose]

Each mismatch is one report line: ``op[.variant] dtype mode kind: detail``.
"""
import argparse
import contextlib
import functools
import math
import re
import signal
import sys
import traceback
import types
import warnings

import numpy as np

import ptcore

try:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
except ImportError as exc:  # pragma: no cover - by-hand tool
    sys.exit(f"opinfo_sweep needs torch and expecttest: {exc}")


class Skip(Exception):
    pass


# ops whose values are random or uninitialised: compare dtype and shape only
_NONDET = re.compile(r"(rand|normal|bernoulli|multinomial|dropout|empty|uniform|"
                     r"cauchy|exponential|geometric|log_normal|rrelu|"
                     r"fractional_max_pool|lowrank|hash_tensor)")

_TOL = {  # (rtol, atol) as torch.testing.assert_close's defaults
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5), "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def pt_dtype(dt):
    name = _dtype_name(dt)
    if not hasattr(ptcore, name):
        raise Skip(f"ptcore has no dtype {name}")
    return getattr(ptcore, name)


def _np_of(t):
    """NumPy array of a contiguous 1-d torch tensor (halves as int16 bits)."""
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.view(torch.int16).numpy(), True
    if t.dtype == torch.complex32:
        raise Skip("complex32 input")
    if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
        return t.numpy(), False
    return t.numpy(), False


def to_pt(x, memo=None):
    """Convert a torch value (recursively) into the ptcore one; tensors keep
    their storage, strides, offset and requires_grad."""
    if memo is None:
        memo = {}
    if isinstance(x, torch.Tensor):
        if id(x) in memo:
            return memo[id(x)]
        if x.layout != torch.strided:
            raise Skip(f"{x.layout} input")
        if x.device.type != "cpu":
            raise Skip(f"{x.device.type} input")
        t = x.detach()
        resolved = t.is_conj() or t.is_neg()
        if resolved:
            t = t.resolve_conj().resolve_neg()
        # one ptcore storage per torch storage: views of one tensor (an out= that is
        # the input, a slice of it) alias in ptcore too (not a resolved conj/neg view:
        # its storage is a temporary, whose address the next one may reuse)
        skey = ("storage", t.untyped_storage().data_ptr(), t.dtype)
        base = None if resolved else memo.get(skey)
        if base is None:
            n = t.untyped_storage().nbytes() // max(t.element_size(), 1)
            flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (n,), (1,))
            arr, bits = _np_of(flat)
            base = ptcore.from_numpy(arr.copy())
            if bits:
                base = base.view(pt_dtype(t.dtype))
            if not resolved:
                memo[skey] = base
        p = ptcore.as_strided(base, tuple(t.shape), tuple(t.stride()), t.storage_offset())
        if x.requires_grad:
            p = p.detach().requires_grad_(True)
        memo[id(x)] = p
        return p
    if isinstance(x, torch.dtype):
        return pt_dtype(x)
    if isinstance(x, torch.device):
        return ptcore.device(str(x))
    if isinstance(x, torch.memory_format):
        return getattr(ptcore, str(x).rsplit(".", 1)[-1])
    if isinstance(x, torch.layout):
        return getattr(ptcore, str(x).rsplit(".", 1)[-1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.Generator):
        raise Skip("generator argument")
    if isinstance(x, tuple):
        return tuple(to_pt(v, memo) for v in x)
    if isinstance(x, list):
        return [to_pt(v, memo) for v in x]
    if isinstance(x, dict):
        return {k: to_pt(v, memo) for k, v in x.items()}
    if isinstance(x, types.FunctionType):
        return rebind(x)
    if callable(x) and getattr(x, "__module__", "") and str(getattr(x, "__module__", "")).startswith("torch"):
        return resolve_name(getattr(x, "__qualname__", getattr(x, "__name__", "?")), x)
    return x


def to_np(x):
    """(dtype name, numpy array) of a ptcore or torch tensor."""
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():          # (torch's gradient of e.g. sgn of a real input)
            x = torch.zeros(x.shape, dtype=x.dtype)
        t = x.detach().resolve_conj().resolve_neg().contiguous()
        name = _dtype_name(t.dtype)
        if t.dtype in (torch.bfloat16, torch.float16):
            return name, t.float().numpy()
        if t.dtype == torch.complex32:
            return name, t.to(torch.complex64).numpy()
        return name, t.numpy()
    t = x.detach().contiguous()
    name = _dtype_name(t.dtype)
    if name in ("bfloat16", "float16"):
        return name, t.float().numpy()
    if name == "complex32":
        return name, t.to(ptcore.complex64).numpy()
    return name, t.numpy()


class _TorchShim(types.ModuleType):
    """``torch`` as seen by rebound sample functions: ptcore, with torch's
    names ptcore lacks raising Skip."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        if hasattr(ptcore, name):
            return getattr(ptcore, name)
        raise Skip(f"ptcore has no torch.{name}")


_SHIM = _TorchShim()


def rebind(fn):
    """The Python function ``fn`` with its global ``torch`` (and ``F``) naming ptcore."""
    g = dict(fn.__globals__)
    g["torch"] = _SHIM
    if "F" in g:
        g["F"] = ptcore.nn.functional
    if "np" in g:
        g["np"] = np
    closure = fn.__closure__
    if closure:
        cells = []
        for c in closure:
            try:
                v = c.cell_contents
            except ValueError:
                cells.append(c)
                continue
            if isinstance(v, types.FunctionType):
                v = rebind(v)
            elif v is torch:
                v = _SHIM
            elif callable(v) and str(getattr(v, "__module__", "")).startswith("torch") \
                    and not isinstance(v, type):
                v = resolve_name(getattr(v, "__name__", "?"), v)
            cells.append(types.CellType(v))
        closure = tuple(cells)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def resolve_name(path, orig=None):
    """ptcore's callable at the dotted ``path`` (torch names)."""
    path = path.removeprefix("torch.")
    obj = ptcore
    for part in path.split("."):
        if not hasattr(obj, part):
            # builtins such as torch._C._nn.xyz: fall back to torch's public name
            if orig is not None and getattr(orig, "__name__", None):
                for ns in (ptcore, ptcore.nn.functional, ptcore.linalg, ptcore.special, ptcore.fft):
                    if hasattr(ns, orig.__name__):
                        return getattr(ns, orig.__name__)
            raise Skip(f"ptcore has no {path}")
        obj = getattr(obj, part)
    return obj


def pt_op(op):
    """ptcore's version of an OpInfo's op."""
    f = op.op
    if isinstance(f, types.FunctionType) and not f.__module__.startswith("torch.") \
            or isinstance(f, types.FunctionType) and f.__module__.startswith("torch.testing"):
        return rebind(f)
    if op.name.startswith("__r") or op.name == "__getitem__":
        # unbound, as torch.Tensor.__rsub__ is called (error inputs pass a number as self)
        if getattr(ptcore.Tensor, op.name, None) is None:
            raise Skip(f"ptcore.Tensor has no {op.name}")
        name = op.name
        # looked up at each call: forward AD, once active, installs ptcore's
        # Tensor.__getitem__ over the core's slot
        return lambda *a, **k: getattr(ptcore.Tensor, name)(*a, **k)
    if op.name.startswith(("torch.ops", "jiterator")):
        raise Skip("aten/jiterator op")
    if _is_tensor_method(f):
        name = f.__name__
        if not hasattr(ptcore.Tensor, name):
            raise Skip(f"ptcore.Tensor has no {name}")
        return getattr(ptcore.Tensor, name)
    return resolve_name(op.name, f)


def _is_tensor_method(f):
    """Whether ``f`` is a method of torch.Tensor (a descriptor of its C base or a
    function of torch.Tensor), which ptcore names as ``ptcore.Tensor.<name>``."""
    name = getattr(f, "__name__", None)
    if not name:
        return False
    for cls in (torch.Tensor, torch._C.TensorBase):
        if cls.__dict__.get(name) is f:
            return True
    return False


@contextlib.contextmanager
def time_limit(seconds):
    def handler(signum, frame):
        raise TimeoutError(f"sample took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def flat_tensors(out, kind):
    if isinstance(out, kind):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_tensors(o, kind)]
    if hasattr(out, "_fields") or hasattr(out, "__dict__") and not callable(out):
        vals = [getattr(out, f) for f in getattr(out, "_fields", ())]
        return [t for o in vals for t in flat_tensors(o, kind)]
    return []


def compare(got, want, nondet, where):
    """List of mismatch strings between ptcore output ``got`` and torch's ``want``."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, ptcore.Tensor):
            return [f"{where}: ptcore returned {type(got).__name__}, torch a Tensor"]
        gd, ga = to_np(got)
        wd, wa = to_np(want)
        if gd != wd:
            return [f"{where}: dtype {gd} vs torch {wd}"]
        if ga.shape != wa.shape:
            return [f"{where}: shape {ga.shape} vs torch {wa.shape}"]
        if nondet or ga.size == 0:
            return []
        if wa.dtype.kind in "fc":
            rtol, atol = _TOL.get(wd, (1e-7, 1e-7))
            ok = np.isclose(ga, wa, rtol=rtol, atol=atol, equal_nan=True)
            if not ok.all():
                i = np.argwhere(~ok)[0]
                return [f"{where}: values differ at {tuple(i)} ({int((~ok).sum())}/{ok.size}): "
                        f"{ga[tuple(i)]!r} vs torch {wa[tuple(i)]!r}"]
        elif not np.array_equal(ga, wa):
            i = np.argwhere(ga != wa)[0] if ga.shape else ()
            return [f"{where}: values differ at {tuple(i)}: {ga[tuple(i)]!r} vs torch {wa[tuple(i)]!r}"]
        return []
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return [f"{where}: ptcore returned {type(got).__name__} "
                    f"{len(got) if isinstance(got, (tuple, list)) else ''}, torch "
                    f"{type(want).__name__} of {len(want)}"]
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += compare(g, w, nondet, f"{where}[{i}]")
        return out
    if isinstance(want, (bool, int, float, complex)) and not isinstance(want, type):
        if isinstance(got, ptcore.Tensor):
            return [f"{where}: ptcore returned a Tensor, torch {type(want).__name__}"]
        if type(got) is not type(want):
            return [f"{where}: ptcore returned {type(got).__name__} {got!r}, torch "
                    f"{type(want).__name__} {want!r}"]
        if not nondet and not (got == want or (isinstance(want, float) and math.isnan(want)
                                                and math.isnan(got))):
            if not (isinstance(want, float) and math.isclose(got, want, rel_tol=1e-6)):
                return [f"{where}: {got!r} vs torch {want!r}"]
        return []
    if isinstance(want, torch.dtype):
        return [] if _dtype_name(want) == str(got).rsplit(".", 1)[-1] else [f"{where}: {got} vs {want}"]
    if isinstance(want, torch.Size):
        return [] if tuple(got) == tuple(want) else [f"{where}: {tuple(got)} vs {tuple(want)}"]
    return []


def _dropout_sample(full, sample):
    """Whether a sample applies dropout (random values: dtype and shape only)."""
    if not isinstance(sample.kwargs, dict):
        return False
    p = sample.kwargs.get("dropout_p", 0)
    if "multi_head_attention" in full and sample.kwargs.get("training", True) \
            and len(sample.args) > 9:
        p = sample.args[9]      # (multi_head_attention_forward's positional dropout_p)
    return isinstance(p, (int, float)) and p > 0


def compare_each(got, want, nondet, label):
    """Mismatch strings of paired results that may be None (gradients, tangents)."""
    out = []
    for i, (g, w) in enumerate(zip(got, want)):
        if (g is None) != (w is None):
            out.append(f"{label}[{i}]: {'None' if g is None else 'tensor'} vs torch "
                       f"{'None' if w is None else 'tensor'}")
        elif g is not None:
            out += compare(g, w, nondet, f"{label}[{i}]")
    return out


def _describe(sample):
    def d(x):
        if isinstance(x, torch.Tensor):
            s = f"T{tuple(x.shape)}:{_dtype_name(x.dtype)}"
            if not x.is_contiguous():
                s += f"@{tuple(x.stride())}"
            return s
        if isinstance(x, (list, tuple)):
            return type(x)((d(v) for v in x)) if len(x) < 8 else f"{type(x).__name__}[{len(x)}]"
        if isinstance(x, dict):
            return {k: d(v) for k, v in x.items()}
        return x
    return f"input={d(sample.input)} args={d(sample.args)} kwargs={d(sample.kwargs)}"


def run_sample(op, fn_pt, sample, mode, nondet):
    """Mismatch strings for one sample."""
    try:
        memo = {}
        pin = to_pt(sample.input, memo)
        pargs = to_pt(sample.args, memo)
        pkw = to_pt(sample.kwargs, memo)
    except Skip:
        raise
    want_exc = got_exc = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = op(sample.input, *sample.args, **sample.kwargs)
        except Exception as e:  # torch refused the sample
            want_exc = e
        try:
            got = fn_pt(pin, *pargs, **pkw)
        except Skip:
            raise
        except Exception as e:
            got_exc = e
    if want_exc is not None or got_exc is not None:
        if want_exc is not None and got_exc is not None:
            if not isinstance(got_exc, type(want_exc)):
                return [f"exception {type(got_exc).__name__}({str(got_exc)[:150]}) vs torch "
                        f"{type(want_exc).__name__}({str(want_exc)[:150]})"]
            return []
        if got_exc is not None:
            return [f"ptcore raised {type(got_exc).__name__}: {str(got_exc)[:300]}"]
        return [f"ptcore returned, torch raised {type(want_exc).__name__}: {str(want_exc)[:200]}"]
    if mode == "value":
        return compare(got, want, nondet, "out")
    if mode == "variants":
        return compare(got, want, nondet, "out") + run_variants(op, fn_pt, sample, nondet)
    if mode == "fwad":
        return run_fwad(op, fn_pt, sample, nondet)
    if mode == "gradgrad":
        return run_gradgrad(op, fn_pt, sample, nondet)
    # gradients, of the outputs as the OpInfo's output_process_fn_grad keeps them
    # (e.g. eigenvectors up to phase)
    if sample.output_process_fn_grad is not None:
        want = sample.output_process_fn_grad(want)
        got = rebind(sample.output_process_fn_grad)(got) \
            if isinstance(sample.output_process_fn_grad, types.FunctionType) \
            else sample.output_process_fn_grad(got)
    wouts = [t for t in flat_tensors(want, torch.Tensor)
             if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    gouts = [t for t in flat_tensors(got, ptcore.Tensor)
             if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if len(wouts) != len(gouts):
        return [f"grad: {len(gouts)} differentiable outputs vs torch {len(wouts)}"]
    if not wouts:
        return []
    winputs = [t for t in flat_tensors([sample.input, list(sample.args),
                                        list(sample.kwargs.values())], torch.Tensor)
               if t.requires_grad]
    ginputs = [t for t in flat_tensors([pin, list(pargs), list(pkw.values())], ptcore.Tensor)
               if t.requires_grad]
    wcot, gcot = _cotangents(wouts, np.random.default_rng(0))
    we = ge = None
    try:
        wg = torch.autograd.grad(wouts, winputs, wcot, allow_unused=True)
    except Exception as e:
        we = e
    try:
        gg = ptcore.autograd.grad(gouts, ginputs, gcot, allow_unused=True)
    except Exception as e:
        ge = e
    bad = _exc_mismatch("grad", ge, we)
    if bad is not None:
        return bad
    return compare_each(gg, wg, nondet, "grad")


def _map_tensors(x, fn, kind, memo):
    """``x`` with every tensor of type ``kind`` replaced by ``fn(t)`` (once per
    tensor object: a tensor passed twice stays one tensor)."""
    if isinstance(x, kind):
        if id(x) not in memo:
            memo[id(x)] = fn(x)
        return memo[id(x)]
    if isinstance(x, tuple):
        return tuple(_map_tensors(v, fn, kind, memo) for v in x)
    if isinstance(x, list):
        return [_map_tensors(v, fn, kind, memo) for v in x]
    if isinstance(x, dict):
        return {k: _map_tensors(v, fn, kind, memo) for k, v in x.items()}
    return x


def _cotangents(outs_t, rng):
    """(torch, ptcore) tensors of the same standard-normal values shaped as ``outs_t``."""
    w, g = [], []
    for t in outs_t:
        a = rng.standard_normal(tuple(t.shape))
        if t.dtype.is_complex:
            a = a + 1j * rng.standard_normal(tuple(t.shape))
        w.append(torch.from_numpy(np.asarray(a)).to(t.dtype))
        g.append(ptcore.from_numpy(np.asarray(a)).to(pt_dtype(t.dtype)))
    return w, g


def _processed(sample, want, got):
    """The outputs as the OpInfo's output_process_fn_grad keeps them."""
    f = sample.output_process_fn_grad
    if f is None:
        return want, got
    return f(want), (rebind(f)(got) if isinstance(f, types.FunctionType) else f(got))


def _diff_outs(out, kind):
    return [t for t in flat_tensors(out, kind)
            if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]


def run_fwad(op, fn_pt, sample, nondet):
    """Mismatch strings of forward-mode AD: the inputs that require grad become
    dual tensors with the same random tangents under torch and ptcore; the
    outputs' tangents (``output_process_fn_grad`` applied) are compared."""
    import torch.autograd.forward_ad as wfw
    import ptcore.autograd.forward_ad as gfw
    whole = [sample.input, list(sample.args), dict(sample.kwargs)]
    prims = [t for t in flat_tensors(whole[:2] + [list(whole[2].values())], torch.Tensor)
             if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if not prims:
        return []
    wtan, gtan = _cotangents(prims, np.random.default_rng(1))
    wt = {id(t): v for t, v in zip(prims, wtan)}
    gt = {id(t): v for t, v in zip(prims, gtan)}
    pmemo = {}
    pwhole = to_pt(whole, pmemo)         # (pmemo: torch id -> ptcore tensor)
    ids = {id(p): i for i, p in pmemo.items()}
    with wfw.dual_level():
        wwhole = _map_tensors(whole, lambda t: wfw.make_dual(t.detach(), wt[id(t)])
                              if id(t) in wt else t.detach(), torch.Tensor, {})
        want, we = _call(op, wwhole[0], *wwhole[1], **wwhole[2])
        if we is None:
            want = _processed(sample, want, want)[0]
            wtans = [wfw.unpack_dual(t).tangent for t in flat_tensors(want, torch.Tensor)]
    with gfw.dual_level():
        gwhole = _map_tensors(pwhole, lambda p: gfw.make_dual(p.detach(), gt[ids[id(p)]])
                              if ids.get(id(p)) in gt else p.detach(), ptcore.Tensor, {})
        got, ge = _call(fn_pt, gwhole[0], *gwhole[1], **gwhole[2])
        if ge is None:
            got = _processed(sample, got, got)[1]
            gtans = [gfw.unpack_dual(t).tangent for t in flat_tensors(got, ptcore.Tensor)]
    bad = _exc_mismatch("fwad", ge, we)
    if bad is not None:
        return bad
    if len(gtans) != len(wtans):
        return [f"fwad: {len(gtans)} outputs vs torch {len(wtans)}"]
    return compare_each(gtans, wtans, nondet, "tangent")


def run_gradgrad(op, fn_pt, sample, nondet):
    """Mismatch strings of second derivatives: the first gradients (for one
    random cotangent, create_graph) differentiated again along random
    directions, under torch and ptcore."""
    memo = {}
    pin = to_pt(sample.input, memo)
    pargs, pkw = to_pt(sample.args, memo), to_pt(sample.kwargs, memo)
    want, we = _call(op, sample.input, *sample.args, **sample.kwargs)
    got, ge = _call(fn_pt, pin, *pargs, **pkw)
    bad = _exc_mismatch("gradgrad forward", ge, we)
    if bad is not None:
        return bad
    want, got = _processed(sample, want, got)
    wouts, gouts = _diff_outs(want, torch.Tensor), _diff_outs(got, ptcore.Tensor)
    if len(wouts) != len(gouts) or not wouts:
        return []                       # (the --grad sweep reports these)
    winputs = [t for t in flat_tensors([sample.input, list(sample.args),
                                        list(sample.kwargs.values())], torch.Tensor)
               if t.requires_grad]
    ginputs = [t for t in flat_tensors([pin, list(pargs), list(pkw.values())], ptcore.Tensor)
               if t.requires_grad]
    rng = np.random.default_rng(0)
    wcot, gcot = _cotangents(wouts, rng)
    wg, we = _call(torch.autograd.grad, wouts, winputs, wcot, allow_unused=True,
                   create_graph=True)
    gg, ge = _call(ptcore.autograd.grad, gouts, ginputs, gcot, allow_unused=True,
                   create_graph=True)
    bad = _exc_mismatch("first grad", ge, we)
    if bad is not None:
        return bad
    # the first gradients each side can differentiate again (one that does not
    # require grad is constant: a zero second derivative)
    idx = [i for i, w in enumerate(wg) if w is not None]
    if [i for i, g in enumerate(gg) if g is not None] != idx:
        return []                       # (the --grad sweep reports these)
    wv, gv = _cotangents([wg[i] for i in idx], rng)
    wk = [k for k, i in enumerate(idx) if wg[i].requires_grad]
    gk = [k for k, i in enumerate(idx) if gg[i].requires_grad]
    if not wk and not gk:
        return []
    wg2 = gg2 = None
    we = ge = None
    if wk:
        wg2, we = _call(torch.autograd.grad, [wg[idx[k]] for k in wk], winputs,
                        [wv[k] for k in wk], allow_unused=True)
    if gk:
        gg2, ge = _call(ptcore.autograd.grad, [gg[idx[k]] for k in gk], ginputs,
                        [gv[k] for k in gk], allow_unused=True)
    wg2 = wg2 or [None] * len(winputs)
    gg2 = gg2 or [None] * len(ginputs)
    bad = _exc_mismatch("gradgrad", ge, we)
    if bad is not None:
        return bad
    out = []
    for i, (g, w) in enumerate(zip(gg2, wg2)):
        if (g is None) != (w is None):
            # (an unused second derivative may be None on one side, zeros on the other)
            z = g if w is None else w
            if not np.allclose(to_np(z)[1], 0, atol=1e-10):
                out.append(f"gradgrad[{i}]: {'None' if g is None else 'tensor'} vs torch "
                           f"{'None' if w is None else 'tensor'} ({to_np(z)[1].ravel()[:4]})")
        elif g is not None:
            out += compare(g, w, nondet, f"gradgrad[{i}]")
    return out


def _call(fn, *a, **k):
    """(result, exception) of ``fn(*a, **k)`` with warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*a, **k), None
        except Skip:
            raise
        except Exception as e:
            return None, e


def _exc_mismatch(where, got_exc, want_exc):
    """Mismatch strings when either side raised, else None."""
    if want_exc is None and got_exc is None:
        return None
    if want_exc is not None and got_exc is not None:
        if isinstance(got_exc, type(want_exc)):
            return []
        return [f"{where}: exception {type(got_exc).__name__}({str(got_exc)[:150]}) vs torch "
                f"{type(want_exc).__name__}({str(want_exc)[:150]})"]
    if got_exc is not None:
        return [f"{where}: ptcore raised {type(got_exc).__name__}: {str(got_exc)[:300]}"]
    return [f"{where}: ptcore returned, torch raised {type(want_exc).__name__}: {str(want_exc)[:200]}"]


_WRONG_OUT = {"float": torch.int64, "complex": torch.float32, "int": torch.bool}
# a dtype the result can be cast to (TensorIterator ops write it; ops whose out must
# have exactly the result's dtype raise)
_WIDER_OUT = {torch.float32: torch.float64, torch.float64: torch.complex128,
              torch.int64: torch.float64, torch.bool: torch.int64,
              torch.complex64: torch.complex128, torch.float16: torch.float32,
              torch.bfloat16: torch.float32}


def run_variants(op, fn_pt, sample, nondet):
    """Mismatch strings of the in-place variant (``op.inplace_variant``, called as
    ptcore's ``Tensor.<name>_`` on a clone of the input) and of ``out=`` (an out of
    torch's result dtype and shape, and one of a dtype the result cannot be cast to)."""
    bad = []
    ipv = op.inplace_variant
    if ipv is not None and isinstance(sample.input, torch.Tensor):
        name = getattr(ipv, "__name__", None)
        if isinstance(ipv, types.FunctionType):     # a lambda over F.xxx(..., inplace=True)
            wself = sample.input.detach().clone()
            gself = to_pt(wself).clone()
            memo = {}
            pargs, pkw = to_pt(sample.args, memo), to_pt(sample.kwargs, memo)
            want, we = _call(ipv, wself, *sample.args, **sample.kwargs)
            got, ge = _call(rebind(ipv), gself, *pargs, **pkw)
            m = _exc_mismatch("inplace", ge, we)
            if m is None:
                m = compare(gself, wself, nondet, "inplace self")
                if isinstance(want, torch.Tensor):
                    m += compare(got, want, nondet, "inplace result")
            bad += m
        elif name and hasattr(ptcore.Tensor, name):
            wself = sample.input.detach().clone()
            gself = to_pt(wself).clone()
            memo = {}
            pargs, pkw = to_pt(sample.args, memo), to_pt(sample.kwargs, memo)
            want, we = _call(ipv, wself, *sample.args, **sample.kwargs)
            got, ge = _call(getattr(ptcore.Tensor, name), gself, *pargs, **pkw)
            m = _exc_mismatch(f"inplace {name}", ge, we)
            if m is None:
                m = compare(gself, wself, nondet, f"inplace {name} self")
                if got is not gself:
                    m.append(f"inplace {name}: did not return self")
            bad += m
        elif name:
            bad.append(f"inplace: ptcore.Tensor has no {name}")
    if not op.supports_out:
        return bad
    want, we = _call(op, sample.input, *sample.args, **sample.kwargs)
    if we is not None:
        return bad
    wts = [want] if isinstance(want, torch.Tensor) else list(want) \
        if isinstance(want, (tuple, list)) and all(isinstance(w, torch.Tensor) for w in want) \
        else None
    if not wts or any(w.layout != torch.strided for w in wts):
        return bad
    single = isinstance(want, torch.Tensor)
    for tag, dtypes in (("out", [w.dtype for w in wts]),
                        ("wrong-dtype out", [_WRONG_OUT["complex" if w.dtype.is_complex else
                                                        "float" if w.dtype.is_floating_point else
                                                        "int"] if w.dtype != torch.bool else w.dtype
                                             for w in wts]),
                        ("wider-dtype out", [_WIDER_OUT.get(w.dtype, w.dtype) for w in wts])):
        if tag != "out" and dtypes == [w.dtype for w in wts]:
            continue
        wouts = [torch.empty(w.shape, dtype=d) for w, d in zip(wts, dtypes)]
        gouts = [ptcore.empty(tuple(w.shape), dtype=pt_dtype(d)) for w, d in zip(wts, dtypes)]
        wo = wouts[0] if single else tuple(wouts)
        go = gouts[0] if single else tuple(gouts)
        memo = {}
        pin = to_pt(sample.input, memo)
        pargs, pkw = to_pt(sample.args, memo), to_pt(sample.kwargs, memo)
        wr, we = _call(op, sample.input, *sample.args, **sample.kwargs, out=wo)
        gr, ge = _call(fn_pt, pin, *pargs, **pkw, out=go)
        m = _exc_mismatch(tag, ge, we)
        if m is None:
            if tag == "wider-dtype out":
                # the result was computed in torch's result dtype: compare it back there,
                # at that dtype's tolerance (not the wider out's)
                with warnings.catch_warnings():     # (complex128 -> float64: imaginary 0)
                    warnings.simplefilter("ignore")
                    m = compare([g.to(pt_dtype(w.dtype)) for g, w in zip(gouts, wts)],
                                [o.to(w.dtype) for o, w in zip(wouts, wts)], nondet, tag)
            else:
                m = compare(list(gouts), list(wouts), nondet, tag)
            rets = [gr] if single else list(gr) if isinstance(gr, (tuple, list)) else [gr]
            if wr is None:      # torch's unbind_copy(out=) & co. return None
                if gr is not None:
                    m.append(f"{tag}: ptcore returned {type(gr).__name__}, torch None")
            elif len(rets) != len(gouts) or any(r is not o for r, o in zip(rets, gouts)):
                m.append(f"{tag}: the result is not the out tensor(s)")
        bad += m
    return bad


def run_errors(op, fn_pt):
    out = []
    if op.error_inputs_func is None:
        return [], 0
    try:
        errs = list(op.error_inputs("cpu"))
    except Exception as e:
        return [f"error_inputs generation failed: {e}"], 0
    for ei in errs:
        s = ei.sample_input
        if re.search("device|cuda", str(ei.error_regex)):
            continue  # the error needs a second device (torch's meta/cuda inputs)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op(s.input, *s.args, **s.kwargs)
        except ei.error_type:
            pass
        except Exception:
            continue  # torch raises something else: not a check of this build
        else:
            continue  # torch itself does not raise here (an OpInfo skip/xfail)
        try:
            memo = {}
            pin = to_pt(s.input, memo)
            pargs, pkw = to_pt(s.args, memo), to_pt(s.kwargs, memo)
        except Skip:
            continue
        except Exception as e:  # ptcore refused to build the input itself
            if not isinstance(e, ei.error_type):
                out.append(f"error input {_describe(s)}: converting it raised "
                           f"{type(e).__name__}({str(e)[:150]}), torch expects "
                           f"{ei.error_type.__name__} /{ei.error_regex}/")
            continue
        try:
            with warnings.catch_warnings(), time_limit(30):
                warnings.simplefilter("ignore")
                fn_pt(pin, *pargs, **pkw)
        except Skip:
            continue
        except ei.error_type:
            continue
        except Exception as e:
            out.append(f"error input {_describe(s)}: ptcore raised {type(e).__name__}"
                       f"({str(e)[:150]}), torch expects {ei.error_type.__name__} /{ei.error_regex}/")
            continue
        out.append(f"error input {_describe(s)}: ptcore did not raise; torch expects "
                   f"{ei.error_type.__name__} /{ei.error_regex}/")
    return out, len(errs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default=".", help="regex on op name[.variant]")
    ap.add_argument("--exclude", default="^$", help="regex of ops to leave out")
    ap.add_argument("--dtypes", default="float32,float64,int64,bool,complex64,float16,bfloat16")
    ap.add_argument("--grad", action="store_true", help="compare float64 gradients")
    ap.add_argument("--fwad", action="store_true",
                    help="compare float64 forward-mode tangents (ops with supports_forward_ad)")
    ap.add_argument("--gradgrad", action="store_true",
                    help="compare float64 second derivatives (ops with supports_gradgrad)")
    ap.add_argument("--ad-dtypes", default="float64",
                    help="dtypes of --grad/--fwad/--gradgrad (e.g. float64,complex128)")
    ap.add_argument("--errors", action="store_true", help="check error_inputs")
    ap.add_argument("--reference", action="store_true",
                    help="draw op.reference_inputs (larger, extremal values) instead of sample_inputs")
    ap.add_argument("--variants", action="store_true",
                    help="also compare the in-place variant and out= (right and wrong dtype)")
    ap.add_argument("--max-samples", type=int, default=60)
    ap.add_argument("--report", default=None)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    pat, excl = re.compile(a.ops), re.compile(a.exclude)
    dtypes = [getattr(torch, d) for d in a.dtypes.split(",")]
    lines, totals = [], {"ok": 0, "bad": 0, "skip": 0}
    for op in op_db:
        full = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if not pat.search(full) or excl.search(full):
            continue
        try:
            fn_pt = pt_op(op)
        except Skip as e:
            lines.append(f"{full} - skip: {e}")
            totals["skip"] += 1
            continue
        nondet = bool(_NONDET.search(full))
        if a.errors:
            errs, n = run_errors(op, fn_pt)
            lines += [f"{full} - errors: {e}" for e in errs]
            totals["bad"] += len(errs)
            totals["ok"] += n - len(errs)
        supported = op.supported_dtypes("cpu")
        vmode = "variants" if a.variants else "value"
        ad = [m for m in ("grad", "fwad", "gradgrad") if getattr(a, m)]
        mode_dtypes = [(m, getattr(torch, d)) for m in ad for d in a.ad_dtypes.split(",")] \
            if ad else [(vmode, d) for d in dtypes]
        for mode, dt in mode_dtypes:
            if dt not in supported:
                continue
            if mode == "grad" and not op.supports_autograd:
                continue
            if mode == "fwad" and not op.supports_forward_ad:
                continue
            if mode == "gradgrad" and not (op.supports_autograd and op.supports_gradgrad):
                continue
            reported = set()
            try:
                draw = op.reference_inputs if a.reference else op.sample_inputs
                samples = draw("cpu", dt, requires_grad=(mode in ("grad", "fwad", "gradgrad")))
                for k, sample in enumerate(samples):
                    if k >= a.max_samples:
                        break
                    try:
                        with time_limit(60):
                            bad = run_sample(op, fn_pt, sample, mode,
                                             nondet or _dropout_sample(full, sample))
                    except Skip as e:
                        totals["skip"] += 1
                        if a.verbose:
                            lines.append(f"{full} {_dtype_name(dt)} {mode} skip: {e}")
                        continue
                    except Exception as e:
                        bad = [f"harness/ptcore failure {type(e).__name__}: {str(e)[:200]}"
                               + ("\n" + traceback.format_exc() if a.verbose else "")]
                    if bad:
                        totals["bad"] += 1
                        key = bad[0].split(":")[0]
                        if key in reported and not a.verbose:
                            continue
                        reported.add(key)
                        lines.append(f"{full} {_dtype_name(dt)} {mode} {_describe(sample)}\n    "
                                     + "\n    ".join(bad))
                    else:
                        totals["ok"] += 1
            except Exception as e:
                lines.append(f"{full} {_dtype_name(dt)} {mode} sample generation failed: "
                             f"{type(e).__name__}: {str(e)[:200]}")
        sys.stdout.flush()
    text = "\n".join(lines) + f"\n\ntotals: {totals}\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    print(text[-20000:] if not a.report else f"{len(lines)} lines to {a.report}; totals {totals}")


if __name__ == "__main__":
    main()
