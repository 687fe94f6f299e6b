"""Making nested tensors: from lists of tensors, from a padded tensor, from
jagged values and offsets; and back to a padded tensor."""
import operator as _operator

from ptcore._tensor import _TensorBase
from ptcore.nested._tensor import NestedTensor, jagged, _pt

__all__ = ["nested_tensor", "as_nested_tensor", "nested_tensor_from_jagged", "narrow",
           "to_padded_tensor", "masked_select"]


def _check_layout(layout):
    pt = _pt()
    if layout is None:
        return pt.strided
    if layout is not pt.strided and layout is not jagged:
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout!r} "
                           "(expected ptcore.strided or ptcore.jagged)")
    return layout


def _components(tensor_list, dtype, device, copy):
    """The list's entries as tensors (converted, and detached copies if ``copy``)."""
    pt = _pt()
    if isinstance(tensor_list, NestedTensor):
        tensor_list = tensor_list.unbind()
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"nested_tensor(): expected a list of tensors, got "
                        f"{type(tensor_list).__name__}")
    comps = []
    for t in tensor_list:
        if isinstance(t, _TensorBase):
            if copy:
                t = t.detach()
            if dtype is not None or device is not None:
                t = t.to(device=device, dtype=dtype)
        else:
            t = pt.as_tensor(t, dtype=dtype, device=device)
        comps.append(t)
    if comps:
        d0 = comps[0].dim()
        for i, c in enumerate(comps):
            if c.dim() != d0:
                raise RuntimeError(f"All Tensors given to nested_tensor must have the same "
                                   f"dimension. Found dimension {c.dim()} for Tensor at index {i} "
                                   f"and dimension {d0} for Tensor at index 0.")
        dt = comps[0].dtype
        if any(c.dtype is not dt for c in comps):
            raise RuntimeError("All Tensors given to nested_tensor must have the same dtype, got "
                               + ", ".join(sorted({str(c.dtype) for c in comps})))
    return comps


