"""ONNX converters of nn layers' functionals: ``F.pad`` (Pad: constant, reflect,
replicate), adaptive average / max pooling to sizes that divide the input (a pooling
with kernel = stride = input // output, as torch's exporter writes them) and ``prelu``
(PRelu)."""
import numpy as np

from ptcore.onnx._more_ops import CONVERTERS as _MORE, _shape
from ptcore.onnx._norm_ops import _bound, _F
from ptcore.onnx._shapes import ints as _ints, init as _init
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = ["CONVERTERS"]

_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


def _pad(b, node):
    a = _bound(node, _F().pad)
    x, mode = a["input"], a["mode"]
    if mode not in _MODES:
        raise UnsupportedOperatorError(f"pad(mode={mode!r})")
    if b.opset < 11:
        raise UnsupportedOperatorError("pad needs opset 11 or later (pads as an input)")
    rank = len(_shape(b, x))
    p = [int(v) for v in a["pad"]]
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(p) // 2):       # torch: (last dim's left, right, the one before's ...)
        begins[rank - 1 - i], ends[rank - 1 - i] = p[2 * i], p[2 * i + 1]
    ins = [b.name(x), _ints(b, begins + ends)]
    if mode == "constant":
        value = a["value"] if a["value"] is not None else 0.0
        ins.append(_init(b, np.array(value), b.dtype_of(x)))
    return b.add("Pad", ins, mode=_MODES[mode])


def _adaptive(kind, nd):
    def convert(b, node):
        a = _bound(node, getattr(_F(), f"adaptive_{kind}_pool{nd}d"))
        if kind == "max" and a.get("return_indices"):
            raise UnsupportedOperatorError("adaptive_max_pool with return_indices=True")
        x = a["input"]
        sp = _shape(b, x)[-nd:]
        out = a["output_size"]
        out = [out] * nd if isinstance(out, int) else list(out)
        out = [s if o is None else int(o) for o, s in zip(out, sp)]
        if any(o <= 0 or s % o for o, s in zip(out, sp)):
            raise UnsupportedOperatorError(f"adaptive_{kind}_pool{nd}d to {out} from {sp} "
                                           "(only sizes that divide the input)")
        if all(o == 1 for o in out):
            return b.add("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", [b.name(x)])
        k = [s // o for s, o in zip(sp, out)]
        return b.add("AveragePool" if kind == "avg" else "MaxPool", [b.name(x)], kernel_shape=k,
                     strides=k, pads=[0] * (2 * nd))
    return convert


def _prelu(b, node):
    a = _bound(node, _F().prelu)
    x, w = a["input"], a["weight"]
    rank = len(_shape(b, x))
    n = int(np.prod(_shape(b, w)))
    slope = b.name(w)
    if n > 1 and rank >= 2:             # one slope per channel (dim 1): broadcast from there
        slope = b.add("Reshape", [slope, _ints(b, [n] + [1] * (rank - 2))])
    return b.add("PRelu", [b.name(x), slope])


CONVERTERS = {("nn.functional", "pad"): _pad, ("nn.functional", "prelu"): _prelu}
for _nd in (1, 2, 3):
    for _kind in ("avg", "max"):
        CONVERTERS[("nn.functional", f"adaptive_{_kind}_pool{_nd}d")] = _adaptive(_kind, _nd)
_MORE.update(CONVERTERS)        # (the export looks its converters up there)
