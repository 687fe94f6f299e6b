"""``ptcore.utils.flop_counter`` (``torch.utils.flop_counter``): count the
floating-point operations of the matrix products, convolutions and attention
a program runs, per module, as torch's ``FlopCounterMode`` does.

The counts are torch's: keyed by torch's aten op (``ptcore.ops.aten.mm``,
``addmm``, ``bmm``, ``baddbmm``, ``convolution``, ``convolution_backward``,
the attention kernels) with torch's formulas (a multiply-add is 2 flops, bias
additions and elementwise work are not counted).  ptcore's kernels are its
public ops (``linear``, ``matmul``, ``conv2d``, ``einsum`` ...), so those are
counted as the aten ops torch lowers them to; backward passes count the
matrix products ptcore's gradient formulas run, and a convolution's or an
attention kernel's backward as torch's fused backward op.

Difference from torch: ``nn.LSTM`` without projections is counted (its gate
matrix products, as ``nn.RNN``/``GRU`` are in both), where torch's fused
oneDNN (CPU) and cuDNN LSTM kernels count none.
"""
import math
import warnings
from collections import defaultdict
from functools import wraps

import ptcore
from ptcore._dispatch.handlers import Handlers
from ptcore.utils._python_dispatch import TorchDispatchMode
from ptcore.utils._pytree import tree_map, tree_map_
from ptcore.utils.module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula", "get_suffix_str",
           "convert_num_with_suffix", "convert_to_percent_str", "conv_flop_count",
           "sdpa_flop_count", "sdpa_backward_flop_count", "flop_registry"]

aten = ptcore.ops.aten
flop_registry = {}
suffixes = ["", "K", "M", "B", "T"]


def get_shape(i):
    return i.shape if isinstance(i, ptcore.Tensor) else i


def shape_wrapper(f):
    """``f`` called with tensors replaced by their shapes (and ``out_shape``)."""
    @wraps(f)
    def nf(*args, out_val=None, **kwargs):
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)
    return nf


def register_flop_formula(targets, get_raw=False):
    """Decorator: ``formula(*arg_shapes, out_shape=..., **kwargs) -> int`` counts
    the flops of the op packet(s) ``targets`` (``get_raw``: it gets the tensors)."""
    def register_fun(flop_formula):
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)

        def register(target):
            if not hasattr(target, "overloads") and not callable(target):
                raise ValueError(f"register_flop_formula(targets): expected each target to be "
                                 f"an op packet (ptcore.ops.<namespace>.<op>), got {target} "
                                 f"which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = flop_formula
        tree_map_(register, targets)
        return flop_formula
    return register_fun


# ---------------------------------------------------------------------------
# torch's formulas
# ---------------------------------------------------------------------------

@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """Flops of a matrix product (m, k) @ (k, n): 2 m n k."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """Flops of a batched matrix product (b, m, k) @ (b, k, n): 2 b m n k."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2 or k != k2:
        raise AssertionError(f"bmm: shapes {tuple(a_shape)} and {tuple(b_shape)} do not match")
    return b * m * n * 2 * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """torch's convolution count: 2 * batch * c_out * c_in/groups * prod(kernel)
    * prod(output spatial) (input spatial for a transposed convolution)."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return math.prod(conv_shape) * math.prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula([aten.convolution, aten._convolution])
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs):
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape, **kwargs):
    def t(shape):
        return [shape[1], shape[0]] + list(shape[2:])
    flop_count = 0
    if output_mask[0]:
        flop_count += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        if transposed:
            flop_count += conv_flop_count(t(grad_out_shape), t(x_shape), t(out_shape[1]), False)
        else:
            flop_count += conv_flop_count(t(x_shape), t(grad_out_shape), t(out_shape[1]), False)
    return flop_count


def _check_heads(h_q, h_kv, what):
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(f"{what}: query heads ({h_q}) must be a multiple of key/value "
                             f"heads ({h_kv})")


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """Flops of attention: scores q @ k^T and their product with v."""
    b, h_q, s_q, d_q = query_shape
    _, h_kv, s_k, _ = key_shape
    d_v = value_shape[-1]
    _check_heads(h_q, h_kv, "sdpa_flop_count")
    return bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k)) + \
        bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v))


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """Flops of attention's backward: the scores again, and the gradients of
    the two products."""
    b, h_q, s_q, d_q = query_shape
    _, h_kv, s_k, _ = key_shape
    d_v = value_shape[-1]
    _check_heads(h_q, h_kv, "sdpa_backward_flop_count")
    B = b * h_q
    return (bmm_flop((B, s_q, d_q), (B, d_q, s_k)) + bmm_flop((B, s_q, d_v), (B, d_v, s_k))
            + bmm_flop((B, s_k, s_q), (B, s_q, d_v)) + bmm_flop((B, s_q, s_k), (B, s_k, d_q))
            + bmm_flop((B, d_q, s_q), (B, s_q, s_k)))


def _packets(*names):
    """The aten packets of ``names`` that ptcore's op namespace has."""
    return [p for p in (getattr(aten, n, None) for n in names) if p is not None]


_SDPA_FORWARD = _packets("_scaled_dot_product_efficient_attention",
                         "_scaled_dot_product_flash_attention")
_SDPA_BACKWARD = _packets("_scaled_dot_product_efficient_attention_backward",
                          "_scaled_dot_product_flash_attention_backward")


@register_flop_formula(_SDPA_FORWARD)
def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    return sdpa_flop_count(query_shape, key_shape, value_shape)


@register_flop_formula(_SDPA_BACKWARD)
def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args,
                       out_shape=None, **kwargs):
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


