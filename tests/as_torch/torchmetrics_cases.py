"""TorchMetrics, run by tests/as_torch/test_torchmetrics.py with the real torch and under
``python -m ptcore.as_torch``: classification, regression, image, audio, text, retrieval,
clustering, nominal and aggregation metrics, module (``update``/``compute``/``forward`` over
batches, ``MetricCollection`` with compute groups, wrappers, ``state_dict``, ``clone``,
pickling, arithmetic of metrics) and functional, on data drawn from NumPy (so both runs see
the same numbers).  Each case writes what it computed to ``<out>/<case>.json``.
"""
import copy
import pickle
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _batches(*arrays, n=4):
    size = len(arrays[0]) // n
    for i in range(n):
        yield tuple(a[i * size:(i + 1) * size] for a in arrays)


def classification_case():
    from torchmetrics import MetricCollection
    from torchmetrics.classification import (
        BinaryAccuracy, BinaryAUROC, BinaryAveragePrecision, BinaryCalibrationError,
        BinaryF1Score, BinaryPrecisionRecallCurve, BinaryROC, BinarySpecificityAtSensitivity,
        MulticlassAccuracy, MulticlassAUROC, MulticlassAveragePrecision,
        MulticlassCohenKappa, MulticlassConfusionMatrix, MulticlassExactMatch,
        MulticlassF1Score, MulticlassHammingDistance, MulticlassJaccardIndex,
        MulticlassMatthewsCorrCoef, MulticlassPrecision, MulticlassRecall,
        MulticlassStatScores, MultilabelAccuracy, MultilabelAUROC, MultilabelF1Score,
        MultilabelRankingAveragePrecision)
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((120, 5)).astype(np.float32)
    target = rng.integers(0, 5, 120)
    logits[np.arange(120), target] += 1.0          # better than chance
    preds = _t(logits).softmax(-1)
    target = _t(target)
    res = {}
    coll = MetricCollection({
        "acc": MulticlassAccuracy(5), "acc_micro": MulticlassAccuracy(5, average="micro"),
        "top2": MulticlassAccuracy(5, top_k=2), "f1": MulticlassF1Score(5, average="macro"),
        "f1_none": MulticlassF1Score(5, average=None),
        "prec_w": MulticlassPrecision(5, average="weighted"), "rec": MulticlassRecall(5),
        "cm": MulticlassConfusionMatrix(5), "cm_norm": MulticlassConfusionMatrix(5, normalize="true"),
        "ap": MulticlassAveragePrecision(5), "auroc": MulticlassAUROC(5),
        "kappa": MulticlassCohenKappa(5), "mcc": MulticlassMatthewsCorrCoef(5),
        "jac": MulticlassJaccardIndex(5), "ham": MulticlassHammingDistance(5),
        "stat": MulticlassStatScores(5, average=None)}, compute_groups=True)
    steps = []
    for p, t in _batches(preds, target):
        steps.append(coll(p, t)["acc"])          # forward: the batch's value
    res["collection"] = coll.compute()
    res["steps"] = steps
    res["groups"] = sorted(sorted(g) for g in coll.compute_groups.values())
    clone = coll.clone(prefix="val_")
    res["clone_keys"] = sorted(clone.keys())
    res["pickled"] = pickle.loads(pickle.dumps(coll)).compute()["f1"]
    res["deepcopy"] = copy.deepcopy(coll)["kappa"].compute()
    coll.reset()
    coll.update(preds[:10], target[:10])
    res["after_reset"] = coll.compute()["acc_micro"]
    # ignore_index and an integer-label input
    m = MulticlassAccuracy(5, ignore_index=0)
    res["ignore_index"] = m(preds.argmax(-1), target)
    # exact match over a multidim (N, extra) input
    em = MulticlassExactMatch(5, multidim_average="global")
    res["exact_match"] = em(preds.argmax(-1).reshape(20, 6), target.reshape(20, 6))

    bprob = rng.random(200).astype(np.float32)
    btarget = (rng.random(200) < 0.35 + 0.3 * bprob).astype(np.int64)
    bp, bt = _t(bprob), _t(btarget)
    for name, m in [("bacc", BinaryAccuracy()), ("bf1", BinaryF1Score(threshold=0.4)),
                    ("bauroc", BinaryAUROC()), ("bauroc_fpr", BinaryAUROC(max_fpr=0.5)),
                    ("bap", BinaryAveragePrecision()), ("bece", BinaryCalibrationError(n_bins=10)),
                    ("bece_max", BinaryCalibrationError(n_bins=5, norm="max")),
                    ("bprc", BinaryPrecisionRecallCurve()),
                    ("bprc_bins", BinaryPrecisionRecallCurve(thresholds=11)),
                    ("broc", BinaryROC()), ("bspec_at", BinarySpecificityAtSensitivity(0.5))]:
        for p, t in _batches(bp, bt):
            m.update(p, t)
        res[name] = m.compute()
    # logits as input (torchmetrics applies a sigmoid when values are outside [0, 1])
    res["bacc_logits"] = BinaryAccuracy()(_t(rng.standard_normal(50).astype(np.float32)),
                                          bt[:50])

    mlp = _t(rng.random((60, 4)).astype(np.float32))
    mlt = _t((rng.random((60, 4)) < 0.5).astype(np.int64))
    for name, m in [("mlacc", MultilabelAccuracy(4)), ("mlf1", MultilabelF1Score(4, average="micro")),
                    ("mlauroc", MultilabelAUROC(4, average=None)),
                    ("mlrap", MultilabelRankingAveragePrecision(4))]:
        res[name] = m(mlp, mlt)
    return res


