"""One way to a device (issue 60, item 3): a device kernel's C fast path is
that kernel's *fast form*, registered next to it through
``ptcore._dispatch.device`` (``register_fast_form``, ``follow_fast_forms``,
``register_driver_fast_paths``), and the entry's one read of it
(``OpDef.device_fast``) is a cache that module alone derives.

This walks the whole source tree (the AST of each ``.py``, the lines of each
``.pyx``/``.pxi``) and fails on a write of ``.device_fast`` or
``.fast_forms`` or a call of the CPU driver's ``set_device_fast_paths``
anywhere but ``_dispatch/device.py`` (and the OpDef's own ``__init__``, the
driver's own definition); then checks the registration on the meta device
(CPU only).  The CUDA forms' behaviour: tests/cuda/emulated/test_fast_forms_cuda.py."""
import ast
import pathlib
import re

import pytest

import ptcore
from ptcore._dispatch import device as device_layer
from ptcore._dispatch.table import lookup

_TREE = pathlib.Path(__file__).resolve().parents[2] / "ptcore"
ROOT = _TREE if (_TREE / "_dispatch").is_dir() else pathlib.Path(ptcore.__file__).resolve().parent
SLOTS = ("device_fast", "fast_forms")
_MUTATORS = ("pop", "update", "clear", "setdefault", "popitem", "__setitem__")
# (file relative to ptcore/, function) where a write is the owner's own
ALLOWED = {("_dispatch/device.py", None), ("_dispatch/table.py", "__init__")}

_PYX_RULE = re.compile(
    r"\.(device_fast|fast_forms)\s*(\[[^\]]*\]\s*)?(=(?!=)|[-+|&]=)"
    r"|\.fast_forms\s*\.\s*(" + "|".join(_MUTATORS) + r")\s*\("
    r"|setattr\s*\([^,]+,\s*[\"'](device_fast|fast_forms)[\"']"
    r"|\bset_device_fast_paths\s*\(")


