"""A fused elementwise group (:class:`ptcore.jit._fusion.FusedGroup`) on
CUDA tensors as ONE generated kernel.

The group's register program becomes the body of a grid-stride elementwise
kernel in the dialect of the kernel library (:mod:`ptcore.cuda.kernels.library`):
the prelude's ``PTC_FOR`` loop, ``ptc_strided<K>`` offsets for the strided
variant, ``FN(f)`` for the float/double math functions, the same
expressions as the library's unary/binary kernels (each instruction's
``cuda`` expression, :data:`ptcore.jit._instructions.INSTRUCTIONS`).  Each value lives in a
register of the thread; the inputs are read and the outputs written once.
Python numbers of the trace become literals, so the source is a function of
the expression only, and the compiled program is cached per source (and
device) -- NVRTC on a GPU, the host C++ compiler on the emulated device
(:mod:`ptcore.cuda.emulated.kernels`), both through the driver's
``module_load``; the launch goes through :mod:`ptcore.cuda.ops.launch`'s
launcher.

Kernel ABI (``K`` = outputs + tensor inputs, outputs first)::

    ptc_fused_<hash>_c(long long n, OUT0* out0, ..., const IN0* in0, ...)
    ptc_fused_<hash>_s(long long n, OUT0* out0, ..., const IN0* in0, ..., ptc_strided<K> ix)

The contiguous variant runs when every operand is dense of the full size,
the strided one otherwise (broadcast operands have stride 0).
"""
import hashlib
import re
import threading

import ptcore
from ptcore._tensor import _TensorBase
from ptcore.cuda.kernels import library as K
from ptcore.cuda.ops import tensors as _tensors
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.runtime import state as _runtime
from ptcore.jit._instructions import INSTRUCTIONS

__all__ = ["kernel_source", "run"]

_lock = threading.Lock()
_loaded = set()         # (driver, device, source hash) whose functions _launch knows


def _dn(dt):
    return str(dt).rsplit(".", 1)[-1]


def _literal(v):
    v = float(v)
    if v != v:
        return "(T)__longlong_as_double(0x7ff8000000000000LL)"
    if v in (float("inf"), float("-inf")):
        return "(T)PTC_INF" if v > 0 else "(T)(-PTC_INF)"
    return f"(T)({v!r})"


def kernel_source(group):
    """``(source, name_c, name_s, tensor_operands)`` of ``group``'s kernel:
    the kernel library's prelude and the two variants."""
    prog = group.program
    dt = group.dtype
    tensors = [k for k, a in enumerate(prog.operands) if type(a) is dict]
    in_dtypes = [_dn(group.in_meta[k][0]) for k in tensors]
    out_dtypes = [_dn(d) for d in group.out_dtypes]
    nout = len(group.out_ids)
    kk = nout + len(tensors)
    body, var = [], {}
    for j, (k, idt) in enumerate(zip(tensors, in_dtypes)):
        src = f"in{j}[IDX{nout + j}]"
        if idt == "bool":
            body.append(f"        const T v_in{k} = (T)({src} != 0);")
        else:
            body.append(f"        const T v_in{k} = (T)({src});")
        var[k] = f"v_in{k}"
    for k, a in enumerate(prog.operands):
        if type(a) is not dict:
            var[k] = _literal(a)
    for i, (op, dst, srcs) in enumerate(prog.instrs):
        if op == "where":
            c, a, b = (var[s] for s in srcs)
            expr = f"(({c}) != (T)0 ? ({a}) : ({b}))"
        else:
            e = INSTRUCTIONS[op].cuda
            x = var[srcs[0]]
            y = var[srcs[1]] if len(srcs) > 1 else None
            expr = "(" + re.sub(r"\b[xy]\b", lambda m: f"({x})" if m.group(0) == "x" else f"({y})",
                                K._fn(e, dt)) + ")"
        body.append(f"        const T v{i} = {expr};")
        var[dst] = f"v{i}"
    for j, (reg, odt) in enumerate(zip(prog.out_regs, out_dtypes)):
        if odt == "bool":
            body.append(f"        out{j}[IDX{j}] = (unsigned char)({var[reg]} != (T)0);")
        else:
            body.append(f"        out{j}[IDX{j}] = ({K._storage(odt)})({var[reg]});")
    text = "\n".join(body)
    digest = hashlib.sha256(f"{dt}|{in_dtypes}|{out_dtypes}|{text}".encode()).hexdigest()[:20]
    name = f"ptc_fused_{digest}"
    params = ["long long n"]
    params += [f"{K._storage(odt)}* out{j}" for j, odt in enumerate(out_dtypes)]
    params += [f"const {K._storage(idt)}* in{j}" for j, idt in enumerate(in_dtypes)]
    ctype = K._compute(dt)

    def variant(v):
        if v == "c":
            b = text
            for q in range(kk):
                b = b.replace(f"[IDX{q}]", "[i]")
            pre, ps = "", params
        else:
            b = text
            for q in range(kk):
                b = b.replace(f"[IDX{q}]", f"[o[{q}]]")
            pre = f"        long long o[{kk}];\n        ptc_offsets<{kk}>(ix, i, o);\n"
            ps = params + [f"ptc_strided<{kk}> ix"]
        return (f'extern "C" __global__ void {name}_{v}({", ".join(ps)}) {{\n'
                f"    typedef {ctype} T;\n"
                f"    PTC_FOR(i, n) {{\n{pre}{b}\n    }}\n}}\n")
    source = K.PRELUDE + variant("c") + variant("s")
    return source, name + "_c", name + "_s", tensors


def _functions(drv, idx, group):
    if group._cuda is None:
        group._cuda = kernel_source(group)
    source, name_c, name_s, tensors = group._cuda
    key = (drv, idx, name_c)
    if key not in _loaded:
        fns = drv.module_load(idx, source, [name_c, name_s])
        _launch._store_functions(drv, idx, {name_c: fns[name_c], name_s: fns[name_s]})
        with _lock:
            _loaded.add(key)
    return name_c, name_s, tensors


def run(group, ops):
    """Evaluate ``group`` on its operands ``ops`` (CUDA tensors of the traced
    dtypes and shapes, and numbers) with one kernel launch; returns the
    output tensors, or None when the group cannot run as one kernel here
    (operands on different devices, too many non-mergeable dims)."""
    tens = [o for o in ops if isinstance(o, _TensorBase)]
    dev = tens[0].device
    if any(t.device != dev for t in tens):
        return None
    shape = list(group.shape)
    idx = dev.index
    drv = _runtime.lazy_init("fused kernel")
    name_c, name_s, tensors = _functions(drv, idx, group)
    outs = [_tensors.empty(shape, odt, dev) for odt in group.out_dtypes]
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return outs
    ins = [ops[k] for k in tensors]
    strides = [list(o.stride()) for o in outs] + [_launch._bcast_strides(x, shape) for x in ins]
    try:
        sizes, cst = K.collapse_dims(shape or [1], strides if shape else [[0] for _ in strides])
    except ValueError:
        return None
    args = [_launch._ll(n)] + [_launch._ptr(o) for o in outs] + [_launch._ptr(x) for x in ins]
    if len(sizes) == 1 and all(s[0] == 1 for s in cst):
        _launch._launch(idx, name_c, n, args)
    else:
        _launch._launch(idx, name_s, n, args + [_launch._struct(K.pack_strided(sizes, cst))])
    return outs