def classification_functional_case():
    import torchmetrics.functional as F
    from torchmetrics.functional.classification import (
        binary_auroc, binary_fbeta_score, binary_hinge_loss, multiclass_calibration_error,
        multiclass_precision_recall_curve, multiclass_roc, multilabel_hamming_distance)
    rng = np.random.default_rng(1)
    preds = _t(rng.standard_normal((40, 4)).astype(np.float32)).softmax(-1)
    target = _t(rng.integers(0, 4, 40))
    bp = _t(rng.random(40).astype(np.float32))
    bt = _t(rng.integers(0, 2, 40))
    return {
        "accuracy": F.accuracy(preds, target, task="multiclass", num_classes=4),
        "f1": F.f1_score(preds, target, task="multiclass", num_classes=4, average="weighted"),
        "auroc": binary_auroc(bp, bt),
        "fbeta": binary_fbeta_score(bp, bt, beta=2.0),
        "hinge": binary_hinge_loss(bp, bt),
        "calib": multiclass_calibration_error(preds, target, 4, n_bins=5),
        "prc": multiclass_precision_recall_curve(preds, target, 4, thresholds=5),
        "roc": multiclass_roc(preds, target, 4),
        "mlham": multilabel_hamming_distance(
            _t(rng.random((10, 3)).astype(np.float32)), _t(rng.integers(0, 2, (10, 3))), 3),
        "dice": F.dice(preds, target, num_classes=4, average="macro")
        if hasattr(F, "dice") else 0.0,
    }


def regression_case():
    from torchmetrics import MetricCollection
    from torchmetrics.regression import (
        ConcordanceCorrCoef, CosineSimilarity, CriticalSuccessIndex, ExplainedVariance,
        KendallRankCorrCoef, KLDivergence, LogCoshError, MeanAbsoluteError,
        MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogError,
        MinkowskiDistance, NormalizedRootMeanSquaredError, PearsonCorrCoef, R2Score,
        RelativeSquaredError, SpearmanCorrCoef, SymmetricMeanAbsolutePercentageError,
        TweedieDevianceScore, WeightedMeanAbsolutePercentageError)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(80).astype(np.float32)
    y = (1.5 * x + 0.3 * rng.standard_normal(80)).astype(np.float32)
    x, y = _t(x), _t(y)
    res = {}
    coll = MetricCollection([
        MeanSquaredError(), MeanAbsoluteError(), R2Score(),
        ExplainedVariance(), PearsonCorrCoef(), SpearmanCorrCoef(), KendallRankCorrCoef(),
        ConcordanceCorrCoef(), MeanAbsolutePercentageError(),
        SymmetricMeanAbsolutePercentageError(), WeightedMeanAbsolutePercentageError(),
        LogCoshError(), RelativeSquaredError(), MinkowskiDistance(p=3),
        CriticalSuccessIndex(0.5)], compute_groups=False)
    for p, t in _batches(x, y):
        coll.update(p, t)
    res["coll"] = coll.compute()
    pos_x, pos_y = x.abs() + 0.1, y.abs() + 0.1
    res["rmse"] = MeanSquaredError(squared=False)(x, y)
    res["msle"] = MeanSquaredLogError()(pos_x, pos_y)
    res["tweedie"] = TweedieDevianceScore(power=1.5)(pos_x, pos_y)
    res["nrmse"] = NormalizedRootMeanSquaredError(normalization="range")(x, y)
    # multioutput
    X = _t(rng.standard_normal((30, 3)).astype(np.float32))
    Y = X * 2 + _t(rng.standard_normal((30, 3)).astype(np.float32))
    res["r2_multi"] = R2Score(multioutput="raw_values")(X, Y)
    res["pearson_multi"] = PearsonCorrCoef(num_outputs=3)(X, Y)
    res["spearman_multi"] = SpearmanCorrCoef(num_outputs=3)(X, Y)
    res["cos"] = CosineSimilarity(reduction="mean")(X, Y)
    res["kl"] = KLDivergence()(X.softmax(-1), Y.softmax(-1))
    res["kendall_test"] = KendallRankCorrCoef(variant="c", t_test=True)(x, y)
    return res


