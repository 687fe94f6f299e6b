"""The nested tensor type (``torch.nested``'s ``NestedTensor``) and the
``ptcore.jagged`` layout.

A :class:`NestedTensor` is a batch of tensors that share their number of
dimensions and differ in size along some of them.  It keeps its elements
packed in one buffer, its *values*, so that element-wise ops, linear layers
and normalisations run once over all of them:

* ``ptcore.strided`` layout (the default, as torch): the values are a 1-D
  buffer holding each component contiguously, one after the other; the
  components may differ in any dimension.  A transpose of the components is
  kept as a permutation applied on the way out (no copy).
* ``ptcore.jagged`` layout: one ragged dimension.  The values hold the
  components concatenated along it (``values.shape[ragged_idx - 1]`` is the
  sum of the lengths); ``offsets`` (``B + 1`` int64) say where each component
  starts, and ``lengths`` (or None) how long it is when the components do not
  tile the values (:func:`ptcore.nested.narrow`).

Autograd runs through the values: a nested tensor ``requires_grad`` when its
values do, and the ``.grad`` of a leaf nested tensor is a nested tensor of
the same structure.
"""
import itertools as _itertools
import operator as _operator
import weakref as _weakref

from ptcore import autograd as _autograd
from ptcore import _tensor as _C

__all__ = ["NestedTensor", "jagged"]


jagged = _C.jagged          # (the core's layout object, as ptcore.strided)


def _pt():
    import ptcore
    return ptcore


# the nested op table (``torch_function(func, args, kwargs)``) and the repr, of
# ptcore.nested._ops, which builds on this class: registered by that module at
# its import (the package imports it)
_op_table = {}


def register_op_table(torch_function, nested_repr):
    """Make ``torch_function`` run every function called on a nested tensor
    and ``nested_repr`` give its repr."""
    _op_table["torch_function"] = torch_function
    _op_table["repr"] = nested_repr


class _RaggedSize:
    """The size of a jagged tensor's ragged dimension (torch's nested int
    ``j1``): equal only to the ragged size of tensors sharing its offsets."""

    __slots__ = ("_id", "__weakref__")
    _counter = _itertools.count(1)
    _of_offsets = {}        # id(offsets) -> (weak reference to offsets, size)

    def __init__(self, ident):
        self._id = ident

    @classmethod
    def of(cls, offsets):
        key = id(offsets)
        hit = cls._of_offsets.get(key)
        if hit is not None and hit[0]() is offsets:
            return hit[1]
        s = cls(next(cls._counter))
        table = cls._of_offsets
        table[key] = (_weakref.ref(offsets, lambda _r, key=key: table.pop(key, None)), s)
        return s

    def __repr__(self):
        return f"j{self._id}"

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __hash__(self):
        return hash(("ptcore.nested.j", self._id))

    def __index__(self):
        raise RuntimeError(f"the ragged dimension's size {self!r} differs from component to "
                           "component and has no single integer value")

    __int__ = __index__


