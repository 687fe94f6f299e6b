"""Backward steps of a training graph that call an op's one-pass backward
kernel directly.

softmax, log_softmax, gelu and layer_norm have one-pass backward kernels in
eager ptcore, called by their formulas outside the operator table, so the
backward tracer of :mod:`ptcore._inductor.aot` cannot record them: such a
node ran *opaque* (its forward under autograd recording on detached leaves,
its backward through the autograd node), which cost more Python than the
kernels' own time at transformer sizes.  Here the forward node stays a plain
(no-grad, fusable) op and the backward graph gets one step calling the
kernel on the saved input or output: the same kernel, the same values as
eager.  A layer norm's forward node becomes a call of its forward kernel that
also returns the rows' mean and reciprocal deviation, saved for the backward
kernel.  A backward run with ``create_graph`` (the gradient's ops recorded)
takes the ops' differentiable composite instead, as eager's formulas do.
"""
from ptcore import strided
from ptcore._tensor import _TensorBase
from ptcore._dispatch.handlers import Handlers
from ptcore._ops.creation import tensor as _tensor_fn
from ptcore.autograd._formulas import _one_pass_softmax_backward, _recorded
from ptcore.autograd._formulas_nn import _gelu_grad
from ptcore.autograd.engine import grad as _autograd_grad
from ptcore.autograd.grad_mode import enable_grad, is_grad_enabled
from ptcore.jit._ir import Node, Value, decode
from ptcore._inductor.codegen import node_inputs, uses_and_makers
from ptcore.nn.functional import layer_norm as _layer_norm
from ptcore.nn.functional._norm import _cpu_ln_kernels

__all__ = ["KernelGrad", "KernelCall", "direct_backward", "direct_forward", "fuse_ln_grad_acc"]

_FLOATS = ("float32", "float64")
# (namespace, op) -> match(node, op, xt, xid, yid): the (fn, forward id read, input id)
# of the op's direct kernel backward for that call, or None; registered below, at each
_direct = Handlers("direct kernel backward")


class KernelCall(Node):
    """A forward step ``outputs = fn(*args, **kwargs)`` replacing the op node
    ``inner`` (a layer norm that also returns its statistics)."""
    __slots__ = ("inner", "info")

    def __init__(self, fn, inner, args, kwargs, outputs, info=None):
        super().__init__(("prim", "compile_kernel"), args, kwargs, outputs)
        self._fn = fn
        self.inner = inner
        self.info = info


class KernelGrad(Node):
    """A backward step ``outputs = fn(*args)`` (``fn`` a Python function of
    tensors: :func:`softmax_grad`, :func:`gelu_grad`)."""
    __slots__ = ()

    def __init__(self, fn, args, out):
        super().__init__(("prim", "compile_kernel_grad"), args, {}, out)
        self._fn = fn


def softmax_grad(g, y):
    """Gradient of ``softmax(x, -1)`` from its output ``y``."""
    r = _one_pass_softmax_backward(g, y, -1, False)
    if r is not None:
        return r
    gy = g * y
    return gy - y * gy.sum(-1, keepdim=True)


def log_softmax_grad(g, y):
    """Gradient of ``log_softmax(x, -1)`` from its output ``y``."""
    r = _one_pass_softmax_backward(g, y, -1, True)
    if r is not None:
        return r
    return g - y.exp() * g.sum(-1, keepdim=True)


def gelu_grad(g, x):
    """Gradient of the exact (erf) ``gelu`` from its input ``x``."""
    return _gelu_grad(g, x, None, "none")


def ln_forward(x, w, b, n, eps):
    """``layer_norm`` of the rows of ``n`` elements of contiguous ``x``, with
    the rows' mean and reciprocal standard deviation (eager's kernel)."""
    return _cpu_ln_kernels().layer_norm_forward(x, n, w, b, eps)


