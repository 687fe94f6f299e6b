"""Sphinx extension: one API reference page per public module of ptcore.

The public modules and their titles are listed once, in :data:`MODULES`.
When the builder starts, each module's page is written to
``doc/reference/generated/<module>.rst`` (not committed): the module
docstring, autosummary tables of its classes and functions (and a list of
its other public names), then the autodoc entry of every class and
function.  What a module makes public is its ``__all__``, or else its
names without a leading underscore whose objects ptcore defines; pages are
regenerated on every build, so they cannot go stale.

``tests/docs/test_docs_pages.py`` imports this module to check that every
public module has a page and that every name on a page imports.
"""
import importlib
import inspect
import os
import types
from pathlib import Path

__all__ = ["MODULES", "OPTIONAL", "available_modules", "public_names", "module_page", "write_pages", "setup"]

# (module, title): the API reference, in the order of its index
MODULES = [
    ("ptcore", "ptcore: tensors and operations"),
    ("ptcore.Tensor", "ptcore.Tensor"),
    ("ptcore.nn", "ptcore.nn: layers and containers"),
    ("ptcore.nn.functional", "ptcore.nn.functional"),
    ("ptcore.nn.init", "ptcore.nn.init"),
    ("ptcore.nn.attention", "ptcore.nn.attention"),
    ("ptcore.nn.attention.flex_attention", "ptcore.nn.attention.flex_attention"),
    ("ptcore.optim", "ptcore.optim"),
    ("ptcore.optim.lr_scheduler", "ptcore.optim.lr_scheduler"),
    ("ptcore.autograd", "ptcore.autograd"),
    ("ptcore.autograd.forward_ad", "ptcore.autograd.forward_ad"),
    ("ptcore.func", "ptcore.func"),
    ("ptcore.linalg", "ptcore.linalg"),
    ("ptcore.fft", "ptcore.fft"),
    ("ptcore.special", "ptcore.special"),
    ("ptcore.distributions", "ptcore.distributions"),
    ("ptcore.sparse", "ptcore.sparse"),
    ("ptcore.utils.data", "ptcore.utils.data"),
    ("ptcore.utils.cython_extension", "ptcore.utils.cython_extension"),
    ("ptcore.library", "ptcore.library: custom operators"),
    ("ptcore.multiprocessing", "ptcore.multiprocessing"),
    ("ptcore.cuda", "ptcore.cuda"),
    ("ptcore.amp", "ptcore.amp"),
    ("ptcore.jit", "ptcore.jit"),
    ("ptcore.onnx", "ptcore.onnx"),
    ("ptcore.distributed", "ptcore.distributed"),
    ("ptcore.distributed.fsdp", "ptcore.distributed.fsdp: fully sharded data parallel"),
    ("ptcore.distributed.tensor", "ptcore.distributed.tensor: DTensor"),
    ("ptcore.distributed.optim", "ptcore.distributed.optim: ZeroRedundancyOptimizer"),
    ("ptcore.distributed.nn", "ptcore.distributed.nn: collectives autograd sees through"),
    ("ptcore.distributed.rpc", "ptcore.distributed.rpc: no RPC framework"),
    ("ptcore.distributed.algorithms.join", "ptcore.distributed.algorithms.join: uneven inputs"),
    ("ptcore.distributed.algorithms.ddp_comm_hooks.default_hooks",
     "ptcore.distributed.algorithms.ddp_comm_hooks.default_hooks: DDP communication hooks"),
    ("ptcore.distributed.checkpoint", "ptcore.distributed.checkpoint: distributed checkpoints"),
    ("ptcore.distributed.checkpoint.state_dict", "ptcore.distributed.checkpoint.state_dict"),
    ("ptcore.distributed.elastic.multiprocessing.errors",
     "ptcore.distributed.elastic.multiprocessing.errors: @record"),
    ("ptcore.profiler", "ptcore.profiler"),
    ("ptcore.serialization", "ptcore.serialization: save and load"),
    ("ptcore.array_api", "ptcore.array_api"),
    ("ptcore.backends", "ptcore.backends"),
    ("ptcore.__config__", "ptcore.__config__: build configuration"),
    ("ptcore.testing", "ptcore.testing"),
    ("ptcore.nn.utils", "ptcore.nn.utils"),
    ("ptcore.nn.parallel", "ptcore.nn.parallel"),
    ("ptcore.utils.checkpoint", "ptcore.utils.checkpoint"),
    ("ptcore.utils.safetensors", "ptcore.utils.safetensors"),
    ("ptcore.utils.dlpack", "ptcore.utils.dlpack"),
    ("ptcore.utils.benchmark", "ptcore.utils.benchmark"),
    ("ptcore.utils.flop_counter", "ptcore.utils.flop_counter"),
    ("ptcore.utils.module_tracker", "ptcore.utils.module_tracker"),
    ("ptcore.utils.tensorboard", "ptcore.utils.tensorboard: SummaryWriter"),
    ("ptcore.utils.weak", "ptcore.utils.weak: identity-keyed weak references"),
    ("ptcore.utils.collect_env", "ptcore.utils.collect_env: environment report"),
    ("ptcore.overrides", "ptcore.overrides"),
    ("ptcore.accelerator", "ptcore.accelerator"),
    ("ptcore.cpu", "ptcore.cpu"),
    ("ptcore.random", "ptcore.random"),
    ("ptcore.hub", "ptcore.hub"),
    ("ptcore.as_torch", "ptcore.as_torch: run PyTorch programs and libraries on ptcore"),
    ("ptcore.signal.windows", "ptcore.signal.windows"),
    ("ptcore.fx", "ptcore.fx: symbolic tracing and graph transformation"),
    ("ptcore.fx.passes.shape_prop", "ptcore.fx.passes.shape_prop"),
    ("ptcore.fx.passes.split_module", "ptcore.fx.passes.split_module"),
    ("ptcore.fx.passes.infra.pass_base", "ptcore.fx.passes.infra.pass_base"),
    ("ptcore.fx.passes.infra.pass_manager", "ptcore.fx.passes.infra.pass_manager"),
    ("ptcore.fx.experimental.optimization", "ptcore.fx.experimental.optimization"),
    ("ptcore.fx.experimental.proxy_tensor", "ptcore.fx.experimental.proxy_tensor"),
    ("ptcore.export", "ptcore.export: whole-graph capture of a module (torch.export)"),
    ("ptcore.__future__", "ptcore.__future__: module-conversion switches"),
    ("ptcore.nested", "ptcore.nested: nested (ragged) tensors"),
    ("ptcore.masked", "ptcore.masked: masked reductions and MaskedTensor"),
    ("ptcore.compiler", "ptcore.compiler"),
    ("ptcore.futures", "ptcore.futures"),
    ("ptcore.mps", "ptcore.mps"),
    ("ptcore.xpu", "ptcore.xpu"),
    ("ptcore.mtia", "ptcore.mtia"),
    ("ptcore.ao", "ptcore.ao: architecture optimisation"),
    ("ptcore.ao.quantization", "ptcore.ao.quantization: dynamic quantization, observers"),
    ("ptcore.ao.nn.quantized.dynamic", "ptcore.ao.nn.quantized.dynamic: dynamic quantized modules"),
]

