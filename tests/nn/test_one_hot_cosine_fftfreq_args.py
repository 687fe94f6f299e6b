"""Argument parsing of one_hot, cosine_similarity and fft.fftfreq/rfftfreq as torch's
(found by the argument fuzz: floats, bools, None and NumPy arrays were accepted)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

CALLS = [
    "F.one_hot(t, 3.0)", "F.one_hot(t, np.int64(3))", "F.one_hot(t, np.array(3))",
    "F.one_hot(t, True)", "F.one_hot(input=t, num_classes=3)", "F.one_hot(tensor=t, num_classes=3)",
    "F.one_hot(t)", "F.one_hot(t, -1)",
    "F.cosine_similarity(L.ones(3), L.ones(3), None)",
    "F.cosine_similarity(L.ones(3), L.ones(3), 0, None)",
    "F.cosine_similarity(L.ones(2, 3), L.ones(2, 3), 1, 1e-6)",
    "F.cosine_similarity(L.ones(2, 3), L.ones(2, 3), np.int64(0))",
    "L.fft.fftfreq(True)", "L.fft.fftfreq(3, True)", "L.fft.rfftfreq(3.0)", "L.fft.rfftfreq(4)",
    "L.fft.rfftfreq(False)",
    "L.linalg.vander(L.ones(3), N=2.0)", "L.linalg.vander(L.ones(3), N=2)",
    "L.linalg.vander(L.ones(3), N=np.int64(3))", "L.linalg.vander(L.ones(3), N=True)",
]


@pytest.mark.parametrize("call", CALLS)
def test_arguments_as_torch(call):
    def run(L):
        env = {"L": L, "F": L.nn.functional, "np": np, "t": L.tensor([0, 1, 2])}
        try:
            r = eval(call, env)
        except Exception as e:          # noqa: BLE001 - the type is what is compared
            return type(e)
        return np.round(r.double().numpy(), 6).tolist()
    assert run(ptcore) == run(torch)
