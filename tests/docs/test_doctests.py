"""Docstring examples and the user guide's examples run as doctests.

The modules listed here have examples that are run; the user guide pages
(doc/user_guide/*.rst, doc/dev/*.rst) are run whole.  Examples run in a
copy of the module's globals with ``ptcore`` and ``np`` added -- except
``ptcore``'s own, which run in a fresh namespace (the package shadows
``round``, ``float``, ``abs`` ... with its ops).
"""
import doctest
import importlib
from pathlib import Path

import numpy as np
import pytest

import ptcore

DOC = Path(__file__).resolve().parents[2] / "doc"

MODULES = [
    "ptcore.library",
    "ptcore._ops.shape",
    "ptcore._ops.reduction",
    "ptcore.quasirandom",
    "ptcore.linalg._factor",
    "ptcore.fft._transforms",
    "ptcore.fft._helpers",
    "ptcore.fft._stft",
    "ptcore.utils.data._utils.collate",
    "ptcore.cuda.allocator.device_allocators",
    "ptcore.cuda.allocator.stats_format",
    "ptcore.profiler.profiler",
    "ptcore.nn.modules.conv",
    "ptcore.nn.functional._pool",
    "ptcore.nn.functional._conv",
    "ptcore.nn.functional._vision",
    "ptcore.amp.autocast_mode",
    "ptcore.testing._comparison",
    "ptcore.testing._creation",
    "ptcore.optim._stateless",
    "ptcore._subclasses.fake_tensor",
    "ptcore._higher_order_ops.associative_scan",
    "ptcore._higher_order_ops.scan",
    "ptcore._higher_order_ops.map",
    "ptcore.fx.experimental.proxy_tensor",
    "ptcore.fx._compatibility",
    "ptcore.distributed.rpc",
    "ptcore.func._levels",
    "ptcore",
]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(tests):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for t in tests:
        runner.run(t, out=_Collect.write)
    return runner.summarize(verbose=False)


class _Collect:
    text = []

    @classmethod
    def write(cls, s):
        cls.text.append(s)


@pytest.mark.parametrize("modname", MODULES)
def test_module_docstring_examples(modname):
    mod = importlib.import_module(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    globs = {} if modname == "ptcore" else dict(vars(mod))
    globs.update(ptcore=ptcore, np=np)
    tests = finder.find(mod, globs=globs)
    # objects re-exported from other modules are run where they are defined
    tests = [t for t in tests if t.examples]
    assert tests, f"{modname} has no docstring examples (remove it from the list)"
    _Collect.text = []
    result = _run(tests)
    assert result.failed == 0, "".join(_Collect.text)


# the pages with examples (the others are prose and literal blocks)
GUIDE_PAGES = sorted(p.relative_to(DOC).as_posix()
                     for p in list(DOC.glob("user_guide/*.rst")) + list(DOC.glob("dev/*.rst"))
                     if ">>> " in p.read_text())


def test_the_guide_has_examples():
    assert len(GUIDE_PAGES) >= 8, GUIDE_PAGES


@pytest.mark.parametrize("page", GUIDE_PAGES)
def test_guide_examples(page):
    text = (DOC / page).read_text()
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {"ptcore": ptcore, "np": np}, page, str(DOC / page), 0)
    _Collect.text = []
    result = _run([test])
    assert result.failed == 0, "".join(_Collect.text)
