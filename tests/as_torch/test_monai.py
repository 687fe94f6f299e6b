"""MONAI on ptcore, unmodified, against torch (``monai_cases.py``, run with the real torch and
under ``python -m ptcore.as_torch`` in an environment without torch), weights and images from
NumPy: UNet (3-D, residual units, instance norm), BasicUNet, SegResNet, AttentionUnet and
UNETR trained three Adam steps on a Dice+CE loss; the segmentation losses (Dice variants,
focal, Tversky, generalized Wasserstein, SSIM) with their gradients; Dice, IoU, Hausdorff,
surface distance, confusion-matrix, ROC-AUC, PSNR/MSE/SSIM metrics; array and dictionary
transforms on MetaTensors (resize, zoom, rotate, pad, intensity, spacing, crop-foreground,
MONAI's NumPy-seeded random flips/rotations/affine/noise/crops and the pipeline's inverse,
post-processing); sliding-window inference and MONAI's Dataset/CacheDataset/DataLoader.

All agree to float32 rounding, the trained networks' outputs to 1e-5 of their largest value,
but the 3-D UNet's, to 2e-4 of it: some of its gradients (the conv biases in front of an
instance norm, elements of the transposed convolution's weight) are zero but for rounding,
and Adam turns their rounding-level values into learning-rate steps of either sign.  Their
gradients agree to 1e-6 of float64's in both libraries, but torch's own trained UNet
differs by 5.5e-5 of the largest value between its AVX2 and AVX-512 convolutions
(``DNNL_MAX_CPU_ISA``, measured on an AMD EPYC with AVX-512).
MONAI needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("monai")

NAMES = ["networks", "losses_metrics", "transforms", "inference_data"]
runs, test_monai = case_tests("monai_cases.py", NAMES,
                              per_case={"networks": {"unet3d": {"rtol": 1e-4, "atol": 2e-4}}})
