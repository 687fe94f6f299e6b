"""Sparse attention, structured prediction and optimal-transport libraries (entmax,
pytorch-tabnet, pytorch-crf, geomloss), run by tests/as_torch/test_structured_libraries.py
with the real torch and under ``python -m ptcore.as_torch``: sparse probability maps and their
custom autograd functions, a TabNet classifier fitted through the library's trainer, a CRF's
likelihood and Viterbi decoding, Sinkhorn divergences and kernel losses between point clouds;
weights and data from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor, values_and_grads

warnings.filterwarnings("ignore")


_x = normal_tensor


def entmax_case():
    """sparsemax, entmax15 (sorting and top-k), entmax_bisect with a per-row alpha,
    normmax_bisect, their modules and losses, with gradients."""
    import entmax
    x0 = _x(1, (4, 7)) * 2
    target = torch.tensor([0, 3, 6, 2])
    alpha = torch.tensor([[1.2], [1.5], [2.0], [1.8]], requires_grad=True)
    fns = {"sparsemax": lambda x: entmax.sparsemax(x, dim=-1),
           "sparsemax_k": lambda x: entmax.sparsemax(x, dim=-1, k=3),
           "entmax15": lambda x: entmax.entmax15(x, dim=0),
           "entmax15_k": lambda x: entmax.entmax15(x, dim=-1, k=2),
           "bisect": lambda x: entmax.entmax_bisect(x, alpha, dim=-1, n_iter=40),
           "normmax": lambda x: entmax.normmax_bisect(x, alpha=2, dim=-1, n_iter=40),
           "module": entmax.Entmax15(dim=-1)}
    w = _x(2, (4, 7))
    res = {}
    for name, fn in fns.items():
        x = x0.clone().requires_grad_()
        p = fn(x)
        (p * w).sum().backward()
        res[name] = {"p": p, "grad": x.grad}
    res["alpha_grad"] = alpha.grad
    res.update(values_and_grads({"sparsemax_loss": entmax.SparsemaxLoss(),
                                 "entmax15_loss": entmax.Entmax15Loss(k=3),
                                 "bisect_loss": entmax.EntmaxBisectLoss(alpha=1.3, n_iter=40)},
                                x0, target))
    return res


def tabnet_case():
    """pytorch-tabnet: TabNetClassifier.fit (ghost batch norm over one virtual batch,
    sparsemax and entmax masks) for three epochs from NumPy weights set by a callback, its
    predictions, masks and feature importances; a TabNet network's regression step."""
    from pytorch_tabnet.callbacks import Callback
    from pytorch_tabnet.tab_model import TabNetClassifier
    from pytorch_tabnet.tab_network import TabNet
    from pytorch_tabnet.utils import create_group_matrix

    class FillWeights(Callback):
        def on_train_begin(self, logs=None):
            fill_normal([t for _, t in sorted(self.trainer.network.state_dict().items())
                         if t.dtype.is_floating_point and t.dim() > 0], 3, 0.3)
            for mod in self.trainer.network.modules():
                if isinstance(mod, torch.nn.BatchNorm1d):
                    mod.running_var.abs_().add_(0.5)

    rng = np.random.default_rng(4)
    X = rng.standard_normal((64, 6)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 3] > 0).astype(np.int64) + (X[:, 1] > 1).astype(np.int64)
    res = {}
    for mask in ("sparsemax", "entmax"):
        clf = TabNetClassifier(n_d=4, n_a=4, n_steps=2, mask_type=mask, verbose=0, seed=0,
                               optimizer_params={"lr": 0.02})
        clf.fit(X, y, max_epochs=3, batch_size=64, virtual_batch_size=64, drop_last=False,
                callbacks=[FillWeights()], patience=0)
        explain, masks = clf.explain(X[:5])
        res[mask] = {"loss": clf.history["loss"], "proba": clf.predict_proba(X[:8]),
                     "pred": clf.predict(X[:8]).astype(np.int64),
                     "importances": clf.feature_importances_, "explain": explain,
                     "masks": [masks[i] for i in sorted(masks)]}
    net = TabNet(6, 2, n_d=4, n_a=4, n_steps=3, cat_idxs=[5], cat_dims=[4], cat_emb_dim=[2],
                 virtual_batch_size=8, mask_type="sparsemax",
                 group_attention_matrix=create_group_matrix([[0, 1]], 6))
    fill_normal([t for _, t in sorted(net.state_dict().items())
                 if t.dtype.is_floating_point and t.dim() > 0], 5, 0.3)
    xb = torch.from_numpy(X[:16].copy())
    xb[:, 5] = torch.from_numpy(np.arange(16) % 4).float()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        out, m_loss = net(xb)
        loss = out.pow(2).mean() - 1e-3 * m_loss
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["net"] = {"losses": losses, "m_loss": m_loss.detach(), "out": out.detach()}
    return res


