"""Optimization, clustering, invertible networks and tabular deep learning (pytorch-minimize,
fast-pytorch-kmeans, FrEIA, rtdl-revisiting-models), run by
tests/as_torch/test_numerics_libraries.py with the real torch and under
``python -m ptcore.as_torch``: torchmin's minimizers (BFGS, L-BFGS, CG, Newton-CG, exact
Newton, the trust-region methods, which use Hessian-vector products through double
backward, eigendecompositions and Cholesky factorizations), nonlinear least squares
(trust-region reflective, LSMR and exact) and the Minimizer optimizer on a module; k-means in
Euclidean and cosine modes from given centroids; FrEIA's invertible networks (all-in-one,
GLOW, RealNVP and NICE couplings, permutations, a conditional graph network): forward,
log-Jacobian determinants, inverses, one training step; and RTDL's MLP, ResNet and
FT-Transformer (numerical and categorical embeddings) trained a few steps.  Weights and
data from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor, optimizer_steps

warnings.filterwarnings("ignore")


_x = normal_tensor


def minimize_case():
    """Each of torchmin's methods on the Rosenbrock function from one start (the minimizer,
    the value, the iteration count), least squares, and the Minimizer optimizer
    fitting a small regression module."""
    from torchmin import least_squares, minimize
    from torchmin.benchmarks import rosen
    from torchmin.optim import Minimizer
    x0 = torch.tensor([-1.2, 1.0, -0.5, 0.8], dtype=torch.float64)
    res = {}
    for method in ["bfgs", "l-bfgs", "cg", "newton-cg", "newton-exact", "trust-ncg",
                   "trust-exact"]:
        r = minimize(rosen, x0, method=method, max_iter=60)
        res[method] = {"x": r.x, "fun": r.fun, "nit": int(r.nit)}
    # dogleg needs a positive-definite Hessian: on Rosenbrock's start it raises
    try:
        minimize(rosen, x0, method="dogleg")
        res["dogleg_error"] = None
    except torch.linalg.LinAlgError as exc:
        res["dogleg_error"] = str(exc).split(":")[0]
    A = torch.tensor([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], dtype=torch.float64)
    r = minimize(lambda v: 0.5 * v @ A @ v + (v ** 4).sum() - v.sum(),
                 torch.ones(3, dtype=torch.float64), method="dogleg")
    res["dogleg"] = {"x": r.x, "fun": r.fun, "nit": int(r.nit)}
    t = torch.linspace(0, 3, 20, dtype=torch.float64)
    y = 2.5 * torch.exp(-1.3 * t) + 0.4 + 0.01 * _x(40, (20,), dtype=np.float64)

    def resid(p):
        return p[0] * torch.exp(-p[1] * t) + p[2] - y
    p0 = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    ls = least_squares(resid, p0)
    lsq = least_squares(resid, p0, tr_solver="exact")
    res["least_squares"] = {"x": ls.x, "cost": ls.cost, "nfev": ls.nfev, "exact": lsq.x}
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    fill_normal(list(model.parameters()), seed=41, scale=0.5)
    xs, ys = _x(42, (16, 3)), _x(43, (16, 1))
    opt = Minimizer(model.parameters(), method="bfgs", max_iter=20)

    def closure():
        opt.zero_grad()
        return torch.nn.functional.mse_loss(model(xs), ys)
    loss = opt.step(closure)
    res["minimizer"] = {"loss": loss, "weights": [p.detach() for p in model.parameters()]}
    return res


def kmeans_case():
    """K-means (Euclidean and cosine, full batch) from given centroids: the labels, the
    centroids and predictions on new points; the batched MultiKMeans."""
    from fast_pytorch_kmeans import KMeans, MultiKMeans
    centers = torch.tensor([[0.0, 0.0], [4.0, 4.0], [-4.0, 3.0]])
    X = (centers.repeat_interleave(20, 0) + _x(50, (60, 2))).contiguous()
    res = {}
    for mode in ["euclidean", "cosine"]:
        km = KMeans(n_clusters=3, mode=mode, max_iter=20, verbose=0)
        labels = km.fit_predict(X, centroids=X[[0, 25, 45]].clone())
        res[mode] = {"labels": labels, "centroids": km.centroids,
                     "predict": km.predict(_x(51, (5, 2)) * 3)}
    mk = MultiKMeans(n_clusters=3, mode="euclidean", max_iter=20, verbose=0)
    Xb = torch.stack([X, X.flip(0)])
    labels = mk.fit_predict(Xb, centroids=Xb[:, [0, 25, 45]].clone())
    res["multi"] = {"labels": labels, "centroids": mk.centroids}
    return res


def freia_case():
    """Invertible networks: SequenceINNs of coupling blocks and fixed permutations, their
    outputs, log-Jacobian determinants and inverses (which must give the input back), a
    conditional GraphINN, and one Adam step on the maximum-likelihood loss."""
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    def subnet(c_in, c_out):
        return torch.nn.Sequential(torch.nn.Linear(c_in, 16), torch.nn.ReLU(),
                                   torch.nn.Linear(16, c_out))
    res = {}
    x = _x(60, (8, 6))
    blocks = {"all_in_one": (Fm.AllInOneBlock, dict(subnet_constructor=subnet,
                                                      affine_clamping=2.0,
                                                      permute_soft=True)),
              "glow": (Fm.GLOWCouplingBlock, dict(subnet_constructor=subnet, clamp=2.0)),
              "rnvp": (Fm.RNVPCouplingBlock, dict(subnet_constructor=subnet, clamp=2.0)),
              "nice": (Fm.NICECouplingBlock, dict(subnet_constructor=subnet)),
              "gin": (Fm.GINCouplingBlock, dict(subnet_constructor=subnet)),
              "affine": (Fm.AffineCouplingOneSided, dict(subnet_constructor=subnet))}
    for name, (block, kw) in blocks.items():
        np.random.seed(0)
        inn = Ff.SequenceINN(6)
        for k in range(2):
            inn.append(block, **kw)
            inn.append(Fm.PermuteRandom, seed=k)
        # (the fixed permutations come from NumPy's generator, seeded by FrEIA or here)
        fill_normal([p for p in inn.parameters() if p.requires_grad], seed=61, scale=0.3)
        z, logj = inn(x)
        x_back, logj_inv = inn(z, rev=True)
        opt = torch.optim.Adam(inn.parameters(), lr=1e-2)
        loss = 0.5 * (z ** 2).sum(1).mean() - torch.as_tensor(logj).mean()  # (NICE: 0.)
        loss.backward()
        opt.step()
        res[name] = {"z": z, "logj": logj, "x_back": x_back, "logj_inv": logj_inv,
                     "loss": loss}
    nodes = [Ff.InputNode(4, name="in")]
    cond = Ff.ConditionNode(3, name="cond")
    nodes.append(Ff.Node(nodes[-1], Fm.GLOWCouplingBlock,
                         {"subnet_constructor": subnet, "clamp": 1.5}, conditions=cond))
    nodes.append(Ff.Node(nodes[-1], Fm.ActNorm, {}))
    nodes.append(Ff.OutputNode(nodes[-1]))
    graph = Ff.GraphINN(nodes + [cond])
    fill_normal(list(graph.parameters()), seed=64, scale=0.3)
    xc, c = _x(65, (5, 4)), _x(66, (5, 3))
    z, logj = graph(xc, c=[c])
    back, _ = graph(z, c=[c], rev=True)
    res["graph"] = {"z": z, "logj": logj, "back": back}
    return res


def rtdl_case():
    """RTDL's MLP and ResNet trained three SGD steps, the FT-Transformer (numerical and
    categorical embeddings) three AdamW steps with the library's parameter groups; outputs
    before and after."""
    import rtdl_revisiting_models as rtdl
    x = _x(70, (12, 5))
    cat = torch.from_numpy(np.random.default_rng(71).integers(0, 3, (12, 2)))
    y = _x(72, (12, 1))
    res = {}
    models = {"mlp": rtdl.MLP(d_in=5, d_out=1, n_blocks=2, d_block=16, dropout=0.0),
              "resnet": rtdl.ResNet(d_in=5, d_out=1, n_blocks=2, d_block=16,
                                    d_hidden=None, d_hidden_multiplier=2.0, dropout1=0.0,
                                    dropout2=0.0)}
    for name, m in models.items():
        fill_normal(list(m.parameters()), seed=73, scale=0.3)
        before = m(x)
        # (SGD: the ResNet's linear layers before batch norm get gradients that are 0 but
        # for rounding, which Adam would scale up to whole steps of either sign)
        losses = optimizer_steps(torch.optim.SGD(m.parameters(), lr=0.05), m,
                                 torch.nn.functional.mse_loss, x, y)
        res[name] = {"before": before, "losses": losses, "after": m(x)}
    kw = rtdl.FTTransformer.get_default_kwargs(n_blocks=2)
    kw.update(d_block=16, attention_n_heads=4, attention_dropout=0.0, ffn_dropout=0.0,
              residual_dropout=0.0, ffn_d_hidden_multiplier=4 / 3)
    ft = rtdl.FTTransformer(n_cont_features=5, cat_cardinalities=[3, 3], d_out=1, **kw)
    fill_normal(list(ft.parameters()), seed=74, scale=0.3)
    opt = torch.optim.AdamW(ft.make_parameter_groups(), lr=1e-3, weight_decay=1e-2)
    before = ft(x, cat)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ft(x, cat), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["ft_transformer"] = {"before": before, "losses": losses, "after": ft(x, cat),
                             "n_groups": len(opt.param_groups)}
    return res


CASES = {"minimize": minimize_case, "kmeans": kmeans_case, "freia": freia_case,
         "rtdl": rtdl_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
