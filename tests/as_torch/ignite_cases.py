"""PyTorch-Ignite, run by tests/as_torch/test_ignite.py with the real torch and under
``python -m ptcore.as_torch``: engines, events, handlers and metrics training small networks
whose weights and data come from NumPy (data loaders unshuffled, so both runs see the same
batches).  Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


def _mlp(n_in=8, hidden=16, n_out=3, seed=0):
    torch.manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.ReLU(),
                            torch.nn.Linear(hidden, n_out))
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.from_numpy((rng.standard_normal(p.shape) * 0.3).astype(np.float32)))
    return m


def _classification_data(n=96, n_in=8, n_out=3, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n_in)).astype(np.float32)
    y = (x[:, :n_out] + 0.3 * rng.standard_normal((n, n_out))).argmax(1)
    return torch.from_numpy(x), torch.from_numpy(y)


def _loader(x, y, batch_size=16):
    ds = torch.utils.data.TensorDataset(x, y)
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=False)


def supervised_case():
    """create_supervised_trainer/evaluator with classification metrics, a running average,
    an LR schedule with warm-up, early stopping, checkpointing and reloading, a timer."""
    from ignite.contrib.handlers import PiecewiseLinear
    from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer
    from ignite.handlers import (Checkpoint, CosineAnnealingScheduler, DiskSaver,
                                 EarlyStopping, ModelCheckpoint, TerminateOnNan, Timer,
                                 create_lr_scheduler_with_warmup, global_step_from_engine)
    from ignite.metrics import (Accuracy, ClassificationReport, ConfusionMatrix, Fbeta, IoU,
                                Loss, Precision, Recall, RunningAverage,
                                TopKCategoricalAccuracy, mIoU)
    x, y = _classification_data()
    train, val = _loader(x[:64], y[:64]), _loader(x[64:], y[64:])
    model = _mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    trainer = create_supervised_trainer(model, opt, loss_fn)
    RunningAverage(output_transform=lambda out: out).attach(trainer, "avg_loss")
    precision = Precision(average=False)
    recall = Recall(average=False)
    cm = ConfusionMatrix(num_classes=3)
    metrics = {"acc": Accuracy(), "loss": Loss(loss_fn), "prec": precision, "rec": recall,
               "f1": Fbeta(1.0, precision=Precision(average=False), recall=Recall(average=False)),
               "top2": TopKCategoricalAccuracy(k=2), "cm": cm, "iou": IoU(cm), "miou": mIoU(cm),
               "prec_macro": Precision(average="macro"),
               "report": ClassificationReport(output_dict=True)}
    evaluator = create_supervised_evaluator(model, metrics=metrics)
    res = {"iter_loss": [], "avg_loss": [], "lr": [], "val": []}

    cosine = CosineAnnealingScheduler(opt, "lr", 0.1, 0.01, cycle_size=8)
    sched = create_lr_scheduler_with_warmup(cosine, warmup_start_value=0.0,
                                            warmup_duration=4, warmup_end_value=0.1)
    trainer.add_event_handler(Events.ITERATION_STARTED, sched)
    trainer.add_event_handler(Events.ITERATION_COMPLETED, TerminateOnNan())

    @trainer.on(Events.ITERATION_COMPLETED)
    def _log(engine):
        res["iter_loss"].append(engine.state.output)
        res["avg_loss"].append(engine.state.metrics["avg_loss"])
        res["lr"].append(opt.param_groups[0]["lr"])

    @trainer.on(Events.EPOCH_COMPLETED)
    def _validate(engine):
        evaluator.run(val)
        m = dict(evaluator.state.metrics)
        m["report"] = str(sorted(m["report"]))
        res["val"].append(m)

    stopper = EarlyStopping(patience=2, score_function=lambda e: -e.state.metrics["loss"],
                            trainer=trainer)
    evaluator.add_event_handler(Events.COMPLETED, stopper)
    timer = Timer(average=True)
    timer.attach(trainer, start=Events.EPOCH_STARTED, resume=Events.ITERATION_STARTED,
                 pause=Events.ITERATION_COMPLETED, step=Events.ITERATION_COMPLETED)
    with tempfile.TemporaryDirectory() as d:
        ckpt = ModelCheckpoint(d, "best", n_saved=2, require_empty=False,
                               score_function=lambda e: e.state.metrics["acc"],
                               score_name="acc",
                               global_step_transform=global_step_from_engine(trainer))
        evaluator.add_event_handler(Events.COMPLETED, ckpt, {"model": model})
        to_save = {"model": model, "optimizer": opt, "trainer": trainer}
        saver = Checkpoint(to_save, DiskSaver(d, require_empty=False), n_saved=1)
        trainer.add_event_handler(Events.EPOCH_COMPLETED, saver)
        state = trainer.run(train, max_epochs=6)
        res["epochs"] = state.epoch
        res["iterations"] = state.iteration
        res["ckpt_name"] = saver.last_checkpoint.name
        res["best_score"] = ckpt._saved[-1].priority if ckpt._saved else None
        fresh, fresh_opt = _mlp(seed=3), torch.optim.SGD(_mlp(seed=3).parameters(), lr=0.1)
        fresh_trainer = create_supervised_trainer(fresh, fresh_opt, loss_fn)
        Checkpoint.load_objects({"model": fresh, "trainer": fresh_trainer},
                                torch.load(saver.last_checkpoint, weights_only=False))
        res["reloaded"] = fresh(x[:4])
        res["reloaded_epoch"] = fresh_trainer.state.epoch
    res["timer_positive"] = timer.value() > 0
    res["weights"] = dict(model.state_dict())
    # a piecewise-linear schedule on a fresh optimizer, as its values over the steps
    opt2 = torch.optim.SGD(_mlp().parameters(), lr=0.0)
    pl = PiecewiseLinear(opt2, "lr", milestones_values=[(0, 0.0), (4, 0.2), (8, 0.05)])
    res["piecewise"] = [v for _, v in PiecewiseLinear.simulate_values(
        10, param_name="lr", milestones_values=[(0, 0.0), (4, 0.2), (8, 0.05)])]
    res["piecewise_state"] = sorted(pl.state_dict())
    return res


def custom_engine_case():
    """An Engine with a custom step (gradient accumulation), custom events, filtered events,
    a regression model with regression metrics, engine state_dict and resumption."""
    from ignite.engine import Engine, EventEnum, Events
    from ignite.metrics import (MeanAbsoluteError, MeanPairwiseDistance, MeanSquaredError,
                                RootMeanSquaredError)
    from ignite.metrics.regression import (FractionalBias, MaximumAbsoluteError,
                                           MeanError, PearsonCorrelation, R2Score)
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.standard_normal((80, 4)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((4, 1)).astype(np.float32))
    y = x @ w + 0.1 * torch.from_numpy(rng.standard_normal((80, 1)).astype(np.float32))
    model = torch.nn.Linear(4, 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.fill_(0.5)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)

    class StepEvents(EventEnum):
        ACCUMULATED = "accumulated"

    accumulation = 2

    def step(engine, batch):
        model.train()
        xb, yb = batch
        loss = torch.nn.functional.mse_loss(model(xb), yb) / accumulation
        loss.backward()
        if engine.state.iteration % accumulation == 0:
            opt.step()
            opt.zero_grad()
            engine.fire_event(StepEvents.ACCUMULATED)
        return loss.item()

    trainer = Engine(step)
    trainer.register_events(*StepEvents)
    res = {"accumulated": 0, "every3": [], "once": []}

    @trainer.on(StepEvents.ACCUMULATED)
    def _count(_):
        res["accumulated"] += 1

    @trainer.on(Events.ITERATION_COMPLETED(every=3))
    def _every3(engine):
        res["every3"].append(engine.state.output)

    @trainer.on(Events.ITERATION_COMPLETED(once=5))
    def _once(engine):
        res["once"].append(engine.state.iteration)

    def evaluate(engine, batch):
        model.eval()
        with torch.no_grad():
            xb, yb = batch
            return model(xb), yb

    evaluator = Engine(evaluate)
    for name, metric in {"mse": MeanSquaredError(), "mae": MeanAbsoluteError(),
                         "rmse": RootMeanSquaredError(), "mpd": MeanPairwiseDistance(),
                         "r2": R2Score(), "pearson": PearsonCorrelation(),
                         "fbias": FractionalBias(), "maxae": MaximumAbsoluteError(),
                         "me": MeanError()}.items():
        metric.attach(evaluator, name)
    loader = _loader(x, y, batch_size=10)
    trainer.run(loader, max_epochs=3)
    evaluator.run(loader)
    res["metrics"] = dict(evaluator.state.metrics)
    res["state_dict"] = {k: v for k, v in trainer.state_dict().items()
                         if isinstance(v, (int, float))}
    # resume for two more epochs from the saved state
    sd = trainer.state_dict()
    resumed = Engine(step)
    resumed.register_events(*StepEvents)
    resumed.load_state_dict(sd)
    resumed.run(loader, max_epochs=5)
    res["resumed_iteration"] = resumed.state.iteration
    res["weights"] = [model.weight, model.bias]
    return res


def metrics_case():
    """Metrics used on their own (update/compute/reset) and through a MetricsLambda: image
    (PSNR, SSIM), multilabel, binary with thresholds, NLP (BLEU, ROUGE), Average, and the
    Frequency/VariableAccumulation helpers."""
    from ignite.metrics import (PSNR, SSIM, Accuracy, Average, GeometricAverage,
                                MetricsLambda, Precision, Recall, Bleu, Rouge,
                                CosineSimilarity, MultiLabelConfusionMatrix)
    rng = np.random.default_rng(3)
    res = {}
    img = torch.from_numpy(rng.random((4, 3, 24, 24)).astype(np.float32))
    noisy = (img + 0.05 * torch.from_numpy(rng.standard_normal(img.shape).astype(np.float32))
             ).clamp(0, 1)
    psnr, ssim = PSNR(data_range=1.0), SSIM(data_range=1.0)
    for m in (psnr, ssim):
        for i in range(2):
            m.update((noisy[2 * i:2 * i + 2], img[2 * i:2 * i + 2]))
    res["psnr"], res["ssim"] = psnr.compute(), ssim.compute()
    ssim_nog = SSIM(data_range=1.0, kernel_size=7, gaussian=False)
    ssim_nog.update((noisy, img))
    res["ssim_uniform"] = ssim_nog.compute()

    probs = torch.from_numpy(rng.random((30, 4)).astype(np.float32))
    labels = torch.from_numpy((rng.random((30, 4)) < 0.5).astype(np.int64))
    ml_acc = Accuracy(is_multilabel=True)
    ml_acc.update(((probs > 0.5).long(), labels))
    res["multilabel_acc"] = ml_acc.compute()
    mlcm = MultiLabelConfusionMatrix(num_classes=4)
    mlcm.update(((probs > 0.5).long(), labels))
    res["multilabel_cm"] = mlcm.compute()
    p, r = Precision(average=False), Recall(average=False)
    f1 = MetricsLambda(lambda a, b: (2 * a * b / (a + b + 1e-20)).mean(), p, r)
    bp = torch.from_numpy(rng.random(40).astype(np.float32))
    bt = torch.from_numpy((rng.random(40) < 0.5).astype(np.int64))
    for m in (p, r):
        m.update(((bp > 0.4).long(), bt))
    res["binary_f1"] = f1.compute()
    avg, gavg = Average(), GeometricAverage()
    vals = torch.from_numpy(rng.random((6, 3)).astype(np.float32) + 0.5)
    for v in vals:
        avg.update(v)
        gavg.update(v)
    res["average"], res["geometric"] = avg.compute(), gavg.compute()
    cos = CosineSimilarity()
    cos.update((vals[:3], vals[3:]))
    res["cosine"] = cos.compute()
    cand = ["the cat sat on the mat".split(), "a quick brown fox".split()]
    refs = [["the cat is on the mat".split()], ["the quick brown fox jumps".split()]]
    bleu = Bleu(ngram=2, smooth="smooth1")
    bleu.update((cand, refs))
    res["bleu"] = bleu.compute()
    rouge = Rouge(variants=["L", 2], multiref="best")
    rouge.update((cand, refs))
    res["rouge"] = {k: float(v) for k, v in rouge.compute().items()}
    return res


CASES = {"supervised": supervised_case, "custom_engine": custom_engine_case,
         "metrics": metrics_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
