"""pytorch-metric-learning on ptcore, unmodified, against torch (``metric_learning_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), embeddings, labels and weights from NumPy: fourteen pair/triplet/list losses
(contrastive with Lp and cosine distances, triplet with a threshold reducer, NT-Xent, SupCon,
multi-similarity, circle, lifted structure, margin, N-pairs, FastAP, tuplet, SNR) with their
gradients; seven losses with learned proxies or class centres (ArcFace, CosFace, proxy
anchor, ProxyNCA, normalized softmax, SoftTriple, sub-center ArcFace) trained three SGD
steps; eight miners' index tuples and triplet losses on them; an embedding net trained on a
mined multi-similarity loss.  All agree to float32 rounding (rtol 1e-4), mined indices
exactly; the library needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("pytorch_metric_learning")

NAMES = ["losses", "proxy", "miners"]
runs, test_metric_learning = case_tests("metric_learning_cases.py", NAMES, rtol=1e-4,
                                        atol=1e-5)
