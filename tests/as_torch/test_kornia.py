"""kornia on ptcore, unmodified, against torch (``kornia_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch): color conversions,
filters and Canny edges, warps (affine, perspective, remap, resize, pyramids), homography
and rotation conversions, depth unprojection, enhancement (CLAHE, equalize, ZCA), morphology,
losses and metrics, feature responses and descriptors (SIFT, HardNet, TFeat from NumPy
weights), augmentation pipelines with one-valued ranges (and their inverse), and 15 Adam steps
of an image registration through ``warp_affine`` and SSIM; kornia.contrib's distance
transform (the function that checks ``is_fake`` and the functorch state), connected
components and patches, descriptor matching and the eight-point fundamental matrix.  Inputs come from NumPy: integer
results are equal, float ones agree to float32 rounding (rtol 1e-4; bilinear sampling's
coordinates round differently in the last bit).

What kornia took: ``torch.torch`` (the package itself, as torch's ``import torch`` inside it
makes it), ``torch._subclasses.fake_tensor.is_fake``,
``torch.fx.experimental.proxy_tensor.get_proxy_mode``,
``torch._C._are_functorch_transforms_active`` and ``torch._assert_async``.
"""
import importlib.util
import pytest

torch = pytest.importorskip("torch")
# (found, not imported: the library would be imported next to the real torch in the
# test process, and some patch torch on import -- torch_geometric replaces
# torch.index_select -- which changes what later tests compare against)
if importlib.util.find_spec("kornia") is None:
    pytest.skip("kornia is not installed", allow_module_level=True)

from case_results import cases_fixture, compare_case  # noqa: E402  (tests/as_torch)

NAMES = ["color", "filters", "geometry", "enhance", "morphology_losses", "feature",
         "augmentation", "registration", "contrib_matching"]
runs = cases_fixture("kornia_cases.py", NAMES)


@pytest.mark.parametrize("case", NAMES)
def test_kornia(runs, case):
    compare_case(runs, case, rtol=1e-4, atol=1e-5)
