"""torchvision, run by tests/as_torch/test_torchvision.py with the real torch and under
``python -m ptcore.as_torch``: transforms v2 on tv_tensors (images, boxes, masks), the
functional image ops, the models' forward passes and a training step, the box ops and
``roi_align`` and the drawing utilities; and timm on top of it (where installed).  Inputs and weights come from NumPy, so both runs
compute on the same numbers; each case writes what it computed to ``<out>/<case>.json``.

torchvision's compiled ops (``nms``, ``roi_align``'s C++ kernel ...) live in a library built
against libtorch: under the launcher ptcore defines them with its own kernels when
torchvision loads that library (``ptcore._torchvision_ops``).  The wheel PyPI serves is a
CUDA build whose library does not load next to the CPU torch: the reference run has no
compiled ops (torch 2.13 then refuses, at ``import torchvision``, the fake (shape) functions
torchvision registers for them; the reference run lets those registrations pass), runs
``roi_align`` in torchvision's Python implementation, and ``nms`` as torchvision's
algorithm written in torch ops (``_greedy_nms``).
"""
import json
import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")

if "ptcore" not in sys.modules:
    _register_fake = torch.library.register_fake

    def _tolerant_register_fake(op, *args, **kwargs):
        def register(fn):
            try:
                return _register_fake(op, fn, **kwargs)
            except RuntimeError:        # the op of torchvision's library, not loaded
                return fn
        return register(args[0]) if args else register
    torch.library.register_fake = _tolerant_register_fake

import torchvision  # noqa: E402
from torchvision import tv_tensors  # noqa: E402
from torchvision.transforms import v2  # noqa: E402
from torchvision.transforms.v2 import functional as F  # noqa: E402


def _rng(seed=0):
    return np.random.default_rng(seed)


def _img_u8(rng, c=3, h=48, w=40):
    return torch.from_numpy(rng.integers(0, 256, size=(c, h, w), dtype=np.uint8))


def _img_f(rng, c=3, h=48, w=40):
    return torch.from_numpy(rng.random((c, h, w), dtype=np.float32))


def _out(t):
    if isinstance(t, torch.Tensor):
        return {"shape": list(t.shape), "dtype": str(t.dtype).split(".")[-1],
                "type": type(t).__name__, "values": t.detach().double().reshape(-1).tolist()}
    if isinstance(t, (list, tuple)):
        return [_out(x) for x in t]
    return t


