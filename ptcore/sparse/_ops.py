"""Operations on :class:`~ptcore.sparse.SparseTensor`: ``mm``/``addmm``
(sparse @ dense through SciPy's compiled sparse kernels, differentiable in
the dense operand) and ``sum``."""
from ptcore._tensor import _TensorBase
from ptcore.autograd.function import Function as _Function
from ptcore.sparse._tensor import SparseTensor

__all__ = ["mm", "addmm", "sum"]


def _pt():
    import ptcore
    return ptcore


class _SparseDenseMM(_Function):
    """``S @ D`` for a sparse ``S`` (held as a SciPy matrix) and dense ``D``;
    the gradient of ``D`` is ``S^T @ grad``."""

    @staticmethod
    def forward(ctx, dense, sp_mat):
        ctx.sp = sp_mat
        pt = _pt()
        import numpy as np
        return pt.from_numpy(np.ascontiguousarray(sp_mat @ dense.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        return _SparseDenseMM.apply(g, ctx.sp.T), None


def mm(mat1, mat2):
    """``mat1 @ mat2`` with a sparse ``mat1`` and a dense 2-D ``mat2``
    (``torch.sparse.mm``); dense result, differentiable in ``mat2``."""
    if not isinstance(mat1, SparseTensor):
        raise TypeError(f"sparse.mm expects a sparse first argument, got {type(mat1).__name__}")
    if not isinstance(mat2, _TensorBase) or mat2.dim() not in (1, 2):
        raise RuntimeError("sparse.mm: the second argument must be a dense 1-D or 2-D tensor")
    if mat1.dim() != 2:
        raise RuntimeError(f"sparse.mm: expected a 2-D sparse matrix, got {mat1.dim()}-D")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {'x'.join(str(s) for s in mat2.shape)})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{mat1.dtype._legacy} != {mat2.dtype._legacy}")
    m = mat1.to_scipy()
    if m.format == "coo":
        m = m.tocsr()
    return _SparseDenseMM.apply(mat2, m)


def addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * input + alpha * (mat1 @ mat2)`` (``torch.sparse.addmm``)."""
    r = mm(mat1, mat2)
    if alpha != 1:
        r = r * alpha
    return r + (input if beta == 1 else input * beta)


def sum(input, dim=None, dtype=None):
    """Sum of all stored values (``torch.sparse.sum`` without ``dim``); with
    ``dim`` the dense sum over those dims."""
    if not isinstance(input, SparseTensor):
        return _pt().sum(input) if dim is None else _pt().sum(input, dim)
    v = input._values()
    if dtype is not None:
        v = v.to(dtype)
    if dim is None:
        return v.sum()
    raise NotImplementedError("sparse.sum over some dims (a sparse result) is not supported; "
                              "use input.to_dense().sum(dim)")
