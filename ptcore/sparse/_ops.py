"""Operations on :class:`~ptcore.sparse.SparseTensor`.

Products go through SciPy's compiled sparse kernels; everything is
differentiable in the dense operands and in the sparse tensor's values (its
index structure is fixed), as PyTorch's sparse autograd is: the gradient of
the values of ``S`` in ``S @ D`` is ``(G[rows] * D[cols]).sum(-1)`` for every
stored entry.
"""
import builtins as _builtins
import operator as _operator
from ptcore._warn import warn_at_caller as _warn_at_caller

import numpy as _np

from ptcore._tensor import _TensorBase, root_name as _root_name
from ptcore._dispatch.device import device_mismatch_error as _device_mismatch
from ptcore._dispatch.handlers import Handlers
from ptcore.autograd.function import Function as _Function
import ptcore.sparse._index_ops as _ix
from ptcore.sparse._tensor import (SparseTensor, empty_coo, sparse_coo, sparse_csr, sparse_csc,
                                   register_ops, unsupported, _layout_name, _rows_cols)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "spmm", "add", "mul", "pow",
           "index_select", "unsqueeze", "sparse_mask", "spdiags", "cat", "stack", "bmm",
           "narrow_copy", "select", "sampled_addmm", "to_dense"]


def _pt():
    import ptcore
    return ptcore


# op name -> what ``ptcore.X(...)`` / ``Tensor.X(...)`` does with a sparse
# argument (see torch_function), registered at each implementation below
implements = Handlers("sparse")


def _scipy_with(S, values):
    """S's structure with ``values`` (a NumPy array) as a SciPy CSR/CSC array."""
    import scipy.sparse as sp
    p = S._parts
    if S.layout is sparse_coo:
        idx = p[0].numpy()
        return sp.coo_array((values, (idx[0], idx[1])), shape=S._shape).tocsr()
    cls = sp.csr_array if S.layout is sparse_csr else sp.csc_array
    return cls((values, p[1].numpy(), p[0].numpy()), shape=S._shape)


try:    # SciPy's compiled CSR/CSC products, as its sparse arrays call them (a private
    # module, kept stable across SciPy releases): without them, scipy.sparse's public
    # arrays, which cost ~30 us of checks per call
    from scipy.sparse import _sparsetools as _spt
except ImportError:     # pragma: no cover - depends on the SciPy build
    _spt = None

_FAST_SPMM = frozenset(("float32", "float64", "complex64", "complex128"))


def _compressed(S):
    """``(kind, indptr, indices, perm)`` of the 2-D sparse ``S`` as NumPy arrays:
    CSR (``kind`` ``"csr"``) or CSC arrays of its structure, and for COO the order
    ``perm`` that takes its values to that CSR order (None: already in it).  Kept on
    ``S`` while its index tensors are unchanged (their version counters), so a
    product in a training loop converts its structure once."""
    p = S._parts
    key = tuple((id(t), t._version) for t in p[:-1])
    cached = S.__dict__.get("_ptc_compressed")
    if cached is not None and cached[0] == key:
        return cached[1]
    if S.layout is sparse_coo:
        idx = p[0].numpy()
        rows, cols = idx[0], idx[1]
        if S._coalesced or bool(_np.all(rows[1:] >= rows[:-1])):
            perm = None
        else:
            perm = _np.argsort(rows, kind="stable")
            rows, cols = rows[perm], cols[perm]
        indptr = _np.zeros(S._shape[0] + 1, dtype=_np.int64)
        _np.cumsum(_np.bincount(rows, minlength=S._shape[0]), out=indptr[1:])
        out = ("csr", indptr, _np.ascontiguousarray(cols, dtype=_np.int64), perm)
    else:
        comp, plain = p[0].numpy(), p[1].numpy()
        if comp.dtype != plain.dtype:
            comp, plain = comp.astype(_np.int64), plain.astype(_np.int64)
        out = ("csr" if S.layout is sparse_csr else "csc", comp, plain, None)
    S.__dict__["_ptc_compressed"] = (key, out)
    return out


def _host_spmm(S, values, dense, transpose):
    """``S @ dense`` (``S.T @ dense`` with ``transpose``) on the host through SciPy's
    compiled kernels, or None where they do not apply (a hybrid tensor, other dtypes,
    values and dense of different dtypes)."""
    if (_spt is None or values.dim() != 1 or len(S._shape) != 2
            or values.dtype is not dense.dtype or dense.dtype._name not in _FAST_SPMM):
        return None
    kind, indptr, indices, perm = _compressed(S)
    vals = values.detach().numpy()
    if perm is not None:
        vals = vals[perm]
    m, k = S._shape
    if transpose:                       # S.T in CSR is S in CSC, and the reverse
        m, k = k, m
        kind = "csc" if kind == "csr" else "csr"
    x = _np.ascontiguousarray(dense.detach().numpy())
    nvec = x.shape[1] if x.ndim == 2 else 1
    y = _np.zeros((m, nvec) if x.ndim == 2 else (m,), dtype=x.dtype)
    if nvec and m and k and vals.size:
        kernel = _spt.csr_matvecs if kind == "csr" else _spt.csc_matvecs
        kernel(m, k, nvec, indptr, indices, _np.ascontiguousarray(vals), x.ravel(), y.ravel())
    return _pt().from_numpy(y)


