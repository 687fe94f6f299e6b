"""sentence-transformers on ptcore, unmodified, against torch
(``sentence_transformers_cases.py``, run with the real torch and under
``python -m ptcore.as_torch`` in an environment without torch), with a tiny BERT of random
configuration and NumPy weights and a vocabulary written by the case program (no downloads):
encoding with mean/CLS/max pooling and normalisation, similarity, dot score, semantic search,
paraphrase mining, tokenisation, save/load, binary quantisation; three SGD steps with the
cosine, multiple-negatives ranking, triplet, contrastive, CoSENT and Matryoshka losses; a
cross-encoder's scores and ranking; a SPLADE sparse encoder's dense and sparse (a
``torch.sparse`` COO tensor, checked with ``isinstance(x, torch.Tensor)``) embeddings,
similarity and decoding.  All agree to float32 rounding (CoSENT's and Matryoshka's trained
embeddings to 1e-4: their losses scale cosine similarities by 20 -- a log-sum-exp of their
differences, a cross-entropy over them at three widths -- and three SGD steps with momentum
carry the products' last-bit differences (ptcore's small-product kernels sum in another order
than torch's) to about 1e-6 of embeddings near 0.003).

What sentence-transformers took: ``torch.tensor``/``torch.as_tensor`` of a sparse tensor,
``is_floating_point``/``is_complex``/``numel`` and ``unbind`` of sparse tensors, and sparse
tensors that are ``Tensor`` instances.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("sentence_transformers", "transformers")

NAMES = ["encode", "train", "cross_sparse"]
runs, test_sentence_transformers = case_tests(
    "sentence_transformers_cases.py", NAMES,
    per_case={"train": {"cosent": {"rtol": 1e-4, "atol": 1e-5},
                        "matryoshka": {"rtol": 1e-4, "atol": 1e-5}}})
