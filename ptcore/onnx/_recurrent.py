"""ONNX ``LSTM`` / ``GRU`` / ``RNN`` for ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN``.

The export traces these modules as leaves (``ptcore.jit.trace(...,
_leaves=LEAVES)``): each call is one node ``("nn.modules", "LSTM")`` whose
args are the input, the initial state (None, a tensor, or ``(h0, c0)``) and
the module's weights, and whose kwargs are its configuration.  It becomes
one ONNX recurrent node per layer, as ``torch.onnx.export`` writes it, so
that the sequence length and the batch stay dynamic.

ONNX orders the gate blocks LSTM ``i o f c`` and GRU ``z r h`` where torch
has ``i f g o`` and ``r z n``: the weights are reordered in NumPy at export
time (initializers ``W`` [dirs, gates*hidden, input], ``R`` [dirs,
gates*hidden, hidden], ``B`` [dirs, 2*gates*hidden] = input and hidden
biases).  GRU needs ``linear_before_reset=1`` for torch's formula."""
import numpy as np

import ptcore.nn as nn
from ptcore.jit._ir import decode
import ptcore.onnx._proto as P
from ptcore.onnx.errors import UnsupportedOperatorError
from ptcore.onnx._registration import register

__all__ = ["LEAVES"]

# the module types an export records as one node each
LEAVES = (nn.LSTM, nn.GRU, nn.RNN)

# torch's gate blocks in ONNX's order
_GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}
_ONNX_OP = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}
_FLOATS = ("float32", "float64", "float16")


def _is_value(enc):
    return type(enc) is dict and "v" in enc


def _ints(b, values):
    return b.const(np.array(list(values), dtype=np.int64), "int64")


def _weights(b, node, names):
    """name -> NumPy array of the module's weights (the export's parameter
    values, or the trace's constants)."""
    encs = node.args[-1].get("list", node.args[-1].get("tuple"))
    params = getattr(b, "params", None) or {}
    out = {}
    for name, enc in zip(names, encs):
        v = b.g.values[enc["v"]] if _is_value(enc) else None
        t = params.get(v.name) if v is not None and v.kind == "param" else \
            v.const if v is not None and v.kind == "const" else None
        if t is None:
            raise UnsupportedOperatorError(
                f"{node.op[0]}::{node.op[1]}: the weight {name} is computed by the model "
                "(ONNX's recurrent ops take the weights as initializers)")
        out[name] = t.detach().cpu().numpy()
    return out


def _strings_attr(name, values):
    """An AttributeProto of a list of strings (``_proto.attr`` writes numbers)."""
    return P._len(5, P._str(1, name) + b"".join(P._str(9, v) for v in values) +
                  P._int(20, 8))


def _gates(w, order, hidden):
    return np.concatenate([w[i * hidden:(i + 1) * hidden] for i in order], axis=0)


def _layer_weights(w, layer, dirs, mode, hidden, bias):
    """The W, R and B (None without bias) arrays of ``layer``, in ONNX's layout."""
    order = _GATES[mode]
    W, R, B = [], [], []
    for d in range(dirs):
        sfx = f"l{layer}" + ("_reverse" if d else "")
        W.append(_gates(w[f"weight_ih_{sfx}"], order, hidden))
        R.append(_gates(w[f"weight_hh_{sfx}"], order, hidden))
        if bias:
            B.append(np.concatenate([_gates(w[f"bias_ih_{sfx}"], order, hidden),
                                     _gates(w[f"bias_hh_{sfx}"], order, hidden)]))
    return np.stack(W), np.stack(R), (np.stack(B) if bias else None)


