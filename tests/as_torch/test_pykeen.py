"""PyKEEN on ptcore, unmodified, against torch (``pykeen_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch): TransE, DistMult,
ComplEx (complex embeddings) and RotatE built from a labeled TriplesFactory, embeddings from
NumPy, trained four epochs by the LCWA loop (cross-entropy, BCE and softplus losses), their
head/tail/triple scores, and the filtered rank-based evaluation of held-out triples.  All
agree to float32 rounding; none needed a change in ptcore."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("pykeen")

runs, test_pykeen = case_tests("pykeen_cases.py", ["models"], rtol=1e-4, atol=1e-5)
