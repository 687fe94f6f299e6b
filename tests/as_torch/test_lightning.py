"""PyTorch Lightning (Trainer, callbacks, loggers, checkpoints, bf16-mixed, Fabric) on ptcore,
unmodified, against torch: ``lightning_cases.py`` runs once with the real torch and once under
``python -m ptcore.as_torch`` in an environment without torch (where one can be made), and
the two runs' metrics, predictions, weights and checkpoints must agree to float32 rounding.

What it took: ``torch.__version__`` inside the launcher is the torch release ptcore follows
(Lightning's ``compare_version("torch", ...)`` reads it), ``torch._C._TensorMeta``,
``torch._C._nn._parse_to``, ``torch._dynamo.OptimizedModule``, ``torch.ScriptModule``,
``torch.PyTorchFileReader``, torch's pytree ``NodeDef``/``_get_node_type``/``LeafSpec`` class
and ``torch.profiler.kineto_available``.
"""
import json
import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_lightning")

import torch_free_env  # noqa: E402  (tests/as_torch, on sys.path as the test's folder)

CASES = Path(__file__).resolve().parent / "lightning_cases.py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    ref_dir, pt_dir = torch_free_env.run_both(tmp_path_factory.mktemp("lightning"), CASES, [],
                                              timeout=900)
    ref, pt = (json.loads((d / "results.json").read_text()) for d in (ref_dir, pt_dir))
    return ref, pt, ref_dir, pt_dir


def _close(a, b, tol=2e-5):
    np.testing.assert_allclose(np.asarray(b, dtype=np.float64), np.asarray(a, dtype=np.float64),
                               rtol=tol, atol=tol)


def test_the_program_ran_on_ptcore_as_a_recent_torch(runs):
    ref, pt, _, _ = runs
    assert ref["torch"] == "torch" and pt["torch"] == "ptcore"
    # Lightning's version gates saw a torch >= 2.4 (they read torch.__version__)
    assert pt["torch_version_ge_2_4"] is True


def test_fit_test_predict_agree_with_torch(runs):
    ref, pt, _, _ = runs
    assert sorted(pt["fit"]) == sorted(ref["fit"])
    for k in ref["fit"]:
        _close(ref["fit"][k], pt["fit"][k])
    assert [sorted(d) for d in pt["test"]] == [sorted(d) for d in ref["test"]]
    _close(ref["test"][0]["test_loss"], pt["test"][0]["test_loss"])
    _close(ref["predict"], pt["predict"])
    assert pt["csv_header"] == ref["csv_header"]


def test_checkpoints_callbacks_and_hyperparameters(runs):
    ref, pt, ref_dir, pt_dir = runs
    assert pt["hparams"] == ref["hparams"] == {"lr": 0.01, "hidden": 16}
    assert pt["best"][0] == ref["best"][0]
    _close(ref["best"][1], pt["best"][1])
    for k in ref["best_weights"]:
        _close(ref["best_weights"][k], pt["best_weights"][k])
    assert pt["last"] == ref["last"]
    assert sorted(os.listdir(pt_dir / "ck")) == sorted(os.listdir(ref_dir / "ck"))
    # torch reads the checkpoint Lightning wrote on ptcore (weights only: no code runs)
    mine = torch.load(pt_dir / "ck" / "last.ckpt", weights_only=True)
    theirs = torch.load(ref_dir / "ck" / "last.ckpt", weights_only=True)
    assert mine["state_dict"].keys() == theirs["state_dict"].keys()
    for k, v in theirs["state_dict"].items():
        assert mine["state_dict"][k].dtype == v.dtype
        _close(v.numpy(), mine["state_dict"][k].numpy())
    assert (pt_dir / "lightning_logs" / "version_0" / "hparams.yaml").read_text() == \
        (ref_dir / "lightning_logs" / "version_0" / "hparams.yaml").read_text()


def test_bf16_mixed_and_fabric(runs):
    ref, pt, _, _ = runs
    _close(ref["bf16_train_loss"], pt["bf16_train_loss"], tol=1e-2)
    _close(ref["fabric_losses"], pt["fabric_losses"])
    assert pt["fabric_load_rest"] == ref["fabric_load_rest"] == {"step": 4}
