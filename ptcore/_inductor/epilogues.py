"""GEMM epilogues: a matrix product whose result only one elementwise op reads
becomes ONE step, the op applied where the product leaves its output.

Five chains of a training graph (a Linear followed by ReLU or GELU, the
gradient of the activation after the product before it, a residual add after
a Linear), each with an optional ``view``/``reshape`` between the product and
the op:

``relu(addmm(bias, x, w))``               forward ReLU            (kind 1)
``where(le(y, 0), 0, mm(g, w))``          ReLU's gradient: its
                                          differentiable form      (kind 2, aux y)
``add(r, addmm(bias, x, w))`` (either order)  residual add        (kind 3, aux r)
``gelu(addmm(bias, x, w))``               forward exact GELU      (kind 4)
``gelu_grad(mm(g, w), x)``                exact GELU's gradient   (kind 5, aux x)

(In a training step GELU's input is saved for its gradient, so the forward
chain fuses only where nothing else reads the product: inference; the
gradient's chain fuses in every transformer MLP's backward.)  Kinds 4 and 5
run the product, then eager's own GELU map (``_ew.gelu_map``,
``_nn_kernels.gelu_backward_map``: the function eager's pass calls) once over
the whole result in place, so each element is computed as in eager (eager's
bits) and the op's own output tensor and the pass writing it are saved: the
GPT step at one thread 0.973-1.006x of the same step without it (median 0.986
of eight alternating runs: a small gain, within this machine's noise run to run).

:func:`gemm_epilogue` runs the chain through the kernel
``ptcore._ops.kernels._blas.gemm_epilogue``: at one thread ptcore's GEMM
applies the op to each output tile while it is still in L1 (no separate pass
over the output, no intermediate tensor), elsewhere the op follows the same
product in one pass; the bits of the product and the op in sequence.  At run
time the step checks what the kernel needs (float32 CPU matrices, an
auxiliary operand of the output's shape and dtype) and runs the chain's own
ops for anything else (float64, broadcasting, other layouts: eager's results
and errors), and whenever the chain is recorded (autograd on and an operand
requiring grad: a backward under ``create_graph``), under forward AD or vmap.
"""
from ptcore._tensor import _TensorBase
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._ops.kernels._blas import addmm_fast as _addmm_fast, \
    bias_in_product_exact as _bias_exact, gemm_epilogue as _kernel
from ptcore._ops.kernels._ew import gelu_map as _gelu_map
from ptcore._ops.kernels._nn_kernels import gelu_backward_map as _gelu_backward_map
from ptcore.autograd.grad_mode import _state
from ptcore.jit._ir import Node
from ptcore._inductor.codegen import chain_runner, node_inputs
from ptcore._inductor.kernel_grads import KernelGrad, gelu_grad as _kernel_gelu_grad

__all__ = ["GemmEpilogue", "gemm_epilogue", "linear_epilogue", "fuse_epilogues", "TransposedLinear",
           "transposed_linear", "fuse_transposed_linear", "enabled"]

# whether compile_segments applies the pass (tests and A/B measurements switch it)
enabled = [True]

_ADDMM = (("ptcore", "addmm"), ("Tensor", "addmm"))
_MM = (("ptcore", "mm"), ("Tensor", "mm"))
_LINEAR = (("nn.functional", "linear"),)
_VIEW = (("Tensor", "view"), ("Tensor", "reshape"), ("ptcore", "reshape"))
_RELU = (("ptcore", "relu"), ("nn.functional", "relu"), ("Tensor", "relu"))
_ADD = (("ptcore", "add"), ("Tensor", "add"), ("Tensor", "__add__"))
_WHERE = (("ptcore", "where"),)      # (Tensor.where takes self first)
_LE = (("Tensor", "le"), ("ptcore", "le"), ("Tensor", "__le__"))
_GELU = (("nn.functional", "gelu"),)

RELU, MASK, ADD, GELU, GELU_GRAD = 1, 2, 3, 4, 5

# kind -> the map eager runs for it (None where eager runs another loop: the kernel
# declines and the chain's ops run; see _blas.gemm_epilogue)
_MAPS = {GELU: _gelu_map(), GELU_GRAD: _gelu_backward_map()}