def image_audio_case():
    from torchmetrics.audio import (ScaleInvariantSignalDistortionRatio,
                                    ScaleInvariantSignalNoiseRatio, SignalDistortionRatio,
                                    SignalNoiseRatio)
    from torchmetrics.image import (ErrorRelativeGlobalDimensionlessSynthesis,
                                    MultiScaleStructuralSimilarityIndexMeasure,
                                    PeakSignalNoiseRatio, RelativeAverageSpectralError,
                                    SpectralAngleMapper, StructuralSimilarityIndexMeasure,
                                    TotalVariation, UniversalImageQualityIndex)
    rng = np.random.default_rng(3)
    img = rng.random((4, 3, 32, 32)).astype(np.float32)
    noisy = np.clip(img + 0.1 * rng.standard_normal(img.shape), 0, 1).astype(np.float32)
    a, b = _t(img), _t(noisy)
    res = {
        "psnr": PeakSignalNoiseRatio(data_range=1.0)(b, a),
        "ssim": StructuralSimilarityIndexMeasure(data_range=1.0)(b, a),
        "ssim_map": StructuralSimilarityIndexMeasure(data_range=1.0, reduction="none",
                                                     gaussian_kernel=False, kernel_size=5)(b, a),
        "uqi": UniversalImageQualityIndex()(b, a),
        "tv": TotalVariation()(b),
        "sam": SpectralAngleMapper()(b, a),
        "ergas": ErrorRelativeGlobalDimensionlessSynthesis()(b, a),
        "rase": RelativeAverageSpectralError()(b, a),
    }
    big = _t(rng.random((1, 1, 96, 96)).astype(np.float32))
    res["msssim"] = MultiScaleStructuralSimilarityIndexMeasure(
        data_range=1.0, kernel_size=3, betas=(0.3, 0.3, 0.4))(big * 0.9 + 0.05, big)
    sig = rng.standard_normal((2, 400)).astype(np.float32)
    est = (sig + 0.3 * rng.standard_normal(sig.shape)).astype(np.float32)
    s, e = _t(sig), _t(est)
    res.update(snr=SignalNoiseRatio()(e, s), sisnr=ScaleInvariantSignalNoiseRatio()(e, s),
               sisdr=ScaleInvariantSignalDistortionRatio()(e, s),
               sdr=SignalDistortionRatio(filter_length=32)(e.double(), s.double()))
    return res


