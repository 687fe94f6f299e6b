"""PyKEEN, run by tests/as_torch/test_pykeen.py with the real torch and under
``python -m ptcore.as_torch``: knowledge-graph embedding models (TransE, DistMult, ComplEx,
RotatE) on a small labeled graph, trained a few epochs with the LCWA training loop (one batch:
the loader's shuffling leaves the loss unchanged), their scores for all tails/heads, and the
rank-based evaluation (filtered) of held-out triples; embeddings set from NumPy.  Each case
writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np

# torchvision is optional to PyKEEN (its visual representations); where the installed one
# does not load with this torch it raises RuntimeError, not ImportError, at import
sys.modules.setdefault("torchvision", None)

import torch  # noqa: E402

from case_results import main  # noqa: E402

warnings.filterwarnings("ignore")


def _graph():
    from pykeen.triples import TriplesFactory
    rng = np.random.default_rng(0)
    ents, rels = [f"e{i}" for i in range(12)], ["likes", "knows", "near"]
    triples = {(ents[h], rels[r], ents[t]) for h, r, t in
               zip(rng.integers(0, 12, 60), rng.integers(0, 3, 60), rng.integers(0, 12, 60))
               if h != t}
    labeled = np.array(sorted(triples), dtype=str)
    train = TriplesFactory.from_labeled_triples(labeled[:-6])
    test = TriplesFactory.from_labeled_triples(
        labeled[-6:], entity_to_id=train.entity_to_id, relation_to_id=train.relation_to_id)
    return train, test


def _fill(model, seed):
    """Every parameter from NumPy normals (complex ones through their real view)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            real = torch.view_as_real(p) if p.is_complex() else p
            real.copy_(torch.from_numpy(np.asarray(rng.standard_normal(real.shape) * 0.3,
                                                   dtype=np.float32)))


def _train_eval(model_cls, loss, seed, **kw):
    from pykeen.evaluation import RankBasedEvaluator
    from pykeen.training import LCWATrainingLoop
    train, test = _graph()
    model = model_cls(triples_factory=train, loss=loss, random_seed=0, **kw)
    # the loop re-initializes the weights before training (from torch's generator, which
    # is not ptcore's): they come from NumPy instead
    model.reset_parameters_ = lambda: _fill(model, seed) or model
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loop = LCWATrainingLoop(model=model, triples_factory=train, optimizer=opt)
    losses = loop.train(triples_factory=train, num_epochs=4, batch_size=1000,
                        use_tqdm=False, use_tqdm_batch=False)
    hr = test.mapped_triples[:, :2]
    rt = test.mapped_triples[:, 1:]
    model.eval()
    with torch.no_grad():
        res = {"losses": losses, "score_t": model.score_t(hr), "score_h": model.score_h(rt),
               "score_hrt": model.score_hrt(test.mapped_triples)}
    ev = RankBasedEvaluator(filtered=True)
    metrics = ev.evaluate(model, test.mapped_triples, batch_size=64, use_tqdm=False,
                          additional_filter_triples=[train.mapped_triples])
    res["metrics"] = {k: float(metrics.get_metric(k)) for k in
                      ("both.realistic.inverse_harmonic_mean_rank", "both.realistic.hits_at_3",
                       "tail.realistic.arithmetic_mean_rank",
                       "head.optimistic.arithmetic_mean_rank")}
    res["n_params"] = sum(p.numel() for p in model.parameters())
    return res


def models_case():
    from pykeen.models import ComplEx, DistMult, RotatE, TransE
    return {"transe": _train_eval(TransE, "crossentropy", 1, embedding_dim=8,
                                  scoring_fct_norm=1),
            "distmult": _train_eval(DistMult, "bcewithlogits", 2, embedding_dim=8),
            "complex": _train_eval(ComplEx, "softplus", 3, embedding_dim=6),
            "rotate": _train_eval(RotatE, "crossentropy", 4, embedding_dim=6)}


if __name__ == "__main__":
    main({"models": models_case}, sys.argv)