def crf_case():
    """pytorch-crf: log-likelihood with a mask (sum, mean, token_mean), Viterbi decoding,
    a BiLSTM-free emission layer trained three steps."""
    from torchcrf import CRF
    crf = CRF(5, batch_first=True)
    fill_normal([crf.start_transitions, crf.end_transitions, crf.transitions], 6, 0.5)
    emis = _x(7, (3, 8, 5)).requires_grad_()
    tags = torch.from_numpy(np.random.default_rng(8).integers(0, 5, (3, 8)))
    mask = torch.ones(3, 8, dtype=torch.bool)
    mask[1, 5:] = False
    mask[2, 3:] = False
    res = {r: crf(emis, tags, mask=mask, reduction=r) for r in ("sum", "mean", "token_mean")}
    res["none"] = crf(emis, tags, mask=mask, reduction="none")
    res["sum"].backward()
    res["grad"] = emis.grad
    res["decode"] = crf.decode(emis.detach(), mask=mask)
    lin = torch.nn.Linear(4, 5)
    fill_normal([lin.weight, lin.bias], 9, 0.5)
    feats = _x(10, (3, 8, 4))
    opt = torch.optim.SGD(list(lin.parameters()) + list(crf.parameters()), lr=0.05)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = -crf(lin(feats), tags, mask=mask, reduction="mean")
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["train"] = losses
    res["decode_trained"] = crf.decode(lin(feats).detach(), mask=mask)
    return res


def geomloss_case():
    """geomloss: Sinkhorn divergences (debiased, unbalanced, with weights), energy, Gaussian
    and Laplacian MMDs between point clouds, with gradients of the
    points; a point cloud moved three steps by the Sinkhorn gradient."""
    from geomloss import SamplesLoss
    x0, y = _x(11, (30, 2)), _x(12, (25, 2)) + 1.0
    a = torch.from_numpy(np.random.default_rng(13).random(30).astype(np.float32))
    a = a / a.sum()
    losses = {"sinkhorn": SamplesLoss("sinkhorn", p=2, blur=0.1, backend="tensorized"),
              "sinkhorn_p1": SamplesLoss("sinkhorn", p=1, blur=0.2, backend="tensorized"),
              "unbalanced": SamplesLoss("sinkhorn", p=2, blur=0.1, reach=1.0,
                                        backend="tensorized"),
              "energy": SamplesLoss("energy", backend="tensorized"),
              "gaussian": SamplesLoss("gaussian", blur=0.5, backend="tensorized"),
              "laplacian": SamplesLoss("laplacian", blur=0.5, backend="tensorized")}
    res = values_and_grads(losses, x0, y)
    x = x0.clone().requires_grad_()
    val = losses["sinkhorn"](a, x, torch.full((25,), 1 / 25.0), y)
    val.backward()
    res["weighted"] = {"value": val, "grad": x.grad}
    x = x0.clone().requires_grad_()
    traj = []
    for _ in range(3):
        val = losses["sinkhorn"](x, y)
        (g,) = torch.autograd.grad(val, [x])
        x = (x - 5.0 * g).detach().requires_grad_()
        traj.append(val.item())
    res["flow"] = {"trajectory": traj, "x": x.detach()}
    return res


CASES = {"entmax": entmax_case, "tabnet": tabnet_case, "crf": crf_case,
         "geomloss": geomloss_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