class NestedTensor:
    """A batch of tensors of different sizes (``torch.nested``'s nested tensor).

    Made by :func:`ptcore.nested.nested_tensor`, :func:`~ptcore.nested.as_nested_tensor`,
    :func:`~ptcore.nested.nested_tensor_from_jagged` and :func:`~ptcore.nested.narrow`.
    ``is_nested`` is True; ``unbind()`` (or iteration) gives the components.
    Not a subclass of :class:`ptcore.Tensor` (``isinstance(nt, ptcore.Tensor)``
    is False, unlike torch's), but ptcore functions, ``nn`` layers and Tensor
    methods take it through ``__torch_function__``.
    """

    __slots__ = ("layout", "_values", "_offsets", "_lengths", "_ragged_idx", "_sizes", "_perm",
                 "_min_seqlen", "_max_seqlen")

    def __init__(self, layout, values, *, offsets=None, lengths=None, ragged_idx=1, sizes=None,
                 perm=None, min_seqlen=None, max_seqlen=None):
        self.layout = layout
        self._values = values
        self._offsets = offsets
        self._lengths = lengths
        self._ragged_idx = ragged_idx
        self._sizes = sizes
        self._perm = perm
        self._min_seqlen = min_seqlen
        self._max_seqlen = max_seqlen

    # -- structure ---------------------------------------------------------
    def _is_jagged(self):
        return self.layout is jagged

    def _batch(self):
        if self._is_jagged():
            return int(self._offsets.shape[0]) - 1
        return len(self._sizes)

    def _seq_lengths(self):
        """The lengths of the jagged components along the ragged dimension (ints)."""
        if self._lengths is not None:
            return [int(x) for x in self._lengths.tolist()]
        off = self._offsets.tolist()
        return [int(b) - int(a) for a, b in zip(off[:-1], off[1:])]

    def _starts(self):
        return [int(x) for x in self._offsets.tolist()[:-1]]

    def _component_shapes(self):
        """The components' shapes (tuples of ints), without building them."""
        if self._is_jagged():
            rest = list(self._values.shape)
            r = self._ragged_idx - 1
            out = []
            for n in self._seq_lengths():
                rest[r] = n
                out.append(tuple(rest))
            return out
        return [tuple(s[p] for p in self._perm) for s in self._sizes]

    def _ragged_dims(self):
        """The dims (of the nested tensor, batch dim included) whose size differs."""
        if self._is_jagged():
            return {self._ragged_idx}
        shapes = self._component_shapes()
        if not shapes:
            return set()
        return {d + 1 for d in range(len(shapes[0])) if len({s[d] for s in shapes}) > 1}

    def unbind(self, dim=0):
        """The components (views of the values, sharing their autograd history)."""
        if _operator.index(dim) not in (0, -self.dim()):
            raise RuntimeError(f"unbind(): nested tensors can only be unbound along the batch "
                               f"dimension 0, got dim={dim}")
        v = self._values
        if self._is_jagged():
            r = self._ragged_idx - 1
            return tuple(v.narrow(r, s, n) for s, n in zip(self._starts(), self._seq_lengths()))
        out = []
        start = 0
        for s in self._sizes:
            n = 1
            for x in s:
                n *= x
            c = v.narrow(0, start, n).view(s)
            if self._perm != tuple(range(len(s))):
                c = c.permute(self._perm)
            out.append(c)
            start += n
        return tuple(out)

    def __iter__(self):
        return iter(self.unbind())

    def __len__(self):
        return self._batch()

    # -- metadata ----------------------------------------------------------
    def dim(self):
        if self._is_jagged():
            return self._values.dim() + 1
        return len(self._perm) + 1

    ndim = property(dim)

    @property
    def shape(self):
        """The shape, with the ragged dimension's size a symbolic size (``j1``)
        that is equal only to itself; jagged layout only (as torch: a strided
        nested tensor has no shape, use :meth:`size` with a regular dim)."""
        if not self._is_jagged():
            raise RuntimeError("a nested tensor of strided layout has no shape: its components "
                               "differ in size; use nt.size(dim) for a regular dim, or unbind()")
        sizes = list(self._values.shape)
        sizes[self._ragged_idx - 1] = _RaggedSize.of(self._offsets)
        return _pt().Size((self._batch(), *sizes))

    def size(self, dim=None):
        """``size(dim)`` of a regular dimension; a ragged dimension raises
        RuntimeError (strided layout) or is the symbolic ragged size (jagged)."""
        if dim is None:
            return self.shape
        d = self._wrap_dim(dim)
        if d == 0:
            return self._batch()
        if self._is_jagged():
            return self.shape[d]
        if d in self._ragged_dims():
            raise RuntimeError(f"Given dimension {d} is irregular and does not have a size.")
        shapes = self._component_shapes()
        if not shapes:
            raise RuntimeError(f"Given dimension {d} of an empty nested tensor has no size.")
        return shapes[0][d - 1]

    def _wrap_dim(self, dim):
        n = self.dim()
        d = _operator.index(dim)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                             f"but got {dim})")
        return d + n if d < 0 else d

    def numel(self):
        return sum(_prod(s) for s in self._component_shapes())

    def nelement(self):
        return self.numel()

    is_nested = property(lambda self: True, doc="True: this is a nested tensor.")

    def is_contiguous(self, *, memory_format=None):
        """True if the components lie packed, one after the other, in the values."""
        if self._is_jagged():
            return self._lengths is None and self._values.is_contiguous()
        return self._perm == tuple(range(len(self._perm)))

    # -- jagged parts ----------------------------------------------------------
    def values(self):
        """The packed buffer the components are views of (differentiable)."""
        return self._values

    def offsets(self):
        """Where each component starts along the ragged dimension (jagged layout)."""
        self._need_jagged("offsets")
        return self._offsets

    def lengths(self):
        """The components' lengths along the ragged dimension, or None when the
        offsets give them (jagged layout)."""
        self._need_jagged("lengths")
        return self._lengths

    def _need_jagged(self, what):
        if not self._is_jagged():
            raise AttributeError(f"'{what}' is defined for nested tensors of jagged layout only "
                                 "(this one is strided)")

    def _min_max(self):
        lens = self._seq_lengths()
        return (min(lens), max(lens)) if lens else (0, 0)

    # -- autograd (that of the values) -----------------------------------------
    @property
    def requires_grad(self):
        return self._values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._values.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._values.is_leaf

    @property
    def grad_fn(self):
        return self._values.grad_fn

    @property
    def grad(self):
        """The gradient, a nested tensor of this structure (or None)."""
        g = self._values.grad
        return None if g is None else self._with_values(g)

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, NestedTensor) or \
                    value._component_shapes() != self._component_shapes():
                raise RuntimeError("assigned grad must be a nested tensor of the same structure")
            value = value._values
        self._values.grad = value

    def retain_grad(self):
        self._values.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backpropagate ``gradient`` (a nested tensor of this structure)."""
        if not isinstance(gradient, NestedTensor):
            raise RuntimeError("backward() of a nested tensor needs `gradient`, a nested tensor "
                               "of the same structure (a nested tensor is never a scalar)")
        if gradient._component_shapes() != self._component_shapes():
            raise RuntimeError("backward(): `gradient` has a different nested structure")
        _autograd.backward(list(self.unbind()), list(gradient.unbind()), retain_graph=retain_graph,
                          create_graph=create_graph, inputs=inputs)

    @property
    def data(self):
        return self.detach()

    # -- rebuilding ------------------------------------------------------------
    def _with_values(self, values):
        """This structure over other values (same shape as the values)."""
        return NestedTensor(self.layout, values, offsets=self._offsets, lengths=self._lengths,
                            ragged_idx=self._ragged_idx, sizes=self._sizes, perm=self._perm,
                            min_seqlen=self._min_seqlen, max_seqlen=self._max_seqlen)

    def _same_packing(self, other):
        """True if ``other``'s values line up element for element with these."""
        if other.layout is not self.layout or tuple(other._values.shape) != \
                tuple(self._values.shape):
            return False
        if self._is_jagged():
            return other._ragged_idx == self._ragged_idx and (
                other._offsets is self._offsets and other._lengths is self._lengths)
        return other._sizes == self._sizes and other._perm == self._perm

    # -- Python protocol -------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _op_table["torch_function"](func, args, kwargs or {})

    def __getattr__(self, name):
        # a Tensor method: through the nested op table (NotImplementedError if
        # it has no nested form, as torch's)
        if not name.startswith("_"):
            import ptcore
            meth = getattr(ptcore.Tensor, name, None)
            if callable(meth):
                def method(*args, **kwargs):
                    return _op_table["torch_function"](meth, (self,) + args, kwargs)
                method.__name__ = name
                return method
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __repr__(self):
        return _op_table["repr"](self)

    def __bool__(self):
        raise RuntimeError("Boolean value of a nested tensor is ambiguous")

    __hash__ = object.__hash__


