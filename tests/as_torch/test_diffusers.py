"""diffusers on ptcore, unmodified, against torch (``diffusers_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), on tiny
randomly configured models whose weights come from NumPy (no downloads): a ``UNet2DModel``
(ResNet and attention blocks) forward at vector and scalar timesteps and three DDPM training
steps (AdamW, gradient clipping, diffusers' cosine warmup schedule); the DDPM, DDIM, Euler and
DPM-Solver++ schedulers' timesteps, ``add_noise`` and ``step``; eight DDIM denoising steps and
the ``DDIMPipeline``; a cross-attention ``UNet2DConditionModel`` forward and backward; an
``AutoencoderKL`` encode/decode/KL and its ``save_pretrained``/``from_pretrained`` round trip
(accelerate's ``init_empty_weights``); training with gradient checkpointing, Min-SNR
weights and an ``EMAModel``.  All agree to float32 rounding; the denoising loop's
result to 5e-5 (its first steps divide by sqrt(alpha_bar) ~ 0.04, which multiplies the
UNet's rounding differences).

What diffusers took: a parameter's ``__dict__`` holding only what user code set, as torch's:
accelerate's ``init_empty_weights`` rebuilds each parameter with ``Parameter(p.to(device),
**p.__dict__)``, and ptcore kept the leaf's gradient accumulator there (now a slot of the
tensor core).
"""
import importlib.util
import pytest

torch = pytest.importorskip("torch")
# (found, not imported: the library would be imported next to the real torch in the
# test process, and some patch torch on import -- torch_geometric replaces
# torch.index_select -- which changes what later tests compare against)
if importlib.util.find_spec("diffusers") is None:
    pytest.skip("diffusers is not installed", allow_module_level=True)

from case_results import cases_fixture, compare_case  # noqa: E402  (tests/as_torch)

NAMES = ["unet", "schedulers", "denoise", "conditional_vae", "ema_checkpointing"]
TOLERANCE = {"denoise": {"rtol": 1e-4, "atol": 5e-5}}
runs = cases_fixture("diffusers_cases.py", NAMES)


@pytest.mark.parametrize("case", NAMES)
def test_diffusers(runs, case):
    compare_case(runs, case, **TOLERANCE.get(case, {"rtol": 1e-5, "atol": 1e-6}))