def ln_grad(g, x, mean, rstd, w, b, ns, eps, need_w, need_b):
    """``(grad x, grad weight, grad bias)`` of a layer norm (None for those
    not needed) by eager's one-pass kernel; recorded (``create_graph``) or
    where the kernel declines, ``autograd.grad`` of the op on leaves."""
    if not _recorded(g, x, w):
        r = _cpu_ln_kernels().layer_norm_backward(g.contiguous(), x, mean, rstd, w,
                                                  need_w, need_b)
        if r is not None:
            gx, gw, gb = r
            return (gx, None if gw is None else gw.view(ns), None if gb is None else gb.view(ns))
    leaves = [x.detach().requires_grad_(True)]
    leaves += [None if t is None else t.detach().requires_grad_(need)
               for t, need in ((w, need_w), (b, need_b))]
    with enable_grad():
        y = _layer_norm(leaves[0], ns, leaves[1], leaves[2], eps)
    want = [t for t in leaves if t is not None and t.requires_grad]
    got = iter(_autograd_grad([y], want, [g], allow_unused=True,
                              create_graph=is_grad_enabled()))
    return tuple(next(got) if t is not None and t.requires_grad else None for t in leaves)


def ln_grad_acc(acc, first, g, x, mean, rstd, w, b, ns, eps, need_w, need_b):
    """:func:`ln_grad` with ``acc`` added to the input gradient (``acc + gx``,
    ``gx + acc`` where ``first`` is False): the residual branch's gradient of a
    pre-norm block, added by the kernel as each element leaves it (one pass
    over the rows fewer, the bits of the separate addition); anything the
    kernel does not take: :func:`ln_grad`, then the addition."""
    if not _recorded(g, x, w, acc):
        r = _cpu_ln_kernels().layer_norm_backward(g.contiguous(), x, mean, rstd, w,
                                                  need_w, need_b, True, acc)
        if r is not None:
            gx, gw, gb = r
            return (gx, None if gw is None else gw.view(ns), None if gb is None else gb.view(ns))
    gx, gw, gb = ln_grad(g, x, mean, rstd, w, b, ns, eps, need_w, need_b)
    return (acc + gx if first else gx + acc, gw, gb)


_ADD = (("ptcore", "add"), ("Tensor", "add"), ("Tensor", "__add__"), ("Tensor", "__radd__"))


def fuse_ln_grad_acc(nodes, live):
    """``nodes`` with each ``add(r, gx)`` (either order) of a layer norm's input
    gradient ``gx`` (a :func:`ln_grad` step's first output, read by nothing
    else) made one :func:`ln_grad_acc` step.  ``live``: value ids read after
    ``nodes``.  The step goes where the layer norm's was when ``r`` is made
    before it, else where the add was when nothing in between reads the
    step's other outputs."""
    uses, _ = uses_and_makers(nodes, live)      # (live values count as reads)
    made = {v: i for i, n in enumerate(nodes) for v in n.output_ids() or []}
    repl, drop = {}, set()
    for i, n in enumerate(nodes):
        if n.op not in _ADD or n.kwargs or len(n.args) != 2 or \
                not isinstance(n.outputs, dict) or "v" not in n.outputs:
            continue
        refs = [a["v"] if type(a) is dict and "v" in a else None for a in n.args]
        if None in refs or refs[0] == refs[1]:
            continue
        for k in (1, 0):
            gx, r = refs[k], refs[1 - k]
            j = made.get(gx)
            if j is None or j in drop or j in repl or uses.get(gx) != 1:
                continue
            ln = nodes[j]
            if type(ln) is not KernelGrad or ln._fn is not ln_grad or \
                    type(ln.outputs) is not dict or "tuple" not in ln.outputs:
                continue
            spec = ln.outputs["tuple"]
            if not spec or type(spec[0]) is not dict or spec[0].get("v") != gx:
                continue
            others = [o["v"] for o in spec[1:] if type(o) is dict]
            at = made.get(r, -1)
            if at < j:
                pos = j
            elif any(v in others for m in nodes[j + 1:i] for v in node_inputs(m)):
                continue
            else:
                pos = i
            step = KernelGrad(ln_grad_acc, [n.args[1 - k], k == 1] + list(ln.args),
                              {"tuple": [n.outputs] + list(spec[1:])})
            repl[pos] = step
            drop.add(i if pos == j else j)
            break
    if not repl:
        return nodes
    return [repl.get(i, n) for i, n in enumerate(nodes) if i not in drop]