# modules documented when this build of ptcore has them (their page is left
# out, not broken, when they are missing)
OPTIONAL = {"ptcore.autograd.forward_ad"}


def available_modules():
    """The (module, title) pairs of :data:`MODULES` that import here."""
    out = []
    for modname, title in MODULES:
        if modname in OPTIONAL:
            try:
                importlib.import_module(modname)
            except ModuleNotFoundError as e:
                if e.name == modname:
                    continue
                raise
        out.append((modname, title))
    return out


# names documented on a page of their own rather than on the ptcore page
_OWN_PAGE = {"ptcore": {"Tensor"}}


def _obj(modname):
    """The module (or, for ``ptcore.Tensor``, the class) behind a page."""
    if modname == "ptcore.Tensor":
        return importlib.import_module("ptcore").Tensor
    return importlib.import_module(modname)


def _defined_by_ptcore(obj):
    mod = getattr(obj, "__module__", None)
    if isinstance(obj, type) or callable(obj):
        return isinstance(mod, str) and mod.split(".")[0] == "ptcore"
    return True


def public_names(modname):
    """The public names of ``modname``, sorted into (classes, functions, data)."""
    obj = _obj(modname)
    if isinstance(obj, type):
        return [], [], []
    names = getattr(obj, "__all__", None)
    explicit = names is not None
    if names is None:
        names = [n for n in dir(obj) if not n.startswith("_")]
    skip = _OWN_PAGE.get(modname, set())
    classes, functions, data = [], [], []
    for name in sorted(set(names)):
        if name in skip:
            continue
        value = getattr(obj, name, None)
        if value is None or isinstance(value, types.ModuleType):
            continue
        if not explicit and not _defined_by_ptcore(value):
            continue
        if isinstance(value, type):
            classes.append(name)
        elif callable(value):
            functions.append(name)
        else:
            data.append(name)
    return classes, functions, data