class GemmEpilogue(Node):
    """``out = gemm_epilogue(kind, bias, a, b, aux, shape)`` replacing the
    nodes ``chain`` (product, optional view, op; the ``le`` of a mask), which
    run instead where the kernel does not take the call."""
    __slots__ = ("chain",)

    def __init__(self, kind, bias, a, b, aux, shape, chain, linear=False):
        super().__init__(("prim", "compile_gemm_epilogue"), [kind, bias, a, b, aux, list(shape)],
                         {}, chain[-1].outputs)
        self.chain = chain
        ids = [None if x is None else x["v"] for x in (bias, a, b, aux)]
        run = chain_runner(chain, ids)

        if linear:
            def fused(kind, bias, a, b, aux, shape):
                return linear_epilogue(kind, bias, a, b, aux, shape, run)
        else:
            def fused(kind, bias, a, b, aux, shape):
                return gemm_epilogue(kind, bias, a, b, aux, shape, run)
        fused.__name__ = "gemm_epilogue"
        self._fn = fused


def gemm_epilogue(kind, bias, a, b, aux, shape, run):
    """The chain's result by the fused kernel where it takes the operands (see
    the module docstring), else by the chain's ops (``run``)."""
    if type(a) is type(b) and isinstance(a, _TensorBase) and \
            not (_state.enabled and (a._requires_grad or b._requires_grad or
                                     (bias is not None and bias._requires_grad) or
                                     (aux is not None and aux._requires_grad))) and \
            not _fw_levels() and not _vmap_frames():
        aux2 = None
        ok = True
        if aux is not None:
            ok = type(aux) is type(a) and tuple(aux.shape) == tuple(shape) and \
                aux.dtype is a.dtype and aux.device == a.device
            if ok:
                try:
                    aux2 = aux.view(-1, shape[-1])
                except RuntimeError:        # (a layout no (M, N) view reads)
                    ok = False
        if ok:
            r = _kernel(kind, a, b, bias, aux2, _MAPS.get(kind))
            if r is not None and r.numel() == _numel(shape):
                return r if len(shape) == 2 and tuple(r.shape) == tuple(shape) else \
                    r.view(shape)
    return run(bias, a, b, aux)


def linear_epilogue(kind, bias, x, w, aux, shape, run):
    """The chain's result where its product is ``F.linear(x, w, bias)`` (an
    inference graph keeps the call): the rows of ``x`` times ``w.t()``, as
    eager's linear computes them (``addmm`` of a 2-D input, or of a
    contiguous input's rows when there is a bias), by :func:`gemm_epilogue`;
    anything else by the chain's ops."""
    if isinstance(x, _TensorBase) and isinstance(w, _TensorBase) and w.dim() == 2 and \
            x.dtype is w.dtype and \
            (x.dim() == 2 or (x.dim() > 2 and bias is not None and x.is_contiguous() and
                              x.shape[-1] == w.shape[1] and x.numel() > 0)):
        return gemm_epilogue(kind, bias, x if x.dim() == 2 else x.view(-1, x.shape[-1]),
                             w.t(), aux, shape, lambda *_: run(bias, x, w, aux))
    return run(bias, x, w, aux)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _ref(x):
    return x["v"] if type(x) is dict and "v" in x else None


