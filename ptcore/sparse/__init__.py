"""``ptcore.sparse``: COO/CSR/CSC sparse matrices (``torch.sparse``) with
zero-copy exchange with ``scipy.sparse`` and sparse @ dense products through
SciPy's compiled kernels (differentiable in the dense operand)."""
from ptcore.sparse._tensor import (  # noqa: F401
    SparseTensor, sparse_coo, sparse_csr, sparse_csc, sparse_coo_tensor, sparse_csr_tensor,
    sparse_csc_tensor, sparse_compressed_tensor, from_scipy, to_sparse,
    check_sparse_tensor_invariants,
)
from ptcore.sparse._ops import (  # noqa: F401
    mm, addmm, sum, softmax, log_softmax, spmm, spdiags, sampled_addmm,
)
from ptcore.sparse._legacy import (  # noqa: F401
    FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
    IntTensor, LongTensor,
)

__all__ = ["SparseTensor", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_coo_tensor",
           "sparse_csr_tensor", "sparse_csc_tensor", "sparse_compressed_tensor", "from_scipy",
           "to_sparse", "mm", "addmm", "sum", "softmax", "log_softmax", "spmm", "spdiags",
           "sampled_addmm", "check_sparse_tensor_invariants"]
