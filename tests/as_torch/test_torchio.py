"""TorchIO on ptcore, unmodified, against torch (``torchio_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch), on NumPy volumes:
eighteen transforms (intensity rescaling and z-normalization with masks, crop/pad, resample,
resize, an affine with given parameters, one-hot, flips, clamp, mask, canonical orientation;
random flip, gamma, affine and bias field with their ranges fixed), a Compose and its inverse,
grid sampling of patches through ``SubjectsLoader`` into a Conv3d and the ``GridAggregator``
under each overlap mode, and a batch of whole subjects.  Label maps equal, intensities agree
to float32 rounding; none needed a change in ptcore."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchio")

NAMES = ["transforms", "patches"]
runs, test_torchio = case_tests("torchio_cases.py", NAMES, rtol=1e-4, atol=1e-5)
