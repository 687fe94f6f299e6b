"""Captum, run by tests/as_torch/test_captum.py with the real torch and under
``python -m ptcore.as_torch``: gradient, path, perturbation and layer attributions of a small
CNN (weights and inputs from NumPy, so both runs compute on the same numbers).  Captum's
sampling methods (GradientShap, NoiseTunnel, Lime, KernelShap) draw from the generator,
which differs between the two, and are not compared.  Each case writes what it computed to
``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


class _CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.relu1 = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.conv2 = torch.nn.Conv2d(6, 8, 3, padding=1)
        self.relu2 = torch.nn.ReLU()
        self.fc = torch.nn.Linear(8 * 6 * 6, 4)

    def forward(self, x):
        h = self.pool(self.relu1(self.conv1(x)))
        h = self.relu2(self.conv2(h))
        return self.fc(h.flatten(1))


def _model():
    torch.manual_seed(0)
    m = _CNN()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in m.parameters():
            fan_in = max(1, p[0].numel()) if p.dim() > 1 else 4
            p.copy_(torch.from_numpy((rng.standard_normal(p.shape) / np.sqrt(fan_in))
                                     .astype(np.float32)))
    return m.eval()


def _input(seed=1, b=2):
    return torch.from_numpy(np.random.default_rng(seed).random((b, 3, 12, 12), dtype=np.float32))


def gradient_case():
    from captum.attr import (Deconvolution, DeepLift, GuidedBackprop, InputXGradient,
                             IntegratedGradients, Saliency)
    m, x = _model(), _input()
    target = torch.tensor([1, 3])
    base = torch.full_like(x, 0.2)
    res = {"logits": m(x)}
    ig = IntegratedGradients(m)
    for method in ("gausslegendre", "riemann_trapezoid", "riemann_middle"):
        a, delta = ig.attribute(x, base, target=target, n_steps=16, method=method,
                                return_convergence_delta=True)
        res[f"ig_{method}"], res[f"ig_{method}_delta"] = a, delta
    res["ig_internal_batch"] = ig.attribute(x, target=target, n_steps=16,
                                            internal_batch_size=5)
    res["saliency"] = Saliency(m).attribute(x, target=target)
    res["saliency_signed"] = Saliency(m).attribute(x, target=target, abs=False)
    res["input_x_grad"] = InputXGradient(m).attribute(x, target=target)
    res["guided_backprop"] = GuidedBackprop(m).attribute(x, target=target)
    res["deconvolution"] = Deconvolution(m).attribute(x, target=target)
    dl, dl_delta = DeepLift(_model()).attribute(x, base, target=target,
                                                return_convergence_delta=True)
    res["deeplift"], res["deeplift_delta"] = dl, dl_delta
    return res


def layer_case():
    from captum.attr import (GuidedGradCam, LayerActivation, LayerAttribution,
                             LayerConductance, LayerGradCam, LayerGradientXActivation,
                             LayerIntegratedGradients, NeuronGradient,
                             NeuronIntegratedGradients)
    m, x = _model(), _input(2)
    target = torch.tensor([0, 2])
    gc = LayerGradCam(m, m.conv2).attribute(x, target=target)
    res = {"gradcam": gc, "gradcam_relu": LayerGradCam(m, m.conv2).attribute(
               x, target=target, relu_attributions=True),
           "gradcam_upsampled": LayerAttribution.interpolate(gc, (12, 12), "bilinear"),
           "guided_gradcam": GuidedGradCam(m, m.conv2).attribute(x, target=target),
           "activation": LayerActivation(m, m.pool).attribute(x),
           "grad_x_act": LayerGradientXActivation(m, m.conv1).attribute(x, target=target),
           "conductance": LayerConductance(m, m.conv2).attribute(x, target=target,
                                                                   n_steps=8),
           "layer_ig": LayerIntegratedGradients(m, m.conv1).attribute(x, target=target,
                                                                      n_steps=8),
           "neuron_grad": NeuronGradient(m, m.conv2).attribute(x, (3, 2, 2)),
           "neuron_ig": NeuronIntegratedGradients(m, m.relu2).attribute(x, (1, 4, 4),
                                                                        n_steps=8)}
    return res


def perturbation_case():
    from captum.attr import FeatureAblation, Occlusion
    m, x = _model(), _input(3)
    target = torch.tensor([3, 1])
    mask = torch.arange(16).reshape(4, 4).repeat_interleave(3, 0).repeat_interleave(3, 1)
    return {"occlusion": Occlusion(m).attribute(x, sliding_window_shapes=(3, 4, 4),
                                                strides=(3, 2, 2), target=target,
                                                baselines=0.1),
            "ablation": FeatureAblation(m).attribute(x, target=target,
                                                     feature_mask=mask[None, None]),
            "ablation_per_pixel": FeatureAblation(m).attribute(x[:1], target=1)}


def training_case():
    """Attribution inside a training loop: a saliency penalty (double backward through the
    input gradient) added to the loss, three SGD steps."""
    m, x = _model(), _input(4, b=4)
    y = torch.tensor([0, 1, 2, 3])
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        xi = x.clone().requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(m(xi), y)
        (g,) = torch.autograd.grad(loss, xi, create_graph=True)
        total = loss + 0.1 * g.pow(2).sum()
        total.backward()
        opt.step()
        losses.append(total.item())
    from captum.attr import IntegratedGradients
    return {"losses": losses, "fc": m.fc.weight,
            "ig_after": IntegratedGradients(m).attribute(x, target=y, n_steps=8)}


CASES = {"gradient": gradient_case, "layer": layer_case, "perturbation": perturbation_case,
         "training": training_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