def transforms_case():
    rng = _rng(0)
    img = tv_tensors.Image(_img_u8(rng))
    boxes = tv_tensors.BoundingBoxes(torch.tensor([[2., 3., 30., 25.], [10., 12., 38., 44.]]),
                                     format="XYXY", canvas_size=(48, 40))
    mask = tv_tensors.Mask(torch.from_numpy((rng.random((48, 40)) > 0.5).astype(np.uint8)))
    res = {}
    pipeline = v2.Compose([v2.Resize((40, 30), antialias=True), v2.CenterCrop(28), v2.Pad(2),
                           v2.RandomHorizontalFlip(p=1.0), v2.RandomVerticalFlip(p=1.0)])
    o_img, o_boxes, o_mask = pipeline(img, boxes, mask)
    res["pipeline_u8"] = _out([o_img, o_boxes, o_mask])
    to_float = v2.Compose([v2.ToDtype(torch.float32, scale=True),
                           v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    res["normalize"] = _out(to_float(img))
    res["convert_boxes"] = _out(v2.ConvertBoundingBoxFormat("CXCYWH")(boxes))
    res["sanitize"] = _out(v2.ClampBoundingBoxes()(tv_tensors.BoundingBoxes(
        torch.tensor([[-5., 3., 50., 25.]]), format="XYXY", canvas_size=(48, 40))))
    # the functional ops, on a float image and on the uint8 one
    fimg = tv_tensors.Image(_img_f(rng))
    res["rotate"] = _out(F.rotate(fimg, 30.0, interpolation=v2.InterpolationMode.BILINEAR,
                                  expand=True))
    res["affine"] = _out(F.affine(fimg, angle=15.0, translate=[3, -2], scale=0.9, shear=[5.0, 2.0],
                                  interpolation=v2.InterpolationMode.BILINEAR))
    res["perspective"] = _out(F.perspective(
        fimg, startpoints=[[0, 0], [39, 0], [39, 47], [0, 47]],
        endpoints=[[2, 1], [36, 3], [38, 45], [1, 44]], interpolation=v2.InterpolationMode.BILINEAR))
    res["gaussian_blur"] = _out(F.gaussian_blur(fimg, [5, 5], [1.5, 1.5]))
    res["resized_crop"] = _out(F.resized_crop(fimg, 4, 6, 30, 24, [20, 16], antialias=True))
    res["resize_bicubic"] = _out(F.resize(fimg, [60, 50], interpolation=v2.InterpolationMode.BICUBIC,
                                          antialias=False))
    res["color"] = _out([F.adjust_brightness(fimg, 1.3), F.adjust_contrast(fimg, 0.7),
                         F.adjust_saturation(fimg, 1.5), F.adjust_hue(fimg, 0.1),
                         F.adjust_gamma(fimg, 0.8), F.adjust_sharpness(fimg, 2.0),
                         F.rgb_to_grayscale(fimg), F.invert(fimg), F.solarize(fimg, 0.6),
                         F.autocontrast(fimg)])
    res["u8_ops"] = _out([F.equalize(img), F.posterize(img, 3), F.autocontrast(img),
                          F.adjust_sharpness(img, 0.5), F.rotate(img, 90.0),
                          F.resize(img, [24, 20], antialias=True)])
    res["boxes_affine"] = _out(F.affine(boxes, angle=10.0, translate=[1, 2], scale=1.1,
                                        shear=[0.0, 0.0]))
    res["mask_resize"] = _out(F.resize(mask, [30, 25]))
    return res


def _fill(model, seed):
    """The model's parameters and buffers from NumPy (the same in both runs)."""
    rng = _rng(seed)
    with torch.no_grad():
        for name, v in model.state_dict().items():
            if not v.is_floating_point():
                continue
            a = rng.standard_normal(tuple(v.shape)).astype(np.float32)
            if name.endswith("running_var"):
                a = np.abs(a) + 0.5
            elif name.endswith("running_mean"):
                a = a * 0.1
            else:
                fan_in = max(1, int(np.prod(v.shape[1:]))) if v.dim() > 1 else 1
                a = a / np.sqrt(fan_in) if v.dim() > 1 else a * 0.1 + (
                    1.0 if name.endswith("weight") else 0.0)
            v.copy_(torch.from_numpy(a))


def models_case():
    from torchvision import models
    res = {}
    x = torch.from_numpy(_rng(1).standard_normal((2, 3, 64, 64)).astype(np.float32))
    builders = {
        "resnet18": lambda: models.resnet18(num_classes=10),
        "mobilenet_v3_small": lambda: models.mobilenet_v3_small(num_classes=10),
        "efficientnet_b0": lambda: models.efficientnet_b0(num_classes=10),
        "densenet121": lambda: models.densenet121(num_classes=10),
        "squeezenet1_1": lambda: models.squeezenet1_1(num_classes=10),
        "shufflenet_v2_x0_5": lambda: models.shufflenet_v2_x0_5(num_classes=10),
        "regnet_y_400mf": lambda: models.regnet_y_400mf(num_classes=10),
        "convnext_tiny": lambda: models.convnext_tiny(num_classes=10),
        "vit_small": lambda: models.VisionTransformer(image_size=64, patch_size=16, num_layers=2,
                                                      num_heads=4, hidden_dim=64, mlp_dim=128,
                                                      num_classes=10),
        "swin_t": lambda: models.swin_t(num_classes=10),
    }
    for i, (name, build) in enumerate(builders.items()):
        torch.manual_seed(0)
        m = build().eval()
        _fill(m, 100 + i)
        with torch.no_grad():
            res[name] = m(x).double().tolist()
    # a training step of resnet18: loss, gradients, the updated weights
    torch.manual_seed(0)
    m = models.resnet18(num_classes=10).train()
    _fill(m, 7)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    y = torch.tensor([1, 7])
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["train_losses"] = losses
    res["train_fc_weight"] = m.fc.weight.detach().double().reshape(-1).tolist()
    res["train_conv1_grad"] = m.conv1.weight.grad.double().reshape(-1).tolist()
    res["bn1_running_var"] = m.bn1.running_var.double().tolist()
    return res


def ops_case():
    from torchvision import ops
    from torchvision.utils import draw_bounding_boxes, draw_segmentation_masks, make_grid
    rng = _rng(2)
    xy = rng.random((6, 2)) * 20
    wh = rng.random((6, 2)) * 15 + 1
    a = torch.from_numpy(np.concatenate([xy, xy + wh], 1).astype(np.float32))
    b = torch.from_numpy(np.concatenate([xy[::-1] + 2, xy[::-1] + wh[::-1] + 1], 1)
                         .astype(np.float32))
    res = {"box_iou": _out(ops.box_iou(a, b)),
           "generalized_box_iou": _out(ops.generalized_box_iou(a, b)),
           "distance_box_iou": _out(ops.distance_box_iou(a, b)),
           "complete_box_iou": _out(ops.complete_box_iou(a, b)),
           "box_area": _out(ops.box_area(a)),
           "box_convert": _out(ops.box_convert(a, "xyxy", "cxcywh")),
           "clip_boxes": _out(ops.clip_boxes_to_image(a * 1.5, (25, 30))),
           "remove_small": _out(ops.remove_small_boxes(a, 5.0)),
           "giou_loss": _out(ops.generalized_box_iou_loss(a, b, reduction="mean")),
           "focal_loss": _out(ops.sigmoid_focal_loss(
               torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32)),
               torch.from_numpy((rng.random((4, 5)) > 0.5).astype(np.float32)),
               reduction="sum")),
           "masks_to_boxes": _out(ops.masks_to_boxes(
               torch.from_numpy(rng.random((3, 20, 24)) > 0.7)))}
    feat = torch.from_numpy(rng.standard_normal((2, 4, 16, 16)).astype(np.float32))
    rois = torch.tensor([[0, 1.5, 2.0, 10.2, 12.7], [1, 0.0, 3.3, 15.0, 9.1],
                         [0, 4.0, 4.0, 6.0, 7.5]])
    feat.requires_grad_(True)
    r = ops.roi_align(feat, rois, output_size=(3, 3), spatial_scale=1.0, sampling_ratio=2,
                      aligned=True)
    r.sum().backward()
    res["roi_align"] = _out(r)
    res["roi_align_grad"] = _out(feat.grad)
    res["roi_align_layer"] = _out(ops.RoIAlign((2, 2), 0.5, -1)(feat.detach(), rois))
    frozen = ops.FrozenBatchNorm2d(4)
    res["frozen_bn"] = _out(frozen(feat.detach()))
    img = _img_u8(rng, 3, 32, 40)
    res["draw_boxes"] = _out(draw_bounding_boxes(img, a[:3], colors="red", width=2))
    res["draw_masks"] = _out(draw_segmentation_masks(
        img, torch.from_numpy(rng.random((2, 32, 40)) > 0.6), alpha=0.5))
    res["make_grid"] = _out(make_grid(torch.from_numpy(rng.random((5, 3, 8, 8)).astype(np.float32)),
                                      nrow=3, padding=1, normalize=True))
    return res


