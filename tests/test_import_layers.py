"""The package's import graph goes one way, down the layers.

The layers are listed here, once, lowest first; a module belongs to the
longest prefix that names it.  The test reads every module of the source
tree (nothing is imported): Python files with ``ast``, Cython files
(``.pyx``, ``.pxd``, the ``.pxi`` a ``.pyx`` includes, ``.pyx.tp`` templates)
with a small line-based reader of their ``import``/``cimport`` statements
(``ast`` cannot read Cython), and fails on

* an import cycle among module-level imports, and
* an import (module-level or inside a function) from a module to a module of
  a higher layer,

except for the edges listed in ``KNOWN_UPWARD``, each with its reason; that
list may only shrink.

The "library" layer is ordered among itself too: ``LIBRARY_LAYERS`` lists its
sub-layers, lowest first, and an import (inside a function too) from a library
module to a library module of a higher sub-layer fails (exceptions in
``KNOWN_LIBRARY_UPWARD``, each with its reason, a list that may only shrink).

Imports of the package root ``ptcore`` itself (the public namespace, through
which composite ops call other ops' entries at call time, as torch's Python
composites call ``torch.X``) are listed separately in ``ROOT_IMPORTERS`` and
may only shrink too.

Imports inside functions count too: one of a ptcore module is deliberate only
with a ``# lazy: reason`` comment (on its line or the line above: an optional
heavy dependency, the GPU driver).  Their number without such a comment may
only shrink (``IN_FUNCTION_CEILING``), and the packages and modules in
``CLEAN`` have none left and sit on no import cycle, counting imports inside
functions.
"""
import ast
import pathlib
import re

import pytest

import ptcore

LAYERS = [
    ("core", ["ptcore._tensor", "ptcore._dlpack", "ptcore._config", "ptcore._dtype_utils",
              "ptcore._settings", "ptcore._return_types", "ptcore._ops.kernels",
              "ptcore._build_utils", "ptcore._shared_memory",
              "ptcore._cyutility", "ptcore._warn", "ptcore._hooks", "ptcore._scalar_args",
              "ptcore._cpu_features"]),
    ("dispatch", ["ptcore._dispatch"]),
    ("ops", ["ptcore._ops", "ptcore.linalg", "ptcore._tensor_str",
             "ptcore.tensor"]),
    ("autograd", ["ptcore.autograd", "ptcore.func"]),
    ("library", ["ptcore.nn", "ptcore.optim", "ptcore.utils", "ptcore.amp", "ptcore.cpu",
                 "ptcore.cuda", "ptcore._meta", "ptcore.profiler", "ptcore.autograd.profiler",
                 "ptcore.overrides",
                 "ptcore.serialization", "ptcore.multiprocessing", "ptcore.testing",
                 "ptcore.jit", "ptcore.onnx", "ptcore.distributed", "ptcore.accelerator",
                 "ptcore.backends", "ptcore.random", "ptcore.hub", "ptcore._checkpoint_allowlist",
                 "ptcore._checkpoint_tensors", "ptcore._checkpoint_zip",
                 "ptcore._ptcore_checkpoint_v1", "ptcore._torch_checkpoint_reader",
                 "ptcore._torch_checkpoint_writer", "ptcore._torch_legacy_checkpoint",
                 "ptcore._compile", "ptcore.array_api", "ptcore.fft", "ptcore.special",
                 "ptcore.sparse", "ptcore.distributions", "ptcore.quasirandom", "ptcore.signal",
                 "ptcore.functional", "ptcore.version", "ptcore._legacy_types", "ptcore.storage",
                 "ptcore.library", "ptcore._nn_functions", "ptcore.compiler", "ptcore._dynamo",
                 "ptcore._inductor", "ptcore._config_module", "ptcore._ops_namespace",
                 "ptcore._streams", "ptcore._absent_device", "ptcore.mps", "ptcore.xpu",
                 "ptcore.mtia", "ptcore.futures", "ptcore.types", "ptcore.torch_version",
                 "ptcore._sym", "ptcore._control_flow", "ptcore._build_info", "ptcore._lobpcg",
                 "ptcore.__config__", "ptcore.__future__", "ptcore.fx", "ptcore.export",
                 "ptcore.nested", "ptcore.masked", "ptcore._quantized",
                 "ptcore._checks", "ptcore._c_nn", "ptcore._file_records",
                 "ptcore._custom_ops", "ptcore.ao", "ptcore.quantization",
                 "ptcore._torchvision_ops",
                 "ptcore._torchvision_image_ops", "ptcore._subclasses",
                 "ptcore._higher_order_ops", "ptcore._utils", "ptcore._functorch",
                 "ptcore._vmap_internals"]),
    # the launcher: unmodified PyTorch programs and libraries see ptcore as torch
    ("launcher", ["ptcore.as_torch"]),
]

