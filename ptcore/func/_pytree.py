"""The small pytree of ``ptcore.func``'s transforms: tuples, lists, dicts (and
namedtuples) of leaves, flattened to a list of leaves and a spec that rebuilds
the structure, and vmap's per-leaf ``in_dims``/``out_dims``."""
import builtins

__all__ = []


def _flatten(tree):
    """(leaves, spec) with ``spec`` rebuilding the structure from leaves."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            ls, sp = _flatten(t)
            leaves.extend(ls)
            specs.append((builtins.len(ls), sp))
        return leaves, ("seq", type(tree), specs)
    if isinstance(tree, dict):
        keys = builtins.list(tree.keys())
        leaves, specs = [], []
        for k in keys:
            ls, sp = _flatten(tree[k])
            leaves.extend(ls)
            specs.append((builtins.len(ls), sp))
        return leaves, ("dict", type(tree), keys, specs)
    return [tree], ("leaf",)


def _spec_str(spec):
    """A pytree structure as torch's treespec_pprint writes it (``*`` a leaf)."""
    kind = spec[0]
    if kind == "leaf":
        return "*"
    if kind == "seq":
        items = ", ".join(_spec_str(sp) for _, sp in spec[2])
        return f"({items},)" if spec[1] is not builtins.list and builtins.len(spec[2]) == 1 \
            else (f"[{items}]" if spec[1] is builtins.list else f"({items})")
    return "{" + ", ".join(f"{k!r}: {_spec_str(sp)}" for k, (_, sp) in zip(spec[2], spec[3])) + "}"


def _unflatten(leaves, spec):
    leaves = builtins.list(leaves)
    return _unflat(iter(leaves), spec)


def _unflat(it, spec):
    kind = spec[0]
    if kind == "leaf":
        return next(it)
    if kind == "seq":
        typ, specs = spec[1], spec[2]
        items = [_unflat(it, sp) for _, sp in specs]
        if typ in (tuple, builtins.list):
            return typ(items)
        if hasattr(typ, "_fields"):   # namedtuple
            return typ(*items)
        return typ(items)
    typ, keys, specs = spec[1], spec[2], spec[3]
    d = {k: _unflat(it, sp) for k, (_, sp) in zip(keys, specs)}
    return d if typ is dict else typ(d)


def _broadcast_dims(dims, tree, what):
    """Per-leaf dims: an int/None applies to every leaf of ``tree``; otherwise ``dims``
    must mirror ``tree``'s structure."""
    if dims is None or isinstance(dims, builtins.int):
        return [dims] * builtins.len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)):
        if builtins.len(dims) != builtins.len(tree):
            raise ValueError(f"vmap: {what} is not compatible with the structure of the "
                             f"inputs: expected {builtins.len(tree)} entries, got "
                             f"{builtins.len(dims)}")
        out = []
        for d, t in zip(dims, tree):
            out.extend(_broadcast_dims(d, t, what))
        return out
    if isinstance(dims, dict) and isinstance(tree, dict):
        if set(dims) != set(tree):
            raise ValueError(f"vmap: {what} keys {sorted(dims)} do not match the input "
                             f"keys {sorted(tree)}")
        out = []
        for k in tree:
            out.extend(_broadcast_dims(dims[k], tree[k], what))
        return out
    raise ValueError(f"vmap: {what} must be an int, None, or a (nested) structure matching "
                     f"the inputs, got {dims!r}")
