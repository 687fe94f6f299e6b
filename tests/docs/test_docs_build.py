"""The documentation builds with ``sphinx-build -W`` (no warnings), in a subprocess.

Slow (about 2 CPU-minutes: ~100 pages, ~2,000 API entries, the gallery's
two ``plot_*`` examples run); skipped when the ``doc`` extra is not installed.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ptcore

DOC = Path(__file__).resolve().parents[2] / "doc"
NEEDED = ["sphinx", "pydata_sphinx_theme", "numpydoc", "sphinx_gallery", "matplotlib"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (DOC / "conf.py").is_file(), reason="doc/ is not in this tree"),
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in NEEDED),
                       reason="needs the doc extra: " + ", ".join(NEEDED)),
]


def test_sphinx_build_html_without_warnings(tmp_path):
    out = tmp_path / "html"
    env = dict(os.environ)
    # the ptcore this test imported (installed or in-place), not the source tree
    env["PYTHONPATH"] = str(Path(ptcore.__file__).resolve().parents[1])
    env["MPLBACKEND"] = "Agg"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(DOC), str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-20000:]
    # every reference page, the user guide, and the gallery with its figures
    import sys as _sys
    _sys.path.insert(0, str(DOC / "_ext"))
    try:
        import ptcore_apigen
    finally:
        _sys.path.pop(0)
    for modname, _ in ptcore_apigen.available_modules():
        assert (out / "reference" / "generated" / f"{modname}.html").is_file(), modname
    for page in ("install", "cpu", "gpu", "distributed", "jit_onnx", "array_api", "extending",
                 "porting"):
        assert (out / "user_guide" / f"{page}.html").is_file()
    assert (out / "performance.html").is_file()
    assert (out / "release" / "0.1.0-notes.html").is_file()
    html = (out / "reference" / "generated" / "ptcore.nn.html").read_text()
    assert 'id="ptcore.nn.Linear"' in html
    assert (out / "gallery" / "plot_autograd_fit.html").is_file()
    assert list((out / "_images").glob("sphx_glr_plot_autograd_fit_*.png"))
