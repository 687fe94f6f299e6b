"""Sparse tensors in COO, CSR and CSC layouts (``torch.sparse_coo_tensor``,
``torch.sparse_csr_tensor``, ``torch.sparse_csc_tensor``) for 2-D matrices
(and N-D COO), with zero-copy exchange with ``scipy.sparse``.

A :class:`SparseTensor` holds its index and value tensors; CSR/CSC index
arrays keep their dtype (int32 or int64, as PyTorch allows), so that
:func:`from_scipy` and :meth:`SparseTensor.to_scipy` share memory with SciPy's
``indptr``/``indices``/``data`` arrays.  COO indices are PyTorch's ``(ndim,
nnz)`` int64 matrix: SciPy keeps rows and columns in two arrays, so the
indices are copied on the way in and out (the values are shared).
"""
import functools as _functools
import operator as _operator

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._tensor_str import _sparse_str
from ptcore.tensor import _parse_to, _wrapper_strides, Tensor as _Tensor
import ptcore.sparse._index_ops as _ix

__all__ = ["SparseTensor", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_coo_tensor",
           "sparse_csr_tensor", "sparse_csc_tensor", "sparse_compressed_tensor", "from_scipy",
           "to_sparse", "check_sparse_tensor_invariants"]


# the layouts are the core's (ptcore.layout, one object each)
_Layout = _C.layout
sparse_coo, sparse_csr, sparse_csc = _C.sparse_coo, _C.sparse_csr, _C.sparse_csc


def _pt():
    import ptcore
    return ptcore


def _as_tensor(v, dtype=None):
    pt = _pt()
    if isinstance(v, _TensorBase):
        return v if dtype is None or v.dtype is dtype else v.to(dtype)
    return pt.as_tensor(v, dtype=dtype)


# the sparse ops the methods below call (ptcore.sparse._ops, which builds on
# this class): registered by that module at its import (the package imports it)
_OPS = {}


def register_ops(**fns):
    """Make the sparse ops ``fns`` (by name) what SparseTensor's methods call."""
    _OPS.update(fns)


def _rows_cols(S):
    """int64 row and column index tensors of every stored entry (2-D)."""
    pt = _pt()
    p = S._parts
    if S.layout is sparse_coo:
        return p[0][0], p[0][1]
    if not _ix.on_host(p[0]):
        major, minor = _ix.major_of(p[0]), p[1].to(pt.int64)
        return (major, minor) if S.layout is sparse_csr else (minor, major)
    comp = p[0].numpy().astype(_np.int64)
    counts = _np.diff(comp)
    major = pt.from_numpy(_np.repeat(_np.arange(len(counts), dtype=_np.int64), counts))
    minor = p[1].to(pt.int64)
    return (major, minor) if S.layout is sparse_csr else (minor, major)


def _layout_name(layout):
    return {"sparse_coo": "Sparse", "sparse_csr": "SparseCsr", "sparse_csc": "SparseCsc"}[
        layout.name]


def unsupported(name, layout):
    """torch's error for an op the sparse ``layout`` has no kernel for."""
    if layout is sparse_coo:
        return NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. This "
            f"could be because the operator doesn't exist for this backend.")
    return RuntimeError(f"unsupported tensor layout: {_layout_name(layout)}")


