"""torch's root (ATen-level) forms of nn functions: the recurrent cells
``ptcore.rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell`` (one step on a 2-D
batch, the weights given explicitly; the computation of :class:`ptcore.nn.RNNCell` & co.)
the whole-sequence recurrences ``ptcore.lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu`` (flat
weight lists, padded or packed input: what :class:`ptcore.nn.LSTM` & co. compute), and
``ptcore.embedding_bag`` (returning torch's bookkeeping tensors too)."""
import builtins
import math

import ptcore
from ptcore.tensor import Tensor
from ptcore.nn.functional._rnn import _cell_forward, rnn_forward
from ptcore.nn.functional._embedding_bag import embedding_bag as _embedding_bag
from ptcore._dispatch.generate import bind_functions as _bind_functions

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "embedding_bag", "lstm",
           "gru", "rnn_tanh", "rnn_relu"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check(mode, input, hidden, w_ih, w_hh, b_ih, b_hh):
    for name, t in (("input", input), ("hx", hidden[0]), ("w_ih", w_ih), ("w_hh", w_hh)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{mode.lower()}_cell(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    for t in hidden:
        if t.dim() != 2:
            raise RuntimeError(f"{mode.lower()}_cell: expected 2-D hidden state(s), got "
                               f"shape {list(t.shape)}")
    if input.dim() != 2 or w_ih.dim() != 2 or w_hh.dim() != 2:
        raise RuntimeError(f"{mode.lower()}_cell: expected 2-D input and weights, got input "
                           f"{list(input.shape)}, w_ih {list(w_ih.shape)}, w_hh {list(w_hh.shape)}")
    hidden_size, gates = w_hh.size(1), _GATES[mode]
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")
    for k, h in enumerate(hidden):
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch "
                               f"size {h.size(0)}")
        if h.size(1) != hidden_size:
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, "
                               f"expected {hidden_size}")
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.size(0) != gates * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden_size}, but got {w.size(0)}")
    for name, b in (("bias_ih", b_ih), ("bias_hh", b_hh)):
        if b is not None and tuple(b.shape) != (gates * hidden_size,):
            raise RuntimeError(f"{mode.lower()}_cell: {name} must have shape "
                               f"[{gates * hidden_size}], got {list(b.shape)}")


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)`` (``torch.rnn_tanh_cell``)."""
    _check("RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)
    return _cell_forward("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)`` (``torch.rnn_relu_cell``)."""
    _check("RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)
    return _cell_forward("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step (``torch.lstm_cell``): ``hx`` is ``(h, c)``; returns ``(h', c')``."""
    if not isinstance(hx, (tuple, list)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                        f"{type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check("LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)
    return tuple(_cell_forward("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh))


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (``torch.gru_cell``); returns ``h'``."""
    _check("GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)
    return _cell_forward("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)


# -- embedding_bag (ATen form) -----------------------------------------------------------------

_EB_MODES = {0: "sum", 1: "mean", 2: "max"}


def _bags(indices, offsets):
    """The bag of each index and the number of bags."""
    idx = indices.reshape(-1)
    if indices.dim() == 2:
        nbags, size = indices.shape[0], indices.shape[1]
        return ptcore.arange(nbags, device=idx.device).repeat_interleave(size), nbags
    starts = offsets.to(ptcore.int64)
    bag = ptcore.searchsorted(starts, ptcore.arange(idx.numel(), device=idx.device), right=True)
    return (bag - 1).clamp_min(0), starts.numel()


def _max_rows(weight, idx, bag, nbags):
    """For each bag and column, the row of ``weight`` holding the bag's maximum."""
    d = weight.shape[1]
    rows = weight.detach()[idx]
    src_bag = bag.reshape(-1, 1).expand(-1, d)
    best = ptcore.full((nbags, d), -math.inf, dtype=weight.dtype, device=weight.device)
    best = best.scatter_reduce(0, src_bag, rows, "amax", include_self=True)
    hit = rows == best[bag]
    # the first index reaching the maximum: the smallest position among the hits
    pos = ptcore.arange(idx.numel(), device=idx.device).reshape(-1, 1).expand(-1, d)
    pos = ptcore.where(hit, pos, ptcore.full_like(pos, idx.numel()))
    first = ptcore.full((nbags, d), idx.numel(), dtype=ptcore.int64, device=weight.device)
    first = first.scatter_reduce(0, src_bag, pos, "amin", include_self=True)
    found = first < idx.numel()
    return ptcore.where(found, idx[first.clamp_max(builtins.max(idx.numel() - 1, 0))],
                        ptcore.zeros_like(first))


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``torch.embedding_bag``: :func:`ptcore.nn.functional.embedding_bag` with the ATen
    signature (``mode`` 0 sum, 1 mean, 2 max) returning ``(output, offset2bag, bag_size,
    max_indices)``: the bag of each index, the number of (non-padding) indices per bag, and
    for ``mode=2`` the row of ``weight`` each maximum came from (as torch's CPU kernel:
    ``bag_size`` again for mean, zeros for sum, where ``offset2bag`` is empty)."""
    for pos, (name, t) in enumerate((("weight", weight), ("indices", indices),
                                     ("offsets", offsets)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"embedding_bag(): argument '{name}' (position {pos}) must be "
                            f"Tensor, not {type(t).__name__}")
    if mode not in _EB_MODES:
        raise ValueError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    output = _embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                            _EB_MODES[mode], sparse, per_sample_weights, include_last_offset,
                            padding_idx)
    idx = indices.reshape(-1)
    bag, nbags = _bags(indices, offsets)
    keep = None
    if padding_idx is not None:
        keep = idx != (padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx)
    kept_bag = bag if keep is None else bag[keep]
    bag_size = ptcore.bincount(kept_bag, minlength=nbags)[:nbags]
    offset2bag = bag
    if mode == 0:
        if padding_idx is None:
            offset2bag = ptcore.empty(0, dtype=ptcore.int64, device=idx.device)
        bag_size = ptcore.zeros_like(bag_size)
        max_indices = ptcore.zeros_like(bag_size)
    elif mode == 1:
        max_indices = bag_size.clone()
    else:
        kept_idx = idx if keep is None else idx[keep]
        max_indices = _max_rows(weight, kept_idx, kept_bag, nbags)
    return output, offset2bag, bag_size, max_indices


# -- whole-sequence recurrences (ATen forms) ----------------------------------------------------

def _recurrence(mode, args, kwargs):
    """``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` or, for packed data, ``(data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional)``."""
    name = mode.lower()
    if kwargs:
        raise TypeError(f"{name}() takes positional arguments only, got {sorted(kwargs)}")
    packed = len(args) == 9 and isinstance(args[1], Tensor) and args[1].dim() == 1 and \
        not args[1].is_floating_point()
    if packed:
        data, batch_sizes_t, hx, params, has_biases, num_layers, dropout, train, bidir = args
        batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
        batch_first = False
    else:
        if len(args) != 9:
            raise TypeError(f"{name}() expects (input, hx, params, has_biases, num_layers, "
                            f"dropout, train, bidirectional, batch_first), got {len(args)} "
                            f"arguments")
        input, hx, params, has_biases, num_layers, dropout, train, bidir, batch_first = args
        if input.dim() != 3:
            raise RuntimeError(f"{name}: input must have 3 dimensions, got {input.dim()}")
        x = input.transpose(0, 1) if batch_first else input
        T, B = x.shape[0], x.shape[1]
        data = x.reshape(T * B, x.shape[2])
        batch_sizes = [B] * T
    if mode == "LSTM":
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    dirs = 2 if bidir else 1
    params = list(params)
    groups = num_layers * dirs
    if groups == 0 or len(params) % groups:
        raise RuntimeError(f"{name}: got {len(params)} parameters for {num_layers} layers and "
                           f"{dirs} directions")
    per = len(params) // groups
    weights = [params[i * per:(i + 1) * per] for i in range(groups)]
    proj_size = 0
    if per == (5 if has_biases else 3):
        proj_size = weights[0][-1].shape[0]
    if not batch_sizes:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    out, h_n, c_n = rnn_forward(mode, data, batch_sizes, h0, c0, weights, num_layers, bidir,
                                dropout, train, has_biases, proj_size)
    if not packed:
        out = out.reshape(len(batch_sizes), batch_sizes[0], out.shape[-1])
        if batch_first:
            out = out.transpose(0, 1)
    return (out, h_n, c_n) if mode == "LSTM" else (out, h_n)


def lstm(*args, **kwargs):
    """``torch.lstm``: a multi-layer LSTM over a sequence with a flat weight list (per layer
    and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``); returns ``(output, h_n, c_n)``."""
    return _recurrence("LSTM", args, kwargs)


def gru(*args, **kwargs):
    """``torch.gru``: a multi-layer GRU over a sequence; returns ``(output, h_n)``."""
    return _recurrence("GRU", args, kwargs)


def rnn_tanh(*args, **kwargs):
    """``torch.rnn_tanh``: a multi-layer tanh RNN over a sequence; returns ``(output, h_n)``."""
    return _recurrence("RNN_TANH", args, kwargs)


def rnn_relu(*args, **kwargs):
    """``torch.rnn_relu``: a multi-layer ReLU RNN over a sequence; returns ``(output, h_n)``."""
    return _recurrence("RNN_RELU", args, kwargs)


# the whole-sequence recurrences are entries of the dispatch point (ops, as torch's
# ``aten::lstm`` & co.): a trace records each call as one node (nn.LSTM & co. run
# through them under ``jit.trace``), ``__torch_function__`` and the profiler see them
_bind_functions(globals(), ["lstm", "gru", "rnn_tanh", "rnn_relu"], "nn")
del _bind_functions
