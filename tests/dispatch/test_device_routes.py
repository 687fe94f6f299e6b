"""One way to a device (issue 60, item 3): the front-end and kernel folders
never ask which device a tensor is on.  A call reaches a device's kernel
through its op's kernel table, a front-end picks a device's fast form with
``loop_for`` (or runs its loops through ``cpu_kernel``), torch's per-device
*semantics* are the named rules of ``ptcore._dispatch.device`` (``in_host_memory``
among them: the core's one C read of a storage's device, which the CPU fast
forms of the hottest front-ends ask) and a Cython CPU kernel guards its
operands with ``_ops/kernels/_host.pxd``.  This walks the sources of ``_ops``,
``nn``, ``autograd``, ``linalg`` and ``func`` (the AST of each ``.py``, the lines
of each ``.pyx``/``.pxd``/``.pxi``) and fails on a comparison of anything with a
device-type name (``x.device.type == "cpu"``, ``dev.type != "cuda"``,
``kind in ("cpu", "cuda")``, ``"meta" == t``) or a read of ``.is_cpu`` or
``.is_cuda``, outside the commented allow-list of torch-API definitions."""
import ast
import pathlib
import re

import pytest

import ptcore

# the source tree next to the tests when there is one (an installed package
# carries only part of its Cython sources), else the imported package
_TREE = pathlib.Path(__file__).resolve().parents[2] / "ptcore"
ROOT = _TREE if (_TREE / "_dispatch").is_dir() else pathlib.Path(ptcore.__file__).resolve().parent
FOLDERS = ("_ops", "nn", "autograd", "linalg", "func")
DEVICE_TYPES = {"cpu", "cuda", "meta", "mps", "xpu", "hip", "xla", "mtia", "hpu", "privateuseone"}

# The only reads of ``.is_cpu``/``.is_cuda`` allowed: torch-API attributes that
# *define* one of their own by forwarding it (no branch on the device).
#   (file relative to ptcore/, the function whose body reads it)
ALLOWED_DEVICE_READS = {
    ("nn/utils/rnn.py", "is_cuda"),     # PackedSequence.is_cuda: torch's property, data.is_cuda
}
DEVICE_FLAGS = ("is_cpu", "is_cuda")

_NAMES = "|".join(sorted(DEVICE_TYPES))
_PYX_RULE = re.compile(
    r"(==|!=|\bin\b|\bnot\s+in\b|\bis\b)\s*[\(\[{]?\s*[\"'](" + _NAMES + r")(:\d+)?[\"']"
    r"|[\"'](" + _NAMES + r")(:\d+)?[\"']\s*(==|!=|\bis\b)"
    r"|\.is_cuda\b|\.is_cpu\b")