# (importer, imported): why it still points up
KNOWN_UPWARD = {}

# The library layer's packages in sub-layers, lowest first (a module belongs to
# the longest prefix that names it, as in LAYERS); an import (inside a function
# too) may not point to a higher sub-layer.  Derived from the import graph.
LIBRARY_LAYERS = [
    # helpers, namespaces of functions, settings: nothing from the sub-layers above
    ("helpers", ["ptcore.__future__", "ptcore.__config__", "ptcore._build_info",
                 "ptcore.version", "ptcore.torch_version", "ptcore.types", "ptcore._sym",
                 "ptcore._legacy_types", "ptcore._absent_device",
                 "ptcore._config_module", "ptcore._control_flow", "ptcore._lobpcg",
                 "ptcore.amp", "ptcore.cpu", "ptcore.backends", "ptcore.fft", "ptcore.special",
                 "ptcore.signal", "ptcore.functional", "ptcore.futures", "ptcore.hub",
                 "ptcore.profiler", "ptcore.autograd.profiler", "ptcore.quasirandom",
                 "ptcore.random", "ptcore.storage", "ptcore.testing", "ptcore.array_api",
                 "ptcore.sparse", "ptcore.nested", "ptcore.utils", "ptcore._quantized",
                 "ptcore._higher_order_ops"]),
    # the functional ops (device-neutral front-ends; the devices fill their kernel tables)
    ("functional", ["ptcore.nn.functional", "ptcore.nn._reduction", "ptcore.nn.grad",
                    "ptcore.nn.modules.utils", "ptcore.nn.attention"]),
    ("devices", ["ptcore.cuda", "ptcore._meta", "ptcore.mps", "ptcore.xpu", "ptcore.mtia",
                 "ptcore.accelerator", "ptcore._streams"]),
    ("nn", ["ptcore.nn", "ptcore.ao", "ptcore.quantization"]),
    # what reads or writes modules and parameters
    ("serialization", ["ptcore._checkpoint_allowlist", "ptcore._checkpoint_tensors",
                       "ptcore._checkpoint_zip", "ptcore._ptcore_checkpoint_v1",
                       "ptcore._torch_checkpoint_reader", "ptcore._torch_checkpoint_writer",
                       "ptcore._torch_legacy_checkpoint", "ptcore.serialization", "ptcore.multiprocessing", "ptcore._file_records"]),
    ("training", ["ptcore.optim", "ptcore.distributions", "ptcore.masked", "ptcore.cuda.comm",
                  "ptcore.utils.checkpoint", "ptcore.utils.module_tracker",
                  "ptcore._nn_functions", "ptcore.overrides", "ptcore._checks", "ptcore._c_nn",
                  "ptcore._utils"]),
    # programs: capture, export, compile, distribute, feed, report
    ("programs", ["ptcore._ops_namespace", "ptcore.library", "ptcore._custom_ops",
                  "ptcore._torchvision_ops", "ptcore._torchvision_image_ops",
                  "ptcore.utils._python_dispatch",
                  "ptcore.utils.flop_counter", "ptcore.fx", "ptcore.jit", "ptcore.onnx",
                  "ptcore.export", "ptcore._inductor", "ptcore._dynamo", "ptcore._compile",
                  "ptcore.compiler", "ptcore.distributed", "ptcore.utils.data",
                  "ptcore.utils.tensorboard", "ptcore.utils.collect_env", "ptcore._functorch",
                  "ptcore._vmap_internals",
                  # (fake tensors derive results through ptcore.ops' resolver)
                  "ptcore._subclasses"]),
]