def select_grad(g, x_shape, i, zero=True, strides=None):
    """Gradient of ``x[i]`` (``i`` an int): a buffer of ``x``'s shape with row
    ``i`` the gradient, zeros elsewhere (``zero=False``: the other rows are
    left unset, every one of them being written by a later
    :func:`select_grad_into`); ``strides``: the buffer's layout (None:
    contiguous; :func:`ptcore._inductor.copies.fold_select_layout` picks one
    the views after it read as a contiguous tensor)."""
    if _recorded(g):
        out = g.new_zeros(x_shape)
        return out.index_add(0, _index_of(g, i), g.unsqueeze(0))
    out = grad_buffer(g, x_shape, zero, strides)
    out[i].copy_(g)
    return out


def grad_buffer(g, x_shape, zero, strides):
    """A new buffer like ``g`` of ``x_shape`` (``strides``: its layout, None:
    contiguous), zeroed when ``zero``."""
    if strides is None:
        return g.new_zeros(x_shape) if zero else g.new_empty(x_shape)
    out = g.new_empty_strided(x_shape, strides)
    if zero:
        out.zero_()
    return out


def select_grad_into(buf, g, i, fresh):
    """``buf`` (a gradient buffer :func:`select_grad` made, read by nothing
    else) with ``g`` written into its row ``i`` (``fresh``: a row no step
    wrote before), or added to it: the rows of ``x[0], x[1] ...`` written
    into one buffer, not summed as full-size tensors."""
    if _recorded(g, buf):
        return buf.index_add(0, _index_of(g, i), g.unsqueeze(0))
    if fresh:
        buf[i].copy_(g)
    else:
        buf[i].add_(g)
    return buf


def _index_of(g, i):
    return _tensor_fn([i], device=g.device)


def squeeze_grad(g, x_shape, d):
    """Gradient of ``x.squeeze(d)``: ``g`` with the squeezed dim back."""
    return g.unsqueeze(d) if x_shape[d] == 1 else g


def _arg(node, pos, name, default):
    if len(node.args) > pos:
        return node.args[pos]
    return node.kwargs.get(name, default)


def _match(node, tensors):
    """``(fn, forward id read, input id)`` of a node this module handles, else None."""
    op = node.op
    match = _direct.get(op)
    if match is None:
        return None
    outs = node.output_ids()
    if len(outs) != 1 or not (type(node.outputs) is dict and "v" in node.outputs):
        return None
    x = node.args[0] if node.args else None
    if type(x) is not dict or "v" not in x:
        return None
    xt, yt = tensors.get(x["v"]), tensors.get(outs[0])
    if not isinstance(xt, _TensorBase) or not isinstance(yt, _TensorBase):
        return None
    if xt.device.type != "cpu" or xt.dtype._name not in _FLOATS or \
            yt.dtype is not xt.dtype or xt.dim() == 0 or xt.layout is not strided or \
            not yt.is_contiguous():
        return None
    return match(node, op, xt, x["v"], outs[0])


def _softmax_match(fn):
    def match(node, op, xt, xid, yid):
        if set(node.kwargs) - {"dim", "dtype", "_stacklevel"} or len(node.args) > 4:
            return None
        dim = _arg(node, 1, "dim", None)
        # (dtype: ptcore.softmax's third parameter, F.softmax's fourth)
        dtype = _arg(node, 3 if op[0] == "nn.functional" else 2, "dtype", None)
        if dtype is not None or type(dim) is not int or dim not in (-1, xt.dim() - 1):
            return None
        return fn, yid, xid
    return match


_direct(("ptcore", "softmax"), ("Tensor", "softmax"),
        ("nn.functional", "softmax"))(_softmax_match(softmax_grad))
_direct(("ptcore", "log_softmax"), ("Tensor", "log_softmax"),
        ("nn.functional", "log_softmax"))(_softmax_match(log_softmax_grad))


