"""Vision model libraries (vit-pytorch, segmentation_models_pytorch, open_clip,
denoising-diffusion-pytorch), run by tests/as_torch/test_vision_models.py with the real torch
and under ``python -m ptcore.as_torch``: small models built from the libraries' own classes,
their forward passes, losses, gradients, a few optimizer steps, eval and a ``state_dict`` round
trip through ``torch.save``/``torch.load``; weights and data from NumPy, dropout 0.  Each case
writes what it computed to ``<out>/<case>.json``.
"""
import io
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor, optimizer_steps

warnings.filterwarnings("ignore")


_x = normal_tensor


def _fill(model, seed, scale=0.05):
    fill_normal([p for _, p in sorted(model.named_parameters())], seed, scale)


def _round_trip(model, make, *x):
    """A fresh model from ``make()`` loaded with ``model``'s state dict saved to bytes: its
    eval output on ``x`` and whether the keys match."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    other = make()
    missing = other.load_state_dict(torch.load(buf, weights_only=True))
    other.eval()
    with torch.no_grad():
        return {"out": other(*x), "missing": sorted(missing.missing_keys),
                "unexpected": sorted(missing.unexpected_keys)}


def vit_case():
    """ViT, SimpleViT, a CaiT and a Vision Transformer for small datasets (shifted patch
    tokens, locality self-attention): forward, cross-entropy steps with AdamW, eval, reload."""
    from vit_pytorch import SimpleViT, ViT
    from vit_pytorch.cait import CaiT
    from vit_pytorch.vit_for_small_dataset import ViT as SmallViT
    makers = {
        "vit": lambda: ViT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2,
                           heads=4, mlp_dim=64, dim_head=8),
        "vit_mean": lambda: ViT(image_size=16, patch_size=8, num_classes=5, dim=24, depth=1,
                                heads=2, mlp_dim=32, pool="mean", channels=1, dim_head=12),
        "simple": lambda: SimpleViT(image_size=16, patch_size=4, num_classes=5, dim=32,
                                    depth=2, heads=4, mlp_dim=64, dim_head=8),
        "cait": lambda: CaiT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2,
                             cls_depth=1, heads=4, mlp_dim=64, dim_head=8, layer_dropout=0.0),
        "small_dataset": lambda: SmallViT(image_size=16, patch_size=4, num_classes=5, dim=32,
                                          depth=2, heads=4, mlp_dim=64, dim_head=8),
    }
    y = torch.tensor([0, 3, 1, 4])
    res = {}
    for i, (name, make) in enumerate(makers.items()):
        model = make()
        _fill(model, 10 + i)
        x = _x(i, (4, 1 if name == "vit_mean" else 3, 16, 16))
        out = {"logits": model(x)}
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
        out["losses"] = optimizer_steps(opt, model, torch.nn.functional.cross_entropy, x, y)
        model.eval()
        with torch.no_grad():
            out["eval"] = model(x)
        out["reload"] = _round_trip(model, make, x)
        res[name] = out
    return res


def _zoo():
    """vit-pytorch's other architectures at small sizes (dropout and stochastic depth 0):
    name -> (module, class, keyword arguments)."""
    base = dict(patch_size=8, dim=32, depth=2, heads=4, mlp_dim=64, image_size=32,
                num_classes=5)
    return {
        "deepvit": ("deepvit", "DeepViT", dict(**base, dropout=0., emb_dropout=0.)),
        "crossvit": ("cross_vit", "CrossViT", dict(image_size=32, num_classes=5, depth=1,
                                                   sm_dim=16, sm_patch_size=8, sm_enc_depth=1,
                                                   sm_enc_heads=2, sm_enc_mlp_dim=32, lg_dim=32,
                                                   lg_patch_size=16, lg_enc_depth=1,
                                                   lg_enc_heads=2, lg_enc_mlp_dim=64,
                                                   cross_attn_depth=1, cross_attn_heads=2,
                                                   dropout=0., emb_dropout=0.)),
        "pit": ("pit", "PiT", dict(image_size=32, patch_size=8, dim=32, num_classes=5, depth=(1, 1),
                                   heads=2, mlp_dim=64)),
        "levit": ("levit", "LeViT", dict(image_size=32, num_classes=5, stages=2, dim=(16, 32),
                                         depth=1, heads=(2, 4), mlp_mult=2, dropout=0.)),
        "cvt": ("cvt", "CvT", dict(num_classes=5, s1_emb_dim=16, s1_depth=1, s1_heads=1,
                                   s2_emb_dim=32, s2_depth=1, s2_heads=2, s3_emb_dim=32,
                                   s3_depth=1, s3_heads=2, dropout=0.)),
        "t2t": ("t2t", "T2TViT", dict(dim=32, image_size=32, depth=1, heads=2, mlp_dim=64,
                                      num_classes=5, t2t_layers=((7, 4), (3, 2), (3, 2)))),
        "cct": ("cct", "CCT", dict(img_size=32, embedding_dim=32, n_conv_layers=1, kernel_size=3,
                                   stride=2, padding=1, pooling_kernel_size=3, pooling_stride=2,
                                   pooling_padding=1, num_layers=1, num_heads=2, mlp_ratio=2.,
                                   num_classes=5, positional_embedding="learnable",
                                   dropout_rate=0., attention_dropout=0.,
                                   stochastic_depth_rate=0.)),
        "maxvit": ("max_vit", "MaxViT", dict(num_classes=5, dim_conv_stem=16, dim=16, dim_head=8,
                                             depth=(1, 1), window_size=2, mbconv_expansion_rate=2,
                                             mbconv_shrinkage_rate=0.25, dropout=0.)),
        "nest": ("nest", "NesT", dict(image_size=32, patch_size=4, dim=16, heads=2,
                                      num_hierarchies=2, block_repeats=(1, 1), num_classes=5)),
        "xcit": ("xcit", "XCiT", dict(**base, cls_depth=1, local_patch_kernel_size=3,
                                      layer_dropout=0.)),
        "twins": ("twins_svt", "TwinsSVT", dict(num_classes=5, s1_emb_dim=16, s1_patch_size=4,
                                                s1_local_patch_size=2, s1_global_k=2, s1_depth=1,
                                                s2_emb_dim=32, s2_patch_size=2,
                                                s2_local_patch_size=2, s2_global_k=2, s2_depth=1,
                                                s3_emb_dim=32, s3_patch_size=2,
                                                s3_local_patch_size=2, s3_global_k=1, s3_depth=1,
                                                s4_emb_dim=32, s4_patch_size=1,
                                                s4_local_patch_size=1, s4_global_k=1, s4_depth=1,
                                                peg_kernel_size=3, dropout=0.)),
        "parallel": ("parallel_vit", "ViT", dict(**base, num_parallel_branches=2)),
        "rvt": ("rvt", "RvT", dict(**base, use_rotary=True, use_ds_conv=True, use_glu=True)),
        "scalable": ("scalable_vit", "ScalableViT", dict(
            num_classes=5, dim=16, heads=(1, 2, 2, 2), depth=(1, 1, 1, 1),
            ssa_dim_key=(16, 16, 16, 16), reduction_factor=(2, 2, 1, 1), window_size=(2, 2, 1, 1),
            dropout=0.)),
        "vivit": ("vivit", "ViViT", dict(image_size=32, frames=4, image_patch_size=8,
                                         frame_patch_size=2, num_classes=5, dim=32,
                                         spatial_depth=1, temporal_depth=1, heads=2, mlp_dim=64)),
        "simple1d": ("simple_vit_1d", "SimpleViT", dict(seq_len=32, patch_size=8, num_classes=5,
                                                        dim=32, depth=1, heads=2, mlp_dim=64)),
        "merger": ("vit_with_patch_merger", "ViT", dict(**base, patch_merge_layer=1,
                                                        patch_merge_num_tokens=4)),
        "flash": ("simple_flash_attn_vit", "SimpleViT", dict(**base)),
        "look": ("look_vit", "LookViT", dict(image_size=32, num_classes=5, dim=32, depth=1,
                                             patch_size=8, highres_patch_size=4, heads=2,
                                             dropout=0.)),
    }


def vit_zoo_case():
    """Twenty more vit-pytorch architectures (DeepViT, CrossViT, PiT, LeViT, CvT, T2T, CCT,
    MaxViT, NesT, XCiT, Twins-SVT, parallel ViT, RvT, ScalableViT, ViViT, 1-d SimpleViT, patch
    merger, flash-attention SimpleViT, LookViT): train-mode forward, the input's gradient of the
    squared output, eval forward."""
    res = {}
    import importlib
    for i, (name, (module, cls, kwargs)) in enumerate(_zoo().items()):
        model = getattr(importlib.import_module("vit_pytorch." + module), cls)(**kwargs)
        _fill(model, 60 + i, 0.1)
        x = _x(i, {"vivit": (2, 3, 4, 32, 32), "simple1d": (2, 3, 32)}.get(name, (2, 3, 32, 32))
               ).requires_grad_()
        out = model(x)
        out.square().sum().backward()
        model.eval()
        with torch.no_grad():
            res[name] = {"out": out, "grad": x.grad, "eval": model(x)}
    return res


def smp_case():
    """segmentation_models_pytorch: a Unet and an FPN on a ResNet-18 encoder and a
    Linknet (encoder_weights=None), Dice plus focal loss, Adam steps, batch norm's running
    statistics, eval and reload; a classification head (aux_params)."""
    import segmentation_models_pytorch as smp
    from segmentation_models_pytorch.losses import DiceLoss, FocalLoss, JaccardLoss
    makers = {
        "unet": lambda: smp.Unet("resnet18", encoder_weights=None, encoder_depth=3,
                                 decoder_channels=(32, 16, 8), classes=3),
        "fpn": lambda: smp.FPN("resnet18", encoder_weights=None, encoder_depth=3,
                               decoder_pyramid_channels=32, decoder_segmentation_channels=32,
                               upsampling=1, decoder_dropout=0.0,
                               classes=3),
        "linknet": lambda: smp.Linknet("resnet18", encoder_weights=None, encoder_depth=3,
                                       classes=3),
    }
    x = _x(0, (2, 3, 32, 32))
    mask = torch.from_numpy(np.random.default_rng(1).integers(0, 3, (2, 32, 32)))
    dice, focal = DiceLoss("multiclass"), FocalLoss("multiclass")
    jaccard = JaccardLoss("multiclass")

    def loss_fn(logits, y):
        return dice(logits, y) + focal(logits, y) + 0.5 * jaccard(logits, y)

    res = {}
    for i, (name, make) in enumerate(makers.items()):
        model = make()
        _fill(model, 20 + i, 0.1)
        out = {"train_out": model(x)}
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        out["losses"] = optimizer_steps(opt, model, loss_fn, x, mask, steps=2)
        out["running_var"] = model.encoder.bn1.running_var
        model.eval()
        with torch.no_grad():
            out["eval"] = model(x)
        out["reload"] = _round_trip(model, make, x)
        res[name] = out
    model = smp.Unet("resnet18", encoder_weights=None, encoder_depth=3,
                     decoder_channels=(16, 8, 8), classes=2,
                     aux_params={"classes": 4, "dropout": 0.0})
    _fill(model, 30, 0.1)
    model.eval()
    with torch.no_grad():
        seg, cls = model(x)
    res["aux"] = {"seg": seg, "cls": cls}
    return res


def open_clip_case():
    """open_clip: a tiny CLIP (ViT image tower, text transformer) and a CoCa-free CustomText
    CLIP built from model configs, image/text features, the contrastive ClipLoss and
    SigLipLoss with gradients, SGD steps, the tokenizer, eval and reload."""
    import open_clip
    from open_clip.loss import ClipLoss, SigLipLoss
    vision = {"image_size": 16, "layers": 2, "width": 32, "patch_size": 4, "head_width": 16}
    text = {"context_length": 12, "vocab_size": 100, "width": 32, "heads": 2, "layers": 2}

    def make_clip():
        return open_clip.CLIP(embed_dim=16, vision_cfg=vision, text_cfg=text)

    def make_custom():
        return open_clip.CustomTextCLIP(embed_dim=16, vision_cfg=vision,
                                        text_cfg=dict(text, pool_type="last"))

    images = _x(0, (4, 3, 16, 16))
    tokens = torch.from_numpy(np.random.default_rng(1).integers(1, 100, (4, 12)))
    tokens[:, -3:] = 0
    res = {}
    for i, (name, make) in enumerate({"clip": make_clip, "custom": make_custom}.items()):
        model = make()
        _fill(model, 40 + i)
        with torch.no_grad():
            model.logit_scale.fill_(float(np.log(1 / 0.07)))
        img, txt, scale = model(images, tokens)
        out = {"image": img, "text": txt, "scale": scale}
        loss = ClipLoss()(img, txt, scale)
        loss.backward()
        out["loss"] = loss
        out["grad_proj"] = model.visual.proj.grad if hasattr(model.visual, "proj") else None
        model.zero_grad()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            a, b, s = model(images, tokens)
            step_loss = ClipLoss()(a, b, s)
            step_loss.backward()
            opt.step()
            losses.append(step_loss.item())
        out["losses"] = losses
        model.eval()
        with torch.no_grad():
            out["encode_image"] = model.encode_image(images, normalize=True)
            out["encode_text"] = model.encode_text(tokens, normalize=True)
        res[name] = out
    feats_a, feats_b = _x(2, (4, 16)), _x(3, (4, 16))
    scale = torch.tensor(10.0, requires_grad=True)
    bias = torch.tensor(-5.0, requires_grad=True)
    sig = SigLipLoss()(torch.nn.functional.normalize(feats_a, dim=-1),
                       torch.nn.functional.normalize(feats_b, dim=-1), scale, bias)
    sig.backward()
    res["siglip"] = {"loss": sig, "grads": [scale.grad, bias.grad]}
    tok = open_clip.SimpleTokenizer(context_length=12)
    res["tokens"] = tok(["a photo of a cat", "two dogs"])
    res["variants"] = _open_clip_variants(open_clip, vision, text, tokens)
    return res


def _open_clip_variants(open_clip, vision, text, tokens):
    """Other towers: a ModifiedResNet image tower, an attentional pooler with average
    pooling, QuickGELU with layer scale, sin-cos positions and a non-causal text tower with
    argmax pooling and a projection bias: features, the gradient of their sum, eval."""
    variants = {
        "resnet": lambda: open_clip.CLIP(
            embed_dim=16, text_cfg=text,
            vision_cfg={"image_size": 32, "layers": [1, 1, 1, 1], "width": 8, "head_width": 8}),
        "attn_pool": lambda: open_clip.CLIP(
            embed_dim=16, text_cfg=text,
            vision_cfg=dict(vision, attentional_pool=True, attn_pooler_queries=4,
                            pool_type="avg")),
        "quickgelu_ls": lambda: open_clip.CLIP(
            embed_dim=16, quick_gelu=True, text_cfg=dict(text, ls_init_value=0.1),
            vision_cfg=dict(vision, ls_init_value=0.1, final_ln_after_pool=True)),
        "no_causal": lambda: open_clip.CustomTextCLIP(
            embed_dim=16, vision_cfg=dict(vision, no_ln_pre=True, pos_embed_type="sin_cos_2d"),
            text_cfg=dict(text, no_causal_mask=True, pool_type="argmax", proj_bias=True)),
    }
    res = {}
    for i, (name, make) in enumerate(variants.items()):
        model = make()
        _fill(model, 70 + i)
        size = 32 if name == "resnet" else 16
        images = _x(10 + i, (4, 3, size, size))
        img, txt, scale = model(images, tokens)
        (img.sum() + txt.square().sum()).backward()
        grads = [p.grad for _, p in sorted(model.named_parameters()) if p.grad is not None]
        model.eval()
        with torch.no_grad():
            res[name] = {"image": img, "text": txt, "grads": grads[:6],
                         "eval": model.encode_image(images, normalize=True)}
    return res


def ddpm_case():
    """denoising-diffusion-pytorch: a small Unet's forward, GaussianDiffusion's training
    loss at given timesteps and noise (pred_noise and pred_v objectives) with gradients, its
    q_sample/p_mean_variance, Adam steps on p_losses, a DDIM sample from a given start noise
    with eta 0, and reload."""
    from denoising_diffusion_pytorch import GaussianDiffusion, Unet

    def make():
        return Unet(dim=8, dim_mults=(1, 2), channels=1, flash_attn=False)

    res = {}
    x0 = _x(0, (2, 1, 16, 16)).clamp(-1, 1)
    noise = _x(1, (2, 1, 16, 16))
    t = torch.tensor([3, 17])
    for i, objective in enumerate(("pred_noise", "pred_v")):
        model = make()
        _fill(model, 50 + i)
        diffusion = GaussianDiffusion(model, image_size=16, timesteps=20, objective=objective,
                                      sampling_timesteps=5)
        out = {"unet": model(x0, t), "q_sample": diffusion.q_sample(x0, t, noise)}
        loss = diffusion.p_losses(x0, t, noise=noise)
        loss.backward()
        out["loss"] = loss
        out["grad"] = model.final_conv.weight.grad
        model.zero_grad()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            step_loss = diffusion.p_losses(x0, t, noise=noise)
            step_loss.backward()
            opt.step()
            losses.append(step_loss.item())
        out["losses"] = losses
        with torch.no_grad():
            mean, var, log_var, x_start = diffusion.p_mean_variance(noise, t, clip_denoised=True)
            out["p_mean"] = {"mean": mean, "var": var, "log_var": log_var, "x_start": x_start}
            out["ddim"] = _ddim_from(diffusion, noise)
        out["reload"] = _round_trip(model, make, x0, t)
        res[objective] = out
    res["variants"] = _ddpm_variants()
    return res


def _ddpm_variants():
    """A 1-d Unet under GaussianDiffusion1D (pred_x0), the Karras (EDM2) Unets in 2-d and 1-d
    with magnitude-preserving layers, and LearnedGaussianDiffusion's hybrid loss."""
    from denoising_diffusion_pytorch import (GaussianDiffusion1D, LearnedGaussianDiffusion,
                                             Unet, Unet1D)
    from denoising_diffusion_pytorch.karras_unet import KarrasUnet
    from denoising_diffusion_pytorch.karras_unet_1d import KarrasUnet1D
    out = {}
    unet1d = Unet1D(dim=8, dim_mults=(1, 2), channels=2)
    _fill(unet1d, 80, 0.1)
    diffusion = GaussianDiffusion1D(unet1d, seq_length=16, timesteps=10, objective="pred_x0")
    t, x0 = torch.tensor([2, 7]), _x(80, (2, 2, 16)).clamp(-1, 1)
    loss = diffusion.p_losses(x0, t, noise=_x(81, (2, 2, 16)))
    loss.backward()
    out["unet1d"] = {"loss": loss, "grad": unet1d.final_conv.weight.grad, "fwd": unet1d(x0, t)}
    karras = KarrasUnet(image_size=16, dim=8, dim_max=16, num_downsamples=2, channels=1,
                        num_blocks_per_stage=1, attn_res=(8,), dropout=0.)
    _fill(karras, 82, 0.1)
    x = _x(82, (2, 1, 16, 16)).requires_grad_()
    y = karras(x, time=torch.tensor([0.3, 0.7]))
    y.square().sum().backward()
    out["karras"] = {"out": y, "grad": x.grad}
    karras1d = KarrasUnet1D(seq_len=16, dim=8, dim_max=16, num_downsamples=2, channels=1,
                            num_blocks_per_stage=1, attn_res=(8,), dropout=0.)
    _fill(karras1d, 83, 0.1)
    out["karras1d"] = karras1d(_x(83, (2, 1, 16)), time=torch.tensor([0.3, 0.7]))
    unet = Unet(dim=8, dim_mults=(1, 2), channels=1, learned_variance=True, flash_attn=False)
    _fill(unet, 84, 0.1)
    learned = LearnedGaussianDiffusion(unet, image_size=16, timesteps=10)
    loss = learned.p_losses(_x(84, (2, 1, 16, 16)).clamp(-1, 1), torch.tensor([1, 8]),
                            noise=_x(85, (2, 1, 16, 16)))
    loss.backward()
    out["learned"] = {"loss": loss, "grad": unet.final_conv.weight.grad}
    return out


def _ddim_from(diffusion, start):
    """GaussianDiffusion.ddim_sample's loop with eta 0 (deterministic) from ``start``: the
    library draws its start noise itself, so its own step method runs on our noise."""
    times = torch.linspace(-1, diffusion.num_timesteps - 1, steps=diffusion.sampling_timesteps + 1)
    times = list(reversed(times.int().tolist()))
    img = start
    for time, time_next in zip(times[:-1], times[1:]):
        t = torch.full((start.shape[0],), time, dtype=torch.long)
        pred_noise, x_start, *_ = diffusion.model_predictions(img, t, clip_x_start=True)
        if time_next < 0:
            img = x_start
            continue
        alpha = diffusion.alphas_cumprod[time]
        alpha_next = diffusion.alphas_cumprod[time_next]
        img = x_start * alpha_next.sqrt() + (1 - alpha_next).sqrt() * pred_noise
        del alpha
    return diffusion.unnormalize(img)


if __name__ == "__main__":
    main({"vit": vit_case, "vit_zoo": vit_zoo_case, "smp": smp_case, "open_clip": open_clip_case,
          "ddpm": ddpm_case}, sys.argv)
