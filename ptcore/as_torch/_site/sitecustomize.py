"""Start-up hook of ptcore.as_torch's child interpreters (this folder is on their PYTHONPATH).

When ``PTCORE_AS_TORCH`` is set, ``import torch`` resolves to ptcore in this interpreter too
(``ptcore.as_torch.install()``).  Then the ``sitecustomize`` module this file shadows, if any
(the next one on ``sys.path``), runs as Python would have run it.  The variable is read here
directly: ptcore is not imported at all when it is unset.
"""
import os
import sys


def _run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if os.environ.get("PTCORE_AS_TORCH", "").strip() not in ("", "0"):
    from ptcore.as_torch import install

    install()
_run_shadowed_sitecustomize()