# (importer, imported): imports up the library's sub-layers (imports inside
# functions count), why; importer and imported are package prefixes here
KNOWN_LIBRARY_UPWARD = {
    ("ptcore.nn.parallel.distributed", "ptcore.distributed"):
        "lazy: DistributedDataParallel loads ptcore.distributed (sockets, process groups) "
        "with the first DDP, not with ptcore.nn (torch's layout too)",
}

# modules that import the package root (call public entries at call time)
ROOT_IMPORTERS = {
    "ptcore._ops._composite_common", "ptcore._ops.calculus", "ptcore._ops.creation_composite",
    "ptcore._ops.indexing_composite", "ptcore._ops.linalg_composite",
    "ptcore._ops.pointwise_composite", "ptcore._ops.reduction_composite",
    "ptcore._ops.shape_composite", "ptcore.linalg", "ptcore.linalg._extra",
    "ptcore._ops.random_samplers", "ptcore._tensor_str",
    "ptcore._settings", "ptcore._dispatch.autocast", "ptcore._ops.from_file", "ptcore._ops.lowrank",
}

# imports of ptcore modules inside functions without a '# lazy:' reason
# (the package root aside, see ROOT_IMPORTERS): this number may only shrink;
# lower it when you remove some (Cython files count since the test reads them)
IN_FUNCTION_CEILING = 0

# packages (and single modules) on no import cycle, counting imports inside
# functions, and without an import inside a function that has no '# lazy:' reason
CLEAN = ["ptcore.__config__", "ptcore._build_info", "ptcore._checkpoint_allowlist",
         "ptcore._checkpoint_tensors", "ptcore._checkpoint_zip", "ptcore._control_flow",
         "ptcore._ptcore_checkpoint_v1", "ptcore._streams", "ptcore._torch_checkpoint_reader",
         "ptcore._torch_checkpoint_writer", "ptcore._torch_legacy_checkpoint",
         "ptcore._higher_order_ops", "ptcore.accelerator", "ptcore.amp",
         "ptcore.array_api", "ptcore.backends", "ptcore.cpu", "ptcore.cuda", "ptcore.distributed",
         "ptcore.distributions", "ptcore.export", "ptcore.fft", "ptcore.func", "ptcore.fx",
         "ptcore.jit", "ptcore.library", "ptcore.masked", "ptcore.multiprocessing",
         "ptcore.nested", "ptcore.nn", "ptcore.onnx", "ptcore.optim", "ptcore.overrides",
         "ptcore.profiler", "ptcore.serialization", "ptcore.signal", "ptcore.sparse",
         "ptcore.special", "ptcore.testing", "ptcore.utils"]

ROOT = pathlib.Path(ptcore.__file__).resolve().parent


def _module_name(p, root):
    rel = p.relative_to(root.parent)
    name = ".".join(rel.parts[:-1] + (p.name.split(".")[0],))
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _modules(root=None):
    root = ROOT if root is None else root
    mods = {}
    for p in root.rglob("*"):
        if "builddir" in p.parts:
            continue
        if p.suffix in (".so", ".pyd") or p.suffix == ".pxd":
            # a compiled module (the installed package has these, not the .pyx), or a
            # Cython declarations file (cimported; some have no module of their own)
            mods.setdefault(_module_name(p, root), p)
            continue
        if p.suffix in (".py", ".pyx") or p.name.endswith(".pyx.tp"):
            mods[_module_name(p, root)] = p
    return mods