def fuse_epilogues(nodes, values, live, skip=()):
    """``nodes`` with each chain of the module docstring made a
    :class:`GemmEpilogue`; ``values``: the graph's values (shapes, dtypes);
    ``live``: value ids read after ``nodes`` (the chain's intermediates must
    not be among them); ``skip``: ids of nodes that stay as they are."""
    made = {}
    uses = {}
    for i, n in enumerate(nodes):
        for v in n.output_ids() or []:
            made[v] = i
        for v in node_inputs(n):
            uses[v] = uses.get(v, 0) + 1
    live = set(live)

    def only_use(v):
        return v is not None and uses.get(v, 0) == 1 and v not in live and v in made

    def product_of(v):
        """(product node, view node or None) making ``v``, or None."""
        if not only_use(v):
            return None
        n = nodes[made[v]]
        view = None
        if n.op in _VIEW:
            src = _ref(n.args[0]) if n.args else None
            if n.kwargs or not only_use(src):
                return None
            view, n = n, nodes[made[src]]
        if n.kwargs:
            return None
        if n.op in _ADDMM and len(n.args) == 3 and all(_ref(a) is not None for a in n.args):
            return n, view
        if n.op in _MM and len(n.args) == 2 and all(_ref(a) is not None for a in n.args):
            return n, view
        if n.op in _LINEAR and len(n.args) in (2, 3) and \
                all(_ref(a) is not None for a in n.args[:2]) and \
                (len(n.args) == 2 or n.args[2] is None or _ref(n.args[2]) is not None):
            return n, view
        return None

    repl = {}           # index of the chain's last node -> replacement
    drop = set()
    for i, n in enumerate(nodes):
        if not isinstance(n.outputs, dict) or "v" not in n.outputs:
            continue
        # (nn.GELU and nn.ReLU call F.gelu(x, approximate="none"), F.relu(x, inplace=False))
        if n.kwargs and not ((n.op in _GELU and n.kwargs == {"approximate": "none"}) or
                             (n.op in _RELU and n.kwargs == {"inplace": False})):
            continue
        kind = aux = None
        if n.op in _RELU and len(n.args) == 1:
            kind, x = RELU, _ref(n.args[0])
            extra = []
        elif n.op in _GELU and len(n.args) == 1:
            kind, x = GELU, _ref(n.args[0])
            extra = []
        elif type(n) is KernelGrad and n._fn is _kernel_gelu_grad and len(n.args) == 2:
            kind, x, aux = GELU_GRAD, _ref(n.args[0]), _ref(n.args[1])
            if aux is None:
                continue
            extra = []
        elif n.op in _ADD and len(n.args) == 2:
            r0, r1 = _ref(n.args[0]), _ref(n.args[1])
            if r0 is None or r1 is None:
                continue
            p1 = product_of(r1)
            if p1 is not None:
                kind, x, aux = ADD, r1, r0
            else:
                kind, x, aux = ADD, r0, r1
            extra = []
        elif n.op in _WHERE and len(n.args) == 3 and n.args[1] in (0, 0.0) and \
                type(n.args[1]) is not bool:
            m, x = _ref(n.args[0]), _ref(n.args[2])
            if not only_use(m):
                continue
            le = nodes[made[m]]
            if le.op not in _LE or le.kwargs or len(le.args) != 2 or \
                    le.args[1] not in (0, 0.0) or type(le.args[1]) is bool or \
                    _ref(le.args[0]) is None:
                continue
            kind, aux = MASK, _ref(le.args[0])
            extra = [le]
        else:
            continue
        if x is None or x == aux:
            continue
        found = product_of(x)
        if found is None:
            continue
        prod, view = found
        xv = values.get(x)
        shape = getattr(xv, "shape", None)
        if shape is None or len(shape) < 2:
            continue
        idx = [made[x] if view is None else made[_ref(view.args[0])]]
        if view is not None:
            idx.append(made[x])
        idx += [nodes.index(e) for e in extra]
        if any(j in drop or j in repl for j in idx):
            continue
        chain = [nodes[j] for j in sorted(idx)] + [n]
        if any(id(nd) in skip for nd in chain):
            continue
        linear = prod.op in _LINEAR
        if prod.op in _ADDMM:
            bias, a, b = prod.args
        elif linear:
            a, b = prod.args[:2]
            bias = prod.args[2] if len(prod.args) == 3 else None
        else:
            bias, (a, b) = None, prod.args
        ext = {v for nd in chain for v in node_inputs(nd)} - \
            {v for nd in chain for v in (nd.output_ids() or [])}
        if not ext <= {_ref(bias) if bias is not None else None, _ref(a), _ref(b), aux}:
            continue
        aux_arg = {"v": aux} if aux is not None else None
        repl[i] = GemmEpilogue(kind, bias, a, b, aux_arg, tuple(shape), chain, linear)
        drop.update(idx)
    if not repl:
        return nodes
    return [repl.get(i, n) for i, n in enumerate(nodes) if i not in drop]


# ---------------------------------------------------------------------------
# a Linear over a transposed input (nn.MultiheadAttention's in-projection)
# ---------------------------------------------------------------------------
# ``add(matmul(transpose(x, 1, 0), W), b)`` with ``x`` (B, T, C) contiguous:
# matmul runs T products of (B, C) rows (the transposed input does not fold
# into one matrix), and the add passes over the (T, B, N) result again.  The
# same elements come from ONE product of ``x.view(B*T, C)``'s rows, seen
# (T, B, N) through a transposed view, with the bias added as the product
# leaves its output (``addmm``): the same bits where ptcore's GEMM runs both
# eager's products and this one and C fits in one of its k blocks
# (``_blas.bias_in_product_exact``); elsewhere the ops run as captured.  The
# result's layout differs from eager's, so the rewrite applies only where
# every reader of it is a view splitting its last dim (the heads' view
# (T, B, 3, E) that follows), which reads either layout.