# ---------------------------------------------------------------------------
# ptcore's public-level ops as the aten ops torch lowers them to
# ---------------------------------------------------------------------------

def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


# op name -> ``lowered(args, kwargs, out)``: the aten calls torch runs for a
# call of that (composite) op, as (packet, input shapes, output shape) rows,
# counted with their formulas; registered at each rule below
_lowering = Handlers("flop counter")


def _matmul_lowered(a, b):
    """torch's at::matmul: [(packet, args)] of the product it runs (none for
    the dot and matrix-vector products, which torch's counter ignores)."""
    da, db = a.dim(), b.dim()
    if db == 1 and da in (1, 2):
        return []
    if da == 1 and db == 2:
        return [(aten.mm, ((1, a.shape[0]), tuple(b.shape)))]
    if da == 2 and db == 2:
        return [(aten.mm, (tuple(a.shape), tuple(b.shape)))]
    if da >= 3 and db in (1, 2):       # folded into one matrix product
        if db == 1:
            return []
        return [(aten.mm, ((math.prod(a.shape[:-1]), a.shape[-1]), tuple(b.shape)))]
    n = a.shape[-2] if da > 1 else 1
    m = a.shape[-1]
    p = b.shape[-1] if db > 1 else 1
    batch = ptcore.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    B = math.prod(batch)
    return [(aten.bmm, ((B, n, m), (B, m, p)))]


def _linear_lowered(x, out_features, has_bias):
    """torch's linear: one addmm for a 2-d input, or a contiguous 3-d input,
    with a bias; otherwise the matmul of the input and the transposed weight."""
    k = x.shape[-1]
    if has_bias and (x.dim() == 2 or (x.dim() == 3 and x.is_contiguous())):
        return [(aten.addmm, ((out_features,), (math.prod(x.shape[:-1]), k), (k, out_features)))]
    if x.dim() == 1:
        return []
    return [(aten.mm, ((math.prod(x.shape[:-1]), k), (k, out_features)))]


def _einsum_lowered(args, kwargs):
    """torch's einsum contracts operands pairwise, left to right, each pair by
    one bmm over all their labels."""
    eq = args[0]
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else \
        list(args[1:])
    if not isinstance(eq, str) or len(ops) < 2:
        return []
    lhs, _, out = eq.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if "..." in eq or len(terms) != len(ops):
        return []
    if not _:
        out = "".join(sorted(c for c in set(lhs) - {","} if lhs.count(c) == 1))
    sizes = {}
    for term, op in zip(terms, ops):
        sizes.update(zip(term, op.shape))
    res = []
    left = terms[0]
    for k, right in enumerate(terms[1:], 1):
        later = set("".join(terms[k + 1:])) | set(out)
        # labels only one side has and nobody needs later are summed out first
        lset = {c for c in left if c in right or c in later}
        rset = {c for c in right if c in left or c in later}
        batch = [c for c in lset & rset if c in later]
        contracted = [c for c in lset & rset if c not in later]
        lonly = [c for c in lset - rset]
        ronly = [c for c in rset - lset]
        if contracted or batch:
            B = math.prod(sizes[c] for c in batch)
            m = math.prod(sizes[c] for c in lonly)
            kk = math.prod(sizes[c] for c in contracted)
            n = math.prod(sizes[c] for c in ronly)
            res.append((aten.bmm, ((B, m, kk), (B, kk, n))))
        left = "".join(sorted(lset | rset - set(contracted)))
    return res


