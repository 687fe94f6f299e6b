"""Named result tuples of ops (``torch.return_types``): ``max``, ``sort``,
``linalg_svd`` ...

Each is a named tuple that also accepts one sequence, as torch's structseq
types do (``return_types.max((values, indices))``), so code that rebuilds a
result with ``type(r)(...)`` (``__torch_function__`` overrides) works.

Most have a twin named ``<name>_out`` (``max_out``, ``sort_out`` ...): the
type torch returns when the op was given ``out=``.  A type's twin is its
``_out_type``; :func:`as_out` converts a result.
"""
import collections
import types

__all__ = ["return_types", "named", "as_out"]

return_types = types.ModuleType("ptcore.return_types",
                                "Named tuples returned by ptcore ops (torch.return_types).")


def named(name, fields=("values", "indices"), module="ptcore.return_types", out_twin=True):
    """The result type ``name`` with ``fields``, registered in ``return_types``
    (with its ``<name>_out`` twin unless ``out_twin`` is false, as for torch's
    ``histogramdd``, which takes no ``out=``)."""
    base = collections.namedtuple(name, fields)
    n = len(base._fields)

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and n > 1:
            seq = tuple(args[0])
            if len(seq) != n:
                raise TypeError(f"{module}.{name} takes a {n}-sequence "
                                f"({len(seq)}-sequence given)")
            return base.__new__(cls, *seq)
        return base.__new__(cls, *args, **kwargs)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"{module}.{name}(\n{body})"

    cls = type(name, (base,), {"__new__": __new__, "__repr__": __repr__, "__slots__": (),
                               "__module__": module, "__qualname__": name})
    cls._out_type = named(name + "_out", fields, module, False) if out_twin else None
    # pickles by name under ptcore.return_types
    if not hasattr(return_types, name):
        setattr(return_types, name, cls)
    return cls


def as_out(result):
    """``result`` as its type's ``<name>_out`` twin: what torch returns from an
    op given ``out=`` (the same tensors)."""
    twin = type(result)._out_type
    return result if twin is None else twin(*result)
