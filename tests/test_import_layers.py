"""The package's import graph goes one way, down the layers.

The layers are listed here, once, lowest first; a module belongs to the
longest prefix that names it.  The test reads every module of the source
tree with ``ast`` (nothing is imported) and fails on

* an import cycle among module-level imports, and
* an import (module-level or inside a function) from a module to a module of
  a higher layer,

except for the edges listed in ``KNOWN_UPWARD``, each with its reason; that
list may only shrink.

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

import pytest

import ptcore

LAYERS = [
    ("core", ["ptcore._tensor", "ptcore._dlpack", "ptcore._config", "ptcore._dtype_utils",
              "ptcore._settings", "ptcore._return_types", "ptcore._ops._blas", "ptcore._ops._conv",
              "ptcore._ops._copy", "ptcore._ops._ew", "ptcore._ops._ewdrv", "ptcore._ops._index",
              "ptcore._ops._optim", "ptcore._ops._parallel", "ptcore._ops._random",
              "ptcore._ops._reduce", "ptcore._ops._sort", "ptcore._ops._nn_kernels",
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
                 "ptcore._torch_checkpoint_writer",
                 "ptcore._compile", "ptcore.array_api", "ptcore.fft", "ptcore.special",
                 "ptcore.sparse", "ptcore.distributions", "ptcore.quasirandom", "ptcore.signal",
                 "ptcore.functional", "ptcore.version", "ptcore._legacy_types", "ptcore.storage",
                 "ptcore.library", "ptcore._nn_functions", "ptcore.compiler", "ptcore._dynamo",
                 "ptcore._inductor", "ptcore._config_module", "ptcore._ops_namespace",
                 "ptcore._streams", "ptcore._absent_device", "ptcore.mps", "ptcore.xpu",
                 "ptcore.mtia", "ptcore.futures", "ptcore.types", "ptcore.torch_version",
                 "ptcore._sym", "ptcore._control_flow", "ptcore._build_info", "ptcore._lobpcg",
                 "ptcore.__config__", "ptcore.__future__", "ptcore.fx", "ptcore.export",
                 "ptcore.nested", "ptcore.masked",
                 "ptcore._checks"]),
    # the launcher: unmodified PyTorch programs and libraries see ptcore as torch
    ("launcher", ["ptcore.as_torch"]),
]

# (importer, imported): why it still points up
KNOWN_UPWARD = {
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
# lower it when you remove some
IN_FUNCTION_CEILING = 99

# packages (and single modules) on no import cycle, counting imports inside
# functions, and without an import inside a function that has no '# lazy:' reason
CLEAN = ["ptcore.__config__", "ptcore._build_info", "ptcore._checkpoint_allowlist",
         "ptcore._checkpoint_tensors", "ptcore._checkpoint_zip", "ptcore._control_flow",
         "ptcore._ptcore_checkpoint_v1", "ptcore._streams", "ptcore._torch_checkpoint_reader",
         "ptcore._torch_checkpoint_writer", "ptcore.accelerator", "ptcore.amp",
         "ptcore.array_api", "ptcore.backends", "ptcore.cpu", "ptcore.cuda", "ptcore.distributed",
         "ptcore.distributions", "ptcore.export", "ptcore.fft", "ptcore.func", "ptcore.fx",
         "ptcore.jit", "ptcore.library", "ptcore.masked", "ptcore.multiprocessing",
         "ptcore.nested", "ptcore.nn", "ptcore.onnx", "ptcore.optim", "ptcore.overrides",
         "ptcore.profiler", "ptcore.serialization", "ptcore.signal", "ptcore.sparse",
         "ptcore.special", "ptcore.testing", "ptcore.utils"]

ROOT = pathlib.Path(ptcore.__file__).resolve().parent


def _modules():
    mods = {}
    for p in ROOT.rglob("*"):
        if "builddir" in p.parts:
            continue
        if p.suffix in (".so", ".pyd"):
            # a compiled module (the installed package has these, not the .pyx)
            rel = p.relative_to(ROOT.parent)
            name = ".".join(rel.parts[:-1] + (p.name.split(".")[0],))
            mods.setdefault(name, p)
            continue
        if p.suffix not in (".py", ".pyx"):
            continue
        rel = p.relative_to(ROOT.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        mods[name] = p
    return mods


def _layer(mod):
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for pre in prefixes:
            if (mod == pre or mod.startswith(pre + ".")) and (best is None or len(pre) > best[1]):
                best = (i, len(pre))
    return None if best is None else best[0]


def _lazy_reason(lines, lineno):
    """Whether the import at ``lineno`` (1-based) carries a '# lazy:' reason,
    on its own line or on a comment line just above it."""
    if "# lazy:" in lines[lineno - 1]:
        return True
    above = lines[lineno - 2].strip() if lineno >= 2 else ""
    return above.startswith("#") and "# lazy:" in above


def _graph():
    mods = _modules()
    edges, lazy = {}, {}
    sites = []          # (module, line, marked lazy) of each in-function import of a ptcore module

    def target(name):
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

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
                    hit = False
                    for t in _resolve(name, child, is_pkg, mods):
                        t = target(t)
                        if t != name and t.startswith("ptcore"):
                            (lazy if f else edges).setdefault(name, set()).add(t)
                            hit = hit or t != "ptcore"
                    if f and hit:
                        sites.append((name, child.lineno, _lazy_reason(lines, child.lineno)))
                visit(child, f)
        visit(tree, False)
    return mods, edges, lazy, sites


def _resolve(cur, node, is_pkg, mods):
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        parts = cur.split(".")
        if not is_pkg:
            parts = parts[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join(parts + ([base] if base else []))
    out = []
    for a in node.names:
        full = f"{base}.{a.name}"
        out.append(full if full in mods else base)
    return out


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
    bad = []
    for kind, g in (("module-level", edges), ("in a function", lazy)):
        for a, targets in g.items():
            la = _layer(a)
            for b in targets:
                if b == "ptcore" or la is None:
                    continue
                lb = _layer(b)
                if lb is not None and lb > la and (a, b) not in KNOWN_UPWARD and \
                        not any(a == k[0] and b.startswith(k[1] + ".") for k in KNOWN_UPWARD):
                    bad.append(f"{a} -> {b} ({kind}: {LAYERS[la][0]} -> {LAYERS[lb][0]})")
    assert not bad, "imports up the layers:\n" + "\n".join(sorted(bad))


def test_root_importers_only_shrink(graph):
    _, edges, lazy = graph
    importers = {a for g in (edges, lazy) for a, t in g.items() if "ptcore" in t}
    lower = {a for a in importers if _layer(a) is not None and _layer(a) < 3}
    new = sorted(lower - ROOT_IMPORTERS)
    assert not new, f"new imports of the package root from below the autograd layer: {new}"


def test_known_lists_are_current(graph):
    _, edges, lazy = graph
    all_edges = {(a, b) for g in (edges, lazy) for a, t in g.items() for b in t}
    stale = [k for k in KNOWN_UPWARD if k not in all_edges and
             not any(a == k[0] and b.startswith(k[1] + ".") for a, b in all_edges)]
    assert not stale, f"KNOWN_UPWARD lists edges that are gone (remove them): {stale}"


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
            f"{m}:{line}" for m, line in sorted(unexplained)))


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
