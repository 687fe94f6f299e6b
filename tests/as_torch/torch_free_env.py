"""A virtual environment without torch, for the tests that run the launcher where PyTorch is
not installed (tests/as_torch, on sys.path as the tests' folder)."""
import os
import subprocess
import sys
import venv
from pathlib import Path

TORCH_NAMES = ("torch", "functorch", "torchgen")


def is_torchs(name):
    """Whether a site-packages entry is torch's own (its packages, dist-info, libs), not a
    library whose name starts with "torch" (torchmetrics ...)."""
    name = name.lower()
    return any(name == t or name.startswith((t + "-", t + ".")) for t in TORCH_NAMES)


def make(root):
    """Make a virtual environment in ``root`` whose site-packages holds (as symbolic links)
    every entry of this interpreter's site-packages folders (ptcore, NumPy, transformers ...)
    except torch's.  Returns its python, or ``(None, reason)`` when it cannot be made or
    ptcore does not import in it or torch is still found there."""
    root = Path(root)
    try:
        venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    except Exception as exc:                        # no venv support in this Python
        return None, f"cannot create a virtual environment: {exc}"
    python = str(root / "bin" / "python")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PTCORE_AS_TORCH", None)

    def run(code):
        return subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                              timeout=300, stdin=subprocess.DEVNULL, cwd=root)
    site_dir = Path(run("import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip())
    if not site_dir.is_dir():
        return None, f"no site-packages folder in the new environment ({site_dir})"
    seen = set()
    for folder in sys.path:
        if not folder or Path(folder).name not in ("site-packages", "dist-packages"):
            continue
        for entry in sorted(Path(folder).iterdir()):
            name = entry.name.lower()
            if entry.name in seen or is_torchs(name) or name == "__pycache__":
                continue
            seen.add(entry.name)
            (site_dir / entry.name).symlink_to(entry)
    # what wheels put in the environment's lib folder (mpich's libmpi and its own folder, which
    # mpi4py looks for under sys.prefix): the new environment gets them too
    lib_dir = root / "lib"
    for entry in sorted((Path(sys.prefix) / "lib").iterdir()):
        if not entry.name.startswith("python") and not (lib_dir / entry.name).exists():
            (lib_dir / entry.name).symlink_to(entry)
    check = run("import importlib.util, ptcore; print(importlib.util.find_spec('torch'))")
    if check.returncode != 0 or check.stdout.strip() != "None":
        return None, f"could not make a torch-free environment with ptcore: {check.stderr[-500:]}"
    return python, None


def run_both(root, script, args, timeout=1200):
    """Run ``script OUT *args`` twice, at one thread: with this interpreter (the real torch),
    OUT = ``root/torch``, and under ``python -m ptcore.as_torch`` in an environment without
    torch where one can be made (else in this one), OUT = ``root/ptcore``.  Returns the two
    output folders ``(ref_dir, pt_dir)``; a run that fails fails the calling test."""
    import pytest
    root = Path(root)
    ref_dir, pt_dir = root / "torch", root / "ptcore"
    ref_dir.mkdir()
    pt_dir.mkdir()
    env = dict(os.environ, PTCORE_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("PYTHONSAFEPATH", None)
    python, _ = make(root / "venv")
    # the two runs at once (one thread each: the two cores of a CI machine), their output
    # in files (pipes could fill while the other run is waited for)
    runs = []
    try:
        for cmd, out in (([python or sys.executable, "-m", "ptcore.as_torch"], pt_dir),
                         ([sys.executable], ref_dir)):
            log = open(root / f"{out.name}.log", "w+")
            runs.append((cmd, log, subprocess.Popen(
                [*cmd, str(script), str(out), *args], cwd=out, env=env, stdout=log,
                stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)))
        for cmd, log, p in runs:
            try:
                code = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = "timeout"
            if code != 0:
                log.seek(0)
                pytest.fail(f"{cmd} {script.name} failed ({code}):\n{log.read()[-7000:]}")
    finally:
        for _, log, p in runs:
            if p.poll() is None:
                p.kill()
                p.wait()
            log.close()
    return ref_dir, pt_dir
