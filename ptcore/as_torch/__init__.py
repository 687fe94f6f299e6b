"""Run unmodified PyTorch programs, and the libraries they import, on ptcore.

``python -m ptcore.as_torch PROGRAM.py [ARGS]`` (or ``-m MODULE [ARGS]``, ``-c CODE [ARGS]``)
runs a program with ``import torch`` and every ``torch.X`` resolving to ptcore's modules:
``sys.modules["torch"] is ptcore``, ``torch.nn is ptcore.nn``.  :func:`install` does the same
inside an already running interpreter.

Three pieces make that so:

- a meta-path finder that maps ``torch`` and ``torch.X.Y`` to the module objects ``ptcore`` and
  ``ptcore.X.Y`` (imported on first use, never copied); a submodule torch has and ptcore lacks
  raises :class:`ModuleNotFoundError` naming it;
- the same finder answers ``importlib.metadata`` for a distribution named ``torch`` of the
  version ptcore follows (``ptcore.version.torch_api``), so that libraries' availability and
  version checks (``importlib.util.find_spec("torch")``, ``importlib.metadata.version("torch")``)
  pass where torch is not installed.  Nothing is written to disk: the answer exists only in the
  processes the launcher runs;
- child interpreters inherit it: :func:`install` sets ``PTCORE_AS_TORCH=1`` and puts a folder
  holding only a ``sitecustomize.py`` at the front of ``PYTHONPATH``, which installs the finder at
  start-up when that variable is set (and then runs any ``sitecustomize`` it shadows).  Processes
  started with ``spawn`` or ``forkserver`` (DataLoader workers, ``torch.multiprocessing.spawn``),
  ``torchrun``-style launchers and ``mpiexec`` ranks started from such a process resolve
  ``torch`` the same way.

>>> import ptcore.as_torch
>>> ptcore.as_torch.install()            # doctest: +SKIP
>>> import torch, ptcore                  # doctest: +SKIP
>>> torch is ptcore, torch.nn is ptcore.nn  # doctest: +SKIP
(True, True)
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import pathlib
import re
import sys

import ptcore
from ptcore import version as _version_module
from ptcore._tensor import set_root_name as _set_root_name
from ptcore.torch_version import TorchVersion
from ptcore.version import __version__ as _ptcore_version
from ptcore.version import torch_api as _torch_api

__all__ = ["install", "is_installed"]

#: The environment variable that makes child interpreters install the finder.
ENV_VAR = "PTCORE_AS_TORCH"
#: The folder put on ``PYTHONPATH`` for child interpreters (it holds only sitecustomize.py).
SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")


def _torch_name(ptcore_name):
    return "torch" + ptcore_name[len("ptcore"):]


class _AliasLoader(importlib.abc.Loader):
    """Loads ``torch.X`` as the module object ``ptcore.X`` (imported on first use)."""

    def __init__(self, target, target_spec):
        self._target = target
        self._target_spec = target_spec
        self._own_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self._target)
        self._own_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module):
        # the import system set ``module.__spec__`` to the alias's spec: the module keeps its own
        # (``ptcore.X``), so that relative imports, reloads and pickling inside ptcore see it
        module.__spec__ = self._own_spec
        if not hasattr(module, "__path__"):
            # a module that is no package but registers submodules by name (``ptcore._C``'s
            # ``_functorch``, as torch's ``torch._C._functorch``): the import system finds
            # ``torch._C._functorch`` only in sys.modules, so its alias goes there now
            prefix = self._target + "."
            for name, sub in list(sys.modules.items()):
                if name.startswith(prefix):
                    sys.modules.setdefault(_torch_name(name), sub)

    def is_package(self, fullname):
        return self._target_spec is not None and \
            self._target_spec.submodule_search_locations is not None

    def get_code(self, fullname):
        """The code of ``ptcore.X``: ``python -m torch.X`` runs ptcore's module."""
        loader = getattr(self._target_spec, "loader", None)
        return loader.get_code(self._target) if hasattr(loader, "get_code") else None

    def get_source(self, fullname):
        loader = getattr(self._target_spec, "loader", None)
        return loader.get_source(self._target) if hasattr(loader, "get_source") else None


class _TorchDistribution(importlib.metadata.Distribution):
    """The metadata of the ``torch`` distribution that ptcore stands in for (in memory only)."""

    def read_text(self, filename):
        if filename in ("METADATA", "PKG-INFO"):
            return (f"Metadata-Version: 2.1\nName: torch\nVersion: {_torch_api}\n"
                    f"Summary: ptcore {_ptcore_version} standing in for PyTorch {_torch_api} "
                    "(python -m ptcore.as_torch)\nRequires-Python: >=3.10\n")
        if filename == "top_level.txt":
            return "torch\n"
        return None

    def locate_file(self, path):
        return pathlib.Path(os.path.dirname(os.path.dirname(ptcore.__file__)), path)


_DISTRIBUTION = _TorchDistribution()