class SparseTensor(_Tensor):
    """A sparse matrix (or N-D COO array) in ``layout``.

    A subclass of :class:`ptcore.Tensor`, as torch's sparse tensors are Tensors
    (``isinstance(s, ptcore.Tensor)`` is True): made by
    ``Tensor._make_wrapper_subclass``, it has the core's sizes, dtype and device
    and no data of its own, so a dense kernel reached by mistake raises
    ``RuntimeError`` instead of reading memory.  Its ``__torch_function__``
    routes the ptcore functions and Tensor methods it reaches to the sparse
    implementations (an op the sparse layouts lack raises as torch's).  It
    holds its index and value tensors and supports the sparse API
    (``indices``/``values``/``crow_indices``/..., ``coalesce``, ``to_dense``,
    conversions, ``mm``/``@`` with a dense operand), the autograd attributes
    (of its values: the structure takes no part in autograd) and ``to_scipy``.
    """

    __slots__ = ("layout", "_shape", "_parts", "_coalesced", "_is_param")

    # operator schemas take it for a ``Tensor`` argument (``ptcore.ops.aten.mm(sparse,
    # dense)``, as torch's operators take a sparse tensor): see op_schema.is_tensor
    _schema_tensor = True
    # what ptcore.tensor._is_sparse_tensor reads (code that reads a Tensor's strided
    # memory takes another path for it)
    _ptc_sparse = True
    # its __torch_function__ runs its ops inside DisableTorchFunction[Subclass] too (torch
    # computes sparse tensors with a dispatch key of their own, below the protocol)
    _ptc_layout_tf = True

    def __new__(cls, layout, parts, shape, coalesced=False):
        # the core's metadata (sizes, dtype, device of the values) over no data
        sizes = [_operator.index(s) for s in shape]
        v = parts[-1]
        return _C._make_wrapper_impl(cls, sizes, _wrapper_strides(sizes), 0, v.dtype, v.device,
                                     False)

    def __init__(self, layout, parts, shape, coalesced=False):
        self.layout = layout
        self._parts = parts
        self._shape = tuple(int(s) for s in shape)
        self._coalesced = coalesced

    def _sync_core(self):
        """Make the core's sizes, dtype and device those of this tensor again (after
        ``data =``/``copy_`` gave it other parts)."""
        sizes = list(self._shape)
        v = self._parts[-1]
        _C._set_data(self, _C._make_wrapper_impl(_Tensor, sizes, _wrapper_strides(sizes), 0,
                                                 v.dtype, v.device, False))

    def __reduce_ex__(self, proto):
        # (pickle, deepcopy: the parts, rebuilt as they were; the values keep requires_grad)
        return (_rebuild, (self.layout, self._parts, self._shape, self._coalesced,
                           getattr(self, "_is_param", False)))

    def __copy__(self):
        return SparseTensor(self.layout, self._parts, self._shape, self._coalesced)

    def __deepcopy__(self, memo):
        import copy
        r = SparseTensor(self.layout, copy.deepcopy(self._parts, memo), self._shape,
                         self._coalesced)
        if getattr(self, "_is_param", False):
            r._is_param = True
        memo[id(self)] = r
        return r

    # -- metadata ----------------------------------------------------------
    @property
    def shape(self):
        return _C.Size(self._shape) if hasattr(_C, "Size") else _pt().Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._shape[_operator.index(dim)]

    def dim(self):
        return len(self._shape)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._parts[-1].dtype

    @property
    def device(self):
        return self._parts[-1].device

    @property
    def is_sparse(self):
        return self.layout is sparse_coo

    @property
    def is_sparse_csr(self):
        return self.layout is sparse_csr

    # -- autograd: that of the values (the structure never takes part) ---------
    @property
    def requires_grad(self):
        """Whether the values take part in autograd (the structure never does)."""
        return self._parts[-1].requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._parts[-1].requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        """True unless the tensor was made by a differentiable op (as torch: a
        tensor built from values that require grad is not a leaf)."""
        return self._parts[-1].is_leaf

    @property
    def grad(self):
        """The gradient of the values, in this tensor's layout (or None)."""
        return self._grad_of_values(self._parts[-1].grad)

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, SparseTensor) or value._shape != self._shape or \
                    value.layout is not self.layout:
                raise RuntimeError(f"assigned grad has data of a different size or layout: "
                                   f"expected a sparse {self.layout.name[7:]} tensor of size "
                                   f"{list(self._shape)}")
            if not all(a.shape == b.shape and bool((a == b).all())
                       for a, b in zip(value._parts[:-1], self._parts[:-1])):
                raise RuntimeError("assigning the gradient of a sparse tensor needs the "
                                   "tensor's own index structure")
            value = value._parts[-1]
        self._parts[-1].grad = value

    def retain_grad(self):
        self._parts[-1].retain_grad()

    @property
    def retains_grad(self):
        return self._parts[-1].retains_grad

    @property
    def data(self):
        """This tensor detached (the same index and value memory)."""
        return self.detach()

    @data.setter
    def data(self, other):
        """Make this tensor hold ``other``'s structure and (detached) values,
        keeping its own ``requires_grad`` (as ``Module._apply`` replaces a
        parameter's data)."""
        if not isinstance(other, SparseTensor):
            raise RuntimeError(f"data set to a tensor that requires gradients must match its "
                               f"layout: expected a sparse tensor, got {type(other).__name__}")
        v = other._parts[-1].detach()
        if self.requires_grad:
            v.requires_grad_()
        self.layout, self._shape, self._coalesced = other.layout, other._shape, other._coalesced
        self._parts = other._parts[:-1] + (v,)
        self._sync_core()

    def _grad_of_values(self, g):
        """A gradient ``g`` of the values as a sparse tensor of this structure."""
        if g is None:
            return None
        if self.layout is sparse_coo and not self._coalesced and g.shape[0] > 1:
            # duplicates share one position: its gradient once (coalesced, as torch)
            pt = _pt()
            if not _ix.on_host(g):
                lin = _ix.ravel(self._parts[0], self._sshape())
                uniq, inv = _ix.unique_inverse(lin)
                # the first entry of each position: the smallest entry number among equals
                n = lin.shape[0]
                first = pt.full((uniq.shape[0],), n, dtype=pt.int64, device=g.device).scatter_reduce(
                    0, inv, pt.arange(n, device=g.device), "amin", include_self=True)
                return SparseTensor(sparse_coo, (_ix.unravel(uniq, self._sshape()).reshape(
                    self._parts[0].shape[0], -1), g[first]), self._shape, True)
            idx = self._parts[0].numpy()
            lin = _np.ravel_multi_index(tuple(idx), self._sshape())
            uniq, first = _np.unique(lin, return_index=True)
            new_idx = _np.stack(_np.unravel_index(uniq, self._sshape())).astype(_np.int64)
            return SparseTensor(sparse_coo, (pt.from_numpy(new_idx.reshape(idx.shape[0], -1)),
                                             g[pt.from_numpy(first.astype(_np.int64))]),
                                self._shape, True)
        return SparseTensor(self.layout, self._parts[:-1] + (g,), self._shape, self._coalesced)

    @property
    def grad_fn(self):
        return self._parts[-1].grad_fn

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def is_meta(self):
        return False

    @property
    def is_quantized(self):
        return False

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def element_size(self):
        return self.dtype.itemsize

    def get_device(self):
        return -1

    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    def sparse_dim(self):
        return self._parts[0].shape[0] if self.layout is sparse_coo else 2

    def dense_dim(self):
        return len(self._shape) - self.sparse_dim()

    def _no_dense_dims(self, what):
        if self.dense_dim():
            raise NotImplementedError(f"{what} of a hybrid sparse tensor (values with "
                                      f"{self.dense_dim()} dense dims) is not supported")

    def _sshape(self):
        """The sizes of the sparse dims."""
        return self._shape[:self.sparse_dim()]

    def _with_values(self, v):
        return SparseTensor(self.layout, self._parts[:-1] + (v,), self._shape, self._coalesced)

    def _named(self, node):
        """This tensor with its values behind an identity node named ``node``
        (the node torch records for the op that made it) when they take part
        in autograd; the gradient is unchanged."""
        v = self._parts[-1]
        if not (v.requires_grad and _pt().is_grad_enabled()):
            return self
        return self._with_values(_OPS["alias"](v, node))

    def to(self, *args, **kwargs):
        """This tensor on ``device`` (its index and value tensors moved; the
        values' move is differentiable) and/or with its values converted to
        ``dtype`` (``Tensor.to``'s overloads: ``to(dtype)``, ``to(device,
        dtype)``, ``to(other)``, ``non_blocking=``, ``copy=``)."""
        if args and isinstance(args[0], SparseTensor):
            args = (args[0].device, args[0].dtype) + tuple(args[1:])
        device, dtype, non_blocking, copy, _ = _parse_to(args, dict(kwargs))
        r = self
        if device is not None:
            moved = tuple(p.to(device, non_blocking=bool(non_blocking)) for p in self._parts)
            if any(a is not b for a, b in zip(moved, self._parts)):
                r = SparseTensor(self.layout, moved, self._shape, self._coalesced)
                copy = False
        v = r._parts[-1]
        if dtype is not None and dtype is not v.dtype:
            return r._with_values(v.to(dtype))
        return r.clone() if copy else r

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The legacy type name (``'ptcore.sparse.FloatTensor'``), or this tensor
        converted to ``dtype`` (a dtype, a legacy type or its name)."""
        if dtype is None:
            if self.layout is not sparse_coo:
                raise RuntimeError(f"Unimplemented backend "
                                   f"{'SparseCsrCPU' if self.layout is sparse_csr else 'SparseCscCPU'}")
            return f"{_C.root_name()}.sparse.{self.dtype._legacy}Tensor"
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            match = [d for d in _C._all_dtypes() if d._legacy + "Tensor" == name]
            if not match or ".cuda." in dtype:
                raise ValueError(f"invalid type: '{dtype}'")
            return self.to(match[0])
        if isinstance(getattr(dtype, "dtype", None), _C.dtype) and isinstance(dtype, type):
            return self.to(dtype.dtype)                   # a legacy type (ptcore.sparse.X)
        return self.to(_C._as_dtype(dtype))

    def type_as(self, other):
        if not isinstance(other, SparseTensor):
            raise RuntimeError("to(options) doesn't support converting to a different layout, "
                               "but got self.layout being Sparse and options.layout set as "
                               "Strided")
        return self.to(other.dtype)

    def detach(self):
        return self._with_values(self._parts[-1].detach())

    def clone(self):
        return SparseTensor(self.layout, tuple(p.clone() for p in self._parts), self._shape,
                            self._coalesced)

    def transpose(self, dim0, dim1):
        n = self.dim()
        for d in (dim0, dim1):
            if not -max(n, 1) <= _operator.index(d) < max(n, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-max(n, 1)}, {max(n, 1) - 1}], but got {d})")
        if n == 0:
            return self
        d0, d1 = (_operator.index(dim0) % n, _operator.index(dim1) % n)
        if d0 == d1:
            return self
        sd = self.sparse_dim()
        if self.layout is sparse_coo and (d0 >= sd or d1 >= sd):
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                               f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
        if self.dim() == 2:
            return self._t()._named("TransposeBackward0")
        S = self.to_sparse_coo()
        perm = list(range(self.dim()))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        shape = tuple(self._shape[p] for p in perm)
        return SparseTensor(sparse_coo, (S._parts[0][perm[:sd]], S._parts[1]), shape,
                            S._nnz() == 0)._named("TransposeBackward0")

    def permute(self, *dims):
        """The dims of a COO tensor reordered (``Tensor.permute``): sparse dims
        among themselves, dense dims among themselves, as torch's."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        n = self.dim()
        if len(dims) != n:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                               f"does not match the length of the desired ordering of "
                               f"dimensions i.e. input.dim() = {n} is not equal to "
                               f"len(dims) = {len(dims)}")
        perm = []
        for d in dims:
            d = _operator.index(d)
            if not -n <= d < n:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                                 f"{n - 1}], but got {d})")
            perm.append(d % n)
        if len(set(perm)) != n:
            raise RuntimeError("permute(sparse_coo): duplicate dims are not allowed.")
        if self.layout is not sparse_coo:
            raise unsupported("permute", self.layout)
        sd = self.sparse_dim()
        if any((p < sd) != (k < sd) for k, p in enumerate(perm)):
            raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                               "dimensions are not allowed.Only transpositions within sparse "
                               "and dense dimensions are supported.")
        idx, vals = self._parts
        if perm[sd:] != list(range(sd, n)):
            vals = vals.permute(0, *(p - sd + 1 for p in perm[sd:]))
        ident = perm[:sd] == list(range(sd))
        r = SparseTensor(sparse_coo, (idx if ident else idx[perm[:sd]], vals),
                         tuple(self._shape[p] for p in perm),
                         self._coalesced and ident or self._nnz() == 0)
        return r._named("PermuteBackward0")

    def is_contiguous(self, *, memory_format=None):
        """False: a sparse tensor has no strided memory (torch's answer)."""
        return False

    def stride(self, dim=None):
        """Zeros (torch reports no strides for a sparse COO tensor)."""
        if self.layout is not sparse_coo:
            raise RuntimeError(f"Sparse {self.layout.name[7:].upper()} tensors do not have "
                               f"strides")
        st = (0,) * self.dim()
        return st if dim is None else st[_operator.index(dim)]

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def any(self, *args, **kwargs):
        """Whether any stored value is nonzero (torch's ``any()`` of a sparse
        tensor: a dense 0-d bool); ``any(dim)`` raises as torch."""
        if args or kwargs:
            raise unsupported("any.dim", self.layout)
        return (self._parts[-1].detach() != 0).any()

    # comparisons: no sparse kernels (torch's NotImplementedError / RuntimeError)
    def _compare(self, other, op):
        kind = "Tensor" if isinstance(other, (_TensorBase, SparseTensor)) else "Scalar"
        raise unsupported(f"{op}.{kind}", self.layout)

    __eq__ = lambda self, other: self._compare(other, "eq")     # noqa: E731
    __ne__ = lambda self, other: self._compare(other, "ne")     # noqa: E731
    __lt__ = lambda self, other: self._compare(other, "lt")     # noqa: E731
    __le__ = lambda self, other: self._compare(other, "le")     # noqa: E731
    __gt__ = lambda self, other: self._compare(other, "gt")     # noqa: E731
    __ge__ = lambda self, other: self._compare(other, "ge")     # noqa: E731
    __hash__ = object.__hash__

    def sum(self, dim=None, keepdim=False, dtype=None):
        return _OPS["_tensor_sum"](self, dim, keepdim, dtype)

    def add(self, other, *, alpha=1):
        return _OPS["add"](self, other, alpha=alpha)

    def __add__(self, other):
        return self.add(other)

    def __radd__(self, other):
        return _OPS["add"](other, self)

    def __sub__(self, other):
        return _OPS["_add"](self, other, -1, "SubBackward0")

    # in place (what optimizers do with sparse gradients and buffers)
    def add_(self, other, *, alpha=1):
        """``self += alpha * other`` for a sparse ``other`` of the same size
        (entries appended: the result is uncoalesced, as torch's)."""
        r = self.add(other, alpha=alpha)
        if not isinstance(r, SparseTensor):
            raise RuntimeError("add_: a sparse tensor can only be updated in place by a sparse one")
        self.layout, self._parts, self._coalesced = r.layout, r._parts, r._coalesced
        return self

    def mul_(self, s):
        if isinstance(s, (_TensorBase, SparseTensor)) and getattr(s, "dim", lambda: 0)() > 0:
            raise RuntimeError("mul_ of a sparse tensor is only supported by a scalar")
        self._parts[-1].mul_(s)
        return self

    def zero_(self):
        """No stored entries (``Tensor.zero_`` of a sparse tensor)."""
        if self.layout is not sparse_coo:
            self.layout, self._parts = sparse_coo, self.to_sparse_coo()._parts
        self._parts = empty_coo(self._shape, self.dtype, self._parts[0].shape[0])._parts
        self._coalesced = True
        return self

    def __neg__(self):
        return self._with_values(-self._parts[-1])

    def __truediv__(self, s):
        if isinstance(s, (_TensorBase, SparseTensor)) and getattr(s, "dim", lambda: 0)() > 0:
            raise RuntimeError("sparse division is only supported by a scalar")
        return self._with_values(self._parts[-1] / s)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def __array__(self, dtype=None, copy=None):
        # np.asarray(s) raises as torch's (it built a 0-d object array)
        self.numpy()

    # no strided storage (torch's errors: a sparse tensor has none)
    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    storage = _typed_storage = share_memory_ = is_shared = storage_type = untyped_storage

    @property
    def nbytes(self):
        raise RuntimeError("nbytes is not defined for sparse tensors.  If you want the size of "
                           "the constituent tensors, add the nbytes of the indices and values.  "
                           "If you want the size of the  equivalent dense tensor, multiply "
                           "numel() by element_size()")

    def __dlpack__(self, *args, **kwargs):
        raise BufferError("Can't export tensors with layout other than torch.strided")

    def __getattr__(self, name):
        # a Tensor method the sparse layouts have no kernel for raises when
        # called, as torch's (the attribute exists)
        import ptcore
        if not name.startswith("_") and callable(getattr(ptcore.Tensor, name, None)):
            handler = _OPS["handler"](name)
            if handler is not None:     # the method of an op the sparse layouts implement
                return _functools.partial(handler, self)
            layout = self.layout

            def method(*args, **kwargs):
                raise unsupported(name, layout)
            return method
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _OPS["torch_function"](func, args, kwargs)

    def _nnz(self):
        return int(self._parts[-1].shape[0])

    def __repr__(self):
        r = _sparse_str(self, self._parts)
        # (a parameter: nn.Parameter(sparse) flags the tensor itself)
        return "Parameter containing:\n" + r if getattr(self, "_is_param", False) else r

    # -- parts -------------------------------------------------------------
    def _need(self, layout, what):
        if self.layout is not layout:
            raise RuntimeError(f"{what} expected sparse {layout.name[7:]} tensor layout but got "
                               f"{self.layout.name.capitalize().replace('_', '')}")

    def indices(self):
        self._need(sparse_coo, "indices")
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._parts[0]

    def values(self):
        if self.layout is sparse_coo and not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        v = self._parts[-1]
        if v.requires_grad and _pt().is_grad_enabled():
            return _OPS["alias"](v, "ValuesBackward0")      # (an alias of them, as torch's)
        return v

    def _indices(self):
        self._need(sparse_coo, "_indices")
        return self._parts[0]

    def _values(self):
        return self._parts[-1]

    def crow_indices(self):
        self._need(sparse_csr, "crow_indices")
        return self._parts[0]

    def col_indices(self):
        self._need(sparse_csr, "col_indices")
        return self._parts[1]

    def ccol_indices(self):
        self._need(sparse_csc, "ccol_indices")
        return self._parts[0]

    def row_indices(self):
        self._need(sparse_csc, "row_indices")
        return self._parts[1]

    def _coalesced_(self, coalesced):
        """Mark this COO tensor coalesced or not, in place (torch's; the caller vouches
        for sorted, unique indices)."""
        self._need(sparse_coo, "_coalesced_")
        self._coalesced = bool(coalesced)
        return self

    def is_coalesced(self):
        self._need(sparse_coo, "is_coalesced")
        return self._coalesced

    # -- conversions -------------------------------------------------------
    def to_scipy(self):
        """The matrix as a ``scipy.sparse`` array sharing this tensor's memory
        (CSR/CSC: index and value arrays; COO: the values)."""
        import scipy.sparse as sp
        self._no_dense_dims("to_scipy")
        if self.dim() != 2:
            raise RuntimeError(f"to_scipy expects a 2-D sparse tensor, got {self.dim()}-D")
        p = [t.numpy() for t in self._parts]
        if self.layout is sparse_coo:
            return sp.coo_array((p[1], (p[0][0], p[0][1])), shape=self._shape, copy=False)
        cls = sp.csr_array if self.layout is sparse_csr else sp.csc_array
        return cls((p[2], p[1], p[0]), shape=self._shape, copy=False)

    def coalesce(self):
        """Indices sorted (row-major) and duplicates summed."""
        self._need(sparse_coo, "coalesce")
        if self._coalesced:
            return self
        pt = _pt()
        vals = self._parts[1]
        if self._parts[0].shape[1] == 0:
            return SparseTensor(sparse_coo, (self._parts[0].clone(), vals.clone()),
                                self._shape, True)
        if not _ix.on_host(vals) or self._parts[0].shape[0] == 0:
            # (also no sparse dims: every entry at the one position, summed)
            idx, out = _ix.coalesce(self._parts[0], vals, self._sshape())
            return SparseTensor(sparse_coo, (idx, out), self._shape, True)
        idx = self._parts[0].numpy()
        lin = _np.ravel_multi_index(tuple(idx), self._sshape())
        uniq, inv = _np.unique(lin, return_inverse=True)
        out = pt.zeros((len(uniq),) + tuple(vals.shape[1:]), dtype=vals.dtype)
        out.index_add_(0, pt.from_numpy(inv.reshape(-1).astype(_np.int64)), vals)
        new_idx = _np.stack(_np.unravel_index(uniq, self._sshape())).astype(_np.int64)
        new_idx = new_idx.reshape(idx.shape[0], -1)
        return SparseTensor(sparse_coo, (pt.from_numpy(new_idx), out), self._shape, True)

    def _coo_rows(self):
        """``(flat, values, tail)`` of a coalesced copy: the flat positions of the
        stored entries over the sparse dims, their values and the dense-dim sizes, so
        that ``dense.view((-1,) + tail)[flat]`` are the entries' rows (what optimizers
        update lazily from a sparse gradient)."""
        S = self.to_sparse_coo().coalesce()
        return S._flat_positions(), S._parts[1], S._shape[S.sparse_dim():]

    def _flat_positions(self):
        """int64 positions of the stored entries in the row-major flattening
        of the sparse dims (duplicates of an uncoalesced tensor kept)."""
        pt = _pt()
        if self.layout is sparse_coo and self._parts[0].shape[0] == 0:
            # no sparse dims (a 0-d tensor's): every stored entry is the one position
            return pt.zeros(self._parts[0].shape[1], dtype=pt.int64, device=self.device)
        if not _ix.on_host(self._parts[0]):
            if self.layout is sparse_coo:
                return _ix.ravel(self._parts[0], self._sshape())
            rows, cols = _rows_cols(self)
            return rows * self._shape[1] + cols
        if self.layout is sparse_coo:
            idx = self._parts[0]
            if idx.shape[0] == 1:
                return idx[0]
            return pt.from_numpy(_np.ravel_multi_index(tuple(idx.numpy()), self._sshape())
                                 .astype(_np.int64).reshape(-1))
        comp = self._parts[0].numpy().astype(_np.int64)
        major = _np.repeat(_np.arange(len(comp) - 1, dtype=_np.int64), _np.diff(comp))
        minor = self._parts[1].numpy().astype(_np.int64)
        rows, cols = (major, minor) if self.layout is sparse_csr else (minor, major)
        return pt.from_numpy(rows * self._shape[1] + cols)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (duplicate entries summed); differentiable in the
        values (``ToDenseBackward0``)."""
        r = _OPS["to_dense"](self)
        return r if dtype is None else r.to(dtype)

    def to_sparse_coo(self):
        if self.layout is sparse_coo:
            return self
        pt = _pt()
        if not _ix.on_host(self._parts[0]) or self._parts[-1].requires_grad:
            # (by index arithmetic: the values keep their graph)
            rows, cols = _rows_cols(self)
            r = SparseTensor(sparse_coo, (pt.stack([rows, cols]), self._parts[-1]), self._shape,
                             self.layout is sparse_csr)
            return (r.coalesce() if self.layout is sparse_csc else r)._named("ToSparseBackward1")
        c = self.to_scipy().tocoo()
        idx = _np.stack([c.row, c.col]).astype(_np.int64)
        vals = pt.from_numpy(_np.ascontiguousarray(c.data))
        r = SparseTensor(sparse_coo, (pt.from_numpy(idx), vals), self._shape, False)
        return r.coalesce() if self.layout is sparse_csc else \
            SparseTensor(sparse_coo, r._parts, self._shape, True)

    to_sparse = to_sparse_coo

    def _to_compressed(self, layout):
        """This 2-D tensor in ``layout`` by index arithmetic on its device."""
        S = self.to_sparse_coo()
        if layout is sparse_csc:
            S = S.t()
        S = S.coalesce()
        idx, vals = S._parts
        comp = _ix.compress(idx[0], S._shape[0])
        shape = self._shape
        return SparseTensor(layout, (comp, idx[1].clone(), vals), shape)

    def to_sparse_csr(self):
        if self.layout is sparse_csr:
            return self
        return self._convert(sparse_csr)

    def to_sparse_csc(self):
        if self.layout is sparse_csc:
            return self
        return self._convert(sparse_csc)

    def _convert(self, layout):
        """This 2-D tensor in the compressed ``layout``: from a COO tensor with
        int64 indices as torch's; differentiable in the values."""
        if self.layout is sparse_coo and self.sparse_dim() != 2:
            name = layout.name[7:]
            raise RuntimeError(f"coo_to_sparse_{name}: conversion from Sparse to "
                               f"Sparse{name.capitalize()} for input tensors with sparse_dim()!=2 "
                               f"is not supported")
        if not _ix.on_host(self._parts[0]) or self._parts[-1].requires_grad or self.dense_dim():
            r = self._to_compressed(layout)
        else:
            src = self.coalesce() if self.layout is sparse_coo else self
            m = src.to_scipy()
            m = m.tocsr() if layout is sparse_csr else m.tocsc()
            if self.layout is sparse_coo:
                m.indptr, m.indices = m.indptr.astype(_np.int64), m.indices.astype(_np.int64)
            r = from_scipy(m)
        return r._named("ToSparseCsrBackward0" if layout is sparse_csr else
                        "ToSparseCscBackward0")

    def t(self):
        if self.dim() == 1:     # (torch's sparse t() transposes dims 0 and 1)
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.dim()}D")
        if self.dense_dim():
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and {self.dense_dim()} dense "
                               f"dimensions")
        return self._t()._named("TBackward0")

    def _t(self):
        p = self._parts
        shape = self._shape[::-1]
        if self.layout is sparse_coo:
            return SparseTensor(sparse_coo, (p[0].flip(0), p[1]), shape, self._nnz() == 0)
        other = sparse_csc if self.layout is sparse_csr else sparse_csr
        return SparseTensor(other, p, shape)

    @property
    def mT(self):
        if self.dim() < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of "
                               f"matrices. Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def mH(self):
        r = self.mT
        return r._with_values(r._parts[-1].conj()) if self.is_complex() else r

    @property
    def T(self):
        if self.dim() <= 2:
            return self.t() if self.dim() == 2 else self
        S = self.to_sparse_coo()
        return SparseTensor(sparse_coo, (S._parts[0].flip(0), S._parts[1]), self._shape[::-1],
                            False)

    @property
    def H(self):
        r = self.T
        return r._with_values(r._parts[-1].conj()) if self.is_complex() else r

    def select(self, dim, index):
        return _OPS["select"](self, dim, index)

    def __getitem__(self, key):
        """Integer indexing (``s[i]``, ``s[i, j]``): successive ``select`` on the
        leading dims, as torch's sparse tensors allow (slices are not supported)."""
        keys = key if isinstance(key, tuple) else (key,)
        r = self
        for k in keys:
            if isinstance(k, bool) or not isinstance(k, (int, _np.integer)) and not (
                    hasattr(k, "__index__") and getattr(k, "dim", lambda: 0)() == 0):
                raise NotImplementedError(
                    f"indexing a sparse tensor supports integers only, got "
                    f"{type(k).__name__} (torch has no sparse kernel for it either)")
            k = _operator.index(k)
            if not -r.shape[0] <= k < r.shape[0]:
                raise IndexError(f"index {k} is out of bounds for dimension 0 with size "
                                 f"{r.shape[0]}")
            r = r.select(0, k)
        return r

    def copy_(self, src, non_blocking=False):
        """Make this tensor a copy of the sparse ``src`` (its structure and
        values, converted to this tensor's dtype), as torch's sparse ``copy_``."""
        if not isinstance(src, SparseTensor):
            raise RuntimeError("copy_() between dense and sparse Tensors is not implemented! "
                               "Found self type = sparse and src type = dense")
        if src._shape != self._shape:
            raise RuntimeError(f"copy_: sizes {list(src._shape)} and {list(self._shape)} differ")
        v = src._parts[-1].detach().to(self.dtype).clone()
        if self.requires_grad:
            v.requires_grad_()
        self.layout, self._coalesced = src.layout, src._coalesced
        self._parts = tuple(p.clone() for p in src._parts[:-1]) + (v,)
        self._sync_core()
        return self

    def smm(self, mat):
        """``self @ mat`` as a sparse COO tensor (``Tensor.smm``)."""
        return _OPS["mm"](self, mat).to_sparse()

    def mm(self, other):
        return _OPS["_mm"](self, other, _OPS["_Mm"])

    def __matmul__(self, other):
        return self.mm(other)

    def __rmatmul__(self, other):
        return _OPS["_mm"](other, self, _OPS["_Mm"])

    def __mul__(self, s):
        return _OPS["mul"](self, s)

    __rmul__ = __mul__