def text_retrieval_case():
    from torchmetrics.retrieval import (RetrievalHitRate, RetrievalMAP, RetrievalMRR,
                                        RetrievalNormalizedDCG, RetrievalPrecision,
                                        RetrievalRecall)
    from torchmetrics.text import (BLEUScore, CharErrorRate, CHRFScore, EditDistance,
                                   ExtendedEditDistance, MatchErrorRate, Perplexity,
                                   SacreBLEUScore, TranslationEditRate, WordErrorRate,
                                   WordInfoLost)
    preds = ["the cat sat on the mat", "a quick brown fox jumps", "hello there general kenobi"]
    refs = [["the cat is on the mat", "there is a cat on the mat"],
            ["the quick brown fox jumped"], ["hello there general kenobi"]]
    flat = [r[0] for r in refs]
    res = {
        "bleu": BLEUScore()(preds, refs), "bleu2": BLEUScore(n_gram=2, smooth=True)(preds, refs),
        "sacrebleu": SacreBLEUScore()(preds, refs), "chrf": CHRFScore()(preds, refs),
        "ter": TranslationEditRate()(preds, refs), "wer": WordErrorRate()(preds, flat),
        "cer": CharErrorRate()(preds, flat), "mer": MatchErrorRate()(preds, flat),
        "wil": WordInfoLost()(preds, flat), "edit": EditDistance()(preds, flat),
        "eed": ExtendedEditDistance()(preds, flat),
    }
    rng = np.random.default_rng(4)
    logits = _t(rng.standard_normal((2, 8, 11)).astype(np.float32))
    tokens = _t(rng.integers(0, 11, (2, 8)))
    tokens[0, -2:] = -100
    res["perplexity"] = Perplexity(ignore_index=-100)(logits, tokens)
    scores = _t(rng.random(30).astype(np.float32))
    rel = _t(rng.random(30) < 0.4)
    idx = _t(np.repeat(np.arange(5), 6))
    for name, m in [("map", RetrievalMAP()), ("mrr", RetrievalMRR()),
                    ("ndcg", RetrievalNormalizedDCG(top_k=3)),
                    ("p2", RetrievalPrecision(top_k=2)), ("r3", RetrievalRecall(top_k=3)),
                    ("hit", RetrievalHitRate(top_k=2))]:
        res[name] = m(scores, rel, indexes=idx)
    return res


def clustering_nominal_aggregation_case():
    from torchmetrics.aggregation import (CatMetric, MaxMetric, MeanMetric, MinMetric,
                                          RunningMean, SumMetric)
    from torchmetrics.clustering import (AdjustedMutualInfoScore, AdjustedRandScore,
                                         CalinskiHarabaszScore, DaviesBouldinScore,
                                         FowlkesMallowsIndex, HomogeneityScore,
                                         MutualInfoScore, NormalizedMutualInfoScore,
                                         RandScore, VMeasureScore)
    from torchmetrics.nominal import CramersV, PearsonsContingencyCoefficient, TheilsU, TschuprowsT
    from torchmetrics.wrappers import BootStrapper, ClasswiseWrapper, MetricTracker, MinMaxMetric
    from torchmetrics.classification import MulticlassAccuracy
    from torchmetrics.regression import MeanSquaredError
    rng = np.random.default_rng(5)
    a = _t(rng.integers(0, 4, 60))
    b = _t(np.where(rng.random(60) < 0.7, a.numpy(), rng.integers(0, 4, 60)))
    res = {}
    for name, m in [("mi", MutualInfoScore()), ("ami", AdjustedMutualInfoScore()),
                    ("nmi", NormalizedMutualInfoScore()), ("rand", RandScore()),
                    ("arand", AdjustedRandScore()), ("fm", FowlkesMallowsIndex()),
                    ("hom", HomogeneityScore()), ("vm", VMeasureScore()),
                    ("cramers", CramersV(num_classes=4)), ("tschup", TschuprowsT(num_classes=4)),
                    ("pcc", PearsonsContingencyCoefficient(num_classes=4)),
                    ("theil", TheilsU(num_classes=4))]:
        res[name] = m(b, a)
    data = _t(rng.standard_normal((60, 3)).astype(np.float32) + a.numpy()[:, None])
    res["ch"] = CalinskiHarabaszScore()(data, a)
    res["db"] = DaviesBouldinScore()(data, a)
    vals = _t(rng.standard_normal(12).astype(np.float32))
    aggs = {"mean": MeanMetric(), "sum": SumMetric(), "max": MaxMetric(), "min": MinMetric(),
            "cat": CatMetric(), "running": RunningMean(window=3)}
    for m in aggs.values():
        for v in vals.split(4):
            m.update(v)
    res["agg"] = {k: m.compute() for k, m in aggs.items()}
    wm = MeanMetric()
    wm.update(vals, weight=vals.abs())
    res["weighted_mean"] = wm.compute()
    nan_mean = MeanMetric(nan_strategy="ignore")
    nan_mean.update(_t(np.array([1.0, np.nan, 3.0], dtype=np.float32)))
    res["nan_ignore"] = nan_mean.compute()
    # wrappers
    preds = _t(rng.standard_normal((40, 3)).astype(np.float32)).softmax(-1)
    target = _t(rng.integers(0, 3, 40))
    cw = ClasswiseWrapper(MulticlassAccuracy(3, average=None), labels=["a", "b", "c"])
    res["classwise"] = cw(preds, target)
    tracker = MetricTracker(MeanSquaredError(), maximize=False)
    for epoch in range(3):
        tracker.increment()
        tracker.update(preds[:, 0] + 0.1 * epoch, preds[:, 1])
    res["tracker_all"] = tracker.compute_all()
    best, which = tracker.best_metric(return_step=True)
    res["tracker_best"] = [best, which]
    mm = MinMaxMetric(MulticlassAccuracy(3))
    for p, t in _batches(preds, target):
        mm(p, t)
    res["minmax"] = mm.compute()
    bs = BootStrapper(MulticlassAccuracy(3), num_bootstraps=4, sampling_strategy="poisson")
    bs.update(preds, target)
    res["bootstrap_keys"] = sorted(bs.compute())
    # arithmetic of metrics (a CompositionalMetric)
    from torchmetrics.regression import MeanAbsoluteError
    comp = MeanSquaredError() + 2 * MeanAbsoluteError()
    comp.update(preds[:, 0], preds[:, 1])
    res["compositional"] = comp.compute()
    return res


