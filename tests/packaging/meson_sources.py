"""Read ptcore's meson.build files: which source files the build needs and what it installs.

A small reader for the subset of the meson language the project uses (string
literals, ``subdir()``, ``foreach name : [...]`` loops over ``name + '.pyx'``,
``custom_target(... output: ...)`` and ``py.install_sources([...], subdir: ...)``).
The packaging tests use it to check the sdist and the installed tree against
what the build files actually say.
"""
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SOURCE_SUFFIXES = (".py", ".pyx", ".pxd", ".pxi", ".h", ".tp", ".c")
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'")


def repo_root():
    """The source checkout, or skip (tests run from an installed tree without it)."""
    if not (ROOT / "pyproject.toml").is_file() or not (ROOT / "meson.build").is_file():
        pytest.skip("needs ptcore's source checkout (pyproject.toml, meson.build)")
    return ROOT


def pyproject():
    with open(repo_root() / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def source_version():
    """ptcore's version from its one source, ``ptcore/version.py`` (meson.build reads it
    through ``tools/version.py``; pyproject.toml declares it dynamic)."""
    text = (repo_root() / "ptcore" / "version.py").read_text()
    return re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.MULTILINE).group(1)


def strip_comments(text):
    """Drop ``# ...`` comments, leaving ``#`` inside string literals alone."""
    out = []
    for line in text.splitlines():
        in_str = False
        cut = len(line)
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "\\" and in_str:
                i += 2
                continue
            if ch == "'":
                in_str = not in_str
            elif ch == "#" and not in_str:
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return "\n".join(out)


def meson_build_files(root=None):
    """Every meson.build reached from the top one through ``subdir()``, in build order."""
    root = Path(root or repo_root())
    order = []

    def visit(d):
        f = d / "meson.build"
        if not f.is_file():
            raise AssertionError(f"subdir() names {d.relative_to(root)} but it has no meson.build")
        order.append(f)
        for sub in re.findall(r"\bsubdir\(\s*'([^']+)'\s*\)", strip_comments(f.read_text())):
            visit(d / sub)

    visit(root)
    return order


def call_bodies(text, name):
    """The argument text of every ``name(...)`` call (balanced parentheses)."""
    bodies = []
    for m in re.finditer(re.escape(name) + r"\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
            i += 1
        bodies.append(text[m.end():i - 1])
    return bodies


def _list_assignment(text, var, where):
    m = re.search(r"^" + var + r"\s*=\s*\[", text, re.M)
    if m is None:
        raise AssertionError(f"{where}: no list assignment to {var}")
    end = text.index("]", m.end())
    return text[m.end():end]


def referenced_sources(root=None):
    """Source files (paths relative to the root) that the meson build reads.

    String literals with a source suffix, relative to the directory of their
    meson.build, plus ``name + '.pyx'`` inside ``foreach name : [...]`` loops;
    outputs of custom targets (generated files) are left out.
    """
    root = Path(root or repo_root())
    found = {}
    for mb in meson_build_files(root):
        d = mb.parent
        text = strip_comments(mb.read_text())
        generated = set(re.findall(r"\boutput\s*:\s*'([^']+)'", text))
        for lit in _LITERAL.findall(text):
            if (lit.endswith(SOURCE_SUFFIXES) and lit not in generated and " " not in lit
                    and not lit.startswith(".")):
                found[(d / lit).relative_to(root).as_posix()] = mb
        for m in re.finditer(r"\bforeach\s+(\w+)\s*:\s*\[(.*?)\](.*?)\bendforeach\b", text, re.S):
            var, items, body = m.groups()
            names = _LITERAL.findall(items)
            for suffix in re.findall(r"\b" + var + r"\s*\+\s*'([^']+)'", body):
                if suffix.endswith(SOURCE_SUFFIXES):
                    for n in names:
                        found[(d / (n + suffix)).relative_to(root).as_posix()] = mb
    return found


def installed_sources(root=None):
    """``{installed path: source path}`` for every ``py.install_sources`` call."""
    root = Path(root or repo_root())
    installed = {}
    for mb in meson_build_files(root):
        text = strip_comments(mb.read_text())
        for body in call_bodies(text, "py.install_sources"):
            m = re.search(r"\bsubdir\s*:\s*'([^']*)'", body)
            if m is None:
                raise AssertionError(f"{mb}: py.install_sources without subdir: {body!r}")
            files_part = body[:m.start()]
            lits = _LITERAL.findall(files_part)
            # a list variable: py.install_sources(python_sources, subdir: ...)
            for var in re.findall(r"^\s*(\w+)\s*,", files_part):
                lits += _LITERAL.findall(_list_assignment(text, var, mb))
            for lit in lits:
                src = (mb.parent / lit).relative_to(root).as_posix()
                installed[f"{m.group(1)}/{Path(lit).name}"] = src
    return installed


def extension_modules(root=None):
    """Installed paths (without the platform suffix) of every ``py.extension_module``."""
    root = Path(root or repo_root())
    mods = []
    for mb in meson_build_files(root):
        text = strip_comments(mb.read_text())
        loops = {m.start(): m for m in re.finditer(
            r"\bforeach\s+(\w+)\s*:\s*\[(.*?)\](.*?)\bendforeach\b", text, re.S)}
        for body in call_bodies(text, "py.extension_module"):
            sub = re.search(r"\bsubdir\s*:\s*'([^']*)'", body).group(1)
            first = body.split(",", 1)[0].strip()
            if first.startswith("'"):
                mods.append(f"{sub}/{first.strip(chr(39))}")
                continue
            for m in loops.values():     # the loop variable: every name of its list
                if first == m.group(1) and body in m.group(3):
                    mods.extend(f"{sub}/{n}" for n in _LITERAL.findall(m.group(2)))
    return mods
