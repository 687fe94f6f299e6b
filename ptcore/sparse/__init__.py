"""``ptcore.sparse``: COO/CSR/CSC sparse matrices (``torch.sparse``) with
zero-copy exchange with ``scipy.sparse`` and sparse @ dense products through
SciPy's compiled kernels (differentiable in the dense operand)."""
from ptcore.sparse._tensor import (  # noqa: F401
    SparseTensor, sparse_coo, sparse_csr, sparse_csc, sparse_coo_tensor, sparse_csr_tensor,
    sparse_csc_tensor, from_scipy, to_sparse,
)
from ptcore.sparse._ops import (  # noqa: F401
    mm, addmm, sum, softmax, log_softmax, spmm, spdiags,
)

__all__ = ["SparseTensor", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_coo_tensor",
           "sparse_csr_tensor", "sparse_csc_tensor", "from_scipy", "to_sparse", "mm", "addmm",
           "sum", "softmax", "log_softmax", "spmm", "spdiags"]