def _layer(mod, layers=None):
    best = None
    for i, (_, prefixes) in enumerate(LAYERS if layers is None else layers):
        for pre in prefixes:
            if (mod == pre or mod.startswith(pre + ".")) and (best is None or len(pre) > best[1]):
                best = (i, len(pre))
    return None if best is None else best[0]


_LIBRARY = [name for name, _ in LAYERS].index("library")


def _library_layer(mod):
    """The sub-layer (LIBRARY_LAYERS) of a module of the library layer, else None."""
    return _layer(mod, LIBRARY_LAYERS) if _layer(mod) == _LIBRARY else None


def _known(a, b, known):
    return (a, b) in known or any(a == k[0] and b.startswith(k[1] + ".") for k in known)


def _upward(graphs, layer_of, layers, known):
    """The edges of ``graphs`` ((kind, edges), ...) that point to a higher
    layer of ``layers`` (``layer_of``: a module's index there, or None) and
    are not in ``known``."""
    bad = []
    for kind, g in graphs:
        for a, targets in g.items():
            la = layer_of(a)
            for b in targets:
                if b == "ptcore" or la is None:
                    continue
                lb = layer_of(b)
                if lb is not None and lb > la and not _known(a, b, known):
                    bad.append(f"{a} -> {b} ({kind}: {layers[la][0]} -> {layers[lb][0]})")
    return sorted(bad)


def _lazy_reason(lines, lineno):
    """Whether the import at ``lineno`` (1-based) carries a '# lazy:' reason,
    on its own line or on a comment line just above it."""
    if "# lazy:" in lines[lineno - 1]:
        return True
    above = lines[lineno - 2].strip() if lineno >= 2 else ""
    return above.startswith("#") and "# lazy:" in above


# ---- Cython: a line-based reader of import statements ----------------------

_CY_SOURCES = (".pyx", ".pxd", ".pyx.tp")
_CY_INCLUDE = re.compile(r"""^include\s+["']([^"']+)["']""", re.M)
_CY_TRIPLE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_CY_STRING = re.compile(r"""'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*\"""")
_CY_FUNCTION = re.compile(r"(?:async\s+)?(?:def|cdef|cpdef)\s")
_CY_NOT_FUNCTION = re.compile(r"c?p?def\s+(?:(?:public|api|readonly|inline)\s+)*"
                              r"(?:class|extern|struct|union|enum|cppclass|packed|fused)\b")
_CY_FROM = re.compile(r"from\s+(\.*)([\w.]*)\s+c?import\s+(.+)$")
_CY_IMPORT = re.compile(r"c?import\s+(.+)$")


