"""Libraries that rewrite or differentiate through models (torch-pruning, higher), run by
tests/as_torch/test_model_surgery.py with the real torch and under
``python -m ptcore.as_torch``: structural pruning planned from the autograd graph (dependency
groups, magnitude and Taylor importance, pruned shapes and outputs), and meta-learning through
differentiable inner loops of functional copies of a model; weights and data from NumPy.
Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.conv3 = torch.nn.Conv2d(8, 6, 1)
        self.gn = torch.nn.GroupNorm(2, 6)
        self.fc = torch.nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = h + torch.relu(self.bn2(self.conv2(h)))      # a residual: conv1 and conv2 coupled
        h = torch.relu(self.gn(self.conv3(h)))
        return self.fc(h.flatten(1))


class NormNet(torch.nn.Module):
    """Instance norm, layer norm and PReLU after convs: their nodes in the pruning groups."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.gn = torch.nn.GroupNorm(2, 8)
        self.c2 = torch.nn.Conv2d(8, 4, 1)
        self.inorm = torch.nn.InstanceNorm2d(4, affine=True)
        self.ln = torch.nn.LayerNorm([4, 4, 4])
        self.act = torch.nn.PReLU(4)

    def forward(self, x):
        h = torch.relu(self.gn(self.c1(x)))
        return self.act(self.ln(self.inorm(self.c2(h))))


def _net(seed):
    net = Net()
    fill_normal([t for _, t in sorted(net.state_dict().items()) if t.is_floating_point()],
                seed, 0.4)
    with torch.no_grad():
        for bn in (net.bn1, net.bn2):
            bn.running_var.abs_().add_(0.5)
    return net


def pruning_case():
    """torch-pruning: the dependency graph's groups for conv1 (coupled through the residual),
    magnitude-pruner and Taylor-importance steps, the pruned model's shapes and outputs."""
    import torch_pruning as tp
    x = _x(1, (2, 3, 4, 4))
    res = {}
    net = _net(2).eval()
    dg = tp.DependencyGraph().build_dependency(net, example_inputs=x)
    group = dg.get_pruning_group(net.conv1, tp.prune_conv_out_channels, idxs=[0, 3])
    res["group"] = sorted(f"{dep.target.name}:{dep.handler.__name__}" for dep, _ in group)
    res["gn_group"] = sorted(f"{dep.target.name}:{dep.handler.__name__}" for dep, _
                             in dg.get_pruning_group(net.conv3, tp.prune_conv_out_channels,
                                                     idxs=[1]))
    group.prune()
    norm_net = NormNet()
    norm_dg = tp.DependencyGraph().build_dependency(norm_net, example_inputs=x)
    for conv in ("c1", "c2"):
        res[f"norm_group_{conv}"] = sorted(
            f"{dep.target.name}:{dep.handler.__name__}" for dep, _ in norm_dg.get_pruning_group(
                getattr(norm_net, conv), tp.prune_conv_out_channels, idxs=[0]))
    with torch.no_grad():
        res["manual"] = {"out": net(x), "shapes": {k: list(v.shape) for k, v
                                                   in sorted(net.state_dict().items())}}
    for name, imp in (("magnitude", tp.importance.MagnitudeImportance(p=2)),
                      ("taylor", tp.importance.TaylorImportance())):
        net = _net(3).eval()
        pruner = tp.pruner.MagnitudePruner(net, x, importance=imp, pruning_ratio=0.5,
                                           ignored_layers=[net.fc], iterative_steps=2)
        steps = []
        for _ in range(2):
            if name == "taylor":
                net.zero_grad()
                net(x).pow(2).sum().backward()
            pruner.step()
            with torch.no_grad():
                steps.append({"out": net(x), "macs_params": list(tp.utils.count_ops_and_params(
                    net, x)), "shapes": {k: list(v.shape) for k, v
                                         in sorted(net.state_dict().items())}})
        res[name] = steps
    return res


def meta_learning_case():
    """higher: MAML-style inner SGD and Adam loops over a functional copy of a model
    (monkeypatched), the outer gradient through them (second order), three outer steps."""
    import higher
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    fill_normal(list(model.parameters()), 4, 0.5)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tasks = [(_x(5 + i, (8, 3)), _x(15 + i, (8, 1)), _x(25 + i, (8, 3)), _x(35 + i, (8, 1)))
             for i in range(2)]
    res = {"outer": []}
    for inner_name, inner_opt in (("sgd", torch.optim.SGD(model.parameters(), lr=0.1)),
                                  ("adam", torch.optim.Adam(model.parameters(), lr=0.05))):
        losses = []
        for _ in range(2):
            meta_opt.zero_grad()
            total = 0.0
            for xs, ys, xq, yq in tasks:
                with higher.innerloop_ctx(model, inner_opt, copy_initial_weights=False) \
                        as (fmodel, diffopt):
                    for _ in range(3):
                        diffopt.step(torch.nn.functional.mse_loss(fmodel(xs), ys))
                    q = torch.nn.functional.mse_loss(fmodel(xq), yq)
                    q.backward()
                    total += q.item()
            meta_opt.step()
            losses.append(total)
        res[inner_name] = {"losses": losses,
                           "weights": [p.detach().clone() for p in model.parameters()]}
    fmodel = higher.monkeypatch(model)
    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    out = fmodel(tasks[0][0], params=params)
    (g,) = torch.autograd.grad(out.sum(), params[:1])
    res["functional"] = {"out": out.detach(), "grad": g}
    return res


CASES = {"pruning": pruning_case, "meta_learning": meta_learning_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
