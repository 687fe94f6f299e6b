"""pytorch-metric-learning, run by tests/as_torch/test_metric_learning.py with the real torch
and under ``python -m ptcore.as_torch``: its losses (pair, triplet, proxy and classification
losses, with and without miners and reducers), miners' index tuples and an embedding net
trained a few steps; weights and data from NumPy.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, values_and_grads

warnings.filterwarnings("ignore")

N, DIM, CLASSES = 24, 8, 4


def _data(seed=0):
    rng = np.random.default_rng(seed)
    emb = torch.from_numpy(rng.standard_normal((N, DIM)).astype(np.float32))
    labels = torch.from_numpy(np.repeat(np.arange(CLASSES), N // CLASSES))
    return emb, labels


def losses_case():
    """Each loss's value and the gradient of its embeddings."""
    from pytorch_metric_learning import distances, losses, reducers
    emb0, labels = _data(1)
    fns = {
        "contrastive": losses.ContrastiveLoss(pos_margin=0.1, neg_margin=0.8),
        "triplet": losses.TripletMarginLoss(margin=0.2),
        "triplet_cos": losses.TripletMarginLoss(margin=0.1, distance=distances.CosineSimilarity(),
                                                reducer=reducers.ThresholdReducer(low=0.0)),
        "ntxent": losses.NTXentLoss(temperature=0.1),
        "supcon": losses.SupConLoss(temperature=0.2),
        "multi_similarity": losses.MultiSimilarityLoss(alpha=2, beta=50, base=0.5),
        "circle": losses.CircleLoss(m=0.4, gamma=80),
        "lifted": losses.GeneralizedLiftedStructureLoss(neg_margin=1.0),
        "margin": losses.MarginLoss(margin=0.2, nu=0.0, beta=1.2),
        "npairs": losses.NPairsLoss(),
        "fast_ap": losses.FastAPLoss(num_bins=10),
        "tuplet": losses.TupletMarginLoss(),
        "snr": losses.SignalToNoiseRatioContrastiveLoss(),
        "lp": losses.ContrastiveLoss(
            distance=distances.LpDistance(p=1, normalize_embeddings=False),
            reducer=reducers.MeanReducer()),
    }
    return values_and_grads(fns, emb0, labels)


def proxy_case():
    """Losses with learned weights (proxies, class centres): values, gradients, and their
    weights after three SGD steps."""
    from pytorch_metric_learning import losses
    emb0, labels = _data(2)
    fns = {"arcface": losses.ArcFaceLoss(CLASSES, DIM, margin=28.6, scale=30),
           "cosface": losses.CosFaceLoss(CLASSES, DIM, margin=0.35, scale=64),
           "proxy_anchor": losses.ProxyAnchorLoss(CLASSES, DIM, margin=0.1, alpha=32),
           "proxy_nca": losses.ProxyNCALoss(CLASSES, DIM, softmax_scale=1),
           "normalized_softmax": losses.NormalizedSoftmaxLoss(CLASSES, DIM, temperature=0.05),
           "soft_triple": losses.SoftTripleLoss(CLASSES, DIM, centers_per_class=3),
           "subcenter_arcface": losses.SubCenterArcFaceLoss(
               num_classes=CLASSES, embedding_size=DIM, sub_centers=2)}
    res = {}
    for i, (name, fn) in enumerate(fns.items()):
        fill_normal(list(fn.parameters()), 10 + i, 0.5)
        emb = emb0.clone().requires_grad_()
        opt = torch.optim.SGD(list(fn.parameters()) + [emb], lr=0.05)
        vals = []
        for _ in range(3):
            opt.zero_grad()
            loss = fn(emb, labels)
            loss.backward()
            opt.step()
            vals.append(loss.item())
        res[name] = {"losses": vals, "weights": [p.detach() for p in fn.parameters()],
                     "emb": emb.detach()}
    return res


def miners_case():
    """Miners' tuples (anchor/positive/negative indices) and a triplet loss on them; an
    embedding net trained three Adam steps on a mined multi-similarity loss."""
    from pytorch_metric_learning import losses, miners
    emb, labels = _data(3)
    ms = {"multi_similarity": miners.MultiSimilarityMiner(epsilon=0.1),
          "triplet_semihard": miners.TripletMarginMiner(margin=0.5, type_of_triplets="semihard"),
          "triplet_all": miners.TripletMarginMiner(margin=0.3, type_of_triplets="all"),
          "batch_hard": miners.BatchHardMiner(),
          "pair_margin": miners.PairMarginMiner(pos_margin=0.5, neg_margin=2.0),
          "angular": miners.AngularMiner(angle=20),
          "hdc": miners.HDCMiner(filter_percentage=0.5),
          "easy_hard": miners.BatchEasyHardMiner()}
    res = {}
    trip = losses.TripletMarginLoss(margin=0.2)
    for name, m in ms.items():
        tuples = m(emb, labels)
        res[name] = {"tuples": list(tuples)}
        if len(tuples) == 3:
            res[name]["loss"] = trip(emb, labels, tuples)
    net = torch.nn.Sequential(torch.nn.Linear(DIM, 16), torch.nn.ReLU(), torch.nn.Linear(16, 6))
    fill_normal(list(net.parameters()), 4, 0.3)
    miner, loss_fn = miners.MultiSimilarityMiner(epsilon=0.2), losses.MultiSimilarityLoss()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    train = []
    for _ in range(3):
        opt.zero_grad()
        out = net(emb)
        loss = loss_fn(out, labels, miner(out, labels))
        loss.backward()
        opt.step()
        train.append(loss.item())
    res["train"] = {"losses": train, "weight": net[0].weight.detach()}
    return res


CASES = {"losses": losses_case, "proxy": proxy_case, "miners": miners_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