def _cython_files(root):
    """Module name -> its Cython sources: the .pyx (or .pyx.tp template) and
    .pxd of that name, and the .pxi files they include (recursively)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if "builddir" in p.parts or not p.name.endswith(_CY_SOURCES):
            continue
        files = out.setdefault(_module_name(p, root), [])
        todo = [p]
        while todo:
            f = todo.pop()
            if f not in files and f.is_file():
                files.append(f)
                todo += [f.parent / inc for inc in _CY_INCLUDE.findall(f.read_text())]
    return out


def _cython_statements(text):
    """(line, inside a function, statement) of each logical line of Cython
    source ``text``: strings and comments blanked, bracketed and backslash
    continuations joined (line: the first).  Inside a function: indented
    under a ``def``/``cdef``/``cpdef`` header (one with a parameter list,
    ending in ':'; not a ``cdef class``/``extern``/``struct``/...)."""
    text = _CY_TRIPLE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out, funcs, parts, first, indent, depth = [], [], [], 0, 0, 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = _CY_STRING.sub('""', raw).split("#", 1)[0].rstrip()
        if not parts:
            if not line.strip() or line.lstrip().startswith("{{"):   # (Tempita lines)
                continue
            first, indent = n, len(line) - len(line.lstrip())
        parts.append(line.rstrip("\\").strip())
        depth = max(0, depth + sum(map(line.count, "([{")) - sum(map(line.count, ")]}")))
        if depth or line.endswith("\\"):
            continue
        stmt, parts = " ".join(parts), []
        while funcs and indent <= funcs[-1]:
            funcs.pop()
        out.append((first, bool(funcs), stmt))
        if (stmt.endswith(":") and "(" in stmt and _CY_FUNCTION.match(stmt)
                and not _CY_NOT_FUNCTION.match(stmt)):
            funcs.append(indent)
    return out


def _cython_imports(cur, stmt, mods):
    """The modules a Cython statement imports or cimports (none for others)."""
    m = _CY_FROM.match(stmt)
    if m:
        names = [a.split()[0] for a in m.group(3).strip("() ").split(",") if a.strip()]
        return _resolve_from(cur, False, m.group(2), len(m.group(1)), names, mods)
    m = _CY_IMPORT.match(stmt)
    return [a.split()[0] for a in m.group(1).split(",") if a.strip()] if m else []


def _graph(root=None):
    root = ROOT if root is None else root
    mods = _modules(root)
    edges, lazy = {}, {}
    sites = []          # (module, line, marked lazy) of each in-function import of a ptcore module

    def target(name):
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    def add(name, targets, in_func, where, marked):
        hit = False
        for t in targets:
            t = target(t)
            if t != name and t.startswith("ptcore"):
                (lazy if in_func else edges).setdefault(name, set()).add(t)
                hit = hit or t != "ptcore"
        if in_func and hit:
            sites.append((name, where, marked))

    for name, path in mods.items():
        if path.suffix != ".py":
            continue
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text, str(path))
        is_pkg = path.name == "__init__.py"

        def visit(node, in_func):
            for child in ast.iter_child_nodes(node):
                f = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    add(name, _resolve(name, child, is_pkg, mods), f, child.lineno,
                        f and _lazy_reason(lines, child.lineno))
                visit(child, f)
        visit(tree, False)
    for name, paths in _cython_files(root).items():
        for path in paths:
            text = path.read_text()
            lines = text.splitlines()
            for lineno, f, stmt in _cython_statements(text):
                add(name, _cython_imports(name, stmt, mods), f, f"{path.name}:{lineno}",
                    f and _lazy_reason(lines, lineno))
    return mods, edges, lazy, sites


def _resolve_from(cur, is_pkg, base, level, names, mods):
    if level:
        parts = cur.split(".")
        if not is_pkg:
            parts = parts[:-1]
        parts = parts[: len(parts) - level + 1]
        base = ".".join(parts + ([base] if base else []))
    out = []
    for a in names:
        full = f"{base}.{a}"
        out.append(full if full in mods else base)
    return out


def _resolve(cur, node, is_pkg, mods):
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return _resolve_from(cur, is_pkg, node.module or "", node.level,
                         [a.name for a in node.names], mods)


@pytest.fixture(scope="module")
def full_graph():
    return _graph()


@pytest.fixture(scope="module")
def graph(full_graph):
    return full_graph[:3]


@pytest.fixture(scope="module")
def sites(full_graph):
    return full_graph[3]


def test_every_module_has_a_layer(graph):
    mods, _, _ = graph
    missing = [m for m in mods if m != "ptcore" and _layer(m) is None]
    assert not missing, f"modules without a layer (add them to LAYERS): {missing}"


def test_no_import_cycle(graph):
    mods, edges, _ = graph
    # Tarjan's strongly connected components over module-level imports,
    # without the package root (see ROOT_IMPORTERS)
    comps = _cycles(mods, edges)
    assert not comps, f"import cycles: {comps}"


def test_imports_point_down(graph):
    _, edges, lazy = graph
    bad = _upward((("module-level", edges), ("in a function", lazy)), _layer, LAYERS,
                  KNOWN_UPWARD)
    assert not bad, "imports up the layers:\n" + "\n".join(bad)


def test_every_library_module_has_a_sublayer(graph):
    mods = graph[0]
    missing = sorted(m for m in mods if _layer(m) == _LIBRARY and _library_layer(m) is None)
    assert not missing, f"library modules without a sub-layer (add them to LIBRARY_LAYERS): {missing}"


def _known_library(a, b):
    return any((a == k[0] or a.startswith(k[0] + ".")) and (b == k[1] or b.startswith(k[1] + "."))
               for k in KNOWN_LIBRARY_UPWARD)


def test_library_imports_point_down(graph):
    _, edges, lazy = graph
    bad = [e for e in _upward((("module-level", edges), ("in a function", lazy)), _library_layer,
                              LIBRARY_LAYERS, ())
           if not _known_library(*e.split(" (")[0].split(" -> "))]
    assert not bad, "imports up the library's sub-layers:\n" + "\n".join(bad)


def test_root_importers_only_shrink(graph):
    _, edges, lazy = graph
    importers = {a for g in (edges, lazy) for a, t in g.items() if "ptcore" in t}
    lower = {a for a in importers if _layer(a) is not None and _layer(a) < 3}
    new = sorted(lower - ROOT_IMPORTERS)
    assert not new, f"new imports of the package root from below the autograd layer: {new}"


def test_known_lists_are_current(graph):
    mods, edges, lazy = graph
    all_edges = {(a, b) for g in (edges, lazy) for a, t in g.items() for b in t}

    def unread(mod):
        # a compiled module whose source this tree does not hold (an installed
        # package has the .so and the public .pxd, not the .pyx): its imports
        # cannot be seen here, so its entries cannot be checked
        p = mods.get(mod)
        return p is not None and p.suffix in (".so", ".pyd", ".pxd")

    stale = [k for k in KNOWN_UPWARD if not unread(k[0])
             and not any(_known(a, b, [k]) for a, b in all_edges)]
    assert not stale, f"KNOWN_UPWARD lists edges that are gone (remove them): {stale}"
    stale = [k for k in KNOWN_LIBRARY_UPWARD
             if not any(_known_library(a, b) and (a + ".").startswith(k[0] + ".")
                        and (b + ".").startswith(k[1] + ".") for a, b in all_edges)]
    assert not stale, f"KNOWN_LIBRARY_UPWARD lists edges that are gone (remove them): {stale}"


def _cycles(mods, edges):
    """The import cycles (strongly connected components of more than one
    module) of graph ``edges``, the package root left out."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w == "ptcore":
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))
    for v in sorted(mods):
        if v not in index:
            strong(v)
    return comps