class _SpMM(_Function):
    """``S @ D`` (``S.T @ D`` with ``transpose``) with ``S`` = (structure, values);
    differentiable in both (``torch.sparse.mm``'s node; ``torch.mm``/``@``/``mv``
    record theirs)."""

    _backward_name = "SparseAddmmBackward0"

    @staticmethod
    def forward(ctx, values, dense, S, transpose=False):
        ctx.S = S
        ctx.transpose = transpose
        ctx.save_for_backward(values, dense)
        if values.device != dense.device:
            raise _device_mismatch(values.device, dense.device)
        if not _ix.on_host(dense):
            rows, cols = _rows_cols(S)
            if transpose:
                rows, cols = cols, rows
            return _ix.spmm(rows, cols, values.detach(), dense.detach(),
                            S._shape[1 if transpose else 0])
        r = _host_spmm(S, values, dense, transpose)
        if r is not None:
            return r
        m = _scipy_with(S, values.detach().numpy())
        if transpose:
            m = m.T
        return _pt().from_numpy(_np.ascontiguousarray(m @ dense.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        values, dense = ctx.saved_tensors
        S = ctx.S
        gv = gd = None
        if ctx.needs_input_grad[1]:
            gd = _SpMM.apply(values, g, S, not ctx.transpose)
        if ctx.needs_input_grad[0]:
            rows, cols = _rows_cols(S)
            if ctx.transpose:
                rows, cols = cols, rows
            g2 = g if g.dim() == 2 else g.unsqueeze(1)
            d2 = dense if dense.dim() == 2 else dense.unsqueeze(1)
            gv = (g2.index_select(0, rows) * d2.index_select(0, cols)).sum(-1)
        return (gv, gd, None) + ((None,) if len(ctx.needs_input_grad) > 3 else ())


class _Mm(_SpMM):
    _backward_name = "MmBackward0"


class _Mv(_SpMM):
    _backward_name = "MvBackward0"


class _Alias(_Function):
    """The identity on a sparse tensor's values, the node torch records when a
    sparse tensor is built from values that require grad."""

    @staticmethod
    def forward(ctx, values):
        return values.view(values.shape)

    @staticmethod
    def backward(ctx, g):
        return g


_ALIASES = {}


class _DenseAlias(_Alias):
    """The identity on a dense result (a copy, not a view of it)."""

    @staticmethod
    def forward(ctx, values):
        return values.clone()


def alias(values, node, dense=False):
    """``values`` behind a new identity node named ``node`` (a view of them; a
    copy with ``dense``, for a dense op result)."""
    cls = _ALIASES.get((node, dense))
    if cls is None:
        cls = _ALIASES[node, dense] = type(node[:node.rindex("Backward")],
                                           (_DenseAlias if dense else _Alias,),
                                           {"_backward_name": node})
    return cls.apply(values)


def named(r, node):
    """The op result ``r`` (sparse or dense) behind an identity node named
    ``node``, the node torch records for the op, when it takes part in
    autograd."""
    if isinstance(r, SparseTensor):
        return r._named(node)
    if r.requires_grad and _pt().is_grad_enabled():
        return alias(r, node, dense=True)
    return r


class _ToDense(_Function):
    """``S.to_dense()``: the values summed into zeros at their positions;
    the values' gradient is the dense gradient at those positions."""

    _backward_name = "ToDenseBackward0"

    @staticmethod
    def forward(ctx, values, S):
        pt = _pt()
        ss = S._sshape()
        tail = S._shape[len(ss):]
        ctx.flat, ctx.tail = S._flat_positions(), tail
        d = pt.zeros(S._shape, dtype=values.dtype, device=values.device)
        if ctx.flat.shape[0]:
            d.view((-1,) + tail).index_add_(0, ctx.flat, values.detach())
        return d

    @staticmethod
    def backward(ctx, g):
        return g.reshape((-1,) + ctx.tail).index_select(0, ctx.flat), None


def to_dense(S):
    """The dense tensor of the sparse ``S`` (differentiable in its values)."""
    return _ToDense.apply(S._parts[-1], S)


def _check_mm(mat1, mat2, what):
    if mat1.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got -2)")
    if mat1.dim() != 2:
        raise RuntimeError(f"{what}: expected a 2-D sparse matrix, got {mat1.dim()}-D")
    if not isinstance(mat2, _TensorBase) or mat2.dim() not in (1, 2):
        raise RuntimeError(f"{what}: the second argument must be a dense 1-D or 2-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {'x'.join(str(s) for s in mat2.shape)})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{mat1.dtype._legacy} != {mat2.dtype._legacy}")


def _low_precision(S, kernel):
    """torch's error for a sparse kernel without integer/bool kernels."""
    if not (S.dtype.is_floating_point or S.dtype.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{S.dtype._legacy}'")


def mm(mat1, mat2, reduce=None):
    """``mat1 @ mat2`` with a sparse ``mat1`` and a dense 1-D/2-D ``mat2``, or a
    dense ``mat1`` and a sparse ``mat2`` (``torch.sparse.mm``); dense result,
    differentiable in the dense operand and in the sparse values.

    ``reduce`` (``"sum"``, ``"mean"``, ``"amax"``, ``"amin"``; a CSR ``mat1`` and a 2-D
    ``mat2``, as torch's CPU kernel) combines each row's products ``mat1[i, j] * mat2[j]``
    by that reduction instead of summing them; a row without entries gives zeros."""
    if reduce is None:
        return _mm(mat1, mat2, _SpMM)
    return _mm_reduce(mat1, mat2, reduce)


_MM_REDUCTIONS = ("sum", "mean", "amax", "amin")


def _mm_reduce(mat1, mat2, reduce):
    pt = _pt()
    if not isinstance(reduce, str):
        raise TypeError(f"sparse.mm(): argument 'reduce' must be str, not {type(reduce).__name__}")
    if not isinstance(mat1, SparseTensor) or mat1.layout is not sparse_csr:
        raise NotImplementedError(
            f"sparse.mm with reduce={reduce!r} takes a sparse CSR mat1 (as torch's CPU kernel), "
            f"got {getattr(mat1, 'layout', type(mat1).__name__)}")
    if reduce not in _MM_REDUCTIONS:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    if not isinstance(mat2, _TensorBase) or mat2.dim() != 2:
        raise RuntimeError(f"sparse.mm with reduce: mat2 must be a dense 2-D tensor, got "
                           f"{getattr(mat2, 'shape', type(mat2).__name__)}")
    _check_mm(mat1, mat2, "sparse.mm")
    rows, cols = _rows_cols(mat1)
    vals = mat1._parts[-1]
    prod = vals.unsqueeze(1) * mat2.index_select(0, cols.to(mat2.device))
    n = mat2.shape[1]
    out = pt.zeros(mat1.shape[0], n, dtype=prod.dtype, device=mat2.device)
    return out.scatter_reduce(0, rows.to(mat2.device).unsqueeze(1).expand(-1, n), prod,
                              reduce=reduce, include_self=False)


def _mm(mat1, mat2, fn):
    """:func:`mm` recording ``fn``'s node (torch.sparse.mm's SparseAddmm, or
    torch.mm's Mm / Mv)."""
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        _low_precision(mat1, "sparse_matmul")
        r = mm(mat1, mat2.to_dense()).to_sparse()
        # in mat2's layout, as torch's (CSR @ CSR is CSR, CSC @ CSC is CSC)
        if mat2.layout is sparse_csr:
            return r.to_sparse_csr()
        return r.to_sparse_csc() if mat2.layout is sparse_csc else r
    if isinstance(mat2, SparseTensor):
        if not isinstance(mat1, _TensorBase) or mat1.dim() not in (1, 2):
            raise RuntimeError("mm: the dense operand must be 1-D or 2-D")
        if mat1.dim() == 1:
            return _mm(mat2.t(), mat1, _Mv if fn is _Mm else fn)
        return _mm(mat2.t(), mat1.t(), fn).t()
    if not isinstance(mat1, SparseTensor):
        raise TypeError(f"sparse.mm expects a sparse argument, got {type(mat1).__name__} and "
                        f"{type(mat2).__name__}")
    _check_mm(mat1, mat2, "sparse.mm")
    if mat1.layout is not sparse_coo:
        _low_precision(mat1, "addmm_out_sparse_csr_impl_mkl")
    if fn is _Mm and mat2.dim() == 1:
        fn = _Mv
    return fn.apply(mat1._parts[-1], mat2, mat1)


spmm = mm


def addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * input + alpha * (mat1 @ mat2)`` (``torch.sparse.addmm``)."""
    return _addmm(input, mat1, mat2, beta, alpha, "SparseAddmmBackward0")


def _addmm(input, mat1, mat2, beta, alpha, node):
    r = mm(mat1, mat2)
    if alpha != 1:
        r = r * alpha
    r = r + (input if beta == 1 else input * beta)
    dt = _pt().promote_types(input.dtype, mat1.dtype)
    if r.dtype is not dt:           # (the scalars do not promote, as torch's)
        r = r.to(dt)
    return named(r, node)


def _norm_dims(dim, ndim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        d = d % ndim
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return sorted(out)


def sum(input, dim=None, dtype=None):
    """``torch.sparse.sum``: the sum of the stored values, or over ``dim``
    (a sparse COO result while dims remain, a dense 0-d one when all are
    reduced)."""
    pt = _pt()
    if not isinstance(input, SparseTensor):
        return pt.sum(input) if dim is None else pt.sum(input, dim)
    r = _sum(input, dim, dtype)
    return r if dim is None else named(r, "SparseSumBackward0")


@implements("sum")
def _tensor_sum(input, dim=None, keepdim=False, dtype=None):
    """``Tensor.sum`` / ``torch.sum`` of a sparse tensor: as torch's, a
    compressed tensor reduces over dims only with ``keepdim=True`` (its
    result compressed too)."""
    if dim is None:
        return _sum(input, None, dtype)
    if input.layout is not sparse_coo:
        if not keepdim:
            raise RuntimeError("reduction operations on CSR tensors with keepdim=False is "
                               "unsupported")
        dims = _norm_dims(dim, input.dim())
        r = _sum(input, dims, dtype)
        if isinstance(r, SparseTensor):
            for d in dims:
                r = unsqueeze(r, d)
        else:
            r = r.reshape(1, 1).to_sparse()
        r = r.to_sparse_csr() if input.layout is sparse_csr else r.to_sparse_csc()
        return named(r, "SumBackward1")
    return named(_sum(input, dim, dtype), "SumBackward1")


def _sum(input, dim, dtype):
    """The sum over ``dim`` (all when None) of a sparse tensor: dense when
    every sparse dim is reduced, else a coalesced COO tensor of the sparse
    dims left (a hybrid tensor's dense dims summed in its values), as torch."""
    pt = _pt()
    S = input.to_sparse_coo()
    v = S._parts[1]
    if dtype is not None:
        v = v.to(dtype)
    if dim is None:
        return v.sum()
    dims = _norm_dims(dim, S.dim())
    sd = S.sparse_dim()
    vdims = [d - sd + 1 for d in dims if d >= sd]      # dense dims, in the values
    if vdims:
        v = v.sum(vdims)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return v.sum(0)
    sshape = tuple(S._shape[d] for d in keep)
    shape = sshape + tuple(v.shape[1:])
    if not _ix.on_host(v):
        if v.shape[0] == 0:
            return SparseTensor(sparse_coo, (S._parts[0][keep].clone(), v[:0]), shape, True)
        idx, out = _ix.coalesce(S._parts[0][keep], v, sshape)
        return SparseTensor(sparse_coo, (idx, out), shape, True)
    idx = S._parts[0].numpy()[keep]
    if idx.shape[1] == 0:
        return SparseTensor(sparse_coo, (pt.from_numpy(idx.astype(_np.int64).copy()), v[:0]),
                            shape, True)
    lin = _np.ravel_multi_index(tuple(idx), sshape)
    uniq, inv = _np.unique(lin, return_inverse=True)
    out = pt.zeros((len(uniq),) + tuple(v.shape[1:]), dtype=v.dtype).index_add(
        0, pt.from_numpy(inv.reshape(-1).astype(_np.int64)), v)
    new_idx = _np.stack(_np.unravel_index(uniq, sshape)).astype(_np.int64).reshape(len(keep), -1)
    return SparseTensor(sparse_coo, (pt.from_numpy(new_idx), out), shape, True)


def _groups(S, dim):
    """For each stored entry, the id of its line along ``dim`` (all other
    indices equal), and the number of lines."""
    others = [d for d in range(S.sparse_dim()) if d != dim]
    if not _ix.on_host(S._parts[0]):
        pt = _pt()
        if not others:
            return pt.zeros(S._parts[0].shape[1], dtype=pt.int64, device=S.device), 1
        uniq, inv = _ix.unique_inverse(_ix.ravel(S._parts[0][others],
                                                 tuple(S._shape[d] for d in others)))
        return inv, uniq.shape[0]
    idx = S._parts[0].numpy()
    if not others:
        return _np.zeros(idx.shape[1], _np.int64), 1
    lin = _np.ravel_multi_index(tuple(idx[others]), tuple(S._shape[d] for d in others))
    uniq, inv = _np.unique(lin, return_inverse=True)
    return inv.reshape(-1).astype(_np.int64), len(uniq)


def _softmax(input, dim, dtype, log):
    pt = _pt()
    if not isinstance(input, SparseTensor):
        f = pt.log_softmax if log else pt.softmax
        return f(input, dim, dtype=dtype)
    layout = input.layout
    if layout is not sparse_coo:        # (torch has no compressed sparse softmax kernel)
        raise NotImplementedError(f"Could not run 'aten::_sparse_{'log_' if log else ''}softmax' "
                                  f"with arguments from the 'SparseCsrCPU' backend.")
    _low_precision(input, "log_softmax" if log else "softmax")
    S = input.to_sparse_coo().coalesce()
    d = _norm_dims(dim, S.dim())[0]
    v = S._parts[1]
    if dtype is not None:
        v = v.to(dtype)
    sd = S.sparse_dim()
    if v.shape[0] == 0:
        out = v.clone()
    elif d >= sd:       # a dense dim of a hybrid tensor: every entry there is stored
        out = (pt.log_softmax if log else pt.softmax)(v, d - sd + 1)
    else:
        g, n = _groups(S, d)
        gi = pt.as_tensor(g)
        tail = tuple(v.shape[1:])
        ge = gi.view((-1,) + (1,) * len(tail)).expand(v.shape)
        vmax = pt.full((n,) + tail, float("-inf"), dtype=v.dtype, device=v.device).scatter_reduce(
            0, ge, v.detach(), "amax", include_self=True)
        shifted = v - vmax.index_select(0, gi)
        e = shifted.exp()
        tot = pt.zeros((n,) + tail, dtype=v.dtype, device=v.device).index_add(0, gi, e)
        out = shifted - tot.log().index_select(0, gi) if log else e / tot.index_select(0, gi)
    r = SparseTensor(sparse_coo, (S._parts[0], out), S._shape, True)
    return named(r, "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0")


def softmax(input, dim, dtype=None):
    """``torch.sparse.softmax``: softmax over the stored entries of each line
    along ``dim`` (entries that are not stored count as -inf)."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, dtype=None):
    """``torch.sparse.log_softmax``."""
    return _softmax(input, dim, dtype, True)


def add(input, other, *, alpha=1):
    """``input + alpha * other`` where either is sparse: sparse + sparse is
    sparse (coalesced when both are, else the entries of both, as torch),
    dense + sparse is dense; sparse + dense raises as torch does."""
    return _add(input, other, alpha, "AddBackward0")


def _add(input, other, alpha, node):
    pt = _pt()
    if isinstance(input, SparseTensor) and isinstance(other, SparseTensor):
        if input.layout is not sparse_coo:
            _low_precision(input, "add_out_sparse_csr_impl_mkl")
        return named(_add_sparse(input, other, alpha), node)
    return _add_dense(input, other, alpha)


def _add_sparse(input, other, alpha):
    pt = _pt()
    if input._shape != other._shape:
        raise RuntimeError(f"add: expected sizes to match, got {list(input._shape)} and "
                           f"{list(other._shape)}")
    a, b = input.to_sparse_coo(), other.to_sparse_coo()
    bv = b._parts[1] if alpha == 1 else b._parts[1] * alpha
    vals = pt.cat([a._parts[1], bv.to(pt.promote_types(a.dtype, bv.dtype))
                   if a.dtype is not bv.dtype else bv])
    r = SparseTensor(sparse_coo, (pt.cat([a._parts[0], b._parts[0]], 1), vals), a._shape)
    if a._coalesced and b._coalesced:
        r = r.coalesce()        # torch merges two sorted index lists: a coalesced sum
    if input.layout is not sparse_coo:
        return r.coalesce().to_sparse_csr() if input.layout is sparse_csr \
            else r.coalesce().to_sparse_csc()
    return r


def _add_dense(input, other, alpha):
    if isinstance(input, SparseTensor):
        if input.layout is sparse_coo:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        # a compressed (CSR/CSC) matrix plus a dense one is dense, as torch's
        return input.to_dense() + (other if alpha == 1 else other * alpha)
    o = other.to_dense()
    return input + (o if alpha == 1 else o * alpha)


def mul(input, other):
    """Elementwise product with a sparse operand: sparse result (the stored
    entries times the scalar or the dense tensor's entries there)."""
    if not isinstance(input, SparseTensor):
        input, other = other, input
    if isinstance(other, SparseTensor):
        other = other.to_dense()
    if isinstance(other, _TensorBase) and other.dim() > 0:
        if input.layout is not sparse_coo:
            if tuple(other.shape) != input._shape:   # (torch's compressed mul: no broadcasting)
                raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has "
                                   f"size {list(other.shape)} but mask has size "
                                   f"{list(input._shape)}")
            r = _mul_coo(input.to_sparse_coo(), other)
            return r.coalesce().to_sparse_csr() if input.layout is sparse_csr else \
                r.coalesce().to_sparse_csc()
        return _mul_coo(input, other)
    return SparseTensor(input.layout, input._parts[:-1] + (input._parts[-1] * other,),
                        input._shape, input._coalesced)


def _mul_coo(S, dense):
    """The COO ``S`` times the dense ``dense`` broadcast to it: its stored
    entries times ``dense``'s entries there.  As torch's, a dense operand with
    more dims repeats the (coalesced) entries along the new leading dims
    (differentiable in both operands)."""
    pt = _pt()
    shape = tuple(pt.broadcast_shapes(S._shape, tuple(dense.shape)))
    lead = len(shape) - S.dim()
    if shape[lead:] != S._shape:
        raise RuntimeError(f"mul: the dense operand of size {list(dense.shape)} would broadcast "
                           f"the sparse dims of size {list(S._shape)} to {list(shape)}: "
                           f"only new leading dims are supported")
    if lead:        # (torch coalesces first: its result is coalesced)
        S = S.coalesce()
    idx, vals = S._parts
    if lead:        # the entries repeated for every index of the new leading dims
        n, reps = idx.shape[1], int(_np.prod(shape[:lead]))
        outer = _np.stack(_np.unravel_index(_np.repeat(_np.arange(reps), n), shape[:lead]))
        idx = pt.cat([pt.from_numpy(outer.astype(_np.int64).reshape(lead, -1)),
                      idx.repeat(1, reps)])
        vals = vals.repeat((reps,) + (1,) * (vals.dim() - 1))
    sd = idx.shape[0]
    picked = dense.expand(shape)[tuple(idx[d] for d in range(sd))]
    return SparseTensor(sparse_coo, (idx, vals * picked), shape, S._coalesced)


def select(input, dim, index):
    """The slice at ``index`` along ``dim`` (``Tensor.select``, ``s[i]``): a COO
    tensor (a compressed input is converted, as torch's), or a dense one when
    no sparse dim is left; differentiable in the values."""
    pt = _pt()
    d = _norm_dims(dim, input.dim())[0]
    size = input._shape[d]
    index = _operator.index(index)      # (a 0-d integer tensor too: ptwt's row numbers)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {d}")
    index %= size
    S = input.to_sparse_coo()
    idx, vals = S._parts
    sd = S.sparse_dim()
    shape = S._shape[:d] + S._shape[d + 1:]
    if d >= sd:
        return named(SparseTensor(sparse_coo, (idx, vals.select(d - sd + 1, index)), shape,
                                  S._coalesced), "SelectBackward0")
    keep = pt.from_numpy(_np.nonzero(idx[d].numpy() == index)[0].astype(_np.int64))
    vals = vals.index_select(0, keep)
    if sd == 1:     # no sparse dim left: the dense sum of the entries there
        return vals.sum(0)
    rest = [k for k in range(sd) if k != d]
    new_idx = idx.index_select(1, keep)[pt.tensor(rest)]
    # (torch's flag: a compressed input's slice is coalesced, a COO one only when it is trivially so)
    return named(SparseTensor(sparse_coo, (new_idx, vals), shape,
                              keep.shape[0] <= 1 or input.layout is not sparse_coo),
                 "SelectBackward0")


@implements("zeros_like", "empty_like")
def _like(input, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
          pin_memory=False):
    """``zeros_like``/``empty_like`` of a sparse tensor: no stored entries, in
    its layout (or dense zeros with ``layout=ptcore.strided``)."""
    pt = _pt()
    dtype = input.dtype if dtype is None else dtype
    if device is not None and pt.device(device).type != "cpu":
        raise RuntimeError(f"sparse tensors are only supported on the CPU in ptcore, got "
                           f"device={device}")
    if layout is pt.strided:
        return pt.zeros(input._shape, dtype=dtype, requires_grad=requires_grad)
    if layout is not None and layout is not input.layout:
        raise RuntimeError(f"zeros_like: converting a sparse {input.layout.name[7:]} tensor to "
                           f"layout {layout} is not supported")
    p = input._parts
    if input.layout is sparse_coo:
        r = empty_coo(input._shape, dtype, input.sparse_dim())
    else:
        r = SparseTensor(input.layout, (pt.zeros(p[0].shape, dtype=p[0].dtype),
                                        pt.zeros(0, dtype=p[1].dtype), pt.zeros(0, dtype=dtype)),
                         input._shape)
    return r.requires_grad_() if requires_grad else r


@implements("sampled_addmm")
def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` at the stored entries of the
    sparse CSR ``input`` only (``torch.sparse.sampled_addmm``): a CSR result of
    ``input``'s structure, differentiable in ``mat1``, ``mat2`` and the values."""
    if not isinstance(input, SparseTensor) or input.layout is not sparse_csr:
        raise NotImplementedError(
            f"Could not run 'aten::sparse_sampled_addmm' with arguments from the "
            f"'{'CPU' if not isinstance(input, SparseTensor) else _layout_name(input.layout) + 'CPU'}'"
            f" backend: sampled_addmm expects a sparse CSR input")
    if out is not None:
        raise NotImplementedError("sampled_addmm: out= is not supported")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(m, _TensorBase) or m.dim() != 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a dense 2-D matrix, got "
                               f"{getattr(m, 'shape', type(m).__name__)}")
    if input.dim() != 2:
        raise NotImplementedError("sampled_addmm: batched sparse inputs are not supported")
    _check_mm(mat1, mat2, "sampled_addmm")
    if input.dtype is not mat1.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and self to have the same dtype, but "
                           f"got {mat1.dtype._legacy} and {input.dtype._legacy}")
    if (mat1.shape[0], mat2.shape[1]) != input._shape:
        raise RuntimeError(f"sampled_addmm: Expected input to have size "
                           f"{[mat1.shape[0], mat2.shape[1]]}, but got {list(input._shape)}")
    rows, cols = _rows_cols(input)
    prod = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(-1)
    v = input._parts[-1]
    vals = (v if beta == 1 else v * beta) + (prod if alpha == 1 else prod * alpha)
    return input._with_values(vals)


def _t(x):
    return x.t() if isinstance(x, SparseTensor) else x.t()


def dense_add_(dense, sparse, alpha=1):
    """``dense += alpha * sparse`` in place (``Tensor.add_`` with a sparse
    operand, as optimizers apply sparse gradients): only the stored rows
    are touched."""
    if tuple(dense.shape) != sparse._shape:
        raise RuntimeError(f"add_: dense {list(dense.shape)} and sparse {list(sparse._shape)} "
                           "sizes must match")
    S = sparse.to_sparse_coo()
    v = S._parts[1] if alpha == 1 else S._parts[1] * alpha
    if v.dtype is not dense.dtype:
        v = v.to(dense.dtype)
    flat = S._flat_positions()
    if flat.shape[0]:
        dense.view((-1,) + S._shape[S.sparse_dim():]).index_add_(0, flat, v)
    return dense


def _values_op(name, coalesce=True, coo_only=False):
    """torch's sparse form of the elementwise ``name`` (f(0) == 0): ``name`` of
    the stored values, structure kept; a COO input is coalesced first (f of a
    sum of duplicates is not the sum of their f's) unless f is linear."""
    def op(input, *args, **kwargs):
        if coo_only and input.layout is not sparse_coo:
            if name == "nan_to_num":        # no compressed kernel (torch's dispatcher error)
                raise NotImplementedError(f"Could not run 'aten::nan_to_num.out' with arguments "
                                          f"from the '{_layout_name(input.layout)}CPU' backend.")
            raise RuntimeError(f"unsupported tensor layout: {_layout_name(input.layout)}")
        S = input.coalesce() if coalesce and input.layout is sparse_coo else input
        return S._with_values(getattr(_pt(), name)(S._parts[-1], *args, **kwargs))
    op.__name__ = op.__qualname__ = name
    return op


VALUE_OPS = {n: _values_op(n) for n in (
    "abs", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "asinh", "atan", "atanh", "expm1",
    "log1p", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "erf", "erfinv",
    "deg2rad", "rad2deg", "relu", "signbit", "isnan", "isinf", "isposinf", "isneginf")}
VALUE_OPS.update({n: _values_op(n, coo_only=True) for n in ("square", "nan_to_num")})
VALUE_OPS["neg"] = _values_op("neg", coalesce=False)
VALUE_OPS.update({n: _values_op(n, coalesce=False) for n in ("conj_physical", "positive")})


def pow(input, exponent):
    """``input ** exponent`` of a sparse COO tensor and a nonzero scalar
    exponent: the stored values' powers (coalesced first, as torch)."""
    if isinstance(exponent, (_TensorBase, SparseTensor)):
        raise RuntimeError("pow: a sparse tensor can only be raised to a scalar power")
    if input.layout is not sparse_coo:
        raise RuntimeError(f"unsupported tensor layout: {_layout_name(input.layout)}")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    S = input.coalesce()
    return S._with_values(S._parts[-1].pow(exponent))


def index_select(input, dim, index):
    """The slices of a COO tensor at ``index`` along ``dim`` (repeats
    allowed), an uncoalesced COO result as torch's."""
    pt = _pt()
    if input.layout is not sparse_coo:
        raise RuntimeError(f"index_select: unsupported tensor layout: "
                           f"{_layout_name(input.layout)}")
    d = _norm_dims(dim, input.dim())[0]
    if d >= input.sparse_dim():
        v = input._parts[1].index_select(d - input.sparse_dim() + 1, index)
        shape = input._shape[:d] + (index.numel(),) + input._shape[d + 1:]
        return SparseTensor(sparse_coo, (input._parts[0], v), shape, input._coalesced)
    idx = input._parts[0].numpy()
    sel = index.reshape(-1).numpy().astype(_np.int64)
    if sel.size and (sel.min() < -input._shape[d] or sel.max() >= input._shape[d]):
        raise IndexError(f"index out of range in self")
    sel = sel % input._shape[d] if sel.size else sel
    # for each selected position j (in order), the entries whose index along d is sel[j]
    hits = idx[d][None, :] == sel[:, None]
    pos, ent = _np.nonzero(hits)
    new_idx = idx[:, ent].copy()
    new_idx[d] = pos
    shape = input._shape[:d] + (len(sel),) + input._shape[d + 1:]
    return SparseTensor(sparse_coo, (pt.from_numpy(new_idx.astype(_np.int64)),
                                     input._parts[1].index_select(0, pt.from_numpy(ent))),
                        shape, len(ent) <= 1)


def cat(tensors, dim=0):
    """``torch.cat`` of sparse COO tensors: along a sparse dim the
    entries of each, their indices shifted; along a dense dim of hybrid COO
    tensors the values zero-padded (as torch's)."""
    pt = _pt()
    ts = list(tensors)
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    if not all(isinstance(t, SparseTensor) for t in ts):
        raise RuntimeError("Cannot concatenate sparse and dense tensors")
    layout = ts[0].layout
    if layout is not sparse_coo:        # (torch's CPU cat has no compressed kernel)
        raise RuntimeError(f"Sparse {layout.name[7:].upper()} tensors do not have is_contiguous")
    if any(t.layout is not layout for t in ts):
        raise RuntimeError("cat(): all input tensors must have the same layout")
    S = ts
    ref = S[0]
    d = _norm_dims(dim, ref.dim())[0]
    for i, t in enumerate(S):
        if t.dim() != ref.dim() or t.sparse_dim() != ref.sparse_dim():
            raise RuntimeError(f"cat(): tensors must have the same number of sparse and dense "
                               f"dims, but tensor {i} differs")
        for k in range(ref.dim()):
            if k != d and t._shape[k] != ref._shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._shape[k]} but got size {t._shape[k]} "
                                   f"for tensor number {i} in the list.")
    total = _builtins.sum(t._shape[d] for t in S)
    shape = ref._shape[:d] + (total,) + ref._shape[d + 1:]
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = pt.promote_types(dtype, t.dtype)
    idx_parts, val_parts, off = [], [], 0
    sd = ref.sparse_dim()
    for t in S:
        idx, v = t._parts
        v = v.to(dtype) if v.dtype is not dtype else v
        if d < sd:
            if off:
                shift = pt.zeros((idx.shape[0], 1), dtype=pt.int64)
                shift[d, 0] = off
                idx = idx + shift
        else:                       # a dense dim: each one's values padded with zeros
            vd = d - sd + 1
            pad_shape = list(v.shape)
            before, after = list(pad_shape), list(pad_shape)
            before[vd], after[vd] = off, total - off - t._shape[d]
            v = pt.cat([pt.zeros(before, dtype=dtype), v, pt.zeros(after, dtype=dtype)], vd)
        idx_parts.append(idx)
        val_parts.append(v)
        off += t._shape[d]
    r = SparseTensor(sparse_coo, (pt.cat(idx_parts, 1), pt.cat(val_parts, 0)), shape, False)
    return r


def stack(tensors, dim=0):
    """``torch.stack`` of sparse COO tensors: ``cat`` of them unsqueezed."""
    ts = list(tensors)
    if not ts:
        raise ValueError("stack expects a non-empty TensorList")
    if not all(isinstance(t, SparseTensor) for t in ts):
        raise RuntimeError("Cannot stack sparse and dense tensors")
    for i, t in enumerate(ts[1:], 1):
        if t._shape != ts[0]._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ts[0]._shape)} at entry 0 and {list(t._shape)} at "
                               f"entry {i}")
    d = _norm_dims(dim, ts[0].dim() + 1)[0]
    return named(cat([unsqueeze(t, d) for t in ts], d), "StackBackward0")


def bmm(input, mat2):
    """``torch.bmm`` of a batched (3-d) sparse COO tensor and a dense
    ``(b, m, p)`` tensor: a dense result, differentiable in both (each
    batch's entries through :func:`mm`)."""
    pt = _pt()
    if not isinstance(input, SparseTensor) or isinstance(mat2, SparseTensor):
        raise RuntimeError("bmm: expected a sparse COO first argument and a dense second one")
    if input.layout is not sparse_coo:
        raise unsupported("bmm", input.layout)
    if input.dense_dim():
        raise RuntimeError(f"bmm_sparse: Tensor 'self' must have 0 dense dims, but has "
                           f"{input.dense_dim()}")
    if input.dim() != 3 or not isinstance(mat2, _TensorBase) or mat2.dim() != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got {input.dim()}-D and "
                           f"{getattr(mat2, 'dim', lambda: 0)()}-D")
    B, n, m = input._shape
    if mat2.shape[0] != B:
        raise RuntimeError(f"bmm_sparse: 'mat2.size(0)' ({mat2.shape[0]}) must match "
                           f"'self.size(0)' ({B})")
    if mat2.shape[1] != m:
        raise RuntimeError(f"bmm_sparse: 'self.size(2)' ({m}) must match 'mat2.size(1)' "
                           f"({mat2.shape[1]})")
    idx, vals = input._parts
    batch = idx[0].numpy()
    outs = []
    for k in range(B):
        sel = pt.from_numpy(_np.nonzero(batch == k)[0].astype(_np.int64))
        Sk = SparseTensor(sparse_coo, (idx[1:].index_select(1, sel), vals.index_select(0, sel)),
                          (n, m), False)
        outs.append(mm(Sk, mat2[k]))
    if not outs:
        return pt.zeros((0, n, mat2.shape[2]), dtype=mat2.dtype)
    return named(pt.stack(outs), "BmmBackward0")


def narrow_copy(input, dim, start, length):
    """The entries of a COO tensor in ``[start, start + length)`` along
    ``dim`` (``Tensor.narrow_copy``), in their stored order."""
    pt = _pt()
    if input.layout is not sparse_coo:
        raise unsupported("narrow_copy", input.layout)
    d = _norm_dims(dim, input.dim())[0]
    size = input._shape[d]
    start = start + size if start < 0 else start
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"Invalid range to narrow. range(start, start+length) must be a "
                           f"subset of range(0, {size}).")
    shape = input._shape[:d] + (length,) + input._shape[d + 1:]
    idx, vals = input._parts
    if d >= input.sparse_dim():
        return named(SparseTensor(sparse_coo, (idx.clone(), vals.narrow(
            d - input.sparse_dim() + 1, start, length).clone()), shape, input._coalesced),
            "NarrowCopyBackward0")
    a = idx.numpy()
    keep = _np.nonzero((a[d] >= start) & (a[d] < start + length))[0].astype(_np.int64)
    new_idx = a[:, keep].copy()
    new_idx[d] -= start
    return named(SparseTensor(sparse_coo, (pt.from_numpy(new_idx),
                                           vals.index_select(0, pt.from_numpy(keep))),
                              shape, input._coalesced), "NarrowCopyBackward0")


def unsqueeze(input, dim):
    """A COO tensor with a new size-1 sparse dim at ``dim``."""
    pt = _pt()
    if input.layout is not sparse_coo:
        raise RuntimeError(f"unsqueeze: unsupported tensor layout: {_layout_name(input.layout)}")
    d = _norm_dims(dim, input.dim() + 1)[0]
    if d > input.sparse_dim():
        v = input._parts[1].unsqueeze(d - input.sparse_dim() + 1)
        return named(SparseTensor(sparse_coo, (input._parts[0], v),
                                  input._shape[:d] + (1,) + input._shape[d:], input._coalesced),
                     "UnsqueezeBackward0")
    idx = input._parts[0]
    zeros = pt.zeros((1, idx.shape[1]), dtype=idx.dtype)
    new_idx = pt.cat([idx[:d], zeros, idx[d:]], 0)
    return named(SparseTensor(sparse_coo, (new_idx, input._parts[1]),
                              input._shape[:d] + (1,) + input._shape[d:], input._coalesced),
                 "UnsqueezeBackward0")


def sparse_mask(dense, mask):
    """``dense``'s values at the stored positions of the sparse ``mask``, in
    ``mask``'s layout and structure (``Tensor.sparse_mask``)."""
    if tuple(dense.shape) != mask._shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(dense.shape)} but mask has size {list(mask._shape)}")
    S = mask.to_sparse_coo()
    idx = S._parts[0]
    vals = dense[tuple(idx[k] for k in range(S.sparse_dim()))]
    r = SparseTensor(sparse_coo, (idx, vals), S._shape, S._coalesced)
    if mask.layout is not sparse_coo:
        r = r.to_sparse_csr() if mask.layout is sparse_csr else r.to_sparse_csc()
    return named(r, "SparseMaskBackward0")


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of ``shape`` from the rows of ``diagonals`` placed on
    the diagonals ``offsets`` (``torch.sparse.spdiags``, as
    ``scipy.sparse.spdiags``: entry ``(j - offset, j)`` is
    ``diagonals[k, j]``)."""
    pt = _pt()
    if diagonals.dim() != 2:
        raise RuntimeError("Diagonals must be vector for single diagonal, or matrix for "
                           "multiple diagonals")
    if offsets.dim() != 1 or offsets.shape[0] != diagonals.shape[0]:
        raise RuntimeError("Number of diagonals does not match the number of offsets")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    offs = offsets.numpy().astype(_np.int64)
    if len(_np.unique(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    m, n = (int(x) for x in shape)
    rows, cols, take_k, take_j = [], [], [], []
    for k, off in enumerate(offs):
        j = _np.arange(max(0, off), min(n, m + off, diagonals.shape[1]), dtype=_np.int64)
        rows.append(j - off)
        cols.append(j)
        take_k.append(_np.full(len(j), k, _np.int64))
        take_j.append(j)
    idx = _np.stack([_np.concatenate(rows), _np.concatenate(cols)]) if rows else \
        _np.zeros((2, 0), _np.int64)
    vals = diagonals[pt.from_numpy(_np.concatenate(take_k)), pt.from_numpy(_np.concatenate(take_j))]
    r = SparseTensor(sparse_coo, (pt.from_numpy(idx), vals), (m, n), False)
    if layout is None or layout is sparse_coo:
        return r
    if layout is sparse_csr:
        return r.to_sparse_csr()
    if layout is sparse_csc:
        return r.to_sparse_csc()
    raise RuntimeError(f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got "
                       f"{layout!r}")


# the same as SparseTensor methods
for _n, _f in VALUE_OPS.items():
    implements(_n)(_f)
    setattr(SparseTensor, _n, _f)
SparseTensor.pow = SparseTensor.__pow__ = pow
SparseTensor.__abs__ = VALUE_OPS["abs"]
SparseTensor.index_select, SparseTensor.unsqueeze = index_select, unsqueeze
SparseTensor.bmm, SparseTensor.narrow_copy = bmm, narrow_copy


@implements("div", "true_divide", "divide")
def div(input, other, *, rounding_mode=None):
    """``input / other`` of a sparse tensor and a scalar or 0-d dense tensor
    (``Tensor.div``); with a ``rounding_mode`` the entries are coalesced first,
    as torch's (rounding does not distribute over duplicate entries)."""
    if isinstance(other, SparseTensor) or (isinstance(other, _TensorBase) and other.dim() > 0):
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor "
                           f"(got shape {list(other.shape)} for divisor)")
    S = input.coalesce() if rounding_mode is not None and input.layout is sparse_coo else input
    return S._with_values(S._parts[-1].div(other, rounding_mode=rounding_mode))


@implements("div_")
def div_(input, other, *, rounding_mode=None):
    """``Tensor.div_`` of a sparse tensor by a scalar or 0-d dense tensor."""
    r = div(input, other, rounding_mode=rounding_mode)
    if r.dtype is not input.dtype:
        raise RuntimeError(f"result type {r.dtype} can't be cast to the desired output type "
                           f"{input.dtype}")
    input._parts, input._coalesced = r._parts, r._coalesced
    return input


# Tensor methods of the sparse layouts that are the functions above (torch's
# A.mul(2.), A.div(deg), A.sub(B), A.mv(x) of graph and sparse-solver code)
SparseTensor.mul = mul
SparseTensor.div = SparseTensor.true_divide = div
SparseTensor.div_ = div_
SparseTensor.sub = lambda self, other, *, alpha=1: _add(self, other, -alpha, "SubBackward0")
SparseTensor.mv = lambda self, vec: _mm(self, vec, _Mv)


# the ops a sparse argument takes whose implementation is another's call (a sparse tensor
# is a Tensor too: ``s += t`` with ``s`` sparse is the sparse tensor's own add_)
@implements("add_")
def _add_(a, b, alpha=1):
    return a.add_(b, alpha=alpha) if isinstance(a, SparseTensor) else dense_add_(a, b, alpha)


@implements("sub_")
def _sub_(a, b, alpha=1):
    return a.add_(b, alpha=-alpha) if isinstance(a, SparseTensor) else dense_add_(a, b, -alpha)


@implements("mm", "__matmul__")
def _mm_(a, b):
    return _mm(a, b, _Mm)


@implements("__rmatmul__")
def _rmatmul(a, b):
    return _mm(b, a, _Mm)


@implements("mv")
def _mv(a, b):
    return _mm(a, b, _Mv)


@implements("spmm")
def _spmm(a, b):
    return mm(a, b)


@implements("add")
def _add_call(a, b, alpha=1):
    return add(a, b, alpha=alpha)


@implements("__add__")
def _add_op(a, b):
    return add(a, b)


@implements("__radd__")
def _radd(a, b):
    return add(b, a)


@implements("sub")
def _sub(a, b, alpha=1):
    return _add(a, b, -alpha, "SubBackward0")


@implements("__sub__")
def _sub_op(a, b):
    return _add(a, b, -1, "SubBackward0")


@implements("mul", "__mul__", "__rmul__")
def _mul(a, b):
    return mul(a, b)


# (torch.softmax/log_softmax have no sparse kernels: torch.sparse's are the API)
@implements("t")
def _t(a):
    return a.t()


@implements("__neg__")
def _neg_op(a):
    return -a


@implements("addmm")
def _addmm_call(inp, a, b, beta=1, alpha=1):
    return _addmm(inp, a, b, beta, alpha, "AddmmBackward0")


@implements("pow", "__pow__")
def _pow(a, e):
    return pow(a, e)


@implements("__abs__")
def _abs_op(a):
    return VALUE_OPS["abs"](a)


@implements("index_select")
def _index_select(a, dim, index):
    return index_select(a, dim, index)


@implements("unsqueeze")
def _unsqueeze(a, dim):
    return unsqueeze(a, dim)


@implements("cat", "concat")
def _cat(tensors, dim=0):
    return cat(tensors, dim)


@implements("concatenate")
def _concatenate(tensors, axis=0):
    return cat(tensors, axis)


@implements("stack")
def _stack(tensors, dim=0):
    return stack(tensors, dim)


@implements("bmm")
def _bmm(a, b):
    return bmm(a, b)


@implements("narrow_copy")
def _narrow_copy(a, dim, start, length):
    return narrow_copy(a, dim, start, length)


@implements("sparse_mask")
def _sparse_mask(a, mask):
    return sparse_mask(a, mask)


@implements("select")
def _select(a, dim, index):
    return select(a, dim, index)


@implements("smm")
def _smm(a, b):
    return a.smm(b)


@implements("to_dense")
def _to_dense(a, dtype=None):
    return a.to_dense(dtype)


@implements("matmul")
def _matmul(a, b):
    if a.dim() == 1 and b.dim() == 1:       # torch.matmul of vectors is their dot
        raise unsupported("dot", next(t for t in (a, b) if isinstance(t, SparseTensor)).layout)
    return _mm(a, b, _Mm)


@implements("unbind")
def _unbind(a, dim=0):
    """The slices along ``dim`` (``torch.unbind``): COO tensors, of a compressed input too
    (as :func:`select`'s)."""
    d = _norm_dims(dim, a.dim())[0]
    return tuple(select(a, d, i) for i in range(a._shape[d]))


@implements("is_floating_point")
def _is_floating_point(a):
    return a.is_floating_point()


@implements("is_complex")
def _is_complex(a):
    return a.is_complex()


@implements("numel")
def _numel(a):
    return a.numel()


@implements("tensor")
def _tensor_of(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``torch.tensor(sparse)``: a detached sparse copy (with torch's copy-construction
    warning), converted to ``dtype``/``device``."""
    _warn_at_caller(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
        "or sourceTensor.detach().clone().requires_grad_(True), rather than "
        f"{_root_name()}.tensor(sourceTensor).")
    out = data.detach().clone()
    if dtype is not None or device is not None:
        out = out.to(dtype=dtype, device=device)
    return out.requires_grad_(True) if requires_grad else out


@implements("as_tensor")
def _as_tensor_of(data, dtype=None, device=None):
    """``torch.as_tensor(sparse)``: the tensor itself, or its conversion."""
    if dtype is None and device is None:
        return data
    return data.to(dtype=dtype, device=device)


def _first_sparse(args, kwargs):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, SparseTensor):
            return a
        if type(a) in (list, tuple):
            for b in a:
                if isinstance(b, SparseTensor):
                    return b
    return None


def torch_function(func, args, kwargs):
    """What ``ptcore.X(...)`` / ``Tensor.X(...)`` does with a sparse argument
    (``SparseTensor.__torch_function__``): the sparse implementation of the op,
    or the method of that name of the sparse tensor it is called on
    (``Tensor.to(s, ...)``); an op the sparse layouts do not support raises as
    torch's (NotImplementedError for COO, RuntimeError for CSR/CSC)."""
    name = getattr(func, "__name__", None)
    h = implements.get(name)
    if kwargs and "out" in kwargs and kwargs["out"] is None:
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    if h is None:
        if args and isinstance(args[0], SparseTensor) and callable(
                SparseTensor.__dict__.get(name)) and func is not SparseTensor.__dict__[name]:
            return SparseTensor.__dict__[name](*args, **(kwargs or {}))
        sp = _first_sparse(args, kwargs)
        if sp is None:
            return NotImplemented
        raise unsupported(name, sp.layout)
    return h(*args, **(kwargs or {}))


register_ops(handler=implements.get, alias=alias, _tensor_sum=_tensor_sum, add=add, _add=_add,
             torch_function=torch_function, to_dense=to_dense, select=select, mm=mm, _mm=_mm,
             _Mm=_Mm, mul=mul)
