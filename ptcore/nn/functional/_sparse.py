"""``embedding`` of ``ptcore.nn.functional``."""
import ptcore
from ptcore._tensor import _TensorBase
from ptcore.autograd import _record as _R
from ptcore._dispatch.tracing import active_tracer as _active_tracer
from ptcore._scalar_args import bool_param, float_param, strict_symint_param

__all__ = ["embedding"]


class _Embedding(ptcore.autograd.Function):
    """Row lookup, one autograd node as torch's (EmbeddingBackward0): the
    weight gradient sums each looked-up row's gradient (scaled by 1/count
    with ``scale_grad_by_freq``, none for ``padding_idx``), dense or, with
    ``sparse``, a COO tensor of the looked-up rows."""

    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, flat, out_shape, padding_idx, scale_grad_by_freq, sparse):
        ctx.flat, ctx.padding_idx, ctx.freq, ctx.sparse = flat, padding_idx, scale_grad_by_freq, sparse
        ctx.shape = tuple(weight.shape)
        return weight.index_select(0, flat).view(out_shape)

    @staticmethod
    def backward(ctx, g):
        flat = ctx.flat
        g = g.reshape(flat.shape[0], ctx.shape[1])
        if ctx.sparse:
            if ctx.freq:
                raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                                   "sparse gradients")
            if ctx.padding_idx >= 0:
                keep = flat != ctx.padding_idx          # torch leaves padding rows out
                flat, g = flat[keep], g[keep]
            # (the public op: ptcore.sparse loads on the first sparse gradient, not with nn)
            return ptcore.sparse_coo_tensor(flat.unsqueeze(0), g, ctx.shape), None, None, None, None, \
                None
        return _dense_weight_grad(g, flat, ctx.shape, ctx.padding_idx, ctx.freq), \
            None, None, None, None, None


def _dense_weight_grad(g, flat, shape, padding_idx, freq):
    """The weight gradient of a lookup of rows ``flat`` (``g``: (len(flat), dim))."""
    if padding_idx >= 0 or freq:
        with ptcore.no_grad():
            scale = ptcore.ones(flat.shape[0], dtype=g.dtype, device=g.device)
            if freq:
                counts = ptcore.zeros(shape[0], dtype=g.dtype, device=g.device)
                counts.index_add_(0, flat, ptcore.ones_like(scale))
                scale = 1.0 / counts.index_select(0, flat)
            if padding_idx >= 0:
                scale = ptcore.where(flat == padding_idx, ptcore.zeros_like(scale), scale)
        g = g * scale.unsqueeze(1)
    z = ptcore.zeros(shape, dtype=g.dtype, device=g.device)
    if _R._state.enabled or _active_tracer() is not None:     # (recorded or traced)
        return z.index_add(0, flat, g)
    return z.index_add_(0, flat, g)         # (not recorded: no copy of the zeros)


def _recorded_lookup(weight, flat, out_shape, padding_idx, freq):
    """The dense lookup recorded as one EmbeddingBackward0 node through the core's
    recording (the autograd.Function path costs a Python Function per call)."""
    _R._state.enabled = False
    try:
        out = weight.index_select(0, flat).view(out_shape)
    finally:
        _R._state.enabled = True
    shape = tuple(weight.shape)

    def bw(g):
        return (_dense_weight_grad(g.reshape(flat.shape[0], shape[1]), flat, shape,
                                   padding_idx, freq),)
    _R.attach("EmbeddingBackward0", out, (weight,), bw)
    return out


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale, in place, the rows of ``weight`` indexed by ``input`` whose norm exceeds ``max_norm``."""
    with ptcore.no_grad():
        w = weight.detach()
        idx = ptcore.unique(input.reshape(-1))
        if idx.numel() == 0:
            return weight
        rows = w.index_select(0, idx)
        norms = ptcore.linalg.vector_norm(rows, norm_type, dim=1)
        mask = norms > max_norm
        if bool(mask.any()):
            sel = idx[mask]
            scale = max_norm / (norms[mask] + 1e-7)
            w[sel] = rows[mask] * scale.unsqueeze(1)
    return weight


def _check_embedding_args(input, weight, padding_idx):
    """torch's argument checks of ``embedding`` (every device); the padding
    index made non-negative, -1 for none."""
    if not isinstance(input, _TensorBase):
        raise TypeError(f"embedding(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not isinstance(weight, _TensorBase):
        raise TypeError(f"embedding(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if input.dtype not in (ptcore.int64, ptcore.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    return padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight`` by the integer indices in ``input``.

    Parameters
    ----------
    input : Tensor
        Integer (int64/int32) indices of any shape.
    weight : Tensor
        ``(num_embeddings, embedding_dim)`` table.
    padding_idx : int, optional
        Rows at this index get no gradient.
    max_norm : float, optional
        Rows looked up with a larger ``norm_type``-norm are rescaled in place to ``max_norm``.
    scale_grad_by_freq : bool
        Scale the gradient of each row by the inverse of its frequency in ``input``.
    sparse : bool
        The gradient of ``weight`` is a sparse COO tensor holding only the
        looked-up rows (``indices (1, n)``, ``values (n, embedding_dim)``,
        uncoalesced, as torch's), for ``optim.SGD``/``Adagrad``/``SparseAdam``.

    Returns
    -------
    Tensor
        ``(*input.shape, embedding_dim)``.
    """
    # (torch's parser: padding_idx an int, the flags bools, the renorm's numbers floats)
    if padding_idx is not None:
        padding_idx = strict_symint_param(padding_idx, "embedding", "padding_idx", 3)
    bool_param(scale_grad_by_freq, "embedding", "scale_grad_by_freq", 4)
    bool_param(sparse, "embedding", "sparse", 5)
    padding_idx = _check_embedding_args(input, weight, padding_idx)
    if max_norm is not None:
        max_norm = float_param(max_norm, "embedding_renorm_", "max_norm", 3)
        norm_type = float_param(norm_type, "embedding_renorm_", "norm_type", 4)
        input = input.contiguous()
        _embedding_renorm_(weight, input, max_norm, norm_type)
    flat = input.reshape(-1)        # (index_select refuses rows out of range: IndexError)
    out_shape = (*input.shape, weight.shape[1])
    if weight.requires_grad and _R._state.enabled:
        if not sparse:
            return _recorded_lookup(weight, flat, out_shape, padding_idx, scale_grad_by_freq)
        return _Embedding.apply(weight, flat, out_shape, padding_idx, scale_grad_by_freq, sparse)
    return weight.index_select(0, flat).view(out_shape)
