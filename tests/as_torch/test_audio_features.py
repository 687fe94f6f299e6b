"""Spectral front ends on ptcore, unmodified, against torch (``audio_features_cases.py``, run
with the real torch and under ``python -m ptcore.as_torch`` in an environment without torch),
signals and weights from NumPy: nnAudio (STFT as complex, magnitude and phase, its inverse,
mel spectrogram with the signal's gradient, MFCC, CQT, a trainable STFT kernel stepped once),
asteroid-filterbanks (STFT encoder/decoder, magnitude and angle, a parametrised sinc
filterbank trained three Adam steps) and torch-dct (DCT-I/II and inverses in 1 to 3
dimensions, LinearDCT, a gradient through dct_2d).  All agree to float32 rounding
(rtol 1e-4).  Each case skips where its library is absent.

What asteroid-filterbanks took: ``torch._C._is_tracing()`` (its encoders ask it on every
call), now whether ``ptcore.jit.trace`` records on this thread.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"nnaudio": "nnAudio", "asteroid": "asteroid_filterbanks", "dct": "torch_dct"}
runs, test_audio_features = library_case_tests("audio_features_cases.py", LIBS, rtol=1e-4,
                                               atol=1e-5)
