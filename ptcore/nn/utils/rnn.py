"""Packed and padded variable-length sequences (``torch.nn.utils.rnn``).

Everything is composed of differentiable ptcore ops (``narrow``, ``cat``,
``index_select`` ...), so gradients flow through packing and padding.
"""
import builtins
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

import ptcore
from ptcore._dispatch.device import in_host_memory as _in_host_memory
from ptcore._tensor import from_numpy as _from_numpy
from ptcore.autograd._record import name_grad_fn as _name_grad_fn

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
    "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence",
]


def _bind(optional, fn):
    return None if optional is None else fn(optional)


_PackedSequenceBase = namedtuple("PackedSequence",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    r"""The data and ``batch_sizes`` of a packed batch of variable-length sequences.

    Built by :func:`pack_padded_sequence` or :func:`pack_sequence`; all RNN
    modules accept it as input.

    Attributes
    ----------
    data : Tensor
        The packed time steps, ``(sum(lengths), *)``.
    batch_sizes : Tensor
        int64 CPU tensor: the number of sequences active at each time step.
    sorted_indices : Tensor or None
        How the sequences were sorted by decreasing length.
    unsorted_indices : Tensor or None
        The inverse permutation of ``sorted_indices``.
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if not _in_host_memory(batch_sizes):
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn.")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        """Convert ``data``'s dtype and/or device (as ``Tensor.to``); indices follow the device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=ptcore.float64)

    def float(self):
        return self.to(dtype=ptcore.float32)

    def half(self):
        return self.to(dtype=ptcore.float16)

    def long(self):
        return self.to(dtype=ptcore.int64)

    def int(self):
        return self.to(dtype=ptcore.int32)

    def short(self):
        return self.to(dtype=ptcore.int16)

    def char(self):
        return self.to(dtype=ptcore.int8)

    def byte(self):
        return self.to(dtype=ptcore.uint8)

    @property
    def is_cuda(self):
        """True if ``data`` lives on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        """True if ``data`` is in pinned memory."""
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None,
                               unsorted_indices=None):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)`` as a PackedSequence
    would hold them (torch's helper, which code building packed sequences imports)."""
    p = PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)
    return p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices


