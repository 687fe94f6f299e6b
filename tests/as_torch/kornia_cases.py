"""kornia, run by tests/as_torch/test_kornia.py with the real torch and under
``python -m ptcore.as_torch``: color conversions, filters and edges, geometric warps and
conversions, image enhancement, morphology, losses and metrics, feature responses and
descriptors, augmentations with fixed parameters, and a gradient-based image registration.
Inputs come from NumPy, so both runs compute on the same numbers; each case writes what it
computed to ``<out>/<case>.json`` (``case_results.main``).
"""
import sys
import warnings

import numpy as np
import torch

import kornia
import kornia.augmentation as K
from case_results import main

warnings.filterwarnings("ignore")


def _img(seed, b=2, c=3, h=32, w=36):
    return torch.from_numpy(np.random.default_rng(seed).random((b, c, h, w), dtype=np.float32))


def _fill(module, seed):
    """``module`` with every parameter drawn from NumPy (scaled by its fan-in)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():
            fan_in = max(1, p[0].numel()) if p.dim() > 1 else 1
            p.copy_(torch.from_numpy((rng.standard_normal(p.shape) / np.sqrt(fan_in))
                                     .astype(np.float32)))
    return module


def color_case():
    x = _img(0)
    c = kornia.color
    res = {"gray": c.rgb_to_grayscale(x), "hsv": c.rgb_to_hsv(x), "hls": c.rgb_to_hls(x),
           "lab": c.rgb_to_lab(x), "luv": c.rgb_to_luv(x), "yuv": c.rgb_to_yuv(x),
           "ycbcr": c.rgb_to_ycbcr(x), "xyz": c.rgb_to_xyz(x), "bgr": c.rgb_to_bgr(x),
           "linear": c.rgb_to_linear_rgb(x)}
    res["hsv_back"] = c.hsv_to_rgb(res["hsv"])
    res["lab_back"] = c.lab_to_rgb(res["lab"])
    res["raw"] = c.raw_to_rgb(x[:, :1], c.CFA.BG)
    return res


def filters_case():
    x = _img(1)
    f = kornia.filters
    mag, edges = f.canny(x, low_threshold=0.1, high_threshold=0.2)
    return {"gauss": f.gaussian_blur2d(x, (5, 5), (1.5, 1.5)),
            "box": f.box_blur(x, (3, 3)), "median": f.median_blur(x, (3, 3)),
            "sobel": f.sobel(x), "laplacian": f.laplacian(x, 3),
            "spatial_grad": f.spatial_gradient(x, order=2),
            "unsharp": f.unsharp_mask(x, (3, 3), (1.0, 1.0)),
            "bilateral": f.bilateral_blur(x, (5, 5), 0.1, (1.5, 1.5)),
            "motion": f.motion_blur(x, 5, 35.0, 0.5),
            "canny_mag": mag, "canny_edges": edges,
            "filter2d": f.filter2d(x, torch.tensor([[[1., 2., 1.], [0., 0., 0.],
                                                     [-1., -2., -1.]]]))}


def geometry_case():
    x = _img(2)
    g = kornia.geometry
    center = torch.tensor([[16., 18.], [10., 12.]])
    M = g.transform.get_rotation_matrix2d(center, torch.tensor([30., -45.]),
                                          torch.tensor([[1.2, 1.2], [0.8, 0.9]]))
    src = torch.tensor([[[0., 0.], [35., 0.], [35., 31.], [0., 31.]]]).repeat(2, 1, 1)
    dst = src + torch.from_numpy(np.random.default_rng(3).uniform(-4, 4, (2, 4, 2))
                                 .astype(np.float32))
    H = g.transform.get_perspective_transform(src, dst)
    res = {"rot_matrix": M, "warp_affine": g.transform.warp_affine(x, M, (32, 36)),
           "persp": H, "warp_persp": g.transform.warp_perspective(x, H, (32, 36)),
           "rotate": g.transform.rotate(x, torch.tensor([15., 75.])),
           "translate": g.transform.translate(x, torch.tensor([[3., -2.], [1.5, 4.]])),
           "resize": g.transform.resize(x, (20, 25), antialias=True),
           "rescale": g.transform.rescale(x, (1.5, 1.5)),
           "pyrdown": g.transform.pyrdown(x), "pyrup": g.transform.pyrup(x),
           "hflip": g.transform.hflip(x),
           "crop_resize": g.transform.crop_and_resize(x, src * 0.5, (16, 16)),
           "homography_dlt": g.homography.find_homography_dlt(src, dst),
           "transform_points": g.linalg.transform_points(H, src)}
    aa = torch.from_numpy(np.random.default_rng(4).uniform(-1, 1, (5, 3)).astype(np.float32))
    R = g.conversions.axis_angle_to_rotation_matrix(aa)
    res["rotmat"] = R
    res["quat"] = g.conversions.rotation_matrix_to_quaternion(R)
    res["aa_back"] = g.conversions.quaternion_to_axis_angle(res["quat"])
    depth = torch.from_numpy(np.random.default_rng(5).uniform(1, 3, (1, 1, 8, 10))
                             .astype(np.float32))
    K_ = torch.tensor([[[20., 0., 5.], [0., 20., 4.], [0., 0., 1.]]])
    res["depth_to_3d"] = g.depth.depth_to_3d_v2(depth[:, 0], K_)
    res["project"] = g.camera.project_points(res["depth_to_3d"].reshape(-1, 3), K_[0])
    grid = g.create_meshgrid(4, 5, normalized_coordinates=True)
    res["remap"] = g.transform.remap(x, grid[..., 0].expand(2, -1, -1) * 20 + 17,
                                     grid[..., 1].expand(2, -1, -1) * 15 + 16,
                                     align_corners=True)
    return res


def enhance_case():
    x = _img(6)
    e = kornia.enhance
    u8 = (x * 255).to(torch.uint8)
    zca_data = torch.from_numpy(np.random.default_rng(15).standard_normal((64, 6))
                                .astype(np.float32)) @ torch.tensor(
        np.random.default_rng(16).standard_normal((6, 6)).astype(np.float32))
    return {"brightness": e.adjust_brightness(x, 0.2), "contrast": e.adjust_contrast(x, 1.3),
            "gamma": e.adjust_gamma(x, 2.2), "hue": e.adjust_hue(x, 0.3),
            "saturation": e.adjust_saturation(x, 1.7), "sharpness": e.sharpness(x, 0.6),
            "posterize": e.posterize(x, 3), "solarize": e.solarize(x, 0.4),
            "equalize": e.equalize(x), "clahe": e.equalize_clahe(x, clip_limit=2.0,
                                                                   grid_size=(4, 4)),
            "normalize": e.normalize(x, torch.tensor([0.5, 0.4, 0.3]),
                                     torch.tensor([0.2, 0.25, 0.3])),
            "invert": e.invert(x), "histogram": e.histogram(x.flatten(1), torch.linspace(0, 1, 9),
                                                            torch.tensor(0.9)),
            "zca": e.ZCAWhitening().fit(zca_data)(zca_data),
            "u8_image": kornia.utils.image_to_tensor(u8[0].permute(1, 2, 0).numpy())}


def morphology_losses_case():
    x = _img(7)
    y = _img(8)
    m = kornia.morphology
    k = torch.tensor([[0., 1., 0.], [1., 1., 1.], [0., 1., 0.]])
    logits = torch.from_numpy(np.random.default_rng(9).standard_normal((2, 4, 8, 8))
                              .astype(np.float32))
    labels = torch.from_numpy(np.random.default_rng(10).integers(0, 4, (2, 8, 8)))
    return {"dilation": m.dilation(x, k), "erosion": m.erosion(x, k),
            "opening": m.opening(x, k), "closing": m.closing(x, k),
            "gradient": m.gradient(x, k), "top_hat": m.top_hat(x, k),
            "ssim": kornia.metrics.ssim(x, y, 5), "psnr": kornia.metrics.psnr(x, y, 1.0),
            "ssim_loss": kornia.losses.ssim_loss(x, y, 5),
            "tv": kornia.losses.total_variation(x),
            "focal": kornia.losses.focal_loss(logits, labels, alpha=0.5, gamma=2.0,
                                              reduction="mean"),
            "dice": kornia.losses.dice_loss(logits, labels),
            "tversky": kornia.losses.tversky_loss(logits, labels, 0.5, 0.5),
            "charbonnier": kornia.losses.charbonnier_loss(x, y, reduction="mean"),
            "mean_iou": kornia.metrics.mean_iou(logits.argmax(1), labels, 4)}


def feature_case():
    x = _img(11, c=1, h=40, w=40)
    ft = kornia.feature
    patches = _img(12, b=4, c=1, h=32, w=32)
    scales = torch.stack([kornia.filters.gaussian_blur2d(x, (7, 7), (s, s))
                          for s in (0.8, 1.2, 1.8)], 2)
    hardnet = _fill(ft.HardNet(pretrained=False), 17).eval()
    tfeat = _fill(ft.TFeat(pretrained=False), 18).eval()
    return {"harris": ft.harris_response(x, 0.04), "gftt": ft.gftt_response(x),
            "hessian": ft.hessian_response(x), "dog": ft.dog_response(scales),
            "sift": ft.SIFTDescriptor(32, 8, 4)(patches),
            "hardnet": hardnet(patches), "tfeat": tfeat(patches),
            "nms": kornia.geometry.subpix.nms2d(x, (3, 3)),
            "laf_from_center": ft.laf_from_center_scale_ori(
                torch.tensor([[[10., 12.], [20., 5.]]]), torch.tensor([[[[3.]], [[2.]]]]),
                torch.tensor([[[30.], [-60.]]]))}


def augmentation_case():
    """Augmentations whose parameter ranges have one value: the same transform in both runs."""
    x = _img(13)
    boxes = torch.tensor([[[2., 3., 20., 25.]], [[5., 6., 30., 28.]]])
    seq = K.AugmentationSequential(
        K.RandomAffine(degrees=(20., 20.), translate=None, scale=(1.1, 1.1), p=1.0),
        # (one by one: ColorJitter applies them in a random order)
        K.RandomBrightness((1.2, 1.2), p=1.0), K.RandomContrast((0.8, 0.8), p=1.0),
        K.RandomSaturation((1.3, 1.3), p=1.0), K.RandomHue((0.1, 0.1), p=1.0),
        K.RandomHorizontalFlip(p=1.0),
        K.RandomGrayscale(p=0.0),
        data_keys=["input", "bbox_xyxy"])
    out, out_boxes = seq(x, boxes)
    inv = seq.inverse(out, data_keys=["input"])
    norm = K.Normalize(mean=torch.tensor([0.5, 0.5, 0.5]), std=torch.tensor([0.2, 0.2, 0.2]))
    return {"image": out, "boxes": out_boxes, "inverse": inv,
            "transform": seq.transform_matrix if hasattr(seq, "transform_matrix") else None,
            "normalize": norm(x), "center_crop": K.CenterCrop(20)(x),
            "resize": K.Resize((16, 18))(x),
            "perspective": K.RandomPerspective(0.0, p=1.0)(x)}


def registration_case():
    """Fit an affine warp by gradient descent (warp_affine + SSIM loss, Adam): the losses, the
    gradients of the first step and the fitted matrix."""
    x = _img(14, b=1, c=1, h=32, w=32)
    x = kornia.filters.gaussian_blur2d(x, (7, 7), (2.0, 2.0))
    M_true = torch.tensor([[[1.0, 0.1, 1.5], [-0.05, 1.0, -1.0]]])
    target = kornia.geometry.transform.warp_affine(x, M_true, (32, 32))
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.01)
    losses, grads = [], []
    for _ in range(15):
        opt.zero_grad()
        warped = kornia.geometry.transform.warp_affine(x, theta, (32, 32))
        loss = kornia.losses.ssim_loss(warped, target, 5) + \
            kornia.losses.total_variation(warped - target).mean() * 1e-3
        loss.backward()
        grads.append(theta.grad.clone())
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "first_grad": grads[0], "theta": theta}


def contrib_matching_case():
    """kornia.contrib (distance transform, connected components, patches), descriptor
    matching and the eight-point fundamental matrix (normalised: an SVD's sign is free)."""
    x = _img(19, b=1, c=1, h=24, w=24)
    binary = (x > 0.8).float()
    d1 = torch.from_numpy(np.random.default_rng(20).standard_normal((12, 16))
                          .astype(np.float32))
    d2 = d1[torch.arange(11, -1, -1)] + 0.05 * torch.from_numpy(
        np.random.default_rng(21).standard_normal((12, 16)).astype(np.float32))
    rng = np.random.default_rng(22)
    pts1 = torch.from_numpy(rng.uniform(0, 100, (1, 10, 2)))
    F_true = torch.tensor([[[0.0, -0.001, 0.1], [0.001, 0.0, -0.2], [-0.1, 0.2, 1.0]]],
                          dtype=torch.float64)
    lines = kornia.geometry.epipolar.compute_correspond_epilines(pts1, F_true)
    # points on each epipolar line: x2 chosen, y2 from a x + b y + c = 0
    x2 = torch.from_numpy(rng.uniform(0, 100, (1, 10)))
    y2 = -(lines[..., 0] * x2 + lines[..., 2]) / lines[..., 1]
    pts2 = torch.stack([x2, y2], -1)
    F = kornia.geometry.epipolar.find_fundamental(pts1, pts2)
    F = F / F[..., 2:, 2:]
    dist, idx = kornia.feature.match_nn(d1, d2)
    snn_dist, snn_idx = kornia.feature.match_snn(d1, d2, 0.9)
    return {"distance_transform": kornia.contrib.distance_transform(binary),
            "components": kornia.contrib.connected_components(binary, num_iterations=50),
            "patches": kornia.contrib.extract_tensor_patches(x, 6, stride=5),
            "combine_patches": kornia.contrib.combine_tensor_patches(
                kornia.contrib.extract_tensor_patches(x, 6, stride=6), (24, 24),
                window_size=6, stride=6),
            "match_nn": dist, "match_nn_idx": idx, "match_snn": snn_dist,
            "match_snn_idx": snn_idx, "fundamental": F,
            "sampson": kornia.geometry.epipolar.sampson_epipolar_distance(pts1, pts2, F)}


CASES = {"color": color_case, "filters": filters_case, "geometry": geometry_case,
         "enhance": enhance_case, "morphology_losses": morphology_losses_case,
         "feature": feature_case, "augmentation": augmentation_case,
         "registration": registration_case, "contrib_matching": contrib_matching_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
