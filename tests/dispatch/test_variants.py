"""Each op's variants (function, method, in-place, out=, operator) are
declared in its declaration (``ptcore/_ops/declarations``, see
``ptcore._dispatch.declarations``): every declared variant exists in the
package and every variant the package has is declared."""
import inspect

import ptcore
import ptcore.fft  # noqa: F401
import ptcore.linalg  # noqa: F401
import ptcore.nn.functional  # noqa: F401
import ptcore.nn.functional._aten_forms  # noqa: F401  (binds ptcore.lstm & co. on first use)
import ptcore.special  # noqa: F401
from ptcore._dispatch.table import OPS, lookup, op_of
from ptcore._dispatch.declarations import (DECLARED, KINDS, OPERATOR_METHODS, PROTOCOL_METHODS,
                                           base_of, variants_of)

VARIANTS = {key: d.variants for key, d in DECLARED.items()}


def _takes_out(fn):
    fn = getattr(fn, "__wrapped__", fn)
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def existing():
    """``{(group, op): set of variants}`` of every op in the table, read from
    the bound package (tools/op_variants.py prints it as a declaration)."""
    found = {}
    for (ns, name), d in OPS.items():
        key = base_of(ns, name)
        if key is None:
            continue        # custom ops and the tensor core's protocol methods
        v = found.setdefault(key, set())
        if name.startswith("__") and name.endswith("__"):
            v.add("operator")
        elif name.endswith("_") and not name.startswith("_"):
            v.add("inplace")
        elif ns == "Tensor":
            v.add("method")
        else:
            v.add("function")
            if _takes_out(d.raw):
                v.add("out")
    # operator methods bound to another op's entry (``Tensor.__neg__`` is ``ptcore.neg``)
    for dunder, op in OPERATOR_METHODS.items():
        fn = getattr(ptcore.Tensor, dunder, None)
        if fn is not None and op_of(fn) is not None:
            found.setdefault(("ptcore", op), set()).add("operator")
    return found


def test_declared_variants_are_the_existing_ones():
    have = existing()
    undeclared = sorted(f"{g}.{op}: {sorted(v - VARIANTS.get((g, op), set()))}"
                        for (g, op), v in have.items() if v - VARIANTS.get((g, op), set()))
    missing = sorted(f"{g}.{op}: {sorted(v - have.get((g, op), set()))}"
                     for (g, op), v in VARIANTS.items() if v - have.get((g, op), set()))
    assert not undeclared, "variants the package has but its declaration in " \
        f"ptcore/_ops/declarations does not list (run tools/op_variants.py): {undeclared}"
    assert not missing, f"declared variants that do not exist: {missing}"


def test_every_opdef_carries_its_declared_variants():
    form = {"ptcore": "function", "nn.functional": "function", "linalg": "function",
            "fft": "function", "special": "function", "Tensor": "method"}
    bad = []
    for (ns, name), d in OPS.items():
        if base_of(ns, name) is None:
            continue
        if d.variants != variants_of(ns, name) or not d.variants:
            bad.append(f"{ns}.{name}")
            continue
        if name.startswith("__"):
            kind = "operator"
        elif name.endswith("_") and not name.startswith("_"):
            kind = "inplace"
        else:
            kind = form[ns]
        if kind not in d.variants:
            bad.append(f"{ns}.{name} ({kind} not in {sorted(d.variants)})")
    assert not bad, bad


def test_declared_operator_methods_are_bound_entries():
    for dunder, op in OPERATOR_METHODS.items():
        fn = getattr(ptcore.Tensor, dunder, None)
        assert fn is not None and op_of(fn) is not None, dunder
        assert "operator" in VARIANTS[("ptcore", op)], dunder
    assert not set(PROTOCOL_METHODS) & set(OPERATOR_METHODS)


def test_variants_in_use():
    assert set().union(*VARIANTS.values()) == set(KINDS)
    a, b = ptcore.tensor([1.0, 2.0]), ptcore.tensor([3.0, 4.0])
    assert VARIANTS[("ptcore", "add")] == frozenset(KINDS)
    out = ptcore.empty(2)
    for r in (ptcore.add(a, b), a.add(b), a.clone().add_(b), ptcore.add(a, b, out=out), a + b):
        assert r.tolist() == [4.0, 6.0]
    assert lookup("add_", "Tensor").variants is lookup("add").variants or \
        lookup("add_", "Tensor").variants == lookup("add").variants
    # an op without out= in torch has none here either
    assert "out" not in VARIANTS[("ptcore", "clone")]