def _packed_sequence_init(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    """A PackedSequence of these fields (torch's helper)."""
    return PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None gives None)."""
    if permutation is None:
        return None
    output = ptcore.empty_like(permutation)
    output.scatter_(0, permutation, ptcore.arange(0, permutation.numel(),
                                                   device=permutation.device))
    return output


def _lengths_list(lengths):
    return [builtins.int(v) for v in lengths.tolist()]


def _packed_positions(batch_sizes, steps, batch_first, dest=None):
    """Where each packed row goes in a padded batch flattened over its first two
    dimensions: rows are time-major (step ``t``'s first ``batch_sizes[t]``
    sequences), the padded layout ``(steps, B)`` or, with ``batch_first``,
    ``(B, steps)``; ``dest[b]`` (default ``b``) is sequence ``b``'s slot in
    the batch.  One int64 CPU tensor, computed with NumPy (no loop over steps);
    the core's ``from_numpy`` wraps these index arrays (no op a trace records:
    a constant of the graph, as torch's tracer sees its kernel's)."""
    bs = np.asarray(batch_sizes, dtype=np.int64)
    B = builtins.int(bs[0]) if bs.size else 0
    t, b = np.nonzero(np.arange(B)[None, :] < bs[:, None])
    if dest is not None:
        b = dest[b]
    pos = b * steps + t if batch_first else t * B + b
    return _from_numpy(np.ascontiguousarray(pos, dtype=np.int64))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    r"""Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences.

    Parameters
    ----------
    input : Tensor
        Padded batch of variable-length sequences.
    lengths : Tensor or list of int
        Length of each sequence (a CPU tensor if given as a tensor).
    batch_first : bool
        Layout of ``input``.
    enforce_sorted : bool
        If True the lengths must be in decreasing order; otherwise the batch
        is sorted and the permutation is recorded.

    Returns
    -------
    PackedSequence
    """
    if not isinstance(input, ptcore.Tensor):
        raise TypeError(f"pack_padded_sequence(): input must be a Tensor, got "
                        f"{type(input).__name__}")
    if not isinstance(lengths, ptcore.Tensor):
        lengths = ptcore.as_tensor(lengths, dtype=ptcore.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=ptcore.int64)
    if lengths.dim() != 1:
        raise RuntimeError(f"pack_padded_sequence(): lengths must be 1-D, got shape "
                           f"{tuple(lengths.shape)}")
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], "
                         f"but got 1)")
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = ptcore.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
    data, batch_sizes = _pack_padded(input, lengths, batch_first, sorted_indices)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack_padded(input, lengths, batch_first, sorted_indices=None):
    """The packed data and batch sizes of ``input`` whose sequences, taken in the
    order ``sorted_indices`` (default: as they are), have ``lengths``."""
    T, B = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
    lens = lengths.cpu().numpy()
    if len(lens) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={B})")
    if B == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if (lens[:-1] < lens[1:]).any():
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")
    longest = builtins.int(lens[0])
    if longest > T:
        raise RuntimeError(f"pack_padded_sequence(): the longest length {longest} exceeds the "
                           f"sequence dimension of the input (size {T})")
    # batch_sizes[t]: the sequences longer than t (lengths sorted, all > 0)
    batch_sizes = B - np.cumsum(np.bincount(lens, minlength=longest + 1))[:longest]
    dest = None if sorted_indices is None else sorted_indices.cpu().numpy()
    pos = _packed_positions(batch_sizes, T, batch_first, dest)
    data = _PackPadded.apply(input, pos)
    return data, _from_numpy(batch_sizes.astype(np.int64))


class _PackPadded(ptcore.autograd.Function):
    """The packed rows of a padded batch (``input`` flattened over its first two
    dimensions, rows ``pos``): one node, as torch's (PackPaddedSequenceBackward0);
    its backward puts the gradient rows back in place, zeros in the padding."""

    _backward_name = "PackPaddedSequenceBackward0"

    @staticmethod
    def forward(ctx, input, pos):
        ctx.shape = tuple(input.shape)
        ctx.save_for_backward(pos)
        flat = input.reshape((ctx.shape[0] * ctx.shape[1],) + ctx.shape[2:])
        return flat.index_select(0, pos.to(input.device))

    @staticmethod
    def backward(ctx, g):
        (pos,) = ctx.saved_tensors
        shape = ctx.shape
        flat = g.new_zeros((shape[0] * shape[1],) + shape[2:])
        return flat.index_copy(0, pos.to(g.device), g).reshape(shape), None


class _PadPacked(ptcore.autograd.Function):
    """A padded batch of ``shape`` (its first two dimensions flattened: rows)
    filled with ``padding_value`` and the packed ``data`` at rows ``pos``: one
    node (torch's kernel copies each time step in, one CopySlices node per
    step); its backward gathers the gradient's rows ``pos``."""

    _backward_name = "CopySlices"

    @staticmethod
    def forward(ctx, data, pos, shape, padding_value):
        ctx.save_for_backward(pos)
        ctx.rows = shape[0] * shape[1]
        out = data.new_full(shape, padding_value)
        out.view((ctx.rows,) + tuple(shape[2:])).index_copy_(0, pos.to(data.device), data)
        return out

    @staticmethod
    def backward(ctx, g):
        (pos,) = ctx.saved_tensors
        g = g.reshape((ctx.rows,) + tuple(g.shape[2:]))
        return g.index_select(0, pos.to(g.device)), None, None, None


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Inverse of :func:`pack_padded_sequence`: pad a :class:`PackedSequence` back.

    Parameters
    ----------
    sequence : PackedSequence
    batch_first : bool
        Return ``(B, T, *)`` instead of ``(T, B, *)``.
    padding_value : float
        Value of the padded elements.
    total_length : int, optional
        Pad to this length (at least the longest sequence).

    Returns
    -------
    (Tensor, Tensor)
        The padded batch and the int64 lengths, in the original batch order.
    """
    data, batch_sizes = sequence.data, sequence.batch_sizes
    bs = batch_sizes.numpy().astype(np.int64, copy=False)
    max_seq_length = len(bs)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    B = builtins.int(bs[0]) if bs.size else 0
    lengths = (bs[None, :] > np.arange(B)[:, None]).sum(1)
    trailing = tuple(data.shape[1:])
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is None:
        # as torch: filled (T, B, *), transposed for batch_first
        pos = _packed_positions(bs, max_seq_length, False)
        padded = _PadPacked.apply(data, pos, (max_seq_length, B) + trailing, padding_value)
        if batch_first:
            padded = padded.transpose(0, 1)
        return padded, _from_numpy(lengths)
    # torch re-orders the batch with index_select (a contiguous result): the
    # rows go straight to their unsorted places
    unsorted = unsorted_indices.cpu().numpy()
    dest = np.empty_like(unsorted)
    dest[unsorted] = np.arange(len(unsorted))
    pos = _packed_positions(bs, max_seq_length, batch_first, dest)
    shape = (B, max_seq_length) if batch_first else (max_seq_length, B)
    padded = _PadPacked.apply(data, pos, shape + trailing, padding_value)
    padded = _name_grad_fn(padded, "IndexSelectBackward0", data)
    return padded, _from_numpy(np.ascontiguousarray(lengths[unsorted]))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Stack variable-length tensors ``(L_i, *)`` into ``(T, B, *)``, padding them.

    Parameters
    ----------
    sequences : list of Tensor
    batch_first : bool
        Return ``(B, T, *)``.
    padding_value : float
        Value of the padded elements.
    padding_side : {'right', 'left'}
        Which side to pad.

    Returns
    -------
    Tensor
    """
    if isinstance(sequences, ptcore.Tensor):
        sequences = sequences.unbind(0)
    elif not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    for s in sequences:
        if not isinstance(s, ptcore.Tensor):
            raise TypeError(f"pad_sequence(): expected a sequence of Tensors, got "
                            f"{type(s).__name__}")
        if s.dim() == 0:
            raise RuntimeError("pad_sequence(): every sequence must be at least 1-D")
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence(): trailing dimensions differ: "
                               f"{tuple(first.shape)} vs {tuple(s.shape)}")
    max_len = builtins.max(s.size(0) for s in sequences)
    B = len(sequences)
    # torch fills the batch and copies each sequence in (grad_fn CopySlices)
    out = first.new_full(((B, max_len) if batch_first else (max_len, B)) + trailing, padding_value)
    for i, s in enumerate(sequences):
        n = s.size(0)
        start = 0 if padding_side == "right" else max_len - n
        (out[i] if batch_first else out.select(1, i)).narrow(0, start, n).copy_(s)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""Split a padded batch back into a list of variable-length tensors.

    Parameters
    ----------
    padded_sequences : Tensor
        ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``).
    lengths : Tensor or list of int
        Original lengths.
    batch_first : bool

    Returns
    -------
    list of Tensor
    """
    if not batch_first:
        padded_sequences.transpose_(0, 1)       # in place, as torch
    if not isinstance(lengths, ptcore.Tensor):
        lengths = ptcore.as_tensor(lengths, dtype=ptcore.int64)
    if len(lengths) != padded_sequences.shape[0]:
        raise ValueError(f"unpad_sequence(): got {len(lengths)} lengths for a batch of "
                         f"{padded_sequences.shape[0]}")
    # torch's masked copies (IndexBackward0), not views of the padded batch
    idx = ptcore.arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Pack a list of variable-length tensors (``pad_sequence`` + ``pack_padded_sequence``).

    Parameters
    ----------
    sequences : list of Tensor
    enforce_sorted : bool
        Require decreasing lengths (otherwise sort and record the order).

    Returns
    -------
    PackedSequence
    """
    lengths = ptcore.as_tensor([v.size(0) for v in sequences], dtype=ptcore.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""Unpack a :class:`PackedSequence` into a list of variable-length tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
