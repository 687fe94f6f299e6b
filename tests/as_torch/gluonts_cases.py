"""GluonTS's PyTorch models, run by tests/as_torch/test_gluonts.py with the real torch and
under ``python -m ptcore.as_torch``: a SimpleFeedForward model with Student-t and normal
outputs and a DeepAR model (lagged LSTM, static categorical embedding, mean scaling), their
distribution parameters, negative log-likelihood losses and gradients, Adam steps, the
output distributions' means, variances and log-probabilities, and DeepAR's lagged-RNN unroll;
data and weights from NumPy, dropout 0.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")

CONTEXT, HORIZON, BATCH = 12, 4, 6


def _series(seed, length):
    rng = np.random.default_rng(seed)
    t = np.arange(length)
    y = 5 + np.sin(t / 3)[None] + 0.2 * rng.standard_normal((BATCH, length))
    return torch.from_numpy(y.astype(np.float32))


def _steps(model, loss_fn, steps=3):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def feedforward_case():
    from gluonts.torch.distributions import NormalOutput, StudentTOutput
    from gluonts.torch.model.simple_feedforward import SimpleFeedForwardModel
    past, future = _series(0, CONTEXT), _series(1, HORIZON)
    observed = torch.ones_like(future)
    observed[0, -1] = 0
    res = {}
    for i, (name, out) in enumerate({"student_t": StudentTOutput(),
                                     "normal": NormalOutput()}.items()):
        model = SimpleFeedForwardModel(prediction_length=HORIZON, context_length=CONTEXT,
                                       hidden_dimensions=[16, 16], distr_output=out)
        fill_normal([p for _, p in sorted(model.named_parameters())], 10 + i, 0.2)
        distr_args, loc, scale = model(past)
        distr = out.distribution(distr_args, loc, scale)
        loss = model.loss(past, future, observed).mean()
        loss.backward()
        r = {"args": list(distr_args), "loc": loc, "scale": scale, "mean": distr.mean,
             "variance": distr.variance, "log_prob": distr.log_prob(future), "loss": loss,
             "grads": [p.grad for _, p in sorted(model.named_parameters())][:4]}
        model.zero_grad()
        r["losses"] = _steps(model, lambda: model.loss(past, future, observed).mean())
        res[name] = r
    return res


def deepar_case():
    from gluonts.torch.model.deepar import DeepARModel
    model = DeepARModel(freq="D", context_length=CONTEXT, prediction_length=HORIZON,
                        num_feat_dynamic_real=1, num_feat_static_real=1, num_feat_static_cat=1,
                        cardinality=[3], embedding_dimension=[2], num_layers=2, hidden_size=8,
                        dropout_rate=0.0, lags_seq=[1, 2, 3])
    fill_normal([p for _, p in sorted(model.named_parameters())], 20, 0.2)
    past_len = model._past_length
    rng = np.random.default_rng(21)
    inputs = {
        "feat_static_cat": torch.from_numpy(rng.integers(0, 3, (BATCH, 1))),
        "feat_static_real": torch.from_numpy(rng.random((BATCH, 1)).astype(np.float32)),
        "past_time_feat": torch.from_numpy(rng.random((BATCH, past_len, 1)).astype(np.float32)),
        "past_target": _series(22, past_len),
        "past_observed_values": torch.ones(BATCH, past_len),
        "future_time_feat": torch.from_numpy(rng.random((BATCH, HORIZON, 1)).astype(np.float32)),
        "future_target": _series(23, HORIZON),
        "future_observed_values": torch.ones(BATCH, HORIZON)}
    loss = model.loss(**inputs).mean()
    loss.backward()
    res = {"loss": loss, "past_length": past_len,
           "grads": [p.grad for _, p in sorted(model.named_parameters())][:6]}
    model.zero_grad()
    with torch.no_grad():
        unrolled = model.unroll_lagged_rnn(
            inputs["feat_static_cat"], inputs["feat_static_real"], inputs["past_time_feat"],
            inputs["past_target"], inputs["past_observed_values"],
            inputs["future_time_feat"], inputs["future_target"])
    res["unroll"] = {"params": list(unrolled[0]), "scale": unrolled[1],
                     "output": unrolled[2]}
    res["losses"] = _steps(model, lambda: model.loss(**inputs).mean())
    return res


if __name__ == "__main__":
    main({"feedforward": feedforward_case, "deepar": deepar_case}, sys.argv)