def _rebuild(layout, parts, shape, coalesced, is_param=False):
    """Unpickle a :class:`SparseTensor` (``SparseTensor.__reduce_ex__``)."""
    if not isinstance(layout, _Layout) or not isinstance(parts, tuple) or \
            not all(isinstance(p, _TensorBase) for p in parts) or \
            len(parts) != (2 if layout is sparse_coo else 3):
        raise RuntimeError("corrupt sparse tensor pickle")
    r = SparseTensor(layout, parts, shape, coalesced)
    if is_param:
        r._is_param = True
    return r


def _cast_method(name, dtype_name):
    def cast(self, memory_format=None):
        return self.to(getattr(_C, dtype_name))
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to(ptcore.{dtype_name.rstrip('_')})``."
    return cast


for _name, _dt in (("half", "float16"), ("float", "float32"), ("double", "float64"),
                   ("bfloat16", "bfloat16"), ("cfloat", "complex64"), ("cdouble", "complex128"),
                   ("byte", "uint8"), ("char", "int8"), ("short", "int16"), ("int", "int32"),
                   ("long", "int64"), ("bool", "bool_")):
    setattr(SparseTensor, _name, _cast_method(_name, _dt))
del _name, _dt


def _values_alias(vals, node):
    """``vals`` as the values of a new sparse tensor: detached unless they
    require grad; then (as torch) behind an identity node named ``node``, so
    that the sparse tensor is not a leaf and gradients reach ``vals``."""
    if not vals.requires_grad:
        return vals.detach()    # the same memory; requires_grad_() on the result leaves it alone
    return _OPS["alias"](vals, node)


