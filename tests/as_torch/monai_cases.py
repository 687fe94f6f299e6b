"""MONAI, run by tests/as_torch/test_monai.py with the real torch and under
``python -m ptcore.as_torch``: medical-imaging networks trained a few steps (weights from
NumPy), losses, metrics, transforms (array and dictionary, deterministic and MONAI's own
NumPy-seeded random ones) on MetaTensors, sliding-window inference and MONAI's data
pipeline.  Each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import adam_steps, fill_normal, main

warnings.filterwarnings("ignore")


def _fill(model, seed, scale=0.1):
    fill_normal([t for _, t in sorted(model.state_dict().items())], seed, scale)


def _volume(seed, shape=(2, 1, 16, 16, 16)):
    """A batch of volumes with a bright blob and its label (2 classes)."""
    rng = np.random.default_rng(seed)
    img = rng.standard_normal(shape).astype(np.float32) * 0.2
    lab = np.zeros(shape, dtype=np.int64)
    grid = np.indices(shape[2:])
    for b in range(shape[0]):
        c = rng.integers(4, shape[2] - 4, size=len(shape) - 2)
        r = rng.integers(2, 5)
        inside = sum((g - ci) ** 2 for g, ci in zip(grid, c)) <= r * r
        img[b, 0][inside] += 1.0
        lab[b, 0][inside] = 1
    return torch.from_numpy(img), torch.from_numpy(lab)


def networks_case():
    """UNet (3-D, residual units, instance norm, dropout 0), BasicUNet and SegResNet (2-D),
    AttentionUnet and a small UNETR: three Adam steps each on a Dice+CE loss."""
    from monai.losses import DiceCELoss
    from monai.networks.nets import UNETR, AttentionUnet, BasicUNet, SegResNet, UNet
    x3, y3 = _volume(0)
    x2, y2 = _volume(5, (2, 1, 32, 32))
    loss_fn = DiceCELoss(to_onehot_y=True, softmax=True)
    res = {}
    nets = {
        "unet3d": (UNet(spatial_dims=3, in_channels=1, out_channels=2, channels=(4, 8, 16),
                        strides=(2, 2), num_res_units=2, norm="instance"), x3, y3),
        "basicunet2d": (BasicUNet(spatial_dims=2, in_channels=1, out_channels=2,
                                  features=(4, 4, 8, 8, 16, 4)), x2, y2),
        "segresnet2d": (SegResNet(spatial_dims=2, init_filters=8, in_channels=1,
                                  out_channels=2, blocks_down=(1, 1), blocks_up=(1,)), x2, y2),
        "attention_unet2d": (AttentionUnet(spatial_dims=2, in_channels=1, out_channels=2,
                                           channels=(4, 8, 16), strides=(2, 2)), x2, y2),
        "unetr3d": (UNETR(in_channels=1, out_channels=2, img_size=(16, 16, 16),
                          feature_size=4, hidden_size=32, mlp_dim=64, num_heads=2,
                          proj_type="conv", norm_name="batch"), x3, y3),
    }
    for name, (net, x, y) in nets.items():
        _fill(net, 1)
        net.train()
        out = {"losses": adam_steps(net, loss_fn, x, y)}
        net.eval()
        with torch.no_grad():
            out["eval"] = net(x[:1])
        res[name] = out
    return res


def losses_metrics_case():
    from monai.losses import (DiceFocalLoss, DiceLoss, FocalLoss, GeneralizedDiceLoss,
                              GeneralizedWassersteinDiceLoss, SSIMLoss, TverskyLoss)
    from monai.metrics import (ConfusionMatrixMetric, DiceMetric, HausdorffDistanceMetric,
                               MeanIoU, MSEMetric, PSNRMetric, ROCAUCMetric,
                               SSIMMetric, SurfaceDistanceMetric, compute_dice)
    from monai.networks.utils import one_hot
    rng = np.random.default_rng(2)
    _, lab = _volume(3, (2, 1, 12, 12, 12))
    logits = torch.from_numpy(rng.standard_normal((2, 3, 12, 12, 12)).astype(np.float32))
    logits[:, 1] += 2.0 * lab[:, 0].float()
    target = lab.clone()
    target[:, :, :, :, :3] = 2 * (target[:, :, :, :, :3] == 0)
    logits.requires_grad_(True)
    res = {}
    losses = {
        "dice": DiceLoss(to_onehot_y=True, softmax=True),
        "dice_sq": DiceLoss(to_onehot_y=True, sigmoid=True, squared_pred=True, batch=True),
        "gdice": GeneralizedDiceLoss(to_onehot_y=True, softmax=True),
        "focal": FocalLoss(to_onehot_y=True, gamma=2.0),
        "focal_softmax": FocalLoss(to_onehot_y=True, use_softmax=True, alpha=0.25),
        "tversky": TverskyLoss(to_onehot_y=True, softmax=True, alpha=0.3, beta=0.7),
        "dicefocal": DiceFocalLoss(to_onehot_y=True, softmax=True),
        "wasserstein": GeneralizedWassersteinDiceLoss(
            dist_matrix=np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5], [1.0, 0.5, 0.0]],
                                 dtype=np.float32)),
    }
    for name, fn in losses.items():
        value = fn(logits, target)
        (grad,) = torch.autograd.grad(value, logits)
        res[name] = [value, grad.abs().sum()]
    img = torch.from_numpy(rng.random((2, 1, 24, 24)).astype(np.float32))
    res["ssim_loss"] = SSIMLoss(spatial_dims=2, data_range=1.0)(img * 0.9, img)

    pred = one_hot(logits.detach().argmax(1, keepdim=True), 3)
    gt = one_hot(target, 3)
    metrics = {"dice": DiceMetric(include_background=False, reduction="mean_batch"),
               "iou": MeanIoU(include_background=False),
               "hd95": HausdorffDistanceMetric(include_background=False, percentile=95),
               "asd": SurfaceDistanceMetric(include_background=False, symmetric=True),
               "cm": ConfusionMatrixMetric(include_background=False,
                                           metric_name=["sensitivity", "precision", "f1"],
                                           compute_sample=True)}
    for name, m in metrics.items():
        m(y_pred=pred[:1], y=gt[:1])
        m(y_pred=pred[1:], y=gt[1:])
        res["metric_" + name] = m.aggregate()
        m.reset()
    res["compute_dice"] = compute_dice(pred, gt, include_background=True)
    auc = ROCAUCMetric()
    scores = torch.from_numpy(rng.random((20, 2)).astype(np.float32))
    labels = one_hot(torch.from_numpy(rng.integers(0, 2, (20, 1))), 2)
    auc(scores, labels)
    res["auc"] = auc.aggregate()
    for name, m in {"psnr": PSNRMetric(max_val=1.0), "mse": MSEMetric(),
                    "ssim": SSIMMetric(spatial_dims=2, data_range=1.0)}.items():
        m(img * 0.8, img)
        res["metric_" + name] = m.aggregate()
    return res


def transforms_case():
    """Array and dictionary transforms on MetaTensors (affine and metadata carried), MONAI's
    random transforms with their NumPy seeds, inverse of the spatial ones, post-processing."""
    from monai.data import MetaTensor
    from monai.transforms import (Activations, AsDiscrete, CenterSpatialCropd, Compose,
                                  CropForegroundd, EnsureChannelFirst, FillHoles,
                                  NormalizeIntensity,
                                  RandAffined, RandFlipd, RandGaussianNoised,
                                  RandRotate90d, RandSpatialCropd, Resize, Rotate,
                                  ScaleIntensityd, ScaleIntensityRange, Spacingd,
                                  SpatialPad, ThresholdIntensity, Zoom)
    rng = np.random.default_rng(4)
    arr = rng.random((10, 12, 8)).astype(np.float32)
    res = {}
    t = EnsureChannelFirst(channel_dim="no_channel")(MetaTensor(torch.from_numpy(arr)))
    res["channel_first"] = [t.shape, type(t).__name__]
    res["resize"] = Resize((6, 6, 6), mode="trilinear")(t)
    res["resize_area"] = Resize((5, 6, 4), mode="area")(t)
    res["zoom"] = Zoom((1.5, 1.2, 0.8), mode="nearest", keep_size=True)(t.as_tensor())
    res["rotate"] = Rotate(angle=(0.3, 0.0, 0.0), mode="bilinear", padding_mode="border")(t)
    res["pad"] = SpatialPad((14, 14, 10), mode="reflect")(t)
    res["normalize"] = NormalizeIntensity(nonzero=True)(t)
    res["scale_range"] = ScaleIntensityRange(0.2, 0.8, 0.0, 1.0, clip=True)(t)
    res["threshold"] = ThresholdIntensity(0.5, above=False, cval=0.0)(t)

    affine = np.diag([1.5, 1.0, 2.0, 1.0])
    data = {"image": MetaTensor(torch.from_numpy(arr[None]), affine=torch.from_numpy(affine)),
            "label": MetaTensor(torch.from_numpy((arr[None] > 0.7).astype(np.float32)),
                                affine=torch.from_numpy(affine))}
    keys = ["image", "label"]
    pipeline = Compose([
        Spacingd(keys, pixdim=(1.0, 1.0, 1.0), mode=("bilinear", "nearest")),
        ScaleIntensityd("image"),
        CropForegroundd(keys, source_key="image", select_fn=lambda x: x > 0.3),
        RandFlipd(keys, prob=0.5, spatial_axis=0),
        RandRotate90d(keys, prob=0.5, max_k=3),
        RandAffined(keys, prob=1.0, rotate_range=(0.2, 0.2, 0.2), scale_range=0.1,
                    mode=("bilinear", "nearest"), padding_mode="zeros"),
        RandGaussianNoised("image", prob=1.0, std=0.05),
        RandSpatialCropd(keys, roi_size=(8, 8, 8), random_size=False),
        CenterSpatialCropd(keys, roi_size=(6, 6, 6)),
    ])
    pipeline.set_random_state(seed=7)
    out = pipeline(data)
    res["pipeline"] = {k: out[k].as_tensor() for k in keys}
    res["pipeline_affine"] = out["image"].affine
    res["pipeline_ops"] = [op["class"] for op in out["image"].applied_operations]
    inv = pipeline.inverse(out)
    res["inverse_shape"] = list(inv["label"].shape)
    res["inverse"] = inv["label"].as_tensor()

    seg = torch.from_numpy(rng.standard_normal((1, 3, 12, 12)).astype(np.float32))
    post = Compose([Activations(softmax=True), AsDiscrete(argmax=True)])
    mask = post(seg[0])
    res["post"] = mask
    res["onehot"] = AsDiscrete(to_onehot=3)(mask)
    blobs = torch.zeros(1, 12, 12)
    blobs[0, 1:4, 1:4] = 1
    blobs[0, 6:11, 6:11] = 1
    blobs[0, 8, 8] = 0
    res["fill_holes"] = FillHoles()(blobs)
    # MetaTensor arithmetic keeps the metadata; torch functions see a Tensor subclass
    mt = MetaTensor(torch.ones(2, 3), meta={"filename_or_obj": "a.nii"})
    res["meta_ops"] = [type(mt + 1).__name__, (mt * 2).meta["filename_or_obj"],
                       type(torch.stack([mt, mt])).__name__, type(mt.sum()).__name__]
    return res


def inference_data_case():
    """Sliding-window inference with Gaussian blending, MONAI's Dataset/CacheDataset and
    DataLoader with list_data_collate and decollate_batch."""
    from monai.data import CacheDataset, DataLoader, Dataset, decollate_batch
    from monai.inferers import SlidingWindowInferer, sliding_window_inference
    from monai.networks.nets import UNet
    from monai.transforms import Compose, EnsureChannelFirstd, ScaleIntensityd
    net = UNet(spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8), strides=(2,))
    _fill(net, 5)
    net.eval()
    rng = np.random.default_rng(6)
    big = torch.from_numpy(rng.random((1, 1, 40, 36)).astype(np.float32))
    res = {}
    with torch.no_grad():
        res["sw_gaussian"] = sliding_window_inference(big, (16, 16), 3, net, overlap=0.5,
                                                      mode="gaussian")
        res["sw_constant"] = SlidingWindowInferer((16, 16), sw_batch_size=2, overlap=0.25,
                                                  padding_mode="reflect")(big, net)
    items = [{"img": rng.random((8, 8)).astype(np.float32), "id": i} for i in range(6)]
    tf = Compose([EnsureChannelFirstd("img", channel_dim="no_channel"),
                  ScaleIntensityd("img")])
    for name, ds in (("dataset", Dataset(items, tf)),
                     ("cache", CacheDataset(items, tf, cache_rate=1.0, num_workers=0,
                                            progress=False))):
        loader = DataLoader(ds, batch_size=4, shuffle=False, num_workers=0)
        batches = [b for b in loader]
        res[name] = {"shapes": [list(b["img"].shape) for b in batches],
                     "ids": [b["id"] for b in batches], "sum": sum(b["img"].sum() for b in batches),
                     "decollated": len(decollate_batch(batches[0]))}
    return res


CASES = {"networks": networks_case, "losses_metrics": losses_metrics_case,
         "transforms": transforms_case, "inference_data": inference_data_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