def _in(mod, packages):
    return any(mod == p or mod.startswith(p + ".") for p in packages)


def test_in_function_imports_only_shrink(sites):
    unexplained = [(m, line) for m, line, marked in sites if not marked]
    assert len(unexplained) <= IN_FUNCTION_CEILING, (
        f"{len(unexplained)} imports of ptcore modules inside functions without a '# lazy:' "
        f"reason, the ceiling is {IN_FUNCTION_CEILING}: import at module level (or give the "
        "reason a lazy import has); all of them:\n" + "\n".join(
            f"{m}:{line}" for m, line in sorted(unexplained, key=str)))


def test_clean_packages_import_at_module_level(sites):
    bad = sorted(f"{m}:{line}" for m, line, marked in sites if not marked and _in(m, CLEAN))
    assert not bad, ("imports inside functions, without a '# lazy:' reason, in packages that "
                     "had none:\n" + "\n".join(bad))


def test_no_cycle_through_clean_packages(graph):
    mods, edges, lazy = graph
    both = {m: edges.get(m, set()) | lazy.get(m, set()) for m in set(edges) | set(lazy)}
    bad = [c for c in _cycles(mods, both) if any(_in(m, CLEAN) for m in c)]
    assert not bad, f"import cycles (imports inside functions counted) through {CLEAN}: {bad}"


