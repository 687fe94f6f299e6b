"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step cells."""
import builtins
import math
import numbers
import warnings
import weakref

import ptcore
import ptcore.nn.init as init
from ptcore._dispatch import autocast as _ac
from ptcore._dispatch import tracing as _tracing
import ptcore.nn.functional._rnn as _R
from ptcore.nn.modules.module import Module
from ptcore.nn.parameter import Parameter
from ptcore.nn.utils.rnn import PackedSequence
from ptcore.autograd._record import name_grad_fn as _name_grad_fn

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def apply_permutation(tensor, permutation, dim=1):
    """``tensor.index_select(dim, permutation)`` (torch's deprecated helper)."""
    warnings.warn("`apply_permutation` is deprecated, please use "
                  "`tensor.index_select(dim, permutation)` instead", FutureWarning, stacklevel=2)
    return _apply_permutation(tensor, permutation, dim)



def _name_output(output, mode, bidirectional, proj_size, data):
    """The (T, B, H) output with the grad_fn torch's CPU kernels give it: the stack
    of the steps, the concatenation of two directions, the fused LSTM layer's."""
    if bidirectional:
        name = "CatBackward0"
    elif mode == "LSTM" and proj_size == 0:
        name = "MkldnnRnnLayerBackward0"
    else:
        name = "StackBackward0"
    return _name_grad_fn(output, name, data)