def _is_device_name(node):
    """A device-type name (``"cpu"``, ``"cuda:0"``) or a tuple/list/set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.split(":")[0] in DEVICE_TYPES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_device_name(e) for e in node.elts)
    return False


def py_violations(source, rel="<string>"):
    """(line, what) for each comparison of a value with a device-type name
    (whatever holds the value: ``x.device.type``, ``dev.type``, a local
    ``kind``) and each read of ``.is_cpu``/``.is_cuda`` in ``source``
    (outside the allowed torch-API definitions)."""
    tree = ast.parse(source)
    found = []

    def visit(node, func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node.name
        if isinstance(node, ast.Compare):
            operands = [node.left] + node.comparators
            names = [o for o in operands if _is_device_name(o)]
            if names and len(names) < len(operands):
                found.append((node.lineno, "device-type comparison"))
        elif (isinstance(node, ast.Attribute) and node.attr in DEVICE_FLAGS
              and isinstance(node.ctx, ast.Load) and (rel, func) not in ALLOWED_DEVICE_READS):
            found.append((node.lineno, f".{node.attr} read"))
        for child in ast.iter_child_nodes(node):
            visit(child, func)
    visit(tree, None)
    return found


def pyx_violations(source):
    found = []
    for i, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if _PYX_RULE.search(code):
            found.append((i, line.strip()))
    return found


def _sources():
    for folder in FOLDERS:
        for p in sorted((ROOT / folder).rglob("*")):
            if p.suffix in (".py", ".pyx", ".pxd", ".pxi") and p.is_file():
                yield p


def test_the_folders_exist_and_hold_sources():
    files = list(_sources())
    assert len(files) > 200
    assert {p.suffix for p in files} >= {".py", ".pyx"}


def test_no_front_end_or_kernel_asks_for_the_device_type():
    bad = []
    for p in _sources():
        rel = p.relative_to(ROOT).as_posix()
        text = p.read_text()
        hits = py_violations(text, rel) if p.suffix == ".py" else pyx_violations(text)
        bad += [f"ptcore/{rel}:{line}: {what}" for line, what in hits]
    assert not bad, ("a device-type branch in a front-end or kernel folder: route it through the "
                     "op's kernel table (register_kernel), a fast form (loop_for), a named rule "
                     "of ptcore._dispatch.device or _ops/kernels/_host.pxd:\n" + "\n".join(bad))


def test_the_allowed_reads_still_exist():
    # an allow-list entry whose code went away must go too
    for rel, func in ALLOWED_DEVICE_READS:
        tree = ast.parse((ROOT / rel).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert func in names, (rel, func)


@pytest.mark.parametrize("code", [
    "if t.device.type == 'cpu':\n    pass\n",
    "ok = x.device.type != \"cuda\"\n",
    "ok = x.device.type in ('cpu', 'cuda')\n",
    "ok = 'cuda' == x.device.type\n",
    "ok = device.type not in ['cpu']\n",
    "ok = t.device_type == 'cuda'\n",
    "if device_type == 'cpu':\n    pass\n",
    "ok = a.is_cuda and b.is_cuda\n",
    "def f(x):\n    return x.is_cuda\n",
    # the type of a device held in a local variable, or a type string anywhere
    "dev = x.device\nif dev.type != 'cpu':\n    pass\n",
    "if d.type == 'cuda' and d.index is None:\n    pass\n",
    "ok = _C._to_device(device).type == 'cpu'\n",
    "ok = common_device(a, b).type == 'cpu'\n",
    "kind = t.device.type\nok = kind in {'cpu', 'meta'}\n",
    "ok = 'cuda:0' == str(t.device)\n",
    "ok = dev.type is 'meta'\n",
    # .is_cpu reads, in a condition or as a value
    "if x.is_cpu:\n    pass\n",
    "ok = all(t.is_cpu for t in ts)\n",
    "ok = isinstance(x, T) and x.is_cpu and x.dim()\n",
])
def test_the_python_check_sees_each_form(code):
    assert py_violations(code)


@pytest.mark.parametrize("code", [
    "ok = x.device == y.device\n",          # same-device checks compare devices, not types
    "ok = x.dtype.type == 'float'\n",
    "ok = x.device.type\n",                 # reading the type (a message, a table key) is fine
    "ok = kernels.get(t.device.type)\n",
    "ok = dev.type\n",
    "ok = in_host_memory(t) and x.dim()\n",
    "ok = mode == 'reflect'\n",
    "ok = 'cpu' == 'cpu'\n",                 # two literals: no value's device
])
def test_the_python_check_leaves_other_code_alone(code):
    assert not py_violations(code)


@pytest.mark.parametrize("line", [
    '    if t._storage.device.type != "cpu":',
    '    if t.device.type == "cuda": pass',
    "    return x.is_cuda",
    "    if device_type == 'cuda':",
    '    if dev.type != "cpu":',
    "    ok = kind in ('cpu', 'meta')",
    '    ok = "cuda" == d.type',
    "    if t.is_cpu and t.ndim:",
])
def test_the_cython_check_sees_each_form(line):
    assert pyx_violations(line)


def test_the_cython_check_skips_comments_and_type_codes():
    assert not pyx_violations("    # t.device.type != 'cpu' was the old check\n"
                              "    if t._storage.device._type_code != 0: pass\n"
                              "    raise ValueError(f'{what} must be on the CPU, got {dev}')\n"
                              "    if mode == 'reflect': pass\n")


def test_torchs_device_mismatch_text_is_written_once():
    """torch's "Expected all tensors to be on the same device" is composed by
    ``ptcore._dispatch.device.device_mismatch_message`` only; every same-device
    check raises through it."""
    where = []
    for p in sorted(ROOT.rglob("*")):
        if p.suffix in (".py", ".pyx", ".pxd", ".pxi") and p.is_file():
            for line in p.read_text().splitlines():
                code = line.split("#", 1)[0]
                if "Expected all tensors to be on the same device" in code:
                    where.append(p.relative_to(ROOT).as_posix())
    # (its docstring mentions it too: a string in a module docstring, not a raise)
    assert set(where) == {"_dispatch/device.py"}, where
    from ptcore._dispatch.device import device_mismatch_message
    assert device_mismatch_message(ptcore.device("cpu"), ptcore.device("meta"), "f") == (
        "Expected all tensors to be on the same device, but found at least two devices, cpu and "
        "meta! (when checking argument for f)")