@_direct(("nn.functional", "gelu"))
def _gelu_match(node, op, xt, xid, yid):
    if len(node.args) != 1 or set(node.kwargs) - {"approximate"} or \
            node.kwargs.get("approximate", "none") != "none":
        return None
    return gelu_grad, xid, xid


def _select_backward(b, node, tensors, rg):
    """:func:`select_grad` steps of ``x[i]`` (int ``i``); False when not that."""
    if node.op != ("Tensor", "__getitem__") or len(node.args) != 2 or node.kwargs:
        return False
    x, i = node.args
    outs = node.output_ids()
    if type(x) is not dict or "v" not in x or type(i) is not int or len(outs) != 1:
        return False
    xt = tensors.get(x["v"])
    if not isinstance(xt, _TensorBase) or xt.layout is not strided or xt.dim() == 0 or \
            not -xt.shape[0] <= i < xt.shape[0] or xt.is_complex():
        return False
    fid = x["v"]
    if outs[0] not in b.grad or fid not in rg or not xt.requires_grad:
        return True
    i = i % xt.shape[0]
    # backward value id of a buffer select_grad made -> (its step, the rows written)
    owned = b.__dict__.setdefault("owned_grads", {})
    g = {"v": b.grad[outs[0]]}
    gx = b.value(like=b.fwd.values[fid])
    old = b.grad.get(fid)
    if old is not None and old in owned:
        first, rows = owned.pop(old)
        b.nodes.append(KernelGrad(select_grad_into, [{"v": old}, g, i, i not in rows],
                                  {"v": gx}))
        rows.add(i)
        if len(rows) == xt.shape[0]:
            first.args[3] = False       # (every row is written: no zero fill)
        b.grad[fid] = gx
        owned[gx] = (first, rows)
        return True
    first = KernelGrad(select_grad, [g, tuple(xt.shape), i, True], {"v": gx})
    b.nodes.append(first)
    b.accumulate(fid, gx)
    if b.grad[fid] == gx:
        owned[gx] = (first, {i})
    return True


def _squeeze_backward(b, node, tensors, rg):
    """A :func:`squeeze_grad` step of ``x.squeeze(d)`` (int ``d``)."""
    if node.op not in (("Tensor", "squeeze"), ("ptcore", "squeeze")) or node.kwargs or \
            len(node.args) != 2:
        return False
    x, d = node.args
    if type(x) is not dict or "v" not in x or type(d) is not int:
        return False
    xt = tensors.get(x["v"])
    if not isinstance(xt, _TensorBase) or xt.dim() == 0 or not -xt.dim() <= d < xt.dim():
        return False
    out = node.output_ids()[0]
    fid = x["v"]
    if out not in b.grad or fid not in rg or not xt.requires_grad:
        return True
    gx = b.value(like=b.fwd.values[fid])
    b.nodes.append(KernelGrad(squeeze_grad, [{"v": b.grad[out]}, tuple(xt.shape),
                                            d % xt.dim()], {"v": gx}))
    b.accumulate(fid, gx)
    return True


def direct_backward(b, node, tensors, rg):
    """Record the backward of ``node`` into builder ``b`` (of
    :mod:`ptcore._inductor.aot`) as one :class:`KernelGrad` step; False when
    the node is not one this module handles (nothing recorded)."""
    if isinstance(node, KernelCall) and node._fn is ln_forward:
        return _ln_backward(b, node, tensors, rg)
    if _select_backward(b, node, tensors, rg) or _squeeze_backward(b, node, tensors, rg):
        return True
    m = _match(node, tensors)
    if m is None:
        return False
    fn, saved_fid, x_fid = m
    out_fid = node.output_ids()[0]
    if out_fid not in b.grad or x_fid not in rg or not tensors[x_fid].requires_grad:
        return False
    sv = _saved(b, saved_fid)
    gx = b.value(like=b.fwd.values[x_fid])
    b.nodes.append(KernelGrad(fn, [{"v": b.grad[out_fid]}, {"v": sv}], {"v": gx}))
    b.accumulate(x_fid, gx)
    return True


_LAYER_NORM = (("nn.functional", "layer_norm"),)


