"""pytorch-forecasting, run by tests/as_torch/test_forecasting.py with the real torch and under
``python -m ptcore.as_torch``: a TimeSeriesDataSet from a pandas frame of NumPy series, and a
Temporal Fusion Transformer (quantile loss) and an N-BEATS model built from it, their forward
passes on one batch, two epochs of Lightning training on unshuffled batches, and predictions;
weights from NumPy, dropout 0.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _frame(n_series=3, length=40, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    t = np.arange(length)
    rows = []
    for s in range(n_series):
        y = np.sin(t / 4 + s) + 0.1 * s * t / length + 0.05 * rng.standard_normal(length)
        rows.append(pd.DataFrame({"time_idx": t, "series": str(s), "value": y.astype(np.float32),
                                  "month": (t % 12).astype(str)}))
    return pd.concat(rows, ignore_index=True)


def _fit(model, dataset, epochs=2):
    import lightning.pytorch as pl
    loader = dataset.to_dataloader(train=False, batch_size=16, num_workers=0)
    batch = next(iter(loader))
    model.eval()
    with torch.no_grad():
        first = model(batch[0])["prediction"]
    model.train()
    trainer = pl.Trainer(max_epochs=epochs, accelerator="cpu", logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, gradient_clip_val=0.1)
    trainer.fit(model, train_dataloaders=loader)
    model.eval()
    with torch.no_grad():
        after = model(batch[0])["prediction"]
    return {"first": first, "after": after,
            "loss": trainer.callback_metrics.get("train_loss_epoch",
                                                 trainer.callback_metrics.get("train_loss"))}


def tft_case():
    from pytorch_forecasting import TemporalFusionTransformer, TimeSeriesDataSet
    from pytorch_forecasting.metrics import QuantileLoss
    dataset = TimeSeriesDataSet(
        _frame(), time_idx="time_idx", target="value", group_ids=["series"],
        max_encoder_length=12, max_prediction_length=4, static_categoricals=["series"],
        time_varying_known_categoricals=["month"], time_varying_known_reals=["time_idx"],
        time_varying_unknown_reals=["value"])
    model = TemporalFusionTransformer.from_dataset(
        dataset, hidden_size=8, attention_head_size=2, dropout=0.0, hidden_continuous_size=4,
        loss=QuantileLoss(), learning_rate=0.01)
    fill_normal([p for _, p in sorted(model.named_parameters())], 1, 0.2)
    res = _fit(model, dataset)
    res["n_params"] = sum(p.numel() for p in model.parameters())
    return res


def nbeats_case():
    from pytorch_forecasting import NBeats, TimeSeriesDataSet
    frame = _frame(seed=1)
    dataset = TimeSeriesDataSet(
        frame, time_idx="time_idx", target="value", group_ids=["series"],
        max_encoder_length=16, max_prediction_length=4, time_varying_unknown_reals=["value"])
    model = NBeats.from_dataset(dataset, widths=[16, 16], backcast_loss_ratio=0.1,
                                dropout=0.0, learning_rate=0.01)
    fill_normal([p for _, p in sorted(model.named_parameters())], 2, 0.2)
    return _fit(model, dataset)


if __name__ == "__main__":
    main({"tft": tft_case, "nbeats": nbeats_case}, sys.argv)