def _greedy_nms(boxes, scores, iou_threshold):
    """torchvision's CPU ``nms`` in torch ops (the reference run has no compiled ops):
    scores in descending order (stable), IoU as ``inter / (area_i + area_j - inter)``."""
    from torchvision.ops import box_iou
    order = torch.sort(scores, descending=True, stable=True)[1]
    iou = box_iou(boxes[order], boxes[order])
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep = []
    for a in range(len(order)):
        if suppressed[a]:
            continue
        keep.append(int(order[a]))
        suppressed[a + 1:] |= iou[a, a + 1:] > iou_threshold
    return torch.tensor(keep, dtype=torch.int64)


def detection_case():
    """Detection models in eval mode on NumPy weights: nms (ptcore's built-in
    ``torch.ops.torchvision.nms``; torchvision's algorithm in torch ops in the reference
    run), RoIAlign (ptcore's kernel; torchvision's Python path in the reference run).
    Random weights give near-equal scores, whose order rounding may swap: compared are
    the number of detections and their sorted scores, and the nms results themselves."""
    from torchvision import ops
    from torchvision.models import detection
    if "ptcore" not in sys.modules:
        ops.boxes.nms = _greedy_nms         # (batched_nms and the models call this one)
    rng = _rng(5)
    xy = rng.random((300, 2)) * 60
    boxes = torch.from_numpy(np.concatenate([xy, xy + rng.random((300, 2)) * 30 + 1], 1)
                             .astype(np.float32))
    scores = torch.from_numpy((rng.integers(0, 50, 300) / 50).astype(np.float32))
    idxs = torch.from_numpy(rng.integers(0, 4, 300))
    res = {"nms": [ops.boxes.nms(boxes, scores, t).tolist() for t in (0.3, 0.5, 0.7)],
           "batched_nms": ops.boxes.batched_nms(boxes, scores, idxs, 0.5).tolist()}
    x = [torch.from_numpy(_rng(6).random((3, 96, 128)).astype(np.float32)),
         torch.from_numpy(_rng(7).random((3, 112, 96)).astype(np.float32))]
    builders = {"fasterrcnn_mobilenet": detection.fasterrcnn_mobilenet_v3_large_320_fpn,
                "ssdlite": detection.ssdlite320_mobilenet_v3_large}
    for i, (name, build) in enumerate(builders.items()):
        torch.manual_seed(0)
        m = build(weights=None, weights_backbone=None, num_classes=4).eval()
        _fill(m, 200 + i)
        with torch.no_grad():
            out = m(x)
        res[name] = [{"n": len(o["scores"]),
                      "scores": sorted(o["scores"].double().tolist(), reverse=True)}
                     for o in out]
    return res


