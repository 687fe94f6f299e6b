"""Distances and index utilities of ``ptcore.nn.functional``: ``one_hot``,
``cosine_similarity``, ``pairwise_distance``, ``pdist`` (PyTorch semantics)."""
import builtins

import ptcore as _pt

__all__ = ["one_hot", "cosine_similarity", "pairwise_distance", "pdist"]


def one_hot(tensor, num_classes=-1):
    """One-hot encode int64 class indices; result is int64 with a new last dim.

    Parameters
    ----------
    tensor : Tensor
        int64 tensor of class values, any shape.
    num_classes : int
        Number of classes; ``-1`` infers ``max + 1``.
    """
    if not isinstance(tensor, _pt.Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.dtype != _pt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = builtins.int(num_classes)
    shape = list(tensor.shape)
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _pt.empty(shape + [num_classes], dtype=_pt.int64, device=tensor.device)
    if builtins.int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    max_val = builtins.int(tensor.max().item())
    if num_classes == -1:
        num_classes = max_val + 1
    elif num_classes <= max_val:
        raise RuntimeError("Class values must be smaller than num_classes.")
    ret = _pt.zeros(shape + [num_classes], dtype=_pt.int64, device=tensor.device)
    ret.scatter_(-1, tensor.unsqueeze(-1), 1)
    return ret


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity along ``dim`` (PyTorch 2.x formula).

    ``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps), dim)``; inputs
    broadcast.  The clamp does not affect gradients (as in PyTorch).
    """
    common = _pt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_tname(common)}")
    if not x1.is_floating_point() and not x1.is_complex():
        x1 = x1.to(common)
    if not x2.is_floating_point() and not x2.is_complex():
        x2 = x2.to(common)
    if x1.shape != x2.shape:
        x1, x2 = _pt.broadcast_tensors(x1, x2)
    n1 = _pt.linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    n2 = _pt.linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with _pt.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension (inputs broadcast)."""
    nd = builtins.max(x1.dim(), x2.dim())
    return _pt.linalg.vector_norm(x1 - x2 + eps, p, dim=nd - 1, keepdim=keepdim)


def pdist(input, p=2):
    """Condensed ``p``-norm distances between the rows of a 2-D ``input``.

    Returns the upper triangle (``i < j``) of the distance matrix in
    row-major order, shape ``(N * (N - 1) / 2,)``.
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n <= 1:
        return _pt.empty((0,), dtype=input.dtype, device=input.device)
    idx = _pt.triu_indices(n, n, 1)
    diff = input[idx[0]] - input[idx[1]]
    return _pt.linalg.vector_norm(diff, p, dim=1)


from ptcore.nn.functional._loss import _tname  # noqa: E402