def _pack(comps, layout, requires_grad_leaf=False, dtype=None, device=None):
    """A nested tensor holding ``comps`` (packed by ``cat``, so the autograd
    history of the components is kept)."""
    pt = _pt()
    if layout is jagged:
        if not comps:
            raise RuntimeError("Cannot construct a nested tensor of jagged layout from an empty "
                               "list")
        if comps[0].dim() == 0:
            raise RuntimeError("Cannot construct a nested tensor of jagged layout from 0-dim "
                               "tensors: the components need a ragged dim 0")
        rest = tuple(comps[0].shape[1:])
        if any(tuple(c.shape[1:]) != rest for c in comps):
            raise RuntimeError("Cannot represent the given tensor list as a nested tensor of "
                               "jagged layout: it allows a single ragged dim, dim 0 of the "
                               "components, as in (B, *, D_0, ..., D_N); got shapes "
                               + ", ".join(str(list(c.shape)) for c in comps))
        values = pt.cat(comps, 0)
        lens = [int(c.shape[0]) for c in comps]
        offs = [0]
        for n in lens:
            offs.append(offs[-1] + n)
        offsets = pt.tensor(offs, dtype=pt.int64, device=values.device)
        if requires_grad_leaf:
            values.requires_grad_()
        return NestedTensor(jagged, values, offsets=offsets, ragged_idx=1,
                            min_seqlen=min(lens), max_seqlen=max(lens))
    if comps:
        values = pt.cat([c.reshape(-1) for c in comps])
        ndim = comps[0].dim()
    else:
        values = pt.empty((0,), dtype=dtype if dtype is not None else pt.get_default_dtype(),
                          device=device)
        ndim = 0
    if requires_grad_leaf:
        values.requires_grad_()
    return NestedTensor(pt.strided, values, sizes=tuple(tuple(c.shape) for c in comps),
                        perm=tuple(range(ndim)))


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A nested tensor holding copies of the tensors (or nested lists) in
    ``tensor_list``, a leaf with no autograd history (``torch.nested.nested_tensor``).

    ``layout`` is ``ptcore.strided`` (default: components may differ in any
    dim) or ``ptcore.jagged`` (one ragged dim, dim 0 of the components).
    """
    layout = _check_layout(layout)
    comps = _components(tensor_list, dtype, device, copy=True)
    pt = _pt()
    with pt.no_grad():
        nt = _pack(comps, layout, dtype=dtype, device=device)
    if requires_grad:
        nt._values.requires_grad_()
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor of ``ts`` that keeps its autograd history
    (``torch.nested.as_nested_tensor``): a list of tensors (gradients flow back
    to them), a tensor whose dim 0 is the batch (jagged layout: a view of it),
    or a nested tensor (returned as is when nothing changes)."""
    pt = _pt()
    if isinstance(ts, NestedTensor):
        if (layout is None or layout is ts.layout) and dtype in (None, ts.dtype) and \
                (device is None or pt.device(device) == ts.device):
            return ts
        comps = [c.to(device=device, dtype=dtype) for c in ts.unbind()]
        return _pack(comps, _check_layout(layout if layout is not None else ts.layout))
    layout = _check_layout(layout)
    if isinstance(ts, _TensorBase):
        if ts.dim() < 1:
            raise RuntimeError("as_nested_tensor(): expected a tensor with a batch dim, got a "
                               "0-dim tensor")
        t = ts.to(device=device, dtype=dtype) if (dtype is not None or device is not None) else ts
        if layout is jagged:
            if t.dim() < 2:
                raise RuntimeError("as_nested_tensor(): a tensor converted to the jagged layout "
                                   "needs at least 2 dims (batch and ragged)")
            b, n = int(t.shape[0]), int(t.shape[1])
            values = t.reshape((b * n,) + tuple(t.shape[2:]))
            offsets = pt.arange(0, (b + 1) * n, n, dtype=pt.int64, device=t.device) if n else \
                pt.zeros(b + 1, dtype=pt.int64, device=t.device)
            return NestedTensor(jagged, values, offsets=offsets, ragged_idx=1,
                                min_seqlen=n, max_seqlen=n)
        return _pack(list(t.unbind(0)), layout)
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"as_nested_tensor(): expected a tensor or a list of tensors, got "
                        f"{type(ts).__name__}")
    if not all(isinstance(t, _TensorBase) for t in ts):
        raise TypeError("as_nested_tensor(): expected a list of tensors")
    return _pack(_components(ts, dtype, device, copy=False), layout, dtype=dtype, device=device)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    """A jagged nested tensor viewing ``values`` (``torch.nested.nested_tensor_from_jagged``).

    ``values``' dim ``jagged_dim - 1`` (default: dim 0) is the components
    concatenated; ``offsets`` (``B + 1`` ints) say where each starts, and
    ``lengths`` (``B`` ints) how long each is when they do not tile the values.
    Gradients flow back to ``values``.
    """
    pt = _pt()
    if not isinstance(values, _TensorBase):
        raise TypeError(f"nested_tensor_from_jagged(): values must be a Tensor, got "
                        f"{type(values).__name__}")
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): at least one of offsets or lengths "
                               "is required")
        lengths = pt.as_tensor(lengths, dtype=pt.int64, device=values.device)
        offsets = pt.cat([pt.zeros(1, dtype=pt.int64, device=values.device),
                          lengths.cumsum(0)])
        lengths = None
    else:
        offsets = pt.as_tensor(offsets, device=values.device)
        if lengths is not None:
            lengths = pt.as_tensor(lengths, device=values.device)
    if jagged_dim is None:
        jagged_dim = 1
    jagged_dim = _operator.index(jagged_dim)
    if not 1 <= jagged_dim <= values.dim():
        raise RuntimeError(f"nested_tensor_from_jagged(): jagged_dim={jagged_dim} is not a dim "
                           f"of the nested tensor's components (values have {values.dim()} dims)")
    if offsets.dim() != 1 or offsets.shape[0] < 1:
        raise RuntimeError("nested_tensor_from_jagged(): offsets must be a 1-D tensor of B + 1 "
                           "entries")
    if lengths is not None and (lengths.dim() != 1 or lengths.shape[0] + 1 != offsets.shape[0]):
        raise RuntimeError("nested_tensor_from_jagged(): lengths must be a 1-D tensor of B "
                           "entries (one fewer than offsets)")
    nt = NestedTensor(jagged, values, offsets=offsets, lengths=lengths, ragged_idx=jagged_dim,
                      min_seqlen=min_seqlen, max_seqlen=max_seqlen)
    extent = int(values.shape[jagged_dim - 1])
    starts, lens = nt._starts(), nt._seq_lengths()
    if any(s < 0 or n < 0 or s + n > extent for s, n in zip(starts, lens)):
        raise RuntimeError(f"nested_tensor_from_jagged(): offsets/lengths reach past the values' "
                           f"ragged dim of size {extent}")
    return nt


