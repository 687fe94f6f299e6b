"""skorch, run by tests/as_torch/test_skorch.py with the real torch and under
``python -m ptcore.as_torch``: scikit-learn estimators wrapping PyTorch modules whose
weights come from NumPy (the module fills them in ``__init__``, so every initialisation,
cloned estimators' too, is the same in both runs), on scikit-learn's deterministic data sets
(no shuffling: skorch's default).  Each case writes what it computed to
``<out>/<case>.json``.
"""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


class MLP(torch.nn.Module):
    def __init__(self, n_in=10, hidden=16, n_out=3, seed=0):
        super().__init__()
        self.l1 = torch.nn.Linear(n_in, hidden)
        self.l2 = torch.nn.Linear(hidden, n_out)
        rng = np.random.default_rng(seed)
        with torch.no_grad():
            for p in self.parameters():
                fan_in = p.shape[-1] if p.dim() > 1 else hidden
                p.copy_(torch.from_numpy((rng.standard_normal(p.shape) / np.sqrt(fan_in))
                                         .astype(np.float32)))

    def forward(self, X):
        return self.l2(torch.tanh(self.l1(X)))


class MLPProba(MLP):
    def forward(self, X):
        return torch.softmax(super().forward(X), -1)


def _history(net, keys):
    return {k: net.history[:, k] for k in keys}


def classifier_case():
    from sklearn.datasets import make_classification
    from skorch import NeuralNetClassifier
    X, y = make_classification(200, 10, n_informative=6, n_classes=3, random_state=0)
    X, y = X.astype(np.float32), y.astype(np.int64)
    net = NeuralNetClassifier(MLPProba, max_epochs=6, lr=0.1, batch_size=32,
                              optimizer=torch.optim.SGD, optimizer__momentum=0.9,
                              verbose=0)
    net.fit(X, y)
    res = _history(net, ["train_loss", "valid_loss", "valid_acc"])
    res.update(proba=net.predict_proba(X[:20]), pred=net.predict(X[:20]).tolist(),
               score=net.score(X, y), forward=net.forward(X[:5]),
               weights=dict(net.module_.state_dict()))
    # the criterion that takes logits, and a partial fit continuing from the weights
    net2 = NeuralNetClassifier(MLP, criterion=torch.nn.CrossEntropyLoss, max_epochs=3,
                               lr=0.01, optimizer=torch.optim.Adam, train_split=None,
                               verbose=0)
    net2.fit(X, y)
    net2.partial_fit(X, y, epochs=2)
    res["logit_train_loss"] = net2.history[:, "train_loss"]
    res["logit_proba"] = net2.predict_proba(X[:10])
    return res


def regressor_callbacks_case():
    """A regressor with callbacks: LR scheduler, gradient clipping, checkpointing of the best
    validation loss and loading it back, early stopping."""
    from sklearn.datasets import make_regression
    from skorch import NeuralNetRegressor
    from skorch.callbacks import (Checkpoint, EarlyStopping, EpochScoring,
                                  GradientNormClipping, LRScheduler)
    X, y = make_regression(160, 10, noise=5.0, random_state=1)
    X = X.astype(np.float32)
    y = (y / y.std()).astype(np.float32).reshape(-1, 1)
    with tempfile.TemporaryDirectory() as d:
        cp = Checkpoint(dirname=d, monitor="valid_loss_best")
        net = NeuralNetRegressor(
            MLP, module__n_out=1, module__seed=3, max_epochs=12, lr=0.05,
            optimizer=torch.optim.SGD, batch_size=40, verbose=0,
            callbacks=[LRScheduler("StepLR", step_size=3, gamma=0.5),
                       GradientNormClipping(1.0), cp,
                       EpochScoring("r2", lower_is_better=False),
                       EarlyStopping(patience=4)])
        net.fit(X, y)
        files = sorted(os.listdir(d))
        last = net.predict(X[:8])
        net.load_params(checkpoint=cp)
        best = net.predict(X[:8])
    res = _history(net, ["train_loss", "valid_loss", "r2", "epoch"])
    res["event_lr"] = [float(v) for v in net.history[:, "event_lr"]] \
        if "event_lr" in net.history[-1] else None
    res.update(files=files, last=last, best=best)
    return res


def sklearn_case():
    """skorch inside scikit-learn: a Pipeline with a scaler, cross_val_score and a small
    GridSearchCV over the learning rate (clones re-initialise: same weights by construction)."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from skorch import NeuralNetClassifier
    from skorch.helper import predefined_split
    from skorch.dataset import Dataset
    X, y = make_classification(120, 10, n_informative=5, n_classes=3, random_state=2)
    X, y = X.astype(np.float32), y.astype(np.int64)
    pipe = Pipeline([("scale", StandardScaler()),
                     ("net", NeuralNetClassifier(MLPProba, max_epochs=4, lr=0.2,
                                                 train_split=None, verbose=0))])
    scores = cross_val_score(pipe, X, y, cv=3, scoring="accuracy")
    pipe.fit(X, y)
    gs = GridSearchCV(NeuralNetClassifier(MLPProba, max_epochs=3, train_split=None,
                                          verbose=0), {"lr": [0.05, 0.3]}, cv=2,
                      scoring="neg_log_loss", refit=True)
    gs.fit(X, y)
    valid = Dataset(X[:30], y[:30])
    net = NeuralNetClassifier(MLPProba, max_epochs=3, lr=0.1, verbose=0,
                              train_split=predefined_split(valid))
    net.fit(X[30:], y[30:])
    return {"cv_scores": scores.tolist(), "pipe_proba": pipe.predict_proba(X[:10]),
            "gs_scores": gs.cv_results_["mean_test_score"].tolist(),
            "gs_best": gs.best_params_["lr"],
            "predefined_valid_loss": net.history[:, "valid_loss"]}


CASES = {"classifier": classifier_case, "regressor_callbacks": regressor_callbacks_case,
         "sklearn": sklearn_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
