"""torchvision on ptcore, unmodified, against torch (``torchvision_cases.py``, run with the
real torch and under ``python -m ptcore.as_torch`` in an environment without torch):
transforms v2 on tv_tensors (images, bounding boxes, masks), the functional image ops
(geometry, color, uint8 ops), ten models' forward passes and a ResNet-18 training step, the
box ops, ``roi_align`` (torchvision's Python implementation, forward and backward) and the
drawing utilities.  Weights and inputs come from NumPy, so both runs compute on the same
numbers: uint8 results are equal, float results agree to float32 rounding.

What torchvision took: ``torch.ops.load_library`` (torchvision's own compiled library is
replaced by ptcore's built-in kernels of its ops -- nms, RoIAlign/RoIPool and their
position-sensitive forms, deform_conv2d; any other library built against libtorch is
refused with OSError), ``torch.library.register_fake``
for an op not defined yet (kept until it is, as torch's registry does), ``torch._custom_ops``,
``torch._C.DispatchKey``/``DispatchKeySet``/``_ExcludeDispatchKeyGuard`` (the autocast keys),
``torch.jit._overload_method``/``_script_if_tracing``, ``torch.jit.annotations``,
``torch.onnx.symbolic_opset11``, ``torch._dynamo.utils.is_compile_supported``,
``torch.hub._get_torch_home`` and ``torch.ao.quantization``'s stubs.  Where timm is
installed, its models, optimizers, scheduler and EMA are compared the same way.
"""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if importlib.util.find_spec("torchvision") is None:
    pytest.skip("torchvision is not installed", allow_module_level=True)

import torch_free_env  # noqa: E402  (tests/as_torch, on sys.path as the test's folder)

CASES = Path(__file__).resolve().parent / "torchvision_cases.py"
NAMES = ["transforms", "models", "ops", "detection"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    names = NAMES + (["timm"] if importlib.util.find_spec("timm") is not None else [])
    ref_dir, pt_dir = torch_free_env.run_both(tmp_path_factory.mktemp("torchvision"), CASES,
                                              names)
    out = tuple({c: json.loads((d / f"{c}.json").read_text()) for c in names}
                for d in (ref_dir, pt_dir))
    for c in names:
        assert out[0][c]["torch_name"] == "torch" and out[1][c]["torch_name"] == "ptcore"
    return out


def _tensor_close(ref, got, what, rtol, atol):
    assert (got["shape"], got["dtype"], got["type"]) == (ref["shape"], ref["dtype"], ref["type"]), what
    x, y = np.asarray(ref["values"]), np.asarray(got["values"])
    if ref["dtype"] in ("uint8", "bool", "int64"):
        np.testing.assert_array_equal(y, x, err_msg=what)
    else:
        scale = max(1.0, float(np.abs(x).max())) if x.size else 1.0
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol * scale, err_msg=what)


def _compare(ref, got, what, rtol=1e-5, atol=1e-6):
    if isinstance(ref, dict) and "values" in ref:
        _tensor_close(ref, got, what, rtol, atol)
    elif isinstance(ref, list) and ref and isinstance(ref[0], dict):
        assert len(got) == len(ref), what
        for i, (a, b) in enumerate(zip(ref, got)):
            _compare(a, b, f"{what}[{i}]", rtol, atol)
    else:
        x, y = np.asarray(ref, dtype=np.float64), np.asarray(got, dtype=np.float64)
        assert x.shape == y.shape, what
        scale = max(1.0, float(np.abs(x).max())) if x.size else 1.0
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol * scale, err_msg=what)


def _compare_case(runs, case, **tol):
    ref, got = runs[0][case], runs[1][case]
    for key in ref:
        if key not in ("torch_name", "torchvision"):
            _compare(ref[key], got[key], f"{case}.{key}", **tol)
    return got


def test_transforms_v2_and_functional_ops(runs):
    pt = _compare_case(runs, "transforms")
    # the tv_tensors' types survive the pipeline, as in torch
    assert [o["type"] for o in pt["pipeline_u8"]] == ["Image", "BoundingBoxes", "Mask"]


def test_models_forward_and_training_step(runs):
    # (deep float32 networks: rounding grows with depth; the step's gradients compared on
    # their own scale)
    _compare_case(runs, "models", rtol=1e-4, atol=2e-5)


def test_box_ops_roi_align_and_drawing(runs):
    _compare_case(runs, "ops")


def test_detection_models_and_nms(runs):
    """torchvision's compiled ops, built into ptcore: nms and batched_nms equal the
    reference's exactly; Faster R-CNN (MobileNetV3 FPN) and SSDlite in eval mode give as
    many detections, with the same scores to float32 rounding."""
    ref, got = runs[0]["detection"], runs[1]["detection"]
    assert got["nms"] == ref["nms"] and got["batched_nms"] == ref["batched_nms"]
    for name in ("fasterrcnn_mobilenet", "ssdlite"):
        for a, b in zip(ref[name], got[name]):
            assert a["n"] == b["n"], name
            np.testing.assert_allclose(b["scores"], a["scores"], rtol=1e-4, atol=1e-5,
                                       err_msg=name)


def test_timm_models_and_training(runs):
    """timm on torchvision: four model families' forward passes, and two training steps
    with timm's AdamW, LAMB and SGDP, its cosine scheduler, label smoothing and model EMA."""
    if "timm" not in runs[0]:
        pytest.skip("timm is not installed")
    _compare_case(runs, "timm", rtol=1e-4, atol=2e-5)
