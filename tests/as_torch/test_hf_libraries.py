"""Hugging Face transformers and accelerate on ptcore, unmodified, against torch.

The models (GPT-2 and Llama, decoder-only; BERT, encoder-only; T5 and BART, encoder-decoder;
Mamba, a state-space model)
are built from small configs with torch and saved with ``save_pretrained`` (safetensors).
``hf_cases.py`` then runs the same steps twice on them: here with the real torch, and under
``python -m ptcore.as_torch`` in a subprocess, where ``import torch`` is ptcore and no module
of the real torch is loaded.  Values must agree to float32 rounding; integer outputs
(generated tokens) exactly.

Sampled generation is compared through its distributions: ptcore's random generator (Philox)
is not torch's, so a seed gives other samples; every step's processed scores (temperature and
top-k warped logits) must equal torch's along ptcore's sampled sequence, each sampled token
must lie in torch's top-k, and the same seed must give the same sequence again.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

import hf_cases  # noqa: E402  (tests/as_torch, on sys.path as the test's folder)
import torch_free_env  # noqa: E402

MODELS = ["gpt2", "llama", "bert", "t5", "bart", "mamba"]
HF_CASES = Path(hf_cases.__file__).resolve()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    models, ref_dir, pt_dir = root / "models", root / "torch", root / "ptcore"
    ref_dir.mkdir()
    pt_dir.mkdir()
    transformers.logging.set_verbosity_error()
    for name in MODELS:
        hf_cases.make_model(name, models / name)
    env = dict(os.environ, PTCORE_NUM_THREADS="1", OMP_NUM_THREADS="1",
               TRANSFORMERS_VERBOSITY="error", HF_HUB_OFFLINE="1")
    env.pop("PYTHONSAFEPATH", None)
    # the ptcore run is in an environment where torch is not installed (where one can be made:
    # else in this one, where the run checks that no module of the real torch is loaded)
    python, _ = torch_free_env.make(root / "venv")
    # the ptcore run goes on in its process while torch computes the references here
    proc = subprocess.Popen([python or sys.executable, "-m", "ptcore.as_torch", str(HF_CASES),
                             str(models),
                             str(pt_dir), *MODELS, "accelerate"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        refs = {}
        for name in MODELS + ["accelerate"]:
            refs[name] = (hf_cases.run_accelerate(str(ref_dir)) if name == "accelerate" else
                          hf_cases.run_case(name, str(models / name), str(ref_dir)))
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if proc.returncode != 0:
        pytest.fail(f"the ptcore run failed ({proc.returncode}):\n{stdout[-3000:]}\n"
                    f"{stderr[-6000:]}")
    out = {}
    for name in MODELS + ["accelerate"]:
        ref_arrays, ref_info = refs[name]
        pt = np.load(pt_dir / f"{name}.npz")
        out[name] = {"ref": ref_arrays, "ref_info": ref_info,
                     "pt": {k: pt[k] for k in pt.files},
                     "pt_info": json.loads((pt_dir / f"{name}.json").read_text()),
                     "models": models, "ref_dir": ref_dir, "pt_dir": pt_dir,
                     "torch_free": python is not None}
    return out


def _close(got, want, rtol, atol, what):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def _group(arrays, prefix):
    return {k: v for k, v in arrays.items() if k.startswith(prefix + "/")}


@pytest.mark.parametrize("name", MODELS)
def test_forward_loss_logits_and_gradients(runs, name):
    r = runs[name]
    ref, pt = r["ref"], r["pt"]
    assert r["pt_info"]["foreign_torch_modules"] == []
    # transformers found torch (importlib.metadata, find_spec) where none is installed
    assert r["pt_info"]["real_torch_on_path"] == (not r["torch_free"])
    assert set(pt) == set(ref)
    scale = np.abs(ref["logits"]).max()
    _close(pt["logits"], ref["logits"], 1e-5, 1e-5 * scale, "logits")
    _close(pt["loss"], ref["loss"], 1e-5, 0, "loss")
    grads = _group(ref, "grad")
    assert grads and set(grads) == set(_group(pt, "grad"))
    gmax = max(np.abs(g).max() for g in grads.values())
    for key, g in grads.items():
        # attention key biases have mathematically zero gradients: both libraries give
        # rounding noise there, so the tolerance is relative to the model's largest gradient
        _close(pt[key], g, 1e-4, 1e-5 * gmax, key)


@pytest.mark.parametrize("name", MODELS)
def test_adamw_steps(runs, name):
    r = runs[name]
    _close(r["pt_info"]["adamw_losses"], r["ref_info"]["adamw_losses"], 1e-5, 0, "losses")
    params = _group(r["ref"], "adamw")
    assert params
    grads = _group(r["ref"], "grad")
    gmax = max(np.abs(g).max() for g in grads.values())
    for key, p in params.items():
        # Adam moves an entry by about lr * g / (|g| + eps): where the gradient is rounding
        # noise (attention key biases), the step is noise of up to lr too
        noise = np.abs(grads["grad/" + key.split("/", 1)[1]]) <= 1e-5 * gmax
        got = r["pt"][key]
        _close(got[~noise], p[~noise], 1e-5, 1e-6, key)
        _close(got[noise], p[noise], 0, 1.01e-2, key + " (zero-gradient entries)")


@pytest.mark.parametrize("name", sorted(hf_cases.GENERATES))
def test_generate_greedy_and_sampled(runs, name):
    r = runs[name]
    ref, pt = r["ref"], r["pt"]
    np.testing.assert_array_equal(pt["greedy"], ref["greedy"])
    assert r["pt_info"]["sampled_repeats"] and r["ref_info"]["sampled_repeats"]
    sequences = pt["sampled"]
    want = hf_cases.reference_scores(name, str(r["models"] / name), sequences)
    got = pt["sampled_scores"]
    assert got.shape == want.shape
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    _close(got[finite], want[finite], 1e-5, 1e-5 * np.abs(want[finite]).max(), "scores")
    # every sampled token was one of torch's top-k candidates at its step (after a row's
    # end-of-sequence token, generate pads it instead of sampling)
    start = sequences.shape[1] - got.shape[0]
    eos = hf_cases.CONFIGS[name][2]["eos_token_id"]
    for t in range(got.shape[0]):
        tokens = sequences[:, start + t]
        live = ~(sequences[:, start:start + t] == eos).any(axis=1)
        assert np.isfinite(want[t][np.arange(len(tokens)), tokens])[live].all()


@pytest.mark.parametrize("name", MODELS)
def test_save_pretrained_round_trip(runs, name):
    r = runs[name]
    pt = r["pt"]
    np.testing.assert_array_equal(pt["reloaded_logits"], pt["logits"])
    assert r["pt_info"]["saved_files"] == r["ref_info"]["saved_files"]
    mine = r["pt_dir"] / f"{name}-saved" / "model.safetensors"
    theirs = r["ref_dir"] / f"{name}-saved" / "model.safetensors"
    a, b = safetensors_numpy.load_file(str(mine)), safetensors_numpy.load_file(str(theirs))
    assert sorted(a) == sorted(b)
    for key in a:
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    from safetensors import safe_open
    with safe_open(str(mine), "np") as f, safe_open(str(theirs), "np") as g:
        assert f.metadata() == g.metadata()


@pytest.mark.parametrize("name", sorted(hf_cases.TRAINER))
def test_trainer_steps(runs, name):
    r = runs[name]
    for key in ("trainer_losses", "trainer_grad_norms"):
        assert len(r["pt_info"][key]) == 3
        _close(r["pt_info"][key], r["ref_info"][key], 1e-5, 0, key)
    for key, p in _group(r["ref"], "trainer").items():
        _close(r["pt"][key], p, 1e-5, 1e-5, key)


def test_accelerate_training_and_state(runs):
    r = runs["accelerate"]
    for key in ("accelerate_losses", "accelerate_grad_norms"):
        _close(r["pt_info"][key], r["ref_info"][key], 1e-5, 0, key)
    for key, p in _group(r["ref"], "accelerate").items():
        _close(r["pt"][key], p, 1e-5, 1e-6, key)
    assert r["pt_info"]["state_restored"] and r["ref_info"]["state_restored"]
    assert r["pt_info"]["foreign_torch_modules"] == []

