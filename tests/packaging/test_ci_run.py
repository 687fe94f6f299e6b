""".ci/run runs the README's test command unchanged and builds the docs as part of it.

The README's test command is ``python -m pip install ".[test]" && pytest``; .ci/run runs
exactly that (its last line), after installing the ``doc`` extra's packages so that
tests/docs/test_docs_build.py runs ``sphinx-build -W`` rather than skipping.  The doc extra
pins every package below a tested upper bound.
"""
import shlex
import subprocess
import sys

from packaging.requirements import Requirement

from meson_sources import pyproject, repo_root

TEST_COMMAND = 'python -m pip install ".[test]" && pytest'


def _ci_lines():
    text = (repo_root() / ".ci" / "run").read_text()
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_readme_shows_the_test_command():
    readme = (repo_root() / "README.md").read_text()
    assert f"\n    {TEST_COMMAND}\n" in readme


def test_ci_run_ends_with_the_readme_test_command():
    last = _ci_lines()[-1]
    assert last.replace("--quiet ", "") == TEST_COMMAND, last


def test_ci_run_installs_the_doc_extra_first():
    lines = _ci_lines()
    doc_install = [i for i, ln in enumerate(lines) if '["doc"]' in ln or "'doc'" in ln]
    assert doc_install and doc_install[0] < len(lines) - 1
    # the expression .ci/run gives pip: the doc extra's requirements, one word each
    snippet = "\n".join(lines)
    expr = snippet[snippet.index("$(python -c '") + len("$(python -c '"):snippet.index("')")]
    r = subprocess.run([sys.executable, "-c", expr], capture_output=True, text=True,
                       cwd=repo_root(), check=True)
    doc = pyproject()["project"]["optional-dependencies"]["doc"]
    assert shlex.split(r.stdout) == doc


def test_doc_extra_is_pinned_with_upper_bounds():
    doc = pyproject()["project"]["optional-dependencies"]["doc"]
    names = set()
    for text in doc:
        assert " " not in text, f"{text!r}: .ci/run passes requirements as words"
        req = Requirement(text)
        names.add(req.name)
        ops = {s.operator for s in req.specifier}
        assert ">=" in ops and "<" in ops, f"{text}: needs a lower and an upper bound"
    assert {"sphinx", "pydata-sphinx-theme", "numpydoc", "sphinx-gallery"} <= names
