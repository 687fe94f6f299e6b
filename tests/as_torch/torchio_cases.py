"""TorchIO, run by tests/as_torch/test_torchio.py with the real torch and under ``python -m
ptcore.as_torch``: subjects of scalar and label images from NumPy tensors, the deterministic
transforms (intensity rescaling and normalization, crop/pad, resample, affine with given
parameters, one-hot, flips, clamping, masking, a Compose and its inverse), the random ones with
their parameters fixed (p=1, ranges of one value), patch sampling with a grid sampler and the
aggregator over a small Conv3d's outputs, and batching through TorchIO's SubjectsLoader.  Each
case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main

warnings.filterwarnings("ignore")


def _subject(seed, shape=(1, 12, 10, 8)):
    import torchio as tio
    rng = np.random.default_rng(seed)
    image = torch.from_numpy((rng.random(shape) * 100).astype(np.float32))
    label = torch.from_numpy(rng.integers(0, 3, shape).astype(np.int64))
    return tio.Subject(t1=tio.ScalarImage(tensor=image), seg=tio.LabelMap(tensor=label),
                       age=30 + seed)


def transforms_case():
    """Each deterministic transform on one subject: the images' data after it."""
    import torchio as tio
    transforms = {
        "rescale": tio.RescaleIntensity(out_min_max=(-1, 1), percentiles=(1, 99)),
        "znorm": tio.ZNormalization(),
        "znorm_mask": tio.ZNormalization(masking_method=lambda x: x > 50),
        "crop_or_pad": tio.CropOrPad((8, 12, 10)),
        "pad": tio.Pad((1, 2, 0, 1, 2, 2), padding_mode="reflect"),
        "crop": tio.Crop((1, 2, 0, 1, 2, 2)),
        "resample": tio.Resample(2),
        "resize": tio.Resize((6, 5, 4)),
        "affine": tio.Affine(scales=(1.1, 0.9, 1.0), degrees=(10, 0, 5),
                             translation=(1, -1, 0)),
        "one_hot": tio.OneHot(),
        "flip": tio.Flip(axes=("LR",)),
        "clamp": tio.Clamp(out_min=10, out_max=80),
        "mask": tio.Mask(masking_method="seg"),
        "to_canonical": tio.ToCanonical(),
        "random_flip": tio.RandomFlip(axes=(0, 1), flip_probability=1.0),
        "random_gamma": tio.RandomGamma(log_gamma=(0.2, 0.2)),
        "random_affine": tio.RandomAffine(scales=(1.2, 1.2), degrees=(15, 15),
                                          translation=(0, 0), isotropic=True),
        "random_bias": tio.RandomBiasField(coefficients=(0.3, 0.3), order=2),
    }
    res = {}
    for name, t in transforms.items():
        out = t(_subject(0))
        res[name] = {"t1": out["t1"].data, "seg": out["seg"].data}
    compose = tio.Compose([tio.Pad(2), tio.Flip(axes=(1,)), tio.RescaleIntensity((0, 1))])
    out = compose(_subject(1))
    back = out.apply_inverse_transform(warn=False)
    res["compose"] = {"t1": out["t1"].data, "inverse_seg": back["seg"].data,
                      "history": [h.name for h in out.history]}
    return res


def patches_case():
    """Grid sampling of a subject, a Conv3d over each batch of patches (SubjectsLoader), the
    GridAggregator's reassembled volume, and a Queue-free batch of whole subjects."""
    import torchio as tio
    subject = _subject(2, (1, 16, 12, 10))
    sampler = tio.GridSampler(subject, patch_size=(8, 8, 6), patch_overlap=(2, 2, 2))
    loader = tio.SubjectsLoader(sampler, batch_size=3)
    conv = torch.nn.Conv3d(1, 2, 3, padding=1)
    fill_normal(list(conv.parameters()), 3)
    res = {}
    for mode in ("crop", "average", "hann"):
        aggregator = tio.GridAggregator(sampler, overlap_mode=mode)
        sums = []
        with torch.no_grad():
            for batch in loader:
                out = conv(batch["t1"][tio.DATA] / 100)
                aggregator.add_batch(out, batch[tio.LOCATION])
                sums.append(out.sum().item())
        res[mode] = {"volume": aggregator.get_output_tensor(), "sums": sums}
    dataset = tio.SubjectsDataset([_subject(s) for s in range(3)],
                                  transform=tio.RescaleIntensity((0, 1)))
    batch = next(iter(tio.SubjectsLoader(dataset, batch_size=3)))
    res["batch"] = {"t1": batch["t1"][tio.DATA], "seg": batch["seg"][tio.DATA],
                    "age": batch["age"]}
    return res


if __name__ == "__main__":
    main({"transforms": transforms_case, "patches": patches_case}, sys.argv)