def empty_coo(shape, dtype, sparse_dim=None):
    """A COO tensor of ``shape`` with no stored entries (``sparse_dim``
    sparse dims, all by default)."""
    pt = _pt()
    sd = len(shape) if sparse_dim is None else sparse_dim
    return SparseTensor(sparse_coo, (pt.zeros((sd, 0), dtype=pt.int64),
                                     pt.zeros((0,) + tuple(shape[sd:]), dtype=dtype)),
                        shape, True)


def _infer_size(idx, size):
    if size is not None:
        return tuple(_operator.index(s) for s in size)
    if idx.shape[1] == 0:
        return (0,) * idx.shape[0]
    return tuple(int(v) + 1 for v in idx.amax(1).tolist())


def _target_device(device, *parts):
    """The device of a new sparse tensor: ``device`` when given, else that of
    its values (the last part)."""
    return _pt().device(device) if device is not None else parts[-1].device


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A COO sparse tensor from ``indices`` ``(ndim, nnz)`` and ``values``
    ``(nnz,)`` (``torch.sparse_coo_tensor``); duplicates are kept until
    :meth:`~SparseTensor.coalesce`."""
    idx = _as_tensor(indices)
    if idx.dtype is not _C.int64:
        # as torch: indices of any dtype are converted (floats truncated: ptwt builds its
        # sparse wavelet matrices from float aranges)
        idx = idx.to(_C.int64)
    vals = _as_tensor(values, dtype)
    dev = _target_device(device, idx, vals)
    idx, vals = idx.to(dev), vals.to(dev)
    if idx.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.dim() < 1:
        raise RuntimeError("values must have at least one dimension (nnz)")
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{idx.shape[1]}, nnz from values: {vals.shape[0]}")
    sd, dense = idx.shape[0], tuple(vals.shape[1:])
    if size is None:
        shape = _infer_size(idx, None) + dense
    else:
        shape = tuple(_operator.index(x) for x in size)
    if len(shape) != sd + len(dense):
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sd}) + dense_dim "
                           f"({len(dense)}), but got {len(shape)}")
    if shape[sd:] != dense:
        raise RuntimeError(f"values has incorrect size, expected {list((idx.shape[1],) + shape[sd:])}, "
                           f"got {list(vals.shape)}")
    if idx.numel():
        # (one small read of per-dim extremes: the indices may be on a device)
        if int(idx.min()) < 0:
            raise RuntimeError("found negative index")
        for d, m in enumerate(idx.amax(1).tolist()):
            if m >= shape[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{shape[d]} but found index {m}")
    vals = vals.contiguous()
    if requires_grad:
        vals = vals.detach().requires_grad_()
    else:
        vals = _values_alias(vals, "SparseCooTensorWithDimsAndTensorsBackward0")
    return SparseTensor(sparse_coo, (idx.contiguous(), vals), shape,
                        bool(is_coalesced) or idx.shape[1] <= 1)


def _compressed(layout, comp, plain, values, size, dtype, device=None):
    comp, plain, vals = _as_tensor(comp), _as_tensor(plain), _as_tensor(values, dtype)
    dev = _target_device(device, comp, plain, vals)
    comp, plain, vals = comp.to(dev), plain.to(dev), vals.to(dev)
    cname, pname = (("crow_indices", "col_indices") if layout is sparse_csr
                    else ("ccol_indices", "row_indices"))
    for t, nm in ((comp, cname), (plain, pname)):
        if t.dtype not in (_C.int32, _C.int64):
            raise RuntimeError(f"{cname} and {pname} must be an int32 or int64 tensor, but got "
                               f"{t.dtype._legacy}")
    if comp.dtype is not plain.dtype:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, but got "
                           f"{comp.dtype._legacy} and {plain.dtype._legacy}")
    if comp.dim() != 1 or plain.dim() != 1 or vals.dim() != 1:
        raise RuntimeError(f"{cname}, {pname} and values must be 1-D (batched and hybrid "
                           "compressed tensors are not supported)")
    if plain.shape[0] != vals.shape[0]:
        raise RuntimeError(f"{pname} and values must have the same number of elements, but got "
                           f"{plain.shape[0]} and {vals.shape[0]}")
    c = comp.cpu().numpy()          # (n + 1 offsets: read on the host wherever they live)
    if c.size == 0 or c[0] != 0 or c[-1] != plain.shape[0] or (_np.diff(c) < 0).any():
        raise RuntimeError(f"{cname} must start at 0, end at nnz and be non-decreasing")
    p_min, p_max = (int(plain.min()), int(plain.max())) if plain.numel() else (0, -1)
    if size is None:
        n_other = p_max + 1
        size = (len(c) - 1, n_other) if layout is sparse_csr else (n_other, len(c) - 1)
    size = tuple(_operator.index(s) for s in size)
    if len(size) != 2:
        raise RuntimeError("only 2-D compressed sparse tensors are supported")
    n_comp, n_plain = (size if layout is sparse_csr else size[::-1])
    if len(c) != n_comp + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to size[{0 if layout is sparse_csr else 1}] + 1 "
                           f"(={n_comp + 1}), but got: {len(c)}")
    if plain.numel() and (p_min < 0 or p_max >= n_plain):
        raise RuntimeError(f"{pname} must be in [0, {n_plain})")
    vals = _values_alias(vals, "SparseCompressedTensorBackward0")
    return SparseTensor(layout, (comp, plain, vals), size)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None):
    """A CSR sparse matrix (``torch.sparse_csr_tensor``); the index tensors
    are int32 or int64, shared, not copied."""
    r = _compressed(sparse_csr, crow_indices, col_indices, values, size, dtype, device)
    return r._with_values(r._parts[-1].detach().requires_grad_()) if requires_grad else r


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None):
    """A CSC sparse matrix (``torch.sparse_csc_tensor``)."""
    r = _compressed(sparse_csc, ccol_indices, row_indices, values, size, dtype, device)
    return r._with_values(r._parts[-1].detach().requires_grad_()) if requires_grad else r


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None,
                             layout=None, device=None, pin_memory=False, requires_grad=False,
                             check_invariants=None):
    """A compressed sparse matrix in ``layout`` (``torch.sparse_compressed_tensor``):
    ``sparse_csr`` or ``sparse_csc`` (the block layouts BSR/BSC are not supported)."""
    make = {sparse_csr: sparse_csr_tensor, sparse_csc: sparse_csc_tensor}.get(layout)
    if make is None:
        got = "none" if layout is None else ("Sparse" if layout is sparse_coo else
                                             getattr(layout, "name", repr(layout)))
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout "
                           f"but got {got} (ptcore supports sparse_csr and sparse_csc)")
    return make(compressed_indices, plain_indices, values, size, dtype=dtype, device=device,
                requires_grad=requires_grad, check_invariants=check_invariants)


class check_sparse_tensor_invariants:
    """``torch.sparse.check_sparse_tensor_invariants``: a context manager and
    decorator switching the checks of sparse tensor constructors on (or off
    with ``enable=False``), and the global switch (``enable()``,
    ``disable()``, ``is_enabled()``, off by default as in torch).

    ptcore's constructors check the invariants (index bounds, compressed index
    order, sizes) whatever the switch says: an invalid sparse tensor is never
    built, so nothing can read out of bounds later.  The switch is kept so that
    code written for torch runs and reads back what it set.
    """

    _enabled = False

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a "
                               "different context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        import functools

        @functools.wraps(mth)
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return test_mth


def _share(a):
    """A tensor on ``a``'s memory (copied only if NumPy cannot lend it)."""
    pt = _pt()
    a = _np.asarray(a)
    if not (a.flags.c_contiguous and a.flags.writeable) or a.dtype.byteorder not in "=|":
        a = _np.ascontiguousarray(a).copy()
    return pt.from_numpy(a)


