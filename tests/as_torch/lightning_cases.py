"""One PyTorch Lightning program, run by tests/as_torch/test_lightning.py twice: with the real
torch and under ``python -m ptcore.as_torch`` (where ``import torch`` is ptcore).  It writes
what it computed to ``<out>/results.json`` and leaves its checkpoints and logs in ``<out>``.

The program uses what Lightning users use: a LightningDataModule, ``self.log`` with
``on_step``/``on_epoch``, AdamW with a cosine schedule per epoch, gradient clipping and
accumulation, ModelCheckpoint (top-k on a monitored value, and ``last``), EarlyStopping,
LearningRateMonitor, CSV and TensorBoard loggers, the simple profiler, ``test`` from the best
checkpoint, ``predict`` from the last, ``load_from_checkpoint`` with saved hyperparameters,
bf16-mixed precision on the CPU, and a Fabric loop with ``fabric.save``/``fabric.load``.
Weights and data come from NumPy, so both libraries start from the same numbers.
"""
import json
import os
import sys
import warnings

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
import pytorch_lightning as pl  # noqa: E402
from lightning_fabric import Fabric  # noqa: E402
from pytorch_lightning.callbacks import (EarlyStopping, LearningRateMonitor,  # noqa: E402
                                         ModelCheckpoint)
from pytorch_lightning.loggers import CSVLogger, TensorBoardLogger  # noqa: E402

rng = np.random.default_rng(0)
X = torch.tensor(rng.standard_normal((256, 10)), dtype=torch.float32)
Y = torch.tensor(rng.integers(0, 3, 256))


class Data(pl.LightningDataModule):
    def setup(self, stage=None):
        self.ds = TensorDataset(X, Y)

    def train_dataloader(self):
        return DataLoader(self.ds, batch_size=32)

    def val_dataloader(self):
        return DataLoader(self.ds, batch_size=64)

    def test_dataloader(self):
        return DataLoader(self.ds, batch_size=64)


class Classifier(pl.LightningModule):
    def __init__(self, lr=1e-2, hidden=16):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(10, hidden), nn.LayerNorm(hidden), nn.GELU(),
                                 nn.Dropout(0.0), nn.Linear(hidden, 3))
        r = np.random.default_rng(1)
        with torch.no_grad():
            for p in self.net.parameters():
                p.copy_(torch.tensor(r.standard_normal(tuple(p.shape)) * 0.3,
                                     dtype=torch.float32))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, i):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        logits = self(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y), prog_bar=True)
        self.log("val_acc", (logits.argmax(-1) == y).float().mean())

    def test_step(self, batch, i):
        x, y = batch
        self.log("test_loss", nn.functional.cross_entropy(self(x), y))

    def predict_step(self, batch, i, dataloader_idx=0):
        return self(batch[0]).softmax(-1)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        return [opt], [{"scheduler": sched, "interval": "epoch"}]


def main(out):
    res = {"torch": "ptcore" if "ptcore" in sys.modules else "torch",
           "torch_version_ge_2_4": __import__("lightning_utilities.core.imports", fromlist=["x"])
           .compare_version("torch", __import__("operator").ge, "2.4.0")}
    pl.seed_everything(0, workers=True)
    ckpt = ModelCheckpoint(dirpath=os.path.join(out, "ck"), monitor="val_loss", save_top_k=2,
                           save_last=True)
    trainer = pl.Trainer(max_epochs=4, enable_progress_bar=False, deterministic=True,
                         accelerator="cpu", gradient_clip_val=0.5, accumulate_grad_batches=2,
                         default_root_dir=out, logger=[CSVLogger(out), TensorBoardLogger(out)],
                         callbacks=[ckpt, EarlyStopping("val_loss", patience=3),
                                    LearningRateMonitor()],
                         enable_model_summary=True, profiler="simple")
    data = Data()
    trainer.fit(Classifier(), datamodule=data)
    res["fit"] = {k: float(v) for k, v in sorted(trainer.callback_metrics.items())}
    res["test"] = trainer.test(ckpt_path="best", datamodule=data, verbose=False)
    preds = trainer.predict(ckpt_path="last",
                            dataloaders=DataLoader(TensorDataset(X[:6]), batch_size=3))
    res["predict"] = torch.cat(preds).tolist()
    best = Classifier.load_from_checkpoint(ckpt.best_model_path)
    res["hparams"] = dict(best.hparams)
    res["best"] = [os.path.basename(ckpt.best_model_path), float(ckpt.best_model_score)]
    res["best_weights"] = {k: v.tolist() for k, v in best.state_dict().items()}
    last = torch.load(ckpt.last_model_path, weights_only=True)
    res["last"] = {"keys": sorted(last), "epoch": last["epoch"],
                   "global_step": last["global_step"]}
    with open(os.path.join(out, "lightning_logs", "version_0", "metrics.csv")) as f:
        res["csv_header"] = sorted(f.readline().strip().split(","))

    bf16 = pl.Trainer(max_epochs=1, enable_progress_bar=False, logger=False,
                      enable_checkpointing=False, precision="bf16-mixed", accelerator="cpu",
                      limit_train_batches=3, limit_val_batches=1, enable_model_summary=False)
    bf16.fit(Classifier(), datamodule=data)
    res["bf16_train_loss"] = float(bf16.callback_metrics["train_loss"])

    fabric = Fabric(accelerator="cpu", devices=1)
    fabric.launch()
    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, opt = fabric.setup(model, opt)
    loader = fabric.setup_dataloaders(DataLoader(TensorDataset(X, Y), batch_size=64))
    losses = []
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        fabric.backward(loss)
        opt.step()
        losses.append(float(loss))
    res["fabric_losses"] = losses
    fabric.save(os.path.join(out, "fabric.ckpt"), {"model": model, "opt": opt, "step": 4})
    state = {"model": model, "opt": opt}
    rest = fabric.load(os.path.join(out, "fabric.ckpt"), state)
    res["fabric_load_rest"] = rest
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1])