def _conv_lowered(transposed):
    def lowered(args, kwargs, out):
        x, w = _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "weight")
        if x.dim() == w.dim() - 1:         # unbatched input
            x_shape, out_shape = (1,) + tuple(x.shape), (1,) + tuple(out.shape)
        else:
            x_shape, out_shape = tuple(x.shape), tuple(out.shape)
        w_shape = tuple(w.shape)          # transposed: (c_in, c_out/groups, k...) as torch's
        return [(aten.convolution, (x_shape, w_shape, None, None, None, None, transposed),
                 out_shape)]
    return lowered


@_lowering("linear")
def _linear_call(args, kwargs, out):
    return _linear_lowered(_arg(args, kwargs, 0, "input"),
                           _arg(args, kwargs, 1, "weight").shape[0],
                           _arg(args, kwargs, 2, "bias") is not None)


@_lowering("matmul")
def _matmul_call(args, kwargs, out):
    return _matmul_lowered(_arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "other"))


@_lowering("einsum")
def _einsum_call(args, kwargs, out):
    return _einsum_lowered(args, kwargs)


_lowering("conv1d", "conv2d", "conv3d")(_conv_lowered(False))
_lowering("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")(_conv_lowered(True))


@_lowering("scaled_dot_product_attention")
def _sdpa_lowered(args, kwargs, out):
    q, k, v = (_arg(args, kwargs, i, n) for i, n in enumerate(("query", "key", "value")))
    if q.device.type == "cpu" or q.dim() != 4:
        return []          # torch's CPU kernel (flash attention for CPU) is not counted
    if len(_SDPA_FORWARD) < 2:
        return []
    packet = _SDPA_FORWARD[1] if q.dtype in (ptcore.float16, ptcore.bfloat16) else \
        _SDPA_FORWARD[0]
    return [(packet, (tuple(q.shape), tuple(k.shape), tuple(v.shape)), tuple(out.shape))]


_MHA_ARGS = ("query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight",
             "in_proj_bias", "bias_k", "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight",
             "out_proj_bias", "training", "key_padding_mask", "need_weights", "attn_mask",
             "use_separate_proj_weight")


@_lowering("multi_head_attention_forward")
def _mha_lowered(args, kwargs, out):
    """F.multi_head_attention_forward as torch runs it: the input projections
    (one linear for self-attention, two when key is value, else three), the
    attention products (bmm, or baddbmm with a mask; torch's CPU attention
    kernel, used when no weights are returned, is not counted) and the output
    projection."""
    a = {n: _arg(args, kwargs, i, n) for i, n in enumerate(_MHA_ARGS)}
    q, k, v, E, heads = a["query"], a["key"], a["value"], a["embed_dim_to_check"], a["num_heads"]
    has_bias = a["in_proj_bias"] is not None
    if a["use_separate_proj_weight"]:
        proj = [(q, E), (k, E), (v, E)]
    elif k is v:
        proj = [(q, 3 * E)] if q is k else [(q, E), (k, 2 * E)]
    else:
        proj = [(q, E), (k, E), (v, E)]
    res = []
    for x, width in proj:
        res += _linear_lowered(x, width, has_bias)
    tgt = q.shape[0]
    bsz = q.shape[1] if q.dim() == 3 else 1
    src = k.shape[0] + (a["bias_k"] is not None) + bool(a["add_zero_attn"])
    hd, B = E // heads, bsz * heads
    need_weights = True if a["need_weights"] is None else a["need_weights"]
    if need_weights:
        masked = a["attn_mask"] is not None or a["key_padding_mask"] is not None
        res.append((aten.baddbmm, ((B, tgt, src), (B, tgt, hd), (B, hd, src))) if masked else
                   (aten.bmm, ((B, tgt, hd), (B, hd, src))))
        res.append((aten.bmm, ((B, tgt, src), (B, src, hd))))
    res += _linear_lowered(_Shape((tgt * bsz, E)), E, a["out_proj_bias"] is not None)
    return res


class _Shape:
    """A contiguous tensor's shape, where the lowering rules look at one."""

    def __init__(self, shape):
        self.shape = shape

    def dim(self):
        return len(self.shape)

    def is_contiguous(self):
        return True


_BACKWARD_OF = {aten.convolution: aten.convolution_backward,
                **dict(zip(_SDPA_FORWARD, _SDPA_BACKWARD))}