_TRANSPOSE = (("Tensor", "transpose"), ("ptcore", "transpose"))
_MATMUL = (("ptcore", "matmul"), ("Tensor", "matmul"), ("Tensor", "__matmul__"))


class TransposedLinear(Node):
    """``out = transposed_linear(x, w, b)`` replacing ``add(matmul(t, w), b)``
    with ``t = transpose(x, 1, 0)`` (the chain ``chain`` runs where the kernel
    does not take the call)."""
    __slots__ = ("chain",)

    def __init__(self, x, w, b, chain):
        super().__init__(("prim", "compile_transposed_linear"), [x, w, b], {},
                         chain[-1].outputs)
        self.chain = chain
        run = chain_runner(chain, [None, x["v"], w["v"], b["v"]])

        def linear(x, w, b):
            return transposed_linear(x, w, b, run)
        linear.__name__ = "transposed_linear"
        self._fn = linear


def transposed_linear(x, w, b, run):
    """``matmul(x.transpose(1, 0), w) + b`` (see above); ``run(None, x, w, b)``
    gives it by the ops themselves."""
    if type(x) is type(w) and isinstance(x, _TensorBase) and isinstance(b, _TensorBase) and \
            not (_state.enabled and (x._requires_grad or w._requires_grad or b._requires_grad)) \
            and not _fw_levels() and not _vmap_frames() and x.dim() == 3 and \
            x.is_contiguous() and w.dim() == 2:
        B, T, C = x.shape
        # (eager's matmul runs T products of B rows: the same bits only where
        # ptcore's GEMM runs each of them, and the folded one)
        r = _addmm_fast(b, x.view(B * T, C), w) if _bias_exact(B, w.shape[-1], C) else None
        if r is not None:
            return r.view(B, T, r.shape[1]).transpose(0, 1)
    return run(None, x, w, b)


def fuse_transposed_linear(nodes, values, live, skip=()):
    """``nodes`` with each chain of the comment above made a
    :class:`TransposedLinear` (arguments as :func:`fuse_epilogues`)."""
    made, uses, readers = {}, {}, {}
    for i, n in enumerate(nodes):
        for v in n.output_ids() or []:
            made[v] = i
        for v in node_inputs(n):
            uses[v] = uses.get(v, 0) + 1
            readers.setdefault(v, []).append(n)
    live = set(live)
    repl, drop = {}, set()
    for i, n in enumerate(nodes):
        if n.op not in _ADD or n.kwargs or len(n.args) != 2 or id(n) in skip:
            continue
        m, b = _ref(n.args[0]), _ref(n.args[1])
        out = _ref(n.outputs) if isinstance(n.outputs, dict) else None
        if m is None or b is None or out is None or out in live or m in live or \
                uses.get(m, 0) != 1 or m not in made:
            continue
        mm = nodes[made[m]]
        if mm.op not in _MATMUL or mm.kwargs or len(mm.args) != 2 or id(mm) in skip:
            continue
        t, w = _ref(mm.args[0]), _ref(mm.args[1])
        if t is None or w is None or t not in made:
            continue
        tr = nodes[made[t]]
        if tr.op not in _TRANSPOSE or tr.kwargs or len(tr.args) != 3 or \
                sorted(a for a in tr.args[1:] if type(a) is int) != [0, 1] or \
                _ref(tr.args[0]) is None:
            continue
        xs, ws, bs, os_ = (getattr(values.get(v), "shape", None) for v in
                           (_ref(tr.args[0]), w, b, out))
        if xs is None or ws is None or bs is None or os_ is None or len(xs) != 3 or \
                len(ws) != 2 or len(bs) != 1 or len(os_) != 3:
            continue
        ok = bool(readers.get(out))
        for r in readers.get(out, ()):
            shape = r.args[1:] if len(r.args) > 2 else \
                (r.args[1].get("list", r.args[1].get("tuple")) if len(r.args) == 2 and
                 type(r.args[1]) is dict else r.args[1:])
            if r.op != ("Tensor", "view") or r.kwargs or shape is None or \
                    not all(type(s) is int for s in shape) or \
                    list(shape[:2]) != list(os_[:2]):
                ok = False
        if not ok:
            continue
        repl[i] = TransposedLinear(tr.args[0], mm.args[1], n.args[1], [tr, mm, n])
        drop.add(made[m])
    if not repl:
        return nodes
    return [repl.get(i, n) for i, n in enumerate(nodes) if i not in drop]
