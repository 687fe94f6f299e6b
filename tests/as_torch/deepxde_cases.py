"""DeepXDE with its PyTorch backend, run by tests/as_torch/test_deepxde.py with the real torch
and under ``python -m ptcore.as_torch``: physics-informed networks (the library's 1-D Poisson
example with a Dirichlet condition; a Poisson problem with a Neumann condition and a
feature-transformed output) trained with Adam then L-BFGS, from weights drawn with NumPy and
uniform collocation points.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import os
import sys
import warnings

os.environ["DDE_BACKEND"] = "pytorch"
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from case_results import fill_normal, main  # noqa: E402

X_TEST = np.linspace(-1, 1, 9, dtype=np.float32)[:, None]


def _fit(data, net, seed, adam_steps=200, lbfgs_steps=5):
    import deepxde as dde
    dde.config.set_random_seed(0)
    model = dde.Model(data, net)
    fill_normal([p for _, p in sorted(net.state_dict().items())], seed, 0.3)
    model.compile("adam", lr=1e-3, metrics=["l2 relative error"])
    hist, _ = model.train(iterations=adam_steps, display_every=50, verbose=0)
    adam = {"steps": list(hist.steps), "loss_train": np.asarray(hist.loss_train),
            "loss_test": np.asarray(hist.loss_test), "metrics": np.asarray(hist.metrics_test),
            "predict": model.predict(X_TEST)}
    dde.optimizers.config.set_LBFGS_options(maxiter=lbfgs_steps)
    # (set at import from the default maxiter: the iterations of one LBFGS.step)
    dde.optimizers.config.LBFGS_options.update(iter_per_step=lbfgs_steps,
                                               fun_per_step=2 * lbfgs_steps)
    model.compile("L-BFGS", metrics=["l2 relative error"])
    hist, _ = model.train(verbose=0)
    return {"adam": adam, "lbfgs_loss": np.asarray(hist.loss_train[-1]),
            "predict": model.predict(X_TEST),
            "residual": model.predict(X_TEST, operator=data.pde)}


def poisson_dirichlet_case():
    """-u'' = pi^2 sin(pi x) on [-1, 1], u(+-1) = 0 (DeepXDE's Poisson_Dirichlet_1d)."""
    import deepxde as dde
    geom = dde.geometry.Interval(-1, 1)

    def pde(x, y):
        return -dde.grad.hessian(y, x) - np.pi ** 2 * torch.sin(np.pi * x)

    def solution(x):
        return np.sin(np.pi * x)
    bc = dde.icbc.DirichletBC(geom, solution, lambda _, on_boundary: on_boundary)
    data = dde.data.PDE(geom, pde, bc, 16, 2, solution=solution, num_test=40,
                        train_distribution="uniform")
    net = dde.nn.FNN([1, 20, 20, 1], "tanh", "Glorot uniform")
    return _fit(data, net, 1)


def poisson_neumann_case():
    """u'' = 2 with u(-1) = 0 and u'(1) = 4 (exact u = (x + 1)^2), a network whose output is
    transformed to meet the Dirichlet condition exactly."""
    import deepxde as dde
    geom = dde.geometry.Interval(-1, 1)

    def pde(x, y):
        return dde.grad.hessian(y, x) - 2

    bc = dde.icbc.NeumannBC(geom, lambda x: 4 * np.ones_like(x),
                            lambda x, on_boundary: on_boundary and np.isclose(x[0], 1))
    data = dde.data.PDE(geom, pde, [bc], 12, 2, solution=lambda x: (x + 1) ** 2,
                        num_test=30, train_distribution="uniform")
    net = dde.nn.FNN([1, 16, 16, 1], "sin", "Glorot normal")
    net.apply_output_transform(lambda x, y: (x + 1) * y)
    return _fit(data, net, 2, adam_steps=150)


def _adam(data, net, seed, steps, **compile_kw):
    import deepxde as dde
    model = dde.Model(data, net)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(net.named_parameters()):
            p.copy_(torch.from_numpy(np.asarray(rng.standard_normal(p.shape) * 0.3,
                                                dtype=np.float32)))
    model.compile("adam", lr=1e-3, **compile_kw)
    hist, _ = model.train(iterations=steps, display_every=10, verbose=0)
    return model, np.asarray(hist.loss_train)


def more_problems_case():
    """The heat equation (TimePDE with a boundary and an initial condition), a 2-D Poisson
    problem on a rectangle saved and restored through Model.save/restore, function regression
    with a parallel network (PFNN) and an operator learned by a DeepONet (Cartesian
    product data)."""
    import deepxde as dde
    res = {}
    geom, tdom = dde.geometry.Interval(0, 1), dde.geometry.TimeDomain(0, 1)
    gt = dde.geometry.GeometryXTime(geom, tdom)

    def heat(x, y):
        return dde.grad.jacobian(y, x, i=0, j=1) - 0.3 * dde.grad.hessian(y, x, i=0, j=0)
    data = dde.data.TimePDE(
        gt, heat, [dde.icbc.DirichletBC(gt, lambda x: 0, lambda _, on: on),
                   dde.icbc.IC(gt, lambda x: np.sin(np.pi * x[:, 0:1]), lambda _, on: on)],
        num_domain=40, num_boundary=8, num_initial=8, train_distribution="uniform")
    model, losses = _adam(data, dde.nn.FNN([2, 16, 16, 1], "tanh", "Glorot normal"), 0, 50)
    xt = np.stack(np.meshgrid(np.linspace(0, 1, 4), np.linspace(0, 1, 3)), -1).reshape(-1, 2)
    res["heat"] = {"losses": losses, "predict": model.predict(xt.astype(np.float32))}

    rect = dde.geometry.Rectangle([0, 0], [1, 1])

    def poisson(x, y):
        return dde.grad.hessian(y, x, i=0, j=0) + dde.grad.hessian(y, x, i=1, j=1) + 1
    data = dde.data.PDE(rect, poisson, dde.icbc.DirichletBC(rect, lambda x: 0, lambda _, on: on),
                        30, 12, train_distribution="uniform")
    model, losses = _adam(data, dde.nn.FNN([2, 12, 12, 1], "sin", "Glorot normal"), 1, 30)
    path = model.save("poisson")
    before = model.predict(xt.astype(np.float32))
    model.restore(path)
    res["poisson2d"] = {"losses": losses, "predict": before,
                        "restored": model.predict(xt.astype(np.float32))}

    data = dde.data.Function(geom, lambda x: np.sin(3 * x), 20, 10, train_distribution="uniform")
    model, losses = _adam(data, dde.nn.PFNN([1, [8, 8], [8, 8], 2], "relu", "He normal"), 2, 30,
                          loss="MSE")
    res["pfnn"] = {"losses": losses, "predict": model.predict(X_TEST)}

    ramp = np.linspace(0, 1, 10, dtype=np.float32)
    branch = ramp[None].repeat(6, 0) * np.arange(1, 7, dtype=np.float32)[:, None]
    trunk = np.linspace(0, 1, 5, dtype=np.float32)[:, None]
    y = np.sin(branch[:, :5] @ np.ones((5, 5), dtype=np.float32)).astype(np.float32)
    data = dde.data.TripleCartesianProd((branch, trunk), y, (branch, trunk), y)
    model, losses = _adam(data, dde.nn.DeepONetCartesianProd([10, 16, 16], [1, 16, 16], "relu",
                                                             "Glorot normal"), 3, 30)
    res["deeponet"] = {"losses": losses, "predict": model.predict((branch, trunk))}
    return res


def _constant_rhs(C):
    """The residual of u'' = C (two arguments: a third is DeepXDE's auxiliary variable)."""
    import deepxde as dde

    def pde(x, y):
        return dde.grad.hessian(y, x) - C * torch.ones_like(y)
    return pde


def inverse_case():
    """An inverse problem: the constant C of u'' = C learned as an external trainable
    variable from observed points (PointSetBC, also anchors), with Robin and operator
    boundary conditions, loss weights and learning-rate decays (step, cosine)."""
    import deepxde as dde
    res = {}
    geom = dde.geometry.Interval(0, 1)
    xo = np.linspace(0, 1, 6, dtype=np.float32)[:, None]
    for name, decay in (("step", ("step", 20, 0.5)), ("cosine", ("cosine", 60, 0.0))):
        C = dde.Variable(2.0)
        pde = _constant_rhs(C)
        bcs = [dde.icbc.PointSetBC(xo, xo ** 2),
               dde.icbc.RobinBC(geom, lambda x, y: y - 1,
                                lambda x, on: on and np.isclose(x[0], 1)),
               dde.icbc.OperatorBC(geom, lambda x, y, _: dde.grad.jacobian(y, x),
                                   lambda x, on: on and np.isclose(x[0], 0))]
        data = dde.data.PDE(geom, pde, bcs, 16, 2, anchors=xo, train_distribution="uniform")
        net = dde.nn.FNN([1, 12, 12, 1], "tanh", "Glorot uniform")
        model = dde.Model(data, net)
        fill_normal([p for _, p in sorted(net.state_dict().items())], 4, 0.3)
        model.compile("adam", lr=1e-2, external_trainable_variables=[C],
                      loss_weights=[1, 10, 1, 1], decay=decay)
        hist, _ = model.train(iterations=60, display_every=20, verbose=0)
        res[name] = {"losses": np.asarray(hist.loss_train), "C": C.detach(),
                     "predict": model.predict(X_TEST)}
    return res


CASES = {"poisson_dirichlet": poisson_dirichlet_case, "poisson_neumann": poisson_neumann_case,
         "more_problems": more_problems_case, "inverse": inverse_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
