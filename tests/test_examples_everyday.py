"""examples/everyday.py runs end to end as a user runs it (a fresh
interpreter): device selection through ptcore.accelerator, training, a
whole-model checkpoint reloaded in another fresh process with identical
predictions, a benchmark Timer line."""
import os
import subprocess
import sys
from pathlib import Path

import ptcore

ROOT = Path(__file__).resolve().parents[1]


def _env():
    # the ptcore this test imported (the source tree or the installed package)
    where = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    return dict(os.environ, PYTHONPATH=where + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_everyday_example(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "everyday.py"), "--epochs", "25",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=_env(),
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    expected_device = "cuda" if ptcore.accelerator.is_available() else "cpu"
    assert out.startswith(f"device: {expected_device}")
    assert "reloaded in a fresh process: predictions identical" in out
    acc = float(out.split("training accuracy: ")[1].split()[0])
    assert acc >= 0.95
    assert "SpiralNet forward" in out and " runs " in out
    assert (tmp_path / "spiralnet.pt").exists()


def test_everyday_example_is_plain_pytorch(tmp_path):
    """The same script with ``ptcore`` replaced by ``torch`` runs under PyTorch:
    the example uses only PyTorch's API."""
    import pytest
    pytest.importorskip("torch")
    src = (ROOT / "examples" / "everyday.py").read_text().replace("ptcore", "torch")
    script = tmp_path / "everyday_torch.py"
    script.write_text(src)
    r = subprocess.run([sys.executable, str(script), "--epochs", "15", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr       # 1: accuracy below 95 %
    assert "reloaded in a fresh process: predictions identical" in r.stdout
