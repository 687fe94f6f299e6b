"""Dynamic sizes of an export (``torch.export.dynamic_shapes``): :class:`Dim`,
:func:`dims`, :class:`ShapesCollection`, the errors of an export, and the
reading of an ``export(..., dynamic_shapes=...)`` specification into the
dimensions the exported program accepts at any size."""
import math

from ptcore._tensor import _TensorBase

__all__ = ["Dim", "dims", "ShapesCollection", "UserError", "ConstraintViolationError",
           "GuardOnDataDependentSymNode", "ValueRanges"]


class UserError(RuntimeError):
    """An export the caller asked for wrongly (``torch._dynamo.exc.UserError``):
    a malformed ``dynamic_shapes``, a dimension marked dynamic that the
    example input fixes."""


class ConstraintViolationError(RuntimeError):
    """An example input outside the range its :class:`Dim` allows."""


class GuardOnDataDependentSymNode(RuntimeError):
    """The program's control flow depends on tensor data (``if x.sum() > 0``):
    the export cannot record it (use ``ptcore.cond``)."""


class ValueRanges:
    """A closed range ``[lower, upper]`` of a dynamic size (``upper`` may be inf)."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def __eq__(self, other):
        return isinstance(other, ValueRanges) and (self.lower, self.upper) == \
            (other.lower, other.upper)

    def __hash__(self):
        return hash((self.lower, self.upper))

    def __repr__(self):
        upper = "int_oo" if self.upper == math.inf else self.upper
        return f"VR[{self.lower}, {upper}]"


class _DimHint:
    """``Dim.AUTO`` / ``Dim.STATIC`` / ``Dim.DYNAMIC``."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"DimHint({self.kind})"

    def __call__(self, min=None, max=None):
        if self.kind == "STATIC":
            raise TypeError("Dim.STATIC takes no range")
        hint = _DimHint(self.kind)
        hint.min, hint.max = min, max
        return hint

    min = max = None


