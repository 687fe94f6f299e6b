"""Image-quality, einsum-notation, unfold and flow libraries (piq, einx, unfoldNd, nflows),
run by tests/as_torch/test_image_signal_libraries.py with the real torch and under ``python -m
ptcore.as_torch``, on NumPy data: piq's full-reference metrics and total variation with
gradients; einx's bracket notation (rearrange, reductions, dot, elementwise, indexing);
unfoldNd's N-d unfold/fold against their torch counterparts; an nflows masked
autoregressive flow's log-probability and Adam steps.  Each case writes what it computed to
``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


def _img(seed, shape=(2, 3, 48, 48)):
    return torch.from_numpy(np.random.default_rng(seed).random(shape).astype(np.float32))


_x = normal_tensor


def piq_case():
    import piq
    x0 = _img(0)
    y = (x0 * 0.7 + 0.3 * _img(1)).clamp(0, 1)
    fns = {"psnr": lambda x: piq.psnr(x, y, data_range=1.0),
           "ssim": lambda x: piq.ssim(x, y, data_range=1.0),
           "ms_ssim": lambda x: piq.multi_scale_ssim(x, y, data_range=1.0, kernel_size=3),
           "gmsd": lambda x: piq.gmsd(x, y, data_range=1.0),
           "ms_gmsd": lambda x: piq.multi_scale_gmsd(x, y, data_range=1.0, chromatic=True),
           "fsim": lambda x: piq.fsim(x, y, data_range=1.0),
           "vif": lambda x: piq.vif_p(x, y, data_range=1.0),
           "haarpsi": lambda x: piq.haarpsi(x, y, data_range=1.0),
           "mdsi": lambda x: piq.mdsi(x, y, data_range=1.0),
           "srsim": lambda x: piq.srsim(x, y, data_range=1.0),
           "dss": lambda x: piq.dss(x, y, data_range=1.0),
           "tv": lambda x: piq.total_variation(x),
           "iw_ssim": lambda x: piq.information_weighted_ssim(x, y, data_range=1.0,
                                                              kernel_size=5, scale_weights=torch.tensor([0.5, 0.5]))}
    res = {}
    for name, fn in fns.items():
        x = x0.clone().requires_grad_()
        val = fn(x)
        val.sum().backward()
        res[name] = {"value": val, "grad": x.grad}
    return res


def einx_case():
    import einx
    x, w = _x(3, (2, 5, 8)), _x(4, (8, 6))
    res = {"rearrange": einx.rearrange("b s (h c) -> b h s c", x, h=2),
           "sum": einx.sum("b [s] c", x), "max": einx.max("b s [c]", x),
           "mean_keep": einx.mean("b [s] c", x, keepdims=True),
           "dot": einx.dot("b s [c], [c] d -> b s d", x, w),
           "add": einx.add("b s c, c", x, w[:, 0]),
           "softmax": einx.softmax("b s [c]", x),
           "get_at": einx.get_at("b [s] c, b i -> b i c", x,
                                 torch.tensor([[0, 4], [2, 2]])),
           "where": einx.where("b s c, c, ", x > 0, w[:, 1], 0.0),
           "flip": einx.flip("b [s] c", x)}
    return res


def unfold_case():
    from unfoldNd import FoldNd, UnfoldNd, unfoldNd
    x1, x3 = _x(5, (2, 3, 20)), _x(6, (1, 2, 6, 7, 5))
    u1 = unfoldNd(x1, kernel_size=3, dilation=2, padding=1, stride=2)
    u3 = UnfoldNd(kernel_size=(2, 3, 2), stride=(1, 2, 1), padding=(1, 0, 1))(x3)
    fold = FoldNd(output_size=(6, 7, 5), kernel_size=(2, 3, 2), stride=(1, 2, 1),
                  padding=(1, 0, 1))
    x4 = _x(7, (1, 2, 8, 8))
    return {"unfold1d": u1, "unfold3d": u3, "fold3d": fold(u3),
            "unfold2d": unfoldNd(x4, kernel_size=3, padding=1),
            "torch_unfold2d": torch.nn.functional.unfold(x4, kernel_size=3, padding=1)}


def nflows_case():
    from nflows.distributions.normal import StandardNormal
    from nflows.flows.base import Flow
    from nflows.transforms.autoregressive import MaskedAffineAutoregressiveTransform
    from nflows.transforms.base import CompositeTransform
    from nflows.transforms.permutations import ReversePermutation
    transform = CompositeTransform([
        MaskedAffineAutoregressiveTransform(features=3, hidden_features=16),
        ReversePermutation(features=3),
        MaskedAffineAutoregressiveTransform(features=3, hidden_features=16)])
    flow = Flow(transform, StandardNormal(shape=[3]))
    fill_normal([p for _, p in sorted(flow.named_parameters())], 8, 0.1)
    x = _x(9, (32, 3)) * torch.tensor([1.0, 0.5, 2.0])
    res = {"log_prob": flow.log_prob(x)}
    opt = torch.optim.Adam(flow.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = -flow.log_prob(x).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["losses"] = losses
    with torch.no_grad():
        z, logdet = flow._transform(x)
        back, _ = flow._transform.inverse(z)
    res.update({"z": z, "logdet": logdet, "inverse": back})
    return res


if __name__ == "__main__":
    main({"piq": piq_case, "einx": einx_case,
          "unfold": unfold_case, "nflows": nflows_case}, sys.argv)
