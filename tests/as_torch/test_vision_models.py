"""Vision model libraries on ptcore, unmodified, against torch (``vision_models_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), weights and data from NumPy, dropout 0: vit-pytorch (ViT with class-token and mean
pooling, SimpleViT, CaiT, the small-dataset ViT with shifted patch tokens), trained three AdamW
steps, and nineteen more of its architectures (DeepViT, CrossViT, PiT, LeViT, CvT, T2T, CCT,
MaxViT, NesT, XCiT, Twins-SVT, RvT, ScalableViT, ViViT, LookViT ...: forward, input gradient,
eval); segmentation_models_pytorch (Unet, FPN and Linknet on a ResNet-18 encoder with
``encoder_weights=None``, Dice + focal + Jaccard losses, Adam steps, batch norm's running
statistics, a classification head); open_clip (a tiny CLIP and a CustomTextCLIP built from
configs: features, ClipLoss and SigLipLoss with gradients, SGD steps, the tokenizer; a
ModifiedResNet image tower, an attentional pooler, QuickGELU with layer scale, a non-causal
text tower) and
denoising-diffusion-pytorch (a small Unet, GaussianDiffusion's losses at given timesteps and
noise for two objectives, Adam steps, ``p_mean_variance`` and a deterministic DDIM loop; a
1-d Unet under GaussianDiffusion1D, the Karras (EDM2) Unets, LearnedGaussianDiffusion).
Every case also saves its ``state_dict`` with ``torch.save`` and reloads it into a fresh
model.  All agree to float32 rounding (rtol 1e-4).

What they took: ``torch.TensorType`` at the root (open_clip's ``from torch import
TensorType``).  Each case skips where its library is absent (vit-pytorch, open_clip and
denoising-diffusion-pytorch import torchvision, segmentation_models_pytorch timm).
"""
import importlib.util

import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

NEEDS = {"vit": ("vit_pytorch", "torchvision"), "vit_zoo": ("vit_pytorch", "torchvision"),
         "smp": ("segmentation_models_pytorch", "timm"),
         "open_clip": ("open_clip", "torchvision"),
         "ddpm": ("denoising_diffusion_pytorch", "torchvision")}
LIBS = {case: mods[0] for case, mods in NEEDS.items()
        if all(importlib.util.find_spec(m) is not None for m in mods[1:])}
runs, test_vision_model = library_case_tests("vision_models_cases.py", LIBS, rtol=1e-4,
                                             atol=1e-5)
