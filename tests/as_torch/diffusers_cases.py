"""diffusers, run by tests/as_torch/test_diffusers.py with the real torch and under
``python -m ptcore.as_torch``: tiny randomly initialised models (no downloads), their
weights overwritten from NumPy so both runs compute on the same numbers: a ``UNet2DModel``
forward pass and a DDPM training step, the schedulers' ``add_noise`` and ``step`` (DDPM,
DDIM, Euler, DPM-Solver++), a short DDIM denoising loop, a text-conditioned
``UNet2DConditionModel`` (cross attention) and an ``AutoencoderKL`` round trip; saved with
``save_pretrained`` and loaded back.  Each case writes what it computed to
``<out>/<case>.json``.
"""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _fill(module, seed):
    """``module`` with every parameter drawn from NumPy (scaled by its fan-in; norms' weights
    near one)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1 and name.endswith("weight"):
                v = 1.0 + 0.1 * rng.standard_normal(p.shape)
            else:
                fan_in = max(1, p[0].numel()) if p.dim() > 1 else 8
                v = rng.standard_normal(p.shape) / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(v.astype(np.float32)))
    return module


def _unet():
    from diffusers import UNet2DModel
    return _fill(UNet2DModel(sample_size=16, in_channels=3, out_channels=3,
                             layers_per_block=1, block_out_channels=(16, 32),
                             down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                             up_block_types=("AttnUpBlock2D", "UpBlock2D"),
                             norm_num_groups=8, attention_head_dim=8), 0)


def _arr(seed, shape):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)
                            .astype(np.float32))


def unet_case():
    """Forward at two timesteps, and three DDPM training steps (AdamW, noise prediction)."""
    from diffusers import DDPMScheduler
    from diffusers.optimization import get_cosine_schedule_with_warmup
    unet = _unet()
    x = _arr(1, (2, 3, 16, 16))
    res = {"forward": unet(x, torch.tensor([10, 500])).sample,
           "forward_scalar_t": unet(x, 3).sample}
    sched = DDPMScheduler(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2")
    opt = torch.optim.AdamW(unet.parameters(), lr=1e-3, weight_decay=1e-2)
    lr_sched = get_cosine_schedule_with_warmup(opt, num_warmup_steps=1, num_training_steps=6)
    losses, lrs = [], []
    for step in range(3):
        clean = _arr(10 + step, (2, 3, 16, 16))
        noise = _arr(20 + step, (2, 3, 16, 16))
        t = torch.tensor([100 * step + 7, 900 - 50 * step])
        noisy = sched.add_noise(clean, noise, t)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(unet(noisy, t).sample, noise)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
        opt.step()
        lr_sched.step()
        losses.append(loss.item())
        lrs.append(lr_sched.get_last_lr()[0])
    res.update(losses=losses, lrs=lrs, conv_out=unet.conv_out.weight,
               time_emb=unet.time_embedding.linear_1.weight)
    return res


def schedulers_case():
    from diffusers import (DDIMScheduler, DDPMScheduler, DPMSolverMultistepScheduler,
                           EulerDiscreteScheduler)
    x0, noise = _arr(30, (1, 3, 8, 8)), _arr(31, (1, 3, 8, 8))
    model_out = _arr(32, (1, 3, 8, 8))
    res = {}
    for name, cls, kw in (("ddpm", DDPMScheduler, {"variance_type": "fixed_small_log"}),
                          ("ddim", DDIMScheduler, {"beta_schedule": "scaled_linear"}),
                          ("euler", EulerDiscreteScheduler, {}),
                          ("dpm", DPMSolverMultistepScheduler, {"algorithm_type": "dpmsolver++"})):
        s = cls(num_train_timesteps=1000, **kw)
        s.set_timesteps(10)
        res[name + "_timesteps"] = s.timesteps
        t = s.timesteps[3]
        res[name + "_add_noise"] = s.add_noise(x0, noise, t.reshape(1))
        sample = s.scale_model_input(noise * s.init_noise_sigma, s.timesteps[0])
        steps = []
        for t in s.timesteps[:4]:
            # (the DDPM step adds noise from the generator except at t = 0: not compared)
            kwargs = {"generator": None} if name != "ddpm" else {}
            out = s.step(model_out + 0.01 * sample, t, sample, **kwargs)
            if name == "ddpm":
                steps.append(out.pred_original_sample)
                sample = out.pred_original_sample
            else:
                sample = out.prev_sample
                steps.append(sample)
        res[name + "_steps"] = steps
        res[name + "_alphas_cumprod"] = s.alphas_cumprod
    return res


def denoise_case():
    """Eight DDIM steps of the tiny UNet from one latent (eta = 0: deterministic)."""
    from diffusers import DDIMPipeline, DDIMScheduler
    unet = _unet().eval()
    sched = DDIMScheduler(num_train_timesteps=1000)
    sched.set_timesteps(8)
    sample = _arr(40, (1, 3, 16, 16))
    trace = []
    with torch.no_grad():
        for t in sched.timesteps:
            eps = unet(sample, t).sample
            sample = sched.step(eps, t, sample, eta=0.0).prev_sample
            trace.append(sample.abs().mean())
    pipe = DDIMPipeline(unet=unet, scheduler=DDIMScheduler(num_train_timesteps=1000))
    pipe.set_progress_bar_config(disable=True)
    # the pipeline's starting latent comes from the generator: compared by shape only
    img = pipe(batch_size=1, num_inference_steps=2, output_type="np").images
    return {"final": sample, "trace": trace, "pipeline_shape": list(img.shape)}


def conditional_vae_case():
    """A cross-attention UNet on text-like states, an AutoencoderKL encode/decode, and a
    ``save_pretrained``/``from_pretrained`` round trip of the VAE."""
    from diffusers import AutoencoderKL, UNet2DConditionModel
    unet = _fill(UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(16, 32), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=12,
        attention_head_dim=4, norm_num_groups=8), 50)
    lat = _arr(51, (2, 4, 8, 8))
    states = _arr(52, (2, 5, 12))
    vae = _fill(AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4,
                              block_out_channels=(8, 16), norm_num_groups=8,
                              down_block_types=("DownEncoderBlock2D",) * 2,
                              up_block_types=("UpDecoderBlock2D",) * 2), 53)
    img = _arr(54, (1, 3, 16, 16)).tanh()
    with torch.no_grad():
        post = vae.encode(img).latent_dist
        dec = vae.decode(post.mode()).sample
    with tempfile.TemporaryDirectory() as d:
        vae.save_pretrained(d)
        again = AutoencoderKL.from_pretrained(d)
        files = sorted(os.listdir(d))
    same = all(torch.equal(a, b) for a, b in zip(vae.state_dict().values(),
                                                 again.state_dict().values()))
    out = unet(lat, torch.tensor([5, 600]), encoder_hidden_states=states).sample
    out.square().mean().backward()
    return {"cond_unet": out, "cond_grad": unet.conv_in.weight.grad,
            "vae_mean": post.mean, "vae_logvar": post.logvar, "vae_decoded": dec,
            "vae_kl": post.kl(), "saved_files": files, "reloaded_equal": same}


def ema_checkpointing_case():
    """Training with gradient checkpointing (torch.utils.checkpoint through diffusers'
    blocks), Min-SNR weights (``compute_snr``) and an ``EMAModel`` copied back."""
    from diffusers import DDPMScheduler
    from diffusers.training_utils import EMAModel, compute_snr
    unet = _unet()
    unet.enable_gradient_checkpointing()
    unet.train()
    ema = EMAModel(unet.parameters(), decay=0.9, use_ema_warmup=False)
    sched = DDPMScheduler(num_train_timesteps=1000)
    opt = torch.optim.SGD(unet.parameters(), lr=0.01)
    t = torch.tensor([10, 700])
    snr = compute_snr(sched, t)
    weights = torch.stack([snr, 5 * torch.ones_like(snr)], 1).min(1)[0] / snr
    losses = []
    for i in range(2):
        x, n = _arr(60 + i, (2, 3, 16, 16)), _arr(70 + i, (2, 3, 16, 16))
        err = (unet(sched.add_noise(x, n, t), t).sample - n).square().mean((1, 2, 3))
        loss = (err * weights).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.step(unet.parameters())
        losses.append(loss.item())
    ema.copy_to(unet.parameters())
    unet.eval()
    with torch.no_grad():
        out = unet(_arr(72, (1, 3, 16, 16)), 3).sample
    return {"snr": snr, "losses": losses, "ema_forward": out,
            "ema_conv_in": ema.shadow_params[0]}


CASES = {"unet": unet_case, "schedulers": schedulers_case, "denoise": denoise_case,
         "conditional_vae": conditional_vae_case, "ema_checkpointing": ema_checkpointing_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