def narrow(tensor, dim, start, length, layout=None):
    """A nested tensor of the slices ``[start[i], start[i] + length[i])`` of
    ``tensor[i]`` along ``dim`` (``torch.nested.narrow``).

    ``layout=ptcore.jagged`` (only ``dim=1``): a view of ``tensor``; ``start``
    and ``length`` may be tensors (one entry per batch element) or ints.
    ``ptcore.strided`` (the default): ints only, the slices copied.
    """
    pt = _pt()
    layout = _check_layout(layout)
    if not isinstance(tensor, _TensorBase):
        raise RuntimeError("nested.narrow(): expected a regular (non-nested) tensor")
    if layout is jagged:
        if _operator.index(dim) != 1:
            raise RuntimeError("nested.narrow(): the jagged layout supports dim=1 only")
        b, n = int(tensor.shape[0]), int(tensor.shape[1])
        start = pt.as_tensor(start, dtype=pt.int64).expand(b) if not \
            isinstance(start, _TensorBase) else start.to(pt.int64)
        length = pt.as_tensor(length, dtype=pt.int64).expand(b) if not \
            isinstance(length, _TensorBase) else length.to(pt.int64)
        if bool(((start < 0) | (length < 0) | (start + length > n)).any()):
            raise RuntimeError(f"nested.narrow(): start + length exceeds dim 1's size {n}")
        values = tensor.reshape((b * n,) + tuple(tensor.shape[2:]))
        starts = pt.arange(0, b, dtype=pt.int64) * n + start
        offsets = pt.cat([starts, (starts[-1:] + length[-1:])])
        return NestedTensor(jagged, values, offsets=offsets, lengths=length.contiguous(),
                            ragged_idx=1)
    if isinstance(start, _TensorBase) or isinstance(length, _TensorBase):
        raise RuntimeError("nested.narrow(): the strided layout takes int start and length")
    return as_nested_tensor(list(tensor.unbind(0)), layout=pt.strided).narrow(
        dim, start, length)


def to_padded_tensor(input, padding, output_size=None):
    """A regular tensor of the components, each padded with ``padding`` at the
    end of each dim to the largest size (or to ``output_size``), stacked along
    dim 0 (``torch.nested.to_padded_tensor``).  Differentiable."""
    pt = _pt()
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor(): expected a nested tensor")
    comps = input.unbind()
    shapes = input._component_shapes()
    nd = input.dim() - 1
    if shapes:
        target = [max(s[d] for s in shapes) for d in range(nd)]
    else:
        target = [0] * nd
    if output_size is not None:
        output_size = [int(s) for s in output_size]
        if len(output_size) != nd + 1:
            raise RuntimeError(f"to_padded_tensor(): output_size must have {nd + 1} entries, "
                               f"got {len(output_size)}")
        if output_size[0] < len(comps) or any(o < t for o, t in zip(output_size[1:], target)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        target = output_size[1:]
        # a larger batch than the components: rows of padding after them (as torch's
        # strided layout)
        extra = output_size[0] - len(comps)
        if extra and comps:
            fill = pt.full([extra] + target, padding, dtype=input.dtype, device=input.device)
            return pt.cat([to_padded_tensor(input, padding, [len(comps)] + target), fill])
    if not comps:
        return pt.empty([0] + list(target), dtype=input.dtype, device=input.device)
    padded = []
    for c in comps:
        pad = []
        for d in reversed(range(nd)):
            pad += [0, target[d] - int(c.shape[d])]
        # (nn.functional.pad, the public entry: ptcore.nn is not loaded with ptcore.nested)
        padded.append(pt.nn.functional.pad(c, pad, value=padding) if any(pad) else c)
    return pt.stack(padded)


def masked_select(tensor, mask):
    """The entries of ``tensor`` where ``mask`` (broadcast to it) is True, as a
    jagged nested tensor with one component per row of the last dim (the
    leading dims flattened into the batch) (``torch.nested.masked_select``)."""
    pt = _pt()
    if not isinstance(tensor, _TensorBase) or not isinstance(mask, _TensorBase):
        raise RuntimeError("nested.masked_select(): expected a regular tensor and mask")
    if mask.dtype is not pt.bool:
        raise RuntimeError(f"nested.masked_select(): mask must be bool, got {mask.dtype}")
    if tensor.dim() < 2:
        raise RuntimeError("nested.masked_select(): the tensor needs a batch dim and at least "
                           "one more")
    mask = mask.expand_as(tensor) if tuple(mask.shape) != tuple(tensor.shape) else mask
    values = pt.masked_select(tensor, mask)
    lengths = mask.reshape(-1, int(tensor.shape[-1])).sum(-1)
    offsets = pt.cat([pt.zeros(1, dtype=pt.int64), lengths.cumsum(0).to(pt.int64)])
    return NestedTensor(jagged, values, offsets=offsets, ragged_idx=1)
