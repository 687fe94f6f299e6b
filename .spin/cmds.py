"""ptcore's own spin commands (``spin docs``, ``spin bench``).

spin's built-in ``build``/``test``/``ipython``... come from ``spin.cmds.meson``
(see ``[tool.spin.commands]`` in pyproject.toml); these two run against the
package that ``spin build`` installed into ``build-install/``, as SciPy's
``.spin/cmds.py`` does.
"""
import os
import re
import shutil
import sys
from pathlib import Path

import click
from spin import util
from spin.cmds import meson

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"


def benchmark_names():
    """Runnable benchmark scripts in benchmarks/ (helpers start with '_')."""
    return sorted(p.stem for p in BENCH_DIR.glob("*.py") if not p.name.startswith("_"))


def bench_command(name, *, quick=False, threads=None, python=sys.executable):
    """argv that runs ``benchmarks/<name>.py``, passing only the options that script accepts."""
    if name not in benchmark_names():
        raise click.BadParameter(f"no benchmark {name!r}; choose from {', '.join(benchmark_names())}")
    script = BENCH_DIR / f"{name}.py"
    source = script.read_text()
    argv = [python, str(script)]
    # a script takes an option when it declares it, or parses the harness's common
    # options (``_harness.parse_bench_args``: --threads, --quick, --only)
    common = re.search(r"\bparse_bench_args\(", source) is not None

    def takes(option):
        return common or re.search(rf"""add_argument\(\s*["']{option}["']""", source)

    if quick and takes("--quick"):
        argv.append("--quick")
    if threads is not None:
        if not takes("--threads"):
            raise click.BadParameter(f"benchmarks/{name}.py has no --threads option")
        argv += ["--threads", str(threads)]
    return argv


def docs_command(builder="html", *, warnings_as_errors=True, python=sys.executable):
    """argv of the documentation build (the README's sphinx-build command)."""
    argv = [python, "-m", "sphinx", "-b", builder]
    if warnings_as_errors:
        argv.append("-W")
    return argv + [str(ROOT / "doc"), str(ROOT / "doc" / "_build" / builder)]


@click.command()
@click.argument("builder", default="html")
@click.option("--clean", is_flag=True, help="Remove doc/_build first")
@click.option("--warnings-as-errors/--allow-warnings", "-W", default=True, show_default=True,
              help="Fail on Sphinx warnings (as CI does)")
@click.option("--build/--no-build", "build", default=True, help="Run `spin build` first")
@meson.build_dir_option
@click.pass_context
def docs(ctx, *, builder, clean, warnings_as_errors, build, build_dir=None):
    """📖 Build the Sphinx docs against the built ptcore.

    Runs `sphinx-build -W -b BUILDER doc doc/_build/BUILDER` with the package
    that `spin build` installed on the path (needs the `doc` extra).
    """
    if clean:
        shutil.rmtree(ROOT / "doc" / "_build", ignore_errors=True)
    if build:
        ctx.invoke(meson.build, build_dir=build_dir)
    meson._set_pythonpath(build_dir)
    util.run(docs_command(builder, warnings_as_errors=warnings_as_errors))


@click.command()
@click.argument("names", nargs=-1)
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and exit")
@click.option("--quick", is_flag=True, help="Pass --quick to the scripts that have it")
@click.option("--threads", type=int, default=None, help="Threads for ptcore/PyTorch (default: the script's)")
@click.option("--build/--no-build", "build", default=True, help="Run `spin build` first")
@meson.build_dir_option
@click.pass_context
def bench(ctx, *, names, list_only, quick, threads, build, build_dir=None):
    """⏱ Run benchmarks/NAME.py (ptcore vs PyTorch vs NumPy) against the built ptcore.

    With no NAME every benchmark runs, one after the other.
    """
    if list_only:
        click.echo("\n".join(benchmark_names()))
        return
    commands = [bench_command(n, quick=quick, threads=threads) for n in (names or benchmark_names())]
    if build:
        ctx.invoke(meson.build, build_dir=build_dir)
    meson._set_pythonpath(build_dir)
    env = dict(os.environ)
    for argv in commands:
        util.run(argv, env=env)


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def asan(*, pytest_args):
    """🩺 Run the tests under AddressSanitizer (tools/run_asan.sh).

    Builds an ASan-instrumented copy of the extensions in build-asan/ and runs
    pytest with PYTEST_ARGS (default: the hardening, fuzz and core tests).
    """
    util.run(["bash", str(ROOT / "tools" / "run_asan.sh"), *pytest_args])