def _slot(node):
    """Whether ``node`` is an attribute ``.device_fast``/``.fast_forms`` or a
    subscript of one (``d.fast_forms["cuda"]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in SLOTS


def py_violations(source):
    """(line, function or None, what) for each write of a fast-form slot and
    each call of ``set_device_fast_paths`` in ``source``."""
    found = []

    def visit(node, func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node.name
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            for n in ast.walk(t):
                if _slot(n) and isinstance(getattr(n, "ctx", None), (ast.Store, ast.Del)):
                    found.append((node.lineno, func, "write of a fast-form slot"))
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _MUTATORS and _slot(f.value):
                found.append((node.lineno, func, f"fast_forms.{f.attr}()"))
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "set_device_fast_paths":
                found.append((node.lineno, func, "set_device_fast_paths call"))
            if (name == "setattr" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in SLOTS):
                found.append((node.lineno, func, "setattr of a fast-form slot"))
        for child in ast.iter_child_nodes(node):
            visit(child, func)
    visit(ast.parse(source), None)
    return found


def pyx_violations(source):
    """(line, None, text) for the same in Cython source (``def
    set_device_fast_paths(`` itself is the driver's definition)."""
    found = []
    for i, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if _PYX_RULE.search(code) and not re.match(r"\s*def\s+set_device_fast_paths\s*\(", code):
            found.append((i, None, line.strip()))
    return found


def _sources():
    for p in sorted(ROOT.rglob("*")):
        if p.suffix in (".py", ".pyx", ".pxi") and p.is_file() and "builddir" not in p.parts:
            yield p


def test_the_tree_holds_the_cython_sources():
    names = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert {"_dispatch/device.py", "_ops/kernels/_ewdrv.pyx", "cuda/ops/dense_fast.pyx",
            "cuda/ops/matmul_fast.pyx"} <= names


def test_only_the_device_layer_writes_the_fast_forms():
    bad = []
    for p in _sources():
        rel = p.relative_to(ROOT).as_posix()
        text = p.read_text()
        hits = py_violations(text) if p.suffix == ".py" else pyx_violations(text)
        for line, func, what in hits:
            if (rel, None) in ALLOWED or (rel, func) in ALLOWED:
                continue
            bad.append(f"ptcore/{rel}:{line}: {what}")
    assert not bad, ("a fast form set outside ptcore._dispatch.device: register it with "
                     "register_fast_form / follow_fast_forms / register_driver_fast_paths:\n"
                     + "\n".join(bad))


def test_the_allowed_writers_still_write():
    # the owners' own writes exist (an allow-list entry whose code went away must go too)
    table = py_violations((ROOT / "_dispatch/table.py").read_text())
    assert {func for _, func, _ in table} == {"__init__"}
    assert "\ndef set_device_fast_paths(" in (ROOT / "_ops/kernels/_ewdrv.pyx").read_text()
    assert py_violations((ROOT / "_dispatch/device.py").read_text())


@pytest.mark.parametrize("code", [
    "d.device_fast = f\n",
    "lookup('mm', 'ptcore').device_fast = None\n",
    "a.device_fast = b.device_fast = f\n",
    "d.fast_forms['cuda'] = f\n",
    "d.fast_forms = {}\n",
    "d.fast_forms.pop('cuda', None)\n",
    "d.fast_forms.update(cuda=f)\n",
    "del d.fast_forms['cuda']\n",
    "setattr(d, 'device_fast', f)\n",
    "_ewdrv.set_device_fast_paths('cuda', a, b, c)\n",
    "def install():\n    for d in ds:\n        d.device_fast = fast\n",
])
def test_the_python_check_sees_each_form(code):
    assert py_violations(code)


@pytest.mark.parametrize("code", [
    "fd = opdef.device_fast\n",
    "ok = d.device_fast is None\n",
    "forms = dict(d.fast_forms)\n",
    "f = d.fast_forms.get('cuda')\n",
    "register_fast_form('mm', 'cuda', f)\n",
    "def device_fast(args, kwargs):\n    return None\n",
])
def test_the_python_check_leaves_reads_alone(code):
    assert not py_violations(code)


@pytest.mark.parametrize("line", [
    "                d.device_fast = fast",
    "    lookup(op, ns).device_fast = None",
    "    d.fast_forms['cuda'] = f",
    "    d.fast_forms.pop('cuda')",
    "    _ewdrv.set_device_fast_paths(1, PyCapsule_New(<void*>cuda_binary, NULL, NULL),",
])
def test_the_cython_check_sees_each_form(line):
    assert pyx_violations(line)


def test_the_cython_check_leaves_reads_and_the_definition_alone():
    assert not pyx_violations("def set_device_fast_paths(str device_type, binary, inplace, unary):\n"
                              "    fd = opdef.device_fast\n"
                              "    # d.device_fast = f was the old way\n"
                              "    if d.device_fast == f: pass\n")


# ---------------------------------------------------------------------------
# registration and the entries' cache, on the meta device (CPU only)
# ---------------------------------------------------------------------------

@pytest.fixture
def no_forms():
    """An op with no fast form of its own (cumsum), restored afterwards."""
    ops = [lookup("cumsum", ns) for ns in ("ptcore", "Tensor")]
    assert all(d is not None and not device_layer.fast_forms(d) for d in ops)
    yield ops
    for t in ("meta", "xpu"):
        device_layer.register_fast_form("cumsum", t, None)
    assert all(d.device_fast is None for d in ops)


def test_a_registered_form_takes_the_call_first(no_forms):
    x = ptcore.ones(3, device="meta")
    seen = []

    def fast(args, kwargs):
        seen.append((args, kwargs))
        return "fast" if kwargs == {"dim": 0} else None
    device_layer.register_fast_form("cumsum", "meta", fast)
    assert [d.device_fast for d in no_forms] == [fast, fast]
    assert [d.fast_forms for d in no_forms] == [{"meta": fast}] * 2
    assert ptcore.cumsum(x, dim=0) == "fast" and x.cumsum(dim=0) == "fast"
    # a call the form declines goes down the layers (the meta kernel)
    r = ptcore.cumsum(x, 0)
    assert r.device.type == "meta" and r.shape == (3,)
    assert len(seen) == 3
    # removed: the cache goes, the layers take every call
    device_layer.register_fast_form("cumsum", "meta", None)
    assert [d.device_fast for d in no_forms] == [None, None]
    assert ptcore.cumsum(x, dim=0).device.type == "meta"
    assert len(seen) == 3


def test_two_device_types_forms_are_tried_in_turn(no_forms):
    def meta_form(args, kwargs):
        return "meta" if args[0].device.type == "meta" else None

    def xpu_form(args, kwargs):
        return None
    device_layer.register_fast_form("cumsum", "meta", meta_form, ("ptcore",))
    device_layer.register_fast_form("cumsum", "xpu", xpu_form, ("ptcore",))
    d = no_forms[0]
    assert d.device_fast not in (None, meta_form, xpu_form)
    assert d.device_fast((ptcore.ones(1, device="meta"),), {}) == "meta"
    device_layer.register_fast_form("cumsum", "meta", None, ("ptcore",))
    assert d.device_fast is xpu_form and no_forms[1].device_fast is None


def test_a_follower_takes_its_bases_forms_and_keeps_its_own():
    # F.relu follows ptcore.relu's forms through an adapter (inplace=False dropped)
    f_relu, relu = lookup("relu", "nn.functional"), lookup("relu", "ptcore")
    calls = []

    def form(args, kwargs):
        calls.append(args)
        return "relu-fast"

    def own(args, kwargs):
        return "own"
    device_layer.register_fast_form(relu, "meta", form)
    try:
        assert relu.device_fast is not None
        adapted = device_layer.fast_forms(f_relu)["meta"]
        assert adapted is not form
        x = ptcore.ones(2, device="meta")
        assert ptcore.nn.functional.relu(x, inplace=False) == "relu-fast"
        assert calls[-1] == (x,)
        device_layer.register_fast_form(f_relu, "meta", own)
        assert device_layer.fast_forms(f_relu)["meta"] is own
        assert ptcore.nn.functional.relu(x) == "own"
        device_layer.register_fast_form(f_relu, "meta", None)
        assert ptcore.nn.functional.relu(x) == "relu-fast"
    finally:
        device_layer.register_fast_form(relu, "meta", None)
        device_layer.register_fast_form(f_relu, "meta", None)
    assert "meta" not in device_layer.fast_forms(f_relu)
    assert ptcore.nn.functional.relu(ptcore.ones(2, device="meta")).device.type == "meta"


def test_the_operator_methods_follow_their_ops():
    # ``a == b`` is ``a.eq(b)``, ``a &= b`` is ``a.bitwise_and_(b)``: the same forms
    for op, base in (("__eq__", "eq"), ("__iand__", "bitwise_and_"), ("__xor__", "bitwise_xor")):
        got = device_layer.fast_forms(lookup(op, "Tensor"))
        assert got and got == device_layer.fast_forms(lookup(base, "Tensor")), op


def test_the_declared_fast_fact_gives_a_driver_form():
    # an op declared with a ``fast`` fact has a form through the CPU driver's C table
    for name in ("add", "mul", "exp", "relu", "eq"):
        for ns in ("ptcore", "Tensor"):
            assert device_layer.DRIVER in device_layer.fast_forms(lookup(name, ns)), (name, ns)
    assert device_layer.DRIVER in device_layer.fast_forms(lookup("add_", "Tensor"))
    assert not device_layer.fast_forms(lookup("cumsum", "ptcore"))


def test_an_unknown_op_is_a_key_error():
    with pytest.raises(KeyError, match="no_such_op"):
        device_layer.register_fast_form("no_such_op", "meta", lambda a, k: None)
    assert device_layer.register_fast_form("no_such_op", "meta", None, optional=True) is None


def test_the_driver_table_refuses_types_without_a_code_of_their_own():
    with pytest.raises(ValueError, match="xpu"):
        device_layer.register_driver_fast_paths("xpu", None, None, None)
    with pytest.raises(ValueError, match="cpu"):
        device_layer.register_driver_fast_paths("cpu", None, None, None)