def _underline(text, char):
    return f"{text}\n{char * len(text)}\n"


def _class_owners():
    """canonical name of each class -> the page that indexes it.

    A class exported by several modules (``ptcore.no_grad`` is
    ``ptcore.autograd.no_grad``) is described on each of their pages, but
    indexed once, on the page of the module nearest to where it is defined;
    the other descriptions are ``:no-index:`` (Sphinx would warn of a
    duplicate description of its canonical name)."""
    pages = {}
    for modname, _ in available_modules():
        obj = _obj(modname)
        if isinstance(obj, type):
            continue
        for n in public_names(modname)[0]:
            cls = getattr(obj, n)
            canonical = f"{cls.__module__}.{cls.__qualname__}"
            pages.setdefault(canonical, []).append(modname)
    owners = {}
    for canonical, mods in pages.items():
        def score(m):
            return len(m) if canonical.startswith(m + ".") else -1
        owners[canonical] = max(mods, key=score)
    return owners


def module_page(modname, title, owners=None):
    """The reST source of ``modname``'s reference page."""
    if owners is None:
        owners = _class_owners()
    obj = _obj(modname)
    out = [f".. This page is written by doc/_ext/ptcore_apigen.py; edit that file.\n",
           _underline(title, "=")]
    if isinstance(obj, type):
        parent, _, cls = modname.rpartition(".")
        out += [f".. currentmodule:: {parent}\n",
                f".. autoclass:: {cls}\n   :members:\n   :undoc-members:\n"]
        return "\n".join(out)
    out.append(f".. automodule:: {modname}\n   :no-members:\n")
    out.append(f".. currentmodule:: {modname}\n")
    classes, functions, data = public_names(modname)
    for heading, names in (("Classes", classes), ("Functions", functions)):
        if names:
            out.append(_underline(heading, "-"))
            out.append(".. autosummary::\n\n" + "".join(f"   {n}\n" for n in names))
    if data:
        out.append(_underline("Other public names", "-"))
        out.append("Constants, dtypes and instances: " +
                   ", ".join(f"``{n}``" for n in data) + ".\n")
    if classes or functions:
        out.append(_underline("Reference", "-"))
    for n in classes:
        cls = getattr(obj, n)
        canonical = f"{cls.__module__}.{cls.__qualname__}"
        extra = "" if owners.get(canonical, modname) == modname else "   :no-index:\n"
        out.append(f".. autoclass:: {n}\n   :members:\n{extra}")
    for n in functions:
        out.append(f".. autofunction:: {n}\n")
    return "\n".join(out)


def write_pages(outdir):
    """Write every module's page to ``outdir`` (only files whose text changed)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    owners = _class_owners()
    for modname, title in available_modules():
        path = outdir / f"{modname}.rst"
        text = module_page(modname, title, owners)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    for stale in set(outdir.glob("*.rst")) - set(written):
        stale.unlink()
    return written


def _builder_inited(app):
    write_pages(Path(app.srcdir) / "reference" / "generated")


def setup(app):
    # before autosummary reads the sources (its handler runs at the default priority 500)
    app.connect("builder-inited", _builder_inited, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}


if __name__ == "__main__":      # python doc/_ext/ptcore_apigen.py: write the pages only
    write_pages(Path(__file__).resolve().parents[1] / "reference" / "generated")
    print(os.linesep.join(m for m, _ in available_modules()))
