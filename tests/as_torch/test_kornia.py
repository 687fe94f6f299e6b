"""kornia on ptcore, unmodified, against torch (``kornia_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch): color conversions,
filters and Canny edges, warps (affine, perspective, remap, resize, pyramids), homography
and rotation conversions, depth unprojection, enhancement (CLAHE, equalize, ZCA), morphology,
losses and metrics, feature responses and descriptors (SIFT, HardNet, TFeat from NumPy
weights), augmentation pipelines with one-valued ranges (and their inverse), and 15 Adam steps
of an image registration through ``warp_affine`` and SSIM.  Inputs come from NumPy: integer
results are equal, float ones agree to float32 rounding (rtol 1e-4; bilinear sampling's
coordinates round differently in the last bit).

What kornia took: ``torch.torch`` (the package itself, as torch's ``import torch`` inside it
makes it), ``torch._subclasses.fake_tensor.is_fake``,
``torch.fx.experimental.proxy_tensor.get_proxy_mode``,
``torch._C._are_functorch_transforms_active`` and ``torch._assert_async``.
"""
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("kornia")

import torch_free_env  # noqa: E402  (tests/as_torch, on sys.path as the test's folder)
from case_results import compare  # noqa: E402

CASES = Path(__file__).resolve().parent / "kornia_cases.py"
NAMES = ["color", "filters", "geometry", "enhance", "morphology_losses", "feature",
         "augmentation", "registration"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    ref_dir, pt_dir = torch_free_env.run_both(tmp_path_factory.mktemp("kornia"), CASES, NAMES)
    return tuple({c: json.loads((d / f"{c}.json").read_text()) for c in NAMES}
                 for d in (ref_dir, pt_dir))


@pytest.mark.parametrize("case", NAMES)
def test_kornia(runs, case):
    ref, got = runs[0][case], runs[1][case]
    assert ref.pop("torch_name") == "torch" and got.pop("torch_name") == "ptcore"
    compare(ref, got, case, rtol=1e-4, atol=1e-5)