def _from_values(name, method):
    """A property (or a method) of the nested tensor: that of its values."""
    if method:
        def fn(self):
            return getattr(self._values, name)()
        fn.__name__ = name
        fn.__doc__ = f"``{name}()`` of the values."
        return fn
    return property(lambda self: getattr(self._values, name), doc=f"The values' ``{name}``.")


for _name in ("dtype", "device", "is_cuda", "is_cpu", "is_meta"):
    setattr(NestedTensor, _name, _from_values(_name, False))
for _name in ("is_floating_point", "is_complex", "element_size", "get_device"):
    setattr(NestedTensor, _name, _from_values(_name, True))
for _name in ("is_sparse", "is_sparse_csr", "is_mkldnn", "is_quantized", "is_xla", "is_mps",
              "is_xpu", "is_vulkan", "is_ipu", "is_maia", "is_mtia"):
    setattr(NestedTensor, _name, property(lambda self: False, doc="False for a nested tensor."))


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _binary_dunder(name, reflected=False):
    def method(self, other):
        import ptcore
        fn = getattr(ptcore, name)
        args = (other, self) if reflected else (self, other)
        return _op_table["torch_function"](fn, args, {})
    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


for _name, _op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                   ("pow", "pow"), ("matmul", "matmul"), ("floordiv", "floor_divide"),
                   ("mod", "remainder"), ("and", "logical_and"), ("or", "logical_or")):
    setattr(NestedTensor, f"__{_name}__", _binary_dunder(_op))
    setattr(NestedTensor, f"__r{_name}__", _binary_dunder(_op, reflected=True))
for _name, _op in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                   ("ge", "ge")):
    setattr(NestedTensor, f"__{_name}__", _binary_dunder(_op))
NestedTensor.__hash__ = object.__hash__
for _name, _op in (("iadd", "add_"), ("isub", "sub_"), ("imul", "mul_"), ("itruediv", "div_")):
    def _inplace(self, other, _op=_op):
        import ptcore
        return _op_table["torch_function"](getattr(ptcore.Tensor, _op), (self, other), {})
    _inplace.__name__ = f"__{_name}__"
    setattr(NestedTensor, f"__{_name}__", _inplace)


def _unary_dunder(op):
    def method(self):
        import ptcore
        return _op_table["torch_function"](getattr(ptcore, op), (self,), {})
    method.__name__ = f"__{op}__"
    return method


NestedTensor.__neg__ = _unary_dunder("neg")
NestedTensor.__abs__ = _unary_dunder("abs")
del _name, _op
