"""torch.onnx's enums, errors and mode helper in ptcore.onnx (names, values,
printing, conversions) and export's ``training``/``operator_export_type``
arguments; torch is the oracle where it is installed."""
import io

import pytest

import ptcore
import ptcore.nn as nn
from ptcore import onnx as ponnx

try:
    import torch
except ImportError:                 # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@needs_torch
@pytest.mark.parametrize("name", ["TrainingMode", "OperatorExportTypes", "TensorProtoDataType",
                                  "JitScalarType"])
def test_enums_match_torch(name):
    mine, theirs = getattr(ponnx, name), getattr(torch.onnx, name)
    want = {k: int(v) for k, v in theirs.__members__.items()}
    assert {k: int(v) for k, v in mine.__members__.items()} == want
    for k in want:
        assert repr(mine[k]).split(".", 1)[1] == repr(theirs.__members__[k]).split(".", 1)[1]
        assert str(mine[k]).split(".")[-1] == str(theirs.__members__[k]).split(".")[-1]


@needs_torch
def test_jit_scalar_type_matches_torch():
    J, TJ = ponnx.JitScalarType, torch.onnx.JitScalarType
    for m in J:
        t = TJ[m.name]
        assert m.scalar_name() == t.scalar_name()
        assert m.onnx_compatible() == t.onnx_compatible()
        assert m.onnx_type().name == t.onnx_type().name
        if m.name != "UNDEFINED":
            assert m.torch_name() == t.torch_name()
        try:
            d = m.dtype()
        except (ponnx.OnnxExporterError, KeyError):
            continue                    # float8 and quantized types: ptcore has no dtype
        assert str(d).replace("ptcore.", "") == str(t.dtype()).replace("torch.", "")
        assert J.from_dtype(d) is m
    for onnx_type in range(0, 22):
        try:
            want = TJ.from_onnx_type(onnx_type).name
        except Exception:
            with pytest.raises(ponnx.OnnxExporterError):
                J.from_onnx_type(onnx_type)
            continue
        assert J.from_onnx_type(onnx_type).name == want
    assert J.from_value(ptcore.ones(2, dtype=ptcore.int64)) is J.INT64
    assert J.from_value(None, J.FLOAT) is J.FLOAT
    for bad in (lambda: J.from_value(None), lambda: J.from_onnx_type(99),
                lambda: J.from_dtype(None)):
        with pytest.raises(ponnx.OnnxExporterError):
            bad()


def test_errors_module():
    e = ponnx.errors
    assert ponnx.OnnxExporterError is e.OnnxExporterError
    assert issubclass(e.UnsupportedOperatorError, e.OnnxExporterError)
    assert issubclass(e.OnnxExporterError, RuntimeError)
    assert issubclass(e.SymbolicValueError, e.OnnxExporterError)
    assert issubclass(e.OnnxExporterWarning, UserWarning)
    assert ponnx.producer_name == "ptcore" and ponnx.producer_version == ptcore.__version__


@pytest.mark.parametrize("start", [True, False])
def test_select_model_mode_for_export(start):
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout())
    m.train(start)
    T = ponnx.TrainingMode
    for mode, inside in ((T.EVAL, False), (T.TRAINING, True), (T.PRESERVE, start)):
        with ponnx.select_model_mode_for_export(m, mode):
            assert m.training is inside and m[1].training is inside
        assert m.training is start and m[1].training is start
    with pytest.raises(TypeError, match="TrainingMode"):
        with ponnx.select_model_mode_for_export(m, 0):
            pass


@pytest.mark.filterwarnings("ignore::ptcore.jit.TracerWarning")
def test_export_training_argument_and_export_type():
    onnx = pytest.importorskip("onnx")
    m = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    m.train()
    x = ptcore.randn(2, 3)
    buf = io.BytesIO()
    ponnx.export(m, (x,), buf, training=ponnx.TrainingMode.EVAL)
    model = onnx.load_from_string(buf.getvalue())
    assert model.producer_name == "ptcore"
    assert m.training                     # restored
    # TRAINING exports the train-mode graph: its dropout has no ONNX mapping here
    with pytest.raises(ponnx.UnsupportedOperatorError):
        ponnx.export(m, (x,), io.BytesIO(), training=ponnx.TrainingMode.TRAINING)
    assert m.training
    m.eval()
    with pytest.raises(ponnx.UnsupportedOperatorError):
        # PRESERVE after .train(): exported as it is, in train mode
        m.train()
        ponnx.export(m, (x,), io.BytesIO(), training=ponnx.TrainingMode.PRESERVE)
    m.eval()
    ponnx.export(m, (x,), io.BytesIO(), training=ponnx.TrainingMode.PRESERVE)
    ponnx.export(m, (x,), io.BytesIO(),
                 operator_export_type=ponnx.OperatorExportTypes.ONNX_ATEN_FALLBACK)
    with pytest.raises(ponnx.OnnxExporterError, match="ONNX_ATEN"):
        ponnx.export(m, (x,), io.BytesIO(), operator_export_type=ponnx.OperatorExportTypes.ONNX_ATEN)


def test_export_accepts_an_exported_program():
    """torch.onnx.export takes an ExportedProgram (its module, on its example
    inputs unless given others)."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = ptcore.randn(2, 4)
    ep = ptcore.export.export(m, (x,))
    for call_args in ((x,), ()):
        buf = io.BytesIO()
        ponnx.export(ep, call_args, buf)
        sess = ort.InferenceSession(buf.getvalue())
        got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
        np.testing.assert_allclose(got, m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