def test_clean_list_is_a_list_of_packages(graph):
    mods = graph[0]
    assert all(p in mods for p in CLEAN), [p for p in CLEAN if p not in mods]


# ---- the checks catch what they are for: a synthetic package ---------------

_FAKE = {
    "__init__.py": "",
    "_tensor.pyx": '''"""A docstring that mentions code:
from ptcore.optim import SGD
"""
from ptcore._ops.kernels._types cimport (PT_FLOAT32,
                                 PT_MAX_DIMS)
cdef extern from "ptc_alloc.h":
    void* ptc_alloc(size_t n) nogil
include "_tensor_part.pxi"
s = "import ptcore.optim  # not a statement"

cdef inline int _f(int a) except -1:
    from ptcore.autograd import grad_mode   # inside a cdef function
    return a

cdef class T:
    cdef int x
    def g(self):
        if self.x:
            import ptcore._ops.kernels._types
        return 0

cimport ptcore._ops.kernels._types as _types
''',
    "_tensor_part.pxi": "from ptcore.nn cimport Module  # included: counts for ptcore._tensor\n",
    "_ops/__init__.py": "",
    "_ops/kernels/_types.pxd": "cdef enum:\n    PT_FLOAT32 = 6\n",
    "autograd/__init__.py": "",
    "autograd/grad_mode.py": "",
    "nn/__init__.py": "from ptcore import optim\n",
    "optim/__init__.py": "from ptcore.nn import Module\n",
}


def test_the_checks_catch_a_synthetic_violation(tmp_path):
    """A fake ptcore tree: a Cython core module importing the library (through
    an included .pxi) and, inside a cdef function, autograd; nn and optim
    importing each other.  The reader sees the statements (not the docstring
    or the string), the layer check, the library order and the cycle check
    fail on them."""
    root = tmp_path / "ptcore"
    for rel, text in _FAKE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    mods, edges, lazy, sites = _graph(root)
    assert mods["ptcore._ops.kernels._types"].suffix == ".pxd"
    assert edges["ptcore._tensor"] == {"ptcore._ops.kernels._types", "ptcore.nn"}
    assert lazy["ptcore._tensor"] == {"ptcore.autograd.grad_mode", "ptcore._ops.kernels._types"}
    assert sorted(sites) == [("ptcore._tensor", "_tensor.pyx:12", False),
                             ("ptcore._tensor", "_tensor.pyx:19", False)]
    bad = _upward((("module-level", edges), ("in a function", lazy)), _layer, LAYERS, ())
    assert "ptcore._tensor -> ptcore.nn (module-level: core -> library)" in bad
    assert "ptcore._tensor -> ptcore.autograd.grad_mode (in a function: core -> autograd)" in bad
    assert "ptcore.nn -> ptcore.optim (module-level: nn -> training)" in _upward(
        (("module-level", edges),), _library_layer, LIBRARY_LAYERS, ())
    assert _cycles(mods, edges) == [["ptcore.nn", "ptcore.optim"]]


def test_cython_reader_statements():
    """Continuations joined, strings and comments blanked, function bodies told
    from class bodies and declarations."""
    text = ("from a import (b,\n"
            "    c)  # (\n"
            "x = 'import d'; y = \"(\"\n"
            "cdef struct S:\n"
            "    int f\n"
            "cpdef object h(x) noexcept:\n"
            "    import e\n"
            "    with nogil:\n"
            "        pass\n"
            "import f, \\\n"
            "    g\n")
    assert _cython_statements(text) == [
        (1, False, "from a import (b, c)"), (3, False, "x = \"\"; y = \"\""),
        (4, False, "cdef struct S:"), (5, False, "int f"),
        (6, False, "cpdef object h(x) noexcept:"), (7, True, "import e"),
        (8, True, "with nogil:"), (9, True, "pass"), (10, False, "import f, g")]
    assert _cython_imports("ptcore._x", "from . cimport _y, _z as w", {"ptcore._y"}) == \
        ["ptcore._y", "ptcore"]