def _recurrent(b, node):
    cfg = {k: decode(v, {}) for k, v in node.kwargs.items()}
    what = f"nn.{node.op[1]}"
    mode, hidden = cfg["mode"], int(cfg["hidden_size"])
    layers, dirs = int(cfg["num_layers"]), 2 if cfg["bidirectional"] else 1
    if cfg.get("proj_size", 0):
        raise UnsupportedOperatorError(f"{what} with proj_size > 0 (ONNX's LSTM has no "
                                       "projection)")
    if cfg["training"] and cfg.get("dropout", 0.0) > 0 and layers > 1:
        raise UnsupportedOperatorError(f"{what} with dropout in training mode (export in "
                                       "eval mode)")
    x, hx = node.args[0], node.args[1]
    if not _is_value(x):
        raise UnsupportedOperatorError(f"{what} with a PackedSequence input (ONNX's "
                                       f"{_ONNX_OP[mode]} takes a padded tensor)")
    dtype = b.dtype_of(x)
    if dtype not in _FLOATS:
        raise UnsupportedOperatorError(f"{what} on {dtype} tensors")
    is_lstm = mode == "LSTM"
    if hx is None:
        states = [None, None] if is_lstm else [None]
    else:
        states = list(hx.get("tuple", hx.get("list", []))) if is_lstm else [hx]
        if not all(_is_value(s) for s in states):
            raise UnsupportedOperatorError(f"{what} with an initial state that is not a "
                                           "tensor")
    # the initializers of each layer, once per module (a decoder may call it every step)
    cache = b.__dict__.setdefault("_recurrent_weights", {})
    key = (repr(node.args[-1]), mode, dtype)
    if key not in cache:
        w = _weights(b, node, decode(node.kwargs["weight_names"], {}))
        cache[key] = []
        for layer in range(layers):
            W, R, B = _layer_weights(w, layer, dirs, mode, hidden, cfg["bias"])
            cache[key].append([b.const(W, dtype), b.const(R, dtype),
                               "" if B is None else b.const(B, dtype)])
    unbatched = len(b.g.values[x["v"]].shape) == 2
    y = b.name(x)
    # to time-major [seq, batch, input]
    if unbatched:
        y = b.add("Unsqueeze", [y, _ints(b, [1])])
    elif cfg["batch_first"]:
        y = b.add("Transpose", [y], perm=[1, 0, 2])
    states = [None if s is None else
              b.add("Unsqueeze", [b.name(s), _ints(b, [1])]) if unbatched else b.name(s)
              for s in states]
    attrs = dict(hidden_size=hidden, direction="bidirectional" if dirs == 2 else "forward")
    if mode == "GRU":
        attrs["linear_before_reset"] = 1
    # (RNN: Tanh is ONNX's default activation)
    activations = _strings_attr("activations", ["Relu"] * dirs) if mode == "RNN_RELU" else b""
    finals = [[] for _ in states]          # per state: each layer's [dirs, batch, hidden]
    for layer in range(layers):
        ins = [y, *cache[key][layer], ""]
        for s in states:
            ins.append("" if s is None else s if layers == 1 else
                       b.add("Slice", [s, _ints(b, [layer * dirs]),
                                       _ints(b, [(layer + 1) * dirs]), _ints(b, [0])]))
        while ins[-1] == "":
            ins.pop()
        outs = [b.fresh(_ONNX_OP[mode].lower()) for _ in range(1 + len(states))]
        b.add(_ONNX_OP[mode], ins, outs, **attrs)
        b.nodes[-1] += activations          # (a NodeProto's fields in any order)
        for f, o in zip(finals, outs[1:]):
            f.append(o)
        # Y [seq, dirs, batch, hidden] -> [seq, batch, dirs * hidden]
        if dirs == 1:
            y = b.add("Squeeze", [outs[0], _ints(b, [1])])
        else:
            y = b.add("Reshape", [b.add("Transpose", [outs[0]], perm=[0, 2, 1, 3]),
                                  _ints(b, [0, 0, -1])])
    finals = [f[0] if len(f) == 1 else b.add("Concat", f, axis=0) for f in finals]
    if unbatched:
        y = b.add("Squeeze", [y, _ints(b, [1])])
        finals = [b.add("Squeeze", [f, _ints(b, [1])]) for f in finals]
    elif cfg["batch_first"]:
        y = b.add("Transpose", [y], perm=[1, 0, 2])
    return [y] + finals


register(_recurrent, *("nn.modules." + t.__name__ for t in LEAVES))