class RNNBase(Module):
    r"""Base class of :class:`RNN`, :class:`LSTM` and :class:`GRU`.

    Registers, per layer ``k`` and direction, ``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (and
    ``weight_hr_l{k}`` for a projected LSTM), with a ``_reverse`` suffix for
    the backward direction, in PyTorch's order, so a torch ``state_dict``
    loads unchanged.
    """

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias",
                     "batch_first", "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, builtins.bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = builtins.float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, builtins.bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, builtins.bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        # as torch, a bool passes for an int (LSTM(3, True) has hidden size 1)
        if not isinstance(input_size, builtins.int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, builtins.int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if not isinstance(num_layers, builtins.int):
            raise TypeError(f"num_layers should be of type int, got: "
                            f"{type(num_layers).__name__}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        # the attributes keep what was passed (torch's repr shows LSTM(3, True)); the
        # weights' shapes take ints
        input_size, hidden_size = builtins.int(input_size), builtins.int(hidden_size)

        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(ptcore.empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(ptcore.empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(ptcore.empty(gate_size, **factory_kwargs))
                b_hh = Parameter(ptcore.empty(gate_size, **factory_kwargs))
                if proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(ptcore.empty((proj_size, hidden_size), **factory_kwargs))
                    layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr) if bias else (w_ih, w_hh, w_hr)
                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)
        self._init_flat_weights()
        self.reset_parameters()

    # torch's flat weight list, kept as it keeps it: an instance attribute that
    # __setattr__ updates, re-read from the attributes when one was replaced
    # (a weight-drop wrapper's setattr, a parametrization); subclasses read it,
    # assign it (recurrent dropout swaps in dropped weights around forward) and
    # call _update_flat_weights as torch's forward does
    def __setattr__(self, attr, value):
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None
                              for wn in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                  for w in self._flat_weights]
        self.flatten_parameters()

    def _weights_have_changed(self):
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def _update_flat_weights(self):
        if self._weights_have_changed():
            self._init_flat_weights()

    def _apply(self, fn, recurse=True):
        self._flat_weight_refs = []
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def __getstate__(self):
        self._update_flat_weights()
        state = super().__getstate__()
        state.pop("_flat_weight_refs", None)   # weak references do not pickle
        return state

    def __setstate__(self, d):
        super().__setstate__(d)
        if "proj_size" not in d:
            self.proj_size = 0
        self._init_flat_weights()

    def flatten_parameters(self):
        """No-op (there is no cuDNN weight buffer to compact)."""

    def reset_parameters(self):
        """Draw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        """Parameters grouped per layer and direction."""
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- argument checks (PyTorch's messages) -------------------------------
    def check_input(self, input, batch_sizes):
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype and not ptcore.is_autocast_enabled("cpu") \
                and not ptcore.is_autocast_enabled("cuda"):
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                f"Convert input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = builtins.int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, h)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.size())))

    def _weights_and_sizes(self):
        num_dirs = 2 if self.bidirectional else 1
        per = len(self._flat_weights_names) // (self.num_layers * num_dirs)
        flat = self._flat_weights
        return [flat[i * per:(i + 1) * per] for i in range(self.num_layers * num_dirs)]

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        expected_hidden_size = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden, expected_hidden_size)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    # -- the shared forward -------------------------------------------------
    def _prepare(self, input, hx, is_lstm):
        """Normalise the input to packed time-major data; returns a context tuple."""
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        num_directions = 2 if self.bidirectional else 1
        real_hidden = builtins.int(self.proj_size if self.proj_size > 0 else self.hidden_size)
        if isinstance(input, PackedSequence):
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [builtins.int(b) for b in batch_sizes_t.tolist()]
            max_batch_size = batch_sizes[0]
            packed, is_batched, batch_dim = True, True, 1
            if hx is not None:
                if is_lstm:
                    hx = (self.permute_hidden(hx[0], sorted_indices),
                          self.permute_hidden(hx[1], sorted_indices))
                else:
                    hx = self.permute_hidden(hx, sorted_indices)
        else:
            if not isinstance(input, ptcore.Tensor):
                raise TypeError(f"{name}: expected a Tensor or PackedSequence input, got "
                                f"{type(input).__name__}")
            packed = False
            batch_sizes = None
            sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 "instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                if is_lstm:
                    # torch indexes hx[0], hx[1] whatever hx is (a lone (2, B, H) tensor
                    # gives two 2-D "states": the dimension error below)
                    d = 3 if is_batched else 2
                    if hx[0].dim() != d or hx[1].dim() != d:
                        kind = "batched 3-D" if is_batched else "unbatched 2-D"
                        raise RuntimeError(
                            f"For {kind} input, hx and cx should also be {d}-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    if not is_batched:
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                else:
                    if is_batched and hx.dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but "
                                           f"got {hx.dim()}-D tensor")
                    if not is_batched and hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {hx.dim()}-D tensor")
                    if not is_batched:
                        hx = hx.unsqueeze(1)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            data = input
        if hx is None:
            h0 = ptcore.zeros(self.num_layers * num_directions, max_batch_size, real_hidden,
                              dtype=data.dtype, device=data.device)
            if is_lstm:
                c0 = ptcore.zeros(self.num_layers * num_directions, max_batch_size,
                                  builtins.int(self.hidden_size), dtype=data.dtype,
                                  device=data.device)
                hx = (h0, c0)
            else:
                hx = h0
        # checks
        self.check_input(data, batch_sizes)
        expected = self.get_expected_hidden_size(data, batch_sizes)
        if is_lstm:
            self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
            cell_expected = (expected[0], expected[1], self.hidden_size)
            self.check_hidden_size(hx[1], cell_expected, "Expected hidden[1] size {}, got {}")
            if not isinstance(hx, (tuple, list)):
                raise TypeError(f"lstm(): argument 'hx' must be tuple of Tensors, not "
                                f"{type(hx).__name__}")
            if len(hx) != 2:
                raise RuntimeError("lstm expects two hidden states")
        else:
            self.check_hidden_size(hx, expected)
        # under CPU autocast the states are cast with the input (torch's autocast
        # casts them for its oneDNN LSTM layers and for the GRU's and RNN's linear
        # ops): a bfloat16 state carried over from the previous step meets a
        # float32 input
        plan = _R.autocast_plan(self.mode, data, tuple(hx) if is_lstm else (hx,),
                                self._flat_weights, packed, self.proj_size > 0)
        if plan is None:
            for t in (hx if is_lstm else (hx,)):
                if t.dtype != data.dtype:
                    raise RuntimeError(f"Expected {'hx and cx' if is_lstm else 'hx'} of dtype "
                                       f"{data.dtype}, got {t.dtype}")
        # to time-major packed layout
        if not packed:
            if self.batch_first:
                data = data.transpose(0, 1)
            T, B = data.size(0), data.size(1)
            batch_sizes = [B] * T
            data = data.reshape(T * B, data.size(2))
        return (data, batch_sizes, hx, packed, is_batched, batch_dim, sorted_indices,
                unsorted_indices, plan)

    def _run(self, input, hx):
        self._update_flat_weights()
        is_lstm = self.mode == "LSTM"
        (data, batch_sizes, hx, packed, is_batched, batch_dim, sorted_indices,
         unsorted_indices, low) = self._prepare(input, hx, is_lstm)
        h0, c0 = (hx[0], hx[1]) if is_lstm else (hx, None)
        if len(batch_sizes) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if not packed and _tracing.active_tracer() is not None:
            return self._run_traced(input, data, hx, is_batched, batch_dim)
        weights = self._weights_and_sizes()
        if low is None:
            out, h_n, c_n = _R.rnn_forward(
                self.mode, data, batch_sizes, h0, c0, weights, self.num_layers,
                self.bidirectional, self.dropout, self.training, self.bias, self.proj_size)
        else:
            # the float32 layers on the rounded operands (see _R.autocast_plan), with
            # autocast off: its layer would otherwise see (and cast) every op of a
            # per-step composite
            data, h0, c0, weights = _R.autocast_operands(self.mode, data, h0, c0, weights)
            with _ac.suspended("cpu"):
                out, h_n, c_n = _R.rnn_forward(
                    self.mode, data, batch_sizes, h0, c0, weights, self.num_layers,
                    self.bidirectional, self.dropout, self.training, self.bias, self.proj_size)
            out, h_n = out.to(low), h_n.to(low)
            c_n = None if c_n is None else c_n.to(low)
        if packed:
            output = PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices)
        else:
            T, B = len(batch_sizes), batch_sizes[0]
            output = _name_output(out.reshape(T, B, out.size(-1)), self.mode, self.bidirectional,
                                  self.proj_size, data)
            if self.batch_first:
                output = _name_grad_fn(output.transpose(0, 1), "TransposeBackward0" if is_lstm
                                       else "TransposeBackward1", data)
            if not is_batched:
                output = output.squeeze(batch_dim)
                h_n = h_n.squeeze(1)
                if c_n is not None:
                    c_n = c_n.squeeze(1)
        h_n = self.permute_hidden(h_n, unsorted_indices)
        if is_lstm:
            c_n = self.permute_hidden(c_n, unsorted_indices)
            return output, (h_n, c_n)
        return output, h_n

    def _run_traced(self, input, data, hx, is_batched, batch_dim):
        """Under ``jit.trace`` a padded sequence runs as one ``ptcore.lstm``/``gru``/
        ``rnn_tanh``/``rnn_relu`` call, which the trace records as a single node (as torch's
        records ``aten::lstm``): the traced graph then runs at other sequence lengths
        rather than repeating the steps of the example's."""
        x = input if is_batched else input.unsqueeze(batch_dim)
        fn = getattr(ptcore, self.mode.lower())
        res = fn(x, hx, self._flat_weights, self.bias, self.num_layers, float(self.dropout),
                 self.training, self.bidirectional, self.batch_first)
        output, h_n, c_n = res if self.mode == "LSTM" else (res[0], res[1], None)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        return (output, (h_n, c_n)) if self.mode == "LSTM" else (output, h_n)

    def forward(self, input, hx=None):
        return self._run(input, hx)


class RNN(RNNBase):
    r"""Multi-layer Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    Parameters
    ----------
    input_size, hidden_size : int
    num_layers : int
    nonlinearity : {'tanh', 'relu'}
    bias, batch_first, bidirectional : bool
    dropout : float
        Dropout on the outputs of every layer but the last (training only).

    Notes
    -----
    ``forward(input, h_0=None)`` returns ``(output, h_n)``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        self.nonlinearity = nonlinearity
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    r"""Multi-layer long short-term memory RNN (gates ordered i, f, g, o as in PyTorch).

    Parameters
    ----------
    input_size, hidden_size : int
    num_layers : int
    bias, batch_first, bidirectional : bool
    dropout : float
    proj_size : int
        If > 0, project the hidden state to this size with ``weight_hr_l{k}``.

    Notes
    -----
    ``forward(input, (h_0, c_0)=None)`` returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = builtins.int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return (_apply_permutation(hx[0], permutation),
                    _apply_permutation(hx[1], permutation))
        return _apply_permutation(hx, permutation)


class GRU(RNNBase):
    r"""Multi-layer gated recurrent unit RNN (gates ordered r, z, n as in PyTorch).

    ``n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))``,
    ``h_t = (1 - z_t) * n_t + z_t * h_{t-1}``.

    Notes
    -----
    ``forward(input, h_0=None)`` returns ``(output, h_n)``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


# ---------------------------------------------------------------------------
# cells
# ---------------------------------------------------------------------------

class RNNCellBase(Module):
    """Base class of the single-step cells (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``)."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        for nm, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(v, builtins.int):         # a bool passes, as in torch
                raise TypeError(f"{nm} should be of type int, got: {type(v).__name__}")
            if v <= 0:
                raise ValueError(f"{nm} must be greater than zero")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        input_size, hidden_size = builtins.int(input_size), builtins.int(hidden_size)
        self.weight_ih = Parameter(ptcore.empty((num_chunks * hidden_size, input_size),
                                                **factory_kwargs))
        self.weight_hh = Parameter(ptcore.empty((num_chunks * hidden_size, hidden_size),
                                                **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(ptcore.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(ptcore.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        """Draw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, name, input, hxs):
        if not isinstance(input, ptcore.Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(-1)} "
                               f"expected {self.input_size}")
        # (under autocast the products cast their operands, as torch's cells'
        # linear ops do: a lower-precision state or input is no error there)
        mixed_ok = ptcore.is_autocast_enabled("cpu") or ptcore.is_autocast_enabled("cuda")
        if input.dtype != self.weight_ih.dtype and not mixed_ok:
            raise RuntimeError(f"{name}: input dtype {input.dtype} does not match the weights' "
                               f"dtype {self.weight_ih.dtype}")
        batch = input.size(0) if input.dim() == 2 else None
        for i, h in enumerate(hxs):
            if h.dim() != input.dim():
                raise RuntimeError(f"{name}: Expected hidden state {i} to be {input.dim()}-D "
                                   f"like the input, got shape {tuple(h.shape)}")
            if h.size(-1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(-1)}, "
                                   f"expected {self.hidden_size}")
            if batch is not None and h.size(0) != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{i} batch "
                                   f"size {h.size(0)}")
            if h.dtype != input.dtype and not mixed_ok:
                raise RuntimeError(f"{name}: hidden state dtype {h.dtype} does not match the "
                                   f"input dtype {input.dtype}")


class RNNCell(RNNCellBase):
    r"""Elman RNN cell: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    ``forward(input, hx=None)`` takes ``(N, H_in)`` or ``(H_in)`` and returns h'.
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if not isinstance(input, ptcore.Tensor) or input.dim() not in (1, 2):
            d = input.dim() if isinstance(input, ptcore.Tensor) else "non-tensor "
            raise ValueError(f"RNNCell: Expected input to be 1D or 2D, got {d}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if hx is not None:
            self._check("RNNCell", input, [hx])
        else:
            self._check("RNNCell", input, [])
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ptcore.zeros(input.size(0), builtins.int(self.hidden_size), dtype=input.dtype,
                              device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = _R._cell_forward(mode, input, hx, None, self.weight_ih, self.weight_hh,
                               self.bias_ih, self.bias_hh)
        ret = _name_grad_fn(ret, "TanhBackward0" if mode == "RNN_TANH" else "ReluBackward0", input)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""LSTM cell; ``forward(input, (h, c)=None)`` returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if not isinstance(input, ptcore.Tensor) or input.dim() not in (1, 2):
            d = input.dim() if isinstance(input, ptcore.Tensor) else "non-tensor "
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {d}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
            self._check("LSTMCell", input, list(hx))
        else:
            self._check("LSTMCell", input, [])
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = ptcore.zeros(input.size(0), builtins.int(self.hidden_size), dtype=input.dtype,
                                 device=input.device)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = _R._cell_forward("LSTM", input, hx[0], hx[1], self.weight_ih, self.weight_hh,
                                self.bias_ih, self.bias_hh)
        if not is_batched:
            h, c = h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    r"""GRU cell; ``forward(input, hx=None)`` returns h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if not isinstance(input, ptcore.Tensor) or input.dim() not in (1, 2):
            d = input.dim() if isinstance(input, ptcore.Tensor) else "non-tensor "
            raise ValueError(f"GRUCell: Expected input to be 1D or 2D, got {d}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        self._check("GRUCell", input, [] if hx is None else [hx])
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ptcore.zeros(input.size(0), builtins.int(self.hidden_size), dtype=input.dtype,
                              device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        ret = _R._cell_forward("GRU", input, hx, None, self.weight_ih, self.weight_hh,
                               self.bias_ih, self.bias_hh)
        ret = _name_grad_fn(ret, "AddBackward0", input)         # h' = (1 - z) n + z h, as torch
        return ret if is_batched else ret.squeeze(0)
