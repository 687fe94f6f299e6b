"""Test helper: make ``import torch`` (and ``torch.X``) resolve to ptcore in this
process, so that a library's own code and tests run against ptcore.

Used as a pytest plugin (``PYTHONPATH=tests/jit pytest -p torch_as_ptcore ...``)
to run einops' own test suite, and imported by child interpreters of
tests/jit/test_einops_layers.py.  It lives in the tests only; ptcore's own
launcher for this is ``python -m ptcore.as_torch``.
"""
import importlib
import importlib.abc
import importlib.util
import sys

import ptcore


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``torch.<path>`` -> the module ``ptcore.<path>``."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            real = "ptcore" + name[len("torch"):]
            try:
                if importlib.util.find_spec(real) is None:
                    return None
            except (ImportError, ValueError):
                return None
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("ptcore" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


def install():
    """Resolve ``torch`` to ptcore from now on (refused if torch is imported)."""
    if "torch" in sys.modules and sys.modules["torch"] is not ptcore:
        raise RuntimeError("torch_as_ptcore: the real torch is imported already")
    for name, mod in list(sys.modules.items()):
        if name == "ptcore" or name.startswith("ptcore."):
            sys.modules.setdefault("torch" + name[len("ptcore"):], mod)
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())


install()