def timm_case():
    """timm (built on torchvision): models of four families, and training steps with timm's
    optimizers, scheduler, label-smoothing loss and model EMA."""
    import timm
    from timm.loss import LabelSmoothingCrossEntropy
    from timm.optim import create_optimizer_v2
    from timm.scheduler import CosineLRScheduler
    from timm.utils import ModelEmaV3
    res = {}
    x = torch.from_numpy(_rng(3).standard_normal((2, 3, 64, 64)).astype(np.float32))
    for i, (name, kw) in enumerate([("resnet18", {}), ("efficientnet_b0", {}),
                                    ("convnext_atto", {}),
                                    ("vit_tiny_patch16_224", {"img_size": 64})]):
        torch.manual_seed(0)
        m = timm.create_model(name, pretrained=False, num_classes=10, **kw).eval()
        _fill(m, 200 + i)
        with torch.no_grad():
            res[name] = m(x).double().tolist()
    y = torch.tensor([1, 2])
    for opt_name in ["adamw", "lamb", "sgdp"]:
        torch.manual_seed(0)
        m = timm.create_model("resnet18", pretrained=False, num_classes=10)
        _fill(m, 9)
        opt = create_optimizer_v2(m, opt=opt_name, lr=1e-3, weight_decay=0.05)
        sched = CosineLRScheduler(opt, t_initial=4, warmup_t=1, warmup_lr_init=1e-4)
        ema = ModelEmaV3(m, decay=0.9)
        crit = LabelSmoothingCrossEntropy(0.1)
        losses = []
        for step in range(2):
            opt.zero_grad()
            loss = crit(m(x), y)
            loss.backward()
            opt.step()
            sched.step(step + 1)
            ema.update(m)
            losses.append(loss.item())
        res[f"{opt_name}_losses"] = losses
        res[f"{opt_name}_lr"] = opt.param_groups[0]["lr"]
        res[f"{opt_name}_ema_fc"] = ema.module.fc.weight.detach().double().reshape(-1).tolist()
    return res


CASES = {"transforms": transforms_case, "models": models_case, "ops": ops_case,
         "detection": detection_case, "timm": timm_case}


def main(out, cases):
    for case in cases:
        res = CASES[case]()
        res["torch_name"] = "ptcore" if "ptcore" in sys.modules else torch.__name__
        res["torchvision"] = torchvision.__version__
        with open(os.path.join(out, f"{case}.json"), "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main(sys.argv[1], sys.argv[2:])