def _ln_match(node, tensors):
    """``(x, w, b, normalized shape, eps)`` encodings/values of a layer norm
    eager runs by its one-pass kernel, else None."""
    if node.op not in _LAYER_NORM or len(node.args) > 5 or \
            not (type(node.outputs) is dict and "v" in node.outputs):
        return None
    names = ("input", "normalized_shape", "weight", "bias", "eps")
    a = dict(zip(names, node.args))
    for k, v in node.kwargs.items():
        if k not in names or k in a:
            return None
        a[k] = v
    if "input" not in a or "normalized_shape" not in a:
        return None
    for k, default in (("weight", None), ("bias", None), ("eps", 1e-5)):
        a.setdefault(k, default)
    x = a["input"]
    if type(x) is not dict or "v" not in x:
        return None
    xt = tensors.get(x["v"])
    try:
        ns = tuple(int(i) for i in decode(a["normalized_shape"], {}))
        eps = float(decode(a["eps"], {}))
    except (TypeError, ValueError, KeyError):
        return None
    if not isinstance(xt, _TensorBase) or xt.device.type != "cpu" or xt.layout is not strided \
            or xt.dtype._name not in _FLOATS or not xt.is_contiguous() \
            or xt.numel() == 0 or not ns or tuple(xt.shape[-len(ns):]) != ns:
        return None
    params = []
    for k in ("weight", "bias"):
        p = a[k]
        if p is None:
            params.append(None)
            continue
        pt = tensors.get(p["v"]) if type(p) is dict and "v" in p else None
        if not isinstance(pt, _TensorBase) or pt.dtype is not xt.dtype or \
                not pt.is_contiguous() or tuple(pt.shape) != ns or pt.device.type != "cpu":
            return None
        params.append(p)
    return x, params[0], params[1], ns, eps


def direct_forward(graph, nodes, tensors):
    """``nodes`` with each layer norm that eager runs by its one-pass kernel
    replaced by a :class:`KernelCall` returning ``(y, mean, rstd)`` (new
    values of ``graph``)."""
    out = []
    for node in nodes:
        m = _ln_match(node, tensors)
        if m is None:
            out.append(node)
            continue
        x, w, b, ns, eps = m
        y = node.outputs["v"]
        yv = graph.values[y]
        n = 1
        for s in ns:
            n *= s
        stats = []
        for _ in range(2):
            vid = max(graph.values) + 1
            graph.values[vid] = Value(vid, "node", dtype=yv.dtype,
                                      shape=tuple(yv.shape[:len(yv.shape) - len(ns)]),
                                      device=yv.device)
            stats.append(vid)
        out.append(KernelCall(ln_forward, node, [x, w, b, n, eps], {},
                              {"tuple": [{"v": y}, {"v": stats[0]}, {"v": stats[1]}]},
                              info=(ns, eps)))
    return out


def _saved(b, fid):
    sv = b.saved.get(fid)
    if sv is None:
        sv = b.saved[fid] = b.value(like=b.fwd.values[fid])
    return sv


def _ln_backward(b, node, tensors, rg):
    """The backward step of a layer norm :class:`KernelCall`."""
    y, mean, rstd = node.output_ids()
    if y not in b.grad:
        return True
    x, w, bias = node.args[:3]
    ns, eps = node.info
    need = [type(a) is dict and a["v"] in rg and tensors[a["v"]].requires_grad
            for a in (x, w, bias)]
    if not any(need):
        return True
    args = [{"v": b.grad[y]}] + [{"v": _saved(b, v)} for v in (x["v"], mean, rstd)]
    args += [None if p is None else {"v": _saved(b, p["v"])} for p in (w, bias)]
    args += [ns, eps, need[1], need[2]]
    outs = []
    for a, nd in zip((x, w, bias), need):
        if nd:
            gv = b.value(like=b.fwd.values[a["v"]])
            outs.append((a["v"], gv))
    spec = []
    it = iter(outs)
    for nd in need:
        spec.append({"v": next(it)[1]} if nd else None)
    b.nodes.append(KernelGrad(ln_grad, args, {"tuple": spec}))
    for fid, gv in outs:
        b.accumulate(fid, gv)
    return True
