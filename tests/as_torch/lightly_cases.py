"""lightly (self-supervised learning), run by tests/as_torch/test_lightly.py with the real
torch and under ``python -m ptcore.as_torch``: the contrastive and non-contrastive losses on
NumPy embeddings with their gradients (NT-Xent with and without a memory bank, DCL, Barlow
Twins, VICReg, negative cosine similarity, DINO, SwaV, TiCo, MMCR, MACL, FroSSL, EMP-SSL,
KoLeo),
the projection and prediction heads in a SimCLR/BYOL/SimSiam step trained with SGD, the
momentum update and ``deactivate_requires_grad``.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def losses_case():
    from lightly import loss as L
    a0, b0 = _x(0, (8, 16)), _x(1, (8, 16))
    fns = {
        "ntxent": lambda a, b: L.NTXentLoss(temperature=0.5)(a, b),
        "ntxent_memory": lambda a, b: _memory_ntxent(L, a, b),
        "dcl": lambda a, b: L.DCLLoss(temperature=0.2)(a, b),
        "dclw": lambda a, b: L.DCLWLoss(temperature=0.2, sigma=0.5)(a, b),
        "barlow": lambda a, b: L.BarlowTwinsLoss(lambda_param=5e-3)(a, b),
        "vicreg": lambda a, b: L.VICRegLoss()(a, b),
        "negcos": lambda a, b: L.NegativeCosineSimilarity()(a, b),
        "tico": lambda a, b: L.TiCoLoss()(a, b),
        "macl": lambda a, b: L.MACLLoss()(a, b),
        "frossl": lambda a, b: L.FroSSLLoss()([a, b]),
        "emp_ssl": lambda a, b: L.EMPSSLLoss()([a, b]),
        "koleo": lambda a, b: L.KoLeoLoss()(a) + 0 * b.sum(),
        "mmcr": lambda a, b: L.MMCRLoss()(a.reshape(4, 2, 16), b.reshape(4, 2, 16)),
        "dino": lambda a, b: _dino(L, a, b),
        "swav": lambda a, b: L.SwaVLoss(sinkhorn_epsilon=0.05)(
            [a.softmax(-1), b.softmax(-1)], [], None),
    }
    res = {}
    for name, fn in fns.items():
        a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
        val = fn(a, b)
        val.backward()
        res[name] = {"value": val, "grad_a": a.grad, "grad_b": b.grad}
    return res


def _memory_ntxent(L, a, b):
    loss = L.NTXentLoss(temperature=0.5, memory_bank_size=(32, 16))
    fill_normal([loss.memory_bank.bank], 3, 1.0)
    loss.memory_bank.bank.copy_(torch.nn.functional.normalize(loss.memory_bank.bank, dim=0))
    return loss(a, b)


def _dino(L, a, b):
    loss = L.DINOLoss(output_dim=16, warmup_teacher_temp_epochs=2)
    return loss([a.detach()], [b, a], epoch=1)


def heads_case():
    """SimCLR, BYOL and SimSiam heads on a small backbone, SGD steps, momentum update."""
    import copy
    from lightly.loss import NegativeCosineSimilarity, NTXentLoss
    from lightly.models.modules import (BYOLPredictionHead, BYOLProjectionHead,
                                        SimCLRProjectionHead, SimSiamPredictionHead,
                                        SimSiamProjectionHead)
    from lightly.models.utils import deactivate_requires_grad, update_momentum
    from lightly.utils.scheduler import cosine_schedule
    backbone = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU())
    heads = {"simclr": SimCLRProjectionHead(32, 32, 16),
             "byol_proj": BYOLProjectionHead(32, 32, 16),
             "byol_pred": BYOLPredictionHead(16, 32, 16),
             "simsiam_proj": SimSiamProjectionHead(32, 32, 16),
             "simsiam_pred": SimSiamPredictionHead(16, 8, 16)}
    model = torch.nn.ModuleDict({"backbone": backbone, **heads})
    fill_normal([p for _, p in sorted(model.named_parameters())], 4, 0.2)
    x0, x1 = _x(5, (8, 12)), _x(6, (8, 12))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    ntxent, negcos = NTXentLoss(), NegativeCosineSimilarity()
    teacher_backbone = copy.deepcopy(backbone)
    teacher_proj = copy.deepcopy(model["byol_proj"])
    deactivate_requires_grad(teacher_backbone)
    deactivate_requires_grad(teacher_proj)
    losses = []
    for step in range(3):
        opt.zero_grad()
        h0, h1 = backbone(x0), backbone(x1)
        simclr = ntxent(model["simclr"](h0), model["simclr"](h1))
        p0 = model["byol_pred"](model["byol_proj"](h0))
        with torch.no_grad():
            t1 = teacher_proj(teacher_backbone(x1))
        byol = negcos(p0, t1)
        z0 = model["simsiam_proj"](h0)
        z1 = model["simsiam_proj"](h1)
        simsiam = 0.5 * (negcos(model["simsiam_pred"](z0), z1.detach())
                         + negcos(model["simsiam_pred"](z1), z0.detach()))
        total = simclr + byol + simsiam
        total.backward()
        opt.step()
        m = cosine_schedule(step, 3, 0.9, 1.0)
        update_momentum(backbone, teacher_backbone, m=m)
        update_momentum(model["byol_proj"], teacher_proj, m=m)
        losses.append([simclr.item(), byol.item(), simsiam.item(), m])
    model.eval()
    with torch.no_grad():
        h = backbone(x0)
        out = {name: head(h if "pred" not in name else model[name.replace("pred", "proj")](h))
               for name, head in heads.items()}
    return {"losses": losses, "eval": out,
            "teacher": [p for _, p in sorted(teacher_backbone.named_parameters())],
            "teacher_requires_grad": [p.requires_grad for p in teacher_proj.parameters()]}


if __name__ == "__main__":
    main({"losses": losses_case, "heads": heads_case}, sys.argv)