def from_scipy(m):
    """A :class:`SparseTensor` from a ``scipy.sparse`` matrix or array.

    CSR and CSC share SciPy's ``indptr``, ``indices`` and ``data`` (no copy);
    COO shares ``data`` and builds the ``(2, nnz)`` int64 indices; other
    formats are converted to CSR by SciPy first.
    """
    import scipy.sparse as sp
    if not sp.issparse(m):
        raise TypeError(f"from_scipy expects a scipy.sparse matrix or array, got "
                        f"{type(m).__name__}")
    fmt = m.format
    if fmt in ("csr", "csc"):
        ip, ix = m.indptr, m.indices
        if ip.dtype != ix.dtype:
            t = _np.promote_types(ip.dtype, ix.dtype)
            ip, ix = ip.astype(t), ix.astype(t)
        layout = sparse_csr if fmt == "csr" else sparse_csc
        return SparseTensor(layout, (_share(ip), _share(ix), _share(m.data)), m.shape)
    if fmt == "coo":
        idx = _np.stack([m.row, m.col]).astype(_np.int64)
        pt = _pt()
        return SparseTensor(sparse_coo, (pt.from_numpy(idx), _share(m.data)), m.shape,
                            bool(getattr(m, "has_canonical_format", False)))
    return from_scipy(m.tocsr())