class Dim:
    """A named dynamic dimension of an export's inputs (``torch.export.Dim``).

    Parameters
    ----------
    name : str
        The dimension's name (shown in ``range_constraints``).
    min, max : int, optional
        The sizes the exported program accepts (default: 0 to unbounded).

    Examples
    --------
    >>> batch = ptcore.export.Dim("batch", min=1, max=1024)
    >>> batch
    Dim('batch', min=1, max=1024)
    """

    AUTO = _DimHint("AUTO")
    STATIC = _DimHint("STATIC")
    DYNAMIC = _DimHint("DYNAMIC")

    def __init__(self, name, *, min=None, max=None):
        if not isinstance(name, str):
            raise TypeError(f"Dim: name must be a str, not {type(name).__name__}")
        lo = 0 if min is None else min
        hi = math.inf if max is None else max
        for what, v in (("min", min), ("max", max)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
                raise TypeError(f"Dim {name!r}: {what} must be an int, not {type(v).__name__}")
        if lo < 0:
            raise UserError(f"Dim {name!r}: min must be non-negative, got {lo}")
        if hi < lo:
            raise UserError(f"Dim {name!r}: max {hi} is less than min {lo}")
        self.__name__ = name
        self.min, self.max = lo, hi

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min > 0:
            parts.append(f"min={self.min}")
        if self.max != math.inf:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"

    def _derived(self, *_):
        raise UserError(f"ptcore.export: dimensions derived from {self!r} (arithmetic on a Dim) "
                        "are not supported")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = _derived


def dims(*names, min=None, max=None):
    """One :class:`Dim` per name, all with the same range (``torch.export.dims``)."""
    return tuple(Dim(n, min=min, max=max) for n in names)


class ShapesCollection:
    """Dynamic shapes given per tensor (``torch.export.ShapesCollection``):
    ``sc[x] = {0: batch}``, then ``dynamic_shapes=sc.dynamic_shapes(m, args)``."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, t, shape):
        if not isinstance(t, _TensorBase):
            raise ValueError(f"ShapesCollection: keys must be tensors, not {type(t).__name__}")
        self._shapes[id(t)] = (t, shape)

    def __getitem__(self, t):
        hit = self._shapes.get(id(t))
        if hit is None or hit[0] is not t:
            self._shapes[id(t)] = (t, {})
            return self._shapes[id(t)][1]
        return hit[1]

    def __len__(self):
        return len(self._shapes)

    def dynamic_shapes(self, m, args, kwargs=None):
        """The ``dynamic_shapes`` argument for ``export(m, args, kwargs)``."""
        used = set()

        def build(x):
            if isinstance(x, _TensorBase):
                hit = self._shapes.get(id(x))
                if hit is not None and hit[0] is x:
                    used.add(id(x))
                    return hit[1]
                return None
            if isinstance(x, (tuple, list)):
                return type(x)(build(a) for a in x)
            if isinstance(x, dict):
                return {k: build(v) for k, v in x.items()}
            return None
        out = build(tuple(args)) + tuple(build(v) for v in (kwargs or {}).values())
        if used != set(self._shapes):
            raise ValueError("ShapesCollection: some tensors given shapes are not among the "
                             "inputs")
        return out


# ---------------------------------------------------------------------------
# reading a dynamic_shapes specification
# ---------------------------------------------------------------------------

class DimSpec:
    """What one dimension of one input tensor may be: ``name`` and the range."""

    def __init__(self, name, lo, hi, key, size):
        self.name, self.lo, self.hi, self.key, self.size = name, lo, hi, key, size

    def __repr__(self):
        return f"DimSpec({self.name!r}, {self.lo}, {self.hi})"


def _dim_entry(d, size, where, names):
    """The DimSpec of one dimension given ``d`` (a Dim, a hint, None), or None (static)."""
    if d is None or d is Dim.STATIC or (isinstance(d, _DimHint) and d.kind == "STATIC"):
        return None
    if isinstance(d, int) and not isinstance(d, bool):
        if d != size:
            raise UserError(f"ptcore.export: {where} is specified as the static size {d}, but "
                            f"the example input has size {size}")
        return None
    if isinstance(d, _DimHint):
        lo = 0 if d.min is None else d.min
        hi = math.inf if d.max is None else d.max
        if size in (0, 1):
            if d.kind == "AUTO":
                return None         # as torch: an automatic dimension of size 0/1 is specialised
            raise UserError(f"ptcore.export: {where} was marked dynamic (Dim.DYNAMIC) but the "
                            f"example input fixes it to the constant {size}; use a size >= 2 "
                            "or Dim.STATIC")
        name = f"s{len(names)}"
        names.add(name)
        return DimSpec(name, max(lo, 2), hi, None, size)
    if isinstance(d, Dim):
        if size in (0, 1):
            raise UserError(f"ptcore.export: Constraints violated ({d.__name__})! You marked "
                            f"{d.__name__} as dynamic but the example size of {where} is "
                            f"{size}, which export specialises to a constant; use an example "
                            "size >= 2")
        if not d.min <= size <= d.max:
            hi = "inf" if d.max == math.inf else d.max
            raise ConstraintViolationError(f"{size} not in range [{d.min}, {hi}] ({where}, "
                                           f"Dim {d.__name__!r})")
        names.add(d.__name__)
        return DimSpec(d.__name__, d.min, d.max, d, size)
    raise UserError(f"ptcore.export: {where}: unexpected dynamic shape {d!r} (expected a Dim, "
                    "Dim.AUTO/STATIC/DYNAMIC, an int or None)")


def _tensor_spec(spec, t, where, names):
    """{dim: DimSpec} for tensor ``t`` given its spec (a dict, a tuple/list, None)."""
    if spec is None:
        return {}
    n = t.dim()
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (tuple, list)):
        if len(spec) != n:
            raise UserError(f"ptcore.export: dynamic_shapes of {where} has {len(spec)} entries "
                            f"but the tensor has {n} dimensions")
        items = enumerate(spec)
    else:
        raise UserError(f"ptcore.export: dynamic_shapes of {where} must be a dict, tuple or "
                        f"None, not {type(spec).__name__}")
    out = {}
    for k, d in items:
        if not isinstance(k, int) or not -n <= k < n:
            raise UserError(f"ptcore.export: dynamic_shapes of {where}: dimension {k!r} is out "
                            f"of range for a tensor of {n} dimensions")
        k %= n
        entry = _dim_entry(d, t.shape[k], f"{where}.size()[{k}]", names)
        if entry is not None:
            out[k] = entry
    return out


def read_dynamic_shapes(dynamic_shapes, named_inputs):
    """The DimSpecs of the tensor leaves of ``named_inputs`` (an ordered list of
    ``(name, value)``): a list with one ``{dim: DimSpec}`` per tensor leaf, in
    flattening order."""
    leaves = []
    names = set()
    if dynamic_shapes is None:
        specs = [None] * len(named_inputs)
    elif isinstance(dynamic_shapes, dict):
        keys = [n for n, _ in named_inputs]
        if set(dynamic_shapes) != set(keys):
            raise UserError("When `dynamic_shapes` is specified as a dict, its top-level keys "
                            f"must be the arg names {keys} of `inputs`, but here they are "
                            f"{list(dynamic_shapes)}. Alternatively, you could also ignore arg "
                            "names entirely and specify `dynamic_shapes` as a list/tuple "
                            "matching `inputs`.")
        specs = [dynamic_shapes[n] for n in keys]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(named_inputs):
            raise UserError(f"ptcore.export: dynamic_shapes has {len(dynamic_shapes)} entries "
                            f"but there are {len(named_inputs)} inputs")
        specs = list(dynamic_shapes)
    else:
        raise UserError("ptcore.export: dynamic_shapes must be a dict, tuple or list, not "
                        f"{type(dynamic_shapes).__name__}")

    def walk(value, spec, where):
        if isinstance(value, _TensorBase):
            leaves.append(_tensor_spec(spec, value, where, names))
        elif isinstance(value, (tuple, list)):
            if spec is not None and not (isinstance(spec, (tuple, list))
                                         and len(spec) == len(value)):
                raise UserError(f"ptcore.export: dynamic_shapes of {where} must be a tuple/list "
                                f"of {len(value)} entries or None")
            for i, v in enumerate(value):
                walk(v, None if spec is None else spec[i], f"{where}[{i}]")
        elif isinstance(value, dict):
            if spec is not None and not (isinstance(spec, dict) and set(spec) == set(value)):
                raise UserError(f"ptcore.export: dynamic_shapes of {where} must be a dict with "
                                f"the keys {list(value)} or None")
            for k, v in value.items():
                walk(v, None if spec is None else spec[k], f"{where}[{k!r}]")
        elif spec is not None:
            raise UserError(f"ptcore.export: {where} is not a tensor, its dynamic_shapes must "
                            f"be None, not {spec!r}")

    for (name, value), spec in zip(named_inputs, specs):
        walk(value, spec, name)
    _check_shared(leaves)
    return leaves


def _check_shared(leaves):
    """One Dim (one name) used for several dimensions: the example sizes must agree."""
    seen = {}
    for leaf in leaves:
        for spec in leaf.values():
            other = seen.setdefault(spec.name, spec)
            if other.size != spec.size:
                raise UserError(f"ptcore.export: Constraints violated ({spec.name})! The "
                                f"example inputs give {spec.name} the sizes {other.size} and "
                                f"{spec.size}")