def get_suffix_str(number):
    """The unit suffix torch's table uses for ``number`` (1001M, not 1.001B)."""
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom):
    if denom == 0:
        return "0%"
    return f"{num / denom:.2%}"


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _format_table(rows, header):
    """``rows`` laid out as torch's table (``tabulate``'s simple format: cells
    stripped, a column of numbers printed with ``g``, the first column
    left-aligned and the others right-aligned, each at least its header's
    width plus 2, a dashed rule under the header)."""
    cols = [[str(c).strip() for c in col] for col in zip(*rows)]
    for k in range(1, len(cols)):
        if all(_is_number(c) for c in cols[k]):
            cols[k] = [format(float(c), "g") for c in cols[k]]
    widths = [max(len(h) + 2, *(len(c) for c in col)) for h, col in zip(header, cols)]

    def line(cells):
        return "  ".join([cells[0].ljust(widths[0])] +
                         [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] +
                     [line(r) for r in zip(*cols)])


class FlopCounterMode:
    """Context manager counting the flops run inside it, per module.

    Parameters
    ----------
    mods : ignored
        Deprecated (modules are tracked as they run), as torch's.
    depth : int
        Module nesting depth of the table printed on exit.
    display : bool
        Print the table on exit.
    custom_mapping : dict, optional
        ``{op packet: formula}`` added to (or overriding) the registry.

    Examples
    --------
    >>> m = ptcore.nn.Linear(8, 4)
    >>> with FlopCounterMode(display=False) as fc:
    ...     m(ptcore.randn(2, 8)).sum().backward()
    >>> fc.get_total_flops()       # addmm 128, and 128 for the weight's gradient
    256
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        self.flop_registry = {**flop_registry,
                              **{k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
                                 for k, v in (custom_mapping or {}).items()}}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """``{module name: {op packet: flops}}``, with ``"Global"`` for everything."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        if depth is None:
            depth = self.depth
        if depth is None:
            depth = 999999
        header = ["Module", "FLOP", "% Total"]
        values = []
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        is_global_subsumed = False

        def process_mod(mod_name, depth):
            nonlocal is_global_subsumed
            total = sum(self.flop_counts[mod_name].values())
            is_global_subsumed |= total >= global_flops
            padding = " " * depth
            rows = [[padding + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([padding + " - " + str(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        for mod in sorted(self.flop_counts.keys()):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth > depth:
                continue
            values.extend(process_mod(mod, mod_depth - 1))
        if "Global" in self.flop_counts and not is_global_subsumed:
            for value in values:
                value[0] = " " + value[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _format_table(values, header)

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        b = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return b

    def _add(self, packet, flops):
        for par in set(self.mod_tracker.parents):
            self.flop_counts[par][packet] += flops

    def _count_flops(self, func_packet, out, args, kwargs):
        if func_packet in self.flop_registry:
            self._add(func_packet, self.flop_registry[func_packet](*args, **kwargs, out_val=out))
            return
        lowered = _lowering.get(getattr(func_packet, "__name__", None))
        if lowered is None:
            return
        for entry in lowered(args, kwargs, out):
            packet, shapes = entry[0], entry[1]
            formula = self.flop_registry.get(packet)
            if formula is None:
                continue
            out_shape = entry[2] if len(entry) > 2 else None
            self._add(packet, formula(*shapes, out_val=out_shape))
            back = _BACKWARD_OF.get(packet)
            if back is not None and back in self.flop_registry:
                self._count_backward_later(back, packet, shapes, out_shape, args, kwargs, out)

    def _count_backward_later(self, back, packet, shapes, out_shape, args, kwargs, out):
        """Count the fused backward kernel torch runs (convolution_backward,
        the attention backward) when the backward pass reaches this op."""
        if not (isinstance(out, ptcore.Tensor) and out.grad_fn is not None):
            return
        tensors = [a for a in args if isinstance(a, ptcore.Tensor)]
        formula = self.flop_registry[back]
        if packet is aten.convolution:
            x, w = tensors[0], tensors[1]
            mask = [x.requires_grad, w.requires_grad, False]
            x_shape, w_shape = shapes[0], shapes[1]
            bargs = (out_shape, x_shape, w_shape, None, None, None, None, shapes[6], None, None,
                     mask)
            bout = (x_shape, tuple(w.shape), None)
        else:
            bargs = (tuple(out.shape),) + tuple(shapes[:3])
            bout = None
        counter = self

        def pre_hook(grad_outputs):
            if counter.mode is not None:
                counter._add(back, formula(*bargs, out_val=bout))
        out.grad_fn.register_prehook(pre_hook)


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter):
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        out = func(*args, **kwargs)
        self.counter._count_flops(func.overloadpacket, out, args, kwargs)
        return out