def module_behaviour_case():
    """Metric as an nn.Module: states as buffers, dtype/device moves, state_dict persistence,
    merge_state, full_state_update and a custom metric with list and tensor states."""
    from torchmetrics import Metric
    from torchmetrics.classification import MulticlassAccuracy

    class MyMetric(Metric):
        full_state_update = False
        higher_is_better = True

        def __init__(self):
            super().__init__()
            self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")
            self.add_state("count", default=torch.tensor(0), dist_reduce_fx="sum")
            self.add_state("seen", default=[], dist_reduce_fx="cat")

        def update(self, x):
            self.total += x.sum()
            self.count += x.numel()
            self.seen.append(x.max().reshape(1))

        def compute(self):
            from torchmetrics.utilities import dim_zero_cat
            return {"mean": self.total / self.count, "maxes": dim_zero_cat(self.seen)}

    rng = np.random.default_rng(6)
    x = _t(rng.standard_normal((6, 5)).astype(np.float32))
    m = MyMetric()
    batch_vals = [m(row) for row in x]
    res = {"batch": batch_vals, "total": m.compute()}
    m.persistent(True)
    sd = m.state_dict()
    res["state_keys"] = sorted(sd)
    m2 = MyMetric()
    m2.persistent(True)
    m2.load_state_dict(sd)
    res["loaded"] = m2.compute()
    m3 = MyMetric()
    m3.update(x[:2])
    m4 = MyMetric()
    m4.update(x[2:])
    m3.merge_state(m4)
    res["merged"] = m3.compute()
    m64 = MyMetric().double()
    m64.update(x.double())
    res["double"] = m64.compute()["mean"]
    res["set_dtype"] = str(MulticlassAccuracy(3).set_dtype(torch.float64).tp.dtype)
    acc = MulticlassAccuracy(3)
    res["update_count"] = [acc._update_count]
    acc.update(_t(np.array([0, 1, 2])), _t(np.array([0, 1, 1])))
    res["update_count"].append(acc._update_count)
    res["device"] = str(acc.device)
    # scripting a metric (its forward is @torch.jit.unused, taking *args: it stays Python;
    # TorchMetrics' own tests script every metric)
    res["scripted"] = type(torch.jit.script(MulticlassAccuracy(3))).__name__
    res["errors"] = []
    for bad in (lambda: acc.update(_t(np.array([0, 1])), _t(np.array([0, 1, 1]))),
                lambda: MulticlassAccuracy(0)):
        try:
            bad()
            res["errors"].append(None)
        except Exception as exc:  # noqa: BLE001 -- the exception type is what is compared
            res["errors"].append(type(exc).__name__)
    return res


CASES = {"classification": classification_case,
         "classification_functional": classification_functional_case,
         "regression": regression_case, "image_audio": image_audio_case,
         "text_retrieval": text_retrieval_case,
         "clustering_nominal_aggregation": clustering_nominal_aggregation_case,
         "module_behaviour": module_behaviour_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
