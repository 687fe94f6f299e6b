"""The operator table covers the public op surface: every public op of
``ptcore``, ``ptcore.Tensor``, ``ptcore.nn.functional`` and ``ptcore.linalg``
is declared exactly once, and the set of public ops is the one recorded in
``public_ops.txt`` before the table was introduced (no op lost)."""
import pathlib

import pytest

import ptcore
import ptcore.linalg
import ptcore.nn.functional as F
from ptcore._dispatch import dispatcher
from ptcore._dispatch.table import OPS, lookup, op_of
from ptcore._dispatch.declarations import OPERATOR_FORMS

NAMESPACES = {"ptcore": ptcore, "Tensor": ptcore.Tensor, "nn.functional": F,
              "linalg": ptcore.linalg}

# public callables of the top level that are not ops (settings, RNG state,
# dtype and object introspection): no tensor computation to dispatch
NOT_OPS = {
    "are_deterministic_algorithms_enabled", "can_cast", "compiled_with_cxx11_abi", "frombuffer",
    "get_default_device", "get_default_dtype", "get_deterministic_debug_mode", "get_device",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads",
    "get_printoptions", "get_rng_state", "initial_seed", "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled", "is_deterministic_algorithms_warn_only_enabled", "is_grad_enabled",
    "is_inference_mode_enabled", "is_storage", "is_tensor", "is_warn_always_enabled",
    "manual_seed", "printoptions", "promote_types", "result_type", "seed", "set_anomaly_enabled",
    "set_default_device", "set_default_dtype", "set_default_tensor_type",
    "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_flush_denormal",
    "set_num_interop_threads", "set_num_threads", "set_printoptions", "set_rng_state",
    "set_warn_always", "typename", "use_deterministic_algorithms",
}
TAGS = {"pointwise", "reduction", "view", "inplace", "random", "nondeterministic", "linalg",
        "sorting", "indexing", "factory", "metadata", "custom"}     # custom: library.custom_op


def _baseline():
    path = pathlib.Path(__file__).with_name("public_ops.txt")
    return [tuple(line.split()) for line in path.read_text().splitlines() if line.strip()]


def _get(ns, name):
    owner = NAMESPACES[ns]
    if ns == "Tensor":
        for klass in owner.__mro__:
            if name in klass.__dict__:
                return klass.__dict__[name]
        return None
    return getattr(owner, name, None)


def test_no_public_op_lost():
    lost = [f"{ns}.{name}" for ns, name in _baseline() if _get(ns, name) is None]
    assert not lost, lost


def test_every_public_op_is_in_the_table():
    missing = []
    for ns, name in _baseline():
        obj = _get(ns, name)
        if isinstance(obj, (type, property)) or (ns == "ptcore" and name in NOT_OPS):
            continue
        if ns == "Tensor" and name.startswith("__") and name not in dispatcher_dunders():
            continue        # Python protocol methods (__repr__, __len__ ...), not ops
        d = op_of(obj) or lookup(name, ns)
        if d is None:
            missing.append(f"{ns}.{name}")
    assert not missing, missing


def dispatcher_dunders():
    return set(OPERATOR_FORMS)


def test_operator_dunders_are_entries():
    for name in dispatcher_dunders():
        fn = ptcore.Tensor.__dict__.get(name)
        if fn is None:
            continue
        assert op_of(fn) is not None, name


def test_one_declaration_per_op():
    # the table is keyed by (namespace, name): each entry maps to its own OpDef,
    # and that OpDef is the one the table holds for its key
    seen = {}
    for ns, name in _baseline():
        obj = _get(ns, name)
        d = op_of(obj) if obj is not None else None
        if d is None:
            continue
        assert OPS[(d.namespace, d.name)] is d or d.kind == "method", (ns, name)
        seen.setdefault(id(d), set()).add((ns, name))
    for key, d in OPS.items():
        assert key == (d.namespace, d.name)


@pytest.mark.parametrize("key", sorted(OPS, key=str)[:: max(1, len(OPS) // 400)])
def test_opdef_fields(key):
    d = OPS[key]
    assert d.name and d.kind in ("function", "method", "core", "inplace")
    assert d.tags <= TAGS, d.tags - TAGS
    assert d.autocast in (None, "lower", "fp32", "promote")
    assert callable(d.raw) and callable(d.body)


def test_tags_of_known_ops():
    assert "pointwise" in op_of(ptcore.exp).tags
    assert "reduction" in op_of(ptcore.sum).tags
    assert "inplace" in op_of(ptcore.Tensor.add_).tags
    assert "random" in op_of(ptcore.rand).tags and "factory" in op_of(ptcore.rand).tags
    assert "nondeterministic" in op_of(ptcore.index_add).tags
    assert op_of(F.linear).autocast == "lower"
    assert op_of(F.mse_loss).autocast == "fp32"
    assert op_of(ptcore.cat).autocast == "promote"
    assert op_of(ptcore.exp).autocast is None


def test_entries_carry_public_names():
    assert ptcore.add.__name__ == "add" and ptcore.add.__module__ == "ptcore"
    assert F.relu.__module__ == "ptcore.nn.functional"
    assert ptcore.linalg.solve.__module__ == "ptcore.linalg"
    assert ptcore.Tensor.__pow__.__name__ == "pow"


def test_layers_off_cost_only_a_flag():
    # with nothing intercepting, no layer is enabled and entries run their bodies
    assert dispatcher.on[0] is False
    assert not any(layer.enabled for layer in dispatcher._LAYERS)
