"""benchmarks/cuda_check.py cannot rot: its ``--smoke`` mode runs every
section at tiny sizes on the emulated device (torch on the CPU as the
reference) and must report no failed value check and no error."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PATH = os.path.join(_ROOT, "benchmarks", "cuda_check.py")
# the directory holding the ptcore under test (the installed one in CI, the
# source tree in an in-place build): child processes import it from there
import ptcore as _ptcore  # noqa: E402
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(_ptcore.__file__)))

pytestmark = pytest.mark.skipif(not os.path.exists(_PATH), reason="benchmarks/ is not in this checkout")


def _module():
    spec = importlib.util.spec_from_file_location("_ptcore_cuda_check", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_smoke_run_has_no_failures(tmp_path):
    out = tmp_path / "rows.json"
    env = dict(os.environ, PTCORE_CUDA_EMULATE="1")
    env["PYTHONPATH"] = os.pathsep.join([PKG_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, _PATH, "--smoke", "--json", str(out)], capture_output=True,
                          text=True, env=env, timeout=900, cwd=str(tmp_path))
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    bad = [r for r in rows if r["status"] in ("FAIL", "ERR")]
    assert not bad, bad
    assert proc.returncode == 0, proc.stderr[-3000:]
    mod = _module()
    by_section = {s: [r for r in rows if r["section"] == s and r["status"] == "OK"]
                  for s in mod.SECTIONS}
    assert all(by_section.values()), {s: len(v) for s, v in by_section.items()}
    # every op with a CUDA kernel got at least one row (checked or skipped with a reason)
    count = [r for r in rows if r["case"].endswith("ops with a CUDA kernel")]
    assert count and int(count[0]["case"].split()[0]) >= 30
    cases = " ".join(r["case"] for r in rows if r["section"] == "ops")
    for name in ("add", "sum", "matmul", "exp", "fft.rfft", "fft.irfftn"):
        assert f"{name} float32" in cases
    # the input specs (cuda_check.SPECS) give checked rows, not skips
    ok = {r["case"] for r in rows if r["section"] == "ops" and r["status"] == "OK"}
    for case in ("nn.functional.conv2d float32 3x3", "Tensor.gather float32 dim 1",
                 "ptcore.cumsum float32 dim=1", "Tensor.bitwise_and float32 int32",
                 "nn.functional.max_pool2d bfloat16 k 2", "ptcore.where bfloat16 mask",
                 "nn.functional.nll_loss float32 mean"):
        assert case in ok, case
    # the second process compiled nothing
    cache = [r for r in rows if r["section"] == "cache"]
    assert cache and cache[0]["ptcore"] == 0
    # the table went to stdout with its header
    assert "SMOKE" in proc.stdout and "| section" in proc.stdout


def test_helpers():
    mod = _module()
    ok, note = mod._close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), (1e-6, 0))
    assert ok and "max err" in note
    ok, note = mod._close(np.array([1.0]), np.array([1.0, 2.0]), (1e-6, 0))
    assert not ok and "shape" in note
    ok, note = mod._close(np.array([True, False]), np.array([True, True]), (0, 0))
    assert not ok and "1 mismatches" in note

    class C(mod.Ctx):
        def __init__(self, smoke):            # no library import needed for rows
            self.smoke = smoke
            self.rows = []
    c = C(False)
    c.row("gemm", "x", 90.0, 100.0, "TFLOP/s", target=">=0.95")
    c.row("latency", "y", 5.0, 10.0, "us", target="<=1.00")
    assert [r["status"] for r in c.rows] == ["MISS", "OK"]
    assert c.rows[0]["ratio"] == pytest.approx(0.9)
    c.error("train", "LeNet", NotImplementedError("conv2d: no CUDA kernel"))
    c.error("train", "MLP", RuntimeError("boom"))
    assert [r["status"] for r in c.rows[2:]] == ["SKIP", "ERR"]
    text = mod.render(c.rows, "hdr")
    assert text.startswith("hdr") and "MISS 1" in text and "ERR 1" in text


def test_unknown_section_is_an_error():
    proc = subprocess.run([sys.executable, _PATH, "--smoke", "--only", "nope"], capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=PKG_PARENT, PTCORE_CUDA_EMULATE="1"))
    assert proc.returncode == 2 and "unknown sections" in proc.stderr


_SESSION = os.path.join(_ROOT, "tools", "gpu_session.sh")


@pytest.mark.skipif(not os.path.exists(_SESSION) or not shutil.which("bash"),
                    reason="tools/gpu_session.sh or bash is not here")
def test_gpu_session_script_dry_run(tmp_path):
    """The GPU session script parses, and its env and warm stages run as a dry
    run on the emulated device (GPU_SESSION_EMULATE=1)."""
    assert subprocess.run(["bash", "-n", _SESSION]).returncode == 0
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), GPU_SESSION_EMULATE="1", GPU_SESSION_STAGES="env warm",
               GPU_SESSION_WARM_MAX="2", PTCORE_CACHE_DIR=str(tmp_path / "kcache"),
               GPU_SESSION_PKG_PARENT=PKG_PARENT)
    proc = subprocess.run(["bash", _SESSION], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    log = (out / "session.log").read_text()
    assert "stage warm" in log and "done" in log, log
    assert (out / "env.txt").exists()
    from ptcore.cuda.driver import compiler as _compiler
    if _compiler.nvrtc_available()[0]:
        assert "warm: 2 kernels for sm_90" in log and "0 failed" in log, log
        assert len(list((tmp_path / "kcache").glob("*.cubin"))) == 2


def test_overhead_script_emulated_mode(tmp_path):
    """benchmarks/cuda_overhead.py --emulated (host time with launches stubbed
    out) runs anywhere and prints its table and a profile."""
    path = os.path.join(_ROOT, "benchmarks", "cuda_overhead.py")
    env = dict(os.environ)
    env.pop("PTCORE_CUDA_EMULATE", None)
    env["PYTHONPATH"] = os.pathsep.join([PKG_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, path, "--emulated", "--reps", "20", "--top", "3"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "us" not in line]
    labels = [r.split("|")[1].strip() for r in rows]
    assert labels == ["add 1 element", "mul_ 1 element", "sum 1 element", "empty(1)", "fft 4096 c64",
                      "mm 256x1024 @ 1024x784", "F.linear 256x784 -> 1024, parameters",
                      "sum(dim=0) 256x1024", "x ** 2, 256x1024",
                      "F.conv2d 256x6x14x14, 16x6x5x5, no grad", "F.conv2d of parameters (recorded)",
                      "F.conv2d forward + backward", "F.max_pool2d 256x16x10x10 (recorded)",
                      "F.max_pool2d forward + backward", "F.relu forward + backward",
                      "ones_like(loss)", "MLP step 784-1024-1024-10 b256",
                      "LeNet step b256",
                      "GPT step (2 blocks, d 64, batch 8 x 32 tokens, AdamW, clipping)"], rows
    assert all(float(r.split("|")[2]) > 0 for r in rows)
    assert "cProfile: ptcore.add" in proc.stdout
    # without --emulated and without a GPU it declines cleanly
    proc = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env,
                          timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 2 and "needs a real CUDA device" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.skipif(not os.path.exists(_SESSION), reason="tools/gpu_session.sh is not here")
def test_gpu_session_bench_runs_every_section_but_ops():
    """The session script's default bench sections are cuda_check.py's, but for
    ops (it needs a device call of its own): a section added to the benchmark
    and not to the script would never run on a GPU."""
    import re
    text = open(_SESSION).read()
    m = re.search(r'GPU_SESSION_BENCH_ONLY:-([a-z_,]+)\}', text)
    assert m, "no default section list in tools/gpu_session.sh"
    assert m.group(1).split(",") == [s for s in _module().SECTIONS if s != "ops"]