def to_sparse(dense, layout=None, sparse_dim=None):
    """``Tensor.to_sparse(layout=...)`` for a dense 2-D (or N-D, COO) tensor;
    ``sparse_dim`` (COO): a hybrid tensor whose first ``sparse_dim`` dims are
    sparse (an index per slice holding a nonzero) and the rest dense.  As
    torch's, differentiable: the values are gathered from ``dense``."""
    r = _to_sparse_structure(dense, layout, sparse_dim)
    pt = _pt()
    if dense.requires_grad and pt.is_grad_enabled() and dense.dim():
        if r.layout is sparse_coo:
            idx = r._parts[0]
            vals = dense[tuple(idx[k] for k in range(idx.shape[0]))]
        else:
            vals = dense[_rows_cols(r)]
        r = r._with_values(vals)._named(
            "ToSparseCsrBackward0" if r.layout is sparse_csr else "ToSparseCscBackward0"
            if r.layout is sparse_csc else "ToSparseBackward0" if sparse_dim is not None
            else "ToSparseBackward1")
    return r


def _to_sparse_structure(dense, layout, sparse_dim):
    pt = _pt()
    layout = sparse_coo if layout is None else layout
    if not _ix.on_host(dense):
        d = dense.detach()
        if sparse_dim is not None and layout is sparse_coo and sparse_dim != d.dim():
            sparse_dim = _operator.index(sparse_dim)
            if not 0 < sparse_dim <= d.dim():
                raise RuntimeError(f"sparse_dim argument must be in [1, {d.dim()}] range, but "
                                   f"{sparse_dim} is given")
        elif layout is not sparse_coo and d.dim() < 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        elif layout is not sparse_coo and d.dim() != 2:
            raise RuntimeError(f"to_sparse_{layout.name[7:]}: expected a 2-D tensor, got "
                               f"{d.dim()}-D")
        else:
            sparse_dim = None
        idx, vals = _ix.nonzero_coo(d, sparse_dim)
        r = SparseTensor(sparse_coo, (idx, vals), tuple(d.shape), True)
        return r if layout is sparse_coo else r._to_compressed(layout)
    a = dense.detach().numpy()
    if sparse_dim is not None and layout is sparse_coo and sparse_dim != a.ndim:
        sparse_dim = _operator.index(sparse_dim)
        if not 0 < sparse_dim <= a.ndim:
            raise RuntimeError(f"sparse_dim argument must be in [1, {a.ndim}] range, but "
                               f"{sparse_dim} is given")
        nz = _np.nonzero(a.reshape(a.shape[:sparse_dim] + (-1,)).any(-1))
        idx = _np.stack(nz).astype(_np.int64).reshape(sparse_dim, -1)
        vals = _np.ascontiguousarray(a[nz])
        return SparseTensor(sparse_coo, (pt.from_numpy(idx), pt.from_numpy(vals)), a.shape, True)
    if layout is sparse_coo:
        if a.ndim == 0:     # torch: no sparse dims, the value stored once if nonzero
            keep = int(a != 0)
            return SparseTensor(sparse_coo, (pt.zeros((0, keep), dtype=pt.int64),
                                             pt.from_numpy(a.reshape(1)[:keep].copy())), (), True)
        nz = _np.nonzero(a)
        idx = _np.stack(nz).astype(_np.int64)
        vals = _np.ascontiguousarray(a[nz])
        return SparseTensor(sparse_coo, (pt.from_numpy(idx.reshape(a.ndim, -1)),
                                         pt.from_numpy(vals)), a.shape, True)
    if a.ndim < 2:      # (torch's compressed conversion reads the size of dim 1)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if a.ndim != 2:
        raise RuntimeError(f"to_sparse_{layout.name[7:]}: expected a 2-D tensor, got {a.ndim}-D")
    import scipy.sparse as sp
    m = sp.csr_array(a) if layout is sparse_csr else sp.csc_array(a)
    m.indptr, m.indices = m.indptr.astype(_np.int64), m.indices.astype(_np.int64)
    return from_scipy(m)
