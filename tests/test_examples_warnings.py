"""ptcore's own examples run without a warning: each runs in a fresh interpreter (and its
worker processes) with ``UserWarning`` turned into an error, so a warning ptcore raises
(``float()`` of a tensor that requires grad, a deprecated call ...) fails the run.

Short settings (fewer epochs or steps where the example has no accuracy target) keep
each run to seconds; the examples'
results are checked by their own tests (tests/test_examples_everyday.py,
tests/test_multiprocessing.py's Hogwild test, tests/distributed's ddp_digits test,
tests/docs' gallery build).  ``examples/ddp_digits.py`` runs under the same setting in
tests/distributed/test_distributed.py (it needs mpiexec).
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ptcore

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# script, arguments, module it needs beyond ptcore (digits.py and everyday.py exit 1 below
# their accuracy targets: they get the epochs to reach them)
RUNS = [
    ("digits.py", ["--out", "out"], "sklearn"),
    ("char_gpt.py", ["--epochs", "1", "--steps", "5"], None),
    ("everyday.py", ["--epochs", "25", "--out", "out"], None),
    ("hogwild.py", ["--procs", "2", "--epochs", "1"], "sklearn"),
    ("lstsq.py", [], None),
    ("plot_autograd_fit.py", [], "matplotlib"),
    ("plot_lr_schedules.py", [], "matplotlib"),
]

pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ is not in this tree")


def test_every_example_script_is_run_here():
    scripts = {p.name for p in EXAMPLES.glob("*.py")}
    covered = {name for name, _, _ in RUNS} | {"ddp_digits.py"}
    assert scripts == covered, f"examples not run without warnings: {sorted(scripts - covered)}"


@pytest.mark.parametrize("script, args, needs", RUNS, ids=[r[0] for r in RUNS])
def test_example_runs_without_user_warnings(script, args, needs, tmp_path):
    if needs:
        pytest.importorskip(needs)
    where = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="error::UserWarning",
               PYTHONPATH=where + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PTCORE_NUM_THREADS=os.environ.get("PTCORE_NUM_THREADS", "1"))
    r = subprocess.run([sys.executable, "-W", "error::UserWarning", str(EXAMPLES / script),
                        *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    assert "Warning" not in r.stderr, r.stderr[-6000:]