#: The other top-level packages of torch's distribution, and the ptcore modules that stand in
#: for them (``from functorch import make_functional``: tensordict).
_OTHER_PACKAGES = {"functorch": "ptcore._functorch.package"}


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch`` and ``torch.*`` as ``ptcore`` and ``ptcore.*`` (the same module objects),
    and the ``torch`` distribution's metadata as ptcore's stand-in for it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in _OTHER_PACKAGES:
            target_name = _OTHER_PACKAGES[fullname]
            spec = importlib.util.find_spec(target_name)
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name, spec),
                                                  origin=spec.origin, is_package=False)
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target_name = "ptcore" + fullname[len("torch"):]
        module = sys.modules.get(target_name)
        if module is not None:
            target_spec = getattr(module, "__spec__", None)
        else:
            try:
                target_spec = importlib.util.find_spec(target_name)
            except ModuleNotFoundError as exc:
                missing = exc.name or ""
                if not target_name.startswith(missing + "."):
                    raise
                target_spec, target_name = None, missing
            if target_spec is None:
                raise ModuleNotFoundError(
                    f"No module named {_torch_name(target_name)!r}: ptcore, which stands in for "
                    f"torch here (ptcore.as_torch), has no {target_name!r}",
                    name=_torch_name(target_name))
        origin = getattr(target_spec, "origin", None) or getattr(module, "__file__", None)
        is_package = (target_spec.submodule_search_locations is not None
                      if target_spec is not None else hasattr(module, "__path__"))
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader("ptcore" + fullname[len("torch"):], target_spec),
            origin=origin, is_package=is_package)

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        name = context.name
        if name is None or re.sub(r"[-_.]+", "-", name).lower() == "torch":
            return iter((_DISTRIBUTION,))
        return iter(())

    def __repr__(self):
        return "<ptcore.as_torch.TorchAliasFinder: torch -> ptcore>"


def is_installed():
    """Whether ``import torch`` resolves to ptcore in this process."""
    return any(isinstance(f, TorchAliasFinder) for f in sys.meta_path)


#: ``torch.__version__`` inside the launcher: the torch release whose API ptcore follows, with
#: ptcore's own version as the local label (as torch's CPU builds say ``2.13.0+cpu``).
TORCH_VERSION = f"{_torch_api}+ptcore." + _ptcore_version.replace("+", ".")


def _present_as_torch():
    """Make the root module answer as torch does where libraries read it:

    - ``torch.__version__`` (which is ``ptcore.__version__`` here) and
      ``torch.version.__version__`` say :data:`TORCH_VERSION`: libraries compare it with the
      releases they need (Lightning's ``compare_version("torch", operator.ge, "2.4.0")`` reads
      ``torch.__version__``) and took their paths for torch 0.1 with ptcore's own number;
    - ``torch.__name__`` is ``"torch"``: libraries resolve dotted names from it (Pyro's
      ``patch_dependency("torch.distributions...")`` asserts the first part is the root
      module's ``__name__``).  The module keeps its spec (``ptcore``), so imports, pickling
      (by ``__module__``, unchanged) and reloads still find ptcore;
    - dtypes, layouts, memory formats, ``Size`` and the legacy type names print as torch's
      (``torch.float32``, ``torch.Size([2])``, ``x.type() == "torch.FloatTensor"``): programs
      compare and parse those strings (``str(dtype).split(".")[1]``);
    - ``Tensor`` and ``nn.Parameter``/``Buffer`` have torch's ``__module__`` (``"torch"``,
      ``"torch.nn.parameter"``): array-library dispatchers pick a backend by the top-level
      module of an array's class (opt_einsum's and autoray's ``infer_backend``: "torch" takes
      their torch backend, "ptcore" a NumPy-style module API that torch does not have).
      Pickling by class still finds them (``torch.Tensor`` is ``ptcore.Tensor`` here).

    Outside the launcher nothing of this changes."""
    ptcore.__version__ = TorchVersion(TORCH_VERSION)
    _version_module.__version__ = TORCH_VERSION
    ptcore.__name__ = "torch"
    _set_root_name("torch")
    ptcore.Tensor.__module__ = "torch"
    parameter = sys.modules.get("ptcore.nn.parameter")   # (else it names itself on import)
    if parameter is not None:
        for name in parameter.CLASSES_NAMED_AS_TORCH:
            getattr(parameter, name).__module__ = "torch.nn.parameter"


def _check_no_real_torch():
    torch = sys.modules.get("torch")
    if torch is not None and torch is not ptcore:
        where = getattr(torch, "__file__", None) or repr(torch)
        raise RuntimeError(
            f"ptcore.as_torch.install(): the real torch is already imported in this process "
            f"(from {where}); torch and ptcore cannot both be 'torch'.  Call install() before "
            "anything imports torch, or run the program with `python -m ptcore.as_torch "
            "PROGRAM.py`")


def install(children=True):
    """Make ``import torch`` (and ``torch.X``, ``importlib.metadata.version("torch")``) resolve
    to ptcore in this process.

    Parameters
    ----------
    children : bool, optional
        Also in the child interpreters this process starts (``spawn``/``forkserver``
        multiprocessing, subprocesses of ``sys.executable``, ranks of ``torchrun`` or
        ``mpiexec``): sets ``PTCORE_AS_TORCH=1`` and prepends ptcore's start-up folder to
        ``PYTHONPATH`` in ``os.environ``.  Default True.

    Raises
    ------
    RuntimeError
        If the real ``torch`` is already imported in this process.

    Notes
    -----
    Calling it again does nothing more.  ``fork`` children inherit the finder as they inherit
    everything else.
    """
    _check_no_real_torch()
    if not is_installed():
        sys.meta_path.insert(0, TorchAliasFinder())
        _present_as_torch()
    if children:
        os.environ[ENV_VAR] = "1"
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if SITE_DIR not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([SITE_DIR, *paths])
