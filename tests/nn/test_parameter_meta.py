"""The metaclasses of ``nn.Parameter`` and ``nn.Buffer`` as torch's ``torch.nn.parameter``
exposes them (``_ParameterMeta``, ``_BufferMeta``): TorchRL imports ``_ParameterMeta`` at
import time to build its own parameter types."""
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", ["torch", "ptcore"])
def test_parameter_and_buffer_metaclasses(lib):
    m = torch if lib == "torch" else ptcore
    from importlib import import_module
    param = import_module(f"{m.__name__}.nn.parameter")
    assert type(m.nn.Parameter) is param._ParameterMeta
    assert type(m.nn.Buffer) is param._BufferMeta
    assert issubclass(param._ParameterMeta, type(m.Tensor))
    assert issubclass(param._BufferMeta, type(m.Tensor))
    assert type(m.nn.UninitializedBuffer) is type(m.Tensor)

    # a library's own metaclass on top of _ParameterMeta (TorchRL's pattern) keeps the
    # ``_is_param`` instance check
    class Meta(param._ParameterMeta):
        pass

    class MyParam(m.nn.Parameter, metaclass=Meta):
        pass
    p = MyParam(m.ones(2))
    assert isinstance(p, m.nn.Parameter) and isinstance(p, MyParam)
    flagged = m.zeros(2)
    flagged._is_param = True
    assert isinstance(flagged, m.nn.Parameter) and not isinstance(flagged, MyParam)
    b = m.zeros(1)
    b._is_buffer = True
    assert isinstance(b, m.nn.Buffer) and not isinstance(m.zeros(1), m.nn.Buffer)
    assert isinstance(m.nn.Buffer(m.ones(1)), m.nn.Buffer)
